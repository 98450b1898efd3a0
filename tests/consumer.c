/* SPDX-License-Identifier: MIT */
/*
 * What the tests of consumers of damaged stream memory share (declared in
 * tests/consumer.h), compiled into t_consumer and t_consumerbounds.
 */
#include "consumer.h"

const char *dir;

/* Check's timeout multiplier: a sanitized build runs several times slower,
 * and so may a controller that is not hung. */
int slowdown(void)
{
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
	int k = m ? atoi(m) : 1;
	return k >= 1 && k <= 10 ? k : 1;
}

void setup(void)
{
	pt_children_setup();
	dir = pt_scratch_dir(program_invocation_short_name);
	pt_subreaper_setup();
	setvbuf(stdout, NULL, _IOLBF, 0);
	chmod(dir, 0755);
}

void teardown(void)
{
	pt_kill_descendants();
	pt_remove_tree(dir);
}

static long ms_since(const struct timespec *t0)
{
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)((now.tv_sec - t0->tv_sec) * 1000 + (now.tv_nsec - t0->tv_nsec) / 1000000);
}

/* A line from fd, within timeout_ms; 0 if none came. */
static int read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	size_t n = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (n + 1 < len) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		long left = timeout_ms - ms_since(&t0);
		if (left <= 0 || poll(&p, 1, (int)left) <= 0 || read(fd, buf + n, 1) != 1)
			return 0;
		if (buf[n] == '\n')
			break;
		n++;
	}
	buf[n] = '\0';
	return 1;
}

/* Starts the scribbler with `shape` (as uid, unless -1) and its extra
 * arguments (at most four, NULL-terminated). */
struct target start_target(const char *shape, int uid, const char *const *extra)
{
	int in[2], out[2];
	char *argv[8] = {pt_helper_path("scribbler"), (char *)shape};
	for (int i = 0; extra && extra[i] && i < 4; i++)
		argv[2 + i] = (char *)extra[i];
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	pid_t pid = pt_fork();
	if (pid == 0) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		if (uid >= 0 && (setgroups(0, NULL) != 0 || setgid((gid_t)uid) != 0 ||
		                 setuid((uid_t)uid) != 0))
			_exit(126);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		execv(argv[0], argv);
		_exit(127);
	}
	pt_track(pid);
	close(in[0]);
	close(out[1]);
	return (struct target){pid, in[1], out[0]};
}

/* Waits for the target's "ready" (a stream traces it) and tells it to
 * write its shape. */
void attack(const struct target *t)
{
	char line[64];
	ck_assert_msg(read_line(t->from, line, sizeof line, 10000) && strcmp(line, "ready") == 0,
	              "the target was never traced");
	ck_assert_int_eq(write(t->to, "g", 1), 1);
}

/* The shape is written: how many events it stored (the most a consumer
 * may report of them). */
unsigned attacked(const struct target *t)
{
	char line[64];
	unsigned stored = 0;
	ck_assert_msg(read_line(t->from, line, sizeof line, 20000) &&
	                  sscanf(line, "done %u", &stored) == 1,
	              "the target did not write its shape");
	return stored;
}

static int is_named(trace_id_t trid, trace_event_id_t id, const char *name)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	return posix_trace_eventid_get_name(trid, id, buf) == 0 && strcmp(buf, name) == 0;
}

/* Counts an event into r. */
static void count_event(trace_id_t trid, const struct posix_trace_event_info *ev,
                        struct ctl_result *r)
{
	r->events++;
	r->errors += ev->posix_event_id == POSIX_TRACE_ERROR;
	r->cycle_events += is_named(trid, ev->posix_event_id, "sc.cycle");
}

/* ---- controllers, each in a child of the test ----------------------------------- */

/* Where a controller is, in memory it shares with the test: a controller
 * that does not finish is reported with the step it hangs in. */
enum ctl_step { STEP_CREATE, STEP_WAIT_GO, STEP_READ, STEP_CLEAR, STEP_SHUTDOWN, STEP_REPORT };
struct ctl_progress {
	_Atomic int step;
	_Atomic long calls; /* getnext calls made */
	/* Where the controller is, written by its SIGUSR1 handler when the
	 * test finds it hung (the same addresses in the test, a fork). */
	_Atomic int nframes;
	void *frames[24];
};
static const char *const step_names[] = {"create", "waiting for the target", "reading",
                                         "posix_trace_clear", "posix_trace_shutdown",
                                         "reporting"};
