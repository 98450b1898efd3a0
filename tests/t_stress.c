/* SPDX-License-Identifier: MIT */
/*
 * Stress: several writer threads record numbered events while one reader
 * thread drains the stream (posix_trace_getnext_event, DESCRIPTION: "shall be
 * sequential", "cannot be reported again"; posix_trace_attr_getstreamfullpolicy,
 * DESCRIPTION: stream full policies; posix_trace_attr_getmaxusereventsize,
 * DESCRIPTION: the no-loss guarantee; contract: "Retrieval", "Full policies",
 * posixtrace_lost_events).
 *
 * Each writer t posts PT_STRESS_SCALE * 200000 events of its own type whose
 * 16-byte data is {t, sequence number, pt_mix(t, seq)} (struct pt_payload).  The reader blocks in
 * posix_trace_getnext_event until the main thread, after joining the
 * writers, stops the stream (POSIX_TRACE_STOP with data 0 is the last event),
 * then empties it with posix_trace_trygetnext_event.  Checks: every event is
 * whole (type, length and data agree, thread id constant per writer), each
 * writer's sequence strictly increases (no duplicate, no reordering),
 * received + the sum of posixtrace_lost_events == posted, and nothing is lost
 * when the stream is large enough for every event.
 * PT_STRESS_VERBOSE=1 prints the counts of each run.
 */
#define PT_EV_DATA 64 /* the events are pt_payload records */
#include "harness.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

#define MAX_WRITERS 8
#define SMALL_STREAM (256u * 1024u)
#define LARGE_STREAM (64u * 1024u * 1024u)

static uint32_t events_per_writer(void)
{
	return pt_stress_scaled(200000, 100, 4000000000u);
}

/* ---- reader: everything it learns stays here until the main thread checks -- */

struct reader {
	trace_id_t trid;
	int nwriters;
	trace_event_id_t ids[MAX_WRITERS];
	/* results */
	uint64_t received;                 /* user events */
	uint64_t per_writer[MAX_WRITERS];
	int64_t next_seq[MAX_WRITERS];     /* last seq + 1 */
	struct timespec last_ts[MAX_WRITERS];
	pthread_t thread_of[MAX_WRITERS];  /* posix_thread_id first seen */
	int seen[MAX_WRITERS];
	uint64_t overflows, resumes, auto_stops, restarts;
	long after_stop;                   /* events after STOP(0) */
	char error[256];                   /* first inconsistency, "" if none */
	atomic_int done;
};

static void note_error(struct reader *r, const char *msg, const struct pt_ev *e)
{
	if (r->error[0] == 0)
		snprintf(r->error, sizeof r->error, "%s (event id %u, len %zu, event #%llu)", msg,
		         e ? e->info.posix_event_id : 0u, e ? e->len : (size_t)0,
		         (unsigned long long)r->received);
}

static void check_user_event(struct reader *r, const struct pt_ev *e)
{
	struct pt_payload d;
	if (e->len != sizeof d || e->info.posix_truncation_status != POSIX_TRACE_NOT_TRUNCATED)
		{
		note_error(r, "torn event: wrong length or truncated", e);
		return;
	}
	memcpy(&d, e->data, sizeof d);
	if (d.writer >= (uint32_t)r->nwriters || e->info.posix_event_id != r->ids[d.writer] ||
	    d.check != pt_mix(d.writer, d.seq))
		{
		note_error(r, "torn event: type and data disagree", e);
		return;
	}
	if ((int64_t)d.seq < r->next_seq[d.writer])
		{
		note_error(r, "duplicated or reordered event (sequence not increasing)", e);
		return;
	}
	if (r->seen[d.writer] && !pthread_equal(r->thread_of[d.writer], e->info.posix_thread_id))
		{
		note_error(r, "torn event: thread id changed", e);
		return;
	}
	if (r->seen[d.writer] && !pt_ts_le(&r->last_ts[d.writer], &e->info.posix_timestamp))
		{
		note_error(r, "timestamp of a thread's events decreased", e);
		return;
	}
	r->seen[d.writer] = 1;
	r->thread_of[d.writer] = e->info.posix_thread_id;
	r->last_ts[d.writer] = e->info.posix_timestamp;
	r->next_seq[d.writer] = (int64_t)d.seq + 1;
	r->per_writer[d.writer]++;
	r->received++;
}

