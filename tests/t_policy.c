/* SPDX-License-Identifier: MIT */
/*
 * Stream full policies of an active stream without log: POSIX_TRACE_UNTIL_FULL
 * and POSIX_TRACE_LOOP (posix_trace_attr_getstreamfullpolicy, DESCRIPTION:
 * "stream-full-policy"; posix_trace_attr_getmaxusereventsize, DESCRIPTION:
 * the no-loss guarantee; posix_trace_get_status, DESCRIPTION: overrun reset;
 * posix_trace_start and posix_trace_stop, DESCRIPTION: start/stop on a full
 * stream; XSH 2.11.1, posix_trace_status_info Structure: status members and
 * overrun; XSH 2.11.2, System Trace Event Type Definitions: the OVERFLOW,
 * RESUME and STOP events; contract: "Full policies").
 *
 * Streams are 4096 bytes; event sizes come from
 * posix_trace_attr_getmaxusereventsize / getmaxsystemeventsize.  Each stream
 * is filled from the main thread with events whose data is a uint32_t
 * sequence number 0, 1, 2, ...
 */
#define PT_EV_DATA 256 /* the largest event posted here has 255 bytes */
#include "harness.h"

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define STREAM_SIZE 4096u
#define FILL_CAP 1000000u /* give up filling after this many events */

static trace_id_t new_stream(int policy)
{
	return pt_create(0, (struct pt_attrs){.policy = policy, .size = STREAM_SIZE});
}

static size_t user_event_size(trace_id_t trid, size_t data_len)
{
	trace_attr_t attr;
	size_t n;
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&attr, data_len, &n));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return n;
}

static size_t system_event_size(trace_id_t trid)
{
	trace_attr_t attr;
	size_t n;
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&attr, &n));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return n;
}

