/* SPDX-License-Identifier: MIT */
/*
 * Streams handed to this process: received on its channel from a controller,
 * inherited through exec from an ancestor traced with inheritance, or kept
 * by this very process across its own exec.  Trust comes from the kernel at
 * the moment of the hand-over (pidfd_getfd checked the controller against
 * the ptrace rule; an inherited descriptor came from an ancestor), and at
 * every join the process applies the ptrace rule once more itself: it takes
 * a descriptor only when its owner is root or the process's own real,
 * effective and saved user (and group), and the process is dumpable.  A
 * setuid, setgid or file-capability program (AT_SECURE) takes nothing and
 * closes what it inherited.  docs/SECURITY.md says what this promises.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "process.h"

#define MAX_INHERITED 256

static int secure_exec(void) { return getauxval(AT_SECURE) != 0; }

/* Whether the owner of fd may trace this process, by the ptrace rule. */
int pt_trust_fd(int fd)
{
	struct stat st;
	uid_t r, e, s;
	gid_t rg, eg, sg;
	if (secure_exec() || fstat(fd, &st) != 0)
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

/* Maps the stream in fd into slot (taking fd) and records into it; with
 * only_inherited, only a stream traced with inheritance.  The slot goes
 * from state `from` to ATTACHED with a CAS: a controller offering or
 * withdrawing at the same moment wins, and the join is given up (EAGAIN).
 * Caller holds pt_proc.lock. */
int pt_join_fd_locked(int fd, int slot, uint32_t offer_gen, int only_inherited, uint32_t from)
{
	struct pt_attached *a = &pt_proc.attached[slot];
	if (!pt_trust_fd(fd)) {
		close(fd);
		return EPERM;
	}
	int err = pt_stream_map_fd(fd, &a->own);
	if (err) {
		close(fd);
		return err;
	}
	struct pt_stream_hdr *h = pt_hdr(&a->own);
	/* The state's value only: relaxed would do. */
	uint32_t state = atomic_load_explicit(&h->state, memory_order_acquire);
	if (state == PT_ST_DEAD || !can_read_clock(a->own.clock) ||
	    (only_inherited && !a->own.inherited)) {
		pt_stream_unmap(&a->own);
		return ESRCH;
	}
	/* Kept across exec: this process after an exec records on, and its
	 * children started by exec join a stream traced with inheritance (an
	 * instrumented child closes the others at load). */
	fcntl(fd, F_SETFD, 0);
	pt_reg_adopt_stream_names(pt_proc.reg, &a->own);
	a->gen = ++pt_proc.next_gen;
	a->offer_gen = offer_gen;
	a->traced = 1;
	a->names_synced = 0;
	pt_record_slot_fd(slot, fd);
	/* Release: fd and ino first; pairs with the acquire load of state in
	 * rejoin_own_streams after an exec (which orders them anyway). */
	if (!atomic_compare_exchange_strong_explicit(&pt_proc.pcb->slots[slot].state, &from,
	                                             PT_SLOT_ATTACHED, memory_order_acq_rel,
	                                             memory_order_relaxed)) {
		pt_record_slot_fd(slot, -1);
		pt_stream_unmap(&a->own); /* closes fd */
		return EAGAIN;
	}
	/* Pairs with the acquire load of attached[].map in record and
	 * record_general (writer.c). */
	pt_publish_map(a, &a->own);
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

static void take_one_offer(const struct pt_offer_msg *msg, int fd, uid_t sender)
{
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
	if (pt_join_fd_locked(fd, (int)msg->slot, msg->gen, 0, PT_SLOT_OFFERED) != 0) {
		/* Refused: the offer goes, unless it was withdrawn or replaced
		 * meanwhile.  Pairs with the acq_rel CAS of state in
		 * pt_remote_offer (remote.c) and pt_attach_local (process.c). */
		uint32_t offered = PT_SLOT_OFFERED;
		if (atomic_load_explicit(&s->gen, memory_order_acquire) == msg->gen &&
		    atomic_compare_exchange_strong_explicit(&s->state, &offered, PT_SLOT_FREE,
		                                            memory_order_acq_rel, memory_order_relaxed))
			pt_arm((int)msg->slot, 0);
	}
}

static void drain_channel_locked(void)
{
	struct pt_offer_msg msg;
	int fd;
	uid_t sender;
	for (int i = 0; i < 4 * PT_PCB_SLOTS; i++) {
		int err = pt_channel_recv(pt_proc.chan_rx, &msg, &fd, &sender);
		if (err == EAGAIN)
			break;
		if (!err)
			take_one_offer(&msg, fd, sender);
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
	drain_channel_locked();
	settle_slot_locked(slot);
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
	drain_channel_locked();
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

/* ---- at load: what an exec kept ---------------------------------------- */

struct inherited {
	int fd;
	char kind; /* 'p' control block, 'n' registry, 's' stream */
};

static int collect(struct inherited *out, int max)
{
	char path[64], link[128];
	int n = 0;
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return 0;
	int dfd = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d)) && n < max) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		int fd = atoi(e->d_name);
		if (fd == dfd)
			continue;
		snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
		ssize_t len = readlink(path, link, sizeof link - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strncmp(link, "/memfd:posixtrace-", 18) != 0)
			continue;
		char kind = strncmp(link + 18, "pcb", 3) == 0      ? 'p'
		            : strncmp(link + 18, "names", 5) == 0  ? 'n'
		            : strncmp(link + 18, "stream", 6) == 0 ? 's'
		                                                   : 0;
		if (kind)
			out[n++] = (struct inherited){fd, kind};
	}
	closedir(d);
	return n;
}

