/* SPDX-License-Identifier: MIT */
/*
 * The process: library initialisation, the streams this process records
 * into, the grace period that lets a stream be unmapped while other threads
 * may be writing, and what a fork child keeps.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "adopt.h"
#include "handle.h"
#include "keepctl.h"
#include "channel.h"
#include "join.h"
#include "pcb.h"
#include "registry.h"
#include "writer.h"
#include "memcheck.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

static const uint64_t not_forked = 1;

struct pt_process pt_proc = {
    .pcb = &pt_proc.pcb_fallback,
    .fork_word = (volatile uint64_t *)&not_forked,
    .pcb_fd = -1,
    .reg = &pt_proc.reg_fallback,
    .reg_fd = -1,
    .chan_rx = -1,
    .chan_tx = -1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

/* What the header's posix_trace_event() macro loads: this process's armed
 * word (zero until the library has set the process up). */
const volatile unsigned long long *posixtrace__armed =
    (const volatile unsigned long long *)&pt_proc.pcb_fallback.armed;

void pt_set_pcb(struct pt_pcb *pcb)
{
	pt_proc.pcb = pcb;
	/* Read by the inline test in <trace.h> with a relaxed atomic load. */
	__atomic_store_n(&posixtrace__armed, (const volatile unsigned long long *)&pcb->armed,
	                 __ATOMIC_RELAXED);
}
static int use_global_membarrier;
static int wipe_on_fork;

pid_t pt_gettid(void) { return (pid_t)syscall(SYS_gettid); }
pid_t pt_proc_pid(void) { return pt_proc.pid; }

/* Start time and parent of a process (fields 22 and 4 of /proc/PID/stat);
 * pid 0: this process, by /proc/self, which names it also when /proc is
 * another pid namespace's than its own. */