static int ts_eq(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

/* A stream being filled: what was posted and what get_status said was lost. */
struct fill {
	trace_id_t trid;
	trace_event_id_t id;
	uint32_t posted;             /* user events posted: sequence 0..posted-1 */
	unsigned long long lost;     /* sum of posixtrace_lost_events read so far */
	struct posix_trace_status_info last; /* the last get_status */
};

static void post(struct fill *f)
{
	uint32_t seq = f->posted++;
	posix_trace_event(f->id, &seq, sizeof seq);
}

static void read_status(struct fill *f)
{
	f->last = pt_status(f->trid);
	f->lost += f->last.posixtrace_lost_events;
}

/* Started stream of the given policy, filled one event at a time until
 * get_status reports FULL. */
static struct fill fill_until_full(int policy)
{
	struct fill f = { new_stream(policy), pt_event_id("fill"), 0, 0, { 0 } };
	ck_assert_ok(posix_trace_start(f.trid));
	do {
		ck_assert_msg(f.posted < FILL_CAP, "still not full after %u events", f.posted);
		post(&f);
		read_status(&f);
	} while (f.last.posix_stream_full_status != POSIX_TRACE_FULL);
	return f;
}

/* ---- POSIX_TRACE_UNTIL_FULL: the no-loss guarantee --------------------- */

START_TEST(until_full_keeps_every_event_within_stream_min_size)
{
	trace_id_t trid = new_stream(POSIX_TRACE_UNTIL_FULL);
	trace_event_id_t id = pt_event_id("fit");
	size_t ev = user_event_size(trid, sizeof(uint32_t)), sys = system_event_size(trid);
	size_t n_fit = (STREAM_SIZE - sys) / ev;
	ck_assert_uint_gt(n_fit, 10);
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < n_fit; i++)
		posix_trace_event(id, &i, sizeof i);

	struct posix_trace_status_info st = pt_status(trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_uint_eq(st.posixtrace_lost_events, 0);

	size_t n;
	struct pt_ev *r = pt_drain_all(trid, &n);
	ck_assert_uint_eq(n, 1 + n_fit);
	ck_assert_uint_eq(r[0].info.posix_event_id, POSIX_TRACE_START);
	for (uint32_t i = 0; i < n_fit; i++) {
		ck_assert_uint_eq(r[1 + i].info.posix_event_id, id);
		ck_assert_uint_eq(pt_ev_u32(&r[1 + i]), i);
	}
	free(r);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(until_full_keeps_events_of_mixed_sizes_within_stream_min_size)
{
	static const size_t lens[] = { 0, 1, 7, 8, 9, 100, 255, 33, 64, 3 };
	trace_id_t trid = new_stream(POSIX_TRACE_UNTIL_FULL);
	trace_event_id_t id = pt_event_id("mixed");
	size_t used = system_event_size(trid);
	size_t posted[128];
	unsigned char buf[256];
	size_t n_posted = 0;
	ck_assert_ok(posix_trace_start(trid));
	for (size_t i = 0;; i++) {
		size_t len = lens[i % (sizeof lens / sizeof lens[0])];
		size_t sz = user_event_size(trid, len);
		if (used + sz > STREAM_SIZE)
			break;
		used += sz;
		memset(buf, (int)i, len);
		posix_trace_event(id, len ? buf : NULL, len);
		posted[n_posted++] = len;
		ck_assert_uint_lt(n_posted, 128);
	}
	size_t n;
	struct pt_ev *r = pt_drain_all(trid, &n);
	ck_assert_uint_eq(n, 1 + n_posted);
	for (size_t i = 0; i < n_posted; i++) {
		ck_assert_uint_eq(r[1 + i].info.posix_event_id, id);
		ck_assert_uint_eq(r[1 + i].len, posted[i]);
		for (size_t b = 0; b < posted[i]; b++)
			ck_assert_uint_eq(r[1 + i].data[b], (unsigned char)i);
	}
	ck_assert_uint_eq(pt_status(trid).posixtrace_lost_events, 0);
	free(r);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

#define GUARANTEE_THREADS 16

/* Writer t posts t << 16 | i. */
static void post_packed(trace_event_id_t id, uint32_t thread, uint32_t seq)
{
	uint32_t d = thread << 16 | seq;
	posix_trace_event(id, &d, sizeof d);
}

/* Contract: the guarantee holds for up to 16 writer threads. */
START_TEST(until_full_guarantee_holds_for_16_writer_threads)
{
	trace_id_t trid = new_stream(POSIX_TRACE_UNTIL_FULL);
	trace_event_id_t id = pt_event_id("threads");
	size_t ev = user_event_size(trid, sizeof(uint32_t)), sys = system_event_size(trid);
	uint32_t per_thread = (uint32_t)((STREAM_SIZE - sys) / ev / GUARANTEE_THREADS);
	ck_assert_uint_gt(per_thread, 0);
	struct pt_writer arg[GUARANTEE_THREADS];
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t t = 0; t < GUARANTEE_THREADS; t++)
		arg[t] = (struct pt_writer){ .id = id, .thread = t, .count = per_thread,
		                             .post = post_packed };
	pt_run_writers(arg, GUARANTEE_THREADS);

	ck_assert_uint_eq(pt_status(trid).posixtrace_lost_events, 0);
	size_t n;
	struct pt_ev *r = pt_drain_all(trid, &n);
	ck_assert_uint_eq(n, 1 + (size_t)per_thread * GUARANTEE_THREADS);
	uint32_t next[GUARANTEE_THREADS] = { 0 };
	for (size_t i = 1; i < n; i++) {
		uint32_t d = pt_ev_u32(&r[i]), t = d >> 16;
		ck_assert_uint_lt(t, GUARANTEE_THREADS);
		ck_assert_uint_eq(d & 0xffffu, next[t]);
		next[t]++;
	}
	free(r);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- POSIX_TRACE_UNTIL_FULL: overfilling ----------------------------- */

START_TEST(until_full_overfilled_stream_is_suspended_full_overrun)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	ck_assert_int_eq(f.last.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(f.last.posix_stream_full_status, POSIX_TRACE_FULL);
	ck_assert_int_eq(f.last.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	ck_assert_uint_eq(f.lost, 1); /* the event that did not fit */
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_stream_holds_at_least_the_guaranteed_events)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	size_t ev = user_event_size(f.trid, sizeof(uint32_t)), sys = system_event_size(f.trid);
	ck_assert_uint_ge(f.posted - f.lost, (STREAM_SIZE - sys) / ev);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_events_posted_while_full_are_lost)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	for (int i = 0; i < 10; i++)
		post(&f);
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	ck_assert_uint_eq(st.posixtrace_lost_events, 10);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_overrun_status_is_reset_by_get_status)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_uint_eq(st.posixtrace_lost_events, 0);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

/* Expects the readout START, 0..k-1, OVERFLOW, STOP(1), RESUME, START and
 * returns k.  The restart's START is the first valid event after the
 * overflow, so RESUME comes right before it, with its timestamp. */
static uint32_t check_until_full_readout(struct fill *f, const struct pt_ev *r, size_t n)
{
	uint32_t k = f->posted - (uint32_t)f->lost;
	ck_assert_uint_eq(n, (size_t)k + 5);
	ck_assert_uint_eq(r[0].info.posix_event_id, POSIX_TRACE_START);
	for (uint32_t i = 0; i < k; i++) {
		ck_assert_uint_eq(r[1 + i].info.posix_event_id, f->id);
		ck_assert_uint_eq(pt_ev_u32(&r[1 + i]), i);
	}
	const struct pt_ev *ovf = &r[k + 1], *stop = &r[k + 2], *resume = &r[k + 3], *start = &r[k + 4];
	ck_assert_uint_eq(ovf->info.posix_event_id, POSIX_TRACE_OVERFLOW);
	ck_assert_uint_eq(ovf->len, 0);
	ck_assert_uint_eq(stop->info.posix_event_id, POSIX_TRACE_STOP);
	ck_assert_uint_eq(stop->len, sizeof(int));
	int autostop;
	memcpy(&autostop, stop->data, sizeof autostop);
	ck_assert_int_eq(autostop, 1);
	ck_assert_uint_eq(resume->info.posix_event_id, POSIX_TRACE_RESUME);
	ck_assert_uint_eq(resume->len, 0);
	ck_assert_uint_eq(start->info.posix_event_id, POSIX_TRACE_START);
	ck_assert_msg(ts_eq(&resume->info.posix_timestamp, &start->info.posix_timestamp),
	              "RESUME timestamp differs from the restart's START");
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(pt_ts_le(&r[i - 1].info.posix_timestamp, &r[i].info.posix_timestamp),
		              "event %zu (id %u) is older than the one before it", i,
		              r[i].info.posix_event_id);
	return k;
}

START_TEST(until_full_reader_gets_recorded_events_then_overflow_stop_start)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	for (int i = 0; i < 10; i++)
		post(&f); /* lost */
	read_status(&f);
	size_t n;
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	check_until_full_readout(&f, r, n);
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_stream_restarts_once_drained)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	size_t n;
	free(pt_drain_all(f.trid, &n));
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_events_after_restart_follow_without_gap_marks)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	size_t n;
	free(pt_drain_all(f.trid, &n));
	uint32_t seq = f.posted;
	post(&f);
	post(&f);
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(r[0].info.posix_event_id, f.id);
	ck_assert_uint_eq(pt_ev_u32(&r[0]), seq);
	ck_assert_uint_eq(pt_ev_u32(&r[1]), seq + 1);
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_lost_count_is_posted_minus_received)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	for (int i = 0; i < 25; i++)
		post(&f);
	read_status(&f);
	size_t n, received = 0;
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	for (size_t i = 0; i < n; i++)
		received += r[i].info.posix_event_id == f.id;
	read_status(&f);
	ck_assert_uint_eq(f.lost, f.posted - received);
	ck_assert_uint_gt(f.lost, 25);
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_start_on_full_stream_changes_nothing)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(f.trid));
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
	post(&f); /* still lost */
	read_status(&f);
	ck_assert_uint_eq(f.last.posixtrace_lost_events, 1);
	size_t n;
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	check_until_full_readout(&f, r, n); /* no START recorded by the call */
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(until_full_stop_on_full_stream_changes_nothing)
{
	struct fill f = fill_until_full(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_stop(f.trid));
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
	size_t n;
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	check_until_full_readout(&f, r, n); /* no STOP(0); restarts as usual */
	st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

/* ---- POSIX_TRACE_LOOP ----------------------------------------------- */

/* Fills until the first loss, then posts as many events again. */
static struct fill overfill_loop(void)
{
	struct fill f = fill_until_full(POSIX_TRACE_LOOP);
	while (f.lost == 0) {
		ck_assert_msg(f.posted < FILL_CAP, "nothing lost after %u events", f.posted);
		post(&f);
		read_status(&f);
	}
	for (uint32_t i = 0, n = f.posted; i < n; i++)
		post(&f);
	return f;
}

START_TEST(loop_overfilled_stream_is_running_full_overrun)
{
	struct fill f = overfill_loop();
	read_status(&f);
	ck_assert_int_eq(f.last.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(f.last.posix_stream_full_status, POSIX_TRACE_FULL);
	ck_assert_int_eq(f.last.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	ck_assert_uint_gt(f.last.posixtrace_lost_events, 0);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(loop_overrun_status_is_reset_by_get_status)
{
	struct fill f = overfill_loop();
	read_status(&f);
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_uint_eq(st.posixtrace_lost_events, 0);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

/* The controller's own events are kept apart from the writers' chunks
 * (CONFORMANCE.md), so START survives the loop and comes first. */
START_TEST(loop_reader_gets_overflow_resume_then_newest_events)
{
	struct fill f = overfill_loop();
	size_t n;
	struct pt_ev *all = pt_drain_all(f.trid, &n);
	ck_assert_uint_ge(n, 4);
	ck_assert_uint_eq(all[0].info.posix_event_id, POSIX_TRACE_START);
	struct pt_ev *r = all + 1;
	n--;
	ck_assert_uint_eq(r[0].info.posix_event_id, POSIX_TRACE_OVERFLOW);
	ck_assert_uint_eq(r[0].len, 0);
	ck_assert_uint_eq(r[1].info.posix_event_id, POSIX_TRACE_RESUME);
	ck_assert_uint_eq(r[1].len, 0);
	ck_assert_msg(ts_eq(&r[1].info.posix_timestamp, &r[2].info.posix_timestamp),
	              "RESUME timestamp differs from the first surviving event's");
	ck_assert_msg(pt_ts_le(&r[0].info.posix_timestamp, &r[1].info.posix_timestamp),
	              "OVERFLOW is newer than RESUME");
	uint32_t first = f.posted - (uint32_t)(n - 2);
	ck_assert_uint_gt(first, 0); /* the oldest ones are lost */
	for (size_t i = 2; i < n; i++) {
		ck_assert_uint_eq(r[i].info.posix_event_id, f.id);
		ck_assert_uint_eq(pt_ev_u32(&r[i]), first + (uint32_t)(i - 2));
	}
	ck_assert_uint_eq(pt_ev_u32(&r[n - 1]), f.posted - 1);
	free(all);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(loop_received_plus_lost_is_posted)
{
	struct fill f = overfill_loop();
	size_t n, received = 0;
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	for (size_t i = 0; i < n; i++)
		received += r[i].info.posix_event_id == f.id || r[i].info.posix_event_id == POSIX_TRACE_START;
	read_status(&f);
	/* posted: the user events and the START event of posix_trace_start */
	ck_assert_uint_eq(received + f.lost, (size_t)f.posted + 1);
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

START_TEST(loop_drained_stream_reports_new_events_without_overflow)
{
	struct fill f = overfill_loop();
	size_t n;
	free(pt_drain_all(f.trid, &n));
	read_status(&f);
	uint32_t seq = f.posted;
	post(&f);
	struct pt_ev *r = pt_drain_all(f.trid, &n);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(r[0].info.posix_event_id, f.id);
	ck_assert_uint_eq(pt_ev_u32(&r[0]), seq);
	ck_assert_uint_eq(pt_status(f.trid).posixtrace_lost_events, 0);
	free(r);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

/* 2.11.1.1: FULL means "the space ... is exhausted"; once read, it is not. */
START_TEST(loop_drained_stream_is_not_full)
{
	struct fill f = overfill_loop();
	size_t n;
	free(pt_drain_all(f.trid, &n));
	struct posix_trace_status_info st = pt_status(f.trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	ck_assert_ok(posix_trace_shutdown(f.trid));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("policy");
	TCase *tc;

	tc = pt_tcase(s, "until_full_guarantee");
	tcase_add_test(tc, until_full_keeps_every_event_within_stream_min_size);
	tcase_add_test(tc, until_full_keeps_events_of_mixed_sizes_within_stream_min_size);
	tcase_add_test(tc, until_full_guarantee_holds_for_16_writer_threads);

	tc = pt_tcase(s, "until_full_overfill");
	tcase_add_test(tc, until_full_overfilled_stream_is_suspended_full_overrun);
	tcase_add_test(tc, until_full_stream_holds_at_least_the_guaranteed_events);
	tcase_add_test(tc, until_full_events_posted_while_full_are_lost);
	tcase_add_test(tc, until_full_overrun_status_is_reset_by_get_status);
	tcase_add_test(tc, until_full_reader_gets_recorded_events_then_overflow_stop_start);
	tcase_add_test(tc, until_full_stream_restarts_once_drained);
	tcase_add_test(tc, until_full_events_after_restart_follow_without_gap_marks);
	tcase_add_test(tc, until_full_lost_count_is_posted_minus_received);
	tcase_add_test(tc, until_full_start_on_full_stream_changes_nothing);
	tcase_add_test(tc, until_full_stop_on_full_stream_changes_nothing);

	tc = pt_tcase(s, "loop");
	tcase_add_test(tc, loop_overfilled_stream_is_running_full_overrun);
	tcase_add_test(tc, loop_overrun_status_is_reset_by_get_status);
	tcase_add_test(tc, loop_reader_gets_overflow_resume_then_newest_events);
	tcase_add_test(tc, loop_received_plus_lost_is_posted);
	tcase_add_test(tc, loop_drained_stream_reports_new_events_without_overflow);
	tcase_add_test(tc, loop_drained_stream_is_not_full);

	return pt_run(s);
}
