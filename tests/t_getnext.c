/* SPDX-License-Identifier: MIT */
/*
 * Retrieval: posix_trace_getnext_event, posix_trace_trygetnext_event and
 * posix_trace_timedgetnext_event on an active stream without log
 * (posix_trace_getnext_event, DESCRIPTION and ERRORS; shutdown wake-up:
 * posix_trace_shutdown, DESCRIPTION; contract: "Retrieval").
 *
 * Checks: oldest event first, several threads merged by timestamp with each
 * thread's order kept; trygetnext never blocks; getnext blocks until an
 * event arrives or the stream is shut down (EINVAL); timedgetnext times out
 * (ETIMEDOUT, at or after abstime), rejects an invalid abstime only when no
 * event is available; EINTR; truncation on read; argument errors; an event
 * is reported once; reading frees space in the stream.
 */
#define PT_EV_DATA 64 /* the events read back whole here are small */
#include "harness.h"

#include <posixtrace.h>

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

static trace_id_t new_stream(int policy, size_t stream_size)
{
	return pt_create(0, (struct pt_attrs){.policy = policy, .size = stream_size});
}

/* A running stream whose START event has already been read. */
static trace_id_t started_stream(int policy, size_t stream_size)
{
	trace_id_t trid = new_stream(policy, stream_size);
	struct pt_ev r[4];
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_uint_eq(pt_drain(trid, r, 4), 1);
	ck_assert_uint_eq(r[0].info.posix_event_id, POSIX_TRACE_START);
	return trid;
}

static void post_u32(trace_event_id_t id, uint32_t v)
{
	posix_trace_event(id, &v, sizeof v);
}

/* ---- order ------------------------------------------------------------- */

