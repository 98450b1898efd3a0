/* SPDX-License-Identifier: MIT */
/*
 * t_isolation: the isolation (security) tests, run the way an attacker
 * would run them: real processes of two unprivileged users (ptiso_a, the
 * victim; ptiso_b, the attacker), setuid, setgid and file-capability
 * programs, a memory cgroup, crafted logs.  Each test is named after the
 * item of the isolation issue it closes and asserts what must hold once it
 * is closed:
 *
 *  - nothing a user plants in /dev/shm (FIFOs, 0666 objects with stream
 *    content, names predicted from pids) has any effect on another user:
 *    victims run normally, none of their events reaches the attacker, and
 *    posix_trace_create (posix_trace_create, ERRORS) by the victim, by
 *    another process of its user, and root's `posixtrace attach` succeed;
 *  - a process joins a stream only under the ptrace rule: a setuid, setgid
 *    or file-capability program (AT_SECURE) starts untraced and keeps no
 *    posixtrace descriptor, and a descriptor of another user's stream
 *    handed to a process across exec is not joined;
 *  - no process maps memory another party can resize: the target cannot
 *    shrink or grow the library's memfds, and its controller survives;
 *  - a failed helper process (the keeper) reaches the caller as an error
 *    number, never as a signal (posix_trace_flush: EIO, a documented
 *    extension; posix_trace_clear, ERRORS allows only EINVAL);
 *  - a stream larger than the memory the process may use is ENOMEM
 *    (posix_trace_create, ERRORS), not an OOM kill;
 *  - posix_trace_open of a crafted log is fast and its memory proportional
 *    to the events found.
 *
 * The attacks use only public interfaces (<trace.h>, the posixtrace
 * command, /proc, /dev/shm), through the helper programs iso_victim,
 * iso_attacker and iso_ctl (tests/helpers/iso_*.c).  Tests that need root
 * (users, setuid, cgroups) say SKIPPED when they cannot run and pass.
 * Every child runs in a process group of its own and is killed with it at
 * the end of the test, also when a check fails; files, users' /dev/shm
 * objects and cgroups made by a test are removed.
 */
#include "harness.h"

#include <dirent.h>
#include <grp.h>
#include <libgen.h>
#include <poll.h>
#include <posixtrace.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/fanotify.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>

#include "../src/layout.h" /* struct pt_pcb, to forge one */

#define USER_A "ptiso_a" /* the victim */
#define USER_B "ptiso_b" /* the attacker */
#define MIB (1024L * 1024L)

/* ---- what a test leaves behind, removed at its end ------------------------
 * Check ends a failed test with _exit and a timed-out one with SIGKILL, so
 * the list lives in shared memory and a watchdog process, forked at setup,
 * cleans up when the test process is gone, however it ended. */

struct leftovers {
	pid_t groups[64];
	int ngroups;
	char dirs[8][PATH_MAX];
	int ndirs;
	char cgroup[PATH_MAX];
	uid_t users[2];
	int nusers;
};

static struct leftovers *left;
static pid_t test_pid, watchdog;
static const char *test_name = "?";

/* The test users' objects in /dev/shm: those users exist only for these
 * tests, so everything they own there was planted by one. */
static void remove_users_shm_objects(void)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300];
		struct stat st;
		if (snprintf(path, sizeof path, "/dev/shm/%s", e->d_name) >= (int)sizeof path ||
		    lstat(path, &st) != 0 || S_ISDIR(st.st_mode))
			continue;
		for (int i = 0; i < left->nusers; i++) {
			if (st.st_uid != left->users[i])
				continue;
			/* A FIFO is opened for writing first: a process of any
			 * user stuck opening it (the attack of item 3) goes on. */
			int fifo = S_ISFIFO(st.st_mode) ? open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1;
			unlink(path);
			if (fifo >= 0)
				close(fifo);
		}
	}
	if (d)
		closedir(d);
}

/* Kills every process group the test started and reaps what it can (the
 * test is their subreaper), removes its directories, cgroup and the users'
 * /dev/shm objects.  Idempotent. */
static void clean_up(void)
{
	for (int i = 0; i < left->ngroups; i++)
		kill(-left->groups[i], SIGKILL);
	if (getpid() == test_pid) {
		for (int i = 0; i < left->ngroups; i++)
			waitpid(left->groups[i], NULL, 0);
		for (int tries = 0; tries < 20; tries++) {
			pid_t r = waitpid(-1, NULL, WNOHANG);
			if (r < 0 || (r == 0 && tries > 3))
				break;
			if (r == 0)
				usleep(5000);
		}
	}
	left->ngroups = 0;
	if (left->cgroup[0]) {
		for (int tries = 0; tries < 100 && rmdir(left->cgroup) != 0 && errno == EBUSY; tries++)
			usleep(10000);
		left->cgroup[0] = '\0';
	}
	remove_users_shm_objects();
	for (int i = 0; i < left->ndirs; i++)
		pt_remove_tree(left->dirs[i]);
	left->ndirs = 0;
}

/* One test at a time owns /dev/shm and the test users (another run of
 * these tests, with another build, would clean up what this one planted):
 * a lock on the directory, held by the test and its watchdog, so that the
 * watchdog's cleaning is over before the next test begins. */
static void lock_shm(void)
{
	int fd = open("/dev/shm", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; fd >= 0 && i < 1500; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return; /* fd stays open: the lock lasts as long as the test */
		usleep(10000);
	}
	printf("t_isolation: /dev/shm stays locked by another run; going on without the lock\n");
}

/* Objects of the test users left by an earlier run that was killed. */
static void forget_earlier_runs(void)
{
	const char *names[] = {USER_A, USER_B};
	for (int i = 0; i < 2; i++) {
		struct passwd *pw = getpwnam(names[i]);
		if (pw && pw->pw_uid != 0)
			left->users[left->nusers++] = pw->pw_uid;
	}
	remove_users_shm_objects();
}

static void setup(void)
{
	int p[2];
	test_pid = getpid();
	left = mmap(NULL, sizeof *left, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(left, MAP_FAILED);
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A child that died leaves a pipe without reader: the test notes
	 * what the child said, it does not die writing to it.  Children get
	 * the default back (child_setup, fork_child). */
	signal(SIGPIPE, SIG_IGN);
	lock_shm();
	forget_earlier_runs();
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	watchdog = pt_fork();
	if (watchdog == 0) {
		char c;
		close(p[1]);
		setpgid(0, 0);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		clean_up();
		_exit(0);
	}
	close(p[0]); /* p[1] stays open (close-on-exec) until the test ends */
	/* Grandchildren (a program under a shell, a command's child) come
	 * back to the test, which reaps them. */
	prctl(PR_SET_CHILD_SUBREAPER, 1);
}

static void teardown(void)
{
	clean_up();
}

/* The end of a test: clean up, then fail if anything went wrong. */
#define cleaned_up_assert(cond, ...)                                               \
	do {                                                                       \
		int ok_ = (cond);                                                  \
		clean_up();                                                        \
		ck_assert_msg(ok_, __VA_ARGS__);                                   \
	} while (0)

#define SKIP(...)                                                                  \
	do {                                                                       \
		printf("t_isolation: SKIPPED %s: ", test_name);                     \
		printf(__VA_ARGS__);                                               \
		printf("\n");                                                      \
		return;                                                            \
	} while (0)

/* ---- problems: a test lists everything that went wrong, then fails once -- */

static char problems[4096];

static void problem(const char *fmt, ...)
{
	size_t used = strlen(problems);
	if (used && used < sizeof problems - 2) {
		strcat(problems, "; ");
		used += 2;
	}
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(problems + used, sizeof problems - used, fmt, ap);
	va_end(ap);
}

static void begin(const char *name)
{
	test_name = name;
	problems[0] = '\0';
}

#define assert_no_problems() \
	cleaned_up_assert(problems[0] == '\0', "%s: %s", test_name, problems)

/* ---- paths --------------------------------------------------------------- */

/* The build directory: this program is BUILD/tests/t_isolation. */
static const char *build_dir(void)
{
	static char dir[PATH_MAX];
	if (!dir[0]) {
		ssize_t n = readlink("/proc/self/exe", dir, sizeof dir - 1);
		ck_assert_int_gt(n, 0);
		dir[n] = '\0';
		char *up = dirname(dirname(dir));
		if (up != dir)
			memmove(dir, up, strlen(up) + 1);
	}
	return dir;
}

/* dir/name in one of a few static buffers (paths live for a test). */
static const char *join(const char *dir, const char *mid, const char *name)
{
	static char path[16][PATH_MAX];
	static int next;
	char *p = path[next++ % 16];
	int n = snprintf(p, PATH_MAX, "%s/%s%s", dir, mid, name);
	ck_assert_msg(n > 0 && n < PATH_MAX, "path too long: %s/%s%s", dir, mid, name);
	return p;
}

static const char *built(const char *rel)
{
	const char *helpers = getenv("PT_TEST_HELPERS"), *p;
	char dir[PATH_MAX];
	if (strncmp(rel, "helpers/", 8) == 0 && helpers && realpath(helpers, dir))
		p = join(dir, "", rel + 8);
	else if (strncmp(rel, "helpers/", 8) == 0)
		p = join(build_dir(), "tests/", rel);
	else
		p = join(build_dir(), "", rel);
	ck_assert_msg(access(p, R_OK) == 0, "%s not found (make tests)", p);
	return p;
}

static const char *in_dir(const char *dir, const char *name)
{
	return join(dir, "", name);
}

/* A new directory, mode `mode`, owned by uid (-1: root), removed at the
 * end of the test. */
static const char *new_dir(int mode, int uid, gid_t gid)
{
	ck_assert_int_lt(left->ndirs, 8);
	char *d = left->dirs[left->ndirs];
	snprintf(d, PATH_MAX, "/tmp/ptiso.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(d));
	left->ndirs++;
	ck_assert_int_eq(chmod(d, (mode_t)mode), 0);
	if (uid >= 0)
		ck_assert_int_eq(chown(d, (uid_t)uid, gid), 0);
	return d;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(in >= 0, "%s: %s", from, strerror(errno));
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0700);
	ck_assert_msg(out >= 0, "%s: %s", to, strerror(errno));
	char buf[65536];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	ck_assert_int_eq(n, 0);
	close(in);
	close(out);
	ck_assert_int_eq(chmod(to, mode), 0);
}

/* Other users may not be able to enter the build directory: the programs
 * they run, and the library, are copied into a root-owned directory of
 * mode 0755 that they find through LD_LIBRARY_PATH. */
static const char *staging;

static void stage(void)
{
	char lib[PATH_MAX];
	staging = new_dir(0755, -1, 0);
	ck_assert_ptr_nonnull(realpath(built("libposixtrace.so.0"), lib));
	copy_file(lib, in_dir(staging, "libposixtrace.so.0"), 0755);
	copy_file(built("helpers/iso_victim"), in_dir(staging, "iso_victim"), 0755);
	copy_file(built("helpers/iso_attacker"), in_dir(staging, "iso_attacker"), 0755);
	copy_file(built("helpers/iso_ctl"), in_dir(staging, "iso_ctl"), 0755);
	copy_file(built("helpers/fds_open"), in_dir(staging, "fds_open"), 0755);
	if (access(in_dir(build_dir(), "posixtrace"), X_OK) == 0)
		copy_file(built("posixtrace"), in_dir(staging, "posixtrace"), 0755);
}

static const char *staged_tool(void)
{
	const char *tool = in_dir(staging, "posixtrace");
	ck_assert_msg(access(tool, X_OK) == 0, "the posixtrace command is not built");
	return tool;
}

/* ---- users ---------------------------------------------------------------- */

struct user {
	uid_t uid;
	gid_t gid;
};

static const struct user *as_root = NULL;
static struct user user_a, user_b;

/* ---- child processes ------------------------------------------------------ */

struct spawn {
	const struct user *as; /* NULL: the test's own ids (root) */
	int in, out, err;      /* the child's 0, 1, 2 (-1: /dev/null) */
	int extra, extra_to;   /* one more descriptor, as number extra_to */
	int hold;              /* wait for release() before exec */
	int tree;              /* keeps what the test's streams leave open (a member
	                        * of the test's traced tree) */
	int staged;            /* LD_LIBRARY_PATH is the staging directory */
};

struct child {
	pid_t pid;
	int release; /* write end of the hold pipe, or -1 */
};

static void track_group(pid_t pgid)
{
	ck_assert_int_lt(left->ngroups, 64);
	left->groups[left->ngroups++] = pgid;
}

static void close_from(int lo, int hi)
{
	if (lo <= hi)
		syscall(SYS_close_range, (unsigned)lo, (unsigned)hi, 0u);
}

#define HOLD_FD 200 /* where a held child keeps its hold pipe */

/* This process becomes user u, groups and all three ids: 0, or -1. */
static int become(const struct user *u)
{
	return setgroups(0, NULL) != 0 || setresgid(u->gid, u->gid, u->gid) != 0 ||
	               setresuid(u->uid, u->uid, u->uid) != 0
	           ? -1
	           : 0;
}

/* In the child: its descriptors (nothing else of the test's: a pipe end
 * kept by another child would hide an EOF), then the wait for release(),
 * then its ids. */
static void child_setup(const struct spawn *o, int hold_r, pid_t parent)
{
	int from[5] = {o->in, o->out, o->err, o->extra, hold_r};
	int to[5] = {0, 1, 2, o->extra >= 0 ? o->extra_to : -1, hold_r >= 0 ? HOLD_FD : -1};
	setpgid(0, 0);
	for (int i = 0; i < 5; i++) {
		if (to[i] < 0)
			continue;
		if (from[i] < 0)
			from[i] = open("/dev/null", O_RDWR | O_CLOEXEC);
		from[i] = fcntl(from[i], F_DUPFD_CLOEXEC, HOLD_FD + 1);
		if (from[i] < 0)
			_exit(124);
	}
	for (int i = 0; i < 5; i++)
		if (to[i] >= 0 && dup2(from[i], to[i]) != to[i])
			_exit(124);
	int keep = to[3] >= 3 ? to[3] : HOLD_FD;
	if (!o->tree) {
		close_from(3, keep - 1);
		close_from(keep + 1, HOLD_FD - 1);
		close_from(HOLD_FD + 1, INT_MAX);
	}
	if (hold_r >= 0) {
		char c;
		if (read(HOLD_FD, &c, 1) != 1)
			_exit(125); /* the test ended before releasing it */
	}
	close(HOLD_FD);
	if (o->as && become(o->as) != 0)
		_exit(123);
	signal(SIGPIPE, SIG_DFL);
	/* after the change of ids, which clears it */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(125);
}

/* Starts argv[0] with argv and one more environment entry (extra_env, or
 * NULL); its process group dies with the test. */
static struct child start_with_env(const struct spawn *o, char *const argv[],
                                   const char *extra_env)
{
	int hold[2] = {-1, -1};
	char ldpath[PATH_MAX + 32];
	snprintf(ldpath, sizeof ldpath, "LD_LIBRARY_PATH=%s", staging ? staging : "");
	char *env[] = {"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	               "LC_ALL=C", "HOME=/", o->staged ? ldpath : NULL, NULL, NULL};
	env[o->staged ? 4 : 3] = (char *)extra_env;
	if (o->hold)
		ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
	pid_t parent = getpid();
	pid_t pid = pt_fork();
	if (pid == 0) {
		if (o->hold)
			close(hold[1]);
		child_setup(o, hold[0], parent);
		execve(argv[0], argv, env);
		_exit(127);
	}
	setpgid(pid, pid); /* also here: no race with a kill of the group */
	track_group(pid);
	if (o->hold)
		close(hold[0]);
	return (struct child){pid, hold[1]};
}

static struct child start(const struct spawn *o, char *const argv[])
{
	return start_with_env(o, argv, NULL);
}

static void release(struct child *c)
{
	ck_assert_int_eq(write(c->release, "r", 1), 1);
	close(c->release);
	c->release = -1;
}

/* A forked child that runs test code (no exec): in a process group of its
 * own, killed with the test. */
static pid_t fork_child(void)
{
	pid_t parent = getpid();
	pid_t pid = pt_fork();
	if (pid == 0) {
		setpgid(0, 0);
		signal(SIGPIPE, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(125);
		return 0;
	}
	setpgid(pid, pid);
	track_group(pid);
	return pid;
}

/* Waits up to timeout_ms for pid to end; 1 and its status if it did, 0
 * (and its group killed) if not. */
static int wait_bounded(pid_t pid, int timeout_ms, int *status)
{
	for (int waited = 0;; waited += 5) {
		pid_t r = waitpid(pid, status, WNOHANG);
		if (r == pid)
			return 1;
		if (r < 0)
			return 0; /* not a child any more: nothing to kill */
		if (waited >= timeout_ms) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, status, 0);
			return 0;
		}
		usleep(5000);
	}
}

/* Waits (bounded) for a child and notes a problem unless it exited 0. */
static void expect_exit0(pid_t pid, int timeout_ms, const char *what)
{
	int status = 0;
	char how[96];
	if (!wait_bounded(pid, timeout_ms, &status)) {
		problem("%s did not end within %d ms (hangs)", what, timeout_ms);
		return;
	}
	pt_describe_status(status, how, sizeof how);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		problem("%s: %s", what, how);
}

static void pipe_cloexec(int p[2])
{
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
}

/* ---- reading a child's lines, with a deadline ----------------------------- */

struct lines {
	int fd;
	char buf[16384];
	size_t len;
	char seen[1024]; /* the last lines read, for messages */
};

static void lines_init(struct lines *l, int fd)
{
	l->fd = fd;
	l->len = 0;
	l->seen[0] = '\0';
}

/* Keeps the last lines read (each cut to 120 bytes) for messages. */
static void remember(struct lines *l, const char *line)
{
	char add[128];
	snprintf(add, sizeof add, "[%.120s] ", line);
	size_t n = strlen(l->seen), len = strlen(add);
	while (n + len >= sizeof l->seen) {
		char *next = strchr(l->seen + 1, '[');
		size_t drop = next ? (size_t)(next - l->seen) : n;
		memmove(l->seen, l->seen + drop, n - drop + 1);
		n -= drop;
	}
	memcpy(l->seen + n, add, len + 1);
}

/* The next line (without its newline) within timeout_ms: 1, else 0. */
static int next_line(struct lines *l, char *out, size_t outlen, int timeout_ms)
{
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		char *nl = memchr(l->buf, '\n', l->len);
		if (nl) {
			size_t n = (size_t)(nl - l->buf);
			snprintf(out, outlen, "%.*s", (int)n, l->buf);
			memmove(l->buf, nl + 1, l->len - n - 1);
			l->len -= n + 1;
			remember(l, out);
			return 1;
		}
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		long spent = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
		if (spent >= timeout_ms || l->len == sizeof l->buf)
			return 0;
		struct pollfd p = {.fd = l->fd, .events = POLLIN};
		if (poll(&p, 1, (int)(timeout_ms - spent)) != 1)
			continue;
		ssize_t n = read(l->fd, l->buf + l->len, sizeof l->buf - l->len);
		if (n <= 0)
			return 0;
		l->len += (size_t)n;
	}
}

