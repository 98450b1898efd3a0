/* SPDX-License-Identifier: MIT */
/*
 * The writer's table of the files a log has described (logwimages.c): the
 * images of a process whose files the log already holds are written as an
 * IMAGES_COMPACT SET entry, a file id and a load bias each, instead of a
 * copy of every path and build id (docs/LOG-FORMAT.md).  Used by
 * logwrite.c only.
 */
#ifndef PT_LOGWIMAGES_H
#define PT_LOGWIMAGES_H

#include <stdint.h>
#include "logwstate.h"

/* Files one log's table describes, and bytes of their paths: past either,
 * images of new files go as IMAGES_SHARED entries (full records). */
#define PT_LOGW_TABLE_FILES 4096u
#define PT_LOGW_TABLE_PATHS (256u << 10)

/* Image e (path: e->path_len bytes), described in memory of user uid,
 * gathered into the IMAGES_COMPACT payload: 0; PT_LOGWI_TABLE_FULL when its
 * file is new and the table has no room (the caller writes it in full);
 * ENOMEM. */
#define PT_LOGWI_TABLE_FULL 1
PT_LOG_HIDDEN int pt_logwi_image(struct pt_logw *w, const struct pt_log_image *e,
                                 const char *path, uint32_t uid);

/* A ring log: describes again each file that blocks still in the ring
 * refer to and whose newest description is in the older half of the ring,
 * so that a description outlives the blocks that refer to it. */
PT_LOG_HIDDEN void pt_logwi_renew(struct pt_logw *w);

/* The gathered payload as an IMAGES_COMPACT block (as much of it as an
 * UNTIL_FULL log's room takes; files whose description did not fit are
 * described again when next referred to). */
PT_LOG_HIDDEN void pt_logwi_flush(struct pt_logw *w);

/* Every file counts as not described (what was gathered is dropped): after
 * a clear, or for a log file that must read alone. */
PT_LOG_HIDDEN void pt_logwi_forget(struct pt_logw *w);

PT_LOG_HIDDEN void pt_logwi_free(struct pt_logw *w);

#endif
