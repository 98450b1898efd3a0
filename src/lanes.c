/* SPDX-License-Identifier: MIT */
/*
 * Lanes: claimed by a thread on its first event into a stream, given back
 * when it exits (its open chunk stays with the lane, for the next owner to
 * continue after an OWNER record), taken back from a process that died
 * without giving them back.  And what happens to chunks when the stream is
 * full: the LOOP policy steals the oldest, every loss is noted for the
 * reader's POSIX_TRACE_OVERFLOW.
 */
#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include "clock.h"
#include "lanes.h"
#include "layout.h"
#include "process.h"
#include "records.h"
#include "recword.h"
#include "stream.h"
#include "tagstack.h"
#include "thread.h"

#define MAX_CHAIN 64 /* links followed to a lane's open chunk */

/* Lanes in use, bounded by what is committed (writers trust the stream's
 * words, within the geometry they keep). */
static uint32_t lanes_known(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	/* nlanes is a count only (relaxed would do); committed_lanes pairs with
	 * the release CAS in pt_stream_commit_lane (stream.c): lanes below it are backed. */
	uint32_t n_untrusted = atomic_load_explicit(&h->nlanes, memory_order_acquire);
	uint32_t committed_untrusted = atomic_load_explicit(&h->committed_lanes, memory_order_acquire);
	return pt_lanes_within(m, n_untrusted < committed_untrusted ? n_untrusted : committed_untrusted);
}

/* The stack of free lanes (tagstack.h), node lane + 1: 0 ends it, and so
 * does a lane not known yet.  What pt_lane_release stored (event_bytes) is
 * seen by the next owner through the stack's release and acquire.  The
 * node popped is one this check passed (pt_tagstack_pop). */
static _Atomic uint32_t *free_lane_link(uint32_t lane1_untrusted, const void *m)
{
	if (lane1_untrusted == 0 || lane1_untrusted > lanes_known(m))
		return NULL;
	return &pt_lane_at(m, lane1_untrusted - 1)->free_next1; /* below lanes_known */
}

static uint32_t pop_free(const struct pt_map *m)
{
	uint32_t lane1;
	return pt_tagstack_pop(&pt_hdr(m)->free_lanes, free_lane_link, m, &lane1) ? lane1 - 1
	                                                                           : PT_NONE;
}

/* The lane is the caller's own (pt_lane_release). */
static void push_free(const struct pt_map *m, uint32_t lane)
{
	pt_tagstack_push(&pt_hdr(m)->free_lanes, &pt_lane_at(m, lane)->free_next1, lane + 1);
}

/* The lane is this process's from now on: its namespace first, then its
 * token, so that whoever sees the token sees the namespace it means
 * something in (pairs with the acquire load of owner in reclaim_dead). */
static void claim_as_owner(struct pt_lane *l)
{
	atomic_store_explicit(&l->owner_ns, pt_proc.pidns, memory_order_relaxed);
	atomic_store_explicit(&l->owner, pt_proc.owner_token, memory_order_release);
}

/* A lane whose owner process is gone (killed, or its other threads ended
 * by exit()), as far as this process can tell: only an owner of its own
 * pid namespace can be told dead (pt_owner_alive). */
static uint32_t reclaim_dead(const struct pt_map *m)
{
	uint32_t n = lanes_known(m);
	uint64_t seen = 0;
	int seen_alive = 1;
	for (uint32_t i = 0; i < n; i++) {
		struct pt_lane *l = pt_lane_at(m, i); /* i < lanes_known */
		/* The owner token's value only (the lane's chunks are reached through
		 * tail1, next and commit, each paired): here and in the CAS below,
		 * relaxed would do. */
		uint64_t tok = atomic_load_explicit(&l->owner, memory_order_acquire);
		if (!tok || tok == pt_proc.owner_token)
			continue;
		/* The owner's namespace, stored before its token (pairs with the
		 * release stores of owner in claim_as_owner). */
		uint64_t ns = atomic_load_explicit(&l->owner_ns, memory_order_relaxed);
		if (tok != seen) {
			seen = tok;
			seen_alive = pt_owner_alive(tok, ns);
		}
		if (!seen_alive &&
		    atomic_compare_exchange_strong_explicit(&l->owner, &tok, pt_proc.owner_token,
		                                            memory_order_acq_rel, memory_order_relaxed)) {
			/* Reclaimed only from this namespace: owner_ns is already ours. */
			return i;
		}
	}
	return PT_NONE;
}

