/* SPDX-License-Identifier: MIT */
/*
 * A process's channel: a socket pair it makes when it loads the library.
 * A controller pulls the sending end out of the process with pidfd_getfd(),
 * which the kernel allows exactly when ptrace would be allowed, and sends
 * a token of the sealed stream memfd over it (SCM_RIGHTS, token.h); the
 * process takes it on its next event.  Nothing can push a descriptor into
 * a process otherwise, and the receiver still checks who sent it
 * (SCM_CREDENTIALS).  The channel's ends go down the process's tree through
 * exec, so a descendant of another user may read what waits on it: a token,
 * which it cannot open.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "channel.h"
#include "token.h"

int pt_channel_create(int *rx, int *tx)
{
	int sv[2], on = 1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
		return errno == EMFILE || errno == ENFILE ? EAGAIN : ENOMEM;
	setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof on);
	*rx = sv[0];
	*tx = sv[1];
	return 0;
}

static int send_one(int tx, const struct pt_offer_msg *msg, int fd);

/* Sends a token of fd (token.h), never fd itself. */
int pt_channel_send(int tx, const struct pt_offer_msg *msg, int fd)
{
	int token = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (token < 0 || pt_token_make(token, 0) != 0) {
		if (token >= 0)
			close(token);
		return EAGAIN;
	}
	int err = send_one(tx, msg, token);
	close(token);
	return err;
}

static int send_one(int tx, const struct pt_offer_msg *msg, int fd)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(int))];
	} u;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = sizeof *msg};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                    .msg_controllen = sizeof u.buf};
	memset(u.buf, 0, sizeof u.buf);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof fd);
	if (sendmsg(tx, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) != (ssize_t)sizeof *msg)
		return EAGAIN;
	return 0;
}

static void close_rights(struct cmsghdr *c)
{
	size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
	for (size_t i = 0; i < n; i++) {
		int fd;
		memcpy(&fd, CMSG_DATA(c) + i * sizeof fd, sizeof fd);
		close(fd);
	}
}

static int channel_get(int rx, struct pt_offer_msg *msg, int *fd, uid_t *sender_uid, int flags);

/* One message: 0 with *fd (or -1) and the sender's uid; EAGAIN when there
 * is none; EBADMSG for a malformed one (its descriptors are closed). */
int pt_channel_recv(int rx, struct pt_offer_msg *msg, int *fd, uid_t *sender_uid)
{
	return channel_get(rx, msg, fd, sender_uid, 0);
}

/* The same, leaving the message on the channel (at the peek offset). */
int pt_channel_peek(int rx, struct pt_offer_msg *msg, int *fd, uid_t *sender_uid)
{
	return channel_get(rx, msg, fd, sender_uid, MSG_PEEK);
}

static int channel_get(int rx, struct pt_offer_msg *msg, int *fd, uid_t *sender_uid, int flags)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = sizeof *msg};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
	                    .msg_controllen = sizeof u.buf};
	ssize_t n = recvmsg(rx, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC | flags);
	if (n < 0)
		return errno == EINTR ? EBADMSG : EAGAIN;
	int got = -1, ok = n == (ssize_t)sizeof *msg && !(mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC));
	*sender_uid = (uid_t)-1;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_CREDENTIALS &&
		    c->cmsg_len == CMSG_LEN(sizeof(struct ucred))) {
			struct ucred cr;
			memcpy(&cr, CMSG_DATA(c), sizeof cr);
			*sender_uid = cr.uid;
		} else if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			if (got < 0 && c->cmsg_len == CMSG_LEN(sizeof(int))) {
				memcpy(&got, CMSG_DATA(c), sizeof got);
			} else {
				close_rights(c);
				ok = 0;
			}
		}
	}
	if (!ok || n == 0) {
		if (got >= 0)
			close(got);
		return n == 0 ? EAGAIN : EBADMSG;
	}
	*fd = got;
	return 0;
}
