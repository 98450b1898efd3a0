/* SPDX-License-Identifier: MIT */
/*
 * Checks the reader of trace logs of format version 3 (docs/LOG-FORMAT.md)
 * on logs the tests write themselves (tests/logv3.h): event times through
 * the calibration (one MONO point; several TSC-like points, before, between
 * and after them), the writer's context and the address (same-address
 * events, a section's address, TIME and OWNER resetting it), data and the
 * truncation flags; the merge of a drain by time across lanes and blocks
 * (equal times in block then section order), with the next drain looked
 * ahead at (its events older than the drain's last come in their time
 * place; those older than events two drains back come when their drain
 * joins), RESUME before the next event, from either drain; damage in a
 * STAGES block costing the block with one ERROR first in its drain (once
 * the drain before it is delivered), KEEPER damage, reserved block types
 * skipped, a ring of STAGES blocks, a log cut short, a drain cut at the
 * reader's memory bound (a lower bound set through the reader's test
 * hook), rewind, a pipe; and that version 2 logs (EVENTS blocks) still read
 * in block order and other versions are refused.
 */
#include "logv3.h"

#include "../src/log/logread.h"

#define T0 1700000000000000000ull

static const struct pt_log_ctx ctx_a = {100, 101, 0x1111, "alpha"};
static const struct pt_log_ctx ctx_b = {200, 202, 0x2222, "beta"};
static const struct pt_log_ctx ctx_ctl = {300, 300, 0x3333, "controller"};

static const char *dir;

static void setup(void)
{
	dir = pt_scratch_dir("pt_logv3");
}

static void teardown(void) { pt_remove_tree(dir); }

/* An empty file in the test's directory, already unlinked. */
static int new_file(void)
{
	char path[256];
	snprintf(path, sizeof path, "%s/logXXXXXX", dir);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unlink(path), 0);
	return fd;
}

/* A u32 tag as an event's data: which event of the test it is. */
static void tagged(struct v3 *g, uint32_t delta, uint64_t pc, uint32_t tag)
{
	v3_ev(g, POSIX_TRACE_UNNAMED_USEREVENT, delta, pc, &tag, sizeof tag);
}

static uint32_t tag_of(const struct v3_ev *e)
{
	uint32_t t;
	ck_assert_uint_eq(e->len, sizeof t);
	memcpy(&t, e->data, sizeof t);
	return t;
}

static void expect_event(const struct v3_ev *e, trace_event_id_t id, uint64_t ts,
                         const struct pt_log_ctx *ctx, uint64_t pc)
{
	ck_assert_uint_eq(e->info.posix_event_id, id);
	ck_assert_uint_eq(v3_ts(e), ts);
	ck_assert_int_eq(e->info.posix_pid, ctx->pid);
	ck_assert_uint_eq((uint64_t)e->info.posix_thread_id, ctx->thread);
	ck_assert_int_eq(e->ext.posixtrace_tid, ctx->tid);
	ck_assert_int_eq(strncmp(e->ext.posixtrace_comm, ctx->comm, sizeof ctx->comm - 1), 0);
	ck_assert_uint_eq((uint64_t)(uintptr_t)e->info.posix_prog_address, pc);
}

static void expect_tagged(const struct v3_ev *e, uint32_t tag, uint64_t ts)
{
	ck_assert_uint_eq(e->info.posix_event_id, POSIX_TRACE_UNNAMED_USEREVENT);
	ck_assert_uint_eq(tag_of(e), tag);
	ck_assert_uint_eq(v3_ts(e), ts);
}

static void expect_error(const struct v3_ev *e, uint64_t ts)
{
	int err;
	ck_assert_uint_eq(e->info.posix_event_id, POSIX_TRACE_ERROR);
	ck_assert_int_eq(e->info.posix_pid, 0);
	ck_assert_uint_eq(v3_ts(e), ts);
	ck_assert_uint_eq(e->len, sizeof err);
	memcpy(&err, e->data, sizeof err);
	ck_assert_int_eq(err, EBADMSG);
}

/* A STAGES block of drain with one lane (ctx_a, base 0, calibration raw 0
 * = T0) and events of tags first, first+1, ... at raw times ts[]. */
static void stage_block(struct v3 *g, uint64_t drain, uint32_t lane, uint32_t first,
                        const uint32_t *ts, uint32_t n)
{
	v3_stages_mono(g, drain, T0);
	v3_lane(g, lane, 0, &ctx_a, 0x400000 + lane);
	for (uint32_t i = 0; i < n; i++)
		tagged(g, ts[i], 0, first + i);
	v3_seal(g);
}

/* ---- times, contexts, addresses, data ------------------------------------- */

START_TEST(mono_calibration_one_point)
{
	int fd = new_file();
	struct v3 g;
	const char d[4] = "abc";
	struct pt_log_calpoint p = {1000, 5000000000ull};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages(&g, 1, &p, 1);
	v3_lane(&g, 0, 1000, &ctx_a, 0x500);
	v3_ev(&g, 40, 0, 0, d, 3);     /* the section's address */
	v3_ev(&g, 41, 7, 0x600, d, 3); /* its own */
	v3_ev(&g, 42, 20, 0, d, 3);    /* the previous event's */
	v3_time(&g, 400);              /* before the point; the address is reset */
	v3_ev(&g, 43, 0, 0, d, 3);
	v3_seal(&g);
	/* Drain 2, looked ahead at: its events, older, come first. */
	struct pt_log_calpoint q = {10, 5};
	v3_stages(&g, 2, &q, 1);
	v3_lane(&g, 0, 0, &ctx_a, 0);
	v3_ev(&g, 44, 0, 0x700, d, 3); /* 5 - 10: no time before 0 */
	v3_ev(&g, 45, 12, 0, d, 3);
	v3_seal(&g);
	v3_end(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 6);
	expect_event(&r.ev[0], 44, 0, &ctx_a, 0x700);
	expect_event(&r.ev[1], 45, 7, &ctx_a, 0x700);
	expect_event(&r.ev[2], 40, 5000000000ull, &ctx_a, 0x500);
	expect_event(&r.ev[3], 41, 5000000007ull, &ctx_a, 0x600);
	expect_event(&r.ev[4], 42, 5000000020ull, &ctx_a, 0x600);
	expect_event(&r.ev[5], 43, 5000000000ull - 600, &ctx_a, 0); /* the section's own order */
	ck_assert_uint_eq(r.log.posixtrace_version, 3);
	ck_assert_int_eq(r.log.posixtrace_closed, 1);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	ck_assert_mem_eq(r.ev[2].data, d, 3);
	close(fd);
}
END_TEST

/* Three points: slope 1/2 up to raw 3000, then 2; before the first point
 * the first segment's line, after the last the last one's; the distance
 * from a segment's first point is what is rounded down (raw 999: half a
 * nanosecond before the point, which is 0). */
START_TEST(tsc_calibration_several_points)
{
	int fd = new_file();
	struct v3 g;
	const uint64_t s = 1000000000ull;
	struct pt_log_calpoint p[3] = {{1000, s}, {3000, s + 1000}, {7000, s + 9000}};
	const uint32_t raw[] = {0, 999, 1000, 2000, 2999, 3000, 5000, 7000, 8000};
	const uint64_t want[] = {s - 500, s, s, s + 500, s + 999, s + 1000, s + 5000, s + 9000,
	                         s + 11000};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages(&g, 1, p, 3);
	v3_lane(&g, 0, 0, &ctx_a, 0x10);
	for (uint32_t i = 0; i < 9; i++)
		tagged(&g, raw[i], 0, i);
	v3_time(&g, 2500); /* back into the first segment */
	tagged(&g, 0, 0x20, 9);
	v3_seal(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 10);
	for (uint32_t i = 0; i < 9; i++)
		expect_tagged(&r.ev[i], i, want[i]);
	expect_tagged(&r.ev[9], 9, s + 750);
	ck_assert_int_eq(r.log.posixtrace_closed, 0);
	close(fd);
}
END_TEST

/* Each lane's events have its OWNER's context; a later OWNER changes it
 * and resets the address; a thread name of 16 bytes comes back cut to 15. */
START_TEST(contexts_and_addresses)
{
	int fd = new_file();
	struct v3 g;
	struct pt_log_ctx c = {400, 404, 0x4444, ""};
	memcpy(c.comm, "0123456789abcdef", 16); /* no terminator */
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 0, 0, &ctx_a, 0x10);
	tagged(&g, 10, 0, 0);
	v3_owner(&g, 0, &c);
	tagged(&g, 20, 0, 2);
	tagged(&g, 25, 0x30, 3);
	v3_lane(&g, 1, 0, &ctx_b, 0x20);
	tagged(&g, 15, 0, 1);
	v3_seal(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 4);
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_uint_eq(tag_of(&r.ev[i]), i);
	expect_event(&r.ev[0], 32, T0 + 10, &ctx_a, 0x10);
	expect_event(&r.ev[1], 32, T0 + 15, &ctx_b, 0x20);
	expect_event(&r.ev[2], 32, T0 + 20, &c, 0);
	expect_event(&r.ev[3], 32, T0 + 25, &c, 0x30);
	ck_assert_str_eq(r.ev[2].ext.posixtrace_comm, "0123456789abcde");
	close(fd);
}
END_TEST

