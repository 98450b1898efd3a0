/* SPDX-License-Identifier: MIT */
/*
 * t_inherit: the Trace Inherit option, with real process trees.
 *
 * Checks the inheritance attribute (posix_trace_attr_getinherited, DESCRIPTION
 * and ERRORS: POSIX_TRACE_INHERITED, POSIX_TRACE_CLOSE_FOR_CHILD, EINVAL,
 * default; read
 * at posix_trace_create and shown by posix_trace_get_attr), that the
 * children of a process traced with POSIX_TRACE_INHERITED record into the
 * same stream with their own pid and thread ids (fork, three generations,
 * fork+exec, posix_spawn, vfork+exec, system(), exec of an already traced
 * child) and that no child records into a POSIX_TRACE_CLOSE_FOR_CHILD
 * stream; that a traced tree maps a name to one id (posix_trace_eventid_open,
 * DESCRIPTION: "unique for all the processes being traced in this same trace
 * stream"), also when siblings open a new name at the same instant,
 * named by the controller; the same with the controller in a separate
 * process; that the controller's trace_id_t is invalid in its child and
 * its streams are shut down when it exits, execs or is killed
 * (posix_trace_create, DESCRIPTION); and, under stress, 4 processes x 4
 * threads writing into one inherited stream while the controller reads:
 * nothing lost while there is room,
 * nothing duplicated, reordered per thread or torn, received + lost ==
 * written under LOOP and UNTIL_FULL, and a writer killed with SIGKILL does
 * not harm the others.  Contract: "Trace Inherit option".
 *
 * Exec'd children run tests/helpers/inherit_child (see its first comment)
 * from $PT_TEST_HELPERS.  Forked children report through pipes and exit
 * statuses; every child is killed with the test (PR_SET_PDEATHSIG, atexit)
 * and arms alarm(10).  PT_STRESS_SCALE scales the stress counts.
 */
#define PT_EV_DATA 64 /* the events read back here are small */
#include "harness.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <posixtrace.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ---- processes -------------------------------------------------------------- */

static void setup(void)
{
	pt_children_setup();
	atexit(pt_kill_children);
}

/* The child must exit with 0; otherwise its status is the failed step. */
static void wait_ok(pid_t pid)
{
	int status = pt_wait_exit(pid, 8000);
	ck_assert_msg(WIFEXITED(status), "child %d killed by signal %d", (int)pid,
	              WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_msg(WEXITSTATUS(status) == 0, "child %d failed at step %d", (int)pid,
	              WEXITSTATUS(status));
}

/* Forks a child that dies with the test and runs fn(arg), exiting with its
 * result. */
static pid_t fork_child(int (*fn)(void *), void *arg)
{
	fflush(NULL);
	pid_t pid = pt_fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(10);
		if (getppid() != pt_children()->test_pid)
			_exit(125);
		_exit(fn(arg));
	}
	pt_track(pid);
	return pid;
}

/* Forks a process of a deeper generation (not the test's child): it runs
 * fn(arg) and exits. */
static pid_t fork_plain(int (*fn)(void *), void *arg)
{
	pid_t pid = fork();
	if (pid == 0) {
		alarm(10);
		_exit(fn(arg));
	}
	return pid;
}

/* In a child: waits for its own child; 0 if it exited with 0. */
static int child_wait(pid_t pid)
{
	int status;
	if (pid < 0)
		return -1;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/* ---- /dev/shm objects ------------------------------------------------------ */

/* Counts /dev/shm/posixtrace.* objects whose target or controller is pid. */
static int shm_objects_of(pid_t pid, char *found, size_t len)
{
	DIR *d = opendir("/dev/shm");
	int n = 0;
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		int target, ctl;
		unsigned long long start;
		unsigned seq;
		if (sscanf(e->d_name, "posixtrace.%d.%llu.%d.%u", &target, &start, &ctl, &seq) != 4)
			continue;
		if (target == pid || ctl == pid) {
			if (found)
				snprintf(found, len, "/dev/shm/%s", e->d_name);
			n++;
		}
	}
	closedir(d);
	return n;
}

static int objects_gone(pid_t pid, int timeout_ms)
{
	for (int waited = 0; waited <= timeout_ms; waited += 10) {
		if (shm_objects_of(pid, NULL, 0) == 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

/* The end of every test: children killed, and within ~2 s no
 * /dev/shm/posixtrace.* object names a pid the test used. */
static void finish(void)
{
	pt_children_finish(shm_objects_of);
}

/* ---- reports through pipes --------------------------------------------------- */

struct rep {
	int32_t tag;
	int32_t pid;
	uint64_t thread;
};

static void send_rep(int fd, int tag)
{
	struct rep r = {tag, (int32_t)getpid(), (uint64_t)pthread_self()};
	if (write(fd, &r, sizeof r) != (ssize_t)sizeof r)
		_exit(120);
}

static int read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	size_t got = 0;
	while (got < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, timeout_ms) != 1)
			return 0;
		ssize_t n = read(fd, (char *)buf + got, len - got);
		if (n <= 0)
			return 0;
		got += (size_t)n;
	}
	return 1;
}

static struct rep read_rep(int fd)
{
	struct rep r;
	ck_assert_msg(read_full(fd, &r, sizeof r, 5000), "no report from a child");
	return r;
}

/* Reads one "ids <pid> <id>...\n" line of inherit_child; returns its pid and
 * stores up to max ids. */
static pid_t read_ids(int fd, trace_event_id_t *ids, int max)
{
	char line[256];
	size_t n = 0;
	while (n < sizeof line - 1) {
		ck_assert_msg(read_full(fd, &line[n], 1, 5000), "no ids line from inherit_child");
		if (line[n++] == '\n')
			break;
	}
	line[n] = '\0';
	int pid = 0, off = 0;
	ck_assert_msg(sscanf(line, "ids %d%n", &pid, &off) == 1, "bad line: %s", line);
	char *p = line + off;
	for (int i = 0; i < max; i++) {
		char *end;
		ids[i] = (trace_event_id_t)strtoul(p, &end, 10);
		ck_assert_msg(end != p, "missing id in: %s", line);
		p = end;
	}
	return pid;
}

/* ---- streams and events ------------------------------------------------------ */

/* The i-th 32-bit word of an event's data, UINT32_MAX past its end. */
static uint32_t word(const struct pt_ev *e, size_t i)
{
	uint32_t w = UINT32_MAX;
	if (e->len >= (i + 1) * sizeof w)
		memcpy(&w, e->data + i * sizeof w, sizeof w);
	return w;
}

/* Events posted by post() carry {tag, seq}. */
static uint32_t tag_of(const struct pt_ev *e) { return e->len >= 8 ? word(e, 0) : UINT32_MAX; }

static void post(trace_event_id_t id, uint32_t tag, uint32_t seq)
{
	uint32_t data[2] = {tag, seq};
	posix_trace_event(id, data, sizeof data);
}

static trace_id_t create_stream(pid_t pid, int inheritance)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, inheritance));
	ck_assert_ok(posix_trace_create(pid, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return trid;
}

static trace_id_t started(pid_t pid, int inheritance)
{
	trace_id_t trid = create_stream(pid, inheritance);
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

/* User events until `want` have arrived or timeout_ms passed; returns how
 * many (stored in out). */
static int collect_user(trace_id_t trid, struct pt_ev *out, int want, int timeout_ms)
{
	struct timespec end = pt_in_ms(timeout_ms);
	int n = 0;
	while (n < want) {
		int unavailable = -1;
		struct pt_ev e;
		int rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data,
		                                        &e.len, &unavailable, &end);
		if (rc == ETIMEDOUT)
			break;
		ck_assert_msg(rc == 0, "timedgetnext returned %d (%s)", rc, strerror(rc));
		if (pt_is_user(&e))
			out[n++] = e;
	}
	return n;
}

static int count_tag(const struct pt_ev *evs, int n, uint32_t tag)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += tag_of(&evs[i]) == tag;
	return c;
}

static const struct pt_ev *find_tag(const struct pt_ev *evs, int n, uint32_t tag)
{
	for (int i = 0; i < n; i++)
		if (tag_of(&evs[i]) == tag)
			return &evs[i];
	ck_abort_msg("no event with tag %u among %d", tag, n);
	return NULL;
}

