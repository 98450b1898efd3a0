/* SPDX-License-Identifier: MIT */
/*
 * t_limits: tracing under the resource limits a process may run with.
 *
 * posix_trace_create and posix_trace_create_withlog, ERRORS: ENOMEM is the
 * only answer for "no memory for the stream".  A process whose largest
 * file is limited (RLIMIT_FSIZE, `ulimit -f`) must still be able to trace
 * a stream that fits the limit, and must never be sent SIGXFSZ by the
 * library; one whose limit is below any stream gets ENOMEM.  Each case runs
 * in a child with the limit set, which reports through its exit status.
 *
 * The control events a controller records (START, STOP, FILTER...) wait
 * for the reader in a queue of 256 entries per stream (docs/CONFORMANCE.md):
 * beyond that, a POSIX_TRACE_LOOP stream drops the oldest and the others the
 * newest, and either way posix_trace_get_status reports the overrun and the
 * count (XSH 2.11.1, posix_trace_status_info Structure: posix_stream_overrun_status).
 */
#include "harness.h"

#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>

/* Runs fn in a child under RLIMIT_FSIZE = limit; returns its wait status. */
static int under_fsize_limit(rlim_t limit, int (*fn)(void))
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = {limit, limit};
		if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
			_exit(100);
		_exit(fn());
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

/* A default stream: created, events recorded and read back.  Exit codes
 * name the step that failed. */
static int trace_a_little(void)
{
	trace_id_t trid;
	trace_event_id_t id;
	if (posix_trace_eventid_open("lim.ev", &id) != 0)
		return 1;
	if (posix_trace_create(0, NULL, &trid) != 0)
		return 2;
	if (posix_trace_start(trid) != 0)
		return 3;
	for (int i = 0; i < 1000; i++)
		posix_trace_event(id, &i, sizeof i);
	struct posix_trace_event_info ev;
	int data, unavailable, n = 0;
	size_t len;
	while (posix_trace_trygetnext_event(trid, &ev, &data, sizeof data, &len, &unavailable) == 0 &&
	       !unavailable)
		n += ev.posix_event_id == id;
	if (n != 1000)
		return 4;
	return posix_trace_shutdown(trid) == 0 ? 0 : 5;
}

static int create_is_enomem(void)
{
	trace_id_t trid;
	return posix_trace_create(0, NULL, &trid) == ENOMEM ? 0 : 1;
}

/* What a traced program does (it never knows whether it is traced). */
static int instrumented_program(void)
{
	trace_event_id_t id;
	if (posix_trace_eventid_open("lim.name", &id) != 0)
		return 1;
	posix_trace_event(id, "x", 1);
	return 0;
}

/* The child under the limit ended with exit status 0 (not SIGXFSZ). */
static void assert_exits_0(int status, const char *limit)
{
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	              "child under RLIMIT_FSIZE %s: %s", limit, how);
}

START_TEST(instrumented_program_under_a_tiny_file_size_limit_runs)
{
	assert_exits_0(under_fsize_limit(1024, instrumented_program), "1 KiB");
}
END_TEST

START_TEST(stream_within_a_file_size_limit_works)
{
	assert_exits_0(under_fsize_limit(32u << 20, trace_a_little), "32 MiB");
}
END_TEST

START_TEST(stream_beyond_a_file_size_limit_is_enomem_without_sigxfsz)
{
	assert_exits_0(under_fsize_limit(64u << 10, create_is_enomem), "64 KiB");
}
END_TEST

#define CTLQ 256

/* A START and 300 filter changes nobody reads (FILTER is recorded while
 * the stream runs): 301 control events for a queue of 256. */
static void flood_control_events(int policy, int *kept, unsigned long long *lost,
                                 int *overrun)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = policy});
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_empty(&set));
	ck_assert_ok(posix_trace_start(trid));
	for (int i = 0; i < CTLQ + 44; i++)
		ck_assert_ok(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	*lost = st.posixtrace_lost_events;
	*overrun = st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN;
	*kept = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		unsigned char data[256];
		size_t len;
		int unavailable;
		ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len,
		                                          &unavailable));
		if (unavailable)
			break;
		*kept += ev.posix_event_id == POSIX_TRACE_FILTER ||
		                 ev.posix_event_id == POSIX_TRACE_START;
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}

START_TEST(control_events_beyond_the_queue_are_counted_lost)
{
	int policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL};
	for (int p = 0; p < 2; p++) {
		int kept, overrun;
		unsigned long long lost;
		flood_control_events(policies[p], &kept, &lost, &overrun);
		ck_assert_msg(overrun, "policy %d: no overrun reported", policies[p]);
		ck_assert_uint_eq(lost, 45);
		ck_assert_uint_eq(kept + lost, CTLQ + 45);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = pt_tcase(s, "fsize");
	tcase_add_test(tc, instrumented_program_under_a_tiny_file_size_limit_runs);
	tcase_add_test(tc, stream_within_a_file_size_limit_works);
	tcase_add_test(tc, stream_beyond_a_file_size_limit_is_enomem_without_sigxfsz);
	tc = pt_tcase(s, "control_queue");
	tcase_add_test(tc, control_events_beyond_the_queue_are_counted_lost);
	return pt_run(s);
}
