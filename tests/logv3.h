/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests of version 3 logs (t_logv3): an encoder that writes
 * them from the format's definitions (src/log/logfmt.h, docs/LOG-FORMAT.md),
 * with every CRC right (the tests' own CRC-32C, logtest.h): a header,
 * STAGES blocks (calibration, sections, OWNER, TIME and event records),
 * KEEPER blocks (CONTEXT, SWITCH, TIME, RESUME and system events), blocks
 * of any type, in a linear or a ring layout; and a reader of a log back
 * into memory through the public API, with each event's extension (once,
 * or twice with a rewind between, both passes compared).
 */
#ifndef PT_TEST_LOGV3_H
#define PT_TEST_LOGV3_H

#include "logtest.h"

struct v3 {
	int fd;
	struct pt_log_header h;
	uint64_t off, seq;       /* linear: where the next block goes; its number */
	unsigned char *pl;       /* the payload being filled */
	uint32_t len, cap;
	uint32_t type;
	uint32_t nsec, sec_at;   /* STAGES: sections so far, the open one's header */
};

/* Starts a log of this version and layout (ring: slots of 64 KiB) in the
 * empty file fd. */
static inline void v3_begin(struct v3 *g, int fd, uint32_t version, uint32_t layout,
                            uint64_t slots)
{
	memset(g, 0, sizeof *g);
	g->fd = fd;
	lt_craft_header(&g->h, PT_LOG_MIN_BLOCK, 1, "v3");
	g->h.version = version;
	g->h.layout = layout;
	if (layout == PT_LOG_RING) {
		g->h.ring_slots = slots;
		g->h.log_policy = POSIX_TRACE_LOOP;
	}
	g->h.crc = lt_crc32c(&g->h, offsetof(struct pt_log_header, crc));
	ck_assert_int_eq(pwrite(fd, &g->h, sizeof g->h, 0), (ssize_t)sizeof g->h);
	ck_assert_int_eq(ftruncate(fd, (off_t)PT_LOG_DATA_OFF), 0);
	g->off = PT_LOG_DATA_OFF;
	g->cap = PT_LOG_MIN_BLOCK - PT_LOG_BLOCK_HDR;
	g->pl = lt_hold(malloc(g->cap));
	ck_assert_ptr_nonnull(g->pl);
}

/* A block with this number and payload, both CRCs right: after the last
 * one (linear) or in its slot (ring). */
static inline void v3_block(struct v3 *g, uint32_t type, uint64_t seq, uint64_t ts_base,
                            const void *payload, uint32_t len)
{
	struct pt_log_block b = {PT_LOG_BLOCK_MAGIC, type, seq, ts_base, len,
	                         lt_crc32c(payload, len), 0, 0};
	b.header_crc = lt_crc32c(&b, offsetof(struct pt_log_block, header_crc));
	uint64_t at = g->off;
	if (g->h.layout == PT_LOG_RING)
		at = PT_LOG_DATA_OFF + (seq % g->h.ring_slots) * g->h.block_size;
	else
		g->off += pt_log_pad8(PT_LOG_BLOCK_HDR + len);
	ck_assert_int_eq(pwrite(g->fd, &b, sizeof b, (off_t)at), (ssize_t)sizeof b);
	if (len)
		ck_assert_int_eq(pwrite(g->fd, payload, len, (off_t)(at + sizeof b)), (ssize_t)len);
}

static inline void v3_bytes(struct v3 *g, const void *p, uint32_t n)
{
	ck_assert_uint_le(g->len + n, g->cap);
	memcpy(g->pl + g->len, p, n);
	g->len += n;
}

static inline void v3_u64(struct v3 *g, uint64_t v)
{
	v3_bytes(g, &v, 8);
}

static inline uint64_t v3_w0(uint32_t id, uint32_t len, uint32_t delta)
{
	return pt_rec_word0(delta, id, len, 0);
}

/* A record: word0, word1 unless same_pc, the data padded to 8. */
static inline void v3_rec(struct v3 *g, uint64_t w0, uint64_t w1, const void *data, uint32_t len)
{
	static const unsigned char zeros[8];
	v3_u64(g, w0);
	if (!(w0 & PT_REC_SAMEPC))
		v3_u64(g, w1);
	if (len)
		v3_bytes(g, data, len);
	v3_bytes(g, zeros, pt_log_pad8(len) - len);
}

/* ---- STAGES ---------------------------------------------------------------- */

static inline void v3_stages(struct v3 *g, uint64_t drain, const struct pt_log_calpoint *cal,
                             uint32_t ncal)
{
	struct pt_log_stages pre = {drain, ncal > 1 ? PT_LOG_CLOCK_TSC : PT_LOG_CLOCK_MONO, ncal,
	                            0, 0, 0};
	g->type = PT_LOG_STAGES;
	g->len = g->nsec = 0;
	v3_bytes(g, &pre, sizeof pre);
	v3_bytes(g, cal, ncal * (uint32_t)sizeof *cal);
}

