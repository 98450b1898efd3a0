/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous, served (rendezvous.h).  pt_rdv_open and pt_rdv_close run
 * in the controller; pt_rdv_serve_start and everything under it run in the
 * keeper process, in its main loop: a connection to the join socket wakes
 * it at once (a signal moves the word it sleeps on), so that a joiner,
 * which waits at most PT_RDV_WAIT_MS, does not wait for the keeper's tick.
 *
 * Whom the keeper serves: the process at the other end of a connection, as
 * the kernel names it (SO_PEERCRED), if the keeper may trace it (the
 * ptrace rule, pt_remote_open), it descends from the stream's target (its
 * parents, each named by pid and start time, up to the target), and it has
 * loaded the library (its block and channel, checked as for any target:
 * pt_remote_reach), and it runs as the user the stream's memory belongs
 * to (its owner: root's memory goes to root alone, a user's to that
 * user, as pt_trust_tree_fd in join.c would take it).  The kernel enforces
 * the last already: the join socket is that user's, mode 0600, so another
 * user cannot connect to it, nor fill its queue to slow the joins of the
 * user it is for.  A process of another user goes to the others socket
 * instead, which takes a connection and waits for nothing; it is counted
 * when it descends from the target, so that the controller can say which
 * part of its tree it did not trace.  That socket is anybody's: the keeper
 * looks at it once a tick, after the joins and its drains, and pays for
 * it from a budget of connections and /proc reads (pt_rdv_serve_others).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include "channel.h"
#include "process.h"
#include "rdv_serve.h"
#include "remote.h"

#define RDV_BACKLOG 128
/* Joiners answered in one look, between the keeper's other work. */
#define RDV_PER_LOOK 32
/* Parents looked at before a process counts as not descending: deeper
 * than any real tree, and a bound on the work one connection costs. */
#define RDV_MAX_DEPTH 4096

/* Whether a connection's process descends from the target. */
enum descent { NOT_DESCENDANT, DESCENDANT, UNCHECKED };

void pt_rdv_init(struct pt_rdv *r)
{
	r->fd = r->others_fd = -1;
	r->dir[0] = '\0';
}

/* sun_path through the directory's descriptor: any directory path fits. */
static int socket_path(struct sockaddr_un *a, int dirfd, const char *name)
{
	memset(a, 0, sizeof *a);
	a->sun_family = AF_UNIX;
	int n = snprintf(a->sun_path, sizeof a->sun_path, "/proc/self/fd/%d/%s", dirfd, name);
	return n > 0 && (size_t)n < sizeof a->sun_path;
}

static int make_dir(struct pt_rdv *r)
{
	const char *base = secure_getenv("TMPDIR");
	if (!base || base[0] != '/')
		base = "/tmp";
	int n = snprintf(r->dir, sizeof r->dir, "%s/posixtrace-XXXXXX", base);
	int err = n <= 0 || (size_t)n >= sizeof r->dir ? ENAMETOOLONG : 0;
	if (!err && !mkdtemp(r->dir)) {
		err = errno;
	} else if (!err && chmod(r->dir, 0711) != 0) {
		/* Searchable, not listable: another user of the tree reaches
		 * the others socket by its name. */
		err = errno;
		rmdir(r->dir);
	}
	if (err)
		r->dir[0] = '\0';
	return err;
}

/* A socket named name in the directory, listening, of that mode. */
static int listen_at(int dirfd, const char *name, mode_t mode, int *out)
{
	struct sockaddr_un a;
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int err = s < 0 ? errno : 0;
	if (!err && !socket_path(&a, dirfd, name))
		err = ENAMETOOLONG;
	if (!err && (bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, RDV_BACKLOG) != 0 ||
	             fchmodat(dirfd, name, mode, 0) != 0))
		err = errno;
	if (err && s >= 0)
		close(s);
	if (!err)
		*out = s;
	return err;
}

