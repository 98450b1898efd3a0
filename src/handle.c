/*
 * Trace stream identifiers: a small table of handles, each for an active
 * stream (controller) or a pre-recorded one (analyzer of a log).  An
 * identifier carries the slot and a generation, so a stale or made-up
 * identifier, or one inherited by a fork child, is rejected with EINVAL.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"

static struct pt_handle handles[TRACE_SYS_MAX];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handles_once = PTHREAD_ONCE_INIT;

static void handles_init(void)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		pthread_mutex_init(&handles[i].lock, NULL);
		pthread_cond_init(&handles[i].idle, NULL);
		handles[i].gen = 1;
		handles[i].map.fd = -1;
		handles[i].keeper_ctl = -1;
	}
}

/* Returns the handle locked, or NULL for an identifier that is not (or no
 * longer, or not in this process) a trace stream of one of the kinds. */
static _Atomic int handles_ready;

static void handles_ensure(void)
{
	if (PT_LIKELY(atomic_load_explicit(&handles_ready, memory_order_acquire)))
		return;
	pt_init();
	pthread_once(&handles_once, handles_init);
	atomic_store_explicit(&handles_ready, 1, memory_order_release);
}

struct pt_handle *pt_handle_get(trace_id_t trid, int kinds)
{
	handles_ensure();
	trace_id_t idx = (trid & 0xff) - 1;
	if (idx >= TRACE_SYS_MAX || (trid >> 8) > UINT32_MAX)
		return NULL;
	struct pt_handle *h = &handles[idx];
	pthread_mutex_lock(&h->lock);
	if (!h->in_use || h->dying || h->gen != (uint32_t)(trid >> 8) || !(h->kind & kinds)) {
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
			h->in_use = 1;
			h->dying = 1;
			h->readers = 0;
			h->typelist_pos = 0;
			h->resume_pending = 0;
			h->end_reported = 0;
			h->lost_seen = 0;
			h->npending = 0;
			h->log = NULL;
			h->keeper = 0;
			h->keeper_ctl = -1;
			h->has_log = 0;
			h->remote = 0;
			h->named = 0;
			h->slot = -1;
			memset(h->broken, 0, sizeof h->broken);
			for (uint32_t l = 0; l < PT_MAX_LANES; l++)
				h->commit_cache[l].key = UINT64_MAX;
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
	trace_id_t trid = ((trace_id_t)h->gen << 8) | (trace_id_t)(h - handles + 1);
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
 * side, not to the (invalid) trace stream id. */
void pt_handle_forget_map(const struct pt_map *m)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		if (&handles[i].map == m)
			handles[i].map.base = NULL;
}

void pt_handles_after_fork(void)
{
	pthread_mutex_init(&handles_lock, NULL);
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_handle *h = &handles[i];
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->idle, NULL);
		if (h->in_use && h->kind == PT_H_ACTIVE)
			pt_stream_unmap(&h->map);
		/* The keeper sees its controller go when the last copy of this
		 * pipe end closes: a child must not hold one. */
		if (h->in_use && h->keeper_ctl >= 0)
			close(h->keeper_ctl);
		h->keeper_ctl = -1;
		if (h->in_use && h->kind == PT_H_LOG)
			pt_logreader_free(h);
		h->in_use = h->dying = h->readers = 0;
		h->gen++;
	}
}
