/* SPDX-License-Identifier: MIT */
/*
 * The test harness's helpers that need only the C library and Check
 * (declared in tests/harness.h): the runner, time, files, processes, the
 * children a test starts and its scratch directories.  Compiled once per
 * build into BUILD/tests/libharness.a with tests/harness_trace.c.
 */
#include "harness.h"

TCase *pt_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, PT_TEST_TIMEOUT);
	suite_add_tcase(s, tc);
	return tc;
}

TCase *pt_tcase_fixture(Suite *s, const char *name, void (*setup)(void),
                        void (*teardown)(void))
{
	TCase *tc = pt_tcase(s, name);
	tcase_add_checked_fixture(tc, setup, teardown);
	return tc;
}

int pt_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* ---- time ---------------------------------------------------------------------- */

void pt_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

struct timespec pt_in_ms(long ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	} else if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += 1000000000L;
	}
	return ts;
}

int64_t pt_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return pt_ns(&ts);
}

uint32_t pt_stress_scaled(double count, uint32_t min, uint32_t max)
{
	const char *s = getenv("PT_STRESS_SCALE");
	double scale = s ? strtod(s, NULL) : 1.0;
	double n = count * (scale > 0 ? scale : 1.0);
	return n < min ? min : n > max ? max : (uint32_t)n;
}

/* ---- files ----------------------------------------------------------------------- */

int pt_reopen_ro(int fd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY);
	ck_assert_int_ge(ro, 0);
	return ro;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path); /* what cannot be removed is left; keep going */
	return 0;
}

void pt_remove_tree(const char *path)
{
	if (path[0])
		nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- processes --------------------------------------------------------------------- */

pid_t pt_guard_held(pid_t held)
{
	pid_t test = getpid(), guard = fork();
	ck_assert_int_ge(guard, 0);
	if (guard == 0) {
		setsid(); /* out of the test's process group, which Check kills */
		while (getppid() == test)
			pt_sleep_ms(20);
		kill(held, SIGKILL);
		_exit(0);
	}
	return guard;
}

void pt_guard_end(pid_t guard)
{
	kill(guard, SIGKILL);
	while (waitpid(guard, NULL, 0) < 0 && errno == EINTR)
		;
}

pid_t pt_fork(void)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	return pid;
}

pid_t pt_gone_pid(void)
{
	pid_t child = pt_fork();
	if (child == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	return child;
}

void pt_wait_exec(pid_t pid)
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

int pt_harness_proc_stat(pid_t pid, char *comm, size_t commlen, char *state, pid_t *ppid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren)
		return -1;
	size_t len = (size_t)(close_paren - open_paren - 1);
	if (comm && commlen) {
		if (len >= commlen)
			len = commlen - 1;
		memcpy(comm, open_paren + 1, len);
		comm[len] = '\0';
	}
	char st = 0;
	int pp = 0;
	if (sscanf(close_paren + 1, " %c %d", &st, &pp) != 2)
		return -1;
	if (state)
		*state = st;
	if (ppid)
		*ppid = pp;
	return 0;
}

int pt_procs_named(pid_t parent, const char *comm, pid_t *first)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		char name[64];
		pid_t pid = atoi(e->d_name), ppid = 0;
		if (pid <= 0 || pt_proc_stat(pid, name, sizeof name, NULL, &ppid) != 0 ||
		    ppid != parent || strcmp(name, comm) != 0)
			continue;
		if (n++ == 0 && first)
			*first = pid;
	}
	if (d)
		closedir(d);
	return n;
}

void pt_describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
}

int pt_append_args(char **argv, int argc, int max, const char *first, va_list ap)
{
	for (const char *a = first; a && argc < max - 1; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	return argc;
}

const char *pt_helpers_dir(void)
{
	static char path[PATH_MAX];
	const char *env = getenv("PT_TEST_HELPERS");
	if (env)
		return env;
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 16);
	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	strcpy(strrchr(path, '/'), "/helpers");
	return path;
}

char *pt_helper_path(const char *name)
{
	static char paths[4][PATH_MAX];
	static int next;
	char *p = paths[next++ % 4];
	int n = snprintf(p, PATH_MAX, "%s/%s", pt_helpers_dir(), name);
	ck_assert_msg(n > 0 && n < PATH_MAX && access(p, X_OK) == 0,
	              "%s not found: build the tests, or set PT_TEST_HELPERS", p);
	return p;
}

