/*
 * The process side: library initialisation, the streams this process maps
 * (as target, or as their controller), its threads, the grace period that
 * lets a stream be unmapped while other threads may be writing, what a
 * forked child keeps, and joining streams offered by other processes.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "internal.h"

struct pt_process pt_proc = {
    .pcb = &pt_proc.pcb_fallback,
    .pcb_fd = -1,
    .reg = &pt_proc.reg_fallback,
    .reg_fd = -1,
    .lock = PTHREAD_MUTEX_INITIALIZER,
};
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int use_global_membarrier;

static void after_fork_child(void);
PT_HIDDEN void pt_thread_exit(void *arg);
PT_HIDDEN void pt_forget_other_threads(void);

static void do_init(void)
{
	pt_proc.pid = getpid();
	pt_proc.pcb_fallback.magic = PT_PCB_MAGIC;
	pt_proc.reg_fallback.magic = PT_REGISTRY_MAGIC;
	pt_proc.reg_fallback.size = sizeof pt_proc.reg_fallback;
	atomic_init(&pt_proc.reg_fallback.next_name, 1);
	pthread_key_create(&pt_proc.thread_key, pt_thread_exit);
	/* Writers order their "inside" mark and their reads of the stream
	 * table with a compiler barrier only; the rare side (a reader going
	 * to sleep, a stream being unmapped) pays with membarrier(2).  The
	 * global command covers readers in other processes. */
	long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
	if (cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 &&
	    (cmds & MEMBARRIER_CMD_GLOBAL_EXPEDITED) &&
	    syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_GLOBAL_EXPEDITED, 0, 0) == 0) {
		pt_proc.use_membarrier = 1;
		use_global_membarrier = 1;
	}
	pthread_atfork(NULL, NULL, after_fork_child);
	pt_pcb_create();
	pt_registry_open();
	pt_join_named_streams();
}

void pt_init(void) { pthread_once(&init_once, do_init); }

__attribute__((constructor)) static void pt_constructor(void) { pt_init(); }

/* Full barrier on every thread of the process, and with `global` on every
 * registered process too (or on this thread only, when writers fence
 * themselves because membarrier is unavailable).  Returns 0 when the
 * barrier covered other processes. */
int pt_fence_all(int global)
{
	int cmd = global ? MEMBARRIER_CMD_GLOBAL_EXPEDITED : MEMBARRIER_CMD_PRIVATE_EXPEDITED;
	if (pt_proc.use_membarrier && (!global || use_global_membarrier) &&
	    syscall(SYS_membarrier, cmd, 0, 0) == 0)
		return 0;
	pt_full_fence();
	return -1;
}

/* Waits until no thread is still inside a posix_trace_event that may have
 * seen a stream now unpublished from pt_proc.attached.  Caller holds
 * pt_proc.lock; the calling thread itself may be inside. */
void pt_barrier_locked(void)
{
	pt_fence_all(0);
	for (struct pt_thread *t = pt_proc.threads; t; t = t->next) {
		uint64_t seq = atomic_load_explicit(&t->cs_seq, memory_order_acquire);
		if (!(seq & 1) || pthread_equal(t->self, pthread_self()))
			continue;
		while (atomic_load_explicit(&t->cs_seq, memory_order_acquire) == seq)
			sched_yield();
	}
}

void pt_barrier(void)
{
	pthread_mutex_lock(&pt_proc.lock);
	pt_barrier_locked();
	pthread_mutex_unlock(&pt_proc.lock);
}

void pt_arm(int slot, int on)
{
	uint64_t bit = 1ull << slot;
	if (on)
		atomic_fetch_or_explicit(&pt_proc.pcb->armed, bit, memory_order_release);
	else
		atomic_fetch_and_explicit(&pt_proc.pcb->armed, ~bit, memory_order_release);
}

/* Drops a stream this process joined as a target.  Caller holds the lock. */
static void release_joined_locked(int slot)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	if (!m || m != &a->own)
		return;
	atomic_store_explicit(&a->map, NULL, memory_order_release);
	pt_barrier_locked();
	pt_stream_unmap(&a->own);
}

