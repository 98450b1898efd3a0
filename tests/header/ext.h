/* SPDX-License-Identifier: MIT */
/*
 * Included by ext.c and ext.cc after <posixtrace.h>: its declarations and the
 * posix_trace_event() macro compile without a warning, -Wshadow included (a
 * C++ function named like a struct "hides its constructor"), and the macro
 * is an expression of type void usable wherever a call of the function is.
 */
#ifndef PTH_EXT_H
#define PTH_EXT_H

static int pth_ext(trace_id_t trid, int id, const char *data, size_t len)
{
	struct posixtrace_event_ext ext;
	struct posixtrace_log_info info;
	int n = posixtrace_event_ext(trid, &ext) + posixtrace_log_info(trid, &info);
	posix_trace_event((trace_event_id_t)id, data, len);
	if (n)
		posix_trace_event(POSIX_TRACE_UNNAMED_USER_EVENT, &n, sizeof n);
	else
		(void)posix_trace_event(POSIX_TRACE_UNNAMED_USER_EVENT, (const void *)0, 0);
	for (len = 0; len < 2; posix_trace_event(POSIX_TRACE_UNNAMED_USER_EVENT, &len, sizeof len))
		len++;
	return n;
}

#endif
