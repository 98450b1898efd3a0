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
#define REG_MEMFD_NAME "posixtrace-names"

/* Start time of a process in clock ticks since boot (/proc/PID/stat field
 * 22): with the pid, it names a process for good, across pid reuse. */
uint64_t pt_proc_starttime(pid_t pid)
{
	return pt_proc_stat(pid, NULL);
}

/* Start time and parent of a process (fields 22 and 4 of /proc/PID/stat). */
uint64_t pt_proc_stat(pid_t pid, pid_t *ppid)
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
	/* field 3 (state) follows ") "; ppid is field 4, starttime field 22 */
	for (int field = 3; field <= 22 && p; field++) {
		p = strchr(p + 1, ' ');
		if (field == 4 && p && ppid)
			*ppid = (pid_t)strtol(p + 1, NULL, 10);
	}
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
	pcb->registry_fd = pt_proc.reg_fd;
}

/* A shared mapping in a new memfd (or private memory when that fails).  The
 * fd is kept across exec: the same process after exec finds its block and
 * registry again (and so do children traced with inheritance). */
static void *shared_object(const char *name, size_t size, int *fd_out)
{
	void *p = MAP_FAILED;
	int fd = (int)syscall(SYS_memfd_create, name, 0u);
	if (fd >= 0 && ftruncate(fd, (off_t)size) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		fd = -1;
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	*fd_out = fd;
	return p == MAP_FAILED ? NULL : p;
}

/* Calls fn(fd, arg) for each fd of this process that is a memfd of `name`. */
static void each_inherited(const char *name, void (*fn)(int fd, void *arg), void *arg)
{
	char link[128], path[64], want[64];
	snprintf(want, sizeof want, "/memfd:%s", name);
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || fd == dfd)
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, want, strlen(want)) == 0)
			fn(fd, arg);
	}
	closedir(d);
}

/* After exec: this very process's block, kept through its fd.  Other
 * processes' blocks (a parent's, passed down by posix_spawn) are closed. */
static void adopt_own_block(int fd, void *arg)
{
	struct pt_pcb **found = arg;
	struct stat st;
	struct pt_pcb *pcb = MAP_FAILED;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size == sizeof *pcb)
		pcb = mmap(NULL, sizeof *pcb, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (pcb != MAP_FAILED && !*found && pcb->magic == PT_PCB_MAGIC &&
	    pcb->version == PT_LAYOUT_VERSION && pcb->size == sizeof *pcb &&
	    pcb->pid == getpid() && pcb->starttime == pt_proc_starttime(getpid())) {
		*found = pcb;
		pt_proc.pcb_fd = fd;
		return;
	}
	if (pcb != MAP_FAILED)
		munmap(pcb, sizeof *pcb);
	close(fd);
}

/* The streams the old image recorded into as their controller (pid 0) died
 * with it; offers stay, and are joined again on the next event. */
static void forget_old_image(struct pt_pcb *pcb)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_pcb_slot *s = &pcb->slots[i];
		if (atomic_load_explicit(&s->state, memory_order_acquire) != PT_SLOT_FREE &&
		    s->name[0] == '\0') {
			atomic_fetch_and_explicit(&pcb->armed, ~(1ull << i), memory_order_relaxed);
			atomic_store_explicit(&s->state, PT_SLOT_FREE, memory_order_release);
		} else if (atomic_load_explicit(&s->state, memory_order_acquire) == PT_SLOT_ATTACHED) {
			atomic_store_explicit(&s->state, PT_SLOT_OFFERED, memory_order_release);
		}
	}
}

/* Creates this process's block, or takes back its own after exec; without
 * memfd it is private, and the process cannot be traced by others. */
void pt_pcb_create(void)
{
	int fd;
	struct pt_pcb *own = NULL;
	each_inherited(PCB_MEMFD_NAME, adopt_own_block, &own);
	if (own) {
		forget_old_image(own);
		pt_proc.pcb = own;
		return;
	}
	struct pt_pcb *pcb = shared_object(PCB_MEMFD_NAME, sizeof *pcb, &fd);
	if (!pcb)
		return; /* pt_proc.pcb stays the static fallback */
	pcb_init(pcb, getpid());
	pt_proc.pcb = pcb;
	pt_proc.pcb_fd = fd;
}

/* In a fork child: a block of its own (the parent's is shared memory); the
 * registry stays shared with the parent. */
void pt_pcb_recreate_after_fork(void)
{
	if (pt_proc.pcb != &pt_proc.pcb_fallback)
		munmap(pt_proc.pcb, sizeof *pt_proc.pcb);
	if (pt_proc.pcb_fd >= 0)
		close(pt_proc.pcb_fd);
	pt_proc.pcb = &pt_proc.pcb_fallback;
	pt_proc.pcb_fd = -1;
	memset(&pt_proc.pcb_fallback, 0, sizeof pt_proc.pcb_fallback);
	pt_pcb_create();
}

/* ---- name registry -------------------------------------------------------
 * Lock-free so that no process dying at any instant can block another: a
 * name claims an entry with fetch_add, is written, then published.  Two
 * processes registering one name at the same time may both claim entries;
 * both then return the lower id, and the other entry stays as an alias. */

