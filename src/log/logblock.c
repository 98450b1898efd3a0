/* SPDX-License-Identifier: MIT */
/*
 * The blocks of a trace log, format version 3 (logblock.h, logfmt.h,
 * docs/LOG-FORMAT.md), built in the writer's output buffer and sealed (both
 * CRCs computed, once) when full, at a sync and at the end.  The stream's
 * records come as stages the keeper checked: each is copied into a STAGES
 * block as it is (pt_logw_stage).  The keeper's own events are encoded one
 * by one into KEEPER blocks (pt_logw_event): the writer compares the
 * context, computes a time delta, stores two words and copies the data;
 * contexts, large time gaps, full blocks and full logs take the slow path.
 */
#include <errno.h>
#include <string.h>
#include "crc32c.h"
#include "logblock.h"
#include "logfmt.h"
#include "logio.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

static inline void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof v);
}

static inline uint64_t word(const void *p, size_t off)
{
	uint64_t v;
	memcpy(&v, (const unsigned char *)p + off, sizeof v);
	return v;
}

/* Word by word: an array copy would go through the stack and stall. */
static inline int same_ctx(const struct pt_log_ctx *a, const struct pt_log_ctx *b)
{
	return ((word(a, 0) ^ word(b, 0)) | (word(a, 8) ^ word(b, 8)) |
	        (word(a, 16) ^ word(b, 16)) | (word(a, 24) ^ word(b, 24))) == 0;
}

/* Copies exactly len bytes; short lengths with a few overlapping moves
 * rather than a call. */
