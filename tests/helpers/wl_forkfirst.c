/* SPDX-License-Identifier: MIT */
/*
 * wl_forkfirst: a program whose first statement forks (t_workload).
 *
 * The child is forked before the parent has posted anything or opened a
 * name.  The child then opens "wl.child" and posts COUNT events as writer 1;
 * the parent opens "wl.parent", posts PARENT_COUNT events as writer 0,
 * waits for the child and exits 0 if the child did.  Event k of writer w has
 * the 16-byte payload {w, k, pt_mix(w, k)}.
 *
 *   usage: wl_forkfirst [COUNT [PARENT_COUNT]]   (defaults 100 and 1)
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "../harness.h" /* pt_payload, pt_post_payload */

static int post_events(const char *name, uint32_t writer, long count)
{
	trace_event_id_t id;
	if (posix_trace_eventid_open(name, &id) != 0)
		return 3;
	for (long k = 0; k < count; k++)
		pt_post_payload(id, writer, (uint32_t)k);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t child = fork();

	long count = argc > 1 ? atol(argv[1]) : 100;
	long parent_count = argc > 2 ? atol(argv[2]) : 1;
	if (child < 0)
		return 2;
	alarm(60);
	if (child == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		_exit(post_events("wl.child", 1, count));
	}
	int rc = post_events("wl.parent", 0, parent_count);
	int status;
	if (waitpid(child, &status, 0) != child)
		return 4;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return 5;
	return rc;
}
