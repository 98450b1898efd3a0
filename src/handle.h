/* SPDX-License-Identifier: MIT */
/*
 * Trace stream identifiers (handle.c): a table of handles, each for an
 * active stream (its controller's view) or a pre-recorded one (a log read
 * back).  An identifier carries the slot and a generation, so a stale,
 * made-up or inherited identifier is rejected with EINVAL.
 */
#ifndef PT_HANDLE_H
#define PT_HANDLE_H

#include "reader.h"
#include "remote.h"
#include "rdv_serve.h"
#include "rotate.h"
#include "thread.h"

struct pollfd;

enum { PT_H_ACTIVE = 1, PT_H_LOG = 2 };
struct pt_logfile;

struct pt_thread;

struct pt_handle {
	pthread_mutex_t lock;
	pthread_cond_t idle;
	uint32_t gen;
	/* A log, or an active stream, read by one thread is read without the
	 * lock: the handle is biased to that thread for identifier bias_trid
	 * until another thread takes the lock (pt_handle_get revokes the
	 * bias, once for good). */
	_Atomic(struct pt_thread *) bias;
	_Atomic trace_id_t bias_trid;
	int bias_revoked;
	/* Everything from kind on is reset when the handle is taken. */
	int kind;                  /* PT_H_ACTIVE or PT_H_LOG */
	struct pt_logfile *log;    /* PT_H_LOG: the pre-recorded stream */
	/* PT_H_LOG: frees log (logfile.c's), in a fork child whose identifiers
	 * are no longer valid (pt_handles_after_fork). */
	void (*drop_log)(struct pt_handle *h);
	/* PT_H_ACTIVE: the stream read (map, rd, ctl, and slot: a stream of
	 * this process, its slot; -1) */
	struct pt_source src;
	struct pt_attr attr;       /* as created, in private memory */
	int remote;                /* traces another process */
	int has_log;
	int running;               /* as the controller last set it */
	struct pt_remote target;
	pid_t keeper;              /* the keeper process, 0 none */
	int keeper_sock;           /* commands to it; closing it ends it */
	int keeper_pidfd;
	uint64_t keeper_seen;      /* its progress when last looked at */
	int log_fd;                /* the caller's log descriptor (a new keeper's) */
	struct pt_rotation rot;    /* a rotated log: its directory (ours), or dir -1 */
	struct pt_rdv rdv;         /* traced with inheritance: its rendezvous */
	/* both */
	int in_use;
	int dying;
	int readers;               /* threads inside a getnext call */
	uint32_t typelist_pos;
	uint64_t lost_seen;        /* pt_handle_lost() at the last get_status */
	int has_ext;
	struct posixtrace_event_ext ext; /* of the last event returned */
};

/* Events an active stream lost: writers' and its control-event queue's. */
static inline uint64_t pt_handle_lost(const struct pt_handle *h)
{
	return pt_stream_lost(&h->src.map) +
	       (h->src.ctl ? atomic_load_explicit(&h->src.ctl->lost, memory_order_relaxed) : 0);
}

/* Whether the controller's filter excludes id: every event the controller,
 * its keeper or its reader records itself is decided by this, never by
 * the stream header's filter, which traced processes can write. */
static inline int pt_handle_filtered(const struct pt_handle *h, trace_event_id_t id)
{
	return pt_source_filtered(&h->src, id);
}
/* exit(): the pidfds of this process's keepers, each keeper told to finish
 * (its socket shut down for writing), read without the handles' locks;
 * how many, and the sum of their streams' room in *room. */
int pt_handles_keepers(struct pollfd *p, int max, uint64_t *room);
/* How far the keepers of this process's streams have drained, in all. */
uint64_t pt_handles_keeper_progress(void);

struct pt_handle *pt_handle_get(trace_id_t trid, int kinds);
/* Caller holds the lock: the calling thread may enter the handle (a log,
 * or an active stream it alone reads) without it from now on. */
void pt_handle_bias(struct pt_handle *h, trace_id_t trid);
/* The table of handles (handle.c); a trace_id_t's low byte is its slot + 1. */
#define PT_TRID_SLOT_MASK 0xffu
_Static_assert(TRACE_SYS_MAX <= PT_TRID_SLOT_MASK, "a slot fits its bits of trace_id_t");
extern struct pt_handle pt_handles[TRACE_SYS_MAX];

/* Pairs with the acquire load of rd_seq in revoke_bias. */
static inline void pt_handle_leave_biased(struct pt_thread *t)
{
	atomic_store_explicit(&t->rd_seq, atomic_load_explicit(&t->rd_seq, memory_order_relaxed) + 1,
	                      memory_order_release);
}

/*
 * The handle of trid if it is biased to t, with t marked inside it until
 * pt_handle_leave_biased(t); else NULL.  Inside, t may use what the lock
 * guards: any other thread that takes the lock first waits for it to
 * leave (revoke_bias, handle.c).  Inline: a biased read is a few loads and
 * two stores to this thread's own line (a handle not biased to t costs
 * the two stores as well: a revoker that sees the odd value waits for the
 * next).  The owner marks itself inside (odd rd_seq), then checks the
 * bias; the bias is only ever t's after pt_handle_bias, under the lock of
 * an initialized table, and its release store orders that.  A bias
 * matched with bias_trid means the identifier was valid when biased and
 * still is: release and every revoker clear it.
 */
static inline struct pt_handle *pt_handle_enter_biased(trace_id_t trid, struct pt_thread *t)
{
	trace_id_t idx = (trid & PT_TRID_SLOT_MASK) - 1;
	if (!t || idx >= TRACE_SYS_MAX)
		return NULL;
	struct pt_handle *h = &pt_handles[idx];
	uint64_t seq = atomic_load_explicit(&t->rd_seq, memory_order_relaxed);
	atomic_store_explicit(&t->rd_seq, seq + 1, memory_order_relaxed);
	/* Odd rd_seq, then bias: the barrier pairs with the membarrier in
	 * revoke_bias; the load with the release store in pt_handle_bias. */
	atomic_signal_fence(memory_order_seq_cst);
	if (PT_LIKELY(atomic_load_explicit(&h->bias, memory_order_acquire) == t &&
	              atomic_load_explicit(&h->bias_trid, memory_order_relaxed) == trid))
		return h;
	pt_handle_leave_biased(t);
	return NULL;
}
/* Takes h->lock as pt_handle_get does, revoking another thread's bias:
 * also for a thread that gave the lock up for a while (a reader's wait). */
void pt_handle_relock(struct pt_handle *h);
struct pt_handle *pt_handle_alloc(void);
trace_id_t pt_handle_publish(struct pt_handle *h);
void pt_handle_release(struct pt_handle *h);
void pt_handle_put(struct pt_handle *h);
void pt_handles_after_fork(void);
/* What an active handle holds, let go: by its controller at the end (the
 * rendezvous directory removed too), or by a fork child, which holds copies
 * (of the keeper's socket and pidfd as well). */
void pt_handle_let_go(struct pt_handle *h, int fork_child);
void pt_handle_forget_map(const struct pt_map *m);

#endif
