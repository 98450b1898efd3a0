/* SPDX-License-Identifier: MIT */
/*
 * t_fork: trace streams across fork().
 *
 * Checks (posix_trace_create, DESCRIPTION) that a trace stream identifier is
 * valid only in the process that created it: used in a child after fork()
 * every function returns EINVAL; and (posix_trace_attr_getinherited,
 * DESCRIPTION) that with the default inheritance POSIX_TRACE_CLOSE_FOR_CHILD
 * the child is not traced and tracing
 * of the parent continues: the child's posix_trace_event() does not land in the
 * parent's stream, the parent's stream keeps working while and after the child
 * runs and exits, and the child can create its own stream and trace itself.
 * Real fork(); the child reports through its exit status: 0 when every step
 * passed, otherwise the number of the first step that failed.
 */
#include "harness.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

#define MAX_EVENTS 128
#define DATA_BUF 1024 /* a child's buffer for one event */

static struct pt_ev got[MAX_EVENTS]; /* events read back */

/* How many of the first n events read back come from pid. */
static int count_pid(int n, pid_t pid)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += got[i].info.posix_pid == pid;
	return c;
}

/* Forks; the child runs fn(trid) and _exits with its result; the parent
 * waits and asserts the child exited with 0.  Returns the child's pid. */
static pid_t run_in_child(int (*fn)(trace_id_t), trace_id_t trid)
{
	fflush(NULL);
	pid_t child = pt_fork();
	if (child == 0) {
		alarm(10); /* never outlive the test if a call blocks */
		_exit(fn(trid));
	}
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status), "child killed by signal %d",
	              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_msg(WEXITSTATUS(status) == 0, "child failed at step %d", WEXITSTATUS(status));
	return child;
}

/* ---- the parent's trid in the child --------------------------------------- */

static int child_start(trace_id_t trid)
{
	STEP(1, posix_trace_start(trid) == EINVAL);
	return 0;
}

static int child_stop(trace_id_t trid)
{
	STEP(1, posix_trace_stop(trid) == EINVAL);
	return 0;
}

static int child_get_status(trace_id_t trid)
{
	struct posix_trace_status_info st;
	STEP(1, posix_trace_get_status(trid, &st) == EINVAL);
	return 0;
}

static int child_get_attr(trace_id_t trid)
{
	trace_attr_t attr;
	STEP(1, posix_trace_attr_init(&attr) == 0);
	STEP(2, posix_trace_get_attr(trid, &attr) == EINVAL);
	return 0;
}

static int child_clear(trace_id_t trid)
{
	STEP(1, posix_trace_clear(trid) == EINVAL);
	return 0;
}

static int child_filters(trace_id_t trid)
{
	trace_event_set_t set;
	STEP(1, posix_trace_eventset_empty(&set) == 0);
	STEP(2, posix_trace_get_filter(trid, &set) == EINVAL);
	STEP(3, posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET) == EINVAL);
	return 0;
}

static int child_trygetnext(trace_id_t trid)
{
	struct posix_trace_event_info info;
	char buf[DATA_BUF];
	size_t len;
	int unavailable;
	STEP(1, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) ==
	            EINVAL);
	return 0;
}

static int child_getnext(trace_id_t trid)
{
	struct posix_trace_event_info info;
	char buf[DATA_BUF];
	size_t len;
	int unavailable;
	STEP(1, posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) ==
	            EINVAL);
	return 0;
}

static int child_timedgetnext(trace_id_t trid)
{
	struct posix_trace_event_info info;
	char buf[DATA_BUF];
	size_t len;
	int unavailable;
	struct timespec abstime;
	clock_gettime(CLOCK_REALTIME, &abstime);
	abstime.tv_sec += 1;
	STEP(1, posix_trace_timedgetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable,
	                                       &abstime) == EINVAL);
	return 0;
}

static int child_event_types(trace_id_t trid)
{
	char name[TRACE_EVENT_NAME_MAX + 1];
	trace_event_id_t id;
	int unavailable;
	STEP(1, posix_trace_eventid_get_name(trid, POSIX_TRACE_START, name) == EINVAL);
	STEP(2, posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == EINVAL);
	STEP(3, posix_trace_eventtypelist_rewind(trid) == EINVAL);
	STEP(4, posix_trace_trid_eventid_open(trid, "fork_child_name", &id) == EINVAL);
	return 0;
}

static int child_shutdown(trace_id_t trid)
{
	STEP(1, posix_trace_shutdown(trid) == EINVAL);
	return 0;
}

START_TEST(child_start_of_parent_trid_is_einval)
{
	run_in_child(child_start, pt_create_started());
}
END_TEST

START_TEST(child_start_of_suspended_parent_trid_is_einval)
{
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(0, NULL, &trid));
	run_in_child(child_start, trid);
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
}
END_TEST