START_TEST(data_and_truncation)
{
	int fd = new_file();
	struct v3 g;
	unsigned char big[256];
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = (unsigned char)(i * 7 + 1);
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 0, 0, &ctx_a, 0x10);
	v3_ev(&g, 33, 1, 0, big, 16);
	v3_ev(&g, 33, 2, 0, big, 256); /* the log's max-data-size */
	v3_rec(&g, v3_w0(34, 5, 3) | PT_REC_SAMEPC | PT_REC_TRUNCATED, 0, big, 5);
	v3_ev(&g, 35, 4, 0, NULL, 0);
	v3_seal(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_uint_eq(r.ev[0].len, 16);
	ck_assert_mem_eq(r.ev[0].data, big, 16);
	ck_assert_uint_eq(r.ev[1].len, 256);
	ck_assert_mem_eq(r.ev[1].data, big, 256);
	ck_assert_int_eq(r.ev[1].info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_uint_eq(r.ev[2].len, 5);
	ck_assert_int_eq(r.ev[2].info.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);
	ck_assert_uint_eq(r.ev[3].len, 0);
	/* A buffer shorter than the data: its first bytes, TRUNCATED_READ. */
	r = v3_read_buf(fd, 8);
	ck_assert_uint_eq(r.n, 4);
	ck_assert_uint_eq(r.ev[1].len, 8);
	ck_assert_mem_eq(r.ev[1].data, big, 8);
	ck_assert_int_eq(r.ev[1].info.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
	ck_assert_int_eq(r.ev[3].info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	close(fd);
}
END_TEST

/* ---- the merge ------------------------------------------------------------- */

/* Lanes in two blocks of one drain: by time; equal times in block order,
 * then section order. */
START_TEST(merge_across_lanes_and_blocks_ties_in_block_then_section_order)
{
	int fd = new_file();
	struct v3 g;
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 0, 0, &ctx_a, 0x10);
	tagged(&g, 10, 0, 0);
	tagged(&g, 30, 0, 2);
	tagged(&g, 50, 0, 6);
	v3_seal(&g);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 1, 0, &ctx_b, 0x20);
	tagged(&g, 20, 0, 1);
	tagged(&g, 30, 0, 3);
	tagged(&g, 40, 0, 5);
	v3_lane(&g, 2, 0, &ctx_a, 0x30);
	tagged(&g, 30, 0, 4);
	v3_seal(&g);
	v3_end(&g);
	struct v3_read r = v3_read(fd);
	const uint64_t ts[] = {10, 20, 30, 30, 30, 40, 50};
	ck_assert_uint_eq(r.n, 7);
	for (uint32_t i = 0; i < 7; i++)
		expect_tagged(&r.ev[i], i, T0 + ts[i]);
	ck_assert_int_eq(r.ev[3].info.posix_pid, ctx_b.pid);
	close(fd);
}
END_TEST

/* A drain is merged with the next one, not with the one after: a lower
 * drain number after a higher one is a new drain, two drains after the
 * first, so its event older than all comes once the first is delivered. */
START_TEST(drains_in_order)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t d1[] = {100, 200}, d2[] = {50, 150}, d3[] = {10};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, d1, 2);
	stage_block(&g, 2, 1, 2, d2, 2);
	stage_block(&g, 1, 0, 4, d3, 1);
	struct v3_read r = v3_read_twice(fd);
	const uint32_t tags[] = {2, 0, 3, 1, 4};
	const uint64_t ts[] = {50, 100, 150, 200, 10};
	ck_assert_uint_eq(r.n, 5);
	for (uint32_t i = 0; i < 5; i++)
		expect_tagged(&r.ev[i], tags[i], T0 + ts[i]);
	close(fd);
}
END_TEST

/* An event of the next drain older than the drain's last events (its
 * writer took its time before the drain began and committed it after the
 * keeper passed its lane) comes in its time place; at an equal time, the
 * older drain's event first. */
START_TEST(next_drain_event_in_its_time_place)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t d1[] = {10, 20, 30, 40}, late[] = {15, 30, 50}, d2[] = {45};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, d1, 4);
	v3_stages_mono(&g, 2, T0);
	v3_lane(&g, 1, 0, &ctx_b, 0x20);
	for (uint32_t i = 0; i < 3; i++)
		tagged(&g, late[i], 0, 4 + i);
	v3_lane(&g, 0, 0, &ctx_a, 0x10);
	tagged(&g, d2[0], 0, 7);
	v3_seal(&g);
	v3_end(&g);
	struct v3_read r = v3_read_twice(fd);
	const uint32_t tags[] = {0, 4, 1, 2, 5, 3, 7, 6};
	const uint64_t ts[] = {10, 15, 20, 30, 30, 40, 45, 50};
	ck_assert_uint_eq(r.n, 8);
	for (uint32_t i = 0; i < 8; i++)
		expect_tagged(&r.ev[i], tags[i], T0 + ts[i]);
	expect_event(&r.ev[1], 32, T0 + 15, &ctx_b, 0x20);
	expect_event(&r.ev[6], 32, T0 + 45, &ctx_a, 0x10);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	close(fd);
}
END_TEST

/* An event older than events two drains back is not put among them: it
 * comes when its drain joins the merge, right after the last event of the
 * drain two before it, ahead of the newer events left of the drain
 * between. */
START_TEST(two_drains_back_not_merged)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t d1[] = {100, 200}, d2[] = {150, 300}, d3[] = {120, 400};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, d1, 2);
	stage_block(&g, 2, 1, 2, d2, 2);
	stage_block(&g, 3, 2, 4, d3, 2);
	v3_end(&g);
	struct v3_read r = v3_read_twice(fd);
	const uint32_t tags[] = {0, 2, 1, 4, 3, 5};
	const uint64_t ts[] = {100, 150, 200, 120, 300, 400};
	ck_assert_uint_eq(r.n, 6);
	for (uint32_t i = 0; i < 6; i++)
		expect_tagged(&r.ev[i], tags[i], T0 + ts[i]);
	close(fd);
}
END_TEST

/* RESUME comes right before the next event after its record, with that
 * event's time and the RESUME record's context, from the drain or a later
 * one; without a later event there is none. */
START_TEST(resume_before_the_next_event)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t ts[] = {10, 20, 30}, later[] = {150};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, ts, 3);
	v3_keeper(&g, 1);
	v3_context(&g, 0, &ctx_ctl, 0);
	v3_ev(&g, POSIX_TRACE_START, 0, 0x77, NULL, 0); /* at 5 */
	v3_resume(&g, 10);                               /* at 15 */
	v3_seal_at(&g, T0 + 5);
	v3_keeper(&g, 2);
	v3_context(&g, 0, &ctx_ctl, 0);
	v3_resume(&g, 0); /* at 100, the drain's last */
	v3_seal_at(&g, T0 + 100);
	stage_block(&g, 3, 0, 3, later, 1);
	v3_keeper(&g, 4);
	v3_context(&g, 0, &ctx_b, 0);
	v3_resume(&g, 0); /* nothing after it */
	v3_seal_at(&g, T0 + 200);
	v3_end(&g);
	struct v3_read r = v3_read_twice(fd);
	ck_assert_uint_eq(r.n, 7);
	expect_event(&r.ev[0], POSIX_TRACE_START, T0 + 5, &ctx_ctl, 0x77);
	expect_tagged(&r.ev[1], 0, T0 + 10);
	expect_event(&r.ev[2], POSIX_TRACE_RESUME, T0 + 20, &ctx_ctl, 0);
	ck_assert_uint_eq(r.ev[2].len, 0);
	expect_tagged(&r.ev[3], 1, T0 + 20);
	expect_tagged(&r.ev[4], 2, T0 + 30);
	expect_event(&r.ev[5], POSIX_TRACE_RESUME, T0 + 150, &ctx_ctl, 0);
	expect_tagged(&r.ev[6], 3, T0 + 150);
	close(fd);
}
END_TEST

/* Across the lookahead: a RESUME record of the next drain takes the
 * drain's next event after it; one of the drain after its last event
 * takes the next drain's next event; an event of the next drain older
 * than the RESUME record does not take it. */
START_TEST(resume_across_the_lookahead)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t d1[] = {10, 30}, d2[] = {20, 33, 40};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, d1, 2);
	v3_keeper(&g, 1);
	v3_context(&g, 0, &ctx_b, 0);
	v3_resume(&g, 0); /* at 35 */
	v3_seal_at(&g, T0 + 35);
	v3_stages_mono(&g, 2, T0);
	v3_lane(&g, 1, 0, &ctx_a, 0x20);
	for (uint32_t i = 0; i < 3; i++)
		tagged(&g, d2[i], 0, 2 + i);
	v3_seal(&g);
	v3_keeper(&g, 2);
	v3_context(&g, 0, &ctx_ctl, 0);
	v3_resume(&g, 0); /* at 25 */
	v3_seal_at(&g, T0 + 25);
	v3_end(&g);
	struct v3_read r = v3_read_twice(fd);
	ck_assert_uint_eq(r.n, 7);
	expect_tagged(&r.ev[0], 0, T0 + 10);
	expect_tagged(&r.ev[1], 2, T0 + 20);
	expect_event(&r.ev[2], POSIX_TRACE_RESUME, T0 + 30, &ctx_ctl, 0);
	expect_tagged(&r.ev[3], 1, T0 + 30);
	expect_tagged(&r.ev[4], 3, T0 + 33);
	expect_event(&r.ev[5], POSIX_TRACE_RESUME, T0 + 40, &ctx_b, 0);
	expect_tagged(&r.ev[6], 4, T0 + 40);
	close(fd);
}
END_TEST

/* KEEPER blocks: contexts switched, TIME, system events merged with the
 * lanes by time. */
START_TEST(keeper_events_merged)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t ts[] = {10, 40};
	int one = 1;
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_keeper(&g, 1);
	v3_context(&g, 0, &ctx_ctl, 0);
	v3_ev(&g, POSIX_TRACE_START, 5, 0x1, NULL, 0); /* 5 */
	v3_context(&g, 1, &ctx_b, 10);                 /* 15 */
	v3_ev(&g, POSIX_TRACE_FLUSH_START, 5, 0x2, NULL, 0); /* 20 */
	v3_switch(&g, 0, 5);                           /* 25 */
	v3_ev(&g, POSIX_TRACE_FLUSH_STOP, 5, 0, NULL, 0); /* 30, same address */
	v3_time(&g, T0 + 60);
	v3_ev(&g, POSIX_TRACE_STOP, 0, 0x3, &one, sizeof one);
	v3_seal_at(&g, T0);
	stage_block(&g, 1, 0, 0, ts, 2);
	struct v3_read r = v3_read_twice(fd);
	ck_assert_uint_eq(r.n, 6);
	expect_event(&r.ev[0], POSIX_TRACE_START, T0 + 5, &ctx_ctl, 0x1);
	expect_tagged(&r.ev[1], 0, T0 + 10);
	expect_event(&r.ev[2], POSIX_TRACE_FLUSH_START, T0 + 20, &ctx_b, 0x2);
	expect_event(&r.ev[3], POSIX_TRACE_FLUSH_STOP, T0 + 30, &ctx_ctl, 0x2);
	expect_tagged(&r.ev[4], 1, T0 + 40);
	expect_event(&r.ev[5], POSIX_TRACE_STOP, T0 + 60, &ctx_ctl, 0x3);
	ck_assert_uint_eq(r.ev[5].len, sizeof one);
	close(fd);
}
END_TEST

/* ---- damage ---------------------------------------------------------------- */

enum {
	D_NCAL_0, D_NCAL_65, D_RAW_NOT_INCREASING, D_REAL_DECREASING, D_NSECTIONS_0,
	D_SECTIONS_MISSING, D_LEN_NOT_8, D_LEN_PAST_END, D_FIRST_NOT_OWNER, D_META_ID_11,
	D_SYSTEM_ID, D_ID_0, D_DATA_TOO_LONG, D_TIME_SAME_ADDRESS, D_TIME_LENGTH, D_BYTES_AFTER,
	D_RECORD_PAST_SECTION, D_SHORT_PREFIX, D_KINDS
};

/* A STAGES block of drain 2 with one defect; its events would be tags 90,
 * 91 at T0 + 250, T0 + 260. */
