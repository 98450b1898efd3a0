/* SPDX-License-Identifier: MIT */
/*
 * A controller's hold on another process (remote.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/inet_diag.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "channel.h"
#include "join.h"
#include "memcheck.h"
#include "pcb.h"
#include "process.h"
#include "procfd.h"
#include "registry.h"
#include "remote.h"

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
static int pidfd_getfd_(int pidfd, int fd) { return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0); }

static int pt_remote_alive(const struct pt_remote *r)
{
	struct pollfd p = {.fd = r->pidfd, .events = POLLIN};
	return r->pidfd >= 0 && poll(&p, 1, 0) == 0;
}

/* Whether this process may trace pid: the kernel's ptrace access rule, asked
 * through /proc/PID/mem (same user and dumpable, or CAP_SYS_PTRACE). */
static int may_trace(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return errno == ENOENT || errno == ESRCH ? ESRCH : EPERM;
}

int pt_remote_open(pid_t pid, struct pt_remote *r)
{
	memset(r, 0, sizeof *r);
	r->pidfd = r->tx = r->reg_fd = -1;
	r->slot = -1;
	if (pid <= 0)
		return ESRCH;
	int err = may_trace(pid);
	if (err)
		return err;
	r->pidfd = pidfd_open_(pid);
	if (r->pidfd < 0)
		return errno == ENOSYS ? ENOSYS : ESRCH;
	r->pid = pid;
	r->start = pt_proc_stat(pid, NULL);
	/* The pid named this process when the pidfd was opened and still
	 * does: /proc/PID was the same process. */
	if (!r->start || !pt_remote_alive(r)) {
		pt_remote_close(r);
		return ESRCH;
	}
	return 0;
}

struct block_search {
	pid_t pid, own;          /* its pid here, and in its own namespace */
	int pidfd;
	uint64_t start;
	int err;                 /* ENOENT until a block is found */
	struct pt_pcb *pcb;
	uint64_t ino;
	uid_t owner;
	gid_t owner_gid;
	int foreign;             /* a well-formed block naming another process */
};

/* One control block of the target's, pulled and checked on a copy: 1 when
 * it is the target's own. */
static int check_block(int num, enum pt_memfd_kind kind, void *arg)
{
	struct block_search *b = arg;
	if (kind != PT_MEMFD_PCB)
		return 0;
	int fd = pidfd_getfd_(b->pidfd, num);
	if (fd < 0) {
		if (errno == EPERM || errno == EACCES)
			b->err = EPERM;
		else if (errno == ENOSYS) /* pidfd_getfd: Linux 5.6 */
			b->err = ENOSYS;
		return 0;
	}
	struct pt_pcb *pcb;
	if (pt_pcb_map_fd(fd, &pcb) == 0) {
		/* One copy: the target may change it while we look. */
		struct pt_pcb id;
		memcpy(&id, pcb, offsetof(struct pt_pcb, armed));
		struct stat st;
		if (!pt_pcb_validate(&id, b->own, b->start) && id.magic == PT_PCB_MAGIC &&
		    id.version == PT_LAYOUT_VERSION && id.size == sizeof id)
			b->foreign = 1;
		if (pt_pcb_validate(&id, b->own, b->start) && fstat(fd, &st) == 0) {
			b->pcb = pcb;
			b->ino = (uint64_t)st.st_ino;
			b->owner = st.st_uid;
			b->owner_gid = st.st_gid;
			b->err = 0;
		} else {
			munmap(pcb, sizeof *pcb);
		}
	}
	close(fd);
	return b->err == 0;
}

/* The block names the process by the pid it has in its own namespace;
 * r->owner: the block's owner, whom the channel's ends must name too. */
static int find_block_fd(struct pt_remote *r, struct pt_pcb **out)
{
	struct block_search b = {r->pid, pt_pid_in_own_ns(r->pid), r->pidfd, r->start, ENOENT, NULL,
	                         0, 0, 0, 0};
	int walk = pt_each_memfd(r->pid, check_block, &b);
	r->foreign_block = b.err == ENOENT && b.foreign;
	if (walk)
		return walk == ENOENT ? ESRCH : EPERM;
	if (!b.err) {
		*out = b.pcb;
		r->pcb_ino = b.ino;
		r->owner = b.owner;
		r->owner_gid = b.owner_gid;
	}
	return b.err;
}

/* A descriptor of the target's that must be the AF_UNIX SOCK_SEQPACKET
 * socket `ref` names (number and inode): the descriptor, or -1. */
