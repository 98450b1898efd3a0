/* SPDX-License-Identifier: MIT */
/*
 * The keeper and its controller against a traced process that writes
 * anything into the stream it shares, and against the controller's own
 * end (exit, _exit, SIGKILL).  Each scenario runs in a child of the test
 * (the "program"), with a file size limit on what it writes and a time
 * limit; the test process is a child subreaper, so keepers (which call
 * setsid) come back to it when their controller dies, and the teardown
 * kills every process the test started, keepers included.
 */
#include "harness.h"
#include <linux/filter.h>
#include <linux/futex.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include "../src/layout.h"

#define MIB (1024L * 1024L)
#define SCENARIO_MS 12000 /* a scenario that takes longer hangs */

static const char *dir;
static char outside_log[64]; /* a log written outside dir (tmpfs there) */

static void setup(void)
{
	pt_children_setup();
	dir = pt_scratch_dir("pt-keeper");
	pt_subreaper_setup();
}

static void teardown(void)
{
	pt_kill_descendants();
	pt_remove_tree(dir);
	if (outside_log[0])
		unlink(outside_log);
}

static int new_log(const char *name)
{
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static void limit_file_size(rlim_t bytes)
{
	struct rlimit rl = {bytes, bytes};
	setrlimit(RLIMIT_FSIZE, &rl);
	signal(SIGXFSZ, SIG_IGN);
}

/* Runs fn in a child (the program) and returns its exit status; a child
 * that does not end within ms is killed and fails the test. */
static int run_program(int (*fn)(void *), void *arg, int ms)
{
	pid_t pid = pt_fork();
	if (pid == 0)
		_exit(fn(arg));
	int status = 0;
	for (int waited = 0; waitpid(pid, &status, WNOHANG) != pid; waited += 5) {
		if (waited >= ms) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			pt_kill_descendants(); /* its keepers came back to this process */
			ck_abort_msg("the program hangs (more than %d ms)", ms);
		}
		usleep(5000);
	}
	return status;
}

static void expect_exit0(int status)
{
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the program: %s", how);
}

static int64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The keeper whose parent is `parent` (it names itself soon after its
 * fork), or 0 after 2 s without exactly one. */
static pid_t keeper_of(pid_t parent)
{
	pid_t keeper = 0;
	for (int i = 0; i < 1000; i++) {
		if (pt_procs_named(parent, "posixtrace-keep", &keeper) == 1)
			return keeper;
		usleep(2000);
	}
	return 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;
	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

/* The header of a stream this process maps (found by its magic). */
static struct pt_stream_hdr *find_stream_hdr(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	struct pt_stream_hdr *found = NULL;
	while (f && !found && fgets(line, sizeof line, f)) {
		unsigned long lo;
		if (!strstr(line, "/memfd:posixtrace-stream") || sscanf(line, "%lx-", &lo) != 1)
			continue;
		struct pt_stream_hdr *h = (void *)lo;
		if (h->magic == PT_STREAM_MAGIC)
			found = h;
	}
	if (f)
		fclose(f);
	return found;
}

/* What a traced process may write into the stream: the words the keeper
 * used to trust, and the filter of user events (the system events stay
 * unfiltered, so that flushes the target provokes would show in the log). */
static void scribble_hints(struct pt_stream_hdr *h)
{
	atomic_store(&h->held, UINT64_MAX / 2);
	atomic_store(&h->keeper_kicked, 1);
	atomic_fetch_add(&h->keeper_wake, 1);
	syscall(SYS_futex, &h->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	for (unsigned i = 1; i < PT_NEVENT_IDS / 64; i++)
		atomic_store(&h->filter[i], ~0ull);
}

static trace_id_t create_with_log(pid_t pid, int fd, int policy, size_t size)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	if (policy)
		ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, policy));
	if (size)
		ck_assert_ok(posix_trace_attr_setstreamsize(&attr, size));
	ck_assert_ok(posix_trace_create_withlog(pid, &attr, fd, &trid));
	posix_trace_attr_destroy(&attr);
	return trid;
}

/* Counts of a log's events by type, read back with posix_trace_open. */
struct log_counts {
	long events, flush_start, flush_stop, error, error_ebadmsg;
	int closed;
	uint64_t lost, damaged;
};

static struct log_counts read_log(int fd)
{
	struct log_counts c = {0};
	trace_id_t log;
	lseek(fd, 0, SEEK_SET);
	ck_assert_ok(posix_trace_open(fd, &log));
	struct posix_trace_event_info info;
	unsigned char data[4096];
	size_t len;
	int unavailable = 0;
	while (posix_trace_getnext_event(log, &info, data, sizeof data, &len, &unavailable) == 0 &&
	       !unavailable) {
		c.events++;
		c.flush_start += info.posix_event_id == POSIX_TRACE_FLUSH_START;
		c.flush_stop += info.posix_event_id == POSIX_TRACE_FLUSH_STOP;
		if (info.posix_event_id == POSIX_TRACE_ERROR) {
			int err = 0;
			memcpy(&err, data, len < sizeof err ? len : sizeof err);
			c.error++;
			c.error_ebadmsg += err == EBADMSG;
		}
	}
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(log, &li));
	c.closed = li.posixtrace_closed;
	c.damaged = li.posixtrace_damaged_blocks;
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(log, &st));
	c.lost = st.posixtrace_lost_events;
	ck_assert_ok(posix_trace_close(log));
	return c;
}

static off_t file_size(int fd)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	return st.st_size;
}

/* ---- item 1: no pidfd_open ----------------------------------------------- */

static int deny_pidfd_open(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_pidfd_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {sizeof f / sizeof f[0], f};
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 &&
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
}