START_TEST(trygetnext_reports_oldest_event_first)
{
	trace_id_t trid = new_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("order");
	struct pt_ev r[32];
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < 20; i++)
		post_u32(id, i);
	ck_assert_uint_eq(pt_drain(trid, r, 32), 21);
	ck_assert_uint_eq(r[0].info.posix_event_id, POSIX_TRACE_START);
	for (uint32_t i = 0; i < 20; i++) {
		ck_assert_uint_eq(r[i + 1].info.posix_event_id, id);
		ck_assert_uint_eq(pt_ev_u32(&r[i + 1]), i);
		ck_assert(pt_ts_le(&r[i].info.posix_timestamp, &r[i + 1].info.posix_timestamp));
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(getnext_reports_available_events_oldest_first_without_blocking)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("order");
	for (uint32_t i = 0; i < 10; i++)
		post_u32(id, i);
	for (uint32_t i = 0; i < 10; i++) {
		struct pt_ev r;
		int unavailable = -1;
		ck_assert_ok(posix_trace_getnext_event(trid, &r.info, r.data, sizeof r.data,
		                                       &r.len, &unavailable));
		ck_assert_int_eq(unavailable, 0);
		ck_assert_uint_eq(r.info.posix_event_id, id);
		ck_assert_uint_eq(pt_ev_u32(&r), i);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_reports_available_events_oldest_first)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("order");
	for (uint32_t i = 0; i < 10; i++)
		post_u32(id, i);
	for (uint32_t i = 0; i < 10; i++) {
		struct pt_ev r;
		int unavailable = -1;
		struct timespec abstime = pt_in_ms(5000);
		ck_assert_ok(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data,
		                                            &r.len, &unavailable, &abstime));
		ck_assert_int_eq(unavailable, 0);
		ck_assert_uint_eq(r.info.posix_event_id, id);
		ck_assert_uint_eq(pt_ev_u32(&r), i);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

#define MT_THREADS 4
#define MT_EVENTS 500

/* Writer t posts {t, i} for i = 0 .. MT_EVENTS - 1. */
static void post_pair(trace_event_id_t id, uint32_t thread, uint32_t seq)
{
	uint32_t d[2] = { thread, seq };
	posix_trace_event(id, d, sizeof d);
}

START_TEST(events_of_several_threads_come_out_merged_by_timestamp)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("threads");
	struct pt_writer arg[MT_THREADS];
	for (uint32_t t = 0; t < MT_THREADS; t++)
		arg[t] = (struct pt_writer){ .id = id, .thread = t, .count = MT_EVENTS,
		                             .post = post_pair };
	pt_run_writers(arg, MT_THREADS);

	static struct pt_ev r[MT_THREADS * MT_EVENTS + 8];
	ck_assert_uint_eq(pt_drain(trid, r, MT_THREADS * MT_EVENTS + 8), MT_THREADS * MT_EVENTS);
	uint32_t next[MT_THREADS] = { 0 };
	for (size_t i = 0; i < MT_THREADS * MT_EVENTS; i++) {
		uint32_t d[2];
		ck_assert_uint_eq(r[i].info.posix_event_id, id);
		ck_assert_uint_eq(r[i].len, sizeof d);
		memcpy(d, r[i].data, sizeof d);
		ck_assert_uint_lt(d[0], MT_THREADS);
		ck_assert_uint_eq(d[1], next[d[0]]);
		next[d[0]]++;
		ck_assert(pthread_equal(r[i].info.posix_thread_id, arg[d[0]].self));
		if (i > 0)
			ck_assert_msg(pt_ts_le(&r[i - 1].info.posix_timestamp, &r[i].info.posix_timestamp),
			              "event %zu is older than the one before it", i);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* A lane given back by a thread that ends is taken by the next thread
 * that posts: that thread's first event must not be older than the last
 * event the lane holds.  It was, when the thread read the time, was
 * preempted, and claimed the lane only after another thread had posted
 * into it and ended (one lane for four threads, the fourth's events,
 * then the first's first event 500 ns before them).  Rounds of four
 * short-lived writers (more threads than CPUs), all events read back:
 * timestamps never go back. */
START_TEST(a_lane_taken_over_never_goes_back_in_time)
{
	enum { ROUNDS = 300, THREADS = 4, EVENTS = 10 };
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 8u << 20);
	trace_event_id_t id = pt_event_id("takeover");
	for (uint32_t round = 0; round < ROUNDS; round++) {
		struct pt_writer arg[THREADS];
		for (uint32_t t = 0; t < THREADS; t++)
			arg[t] = (struct pt_writer){.id = id, .thread = t, .count = EVENTS, .post = post_pair};
		pt_run_writers(arg, THREADS);
	}
	size_t n = 0;
	struct pt_ev *r = pt_drain_all(trid, &n);
	ck_assert_uint_eq(n, ROUNDS * THREADS * EVENTS);
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(pt_ts_le(&r[i - 1].info.posix_timestamp, &r[i].info.posix_timestamp),
		              "event %zu of %zu is older than the one before it", i, n);
	free(r);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- trygetnext -------------------------------------------------------- */

START_TEST(trygetnext_on_empty_running_stream_returns_unavailable)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct posix_trace_event_info ev;
	char buf[16];
	size_t len;
	int unavailable = 0;
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable));
	ck_assert_int_ne(unavailable, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(trygetnext_on_never_started_stream_returns_unavailable)
{
	trace_id_t trid = new_stream(POSIX_TRACE_LOOP, 0);
	struct posix_trace_event_info ev;
	char buf[16];
	size_t len;
	int unavailable = 0;
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable));
	ck_assert_int_ne(unavailable, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- blocking: a helper thread posts an event or shuts the stream down -- */

struct later {
	trace_id_t trid;
	trace_event_id_t id;
	long delay_ms;
	int shutdown;      /* 1: shut the stream down instead of posting */
	pthread_t self;
};

static void *later_thread(void *p)
{
	struct later *l = p;
	l->self = pthread_self();
	pt_sleep_ms(l->delay_ms);
	if (l->shutdown)
		posix_trace_shutdown(l->trid);
	else
		post_u32(l->id, 0xfeedu);
	return NULL;
}

static pthread_t start_later(struct later *l)
{
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, later_thread, l), 0);
	return th;
}

START_TEST(getnext_blocks_until_another_thread_records_an_event)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct later l = { trid, pt_event_id("later"), 100, 0, 0 };
	pthread_t th = start_later(&l);
	struct pt_ev r;
	int unavailable = -1;
	ck_assert_ok(posix_trace_getnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                       &unavailable));
	pthread_join(th, NULL);
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(r.info.posix_event_id, l.id);
	ck_assert_uint_eq(pt_ev_u32(&r), 0xfeedu);
	ck_assert(pthread_equal(r.info.posix_thread_id, l.self));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(getnext_woken_by_shutdown_returns_einval)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct later l = { trid, 0, 100, 1, 0 };
	pthread_t th = start_later(&l);
	struct pt_ev r;
	int unavailable = 0;
	ck_assert_err(posix_trace_getnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                        &unavailable),
	              EINVAL);
	pthread_join(th, NULL);
}
END_TEST