/* Every event with `tag` comes from pid. */
static void assert_tag_from(const struct pt_ev *evs, int n, uint32_t tag, pid_t pid, int count)
{
	ck_assert_msg(count_tag(evs, n, tag) == count, "%d events with tag %u, expected %d",
	              count_tag(evs, n, tag), tag, count);
	for (int i = 0; i < n; i++)
		if (tag_of(&evs[i]) == tag)
			ck_assert_msg(evs[i].info.posix_pid == pid, "tag %u from pid %d, expected %d",
			              tag, (int)evs[i].info.posix_pid, (int)pid);
}

/* State shared with forked children (copied at fork). */
static trace_event_id_t ev_id;
static int rep_fd = -1, go_fd = -1;
static trace_id_t ctl_trid;

/* ---- attribute -------------------------------------------------------------- */

START_TEST(inheritance_defaults_to_close_for_child)
{
	trace_attr_t attr;
	int v = -1;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_getinherited(&attr, &v));
	ck_assert_int_eq(v, POSIX_TRACE_CLOSE_FOR_CHILD);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

START_TEST(setinherited_stores_both_values)
{
	static const int values[] = {POSIX_TRACE_INHERITED, POSIX_TRACE_CLOSE_FOR_CHILD};
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	for (int i = 0; i < 2; i++) {
		int v = -1;
		ck_assert_ok(posix_trace_attr_setinherited(&attr, values[i]));
		ck_assert_ok(posix_trace_attr_getinherited(&attr, &v));
		ck_assert_int_eq(v, values[i]);
	}
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

START_TEST(setinherited_rejects_other_values_and_keeps_the_old_one)
{
	static const int bad[] = {-1, 2, 3, 42, INT_MAX, INT_MIN};
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		int v = -1;
		ck_assert_err(posix_trace_attr_setinherited(&attr, bad[i]), EINVAL);
		ck_assert_ok(posix_trace_attr_getinherited(&attr, &v));
		ck_assert_int_eq(v, POSIX_TRACE_INHERITED);
	}
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

START_TEST(getinherited_and_setinherited_reject_null_or_uninitialised)
{
	trace_attr_t attr, raw;
	int v;
	memset(&raw, 0, sizeof raw);
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_err(posix_trace_attr_getinherited(&attr, NULL), EINVAL);
	ck_assert_err(posix_trace_attr_getinherited(NULL, &v), EINVAL);
	ck_assert_err(posix_trace_attr_setinherited(NULL, POSIX_TRACE_INHERITED), EINVAL);
	ck_assert_err(posix_trace_attr_getinherited(&raw, &v), EINVAL);
	ck_assert_err(posix_trace_attr_setinherited(&raw, POSIX_TRACE_INHERITED), EINVAL);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

/* _i: the value at create; the attr is then changed to the other one. */
START_TEST(get_attr_shows_inheritance_read_at_create)
{
	int at_create = _i ? POSIX_TRACE_INHERITED : POSIX_TRACE_CLOSE_FOR_CHILD;
	int other = _i ? POSIX_TRACE_CLOSE_FOR_CHILD : POSIX_TRACE_INHERITED;
	trace_attr_t attr, got;
	trace_id_t trid;
	int v = -1;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, at_create));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, other));
	ck_assert_ok(posix_trace_attr_init(&got));
	ck_assert_ok(posix_trace_get_attr(trid, &got));
	ck_assert_ok(posix_trace_attr_getinherited(&got, &v));
	ck_assert_int_eq(v, at_create);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_attr_destroy(&got));
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

static int child_posts_tag_2(void *arg)
{
	(void)arg;
	post(ev_id, 2, 0);
	return 0;
}

/* _i: the value at create; the attr is changed to the other value (and
 * destroyed) before the fork: the child follows the value at create. */
START_TEST(attr_changed_after_create_does_not_change_child_tracing)
{
	int at_create = _i ? POSIX_TRACE_INHERITED : POSIX_TRACE_CLOSE_FOR_CHILD;
	int other = _i ? POSIX_TRACE_CLOSE_FOR_CHILD : POSIX_TRACE_INHERITED;
	trace_attr_t attr;
	trace_id_t trid;
	ev_id = pt_event_id("inh.attr");
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, at_create));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, other));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));
	post(ev_id, 1, 0);
	pid_t c = fork_child(child_posts_tag_2, NULL);
	wait_ok(c);
	struct pt_ev got[8];
	int n = pt_drain_user(trid, got, 8);
	assert_tag_from(got, n, 1, getpid(), 1);
	assert_tag_from(got, n, 2, c, _i ? 1 : 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

/* ---- fork ------------------------------------------------------------------- */

static void *post_tag_11(void *arg)
{
	(void)arg;
	post(ev_id, 11, 0);
	send_rep(rep_fd, 11);
	return NULL;
}

static int child_posts_from_two_threads(void *arg)
{
	(void)arg;
	pthread_t t;
	post(ev_id, 10, 0);
	send_rep(rep_fd, 10);
	STEP(1, pthread_create(&t, NULL, post_tag_11, NULL) == 0);
	STEP(2, pthread_join(t, NULL) == 0);
	return 0;
}

START_TEST(fork_child_records_with_its_own_pid_and_threads)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	rep_fd = p[1];
	ev_id = pt_event_id("inh.fork");
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	post(ev_id, 1, 0);
	pid_t c = fork_child(child_posts_from_two_threads, NULL);
	wait_ok(c);
	struct rep r10 = read_rep(p[0]), r11 = read_rep(p[0]);
	struct pt_ev got[8];
	int n = pt_drain_user(trid, got, 8);
	ck_assert_int_eq(n, 3);
	assert_tag_from(got, n, 1, getpid(), 1);
	assert_tag_from(got, n, 10, c, 1);
	assert_tag_from(got, n, 11, c, 1);
	ck_assert(pthread_equal(find_tag(got, n, 1)->info.posix_thread_id, pthread_self()));
	ck_assert_uint_eq((uint64_t)find_tag(got, n, 10)->info.posix_thread_id, r10.thread);
	ck_assert_uint_eq((uint64_t)find_tag(got, n, 11)->info.posix_thread_id, r11.thread);
	ck_assert_uint_ne(r10.thread, r11.thread);
	ck_assert_uint_eq(find_tag(got, n, 10)->info.posix_event_id, ev_id);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

START_TEST(fork_child_is_not_recorded_in_close_for_child_stream)
{
	ev_id = pt_event_id("inh.close");
	trace_id_t trid = started(0, POSIX_TRACE_CLOSE_FOR_CHILD);
	post(ev_id, 1, 0);
	pid_t c = fork_child(child_posts_tag_2, NULL);
	wait_ok(c);
	post(ev_id, 3, 0);
	struct pt_ev got[8];
	int n = pt_drain_user(trid, got, 8);
	ck_assert_int_eq(n, 2);
	assert_tag_from(got, n, 1, getpid(), 1);
	assert_tag_from(got, n, 3, getpid(), 1);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

START_TEST(child_records_into_inherited_stream_only_when_both_kinds_exist)
{
	ev_id = pt_event_id("inh.both");
	trace_id_t inh = started(0, POSIX_TRACE_INHERITED);
	trace_id_t cfc = started(0, POSIX_TRACE_CLOSE_FOR_CHILD);
	post(ev_id, 1, 0);
	pid_t c = fork_child(child_posts_tag_2, NULL);
	wait_ok(c);
	struct pt_ev got[8];
	int n = pt_drain_user(inh, got, 8);
	ck_assert_int_eq(n, 2);
	assert_tag_from(got, n, 1, getpid(), 1);
	assert_tag_from(got, n, 2, c, 1);
	n = pt_drain_user(cfc, got, 8);
	ck_assert_int_eq(n, 1);
	assert_tag_from(got, n, 1, getpid(), 1);
	ck_assert_ok(posix_trace_shutdown(cfc));
	ck_assert_ok(posix_trace_shutdown(inh));
	finish();
}
END_TEST

static int generation(void *arg)
{
	intptr_t level = (intptr_t)arg;
	post(ev_id, (uint32_t)(100 + level), 0);
	send_rep(rep_fd, (int)(100 + level));
	if (level == 3)
		return 0;
	return child_wait(fork_plain(generation, (void *)(level + 1)));
}

START_TEST(three_generations_record_with_their_pids)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	rep_fd = p[1];
	ev_id = pt_event_id("inh.gen");
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	pid_t c = fork_child(generation, (void *)(intptr_t)1);
	wait_ok(c);
	struct pt_ev got[8];
	int n = pt_drain_user(trid, got, 8);
	ck_assert_int_eq(n, 3);
	pid_t seen[3];
	for (int i = 0; i < 3; i++) {
		struct rep r = read_rep(p[0]);
		ck_assert(r.tag >= 101 && r.tag <= 103);
		assert_tag_from(got, n, (uint32_t)r.tag, r.pid, 1);
		seen[r.tag - 101] = r.pid;
	}
	ck_assert_int_eq(seen[0], c);
	ck_assert_int_ne(seen[1], seen[0]);
	ck_assert_int_ne(seen[2], seen[1]);
	ck_assert_int_ne(seen[2], seen[0]);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

/* ---- exec'd children -------------------------------------------------------- */

enum { BY_FORK_EXEC, BY_POSIX_SPAWN, BY_VFORK_EXEC, BY_SYSTEM };

static pid_t vfork_exec(const char *path, char *const argv[])
{
	pid_t pid = vfork();
	if (pid == 0) {
		execv(path, argv);
		_exit(127);
	}
	return pid;
}

/* Starts inherit_child with the report fd and the given options (NULL
 * terminated) the way `how` says; returns its pid (0 for system(), which
 * has returned once the helper ended). */
static pid_t start_helper(int how, int report, const char *opt, ...)
{
	char rfd[16], *argv[32];
	int argc = 0;
	snprintf(rfd, sizeof rfd, "%d", report);
	argv[argc++] = (char *)pt_helper_path("inherit_child");
	argv[argc++] = "-r";
	argv[argc++] = rfd;
	va_list ap;
	va_start(ap, opt);
	argc = pt_append_args(argv, argc, 32, opt, ap);
	va_end(ap);
	pid_t pid = 0;
	if (how == BY_FORK_EXEC) {
		fflush(NULL);
		pid = pt_fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			execv(argv[0], argv);
			_exit(127);
		}
	} else if (how == BY_POSIX_SPAWN) {
		ck_assert_ok(posix_spawn(&pid, argv[0], NULL, NULL, argv, environ));
	} else if (how == BY_VFORK_EXEC) {
		pid = vfork_exec(argv[0], argv);
		ck_assert_int_gt(pid, 0);
	} else {
		/* dash 0.5.12 forks even for "sh -c 'prog args'": the helper's
		 * parent is sh, which does not load the library; the helper is
		 * still a descendant of this traced process. */
		char cmd[1024];
		size_t len = 0;
		cmd[0] = '\0';
		for (int i = 0; i < argc; i++)
			len += (size_t)snprintf(cmd + len, sizeof cmd - len, "%s'%s'", i ? " " : "",
			                        argv[i]);
		ck_assert_uint_lt(len, sizeof cmd);
		int status = system(cmd);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "system(%s) returned %d", cmd, status);
		return 0;
	}
	pt_track(pid);
	return pid;
}

