/* SPDX-License-Identifier: MIT */
/*
 * At load (adopt.h): what an exec kept for this process.  Its own control
 * block, channel, registry and streams, if it had them before its own
 * exec; the streams an ancestor traced with inheritance; the offers that
 * waited on its channel; another process's block and channel ends, which
 * are closed.  Every descriptor is checked (seals and size by the mapping
 * functions; its owner by join.c's pt_trust_fd before this process joins
 * or adopts what it holds, and by pt_trust_tree_fd for what an ancestor
 * passed down: root's objects only for root).  A setuid, setgid or
 * file-capability program (AT_SECURE) takes nothing and closes what it
 * inherited.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include "adopt.h"
#include "channel.h"
#include "join.h"
#include "pcb.h"
#include "process.h"
#include "procfd.h"
#include "rdv_join.h"
#include "registry.h"
#include "rendezvous.h"
#include "token.h"

#define MAX_INHERITED 256

/* At load: whether the registry in use came down the tree, and how many
 * streams traced with inheritance this process joined (decide_registry). */
static int registry_inherited;
static int inherited_joins;

struct inherited {
	int fd;
	char kind; /* enum pt_memfd_kind, 0 once taken */
};

struct collected {
	struct inherited *out;
	int n, max;
};

/* Each is made a token in place (token.h), if it was not one already:
 * whatever this process keeps and passes on can only be opened. */
static int collect_one(int fd, enum pt_memfd_kind kind, void *arg)
{
	struct collected *c = arg;
	pt_token_make(fd, 1);
	c->out[c->n++] = (struct inherited){fd, (char)kind};
	return c->n == c->max;
}

static int collect(struct inherited *out, int max)
{
	struct collected c = {out, 0, max};
	pt_each_memfd(0, collect_one, &c);
	return c.n;
}

/* Whether fd is a socket with the inode a block names: a channel end.  A
 * block names descriptors by number, so only this check keeps a block
 * from naming this process's own files (its stdout, say). */
static int is_channel_end(const struct pt_fdref *r)
{
	struct stat st;
	return r->fd >= 0 && fstat(r->fd, &st) == 0 && S_ISSOCK(st.st_mode) &&
	       (uint64_t)st.st_ino == r->ino;
}

