/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): the confined symbolizer (symproc.h).  The command side
 * keeps a table of the files asked about (path, build id, the user they
 * are read as), at most SYMPROC_CHILDREN_MAX children, and the notes; a
 * child runs symbolize.h's engine and answers one request at a time over
 * a SOCK_SEQPACKET socket pair (a message is a request or a reply, never
 * part of one).  The child is forked, not executed again: it holds a copy
 * of the command's memory at the fork (the log's image table and names,
 * what the user who wrote the log gave) and nothing it opens afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "demangle.h"
#include "symbolize.h"
#include "symproc.h"

#define NOBODY_FALLBACK 65534
#define GROUPS_MAX 1024 /* supplementary groups of a reader, at most */
#define STRING_NULL 0xffffu
#define REPLY_MAX (sizeof(struct symproc_reply_head) + 3 * (SYMPROC_NAME_MAX + 1) + \
                   SYMPROC_REPLY_NOTES_MAX * (2 + SYMPROC_NOTE_MAX + 1))
#define SOCKET_FD 3 /* the child's socket; every other descriptor but 0-2 is closed */

/* What a request asks: the site of an address, or the files of an image. */
enum { REQUEST_SITE, REQUEST_FILES };

struct request {
	uint32_t seq, kind;
	uint64_t address;
	struct posixtrace_image img;
};

/* The rights a child is given. */
struct reader {
	bool drop; /* false: the command's own (it is not root) */
	uid_t uid;
	gid_t gid;
	int ngroups;
	gid_t groups[GROUPS_MAX];
};

struct child {
	pid_t pid; /* 0: none */
	int fd;
	uid_t uid;
	uint32_t seq;
	uint64_t used; /* when it last answered, in lookups */
};

struct file {
	uint64_t hash;
	uid_t uid;
	int truncated;
	uint32_t build_id_size;
	unsigned char build_id[POSIXTRACE_BUILD_ID_MAX];
	bool given_up;
	uint64_t spent_ns;
	char *path;
};

struct symproc {
	bool root, available, demangle;
	uid_t claimant, nobody;
	gid_t nobody_gid;
	char *symfs;
	uint64_t timeout_ns;
	struct child child[SYMPROC_CHILDREN_MAX];
	uint64_t lookups;
	struct file **file;
	uint32_t nfiles, last_file;
	uint32_t *index; /* open addressing over file numbers + 1; 0: free */
	size_t index_size;
	bool files_full;
	char *note[SYMPROC_NOTES_MAX];
	unsigned nnotes, notes_given;
	uint64_t notes_dropped;
	struct reader reader;
	unsigned char reply[REPLY_MAX + 1];
};

/* ---- whose rights ------------------------------------------------------ */

uid_t symproc_log_claimant(const struct stat *log, uid_t nobody)
{
	if (!S_ISREG(log->st_mode) || (log->st_mode & S_IWOTH))
		return nobody;
	if (log->st_uid != 0)
		return log->st_uid;
	return log->st_mode & S_IWGRP ? nobody : SYMPROC_PER_IMAGE;
}

uid_t symproc_reader(uid_t claimant, const struct posixtrace_image *img, uid_t nobody)
{
	/* Root's own images, as only root's keeper can record them in a log
	 * only root may write, are read as root (still confined: the child's
	 * limits, deadline and budgets); a user's log never reads as root. */
	if (claimant == SYMPROC_PER_IMAGE)
		return img->posixtrace_uid == POSIXTRACE_UID_UNKNOWN ||
		               img->posixtrace_uid == SYMPROC_PER_IMAGE
		           ? nobody
		           : (uid_t)img->posixtrace_uid;
	return claimant == 0 ? nobody : claimant;
}

bool symproc_root_over_others(uid_t euid, const char *uid_map)
{
	uint64_t ids = 0;
	unsigned long inside, outside, count;
	int used;
	if (euid != 0)
		return false;
	if (!uid_map)
		return true; /* unknown: other users' rights are assumed */
	for (const char *line = uid_map; *line;) {
		if (sscanf(line, " %lu %lu %lu%n", &inside, &outside, &count, &used) != 3)
			return true;
		ids += count;
		line += used;
		while (*line == '\n' || *line == ' ')
			line++;
	}
	return ids != 1;
}

