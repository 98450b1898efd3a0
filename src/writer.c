/*
 * Recording: posix_trace_event() and the lane each thread writes in each
 * stream.  Reserve / write / commit, all in memory only the writing thread
 * touches, except one release store of the chunk's commit word per event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "internal.h"

static __thread struct pt_thread *pt_self __attribute__((tls_model("initial-exec")));

static struct pt_thread *thread_register(void)
{
	pt_init();
	struct pt_thread *t = aligned_alloc(128, (sizeof *t + 127) & ~(size_t)127);
	if (!t)
		return NULL;
	memset(t, 0, sizeof *t);
	t->self = pthread_self();
	pthread_mutex_lock(&pt_proc.lock);
	t->next = pt_proc.threads;
	pt_proc.threads = t;
	pthread_mutex_unlock(&pt_proc.lock);
	pthread_setspecific(pt_proc.thread_key, t);
	pt_self = t;
	return t;
}

/* Entering: mark this thread inside (odd), then read the stream table.
 * The compiler barrier suffices because pt_barrier() issues membarrier(2);
 * without it, writers pay a full fence. */
static inline __attribute__((always_inline)) int enter(struct pt_thread *t, uint64_t *seq)
{
	*seq = atomic_load_explicit(&t->cs_seq, memory_order_relaxed);
	if (*seq & 1)
		return 0; /* nested, from a signal handler: the event is dropped */
	atomic_store_explicit(&t->cs_seq, *seq + 1, memory_order_relaxed);
	if (pt_proc.use_membarrier)
		atomic_signal_fence(memory_order_seq_cst);
	else
		pt_full_fence();
	return 1;
}

static inline __attribute__((always_inline)) void leave(struct pt_thread *t, uint64_t seq)
{
	atomic_store_explicit(&t->cs_seq, seq + 2, memory_order_release);
}


static void mark_overrun(struct pt_stream_hdr *h)
{
	if (!atomic_load_explicit(&h->overrun, memory_order_relaxed))
		atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
}

/* Losses that happen once per chunk or per state change. */
static void count_lost(struct pt_stream_hdr *h, uint64_t n)
{
	mark_overrun(h);
	atomic_fetch_add_explicit(&h->lost_total, n, memory_order_relaxed);
}

