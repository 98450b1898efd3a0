/* SPDX-License-Identifier: MIT */
/*
 * The analyzer side of an active stream: posix_trace_getnext_event() and its
 * timed and non-blocking forms, and the keeper's drain.  The reader keeps a
 * private cursor per lane; a gather looks at every lane once (the commit
 * word of the chunk a writer is writing in, a line the writer writes per
 * event, is loaded only then; sealed chunks are followed any time) and a
 * heap then hands out the events it found in time order, merged with the
 * controller's own events (ctl.h) and the overflows writers noted.  Records
 * are claimed into private memory a stage at a time (stage_more) before
 * they are parsed.  Everything read from the mapping is checked against the
 * geometry kept in private memory.
 */
#include <errno.h>
#include <linux/futex.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "clock.h"
#include "ctl.h"
#include "lanes.h"
#include "layout.h"
#include "pidmap.h"
#include "reader.h"
#include "records.h"
#include "recword.h"
#include "stream.h"
#include "thread.h"
#include "writer.h"

enum { CUR_LOOK = 0, CUR_READY, CUR_IDLE, CUR_BROKEN, CUR_STAGED };
/* How a lane is looked at: the commit word loaded again; records claimed
 * are handed out as a whole stage (pt_read_stage) instead of an event. */
enum { LOOK_RELOAD = 1, LOOK_STAGE = 2 };

#define POLL_NS 100000u /* an idle lane is looked at again after this long */
#define MAX_RACES 64 /* lost claims in one look at a lane */
#define STAGE_BYTES 8192u /* claimed from a lane at once, at most */
#define STAGE_BUDGET (4u << 20) /* stages kept by lanes with nothing staged */

int pt_reader_init(struct pt_reader *rd, const struct pt_map *m)
{
	memset(rd, 0, sizeof *rd);
	pt_conv_init(&rd->conv, m->clock);
	rd->poll_ticks = m->clock == PT_CLOCK_TSC ? rd->conv.ticks_1ms / (1000000u / POLL_NS) : POLL_NS;
	rd->ovf_raw = UINT64_MAX;
	rd->until = UINT64_MAX;
	pt_pidmap_init(&rd->ids, pt_proc.pidns, pt_proc.proc_is_ours);
	size_t extra = m->max_chunks - m->base_chunks;
	rd->chunk_ok = calloc(extra / 8 + 1, 1);
	rd->page_ok = calloc(m->max_lanes / PT_LANES_PER_PAGE / 8 + 1, 1);
	rd->chunk_seq = calloc(m->max_chunks, sizeof *rd->chunk_seq);
	rd->drain_mark = calloc(m->max_chunks, sizeof *rd->drain_mark);
	if (!rd->chunk_ok || !rd->page_ok || !rd->chunk_seq || !rd->drain_mark) {
		pt_reader_free(rd);
		return ENOMEM;
	}
	return 0;
}

void pt_reader_free(struct pt_reader *rd)
{
	for (uint32_t i = 0; rd->cur && i < rd->cap; i++)
		free(rd->cur[i].stage);
	free(rd->cur);
	free(rd->heap);
	free(rd->chunk_ok);
	free(rd->page_ok);
	free(rd->chunk_seq);
	free(rd->drain_mark);
	pt_pidmap_free(&rd->ids);
	rd->cur = NULL;
	rd->heap = NULL;
	rd->chunk_ok = rd->page_ok = NULL;
	rd->chunk_seq = NULL;
	rd->drain_mark = NULL;
	rd->ncur = rd->cap = rd->nheap = 0;
}

/* ---- what may be touched ------------------------------------------------ */

static int bit_test_set(uint8_t *bits, uint64_t i, int ok)
{
	if (bits[i / 8] & (1u << (i % 8)))
		return 1;
	if (ok)
		bits[i / 8] |= (uint8_t)(1u << (i % 8));
	return ok;
}

/* A chunk past the base is read only once it is known committed: a hole
 * would be allocated at the reader's expense. */
static int chunk_ok(struct pt_reader *rd, const struct pt_map *m, uint32_t c)
{
	if (c < m->base_chunks)
		return 1;
	if (c >= m->max_chunks)
		return 0;
	uint64_t i = c - m->base_chunks;
	if (rd->chunk_ok[i / 8] & (1u << (i % 8)))
		return 1;
	return bit_test_set(rd->chunk_ok, i,
	                    pt_stream_backed(m, m->chunks_off + (uint64_t)c * m->chunk_size,
	                                     m->chunk_size));
}

/* Lanes below this are mapped and committed: the raw pt_lane_at takes
 * them (the cursors' indexes are below it). */
static uint32_t lanes_readable(struct pt_reader *rd, const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	/* A count only: new_lane (lanes.c) adds before the lane's page is
	 * committed, so pages are checked below; relaxed would do. */
	uint32_t n = pt_lanes_within(m, atomic_load_explicit(&h->nlanes, memory_order_acquire));
	for (uint32_t p = 1; p * PT_LANES_PER_PAGE < n; p++) {
		uint64_t off = m->lanes_off + (uint64_t)p * PT_LANES_PER_PAGE * sizeof(struct pt_lane);
		if (!bit_test_set(rd->page_ok, p, pt_stream_backed(m, off, 4096)))
			return p * PT_LANES_PER_PAGE;
	}
	return n;
}

static int grow_cursors(struct pt_reader *rd, uint32_t n)
{
	if (n <= rd->cap) {
		rd->ncur = n > rd->ncur ? n : rd->ncur;
		return 0;
	}
	uint32_t cap = rd->cap ? rd->cap : 16;
	while (cap < n)
		cap *= 2;
	struct pt_cursor *c = realloc(rd->cur, cap * sizeof *c);
	if (!c)
		return ENOMEM;
	rd->cur = c;
	uint32_t *heap = realloc(rd->heap, cap * sizeof *heap);
	if (!heap)
		return ENOMEM;
	rd->heap = heap;
	memset(&rd->cur[rd->cap], 0, (cap - rd->cap) * sizeof *c);
	for (uint32_t i = rd->cap; i < cap; i++)
		rd->cur[i].chunk = PT_NONE;
	rd->cap = cap;
	rd->ncur = n;
	return 0;
}

/* ---- the heap of lanes with an event ready, by time ------------------- */

static int before(const struct pt_reader *rd, uint32_t a, uint32_t b)
{
	return rd->cur[a].ts < rd->cur[b].ts || (rd->cur[a].ts == rd->cur[b].ts && a < b);
}

static void heap_place(struct pt_reader *rd, uint32_t pos, uint32_t lane)
{
	rd->heap[pos] = lane;
	rd->cur[lane].heap_pos = pos;
}