static const char *how_name[] = {"fork+exec", "posix_spawn", "vfork+exec", "system()"};

START_TEST(exec_started_helper_records_with_its_pid)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	pid_t h = start_helper(_i, p[1], "-t", "200", "-c", "3", "-n", "inh.exec", NULL);
	trace_event_id_t id;
	pid_t reported = read_ids(p[0], &id, 1);
	if (h)
		wait_ok(h);
	else
		h = reported;
	ck_assert_int_eq(reported, h);
	ck_assert_int_ne(h, getpid());
	struct pt_ev got[8];
	int n = pt_drain_user(trid, got, 8);
	ck_assert_msg(count_tag(got, n, 200) == 3, "%s: %d of 3 helper events recorded",
	              how_name[_i], count_tag(got, n, 200));
	assert_tag_from(got, n, 200, h, 3);
	for (int i = 0; i < n; i++) {
		ck_assert_uint_eq(word(&got[i], 1), (uint32_t)i);
		ck_assert_uint_eq(got[i].info.posix_event_id, id);
	}
	ck_assert(pt_name_is(trid, id, "inh.exec"));
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

START_TEST(exec_started_helper_is_not_recorded_in_close_for_child_stream)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	trace_id_t trid = started(0, POSIX_TRACE_CLOSE_FOR_CHILD);
	pid_t h = start_helper(_i, p[1], "-t", "200", "-c", "3", NULL);
	trace_event_id_t id;
	read_ids(p[0], &id, 1);
	if (h)
		wait_ok(h);
	struct pt_ev got[8];
	ck_assert_int_eq(pt_drain_user(trid, got, 8), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

static int child_posts_then_execs_helper_twice(void *arg)
{
	const char *path = arg;
	char rfd[16];
	snprintf(rfd, sizeof rfd, "%d", rep_fd);
	post(ev_id, 300, 0);
	execl(path, path, "-r", rfd, "-n", "inh.exec", "-t", "301", "-c", "2", "-x", "--", path,
	      "-r", rfd, "-n", "inh.exec", "-t", "302", "-c", "2", (char *)NULL);
	return 1;
}

START_TEST(traced_fork_child_stays_traced_across_two_execs)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	rep_fd = p[1];
	ev_id = pt_event_id("inh.exec");
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	pid_t c = fork_child(child_posts_then_execs_helper_twice, (void *)pt_helper_path("inherit_child"));
	trace_event_id_t id1, id2;
	ck_assert_int_eq(read_ids(p[0], &id1, 1), c);
	ck_assert_int_eq(read_ids(p[0], &id2, 1), c);
	wait_ok(c);
	ck_assert_uint_eq(id1, ev_id);
	ck_assert_uint_eq(id2, ev_id);
	struct pt_ev got[8];
	int n = pt_drain_user(trid, got, 8);
	assert_tag_from(got, n, 300, c, 1);
	assert_tag_from(got, n, 301, c, 2);
	assert_tag_from(got, n, 302, c, 2);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

/* ---- names -------------------------------------------------------------- */

static int child_registers_then_waits(void *arg)
{
	(void)arg;
	trace_event_id_t mine, parents;
	char c;
	STEP(1, posix_trace_eventid_open("inh.n.child-first", &mine) == 0);
	post(mine, 20, 0);
	send_rep(rep_fd, (int)mine);
	STEP(2, read(go_fd, &c, 1) == 1);
	STEP(3, posix_trace_eventid_open("inh.n.parent-first", &parents) == 0);
	send_rep(rep_fd, (int)parents);
	return 0;
}

START_TEST(parent_and_fork_child_share_name_ids_both_ways)
{
	int p[2], g[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(g), 0);
	rep_fd = p[1];
	go_fd = g[0];
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	pid_t c = fork_child(child_registers_then_waits, NULL);
	trace_event_id_t childs = (trace_event_id_t)read_rep(p[0]).tag;
	/* registered first by the child: same id here, named by the controller */
	ck_assert_uint_eq(pt_event_id("inh.n.child-first"), childs);
	ck_assert(pt_name_is(trid, childs, "inh.n.child-first"));
	/* registered first by the parent: the child gets the same id */
	trace_event_id_t parents = pt_event_id("inh.n.parent-first");
	ck_assert_uint_ne(parents, childs);
	ck_assert_int_eq(write(g[1], "g", 1), 1);
	ck_assert_uint_eq((trace_event_id_t)read_rep(p[0]).tag, parents);
	wait_ok(c);
	struct pt_ev got[4];
	int n = pt_drain_user(trid, got, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, childs);
	ck_assert_int_eq(got[0].info.posix_pid, c);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

/* ---- one name registered by several processes at the same instant --------- */

#define RACE_CHILDREN 4
#define RACE_ROUNDS 4
#define RACE_NAMES 60

static void race_name(char *buf, size_t len, int round, int k)
{
	snprintf(buf, len, "inh.race.%d.%d", round, k);
}

/* A shared word the siblings spin on, so that they start within
 * nanoseconds of each other. */
static _Atomic int *race_go;

/* Registers the round's names in one order once race_go is set, and
 * reports their ids in one write. */
static int child_races_for_names(void *arg)
{
	int round = (int)(intptr_t)arg;
	char name[64];
	int32_t ids[RACE_NAMES];
	atomic_fetch_add(&race_go[1], 1);
	while (!atomic_load(&race_go[0]))
		;
	for (int k = 0; k < RACE_NAMES; k++) {
		trace_event_id_t id;
		race_name(name, sizeof name, round, k);
		STEP(2, posix_trace_eventid_open(name, &id) == 0);
		ids[k] = (int32_t)id;
	}
	STEP(3, write(rep_fd, ids, sizeof ids) == (ssize_t)sizeof ids);
	return 0;
}

/* Whether the stream's list of event types holds id, named name. */
static int listed(trace_id_t trid, trace_event_id_t want, const char *want_name)
{
	int unavailable = 0;
	trace_event_id_t id;
	char name[TRACE_EVENT_NAME_MAX + 1];
	ck_assert_ok(posix_trace_eventtypelist_rewind(trid));
	for (;;) {
		ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
		if (unavailable)
			return 0;
		if (id == want)
			return posix_trace_eventid_get_name(trid, id, name) == 0 &&
			       strcmp(name, want_name) == 0;
	}
}

/* posix_trace_eventid_open, DESCRIPTION: the id is "unique for all the
 * processes being traced in this same trace stream", also when siblings
 * open a new name at the same instant (as the workers of a pre-forking
 * server do); and the stream lists each of these ids with its name. */
START_TEST(siblings_opening_one_name_at_once_get_one_id)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	rep_fd = p[1];
	race_go = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(race_go, MAP_FAILED);
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	for (int round = 0; round < RACE_ROUNDS; round++) {
		pid_t kids[RACE_CHILDREN];
		atomic_store(&race_go[0], 0);
		atomic_store(&race_go[1], 0);
		for (int c = 0; c < RACE_CHILDREN; c++)
			kids[c] = fork_child(child_races_for_names, (void *)(intptr_t)round);
		while (atomic_load(&race_go[1]) < RACE_CHILDREN)
			usleep(100);
		atomic_store(&race_go[0], 1);
		int32_t first[RACE_NAMES], ids[RACE_NAMES];
		for (int c = 0; c < RACE_CHILDREN; c++) {
			ck_assert_msg(read_full(p[0], c ? ids : first, sizeof ids, 5000),
			              "round %d: no ids from a child", round);
			for (int k = 0; c && k < RACE_NAMES; k++)
				ck_assert_msg(ids[k] == first[k], "round %d: name %d has ids %d and %d",
				              round, k, (int)first[k], (int)ids[k]);
		}
		for (int c = 0; c < RACE_CHILDREN; c++)
			wait_ok(kids[c]);
		for (int k = 0; k < RACE_NAMES; k++) {
			char name[64];
			race_name(name, sizeof name, round, k);
			ck_assert_uint_eq(pt_event_id(name), (trace_event_id_t)first[k]);
			ck_assert_msg(listed(trid, (trace_event_id_t)first[k], name),
			              "%s (id %d) not in the stream's list", name, (int)first[k]);
		}
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

START_TEST(exec_started_helper_shares_name_ids_with_parent)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	trace_event_id_t parents = pt_event_id("inh.x.parent-first");
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	pid_t h = start_helper(_i, p[1], "-n", "inh.x.helper-first", "-n", "inh.x.parent-first",
	                       "-t", "400", "-c", "1", NULL);
	trace_event_id_t ids[2];
	pid_t reported = read_ids(p[0], ids, 2);
	if (h)
		wait_ok(h);
	ck_assert_uint_eq(ids[1], parents);
	ck_assert_uint_eq(pt_event_id("inh.x.helper-first"), ids[0]);
	ck_assert_uint_ne(ids[0], ids[1]);
	ck_assert(pt_name_is(trid, ids[0], "inh.x.helper-first"));
	struct pt_ev got[4];
	int n = pt_drain_user(trid, got, 4);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, ids[0]);
	ck_assert_int_eq(got[0].info.posix_pid, reported);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

/* ---- controller in a separate process ------------------------------------ */

/* The target: told to go, it posts (tag 1; after the rest unless
 * post_first), posix_spawns inherit_child (tag 6), then forks B, which posts
 * (tag 2), fork+execs inherit_child (tag 3) and forks C (tag 4).  The
 * helpers report on helper_report, in this order. */
struct target_args {
	const char *helper;
	int helper_report;
	int post_first; /* 0: spawn and fork before the target's first event */
};

static int grandchild_posts_tag_4(void *arg)
{
	(void)arg;
	post(ev_id, 4, 0);
	send_rep(rep_fd, 4);
	return 0;
}

static int child_b(void *arg)
{
	struct target_args *ta = arg;
	char rfd[16];
	snprintf(rfd, sizeof rfd, "%d", ta->helper_report);
	post(ev_id, 2, 0);
	send_rep(rep_fd, 2);
	pid_t h = fork();
	if (h == 0) {
		execl(ta->helper, ta->helper, "-r", rfd, "-n", "inh.r.helper", "-t", "3", "-c", "1",
		      (char *)NULL);
		_exit(127);
	}
	STEP(1, child_wait(h) == 0);
	STEP(2, child_wait(fork_plain(grandchild_posts_tag_4, NULL)) == 0);
	return 0;
}

static int target_main(void *arg)
{
	struct target_args *ta = arg;
	char c;
	STEP(1, posix_trace_eventid_open("inh.r", &ev_id) == 0);
	send_rep(rep_fd, 0);
	STEP(2, read(go_fd, &c, 1) == 1);
	if (ta->post_first)
		post(ev_id, 1, 0);
	char rfd[16];
	snprintf(rfd, sizeof rfd, "%d", ta->helper_report);
	char *argv[] = {(char *)ta->helper, "-r", rfd, "-n", "inh.r.spawned", "-t", "6", "-c", "1",
	                NULL};
	pid_t sp;
	STEP(6, posix_spawn(&sp, ta->helper, NULL, NULL, argv, environ) == 0);
	STEP(7, child_wait(sp) == 0);
	STEP(3, child_wait(fork_plain(child_b, ta)) == 0);
	if (!ta->post_first)
		post(ev_id, 1, 0);
	STEP(4, read(go_fd, &c, 1) == 1); /* stays until the test has read */
	return 0;
}

/* The controller (this process) traces the target with `inheritance`; with
 * POSIX_TRACE_INHERITED the target's tree records with their pids, else
 * the target alone.  post_first: the target posts before it forks (it has
 * joined the stream); else it forks first. */
static void check_target_tree(int post_first, int inheritance)
{
	int p[2], g[2], hp[2], inh = inheritance == POSIX_TRACE_INHERITED;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(g), 0);
	ck_assert_int_eq(pipe(hp), 0);
	rep_fd = p[1];
	go_fd = g[0];
	struct target_args ta = {pt_helper_path("inherit_child"), hp[1], post_first};
	pid_t t = fork_child(target_main, &ta);
	ck_assert_int_eq(read_rep(p[0]).pid, t);
	trace_id_t trid = started(t, inheritance);
	ck_assert_int_eq(write(g[1], "g", 1), 1);
	/* each reports after it posted */
	struct rep r2 = read_rep(p[0]), r4 = read_rep(p[0]);
	trace_event_id_t hid, sid;
	pid_t hs = read_ids(hp[0], &sid, 1);
	pid_t h = read_ids(hp[0], &hid, 1);
	ck_assert_int_eq(r2.tag, 2);
	ck_assert_int_eq(r4.tag, 4);
	struct pt_ev got[16];
	int n = collect_user(trid, got, inh ? 5 : 1, 5000);
	n += pt_drain_user(trid, got + n, 16 - n);
	assert_tag_from(got, n, 1, t, 1);
	assert_tag_from(got, n, 2, r2.pid, inh);
	assert_tag_from(got, n, 3, h, inh);
	assert_tag_from(got, n, 4, r4.pid, inh);
	assert_tag_from(got, n, 6, hs, inh);
	ck_assert_int_ne(r2.pid, t);
	ck_assert_int_ne(r4.pid, r2.pid);
	if (inh) {
		ck_assert(pt_name_is(trid, hid, "inh.r.helper"));
		ck_assert_uint_eq((uint64_t)find_tag(got, n, 2)->info.posix_thread_id, r2.thread);
	}
	ck_assert_int_eq(write(g[1], "g", 1), 1);
	wait_ok(t);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}

START_TEST(separate_controller_records_target_tree_with_their_pids)
{
	check_target_tree(1, POSIX_TRACE_INHERITED);
}
END_TEST

START_TEST(separate_controller_close_for_child_stream_records_target_alone)
{
	check_target_tree(1, POSIX_TRACE_CLOSE_FOR_CHILD);
}
END_TEST

/* Spec: "After a fork() or spawn() operation, if the parent is being
 * traced, its child shall be concurrently traced": the target is traced
 * from posix_trace_start on, also before its first posix_trace_event, so a
 * child it forks or spawns then is traced too. */
START_TEST(separate_controller_records_children_started_before_targets_first_event)
{
	check_target_tree(0, POSIX_TRACE_INHERITED);
}
END_TEST

static int child_registers_name(void *arg)
{
	(void)arg;
	trace_event_id_t id;
	STEP(1, posix_trace_eventid_open("inh.r.child-first", &id) == 0);
	post(id, 5, 0);
	send_rep(rep_fd, (int)id);
	return 0;
}

static int target_names(void *arg)
{
	(void)arg;
	char c;
	trace_event_id_t early, late;
	STEP(1, posix_trace_eventid_open("inh.r.early", &early) == 0);
	send_rep(rep_fd, 0);
	STEP(2, read(go_fd, &c, 1) == 1);
	post(early, 1, 0);
	STEP(3, child_wait(fork_plain(child_registers_name, NULL)) == 0);
	STEP(4, posix_trace_eventid_open("inh.r.child-first", &late) == 0);
	send_rep(rep_fd, (int)late);
	STEP(5, read(go_fd, &c, 1) == 1);
	return 0;
}

START_TEST(separate_controller_names_id_registered_first_by_target_child)
{
	int p[2], g[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(g), 0);
	rep_fd = p[1];
	go_fd = g[0];
	pid_t t = fork_child(target_names, NULL);
	ck_assert_int_eq(read_rep(p[0]).pid, t);
	trace_id_t trid = started(t, POSIX_TRACE_INHERITED);
	ck_assert_int_eq(write(g[1], "g", 1), 1);
	struct pt_ev got[4];
	int n = collect_user(trid, got, 2, 5000);
	struct rep child = read_rep(p[0]), target = read_rep(p[0]);
	ck_assert_int_ne(child.pid, t);
	ck_assert_int_eq(target.pid, t);
	ck_assert_int_eq(target.tag, child.tag);
	ck_assert(pt_name_is(trid, (trace_event_id_t)child.tag, "inh.r.child-first"));
	assert_tag_from(got, n, 5, child.pid, 1);
	ck_assert_uint_eq(find_tag(got, n, 5)->info.posix_event_id, (trace_event_id_t)child.tag);
	ck_assert(pt_name_is(trid, find_tag(got, n, 1)->info.posix_event_id, "inh.r.early"));
	ck_assert_int_eq(write(g[1], "g", 1), 1);
	wait_ok(t);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

/* ---- the controller's trid and its death ------------------------------------ */

static int child_uses_parents_trid(void *arg)
{
	(void)arg;
	struct posix_trace_status_info st;
	struct posix_trace_event_info info;
	trace_attr_t attr;
	size_t len;
	int unavailable;
	STEP(1, posix_trace_get_status(ctl_trid, &st) == EINVAL);
	STEP(2, posix_trace_attr_init(&attr) == 0);
	STEP(3, posix_trace_get_attr(ctl_trid, &attr) == EINVAL);
	STEP(4, posix_trace_trygetnext_event(ctl_trid, &info, NULL, 0, &len, &unavailable) ==
	            EINVAL);
	STEP(5, posix_trace_stop(ctl_trid) == EINVAL);
	STEP(6, posix_trace_clear(ctl_trid) == EINVAL);
	STEP(7, posix_trace_start(ctl_trid) == EINVAL);
	STEP(8, posix_trace_shutdown(ctl_trid) == EINVAL);
	post(ev_id, 2, 0); /* still traced: the stream is its parent's */
	return 0;
}

START_TEST(controllers_trid_is_einval_in_its_fork_child)
{
	ev_id = pt_event_id("inh.trid");
	ctl_trid = started(0, POSIX_TRACE_INHERITED);
	pid_t c = fork_child(child_uses_parents_trid, NULL);
	wait_ok(c);
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(ctl_trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	struct pt_ev got[4];
	int n = pt_drain_user(ctl_trid, got, 4);
	assert_tag_from(got, n, 2, c, 1);
	ck_assert_ok(posix_trace_shutdown(ctl_trid));
	finish();
}
END_TEST

/* A member of the controller's tree: posts forever (every 500 us) and
 * writes a progress byte to rep_fd every 20 events. */
static int poster_forever(void *arg)
{
	(void)arg;
	for (uint32_t k = 0;; k++) {
		post(ev_id, 7, k);
		if (k % 20 == 19 && write(rep_fd, "p", 1) != 1)
			return 1;
		usleep(500);
	}
}

enum { CTL_EXITS, CTL_EXECS, CTL_KILLED };

/* The controller: an inherited stream of its own, a child posting into
 * it; once it read one of the child's events it writes the child's pid to
 * go_fd (here a write end), then exits, execs or is killed (arg). */
static int controller_then_dies(void *arg)
{
	int how = (int)(intptr_t)arg;
	trace_id_t trid;
	trace_attr_t attr;
	struct posix_trace_event_info info;
	uint32_t data[4];
	size_t len;
	int unavailable;
	STEP(1, posix_trace_eventid_open("inh.die", &ev_id) == 0);
	STEP(2, posix_trace_attr_init(&attr) == 0);
	STEP(3, posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) == 0);
	STEP(4, posix_trace_create(0, &attr, &trid) == 0);
	STEP(5, posix_trace_start(trid) == 0);
	pid_t g = fork_plain(poster_forever, NULL);
	STEP(6, g > 0);
	do {
		struct timespec abstime = pt_in_ms(5000);
		STEP(7, posix_trace_timedgetnext_event(trid, &info, data, sizeof data, &len,
		                                       &unavailable, &abstime) == 0);
	} while (info.posix_pid != g);
	STEP(8, write(go_fd, &g, sizeof g) == (ssize_t)sizeof g);
	if (how == CTL_EXITS)
		exit(0);
	if (how == CTL_EXECS)
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
	raise(SIGKILL);
	return 9;
}

START_TEST(controller_exit_exec_or_kill_shuts_down_inherited_stream)
{
	static const char *how[] = {"exits", "execs", "is killed"};
	int prog[2], ok[2];
	ck_assert_int_eq(pipe(prog), 0);
	ck_assert_int_eq(pipe(ok), 0);
	rep_fd = prog[1];
	go_fd = ok[1];
	pid_t c = fork_child(controller_then_dies, (void *)(intptr_t)_i);
	pid_t g = 0;
	ck_assert_msg(read_full(ok[0], &g, sizeof g, 5000), "controller failed");
	pt_use_pid(g);
	if (_i == CTL_EXITS)
		wait_ok(c);
	else if (_i == CTL_KILLED)
		ck_assert(WIFSIGNALED(pt_wait_exit(c, 5000)));
	else
		pt_wait_exec(c);
	ck_assert_msg(objects_gone(c, 2000), "stream object still there after the controller %s",
	              how[_i]);
	/* the child is not blocked or harmed: it goes on posting */
	char buf[64];
	while (poll(&(struct pollfd){.fd = prog[0], .events = POLLIN}, 1, 0) == 1)
		ck_assert_int_gt(read(prog[0], buf, sizeof buf), 0);
	ck_assert_msg(read_full(prog[0], buf, 3, 3000), "the child stopped posting");
	/* and it can be traced again, alone */
	trace_id_t trid = started(g, POSIX_TRACE_CLOSE_FOR_CHILD);
	struct pt_ev got[2];
	ck_assert_int_eq(collect_user(trid, got, 2, 5000), 2);
	ck_assert_int_eq(got[0].info.posix_pid, g);
	ck_assert_ok(posix_trace_shutdown(trid));
	kill(g, SIGKILL); /* not our child: reaped by its parent or init */
	finish();
}
END_TEST

/* ---- stress --------------------------------------------------------------- */

#define NPROC 4
#define NTHR 4

struct payload {
	uint32_t proc, thread, seq, check;
};

static uint32_t check_of(uint32_t p, uint32_t t, uint32_t s)
{
	uint64_t x = ((uint64_t)(p * 16 + t) << 32 | s) + 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return (uint32_t)(x ^ (x >> 31));
}

static uint32_t stress_count(void)
{
	return pt_stress_scaled(3000, 1000, 100000000u);
}

/* Shared by the writers (MAP_SHARED | MAP_ANONYMOUS, inherited by fork). */
struct shared {
	_Atomic int go;
	_Atomic uint32_t written[NPROC + 1][NTHR];
	_Atomic uint64_t thread[NPROC + 1][NTHR];
};
static struct shared *sh;
static uint32_t per_thread;
static int victim = -1; /* process index that is killed mid-way */
static uint32_t pace;    /* writers (the victim only, if any) pause every pace events */

struct wctx {
	uint32_t proc, thread;
};

static void *writer(void *arg)
{
	struct wctx *w = arg;
	atomic_store(&sh->thread[w->proc][w->thread], (uint64_t)pthread_self());
	while (!atomic_load(&sh->go))
		usleep(100);
	for (uint32_t s = 0; s < per_thread; s++) {
		struct payload pl = {w->proc, w->thread, s, check_of(w->proc, w->thread, s)};
		posix_trace_event(ev_id, &pl, sizeof pl);
		atomic_store_explicit(&sh->written[w->proc][w->thread], s + 1, memory_order_release);
		if (pace && ((int)w->proc == victim || victim < 0) && s % pace == pace - 1)
			usleep(200); /* spread over time, to interleave with the reader */
	}
	return NULL;
}

static int writer_process(void *arg)
{
	uint32_t p = (uint32_t)(intptr_t)arg;
	pthread_t t[NTHR];
	struct wctx w[NTHR];
	for (uint32_t i = 0; i < NTHR; i++) {
		w[i] = (struct wctx){p, i};
		STEP(1, pthread_create(&t[i], NULL, writer, &w[i]) == 0);
	}
	for (uint32_t i = 0; i < NTHR; i++)
		STEP(2, pthread_join(t[i], NULL) == 0);
	if ((int)p == victim)
		pause();
	return 0;
}

struct tally {
	pid_t pid[NPROC + 1];
	uint32_t received[NPROC + 1][NTHR];
	int64_t last[NPROC + 1][NTHR];
	uint64_t lost;
	int overrun_seen, overflow_events, auto_stops;
	uint64_t user_events;
};

static void account(struct tally *t, const struct pt_ev *e)
{
	if (e->info.posix_event_id == POSIX_TRACE_OVERFLOW)
		t->overflow_events++;
	if (e->info.posix_event_id == POSIX_TRACE_STOP && e->len == sizeof(int) &&
	    word(e, 0) == 1)
		t->auto_stops++;
	if (!pt_is_user(e))
		return;
	struct payload pl;
	ck_assert_uint_eq(e->info.posix_event_id, ev_id);
	ck_assert_msg(e->len == sizeof pl, "event of %zu bytes", e->len);
	memcpy(&pl, e->data, sizeof pl);
	ck_assert_msg(pl.proc <= NPROC && pl.thread < NTHR, "torn event %u/%u", pl.proc, pl.thread);
	ck_assert_msg(pl.check == check_of(pl.proc, pl.thread, pl.seq), "torn event %u/%u/%u",
	              pl.proc, pl.thread, pl.seq);
	ck_assert_int_eq(e->info.posix_pid, t->pid[pl.proc]);
	ck_assert_uint_eq((uint64_t)e->info.posix_thread_id,
	                  atomic_load(&sh->thread[pl.proc][pl.thread]));
	ck_assert_msg((int64_t)pl.seq > t->last[pl.proc][pl.thread],
	              "%u/%u: seq %u after %lld (duplicate or reordered)", pl.proc, pl.thread,
	              pl.seq, (long long)t->last[pl.proc][pl.thread]);
	t->last[pl.proc][pl.thread] = pl.seq;
	t->received[pl.proc][pl.thread]++;
	t->user_events++;
}

static void take_status(trace_id_t trid, struct tally *t)
{
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	t->lost += st.posixtrace_lost_events;
	if (st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN)
		t->overrun_seen = 1;
}

struct stress_cfg {
	int policy;
	size_t size;    /* 0: large enough for every event */
	int late_read;  /* start reading only once far more than fits was written */
	int side_by_side;
	int kill_victim;
	uint32_t pace;
};

static uint32_t written_total(void)
{
	uint32_t sum = 0;
	for (int p = 0; p <= NPROC; p++)
		for (int i = 0; i < NTHR; i++)
			sum += atomic_load(&sh->written[p][i]);
	return sum;
}

static void run_stress(const struct stress_cfg *cfg)
{
	per_thread = stress_count();
	sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
	memset(sh, 0, sizeof *sh);
	victim = cfg->kill_victim ? NPROC - 1 : -1;
	pace = cfg->pace;
	ev_id = pt_event_id("inh.stress");
	uint32_t total = per_thread * NPROC * NTHR;
	size_t maxev;
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct payload)));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&attr, sizeof(struct payload), &maxev));
	size_t size = cfg->size ? cfg->size : 2 * (total + 64) * maxev;
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, size));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, cfg->policy));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	trace_id_t trid, cfc = 0;
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	if (cfg->side_by_side) {
		ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_CLOSE_FOR_CHILD));
		ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 2 * (per_thread + 64) * maxev));
		ck_assert_ok(posix_trace_create(0, &attr, &cfc));
		ck_assert_ok(posix_trace_start(cfc));
	}
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));

	static struct tally t;
	memset(&t, 0, sizeof t);
	for (int p = 0; p <= NPROC; p++)
		for (int i = 0; i < NTHR; i++)
			t.last[p][i] = -1;
	t.pid[NPROC] = getpid();
	for (int p = 0; p < NPROC; p++)
		t.pid[p] = fork_child(writer_process, (void *)(intptr_t)p);
	atomic_store(&sh->go, 1);
	if (cfg->side_by_side) {
		/* the controller writes too, as process index NPROC, thread 0 */
		struct wctx w = {NPROC, 0};
		writer(&w);
	}
	struct timespec deadline = pt_in_ms(15000), now;
	if (cfg->late_read) {
		uint32_t fits = (uint32_t)(size / 24);
		while (written_total() < 4 * fits && written_total() < total) {
			clock_gettime(CLOCK_REALTIME, &now);
			ck_assert_msg(now.tv_sec < deadline.tv_sec, "writers do not progress");
			usleep(1000);
		}
	}
	int running = NPROC, victim_killed = 0, done[NPROC] = {0};
	uint32_t victim_written[NTHR] = {0};
	for (uint64_t iter = 0; running > 0; iter++) {
		struct pt_ev e;
		int unavailable = -1;
		struct timespec abstime = pt_in_ms(20);
		int rc = posix_trace_timedgetnext_event(trid, &e.info, e.data, sizeof e.data, &e.len,
		                                        &unavailable, &abstime);
		ck_assert_msg(rc == 0 || rc == ETIMEDOUT, "timedgetnext: %s", strerror(rc));
		if (rc == 0)
			account(&t, &e);
		if (rc == ETIMEDOUT || iter % 512 == 0) {
			take_status(trid, &t);
			for (int p = 0; p < NPROC; p++) {
				int status;
				if (done[p] || p == victim || waitpid(t.pid[p], &status, WNOHANG) != t.pid[p])
					continue;
				pt_untrack(t.pid[p]);
				ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
				              "writer %d: status %#x (exit 66: a sanitizer report)", p,
				              status);
				done[p] = 1;
				running--;
			}
		}
		if (victim >= 0 && !victim_killed &&
		    atomic_load(&sh->written[victim][0]) >= per_thread / 4) {
			pt_reap(t.pid[victim]); /* SIGKILL while it writes */
			victim_killed = 1;
			done[victim] = 1;
			running--;
			for (int i = 0; i < NTHR; i++)
				victim_written[i] = atomic_load(&sh->written[victim][i]);
		}
		clock_gettime(CLOCK_REALTIME, &now);
		ck_assert_msg(now.tv_sec < deadline.tv_sec, "stress did not finish in time");
	}
	/* every writer is gone: what is left is all there is */
	struct pt_ev e;
	for (uint64_t n = 0; pt_try_ev(trid, &e); n++) {
		ck_assert_uint_lt(n, 100000000u);
		account(&t, &e);
	}
	take_status(trid, &t);

	uint64_t written = 0;
	for (int p = 0; p <= NPROC; p++)
		for (int i = 0; i < NTHR; i++) {
			uint32_t w = atomic_load(&sh->written[p][i]);
			if (p == victim) {
				/* killed between recording and counting: one more */
				ck_assert_uint_ge(t.received[p][i], victim_written[i]);
				ck_assert_uint_le(t.received[p][i], victim_written[i] + 1);
				ck_assert_uint_lt(victim_written[i], per_thread);
				written += t.received[p][i];
				continue;
			}
			written += w;
			if (!cfg->size)
				ck_assert_msg(t.received[p][i] == w, "%d/%d: %u of %u received", p, i,
				              t.received[p][i], w);
		}
	if (getenv("PT_STRESS_VERBOSE"))
		fprintf(stderr, "stress policy %d size %zu: written %llu received %llu lost %llu "
		                "overflow events %d auto stops %d\n",
		        cfg->policy, size, (unsigned long long)written,
		        (unsigned long long)t.user_events, (unsigned long long)t.lost,
		        t.overflow_events, t.auto_stops);
	ck_assert_msg(t.user_events + t.lost == written, "received %llu + lost %llu != written %llu",
	              (unsigned long long)t.user_events, (unsigned long long)t.lost,
	              (unsigned long long)written);
	if (!cfg->size) {
		ck_assert_uint_eq(t.lost, 0);
		ck_assert_int_eq(t.overflow_events, 0);
	}
	if (cfg->late_read) {
		ck_assert_uint_gt(t.lost, 0);
		ck_assert(t.overrun_seen);
		if (cfg->policy == POSIX_TRACE_LOOP)
			ck_assert_int_gt(t.overflow_events, 0);
		else
			ck_assert_int_gt(t.auto_stops, 0);
	}
	if (cfg->side_by_side) {
		/* the close-for-child stream has the controller's events only */
		uint32_t seq = 0;
		while (pt_try_ev(cfc, &e)) {
			if (!pt_is_user(&e))
				continue;
			struct payload pl;
			memcpy(&pl, e.data, sizeof pl);
			ck_assert_int_eq(e.info.posix_pid, getpid());
			ck_assert_uint_eq(pl.proc, NPROC);
			ck_assert_uint_eq(pl.seq, seq++);
		}
		ck_assert_uint_eq(seq, per_thread);
		ck_assert_ok(posix_trace_shutdown(cfc));
	}
	if (victim >= 0) {
		/* the stream still works for the living and for new members */
		pid_t c = fork_child(child_posts_tag_2, NULL);
		post(ev_id, 1, 0);
		wait_ok(c);
		struct pt_ev got[4];
		int n = pt_drain_user(trid, got, 4);
		assert_tag_from(got, n, 1, getpid(), 1);
		assert_tag_from(got, n, 2, c, 1);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	munmap(sh, sizeof *sh);
	finish();
}

