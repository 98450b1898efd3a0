/*
 * The controller: creating a stream (with or without a log), start, stop,
 * filter, clear, flush and shutdown.
 */
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "internal.h"

/* Reaches another process: its identity (pid and start time, so that pid
 * reuse is noticed), the permission to trace it, and its control block if
 * it has loaded the library. */
static int reach_target(pid_t pid, struct pt_handle *h)
{
	if (pid < 0)
		return ESRCH;
	int err = pt_may_trace(pid);
	if (err)
		return err;
	h->target_start = pt_proc_starttime(pid);
	if (!h->target_start)
		return ESRCH;
	h->target_pid = pid;
	h->target.slot = -1;
	err = pt_pcb_attach(pid, h->target_start, &h->target);
	return err == ENOENT ? 0 : err; /* not instrumented (yet): stays empty */
}

/* The shared memory object of a stream for another process, owned by the
 * target's user when root creates it so that the target can map it. */
static int open_named_stream(struct pt_handle *h)
{
	static _Atomic uint32_t seq;
	struct stat st;
	char proc[64];
	pt_reclaim_stale_streams();
	for (int tries = 0; tries < 16; tries++) {
		pt_stream_shm_name(h->shm_name, sizeof h->shm_name, h->target_pid, h->target_start,
		                   atomic_fetch_add(&seq, 1));
		int fd = shm_open(h->shm_name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0)
			return -1;
		snprintf(proc, sizeof proc, "/proc/%d", (int)h->target_pid);
		if (geteuid() == 0 && stat(proc, &st) == 0 && st.st_uid != 0 &&
		    fchown(fd, st.st_uid, (gid_t)-1) != 0) {
			close(fd);
			shm_unlink(h->shm_name);
			return -1;
		}
		return fd;
	}
	return -1;
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

/* The target stops recording into the stream, and its name goes: at
 * shutdown, or done by the keeper when the controller dies. */
void pt_remote_abandon(struct pt_handle *h)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint64_t token = hdr ? atomic_load_explicit(&hdr->pcb_token, memory_order_acquire) : 0;
	if (token && h->target.pcb && token != h->target.token) {
		struct pt_pcbref ref = {.slot = -1};
		if (pt_pcb_attach(h->target_pid, h->target_start, &ref) == 0 && ref.token == token) {
			ref.slot = atomic_load_explicit(&hdr->pcb_slot, memory_order_relaxed);
			if (ref.slot >= 0 && ref.slot < TRACE_SYS_MAX) {
				ref.gen = atomic_load_explicit(&ref.pcb->slots[ref.slot].gen,
				                               memory_order_relaxed);
				pt_pcb_withdraw(&ref);
			}
		}
		pt_pcb_detach(&ref);
	}
	pt_pcb_withdraw(&h->target);
	if (h->shm_name[0])
		shm_unlink(h->shm_name);
	h->shm_name[0] = '\0';
}

static void remote_cleanup(struct pt_handle *h)
{
	pt_remote_abandon(h);
	pt_pcb_detach(&h->target);
	h->remote = 0;
	h->named = 0;
}

static int create_stream(pid_t pid, const struct pt_attr *a, int logfd, int seekable,
                         trace_id_t *trid)
{
	struct pt_handle *h = pt_handle_alloc();
	if (!h)
		return EAGAIN;
	int err = 0, fd = -1;
	h->kind = PT_H_ACTIVE;
	h->shm_name[0] = '\0';
	h->target.pcb = NULL;
	h->target.slot = -1;
	h->remote = !(pid == 0 || pid == pt_proc.pid);
	/* Streams for another process, and streams whose children are traced
	 * too, are named: processes that are not forks of the controller
	 * find them by name. */
	h->named = h->remote || a->inheritance == POSIX_TRACE_INHERITED;
	if (h->remote) {
		err = reach_target(pid, h);
	} else {
		h->target_pid = pt_proc.pid;
		h->target_start = pt_proc.pcb->starttime;
	}
	if (!err && h->named && (fd = open_named_stream(h)) < 0)
		err = errno == EMFILE || errno == ENFILE ? EAGAIN : ENOMEM;
	if (!err)
		err = pt_stream_map_create(a, h->target_pid, fd, &h->map);
	else if (fd >= 0)
		close(fd);
	if (!err) {
		struct pt_stream_hdr *hdr = pt_hdr(&h->map);
		hdr->target_start = h->target_start;
		hdr->controller_pid = pt_proc.pid;
		hdr->controller_start = pt_proc.pcb->starttime;
		hdr->offered_token = h->remote ? (h->target.pcb ? h->target.token : 0)
		                               : pt_proc.pcb->token;
		/* The target is the first member: its children are traced even
		 * before it records its own first event. */
		if (a->inheritance == POSIX_TRACE_INHERITED)
			pt_stream_add_member(&h->map, h->target_pid, h->target_start);
		if ((h->slot = pt_attach(&h->map, !h->remote, h->named ? h->shm_name : NULL)) < 0)
			err = EAGAIN;
	}
	if (!err && h->remote && h->target.pcb) {
		if (h->target.reg)
			pt_reg_to_stream(h->target.reg, &h->map, 1);
		err = pt_pcb_offer(&h->target, h->shm_name);
	}
	h->has_log = logfd >= 0;
	if (!err && (logfd >= 0 || h->named))
		err = pt_keeper_start(h, logfd, seekable);
	if (err) {
		if (h->slot >= 0)
			pt_detach(h->slot);
		if (h->named)
			remote_cleanup(h);
		pt_stream_unmap(&h->map);
		pthread_mutex_lock(&h->lock);
		pt_handle_release(h);
		pthread_mutex_unlock(&h->lock);
		return err;
	}
	*trid = pt_handle_publish(h);
	return 0;
}