static uint32_t new_lane(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	/* A count only: the page is committed after it, and readers check
	 * (lanes_known; lanes_readable in reader.c); relaxed would do. */
	uint32_t n = atomic_fetch_add_explicit(&h->nlanes, 1, memory_order_acq_rel);
	if (n >= m->max_lanes || pt_stream_commit_lane(m, n) != 0)
		return PT_NONE;
	claim_as_owner(pt_lane_at(m, n)); /* n < max_lanes, checked above */
	return n;
}

/* The lane's open chunk: its tail, or what the tail links to when the
 * owner died between linking a chunk and recording it as the tail. */
static uint32_t open_chunk(const struct pt_map *m, struct pt_lane *l)
{
	/* tail1 pairs with its release store in start_chunk (writer.c);
	 * committed_chunks with the release CAS in pt_stream_grow (stream.c). */
	uint32_t tail1_untrusted = atomic_load_explicit(&l->tail1, memory_order_acquire);
	uint32_t committed_untrusted =
	    atomic_load_explicit(&pt_hdr(m)->committed_chunks, memory_order_acquire);
	if (tail1_untrusted == 0 || tail1_untrusted > committed_untrusted)
		return PT_NONE;
	uint32_t c = tail1_untrusted - 1;
	struct pt_chunk *ch = pt_chunk_get(m, c);
	for (int i = 0; ch && i < MAX_CHAIN; i++) {
		/* Pairs with the release store of next in start_chunk (writer.c). */
		uint32_t next_untrusted = atomic_load_explicit(&ch->next, memory_order_acquire);
		if (next_untrusted == PT_NONE)
			return c;
		if (next_untrusted >= committed_untrusted)
			return PT_NONE;
		c = next_untrusted;
		ch = pt_chunk_get(m, c);
	}
	return PT_NONE;
}

/* Takes over the lane's open chunk: later records follow the last
 * committed one, after an OWNER record. */
static void continue_chunk(struct pt_wlane *w, const struct pt_map *m, struct pt_lane *l,
                           int reclaimed)
{
	uint32_t c = open_chunk(m, l);
	if (c == PT_NONE)
		return;
	struct pt_chunk *ch = pt_chunk_at(m, c); /* open_chunk checked c */
	/* Pairs with the release store of commit in append_record (writer.c). */
	uint64_t commit = atomic_load_explicit(&ch->commit, memory_order_acquire);
	uint32_t off = (uint32_t)commit, bytes;
	if (!pt_chunk_off_ok(m, off))
		return;
	if (reclaimed) {
		/* The dead owner stored no event_bytes: counted again. */
		struct pt_rec_ctx ctx = {.cpu = PT_CPU_NONE};
		struct pt_rec_walk walk;
		pt_rec_walk((const unsigned char *)ch, PT_CHUNK_HDR, off, off, m->max_data, &ctx, &walk);
		if (walk.off != off)
			return;
		bytes = walk.event_bytes;
	} else {
		bytes = atomic_load_explicit(&ch->event_bytes, memory_order_relaxed);
	}
	atomic_store_explicit(&l->tail1, c + 1, memory_order_relaxed);
	if (bytes > off - PT_CHUNK_HDR)
		bytes = off - PT_CHUNK_HDR;
	pt_wlane_continue(w, (unsigned char *)ch, commit, off - PT_CHUNK_HDR - bytes);
}

/* Also from a signal handler that interrupted the same thread (nested):
 * lock-free pops and CASes, system calls, and the state of w alone; the
 * thread's name is refreshed only outside (t->comm is shared by levels). */
