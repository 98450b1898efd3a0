/* SPDX-License-Identifier: MIT */
/*
 * Streams handed to this process (join.c): the trust rule, a join, the
 * offers on the channel, a dead stream dropped.
 */
#ifndef PT_JOIN_H
#define PT_JOIN_H

#include "channel.h"

/* A setuid, setgid or file-capability program (AT_SECURE). */
int pt_secure_exec(void);
/* Whether the owner of fd may trace this process, by the ptrace rule. */
int pt_trust_fd(int fd);
/* The same for what an ancestor passed down: root's only for root. */
int pt_trust_tree_fd(int fd);
/* How a stream reached the process, for pt_join_fd_locked: offered to it
 * (0), under pt_trust_fd; offered by root (the kernel's SCM_CREDENTIALS
 * say so), who may trace any process, dumpable or not (a worker that
 * dropped privileges without exec); passed down the tree, taken only when
 * traced with inheritance and under pt_trust_tree_fd; recorded into before
 * this process's exec, where a stream traced with inheritance, which the
 * tree shares, must pass pt_trust_tree_fd (the process may have changed
 * user since). */
enum pt_join_way {
	PT_JOIN_OFFERED,
	PT_JOIN_OFFERED_BY_ROOT,
	PT_JOIN_INHERITED,
	PT_JOIN_BEFORE_EXEC,
};
/* Maps the stream in fd into slot (taking fd) and records into it. */
int pt_join_fd_locked(int fd, int slot, uint32_t offer_gen, enum pt_join_way way, uint32_t from);
void pt_record_slot_fd(int slot, int fd);
void pt_drain_channel_locked(void);
/* The same, for the answer of a rendezvous (rdv_join.c): the tree's
 * registry that comes first on the channel is taken too. */
void pt_drain_channel_for_rendezvous_locked(void);
/* A writer found a slot armed for a stream it has not mapped. */
void pt_take_offers(int slot);
/* From a writer outside its entry: the offers of the armed slots in
 * `unmapped` (a bit per slot) taken, waiting for the lock a while. */
void pt_take_offers_waiting(uint64_t unmapped);
void pt_take_offers_before_fork(void);
/* A stream that was shut down is unmapped by the process that joined it. */
void pt_drop_dead(int slot);

#endif