static void sift_up(struct pt_reader *rd, uint32_t pos)
{
	uint32_t lane = rd->heap[pos];
	while (pos > 0 && before(rd, lane, rd->heap[(pos - 1) / 2])) {
		heap_place(rd, pos, rd->heap[(pos - 1) / 2]);
		pos = (pos - 1) / 2;
	}
	heap_place(rd, pos, lane);
}

static void sift_down(struct pt_reader *rd, uint32_t pos)
{
	uint32_t lane = rd->heap[pos];
	for (;;) {
		uint32_t c = 2 * pos + 1;
		if (c >= rd->nheap)
			break;
		if (c + 1 < rd->nheap && before(rd, rd->heap[c + 1], rd->heap[c]))
			c++;
		if (!before(rd, rd->heap[c], lane))
			break;
		heap_place(rd, pos, rd->heap[c]);
		pos = c;
	}
	heap_place(rd, pos, lane);
}

static void heap_push(struct pt_reader *rd, uint32_t lane)
{
	rd->heap[rd->nheap] = lane;
	sift_up(rd, rd->nheap++);
}

static void heap_pop(struct pt_reader *rd)
{
	if (--rd->nheap) {
		rd->heap[0] = rd->heap[rd->nheap];
		sift_down(rd, 0);
	}
}

/* ---- one lane -------------------------------------------------------------
 * Lane i is below lanes_readable (its cursor exists); a cursor's chunk is
 * PT_NONE or one may_enter let it enter: both are taken raw.  Heads, links
 * and commit words are the writers' words, checked here. */

/* May lane i's cursor enter chunk c, whose header it copied into *id?
 * Only a chunk started for this lane, with a sequence number above the
 * lane's and the chunk's last ones (records.h): no cycle of links and no
 * chunk named by several lanes is read twice.  During a drain, a chunk
 * already entered in that drain waits for the next one, so that a drain
 * takes at most what the stream holds. */
enum { ENTER_OK, ENTER_LATER, ENTER_BAD };
static int may_enter(struct pt_reader *rd, const struct pt_map *m, const struct pt_cursor *cur,
                     uint32_t i, uint32_t c_untrusted, struct pt_chunk_id *id)
{
	const struct pt_chunk *ch = pt_chunk_get(m, c_untrusted);
	if (!ch || !chunk_ok(rd, m, c_untrusted))
		return ENTER_BAD;
	uint32_t c = c_untrusted;
	pt_chunk_read_id(ch, id);
	if (!pt_chunk_identity(id, i, cur->seq, rd->chunk_seq[c]))
		return ENTER_BAD;
	if (rd->draining && rd->drain_mark[c] == rd->drain_no)
		return ENTER_LATER;
	return ENTER_OK;
}

static void enter_chunk(struct pt_reader *rd, struct pt_cursor *cur, uint32_t c,
                        const struct pt_chunk_id *id)
{
	rd->chunk_seq[c] = id->seq;
	rd->drain_mark[c] = rd->drain_no;
	cur->seq = id->seq;
	cur->ctx.base = id->base;
	cur->ctx.owner = id->owner;
	cur->ctx.pc = 0;
	cur->ctx.cpu = PT_CPU_NONE;
	cur->chunk = c;
	cur->off = cur->end = PT_CHUNK_HDR;
	cur->end_known = 0;
	cur->s_off = cur->s_len = 0;
}

/* Applies the staged meta records up to the next event, which it decodes
 * into cur->rec.  The stage holds claimed records in private memory. */
enum { PARSE_EVENT, PARSE_END, PARSE_BAD };
static int parse_stage(struct pt_cursor *cur, const struct pt_map *m)
{
	while (cur->s_off < cur->s_len) {
		struct pt_rec *r = &cur->rec;
		if (pt_rec_at(cur->stage, cur->s_off, cur->s_len, m->max_data, r) == PT_RK_BAD)
			return PARSE_BAD;
		if (r->kind == PT_RK_EVENT) {
			cur->ts = cur->ctx.base + pt_rec_delta(r->w0);
			return PARSE_EVENT;
		}
		pt_rec_apply(&cur->ctx, r, cur->stage + cur->s_off);
		cur->s_off += r->size;
	}
	return PARSE_END;
}

/* Puts the cursor where the lane's head hd says, walking the chunk from
 * its start to learn the writer, clock base and address there.  The
 * chunk's header is read first and the head loaded again after it
 * (seqlock): a LOOP writer that took the chunk meanwhile has moved the
 * head.  0; EAGAIN: look again; EBUSY: a chunk for the next drain;
 * EINVAL: damage. */
static int resync(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur, uint32_t i,
                  uint64_t hd_untrusted)
{
	uint32_t c_untrusted = pt_head_chunk(hd_untrusted), off_untrusted = pt_head_off(hd_untrusted);
	struct pt_chunk_id id;
	cur->state = CUR_IDLE;
	cur->s_off = cur->s_len = 0;
	if (c_untrusted == PT_NONE) {
		cur->head = hd_untrusted;
		cur->chunk = PT_NONE;
		return 0;
	}
	if (!pt_chunk_off_ok(m, off_untrusted))
		return EINVAL;
	uint32_t off = off_untrusted;
	int same = c_untrusted == cur->chunk;
	int enter = ENTER_OK;
	if (!same) {
		enter = may_enter(rd, m, cur, i, c_untrusted, &id);
	} else {
		pt_chunk_read_id(pt_chunk_at(m, cur->chunk), &id);
		same = id.seq == cur->seq && id.lane == i;
		if (!same)
			enter = may_enter(rd, m, cur, i, c_untrusted, &id);
		else if (off < cur->off)
			enter = ENTER_BAD; /* records already taken are not taken again */
	}
	/* The header copied above is the chunk's own if the head did not move
	 * meanwhile: a CAS that keeps the head as it is, whose release orders
	 * the copy before it (a fence would do, but ThreadSanitizer does not
	 * model fences).  Pairs with the head CAS in pt_steal_oldest (lanes.c),
	 * after which the thief writes the header. */
	uint64_t still = hd_untrusted;
	if (!atomic_compare_exchange_strong_explicit(&pt_lane_at(m, i)->head, &still, hd_untrusted,
	                                             memory_order_acq_rel, memory_order_relaxed))
		return EAGAIN;
	if (enter != ENTER_OK)
		return enter == ENTER_LATER ? EBUSY : EINVAL;
	/* Entered, or the cursor's own chunk: checked. */
	uint32_t c = c_untrusted;
	uint64_t hd = hd_untrusted;
	struct pt_rec_ctx ctx = {id.base, 0, id.owner, PT_CPU_NONE};
	struct pt_rec_walk walk;
	const unsigned char *chunk = (const unsigned char *)pt_chunk_at(m, c);
	pt_rec_walk(chunk, PT_CHUNK_HDR, off, off, m->max_data, &ctx, &walk);
	if (walk.off != off)
		return EINVAL;
	if (!same)
		enter_chunk(rd, cur, c, &id);
	cur->head = hd;
	cur->ctx = ctx;
	cur->off = cur->end = off;
	cur->end_known = 0;
	return 0;
}

