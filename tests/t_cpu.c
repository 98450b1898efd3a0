/* SPDX-License-Identifier: MIT */
/*
 * The CPU of each event (posixtrace_event_ext: posixtrace_cpu and
 * posixtrace_cpu_valid).
 *
 * Checks: a thread pinned to each allowed CPU in turn (sched_setaffinity)
 * posts events that carry the CPU sched_getcpu() gives it there, in
 * order and with times that do not step back across a change of CPU, read
 * from an active stream with posix_trace_getnext_event and from a log
 * read back with posix_trace_open; system events carry none; a process
 * whose glibc registers no rseq area (glibc.pthread.rseq=0) records
 * events without a CPU (valid 0), and they are read as such.
 */
#define PT_EV_DATA 64
#include "harness.h"
#include "logtest.h"

#include <posixtrace.h>

#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#define ROUNDS 3   /* each CPU visited this many times */
#define PER_PIN 40 /* events posted after each pin */

/* The first two CPUs the process may run on; fewer: the case cannot
 * check a change of CPU and fails (the project's machines have two). */
static void two_cpus(int cpu[2])
{
	cpu_set_t set;
	int n = 0;
	ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &set))
			cpu[n++] = c;
	ck_assert_msg(n == 2, "two CPUs are needed, the process may use %d", n);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
	ck_assert_int_eq(sched_getcpu(), cpu);
}

/* Pins the thread to each of cpu[] in turn, ROUNDS times, and posts
 * PER_PIN events after each pin, each carrying sched_getcpu() and its
 * number: returns how many it posted.  The thread may then run on both
 * again. */
static uint32_t post_on_each_cpu(trace_event_id_t id, const int cpu[2])
{
	cpu_set_t both;
	uint32_t seq = 0;
	ck_assert_int_eq(sched_getaffinity(0, sizeof both, &both), 0);
	for (int r = 0; r < ROUNDS; r++) {
		for (int k = 0; k < 2; k++) {
			pin(cpu[k]);
			for (int i = 0; i < PER_PIN; i++) {
				uint32_t d[2] = {(uint32_t)sched_getcpu(), seq++};
				posix_trace_event(id, d, sizeof d);
			}
		}
	}
	ck_assert_int_eq(sched_setaffinity(0, sizeof both, &both), 0);
	return seq;
}

/* Reads every event of trid (getnext: an active stream that was shut
 * off from writers, or a log); each user event must carry the CPU its
 * data says, each system event none.  Returns the user events read. */
static uint32_t check_cpus(trace_id_t trid, int pre_recorded, const int cpu[2])
{
	uint32_t user = 0, seen[2] = {0, 0};
	int64_t last_ns = 0;
	for (;;) {
		struct posix_trace_event_info info;
		struct posixtrace_event_ext ext;
		uint32_t d[2];
		size_t len = 0;
		int unavailable = 0;
		if (pre_recorded) {
			ck_assert_ok(posix_trace_getnext_event(trid, &info, d, sizeof d, &len, &unavailable));
		} else {
			ck_assert_ok(posix_trace_trygetnext_event(trid, &info, d, sizeof d, &len,
			                                          &unavailable));
		}
		if (unavailable)
			break;
		memset(&ext, 0xa5, sizeof ext);
		ck_assert_ok(posixtrace_event_ext(trid, &ext));
		if (info.posix_event_id < POSIX_TRACE_UNNAMED_USER_EVENT) {
			ck_assert_uint_eq(ext.posixtrace_cpu_valid, 0);
			ck_assert_uint_eq(ext.posixtrace_cpu, 0);
			continue;
		}
		ck_assert_uint_eq(len, sizeof d);
		ck_assert_uint_eq(d[1], user);
		/* A CPU record moves no time: one thread's events stay in order. */
		int64_t ns = (int64_t)info.posix_timestamp.tv_sec * 1000000000 +
		             info.posix_timestamp.tv_nsec;
		ck_assert_int_ge(ns, last_ns);
		last_ns = ns;
		ck_assert_msg(ext.posixtrace_cpu_valid == 1, "event %u: no CPU", d[1]);
		ck_assert_msg(ext.posixtrace_cpu == d[0], "event %u: CPU %u, posted on %u", d[1],
		              ext.posixtrace_cpu, d[0]);
		seen[d[0] == (uint32_t)cpu[1]]++;
		user++;
	}
	/* Both CPUs appear: the case saw changes of CPU, not one CPU's number. */
	ck_assert_uint_eq(seen[0], ROUNDS * PER_PIN);
	ck_assert_uint_eq(seen[1], ROUNDS * PER_PIN);
	return user;
}

START_TEST(active_stream_events_carry_the_cpu_of_the_posting_thread)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_UNTIL_FULL,
	                                                  .size = 1 << 20});
	trace_event_id_t id = pt_event_id("cpu:pinned");
	int cpu[2];
	two_cpus(cpu);
	ck_assert_ok(posix_trace_start(trid));
	uint32_t posted = post_on_each_cpu(id, cpu);
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_uint_eq(check_cpus(trid, 0, cpu), posted);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(log_events_carry_the_cpu_of_the_posting_thread)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, POSIX_TRACE_UNTIL_FULL, 0, POSIX_TRACE_FLUSH, 1 << 20, &trid));
	trace_event_id_t id = pt_event_id("cpu:logged");
	int cpu[2];
	two_cpus(cpu);
	ck_assert_ok(posix_trace_start(trid));
	uint32_t posted = post_on_each_cpu(id, cpu);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	trace_id_t log;
	ck_assert_ok(posix_trace_open(fd, &log));
	ck_assert_uint_eq(check_cpus(log, 1, cpu), posted);
	ck_assert_ok(posix_trace_close(log));
	close(fd);
}
END_TEST

/* The child's part of the next case: it runs with no rseq area. */
static int post_without_rseq(void)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_UNTIL_FULL});
	trace_event_id_t id = pt_event_id("cpu:none");
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < 10; i++)
		posix_trace_event(id, &i, sizeof i);
	ck_assert_ok(posix_trace_stop(trid));
	uint32_t user = 0;
	struct pt_ev e;
	while (pt_try_ev(trid, &e)) {
		struct posixtrace_event_ext ext;
		memset(&ext, 0xa5, sizeof ext);
		ck_assert_ok(posixtrace_event_ext(trid, &ext));
		ck_assert_uint_eq(ext.posixtrace_cpu_valid, 0);
		ck_assert_uint_eq(ext.posixtrace_cpu, 0);
		user += pt_is_user(&e);
	}
	ck_assert_uint_eq(user, 10);
	return 0;
}

START_TEST(without_rseq_events_carry_no_cpu)
{
	if (getenv("PT_CPU_CHILD")) {
		post_without_rseq();
		return;
	}
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		setenv("PT_CPU_CHILD", "1", 1);
		setenv("CK_RUN_CASE", "no_rseq", 1);
		setenv("CK_FORK", "no", 1);
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		execl("/proc/self/exe", "t_cpu", (char *)NULL);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child failed: %#x",
	              status);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpu");
	TCase *tc = pt_tcase(s, "pinned");
	tcase_add_test(tc, active_stream_events_carry_the_cpu_of_the_posting_thread);
	tcase_add_test(tc, log_events_carry_the_cpu_of_the_posting_thread);
	tc = pt_tcase(s, "no_rseq");
	tcase_add_test(tc, without_rseq_events_carry_no_cpu);
	return pt_run(s);
}
