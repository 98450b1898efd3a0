/* SPDX-License-Identifier: MIT */
/*
 * The images of a log's IMAGES and IMAGES_SHARED blocks (logfmt.h), kept
 * by its reader to answer posixtrace_event_image: which image held an
 * event's address.  Every entry is untrusted: it is checked when read, its
 * path is only a claim, and a lookup costs a binary search whatever the
 * log holds.  Files (build id and path) are kept once, however many
 * images of however many processes name them; each process may keep a
 * bounded share of the table, so that one that describes images without
 * end leaves the table to the others.
 */
#ifndef PT_LOGIMAGES_H
#define PT_LOGIMAGES_H

#include <posixtrace.h>
#include <stdint.h>
#include "logfmt.h"

struct pt_log_images {
	struct pt_logi_map *e;          /* images, n of them */
	struct pt_logi_set *sets;
	struct pt_logi_file *files;     /* distinct files, nfiles of them */
	char *paths;                    /* their paths, npaths bytes */
	uint32_t *file_slots;           /* file index + 1 by hash, 0 free */
	struct pt_logi_proc *procs;     /* per process: what it holds */
	uint64_t seed;                  /* of the hashes: no log chooses collisions */
	uint64_t dropped;               /* images not kept: past a bound */
	/* IMAGES_COMPACT: file descriptions by (table, id), and the images
	 * that name them, resolved at the first lookup (a ring may describe
	 * a file again after the images that name it). */
	struct pt_logi_def *defs;
	uint32_t *def_slots;            /* def index + 1 by hash, 0 free */
	struct pt_logi_pend *pend;
	uint64_t conflicts;             /* ids described twice, differently */
	uint32_t ndefs, defs_cap, def_slots_n, npend, pend_cap;
	uint32_t n, cap, nsets, nfiles, files_cap, file_slots_n, nprocs, procs_n;
	size_t npaths, paths_cap;
	int indexed;                    /* sets built for the images there are */
};

/* At most this many images are kept, at most PT_LOGI_PER_PROCESS of one
 * process, and at most PT_LOGI_PATHS bytes of distinct paths, at most
 * PT_LOGI_PATHS_PER_PROCESS of them first named by one process.  What a
 * process describes past its bounds, or anyone past the table's, is
 * dropped and counted. */
#define PT_LOGI_MAX (1u << 18)
#define PT_LOGI_PER_PROCESS (1u << 12)
#define PT_LOGI_PATHS (16u << 20)
#define PT_LOGI_PATHS_PER_PROCESS (256u << 10)
/* File descriptions (IMAGES_COMPACT) kept, at most: the rest are dropped,
 * and the images naming them with them. */
#define PT_LOGI_DEFS (1u << 16)

/* The entries of one IMAGES (type PT_LOG_IMAGES), IMAGES_SHARED or
 * IMAGES_COMPACT payload. */
PT_LOG_HIDDEN void pt_logi_block(struct pt_log_images *t, uint32_t type, const unsigned char *p,
                                 uint32_t len);

/* The image of process pid that held addr at time ns (the rule of
 * posixtrace_event_image).  0, ENOENT, or ENOMEM. */
PT_LOG_HIDDEN int pt_logi_find(struct pt_log_images *t, int32_t pid, uint64_t addr, uint64_t ns,
                               struct posixtrace_image *out);

/* Images the log holds that lookups use, and those it describes that are
 * not kept (past a bound, or naming a file no valid description gives). */
PT_LOG_HIDDEN uint64_t pt_logi_count(const struct pt_log_images *t);
PT_LOG_HIDDEN uint64_t pt_logi_dropped(const struct pt_log_images *t);

PT_LOG_HIDDEN void pt_logi_free(struct pt_log_images *t);

#endif