/* Skips lines until one starts with prefix: 1, else (EOF, timeout) 0. */
static int expect_line(struct lines *l, const char *prefix, char *out, size_t outlen,
                       int timeout_ms)
{
	while (next_line(l, out, outlen, timeout_ms))
		if (strncmp(out, prefix, strlen(prefix)) == 0)
			return 1;
	return 0;
}

/* The number after "key=" in line, or def. */
static long field(const char *line, const char *key, long def)
{
	char pat[64];
	snprintf(pat, sizeof pat, " %s=", key);
	const char *p = strstr(line, pat);
	return p ? strtol(p + strlen(pat), NULL, 10) : def;
}

/* Writes to a child's stdin; a child that is gone shows in what it did
 * not print. */
static void say(int fd, const char *text)
{
	if (write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return;
}

/* ---- users: created when root, reused when they exist --------------------- */

static int run_quietly(char *const argv[], int timeout_ms)
{
	struct spawn o = {.in = -1, .out = -1, .err = -1, .extra = -1};
	struct child c = start(&o, argv);
	int status = 0;
	return wait_bounded(c.pid, timeout_ms, &status) && WIFEXITED(status) ?
	               WEXITSTATUS(status) : -1;
}

static int ensure_user(const char *name, struct user *u)
{
	struct passwd *pw = getpwnam(name);
	if (!pw) {
		char *argv[10] = {"/usr/sbin/useradd", "--system", "--no-create-home", "--shell",
		                  "/usr/sbin/nologin"};
		int n = 5;
		if (access(argv[0], X_OK) != 0)
			argv[0] = "/sbin/useradd";
		if (getgrnam(name)) { /* left by an earlier, interrupted creation */
			argv[n++] = "-g";
			argv[n++] = (char *)name;
		}
		argv[n++] = (char *)name;
		argv[n] = NULL;
		run_quietly(argv, 15000);
		pw = getpwnam(name);
	}
	if (!pw)
		return -1;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	int known = 0;
	for (int i = 0; i < left->nusers; i++)
		known |= left->users[i] == u->uid;
	if (!known && left->nusers < 2)
		left->users[left->nusers++] = u->uid;
	return 0;
}

/* Both users, or a reason why not. */
static const char *need_users(void)
{
	if (geteuid() != 0)
		return "not root: cannot create users nor change ids";
	if (ensure_user(USER_A, &user_a) != 0 || ensure_user(USER_B, &user_b) != 0)
		return "cannot create the users " USER_A " and " USER_B " (useradd)";
	if (user_a.uid == 0 || user_b.uid == 0 || user_a.uid == user_b.uid)
		return "the test users are not two unprivileged users";
	return NULL;
}

/* A directory only user u can write (its logs). */
static const char *home_of(const struct user *u)
{
	return new_dir(0700, (int)u->uid, u->gid);
}

/* ---- helpers of the tests ------------------------------------------------- */

static void make_secret(char *out, size_t len, const char *item)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(out, len, "ptiso-%s-%d-%lx", item, (int)getpid(),
	         (unsigned long)(ts.tv_nsec ^ ts.tv_sec * 2654435761u));
}

/* Whether the file holds the bytes of needle anywhere. */
static int file_contains(const char *path, const char *needle)
{
	size_t nlen = strlen(needle);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	static char buf[1 << 20];
	size_t keep = 0;
	int found = 0;
	ssize_t n;
	while (!found && (n = read(fd, buf + keep, sizeof buf - keep)) > 0) {
		size_t have = keep + (size_t)n;
		found = memmem(buf, have, needle, nlen) != NULL;
		keep = have < nlen ? have : nlen - 1;
		memmove(buf, buf + have - keep, keep);
	}
	close(fd);
	return found;
}

/* What a log holds: all events, those of pid, those carrying the secret,
 * POSIX_TRACE_ERROR events. */
struct log_count {
	int open_err;
	long events, of_pid, with_secret, errors;
};

static struct log_count count_log(const char *path, pid_t pid, const char *secret)
{
	struct log_count c = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		c.open_err = errno;
		return c;
	}
	trace_id_t trid;
	c.open_err = posix_trace_open(fd, &trid);
	if (c.open_err) {
		close(fd);
		return c;
	}
	static char data[65536];
	while (c.events < 10000000) {
		struct posix_trace_event_info info;
		size_t len = 0;
		int unavailable = 0;
		if (posix_trace_getnext_event(trid, &info, data, sizeof data, &len,
		                              &unavailable) != 0 || unavailable)
			break;
		c.events++;
		c.of_pid += info.posix_pid == pid;
		c.with_secret += secret && memmem(data, len, secret, strlen(secret)) != NULL;
		c.errors += info.posix_event_id == POSIX_TRACE_ERROR;
	}
	posix_trace_close(trid);
	close(fd);
	return c;
}

/* The arguments of `posixtrace attach` for pid: "-p PID" where the command
 * has it, else the PID alone. */
static int attach_takes_p(void)
{
	static int known = -1;
	if (known >= 0)
		return known;
	int out[2];
	pipe_cloexec(out);
	char *argv[] = {(char *)built("posixtrace"), "attach", "--help", NULL};
	struct spawn o = {.in = -1, .out = out[1], .err = out[1], .extra = -1};
	struct child c = start(&o, argv);
	close(out[1]);
	struct lines *l = malloc(sizeof *l);
	char line[512];
	lines_init(l, out[0]);
	known = 0;
	while (next_line(l, line, sizeof line, 5000))
		if (strstr(line, "-p PID") || strstr(line, "-p, --pid") || strstr(line, "--pid"))
			known = 1;
	free(l);
	close(out[0]);
	int status;
	wait_bounded(c.pid, 5000, &status);
	return known;
}

/* argv for `posixtrace attach` of pid into log for `seconds` (at most). */
static void attach_argv(char **argv, const char *tool, char *pidbuf, size_t pidlen, pid_t pid,
                        const char *log, const char *seconds)
{
	int i = 0;
	snprintf(pidbuf, pidlen, "%d", (int)pid);
	argv[i++] = (char *)tool;
	argv[i++] = "attach";
	if (attach_takes_p())
		argv[i++] = "-p";
	argv[i++] = pidbuf;
	argv[i++] = "-o";
	argv[i++] = (char *)log;
	argv[i++] = "--duration";
	argv[i++] = (char *)seconds;
	argv[i] = NULL;
}

/* Whether Yama lets a process trace only its descendants: then another
 * process of the victim's user may not trace it, attack or not. */
static int yama_restricts(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "r");
	int scope = 0;
	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = 0;
		fclose(f);
	}
	return scope != 0;
}

/* ---- item 1: another user's planted streams ------------------------------ */

/* The victim's shell: a process of user A that runs the program (not
 * exec'd into it, so that it stays the program's ancestor) once it reads a
 * line.  The program inherits its stdin (the test's gates) and stdout. */
static char *const shell_script =
	"read x; \"$@\"; rc=$?; echo \"iso shell rc=$rc\"; exit $rc";

struct proc {
	struct child c;
	int in;  /* write end of its stdin */
	struct lines *out;
	char ready[256]; /* an attacker's "ready" line */
};

static struct proc start_proc(const struct user *as, char *const argv[], int hold)
{
	int in[2], out[2];
	pipe_cloexec(in);
	pipe_cloexec(out);
	struct spawn o = {.as = as, .in = in[0], .out = out[1], .err = -1, .extra = -1,
	                  .hold = hold, .staged = 1};
	struct proc p = {.c = start(&o, argv), .in = in[1]};
	close(in[0]);
	close(out[1]);
	p.out = malloc(sizeof *p.out);
	ck_assert_ptr_nonnull(p.out);
	lines_init(p.out, out[0]);
	return p;
}

static void end_proc(struct proc *p)
{
	if (p->in >= 0)
		close(p->in);
	p->in = -1;
	if (p->out) {
		close(p->out->fd);
		free(p->out);
	}
	p->out = NULL;
}

/* The attacker (user B) in a mode; returns once it said "ready". */
static struct proc start_attacker(const char *mode, const char *opt, ...)
{
	char *argv[16];
	int argc = 0;
	argv[argc++] = (char *)in_dir(staging, "iso_attacker");
	argv[argc++] = (char *)mode;
	va_list ap;
	va_start(ap, opt);
	argc = pt_append_args(argv, argc, 16, opt, ap);
	va_end(ap);
	struct proc p = start_proc(&user_b, argv, 0);
	char line[512];
	ck_assert_msg(expect_line(p.out, "ready", line, sizeof line, 10000),
	              "the attacker (%s) did not get ready: %s", mode, p.out->seen);
	snprintf(p.ready, sizeof p.ready, "%.255s", line);
	return p;
}

static void attacker_read(struct proc *b, long *foreign, long *in_stream, long *in_files)
{
	char line[512];
	say(b->in, "read\n");
	ck_assert_msg(expect_line(b->out, "read ", line, sizeof line, 10000),
	              "the attacker did not read its stream: %s", b->out->seen);
	*foreign = field(line, "foreign", -1);
	*in_stream = field(line, "secret_in_stream", -1);
	*in_files = field(line, "secret_in_files", -1);
}

