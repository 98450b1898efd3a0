/*
 * The analyzer side of an active stream: posix_trace_getnext_event() and
 * its timed and non-blocking forms.  Every lane is a chain of chunks; the
 * reader takes the oldest unread event over all lanes.  Everything read from
 * the mapping is checked against the geometry kept in private memory.
 */
#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

struct candidate {
	uint32_t lane;
	uint64_t head;
	struct pt_record rec;
	int32_t pid;
	uint64_t thread;
};

/*
 * A chunk can be taken away from under the reader by a LOOP writer (the
 * head CAS then fails and the copy is thrown away), so these reads may race
 * with that writer's stores: seqlock-style, validated afterwards.  Under
 * ThreadSanitizer they are done by hand so the validated race is not
 * reported as a bug.
 */
#if defined(__SANITIZE_THREAD__)
#define PT_RACY_READS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PT_RACY_READS 1
#endif
#endif
#ifdef PT_RACY_READS
__attribute__((no_sanitize("thread"))) static void racy_copy(void *dst, const void *src, size_t n)
{
	volatile const unsigned char *s = src;
	unsigned char *d = dst;
	while (n--)
		*d++ = *s++;
}
#else
static void racy_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif

enum { PEEK_EMPTY = 0, PEEK_EVENT = 1, PEEK_BROKEN = -1 };

/* Frees a chunk the lane has moved past. */
static void retire_chunk(const struct pt_map *m, struct pt_lane *l, uint32_t c, uint32_t next)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	pt_pool_push(m, c);
	if (atomic_load_explicit(&h->full, memory_order_relaxed) &&
	    atomic_load_explicit(&h->state, memory_order_relaxed) != PT_ST_FULL)
		atomic_store_explicit(&h->full, 0, memory_order_relaxed);
	if (next == PT_END) {
		uint32_t closed = PT_LANE_CLOSED;
		atomic_compare_exchange_strong_explicit(&l->state, &closed, PT_LANE_FREE,
		                                        memory_order_acq_rel, memory_order_relaxed);
	}
}

/* Finds the oldest unread event of a lane, moving the lane's head past
 * chunks that are sealed and fully read. */
static int lane_peek(const struct pt_map *m, uint32_t li, struct candidate *out,
                     struct pt_commit_cache *cache)
{
	struct pt_lane *l = pt_lane_at(m, li);
	for (uint32_t steps = 0; steps <= m->nchunks + 1; steps++) {
		uint64_t hd = atomic_load_explicit(&l->head, memory_order_acquire);
		uint32_t c = pt_head_chunk(hd), off = pt_head_off(hd);
		if (c == PT_HEAD_EMPTY)
			return PEEK_EMPTY;
		if (c >= m->nchunks || off < PT_CHUNK_HDR || off > m->chunk_size || off % 8)
			return PEEK_BROKEN;
		struct pt_chunk *ch = pt_chunk_at(m, c);
		/* The commit word is on the writer's hot line: it is loaded
		 * again only once the reader has caught up with what it said
		 * last time about this chunk (in this place of the lane). */
		uint64_t key = hd & ~((uint64_t)0xffffff << 20);
		uint32_t end;
		if (cache->key == key && off < cache->end) {
			end = cache->end;
		} else {
			end = (uint32_t)atomic_load_explicit(&ch->commit, memory_order_acquire);
			int moved = atomic_load_explicit(&l->head, memory_order_acquire) != hd;
			if (moved)
				continue;
			cache->key = key;
			cache->end = end;
		}
		if (end > m->chunk_size || off > end)
			return PEEK_BROKEN;
		if (off < end) {
			unsigned char *p = (unsigned char *)ch + off;
			if (end - off < sizeof(struct pt_record))
				return PEEK_BROKEN;
			/* The records after this one were written by another core:
			 * ask for their lines now. */
			__builtin_prefetch(p + 128);
			__builtin_prefetch(p + 192);
			racy_copy(&out->rec, p, sizeof out->rec);
			racy_copy(&out->pid, &ch->pid, sizeof out->pid);
			racy_copy(&out->thread, &ch->thread, sizeof out->thread);
			if (atomic_load_explicit(&l->head, memory_order_acquire) != hd)
				continue;
			if (out->rec.data_len > m->max_data ||
			    pt_record_size(out->rec.data_len) > end - off)
				return PEEK_BROKEN;
			out->lane = li;
			out->head = hd;
			return PEEK_EVENT;
		}
		uint32_t next = atomic_load_explicit(&ch->next, memory_order_acquire);
		if (next == PT_NONE)
			return PEEK_EMPTY;
		/* Sealed: the commit word is final now; look again for events
		 * committed between the two loads. */
		if ((uint32_t)atomic_load_explicit(&ch->commit, memory_order_acquire) != end) {
			cache->key = UINT64_MAX;
			continue;
		}
		if (next != PT_END && next >= m->nchunks)
			return PEEK_BROKEN;
		uint32_t tag = pt_head_tag(hd) + 1;
		uint64_t repl = next == PT_END ? pt_head_pack(PT_HEAD_EMPTY, 0, tag)
		                               : pt_head_pack(next, PT_CHUNK_HDR, tag);
		if (atomic_compare_exchange_strong_explicit(&l->head, &hd, repl, memory_order_acq_rel,
		                                            memory_order_relaxed))
			retire_chunk(m, l, c, next);
	}
	return PEEK_BROKEN; /* a cycle of chunks */
}