/* /proc/self/uid_map's text, or NULL. */
static char *own_uid_map(void)
{
	static char text[4096];
	int fd = open("/proc/self/uid_map", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return NULL;
	text[n] = '\0';
	return text;
}

/* The groups of uid's account (none for a uid without one: its own gid
 * is then nobody's group). */
static void reader_of(struct symproc *p, uid_t uid, struct reader *r)
{
	r->drop = p->root;
	r->uid = uid;
	r->gid = p->nobody_gid;
	r->ngroups = 0;
	if (!p->root)
		return;
	struct passwd *pw = getpwuid(uid);
	if (!pw)
		return;
	r->gid = pw->pw_gid;
	int n = GROUPS_MAX;
	if (getgrouplist(pw->pw_name, pw->pw_gid, r->groups, &n) < 0)
		n = 0; /* more than GROUPS_MAX: the primary group alone */
	r->ngroups = n;
}

/* ---- the reply --------------------------------------------------------- */

static bool take_string(const unsigned char *msg, size_t len, size_t *at, uint16_t n,
                        size_t max, const char **out)
{
	*out = NULL;
	if (n == STRING_NULL)
		return true;
	if (n > max || len - *at < (size_t)n + 1 || msg[*at + n] != '\0' ||
	    memchr(msg + *at, '\0', n))
		return false;
	*out = (const char *)msg + *at;
	*at += (size_t)n + 1;
	return true;
}

static bool printable_ascii(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

int symproc_parse_reply(const unsigned char *msg, size_t len, uint32_t seq,
                        struct symproc_reply *out)
{
	struct symproc_reply_head h;
	if (len < sizeof h || len > REPLY_MAX)
		return EPROTO;
	memcpy(&h, msg, sizeof h);
	size_t at = sizeof h;
	if (h.seq != seq || h.notes > SYMPROC_REPLY_NOTES_MAX ||
	    (h.err != 0 && h.err != ENOENT && h.err != EINVAL && h.err != ENOMEM &&
	     h.err != ENOTSUP) || h.line < 0 ||
	    !take_string(msg, len, &at, h.function_len, SYMPROC_NAME_MAX, &out->site.function) ||
	    !take_string(msg, len, &at, h.inlined_len, SYMPROC_NAME_MAX, &out->site.inlined) ||
	    !take_string(msg, len, &at, h.file_len, SYMPROC_NAME_MAX, &out->site.file))
		return EPROTO;
	out->err = h.err;
	out->site.offset = h.offset;
	out->site.line = h.line;
	out->notes = h.notes;
	for (unsigned i = 0; i < h.notes; i++) {
		uint16_t n;
		if (len - at < sizeof n)
			return EPROTO;
		memcpy(&n, msg + at, sizeof n);
		at += sizeof n;
		if (n == STRING_NULL || !take_string(msg, len, &at, n, SYMPROC_NOTE_MAX, &out->note[i]) ||
		    !printable_ascii(out->note[i]))
			return EPROTO;
	}
	/* an answer is all or nothing: no names beside an error */
	if (at != len || (h.err && (out->site.function || out->site.inlined || out->site.file)))
		return EPROTO;
	return 0;
}

int symproc_parse_files_reply(const unsigned char *msg, size_t len, uint32_t seq, unsigned nfds,
                              struct symproc_files_reply *out)
{
	struct symproc_files_head h;
	if (len < sizeof h || len > REPLY_MAX)
		return EPROTO;
	memcpy(&h, msg, sizeof h);
	size_t at = sizeof h;
	unsigned given = !!(h.kinds & SYMPROC_FILE_IMAGE) + !!(h.kinds & SYMPROC_FILE_DEBUG) +
	                 !!(h.kinds & SYMPROC_FILE_ALT);
	if (h.seq != seq || h.notes > SYMPROC_REPLY_NOTES_MAX ||
	    (h.err != 0 && h.err != ENOENT && h.err != EINVAL && h.err != ENOMEM &&
	     h.err != ENOTSUP) || (h.kinds & ~(uint32_t)SYMPROC_FILE_ALL) || given != nfds ||
	    (h.err ? h.kinds != 0 : !(h.kinds & SYMPROC_FILE_IMAGE)) ||
	    h.alt_id_size > POSIXTRACE_BUILD_ID_MAX ||
	    (h.kinds & SYMPROC_FILE_ALT ? h.alt_id_size == 0 : h.alt_id_size != 0))
		return EPROTO;
	out->err = h.err;
	out->kinds = h.kinds;
	out->alt_id_size = h.alt_id_size;
	memcpy(out->alt_id, h.alt_id, sizeof out->alt_id);
	out->notes = h.notes;
	for (unsigned i = 0; i < h.notes; i++) {
		uint16_t n;
		if (len - at < sizeof n)
			return EPROTO;
		memcpy(&n, msg + at, sizeof n);
		at += sizeof n;
		if (n == STRING_NULL || !take_string(msg, len, &at, n, SYMPROC_NOTE_MAX, &out->note[i]) ||
		    !printable_ascii(out->note[i]))
			return EPROTO;
	}
	return at == len ? 0 : EPROTO;
}

/* ---- the child --------------------------------------------------------- */

static size_t put_string(unsigned char *p, const char *s, size_t max, uint16_t *len)
{
	if (!s) {
		*len = STRING_NULL;
		return 0;
	}
	size_t n = strnlen(s, max);
	memcpy(p, s, n);
	p[n] = '\0';
	*len = (uint16_t)n;
	return n + 1;
}

struct reply_notes {
	unsigned char *p, *end;
	uint16_t n;
};

static void put_note(const char *msg, void *arg)
{
	struct reply_notes *r = arg;
	size_t n = strnlen(msg, SYMPROC_NOTE_MAX);
	if (r->n == SYMPROC_REPLY_NOTES_MAX || (size_t)(r->end - r->p) < 2 + n + 1)
		return;
	uint16_t len = (uint16_t)n;
	memcpy(r->p, &len, sizeof len);
	for (size_t i = 0; i < n; i++) /* the engine's notes are printable already */
		r->p[2 + i] = msg[i] >= 0x20 && msg[i] <= 0x7e ? (unsigned char)msg[i] : '?';
	r->p[2 + n] = '\0';
	r->p += 2 + n + 1;
	r->n++;
}

static size_t make_reply(unsigned char *out, uint32_t seq, int err, const struct sym_site *s,
                         struct symbolizer *sym)
{
	struct symproc_reply_head h = {.seq = seq, .err = err};
	unsigned char *p = out + sizeof h;
	const struct sym_site none = {.function = NULL};
	if (err)
		s = &none;
	h.offset = s->offset;
	h.line = s->line > 0 ? s->line : 0;
	p += put_string(p, s->function, SYMPROC_NAME_MAX, &h.function_len);
	p += put_string(p, s->function ? s->inlined : NULL, SYMPROC_NAME_MAX, &h.inlined_len);
	p += put_string(p, s->file, SYMPROC_NAME_MAX, &h.file_len);
	struct reply_notes notes = {p, out + REPLY_MAX, 0};
	if (sym)
		symbolizer_problems(sym, put_note, &notes);
	h.notes = notes.n;
	memcpy(out, &h, sizeof h);
	return (size_t)(notes.p - out);
}

/* C++ names demangled here, in the confined child: a name is bytes of a
 * file the log names, and the demangler's recursion on a hostile one is
 * contained by the child's limits (and DEMANGLE_INPUT_MAX). */
static void demangle_site(struct sym_site *site)
{
	static char function[SYMPROC_NAME_MAX], inlined[SYMPROC_NAME_MAX];
	site->function = demangle(site->function, function, sizeof function);
	site->inlined = demangle(site->inlined, inlined, sizeof inlined);
}

/* size bytes in a new sealed memfd (nobody can change or cut it short),
 * or -1. */
static int sealed_copy(const void *bytes, size_t size)
{
	int fd = memfd_create("posixtrace-archive", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	bool ok = fd >= 0;
	for (size_t done = 0; ok && done < size;) {
		ssize_t n = write(fd, (const char *)bytes + done, size - done);
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0;
		done += ok ? (size_t)n : 0;
	}
	if (ok)
		ok = fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
	if (!ok && fd >= 0)
		close(fd);
	return ok ? fd : -1;
}

/* The files of rq's image (symbolize_files), their descriptors beside the
 * reply; false: the reply could not be sent. */
static bool serve_files(struct symbolizer *sym, const struct request *rq, unsigned char *out)
{
	struct symproc_files_head h = {.seq = rq->seq};
	struct sym_files f = {.debug_fd = -1, .alt_fd = -1};
	int fds[3], n = 0;
	h.err = sym ? symbolize_files(sym, &rq->img, &f) : ENOMEM;
	if (h.err == 0 && (fds[n] = sealed_copy(f.image, f.image_size)) < 0)
		h.err = ENOMEM;
	if (h.err == 0) {
		h.kinds = SYMPROC_FILE_IMAGE, n++;
		if (f.debug_fd >= 0)
			h.kinds |= SYMPROC_FILE_DEBUG, fds[n++] = f.debug_fd;
		if (f.alt_fd >= 0) {
			h.kinds |= SYMPROC_FILE_ALT, fds[n++] = f.alt_fd;
			h.alt_id_size = f.alt_id_size;
			memcpy(h.alt_id, f.alt_id, f.alt_id_size);
		}
	} else {
		if (f.debug_fd >= 0)
			close(f.debug_fd);
		if (f.alt_fd >= 0)
			close(f.alt_fd);
	}
	struct reply_notes notes = {out + sizeof h, out + REPLY_MAX, 0};
	if (sym)
		symbolizer_problems(sym, put_note, &notes);
	h.notes = notes.n;
	memcpy(out, &h, sizeof h);
	struct iovec iov = {out, (size_t)(notes.p - out)};
	union {
		char buf[CMSG_SPACE(sizeof fds)];
		struct cmsghdr align;
	} control;
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	if (n) {
		mh.msg_control = control.buf;
		mh.msg_controllen = CMSG_SPACE(n * sizeof(int));
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, n * sizeof(int));
	}
	bool sent = sendmsg(SOCKET_FD, &mh, MSG_NOSIGNAL) == (ssize_t)iov.iov_len;
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return sent;
}

static _Noreturn void serve(const char *symfs, bool demangle_names)
{
	static struct request rq;
	static unsigned char out[REPLY_MAX];
	struct sym_options so = {.symfs = symfs};
	struct symbolizer *sym = symbolizer_new(&so);
	for (;;) {
		ssize_t n = recv(SOCKET_FD, &rq, sizeof rq, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof rq)
			_exit(n == 0 ? 0 : 1);
		if (rq.kind == REQUEST_FILES) {
			if (!serve_files(sym, &rq, out))
				_exit(1);
			continue;
		}
		struct sym_site site = {.function = NULL};
		int err = sym ? symbolize(sym, &rq.img, rq.address, &site) : ENOMEM;
		if (err == 0 && demangle_names)
			demangle_site(&site);
		size_t len = make_reply(out, rq.seq, err, &site, sym);
		if (send(SOCKET_FD, out, len, MSG_NOSIGNAL) != (ssize_t)len)
			_exit(1);
	}
}

/* What the process has mapped now, in bytes (0: unknown). */
static uint64_t mapped_now(void)
{
	char buf[64];
	int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE);
}

static int close_from(unsigned first)
{
#ifdef SYS_close_range
	if (syscall(SYS_close_range, first, ~0u, 0) == 0)
		return 0;
#endif
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = first; fd < (max > 0 ? max : 65536); fd++)
		close((int)fd);
	return 0;
}