START_TEST(item1_planted_inherited_stream_ignored)
{
	begin("item1_planted_inherited_stream_ignored");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64], line[512];
	make_secret(secret, sizeof secret, "item1");

	/* A's shell, waiting; the program it will run posts 5 events, waits
	 * for a byte on its stdin, posts 5 more. */
	char *shell[] = {"/bin/sh", "-c", shell_script, "sh", (char *)in_dir(staging, "iso_victim"),
	                 "-s", secret, "-c", "5", "-C", "5", "-g", "0", "-a", "30", NULL};
	struct proc s = start_proc(&user_a, shell, 0);
	char spid[16];
	snprintf(spid, sizeof spid, "%d", (int)s.c.pid);

	/* B: its own inherited stream rewritten to list A's shell as a
	 * member, made 0666, and copies of it named for the shell. */
	struct proc b = start_attacker("plant", "-v", spid, "-n", "4", "-s", secret, NULL);

	say(s.in, "go\n");
	if (!expect_line(s.out, "iso batch1", line, sizeof line, 10000))
		problem("the victim under A's shell did not post (%s)", s.out->seen);
	long foreign, in_stream, in_files;
	attacker_read(&b, &foreign, &in_stream, &in_files);
	if (foreign != 0 || in_stream != 0 || in_files != 0)
		problem("B's planted stream captured A's program: %ld events of another process, "
		        "%ld with A's secret, secret in %ld planted objects",
		        foreign, in_stream, in_files);

	/* B shrinks everything it planted while A's program runs. */
	say(b.in, "truncate\n");
	ck_assert_msg(expect_line(b.out, "truncated", line, sizeof line, 10000),
	              "the attacker did not truncate: %s", b.out->seen);
	say(s.in, "g");
	if (!expect_line(s.out, "iso shell rc=", line, sizeof line, 10000))
		problem("A's shell did not report its program's end (%s)", s.out->seen);
	else if (strcmp(line, "iso shell rc=0") != 0)
		problem("A's program ended with exit status %s after B truncated its objects "
		        "(above 128: killed by signal rc - 128, SIGBUS is %d)", line + 13, SIGBUS);
	expect_exit0(s.c.pid, 10000, "A's shell");
	say(b.in, "quit\n");
	int status;
	wait_bounded(b.c.pid, 5000, &status);
	end_proc(&s);
	end_proc(&b);
	assert_no_problems();
}
END_TEST

START_TEST(item1_planted_streams_leave_slots_free)
{
	begin("item1_planted_streams_leave_slots_free");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64], line[512], spid[16], vpid[16];
	make_secret(secret, sizeof secret, "item1s");

	/* A's program creates a stream of its own at start, then stays until
	 * a byte arrives on its stdin. */
	char *shell[] = {"/bin/sh", "-c", shell_script, "sh", (char *)in_dir(staging, "iso_victim"),
	                 "-s", secret, "-k", "own", "-c", "1", "-H", "0", "-a", "30", NULL};
	struct proc s = start_proc(&user_a, shell, 0);
	snprintf(spid, sizeof spid, "%d", (int)s.c.pid);
	/* More copies than a process has slots (64). */
	struct proc b = start_attacker("plant", "-v", spid, "-n", "70", "-s", secret, NULL);

	say(s.in, "go\n");
	pid_t victim = 0;
	if (!expect_line(s.out, "iso start", line, sizeof line, 10000)) {
		problem("A's program did not start (%s)", s.out->seen);
	} else {
		victim = (pid_t)field(line, "pid", 0);
		if (!expect_line(s.out, "iso create=", line, sizeof line, 10000))
			problem("A's program did not create its stream (%s)", s.out->seen);
		else if (strcmp(line, "iso create=0") != 0)
			problem("A's own posix_trace_create returned %s (11 = EAGAIN: slots filled "
			        "by B's objects)", line + 11);
	}
	if (victim > 0 && yama_restricts()) {
		printf("t_isolation: %s: another process of A may not trace A's program here "
		       "(Yama ptrace_scope): that part skipped\n", test_name);
	} else if (victim > 0) {
		/* Another process of A traces the program. */
		snprintf(vpid, sizeof vpid, "%d", (int)victim);
		char *ctl[] = {(char *)in_dir(staging, "iso_ctl"), "-p", vpid, "-a", "20", NULL};
		struct proc c = start_proc(&user_a, ctl, 0);
		if (!expect_line(c.out, "created", line, sizeof line, 10000))
			problem("A's controller did not answer (%s)", c.out->seen);
		else if (strcmp(line, "created err=0") != 0)
			problem("posix_trace_create(%d) by another process of A: %s", (int)victim,
			        line + 8);
		close(c.in);
		c.in = -1;
		expect_exit0(c.c.pid, 10000, "A's controller");
		end_proc(&c);
	}
	if (victim > 0) {
		/* And root's posixtrace attach. */
		const char *dir = new_dir(0700, -1, 0);
		char *att[12], pidbuf[16];
		attach_argv(att, built("posixtrace"), pidbuf, sizeof pidbuf, victim,
		            in_dir(dir, "attach.ptlog"), "1");
		struct spawn o = {.in = -1, .out = -1, .err = -1, .extra = -1};
		struct child a = start(&o, att);
		expect_exit0(a.pid, 15000, "root's posixtrace attach");
	}
	say(s.in, "g");
	expect_exit0(s.c.pid, 10000, "A's shell");
	say(b.in, "quit\n");
	int status;
	wait_bounded(b.c.pid, 5000, &status);
	end_proc(&s);
	end_proc(&b);
	assert_no_problems();
}
END_TEST

/* ---- item 2: setuid, setgid, file capabilities; foreign descriptors ------ */

/* Whether user u with group gid can read the library the build links
 * (programs whose loader runs with those ids use the build's rpath). */
static int reachable_as(const struct user *u, gid_t gid)
{
	char lib[PATH_MAX];
	if (!realpath(built("libposixtrace.so.0"), lib))
		return 0;
	pid_t pid = fork_child();
	if (pid == 0) {
		if (setgroups(0, NULL) != 0 || setresgid(gid, gid, gid) != 0 ||
		    setresuid(u->uid, u->uid, u->uid) != 0)
			_exit(2);
		_exit(access(lib, R_OK) == 0 ? 0 : 1);
	}
	int status = 0;
	wait_bounded(pid, 5000, &status);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Points the copy's run path (the build directory, absolute, as the
 * Makefile links it) at the staging directory, which is root-owned and
 * holds the library: the loader of an AT_SECURE program ignores
 * LD_LIBRARY_PATH and $ORIGIN.  The path is rewritten in place, padded
 * with zero bytes, so it must not be longer.  1 if done. */
static int retarget_rpath(const char *prog)
{
	const char *from = build_dir();
	size_t flen = strlen(from) + 1, tlen = strlen(staging);
	if (tlen >= flen)
		return 0;
	int fd = open(prog, O_RDWR | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	char *buf = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	int done = 0;
	for (char *p = buf; (p = memmem(p, (size_t)(buf + st.st_size - p), from, flen)); p += flen) {
		char repl[PATH_MAX] = {0};
		memcpy(repl, staging, tlen);
		ck_assert_int_eq(pwrite(fd, repl, flen, p - buf), (ssize_t)flen);
		done = 1;
	}
	free(buf);
	close(fd);
	return done;
}

enum privileged { SETUID, SETGID, FILECAP };

/* User A records a privileged copy of iso_victim with posixtrace record:
 * the program runs, and nothing of it reaches A's log. */
static void record_privileged(enum privileged kind)
{
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	struct statvfs vfs;
	if (statvfs(staging, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		SKIP("the temporary directory is mounted nosuid");
	const char *prog = in_dir(staging, "iso_victim-priv");
	copy_file(built("helpers/iso_victim"), prog, 0755);
	int own_lib = retarget_rpath(prog);
	if (kind == SETUID) {
		ck_assert_int_eq(chown(prog, 0, 0), 0);
		ck_assert_int_eq(chmod(prog, 04755), 0);
	} else if (kind == SETGID) {
		if (!own_lib && !reachable_as(&user_a, user_b.gid))
			SKIP("the library in the build directory is not readable by other users");
		ck_assert_int_eq(chown(prog, 0, user_b.gid), 0);
		ck_assert_int_eq(chmod(prog, 02755), 0);
	} else {
		if (!own_lib && !reachable_as(&user_a, user_a.gid))
			SKIP("the library in the build directory is not readable by other users");
		char *setcap[] = {"/usr/sbin/setcap", "cap_net_bind_service+ep", (char *)prog, NULL};
		if (access(setcap[0], X_OK) != 0)
			setcap[0] = "/sbin/setcap";
		if (access(setcap[0], X_OK) != 0)
			SKIP("setcap is not installed");
		if (run_quietly(setcap, 10000) != 0)
			SKIP("setcap failed (no file capabilities on this file system?)");
	}
	char secret[64], line[512];
	make_secret(secret, sizeof secret, "item2");
	const char *log = in_dir(home_of(&user_a), "priv.ptlog");
	char *argv[] = {(char *)staged_tool(), "record", "-o", (char *)log, "--",
	                (char *)prog, "-s", secret, "-c", "20", "-a", "20", NULL};
	struct proc r = start_proc(&user_a, argv, 0);
	if (!expect_line(r.out, "iso start", line, sizeof line, 10000)) {
		problem("the program did not start under posixtrace record (%s)", r.out->seen);
		expect_exit0(r.c.pid, 10000, "posixtrace record");
		end_proc(&r);
		assert_no_problems();
		return;
	}
	pid_t pid = (pid_t)field(line, "pid", 0);
	long secure = field(line, "secure", -1), fds = field(line, "fds", -1);
	char start_line[512];
	snprintf(start_line, sizeof start_line, "%s", line);
	expect_exit0(r.c.pid, 15000, "posixtrace record of the privileged program");
	end_proc(&r);
	if (secure != 1)
		SKIP("the copy did not run AT_SECURE here (%s)", start_line);
	printf("t_isolation: %s: %s\n", test_name, start_line);
	if (fds != 0)
		problem("the AT_SECURE program holds posixtrace descriptors at main: %s",
		        strstr(start_line, "fds=") ? strstr(start_line, "fds=") : start_line);
	struct log_count c = count_log(log, pid, secret);
	if (c.open_err)
		problem("posix_trace_open of A's log: %s", strerror(c.open_err));
	if (c.of_pid || c.with_secret)
		problem("A's log holds %ld events of the AT_SECURE program (pid %d), %ld with its "
		        "secret", c.of_pid, (int)pid, c.with_secret);
	if (file_contains(log, secret))
		problem("A's log holds the bytes of the AT_SECURE program's secret");
	assert_no_problems();
}

START_TEST(item2_setuid_program_not_recorded)
{
	begin("item2_setuid_program_not_recorded");
	record_privileged(SETUID);
}
END_TEST

START_TEST(item2_setgid_program_not_recorded)
{
	begin("item2_setgid_program_not_recorded");
	record_privileged(SETGID);
}
END_TEST

START_TEST(item2_filecap_program_not_recorded)
{
	begin("item2_filecap_program_not_recorded");
	record_privileged(FILECAP);
}
END_TEST

/* A descriptor of the process's memfd named posixtrace-stream (through
 * /proc/PID/fd), else of its stream object in /dev/shm; its number in the
 * process goes to *num. */
static int open_stream_of(pid_t pid, int *num)
{
	char path[300], link[PATH_MAX];
	struct dirent *e;
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/%d/fd/%s", (int)pid, e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n > 0 && (link[n] = '\0', strstr(link, "posixtrace-stream"))) {
			*num = atoi(e->d_name); /* before closedir frees e */
			closedir(d);
			return open(path, O_RDWR | O_CLOEXEC);
		}
	}
	if (d)
		closedir(d);
	/* A stream it maps without keeping a descriptor (root may open it
	 * through map_files). */
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *maps = fopen(path, "r");
	char line[512];
	while (maps && fgets(line, sizeof line, maps)) {
		unsigned long lo, hi;
		if (!strstr(line, "posixtrace-stream") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		fclose(maps);
		snprintf(path, sizeof path, "/proc/%d/map_files/%lx-%lx", (int)pid, lo, hi);
		*num = 10;
		return open(path, O_RDWR | O_CLOEXEC);
	}
	if (maps)
		fclose(maps);
	char prefix[64];
	snprintf(prefix, sizeof prefix, "posixtrace.%d.", (int)pid);
	d = opendir("/dev/shm");
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
		closedir(d);
		*num = 10;
		return open(path, O_RDWR | O_CLOEXEC);
	}
	if (d)
		closedir(d);
	return -1;
}

START_TEST(item2_foreign_stream_descriptor_not_joined)
{
	begin("item2_foreign_stream_descriptor_not_joined");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64], line[512];
	make_secret(secret, sizeof secret, "item2b");
	struct proc b = start_attacker("hold", "-s", secret, NULL);
	int num = -1;
	int fd = open_stream_of(b.c.pid, &num);
	ck_assert_msg(fd >= 0, "B's stream not found (no memfd posixtrace-stream, no /dev/shm "
	                       "object)");
	if (num < 3 || num >= HOLD_FD)
		num = 10;
	/* Root hands B's stream to a program of A, across exec, without
	 * close-on-exec. */
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-s", secret, "-c", "10", "-a",
	                "20", NULL};
	int out[2];
	pipe_cloexec(out);
	struct spawn o = {.as = &user_a, .in = -1, .out = out[1], .err = -1, .extra = fd,
	                  .extra_to = num, .staged = 1};
	struct child a = start(&o, argv);
	close(out[1]);
	close(fd);
	struct lines *l = malloc(sizeof *l);
	lines_init(l, out[0]);
	if (!expect_line(l, "iso done", line, sizeof line, 10000))
		problem("A's program did not post its events (%s)", l->seen);
	expect_exit0(a.pid, 10000, "A's program holding B's stream descriptor");
	close(out[0]);
	free(l);
	long foreign, in_stream, in_files;
	attacker_read(&b, &foreign, &in_stream, &in_files);
	if (foreign != 0 || in_stream != 0)
		problem("B's stream received %ld events of A's program (%ld with A's secret)",
		        foreign, in_stream);
	say(b.in, "quit\n");
	int status;
	wait_bounded(b.c.pid, 5000, &status);
	end_proc(&b);
	assert_no_problems();
}
END_TEST

/* ---- a tree of several users: a forged control block ---------------------
 * (security, third round, item 2: a member of a tree hands a control block
 * it forged down to the next programs; drop_foreign_block in src/adopt.c
 * closed the descriptors the block named before checking its owner.) */

/* A sealed control block whose channel ends are the descriptors 1 and 2 of
 * whoever inherits it (the inodes of out and err), owned by `owner` (NULL:
 * the test's own user). */
