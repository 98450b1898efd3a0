/* SPDX-License-Identifier: MIT */
/*
 * t_workload: realistic workloads, traced through the `posixtrace record`
 * command and through a controller written with the library, counting every
 * event.
 *
 * Workloads: a shell loop running 2,000 short-lived instrumented processes;
 * a build (make -j2 of 200 instrumented jobs) and a shell starting jobs with
 * `&` and `wait`; a pre-forking server whose parent opens the event names and
 * whose workers post request begin/end pairs, two of them killed with SIGKILL
 * halfway and replaced; 2,000 short-lived threads (at most 50 alive) and
 * 1,000 threads alive at once; a traced process whose 100 threads posted one
 * event each and then idle; a program that forks as its first statement; and
 * the three-process scenario of XRAT B.2.11 (trace controller, instrumented
 * application, trace analyzer).
 *
 * What every workload must show (XSH 2.11; posix_trace_attr_getmaxusereventsize,
 * DESCRIPTION: when the sum of the maximum sizes of the events that may be
 * recorded is at most stream-min-size, all are recorded without loss, whatever
 * the number of writers):
 *   - received + lost == posted when nothing is lost, and received + lost
 *     >= posted otherwise: lost is posixtrace_lost_events of
 *     posix_trace_get_status, which counts every event the stream lost,
 *     system events (FLUSH_START...) too; for a writer killed with SIGKILL,
 *     posted counts the calls that returned (its call in flight may be kept
 *     or lost);
 *   - nothing lost when the test's events fit the stream, whose size every
 *     test sets from posix_trace_attr_getmaxusereventsize (room for every
 *     user event plus 64 system events);
 *   - every gap a reader sees is bracketed as XSH 2.11 says for an overflow:
 *     POSIX_TRACE_OVERFLOW after the last event before the gap, and
 *     POSIX_TRACE_RESUME before the next event;
 *   - each writer's events arrive whole and in the order posted (the 16-byte
 *     payload is {writer, sequence number, mix(writer, sequence)});
 *   - every user event has the name its writer opened
 *     (posix_trace_eventid_get_name on the stream or on the pre-recorded log).
 * The XRAT scenario adds: START first; POSIX_TRACE_STOP after the last user
 * event when posix_trace_shutdown ends a running stream, carrying the
 * controller's pid; FLUSH_START/FLUSH_STOP of the controller's
 * posix_trace_flush carry the controller's pid and the address of its call
 * (XSH 2.11.1, posix_trace_event_info structure: posix_pid and
 * posix_prog_address); timestamps never
 * decrease over the whole log; and an event's type is in the set of
 * posix_trace_eventset_fill(POSIX_TRACE_WOPID_EVENTS) exactly when its pid
 * is 0.
 *
 * Helpers: tests/helpers/wl_post, wl_server, wl_threads and wl_forkfirst (see
 * their first comments) from $PT_TEST_HELPERS; the command is
 * $PT_TEST_HELPERS/../../posixtrace (tests that need it, or make, say
 * SKIPPED when it is missing).  Every process a test starts leads its own
 * process group, which the test kills when it ends, also when it fails; the
 * runner (main) is a child subreaper and kills whatever a test killed by its
 * timeout left behind.  Every file lives in one temporary directory that is
 * removed at the end.
 */
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

static int scale = 1;

/* Check's CK_TIMEOUT_MULTIPLIER (set by make check for sanitizer builds,
 * where a process start costs several times more) stretches our own waits
 * too. */
static int slowdown = 1;

/* Bound on a workload's run that only catches a hang. */
#define TIMEOUT_S (45 * scale * slowdown)

/* ---- scratch directory and process groups -------------------------------- */

#define MAX_GROUPS 64

static char scratch_root[1024]; /* made by main, removed at the end */
static _Atomic int *groups;     /* process groups started by tests (shared) */
static char dir[1100];          /* this test's directory */
static pid_t test_pid;

static const char *in_dir(const char *name)
{
	static char paths[16][PATH_MAX];
	static int next;
	char *p = paths[next++ % 16];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void add_group(pid_t pgid)
{
	for (int i = 0; i < MAX_GROUPS; i++) {
		int zero = 0;
		if (atomic_compare_exchange_strong(&groups[i], &zero, (int)pgid))
			return;
	}
	kill(-pgid, SIGKILL);
	ck_abort_msg("more than %d process groups", MAX_GROUPS);
}

static void drop_group(pid_t pgid)
{
	for (int i = 0; i < MAX_GROUPS; i++) {
		int g = (int)pgid;
		if (atomic_compare_exchange_strong(&groups[i], &g, 0))
			return;
	}
}

static void kill_groups(void)
{
	for (int i = 0; i < MAX_GROUPS; i++) {
		int pg = atomic_exchange(&groups[i], 0);
		if (pg > 0) {
			kill(-pg, SIGKILL);
			waitpid(pg, NULL, 0); /* ECHILD at once if not ours */
		}
	}
}

static void test_cleanup(void)
{
	if (getpid() != test_pid)
		return; /* a forked child inherits the handler */
	kill_groups();
	pt_remove_tree(dir);
}

static void setup(void)
{
	test_pid = getpid();
	snprintf(dir, sizeof dir, "%s/test.XXXXXX", scratch_root);
	ck_assert_ptr_nonnull(mkdtemp(dir));
	atexit(test_cleanup);
}

/* The first bytes of a file, for messages. */
static const char *file_head(const char *path)
{
	static char buf[512];
	buf[0] = '\0';
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, buf, sizeof buf - 1);
		buf[n > 0 ? n : 0] = '\0';
		close(fd);
	}
	return buf;
}

static off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- programs ------------------------------------------------------------ */

/* The posixtrace command, or NULL (the test then says it skipped). */
static char *tool(const char *test)
{
	char name[128];
	snprintf(name, sizeof name, "t_workload: %s", test);
	return pt_tool_path(name);
}

static int have_program(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

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
static struct proc spawn(char *const argv[], const char *out, int held, const int *fds, int nfds)
{
	int ready[2], go[2];
	struct proc p = {-1, -1};
	ck_assert_int_le(nfds, 4);
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	fflush(NULL);
	p.pid = pt_fork();
	if (p.pid == 0) {
		int high[4];
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != test_pid)
			_exit(125);
		/* make run by `make check` must not join its job server */
		unsetenv("MAKEFLAGS");
		unsetenv("MFLAGS");
		unsetenv("MAKELEVEL");
		for (int i = 0; i < nfds; i++)
			high[i] = fcntl(fds[i], F_DUPFD_CLOEXEC, 100);
		for (int i = 0; i < nfds; i++)
			dup2(high[i], 10 + i);
		int o = open(out, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
		if (o < 0 || dup2(o, 1) < 0 || dup2(o, 2) < 0)
			_exit(126);
		char c = 'r';
		if (write(ready[1], &c, 1) != 1)
			_exit(126);
		if (held && read(go[0], &c, 1) != 1)
			_exit(126);
		execvp(argv[0], argv);
		_exit(127);
	}
	setpgid(p.pid, p.pid);
	add_group(p.pid);
	close(ready[1]);
	close(go[0]);
	char c;
	ck_assert_msg(read(ready[0], &c, 1) == 1, "%s did not start", argv[0]);
	close(ready[0]);
	if (held)
		p.go_fd = go[1];
	else
		close(go[1]);
	return p;
}

static void release(struct proc *p)
{
	ck_assert_int_eq(write(p->go_fd, "g", 1), 1);
	close(p->go_fd);
	p->go_fd = -1;
}

/* Waits up to timeout_s for the program to exit and returns its wait
 * status; whatever is left of its process group is killed. */
static int wait_exit(struct proc *p, int timeout_s, const char *what)
{
	int status = 0;
	for (long waited_ms = 0;; waited_ms += 10) {
		pid_t r = waitpid(p->pid, &status, WNOHANG);
		if (r == p->pid)
			break;
		ck_assert_msg(r == 0, "%s: waitpid: %s", what, strerror(errno));
		ck_assert_msg(waited_ms < timeout_s * 1000L, "%s: still running after %d s", what,
		              timeout_s);
		pt_sleep_ms(10);
	}
	kill(-p->pid, SIGKILL);
	drop_group(p->pid);
	return status;
}

static int exited_0(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Waits up to timeout_ms for a byte on fd. */
static int wait_byte(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char c;
	return poll(&pfd, 1, timeout_ms) == 1 && read(fd, &c, 1) == 1;
}

/* ---- streams ------------------------------------------------------------- */

/* Bytes a stream needs to hold `user` events of our payload and `sys`
 * system events, by the maximum sizes the library states. */
static size_t room_for(uint64_t user, uint64_t sys)
{
	trace_attr_t attr;
	size_t ev, sysev;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&attr, sizeof(struct pt_payload), &ev));
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&attr, &sysev));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return (size_t)user * ev + (size_t)sys * sysev;
}

