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
#include "logwstate.h"
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
	struct pt_rdv_counts rdv;        /* the rendezvous, as the keeper served it */
};

struct pt_ctl *pt_ctl_create(int loop);
void pt_ctl_destroy(struct pt_ctl *c);
/* Records an event; the caller's identity (pid 0 for none). */
void pt_ctl_put(struct pt_ctl *c, uint32_t clock, trace_event_id_t id, const void *data,
                uint32_t len, const struct pt_caller *who);
/* The oldest unread event, copied: 1, or 0 when there is none. */
int pt_ctl_peek(struct pt_ctl *c, struct pt_ctl_event *e, uint32_t *pos);
/* Takes the event peeked at pos: 0 when a writer dropped it meanwhile. */
int pt_ctl_consume(struct pt_ctl *c, uint32_t pos);
void pt_ctl_discard_all(struct pt_ctl *c);
/* This thread of this process, calling from pc. */
struct pt_caller pt_caller_here(uintptr_t pc);

#endif