static int forged_block(const struct user *owner, int out, int err)
{
	struct stat so, se;
	ck_assert_int_eq(fstat(out, &so), 0);
	ck_assert_int_eq(fstat(err, &se), 0);
	struct pt_pcb pcb;
	memset(&pcb, 0, sizeof pcb);
	pcb.magic = PT_PCB_MAGIC;
	pcb.version = PT_LAYOUT_VERSION;
	pcb.size = sizeof pcb;
	pcb.pid = 1;
	pcb.starttime = 1;
	pcb.channel_tx = (struct pt_fdref){.fd = 1, .ino = (uint64_t)so.st_ino};
	pcb.channel_rx = (struct pt_fdref){.fd = 2, .ino = (uint64_t)se.st_ino};
	int fd = (int)syscall(SYS_memfd_create, "posixtrace-pcb", 0x0003u /* CLOEXEC|SEALING */);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, &pcb, sizeof pcb), (ssize_t)sizeof pcb);
	ck_assert_int_eq(fcntl(fd, F_ADD_SEALS, PT_SEALS_REQUIRED), 0);
	if (owner)
		ck_assert_int_eq(fchown(fd, owner->uid, owner->gid), 0);
	return fd;
}

/* Runs fds_open as `as` with the block as descriptor 10: it must still
 * write on its standard output and error. */
static void run_with_forged_block(const struct user *as, const struct user *owner,
                                  const char *who)
{
	int out[2], err[2];
	pipe_cloexec(out);
	pipe_cloexec(err);
	int block = forged_block(owner, out[1], err[1]);
	char *argv[] = {(char *)in_dir(staging, "fds_open"), NULL};
	struct spawn o = {.as = as, .in = -1, .out = out[1], .err = err[1], .extra = block,
	                  .extra_to = 10, .staged = 1};
	struct child c = start(&o, argv);
	close(out[1]);
	close(err[1]);
	close(block);
	int status = -1;
	if (!wait_bounded(c.pid, 10000, &status))
		problem("%s: fds_open did not end", who);
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		problem("%s: fds_open could not write on its standard output or error (status "
		        "%#x): the library closed them at load",
		        who, status);
	close(out[0]);
	close(err[0]);
}

START_TEST(tree_forged_block_closes_no_file)
{
	begin("tree_forged_block_closes_no_file");
	stage();
	/* Of the same user: the owner is trusted, the descriptors named are
	 * not sockets. */
	run_with_forged_block(NULL, NULL, "a block of the program's own user");
	const char *why = need_users();
	if (!why) {
		run_with_forged_block(&user_a, &user_b, "a block of user B, program of user A");
		run_with_forged_block(as_root, &user_b, "a block of user B, root's program");
	}
	assert_no_problems();
	if (why)
		SKIP("the cases with two users: %s", why);
}
END_TEST

/* ---- the rendezvous across users ------------------------------------------
 * (real programs, second round, row 6: POSIXTRACE_RENDEZVOUS is the one name
 * a process follows; another user must not be able to plant one.) */

/* Runs fds_open as `as` with POSIXTRACE_RENDEZVOUS set to dir; whether it
 * connected to the socket s listening there. */
static int asks_through(const struct user *as, const char *dir, int s)
{
	char env[PATH_MAX + 32];
	snprintf(env, sizeof env, "POSIXTRACE_RENDEZVOUS=%s", dir);
	char *argv[] = {(char *)in_dir(staging, "fds_open"), NULL};
	struct spawn o = {.as = as, .in = -1, .out = -1, .err = -1, .extra = -1, .staged = 1};
	struct child c = start_with_env(&o, argv, env);
	int status = -1;
	if (!wait_bounded(c.pid, 10000, &status) || !WIFEXITED(status) || WEXITSTATUS(status))
		problem("fds_open with a rendezvous in %s did not run normally (status %#x)", dir,
		        status);
	int conn = accept4(s, NULL, NULL, SOCK_CLOEXEC);
	if (conn >= 0)
		close(conn);
	return conn >= 0;
}

START_TEST(rendezvous_of_another_user_not_followed)
{
	begin("rendezvous_of_another_user_not_followed");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	/* B's directory, mode 0700, a socket listening in it. */
	const char *dir = new_dir(0700, (int)user_b.uid, user_b.gid);
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	snprintf(a.sun_path, sizeof a.sun_path, "%s/join", dir);
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	ck_assert_int_ge(s, 0);
	ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
	ck_assert_int_eq(listen(s, 8), 0);
	if (asks_through(as_root, dir, s))
		problem("root's program connected through a directory of user B");
	if (asks_through(&user_a, dir, s))
		problem("A's program connected through a directory of user B");
	/* The same directory as root's own: root's program asks (the test
	 * proves the path works, so the refusals above are the owner check). */
	ck_assert_int_eq(chown(dir, 0, 0), 0);
	if (!asks_through(as_root, dir, s))
		problem("root's program did not ask through root's own directory");
	close(s);
	unlink(a.sun_path);
	assert_no_problems();
}
END_TEST

/* ---- a tree of several users traced by root -------------------------------
 * (security, third round, items 1, 3 and 4: root traces a tree with
 * inheritance, as `posixtrace record` of a service manager or a harness
 * that drops privileges would, and programs of users A and B run in it.
 * Each inherited root's stream, control block and registry, trusted them
 * because root owns them, and so recorded into one memory with root and
 * each other, peeked under a lock in root's block, and registered names in
 * one registry.) */

/* iso_victim as `as`, a member of the test's traced tree: what the test's
 * streams leave open goes down to it, as it would from a shell. */
static struct proc start_member(const struct user *as, char *const argv[], const char *env)
{
	int in[2], out[2];
	pipe_cloexec(in);
	pipe_cloexec(out);
	struct spawn o = {.as = as, .in = in[0], .out = out[1], .err = -1, .extra = -1,
	                  .staged = 1, .tree = 1};
	struct proc p = {.c = start_with_env(&o, argv, env), .in = in[1]};
	close(in[0]);
	close(out[1]);
	p.out = malloc(sizeof *p.out);
	ck_assert_ptr_nonnull(p.out);
	lines_init(p.out, out[0]);
	return p;
}

/* Every posixtrace memfd process pid holds must be its own user's. */
static void holds_only_own_objects(pid_t pid, uid_t uid, const char *who)
{
	char path[320], link[256];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;) {
		snprintf(path, sizeof path, "/proc/%d/fd/%s", (int)pid, e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		struct stat st;
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:posixtrace-", 18) == 0 && stat(path, &st) == 0 &&
		    st.st_uid != uid)
			problem("%s holds %s of uid %d (descriptor %s)", who, link, (int)st.st_uid,
			        e->d_name);
	}
	closedir(d);
}

/* Counts the events of the stream that carry each secret. */
static void count_secrets(trace_id_t trid, const char *const secrets[], long counts[], int n)
{
	for (;;) {
		struct posix_trace_event_info ev;
		char data[256];
		size_t len;
		int unavailable = 1;
		if (posix_trace_trygetnext_event(trid, &ev, data, sizeof data - 1, &len,
		                                 &unavailable) != 0 || unavailable)
			return;
		data[len] = '\0';
		for (int i = 0; i < n; i++)
			counts[i] += strncmp(data, secrets[i], strlen(secrets[i])) == 0;
	}
}

/* The control block of process pid (its descriptors, as root may open
 * them), mapped; NULL while it has none. */
static struct pt_pcb *block_of(pid_t pid)
{
	char path[320], link[256];
	snprintf(path, sizeof path, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(path);
	struct pt_pcb *pcb = NULL;
	for (struct dirent *e; d && !pcb && (e = readdir(d)) != NULL;) {
		snprintf(path, sizeof path, "/proc/%d/fd/%s", (int)pid, e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		int fd = strncmp(link, "/memfd:posixtrace-pcb", 21) == 0 ? open(path, O_RDWR | O_CLOEXEC)
		                                                          : -1;
		void *m = fd >= 0 ? mmap(NULL, sizeof *pcb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
		                  : MAP_FAILED;
		if (fd >= 0)
			close(fd);
		if (m != MAP_FAILED && ((struct pt_pcb *)m)->pid == pid)
			pcb = m;
		else if (m != MAP_FAILED)
			munmap(m, sizeof *pcb);
	}
	if (d)
		closedir(d);
	return pcb;
}

/* A pid no process has (a child that ended). */
static pid_t dead_pid(void)
{
	pid_t pid = pt_fork();
	if (pid == 0)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	return pid;
}

/* A shell of the tree, started as `as` (the library made its block before
 * the change of user, as in any process of root's that forks), runs
 * iso_victim once told to: the program meets the shell's block as an
 * ancestor's.  With lock_test, the peek lock of that block is first given
 * to a process that died: a program that peeked the block would replace
 * it (security, third round, item 3: B held it and A's programs spun). */
static struct proc member_run(const struct user *as, const char *secret, const char *names,
                              const char *env, const char *who, int lock_test)
{
	char line[512];
	char *argv[] = {"/bin/sh", "-c", "read go && \"$0\" \"$@\"; exit $?",
	                (char *)in_dir(staging, "iso_victim"), "-s", (char *)secret, "-N",
	                (char *)names, "-c", "20", "-H", "0", "-a", "30", NULL};
	struct proc p = start_member(as, argv, env);
	struct pt_pcb *block = NULL;
	pid_t holder = 0;
	for (int waited = 0; lock_test && !block && waited < 5000; waited += 10) {
		block = block_of(p.c.pid);
		if (!block)
			usleep(10000);
	}
	if (lock_test) {
		ck_assert_msg(block != NULL, "%s: the shell has no control block", who);
		holder = dead_pid();
		atomic_store(&block->peek_owner, holder);
	}
	say(p.in, "go\n");
	int pid = 0;
	if (!expect_line(p.out, "iso start", line, sizeof line, 10000) ||
	    sscanf(line, "iso start pid=%d", &pid) != 1)
		problem("%s did not start (%s)", who, p.out->seen);
	else if (!expect_line(p.out, "iso secret id", line, sizeof line, 10000))
		problem("%s did not start (%s)", who, p.out->seen);
	else if (strcmp(names, "0") == 0 && strstr(line, "unnamed"))
		problem("%s: \"iso.secret\" got POSIX_TRACE_UNNAMED_USEREVENT (a registry "
		        "another user filled)", who);
	if (!expect_line(p.out, "iso done", line, sizeof line, 10000))
		problem("%s did not post its events (%s)", who, p.out->seen);
	else
		holds_only_own_objects(pid, as->uid, who);
	if (block && atomic_load(&block->peek_owner) != holder)
		problem("%s took the peek lock of root's control block", who);
	if (block)
		munmap(block, sizeof *block);
	return p;
}

static void member_end(struct proc *p, const char *who)
{
	say(p->in, "q");
	expect_exit0(p->c.pid, 10000, who);
	end_proc(p);
}

START_TEST(tree_of_several_users_shares_nothing)
{
	begin("tree_of_several_users_shares_nothing");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char sr[64], sa[64], sb[64], env[PATH_MAX + 32];
	make_secret(sr, sizeof sr, "tree-root");
	make_secret(sa, sizeof sa, "tree-a");
	make_secret(sb, sizeof sb, "tree-b");
	/* Root's tree: the test traces itself with inheritance. */
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t id;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED), 0);
	ck_assert_int_eq(posix_trace_create(0, &attr, &trid), 0);
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posix_trace_start(trid), 0);
	ck_assert_int_eq(posix_trace_eventid_open("tree.root", &id), 0);
	for (int k = 0; k < 5; k++)
		posix_trace_event(id, sr, strlen(sr));
	struct posixtrace_rendezvous_info info;
	ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
	snprintf(env, sizeof env, "%s=%s", POSIXTRACE_RENDEZVOUS_ENV, info.posixtrace_dir);

	/* B fills the registry it was given, then A opens a name. */
	struct proc b = member_run(&user_b, sb, "1100", env, "B's program", 0);
	struct proc a = member_run(&user_a, sa, "0", env, "A's program", 1);
	/* They said so at the others socket at load and go on at once: the
	 * keeper counts them while they run. */
	for (int waited = 0; waited < 5000; waited += 10) {
		ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
		if (info.posixtrace_other_users >= 2)
			break;
		usleep(10000);
	}
	member_end(&b, "B's program");
	member_end(&a, "A's program");

	const char *const secrets[] = {sr, sa, sb};
	long counts[3] = {0, 0, 0};
	count_secrets(trid, secrets, counts, 3);
	if (counts[0] != 5)
		problem("root's stream holds %ld of root's 5 events", counts[0]);
	if (counts[1] || counts[2])
		problem("root's stream holds %ld events of A's program and %ld of B's: their "
		        "memory is root's and each other's",
		        counts[1], counts[2]);
	ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
	if (info.posixtrace_other_users != 2)
		problem("the rendezvous counted %llu programs of other users (A's and B's: 2), "
		        "%llu joined, %llu refused",
		        (unsigned long long)info.posixtrace_other_users,
		        (unsigned long long)info.posixtrace_joined,
		        (unsigned long long)info.posixtrace_refused);
	ck_assert_int_eq(posix_trace_shutdown(trid), 0);
	assert_no_problems();
}
END_TEST

/* ---- a member that uses what came down the tree without the library -------
 * (security, third round: what remained of items 1 and 2.  Exec passed a
 * root stream, registry and block down as descriptors that could be mapped,
 * and offers made to an ancestor waited on a channel every descendant
 * holds: another user's program that never loads the library read root's
 * events from them.  Now they cross exec and sockets as tokens of 0600
 * files, which the kernel lets only their owner and root open.) */