/* Descriptors, environment, limits and rights of a child; false: it must
 * not serve.  The dumpable flag and the parent-death signal are set after
 * the ids change, which resets both. */
static bool confine(int sock, const struct reader *r, pid_t parent)
{
	/* above the socket's number, whatever the command had open */
	int null = open("/dev/null", O_RDWR);
	if (null >= 0 && null <= SOCKET_FD)
		null = fcntl(null, F_DUPFD, SOCKET_FD + 1);
	if (null < 0 || dup2(sock, SOCKET_FD) != SOCKET_FD)
		return false;
	for (int fd = 0; fd < 3; fd++)
		if (dup2(null, fd) != fd)
			return false;
	close_from(SOCKET_FD + 1);
	/* the strings too (the forked copy of the command's): what the child
	 * holds of the environment is nothing, DEBUGINFOD_URLS included */
	for (char **e = environ; e && *e; e++)
		memset(*e, 0, strlen(*e));
	if (clearenv() != 0)
		return false;
	sigset_t none;
	sigemptyset(&none);
	for (int sig = 1; sig < NSIG; sig++) /* none of the command's handlers */
		signal(sig, SIG_DFL);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGINT, SIG_IGN); /* Ctrl-C is the command's to handle */
	signal(SIGQUIT, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	uint64_t as = mapped_now() + SYMPROC_AS_MAX;
	struct rlimit core = {0, 0}, cpu = {SYMPROC_CPU_SECONDS, SYMPROC_CPU_SECONDS + 5},
	              mem = {(rlim_t)as, (rlim_t)as};
	if (setrlimit(RLIMIT_CORE, &core) != 0 || setrlimit(RLIMIT_CPU, &cpu) != 0 ||
	    setrlimit(RLIMIT_AS, &mem) != 0)
		return false;
	if (r->drop) {
		uid_t ru, eu, su;
		if (setgroups((size_t)r->ngroups, r->groups) != 0 ||
		    setresgid(r->gid, r->gid, r->gid) != 0 || setresuid(r->uid, r->uid, r->uid) != 0 ||
		    getresuid(&ru, &eu, &su) != 0 || ru != r->uid || eu != r->uid || su != r->uid)
			return false;
	}
	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0 &&
	       prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == 0 && getppid() == parent;
}