static int without_pidfd(void *arg)
{
	int fd = *(int *)arg;
	trace_id_t trid;
	STEP(2, deny_pidfd_open());
	int fds = count_fds();
	STEP(3, posix_trace_create_withlog(0, NULL, fd, &trid) == ENOSYS);
	STEP(4, posix_trace_create(getppid(), NULL, &trid) == ENOSYS);
	STEP(5, posix_trace_create_withlog(getppid(), NULL, fd, &trid) == ENOSYS);
	STEP(6, count_fds() == fds);
	STEP(7, pt_procs_named(getpid(), "posixtrace-keep", NULL) == 0);
	/* a stream without a keeper needs no pidfd */
	STEP(8, posix_trace_create(0, NULL, &trid) == 0 && posix_trace_shutdown(trid) == 0);
	return 0;
}

/* posix_trace_create, posix_trace_create_withlog: without pidfd_open
 * (Linux < 5.3, or a seccomp filter) creation that needs a keeper or
 * another process fails with ENOSYS (an additional error, XSH 2.3), leaks
 * no descriptor and leaves no keeper, instead of a keeper whose death
 * cannot be seen (posix_trace_clear hung on it). */
START_TEST(no_pidfd_open_is_enosys)
{
	int fd = new_log("nopidfd.log");
	int status = run_program(without_pidfd, &fd, SCENARIO_MS);
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "failed at step: %s", how);
}
END_TEST

/* ---- item 2: a burst of flushes ------------------------------------------ */

static int flush_burst(void *arg)
{
	int fd = *(int *)arg;
	limit_file_size(64 * MIB);
	trace_id_t trid = create_with_log(0, fd, 0, 0);
	trace_event_id_t id;
	STEP(2, posix_trace_eventid_open("keeper.burst", &id) == 0);
	STEP(3, posix_trace_start(trid) == 0);
	for (uint32_t i = 0; i < 1000; i++)
		posix_trace_event(id, &i, sizeof i);
	int64_t t0 = mono_ms();
	for (int i = 0; i < 20000; i++)
		STEP(4, posix_trace_flush(trid) == 0);
	int64_t took = mono_ms() - t0;
	printf("t_keeper: 20000 posix_trace_flush calls took %lld ms\n", (long long)took);
	fflush(stdout);
	STEP(5, took < 1000);
	STEP(6, keeper_of(getpid()) > 0);
	/* posix_stream_flush_status: flushing until the last request is done */
	struct posix_trace_status_info st;
	int i;
	for (i = 0; i < 500; i++) {
		STEP(7, posix_trace_get_status(trid, &st) == 0);
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			break;
		STEP(8, st.posix_stream_flush_status == POSIX_TRACE_FLUSHING);
		pt_sleep_ms(10);
	}
	STEP(9, i < 500);
	if (st.posix_stream_flush_error)
		fprintf(stderr, "t_keeper: flush error %d after the burst\n", st.posix_stream_flush_error);
	STEP(11, st.posix_stream_flush_error == 0);
	STEP(10, posix_trace_shutdown(trid) == 0);
	return 0;
}

/* posix_trace_flush: 20,000 calls in a burst return within a second (the
 * flush is started, not waited for) and leave exactly one keeper: a full
 * command socket with a live keeper means flushes are already pending, and
 * this one joins them; posix_stream_flush_status (posix_trace_get_status)
 * says FLUSHING until the last request is carried out. */
START_TEST(flush_burst_never_blocks)
{
	int fd = new_log("burst.log");
	int status = run_program(flush_burst, &fd, SCENARIO_MS);
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "failed at step: %s", how);
	struct log_counts c = read_log(fd);
	ck_assert_int_eq(c.closed, 1);
	ck_assert_int_ge(c.flush_start, 1);
}
END_TEST

/* ---- item 3: a keeper alive but stuck ------------------------------------ */

static int stuck_keeper(void *arg)
{
	int fd = *(int *)arg;
	limit_file_size(64 * MIB);
	trace_id_t trid = create_with_log(0, fd, 0, 0);
	pid_t keeper = keeper_of(getpid());
	STEP(2, keeper > 0);
	STEP(3, posix_trace_start(trid) == 0);
	STEP(4, kill(keeper, SIGSTOP) == 0);
	int64_t t0 = mono_ms();
	STEP(5, posix_trace_clear(trid) == 0); /* its page allows EINVAL only */
	int64_t clear_ms = mono_ms() - t0;
	/* the stuck keeper was replaced: stop the new one too */
	pid_t second = 0;
	for (int i = 0; i < 500; i++) {
		pid_t k = 0;
		if (pt_procs_named(getpid(), "posixtrace-keep", &k) == 1 && k != keeper) {
			second = k;
			break;
		}
		pt_sleep_ms(2);
	}
	STEP(6, second > 0);
	STEP(7, kill(second, SIGSTOP) == 0);
	t0 = mono_ms();
	int err = posix_trace_shutdown(trid);
	int64_t shutdown_ms = mono_ms() - t0;
	printf("t_keeper: stuck keeper: clear %lld ms, shutdown %lld ms (%s)\n", (long long)clear_ms,
	       (long long)shutdown_ms, strerror(err));
	fflush(stdout);
	STEP(8, clear_ms < 2500 && shutdown_ms < 2500);
	STEP(9, err == ETIMEDOUT);
	/* killed and reaped: no keeper, not even a zombie */
	STEP(10, pt_procs_named(getpid(), "posixtrace-keep", NULL) == 0);
	return 0;
}

/* posix_trace_clear and posix_trace_shutdown return within the bound (1 s
 * plus stream-min-size at 100 MB/s) when the keeper is alive but stuck
 * (here: stopped): clear replaces it and returns 0 (its RETURN VALUE
 * lists EINVAL only); shutdown kills it (SIGKILL through its pidfd),
 * reaps it and returns ETIMEDOUT (an additional error, XSH 2.3). */
START_TEST(stuck_keeper_bounds_clear_and_shutdown)
{
	int fd = new_log("stuck.log");
	int status = run_program(stuck_keeper, &fd, SCENARIO_MS);
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "failed at step: %s", how);
}
END_TEST

/* ---- item 4: the hints the target writes --------------------------------- */

static atomic_int scribbling;