START_TEST(tree_member_without_library_opens_nothing)
{
	begin("tree_member_without_library_opens_nothing");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	copy_file(built("helpers/tree_thief"), in_dir(staging, "tree_thief"), 0755);
	char sr[64], line[512];
	make_secret(sr, sizeof sr, "tree-thief");
	trace_attr_t attr;
	trace_id_t tree, offered;
	trace_event_id_t id;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED), 0);
	ck_assert_int_eq(posix_trace_create(0, &attr, &tree), 0);
	ck_assert_int_eq(posix_trace_start(tree), 0);
	ck_assert_int_eq(posix_trace_eventid_open("tree.root", &id), 0);
	for (int k = 0; k < 5; k++)
		posix_trace_event(id, sr, strlen(sr));

	/* Root's shell, forked by root's traced process, holds what that
	 * passed down; a root controller's offer then waits on the shell's
	 * channel (a shell never takes it), and the shell runs B's program
	 * (setpriv), which finds all of it. */
	char uid[16], gid[16];
	snprintf(uid, sizeof uid, "%d", (int)user_b.uid);
	snprintf(gid, sizeof gid, "%d", (int)user_b.gid);
	char *argv[] = {"/bin/sh", "-c",
	                "read go && setpriv --reuid=\"$0\" --regid=\"$1\" --clear-groups -- "
	                "\"$2\" -s \"$3\"; read q",
	                uid, gid, (char *)in_dir(staging, "tree_thief"), sr, NULL};
	struct proc b = start_member(NULL, argv, NULL);
	ck_assert_int_eq(posix_trace_create(b.c.pid, &attr, &offered), 0);
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posix_trace_start(offered), 0);
	say(b.in, "go\n");
	int lib = -1, memfds = 0, sockets = 0, received = 0, opened = -1, mapped = -1, found = -1;
	if (!expect_line(b.out, "thief ", line, sizeof line, 10000) ||
	    sscanf(line, "thief lib=%d memfds=%d sockets=%d received=%d opened=%d mapped=%d secret=%d",
	           &lib, &memfds, &sockets, &received, &opened, &mapped, &found) != 7)
		problem("B's program did not report (%s)", b.out->seen);
	else
		printf("t_isolation: %s: %s\n", test_name, line);
	if (lib != 0)
		problem("B's program loaded libposixtrace: it must attack without it");
	if (memfds < 2 || received < 1)
		problem("B's program met %d posixtrace descriptors and took %d off a channel (%s): the "
		        "tree did not pass down the stream, registry and offer this test attacks",
		        memfds, received, line);
	if (opened != 0 || mapped != 0 || found != 0)
		problem("B's program opened %d and mapped %d of root's objects, %d holding root's "
		        "events",
		        opened, mapped, found);
	say(b.in, "q\n");
	expect_exit0(b.c.pid, 10000, "B's program");
	end_proc(&b);
	ck_assert_int_eq(posix_trace_shutdown(offered), 0);
	ck_assert_int_eq(posix_trace_shutdown(tree), 0);
	assert_no_problems();
}
END_TEST

/* ---- a user's process traced by root with inheritance --------------------
 * (what came down a tree is taken only from the process's own user, root's
 * only by root: root hands a stream traced with inheritance to a process of
 * another user as that user's, so that the children it starts by exec, of
 * its user, follow the stream as they did.) */
START_TEST(root_traced_users_children_follow)
{
	begin("root_traced_users_children_follow");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char sp[64], sc[64], child[PATH_MAX + 96], line[512];
	make_secret(sp, sizeof sp, "follow-parent");
	make_secret(sc, sizeof sc, "follow-child");
	snprintf(child, sizeof child, "%s -s %s -c 5", in_dir(staging, "iso_victim"), sc);
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-s", sp, "-c", "5", "-w", "0",
	                "-x", child, "-a", "30", NULL};
	struct proc a = start_proc(&user_a, argv, 0);
	if (!expect_line(a.out, "iso start", line, sizeof line, 10000))
		problem("A's program did not start (%s)", a.out->seen);
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED), 0);
	ck_assert_int_eq(posix_trace_create(a.c.pid, &attr, &trid), 0);
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posix_trace_start(trid), 0);
	say(a.in, "g");
	if (!expect_line(a.out, "iso system=0", line, sizeof line, 10000))
		problem("A's program did not run its child (%s)", a.out->seen);
	expect_exit0(a.c.pid, 10000, "A's program");
	end_proc(&a);
	const char *const secrets[] = {sp, sc};
	long counts[2] = {0, 0};
	count_secrets(trid, secrets, counts, 2);
	if (counts[0] != 5 || counts[1] != 5)
		problem("root's stream holds %ld of the 5 events of A's program and %ld of the 5 of "
		        "the child it started by exec",
		        counts[0], counts[1]);
	ck_assert_int_eq(posix_trace_shutdown(trid), 0);
	assert_no_problems();
}
END_TEST

/* ---- the rendezvous is the stream's user's -------------------------------
 * (security, third round, item 3, what remained: the join socket was mode
 * 0666, so a member of another user could connect to it as often as it
 * liked and fill its queue, and the programs of the user it was for waited
 * until they gave up, untraced.  Now the kernel refuses everybody but that
 * user (and root) at connect; the others go to a socket of their own.) */

/* The end of `dir`/`name` as user `as` sees it: 0 when a connection was
 * made, else errno.  With crowd, that many more connections to it are made
 * and kept open, in a process that stays until *release (a pipe's end) is
 * closed; its pid in *holder. */
static int connect_as(const struct user *as, const char *dir, const char *name, int crowd,
                      pid_t *holder, int *release_end)
{
	int rep[2], release[2];
	pipe_cloexec(rep);
	pipe_cloexec(release);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct sockaddr_un a = {.sun_family = AF_UNIX};
		snprintf(a.sun_path, sizeof a.sun_path, "%s/%s", dir, name);
		int err = 0;
		close(rep[0]);
		close(release[1]);
		if (become(as) != 0)
			_exit(3);
		for (int i = 0; i <= crowd; i++) {
			int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
			if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) != 0 && i == 0)
				err = errno;
		}
		char c;
		if (write(rep[1], &err, sizeof err) != sizeof err)
			_exit(4);
		_exit(crowd && read(release[0], &c, 1) < 0 ? 5 : 0);
	}
	close(rep[1]);
	close(release[0]);
	int err = -1;
	ck_assert_int_eq(read(rep[0], &err, sizeof err), (ssize_t)sizeof err);
	close(rep[0]);
	if (crowd) {
		*holder = pid;
		*release_end = release[1];
	} else {
		close(release[1]);
		expect_exit0(pid, 10000, "a connecting process");
	}
	return err;
}

START_TEST(rendezvous_join_socket_is_the_streams_users)
{
	begin("rendezvous_join_socket_is_the_streams_users");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char sp[64], sc[64], child[PATH_MAX * 2 + 160], line[512], path[PATH_MAX + 16];
	make_secret(sp, sizeof sp, "rdv-parent");
	make_secret(sc, sizeof sc, "rdv-child");
	const char *dirfile = in_dir(staging, "rdv.dir");
	/* A's program starts a child that closed what it inherited (as
	 * Python's subprocess does): it joins through the rendezvous. */
	snprintf(child, sizeof child,
	         "exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- 9>&-; POSIXTRACE_RENDEZVOUS=$(cat %s) "
	         "exec %s -s %s -c 5",
	         dirfile, in_dir(staging, "iso_victim"), sc);
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-s", sp, "-c", "5", "-w", "0",
	                "-x", child, "-a", "30", NULL};
	struct proc a = start_proc(&user_a, argv, 0);
	if (!expect_line(a.out, "iso start", line, sizeof line, 10000))
		problem("A's program did not start (%s)", a.out->seen);
	trace_attr_t attr;
	trace_id_t trid;
	struct posixtrace_rendezvous_info info;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED), 0);
	ck_assert_int_eq(posix_trace_create(a.c.pid, &attr, &trid), 0);
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
	FILE *f = fopen(dirfile, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", info.posixtrace_dir);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(dirfile, 0644), 0);

	struct stat st;
	snprintf(path, sizeof path, "%s/join", info.posixtrace_dir);
	ck_assert_int_eq(stat(path, &st), 0);
	if (st.st_uid != user_a.uid || (st.st_mode & 0777) != 0600)
		problem("the join socket of A's stream is uid %d mode %o (A's, 0600 wanted)",
		        (int)st.st_uid, (unsigned)(st.st_mode & 0777));
	int err = connect_as(&user_b, info.posixtrace_dir, "join", 0, NULL, NULL);
	if (err != EACCES)
		problem("B connected to the join socket of A's stream (%s)",
		        err ? strerror(err) : "it was let in");
	pid_t crowd = 0;
	int release = -1;
	err = connect_as(&user_b, info.posixtrace_dir, "others", 300, &crowd, &release);
	if (err)
		problem("B could not reach the others socket: %s", strerror(err));

	ck_assert_int_eq(posix_trace_start(trid), 0);
	say(a.in, "g");
	if (!expect_line(a.out, "iso system=0", line, sizeof line, 10000))
		problem("A's program did not run its child (%s)", a.out->seen);
	expect_exit0(a.c.pid, 10000, "A's program");
	end_proc(&a);
	close(release);
	expect_exit0(crowd, 10000, "B's crowd");
	const char *const secrets[] = {sp, sc};
	long counts[2] = {0, 0};
	count_secrets(trid, secrets, counts, 2);
	ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
	if (counts[0] != 5 || counts[1] != 5 || info.posixtrace_joined < 1)
		problem("with B crowding the others socket, root's stream holds %ld of the 5 events "
		        "of A's program and %ld of the 5 of its child, %llu joined through the "
		        "rendezvous",
		        counts[0], counts[1], (unsigned long long)info.posixtrace_joined);
	ck_assert_int_eq(posix_trace_shutdown(trid), 0);
	assert_no_problems();
}
END_TEST

/* ---- a crowd at the others socket costs no join ---------------------------
 * (security, fourth round, item 6: user B builds a chain of processes and
 * its deepest one connects to the world-writable others socket as fast as
 * it can; each connection made root's keeper walk the connector's
 * ancestry through /proc, 32 of them per pass before the joins and the
 * drains, so that children of the traced tree that could join only
 * through the rendezvous gave up, untraced, and root's keeper used most of
 * a CPU.  The others socket is served now once a tick, after the joins and
 * the drains, from a budget of /proc reads.)  Sizes: PT_SOAK_RDV_CHAIN
 * (chain length, 500) and PT_SOAK_RDV_CHILDREN (children, 40); the soak
 * (tests/soak/keeper.sh) runs the issue's 1,000 and 200.  A chain is built
 * one process after another: under load, 500 take tens of seconds. */

static uint64_t mono_now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static long env_size(const char *name, long def)
{
	const char *v = getenv(name);
	long n = v ? strtol(v, NULL, 10) : 0;
	return n > 0 ? n : def;
}

/* CPU time (utime + stime, clock ticks) of process pid; -1 when gone. */
static long cpu_ticks(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	unsigned long utime = 0, stime = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime,
	                 &stime) != 2)
		return -1;
	return (long)(utime + stime);
}

/* The keeper of this process's stream: its child named posixtrace-keep
 * (it calls setsid, it stays this process's child); 0 when none. */
static pid_t find_own_keeper(void)
{
	DIR *d = opendir("/proc");
	pid_t found = 0;
	for (struct dirent *e; d && !found && (e = readdir(d)) != NULL;) {
		char path[300], buf[512];
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "/proc/%s/stat", e->d_name);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			continue;
		buf[n] = '\0';
		const char *p = strrchr(buf, ')');
		int ppid = 0;
		if (strstr(buf, "(posixtrace-keep)") && p && sscanf(p + 2, "%*c %d", &ppid) == 1 &&
		    ppid == (int)getpid())
			found = (pid_t)atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

/* The same, waiting up to a second for the keeper to take its name. */
static pid_t own_keeper(void)
{
	pid_t found = 0;
	for (int tries = 0; !found && tries < 100; tries++)
		if (!(found = find_own_keeper()))
			usleep(10000);
	return found;
}

/* The chain itself, in a process of its own that exec'd this program
 * (t_isolation --flood-others DIR DEPTH REPORT_FD RELEASE_FD), made by
 * the clone system call: the library's fork handlers, which a thousand
 * nested forks would run a thousand times, do not run.  Each member dies
 * with its parent.  The deepest says so on
 * REPORT_FD, then connects to DIR/others and hangs up, over and over,
 * until RELEASE_FD has something or hangs up, or the socket is gone. */
static int flood_chain_main(char **argv)
{
	const char *dir = argv[2];
	long depth = strtol(argv[3], NULL, 10);
	int report = atoi(argv[4]), release = atoi(argv[5]);
	for (long level = 1; level < depth; level++) {
		pid_t below = (pid_t)syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
		if (below < 0)
			return 4;
		if (below > 0) {
			int status;
			waitpid(below, &status, 0);
			return 0;
		}
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	}
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	if (strlen(dir) + sizeof "/others" > sizeof a.sun_path)
		return 6;
	memcpy(a.sun_path, dir, strlen(dir));
	memcpy(a.sun_path + strlen(dir), "/others", sizeof "/others");
	char c = 'r';
	if (write(report, &c, 1) != 1)
		return 5;
	close(report);
	struct pollfd p = {.fd = release, .events = POLLIN};
	while (poll(&p, 1, 0) == 0) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
		if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) != 0 && errno == ENOENT)
			p.revents = POLLHUP; /* the stream ended */
		if (s >= 0)
			close(s);
		if (p.revents)
			break;
	}
	return 0;
}

/* User B's chain of `depth` processes (flood_chain_main), built now;
 * returns once it stands, its first process in *top, the end that
 * releases it in *release_end. */
static void flood_others(const char *dir, long depth, pid_t *top, int *release_end)
{
	int rep[2], release[2];
	pipe_cloexec(rep);
	pipe_cloexec(release);
	pid_t pid = fork_child();
	if (pid == 0) {
		char depth_s[32], rep_s[16], release_s[16];
		snprintf(depth_s, sizeof depth_s, "%ld", depth);
		snprintf(rep_s, sizeof rep_s, "%d", rep[1]);
		snprintf(release_s, sizeof release_s, "%d", release[0]);
		close(rep[0]);
		close(release[1]);
		if (become(&user_b) != 0 || fcntl(rep[1], F_SETFD, 0) != 0 ||
		    fcntl(release[0], F_SETFD, 0) != 0)
			_exit(3);
		execl("/proc/self/exe", "t_isolation", "--flood-others", dir, depth_s, rep_s,
		      release_s, (char *)NULL);
		_exit(127);
	}
	close(rep[1]);
	close(release[0]);
	char c;
	ck_assert_int_eq(read(rep[0], &c, 1), 1);
	close(rep[0]);
	*top = pid;
	*release_end = release[1];
}

