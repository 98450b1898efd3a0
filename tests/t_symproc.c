/* SPDX-License-Identifier: MIT */
/*
 * t_symproc: posixtrace(1)'s confined symbolizer (tools/symproc.c).  The
 * files a log's images name are read by a child of the command, with the
 * rights of whoever may have written the log, and the command survives
 * whatever that child does.
 *
 * Checked, without privileges: whose claims a log is, from its owner and
 * mode, and which user an image is read as (never root); replies of a
 * child out of the protocol (another request's number, a string with a
 * NUL inside or without its end, longer than allowed, a note that is not
 * printable, bytes left over, names beside an error) are refused.
 * Checked as root, with two users the test creates (SKIPPED otherwise),
 * on logs of a real program (helper symproc_app: many events of its own,
 * then one of a plug-in, one of a library, tests/cli/sym/):
 *  (a) a log of user A naming a root-only program (0700 in a 0700 root
 *      directory) with its right build id: root's dump names none of its
 *      functions, and its note tells neither the file's build id, owner
 *      nor size;
 *  (b) a root log whose images' user is unknown is read as nobody: a
 *      root-only copy of the program gives no names, a readable one does;
 *  (c) the child, which runs as A, with NO_NEW_PRIVS, no core, no
 *      environment and only its socket open, is stopped by A (SIGSTOP)
 *      while idle: dump still ends (its deadline, --symbol-timeout 2)
 *      with status 0, the plug-in unnamed with one note "symbols given up
 *      (time budget)", the program's and the library's events named;
 *  (d) the child killed (by A) while the command waits for its answer
 *      costs only that image (one note, "the symbolizer failed"), not
 *      the command nor the images after it.
 * And, as anyone: a crafted log of 200,000 distinct call sites in one
 * claimed image (whose file need not exist) costs dump and stats little
 * memory (under 128 MiB of peak RSS more than with --no-symbols; about
 * 5.9 KB a site, 1.2 GB, before sites were kept by their size).
 * And the demangler the child runs on names of the files: C++ names
 * demangled, anything else (not mangled, not valid, longer than
 * DEMANGLE_INPUT_MAX, a result longer than the room) as it is, and hostile
 * names of at most DEMANGLE_INPUT_MAX bytes (deep nesting) end.  And
 * who has rights over other users (root, but not root of a user namespace
 * that maps one uid alone).  And posixtrace archive copies only what the
 * log's claimant may read (a root-only program, /etc/shadow: not copied).
 */
#include "harness.h"

#include <grp.h>
#include <pwd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "../tools/demangle.h"
#include "../tools/symproc.h"
#include "logv3.h"

#define USER_A "ptsym_a"
#define USER_B "ptsym_b"
#define MAIN_EVENTS 3000 /* dump's output of them is many times a pipe's 4 KiB */

static const char *dir;

static void setup(void)
{
	dir = pt_scratch_dir("t_symproc");
	ck_assert_int_eq(chmod(dir, 0755), 0); /* the users' files are in it */
	pt_children_setup();
}

static void teardown(void)
{
	pt_kill_children();
	pt_remove_tree(dir);
}

/* ---- without privileges ------------------------------------------------ */

static struct stat log_stat(uid_t uid, mode_t mode)
{
	struct stat st;
	memset(&st, 0, sizeof st);
	st.st_uid = uid;
	st.st_mode = mode;
	return st;
}

START_TEST(whose_claims)
{
	const uid_t nobody = 65534;
	struct stat st = log_stat(0, S_IFREG | 0600);
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), SYMPROC_PER_IMAGE);
	st = log_stat(0, S_IFREG | 0644);
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), SYMPROC_PER_IMAGE);
	st = log_stat(0, S_IFREG | 0620); /* a group may have written it */
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), nobody);
	st = log_stat(1001, S_IFREG | 0600);
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), 1001);
	st = log_stat(1001, S_IFREG | 0660);
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), 1001);
	st = log_stat(1001, S_IFREG | 0602); /* anyone may have written it */
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), nobody);
	st = log_stat(0, S_IFIFO | 0600); /* a pipe: whoever fed it */
	ck_assert_uint_eq(symproc_log_claimant(&st, nobody), nobody);

	struct posixtrace_image img;
	memset(&img, 0, sizeof img);
	img.posixtrace_uid = 1002;
	ck_assert_uint_eq(symproc_reader(SYMPROC_PER_IMAGE, &img, nobody), 1002);
	ck_assert_uint_eq(symproc_reader(1001, &img, nobody), 1001); /* a user's log: all theirs */
	img.posixtrace_uid = POSIXTRACE_UID_UNKNOWN;
	ck_assert_uint_eq(symproc_reader(SYMPROC_PER_IMAGE, &img, nobody), nobody);
	img.posixtrace_uid = 0; /* root's own images in root's own log */
	ck_assert_uint_eq(symproc_reader(SYMPROC_PER_IMAGE, &img, nobody), 0);
	ck_assert_uint_eq(symproc_reader(0, &img, nobody), nobody); /* never by a log's claim */
}
END_TEST

/* A reply as a child builds it: function, inlined, file (NULL: absent),
 * then the notes. */