/* ---- children ---------------------------------------------------------- */

static void end_child(struct child *c)
{
	if (!c->pid)
		return;
	kill(c->pid, SIGKILL); /* ends a stopped child too */
	close(c->fd);
	while (waitpid(c->pid, NULL, 0) < 0 && errno == EINTR)
		;
	*c = (struct child){.pid = 0, .fd = -1};
}

static bool start_child(struct symproc *p, struct child *c, uid_t uid)
{
	int sv[2];
	reader_of(p, uid, &p->reader);
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return false;
	pid_t parent = getpid(), pid = fork();
	if (pid == 0) {
		if (confine(sv[1], &p->reader, parent))
			serve(p->symfs, p->demangle);
		_exit(127);
	}
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return false;
	}
	*c = (struct child){.pid = pid, .fd = sv[0], .uid = uid};
	return true;
}

/* A child reading as uid, started if there is none: the least recently
 * used one ends to make room. */
static struct child *child_for(struct symproc *p, uid_t uid)
{
	struct child *free_slot = NULL, *oldest = NULL;
	for (int i = 0; i < SYMPROC_CHILDREN_MAX; i++) {
		struct child *c = &p->child[i];
		if (c->pid && c->uid == uid)
			return c;
		if (!c->pid && !free_slot)
			free_slot = c;
		if (c->pid && (!oldest || c->used < oldest->used))
			oldest = c;
	}
	if (!free_slot) {
		end_child(oldest);
		free_slot = oldest;
	}
	return start_child(p, free_slot, uid) ? free_slot : NULL;
}