/* A STAGES block of one calibration point: raw 0 is real_ns. */
static inline void v3_stages_mono(struct v3 *g, uint64_t drain, uint64_t real_ns)
{
	struct pt_log_calpoint p = {0, real_ns};
	v3_stages(g, drain, &p, 1);
}

static inline void v3_close_section(struct v3 *g)
{
	if (!g->nsec)
		return;
	uint32_t len = g->len - g->sec_at - (uint32_t)sizeof(struct pt_log_section);
	memcpy(g->pl + g->sec_at + offsetof(struct pt_log_section, len), &len, sizeof len);
}

/* A new section of lane, whose first OWNER leaves the address at pc. */
static inline void v3_section(struct v3 *g, uint32_t lane, uint64_t pc)
{
	struct pt_log_section sec = {lane, 0, pc};
	v3_close_section(g);
	g->sec_at = g->len;
	g->nsec++;
	v3_bytes(g, &sec, sizeof sec);
}

static inline void v3_owner(struct v3 *g, uint64_t base, const struct pt_log_ctx *ctx)
{
	struct pt_log_owner o = {base, *ctx};
	v3_rec(g, v3_w0(PT_LOG_STAGE_OWNER, sizeof o, 0), 0, &o, sizeof o);
}

/* A section with its OWNER: lane, base, writer, address. */
static inline void v3_lane(struct v3 *g, uint32_t lane, uint64_t base,
                           const struct pt_log_ctx *ctx, uint64_t pc)
{
	v3_section(g, lane, pc);
	v3_owner(g, base, ctx);
}

/* TIME: a new base (STAGES), a new time (KEEPER). */
static inline void v3_time(struct v3 *g, uint64_t v)
{
	v3_rec(g, v3_w0(PT_REC_TIME, 8, 0), 0, &v, 8);
}

/* An event delta raw units after the base, from pc (0: same address). */
static inline void v3_ev(struct v3 *g, uint32_t id, uint32_t delta, uint64_t pc, const void *data,
                         uint32_t len)
{
	uint64_t w0 = v3_w0(id, len, delta) | (pc ? 0 : PT_REC_SAMEPC);
	v3_rec(g, w0, pc, data, len);
}

/* ---- KEEPER ---------------------------------------------------------------- */

static inline void v3_keeper(struct v3 *g, uint64_t drain)
{
	g->type = PT_LOG_KEEPER;
	g->len = g->nsec = 0;
	v3_u64(g, drain);
}

static inline void v3_context(struct v3 *g, uint32_t k, const struct pt_log_ctx *ctx,
                              uint32_t delta)
{
	struct pt_log_ctxrec c = {*ctx, k, 0};
	v3_rec(g, v3_w0(PT_REC_CONTEXT, sizeof c, delta), 0, &c, sizeof c);
}

static inline void v3_switch(struct v3 *g, uint32_t k, uint32_t delta)
{
	v3_rec(g, v3_w0(PT_REC_SWITCH, 0, delta), k, NULL, 0);
}

static inline void v3_resume(struct v3 *g, uint32_t delta)
{
	v3_rec(g, v3_w0(PT_REC_RESUME, 0, delta), 0, NULL, 0);
}

/* Writes the block being filled with the next number (a KEEPER block's
 * time counts from ts_base). */
static inline void v3_seal_at(struct v3 *g, uint64_t ts_base)
{
	if (g->type == PT_LOG_STAGES) {
		v3_close_section(g);
		memcpy(g->pl + offsetof(struct pt_log_stages, nsections), &g->nsec, sizeof g->nsec);
		ts_base = 0;
	}
	v3_block(g, g->type, g->seq++, ts_base, g->pl, g->len);
	g->len = g->nsec = 0;
}

static inline void v3_seal(struct v3 *g)
{
	v3_seal_at(g, 0);
}

/* The END block: the log is closed. */
static inline void v3_end(struct v3 *g)
{
	v3_block(g, PT_LOG_END, g->seq++, 0, &g->h.status, sizeof g->h.status);
}

/* ---- reading back ---------------------------------------------------------- */

struct v3_ev {
	struct posix_trace_event_info info;
	struct posixtrace_event_ext ext;
	size_t len;
	unsigned char data[300];
};

struct v3_read {
	struct v3_ev *ev;
	size_t n;
	struct posixtrace_log_info log;
};

/* Every event of the log in fd, through posix_trace_open and
 * posix_trace_getnext_event into a buffer of bufsize bytes (at most 300);
 * held until the process ends. */
