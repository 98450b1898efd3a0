/* SPDX-License-Identifier: MIT */
/*
 * iso_victim: the instrumented program of the isolation tests (t_isolation).
 * It plays the victim of another user's attack, the setuid program whose
 * events must not reach its caller's log, and the traced process that
 * tries to resize the memory its controller maps.
 *
 * Events have the type "iso.secret" and as data "SECRET#SEQ", so that a
 * log or a stream that received any of them is found by the secret alone.
 * Lines go to the report fd, each starting with "iso ":
 *
 *   iso start pid=P secure=S uid=R/E/S gid=R/E/S lib=PATH fds=N [NAMES]
 *        at the start of main: AT_SECURE, the ids, the library loaded, the open
 *        descriptors whose target names posixtrace (memfds
 *        "posixtrace-stream", "posixtrace-pcb", "posixtrace-names", or
 *        /dev/shm objects): none may be left in an AT_SECURE program
 *   iso secret id named|unnamed   whether "iso.secret" got an id of its own
 *        (after -N: POSIX_TRACE_UNNAMED_USEREVENT when the registry is full)
 *   iso create=ERR          result of the -k posix_trace_create
 *   iso batch1              the first batch was posted
 *   iso resize tried=N succeeded=M [WHAT...]   result of -T
 *   iso done                all events were posted
 *
 * Options:
 *   -s SECRET   the secret carried by every event (default "iso-secret")
 *   -c N        events of the first batch (default 5)
 *   -C N        events of the second batch, posted after -g (default 0)
 *   -d USEC     sleep after each event (default 0)
 *   -W USEC     before the first batch, post "iso.warm" events every USEC
 *               until a byte (or EOF) arrives on the -w fd
 *   -w FD       wait for a byte (or EOF) on FD before the first batch
 *   -g FD       wait for a byte (or EOF) on FD before the second batch
 *   -H FD       wait for a byte (or EOF) on FD before exiting
 *   -r FD       report fd (default 1)
 *   -k WHAT     before posting, create a stream and keep it: "own"
 *               (posix_trace_create(0, NULL)), "inherited" (for itself,
 *               POSIX_TRACE_INHERITED) or a pid (posix_trace_create(pid))
 *   -T          after the first batch, try to resize every posixtrace
 *               object it can reach (its own descriptors, a reopen of
 *               /proc/self/fd/N, and /dev/shm/posixtrace.<own pid>.*):
 *               grow and shrink with ftruncate, grow with fallocate
 *   -N COUNT    first register COUNT event names "iso.name.K" (filling the
 *               registry this process uses)
 *   -x COMMAND  after the first batch, run COMMAND with system() (a shell,
 *               then the program it execs: a child started by exec) and
 *               report "iso system=STATUS"
 *   -a SECONDS  give up (SIGALRM) after SECONDS (default 60)
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <trace.h>

/* In sanitizer builds: LeakSanitizer's exit check cannot run in a process
 * that is not dumpable (this program runs set-user-ID, set-group-ID or
 * with file capabilities) and would fail it; such a process cannot read
 * its own /proc/self/environ either, so the option is built in.  Without
 * a sanitizer nobody calls this. */
const char *__lsan_default_options(void);
const char *__lsan_default_options(void) { return "detect_leaks=0"; }
#include <unistd.h>

static int report_fd = 1;

/* Whether a descriptor's target is one of the library's objects. */
static int is_posixtrace_link(const char *link)
{
	return strstr(link, "posixtrace-") != NULL || strstr(link, "/dev/shm/posixtrace") != NULL;
}

/* The path of the libposixtrace this process loaded (from its maps). */
static void loaded_library(char *out, size_t len)
{
	char line[PATH_MAX + 128];
	FILE *maps = fopen("/proc/self/maps", "r");
	snprintf(out, len, "?");
	while (maps && fgets(line, sizeof line, maps)) {
		char *path = strchr(line, '/');
		if (path && strstr(path, "libposixtrace")) {
			path[strcspn(path, "\n")] = '\0';
			snprintf(out, len, "%s", path);
			break;
		}
	}
	if (maps)
		fclose(maps);
}

