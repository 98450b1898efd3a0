/* SPDX-License-Identifier: MIT */
/*
 * The trace log reader (format in logfmt.h, docs/LOG-FORMAT.md), used by the
 * pre-recorded streams (posix_trace_open, posix_trace_getnext_event,
 * posix_trace_rewind, posix_trace_close).
 *
 * The file is untrusted: every size is checked before it is used, every
 * block's CRC-32C before its records, every record against its block.  A
 * damaged block yields one POSIX_TRACE_ERROR event (data: int EBADMSG) and
 * reading goes on with the next valid block; a log cut short ends at its last
 * complete block without an error.  Open costs time in proportion to the
 * data actually in the file (holes of a sparse file are skipped) and memory
 * in proportion to the blocks found, never to sizes the header claims.
 *
 * Functions return 0 or an error number unless said otherwise.  One reader
 * is used by one thread at a time.
 */
#ifndef PT_LOGREAD_H
#define PT_LOGREAD_H

#include <stddef.h>
#include <stdint.h>
#include <posixtrace.h>
#include <trace.h>
#include "logfmt.h"

/* An unseekable log (pipe, socket, terminal) is read whole into memory, up
 * to this many bytes; a longer one gives ENOMEM. */
#define PT_LOGR_MAX_UNSEEKABLE (1ull << 30)

struct pt_logr;

/* Opens the log fd designates (read from offset 0 when seekable, else from
 * where the fd stands, to its end).  EINVAL: not a log of this format and
 * byte order; ENOMEM.  *out is left alone on failure. */
PT_LOG_HIDDEN int pt_logr_open(int fd, struct pt_logr **out);

/* The next event in log order: returns 1 and fills *ev, copies
 * min(num_bytes, ev->data_len) bytes of data and stores that count in
 * *data_len; returns 0 at the end of the log.  A damaged block gives one
 * event POSIX_TRACE_ERROR (pid 0, data int EBADMSG, the time of the last
 * good event). */
PT_LOG_HIDDEN int pt_logr_next(struct pt_logr *r, struct pt_log_event *ev, void *data,
                               size_t num_bytes, size_t *data_len);

/* pt_logr_next for posix_trace_getnext_event: the event into *info; its
 * writer's context is kept for pt_logr_event_ext.  *unavailable is set as
 * posix_trace_getnext_event's (0: an event, 1: the end), so that its caller
 * has nothing left to do but leave the handle. */
PT_LOG_HIDDEN int pt_logr_next_posix(struct pt_logr *r, struct posix_trace_event_info *info,
                                     void *data, size_t num_bytes, size_t *data_len,
                                     int *unavailable);
/* pt_logr_next_posix for up to max events, their data one after the
 * other in buf while num_bytes of it remain, each with its thread id and
 * CPU (posixtrace_getnext_events); how many. */
PT_LOG_HIDDEN size_t pt_logr_next_batch(struct pt_logr *r, struct posixtrace_batch_event *evs,
                                        size_t max, unsigned char *buf, size_t bufsize,
                                        size_t num_bytes);
/* The extension of the event pt_logr_next_posix gave last: its kernel
 * thread id, thread name and CPU, and the writer's own ids from the PIDS
 * table (docs/LOG-FORMAT.md), zeros for a writer it does not name.  Built
 * when it is asked for, so that reading events costs nothing more.
 * EINVAL when no event was given since the log was opened. */
PT_LOG_HIDDEN int pt_logr_event_ext(struct pt_logr *r, struct posixtrace_event_ext *ext);

/* Back to the first event. */
PT_LOG_HIDDEN void pt_logr_rewind(struct pt_logr *r);

PT_LOG_HIDDEN void pt_logr_close(struct pt_logr *r);

/* The name of user event id (33 to 1023) into out (PT_LOG_NAME_SIZE bytes).
 * EINVAL when the log names no such id; system ids and the unnamed event
 * (32) are the caller's. */
PT_LOG_HIDDEN int pt_logr_name(const struct pt_logr *r, trace_event_id_t id, char *out);


/* The stream's attributes as the log recorded them. */
PT_LOG_HIDDEN void pt_logr_params(const struct pt_logr *r, struct pt_logw_params *p);

/* The status as of the log's last update: the END block of a closed linear
 * log, else the header. */
PT_LOG_HIDDEN void pt_logr_status(const struct pt_logr *r, struct pt_log_status *s);
/* What the writers waited for room, from the same place as the status
 * (0 in logs written before it was kept). */
PT_LOG_HIDDEN void pt_logr_waits(const struct pt_logr *r, struct pt_log_waits *w);


/* For posixtrace_log_info(): the format version; whether the log is closed
 * (ends with its END block, or a ring log finished by its writer and
 * complete); damaged blocks reported so far (the most over the passes since
 * open).  Any pointer may be NULL. */
PT_LOG_HIDDEN void pt_logr_info(const struct pt_logr *r, uint32_t *version, int *closed,
                                uint64_t *damaged_blocks);

/* Version 5: the host record and the header's create_mono; ENOENT for
 * an older log, which names no host. */
PT_LOG_HIDDEN int pt_logr_host(const struct pt_logr *r, struct pt_log_host *host,
                               uint64_t *create_mono);

/* The IMAGES entries the reader keeps. */
PT_LOG_HIDDEN uint64_t pt_logr_images(const struct pt_logr *r);
/* Images the reader did not keep: past a process's bound or the table's
 * (logimages.h). */
PT_LOG_HIDDEN uint64_t pt_logr_images_dropped(const struct pt_logr *r);

/* The image of process pid that held addr at time ns, from the log's
 * IMAGES blocks (posixtrace_event_image).  0, ENOENT or ENOMEM. */
PT_LOG_HIDDEN int pt_logr_image(struct pt_logr *r, int32_t pid, uint64_t addr, uint64_t ns,
                                struct posixtrace_image *out);

/* For tests: a drain of a version 3 log is cut when its memory would pass
 * bytes (at most the reader's own bound, 256 MiB); the reader holds two
 * drains (or parts of one) at a time. */
PT_LOG_HIDDEN void pt_logr_drain_cap(struct pt_logr *r, uint64_t bytes);

#endif