/* System events a stream may hold besides the user events: START, STOP
 * and flushes. */
#define SYS_ROOM 64

static trace_id_t create_stream(pid_t pid, size_t size, int policy, int inherit, int logfd)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, size));
	if (policy)
		ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, policy));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, inherit ? POSIX_TRACE_INHERITED
	                                                          : POSIX_TRACE_CLOSE_FOR_CHILD));
	if (logfd >= 0)
		ck_assert_ok(posix_trace_create_withlog(pid, &attr, logfd, &trid));
	else
		ck_assert_ok(posix_trace_create(pid, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return trid;
}

static int open_log(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	return fd;
}

/* The program, traced by a stream with a log created by this process for
 * its pid before it runs (inherited by its children), started, and shut
 * down when the program has exited.  Returns the program's wait status. */
static int trace_program(char *const argv[], size_t size, const char *log, int timeout_s)
{
	struct proc p = spawn(argv, in_dir("program.out"), 1, NULL, 0);
	int logfd = open_log(log);
	trace_id_t trid = create_stream(p.pid, size, 0, 1, logfd);
	ck_assert_ok(posix_trace_start(trid));
	release(&p);
	int status = wait_exit(&p, timeout_s, argv[0]);
	ck_assert_ok(posix_trace_shutdown(trid));
	close(logfd);
	return status;
}

/* Starts `posixtrace record -o log --size size -- argv...`, its output in
 * record.out. */
static struct proc start_record(const char *tool_path, char *const argv[], size_t size,
                                const char *log, const int *fds, int nfds)
{
	char *args[48];
	static char sizebuf[32];
	int n = 0;
	snprintf(sizebuf, sizeof sizebuf, "%zu", size);
	args[n++] = (char *)tool_path;
	args[n++] = "record";
	args[n++] = "-o";
	args[n++] = (char *)log;
	args[n++] = "--size";
	args[n++] = sizebuf;
	args[n++] = "--";
	for (int i = 0; argv[i]; i++) {
		ck_assert_int_lt(n, 47);
		args[n++] = argv[i];
	}
	args[n] = NULL;
	unlink(in_dir("record.out"));
	return spawn(args, in_dir("record.out"), 0, fds, nfds);
}

/* Asserts that posixtrace record exited 0 (the program's own status). */
static void record_ended(int status, char *const argv[])
{
	char how[64];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(exited_0(status), "posixtrace record -- %s: %s; output: %s", argv[0], how,
	              file_head(in_dir("record.out")));
}

/* Runs the program under posixtrace record. */
static void record(const char *tool_path, char *const argv[], size_t size, const char *log,
                   int timeout_s)
{
	struct proc p = start_record(tool_path, argv, size, log, NULL, 0);
	record_ended(wait_exit(&p, timeout_s, "posixtrace record"), argv);
}

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

static size_t tally_size(uint32_t nwriters)
{
	return sizeof(struct tally) + nwriters * sizeof(struct writer_state);
}

static void note(struct tally *t, enum problem p, const char *fmt, ...)
{
	if (t->problems[p]++ == 0) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(t->first[p], sizeof t->first[p], fmt, ap);
		va_end(ap);
	}
}

/* Fills a tally in place (it may live in shared memory). */
static void tally_init(struct tally *t, const char *what, uint32_t nwriters,
                       const char *(*name_of)(uint32_t, uint32_t))
{
	memset(t, 0, tally_size(nwriters));
	snprintf(t->what, sizeof t->what, "%s", what);
	t->nwriters = nwriters;
	t->name_of = name_of;
	t->last_overflow_pos = -1;
	t->last_user_pos = -1;
	t->last_stop_pos = -1;
	t->first_id = 0;
	for (uint32_t i = 0; i < nwriters; i++)
		t->w[i].last_pos = -1;
	ck_assert_ok(posix_trace_eventset_fill(&t->wopid, POSIX_TRACE_WOPID_EVENTS));
}

static struct tally *tally_new(const char *what, uint32_t nwriters,
                               const char *(*name_of)(uint32_t, uint32_t))
{
	struct tally *t = malloc(tally_size(nwriters));
	ck_assert_ptr_nonnull(t);
	tally_init(t, what, nwriters, name_of);
	return t;
}

