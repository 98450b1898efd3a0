/*
 * Shared by every test program: Check (each test forked, with a timeout)
 * plus small helpers.  A test program is one file tests/t_NAME.c whose main()
 * builds a suite and returns pt_run(suite).
 */
#ifndef PT_TEST_HARNESS_H
#define PT_TEST_HARNESS_H

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#define PT_TEST_TIMEOUT 20 /* seconds, per test */

/* The generation-version attribute: "posixtrace MAJOR.MINOR.PATCH". */
#define PT_TEST_STR_(x) #x
#define PT_TEST_STR(x) PT_TEST_STR_(x)
#define PT_TEST_GENVERSION                                                     \
	"posixtrace " PT_TEST_STR(POSIXTRACE_VERSION_MAJOR) "." PT_TEST_STR(     \
	    POSIXTRACE_VERSION_MINOR) "." PT_TEST_STR(POSIXTRACE_VERSION_PATCH)

static inline TCase *pt_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, PT_TEST_TIMEOUT);
	suite_add_tcase(s, tc);
	return tc;
}

static inline int pt_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Asserts that a call returns the error number (not -1/errno) expected. */
#define ck_assert_err(call, expected)                                            \
	do {                                                                     \
		int pt_rc_ = (call);                                             \
		ck_assert_msg(pt_rc_ == (expected), "%s returned %d (%s), expected %d (%s)", \
		              #call, pt_rc_, strerror(pt_rc_), (int)(expected),  \
		              strerror(expected));                               \
	} while (0)

#define ck_assert_ok(call) ck_assert_err(call, 0)

/* ---- helpers several test programs use -------------------------------- */

/* A user event id for `name` (registered if new). */
static inline trace_event_id_t pt_event_id(const char *name)
{
	trace_event_id_t id = 0;
	ck_assert_ok(posix_trace_eventid_open(name, &id));
	return id;
}

/* A stream for this process with default attributes. */
static inline trace_id_t pt_create_default(void)
{
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(0, NULL, &trid));
	return trid;
}

/* Whether the stream names `id` `name`. */
static inline int pt_name_is(trace_id_t trid, trace_event_id_t id, const char *name)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	return posix_trace_eventid_get_name(trid, id, buf) == 0 && strcmp(buf, name) == 0;
}

static inline void pt_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* CLOCK_REALTIME `ms` milliseconds from now (an abstime for timedgetnext). */
static inline struct timespec pt_in_ms(int ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

static inline int pt_ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

/* A second, read-only open file description of the file behind fd. */
static inline int pt_reopen_ro(int fd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY);
	ck_assert_int_ge(ro, 0);
	return ro;
}

/* Waits (up to 5 s) until process `pid` runs another program than this one. */
static inline void pt_wait_exec(pid_t pid)
{
	char self[PATH_MAX], exe[PATH_MAX], path[64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
	ck_assert_int_gt(n, 0);
	self[n] = '\0';
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	for (int i = 0; i < 500; i++) {
		n = readlink(path, exe, sizeof exe - 1);
		if (n > 0) {
			exe[n] = '\0';
			if (strcmp(exe, self) != 0)
				return;
		}
		usleep(10000);
	}
	ck_abort_msg("process %d did not exec", (int)pid);
}

#endif