/* "When returning, if a recorded trace event was reported, [unavailable]
 * shall be set to zero. Otherwise, ... different from zero." */
START_TEST(getnext_woken_by_shutdown_sets_unavailable)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct later l = { trid, 0, 100, 1, 0 };
	pthread_t th = start_later(&l);
	struct pt_ev r;
	int unavailable = 0;
	(void)posix_trace_getnext_event(trid, &r.info, r.data, sizeof r.data, &r.len, &unavailable);
	pthread_join(th, NULL);
	ck_assert_int_ne(unavailable, 0);
}
END_TEST

START_TEST(getnext_on_stream_shut_down_before_returns_einval)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct pt_ev r;
	int unavailable;
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_err(posix_trace_getnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                        &unavailable),
	              EINVAL);
}
END_TEST

/* ---- one reader, other threads controlling the stream ------------------ */

#define ONE_READER_EVENTS 50000u

struct one_reader {
	trace_id_t trid;
	trace_event_id_t id;
	int blocking;              /* getnext, else trygetnext */
	uint32_t want;             /* user events to take; 0: until an error */
	uint32_t got;
	int out_of_order;
	int last_rc;
	atomic_int reading;        /* has taken an event */
	atomic_int done;
};

static void *one_reader_main(void *p)
{
	struct one_reader *r = p;
	struct pt_ev e;
	int unavailable;
	while (!r->want || r->got < r->want) {
		int rc = r->blocking ? posix_trace_getnext_event(r->trid, &e.info, e.data, sizeof e.data,
		                                                 &e.len, &unavailable)
		                     : posix_trace_trygetnext_event(r->trid, &e.info, e.data,
		                                                    sizeof e.data, &e.len, &unavailable);
		r->last_rc = rc;
		if (rc)
			break;
		if (unavailable)
			continue;
		atomic_store(&r->reading, 1);
		if (e.info.posix_event_id != r->id)
			continue;
		r->out_of_order |= pt_ev_u32(&e) != r->got;
		r->got++;
	}
	atomic_store(&r->done, 1);
	return NULL;
}

static void *one_writer_main(void *p)
{
	struct one_reader *r = p;
	for (uint32_t i = 0; i < r->want; i++)
		post_u32(r->id, i);
	return NULL;
}

/* A running stream nobody has read yet: the first thread that reads it is
 * its only reader, and the library biases the handle to it. */