static int claim_slot_locked(uint32_t from_state)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[i];
		uint32_t st = from_state;
		if (atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed) &&
		    pt_proc.attached[i].map != &pt_proc.attached[i].own)
			continue;
		if (atomic_compare_exchange_strong_explicit(&s->state, &st, PT_SLOT_ATTACHED,
		                                            memory_order_acq_rel, memory_order_relaxed)) {
			release_joined_locked(i);
			return i;
		}
	}
	return -1;
}

static void publish_locked(int slot, struct pt_map *m, int traced)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	a->gen = ++pt_proc.next_gen;
	a->offer_gen = atomic_load_explicit(&pt_proc.pcb->slots[slot].gen, memory_order_acquire);
	a->traced = traced;
	a->inherited = pt_hdr(m)->attr.inheritance == POSIX_TRACE_INHERITED;
	if (traced)
		pt_seed_names(m);
	atomic_store_explicit(&a->map, m, memory_order_release);
}

/* A stream this process maps: `traced` if it records into it (pid 0),
 * else as the controller of another process's stream; `name` if it is a
 * named stream.  Returns the slot. */
int pt_attach(struct pt_map *m, int traced, const char *name)
{
	pthread_mutex_lock(&pt_proc.lock);
	int slot = claim_slot_locked(PT_SLOT_FREE);
	if (slot >= 0) {
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
		memset(s->name, 0, sizeof s->name);
		if (name)
			pt_copy_str(s->name, sizeof s->name, name);
		if (traced && pt_hdr(m)->attr.inheritance == POSIX_TRACE_INHERITED)
			pt_stream_add_member(m, pt_proc.pid, pt_proc.pcb->starttime);
		publish_locked(slot, m, traced);
	}
	pthread_mutex_unlock(&pt_proc.lock);
	return slot;
}

void pt_detach(int slot)
{
	pt_arm(slot, 0);
	pthread_mutex_lock(&pt_proc.lock);
	atomic_store_explicit(&pt_proc.attached[slot].map, NULL, memory_order_release);
	pt_barrier_locked();
	atomic_store_explicit(&pt_proc.pcb->slots[slot].state, PT_SLOT_FREE, memory_order_release);
	pthread_mutex_unlock(&pt_proc.lock);
}

/* Maps a named stream that traces this process.  Caller holds the lock. */
static int join_locked(int slot, const char *name)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
	if (fd < 0)
		return errno;
	int err = pt_stream_map_open(fd, &a->own);
	close(fd);
	if (err)
		return err;
	struct pt_stream_hdr *h = pt_hdr(&a->own);
	int mine = h->target_pid == pt_proc.pid && h->target_start == pt_proc.pcb->starttime;
	int child = !mine && h->attr.inheritance == POSIX_TRACE_INHERITED &&
	            (pt_stream_is_member(h, pt_proc.pid, pt_proc.pcb->starttime) ||
	             pt_stream_has_ancestor(h));
	if ((!mine && !child) || atomic_load_explicit(&h->state, memory_order_acquire) == PT_ST_DEAD) {
		pt_stream_unmap(&a->own);
		return ESRCH;
	}
	if (h->attr.inheritance == POSIX_TRACE_INHERITED) {
		pt_registry_use_inherited();
		pt_stream_add_member(&a->own, pt_proc.pid, pt_proc.pcb->starttime);
	}
	pt_reg_adopt_stream_names(pt_proc.reg, &a->own);
	if (mine) {
		atomic_store_explicit(&h->pcb_slot, slot, memory_order_relaxed);
		atomic_store_explicit(&h->pcb_token, pt_proc.pcb->token, memory_order_release);
	}
	publish_locked(slot, &a->own, 1);
	if (atomic_load_explicit(&h->state, memory_order_acquire) != PT_ST_SUSPENDED)
		pt_arm(slot, 1);
	return 0;
}

/* Called by a writer that found slot armed with a stream it has not
 * mapped: a controller offered it.  Never blocks on the lock. */
