/* SPDX-License-Identifier: MIT */
/*
 * The controller: creating a stream (for this process or another, with or
 * without a log), start, stop, filter, clear, flush and shutdown.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "attr.h"
#include "clock.h"
#include "ctl.h"
#include "handle.h"
#include "keepctl.h"
#include "keeper.h"
#include "lifecycle.h"
#include "process.h"
#include "rdv_serve.h"
#include "reader.h"
#include "registry.h"
#include "remote.h"
#include "slots.h"
#include "stream.h"

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

/* Another process (found and allowed by pt_remote_open): if it has loaded
 * the library it gets the stream now, else its keeper offers it when it
 * does. */
/* A child forked a moment ago holds its parent's block until its fork
 * handler has made its own (the parent may call create before the child
 * first runs): create waits for that block, a millisecond at a time and
 * at most FORK_HANDLER_WAIT_NS, rather than leave what the child posts
 * meanwhile untraced until the keeper's next look (half a second). */
#define FORK_HANDLER_WAIT_NS 1000000000ull
static int hand_over(struct pt_handle *h)
{
	uint64_t until = pt_mono_ns() + FORK_HANDLER_WAIT_NS;
	int err;
	while ((err = pt_remote_hand_over(&h->target, &h->src.map, 0)) == ENOENT &&
	       pt_remote_fork_pending(&h->target) && pt_mono_ns() < until)
		nanosleep(&(struct timespec){0, 1000000}, NULL);
	return err == ENOENT ? 0 : err;
}

static void destroy(struct pt_handle *h)
{
	if (h->src.slot >= 0)
		pt_detach(h->src.slot);
	h->src.slot = -1;
	pt_handle_let_go(h, 0);
}

