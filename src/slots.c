/* SPDX-License-Identifier: MIT */
/*
 * The slots of the streams this process records into (struct pt_attached):
 * a stream published in one, and taken out after the grace period that
 * lets it be unmapped while other threads may be writing (the other side
 * of enter() and leave(), writer.c).
 */
#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>
#include "process.h"
#include "registry.h"
#include "slots.h"
#include "stream.h"
#include "thread.h"
#include "token.h"

#ifndef POSIXTRACE_NO_NESTING
/* The grace period's look at a thread seen inside with cs_seq == seq whose
 * outermost entry may have been jumped out of: its frame's return address
 * is written over (or the frame stored is an older entry's, whose map the
 * thread loads after the barrier anyway: the stores of the frame come
 * before the load of map, see enter()).  Caller holds pt_proc.lock, so t
 * has not finished exiting and its stack is mapped; a frame outside it is
 * not read.  Without nesting, no entry is taken as abandoned. */
static int entry_abandoned(struct pt_thread *t, uint64_t seq)
{
	uintptr_t cfa = atomic_load_explicit(&t->top.cfa, memory_order_relaxed);
	uintptr_t ra = atomic_load_explicit(&t->top.ra, memory_order_relaxed);
	if (!pt_proc.have_thread_key || t->stack_hi == UINTPTR_MAX || !pt_on_stack(t, cfa) ||
	    pt_ra_kept(cfa, ra))
		return 0;
	return atomic_load_explicit(&t->cs_seq, memory_order_relaxed) == seq;
}
#else
static int entry_abandoned(struct pt_thread *t, uint64_t seq)
{
	(void)t, (void)seq;
	return 0;
}
#endif

/* Waits until no thread is still inside a posix_trace_event that may have
 * seen a stream now unpublished from pt_proc.attached.  The fence pairs with
 * the compiler barrier after the odd store of cs_seq in enter() (writer.c).
 * A thread whose entry a signal handler jumped out of does not leave until
 * its next event: it is not waited for once its entry's frame is seen gone
 * (entry_abandoned).  Caller holds pt_proc.lock; the calling
 * thread itself may be inside. */
static void pt_barrier_locked(void)
{
	if (pt_fence_all(0) != 0 && pt_proc.use_membarrier)
		pt_fence_all_slowly();
	for (struct pt_thread *t = pt_proc.threads; t; t = t->next) {
		/* These loads pair with the release store of cs_seq in leave() (writer.c). */
		uint64_t seq = atomic_load_explicit(&t->cs_seq, memory_order_acquire);
		if (!(seq & 1) || pthread_equal(t->self, pthread_self()))
			continue;
		while (atomic_load_explicit(&t->cs_seq, memory_order_acquire) == seq &&
		       !entry_abandoned(t, seq))
			sched_yield();
	}
}

/* A stream this process created for itself records through a slot like a
 * stream handed over.  Returns the slot, or -1 when all are taken. */
int pt_attach_local(struct pt_map *m)
{
	pthread_mutex_lock(&pt_proc.lock);
	int slot = -1;
	for (int i = 0; i < PT_PCB_SLOTS && slot < 0; i++) {
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[i];
		uint32_t st = PT_SLOT_FREE;
		/* Pairs with the release stores of FREE (pt_detach_locked;
		 * pt_take_one_offer in join.c, rejoin_own_streams in adopt.c);
		 * against pt_remote_offer, the value only. */
		if (!atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed) &&
		    atomic_compare_exchange_strong_explicit(&s->state, &st, PT_SLOT_ATTACHED,
		                                            memory_order_acq_rel, memory_order_relaxed))
			slot = i;
	}
	if (slot >= 0) {
		struct pt_attached *a = &pt_proc.attached[slot];
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
		a->gen = ++pt_proc.next_gen;
		a->offer_gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
		a->traced = 1;
		a->names_synced = 0;
		s->fd = -1; /* ends with this image: not taken back after exec */
		pt_publish_map(a, m);
		pt_filter_follow();
		pt_seed_names(a);
	}
	pthread_mutex_unlock(&pt_proc.lock);
	return slot;
}

/* Unpublishes a slot, waits for writers inside, unmaps what the process
 * itself joined.  Caller holds the lock. */
