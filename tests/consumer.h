/* SPDX-License-Identifier: MIT */
/*
 * What the tests of consumers of damaged stream memory share (t_consumer:
 * shapes of chunks and lanes; t_consumerbounds: floods of forged state),
 * compiled from tests/consumer.c into both: the scribbler target, the
 * controllers in children of the test and their reports.  What is checked,
 * and why, is in t_consumer.c's first comment.
 */
#ifndef PT_TEST_CONSUMER_H
#define PT_TEST_CONSUMER_H

#include "harness.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <grp.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/resource.h>

#define NOBODY 65534
#define LOG_CAP (64u << 20)     /* RLIMIT_FSIZE of every controller and keeper */
#define RESULT_WAIT_MS 15000    /* a controller not done by then hangs (times Check's multiplier) */

struct target {
	pid_t pid;
	int to;   /* its stdin */
	int from; /* its stdout */
};

/* What a controller child reports through its pipe. */
struct ctl_result {
	int create_rc, shutdown_rc, clear_rc;
	long shutdown_ms, clear_ms, max_call_ms;
	long events, cycle_events, errors;
};

extern const char *dir; /* the running test's scratch directory */

/* Check's timeout multiplier: a sanitized build runs several times slower,
 * and so may a controller that is not hung. */
int slowdown(void);

/* Each test's fixture: its scratch directory, the reaper of its orphans;
 * then every descendant killed and the directory removed. */
void setup(void);
void teardown(void);

/* Starts the scribbler with `shape` (as uid, unless -1) and its extra
 * arguments (at most four, NULL-terminated). */
struct target start_target(const char *shape, int uid, const char *const *extra);

/* Waits for the target's "ready" (a stream traces it) and tells it to
 * write its shape. */
void attack(const struct target *t);

/* The shape is written: how many events it stored (the most a consumer
 * may report of them). */
unsigned attacked(const struct target *t);

/* ---- controllers, each in a child of the test ----------------------------------- */

enum ctl_kind { CTL_LOG, CTL_LIVE_READ, CTL_LIVE_TIMED };

#define READ_MS 1000 /* a live controller reads this long once told to */

/* The state of a controller, in memory it shares with the test (consumer.c). */
struct ctl_progress;

/* A controller started by start_controller. */
struct ctl {
	pid_t pid;
	int go;      /* the test writes a byte: the target has written its shape */
	int result;  /* the child writes "s" once started, then its ctl_result */
	struct ctl_progress *progress;
};

/* The file size limit of every controller and the keepers it forks. */
void cap_files(void);

/* A controller of target in a child: a log (CTL_LOG, kept ms after the
 * shape is written) or a live reader (reading ms); it creates its stream
 * and waits for controller_go. */
struct ctl start_controller(pid_t target, enum ctl_kind kind, const char *log, long ms);

/* Tells the controller that the target has written its shape. */
void controller_go(const struct ctl *c);

/* The controller's report, which must come within RESULT_WAIT_MS. */
struct ctl_result controller_result(const struct ctl *c);

/* The target writes its shape; then the controller goes on, and reports. */
struct ctl_result after_attack(const struct target *t, const struct ctl *c, unsigned *stored);

/* Counts the events of a log read back with posix_trace_open. */
struct ctl_result read_log(const char *log);

#endif