static int create_stream(pid_t pid, const struct pt_attr *a, int logfd,
                         const struct pt_rotation *rot, trace_id_t *trid)
{
	struct pt_handle *h = pt_handle_alloc();
	if (!h) {
		if (rot->dir >= 0)
			close(rot->dir);
		return EAGAIN;
	}
	h->rot = *rot;
	h->kind = PT_H_ACTIVE;
	h->remote = !(pid == 0 || pid == pt_proc.pid);
	int err = h->remote ? pt_remote_open(pid, &h->target) : 0;
	if (!err)
		err = pt_stream_create(a, &h->src.map);
	if (!err) {
		h->attr = pt_hdr(&h->src.map)->attr;
		h->attr.magic = PT_ATTR_MAGIC;
	}
	if (!err)
		err = pt_reader_init(&h->src.rd, &h->src.map);
	if (!err && h->src.map.clock == PT_CLOCK_TSC && h->src.rd.conv.ticks_1ms) {
		/* posix_trace_attr_getclockres: one tick, rounded up to a ns. */
		h->attr.clockres_sec = 0;
		h->attr.clockres_nsec = (int64_t)((1000000 + h->src.rd.conv.ticks_1ms - 1) / h->src.rd.conv.ticks_1ms);
		pt_hdr(&h->src.map)->attr.clockres_nsec = h->attr.clockres_nsec;
	}
	if (!err && !(h->src.ctl = pt_ctl_create(a->stream_policy == POSIX_TRACE_LOOP)))
		err = ENOMEM;
	if (!err && h->remote)
		err = hand_over(h);
	if (!err && !h->remote && (h->src.slot = pt_attach_local(&h->src.map)) < 0)
		err = EAGAIN;
	/* Children this process starts by exec find a stream traced with
	 * inheritance through a token of it (adopt.c). */
	if (!err && !h->remote && h->src.map.inherited) {
		pthread_mutex_lock(&pt_proc.lock);
		pt_slot_keep_across_exec(h->src.slot, h->src.map.fd);
		pthread_mutex_unlock(&pt_proc.lock);
	}
	h->has_log = logfd >= 0 || rot->dir >= 0;
	/* Without a rendezvous the stream still works: children that keep
	 * their descriptors follow it. */
	if (!err && h->src.map.inherited && pt_rdv_open(&h->rdv) == 0)
		pt_rdv_follow_owner(&h->rdv, h->src.map.fd);
	if (!err && (h->has_log || h->remote || h->src.map.inherited))
		err = pt_keeper_start(h, logfd);
	if (err) {
		pthread_mutex_lock(&h->lock);
		destroy(h);
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
	return create_stream(pid, &a, -1, &(struct pt_rotation){.dir = -1}, trid);
}

int posix_trace_create_withlog(pid_t pid, const trace_attr_t *restrict attr, int fd,
                               trace_id_t *restrict trid)
{
	struct pt_attr a;
	pt_init();
	if (!trid || read_attr(attr, &a))
		return EINVAL;
	if (!a.stream_policy_set)
		a.stream_policy = POSIX_TRACE_FLUSH;
	if (fcntl(fd, F_GETFD) < 0)
		return EBADF;
	return create_stream(pid, &a, fd, &(struct pt_rotation){.dir = -1}, trid);
}

/* A rotated log's files are APPEND logs (rotate.h): another log policy
 * set in attr contradicts it. */
static int read_logdir(const struct posixtrace_logdir *d, struct pt_attr *a, struct pt_rotation *rot)
{
	struct stat st;
	if (!d || d->posixtrace_reserved[0] || d->posixtrace_reserved[1])
		return EINVAL;
	if (a->log_policy_set && a->log_policy != POSIX_TRACE_APPEND)
		return EINVAL;
	if (d->posixtrace_file_size < PT_ROT_MIN_SIZE || d->posixtrace_file_size > PT_ROT_MAX_SIZE ||
	    (d->posixtrace_mode & ~(mode_t)0666) || !(d->posixtrace_mode & S_IWUSR))
		return EINVAL;
	if (fstat(d->posixtrace_dirfd, &st) != 0)
		return EBADF;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	a->log_policy = POSIX_TRACE_APPEND;
	rot->mode = d->posixtrace_mode;
	rot->size = d->posixtrace_file_size;
	rot->count = d->posixtrace_max_files;
	rot->seconds = d->posixtrace_file_seconds;
	rot->dir = fcntl(d->posixtrace_dirfd, F_DUPFD_CLOEXEC, 0);
	return rot->dir < 0 ? EMFILE : 0;
}

int posixtrace_create_withlogdir(pid_t pid, const trace_attr_t *attr,
                                 const struct posixtrace_logdir *dir, trace_id_t *trid)
{
	struct pt_attr a;
	struct pt_rotation rot = {.dir = -1};
	pt_init();
	if (!trid || read_attr(attr, &a))
		return EINVAL;
	if (!a.stream_policy_set)
		a.stream_policy = POSIX_TRACE_FLUSH;
	int err = read_logdir(dir, &a, &rot);
	return err ? err : create_stream(pid, &a, -1, &rot, trid);
}

/* The controller's own copy (ctl.h): the header's may have been written by
 * a traced process. */
static void filter_snapshot(const struct pt_handle *h, trace_event_set_t *set)
{
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		set->__bits[i] = atomic_load_explicit(&h->src.ctl->filter[i], memory_order_relaxed);
}

/* Both copies: the controller's, and the header's that writers test. */
static void filter_store(struct pt_handle *h, unsigned i, uint64_t w)
{
	atomic_store_explicit(&h->src.ctl->filter[i], w, memory_order_relaxed);
	pt_watch_store(pt_hdr(&h->src.map), i, w,
	               atomic_load_explicit(&h->src.ctl->trigger[i], memory_order_relaxed));
}

/* A system event caused by the caller's call (XSH 2.11.1, posix_trace_event_info Structure: it carries the
 * process and the address of that call), unless the filter excludes it; a
 * reader asleep in another thread is woken for it. */
static void record(struct pt_handle *h, trace_event_id_t id, const void *data, uint32_t len,
                   const struct pt_caller *who)
{
	if (!pt_handle_filtered(h, id))
		pt_ctl_post(h->src.ctl, &h->src.map, id, data, len, who);
}

static void target_arm(struct pt_handle *h, int on)
{
	if (h->remote)
		pt_remote_arm(&h->target, on);
	else
		pt_arm(h->src.slot, on);
}

static void start_locked(struct pt_handle *h, const struct pt_caller *who)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	/* The state's value only (as in stop_locked): relaxed would do. */
	if (atomic_load_explicit(&hdr->state, memory_order_acquire) == PT_ST_SUSPENDED) {
		trace_event_set_t filter;
		filter_snapshot(h, &filter);
		pt_conv_sample(&h->src.rd.conv);
		record(h, POSIX_TRACE_START, &filter, sizeof filter, who);
		/* Publishes nothing (writers load state relaxed and see it by the armed
		 * bit's release in target_arm): relaxed would do. */
		atomic_store_explicit(&hdr->state, PT_ST_RUNNING, memory_order_release);
		h->running = 1;
		target_arm(h, 1);
	}
}

int posix_trace_start(trace_id_t trid)
{
	struct pt_caller who = pt_caller_here((uintptr_t)__builtin_return_address(0));
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	start_locked(h, &who);
	pt_handle_put(h);
	return 0;
}

static void stop_locked(struct pt_handle *h, const struct pt_caller *who)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	uint32_t running = PT_ST_RUNNING;
	/* The state's value only, here and in the CASes of posix_trace_clear
	 * (below), restart_full_stream (reader.c) and keeper.c: relaxed would do. */
	if (atomic_compare_exchange_strong_explicit(&hdr->state, &running, PT_ST_SUSPENDED,
	                                            memory_order_acq_rel, memory_order_acquire)) {
		int manual = 0;
		target_arm(h, 0);
		record(h, POSIX_TRACE_STOP, &manual, sizeof manual, who);
		/* Writers waiting for room give up at once: a shutdown's grace
		 * period does not wait for their timeout. */
		pt_wake_room_waiters(hdr);
	}
	h->running = 0;
}