static size_t reply(unsigned char *buf, uint32_t seq, int err, const char *fn, const char *inl,
                    const char *file, const char *note)
{
	struct symproc_reply_head h = {.seq = seq, .err = err, .offset = 0x10, .line = 7};
	size_t at = sizeof h;
	const char *s[3] = {fn, inl, file};
	uint16_t *len[3] = {&h.function_len, &h.inlined_len, &h.file_len};
	for (int i = 0; i < 3; i++) {
		*len[i] = s[i] ? (uint16_t)strlen(s[i]) : 0xffff;
		if (s[i]) {
			memcpy(buf + at, s[i], strlen(s[i]) + 1);
			at += strlen(s[i]) + 1;
		}
	}
	if (note) {
		uint16_t n = (uint16_t)strlen(note);
		h.notes = 1;
		memcpy(buf + at, &n, sizeof n);
		memcpy(buf + at + 2, note, n + 1u);
		at += 2u + n + 1u;
	}
	memcpy(buf, &h, sizeof h);
	return at;
}

START_TEST(replies_checked)
{
	static unsigned char buf[1 << 16];
	struct symproc_reply r;
	size_t n = reply(buf, 5, 0, "main", NULL, "/src/a.c", "x: a note");
	ck_assert_int_eq(symproc_parse_reply(buf, n, 5, &r), 0);
	ck_assert_str_eq(r.site.function, "main");
	ck_assert_ptr_null(r.site.inlined);
	ck_assert_str_eq(r.site.file, "/src/a.c");
	ck_assert_int_eq(r.site.line, 7);
	ck_assert_uint_eq(r.notes, 1);
	ck_assert_str_eq(r.note[0], "x: a note");

	ck_assert_int_eq(symproc_parse_reply(buf, n, 6, &r), EPROTO);     /* another request's */
	ck_assert_int_eq(symproc_parse_reply(buf, n - 1, 5, &r), EPROTO); /* cut short */
	buf[n] = 'x';
	ck_assert_int_eq(symproc_parse_reply(buf, n + 1, 5, &r), EPROTO); /* a byte more */
	ck_assert_int_eq(symproc_parse_reply(buf, 3, 5, &r), EPROTO);     /* no head */

	n = reply(buf, 1, 0, "ma!n", NULL, NULL, NULL);
	buf[sizeof(struct symproc_reply_head) + 2] = '\0'; /* a NUL inside a name */
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), EPROTO);
	n = reply(buf, 1, 0, "main", NULL, NULL, NULL);
	buf[sizeof(struct symproc_reply_head) + 4] = 'x'; /* no end */
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), EPROTO);

	static char longname[SYMPROC_NAME_MAX + 2];
	memset(longname, 'f', SYMPROC_NAME_MAX + 1);
	n = reply(buf, 1, 0, longname, NULL, NULL, NULL);
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), EPROTO);
	longname[SYMPROC_NAME_MAX] = '\0';
	n = reply(buf, 1, 0, longname, NULL, NULL, NULL);
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), 0); /* the longest allowed */

	n = reply(buf, 1, 0, "main", NULL, NULL, "bell\a");
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), EPROTO);
	n = reply(buf, 1, ENOENT, "main", NULL, NULL, NULL); /* names beside an error */
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), EPROTO);
	n = reply(buf, 1, EPERM, NULL, NULL, NULL, NULL); /* not an error symbolize gives */
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), EPROTO);
	n = reply(buf, 1, ENOENT, NULL, NULL, NULL, "/x: no such file");
	ck_assert_int_eq(symproc_parse_reply(buf, n, 1, &r), 0);
	ck_assert_int_eq(r.err, ENOENT);
}
END_TEST

/* ---- users and files --------------------------------------------------- */

struct user {
	uid_t uid;
	gid_t gid;
};
static struct user user_a, user_b;