/* The lane's head moved (or may have): the cursor follows it.  0, or
 * the reason it cannot (resync). */
static int follow_head(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur,
                       uint32_t i)
{
	for (int tries = 0; tries < 16; tries++) {
		/* Pairs with the release store of head in start_chunk (writer.c) and
		 * the head CASes in pt_steal_oldest (lanes.c) and next_chunk:
		 * resync reads the chunk named. */
		uint64_t hd_untrusted = atomic_load_explicit(&pt_lane_at(m, i)->head, memory_order_acquire);
		if (hd_untrusted == cur->head && cur->chunk != PT_NONE)
			return 0;
		int err = resync(rd, m, cur, i, hd_untrusted);
		if (err != EAGAIN)
			return err;
	}
	return EAGAIN;
}

/* c: the chunk a cursor leaves, entered through may_enter. */
static void retire(const struct pt_map *m, uint32_t c)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	pt_held_sub(h, atomic_load_explicit(&pt_chunk_at(m, c)->event_bytes, memory_order_relaxed));
	pt_pool_push(m, c);
	if (atomic_load_explicit(&h->full, memory_order_relaxed) &&
	    atomic_load_explicit(&h->state, memory_order_relaxed) != PT_ST_FULL)
		atomic_store_explicit(&h->full, 0, memory_order_relaxed);
}

/* Past the end of a sealed chunk (or out of a damaged one): the lane's
 * next chunk, and this one goes back to the pool.  The next chunk's header
 * is checked before the head moves: it cannot be taken by a LOOP writer
 * before that, as it is not at a head.  0 when the cursor moved on;
 * EAGAIN: the head moved, look again; EBUSY: the next drain's; EINVAL. */
static int next_chunk(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur,
                      uint32_t i, uint32_t next_untrusted)
{
	struct pt_chunk_id id;
	int enter = may_enter(rd, m, cur, i, next_untrusted, &id);
	if (enter != ENTER_OK)
		return enter == ENTER_LATER ? EBUSY : EINVAL;
	uint32_t next = next_untrusted;
	uint64_t hd = cur->head;
	uint64_t repl = pt_head_pack(next, PT_CHUNK_HDR, pt_head_tag(hd) + 1);
	/* Release: our reads of the old chunk come before a writer reuses it.
	 * Acquire on failure pairs with the head CAS in pt_steal_oldest
	 * (lanes.c): follow_head reads the chunk the thief moved the head to. */
	if (!atomic_compare_exchange_strong_explicit(&pt_lane_at(m, i)->head, &hd, repl,
	                                             memory_order_acq_rel, memory_order_acquire))
		return EAGAIN;
	uint32_t old = cur->chunk;
	enter_chunk(rd, cur, next, &id);
	cur->head = repl;
	retire(m, old);
	return 0;
}

/* Claims the next committed records of the lane: copies them into the
 * cursor's private stage, whole records only, then moves the lane's head
 * past them with one compare-and-swap.  When that succeeds no LOOP writer
 * took the chunk since the cursor's head was loaded, so the copy is what
 * the writer committed (a thief writes into a chunk only after taking it
 * with its own compare-and-swap on the head: pairs with pt_steal_oldest
 * in lanes.c); the events are the reader's from then on, one atomic operation
 * for a whole stage instead of one per event.  0; EAGAIN when the head
 * moved; ENOMEM; EINVAL when the first record makes no sense. */
static int stage_more(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur,
                      uint32_t i, int how)
{
	if (!cur->stage) {
		size_t cap = pt_record_size(m->max_data);
		cur->stage_cap = (uint32_t)(cap > STAGE_BYTES ? cap : STAGE_BYTES);
		cur->stage = malloc(cur->stage_cap);
		if (!cur->stage)
			return ENOMEM;
		rd->stage_bytes += cur->stage_cap;
	}
	uint32_t want = cur->end - cur->off;
	if (want > cur->stage_cap)
		want = cur->stage_cap;
	/* The cursor's chunk; off <= end <= chunk_size (chunk_end, resync). */
	const unsigned char *from = (const unsigned char *)pt_chunk_at(m, cur->chunk) + cur->off;
	pt_racy_copy(cur->stage, from, want);
	/* An analyzer's lines only: the keeper drains slower with them
	 * demoted (PERFORMANCE.md, "The reader demotes what it copied"). */
	if (!(how & LOOK_STAGE))
		pt_demote_read(from, want);
	uint32_t cut = 0;
	if (how & LOOK_STAGE) {
		/* Handed out whole: the one pass cuts it and learns what the
		 * keeper needs of it. */
		cur->scan.ctx = cur->ctx;
		cur->scan.until = rd->until;
		pt_rec_scan(cur->stage, 0, want, m->max_data, &cur->scan);
		cut = cur->scan.end;
		if (!cut && cur->scan.later)
			return EBUSY; /* the next drain's */
	} else {
		struct pt_rec r;
		while (cut < want && pt_rec_at(cur->stage, cut, want, m->max_data, &r) != PT_RK_BAD)
			cut += r.size;
	}
	cur->scanned = (how & LOOK_STAGE) != 0;
	uint64_t hd = cur->head;
	if (!cut)
		return EINVAL; /* checked again by the caller against a moved head */
	uint64_t repl = pt_head_pack(cur->chunk, cur->off + cut, pt_head_tag(hd));
	/* A stage's events are counted as claimed (for the log: a keeper
	 * killed before writing them has them counted lost by the next). */
	struct pt_claims *claims = how & LOOK_STAGE ? rd->claims : NULL;
	if (claims)
		pt_claim_begin(claims, i, hd, cur->scan.events);
	/* Release: the copy above comes first; pairs with the head CAS in
	 * pt_steal_oldest (lanes.c), after which the thief writes. */
	int claimed = atomic_compare_exchange_strong_explicit(&pt_lane_at(m, i)->head, &hd, repl,
	                                                      memory_order_acq_rel,
	                                                      memory_order_acquire);
	if (claims)
		pt_claim_end(claims, claimed);
	if (!claimed)
		return EAGAIN;
	cur->head = repl;
	cur->off += cut;
	cur->s_off = 0;
	cur->s_len = cut;
	return 0;
}

/* Damage in the lane: unless its head moved meanwhile (a LOOP writer took
 * the chunk: then the cursor follows), it is broken until the head moves
 * or its chunk is sealed with a next one that may be entered. */
