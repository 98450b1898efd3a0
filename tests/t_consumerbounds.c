/* SPDX-License-Identifier: MIT */
/*
 * t_consumerbounds: floods of forged state in the stream memory a traced
 * process shares with its controller and the controller's keeper (split
 * from t_consumer, whose first comment says what is checked and why):
 *  - namespaces forged in every lane: the keeper and a live reader end;
 *  - losses counted in the header without pause while a keeper drains one
 *    stream and a live reader reads, clears and shuts down another: each
 *    drain takes them once, every call ends;
 *  - random words flipped and holes punched for 10 s while a keeper and a
 *    live reader drain two streams: both end, the log stays small.
 * What both programs share: tests/consumer.c.
 */
#include "consumer.h"

START_TEST(forged_namespaces_leave_keeper_and_reader_bounded)
{
	char log[200];
	snprintf(log, sizeof log, "%s/nsforge.log", dir);
	const char *const args[] = {"-n", "2", NULL};
	struct target t = start_target("nsforge", -1, args);
	struct ctl logger = start_controller(t.pid, CTL_LOG, log, READ_MS);
	struct ctl reader = start_controller(t.pid, CTL_LIVE_READ, NULL, READ_MS);
	attack(&t);
	unsigned stored = attacked(&t);
	controller_go(&logger);
	controller_go(&reader);
	struct ctl_result rl = controller_result(&logger);
	struct ctl_result rr = controller_result(&reader);
	pt_kill_descendants();
	struct ctl_result l = read_log(log);
	printf("t_consumerbounds: forged namespaces in every lane: %u events stored; keeper's shutdown "
	       "%ld ms, log %ld events; reader %ld events, longest call %ld ms, shutdown %ld ms\n",
	       stored, rl.shutdown_ms, l.events, rr.events, rr.max_call_ms, rr.shutdown_ms);
	ck_assert_int_lt(rl.shutdown_ms, 2000);
	ck_assert_int_lt(rr.shutdown_ms, 2000);
	ck_assert_int_lt(rr.max_call_ms, 2000);
}
END_TEST

/* The target reports a loss at every instant while a keeper drains one
 * stream into a log and a live reader reads, clears and shuts down the
 * other: each drain takes the losses once (one POSIX_TRACE_OVERFLOW), so
 * that clear, the keeper's drains and both shutdowns end while the storm
 * goes on.  Before, a drain took the losses again after every event it
 * yielded (t_streamimg, drain_takes_the_losses_counted_meanwhile_once):
 * only the target's speed against the reader's ended it. */
START_TEST(a_storm_of_losses_leaves_clear_keeper_and_reader_bounded)
{
	char log[200];
	snprintf(log, sizeof log, "%s/storm.log", dir);
	const char *const args[] = {"-n", "2", "-s", "6", NULL};
	struct target t = start_target("ovfstorm", -1, args);
	struct ctl logger = start_controller(t.pid, CTL_LOG, log, READ_MS);
	struct ctl reader = start_controller(t.pid, CTL_LIVE_READ, NULL, READ_MS);
	attack(&t);
	controller_go(&logger);
	controller_go(&reader);
	struct ctl_result rl = controller_result(&logger);
	struct ctl_result rr = controller_result(&reader);
	attacked(&t);
	pt_kill_descendants();
	struct ctl_result l = read_log(log);
	printf("t_consumerbounds: a storm of losses: keeper's shutdown %ld ms, log %ld events; reader "
	       "%ld events, clear %ld ms, shutdown %ld ms\n",
	       rl.shutdown_ms, l.events, rr.events, rr.clear_ms, rr.shutdown_ms);
	ck_assert_int_eq(rr.clear_rc, 0);
	ck_assert_int_lt(rr.clear_ms, 2000);
	ck_assert_int_lt(rr.shutdown_ms, 2000);
	ck_assert_int_lt(rl.shutdown_ms, 2000);
}
END_TEST

START_TEST(flipped_words_and_punched_holes_leave_keeper_and_reader_bounded)
{
	char log[200];
	snprintf(log, sizeof log, "%s/flip.log", dir);
	const char *const args[] = {"-n", "2", "-s", "10", NULL};
	struct target t = start_target("flip", -1, args);
	struct ctl logger = start_controller(t.pid, CTL_LOG, log, 10500);
	struct ctl reader = start_controller(t.pid, CTL_LIVE_READ, NULL, 10500);
	attack(&t);
	controller_go(&logger);
	controller_go(&reader);
	attacked(&t);
	struct ctl_result rl = controller_result(&logger);
	struct ctl_result rr = controller_result(&reader);
	pt_kill_descendants();
	struct ctl_result l = read_log(log);
	printf("t_consumerbounds: flips for 10 s: keeper's shutdown %ld ms, log %ld events "
	       "(%ld POSIX_TRACE_ERROR); reader %ld events (%ld POSIX_TRACE_ERROR), shutdown %ld ms\n",
	       rl.shutdown_ms, l.events, l.errors, rr.events, rr.errors, rr.shutdown_ms);
	ck_assert_int_lt(rl.shutdown_ms, 5000);
	ck_assert_int_lt(rr.shutdown_ms, 5000);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("consumerbounds");
	TCase *tc = pt_tcase_fixture(s, "floods", setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, forged_namespaces_leave_keeper_and_reader_bounded);
	tcase_add_test(tc, a_storm_of_losses_leaves_clear_keeper_and_reader_bounded);
	tcase_add_test(tc, flipped_words_and_punched_holes_leave_keeper_and_reader_bounded);
	return pt_run_scratch(s, "t_consumerbounds");
}
