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
 */
#include "harness.h"

#include <pthread.h>
#include <sched.h>

#define NPOSTS 500

static trace_event_id_t ev;

/* In the new namespace (pid 1 there): waits for the go, posts, exits. */
static void target(int go)
{
	char c;
	if (read(go, &c, 1) != 1)
		_exit(3);
	for (uint32_t i = 0; i < NPOSTS; i++)
		posix_trace_event(ev, &i, sizeof i);
	_exit(getpid() == 1 ? 0 : 4);
}

/* Forks the target into a new pid namespace; returns its pid here, or 0 when
 * namespaces cannot be made. */
static pid_t start_target(int go, pid_t *middle)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	*middle = pt_fork();
	if (*middle == 0) {
		pid_t t = 0;
		if (unshare(CLONE_NEWPID) == 0 && (t = fork()) == 0)
			target(go);
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
	close(p[0]);
	close(p[1]);
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

int main(void)
{
	Suite *s = suite_create("pidns");
	TCase *tc = pt_tcase_fixture(s, "pidns", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, create_for_a_process_in_its_own_namespace);
	tcase_add_test(tc, lanes_of_processes_in_other_namespaces_are_not_taken_back);
	return pt_run(s);
}
