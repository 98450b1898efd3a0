/* SPDX-License-Identifier: MIT */
/*
 * Recording: posix_trace_event() and what a thread does to append to its
 * lane.  Reserve / write / commit, all in memory only the writing thread
 * touches, except one release store of the chunk's commit word per event.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "clock.h"
#include "writer.h"

static __thread struct pt_thread *pt_self __attribute__((tls_model("initial-exec")));

static struct pt_thread *thread_register(void)
{
	pt_init();
	struct pt_thread *t = aligned_alloc(128, (sizeof *t + 127) & ~(size_t)127);
	if (!t)
		return NULL;
	memset(t, 0, sizeof *t);
	t->self = pthread_self();
	t->tid = pt_gettid();
	pthread_mutex_lock(&pt_proc.lock);
	t->next = pt_proc.threads;
	pt_proc.threads = t;
	pthread_mutex_unlock(&pt_proc.lock);
	pthread_setspecific(pt_proc.thread_key, t);
	pt_self = t;
	return t;
}

struct pt_thread *pt_thread_self(void)
{
	return pt_self ? pt_self : thread_register();
}

/* Entering: mark this thread inside (odd), then read the stream table.
 * The compiler barrier suffices because pt_barrier_locked() issues
 * membarrier(2) (pairs with pt_fence_all in process.c); without it, writers
 * pay a full fence. */
static inline __attribute__((always_inline)) int enter(struct pt_thread *t, uint64_t *seq)
{
	*seq = atomic_load_explicit(&t->cs_seq, memory_order_relaxed);
	if (*seq & 1)
		return 0; /* nested, from a signal handler: the event is dropped */
	atomic_store_explicit(&t->cs_seq, *seq + 1, memory_order_relaxed);
	if (PT_LIKELY(pt_proc.use_membarrier))
		atomic_signal_fence(memory_order_seq_cst);
	else
		pt_full_fence();
	return 1;
}

/* Pairs with the acquire load of cs_seq in pt_barrier_locked(). */
static inline __attribute__((always_inline)) void leave(struct pt_thread *t, uint64_t seq)
{
	atomic_store_explicit(&t->cs_seq, seq + 2, memory_order_release);
}