static int damaged(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur, uint32_t i)
{
	/* Pairs with the head CAS in pt_steal_oldest (lanes.c), as in follow_head. */
	uint64_t hd_untrusted = atomic_load_explicit(&pt_lane_at(m, i)->head, memory_order_acquire);
	if (hd_untrusted != cur->head && follow_head(rd, m, cur, i) == 0)
		return 0;
	cur->head = hd_untrusted; /* compared only: the next move resyncs */
	cur->state = CUR_BROKEN;
	return 1;
}

/* The end of what the cursor knows of its chunk: the commit word again
 * (with `reload`, or the first time), then the link to the next chunk. */
enum { END_MORE, END_IDLE, END_NEXT, END_BAD };
static int chunk_end(const struct pt_map *m, struct pt_cursor *cur, int reload,
                     uint32_t *next_untrusted)
{
	struct pt_chunk *ch = pt_chunk_at(m, cur->chunk);
	uint32_t end = cur->end;
	if (reload || !cur->end_known) {
		/* Pairs with the release store of commit in append_record (writer.c). */
		end = pt_commit_end(m, atomic_load_explicit(&ch->commit, memory_order_acquire), cur->off);
		cur->end_known = 1;
		if (!end)
			return END_BAD;
		if (end > cur->end) {
			cur->end = end;
			return END_MORE;
		}
	}
	/* Pairs with the release store of next in start_chunk (writer.c);
	 * checked by may_enter (next_chunk). */
	*next_untrusted = atomic_load_explicit(&ch->next, memory_order_acquire);
	if (*next_untrusted == PT_NONE)
		return END_IDLE;
	/* Sealed: commit is final now; records committed since it was last
	 * loaded are looked at first (pairs with the release store of commit in
	 * append_record, writer.c). */
	uint32_t final = pt_commit_end(m, atomic_load_explicit(&ch->commit, memory_order_acquire), end);
	if (final == end)
		return END_NEXT;
	if (!final)
		return END_BAD;
	cur->end = final;
	return END_MORE;
}

/* Finds the next event of lane i.  The writer's commit word (a line the
 * writer writes per event) of the chunk it writes in is loaded again only
 * with `reload`, during a gather; the chunks the writer has left behind are
 * followed at any time, so that what a gather saw committed is all found.
 * Each step consumes stored bytes or enters a chunk no cursor entered at
 * that sequence number: the steps are bounded by what the stream holds. */
static int lane_look(struct pt_reader *rd, const struct pt_map *m, uint32_t i, int how)
{
	struct pt_cursor *cur = &rd->cur[i];
	/* Lost races (the head moved under a claim) make no progress: a few
	 * are normal with LOOP writers; a target moving heads all the time
	 * has its lane looked at again at the next gather. */
	for (int races = 0; races < MAX_RACES;) {
		if (cur->state == CUR_READY || cur->state == CUR_BROKEN)
			return (int)cur->state;
		if (cur->s_off < cur->s_len) {
			if (how & LOOK_STAGE)
				return CUR_STAGED;
			int r = parse_stage(cur, m);
			if (r == PARSE_EVENT) {
				cur->state = CUR_READY;
				return CUR_READY;
			}
			if (r == PARSE_BAD && damaged(rd, m, cur, i))
				return CUR_BROKEN;
			continue;
		}
		int err = follow_head(rd, m, cur, i);
		if (err == EINVAL && damaged(rd, m, cur, i))
			return CUR_BROKEN;
		if (err || cur->chunk == PT_NONE)
			return CUR_IDLE;
		if (cur->off < cur->end) {
			err = stage_more(rd, m, cur, i, how);
			if (err == ENOMEM || err == EBUSY)
				return CUR_IDLE; /* looked at again by the next call, drain */
			if (err == EINVAL && damaged(rd, m, cur, i))
				return CUR_BROKEN;
			races += err == EAGAIN;
			continue;
		}
		uint32_t next_untrusted = PT_NONE;
		int end = chunk_end(m, cur, how & LOOK_RELOAD, &next_untrusted);
		if (end == END_MORE)
			continue;
		if (end == END_IDLE) {
			cur->state = CUR_IDLE;
			return CUR_IDLE;
		}
		err = end == END_BAD ? EINVAL : next_chunk(rd, m, cur, i, next_untrusted);
		if (err == EBUSY)
			return CUR_IDLE;
		if (err == EINVAL && damaged(rd, m, cur, i))
			return CUR_BROKEN;
		races += err == EAGAIN;
	}
	return CUR_IDLE;
}

/* A lane with nothing staged gives its stage back while the stages of
 * all lanes take more than STAGE_BUDGET: however many lanes a target
 * makes, the reader's memory for them stays bounded. */
static void stage_release(struct pt_reader *rd, struct pt_cursor *cur)
{
	if (!cur->stage || cur->s_off < cur->s_len || rd->stage_bytes <= STAGE_BUDGET)
		return;
	rd->stage_bytes -= cur->stage_cap;
	free(cur->stage);
	cur->stage = NULL;
	cur->s_off = cur->s_len = 0;
}

/* A lane found damaged: looked at again when its head moved, or when the
 * damaged chunk was sealed with a next chunk that may be entered (the
 * rest of the damaged chunk is given up). */
static int lane_retry(struct pt_reader *rd, const struct pt_map *m, uint32_t i, int how)
{
	struct pt_cursor *cur = &rd->cur[i];
	/* Pairs with the head CAS in pt_steal_oldest (lanes.c) and the release
	 * store of head in start_chunk (writer.c), as in follow_head. */
	uint64_t hd_untrusted = atomic_load_explicit(&pt_lane_at(m, i)->head, memory_order_acquire);
	if (hd_untrusted != cur->head) {
		cur->state = CUR_IDLE;
		cur->head = ~hd_untrusted; /* follow_head resyncs */
		return lane_look(rd, m, i, how);
	}
	if (pt_head_chunk(hd_untrusted) != cur->chunk || cur->chunk == PT_NONE)
		return CUR_BROKEN;
	/* The cursor's chunk.  Pairs with the release store of next in
	 * start_chunk (writer.c); checked by may_enter (next_chunk). */
	uint32_t next_untrusted =
	    atomic_load_explicit(&pt_chunk_at(m, cur->chunk)->next, memory_order_acquire);
	if (next_untrusted == PT_NONE || next_chunk(rd, m, cur, i, next_untrusted) != 0)
		return CUR_BROKEN;
	cur->state = CUR_IDLE;
	return lane_look(rd, m, i, how);
}

/* After an event was taken: the next one of the lane, if the last gather
 * already saw it committed. */