int pt_lane_claim(struct pt_thread *t, struct pt_wlane *w, const struct pt_map *m, int nested)
{
	int reclaimed = 0;
	uint32_t lane = pop_free(m);
	if (lane != PT_NONE) {
		claim_as_owner(pt_lane_at(m, lane)); /* checked by free_lane_link */
	} else if ((lane = reclaim_dead(m)) != PT_NONE) {
		reclaimed = 1;
	} else if ((lane = new_lane(m)) == PT_NONE) {
		return ENOMEM;
	}
	pt_wlane_claimed(w, lane);
	if (!nested)
		prctl(PR_GET_NAME, t->comm, 0, 0, 0);
	continue_chunk(w, m, pt_lane_at(m, lane), reclaimed); /* from one of the three */
	return 0;
}

/* The next owner sees event_bytes through push_free's release CAS, which
 * pairs with the acquire load and CAS in pop_free. */
void pt_lane_release(struct pt_wlane *w, const struct pt_map *m)
{
	struct pt_lane *l = pt_lane_at(m, w->lane); /* the caller's own (pt_lane_claim) */
	if (w->chunk)
		atomic_store_explicit(&((struct pt_chunk *)w->chunk)->event_bytes,
		                      pt_wlane_event_bytes(w), memory_order_relaxed);
	/* No acquire load waits for this 0 (push_free publishes the lane):
	 * relaxed would do. */
	atomic_store_explicit(&l->owner, 0, memory_order_release);
	push_free(m, w->lane);
}

void pt_held_sub(struct pt_stream_hdr *h, uint32_t bytes)
{
	uint64_t cur = atomic_load_explicit(&h->held, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(&h->held, &cur, cur > bytes ? cur - bytes : 0,
	                                              memory_order_relaxed, memory_order_relaxed))
		;
}

/* A gap: the reader reports POSIX_TRACE_OVERFLOW at the first lost event's
 * time (XSH 2.11.1, posix_trace_status_info Structure). */
void pt_note_loss(struct pt_stream_hdr *h, uint64_t ts, uint64_t n)
{
	uint64_t cur = atomic_load_explicit(&h->ovf_ts, memory_order_relaxed);
	while (ts < cur && !atomic_compare_exchange_weak_explicit(&h->ovf_ts, &cur, ts,
	                                                          memory_order_relaxed,
	                                                          memory_order_relaxed))
		;
	/* Release: ovf_ts above first; pairs with the acquire load and the
	 * exchange of ovf_count in take_overflow (reader.c). */
	atomic_fetch_add_explicit(&h->ovf_count, n, memory_order_release);
	atomic_store_explicit(&h->overrun, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->lost_total, n, memory_order_relaxed);
	pt_wake_waiting_readers(h);
}

/* The sealed chunk with the oldest events, taken from the head of its lane
 * (LOOP policy, nothing free).  The head CAS makes this race safely with
 * the reader consuming the same chunk. */
static int oldest_sealed(const struct pt_map *m, uint32_t *lane, uint64_t *head)
{
	uint32_t n = lanes_known(m), committed_untrusted;
	uint64_t best_ts = UINT64_MAX;
	int found = 0;
	/* Pairs with the release CAS of committed_chunks in pt_stream_grow (stream.c). */
	committed_untrusted = atomic_load_explicit(&pt_hdr(m)->committed_chunks, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++) {
		/* Pairs with the release store of head in start_chunk (writer.c) and
		 * the head CASes of next_chunk (reader.c) and pt_steal_oldest. */
		uint64_t hd = atomic_load_explicit(&pt_lane_at(m, i)->head, /* i < lanes_known */
		                                   memory_order_acquire);
		uint32_t c_untrusted = pt_head_chunk(hd);
		struct pt_chunk *ch = pt_chunk_get(m, c_untrusted);
		if (c_untrusted >= committed_untrusted || !ch)
			continue;
		/* Pairs with the release store of next in start_chunk (writer.c). */
		if (atomic_load_explicit(&ch->next, memory_order_acquire) == PT_NONE)
			continue;
		/* Racing with a writer that took the chunk and starts it anew:
		 * only a choice, which the head CAS then validates. */
		uint64_t base = __atomic_load_n(&ch->base, __ATOMIC_RELAXED);
		if (!found || base < best_ts) {
			best_ts = base;
			*lane = i;
			*head = hd;
			found = 1;
		}
	}
	return found;
}