START_TEST(stress_large_inherited_stream_loses_nothing)
{
	run_stress(&(struct stress_cfg){.policy = POSIX_TRACE_LOOP, .pace = _i ? 8 : 0});
}
END_TEST

START_TEST(stress_small_until_full_stream_accounts_for_losses)
{
	run_stress(&(struct stress_cfg){.policy = POSIX_TRACE_UNTIL_FULL, .size = 64 * 1024,
	                                .late_read = 1});
}
END_TEST

START_TEST(stress_small_loop_stream_accounts_for_losses)
{
	run_stress(&(struct stress_cfg){.policy = POSIX_TRACE_LOOP, .size = 64 * 1024,
	                                .late_read = 1});
}
END_TEST

START_TEST(stress_small_streams_read_concurrently_account_for_losses)
{
	run_stress(&(struct stress_cfg){.policy = _i ? POSIX_TRACE_LOOP : POSIX_TRACE_UNTIL_FULL,
	                                .size = 64 * 1024, .pace = 8});
}
END_TEST

START_TEST(stress_inherited_and_close_for_child_streams_side_by_side)
{
	run_stress(&(struct stress_cfg){.policy = POSIX_TRACE_LOOP, .side_by_side = 1});
}
END_TEST

START_TEST(stress_writer_killed_mid_way_harms_no_other_writer)
{
	run_stress(&(struct stress_cfg){.policy = POSIX_TRACE_LOOP, .kill_victim = 1, .pace = 16});
}
END_TEST