static void close_ref(const struct pt_fdref *r)
{
	if (pt_fd_is(r->fd, r->ino))
		close(r->fd);
}

static void join_inherited(int fd);

/* The ancestor's block serialises its descendants' peeks; a holder that
 * died is replaced. */
static int lock_peek(struct pt_pcb *pcb)
{
	for (int spins = 0; spins < 100000; spins++) {
		int32_t owner = 0;
		/* Pairs with the release store of peek_owner in peek_ancestor_offers:
		 * the last holder's peeks are done. */
		if (atomic_compare_exchange_strong_explicit(&pcb->peek_owner, &owner, pt_proc.pid,
		                                            memory_order_acquire, memory_order_relaxed))
			return 1;
		if (kill(owner, 0) != 0 && errno == ESRCH)
			atomic_compare_exchange_strong_explicit(&pcb->peek_owner, &owner, 0,
			                                        memory_order_relaxed, memory_order_relaxed);
		sched_yield();
	}
	return 0;
}

/* Streams offered to an ancestor that it has not taken yet (it exec'd a
 * program that does not load the library, say a shell): a child it started
 * follows them too.  Peeked (MSG_PEEK with SO_PEEK_OFF), so the ancestor
 * still receives them, one descendant at a time. */
static void peek_ancestor_offers(struct pt_pcb *pcb, int rx)
{
	struct pt_offer_msg msg;
	int off = 0, fd;
	uid_t sender;
	if (!lock_peek(pcb))
		return;
	if (setsockopt(rx, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof off) == 0) {
		for (int i = 0; i < PT_PCB_SLOTS && pt_channel_peek(rx, &msg, &fd, &sender) == 0; i++) {
			if (fd >= 0 && (sender == 0 || sender == getuid()))
				join_inherited(fd);
			else if (fd >= 0)
				close(fd);
		}
		off = -1;
		setsockopt(rx, SOL_SOCKET, SO_PEEK_OFF, &off, sizeof off);
	}
	/* Pairs with the acquire CAS of peek_owner in lock_peek. */
	atomic_store_explicit(&pcb->peek_owner, 0, memory_order_release);
}