static int pull_socket(const struct pt_remote *r, const struct pt_fdref *ref)
{
	int fd = pidfd_getfd_(r->pidfd, ref->fd);
	struct stat st;
	int type = 0, domain = 0;
	socklen_t tl = sizeof type, dl = sizeof domain;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	    (uint64_t)st.st_ino == ref->ino &&
	    getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tl) == 0 && type == SOCK_SEQPACKET &&
	    getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &dl) == 0 && domain == AF_UNIX) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The inode of the peer of AF_UNIX socket `ino`, asked of the kernel
 * (sock_diag, UNIX_DIAG_PEER): 0 for none, -1 when the kernel cannot say
 * (no unix_diag). */
static int64_t unix_peer(uint64_t ino)
{
	int nl = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
	if (nl < 0)
		return -1;
	struct {
		struct nlmsghdr nh;
		struct unix_diag_req req;
	} q = {.nh = {.nlmsg_len = sizeof q, .nlmsg_type = SOCK_DIAG_BY_FAMILY,
	              .nlmsg_flags = NLM_F_REQUEST},
	       .req = {.sdiag_family = AF_UNIX, .udiag_states = ~0u, .udiag_ino = (uint32_t)ino,
	               .udiag_show = UDIAG_SHOW_PEER,
	               .udiag_cookie = {INET_DIAG_NOCOOKIE, INET_DIAG_NOCOOKIE}}};
	struct sockaddr_nl to = {.nl_family = AF_NETLINK};
	uint32_t buf[512];
	int64_t peer = -1;
	ssize_t n = -1;
	if (sendto(nl, &q, sizeof q, 0, (struct sockaddr *)&to, sizeof to) == sizeof q)
		n = recv(nl, buf, sizeof buf, 0);
	close(nl);
	struct nlmsghdr *h = (struct nlmsghdr *)buf;
	if (n < (ssize_t)sizeof *h || !NLMSG_OK(h, (size_t)n))
		return -1;
	if (h->nlmsg_type == NLMSG_ERROR) {
		const struct nlmsgerr *e = NLMSG_DATA(h);
		/* ENOENT: no such socket, which a channel end is not */
		return h->nlmsg_len >= NLMSG_LENGTH(sizeof *e) && e->error == -ENOENT ? 0 : -1;
	}
	if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
	    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
		return -1;
	const struct unix_diag_msg *m = NLMSG_DATA(h);
	if (m->udiag_ino != (uint32_t)ino)
		return 0;
	int len = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
	uint32_t peer32;
	peer = 0;
	for (struct rtattr *a = (struct rtattr *)(m + 1); RTA_OK(a, len); a = RTA_NEXT(a, len))
		if (a->rta_type == UNIX_DIAG_PEER && RTA_PAYLOAD(a) >= (int)sizeof(uint32_t))
			memcpy(&peer32, RTA_DATA(a), sizeof peer32), peer = peer32;
	return peer;
}

/* Without unix_diag: both ends were made by one socketpair() call if each
 * has the other's creator as its peer (SO_PEERCRED of a socketpair is its
 * creator's credentials) and that creator is root or the user who made the
 * block, so a descriptor sent on tx reaches no third user. */
static int same_pair_by_creds(int tx, int rx, uid_t block_owner)
{
	struct ucred a, b;
	socklen_t la = sizeof a, lb = sizeof b;
	return getsockopt(tx, SOL_SOCKET, SO_PEERCRED, &a, &la) == 0 &&
	       getsockopt(rx, SOL_SOCKET, SO_PEERCRED, &b, &lb) == 0 && a.pid == b.pid &&
	       a.uid == b.uid && a.gid == b.gid && (a.uid == 0 || a.uid == block_owner);
}

/* Its channel's sending end, which must be the socket its block names and
 * the peer of the receiving end its block names (both pulled out of the
 * target), so that the stream is sent to the target and to nobody else:
 * EPERM otherwise (a target that points its block at a socket connected
 * to someone else's server). */
static int pull_channel(struct pt_remote *r, uid_t block_owner)
{
	struct pt_fdref tx_ref, rx_ref;
	memcpy(&tx_ref, &r->pcb->channel_tx, sizeof tx_ref);
	memcpy(&rx_ref, &r->pcb->channel_rx, sizeof rx_ref);
	int tx = pull_socket(r, &tx_ref), rx = tx >= 0 ? pull_socket(r, &rx_ref) : -1;
	int ok = 0;
	if (rx >= 0) {
		int64_t peer = unix_peer(tx_ref.ino);
		ok = peer >= 0 ? (uint64_t)peer == rx_ref.ino && unix_peer(rx_ref.ino) == (int64_t)tx_ref.ino
		               : same_pair_by_creds(tx, rx, block_owner);
		close(rx);
	}
	if (ok) {
		r->tx = tx;
		return 0;
	}
	if (tx >= 0)
		close(tx);
	return EPERM;
}