int pt_rdv_open(struct pt_rdv *r)
{
	pt_rdv_init(r);
	int err = make_dir(r);
	int dirfd = err ? -1 : open(r->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (!err && dirfd < 0)
		err = errno;
	if (!err)
		err = listen_at(dirfd, PT_RDV_SOCKET, 0600, &r->fd);
	if (!err)
		err = listen_at(dirfd, PT_RDV_OTHERS, 0666, &r->others_fd);
	if (dirfd >= 0)
		close(dirfd);
	if (err)
		pt_rdv_close(r, 1);
	return err;
}

void pt_rdv_follow_owner(const struct pt_rdv *r, int stream_fd)
{
	struct stat mem, sock;
	if (!r->dir[0] || fstat(stream_fd, &mem) != 0)
		return;
	int dirfd = open(r->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd < 0)
		return;
	if (fstatat(dirfd, PT_RDV_SOCKET, &sock, AT_SYMLINK_NOFOLLOW) == 0 && S_ISSOCK(sock.st_mode) &&
	    (sock.st_uid != mem.st_uid || sock.st_gid != mem.st_gid))
		(void)fchownat(dirfd, PT_RDV_SOCKET, mem.st_uid, mem.st_gid, AT_SYMLINK_NOFOLLOW);
	close(dirfd);
}

void pt_rdv_remove(struct pt_rdv *r)
{
	if (!r->dir[0])
		return;
	int dirfd = open(r->dir, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dirfd >= 0) {
		unlinkat(dirfd, PT_RDV_SOCKET, 0);
		unlinkat(dirfd, PT_RDV_OTHERS, 0);
		close(dirfd);
	}
	rmdir(r->dir);
	r->dir[0] = '\0';
}

void pt_rdv_close(struct pt_rdv *r, int remove)
{
	if (r->fd >= 0)
		close(r->fd);
	if (r->others_fd >= 0)
		close(r->others_fd);
	r->fd = r->others_fd = -1;
	if (remove)
		pt_rdv_remove(r);
}

/* ---- the keeper's side ------------------------------------------------ */

/* A /proc read paid from *budget (NULL: unbounded); 0 when none is left. */
static uint64_t paid_stat(pid_t pid, pid_t *parent, uint32_t *budget, int *out_of_budget)
{
	if (budget && !*budget) {
		*out_of_budget = 1;
		return 0;
	}
	if (budget)
		--*budget;
	return pt_proc_stat(pid, parent);
}

/* Whether pid, started at start, descends from the target (or is it):
 * each parent named by the pid /proc gives and checked by its start time,
 * which a parent's start never follows.  The walk stops at the first
 * process started before the target, which cannot descend from it, so a
 * long chain of processes older than the stream costs nothing; every
 * /proc read is paid from *budget (NULL: unbounded), and a walk the
 * budget cannot finish is UNCHECKED. */
static enum descent descends(const struct pt_rdv_server *s, pid_t pid, uint64_t start,
                             uint32_t *budget)
{
	int out = 0;
	for (int depth = 0; depth < RDV_MAX_DEPTH && pid > 0; depth++) {
		if (pid == s->target)
			return start == s->target_start ? DESCENDANT : NOT_DESCENDANT;
		if (start < s->target_start)
			return NOT_DESCENDANT;
		pid_t parent = 0;
		uint64_t got = paid_stat(pid, &parent, budget, &out);
		if (!got || got != start)
			return out ? UNCHECKED : NOT_DESCENDANT; /* gone, or its pid reused */
		pid = parent;
		start = parent > 0 ? paid_stat(parent, NULL, budget, &out) : 0;
		if (out)
			return UNCHECKED;
		if (start > got)
			return NOT_DESCENDANT; /* a parent younger than its child: pid reuse */
	}
	return NOT_DESCENDANT;
}

static int send_registry(const struct pt_remote *r, int registry_fd)
{
	if (registry_fd < 0)
		return 0;
	struct pt_offer_msg msg = {PT_REGISTRY_OFFER_MAGIC, 0, 0, 0};
	return pt_channel_send(r->tx, &msg, registry_fd);
}

/* Whether the stream's memory belongs to the peer's user: the same
 * owner, and the same group unless root (the join rule, pt_trust_fd). */
static int memory_is_theirs(const struct pt_rdv_server *s, const struct ucred *cred)
{
	struct stat st;
	return fstat(s->stream_fd, &st) == 0 && st.st_uid == cred->uid &&
	       (cred->uid == 0 || st.st_gid == cred->gid);
}

/* Puts the tree's registry and the stream's offer on the channel of the
 * process at the other end of conn (r: that process, left open for the
 * answer): 0, EACCES for a descendant of another user, or why not.
 * Bounded: a few /proc files per parent (RDV_MAX_DEPTH) and the reach of
 * one process. */
static int hand_stream(const struct pt_rdv_server *s, int conn, struct pt_remote *r)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0)
		return EPERM;
	if (!memory_is_theirs(s, &cred))
		return descends(s, cred.pid, pt_proc_stat(cred.pid, NULL), NULL) == DESCENDANT ? EACCES
		                                                                         : EPERM;
	int err = pt_remote_open(cred.pid, r);
	if (!err && descends(s, cred.pid, r->start, NULL) != DESCENDANT)
		err = EPERM;
	if (!err)
		err = pt_remote_reach(r);
	if (!err)
		err = send_registry(r, s->registry_fd);
	/* Not armed: the joiner arms a stream traced with inheritance when it
	 * takes it (pt_join_fd_locked), and one that stopped waiting must not
	 * be led to take it later with a registry of its own. */
	if (!err)
		err = pt_remote_offer(r, s->stream_fd, 0);
	return err;
}

/* Counts only: relaxed.  Counted before the answer goes, so that a
 * joiner that read it finds itself counted. */
