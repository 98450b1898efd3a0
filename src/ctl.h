/* SPDX-License-Identifier: MIT */
/*
 * What a controller shares with its stream's keeper and nobody else: an
 * anonymous shared mapping made at creation, before the keeper is forked
 * (traced processes cannot reach it).  It holds the events the controller
 * and the keeper record themselves (START, STOP, FILTER, FLUSH_START/STOP,
 * ERROR), which the reader merges with the stream's lanes by time, and the
 * keeper's progress, so that a new keeper can continue a log if one dies.
 */
#ifndef PT_CTL_H
#define PT_CTL_H

#include "internal.h"
#include "log/log.h"
#include "rendezvous.h"

#define PT_CTLQ_LEN 256u
#define PT_CTL_DATA_MAX (2 * sizeof(trace_event_set_t))

struct pt_ctl_event {
	uint64_t raw;            /* timestamp, the stream's clock */
	uint32_t id;
	uint32_t len;
	int32_t pid;             /* 0: not associated with a process */
	int32_t tid;
	uint64_t thread;
	uint64_t pc;
	unsigned char data[PT_CTL_DATA_MAX];
};

/* Who asked for something: recorded with the events it causes. */
struct pt_caller {
	int32_t pid, tid;
	uint64_t thread;
	uint64_t pc;
};

/* Events the keepers took out of the stream's lanes for the log (the
 * reader's stage claims, reader.c), and the claim under way.  A keeper
 * killed between a claim and the write of its blocks loses what it took:
 * the next keeper counts it lost (pt_claims_settle), from this count and
 * the log's (struct pt_logw_progress, stage_events). */
struct pt_claims {
	_Atomic uint64_t taken;     /* events claimed so far */
	/* The claim under way: its events (0: none), lane and the lane's head
	 * before it, and `taken` when it began (a claim counted already has
	 * moved taken on). */
	_Atomic uint64_t events;
	_Atomic uint64_t head;
	_Atomic uint64_t base;
	_Atomic uint32_t lane;
	uint32_t reserved;
};

/* A claim of `events` events of lane `lane`, whose head is `head`, is
 * about to be made; pt_claim_end says whether it was (claimed). */
static inline void pt_claim_begin(struct pt_claims *c, uint32_t lane, uint64_t head,
                                  uint64_t events)
{
	/* Only the keeper writes these, and only a later keeper reads them,
	 * after this one is dead: the order matters for a death between two
	 * stores, not for another thread.  Relaxed stores, events last. */
	atomic_store_explicit(&c->lane, lane, memory_order_relaxed);
	atomic_store_explicit(&c->head, head, memory_order_relaxed);
	atomic_store_explicit(&c->base, atomic_load_explicit(&c->taken, memory_order_relaxed),
	                      memory_order_relaxed);
	atomic_store_explicit(&c->events, events, memory_order_relaxed);
}

static inline void pt_claim_end(struct pt_claims *c, int claimed)
{
	if (claimed)
		atomic_fetch_add_explicit(&c->taken,
		                          atomic_load_explicit(&c->events, memory_order_relaxed),
		                          memory_order_relaxed);
	atomic_store_explicit(&c->events, 0, memory_order_relaxed);
}

struct pt_ctl {
	pthread_mutex_t lock;            /* robust, process-shared: writers of q */
	int loop;                        /* POSIX_TRACE_LOOP: full drops the oldest */
	_Atomic uint32_t head;           /* next entry written */
	_Atomic uint32_t tail;           /* next entry read */
	_Atomic uint64_t lost;
	struct pt_ctl_event q[PT_CTLQ_LEN];
	/* The keeper and its controller. */
	_Atomic uint32_t flush_req;      /* bumped by each flush request */
	_Atomic uint32_t flush_done;     /* the last request the keeper finished */
	_Atomic uint32_t flush_error;    /* first error, reset by get_status */
	_Atomic uint32_t log_full;
	_Atomic uint32_t log_overrun;    /* reset by get_status */
	_Atomic uint32_t cmd_sent;       /* commands sent to the keeper */
	_Atomic uint32_t keeper_ack;     /* futex: commands it carried out */
	_Atomic int32_t keeper_error;    /* the keeper's first error */
	_Atomic uint32_t keeper_finished; /* it wrote the end of the log */
	/* Bumped by the keeper as it drains: a caller waiting for it gives a
	 * keeper that works more time than one that is stuck.  A number only:
	 * relaxed. */
	_Atomic uint64_t keeper_progress;
	/* The filter as the controller set it: what decides which system
	 * events are recorded (pt_handle_filtered).  The stream header's copy
	 * is for writers, and traced processes can write it.  Numbers only:
	 * relaxed, as the header's. */
	_Atomic uint64_t filter[PT_NEVENT_IDS / 64];
	/* The trigger set as the controller set it (posixtrace_set_trigger),
	 * and the snapshots the keeper took for triggers. */
	_Atomic uint64_t trigger[PT_NEVENT_IDS / 64];
	_Atomic uint64_t trigger_snapshots;
	/* Events of a trigger's type that took no snapshot: within the hold-off
	 * of their type, or past the stream's budget (keeper.c). */
	_Atomic uint64_t trigger_suppressed;
	struct pt_logw_state logw;       /* the log as written so far */
	/* A rotated log (rotate.h): the number of the file logw describes and
	 * of the oldest file kept, and the identity of the first, by which a
	 * new keeper opens it again.  Written by the controller before the
	 * first keeper, then by the keeper alone (file, then its number). */
	uint64_t rot_current, rot_oldest;
	uint64_t rot_dev, rot_ino;
	struct pt_claims claims;         /* what keepers took for the log */
	struct pt_rdv_counts rdv;        /* the rendezvous, as the keeper served it */
};

struct pt_ctl *pt_ctl_create(int loop);
void pt_ctl_destroy(struct pt_ctl *c);
/* Records an event; the caller's identity (pid 0 for none). */
void pt_ctl_put(struct pt_ctl *c, uint32_t clock, trace_event_id_t id, const void *data,
                uint32_t len, const struct pt_caller *who);
struct pt_map;
/* Records an event as pt_ctl_put does, in the clock of the stream m, and
 * wakes m's sleeping readers: it is ready to be retrieved from now on. */
void pt_ctl_post(struct pt_ctl *c, const struct pt_map *m, trace_event_id_t id, const void *data,
                 uint32_t len, const struct pt_caller *who);
/* The oldest unread event, copied: 1, or 0 when there is none. */
int pt_ctl_peek(struct pt_ctl *c, struct pt_ctl_event *e, uint32_t *pos);
/* Takes the event peeked at pos: 0 when a writer dropped it meanwhile. */
int pt_ctl_consume(struct pt_ctl *c, uint32_t pos);
void pt_ctl_discard_all(struct pt_ctl *c);
/* A new keeper, or one that cleared its log: events claimed and not in the
 * log (`logged`: the log's stage_events, as published) are counted lost
 * (in `lost`, posixtrace_lost_events), and the count starts again from
 * the log's.  The events counted lost. */
struct pt_map;
uint64_t pt_claims_settle(struct pt_ctl *c, const struct pt_map *m, uint64_t logged);

/* posix_trace_clear discarded what was claimed and not written: the count
 * starts again from the log's, nothing counted lost. */
static inline void pt_claims_forget(struct pt_ctl *c, uint64_t logged)
{
	atomic_store_explicit(&c->claims.taken, logged, memory_order_relaxed);
}
/* This thread of this process, calling from pc. */
struct pt_caller pt_caller_here(uintptr_t pc);

#endif