/* LOOP: remember the gap so the reader reports POSIX_TRACE_OVERFLOW. */
static void note_overflow(struct pt_stream_hdr *h, uint64_t first_lost_ts, uint64_t n)
{
	uint64_t cur = atomic_load_explicit(&h->ovf_ts, memory_order_relaxed);
	while (first_lost_ts < cur &&
	       !atomic_compare_exchange_weak_explicit(&h->ovf_ts, &cur, first_lost_ts,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
	atomic_fetch_add_explicit(&h->ovf_count, n, memory_order_release);
	count_lost(h, n);
}

static uint32_t claim_lane(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	for (uint32_t i = 0; i < m->nlanes; i++) {
		struct pt_lane *l = pt_lane_at(m, i);
		uint32_t expect = PT_LANE_FREE;
		if (atomic_load_explicit(&l->state, memory_order_relaxed) != PT_LANE_FREE ||
		    !atomic_compare_exchange_strong_explicit(&l->state, &expect, PT_LANE_ACTIVE,
		                                             memory_order_acq_rel,
		                                             memory_order_relaxed))
			continue;
		uint32_t hwm = atomic_load_explicit(&h->lanes_hwm, memory_order_relaxed);
		while (hwm < i + 1 &&
		       !atomic_compare_exchange_weak_explicit(&h->lanes_hwm, &hwm, i + 1,
		                                              memory_order_release,
		                                              memory_order_relaxed))
			;
		return i;
	}
	return PT_NONE;
}

/* Counts the events of a chunk that lie at or after offset `from` and gives
 * the timestamp of the first of them. */
static uint64_t events_from(const struct pt_map *m, const unsigned char *chunk, uint32_t from,
                            uint64_t commit, uint64_t *first_ts)
{
	uint32_t end = (uint32_t)commit, total = (uint32_t)(commit >> 32), before = 0;
	uint32_t off = PT_CHUNK_HDR;
	*first_ts = UINT64_MAX;
	if (end > m->chunk_size)
		return 0;
	while (off + sizeof(struct pt_record) <= end) {
		struct pt_record r;
		memcpy(&r, chunk + off, sizeof r);
		if (off >= from) {
			*first_ts = r.ts;
			break;
		}
		off += (uint32_t)pt_record_size(r.data_len > m->max_data ? m->max_data : r.data_len);
		before++;
	}
	return total > before ? total - before : 0;
}

/* LOOP policy with an empty pool: take the sealed chunk holding the oldest
 * events from the head of its lane.  The head CAS makes this race safely
 * with the reader consuming the same chunk. */
static uint32_t steal_oldest(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	for (int attempt = 0; attempt < 8; attempt++) {
		uint32_t best = PT_NONE, hwm = atomic_load_explicit(&h->lanes_hwm, memory_order_acquire);
		uint64_t best_ts = UINT64_MAX, best_head = 0;
		if (hwm > m->nlanes)
			hwm = m->nlanes;
		for (uint32_t i = 0; i < hwm; i++) {
			uint64_t hd = atomic_load_explicit(&pt_lane_at(m, i)->head, memory_order_acquire);
			uint32_t c = pt_head_chunk(hd);
			if (c >= m->nchunks)
				continue;
			struct pt_chunk *ch = pt_chunk_at(m, c);
			if (atomic_load_explicit(&ch->next, memory_order_acquire) == PT_NONE)
				continue;
			uint64_t ts = atomic_load_explicit(&ch->first_ts, memory_order_relaxed);
			if (ts < best_ts || best == PT_NONE) {
				best = i;
				best_ts = ts;
				best_head = hd;
			}
		}
		if (best == PT_NONE)
			return PT_NONE;
		struct pt_lane *l = pt_lane_at(m, best);
		uint32_t c = pt_head_chunk(best_head), tag = pt_head_tag(best_head) + 1;
		struct pt_chunk *ch = pt_chunk_at(m, c);
		uint32_t nx = atomic_load_explicit(&ch->next, memory_order_acquire);
		if (nx != PT_END && nx >= m->nchunks)
			continue;
		uint64_t repl = nx == PT_END ? pt_head_pack(PT_HEAD_EMPTY, 0, tag)
		                             : pt_head_pack(nx, PT_CHUNK_HDR, tag);
		if (!atomic_compare_exchange_strong_explicit(&l->head, &best_head, repl,
		                                             memory_order_acq_rel,
		                                             memory_order_relaxed))
			continue;
		uint64_t first_ts, commit = atomic_load_explicit(&ch->commit, memory_order_acquire);
		uint64_t lost = events_from(m, (unsigned char *)ch, pt_head_off(best_head), commit,
		                            &first_ts);
		if (lost)
			note_overflow(h, first_ts, lost);
		if (nx == PT_END) {
			uint32_t closed = PT_LANE_CLOSED;
			atomic_compare_exchange_strong_explicit(&l->state, &closed, PT_LANE_FREE,
			                                        memory_order_acq_rel,
			                                        memory_order_relaxed);
		}
		atomic_store_explicit(&h->full, 1, memory_order_relaxed);
		return c;
	}
	return PT_NONE;
}

/* UNTIL_FULL: the stream stops itself; the event that did not fit is lost. */
static void stream_full(struct pt_stream_hdr *h, uint64_t ts)
{
	uint32_t running = PT_ST_RUNNING;
	if (atomic_compare_exchange_strong_explicit(&h->state, &running, PT_ST_FULL,
	                                            memory_order_acq_rel, memory_order_relaxed)) {
		atomic_store_explicit(&h->full_ts, ts, memory_order_relaxed);
		atomic_store_explicit(&h->full, 1, memory_order_relaxed);
	}
	count_lost(h, 1);
}

/* Gives the thread's lane a new chunk: claims a lane on first use, then
 * takes a chunk from the pool (or steals one), and links it after the
 * current chunk, which seals that one for the reader. */
static int next_chunk(struct pt_wlane *w, uint64_t gen, const struct pt_map *m, uint64_t ts)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	if (w->gen != gen) {
		uint32_t lane = claim_lane(m);
		if (lane == PT_NONE) {
			count_lost(h, 1);
			return 0;
		}
		w->gen = gen;
		w->lane = lane;
		w->chunk = NULL;
		w->off = w->cap = w->count = 0;
	}
	uint32_t c = pt_pool_pop(m);
	if (c == PT_NONE && h->attr.stream_policy == POSIX_TRACE_LOOP)
		c = steal_oldest(m);
	if (c == PT_NONE) {
		if (h->attr.stream_policy == POSIX_TRACE_LOOP)
			note_overflow(h, ts, 1);
		else
			stream_full(h, ts);
		if (h->attr.stream_policy == POSIX_TRACE_FLUSH)
			pt_keeper_kick(h);
		return 0;
	}
	/* POSIX_TRACE_FLUSH: ask the keeper to flush once a quarter of the stream is
	 * used, so that it rarely fills up. */
	if (h->attr.stream_policy == POSIX_TRACE_FLUSH &&
	    atomic_load_explicit(&h->free_count, memory_order_relaxed) < m->nchunks * 3 / 4)
		pt_keeper_kick(h);
	struct pt_chunk *ch = pt_chunk_at(m, c);
	atomic_store_explicit(&ch->commit, PT_CHUNK_HDR, memory_order_relaxed);
	atomic_store_explicit(&ch->next, PT_NONE, memory_order_relaxed);
	atomic_store_explicit(&ch->first_ts, UINT64_MAX, memory_order_relaxed);
	ch->pid = pt_proc.system_writer ? 0 : pt_proc.pid;
	ch->lane = w->lane;
	ch->thread = pt_proc.system_writer ? 0 : (uint64_t)pthread_self();
	if (w->chunk) {
		atomic_store_explicit(&((struct pt_chunk *)w->chunk)->next, c, memory_order_release);
	} else {
		struct pt_lane *l = pt_lane_at(m, w->lane);
		uint64_t hd = atomic_load_explicit(&l->head, memory_order_relaxed);
		atomic_store_explicit(&l->head, pt_head_pack(c, PT_CHUNK_HDR, pt_head_tag(hd) + 1),
		                      memory_order_release);
	}
	w->chunk = (unsigned char *)ch;
	w->off = PT_CHUNK_HDR;
	w->count = 0;
	w->cap = m->chunk_size;
	return 1;
}

/* Copies event data; short payloads with a few overlapping word moves
 * instead of a call (the record's data area is padded to 8 bytes). */
static inline void copy_data(unsigned char *dst, const unsigned char *src, size_t len)
{
	if (len > 32) {
		memcpy(dst, src, len);
	} else if (len > 16) {
		memcpy(dst, src, 16);
		memcpy(dst + len - 16, src + len - 16, 16);
	} else if (len >= 8) {
		uint64_t a, b;
		memcpy(&a, src, 8);
		memcpy(&b, src + len - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	} else if (len >= 4) {
		uint32_t a, b;
		memcpy(&a, src, 4);
		memcpy(&b, src + len - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + len - 4, &b, 4);
	} else if (len) {
		dst[0] = src[0];
		dst[len / 2] = src[len / 2];
		dst[len - 1] = src[len - 1];
	}
}

/* The record header as three word stores (struct pt_record's layout). */
static inline void put_header(unsigned char *p, uint32_t len, trace_event_id_t id,
                              uint16_t flags, uint64_t ts, uintptr_t pc)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	uint64_t w0 = (uint64_t)len | ((uint64_t)(uint16_t)id << 32) | ((uint64_t)flags << 48);
#else
	uint64_t w0 = ((uint64_t)len << 32) | ((uint64_t)(uint16_t)id << 16) | flags;
#endif
	uint64_t w2 = (uint64_t)pc;
	memcpy(p, &w0, 8);
	memcpy(p + 8, &ts, 8);
	memcpy(p + 16, &w2, 8);
}

/* A stream that is not running: events attempted while it is full are lost
 * (UNTIL_FULL), counted in the thread's own lane when it has one; a dead one
 * is disarmed so that the fast path is fast again. */
__attribute__((cold, noinline)) static void not_running(struct pt_thread *t, int slot,
                                                       struct pt_attached *a,
                                                       const struct pt_map *m, uint32_t state)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	struct pt_wlane *w = &t->lanes[slot];
	if (state == PT_ST_FULL && w->gen == a->gen && w->lane < m->nlanes) {
		_Atomic uint64_t *lost = &pt_lane_at(m, w->lane)->lost;
		mark_overrun(h);
		atomic_store_explicit(lost, atomic_load_explicit(lost, memory_order_relaxed) + 1,
		                      memory_order_relaxed);
	} else if (state == PT_ST_FULL) {
		count_lost(h, 1);
	} else if (state == PT_ST_DEAD && a->traced) {
		pt_arm(slot, 0);
	}
}

