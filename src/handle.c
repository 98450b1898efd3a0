/* SPDX-License-Identifier: MIT */
/*
 * Trace stream identifiers (handle.h).
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>
#include "ctl.h"
#include "handle.h"
#include "process.h"
#include "rdv_serve.h"
#include "reader.h"
#include "remote.h"
#include "stream.h"
#include "thread.h"
#include "writer.h"

struct pt_handle pt_handles[TRACE_SYS_MAX];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handles_once = PTHREAD_ONCE_INIT;
static _Atomic int handles_ready;

#define TRID_SLOT_BITS 8
#define TRID_SLOT_MASK PT_TRID_SLOT_MASK

static void handle_reset(struct pt_handle *h)
{
	h->src.map.fd = -1;
	h->keeper_sock = -1;
	h->keeper_pidfd = -1;
	h->log_fd = -1;
	h->rot.dir = -1;
	pt_rdv_init(&h->rdv);
	h->target.pidfd = h->target.tx = h->target.reg_fd = -1;
	h->target.slot = -1;
	h->src.slot = -1;
}

static void handles_init(void)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		pthread_mutex_init(&pt_handles[i].lock, NULL);
		pthread_cond_init(&pt_handles[i].idle, NULL);
		pt_handles[i].gen = 1;
		handle_reset(&pt_handles[i]);
	}
}

static void handles_ensure(void)
{
	/* Pairs with the release store below: handles_init's work is seen. */
	if (PT_LIKELY(atomic_load_explicit(&handles_ready, memory_order_acquire)))
		return;
	pthread_once(&handles_once, handles_init);
	/* Pairs with the acquire loads of handles_ready above, in
	 * pt_handles_keeper_progress and in pt_handles_keepers. */
	atomic_store_explicit(&handles_ready, 1, memory_order_release);
}

/* ---- biased handles ----------------------------------------------------
 * pt_handle_enter_biased and pt_handle_leave_biased are inline (handle.h);
 * a revoker clears the bias, then issues membarrier(2) and waits for the
 * owner to be seen outside. */

void pt_handle_bias(struct pt_handle *h, trace_id_t trid)
{
	struct pt_thread *t = pt_thread_self();
	if (!t || h->bias_revoked || !pt_proc.use_membarrier ||
	    atomic_load_explicit(&h->bias, memory_order_relaxed))
		return;
	atomic_store_explicit(&h->bias_trid, trid, memory_order_relaxed);
	/* Pairs with the acquire load of bias in pt_handle_enter_biased: what was
	 * done under the lock comes first. */
	atomic_store_explicit(&h->bias, t, memory_order_release);
}

/* Caller holds h->lock.  Afterwards the former owner is not inside. */
static void revoke_bias(struct pt_handle *h, int for_good)
{
	struct pt_thread *owner = atomic_load_explicit(&h->bias, memory_order_relaxed);
	if (!owner)
		return;
	atomic_store_explicit(&h->bias, NULL, memory_order_relaxed);
	atomic_store_explicit(&h->bias_trid, 0, memory_order_relaxed);
	h->bias_revoked |= for_good;
	if (owner == pt_thread_peek())
		return;
	/* Cleared bias, then rd_seq: pairs with the compiler barrier after the odd
	 * store of rd_seq in pt_handle_enter_biased. */
	if (pt_fence_all(0) != 0 && pt_proc.use_membarrier)
		pt_fence_all_slowly();
	pthread_mutex_lock(&pt_proc.lock);
	for (struct pt_thread *t = pt_proc.threads; t; t = t->next) {
		if (t != owner)
			continue;
		/* Pairs with the release stores of rd_seq in pt_handle_leave_biased
		 * and pt_handle_enter_biased. */
		uint64_t seq = atomic_load_explicit(&t->rd_seq, memory_order_acquire);
		while ((seq & 1) && atomic_load_explicit(&t->rd_seq, memory_order_acquire) == seq)
			sched_yield();
	}
	pthread_mutex_unlock(&pt_proc.lock);
}

/* Takes h->lock, and the bias from any other thread, for good: a second
 * thread in the handle means its calls must be serialised by the lock. */
void pt_handle_relock(struct pt_handle *h)
{
	pthread_mutex_lock(&h->lock);
	struct pt_thread *owner = atomic_load_explicit(&h->bias, memory_order_relaxed);
	if (owner && owner != pt_thread_peek())
		revoke_bias(h, 1);
}

/* Returns the handle locked, or NULL for an identifier that is not (or no
 * longer, or not in this process) a trace stream of one of the kinds. */