/* Another process's block passed down by exec: its channel ends go too. */
static void drop_foreign_block(int fd)
{
	struct pt_pcb *pcb;
	if (pt_pcb_map_fd(fd, &pcb) == 0) {
		if (pcb->magic == PT_PCB_MAGIC) {
			struct pt_fdref rx = pcb->channel_rx, tx = pcb->channel_tx;
			if (pt_fd_is(rx.fd, rx.ino) && pt_trust_fd(fd))
				peek_ancestor_offers(pcb, rx.fd);
			close_ref(&rx);
			close_ref(&tx);
		}
		munmap(pcb, sizeof *pcb);
	}
	close(fd);
}

/* The block this very process had before exec, if fd is it. */
static int adopt_own_block(int fd)
{
	struct pt_pcb *pcb;
	if (!pt_trust_fd(fd) || pt_pcb_map_fd(fd, &pcb) != 0)
		return 0;
	if (!pt_pcb_validate(pcb, pt_proc.pid, pt_proc.starttime)) {
		munmap(pcb, sizeof *pcb);
		return 0;
	}
	pt_set_pcb(pcb);
	pt_proc.pcb_fd = fd;
	return 1;
}

static int adopt_ref(const struct pt_fdref *r)
{
	return pt_fd_is(r->fd, r->ino) ? r->fd : -1;
}

/* After exec: this process's channel and registry as its block names them,
 * else new ones. */
static void adopt_own_resources(void)
{
	struct pt_pcb *pcb = pt_proc.pcb;
	struct pt_fdref rx = pcb->channel_rx, tx = pcb->channel_tx, reg = pcb->registry;
	pt_proc.chan_rx = adopt_ref(&rx);
	pt_proc.chan_tx = adopt_ref(&tx);
	if (pt_proc.chan_rx < 0 || pt_proc.chan_tx < 0) {
		if (pt_proc.chan_rx >= 0)
			close(pt_proc.chan_rx);
		if (pt_proc.chan_tx >= 0)
			close(pt_proc.chan_tx);
		pt_proc.chan_rx = pt_proc.chan_tx = -1;
		pt_channel_create(&pt_proc.chan_rx, &pt_proc.chan_tx);
	}
	int rfd = adopt_ref(&reg);
	struct pt_registry *r;
	if (rfd >= 0 && pt_trust_fd(rfd) && pt_registry_map_fd(rfd, &r) == 0) {
		pt_proc.reg = r;
		pt_proc.reg_fd = rfd;
	}
}

/* Streams this process recorded into before exec, by its block's slots. */
static void rejoin_own_streams(struct inherited *fds, int n)
{
	for (int slot = 0; slot < PT_PCB_SLOTS; slot++) {
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
		/* Pairs with the release store of ATTACHED in pt_join_fd_locked, made
		 * before the exec. */
		uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
		int fd = s->fd;
		if (state == PT_SLOT_ATTACHED && pt_fd_is(fd, s->ino)) {
			for (int i = 0; i < n; i++)
				if (fds[i].fd == fd)
					fds[i].kind = 0; /* taken */
			if (pt_join_fd_locked(fd, slot, atomic_load_explicit(&s->gen, memory_order_relaxed),
			                      0, PT_SLOT_ATTACHED) == 0)
				continue;
		}
		if (state != PT_SLOT_OFFERED) {
			/* The old image's own streams (as their controller) ended
			 * with it; the offers still on the channel are taken below.
			 * Pairs with the acq_rel CAS of state in pt_remote_offer (remote.c). */
			atomic_store_explicit(&s->state, PT_SLOT_FREE, memory_order_release);
			pt_arm(slot, 0);
		}
	}
}

static int free_slot_locked(void)
{
	/* Pairs with the release stores of FREE (pt_detach_locked in process.c,
	 * take_one_offer, rejoin_own_streams); the value only. */
	for (int i = 0; i < PT_PCB_SLOTS; i++)
		if (!atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed) &&
		    atomic_load_explicit(&pt_proc.pcb->slots[i].state, memory_order_acquire) == PT_SLOT_FREE)
			return i;
	return -1;
}

