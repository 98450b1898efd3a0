/* SPDX-License-Identifier: MIT */
/*
 * The names of the system events and of the unnamed user event
 * (sysnames.c).
 */
#ifndef PT_SYSNAMES_H
#define PT_SYSNAMES_H

#include <trace.h>
#include "layout.h"

#define PT_UNNAMED_NAME "posix_trace_unnamed_userevent"

/* The name of a system event id or of POSIX_TRACE_UNNAMED_USEREVENT, NULL
 * for another id. */
const char *pt_system_event_name(trace_event_id_t id);

#endif