static void *reader_main(void *p)
{
	struct reader *r = p;
	for (;;) {
		struct pt_ev e;
		int unavailable = -1;
		int rc = posix_trace_getnext_event(r->trid, &e.info, e.data, sizeof e.data, &e.len,
		                                   &unavailable);
		if (rc != 0 || unavailable) {
			note_error(r, rc ? strerror(rc) : "getnext returned without an event", NULL);
			break;
		}
		trace_event_id_t id = e.info.posix_event_id;
		if (id >= POSIX_TRACE_UNNAMED_USER_EVENT) {
			check_user_event(r, &e);
		} else if (id == POSIX_TRACE_OVERFLOW) {
			r->overflows++;
		} else if (id == POSIX_TRACE_RESUME) {
			r->resumes++;
		} else if (id == POSIX_TRACE_START) {
			r->restarts++;
		} else if (id == POSIX_TRACE_STOP) {
			int v = -1;
			if (e.len == sizeof v)
				memcpy(&v, e.data, sizeof v);
			if (v == 0) {
				/* (a failed check in pt_drain ends the test
				 * process from this thread too) */
				struct pt_ev rest[4];
				r->after_stop = pt_drain(r->trid, rest, 4);
				break;
			}
			r->auto_stops++;
		} else {
			note_error(r, "unexpected system event", &e);
		}
	}
	atomic_store(&r->done, 1);
	return NULL;
}

/* ---- one run ---------------------------------------------------------------- */

struct result {
	uint64_t posted, lost;
	struct reader rd;
};

static void run(int policy, size_t stream_size, int nwriters, struct result *res)
{
	uint32_t count = events_per_writer();
	ck_assert_int_le(nwriters, MAX_WRITERS);
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = policy, .size = stream_size});

	memset(res, 0, sizeof *res);
	struct reader *rd = &res->rd;
	rd->trid = trid;
	rd->nwriters = nwriters;
	for (int t = 0; t < nwriters; t++) {
		char name[32];
		snprintf(name, sizeof name, "stress_writer_%d", t);
		ck_assert_ok(posix_trace_eventid_open(name, &rd->ids[t]));
	}

	/* Read START here so that it cannot be lost later. */
	struct pt_ev first[4];
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(pt_drain(trid, first, 4), 1);
	ck_assert_uint_eq(first[0].info.posix_event_id, POSIX_TRACE_START);

	pthread_t rth;
	struct pt_writer w[MAX_WRITERS];
	ck_assert_int_eq(pthread_create(&rth, NULL, reader_main, rd), 0);
	for (int t = 0; t < nwriters; t++)
		w[t] = (struct pt_writer){ .id = rd->ids[t], .thread = (uint32_t)t, .count = count,
		                           .post = pt_post_payload };
	pt_run_writers(w, (uint32_t)nwriters);
	res->posted = (uint64_t)count * (uint64_t)nwriters;

	/* Stop until it takes (a full UNTIL_FULL stream ignores stop until the
	 * reader has emptied it and it restarted); STOP(0) ends the reader. */
	struct posix_trace_status_info st;
	while (!atomic_load(&rd->done)) {
		ck_assert_ok(posix_trace_stop(trid));
		ck_assert_ok(posix_trace_get_status(trid, &st));
		res->lost += st.posixtrace_lost_events;
		if (!atomic_load(&rd->done))
			pt_sleep_ms(1);
	}
	pthread_join(rth, NULL);
	ck_assert_ok(posix_trace_get_status(trid, &st));
	res->lost += st.posixtrace_lost_events;

	if (getenv("PT_STRESS_VERBOSE"))
		fprintf(stderr,
		        "policy %d, %zu bytes, %d writers: posted %llu received %llu lost %llu, "
		        "%llu OVERFLOW %llu RESUME %llu auto stops\n",
		        policy, stream_size, nwriters, (unsigned long long)res->posted,
		        (unsigned long long)rd->received, (unsigned long long)res->lost,
		        (unsigned long long)rd->overflows, (unsigned long long)rd->resumes,
		        (unsigned long long)rd->auto_stops);
	ck_assert_msg(rd->error[0] == 0, "%s", rd->error);
	ck_assert_int_eq(rd->after_stop, 0);
	for (int t = 0; t < nwriters; t++)
		if (rd->seen[t])
			ck_assert_msg(pthread_equal(rd->thread_of[t], w[t].self),
			              "events of writer %d carry another thread id", t);
	ck_assert_msg(res->rd.received + res->lost == res->posted,
	              "received %llu + lost %llu != posted %llu",
	              (unsigned long long)res->rd.received, (unsigned long long)res->lost,
	              (unsigned long long)res->posted);
	ck_assert_ok(posix_trace_shutdown(trid));
}

