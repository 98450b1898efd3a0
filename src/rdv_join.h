/* SPDX-License-Identifier: MIT */
/*
 * The rendezvous joined (rdv_join.c): at load, a process that lost the
 * descriptors it inherited asks the stream's keeper for the stream
 * (rendezvous.h: what both sides exchange).
 */
#ifndef PT_RDV_JOIN_H
#define PT_RDV_JOIN_H

#include <sys/types.h>
#include "rendezvous.h"

/* At load, pt_proc.lock held, with this process's block and channel made:
 * asks the keeper named in the environment for its stream, when the
 * process joined none. */
void pt_rdv_join_at_load(void);
#endif
