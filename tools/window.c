/* SPDX-License-Identifier: MIT */
/*
 * The window of a log a command looks at: --since, --until, --pid, --tid,
 * --only and --snapshot, the same for dump and every converter.  The window
 * is a filter of the log reader (struct log_filter in tool.h): every pass
 * over the log (a converter's first pass that pairs begin/end events or
 * counts, and the one that writes) sees only the events inside it, so a
 * pair is made only of events both inside, and counts and times are those
 * of the window.  Every event is still read, to count snapshots and the
 * events of the log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static bool parse_bound(const char *s, struct time_bound *b)
{
	b->set = true;
	b->absolute = *s == '@';
	return parse_seconds(s + b->absolute, &b->seconds);
}

static bool parse_snapshot(const char *s, uint64_t *n)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || v == 0 || s[0] == '-')
		return false;
	*n = v;
	return true;
}

int window_option(int opt, const char *arg, struct event_window *w, const char *cmd)
{
	switch (opt) {
	case WINDOW_OPT_SINCE:
		if (!parse_bound(arg, &w->since))
			return usage_error(cmd, "bad --since '%s'", arg), -1;
		return 1;
	case WINDOW_OPT_UNTIL:
		if (!parse_bound(arg, &w->until))
			return usage_error(cmd, "bad --until '%s'", arg), -1;
		return 1;
	case WINDOW_OPT_ONLY:
		if (!name_list_parse(&w->only, arg))
			return usage_error(cmd, "bad --only '%s'", arg), -1;
		return 1;
	case WINDOW_OPT_PID:
		if (!number_list_parse(&w->pids, arg))
			return usage_error(cmd, "bad --pid '%s'", arg), -1;
		return 1;
	case WINDOW_OPT_TID:
		if (!number_list_parse(&w->tids, arg))
			return usage_error(cmd, "bad --tid '%s'", arg), -1;
		return 1;
	case WINDOW_OPT_SNAPSHOT:
		if (!parse_snapshot(arg, &w->snapshot))
			return usage_error(cmd, "bad --snapshot '%s' (1, 2, ...)", arg), -1;
		return 1;
	default:
		return 0;
	}
}

static bool window_is_set(const struct event_window *w)
{
	return w->since.set || w->until.set || w->only.count || w->pids.count || w->tids.count ||
	       w->snapshot;
}

static uint64_t bound_ns(const struct time_bound *b, uint64_t first_ns)
{
	double ns = b->seconds * 1e9;
	if (b->absolute)
		return ns < 0 ? 0 : (uint64_t)ns;
	return ns < 0 && (uint64_t)-ns > first_ns ? 0 : first_ns + (int64_t)ns;
}

/* --tid names the thread column: the kernel thread id once the library
 * gives it, the pthread_t until then (and still accepted then). */
static bool thread_selected(const struct event_window *w, const struct trace_event *ev)
{
	return number_list_has(&w->tids, (unsigned long)ev->info.posix_thread_id) ||
	       (ev->tid && number_list_has(&w->tids, (uint64_t)ev->tid));
}

static bool selected(const struct event_window *w, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	/* an event without a time is neither before nor after a bound */
	if (w->since.set && event_has_time(ev) && ns < w->since_ns)
		return false;
	if (w->until.set && event_has_time(ev) && ns > w->until_ns)
		return false;
	if (w->pids.count && !number_list_has(&w->pids, (uint64_t)(uint32_t)ev->info.posix_pid))
		return false;
	if (w->tids.count && !thread_selected(w, ev))
		return false;
	return !w->only.count || name_list_has(&w->only, ev->name);
}

/* The snapshot an event belongs to: the number of FLUSH_STOP events before
 * it, plus one. */
static bool keep_event(struct log_filter *f, const struct trace_event *ev)
{
	struct event_window *w = (struct event_window *)f;
	bool in = (!w->snapshot || w->snapshot == w->current) && selected(w, ev);
	w->held = w->current;
	w->current += ev->info.posix_event_id == POSIX_TRACE_FLUSH_STOP;
	return in;
}

static void window_rewound(struct log_filter *f)
{
	struct event_window *w = (struct event_window *)f;
	w->current = 1;
	w->held = 0;
}

/* An --only name that names no event type of the log is a mistake (a typo
 * would otherwise show an empty trace).  A log read from a pipe may learn
 * names as it is read, so there the check waits for the end. */
static const char *unknown_only_name(const struct event_window *w, struct trace_log *log)
{
	for (size_t i = 0; i < w->only.count; i++) {
		bool found = false;
		/* several logs: a type of any of them */
		for (size_t s = 0; s < trace_log_sources(log) && !found; s++)
			found = event_type_exists(trace_log_source(log, (uint32_t)s)->trid,
			                          w->only.names[i]);
		if (!found)
			return w->only.names[i];
	}
	return NULL;
}

bool window_attach(struct event_window *w, struct trace_log *log)
{
	w->current = 1;
	w->held = 0;
	if (log->seekable && window_names_unknown(w, log))
		return false;
	if (!window_is_set(w))
		return true;
	uint64_t first_ns = 0;
	if ((w->since.set && !w->since.absolute) || (w->until.set && !w->until.absolute))
		first_ns = log_time_base(log); /* a pass of its own: before the filter */
	w->since_ns = bound_ns(&w->since, first_ns);
	w->until_ns = bound_ns(&w->until, first_ns);
	w->filter.keep = keep_event;
	w->filter.rewound = window_rewound;
	w->filter.needs_tid = w->tids.count > 0;
	log->filter = &w->filter;
	return true;
}

bool window_names_unknown(const struct event_window *w, struct trace_log *log)
{
	const char *unknown = unknown_only_name(w, log);
	if (unknown)
		error_msg("%s: no event type named '%s' in this log", log->label, unknown);
	return unknown != NULL;
}

int window_finish(const struct event_window *w, struct trace_log *log, int rc)
{
	if (w->snapshot > w->held) {
		error_msg("%s: no snapshot %llu: the log holds %llu", log->label,
		          (unsigned long long)w->snapshot, (unsigned long long)w->held);
		return rc ? rc : EXIT_FAIL;
	}
	return rc;
}

void window_free(struct event_window *w)
{
	name_list_free(&w->only);
	number_list_free(&w->pids);
	number_list_free(&w->tids);
}