/* Its registry, so that names agree with the target's own ids. */
static void pull_registry(struct pt_remote *r)
{
	struct pt_fdref ref;
	memcpy(&ref, &r->pcb->registry, sizeof ref);
	int fd = pidfd_getfd_(r->pidfd, ref.fd);
	if (fd < 0)
		return;
	if (pt_fd_is(fd, ref.ino) && pt_registry_map_fd(fd, &r->reg) != 0)
		r->reg = NULL;
	if (r->reg)
		r->reg_fd = fd;
	else
		close(fd);
}

/* The same file as the program of /proc/PID/exe. */
static int same_program(pid_t pid, const struct stat *as)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)pid);
	return stat(path, &st) == 0 && st.st_dev == as->st_dev && st.st_ino == as->st_ino;
}

int pt_remote_fork_pending(const struct pt_remote *r)
{
	char path[64];
	struct stat exe;
	pid_t parent = 0;
	if (!pt_proc_stat(r->pid, &parent) || parent <= 0)
		return 0;
	/* No block at all: the child's handler may be between closing the
	 * inherited block and making its own, when its parent is this process
	 * (which has the library). */
	if (!r->foreign_block && parent != pt_proc.pid)
		return 0;
	snprintf(path, sizeof path, "/proc/%d/exe", (int)r->pid);
	return stat(path, &exe) == 0 && same_program(parent, &exe) && pt_remote_alive(r);
}

int pt_remote_reach(struct pt_remote *r)
{
	if (r->pcb)
		return 0;
	struct pt_pcb *pcb;
	int err = find_block_fd(r, &pcb);
	if (err)
		return err;
	r->pcb = pcb;
	err = pull_channel(r, r->owner);
	if (err || !pt_remote_alive(r)) {
		if (r->tx >= 0)
			close(r->tx);
		r->tx = -1;
		munmap(r->pcb, sizeof *r->pcb);
		r->pcb = NULL;
		return err ? err : ENOENT;
	}
	pull_registry(r);
	return 0;
}

int pt_remote_offer(struct pt_remote *r, int stream_fd, int running)
{
	if (!r->pcb)
		return ENOENT;
	for (int i = 0; i < PT_PCB_SLOTS; i++) {
		struct pt_pcb_slot *s = &r->pcb->slots[i];
		uint32_t free_ = PT_SLOT_FREE;
		/* Pairs with the target's release stores of FREE (pt_detach_locked in
		 * slots.c, pt_take_one_offer in join.c, rejoin_own_streams in
		 * adopt.c). */
		if (!atomic_compare_exchange_strong_explicit(&s->state, &free_, PT_SLOT_OFFERED,
		                                             memory_order_acq_rel, memory_order_relaxed))
			continue;
		r->slot = i;
		/* Release: OFFERED first; pairs with the acquire loads of gen in
		 * pt_take_one_offer (join.c) and pt_remote_withdraw. */
		r->gen = atomic_fetch_add_explicit(&s->gen, 1, memory_order_acq_rel) + 1;
		struct pt_offer_msg msg = {PT_OFFER_MAGIC, (uint32_t)i, r->gen, 0};
		if (pt_channel_send(r->tx, &msg, stream_fd) != 0) {
			/* Pairs with the acq_rel CAS of state above and in
			 * pt_attach_local (slots.c). */
			atomic_store_explicit(&s->state, PT_SLOT_FREE, memory_order_release);
			r->slot = -1;
			return EAGAIN;
		}
		if (running)
			pt_remote_arm(r, 1);
		return 0;
	}
	return EAGAIN;
}

/* The last id of a "Uid:" or "Gid:" line of /proc/PID/status: the one
 * the process opens files with. */
static int fs_id(const char *status, const char *key, unsigned long *out)
{
	const char *p = strstr(status, key);
	if (!p)
		return 0;
	p += strlen(key);
	int n = 0;
	for (char *end; n < 4; n++, p = end) {
		unsigned long v = strtoul(p, &end, 10);
		if (end == p)
			break;
		*out = v;
	}
	return n == 4;
}

/* Who the target opens files as now: its block's owner, unless it changed
 * user since it made the block (a worker of a daemon that drops
 * privileges without exec). */
