/* SPDX-License-Identifier: MIT */
/*
 * t_pidns: posix_trace_create (XSH posix_trace_create: "pid ... the process
 * to be traced") of a process that runs in a pid namespace of its own, named
 * by its pid in the controller's namespace: the stream gets every event the
 * process posts (before, its control block, which names it by its pid in its
 * own namespace, was never recognised and the stream stayed empty).  Needs
 * root (unshare(CLONE_NEWPID)); skipped otherwise.  The events carry the
 * process's pid in its own namespace (docs/CONFORMANCE.md).
 *
 * And one stream traced with inheritance, written by two daemons in pid
 * namespaces of their own (two threads each) while this process churns
 * short-lived threads: no lane is taken back from a live process of
 * another namespace (before, the churning threads found the daemons' pid,
 * 1, alive but with another start time here, took their lanes and wrote
 * into the chunks the daemons were writing: their sequences had holes).
 *
 * And two daemons, each pid 1 of a namespace of its own, recording into
 * streams this process created: posix_pid and the extension's thread id are
 * their ids in this process's namespace (XSH posix_trace_getnext_event:
 * posix_pid "the process identifier of the traced process"; a reader knows
 * processes by its own namespace's ids), read live and from the log, and the
 * extension gives their own ids back (before, both were pid 1, tid 1 and 2:
 * stats, --pid and Chrome's tracks merged them).
 */
#include "harness.h"

#include <pthread.h>
#include <posixtrace.h>
#include <sched.h>

#define NPOSTS 500

static trace_event_id_t ev;

/* In the new namespace (pid 1 there): says it is ready (its fork handler
 * has made its own control block, which a controller looks for), waits
 * for the go, posts, exits. */
static void target(int go, int ready)
{
	char c = 'r';
	if (write(ready, &c, 1) != 1 || read(go, &c, 1) != 1)
		_exit(3);
	for (uint32_t i = 0; i < NPOSTS; i++)
		posix_trace_event(ev, &i, sizeof i);
	_exit(getpid() == 1 ? 0 : 4);
}

/* Forks the target into a new pid namespace; returns its pid here, or 0 when
 * namespaces cannot be made.  Returns once the target is ready: a
 * controller that looked for a process forked an instant before, ahead of
 * the child's fork handler, would find no block of its own yet (the
 * keeper reaches it later, and events posted meanwhile are not recorded). */
