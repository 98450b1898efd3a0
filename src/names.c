/* SPDX-License-Identifier: MIT */
/*
 * posix_trace_eventid_open (XSH, posix_trace_eventid_open): the traced
 * process's names, often its first call of the library, in the registry of
 * its tree (registry.c).
 */
#include "writer.h"
#include "lifecycle.h"
#include "registry.h" /* <trace.h> through layout.h, exported */

int posix_trace_eventid_open(const char *restrict name, trace_event_id_t *restrict id)
{
	pt_init();
	int err = pt_register_name_in(NULL, name, id);
	if (!err)
		pt_images_recheck();
	return err;
}
