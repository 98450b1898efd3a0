/* SPDX-License-Identifier: MIT */
/*
 * What the workload tests share (t_workload: processes; t_wlthreads:
 * threads), compiled from tests/workload.c into both: the scratch
 * directory and the process groups a test starts, streams and the
 * posixtrace command, the tally of what a reader sees and its verdict, the
 * readers of logs and of live streams, the names the writers open.  What
 * every workload must show is in t_workload.c's first comment.
 */
#ifndef PT_TEST_WORKLOAD_H
#define PT_TEST_WORKLOAD_H

#include "harness.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ---- scale: PT_WORKLOAD_SCALE multiplies the counts (tests/soak/) -------- */

extern int scale; /* set by workload_run */

/* Check's CK_TIMEOUT_MULTIPLIER (set by make check for sanitizer builds,
 * where a process start costs several times more) stretches our own waits
 * too. */
extern int slowdown;

/* Bound on a workload's run that only catches a hang. */
#define TIMEOUT_S (45 * scale * slowdown)

/* ---- scratch directory and process groups -------------------------------- */

/* name in the running test's own directory (the path stays valid for the
 * next 15 calls). */
const char *in_dir(const char *name);

/* The process group pgid, ended and reaped, is no longer one to kill. */
void drop_group(pid_t pgid);

/* The first bytes of a file, for messages. */
const char *file_head(const char *path);

off_t file_size(const char *path);

/* ---- programs ------------------------------------------------------------ */

/* The posixtrace command, or NULL (the test then says it skipped). */
char *tool(const char *test);

int have_program(const char *name);

/* ---- starting and ending processes --------------------------------------- */

struct proc {
	pid_t pid;   /* also its process group */
	int go_fd;   /* held: a byte lets it exec */
};

/* Starts argv (argv[0] a path, or a name looked up in PATH) as the leader
 * of a new process group, with stdout and stderr appended to `out`.
 * fds[i] becomes descriptor 10 + i of the program.  A held program waits
 * for release() before exec, so that a stream can be created for its pid
 * first, as posixtrace record does. */
struct proc spawn(char *const argv[], const char *out, int held, const int *fds, int nfds);

void release(struct proc *p);

/* Waits up to timeout_s for the program to exit and returns its wait
 * status; whatever is left of its process group is killed. */
int wait_exit(struct proc *p, int timeout_s, const char *what);

int exited_0(int status);

/* Waits up to timeout_ms for a byte on fd. */
int wait_byte(int fd, int timeout_ms);

/* ---- streams ------------------------------------------------------------- */

/* Bytes a stream needs to hold `user` events of our payload and `sys`
 * system events, by the maximum sizes the library states. */
size_t room_for(uint64_t user, uint64_t sys);

/* System events a stream may hold besides the user events: START, STOP
 * and flushes. */
#define SYS_ROOM 64

trace_id_t create_stream(pid_t pid, size_t size, int policy, int inherit, int logfd);

int open_log(const char *path);

/* The program, traced by a stream with a log created by this process for
 * its pid before it runs (inherited by its children), started, and shut
 * down when the program has exited.  Returns the program's wait status. */
int trace_program(char *const argv[], size_t size, const char *log, int timeout_s);

/* Starts `posixtrace record -o log --size size -- argv...`, its output in
 * record.out. */
struct proc start_record(const char *tool_path, char *const argv[], size_t size,
                         const char *log, const int *fds, int nfds);

/* Asserts that posixtrace record exited 0 (the program's own status). */
void record_ended(int status, char *const argv[]);

/* Runs the program under posixtrace record. */
void record(const char *tool_path, char *const argv[], size_t size, const char *log,
            int timeout_s);

/* ---- what a reader sees: one pass over the events, in read order --------- */

enum problem {
	P_ERROR,   /* POSIX_TRACE_ERROR, or reading failed */
	P_TORN,    /* a record whose payload, length or writer do not agree */
	P_ORDER,   /* a writer's events not in the order posted, or repeated */
	P_NAME,    /* a user event without the name its writer opened */
	P_OVER,    /* more events of a writer than it posted */
	P_GAP,     /* events missing with no POSIX_TRACE_OVERFLOW in the gap */
	P_RESUME,  /* an event after POSIX_TRACE_OVERFLOW with no RESUME before it */
	P_TS,      /* a timestamp earlier than the one before it */
	P_WOPID,   /* type in the WOPID set but pid != 0, or the other way round */
	P_ADDR,    /* a controller's event without the address of its call */
	NPROBLEMS
};

