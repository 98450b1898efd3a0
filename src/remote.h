/* SPDX-License-Identifier: MIT */
/*
 * A controller's hold on another process (remote.c): permission and
 * identity through a pidfd, the target's control block and channel pulled
 * with pidfd_getfd (allowed by the kernel exactly when ptrace would be), and
 * the offer of a stream.  One small interface, so that create, start, stop
 * and shutdown read top-down.
 */
#ifndef PT_REMOTE_H
#define PT_REMOTE_H

#include "process.h"

struct pt_remote {
	int pidfd;             /* the target process, for good (pid reuse) */
	pid_t pid;
	uint64_t start;
	struct pt_pcb *pcb;    /* its block: sealed, mapped; contents untrusted */
	uint64_t pcb_ino;      /* ... and its inode */
	uid_t owner;           /* the block's owner and group: its user */
	gid_t owner_gid;
	int tx;                /* its channel's sending end */
	struct pt_registry *reg; /* its name registry (untrusted), or NULL */
	int reg_fd;            /* its descriptor (the rendezvous hands it on) */
	int foreign_block;     /* the last look found blocks of other processes only */
	int slot;              /* the slot offered, -1 none */
	uint32_t gen;
};

/* Identity and permission: ESRCH, EPERM. */
int pt_remote_open(pid_t pid, struct pt_remote *r);
/* Its block and channel: ENOENT when it has not loaded the library. */
int pt_remote_reach(struct pt_remote *r);
/* Whether the target looks like a child forked a moment ago from a
 * program with the library, whose fork handler has not made its own block
 * yet: it runs the program its parent runs, and the last pt_remote_reach
 * found only a block of another process (its parent's, inherited) or its
 * parent is this process. */
int pt_remote_fork_pending(const struct pt_remote *r);
/* Whether an offer made to the block reached still waits there while the
 * target no longer holds that block: a target that changed user and then
 * exec'd cannot open the block it made before (token.h) and makes
 * another, where the offer must be made anew (pt_remote_unreach, then
 * pt_remote_hand_over). */
int pt_remote_offer_stranded(const struct pt_remote *r);
/* Lets the block, channel and registry reached go (the pidfd stays; an
 * offer still made there is the caller's to withdraw first). */
void pt_remote_unreach(struct pt_remote *r);
/* Hands the stream over: a slot, then the descriptor on the channel. */
int pt_remote_offer(struct pt_remote *r, int stream_fd, int running);
/* Reaches the process, copies its names into the stream (so that ids
 * agree with its own posix_trace_eventid_open) and offers it the stream:
 * ENOENT while it has not loaded the library. */
int pt_remote_hand_over(struct pt_remote *r, const struct pt_map *m, int running);
void pt_remote_arm(struct pt_remote *r, int on);
/* At shutdown: an offer not taken is withdrawn; a stream taken stays armed
 * so that the target notices it is dead and lets it go. */
void pt_remote_withdraw(struct pt_remote *r);
void pt_remote_close(struct pt_remote *r);

#endif
