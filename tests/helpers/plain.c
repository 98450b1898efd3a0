/* SPDX-License-Identifier: MIT */
/*
 * plain: a program that never calls a posix_trace function (t_xproc).
 *
 * It refers to one function of libposixtrace without calling it, so that
 * the linker keeps the library needed: the library is loaded (and creates
 * its control block) but nothing is ever posted.  It sleeps for
 * argv[1] seconds (default 30).  For a target that has not loaded the
 * library at all the tests use /bin/sleep or /bin/sh instead.
 */
#include <stdlib.h>
#include <trace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int (*volatile loaded)(const char *, trace_event_id_t *) = posix_trace_eventid_open;
	(void)loaded;
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 30;
	while (secs > 0)
		secs = sleep(secs);
	return 0;
}