static size_t large_stream_size(int nwriters)
{
	trace_attr_t attr;
	size_t ev, sys;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&attr, sizeof(struct pt_payload), &ev));
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&attr, &sys));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	/* START, every user event, and STOP(0) if the reader is slow */
	size_t need = 2 * sys + (size_t)events_per_writer() * (size_t)nwriters * ev;
	return need > LARGE_STREAM ? need : LARGE_STREAM;
}

static void check_no_loss(int policy, int nwriters)
{
	static struct result res;
	run(policy, large_stream_size(nwriters), nwriters, &res);
	ck_assert_uint_eq(res.lost, 0);
	ck_assert_uint_eq(res.rd.received, res.posted);
	ck_assert_uint_eq(res.rd.overflows, 0);
	ck_assert_uint_eq(res.rd.resumes, 0);
	ck_assert_uint_eq(res.rd.auto_stops, 0);
	for (int t = 0; t < nwriters; t++)
		ck_assert_int_eq(res.rd.next_seq[t], (int64_t)events_per_writer());
}

START_TEST(loop_256k_4_writers_received_plus_lost_is_posted)
{
	static struct result res;
	run(POSIX_TRACE_LOOP, SMALL_STREAM, 4, &res);
	ck_assert_uint_eq(res.rd.auto_stops, 0);
	ck_assert_uint_eq(res.rd.restarts, 0);
}
END_TEST

START_TEST(loop_256k_8_writers_received_plus_lost_is_posted)
{
	static struct result res;
	run(POSIX_TRACE_LOOP, SMALL_STREAM, 8, &res);
	ck_assert_uint_eq(res.rd.auto_stops, 0);
	ck_assert_uint_eq(res.rd.restarts, 0);
}
END_TEST

START_TEST(until_full_256k_4_writers_received_plus_lost_is_posted)
{
	static struct result res;
	run(POSIX_TRACE_UNTIL_FULL, SMALL_STREAM, 4, &res);
	/* every auto stop is followed by a restart (START) */
	ck_assert_uint_eq(res.rd.restarts, res.rd.auto_stops);
}
END_TEST

START_TEST(until_full_256k_8_writers_received_plus_lost_is_posted)
{
	static struct result res;
	run(POSIX_TRACE_UNTIL_FULL, SMALL_STREAM, 8, &res);
	ck_assert_uint_eq(res.rd.restarts, res.rd.auto_stops);
}
END_TEST

START_TEST(large_loop_stream_4_writers_loses_nothing)
{
	check_no_loss(POSIX_TRACE_LOOP, 4);
}
END_TEST

START_TEST(large_until_full_stream_8_writers_loses_nothing)
{
	check_no_loss(POSIX_TRACE_UNTIL_FULL, 8);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stress");
	TCase *tc;

	tc = pt_tcase(s, "small_stream");
	tcase_add_test(tc, loop_256k_4_writers_received_plus_lost_is_posted);
	tcase_add_test(tc, loop_256k_8_writers_received_plus_lost_is_posted);
	tcase_add_test(tc, until_full_256k_4_writers_received_plus_lost_is_posted);
	tcase_add_test(tc, until_full_256k_8_writers_received_plus_lost_is_posted);

	tc = pt_tcase(s, "large_stream");
	tcase_add_test(tc, large_loop_stream_4_writers_loses_nothing);
	tcase_add_test(tc, large_until_full_stream_8_writers_loses_nothing);

	return pt_run(s);
}