static void push_synth(struct pt_handle *h, trace_event_id_t id, uint64_t ts, const void *data,
                       uint32_t len)
{
	if (h->npending >= PT_PENDING_MAX || pt_filtered(pt_hdr(&h->map), id))
		return;
	struct pt_synth *s = &h->pending[h->npending++];
	s->id = id;
	s->ts = ts;
	s->len = len;
	if (len)
		memcpy(s->data, data, len);
}

static void copy_out(void *data, size_t num_bytes, const void *src, uint32_t len,
                     size_t *data_len, int *truncation)
{
	size_t n = len;
	if (n > num_bytes) {
		n = num_bytes;
		*truncation = POSIX_TRACE_TRUNCATED_READ;
	}
	if (n)
		racy_copy(data, src, n);
	*data_len = n;
}

static void emit_synth(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                       size_t num_bytes, size_t *data_len)
{
	struct pt_synth s = h->pending[0];
	memmove(&h->pending[0], &h->pending[1], (h->npending - 1) * sizeof h->pending[0]);
	h->npending--;
	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = s.id;
	pt_ns_to_timespec(&h->map, s.ts, &ev->posix_timestamp);
	ev->posix_truncation_status = POSIX_TRACE_NOT_TRUNCATED;
	copy_out(data, num_bytes, s.data, s.len, data_len, &ev->posix_truncation_status);
}

/* Copies the candidate out and consumes it; 0 if its chunk was taken by a
 * LOOP writer meanwhile (the copy is then discarded). */
static int consume(struct pt_handle *h, const struct candidate *c,
                   struct posix_trace_event_info *ev, void *data, size_t num_bytes,
                   size_t *data_len)
{
	const struct pt_map *m = &h->map;
	uint32_t ci = pt_head_chunk(c->head), off = pt_head_off(c->head);
	const unsigned char *p = (const unsigned char *)pt_chunk_at(m, ci) + off;
	memset(ev, 0, sizeof *ev);
	ev->posix_truncation_status = (c->rec.flags & PT_REC_TRUNCATED)
	                                  ? POSIX_TRACE_TRUNCATED_RECORD
	                                  : POSIX_TRACE_NOT_TRUNCATED;
	copy_out(data, num_bytes, p + sizeof(struct pt_record), c->rec.data_len, data_len,
	         &ev->posix_truncation_status);
	uint64_t hd = c->head;
	uint64_t repl = pt_head_pack(ci, off + (uint32_t)pt_record_size(c->rec.data_len),
	                             pt_head_tag(hd));
	if (!atomic_compare_exchange_strong_explicit(&pt_lane_at(m, c->lane)->head, &hd, repl,
	                                             memory_order_acq_rel, memory_order_relaxed))
		return 0;
	ev->posix_event_id = c->rec.id;
	ev->posix_pid = c->pid;
	ev->posix_thread_id = (pthread_t)c->thread;
	ev->posix_prog_address = (void *)(uintptr_t)c->rec.pc;
	pt_ns_to_timespec(m, c->rec.ts, &ev->posix_timestamp);
	return 1;
}

