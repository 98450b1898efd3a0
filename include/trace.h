/* SPDX-License-Identifier: MIT */
/*
 * <trace.h> - the POSIX Trace option (IEEE Std 1003.1) for Linux.
 *
 * Types, constants and prototypes of the Trace, Trace Event Filter, Trace Log
 * and Trace Inherit options, as the standard names them.  Everything that is
 * not in the standard is marked as an extension and prefixed "posixtrace_".
 * Implementation-defined values are listed in docs/CONFORMANCE.md.
 */
#ifndef _POSIXTRACE_TRACE_H
#define _POSIXTRACE_TRACE_H

#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

#if !defined(__cplusplus) && defined(__STDC_VERSION__) && __STDC_VERSION__ >= 199901L
#define __PT_RESTRICT restrict
#elif defined(__GNUC__)
#define __PT_RESTRICT __restrict__
#else
#define __PT_RESTRICT
#endif

/* Version of this implementation (extension). */
#define POSIXTRACE_VERSION_MAJOR 0
#define POSIXTRACE_VERSION_MINOR 2
#define POSIXTRACE_VERSION_PATCH 0

/* <limits.h> minimum values of the Trace option. */
#ifndef _POSIX_TRACE_EVENT_NAME_MAX
#define _POSIX_TRACE_EVENT_NAME_MAX 30
#endif
#ifndef _POSIX_TRACE_NAME_MAX
#define _POSIX_TRACE_NAME_MAX 8
#endif
#ifndef _POSIX_TRACE_SYS_MAX
#define _POSIX_TRACE_SYS_MAX 8
#endif
#ifndef _POSIX_TRACE_USER_EVENT_MAX
#define _POSIX_TRACE_USER_EVENT_MAX 32
#endif

/* <limits.h> runtime invariant values of this implementation. */
#ifndef TRACE_EVENT_NAME_MAX
#define TRACE_EVENT_NAME_MAX 63
#endif
#ifndef TRACE_NAME_MAX
#define TRACE_NAME_MAX 64
#endif
#ifndef TRACE_SYS_MAX
#define TRACE_SYS_MAX 64
#endif
#ifndef TRACE_USER_EVENT_MAX
#define TRACE_USER_EVENT_MAX 992
#endif

/* Types (<sys/types.h> in the standard; glibc does not define them). */
#ifndef __trace_attr_t_defined
#define __trace_attr_t_defined 1
typedef struct {
	union {
		unsigned char __size[256];
		long long __align;
	} __u;
} trace_attr_t;
#endif

#ifndef __trace_event_id_t_defined
#define __trace_event_id_t_defined 1
typedef unsigned int trace_event_id_t;
#endif

#ifndef __trace_event_set_t_defined
#define __trace_event_set_t_defined 1
typedef struct {
	unsigned long long __bits[16]; /* one bit per trace event type */
} trace_event_set_t;
#endif

#ifndef __trace_id_t_defined
#define __trace_id_t_defined 1
typedef unsigned long trace_id_t;
#endif

struct posix_trace_event_info {
	trace_event_id_t posix_event_id;
	pid_t posix_pid;
	void *posix_prog_address;
	pthread_t posix_thread_id;
	struct timespec posix_timestamp;
	int posix_truncation_status;
};

struct posix_trace_status_info {
	int posix_stream_status;
	int posix_stream_full_status;
	int posix_stream_overrun_status;
	int posix_stream_flush_status;
	int posix_stream_flush_error;
	int posix_log_overrun_status;
	int posix_log_full_status;
	/* Extension: events lost in the stream since the last call, reset
	 * like posix_stream_overrun_status. */
	unsigned long long posixtrace_lost_events;
};

/* posix_stream_status */
#define POSIX_TRACE_SUSPENDED 0
#define POSIX_TRACE_RUNNING 1

/* posix_stream_full_status, posix_log_full_status */
#define POSIX_TRACE_NOT_FULL 0
#define POSIX_TRACE_FULL 1

/* posix_stream_overrun_status, posix_log_overrun_status: reset to zero on read */
#define POSIX_TRACE_NO_OVERRUN 0
#define POSIX_TRACE_OVERRUN 1

/* posix_stream_flush_status */
#define POSIX_TRACE_NOT_FLUSHING 0
#define POSIX_TRACE_FLUSHING 1

/* posix_truncation_status */
#define POSIX_TRACE_NOT_TRUNCATED 0
#define POSIX_TRACE_TRUNCATED_RECORD 1
#define POSIX_TRACE_TRUNCATED_READ 2

/* stream-full-policy and log-full-policy */
#define POSIX_TRACE_LOOP 1
#define POSIX_TRACE_UNTIL_FULL 2
#define POSIX_TRACE_FLUSH 3
#define POSIX_TRACE_APPEND 4

/* inheritance */
#define POSIX_TRACE_CLOSE_FOR_CHILD 0
#define POSIX_TRACE_INHERITED 1