static void report_start(void)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg;
	char names[1024] = "";
	int n = 0;
	getresuid(&ru, &eu, &su);
	getresgid(&rg, &eg, &sg);
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		char path[300], link[PATH_MAX];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, link, sizeof link - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (!is_posixtrace_link(link))
			continue;
		n++;
		size_t used = strlen(names);
		if (snprintf(names + used, sizeof names - used, " %s=%s", e->d_name, link) < 0)
			break;
	}
	if (d)
		closedir(d);
	char lib[PATH_MAX];
	loaded_library(lib, sizeof lib);
	dprintf(report_fd, "iso start pid=%d secure=%lu uid=%d/%d/%d gid=%d/%d/%d lib=%s fds=%d%s\n",
	        (int)getpid(), getauxval(AT_SECURE), (int)ru, (int)eu, (int)su, (int)rg, (int)eg,
	        (int)sg, lib, n, names);
}

/* Waits until a byte or EOF can be read from fd; posts warm-up events
 * meanwhile when warm_us is set. */
static void wait_on(int fd, long warm_us, trace_event_id_t warm)
{
	char c;
	if (fd < 0)
		return;
	if (!warm_us) {
		while (read(fd, &c, 1) < 0)
			;
		return;
	}
	for (unsigned long k = 0;; k++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		posix_trace_event(warm, &k, sizeof k);
		if (poll(&p, 1, (int)(warm_us / 1000) + 1) == 1) {
			if (read(fd, &c, 1) < 0)
				continue;
			return;
		}
	}
}

static void post(trace_event_id_t id, const char *secret, long first, long count, long delay_us)
{
	char data[200];
	for (long k = first; k < first + count; k++) {
		int len = snprintf(data, sizeof data, "%s#%ld", secret, k);
		posix_trace_event(id, data, (size_t)len);
		if (delay_us)
			usleep((useconds_t)delay_us);
	}
}

static int create_stream(const char *what)
{
	trace_id_t trid;
	trace_attr_t attr;
	if (strcmp(what, "own") == 0)
		return posix_trace_create(0, NULL, &trid);
	if (strcmp(what, "inherited") == 0) {
		int err = posix_trace_attr_init(&attr);
		if (!err)
			err = posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED);
		if (!err)
			err = posix_trace_create(0, &attr, &trid);
		return err;
	}
	return posix_trace_create((pid_t)atol(what), NULL, &trid);
}

/* ---- -T: resizing the memory a controller maps ---------------------------- */

struct resize_result {
	int tried, succeeded;
	char what[2048];
};

static void note(struct resize_result *r, int ok, const char *how, const char *obj)
{
	r->tried++;
	if (!ok)
		return;
	r->succeeded++;
	size_t used = strlen(r->what);
	if (snprintf(r->what + used, sizeof r->what - used, " %s:%s", how, obj) < 0)
		r->what[used] = '\0';
}

/* Grows (ftruncate, fallocate) then shrinks one object through fd: the
 * shrink last, since it is what makes a mapping fault. */
static void resize_one(int fd, const char *via, const char *obj, struct resize_result *r)
{
	struct stat st;
	char how[64];
	if (fstat(fd, &st) != 0)
		return;
	off_t size = st.st_size;
	snprintf(how, sizeof how, "%s-ftruncate-grow", via);
	note(r, ftruncate(fd, size + (1 << 20)) == 0, how, obj);
	snprintf(how, sizeof how, "%s-fallocate-grow", via);
	note(r, fstat(fd, &st) == 0 && fallocate(fd, 0, st.st_size, 1 << 16) == 0, how, obj);
	snprintf(how, sizeof how, "%s-ftruncate-shrink", via);
	note(r, ftruncate(fd, size > 4096 ? 4096 : 0) == 0, how, obj);
}