static struct ctl_progress *progress;

void cap_files(void)
{
	struct rlimit r = {LOG_CAP, LOG_CAP};
	setrlimit(RLIMIT_FSIZE, &r);
}

static trace_id_t create_for(pid_t target, int logfd, struct ctl_result *r)
{
	trace_attr_t attr;
	trace_id_t trid = 0;
	posix_trace_attr_init(&attr);
	if (logfd >= 0) {
		posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND);
		r->create_rc = posix_trace_create_withlog(target, &attr, logfd, &trid);
	} else {
		r->create_rc = posix_trace_create(target, &attr, &trid);
	}
	posix_trace_attr_destroy(&attr);
	if (r->create_rc == 0)
		posix_trace_start(trid);
	return trid;
}

/* Live: reads for ms milliseconds, blocking calls with a 200 ms deadline or
 * non-blocking ones, timing each call; then clear. */
static void read_for(trace_id_t trid, enum ctl_kind kind, long ms, struct ctl_result *r)
{
	struct timespec t0, c0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (ms_since(&t0) < ms) {
		struct posix_trace_event_info ev;
		char data[1024];
		size_t len;
		int unavailable = 0, rc;
		clock_gettime(CLOCK_MONOTONIC, &c0);
		if (kind == CTL_LIVE_TIMED) {
			struct timespec dl = pt_in_ms(200);
			rc = posix_trace_timedgetnext_event(trid, &ev, data, sizeof data, &len, &unavailable,
			                                    &dl);
			unavailable = unavailable || rc == ETIMEDOUT;
		} else {
			rc = posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavailable);
		}
		atomic_fetch_add(&progress->calls, 1);
		long took = ms_since(&c0);
		if (took > r->max_call_ms)
			r->max_call_ms = took;
		if (rc == 0 && !unavailable)
			count_event(trid, &ev, r);
		else if (kind != CTL_LIVE_TIMED)
			usleep(1000);
	}
	clock_gettime(CLOCK_MONOTONIC, &c0);
	atomic_store(&progress->step, STEP_CLEAR);
	r->clear_rc = posix_trace_clear(trid);
	r->clear_ms = ms_since(&c0);
}

static void record_stack(int sig)
{
	(void)sig;
	atomic_store(&progress->nframes, backtrace(progress->frames, 24));
}

/* The functions of a hung controller's stack, innermost first, named by
 * addr2line from the files dladdr finds them in. */
static void describe_stack(const struct ctl_progress *p, char *out, size_t len)
{
	size_t n = 0;
	out[0] = '\0';
	for (int i = 0; i < atomic_load(&p->nframes) && i < 24 && n + 64 < len; i++) {
		Dl_info info;
		char cmd[512], fn[128] = "?";
		if (!dladdr(p->frames[i], &info) || !info.dli_fname)
			continue;
		snprintf(cmd, sizeof cmd, "addr2line -f -e '%s' %#lx 2>/dev/null", info.dli_fname,
		         (unsigned long)((uintptr_t)p->frames[i] - (uintptr_t)info.dli_fbase - 1));
		FILE *f = popen(cmd, "r");
		if (f) {
			if (!fgets(fn, sizeof fn, f))
				strcpy(fn, "?");
			pclose(f);
		}
		fn[strcspn(fn, "\n")] = '\0';
		n += (size_t)snprintf(out + n, len - n, "%s%s", n ? " < " : "", fn);
	}
}