static int run_wait(char *const argv[], int timeout_ms)
{
	pid_t pid = pt_fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	pt_track(pid);
	int status = pt_wait_exit(pid, timeout_ms);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static bool ensure_user(const char *name, struct user *u)
{
	struct passwd *pw = getpwnam(name);
	if (!pw) {
		char *argv[] = {"/usr/sbin/useradd", "--system", "--no-create-home", "--shell",
		                "/usr/sbin/nologin", (char *)name, NULL};
		if (access(argv[0], X_OK) != 0)
			argv[0] = "/sbin/useradd";
		run_wait(argv, 15000);
		pw = getpwnam(name);
	}
	if (!pw || pw->pw_uid == 0)
		return false;
	u->uid = pw->pw_uid;
	u->gid = pw->pw_gid;
	return true;
}

/* NULL when both users are there, else why the test cannot run. */
static const char *need_users(void)
{
	if (geteuid() != 0)
		return "not root: cannot create users";
	if (!ensure_user(USER_A, &user_a) || !ensure_user(USER_B, &user_b) ||
	    user_a.uid == user_b.uid)
		return "cannot create the users " USER_A " and " USER_B " (useradd)";
	return NULL;
}

#define NEED_USERS(test)                                                          \
	do {                                                                      \
		const char *why_ = need_users();                                  \
		if (why_) {                                                       \
			fprintf(stderr, "%s: SKIPPED (%s)\n", test, why_);        \
			return;                                                   \
		}                                                                 \
	} while (0)

/* dir/name, valid for the next 15 calls */
static char *in_dir(const char *name)
{
	static char paths[16][PATH_MAX];
	static int next;
	char *p = paths[next++ % 16];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	ck_assert_msg(in >= 0, "%s: %s", from, strerror(errno));
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_msg(out >= 0, "%s: %s", to, strerror(errno));
	char buf[1 << 16];
	ssize_t n;
	while ((n = read(in, buf, sizeof buf)) > 0)
		ck_assert_int_eq(write(out, buf, (size_t)n), n);
	close(in);
	ck_assert_int_eq(fchmod(out, mode), 0);
	close(out);
}

/* The cli programs' plug-in and library (BUILD/tests/cli/sym). */
static const char *sym_file(const char *name)
{
	static char path[2][PATH_MAX];
	static int next;
	char *p = path[next++ % 2];
	int n = snprintf(p, PATH_MAX, "%s/../cli/sym/%s", pt_helpers_dir(), name);
	ck_assert_int_lt(n, PATH_MAX);
	ck_assert_msg(access(p, R_OK) == 0, "%s not found: build the tests", p);
	return p;
}

/* Records app (a copy of symproc_app) into log, as root, with its
 * plug-in and library copied beside it. */
static void record(const char *tool, const char *app, const char *log, int events)
{
	copy_file(sym_file("sym_plugin.so"), in_dir("sym_plugin.so"), 0755);
	copy_file(sym_file("libsymlib.so"), in_dir("libsymlib.so"), 0755);
	char n[16];
	snprintf(n, sizeof n, "%d", events);
	char *argv[] = {(char *)tool, "record", "-o", (char *)log, "--", (char *)app, n,
	                in_dir("sym_plugin.so"), in_dir("libsymlib.so"), NULL};
	ck_assert_int_eq(run_wait(argv, 30000), 0);
}

/* ---- dump, watched ------------------------------------------------------ */

struct dump {
	pid_t pid;
	int out;        /* its standard output (a pipe of 4 KiB) */
	char err[PATH_MAX];
	char *text;     /* what it printed */
	size_t len, cap;
	int status;
};

/* timeout: --symbol-timeout's value, NULL for the default */
static void start_dump(struct dump *d, const char *tool, const char *log, const char *timeout)
{
	int p[2];
	memset(d, 0, sizeof *d);
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_ge(fcntl(p[0], F_SETPIPE_SZ, 4096), 4096);
	snprintf(d->err, sizeof d->err, "%s", in_dir("dump.err"));
	d->pid = pt_fork();
	if (d->pid == 0) {
		int err = open(d->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		dup2(p[1], 1);
		dup2(err, 2);
		if (timeout)
			execl(tool, tool, "dump", "--symbol-timeout", timeout, log, (char *)NULL);
		else
			execl(tool, tool, "dump", log, (char *)NULL);
		_exit(127);
	}
	pt_track(d->pid);
	close(p[1]);
	d->out = p[0];
}

/* Reads what is there (without waiting); false at the end. */
static bool take_output(struct dump *d)
{
	for (;;) {
		if (d->cap - d->len < 65536) {
			d->cap = d->cap ? 2 * d->cap : 1 << 20;
			d->text = realloc(d->text, d->cap + 1);
			ck_assert_ptr_nonnull(d->text);
		}
		ssize_t n = read(d->out, d->text + d->len, d->cap - d->len);
		if (n > 0) {
			d->len += (size_t)n;
			d->text[d->len] = '\0';
			continue;
		}
		if (n == 0)
			return false;
		ck_assert_msg(errno == EAGAIN || errno == EINTR, "read: %s", strerror(errno));
		return true;
	}
}

/* Everything to the end, then the status (within 60 s). */
static void finish_dump(struct dump *d)
{
	fcntl(d->out, F_SETFL, 0);
	while (take_output(d))
		;
	close(d->out);
	d->status = pt_wait_exit(d->pid, 60000);
}

/* The symbolizer child of the dump (its only child), once there. */
static pid_t symbolizer_of(pid_t dump)
{
	pid_t child = 0;
	for (int i = 0; i < 2000 && pt_procs_named(dump, "posixtrace", &child) == 0; i++)
		usleep(10000);
	ck_assert_msg(child > 0, "no symbolizer child of dump %d", (int)dump);
	return child;
}

/* Waits until dump's output pipe is full: dump then waits to write, its
 * child for a request. */
static void wait_blocked_on_output(struct dump *d)
{
	int n = 0;
	for (int i = 0; i < 2000; i++) {
		ck_assert_int_eq(ioctl(d->out, FIONREAD, &n), 0);
		if (n >= 4096)
			return;
		usleep(10000);
	}
	ck_abort_msg("dump's output never filled its pipe (%d bytes)", n);
}

/* The system call pid waits in (/proc/PID/syscall's number), -1 running. */
static long waiting_in(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strncmp(buf, "running", 7) == 0 ? -1 : strtol(buf, NULL, 10);
}

/* kill(pid, sig) from a process of uid's: what that user may do to a
 * child that runs with their rights. */
static void kill_as(uid_t uid, pid_t pid, int sig)
{
	pid_t k = pt_fork();
	if (k == 0)
		_exit(setresuid(uid, uid, uid) == 0 && kill(pid, sig) == 0 ? 0 : 1);
	pt_track(k);
	int status = pt_wait_exit(k, 10000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%d could not signal %d",
	              (int)uid, (int)pid);
}

/* Lines of text holding both a and b. */
static int lines_with(const char *text, const char *a, const char *b)
{
	int n = 0;
	for (const char *l = text; l && *l;) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		char *line = strndup(l, len);
		n += strstr(line, a) && (!b || strstr(line, b));
		free(line);
		l = end ? end + 1 : NULL;
	}
	return n;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static void assert_named(const struct dump *d, const char *type, const char *function)
{
	int all = lines_with(d->text, type, NULL), named = lines_with(d->text, type, function);
	ck_assert_msg(all > 0 && named == all, "%s: %d of %d lines at %s:\n%.2000s", type, named,
	              all, function, d->text);
}

/* ---- as root, with users ------------------------------------------------ */

/* (a) A's log names root's own, unreadable program with its build id. */
START_TEST(user_log_names_root_only_file)
{
	NEED_USERS("user_log_names_root_only_file");
	const char *tool = pt_tool_path("user_log_names_root_only_file");
	if (!tool)
		return;
	const char *secret = in_dir("secret"), *app = in_dir("secret/symproc_app");
	ck_assert_int_eq(mkdir(secret, 0700), 0);
	copy_file(pt_helper_path("symproc_app"), app, 0700);
	record(tool, app, in_dir("a.ptlog"), 3);
	ck_assert_int_eq(chown(in_dir("a.ptlog"), user_a.uid, user_a.gid), 0);

	struct dump d;
	start_dump(&d, tool, in_dir("a.ptlog"), NULL);
	finish_dump(&d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0, "dump: status 0x%x",
	              d.status);
	ck_assert_msg(!strstr(d.text, "sp_work") && !strstr(d.text, "symproc_app.c"),
	              "root's dump of A's log names root's file:\n%.2000s", d.text);
	ck_assert_int_eq(lines_with(d.text, " sp.main ", " at symproc_app+0x"), 4);
	assert_named(&d, " sym.plugin ", " at plugin_post+0x"); /* A may read that one */

	/* the note names the path the log gave, nothing of the file */
	char *err = read_text(d.err), hex[2 * POSIXTRACE_BUILD_ID_MAX + 1] = "";
	struct stat st;
	ck_assert_int_eq(stat(app, &st), 0);
	char size[32];
	snprintf(size, sizeof size, "%lld", (long long)st.st_size);
	char cmd[PATH_MAX + 32];
	snprintf(cmd, sizeof cmd, "readelf -n '%s' 2>/dev/null", app);
	FILE *id = popen(cmd, "r");
	if (id) { /* the build id as readelf shows it, when readelf is there */
		char line[256];
		while (fgets(line, sizeof line, id))
			if (sscanf(line, " Build ID: %64s", hex) == 1)
				break;
		pclose(id);
	}
	ck_assert_msg(strstr(err, "symproc_app"), "no note on the program: %s", err);
	ck_assert_msg(!strstr(err, "uid") && !strstr(err, "owned") && !strstr(err, size) &&
	              !strstr(err, "bytes") && !strstr(err, "build id") && (!hex[0] || !strstr(err, hex)),
	              "the note tells of the file: %s", err);
	free(d.text);
}
END_TEST

/* (b) Root's log of root's program records root as the describer: root's
 * own files are read (as root, in the confined child).  The same log fed
 * through a pipe proves nothing of who wrote it: read as nobody, the
 * root-only program gives no names, the library nobody may read does. */
START_TEST(root_log_reads_roots_images_a_pipe_as_nobody)
{
	NEED_USERS("root_log_reads_roots_images_a_pipe_as_nobody");
	const char *tool = pt_tool_path("root_log_reads_roots_images_a_pipe_as_nobody");
	if (!tool)
		return;
	const char *app = in_dir("symproc_app");
	copy_file(pt_helper_path("symproc_app"), app, 0700); /* root's only */
	record(tool, app, in_dir("r.ptlog"), 3);
	struct stat st;
	ck_assert_int_eq(stat(in_dir("r.ptlog"), &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);

	struct dump d;
	start_dump(&d, tool, in_dir("r.ptlog"), NULL);
	finish_dump(&d);
	ck_assert_int_eq(d.status, 0);
	assert_named(&d, " sp.main ", " at sp_work+0x");
	free(d.text);

	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "cat '%s' | '%s' dump - 2>/dev/null", in_dir("r.ptlog"), tool);
	FILE *out = popen(cmd, "r");
	ck_assert_ptr_nonnull(out);
	static char text[1 << 20];
	size_t n = fread(text, 1, sizeof text - 1, out);
	text[n] = '\0';
	ck_assert_int_eq(pclose(out), 0);
	ck_assert_msg(!strstr(text, "sp_work"), "a piped log read a root-only file:\n%.2000s", text);
	ck_assert_msg(strstr(text, " at symproc_app+0x"), "no image+offset:\n%.2000s", text);
	ck_assert_msg(strstr(text, " at symlib_post+0x"), "nobody could read the library:\n%.2000s",
	              text);
}
END_TEST
END_TEST

/* The child's confinement, seen from /proc while it runs. */
static void assert_confined(pid_t child, uid_t uid)
{
	char path[64], want[96], *status;
	snprintf(path, sizeof path, "/proc/%d/status", (int)child);
	status = read_text(path);
	snprintf(want, sizeof want, "\nUid:\t%u\t%u\t%u\t%u\n", uid, uid, uid, uid);
	ck_assert_msg(strstr(status, want), "child not running as %u:\n%s", uid, status);
	ck_assert_msg(strstr(status, "\nNoNewPrivs:\t1\n"), "no NO_NEW_PRIVS:\n%s", status);
	snprintf(path, sizeof path, "/proc/%d/limits", (int)child);
	char *limits = read_text(path);
	ck_assert_msg(strstr(limits, "Max core file size        0"), "%s", limits);
	snprintf(want, sizeof want, "Max cpu time              %d", SYMPROC_CPU_SECONDS);
	ck_assert_msg(strstr(limits, want), "%s", limits);
	ck_assert_msg(!strstr(limits, "Max address space         unlimited"), "%s", limits);
	snprintf(path, sizeof path, "/proc/%d/environ", (int)child);
	ck_assert_str_eq(read_text(path), "");
	/* 0-2 are /dev/null, 3 its socket; the others are files it opened
	 * itself (the images'), nothing of the command's (log, pipes) */
	snprintf(path, sizeof path, "/proc/%d/fd", (int)child);
	DIR *fds = opendir(path);
	ck_assert_ptr_nonnull(fds);
	for (struct dirent *e; (e = readdir(fds));) {
		if (e->d_name[0] == '.')
			continue;
		char link[PATH_MAX + 64], to[PATH_MAX] = "";
		snprintf(link, sizeof link, "%s/%s", path, e->d_name);
		ck_assert_int_gt(readlink(link, to, sizeof to - 1), 0);
		int fd = atoi(e->d_name);
		if (fd < 3)
			ck_assert_str_eq(to, "/dev/null");
		else if (fd == 3)
			ck_assert_msg(strncmp(to, "socket:", 7) == 0, "3 is %s", to);
		else
			ck_assert_msg(to[0] == '/' && !strstr(to, ".ptlog") && !strstr(to, "dump.err"),
			              "child has descriptor %d: %s", fd, to);
	}
	closedir(fds);
}

/* A log of A's, recorded by root from symproc_app in the scratch
 * directory (readable by A): many events of the program first. */
static void users_log(const char *tool, const char *log)
{
	copy_file(pt_helper_path("symproc_app"), in_dir("symproc_app"), 0755);
	record(tool, in_dir("symproc_app"), log, MAIN_EVENTS);
	ck_assert_int_eq(chown(log, user_a.uid, user_a.gid), 0);
}

/* (c) The child stopped by its user while idle: its deadline. */
START_TEST(stopped_child_costs_its_image)
{
	NEED_USERS("stopped_child_costs_its_image");
	const char *tool = pt_tool_path("stopped_child_costs_its_image");
	if (!tool)
		return;
	users_log(tool, in_dir("c.ptlog"));
	struct dump d;
	start_dump(&d, tool, in_dir("c.ptlog"), "2");
	wait_blocked_on_output(&d);
	pid_t child = symbolizer_of(d.pid);
	assert_confined(child, user_a.uid);
	kill_as(user_a.uid, child, SIGSTOP);
	finish_dump(&d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0, "dump: status 0x%x",
	              d.status);
	assert_named(&d, " sp.main ", " at sp_work+0x");
	ck_assert_int_eq(lines_with(d.text, " sym.plugin ", " at sym_plugin.so+0x"), 1);
	assert_named(&d, " sym.lib ", " at symlib_post+0x");
	char *err = read_text(d.err);
	ck_assert_msg(lines_with(err, "symbols given up", NULL) == 1 &&
	              lines_with(err, "sym_plugin.so: symbols given up (time budget)", NULL) == 1,
	              "notes: %s", err);
	free(d.text);
}
END_TEST

/* (d) The child killed while the command waits for its answer. */
START_TEST(killed_child_costs_its_image)
{
	NEED_USERS("killed_child_costs_its_image");
	const char *tool = pt_tool_path("killed_child_costs_its_image");
	if (!tool)
		return;
	users_log(tool, in_dir("d.ptlog"));
	struct dump d;
	/* a deadline far away: only the death can end the wait */
	start_dump(&d, tool, in_dir("d.ptlog"), "600");
	wait_blocked_on_output(&d);
	pid_t child = symbolizer_of(d.pid);
	kill_as(user_a.uid, child, SIGSTOP);
	fcntl(d.out, F_SETFL, O_NONBLOCK);
	long call = -1;
	for (int i = 0; i < 4000; i++) { /* until dump waits for the plug-in's answer */
		ck_assert_msg(take_output(&d), "dump ended before asking of the plug-in");
		call = waiting_in(d.pid);
		if (call == SYS_poll || call == SYS_ppoll)
			break;
		usleep(5000);
	}
	ck_assert_msg(call == SYS_poll || call == SYS_ppoll, "dump never waited for an answer");
	kill_as(user_a.uid, child, SIGKILL);
	finish_dump(&d);
	ck_assert_msg(WIFEXITED(d.status) && WEXITSTATUS(d.status) == 0, "dump: status 0x%x",
	              d.status);
	assert_named(&d, " sp.main ", " at sp_work+0x");
	ck_assert_int_eq(lines_with(d.text, " sym.plugin ", " at sym_plugin.so+0x"), 1);
	assert_named(&d, " sym.lib ", " at symlib_post+0x");
	char *err = read_text(d.err);
	ck_assert_msg(lines_with(err, "symbols given up", NULL) == 1 &&
	              lines_with(err, "sym_plugin.so: symbols given up (the symbolizer failed)",
	                         NULL) == 1,
	              "notes: %s", err);
	free(d.text);
}
END_TEST

/* ---- sites in bounded memory -------------------------------------------- */

#define T0 1700000000000000000ull
#define SITES_BASE 0x555500000000ull

/* A log of one process whose events each come from another address of
 * one image, /nonexistent/victim (a claim: the file need not exist). */
/* A log whose process claims image (its path) with a build id of 20
 * bytes 0xab, and posts from sites distinct addresses in it. */
static void image_log(const char *path, const char *image, uint32_t sites)
{
	static const struct pt_log_ctx ctx = {100, 101, 0x1111, "victim"};
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	struct v3 g;
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	struct pt_log_image e = {.pid = ctx.pid, .time_ns = T0, .set = 1, .start = SITES_BASE,
	                         .end = SITES_BASE + 16ull * sites + 16, .bias = SITES_BASE - 0x1000,
	                         .count = 1, .path_len = (uint16_t)strlen(image),
	                         .build_id_len = 20};
	memset(e.build_id, 0xab, 20);
	e.entry_size = pt_log_image_size(e.path_len);
	unsigned char buf[256] = {0};
	memcpy(buf, &e, sizeof e);
	memcpy(buf + sizeof e, image, e.path_len);
	v3_block(&g, PT_LOG_IMAGES, g.seq++, 0, buf, e.entry_size);
	uint64_t drain = 1;
	for (uint32_t i = 0; i < sites;) {
		v3_stages_mono(&g, drain++, T0);
		v3_lane(&g, 0, 1000ull + i, &ctx, SITES_BASE);
		for (uint32_t k = 0; i < sites && g.len + 64 < g.cap; k++, i++)
			v3_ev(&g, POSIX_TRACE_UNNAMED_USEREVENT, k, SITES_BASE + 16ull * i + 8, &i,
			      sizeof i);
		v3_seal(&g);
	}
	v3_end(&g);
	close(fd);
}

static void many_sites_log(const char *path, uint32_t sites)
{
	image_log(path, "/nonexistent/victim", sites);
}

/* The peak RSS (KiB) of `posixtrace CMD [OPTION] log`, which must succeed. */
static long peak_rss(const char *tool, const char *cmd, const char *option, const char *log)
{
	pid_t pid = pt_fork();
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(null, 1);
		dup2(null, 2);
		if (option)
			execl(tool, tool, cmd, option, log, (char *)NULL);
		else
			execl(tool, tool, cmd, log, (char *)NULL);
		_exit(127);
	}
	pt_track(pid);
	int status = 0;
	struct rusage ru;
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	pt_untrack(pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: status 0x%x", cmd, status);
	return ru.ru_maxrss;
}

/* What the sites cost: the peak with symbols less the peak without (a
 * sanitizer's own costs are in both). */
START_TEST(many_sites_bounded_memory)
{
	const char *tool = pt_tool_path("many_sites_bounded_memory");
	if (!tool)
		return;
	const char *log = in_dir("sites.ptlog");
	many_sites_log(log, 200000);
	const char *cmd[] = {"dump", "stats"};
	for (int i = 0; i < 2; i++) {
		long with = peak_rss(tool, cmd[i], NULL, log);
		long without = peak_rss(tool, cmd[i], "--no-symbols", log);
		ck_assert_msg(with - without < 128 * 1024,
		              "200,000 sites: %s %ld KiB, %ld KiB with --no-symbols", cmd[i], with,
		              without);
	}
}
END_TEST

/* A files reply as the child makes it (symproc_files_head, notes). */
static size_t files_reply(unsigned char *buf, uint32_t seq, int err, uint32_t kinds,
                          uint32_t alt_size, const char *note)
{
	struct symproc_files_head h = {.seq = seq, .err = err, .kinds = kinds,
	                               .alt_id_size = alt_size, .notes = note ? 1 : 0};
	memset(h.alt_id, 0xcd, alt_size);
	memcpy(buf, &h, sizeof h);
	size_t at = sizeof h;
	if (note) {
		uint16_t n = (uint16_t)strlen(note);
		memcpy(buf + at, &n, sizeof n);
		memcpy(buf + at + 2, note, n + 1u);
		at += 2 + n + 1u;
	}
	return at;
}

/* The reply to a files request (posixtrace archive) is checked as a
 * lookup's: its sequence number, an error the engine gives and nothing
 * beside it, as many descriptors as the kinds it names (the image always),
 * a dwz file's build id only with a dwz file, printable notes, nothing
 * left over. */
START_TEST(files_replies_checked)
{
	unsigned char buf[1024];
	struct symproc_files_reply r;
	size_t n = files_reply(buf, 7, 0, SYMPROC_FILE_IMAGE | SYMPROC_FILE_ALT, 20, "x: a note");
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 2, &r), 0);
	ck_assert_uint_eq(r.kinds, SYMPROC_FILE_IMAGE | SYMPROC_FILE_ALT);
	ck_assert_uint_eq(r.alt_id_size, 20);
	ck_assert_str_eq(r.note[0], "x: a note");
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 8, 2, &r), EPROTO);     /* seq */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 1, &r), EPROTO);     /* fds */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 3, &r), EPROTO);
	ck_assert_int_eq(symproc_parse_files_reply(buf, n + 1, 7, 2, &r), EPROTO); /* left over */
	n = files_reply(buf, 7, ENOENT, 0, 0, NULL);
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 0, &r), 0);
	ck_assert_int_eq(r.err, ENOENT);
	n = files_reply(buf, 7, ENOENT, SYMPROC_FILE_IMAGE, 0, NULL); /* a file beside an error */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 1, &r), EPROTO);
	n = files_reply(buf, 7, EPERM, 0, 0, NULL); /* not an error the engine gives */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 0, &r), EPROTO);
	n = files_reply(buf, 7, 0, SYMPROC_FILE_DEBUG, 0, NULL); /* no image */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 1, &r), EPROTO);
	n = files_reply(buf, 7, 0, SYMPROC_FILE_IMAGE | 8, 0, NULL); /* an unknown kind */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 1, &r), EPROTO);
	n = files_reply(buf, 7, 0, SYMPROC_FILE_IMAGE, 20, NULL); /* an id, no dwz file */
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 1, &r), EPROTO);
	n = files_reply(buf, 7, 0, SYMPROC_FILE_IMAGE | SYMPROC_FILE_ALT, 33, NULL);
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 2, &r), EPROTO);
	n = files_reply(buf, 7, 0, SYMPROC_FILE_IMAGE, 0, "bad \033 note");
	ck_assert_int_eq(symproc_parse_files_reply(buf, n, 7, 1, &r), EPROTO);
}
END_TEST