/* posix_trace_eventset_fill() */
#define POSIX_TRACE_WOPID_EVENTS 1
#define POSIX_TRACE_SYSTEM_EVENTS 2
#define POSIX_TRACE_ALL_EVENTS 3

/* posix_trace_set_filter() */
#define POSIX_TRACE_SET_EVENTSET 1
#define POSIX_TRACE_ADD_EVENTSET 2
#define POSIX_TRACE_SUB_EVENTSET 3

/* System trace event types (trace_event_id_t values). */
#define POSIX_TRACE_START ((trace_event_id_t)1)
#define POSIX_TRACE_STOP ((trace_event_id_t)2)
#define POSIX_TRACE_FILTER ((trace_event_id_t)3)
#define POSIX_TRACE_OVERFLOW ((trace_event_id_t)4)
#define POSIX_TRACE_RESUME ((trace_event_id_t)5)
#define POSIX_TRACE_FLUSH_START ((trace_event_id_t)6)
#define POSIX_TRACE_FLUSH_STOP ((trace_event_id_t)7)
#define POSIX_TRACE_ERROR ((trace_event_id_t)8)

/* The predefined user trace event, under both spellings of the standard. */
#define POSIX_TRACE_UNNAMED_USER_EVENT ((trace_event_id_t)32)
#define POSIX_TRACE_UNNAMED_USEREVENT POSIX_TRACE_UNNAMED_USER_EVENT

/* Attributes */
int posix_trace_attr_destroy(trace_attr_t *);
int posix_trace_attr_init(trace_attr_t *);
int posix_trace_attr_getclockres(const trace_attr_t *, struct timespec *);
int posix_trace_attr_getcreatetime(const trace_attr_t *, struct timespec *);
int posix_trace_attr_getgenversion(const trace_attr_t *, char *);
int posix_trace_attr_getname(const trace_attr_t *, char *);
int posix_trace_attr_setname(trace_attr_t *, const char *);
int posix_trace_attr_getinherited(const trace_attr_t *__PT_RESTRICT, int *__PT_RESTRICT);
int posix_trace_attr_setinherited(trace_attr_t *, int);
int posix_trace_attr_getlogfullpolicy(const trace_attr_t *__PT_RESTRICT, int *__PT_RESTRICT);
int posix_trace_attr_setlogfullpolicy(trace_attr_t *, int);
int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *__PT_RESTRICT, int *__PT_RESTRICT);
int posix_trace_attr_setstreamfullpolicy(trace_attr_t *, int);
int posix_trace_attr_getlogsize(const trace_attr_t *__PT_RESTRICT, size_t *__PT_RESTRICT);
int posix_trace_attr_setlogsize(trace_attr_t *, size_t);
int posix_trace_attr_getmaxdatasize(const trace_attr_t *__PT_RESTRICT, size_t *__PT_RESTRICT);
int posix_trace_attr_setmaxdatasize(trace_attr_t *, size_t);
int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *__PT_RESTRICT,
                                           size_t *__PT_RESTRICT);
int posix_trace_attr_getmaxusereventsize(const trace_attr_t *__PT_RESTRICT, size_t,
                                         size_t *__PT_RESTRICT);
int posix_trace_attr_getstreamsize(const trace_attr_t *__PT_RESTRICT, size_t *__PT_RESTRICT);
int posix_trace_attr_setstreamsize(trace_attr_t *, size_t);

/* Streams (controller) */
int posix_trace_create(pid_t, const trace_attr_t *__PT_RESTRICT, trace_id_t *__PT_RESTRICT);
int posix_trace_create_withlog(pid_t, const trace_attr_t *__PT_RESTRICT, int,
                               trace_id_t *__PT_RESTRICT);
int posix_trace_flush(trace_id_t);
int posix_trace_shutdown(trace_id_t);
int posix_trace_start(trace_id_t);
int posix_trace_stop(trace_id_t);
int posix_trace_clear(trace_id_t);
int posix_trace_get_attr(trace_id_t, trace_attr_t *);
int posix_trace_get_status(trace_id_t, struct posix_trace_status_info *);

/* Event types */
int posix_trace_eventid_open(const char *__PT_RESTRICT, trace_event_id_t *__PT_RESTRICT);
int posix_trace_trid_eventid_open(trace_id_t, const char *__PT_RESTRICT,
                                  trace_event_id_t *__PT_RESTRICT);
int posix_trace_eventid_equal(trace_id_t, trace_event_id_t, trace_event_id_t);
int posix_trace_eventid_get_name(trace_id_t, trace_event_id_t, char *);
int posix_trace_eventtypelist_getnext_id(trace_id_t, trace_event_id_t *__PT_RESTRICT,
                                         int *__PT_RESTRICT);
int posix_trace_eventtypelist_rewind(trace_id_t);