static void controller_main(pid_t target, enum ctl_kind kind, const char *log, long ms, int go,
                            int out)
{
	struct ctl_result r;
	char c;
	void *warm[1];
	memset(&r, 0, sizeof r);
	backtrace(warm, 1); /* loads what backtrace needs before a handler calls it */
	signal(SIGUSR1, record_stack);
	cap_files();
	int logfd = kind == CTL_LOG ? open(log, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600) : -1;
	trace_id_t trid = create_for(target, logfd, &r);
	atomic_store(&progress->step, STEP_WAIT_GO);
	if (write(out, "s", 1) != 1 || read(go, &c, 1) != 1)
		_exit(1);
	if (r.create_rc)
		_exit(write(out, &r, sizeof r) == sizeof r ? 0 : 1);
	atomic_store(&progress->step, STEP_READ);
	if (kind == CTL_LOG)
		pt_sleep_ms(ms);
	else
		read_for(trid, kind, ms, &r);
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	atomic_store(&progress->step, STEP_SHUTDOWN);
	r.shutdown_rc = posix_trace_shutdown(trid);
	r.shutdown_ms = ms_since(&t0);
	atomic_store(&progress->step, STEP_REPORT);
	_exit(write(out, &r, sizeof r) == sizeof r ? 0 : 1);
}

struct ctl start_controller(pid_t target, enum ctl_kind kind, const char *log, long ms)
{
	int go[2], res[2];
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
	struct ctl_progress *shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
	                                   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(shared, MAP_FAILED);
	pid_t pid = pt_fork();
	if (pid == 0) {
		progress = shared;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(res[0]);
		controller_main(target, kind, log, ms, go[0], res[1]);
	}
	pt_track(pid);
	close(go[0]);
	close(res[1]);
	struct ctl c = {pid, go[1], res[0], shared};
	char line[8];
	struct pollfd p = {.fd = c.result, .events = POLLIN};
	ck_assert_msg(poll(&p, 1, 10000) == 1 && read(c.result, line, 1) == 1 && line[0] == 's',
	              "the controller did not start");
	return c;
}

void controller_go(const struct ctl *c) { ck_assert_int_eq(write(c->go, "g", 1), 1); }

/* The controller's report, which must come within RESULT_WAIT_MS. */
struct ctl_result controller_result(const struct ctl *c)
{
	struct ctl_result r;
	struct pollfd p = {.fd = c->result, .events = POLLIN};
	int wait_ms = RESULT_WAIT_MS * slowdown();
	ssize_t got = poll(&p, 1, wait_ms) == 1 ? read(c->result, &r, sizeof r) : -1;
	if (got == 0) {
		int status = 0;
		char how[96];
		waitpid(c->pid, &status, 0);
		pt_describe_status(status, how, sizeof how);
		ck_abort_msg("the controller ended without a report (%s) while %s", how,
		             step_names[atomic_load(&c->progress->step)]);
	}
	char where[1024] = "";
	if (got != sizeof r) {
		kill(c->pid, SIGUSR1);
		for (int i = 0; i < 50 && !atomic_load(&c->progress->nframes); i++)
			usleep(10000);
		describe_stack(c->progress, where, sizeof where);
	}
	ck_assert_msg(got == sizeof r,
	              "the controller did not finish within %d ms (hung in a consumer): it was "
	              "%s, after %ld getnext calls; its stack: %s",
	              wait_ms, step_names[atomic_load(&c->progress->step)],
	              atomic_load(&c->progress->calls), where);
	ck_assert_int_eq(r.create_rc, 0);
	return r;
}

/* The target writes its shape; then the controller goes on, and reports. */
struct ctl_result after_attack(const struct target *t, const struct ctl *c, unsigned *stored)
{
	attack(t);
	*stored = attacked(t);
	controller_go(c);
	return controller_result(c);
}

/* Counts the events of a log read back with posix_trace_open. */
struct ctl_result read_log(const char *log)
{
	struct ctl_result r;
	struct stat st;
	memset(&r, 0, sizeof r);
	ck_assert_int_eq(stat(log, &st), 0);
	ck_assert_msg(st.st_size < (off_t)(LOG_CAP / 4), "the log grew to %lld bytes",
	              (long long)st.st_size);
	int fd = open(log, O_RDONLY | O_CLOEXEC);
	trace_id_t trid;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(posix_trace_open(fd, &trid), 0);
	for (;;) {
		struct posix_trace_event_info ev;
		char data[1024];
		size_t len;
		int unavailable = 0;
		int rc = posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavailable);
		if (rc != 0 || unavailable)
			break;
		count_event(trid, &ev, &r);
	}
	posix_trace_close(trid);
	close(fd);
	return r;
}