/* The descriptors a child hands back for an archive are taken only when
 * they are sealed memfds: a pipe (whose read blocks), a regular file (one
 * of a FUSE file system could block, any could change under the copy), a
 * memfd not sealed against writes, growth and shrinking are refused. */
START_TEST(files_only_sealed_memfds)
{
	uint64_t size = 0;
	int pipe_fds[2];
	ck_assert_int_eq(pipe(pipe_fds), 0);
	ck_assert(!symproc_sealed_memfd(pipe_fds[0], &size));
	close(pipe_fds[0]);
	close(pipe_fds[1]);
	char path[] = "/tmp/t_symproc.XXXXXX";
	int file = mkstemp(path);
	ck_assert_int_ge(file, 0);
	unlink(path);
	ck_assert_int_eq(write(file, "x", 1), 1);
	ck_assert(!symproc_sealed_memfd(file, &size));
	close(file);
	int m = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ck_assert_int_ge(m, 0);
	ck_assert_int_eq(write(m, "abc", 3), 3);
	ck_assert(!symproc_sealed_memfd(m, &size));
	ck_assert_int_eq(fcntl(m, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW), 0);
	ck_assert(!symproc_sealed_memfd(m, &size)); /* still writable */
	ck_assert_int_eq(fcntl(m, F_ADD_SEALS, F_SEAL_WRITE), 0);
	ck_assert(symproc_sealed_memfd(m, &size));
	ck_assert_uint_eq(size, 3);
	close(m);
}
END_TEST

