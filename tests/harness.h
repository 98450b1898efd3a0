/* SPDX-License-Identifier: MIT */
/*
 * Shared by every test program: Check (each test forked, with a timeout)
 * plus the helpers more than one test program needs.  A test program is one
 * file tests/t_NAME.c whose main() builds a suite and returns pt_run(suite).
 * The helper programs (tests/helpers/) include it too, for the payload of
 * the writers (pt_payload); they use nothing of Check.
 *
 * A test program that reads events back with pt_drain and friends may set
 * PT_EV_DATA, the room for an event's data, before including this header.
 */
#ifndef PT_TEST_HARNESS_H
#define PT_TEST_HARNESS_H

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
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

/* The same, with a fixture run in each test's own process. */
static inline TCase *pt_tcase_fixture(Suite *s, const char *name, void (*setup)(void),
                                      void (*teardown)(void))
{
	TCase *tc = pt_tcase(s, name);
	tcase_add_checked_fixture(tc, setup, teardown);
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

/* In a forked child that reports through its exit status: return (exit
 * with) this step number unless cond holds. */
#define STEP(step, cond)                                                         \
	do {                                                                     \
		if (!(cond))                                                     \
			return (step);                                           \
	} while (0)

/* ---- streams -------------------------------------------------------------- */

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

/* The same, started. */
static inline trace_id_t pt_create_started(void)
{
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

/* Attributes of a stream made by pt_create: a member left 0 keeps the
 * default (its setter is not called). */
struct pt_attrs {
	int policy;      /* stream-full-policy */
	size_t size;     /* stream-min-size */
	size_t max_data; /* max-data-size */
};

/* A stream for pid (0: this process) with those attributes. */
static inline trace_id_t pt_create(pid_t pid, struct pt_attrs a)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	if (a.policy)
		ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, a.policy));
	if (a.size)
		ck_assert_ok(posix_trace_attr_setstreamsize(&attr, a.size));
	if (a.max_data)
		ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, a.max_data));
	ck_assert_ok(posix_trace_create(pid, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return trid;
}

/* posix_trace_get_status into a status filled with garbage first. */
static inline struct posix_trace_status_info pt_status(trace_id_t trid)
{
	struct posix_trace_status_info st;
	memset(&st, 0xa5, sizeof st);
	ck_assert_ok(posix_trace_get_status(trid, &st));
	return st;
}

/* Whether the stream names `id` `name`. */
static inline int pt_name_is(trace_id_t trid, trace_event_id_t id, const char *name)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	return posix_trace_eventid_get_name(trid, id, buf) == 0 && strcmp(buf, name) == 0;
}

/* ---- events read back ------------------------------------------------------- */

#ifndef PT_EV_DATA
#define PT_EV_DATA 1024
#endif

/* One event as posix_trace_*getnext_event gave it; data longer than
 * PT_EV_DATA bytes is truncated, as those functions truncate it. */
struct pt_ev {
	struct posix_trace_event_info info;
	unsigned char data[PT_EV_DATA];
	size_t len;
};

/* A stream that gives more events than this in one read-out never runs
 * empty: a bound that only catches a runaway. */
#define PT_DRAIN_LIMIT 1000000

static inline int pt_is_user(const struct pt_ev *e)
{
	return e->info.posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT;
}

/* The next event if one is there now (posix_trace_trygetnext_event): 1, or
 * 0 when none is. */
static inline int pt_try_ev(trace_id_t trid, struct pt_ev *e)
{
	int unavailable = -1;
	ck_assert_ok(posix_trace_trygetnext_event(trid, &e->info, e->data, sizeof e->data,
	                                          &e->len, &unavailable));
	return !unavailable;
}

/* Reads every event there is now, oldest first, and keeps in out[] every
 * one, or with user_only the user events alone; returns how many it kept.
 * More than max to keep fails the test. */
static inline int pt_drain_into(trace_id_t trid, struct pt_ev *out, int max, int user_only)
{
	struct pt_ev e;
	int n = 0;
	for (int all = 0; pt_try_ev(trid, &e); all++) {
		ck_assert_msg(all < PT_DRAIN_LIMIT, "the stream never runs empty");
		if (user_only && !pt_is_user(&e))
			continue;
		ck_assert_msg(n < max, "more than %d events to keep", max);
		out[n++] = e;
	}
	return n;
}

/* Every event there is now, into out[0..max-1]; returns how many. */
static inline int pt_drain(trace_id_t trid, struct pt_ev *out, int max)
{
	return pt_drain_into(trid, out, max, 0);
}