START_TEST(rendezvous_others_flood_costs_no_join)
{
	begin("rendezvous_others_flood_costs_no_join");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	long depth = env_size("PT_SOAK_RDV_CHAIN", 500), children = env_size("PT_SOAK_RDV_CHILDREN", 40);
	stage();
	char sc[64], loop[PATH_MAX * 2 + 320], line[512];
	make_secret(sc, sizeof sc, "rdv-flood-child");
	const char *dirfile = in_dir(staging, "rdv.dir");
	/* A's program starts a child every 50 ms; each closed what it
	 * inherited, so it can only join through the rendezvous. */
	snprintf(loop, sizeof loop,
	         "i=0; while [ $i -lt %ld ]; do i=$((i + 1)); (exec 3>&- 4>&- 5>&- 6>&- 7>&- 8>&- "
	         "9>&-; POSIXTRACE_RENDEZVOUS=$(cat %s) exec %s -s %s -c 5) & sleep 0.05; done; wait",
	         children, dirfile, in_dir(staging, "iso_victim"), sc);
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-c", "0", "-w", "0", "-x", loop,
	                "-a", "600", NULL};
	struct proc a = start_proc(&user_a, argv, 0);
	if (!expect_line(a.out, "iso start", line, sizeof line, 10000))
		problem("A's program did not start (%s)", a.out->seen);
	trace_attr_t attr;
	trace_id_t trid;
	struct posixtrace_rendezvous_info info;
	ck_assert_int_eq(posix_trace_attr_init(&attr), 0);
	ck_assert_int_eq(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED), 0);
	ck_assert_int_eq(posix_trace_attr_setstreamsize(&attr, 16u << 20), 0);
	ck_assert_int_eq(posix_trace_create(a.c.pid, &attr, &trid), 0);
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
	FILE *f = fopen(dirfile, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "%s\n", info.posixtrace_dir);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(dirfile, 0644), 0);
	ck_assert_int_eq(posix_trace_start(trid), 0);

	/* Built after the target started: the start-time bound of the walk
	 * does not cut it short, the budget must. */
	pid_t flood, keeper = own_keeper();
	int release;
	uint64_t built = mono_now_ns();
	flood_others(info.posixtrace_dir, depth, &flood, &release);
	fprintf(stderr, "rendezvous_others_flood_costs_no_join: chain built in %.1f s\n",
	        (double)(mono_now_ns() - built) / 1e9);
	long cpu_before = keeper ? cpu_ticks(keeper) : -1;
	uint64_t t0 = mono_now_ns();
	say(a.in, "g");
	if (!expect_line(a.out, "iso system=0", line, sizeof line, 60000 + (int)children * 500))
		problem("A's program did not run its children (%s)", a.out->seen);
	uint64_t t1 = mono_now_ns();
	long cpu_after = keeper ? cpu_ticks(keeper) : -1;
	expect_exit0(a.c.pid, 10000, "A's program");
	end_proc(&a);
	close(release);
	expect_exit0(flood, 10000, "B's chain");
	const char *const secrets[] = {sc};
	long counts[1] = {0};
	count_secrets(trid, secrets, counts, 1);
	struct posix_trace_status_info st;
	ck_assert_int_eq(posix_trace_get_status(trid, &st), 0);
	ck_assert_int_eq(posixtrace_rendezvous_info(trid, &info), 0);
	double secs = (double)(t1 - t0) / 1e9;
	fprintf(stderr,
	        "rendezvous_others_flood_costs_no_join: chain %ld, %ld children: %llu joined, "
	        "%ld of %ld events, %s, %llu others unchecked; keeper %d CPU %.1f %% over %.1f s\n",
	        depth, children, (unsigned long long)info.posixtrace_joined, counts[0], children * 5,
	        st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "events lost" : "none lost",
	        (unsigned long long)info.posixtrace_others_unchecked, (int)keeper,
	        cpu_before >= 0 && cpu_after >= 0 && secs > 0
	            ? 100.0 * (double)(cpu_after - cpu_before) / (double)sysconf(_SC_CLK_TCK) / secs
	            : -1.0,
	        secs);
	if (info.posixtrace_joined != (uint64_t)children || counts[0] != children * 5 ||
	    st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN)
		problem("with B's chain of %ld flooding the others socket, %llu of %ld children joined "
		        "and root's stream holds %ld of their %ld events (%s)",
		        depth, (unsigned long long)info.posixtrace_joined, children, counts[0],
		        children * 5,
		        st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "events lost" : "none lost");
	ck_assert_int_eq(posix_trace_shutdown(trid), 0);
	assert_no_problems();
}
END_TEST

/* ---- a worker that dropped privileges without exec ----------------------
 * (a daemon's worker: the library made its block while the process was
 * root, then it became user A.  It opens what it is offered with its own
 * rights now (tokens), so root's controller gives it the stream as A's,
 * whoever owns the block.) */
START_TEST(root_traces_worker_that_dropped_privileges)
{
	begin("root_traces_worker_that_dropped_privileges");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	char secret[64];
	make_secret(secret, sizeof secret, "worker");
	int go[2], done[2];
	pipe_cloexec(go);
	pipe_cloexec(done);
	pid_t worker = fork_child();
	if (worker == 0) {
		char c;
		trace_event_id_t id;
		if (become(&user_a) != 0 || posix_trace_eventid_open("worker.secret", &id) != 0 ||
		    write(done[1], "u", 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		for (int k = 0; k < 5; k++)
			posix_trace_event(id, secret, strlen(secret));
		_exit(write(done[1], "p", 1) == 1 ? 0 : 4);
	}
	close(go[0]);
	close(done[1]);
	char c = 0;
	ck_assert_int_eq(read(done[0], &c, 1), 1);
	trace_id_t trid;
	ck_assert_int_eq(posix_trace_create(worker, NULL, &trid), 0);
	ck_assert_int_eq(posix_trace_start(trid), 0);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	if (read(done[0], &c, 1) != 1 || c != 'p')
		problem("the worker did not post its events");
	expect_exit0(worker, 10000, "the worker");
	const char *const secrets[] = {secret};
	long count = 0;
	count_secrets(trid, secrets, &count, 1);
	if (count != 5)
		problem("root's stream for a worker that became user A holds %ld of its 5 events",
		        count);
	ck_assert_int_eq(posix_trace_shutdown(trid), 0);
	close(go[1]);
	close(done[0]);
	assert_no_problems();
}
END_TEST

/* ---- item 3: a FIFO in /dev/shm ------------------------------------------ */

/* Runs a started program to its end within HANG_MS: it must exit 0 and
 * have printed a line starting with `want` (copied to line). */
#define HANG_MS 5000 /* a program here takes milliseconds: only hangs exceed it */

static int run_to_end(struct proc *p, const char *want, char *line, size_t len, const char *what)
{
	expect_exit0(p->c.pid, HANG_MS, what);
	int found = expect_line(p->out, want, line, len, 1000);
	if (!found)
		problem("%s did not print \"%s\" (%s)", what, want, p->out->seen);
	end_proc(p);
	return found;
}

START_TEST(item3_fifo_in_dev_shm_no_hang)
{
	begin("item3_fifo_in_dev_shm_no_hang");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64], line[512];
	make_secret(secret, sizeof secret, "item3");
	/* A's program, held before exec so that B can name a FIFO after its
	 * pid and start time too. */
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-s", secret, "-c", "3", "-a", "20",
	                NULL};
	struct proc v = start_proc(&user_a, argv, 1);
	char vpid[16];
	snprintf(vpid, sizeof vpid, "%d", (int)v.c.pid);
	struct proc b = start_attacker("fifo", "-v", vpid, NULL);
	struct stat st;
	if (stat("/dev/shm/posixtrace.x", &st) != 0 || !S_ISFIFO(st.st_mode))
		problem("no FIFO /dev/shm/posixtrace.x could be planted (%s)", b.out->seen);

	release(&v.c);
	run_to_end(&v, "iso done", line, sizeof line, "A's program");
	/* Root's programs too. */
	struct proc r = start_proc(as_root, argv, 0);
	run_to_end(&r, "iso done", line, sizeof line, "root's program");
	/* And posixtrace record run by A. */
	const char *log = in_dir(home_of(&user_a), "fifo.ptlog");
	char *rec[] = {(char *)staged_tool(), "record", "-o", (char *)log, "--",
	               (char *)in_dir(staging, "iso_victim"), "-s", secret, "-c", "3", "-a", "20",
	               NULL};
	struct proc p = start_proc(&user_a, rec, 0);
	pid_t pid = 0;
	if (run_to_end(&p, "iso start", line, sizeof line, "posixtrace record run by A")) {
		pid = (pid_t)field(line, "pid", 0);
		struct log_count c = count_log(log, pid, secret);
		if (c.open_err)
			problem("posix_trace_open of the recorded log: %s", strerror(c.open_err));
		else if (c.with_secret != 3)
			problem("the recorded log holds %ld of the program's 3 events", c.with_secret);
	}
	say(b.in, "quit\n");
	int status;
	wait_bounded(b.c.pid, 5000, &status);
	end_proc(&b);
	assert_no_problems();
}
END_TEST

/* ---- item 4: decoys in /dev/shm ------------------------------------------ */

/* Opens in /dev/shm (the directory itself or anything in it) by the
 * given processes, seen through fanotify, which names the opener; the
 * paths go to what.  -1 when fanotify is not available. */
struct shm_watch {
	int fan, ino;
};

static struct shm_watch watch_shm(void)
{
	struct shm_watch w;
	w.fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK, O_RDONLY | O_CLOEXEC);
	if (w.fan >= 0 && fanotify_mark(w.fan, FAN_MARK_ADD,
	                                FAN_OPEN | FAN_ACCESS | FAN_ONDIR | FAN_EVENT_ON_CHILD,
	                                AT_FDCWD, "/dev/shm") != 0) {
		close(w.fan);
		w.fan = -1;
	}
	/* Without fanotify, inotify: opens of the decoys, by anyone. */
	w.ino = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	ck_assert_int_ge(w.ino, 0);
	ck_assert_int_ge(inotify_add_watch(w.ino, "/dev/shm", IN_OPEN | IN_ACCESS), 0);
	return w;
}

/* fanotify: opens by one of pids (what gets their paths); inotify: opens
 * of names starting with prefix. */
static long shm_opens(struct shm_watch *w, const pid_t *pids, int npids, const char *prefix,
                      char *what, size_t len)
{
	static char buf[65536] __attribute__((aligned(8)));
	long n = 0;
	ssize_t got;
	what[0] = '\0';
	while (w->fan >= 0 && (got = read(w->fan, buf, sizeof buf)) > 0) {
		struct fanotify_event_metadata *m = (struct fanotify_event_metadata *)buf;
		for (; FAN_EVENT_OK(m, got); m = FAN_EVENT_NEXT(m, got)) {
			char fdpath[64], path[PATH_MAX] = "?";
			if (m->fd >= 0) {
				snprintf(fdpath, sizeof fdpath, "/proc/self/fd/%d", m->fd);
				ssize_t l = readlink(fdpath, path, sizeof path - 1);
				path[l > 0 ? l : 0] = '\0';
				close(m->fd);
			}
			for (int i = 0; i < npids; i++) {
				if (m->pid != pids[i])
					continue;
				n++;
				size_t used = strlen(what);
				if (used + strlen(path) + 2 < len && !strstr(what, path))
					snprintf(what + used, len - used, " %s", path);
			}
		}
	}
	if (w->fan >= 0)
		return n;
	while ((got = read(w->ino, buf, sizeof buf)) > 0) {
		for (char *q = buf; q < buf + got;) {
			struct inotify_event *ev = (struct inotify_event *)q;
			if (ev->len && strncmp(ev->name, prefix, strlen(prefix)) == 0)
				n++;
			q += sizeof *ev + ev->len;
		}
	}
	snprintf(what, len, " (decoys, seen by inotify)");
	return n;
}

START_TEST(item4_decoys_not_opened_at_start)
{
	begin("item4_decoys_not_opened_at_start");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char line[512], prefix[64] = "", what[512];
	struct proc b = start_attacker("decoy", "-n", "100", NULL);
	const char *p = strstr(b.ready, "prefix=");
	if (p)
		sscanf(p + 7, "%63s", prefix);
	ck_assert_msg(prefix[0] && field(b.ready, "decoys", 0) > 0, "no decoys planted: %s",
	              b.ready);

	/* From now on, every look into /dev/shm. */
	struct shm_watch w = watch_shm();
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-c", "3", "-a", "20", NULL};
	const struct user *who[] = {&user_a, as_root};
	pid_t pids[2] = {0, 0};
	for (int i = 0; i < 2; i++) {
		struct proc v = start_proc(who[i], argv, 0);
		pids[i] = v.c.pid;
		run_to_end(&v, "iso done", line, sizeof line, i ? "root's program" : "A's program");
	}
	long opened = shm_opens(&w, pids, 2, prefix, what, sizeof what);
	if (opened)
		problem("starting two programs (of A, of root) looked into /dev/shm %ld times:%s",
		        opened, what);
	if (w.fan >= 0)
		close(w.fan);
	close(w.ino);
	say(b.in, "quit\n");
	int status;
	wait_bounded(b.c.pid, 5000, &status);
	end_proc(&b);
	assert_no_problems();
}
END_TEST

/* ---- item 5: predicted names --------------------------------------------- */

START_TEST(item5_predicted_names_squatted)
{
	begin("item5_predicted_names_squatted");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64], line[512], vpid[16], cpid[16], apid[16], ctls[64];
	make_secret(secret, sizeof secret, "item5");

	/* Every process is forked and held before exec: B knows their pids
	 * and start times as it would guess them. */
	char *vargv[] = {(char *)in_dir(staging, "iso_victim"), "-s", secret, "-k", "inherited",
	                 "-c", "2", "-H", "0", "-a", "30", NULL};
	struct proc v = start_proc(&user_a, vargv, 1);
	snprintf(vpid, sizeof vpid, "%d", (int)v.c.pid);
	char *cargv[] = {(char *)in_dir(staging, "iso_ctl"), "-p", vpid, "-a", "20", NULL};
	struct proc c = start_proc(&user_a, cargv, 1);
	snprintf(cpid, sizeof cpid, "%d", (int)c.c.pid);
	const char *dir = new_dir(0700, -1, 0);
	char *att[12], pidbuf[16];
	attach_argv(att, built("posixtrace"), pidbuf, sizeof pidbuf, v.c.pid,
	            in_dir(dir, "attach.ptlog"), "1");
	struct spawn o = {.in = -1, .out = -1, .err = -1, .extra = -1, .hold = 1};
	struct child a = start(&o, att);
	snprintf(apid, sizeof apid, "%d", (int)a.pid);
	snprintf(ctls, sizeof ctls, "%s,%s,%s", vpid, cpid, apid);
	struct proc b = start_attacker("squat", "-v", vpid, "-p", ctls, "-n", "32", NULL);

	release(&v.c);
	if (!expect_line(v.out, "iso create=", line, sizeof line, 10000))
		problem("A's program did not create its stream (%s)", v.out->seen);
	else if (strcmp(line, "iso create=0") != 0)
		problem("A's own POSIX_TRACE_INHERITED posix_trace_create returned %s "
		        "(12 = ENOMEM: names squatted by B)", line + 11);

	release(&c.c);
	if (yama_restricts()) {
		printf("t_isolation: %s: another process of A may not trace A's program here "
		       "(Yama ptrace_scope): that part skipped\n", test_name);
	} else if (!expect_line(c.out, "created", line, sizeof line, 10000)) {
		problem("A's controller did not answer (%s)", c.out->seen);
	} else if (strcmp(line, "created err=0") != 0) {
		problem("posix_trace_create(%s) by another process of A: %s", vpid, line + 8);
	}
	close(c.in);
	c.in = -1;
	expect_exit0(c.c.pid, 10000, "A's controller");
	end_proc(&c);

	release(&a);
	expect_exit0(a.pid, 15000, "root's posixtrace attach");

	say(v.in, "g");
	expect_exit0(v.c.pid, 10000, "A's program");
	end_proc(&v);
	say(b.in, "quit\n");
	int status;
	wait_bounded(b.c.pid, 5000, &status);
	end_proc(&b);
	assert_no_problems();
}
END_TEST

