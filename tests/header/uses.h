/* SPDX-License-Identifier: MIT */
/*
 * Included at the end of every tests/header/ source file, after <trace.h> and the
 * system headers in the order that file tests.  Checks (at compile time only) what
 * XBD <trace.h> and the <limits.h>/<sys/types.h> excerpts require of <trace.h>:
 * every POSIX_TRACE_* constant is an integer constant expression, distinct from the
 * others of its group; both spellings of the unnamed user event are the same id;
 * the TRACE_* limits and their _POSIX_TRACE_* minimums have the values of the
 * contract; every type and every struct member exists with its spec type; and every
 * one of the 50 functions is declared with exactly the prototype of the spec (its
 * address is assigned to a pointer of the spec's type).  main() is defined here.
 */
#ifndef PTH_USES_H
#define PTH_USES_H

#ifdef __cplusplus
#define PTH_R /* restrict is not C++; top-level qualifiers do not change the type */
#else
#define PTH_R restrict
#endif

/* A compile-time assertion that works in C99 and C++11 alike. */
#define PTH_ASSERT(name, cond) typedef char pth_assert_##name[(cond) ? 1 : -1]

/* ---- limits (<limits.h> values and minimums) ---------------------------------- */
PTH_ASSERT(posix_event_name_max, _POSIX_TRACE_EVENT_NAME_MAX == 30);
PTH_ASSERT(posix_name_max, _POSIX_TRACE_NAME_MAX == 8);
PTH_ASSERT(posix_sys_max, _POSIX_TRACE_SYS_MAX == 8);
PTH_ASSERT(posix_user_event_max, _POSIX_TRACE_USER_EVENT_MAX == 32);
PTH_ASSERT(event_name_max, TRACE_EVENT_NAME_MAX == 63);
PTH_ASSERT(name_max, TRACE_NAME_MAX == 64);
PTH_ASSERT(sys_max, TRACE_SYS_MAX == 64);
PTH_ASSERT(user_event_max, TRACE_USER_EVENT_MAX == 992);
PTH_ASSERT(event_name_max_min, TRACE_EVENT_NAME_MAX >= _POSIX_TRACE_EVENT_NAME_MAX);
PTH_ASSERT(name_max_min, TRACE_NAME_MAX >= _POSIX_TRACE_NAME_MAX);
PTH_ASSERT(sys_max_min, TRACE_SYS_MAX >= _POSIX_TRACE_SYS_MAX);
PTH_ASSERT(user_event_max_min, TRACE_USER_EVENT_MAX >= _POSIX_TRACE_USER_EVENT_MAX);

/* ---- both spellings of the unnamed user event ----------------------------------- */
PTH_ASSERT(unnamed_spellings, POSIX_TRACE_UNNAMED_USER_EVENT == POSIX_TRACE_UNNAMED_USEREVENT);
PTH_ASSERT(unnamed_is_32, POSIX_TRACE_UNNAMED_USEREVENT == 32);

/* ---- constants: integer constant expressions, distinct within their group --------- */
static int pth_constants(int v, trace_event_id_t ev)
{
	int n = 0;
	switch (v) { /* posix_stream_status */
	case POSIX_TRACE_SUSPENDED: case POSIX_TRACE_RUNNING: n++; break;
	default: break;
	}
	switch (v) { /* posix_stream_full_status, posix_log_full_status */
	case POSIX_TRACE_NOT_FULL: case POSIX_TRACE_FULL: n++; break;
	default: break;
	}
	switch (v) { /* overrun status */
	case POSIX_TRACE_NO_OVERRUN: case POSIX_TRACE_OVERRUN: n++; break;
	default: break;
	}
	switch (v) { /* posix_stream_flush_status */
	case POSIX_TRACE_NOT_FLUSHING: case POSIX_TRACE_FLUSHING: n++; break;
	default: break;
	}
	switch (v) { /* posix_truncation_status */
	case POSIX_TRACE_NOT_TRUNCATED: case POSIX_TRACE_TRUNCATED_RECORD:
	case POSIX_TRACE_TRUNCATED_READ: n++; break;
	default: break;
	}
	switch (v) { /* stream-full-policy */
	case POSIX_TRACE_LOOP: case POSIX_TRACE_UNTIL_FULL: case POSIX_TRACE_FLUSH: n++; break;
	default: break;
	}
	switch (v) { /* log-full-policy */
	case POSIX_TRACE_LOOP: case POSIX_TRACE_UNTIL_FULL: case POSIX_TRACE_APPEND: n++; break;
	default: break;
	}
	switch (v) { /* inheritance */
	case POSIX_TRACE_CLOSE_FOR_CHILD: case POSIX_TRACE_INHERITED: n++; break;
	default: break;
	}
	switch (v) { /* posix_trace_eventset_fill what */
	case POSIX_TRACE_WOPID_EVENTS: case POSIX_TRACE_SYSTEM_EVENTS:
	case POSIX_TRACE_ALL_EVENTS: n++; break;
	default: break;
	}
	switch (v) { /* posix_trace_set_filter how */
	case POSIX_TRACE_SET_EVENTSET: case POSIX_TRACE_ADD_EVENTSET:
	case POSIX_TRACE_SUB_EVENTSET: n++; break;
	default: break;
	}
	switch (ev) { /* trace event type identifiers */
	case POSIX_TRACE_START: case POSIX_TRACE_STOP: case POSIX_TRACE_FILTER:
	case POSIX_TRACE_OVERFLOW: case POSIX_TRACE_RESUME: case POSIX_TRACE_FLUSH_START:
	case POSIX_TRACE_FLUSH_STOP: case POSIX_TRACE_ERROR: case POSIX_TRACE_UNNAMED_USER_EVENT:
		n++; break;
	default: break;
	}
	return n;
}

