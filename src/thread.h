/* SPDX-License-Identifier: MIT */
/*
 * A recording thread's state: its writing position in each stream (struct
 * pt_wlane), its entry's frame and grace-period word (struct pt_thread).
 * writer.c records through it, lanes.c claims and gives back the lanes it
 * names; the grace period (slots.c) and biased handles (handle.c) read
 * the words they pair with.
 */
#ifndef PT_THREAD_H
#define PT_THREAD_H

#include <string.h>
#include "process.h"

/* One line a lane (aligned, 64 bytes): an event's record touches one line
 * of its thread's state besides cs_seq's, and a lane's index is a shift. */
struct pt_wlane {              /* a thread's writing position in one stream */
	_Alignas(64) uint64_t gen; /* pt_attached.gen it belongs to; 0 = none */
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
	/* The CPU the chunk's records last said (a CPU record), as
	 * pt_cpu_now() read it; PT_CPU_NONE where a chunk starts. */
	uint32_t cpu;
};
_Static_assert(sizeof(struct pt_wlane) == 64, "a lane is one line");

static inline uint32_t pt_wlane_end(const struct pt_wlane *w) { return (uint32_t)w->commit; }
/* Bytes of event records in the thread's chunk (the "held" accounting). */
static inline uint32_t pt_wlane_event_bytes(const struct pt_wlane *w)
{
	return pt_wlane_end(w) - PT_CHUNK_HDR - w->meta_bytes;
}

/* Every change of a struct pt_wlane is one of these (writer.c records,
 * lanes.c claims and continues lanes): a lane's position has one owner. */

/* A lane claimed, nothing open in it yet. */
static inline void pt_wlane_claimed(struct pt_wlane *w, uint32_t lane)
{
	memset(w, 0, sizeof *w);
	w->lane = lane;
	w->cpu = PT_CPU_NONE;
}

/* Tied to a slot's stream (its pt_attached.gen), or to none (0). */
static inline void pt_wlane_bind(struct pt_wlane *w, uint64_t gen) { w->gen = gen; }

/* The slot's stream is gone (pt_detach_locked, after its grace period; a
 * fork child's lanes): no room, so that the lane's next event goes to
 * prepare(), which finds gen another stream's.  The inline record tests
 * limit alone: a lane whose limit is not 0 is the slot's stream's. */
static inline void pt_wlane_stale(struct pt_wlane *w) { w->limit = 0; }

/* Tied to no stream (given back, or a fork child's). */
static inline void pt_wlane_unbind(struct pt_wlane *w)
{
	pt_wlane_bind(w, 0);
	pt_wlane_stale(w);
}

/* The chunk the lane's previous owner left open, at its commit word; meta:
 * its bytes of OWNER and TIME records.  An OWNER record comes first. */
static inline void pt_wlane_continue(struct pt_wlane *w, unsigned char *chunk, uint64_t commit,
                                     uint32_t meta)
{
	w->chunk = chunk;
	w->commit = commit;
	w->meta_bytes = meta;
	w->last_pc = 0;
	w->in_gap = 0;
	w->limit = 0;
	w->cpu = PT_CPU_NONE;
}

/* A chunk of the thread's own, started at raw time now. */
static inline void pt_wlane_start(struct pt_wlane *w, unsigned char *chunk, uint32_t chunk_size,
                                  uint64_t now)
{
	pt_wlane_continue(w, chunk, PT_CHUNK_HDR, 0);
	w->limit = chunk_size; /* no OWNER record: the chunk's header names the writer */
	w->base = now;
}

/* A meta record of `size` bytes written at the end: committed with the
 * event that follows, which carries its address. */
static inline void pt_wlane_put_meta(struct pt_wlane *w, uint32_t size)
{
	w->commit += size;
	w->meta_bytes += size;
	w->last_pc = 0;
}

/* The chunk's records say the CPU is cpu from here on. */
static inline void pt_wlane_on_cpu(struct pt_wlane *w, uint32_t cpu) { w->cpu = cpu; }

/* The OWNER record is in: events may fill the chunk. */
static inline void pt_wlane_owned(struct pt_wlane *w, uint32_t chunk_size) { w->limit = chunk_size; }

/* Deltas count from raw time now. */
static inline void pt_wlane_rebase(struct pt_wlane *w, uint64_t now) { w->base = now; }

