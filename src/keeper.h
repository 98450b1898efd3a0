/* SPDX-License-Identifier: MIT */
/*
 * The keeper: a process forked from the controller at creation of a
 * stream that has a log, traces another process, or is traced with
 * inheritance.  It writes the log, and it ends the stream when the
 * controller goes away by any means (exit, exec, SIGKILL).  keeper.c runs
 * in the keeper; keepctl.c, the controller's side, in the controller.
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

/* Writes the log's header and names (a new log), then forks the keeper. */
int pt_keeper_start(struct pt_handle *h, int logfd);
/* A command, carried out (flush: started) when it returns.  EIO when the
 * keeper had died: a new one continues, after a POSIX_TRACE_ERROR. */
int pt_keeper_command(struct pt_handle *h, uint32_t cmd, const struct pt_caller *who);
/* posix_trace_shutdown: the keeper finishes the log and exits; its first
 * error. */
int pt_keeper_finish(struct pt_handle *h, const struct pt_caller *who);
/* This thread is forking a keeper (fork handlers and exit() in the child
 * know they are in a keeper). */
int pt_forking_keeper(void);

/* In the forked child: the keeper's life, on the handle the fork copied,
 * with its end of the command socket.  Never returns. */
__attribute__((noreturn)) void pt_keeper_main(struct pt_handle *h, int sock, pid_t controller);

#endif