/* Whether this process already records into the stream behind fd. */
static int already_joined(int fd)
{
	struct stat st, mine;
	if (fstat(fd, &st) != 0)
		return 1;
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		struct pt_map *m = atomic_load_explicit(&pt_proc.attached[i].map, memory_order_relaxed);
		if (m && m->fd >= 0 && fstat(m->fd, &mine) == 0 && mine.st_ino == st.st_ino &&
		    mine.st_dev == st.st_dev)
			return 1;
	}
	return 0;
}

/* A stream an ancestor passed down: joined when traced with inheritance. */
static void join_inherited(int fd)
{
	int slot = free_slot_locked();
	if (slot < 0 || already_joined(fd)) {
		close(fd);
		return;
	}
	/* A newer gen fails an older offer's checks (take_one_offer, pt_remote_withdraw
	 * in remote.c); the value only: relaxed would do. */
	uint32_t gen = atomic_fetch_add_explicit(&pt_proc.pcb->slots[slot].gen, 1,
	                                         memory_order_acq_rel) + 1;
	pt_join_fd_locked(fd, slot, gen, 1, PT_SLOT_FREE);
}

/* The registry of the ancestor whose streams this process joins, so that
 * the whole tree maps a name to one id. */
static void use_inherited_registry(int fd)
{
	struct pt_registry *r;
	if (pt_proc.reg_fd >= 0 || !pt_trust_fd(fd) || pt_registry_map_fd(fd, &r) != 0) {
		close(fd);
		return;
	}
	pt_proc.reg = r;
	pt_proc.reg_fd = fd;
}

static void drop_all(struct inherited *fds, int n)
{
	for (int i = 0; i < n; i++) {
		if (fds[i].kind == 'p')
			drop_foreign_block(fds[i].fd);
		else if (fds[i].kind)
			close(fds[i].fd);
	}
}

/* At load (a new program, or this one after exec): a setuid program drops
 * everything it inherited; any other takes back its own block, channel,
 * registry and streams, joins what an ancestor traced with inheritance, and
 * takes the offers that waited on its channel. */
void pt_adopt_at_load(void)
{
	struct inherited fds[MAX_INHERITED];
	int n = collect(fds, MAX_INHERITED);
	pthread_mutex_lock(&pt_proc.lock);
	if (secure_exec()) {
		/* Nothing inherited, and nothing another process could reach:
		 * it may trace itself with private memory, nobody traces it. */
		drop_all(fds, n);
		pthread_mutex_unlock(&pt_proc.lock);
		return;
	}
	for (int i = 0; i < n; i++)
		if (fds[i].kind == 'p' && pt_proc.pcb_fd < 0 && adopt_own_block(fds[i].fd))
			fds[i].kind = 0;
	if (pt_proc.pcb_fd >= 0) {
		adopt_own_resources();
		for (int i = 0; i < n; i++)
			if (fds[i].fd == pt_proc.reg_fd || fds[i].fd == pt_proc.pcb_fd)
				fds[i].kind = 0;
	}
	for (int i = 0; i < n; i++)
		if (fds[i].kind == 'n') {
			use_inherited_registry(fds[i].fd);
			fds[i].kind = 0;
		}
	if (pt_proc.reg_fd < 0)
		pt_registry_create();
	if (pt_proc.pcb_fd < 0) {
		if (pt_proc.chan_rx < 0)
			pt_channel_create(&pt_proc.chan_rx, &pt_proc.chan_tx);
		pt_pcb_create();
	} else {
		pt_proc.pcb->registry.fd = pt_proc.reg_fd;
		pt_pcb_init_own(pt_proc.pcb); /* fd numbers may have changed */
		rejoin_own_streams(fds, n);
	}
	for (int i = 0; i < n; i++) {
		if (fds[i].kind == 'p')
			drop_foreign_block(fds[i].fd);
		else if (fds[i].kind == 's')
			join_inherited(fds[i].fd);
	}
	if (pt_proc.chan_rx >= 0)
		drain_channel_locked();
	pthread_mutex_unlock(&pt_proc.lock);
}