static void damaged_stages(struct v3 *g, int kind)
{
	struct pt_log_calpoint p[65];
	uint32_t ncal = kind == D_NCAL_0 ? 0 : kind == D_NCAL_65 ? 65 : 2;
	for (uint32_t i = 0; i < 65; i++)
		p[i] = (struct pt_log_calpoint){i * 100, T0 + i * 100};
	if (kind == D_RAW_NOT_INCREASING)
		p[1].raw = p[0].raw;
	if (kind == D_REAL_DECREASING)
		p[1].real_ns = p[0].real_ns - 1;
	if (kind == D_SHORT_PREFIX) {
		g->type = PT_LOG_STAGES;
		g->len = 0;
		v3_u64(g, 2);
		v3_u64(g, 0);
		v3_block(g, PT_LOG_STAGES, g->seq++, 0, g->pl, g->len);
		return;
	}
	v3_stages(g, 2, p, ncal);
	if (kind != D_NSECTIONS_0) {
		v3_lane(g, 0, 0, &ctx_a, 0x10);
		if (kind == D_FIRST_NOT_OWNER) { /* a TIME record before the OWNER */
			g->len -= PT_LOG_OWNER_REC;
			v3_time(g, 0);
			v3_owner(g, 0, &ctx_a);
		}
		tagged(g, 250, 0, 90);
		uint32_t id = kind == D_META_ID_11 ? PT_REC_SWITCH : kind == D_SYSTEM_ID ? 5
		            : kind == D_ID_0       ? 0
		                                   : 33;
		uint32_t len = kind == D_DATA_TOO_LONG ? 264 : 4;
		static unsigned char zeros[264];
		v3_rec(g, v3_w0(id, len, 260), 0x20, zeros, len);
		if (kind == D_TIME_SAME_ADDRESS)
			v3_rec(g, v3_w0(PT_REC_TIME, 8, 0) | PT_REC_SAMEPC, 0, zeros, 8);
		if (kind == D_TIME_LENGTH)
			v3_rec(g, v3_w0(PT_REC_TIME, 16, 0), 0, zeros, 16);
	}
	v3_close_section(g);
	uint32_t nsec = kind == D_NSECTIONS_0 ? 0 : kind == D_SECTIONS_MISSING ? 2 : 1;
	memcpy(g->pl + offsetof(struct pt_log_stages, nsections), &nsec, sizeof nsec);
	uint32_t sec_len;
	memcpy(&sec_len, g->pl + g->sec_at + 4, 4);
	if (kind == D_LEN_NOT_8)
		sec_len -= 4;
	if (kind == D_LEN_PAST_END)
		sec_len += 8;
	if (kind == D_RECORD_PAST_SECTION)
		sec_len -= 8;
	if (nsec)
		memcpy(g->pl + g->sec_at + 4, &sec_len, 4);
	if (kind == D_BYTES_AFTER)
		v3_u64(g, 0);
	v3_block(g, PT_LOG_STAGES, g->seq++, 0, g->pl, g->len);
	g->len = g->nsec = 0;
}

/* The whole damaged block is lost, one ERROR (first in its drain, at the
 * time of the last event delivered before it), the rest of the drain and
 * the log read; the same on a second pass. */
START_TEST(stages_damage_costs_the_block_once)
{
	int kind = _i;
	int fd = new_file();
	struct v3 g;
	const uint32_t d1[] = {100}, d2a[] = {300}, d2b[] = {400};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, d1, 1);
	stage_block(&g, 2, 0, 1, d2a, 1);
	damaged_stages(&g, kind);
	stage_block(&g, 2, 1, 2, d2b, 1);
	v3_end(&g);
	for (int pass = 0; pass < 2; pass++) {
		struct v3_read r = v3_read_twice(fd);
		ck_assert_msg(r.n == 4, "damage kind %d: %zu events", kind, r.n);
		expect_tagged(&r.ev[0], 0, T0 + 100);
		expect_error(&r.ev[1], T0 + 100);
		expect_tagged(&r.ev[2], 1, T0 + 300);
		expect_tagged(&r.ev[3], 2, T0 + 400);
		ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 1);
		ck_assert_int_eq(r.log.posixtrace_closed, 1);
	}
	close(fd);
}
END_TEST

/* Damage in a block of the next drain: its ERROR waits until that drain
 * becomes the oldest (after the last event of the drain before it), even
 * though events of it came earlier in their time place; it has the time
 * of the last event delivered.  Damage between the two drains (an invalid
 * block) comes just before it. */
START_TEST(next_drain_damage_after_the_drain_before)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t d1[] = {10, 30}, d2[] = {20, 40};
	const char junk[24] = "not a block of the log";
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, d1, 2);
	v3_block(&g, PT_LOG_RESERVED_END, g.seq++, 0, junk, sizeof junk);
	stage_block(&g, 2, 1, 2, d2, 2);
	damaged_stages(&g, D_FIRST_NOT_OWNER);
	v3_end(&g);
	struct v3_read r = v3_read_twice(fd);
	ck_assert_uint_eq(r.n, 6);
	expect_tagged(&r.ev[0], 0, T0 + 10);
	expect_tagged(&r.ev[1], 2, T0 + 20);
	expect_tagged(&r.ev[2], 1, T0 + 30);
	expect_error(&r.ev[3], T0 + 30);
	expect_error(&r.ev[4], T0 + 30);
	expect_tagged(&r.ev[5], 3, T0 + 40);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 2);
	close(fd);
}
END_TEST

/* The same block undamaged gives its two events (the defects above are
 * the only reason for the ERROR). */
START_TEST(stages_block_without_defect_reads)
{
	int fd = new_file();
	struct v3 g;
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	damaged_stages(&g, D_KINDS);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 2);
	expect_tagged(&r.ev[0], 90, T0 + 250);
	ck_assert_uint_eq(v3_ts(&r.ev[1]), T0 + 260);
	close(fd);
}
END_TEST

/* A KEEPER block takes user events as an EVENTS payload does (a writer of
 * the format may give them outside any drain). */
START_TEST(keeper_user_event_is_an_event)
{
	int fd = new_file();
	struct v3 g;
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_keeper(&g, 1);
	v3_context(&g, 0, &ctx_ctl, 0);
	v3_ev(&g, 40, 5, 0x1, "abcd", 4);
	v3_ev(&g, POSIX_TRACE_STOP, 5, 0x1, NULL, 0);
	v3_seal_at(&g, T0);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 2);
	expect_event(&r.ev[0], 40, T0 + 5, &ctx_ctl, 0x1);
	expect_event(&r.ev[1], POSIX_TRACE_STOP, T0 + 10, &ctx_ctl, 0x1);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	close(fd);
}
END_TEST

/* A KEEPER block of drain 0 (events a writer was given outside any drain)
 * is merged with no other block: drains 1 and 2 around it, whose events
 * are older than the one before them, are not merged across it, and two
 * blocks of drain 0 are not merged together. */
START_TEST(drain_zero_is_merged_with_no_block)
{
	static const struct {
		uint64_t drain;
		uint32_t delta;
	} blocks[] = {{1, 400}, {0, 300}, {0, 200}, {2, 100}};
	int fd = new_file();
	struct v3 g;
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
		v3_keeper(&g, blocks[i].drain);
		v3_context(&g, 0, &ctx_ctl, 0);
		v3_ev(&g, 40, blocks[i].delta, 0x1, NULL, 0);
		v3_seal_at(&g, T0);
	}
	struct v3_read r = v3_read_twice(fd);
	ck_assert_uint_eq(r.n, 4);
	for (size_t i = 0; i < 4; i++)
		expect_event(&r.ev[i], 40, T0 + blocks[i].delta, &ctx_ctl, 0x1);
	close(fd);
}
END_TEST

/* A KEEPER block keeps its records before damage; the ERROR comes first
 * in the drain.  An unknown meta record (id 13), a RESUME with data, an
 * event before any context are damage there. */
START_TEST(keeper_damage)
{
	for (int kind = 0; kind < 3; kind++) {
		int fd = new_file();
		struct v3 g;
		const uint32_t ts[] = {10};
		v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
		v3_keeper(&g, 1);
		if (kind == 2)
			v3_ev(&g, POSIX_TRACE_START, 0, 0x1, NULL, 0);
		v3_context(&g, 0, &ctx_ctl, 0);
		v3_ev(&g, POSIX_TRACE_START, 5, 0x1, NULL, 0);
		if (kind == 0)
			v3_rec(&g, v3_w0(13, 0, 0), 0, NULL, 0);
		if (kind == 1)
			v3_rec(&g, v3_w0(PT_REC_RESUME, 8, 0), 0, "12345678", 8);
		v3_ev(&g, POSIX_TRACE_STOP, 5, 0x1, NULL, 0);
		v3_seal_at(&g, T0);
		stage_block(&g, 1, 0, 0, ts, 1);
		struct v3_read r = v3_read_twice(fd);
		if (kind == 2) { /* nothing of it is good */
			ck_assert_uint_eq(r.n, 2);
			expect_error(&r.ev[0], 0);
			expect_tagged(&r.ev[1], 0, T0 + 10);
		} else {
			ck_assert_uint_eq(r.n, 3);
			expect_error(&r.ev[0], 0);
			expect_event(&r.ev[1], POSIX_TRACE_START, T0 + 5, &ctx_ctl, 0x1);
			expect_tagged(&r.ev[2], 0, T0 + 10);
		}
		ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 1);
		close(fd);
	}
}
END_TEST

/* A PIDS table (docs/LOG-FORMAT.md, PIDS payload): events of a writer an
 * entry names, by the (pid, tid) the log gives them, get its own ids from
 * posixtrace_event_ext wherever the table stands (here after the events);
 * other events get zeros; a table whose CRC is wrong gives nothing (and is
 * damage, as any block), and a payload that is not whole entries loses only
 * its remainder. */
START_TEST(pids_table_gives_own_ids)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t a[] = {20};
	struct pt_log_pid_entry e[2] = {{77, ctx_a.pid, ctx_a.tid, 1, 2}, {78, 999, 999, 1, 1}};
	struct pt_log_pid_entry forged = {79, ctx_b.pid, ctx_b.tid, 5, 6};
	unsigned char odd[sizeof e + 7];
	memcpy(odd, e, sizeof e);
	memset(odd + sizeof e, 0xff, 7);
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, a, 1);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 1, 0, &ctx_b, 0x400001);
	tagged(&g, 30, 0, 1);
	v3_seal(&g);
	v3_block(&g, PT_LOG_PIDS, g.seq++, 0, odd, sizeof odd);
	/* A table whose payload CRC is wrong: its entry is not used. */
	uint64_t at = g.off;
	v3_block(&g, PT_LOG_PIDS, g.seq++, 0, &forged, sizeof forged);
	unsigned char flip = 0x01;
	ck_assert_int_eq(pwrite(fd, &flip, 1, (off_t)(at + PT_LOG_BLOCK_HDR)), 1);
	v3_end(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 1);
	expect_error(&r.ev[2], T0 + 30); /* the damaged table, as any block */
	expect_tagged(&r.ev[0], 0, T0 + 20);
	ck_assert_int_eq(r.ev[0].info.posix_pid, ctx_a.pid);
	ck_assert_int_eq(r.ev[0].ext.posixtrace_ns_pid, 1);
	ck_assert_int_eq(r.ev[0].ext.posixtrace_ns_tid, 2);
	ck_assert_uint_eq(r.ev[0].ext.posixtrace_pidns, 77);
	expect_tagged(&r.ev[1], 1, T0 + 30);
	ck_assert_int_eq(r.ev[1].info.posix_pid, ctx_b.pid);
	ck_assert_int_eq(r.ev[1].ext.posixtrace_ns_pid, 0);
	ck_assert_int_eq(r.ev[1].ext.posixtrace_ns_tid, 0);
	ck_assert_uint_eq(r.ev[1].ext.posixtrace_pidns, 0);
	close(fd);
}
END_TEST

