/* SPDX-License-Identifier: MIT */
/*
 * Trace stream identifiers (handle.h).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "handle.h"
#include "logfile.h"

static struct pt_handle handles[TRACE_SYS_MAX];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handles_once = PTHREAD_ONCE_INIT;
static _Atomic int handles_ready;

#define TRID_SLOT_BITS 8
#define TRID_SLOT_MASK 0xffu
_Static_assert(TRACE_SYS_MAX <= TRID_SLOT_MASK, "a slot fits its bits of trace_id_t");

static void handle_reset(struct pt_handle *h)
{
	h->map.fd = -1;
	h->keeper_sock = -1;
	h->keeper_pidfd = -1;
	h->log_fd = -1;
	h->target.pidfd = h->target.tx = -1;
	h->target.slot = -1;
	h->slot = -1;
}

static void handles_init(void)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		pthread_mutex_init(&handles[i].lock, NULL);
		pthread_cond_init(&handles[i].idle, NULL);
		handles[i].gen = 1;
		handle_reset(&handles[i]);
	}
}

static void handles_ensure(void)
{
	if (PT_LIKELY(atomic_load_explicit(&handles_ready, memory_order_acquire)))
		return;
	pt_init();
	pthread_once(&handles_once, handles_init);
	atomic_store_explicit(&handles_ready, 1, memory_order_release);
}

/* Returns the handle locked, or NULL for an identifier that is not (or no
 * longer, or not in this process) a trace stream of one of the kinds. */
struct pt_handle *pt_handle_get(trace_id_t trid, int kinds)
{
	handles_ensure();
	trace_id_t idx = (trid & TRID_SLOT_MASK) - 1;
	if (idx >= TRACE_SYS_MAX || (trid >> TRID_SLOT_BITS) > UINT32_MAX)
		return NULL;
	struct pt_handle *h = &handles[idx];
	pthread_mutex_lock(&h->lock);
	if (!h->in_use || h->dying || h->gen != (uint32_t)(trid >> TRID_SLOT_BITS) ||
	    !(h->kind & kinds)) {
		pthread_mutex_unlock(&h->lock);
		return NULL;
	}
	return h;
}

void pt_handle_put(struct pt_handle *h) { pthread_mutex_unlock(&h->lock); }

/* A free handle, reserved but invisible until pt_handle_publish(). */
struct pt_handle *pt_handle_alloc(void)
{
	handles_ensure();
	pthread_mutex_lock(&handles_lock);
	struct pt_handle *found = NULL;
	for (int i = 0; i < TRACE_SYS_MAX && !found; i++) {
		struct pt_handle *h = &handles[i];
		pthread_mutex_lock(&h->lock);
		if (!h->in_use) {
			found = h;
			memset(&h->kind, 0, sizeof *h - offsetof(struct pt_handle, kind));
			handle_reset(h);
			h->in_use = 1;
			h->dying = 1;
		}
		pthread_mutex_unlock(&h->lock);
	}
	pthread_mutex_unlock(&handles_lock);
	return found;
}

trace_id_t pt_handle_publish(struct pt_handle *h)
{
	pthread_mutex_lock(&h->lock);
	h->dying = 0;
	trace_id_t trid = ((trace_id_t)h->gen << TRID_SLOT_BITS) | (trace_id_t)(h - handles + 1);
	pthread_mutex_unlock(&h->lock);
	return trid;
}

/* Caller holds h->lock. */
void pt_handle_release(struct pt_handle *h)
{
	h->in_use = 0;
	h->dying = 0;
	h->gen++;
}

/* A fork child keeps recording into a stream traced with inheritance whose
 * controller is its parent: the mapping now belongs to the child's process
 * side, not to the (invalid) trace stream identifier. */
void pt_handle_forget_map(const struct pt_map *m)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		if (&handles[i].map == m) {
			handles[i].map.base = NULL;
			handles[i].map.fd = -1;
		}
}

/* The parent's identifiers are not valid in a fork child; what they hold
 * goes, and the keeper's command socket above all, so that the keeper sees
 * its controller go when the controller does. */
void pt_handles_after_fork(void)
{
	pthread_mutex_init(&handles_lock, NULL);
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_handle *h = &handles[i];
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->idle, NULL);
		if (h->in_use && h->kind == PT_H_ACTIVE) {
			pt_stream_unmap(&h->map);
			pt_reader_free(&h->rd);
			pt_remote_close(&h->target);
			pt_ctl_destroy(h->ctl);
			h->ctl = NULL;
			if (h->keeper_sock >= 0)
				close(h->keeper_sock);
			if (h->keeper_pidfd >= 0)
				close(h->keeper_pidfd);
			if (h->log_fd >= 0)
				close(h->log_fd);
		}
		if (h->in_use && h->kind == PT_H_LOG)
			pt_logfile_free(h);
		if (h->in_use)
			handle_reset(h);
		h->in_use = h->dying = h->readers = 0;
		h->gen++;
	}
}
