/* SPDX-License-Identifier: MIT */
/*
 * Recording: posix_trace_event() and what a thread does to append to its
 * lane.  Reserve / write / commit, all in memory only the writing thread
 * touches, except one release store of the chunk's commit word per event.
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "clock.h"
#include "imageset.h"
#include "join.h"
#include "lanes.h"
#include "layout.h"
#include "process.h"
#include "recword.h"
#include "slots.h"
#include "stream.h"
#include "thread.h"
#include "writer.h"

__thread struct pt_thread *pt_self __attribute__((tls_model("initial-exec")));

/* The thread's own stack, which tells a signal handler on an alternate
 * stack from code on this one (pt_frame_dead); unknown: everything is
 * taken as on it, and the grace period never reads it. */
static void stack_bounds(struct pt_thread *t)
{
	pthread_attr_t attr;
	void *addr;
	size_t size;
	t->stack_lo = 0;
	t->stack_hi = UINTPTR_MAX;
	if (pthread_getattr_np(pthread_self(), &attr) != 0)
		return;
	if (pthread_attr_getstack(&attr, &addr, &size) == 0 && size) {
		t->stack_lo = (uintptr_t)addr;
		t->stack_hi = (uintptr_t)addr + size;
	}
	pthread_attr_destroy(&attr);
}

static struct pt_thread *thread_register_masked(void)
{
	struct pt_thread *t = aligned_alloc(128, (sizeof *t + 127) & ~(size_t)127);
	if (!t)
		return NULL;
	memset(t, 0, sizeof *t);
	t->self = pthread_self();
	t->tid = pt_gettid();
	stack_bounds(t);
	pthread_mutex_lock(&pt_proc.lock);
	t->next = pt_proc.threads;
	pt_proc.threads = t;
	pthread_mutex_unlock(&pt_proc.lock);
	if (pt_proc.have_thread_key)
		pthread_setspecific(pt_proc.thread_key, t);
	pt_self = t;
	return t;
}

/* A thread's first event.  Signals wait meanwhile: a handler's event
 * would register the thread again, inside malloc or pt_proc.lock.  (A
 * thread whose first event is a handler's still allocates in it.) */
static struct pt_thread *thread_register(void)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	struct pt_thread *t = thread_register_masked();
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return t;
}

struct pt_thread *pt_thread_self(void)
{
	return pt_self ? pt_self : thread_register();
}


/* Entering: mark this thread inside (odd) and say where its frame is
 * (cfa, ra: the entry's frame, live until it leaves), then read the stream
 * table.  The compiler barrier pairs with the membarrier(2) (pt_fence_all)
 * that pt_barrier_locked (slots.c) issues between its NULL store of map
 * and its loads of cs_seq and of the frame (entry_abandoned); without
 * membarrier, writers take the general path, which pays a full fence
 * (`fenced`).  An odd cs_seq: a signal handler interrupted an entry of this
 * thread, or one was jumped out of (record_nested).  A handler that ran
 * between the load and the stores and found this entry abandoned took the
 * thread over (enter_anew) and left it even: entered again. */
static inline __attribute__((always_inline)) int enter(struct pt_thread *t, uint64_t *seq,
                                                       int fenced, uintptr_t cfa, uintptr_t ra)
{
#ifndef POSIXTRACE_NO_NESTING
	for (;;) {
#endif
		*seq = atomic_load_explicit(&t->cs_seq, memory_order_relaxed);
		if (*seq & 1)
			return 0;
		atomic_store_explicit(&t->cs_seq, *seq + 1, memory_order_relaxed);
#ifndef POSIXTRACE_NO_NESTING
		atomic_store_explicit(&t->top.cfa, cfa, memory_order_relaxed);
		atomic_store_explicit(&t->top.ra, ra, memory_order_relaxed);
#else
		(void)cfa, (void)ra;
#endif
		if (fenced)
			pt_full_fence();
		else
			atomic_signal_fence(memory_order_seq_cst);
#ifdef POSIXTRACE_NO_NESTING
		return 1;
#else
		if (PT_LIKELY(atomic_load_explicit(&t->cs_seq, memory_order_relaxed) == *seq + 1))
			return 1;
	}
#endif
}

/* Release: what the thread did inside comes before it is seen outside;
 * pairs with the acquire loads of cs_seq in pt_barrier_locked (slots.c). */
static inline __attribute__((always_inline)) void leave(struct pt_thread *t, uint64_t seq)
{
	atomic_store_explicit(&t->cs_seq, seq + 2, memory_order_release);
}

/*
 * The inline record's words, tested and moved in memory.  gcc loads an
 * atomic into a register before it compares it or adds to it: on x86-64
 * a compare with a memory operand is the same relaxed load, and an add to
 * memory the same load and store (a plain store is a release there).  An
 * add that is not locked is enough for cs_seq: the thread alone writes it,
 * and a signal handler runs between two instructions.  ThreadSanitizer
 * sees no access inside an asm: there, and elsewhere than x86-64, the C11
 * operations.
 */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define PT_WORD_ASM 1
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#undef PT_WORD_ASM
#endif
#endif
#endif

/* Whether the word differs from v (relaxed). */
static inline __attribute__((always_inline)) int word_differs(const _Atomic uint64_t *p, uint64_t v)
{
#ifdef PT_WORD_ASM
	int differs;
	__asm__ volatile("cmpq %2, %1" : "=@ccne"(differs) : "m"(*(const uint64_t *)p), "er"(v));
	return differs;
#else
	return atomic_load_explicit(p, memory_order_relaxed) != v;
#endif
}

/* Whether the 32-bit word is not 0 (relaxed). */
static inline __attribute__((always_inline)) int word32_set(const _Atomic uint32_t *p)
{
#ifdef PT_WORD_ASM
	int set;
	__asm__ volatile("cmpl $0, %1" : "=@ccne"(set) : "m"(*(const uint32_t *)p));
	return set;
#else
	return atomic_load_explicit(p, memory_order_relaxed) != 0;
#endif
}

/* Whether cs_seq is odd (relaxed). */
static inline __attribute__((always_inline)) int seq_odd(const _Atomic uint64_t *p)
{
#ifdef PT_WORD_ASM
	int odd;
	__asm__ volatile("testb $1, %1" : "=@ccnz"(odd) : "m"(*(const uint64_t *)p));
	return odd;
#else
	return (atomic_load_explicit(p, memory_order_relaxed) & 1) != 0;
#endif
}

/* cs_seq one further, by the thread that owns it: inside (odd) after
 * outside, outside after inside, with release order (see leave).  The
 * memory clobber keeps the compiler's stores on their side of it. */
static inline __attribute__((always_inline)) void seq_step(_Atomic uint64_t *p)
{
#ifdef PT_WORD_ASM
	__asm__ volatile("addq $1, %0" : "+m"(*(uint64_t *)p) : : "cc", "memory");
#else
	atomic_store_explicit(p, atomic_load_explicit(p, memory_order_relaxed) + 1,
	                      memory_order_release);
#endif
}

/* The TSC, read where it is written: an asm volatile stays after the one
 * before it (seq_step), where a builtin could be moved. */
static inline __attribute__((always_inline)) uint64_t tsc_here(void)
{
#if defined(__x86_64__)
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
#else
	return 0;
#endif
}

/* enter() for the inline record, with membarrier(2) (no fence) and no
 * value kept: cs_seq tested and moved in memory.  After the stores a
 * cs_seq still odd is the one stored: a signal handler that ran in
 * between and took the thread over (enter_anew) left it even, one that
 * recorded in a nested level left it as it found it.
 * The event's time (the TSC, x86-64) is read here, once cs_seq is odd and
 * before the stores and the loads of the record: a handler that records
 * after it records in a nested level, so no later time precedes it in the
 * thread's lane; one that took the thread over sends the loop round, and
 * the time is read again.  Read before the stores and loads, the TSC's
 * latency overlaps them (0.4-0.5 ns an event here, docs/PERFORMANCE.md).
 * Only slots whose stream is timed with the TSC come here (note_fast_armed). */
static inline __attribute__((always_inline)) int enter_inline(struct pt_thread *t, uintptr_t cfa,
                                                              uintptr_t ra, uint64_t *now)
{
#ifndef POSIXTRACE_NO_NESTING
	for (;;) {
#endif
		if (seq_odd(&t->cs_seq))
			return 0;
		seq_step(&t->cs_seq);
		*now = tsc_here();
#ifndef POSIXTRACE_NO_NESTING
		atomic_store_explicit(&t->top.cfa, cfa, memory_order_relaxed);
		atomic_store_explicit(&t->top.ra, ra, memory_order_relaxed);
#else
		(void)cfa, (void)ra;
#endif
		atomic_signal_fence(memory_order_seq_cst);
#ifdef POSIXTRACE_NO_NESTING
		return 1;
#else
		if (PT_LIKELY(seq_odd(&t->cs_seq)))
			return 1;
	}
#endif
}