/* Valid blocks of the reserved types 8 to 31 are skipped, inside a drain
 * too; type 32, and EVENTS in a version 3 log, are invalid blocks. */
START_TEST(reserved_types_skipped)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t a[] = {20}, b[] = {10}, c[] = {30};
	const char table[24] = "a later revision's";
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, a, 1);
	v3_block(&g, PT_LOG_RESERVED_FIRST, g.seq++, 0, table, sizeof table);
	v3_block(&g, PT_LOG_RESERVED_END - 1, g.seq++, 0, table, sizeof table);
	stage_block(&g, 1, 1, 1, b, 1);
	v3_end(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 2);
	expect_tagged(&r.ev[0], 1, T0 + 10);
	expect_tagged(&r.ev[1], 0, T0 + 20);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	ck_assert_int_eq(r.log.posixtrace_closed, 1);
	close(fd);

	const uint32_t bad_types[] = {PT_LOG_RESERVED_END, PT_LOG_EVENTS};
	for (int i = 0; i < 2; i++) {
		fd = new_file();
		v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
		stage_block(&g, 1, 0, 0, a, 1);
		v3_block(&g, bad_types[i], g.seq++, 0, table, sizeof table);
		stage_block(&g, 2, 0, 1, c, 1);
		v3_end(&g);
		r = v3_read(fd);
		ck_assert_uint_eq(r.n, 3);
		expect_tagged(&r.ev[0], 0, T0 + 20);
		expect_error(&r.ev[1], T0 + 20);
		expect_tagged(&r.ev[2], 1, T0 + 30);
		close(fd);
	}
}
END_TEST

/* ---- IMAGES tables ------------------------------------------------------------ */

/* An IMAGES entry of pid ctx_a's (100) covering [start, end), in set `set`
 * begun at T0 + at. */
static struct pt_log_image image_entry(uint64_t set, uint64_t at, uint64_t start, uint64_t end,
                                       const char *path)
{
	struct pt_log_image e = {.pid = ctx_a.pid, .time_ns = T0 + at, .set = set, .start = start,
	                         .end = end, .bias = start & ~0xfffull, .count = 1,
	                         .path_len = (uint16_t)strlen(path), .build_id_len = 20};
	memset(e.build_id, 0xb0 + (int)set, 20);
	e.entry_size = pt_log_image_size(e.path_len);
	return e;
}

/* An entry and its path into buf at *n. */
static void put_entry(unsigned char *buf, uint32_t *n, const struct pt_log_image *e, const char *path)
{
	memset(buf + *n, 0, pt_log_image_size(e->path_len));
	memcpy(buf + *n, e, sizeof *e);
	memcpy(buf + *n + sizeof *e, path, strlen(path) < e->path_len ? strlen(path) : e->path_len);
	*n += pt_log_image_size(e->path_len);
}

/* One IMAGES block holding the entry e (path) first, then a well-formed
 * entry that must be dropped with it when e is refused. */
static void image_block(struct v3 *g, const struct pt_log_image *e, const char *path)
{
	unsigned char buf[2048];
	uint32_t n = 0;
	put_entry(buf, &n, e, path);
	struct pt_log_image after = image_entry(99, 56, 0x400002, 0x400003, "/after-bad");
	put_entry(buf, &n, &after, "/after-bad");
	v3_block(g, PT_LOG_IMAGES, g->seq++, 0, buf, n);
}

/* The path posixtrace_event_image gives the event read from trid, or
 * "-" for ENOENT. */
static const char *image_path(trace_id_t trid, const struct posix_trace_event_info *ev,
                              struct posixtrace_image *img)
{
	int err = posixtrace_event_image(trid, ev, img);
	ck_assert_msg(err == 0 || err == ENOENT, "posixtrace_event_image: %s", strerror(err));
	return err ? "-" : img->posixtrace_path;
}

/* The IMAGES table of a crafted log (docs/LOG-FORMAT.md, "Which image an
 * event was in"): the set in force at an event's time holds its image; an
 * address it lacks is found in a set begun later (a plug-in described
 * after its first event); a later set replaces an earlier one (exec).  A
 * set of 3,000 entries is searched, not scanned.  Entries the reader must
 * refuse, each first in its block and each claiming event 2's address in
 * a newer set, are not used, nor is anything after them in their block:
 * a wrong entry size, pid 0, start not below end, index not below count,
 * a path over 512 bytes, a build id over 32 bytes.  No table is damage. */
START_TEST(images_table_crafted)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t t0[] = {20}, t1[] = {25}, t2[] = {60};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, t0, 1); /* event 0: pc 0x400000 */
	stage_block(&g, 1, 1, 1, t1, 1); /* event 1: pc 0x400001 */
	stage_block(&g, 2, 2, 2, t2, 1); /* event 2: pc 0x400002 */
	unsigned char buf[PT_LOG_MIN_BLOCK - PT_LOG_BLOCK_HDR];
	uint32_t n = 0;
	struct pt_log_image e = image_entry(1, 10, 0x400000, 0x400001, "/prog");
	e.count = 3001;
	put_entry(buf, &n, &e, "/prog");
	for (uint32_t i = 1; i <= 3000; i++) {
		char path[32];
		snprintf(path, sizeof path, "/lib%u.so", i);
		e = image_entry(1, 10, 0x10000000ull + i * 0x1000ull, 0x10000800ull + i * 0x1000ull, path);
		e.index = (uint16_t)i;
		e.count = 3001;
		if (n + pt_log_image_size(e.path_len) > sizeof buf) {
			v3_block(&g, PT_LOG_IMAGES, g.seq++, 0, buf, n);
			n = 0;
		}
		put_entry(buf, &n, &e, path);
	}
	e = image_entry(3, 30, 0x400001, 0x400002, "/plugin");
	put_entry(buf, &n, &e, "/plugin");
	e = image_entry(2, 50, 0x400000, 0x400004, "/prog2");
	put_entry(buf, &n, &e, "/prog2");
	v3_block(&g, PT_LOG_IMAGES, g.seq++, 0, buf, n);

	struct pt_log_image bad[6];
	for (int i = 0; i < 6; i++)
		bad[i] = image_entry(9, 55, 0x400002, 0x400003, "/bad");
	bad[0].entry_size += 8;
	bad[1].pid = 0;
	bad[2].end = bad[2].start;
	bad[3].index = 1;
	bad[4].path_len = 513;
	bad[4].entry_size = pt_log_image_size(513);
	bad[5].build_id_len = 33;
	for (int i = 0; i < 6; i++)
		image_block(&g, &bad[i], "/bad");
	v3_end(&g);

	trace_id_t trid;
	struct posixtrace_image img;
	const char *want[] = {"/prog", "/plugin", "/prog2"};
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posix_trace_event_info info;
	char data[64];
	size_t len, k = 0;
	int unavailable = 0;
	for (;;) {
		ck_assert_ok(posix_trace_getnext_event(trid, &info, data, sizeof data, &len,
		                                       &unavailable));
		if (unavailable)
			break;
		ck_assert_uint_lt(k, 3);
		ck_assert_str_eq(image_path(trid, &info, &img), want[k]);
		ck_assert_uint_le(img.posixtrace_start, (uintptr_t)info.posix_prog_address);
		ck_assert_uint_lt((uintptr_t)info.posix_prog_address, img.posixtrace_end);
		ck_assert_uint_eq(img.posixtrace_build_id_size, 20);
		ck_assert_uint_eq(img.posixtrace_uid, POSIXTRACE_UID_UNKNOWN); /* a type 7 table */
		k++;
	}
	ck_assert_uint_eq(k, 3);
	/* Every image of the big set, by address, at event 0's time. */
	info.posix_pid = ctx_a.pid;
	info.posix_timestamp = (struct timespec){(time_t)((T0 + 20) / 1000000000u),
	                                         (long)((T0 + 20) % 1000000000u)};
	for (uint32_t i = 1; i <= 3000; i++) {
		char path[32];
		snprintf(path, sizeof path, "/lib%u.so", i);
		info.posix_prog_address = (void *)(uintptr_t)(0x10000000ull + i * 0x1000ull + 0x7ff);
		ck_assert_str_eq(image_path(trid, &info, &img), path);
		info.posix_prog_address = (void *)(uintptr_t)(0x10000800ull + i * 0x1000ull);
		ck_assert_str_eq(image_path(trid, &info, &img), "-");
	}
	info.posix_pid = ctx_b.pid;
	ck_assert_str_eq(image_path(trid, &info, &img), "-");
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(trid, &li));
	ck_assert_uint_eq(li.posixtrace_damaged_blocks, 0);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* The resident memory of this process, in KiB (/proc/self/status). */
static long resident_kib(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long kib = -1;
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	ck_assert_int_ge(kib, 0);
	return kib;
}

/* An event of process pid at addr and T0 + at, as posixtrace_event_image
 * takes it. */
static struct posix_trace_event_info event_at(pid_t pid, uint64_t addr, uint64_t at)
{
	struct posix_trace_event_info info;
	memset(&info, 0, sizeof info);
	info.posix_pid = pid;
	info.posix_prog_address = (void *)(uintptr_t)addr;
	info.posix_timestamp = (struct timespec){(time_t)((T0 + at) / 1000000000u),
	                                         (long)((T0 + at) % 1000000000u)};
	return info;
}

/* A FILE entry of an IMAGES_SHARED payload into buf at *n (entry_size 0:
 * the right one). */
static void put_shared_file(unsigned char *buf, uint32_t *n, const char *path, uint8_t id_byte,
                            uint32_t entry_size)
{
	struct pt_log_shared_file f = {.kind = PT_LOG_SHARED_FILE,
	                               .path_len = (uint16_t)strlen(path),
	                               .build_id_len = 20};
	f.entry_size = entry_size ? entry_size : pt_log_shared_file_size(f.path_len);
	memset(f.build_id, id_byte, 20);
	memset(buf + *n, 0, f.entry_size);
	memcpy(buf + *n, &f, sizeof f);
	memcpy(buf + *n + sizeof f, path, f.path_len);
	*n += f.entry_size;
}

/* An IMAGE entry of an IMAGES_SHARED payload: process pid's only image,
 * [start, start + 0x1000) of the block's file `file`, set `set` begun at
 * T0 + at, described by uid. */
static struct pt_log_shared_image shared_image(int32_t pid, uint32_t file, uint64_t set,
                                               uint64_t at, uint64_t start, uint32_t uid)
{
	return (struct pt_log_shared_image){.entry_size = sizeof(struct pt_log_shared_image),
	                                    .kind = PT_LOG_SHARED_IMAGE, .index = 0, .count = 1,
	                                    .file = file, .pid = pid, .uid = uid,
	                                    .time_ns = T0 + at, .set = set, .start = start,
	                                    .end = start + 0x1000, .bias = start};
}