char *pt_tool_path(const char *test)
{
	static char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/../../posixtrace", pt_helpers_dir());
	if (n > 0 && n < (int)sizeof path && access(path, X_OK) == 0)
		return path;
	fprintf(stderr, "%s: SKIPPED (no posixtrace command at %s)\n", test, path);
	return NULL;
}

/* ---- child processes a test starts, killed when it ends ------------------------------ */

struct pt_children *pt_children(void)
{
	static struct pt_children c;
	return &c;
}

void pt_children_setup(void)
{
	struct pt_children *c = pt_children();
	c->test_pid = getpid();
	c->nlive = 0;
	c->used[0] = c->test_pid;
	c->nused = 1;
}

void pt_use_pid(pid_t pid)
{
	struct pt_children *c = pt_children();
	if (c->nused < (int)(sizeof c->used / sizeof c->used[0]))
		c->used[c->nused++] = pid;
}

void pt_track(pid_t pid)
{
	struct pt_children *c = pt_children();
	ck_assert_int_lt(c->nlive, (int)(sizeof c->live / sizeof c->live[0]));
	c->live[c->nlive++] = pid;
	pt_use_pid(pid);
}

void pt_untrack(pid_t pid)
{
	struct pt_children *c = pt_children();
	for (int i = 0; i < c->nlive; i++)
		if (c->live[i] == pid)
			c->live[i] = c->live[--c->nlive];
}

void pt_reap(pid_t pid)
{
	struct pt_children *c = pt_children();
	for (int i = 0; i < c->nlive; i++) {
		if (c->live[i] != pid)
			continue;
		kill(pid, SIGKILL);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		pt_untrack(pid);
		return;
	}
}

void pt_kill_children(void)
{
	struct pt_children *c = pt_children();
	if (getpid() != c->test_pid)
		return;
	while (c->nlive > 0)
		pt_reap(c->live[c->nlive - 1]);
}

int pt_wait_exit(pid_t pid, int timeout_ms)
{
	int status = 0;
	for (int waited = 0;; waited += 5) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		ck_assert_msg(r == 0, "waitpid(%d) failed", (int)pid);
		ck_assert_msg(waited < timeout_ms, "child %d did not exit", (int)pid);
		usleep(5000);
	}
	pt_untrack(pid);
	return status;
}

void pt_children_finish(int (*left)(pid_t pid, char *name, size_t len))
{
	struct pt_children *c = pt_children();
	char name[320] = "";
	pt_kill_children();
	for (int waited = 0;; waited += 20) {
		int n = 0;
		for (int i = 0; i < c->nused && !n; i++)
			n = left(c->used[i], name, sizeof name);
		if (!n)
			return;
		ck_assert_msg(waited < 2500, "left behind: %s", name);
		usleep(20000);
	}
}

int pt_kill_children_of_self(void)
{
	int killed = 0;
	for (int round = 0; round < 100; round++) {
		int found = 0;
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d))) {
			pid_t pid = (pid_t)atoi(e->d_name), ppid = 0;
			if (pid > 0 && pt_proc_stat(pid, NULL, 0, NULL, &ppid) == 0 && ppid == getpid()) {
				kill(pid, SIGKILL);
				found++;
			}
		}
		if (d)
			closedir(d);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!found)
			break;
		killed += found;
		usleep(10000);
	}
	return killed;
}

int pt_kill_descendants(void)
{
	if (getpid() != pt_children()->test_pid)
		return 0;
	pt_children()->nlive = 0;
	return pt_kill_children_of_self();
}

static void kill_descendants_at_exit(void) { pt_kill_descendants(); }

void pt_subreaper_setup(void)
{
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	atexit(kill_descendants_at_exit);
}

/* ---- scratch directories ----------------------------------------------------------- */

static char scratch_root[96];

const char *pt_scratch_dir(const char *name)
{
	static char path[160];
	ck_assert_msg(scratch_root[0], "pt_scratch_dir needs pt_run_scratch");
	snprintf(path, sizeof path, "%s/%s.XXXXXX", scratch_root, name);
	ck_assert_ptr_nonnull(mkdtemp(path));
	return path;
}

int pt_run_scratch(Suite *s, const char *prefix)
{
	snprintf(scratch_root, sizeof scratch_root, "/tmp/%s.XXXXXX", prefix);
	if (!mkdtemp(scratch_root) || chmod(scratch_root, 0755) != 0 ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror(prefix);
		return EXIT_FAILURE;
	}
	int rc = pt_run(s);
	pt_kill_children_of_self();
	pt_remove_tree(scratch_root);
	return rc;
}
