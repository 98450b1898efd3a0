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
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "remote.h"

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }
static int pidfd_getfd_(int pidfd, int fd) { return (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0); }

int pt_remote_alive(const struct pt_remote *r)
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
	r->pidfd = r->tx = -1;
	r->slot = -1;
	if (pid <= 0)
		return ESRCH;
	int err = may_trace(pid);
	if (err)
		return err;
	r->pidfd = pidfd_open_(pid);
	if (r->pidfd < 0)
		return ESRCH;
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

/* The block names the process by the pid it has in its own namespace. */
static int find_block_fd(pid_t pid, int pidfd, uint64_t start, struct pt_pcb **out)
{
	pid_t own = pt_pid_in_own_ns(pid);
	char dir[64], path[384], link[128];
	int err = ENOENT;
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT ? ESRCH : EPERM;
	struct dirent *e;
	while ((e = readdir(d)) && err) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:posixtrace-pcb", 21) != 0)
			continue;
		int fd = pidfd_getfd_(pidfd, atoi(e->d_name));
		if (fd < 0) {
			if (errno == EPERM || errno == EACCES)
				err = EPERM;
			continue;
		}
		struct pt_pcb *pcb;
		if (pt_pcb_map_fd(fd, &pcb) == 0) {
			/* One copy: the target may change it while we look. */
			struct pt_pcb id;
			memcpy(&id, pcb, offsetof(struct pt_pcb, armed));
			if (pt_pcb_validate(&id, own, start)) {
				*out = pcb;
				err = 0;
			} else {
				munmap(pcb, sizeof *pcb);
			}
		}
		close(fd);
	}
	closedir(d);
	return err;
}

/* Its channel's sending end, which must be the socket its block names. */
static int pull_channel(struct pt_remote *r)
{
	struct pt_fdref tx;
	memcpy(&tx, &r->pcb->channel_tx, sizeof tx);
	int fd = pidfd_getfd_(r->pidfd, tx.fd);
	struct stat st;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISSOCK(st.st_mode) && (uint64_t)st.st_ino == tx.ino) {
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		r->tx = fd;
		return 0;
	}
	if (fd >= 0)
		close(fd);
	return ENOENT;
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
	close(fd);
}

int pt_remote_reach(struct pt_remote *r)
{
	if (r->pcb)
		return 0;
	struct pt_pcb *pcb;
	int err = find_block_fd(r->pid, r->pidfd, r->start, &pcb);
	if (err)
		return err;
	r->pcb = pcb;
	if (pull_channel(r) != 0 || !pt_remote_alive(r)) {
		munmap(r->pcb, sizeof *r->pcb);
		r->pcb = NULL;
		return ENOENT;
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
		 * process.c, take_one_offer and rejoin_own_streams in join.c). */
		if (!atomic_compare_exchange_strong_explicit(&s->state, &free_, PT_SLOT_OFFERED,
		                                             memory_order_acq_rel, memory_order_relaxed))
			continue;
		r->slot = i;
		/* Release: OFFERED first; pairs with the acquire loads of gen in
		 * take_one_offer (join.c) and pt_remote_withdraw. */
		r->gen = atomic_fetch_add_explicit(&s->gen, 1, memory_order_acq_rel) + 1;
		struct pt_offer_msg msg = {PT_OFFER_MAGIC, (uint32_t)i, r->gen, 0};
		if (pt_channel_send(r->tx, &msg, stream_fd) != 0) {
			/* Pairs with the acq_rel CAS of state above and in
			 * pt_attach_local (process.c). */
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
	/* Values only (a newer offer or join_inherited in join.c changed gen, or the
	 * target took the offer): relaxed would do. */
	if (atomic_load_explicit(&s->gen, memory_order_acquire) == r->gen &&
	    atomic_compare_exchange_strong_explicit(&s->state, &offered, PT_SLOT_FREE,
	                                            memory_order_acq_rel, memory_order_relaxed))
		pt_remote_arm(r, 0);
	else
		pt_remote_arm(r, 1); /* the target unmaps the dead stream on its next event */
	r->slot = -1;
}

void pt_remote_close(struct pt_remote *r)
{
	if (r->pcb)
		munmap(r->pcb, sizeof *r->pcb);
	if (r->reg)
		munmap(r->reg, sizeof *r->reg);
	r->reg = NULL;
	if (r->tx >= 0)
		close(r->tx);
	if (r->pidfd >= 0)
		close(r->pidfd);
	r->pcb = NULL;
	r->tx = r->pidfd = -1;
}