/* leave() from inside an entry, cs_seq not kept: odd to the next even. */
static inline __attribute__((always_inline)) void leave_inline(struct pt_thread *t)
{
	seq_step(&t->cs_seq);
}

/* Pairs with the acquire load of keeper_wake in keeper_loop (keeper.c):
 * a keeper that sees the new count sees what the caller wrote before. */
static void wake_keeper(struct pt_stream_hdr *h)
{
	atomic_fetch_add_explicit(&h->keeper_wake, 1, memory_order_release);
	syscall(SYS_futex, &h->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void pt_keeper_kick(struct pt_stream_hdr *h, uintptr_t pc)
{
	if (atomic_load_explicit(&h->keeper_kicked, memory_order_relaxed))
		return;
	/* Who asks, then the ask (release: pairs with the acquire load of
	 * keeper_kicked in flush_hinted, keeper.c).  Writers racing here may
	 * mix their answers: each of them asked. */
	atomic_store_explicit(&h->kick_pid, pt_proc.pid, memory_order_relaxed);
	atomic_store_explicit(&h->kick_pc, pc, memory_order_relaxed);
	if (atomic_exchange_explicit(&h->keeper_kicked, 1, memory_order_acq_rel))
		return;
	wake_keeper(h);
}

/* An event of a trigger's type was recorded: the keeper is asked for a
 * snapshot (posixtrace_set_trigger), as a writer asks a FLUSH stream's
 * keeper for a flush.  The count, the writer and the type are hints
 * (keeper.c, trigger_snapshot). */
static void trigger_fire(struct pt_stream_hdr *h, trace_event_id_t id, uintptr_t pc)
{
	atomic_store_explicit(&h->trigger_pid, pt_proc.pid, memory_order_relaxed);
	atomic_store_explicit(&h->trigger_pc, pc, memory_order_relaxed);
	atomic_store_explicit(&h->trigger_id, (uint32_t)id, memory_order_relaxed);
	/* Pairs with the acquire load of trigger_hits in trigger_snapshot
	 * (keeper.c): the writer's pid and pc are seen with the count. */
	atomic_fetch_add_explicit(&h->trigger_hits, 1, memory_order_release);
	wake_keeper(h);
}

/* UNTIL_FULL and FLUSH: the stream stops itself; the event that did not fit is lost
 * (posix_trace_attr_getstreamfullpolicy, POSIX_TRACE_UNTIL_FULL).  Its time and the writer that found
 * it full are what the automatic POSIX_TRACE_STOP reports. */
static void stream_full(struct pt_stream_hdr *h, uint64_t ts, uintptr_t pc)
{
	uint32_t running = PT_ST_RUNNING;
	/* Who found it full is written before the state says so, so that a
	 * reader that sees FULL sees them (the release of the CAS pairs with
	 * the acquire load of state in at_end, reader.c).  Writers racing
	 * here may mix their answers: each of them found the stream full. */
	if (atomic_load_explicit(&h->state, memory_order_relaxed) == PT_ST_RUNNING) {
		atomic_store_explicit(&h->full_ts, ts, memory_order_relaxed);
		atomic_store_explicit(&h->full_pid, pt_proc.pid, memory_order_relaxed);
		atomic_store_explicit(&h->full_pc, pc, memory_order_relaxed);
	}
	int filled = atomic_compare_exchange_strong_explicit(&h->state, &running, PT_ST_FULL,
	                                                     memory_order_acq_rel,
	                                                     memory_order_relaxed);
	if (filled)
		atomic_store_explicit(&h->full, 1, memory_order_relaxed);
	atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->lost_total, 1, memory_order_relaxed);
	/* The reader reports the overflow and the automatic stop. */
	if (filled)
		pt_wake_waiting_readers(h);
}

/* The writer starts chunk c for its lane: its header, then the link that
 * seals the previous chunk (or the lane's head), then the lane's tail; each
 * release names its pair below. */
static void start_chunk(struct pt_thread *t, struct pt_wlane *w, const struct pt_map *m,
                        uint32_t c, uint64_t now)
{
	struct pt_chunk *ch = pt_chunk_at(m, c);
	struct pt_lane *l = pt_lane_at(m, w->lane);
	atomic_store_explicit(&ch->commit, PT_CHUNK_HDR, memory_order_relaxed);
	atomic_store_explicit(&ch->next, PT_NONE, memory_order_relaxed);
	atomic_store_explicit(&ch->event_bytes, 0, memory_order_relaxed);
	__atomic_store_n(&ch->base, now, __ATOMIC_RELAXED); /* read by oldest_sealed (lanes.c) */
	ch->owner.pid = pt_proc.pid;
	ch->owner.tid = t->tid;
	ch->owner.thread = (uint64_t)t->self;
	memcpy(ch->owner.comm, t->comm, PT_COMM_SIZE);
	/* The number only (published with the chunk by the release stores
	 * below): relaxed.  One atomic per chunk, on the pool's line that
	 * pt_pool_pop has just touched. */
	ch->seq = atomic_fetch_add_explicit(&pt_hdr(m)->chunk_seq, 1, memory_order_relaxed) + 1;
	ch->lane = w->lane;
	if (w->chunk) {
		struct pt_chunk *old = (struct pt_chunk *)w->chunk;
		uint32_t bytes = pt_wlane_event_bytes(w);
		atomic_store_explicit(&old->event_bytes, bytes, memory_order_relaxed);
		atomic_fetch_add_explicit(&pt_hdr(m)->held, bytes, memory_order_relaxed);
		/* Seals the old chunk (final commit, event_bytes) and publishes the new
		 * header: pairs with the acquire loads of next in chunk_end and lane_retry (reader.c),
		 * open_chunk, oldest_sealed and pt_steal_oldest (lanes.c). */
		atomic_store_explicit(&old->next, c, memory_order_release);
	} else {
		uint64_t hd = atomic_load_explicit(&l->head, memory_order_relaxed);
		/* The lane's first chunk, header written: pairs with the acquire loads
		 * of head in follow_head, damaged, lane_retry (reader.c), oldest_sealed (lanes.c). */
		atomic_store_explicit(&l->head, pt_head_pack(c, PT_CHUNK_HDR, pt_head_tag(hd) + 1),
		                      memory_order_release);
	}
	/* Pairs with the acquire load of tail1 in open_chunk (lanes.c): the
	 * lane's next owner finds the chunk's header. */
	atomic_store_explicit(&l->tail1, c + 1, memory_order_release);
	pt_wlane_start(w, (unsigned char *)ch, m->chunk_size, now);
}

/* An event that found no room.  The first of a run is published (the
 * OVERFLOW mark and its time), and again once the reader has taken that
 * mark; the rest of the run count in the thread's lane only, so that a
 * writer outrunning the keeper does not make every lost event atomic
 * operations on lines the reader looks at. */
static void note_loss(struct pt_wlane *w, const struct pt_map *m, uint64_t now)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	if (!w->in_gap || w->lane >= m->max_lanes ||
	    !atomic_load_explicit(&h->ovf_count, memory_order_relaxed)) {
		pt_note_loss(h, now, 1);
		pt_wlane_gap(w);
		return;
	}
	_Atomic uint64_t *lost = &pt_lane_at(m, w->lane)->lost;
	/* The lane's owner alone writes it: no read-modify-write. */
	atomic_store_explicit(lost, atomic_load_explicit(lost, memory_order_relaxed) + 1,
	                      memory_order_relaxed);
}

/* A chunk from the pool, growing the stream when it is dry, while the
 * sealed chunks hold less than the room (*held: what they hold). */
static uint32_t take_chunk(const struct pt_map *m, uint64_t *held)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint32_t c = PT_NONE;
	*held = atomic_load_explicit(&h->held, memory_order_relaxed);
	/* Other writers may take the chunks this one's growth step added (or
	 * grow at the same time): every step adds chunks for someone, and the
	 * steps end where the mapping does, so trying until then is bounded. */
	uint32_t steps = m->max_chunks / m->grow_chunks + 16;
	for (uint32_t tries = 0; *held < m->event_room && c == PT_NONE && tries < steps; tries++) {
		c = pt_pool_pop(m);
		if (c == PT_NONE && pt_stream_grow(m) != 0)
			break;
		*held = atomic_load_explicit(&h->held, memory_order_relaxed);
	}
	return c;
}

