/* SPDX-License-Identifier: MIT */
/*
 * sym_plugin.so: a plug-in sym_app loads with dlopen and unloads
 * (tests/cli/symbols.sh), built with -g; posts one event.
 */
#include <trace.h>

int plugin_post(int n);

int plugin_post(int n)
{
	trace_event_id_t id;
	int err = posix_trace_eventid_open("sym.plugin", &id);
	if (!err)
		posix_trace_event(id, &n, sizeof n); /* SITE:plugin_post */
	return err;
}
