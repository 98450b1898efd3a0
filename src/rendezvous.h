/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous of a stream traced with inheritance (docs/DESIGN.md, "The
 * rendezvous"; docs/SECURITY.md says what each side trusts).  A descendant
 * of the stream's target that lost the descriptors it inherited (Python's
 * subprocess closes them, so do close_range() before exec and many test
 * drivers) asks the stream's keeper for the stream through a socket in a
 * directory the environment variable POSIXTRACE_RENDEZVOUS names.
 *
 * rdv_serve.c: the controller makes the directory and the listening socket
 *   (pt_rdv_open, pt_rdv_close); its keeper serves them from its main loop
 *   (pt_rdv_serve_start, pt_rdv_serve_pending).
 * rdv_join.c: a process that loads the library and joined no stream asks,
 *   once, at load (pt_rdv_join_at_load), and takes the name registry the
 *   keeper hands it with the stream (pt_rdv_take_registry).
 */
#ifndef PT_RENDEZVOUS_H
#define PT_RENDEZVOUS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include "posixtrace.h"

#define PT_RDV_ENV POSIXTRACE_RENDEZVOUS_ENV
#define PT_RDV_SOCKET "join"    /* the listening socket, in the directory */
#define PT_RDV_WAIT_MS 100      /* a joiner's whole wait at load */
#define PT_RDV_DIR_MAX 256      /* the directory's path, with its null */
#define PT_RDV_REPLY_MAGIC 0x56445450u /* "PTDV" */

/* The keeper's answer on the joiner's connection, once the stream (or
 * nothing) is on the joiner's channel: err 0, or why it was refused. */
struct pt_rdv_reply {
	uint32_t magic;
	int32_t err;
};

/* The controller's side: the directory (made by mkdtemp, then mode 0711:
 * nobody lists it, a process of another user reaches the socket, mode
 * 0666, and is refused and counted) and the socket listening in it; fd -1
 * when the stream has none. */
struct pt_rdv {
	int fd;
	char dir[PT_RDV_DIR_MAX];
};

/* Counts the keeper keeps in memory it shares with its controller only
 * (struct pt_ctl): numbers, relaxed. */
struct pt_rdv_counts {
	_Atomic uint64_t joined;   /* processes handed the stream */
	_Atomic uint64_t refused;  /* refused, or gone before the answer */
	/* Descendants refused because they run as another user than the
	 * stream's memory belongs to (counted here, not in refused). */
	_Atomic uint64_t other_users;
};

void pt_rdv_init(struct pt_rdv *r);
/* Makes the directory and socket: 0, or an error number (the stream then
 * has no rendezvous, which is not an error of its creation). */
int pt_rdv_open(struct pt_rdv *r);
/* Takes the directory away: nobody finds the socket any more. */
void pt_rdv_remove(struct pt_rdv *r);
/* Closes the socket and, with remove, takes the directory away. */
void pt_rdv_close(struct pt_rdv *r, int remove);

/* What the keeper serves: who may join (descendants of target, started at
 * target_start, that the keeper may trace), what they get (the stream and
 * the tree's name registry), and where it counts. */
struct pt_rdv_server {
	int listen_fd;
	int stream_fd;
	int registry_fd;
	pid_t target;
	uint64_t target_start;
	struct pt_rdv_counts *counts;
};
/* In the keeper: from now on a connection moves *wake (the word the keeper
 * sleeps on), so that its loop comes to pt_rdv_serve_pending at once.  0,
 * or an error number (then joiners are answered at the keeper's tick, or
 * wait in vain up to PT_RDV_WAIT_MS and start untraced). */
int pt_rdv_serve_start(const struct pt_rdv_server *s, _Atomic uint32_t *wake);
/* Answers the joiners waiting, a bounded number of them, if a connection
 * was signalled since the last call (or look_anyway: the keeper's tick, in
 * case a signal went astray): 1 when more may be waiting (call again
 * before sleeping). */
int pt_rdv_serve_pending(const struct pt_rdv_server *s, int look_anyway);

/* The message that hands a joiner the tree's registry on its channel,
 * ahead of the stream's offer (struct pt_offer_msg's magic). */
#define PT_REGISTRY_OFFER_MAGIC 0x52545450u /* "PTTR" */

/* At load, pt_proc.lock held, with this process's block and channel made:
 * asks the keeper named in the environment for its stream, when the
 * process joined none. */
void pt_rdv_join_at_load(void);
/* A registry received on the channel (fd, from sender): taken in place of
 * this process's own only while it waits for its rendezvous and before it
 * registered any name; closed otherwise.  pt_proc.lock held. */
void pt_rdv_take_registry(int fd, uid_t sender);

#endif