void pt_detach_locked(int slot)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	pt_arm(slot, 0);
	/* Nothing is published with NULL (relaxed would do): the grace period is
	 * pt_barrier_locked's, paired with enter() and leave() (writer.c). */
	pt_unpublish_map(a, memory_order_release);
	pt_filter_follow();
	pt_barrier_locked();
	/* No thread writes the slot's lanes now, nor before the slot is
	 * published again (its release store of hdr, which a writer loads with
	 * acquire order, orders these stores before that writer's loads). */
	for (struct pt_thread *t = pt_proc.threads; t; t = t->next)
		pt_wlane_stale(&t->lanes[slot]);
	if (m == &a->own)
		pt_stream_unmap(&a->own);
	pt_slot_forget_exec_token(slot);
	pt_proc.pcb->slots[slot].fd = -1;
	/* Release: the slot's fd and the unmapping first; pairs with the acq_rel
	 * CAS of state in pt_remote_offer (remote.c) and pt_attach_local. */
	atomic_store_explicit(&pt_proc.pcb->slots[slot].state, PT_SLOT_FREE, memory_order_release);
}

void pt_slot_keep_across_exec(int slot, int fd)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	if (a->exec_token >= 0 || fd < 0)
		return;
	int token = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (token >= 0 && pt_token_make(token, 1) != 0) {
		close(token);
		token = -1;
	}
	a->exec_token = token;
}

void pt_slot_forget_exec_token(int slot)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	if (a->exec_token >= 0)
		close(a->exec_token);
	a->exec_token = -1;
}

void pt_detach(int slot)
{
	pthread_mutex_lock(&pt_proc.lock);
	pt_detach_locked(slot);
	pthread_mutex_unlock(&pt_proc.lock);
}

/* The streams this process records into changed (pt_proc.lock held).
 * While one stream alone is in a slot, <trace.h>'s macro can read its
 * filter through a second mapping of its header page, and an event that
 * filter excludes takes no call while the armed word is that stream's
 * alone (posixtrace__filter_for); else every armed event takes the call.
 * The armed word is given only once the stream has filtered out an event
 * (pt_filter_publish): until then an event takes the call at once,
 * without testing a filter that excludes nothing, the common case.  It is
 * withdrawn before the page changes: a reader that sees it finds that
 * stream's words, or zeros (which exclude nothing).  Release: pairs with
 * the acquire load of posixtrace__filter_for in <trace.h>'s macro. */
void pt_filter_follow(void)
{
	unsigned char *page = pt_proc.filter_page;
	size_t len = pt_proc.filter_page_len;
	const struct pt_map *only = NULL;
	int n = 0, slot = 0;
	if (!page)
		return;
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		const struct pt_map *m = atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed);
		if (m) {
			n++;
			slot = i;
			only = m;
		}
	}
	__atomic_store_n(&posixtrace__filter_for, 0, __ATOMIC_RELEASE);
	atomic_store_explicit(&pt_proc.filter_page_slot, -1, memory_order_relaxed);
	if (n == 1 && only->base &&
	    mremap(only->base, 0, len, MREMAP_MAYMOVE | MREMAP_FIXED, page) != MAP_FAILED) {
		atomic_store_explicit(&pt_proc.filter_page_slot, slot, memory_order_relaxed);
		return;
	}
	/* Zeros again; should that fail, the page stays whatever it was, and
	 * unused: filter_for is 0, which no armed word is. */
	mmap(page, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

/* Called from the event path (a filtered-out event's, in the entry's
 * grace period): a trylock only, so that it never waits there, nor on a
 * thread this one interrupted.  Under the lock pt_filter_follow is not
 * changing the page, and the page mirrors slot's stream. */
void pt_filter_publish(int slot)
{
	if (__atomic_load_n(&posixtrace__filter_for, __ATOMIC_RELAXED) != 0 ||
	    atomic_load_explicit(&pt_proc.filter_page_slot, memory_order_relaxed) != slot)
		return;
	if (pthread_mutex_trylock(&pt_proc.lock) != 0)
		return;
	if (atomic_load_explicit(&pt_proc.filter_page_slot, memory_order_relaxed) == slot)
		__atomic_store_n(&posixtrace__filter_for, 1ull << slot, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&pt_proc.lock);
}
