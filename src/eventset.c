/* SPDX-License-Identifier: MIT */
/* Trace event type sets (Trace Event Filter option). */
#include <string.h>
#include <errno.h>
#include "internal.h"

#define WORD(id) ((id) / 64u)
#define BIT(id) (1ull << ((id) % 64u))

int posix_trace_eventset_empty(trace_event_set_t *set)
{
	if (!set)
		return EINVAL;
	memset(set, 0, sizeof *set);
	return 0;
}

static void add_range(trace_event_set_t *set, unsigned first, unsigned last)
{
	for (unsigned id = first; id <= last; id++)
		set->__bits[WORD(id)] |= BIT(id);
}

int posix_trace_eventset_fill(trace_event_set_t *set, int what)
{
	if (!set)
		return EINVAL;
	switch (what) {
	case POSIX_TRACE_WOPID_EVENTS:
		/* Events that are never caused by a process's own call. */
		memset(set, 0, sizeof *set);
		add_range(set, POSIX_TRACE_OVERFLOW, POSIX_TRACE_RESUME);
		add_range(set, POSIX_TRACE_ERROR, POSIX_TRACE_ERROR);
		return 0;
	case POSIX_TRACE_SYSTEM_EVENTS:
		memset(set, 0, sizeof *set);
		add_range(set, PT_SYS_FIRST, PT_SYS_LAST);
		return 0;
	case POSIX_TRACE_ALL_EVENTS:
		memset(set, 0, sizeof *set);
		add_range(set, PT_SYS_FIRST, PT_SYS_LAST);
		add_range(set, PT_USER_FIRST, PT_NEVENT_IDS - 1);
		return 0;
	default:
		return EINVAL;
	}
}

int posix_trace_eventset_add(trace_event_id_t id, trace_event_set_t *set)
{
	if (!set || id >= PT_NEVENT_IDS)
		return EINVAL;
	set->__bits[WORD(id)] |= BIT(id);
	return 0;
}

int posix_trace_eventset_del(trace_event_id_t id, trace_event_set_t *set)
{
	if (!set || id >= PT_NEVENT_IDS)
		return EINVAL;
	set->__bits[WORD(id)] &= ~BIT(id);
	return 0;
}

int posix_trace_eventset_ismember(trace_event_id_t id, const trace_event_set_t *restrict set,
                                  int *restrict ismember)
{
	if (!set || !ismember || id >= PT_NEVENT_IDS)
		return EINVAL;
	*ismember = (set->__bits[WORD(id)] & BIT(id)) != 0;
	return 0;
}