static int ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec || (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

static void tally_user(struct tally *t, const struct posix_trace_event_info *info,
                       const void *data, size_t len, const char *name)
{
	struct pt_payload p;
	t->user++;
	t->last_user_pos = t->pos;
	if (t->ctl_flush_state == 2)
		t->ctl_flush_state = 3;
	if (t->resume_pending) {
		note(t, P_RESUME, "event #%lld follows POSIX_TRACE_OVERFLOW with no RESUME before it",
		     (long long)t->pos);
		t->resume_pending = 0;
	}
	if (len != sizeof p || info->posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED) {
		note(t, P_TORN, "event #%lld (id %u, pid %d): %zu bytes of data, truncation %d",
		     (long long)t->pos, info->posix_event_id, (int)info->posix_pid, len,
		     info->posix_truncation_status);
		return;
	}
	memcpy(&p, data, sizeof p);
	if (p.writer >= t->nwriters || p.check != pt_mix(p.writer, p.seq)) {
		note(t, P_TORN, "event #%lld (id %u, pid %d): payload {writer %u, seq %u} is not one "
		     "the test posted", (long long)t->pos, info->posix_event_id,
		     (int)info->posix_pid, p.writer, p.seq);
		return;
	}
	struct writer_state *w = &t->w[p.writer];
	const char *want = t->name_of(p.writer, p.seq);
	if (strcmp(name, want) != 0)
		note(t, P_NAME, "writer %u event %u (id %u, pid %d) is named \"%s\", not \"%s\"",
		     p.writer, p.seq, info->posix_event_id, (int)info->posix_pid, name, want);
	if (w->count > 0 && (w->pid != info->posix_pid ||
	                     !pthread_equal(w->thread, info->posix_thread_id)))
		note(t, P_TORN, "writer %u event %u: pid %d, its earlier events pid %d (or another "
		     "thread)", p.writer, p.seq, (int)info->posix_pid, (int)w->pid);
	if (p.seq < w->next_seq) {
		note(t, P_ORDER, "writer %u: event %u read after event %u", p.writer, p.seq,
		     w->next_seq - 1);
		return;
	}
	if (p.seq > w->next_seq && t->last_overflow_pos <= w->last_pos)
		note(t, P_GAP, "writer %u: events %u to %u missing, no POSIX_TRACE_OVERFLOW between "
		     "its events around them", p.writer, w->next_seq, p.seq - 1);
	w->next_seq = p.seq + 1;
	w->last_pos = t->pos;
	w->count++;
	w->pid = info->posix_pid;
	w->thread = info->posix_thread_id;
}

static void tally_system(struct tally *t, const struct posix_trace_event_info *info,
                         const void *data, size_t len)
{
	trace_event_id_t id = info->posix_event_id;
	if (id <= POSIX_TRACE_ERROR)
		t->sys[id]++;
	switch (id) {
	case POSIX_TRACE_OVERFLOW:
		t->last_overflow_pos = t->pos;
		t->resume_pending = 1;
		break;
	case POSIX_TRACE_RESUME:
		t->resume_pending = 0;
		break;
	case POSIX_TRACE_STOP:
		t->last_stop_pos = t->pos;
		t->last_stop_pid = info->posix_pid;
		break;
	case POSIX_TRACE_FLUSH_START:
		if (t->controller && info->posix_pid == t->controller) {
			t->ctl_flush_start++;
			if (t->ctl_flush_state == 0)
				t->ctl_flush_state = 1;
		}
		break;
	case POSIX_TRACE_FLUSH_STOP:
		if (t->controller && info->posix_pid == t->controller) {
			t->ctl_flush_stop++;
			if (t->ctl_flush_state == 1)
				t->ctl_flush_state = 2;
		}
		break;
	case POSIX_TRACE_ERROR: {
		int err = 0;
		if (len >= sizeof err)
			memcpy(&err, data, sizeof err);
		note(t, P_ERROR, "POSIX_TRACE_ERROR (%s) at event #%lld", strerror(err),
		     (long long)t->pos);
		break;
	}
	default:
		break;
	}
}

/* One event, in read order.  name: what posix_trace_eventid_get_name gave
 * for a user event ("" if it failed). */
static void tally_event(struct tally *t, const struct posix_trace_event_info *info,
                        const void *data, size_t len, const char *name)
{
	trace_event_id_t id = info->posix_event_id;
	if (t->events++ == 0) {
		t->first_id = id;
		t->first_pid = info->posix_pid;
	}
	if (t->events > 1 && ts_before(&info->posix_timestamp, &t->last_ts))
		note(t, P_TS, "event #%lld (id %u, pid %d) at %lld.%09ld after one at %lld.%09ld",
		     (long long)t->pos, id, (int)info->posix_pid,
		     (long long)info->posix_timestamp.tv_sec, info->posix_timestamp.tv_nsec,
		     (long long)t->last_ts.tv_sec, t->last_ts.tv_nsec);
	t->last_ts = info->posix_timestamp;
	int member = 0;
	if (posix_trace_eventset_ismember(id, &t->wopid, &member) == 0 &&
	    (member != 0) != (info->posix_pid == 0))
		note(t, P_WOPID, "event #%lld: id %u %s the POSIX_TRACE_WOPID_EVENTS set but has "
		     "pid %d", (long long)t->pos, id, member ? "is in" : "is not in",
		     (int)info->posix_pid);
	if (t->controller && info->posix_pid == t->controller && id < POSIX_TRACE_UNNAMED_USEREVENT) {
		uintptr_t a = (uintptr_t)info->posix_prog_address;
		if (a < t->text_lo || a >= t->text_hi)
			note(t, P_ADDR, "event #%lld (id %u) of the controller has address %p, not in "
			     "its program text", (long long)t->pos, id, info->posix_prog_address);
	}
	if (id >= POSIX_TRACE_UNNAMED_USEREVENT)
		tally_user(t, info, data, len, name);
	else
		tally_system(t, info, data, len);
	t->pos++;
}

/* After the last event: what each writer posted (calls that returned) and
 * whether it was killed in a call (one more event may then be kept). */
static void tally_finish(struct tally *t, const uint64_t *posted, const uint8_t *killed)
{
	for (uint32_t i = 0; i < t->nwriters; i++) {
		struct writer_state *w = &t->w[i];
		uint64_t allowed = posted[i] + (killed && killed[i] ? 1 : 0);
		t->posted += posted[i];
		if (w->count > allowed)
			note(t, P_OVER, "writer %u: %llu events read, %llu posted", i,
			     (unsigned long long)w->count, (unsigned long long)posted[i]);
		else if (w->count > posted[i])
			t->kept_in_flight += w->count - posted[i];
		if (w->count < posted[i])
			t->short_writers++;
		if (w->next_seq < posted[i] && t->last_overflow_pos <= w->last_pos)
			note(t, P_GAP, "writer %u: events %u to %llu missing, no POSIX_TRACE_OVERFLOW "
			     "after its last event", i, w->next_seq,
			     (unsigned long long)posted[i] - 1);
	}
	snprintf(t->summary, sizeof t->summary,
	         "%s: posted %llu, received %llu (%llu of them in flight when killed), lost %llu; "
	         "%u writers, %llu with events missing; %llu OVERFLOW, %llu RESUME, %llu START, "
	         "%llu STOP, %llu FLUSH_START, %llu events read in all; %llu gaps unmarked",
	         t->what, (unsigned long long)t->posted, (unsigned long long)t->user,
	         (unsigned long long)t->kept_in_flight, (unsigned long long)t->lost, t->nwriters,
	         (unsigned long long)t->short_writers,
	         (unsigned long long)t->sys[POSIX_TRACE_OVERFLOW],
	         (unsigned long long)t->sys[POSIX_TRACE_RESUME],
	         (unsigned long long)t->sys[POSIX_TRACE_START],
	         (unsigned long long)t->sys[POSIX_TRACE_STOP],
	         (unsigned long long)t->sys[POSIX_TRACE_FLUSH_START], (unsigned long long)t->events,
	         (unsigned long long)t->problems[P_GAP]);
}

/* The workload's verdict: 0, or 1 with the reason in msg.  fits: the
 * events fit the stream, so none may be lost. */
static int tally_verdict(const struct tally *t, int fits, char *msg, size_t len)
{
	static const enum problem order[] = {P_ERROR, P_TORN, P_ORDER, P_OVER, P_NAME};
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++)
		if (t->problems[order[i]]) {
			snprintf(msg, len, "%s; %llu such problems, the first: %s", t->summary,
			         (unsigned long long)t->problems[order[i]], t->first[order[i]]);
			return 1;
		}
	/* lost counts every event the stream lost, system events too, so it
	 * may exceed what the writers lost: it must cover it */
	if (t->user + t->lost < t->posted + t->kept_in_flight) {
		snprintf(msg, len, "%s; received + lost < posted: events vanished uncounted",
		         t->summary);
		return 1;
	}
	if (fits && t->lost + t->short_writers > 0) {
		snprintf(msg, len, "%s; events lost although the stream had room for all of them",
		         t->summary);
		return 1;
	}
	if (t->problems[P_GAP] || t->problems[P_RESUME]) {
		enum problem p = t->problems[P_GAP] ? P_GAP : P_RESUME;
		snprintf(msg, len, "%s; loss not bracketed by OVERFLOW/RESUME: %s", t->summary,
		         t->first[p]);
		return 1;
	}
	return 0;
}

static void assert_workload(const struct tally *t, int fits)
{
	char msg[1200];
	int bad = tally_verdict(t, fits, msg, sizeof msg);
	if (!bad) /* the counts, for whoever reads the test log */
		fprintf(stderr, "t_workload: %s\n", t->summary);
	ck_assert_msg(!bad, "%s", msg);
}

/* ---- reading ------------------------------------------------------------- */

/* Names by id, asked once per id. */
struct names {
	char name[TRACE_USER_EVENT_MAX + POSIX_TRACE_UNNAMED_USEREVENT][TRACE_EVENT_NAME_MAX + 1];
	unsigned char known[TRACE_USER_EVENT_MAX + POSIX_TRACE_UNNAMED_USEREVENT];
};

static const char *name_of_id(struct names *n, trace_id_t trid, trace_event_id_t id)
{
	if (id >= sizeof n->known)
		return "";
	if (!n->known[id]) {
		if (posix_trace_eventid_get_name(trid, id, n->name[id]) != 0)
			n->name[id][0] = '\0';
		n->known[id] = 1;
	}
	return n->name[id];
}

/* Reads a whole log into t; returns 0 or an error number (no assertion:
 * the analyzer of the XRAT test is a separate process). */