/* ---- notes ------------------------------------------------------------- */

static void keep_note(struct symproc *p, const char *msg)
{
	if (p->nnotes == SYMPROC_NOTES_MAX) {
		p->notes_dropped++;
		return;
	}
	char *copy = strndup(msg, SYMPROC_NOTE_MAX);
	if (copy)
		p->note[p->nnotes++] = copy;
}

/* "PATH: symbols given up (why)", the path as the log gives it, escaped
 * as the engine's notes are: nothing about the file itself. */
static void give_up(struct symproc *p, struct file *f, const char *why)
{
	static const char digits[] = "0123456789abcdef";
	char msg[SYMPROC_NOTE_MAX + 1];
	size_t n = 0;
	for (const unsigned char *c = (const unsigned char *)f->path; *c && n < 256; c++) {
		if (*c >= 0x20 && *c < 0x7f && *c != '\\') {
			msg[n++] = (char)*c;
		} else {
			msg[n++] = '\\';
			msg[n++] = *c == '\\' ? '\\' : 'x';
			if (*c != '\\') {
				msg[n++] = digits[*c >> 4];
				msg[n++] = digits[*c & 15];
			}
		}
	}
	snprintf(msg + n, sizeof msg - n, "%s: symbols given up (%s)", n ? "" : "(no path)", why);
	f->given_up = true;
	keep_note(p, msg);
}

void symproc_notes(struct symproc *p, void (*fn)(const char *msg, void *arg), void *arg)
{
	if (!p)
		return;
	for (; p->notes_given < p->nnotes; p->notes_given++)
		fn(p->note[p->notes_given], arg);
	if (p->notes_dropped) {
		char msg[96];
		snprintf(msg, sizeof msg, "%llu more notes on symbols not shown",
		         (unsigned long long)p->notes_dropped);
		fn(msg, arg);
		p->notes_dropped = 0;
	}
}

/* ---- files ------------------------------------------------------------- */

static uint64_t file_hash(const struct posixtrace_image *img, size_t len, int truncated, uid_t uid)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)truncated ^ (uint64_t)uid << 8; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)img->posixtrace_path[i]) * 0x100000001b3ull;
	for (uint32_t i = 0; i < img->posixtrace_build_id_size; i++)
		h = (h ^ img->posixtrace_build_id[i]) * 0x100000001b3ull;
	return h ^ img->posixtrace_build_id_size;
}

static bool same_file(const struct file *f, uint64_t h, const struct posixtrace_image *img,
                      size_t len, int truncated, uid_t uid)
{
	return f->hash == h && f->uid == uid && f->truncated == truncated &&
	       f->build_id_size == img->posixtrace_build_id_size &&
	       memcmp(f->build_id, img->posixtrace_build_id, f->build_id_size) == 0 &&
	       strncmp(f->path, img->posixtrace_path, len) == 0 && f->path[len] == '\0';
}

