/* SPDX-License-Identifier: MIT */
/*
 * Pre-recorded streams (logfile.c): posix_trace_open(), posix_trace_rewind(),
 * posix_trace_close(), and what the other functions ask of a log, on top of
 * the log reader (logread.h).
 */
#ifndef PT_LOGFILE_H
#define PT_LOGFILE_H

#include "handle.h"
#include "log/log.h"

struct pt_logfile {
	struct pt_logr *r;
};

/* The next event of the log, as posix_trace_getnext_event gives it, and
 * *unavailable (1 at the end).  Inline: it is the whole of a read but for
 * the handle.  The reader keeps what posixtrace_event_ext needs
 * (h->has_ext is a stream's). */
static inline void pt_logfile_next(struct pt_handle *h, struct posix_trace_event_info *ev,
                                   void *data, size_t num_bytes, size_t *data_len,
                                   int *unavailable)
{
	pt_logr_next_posix(h->log->r, ev, data, num_bytes, data_len, unavailable);
}

int pt_logfile_name(struct pt_handle *h, trace_event_id_t id, char *out);
int pt_logfile_typelist(struct pt_handle *h, trace_event_id_t *id);
void pt_logfile_attr(struct pt_handle *h, trace_attr_t *attr);
void pt_logfile_status(struct pt_handle *h, struct posix_trace_status_info *st);
/* posixtrace_block_info of a pre-recorded stream: the log's counts, from
 * the place its status comes from (0 in logs written before them). */
void pt_logfile_block_info(struct pt_handle *h, struct posixtrace_block_stats *info);
void pt_logfile_info(struct pt_handle *h, struct posixtrace_log_info *info);
/* posixtrace_log_host: 0 or ENOENT (a log before version 5) */
int pt_logfile_host(struct pt_handle *h, struct posixtrace_host *host);
/* posixtrace_host_self */
void pt_host_self(struct posixtrace_host *host);
/* posixtrace_event_image on a log's stream. */
int pt_logfile_image(struct pt_handle *h, const struct posix_trace_event_info *ev,
                     struct posixtrace_image *image);

#endif