/* Whether a writer may wait for room: a FLUSH stream that asks for it, at
 * the thread's first level (a signal handler that interrupted an entry
 * writes on a level of its own, t->nest, and never waits: the entry it
 * interrupted could be the one waiting). */
static int may_wait(const struct pt_thread *t, const struct pt_wlane *w, const struct pt_map *m)
{
	return m->block_ns && w >= t->lanes && w < t->lanes + PT_MAX_STREAMS;
}

/* The stream is full and its writer may wait (posixtrace_attr_setblocking):
 * the keeper is asked for a flush and the writer sleeps until a drain
 * gives chunks back (pt_wake_room_waiters), at most m->block_ns, which the
 * stream's header cannot make longer than PT_BLOCK_MAX_NS (fill_map,
 * stream.c).  A stop ends the wait at once. */
static uint32_t wait_for_room(const struct pt_map *m, uint64_t *held, uintptr_t pc)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint64_t start = pt_mono_ns(), now = start;
	uint32_t c = PT_NONE, state = PT_ST_RUNNING;
	/* Sequentially consistent, as in pt_wake_room_waiters (stream.c): the
	 * waiter counts itself, then reads room_seq; the keeper bumps room_seq,
	 * then reads room_waiters.  One of the two sees the other. */
	atomic_fetch_add(&h->room_waiters, 1);
	while (now - start < m->block_ns && (state == PT_ST_RUNNING || state == PT_ST_FULL)) {
		uint32_t seq = atomic_load(&h->room_seq);
		c = take_chunk(m, held);
		if (c != PT_NONE)
			break;
		pt_keeper_kick(h, pc);
		uint64_t left = m->block_ns - (now - start);
		struct timespec ts = {(time_t)(left / 1000000000u), (long)(left % 1000000000u)};
		syscall(SYS_futex, &h->room_seq, FUTEX_WAIT, seq, &ts, NULL, 0);
		now = pt_mono_ns();
		state = atomic_load_explicit(&h->state, memory_order_relaxed);
	}
	atomic_fetch_sub(&h->room_waiters, 1);
	/* Counts only: relaxed. */
	atomic_fetch_add_explicit(&h->waited_events, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->waited_ns, pt_mono_ns() - start, memory_order_relaxed);
	if (c == PT_NONE)
		atomic_fetch_add_explicit(&h->waited_lost, 1, memory_order_relaxed);
	return c;
}

/*
 * A new chunk for the lane.  The stream holds stream-min-size bytes of
 * events in sealed chunks before it is full (held); the chunks each writer
 * has open are its own reservation, committed when the pool runs dry, so
 * that any number of writers fits (posix_trace_attr_getmaxusereventsize:
 * events whose sizes sum to stream-min-size are all recorded).
 */
static int next_chunk(struct pt_thread *t, struct pt_wlane *w, const struct pt_map *m,
                      uint64_t now, uintptr_t pc)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint64_t held;
	uint32_t c = take_chunk(m, &held);
	if (c == PT_NONE && m->policy == POSIX_TRACE_LOOP)
		c = pt_steal_oldest(m);
	if (c == PT_NONE && may_wait(t, w, m))
		c = wait_for_room(m, &held, pc);
	if (c == PT_NONE) {
		/* FLUSH is UNTIL_FULL with regular flushes
		 * (posix_trace_attr_setstreamfullpolicy): it stops too, and its
		 * keeper restarts it once the flush asked for below emptied it. */
		if (m->policy == POSIX_TRACE_UNTIL_FULL || m->policy == POSIX_TRACE_FLUSH)
			stream_full(h, now, pc);
		else
			note_loss(w, m, now);
		if (m->policy == POSIX_TRACE_FLUSH)
			pt_keeper_kick(h, pc);
		return 0;
	}
	/* POSIX_TRACE_FLUSH: a quarter of the room used asks the keeper for
	 * a flush, so that the stream rarely fills up. */
	if (m->policy == POSIX_TRACE_FLUSH && w->chunk &&
	    held + pt_wlane_event_bytes(w) >= m->event_room / 4)
		pt_keeper_kick(h, pc);
	start_chunk(t, w, m, c, now);
	return 1;
}

static void put_meta(struct pt_wlane *w, uint32_t id, const void *data, uint32_t len)
{
	unsigned char *p = w->chunk + pt_wlane_end(w);
	uint64_t w0 = pt_rec_word0(0, id, len, 0), w1 = 0;
	uint32_t size = (uint32_t)pt_record_size(len);
	memcpy(p, &w0, 8);
	memcpy(p + 8, &w1, 8);
	memcpy(p + PT_REC_HDR, data, len);
	pt_wlane_put_meta(w, size); /* the event that follows carries its address (parse_stage, reader.c) */
}

/* The records of the set from byte `from` of the slot's copy, as many as
 * fit before the event (keep bytes) that started the chunk: where the
 * next chunk goes on. */
static uint32_t put_images(struct pt_wlane *w, const struct pt_attached *a,
                           const struct pt_map *m, uint32_t from, uint32_t keep)
{
	while (from < a->images_len) {
		uint64_t w0;
		memcpy(&w0, a->images_recs + from, sizeof w0);
		uint32_t size = (uint32_t)pt_rec_size(w0);
		if (pt_wlane_end(w) + size + keep > m->chunk_size)
			break;
		memcpy(w->chunk + pt_wlane_end(w), a->images_recs + from, size);
		pt_wlane_put_meta(w, size); /* the event that follows carries its address */
		from += size;
	}
	return from;
}

/* The slot's copy of the set, made again: the set changed, or the slot
 * holds another stream (or is a fork child's).  Its memory is mapped
 * once, here and not with malloc: this may run in a signal handler.
 *
 * Its key is the time from which a reader takes it to be in force
 * (docs/LOG-FORMAT.md, "Which image an event was in"): the time of the
 * event it is described before (now), so that this event, perhaps posted
 * from an object just loaded, finds it.  Not when an object was unloaded
 * since the set before was read, or now is not after that set's key (the
 * thread took its time, then another described a set): now may then be
 * older than the unload, and the events other threads posted meanwhile
 * from the object gone would find in force a set without it.  Such a set
 * takes the time it was read at (after it, and after the key before),
 * when every object it lacks was gone. */
