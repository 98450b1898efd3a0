/*
 * The name registry of the traced process: user event names and the ids
 * they map to.  One mapping per process, so every stream that traces the
 * process (and posix_trace_trid_eventid_open on any of them) agrees on ids.
 */
#include <errno.h>
#include <string.h>
#include "internal.h"

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
static const char unnamed_name[] = "posix_trace_unnamed_userevent";

const char *pt_system_event_name(trace_event_id_t id)
{
	if (id >= PT_SYS_FIRST && id <= PT_SYS_LAST)
		return system_names[id];
	if (id == POSIX_TRACE_UNNAMED_USEREVENT)
		return unnamed_name;
	return NULL;
}

/* Caller holds pt_proc.lock. */
static trace_event_id_t lookup_or_add(const char *name)
{
	for (uint32_t i = 0; i < pt_proc.nnames; i++)
		if (strcmp(pt_proc.names[i], name) == 0)
			return PT_USER_FIRST + 1 + i;
	if (pt_proc.nnames + 1 >= TRACE_USER_EVENT_MAX)
		return POSIX_TRACE_UNNAMED_USEREVENT;
	uint32_t i = pt_proc.nnames++;
	strcpy(pt_proc.names[i], name);
	trace_event_id_t id = PT_USER_FIRST + 1 + i;
	for (int s = 0; s < TRACE_SYS_MAX; s++) {
		struct pt_map *m = atomic_load_explicit(&pt_proc.attached[s].map, memory_order_relaxed);
		if (m)
			pt_stream_set_name(m, id, name);
	}
	return id;
}

int pt_register_name(const char *name, trace_event_id_t *id)
{
	if (!name || !id)
		return EINVAL;
	if (strnlen(name, TRACE_EVENT_NAME_MAX + 1) > TRACE_EVENT_NAME_MAX)
		return ENAMETOOLONG;
	if (strcmp(name, unnamed_name) == 0) {
		*id = POSIX_TRACE_UNNAMED_USEREVENT;
		return 0;
	}
	pt_init();
	pthread_mutex_lock(&pt_proc.lock);
	*id = lookup_or_add(name);
	pthread_mutex_unlock(&pt_proc.lock);
	return 0;
}

/* Copies every name registered so far into a new stream.  Caller holds
 * pt_proc.lock. */
void pt_seed_names(const struct pt_map *m)
{
	for (uint32_t i = 0; i < pt_proc.nnames; i++)
		pt_stream_set_name(m, PT_USER_FIRST + 1 + i, pt_proc.names[i]);
}

int posix_trace_eventid_open(const char *restrict name, trace_event_id_t *restrict id)
{
	return pt_register_name(name, id);
}