START_TEST(child_stop_of_parent_trid_is_einval)
{
	run_in_child(child_stop, pt_create_started());
}
END_TEST

START_TEST(child_get_status_of_parent_trid_is_einval)
{
	run_in_child(child_get_status, pt_create_started());
}
END_TEST

START_TEST(child_get_attr_of_parent_trid_is_einval)
{
	run_in_child(child_get_attr, pt_create_started());
}
END_TEST

START_TEST(child_clear_of_parent_trid_is_einval)
{
	run_in_child(child_clear, pt_create_started());
}
END_TEST

START_TEST(child_filter_functions_on_parent_trid_are_einval)
{
	run_in_child(child_filters, pt_create_started());
}
END_TEST

START_TEST(child_trygetnext_on_parent_trid_is_einval)
{
	run_in_child(child_trygetnext, pt_create_started());
}
END_TEST

START_TEST(child_getnext_on_parent_trid_is_einval_without_blocking)
{
	run_in_child(child_getnext, pt_create_started());
}
END_TEST

START_TEST(child_timedgetnext_on_parent_trid_is_einval)
{
	run_in_child(child_timedgetnext, pt_create_started());
}
END_TEST

START_TEST(child_event_type_functions_on_parent_trid_are_einval)
{
	run_in_child(child_event_types, pt_create_started());
}
END_TEST

START_TEST(child_shutdown_of_parent_trid_is_einval)
{
	run_in_child(child_shutdown, pt_create_started());
}
END_TEST

/* ---- the parent's stream is not affected by the child -------------------- */

static trace_event_id_t child_ev;

static int child_posts_event(trace_id_t trid)
{
	(void)trid;
	posix_trace_event(child_ev, "child", 5);
	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "child", 5);
	return 0;
}

START_TEST(child_event_is_not_recorded_in_parent_stream)
{
	child_ev = pt_event_id("from_child");
	trace_id_t trid = pt_create_started();
	pid_t child = run_in_child(child_posts_event, trid);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_int_eq(count_pid(n, child), 0);
}
END_TEST

/* The stream is started only after the fork, while the child waits. */
static int ready_fd = -1;

static int child_waits_then_posts_event(trace_id_t trid)
{
	char c;
	(void)trid;
	STEP(1, read(ready_fd, &c, 1) == 1);
	posix_trace_event(child_ev, "child", 5);
	return 0;
}

START_TEST(child_event_is_not_recorded_in_parent_stream_started_after_fork)
{
	int fds[2];
	trace_id_t trid;
	child_ev = pt_event_id("from_child_later");
	ck_assert_ok(posix_trace_create(0, NULL, &trid));
	ck_assert_int_eq(pipe(fds), 0);
	ready_fd = fds[0];
	fflush(NULL);
	pid_t child = pt_fork();
	if (child == 0) {
		alarm(10);
		_exit(child_waits_then_posts_event(trid));
	}
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	int status = 0;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_int_eq(pt_count_id(got, n, child_ev), 0);
}
END_TEST