static trace_id_t unread_stream(int policy, size_t stream_size)
{
	trace_id_t trid = new_stream(policy, stream_size);
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

START_TEST(one_reader_gets_every_event_once_while_another_thread_controls_the_stream)
{
	/* One thread reads an active stream (trygetnext, or getnext: _i) while
	 * a writer records and the main thread calls get_status, set_filter
	 * get_filter and posixtrace_event_ext over and over: every event comes
	 * once, in order (the library reads without the lock while one thread
	 * reads, and each call of another thread must take the handle back
	 * first; under TSan, no race). */
	trace_id_t trid = unread_stream(POSIX_TRACE_UNTIL_FULL, 16u << 20);
	struct one_reader r = {.trid = trid, .id = pt_event_id("one.reader"), .blocking = _i,
	                       .want = ONE_READER_EVENTS};
	pthread_t rd, wr;
	ck_assert_int_eq(pthread_create(&rd, NULL, one_reader_main, &r), 0);
	ck_assert_int_eq(pthread_create(&wr, NULL, one_writer_main, &r), 0);
	trace_event_set_t none, got;
	ck_assert_ok(posix_trace_eventset_empty(&none));
	uint64_t calls = 0;
	while (!atomic_load(&r.done)) {
		/* Its overrun status is not asserted: the filter changes below
		 * put thousands of POSIX_TRACE_FILTER events in the control
		 * queue, which a slow reader (under ASan) lets overflow, and that
		 * is counted as lost; the user events are all counted after. */
		struct posix_trace_status_info st;
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (calls % 64 == 0)
			ck_assert_ok(posix_trace_set_filter(trid, &none, POSIX_TRACE_SET_EVENTSET));
		ck_assert_ok(posix_trace_get_filter(trid, &got));
		struct posixtrace_event_ext ext; /* what the reader's last call left */
		int err = posixtrace_event_ext(trid, &ext);
		ck_assert(err == 0 || err == EINVAL);
		calls++;
		sched_yield();
	}
	ck_assert_int_eq(pthread_join(wr, NULL), 0);
	ck_assert_int_eq(pthread_join(rd, NULL), 0);
	ck_assert_ok(r.last_rc);
	ck_assert_uint_eq(r.got, ONE_READER_EVENTS);
	ck_assert_int_eq(r.out_of_order, 0);
	ck_assert_uint_gt(calls, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(shutdown_from_another_thread_while_one_reader_reads)
{
	/* One thread reads an active stream in a loop (trygetnext, or getnext:
	 * _i), lock-free once it is the only reader; the main thread shuts the
	 * stream down meanwhile, 20 times over: the reader gets EINVAL each
	 * time and nothing it used is freed under it (ASan, TSan). */
	for (int round = 0; round < 20; round++) {
		trace_id_t trid = unread_stream(POSIX_TRACE_LOOP, 0);
		struct one_reader r = {.trid = trid, .id = pt_event_id("one.reader.end"),
		                       .blocking = _i};
		pthread_t rd;
		ck_assert_int_eq(pthread_create(&rd, NULL, one_reader_main, &r), 0);
		for (uint32_t i = 0; !atomic_load(&r.reading); i++) {
			post_u32(r.id, i);
			sched_yield();
		}
		for (uint32_t i = 0; i < 1000; i++)
			post_u32(r.id, i);
		ck_assert_ok(posix_trace_shutdown(trid));
		ck_assert_int_eq(pthread_join(rd, NULL), 0);
		ck_assert_int_eq(r.last_rc, EINVAL);
	}
}
END_TEST

/* ---- timedgetnext ------------------------------------------------------ */

START_TEST(timedgetnext_with_past_abstime_and_no_event_returns_etimedout)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct timespec abstime = pt_in_ms(-1000);
	struct pt_ev r;
	int unavailable = 0;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              ETIMEDOUT);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_with_epoch_abstime_returns_etimedout)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct timespec abstime = { 0, 0 };
	struct pt_ev r;
	int unavailable = 0;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              ETIMEDOUT);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_waits_until_abstime_then_returns_etimedout)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct timespec abstime = pt_in_ms(80), now;
	struct pt_ev r;
	int unavailable = 0;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              ETIMEDOUT);
	clock_gettime(CLOCK_REALTIME, &now);
	ck_assert_msg(pt_ts_le(&abstime, &now), "returned at %lld.%09ld, before abstime %lld.%09ld",
	              (long long)now.tv_sec, now.tv_nsec, (long long)abstime.tv_sec,
	              abstime.tv_nsec);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_timeout_sets_unavailable)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct timespec abstime = pt_in_ms(20);
	struct pt_ev r;
	int unavailable = 0;
	(void)posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                     &unavailable, &abstime);
	ck_assert_int_ne(unavailable, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_with_negative_nsec_and_no_event_returns_einval)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct timespec abstime = pt_in_ms(1000);
	struct pt_ev r;
	int unavailable = 0;
	abstime.tv_nsec = -1;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              EINVAL);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_with_nsec_one_billion_and_no_event_returns_einval)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct timespec abstime = pt_in_ms(1000);
	struct pt_ev r;
	int unavailable = 0;
	abstime.tv_nsec = 1000000000L;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              EINVAL);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

static void check_timed_reports_available_event(struct timespec abstime)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("timed");
	struct pt_ev r;
	int unavailable = -1;
	post_u32(id, 77);
	ck_assert_ok(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                            &unavailable, &abstime));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(r.info.posix_event_id, id);
	ck_assert_uint_eq(pt_ev_u32(&r), 77);
	ck_assert_ok(posix_trace_shutdown(trid));
}

