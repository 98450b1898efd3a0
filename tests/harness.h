/* SPDX-License-Identifier: MIT */
/*
 * Shared by every test program: Check (each test forked, with a timeout)
 * plus the helpers more than one test program needs, declared here and
 * defined in tests/harness.c (what needs only the C library and Check) and
 * tests/harness_trace.c (what calls the trace API), compiled once into
 * BUILD/tests/libharness.a, which every test program links.  A test program
 * is one file tests/t_NAME.c whose main() builds a suite and returns
 * pt_run(suite).  The helper programs (tests/helpers/) include it too, for
 * the payload of the writers (pt_payload, inline here); they use nothing of
 * Check and link nothing of the harness.
 *
 * A test program that reads events back with pt_drain and friends may set
 * PT_EV_DATA, the room for an event's data, before including this header:
 * the inline wrappers below pass that program's layout of struct pt_ev to
 * the compiled functions.
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
#include <stddef.h>
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

/* A test case with the default timeout, added to s. */
TCase *pt_tcase(Suite *s, const char *name);

/* The same, with a fixture run in each test's own process. */
TCase *pt_tcase_fixture(Suite *s, const char *name, void (*setup)(void),
                        void (*teardown)(void));

/* Runs the suite; EXIT_SUCCESS if every test passed. */
int pt_run(Suite *s);

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

/* ---- streams (tests/harness_trace.c) --------------------------------------- */

/* A user event id for `name` (registered if new). */
trace_event_id_t pt_event_id(const char *name);

/* A stream for this process with default attributes. */
trace_id_t pt_create_default(void);

/* The same, started. */
trace_id_t pt_create_started(void);

/* Attributes of a stream made by pt_create: a member left 0 keeps the
 * default (its setter is not called). */
struct pt_attrs {
	int policy;      /* stream-full-policy */
	size_t size;     /* stream-min-size */
	size_t max_data; /* max-data-size */
};

/* A stream for pid (0: this process) with those attributes. */
trace_id_t pt_create(pid_t pid, struct pt_attrs a);

/* posix_trace_get_status into a status filled with garbage first. */
struct posix_trace_status_info pt_status(trace_id_t trid);

/* Whether the stream names `id` `name`. */
int pt_name_is(trace_id_t trid, trace_event_id_t id, const char *name);

/* ---- events read back (tests/harness_trace.c) -------------------------------- */

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

/* Where a struct pt_ev's members are in this program (PT_EV_DATA is the
 * program's own): what the compiled functions that fill arrays of them
 * need to know. */
struct pt_ev_layout {
	size_t size, data_offset, data_room, len_offset;
};
#define PT_EV_LAYOUT                                                             \
	((struct pt_ev_layout){sizeof(struct pt_ev), offsetof(struct pt_ev, data), \
	                       PT_EV_DATA, offsetof(struct pt_ev, len)})

/* A stream that gives more events than this in one read-out never runs
 * empty: a bound that only catches a runaway. */
#define PT_DRAIN_LIMIT 1000000

static inline int pt_is_user(const struct pt_ev *e)
{
	return e->info.posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT;
}

/* The next event if one is there now (posix_trace_trygetnext_event) into
 * info, data (room bytes) and *len: 1, or 0 when none is. */
int pt_try_event(trace_id_t trid, struct posix_trace_event_info *info, void *data,
                 size_t room, size_t *len);

static inline int pt_try_ev(trace_id_t trid, struct pt_ev *e)
{
	return pt_try_event(trid, &e->info, e->data, sizeof e->data, &e->len);
}

/* pt_drain_into for an array of events laid out as `layout` says. */
int pt_drain_into_layout(trace_id_t trid, void *out, int max, int user_only,
                         struct pt_ev_layout layout);

/* Reads every event there is now, oldest first, and keeps in out[] every
 * one, or with user_only the user events alone; returns how many it kept.
 * More than max to keep fails the test. */