/* Event ids are constant expressions of type trace_event_id_t (static initialisers). */
static const trace_event_id_t pth_event_ids[] = {
	POSIX_TRACE_START, POSIX_TRACE_STOP, POSIX_TRACE_FILTER, POSIX_TRACE_OVERFLOW,
	POSIX_TRACE_RESUME, POSIX_TRACE_FLUSH_START, POSIX_TRACE_FLUSH_STOP, POSIX_TRACE_ERROR,
	POSIX_TRACE_UNNAMED_USER_EVENT, POSIX_TRACE_UNNAMED_USEREVENT,
};

/* ---- types and structure members, each with its spec type ------------------------ */
static int pth_types(void)
{
	trace_attr_t attr;
	trace_event_id_t ev = POSIX_TRACE_START;
	trace_event_set_t set;
	trace_id_t trid;
	size_t size = sizeof attr + sizeof ev + sizeof set + sizeof trid;
	struct posix_trace_event_info info;
	struct posix_trace_status_info st;

	trace_event_id_t *m_event_id = &info.posix_event_id;
	pid_t *m_pid = &info.posix_pid;
	void **m_prog_address = &info.posix_prog_address;
	pthread_t *m_thread_id = &info.posix_thread_id;
	struct timespec *m_timestamp = &info.posix_timestamp;
	int *m_truncation_status = &info.posix_truncation_status;

	int *s_stream_full_status = &st.posix_stream_full_status;
	int *s_stream_overrun_status = &st.posix_stream_overrun_status;
	int *s_stream_status = &st.posix_stream_status;
	int *s_log_full_status = &st.posix_log_full_status;
	int *s_log_overrun_status = &st.posix_log_overrun_status;
	int *s_stream_flush_error = &st.posix_stream_flush_error;
	int *s_stream_flush_status = &st.posix_stream_flush_status;

	return (int)(size + sizeof ev) + (m_event_id != 0) + (m_pid != 0) +
	       (m_prog_address != 0) + (m_thread_id != 0) + (m_timestamp != 0) +
	       (m_truncation_status != 0) + (s_stream_full_status != 0) +
	       (s_stream_overrun_status != 0) + (s_stream_status != 0) +
	       (s_log_full_status != 0) + (s_log_overrun_status != 0) +
	       (s_stream_flush_error != 0) + (s_stream_flush_status != 0);
}

/* ---- every prototype, with the spec's parameter types ------------------------------ */
#define PTH_FN(ret, name, params)                 \
	do {                                      \
		ret(*volatile pth_p_) params = name; \
		n += (pth_p_ != 0);               \
	} while (0)