/* The events of a sealed chunk that were not read yet: those at or after
 * `from`, counted from its commit word, and the time of the first.  Walks
 * only the records before the first of them, with the one decoder: a
 * chunk scribbled on costs the thief its count, never a read outside it. */
static uint32_t unread_events(const struct pt_map *m, const unsigned char *chunk,
                              uint64_t commit_untrusted, uint32_t from_untrusted,
                              uint64_t *first_ts)
{
	uint32_t total_untrusted = (uint32_t)(commit_untrusted >> 32);
	struct pt_rec_ctx ctx = {.cpu = PT_CPU_NONE};
	struct pt_rec_walk walk;
	struct pt_rec r;
	*first_ts = UINT64_MAX;
	if (from_untrusted < PT_CHUNK_HDR)
		return 0;
	uint32_t from = from_untrusted, end = pt_commit_end(m, commit_untrusted, from);
	if (!end || end == from)
		return 0;
	pt_racy_copy(&ctx.base, &((const struct pt_chunk *)chunk)->base, sizeof ctx.base);
	pt_rec_walk(chunk, PT_CHUNK_HDR, from, end, m->max_data, &ctx, &walk);
	if (walk.off != from)
		return 0;
	/* Meta records go before the first event unread. */
	while (pt_rec_at(chunk, walk.off, end, m->max_data, &r) != PT_RK_BAD && r.kind != PT_RK_EVENT) {
		pt_rec_apply(&ctx, &r, chunk + walk.off);
		walk.off += r.size;
	}
	if (r.kind != PT_RK_EVENT)
		return 0;
	*first_ts = ctx.base + pt_rec_delta(r.w0);
	/* The count is the writer's word: no more than the bytes can hold. */
	uint32_t unread = total_untrusted > walk.events ? total_untrusted - walk.events : 0;
	uint32_t most = (end - walk.off) / PT_REC_HDR_MIN;
	return unread < most ? unread : most;
}

uint32_t pt_steal_oldest(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	for (int attempt = 0; attempt < 8; attempt++) {
		uint32_t lane = 0;
		uint64_t hd = 0;
		if (!oldest_sealed(m, &lane, &hd))
			return PT_NONE;
		uint32_t c = pt_head_chunk(hd);
		struct pt_chunk *ch = pt_chunk_at(m, c); /* checked by oldest_sealed */
		/* Pairs with the release store of next in start_chunk (writer.c): the
		 * chunk's commit and event_bytes are final, the next one's header written. */
		uint32_t nx_untrusted = atomic_load_explicit(&ch->next, memory_order_acquire);
		if (!pt_chunk_get(m, nx_untrusted))
			continue;
		uint64_t repl = pt_head_pack(nx_untrusted, PT_CHUNK_HDR, pt_head_tag(hd) + 1);
		/* Acquire: the chunk is written over only after this; pairs
		 * with the reader's claim in stage_more (reader.c).  Release:
		 * the next chunk's header goes on with the head to follow_head (reader.c). */
		if (!atomic_compare_exchange_strong_explicit(&pt_lane_at(m, lane)->head, &hd, repl,
		                                             memory_order_acq_rel, memory_order_relaxed))
			continue;
		/* Pairs with the release store of commit in append_record (writer.c). */
		uint64_t first, commit = atomic_load_explicit(&ch->commit, memory_order_acquire);
		uint32_t lost = unread_events(m, (unsigned char *)ch, commit, pt_head_off(hd), &first);
		pt_held_sub(h, atomic_load_explicit(&ch->event_bytes, memory_order_relaxed));
		if (lost)
			pt_note_loss(h, first, lost);
		atomic_store_explicit(&h->full, 1, memory_order_relaxed);
		return c;
	}
	return PT_NONE;
}

/* Events a slot's writers could not record before its stream was mapped
 * (the mapping thread held the process's lock): lost, and said so in the
 * stream (XSH 2.11.1: an overrun, POSIX_TRACE_OVERFLOW), once it is. */
void pt_count_unmapped_losses(struct pt_attached *a)
{
	uint64_t n = atomic_exchange_explicit(&a->unmapped_lost, 0, memory_order_relaxed);
	const struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	if (n && m)
		pt_note_loss(pt_hdr(m), pt_clock_raw(m->clock), n);
}
