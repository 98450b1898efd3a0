/*
 * The process side: library initialisation, the streams this process
 * records into, its threads, the grace period that lets a stream be unmapped
 * while other threads may be writing, and what a forked child keeps.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

struct pt_process pt_proc = {.lock = PTHREAD_MUTEX_INITIALIZER};
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void after_fork_child(void);
PT_HIDDEN void pt_thread_exit(void *arg);
PT_HIDDEN void pt_forget_other_threads(void);

static void do_init(void)
{
	pt_proc.pid = getpid();
	pthread_key_create(&pt_proc.thread_key, pt_thread_exit);
	/* Writers order their "inside" mark and their reads of the stream
	 * table with a compiler barrier only; the rare side (a reader going
	 * to sleep, a stream being unmapped) pays with membarrier(2). */
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
		pt_proc.use_membarrier = 1;
	pthread_atfork(NULL, NULL, after_fork_child);
}

void pt_init(void) { pthread_once(&init_once, do_init); }

__attribute__((constructor)) static void pt_constructor(void) { pt_init(); }

/* Full barrier on every thread of the process (or on this one only, when
 * writers fence themselves because membarrier is unavailable). */
static void process_fence(void)
{
	if (!pt_proc.use_membarrier ||
	    syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
		pt_full_fence();
}

PT_HIDDEN void pt_reader_fence(void) { process_fence(); }

/* Waits until no thread is still inside a posix_trace_event that may have
 * seen a stream now unpublished from pt_proc.attached. */
void pt_barrier(void)
{
	process_fence();
	pthread_mutex_lock(&pt_proc.lock);
	for (struct pt_thread *t = pt_proc.threads; t; t = t->next) {
		uint64_t seq = atomic_load_explicit(&t->cs_seq, memory_order_acquire);
		if (!(seq & 1) || pthread_equal(t->self, pthread_self()))
			continue;
		while (atomic_load_explicit(&t->cs_seq, memory_order_acquire) == seq)
			sched_yield();
	}
	pthread_mutex_unlock(&pt_proc.lock);
}

int pt_attach(struct pt_map *m)
{
	int slot = -1;
	pthread_mutex_lock(&pt_proc.lock);
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		if (!atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed)) {
			slot = i;
			break;
		}
	}
	if (slot >= 0) {
		pt_proc.attached[slot].gen = ++pt_proc.next_gen;
		pt_seed_names(m);
		atomic_store_explicit(&pt_proc.attached[slot].map, m, memory_order_release);
	}
	pthread_mutex_unlock(&pt_proc.lock);
	return slot;
}

void pt_arm(int slot, int on)
{
	uint64_t bit = 1ull << slot;
	if (on)
		atomic_fetch_or_explicit(&pt_proc.armed, bit, memory_order_release);
	else
		atomic_fetch_and_explicit(&pt_proc.armed, ~bit, memory_order_release);
}

void pt_detach(int slot)
{
	pt_arm(slot, 0);
	atomic_store_explicit(&pt_proc.attached[slot].map, NULL, memory_order_release);
	pt_barrier();
}

/* The child of fork() is not traced by its parent's streams (inheritance
 * is POSIX_TRACE_CLOSE_FOR_CHILD) and the parent's trace stream ids are not
 * valid in it.  Only the forking thread exists in the child. */
static void after_fork_child(void)
{
	if (pt_forking_keeper())
		return; /* the keeper sets itself up (keeper.c) */
	pthread_mutex_init(&pt_proc.lock, NULL);
	pt_proc.pid = getpid();
	atomic_store_explicit(&pt_proc.armed, 0, memory_order_relaxed);
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		atomic_store_explicit(&pt_proc.attached[i].map, NULL, memory_order_relaxed);
	pt_forget_other_threads();
	pt_handles_after_fork();
}