static bool index_grow(struct symproc *p)
{
	size_t n = p->index_size ? 2 * p->index_size : 64;
	uint32_t *index = calloc(n, sizeof *index);
	if (!index)
		return false;
	struct file **files = realloc(p->file, n / 2 * sizeof *files);
	if (!files) {
		free(index);
		return false;
	}
	p->file = files;
	for (uint32_t i = 0; i < p->nfiles; i++) {
		size_t j = p->file[i]->hash & (n - 1);
		while (index[j])
			j = (j + 1) & (n - 1);
		index[j] = i + 1;
	}
	free(p->index);
	p->index = index;
	p->index_size = n;
	return true;
}

int symproc_file(struct symproc *p, const struct posixtrace_image *img, uint32_t *file)
{
	size_t len = strnlen(img->posixtrace_path, sizeof img->posixtrace_path);
	int truncated = img->posixtrace_path_truncated || len == sizeof img->posixtrace_path;
	uid_t uid = p->root ? symproc_reader(p->claimant, img, p->nobody) : geteuid();
	if (img->posixtrace_build_id_size > POSIXTRACE_BUILD_ID_MAX)
		return EINVAL;
	struct file *last = p->nfiles ? p->file[p->last_file] : NULL;
	if (last && same_file(last, last->hash, img, len, truncated, uid)) {
		*file = p->last_file; /* events come in runs of one image */
		return 0;
	}
	uint64_t h = file_hash(img, len, truncated, uid);
	size_t j = p->index_size ? h & (p->index_size - 1) : 0;
	for (; p->index_size && p->index[j]; j = (j + 1) & (p->index_size - 1))
		if (same_file(p->file[p->index[j] - 1], h, img, len, truncated, uid)) {
			*file = p->last_file = p->index[j] - 1;
			return 0;
		}
	if (p->nfiles == SYMPROC_FILES_MAX) {
		if (!p->files_full) {
			char msg[128];
			snprintf(msg, sizeof msg, "more than %d image files: the others' sites shown "
			                          "as IMAGE+0xOFF", SYMPROC_FILES_MAX);
			keep_note(p, msg);
		}
		p->files_full = true;
		return ENOSPC;
	}
	if (2 * (p->nfiles + 1) > p->index_size) {
		if (!index_grow(p))
			return ENOMEM;
		j = h & (p->index_size - 1);
		while (p->index[j])
			j = (j + 1) & (p->index_size - 1);
	}
	struct file *f = calloc(1, sizeof *f);
	if (!f || !(f->path = strndup(img->posixtrace_path, len))) {
		free(f);
		return ENOMEM;
	}
	f->hash = h;
	f->uid = uid;
	f->truncated = truncated;
	f->build_id_size = img->posixtrace_build_id_size;
	memcpy(f->build_id, img->posixtrace_build_id, f->build_id_size);
	p->file[p->nfiles] = f;
	p->index[j] = ++p->nfiles;
	*file = p->last_file = p->nfiles - 1;
	return 0;
}

/* ---- requests ---------------------------------------------------------- */

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A child with nothing to say must have nothing pending: data or a hang
 * up there means it died (or misbehaved) while idle, which costs no file. */
static bool idle_and_alive(struct child *c)
{
	struct pollfd pf = {.fd = c->fd, .events = POLLIN};
	return poll(&pf, 1, 0) == 0;
}

static bool send_request(struct child *c, const struct posixtrace_image *img, uint64_t address)
{
	static struct request rq;
	memset(&rq, 0, sizeof rq);
	rq.seq = ++c->seq;
	rq.address = address;
	rq.img = *img;
	return send(c->fd, &rq, sizeof rq, MSG_NOSIGNAL) == (ssize_t)sizeof rq;
}

enum wait_result { ANSWERED, TIMED_OUT, FAILED };

/* ANSWERED once fd has something to read, before deadline at most. */
static enum wait_result wait_readable(int fd, uint64_t deadline)
{
	for (;;) {
		uint64_t now = now_ns();
		if (now >= deadline)
			return TIMED_OUT;
		uint64_t left_ms = (deadline - now + 999999) / 1000000;
		struct pollfd pf = {.fd = fd, .events = POLLIN};
		int n = poll(&pf, 1, left_ms > 60000 ? 60000 : (int)left_ms);
		if (n > 0)
			return ANSWERED;
		if (n < 0 && errno != EINTR)
			return FAILED;
	}
}