static inline int pt_drain_into(trace_id_t trid, struct pt_ev *out, int max, int user_only)
{
	return pt_drain_into_layout(trid, out, max, user_only, PT_EV_LAYOUT);
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

/* pt_drain_all for events laid out as `layout` says. */
void *pt_drain_all_layout(trace_id_t trid, size_t *n, struct pt_ev_layout layout);

/* Every event there is now, into an array that grows as needed; the
 * caller frees it.  Its length goes to *n. */
static inline struct pt_ev *pt_drain_all(trace_id_t trid, size_t *n)
{
	return pt_drain_all_layout(trid, n, PT_EV_LAYOUT);
}

/* How many of the n events have type id. */
static inline int pt_count_id(const struct pt_ev *evs, int n, trace_event_id_t id)
{
	int c = 0;
	for (int i = 0; i < n; i++)
		c += evs[i].info.posix_event_id == id;
	return c;
}

/* The uint32_t in data, which must be all its len bytes hold. */
uint32_t pt_data_u32(const void *data, size_t len);

/* The data of an event posted with a uint32_t, which must be all it holds. */
static inline uint32_t pt_ev_u32(const struct pt_ev *e)
{
	return pt_data_u32(e->data, e->len);
}

/* ---- the writers' payload (inline: the helper programs use it) ------------------ */

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

void pt_sleep_ms(long ms);

/* CLOCK_REALTIME `ms` milliseconds from now, or ago when ms < 0 (an
 * abstime for timedgetnext). */
struct timespec pt_in_ms(long ms);

static inline int pt_ts_le(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec <= b->tv_nsec);
}

static inline int64_t pt_ns(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000 + ts->tv_nsec;
}

int64_t pt_realtime_ns(void);

/* ---- threads ------------------------------------------------------------------ */

/* A count scaled by $PT_STRESS_SCALE (default 1), kept within [min, max]. */
uint32_t pt_stress_scaled(double count, uint32_t min, uint32_t max);

/* One of several writer threads that start posting together: it calls
 * post(id, thread, i) for i = 0 .. count - 1. */
struct pt_writer {
	trace_event_id_t id;
	uint32_t thread, count;
	void (*post)(trace_event_id_t id, uint32_t thread, uint32_t seq);
	pthread_t self;           /* set by pt_run_writers */
	pthread_barrier_t *go;    /* set by pt_run_writers */
};

void *pt_writer_main(void *p);

/* Runs the n writers w[] (released together by a barrier) to their end. */
void pt_run_writers(struct pt_writer *w, uint32_t n);

/* A thread blocked reading the next event: posix_trace_getnext_event, or
 * with timed posix_trace_timedgetnext_event until 10 s after it began.  Its
 * result goes to rc; done is set once the call returned. */
struct pt_blocked_reader {
	trace_id_t trid;
	int timed;
	int rc;
	atomic_int done;
};

void *pt_blocked_reader_main(void *p);

/* ---- files ----------------------------------------------------------------------- */

/* A second, read-only open file description of the file behind fd. */
int pt_reopen_ro(int fd);

/* Removes path and everything below it, never following a link. */
void pt_remove_tree(const char *path);

/* ---- processes --------------------------------------------------------------------- */

/* fork(), which must succeed. */
pid_t pt_fork(void);
/* A process the test holds stopped (a keeper under SIGSTOP) must not
 * outlive a test that fails or times out: the guard, out of the test's
 * process group, kills it once the test's process is gone.  pt_guard_end
 * ends the guard when the test is done with it. */
pid_t pt_guard_held(pid_t held);
void pt_guard_end(pid_t guard);

/* The pid of a process that has ended and been reaped (a child of ours). */
pid_t pt_gone_pid(void);

/* Waits (up to 5 s) until process `pid` runs another program than this one. */
void pt_wait_exec(pid_t pid);

/* From /proc/PID/stat: the command name (cut to commlen - 1), the state
 * letter and the parent.  0, or -1 if there is no such process.  Compiled
 * under another name: the library has a pt_proc_stat of its own, which the
 * tests that link the static library would find twice. */
