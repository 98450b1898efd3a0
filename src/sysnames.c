/* SPDX-License-Identifier: MIT */
/*
 * The names of the system events and of the unnamed user event (XSH
 * 2.11.1.2), which every stream and log knows.
 */
#include <trace.h>
#include "sysnames.h"

static const char *const system_names[] = {
	[POSIX_TRACE_START] = "posix_trace_start",
	[POSIX_TRACE_STOP] = "posix_trace_stop",
	[POSIX_TRACE_FILTER] = "posix_trace_filter",
	[POSIX_TRACE_OVERFLOW] = "posix_trace_overflow",
	[POSIX_TRACE_RESUME] = "posix_trace_resume",
	[POSIX_TRACE_FLUSH_START] = "posix_trace_flush_start",
	[POSIX_TRACE_FLUSH_STOP] = "posix_trace_flush_stop",
	[POSIX_TRACE_ERROR] = "posix_trace_error",
};

const char *pt_system_event_name(trace_event_id_t id)
{
	if (id >= PT_SYS_FIRST && id <= PT_SYS_LAST)
		return system_names[id];
	if (id == POSIX_TRACE_UNNAMED_USEREVENT)
		return PT_UNNAMED_NAME;
	return NULL;
}