/* The reply in p->reply, *len bytes, waiting until deadline at most. */
static enum wait_result wait_reply(struct symproc *p, struct child *c, uint64_t deadline,
                                   size_t *len)
{
	for (;;) {
		enum wait_result readable = wait_readable(c->fd, deadline);
		if (readable != ANSWERED)
			return readable;
		struct iovec iov = {p->reply, sizeof p->reply};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
		ssize_t got = recvmsg(c->fd, &mh, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (got <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
			return FAILED;
		*len = (size_t)got;
		return ANSWERED;
	}
}

int symproc_lookup(struct symproc *p, uint32_t file, const struct posixtrace_image *img,
                   uint64_t address, struct symproc_site *out)
{
	if (!p || file >= p->nfiles || !img || !out)
		return EINVAL;
	struct file *f = p->file[file];
	if (!p->available)
		return ENOTSUP;
	if (f->given_up)
		return ENOENT;
	uint64_t budget = p->timeout_ns * SYMPROC_FILE_BUDGET;
	if (f->spent_ns >= budget) { /* spent on answers that came: no child to blame */
		give_up(p, f, "time budget");
		return ENOENT;
	}
	struct child *c = NULL;
	bool sent = false;
	/* a child found dead while idle is replaced once, free of charge */
	for (int attempt = 0; attempt < 2 && !sent; attempt++) {
		uid_t uid = p->root ? f->uid : geteuid();
		c = child_for(p, uid);
		if (!c)
			break;
		if (idle_and_alive(c) && send_request(c, img, address))
			sent = true;
		else
			end_child(c);
	}
	if (!sent) {
		give_up(p, f, "no symbolizer process");
		return ENOENT;
	}
	c->used = ++p->lookups;
	uint64_t start = now_ns(), left = budget - f->spent_ns;
	size_t len = 0;
	enum wait_result w = wait_reply(p, c, start + (left < p->timeout_ns ? left : p->timeout_ns),
	                                &len);
	f->spent_ns += now_ns() - start;
	struct symproc_reply r;
	if (w == ANSWERED && symproc_parse_reply(p->reply, len, c->seq, &r) != 0)
		w = FAILED;
	if (w != ANSWERED) {
		end_child(c);
		give_up(p, f, w == TIMED_OUT ? "time budget" : "the symbolizer failed");
		return ENOENT;
	}
	for (unsigned i = 0; i < r.notes; i++)
		keep_note(p, r.note[i]);
	/* the engine's ENOENT is its answer for the file, whatever the
	 * address: no more requests (its note, if any, came with it) */
	f->given_up |= r.err == ENOENT;
	if (r.err)
		return r.err;
	*out = r.site;
	return 0;
}

/* ---- the files of an image (posixtrace archive) ------------------------ */

/* The reply to a files request and the descriptors beside it, waiting
 * until deadline at most; fds[] are ours to close (*nfds of them). */
static enum wait_result wait_files_reply(struct symproc *p, struct child *c, uint64_t deadline,
                                         size_t *len, int *fds, unsigned *nfds)
{
	*nfds = 0;
	for (;;) {
		enum wait_result readable = wait_readable(c->fd, deadline);
		if (readable != ANSWERED)
			return readable;
		union {
			char buf[CMSG_SPACE(3 * sizeof(int))];
			struct cmsghdr align;
		} control;
		struct iovec iov = {p->reply, sizeof p->reply};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = control.buf,
		                    .msg_controllen = sizeof control.buf};
		ssize_t got = recvmsg(c->fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); got > 0 && cm; cm = CMSG_NXTHDR(&mh, cm)) {
			if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
				continue;
			unsigned k = (unsigned)((cm->cmsg_len - CMSG_LEN(0)) / sizeof(int));
			for (unsigned i = 0; i < k; i++) {
				int fd;
				memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof fd);
				if (*nfds < 3)
					fds[(*nfds)++] = fd;
				else
					close(fd);
			}
		}
		if (got <= 0 || (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
			return FAILED;
		*len = (size_t)got;
		return ANSWERED;
	}
}

bool symproc_sealed_memfd(int fd, uint64_t *size)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	int need = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
	if (seals < 0 || (seals & need) != need || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < 0 || st.st_size > SYM_FILE_MAX)
		return false;
	*size = (uint64_t)st.st_size;
	return true;
}