/* ---- the rendezvous: children that closed their descriptors ---------------
 * (real programs, second round, row 6: Python's subprocess and other
 * drivers close every descriptor a child would inherit.) */

static struct posixtrace_rendezvous_info rendezvous_of(trace_id_t trid)
{
	struct posixtrace_rendezvous_info info;
	ck_assert_ok(posixtrace_rendezvous_info(trid, &info));
	ck_assert_msg(info.posixtrace_dir[0] == '/', "no rendezvous directory");
	return info;
}

/* Forks a child that keeps only the report pipe (as descriptor 3; every
 * other one above stderr is closed, as close_fds does), has POSIXTRACE_RENDEZVOUS
 * set to rdv (unset: NULL), and execs inherit_child posting 3 events with
 * tag and the names given. */
static pid_t start_closed_helper(const char *rdv, int report, const char *tag,
                                 const char *name1, const char *name2)
{
	const char *helper = pt_helper_path("inherit_child");
	fflush(NULL);
	pid_t pid = pt_fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(report, 3) != 3 || syscall(SYS_close_range, 4u, ~0u, 0u) != 0)
			_exit(126);
		if (rdv ? setenv(POSIXTRACE_RENDEZVOUS_ENV, rdv, 1) : unsetenv(POSIXTRACE_RENDEZVOUS_ENV))
			_exit(126);
		execl(helper, helper, "-r", "3", "-t", tag, "-c", "3", "-n", name1, "-n", name2,
		      (char *)NULL);
		_exit(127);
	}
	pt_track(pid);
	return pid;
}