/* Whether a regular file under dir has the bytes of file; *files: how many regular files there are. */
static bool holds_copy_of(const char *dir_path, const char *file, int *files)
{
	char cmd[3 * PATH_MAX];
	snprintf(cmd, sizeof cmd, "find '%s' -type f", dir_path);
	FILE *list = popen(cmd, "r");
	ck_assert_ptr_nonnull(list);
	char line[PATH_MAX];
	bool found = false;
	*files = 0;
	while (fgets(line, sizeof line, list)) {
		line[strcspn(line, "\n")] = '\0';
		(*files)++;
		snprintf(cmd, sizeof cmd, "cmp -s '%s' '%s'", line, file);
		found |= system(cmd) == 0;
	}
	pclose(list);
	return found;
}

/* posixtrace archive, as root, on logs of user A: a recorded log naming a
 * root-only program (0700 in a 0700 root directory) with its right build
 * id: the program is not copied (A may not read it), the plug-in A may read
 * is; a crafted log naming /etc/shadow as an image: nothing copied.  The
 * files are opened by the child with A's rights, as dump opens them. */
START_TEST(archive_copies_what_the_claimant_may_read)
{
	NEED_USERS("archive_copies_what_the_claimant_may_read");
	const char *tool = pt_tool_path("archive_copies_what_the_claimant_may_read");
	if (!tool)
		return;
	char secret[PATH_MAX], app[PATH_MAX], log[PATH_MAX], out[PATH_MAX], plugin[PATH_MAX];
	snprintf(secret, sizeof secret, "%s", in_dir("secret"));
	snprintf(app, sizeof app, "%s", in_dir("secret/symproc_app"));
	snprintf(log, sizeof log, "%s", in_dir("a.ptlog"));
	snprintf(out, sizeof out, "%s", in_dir("a.symfs"));
	ck_assert_int_eq(mkdir(secret, 0700), 0);
	copy_file(pt_helper_path("symproc_app"), app, 0700);
	record(tool, app, log, 3);
	snprintf(plugin, sizeof plugin, "%s", in_dir("sym_plugin.so"));
	ck_assert_int_eq(chown(log, user_a.uid, user_a.gid), 0);
	char *argv[] = {(char *)tool, "archive", log, out, NULL};
	ck_assert_int_eq(run_wait(argv, 60000), 0);
	int files;
	ck_assert_msg(!holds_copy_of(out, app, &files), "root's program copied for A's log");
	ck_assert_msg(holds_copy_of(out, plugin, &files), "the plug-in A may read is not copied");

	snprintf(log, sizeof log, "%s", in_dir("shadow.ptlog"));
	snprintf(out, sizeof out, "%s", in_dir("shadow.symfs"));
	image_log(log, "/etc/shadow", 4);
	ck_assert_int_eq(chown(log, user_a.uid, user_a.gid), 0);
	char *argv2[] = {(char *)tool, "archive", log, out, NULL};
	ck_assert_int_eq(run_wait(argv2, 60000), 0);
	holds_copy_of(out, "/etc/shadow", &files);
	ck_assert_int_eq(files, 0);
	/* root's own log of unknown users reads it as nobody: nothing either */
	ck_assert_int_eq(chown(log, 0, 0), 0);
	snprintf(out, sizeof out, "%s", in_dir("shadow-root.symfs"));
	char *argv3[] = {(char *)tool, "archive", log, out, NULL};
	ck_assert_int_eq(run_wait(argv3, 60000), 0);
	holds_copy_of(out, "/etc/shadow", &files);
	ck_assert_int_eq(files, 0);
}
END_TEST

