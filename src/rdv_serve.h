/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous served (rdv_serve.c): the directory and socket the
 * controller makes for a stream traced with inheritance, and the keeper's
 * answers to the processes that join through it (rendezvous.h: what both
 * sides exchange).
 */
#ifndef PT_RDV_SERVE_H
#define PT_RDV_SERVE_H

#include "rendezvous.h"

/* The controller's side: the directory (made by mkdtemp, then mode 0711:
 * nobody lists it) and the two sockets listening in it, join (mode 0600,
 * the user's the stream's memory belongs to: nobody else can connect, so
 * nobody else can crowd it) and others (mode 0666: a descendant of another
 * user says it was there and is counted); fd -1 when the stream has none. */
struct pt_rdv {
	int fd;
	int others_fd;
	char dir[PT_RDV_DIR_MAX];
};

void pt_rdv_init(struct pt_rdv *r);
/* Makes the directory and socket: 0, or an error number (the stream then
 * has no rendezvous, which is not an error of its creation). */
int pt_rdv_open(struct pt_rdv *r);
/* The join socket follows the owner of the stream's memory (stream_fd),
 * which a root controller gives to its target's user (remote.c). */
void pt_rdv_follow_owner(const struct pt_rdv *r, int stream_fd);
/* Takes the directory away: nobody finds the socket any more. */
void pt_rdv_remove(struct pt_rdv *r);
/* Closes the socket and, with remove, takes the directory away. */
void pt_rdv_close(struct pt_rdv *r, int remove);

/* What the keeper serves: who may join (descendants of target, started at
 * target_start, that the keeper may trace), what they get (the stream and
 * the tree's name registry), and where it counts. */
struct pt_rdv_server {
	int listen_fd;
	int others_fd;
	int stream_fd;
	int registry_fd;
	pid_t target;
	uint64_t target_start;
	struct pt_rdv_counts *counts;
};
/* In the keeper: from now on a connection to the join socket moves *wake (the word the keeper
 * sleeps on), so that its loop comes to pt_rdv_serve_pending at once.  0,
 * or an error number (then joiners are answered at the keeper's tick, or
 * wait in vain up to PT_RDV_WAIT_MS and start untraced). */
int pt_rdv_serve_start(const struct pt_rdv_server *s, _Atomic uint32_t *wake);
/* Answers the joiners waiting, a bounded number of them, if a connection
 * was signalled since the last call (or look_anyway: the keeper's tick, in
 * case a signal went astray): 1 when more may be waiting (call again
 * before sleeping). */
int pt_rdv_serve_pending(const struct pt_rdv_server *s, int look_anyway);
/* In the keeper, once a tick after its drains: the others socket, at most
 * PT_RDV_OTHERS_PER_TICK connections and PT_RDV_OTHERS_PROC_READS /proc
 * files read for them (docs/SECURITY.md); a connection whose walk the
 * budget cannot pay is counted unchecked.  The rest wait in the socket's
 * backlog (128), where a crowd's connect() waits too. */
#define PT_RDV_OTHERS_PER_TICK 64
#define PT_RDV_OTHERS_PROC_READS 256
void pt_rdv_serve_others(const struct pt_rdv_server *s);

#endif