static void *scribbler(void *arg)
{
	struct pt_stream_hdr *h = arg;
	while (atomic_load(&scribbling)) {
		atomic_store(&h->held, UINT64_MAX / 2);
		atomic_store(&h->keeper_kicked, 1);
		atomic_fetch_add(&h->keeper_wake, 1);
		syscall(SYS_futex, &h->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	}
	return NULL;
}

static long keeper_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	char *p = strrchr(buf, ')');
	long utime = 0, stime = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &utime,
	                 &stime) != 2)
		return -1;
	return utime + stime;
}

static int hint_scribbler(void *arg)
{
	int fd = *(int *)arg;
	limit_file_size(64 * MIB);
	trace_id_t trid = create_with_log(0, fd, POSIX_TRACE_FLUSH, 0);
	trace_event_id_t id;
	STEP(2, posix_trace_eventid_open("keeper.hint", &id) == 0);
	STEP(3, posix_trace_start(trid) == 0);
	uint32_t v = 1;
	posix_trace_event(id, &v, sizeof v);
	struct pt_stream_hdr *h = find_stream_hdr();
	STEP(4, h != NULL);
	pid_t keeper = keeper_of(getpid());
	STEP(5, keeper > 0);
	long cpu0 = keeper_cpu_ticks(keeper);
	pthread_t t;
	atomic_store(&scribbling, 1);
	STEP(6, pthread_create(&t, NULL, scribbler, h) == 0);
	pt_sleep_ms(2000);
	atomic_store(&scribbling, 0);
	pthread_join(t, NULL);
	long cpu = keeper_cpu_ticks(keeper) - cpu0;
	printf("t_keeper: keeper CPU over 2 s of scribbled hints: %ld ticks of %ld/s\n", cpu,
	       sysconf(_SC_CLK_TCK));
	fflush(stdout);
	STEP(7, cpu >= 0 && cpu < sysconf(_SC_CLK_TCK) / 2); /* it never spins */
	atomic_store(&h->held, 0);
	atomic_store(&h->keeper_kicked, 0);
	STEP(8, posix_trace_shutdown(trid) == 0);
	return 0;
}

/* stream-full-policy POSIX_TRACE_FLUSH (posix_trace_attr_setstreamfullpolicy):
 * the keeper flushes when it finds events itself, at a rate set by what it
 * drained, never because the target wrote the held count or the kick word:
 * 2 s of those scribbles give at most 40 POSIX_TRACE_FLUSH_START, a small
 * log, and a keeper that does not spin. */
START_TEST(scribbled_hints_do_not_make_flushes)
{
	int fd = new_log("hints.log");
	expect_exit0(run_program(hint_scribbler, &fd, SCENARIO_MS));
	off_t size = file_size(fd);
	ck_assert_msg(size < 1 * MIB, "the log grew to %lld bytes", (long long)size);
	struct log_counts c = read_log(fd);
	printf("t_keeper: scribbled hints: %ld FLUSH_START, log %lld bytes\n", c.flush_start,
	       (long long)size);
	ck_assert_int_le(c.flush_start, 40);
	ck_assert_int_eq(c.closed, 1);
}
END_TEST

/* ---- item 5: the filter the target writes -------------------------------- */

static int filter_scribbler(void *arg)
{
	int fd = *(int *)arg;
	limit_file_size(64 * MIB);
	trace_id_t trid = create_with_log(0, fd, 0, 0);
	trace_event_id_t id;
	STEP(2, posix_trace_eventid_open("keeper.filter", &id) == 0);
	STEP(3, posix_trace_start(trid) == 0);
	struct pt_stream_hdr *h = find_stream_hdr();
	STEP(4, h != NULL);
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		atomic_store(&h->filter[i], ~0ull);
	trace_event_set_t set;
	STEP(5, posix_trace_get_filter(trid, &set) == 0);
	int member = 1;
	STEP(6, posix_trace_eventset_ismember(POSIX_TRACE_ERROR, &set, &member) == 0 && !member);
	pid_t keeper = keeper_of(getpid());
	STEP(7, keeper > 0);
	int pidfd = (int)syscall(SYS_pidfd_open, keeper, 0);
	STEP(8, pidfd >= 0 && kill(keeper, SIGKILL) == 0);
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	STEP(9, poll(&p, 1, 5000) == 1);
	STEP(10, posix_trace_flush(trid) == EIO); /* the keeper's death: ERROR (EIO) */
	STEP(11, posix_trace_flush(trid) == 0);   /* FLUSH_START, FLUSH_STOP */
	STEP(12, posix_trace_shutdown(trid) == 0);
	return 0;
}

/* posix_trace_set_filter, posix_trace_get_filter: the controller's filter,
 * not the copy in the stream that a traced process can write, decides which
 * system events are recorded: with every bit of the stream's filter words
 * set by the target, the log still gets the replaced keeper's
 * POSIX_TRACE_ERROR and the flush's POSIX_TRACE_FLUSH_START/FLUSH_STOP, and
 * posix_trace_get_filter returns the empty set the controller set. */
START_TEST(scribbled_filter_does_not_hide_system_events)
{
	int fd = new_log("filter.log");
	int status = run_program(filter_scribbler, &fd, SCENARIO_MS);
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "failed at step: %s", how);
	struct log_counts c = read_log(fd);
	ck_assert_int_ge(c.error, 1);
	ck_assert_int_ge(c.flush_start, 1);
	ck_assert_int_ge(c.flush_stop, 1);
}
END_TEST

/* ---- item 6: a channel that is someone else's socket ---------------------- */

#define TARGET_UID 54321
#define SERVER_UID 54322

struct server_count {
	atomic_int listening, messages, descriptors;
};