/* Whether a stream takes this event now; `force`: even when not running
 * (START and STOP). */
static inline int takes(struct pt_thread *t, int slot, struct pt_attached *a,
                        const struct pt_map *m, trace_event_id_t id, int force)
{
	uint32_t state = atomic_load_explicit(&pt_hdr(m)->state, memory_order_relaxed);
	if (PT_UNLIKELY(state != PT_ST_RUNNING) && !force) {
		not_running(t, slot, a, m, state);
		return 0;
	}
	return !pt_filtered(pt_hdr(m), id);
}

/* Reserve, write, commit: the event goes into the thread's lane. */
__attribute__((noinline)) static int append_record(
    struct pt_thread *t, int slot, struct pt_attached *a, struct pt_map *m, trace_event_id_t id,
    const void *data, size_t len, uint64_t *ts, uintptr_t pc)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	if (!*ts)
		*ts = pt_now_ns();
	uint16_t flags = 0;
	if (!data)
		len = 0;
	if (PT_UNLIKELY(len > m->max_data)) {
		len = m->max_data;
		flags = PT_REC_TRUNCATED;
	}
	uint32_t size = (uint32_t)pt_record_size(len);
	struct pt_wlane *w = &t->lanes[slot];
	if (PT_UNLIKELY(w->gen != a->gen || w->off + size > w->cap) &&
	    !next_chunk(w, a->gen, m, *ts))
		return -1;

	unsigned char *p = w->chunk + w->off;
	put_header(p, (uint32_t)len, id, flags, *ts, pc);
	copy_data(p + sizeof(struct pt_record), data, len);
	struct pt_chunk *ch = (struct pt_chunk *)w->chunk;
	if (PT_UNLIKELY(w->count == 0))
		atomic_store_explicit(&ch->first_ts, *ts, memory_order_relaxed);
	w->off += size;
	w->count++;
	/* Publishes the record: the reader acquires commit before reading it. */
	atomic_store_explicit(&ch->commit, ((uint64_t)w->count << 32) | w->off,
	                      memory_order_release);
	if (PT_LIKELY(pt_proc.use_membarrier))
		atomic_signal_fence(memory_order_seq_cst);
	else
		pt_full_fence();
	if (PT_UNLIKELY(atomic_load_explicit(&h->waiters, memory_order_relaxed)))
		pt_wake_readers(h);
	return 0;
}