#ifdef PT_HAVE_DEMANGLE
/* A mangled name of n bytes: f taking n - 4 ints. */
static char *many_ints(size_t n)
{
	char *s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	memcpy(s, "_Z1f", 4);
	memset(s + 4, 'i', n - 4);
	s[n] = '\0';
	return s;
}

/* A mangled name of about n bytes nesting as deep as it can: pointers to
 * functions returning pointers to functions... */
static char *nested(size_t n)
{
	char *s = malloc(n + 1);
	ck_assert_ptr_nonnull(s);
	size_t depth = (n - 5) / 3, k = 0;
	k += (size_t)sprintf(s, "_Z1f");
	for (size_t i = 0; i < depth; i++)
		k += (size_t)sprintf(s + k, "PFv");
	s[k++] = 'i';
	for (size_t i = 0; i < depth && k < n; i++)
		s[k++] = 'E';
	s[k] = '\0';
	return s;
}
#endif

/* Who has rights over other users' files (and so must give its children
 * the rights of the user they read for): root of the initial user
 * namespace or of one mapping several uids; not a user, nor root of a
 * namespace that maps one uid alone (unshare --user --map-root-user),
 * whose children can take no other rights and need none. */
START_TEST(root_over_others_by_namespace)
{
	ck_assert(symproc_root_over_others(0, "         0          0 4294967295\n"));
	ck_assert(symproc_root_over_others(0, "         0     100000      65536\n"));
	ck_assert(symproc_root_over_others(0, "0 1000 1\n1 100000 65536\n"));
	ck_assert(symproc_root_over_others(0, NULL));
	ck_assert(symproc_root_over_others(0, "garbage"));
	ck_assert(!symproc_root_over_others(0, "         0       1000          1\n"));
	ck_assert(!symproc_root_over_others(1000, "         0          0 4294967295\n"));
	ck_assert(!symproc_root_over_others(1000, NULL));
}
END_TEST