static int registry_valid(const struct pt_registry *reg)
{
	return reg->magic == PT_REGISTRY_MAGIC && reg->size == sizeof *reg;
}

static struct pt_registry *map_registry(int fd)
{
	struct stat st;
	struct pt_registry *reg = MAP_FAILED;
	if (fstat(fd, &st) == 0 && (size_t)st.st_size == sizeof *reg)
		reg = mmap(NULL, sizeof *reg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (reg == MAP_FAILED)
		return NULL;
	if (!registry_valid(reg)) {
		munmap(reg, sizeof *reg);
		return NULL;
	}
	return reg;
}

/* Registry fds passed down by an exec: the own block's one is kept; one
 * other is remembered for joining a parent's inherited stream. */
static void sort_inherited_registry(int fd, void *arg)
{
	(void)arg;
	if (pt_proc.pcb != &pt_proc.pcb_fallback && fd == pt_proc.pcb->registry_fd &&
	    pt_proc.reg_fd < 0) {
		struct pt_registry *reg = map_registry(fd);
		if (reg) {
			pt_proc.reg = reg;
			pt_proc.reg_fd = fd;
			return;
		}
	}
	if (pt_proc.inherited_reg_fd < 0)
		pt_proc.inherited_reg_fd = fd;
	else
		close(fd);
}

/* This process's registry: its own after exec, else a new one. */
void pt_registry_open(void)
{
	pt_proc.inherited_reg_fd = -1;
	each_inherited(REG_MEMFD_NAME, sort_inherited_registry, NULL);
	if (pt_proc.reg_fd < 0) {
		int fd;
		struct pt_registry *reg = shared_object(REG_MEMFD_NAME, sizeof *reg, &fd);
		if (reg) {
			reg->magic = PT_REGISTRY_MAGIC;
			reg->size = sizeof *reg;
			atomic_init(&reg->next_name, 1);
			pt_proc.reg = reg;
			pt_proc.reg_fd = fd;
		}
	}
	pt_proc.pcb->registry_fd = pt_proc.reg_fd;
}

/* Joining a stream inherited from the parent: use the parent's registry,
 * passed down through exec, while this process has no names of its own. */
void pt_registry_use_inherited(void)
{
	int fd = pt_proc.inherited_reg_fd;
	if (fd < 0 || pt_reg_count(pt_proc.reg) > 1)
		return;
	struct pt_registry *reg = map_registry(fd);
	if (!reg)
		return;
	if (pt_proc.reg != &pt_proc.reg_fallback)
		munmap(pt_proc.reg, sizeof *pt_proc.reg);
	if (pt_proc.reg_fd >= 0)
		close(pt_proc.reg_fd);
	pt_proc.reg = reg;
	pt_proc.reg_fd = fd;
	pt_proc.inherited_reg_fd = -1;
	pt_proc.pcb->registry_fd = fd;
}

/* Closes a passed-down registry nobody joined through. */
void pt_registry_drop_inherited(void)
{
	if (pt_proc.inherited_reg_fd >= 0)
		close(pt_proc.inherited_reg_fd);
	pt_proc.inherited_reg_fd = -1;
}

/* A fork child that is not traced with inheritance gets its own registry,
 * a copy of its parent's: the two processes' names are independent. */
void pt_registry_copy_after_fork(void)
{
	int fd;
	struct pt_registry *old = pt_proc.reg, *reg = shared_object(REG_MEMFD_NAME, sizeof *reg, &fd);
	if (!reg)
		return;
	memcpy(reg, old, sizeof *reg);
	if (old != &pt_proc.reg_fallback)
		munmap(old, sizeof *old);
	if (pt_proc.reg_fd >= 0)
		close(pt_proc.reg_fd);
	pt_proc.reg = reg;
	pt_proc.reg_fd = fd;
	pt_proc.pcb->registry_fd = fd;
}


static trace_event_id_t find_name(struct pt_registry *reg, const char *name, uint32_t below)
{
	for (uint32_t i = 1; i < below && i < TRACE_USER_EVENT_MAX; i++)
		if (atomic_load_explicit(&reg->name_valid[i], memory_order_acquire) &&
		    strncmp(reg->names[i], name, PT_NAME_SIZE) == 0)
			return PT_USER_FIRST + i;
	return 0;
}

trace_event_id_t pt_reg_register(struct pt_registry *reg, const char *name)
{
	uint32_t n = atomic_load_explicit(&reg->next_name, memory_order_acquire);
	trace_event_id_t id = find_name(reg, name, n);
	if (id)
		return id;
	uint32_t i = atomic_fetch_add_explicit(&reg->next_name, 1, memory_order_acq_rel);
	if (i == 0 || i >= TRACE_USER_EVENT_MAX) {
		atomic_store_explicit(&reg->next_name, TRACE_USER_EVENT_MAX, memory_order_relaxed);
		return POSIX_TRACE_UNNAMED_USEREVENT;
	}
	size_t len = strnlen(name, TRACE_EVENT_NAME_MAX);
	memcpy(reg->names[i], name, len);
	reg->names[i][len] = '\0';
	atomic_store_explicit(&reg->name_valid[i], 1, memory_order_release);
	id = find_name(reg, name, i);
	return id ? id : PT_USER_FIRST + i;
}

/* The name of a user id in a registry written by other processes (untrusted). */
int pt_reg_name(struct pt_registry *reg, trace_event_id_t id, char *out)
{
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return EINVAL;
	uint32_t i = id - PT_USER_FIRST;
	if (!atomic_load_explicit(&reg->name_valid[i], memory_order_acquire))
		return EINVAL;
	memcpy(out, reg->names[i], PT_NAME_SIZE);
	out[TRACE_EVENT_NAME_MAX] = '\0';
	return 0;
}

uint32_t pt_reg_count(struct pt_registry *reg)
{
	uint32_t n = atomic_load_explicit(&reg->next_name, memory_order_acquire);
	return n > TRACE_USER_EVENT_MAX ? TRACE_USER_EVENT_MAX : n;
}

/* Copies the names of a registry into a stream's table. */
void pt_reg_to_stream(struct pt_registry *reg, const struct pt_map *m, uint32_t from)
{
	uint32_t n = pt_reg_count(reg);
	char name[PT_NAME_SIZE];
	for (uint32_t i = from ? from : 1; i < n; i++)
		if (pt_reg_name(reg, PT_USER_FIRST + i, name) == 0)
			pt_stream_set_name(m, PT_USER_FIRST + i, name);
}

/* A process whose registry is still empty (it has just started, or just
 * exec'd) takes the names of a stream it joins, so ids keep their meaning. */
void pt_reg_adopt_stream_names(struct pt_registry *reg, const struct pt_map *m)
{
	if (pt_reg_count(reg) > 1)
		return;
	char name[PT_NAME_SIZE];
	for (uint32_t i = 1; i < TRACE_USER_EVENT_MAX; i++) {
		if (pt_stream_get_name(m, PT_USER_FIRST + i, name) != 0)
			break;
		if (pt_reg_register(reg, name) != PT_USER_FIRST + i)
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
		struct pt_registry *reg = MAP_FAILED;
		int rfd = (int)syscall(SYS_pidfd_getfd, pidfd, pcb->registry_fd, 0);
		if (rfd >= 0 && fstat(rfd, &st) == 0 && (size_t)st.st_size == sizeof *reg)
			reg = mmap(NULL, sizeof *reg, PROT_READ | PROT_WRITE, MAP_SHARED, rfd, 0);
		if (rfd >= 0)
			close(rfd);
		if (reg != MAP_FAILED && !registry_valid(reg)) {
			munmap(reg, sizeof *reg);
			reg = MAP_FAILED;
		}
		out->pcb = pcb;
		out->reg = reg == MAP_FAILED ? NULL : reg;
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
	if (ref->reg)
		munmap(ref->reg, sizeof *ref->reg);
	ref->pcb = NULL;
	ref->reg = NULL;
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

/* ---- members of a stream traced with inheritance -------------------------- */

int pt_stream_is_member(const struct pt_stream_hdr *h, pid_t pid, uint64_t start)
{
	uint32_t n = atomic_load_explicit(&((struct pt_stream_hdr *)h)->nmembers, memory_order_acquire);
	if (n > PT_MAX_MEMBERS)
		n = PT_MAX_MEMBERS;
	for (uint32_t i = 0; i < n; i++)
		if (atomic_load_explicit(&((struct pt_stream_hdr *)h)->members[i].pid,
		                         memory_order_acquire) == pid &&
		    atomic_load_explicit(&((struct pt_stream_hdr *)h)->members[i].start,
		                         memory_order_relaxed) == start)
			return 1;
	return 0;
}

/* Whether an ancestor of this process is traced in the stream: with
 * inheritance every descendant is, even through processes that do not load
 * the library (a shell run by system(), say). */
int pt_stream_has_ancestor(const struct pt_stream_hdr *h)
{
	pid_t pid = getppid();
	for (int depth = 0; depth < 64 && pid > 1; depth++) {
		pid_t parent = 0;
		uint64_t start = pt_proc_stat(pid, &parent);
		if (!start)
			return 0;
		if (pt_stream_is_member(h, pid, start))
			return 1;
		pid = parent;
	}
	return 0;
}

int pt_stream_add_member(const struct pt_map *m, pid_t pid, uint64_t start)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	if (pt_stream_is_member(h, pid, start))
		return 0;
	uint32_t i = atomic_fetch_add_explicit(&h->nmembers, 1, memory_order_acq_rel);
	if (i >= PT_MAX_MEMBERS) {
		atomic_store_explicit(&h->nmembers, PT_MAX_MEMBERS, memory_order_relaxed);
		return EAGAIN;
	}
	atomic_store_explicit(&h->members[i].start, start, memory_order_relaxed);
	atomic_store_explicit(&h->members[i].pid, pid, memory_order_release);
	return 0;
}