static void target_user(const struct pt_remote *r, uid_t *uid, gid_t *gid)
{
	char path[64], status[4096];
	unsigned long u, g;
	*uid = r->owner;
	*gid = r->owner_gid;
	snprintf(path, sizeof path, "/proc/%d/status", (int)r->pid);
	if (pt_read_text(path, status, sizeof status) > 0 && fs_id(status, "\nUid:", &u) &&
	    fs_id(status, "\nGid:", &g) && pt_remote_alive(r)) {
		*uid = (uid_t)u;
		*gid = (gid_t)g;
	}
}

/* The target opens the stream it is offered with its own rights (token.h),
 * and one traced with inheritance goes down its tree through exec, where a
 * process takes root's memory only if it is root (pt_trust_tree_fd,
 * join.c): root's stream for a process of another user becomes that
 * user's. */
static void give_to_target_user(const struct pt_remote *r, const struct pt_map *m)
{
	struct stat st;
	uid_t uid;
	gid_t gid;
	if (geteuid() != 0 || fstat(m->fd, &st) != 0 || st.st_uid != 0)
		return;
	target_user(r, &uid, &gid);
	if (uid != 0)
		(void)fchown(m->fd, uid, gid);
}

int pt_remote_hand_over(struct pt_remote *r, const struct pt_map *m, int running)
{
	int err = pt_remote_reach(r);
	if (err)
		return err;
	give_to_target_user(r, m);
	if (r->reg)
		pt_reg_to_stream(r->reg, m, 1);
	return pt_remote_offer(r, m->fd, running);
}

void pt_remote_arm(struct pt_remote *r, int on)
{
	if (!r->pcb || r->slot < 0)
		return;
	uint64_t bit = 1ull << r->slot;
	/* Release: the offer and the stream's state first; pairs with the acquire
	 * loads of armed in record, record_general (writer.c) and
	 * pt_take_offers_before_fork (join.c). */
	if (on)
		atomic_fetch_or_explicit(&r->pcb->armed, bit, memory_order_release);
	else
		atomic_fetch_and_explicit(&r->pcb->armed, ~bit, memory_order_release);
}

void pt_remote_withdraw(struct pt_remote *r)
{
	if (!r->pcb || r->slot < 0)
		return;
	struct pt_pcb_slot *s = &r->pcb->slots[r->slot];
	uint32_t offered = PT_SLOT_OFFERED;
	/* Values only (a newer offer or join_inherited in adopt.c changed gen, or the
	 * target took the offer): relaxed would do. */
	if (atomic_load_explicit(&s->gen, memory_order_acquire) == r->gen &&
	    atomic_compare_exchange_strong_explicit(&s->state, &offered, PT_SLOT_FREE,
	                                            memory_order_acq_rel, memory_order_relaxed))
		pt_remote_arm(r, 0);
	else
		pt_remote_arm(r, 1); /* the target unmaps the dead stream on its next event */
	r->slot = -1;
}

struct block_held {
	pid_t pid;
	uint64_t ino;
	int found;
};

static int is_held_block(int num, enum pt_memfd_kind kind, void *arg)
{
	struct block_held *b = arg;
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/fd/%d", (int)b->pid, num);
	b->found = kind == PT_MEMFD_PCB && stat(path, &st) == 0 && (uint64_t)st.st_ino == b->ino;
	return b->found;
}

int pt_remote_offer_stranded(const struct pt_remote *r)
{
	if (!r->pcb || r->slot < 0)
		return 0;
	const struct pt_pcb_slot *s = &r->pcb->slots[r->slot];
	/* Values only: the target took the offer, or it still waits. */
	if (atomic_load_explicit(&s->state, memory_order_relaxed) != PT_SLOT_OFFERED ||
	    atomic_load_explicit(&s->gen, memory_order_relaxed) != r->gen)
		return 0;
	struct block_held b = {r->pid, r->pcb_ino, 0};
	return pt_each_memfd(r->pid, is_held_block, &b) == 0 && !b.found && pt_remote_alive(r);
}

void pt_remote_unreach(struct pt_remote *r)
{
	if (r->pcb)
		munmap(r->pcb, sizeof *r->pcb);
	if (r->reg)
		munmap(r->reg, sizeof *r->reg);
	r->reg = NULL;
	if (r->reg_fd >= 0)
		close(r->reg_fd);
	if (r->tx >= 0)
		close(r->tx);
	r->pcb = NULL;
	r->tx = r->reg_fd = r->slot = -1;
}

void pt_remote_close(struct pt_remote *r)
{
	pt_remote_unreach(r);
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pidfd = -1;
}