static int lane_look_cached(struct pt_reader *rd, const struct pt_map *m, uint32_t i)
{
	struct pt_cursor *cur = &rd->cur[i];
	if (cur->state != CUR_IDLE || cur->chunk == PT_NONE)
		return (int)cur->state;
	return lane_look(rd, m, i, 0);
}

/* ---- events the reader reports itself ---------------------------------- */

static void push_synth(struct pt_source *h, trace_event_id_t id, uint64_t raw, const void *data,
                       uint32_t len, const struct pt_caller *who)
{
	struct pt_reader *rd = &h->rd;
	if (rd->nsynth >= PT_SYNTH_MAX || pt_source_filtered(h, id))
		return;
	struct pt_synth *s = &rd->synth[rd->nsynth++];
	memset(s, 0, sizeof *s);
	s->id = id;
	s->raw = raw;
	s->len = len;
	if (who)
		s->who = *who;
	if (len)
		memcpy(s->data, data, len);
}

static void copy_out(void *data, size_t num_bytes, const void *src, uint32_t len,
                     size_t *data_len, int32_t *truncation)
{
	size_t n = len;
	if (n > num_bytes) {
		n = num_bytes;
		*truncation = POSIX_TRACE_TRUNCATED_READ;
	}
	if (n)
		pt_racy_copy(data, src, n);
	*data_len = n;
}

static void pt_ns_to_timespec(const struct pt_map *m, uint64_t real_ns, struct timespec *ts)
{
	(void)m;
	if (real_ns > (uint64_t)INT64_MAX)
		real_ns = 0;
	ts->tv_sec = (time_t)(real_ns / 1000000000u);
	ts->tv_nsec = (long)(real_ns % 1000000000u);
}

/* The CLOCK_REALTIME scale of the stream's creation.  Unsigned: a time
 * from another process may be anything. */
static uint64_t pt_raw_to_real(struct pt_reader *rd, const struct pt_map *m, uint64_t raw)
{
	uint64_t mono = pt_conv_mono(&rd->conv, raw);
	/* A calibration point added between two events can move the line
	 * under the later one by a few ns: time read back never goes back. */
	if (raw >= rd->last_raw && mono < rd->last_mono)
		mono = rd->last_mono;
	if (raw >= rd->last_raw) {
		rd->last_raw = raw;
		rd->last_mono = mono;
	}
	return pt_mono_to_real(m, mono);
}

uint64_t pt_mono_to_real(const struct pt_map *m, uint64_t mono)
{
	if (mono >= m->base_mono_ns)
		return m->base_real_ns + (mono - m->base_mono_ns);
	return m->base_real_ns > m->base_mono_ns - mono ? m->base_real_ns - (m->base_mono_ns - mono) : 0;
}

static void fill_system(struct pt_source *h, struct pt_rawev *e, trace_event_id_t id,
                        uint64_t raw, const struct pt_caller *who)
{
	memset(e, 0, sizeof *e);
	e->cpu = PT_CPU_NONE;
	e->id = id;
	e->who.pid = who->pid;
	e->who.tid = who->tid;
	e->who.thread = who->thread;
	e->pc = who->pc;
	e->truncation = POSIX_TRACE_NOT_TRUNCATED;
	e->real_ns = pt_raw_to_real(&h->rd, &h->map, raw);
}

static void emit_synth(struct pt_source *h, struct pt_rawev *e, void *data, size_t num_bytes,
                       size_t *data_len)
{
	struct pt_reader *rd = &h->rd;
	struct pt_synth s = rd->synth[0];
	memmove(&rd->synth[0], &rd->synth[1], (rd->nsynth - 1) * sizeof rd->synth[0]);
	rd->nsynth--;
	fill_system(h, e, s.id, s.raw, &s.who);
	copy_out(data, num_bytes, s.data, s.len, data_len, &e->truncation);
}

/* UNTIL_FULL, everything read: report the gap and the automatic stop, then
 * restart the stream: its START (caused by this read call) with RESUME
 * right before it, the first valid event after the overflow. */
static void restart_full_stream(struct pt_source *h, uintptr_t pc)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint64_t full_ts = atomic_load_explicit(&hdr->full_ts, memory_order_relaxed);
	struct pt_caller finder = {atomic_load_explicit(&hdr->full_pid, memory_order_relaxed), 0, 0,
	                           atomic_load_explicit(&hdr->full_pc, memory_order_relaxed)};
	int automatic = 1;
	push_synth(h, POSIX_TRACE_OVERFLOW, full_ts, NULL, 0, NULL);
	push_synth(h, POSIX_TRACE_STOP, full_ts, &automatic, sizeof automatic, &finder);
	atomic_store_explicit(&hdr->full, 0, memory_order_relaxed);
	uint32_t full = PT_ST_FULL;
	/* The state's value only: full_ts, full_pid and full_pc above came with
	 * at_end's acquire load; relaxed would do. */
	if (atomic_compare_exchange_strong_explicit(&hdr->state, &full, PT_ST_RUNNING,
	                                            memory_order_acq_rel, memory_order_relaxed)) {
		trace_event_set_t filter;
		uint64_t now = pt_clock_raw(h->map.clock);
		struct pt_caller me = pt_caller_here(pc);
		for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
			filter.__bits[i] = atomic_load_explicit(&hdr->filter[i], memory_order_relaxed);
		push_synth(h, POSIX_TRACE_RESUME, now, NULL, 0, NULL);
		push_synth(h, POSIX_TRACE_START, now, &filter, sizeof filter, &me);
	}
}

/* Shut down while full: the end still tells why. */
static void report_end_full(struct pt_source *h)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	struct pt_caller finder = {atomic_load_explicit(&hdr->full_pid, memory_order_relaxed), 0, 0,
	                           atomic_load_explicit(&hdr->full_pc, memory_order_relaxed)};
	uint64_t full_ts = atomic_load_explicit(&hdr->full_ts, memory_order_relaxed);
	int automatic = 1;
	h->rd.end_reported = 1;
	push_synth(h, POSIX_TRACE_OVERFLOW, full_ts, NULL, 0, NULL);
	push_synth(h, POSIX_TRACE_STOP, full_ts, &automatic, sizeof automatic, &finder);
}

/* ---- taking events ------------------------------------------------------ */

/* Copies the lane's ready event (decoded by parse_stage) out of the stage
 * and consumes it. */
