/* SPDX-License-Identifier: MIT */
/*
 * The images of a log's IMAGES blocks (logfmt.h), kept by its reader to
 * answer posixtrace_event_image: which image held an event's address.
 * Every entry is untrusted: it is checked when read, its path is only a
 * claim, and a lookup costs a binary search whatever the log holds.
 */
#ifndef PT_LOGIMAGES_H
#define PT_LOGIMAGES_H

#include <posixtrace.h>
#include <stdint.h>
#include "logfmt.h"

struct pt_log_images {
	struct pt_logi_entry *e;
	struct pt_logi_set *sets;
	uint32_t n, cap, nsets;
	int indexed;       /* sets built for the entries there are */
};

/* At most this many entries are kept. */
#define PT_LOGI_MAX (1u << 17)

/* The entries of one IMAGES payload. */
PT_LOG_HIDDEN void pt_logi_block(struct pt_log_images *t, const unsigned char *p, uint32_t len);

/* The image of process pid that held addr at time ns (the rule of
 * posixtrace_event_image).  0, ENOENT, or ENOMEM. */
PT_LOG_HIDDEN int pt_logi_find(struct pt_log_images *t, int32_t pid, uint64_t addr, uint64_t ns,
                               struct posixtrace_image *out);

PT_LOG_HIDDEN void pt_logi_free(struct pt_log_images *t);

#endif