struct pt_handle *pt_handle_get(trace_id_t trid, int kinds)
{
	handles_ensure();
	trace_id_t idx = (trid & TRID_SLOT_MASK) - 1;
	if (idx >= TRACE_SYS_MAX || (trid >> TRID_SLOT_BITS) > UINT32_MAX)
		return NULL;
	struct pt_handle *h = &pt_handles[idx];
	pt_handle_relock(h);
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
		struct pt_handle *h = &pt_handles[i];
		pthread_mutex_lock(&h->lock);
		if (!h->in_use) {
			found = h;
			memset(&h->kind, 0, sizeof *h - offsetof(struct pt_handle, kind));
			h->bias_revoked = 0;
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
	trace_id_t trid = ((trace_id_t)h->gen << TRID_SLOT_BITS) | (trace_id_t)(h - pt_handles + 1);
	pthread_mutex_unlock(&h->lock);
	return trid;
}

/* Caller holds h->lock. */
void pt_handle_release(struct pt_handle *h)
{
	revoke_bias(h, 0);
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
		if (&pt_handles[i].src.map == m) {
			pt_handles[i].src.map.base = NULL;
			pt_handles[i].src.map.fd = -1;
		}
}

/* The parent's identifiers are not valid in a fork child; what they hold
 * goes, and the keeper's command socket above all, so that the keeper sees
 * its controller go when the controller does. */
void pt_handle_let_go(struct pt_handle *h, int fork_child)
{
	pt_remote_close(&h->target);
	pt_stream_unmap(&h->src.map);
	pt_reader_free(&h->src.rd);
	pt_ctl_destroy(h->src.ctl);
	h->src.ctl = NULL;
	if (h->log_fd >= 0)
		close(h->log_fd);
	h->log_fd = -1;
	if (h->rot.dir >= 0)
		close(h->rot.dir);
	h->rot.dir = -1;
	/* A fork child's copies of the keeper's ends; the directory is the
	 * parent's. */
	if (fork_child && h->keeper_sock >= 0)
		close(h->keeper_sock);
	if (fork_child && h->keeper_pidfd >= 0)
		close(h->keeper_pidfd);
	pt_rdv_close(&h->rdv, !fork_child);
}

void pt_handles_after_fork(void)
{
	pthread_mutex_init(&handles_lock, NULL);
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_handle *h = &pt_handles[i];
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->idle, NULL);
		if (h->in_use && h->kind == PT_H_ACTIVE)
			pt_handle_let_go(h, 1);
		if (h->in_use && h->kind == PT_H_LOG && h->drop_log)
			h->drop_log(h);
		if (h->in_use)
			handle_reset(h);
		atomic_store_explicit(&h->bias, NULL, memory_order_relaxed);
		atomic_store_explicit(&h->bias_trid, 0, memory_order_relaxed);
		h->in_use = h->dying = h->readers = 0;
		h->gen++;
	}
}

/* The sum of the progress of every keeper (ctl.h, keeper_progress), read
 * without the handles' locks, as pt_handles_keepers. */
uint64_t pt_handles_keeper_progress(void)
{
	uint64_t sum = 0;
	if (!atomic_load_explicit(&handles_ready, memory_order_acquire))
		return 0; /* pairs with the release store in handles_ensure */
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		volatile struct pt_handle *h = &pt_handles[i];
		struct pt_ctl *c = h->src.ctl;
		if (h->in_use && h->kind == PT_H_ACTIVE && h->keeper_pidfd >= 0 && c)
			sum += atomic_load_explicit(&c->keeper_progress, memory_order_relaxed);
	}
	return sum;
}

/* Without the handles' locks: a thread may hold one until exit.  A handle
 * being shut down meanwhile may give a descriptor closed under us; poll
 * then reports POLLNVAL, which ends the wait for it. */
int pt_handles_keepers(struct pollfd *p, int max, uint64_t *room)
{
	int n = 0;
	*room = 0;
	if (!atomic_load_explicit(&handles_ready, memory_order_acquire))
		return 0; /* pairs with the release store in handles_ensure */
	for (int i = 0; i < TRACE_SYS_MAX && n < max; i++) {
		volatile struct pt_handle *h = &pt_handles[i];
		int sock = h->keeper_sock, pidfd = h->keeper_pidfd;
		if (!h->in_use || h->kind != PT_H_ACTIVE || sock < 0 || pidfd < 0)
			continue;
		/* This process's writers stop first (the stream is stopped at
		 * exit, as posix_trace_stop would), so that the keeper's last
		 * drain has an end while other threads still post. */
		if (h->src.slot >= 0)
			pt_arm(h->src.slot, 0);
		shutdown(sock, SHUT_WR);
		p[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
		*room += h->src.map.event_room;
	}
	return n;
}