static void server_main(struct server_count *count, const struct sockaddr_un *addr,
                        socklen_t alen)
{
	if (setresgid(SERVER_UID, SERVER_UID, SERVER_UID) != 0 ||
	    setresuid(SERVER_UID, SERVER_UID, SERVER_UID) != 0)
		_exit(3);
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (s < 0 || bind(s, (const struct sockaddr *)addr, alen) != 0 || listen(s, 4) != 0)
		_exit(4);
	atomic_store(&count->listening, 1);
	for (;;) {
		int c = accept(s, NULL, NULL);
		if (c < 0)
			continue;
		for (;;) {
			char buf[256];
			union {
				struct cmsghdr h;
				char b[CMSG_SPACE(16 * sizeof(int))];
			} u;
			struct iovec iov = {buf, sizeof buf};
			struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.b,
			                    .msg_controllen = sizeof u.b};
			ssize_t n = recvmsg(c, &mh, 0);
			if (n <= 0)
				break;
			atomic_fetch_add(&count->messages, 1);
			for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
				if (cm->cmsg_type == SCM_RIGHTS)
					atomic_fetch_add(&count->descriptors, 1);
		}
		close(c);
	}
}

/* The target: its control block's channel names a socket connected to
 * the server instead of its own channel. */
static void target_main(const struct sockaddr_un *addr, socklen_t alen, int ready)
{
	if (setresgid(TARGET_UID, TARGET_UID, TARGET_UID) != 0 ||
	    setresuid(TARGET_UID, TARGET_UID, TARGET_UID) != 0)
		_exit(3);
	trace_event_id_t id;
	posix_trace_eventid_open("keeper.target", &id); /* the library is in use */
	/* Its block as the library mapped it: the descriptor is a token of a
	 * file made while the process was root, which it cannot open now. */
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	struct pt_pcb *pcb = NULL;
	unsigned long start;
	while (maps && !pcb && fgets(line, sizeof line, maps))
		if (strstr(line, "/memfd:posixtrace-pcb") && sscanf(line, "%lx-", &start) == 1)
			pcb = (struct pt_pcb *)start;
	if (maps)
		fclose(maps);
	if (!pcb)
		_exit(5);
	int s = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	struct stat st;
	if (s < 0 || connect(s, (const struct sockaddr *)addr, alen) != 0 ||
	    dup2(s, pcb->channel_tx.fd) != pcb->channel_tx.fd || fstat(s, &st) != 0)
		_exit(6);
	pcb->channel_tx.ino = st.st_ino;
	if (write(ready, "r", 1) != 1)
		_exit(7);
	for (;;)
		pause();
}

/* posix_trace_create (ERRORS: EPERM): root's controller uses a channel
 * pulled out of a target only if it is an AF_UNIX SOCK_SEQPACKET socket
 * whose peer is the receiving end the target's block names: a target of
 * another user that names, as its channel, a socket connected to a third
 * user's server gets EPERM, and the server receives nothing (no message,
 * no stream descriptor sent with root's credentials). */