static void consume(struct pt_source *h, struct pt_cursor *cur, struct pt_rawev *e, void *data,
                    size_t num_bytes, size_t *data_len)
{
	const unsigned char *p = cur->stage + cur->s_off;
	const struct pt_rec *r = &cur->rec;
	pt_rec_apply(&cur->ctx, r, p);
	e->id = r->id;
	e->truncation = (r->w0 & PT_REC_TRUNCATED) ? POSIX_TRACE_TRUNCATED_RECORD
	                                            : POSIX_TRACE_NOT_TRUNCATED;
	e->pc = cur->ctx.pc;
	e->who = cur->ctx.owner;
	e->cpu = cur->ctx.cpu;
	/* The value only (the writer's claim, like the ids it wrote); the
	 * cursor's lane is readable (lanes_readable). */
	e->ns = atomic_load_explicit(&pt_lane_at(&h->map, (uint32_t)(cur - h->rd.cur))->owner_ns,
	                             memory_order_relaxed);
	e->real_ns = pt_raw_to_real(&h->rd, &h->map, cur->ts);
	copy_out(data, num_bytes, p + r->hdr, r->len, data_len, &e->truncation);
	cur->s_off += r->size;
	cur->state = CUR_IDLE;
	cur->reported = 0; /* a run of damage ends with an event */
}

/* Damage is reported once per run of it (a lane found broken, until it
 * yields an event again) with POSIX_TRACE_ERROR (EINVAL). */
static void report_broken(struct pt_source *h, struct pt_cursor *cur)
{
	int err = EINVAL;
	if (cur->reported)
		return;
	cur->reported = 1;
	push_synth(h, POSIX_TRACE_ERROR, pt_clock_raw(h->map.clock), &err, sizeof err, NULL);
}

/* Looks at every lane that has no event ready; a lane found broken is
 * looked at again when its head moved or its damaged chunk was sealed. */
static void gather(struct pt_source *h)
{
	struct pt_reader *rd = &h->rd;
	const struct pt_map *m = &h->map;
	uint32_t n = lanes_readable(rd, m);
	if (grow_cursors(rd, n) != 0)
		n = rd->ncur;
	for (uint32_t i = 0; i < n; i++) {
		struct pt_cursor *cur = &rd->cur[i];
		if (cur->state == CUR_READY)
			continue;
		int st = cur->state == CUR_BROKEN ? lane_retry(rd, m, i, LOOK_RELOAD)
		                                   : lane_look(rd, m, i, LOOK_RELOAD);
		if (st == CUR_READY) {
			heap_push(rd, i);
			continue;
		}
		if (st == CUR_BROKEN)
			report_broken(h, cur);
		stage_release(rd, cur);
	}
}

/* Whether the calling thread has recorded into this stream since the
 * reader last looked at its lane: its own events are visible at once. */
static int own_lane_moved(struct pt_source *h)
{
	if (h->slot < 0)
		return 0;
	struct pt_thread *t = pt_thread_self();
	struct pt_wlane *w = t ? &t->lanes[h->slot] : NULL;
	if (!w || w->gen != pt_proc.attached[h->slot].gen || w->lane >= h->rd.ncur)
		return w && w->gen == pt_proc.attached[h->slot].gen; /* a lane the reader has not met */
	struct pt_cursor *cur = &h->rd.cur[w->lane];
	if (cur->state == CUR_READY)
		return 0;
	/* The cursor's chunk, or none (PT_NONE): the writer is past it then. */
	const struct pt_chunk *ch = pt_chunk_get(&h->map, cur->chunk);
	return !ch || pt_wlane_past(w, ch, cur->end);
}

/* Whether no lane has a writer any more (every owner gave its lane back):
 * looking at the lanes then slows nobody down. */
static int writers_gone(struct pt_source *h)
{
	const struct pt_map *m = &h->map;
	for (uint32_t i = 0; i < h->rd.ncur; i++) /* cursors: below lanes_readable */
		if (h->rd.cur[i].state != CUR_BROKEN &&
		    atomic_load_explicit(&pt_lane_at(m, i)->owner, memory_order_relaxed))
			return 0;
	return atomic_load_explicit(&pt_hdr(m)->nlanes, memory_order_relaxed) <= h->rd.ncur;
}

/* The losses counted in the stream's header.  A drain takes them once:
 * those counted meanwhile are the next drain's, so that a target counting
 * losses without pause cannot keep a drain (a clear, a keeper's flush)
 * going. */
static void take_overflow(struct pt_reader *rd, struct pt_stream_hdr *hdr)
{
	if (rd->draining && rd->ovf_drain == rd->drain_no)
		return;
	/* Pairs with the release fetch-add of ovf_count in pt_note_loss (lanes.c):
	 * the ovf_ts it lowered first is seen. */
	if (!atomic_load_explicit(&hdr->ovf_count, memory_order_acquire))
		return;
	if (rd->draining)
		rd->ovf_drain = rd->drain_no;
	rd->ovf_pending += atomic_exchange_explicit(&hdr->ovf_count, 0, memory_order_acq_rel);
	uint64_t ts = atomic_exchange_explicit(&hdr->ovf_ts, UINT64_MAX, memory_order_relaxed);
	if (ts < rd->ovf_raw)
		rd->ovf_raw = ts;
	/* A loss counted whose time an earlier exchange took (the writer
	 * lowers ovf_ts before it counts): it happened after that time and
	 * before now; the last gather is the closest time known. */
	if (rd->ovf_raw == UINT64_MAX)
		rd->ovf_raw = rd->gather_raw;
}

enum { SRC_NONE, SRC_LANE, SRC_CTL, SRC_OVF };

/* The oldest of: the heap's top, the controller's next event, a pending
 * overflow.  *raw its time. */
static int oldest_source(struct pt_source *h, uint64_t *raw)
{
	struct pt_reader *rd = &h->rd;
	int src = SRC_NONE;
	*raw = UINT64_MAX;
	if (rd->nheap) {
		src = SRC_LANE;
		*raw = rd->cur[rd->heap[0]].ts;
	}
	if (h->ctl && !rd->ctl_ready)
		rd->ctl_ready = pt_ctl_peek(h->ctl, &rd->ctl_next, &rd->ctl_pos);
	if (rd->ctl_ready && (src == SRC_NONE || rd->ctl_next.raw < *raw)) {
		src = SRC_CTL;
		*raw = rd->ctl_next.raw;
	}
	if (rd->ovf_pending && (src == SRC_NONE || rd->ovf_raw <= *raw)) {
		src = SRC_OVF;
		*raw = rd->ovf_raw;
	}
	return src;
}

static int emit_ctl(struct pt_source *h, struct pt_rawev *e, void *data, size_t num_bytes,
                    size_t *data_len)
{
	struct pt_ctl_event c = h->rd.ctl_next;
	h->rd.ctl_ready = 0;
	if (!pt_ctl_consume(h->ctl, h->rd.ctl_pos))
		return 0; /* dropped by a writer of a full LOOP stream */
	struct pt_caller who = {c.pid, c.tid, c.thread, c.pc};
	fill_system(h, e, c.id, c.raw, &who);
	copy_out(data, num_bytes, c.data, c.len > PT_CTL_DATA_MAX ? (uint32_t)PT_CTL_DATA_MAX : c.len,
	         data_len, &e->truncation);
	return 1;
}

