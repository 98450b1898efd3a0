/* SPDX-License-Identifier: MIT */
/*
 * plain: a program that never calls a posix_trace function (t_xproc).
 *
 * It is linked with libposixtrace by the Makefile, so the library is loaded
 * (and creates its control block) but nothing is ever posted.  It sleeps for
 * argv[1] seconds (default 30).  For a target that has not loaded the
 * library at all the tests use /bin/sleep or /bin/sh instead.
 */
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	unsigned secs = argc > 1 ? (unsigned)atoi(argv[1]) : 30;
	while (secs > 0)
		secs = sleep(secs);
	return 0;
}