/* Arms or disarms the target's fast path.  A target that exec'd (or loaded
 * the library only now) joined the stream from a new control block, which
 * the stream's header names. */
static void target_arm(struct pt_handle *h, int on)
{
	if (!h->remote) {
		pt_arm(h->slot, on);
		return;
	}
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint64_t token = atomic_load_explicit(&hdr->pcb_token, memory_order_acquire);
	if (!h->target.pcb || (token && token != h->target.token)) {
		struct pt_pcbref ref = {.slot = -1};
		if (pt_pcb_attach(h->target_pid, h->target_start, &ref) == 0) {
			pt_pcb_detach(&h->target);
			h->target = ref;
			if (token == ref.token) {
				h->target.slot = atomic_load_explicit(&hdr->pcb_slot, memory_order_relaxed);
				if (h->target.slot < 0 || h->target.slot >= TRACE_SYS_MAX)
					h->target.slot = -1;
				else
					h->target.gen = atomic_load_explicit(
					    &ref.pcb->slots[h->target.slot].gen, memory_order_relaxed);
			} else {
				if (ref.reg)
					pt_reg_to_stream(ref.reg, &h->map, 1);
				pt_pcb_offer(&h->target, h->shm_name);
			}
		}
	}
	pt_pcb_arm(&h->target, on);
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
		target_arm(h, 1);
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
		target_arm(h, 0);
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
	int err = h->has_log ? pt_keeper_command(h, 'F') : EINVAL;
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
	pt_stream_end(hdr);
	target_arm(h, 0);
	pt_wake_readers(hdr);
	while (h->readers > 0)
		pthread_cond_wait(&h->idle, &h->lock);
	pt_detach(h->slot); /* no writer of this process is inside after this */
	int err = h->keeper ? pt_keeper_finish(h) : 0;
	if (h->named)
		remote_cleanup(h);
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
	h->lost_seen = pt_stream_lost(&h->map);
	atomic_store_explicit(&hdr->full, 0, memory_order_relaxed);
	h->npending = 0;
	h->resume_pending = 0;
	int err = h->has_log ? pt_keeper_command(h, 'C') : 0;
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

/* A target that has not loaded the library has no registry yet: names go
 * into the stream, which the target adopts when it joins it. */
static int register_in_stream(const struct pt_map *m, const char *name, trace_event_id_t *id)
{
	char cur[PT_NAME_SIZE];
	if (!name || !id)
		return EINVAL;
	if (strnlen(name, TRACE_EVENT_NAME_MAX + 1) > TRACE_EVENT_NAME_MAX)
		return ENAMETOOLONG;
	for (trace_event_id_t cand = PT_USER_FIRST + 1; cand < PT_NEVENT_IDS; cand++) {
		if (pt_stream_get_name(m, cand, cur) != 0) {
			pt_stream_set_name(m, cand, name);
			*id = cand;
			return 0;
		}
		if (strcmp(cur, name) == 0) {
			*id = cand;
			return 0;
		}
	}
	*id = POSIX_TRACE_UNNAMED_USEREVENT;
	return 0;
}

int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict name,
                                  trace_event_id_t *restrict id)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	/* One registry per traced process: the ids agree with the target's
	 * own posix_trace_eventid_open(). */
	int err;
	if (!h->remote) {
		err = pt_register_name(name, id);
	} else if (h->target.reg) {
		err = pt_register_name_in(h->target.reg, name, id);
		if (!err)
			pt_reg_to_stream(h->target.reg, &h->map, 1);
	} else {
		err = register_in_stream(&h->map, name, id);
	}
	pt_handle_put(h);
	return err;
}