uint64_t pt_proc_stat(pid_t pid, pid_t *ppid)
{
	char path[64], buf[1024];
	if (pid == 0)
		snprintf(path, sizeof path, "/proc/self/stat");
	else
		snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (pt_read_text(path, buf, sizeof buf) <= 0)
		return 0;
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 3 (state) follows ") "; ppid is field 4, starttime field 22 */
	for (int field = 3; field <= 22 && p; field++) {
		p = strchr(p + 1, ' ');
		if (field == 4 && p && ppid)
			*ppid = (pid_t)strtol(p + 1, NULL, 10);
	}
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

uint64_t pt_owner_token(pid_t pid, uint64_t starttime)
{
	return ((uint64_t)(uint32_t)pid << 32) | (uint32_t)starttime;
}

/* Whether the process a lane owner token names may still exist.  A pid
 * is a number in one pid namespace: a token written in another one, or
 * checked through a /proc of another one, says nothing here, and its
 * owner counts as alive (its lanes wait for a process of its own
 * namespace, or the stream's end). */
int pt_owner_alive(uint64_t token, uint64_t pidns)
{
	pid_t pid = (pid_t)(token >> 32);
	if (!pt_proc.pidns || pidns != pt_proc.pidns || !pt_proc.proc_is_ours)
		return 1;
	if (pid <= 0)
		return 0;
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	uint64_t start = pt_proc_stat(pid, NULL);
	return start && (uint32_t)start == (uint32_t)token;
}

static void set_identity(void)
{
	struct stat st;
	char self[32];
	pt_proc.pid = getpid();
	pt_proc.starttime = pt_proc_stat(0, NULL);
	pt_proc.owner_token = pt_owner_token(pt_proc.pid, pt_proc.starttime);
	pt_proc.pidns = stat("/proc/self/ns/pid", &st) == 0 ? (uint64_t)st.st_ino : 0;
	ssize_t n = readlink("/proc/self", self, sizeof self - 1);
	pt_proc.proc_is_ours = n > 0 && (self[n] = '\0', atoi(self) == pt_proc.pid);
}

/* A word the kernel zeroes in a fork child (MADV_WIPEONFORK). */
static void make_fork_word(void)
{
	uint64_t *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	if (madvise(p, 4096, MADV_WIPEONFORK) != 0) {
		munmap(p, 4096);
		return;
	}
	*p = 1;
	pt_proc.fork_word = p;
	wipe_on_fork = 1;
}

static void register_membarrier(void)
{
	/* Writers order their "inside" mark and their reads of the stream
	 * table with a compiler barrier only; the rare side (a reader going
	 * to sleep, a stream being unmapped) pays with membarrier(2).  The
	 * global command covers readers in other processes. */
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	    (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0) {
		pt_proc.use_membarrier = 1;
		use_global_membarrier = 1;
	}
}

static void do_init(void)
{
	set_identity();
	pt_proc.pcb_fallback.magic = PT_PCB_MAGIC;
	pt_proc.reg_fallback.magic = PT_REGISTRY_MAGIC;
	pt_proc.reg_fallback.size = sizeof pt_proc.reg_fallback;
	atomic_init(&pt_proc.reg_fallback.next_name, 1);
	/* Without a key (EAGAIN: the process took all PTHREAD_KEYS_MAX), events
	 * are still recorded; an exiting thread's lanes then go back only when
	 * the process ends.  Setting another library's key would be worse. */
	pt_proc.have_thread_key = pthread_key_create(&pt_proc.thread_key, pt_thread_exit) == 0;
	register_membarrier();
	make_fork_word();
	pthread_atfork(pt_take_offers_before_fork, NULL, pt_fork_child);
	pt_adopt_at_load();
}

void pt_init(void) { pthread_once(&init_once, do_init); }

__attribute__((constructor)) static void pt_constructor(void) { pt_init(); }

/* Full barrier on every thread of the process, and with `global` on every
 * registered process too (or on this thread only, when writers fence
 * themselves because membarrier is unavailable).  Returns 0 when the
 * barrier covered other processes.  The heavy side of the asymmetric pairs:
 * the compiler barriers in enter(), append_record (writer.c) and
 * pt_handle_enter_biased (handle.c). */
/* membarrier(2) failed although writers count on it (they fence with a
 * compiler barrier only): a store still in another CPU's store buffer
 * reaches memory within nanoseconds, and a thread switched out went through
 * a full barrier, so waiting a millisecond stands in for the barrier. */
void pt_fence_all_slowly(void)
{
	pt_full_fence();
	struct timespec pause = {0, 1000000L};
	nanosleep(&pause, NULL);
	pt_full_fence();
}

int pt_fence_all(int global)
{
	int cmd = global ? MEMBARRIER_CMD_GLOBAL_EXPEDITED : MEMBARRIER_CMD_PRIVATE_EXPEDITED;
	if (pt_proc.use_membarrier && (!global || use_global_membarrier) &&
	    syscall(SYS_membarrier, cmd, 0, 0) == 0)
		return 0;
	pt_full_fence();
	return -1;
}

/* Waits until no thread is still inside a posix_trace_event that may have
 * seen a stream now unpublished from pt_proc.attached.  The fence pairs with
 * the compiler barrier after the odd store of cs_seq in enter() (writer.c).
 * A thread whose entry a signal handler jumped out of does not leave until
 * its next event: it is not waited for once its entry's frame is seen gone
 * (pt_entry_abandoned, writer.c).  Caller holds pt_proc.lock; the calling
 * thread itself may be inside. */
void pt_barrier_locked(void)
{
	if (pt_fence_all(0) != 0 && pt_proc.use_membarrier)
		pt_fence_all_slowly();
	for (struct pt_thread *t = pt_proc.threads; t; t = t->next) {
		/* These loads pair with the release store of cs_seq in leave() (writer.c). */
		uint64_t seq = atomic_load_explicit(&t->cs_seq, memory_order_acquire);
		if (!(seq & 1) || pthread_equal(t->self, pthread_self()))
			continue;
		while (atomic_load_explicit(&t->cs_seq, memory_order_acquire) == seq &&
		       !pt_entry_abandoned(t, seq))
			sched_yield();
	}
}

void pt_arm(int slot, int on)
{
	uint64_t bit = 1ull << slot;
	/* Release: the slot's map and the stream's state first; pairs with the
	 * acquire loads of armed in record, record_general (writer.c) and
	 * pt_take_offers_before_fork (join.c). */
	if (on)
		atomic_fetch_or_explicit(&pt_proc.pcb->armed, bit, memory_order_release);
	else
		atomic_fetch_and_explicit(&pt_proc.pcb->armed, ~bit, memory_order_release);
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
	atomic_store_explicit(&a->map, NULL, memory_order_release);
	pt_barrier_locked();
	if (m == &a->own)
		pt_stream_unmap(&a->own);
	pt_proc.pcb->slots[slot].fd = -1;
	/* Release: the slot's fd and the unmapping first; pairs with the acq_rel
	 * CAS of state in pt_remote_offer (remote.c) and pt_attach_local. */
	atomic_store_explicit(&pt_proc.pcb->slots[slot].state, PT_SLOT_FREE, memory_order_release);
}

void pt_detach(int slot)
{
	pthread_mutex_lock(&pt_proc.lock);
	pt_detach_locked(slot);
	pthread_mutex_unlock(&pt_proc.lock);
}

/* ---- fork ------------------------------------------------------------ */

/* Whether the child keeps recording into the stream of this slot:
 * POSIX_TRACE_INHERITED, and not shut down. */
static int child_keeps(struct pt_attached *a, struct pt_map *m)
{
	return a->traced && m->inherited &&
	       atomic_load_explicit(&pt_hdr(m)->state, memory_order_relaxed) != PT_ST_DEAD;
}

static int sort_streams_for_child(void)
{
	int kept = 0;
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
		if (!m)
			continue;
		if (child_keeps(a, m)) {
			if (m != &a->own) { /* the controller's own stream: now the child's */
				a->own = *m;
				pt_handle_forget_map(m);
			}
			a->gen = ++pt_proc.next_gen;
			pt_publish_map(a, &a->own);
			kept = 1;
			continue;
		}
		if (m == &a->own)
			pt_stream_unmap(&a->own);
		atomic_store_explicit(&a->map, NULL, memory_order_relaxed);
	}
	return kept;
}