static inline struct v3_read v3_read_buf(int fd, size_t bufsize)
{
	struct v3_read r = {0};
	size_t cap = 64;
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	r.ev = malloc(cap * sizeof *r.ev);
	ck_assert_ptr_nonnull(r.ev);
	for (;;) {
		if (r.n == cap) {
			cap *= 2;
			r.ev = realloc(r.ev, cap * sizeof *r.ev);
			ck_assert_ptr_nonnull(r.ev);
		}
		struct v3_ev *e = &r.ev[r.n];
		int unavailable = -1;
		ck_assert_ok(posix_trace_getnext_event(trid, &e->info, e->data, bufsize, &e->len,
		                                       &unavailable));
		if (unavailable)
			break;
		ck_assert_ok(posixtrace_event_ext(trid, &e->ext));
		ck_assert_uint_lt(++r.n, LT_MAX_READ);
	}
	ck_assert_ok(posixtrace_log_info(trid, &r.log));
	ck_assert_ok(posix_trace_close(trid));
	lt_hold(r.ev);
	return r;
}

static inline struct v3_read v3_read(int fd)
{
	return v3_read_buf(fd, sizeof(((struct v3_ev *)0)->data));
}

/* The events of one pass of an open stream, into r (held until the
 * process ends). */
static inline void v3_pass(trace_id_t trid, struct v3_read *r)
{
	size_t cap = 64;
	r->n = 0;
	r->ev = malloc(cap * sizeof *r->ev);
	ck_assert_ptr_nonnull(r->ev);
	for (;;) {
		if (r->n == cap) {
			cap *= 2;
			r->ev = realloc(r->ev, cap * sizeof *r->ev);
			ck_assert_ptr_nonnull(r->ev);
		}
		struct v3_ev *e = &r->ev[r->n];
		int unavailable = -1;
		ck_assert_ok(posix_trace_getnext_event(trid, &e->info, e->data, sizeof e->data,
		                                       &e->len, &unavailable));
		if (unavailable)
			break;
		ck_assert_ok(posixtrace_event_ext(trid, &e->ext));
		ck_assert_uint_lt(++r->n, LT_MAX_READ);
	}
	lt_hold(r->ev);
}

/* Passes a and b give the same events (id, time, writer, data). */
static inline void v3_same(const struct v3_read *a, const struct v3_read *b, size_t after)
{
	ck_assert_msg(a->n == b->n, "rewound after %zu events: %zu events, not %zu", after, b->n,
	              a->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct v3_ev *x = &a->ev[i], *y = &b->ev[i];
		ck_assert_msg(x->info.posix_event_id == y->info.posix_event_id,
		              "rewound after %zu events: event %zu differs", after, i);
		ck_assert_int_eq(x->info.posix_timestamp.tv_sec, y->info.posix_timestamp.tv_sec);
		ck_assert_int_eq(x->info.posix_timestamp.tv_nsec, y->info.posix_timestamp.tv_nsec);
		ck_assert_int_eq(x->info.posix_pid, y->info.posix_pid);
		ck_assert_int_eq(x->ext.posixtrace_tid, y->ext.posixtrace_tid);
		ck_assert_uint_eq(x->len, y->len);
		ck_assert_mem_eq(x->data, y->data, x->len);
	}
}

/* v3_read, and passes after posix_trace_rewind that must give the same
 * events (id, time, writer, data): one after the whole pass, and one after
 * each of the first 40 events (a rewind while the first drains are still
 * held starts their sources again without reading them again); the first
 * pass is returned. */
static inline struct v3_read v3_read_twice(int fd)
{
	struct v3_read a, b;
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	v3_pass(trid, &a);
	ck_assert_ok(posix_trace_rewind(trid));
	v3_pass(trid, &b);
	v3_same(&a, &b, a.n);
	for (size_t k = 1; k <= a.n && k <= 40; k++) {
		ck_assert_ok(posix_trace_rewind(trid));
		for (size_t i = 0; i < k; i++) {
			struct v3_ev e;
			int unavailable = -1;
			ck_assert_ok(posix_trace_getnext_event(trid, &e.info, e.data, sizeof e.data, &e.len,
			                                       &unavailable));
			ck_assert_int_eq(unavailable, 0);
		}
		ck_assert_ok(posix_trace_rewind(trid));
		v3_pass(trid, &b);
		v3_same(&a, &b, k);
	}
	ck_assert_ok(posixtrace_log_info(trid, &a.log));
	ck_assert_ok(posix_trace_close(trid));
	return a;
}

static inline uint64_t v3_ts(const struct v3_ev *e)
{
	return (uint64_t)e->info.posix_timestamp.tv_sec * 1000000000u +
	       (uint64_t)e->info.posix_timestamp.tv_nsec;
}

#endif