static void put_shared_image(unsigned char *buf, uint32_t *n, struct pt_log_shared_image m)
{
	memset(buf + *n, 0, m.entry_size);
	memcpy(buf + *n, &m, sizeof m);
	*n += m.entry_size;
}

/* The IMAGES_SHARED table of a crafted log (docs/LOG-FORMAT.md): a file
 * with an empty path, the first the reader keeps, is read back (under
 * UBSan this was a null pointer plus 0, found by fuzz_logcraft); images of
 * two processes share one FILE entry and read back with its path and build
 * id and each with the uid its entry gives (1234 and 0, and unknown);
 * entries larger than their kind (a later revision's) and entries of an
 * unknown kind are skipped over, not damage; an image naming a file not
 * described before it in the block, an entry size not a multiple of 8 and
 * a FILE entry too short for its path stop the block there (the entries
 * after them are not used). */
START_TEST(images_shared_crafted)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t t0[] = {20};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, t0, 1);
	unsigned char buf[4096];
	uint32_t n = 0;
	put_shared_file(buf, &n, "", 0xc0, 0); /* a file without a path, the first kept */
	put_shared_image(buf, &n, shared_image(600, 0, 1, 10, 0x5000, 0));
	v3_block(&g, PT_LOG_IMAGES_SHARED, g.seq++, 0, buf, n);
	n = 0;
	put_shared_file(buf, &n, "/usr/lib/shared.so", 0xc1, 0);
	put_shared_image(buf, &n, shared_image(ctx_a.pid, 0, 1, 10, 0x7000, 1234));
	struct pt_log_shared_image later = shared_image(ctx_b.pid, 0, 1, 10, 0x9000, 0);
	later.entry_size += 16; /* a later revision's fields */
	put_shared_image(buf, &n, later);
	const uint32_t unknown[4] = {16, 7, 0, 0}; /* an unknown kind, skipped */
	memcpy(buf + n, unknown, sizeof unknown);
	n += sizeof unknown;
	put_shared_file(buf, &n, "/other", 0xc2, 0);
	put_shared_image(buf, &n, shared_image(300, 1, 1, 10, 0xb000, PT_LOG_UID_UNKNOWN));
	v3_block(&g, PT_LOG_IMAGES_SHARED, g.seq++, 0, buf, n);
	/* Each stops its block, and the good image after it is not used. */
	for (int bad = 0; bad < 3; bad++) {
		n = 0;
		put_shared_file(buf, &n, "/bad", 0xc3, bad == 2 ? 48 : 0);
		struct pt_log_shared_image m = shared_image(400 + bad, bad == 0 ? 1 : 0, 1, 10, 0xd000, 5);
		if (bad == 1)
			m.entry_size = 68;
		put_shared_image(buf, &n, m);
		put_shared_image(buf, &n, shared_image(500 + bad, 0, 1, 10, 0xd000, 5));
		v3_block(&g, PT_LOG_IMAGES_SHARED, g.seq++, 0, buf, n);
	}
	v3_end(&g);

	trace_id_t trid;
	struct posixtrace_image img;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posix_trace_event_info ev = event_at(600, 0x5000, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "");
	ck_assert_uint_eq(img.posixtrace_build_id[0], 0xc0);
	ev = event_at(ctx_a.pid, 0x7010, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/usr/lib/shared.so");
	ck_assert_uint_eq(img.posixtrace_uid, 1234);
	ck_assert_uint_eq(img.posixtrace_build_id_size, 20);
	ck_assert_uint_eq(img.posixtrace_build_id[19], 0xc1);
	ck_assert_uint_eq(img.posixtrace_start, 0x7000);
	ck_assert_uint_eq(img.posixtrace_load_bias, 0x7000);
	ev = event_at(ctx_b.pid, 0x9fff, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/usr/lib/shared.so");
	ck_assert_uint_eq(img.posixtrace_uid, 0);
	ev = event_at(300, 0xb000, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/other");
	ck_assert_uint_eq(img.posixtrace_uid, POSIXTRACE_UID_UNKNOWN);
	ck_assert_uint_eq(img.posixtrace_build_id[0], 0xc2);
	for (int bad = 0; bad < 3; bad++) {
		ev = event_at(400 + bad, 0xd000, 20);
		ck_assert_str_eq(image_path(trid, &ev, &img), "-");
		ev = event_at(500 + bad, 0xd000, 20);
		ck_assert_str_eq(image_path(trid, &ev, &img), "-");
	}
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(trid, &li));
	ck_assert_uint_eq(li.posixtrace_images, 4);
	ck_assert_uint_eq(li.posixtrace_images_dropped, 0);
	ck_assert_uint_eq(li.posixtrace_damaged_blocks, 0);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* ---- IMAGES_COMPACT: files described once per log -------------------------- */

/* An IMAGES_COMPACT payload being crafted: the table, then entries. */
struct compact {
	unsigned char buf[4096];
	uint32_t n;
	int32_t pid; /* of the SET entry before: the base of the next one's delta */
};

static void compact_begin(struct compact *c, uint64_t table)
{
	memcpy(c->buf, &table, sizeof table);
	c->n = PT_LOG_COMPACT_PREFIX;
	c->pid = 0;
}

static void compact_entry(struct compact *c, uint8_t kind, const unsigned char *body, uint64_t n)
{
	c->buf[c->n++] = kind;
	c->n += pt_log_varint_put(c->buf + c->n, n);
	memcpy(c->buf + c->n, body, n);
	c->n += (uint32_t)n;
}

/* A FILE entry: id is path, build id 20 bytes of id_byte, [0, 0x1000) past
 * the bias. */
static void compact_file(struct compact *c, uint64_t id, const char *path, uint8_t id_byte)
{
	unsigned char body[256];
	uint32_t n = pt_log_varint_put(body, id);
	body[n++] = 0;
	body[n++] = 20;
	memset(body + n, id_byte, 20);
	n += 20;
	n += pt_log_varint_put(body + n, 0);
	n += pt_log_varint_put(body + n, 0x1000);
	n += pt_log_varint_put(body + n, strlen(path));
	memcpy(body + n, path, strlen(path));
	n += (uint32_t)strlen(path);
	compact_entry(c, PT_LOG_COMPACT_FILE, body, n);
}

/* A SET entry: process pid's only image, file id at bias (in bytes), its
 * set begun at T0 + 10, described by uid 77; claimed: the number of images
 * the entry says it has (1: the truth). */
static void compact_set(struct compact *c, int32_t pid, uint64_t id, uint64_t bias,
                        uint64_t claimed)
{
	unsigned char body[128];
	uint32_t n = 0;
	body[n++] = 0;
	n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)pid - c->pid));
	n += pt_log_varint_put(body + n, 78);
	n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)(T0 + 10)));
	n += pt_log_varint_put(body + n, pt_log_zigzag(1));
	n += pt_log_varint_put(body + n, claimed > 1 ? 65535 : 1);
	n += pt_log_varint_put(body + n, 0);
	n += pt_log_varint_put(body + n, claimed);
	n += pt_log_varint_put(body + n, id);
	n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)bias));
	compact_entry(c, PT_LOG_COMPACT_SET, body, n);
	c->pid = pid;
}

/* The IMAGES_COMPACT table of a crafted log (docs/LOG-FORMAT.md): a file
 * described in one block serves images of later blocks, and one described
 * after the images that name it (a ring's description again) serves them
 * too; the same id in another table is another file; a file described
 * again the same way is no conflict.  Hostile entries are counted as
 * dropped images, never trusted and never a crash: an id no FILE entry
 * describes, an id described twice with different paths (neither is used),
 * a SET entry claiming 10^9 images, a body length past the payload, a pid
 * that comes out below 1; an unknown kind is skipped. */