/* A block and channel of its own: the parent's are the parent's. */
static void new_identity_objects(void)
{
	if (pt_proc.pcb != &pt_proc.pcb_fallback)
		munmap(pt_proc.pcb, sizeof *pt_proc.pcb);
	if (pt_proc.pcb_fd >= 0)
		close(pt_proc.pcb_fd);
	if (pt_proc.chan_rx >= 0)
		close(pt_proc.chan_rx);
	if (pt_proc.chan_tx >= 0)
		close(pt_proc.chan_tx);
	pt_proc.chan_rx = pt_proc.chan_tx = -1;
	pt_set_pcb(&pt_proc.pcb_fallback);
	pt_proc.pcb_fd = -1;
	memset(&pt_proc.pcb_fallback, 0, sizeof pt_proc.pcb_fallback);
	pt_channel_create(&pt_proc.chan_rx, &pt_proc.chan_tx);
	if (pt_pcb_create() != 0)
		pt_pcb_init_own(pt_proc.pcb);
}

/*
 * The child of fork() keeps the streams traced with inheritance (recording
 * from lanes of its own) and drops the others; the parent's trace stream
 * identifiers are not valid in it.  Only the forking thread exists in the
 * child.  Runs as the fork handler, or from the child's first event when a
 * fork handler that ran before the library's posted one (the fork word).
 */
void pt_fork_child(void)
{
	if (pt_forking_keeper())
		return; /* the keeper sets itself up (keeper.c) */
	if (wipe_on_fork && *pt_proc.fork_word)
		return;
	pthread_mutex_init(&pt_proc.lock, NULL);
	set_identity();
	int kept = sort_streams_for_child();
	if (!kept)
		pt_registry_copy_after_fork();
	new_identity_objects();
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
		if (!m)
			continue;
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[i];
		atomic_store_explicit(&s->state, PT_SLOT_ATTACHED, memory_order_relaxed);
		if (a->own.fd >= 0)
			fcntl(a->own.fd, F_SETFD, 0);
		pt_record_slot_fd(i, a->own.fd);
		a->offer_gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
		pt_arm(i, 1);
	}
	pt_forget_other_threads();
	pt_handles_after_fork();
	if (wipe_on_fork)
		*pt_proc.fork_word = 1;
}