/* Nothing more for now: an UNTIL_FULL stream that stopped itself restarts,
 * a stream shut down while full says so.  1 when that produced events. */
static int at_end(struct pt_source *h, uintptr_t pc)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	/* Pairs with the release CAS of state in stream_full (writer.c): full_ts,
	 * full_pid and full_pc are the finder's.  DEAD and ended_full pair with
	 * the exchange and the store in pt_stream_end (stream.c). */
	uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
	/* A drain that stops at a time before the stream filled up has not
	 * read everything yet: the next one restarts it. */
	if (state == PT_ST_FULL && h->rd.lanes_off &&
	    atomic_load_explicit(&hdr->full_ts, memory_order_relaxed) > h->rd.until)
		return 0;
	if (state == PT_ST_FULL)
		restart_full_stream(h, pc);
	else if (state == PT_ST_DEAD && !h->rd.end_reported &&
	         atomic_load_explicit(&hdr->ended_full, memory_order_acquire))
		report_end_full(h);
	return h->rd.nsynth != 0;
}

int pt_read_raw(struct pt_source *h, struct pt_rawev *e, void *data, size_t num_bytes,
                size_t *data_len, int live, uintptr_t pc)
{
	struct pt_reader *rd = &h->rd;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	int gathered = 0;
	e->ns = 0;
	e->cpu = PT_CPU_NONE;
	if (atomic_load_explicit(&hdr->state, memory_order_relaxed) != PT_ST_RUNNING)
		live = 0;
	/* Each turn either returns or lost a race with a writer taking a
	 * chunk; a process scribbling on the stream could make that last, so
	 * the call gives up (nothing available) after many turns. */
	for (int turn = 0; turn < 4096; turn++) {
		if (rd->nsynth) {
			emit_synth(h, e, data, num_bytes, data_len);
			return 1;
		}
		take_overflow(rd, hdr);
		uint64_t raw;
		int src = oldest_source(h, &raw);
		/* The lanes' events are known as of the last gather: anything
		 * newer is handed out only once no lane can hold an older one. */
		if (!gathered && (src == SRC_NONE || (src != SRC_LANE && raw > rd->gather_raw))) {
			uint64_t now = pt_clock_raw(h->map.clock);
			if (!live || now - rd->gather_raw >= rd->poll_ticks || own_lane_moved(h) ||
			    writers_gone(h)) {
				rd->gather_raw = now;
				if (!rd->lanes_off)
					gather(h);
				gathered = 1;
				continue;
			}
			return 0;
		}
		if (src == SRC_NONE) {
			if (at_end(h, pc))
				continue;
			return 0;
		}
		if (raw > rd->until)
			return 0; /* the next drain's (UINT64_MAX outside drains) */
		if (src == SRC_OVF) {
			struct pt_caller none = {0, 0, 0, 0};
			fill_system(h, e, POSIX_TRACE_OVERFLOW, rd->ovf_raw, &none);
			*data_len = 0;
			rd->ovf_pending = 0;
			rd->ovf_raw = UINT64_MAX;
			e->resume_due = rd->lanes_off && !pt_source_filtered(h, POSIX_TRACE_RESUME);
			rd->resume_pending = !rd->lanes_off;
			if (pt_source_filtered(h, POSIX_TRACE_OVERFLOW))
				continue;
			return 1;
		}
		if (rd->resume_pending) {
			rd->resume_pending = 0;
			push_synth(h, POSIX_TRACE_RESUME, raw, NULL, 0, NULL);
			continue;
		}
		if (src == SRC_CTL) {
			if (emit_ctl(h, e, data, num_bytes, data_len))
				return 1;
			continue;
		}
		uint32_t i = rd->heap[0];
		consume(h, &rd->cur[i], e, data, num_bytes, data_len);
		int next = lane_look_cached(rd, &h->map, i);
		if (next == CUR_READY) {
			sift_down(rd, 0); /* the lane stays, further down by its new time */
		} else {
			heap_pop(rd);
			if (next == CUR_BROKEN)
				report_broken(h, &rd->cur[i]);
		}
		return 1;
	}
	return 0;
}

/* Whether the controller's filter excludes id: every event the controller,
 * its keeper or its reader records itself is decided by this, never by
 * the stream header's filter, which traced processes can write. */
int pt_source_filtered(const struct pt_source *s, trace_event_id_t id)
{
	if (!s->ctl || id >= PT_NEVENT_IDS)
		return 0;
	/* Numbers only: relaxed (the filter is written by posix_trace_set_filter
	 * under the handle's lock, or read by the keeper as it is). */
	uint64_t w = atomic_load_explicit(&s->ctl->filter[id / 64], memory_order_relaxed);
	return (int)((w >> (id % 64)) & 1);
}

int pt_read_next(struct pt_source *h, struct posix_trace_event_info *ev,
                 struct posixtrace_event_ext *ext, void *data, size_t num_bytes, size_t *data_len,
                 int live, uintptr_t pc)
{
	struct pt_rawev e;
	if (!pt_read_raw(h, &e, data, num_bytes, data_len, live, pc))
		return 0;
	memset(ev, 0, sizeof *ev);
	memset(ext, 0, sizeof *ext);
	struct pt_idpair ids;
	if (pt_pidmap_translate(&h->rd.ids, e.ns, &e.who, &ids) > 0) {
		ext->posixtrace_ns_pid = ids.local_pid;
		ext->posixtrace_ns_tid = e.who.tid ? ids.local_tid : 0;
		ext->posixtrace_pidns = ids.ns;
	}
	ev->posix_event_id = e.id;
	ev->posix_pid = e.who.pid;
	ev->posix_thread_id = (pthread_t)e.who.thread;
	ev->posix_prog_address = (void *)(uintptr_t)e.pc;
	ev->posix_truncation_status = e.truncation;
	pt_ns_to_timespec(&h->map, e.real_ns, &ev->posix_timestamp);
	ext->posixtrace_tid = e.who.tid;
	memcpy(ext->posixtrace_comm, e.who.comm, PT_COMM_SIZE);
	if (pt_cpu_known(e.cpu)) {
		ext->posixtrace_cpu = e.cpu;
		ext->posixtrace_cpu_valid = 1;
	}
	return 1;
}

/* ---- writers of other pid namespaces ------------------------------------- */

