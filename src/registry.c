/*
 * Event names: the system events' fixed names and the user names of the
 * process, kept in its control block (pcb.c) so that every stream tracing
 * the process, in any controller, agrees on ids.
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

/* Registers `name` in a registry; reg NULL: this process's. */
int pt_register_name_in(struct pt_registry *reg, const char *name, trace_event_id_t *id)
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
	*id = pt_reg_register(reg ? reg : pt_proc.reg, name);
	if (!reg)
		pt_sync_names();
	return 0;
}

int pt_register_name(const char *name, trace_event_id_t *id)
{
	return pt_register_name_in(NULL, name, id);
}

/* Copies every name registered so far into a stream. */
void pt_seed_names(const struct pt_map *m)
{
	pt_reg_to_stream(pt_proc.reg, m, 1);
}

int posix_trace_eventid_open(const char *restrict name, trace_event_id_t *restrict id)
{
	return pt_register_name(name, id);
}