int symproc_files(struct symproc *p, uint32_t file, const struct posixtrace_image *img,
                  struct symproc_files *out)
{
	if (!p || file >= p->nfiles || !img || !out)
		return EINVAL;
	*out = (struct symproc_files){.fd = {-1, -1, -1}};
	struct file *f = p->file[file];
	if (!p->available)
		return ENOTSUP;
	if (f->given_up)
		return ENOENT;
	static struct request rq;
	struct child *c = NULL;
	bool sent = false;
	for (int attempt = 0; attempt < 2 && !sent; attempt++) {
		c = child_for(p, p->root ? f->uid : geteuid());
		if (!c)
			break;
		memset(&rq, 0, sizeof rq);
		rq.seq = ++c->seq;
		rq.kind = REQUEST_FILES;
		rq.img = *img;
		if (idle_and_alive(c) && send(c->fd, &rq, sizeof rq, MSG_NOSIGNAL) == (ssize_t)sizeof rq)
			sent = true;
		else
			end_child(c);
	}
	if (!sent) {
		give_up(p, f, "no symbolizer process");
		return ENOENT;
	}
	c->used = ++p->lookups;
	uint64_t start = now_ns(), budget = p->timeout_ns * SYMPROC_FILE_BUDGET;
	uint64_t left = budget > f->spent_ns ? budget - f->spent_ns : 0;
	size_t len = 0;
	int fds[3];
	unsigned nfds = 0;
	enum wait_result w = wait_files_reply(
	    p, c, start + (left < p->timeout_ns ? left : p->timeout_ns), &len, fds, &nfds);
	f->spent_ns += now_ns() - start;
	struct symproc_files_reply r;
	if (w == ANSWERED && symproc_parse_files_reply(p->reply, len, c->seq, nfds, &r) != 0)
		w = FAILED;
	uint64_t size[3] = {0, 0, 0};
	for (unsigned i = 0; w == ANSWERED && i < nfds; i++)
		if (!symproc_sealed_memfd(fds[i], &size[i]))
			w = FAILED;
	if (w != ANSWERED) {
		for (unsigned i = 0; i < nfds; i++)
			close(fds[i]);
		end_child(c);
		give_up(p, f, w == TIMED_OUT ? "time budget" : "the symbolizer failed");
		return ENOENT;
	}
	for (unsigned i = 0; i < r.notes; i++)
		keep_note(p, r.note[i]);
	f->given_up |= r.err == ENOENT;
	if (r.err)
		return r.err;
	unsigned next = 0;
	for (int k = 0; k < 3; k++)
		if (r.kinds & (1u << k)) {
			out->fd[k] = fds[next];
			out->size[k] = size[next++];
		}
	out->alt_id_size = r.alt_id_size;
	memcpy(out->alt_id, r.alt_id, sizeof out->alt_id);
	return 0;
}

/* ---- the table --------------------------------------------------------- */

struct symproc *symproc_new(const struct symproc_options *o)
{
	struct symproc *p = calloc(1, sizeof *p);
	if (!p)
		return NULL;
	for (int i = 0; i < SYMPROC_CHILDREN_MAX; i++)
		p->child[i].fd = -1;
	p->available = symbolizer_available();
	p->root = symproc_root_over_others(geteuid(), own_uid_map());
	p->demangle = !(o && o->no_demangle);
	struct passwd *pw = getpwnam("nobody");
	p->nobody = pw ? pw->pw_uid : NOBODY_FALLBACK;
	p->nobody_gid = pw ? pw->pw_gid : NOBODY_FALLBACK;
	struct stat st;
	p->claimant = o && o->log_fd >= 0 && fstat(o->log_fd, &st) == 0
	                      ? symproc_log_claimant(&st, p->nobody) : p->nobody;
	p->timeout_ns = (uint64_t)(o && o->timeout_ms ? o->timeout_ms : SYMPROC_TIMEOUT_MS_DEFAULT) *
	                1000000u;
	/* the child's directory may not be the command's to search: an
	 * absolute DIR (as the command resolves it, with root's rights) */
	if (o && o->symfs && !(p->symfs = realpath(o->symfs, NULL)) && !(p->symfs = strdup(o->symfs))) {
		free(p);
		return NULL;
	}
	return p;
}

void symproc_free(struct symproc *p)
{
	if (!p)
		return;
	for (int i = 0; i < SYMPROC_CHILDREN_MAX; i++)
		end_child(&p->child[i]);
	for (uint32_t i = 0; i < p->nfiles; i++) {
		free(p->file[i]->path);
		free(p->file[i]);
	}
	for (unsigned i = 0; i < p->nnotes; i++)
		free(p->note[i]);
	free(p->file);
	free(p->index);
	free(p->symfs);
	free(p);
}