static uint32_t lanes_in_use(const struct pt_map *m)
{
	uint32_t hwm = atomic_load_explicit(&pt_hdr(m)->lanes_hwm, memory_order_acquire);
	return hwm < m->nlanes ? hwm : m->nlanes;
}

/* The oldest event over all lanes; lanes found corrupt are left out and
 * reported once with POSIX_TRACE_ERROR. */
static int oldest(struct pt_handle *h, struct candidate *best)
{
	const struct pt_map *m = &h->map;
	uint32_t n = lanes_in_use(m);
	int found = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct candidate c;
		if (h->broken[i])
			continue;
		int r = lane_peek(m, i, &c, &h->commit_cache[i]);
		if (r == PEEK_BROKEN) {
			int err = EINVAL;
			h->broken[i] = 1;
			push_synth(h, POSIX_TRACE_ERROR, pt_now_ns(), &err, sizeof err);
		} else if (r == PEEK_EVENT && (!found || c.rec.ts < best->rec.ts)) {
			*best = c;
			found = 1;
		}
	}
	return found;
}

/* UNTIL_FULL, everything read: report the gap and the automatic stop, then
 * restart the stream. */
static void restart_full_stream(struct pt_handle *h)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint64_t full_ts = atomic_load_explicit(&hdr->full_ts, memory_order_relaxed);
	int automatic = 1;
	push_synth(h, POSIX_TRACE_OVERFLOW, full_ts, NULL, 0);
	push_synth(h, POSIX_TRACE_STOP, full_ts, &automatic, sizeof automatic);
	atomic_store_explicit(&hdr->full, 0, memory_order_relaxed);
	uint32_t full = PT_ST_FULL;
	if (atomic_compare_exchange_strong_explicit(&hdr->state, &full, PT_ST_RUNNING,
	                                            memory_order_acq_rel, memory_order_relaxed)) {
		/* The restart's START is the first valid event after the
		 * overflow: RESUME comes right before it. */
		trace_event_set_t filter;
		uint64_t now = pt_now_ns();
		for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
			filter.__bits[i] = atomic_load_explicit(&hdr->filter[i], memory_order_relaxed);
		push_synth(h, POSIX_TRACE_RESUME, now, NULL, 0);
		push_synth(h, POSIX_TRACE_START, now, &filter, sizeof filter);
	}
}

