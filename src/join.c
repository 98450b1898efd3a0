/* SPDX-License-Identifier: MIT */
/*
 * Streams handed to this process (join.h): received on its channel from a
 * controller, inherited through exec from an ancestor traced with
 * inheritance, or kept by this very process across its own exec (adopt.c
 * finds those at load and joins them here).  Trust comes from the kernel at
 * the moment of the hand-over (pidfd_getfd checked the controller against
 * the ptrace rule; an inherited descriptor came from an ancestor), and at
 * every join the process applies the ptrace rule once more itself: it takes
 * a descriptor only when its owner is root or the process's own real,
 * effective and saved user (and group), and the process is dumpable.  A
 * setuid, setgid or file-capability program (AT_SECURE) takes nothing and
 * closes what it inherited.  docs/SECURITY.md says what this promises.
 */
#include <errno.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <string.h>
#include <sched.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "channel.h"
#include "join.h"
#include "lanes.h"
#include "pcb.h"
#include "process.h"
#include "registry.h"
#include "rendezvous.h"
#include "slots.h"
#include "stream.h"
#include "token.h"

int pt_secure_exec(void) { return getauxval(AT_SECURE) != 0; }

/* Whether the owner of fd may trace this process, by the ptrace rule. */
int pt_trust_fd(int fd)
{
	struct stat st;
	uid_t r, e, s;
	gid_t rg, eg, sg;
	if (pt_secure_exec() || fstat(fd, &st) != 0)
		return 0;
	if (st.st_uid == 0)
		return 1;
	if (getresuid(&r, &e, &s) != 0 || getresgid(&rg, &eg, &sg) != 0)
		return 0;
	if (r != st.st_uid || e != st.st_uid || s != st.st_uid || rg != st.st_gid ||
	    eg != st.st_gid || sg != st.st_gid)
		return 0;
	return prctl(PR_GET_DUMPABLE) == 1;
}

/* What came down the tree (a stream or registry an ancestor passed on
 * through exec, an ancestor's control block): the ptrace rule, and root's
 * only for root.  Every descendant inherits those descriptors, whatever
 * user it became since (a service manager, setpriv, a test harness that
 * drops privileges), so a root-owned object there is shared with every
 * other user of the tree; a stream a controller offered to this very
 * process is another matter (pt_trust_fd).  SECURITY.md, "A tree of
 * several users". */
int pt_trust_tree_fd(int fd)
{
	struct stat st;
	uid_t r, e, s;
	if (!pt_trust_fd(fd) || fstat(fd, &st) != 0 || getresuid(&r, &e, &s) != 0)
		return 0;
	return st.st_uid != 0 || (r == 0 && e == 0 && s == 0);
}

/* A TSC stream needs rdtsc, which a process may have turned into SIGSEGV. */
static int can_read_clock(uint32_t clock)
{
#if defined(__x86_64__) && defined(PR_GET_TSC)
	int mode = PR_TSC_ENABLE;
	if (clock == PT_CLOCK_TSC && prctl(PR_GET_TSC, &mode, 0, 0, 0) == 0 && mode != PR_TSC_ENABLE)
		return 0;
#endif
	(void)clock;
	return 1;
}