static pid_t start_target(int go, pid_t *middle)
{
	int p[2], ready[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(pipe(ready), 0);
	*middle = pt_fork();
	if (*middle == 0) {
		pid_t t = 0;
		if (unshare(CLONE_NEWPID) == 0 && (t = fork()) == 0)
			target(go, ready[1]);
		if (write(p[1], &t, sizeof t) != sizeof t)
			_exit(5);
		int status = 0;
		if (t > 0)
			waitpid(t, &status, 0);
		_exit(t > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	pt_track(*middle);
	pid_t t = 0;
	ck_assert_int_eq(read(p[0], &t, sizeof t), (ssize_t)sizeof t);
	char c;
	if (t > 0)
		ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(p[0]);
	close(p[1]);
	close(ready[0]);
	close(ready[1]);
	return t;
}

START_TEST(create_for_a_process_in_its_own_namespace)
{
	if (geteuid() != 0) {
		fprintf(stderr, "t_pidns: skipped (not root)\n");
		return;
	}
	ev = pt_event_id("ns.tick");
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t middle, t = start_target(go[0], &middle);
	if (t <= 0) {
		fprintf(stderr, "t_pidns: skipped (no pid namespace: %s)\n", strerror(errno));
		return;
	}
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(t, NULL, &trid));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	int status = pt_wait_exit(middle, 10000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "target: status %#x", status);
	size_t n;
	struct pt_ev *evs = pt_drain_all(trid, &n);
	uint32_t next = 0;
	for (size_t i = 0; i < n; i++) {
		if (!pt_is_user(&evs[i]) || evs[i].info.posix_event_id != ev)
			continue;
		ck_assert_uint_eq(pt_ev_u32(&evs[i]), next);
		next++;
	}
	ck_assert_uint_eq(next, NPOSTS);
	free(evs);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

#define DAEMONS 2
#define DAEMON_THREADS 2
#define DAEMON_POSTS 20000

struct ns_payload {
	uint32_t daemon, thread, seq;
};

static uint32_t daemon_no;

static void *daemon_thread(void *arg)
{
	struct ns_payload pl = {daemon_no, (uint32_t)(uintptr_t)arg, 0};
	for (; pl.seq < DAEMON_POSTS; pl.seq++) {
		posix_trace_event(ev, &pl, sizeof pl);
		if (pl.seq % 100 == 99)
			usleep(1000);
	}
	return NULL;
}

/* A process that forks a daemon into a new pid namespace (pid 1 there),
 * whose threads post; it exits with the daemon's status. */
static pid_t start_daemon(uint32_t no)
{
	pid_t middle = pt_fork();
	if (middle == 0) {
		pid_t t = -1;
		if (unshare(CLONE_NEWPID) != 0 || (t = fork()) < 0)
			_exit(5);
		if (t == 0) {
			pthread_t th[DAEMON_THREADS];
			daemon_no = no;
			for (uintptr_t i = 0; i < DAEMON_THREADS; i++)
				pthread_create(&th[i], NULL, daemon_thread, (void *)i);
			for (int i = 0; i < DAEMON_THREADS; i++)
				pthread_join(th[i], NULL);
			_exit(getpid() == 1 ? 0 : 4);
		}
		int status = 0;
		waitpid(t, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	pt_track(middle);
	return middle;
}

static void *churn_one(void *arg)
{
	uint32_t v = 7;
	(void)arg;
	posix_trace_event(ev, &v, sizeof v);
	return NULL;
}

/* Threads that start together, post once and end: with no lane free, they
 * look for lanes of dead processes. */
static void churn(void)
{
	pthread_t th[64];
	for (int i = 0; i < 64; i++)
		pthread_create(&th[i], NULL, churn_one, NULL);
	for (int i = 0; i < 64; i++)
		pthread_join(th[i], NULL);
}

static int all_exited(pid_t *pids, int *status)
{
	int left = 0;
	for (int i = 0; i < DAEMONS; i++) {
		if (pids[i] > 0 && waitpid(pids[i], &status[i], WNOHANG) == pids[i]) {
			pt_untrack(pids[i]);
			pids[i] = -pids[i];
		}
		left += pids[i] > 0;
	}
	return !left;
}

START_TEST(lanes_of_processes_in_other_namespaces_are_not_taken_back)
{
	if (geteuid() != 0) {
		fprintf(stderr, "t_pidns: skipped (not root)\n");
		return;
	}
	ev = pt_event_id("ns.seq");
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 64 << 20));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	posix_trace_attr_destroy(&attr);
	ck_assert_ok(posix_trace_start(trid));
	pid_t pids[DAEMONS];
	int status[DAEMONS] = {0};
	for (uint32_t i = 0; i < DAEMONS; i++)
		pids[i] = start_daemon(i);
	int rounds = 0;
	for (; !all_exited(pids, status) && rounds < 20000; rounds++)
		churn();
	for (int i = 0; i < DAEMONS; i++)
		ck_assert_msg(WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0,
		              "daemon %d: status %#x (no pid namespace?)", i, status[i]);
	size_t n;
	struct pt_ev *evs = pt_drain_all(trid, &n);
	uint32_t next[DAEMONS][DAEMON_THREADS] = {{0}};
	long bad = 0, errors = 0;
	for (size_t i = 0; i < n; i++) {
		errors += evs[i].info.posix_event_id == POSIX_TRACE_ERROR;
		if (!pt_is_user(&evs[i]) || evs[i].len != sizeof(struct ns_payload))
			continue;
		struct ns_payload pl;
		memcpy(&pl, evs[i].data, sizeof pl);
		if (pl.daemon >= DAEMONS || pl.thread >= DAEMON_THREADS ||
		    pl.seq != next[pl.daemon][pl.thread]++)
			bad++;
	}
	free(evs);
	struct posix_trace_status_info st = pt_status(trid);
	long complete = 0;
	for (int d = 0; d < DAEMONS; d++)
		for (int t = 0; t < DAEMON_THREADS; t++)
			complete += next[d][t] == DAEMON_POSTS;
	printf("t_pidns: %d rounds of 64 churning threads; daemon threads complete: %ld of %d, "
	       "events out of order or foreign: %ld, POSIX_TRACE_ERROR: %ld, lost: %llu\n",
	       rounds, complete, DAEMONS * DAEMON_THREADS, bad, errors,
	       (unsigned long long)st.posixtrace_lost_events);
	ck_assert_int_eq(bad, 0);
	ck_assert_int_eq(errors, 0);
	ck_assert_int_eq(complete, DAEMONS * DAEMON_THREADS);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- ids in the creator's namespace ---------------------------------------- */

#define ID_POSTS 100

struct id_payload {
	uint32_t daemon, thread, seq;
	int32_t ns_tid; /* gettid() in the daemon's namespace */
};

struct id_daemon {
	pid_t middle, pid; /* its pid here */
	int release;       /* a byte lets it end */
};

static pthread_barrier_t id_posted;

/* Posts, then lives on until the daemon is let go: its ids are looked up
 * while it lives. */
static void *id_thread(void *arg)
{
	struct id_payload pl = {daemon_no, (uint32_t)(uintptr_t)arg, 0, (int32_t)gettid()};
	for (; pl.seq < ID_POSTS; pl.seq++)
		posix_trace_event(ev, &pl, sizeof pl);
	pthread_barrier_wait(&id_posted);
	return NULL;
}

/* A daemon, pid 1 of a new namespace: two threads post, then it waits to
 * be let go (its ids are looked up while it lives). */
static struct id_daemon start_id_daemon(uint32_t no)
{
	int out[2], hold[2];
	ck_assert_int_eq(pipe(out), 0);
	ck_assert_int_eq(pipe(hold), 0);
	struct id_daemon d = {pt_fork(), 0, hold[1]};
	if (d.middle == 0) {
		close(hold[1]);
		pid_t t = -1;
		if (unshare(CLONE_NEWPID) != 0 || (t = fork()) < 0)
			_exit(5);
		if (t == 0) {
			pthread_t th[2];
			char c;
			daemon_no = no;
			pthread_barrier_init(&id_posted, NULL, 3);
			for (uintptr_t i = 0; i < 2; i++)
				pthread_create(&th[i], NULL, id_thread, (void *)i);
			while (read(hold[0], &c, 1) < 0)
				;
			pthread_barrier_wait(&id_posted);
			for (int i = 0; i < 2; i++)
				pthread_join(th[i], NULL);
			_exit(getpid() == 1 ? 0 : 4);
		}
		if (write(out[1], &t, sizeof t) != sizeof t)
			_exit(5);
		int status = 0;
		waitpid(t, &status, 0);
		_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	pt_track(d.middle);
	close(hold[0]);
	close(out[1]);
	ck_assert_int_eq(read(out[0], &d.pid, sizeof d.pid), (ssize_t)sizeof d.pid);
	close(out[0]);
	return d;
}

/* Checks one event of a daemon against what it says of itself; the count
 * of its events seen so far. */
static void check_ids(const struct id_daemon *d, const struct posix_trace_event_info *info,
                      const struct posixtrace_event_ext *ext, const void *data, size_t len,
                      long seen[2], const char *how)
{
	struct id_payload pl;
	if (info->posix_event_id != ev || len != sizeof pl)
		return;
	memcpy(&pl, data, sizeof pl);
	ck_assert_uint_lt(pl.daemon, 2);
	ck_assert_msg(info->posix_pid == d[pl.daemon].pid,
	              "%s: daemon %u's event names pid %d, not its pid here, %d (tid %d, own "
	              "ids %d/%d in namespace %llu; its thread %u, tid %d there; the other daemon: %d)",
	              how, pl.daemon, (int)info->posix_pid, (int)d[pl.daemon].pid,
	              (int)ext->posixtrace_tid, (int)ext->posixtrace_ns_pid,
	              (int)ext->posixtrace_ns_tid, (unsigned long long)ext->posixtrace_pidns,
	              pl.thread, (int)pl.ns_tid, (int)d[!pl.daemon].pid);
	ck_assert_msg(ext->posixtrace_ns_pid == 1 && ext->posixtrace_ns_tid == pl.ns_tid,
	              "%s: daemon %u's own ids %d/%d, not 1/%d", how, pl.daemon,
	              (int)ext->posixtrace_ns_pid, (int)ext->posixtrace_ns_tid, (int)pl.ns_tid);
	ck_assert_msg(ext->posixtrace_tid > 1 && ext->posixtrace_tid != pl.ns_tid,
	              "%s: thread id %d is the daemon's own (%d)", how, (int)ext->posixtrace_tid,
	              (int)pl.ns_tid);
	ck_assert_uint_ne(ext->posixtrace_pidns, 0);
	seen[pl.daemon]++;
}

START_TEST(ids_are_those_of_the_creators_namespace)
{
	if (geteuid() != 0) {
		fprintf(stderr, "t_pidns: skipped (not root)\n");
		return;
	}
	ev = pt_event_id("ns.ids");
	char log[PATH_MAX];
	snprintf(log, sizeof log, "%s/ids.ptlog", pt_scratch_dir("t_pidns"));
	int fd = open(log, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	trace_attr_t attr;
	trace_id_t live, logged;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_create(0, &attr, &live));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &logged));
	posix_trace_attr_destroy(&attr);
	ck_assert_ok(posix_trace_start(live));
	ck_assert_ok(posix_trace_start(logged));
	struct id_daemon d[2] = {start_id_daemon(0), start_id_daemon(1)};
	ck_assert_int_ne(d[0].pid, d[1].pid);

	/* Live, while the daemons wait. */
	long seen[2] = {0, 0};
	struct posix_trace_event_info info;
	struct posixtrace_event_ext ext;
	struct id_payload data;
	size_t len;
	for (int waited = 0; seen[0] + seen[1] < 4 * ID_POSTS && waited < 20000;) {
		int unavailable = 1;
		ck_assert_ok(posix_trace_trygetnext_event(live, &info, &data, sizeof data, &len,
		                                          &unavailable));
		if (unavailable) {
			usleep(1000);
			waited++;
			continue;
		}
		ck_assert_ok(posixtrace_event_ext(live, &ext));
		check_ids(d, &info, &ext, &data, len, seen, "live");
	}
	ck_assert_int_eq(seen[0], 2 * ID_POSTS);
	ck_assert_int_eq(seen[1], 2 * ID_POSTS);
	/* The log, complete while the daemons still live. */
	ck_assert_ok(posix_trace_shutdown(logged));
	for (int i = 0; i < 2; i++) {
		/* A byte: the other daemon holds this pipe's end too. */
		ck_assert_int_eq(write(d[i].release, "x", 1), 1);
		close(d[i].release);
		int status = pt_wait_exit(d[i].middle, 10000);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		              "daemon %d: status %#x (no pid namespace?)", i, status);
	}
	ck_assert_ok(posix_trace_shutdown(live));
	trace_id_t r;
	ck_assert_ok(posix_trace_open(fd, &r));
	seen[0] = seen[1] = 0;
	for (;;) {
		int unavailable = 1;
		ck_assert_ok(posix_trace_getnext_event(r, &info, &data, sizeof data, &len, &unavailable));
		if (unavailable)
			break;
		ck_assert_ok(posixtrace_event_ext(r, &ext));
		check_ids(d, &info, &ext, &data, len, seen, "log");
	}
	ck_assert_int_eq(seen[0], 2 * ID_POSTS);
	ck_assert_int_eq(seen[1], 2 * ID_POSTS);
	ck_assert_ok(posix_trace_close(r));
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pidns");
	TCase *tc = pt_tcase_fixture(s, "pidns", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, ids_are_those_of_the_creators_namespace);
	tcase_add_test(tc, create_for_a_process_in_its_own_namespace);
	tcase_add_test(tc, lanes_of_processes_in_other_namespaces_are_not_taken_back);
	return pt_run_scratch(s, "t_pidns");
}
