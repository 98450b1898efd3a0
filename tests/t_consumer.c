/* SPDX-License-Identifier: MIT */
/*
 * t_consumer: a traced process writes anything into the stream memory it
 * shares with its controller and the controller's keeper, and neither
 * hangs, crashes, fills the disk nor reports a stored event twice
 * (docs/SECURITY.md, "Memory written by another process is input"; XSH
 * 2.11.1.2, POSIX_TRACE_ERROR for a stream the implementation found
 * damaged).  The target is tests/helpers/scribbler (see its first
 * comment), which writes one shape of damage when told to:
 *
 *  - two chunks linked into a cycle, read by a keeper writing a log for a
 *    library controller, and by `posixtrace attach -o` run as root on a
 *    target of another user: shutdown returns, the log stays small, the
 *    cycle's six events are logged at most once each, damage is reported;
 *  - every lane naming one self-linked chunk of TIME records: a timed
 *    getnext with a 200 ms deadline, clear and shutdown return at once;
 *  - every lane naming one chunk of events: each event is read once;
 * and in t_consumerbounds (what both programs share: tests/consumer.c):
 *  - namespaces forged in every lane: the keeper and a live reader end;
 *  - losses counted in the header without pause while a keeper drains one
 *    stream and a live reader reads, clears and shuts down another: each
 *    drain takes them once, every call ends;
 *  - random words flipped and holes punched for 10 s while a keeper and a
 *    live reader drain two streams: both end, the log stays small.
 *
 * Each controller runs in a child of the test, under a file size limit
 * that the keepers it forks inherit; the test is the reaper of orphans, so
 * a keeper whose controller hung or was killed is killed with the rest
 * when the test ends, failed or not (every wait here is shorter than the
 * test's timeout).  Before this version every one of these tests failed:
 * the controller hung in shutdown, attach never exited, a timed getnext
 * with a 200 ms deadline took 3.3 s, the chunk named by every lane was
 * read 413,696 times for its 101 events, the flips filled the log to its
 * 64 MiB cap.
 */
#include "consumer.h"

/* ---- the shapes ----------------------------------------------------------------- */

START_TEST(chunk_cycle_read_by_keeper_of_library_controller_is_logged_once)
{
	char log[200];
	snprintf(log, sizeof log, "%s/cycle.log", dir);
	struct target t = start_target("cycle", -1, NULL);
	struct ctl c = start_controller(t.pid, CTL_LOG, log, 300);
	unsigned stored;
	struct ctl_result r = after_attack(&t, &c, &stored);
	pt_kill_descendants();
	struct ctl_result l = read_log(log);
	printf("t_consumer: cycle, library controller: shutdown %d in %ld ms; log: %ld events, "
	       "%ld of the cycle's %u, %ld POSIX_TRACE_ERROR\n",
	       r.shutdown_rc, r.shutdown_ms, l.events, l.cycle_events, stored, l.errors);
	ck_assert_int_le(l.cycle_events, stored);
	ck_assert_int_ge(l.errors, 1);
}
END_TEST

START_TEST(chunk_cycle_of_other_users_target_under_attach_as_root_is_logged_once)
{
	char log[200], pid[16];
	if (geteuid() != 0) {
		printf("t_consumer: SKIP the attach-as-root case: not run as root\n");
		return;
	}
	snprintf(log, sizeof log, "%s/attach.log", dir);
	struct target t = start_target("cycle", NOBODY, NULL);
	snprintf(pid, sizeof pid, "%d", (int)t.pid);
	const char *tool = pt_tool_path("t_consumer: attach as root");
	ck_assert_ptr_nonnull(tool);
	pid_t cmd = pt_fork();
	if (cmd == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 1);
		dup2(null, 2);
		cap_files();
		execl(tool, tool, "attach", pid, "-o", log, "--duration", "1", (char *)NULL);
		_exit(127);
	}
	pt_track(cmd);
	attack(&t);
	unsigned stored = attacked(&t);
	int status = pt_wait_exit(cmd, RESULT_WAIT_MS * slowdown());
	pt_kill_descendants();
	char how[64];
	pt_describe_status(status, how, sizeof how);
	struct ctl_result l = read_log(log);
	printf("t_consumer: cycle, attach as root: %s; log: %ld events, %ld of the cycle's %u, "
	       "%ld POSIX_TRACE_ERROR\n", how, l.events, l.cycle_events, stored, l.errors);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "attach: %s", how);
	ck_assert_int_le(l.cycle_events, stored);
	ck_assert_int_ge(l.errors, 1);
}
END_TEST

START_TEST(every_lane_naming_a_self_linked_chunk_keeps_calls_short)
{
	struct target t = start_target("selflink", -1, NULL);
	struct ctl c = start_controller(t.pid, CTL_LIVE_TIMED, NULL, READ_MS);
	unsigned stored;
	struct ctl_result r = after_attack(&t, &c, &stored);
	printf("t_consumer: self-linked lanes: longest timedgetnext %ld ms, clear %ld ms, "
	       "shutdown %ld ms, %ld events, %ld POSIX_TRACE_ERROR\n",
	       r.max_call_ms, r.clear_ms, r.shutdown_ms, r.events, r.errors);
	ck_assert_int_lt(r.max_call_ms, 2000);
	ck_assert_int_eq(r.clear_rc, 0);
	ck_assert_int_lt(r.clear_ms, 2000);
	ck_assert_int_lt(r.shutdown_ms, 2000);
	ck_assert_int_ge(r.errors, 1);
}
END_TEST

START_TEST(chunk_named_by_every_lane_is_read_once)
{
	struct target t = start_target("samechunk", -1, NULL);
	struct ctl c = start_controller(t.pid, CTL_LIVE_READ, NULL, READ_MS);
	unsigned stored;
	struct ctl_result r = after_attack(&t, &c, &stored);
	printf("t_consumer: one chunk in every lane: %ld of its %u events read, %ld events, "
	       "%ld POSIX_TRACE_ERROR, clear %ld ms\n",
	       r.cycle_events, stored, r.events, r.errors, r.clear_ms);
	ck_assert_int_le(r.cycle_events, stored);
	ck_assert_int_ge(r.errors, 1);
}
END_TEST

/* Every lane claims an owner in a pid namespace of its own: the keeper and
 * a live reader look each up in /proc (pidmap.c), a bounded number of
 * times, and go on; the forged ids stay as they are. */
int main(void)
{
	Suite *s = suite_create("consumer");
	TCase *tc = pt_tcase_fixture(s, "shapes", setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, chunk_cycle_read_by_keeper_of_library_controller_is_logged_once);
	tcase_add_test(tc, chunk_cycle_of_other_users_target_under_attach_as_root_is_logged_once);
	tcase_add_test(tc, every_lane_naming_a_self_linked_chunk_keeps_calls_short);
	tcase_add_test(tc, chunk_named_by_every_lane_is_read_once);
	return pt_run_scratch(s, "t_consumer");
}