void pt_keeper_kick(struct pt_stream_hdr *h, uintptr_t pc)
{
	if (atomic_load_explicit(&h->keeper_kicked, memory_order_relaxed) ||
	    atomic_exchange_explicit(&h->keeper_kicked, 1, memory_order_acq_rel))
		return;
	atomic_store_explicit(&h->kick_pid, pt_proc.pid, memory_order_relaxed);
	atomic_store_explicit(&h->kick_pc, pc, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->keeper_wake, 1, memory_order_release);
	syscall(SYS_futex, &h->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* UNTIL_FULL: the stream stops itself; the event that did not fit is lost
 * (XSH 2.11.1.4, POSIX_TRACE_UNTIL_FULL).  Its time and the writer that found
 * it full are what the automatic POSIX_TRACE_STOP reports. */
static void stream_full(struct pt_stream_hdr *h, uint64_t ts, uintptr_t pc)
{
	uint32_t running = PT_ST_RUNNING;
	if (atomic_compare_exchange_strong_explicit(&h->state, &running, PT_ST_FULL,
	                                            memory_order_acq_rel, memory_order_relaxed)) {
		atomic_store_explicit(&h->full_ts, ts, memory_order_relaxed);
		atomic_store_explicit(&h->full_pid, pt_proc.pid, memory_order_relaxed);
		atomic_store_explicit(&h->full_pc, pc, memory_order_relaxed);
		atomic_store_explicit(&h->full, 1, memory_order_relaxed);
	}
	atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->lost_total, 1, memory_order_relaxed);
}

/* The writer starts chunk c for its lane: its header, then the link that
 * seals the previous chunk (release: pairs with the acquire load of next
 * in lane_peek, reader.c), then the lane's tail. */
static void start_chunk(struct pt_thread *t, struct pt_wlane *w, const struct pt_map *m,
                        uint32_t c, uint64_t now)
{
	struct pt_chunk *ch = pt_chunk_at(m, c);
	struct pt_lane *l = pt_lane_at(m, w->lane);
	atomic_store_explicit(&ch->commit, PT_CHUNK_HDR, memory_order_relaxed);
	atomic_store_explicit(&ch->next, PT_NONE, memory_order_relaxed);
	atomic_store_explicit(&ch->event_bytes, 0, memory_order_relaxed);
	ch->base = now;
	ch->cal_raw = now;
	ch->cal_mono = m->clock == PT_CLOCK_TSC ? pt_mono_ns() : now;
	ch->owner.pid = pt_proc.pid;
	ch->owner.tid = t->tid;
	ch->owner.thread = (uint64_t)t->self;
	memcpy(ch->owner.comm, t->comm, PT_COMM_SIZE);
	ch->lane = w->lane;
	if (w->chunk) {
		struct pt_chunk *old = (struct pt_chunk *)w->chunk;
		atomic_store_explicit(&old->event_bytes, w->event_bytes, memory_order_relaxed);
		atomic_fetch_add_explicit(&pt_hdr(m)->held, w->event_bytes, memory_order_relaxed);
		atomic_store_explicit(&old->next, c, memory_order_release);
	} else {
		uint64_t hd = atomic_load_explicit(&l->head, memory_order_relaxed);
		atomic_store_explicit(&l->head, pt_head_pack(c, PT_CHUNK_HDR, pt_head_tag(hd) + 1),
		                      memory_order_release);
	}
	atomic_store_explicit(&l->tail1, c + 1, memory_order_release);
	w->chunk = (unsigned char *)ch;
	w->off = PT_CHUNK_HDR;
	w->count = 0;
	w->cap = m->chunk_size;
	w->event_bytes = 0;
	w->base = now;
	w->need_owner = 0;
}

/*
 * A new chunk for the lane.  The stream holds stream-min-size bytes of
 * events in sealed chunks before it is full (held); the chunks each writer
 * has open are its own reservation, committed when the pool runs dry, so
 * that any number of writers fits (posix_trace_attr_getmaxusereventsize:
 * events whose sizes sum to stream-min-size are all recorded).
 */
static int next_chunk(struct pt_thread *t, struct pt_wlane *w, const struct pt_map *m,
                      uint64_t now, uintptr_t pc)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint64_t held = atomic_load_explicit(&h->held, memory_order_relaxed);
	uint32_t c = PT_NONE;
	/* Another writer may be growing the pool at the same time: its chunks
	 * are in the pool a moment after it commits them. */
	for (int tries = 0; held < m->event_room && c == PT_NONE && tries < 16; tries++) {
		c = pt_pool_pop(m);
		if (c == PT_NONE && pt_stream_grow(m) != 0)
			break;
	}
	if (c == PT_NONE && m->policy == POSIX_TRACE_LOOP)
		c = pt_steal_oldest(m);
	if (c == PT_NONE) {
		if (m->policy == POSIX_TRACE_UNTIL_FULL)
			stream_full(h, now, pc);
		else
			pt_note_loss(h, now, 1);
		if (m->policy == POSIX_TRACE_FLUSH)
			pt_keeper_kick(h, pc);
		return 0;
	}
	/* POSIX_TRACE_FLUSH: a quarter of the room used asks the keeper for
	 * a flush, so that the stream rarely fills up. */
	if (m->policy == POSIX_TRACE_FLUSH && held + w->event_bytes >= m->event_room / 4)
		pt_keeper_kick(h, pc);
	start_chunk(t, w, m, c, now);
	return 1;
}

static void put_meta(struct pt_wlane *w, uint32_t id, const void *data, uint32_t len)
{
	unsigned char *p = w->chunk + w->off;
	uint64_t w0 = pt_rec_word0(0, id, len, 0), w1 = 0;
	memcpy(p, &w0, 8);
	memcpy(p + 8, &w1, 8);
	memcpy(p + PT_REC_HDR, data, len);
	w->off += (uint32_t)pt_record_size(len);
}

/* The record does not go straight in: the thread has no lane yet, its
 * chunk is full, the delta would not fit, or it continues the chunk of a
 * lane's previous owner.  0: the event is lost. */