void pt_record_slot_fd(int slot, int fd)
{
	struct stat st;
	struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
	s->fd = fd;
	s->ino = fd >= 0 && fstat(fd, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static int join_trusted(int fd, enum pt_join_way way)
{
	switch (way) {
	case PT_JOIN_INHERITED:
		return pt_trust_tree_fd(fd);
	case PT_JOIN_OFFERED_BY_ROOT:
		return !pt_secure_exec();
	default:
		return pt_trust_fd(fd);
	}
}

/* Maps the stream behind fd (a token, taken) into slot and records into
 * it; what came down the tree only when traced with inheritance (enum
 * pt_join_way).  The file is opened afresh with this process's rights
 * (token.h): the kernel refuses another user's.  The slot goes from state
 * `from` to ATTACHED with a CAS: a controller offering or withdrawing at
 * the same moment wins, and the join is given up (EAGAIN).  Caller holds
 * pt_proc.lock. */
int pt_join_fd_locked(int fd, int slot, uint32_t offer_gen, enum pt_join_way way, uint32_t from)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	int rw = pt_token_open(fd);
	int err = rw < 0 ? EPERM : 0;
	if (!err && !join_trusted(rw, way)) {
		close(rw);
		err = EPERM;
	}
	if (!err)
		err = pt_stream_map_fd(rw, &a->own);
	else if (rw >= 0)
		close(rw);
	if (err) {
		close(fd);
		return err;
	}
	struct pt_stream_hdr *h = pt_hdr(&a->own);
	/* The state's value only: relaxed would do. */
	uint32_t state = atomic_load_explicit(&h->state, memory_order_acquire);
	if (state == PT_ST_DEAD || !can_read_clock(a->own.clock) ||
	    (way == PT_JOIN_INHERITED && !a->own.inherited) ||
	    (way == PT_JOIN_BEFORE_EXEC && a->own.inherited && !pt_trust_tree_fd(a->own.fd))) {
		pt_stream_unmap(&a->own);
		close(fd);
		return ESRCH;
	}
	/* A token kept across exec: this process after an exec records on, and
	 * its children started by exec join a stream traced with inheritance
	 * (an instrumented child closes the others at load). */
	pt_slot_keep_across_exec(slot, fd);
	close(fd);
	fd = pt_proc.attached[slot].exec_token;
	pt_reg_adopt_stream_names(pt_proc.reg, &a->own);
	a->gen = ++pt_proc.next_gen;
	a->offer_gen = offer_gen;
	a->traced = 1;
	a->names_synced = 0;
	pt_record_slot_fd(slot, fd);
	/* Release: fd and ino first; pairs with the acquire load of state in
	 * rejoin_own_streams (adopt.c) after an exec (which orders them anyway). */
	if (!atomic_compare_exchange_strong_explicit(&pt_proc.pcb->slots[slot].state, &from,
	                                             PT_SLOT_ATTACHED, memory_order_acq_rel,
	                                             memory_order_relaxed)) {
		pt_record_slot_fd(slot, -1);
		pt_slot_forget_exec_token(slot);
		pt_stream_unmap(&a->own);
		return EAGAIN;
	}
	/* Pairs with the acquire load of attached[].map in record and
	 * record_general (writer.c). */
	pt_publish_map(a, &a->own);
	pt_filter_follow();
	pt_count_unmapped_losses(a);
	pt_seed_names(a);
	if (state != PT_ST_SUSPENDED || a->own.inherited)
		pt_arm(slot, 1);
	return 0;
}

/* Drops a stream this process joined.  Caller holds the lock. */
static void release_joined_locked(int slot)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	if (m && m == &a->own)
		pt_detach_locked(slot);
}

/* Set while the process drains its channel for the answer of its
 * rendezvous (rdv_join.c): only then is a registry taken from it. */
static int waiting_for_rendezvous;

/* A registry received on the channel (fd, from sender): taken in place of
 * this process's own only while it waits for its rendezvous and before it
 * registered any name; closed otherwise.  pt_proc.lock held. */
static void take_tree_registry(int fd, uid_t sender)
{
	struct pt_registry *reg;
	if (!waiting_for_rendezvous || (sender != 0 && sender != getuid()) ||
	    pt_reg_count(pt_proc.reg) > 1 || !pt_trust_fd(fd) || pt_registry_map_fd(fd, &reg) != 0) {
		close(fd);
		return;
	}
	if (pt_proc.reg != &pt_proc.reg_fallback)
		munmap(pt_proc.reg, sizeof *pt_proc.reg);
	if (pt_proc.reg_fd >= 0)
		close(pt_proc.reg_fd);
	/* Kept across exec, as a registry made here would be. */
	fcntl(fd, F_SETFD, 0);
	pt_proc.reg = reg;
	pt_proc.reg_fd = fd;
	pt_pcb_init_own(pt_proc.pcb);
}

/* One offer read from the channel. */
static void pt_take_one_offer(const struct pt_offer_msg *msg, int fd, uid_t sender)
{
	if (msg->magic == PT_REGISTRY_OFFER_MAGIC) {
		take_tree_registry(fd, sender);
		return;
	}
	if (msg->magic != PT_OFFER_MAGIC || msg->slot >= PT_PCB_SLOTS ||
	    (sender != 0 && sender != getuid())) {
		close(fd);
		return;
	}
	struct pt_pcb_slot *s = &pt_proc.pcb->slots[msg->slot];
	struct pt_attached *a = &pt_proc.attached[msg->slot];
	struct pt_map *cur = atomic_load_explicit(&a->map, memory_order_relaxed);
	/* gen pairs with the acq_rel fetch-add in pt_remote_offer (remote.c): an
	 * offer whose gen is seen is seen OFFERED.  state: the value only. */
	if (atomic_load_explicit(&s->gen, memory_order_acquire) != msg->gen ||
	    atomic_load_explicit(&s->state, memory_order_acquire) != PT_SLOT_OFFERED ||
	    (cur && cur != &a->own)) {
		close(fd); /* withdrawn, or superseded by a newer offer */
		return;
	}
	release_joined_locked((int)msg->slot);
	enum pt_join_way way = sender == 0 ? PT_JOIN_OFFERED_BY_ROOT : PT_JOIN_OFFERED;
	if (pt_join_fd_locked(fd, (int)msg->slot, msg->gen, way, PT_SLOT_OFFERED) != 0) {
		/* Refused: the offer goes, unless it was withdrawn or replaced
		 * meanwhile.  Pairs with the acq_rel CAS of state in
		 * pt_remote_offer (remote.c) and pt_attach_local (slots.c). */
		uint32_t offered = PT_SLOT_OFFERED;
		if (atomic_load_explicit(&s->gen, memory_order_acquire) == msg->gen &&
		    atomic_compare_exchange_strong_explicit(&s->state, &offered, PT_SLOT_FREE,
		                                            memory_order_acq_rel, memory_order_relaxed))
			pt_arm((int)msg->slot, 0);
	}
}