static inline void copy_data(unsigned char *dst, const unsigned char *src, uint32_t len)
{
	if (len >= 8 && len <= 16) {
		uint64_t a = word(src, 0), b = word(src, len - 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	} else if (len >= 4 && len < 8) {
		uint32_t a, b;
		memcpy(&a, src, 4);
		memcpy(&b, src + len - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + len - 4, &b, 4);
	} else if (len) {
		memcpy(dst, src, len);
	}
}

void pt_logb_none(struct pt_logw *w)
{
	w->blk = NULL;
	w->pos = w->blk_end = w->out; /* no room: every event takes the slow path */
}

/* Starts a block of `type` at the end of the buffer.  Its end is where
 * the block size or the room of an UNTIL_FULL log ends it, so that one
 * comparison per event checks both.  A KEEPER block starts with its drain
 * number; a STAGES block's prefix is written by open_stages_block. */
void pt_logb_open(struct pt_logw *w, uint32_t type, uint64_t ts)
{
	if (w->out_len + w->block_size > w->out_cap)
		pt_logio_flush_full(w);
	w->blk = w->out + w->out_len;
	w->blk_type = type;
	w->pos = w->blk + PT_LOG_BLOCK_HDR;
	w->blk_end = w->blk + (w->room < w->block_size ? w->room : w->block_size);
	if (type == PT_LOG_KEEPER) {
		/* Events given outside any drain (no pt_logw_begin_drain yet):
		 * drain 0, which a reader never merges with another block, so
		 * they read back in the order given whatever their times. */
		put64(w->pos, w->ncal ? w->prog.drain : 0);
		w->pos += PT_LOG_KEEPER_PREFIX;
	}
	if (w->blk_end < w->pos)
		w->blk_end = w->pos;
	w->blk_records = 0;
	w->blk_stage_events = 0;
	w->blk_ts = type == PT_LOG_STAGES ? 0 : ts;
	w->last_ts = ts;
	w->last_pc = 0;
	w->ctx_cur = -1;
	w->nctx = 0;
	w->sec = NULL;
	w->blk_sections = 0;
	memset(w->ctx_hash, 0, sizeof w->ctx_hash);
}

/* The payload's first byte after what every block of its type starts
 * with: a block that holds nothing more is not sealed. */
static const unsigned char *block_first_record(const struct pt_logw *w)
{
	if (w->blk_type == PT_LOG_KEEPER)
		return w->blk + PT_LOG_BLOCK_HDR + PT_LOG_KEEPER_PREFIX;
	if (w->blk_type == PT_LOG_STAGES)
		return w->blk + PT_LOG_BLOCK_HDR + sizeof(struct pt_log_stages) +
		       (size_t)w->ncal * sizeof(struct pt_log_calpoint);
	return w->blk + PT_LOG_BLOCK_HDR;
}

/* Whether the block being filled ends short of the block size because the
 * log has no more room. */
static int block_cut_by_room(const struct pt_logw *w)
{
	return (size_t)(w->blk_end - w->blk) < w->block_size;
}

void pt_logb_seal(struct pt_logw *w, uint32_t type)
{
	unsigned char *payload = w->blk + PT_LOG_BLOCK_HDR;
	if (type == PT_LOG_STAGES) {
		struct pt_log_stages *pre = (struct pt_log_stages *)(void *)payload;
		pre->nsections = w->blk_sections;
	}
	struct pt_log_block b = {
	    .magic = PT_LOG_BLOCK_MAGIC,
	    .type = type,
	    .seq = w->prog.seq,
	    .ts_base = w->blk_ts,
	    .payload_len = (uint32_t)(w->pos - payload),
	    .nrecords = w->blk_records,
	};
	b.payload_crc = pt_crc32c(0, payload, b.payload_len);
	b.header_crc = pt_crc32c(0, &b, offsetof(struct pt_log_block, header_crc));
	memcpy(w->blk, &b, sizeof b);
	uint32_t len = PT_LOG_BLOCK_HDR + b.payload_len, padded = pt_log_pad8(len);
	memset(w->blk + len, 0, padded - len);
	w->room = w->room > padded ? w->room - padded : 0;
	size_t start = (size_t)(w->blk - w->out);
	if (w->layout == PT_LOG_RING) {
		/* Slots are block_size apart in the buffer as in the file; the
		 * gap between two blocks is written too, so it is zeroed. */
		memset(w->blk + padded, 0, w->block_size - padded);
		w->out_len = start + w->block_size;
		if (b.seq >= w->ring_slots) {
			w->prog.status.log_overrun = POSIX_TRACE_OVERRUN;
			w->prog.status.log_full = POSIX_TRACE_FULL;
		}
		uint64_t used = b.seq + 1 < w->ring_slots ? b.seq + 1 : w->ring_slots;
		w->prog.data_bytes = used * w->block_size;
	} else {
		w->out_len = start + padded;
		w->prog.write_off += padded;
		w->prog.data_bytes += padded;
	}
	w->prog.seq++;
	w->prog.blocks_written = w->prog.seq;
	w->prog.stage_events += w->blk_stage_events;
	w->blk_stage_events = 0;
	w->out_blocks++;
	pt_logb_none(w);
	if (w->out_len + w->block_size > w->out_cap)
		pt_logio_flush_full(w);
}

/* Seals the block being filled, if any record is in it. */
void pt_logb_close(struct pt_logw *w)
{
	if (!w->blk)
		return;
	if (w->pos > block_first_record(w))
		pt_logb_seal(w, w->blk_type);
	else
		pt_logb_none(w);
}

/* ---- events ------------------------------------------------------------- */

static uint32_t ctx_hash(const struct pt_log_ctx *c)
{
	uint32_t h = (uint32_t)c->tid * 2654435761u ^ (uint32_t)c->pid * 40503u ^
	             (uint32_t)c->thread ^ (uint32_t)(c->thread >> 32);
	return (h ^ (h >> 16)) & 255u;
}

/* Context number of c in the block being filled, or -1. */
static int32_t ctx_find(const struct pt_logw *w, const struct pt_log_ctx *c)
{
	uint32_t k = w->ctx_hash[ctx_hash(c)];
	return k && same_ctx(&w->ctx[k - 1], c) ? (int32_t)k - 1 : -1;
}

static void put_meta(struct pt_logw *w, uint32_t id, uint64_t word1, const void *data,
                     uint32_t len)
{
	put64(w->pos, (uint64_t)id << PT_REC_ID_SHIFT | (uint64_t)len << PT_REC_LEN_SHIFT);
	put64(w->pos + 8, word1);
	if (len)
		memcpy(w->pos + PT_REC_HDR, data, len);
	w->pos += PT_REC_HDR + len;
}

/* Makes c the current context; room was checked. */
static void ctx_select(struct pt_logw *w, const struct pt_log_ctx *c)
{
	int32_t k = ctx_find(w, c);
	if (k >= 0) {
		put_meta(w, PT_REC_SWITCH, (uint64_t)k, NULL, 0);
	} else {
		struct pt_log_ctxrec r = {.ctx = *c, .k = w->nctx, .zero = 0};
		k = (int32_t)w->nctx++;
		w->ctx[k] = *c;
		w->ctx_hash[ctx_hash(c)] = (uint16_t)(k + 1);
		put_meta(w, PT_REC_CONTEXT, 0, &r, sizeof r);
	}
	w->ctx_cur = k;
	w->cur = *c;
}

static uint32_t ctx_cost(const struct pt_logw *w, const struct pt_log_ctx *c)
{
	if (w->ctx_cur >= 0 && same_ctx(&w->cur, c))
		return 0;
	if (ctx_find(w, c) >= 0)
		return PT_REC_HDR;
	return w->nctx < w->max_ctx ? PT_LOG_CTX_REC : UINT32_MAX / 2;
}

static inline void put_event(struct pt_logw *w, uint64_t ts, trace_event_id_t id,
                             const void *data, uint32_t len, int truncated, uint64_t pc)
{
	unsigned char *p = w->pos;
	/* The previous event's call site: no second word.  The address is
	 * stored anyway and the data go over it (room for both was checked). */
	uint64_t same = pc == w->last_pc && id != PT_REC_RESUME ? PT_REC_SAMEPC : 0;
	uint32_t hdr = PT_REC_HDR - (uint32_t)(same >> 28);
	put64(p, (ts - w->last_ts) | same | (uint64_t)id << PT_REC_ID_SHIFT |
	             (uint64_t)len << PT_REC_LEN_SHIFT | (truncated ? PT_REC_TRUNCATED : 0));
	put64(p + 8, pc);
	if (len & 7)
		put64(p + hdr + (len & ~7u), 0); /* zero padding */
	copy_data(p + hdr, data, len);
	w->pos = p + hdr + pt_log_pad8(len);
	w->last_ts = ts;
	if (id == PT_REC_RESUME)
		return; /* a meta record: the current address stays */
	w->last_pc = pc;
	w->blk_records++;
}

/* The bytes an event takes in the block being filled: the record, a
 * context and a TIME record when needed. */
static uint64_t event_cost(const struct pt_logw *w, const struct pt_log_ctx *c, uint64_t ts,
                           uint32_t len)
{
	return (uint64_t)pt_log_rec_size(len) + ctx_cost(w, c) +
	       (ts - w->last_ts > PT_REC_DELTA_MAX ? PT_LOG_TIME_REC : 0);
}

/* Puts an event where it fits: in the block being filled, else in a new
 * one.  Returns PT_LOGW_FULL when the room of the log ends first. */
static int put_event_slow(struct pt_logw *w, const struct pt_log_ctx *c, uint64_t ts,
                          trace_event_id_t id, const void *data, uint32_t len, int truncated,
                          uint64_t pc)
{
	for (;;) {
		if (w->blk && w->blk_type != PT_LOG_KEEPER)
			pt_logb_close(w);
		if (w->blk) {
			if (event_cost(w, c, ts, len) <= (uint64_t)(w->blk_end - w->pos))
				break;
			if (block_cut_by_room(w))
				return PT_LOGW_FULL;
			pt_logb_seal(w, PT_LOG_KEEPER);
		}
		pt_logb_open(w, PT_LOG_KEEPER, ts);
		if (event_cost(w, c, ts, len) > (uint64_t)(w->blk_end - w->pos) &&
		    block_cut_by_room(w))
			return PT_LOGW_FULL;
	}
	if (w->ctx_cur < 0 || !same_ctx(&w->cur, c))
		ctx_select(w, c);
	if (ts - w->last_ts > PT_REC_DELTA_MAX) {
		put_meta(w, PT_REC_TIME, 0, &ts, sizeof ts);
		w->last_ts = ts;
	}
	put_event(w, ts, id, data, len, truncated, pc);
	return 0;
}

/* An UNTIL_FULL log is full: POSIX_TRACE_STOP (automatic: data 1) ends it,
 * in the room kept for it, no earlier than any event kept.  Like the
 * automatic stop of a full stream, it carries the writer (and call) of
 * the event that found no room; `dropped` events did not fit. */
static int log_full(struct pt_logw *w, const struct pt_log_ctx *c, uint64_t ts, uint64_t pc,
                    uint32_t dropped)
{
	int automatic = 1;
	if (ts < w->max_kept_ns)
		ts = w->max_kept_ns;
	w->room += PT_LOG_FULL_RESERVE - (PT_LOG_BLOCK_HDR + PT_LOG_END_PAYLOAD);
	if (w->blk)
		w->blk_end = w->blk + w->block_size;
	if (put_event_slow(w, c, ts, POSIX_TRACE_STOP, &automatic, sizeof automatic, 0, pc) == 0)
		w->prog.event_bytes += PT_LOG_STOP_BYTES;
	w->prog.log_full = 1;
	w->ev_left = 0;
	w->prog.status.log_full = POSIX_TRACE_FULL;
	w->prog.status.log_overrun = POSIX_TRACE_OVERRUN;
	w->prog.status.log_dropped += dropped;
	w->room = 0;
	if (w->blk)
		w->blk_end = w->pos; /* nothing more goes in */
	return PT_LOGW_FULL;
}

/* Events that came after the log filled up. */
static int dropped_after_full(struct pt_logw *w, uint32_t events)
{
	w->prog.status.log_dropped += events;
	w->prog.status.log_overrun = POSIX_TRACE_OVERRUN;
	return PT_LOGW_FULL;
}

/* The event's bytes count against an UNTIL_FULL log's log-max-size. */
static inline void charge_events(struct pt_logw *w, uint64_t bytes)
{
	w->ev_left -= bytes;
	w->prog.event_bytes += bytes;
}

static const struct pt_log_ctx system_ctx;

/* Out of line, so that the common case needs no saved registers.  ev:
 * the event's bytes against log-max-size (more than ev_left: no room). */
__attribute__((noinline)) static int event_slow(struct pt_logw *w, const struct pt_log_ctx *c,
                                                uint64_t ts, trace_event_id_t id,
                                                const void *data, uint32_t len, int truncated,
                                                uint64_t pc, uint32_t ev)
{
	if (w->finished)
		return EINVAL;
	if (w->prog.log_full)
		return dropped_after_full(w, 1);
	if (!c)
		c = &system_ctx;
	if (ev <= w->ev_left && put_event_slow(w, c, ts, id, data, len, truncated, pc) == 0) {
		charge_events(w, ev);
		return 0;
	}
	return log_full(w, c, ts, pc, 1);
}

int pt_logw_event(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns,
                  trace_event_id_t id, const void *data, uint32_t len, int truncated,
                  uint64_t pc)
{
	if (unlikely(id - 1u >= PT_LOG_NIDS - 1u || id - PT_REC_META_FIRST < PT_REC_META_END -
	                                                                      PT_REC_META_FIRST ||
	             len > w->max_data || (len && !data)))
		return EINVAL;
	uint32_t rec = pt_log_rec_size(len);
	if (ts_ns > w->max_kept_ns)
		w->max_kept_ns = ts_ns;
	if (likely(ctx && w->blk_type == PT_LOG_KEEPER && same_ctx(&w->cur, ctx) &&
	           ts_ns - w->last_ts <= PT_REC_DELTA_MAX && rec <= (size_t)(w->blk_end - w->pos) &&
	           rec <= w->ev_left)) {
		put_event(w, ts_ns, id, data, len, truncated, pc);
		charge_events(w, rec);
		return 0;
	}
	return event_slow(w, ctx, ts_ns, id, data, len, truncated, pc, rec);
}

int pt_logw_resume_mark(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns)
{
	if (w->finished)
		return EINVAL;
	if (w->prog.log_full)
		return 0;
	/* A log that fills up here keeps no event after it: no RESUME is due,
	 * and the STOP the next event finds no room for says why. */
	put_event_slow(w, ctx ? ctx : &system_ctx, ts_ns, PT_REC_RESUME, NULL, 0, 0, 0);
	return 0;
}

/* ---- stages --------------------------------------------------------------- */

int pt_logw_begin_drain(struct pt_logw *w, uint32_t clock, const struct pt_log_calpoint *cal,
                        uint32_t ncal)
{
	if (w->finished || !cal || !pt_log_cal_ok(cal, ncal) ||
	    (clock != PT_LOG_CLOCK_MONO && clock != PT_LOG_CLOCK_TSC))
		return EINVAL;
	pt_logb_close(w);
	w->prog.drain++;
	w->clock = clock;
	w->ncal = ncal;
	memcpy(w->cal, cal, ncal * sizeof *cal);
	return 0;
}

static void open_stages_block(struct pt_logw *w)
{
	struct pt_log_stages pre = {.drain = w->prog.drain, .clock = w->clock, .ncal = w->ncal};
	pt_logb_open(w, PT_LOG_STAGES, 0);
	memcpy(w->pos, &pre, sizeof pre);
	w->pos += sizeof pre;
	memcpy(w->pos, w->cal, w->ncal * sizeof w->cal[0]);
	w->pos += w->ncal * sizeof w->cal[0];
	if (w->blk_end < w->pos)
		w->blk_end = w->pos;
}

/* What an OWNER record at the stage's start takes, with the CPU record
 * that says the CPU it resets (when known). */
static uint32_t owner_bytes(const struct pt_logw_stage *s)
{
	return PT_LOG_OWNER_REC + (s->start_cpu < PT_LOG_CPU_LIMIT ? PT_LOG_CPU_REC : 0);
}

/* Appends the stage to the open section, after an OWNER record that gives
 * its base and writer, and a CPU record, when `owner_first`. */
static void section_append(struct pt_logw *w, const struct pt_logw_stage *s, int owner_first)
{
	unsigned char *start = w->pos;
	if (owner_first)
		put_meta(w, PT_LOG_STAGE_OWNER, 0, &s->start, sizeof s->start);
	if (owner_first && s->start_cpu < PT_LOG_CPU_LIMIT) {
		uint32_t cpu[2] = {s->start_cpu, 0};
		put_meta(w, PT_LOG_STAGE_CPU, 0, cpu, sizeof cpu);
	}
	memcpy(w->pos, s->rec, s->len);
	w->pos += s->len;
	struct pt_log_section h;
	memcpy(&h, w->sec, sizeof h);
	h.len += (uint32_t)(w->pos - start);
	memcpy(w->sec, &h, sizeof h);
	w->blk_records += s->events;
	w->blk_stage_events += s->events;
}

static void section_open(struct pt_logw *w, const struct pt_logw_stage *s)
{
	struct pt_log_section h = {.lane = s->lane, .len = 0, .pc = s->start_pc};
	w->sec = w->pos;
	memcpy(w->pos, &h, sizeof h);
	w->pos += sizeof h;
	w->sec_lane = s->lane;
	w->blk_sections++;
	section_append(w, s, 1);
}

/* Where the stage goes in the STAGES block being filled: 1 appended, 0
 * it does not fit. */
static int stage_into_block(struct pt_logw *w, const struct pt_logw_stage *s)
{
	uint64_t left = (uint64_t)(w->blk_end - w->pos);
	uint64_t more = (uint64_t)s->len + (s->how == PT_STAGE_NEW_CHUNK ? owner_bytes(s) : 0);
	uint64_t fresh = sizeof(struct pt_log_section) + owner_bytes(s) + (uint64_t)s->len;
	if (w->sec && w->sec_lane == s->lane && s->how != PT_STAGE_ELSEWHERE && more <= left) {
		section_append(w, s, s->how == PT_STAGE_NEW_CHUNK);
		return 1;
	}
	if (fresh > left)
		return 0;
	section_open(w, s);
	return 1;
}

/* The longest run of whole records at the start of the stage whose
 * events' bytes (pt_log_event_bytes: two words each, whatever the stream
 * stored) fit in `left`: its length and events in part, its event bytes
 * returned.  Meta records are not events.  The records were checked
 * (records.h). */
static uint64_t stage_fit(const struct pt_logw_stage *s, uint64_t left,
                          struct pt_logw_stage *part)
{
	uint64_t bytes = 0;
	uint32_t off = 0, events = 0;
	while (off + PT_REC_HDR_MIN <= s->len) {
		uint64_t w0;
		memcpy(&w0, s->rec + off, sizeof w0);
		uint64_t ev = pt_rec_id(w0) >= PT_LOG_USER_FIRST ? pt_log_event_bytes(pt_rec_len(w0)) : 0;
		if (ev > left - bytes)
			break;
		bytes += ev;
		events += ev != 0;
		off += (uint32_t)pt_rec_size(w0);
	}
	*part = *s;
	part->len = off;
	part->events = events;
	return bytes;
}

/* The stage into a STAGES block; ev: its event bytes. */
static int place_stage(struct pt_logw *w, const struct pt_logw_stage *s, uint64_t ev)
{
	if (w->blk && w->blk_type != PT_LOG_STAGES)
		pt_logb_close(w);
	if (!w->blk || !stage_into_block(w, s)) {
		int cut = w->blk && block_cut_by_room(w);
		if (!cut) {
			pt_logb_close(w);
			open_stages_block(w);
			cut = !stage_into_block(w, s);
			if (cut && !block_cut_by_room(w)) {
				pt_logb_none(w);
				return EINVAL; /* larger than a block: not a stage */
			}
		}
		if (cut) {
			w->prog.stage_events += s->events;
			return log_full(w, &s->start.ctx, s->first_ns, 0, s->events);
		}
	}
	if (s->last_ns > w->max_kept_ns)
		w->max_kept_ns = s->last_ns;
	charge_events(w, ev);
	return 0;
}

int pt_logw_stage(struct pt_logw *w, const struct pt_logw_stage *s)
{
	if (w->finished || !w->ncal || s->len % 8 || (s->len && !s->rec))
		return EINVAL;
	if (!s->len)
		return 0;
	if (w->prog.log_full) {
		w->prog.stage_events += s->events;
		return dropped_after_full(w, s->events);
	}
	if (w->ev_left >= UINT64_MAX >> 2)
		return place_stage(w, s, 0);
	/* An UNTIL_FULL log: the events that fit in log-max-size are kept,
	 * the first that does not ends the log.  Its STOP is no earlier than
	 * the first event dropped: the stage's first when none is kept, else
	 * its last (the writer does not decode the times in between). */
	struct pt_logw_stage part;
	uint64_t ev = stage_fit(s, w->ev_left, &part);
	if (part.len == s->len)
		return place_stage(w, s, ev);
	if (part.len) {
		int r = place_stage(w, &part, ev);
		if (r != 0)
			return r;
	}
	w->prog.stage_events += s->events - part.events;
	return log_full(w, &s->start.ctx, part.len ? s->last_ns : s->first_ns, 0,
	                s->events - part.events);
}