int pt_harness_proc_stat(pid_t pid, char *comm, size_t commlen, char *state, pid_t *ppid);
static inline int pt_proc_stat(pid_t pid, char *comm, size_t commlen, char *state, pid_t *ppid)
{
	return pt_harness_proc_stat(pid, comm, commlen, state, ppid);
}

/* Processes whose parent is `parent` named comm (any state, zombies too):
 * how many, and the first found in *first. */
int pt_procs_named(pid_t parent, const char *comm, pid_t *first);

/* A wait status in words, for messages. */
void pt_describe_status(int status, char *buf, size_t len);

/* Appends the arguments first, ... (ended by NULL) to argv[argc...], at
 * most up to argv[max - 2], then NULL; returns the new argc. */
int pt_append_args(char **argv, int argc, int max, const char *first, va_list ap);

/* Where the helper programs are: $PT_TEST_HELPERS (tests/run.sh sets it),
 * else, for a test program run by hand, BUILD/tests/helpers next to it. */
const char *pt_helpers_dir(void);

/* The helper program `name`, which must exist; the path stays valid for
 * the next three calls. */
char *pt_helper_path(const char *name);

/* The posixtrace command beside the helpers, or NULL (the caller then
 * says it skipped, naming `test`). */
char *pt_tool_path(const char *test);

/* ---- child processes a test starts, killed when it ends ------------------------------ */

struct pt_children {
	pid_t test_pid;  /* the test's own process */
	pid_t live[32];  /* not yet reaped: killed by pt_kill_children */
	int nlive;
	pid_t used[64];  /* every pid the test used: checked for leftovers */
	int nused;
};

/* The test's record of them (one per process). */
struct pt_children *pt_children(void);

/* At the start of a test: nothing tracked; the test's own pid is used. */
void pt_children_setup(void);

/* pid is one whose leftovers the test checks (it is not a child to kill). */
void pt_use_pid(pid_t pid);

/* A child of the test: killed with it, and a pid it used. */
void pt_track(pid_t pid);

/* The child was reaped: no longer one to kill. */
void pt_untrack(pid_t pid);

/* Kills and reaps one tracked child (nothing if it is not tracked: a pid
 * already reaped may be someone else's now). */
void pt_reap(pid_t pid);

/* Kills and reaps every tracked child; in a forked child (which inherits
 * an atexit handler calling this) nothing. */
void pt_kill_children(void);

/* Waits (up to timeout_ms) for a child to end by itself and returns its
 * wait status; not ending in time fails the test. */
int pt_wait_exit(pid_t pid, int timeout_ms);

/* The end of a test: children killed, then (within 2.5 s) left(pid, name,
 * len) must find nothing for every pid the test used; it returns how many
 * things pid left behind and names one of them in name. */
void pt_children_finish(int (*left)(pid_t pid, char *name, size_t len));

/* Kills and reaps every child of the test process, tracked or not (with
 * pt_subreaper_setup, orphans of its children too), until none is left;
 * returns how many it killed.  In another process, nothing. */
int pt_kill_children_of_self(void);

/* The same, from the test's own process only (tracked children
 * forgotten); 0 elsewhere. */
int pt_kill_descendants(void);

/* Makes the test process the reaper of its orphaned descendants: a keeper
 * whose controller was killed is then reparented to the test, which ends
 * it with the rest when its teardown or exit() runs.  A failed check ends
 * the test's process with _exit(): then pt_run_scratch's runner, a reaper
 * too, ends them. */
void pt_subreaper_setup(void);

/* Scratch directories.  pt_run_scratch (instead of pt_run) makes one root
 * directory under /tmp for the whole program and, once every test has run,
 * kills what is left of their descendants (its process is their reaper, as
 * a failed check ends a test's process with _exit() and no teardown) and
 * removes the root with whatever the tests left in it: the logs a test
 * makes can be large (sparse files of gigabytes).  pt_scratch_dir gives a
 * test a directory of its own inside the root. */
const char *pt_scratch_dir(const char *name);
int pt_run_scratch(Suite *s, const char *prefix);

#endif