START_TEST(closed_descriptors_child_joins_through_rendezvous)
{
	int p[2];
	trace_event_id_t mine, ids[2], later;
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_ok(posix_trace_eventid_open("inh.rdv", &mine));
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	struct posixtrace_rendezvous_info info = rendezvous_of(trid);
	/* Without the variable: the closed descriptors took tracing along. */
	pid_t lost = start_closed_helper(NULL, p[1], "401", "inh.rdv", "inh.rdv.new");
	ck_assert_int_eq(read_ids(p[0], ids, 2), lost);
	wait_ok(lost);
	pid_t h = start_closed_helper(info.posixtrace_dir, p[1], "400", "inh.rdv", "inh.rdv.new");
	ck_assert_int_eq(read_ids(p[0], ids, 2), h);
	wait_ok(h);
	struct pt_ev got[16];
	int n = pt_drain_user(trid, got, 16);
	ck_assert_msg(count_tag(got, n, 401) == 0, "a child without the rendezvous recorded");
	ck_assert_msg(count_tag(got, n, 400) == 3, "%d of the 3 events of the child that joined "
	                                           "through the rendezvous",
	              count_tag(got, n, 400));
	assert_tag_from(got, n, 400, h, 3);
	/* One registry for the tree: the name this process opened first has
	 * the same id there, and the child's new name the same id here. */
	ck_assert_uint_eq(ids[0], mine);
	ck_assert_ok(posix_trace_eventid_open("inh.rdv.new", &later));
	ck_assert_uint_eq(ids[1], later);
	for (int i = 0; i < n; i++)
		if (tag_of(&got[i]) == 400)
			ck_assert_uint_eq(got[i].info.posix_event_id, mine);
	ck_assert(pt_name_is(trid, mine, "inh.rdv"));
	info = rendezvous_of(trid);
	ck_assert_uint_eq(info.posixtrace_joined, 1);
	ck_assert_uint_eq(info.posixtrace_refused, 0);
	struct stat st;
	ck_assert_int_eq(stat(info.posixtrace_dir, &st), 0);
	/* Searchable by others (members of other users ask, and are
	 * counted), listable by nobody else. */
	ck_assert_uint_eq(st.st_mode & 0777, 0711);
	ck_assert_uint_eq(info.posixtrace_other_users, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_msg(stat(info.posixtrace_dir, &st) != 0 && errno == ENOENT,
	              "the rendezvous directory outlived the stream");
	finish();
}
END_TEST

START_TEST(rendezvous_refuses_a_process_that_does_not_descend_from_the_target)
{
	int p[2];
	trace_event_id_t ids[2];
	ck_assert_int_eq(pipe(p), 0);
	char *argv[] = {(char *)pt_helper_path("plain"), "30", NULL};
	fflush(NULL);
	pid_t target = pt_fork();
	if (target == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[0], argv);
		_exit(127);
	}
	pt_track(target);
	trace_id_t trid = started(target, POSIX_TRACE_INHERITED);
	struct posixtrace_rendezvous_info info = rendezvous_of(trid);
	/* A child of this process, not of the target, that knows the way. */
	pid_t h = start_closed_helper(info.posixtrace_dir, p[1], "402", "inh.rdv", "inh.rdv.new");
	ck_assert_int_eq(read_ids(p[0], ids, 2), h);
	wait_ok(h);
	struct pt_ev got[16];
	int n = pt_drain_user(trid, got, 16);
	ck_assert_int_eq(count_tag(got, n, 402), 0);
	info = rendezvous_of(trid);
	ck_assert_uint_eq(info.posixtrace_joined, 0);
	ck_assert_uint_eq(info.posixtrace_refused, 1);
	ck_assert_ok(posix_trace_shutdown(trid));
	kill(target, SIGKILL);
	finish();
}
END_TEST