static void encode_images(struct pt_attached *a, uint64_t slot_gen, uint64_t now, uint32_t clock)
{
	if (!a->images_recs) {
		void *p = mmap(NULL, PT_IMAGES_COPY_MAX, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		a->images_recs = p == MAP_FAILED ? NULL : p;
	}
	struct pt_images_read read = {0};
	a->images_len = a->images_recs ? pt_images_encode(a->images_recs, PT_IMAGES_COPY_MAX,
	                                                  &read) : 0;
	uint64_t key = now;
	if (slot_gen == atomic_load_explicit(&a->images_for, memory_order_relaxed) &&
	    (read.unloads != a->images_unloads || now <= a->images_key)) {
		key = pt_clock_raw(clock);
		if (key <= a->images_key)
			key = a->images_key + 1;
	}
	pt_images_stamp(a->images_recs, a->images_len, key);
	a->images_key = key;
	a->images_unloads = read.unloads;
	a->images_next = 0;
	atomic_store_explicit(&a->images_gen, read.gen, memory_order_relaxed);
	atomic_store_explicit(&a->images_for, slot_gen, memory_order_relaxed);
}

/* The right to describe the process's set, waited for: the thread that
 * has it may be describing a set read before the dlopen whose object this
 * thread is about to post from, and this thread describes the one after.
 * A thread that describes never waits for itself (it is not in a nested
 * level) nor for one waiting for it, but the one it waits for may be
 * descheduled or waiting for room (next_chunk): yields, then sleeps, some
 * 1.1 s in all; a holder stopped longer (a debugger, SIGSTOP) costs this
 * event its set.  0: not had. */
static int take_images(struct pt_attached *a)
{
	for (int tries = 0; atomic_exchange_explicit(&a->images_busy, 1, memory_order_acquire);
	     tries++) {
		if (tries == 1000 + 10000)
			return 0;
		if (tries < 1000) {
			sched_yield();
		} else {
			struct timespec pause = {0, 100000};
			nanosleep(&pause, NULL);
		}
	}
	return 1;
}

/* The rest of the set into the thread's lane before its event (keep
 * bytes), in as many new chunks as it takes: the thread, or its process,
 * may post no other event, and a next chunk may never come.  A set that
 * fits in a chunk is not cut: when the chunk has not the room for it, the
 * set goes whole into a new one.  0: no chunk could be had (next_chunk
 * counted the event lost). */
static int put_set(struct pt_thread *t, struct pt_wlane *w, struct pt_attached *a,
                   const struct pt_map *m, uint64_t now, uint32_t keep, uintptr_t pc)
{
	uint32_t chunk_room = m->chunk_size - PT_CHUNK_HDR - keep;
	while (a->images_next < a->images_len) {
		uint32_t rest = a->images_len - a->images_next, from = a->images_next;
		int fresh = pt_wlane_end(w) == PT_CHUNK_HDR;
		if (fresh || rest > chunk_room || pt_wlane_end(w) + rest + keep <= m->chunk_size) {
			a->images_next = put_images(w, a, m, from, keep);
			if (fresh && a->images_next == from)
				break; /* no record fits beside the event: not with this one */
			if (a->images_next == a->images_len)
				break;
		}
		if (!next_chunk(t, w, m, now, pc))
			return 0;
	}
	return 1;
}

/*
 * A stream that asks for images (images.c) gets this process's set before
 * the event that starts a chunk when the set changed since it was
 * described, or the rest of a set a full stream cut: a set is finished
 * before the next is begun, and the whole set is in the lane before the
 * event (put_set).  A LOOP stream gets the set again in every chunk the
 * process starts: the chunk that held it is overwritten while the
 * process's later events are not, and a snapshot holds any of its chunks.
 * One thread of the process describes at a time; the others go on
 * recording.  Not in a nested level: a signal handler may have
 * interrupted the loader.  0: the event is lost (no room for the set).
 */
__attribute__((noinline, cold)) static int describe_images(struct pt_thread *t,
                                                           struct pt_wlane *w,
                                                           struct pt_attached *a,
                                                           const struct pt_map *m, uint64_t now,
                                                           uint32_t keep, int new_chunk,
                                                           uintptr_t pc)
{
	if (!take_images(a))
		return 1;
	uint64_t gen = pt_images_generation(), slot_gen = a->gen;
	int same_stream = slot_gen == atomic_load_explicit(&a->images_for, memory_order_relaxed);
	if (same_stream && a->images_next >= a->images_len &&
	    gen == atomic_load_explicit(&a->images_gen, memory_order_relaxed) && new_chunk &&
	    m->policy == POSIX_TRACE_LOOP)
		a->images_next = 0;
	int ok = 1;
	for (int pass = 0; pass < 2 && ok; pass++) {
		if (!same_stream || (a->images_next >= a->images_len &&
		                     gen != atomic_load_explicit(&a->images_gen, memory_order_relaxed)))
			encode_images(a, slot_gen, now, m->clock);
		same_stream = 1;
		ok = put_set(t, w, a, m, now, keep, pc);
	}
	/* A number only: pt_images_recheck's hint. */
	atomic_store_explicit(&a->images_whole, a->images_next >= a->images_len, memory_order_relaxed);
	/* Pairs with the acquire exchange in take_images, in the next describing thread. */
	atomic_store_explicit(&a->images_busy, 0, memory_order_release);
	return ok;
}

static int describes_images(const struct pt_thread *t, const struct pt_wlane *w,
                            const struct pt_map *m)
{
	return atomic_load_explicit(&pt_hdr(m)->images, memory_order_relaxed) && w >= t->lanes &&
	       w < t->lanes + PT_MAX_STREAMS;
}

/*
 * A thread that opens an event type just after a dlopen() is most likely
 * the one about to post from the object loaded: its next event in each
 * stream that asks for images goes the slow way (prepare, as after a lane
 * changed owners) and describes the new set (or the rest of one), without
 * waiting for the thread's next chunk, which may come after the object is
 * gone.
 */
void pt_images_recheck(void)
{
	struct pt_thread *t = pt_thread_peek();
	uint64_t gen = 0, seq;
	/* Inside an entry, as an event: a stream detached meanwhile is not
	 * unmapped under the loads below, and its lanes' limit is not written
	 * here and by pt_detach_locked at once (its grace period waits).  Not
	 * inside one already (a signal handler's call, an entry jumped out of):
	 * the hint is skipped. */
	if (!t || !enter(t, &seq, !pt_proc.use_membarrier, (uintptr_t)__builtin_dwarf_cfa(),
	                 (uintptr_t)__builtin_return_address(0)))
		return;
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
		struct pt_wlane *w = &t->lanes[i];
		if (!m || !w->chunk || w->gen != a->gen || !w->limit ||
		    !atomic_load_explicit(&pt_hdr(m)->images, memory_order_relaxed))
			continue;
		if (!gen)
			gen = pt_images_generation();
		if (gen != atomic_load_explicit(&a->images_gen, memory_order_relaxed) ||
		    !atomic_load_explicit(&a->images_whole, memory_order_relaxed))
			w->limit = 0; /* the OWNER record again, then the set (prepare) */
	}
	leave(t, seq);
}

/* Whether the chunk's records must say the thread's CPU anew: it
 * changed, and it or the one they said is known (a thread without rseq
 * writes none). */
static int cpu_to_say(const struct pt_wlane *w, uint32_t cpu)
{
	return cpu != w->cpu && ((int32_t)cpu >= 0 || (int32_t)w->cpu >= 0);
}

/* A CPU record before the event (keep bytes), if it has room; otherwise
 * the next event tries again, in a new chunk. */
static void say_cpu(struct pt_wlane *w, uint32_t cpu, uint32_t keep, uint32_t chunk_size)
{
	if (!cpu_to_say(w, cpu)) {
		pt_wlane_on_cpu(w, cpu);
		return;
	}
	if (pt_wlane_end(w) + PT_CPU_REC_SIZE + keep > chunk_size)
		return;
	uint32_t said[2] = {(int32_t)cpu >= 0 ? cpu : PT_CPU_NONE, 0};
	put_meta(w, PT_ID_CPU, said, sizeof said);
	pt_wlane_on_cpu(w, cpu);
}

/* The record does not go straight in: the thread has no lane yet, its
 * chunk is full, the delta would not fit, it continues the chunk of a
 * lane's previous owner, or it runs on another CPU than the chunk's
 * records last said.  0: the event is lost. */
__attribute__((noinline, cold)) static int prepare(struct pt_wlane *w, struct pt_attached *a,
                                                   const struct pt_map *m, uint64_t *event_time,
                                                   int time_shared, uint32_t size, uintptr_t pc,
                                                   uint32_t cpu)
{
	struct pt_thread *t = pt_self;
	uint64_t now = *event_time;
	if (w->gen != a->gen) {
		/* A level of its own for a signal handler (record_nested). */
		int nested = w < t->lanes || w >= t->lanes + PT_MAX_STREAMS;
		if (pt_lane_claim(t, w, m, nested) != 0) {
			pt_note_loss(pt_hdr(m), now, 1);
			return 0;
		}
		pt_wlane_bind(w, a->gen);
		/* The time again, now that the lane is this thread's: the lane
		 * may be one another thread gave back after posting later than
		 * the time taken before the claim (a thread preempted in
		 * between), and a lane's times never go back (CONFORMANCE.md,
		 * "Clock and order").  Not a time an earlier stream of the same
		 * event recorded: one event has one time in every stream. */
		if (!time_shared)
			now = *event_time = pt_clock_raw(a->clock);
	}
	uint32_t meta = 0, owner = w->chunk && w->limit == 0;
	if (owner)
		meta = (uint32_t)pt_record_size(sizeof(struct pt_owner_rec));
	else if (w->chunk && (now - w->base) > PT_REC_DELTA_MAX)
		meta = (uint32_t)pt_record_size(sizeof(uint64_t));
	if (cpu_to_say(w, cpu))
		meta += PT_CPU_REC_SIZE;
	if (!w->chunk || pt_wlane_end(w) + meta + size > m->chunk_size) {
		if (!next_chunk(t, w, m, now, pc))
			return 0;
		if (describes_images(t, w, m) &&
		    !describe_images(t, w, a, m, now, size + PT_CPU_REC_SIZE, 1, pc))
			return 0;
		say_cpu(w, cpu, size, m->chunk_size);
		return 1;
	}
	if (owner) {
		struct pt_owner_rec o = {.base = now};
		o.owner.pid = pt_proc.pid;
		o.owner.tid = t->tid;
		o.owner.thread = (uint64_t)t->self;
		memcpy(o.owner.comm, t->comm, PT_COMM_SIZE);
		put_meta(w, PT_ID_OWNER, &o, sizeof o);
		pt_wlane_owned(w, m->chunk_size);
		pt_wlane_rebase(w, now);
		if (describes_images(t, w, m) &&
		    !describe_images(t, w, a, m, now, size + PT_CPU_REC_SIZE, 0, pc))
			return 0;
	} else if ((now - w->base) > PT_REC_DELTA_MAX) {
		put_meta(w, PT_ID_TIME, &now, sizeof now);
		pt_wlane_rebase(w, now);
	}
	/* A CPU record leaves the base as it is. */
	say_cpu(w, cpu, size, m->chunk_size);
	return 1;
}

