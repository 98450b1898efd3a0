/*
 * The process control block: a small shared mapping every process creates
 * when it loads the library (a memfd, so nothing is left on any file system).
 * It holds what other processes need to trace this one: the word that
 * posix_trace_event() tests, the slots through which controllers offer
 * streams, and the process's event name registry.  A controller reaches it
 * with pidfd_getfd(), which the kernel allows exactly when ptrace would be.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

#define PCB_MEMFD_NAME "posixtrace-pcb"

/* Start time of a process in clock ticks since boot (/proc/PID/stat field
 * 22): with the pid, it names a process for good, across pid reuse. */
uint64_t pt_proc_starttime(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* field 3 (state) follows ") "; starttime is field 22 */
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static void pcb_init(struct pt_pcb *pcb, pid_t pid)
{
	pcb->magic = PT_PCB_MAGIC;
	pcb->version = PT_LAYOUT_VERSION;
	pcb->size = sizeof *pcb;
	pcb->pid = pid;
	pcb->starttime = pt_proc_starttime(pid);
	pcb->token = ((uint64_t)pid << 32) ^ pt_now_ns() ^ (uint64_t)(uintptr_t)pcb;
	atomic_init(&pcb->next_name, 1);
}

/* Creates this process's block; without memfd it is private, and the
 * process simply cannot be traced by others. */
void pt_pcb_create(void)
{
	struct pt_pcb *pcb = MAP_FAILED;
	int fd = (int)syscall(SYS_memfd_create, PCB_MEMFD_NAME, MFD_CLOEXEC);
	if (fd >= 0 && ftruncate(fd, sizeof *pcb) == 0)
		pcb = mmap(NULL, sizeof *pcb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pcb == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		fd = -1;
		pcb = mmap(NULL, sizeof *pcb, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (pcb == MAP_FAILED)
		return; /* pt_proc.pcb stays the static fallback */
	pcb_init(pcb, getpid());
	pt_proc.pcb = pcb;
	pt_proc.pcb_fd = fd;
}

/* In a fork child: a block of its own (the parent's is shared memory). */
void pt_pcb_recreate_after_fork(void)
{
	struct pt_pcb *old = pt_proc.pcb;
	int oldfd = pt_proc.pcb_fd;
	pt_pcb_create();
	if (old != pt_proc.pcb && old != &pt_proc.pcb_fallback) {
		/* Names are inherited: the child's registry starts as a copy. */
		uint32_t n = atomic_load_explicit(&old->next_name, memory_order_acquire);
		if (n > TRACE_USER_EVENT_MAX)
			n = TRACE_USER_EVENT_MAX;
		memcpy(pt_proc.pcb->names, old->names, sizeof old->names);
		for (uint32_t i = 0; i < TRACE_USER_EVENT_MAX; i++)
			atomic_store_explicit(&pt_proc.pcb->name_valid[i],
			                      atomic_load_explicit(&old->name_valid[i], memory_order_relaxed),
			                      memory_order_relaxed);
		atomic_store_explicit(&pt_proc.pcb->next_name, n, memory_order_release);
		munmap(old, sizeof *old);
	}
	if (oldfd >= 0)
		close(oldfd);
}

/* ---- name registry -------------------------------------------------------
 * Lock-free so that no process dying at any instant can block another: a
 * name claims an entry with fetch_add, is written, then published.  Two
 * processes registering one name at the same time may both claim entries;
 * both then return the lower id, and the other entry stays as an alias. */

static trace_event_id_t find_name(struct pt_pcb *pcb, const char *name, uint32_t below)
{
	for (uint32_t i = 1; i < below && i < TRACE_USER_EVENT_MAX; i++)
		if (atomic_load_explicit(&pcb->name_valid[i], memory_order_acquire) &&
		    strncmp(pcb->names[i], name, PT_NAME_SIZE) == 0)
			return PT_USER_FIRST + i;
	return 0;
}

trace_event_id_t pt_pcb_register(struct pt_pcb *pcb, const char *name)
{
	uint32_t n = atomic_load_explicit(&pcb->next_name, memory_order_acquire);
	trace_event_id_t id = find_name(pcb, name, n);
	if (id)
		return id;
	uint32_t i = atomic_fetch_add_explicit(&pcb->next_name, 1, memory_order_acq_rel);
	if (i == 0 || i >= TRACE_USER_EVENT_MAX) {
		atomic_store_explicit(&pcb->next_name, TRACE_USER_EVENT_MAX, memory_order_relaxed);
		return POSIX_TRACE_UNNAMED_USEREVENT;
	}
	size_t len = strnlen(name, TRACE_EVENT_NAME_MAX);
	memcpy(pcb->names[i], name, len);
	pcb->names[i][len] = '\0';
	atomic_store_explicit(&pcb->name_valid[i], 1, memory_order_release);
	id = find_name(pcb, name, i);
	return id ? id : PT_USER_FIRST + i;
}

/* The name of a user id in a block written by another process (untrusted). */
int pt_pcb_name(struct pt_pcb *pcb, trace_event_id_t id, char *out)
{
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return EINVAL;
	uint32_t i = id - PT_USER_FIRST;
	if (!atomic_load_explicit(&pcb->name_valid[i], memory_order_acquire))
		return EINVAL;
	memcpy(out, pcb->names[i], PT_NAME_SIZE);
	out[TRACE_EVENT_NAME_MAX] = '\0';
	return 0;
}

uint32_t pt_pcb_name_count(struct pt_pcb *pcb)
{
	uint32_t n = atomic_load_explicit(&pcb->next_name, memory_order_acquire);
	return n > TRACE_USER_EVENT_MAX ? TRACE_USER_EVENT_MAX : n;
}

/* Copies the names of a block into a stream's table. */
void pt_pcb_names_to_stream(struct pt_pcb *pcb, const struct pt_map *m, uint32_t from)
{
	uint32_t n = pt_pcb_name_count(pcb);
	char name[PT_NAME_SIZE];
	for (uint32_t i = from ? from : 1; i < n; i++)
		if (pt_pcb_name(pcb, PT_USER_FIRST + i, name) == 0)
			pt_stream_set_name(m, PT_USER_FIRST + i, name);
}

/* A process whose registry is still empty (it has just started, or just
 * exec'd) takes the names of a stream it joins, so ids keep their meaning. */
void pt_pcb_adopt_stream_names(struct pt_pcb *pcb, const struct pt_map *m)
{
	if (pt_pcb_name_count(pcb) > 1)
		return;
	char name[PT_NAME_SIZE];
	for (uint32_t i = 1; i < TRACE_USER_EVENT_MAX; i++) {
		if (pt_stream_get_name(m, PT_USER_FIRST + i, name) != 0)
			break;
		if (pt_pcb_register(pcb, name) != PT_USER_FIRST + i)
			break;
	}
}

/* ---- reaching another process's block ---------------------------------- */

static int pidfd_open_(pid_t pid) { return (int)syscall(SYS_pidfd_open, pid, 0); }

/* Whether this process may trace `pid`: the kernel's ptrace access rule,
 * asked through /proc/PID/mem (same user, or CAP_SYS_PTRACE). */
int pt_may_trace(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/mem", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == ENOENT)
		return ESRCH;
	return EPERM;
}

/* Finds the block of `pid` and maps it.  0 and *out set; ENOENT when the
 * process has not loaded the library (yet); ESRCH, EPERM. */
int pt_pcb_attach(pid_t pid, uint64_t starttime, struct pt_pcbref *out)
{
	char dir[64], path[336], link[128];
	int err = ENOENT;
	int pidfd = pidfd_open_(pid);
	if (pidfd < 0)
		return errno == ESRCH ? ESRCH : EPERM;
	snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	if (!d) {
		close(pidfd);
		return errno == ENOENT ? ESRCH : EPERM;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:" PCB_MEMFD_NAME, strlen("/memfd:" PCB_MEMFD_NAME)) != 0)
			continue;
		int fd = (int)syscall(SYS_pidfd_getfd, pidfd, atoi(e->d_name), 0);
		if (fd < 0) {
			err = errno == EPERM || errno == EACCES ? EPERM : ESRCH;
			continue;
		}
		struct stat st;
		struct pt_pcb *pcb = MAP_FAILED;
		if (fstat(fd, &st) == 0 && (size_t)st.st_size == sizeof *pcb)
			pcb = mmap(NULL, sizeof *pcb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (pcb == MAP_FAILED)
			continue;
		if (pcb->magic != PT_PCB_MAGIC || pcb->version != PT_LAYOUT_VERSION ||
		    pcb->size != sizeof *pcb || pcb->pid != pid ||
		    (starttime && pcb->starttime != starttime)) {
			munmap(pcb, sizeof *pcb);
			continue;
		}
		out->pcb = pcb;
		out->token = pcb->token;
		err = 0;
		break;
	}
	closedir(d);
	close(pidfd);
	return err;
}

void pt_pcb_detach(struct pt_pcbref *ref)
{
	if (ref->pcb)
		munmap(ref->pcb, sizeof *ref->pcb);
	ref->pcb = NULL;
}

/* Offers a stream to another process: a free slot of its block gets the
 * stream's name; the process attaches it on its next event once armed. */
int pt_pcb_offer(struct pt_pcbref *ref, const char *shm_name)
{
	struct pt_pcb *pcb = ref->pcb;
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_pcb_slot *s = &pcb->slots[i];
		uint32_t free_ = PT_SLOT_FREE;
		if (!atomic_compare_exchange_strong_explicit(&s->state, &free_, PT_SLOT_CLAIMED,
		                                             memory_order_acq_rel, memory_order_relaxed))
			continue;
		memset(s->name, 0, sizeof s->name);
		pt_copy_str(s->name, sizeof s->name, shm_name);
		ref->slot = i;
		ref->gen = atomic_fetch_add_explicit(&s->gen, 1, memory_order_acq_rel) + 1;
		atomic_store_explicit(&s->state, PT_SLOT_OFFERED, memory_order_release);
		return 0;
	}
	return EAGAIN;
}

void pt_pcb_arm(struct pt_pcbref *ref, int on)
{
	if (!ref->pcb || ref->slot < 0)
		return;
	uint64_t bit = 1ull << ref->slot;
	if (on)
		atomic_fetch_or_explicit(&ref->pcb->armed, bit, memory_order_release);
	else
		atomic_fetch_and_explicit(&ref->pcb->armed, ~bit, memory_order_release);
}

/* Takes the offer back (shutdown, or the controller's death). */
void pt_pcb_withdraw(struct pt_pcbref *ref)
{
	if (!ref->pcb || ref->slot < 0)
		return;
	struct pt_pcb_slot *s = &ref->pcb->slots[ref->slot];
	pt_pcb_arm(ref, 0);
	if (atomic_load_explicit(&s->gen, memory_order_acquire) == ref->gen) {
		uint32_t st = atomic_load_explicit(&s->state, memory_order_relaxed);
		if (st == PT_SLOT_OFFERED || st == PT_SLOT_ATTACHED)
			atomic_store_explicit(&s->state, PT_SLOT_FREE, memory_order_release);
	}
	ref->slot = -1;
}

/* ---- named streams ----------------------------------------------------------
 * A stream for another process is a POSIX shared memory object named after
 * the target (pid and start time) and its controller, mode 0600.  The name
 * lets the target find it again after exec, or when it loads the library
 * after the stream was created. */

void pt_stream_shm_name(char *out, size_t len, pid_t target, uint64_t tstart, uint32_t seq)
{
	snprintf(out, len, "/posixtrace.%d.%llu.%d.%u", (int)target, (unsigned long long)tstart,
	         (int)getpid(), seq);
}

/* Whether the controller recorded in a stream still exists. */
int pt_controller_alive(const struct pt_stream_hdr *h)
{
	if (h->controller_pid <= 0)
		return 0;
	return pt_proc_starttime(h->controller_pid) == h->controller_start;
}

/* Unlinks stream objects whose controller and keeper are both gone
 * ("stale state from dead processes is reclaimed by the next user"). */
void pt_reclaim_stale_streams(void)
{
	DIR *d = opendir("/dev/shm");
	if (!d)
		return;
	struct dirent *e;
	int target, ctl;
	unsigned long long start;
	unsigned seq;
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "posixtrace.%d.%llu.%d.%u", &target, &start, &ctl, &seq) != 4)
			continue;
		char name[300];
		snprintf(name, sizeof name, "/%s", e->d_name);
		int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
		if (fd < 0)
			continue;
		struct pt_stream_hdr h;
		struct stat st;
		ssize_t n = pread(fd, &h, sizeof h, 0);
		int young = fstat(fd, &st) == 0 && st.st_mtime + 60 > time(NULL);
		close(fd);
		if (n != (ssize_t)sizeof h || h.magic != PT_STREAM_MAGIC) {
			if (!young) /* one still being created is left alone */
				shm_unlink(name);
			continue;
		}
		if (pt_controller_alive(&h) ||
		    (h.keeper_pid > 0 && pt_proc_starttime(h.keeper_pid) == h.keeper_start))
			continue;
		shm_unlink(name);
	}
	closedir(d);
}