static void count(const struct pt_rdv_server *s, int joined, int refused)
{
	if (joined)
		atomic_fetch_add_explicit(&s->counts->joined, (uint64_t)(int64_t)joined,
		                          memory_order_relaxed);
	if (refused)
		atomic_fetch_add_explicit(&s->counts->refused, 1, memory_order_relaxed);
}

static void count_other_user(const struct pt_rdv_server *s)
{
	atomic_fetch_add_explicit(&s->counts->other_users, 1, memory_order_relaxed);
}

static void answer(const struct pt_rdv_server *s, int conn)
{
	struct pt_remote r;
	memset(&r, 0, sizeof r);
	r.pidfd = r.tx = r.reg_fd = r.slot = -1;
	int err = hand_stream(s, conn, &r);
	if (err == EACCES)
		count_other_user(s);
	else
		count(s, !err, err != 0);
	struct pt_rdv_reply reply = {PT_RDV_REPLY_MAGIC, err};
	if (send(conn, &reply, sizeof reply, MSG_NOSIGNAL | MSG_DONTWAIT) != sizeof reply && !err) {
		pt_remote_withdraw(&r); /* it stopped waiting: the offer goes */
		count(s, -1, 1);
	}
	pt_remote_close(&r);
}

/* A process at the others socket: counted when it runs as another user
 * than the stream's memory belongs to and descends from the target (it
 * may be gone already: then it is not); counted as unchecked when the
 * tick's budget of /proc reads cannot pay for its walk. */
static void note_other(const struct pt_rdv_server *s, int conn, uint32_t *budget)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0 || cred.pid <= 0 ||
	    memory_is_theirs(s, &cred))
		return;
	int out = 0;
	uint64_t start = paid_stat(cred.pid, NULL, budget, &out);
	enum descent d = out ? UNCHECKED : descends(s, cred.pid, start, budget);
	if (d == DESCENDANT)
		count_other_user(s);
	else if (d == UNCHECKED)
		atomic_fetch_add_explicit(&s->counts->others_unchecked, 1, memory_order_relaxed);
}

/* The keeper sleeps on keeper_wake (keeper_loop); a connection raises
 * SIGURG (F_SETSIG: ignored by default, so a pid reused after the keeper
 * died is not hurt) and the handler moves the word, which ends or
 * forestalls that sleep. */
static _Atomic uint32_t *wake_word;
static _Atomic int connection_seen;

static void on_connection(int sig)
{
	(void)sig;
	/* A flag and a count in this process: connection_seen before the
	 * wake-up, which pairs with the acquire load of keeper_wake in
	 * keeper_loop (keeper.c), whose next pass then finds the flag. */
	atomic_store_explicit(&connection_seen, 1, memory_order_relaxed);
	if (wake_word)
		atomic_fetch_add_explicit(wake_word, 1, memory_order_release);
}

static int signal_connections(int fd)
{
	int fl = fcntl(fd, F_GETFL);
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK | O_ASYNC) != 0 ||
	    fcntl(fd, F_SETSIG, SIGURG) != 0 || fcntl(fd, F_SETOWN, getpid()) != 0)
		return errno;
	return 0;
}

int pt_rdv_serve_start(const struct pt_rdv_server *s, _Atomic uint32_t *wake)
{
	if (s->listen_fd < 0 || s->others_fd < 0)
		return EINVAL;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_connection;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	wake_word = wake;
	if (sigaction(SIGURG, &sa, NULL) != 0)
		return errno;
	/* The others socket raises nothing: it is looked at once a tick
	 * (pt_rdv_serve_others), so a crowd there cannot wake the keeper. */
	int fl = fcntl(s->others_fd, F_GETFL);
	if (fl < 0 || fcntl(s->others_fd, F_SETFL, fl | O_NONBLOCK) != 0)
		return errno;
	return signal_connections(s->listen_fd);
}

/* Up to RDV_PER_LOOK joiners: 1 when more may wait. */
static int serve_joiners(const struct pt_rdv_server *s)
{
	for (int served = 0; served < RDV_PER_LOOK; served++) {
		int conn = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			return errno == EINTR || errno == ECONNABORTED;
		answer(s, conn);
		close(conn);
	}
	return 1;
}

int pt_rdv_serve_pending(const struct pt_rdv_server *s, int look_anyway)
{
	if (!atomic_exchange_explicit(&connection_seen, 0, memory_order_relaxed) && !look_anyway)
		return 0;
	int more = serve_joiners(s);
	if (more) /* the next pass looks again */
		atomic_store_explicit(&connection_seen, 1, memory_order_relaxed);
	return more;
}

void pt_rdv_serve_others(const struct pt_rdv_server *s)
{
	uint32_t budget = PT_RDV_OTHERS_PROC_READS;
	for (int served = 0; served < PT_RDV_OTHERS_PER_TICK; served++) {
		int conn = accept4(s->others_fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			return;
		note_other(s, conn, &budget);
		close(conn);
	}
}