/* 8 to 16 bytes (the common payloads) in two moves that may overlap. */
static inline __attribute__((always_inline)) void copy_8_to_16(unsigned char *dst,
                                                              const void *src, size_t len)
{
	uint64_t x, y;
	memcpy(&x, src, 8);
	memcpy(&y, (const unsigned char *)src + len - 8, 8);
	memcpy(dst, &x, 8);
	memcpy(dst + len - 8, &y, 8);
}

/* A payload of at most PT_FAST_COPY_MAX bytes but not of 8 to 16 (the
 * inline record's first test), by moves that may overlap. */
static inline __attribute__((always_inline)) void copy_short(unsigned char *dst,
                                                            const unsigned char *src, size_t len)
{
	if (len > 16) {
		memcpy(dst, src, 16);
		memcpy(dst + len - 16, src + len - 16, 16);
	} else if (len >= 4) {
		uint32_t x, y;
		memcpy(&x, src, 4);
		memcpy(&y, src + len - 4, 4);
		memcpy(dst, &x, 4);
		memcpy(dst + len - 4, &y, 4);
	} else if (len) {
		dst[0] = src[0];
		dst[len / 2] = src[len / 2];
		dst[len - 1] = src[len - 1];
	}
}

/* Copies event data; short payloads with a few overlapping word moves
 * instead of a call (the record's data area is padded to 8 bytes). */
static inline void copy_data(unsigned char *dst, const unsigned char *src, size_t len)
{
	if (len > 32)
		memcpy(dst, src, len);
	else if (len - 8 <= 8)
		copy_8_to_16(dst, src, len);
	else
		copy_short(dst, src, len);
}

/* The clock that is not the TSC, out of line: its call and its timespec
 * kept off append_record's frame, which the TSC's path then does not pay
 * for. */
__attribute__((noinline)) static uint64_t mono_clock(void)
{
	return pt_mono_ns();
}

static inline __attribute__((always_inline)) uint64_t record_clock(uint32_t kind)
{
#if defined(__x86_64__)
	if (PT_LIKELY(kind == PT_CLOCK_TSC))
		return __rdtsc();
#endif
	(void)kind;
	return mono_clock();
}

/* Reserve, write, commit: the event goes into the thread's lane.  Returns
 * the time it was given, which the next stream of the same clock reuses. */
static inline __attribute__((always_inline)) uint64_t append_record(
    struct pt_wlane *w, struct pt_attached *a, const struct pt_map *m, trace_event_id_t id,
    const void *data, size_t len, uintptr_t pc, uint64_t now, int fenced, int time_shared)
{
	if (!now)
		now = record_clock(a->clock);
	int truncated = 0;
	if (PT_UNLIKELY(len > a->max_data || !data)) {
		truncated = data != NULL;
		len = data ? a->max_data : 0;
	}
	uint32_t size = (uint32_t)pt_record_size(len); /* room for both words */
	uint32_t cpu = pt_cpu_now();
	if (PT_UNLIKELY(w->gen != a->gen || pt_wlane_end(w) + size > w->limit ||
	                now - w->base > PT_REC_DELTA_MAX || cpu != w->cpu) &&
	    !prepare(w, a, m, &now, time_shared, size, pc, cpu))
		return now;
	unsigned char *p = w->chunk + pt_wlane_end(w);
	/* The same call site as the last event: no second word.  Without a
	 * branch: the address is stored anyway, and the data go over it. */
	uint64_t same = pc == w->last_pc ? PT_REC_SAMEPC : 0, w1 = pc;
	uint32_t hdr = PT_REC_HDR - (uint32_t)(same >> 28);
	uint64_t w0 = pt_rec_word0(now - w->base, id, (uint32_t)len, truncated) | same;
	memcpy(p, &w0, 8);
	memcpy(p + 8, &w1, 8);
	copy_data(p + hdr, data, len);
	/* After the copy, as in append_fast. */
	pt_wlane_event_at(w, pc);
	size -= PT_REC_HDR - hdr;
	uint64_t commit = pt_wlane_put_event(w, size);
	/* Publishes the record: pairs with the acquire loads of commit in
	 * chunk_end (reader.c), continue_chunk and pt_steal_oldest (lanes.c). */
	atomic_store_explicit(&((struct pt_chunk *)w->chunk)->commit, commit, memory_order_release);
	/* Commit, then look at waiters: pairs with the reader's store of
	 * waiters, membarrier, second look (wait_for_event in getnext.c). */
	if (fenced)
		pt_full_fence();
	else
		atomic_signal_fence(memory_order_seq_cst);
	struct pt_stream_hdr *h = pt_hdr(m);
	if (PT_UNLIKELY(atomic_load_explicit(&h->waiters, memory_order_relaxed)))
		pt_wake_readers(h);
	return now;
}

/* A stream that is not running: events attempted while it is full are lost
 * (UNTIL_FULL), counted in the lane of the thread's level w when it has
 * one; a dead one is dropped so that the fast path is fast again (not from
 * a nested level: pt_drop_dead takes the process's lock). */
__attribute__((cold, noinline)) static void not_running(struct pt_wlane *w, int slot,
                                                       struct pt_attached *a,
                                                       const struct pt_map *m, uint32_t state,
                                                       int nested)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	/* overrun looked at before it is set: the threads that lose events
	 * in a full stream need not take its line in turn.  A status read
	 * that clears it between the look and the count still reports the
	 * loss, by the count (active_status, query.c). */
	if (state == PT_ST_FULL && !atomic_load_explicit(&h->overrun, memory_order_relaxed))
		atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
	if (state == PT_ST_FULL && w->gen == a->gen && w->lane < m->max_lanes) {
		_Atomic uint64_t *lost = &pt_lane_at(m, w->lane)->lost;
		atomic_store_explicit(lost, atomic_load_explicit(lost, memory_order_relaxed) + 1,
		                      memory_order_relaxed);
	} else if (state == PT_ST_FULL) {
		atomic_fetch_add_explicit(&h->lost_total, 1, memory_order_relaxed);
	} else if (state == PT_ST_DEAD && !nested) {
		pt_drop_dead(slot);
	}
}

/* The event into every armed stream, through the thread's lanes of one
 * level (t->lanes outside, t->nest[i] in a signal handler).  A nested
 * level maps no stream (pt_take_offers takes locks): a stream not mapped
 * yet counts the handler's event lost, as any event before it is mapped
 * (pt_count_unmapped_losses). */
static void record_slots(struct pt_thread *t, struct pt_wlane *lanes, trace_event_id_t id,
                         const void *data, size_t len, uintptr_t pc, int fenced, int nested)
{
	uint64_t now = 0;
	uint32_t now_clock = 0;
	struct pt_pcb *pcb = pt_proc.pcb;
	/* Pairs with the release RMWs of armed in pt_arm (process.c) and
	 * pt_remote_arm (remote.c): what was stored before the bit is seen. */
	uint64_t armed = atomic_load_explicit(&pcb->armed, memory_order_acquire);
	while (armed) {
		int slot = __builtin_ctzll(armed);
		armed &= armed - 1;
		struct pt_attached *a = &pt_proc.attached[slot];
		/* A slot armed for a stream not mapped yet: a controller has
		 * handed one over on the channel.  (A slot is offered only
		 * while free, so a mapped one is never offered anew.)  Acquire:
		 * pairs with the release store in pt_publish_map (process.h). */
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
		if (PT_UNLIKELY(!m)) {
			if (!nested)
				pt_take_offers(slot);
			m = atomic_load_explicit(&a->map, memory_order_acquire);
			if (!m) {
				atomic_fetch_add_explicit(&a->unmapped_lost, 1, memory_order_relaxed);
				continue;
			}
		}
		const struct pt_stream_hdr *h = pt_hdr(m);
		uint32_t state = atomic_load_explicit(&h->state, memory_order_relaxed);
		if (PT_UNLIKELY(state != PT_ST_RUNNING)) {
			not_running(&lanes[slot], slot, a, m, state, nested);
			continue;
		}
		if (pt_filtered(h, id) || !a->traced)
			continue;
		if (now_clock != m->clock)
			now = 0;
		now = append_record(&lanes[slot], a, m, id, data, len, pc, now, fenced, now != 0);
		now_clock = m->clock;
		if (PT_UNLIKELY(pt_watched(h, id) && pt_triggers(h, id)))
			trigger_fire(pt_hdr(m), id, pc);
	}
	(void)t;
}