int pt_read_next(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                 size_t num_bytes, size_t *data_len)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	/* Each turn either returns or lost a race with a writer taking a
	 * chunk; a process scribbling on the stream could make that last, so
	 * the call gives up (nothing available) after many turns. */
	for (int turn = 0; turn < 4096; turn++) {
		if (h->npending) {
			emit_synth(h, ev, data, num_bytes, data_len);
			return 1;
		}
		if (atomic_load_explicit(&hdr->ovf_count, memory_order_acquire)) {
			atomic_exchange_explicit(&hdr->ovf_count, 0, memory_order_acq_rel);
			uint64_t ts = atomic_exchange_explicit(&hdr->ovf_ts, UINT64_MAX,
			                                       memory_order_relaxed);
			push_synth(h, POSIX_TRACE_OVERFLOW, ts == UINT64_MAX ? pt_now_ns() : ts, NULL, 0);
			h->resume_pending = 1;
			continue;
		}
		struct candidate best;
		if (oldest(h, &best)) {
			if (h->resume_pending) {
				h->resume_pending = 0;
				push_synth(h, POSIX_TRACE_RESUME, best.rec.ts, NULL, 0);
				if (h->npending)
					continue;
			}
			if (consume(h, &best, ev, data, num_bytes, data_len))
				return 1;
			continue;
		}
		if (h->npending)
			continue;
		uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
		if (state == PT_ST_FULL) {
			restart_full_stream(h);
			if (h->npending)
				continue;
		} else if (state == PT_ST_DEAD && !h->end_reported &&
		           atomic_load_explicit(&hdr->ended_full, memory_order_acquire)) {
			/* Shut down while full: the end still tells why. */
			uint64_t full_ts = atomic_load_explicit(&hdr->full_ts, memory_order_relaxed);
			int automatic = 1;
			h->end_reported = 1;
			push_synth(h, POSIX_TRACE_OVERFLOW, full_ts, NULL, 0);
			push_synth(h, POSIX_TRACE_STOP, full_ts, &automatic, sizeof automatic);
			if (h->npending)
				continue;
		}
		return 0;
	}
	return 0;
}

/* posix_trace_clear: every event recorded so far is dropped. */
void pt_discard_all(struct pt_handle *h)
{
	const struct pt_map *m = &h->map;
	uint32_t n = lanes_in_use(m);
	for (uint32_t i = 0; i < n; i++) {
		struct candidate c;
		h->commit_cache[i].key = UINT64_MAX;
		while (lane_peek(m, i, &c, &h->commit_cache[i]) == PEEK_EVENT) {
			struct pt_chunk *ch = pt_chunk_at(m, pt_head_chunk(c.head));
			uint32_t end = (uint32_t)atomic_load_explicit(&ch->commit, memory_order_acquire);
			uint64_t hd = c.head;
			atomic_compare_exchange_strong_explicit(
			    &pt_lane_at(m, i)->head, &hd,
			    pt_head_pack(pt_head_chunk(hd), end, pt_head_tag(hd)), memory_order_acq_rel,
			    memory_order_relaxed);
		}
	}
}

enum { GET_BLOCK, GET_TRY, GET_TIMED };

/* Whether abstime is less than `rel` away. */
static int deadline_within(const struct timespec *abstime, const struct timespec *rel)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t left = ((int64_t)abstime->tv_sec - now.tv_sec) * 1000000000 +
	               (abstime->tv_nsec - now.tv_nsec);
	return left < (int64_t)rel->tv_sec * 1000000000 + rel->tv_nsec;
}

static int deadline_passed(const struct timespec *abstime)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec > abstime->tv_sec ||
	       (now.tv_sec == abstime->tv_sec && now.tv_nsec >= abstime->tv_nsec);
}

/* Sleeps until a writer bumps futex_seq past `seq`, a signal, or abstime;
 * at most a tick when the writers could not be fenced (no membarrier). */
static int wait_for_writer(struct pt_stream_hdr *hdr, uint32_t seq, const struct timespec *abstime,
                           int bounded)
{
	long r;
	struct timespec tick = {0, 10 * 1000 * 1000};
	if (bounded && (!abstime || !deadline_within(abstime, &tick)))
		r = syscall(SYS_futex, &hdr->futex_seq, FUTEX_WAIT, seq, &tick, NULL, 0);
	else if (abstime)
		r = syscall(SYS_futex, &hdr->futex_seq, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, seq,
		            abstime, NULL, FUTEX_BITSET_MATCH_ANY);
	else
		r = syscall(SYS_futex, &hdr->futex_seq, FUTEX_WAIT, seq, NULL, NULL, 0);
	return r == 0 || errno == EAGAIN || errno == ETIMEDOUT ? 0 : errno;
}

