/* SPDX-License-Identifier: MIT */
/*
 * t_inlinefilter: the filter stays exact while it changes under running
 * writers, now that <trace.h>'s macro tests it without a call while one
 * stream alone records the process (posix_trace_set_filter, DESCRIPTION:
 * the events of the types in the filter "shall not be recorded";
 * posix_trace_event, DESCRIPTION).  A writer posts event A (its sequence
 * number) between two readings of CLOCK_REALTIME, then a witness W, never
 * filtered, with the number and both readings; the controller flips A in
 * and out of the filter every millisecond, noting when each call began and
 * returned.  Every A posted wholly after a change returned and before the
 * next began must be in the stream if A was allowed, and absent if it was
 * filtered out.  Cases: a writer thread of the controller's own process
 * (the macro's test), a writer in another process (the same, through the
 * stream handed over), and that process traced by two streams (the macro
 * then calls, and the library decides).  And when the macro's test is
 * given: once an event is filtered out, while one stream records.
 */
#include "harness.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#define CHANGES 240
#define CHANGE_US 1000
#define STREAM_BYTES (64u << 20)

struct witness {
	uint64_t seq;
	int64_t before_ns, after_ns;
};

struct change {
	int64_t call_ns, ret_ns;
	int a_filtered;
};

static trace_event_id_t ev_a, ev_w;
static _Atomic int writing;

static void sleep_us(long us)
{
	struct timespec ts = {us / 1000000, (us % 1000000) * 1000L};
	while (nanosleep(&ts, &ts) != 0)
		;
}

static int64_t real_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Posts A and its witness until told to stop (or for `ms` when alone). */
static void write_pairs(long ms)
{
	uint64_t seq = 0;
	int64_t end = real_ns() + ms * 1000000;
	while (ms ? real_ns() < end : atomic_load(&writing)) {
		struct witness w = {++seq, real_ns(), 0};
		posix_trace_event(ev_a, &w.seq, sizeof w.seq);
		w.after_ns = real_ns();
		posix_trace_event(ev_w, &w, sizeof w);
		if (seq % 4 == 0)
			sleep_us(20);
	}
}

static void *writer_thread(void *arg)
{
	(void)arg;
	write_pairs(0);
	return NULL;
}

static trace_id_t create_stream(pid_t pid)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, sizeof(struct witness)));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, STREAM_BYTES));
	ck_assert_ok(posix_trace_create(pid, &attr, &trid));
	posix_trace_attr_destroy(&attr);
	return trid;
}

/* Flips A in and out of trid's filter, noting each call's times. */
static void flip_filter(trace_id_t trid, struct change *ch)
{
	for (int i = 0; i < CHANGES; i++) {
		trace_event_set_t set;
		ck_assert_ok(posix_trace_eventset_empty(&set));
		ch[i].a_filtered = i % 2;
		if (ch[i].a_filtered)
			ck_assert_ok(posix_trace_eventset_add(ev_a, &set));
		ch[i].call_ns = real_ns();
		ck_assert_ok(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
		ch[i].ret_ns = real_ns();
		sleep_us(CHANGE_US);
	}
}

/* Reads the stream and checks every A whose post lies wholly inside one
 * filter's time: its presence says whether A was allowed. */
static void check_exact(trace_id_t trid, const struct change *ch, const char *what)
{
	static uint8_t seen[1u << 22];
	static struct witness wit[1u << 20];
	size_t nwit = 0;
	memset(seen, 0, sizeof seen);
	for (;;) {
		struct posix_trace_event_info ev;
		struct witness w;
		size_t len;
		int unavailable = 0;
		ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, &w, sizeof w, &len, &unavailable));
		if (unavailable)
			break;
		if (ev.posix_event_id == ev_a && len == sizeof w.seq && w.seq < sizeof seen)
			seen[w.seq] = 1;
		else if (ev.posix_event_id == ev_w && len == sizeof w && nwit < sizeof wit / sizeof wit[0])
			wit[nwit++] = w;
	}
	long allowed = 0, filtered = 0, missing = 0, leaked = 0;
	for (size_t k = 0; k < nwit; k++) {
		for (int i = 0; i + 1 < CHANGES; i++) {
			if (wit[k].before_ns < ch[i].ret_ns || wit[k].after_ns >= ch[i + 1].call_ns)
				continue;
			int present = wit[k].seq < sizeof seen && seen[wit[k].seq];
			if (ch[i].a_filtered) {
				filtered++;
				leaked += present;
			} else {
				allowed++;
				missing += !present;
			}
			break;
		}
	}
	printf("t_inlinefilter: %s: %zu posts seen; within one filter's time: %ld allowed (%ld "
	       "missing), %ld filtered out (%ld recorded)\n",
	       what, nwit, allowed, missing, filtered, leaked);
	ck_assert_int_eq(missing, 0);
	ck_assert_int_eq(leaked, 0);
	ck_assert_int_gt(allowed, 1000);
	ck_assert_int_gt(filtered, 1000);
}

static void open_ids(void)
{
	ck_assert_ok(posix_trace_eventid_open("if.a", &ev_a));
	ck_assert_ok(posix_trace_eventid_open("if.w", &ev_w));
}

static void no_overrun(trace_id_t trid)
{
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
}