/* ---- nesting: signal handlers (XSH 2.4.3) --------------------------------- */

#ifndef POSIXTRACE_NO_NESTING
/* The thread's open entries are all gone (or it exits): it enters anew,
 * with cs_seq moved to a new odd value (the grace period waits for a
 * change) and no nested level.  Ordering as in enter(). */
static void enter_anew(struct pt_thread *t, uint64_t *seq, int fenced, uintptr_t cfa,
                       uintptr_t ra)
{
	for (;;) {
		uint64_t cur = atomic_load_explicit(&t->cs_seq, memory_order_relaxed);
		*seq = (cur + 1) & ~(uint64_t)1;
		atomic_store_explicit(&t->depth, 0, memory_order_relaxed);
		atomic_store_explicit(&t->cs_seq, *seq + 1, memory_order_relaxed);
		atomic_store_explicit(&t->top.cfa, cfa, memory_order_relaxed);
		atomic_store_explicit(&t->top.ra, ra, memory_order_relaxed);
		if (fenced)
			pt_full_fence();
		else
			atomic_signal_fence(memory_order_seq_cst);
		if (atomic_load_explicit(&t->cs_seq, memory_order_relaxed) == *seq + 1)
			return;
	}
}

/* An event nested deeper than PT_NEST_MAX: lost, counted and marked
 * (POSIX_TRACE_OVERFLOW) in every stream that would have recorded it. */
static void nest_overflow(trace_event_id_t id)
{
	/* Pairs with the release RMWs of armed in pt_arm (process.c) and
	 * pt_remote_arm (remote.c). */
	uint64_t armed = atomic_load_explicit(&pt_proc.pcb->armed, memory_order_acquire);
	while (armed) {
		int slot = __builtin_ctzll(armed);
		armed &= armed - 1;
		struct pt_attached *a = &pt_proc.attached[slot];
		/* Pairs with the release store in pt_publish_map (process.h). */
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
		if (!m)
			continue;
		struct pt_stream_hdr *h = pt_hdr(m);
		if (atomic_load_explicit(&h->state, memory_order_relaxed) != PT_ST_RUNNING ||
		    pt_filtered(h, id) || !a->traced)
			continue;
		pt_note_loss(h, pt_clock_raw(a->clock), 1);
	}
}

/* A nested level is published before its lanes are written: its frame,
 * then depth, then the frame once more in case a handler that ran between
 * took the level as gone and wrote over it (such a handler used the
 * level's lanes and was done before this entry writes them).  Each entry
 * puts depth back as it found it, so that the code it interrupted sees no
 * change. */
static void nested_level(struct pt_thread *t, uint32_t level, trace_event_id_t id,
                         const void *data, size_t len, uintptr_t pc, uintptr_t cfa,
                         uintptr_t ra, uint32_t found)
{
	struct pt_frame *f = &t->nest_at[level];
	atomic_store_explicit(&f->cfa, cfa, memory_order_relaxed);
	atomic_store_explicit(&f->ra, ra, memory_order_relaxed);
	atomic_store_explicit(&t->depth, level + 1, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&f->cfa, memory_order_relaxed) != cfa ||
	    atomic_load_explicit(&f->ra, memory_order_relaxed) != ra) {
		atomic_store_explicit(&f->cfa, cfa, memory_order_relaxed);
		atomic_store_explicit(&f->ra, ra, memory_order_relaxed);
		atomic_signal_fence(memory_order_seq_cst);
	}
	record_slots(t, t->nest[level], id, data, len, pc, !pt_proc.use_membarrier, 1);
	atomic_signal_fence(memory_order_seq_cst);
	atomic_store_explicit(&t->depth, found, memory_order_relaxed);
}

/*
 * An entry that found the thread inside already: a signal handler that
 * interrupted posix_trace_event of the same thread, or an entry after a
 * handler jumped out of one (siglongjmp).  Levels found gone are skipped;
 * if the outermost is gone too, the thread enters anew.  Otherwise the
 * event goes into the lanes of the next level, lanes no interrupted entry
 * is writing.  The grace period needs nothing more: the outermost entry
 * keeps cs_seq odd until every level inside it is done.
 */
__attribute__((noinline, cold)) static void record_nested(trace_event_id_t id, const void *data,
                                                         size_t len, uintptr_t pc, uintptr_t cfa,
                                                         uintptr_t ra)
{
	struct pt_thread *t = pt_self;
	if (id - PT_USER_FIRST >= PT_NEVENT_IDS - PT_USER_FIRST || !*pt_proc.fork_word)
		return;
	uint32_t found = atomic_load_explicit(&t->depth, memory_order_relaxed);
	uint32_t live = found < PT_NEST_MAX ? found : PT_NEST_MAX;
	while (live > 0 && pt_frame_dead(t, &t->nest_at[live - 1], cfa))
		live--;
	if (live == 0 && pt_frame_dead(t, &t->top, cfa)) {
		uint64_t seq;
		int fenced = !pt_proc.use_membarrier;
		enter_anew(t, &seq, fenced, cfa, ra);
		record_slots(t, t->lanes, id, data, len, pc, fenced, 0);
		leave(t, seq);
		return;
	}
	if (live == PT_NEST_MAX)
		nest_overflow(id);
	else
		nested_level(t, live, id, data, len, pc, cfa, ra, found);
}

#endif

/* Keeps pt_proc.fast_armed: the armed word as it is now, if it has one
 * bit set and the fork word says this is no fork child whose handler has
 * not run (and writers need no fence).  The inline record then tests
 * "armed == fast_armed" alone; an armed word that changed since, or a fork
 * child's (the kernel wipes the word with the fork word), differs from it,
 * and the event comes here again.  Only a slot mapped, recorded into,
 * timed with the TSC (its fast_len) and running is noted: the inline entry
 * reads the TSC before it looks at the state.  0 is stored otherwise: it
 * matches no armed word.  Threads race to store it: any value
 * stored once met the test and stays true of that armed word (a process's
 * fork word does not change outside a fork child; that the stream runs is
 * only a hint, the inline record looks at the state itself).  Called inside an
 * entry, so that a signal handler's event meanwhile is a nested one and
 * does not take the inline record; a fork between the test and the store
 * (a handler of this thread that forks with no fork handler) wiped the
 * child's page before the store: the second test clears it there. */
static void note_fast_armed(void)
{
	if (!pt_proc.wipe_on_fork)
		return;
	uint64_t armed = atomic_load_explicit(&pt_proc.pcb->armed, memory_order_relaxed);
	if (!armed || (armed & (armed - 1)) || *pt_proc.fork_word != PT_FORK_WORD_FAST)
		return;
	/* A slot whose stream the inline record may record (the TSC, which
	 * its entry reads) and that runs: events into a stream that filled
	 * (UNTIL_FULL, FLUSH) come here, counted lost, with no TSC read,
	 * until it runs again.  A stream of another clock later in the same
	 * slot pays one TSC read it does not use, and goes on to
	 * append_and_leave.  Inside the entry: the slot's hdr stays mapped. */
	const struct pt_attached *a = &pt_proc.attached[__builtin_ctzll(armed)];
	const struct pt_stream_hdr *h = atomic_load_explicit(&a->hdr, memory_order_acquire);
	if (!a->fast_len || atomic_load_explicit(&h->state, memory_order_relaxed) != PT_ST_RUNNING) {
		/* Looked at first: threads that lose events in a full stream
		 * all come here, and need not take the line in turn. */
		if (atomic_load_explicit(pt_proc.fast_armed, memory_order_relaxed) != 0)
			atomic_store_explicit(pt_proc.fast_armed, 0, memory_order_relaxed);
		return;
	}
	atomic_store_explicit(pt_proc.fast_armed, armed, memory_order_relaxed);
	atomic_signal_fence(memory_order_seq_cst); /* the store, then the second test */
	if (*pt_proc.fork_word != PT_FORK_WORD_FAST)
		atomic_store_explicit(pt_proc.fast_armed, 0, memory_order_relaxed);
}

/* The slots armed for a stream this process has not mapped yet, a bit
 * each. */
static uint64_t armed_unmapped(void)
{
	/* Pairs with the release RMWs of armed in pt_arm (process.c) and
	 * pt_remote_arm (remote.c). */
	uint64_t armed = atomic_load_explicit(&pt_proc.pcb->armed, memory_order_acquire);
	uint64_t unmapped = 0;
	for (; armed; armed &= armed - 1) {
		int slot = __builtin_ctzll(armed);
		/* Pairs with the release store in pt_publish_map (process.h). */
		if (!atomic_load_explicit(&pt_proc.attached[slot].map, memory_order_acquire))
			unmapped |= (uint64_t)1 << slot;
	}
	return unmapped;
}