/* The address of the event being written (the next one at the same
 * address leaves it out). */
static inline void pt_wlane_event_at(struct pt_wlane *w, uint64_t pc) { w->last_pc = pc; }

/* The event record of `size` bytes is written at the end: the commit word
 * to publish. */
static inline uint64_t pt_wlane_put_event(struct pt_wlane *w, uint32_t size)
{
	w->commit += (1ull << 32) + size;
	return w->commit;
}

/* A run of lost events has begun (its first is marked in the stream). */
static inline void pt_wlane_gap(struct pt_wlane *w) { w->in_gap = 1; }

/* Whether the thread wrote in its chunk past what a reader at (chunk,
 * end) saw. */
static inline int pt_wlane_past(const struct pt_wlane *w, const void *chunk, uint32_t end)
{
	return w->chunk != (const unsigned char *)chunk || pt_wlane_end(w) > end;
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
	 * thread's nested entries and by the grace period (entry_abandoned, slots.c). */
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

/* The CPU the calling thread runs on, as the kernel last wrote it into
 * the thread's rseq area on its way back to user space (a load, no
 * call); PT_CPU_NONE-like values (-1, -2 as a u32) where the thread has
 * no rseq area registered.  A migration between this load and the record
 * is not seen: the CPU is the one the thread ran on just before. */
static inline __attribute__((always_inline)) uint32_t pt_cpu_now(void)
{
	int32_t cpu;
#if defined(__x86_64__)
	__asm__ volatile("movl %%fs:(%1), %0" : "=r"(cpu) : "r"(pt_proc.cpu_off));
#else
	cpu = *(volatile const int32_t *)((char *)__builtin_thread_pointer() + pt_proc.cpu_off);
#endif
	return (uint32_t)cpu;
}

/* The calling thread's, NULL if it never registered. */
extern __thread struct pt_thread *pt_self __attribute__((tls_model("initial-exec")));
static inline struct pt_thread *pt_thread_peek(void) { return pt_self; }

/* ---- where an entry's frame is (signal handlers, XSH 2.4.3) -------------- */

static inline int pt_on_stack(const struct pt_thread *t, uintptr_t a)
{
	return a > t->stack_lo && a <= t->stack_hi;
}

/* Whether the return address `ra` is still stored just below `cfa`: it is
 * while the frame lives (x86 keeps it there); once the frame is gone, calls
 * made later from shallower frames write over it.  Elsewhere: taken as
 * kept.  The word may lie in another function's locals now (a redzone to
 * ASan) or be another thread's stack (the grace period, slots.c): not
 * instrumented. */
__attribute__((no_sanitize("address", "thread"))) static inline int pt_ra_kept(uintptr_t cfa, uintptr_t ra)
{
#if defined(__x86_64__) || defined(__i386__)
	return __atomic_load_n((const uintptr_t *)(cfa - sizeof(uintptr_t)), __ATOMIC_RELAXED) == ra;
#else
	(void)cfa, (void)ra;
	return 1;
#endif
}

/*
 * Whether the open entry whose frame is f is gone (a handler jumped out of
 * it), seen from an entry of the same thread whose frame is at `cfa`.  A
 * signal handler that interrupts an entry runs below its frame on the same
 * stack, or on an alternate stack; code on the thread's own stack never
 * runs inside a handler on an alternate stack.  A frame judged live that
 * is gone costs a level; one judged gone that is live would let two
 * levels share lanes, so "gone" needs a frame at or below ours on the same
 * stack, or its return address written over.
 */
static inline int pt_frame_dead(const struct pt_thread *t, const struct pt_frame *f, uintptr_t cfa)
{
	uintptr_t fc = atomic_load_explicit(&f->cfa, memory_order_relaxed);
	uintptr_t fr = atomic_load_explicit(&f->ra, memory_order_relaxed);
	int f_on = pt_on_stack(t, fc), me_on = pt_on_stack(t, cfa);
	if (f_on && me_on)
		return fc <= cfa || !pt_ra_kept(fc, fr);
	if (f_on)
		return !pt_ra_kept(fc, fr); /* we are a handler on an alternate stack */
	if (me_on)
		return 1;
	return fc <= cfa; /* both on an alternate stack: taken as the same one */
}

#endif
