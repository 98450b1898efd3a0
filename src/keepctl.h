/* SPDX-License-Identifier: MIT */
/*
 * The controller's side of its keeper (keepctl.c, run in the controller):
 * starting it, its commands, the end of the stream, and the wait at exit
 * for keepers still draining.
 */
#ifndef PT_KEEPCTL_H
#define PT_KEEPCTL_H

#include "keeper.h"

/* Writes the log's header and names (a new log), then forks the keeper. */
int pt_keeper_start(struct pt_handle *h, int logfd);
/* A command, carried out (flush: started) when it returns.  EIO when the
 * keeper had died: a new one continues, after a POSIX_TRACE_ERROR. */
int pt_keeper_command(struct pt_handle *h, uint32_t cmd, const struct pt_caller *who);
/* posix_trace_shutdown: the keeper finishes the log and exits; its first
 * error. */
int pt_keeper_finish(struct pt_handle *h, const struct pt_caller *who);

#endif