START_TEST(channel_to_a_third_party_is_refused)
{
	if (geteuid() != 0) {
		printf("t_keeper: SKIPPED channel_to_a_third_party_is_refused: not root\n");
		return;
	}
	struct server_count *count = mmap(NULL, sizeof *count, PROT_READ | PROT_WRITE,
	                                  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(count, MAP_FAILED);
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	int len = snprintf(addr.sun_path + 1, sizeof addr.sun_path - 1, "pt-keeper-%d", (int)getpid());
	socklen_t alen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
	pid_t server = pt_fork();
	if (server == 0)
		server_main(count, &addr, alen);
	for (int i = 0; i < 500 && !atomic_load(&count->listening); i++)
		pt_sleep_ms(2);
	ck_assert_int_eq(atomic_load(&count->listening), 1);
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t target = pt_fork();
	if (target == 0) {
		close(ready[0]);
		target_main(&addr, alen, ready[1]);
	}
	close(ready[1]);
	char c;
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	trace_id_t trid;
	int err = posix_trace_create(target, NULL, &trid);
	if (err == 0)
		posix_trace_shutdown(trid);
	pt_sleep_ms(300);
	ck_assert_int_eq(atomic_load(&count->messages), 0);
	ck_assert_int_eq(atomic_load(&count->descriptors), 0);
	ck_assert_err(err, EPERM);
}
END_TEST

/* ---- item 7: the controller killed while the target scribbles ------------ */

struct pipes {
	int ready[2]; /* the target says it maps the stream */
};

static void scribbling_target(int ready)
{
	trace_event_id_t id;
	posix_trace_eventid_open("keeper.scribbler", &id);
	struct pt_stream_hdr *h = NULL;
	for (int i = 0; i < 5000 && !h; i++) {
		uint32_t v = (uint32_t)i;
		posix_trace_event(id, &v, sizeof v); /* takes the offer */
		h = find_stream_hdr();
		usleep(1000);
	}
	if (!h)
		_exit(5);
	if (write(ready, "r", 1) != 1)
		_exit(6);
	int64_t end = mono_ms() + 8000;
	/* No event from here on: a dead stream would be unmapped under the
	 * scribbles. */
	while (mono_ms() < end)
		scribble_hints(h);
	_exit(0);
}

/* The end of a stream whose controller went away (posix_trace_shutdown's
 * "as if"): a controller killed with SIGKILL while its target (another
 * process) scribbles the stream's hints and filter leaves a keeper that
 * drains once, finishes the log and exits (here within 5 s), and the log
 * stays small (under a 16 MiB file size limit) before and after. */
START_TEST(keeper_of_killed_controller_ends)
{
	int fd = new_log("killed.log");
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t controller = pt_fork();
	if (controller == 0) {
		limit_file_size(16 * MIB);
		pid_t target = fork();
		if (target == 0)
			scribbling_target(ready[1]);
		trace_id_t trid = create_with_log(target, fd, POSIX_TRACE_FLUSH, 0);
		if (posix_trace_start(trid) != 0)
			_exit(2);
		for (;;)
			pause();
	}
	close(ready[1]);
	char c;
	struct pollfd p = {.fd = ready[0], .events = POLLIN};
	ck_assert_msg(poll(&p, 1, 8000) == 1 && read(ready[0], &c, 1) == 1,
	              "the target did not join the stream");
	pid_t keeper = keeper_of(controller);
	ck_assert_int_gt(keeper, 0);
	int pidfd = (int)syscall(SYS_pidfd_open, keeper, 0);
	ck_assert_int_ge(pidfd, 0);
	pt_sleep_ms(500);
	kill(controller, SIGKILL);
	waitpid(controller, NULL, 0);
	int64_t t0 = mono_ms();
	p = (struct pollfd){.fd = pidfd, .events = POLLIN};
	int ended = poll(&p, 1, 5000) == 1;
	printf("t_keeper: keeper of a killed controller: %s after %lld ms, log %lld bytes\n",
	       ended ? "ended" : "still running", (long long)(mono_ms() - t0),
	       (long long)file_size(fd));
	ck_assert_msg(ended, "the keeper still runs 5 s after its controller was killed");
	ck_assert_int_lt(file_size(fd), 4 * MIB);
	struct log_counts lc = read_log(fd);
	ck_assert_int_eq(lc.closed, 1);
}
END_TEST

/* ---- item 8: a complete log at exit() ------------------------------------- */

enum end_how { END_EXIT, END__EXIT, END_KILLED };

struct seq_payload {
	uint32_t worker, seq;
};

static atomic_int posting;

static void *worker(void *arg)
{
	trace_event_id_t id;
	uint32_t w = (uint32_t)(uintptr_t)arg;
	if (posix_trace_eventid_open("keeper.seq", &id) != 0)
		return NULL;
	for (uint32_t seq = 0; atomic_load(&posting); seq++) {
		struct seq_payload pl = {w, seq};
		posix_trace_event(id, &pl, sizeof pl);
		if (seq % 2000 == 1999)
			usleep(500);
	}
	return NULL;
}

#define WORKERS 3

static void program_that_ends(int fd, enum end_how how, int ready)
{
	limit_file_size(256 * MIB);
	trace_id_t trid;
	if (posix_trace_create_withlog(0, NULL, fd, &trid) != 0 || posix_trace_start(trid) != 0)
		_exit(2);
	atomic_store(&posting, 1);
	pthread_t t[WORKERS];
	for (uintptr_t i = 0; i < WORKERS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	pt_sleep_ms(60);
	if (how == END_EXIT)
		exit(0);
	if (how == END__EXIT)
		_exit(0);
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

/* Reads the log: every worker's sequence must have no gap unless the
 * log counts lost events; the number of events missing in gaps, -1 for a
 * gap not covered by the lost count. */
static long check_sequences(int fd, struct log_counts *out)
{
	trace_id_t log;
	lseek(fd, 0, SEEK_SET);
	ck_assert_ok(posix_trace_open(fd, &log));
	int64_t next[WORKERS] = {0};
	long missing = 0;
	struct posix_trace_event_info info;
	unsigned char data[256];
	size_t len;
	int unavailable = 0;
	memset(out, 0, sizeof *out);
	while (posix_trace_getnext_event(log, &info, data, sizeof data, &len, &unavailable) == 0 &&
	       !unavailable) {
		out->events++;
		if (info.posix_event_id == POSIX_TRACE_ERROR) {
			int err = 0;
			memcpy(&err, data, len < sizeof err ? len : sizeof err);
			out->error++;
			out->error_ebadmsg += err == EBADMSG;
		}
		if (info.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT || len != sizeof(struct seq_payload))
			continue;
		struct seq_payload pl;
		memcpy(&pl, data, sizeof pl);
		if (pl.worker >= WORKERS)
			continue;
		if ((int64_t)pl.seq > next[pl.worker])
			missing += (long)(pl.seq - next[pl.worker]);
		next[pl.worker] = (int64_t)pl.seq + 1;
	}
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(log, &li));
	out->closed = li.posixtrace_closed;
	out->damaged = li.posixtrace_damaged_blocks;
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(log, &st));
	out->lost = st.posixtrace_lost_events;
	ck_assert_ok(posix_trace_close(log));
	return (uint64_t)missing > out->lost ? -1 : missing;
}

/* Waits (up to ms) until this process has no child left: once the program
 * is reaped, its keeper is the only one (a keeper comes back to the test
 * when its controller dies).  Not by name: a keeper just forked still
 * bears the test's name until it renames itself. */
static int keepers_gone(int ms)
{
	for (int waited = 0; waited < ms; waited += 5) {
		pid_t p;
		while ((p = waitpid(-1, NULL, WNOHANG)) > 0)
			;
		if (p < 0 && errno == ECHILD)
			return 1;
		usleep(5000);
	}
	return 0;
}

static void one_end(enum end_how how, int run, long *events)
{
	char name[64];
	snprintf(name, sizeof name, "end-%d-%d.log", (int)how, run);
	int fd = new_log(name);
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t prog = pt_fork();
	if (prog == 0)
		program_that_ends(fd, how, ready[1]);
	close(ready[1]);
	if (how == END_KILLED) {
		char c;
		ck_assert_int_eq(read(ready[0], &c, 1), 1);
		kill(prog, SIGKILL);
	}
	close(ready[0]);
	int status;
	ck_assert_int_eq(waitpid(prog, &status, 0), prog);
	struct log_counts c;
	long missing = check_sequences(fd, &c);
	/* Read right after waitpid: complete after exit(); otherwise cut short
	 * at worst, never damaged. */
	ck_assert_msg(c.damaged == 0 && c.error_ebadmsg == 0, "run %d: a damaged log", run);
	if (how == END_EXIT) {
		ck_assert_msg(c.closed == 1, "run %d: the log is not complete when exit() is over", run);
		ck_assert_msg(missing >= 0, "run %d: events missing and not counted lost", run);
	}
	ck_assert_msg(keepers_gone(5000), "run %d: the keeper did not end", run);
	missing = check_sequences(fd, &c);
	ck_assert_msg(c.closed == 1 && c.damaged == 0,
	              "run %d (end %d): the finished log is not complete (closed %d, %llu damaged "
	              "blocks, %ld events)", run, (int)how, (int)c.closed,
	              (unsigned long long)c.damaged, c.events);
	ck_assert_msg(missing >= 0, "run %d: events missing and not counted lost", run);
	*events += c.events;
	close(fd);
	char path[128];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	unlink(path);
}

static void ends(enum end_how how, int runs, const char *what)
{
	long events = 0;
	int64_t t0 = mono_ms();
	for (int run = 0; run < runs; run++)
		one_end(how, run, &events);
	printf("t_keeper: %s: %d runs, complete logs without gaps, %ld events in all, %lld ms\n",
	       what, runs, events, (long long)(mono_ms() - t0));
	fflush(stdout);
}

/* posix_trace_create_withlog: a program that is its own controller and
 * calls exit() while worker threads post leaves a complete log (closed,
 * no gap in any worker's sequence that is not counted lost) by the time
 * its parent's waitpid returns: exit() waits for the keeper to finish. */
START_TEST(log_complete_at_exit)
{
	ends(END_EXIT, 50, "exit()");
}
END_TEST

/* The same after _exit() and SIGKILL: the keeper still writes every event
 * the stream held; a reader that comes before it ends sees a log cut short,
 * never damaged; the finished log has no gap that is not counted lost. */
START_TEST(log_complete_after__exit_and_kill)
{
	ends(END__EXIT, 10, "_exit()");
	ends(END_KILLED, 10, "SIGKILL");
}
END_TEST

/* A program that ends at once after its first events: its keeper may not
 * have begun to run when the controller is gone. */
static void program_ending_at_once(int fd, enum end_how how, int ready)
{
	trace_id_t trid;
	trace_event_id_t id;
	if (posix_trace_create_withlog(0, NULL, fd, &trid) != 0 || posix_trace_start(trid) != 0 ||
	    posix_trace_eventid_open("keeper.seq", &id) != 0)
		_exit(2);
	for (uint32_t seq = 0; seq < 50; seq++) {
		struct seq_payload pl = {0, seq};
		posix_trace_event(id, &pl, sizeof pl);
	}
	if (how == END__EXIT)
		_exit(0);
	if (write(ready, "r", 1) != 1)
		_exit(3);
	for (;;)
		pause();
}

static void end_at_once(enum end_how how, int run)
{
	int fd = new_log("at-once.log");
	int ready[2];
	ck_assert_int_eq(pipe(ready), 0);
	pid_t prog = pt_fork();
	if (prog == 0)
		program_ending_at_once(fd, how, ready[1]);
	close(ready[1]);
	char c;
	if (how == END_KILLED && read(ready[0], &c, 1) == 1)
		kill(prog, SIGKILL);
	close(ready[0]);
	ck_assert_int_eq(waitpid(prog, NULL, 0), prog);
	ck_assert_msg(keepers_gone(5000), "run %d: the keeper did not end", run);
	struct log_counts counts;
	long missing = check_sequences(fd, &counts);
	ck_assert_msg(counts.closed == 1 && counts.damaged == 0 && missing == 0 &&
	                  counts.events >= 50,
	              "run %d (end %d): the log is not complete (closed %d, %llu damaged blocks, "
	              "%ld events, %ld missing)", run, (int)how, counts.closed,
	              (unsigned long long)counts.damaged, counts.events, missing);
	close(fd);
	char path[128];
	snprintf(path, sizeof path, "%s/at-once.log", dir);
	unlink(path);
}

/* posix_trace_create: a stream not shut down is shut down as if
 * posix_trace_shutdown had been called, every time: 40 programs that
 * _exit() right after their 50 events, 40 killed right after them, each
 * log complete with its 50 events once its keeper has ended (before the
 * keeper waited for its controller only after the log's writer was set
 * up, 0 of 20 such logs held an event after _exit(), 10 of 20 after
 * SIGKILL). */
START_TEST(log_complete_when_controller_ends_at_once)
{
	for (int run = 0; run < 40; run++) {
		end_at_once(END__EXIT, run);
		end_at_once(END_KILLED, run);
	}
}
END_TEST

/* ---- the output queues of one controller's keepers ------------------------
 * (security, fourth round, item 9: each keeper's queue of buffers was
 * bounded, 256 MiB, but three streams of one user held 843 MB.)  Four
 * FLUSH streams of 16 MiB (each queue's own bound: 128 MiB) log to pipes
 * nobody reads, so the disk, here a pipe, is slower than any writer;
 * writers post as fast as they can for a few seconds.  The anonymous
 * memory of the four keepers together stays under the budget their
 * controller's keepers share (PT_QUEUE_BUDGET, 256 MiB, docs/SECURITY.md)
 * plus what a keeper holds besides its queue (a few MiB). */

#define QUEUE_STREAMS 4
#define QUEUE_BUDGET_MIB 256
#define KEEPER_OVERHEAD_MIB 16
/* Under a sanitizer RssAnon holds the sanitizer's shadow of the buffers
 * too, which grows as they are reused (ThreadSanitizer: 674 to 979 MiB
 * for the 256 MiB): there the run checks the budget's code for races and
 * the keepers' ends, not the memory. */
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define MEMORY_CHECKED 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define MEMORY_CHECKED 0
#endif
#endif
#ifndef MEMORY_CHECKED
#define MEMORY_CHECKED 1
#endif

struct queue_writer {
	trace_id_t trid;
	trace_event_id_t id;
	_Atomic int *stop;
};

static void *queue_writer_main(void *p)
{
	struct queue_writer *w = p;
	static char data[1000];
	while (!atomic_load(w->stop))
		posix_trace_event(w->id, data, sizeof data);
	return NULL;
}

/* The anonymous memory (RssAnon, KiB) of this process's keepers together. */
static long keepers_anon_kib(void)
{
	DIR *d = opendir("/proc");
	long total = 0;
	for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
		char path[300], buf[4096];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/status", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		const char *ppid = strstr(buf, "\nPPid:"), *anon = strstr(buf, "\nRssAnon:");
		if (strncmp(buf, "Name:\tposixtrace-keep\n", 22) != 0 || !ppid || !anon ||
		    atoi(ppid + 6) != (int)getpid())
			continue;
		total += atol(anon + 9);
	}
	if (d)
		closedir(d);
	return total;
}