static int read_log_into(const char *path, struct tally *t)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	trace_id_t trid;
	if (fd < 0)
		return errno;
	if ((err = posix_trace_open(fd, &trid)) != 0) {
		close(fd);
		return err;
	}
	struct names *names = calloc(1, sizeof *names);
	if (!names) {
		posix_trace_close(trid);
		close(fd);
		return ENOMEM;
	}
	for (;;) {
		struct posix_trace_event_info info;
		unsigned char data[256];
		size_t len = 0;
		int unavailable = 0;
		err = posix_trace_getnext_event(trid, &info, data, sizeof data, &len, &unavailable);
		if (err || unavailable)
			break;
		const char *name = info.posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT
		                       ? name_of_id(names, trid, info.posix_event_id)
		                       : "";
		tally_event(t, &info, data, len, name);
	}
	struct posix_trace_status_info st;
	if (!err && (err = posix_trace_get_status(trid, &st)) == 0)
		t->lost += st.posixtrace_lost_events;
	free(names);
	posix_trace_close(trid);
	close(fd);
	return err;
}

static void read_log(const char *path, struct tally *t)
{
	int err = read_log_into(path, t);
	ck_assert_msg(err == 0, "%s: reading the log %s: %s", t->what, path, strerror(err));
}

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

static void *live_reader_main(void *arg)
{
	struct live_reader *r = arg;
	int seen_stop = 0, idle = 0;
	for (;;) {
		struct posix_trace_event_info info;
		unsigned char data[256];
		size_t len = 0;
		int unavailable = 0;
		struct timespec deadline = pt_in_ms(200);
		int err = seen_stop ? posix_trace_trygetnext_event(r->trid, &info, data, sizeof data,
		                                                   &len, &unavailable)
		                    : posix_trace_timedgetnext_event(r->trid, &info, data, sizeof data,
		                                                     &len, &unavailable, &deadline);
		if (err == ETIMEDOUT || (err == 0 && unavailable)) {
			/* done once stopped and empty; a missing STOP shows in the counts */
			if (seen_stop || (atomic_load(&r->stopped) && ++idle > 10))
				break;
			continue;
		}
		if (err) {
			r->err = err;
			break;
		}
		idle = 0;
		int stop_data = -1;
		if (info.posix_event_id == POSIX_TRACE_STOP && len >= sizeof stop_data)
			memcpy(&stop_data, data, sizeof stop_data);
		if (stop_data == 0)
			seen_stop = 1; /* only live_reader_finish stops the stream */
		const char *name = info.posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT
		                       ? name_of_id(&r->names, r->trid, info.posix_event_id)
		                       : "";
		tally_event(r->t, &info, data, len, name);
	}
	return NULL;
}

static struct live_reader *live_reader_start(trace_id_t trid, struct tally *t)
{
	struct live_reader *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	r->trid = trid;
	r->t = t;
	ck_assert_int_eq(pthread_create(&r->thread, NULL, live_reader_main, r), 0);
	return r;
}

/* Stops the stream, lets the reader finish, and adds the lost count. */
static void live_reader_finish(struct live_reader *r)
{
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_stop(r->trid));
	atomic_store(&r->stopped, 1);
	pthread_join(r->thread, NULL);
	ck_assert_msg(r->err == 0, "%s: reading: %s", r->t->what, strerror(r->err));
	ck_assert_ok(posix_trace_get_status(r->trid, &st));
	r->t->lost += st.posixtrace_lost_events;
	free(r);
}

/* ---- expected names ------------------------------------------------------ */

static const char *loop_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "wl.loop.b" : "wl.loop.a";
}

static const char *job_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "wl.job.end" : "wl.job.begin";
}

static const char *request_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "req_end" : "req_begin";
}

static const char *thread_name(uint32_t w, uint32_t seq)
{
	(void)w, (void)seq;
	return "wl.thread";
}

static const char *forkfirst_name(uint32_t w, uint32_t seq)
{
	(void)seq;
	return w == 0 ? "wl.parent" : "wl.child";
}

static const char *xrat_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "my_second_event" : "my_first_event";
}

