/* SPDX-License-Identifier: MIT */
/*
 * What the workload tests share (declared in tests/workload.h), compiled
 * into t_workload and t_wlthreads.
 */
#include "workload.h"

/* ---- scale: PT_WORKLOAD_SCALE multiplies the counts (tests/soak/) -------- */

int scale = 1;

/* Check's CK_TIMEOUT_MULTIPLIER (set by make check for sanitizer builds,
 * where a process start costs several times more) stretches our own waits
 * too. */
int slowdown = 1;

/* ---- scratch directory and process groups -------------------------------- */

#define MAX_GROUPS 64

static char scratch_root[1024]; /* made by workload_run, removed at the end */
static _Atomic int *groups;     /* process groups started by tests (shared) */
static char dir[1100];          /* this test's directory */
static pid_t test_pid;

const char *in_dir(const char *name)
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

void drop_group(pid_t pgid)
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
const char *file_head(const char *path)
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

off_t file_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? st.st_size : -1;
}

/* ---- programs ------------------------------------------------------------ */

/* The posixtrace command, or NULL (the test then says it skipped). */
char *tool(const char *test)
{
	char name[128];
	snprintf(name, sizeof name, "%s: %s", program_invocation_short_name, test);
	return pt_tool_path(name);
}

int have_program(const char *name)
{
	char cmd[256];
	snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", name);
	return system(cmd) == 0;
}

/* Starts argv (argv[0] a path, or a name looked up in PATH) as the leader
 * of a new process group, with stdout and stderr appended to `out`.
 * fds[i] becomes descriptor 10 + i of the program.  A held program waits
 * for release() before exec, so that a stream can be created for its pid
 * first, as posixtrace record does. */
struct proc spawn(char *const argv[], const char *out, int held, const int *fds, int nfds)
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

void release(struct proc *p)
{
	ck_assert_int_eq(write(p->go_fd, "g", 1), 1);
	close(p->go_fd);
	p->go_fd = -1;
}

/* Waits up to timeout_s for the program to exit and returns its wait
 * status; whatever is left of its process group is killed. */
int wait_exit(struct proc *p, int timeout_s, const char *what)
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

int exited_0(int status)
{
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Waits up to timeout_ms for a byte on fd. */
int wait_byte(int fd, int timeout_ms)
{
	struct pollfd pfd = {.fd = fd, .events = POLLIN};
	char c;
	return poll(&pfd, 1, timeout_ms) == 1 && read(fd, &c, 1) == 1;
}

/* ---- streams ------------------------------------------------------------- */

/* Bytes a stream needs to hold `user` events of our payload and `sys`
 * system events, by the maximum sizes the library states. */
size_t room_for(uint64_t user, uint64_t sys)
{
	trace_attr_t attr;
	size_t ev, sysev;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&attr, sizeof(struct pt_payload), &ev));
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&attr, &sysev));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return (size_t)user * ev + (size_t)sys * sysev;
}

trace_id_t create_stream(pid_t pid, size_t size, int policy, int inherit, int logfd)
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

int open_log(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	return fd;
}

/* The program, traced by a stream with a log created by this process for
 * its pid before it runs (inherited by its children), started, and shut
 * down when the program has exited.  Returns the program's wait status. */
int trace_program(char *const argv[], size_t size, const char *log, int timeout_s)
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
struct proc start_record(const char *tool_path, char *const argv[], size_t size,
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
void record_ended(int status, char *const argv[])
{
	char how[64];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(exited_0(status), "posixtrace record -- %s: %s; output: %s", argv[0], how,
	              file_head(in_dir("record.out")));
}

/* Runs the program under posixtrace record. */
void record(const char *tool_path, char *const argv[], size_t size, const char *log,
            int timeout_s)
{
	struct proc p = start_record(tool_path, argv, size, log, NULL, 0);
	record_ended(wait_exit(&p, timeout_s, "posixtrace record"), argv);
}

size_t tally_size(uint32_t nwriters)
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
void tally_init(struct tally *t, const char *what, uint32_t nwriters,
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

struct tally *tally_new(const char *what, uint32_t nwriters,
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
void tally_finish(struct tally *t, const uint64_t *posted, const uint8_t *killed)
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
int tally_verdict(const struct tally *t, int fits, char *msg, size_t len)
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

void assert_workload(const struct tally *t, int fits)
{
	char msg[1200];
	int bad = tally_verdict(t, fits, msg, sizeof msg);
	if (!bad) /* the counts, for whoever reads the test log */
		fprintf(stderr, "%s: %s\n", program_invocation_short_name, t->summary);
	ck_assert_msg(!bad, "%s", msg);
}

/* ---- reading ------------------------------------------------------------- */

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
int read_log_into(const char *path, struct tally *t)
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

void read_log(const char *path, struct tally *t)
{
	int err = read_log_into(path, t);
	ck_assert_msg(err == 0, "%s: reading the log %s: %s", t->what, path, strerror(err));
}

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

struct live_reader *live_reader_start(trace_id_t trid, struct tally *t)
{
	struct live_reader *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	r->trid = trid;
	r->t = t;
	ck_assert_int_eq(pthread_create(&r->thread, NULL, live_reader_main, r), 0);
	return r;
}

/* Stops the stream, lets the reader finish, and adds the lost count. */
void live_reader_finish(struct live_reader *r)
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

const char *loop_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "wl.loop.b" : "wl.loop.a";
}

const char *job_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "wl.job.end" : "wl.job.begin";
}

const char *request_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "req_end" : "req_begin";
}

const char *thread_name(uint32_t w, uint32_t seq)
{
	(void)w, (void)seq;
	return "wl.thread";
}

const char *forkfirst_name(uint32_t w, uint32_t seq)
{
	(void)seq;
	return w == 0 ? "wl.parent" : "wl.child";
}

const char *xrat_name(uint32_t w, uint32_t seq)
{
	(void)w;
	return seq % 2 ? "my_second_event" : "my_first_event";
}

uint64_t *posted_each(uint32_t nwriters, uint64_t count)
{
	uint64_t *p = calloc(nwriters, sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (uint32_t i = 0; i < nwriters; i++)
		p[i] = count;
	return p;
}

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

TCase *long_tcase(Suite *s, const char *name)
{
	TCase *tc = pt_tcase_fixture(s, name, setup, NULL);
	tcase_set_timeout(tc, 55);
	return tc;
}

int workload_run(Suite *s, const char *prefix)
{
	const char *tmp = getenv("TMPDIR"), *sc = getenv("PT_WORKLOAD_SCALE");
	const char *mult = getenv("CK_TIMEOUT_MULTIPLIER");
	if (sc && atoi(sc) > 1)
		scale = atoi(sc);
	if (mult && atoi(mult) > 1)
		slowdown = atoi(mult);
	snprintf(scratch_root, sizeof scratch_root, "%s/%s.XXXXXX", tmp ? tmp : "/tmp", prefix);
	if (!mkdtemp(scratch_root)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	groups = mmap(NULL, MAX_GROUPS * sizeof *groups, PROT_READ | PROT_WRITE,
	              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (groups == MAP_FAILED)
		return EXIT_FAILURE;
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	int rc = pt_run(s);
	sweep();
	pt_remove_tree(scratch_root);
	return rc;
}