/* Every user event there is now (system events read and dropped). */
static inline int pt_drain_user(trace_id_t trid, struct pt_ev *out, int max)
{
	return pt_drain_into(trid, out, max, 1);
}

/* Every event there is now, into an array that grows as needed; the
 * caller frees it.  Its length goes to *n. */
static inline struct pt_ev *pt_drain_all(trace_id_t trid, size_t *n)
{
	size_t cap = 256;
	struct pt_ev *out = malloc(cap * sizeof *out);
	ck_assert_ptr_nonnull(out);
	for (*n = 0;; ++*n) {
		ck_assert_msg(*n <= PT_DRAIN_LIMIT, "the stream never runs empty");
		if (*n == cap) {
			cap *= 2;
			out = realloc(out, cap * sizeof *out);
			ck_assert_ptr_nonnull(out);
		}
		if (!pt_try_ev(trid, &out[*n]))
			return out;
	}
}

/* How many of the n events have type id. */
static inline int pt_count_id(const struct pt_ev *evs, int n, trace_event_id_t id)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += evs[i].info.posix_event_id == id;
	return c;
}

/* The data of an event posted with a uint32_t, which must be all it holds. */
static inline uint32_t pt_ev_u32(const struct pt_ev *e)
{
	uint32_t v;
	ck_assert_uint_eq(e->len, sizeof v);
	memcpy(&v, e->data, sizeof v);
	return v;
}

/* ---- the writers' payload ------------------------------------------------------ */

/* What the stress and workload writers post (t_stress, t_workload and the
 * helper programs wl_*): 16 bytes {writer, sequence number, mix of both},
 * so that a reader tells a whole record from a torn one. */
struct pt_payload {
	uint32_t writer;
	uint32_t seq;
	uint64_t check;
};

static inline uint64_t pt_mix(uint32_t writer, uint32_t seq)
{
	uint64_t x = ((uint64_t)writer << 32 | seq) + 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static inline void pt_post_payload(trace_event_id_t id, uint32_t writer, uint32_t seq)
{
	struct pt_payload p = {writer, seq, pt_mix(writer, seq)};
	posix_trace_event(id, &p, sizeof p);
}

/* wl_post's progress file (-m), which t_workload maps as well. */
struct pt_progress {
	_Atomic uint64_t posted; /* calls to posix_trace_event that returned */
	_Atomic uint32_t ready;  /* set by wl_post once the names are open */
	_Atomic uint32_t stop;   /* set by the controller: post no more */
	_Atomic uint32_t done;   /* set by wl_post once posting ended */
};

/* ---- time ---------------------------------------------------------------------- */

static inline void pt_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* CLOCK_REALTIME `ms` milliseconds from now, or ago when ms < 0 (an
 * abstime for timedgetnext). */
static inline struct timespec pt_in_ms(long ms)
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

static inline int pt_ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

static inline int64_t pt_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

static inline int64_t pt_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return pt_ns(&ts);
}

/* ---- threads ------------------------------------------------------------------ */

/* A count scaled by $PT_STRESS_SCALE (default 1), kept within [min, max]. */
static inline uint32_t pt_stress_scaled(double count, uint32_t min, uint32_t max)
{
	const char *s = getenv("PT_STRESS_SCALE");
	double scale = s ? strtod(s, NULL) : 1.0;
	double n = count * (scale > 0 ? scale : 1.0);
	return n < min ? min : n > max ? max : (uint32_t)n;
}

/* One of several writer threads that start posting together: it calls
 * post(id, thread, i) for i = 0 .. count - 1. */
struct pt_writer {
	trace_event_id_t id;
	uint32_t thread, count;
	void (*post)(trace_event_id_t id, uint32_t thread, uint32_t seq);
	pthread_t self;           /* set by pt_run_writers */
	pthread_barrier_t *go;    /* set by pt_run_writers */
};

static inline void *pt_writer_main(void *p)
{
	struct pt_writer *w = p;
	pthread_barrier_wait(w->go);
	for (uint32_t i = 0; i < w->count; i++)
		w->post(w->id, w->thread, i);
	return NULL;
}

/* Runs the n writers w[] (released together by a barrier) to their end. */
static inline void pt_run_writers(struct pt_writer *w, uint32_t n)
{
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, n);
	for (uint32_t i = 0; i < n; i++) {
		w[i].go = &go;
		ck_assert_int_eq(pthread_create(&w[i].self, NULL, pt_writer_main, &w[i]), 0);
	}
	for (uint32_t i = 0; i < n; i++)
		pthread_join(w[i].self, NULL);
	pthread_barrier_destroy(&go);
}