START_TEST(images_compact_crafted)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t t0[] = {20};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, t0, 1);
	const uint64_t table = 0x1234, other = 0x5678;
	struct compact c;
	compact_begin(&c, table);
	compact_file(&c, 0, "/lib/a.so", 0xa1);
	compact_set(&c, 600, 0, 0x5000, 1);
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	compact_set(&c, 601, 1, 0x6000, 1);  /* described in the next block */
	compact_set(&c, 602, 7, 0x6000, 1);  /* never described */
	compact_set(&c, 603, 2, 0x6000, 1);  /* described twice, differently */
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	compact_file(&c, 1, "/lib/b.so", 0xb1);
	compact_file(&c, 2, "/x", 0xc1);
	compact_file(&c, 0, "/lib/a.so", 0xa1); /* again, the same */
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	compact_file(&c, 2, "/y", 0xc1);
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, other);
	compact_file(&c, 0, "/t2", 0xd1);
	compact_set(&c, 604, 0, 0x7000, 1);
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	compact_set(&c, 605, 0, 0x8000, 1000000000); /* a huge count: the block stops */
	compact_set(&c, 606, 0, 0x8000, 1);
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	c.buf[c.n++] = PT_LOG_COMPACT_SET;
	c.n += pt_log_varint_put(c.buf + c.n, 1000); /* past the payload */
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	compact_set(&c, 607, 0, 0x8000, 1);
	compact_set(&c, -5, 0, 0x8000, 1); /* pid -5: the block stops */
	compact_set(&c, 608, 0, 0x8000, 1);
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	compact_begin(&c, table);
	const unsigned char unknown[] = {3, 0, 0, 0};
	compact_entry(&c, 9, unknown, sizeof unknown); /* skipped */
	compact_set(&c, 609, 0, 0x9000, 1);
	v3_block(&g, PT_LOG_IMAGES_COMPACT, g.seq++, 0, c.buf, c.n);
	v3_end(&g);

	trace_id_t trid;
	struct posixtrace_image img;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(trid, &li));
	ck_assert_uint_eq(li.posixtrace_images, 5); /* 600, 601, 604, 607, 609 */
	ck_assert_uint_eq(li.posixtrace_images_dropped, 5); /* 602, 603, 605, the length, -5 */
	struct posix_trace_event_info ev = event_at(600, 0x5800, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/lib/a.so");
	ck_assert_uint_eq(img.posixtrace_start, 0x5000);
	ck_assert_uint_eq(img.posixtrace_end, 0x6000);
	ck_assert_uint_eq(img.posixtrace_load_bias, 0x5000);
	ck_assert_uint_eq(img.posixtrace_uid, 77);
	ck_assert_uint_eq(img.posixtrace_build_id_size, 20);
	ck_assert_uint_eq(img.posixtrace_build_id[19], 0xa1);
	ev = event_at(601, 0x6000, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/lib/b.so");
	ev = event_at(604, 0x7fff, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/t2");
	ev = event_at(607, 0x8000, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/lib/a.so");
	ev = event_at(609, 0x9000, 20);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/lib/a.so");
	for (int32_t pid = 602; pid <= 608; pid++) {
		if (pid == 604 || pid == 607)
			continue;
		ev = event_at(pid, pid == 603 || pid == 602 ? 0x6000 : 0x8000, 20);
		ck_assert_str_eq(image_path(trid, &ev, &img), "-");
	}
	ck_assert_ok(posixtrace_log_info(trid, &li));
	ck_assert_uint_eq(li.posixtrace_images, 5);
	ck_assert_uint_eq(li.posixtrace_images_dropped, 5);
	ck_assert_uint_eq(li.posixtrace_damaged_blocks, 0);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* Entries of process 1 (ctx_a) that pass the old table's 2^17; it keeps
 * 4,096 of them (PT_LOGI_PER_PROCESS). */
#define GREEDY_IMAGES ((1u << 17) + 1024u)

/* The IMAGES table is fair per process (security, fourth round, item 5:
 * the reader kept the first 2^17 entries of the log, so a process that
 * described more, first, left every later process's images unnamed).  In
 * a crafted log, process 1 describes 2^17 + 1,024 images (sets of 1,000,
 * a path of its own each) and then process 2 describes 5: each of process
 * 2's is found, with its path; process 1 keeps its bound
 * (PT_LOGI_PER_PROCESS) and the rest is counted as dropped; opening the
 * log costs the reader a bounded amount of memory (under 16 MiB, where
 * 2^17 entries with their paths took about 80). */
START_TEST(images_table_fair_per_process)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t t0[] = {20};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, t0, 1);
	unsigned char buf[PT_LOG_MIN_BLOCK - PT_LOG_BLOCK_HDR];
	uint32_t n = 0;
	for (uint32_t i = 0; i < GREEDY_IMAGES; i++) {
		char path[40];
		snprintf(path, sizeof path, "/greedy/lib%u.so", i);
		uint64_t start = 0x10000000ull + (uint64_t)(i % 1000) * 0x1000ull;
		struct pt_log_image e = image_entry(1 + i / 1000, 10 + i / 1000, start, start + 0x800, path);
		e.index = (uint16_t)(i % 1000);
		e.count = 1000;
		if (n + pt_log_image_size(e.path_len) > sizeof buf) {
			v3_block(&g, PT_LOG_IMAGES, g.seq++, 0, buf, n);
			n = 0;
		}
		put_entry(buf, &n, &e, path);
	}
	for (uint32_t i = 0; i < 5; i++) {
		char path[40];
		snprintf(path, sizeof path, "/modest/lib%u.so", i);
		uint64_t start = 0x20000000ull + i * 0x1000ull;
		struct pt_log_image e = image_entry(7, 5000, start, start + 0x800, path);
		e.pid = ctx_b.pid;
		e.index = (uint16_t)i;
		e.count = 5;
		if (n + pt_log_image_size(e.path_len) > sizeof buf) {
			v3_block(&g, PT_LOG_IMAGES, g.seq++, 0, buf, n);
			n = 0;
		}
		put_entry(buf, &n, &e, path);
	}
	v3_block(&g, PT_LOG_IMAGES, g.seq++, 0, buf, n);
	v3_end(&g);

	long before = resident_kib();
	trace_id_t trid;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	long grown = resident_kib() - before;
	struct posixtrace_image img;
	for (uint32_t i = 0; i < 5; i++) {
		char path[40];
		snprintf(path, sizeof path, "/modest/lib%u.so", i);
		struct posix_trace_event_info ev = event_at(ctx_b.pid, 0x20000000ull + i * 0x1000ull + 1, 6000);
		ck_assert_str_eq(image_path(trid, &ev, &img), path);
		ck_assert_uint_eq(img.posixtrace_uid, POSIXTRACE_UID_UNKNOWN);
	}
	struct posix_trace_event_info ev = event_at(ctx_a.pid, 0x10000000ull, 10);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/greedy/lib0.so");
	ck_assert_msg(grown < 16 * 1024, "opening the log took %ld KiB", grown);
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(trid, &li));
	ck_assert_uint_eq(li.posixtrace_images, 4096 + 5);
	ck_assert_uint_eq(li.posixtrace_images_dropped, GREEDY_IMAGES - 4096);
	ck_assert_uint_eq(li.posixtrace_damaged_blocks, 0);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* The same in the IMAGES_SHARED form, a process describing the same two
 * files over and over in new sets: process 1 (ctx_a) describes 2^17 +
 * 1,024 images, each block naming its two files once, then process 2
 * describes 5 files of its own; each of process 2's is found with its
 * uid, process 1 keeps its bound and the rest is counted as dropped, and
 * the reader keeps process 1's two files once (its memory grows under
 * 16 MiB). */
START_TEST(images_shared_fair_per_process)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t t0[] = {20};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, t0, 1);
	unsigned char buf[PT_LOG_MIN_BLOCK - PT_LOG_BLOCK_HDR];
	uint32_t n = 0;
	for (uint32_t i = 0; i < GREEDY_IMAGES; i++) {
		if (n + sizeof(struct pt_log_shared_image) > sizeof buf) {
			v3_block(&g, PT_LOG_IMAGES_SHARED, g.seq++, 0, buf, n);
			n = 0;
		}
		if (!n) {
			put_shared_file(buf, &n, "/greedy/a.so", 0xa1, 0);
			put_shared_file(buf, &n, "/greedy/b.so", 0xa2, 0);
		}
		struct pt_log_shared_image m =
		    shared_image(ctx_a.pid, i % 2, 1 + i / 2, 10 + i / 2, 0x10000000ull + (i % 2) * 0x1000ull, 1000);
		m.index = (uint16_t)(i % 2);
		m.count = 2;
		put_shared_image(buf, &n, m);
	}
	v3_block(&g, PT_LOG_IMAGES_SHARED, g.seq++, 0, buf, n);
	n = 0;
	for (uint32_t i = 0; i < 5; i++) {
		char path[40];
		snprintf(path, sizeof path, "/modest/lib%u.so", i);
		put_shared_file(buf, &n, path, 0xb0, 0);
		struct pt_log_shared_image m = shared_image(ctx_b.pid, i, 7, 200000, 0x20000000ull + i * 0x1000ull, 2000);
		m.index = (uint16_t)i;
		m.count = 5;
		put_shared_image(buf, &n, m);
	}
	v3_block(&g, PT_LOG_IMAGES_SHARED, g.seq++, 0, buf, n);
	v3_end(&g);

	long before = resident_kib();
	trace_id_t trid;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	long grown = resident_kib() - before;
	struct posixtrace_image img;
	for (uint32_t i = 0; i < 5; i++) {
		char path[40];
		snprintf(path, sizeof path, "/modest/lib%u.so", i);
		struct posix_trace_event_info ev = event_at(ctx_b.pid, 0x20000000ull + i * 0x1000ull + 1, 300000);
		ck_assert_str_eq(image_path(trid, &ev, &img), path);
		ck_assert_uint_eq(img.posixtrace_uid, 2000);
	}
	struct posix_trace_event_info ev = event_at(ctx_a.pid, 0x10001000ull, 10);
	ck_assert_str_eq(image_path(trid, &ev, &img), "/greedy/b.so");
	ck_assert_uint_eq(img.posixtrace_uid, 1000);
	ck_assert_msg(grown < 16 * 1024, "opening the log took %ld KiB", grown);
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(trid, &li));
	ck_assert_uint_eq(li.posixtrace_images, 4096 + 5);
	ck_assert_uint_eq(li.posixtrace_images_dropped, GREEDY_IMAGES - 4096);
	ck_assert_uint_eq(li.posixtrace_damaged_blocks, 0);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* ---- layouts and versions ---------------------------------------------------- */

/* A version 2 log (EVENTS blocks with CONTEXT records) reads as before;
 * a STAGES block in it is invalid. */
START_TEST(version2_log_reads)
{
	int fd = new_file();
	struct lt_craft c;
	const char d[8] = "payload";
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "v2");
	lt_craft_event(&c, &ctx_a, 33, T0 + 10, 0x100, 0, d, 8);
	lt_craft_event(&c, &ctx_b, 34, T0 + 5, 0x200, 0, d, 3); /* TIME back */
	lt_craft_event(&c, &ctx_b, 35, T0 + 7, 0x300, 1, d, 0);
	lt_craft_seal(&c);
	lt_craft_event(&c, &ctx_a, 36, T0 + 1, 0x400, 0, d, 1); /* its own block: not merged */
	lt_craft_end(&c);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 4);
	expect_event(&r.ev[0], 33, T0 + 10, &ctx_a, 0x100);
	expect_event(&r.ev[1], 34, T0 + 5, &ctx_b, 0x200);
	expect_event(&r.ev[2], 35, T0 + 7, &ctx_b, 0x200);
	expect_event(&r.ev[3], 36, T0 + 1, &ctx_a, 0x400);
	ck_assert_mem_eq(r.ev[0].data, d, 8);
	ck_assert_uint_eq(r.log.posixtrace_version, 2);
	ck_assert_int_eq(r.log.posixtrace_closed, 1);
	close(fd);

	/* STAGES is not a version 2 type: the block is damage. */
	fd = new_file();
	struct v3 g;
	const uint32_t a[] = {20};
	v3_begin(&g, fd, 2, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, a, 1);
	memset(&c, 0, sizeof c); /* EVENTS blocks after it */
	c.fd = fd;
	c.block_size = PT_LOG_MIN_BLOCK;
	c.payload = lt_hold(malloc(c.block_size));
	ck_assert_ptr_nonnull(c.payload);
	c.off = g.off;
	c.seq = g.seq;
	lt_craft_event(&c, &ctx_a, 33, T0 + 10, 0x100, 0, d, 8);
	lt_craft_end(&c);
	r = v3_read(fd);
	ck_assert_uint_eq(r.n, 2);
	expect_error(&r.ev[0], 0);
	expect_event(&r.ev[1], 33, T0 + 10, &ctx_a, 0x100);
	close(fd);
}
END_TEST

/* Versions other than 2, 3 and 4 are refused. */
START_TEST(other_versions_refused)
{
	const uint32_t versions[] = {0, 1, 5, 0x03000000};
	for (int i = 0; i < 4; i++) {
		int fd = new_file();
		struct v3 g;
		const uint32_t a[] = {20};
		v3_begin(&g, fd, versions[i], PT_LOG_LINEAR, 0);
		stage_block(&g, 1, 0, 0, a, 1);
		trace_id_t trid;
		ck_assert_int_eq(posix_trace_open(fd, &trid), EINVAL);
		close(fd);
	}
}
END_TEST

/* A CPU record (version 4) in a STAGES section: the events after it carry
 * that CPU (0 is one), up to the next CPU record or OWNER (unknown after
 * it); a value out of bounds (from the traced process) reads as unknown;
 * events before any CPU record have none; the address is kept across a
 * CPU record. */
