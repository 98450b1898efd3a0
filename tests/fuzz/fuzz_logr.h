/* SPDX-License-Identifier: MIT */
/*
 * Shared by the libFuzzer targets over the log reader alone (fuzz_logread,
 * fuzz_logcraft): every event of a log read through src/log/logread.c, checked
 * and digested.
 */
#ifndef PT_FUZZ_LOGR_H
#define PT_FUZZ_LOGR_H

#include <stdlib.h>
#include "../../src/log/logread.h"
#include "fuzz_common.h"

/* Reads to the end: what was read. */
static inline struct fuzz_digest fuzz_logr_read_all(struct pt_logr *r)
{
	struct pt_log_event ev;
	unsigned char data[300];
	size_t len;
	struct fuzz_digest d = {0, 0};
	while (fuzz_digest_more(&d) && pt_logr_next(r, &ev, data, sizeof data, &len) == 1) {
		if (len > sizeof data || len > ev.data_len || ev.id >= PT_LOG_NIDS ||
		    ev.ctx.comm[sizeof ev.ctx.comm - 1] != '\0')
			abort();
		fuzz_digest_add(&d, ev.id + ev.ts_ns + ev.data_len + (uint64_t)ev.ctx.pid, data, len);
		/* The image of every event: found in bounds, its path terminated
		 * within what a log may hold. */
		struct posixtrace_image img;
		if (pt_logr_image(r, ev.ctx.pid, ev.pc, ev.ts_ns, &img) == 0 &&
		    (img.posixtrace_start > ev.pc || ev.pc >= img.posixtrace_end ||
		     img.posixtrace_build_id_size > sizeof img.posixtrace_build_id ||
		     !memchr(img.posixtrace_path, '\0', PT_LOG_IMAGE_PATH_MAX + 1)))
			abort();
	}
	fuzz_digest_end(&d);
	return d;
}

#endif
