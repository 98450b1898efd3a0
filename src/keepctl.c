/* SPDX-License-Identifier: MIT */
/*
 * The controller's side of the keeper (keepctl.h); this file runs in the
 * controller's process (keeper.c is the keeper's own).  It begins the log,
 * forks the keeper, sends it commands on a socket and waits for them with
 * a bound, replaces a keeper that died or is stuck, and waits for the
 * keepers when the process exits.  Every wait goes through the keeper's
 * pidfd: no call blocks in waitpid on a live process.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include "clock.h"
#include "ctl.h"
#include "handle.h"
#include "keepctl.h"
#include "keeper.h"
#include "log/log.h"
#include "stream.h"

_Static_assert(TRACE_SYS_MAX <= PT_QUEUE_KEEPERS, "a budget slot per keeper of a controller");


static int pidfd_gone(int pidfd, int timeout_ms)
{
	struct pollfd p = {.fd = pidfd, .events = POLLIN};
	int r;
	while ((r = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
		;
	return r != 0;
}

/* The output-queue budget this process's keepers share (logio.h): mapped
 * shared and anonymous, so that only this process and the keepers it
 * forks see it; a fork child that starts keepers of its own maps its own
 * (the pid says whose it is).  NULL when it could not be mapped: each
 * queue then keeps its own bound only. */
static _Atomic(struct pt_queue_budget *) queue_budget;
static _Atomic pid_t queue_budget_pid;

static struct pt_queue_budget *budget_of_this_process(void)
{
	struct pt_queue_budget *b = atomic_load(&queue_budget);
	if (b && atomic_load(&queue_budget_pid) == getpid())
		return b;
	void *m = mmap(NULL, sizeof *b, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	/* A parent's, inherited by fork, stays mapped: its keepers may still
	 * use it, and a page is all it costs. */
	if (!atomic_compare_exchange_strong(&queue_budget, &b, (struct pt_queue_budget *)m)) {
		munmap(m, sizeof *b);
		return atomic_load(&queue_budget_pid) == getpid() ? b : NULL;
	}
	atomic_store(&queue_budget_pid, getpid());
	return m;
}

struct pt_queue_budget *pt_keeper_queue_budget(void)
{
	return atomic_load(&queue_budget);
}

/* Forks a keeper for the handle's stream.  ENOSYS without pidfd_open
 * (Linux before 5.3, or a seccomp filter): a keeper whose death cannot be
 * seen could not be waited for with a bound. */
static int spawn(struct pt_handle *h)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
		return EAGAIN;
	(void)budget_of_this_process();
	pt_forking_keeper = 1;
	pid_t pid = fork();
	pt_forking_keeper = 0;
	if (pid == 0)
		pt_keeper_main(h, sv[1], pt_proc.pid);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return EAGAIN;
	}
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		kill(pid, SIGKILL);
		close(sv[0]);
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
		return ENOSYS;
	}
	h->keeper = pid;
	h->keeper_sock = sv[0];
	h->keeper_pidfd = pidfd;
	return 0;
}

void pt_keeper_log_params(struct pt_logw_params *p, const struct pt_handle *h)
{
	const struct pt_attr *a = &h->attr;
	memset(p, 0, sizeof *p);
	memcpy(p->trace_name, a->name, sizeof p->trace_name);
	memcpy(p->genversion, a->genversion, sizeof p->genversion);
	p->create_sec = a->create_sec;
	p->create_nsec = a->create_nsec;
	p->create_mono = h->src.map.base_mono_ns;
	p->clockres_ns = (uint64_t)a->clockres_sec * 1000000000u + (uint64_t)a->clockres_nsec;
	p->stream_size = a->stream_size;
	p->max_data_size = a->max_data_size;
	p->log_size = a->log_size;
	p->stream_policy = a->stream_policy;
	p->log_policy = a->log_policy;
	p->inheritance = a->inheritance;
}

/* The first file of a rotated log, by its number in the directory (once
 * its header is written when it is made unnamed: *named 0). */
static int first_file(struct pt_handle *h, int *named)
{
	struct pt_ctl *c = h->src.ctl;
	int err = 0;
	h->log_fd = pt_rot_create(h->rot.dir, 1, h->rot.mode, &c->rot_dev, &c->rot_ino, named, &err);
	c->rot_current = c->rot_oldest = 1;
	return h->log_fd < 0 ? err : 0;
}