START_TEST(v4_cpu_records_give_the_events_their_cpu)
{
	int fd = new_file();
	struct v3 g;
	uint32_t cpu0[2] = {0, 0}, cpu3[2] = {3, 0}, huge[2] = {1u << 30, 0};
	v3_begin(&g, fd, 4, PT_LOG_LINEAR, 0);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 0, 0, &ctx_a, 0x100);
	v3_ev(&g, 40, 1, 0x100, NULL, 0);
	v3_rec(&g, v3_w0(PT_LOG_STAGE_CPU, 8, 0), 0, cpu0, 8);
	v3_ev(&g, 41, 2, 0x100, NULL, 0);
	v3_rec(&g, v3_w0(PT_LOG_STAGE_CPU, 8, 0), 0, cpu3, 8);
	v3_ev(&g, 42, 3, 0x100, NULL, 0);
	v3_ev(&g, 43, 4, 0, NULL, 0);
	v3_rec(&g, v3_w0(PT_LOG_STAGE_CPU, 8, 0), 0, huge, 8);
	v3_ev(&g, 44, 5, 0, NULL, 0); /* the address before the CPU record */
	v3_rec(&g, v3_w0(PT_LOG_STAGE_CPU, 8, 0), 0, cpu3, 8);
	v3_owner(&g, 0, &ctx_a);
	v3_ev(&g, 45, 6, 0x100, NULL, 0);
	v3_seal(&g);
	v3_end(&g);
	struct v3_read r = v3_read(fd);
	const int valid[] = {0, 1, 1, 1, 0, 0}, cpu[] = {0, 0, 3, 3, 0, 0};
	ck_assert_uint_eq(r.n, 6);
	for (int i = 0; i < 6; i++) {
		ck_assert_uint_eq(r.ev[i].info.posix_event_id, 40 + (unsigned)i);
		ck_assert_uint_eq(r.ev[i].ext.posixtrace_cpu_valid, valid[i]);
		ck_assert_uint_eq(r.ev[i].ext.posixtrace_cpu, cpu[i]);
		ck_assert_uint_eq((uintptr_t)r.ev[i].info.posix_prog_address, 0x100);
	}
	ck_assert_uint_eq(r.log.posixtrace_version, 4);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	close(fd);
}
END_TEST

/* Version 3 has no CPU record: one in a section is damage (the block). */
START_TEST(v3_cpu_record_is_damage)
{
	int fd = new_file();
	struct v3 g;
	uint32_t cpu1[2] = {1, 0};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 0, 0, &ctx_a, 0x100);
	v3_ev(&g, 40, 1, 0x100, NULL, 0);
	v3_rec(&g, v3_w0(PT_LOG_STAGE_CPU, 8, 0), 0, cpu1, 8);
	v3_ev(&g, 41, 2, 0x100, NULL, 0);
	v3_seal(&g);
	v3_end(&g);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 1);
	expect_error(&r.ev[0], 0);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 1);
	close(fd);
}
END_TEST

/* A ring of 4 slots of STAGES blocks, one drain each, after 6 blocks: the
 * newest 4 in order; a valid reserved block takes a slot like any other. */
START_TEST(ring_of_stages_blocks)
{
	int fd = new_file();
	struct v3 g;
	v3_begin(&g, fd, 3, PT_LOG_RING, 4);
	for (uint32_t k = 0; k < 6; k++) {
		const uint32_t ts[] = {k * 10};
		stage_block(&g, k + 1, 0, k, ts, 1);
	}
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 4);
	for (uint32_t i = 0; i < 4; i++)
		expect_tagged(&r.ev[i], i + 2, T0 + (i + 2) * 10);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	v3_block(&g, PT_LOG_RESERVED_FIRST, g.seq++, 0, "table", 5);
	r = v3_read(fd);
	ck_assert_uint_eq(r.n, 3);
	for (uint32_t i = 0; i < 3; i++)
		expect_tagged(&r.ev[i], i + 3, T0 + (i + 3) * 10);
	close(fd);
}
END_TEST

/* A log cut inside a block of a drain: the drain's complete blocks,
 * merged, no ERROR, not closed. */
START_TEST(cut_short_inside_a_drain)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t a[] = {30}, b[] = {10}, c[] = {20};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, a, 1);
	stage_block(&g, 1, 1, 1, b, 1);
	uint64_t cut = g.off + 60;
	stage_block(&g, 1, 2, 2, c, 1);
	v3_end(&g);
	ck_assert_int_eq(ftruncate(fd, (off_t)cut), 0);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 2);
	expect_tagged(&r.ev[0], 1, T0 + 10);
	expect_tagged(&r.ev[1], 0, T0 + 30);
	ck_assert_uint_eq(r.log.posixtrace_damaged_blocks, 0);
	ck_assert_int_eq(r.log.posixtrace_closed, 0);
	close(fd);
}
END_TEST

/* An unseekable log (read whole from a pipe) reads the same. */
START_TEST(pipe_reads_the_same)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t a[] = {30, 40}, b[] = {10, 35};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, a, 2);
	stage_block(&g, 1, 1, 2, b, 2);
	v3_end(&g);
	struct v3_read file = v3_read(fd);
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	struct lt_pump pump = {.in = fd, .out = p[1], .close_out = 1};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, lt_pump_main, &pump), 0);
	struct v3_read piped = v3_read(p[0]);
	pthread_join(th, NULL);
	close(p[0]);
	ck_assert_uint_eq(file.n, 4);
	ck_assert_uint_eq(piped.n, 4);
	const uint32_t order[] = {2, 0, 3, 1};
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(tag_of(&file.ev[i]), order[i]);
		ck_assert_uint_eq(tag_of(&piped.ev[i]), order[i]);
		ck_assert_uint_eq(v3_ts(&file.ev[i]), v3_ts(&piped.ev[i]));
	}
	close(fd);
}
END_TEST

/* ---- many events --------------------------------------------------------------- */

/* A PRNG of the tests' own (xorshift). */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

struct want {
	uint64_t ts;
	uint32_t tag;
	uint32_t drain_pos; /* which drain (or part of one), in log order */
};

static int by_time(const void *a, const void *b)
{
	const struct want *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->tag < y->tag ? -1 : x->tag > y->tag; /* tags follow write order */
}

/*
 * The order the merge defines, for sources whose times never go back: the
 * events left of the oldest drain and of the next one, by time (equal
 * times in write order), up to the oldest drain's last; then the drain
 * after them joins.  w holds n events in write order (drain_pos 0, 1, ...
 * rising); it is rewritten in that order.
 */
static void lookahead_order(struct want *w, size_t n)
{
	struct want *pool = malloc(n * sizeof *pool), *out = malloc(n * sizeof *out);
	ck_assert_ptr_nonnull(pool);
	ck_assert_ptr_nonnull(out);
	size_t npool = 0, nout = 0, next = 0;
	for (uint32_t d = 0; next < n || npool; d++) {
		while (next < n && w[next].drain_pos <= d + 1)
			pool[npool++] = w[next++];
		qsort(pool, npool, sizeof *pool, by_time);
		size_t upto = 0;
		for (size_t i = 0; i < npool; i++)
			if (pool[i].drain_pos == d)
				upto = i + 1;
		memcpy(out + nout, pool, upto * sizeof *pool);
		nout += upto;
		memmove(pool, pool + upto, (npool - upto) * sizeof *pool);
		npool -= upto;
	}
	ck_assert_uint_eq(nout, n);
	memcpy(w, out, n * sizeof *w);
	free(pool);
	free(out);
}

/* How many times an event of a drain follows one of a later drain. */
static size_t drain_crossings(const struct want *w, size_t n)
{
	size_t k = 0;
	for (size_t i = 1; i < n; i++)
		k += w[i].drain_pos < w[i - 1].drain_pos;
	return k;
}

/*
 * Drains of many blocks (the first larger than the reader's 1 MiB window),
 * each block with sections of lanes chosen at random, each lane's times
 * rising by random steps, some equal, over the whole log: lanes used less
 * often fall behind, so a drain holds events older than many of the
 * drain before it, and some older than the drain two before.  The events
 * come in the order lookahead_order defines (with one lane: write order).
 */
static void many(int lanes, const uint32_t drain_blocks[3])
{
	int fd = new_file();
	struct v3 g;
	uint64_t seed = 0x9e3779b97f4a7c15ull + (uint64_t)lanes;
	size_t cap = 200000, n = 0;
	struct want *w = lt_hold(malloc(cap * sizeof *w));
	ck_assert_ptr_nonnull(w);
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	uint64_t lane_t[8] = {0};
	for (uint32_t d = 0; d < 3; d++) {
		for (uint32_t b = 0; b < drain_blocks[d]; b++) {
			v3_stages_mono(&g, d + 1, T0);
			uint32_t nsec = lanes > 1 ? 1 + (uint32_t)(rnd(&seed) % 3) : 1;
			uint32_t per = (g.cap - 200) / nsec / 24 - 4;
			for (uint32_t s = 0; s < nsec; s++) {
				uint32_t lane = (uint32_t)(rnd(&seed) % (uint64_t)lanes);
				v3_lane(&g, lane, lane_t[lane], &ctx_a, 0x1000 + lane);
				uint64_t base = lane_t[lane];
				uint32_t k = per - (uint32_t)(rnd(&seed) % 16);
				for (uint32_t i = 0; i < k; i++) {
					lane_t[lane] += rnd(&seed) % 4; /* equal times now and then */
					ck_assert_uint_lt(n, cap);
					w[n] = (struct want){T0 + lane_t[lane], (uint32_t)n, d};
					tagged(&g, (uint32_t)(lane_t[lane] - base), 0, (uint32_t)n);
					n++;
				}
			}
			v3_seal(&g);
		}
	}
	v3_end(&g);
	lookahead_order(w, n);
	if (lanes > 1)
		ck_assert_uint_gt(drain_crossings(w, n), 0);
	else
		ck_assert_uint_eq(drain_crossings(w, n), 0);
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	/* whole passes, then passes after a rewind that followed the first
	 * few events (the first drains' sources, over a hundred here, start
	 * again: pt_logm_restart) */
	const size_t read_first[] = {0, 0, 1, 7, 1000};
	for (int pass = 0; pass < 5; pass++) {
		for (size_t i = 0; i < read_first[pass] && i < n; i++) {
			struct posix_trace_event_info info;
			uint32_t tag;
			size_t len;
			int unavailable;
			ck_assert_ok(posix_trace_getnext_event(trid, &info, &tag, sizeof tag, &len,
			                                       &unavailable));
			ck_assert_int_eq(unavailable, 0);
		}
		if (read_first[pass])
			ck_assert_ok(posix_trace_rewind(trid));
		for (size_t i = 0; i <= n; i++) {
			struct posix_trace_event_info info;
			uint32_t tag;
			size_t len;
			int unavailable;
			ck_assert_ok(posix_trace_getnext_event(trid, &info, &tag, sizeof tag, &len,
			                                       &unavailable));
			if (i == n) {
				ck_assert_int_eq(unavailable, 1);
				break;
			}
			ck_assert_int_eq(unavailable, 0);
			if (tag != w[i].tag || pt_ns(&info.posix_timestamp) != (int64_t)w[i].ts)
				ck_abort_msg("event %zu: tag %u, want %u", i, tag, w[i].tag);
		}
		ck_assert_ok(posix_trace_rewind(trid));
	}
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}

static const uint32_t forty_three_seventeen[] = {40, 3, 17};

START_TEST(many_lanes_many_blocks_merged)
{
	many(5, forty_three_seventeen);
}
END_TEST

