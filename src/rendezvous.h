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
 *   keeper hands it with the stream (join.c, take_tree_registry).
 */
#ifndef PT_RENDEZVOUS_H
#define PT_RENDEZVOUS_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>
#include "posixtrace.h"

#define PT_RDV_ENV POSIXTRACE_RENDEZVOUS_ENV
#define PT_RDV_SOCKET "join"    /* the listening socket, in the directory */
/* Beside it, open to every user: a descendant that may not connect to
 * join (mode 0600, the stream memory's user's) says here that it was
 * there, and waits for nothing. */
#define PT_RDV_OTHERS "others"
#define PT_RDV_WAIT_MS 100      /* a joiner's whole wait at load */
#define PT_RDV_DIR_MAX 256      /* the directory's path, with its null */
#define PT_RDV_REPLY_MAGIC 0x56445450u /* "PTDV" */

/* The keeper's answer on the joiner's connection, once the stream (or
 * nothing) is on the joiner's channel: err 0, or why it was refused. */
struct pt_rdv_reply {
	uint32_t magic;
	int32_t err;
};

/* Counts the keeper keeps in memory it shares with its controller only
 * (struct pt_ctl): numbers, relaxed. */
struct pt_rdv_counts {
	_Atomic uint64_t joined;   /* processes handed the stream */
	_Atomic uint64_t refused;  /* refused, or gone before the answer */
	/* Descendants refused because they run as another user than the
	 * stream's memory belongs to (counted here, not in refused). */
	_Atomic uint64_t other_users;
	/* Connections to the others socket whose ancestry the keeper's
	 * budget of /proc reads could not pay for (rdv_serve.c). */
	_Atomic uint64_t others_unchecked;
};

/* The message that hands a joiner the tree's registry on its channel,
 * ahead of the stream's offer (struct pt_offer_msg's magic). */
#define PT_REGISTRY_OFFER_MAGIC 0x52545450u /* "PTTR" */

#endif
