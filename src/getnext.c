/* SPDX-License-Identifier: MIT */
/*
 * posix_trace_getnext_event() and its timed and non-blocking forms: taking
 * events out of a stream (reader.c) or a log (logfile.c), and waiting.
 *
 * A reader that has caught up waits without asking writers for anything at
 * first (ten naps of 100 us: a busy writer is not made to wake it after
 * every event, and its events are delivered at most a nap late); then it
 * announces its sleep (waiters) and sleeps until a writer wakes it.
 */
#include <errno.h>
#include <linux/futex.h>
#include <limits.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "handle.h"
#include "logfile.h"
#include "process.h"
#include "reader.h"
#include "stream.h"
#include "thread.h"
#include "writer.h"

#define NAP_NS 100000L
#define NAPS 10

enum { GET_BLOCK, GET_TRY, GET_TIMED };

static int deadline_passed(const struct timespec *abstime)
{
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	return now.tv_sec > abstime->tv_sec ||
	       (now.tv_sec == abstime->tv_sec && now.tv_nsec >= abstime->tv_nsec);
}

/* The earlier of abstime and `rel` from now, as a CLOCK_REALTIME deadline;
 * whole timespecs, no multiplication that could overflow. */
static struct timespec earlier_deadline(const struct timespec *abstime, long rel_ns)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += rel_ns;
	if (t.tv_nsec >= 1000000000L) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000L;
	}
	if (abstime && (abstime->tv_sec < t.tv_sec ||
	                (abstime->tv_sec == t.tv_sec && abstime->tv_nsec < t.tv_nsec)))
		return *abstime;
	return t;
}

/* Sleeps until futex_seq moves past seq, a signal, or the deadline. */
static int wait_seq(struct pt_stream_hdr *hdr, uint32_t seq, const struct timespec *deadline)
{
	long r = syscall(SYS_futex, &hdr->futex_seq, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME, seq,
	                 deadline, NULL, FUTEX_BITSET_MATCH_ANY);
	return r == 0 || errno == EAGAIN || errno == ETIMEDOUT ? 0 : errno;
}

static int take(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                size_t num_bytes, size_t *data_len, uintptr_t pc)
{
	struct posixtrace_event_ext ext;
	if (!pt_read_next(&h->src, ev, &ext, data, num_bytes, data_len, 1, pc))
		return 0;
	h->ext = ext;
	h->has_ext = 1;
	return 1;
}

/* One wait of a reader that caught up.  Returns 1 when it found an event
 * on its last look, else 0 or an error number (EINTR) as the wait ended. */
static int wait_for_event(struct pt_handle *h, int *naps, const struct timespec *abstime,
                          struct posix_trace_event_info *ev, void *data, size_t num_bytes,
                          size_t *data_len, uintptr_t pc, int *err)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	/* Pairs with the release fetch-add of futex_seq in pt_wake_readers (stream.c). */
	uint32_t seq = atomic_load_explicit(&hdr->futex_seq, memory_order_acquire);
	struct timespec deadline, *dl = NULL;
	if (*naps < NAPS) {
		(*naps)++;
		deadline = earlier_deadline(abstime, NAP_NS);
		dl = &deadline;
	} else {
		/* Announce the sleep, then look once more: the fence pairs with
		 * the writer's compiler barrier between its commit and its
		 * load of waiters (append_record, writer.c), so either it sees
		 * us or we see its event. */
		atomic_store_explicit(&hdr->waiters, 1, memory_order_seq_cst);
		int bounded = pt_fence_all(h->remote || h->src.map.inherited) != 0;
		/* The look must load every lane's commit word: an event
		 * committed since the last gather would otherwise wait for
		 * the next one to wake us. */
		h->src.rd.gather_raw = 0;
		if (take(h, ev, data, num_bytes, data_len, pc))
			return 1;
		if (bounded || abstime) {
			deadline = bounded ? earlier_deadline(abstime, 10000000L) : *abstime;
			dl = &deadline;
		}
	}
	pthread_mutex_unlock(&h->lock);
	*err = wait_seq(hdr, seq, dl);
	/* Another thread may have biased the handle meanwhile: two readers. */
	pt_handle_relock(h);
	return 0;
}

