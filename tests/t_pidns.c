/* SPDX-License-Identifier: MIT */
/*
 * t_pidns: posix_trace_create (XSH posix_trace_create: "pid ... the process
 * to be traced") of a process that runs in a pid namespace of its own, named
 * by its pid in the controller's namespace: the stream gets every event the
 * process posts (before, its control block, which names it by its pid in its
 * own namespace, was never recognised and the stream stayed empty).  Needs
 * root (unshare(CLONE_NEWPID)); skipped otherwise.  The events carry the
 * process's pid in its own namespace (docs/CONFORMANCE.md).
 */
#include "harness.h"

#include <sched.h>

#define NPOSTS 500

static trace_event_id_t ev;

/* In the new namespace (pid 1 there): waits for the go, posts, exits. */
static void target(int go)
{
	char c;
	if (read(go, &c, 1) != 1)
		_exit(3);
	for (uint32_t i = 0; i < NPOSTS; i++)
		posix_trace_event(ev, &i, sizeof i);
	_exit(getpid() == 1 ? 0 : 4);
}

/* Forks the target into a new pid namespace; returns its pid here, or 0 when
 * namespaces cannot be made. */
static pid_t start_target(int go, pid_t *middle)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	*middle = pt_fork();
	if (*middle == 0) {
		pid_t t = 0;
		if (unshare(CLONE_NEWPID) == 0 && (t = fork()) == 0)
			target(go);
		if (write(p[1], &t, sizeof t) != sizeof t)
			_exit(5);
		int status = 0;
		if (t > 0)
			waitpid(t, &status, 0);
		_exit(t > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	pt_track(*middle);
	pid_t t = 0;
	ck_assert_int_eq(read(p[0], &t, sizeof t), (ssize_t)sizeof t);
	close(p[0]);
	close(p[1]);
	return t;
}

START_TEST(create_for_a_process_in_its_own_namespace)
{
	if (geteuid() != 0) {
		fprintf(stderr, "t_pidns: skipped (not root)\n");
		return;
	}
	ev = pt_event_id("ns.tick");
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t middle, t = start_target(go[0], &middle);
	if (t <= 0) {
		fprintf(stderr, "t_pidns: skipped (no pid namespace: %s)\n", strerror(errno));
		return;
	}
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(t, NULL, &trid));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	int status = pt_wait_exit(middle, 10000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target: status %#x", status);
	size_t n;
	struct pt_ev *evs = pt_drain_all(trid, &n);
	uint32_t next = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pt_is_user(&evs[i]) || evs[i].info.posix_event_id != ev)
			continue;
		ck_assert_uint_eq(pt_ev_u32(&evs[i]), next);
		next++;
	}
	ck_assert_uint_eq(next, NPOSTS);
	free(evs);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pidns");
	TCase *tc = pt_tcase_fixture(s, "pidns", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, create_for_a_process_in_its_own_namespace);
	return pt_run(s);
}
