/* SPDX-License-Identifier: MIT */
/*
 * A recording thread's state: its writing position in each stream (struct
 * pt_wlane), its entry's frame and grace-period word (struct pt_thread).
 * writer.c records through it, lanes.c claims and gives back the lanes it
 * names; the grace period (process.c) and biased handles (handle.c) read
 * the words they pair with.
 */
#ifndef PT_THREAD_H
#define PT_THREAD_H

#include "process.h"

struct pt_wlane {              /* a thread's writing position in one stream */
	uint64_t gen;          /* pt_attached.gen it belongs to; 0 = none */
	unsigned char *chunk;  /* open chunk; NULL: none yet */
	/* (events << 32) | end offset: what the chunk's commit word says once
	 * the next record is written. */
	uint64_t commit;
	uint64_t base;         /* raw clock base of the deltas */
	/* End the records may reach: the chunk size, or 0 while something
	 * must come first (no chunk yet, an OWNER record): the one test the
	 * fast path makes for all of these. */
	uint32_t limit;
	uint32_t lane;
	uint32_t meta_bytes;   /* bytes of OWNER and TIME records in the chunk */
	uint32_t in_gap;       /* events lost since the last one recorded: the run is marked */
	uint64_t last_pc;      /* address of the chunk's last event record; 0: none */
};

static inline uint32_t pt_wlane_end(const struct pt_wlane *w) { return (uint32_t)w->commit; }
/* Bytes of event records in the thread's chunk (the "held" accounting). */
static inline uint32_t pt_wlane_event_bytes(const struct pt_wlane *w)
{
	return pt_wlane_end(w) - PT_CHUNK_HDR - w->meta_bytes;
}

/* Levels of posix_trace_event a thread may have open inside the outermost
 * one (signal handlers interrupting it, XSH 2.4.3), each writing lanes of
 * its own; an event deeper than that is counted lost. */
#define PT_NEST_MAX 4

/* Where an open entry's frame is: its canonical frame address and the
 * return address stored just below it (x86), which tell a live entry from
 * one a handler jumped out of (pt_frame_dead). */
struct pt_frame {
	_Atomic uintptr_t cfa;
	_Atomic uintptr_t ra;
};

struct pt_thread {
	/* Odd while the thread is inside posix_trace_event: a stream is not
	 * unmapped until every thread has been seen outside (grace period). */
	_Alignas(128) _Atomic uint64_t cs_seq;
	/* The outermost open entry's frame, stored on entering; read by the
	 * thread's nested entries and by the grace period (pt_entry_abandoned). */
	struct pt_frame top;
	/* Odd while the thread reads a log through a handle biased to it
	 * without the handle's lock (handle.c). */
	_Atomic uint64_t rd_seq;
	/* Nested levels open (0 .. PT_NEST_MAX), written by the thread and its
	 * signal handlers only; each entry leaves it as it found it. */
	_Atomic uint32_t depth;
	pthread_t self;
	pid_t tid;
	char comm[PT_COMM_SIZE];   /* its name when it last claimed a lane */
	uintptr_t stack_lo, stack_hi; /* the thread's own stack: (lo, hi] */
	struct pt_thread *next;
	struct pt_wlane lanes[PT_MAX_STREAMS];
	struct pt_frame nest_at[PT_NEST_MAX];
	struct pt_wlane nest[PT_NEST_MAX][PT_MAX_STREAMS];
};

/* The calling thread's, NULL if it never registered. */
extern __thread struct pt_thread *pt_self __attribute__((tls_model("initial-exec")));
static inline struct pt_thread *pt_thread_peek(void) { return pt_self; }

#endif