int pt_keeper_start(struct pt_handle *h, int logfd)
{
	if (logfd >= 0 || h->rot.dir >= 0) {
		struct pt_logw w;
		struct pt_logw_params p;
		int named = 1;
		if (h->rot.dir >= 0) {
			int err = first_file(h, &named);
			if (err)
				return err;
		} else {
			h->log_fd = fcntl(logfd, F_DUPFD_CLOEXEC, 0);
		}
		if (h->log_fd < 0)
			return EBADF;
		pt_keeper_log_params(&p, h);
		int err = pt_logw_begin(&w, &h->src.ctl->logw, h->log_fd, &p);
		if (err)
			return err;
		pt_logw_free(&w);
		if (!named && (err = pt_rot_name_file(h->rot.dir, 1, h->log_fd)) != 0)
			return err;
	}
	int err = spawn(h);
	/* The first keeper has the first file; the controller does not keep
	 * it, so that it goes once removed (a later keeper reopens the file
	 * being written by its number). */
	if (!err && h->rot.dir >= 0) {
		close(h->log_fd);
		h->log_fd = -1;
	}
	return err;
}

/* A library built with ThreadSanitizer runs its keeper 5 to 15 times
 * slower: its bound grows with it, so that a keeper that works is not
 * taken for a stuck one (AddressSanitizer's 2 to 3 times fit the bound). */
#if defined(__SANITIZE_THREAD__)
#define KEEPER_BOUND_SCALE 10u
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define KEEPER_BOUND_SCALE 10u
#endif
#endif
#ifndef KEEPER_BOUND_SCALE
#define KEEPER_BOUND_SCALE 1u
#endif

/* How long a keeper may take over a command: a second, plus the stream's
 * room at the rate of a plain write (100 MB/s). */
static uint64_t keeper_bound_ns(const struct pt_handle *h)
{
	return (1000000000ull + h->src.map.event_room * 10u) * KEEPER_BOUND_SCALE;
}

static int ms_until(uint64_t deadline)
{
	uint64_t now = pt_mono_ns();
	return now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
}

/* Milliseconds left before a keeper that makes no progress counts as
 * stuck: the deadline moves on while it drains (keeper_progress), so a
 * keeper slowed down (a loaded machine, a sanitizer) is not killed while
 * it works; its drains are bounded (pt_read_begin_drain), so the wait is.
 * Time it spends blocked on the log's destination (a slow disk, a full
 * pipe: the controller's choice, not the target's) does not count. */
static int ms_left(struct pt_handle *h, uint64_t *deadline)
{
	uint64_t p = atomic_load_explicit(&h->src.ctl->keeper_progress, memory_order_relaxed);
	/* A count only, as the writer's (pt_logio_destination_wait, logio.c). */
	if (__atomic_load_n(&h->src.ctl->logw.in_io, __ATOMIC_RELAXED))
		p = ~h->keeper_seen;
	if (p != h->keeper_seen) {
		h->keeper_seen = p;
		*deadline = pt_mono_ns() + keeper_bound_ns(h);
	}
	return ms_until(*deadline);
}

static int keeper_alive(const struct pt_handle *h)
{
	return h->keeper_pidfd >= 0 && !pidfd_gone(h->keeper_pidfd, 0);
}

/* The keeper ended, killed first if it is still there (SIGKILL through
 * its pidfd: no pid reuse), and reaped.  Bounded: one that does not die
 * within a second (stuck in the kernel) is left to be reaped later. */
static void reap(struct pt_handle *h)
{
	if (h->keeper > 0 && h->keeper_pidfd >= 0) {
		if (keeper_alive(h))
			syscall(SYS_pidfd_send_signal, h->keeper_pidfd, SIGKILL, NULL, 0);
		if (pidfd_gone(h->keeper_pidfd, 1000))
			while (waitpid(h->keeper, NULL, WNOHANG) < 0 && errno == EINTR)
				;
	}
	if (h->keeper_sock >= 0)
		close(h->keeper_sock);
	if (h->keeper_pidfd >= 0)
		close(h->keeper_pidfd);
	pt_queue_budget_release(pt_keeper_queue_budget(), h->keeper);
	h->keeper = 0;
	h->keeper_sock = h->keeper_pidfd = -1;
}

static _Atomic int exiting; /* exit() has begun: no keeper is started */

/* The keeper died or is stuck: the log says so where it happened, and a
 * new keeper continues it. */
static int replace_keeper(struct pt_handle *h)
{
	int err = EIO;
	reap(h);
	/* Numbers only (every command sent counts as carried out; nothing is
	 * published to wait_ack): relaxed would do. */
	atomic_store_explicit(&h->src.ctl->keeper_ack, atomic_load_explicit(&h->src.ctl->cmd_sent,
	                                                                 memory_order_acquire),
	                      memory_order_release);
	if (!pt_handle_filtered(h, POSIX_TRACE_ERROR))
		pt_ctl_post(h->src.ctl, &h->src.map, POSIX_TRACE_ERROR, &err, sizeof err, NULL);
	uint32_t zero = 0;
	atomic_compare_exchange_strong_explicit(&h->src.ctl->flush_error, &zero, EIO, memory_order_relaxed,
	                                        memory_order_relaxed);
	if (!atomic_load_explicit(&exiting, memory_order_relaxed))
		spawn(h);
	return EIO;
}

