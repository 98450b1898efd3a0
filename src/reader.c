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
#include "handle.h"
#include "writer.h"

/*
 * A chunk can be taken away from under the reader by a LOOP writer (the
 * head CAS then fails and the copy is thrown away), so these reads may race
 * with that writer's stores: seqlock-style, validated afterwards.  Under
 * ThreadSanitizer they are done by hand so the validated race is not
 * reported as a bug.
 */
#if defined(__SANITIZE_THREAD__)
#define PT_RACY_READS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PT_RACY_READS 1
#endif
#endif
#ifdef PT_RACY_READS
__attribute__((no_sanitize("thread"))) static void racy_copy(void *dst, const void *src, size_t n)
{
	volatile const unsigned char *s = src;
	unsigned char *d = dst;
	while (n--)
		*d++ = *s++;
}
#else
static void racy_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif

enum { CUR_LOOK = 0, CUR_READY, CUR_IDLE, CUR_BROKEN };

#define POLL_NS 100000u /* an idle lane is looked at again after this long */
#define MAX_WALK 100000u
#define STAGE_BYTES 8192u /* claimed from a lane at once, at most */

int pt_reader_init(struct pt_reader *rd, const struct pt_map *m)
{
	memset(rd, 0, sizeof *rd);
	pt_conv_init(&rd->conv, m->clock);
	rd->poll_ticks = m->clock == PT_CLOCK_TSC ? rd->conv.ticks_1ms / (1000000u / POLL_NS) : POLL_NS;
	rd->ovf_raw = UINT64_MAX;
	size_t extra = m->max_chunks - m->base_chunks;
	rd->chunk_ok = calloc(extra / 8 + 1, 1);
	rd->page_ok = calloc(m->max_lanes / PT_LANES_PER_PAGE / 8 + 1, 1);
	if (!rd->chunk_ok || !rd->page_ok) {
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
	rd->cur = NULL;
	rd->heap = NULL;
	rd->chunk_ok = rd->page_ok = NULL;
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

static uint32_t lanes_readable(struct pt_reader *rd, const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	/* A count only: new_lane (lanes.c) adds before the lane's page is
	 * committed, so pages are checked below; relaxed would do. */
	uint32_t n = atomic_load_explicit(&h->nlanes, memory_order_acquire);
	if (n > m->max_lanes)
		n = m->max_lanes;
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

/* ---- one lane ------------------------------------------------------------- */

static struct pt_lane *lane(const struct pt_map *m, uint32_t i) { return pt_lane_at(m, i); }

static void enter_chunk(struct pt_cursor *cur, const struct pt_map *m, uint32_t c)
{
	struct pt_chunk *ch = pt_chunk_at(m, c);
	racy_copy(&cur->base, &ch->base, sizeof cur->base);
	racy_copy(&cur->owner, &ch->owner, sizeof cur->owner);
	cur->owner.comm[PT_COMM_SIZE - 1] = '\0';
	cur->chunk = c;
	cur->off = cur->end = PT_CHUNK_HDR;
	cur->end_known = 0;
	cur->s_off = cur->s_len = 0;
	cur->pc = 0;
}

/* A meta record (a new owner, a new clock base): applied; 0 if it is not
 * one.  After it, the next event carries its address again (put_meta in
 * writer.c). */
static int apply_meta(struct pt_cursor *cur, uint64_t w0, const unsigned char *data)
{
	uint32_t id = pt_rec_id(w0), len = pt_rec_len(w0);
	if (w0 & PT_REC_SAMEPC)
		return 0;
	cur->pc = 0;
	if (id == PT_ID_OWNER && len == sizeof(struct pt_owner_rec)) {
		struct pt_owner_rec o;
		racy_copy(&o, data, sizeof o);
		cur->base = o.base;
		cur->owner = o.owner;
		cur->owner.comm[PT_COMM_SIZE - 1] = '\0';
		return 1;
	}
	if (id == PT_ID_TIME && len == sizeof(uint64_t)) {
		racy_copy(&cur->base, data, sizeof cur->base);
		return 1;
	}
	return 0;
}

static int is_event(const struct pt_map *m, uint32_t id, uint32_t len)
{
	return id >= PT_USER_FIRST && id < PT_NEVENT_IDS && len <= m->max_data;
}

/* Applies the staged meta records up to the next event.  The stage holds
 * whole records (stage_more), in private memory. */
enum { PARSE_EVENT, PARSE_END, PARSE_BAD };
static int parse_stage(struct pt_cursor *cur, const struct pt_map *m)
{
	while (cur->s_off < cur->s_len) {
		uint64_t w0;
		memcpy(&w0, cur->stage + cur->s_off, sizeof w0);
		uint32_t id = pt_rec_id(w0), len = pt_rec_len(w0);
		uint64_t size = pt_rec_size(w0);
		if (size > cur->s_len - cur->s_off)
			return PARSE_BAD;
		if (is_event(m, id, len)) {
			cur->ts = cur->base + pt_rec_delta(w0);
			return PARSE_EVENT;
		}
		if (!apply_meta(cur, w0, cur->stage + cur->s_off + PT_REC_HDR))
			return PARSE_BAD;
		cur->s_off += (uint32_t)size;
	}
	return PARSE_END;
}

/* Puts the cursor where the lane's head says, walking the chunk from its
 * start to learn the writer and clock base there.  What it reads may be
 * changing under it (a LOOP writer taking the chunk): the claim that
 * follows (stage_more) fails then, and the walk is done again. */
static int resync(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur, uint64_t hd)
{
	uint32_t c = pt_head_chunk(hd), off = pt_head_off(hd);
	cur->head = hd;
	cur->state = CUR_IDLE;
	cur->end_known = 0;
	cur->s_off = cur->s_len = 0;
	if (c == PT_NONE) {
		cur->chunk = PT_NONE;
		return 0;
	}
	if (!chunk_ok(rd, m, c) || off < PT_CHUNK_HDR || off > m->chunk_size || off % 8)
		return EINVAL;
	enter_chunk(cur, m, c);
	const unsigned char *chunk = (const unsigned char *)pt_chunk_at(m, c);
	uint32_t pos = PT_CHUNK_HDR;
	for (uint32_t steps = 0; pos < off && steps < MAX_WALK; steps++) {
		uint64_t w0;
		if (off - pos < PT_REC_HDR_MIN)
			return EINVAL;
		racy_copy(&w0, chunk + pos, sizeof w0);
		uint32_t id = pt_rec_id(w0), len = pt_rec_len(w0);
		uint64_t size = pt_rec_size(w0);
		if (size > off - pos)
			return EINVAL;
		if (is_event(m, id, len)) {
			if (!(w0 & PT_REC_SAMEPC))
				racy_copy(&cur->pc, chunk + pos + 8, sizeof cur->pc);
		} else if (!apply_meta(cur, w0, chunk + pos + PT_REC_HDR)) {
			return EINVAL;
		}
		pos += (uint32_t)size;
	}
	if (pos != off)
		return EINVAL;
	cur->off = cur->end = off;
	return 0;
}

/* A lane found inconsistent: a head that moved means a LOOP writer took
 * the chunk (look again); one that did not means broken memory. */
static int broken_or_moved(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur,
                           uint32_t i)
{
	/* Pairs with the release store of head in start_chunk (writer.c) and the
	 * head CAS in pt_steal_oldest (lanes.c): resync reads the chunk named. */
	uint64_t hd = atomic_load_explicit(&lane(m, i)->head, memory_order_acquire);
	if (hd != cur->head && resync(rd, m, cur, hd) == 0)
		return 0;
	cur->state = CUR_BROKEN;
	return EINVAL;
}

static void retire(const struct pt_map *m, uint32_t c)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	pt_held_sub(h, atomic_load_explicit(&pt_chunk_at(m, c)->event_bytes, memory_order_relaxed));
	pt_pool_push(m, c);
	if (atomic_load_explicit(&h->full, memory_order_relaxed) &&
	    atomic_load_explicit(&h->state, memory_order_relaxed) != PT_ST_FULL)
		atomic_store_explicit(&h->full, 0, memory_order_relaxed);
}

/* Past the end of a sealed chunk: the lane's next chunk, and this one goes
 * back to the pool.  0 when the cursor moved on. */
static int next_chunk(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur,
                      uint32_t i, uint32_t next)
{
	if (next >= m->max_chunks || !chunk_ok(rd, m, next))
		return broken_or_moved(rd, m, cur, i);
	uint64_t hd = cur->head;
	uint64_t repl = pt_head_pack(next, PT_CHUNK_HDR, pt_head_tag(hd) + 1);
	/* Acquire on failure pairs with the head CAS in pt_steal_oldest (lanes.c):
	 * resync reads the chunk the thief moved the head to. */
	if (atomic_compare_exchange_strong_explicit(&lane(m, i)->head, &hd, repl, memory_order_acq_rel,
	                                            memory_order_acquire)) {
		uint32_t old = cur->chunk;
		enter_chunk(cur, m, next);
		cur->head = repl;
		retire(m, old);
		return 0;
	}
	return resync(rd, m, cur, hd) == 0 ? 0 : broken_or_moved(rd, m, cur, i);
}

/* Claims the next committed records of the lane: copies them into the
 * cursor's private stage, whole records only, then moves the lane's head
 * past them with one compare-and-swap.  When that succeeds no LOOP writer
 * took the chunk since the cursor's head was loaded, so the copy is what
 * the writer committed (a thief writes into a chunk only after taking it
 * with its own compare-and-swap on the head: pairs with pt_steal_oldest
 * in lanes.c); the events are the reader's from then on, one atomic operation
 * for a whole stage instead of one per event.  0, or EAGAIN when the head
 * moved (the cursor was put where it is now), or EINVAL. */
static int stage_more(struct pt_reader *rd, const struct pt_map *m, struct pt_cursor *cur,
                      uint32_t i)
{
	if (!cur->stage) {
		size_t cap = pt_record_size(m->max_data);
		cur->stage_cap = (uint32_t)(cap > STAGE_BYTES ? cap : STAGE_BYTES);
		cur->stage = malloc(cur->stage_cap);
		if (!cur->stage)
			return EAGAIN; /* looked at again by the next call */
	}
	uint32_t want = cur->end - cur->off;
	if (want > cur->stage_cap)
		want = cur->stage_cap;
	racy_copy(cur->stage, (const unsigned char *)pt_chunk_at(m, cur->chunk) + cur->off, want);
	uint32_t cut = 0;
	while (want - cut >= PT_REC_HDR_MIN) {
		uint64_t w0;
		memcpy(&w0, cur->stage + cut, sizeof w0);
		uint64_t size = pt_rec_size(w0);
		if (size > want - cut)
			break;
		cut += (uint32_t)size;
	}
	uint64_t hd = cur->head;
	if (!cut)
		return broken_or_moved(rd, m, cur, i) ? EINVAL : EAGAIN;
	uint64_t repl = pt_head_pack(cur->chunk, cur->off + cut, pt_head_tag(hd));
	/* Release: the copy above comes first; pairs with the head CAS in
	 * pt_steal_oldest (lanes.c), after which the thief writes. */
	if (!atomic_compare_exchange_strong_explicit(&lane(m, i)->head, &hd, repl, memory_order_acq_rel,
	                                             memory_order_acquire))
		return resync(rd, m, cur, hd) == 0 ? EAGAIN : EINVAL;
	cur->head = repl;
	cur->off += cut;
	cur->s_off = 0;
	cur->s_len = cut;
	return 0;
}

/* Finds the next event of lane i.  The writer's commit word (a line the
 * writer writes per event) of the chunk it writes in is loaded again only
 * with `reload`, during a gather; the chunks the writer has left behind are
 * followed at any time, so that what a gather saw committed is all found. */
static int lane_look(struct pt_reader *rd, const struct pt_map *m, uint32_t i, int reload)
{
	struct pt_cursor *cur = &rd->cur[i];
	for (uint32_t steps = 0; steps < m->max_chunks + 4096; steps++) {
		if (cur->state == CUR_READY || cur->state == CUR_BROKEN)
			return (int)cur->state;
		if (cur->s_off < cur->s_len) {
			int r = parse_stage(cur, m);
			if (r == PARSE_EVENT) {
				cur->state = CUR_READY;
				return CUR_READY;
			}
			if (r == PARSE_BAD)
				break; /* claimed, so written that way */
		}
		/* Pairs with the release store of head in start_chunk (writer.c) and
		 * the head CAS in pt_steal_oldest (lanes.c). */
		uint64_t hd = atomic_load_explicit(&lane(m, i)->head, memory_order_acquire);
		if ((hd != cur->head || cur->chunk == PT_NONE) && resync(rd, m, cur, hd) != 0)
			break;
		if (cur->chunk == PT_NONE)
			return CUR_IDLE;
		if (cur->off < cur->end) {
			int err = stage_more(rd, m, cur, i);
			if (err == EINVAL)
				break;
			if (err == EAGAIN && !cur->stage)
				return CUR_IDLE;
			continue;
		}
		struct pt_chunk *ch = pt_chunk_at(m, cur->chunk);
		uint32_t end = cur->end;
		if (reload || !cur->end_known) {
			/* Pairs with the release store of commit in append_record
			 * (writer.c). */
			end = (uint32_t)atomic_load_explicit(&ch->commit, memory_order_acquire);
			cur->end_known = 1;
			if (end > m->chunk_size || end < cur->off) {
				if (broken_or_moved(rd, m, cur, i))
					return CUR_BROKEN;
				continue;
			}
			if (end > cur->end) {
				cur->end = end;
				continue;
			}
		}
		/* Pairs with the release store of next in start_chunk (writer.c). */
		uint32_t next = atomic_load_explicit(&ch->next, memory_order_acquire);
		if (next == PT_NONE) {
			cur->state = CUR_IDLE;
			return CUR_IDLE;
		}
		/* Sealed: commit is final now; look again for records
		 * committed since it was last loaded (pairs with the release
		 * store of commit in append_record, writer.c). */
		uint32_t final = (uint32_t)atomic_load_explicit(&ch->commit, memory_order_acquire);
		if (final != end) {
			if (final > m->chunk_size || final < end) {
				if (broken_or_moved(rd, m, cur, i))
					return CUR_BROKEN;
				continue;
			}
			cur->end = final;
			continue;
		}
		if (next_chunk(rd, m, cur, i, next))
			return CUR_BROKEN;
	}
	cur->state = CUR_BROKEN; /* bad records, or a cycle of chunks */
	return CUR_BROKEN;
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

static void push_synth(struct pt_handle *h, trace_event_id_t id, uint64_t raw, const void *data,
                       uint32_t len, const struct pt_caller *who)
{
	struct pt_reader *rd = &h->rd;
	if (rd->nsynth >= PT_SYNTH_MAX || pt_filtered(pt_hdr(&h->map), id))
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
		racy_copy(data, src, n);
	*data_len = n;
}

void pt_ns_to_timespec(const struct pt_map *m, uint64_t real_ns, struct timespec *ts)
{
	(void)m;
	if (real_ns > (uint64_t)INT64_MAX)
		real_ns = 0;
	ts->tv_sec = (time_t)(real_ns / 1000000000u);
	ts->tv_nsec = (long)(real_ns % 1000000000u);
}

/* The CLOCK_REALTIME scale of the stream's creation.  Unsigned: a time
 * from another process may be anything. */
uint64_t pt_raw_to_real(struct pt_reader *rd, const struct pt_map *m, uint64_t raw)
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
	if (mono >= m->base_mono_ns)
		return m->base_real_ns + (mono - m->base_mono_ns);
	return m->base_real_ns > m->base_mono_ns - mono ? m->base_real_ns - (m->base_mono_ns - mono) : 0;
}

static void fill_system(struct pt_handle *h, struct pt_rawev *e, trace_event_id_t id,
                        uint64_t raw, const struct pt_caller *who)
{
	memset(e, 0, sizeof *e);
	e->id = id;
	e->who.pid = who->pid;
	e->who.tid = who->tid;
	e->who.thread = who->thread;
	e->pc = who->pc;
	e->truncation = POSIX_TRACE_NOT_TRUNCATED;
	e->real_ns = pt_raw_to_real(&h->rd, &h->map, raw);
}

static void emit_synth(struct pt_handle *h, struct pt_rawev *e, void *data, size_t num_bytes,
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
static void restart_full_stream(struct pt_handle *h, uintptr_t pc)
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
static void report_end_full(struct pt_handle *h)
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

/* Copies the lane's ready event out of the stage and consumes it. */
static void consume(struct pt_handle *h, struct pt_cursor *cur, struct pt_rawev *e, void *data,
                    size_t num_bytes, size_t *data_len)
{
	const unsigned char *p = cur->stage + cur->s_off;
	uint64_t w0;
	memcpy(&w0, p, 8);
	uint32_t len = pt_rec_len(w0), hdr = pt_rec_hdr(w0);
	if (hdr == PT_REC_HDR)
		memcpy(&cur->pc, p + 8, 8);
	e->id = pt_rec_id(w0);
	e->truncation = (w0 & PT_REC_TRUNCATED) ? POSIX_TRACE_TRUNCATED_RECORD
	                                         : POSIX_TRACE_NOT_TRUNCATED;
	e->pc = cur->pc;
	e->who = cur->owner;
	e->real_ns = pt_raw_to_real(&h->rd, &h->map, cur->ts);
	copy_out(data, num_bytes, p + hdr, len, data_len, &e->truncation);
	cur->s_off += (uint32_t)pt_rec_size(w0);
	cur->state = CUR_IDLE;
}

static void report_broken(struct pt_handle *h)
{
	int err = EINVAL;
	push_synth(h, POSIX_TRACE_ERROR, pt_clock_raw(h->map.clock), &err, sizeof err, NULL);
}

/* Looks at every lane that has no event ready; lanes found broken are
 * reported once with POSIX_TRACE_ERROR (EINVAL). */
static void gather(struct pt_handle *h)
{
	struct pt_reader *rd = &h->rd;
	const struct pt_map *m = &h->map;
	uint32_t n = lanes_readable(rd, m);
	if (grow_cursors(rd, n) != 0)
		n = rd->ncur;
	for (uint32_t i = 0; i < n; i++) {
		struct pt_cursor *cur = &rd->cur[i];
		if (cur->state == CUR_READY || cur->state == CUR_BROKEN)
			continue;
		if (lane_look(rd, m, i, 1) == CUR_READY)
			heap_push(rd, i);
		else if (cur->state == CUR_BROKEN)
			report_broken(h);
	}
}

/* Whether the calling thread has recorded into this stream since the
 * reader last looked at its lane: its own events are visible at once. */
static int own_lane_moved(struct pt_handle *h)
{
	if (h->slot < 0)
		return 0;
	struct pt_thread *t = pt_thread_self();
	struct pt_wlane *w = t ? &t->lanes[h->slot] : NULL;
	if (!w || w->gen != pt_proc.attached[h->slot].gen || w->lane >= h->rd.ncur)
		return w && w->gen == pt_proc.attached[h->slot].gen; /* a lane the reader has not met */
	struct pt_cursor *cur = &h->rd.cur[w->lane];
	return cur->state != CUR_READY &&
	       (w->chunk != (unsigned char *)pt_chunk_at(&h->map, cur->chunk) || pt_wlane_end(w) > cur->end);
}

/* Whether no lane has a writer any more (every owner gave its lane back):
 * looking at the lanes then slows nobody down. */
static int writers_gone(struct pt_handle *h)
{
	const struct pt_map *m = &h->map;
	for (uint32_t i = 0; i < h->rd.ncur; i++)
		if (h->rd.cur[i].state != CUR_BROKEN &&
		    atomic_load_explicit(&lane(m, i)->owner, memory_order_relaxed))
			return 0;
	return atomic_load_explicit(&pt_hdr(m)->nlanes, memory_order_relaxed) <= h->rd.ncur;
}

static void take_overflow(struct pt_reader *rd, struct pt_stream_hdr *hdr)
{
	/* Pairs with the release fetch-add of ovf_count in pt_note_loss (lanes.c):
	 * the ovf_ts it lowered first is seen. */
	if (!atomic_load_explicit(&hdr->ovf_count, memory_order_acquire))
		return;
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
static int oldest_source(struct pt_handle *h, uint64_t *raw)
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

static int emit_ctl(struct pt_handle *h, struct pt_rawev *e, void *data, size_t num_bytes,
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
static int at_end(struct pt_handle *h, uintptr_t pc)
{
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	/* Pairs with the release CAS of state in stream_full (writer.c): full_ts,
	 * full_pid and full_pc are the finder's.  DEAD and ended_full pair with
	 * the exchange and the store in pt_stream_end (stream.c). */
	uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
	if (state == PT_ST_FULL)
		restart_full_stream(h, pc);
	else if (state == PT_ST_DEAD && !h->rd.end_reported &&
	         atomic_load_explicit(&hdr->ended_full, memory_order_acquire))
		report_end_full(h);
	return h->rd.nsynth != 0;
}

int pt_read_raw(struct pt_handle *h, struct pt_rawev *e, void *data, size_t num_bytes,
                size_t *data_len, int live, uintptr_t pc)
{
	struct pt_reader *rd = &h->rd;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	int gathered = 0;
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
		if (src == SRC_OVF) {
			struct pt_caller none = {0, 0, 0, 0};
			fill_system(h, e, POSIX_TRACE_OVERFLOW, rd->ovf_raw, &none);
			*data_len = 0;
			rd->ovf_pending = 0;
			rd->ovf_raw = UINT64_MAX;
			rd->resume_pending = 1;
			if (pt_filtered(hdr, POSIX_TRACE_OVERFLOW))
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
				report_broken(h);
		}
		return 1;
	}
	return 0;
}

int pt_read_next(struct pt_handle *h, struct posix_trace_event_info *ev,
                 struct posixtrace_event_ext *ext, void *data, size_t num_bytes, size_t *data_len,
                 int live, uintptr_t pc)
{
	struct pt_rawev e;
	if (!pt_read_raw(h, &e, data, num_bytes, data_len, live, pc))
		return 0;
	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = e.id;
	ev->posix_pid = e.who.pid;
	ev->posix_thread_id = (pthread_t)e.who.thread;
	ev->posix_prog_address = (void *)(uintptr_t)e.pc;
	ev->posix_truncation_status = e.truncation;
	pt_ns_to_timespec(&h->map, e.real_ns, &ev->posix_timestamp);
	memset(ext, 0, sizeof *ext);
	ext->posixtrace_tid = e.who.tid;
	memcpy(ext->posixtrace_comm, e.who.comm, PT_COMM_SIZE);
	return 1;
}

/* posix_trace_clear: every event recorded so far is dropped. */
void pt_discard_all(struct pt_handle *h)
{
	struct posix_trace_event_info ev;
	struct posixtrace_event_ext ext;
	size_t len;
	struct pt_reader *rd = &h->rd;
	for (uint64_t n = 0; n < (1ull << 40); n++)
		if (!pt_read_next(h, &ev, &ext, NULL, 0, &len, 0, 0))
			break;
	rd->nsynth = 0;
	rd->ovf_pending = 0;
	rd->ovf_raw = UINT64_MAX;
	rd->resume_pending = 0;
	rd->ctl_ready = 0;
	if (h->ctl)
		pt_ctl_discard_all(h->ctl);
}