/* ---- item 7: the target resizes what its controller maps ------------------ */

/* The target: user A's iso_victim posting warm-up events until its stdin
 * says go, then 20 events, its resize attempts, 20 more after a byte. */
static struct proc start_target(const char *secret)
{
	char *argv[] = {(char *)in_dir(staging, "iso_victim"), "-s", (char *)secret, "-W", "2000",
	                "-w", "0", "-c", "20", "-T", "-g", "0", "-C", "20", "-a", "30", NULL};
	struct proc t = start_proc(&user_a, argv, 0);
	char line[512];
	ck_assert_msg(expect_line(t.out, "iso start", line, sizeof line, 10000),
	              "the target did not start: %s", t.out->seen);
	return t;
}

/* Lets the target post, resize and post again; notes what it could do. */
static void run_target(struct proc *t)
{
	char line[2048];
	say(t->in, "g");
	if (!expect_line(t->out, "iso resize", line, sizeof line, 10000)) {
		problem("the target did not report its resize attempts (%s)", t->out->seen);
	} else if (field(line, "succeeded", -1) != 0) {
		const char *what = strchr(strstr(line, "succeeded="), ' ');
		problem("the target resized the memory its controller maps %ld times of %ld:%.400s",
		        field(line, "succeeded", -1), field(line, "tried", -1), what ? what : "");
	}
	say(t->in, "g");
	if (!expect_line(t->out, "iso done", line, sizeof line, 10000))
		problem("the target did not post its second batch");
	expect_exit0(t->c.pid, 10000, "the target");
}

static void check_target_log(const char *log, pid_t target, const char *secret)
{
	struct log_count c = count_log(log, target, secret);
	if (c.open_err)
		problem("posix_trace_open of the controller's log: %s", strerror(c.open_err));
	else if (c.with_secret != 40)
		problem("the controller's log holds %ld of the target's 40 events", c.with_secret);
}

START_TEST(item7_target_cannot_resize_library_controller)
{
	begin("item7_target_cannot_resize_library_controller");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64];
	make_secret(secret, sizeof secret, "item7l");
	const char *log = in_dir(new_dir(0700, -1, 0), "lib.ptlog");
	struct proc t = start_target(secret);

	/* Root's controller: a child of the test that uses the library. */
	int rep[2], cmd[2];
	pipe_cloexec(rep);
	pipe_cloexec(cmd);
	pid_t ctl = fork_child();
	if (ctl == 0) {
		close(t.in); /* the target's pipes are not the controller's */
		close(t.out->fd);
		signal(SIGPIPE, SIG_DFL);
		trace_id_t trid;
		char c;
		int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int err = fd < 0 ? errno : posix_trace_create_withlog(t.c.pid, NULL, fd, &trid);
		dprintf(rep[1], "created %d\n", err);
		if (err)
			_exit(1);
		dprintf(rep[1], "started %d\n", posix_trace_start(trid));
		if (read(cmd[0], &c, 1) < 0)
			_exit(2);
		dprintf(rep[1], "shutdown %d\n", posix_trace_shutdown(trid));
		_exit(0);
	}
	close(rep[1]);
	close(cmd[0]);
	struct lines *l = malloc(sizeof *l);
	char line[512];
	lines_init(l, rep[0]);
	ck_assert_msg(expect_line(l, "started 0", line, sizeof line, 10000),
	              "root's controller could not trace the target: %s", l->seen);

	run_target(&t);
	end_proc(&t);
	say(cmd[1], "s");
	if (!expect_line(l, "shutdown", line, sizeof line, 10000))
		problem("root's controller did not shut its stream down (%s)", l->seen);
	else if (strcmp(line, "shutdown 0") != 0)
		problem("root's controller: posix_trace_shutdown returned %s", line + 9);
	expect_exit0(ctl, 10000, "root's library controller");
	close(cmd[1]);
	close(rep[0]);
	free(l);
	check_target_log(log, t.c.pid, secret);
	assert_no_problems();
}
END_TEST

/* Whether process pid maps a stream: a memfd posixtrace-stream or a
 * /dev/shm object of the library. */
static int maps_stream(pid_t pid)
{
	char path[64], line[1024];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *f = fopen(path, "r");
	int found = 0;
	while (f && !found && fgets(line, sizeof line, f))
		found = strstr(line, "posixtrace-stream") || strstr(line, "/dev/shm/posixtrace.");
	if (f)
		fclose(f);
	return found;
}

START_TEST(item7_target_cannot_resize_attach_command)
{
	begin("item7_target_cannot_resize_attach_command");
	const char *why = need_users();
	if (why)
		SKIP("%s", why);
	stage();
	char secret[64];
	make_secret(secret, sizeof secret, "item7a");
	const char *dir = new_dir(0700, -1, 0);
	const char *log = in_dir(dir, "attach.ptlog");
	struct proc t = start_target(secret);

	char *att[12], pidbuf[16];
	attach_argv(att, built("posixtrace"), pidbuf, sizeof pidbuf, t.c.pid, log, "25");
	int out = open(in_dir(dir, "attach.out"), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(out, 0);
	struct spawn o = {.in = -1, .out = out, .err = out, .extra = -1};
	struct child a = start(&o, att);
	close(out);
	/* The command has started the stream once the target, which posts
	 * all the time, maps it. */
	int mapped = 0;
	for (int i = 0; i < 1000 && !mapped; i++) {
		usleep(10000);
		mapped = maps_stream(t.c.pid);
	}
	ck_assert_msg(mapped, "the target never mapped a stream of posixtrace attach");
	pt_sleep_ms(300);

	run_target(&t);
	end_proc(&t);
	kill(a.pid, SIGINT);
	expect_exit0(a.pid, 10000, "root's posixtrace attach (ended with SIGINT)");
	check_target_log(log, t.c.pid, secret);
	if (problems[0]) {
		char text[512] = "";
		int fd = open(in_dir(dir, "attach.out"), O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, text, sizeof text - 1);
			text[n > 0 ? n : 0] = '\0';
			close(fd);
		}
		problem("attach said: %s", text);
	}
	assert_no_problems();
}
END_TEST

/* ---- item 8: a dead keeper ------------------------------------------------ */

/* Whether a /dev/shm entry named *posixtrace* has pid as one of the
 * numbers of its name. */
static int shm_names_pid(pid_t pid)
{
	DIR *d = opendir("/dev/shm");
	struct dirent *e;
	char num[16];
	int found = 0;
	snprintf(num, sizeof num, "%d", (int)pid);
	while (d && !found && (e = readdir(d))) {
		if (!strstr(e->d_name, "posixtrace"))
			continue;
		char name[256], *save = NULL;
		snprintf(name, sizeof name, "%s", e->d_name);
		for (char *t = strtok_r(name, ".-_", &save); t && !found; t = strtok_r(NULL, ".-_", &save))
			found = strcmp(t, num) == 0;
	}
	if (d)
		closedir(d);
	return found;
}

/* Kills this process's keeper (SIGKILL) and waits until it is dead. */
static int kill_keeper(int rep, pid_t *keeper)
{
	int keepers = 0;
	for (int i = 0; i < 200 && keepers != 1; i++) { /* it may not be named yet */
		keepers = pt_procs_named(getpid(), "posixtrace-keep", keeper);
		if (keepers != 1)
			usleep(10000);
	}
	dprintf(rep, "keeper %d of %d\n", (int)*keeper, keepers);
	if (keepers != 1)
		return -1;
	kill(*keeper, SIGKILL);
	/* Until the keeper is dead: a zombie (its descriptors closed; waitid
	 * says so without reaping it, as the library's child), or reaped by
	 * the library.  A killed sanitized process can take more than a
	 * second to unmap its shadow memory. */
	for (int i = 0; i < 5000; i++) {
		siginfo_t si = {0};
		if (waitid(P_PID, (id_t)*keeper, &si, WEXITED | WNOHANG | WNOWAIT) != 0 ||
		    si.si_pid == *keeper)
			break;
		usleep(2000);
	}
	return 0;
}

/* The controller: each step is reported before it runs, so that a signal
 * names the call it came from. */
static void dead_keeper_controller(const char *log, int rep)
{
	signal(SIGPIPE, SIG_DFL); /* default dispositions, as a program has */
	trace_id_t trid;
	trace_event_id_t id;
	struct posix_trace_status_info st;
	pid_t keeper = 0;
	int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || posix_trace_eventid_open("iso.keeper", &id) != 0 ||
	    posix_trace_create_withlog(0, NULL, fd, &trid) != 0 || posix_trace_start(trid) != 0)
		_exit(2);
	for (int i = 0; i < 10; i++)
		posix_trace_event(id, &i, sizeof i);
	/* The keeper dies before posix_trace_clear, then again before
	 * posix_trace_flush: clear still returns 0 (its page allows EINVAL
	 * only) and reinitialises the log; flush returns EIO and the log says
	 * where the events went missing. */
	if (kill_keeper(rep, &keeper) != 0)
		_exit(3);
	for (int i = 10; i < 20; i++)
		posix_trace_event(id, &i, sizeof i);
	dprintf(rep, "step clear\n");
	dprintf(rep, "clear %d\n", posix_trace_clear(trid));
	if (kill_keeper(rep, &keeper) != 0)
		_exit(3);
	for (int i = 20; i < 30; i++)
		posix_trace_event(id, &i, sizeof i);
	dprintf(rep, "step flush\n");
	dprintf(rep, "flush %d\n", posix_trace_flush(trid));
	dprintf(rep, "step shutdown\n");
	dprintf(rep, "shutdown %d\n", posix_trace_shutdown(trid));
	dprintf(rep, "status %d\n", posix_trace_get_status(trid, &st));
	int left = 1;
	for (int i = 0; i < 200 && left; i++) {
		left = pt_procs_named(getpid(), "posixtrace-keep", NULL);
		if (left)
			usleep(10000);
	}
	dprintf(rep, "keepers %d\n", left);
	dprintf(rep, "shm %d\n", shm_names_pid(getpid()) || shm_names_pid(keeper));
	_exit(0);
}

START_TEST(item8_dead_keeper_is_an_error_number)
{
	begin("item8_dead_keeper_is_an_error_number");
	const char *log = in_dir(new_dir(0700, -1, 0), "keeper.ptlog");
	int rep[2];
	pipe_cloexec(rep);
	pid_t ctl = fork_child();
	if (ctl == 0)
		dead_keeper_controller(log, rep[1]);
	close(rep[1]);
	struct lines *l = malloc(sizeof *l);
	char line[256], step[64] = "start";
	long flush = -1, clear = -1, shutdown = -1, status = -1, keepers = -1, shm = -1;
	lines_init(l, rep[0]);
	int st = 0, ended = wait_bounded(ctl, 25000, &st);
	/* then what it said (a keeper may hold the pipe open: no EOF) */
	while (next_line(l, line, sizeof line, 100)) {
		sscanf(line, "step %63s", step);
		sscanf(line, "flush %ld", &flush);
		sscanf(line, "clear %ld", &clear);
		sscanf(line, "shutdown %ld", &shutdown);
		sscanf(line, "status %ld", &status);
		sscanf(line, "keepers %ld", &keepers);
		sscanf(line, "shm %ld", &shm);
	}
	char how[96];
	if (!ended) {
		problem("the controller hung at step %s", step);
	} else if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		problem("not one child process named posixtrace-keep after "
		        "posix_trace_create_withlog (%s)", l->seen);
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		pt_describe_status(st, how, sizeof how);
		problem("the controller (%s) ended with %s at step %s", l->seen, how, step);
	} else {
		if (flush != EIO)
			problem("posix_trace_flush after the keeper's death returned %ld, not EIO",
			        flush);
		if (clear != 0)
			problem("posix_trace_clear returned %ld, not 0", clear);
		if (shutdown != 0 && shutdown != EIO)
			problem("posix_trace_shutdown returned %ld, not 0 or EIO", shutdown);
		if (status != EINVAL)
			problem("posix_trace_get_status after shutdown returned %ld, not EINVAL",
			        status);
		if (keepers != 0)
			problem("%ld keeper processes (or zombies) left after shutdown", keepers);
		if (shm != 0)
			problem("a /dev/shm object named *posixtrace* of the controller or keeper "
			        "is left");
		struct log_count c = count_log(log, 0, NULL);
		if (c.open_err)
			problem("posix_trace_open of the log: %s", strerror(c.open_err));
		else if (c.errors == 0)
			problem("the log (%ld events) holds no POSIX_TRACE_ERROR event", c.events);
	}
	close(rep[0]);
	free(l);
	assert_no_problems();
}
END_TEST

/* ---- item 9: streams larger than the memory allowed ----------------------- */

#define BIG_STREAM (256 * MIB)

/* In a child: posix_trace_create and posix_trace_create_withlog of a
 * BIG_STREAM stream; each result is reported before the next step. */
static void big_streams(const char *log, int rep)
{
	trace_attr_t attr;
	trace_id_t trid;
	if (posix_trace_attr_init(&attr) != 0 ||
	    posix_trace_attr_setstreamsize(&attr, (size_t)BIG_STREAM) != 0)
		_exit(2);
	dprintf(rep, "step create\n");
	int err = posix_trace_create(0, &attr, &trid);
	dprintf(rep, "create %d\n", err);
	if (!err)
		posix_trace_shutdown(trid);
	int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		_exit(3);
	dprintf(rep, "step withlog\n");
	err = posix_trace_create_withlog(0, &attr, fd, &trid);
	dprintf(rep, "withlog %d\n", err);
	if (!err)
		posix_trace_shutdown(trid);
	_exit(0);
}