START_TEST(output_queues_share_a_budget)
{
	trace_id_t trid[QUEUE_STREAMS];
	int pipes[QUEUE_STREAMS][2];
	pthread_t th[QUEUE_STREAMS];
	struct queue_writer w[QUEUE_STREAMS];
	_Atomic int stop = 0;
	trace_attr_t attr;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setstreamsize(&attr, 16 * MIB), 0);
	ck_assert_int_eq(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH), 0);
	ck_assert_int_eq(posix_trace_attr_setmaxdatasize(&attr, 1024), 0);
	/* A pipe is no ring: the log is appended to. */
	ck_assert_int_eq(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND), 0);
	trace_event_id_t id;
	for (int i = 0; i < QUEUE_STREAMS; i++) {
		ck_assert_int_eq(pipe2(pipes[i], O_CLOEXEC), 0);
		ck_assert_int_eq(posix_trace_create_withlog(0, &attr, pipes[i][1], &trid[i]), 0);
		close(pipes[i][1]);
		ck_assert_int_eq(posix_trace_start(trid[i]), 0);
	}
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posix_trace_eventid_open("queue.fill", &id), 0);
	for (int i = 0; i < QUEUE_STREAMS; i++) {
		w[i] = (struct queue_writer){trid[i], id, &stop};
		ck_assert_int_eq(pthread_create(&th[i], NULL, queue_writer_main, &w[i]), 0);
	}
	long most = 0, bound = (QUEUE_BUDGET_MIB + QUEUE_STREAMS * KEEPER_OVERHEAD_MIB) * 1024L;
	for (int t = 0; t < 60 && (most <= bound || !MEMORY_CHECKED); t++) {
		long now = keepers_anon_kib();
		if (now > most)
			most = now;
		pt_sleep_ms(100);
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < QUEUE_STREAMS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	/* Nobody will read: the keepers' writes fail (EPIPE) and they end. */
	for (int i = 0; i < QUEUE_STREAMS; i++)
		close(pipes[i][0]);
	for (int i = 0; i < QUEUE_STREAMS; i++) {
		int err = posix_trace_shutdown(trid[i]);
		/* The pipe's reader is gone: the log's error, or none. */
		ck_assert_msg(err == 0 || err == EPIPE, "shutdown: %s", strerror(err));
	}
	fprintf(stderr, "output_queues_share_a_budget: %d keepers held at most %ld MiB (bound %ld%s)\n",
	        QUEUE_STREAMS, most / 1024, bound / 1024,
	        MEMORY_CHECKED ? "" : ", not checked under a sanitizer: RssAnon holds its shadow");
	ck_assert_msg(most <= bound || !MEMORY_CHECKED,
	              "%d keepers of one controller held %ld MiB (at most %ld wanted)",
	              QUEUE_STREAMS, most / 1024, bound / 1024);
}
END_TEST

