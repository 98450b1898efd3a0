/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous, asked (rendezvous.h): at load, a process that joined no
 * stream and finds POSIXTRACE_RENDEZVOUS in its environment connects to
 * the socket in that directory, waits at most PT_RDV_WAIT_MS for the
 * keeper's answer, then takes what the keeper put on its channel (the
 * tree's registry, then the stream's offer) the way it takes any offer.
 *
 * What it trusts: the variable only under the rules of secure_getenv (no
 * AT_SECURE program reads it); the directory only if it is a directory,
 * reached without following a link at its last component, owned by root
 * or this process's real user, and neither readable nor writable by anybody
 * else (mode 0700, or 0711: a root keeper serves a tree where other users
 * run); the join socket is the user's the stream's memory belongs to, mode
 * 0600, so a process of another user is refused by the kernel at once, says
 * so at the others socket (counted) and waits for nothing;
 * the peer only if the kernel says it runs as root or as this process's
 * user (SO_PEERCRED, the join rule of pt_trust_fd); what arrives on its
 * channel under the rules of any offer (join.c).  Nothing here blocks
 * longer than PT_RDV_WAIT_MS in all.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"
#include "join.h"
#include "process.h"
#include "rdv_join.h"

/* Set while this process waits for its rendezvous: only then is a registry
 * offered on the channel taken.  Under pt_proc.lock. */

static int64_t ms_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int joined_any(void)
{
	for (int i = 0; i < PT_MAX_STREAMS; i++)
		if (atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed))
			return 1;
	return 0;
}

/* The directory, if it may be trusted: its descriptor (O_PATH), or -1. */
static int open_trusted_dir(const char *path)
{
	struct stat st;
	if (!path || path[0] != '/')
		return -1;
	int fd = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_mode & 066) != 0 ||
	    (st.st_uid != 0 && st.st_uid != getuid())) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Root, or this process's own user in all three ids. */
static int peer_trusted(int s)
{
	struct ucred cred;
	socklen_t len = sizeof cred;
	uid_t r, e, sv;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
		return 0;
	if (cred.uid == 0)
		return 1;
	return getresuid(&r, &e, &sv) == 0 && cred.uid == r && cred.uid == e && cred.uid == sv;
}

/* A connection to the keeper's socket name, retried while its queue is
 * full, until deadline_ms (0: tried once); -1 with errno when there is
 * none. */
static int connect_by(int dirfd, const char *name, int64_t deadline_ms)
{
	struct sockaddr_un a = {.sun_family = AF_UNIX};
	int n = snprintf(a.sun_path, sizeof a.sun_path, "/proc/self/fd/%d/%s", dirfd, name);
	if (n <= 0 || (size_t)n >= sizeof a.sun_path) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (;;) {
		int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
		if (s < 0)
			return -1;
		if (connect(s, (struct sockaddr *)&a, sizeof a) == 0)
			return s;
		int err = errno;
		close(s);
		errno = err;
		if (err != EAGAIN || ms_now() >= deadline_ms)
			return -1;
		poll(NULL, 0, 1);
	}
}

/* Not this process's to join (the kernel refused the join socket: it is
 * another user's): it says so at the others socket, for the controller's
 * count, and goes on without waiting. */
static void say_other_user(int dirfd)
{
	int s = connect_by(dirfd, PT_RDV_OTHERS, 0);
	if (s >= 0)
		close(s);
}

/* The keeper's answer, by deadline_ms: 1 when it put the stream on this
 * process's channel. */
static int await_answer(int s, int64_t deadline_ms)
{
	struct pt_rdv_reply reply;
	for (;;) {
		int64_t left = deadline_ms - ms_now();
		struct pollfd p = {.fd = s, .events = POLLIN};
		if (left <= 0)
			return 0;
		int ready = poll(&p, 1, (int)left);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return 0;
		ssize_t got = recv(s, &reply, sizeof reply, MSG_DONTWAIT);
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		return got == (ssize_t)sizeof reply && reply.magic == PT_RDV_REPLY_MAGIC && reply.err == 0;
	}
}

void pt_rdv_join_at_load(void)
{
	if (pt_proc.pcb_fd < 0 || pt_proc.chan_rx < 0 || joined_any())
		return;
	int dirfd = open_trusted_dir(secure_getenv(PT_RDV_ENV));
	if (dirfd < 0)
		return;
	int64_t deadline = ms_now() + PT_RDV_WAIT_MS;
	int s = connect_by(dirfd, PT_RDV_SOCKET, deadline);
	if (s < 0 && (errno == EACCES || errno == EPERM))
		say_other_user(dirfd);
	close(dirfd);
	if (s < 0)
		return;
	int offered = peer_trusted(s) && await_answer(s, deadline);
	close(s);
	if (!offered)
		return;
	pt_drain_channel_for_rendezvous_locked();
}
