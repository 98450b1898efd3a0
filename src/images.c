/* SPDX-License-Identifier: MIT */
/*
 * Images (<posixtrace.h>): what turns an event's posix_prog_address into
 * a function and a line later.  A stream asked to (posixtrace_set_images)
 * gets, from each process recording into it, the set of executable images
 * the process has mapped (imageset.c, called by writer.c); its keeper
 * writes them into the log (keeper.c), whose reader (logimages.c) answers
 * posixtrace_event_image.
 */
#include <errno.h>
#include <string.h>
#include "handle.h"
#include "logfile.h"
#include "stream.h"

int posixtrace_set_images(trace_id_t trid, int on)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	/* A setting only: relaxed.  Writers read it when they start a chunk. */
	atomic_store_explicit(&pt_hdr(&h->src.map)->images, on != 0, memory_order_relaxed);
	pt_handle_put(h);
	return 0;
}

int posixtrace_event_image(trace_id_t trid, const struct posix_trace_event_info *ev,
                           struct posixtrace_image *image)
{
	if (!ev || !image || ev->posix_timestamp.tv_sec < 0 || ev->posix_timestamp.tv_nsec < 0)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	int err = pt_logfile_image(h, ev, image);
	pt_handle_put(h);
	return err;
}