/* A thread blocked reading the next event: posix_trace_getnext_event, or
 * with timed posix_trace_timedgetnext_event until 10 s after it began.  Its
 * result goes to rc; done is set once the call returned. */
struct pt_blocked_reader {
	trace_id_t trid;
	int timed;
	int rc;
	atomic_int done;
};

static inline void *pt_blocked_reader_main(void *p)
{
	struct pt_blocked_reader *b = p;
	struct posix_trace_event_info info;
	unsigned char data[64];
	size_t len;
	int unavailable;
	struct timespec abstime = pt_in_ms(10000);
	if (b->timed)
		b->rc = posix_trace_timedgetnext_event(b->trid, &info, data, sizeof data, &len,
		                                       &unavailable, &abstime);
	else
		b->rc = posix_trace_getnext_event(b->trid, &info, data, sizeof data, &len,
		                                  &unavailable);
	atomic_store(&b->done, 1);
	return NULL;
}

/* ---- files ----------------------------------------------------------------------- */

/* A second, read-only open file description of the file behind fd. */
static inline int pt_reopen_ro(int fd)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY);
	ck_assert_int_ge(ro, 0);
	return ro;
}

static inline int pt_remove_entry_(const char *path, const struct stat *st, int flag,
                                   struct FTW *ftw)
{
	(void)st, (void)flag, (void)ftw;
	remove(path); /* what cannot be removed is left; keep going */
	return 0;
}