START_TEST(timedgetnext_reports_available_event_despite_past_abstime)
{
	check_timed_reports_available_event(pt_in_ms(-1000));
}
END_TEST

START_TEST(timedgetnext_reports_available_event_despite_negative_nsec)
{
	struct timespec abstime = pt_in_ms(1000);
	abstime.tv_nsec = -1;
	check_timed_reports_available_event(abstime);
}
END_TEST

START_TEST(timedgetnext_reports_available_event_despite_nsec_one_billion)
{
	struct timespec abstime = pt_in_ms(1000);
	abstime.tv_nsec = 1000000000L;
	check_timed_reports_available_event(abstime);
}
END_TEST

START_TEST(timedgetnext_woken_by_event_from_another_thread)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct later l = { trid, pt_event_id("later"), 100, 0, 0 };
	struct timespec abstime = pt_in_ms(10000);
	pthread_t th = start_later(&l);
	struct pt_ev r;
	int unavailable = -1;
	ck_assert_ok(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                            &unavailable, &abstime));
	pthread_join(th, NULL);
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(r.info.posix_event_id, l.id);
	ck_assert_uint_eq(pt_ev_u32(&r), 0xfeedu);
	ck_assert(pthread_equal(r.info.posix_thread_id, l.self));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(timedgetnext_woken_by_shutdown_returns_einval)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct later l = { trid, 0, 100, 1, 0 };
	struct timespec abstime = pt_in_ms(10000);
	pthread_t th = start_later(&l);
	struct pt_ev r;
	int unavailable = 0;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              EINVAL);
	pthread_join(th, NULL);
}
END_TEST

/* A deadline as far as time_t goes: the wait must compare whole timespecs,
 * never multiply seconds into nanoseconds (signed overflow, found by UBSan
 * when the bounded sleep of a reader without membarrier computed it). */
START_TEST(timedgetnext_with_farthest_deadline_is_woken_by_shutdown)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct later l = { trid, 0, 100, 1, 0 };
	struct timespec abstime = {(time_t)((~(uint64_t)0) >> 1), 999999999};
	pthread_t th = start_later(&l);
	struct pt_ev r;
	int unavailable = 0;
	ck_assert_err(posix_trace_timedgetnext_event(trid, &r.info, r.data, sizeof r.data, &r.len,
	                                             &unavailable, &abstime),
	              EINVAL);
	pthread_join(th, NULL);
}
END_TEST

/* ---- EINTR: "The operation was interrupted by a signal, and so the call had
 * no effect."  A handler installed without SA_RESTART interrupts the wait. */

static void on_usr1(int sig) { (void)sig; }

static void check_interrupted_by_signal(int timed)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART */
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);

	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("intr");
	struct pt_blocked_reader a = { trid, timed, -1, 0 };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, pt_blocked_reader_main, &a), 0);
	pt_sleep_ms(100);
	/* Signal until the call returns (the first signal may come before the
	 * thread blocks); after 2 s post an event so that the test ends. */
	for (int i = 0; i < 40 && !atomic_load(&a.done); i++) {
		pthread_kill(th, SIGUSR1);
		pt_sleep_ms(50);
	}
	if (!atomic_load(&a.done))
		post_u32(id, 1);
	pthread_join(th, NULL);
	ck_assert_err(a.rc, EINTR);

	/* No effect: an event posted now is still reported. */
	struct pt_ev r[4];
	post_u32(id, 2);
	ck_assert_uint_eq(pt_drain(trid, r, 4), 1);
	ck_assert_uint_eq(pt_ev_u32(&r[0]), 2);
	ck_assert_ok(posix_trace_shutdown(trid));
}

START_TEST(getnext_interrupted_by_signal_returns_eintr)
{
	check_interrupted_by_signal(0);
}
END_TEST

START_TEST(timedgetnext_interrupted_by_signal_returns_eintr)
{
	check_interrupted_by_signal(1);
}
END_TEST

/* ---- truncation on read ------------------------------------------------ */

static void fill_pattern(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)(0x40 + i);
}

