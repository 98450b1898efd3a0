/* SPDX-License-Identifier: MIT */
/*
 * The controller's and keeper's own events (ctl.h).  Writers take the
 * robust process-shared mutex; the one reader takes entries without it:
 * head is published with release after an entry is written; the reader
 * copies the entry at tail, then moves tail on with a compare-and-swap,
 * which fails if a writer of a full POSIX_TRACE_LOOP stream dropped that
 * entry meanwhile (the copy is then discarded).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include "clock.h"
#include "ctl.h"
#include "process.h"
#include "stream.h"

struct pt_ctl *pt_ctl_create(int loop)
{
	struct pt_ctl *c = mmap(NULL, sizeof *c, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                        -1, 0);
	if (c == MAP_FAILED)
		return NULL;
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&c->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	c->loop = loop;
	return c;
}

void pt_ctl_destroy(struct pt_ctl *c)
{
	if (c)
		munmap(c, sizeof *c);
}

static void lock(struct pt_ctl *c)
{
	if (pthread_mutex_lock(&c->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&c->lock); /* a keeper died holding it */
}

struct pt_caller pt_caller_here(uintptr_t pc)
{
	struct pt_caller who = {pt_proc_pid(), pt_gettid(), (uint64_t)pthread_self(), pc};
	return who;
}

static void put_locked(struct pt_ctl *c, uint64_t raw, trace_event_id_t id, const void *data,
                       uint32_t len, const struct pt_caller *who)
{
	uint32_t head = atomic_load_explicit(&c->head, memory_order_relaxed);
	/* Pairs with the release CAS of tail in pt_ctl_consume and the release
	 * store in pt_ctl_discard_all: the reader's copy is done before reuse. */
	uint32_t tail = atomic_load_explicit(&c->tail, memory_order_acquire);
	if (head - tail >= PT_CTLQ_LEN) {
		/* Full: LOOP drops the oldest, unless the reader just took it
		 * (the CAS fails: there is room now); the other policies drop
		 * this one.  Either way the loss is counted (pt_handle_lost). */
		if (!c->loop) {
			atomic_fetch_add_explicit(&c->lost, 1, memory_order_relaxed);
			return;
		}
		/* Acquire on failure: as the load above.  Release: pairs with
		 * the acquire load of tail in pt_ctl_peek, so its head is as new. */
		if (atomic_compare_exchange_strong_explicit(&c->tail, &tail, tail + 1,
		                                            memory_order_acq_rel, memory_order_acquire))
			atomic_fetch_add_explicit(&c->lost, 1, memory_order_relaxed);
	}
	struct pt_ctl_event *e = &c->q[head % PT_CTLQ_LEN];
	memset(e, 0, offsetof(struct pt_ctl_event, data));
	e->raw = raw;
	e->id = id;
	e->len = len > PT_CTL_DATA_MAX ? (uint32_t)PT_CTL_DATA_MAX : len;
	if (who) {
		e->pid = who->pid;
		e->tid = who->tid;
		e->thread = who->thread;
		e->pc = who->pc;
	}
	if (e->len)
		memcpy(e->data, data, e->len);
	/* Pairs with the acquire load of head in pt_ctl_peek. */
	atomic_store_explicit(&c->head, head + 1, memory_order_release);
}

void pt_ctl_put(struct pt_ctl *c, uint32_t clock, trace_event_id_t id, const void *data,
                uint32_t len, const struct pt_caller *who)
{
	/* The time is taken under the lock, so that the queue is in time order. */
	lock(c);
	put_locked(c, pt_clock_raw(clock), id, data, len, who);
	pthread_mutex_unlock(&c->lock);
}

void pt_ctl_post(struct pt_ctl *c, const struct pt_map *m, trace_event_id_t id, const void *data,
                 uint32_t len, const struct pt_caller *who)
{
	pt_ctl_put(c, m->clock, id, data, len, who);
	/* Unconditionally: these events are few, and a reader that has just
	 * announced its sleep must not miss one (no pairing with waiters to
	 * get right); its acquire of futex_seq sees the entry's head. */
	pt_wake_readers(pt_hdr(m));
}

#if defined(__SANITIZE_THREAD__)
__attribute__((no_sanitize("thread")))
#endif
static void copy_entry(struct pt_ctl_event *dst, const struct pt_ctl_event *src)
{
	volatile const unsigned char *s = (const void *)src;
	unsigned char *d = (void *)dst;
	for (size_t i = 0; i < sizeof *dst; i++)
		d[i] = s[i];
}

int pt_ctl_peek(struct pt_ctl *c, struct pt_ctl_event *e, uint32_t *pos)
{
	/* tail pairs with the LOOP drop's CAS in put_locked (head, loaded next, is
	 * at least as new); head with the release store in put_locked (the entry). */
	uint32_t tail = atomic_load_explicit(&c->tail, memory_order_acquire);
	if (atomic_load_explicit(&c->head, memory_order_acquire) == tail)
		return 0;
	copy_entry(e, &c->q[tail % PT_CTLQ_LEN]);
	*pos = tail;
	return 1;
}

/* Release: the copy of the entry first; pairs with the acquire load and
 * CAS of tail in put_locked. */
int pt_ctl_consume(struct pt_ctl *c, uint32_t pos)
{
	return atomic_compare_exchange_strong_explicit(&c->tail, &pos, pos + 1, memory_order_acq_rel,
	                                               memory_order_relaxed);
}

void pt_ctl_discard_all(struct pt_ctl *c)
{
	/* head: no entry is read, relaxed would do; the release of tail pairs
	 * with the acquire load of tail in put_locked. */
	atomic_store_explicit(&c->tail, atomic_load_explicit(&c->head, memory_order_acquire),
	                      memory_order_release);
}

uint64_t pt_claims_settle(struct pt_ctl *c, const struct pt_map *m, uint64_t logged)
{
	struct pt_claims *cl = &c->claims;
	uint64_t taken = atomic_load_explicit(&cl->taken, memory_order_relaxed);
	uint64_t pending = atomic_load_explicit(&cl->events, memory_order_relaxed);
	uint32_t lane_untrusted = atomic_load_explicit(&cl->lane, memory_order_relaxed);
	const struct pt_lane *l = pt_lane_get(m, lane_untrusted);
	/* A claim begun and not counted: made if the lane's head moved from
	 * where it was (a LOOP writer taking the chunk meanwhile also moves
	 * it: then its events may be counted twice, never not at all). */
	if (pending && taken == atomic_load_explicit(&cl->base, memory_order_relaxed) && l &&
	    pt_stream_backed(m, m->lanes_off + (uint64_t)lane_untrusted * sizeof *l, sizeof *l) &&
	    atomic_load_explicit(&l->head, memory_order_relaxed) !=
	        atomic_load_explicit(&cl->head, memory_order_relaxed))
		taken += pending;
	uint64_t lost = taken > logged ? taken - logged : 0;
	if (lost)
		atomic_fetch_add_explicit(&c->lost, lost, memory_order_relaxed);
	atomic_store_explicit(&cl->events, 0, memory_order_relaxed);
	atomic_store_explicit(&cl->taken, logged, memory_order_relaxed);
	return lost;
}