/*
 * A handle biased to the calling thread (handle.h), read without the lock:
 * a log, or an active stream without a log that this thread alone reads.
 * Every other thread's call on the handle (posix_trace_stop, set_filter,
 * get_status, clear, shutdown, another reader) takes the lock through
 * pt_handle_get or pt_handle_relock, which revokes the bias and waits until
 * this thread is outside, so what the lock guards (the reader, the
 * handle's extension) is this thread's alone in here, and shutdown frees
 * nothing while it is inside.  The bias proves the identifier and the
 * handle's kind: a log is biased only by posix_trace_getnext_event, which
 * accepts it, so nothing is checked again per event.  1 when the call is
 * done: an event taken, the end of a log, or nothing for trygetnext; 0
 * when it must go the locked way (not biased, trygetnext on a log, or a
 * getnext that has to wait).
 */
static __attribute__((noinline)) int biased_next(trace_id_t trid, struct posix_trace_event_info *ev, void *data,
                                             size_t num_bytes, size_t *data_len,
                                             int *unavailable, int mode, uintptr_t pc)
{
	struct pt_thread *t = pt_thread_peek();
	struct pt_handle *h = pt_handle_enter_biased(trid, t);
	if (!h)
		return 0;
	int done = 1;
	if (PT_LIKELY(h->kind == PT_H_LOG)) {
		/* A pre-recorded stream never blocks; trygetnext refuses it
		 * (EINVAL), the locked way. */
		if (mode == GET_BLOCK)
			pt_logfile_next(h, ev, data, num_bytes, data_len, unavailable);
		else
			done = 0;
	} else if (take(h, ev, data, num_bytes, data_len, pc)) {
		*unavailable = 0;
	} else if (mode == GET_TRY) {
		*unavailable = 1;
	} else {
		done = 0;
	}
	pt_handle_leave_biased(t);
	return done;
}

static int get_event(trace_id_t trid, struct posix_trace_event_info *ev, void *data,
                     size_t num_bytes, size_t *data_len, int *unavailable, int mode,
                     const struct timespec *abstime, uintptr_t pc)
{
	if (!ev || !data_len || !unavailable || (!data && num_bytes))
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, mode == GET_BLOCK ? PT_H_ACTIVE | PT_H_LOG : PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	if (h->kind == PT_H_LOG) {
		/* A pre-recorded stream never blocks; its end is "unavailable". */
		pt_logfile_next(h, ev, data, num_bytes, data_len, unavailable);
		pt_handle_bias(h, trid);
		pt_handle_put(h);
		return 0;
	}
	if (h->has_log) {
		/* The keeper consumes an active stream with a log; reading it
		 * as well is left unspecified by the standard. */
		pt_handle_put(h);
		return EINVAL;
	}
	int rc = 0, naps = 0;
	/* The only reader: its next calls may go without the lock. */
	if (!h->readers && mode != GET_TIMED)
		pt_handle_bias(h, trid);
	h->readers++;
	for (;;) {
		if (h->dying) {
			rc = EINVAL;
			break;
		}
		if (take(h, ev, data, num_bytes, data_len, pc)) {
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
		int err = 0;
		if (wait_for_event(h, &naps, mode == GET_TIMED ? abstime : NULL, ev, data, num_bytes,
		                   data_len, pc, &err)) {
			*unavailable = 0;
			break;
		}
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

/* Every getnext but a biased log's: a biased stream's, then the locked way. */
static __attribute__((noinline)) int getnext_other(trace_id_t trid,
                                                   struct posix_trace_event_info *ev, void *data,
                                                   size_t num_bytes, size_t *data_len,
                                                   int *unavailable, uintptr_t pc)
{
	if (biased_next(trid, ev, data, num_bytes, data_len, unavailable, GET_BLOCK, pc))
		return 0;
	return get_event(trid, ev, data, num_bytes, data_len, unavailable, GET_BLOCK, NULL, pc);
}

/* The log's read is the fast path: a biased handle of a log goes straight
 * to the reader (pt_logfile_next), with nothing on the stack to save but
 * what is needed after the reader's call; the rest is getnext_other's. */
int posix_trace_getnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                              void *restrict data, size_t num_bytes, size_t *restrict data_len,
                              int *restrict unavailable)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (!ev || !data_len || !unavailable || (!data && num_bytes))
		return EINVAL;
	struct pt_thread *t = pt_thread_peek();
	struct pt_handle *h = pt_handle_enter_biased(trid, t);
	if (PT_LIKELY(h != NULL)) {
		if (PT_LIKELY(h->kind == PT_H_LOG)) {
			/* The reader sets *unavailable: after its call only
			 * the thread is needed. */
			pt_logfile_next(h, ev, data, num_bytes, data_len, unavailable);
			pt_handle_leave_biased(t);
			return 0;
		}
		pt_handle_leave_biased(t);
	}
	return getnext_other(trid, ev, data, num_bytes, data_len, unavailable, pc);
}

int posix_trace_timedgetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                   void *restrict data, size_t num_bytes,
                                   size_t *restrict data_len, int *restrict unavailable,
                                   const struct timespec *restrict abstime)
{
	return get_event(trid, ev, data, num_bytes, data_len, unavailable, GET_TIMED, abstime,
	                 (uintptr_t)__builtin_return_address(0));
}