/*
 * A log file keeps at most the writeback bound (64 MiB, logio.c) of its
 * pages in the page cache once they are on disk: a keeper that writes
 * gigabytes does not push the machine's working set out, and its next
 * writes reuse the pages it dropped (DESIGN.md, "A log's pages leave the
 * page cache once on disk").  A FLUSH stream posted into flat out until
 * its log passes a size, then shut down: the pages of the log still
 * resident (mincore) stay under 64 MiB and the last writes' slack, and
 * the log reads back whole.  Crossed with what else moves a linear log's
 * end: log-full-policy APPEND and UNTIL_FULL (the log fills and the
 * stream stops), and posix_trace_clear (the log cut back to its header,
 * then written again).  On tmpfs (no disk under the page cache) the file
 * goes to /var/tmp.
 */
#define CACHE_LOG_MIB 320
#define CACHE_KEPT_MIB 96 /* 64 MiB behind the end, and the last jobs */
#define CACHE_EVENT_LEN 1000u

static int log_on_disk(char *path, size_t cap)
{
	struct statfs fs;
	snprintf(path, cap, "%s/cache.log", dir);
	if (statfs(dir, &fs) == 0 && fs.f_type == 0x01021994 /* TMPFS_MAGIC */) {
		snprintf(outside_log, sizeof outside_log, "/var/tmp/pt-keeper-cache.%d.log",
		         (int)getpid());
		snprintf(path, cap, "%s", outside_log);
	}
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
}

static long resident_mib(int fd)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	size_t page = (size_t)sysconf(_SC_PAGESIZE), pages = ((size_t)st.st_size + page - 1) / page;
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	ck_assert_ptr_ne(m, MAP_FAILED);
	unsigned char *vec = malloc(pages);
	ck_assert_ptr_nonnull(vec);
	ck_assert_int_eq(mincore(m, (size_t)st.st_size, vec), 0);
	size_t in = 0;
	for (size_t i = 0; i < pages; i++)
		in += vec[i] & 1u;
	free(vec);
	munmap(m, (size_t)st.st_size);
	return (long)(in * page / (size_t)MIB);
}

/* Posts until the log reaches mib MiB or, UNTIL_FULL, the stream stops
 * (the log full); a bound on the rounds all the same.  The events posted. */
static uint64_t fill_log(trace_id_t trid, trace_event_id_t id, int fd, long mib)
{
	static char data[CACHE_EVENT_LEN];
	struct stat st = {0};
	struct posix_trace_status_info status;
	uint64_t posted = 0;
	for (int rounds = 0; st.st_size < (off_t)(mib * MIB) && rounds < 200000; rounds++) {
		for (int i = 0; i < 1000; i++)
			posix_trace_event(id, data, sizeof data);
		posted += 1000;
		ck_assert_int_eq(fstat(fd, &st), 0);
		ck_assert_int_eq(posix_trace_get_status(trid, &status), 0);
		if (status.posix_log_full_status == POSIX_TRACE_FULL)
			break;
	}
	return posted;
}