/* A directory with a socket listening as "join" in it, and its mode. */
static int listening_dir(char *dir, size_t len, mode_t mode)
{
	snprintf(dir, len, "%s/pt-rdv-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	ck_assert_int_lt(snprintf(a.sun_path, sizeof a.sun_path, "%s/join", dir),
	                 (int)sizeof a.sun_path);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(s, 8), 0);
	ck_assert_int_eq(chmod(dir, mode), 0);
	return s;
}

static void remove_listening_dir(const char *dir, int s)
{
	char path[PATH_MAX + 8];
	close(s);
	snprintf(path, sizeof path, "%s/join", dir);
	unlink(path);
	rmdir(dir);
}

/* Whether a process connected to the listening socket s (and takes it). */
static int connected(int s)
{
	int c = accept4(s, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		return 0;
	close(c);
	return 1;
}

/* A child that asks through `rdv` must start and run normally, whatever is
 * there; returns whether it connected to s. */
static int child_asks(const char *rdv, int s)
{
	int p[2];
	trace_event_id_t ids[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t h = start_closed_helper(rdv, p[1], "403", "inh.rdv", "inh.rdv.new");
	ck_assert_int_eq(read_ids(p[0], ids, 2), h);
	wait_ok(h);
	close(p[0]);
	close(p[1]);
	return connected(s);
}

START_TEST(rendezvous_directory_open_to_others_or_a_link_is_not_used)
{
	char dir[PATH_MAX], link[PATH_MAX + 8];
	trace_id_t trid = started(0, POSIX_TRACE_INHERITED);
	int s = listening_dir(dir, sizeof dir, 0755);
	ck_assert_msg(!child_asks(dir, s), "a joiner connected through a directory of mode 0755");
	ck_assert_int_eq(chmod(dir, 0700), 0);
	snprintf(link, sizeof link, "%s.link", dir);
	ck_assert_int_eq(symlink(dir, link), 0);
	ck_assert_msg(!child_asks(link, s), "a joiner connected through a symbolic link");
	ck_assert_msg(!child_asks("relative/dir", s), "a relative path was followed");
	/* The same directory, private and named directly: the joiner asks
	 * (nobody answers: it gives up after its 100 ms and runs on). */
	ck_assert_msg(child_asks(dir, s), "a joiner did not ask through a private directory");
	unlink(link);
	remove_listening_dir(dir, s);
	ck_assert_ok(posix_trace_shutdown(trid));
	finish();
}
END_TEST

START_TEST(rendezvous_info_errors)
{
	struct posixtrace_rendezvous_info info;
	trace_id_t closed = started(0, POSIX_TRACE_CLOSE_FOR_CHILD);
	ck_assert_err(posixtrace_rendezvous_info(closed, &info), ENOENT);
	ck_assert_err(posixtrace_rendezvous_info(closed, NULL), EINVAL);
	ck_assert_ok(posix_trace_shutdown(closed));
	ck_assert_err(posixtrace_rendezvous_info(closed, &info), EINVAL);
	ck_assert_err(posixtrace_rendezvous_info((trace_id_t)0x7fff1234, &info), EINVAL);
	finish();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("inherit");
	TCase *tc = pt_tcase_fixture(s, "attribute", setup, NULL);
	tcase_add_test(tc, inheritance_defaults_to_close_for_child);
	tcase_add_test(tc, setinherited_stores_both_values);
	tcase_add_test(tc, setinherited_rejects_other_values_and_keeps_the_old_one);
	tcase_add_test(tc, getinherited_and_setinherited_reject_null_or_uninitialised);
	tcase_add_loop_test(tc, get_attr_shows_inheritance_read_at_create, 0, 2);
	tcase_add_loop_test(tc, attr_changed_after_create_does_not_change_child_tracing, 0, 2);

	tc = pt_tcase_fixture(s, "fork", setup, NULL);
	tcase_add_test(tc, fork_child_records_with_its_own_pid_and_threads);
	tcase_add_test(tc, fork_child_is_not_recorded_in_close_for_child_stream);
	tcase_add_test(tc, child_records_into_inherited_stream_only_when_both_kinds_exist);
	tcase_add_test(tc, three_generations_record_with_their_pids);

	tc = pt_tcase_fixture(s, "exec", setup, NULL);
	tcase_add_loop_test(tc, exec_started_helper_records_with_its_pid, BY_FORK_EXEC,
	                    BY_SYSTEM + 1);
	tcase_add_loop_test(tc, exec_started_helper_is_not_recorded_in_close_for_child_stream,
	                    BY_FORK_EXEC, BY_SYSTEM + 1);
	tcase_add_test(tc, traced_fork_child_stays_traced_across_two_execs);

	tc = pt_tcase_fixture(s, "rendezvous", setup, NULL);
	tcase_add_test(tc, closed_descriptors_child_joins_through_rendezvous);
	tcase_add_test(tc, rendezvous_refuses_a_process_that_does_not_descend_from_the_target);
	tcase_add_test(tc, rendezvous_directory_open_to_others_or_a_link_is_not_used);
	tcase_add_test(tc, rendezvous_info_errors);

	tc = pt_tcase_fixture(s, "names", setup, NULL);
	tcase_add_test(tc, parent_and_fork_child_share_name_ids_both_ways);
	tcase_add_test(tc, siblings_opening_one_name_at_once_get_one_id);
	tcase_add_loop_test(tc, exec_started_helper_shares_name_ids_with_parent, BY_FORK_EXEC,
	                    BY_SYSTEM + 1);

	tc = pt_tcase_fixture(s, "separate controller", setup, NULL);
	tcase_add_test(tc, separate_controller_records_target_tree_with_their_pids);
	tcase_add_test(tc, separate_controller_close_for_child_stream_records_target_alone);
	tcase_add_test(tc, separate_controller_records_children_started_before_targets_first_event);
	tcase_add_test(tc, separate_controller_names_id_registered_first_by_target_child);

	tc = pt_tcase_fixture(s, "controller", setup, NULL);
	tcase_add_test(tc, controllers_trid_is_einval_in_its_fork_child);
	tcase_add_loop_test(tc, controller_exit_exec_or_kill_shuts_down_inherited_stream, CTL_EXITS,
	                    CTL_KILLED + 1);

	tc = pt_tcase_fixture(s, "stress", setup, NULL);
	tcase_add_loop_test(tc, stress_large_inherited_stream_loses_nothing, 0, 2);
	tcase_add_test(tc, stress_small_until_full_stream_accounts_for_losses);
	tcase_add_test(tc, stress_small_loop_stream_accounts_for_losses);
	tcase_add_loop_test(tc, stress_small_streams_read_concurrently_account_for_losses, 0, 2);
	tcase_add_test(tc, stress_inherited_and_close_for_child_streams_side_by_side);
	tcase_add_test(tc, stress_writer_killed_mid_way_harms_no_other_writer);
	return pt_run(s);
}