/* Every case: several streams, a stream handed over and not mapped yet, a
 * stream not running, a thread's first event, a fork child's first.  The
 * frame of the entry is posixtrace__event's (cfa, pc), as on the fast path. */
__attribute__((noinline)) static void record_general(trace_event_id_t id, const void *data,
                                                     size_t len, uintptr_t pc, uintptr_t cfa)
{
	if (id - PT_USER_FIRST >= PT_NEVENT_IDS - PT_USER_FIRST)
		return;
	if (PT_UNLIKELY(!*pt_proc.fork_word))
		pt_proc.fork_child();
	struct pt_thread *t = pt_self;
	uint64_t seq;
	int fenced = !pt_proc.use_membarrier;
	if (PT_UNLIKELY(!t) && !(t = thread_register()))
		return;
	/* A stream armed and not mapped yet is taken before the entry: there a
	 * thread may wait for the lock while another maps that very stream,
	 * since no grace period waits for it; inside (record_slots), it waits
	 * only a little and counts the event lost. */
	uint64_t unmapped;
	if (!(atomic_load_explicit(&t->cs_seq, memory_order_relaxed) & 1) &&
	    (unmapped = armed_unmapped()) != 0)
		pt_take_offers_waiting(unmapped);
	if (!enter(t, &seq, fenced, cfa, pc)) {
#ifndef POSIXTRACE_NO_NESTING
		record_nested(id, data, len, pc, cfa, pc);
#endif
		return;
	}
	note_fast_armed();
	record_slots(t, t->lanes, id, data, len, pc, fenced, 0);
	leave(t, seq);
}

/* In the functions below, entered from the inline record, the slot's map
 * is loaded again: NULL when the slot was unpublished since the inline
 * record found it (pt_detach_locked, which then waits for this entry to
 * leave): the event is dropped as one posted after the detach, whose armed
 * bit is already clear. */

/* The general record of one slot (w, of the thread t), then the leave:
 * what the inline record does not take in an id the stream does not
 * watch (a payload past max-data-size, the clock that is not the TSC:
 * every event where the TSC is not used, so not cold; a stream this
 * process does not record into).  A function of its own, entered by a
 * tail call, so that the inline path keeps few registers. */
__attribute__((noinline)) static void append_and_leave(struct pt_thread *t, struct pt_wlane *w,
                                                       trace_event_id_t id, const void *data,
                                                       size_t len, uintptr_t pc)
{
	struct pt_attached *a = &pt_proc.attached[w - t->lanes];
	const struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	if (PT_LIKELY(m != NULL) && a->traced)
		append_record(w, a, m, id, data, len, pc, 0, 0, 0);
	leave_inline(t);
}

/* The same for an id the stream watches (filter | trigger): recorded
 * unless filtered out, and a trigger's fired once it is. */
__attribute__((noinline, cold)) static void watched_and_leave(struct pt_thread *t,
                                                              struct pt_wlane *w,
                                                              trace_event_id_t id,
                                                              const void *data, size_t len,
                                                              uintptr_t pc)
{
	int slot = (int)(w - t->lanes);
	struct pt_attached *a = &pt_proc.attached[slot];
	const struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	struct pt_stream_hdr *h = m ? pt_hdr(m) : NULL;
	if (h && pt_filtered(h, id)) {
		pt_filter_publish(slot);
	} else if (h && a->traced) {
		append_record(w, a, m, id, data, len, pc, 0, 0, 0);
		if (pt_triggers(h, id))
			trigger_fire(h, id, pc);
	}
	leave_inline(t);
}

/* The inline record's lane must be prepared first (a chunk to start or
 * to own, a TIME or CPU record): the general record with the time now
 * already taken, then the leave.  w is one of the calling thread's
 * first-level lanes. */
__attribute__((noinline, cold)) static void prepare_and_leave(struct pt_wlane *w,
                                                              trace_event_id_t id,
                                                              const void *data, size_t len,
                                                              uintptr_t pc, uint64_t now)
{
	struct pt_thread *t = pt_self;
	int slot = (int)(w - t->lanes);
	struct pt_attached *a = &pt_proc.attached[slot];
	const struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	if (PT_LIKELY(m != NULL))
		append_record(w, a, m, id, data, len, pc, now, 0, 0);
	leave_inline(t);
}

/* A reader sleeps on the stream: woken, then the leave. */
__attribute__((noinline, cold)) static void wake_and_leave(struct pt_thread *t,
                                                           struct pt_stream_hdr *h)
{
	pt_wake_readers(h);
	leave_inline(t);
}

/* The inline record's end: published, then the readers that sleep on
 * the stream looked at, then the leave.  The release store pairs with the
 * acquire loads of commit in chunk_end (reader.c), continue_chunk and
 * pt_steal_oldest (lanes.c); the look after it with the reader's store of
 * waiters, membarrier, second look (wait_for_event in getnext.c): no
 * fence, the inline record runs only where membarrier(2) orders them. */
static inline __attribute__((always_inline)) int publish(const struct pt_wlane *w,
                                                        const struct pt_stream_hdr *h)
{
	atomic_store_explicit(&((struct pt_chunk *)w->chunk)->commit, w->commit,
	                      memory_order_release);
	atomic_signal_fence(memory_order_seq_cst);
	return word32_set(&h->waiters);
}

/* The inline record of a payload longer than its word moves take: the
 * copy (a call), then its end (the record of `size` bytes, posted from
 * pc), here.  No more arguments than registers: a tail call. */
__attribute__((noinline)) static void copy_long_and_leave(struct pt_wlane *w, unsigned char *dst,
                                                         const void *data, size_t len,
                                                         uint32_t size, uintptr_t pc)
{
	memcpy(dst, data, len);
	pt_wlane_event_at(w, pc);
	pt_wlane_put_event(w, size);
	struct pt_thread *t = pt_self;
	struct pt_stream_hdr *h =
		atomic_load_explicit(&pt_proc.attached[w - t->lanes].hdr, memory_order_relaxed);
	if (PT_UNLIKELY(publish(w, h)))
		wake_and_leave(t, h);
	else
		leave_inline(t);
}

/*
 * The record of the common case, inline and with no call but tail calls:
 * a payload the slot's fast_len admits (the TSC, no truncation) into a
 * lane that needs nothing before the record (its chunk has room, the
 * delta fits, the CPU is the one the chunk last said).  The same record
 * as append_record's; what does not fit goes there.
 */
static inline __attribute__((always_inline)) void append_fast(struct pt_thread *t,
                                                             struct pt_wlane *w,
                                                             struct pt_stream_hdr *h,
                                                             trace_event_id_t id,
                                                             const void *data, size_t len,
                                                             uintptr_t pc, uint64_t now)
{
	/* No test of the lane's gen: a lane of another stream (the slot
	 * reused) has no room (pt_wlane_stale), and prepare() claims one.
	 * now: the TSC as the entry read it (enter_inline). */
#if !defined(__x86_64__)
	now = record_clock(PT_CLOCK_TSC); /* not reached: no fast_len there */
#endif
	/* NULL data: no payload, as in append_record. */
	len = data ? len : 0;
	uint32_t size = (uint32_t)pt_record_size(len), end = pt_wlane_end(w);
	if (PT_UNLIKELY(end + size > w->limit || now - w->base > PT_REC_DELTA_MAX ||
	                pt_cpu_now() != w->cpu)) {
		prepare_and_leave(w, id, data, len, pc, now);
		return;
	}
	unsigned char *p = w->chunk + end;
	/* The same call site as the last event: no second word.  Without a
	 * branch: the address is stored anyway, and the data go over it. */
	uint64_t skip = (uint64_t)(pc == w->last_pc) * 8u; /* 8 bytes less */
	uint64_t w0 = pt_rec_word0(now - w->base, id, (uint32_t)len, 0) | skip << 28;
	memcpy(p, &w0, 8);
	memcpy(p + 8, &pc, 8);
	/* The data at p + PT_REC_HDR: an offset of each move, no addition. */
	p -= skip;
	/* The lane moves past the record only once its data are in: a copy
	 * that faults, jumped out of by a handler (siglongjmp), leaves the
	 * record out of what the next event commits, and its address out of
	 * what the next record may leave out.  8 to 16 bytes (the common
	 * payloads) first, in two moves that may overlap. */
	if (PT_LIKELY(len - 8 <= 8)) {
		copy_8_to_16(p + PT_REC_HDR, data, len);
	} else if (PT_UNLIKELY(len > PT_FAST_COPY_MAX)) {
		copy_long_and_leave(w, p + PT_REC_HDR, data, len, size - (uint32_t)skip, pc);
		return;
	} else {
		copy_short(p + PT_REC_HDR, data, len);
	}
	pt_wlane_event_at(w, pc);
	pt_wlane_put_event(w, size - (uint32_t)skip);
	if (PT_UNLIKELY(publish(w, h))) {
		wake_and_leave(t, h);
		return;
	}
	leave_inline(t);
}