/* Removes path and everything below it, never following a link. */
static inline void pt_remove_tree(const char *path)
{
	if (path[0])
		nftw(path, pt_remove_entry_, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- processes --------------------------------------------------------------------- */

/* fork(), which must succeed. */
static inline pid_t pt_fork(void)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	return pid;
}

/* The pid of a process that has ended and been reaped (a child of ours). */
static inline pid_t pt_gone_pid(void)
{
	pid_t child = pt_fork();
	if (child == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	return child;
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

/* From /proc/PID/stat: the command name (cut to commlen - 1), the state
 * letter and the parent.  0, or -1 if there is no such process. */
static inline int pt_proc_stat(pid_t pid, char *comm, size_t commlen, char *state, pid_t *ppid)
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

/* Processes whose parent is `parent` named comm (any state, zombies too):
 * how many, and the first found in *first. */
static inline int pt_procs_named(pid_t parent, const char *comm, pid_t *first)
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

/* A wait status in words, for messages. */
static inline void pt_describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", status);
}

/* Appends the arguments first, ... (ended by NULL) to argv[argc...], at
 * most up to argv[max - 2], then NULL; returns the new argc. */
static inline int pt_append_args(char **argv, int argc, int max, const char *first, va_list ap)
{
	for (const char *a = first; a && argc < max - 1; a = va_arg(ap, const char *))
		argv[argc++] = (char *)a;
	argv[argc] = NULL;
	return argc;
}

/* Where the helper programs are: $PT_TEST_HELPERS (tests/run.sh sets it),
 * else, for a test program run by hand, BUILD/tests/helpers next to it. */
static inline const char *pt_helpers_dir(void)
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

/* The helper program `name`, which must exist; the path stays valid for
 * the next three calls. */
static inline char *pt_helper_path(const char *name)
{
	static char paths[4][PATH_MAX];
	static int next;
	char *p = paths[next++ % 4];
	int n = snprintf(p, PATH_MAX, "%s/%s", pt_helpers_dir(), name);
	ck_assert_msg(n > 0 && n < PATH_MAX && access(p, X_OK) == 0,
	              "%s not found: build the tests, or set PT_TEST_HELPERS", p);
	return p;
}

/* The posixtrace command beside the helpers, or NULL (the caller then
 * says it skipped, naming `test`). */
static inline char *pt_tool_path(const char *test)
{
	static char path[PATH_MAX];
	int n = snprintf(path, sizeof path, "%s/../../posixtrace", pt_helpers_dir());
	if (n > 0 && n < (int)sizeof path && access(path, X_OK) == 0)
		return path;
	fprintf(stderr, "%s: SKIPPED (no posixtrace command at %s)\n", test, path);
	return NULL;
}

/* ---- child processes a test starts, killed when it ends ------------------------------ */

struct pt_children {
	pid_t test_pid;  /* the test's own process */
	pid_t live[32];  /* not yet reaped: killed by pt_kill_children */
	int nlive;
	pid_t used[64];  /* every pid the test used: checked for leftovers */
	int nused;
};

static inline struct pt_children *pt_children(void)
{
	static struct pt_children c;
	return &c;
}

/* At the start of a test: nothing tracked; the test's own pid is used. */
static inline void pt_children_setup(void)
{
	struct pt_children *c = pt_children();
	c->test_pid = getpid();
	c->nlive = 0;
	c->used[0] = c->test_pid;
	c->nused = 1;
}

/* pid is one whose leftovers the test checks (it is not a child to kill). */
static inline void pt_use_pid(pid_t pid)
{
	struct pt_children *c = pt_children();
	if (c->nused < (int)(sizeof c->used / sizeof c->used[0]))
		c->used[c->nused++] = pid;
}

/* A child of the test: killed with it, and a pid it used. */
static inline void pt_track(pid_t pid)
{
	struct pt_children *c = pt_children();
	ck_assert_int_lt(c->nlive, (int)(sizeof c->live / sizeof c->live[0]));
	c->live[c->nlive++] = pid;
	pt_use_pid(pid);
}

/* The child was reaped: no longer one to kill. */
static inline void pt_untrack(pid_t pid)
{
	struct pt_children *c = pt_children();
	for (int i = 0; i < c->nlive; i++)
		if (c->live[i] == pid)
			c->live[i] = c->live[--c->nlive];
}

/* Kills and reaps one tracked child (nothing if it is not tracked: a pid
 * already reaped may be someone else's now). */
static inline void pt_reap(pid_t pid)
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

/* Kills and reaps every tracked child; in a forked child (which inherits
 * an atexit handler calling this) nothing. */
static inline void pt_kill_children(void)
{
	struct pt_children *c = pt_children();
	if (getpid() != c->test_pid)
		return;
	while (c->nlive > 0)
		pt_reap(c->live[c->nlive - 1]);
}

/* Waits (up to timeout_ms) for a child to end by itself and returns its
 * wait status; not ending in time fails the test. */
static inline int pt_wait_exit(pid_t pid, int timeout_ms)
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

/* The end of a test: children killed, then (within 2.5 s) left(pid, name,
 * len) must find nothing for every pid the test used; it returns how many
 * things pid left behind and names one of them in name. */
static inline void pt_children_finish(int (*left)(pid_t pid, char *name, size_t len))
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

/* Kills and reaps every child of the test process, tracked or not (with
 * pt_subreaper_setup, orphans of its children too), until none is left;
 * returns how many it killed.  In another process, nothing. */
static inline int pt_kill_children_of_self(void)
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

static inline int pt_kill_descendants(void)
{
	if (getpid() != pt_children()->test_pid)
		return 0;
	pt_children()->nlive = 0;
	return pt_kill_children_of_self();
}

static inline void pt_kill_descendants_at_exit(void) { pt_kill_descendants(); }

/* Makes the test process the reaper of its orphaned descendants: a keeper
 * whose controller was killed is then reparented to the test, which ends
 * it with the rest when its teardown or exit() runs.  A failed check ends
 * the test's process with _exit(): then pt_run_scratch's runner, a reaper
 * too, ends them. */
static inline void pt_subreaper_setup(void)
{
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	atexit(pt_kill_descendants_at_exit);
}

/* Scratch directories.  pt_run_scratch (instead of pt_run) makes one root
 * directory under /tmp for the whole program and, once every test has run,
 * kills what is left of their descendants (its process is their reaper, as
 * a failed check ends a test's process with _exit() and no teardown) and
 * removes the root with whatever the tests left in it: the logs a test
 * makes can be large (sparse files of gigabytes).  pt_scratch_dir gives a
 * test a directory of its own inside the root. */
static inline char *pt_scratch_root_(void)
{
	static char root[96];
	return root;
}

static inline const char *pt_scratch_dir(const char *name)
{
	static char path[160];
	ck_assert_msg(pt_scratch_root_()[0], "pt_scratch_dir needs pt_run_scratch");
	snprintf(path, sizeof path, "%s/%s.XXXXXX", pt_scratch_root_(), name);
	ck_assert_ptr_nonnull(mkdtemp(path));
	return path;
}

static inline int pt_run_scratch(Suite *s, const char *prefix)
{
	char *root = pt_scratch_root_();
	snprintf(root, 96, "/tmp/%s.XXXXXX", prefix);
	if (!mkdtemp(root) || chmod(root, 0755) != 0 ||
	    prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror(prefix);
		return EXIT_FAILURE;
	}
	int rc = pt_run(s);
	pt_kill_children_of_self();
	pt_remove_tree(root);
	return rc;
}

#endif
