/* SPDX-License-Identifier: MIT */
/*
 * t_callsite: posix_prog_address (XSH 2.11.1, posix_trace_event_info
 * Structure) is the address of the call that posted each event, inside the
 * calling function and distinct per call site, for programs built with plain
 * flags (-O0) as well as optimised ones, as C and as C++, by gcc and clang;
 * and posix_trace_event() evaluates each argument exactly once whether or not
 * a stream is armed (XSH 2.1.1, "Use of Functions").  The checks are in the
 * program tests/callsite/site.c; this runs every build of it (helpers site-*).
 */
#include "harness.h"

#include <dirent.h>

/* Runs one build of site; 1 when it exits 0. */
static int run_site(const char *path)
{
	pid_t pid = pt_fork();
	if (pid == 0) {
		execl(path, path, (char *)NULL);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 1;
	char how[64];
	pt_describe_status(status, how, sizeof how);
	fprintf(stderr, "t_callsite: %s: %s\n", path, how);
	return 0;
}

START_TEST(every_build_reports_its_call_sites)
{
	DIR *d = opendir(pt_helpers_dir());
	ck_assert_ptr_nonnull(d);
	int builds = 0, passed = 0;
	struct dirent *e;
	char path[PATH_MAX];
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "site-", 5) != 0)
			continue;
		int n = snprintf(path, sizeof path, "%s/%s", pt_helpers_dir(), e->d_name);
		ck_assert(n > 0 && n < (int)sizeof path);
		builds++;
		passed += run_site(path);
	}
	closedir(d);
	/* C and C++ at three levels by one compiler at least */
	ck_assert_int_ge(builds, 6);
	ck_assert_int_eq(passed, builds);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("callsite");
	TCase *tc = pt_tcase(s, "callsite");
	tcase_add_test(tc, every_build_reports_its_call_sites);
	return pt_run(s);
}