/* One message, by sendmsg rather than send: a program whose seccomp
 * filter denies sendto (send's system call) still commands its keeper. */
static ssize_t send_packet(int sock, const void *msg, size_t len)
{
	struct iovec iov = {.iov_base = (void *)(uintptr_t)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	return sendmsg(sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
}

/* Sends one command; *number is 0 for a FLUSH that joined the flushes
 * already waiting.  EIO: no keeper, or it died; ETIMEDOUT: the socket
 * stayed full (a keeper alive but stuck) until the deadline; EPERM: the
 * keeper lives but this process may not send (a seccomp filter). */
static int put_cmd(struct pt_handle *h, const struct pt_cmd_msg *msg, uint32_t *number,
                   uint64_t *deadline)
{
	*number = 0;
	for (;;) {
		if (h->keeper_sock < 0)
			return EIO;
		if (send_packet(h->keeper_sock, msg, sizeof *msg) == sizeof *msg)
			break;
		int refused = errno == EPERM || errno == EACCES || errno == ENOSYS;
		if ((errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) || !keeper_alive(h))
			return refused && keeper_alive(h) ? EPERM : EIO;
		/* A full socket holds FLUSH commands not taken yet (CLEAR and FINISH
		 * are waited for): the keeper takes them after this request was
		 * counted in flush_req, so one of them carries it out. */
		if (msg->cmd == PT_CMD_FLUSH)
			return 0;
		struct pollfd p = {.fd = h->keeper_sock, .events = POLLOUT};
		int left = ms_left(h, deadline);
		if (left == 0)
			return ETIMEDOUT;
		poll(&p, 1, left < 50 ? left : 50);
	}
	/* A command number only: relaxed would do. */
	*number = atomic_fetch_add_explicit(&h->src.ctl->cmd_sent, 1, memory_order_acq_rel) + 1;
	return 0;
}

/* Commands are numbered (cmd_sent); the keeper counts those it carried
 * out (keeper_ack), so a caller waits for its own command, not for an
 * acknowledgement of an earlier one (a flush's, which nobody waits for). */
static int send_cmd(struct pt_handle *h, uint32_t cmd, const struct pt_caller *who,
                    uint32_t *number, uint64_t *deadline)
{
	struct pt_cmd_msg msg = {.cmd = cmd, .who = *who};
	int err = put_cmd(h, &msg, number, deadline);
	if (err)
		return err;
	struct pt_stream_hdr *s = pt_hdr(&h->src.map);
	/* Pairs with the acquire load of keeper_wake in keeper_loop (keeper.c). */
	atomic_fetch_add_explicit(&s->keeper_wake, 1, memory_order_release);
	syscall(SYS_futex, &s->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
	return 0;
}

/* Waits until the keeper has carried out command `number`: EIO if it died,
 * ETIMEDOUT if it is alive but has not by the deadline. */
static int wait_ack(struct pt_handle *h, uint32_t number, uint64_t *deadline)
{
	for (;;) {
		/* Pairs with the release fetch-add of keeper_ack in ack (keeper.c): the command's
		 * effects are seen. */
		uint32_t done = atomic_load_explicit(&h->src.ctl->keeper_ack, memory_order_acquire);
		if ((int32_t)(done - number) >= 0)
			return 0;
		if (!keeper_alive(h))
			return EIO;
		int left = ms_left(h, deadline);
		if (left == 0)
			return ETIMEDOUT;
		struct timespec tick = {0, (left < 50 ? left : 50) * 1000000L};
		syscall(SYS_futex, &h->src.ctl->keeper_ack, FUTEX_WAIT, done, &tick, NULL, 0);
	}
}

int pt_keeper_command(struct pt_handle *h, uint32_t cmd, const struct pt_caller *who)
{
	int err = 0;
	uint64_t deadline = pt_mono_ns() + keeper_bound_ns(h);
	for (int attempt = 0; attempt < 2; attempt++) {
		uint32_t number;
		/* A request number only: relaxed would do. */
		if (cmd == PT_CMD_FLUSH)
			atomic_fetch_add_explicit(&h->src.ctl->flush_req, 1, memory_order_acq_rel);
		int sent = send_cmd(h, cmd, who, &number, &deadline);
		if (sent == 0 && cmd == PT_CMD_FLUSH)
			return err; /* posix_trace_flush only starts the flush */
		if (sent == EPERM) {
			/* Not the keeper's fault: it lives on, flushes by itself and
			 * is told the end without a message (pt_keeper_finish). */
			if (cmd == PT_CMD_FLUSH)
				atomic_fetch_sub_explicit(&h->src.ctl->flush_req, 1, memory_order_acq_rel);
			return EIO;
		}
		int done = sent ? sent : wait_ack(h, number, &deadline);
		if (done == 0)
			return err;
		err = replace_keeper(h);
		if (done == ETIMEDOUT) {
			/* The stuck keeper had the whole bound: the new one is given
			 * the command without a wait (the next ones queue behind it). */
			uint64_t now = pt_mono_ns();
			send_cmd(h, cmd, who, &number, &now);
			return err;
		}
	}
	return err;
}

/* How the keeper ended, waiting until the deadline: its exit status, or
 * (when this process does not wait for its children) what it said before
 * exiting; -1: it was killed; -2: it did not end in time and was killed. */
static int keeper_result(struct pt_handle *h, uint64_t *deadline)
{
	for (;;) {
		int left = ms_left(h, deadline);
		if (pidfd_gone(h->keeper_pidfd, left < 100 ? left : 100))
			break;
		if (left == 0) {
			syscall(SYS_pidfd_send_signal, h->keeper_pidfd, SIGKILL, NULL, 0);
			return -2;
		}
	}
	int status = 0;
	pid_t r;
	/* Exited (its pidfd is readable): a zombie now, unless someone else
	 * reaped it (SIGCHLD ignored, or a handler that waits for all). */
	while ((r = waitpid(h->keeper, &status, WNOHANG)) < 0 && errno == EINTR)
		;
	if (r != h->keeper) {
		/* Pairs with the release store of keeper_finished in finish (keeper.c): keeper_error
		 * is final. */
		if (!atomic_load_explicit(&h->src.ctl->keeper_finished, memory_order_acquire))
			return -1;
		pt_queue_budget_release(pt_keeper_queue_budget(), h->keeper);
		h->keeper = 0;
		return atomic_load_explicit(&h->src.ctl->keeper_error, memory_order_relaxed);
	}
	pt_queue_budget_release(pt_keeper_queue_budget(), h->keeper);
	h->keeper = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ETIMEDOUT: the keeper did not finish within the bound (it was killed
 * and the log stops short); EIO: it died; else its first error. */
int pt_keeper_finish(struct pt_handle *h, const struct pt_caller *who)
{
	int err = 0;
	for (int attempt = 0; attempt < 2 && h->keeper > 0; attempt++) {
		uint32_t number;
		uint64_t deadline = pt_mono_ns() + keeper_bound_ns(h);
		int sent = send_cmd(h, PT_CMD_FINISH, who, &number, &deadline);
		if (sent == ETIMEDOUT) {
			reap(h);
			return ETIMEDOUT;
		}
		if (sent == EPERM) {
			/* No message may be sent: end of file says the same (the
			 * keeper ends the stream and finishes the log, as when this
			 * process exits). */
			shutdown(h->keeper_sock, SHUT_WR);
			sent = 0;
		}
		if (sent != 0) {
			err = replace_keeper(h);
			continue;
		}
		int result = keeper_result(h, &deadline);
		if (result >= 0) {
			reap(h);
			return err ? err : result;
		}
		if (result == -2) {
			reap(h);
			return ETIMEDOUT;
		}
		err = replace_keeper(h);
	}
	reap(h);
	return err ? err : EIO;
}

/* exit() of a controller: each keeper is told (its socket shut down for
 * writing: end of file) and waited for through its pidfd, all together,
 * until they have made no progress for a second plus their streams' room
 * at 100 MB/s, so that the logs are finished when the process is gone.  No lock is taken: another
 * thread may hold a handle's for good (a blocked read), and a keeper it
 * is shutting down is waited for all the same. */
__attribute__((destructor)) static void keepers_at_exit(void)
{
	struct pollfd p[TRACE_SYS_MAX];
	uint64_t room = 0;
	int n = 0;
	atomic_store_explicit(&exiting, 1, memory_order_relaxed);
	if (pt_forking_keeper || pt_proc.pid != getpid())
		return;
	n = pt_handles_keepers(p, TRACE_SYS_MAX, &room);
	if (n == 0)
		return;
	uint64_t bound = 1000000000ull + room * 10u, deadline = pt_mono_ns() + bound;
	uint64_t seen = pt_handles_keeper_progress();
	for (int left; (left = ms_until(deadline)) > 0;) {
		int r = poll(p, (nfds_t)n, left < 100 ? left : 100);
		uint64_t now_seen = pt_handles_keeper_progress();
		if (now_seen != seen) { /* a keeper that drains is given more time */
			seen = now_seen;
			deadline = pt_mono_ns() + bound;
		}
		if (r < 0 && errno != EINTR)
			return;
		int waiting = 0;
		for (int i = 0; i < n; i++) {
			if (p[i].revents)
				p[i].fd = -1;
			waiting += p[i].fd >= 0;
		}
		if (!waiting)
			return;
	}
}