void pt_drain_channel_locked(void)
{
	struct pt_offer_msg msg;
	int fd;
	uid_t sender;
	for (int i = 0; i < 4 * PT_PCB_SLOTS; i++) {
		int err = pt_channel_recv(pt_proc.chan_rx, &msg, &fd, &sender);
		if (err == EAGAIN)
			break;
		if (!err)
			pt_take_one_offer(&msg, fd, sender);
	}
}

/* A slot armed with nothing to record into is disarmed. */
static void settle_slot_locked(int slot)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	/* Pairs with the CAS to OFFERED in pt_remote_offer (remote.c); the
	 * value only. */
	if (!atomic_load_explicit(&a->map, memory_order_relaxed) &&
	    atomic_load_explicit(&pt_proc.pcb->slots[slot].state, memory_order_acquire) != PT_SLOT_OFFERED)
		pt_arm(slot, 0);
}

/* Called by a writer that found a slot armed for a stream it has not
 * mapped.  Never waits for the lock: another thread is doing it. */
#define TAKE_OFFER_TRIES 200

void pt_take_offers(int slot)
{
	if (pt_proc.chan_rx < 0)
		return;
	/* Another thread may hold the lock while it maps this very stream: a
	 * little wait, then the event is counted lost (record_general).  Not
	 * for good: the holder may be in a grace period, waiting for this
	 * thread to leave posix_trace_event. */
	for (int tries = 0; pthread_mutex_trylock(&pt_proc.lock) != 0; tries++) {
		if (tries >= TAKE_OFFER_TRIES)
			return;
		sched_yield();
	}
	pt_drain_channel_locked();
	settle_slot_locked(slot);
	pthread_mutex_unlock(&pt_proc.lock);
}

/* The most a writer outside its entry waits for the lock to take the
 * stream it was armed for: another thread maps it meanwhile (well under a
 * millisecond), or a controller's call of this process holds the lock
 * through a grace period (bounded by that of the slowest entry). */
#define TAKE_OFFER_WAIT_SEC 1

void pt_take_offers_waiting(uint64_t unmapped)
{
	if (pt_proc.chan_rx < 0)
		return;
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += TAKE_OFFER_WAIT_SEC;
	/* EDEADLK: this thread holds it (a signal handler's event that
	 * interrupted the library); ETIMEDOUT: the event goes on to
	 * pt_take_offers and is counted lost if the slot is still unmapped. */
	if (pthread_mutex_timedlock(&pt_proc.lock, &until) != 0)
		return;
	pt_drain_channel_locked();
	for (; unmapped; unmapped &= unmapped - 1)
		settle_slot_locked(__builtin_ctzll(unmapped));
	pthread_mutex_unlock(&pt_proc.lock);
}

/* Before fork: offers waiting on the channel are taken now, so that a
 * child forked before the parent's next event follows a stream traced with
 * inheritance all the same. */
void pt_take_offers_before_fork(void)
{
	if (pt_proc.chan_rx < 0)
		return;
	/* Pairs with the release RMWs of armed in pt_remote_arm (remote.c) and
	 * pt_arm (process.c). */
	uint64_t armed = atomic_load_explicit(&pt_proc.pcb->armed, memory_order_acquire);
	int pending = 0;
	for (int i = 0; i < PT_PCB_SLOTS; i++)
		if (((armed >> i) & 1) && !atomic_load_explicit(&pt_proc.attached[i].map,
		                                                memory_order_relaxed))
			pending = 1;
	if (!pending)
		return;
	pthread_mutex_lock(&pt_proc.lock);
	pt_drain_channel_locked();
	pthread_mutex_unlock(&pt_proc.lock);
}

/* A stream that was shut down is unmapped by the process that joined it. */
void pt_drop_dead(int slot)
{
	if (pthread_mutex_trylock(&pt_proc.lock) != 0)
		return;
	struct pt_attached *a = &pt_proc.attached[slot];
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	/* Pairs with the exchange to DEAD in pt_stream_end (stream.c); the value
	 * only. */
	if (m && m == &a->own &&
	    atomic_load_explicit(&pt_hdr(m)->state, memory_order_acquire) == PT_ST_DEAD)
		pt_detach_locked(slot);
	else if (m && m != &a->own)
		pt_arm(slot, 0);
	pthread_mutex_unlock(&pt_proc.lock);
}

void pt_drain_channel_for_rendezvous_locked(void)
{
	waiting_for_rendezvous = 1;
	pt_drain_channel_locked();
	waiting_for_rendezvous = 0;
}
