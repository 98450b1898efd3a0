/* SPDX-License-Identifier: MIT */
/*
 * libsymlib.so: a shared library sym_app links (tests/cli/symbols.sh),
 * built with -g; posts one event from a function of its own.
 */
#include <trace.h>

int symlib_post(int n);

int symlib_post(int n)
{
	trace_event_id_t id;
	int err = posix_trace_eventid_open("sym.lib", &id);
	if (!err)
		posix_trace_event(id, &n, sizeof n); /* SITE:symlib_post */
	return err;
}