struct writer_state {
	uint32_t next_seq;
	int64_t last_pos; /* read position of its last event, -1 before */
	uint64_t count;
	pid_t pid;
	pthread_t thread;
};

struct tally {
	/* what is expected */
	char what[128];
	uint32_t nwriters;
	const char *(*name_of)(uint32_t writer, uint32_t seq);
	pid_t controller;            /* pid whose calls caused system events, or 0 */
	uintptr_t text_lo, text_hi;  /* the controller's program text */
	trace_event_set_t wopid;
	/* walking */
	int64_t pos;
	int64_t last_overflow_pos;
	int resume_pending;
	struct timespec last_ts;
	/* results */
	uint64_t events, user, lost, posted, kept_in_flight;
	uint64_t sys[POSIX_TRACE_ERROR + 1];
	uint64_t problems[NPROBLEMS];
	char first[NPROBLEMS][200];
	uint64_t short_writers;
	trace_event_id_t first_id;
	pid_t first_pid;
	int64_t last_user_pos, last_stop_pos;
	pid_t last_stop_pid;
	uint64_t ctl_flush_start, ctl_flush_stop;
	int ctl_flush_state; /* 1 FLUSH_START, 2 then FLUSH_STOP, 3 then a user event */
	int read_error;      /* of the analyzer process */
	char summary[640];
	struct writer_state w[]; /* nwriters of them */
};

size_t tally_size(uint32_t nwriters);

/* Fills a tally in place (it may live in shared memory). */
void tally_init(struct tally *t, const char *what, uint32_t nwriters,
                const char *(*name_of)(uint32_t, uint32_t));

struct tally *tally_new(const char *what, uint32_t nwriters,
                        const char *(*name_of)(uint32_t, uint32_t));

/* After the last event: what each writer posted (calls that returned) and
 * whether it was killed in a call (one more event may then be kept). */
void tally_finish(struct tally *t, const uint64_t *posted, const uint8_t *killed);

/* The workload's verdict: 0, or 1 with the reason in msg.  fits: the
 * events fit the stream, so none may be lost. */
int tally_verdict(const struct tally *t, int fits, char *msg, size_t len);

void assert_workload(const struct tally *t, int fits);

/* ---- reading ------------------------------------------------------------- */

/* Names by id, asked once per id. */
struct names {
	char name[TRACE_USER_EVENT_MAX + POSIX_TRACE_UNNAMED_USEREVENT][TRACE_EVENT_NAME_MAX + 1];
	unsigned char known[TRACE_USER_EVENT_MAX + POSIX_TRACE_UNNAMED_USEREVENT];
};

/* Reads a whole log into t; returns 0 or an error number (no assertion:
 * the analyzer of the XRAT test is a separate process). */
int read_log_into(const char *path, struct tally *t);

void read_log(const char *path, struct tally *t);

/* A thread that reads an active stream while it is written, until the
 * POSIX_TRACE_STOP (data 0) of posix_trace_stop, then what is left. */
struct live_reader {
	trace_id_t trid;
	struct tally *t;
	struct names names;
	atomic_int stopped; /* set once posix_trace_stop returned */
	int err;
	pthread_t thread;
};

struct live_reader *live_reader_start(trace_id_t trid, struct tally *t);

/* Stops the stream, lets the reader finish, and adds the lost count. */
void live_reader_finish(struct live_reader *r);

/* ---- expected names ------------------------------------------------------ */

const char *loop_name(uint32_t w, uint32_t seq);

const char *job_name(uint32_t w, uint32_t seq);

const char *request_name(uint32_t w, uint32_t seq);

const char *thread_name(uint32_t w, uint32_t seq);

const char *forkfirst_name(uint32_t w, uint32_t seq);

const char *xrat_name(uint32_t w, uint32_t seq);

uint64_t *posted_each(uint32_t nwriters, uint64_t count);

/* ---- the runner ---------------------------------------------------------- */

TCase *long_tcase(Suite *s, const char *name);

/* The runner of a workload program: the scratch directory, the shared
 * list of process groups and the subreaper set up, the suite run, what is
 * left killed and removed.  PT_WORKLOAD_SCALE and CK_TIMEOUT_MULTIPLIER
 * read here. */
int workload_run(Suite *s, const char *prefix);

#endif
