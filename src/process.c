/* SPDX-License-Identifier: MIT */
/*
 * The process's own state (struct pt_process): who it is, the streams it
 * records into (its slots), and the grace period that lets a stream be
 * unmapped while other threads may be writing.  What happens at load and
 * in a fork child is lifecycle.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <sys/mman.h>
#if __has_include(<sys/rseq.h>)
#include <sys/rseq.h>
#endif
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "layout.h"
#include "memcheck.h"
#include "process.h"

#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK 18
#endif

static uint64_t not_forked = 2; /* pt_fork_word_value() once it is known */
static _Atomic uint64_t no_fast_armed; /* 0: matches no armed word */
struct pt_stream_hdr pt_unmapped_hdr;

/* Set while this thread forks a keeper (keepctl.c): the fork handlers and
 * exit() in the child know they are in a keeper. */
__thread int pt_forking_keeper;

struct pt_process pt_proc = {
    .pcb = &pt_proc.pcb_fallback,
    .fork_word = (volatile uint64_t *)&not_forked,
    .fast_armed = &no_fast_armed,
    .pcb_fd = -1,
    .reg = &pt_proc.reg_fallback,
    .reg_fd = -1,
    .chan_rx = -1,
    .chan_tx = -1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
    .filter_page_slot = -1,
};

/* What the header's posix_trace_event() macro loads: this process's armed
 * word (zero until the library has set the process up). */
const volatile unsigned long long *posixtrace__armed =
    (const volatile unsigned long long *)&pt_proc.pcb_fallback.armed;

/* What the macro tests an event's id against while one stream alone may
 * record this process (<trace.h>, slots.c's pt_filter_follow): until the
 * library has a page for it, no filter, and no armed word it is for. */
static const unsigned long long no_filter[PT_NEVENT_IDS / 64];
const volatile unsigned long long *posixtrace__filter = no_filter;
volatile unsigned long long posixtrace__filter_for;

/* The page the macro reads the filter from: private zeros, or the header
 * page of the one stream the process records into (pt_filter_follow).  It
 * is never unmapped, only replaced (MAP_FIXED), so a reader between the
 * pointer and the word always finds a page. */
static void make_filter_page(void)
{
	size_t len = (size_t)sysconf(_SC_PAGESIZE);
	_Static_assert(offsetof(struct pt_stream_hdr, filter) + sizeof(((struct pt_stream_hdr *)0)->filter) <= 4096,
	               "the filter lies in the header's first page");
	void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return;
	pt_proc.filter_page = p;
	pt_proc.filter_page_len = len;
	__atomic_store_n(&posixtrace__filter,
	                 (const volatile unsigned long long *)(void *)((unsigned char *)p +
	                                                              offsetof(struct pt_stream_hdr, filter)),
	                 __ATOMIC_RELAXED);
}

void pt_set_pcb(struct pt_pcb *pcb)
{
	pt_proc.pcb = pcb;
	/* Read by the inline test in <trace.h> with a relaxed atomic load. */
	__atomic_store_n(&posixtrace__armed, (const volatile unsigned long long *)&pcb->armed,
	                 __ATOMIC_RELAXED);
}
static int use_global_membarrier;

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

static uint64_t pt_owner_token(pid_t pid, uint64_t starttime)
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

void pt_proc_identify(void)
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
	*p = pt_fork_word_value();
	pt_proc.fork_word = p;
	pt_proc.fast_armed = (_Atomic uint64_t *)(p + 1);
	pt_proc.wipe_on_fork = 1;
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

/* The process's own state, before any stream: who it is, the objects it
 * falls back on, the barrier writers count on, the word a fork wipes. */
/* -1 in every thread: the CPU number read where rseq is not registered. */
static __thread int32_t pt_no_cpu __attribute__((tls_model("initial-exec"))) = -1;

/* Where each thread's CPU number is, from its thread pointer: glibc
 * (2.35 and later) registers an rseq area for every thread at a fixed
 * offset (__rseq_offset), whose cpu_id the kernel keeps; __rseq_size 0:
 * none registered (the glibc.pthread.rseq tunable), and events carry no
 * CPU.  A static TLS variable's offset is the same in every thread too. */
static void find_cpu_word(void)
{
	char *tp = __builtin_thread_pointer();
#ifdef RSEQ_SIG
	if (__rseq_size >= offsetof(struct rseq, cpu_id) + sizeof(uint32_t)) {
		pt_proc.cpu_off = (intptr_t)__rseq_offset + (intptr_t)offsetof(struct rseq, cpu_id);
		return;
	}
#endif
	pt_proc.cpu_off = (intptr_t)((char *)&pt_no_cpu - tp);
}

/* pt_proc.lock checks its owner: a thread that already holds it (a signal
 * handler's event that interrupted the library in that thread) is refused
 * with EDEADLK where a plain mutex would hang (pt_take_offers_waiting,
 * join.c). */
void pt_proc_lock_init(void)
{
	pthread_mutexattr_t ma;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_settype(&ma, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&pt_proc.lock, &ma);
	pthread_mutexattr_destroy(&ma);
}

void pt_proc_setup(void)
{
	pt_proc_lock_init();
	pt_proc_identify();
	find_cpu_word();
	pt_proc.pcb_fallback.magic = PT_PCB_MAGIC;
	pt_proc.reg_fallback.magic = PT_REGISTRY_MAGIC;
	pt_proc.reg_fallback.size = sizeof pt_proc.reg_fallback;
	atomic_init(&pt_proc.reg_fallback.next_name, 1);
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		pt_proc.attached[i].exec_token = -1;
		atomic_init(&pt_proc.attached[i].hdr, &pt_unmapped_hdr);
	}
	register_membarrier();
	not_forked = pt_fork_word_value();
	make_fork_word();
	make_filter_page();
}

/* Full barrier on every thread of the process, and with `global` on every
 * registered process too (or on this thread only, when writers fence
 * themselves because membarrier is unavailable).  Returns 0 when the
 * barrier covered other processes.  The heavy side of the asymmetric pairs:
 * the compiler barriers in enter(), append_record (writer.c) and
 * pt_handle_enter_biased (handle.h). */
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