static void resize_all(void)
{
	struct resize_result r = {0};
	char path[300], link[PATH_MAX], prefix[64];
	int fds[256], nfds = 0;
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	while (d && (e = readdir(d)) && nfds < 256) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, link, sizeof link - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (is_posixtrace_link(link))
			fds[nfds++] = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	for (int i = 0; i < nfds; i++) {
		snprintf(path, sizeof path, "/proc/self/fd/%d", fds[i]);
		ssize_t len = readlink(path, link, sizeof link - 1);
		link[len > 0 ? len : 0] = '\0';
		resize_one(fds[i], "fd", link, &r);
		int again = open(path, O_RDWR | O_CLOEXEC);
		if (again >= 0) {
			resize_one(again, "reopen", link, &r);
			close(again);
		}
	}
	/* Streams named in /dev/shm after this process (the old layout). */
	snprintf(prefix, sizeof prefix, "posixtrace.%d.", (int)getpid());
	d = opendir("/dev/shm");
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
			continue;
		snprintf(path, sizeof path, "/dev/shm/%s", e->d_name);
		int fd = open(path, O_RDWR | O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0) {
			resize_one(fd, "open", path, &r);
			close(fd);
		}
	}
	if (d)
		closedir(d);
	dprintf(report_fd, "iso resize tried=%d succeeded=%d%s\n", r.tried, r.succeeded, r.what);
}

int main(int argc, char **argv)
{
	const char *secret = "iso-secret", *create = NULL, *command = NULL;
	long count = 5, count2 = 0, delay_us = 0, warm_us = 0, names = 0;
	int start_fd = -1, gate_fd = -1, hold_fd = -1, resize = 0, opt;
	unsigned alarm_s = 60;

	while ((opt = getopt(argc, argv, "s:c:C:d:W:w:g:H:r:k:TN:x:a:")) != -1) {
		switch (opt) {
		case 's': secret = optarg; break;
		case 'c': count = atol(optarg); break;
		case 'C': count2 = atol(optarg); break;
		case 'd': delay_us = atol(optarg); break;
		case 'W': warm_us = atol(optarg); break;
		case 'w': start_fd = atoi(optarg); break;
		case 'g': gate_fd = atoi(optarg); break;
		case 'H': hold_fd = atoi(optarg); break;
		case 'r': report_fd = atoi(optarg); break;
		case 'k': create = optarg; break;
		case 'T': resize = 1; break;
		case 'N': names = atol(optarg); break;
		case 'x': command = optarg; break;
		case 'a': alarm_s = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	alarm(alarm_s);
	report_start();
	trace_event_id_t id, warm;
	for (long k = 0; k < names; k++) {
		char name[32];
		snprintf(name, sizeof name, "iso.name.%ld", k);
		if (posix_trace_eventid_open(name, &id) != 0)
			return 3;
	}
	if (posix_trace_eventid_open("iso.secret", &id) != 0 ||
	    posix_trace_eventid_open("iso.warm", &warm) != 0)
		return 3;
	dprintf(report_fd, "iso secret id %s\n",
	        id == POSIX_TRACE_UNNAMED_USEREVENT ? "unnamed" : "named");
	if (create)
		dprintf(report_fd, "iso create=%d\n", create_stream(create));
	wait_on(start_fd, warm_us, warm);
	post(id, secret, 0, count, delay_us);
	dprintf(report_fd, "iso batch1\n");
	if (command)
		dprintf(report_fd, "iso system=%d\n", system(command));
	if (resize)
		resize_all();
	wait_on(gate_fd, 0, warm);
	post(id, secret, count, count2, delay_us);
	dprintf(report_fd, "iso done\n");
	wait_on(hold_fd, 0, warm);
	return 0;
}