int posix_trace_trygetnext_event(trace_id_t trid, struct posix_trace_event_info *restrict ev,
                                 void *restrict data, size_t num_bytes,
                                 size_t *restrict data_len, int *restrict unavailable)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (ev && data_len && unavailable && (data || !num_bytes) &&
	    biased_next(trid, ev, data, num_bytes, data_len, unavailable, GET_TRY, pc))
		return 0;
	return get_event(trid, ev, data, num_bytes, data_len, unavailable, GET_TRY, NULL, pc);
}

/* posixtrace_getnext_events through the lock: a log not yet biased to
 * this thread, or an active stream (trygetnext's events, no wait). */
static __attribute__((noinline)) int batch_locked(trace_id_t trid,
                                                  struct posixtrace_batch_event *evs, size_t max,
                                                  unsigned char *buf, size_t bufsize,
                                                  size_t num_bytes, size_t *count, uintptr_t pc)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	int rc = 0;
	size_t n = 0, used = 0;
	if (h->kind == PT_H_LOG) {
		n = pt_logr_next_batch(h->log->r, evs, max, buf, bufsize, num_bytes);
		pt_handle_bias(h, trid);
	} else if (h->has_log || h->dying) {
		rc = EINVAL; /* as getnext: the keeper reads a stream with a log */
	} else {
		while (n < max && bufsize - used >= num_bytes) {
			struct posixtrace_batch_event *e = &evs[n];
			unsigned char *at = buf ? buf + used : NULL;
			if (!take(h, &e->posixtrace_info, at, num_bytes, &e->posixtrace_data_len, pc))
				break;
			e->posixtrace_data = at;
			used += e->posixtrace_data_len;
			e->posixtrace_tid = h->ext.posixtrace_tid;
			e->posixtrace_cpu = h->ext.posixtrace_cpu;
			e->posixtrace_cpu_valid = h->ext.posixtrace_cpu_valid;
			e->posixtrace_reserved = 0;
			n++;
		}
	}
	pt_handle_put(h);
	*count = n;
	return rc;
}

/* A log biased to this thread takes its events in one enter of the
 * handle: what posix_trace_getnext_event pays per event is paid once. */
int posixtrace_getnext_events(trace_id_t trid, struct posixtrace_batch_event *evs, size_t max,
                              void *buf, size_t bufsize, size_t num_bytes, size_t *count)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (!evs || !count || !max || (!buf && bufsize) || num_bytes > bufsize)
		return EINVAL;
	*count = 0;
	struct pt_thread *t = pt_thread_peek();
	struct pt_handle *h = pt_handle_enter_biased(trid, t);
	if (PT_LIKELY(h != NULL)) {
		if (PT_LIKELY(h->kind == PT_H_LOG)) {
			*count = pt_logr_next_batch(h->log->r, evs, max, buf, bufsize, num_bytes);
			pt_handle_leave_biased(t);
			return 0;
		}
		pt_handle_leave_biased(t);
	}
	return batch_locked(trid, evs, max, buf, bufsize, num_bytes, count, pc);
}
