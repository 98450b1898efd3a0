/*
 * The controller: creating a stream (with or without a log), start, stop,
 * filter, clear, flush and shutdown.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "internal.h"

static int check_target(pid_t pid)
{
	if (pid == 0 || pid == pt_proc.pid)
		return 0;
	if (pid < 0 || (kill(pid, 0) != 0 && errno == ESRCH))
		return ESRCH;
	/* Tracing another process needs the cross-process attachment, which
	 * this version does not have yet. */
	return ENOTSUP;
}

static int read_attr(const trace_attr_t *attr, struct pt_attr *a)
{
	if (!attr) {
		pt_attr_defaults(a);
		return 0;
	}
	if (!pt_attr_valid(attr))
		return EINVAL;
	memcpy(a, attr, sizeof *a);
	return 0;
}

static int create_stream(pid_t pid, const struct pt_attr *a, int logfd, int seekable,
                         trace_id_t *trid)
{
	int err = check_target(pid);
	if (err)
		return err;
	struct pt_handle *h = pt_handle_alloc();
	if (!h)
		return EAGAIN;
	h->kind = PT_H_ACTIVE;
	err = pt_stream_map_create(a, pt_proc.pid, &h->map);
	if (!err && (h->slot = pt_attach(&h->map)) < 0)
		err = EAGAIN;
	if (!err && logfd >= 0)
		err = pt_keeper_start(h, logfd, seekable);
	if (err) {
		if (h->slot >= 0)
			pt_detach(h->slot);
		pt_stream_unmap(&h->map);
		pthread_mutex_lock(&h->lock);
		pt_handle_release(h);
		pthread_mutex_unlock(&h->lock);
		return err;
	}
	*trid = pt_handle_publish(h);
	return 0;
}

int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr, trace_id_t *restrict trid)
{
	struct pt_attr a;
	pt_init();
	if (!trid || read_attr(attr, &a))
		return EINVAL;
	if (a.stream_policy == POSIX_TRACE_FLUSH)
		return EINVAL; /* a stream without a log cannot flush */
	return create_stream(pid, &a, -1, 0, trid);
}

int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int fd,
                               trace_id_t *restrict trid)
{
	struct pt_attr a;
	int seekable;
	pt_init();
	if (!trid || read_attr(attr, &a))
		return EINVAL;
	if (!a.stream_policy_set)
		a.stream_policy = POSIX_TRACE_FLUSH;
	int err = pt_log_check_fd(fd, a.log_policy, &seekable);
	if (err)
		return err;
	return create_stream(pid, &a, fd, seekable, trid);
}

static void filter_snapshot(const struct pt_stream_hdr *hdr, trace_event_set_t *set)
{
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		set->__bits[i] = atomic_load_explicit(&hdr->filter[i], memory_order_relaxed);
}

int posix_trace_start(trace_id_t trid)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
	if (state == PT_ST_SUSPENDED) {
		trace_event_set_t filter;
		filter_snapshot(hdr, &filter);
		pt_write_event(h->slot, POSIX_TRACE_START, &filter, sizeof filter, pt_now_ns(), pc, 1);
		atomic_store_explicit(&hdr->state, PT_ST_RUNNING, memory_order_release);
		pt_arm(h->slot, 1);
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_stop(trace_id_t trid)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t running = PT_ST_RUNNING;
	if (atomic_compare_exchange_strong_explicit(&hdr->state, &running, PT_ST_SUSPENDED,
	                                            memory_order_acq_rel, memory_order_acquire)) {
		int manual = 0;
		pt_arm(h->slot, 0);
		pt_write_event(h->slot, POSIX_TRACE_STOP, &manual, sizeof manual, pt_now_ns(), pc, 1);
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_flush(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	int err = h->keeper ? pt_keeper_command(h, 'F') : EINVAL;
	pt_handle_put(h);
	return err;
}

/* Also the end of a stream whose controller exits (see process.c). */
int posix_trace_shutdown(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	h->dying = 1;
	pt_arm(h->slot, 0);
	atomic_store_explicit(&hdr->state, PT_ST_DEAD, memory_order_release);
	pt_wake_readers(hdr);
	while (h->readers > 0)
		pthread_cond_wait(&h->idle, &h->lock);
	pt_detach(h->slot); /* no writer is inside the stream after this */
	int err = h->keeper ? pt_keeper_finish(h) : 0;
	pt_stream_unmap(&h->map);
	pt_handle_release(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

int posix_trace_clear(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t full = PT_ST_FULL;
	atomic_compare_exchange_strong_explicit(&hdr->state, &full, PT_ST_SUSPENDED,
	                                        memory_order_acq_rel, memory_order_relaxed);
	pt_discard_all(h);
	/* "As if returning from posix_trace_create()": the filter is empty
	 * again; names and running/suspended status are kept. */
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		atomic_store_explicit(&hdr->filter[i], 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->ovf_count, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->ovf_ts, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&hdr->overrun, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->lost_status, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->full, 0, memory_order_relaxed);
	h->npending = 0;
	h->resume_pending = 0;
	int err = h->keeper ? pt_keeper_command(h, 'C') : 0;
	pt_handle_put(h);
	return err;
}

int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
	if (!set)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	filter_snapshot(pt_hdr(&h->map), set);
	pt_handle_put(h);
	return 0;
}

int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (!set || (how != POSIX_TRACE_SET_EVENTSET && how != POSIX_TRACE_ADD_EVENTSET &&
	             how != POSIX_TRACE_SUB_EVENTSET))
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	trace_event_set_t change[2]; /* old, new: the data of POSIX_TRACE_FILTER */
	filter_snapshot(hdr, &change[0]);
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++) {
		uint64_t w = change[0].__bits[i], s = set->__bits[i];
		w = how == POSIX_TRACE_SET_EVENTSET ? s : how == POSIX_TRACE_ADD_EVENTSET ? (w | s) : (w & ~s);
		change[1].__bits[i] = w;
		atomic_store_explicit(&hdr->filter[i], w, memory_order_relaxed);
	}
	if (atomic_load_explicit(&hdr->state, memory_order_acquire) == PT_ST_RUNNING)
		pt_write_event(h->slot, POSIX_TRACE_FILTER, change, sizeof change, pt_now_ns(), pc, 0);
	pt_handle_put(h);
	return 0;
}

int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict name,
                                  trace_event_id_t *restrict id)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	pt_handle_put(h);
	/* One registry per traced process: the ids agree with the target's
	 * own posix_trace_eventid_open(). */
	return pt_register_name(name, id);
}
