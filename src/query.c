/* SPDX-License-Identifier: MIT */
/*
 * What both an active and a pre-recorded stream answer: attributes, status,
 * event names and the event type list.  What an active stream's mapping
 * says is normalised: a traced process can write it.
 */
#include <errno.h>
#include <string.h>
#include "handle.h"
#include "logfile.h"
#include "registry.h"
#include "stream.h"

static void active_status(struct pt_handle *h, struct posix_trace_status_info *st)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	/* The state's value only (full is a number): relaxed would do. */
	uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
	st->posix_stream_status = state == PT_ST_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
	st->posix_stream_full_status =
	    (state == PT_ST_FULL || atomic_load_explicit(&hdr->full, memory_order_relaxed))
	        ? POSIX_TRACE_FULL
	        : POSIX_TRACE_NOT_FULL;
	uint64_t lost = pt_handle_lost(h);
	st->posixtrace_lost_events = lost >= h->lost_seen ? lost - h->lost_seen : 0;
	h->lost_seen = lost;
	/* Control events lost count too (the writers' losses set overrun). */
	st->posix_stream_overrun_status =
	    atomic_exchange_explicit(&hdr->overrun, 0, memory_order_relaxed) ||
	            st->posixtrace_lost_events
	        ? POSIX_TRACE_OVERRUN
	        : POSIX_TRACE_NO_OVERRUN;
	st->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
	st->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
	st->posix_log_full_status = POSIX_TRACE_NOT_FULL;
	if (!h->has_log)
		return;
	struct pt_ctl *c = h->src.ctl;
	/* flush_req is a number (relaxed would do); flush_done pairs with its release
	 * store in flush (keeper.c): the flush error and log status are as new. */
	uint32_t req = atomic_load_explicit(&c->flush_req, memory_order_acquire);
	uint32_t done = atomic_load_explicit(&c->flush_done, memory_order_acquire);
	/* A full FLUSH stream has asked its keeper for the flush that restarts
	 * it (writer.c, next_chunk): flushing from then on. */
	int asked = h->src.map.policy == POSIX_TRACE_FLUSH && state == PT_ST_FULL;
	st->posix_stream_flush_status =
	    req != done || asked ? POSIX_TRACE_FLUSHING : POSIX_TRACE_NOT_FLUSHING;
	st->posix_stream_flush_error = (int)atomic_exchange_explicit(&c->flush_error, 0,
	                                                             memory_order_relaxed);
	st->posix_log_overrun_status = atomic_exchange_explicit(&c->log_overrun, 0, memory_order_relaxed)
	                                   ? POSIX_TRACE_OVERRUN
	                                   : POSIX_TRACE_NO_OVERRUN;
	st->posix_log_full_status = atomic_load_explicit(&c->log_full, memory_order_relaxed)
	                                ? POSIX_TRACE_FULL
	                                : POSIX_TRACE_NOT_FULL;
}

int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *st)
{
	if (!st)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	memset(st, 0, sizeof *st);
	if (h->kind == PT_H_LOG)
		pt_logfile_status(h, st);
	else
		active_status(h, st);
	pt_handle_put(h);
	return 0;
}

int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr)
{
	if (!attr)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	if (h->kind == PT_H_LOG) {
		pt_logfile_attr(h, attr);
	} else {
		memset(attr, 0, sizeof *attr);
		memcpy(attr, &h->attr, sizeof h->attr);
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t id, char *name)
{
	if (!name)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	int err = h->kind == PT_H_LOG ? pt_logfile_name(h, id, name)
	                              : pt_stream_get_name(&h->src.map, id, name);
	/* A name the target registered that has not reached the stream yet. */
	if (err && h->kind == PT_H_ACTIVE && h->remote && h->target.reg &&
	    pt_reg_name(h->target.reg, id, name) == 0) {
		pt_stream_set_name(&h->src.map, id, name);
		err = 0;
	}
	pt_handle_put(h);
	return err;
}

int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t a, trace_event_id_t b)
{
	(void)trid;
	return a == b;
}

int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *restrict id,
                                         int *restrict unavailable)
{
	if (!id || !unavailable)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	*unavailable = 1;
	if (h->kind == PT_H_LOG) {
		*unavailable = !pt_logfile_typelist(h, id);
	} else {
		trace_event_id_t cand = pt_typelist_id(h->typelist_pos);
		struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
		/* Names are registered in id order: the first unknown id ends
		 * the list for now, and a name registered later comes next.
		 * Pairs with the release store of name_valid in
		 * pt_stream_set_name (stream.c); only the flag is used. */
		if (cand < PT_NEVENT_IDS &&
		    (cand <= PT_USER_FIRST ||
		     atomic_load_explicit(&hdr->name_valid[cand - PT_USER_FIRST], memory_order_acquire))) {
			h->typelist_pos++;
			*id = cand;
			*unavailable = 0;
		}
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_eventtypelist_rewind(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	h->typelist_pos = 0;
	pt_handle_put(h);
	return 0;
}

int posixtrace_block_info(trace_id_t trid, struct posixtrace_block_stats *info)
{
	if (!info)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	memset(info, 0, sizeof *info);
	if (h->kind == PT_H_LOG) {
		pt_logfile_block_info(h, info);
		pt_handle_put(h);
		return 0;
	}
	struct pt_stream_hdr *hdr = pt_hdr(&h->src.map);
	/* Counts only: relaxed.  The target writes them: they are what it says. */
	info->posixtrace_waited_events = atomic_load_explicit(&hdr->waited_events, memory_order_relaxed);
	info->posixtrace_waited_ns = atomic_load_explicit(&hdr->waited_ns, memory_order_relaxed);
	info->posixtrace_waited_lost = atomic_load_explicit(&hdr->waited_lost, memory_order_relaxed);
	pt_handle_put(h);
	return 0;
}