START_TEST(demangled_within_bounds)
{
#ifdef PT_HAVE_DEMANGLE
	static char buf[64 << 10];
	ck_assert_str_eq(demangle("_ZN3app6WorkerIiE3runERKi", buf, sizeof buf),
	                 "app::Worker<int>::run(int const&)");
	const char *plain = "main", *bad = "_Zxyz(";
	ck_assert_ptr_eq(demangle(plain, buf, sizeof buf), plain);
	ck_assert_ptr_eq(demangle(bad, buf, sizeof buf), bad);
	ck_assert_ptr_null(demangle(NULL, buf, sizeof buf));
	/* no room for the demangled form: the name as it is */
	const char *mangled = "_ZN3app6WorkerIiE3runERKi";
	ck_assert_ptr_eq(demangle(mangled, buf, 8), mangled);
	char *at_cap = many_ints(DEMANGLE_INPUT_MAX), *over = many_ints(DEMANGLE_INPUT_MAX + 1);
	ck_assert_ptr_eq(demangle(at_cap, buf, sizeof buf), buf);
	ck_assert(!strncmp(buf, "f(int, int", 10));
	ck_assert_ptr_eq(demangle(over, buf, sizeof buf), over);
	/* the deepest nesting that fits the cap: it ends, whatever it gives */
	char *deep = nested(DEMANGLE_INPUT_MAX);
	ck_assert_uint_le(strlen(deep), DEMANGLE_INPUT_MAX);
	const char *got = demangle(deep, buf, sizeof buf);
	ck_assert(got == deep || got == buf);
	free(at_cap);
	free(over);
	free(deep);
#else
	char buf[64];
	const char *mangled = "_ZN3app6WorkerIiE3runERKi";
	ck_assert_ptr_eq(demangle(mangled, buf, sizeof buf), mangled);
#endif
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symproc");
	TCase *tc = pt_tcase(s, "protocol");
	tcase_add_test(tc, whose_claims);
	tcase_add_test(tc, replies_checked);
	tcase_add_test(tc, files_replies_checked);
	tcase_add_test(tc, files_only_sealed_memfds);
	tcase_add_test(tc, demangled_within_bounds);
	tcase_add_test(tc, root_over_others_by_namespace);
	tc = pt_tcase_fixture(s, "confined", setup, teardown);
	tcase_add_test(tc, user_log_names_root_only_file);
	tcase_add_test(tc, root_log_reads_roots_images_a_pipe_as_nobody);
	tcase_add_test(tc, stopped_child_costs_its_image);
	tcase_add_test(tc, archive_copies_what_the_claimant_may_read);
	tcase_add_test(tc, killed_child_costs_its_image);
	tc = pt_tcase_fixture(s, "memory", setup, teardown);
	tcase_add_test(tc, many_sites_bounded_memory);
	return pt_run_scratch(s, "t_symproc");
}