START_TEST(parent_stream_works_after_child_exits)
{
	trace_event_id_t id = pt_event_id("parent_after_child");
	trace_id_t trid = pt_create_started();
	fflush(NULL);
	pid_t child = pt_fork();
	if (child == 0)
		exit(0); /* a normal exit: runs the library's exit-time cleanup */
	ck_assert_int_eq(waitpid(child, NULL, 0), child);

	posix_trace_event(id, "parent", 6);
	ck_assert_ok(posix_trace_stop(trid));
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
	ck_assert_int_eq(got[1].info.posix_pid, getpid());
	ck_assert_mem_eq(got[1].data, "parent", 6);
	ck_assert_uint_eq(got[2].info.posix_event_id, POSIX_TRACE_STOP);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(parent_stream_keeps_running_after_child_stop_and_shutdown)
{
	trace_event_id_t id = pt_event_id("parent_after_child_shutdown");
	trace_id_t trid = pt_create_started();
	run_in_child(child_stop, trid);
	run_in_child(child_shutdown, trid);
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
}
END_TEST

START_TEST(parent_events_still_recorded_while_child_lives)
{
	int fds[2];
	trace_event_id_t id = pt_event_id("parent_while_child");
	trace_id_t trid = pt_create_started();
	ck_assert_int_eq(pipe(fds), 0);
	fflush(NULL);
	pid_t child = pt_fork();
	if (child == 0) {
		char c;
		alarm(10);
		close(fds[1]);
		_exit(read(fds[0], &c, 1) == 1 ? 0 : 1);
	}
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(write(fds[1], "x", 1), 1);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
}
END_TEST

/* ---- the child traces itself --------------------------------------------- */

static int child_traces_itself(trace_id_t parent_trid)
{
	trace_id_t trid;
	trace_event_id_t id;
	struct posix_trace_event_info info;
	char buf[DATA_BUF];
	size_t len;
	int unavailable;

	STEP(1, posix_trace_create(0, NULL, &trid) == 0);
	STEP(2, posix_trace_eventid_open("child_own", &id) == 0);
	STEP(3, posix_trace_start(trid) == 0);
	posix_trace_event(id, "mine", 4);
	STEP(4, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0);
	STEP(5, !unavailable && info.posix_event_id == POSIX_TRACE_START);
	STEP(6, info.posix_pid == getpid());
	STEP(7, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0);
	STEP(8, !unavailable && info.posix_event_id == id);
	STEP(9, info.posix_pid == getpid());
	STEP(10, pthread_equal(info.posix_thread_id, pthread_self()));
	STEP(11, len == 4 && memcmp(buf, "mine", 4) == 0);
	STEP(12, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0);
	STEP(13, unavailable != 0);
	STEP(14, posix_trace_start(parent_trid) == EINVAL);
	STEP(15, posix_trace_shutdown(trid) == 0);
	return 0;
}

START_TEST(child_can_create_its_own_stream_and_trace_itself)
{
	run_in_child(child_traces_itself, pt_create_started());
}
END_TEST

static int child_traces_itself_by_pid(trace_id_t parent_trid)
{
	trace_id_t trid;
	struct posix_trace_event_info info;
	char buf[DATA_BUF];
	size_t len;
	int unavailable;

	(void)parent_trid;
	STEP(1, posix_trace_create(getpid(), NULL, &trid) == 0);
	STEP(2, posix_trace_start(trid) == 0);
	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, NULL, 0);
	STEP(3, posix_trace_stop(trid) == 0);
	STEP(4, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0);
	STEP(5, !unavailable && info.posix_event_id == POSIX_TRACE_START);
	STEP(6, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0);
	STEP(7, !unavailable && info.posix_event_id == POSIX_TRACE_UNNAMED_USEREVENT);
	STEP(8, info.posix_pid == getpid());
	STEP(9, posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0);
	STEP(10, !unavailable && info.posix_event_id == POSIX_TRACE_STOP);
	return 0;
}

START_TEST(child_can_create_stream_for_its_own_pid)
{
	run_in_child(child_traces_itself_by_pid, pt_create_started());
}
END_TEST

/* The child's own stream and its exit leave the parent's stream intact. */
START_TEST(child_own_stream_does_not_reach_parent_stream)
{
	trace_event_id_t id = pt_event_id("parent_after_child_stream");
	trace_id_t trid = pt_create_started();
	pid_t child = run_in_child(child_traces_itself, trid);
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
	ck_assert_int_eq(count_pid(n, child), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("fork");
	TCase *tc;

	tc = pt_tcase(s, "parent_trid_in_child");
	tcase_add_test(tc, child_start_of_parent_trid_is_einval);
	tcase_add_test(tc, child_start_of_suspended_parent_trid_is_einval);
	tcase_add_test(tc, child_stop_of_parent_trid_is_einval);
	tcase_add_test(tc, child_get_status_of_parent_trid_is_einval);
	tcase_add_test(tc, child_get_attr_of_parent_trid_is_einval);
	tcase_add_test(tc, child_clear_of_parent_trid_is_einval);
	tcase_add_test(tc, child_filter_functions_on_parent_trid_are_einval);
	tcase_add_test(tc, child_trygetnext_on_parent_trid_is_einval);
	tcase_add_test(tc, child_getnext_on_parent_trid_is_einval_without_blocking);
	tcase_add_test(tc, child_timedgetnext_on_parent_trid_is_einval);
	tcase_add_test(tc, child_event_type_functions_on_parent_trid_are_einval);
	tcase_add_test(tc, child_shutdown_of_parent_trid_is_einval);

	tc = pt_tcase(s, "parent_stream");
	tcase_add_test(tc, child_event_is_not_recorded_in_parent_stream);
	tcase_add_test(tc, child_event_is_not_recorded_in_parent_stream_started_after_fork);
	tcase_add_test(tc, parent_stream_works_after_child_exits);
	tcase_add_test(tc, parent_stream_keeps_running_after_child_stop_and_shutdown);
	tcase_add_test(tc, parent_events_still_recorded_while_child_lives);

	tc = pt_tcase(s, "child_stream");
	tcase_add_test(tc, child_can_create_its_own_stream_and_trace_itself);
	tcase_add_test(tc, child_can_create_stream_for_its_own_pid);
	tcase_add_test(tc, child_own_stream_does_not_reach_parent_stream);

	return pt_run(s);
}