static void close_channel_end(const struct pt_fdref *r)
{
	if (is_channel_end(r))
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
			if (fd >= 0 && msg.magic == PT_OFFER_MAGIC && (sender == 0 || sender == getuid()))
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

/* Another process's block passed down by exec: its channel ends go too.
 * Nothing the block says is acted on before its owner (the ptrace rule,
 * root's only for root: pt_trust_tree_fd), seals and size are checked: a
 * block another user forged is closed and nothing else (SECURITY.md,
 * "Nothing read is acted on before it is checked"). */
static void drop_foreign_block(int fd)
{
	struct pt_pcb *pcb;
	if (pt_trust_tree_fd(fd) && pt_pcb_map_fd(fd, &pcb) == 0) {
		if (pcb->magic == PT_PCB_MAGIC) {
			struct pt_fdref rx = pcb->channel_rx, tx = pcb->channel_tx;
			if (is_channel_end(&rx))
				peek_ancestor_offers(pcb, rx.fd);
			close_channel_end(&rx);
			close_channel_end(&tx);
		}
		munmap(pcb, sizeof *pcb);
	}
	close(fd);
}

/* The block this very process had before exec, if fd is it: the offers
 * on its channel were made to this process.  What the tree shares (its
 * registry, streams traced with inheritance) it takes back only under
 * pt_trust_tree_fd: a process of root's tree that became another user and
 * then exec'd (a daemon's worker, setpriv) leaves them, or it would go on
 * recording beside the tree's other users. */
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

static int adopt_channel_end(const struct pt_fdref *r)
{
	return is_channel_end(r) ? r->fd : -1;
}

/* After exec: this process's channel and registry as its block names them,
 * else new ones. */
static void adopt_own_resources(void)
{
	struct pt_pcb *pcb = pt_proc.pcb;
	struct pt_fdref rx = pcb->channel_rx, tx = pcb->channel_tx, reg = pcb->registry;
	pt_proc.chan_rx = adopt_channel_end(&rx);
	pt_proc.chan_tx = adopt_channel_end(&tx);
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
	if (rfd >= 0 && pt_trust_tree_fd(rfd) && pt_registry_map_fd(rfd, &r) == 0) {
		pt_proc.reg = r;
		pt_proc.reg_fd = rfd;
	}
}

/* Streams this process recorded into before exec, by its block's slots. */
static void rejoin_own_streams(struct inherited *fds, int n)
{
	for (int slot = 0; slot < PT_PCB_SLOTS; slot++) {
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[slot];
		/* Pairs with the release store of ATTACHED in pt_join_fd_locked (join.c), made
		 * before the exec. */
		uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
		int fd = s->fd;
		if (state == PT_SLOT_ATTACHED && pt_fd_is(fd, s->ino)) {
			for (int i = 0; i < n; i++)
				if (fds[i].fd == fd)
					fds[i].kind = 0; /* taken */
			if (pt_join_fd_locked(fd, slot, atomic_load_explicit(&s->gen, memory_order_relaxed),
			                      PT_JOIN_BEFORE_EXEC, PT_SLOT_ATTACHED) == 0)
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
	/* Pairs with the release stores of FREE (pt_detach_locked in slots.c,
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
	/* A newer gen fails an older offer's checks (pt_take_one_offer in join.c,
	 * pt_remote_withdraw in remote.c); the value only: relaxed would do. */
	uint32_t gen = atomic_fetch_add_explicit(&pt_proc.pcb->slots[slot].gen, 1,
	                                         memory_order_acq_rel) + 1;
	if (pt_join_fd_locked(fd, slot, gen, PT_JOIN_INHERITED, PT_SLOT_FREE) == 0)
		inherited_joins++;
}

/* The registry of the ancestor whose streams this process joins, so that
 * the whole tree maps a name to one id. */
static void use_inherited_registry(int fd)
{
	struct pt_registry *r;
	if (pt_proc.reg_fd >= 0 || !pt_trust_tree_fd(fd) || pt_registry_map_fd(fd, &r) != 0) {
		close(fd);
		return;
	}
	pt_proc.reg = r;
	pt_proc.reg_fd = fd;
	registry_inherited = 1;
}

/* The registry an ancestor passed down is the name space of the tree its
 * streams traced with inheritance record: it is taken tentatively (the
 * joins seed those streams from it), and kept only if this process joined
 * one of them.  Else this program's names are its own (ids are per process,
 * posix_trace_eventid_open), in a registry of its own: a program started by
 * a process that traces nothing with inheritance does not use up its
 * parent's names, nor the parent its.  pt_proc.lock held. */
static void decide_registry(void)
{
	if (!registry_inherited || inherited_joins)
		return;
	munmap(pt_proc.reg, sizeof *pt_proc.reg);
	close(pt_proc.reg_fd);
	pt_proc.reg = &pt_proc.reg_fallback;
	pt_proc.reg_fd = -1;
	registry_inherited = 0;
	pt_registry_create();
	pt_pcb_init_own(pt_proc.pcb);
}

static void drop_all(struct inherited *fds, int n)
{
	for (int i = 0; i < n; i++) {
		if (fds[i].kind == PT_MEMFD_PCB)
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
	if (pt_secure_exec()) {
		/* Nothing inherited, and nothing another process could reach:
		 * it may trace itself with private memory, nobody traces it. */
		drop_all(fds, n);
		pthread_mutex_unlock(&pt_proc.lock);
		return;
	}
	for (int i = 0; i < n; i++)
		if (fds[i].kind == PT_MEMFD_PCB && pt_proc.pcb_fd < 0 && adopt_own_block(fds[i].fd))
			fds[i].kind = 0;
	if (pt_proc.pcb_fd >= 0) {
		adopt_own_resources();
		for (int i = 0; i < n; i++)
			if (fds[i].fd == pt_proc.reg_fd || fds[i].fd == pt_proc.pcb_fd)
				fds[i].kind = 0;
	}
	for (int i = 0; i < n; i++)
		if (fds[i].kind == PT_MEMFD_NAMES) {
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
		if (fds[i].kind == PT_MEMFD_PCB)
			drop_foreign_block(fds[i].fd);
		else if (fds[i].kind == PT_MEMFD_STREAM)
			join_inherited(fds[i].fd);
	}
	decide_registry();
	if (pt_proc.chan_rx >= 0)
		pt_drain_channel_locked();
	/* Descriptors closed before this program loaded the library (Python's
	 * close_fds): the keeper of the stream named in the environment hands
	 * it over (rendezvous.h). */
	pt_rdv_join_at_load();
	pthread_mutex_unlock(&pt_proc.lock);
}