#define SPIN_LOOKS 64

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

static int spin_for_event(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                          size_t num_bytes, size_t *data_len)
{
	for (int look = 0; look < SPIN_LOOKS; look++) {
		for (int i = 0; i < 32; i++)
			cpu_relax();
		if (pt_read_next(h, ev, data, num_bytes, data_len))
			return 1;
	}
	return 0;
}

static int get_event(trace_id_t trid, struct posix_trace_event_info *ev, void *data,
                     size_t num_bytes, size_t *data_len, int *unavailable, int mode,
                     const struct timespec *abstime)
{
	if (!ev || !data_len || !unavailable || (!data && num_bytes))
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, mode == GET_BLOCK ? PT_H_ACTIVE | PT_H_LOG : PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	if (h->kind == PT_H_LOG) {
		/* A pre-recorded stream never blocks; its end is "unavailable". */
		*unavailable = !pt_logreader_next(h, ev, data, num_bytes, data_len);
		pt_handle_put(h);
		return 0;
	}
	if (h->has_log) {
		/* The keeper consumes an active stream with a log; reading it
		 * as well is left unspecified by the standard. */
		pt_handle_put(h);
		return EINVAL;
	}
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	int rc = 0;
	h->readers++;
	for (;;) {
		if (h->dying) {
			rc = EINVAL;
			break;
		}
		if (pt_read_next(h, ev, data, num_bytes, data_len)) {
			*unavailable = 0;
			break;
		}
		*unavailable = 1;
		if (mode == GET_TRY)
			break;
		if (mode == GET_TIMED) {
			if (!abstime || abstime->tv_nsec < 0 || abstime->tv_nsec >= 1000000000) {
				rc = EINVAL;
				break;
			}
			if (deadline_passed(abstime)) {
				rc = ETIMEDOUT;
				break;
			}
		}
		/* A writer that is busy will commit again within microseconds:
		 * looking a little longer before sleeping saves it a wake-up
		 * system call per event. */
		if (spin_for_event(h, ev, data, num_bytes, data_len)) {
			*unavailable = 0;
			break;
		}
		/* Announce the sleep, then look once more: the fence pairs with
		 * the writer's compiler barrier between commit and its load of
		 * waiters, so either it sees us or we see its event. */
		uint32_t seq = atomic_load_explicit(&hdr->futex_seq, memory_order_acquire);
		atomic_store_explicit(&hdr->waiters, 1, memory_order_seq_cst);
		int bounded = pt_fence_all(h->remote) != 0;
		if (pt_read_next(h, ev, data, num_bytes, data_len)) {
			*unavailable = 0;
			break;
		}
		pthread_mutex_unlock(&h->lock);
		int err = wait_for_writer(hdr, seq, mode == GET_TIMED ? abstime : NULL, bounded);
		pthread_mutex_lock(&h->lock);
		if (err == EINTR) {
			rc = EINTR;
			break;
		}
	}
	h->readers--;
	if (h->dying)
		pthread_cond_broadcast(&h->idle);
	pt_handle_put(h);
	return rc;
}

int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                              void *restrict data, size_t num_bytes, size_t *restrict data_len,
                              int *restrict unavailable)
{
	return get_event(trid, ev, data, num_bytes, data_len, unavailable, GET_BLOCK, NULL);
}

int posix_trace_timedgetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                   void *restrict data, size_t num_bytes,
                                   size_t *restrict data_len, int *restrict unavailable,
                                   const struct timespec *restrict abstime)
{
	return get_event(trid, ev, data, num_bytes, data_len, unavailable, GET_TIMED, abstime);
}

int posix_trace_trygetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                 void *restrict data, size_t num_bytes,
                                 size_t *restrict data_len, int *restrict unavailable)
{
	return get_event(trid, ev, data, num_bytes, data_len, unavailable, GET_TRY, NULL);
}