/* One event into one stream, with every check (system events: `force`
 * records into a stream that is not running). */
static int write_into(struct pt_thread *t, int slot, trace_event_id_t id, const void *data,
                      size_t len, uint64_t *ts, uintptr_t pc, int force)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
	if (!m || !takes(t, slot, a, m, id, force))
		return -1;
	return append_record(t, slot, a, m, id, data, len, ts, pc);
}

__attribute__((noinline)) static void record_user_event(trace_event_id_t id, const void *data,
                                                        size_t len, uintptr_t pc)
{
	if (id < PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return;
	struct pt_thread *t = pt_self;
	uint64_t seq, ts = 0;
	if (!t && !(t = thread_register()))
		return;
	if (!enter(t, &seq))
		return;
	struct pt_pcb *pcb = pt_proc.pcb;
	uint64_t armed = atomic_load_explicit(&pcb->armed, memory_order_acquire);
	while (armed) {
		int slot = __builtin_ctzll(armed);
		armed &= armed - 1;
		struct pt_attached *a = &pt_proc.attached[slot];
		/* A slot armed by a controller for a stream not mapped yet: a
		 * new offer (another process's stream for this one). */
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
		if (PT_UNLIKELY(!m || a->offer_gen != atomic_load_explicit(&pcb->slots[slot].gen,
		                                                           memory_order_relaxed))) {
			pt_attach_offered(slot);
			m = atomic_load_explicit(&a->map, memory_order_acquire);
			if (!m)
				continue;
		}
		if (takes(t, slot, a, m, id, 0) && a->traced)
			append_record(t, slot, a, m, id, data, len, &ts, pc);
	}
	leave(t, seq);
}

void posix_trace_event(trace_event_id_t id, const void *restrict data, size_t len)
{
	if (PT_LIKELY(atomic_load_explicit(&pt_proc.pcb->armed, memory_order_relaxed) == 0))
		return;
	record_user_event(id, data, len, (uintptr_t)__builtin_return_address(0));
}

int pt_write_event(int slot, trace_event_id_t id, const void *data, size_t len, uint64_t ts,
                   uintptr_t pc, int force)
{
	struct pt_thread *t = pt_self;
	uint64_t seq;
	if (!t && !(t = thread_register()))
		return -1;
	if (!enter(t, &seq))
		return -1;
	int rc = write_into(t, slot, id, data, len, &ts, pc, force);
	leave(t, seq);
	return rc;
}

/* A thread that exits closes its lanes: its last chunk is sealed with
 * PT_END so the reader frees it and the lane once it is read. */
void pt_thread_exit(void *arg)
{
	struct pt_thread *t = arg;
	uint64_t seq;
	if (enter(t, &seq)) {
		for (int slot = 0; slot < TRACE_SYS_MAX; slot++) {
			struct pt_attached *a = &pt_proc.attached[slot];
			struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
			struct pt_wlane *w = &t->lanes[slot];
			if (!m || w->gen != a->gen)
				continue;
			struct pt_lane *l = pt_lane_at(m, w->lane);
			if (w->chunk) {
				atomic_store_explicit(&l->state, PT_LANE_CLOSED, memory_order_release);
				atomic_store_explicit(&((struct pt_chunk *)w->chunk)->next, PT_END,
				                      memory_order_release);
			} else {
				atomic_store_explicit(&l->state, PT_LANE_FREE, memory_order_release);
			}
		}
		leave(t, seq);
	}
	pthread_mutex_lock(&pt_proc.lock);
	for (struct pt_thread **pp = &pt_proc.threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&pt_proc.lock);
	if (pt_self == t)
		pt_self = NULL;
	free(t);
}

/* In a fork child only the forking thread exists. */
void pt_forget_other_threads(void)
{
	struct pt_thread *t = pt_proc.threads, *me = pt_self;
	while (t) {
		struct pt_thread *next = t->next;
		if (t != me)
			free(t);
		t = next;
	}
	pt_proc.threads = me;
	if (me) {
		me->next = NULL;
		me->self = pthread_self();
	}
}

/* The keeper starts with no thread of its own and no lane anywhere. */
void pt_thread_reset_for_keeper(void)
{
	struct pt_thread *t = pt_proc.threads;
	while (t) {
		struct pt_thread *next = t->next;
		free(t);
		t = next;
	}
	pt_proc.threads = NULL;
	pt_self = NULL;
}