/* The slot of an armed word with one bit set. */
static inline __attribute__((always_inline)) uint64_t armed_slot(uint64_t armed)
{
#if defined(__x86_64__)
	/* __builtin_ctzll's int costs a sign extension before each use. */
	uint64_t slot;
	__asm__("bsfq %1, %0" : "=r"(slot) : "rm"(armed) : "cc");
	return slot;
#else
	return (uint64_t)__builtin_ctzll(armed);
#endif
}

_Static_assert(sizeof(struct pt_attached) % sizeof(struct pt_wlane) == 0,
               "a slot's attached offset is a multiple of its lane's");

/* The common case inline: one stream, running, this thread known.  cfa is
 * the frame of the function the event is posted through (its return
 * address is pc). */
static inline __attribute__((always_inline)) void record(trace_event_id_t id, const void *data,
                                                         size_t len, uintptr_t pc, uintptr_t cfa,
                                                         uint64_t armed)
{
	struct pt_thread *t = pt_self;
	/* One bit set and no fork child's first event, in one compare
	 * (note_fast_armed); armed is 0 when a stream stopped since the
	 * macro's test, and a fork child's fast_armed is 0 too. */
	if (PT_UNLIKELY(!t || !armed || word_differs(pt_proc.fast_armed, armed) ||
	                id - PT_USER_FIRST >= PT_NEVENT_IDS - PT_USER_FIRST)) {
		record_general(id, data, len, pc, cfa);
		return;
	}
	uint64_t now;
	if (!enter_inline(t, cfa, pc, &now)) {
#ifndef POSIXTRACE_NO_NESTING
		record_nested(id, data, len, pc, cfa, pc);
#endif
		return;
	}
	/* One offset for both arrays: a lane's, times the ratio of sizes. */
	uint64_t lane_off = armed_slot(armed) * sizeof(struct pt_wlane);
	struct pt_wlane *w = (struct pt_wlane *)((char *)t->lanes + lane_off);
	struct pt_attached *a = (struct pt_attached *)((char *)pt_proc.attached +
	                                               lane_off * (sizeof(struct pt_attached) /
	                                                           sizeof(struct pt_wlane)));
	/* Pairs with the release store of hdr in pt_publish_map (process.h):
	 * a->fast_len and a->gen are the map's.  A slot not mapped has
	 * pt_unmapped_hdr, which is not running: no test of map here. */
	struct pt_stream_hdr *h = atomic_load_explicit(&a->hdr, memory_order_acquire);
	/* Running and nothing watched: one load, one compare.  The time was
	 * read before this look: an event recorded has a time from before the
	 * stream was last seen running (a stop after the look has a later
	 * STOP). */
	if (PT_UNLIKELY(word_differs(&h->state_watching, PT_ST_RUNNING_UNWATCHED))) {
		if (atomic_load_explicit(&h->state, memory_order_relaxed) != PT_ST_RUNNING) {
			leave_inline(t);
			record_general(id, data, len, pc, cfa);
			return;
		}
		if (pt_watched(h, id)) {
			watched_and_leave(t, w, id, data, len, pc);
			return;
		}
	}
	if (PT_LIKELY(len < a->fast_len))
		append_fast(t, w, h, id, data, len, pc, now);
	else
		append_and_leave(t, w, id, data, len, pc);
}

/* The function itself (the header's macro calls posixtrace__event() only
 * once a stream may be running). */
void(posix_trace_event)(trace_event_id_t id, const void *restrict data, size_t len)
{
	/* Pairs with the release RMWs of armed in pt_arm (process.c) and
	 * pt_remote_arm (remote.c). */
	uint64_t armed = atomic_load_explicit(&pt_proc.pcb->armed, memory_order_acquire);
	if (PT_LIKELY(armed == 0))
		return;
	record(id, data, len, (uintptr_t)__builtin_return_address(0),
	       (uintptr_t)__builtin_dwarf_cfa(), armed);
}

/* What binaries built against 0.2 and 0.3 call from the macro. */
void posixtrace__event(trace_event_id_t id, const void *data, size_t len)
{
	/* As in posix_trace_event. */
	record(id, data, len, (uintptr_t)__builtin_return_address(0),
	       (uintptr_t)__builtin_dwarf_cfa(),
	       atomic_load_explicit(&pt_proc.pcb->armed, memory_order_acquire));
}

/* The macro's call (0.4 on): armed is the word as the macro loaded it,
 * with acquire (the same load as posix_trace_event's), which spares the
 * event a second look.  An armed word that changed since is the one an
 * event posted a moment earlier would have seen: the slot's map, hdr and
 * state are read inside the entry, as they are after the library's own
 * load. */
void posixtrace__event_armed(trace_event_id_t id, const void *data, size_t len,
                             unsigned long long armed)
{
	record(id, data, len, (uintptr_t)__builtin_return_address(0),
	       (uintptr_t)__builtin_dwarf_cfa(), armed);
}

/* Gives back one level's lane in one slot. */
static void release_level(struct pt_wlane *w, int s)
{
	struct pt_attached *a = &pt_proc.attached[s];
	/* Pairs with the release store of map in pt_publish_map (process.h). */
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_acquire);
	if (m && w->gen == a->gen && a->traced)
		pt_lane_release(w, m);
	/* A slot with no map has its lanes' limit 0 already (pt_detach_locked,
	 * which may be storing it now: not stored here then). */
	if (m)
		pt_wlane_unbind(w);
	else
		pt_wlane_bind(w, 0);
}

/* Gives back the thread's lanes, of every level, in one slot (or all,
 * slot < 0), keeping their open chunks for the next owners.  Only when the
 * thread or the process ends: an entry still open was jumped out of (or
 * is a handler's that called exit()), and the thread enters anew. */
static void pt_release_lanes(struct pt_thread *t, int slot)
{
	uint64_t seq;
	int fenced = !pt_proc.use_membarrier;
#ifndef POSIXTRACE_NO_NESTING
	enter_anew(t, &seq, fenced, (uintptr_t)__builtin_dwarf_cfa(),
	           (uintptr_t)__builtin_return_address(0));
#else
	if (!enter(t, &seq, fenced, 0, 0))
		return;
#endif
	for (int s = slot < 0 ? 0 : slot; s < (slot < 0 ? PT_MAX_STREAMS : slot + 1); s++) {
		release_level(&t->lanes[s], s);
		for (int d = 0; d < PT_NEST_MAX; d++)
			release_level(&t->nest[d][s], s);
	}
	leave(t, seq);
}

/* A thread that exits gives its lanes back (the TSD destructor). */
void pt_thread_exit(void *arg)
{
	struct pt_thread *t = arg;
	pt_release_lanes(t, -1);
	pthread_mutex_lock(&pt_proc.lock);
	for (struct pt_thread **pp = &pt_proc.threads; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	pthread_mutex_unlock(&pt_proc.lock);
	if (pt_self == t)
		pt_self = NULL;
	free(t);
}

/* exit() runs no TSD destructor for the thread that calls it: its lanes go
 * back here.  The process's other threads end with it; their lanes are
 * taken back from a dead owner. */
__attribute__((destructor)) static void release_at_exit(void)
{
	if (pt_self)
		pt_release_lanes(pt_self, -1);
}

/* In a fork child only the forking thread exists; its positions belong to
 * the parent's lanes. */
void pt_forget_other_threads(void)
{
	struct pt_thread *t = pt_proc.threads, *me = pt_self;
	while (t) {
		struct pt_thread *next = t->next;
		if (t != me)
			free(t);
		t = next;
	}
	pt_proc.threads = me;
	if (me) {
		me->next = NULL;
		me->self = pthread_self();
		me->tid = pt_gettid();
		atomic_store_explicit(&me->cs_seq, 0, memory_order_relaxed);
		atomic_store_explicit(&me->depth, 0, memory_order_relaxed);
		for (int s = 0; s < PT_MAX_STREAMS; s++) {
			pt_wlane_unbind(&me->lanes[s]);
			for (int d = 0; d < PT_NEST_MAX; d++)
				pt_wlane_unbind(&me->nest[d][s]);
		}
	}
}