START_TEST(short_buffer_truncates_data_to_num_bytes)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("trunc");
	unsigned char src[32], buf[32];
	size_t len = 0;
	int unavailable = -1;
	struct posix_trace_event_info ev;
	fill_pattern(src, sizeof src);
	posix_trace_event(id, src, sizeof src);
	memset(buf, 0xee, sizeof buf);
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, buf, 10, &len, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(ev.posix_event_id, id);
	ck_assert_uint_eq(len, 10);
	ck_assert_int_eq(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
	ck_assert_mem_eq(buf, src, 10);
	for (size_t i = 10; i < sizeof buf; i++)
		ck_assert_uint_eq(buf[i], 0xee); /* nothing written past num_bytes */
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(buffer_of_exact_size_is_not_truncated)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("trunc");
	unsigned char src[32], buf[32];
	size_t len = 0;
	int unavailable = -1;
	struct posix_trace_event_info ev;
	fill_pattern(src, sizeof src);
	posix_trace_event(id, src, sizeof src);
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(len, sizeof src);
	ck_assert_int_eq(ev.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_mem_eq(buf, src, sizeof src);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

static trace_id_t started_stream_maxdata(size_t maxdata)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.max_data = maxdata});
	struct pt_ev r[4];
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_uint_eq(pt_drain(trid, r, 4), 1);
	return trid;
}

