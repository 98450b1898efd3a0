/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer (format in logfmt.h, docs/LOG-FORMAT.md), used by the
 * keeper process that drains a stream into its log.
 *
 * The keeper can be killed at any moment and a new one may continue the same
 * log.  Everything needed to continue is in struct pt_logw_state: a plain
 * struct without pointers that the caller keeps in memory shared with the
 * controller.  It is updated only after the bytes it describes are written,
 * and it changes by publishing a complete new copy (two copies and a
 * generation count), so what a new keeper finds is always consistent.
 * Buffers live in struct pt_logw, private to the keeper, which also runs a
 * thread (signals blocked) that writes full buffers and the ends of
 * automatic drains, in order, while the next buffer fills; if the thread
 * cannot be started, writes are made in line.
 *
 * Functions return 0 or an error number.  Errors of write/pwrite are kept
 * (the first one) in the state and returned by pt_logw_sync/finish.  A
 * writer on a pipe or socket should ignore SIGPIPE (then EPIPE is kept).
 * One thread calls the functions of one writer.
 */
#ifndef PT_LOGWRITE_H
#define PT_LOGWRITE_H

#include <stdint.h>
#include <trace.h>
#include "logwstate.h"

/*
 * Begins a log on fd: a regular file takes any log policy (truncated, written
 * with pwrite from offset 0, O_APPEND cleared); a FIFO, socket or character
 * device only POSIX_TRACE_APPEND (EINVAL otherwise, and for other file
 * types); EBADF if fd is not open for writing; EINVAL for parameters out of
 * range.  Writes the header and the (empty) name table at once, so ENOSPC
 * or EFBIG show here.  ENOMEM for the buffers.
 */
PT_LOG_HIDDEN int pt_logw_begin(struct pt_logw *w, struct pt_logw_state *st, int fd,
                                const struct pt_logw_params *p);

/* A new keeper continues the log st describes on fd (the same file).
 * EINVAL if st is not a begun, unfinished log; EBADF as above. */
PT_LOG_HIDDEN int pt_logw_resume(struct pt_logw *w, struct pt_logw_state *st, int fd);

/* Writers of other pid namespaces, translated: a PIDS block of the
 * entries (version 3), which a reader uses to give their own ids back.
 * Entries that find no room in an UNTIL_FULL log are left out (the events
 * still carry the translated ids).  EINVAL for a finished log. */
PT_LOG_HIDDEN int pt_logw_pids(struct pt_logw *w, const struct pt_log_pid_entry *e, uint32_t n);
/* One image a traced process described, with e->path_len bytes of path,
 * described in memory of user uid (PT_LOG_UID_UNKNOWN): gathered with the
 * others until pt_logw_images_done (or a sync, a hand, the end), then
 * written as an IMAGES_COMPACT block (logfmt.h, logwimages.h): its file's
 * id, described once per log, and its load bias; an image of a new file
 * when the writer's table of files is full goes whole into an
 * IMAGES_SHARED block, in which images of one file share its description.
 * pt_logw_images_done also describes again, in a ring, the files whose
 * description the ring is about to overwrite.  0, EINVAL, or ENOMEM. */
PT_LOG_HIDDEN int pt_logw_image(struct pt_logw *w, const struct pt_log_image *e, const char *path,
                                uint32_t uid);
PT_LOG_HIDDEN void pt_logw_images_done(struct pt_logw *w);

/* Names of user event ids first_id .. first_id + count - 1 become known:
 * written in place in the name table of a seekable log, else as a NAMES
 * block before the next event.  Names already in the log are skipped, so a
 * resumed keeper may give every name again.  Id 32 (the unnamed event) is
 * ignored.  EINVAL for ids out of range. */
PT_LOG_HIDDEN int pt_logw_names(struct pt_logw *w, uint32_t first_id, uint32_t count,
                                const char (*names)[PT_LOG_NAME_SIZE]);

/* Closes the block being filled, writes everything buffered and, for a
 * seekable log, rewrites the header with status s (NULL: the last one).
 * Returns the first error of the log. */
PT_LOG_HIDDEN int pt_logw_sync(struct pt_logw *w, const struct pt_logw_status *s);

/* The end of an automatic drain: closes the block being filled and hands
 * everything buffered to the writing thread, with status s for the header
 * rewritten after it (NULL: the last one); it waits only when the queue
 * holds max_bufs buffers.  Without the thread, pt_logw_sync.  Returns the
 * first error of the log known so far. */
PT_LOG_HIDDEN int pt_logw_hand(struct pt_logw *w, const struct pt_logw_status *s);

/* posix_trace_clear: a seekable log loses its events (back to the header
 * and name table, sequence numbers from 0, log full/overrun reset); an
 * unseekable one keeps what was written.  Events not yet written are
 * dropped either way. */
PT_LOG_HIDDEN int pt_logw_clear(struct pt_logw *w);

/* The end: an END block with status s (linear), the CLOSED flag in the
 * header (seekable), a linear seekable log truncated to its end, fdatasync.
 * Returns the first error of the log. */
PT_LOG_HIDDEN int pt_logw_finish(struct pt_logw *w, const struct pt_logw_status *s);

/* Frees the buffers (not the state, not the fd). */
PT_LOG_HIDDEN void pt_logw_free(struct pt_logw *w);

#endif