void pt_read_learn_writers(struct pt_source *h)
{
	const struct pt_map *m = &h->map;
	uint32_t n = lanes_readable(&h->rd, m);
	for (uint32_t i = 0; i < n; i++) {
		/* Values only: the writers' claims, like the ids they write. */
		uint64_t ns = atomic_load_explicit(&pt_lane_at(m, i)->owner_ns, memory_order_relaxed);
		uint64_t owner = atomic_load_explicit(&pt_lane_at(m, i)->owner, memory_order_relaxed);
		struct pt_owner who = {.pid = (int32_t)(owner >> 32)};
		if (owner && ns && ns != h->rd.ids.own_ns)
			pt_pidmap_translate(&h->rd.ids, ns, &who, NULL);
	}
}

/* ---- whole stages (the keeper) ------------------------------------------- */

uint32_t pt_read_lanes(struct pt_source *h)
{
	struct pt_reader *rd = &h->rd;
	uint32_t n = lanes_readable(rd, &h->map);
	return grow_cursors(rd, n) == 0 ? n : rd->ncur;
}

/* The staged records of cur from s_off on, as one stage: the context they
 * start from, their events and times (scanned when the stage was cut, or
 * now for what a reader of events left), and the context after them. */
static void hand_out(struct pt_reader *rd, const struct pt_map *m, uint32_t i,
                     struct pt_stage *st)
{
	struct pt_cursor *cur = &rd->cur[i];
	uint32_t start = cur->off - (cur->s_len - cur->s_off);
	memset(st, 0, sizeof *st);
	st->rec = cur->stage + cur->s_off;
	st->len = cur->s_len - cur->s_off;
	st->lane = i;
	st->start = cur->ctx;
	if (cur->handed_seq == cur->seq && start == cur->handed_end)
		st->how = PT_STAGE_AFTER;
	else
		st->how = start == PT_CHUNK_HDR && cur->ctx.pc == 0 ? PT_STAGE_CHUNK_START : PT_STAGE_APART;
	if (!cur->scanned || cur->s_off) {
		cur->scan.ctx = cur->ctx;
		cur->scan.until = UINT64_MAX; /* claimed already: all of it */
		pt_rec_scan(cur->stage, cur->s_off, cur->s_len, m->max_data, &cur->scan);
	}
	cur->scanned = 0;
	st->events = cur->scan.events;
	st->max_id = cur->scan.max_id;
	st->images = cur->scan.images;
	st->first_raw = cur->scan.first_raw;
	st->last_raw = cur->scan.last_raw;
	cur->ctx = cur->scan.ctx;
	cur->handed_seq = cur->seq;
	cur->handed_end = cur->off;
	cur->s_off = cur->s_len;
	if (st->events)
		cur->reported = 0; /* a run of damage ends with an event */
}

int pt_read_stage(struct pt_source *h, uint32_t i, struct pt_stage *st)
{
	struct pt_reader *rd = &h->rd;
	const struct pt_map *m = &h->map;
	if (i >= rd->ncur)
		return 0;
	struct pt_cursor *cur = &rd->cur[i];
	rd->claims = h->ctl ? &h->ctl->claims : NULL;
	if (cur->state == CUR_READY)
		return 0; /* an event a reader of events has: not taken here */
	int look = cur->state == CUR_BROKEN ? lane_retry(rd, m, i, LOOK_RELOAD | LOOK_STAGE)
	                                    : lane_look(rd, m, i, LOOK_RELOAD | LOOK_STAGE);
	if (look == CUR_STAGED) {
		hand_out(rd, m, i, st);
		cur->state = CUR_IDLE;
		return 1;
	}
	if (look == CUR_BROKEN)
		report_broken(h, cur);
	stage_release(rd, cur);
	return 0;
}

/* Whether a drain would find something: a lane whose head moved, whose
 * chunk has records past the cursor or a next chunk, or an event of the
 * library's own other than FLUSH_START and FLUSH_STOP.  Nothing is taken. */
int pt_read_pending(struct pt_source *h)
{
	struct pt_reader *rd = &h->rd;
	const struct pt_map *m = &h->map;
	uint32_t n = pt_read_lanes(h);
	for (uint32_t i = 0; i < n; i++) {
		struct pt_cursor *cur = &rd->cur[i];
		if (cur->state == CUR_READY || cur->s_off < cur->s_len)
			return 1;
		/* Numbers compared only, nothing read through them: relaxed. */
		uint64_t hd_untrusted = atomic_load_explicit(&pt_lane_at(m, i)->head, memory_order_relaxed);
		if (hd_untrusted != cur->head && pt_head_chunk(hd_untrusted) != PT_NONE)
			return 1;
		struct pt_chunk *ch = pt_chunk_get(m, cur->chunk);
		if (cur->state == CUR_BROKEN || !ch)
			continue;
		if ((uint32_t)atomic_load_explicit(&ch->commit, memory_order_relaxed) > cur->off ||
		    atomic_load_explicit(&ch->next, memory_order_relaxed) != PT_NONE)
			return 1;
	}
	struct pt_ctl_event e;
	uint32_t pos;
	return h->ctl && pt_ctl_peek(h->ctl, &e, &pos) && e.id != POSIX_TRACE_FLUSH_START &&
	       e.id != POSIX_TRACE_FLUSH_STOP;
}

void pt_read_begin_drain(struct pt_source *h, uint64_t until)
{
	struct pt_reader *rd = &h->rd;
	if (++rd->drain_no == 0)
		++rd->drain_no; /* 0 marks a chunk no drain entered */
	rd->draining = 1;
	rd->until = until;
}

void pt_read_end_drain(struct pt_source *h)
{
	h->rd.draining = 0;
	h->rd.until = UINT64_MAX;
}

/* posix_trace_clear: every event recorded so far is dropped. */
void pt_discard_all(struct pt_source *h)
{
	struct posix_trace_event_info ev;
	struct posixtrace_event_ext ext;
	size_t len;
	struct pt_reader *rd = &h->rd;
	/* Up to now: a writer that keeps posting while a slow reader looks at
	 * many lanes would otherwise keep the drain going. */
	pt_read_begin_drain(h, pt_clock_raw(h->map.clock));
	while (pt_read_next(h, &ev, &ext, NULL, 0, &len, 0, 0))
		;
	pt_read_end_drain(h);
	/* Events a lane had ready when the loop gave up go too, and the lane
	 * is no longer in the heap. */
	for (uint32_t k = 0; k < rd->nheap; k++) {
		struct pt_cursor *cur = &rd->cur[rd->heap[k]];
		cur->s_off = cur->s_len;
		cur->state = CUR_IDLE;
	}
	rd->nheap = 0;
	rd->nsynth = 0;
	rd->ovf_pending = 0;
	rd->ovf_raw = UINT64_MAX;
	rd->resume_pending = 0;
	rd->ctl_ready = 0;
	if (h->ctl)
		pt_ctl_discard_all(h->ctl);
}