__attribute__((noinline, cold)) static int prepare(struct pt_thread *t, struct pt_wlane *w,
                                                   struct pt_attached *a, const struct pt_map *m,
                                                   uint64_t now, uint32_t size, uintptr_t pc)
{
	if (w->gen != a->gen) {
		if (pt_lane_claim(t, w, m) != 0) {
			pt_note_loss(pt_hdr(m), now, 1);
			return 0;
		}
		w->gen = a->gen;
	}
	uint32_t meta = 0;
	if (w->chunk && w->need_owner)
		meta = (uint32_t)pt_record_size(sizeof(struct pt_owner_rec));
	else if (w->chunk && now - w->base > PT_DELTA_MAX)
		meta = (uint32_t)pt_record_size(sizeof(uint64_t));
	if (!w->chunk || w->off + meta + size > w->cap)
		return next_chunk(t, w, m, now, pc);
	if (w->need_owner) {
		struct pt_owner_rec o = {.base = now};
		o.owner.pid = pt_proc.pid;
		o.owner.tid = t->tid;
		o.owner.thread = (uint64_t)t->self;
		memcpy(o.owner.comm, t->comm, PT_COMM_SIZE);
		put_meta(w, PT_ID_OWNER, &o, sizeof o);
		w->need_owner = 0;
	} else if (meta) {
		put_meta(w, PT_ID_TIME, &now, sizeof now);
	}
	w->base = now;
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
		uint64_t x, y;
		memcpy(&x, src, 8);
		memcpy(&y, src + len - 8, 8);
		memcpy(dst, &x, 8);
		memcpy(dst + len - 8, &y, 8);
	} else if (len >= 4) {
		uint32_t x, y;
		memcpy(&x, src, 4);
		memcpy(&y, src + len - 4, 4);
		memcpy(dst, &x, 4);
		memcpy(dst + len - 4, &y, 4);
	} else if (len) {
		dst[0] = src[0];
		dst[len / 2] = src[len / 2];
		dst[len - 1] = src[len - 1];
	}
}

/* Reserve, write, commit: the event goes into the thread's lane. */
static void append_record(struct pt_thread *t, int slot, struct pt_attached *a,
                          const struct pt_map *m, trace_event_id_t id, const void *data,
                          size_t len, uint64_t *ts, uintptr_t pc)
{
	if (!ts[m->clock])
		ts[m->clock] = pt_clock_raw(m->clock);
	uint64_t now = ts[m->clock];
	int truncated = 0;
	if (!data)
		len = 0;
	if (PT_UNLIKELY(len > m->max_data)) {
		len = m->max_data;
		truncated = 1;
	}
	uint32_t size = (uint32_t)pt_record_size(len);
	struct pt_wlane *w = &t->lanes[slot];
	if (PT_UNLIKELY(w->gen != a->gen || w->off + size > w->cap || now - w->base > PT_DELTA_MAX ||
	                w->need_owner) &&
	    !prepare(t, w, a, m, now, size, pc))
		return;
	unsigned char *p = w->chunk + w->off;
	uint64_t w0 = pt_rec_word0(now - w->base, id, (uint32_t)len, truncated), w1 = pc;
	memcpy(p, &w0, 8);
	memcpy(p + 8, &w1, 8);
	copy_data(p + PT_REC_HDR, data, len);
	w->off += size;
	w->count++;
	w->event_bytes += size;
	/* Publishes the record: pairs with the acquire load of commit in
	 * lane_peek (reader.c). */
	atomic_store_explicit(&((struct pt_chunk *)w->chunk)->commit, ((uint64_t)w->count << 32) | w->off,
	                      memory_order_release);
	/* Commit, then look at waiters: pairs with the reader's store of
	 * waiters, membarrier, second look (get_event in reader.c). */
	if (PT_LIKELY(pt_proc.use_membarrier))
		atomic_signal_fence(memory_order_seq_cst);
	else
		pt_full_fence();
	struct pt_stream_hdr *h = pt_hdr(m);
	if (PT_UNLIKELY(atomic_load_explicit(&h->waiters, memory_order_relaxed)))
		pt_wake_readers(h);
}

