/* SPDX-License-Identifier: MIT */
/*
 * The keeper: a process forked from the controller at creation of a
 * stream that has a log, traces another process, or is traced with
 * inheritance.  It writes the log, and it ends the stream when the
 * controller goes away by any means (exit, exec, SIGKILL).  keeper.c runs
 * in the keeper (this header: the commands it takes and its life);
 * keepctl.c (keepctl.h), the controller's side, in the controller.
 */
#ifndef PT_KEEPER_H
#define PT_KEEPER_H

#include "handle.h"

enum { PT_CMD_FLUSH = 1, PT_CMD_CLEAR = 2, PT_CMD_FINISH = 3 };

/* One command on the keeper's socket (SOCK_SEQPACKET: one message each),
 * with the caller whose call it carries out (FLUSH_START/STOP name it). */
struct pt_cmd_msg {
	uint32_t cmd;
	uint32_t reserved;
	struct pt_caller who;
};

/* In the forked child: the keeper's life, on the handle the fork copied,
 * with its end of the command socket.  Never returns. */
__attribute__((noreturn)) void pt_keeper_main(struct pt_handle *h, int sock, pid_t controller);

/* The output-queue budget of the controller's keepers (logio.h; kept
 * by keepctl.c), as a keeper finds it after the fork; NULL when there is
 * none. */
struct pt_queue_budget *pt_keeper_queue_budget(void);

/* The parameters of a log of the stream (each file of a rotated log). */
void pt_keeper_log_params(struct pt_logw_params *p, const struct pt_handle *h);

#endif