static int pth_functions(void)
{
	int n = 0;
	PTH_FN(int, posix_trace_attr_destroy, (trace_attr_t *));
	PTH_FN(int, posix_trace_attr_getclockres, (const trace_attr_t *, struct timespec *));
	PTH_FN(int, posix_trace_attr_getcreatetime, (const trace_attr_t *, struct timespec *));
	PTH_FN(int, posix_trace_attr_getgenversion, (const trace_attr_t *, char *));
	PTH_FN(int, posix_trace_attr_getinherited, (const trace_attr_t *PTH_R, int *PTH_R));
	PTH_FN(int, posix_trace_attr_getlogfullpolicy, (const trace_attr_t *PTH_R, int *PTH_R));
	PTH_FN(int, posix_trace_attr_getlogsize, (const trace_attr_t *PTH_R, size_t *PTH_R));
	PTH_FN(int, posix_trace_attr_getmaxdatasize, (const trace_attr_t *PTH_R, size_t *PTH_R));
	PTH_FN(int, posix_trace_attr_getmaxsystemeventsize,
	       (const trace_attr_t *PTH_R, size_t *PTH_R));
	PTH_FN(int, posix_trace_attr_getmaxusereventsize,
	       (const trace_attr_t *PTH_R, size_t, size_t *PTH_R));
	PTH_FN(int, posix_trace_attr_getname, (const trace_attr_t *, char *));
	PTH_FN(int, posix_trace_attr_getstreamfullpolicy, (const trace_attr_t *PTH_R, int *PTH_R));
	PTH_FN(int, posix_trace_attr_getstreamsize, (const trace_attr_t *PTH_R, size_t *PTH_R));
	PTH_FN(int, posix_trace_attr_init, (trace_attr_t *));
	PTH_FN(int, posix_trace_attr_setinherited, (trace_attr_t *, int));
	PTH_FN(int, posix_trace_attr_setlogfullpolicy, (trace_attr_t *, int));
	PTH_FN(int, posix_trace_attr_setlogsize, (trace_attr_t *, size_t));
	PTH_FN(int, posix_trace_attr_setmaxdatasize, (trace_attr_t *, size_t));
	PTH_FN(int, posix_trace_attr_setname, (trace_attr_t *, const char *));
	PTH_FN(int, posix_trace_attr_setstreamfullpolicy, (trace_attr_t *, int));
	PTH_FN(int, posix_trace_attr_setstreamsize, (trace_attr_t *, size_t));
	PTH_FN(int, posix_trace_clear, (trace_id_t));
	PTH_FN(int, posix_trace_close, (trace_id_t));
	PTH_FN(int, posix_trace_create, (pid_t, const trace_attr_t *PTH_R, trace_id_t *PTH_R));
	PTH_FN(int, posix_trace_create_withlog,
	       (pid_t, const trace_attr_t *PTH_R, int, trace_id_t *PTH_R));
	PTH_FN(void, posix_trace_event, (trace_event_id_t, const void *PTH_R, size_t));
	PTH_FN(int, posix_trace_eventid_equal, (trace_id_t, trace_event_id_t, trace_event_id_t));
	PTH_FN(int, posix_trace_eventid_get_name, (trace_id_t, trace_event_id_t, char *));
	PTH_FN(int, posix_trace_eventid_open, (const char *PTH_R, trace_event_id_t *PTH_R));
	PTH_FN(int, posix_trace_eventset_add, (trace_event_id_t, trace_event_set_t *));
	PTH_FN(int, posix_trace_eventset_del, (trace_event_id_t, trace_event_set_t *));
	PTH_FN(int, posix_trace_eventset_empty, (trace_event_set_t *));
	PTH_FN(int, posix_trace_eventset_fill, (trace_event_set_t *, int));
	PTH_FN(int, posix_trace_eventset_ismember,
	       (trace_event_id_t, const trace_event_set_t *PTH_R, int *PTH_R));
	PTH_FN(int, posix_trace_eventtypelist_getnext_id,
	       (trace_id_t, trace_event_id_t *PTH_R, int *PTH_R));
	PTH_FN(int, posix_trace_eventtypelist_rewind, (trace_id_t));
	PTH_FN(int, posix_trace_flush, (trace_id_t));
	PTH_FN(int, posix_trace_get_attr, (trace_id_t, trace_attr_t *));
	PTH_FN(int, posix_trace_get_filter, (trace_id_t, trace_event_set_t *));
	PTH_FN(int, posix_trace_get_status, (trace_id_t, struct posix_trace_status_info *));
	PTH_FN(int, posix_trace_getnext_event,
	       (trace_id_t, struct posix_trace_event_info *PTH_R, void *PTH_R, size_t,
	        size_t *PTH_R, int *PTH_R));
	PTH_FN(int, posix_trace_open, (int, trace_id_t *));
	PTH_FN(int, posix_trace_rewind, (trace_id_t));
	PTH_FN(int, posix_trace_set_filter, (trace_id_t, const trace_event_set_t *, int));
	PTH_FN(int, posix_trace_shutdown, (trace_id_t));
	PTH_FN(int, posix_trace_start, (trace_id_t));
	PTH_FN(int, posix_trace_stop, (trace_id_t));
	PTH_FN(int, posix_trace_timedgetnext_event,
	       (trace_id_t, struct posix_trace_event_info *PTH_R, void *PTH_R, size_t,
	        size_t *PTH_R, int *PTH_R, const struct timespec *PTH_R));
	PTH_FN(int, posix_trace_trid_eventid_open,
	       (trace_id_t, const char *PTH_R, trace_event_id_t *PTH_R));
	PTH_FN(int, posix_trace_trygetnext_event,
	       (trace_id_t, struct posix_trace_event_info *PTH_R, void *PTH_R, size_t,
	        size_t *PTH_R, int *PTH_R));
	return n;
}

int main(void)
{
	int n = pth_functions();
	n += pth_types();
	n += pth_constants(1, pth_event_ids[0]);
	return n == 0;
}

#endif