START_TEST(one_lane_many_blocks)
{
	many(1, forty_three_seventeen);
}
END_TEST

/* A first drain of 64 sections and a second of one: after a rewind every
 * source of both waits at once, one more than the merge held when the
 * second joined (the first's first section had been reached). */
START_TEST(one_lane_first_drain_of_64_sections)
{
	static const uint32_t blocks[] = {64, 1, 5};
	many(1, blocks);
}
END_TEST

/* A log of two writers' stages with a damaged stage (ERROR), the keeper's
 * own context and a RESUME between them: what the rewind tests read. */
static int log_with_error_and_resume(void)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t a[] = {30, 40}, b[] = {10, 35};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	stage_block(&g, 1, 0, 0, a, 2);
	damaged_stages(&g, D_FIRST_NOT_OWNER);
	v3_keeper(&g, 2);
	v3_context(&g, 0, &ctx_ctl, 0);
	v3_resume(&g, 0);
	v3_seal_at(&g, T0 + 5);
	stage_block(&g, 2, 1, 2, b, 2);
	v3_end(&g);
	return fd;
}

/* Rewind gives the same sequence again, ERROR and RESUME included. */
START_TEST(rewind_gives_the_same_sequence)
{
	int fd = log_with_error_and_resume();
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posix_trace_event_info first[16], again[16];
	size_t n = 0;
	for (int pass = 0; pass < 2; pass++) {
		struct posix_trace_event_info *out = pass ? again : first;
		size_t k = 0;
		for (;; k++) {
			unsigned char data[8];
			size_t len;
			int unavailable;
			ck_assert_uint_lt(k, 16);
			ck_assert_ok(posix_trace_getnext_event(trid, &out[k], data, sizeof data, &len,
			                                       &unavailable));
			if (unavailable)
				break;
		}
		if (pass)
			ck_assert_uint_eq(k, n);
		n = k;
		ck_assert_ok(posix_trace_rewind(trid));
	}
	/* RESUME, 10, 30, 35, 40 (the two drains merged), then drain 2's
	 * ERROR when it is the oldest. */
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(first[i].posix_event_id, again[i].posix_event_id);
		ck_assert_int_eq(pt_ns(&first[i].posix_timestamp), pt_ns(&again[i].posix_timestamp));
	}
	ck_assert_uint_eq(first[0].posix_event_id, POSIX_TRACE_RESUME);
	ck_assert_int_eq(pt_ns(&first[0].posix_timestamp), (int64_t)(T0 + 10));
	ck_assert_uint_eq(first[5].posix_event_id, POSIX_TRACE_ERROR);
	ck_assert_int_eq(pt_ns(&first[5].posix_timestamp), (int64_t)(T0 + 40));
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* posixtrace_event_ext gives the last event's extension until the next
 * event: EINVAL before the first, and the same after a rewind (which may
 * let go of the windows the event was read from) as before it, whether
 * the rewind came after 1, 2, ... events or after the end (RESUME and
 * ERROR among them: their contexts are the reader's own). */
START_TEST(extension_kept_across_rewind)
{
	int fd = log_with_error_and_resume();
	trace_id_t trid;
	struct posixtrace_event_ext before, after;
	ck_assert_ok(posix_trace_open(fd, &trid));
	ck_assert_err(posixtrace_event_ext(trid, &before), EINVAL);
	ck_assert_ok(posix_trace_rewind(trid));
	ck_assert_err(posixtrace_event_ext(trid, &before), EINVAL);
	/* RESUME, 10, 30, 35, 40, ERROR; 7: one call past the end */
	const pid_t tids[] = {ctx_ctl.tid, ctx_a.tid, ctx_a.tid, ctx_a.tid, ctx_a.tid, 0, 0};
	for (size_t k = 1; k <= 7; k++) {
		int unavailable = 0;
		for (size_t i = 0; i < k; i++) {
			struct posix_trace_event_info info;
			unsigned char data[8];
			size_t len;
			ck_assert_ok(posix_trace_getnext_event(trid, &info, data, sizeof data, &len,
			                                       &unavailable));
		}
		ck_assert_int_eq(unavailable, k == 7);
		memset(&before, 0xa5, sizeof before);
		memset(&after, 0x5a, sizeof after);
		ck_assert_ok(posixtrace_event_ext(trid, &before));
		ck_assert_int_eq(before.posixtrace_tid, tids[k == 7 ? 5 : k - 1]);
		ck_assert_ok(posix_trace_rewind(trid));
		ck_assert_ok(posixtrace_event_ext(trid, &after));
		ck_assert_mem_eq(&before, &after, sizeof before);
		ck_assert_ok(posix_trace_rewind(trid));
	}
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/*
 * A drain whose memory would pass the reader's bound is cut: what was
 * gathered is one part, the rest of it the next parts, merged as drains
 * are (a part with the next one only); nothing lost, no ERROR.  The bound
 * is lowered to two and a half blocks: parts of two blocks.  The blocks'
 * times interleave: whole, the drain comes in time order; cut, the first
 * two parts are merged, and the third part, older than the end of the
 * first, comes when the first is done: time goes back once.
 */
START_TEST(drain_cut_at_the_memory_bound)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t blocks = 6, per = 2000; /* 32 KB of records (16 bytes) a block */
	struct want *w = lt_hold(malloc(blocks * per * sizeof *w));
	ck_assert_ptr_nonnull(w);
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	for (uint32_t k = 0; k < blocks; k++) {
		v3_stages_mono(&g, 1, T0);
		v3_lane(&g, k, 0, &ctx_a, 0x10);
		for (uint32_t i = 0; i < per; i++)
			tagged(&g, i * blocks + k, 0, k * per + i);
		v3_seal(&g);
	}
	struct pt_logr *r;
	ck_assert_ok(pt_logr_open(fd, &r));
	for (int cut = 0; cut < 2; cut++) {
		for (uint32_t k = 0; k < blocks; k++)
			for (uint32_t i = 0; i < per; i++)
				w[k * per + i] = (struct want){T0 + i * blocks + k, k * per + i,
				                               cut ? k / 2 : 0};
		lookahead_order(w, blocks * per);
		if (cut)
			pt_logr_drain_cap(r, 5 * per * 16 / 2);
		pt_logr_rewind(r);
		struct pt_log_event ev;
		uint32_t tag, k = 0, back = 0;
		uint64_t prev = 0;
		size_t len;
		while (pt_logr_next(r, &ev, &tag, sizeof tag, &len) == 1) {
			ck_assert_uint_ne(ev.id, POSIX_TRACE_ERROR);
			ck_assert_uint_lt(k, blocks * per);
			if (tag != w[k].tag || ev.ts_ns != w[k].ts)
				ck_abort_msg("cut %d, event %u: tag %u, want %u", cut, k, tag, w[k].tag);
			back += ev.ts_ns < prev;
			prev = ev.ts_ns;
			k++;
		}
		ck_assert_uint_eq(k, blocks * per);
		ck_assert_uint_eq(back, cut ? 1 : 0);
	}
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* A STAGES prefix claiming 2^32 - 1 sections, and many sections of one
 * OWNER each, cost time in proportion to the block, not to the claim. */
START_TEST(section_claims_bounded)
{
	int fd = new_file();
	struct v3 g;
	const uint32_t a[] = {20};
	v3_begin(&g, fd, 3, PT_LOG_LINEAR, 0);
	v3_stages_mono(&g, 1, T0);
	v3_lane(&g, 0, 0, &ctx_a, 0x10);
	tagged(&g, 5, 0, 1);
	v3_close_section(&g);
	uint32_t huge = UINT32_MAX;
	memcpy(g.pl + offsetof(struct pt_log_stages, nsections), &huge, 4);
	v3_block(&g, PT_LOG_STAGES, g.seq++, 0, g.pl, g.len);
	v3_stages_mono(&g, 2, T0);
	while (g.len + 16 + PT_LOG_OWNER_REC <= g.cap)
		v3_lane(&g, 0, 0, &ctx_a, 0);
	v3_seal(&g);
	stage_block(&g, 3, 0, 0, a, 1);
	struct v3_read r = v3_read(fd);
	ck_assert_uint_eq(r.n, 2);
	expect_error(&r.ev[0], 0);
	expect_tagged(&r.ev[1], 0, T0 + 20);
	close(fd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("logv3");
	TCase *tc = pt_tcase_fixture(s, "records", setup, teardown);
	tcase_add_test(tc, mono_calibration_one_point);
	tcase_add_test(tc, tsc_calibration_several_points);
	tcase_add_test(tc, contexts_and_addresses);
	tcase_add_test(tc, data_and_truncation);
	tc = pt_tcase_fixture(s, "merge", setup, teardown);
	tcase_add_test(tc, merge_across_lanes_and_blocks_ties_in_block_then_section_order);
	tcase_add_test(tc, drains_in_order);
	tcase_add_test(tc, next_drain_event_in_its_time_place);
	tcase_add_test(tc, two_drains_back_not_merged);
	tcase_add_test(tc, resume_before_the_next_event);
	tcase_add_test(tc, resume_across_the_lookahead);
	tcase_add_test(tc, keeper_events_merged);
	tcase_add_test(tc, rewind_gives_the_same_sequence);
	tcase_add_test(tc, extension_kept_across_rewind);
	tcase_add_test(tc, many_lanes_many_blocks_merged);
	tcase_add_test(tc, one_lane_many_blocks);
	tcase_add_test(tc, one_lane_first_drain_of_64_sections);
	tcase_add_test(tc, drain_cut_at_the_memory_bound);
	tc = pt_tcase_fixture(s, "damage", setup, teardown);
	tcase_add_loop_test(tc, stages_damage_costs_the_block_once, 0, D_KINDS);
	tcase_add_test(tc, next_drain_damage_after_the_drain_before);
	tcase_add_test(tc, stages_block_without_defect_reads);
	tcase_add_test(tc, keeper_damage);
	tcase_add_test(tc, keeper_user_event_is_an_event);
	tcase_add_test(tc, drain_zero_is_merged_with_no_block);
	tcase_add_test(tc, reserved_types_skipped);
	tcase_add_test(tc, images_table_crafted);
	tcase_add_test(tc, pids_table_gives_own_ids);
	tcase_add_test(tc, section_claims_bounded);
	tc = pt_tcase_fixture(s, "layouts", setup, teardown);
	tcase_add_test(tc, version2_log_reads);
	tcase_add_test(tc, other_versions_refused);
	tcase_add_test(tc, v4_cpu_records_give_the_events_their_cpu);
	tcase_add_test(tc, v3_cpu_record_is_damage);
	tcase_add_test(tc, ring_of_stages_blocks);
	tcase_add_test(tc, cut_short_inside_a_drain);
	tcase_add_test(tc, pipe_reads_the_same);
	tcase_add_test(tc, images_table_fair_per_process);
	tcase_add_test(tc, images_shared_crafted);
	tcase_add_test(tc, images_compact_crafted);
	tcase_add_test(tc, images_shared_fair_per_process);
	return pt_run_scratch(s, "pt_logv3");
}