void pt_attach_offered(int slot)
{
	if (pthread_mutex_trylock(&pt_proc.lock) != 0)
		return;
	struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
	struct pt_attached *a = &pt_proc.attached[slot];
	uint32_t gen = atomic_load_explicit(&s->gen, memory_order_acquire);
	uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
	if (atomic_load_explicit(&a->map, memory_order_relaxed) && a->offer_gen == gen) {
		pthread_mutex_unlock(&pt_proc.lock);
		return;
	}
	release_joined_locked(slot);
	char name[sizeof s->name];
	memcpy(name, s->name, sizeof name);
	name[sizeof name - 1] = '\0';
	if ((state != PT_SLOT_OFFERED && state != PT_SLOT_ATTACHED) || join_locked(slot, name) != 0) {
		pt_arm(slot, 0);
	} else {
		uint32_t offered = PT_SLOT_OFFERED;
		atomic_compare_exchange_strong_explicit(&s->state, &offered, PT_SLOT_ATTACHED,
		                                        memory_order_acq_rel, memory_order_relaxed);
	}
	pthread_mutex_unlock(&pt_proc.lock);
}

/* Whether a named stream is one this process joins at load: created for it
 * before it had loaded the library, or traced with inheritance by it (before
 * an exec) or by an ancestor (posix_spawn, vfork and exec, system()). */
static int joins_at_load(const char *name)
{
	struct pt_stream_hdr h;
	int fd = shm_open(name, O_RDONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	ssize_t n = pread(fd, &h, sizeof h, 0);
	close(fd);
	if (n != (ssize_t)sizeof h || h.magic != PT_STREAM_MAGIC ||
	    atomic_load_explicit(&h.state, memory_order_relaxed) == PT_ST_DEAD || !pt_controller_alive(&h))
		return 0;
	if (h.target_pid == pt_proc.pid && h.target_start == pt_proc.pcb->starttime)
		return h.offered_token == 0;
	if (h.attr.inheritance != POSIX_TRACE_INHERITED)
		return 0;
	return pt_stream_is_member(&h, pt_proc.pid, pt_proc.pcb->starttime) ||
	       pt_stream_has_ancestor(&h);
}

static int already_offered(const char *name)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		if (atomic_load_explicit(&pt_proc.pcb->slots[i].state, memory_order_acquire) !=
		        PT_SLOT_FREE &&
		    strncmp(pt_proc.pcb->slots[i].name, name, sizeof pt_proc.pcb->slots[i].name) == 0)
			return 1;
	return 0;
}

/* At load (a new program, or after exec): streams this process was meant to
 * be traced in before it could be reached, found by their names. */
void pt_join_named_streams(void)
{
	char name[300];
	DIR *d = opendir("/dev/shm");
	if (d) {
		pthread_mutex_lock(&pt_proc.lock);
		struct dirent *e;
		while ((e = readdir(d))) {
			if (strncmp(e->d_name, "posixtrace.", 11) != 0 || strlen(e->d_name) >= 47)
				continue;
			snprintf(name, sizeof name, "/%s", e->d_name);
			if (already_offered(name) || !joins_at_load(name))
				continue;
			int slot = claim_slot_locked(PT_SLOT_FREE);
			if (slot < 0)
				break;
			struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
			memset(s->name, 0, sizeof s->name);
			pt_copy_str(s->name, sizeof s->name, name);
			atomic_fetch_add_explicit(&s->gen, 1, memory_order_acq_rel);
			if (join_locked(slot, name) != 0)
				atomic_store_explicit(&s->state, PT_SLOT_FREE, memory_order_release);
		}
		pthread_mutex_unlock(&pt_proc.lock);
		closedir(d);
	}
	pt_registry_drop_inherited();
}

/* Copies names registered since the last call into the streams this process
 * records into. */