/* The user events of the log, each checked whole. */
static uint64_t events_read_back(int fd, trace_event_id_t id)
{
	trace_id_t rd;
	struct posix_trace_event_info ev;
	char buf[CACHE_EVENT_LEN + 24];
	size_t len;
	int unavailable;
	uint64_t n = 0;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_int_eq(posix_trace_open(fd, &rd), 0);
	for (;;) {
		ck_assert_int_eq(posix_trace_getnext_event(rd, &ev, buf, sizeof buf, &len, &unavailable), 0);
		if (unavailable)
			break;
		if (ev.posix_event_id == id) {
			ck_assert_uint_eq(len, CACHE_EVENT_LEN);
			n++;
		}
	}
	ck_assert_int_eq(posix_trace_close(rd), 0);
	return n;
}

/* log_mib: log-max-size (UNTIL_FULL); clear: posix_trace_clear when the
 * log passes half of CACHE_LOG_MIB, then as much again. */
static void cache_case(const char *what, int log_policy, long log_mib, int clear)
{
	/* The size cap: the keeper inherits it, and a runaway gets EFBIG. */
	struct rlimit fsz = {(rlim_t)2 * CACHE_LOG_MIB * MIB, (rlim_t)2 * CACHE_LOG_MIB * MIB};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &fsz), 0);
	signal(SIGXFSZ, SIG_IGN);
	char path[256];
	int fd = log_on_disk(path, sizeof path);
	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t id;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setstreamsize(&attr, 4 * MIB), 0);
	ck_assert_int_eq(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH), 0);
	ck_assert_int_eq(posix_trace_attr_setmaxdatasize(&attr, 1024), 0);
	ck_assert_int_eq(posix_trace_attr_setlogfullpolicy(&attr, log_policy), 0);
	if (log_mib)
		ck_assert_int_eq(posix_trace_attr_setlogsize(&attr, (size_t)log_mib * MIB), 0);
	ck_assert_int_eq(posix_trace_create_withlog(0, &attr, fd, &trid), 0);
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posix_trace_eventid_open("cache.fill", &id), 0);
	ck_assert_int_eq(posix_trace_start(trid), 0);
	uint64_t posted = 0;
	if (clear) {
		fill_log(trid, id, fd, CACHE_LOG_MIB / 2);
		ck_assert_int_eq(posix_trace_clear(trid), 0);
		/* Posting flat out, the clear often finds the stream stopped at
		 * full: emptied, it runs again (t_log's clear cases). */
		struct posix_trace_status_info status;
		ck_assert_int_eq(posix_trace_get_status(trid, &status), 0);
		ck_assert_int_eq(status.posix_stream_status, POSIX_TRACE_RUNNING);
		posted = fill_log(trid, id, fd, CACHE_LOG_MIB / 2);
	} else {
		posted = fill_log(trid, id, fd, log_mib ? log_mib + 1 : CACHE_LOG_MIB);
	}
	ck_assert_int_eq(posix_trace_shutdown(trid), 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	long kept = resident_mib(fd);
	fprintf(stderr, "log_leaves_the_page_cache_once_on_disk, %s: %lld MiB written, %ld MiB of "
	        "it in the page cache (at most %d wanted)\n", what, (long long)(st.st_size / MIB),
	        kept, CACHE_KEPT_MIB);
	ck_assert_msg(st.st_size >= (off_t)(CACHE_LOG_MIB / 2 * MIB), "%s: the log reached %lld bytes only",
	              what, (long long)st.st_size);
	ck_assert_msg(kept <= CACHE_KEPT_MIB, "%s: %ld MiB of a %lld MiB log stay in the page cache",
	              what, kept, (long long)(st.st_size / MIB));
	/* What left the cache reads back from the disk, every event whole.  A
	 * record is the event's 16 bytes and its data: nine tenths of the file
	 * at least are these events (the rest: blocks' headers, names). */
	uint64_t read_back = events_read_back(fd, id);
	ck_assert_msg(read_back * (CACHE_EVENT_LEN + 16) >= (uint64_t)st.st_size / 10 * 9 &&
	                  read_back <= posted,
	              "%s: %llu events read back of %llu posted (since the clear)", what,
	              (unsigned long long)read_back, (unsigned long long)posted);
	close(fd);
	unlink(path);
}

START_TEST(log_leaves_the_page_cache_once_on_disk)
{
	cache_case("APPEND", POSIX_TRACE_APPEND, 0, 0);
	cache_case("UNTIL_FULL, 200 MiB", POSIX_TRACE_UNTIL_FULL, 200, 0);
	cache_case("APPEND, cleared at 160 MiB", POSIX_TRACE_APPEND, 0, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("keeper");
	TCase *tc = pt_tcase_fixture(s, "keeper", setup, teardown);
	tcase_add_test(tc, no_pidfd_open_is_enosys);
	tcase_add_test(tc, flush_burst_never_blocks);
	tcase_add_test(tc, stuck_keeper_bounds_clear_and_shutdown);
	tcase_add_test(tc, scribbled_hints_do_not_make_flushes);
	tcase_add_test(tc, scribbled_filter_does_not_hide_system_events);
	tcase_add_test(tc, channel_to_a_third_party_is_refused);
	tcase_add_test(tc, keeper_of_killed_controller_ends);
	TCase *ends_tc = pt_tcase_fixture(s, "ends", setup, teardown);
	tcase_set_timeout(ends_tc, 120);
	tcase_add_test(ends_tc, log_complete_at_exit);
	tcase_add_test(ends_tc, log_complete_after__exit_and_kill);
	tcase_add_test(ends_tc, log_complete_when_controller_ends_at_once);
	TCase *queue_tc = pt_tcase_fixture(s, "queue", setup, teardown);
	tcase_set_timeout(queue_tc, 60);
	tcase_add_test(queue_tc, output_queues_share_a_budget);
	tcase_add_test(queue_tc, log_leaves_the_page_cache_once_on_disk);
	return pt_run_scratch(s, "pt-keeper");
}
