/* SPDX-License-Identifier: MIT */
/*
 * What every source file of libposixtrace shares.  Nothing here is exported:
 * the public API is <trace.h> and <posixtrace.h> (see libposixtrace.map).
 *
 * Conventions, the same in every layer:
 * - a function that can fail returns 0 or a positive error number (never -1
 *   and errno); the public functions return exactly the numbers their pages
 *   allow, plus the extensions docs/CONFORMANCE.md lists;
 * - a function that looks something up returns a pointer or index, NULL or
 *   PT_NONE when there is none;
 * - predicates return int, 1 or 0, and are named as questions (*_alive,
 *   *_ok, pt_handle_filtered).
 * Memory that another process can write (layout.h) is read only through the
 * validated geometry of struct pt_map and with bounds checks at each use.
 */
#ifndef PT_INTERNAL_H
#define PT_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/types.h>
#include "layout.h"

/* Everything else is hidden: the library is built with -fvisibility=hidden. */

/* A full fence.  ThreadSanitizer does not model fences (gcc refuses them);
 * a sequentially consistent read-modify-write is a full barrier on x86 and
 * is understood by the sanitizer. */
#if defined(__SANITIZE_THREAD__)
#define pt_full_fence()                                                              \
	do {                                                                         \
		static _Atomic int pt_fence_word_;                                   \
		atomic_fetch_add_explicit(&pt_fence_word_, 0, memory_order_seq_cst); \
	} while (0)
#else
#define pt_full_fence() atomic_thread_fence(memory_order_seq_cst)
#endif
#define PT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Streams one process may record into at once (its own, joined or handed
 * over): the slots of its control block.  Identifiers, logs opened included,
 * are counted apart (TRACE_SYS_MAX). */
#define PT_MAX_STREAMS PT_PCB_SLOTS
_Static_assert(TRACE_SYS_MAX <= PT_MAX_STREAMS, "a handle per stream slot");

/* ---- attributes (attr.c), system names (registry.c) ------------------- */

#define PT_ATTR_MAGIC 0x70744154u
#define PT_DEFAULT_STREAM_SIZE (4u << 20)
#define PT_DEFAULT_MAX_DATA 1024u
#define PT_DEFAULT_LOG_SIZE (64u << 20)
#define PT_STR_(x) #x
#define PT_STR(x) PT_STR_(x)
#define PT_GENVERSION                                                                  \
	"posixtrace " PT_STR(POSIXTRACE_VERSION_MAJOR) "." PT_STR(POSIXTRACE_VERSION_MINOR) "." \
	    PT_STR(POSIXTRACE_VERSION_PATCH)

void pt_attr_defaults(struct pt_attr *a);
int pt_attr_valid(const trace_attr_t *attr);
const char *pt_system_event_name(trace_event_id_t id);

/* ---- the process: its identity, its threads' grace periods ------------ */

void pt_init(void);
/* Start time of a process (clock ticks since boot, /proc/PID/stat field
 * 22) and its parent: with the pid, it names a process across pid reuse. */
uint64_t pt_proc_stat(pid_t pid, pid_t *ppid);
/* Full barrier on every thread of this process (and of every process, with
 * global); 0 when membarrier did it. */
int pt_fence_all(int global);
void pt_fence_all_slowly(void);
pid_t pt_gettid(void);
pid_t pt_proc_pid(void);
/* The start of a small text file (/proc, /sys), NUL-terminated: the bytes
 * read, or -1 (memcheck.c). */
ssize_t pt_read_text(const char *path, char *buf, size_t size);

#endif