/* Event sets and filters */
int posix_trace_eventset_add(trace_event_id_t, trace_event_set_t *);
int posix_trace_eventset_del(trace_event_id_t, trace_event_set_t *);
int posix_trace_eventset_empty(trace_event_set_t *);
int posix_trace_eventset_fill(trace_event_set_t *, int);
int posix_trace_eventset_ismember(trace_event_id_t, const trace_event_set_t *__PT_RESTRICT,
                                  int *__PT_RESTRICT);
int posix_trace_get_filter(trace_id_t, trace_event_set_t *);
int posix_trace_set_filter(trace_id_t, const trace_event_set_t *, int);

/* Recording (traced process) */
void posix_trace_event(trace_event_id_t, const void *__PT_RESTRICT, size_t);

/* posix_trace_event() is also a macro (XSH 2.1.1 allows it): when no stream
 * traces the process it costs the caller one load and a branch, without a
 * call.  The word is the library's, set before any stream can trace the
 * process; posixtrace__event_armed() is posix_trace_event() less that test,
 * given the word the macro loaded (posixtrace__event(), which loads it
 * again, is what binaries built against 0.2 and 0.3 call).
 * The macro evaluates each argument exactly once, traced or not, and calls
 * posixtrace__event_armed() from the caller's own code at every optimisation
 * level, so that the return address the library records is the call site's
 * (posix_prog_address); the empty asm after the call keeps it from
 * becoming a tail call, whose return address would be the caller's
 * caller's.  It needs GNU C's statement expressions: other compilers call
 * the function.  (posix_trace_event)(...) or its address reach the
 * function itself; define POSIXTRACE_NO_INLINE to always call it.
 * While one stream alone may record the process and has filtered out an
 * event, an event that stream's filter excludes costs no call either:
 * posixtrace__filter_for is then the armed word of that stream alone, and
 * posixtrace__filter its filter's words as its controller writes them (a
 * bit set: filtered out); until then (0), any other armed word, and an id
 * beyond the words, take the call, which decides as before. */
extern const volatile unsigned long long *posixtrace__armed;
extern volatile unsigned long long posixtrace__filter_for;
extern const volatile unsigned long long *posixtrace__filter;
void posixtrace__event(trace_event_id_t, const void *, size_t);
void posixtrace__event_armed(trace_event_id_t, const void *, size_t, unsigned long long);
#if !defined(POSIXTRACE_NO_INLINE) && defined(__GNUC__)
/* Atomic loads: the library changes both the pointer and the word while
 * other threads run (a plain load is a data race in C11 terms).  The word
 * with acquire, as the library would load it: posixtrace__event_armed()
 * trusts the caller's load (a plain load on x86-64). */
#define __PT_ARMED() __atomic_load_n(__atomic_load_n(&posixtrace__armed, __ATOMIC_RELAXED), \
                                     __ATOMIC_ACQUIRE)
#define __PT_FILTERED(id) ((unsigned)(id) < 1024u && \
	((__atomic_load_n(&__atomic_load_n(&posixtrace__filter, __ATOMIC_RELAXED)[(unsigned)(id) / 64u], \
	                  __ATOMIC_RELAXED) >> ((unsigned)(id) % 64u)) & 1u))
#define posix_trace_event(id, data, len) __extension__({ \
	trace_event_id_t __pt_ev_id = (id); \
	const void *__pt_ev_data = (data); \
	size_t __pt_ev_len = (len); \
	unsigned long long __pt_ev_armed = __PT_ARMED(); \
	if (__builtin_expect(__pt_ev_armed != 0, 0) && \
	    (__pt_ev_armed != __atomic_load_n(&posixtrace__filter_for, __ATOMIC_ACQUIRE) || \
	     !__PT_FILTERED(__pt_ev_id))) { \
		posixtrace__event_armed(__pt_ev_id, __pt_ev_data, __pt_ev_len, __pt_ev_armed); \
		__asm__ __volatile__(""); \
	} \
	(void)0; \
})
#endif

/* Retrieval (analyzer) */
int posix_trace_getnext_event(trace_id_t, struct posix_trace_event_info *__PT_RESTRICT,
                              void *__PT_RESTRICT, size_t, size_t *__PT_RESTRICT,
                              int *__PT_RESTRICT);
int posix_trace_timedgetnext_event(trace_id_t, struct posix_trace_event_info *__PT_RESTRICT,
                                   void *__PT_RESTRICT, size_t, size_t *__PT_RESTRICT,
                                   int *__PT_RESTRICT, const struct timespec *__PT_RESTRICT);
int posix_trace_trygetnext_event(trace_id_t, struct posix_trace_event_info *__PT_RESTRICT,
                                 void *__PT_RESTRICT, size_t, size_t *__PT_RESTRICT,
                                 int *__PT_RESTRICT);

/* Pre-recorded streams (Trace Log option) */
int posix_trace_open(int, trace_id_t *);
int posix_trace_rewind(trace_id_t);
int posix_trace_close(trace_id_t);

#ifdef __cplusplus
}
#endif

#endif /* _POSIXTRACE_TRACE_H */
