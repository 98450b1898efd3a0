/* SPDX-License-Identifier: MIT */
/*
 * t_dlopen: a program that does not link libposixtrace loads and unloads,
 * with dlopen() and dlclose() (XSH dlopen, dlclose), a plugin that does.
 * 1,000 cycles keep VmSize, mappings and descriptors flat, untraced and under
 * `posixtrace record`, and every event of every cycle is in the log; a thread
 * that posted through the plugin exits after dlclose() without a crash (its
 * TSD destructor is the library's, which stays loaded: -z nodelete); with
 * every key taken (pthread_key_create: EAGAIN at PTHREAD_KEYS_MAX) the
 * library still records and leaves the program's keys alone; with the static
 * TLS surplus used up, loading the plugin fails with a dlerror() or works.
 * The checks are in tests/dlopen/host.c (helper dl_host); dl_host is built
 * with the library's sanitizer flags, so these also run in sanitized builds.
 */
#include "harness.h"

#include <sys/wait.h>

#define CYCLES "1000"

static char *helper(const char *name) { return pt_helper_path(name); }

/* Runs argv to its end; returns its wait status. */
static int run(char *const argv[])
{
	pid_t pid = pt_fork();
	if (pid == 0) {
		execv(argv[0], argv);
		_exit(127);
	}
	pt_track(pid);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	pt_untrack(pid);
	return status;
}

static void assert_exit0(int status, const char *what)
{
	char how[64];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: %s", what, how);
}

/* posixtrace(1), next to the helpers' directory: BUILD/posixtrace. */
static const char *tool(void)
{
	static char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/../../posixtrace", pt_helpers_dir());
	ck_assert(n > 0 && n < (int)sizeof path && access(path, X_OK) == 0);
	return path;
}

START_TEST(cycles_untraced_stay_flat)
{
	char *argv[] = {helper("dl_host"), "cycles", CYCLES, helper("dl_plugin.so"), NULL};
	assert_exit0(run(argv), "dl_host cycles");
}
END_TEST

/* Every seq 0 .. expected - 1 once, as a "dl.event" event. */
static void check_log(const char *path, uint32_t expected)
{
	int fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	unsigned char *seen = calloc(expected, 1);
	uint32_t distinct = 0;
	struct pt_ev e;
	int unavailable = 0;
	for (;;) {
		ck_assert_ok(posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len,
		                                       &unavailable));
		if (unavailable)
			break;
		if (!pt_is_user(&e) || !pt_name_is(trid, e.info.posix_event_id, "dl.event"))
			continue;
		uint32_t seq = pt_ev_u32(&e);
		ck_assert_uint_lt(seq, expected);
		ck_assert_msg(!seen[seq], "seq %u twice", seq);
		seen[seq] = 1;
		distinct++;
	}
	ck_assert_uint_eq(distinct, expected);
	free(seen);
	posix_trace_close(trid);
	close(fd);
}

START_TEST(cycles_recorded_stay_flat_and_complete)
{
	char log[] = "/tmp/t_dlopen.XXXXXX";
	int fd = mkstemp(log);
	ck_assert_int_ge(fd, 0);
	close(fd);
	char *argv[] = {(char *)tool(), "record", "--force", "-o", log, "--", helper("dl_host"), "cycles",
	                CYCLES, helper("dl_plugin.so"), NULL};
	assert_exit0(run(argv), "posixtrace record dl_host cycles");
	check_log(log, 3 * atoi(CYCLES));
	unlink(log);
}
END_TEST

START_TEST(thread_exits_after_dlclose)
{
	char *argv[] = {helper("dl_host"), "thread", helper("dl_plugin.so"), NULL};
	assert_exit0(run(argv), "dl_host thread");
}
END_TEST

START_TEST(every_key_taken)
{
	char *argv[] = {helper("dl_host"), "keys", helper("dl_plugin.so"), NULL};
	assert_exit0(run(argv), "dl_host keys");
}
END_TEST

START_TEST(static_tls_used_up)
{
	char *argv[] = {helper("dl_host"), "tls", helper("dl_plugin.so"), helper("dl_filler.so"),
	                helper("dl_filler8.so"), NULL};
	assert_exit0(run(argv), "dl_host tls");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dlopen");
	TCase *tc = pt_tcase_fixture(s, "dlopen", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, cycles_untraced_stay_flat);
	tcase_add_test(tc, cycles_recorded_stay_flat_and_complete);
	tcase_add_test(tc, thread_exits_after_dlclose);
	tcase_add_test(tc, every_key_taken);
	tcase_add_test(tc, static_tls_used_up);
	return pt_run(s);
}
