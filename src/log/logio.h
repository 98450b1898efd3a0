/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer's output and published progress (logio.c), used by
 * the rest of the writer (logwrite.c, logblock.c), and the copy of that
 * progress a controller reads (pt_logw_read_progress).  One thread of the
 * keeper calls them, besides the writing thread they start.
 */
#ifndef PT_LOGIO_H
#define PT_LOGIO_H

#include <stdatomic.h>
#include <sys/types.h>
#include "logwstate.h"

/* Writes all of buf at off (seekable) or in order; 0 or an errno. */
PT_LOG_HIDDEN int pt_logio_write_all(int fd, int seekable, const void *buf, size_t len,
                                     uint64_t off);
/* A call that may block on the log's destination begins (1) or ends (0):
 * the controller does not count that time against the keeper. */
PT_LOG_HIDDEN void pt_logio_destination_wait(struct pt_logw_state *st, int begin);
/* Keeps err if it is the log's first. */
PT_LOG_HIDDEN void pt_logio_keep_error(struct pt_logw *w, int err);
/* Publishes w->done to the controller (pairs with pt_logw_read_progress). */
PT_LOG_HIDDEN void pt_logio_commit(struct pt_logw *w);
/* The buffer restarts after what prog counts as written. */
PT_LOG_HIDDEN void pt_logio_emptied(struct pt_logw *w);
/* The header of a seekable log as d describes it, and its rewrite in
 * place (0 or an errno). */
PT_LOG_HIDDEN void pt_logio_header_image(const struct pt_logw *w,
                                         const struct pt_logw_progress *d,
                                         struct pt_log_header *h);
PT_LOG_HIDDEN int pt_logio_header_rewrite(const struct pt_logw *w,
                                          const struct pt_logw_progress *d);
/* Writes the buffer's sealed blocks now, after everything the thread was
 * given. */
PT_LOG_HIDDEN void pt_logio_flush(struct pt_logw *w);
/* Hands the buffer's sealed blocks to the thread (it must be running),
 * the header rewritten after them; the buffer goes on filling. */
PT_LOG_HIDDEN void pt_logio_hand(struct pt_logw *w);
/* The buffer cannot take another block: the thread writes it while the
 * next one fills (waiting only when the queue holds its bound). */
PT_LOG_HIDDEN void pt_logio_flush_full(struct pt_logw *w);
/* Waits until the thread has written everything it was given. */
PT_LOG_HIDDEN void pt_logio_wait(struct pt_logw *w);
/* The thread and its queue; without them every write is made in line. */
PT_LOG_HIDDEN void pt_logio_start(struct pt_logw *w);
/* After everything given is written; frees the queue's buffers. */
PT_LOG_HIDDEN void pt_logio_stop(struct pt_logw *w);

/* The output queues of one controller's keepers together hold at most
 * PT_QUEUE_BUDGET bytes of buffers (docs/SECURITY.md), each at least its
 * first two whatever the others hold.  The count lives in memory that
 * the controller maps shared and anonymous before it forks its keepers
 * (keepctl.c): no name, no descriptor, nothing another process can open;
 * each keeper writes only its own slot, and the controller frees the slot
 * of a keeper it reaped, whatever killed it. */
#define PT_QUEUE_BUDGET (256ull << 20)
#define PT_QUEUE_KEEPERS 64
struct pt_queue_budget {
	_Atomic int32_t owner[PT_QUEUE_KEEPERS]; /* a keeper's pid; 0: free */
	_Atomic uint64_t held[PT_QUEUE_KEEPERS]; /* the bytes of its buffers */
};
/* In the keeper: its queue counts against b from now on (NULL: no
 * budget but its own bound).  0, or EAGAIN when every slot is taken (then
 * the queue keeps to its first two buffers). */
PT_LOG_HIDDEN int pt_logio_share_budget(struct pt_logw *w, struct pt_queue_budget *b);
/* In the controller: the slot of a keeper that ended is free again. */
PT_LOG_HIDDEN void pt_queue_budget_release(struct pt_queue_budget *b, pid_t keeper);

/* A consistent copy of the current progress while a writer may be running
 * in another process (the controller asking for log_full or the first
 * error): copied again if the writer published twice meanwhile. */
PT_LOG_HIDDEN void pt_logw_read_progress(const struct pt_logw_state *st,
                                         struct pt_logw_progress *out);

#endif