/* A stream that is not running: events attempted while it is full are lost
 * (UNTIL_FULL), counted in the thread's own lane when it has one; a dead
 * one is dropped so that the fast path is fast again. */
__attribute__((cold, noinline)) static void not_running(struct pt_thread *t, int slot,
                                                       struct pt_attached *a,
                                                       const struct pt_map *m, uint32_t state)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	struct pt_wlane *w = &t->lanes[slot];
	if (state == PT_ST_FULL && w->gen == a->gen && w->lane < m->max_lanes) {
		_Atomic uint64_t *lost = &pt_lane_at(m, w->lane)->lost;
		atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
		atomic_store_explicit(lost, atomic_load_explicit(lost, memory_order_relaxed) + 1,
		                      memory_order_relaxed);
	} else if (state == PT_ST_FULL) {
		atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
		atomic_fetch_add_explicit(&h->lost_total, 1, memory_order_relaxed);
	} else if (state == PT_ST_DEAD) {
		pt_drop_dead(slot);
	}
}

__attribute__((noinline)) static void record_user_event(trace_event_id_t id, const void *data,
                                                        size_t len, uintptr_t pc)
{
	if (id < PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return;
	if (PT_UNLIKELY(!*pt_proc.fork_word))
		pt_fork_child();
	struct pt_thread *t = pt_self;
	uint64_t seq, ts[3] = {0, 0, 0};
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
		/* A slot armed for a stream not mapped yet: a controller has
		 * handed one over on the channel. */
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
		if (PT_UNLIKELY(!m || a->offer_gen != atomic_load_explicit(&pcb->slots[slot].gen,
		                                                           memory_order_relaxed))) {
			pt_take_offers(slot);
			m = atomic_load_explicit(&a->map, memory_order_acquire);
			if (!m)
				continue;
		}
		if (!a->traced)
			continue;
		uint32_t state = atomic_load_explicit(&pt_hdr(m)->state, memory_order_relaxed);
		if (PT_UNLIKELY(state != PT_ST_RUNNING)) {
			not_running(t, slot, a, m, state);
			continue;
		}
		if (!pt_filtered(pt_hdr(m), id))
			append_record(t, slot, a, m, id, data, len, ts, pc);
	}
	leave(t, seq);
}

void posix_trace_event(trace_event_id_t id, const void *restrict data, size_t len)
{
	if (PT_LIKELY(atomic_load_explicit(&pt_proc.pcb->armed, memory_order_relaxed) == 0))
		return;
	record_user_event(id, data, len, (uintptr_t)__builtin_return_address(0));
}

/* Gives back the thread's lane in one slot (or all, slot < 0), keeping its
 * open chunk for the next owner. */
void pt_release_lanes(struct pt_thread *t, int slot)
{
	uint64_t seq;
	if (!enter(t, &seq))
		return;
	for (int s = slot < 0 ? 0 : slot; s < (slot < 0 ? PT_MAX_STREAMS : slot + 1); s++) {
		struct pt_attached *a = &pt_proc.attached[s];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
		struct pt_wlane *w = &t->lanes[s];
		if (m && w->gen == a->gen && a->traced)
			pt_lane_release(w, m);
		w->gen = 0;
	}
	leave(t, seq);
}

/* A thread that exits gives its lanes back (the TSD destructor). */
void pt_thread_exit(void *arg)
{
	struct pt_thread *t = arg;
	pt_release_lanes(t, -1);
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

/* exit() runs no TSD destructor for the thread that calls it: its lanes go
 * back here.  The process's other threads end with it; their lanes are
 * taken back from a dead owner. */
__attribute__((destructor)) static void release_at_exit(void)
{
	if (pt_self)
		pt_release_lanes(pt_self, -1);
}

/* In a fork child only the forking thread exists; its positions belong to
 * the parent's lanes. */
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
		me->tid = pt_gettid();
		atomic_store_explicit(&me->cs_seq, 0, memory_order_relaxed);
		for (int s = 0; s < PT_MAX_STREAMS; s++)
			me->lanes[s].gen = 0;
	}
}