START_TEST(record_truncated_data_read_whole_reports_truncated_record)
{
	trace_id_t trid = started_stream_maxdata(16);
	trace_event_id_t id = pt_event_id("trunc");
	unsigned char src[40], buf[64];
	size_t len = 0;
	int unavailable = -1;
	struct posix_trace_event_info ev;
	fill_pattern(src, sizeof src);
	posix_trace_event(id, src, sizeof src);
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, buf, sizeof buf, &len, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(len, 16);
	ck_assert_int_eq(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);
	ck_assert_mem_eq(buf, src, 16);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(truncated_read_overrides_truncated_record)
{
	trace_id_t trid = started_stream_maxdata(16);
	trace_event_id_t id = pt_event_id("trunc");
	unsigned char src[40], buf[64];
	size_t len = 0;
	int unavailable = -1;
	struct posix_trace_event_info ev;
	fill_pattern(src, sizeof src);
	posix_trace_event(id, src, sizeof src);
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, buf, 8, &len, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(len, 8);
	ck_assert_int_eq(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
	ck_assert_mem_eq(buf, src, 8);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(zero_num_bytes_with_null_data_reports_event_without_data)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("trunc");
	unsigned char src[16];
	size_t len = 99;
	int unavailable = -1;
	struct posix_trace_event_info ev;
	fill_pattern(src, sizeof src);
	posix_trace_event(id, src, sizeof src);
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, NULL, 0, &len, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(ev.posix_event_id, id);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(ev.posix_truncation_status, POSIX_TRACE_TRUNCATED_READ);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(zero_num_bytes_on_event_without_data_is_not_truncated)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("trunc");
	size_t len = 99;
	int unavailable = -1;
	struct posix_trace_event_info ev;
	posix_trace_event(id, NULL, 0);
	ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, NULL, 0, &len, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(ev.posix_event_id, id);
	ck_assert_uint_eq(len, 0);
	ck_assert_int_eq(ev.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- argument errors (an event is available, so nothing would block) ---- */

enum which { GETNEXT, TRYGETNEXT, TIMEDGETNEXT };

static int call(enum which w, trace_id_t trid, struct posix_trace_event_info *ev, void *data,
                size_t num_bytes, size_t *len, int *unavailable)
{
	struct timespec abstime = pt_in_ms(1000);
	switch (w) {
	case GETNEXT:
		return posix_trace_getnext_event(trid, ev, data, num_bytes, len, unavailable);
	case TRYGETNEXT:
		return posix_trace_trygetnext_event(trid, ev, data, num_bytes, len, unavailable);
	default:
		return posix_trace_timedgetnext_event(trid, ev, data, num_bytes, len, unavailable,
		                                      &abstime);
	}
}

/* arg: 0 NULL event, 1 NULL data_len, 2 NULL unavailable, 3 NULL data with
 * num_bytes > 0. */
static void check_null_argument(enum which w, int arg)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct posix_trace_event_info ev;
	char buf[16];
	size_t len;
	int unavailable;
	post_u32(pt_event_id("args"), 5);
	ck_assert_err(call(w, trid, arg == 0 ? NULL : &ev, arg == 3 ? NULL : buf, sizeof buf,
	                   arg == 1 ? NULL : &len, arg == 2 ? NULL : &unavailable),
	              EINVAL);
	ck_assert_ok(posix_trace_shutdown(trid));
}

START_TEST(null_event_is_einval)
{
	check_null_argument((enum which)_i, 0);
}
END_TEST

START_TEST(null_data_len_is_einval)
{
	check_null_argument((enum which)_i, 1);
}
END_TEST

START_TEST(null_unavailable_is_einval)
{
	check_null_argument((enum which)_i, 2);
}
END_TEST

START_TEST(null_data_with_nonzero_num_bytes_is_einval)
{
	check_null_argument((enum which)_i, 3);
}
END_TEST

START_TEST(invalid_trid_is_einval)
{
	struct posix_trace_event_info ev;
	char buf[16];
	size_t len;
	int unavailable;
	ck_assert_err(call((enum which)_i, 0, &ev, buf, sizeof buf, &len, &unavailable), EINVAL);
	ck_assert_err(call((enum which)_i, 12345, &ev, buf, sizeof buf, &len, &unavailable), EINVAL);
}
END_TEST

START_TEST(shut_down_trid_is_einval)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	struct posix_trace_event_info ev;
	char buf[16];
	size_t len;
	int unavailable;
	post_u32(pt_event_id("args"), 5);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_err(call((enum which)_i, trid, &ev, buf, sizeof buf, &len, &unavailable), EINVAL);
}
END_TEST

/* ---- each event once; reading frees space -------------------------------- */

START_TEST(reported_event_is_never_reported_again)
{
	trace_id_t trid = started_stream(POSIX_TRACE_LOOP, 0);
	trace_event_id_t id = pt_event_id("once");
	struct pt_ev r[8];
	for (uint32_t i = 0; i < 3; i++)
		post_u32(id, i);
	ck_assert_uint_eq(pt_drain(trid, r, 8), 3);
	ck_assert_uint_eq(pt_drain(trid, r, 8), 0);
	post_u32(id, 3);
	ck_assert_uint_eq(pt_drain(trid, r, 8), 1);
	ck_assert_uint_eq(pt_ev_u32(&r[0]), 3);
	ck_assert_uint_eq(pt_drain(trid, r, 8), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* UNTIL_FULL, 4096 bytes: fill up to the no-loss bound, drain, and do it
 * again: the second and third rounds fit only if reading freed the space. */
START_TEST(reading_events_frees_space_for_new_ones)
{
	const size_t stream_size = 4096;
	trace_id_t trid = new_stream(POSIX_TRACE_UNTIL_FULL, stream_size);
	trace_event_id_t id = pt_event_id("space");
	trace_attr_t attr;
	size_t ev_size, sys_size;
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&attr, sizeof(uint32_t), &ev_size));
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&attr, &sys_size));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_uint_gt(stream_size, sys_size + ev_size);
	size_t per_round = (stream_size - sys_size) / ev_size;

	static struct pt_ev r[4096];
	uint32_t seq = 0;
	ck_assert_ok(posix_trace_start(trid));
	for (int round = 0; round < 3; round++) {
		uint32_t first = seq;
		for (size_t i = 0; i < per_round; i++)
			post_u32(id, seq++);
		size_t n = pt_drain(trid, r, 4096);
		size_t k = 0;
		if (round == 0) {
			ck_assert_uint_eq(r[0].info.posix_event_id, POSIX_TRACE_START);
			k = 1;
		}
		ck_assert_uint_eq(n, k + per_round);
		for (size_t i = 0; i < per_round; i++) {
			ck_assert_uint_eq(r[k + i].info.posix_event_id, id);
			ck_assert_uint_eq(pt_ev_u32(&r[k + i]), first + i);
		}
		struct posix_trace_status_info st;
		ck_assert_ok(posix_trace_get_status(trid, &st));
		ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
		ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
		ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
		ck_assert_uint_eq(st.posixtrace_lost_events, 0);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("getnext");
	TCase *tc;

	tc = pt_tcase(s, "order");
	tcase_add_test(tc, trygetnext_reports_oldest_event_first);
	tcase_add_test(tc, getnext_reports_available_events_oldest_first_without_blocking);
	tcase_add_test(tc, timedgetnext_reports_available_events_oldest_first);
	tcase_add_test(tc, events_of_several_threads_come_out_merged_by_timestamp);
	tcase_add_test(tc, a_lane_taken_over_never_goes_back_in_time);

	tc = pt_tcase(s, "trygetnext");
	tcase_add_test(tc, trygetnext_on_empty_running_stream_returns_unavailable);
	tcase_add_test(tc, trygetnext_on_never_started_stream_returns_unavailable);

	tc = pt_tcase(s, "getnext");
	tcase_add_test(tc, getnext_blocks_until_another_thread_records_an_event);
	tcase_add_test(tc, getnext_woken_by_shutdown_returns_einval);
	tcase_add_test(tc, getnext_woken_by_shutdown_sets_unavailable);
	tcase_add_test(tc, getnext_on_stream_shut_down_before_returns_einval);
	tcase_add_test(tc, getnext_interrupted_by_signal_returns_eintr);

	tc = pt_tcase(s, "timedgetnext");
	tcase_add_test(tc, timedgetnext_with_past_abstime_and_no_event_returns_etimedout);
	tcase_add_test(tc, timedgetnext_with_epoch_abstime_returns_etimedout);
	tcase_add_test(tc, timedgetnext_waits_until_abstime_then_returns_etimedout);
	tcase_add_test(tc, timedgetnext_timeout_sets_unavailable);
	tcase_add_test(tc, timedgetnext_with_negative_nsec_and_no_event_returns_einval);
	tcase_add_test(tc, timedgetnext_with_nsec_one_billion_and_no_event_returns_einval);
	tcase_add_test(tc, timedgetnext_reports_available_event_despite_past_abstime);
	tcase_add_test(tc, timedgetnext_reports_available_event_despite_negative_nsec);
	tcase_add_test(tc, timedgetnext_reports_available_event_despite_nsec_one_billion);
	tcase_add_test(tc, timedgetnext_woken_by_event_from_another_thread);
	tcase_add_test(tc, timedgetnext_woken_by_shutdown_returns_einval);
	tcase_add_test(tc, timedgetnext_with_farthest_deadline_is_woken_by_shutdown);
	tcase_add_test(tc, timedgetnext_interrupted_by_signal_returns_eintr);

	tc = pt_tcase(s, "truncation");
	tcase_add_test(tc, short_buffer_truncates_data_to_num_bytes);
	tcase_add_test(tc, buffer_of_exact_size_is_not_truncated);
	tcase_add_test(tc, record_truncated_data_read_whole_reports_truncated_record);
	tcase_add_test(tc, truncated_read_overrides_truncated_record);
	tcase_add_test(tc, zero_num_bytes_with_null_data_reports_event_without_data);
	tcase_add_test(tc, zero_num_bytes_on_event_without_data_is_not_truncated);

	/* Looped over the three functions: _i is GETNEXT, TRYGETNEXT, TIMEDGETNEXT. */
	tc = pt_tcase(s, "arguments");
	tcase_add_loop_test(tc, null_event_is_einval, GETNEXT, TIMEDGETNEXT + 1);
	tcase_add_loop_test(tc, null_data_len_is_einval, GETNEXT, TIMEDGETNEXT + 1);
	tcase_add_loop_test(tc, null_unavailable_is_einval, GETNEXT, TIMEDGETNEXT + 1);
	tcase_add_loop_test(tc, null_data_with_nonzero_num_bytes_is_einval, GETNEXT,
	                    TIMEDGETNEXT + 1);
	tcase_add_loop_test(tc, invalid_trid_is_einval, GETNEXT, TIMEDGETNEXT + 1);
	tcase_add_loop_test(tc, shut_down_trid_is_einval, GETNEXT, TIMEDGETNEXT + 1);

	tc = pt_tcase(s, "one_reader");
	tcase_add_loop_test(tc, one_reader_gets_every_event_once_while_another_thread_controls_the_stream,
	                    0, 2);
	tcase_add_loop_test(tc, shutdown_from_another_thread_while_one_reader_reads, 0, 2);

	tc = pt_tcase(s, "consumption");
	tcase_add_test(tc, reported_event_is_never_reported_again);
	tcase_add_test(tc, reading_events_frees_space_for_new_ones);

	return pt_run(s);
}
