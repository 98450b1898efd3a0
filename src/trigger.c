/* SPDX-License-Identifier: MIT */
/*
 * Triggers (<posixtrace.h>): events of the types in a stream's trigger set
 * make its keeper write what the stream holds into its log, as
 * posix_trace_flush would.  With a POSIX_TRACE_LOOP stream that is a flight
 * recorder's snapshot: nothing is written until something goes wrong, then
 * the newest events are.  The writer notices a trigger through the word it
 * tests anyway (the header's watch, filter | trigger: layout.h) and wakes
 * the keeper as a FLUSH stream's writer does (writer.c, keeper.c).
 */
#include <errno.h>
#include <string.h>
#include "handle.h"
#include "stream.h"

int posixtrace_set_trigger(trace_id_t trid, const trace_event_set_t *set)
{
	if (!set)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	int err = h->has_log ? 0 : EINVAL;
	_Static_assert(PT_USER_FIRST < 64, "the system events are in the first word");
	for (unsigned i = 0; !err && i < PT_NEVENT_IDS / 64; i++) {
		/* User event types only: system events are the library's. */
		uint64_t w = i ? set->__bits[i] : set->__bits[i] & ~0ull << PT_USER_FIRST;
		atomic_store_explicit(&h->src.ctl->trigger[i], w, memory_order_relaxed);
		pt_watch_store(pt_hdr(&h->src.map), i,
		               atomic_load_explicit(&h->src.ctl->filter[i], memory_order_relaxed), w);
	}
	pt_handle_put(h);
	return err;
}

int posixtrace_get_trigger(trace_id_t trid, trace_event_set_t *set, uint64_t *snapshots)
{
	if (!set)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	memset(set, 0, sizeof *set);
	/* Numbers only: relaxed. */
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		set->__bits[i] = atomic_load_explicit(&h->src.ctl->trigger[i], memory_order_relaxed);
	if (snapshots)
		*snapshots = atomic_load_explicit(&h->src.ctl->trigger_snapshots, memory_order_relaxed);
	pt_handle_put(h);
	return 0;
}