void pt_sync_names(void)
{
	pthread_mutex_lock(&pt_proc.lock);
	uint32_t n = pt_reg_count(pt_proc.reg);
	if (n != pt_proc.names_synced) {
		for (int i = 0; i < TRACE_SYS_MAX; i++) {
			struct pt_map *m = atomic_load_explicit(&pt_proc.attached[i].map,
			                                        memory_order_relaxed);
			if (m && pt_proc.attached[i].traced)
				pt_reg_to_stream(pt_proc.reg, m, pt_proc.names_synced);
		}
		pt_proc.names_synced = n;
	}
	pthread_mutex_unlock(&pt_proc.lock);
}

/* A stream offered to the parent that the parent has not mapped yet (it
 * had recorded no event since) is one the fork child must follow too when it
 * is traced with inheritance: the child maps it now, as its parent would. */
static void join_parents_offers(void)
{
	struct pt_pcb *pcb = pt_proc.pcb;
	pid_t parent = getppid();
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_pcb_slot *s = &pcb->slots[i];
		if (atomic_load_explicit(&a->map, memory_order_relaxed) ||
		    atomic_load_explicit(&s->state, memory_order_acquire) != PT_SLOT_OFFERED)
			continue;
		char name[sizeof s->name];
		memcpy(name, s->name, sizeof name);
		name[sizeof name - 1] = '\0';
		int fd = shm_open(name, O_RDWR | O_CLOEXEC, 0);
		if (fd < 0)
			continue;
		int err = pt_stream_map_open(fd, &a->own);
		close(fd);
		if (err)
			continue;
		struct pt_stream_hdr *h = pt_hdr(&a->own);
		if (h->target_pid != parent || h->attr.inheritance != POSIX_TRACE_INHERITED ||
		    atomic_load_explicit(&h->state, memory_order_acquire) == PT_ST_DEAD) {
			pt_stream_unmap(&a->own);
			continue;
		}
		a->traced = 1;
		a->inherited = 1;
		atomic_store_explicit(&a->map, &a->own, memory_order_relaxed);
	}
}

/* The child of fork() is not traced by its parent's streams (inheritance
 * is POSIX_TRACE_CLOSE_FOR_CHILD) and the parent's trace stream ids are not
 * valid in it.  Only the forking thread exists in the child. */
static void after_fork_child(void)
{
	if (pt_forking_keeper())
		return; /* the keeper sets itself up (keeper.c) */
	pthread_mutex_init(&pt_proc.lock, NULL);
	pt_proc.pid = getpid();
	join_parents_offers();
	char names[TRACE_SYS_MAX][48];
	int kept = 0;
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
		memcpy(names[i], pt_proc.pcb->slots[i].name, sizeof names[i]);
		names[i][sizeof names[i] - 1] = '\0';
		if (m && a->traced && a->inherited && names[i][0] &&
		    atomic_load_explicit(&pt_hdr(m)->state, memory_order_relaxed) != PT_ST_DEAD) {
			/* POSIX_TRACE_INHERITED: the child records into it too,
			 * from lanes of its own (a new gen). */
			if (m != &a->own) {
				a->own = *m;
				a->own.fd = -1;
				pt_handle_forget_map(m);
				atomic_store_explicit(&a->map, &a->own, memory_order_relaxed);
			}
			a->gen = ++pt_proc.next_gen;
			kept |= 1;
			continue;
		}
		if (m == &a->own)
			pt_stream_unmap(&a->own);
		atomic_store_explicit(&a->map, NULL, memory_order_relaxed);
		names[i][0] = '\0';
	}
	if (!kept)
		pt_registry_copy_after_fork();
	pt_pcb_recreate_after_fork();
	uint64_t start = pt_proc.pcb->starttime;
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
		if (!m)
			continue;
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[i];
		pt_copy_str(s->name, sizeof s->name, names[i]);
		atomic_store_explicit(&s->state, PT_SLOT_ATTACHED, memory_order_relaxed);
		a->offer_gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
		pt_stream_add_member(m, pt_proc.pid, start);
		pt_arm(i, 1);
	}
	pt_proc.names_synced = 0;
	pt_forget_other_threads();
	pt_handles_after_fork();
}