int posix_trace_stop(trace_id_t trid)
{
	struct pt_caller who = pt_caller_here((uintptr_t)__builtin_return_address(0));
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	stop_locked(h, &who);
	pt_handle_put(h);
	return 0;
}

int posix_trace_flush(trace_id_t trid)
{
	struct pt_caller who = pt_caller_here((uintptr_t)__builtin_return_address(0));
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	int err = h->has_log ? pt_keeper_command(h, PT_CMD_FLUSH, &who) : EINVAL;
	pt_handle_put(h);
	return err;
}

/* Also the end of a stream whose controller exits: its keeper does it. */
int posix_trace_shutdown(trace_id_t trid)
{
	struct pt_caller who = pt_caller_here((uintptr_t)__builtin_return_address(0));
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	h->dying = 1;
	/* "As if posix_trace_stop() had been invoked": a running stream's
	 * last event is its STOP. */
	stop_locked(h, &who);
	pt_stream_end(hdr);
	if (h->remote)
		pt_remote_withdraw(&h->target);
	pt_wake_readers(hdr);
	while (h->readers > 0)
		pthread_cond_wait(&h->idle, &h->lock);
	if (h->src.slot >= 0)
		pt_detach(h->src.slot); /* no writer of this process is inside after this */
	h->src.slot = -1;
	int err = h->keeper ? pt_keeper_finish(h, &who) : 0;
	destroy(h);
	pt_handle_release(h);
	pthread_mutex_unlock(&h->lock);
	return err;
}

int posix_trace_clear(trace_id_t trid)
{
	struct pt_caller who = pt_caller_here((uintptr_t)__builtin_return_address(0));
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	uint32_t full = PT_ST_FULL;
	/* The state's value only, as in stop_locked.  Suspended while its
	 * events go, so that no reader or keeper restarts it with an
	 * OVERFLOW and a STOP for events that are lost. */
	int was_full = atomic_compare_exchange_strong_explicit(&hdr->state, &full, PT_ST_SUSPENDED,
	                                                       memory_order_acq_rel,
	                                                       memory_order_relaxed);
	/* The keeper reads a stream with a log: it drops what is there. */
	if (h->has_log)
		pt_keeper_command(h, PT_CMD_CLEAR, &who);
	else
		pt_discard_all(&h->src);
	/* "As if returning from posix_trace_create()": the filter is empty
	 * again; names and running/suspended status are kept. */
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		filter_store(h, i, 0);
	atomic_store_explicit(&hdr->ovf_count, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->ovf_ts, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&hdr->overrun, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->full, 0, memory_order_relaxed);
	h->lost_seen = pt_handle_lost(h);
	/* A stream stopped because it was full is empty now, and the trace
	 * system restarts a full stream once it is empty, its START first
	 * (posix_trace_attr_getstreamfullpolicy, POSIX_TRACE_UNTIL_FULL;
	 * FLUSH is the same): "remains suspended" is for a stream stopped
	 * by posix_trace_stop, which a full one was not. */
	if (was_full)
		start_locked(h, &who);
	pt_handle_put(h);
	return 0; /* the page lists EINVAL only: a keeper that died was replaced */
}

int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
	if (!set)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	filter_snapshot(h, set);
	pt_handle_put(h);
	return 0;
}

int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
	struct pt_caller who = pt_caller_here((uintptr_t)__builtin_return_address(0));
	if (!set || (how != POSIX_TRACE_SET_EVENTSET && how != POSIX_TRACE_ADD_EVENTSET &&
	             how != POSIX_TRACE_SUB_EVENTSET))
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	trace_event_set_t change[2]; /* old, new: the data of POSIX_TRACE_FILTER */
	filter_snapshot(h, &change[0]);
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++) {
		uint64_t w = change[0].__bits[i], s = set->__bits[i];
		w = how == POSIX_TRACE_SET_EVENTSET ? s : how == POSIX_TRACE_ADD_EVENTSET ? (w | s) : (w & ~s);
		change[1].__bits[i] = w;
		filter_store(h, i, w);
	}
	/* The state's value only. */
	if (atomic_load_explicit(&hdr->state, memory_order_acquire) == PT_ST_RUNNING)
		record(h, POSIX_TRACE_FILTER, change, sizeof change, &who);
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
		err = pt_register_name_in(NULL, name, id);
	} else if (h->target.reg) {
		err = pt_register_name_in(h->target.reg, name, id);
		if (!err)
			pt_reg_to_stream(h->target.reg, &h->src.map, 1);
	} else {
		err = register_in_stream(&h->src.map, name, id);
	}
	pt_handle_put(h);
	return err;
}