static uint64_t *posted_each(uint32_t nwriters, uint64_t count)
{
	uint64_t *p = calloc(nwriters, sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (uint32_t i = 0; i < nwriters; i++)
		p[i] = count;
	return p;
}

/* ---- a shell loop of short-lived instrumented processes ------------------ */

#define LOOP_PROCESSES (2000 * scale)
#define LOOP_EVENTS 3

/* /bin/sh running n processes one after the other, n events each. */
static void loop_script(char *buf, size_t len, int n, int events)
{
	snprintf(buf, len,
	         "i=0; while [ $i -lt %d ]; do '%s' -w $i -c %d -n wl.loop.a -n wl.loop.b || exit 1; "
	         "i=$((i+1)); done",
	         n, pt_helper_path("wl_post"), events);
}

static void check_loop_log(const char *what, const char *log, int n, int fits)
{
	struct tally *t = tally_new(what, (uint32_t)n, loop_name);
	read_log(log, t);
	uint64_t *posted = posted_each((uint32_t)n, LOOP_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, fits);
	free(posted);
	free(t);
}

START_TEST(shell_loop_of_2000_processes_through_record)
{
	char *pt = tool("shell_loop_of_2000_processes_through_record");
	if (!pt)
		return;
	char script[1024];
	loop_script(script, sizeof script, LOOP_PROCESSES, LOOP_EVENTS);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("loop.ptlog");
	record(pt, argv, room_for(LOOP_PROCESSES * LOOP_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	check_loop_log("shell loop, posixtrace record", log, LOOP_PROCESSES, 1);
}
END_TEST

START_TEST(shell_loop_of_2000_processes_under_system)
{
	/* The controller traces itself with inheritance, so the shell that
	 * system() starts and everything it runs are traced. */
	char script[1024];
	loop_script(script, sizeof script, LOOP_PROCESSES, LOOP_EVENTS);
	const char *log = in_dir("loop.ptlog");
	int logfd = open_log(log);
	trace_id_t trid = create_stream(0, room_for(LOOP_PROCESSES * LOOP_EVENTS, SYS_ROOM), 0, 1,
	                                logfd);
	ck_assert_ok(posix_trace_start(trid));
	int status = system(script);
	ck_assert_ok(posix_trace_shutdown(trid));
	close(logfd);
	ck_assert_msg(exited_0(status), "the loop failed: status 0x%x", status);
	check_loop_log("shell loop, library controller, system()", log, LOOP_PROCESSES, 1);
}
END_TEST

START_TEST(shell_loop_of_2000_processes_forked_and_execed)
{
	/* The controller creates the stream for the held /bin/sh's pid. */
	char script[1024];
	loop_script(script, sizeof script, LOOP_PROCESSES, LOOP_EVENTS);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("loop.ptlog");
	int status = trace_program(argv, room_for(LOOP_PROCESSES * LOOP_EVENTS, SYS_ROOM), log,
	                           TIMEOUT_S);
	ck_assert_msg(exited_0(status), "the loop failed: status 0x%x; output: %s", status,
	              file_head(in_dir("program.out")));
	check_loop_log("shell loop, library controller, fork+exec of /bin/sh", log,
	               LOOP_PROCESSES, 1);
}
END_TEST

START_TEST(shell_loop_with_a_small_stream_marks_every_loss)
{
	/* 16 KiB cannot hold 1,500 events: the keeper must drain the stream
	 * while the loop runs, and whatever it does not save must be counted
	 * and bracketed by OVERFLOW/RESUME in the log. */
	char *pt = tool("shell_loop_with_a_small_stream_marks_every_loss");
	if (!pt)
		return;
	char script[1024];
	loop_script(script, sizeof script, 500, LOOP_EVENTS);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("loop.ptlog");
	record(pt, argv, 16 * 1024, log, TIMEOUT_S);
	check_loop_log("shell loop, 16 KiB stream, posixtrace record", log, 500, 0);
}
END_TEST

/* ---- a build: make -j2 of 200 jobs, and a shell with & and wait ---------- */

#define JOBS (200 * scale)
#define JOB_EVENTS 5

static const char *write_makefile(void)
{
	const char *path = in_dir("Makefile");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "all:");
	for (int j = 0; j < JOBS; j++)
		fprintf(f, " job%d", j);
	fprintf(f, "\n.PHONY: all");
	for (int j = 0; j < JOBS; j++)
		fprintf(f, " job%d", j);
	fprintf(f, "\n");
	for (int j = 0; j < JOBS; j++)
		fprintf(f, "job%d:\n\t@'%s' -w %d -c %d -n wl.job.begin -n wl.job.end\n", j,
		        pt_helper_path("wl_post"), j, JOB_EVENTS);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* 20 rounds of 10 jobs started with & and waited for. */
static void background_script(char *buf, size_t len)
{
	snprintf(buf, len,
	         "r=0; while [ $r -lt %d ]; do j=0; while [ $j -lt 10 ]; do "
	         "'%s' -w $((r * 10 + j)) -c %d -n wl.job.begin -n wl.job.end & j=$((j+1)); done; "
	         "wait; r=$((r+1)); done",
	         JOBS / 10, pt_helper_path("wl_post"), JOB_EVENTS);
}

static void check_jobs_log(const char *what, const char *log)
{
	struct tally *t = tally_new(what, JOBS, job_name);
	read_log(log, t);
	uint64_t *posted = posted_each(JOBS, JOB_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}

static int make_missing(const char *test)
{
	if (have_program("make"))
		return 0;
	fprintf(stderr, "t_workload: %s: SKIPPED (no make)\n", test);
	return 1;
}

START_TEST(make_j2_of_200_jobs_through_record)
{
	char *pt = tool("make_j2_of_200_jobs_through_record");
	if (!pt || make_missing("make_j2_of_200_jobs_through_record"))
		return;
	char *argv[] = {"make", "-s", "-j2", "-f", (char *)write_makefile(), "all", NULL};
	const char *log = in_dir("make.ptlog");
	record(pt, argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	check_jobs_log("make -j2, posixtrace record", log);
}
END_TEST

START_TEST(make_j2_of_200_jobs_with_a_library_controller)
{
	if (make_missing("make_j2_of_200_jobs_with_a_library_controller"))
		return;
	char *argv[] = {"make", "-s", "-j2", "-f", (char *)write_makefile(), "all", NULL};
	const char *log = in_dir("make.ptlog");
	int status = trace_program(argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	ck_assert_msg(exited_0(status), "make failed: status 0x%x; output: %s", status,
	              file_head(in_dir("program.out")));
	check_jobs_log("make -j2, library controller", log);
}
END_TEST

START_TEST(shell_background_jobs_through_record)
{
	char *pt = tool("shell_background_jobs_through_record");
	if (!pt)
		return;
	char script[1024];
	background_script(script, sizeof script);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("bg.ptlog");
	record(pt, argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	check_jobs_log("sh with & and wait, posixtrace record", log);
}
END_TEST

START_TEST(shell_background_jobs_with_a_library_controller)
{
	char script[1024];
	background_script(script, sizeof script);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("bg.ptlog");
	int status = trace_program(argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	ck_assert_msg(exited_0(status), "the shell failed: status 0x%x", status);
	check_jobs_log("sh with & and wait, library controller", log);
}
END_TEST

/* ---- a pre-forking server ------------------------------------------------ */

#define SERVER_WORKERS 8
#define SERVER_REQUESTS (5000 * scale)
#define SERVER_KILLS 2

static char *server_argv[16];

static char **server_command(const char *report)
{
	static char w[16], r[16], k[16];
	snprintf(w, sizeof w, "%d", SERVER_WORKERS);
	snprintf(r, sizeof r, "%d", SERVER_REQUESTS);
	snprintf(k, sizeof k, "%d", SERVER_KILLS);
	char **a = server_argv;
	int n = 0;
	a[n++] = pt_helper_path("wl_server");
	a[n++] = "-w", a[n++] = w;
	a[n++] = "-r", a[n++] = r;
	a[n++] = "-k", a[n++] = k;
	a[n++] = "-o", a[n++] = (char *)report;
	a[n] = NULL;
	return a;
}

static size_t server_room(void)
{
	/* every request of every slot, a request a killed worker left half done
	 * (served again by its replacement), and its call in flight */
	return room_for((uint64_t)SERVER_WORKERS * SERVER_REQUESTS * 2 + 3 * SERVER_KILLS,
	                SYS_ROOM);
}

/* Reads the server's report: what each writer posted, who was killed. */
static uint32_t read_server_report(const char *path, uint64_t *posted, uint8_t *killed)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no server report %s", path);
	uint32_t n = 0, w;
	unsigned long long p;
	int k;
	while (fscanf(f, "writer %u posted %llu killed %d\n", &w, &p, &k) == 3) {
		ck_assert_uint_eq(w, n);
		ck_assert_uint_lt(n, 2 * SERVER_WORKERS);
		posted[n] = p;
		killed[n] = (uint8_t)k;
		n++;
	}
	fclose(f);
	ck_assert_uint_ge(n, SERVER_WORKERS);
	return n;
}

static void check_server_log(const char *what, const char *log, const char *report)
{
	uint64_t posted[2 * SERVER_WORKERS] = {0};
	uint8_t killed[2 * SERVER_WORKERS] = {0};
	uint32_t n = read_server_report(report, posted, killed);
	struct tally *t = tally_new(what, n, request_name);
	read_log(log, t);
	tally_finish(t, posted, killed);
	assert_workload(t, 1);
	free(t);
}

START_TEST(prefork_server_through_record)
{
	char *pt = tool("prefork_server_through_record");
	if (!pt)
		return;
	const char *log = in_dir("server.ptlog"), *report = in_dir("server.report");
	record(pt, server_command(report), server_room(), log, TIMEOUT_S);
	check_server_log("pre-forking server, posixtrace record", log, report);
}
END_TEST

START_TEST(prefork_server_with_a_library_controller)
{
	const char *log = in_dir("server.ptlog"), *report = in_dir("server.report");
	int status = trace_program(server_command(report), server_room(), log, TIMEOUT_S);
	ck_assert_msg(exited_0(status), "the server failed: status 0x%x; output: %s", status,
	              file_head(in_dir("program.out")));
	check_server_log("pre-forking server, library controller", log, report);
}
END_TEST

/* ---- threads ------------------------------------------------------------- */

#define CHURN_THREADS (2000 * scale)
#define CHURN_ALIVE 50
#define CHURN_EVENTS 20
#define ALIVE_THREADS 1000
#define ALIVE_EVENTS (60 * scale)

struct poster {
	trace_event_id_t id;
	uint32_t writer, count;
	pthread_barrier_t *created, *posted;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	if (p->created)
		pthread_barrier_wait(p->created);
	for (uint32_t k = 0; k < p->count; k++)
		pt_post_payload(p->id, p->writer, k);
	if (p->posted)
		pthread_barrier_wait(p->posted);
	return NULL;
}

static void start_poster(pthread_t *th, struct poster *p)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ck_assert_int_eq(pthread_create(th, &attr, poster_main, p), 0);
	pthread_attr_destroy(&attr);
}

/* A stream for this process, read by a thread while the test's own
 * threads write. */
static struct live_reader *self_traced(const char *what, uint32_t nwriters, size_t size,
                                       int policy, struct tally **t, trace_id_t *trid)
{
	*trid = create_stream(0, size, policy, 0, -1);
	*t = tally_new(what, nwriters, thread_name);
	ck_assert_ok(posix_trace_start(*trid));
	return live_reader_start(*trid, *t);
}

static void thread_churn(trace_event_id_t id, struct poster *posters, uint32_t threads,
                         uint32_t alive, uint32_t count)
{
	pthread_t th[CHURN_ALIVE];
	ck_assert_uint_le(alive, CHURN_ALIVE);
	for (uint32_t i = 0; i < threads; i++) {
		if (i >= alive)
			pthread_join(th[i % alive], NULL);
		posters[i] = (struct poster){id, i, count, NULL, NULL};
		start_poster(&th[i % alive], &posters[i]);
	}
	for (uint32_t i = threads > alive ? threads - alive : 0; i < threads; i++)
		pthread_join(th[i % alive], NULL);
}

START_TEST(churn_of_2000_threads_in_a_traced_process)
{
	struct poster *posters = calloc(CHURN_THREADS, sizeof *posters);
	struct tally *t;
	trace_id_t trid;
	ck_assert_ptr_nonnull(posters);
	struct live_reader *r = self_traced("2,000 short-lived threads, library reader",
	                                    CHURN_THREADS,
	                                    room_for(CHURN_THREADS * CHURN_EVENTS, SYS_ROOM), 0, &t,
	                                    &trid);
	thread_churn(pt_event_id("wl.thread"), posters, CHURN_THREADS, CHURN_ALIVE, CHURN_EVENTS);
	live_reader_finish(r);
	ck_assert_ok(posix_trace_shutdown(trid));
	uint64_t *posted = posted_each(CHURN_THREADS, CHURN_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(posters);
	free(t);
}
END_TEST

START_TEST(churn_of_2000_threads_through_record)
{
	char *pt = tool("churn_of_2000_threads_through_record");
	if (!pt)
		return;
	char n[16], p[16], c[16];
	snprintf(n, sizeof n, "%d", CHURN_THREADS);
	snprintf(p, sizeof p, "%d", CHURN_ALIVE);
	snprintf(c, sizeof c, "%d", CHURN_EVENTS);
	char *argv[] = {pt_helper_path("wl_threads"), "churn", "-n", n, "-p", p, "-c", c, NULL};
	const char *log = in_dir("churn.ptlog");
	record(pt, argv, room_for(CHURN_THREADS * CHURN_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	struct tally *t = tally_new("2,000 short-lived threads, posixtrace record", CHURN_THREADS,
	                            thread_name);
	read_log(log, t);
	uint64_t *posted = posted_each(CHURN_THREADS, CHURN_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}
END_TEST

START_TEST(churn_with_a_small_loop_stream_marks_every_loss)
{
	/* 64 KiB hold a fraction of 40,000 events: whatever the reader does
	 * not take in time is lost, and each gap must be counted and
	 * bracketed by OVERFLOW/RESUME (XSH 2.11). */
	struct poster *posters = calloc(CHURN_THREADS, sizeof *posters);
	struct tally *t;
	trace_id_t trid;
	ck_assert_ptr_nonnull(posters);
	struct live_reader *r = self_traced("2,000 threads, 64 KiB LOOP stream, library reader",
	                                    CHURN_THREADS, 64 * 1024, POSIX_TRACE_LOOP, &t, &trid);
	thread_churn(pt_event_id("wl.thread"), posters, CHURN_THREADS, CHURN_ALIVE, CHURN_EVENTS);
	live_reader_finish(r);
	ck_assert_ok(posix_trace_shutdown(trid));
	uint64_t *posted = posted_each(CHURN_THREADS, CHURN_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 0);
	free(posted);
	free(posters);
	free(t);
}
END_TEST

START_TEST(thousand_threads_alive_at_once_in_a_traced_process)
{
	static struct poster posters[ALIVE_THREADS];
	static pthread_t th[ALIVE_THREADS];
	pthread_barrier_t created, posted_all;
	struct tally *t;
	trace_id_t trid;
	trace_event_id_t id = pt_event_id("wl.thread");
	struct live_reader *r = self_traced("1,000 threads alive at once, library reader",
	                                    ALIVE_THREADS,
	                                    room_for(ALIVE_THREADS * ALIVE_EVENTS, SYS_ROOM), 0, &t,
	                                    &trid);
	pthread_barrier_init(&created, NULL, ALIVE_THREADS);
	pthread_barrier_init(&posted_all, NULL, ALIVE_THREADS);
	for (uint32_t i = 0; i < ALIVE_THREADS; i++) {
		posters[i] = (struct poster){id, i, ALIVE_EVENTS, &created, &posted_all};
		start_poster(&th[i], &posters[i]);
	}
	for (uint32_t i = 0; i < ALIVE_THREADS; i++)
		pthread_join(th[i], NULL);
	live_reader_finish(r);
	ck_assert_ok(posix_trace_shutdown(trid));
	uint64_t *posted = posted_each(ALIVE_THREADS, ALIVE_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}
END_TEST

START_TEST(thousand_threads_alive_at_once_through_record)
{
	char *pt = tool("thousand_threads_alive_at_once_through_record");
	if (!pt)
		return;
	char n[16], c[16];
	snprintf(n, sizeof n, "%d", ALIVE_THREADS);
	snprintf(c, sizeof c, "%d", ALIVE_EVENTS);
	char *argv[] = {pt_helper_path("wl_threads"), "alive", "-n", n, "-c", c, NULL};
	const char *log = in_dir("alive.ptlog");
	record(pt, argv, room_for(ALIVE_THREADS * ALIVE_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	struct tally *t = tally_new("1,000 threads alive at once, posixtrace record",
	                            ALIVE_THREADS, thread_name);
	read_log(log, t);
	uint64_t *posted = posted_each(ALIVE_THREADS, ALIVE_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}
END_TEST

/* ---- an idle traced process with 100 live threads ------------------------ */

#define IDLE_THREADS 100
#define IDLE_SECONDS (5 * scale)
#define IDLE_STREAM (4u << 20)      /* the default size, stated */
#define IDLE_GROWTH_MAX (1u << 20)  /* a few blocks at most */
#define IDLE_FLUSH_STARTS_MAX 100

/* Watches the log while the program idles: returns the largest growth
 * beyond base, and stops watching early once it is past the limit. */
static off_t watch_log_growth(struct proc *p, const char *log, off_t base, int *status)
{
	off_t growth = 0;
	for (int waited_ms = 0;; waited_ms += 50) {
		off_t size = file_size(log);
		if (size - base > growth)
			growth = size - base;
		if (growth >= (off_t)IDLE_GROWTH_MAX)
			return growth; /* the caller fails; cleanup kills the program */
		pid_t r = waitpid(p->pid, status, WNOHANG);
		if (r == p->pid) {
			kill(-p->pid, SIGKILL);
			drop_group(p->pid);
			return growth;
		}
		ck_assert_msg(waited_ms < (IDLE_SECONDS + 15) * 1000, "the idle program did not end");
		pt_sleep_ms(50);
	}
}

static void check_idle_log(const char *what, const char *log, off_t growth)
{
	struct tally *t = tally_new(what, IDLE_THREADS, thread_name);
	read_log(log, t);
	uint64_t *posted = posted_each(IDLE_THREADS, 1);
	tally_finish(t, posted, NULL);
	fprintf(stderr, "t_workload: %s: the log grew %lld bytes while %d threads idled\n", what,
	        (long long)growth, IDLE_THREADS);
	assert_workload(t, 1);
	ck_assert_msg(t->sys[POSIX_TRACE_FLUSH_START] < IDLE_FLUSH_STARTS_MAX,
	              "%s; %llu FLUSH_START for %d events: the keeper flushes in a loop (log grew "
	              "%lld bytes while idle)",
	              t->summary, (unsigned long long)t->sys[POSIX_TRACE_FLUSH_START],
	              IDLE_THREADS, (long long)growth);
	free(posted);
	free(t);
}

static char **idle_command(void)
{
	static char n[16], s[16];
	static char *argv[12];
	snprintf(n, sizeof n, "%d", IDLE_THREADS);
	snprintf(s, sizeof s, "%d", IDLE_SECONDS);
	int i = 0;
	argv[i++] = pt_helper_path("wl_threads");
	argv[i++] = "idle";
	argv[i++] = "-n", argv[i++] = n;
	argv[i++] = "-s", argv[i++] = s;
	argv[i++] = "-r", argv[i++] = "10"; /* the pipe below, as fd 10 */
	argv[i] = NULL;
	return argv;
}

START_TEST(idle_process_with_100_threads_through_record)
{
	char *pt = tool("idle_process_with_100_threads_through_record");
	if (!pt)
		return;
	int ready[2];
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	const char *log = in_dir("idle.ptlog");
	char **cmd = idle_command();
	struct proc p = start_record(pt, cmd, IDLE_STREAM, log, &ready[1], 1);
	close(ready[1]);
	ck_assert_msg(wait_byte(ready[0], 15000), "the threads did not post: %s",
	              file_head(in_dir("record.out")));
	pt_sleep_ms(200);
	off_t base = file_size(log);
	int status = 0;
	off_t growth = watch_log_growth(&p, log, base, &status);
	ck_assert_msg(growth < (off_t)IDLE_GROWTH_MAX,
	              "idle process, posixtrace record: the log grew by %lld bytes while 100 "
	              "threads that posted one event each idled (from %lld bytes)",
	              (long long)growth, (long long)base);
	record_ended(status, cmd);
	check_idle_log("idle process, posixtrace record", log, growth);
}
END_TEST

START_TEST(idle_process_with_100_threads_with_a_library_controller)
{
	int ready[2];
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	const char *log = in_dir("idle.ptlog");
	struct proc p = spawn(idle_command(), in_dir("program.out"), 1, &ready[1], 1);
	close(ready[1]);
	/* an appending log, as posixtrace record makes: its size shows what
	 * the keeper writes (a LOOP log would wrap around) */
	int logfd = open_log(log);
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, IDLE_STREAM));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	ck_assert_ok(posix_trace_create_withlog(p.pid, &attr, logfd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));
	release(&p);
	ck_assert_msg(wait_byte(ready[0], 15000), "the threads did not post");
	/* the first flush: everything posted so far goes to the log */
	ck_assert_ok(posix_trace_flush(trid));
	struct posix_trace_status_info st;
	for (int i = 0;; i++) {
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			break;
		ck_assert_msg(i < 500, "posix_trace_flush did not end within 5 s");
		pt_sleep_ms(10);
	}
	off_t base = file_size(log);
	int status = 0;
	off_t growth = watch_log_growth(&p, log, base, &status);
	ck_assert_msg(growth < (off_t)IDLE_GROWTH_MAX,
	              "idle process, library controller: the log grew by %lld bytes after the "
	              "first flush while 100 threads that posted one event each idled (from %lld)",
	              (long long)growth, (long long)base);
	ck_assert_msg(exited_0(status), "the idle program: status 0x%x", status);
	ck_assert_ok(posix_trace_shutdown(trid));
	close(logfd);
	check_idle_log("idle process, library controller", log, growth);
}
END_TEST

/* ---- fork as the first statement of main --------------------------------- */

#define FORK_RUNS (50 * scale)
#define FORK_CHILD_EVENTS 100

/* Runs one traced run per call of run(); counts the runs whose log is not
 * right and reports the first. */
static void check_fork_runs(const char *what, void (*run)(const char *log))
{
	char first[1400] = "";
	int bad = 0;
	for (int i = 0; i < FORK_RUNS; i++) {
		char name[32], msg[1200];
		snprintf(name, sizeof name, "fork%d.ptlog", i);
		const char *log = in_dir(name);
		run(log);
		struct tally *t = tally_new(what, 2, forkfirst_name);
		read_log(log, t);
		uint64_t posted[2] = {1, FORK_CHILD_EVENTS};
		tally_finish(t, posted, NULL);
		if (tally_verdict(t, 1, msg, sizeof msg)) {
			if (bad++ == 0)
				snprintf(first, sizeof first, "run %d: %s", i + 1, msg);
		}
		free(t);
		unlink(log);
	}
	ck_assert_msg(bad == 0, "%d of %d runs went wrong; %s", bad, FORK_RUNS, first);
}

static char **forkfirst_command(void)
{
	static char c[16];
	static char *argv[4];
	snprintf(c, sizeof c, "%d", FORK_CHILD_EVENTS);
	argv[0] = pt_helper_path("wl_forkfirst");
	argv[1] = c;
	argv[2] = "1";
	argv[3] = NULL;
	return argv;
}

static void forkfirst_record_run(const char *log)
{
	record(tool("fork_first_in_main_through_record"), forkfirst_command(),
	       room_for(FORK_CHILD_EVENTS + 1, SYS_ROOM), log, 20);
}

static void forkfirst_library_run(const char *log)
{
	int status = trace_program(forkfirst_command(), room_for(FORK_CHILD_EVENTS + 1, SYS_ROOM),
	                           log, 20);
	ck_assert_msg(exited_0(status), "wl_forkfirst: status 0x%x", status);
}

START_TEST(fork_first_in_main_through_record)
{
	if (!tool("fork_first_in_main_through_record"))
		return;
	check_fork_runs("fork first in main, posixtrace record", forkfirst_record_run);
}
END_TEST

START_TEST(fork_first_in_main_with_a_library_controller)
{
	check_fork_runs("fork first in main, library controller", forkfirst_library_run);
}
END_TEST

/* ---- XRAT B.2.11: controller, instrumented application, analyzer --------- */

#define XRAT_MAX_EVENTS 200000
#define XRAT_BEFORE_FLUSH 20000
#define XRAT_AFTER_FLUSH 500

/* This program's text (where its calls to the library are made). */
static void own_text(uintptr_t *lo, uintptr_t *hi)
{
	char exe[PATH_MAX], line[PATH_MAX + 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	*lo = UINTPTR_MAX;
	*hi = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;
		char perms[8], path[PATH_MAX];
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &a, &b, perms, path) == 4 &&
		    perms[2] == 'x' && strcmp(path, exe) == 0) {
			if (a < *lo)
				*lo = a;
			if (b > *hi)
				*hi = b;
		}
	}
	fclose(f);
	ck_assert_msg(*lo < *hi, "no text mapping of %s", exe);
}

static struct pt_progress *map_progress(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 4096), 0);
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ck_assert_ptr_ne(m, MAP_FAILED);
	return m;
}

static void wait_posted(struct pt_progress *pr, uint64_t n, const char *when)
{
	for (int i = 0; atomic_load(&pr->posted) < n; i++) {
		ck_assert_msg(i < 10000, "the application posted %llu events %s, not %llu within 10 s",
		              (unsigned long long)atomic_load(&pr->posted), when,
		              (unsigned long long)n);
		ck_assert_msg(!atomic_load(&pr->done), "the application ended early");
		pt_sleep_ms(1);
	}
}

START_TEST(xrat_controller_application_analyzer)
{
	/* process 2: the instrumented application (XRAT "Application
	 * Instrumentation"), waiting on a pipe after opening its names */
	const char *progress_path = in_dir("progress"), *log = in_dir("xrat.ptlog");
	struct pt_progress *pr = map_progress(progress_path);
	int go[2], hold[2];
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
	char count[16];
	snprintf(count, sizeof count, "%d", XRAT_MAX_EVENTS);
	/* a steady stream of events (one every microsecond or so), so that some are
	 * posted while the flush runs */
	char *argv[] = {pt_helper_path("wl_post"), "-w", "0", "-c", count, "-n", "my_first_event", "-n",
	                "my_second_event", "-s", "1000", "-g", "10", "-H", "11", "-m",
	                (char *)progress_path, NULL};
	int fds[2] = {go[0], hold[0]};
	struct proc app = spawn(argv, in_dir("app.out"), 0, fds, 2);
	close(go[0]);
	close(hold[0]);
	for (int i = 0; !atomic_load(&pr->ready); i++) {
		ck_assert_msg(i < 1000, "the application did not start: %s", file_head(in_dir("app.out")));
		pt_sleep_ms(10);
	}

	/* process 1 (this one): the trace controller, XRAT "Trace Operation
	 * Control" with a log */
	int logfd = open_log(log);
	trace_id_t trid = create_stream(app.pid, room_for(XRAT_MAX_EVENTS, SYS_ROOM), 0, 0, logfd);
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	wait_posted(pr, XRAT_BEFORE_FLUSH, "before the flush");
	ck_assert_ok(posix_trace_flush(trid));
	struct posix_trace_status_info st;
	for (int i = 0;; i++) {
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			break;
		ck_assert_msg(i < 5000, "posix_trace_flush did not end within 5 s");
		pt_sleep_ms(1);
	}
	wait_posted(pr, atomic_load(&pr->posted) + XRAT_AFTER_FLUSH, "after the flush");
	atomic_store(&pr->stop, 1);
	for (int i = 0; !atomic_load(&pr->done); i++) {
		ck_assert_msg(i < 1000, "the application did not stop posting");
		pt_sleep_ms(10);
	}
	uint64_t posted = atomic_load(&pr->posted);
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_ok(posix_trace_shutdown(trid)); /* while running */
	close(logfd);
	ck_assert_int_eq(write(hold[1], "x", 1), 1);
	int status = wait_exit(&app, 10, "the application");
	ck_assert_msg(exited_0(status), "the application: status 0x%x", status);

	/* process 3: the trace analyzer (XRAT "Trace Analyzer") reads the log;
	 * what it finds goes back through shared memory */
	struct tally *t = mmap(NULL, tally_size(1), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                       -1, 0);
	ck_assert_ptr_ne(t, MAP_FAILED);
	tally_init(t, "XRAT three processes", 1, xrat_name);
	t->controller = getpid();
	own_text(&t->text_lo, &t->text_hi);
	t->read_error = -1;
	fflush(NULL);
	pid_t analyzer = pt_fork();
	if (analyzer == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(20);
		t->read_error = read_log_into(log, t);
		_exit(0);
	}
	int astatus;
	ck_assert_int_eq(waitpid(analyzer, &astatus, 0), analyzer);
	ck_assert_msg(exited_0(astatus) && t->read_error == 0,
	              "the analyzer could not read the log: status 0x%x, error %d", astatus,
	              t->read_error);
	tally_finish(t, &posted, NULL);

	/* every event of the application, named, in order, none lost */
	assert_workload(t, 1);

	/* the rest is gathered so that one run shows every rule broken */
	char bad[2400] = "";
	size_t n = 0;
#define XRAT_RULE(cond, ...)                                                                  \
	do {                                                                                   \
		if (!(cond) && n < sizeof bad)                                                 \
			n += (size_t)snprintf(bad + n, sizeof bad - n, "\n  - " __VA_ARGS__); \
	} while (0)
	pid_t me = getpid();
	XRAT_RULE(t->first_id == POSIX_TRACE_START && t->first_pid == me,
	          "the first event is id %u of pid %d, not START of the controller", t->first_id,
	          (int)t->first_pid);
	/* posix_trace_shutdown ended the running window */
	XRAT_RULE(t->sys[POSIX_TRACE_STOP] == 1 && t->last_stop_pos > t->last_user_pos,
	          "the running window is not closed by one STOP after the last user event "
	          "(%llu STOP, the last at #%lld, the last user event at #%lld)",
	          (unsigned long long)t->sys[POSIX_TRACE_STOP], (long long)t->last_stop_pos,
	          (long long)t->last_user_pos);
	XRAT_RULE(t->sys[POSIX_TRACE_STOP] == 0 || t->last_stop_pid == me,
	          "the shutdown's STOP carries pid %d, not the controller's", (int)t->last_stop_pid);
	/* the explicit flush, made while the application posted */
	XRAT_RULE(t->ctl_flush_state == 3,
	          "no FLUSH_START then FLUSH_STOP with the controller's pid followed by events of "
	          "the application (%llu FLUSH_START and %llu FLUSH_STOP carry its pid)",
	          (unsigned long long)t->ctl_flush_start, (unsigned long long)t->ctl_flush_stop);
	XRAT_RULE(t->problems[P_ADDR] == 0, "%s", t->first[P_ADDR]);
	XRAT_RULE(t->problems[P_TS] == 0, "timestamps decrease %llu times, the first: %s",
	          (unsigned long long)t->problems[P_TS], t->first[P_TS]);
	XRAT_RULE(t->problems[P_WOPID] == 0, "%llu events break the WOPID rule, the first: %s",
	          (unsigned long long)t->problems[P_WOPID], t->first[P_WOPID]);
#undef XRAT_RULE
	ck_assert_msg(n == 0, "%s (controller pid %d); broken:%s", t->summary, (int)me, bad);
	munmap(t, tally_size(1));
	munmap(pr, 4096);
}
END_TEST

/* ---- the runner ---------------------------------------------------------- */

/* Kills and reaps whatever is left of the tests' processes: registered
 * groups, and orphans reparented to this subreaper. */
static void sweep(void)
{
	kill_groups();
	DIR *d = opendir("/proc");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		pid_t pid = atoi(e->d_name), ppid = 0;
		if (pid > 0 && pt_proc_stat(pid, NULL, 0, NULL, &ppid) == 0 && ppid == getpid())
			kill(pid, SIGKILL);
	}
	if (d)
		closedir(d);
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

static TCase *long_tcase(Suite *s, const char *name)
{
	TCase *tc = pt_tcase_fixture(s, name, setup, NULL);
	tcase_set_timeout(tc, 55);
	return tc;
}

int main(void)
{
	const char *tmp = getenv("TMPDIR"), *sc = getenv("PT_WORKLOAD_SCALE");
	const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
	if (sc && atoi(sc) > 1)
		scale = atoi(sc);
	if (mult && atoi(mult) > 1)
		slowdown = atoi(mult);
	snprintf(scratch_root, sizeof scratch_root, "%s/pt-workload.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(scratch_root)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	groups = mmap(NULL, MAX_GROUPS * sizeof *groups, PROT_READ | PROT_WRITE,
	              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (groups == MAP_FAILED)
		return EXIT_FAILURE;
	prctl(PR_SET_CHILD_SUBREAPER, 1);

	Suite *s = suite_create("workload");
	TCase *tc = long_tcase(s, "shell_loop");
	tcase_add_test(tc, shell_loop_of_2000_processes_through_record);
	tcase_add_test(tc, shell_loop_of_2000_processes_under_system);
	tcase_add_test(tc, shell_loop_of_2000_processes_forked_and_execed);
	tcase_add_test(tc, shell_loop_with_a_small_stream_marks_every_loss);

	tc = long_tcase(s, "build");
	tcase_add_test(tc, make_j2_of_200_jobs_through_record);
	tcase_add_test(tc, make_j2_of_200_jobs_with_a_library_controller);
	tcase_add_test(tc, shell_background_jobs_through_record);
	tcase_add_test(tc, shell_background_jobs_with_a_library_controller);

	tc = long_tcase(s, "prefork_server");
	tcase_add_test(tc, prefork_server_through_record);
	tcase_add_test(tc, prefork_server_with_a_library_controller);

	tc = long_tcase(s, "threads");
	tcase_add_test(tc, churn_of_2000_threads_in_a_traced_process);
	tcase_add_test(tc, churn_of_2000_threads_through_record);
	tcase_add_test(tc, churn_with_a_small_loop_stream_marks_every_loss);
	tcase_add_test(tc, thousand_threads_alive_at_once_in_a_traced_process);
	tcase_add_test(tc, thousand_threads_alive_at_once_through_record);

	tc = long_tcase(s, "idle");
	tcase_add_test(tc, idle_process_with_100_threads_through_record);
	tcase_add_test(tc, idle_process_with_100_threads_with_a_library_controller);

	tc = long_tcase(s, "fork_first");
	tcase_add_test(tc, fork_first_in_main_through_record);
	tcase_add_test(tc, fork_first_in_main_with_a_library_controller);

	tc = long_tcase(s, "xrat");
	tcase_add_test(tc, xrat_controller_application_analyzer);

	int rc = pt_run(s);
	sweep();
	pt_remove_tree(scratch_root);
	return rc;
}