START_TEST(filter_flips_under_a_writer_thread_of_the_same_process)
{
	static struct change ch[CHANGES];
	open_ids();
	trace_id_t trid = create_stream(0);
	ck_assert_ok(posix_trace_start(trid));
	pthread_t th;
	atomic_store(&writing, 1);
	ck_assert_int_eq(pthread_create(&th, NULL, writer_thread, NULL), 0);
	pt_sleep_ms(20);
	flip_filter(trid, ch);
	atomic_store(&writing, 0);
	pthread_join(th, NULL);
	ck_assert_ok(posix_trace_stop(trid));
	no_overrun(trid);
	check_exact(trid, ch, "writer thread, one stream");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* A writer in a child, traced by `streams` streams; the first one's filter
 * flips. */
static void another_process(int streams, const char *what)
{
	static struct change ch[CHANGES];
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	open_ids();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		char c;
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		write_pairs((long)CHANGES * CHANGE_US / 1000 + 400);
		_exit(0);
	}
	close(go[0]);
	trace_id_t trid[2];
	for (int s = 0; s < streams; s++) {
		trid[s] = create_stream(pid);
		ck_assert_ok(posix_trace_start(trid[s]));
	}
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	pt_sleep_ms(100);
	flip_filter(trid[0], ch);
	int status = -1;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_eq(status, 0);
	for (int s = 0; s < streams; s++) {
		ck_assert_ok(posix_trace_stop(trid[s]));
		no_overrun(trid[s]);
	}
	check_exact(trid[0], ch, what);
	for (int s = 0; s < streams; s++)
		ck_assert_ok(posix_trace_shutdown(trid[s]));
}

START_TEST(filter_flips_under_a_writer_of_another_process)
{
	another_process(1, "another process, one stream");
}
END_TEST

START_TEST(filter_flips_under_a_writer_traced_by_two_streams)
{
	another_process(2, "another process, two streams");
}
END_TEST

/* When the macro tests the filter itself: only once the one stream that
 * records the process has filtered an event out (before, an event takes
 * the call at once, without testing a filter that excludes nothing); not
 * while two streams record it; again after the second has gone, from the
 * next event filtered out.  posixtrace__filter_for (<trace.h>) says it:
 * the armed word of that stream, or 0. */
START_TEST(inline_filter_given_once_an_event_is_filtered_out)
{
	trace_event_set_t set;
	open_ids();
	trace_id_t one = create_stream(0);
	ck_assert_ok(posix_trace_start(one));
	posix_trace_event(ev_a, NULL, 0);
	ck_assert_uint_eq(posixtrace__filter_for, 0);
	ck_assert_ok(posix_trace_eventset_empty(&set));
	ck_assert_ok(posix_trace_eventset_add(ev_a, &set));
	ck_assert_ok(posix_trace_set_filter(one, &set, POSIX_TRACE_SET_EVENTSET));
	posix_trace_event(ev_w, NULL, 0);
	ck_assert_uint_eq(posixtrace__filter_for, 0);
	posix_trace_event(ev_a, NULL, 0);
	ck_assert_uint_ne(posixtrace__filter_for, 0);
	ck_assert_uint_eq(posixtrace__filter_for, *posixtrace__armed);
	/* a second stream: every armed event takes the call */
	trace_id_t two = create_stream(0);
	ck_assert_ok(posix_trace_start(two));
	ck_assert_uint_eq(posixtrace__filter_for, 0);
	posix_trace_event(ev_a, NULL, 0);
	ck_assert_uint_eq(posixtrace__filter_for, 0);
	ck_assert_ok(posix_trace_shutdown(two));
	ck_assert_uint_eq(posixtrace__filter_for, 0);
	posix_trace_event(ev_w, NULL, 0);
	ck_assert_uint_eq(posixtrace__filter_for, 0);
	posix_trace_event(ev_a, NULL, 0);
	ck_assert_uint_eq(posixtrace__filter_for, *posixtrace__armed);
	/* the filter emptied: the test stays given and excludes nothing */
	ck_assert_ok(posix_trace_eventset_empty(&set));
	ck_assert_ok(posix_trace_set_filter(one, &set, POSIX_TRACE_SET_EVENTSET));
	posix_trace_event(ev_a, NULL, 0);
	ck_assert_ok(posix_trace_stop(one));
	struct posix_trace_event_info ev;
	size_t len;
	int unavailable, a_seen = 0;
	for (;;) {
		ck_assert_ok(posix_trace_trygetnext_event(one, &ev, NULL, 0, &len, &unavailable));
		if (unavailable)
			break;
		a_seen += ev.posix_event_id == ev_a;
	}
	ck_assert_int_eq(a_seen, 2); /* the first, and the one after the filter was emptied */
	ck_assert_ok(posix_trace_shutdown(one));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("inlinefilter");
	TCase *tc = pt_tcase(s, "flips");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, filter_flips_under_a_writer_thread_of_the_same_process);
	tcase_add_test(tc, filter_flips_under_a_writer_of_another_process);
	tcase_add_test(tc, filter_flips_under_a_writer_traced_by_two_streams);
	tc = pt_tcase(s, "when");
	tcase_add_test(tc, inline_filter_given_once_an_event_is_filtered_out);
	return pt_run(s);
}