static void check_big_streams(pid_t pid, int rep_fd, const char *limit)
{
	struct lines *l = malloc(sizeof *l);
	char line[256], step[64] = "start";
	long create = -1, withlog = -1;
	lines_init(l, rep_fd);
	int st = 0, ended = wait_bounded(pid, 15000, &st);
	while (next_line(l, line, sizeof line, 100)) {
		sscanf(line, "step %63s", step);
		sscanf(line, "create %ld", &create);
		sscanf(line, "withlog %ld", &withlog);
	}
	char how[96];
	if (!ended) {
		problem("with %s, a %ld MiB stream hung at step %s", limit, BIG_STREAM / MIB, step);
	} else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		pt_describe_status(st, how, sizeof how);
		problem("with %s, the process asking for a %ld MiB stream ended with %s at step %s",
		        limit, BIG_STREAM / MIB, how, step);
	} else {
		if (create != ENOMEM)
			problem("with %s, posix_trace_create of %ld MiB returned %ld, not ENOMEM",
			        limit, BIG_STREAM / MIB, create);
		if (withlog != ENOMEM)
			problem("with %s, posix_trace_create_withlog of %ld MiB returned %ld, not "
			        "ENOMEM", limit, BIG_STREAM / MIB, withlog);
	}
	free(l);
}

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* A new memory cgroup under this process's own, limited to `bytes`
 * (swap included); its directory goes to left->cgroup.  NULL or a reason. */
static const char *make_memory_cgroup(long bytes)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[1024], rel[900] = "", limit[32];
	int v1 = 0, v2 = 0;
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\n")] = '\0';
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		char *ctrls = c1 + 1;
		if (!strcmp(ctrls, "memory") || strstr(ctrls, "memory,") || strstr(ctrls, ",memory")) {
			snprintf(rel, sizeof rel, "%s", c2 + 1);
			v1 = 1;
		} else if (!v1 && line[0] == '0' && ctrls[0] == '\0') {
			snprintf(rel, sizeof rel, "%s", c2 + 1);
			v2 = 1;
		}
	}
	if (f)
		fclose(f);
	snprintf(limit, sizeof limit, "%ld", bytes);
	if (v1) {
		snprintf(left->cgroup, sizeof left->cgroup, "/sys/fs/cgroup/memory%s/ptiso-%d",
		         strcmp(rel, "/") ? rel : "", (int)getpid());
		if (mkdir(left->cgroup, 0755) != 0) {
			left->cgroup[0] = '\0';
			return "cannot create a memory cgroup (v1)";
		}
		if (write_text(in_dir(left->cgroup, "memory.limit_in_bytes"), limit) != 0)
			return "cannot set memory.limit_in_bytes";
		/* Without swap in the limit, shmem could go to swap instead. */
		write_text(in_dir(left->cgroup, "memory.memsw.limit_in_bytes"), limit);
		return NULL;
	}
	if (v2) {
		snprintf(left->cgroup, sizeof left->cgroup, "/sys/fs/cgroup%s/ptiso-%d",
		         strcmp(rel, "/") ? rel : "", (int)getpid());
		if (mkdir(left->cgroup, 0755) != 0) {
			left->cgroup[0] = '\0';
			return "cannot create a cgroup (v2)";
		}
		if (write_text(in_dir(left->cgroup, "memory.max"), limit) != 0)
			return "no memory controller in the new cgroup (v2)";
		write_text(in_dir(left->cgroup, "memory.swap.max"), "0");
		return NULL;
	}
	return "no memory controller";
}

START_TEST(item9_stream_larger_than_memcg_is_enomem)
{
	begin("item9_stream_larger_than_memcg_is_enomem");
	if (geteuid() != 0)
		SKIP("not root: cannot create a memory cgroup");
	const char *why = make_memory_cgroup(64 * MIB);
	if (why)
		SKIP("%s", why);
	const char *log = in_dir(new_dir(0700, -1, 0), "big.ptlog");
	int rep[2], go[2];
	pipe_cloexec(rep);
	pipe_cloexec(go);
	pid_t pid = fork_child();
	if (pid == 0) {
		char c;
		if (read(go[0], &c, 1) != 1)
			_exit(4);
		big_streams(log, rep[1]);
	}
	close(rep[1]);
	close(go[0]);
	char spid[16];
	snprintf(spid, sizeof spid, "%d", (int)pid);
	ck_assert_msg(write_text(in_dir(left->cgroup, "cgroup.procs"), spid) == 0,
	              "cannot move the child into %s", left->cgroup);
	say(go[1], "g");
	close(go[1]);
	check_big_streams(pid, rep[0], "a 64 MiB memory cgroup");
	close(rep[0]);
	assert_no_problems();
}
END_TEST

static long vm_size_bytes(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kb = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "VmSize: %ld kB", &kb) == 1)
			break;
	if (f)
		fclose(f);
	return kb * 1024;
}

START_TEST(item9_stream_larger_than_rlimit_as_is_enomem)
{
	begin("item9_stream_larger_than_rlimit_as_is_enomem");
	const char *log = in_dir(new_dir(0700, -1, 0), "big.ptlog");
	int rep[2];
	pipe_cloexec(rep);
	pid_t pid = fork_child();
	if (pid == 0) {
		long size = vm_size_bytes();
		struct rlimit rl = {(rlim_t)(size + 32 * MIB), (rlim_t)(size + 32 * MIB)};
		if (size <= 0 || setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(5);
		big_streams(log, rep[1]);
	}
	close(rep[1]);
	check_big_streams(pid, rep[0], "RLIMIT_AS 32 MiB above the process's size");
	close(rep[0]);
	assert_no_problems();
}
END_TEST

/* ---- item 10: crafted logs ------------------------------------------------ */

#define OPEN_BOUND_MS 15000 /* catches only the old minute-long behaviour */
#define RSS_BOUND_KB (32 * 1024)

/* A real log of `events` events, written by a child; attr may be NULL. */
static void make_log(const char *path, const trace_attr_t *attr, int events)
{
	pid_t pid = fork_child();
	if (pid == 0) {
		trace_id_t trid;
		trace_event_id_t id;
		char data[64];
		int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || posix_trace_eventid_open("iso.log", &id) != 0 ||
		    posix_trace_create_withlog(0, attr, fd, &trid) != 0 ||
		    posix_trace_start(trid) != 0)
			_exit(2);
		for (int i = 0; i < events; i++) {
			int len = snprintf(data, sizeof data, "crafted log event %d", i);
			posix_trace_event(id, data, (size_t)len);
		}
		_exit(posix_trace_shutdown(trid) ? 3 : 0);
	}
	int status = 0;
	ck_assert_msg(wait_bounded(pid, 10000, &status) && WIFEXITED(status) &&
	                      WEXITSTATUS(status) == 0,
	              "writing the log %s failed (status 0x%x)", path, status);
}

/* posix_trace_open of path and reading to its end, in a child with a
 * bound: notes hangs, signals, and memory growth beyond RSS_BOUND_KB. */
static void open_crafted(const char *path, const char *what)
{
	int rep[2];
	pipe_cloexec(rep);
	pid_t pid = fork_child();
	if (pid == 0) {
		struct rusage before, after;
		static char data[65536];
		long events = 0;
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		trace_id_t trid;
		getrusage(RUSAGE_SELF, &before);
		int err = fd < 0 ? errno : posix_trace_open(fd, &trid);
		while (!err && events < 50000000) {
			struct posix_trace_event_info info;
			size_t len;
			int unavailable = 0;
			if (posix_trace_getnext_event(trid, &info, data, sizeof data, &len,
			                              &unavailable) != 0 || unavailable)
				break;
			events++;
		}
		getrusage(RUSAGE_SELF, &after);
		dprintf(rep[1], "open %d events %ld grew %ld\n", err, events,
		        after.ru_maxrss - before.ru_maxrss);
		_exit(0);
	}
	close(rep[1]);
	int status = 0;
	char how[96], line[256] = "";
	if (!wait_bounded(pid, OPEN_BOUND_MS, &status)) {
		problem("posix_trace_open and reading %s took more than %d ms", what,
		        OPEN_BOUND_MS);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		pt_describe_status(status, how, sizeof how);
		problem("reading %s: %s", what, how);
	} else {
		ssize_t n = read(rep[0], line, sizeof line - 1);
		line[n > 0 ? n : 0] = '\0';
		long err = -1, events = -1, grew = -1;
		sscanf(line, "open %ld events %ld grew %ld", &err, &events, &grew);
		printf("t_isolation: %s: %s: %s", test_name, what, line);
		if (grew < 0 || grew >= RSS_BOUND_KB)
			problem("reading %s grew the reader's resident memory by %ld KiB "
			        "(%ld events found)", what, grew, events);
	}
	close(rep[0]);
}

START_TEST(item10_huge_ring_claim_opens_fast)
{
	begin("item10_huge_ring_claim_opens_fast");
	const char *log = in_dir(new_dir(0700, -1, 0), "huge.ptlog");
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_LOOP));
	int err = posix_trace_attr_setlogsize(&attr, (size_t)1 << 40);
	if (err)
		SKIP("posix_trace_attr_setlogsize(1 TiB) refused: %s", strerror(err));
	make_log(log, &attr, 10);
	if (truncate(log, (off_t)1 << 40) != 0)
		SKIP("this file system cannot hold a 1 TiB sparse file: %s", strerror(errno));
	open_crafted(log, "a log claiming a 1 TiB ring, sparse to 1 TiB");
	assert_no_problems();
}
END_TEST

static off_t size_of(const char *path)
{
	struct stat st;
	ck_assert_int_eq(stat(path, &st), 0);
	return st.st_size;
}

START_TEST(item10_zero_tail_sparse)
{
	begin("item10_zero_tail_sparse");
	const char *log = in_dir(new_dir(0700, -1, 0), "sparse.ptlog");
	make_log(log, NULL, 100);
	ck_assert_int_eq(truncate(log, size_of(log) + 128 * MIB), 0);
	open_crafted(log, "a log followed by a 128 MiB hole");
	assert_no_problems();
}
END_TEST

START_TEST(item10_zero_tail_written)
{
	begin("item10_zero_tail_written");
	const char *log = in_dir(new_dir(0700, -1, 0), "zeros.ptlog");
	make_log(log, NULL, 100);
	int fd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	static char zeros[1 << 20];
	for (int i = 0; i < 128; i++)
		ck_assert_int_eq(write(fd, zeros, sizeof zeros), (ssize_t)sizeof zeros);
	close(fd);
	open_crafted(log, "a log followed by 128 MiB of written zeros");
	assert_no_problems();
}
END_TEST

START_TEST(item10_repeated_blocks)
{
	begin("item10_repeated_blocks");
	const char *log = in_dir(new_dir(0700, -1, 0), "repeat.ptlog");
	make_log(log, NULL, 100);
	/* The log's own bytes after its first 4 KiB (half of it when shorter),
	 * appended again and again: whole blocks, valid checksums. */
	off_t size = size_of(log), from = size > 8192 ? 4096 : size / 2;
	size_t len = (size_t)(size - from);
	char *tail = malloc(len);
	ck_assert_ptr_nonnull(tail);
	int fd = open(log, O_RDWR | O_APPEND | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(pread(fd, tail, len, from), (ssize_t)len);
	for (off_t added = 0; added < 64 * MIB; added += (off_t)len)
		ck_assert_int_eq(write(fd, tail, len), (ssize_t)len);
	close(fd);
	free(tail);
	open_crafted(log, "a log followed by 64 MiB of copies of its own blocks");
	assert_no_problems();
}
END_TEST

/* ---- the suite ------------------------------------------------------------ */

static TCase *tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = pt_tcase_fixture(s, name, setup, teardown);
	tcase_set_timeout(tc, timeout);
	return tc;
}

int main(int argc, char **argv)
{
	if (argc == 6 && strcmp(argv[1], "--flood-others") == 0)
		return flood_chain_main(argv);
	Suite *s = suite_create("isolation");
	TCase *tc = tcase(s, "planted", 40);
	tcase_add_test(tc, item1_planted_inherited_stream_ignored);
	tcase_add_test(tc, item1_planted_streams_leave_slots_free);
	tcase_add_test(tc, item3_fifo_in_dev_shm_no_hang);
	tcase_add_test(tc, item4_decoys_not_opened_at_start);
	tcase_add_test(tc, item5_predicted_names_squatted);
	tc = tcase(s, "trust", 40);
	tcase_add_test(tc, item2_setuid_program_not_recorded);
	tcase_add_test(tc, item2_setgid_program_not_recorded);
	tcase_add_test(tc, item2_filecap_program_not_recorded);
	tcase_add_test(tc, item2_foreign_stream_descriptor_not_joined);
	tcase_add_test(tc, tree_forged_block_closes_no_file);
	tcase_add_test(tc, rendezvous_of_another_user_not_followed);
	tcase_add_test(tc, tree_of_several_users_shares_nothing);
	tcase_add_test(tc, tree_member_without_library_opens_nothing);
	tcase_add_test(tc, root_traces_worker_that_dropped_privileges);
	tcase_add_test(tc, rendezvous_join_socket_is_the_streams_users);
	tcase_add_test(tc, root_traced_users_children_follow);
	/* Its own case: the soak runs it alone at full size. */
	tc = tcase(s, "others_flood", 150);
	tcase_add_test(tc, rendezvous_others_flood_costs_no_join);
	tc = tcase(s, "resize", 40);
	tcase_add_test(tc, item7_target_cannot_resize_library_controller);
	tcase_add_test(tc, item7_target_cannot_resize_attach_command);
	tc = tcase(s, "errors", 30);
	tcase_add_test(tc, item8_dead_keeper_is_an_error_number);
	tcase_add_test(tc, item9_stream_larger_than_memcg_is_enomem);
	tcase_add_test(tc, item9_stream_larger_than_rlimit_as_is_enomem);
	tc = tcase(s, "logs", 40);
	tcase_add_test(tc, item10_huge_ring_claim_opens_fast);
	tcase_add_test(tc, item10_zero_tail_sparse);
	tcase_add_test(tc, item10_zero_tail_written);
	tcase_add_test(tc, item10_repeated_blocks);
	return pt_run(s);
}
