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

#endif
