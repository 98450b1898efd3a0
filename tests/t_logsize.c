/* SPDX-License-Identifier: MIT */
/*
 * t_logsize: what a log holds at every log-max-size accepted
 * (posix_trace_attr_setlogsize, posix_trace_attr_setlogfullpolicy, XSH
 * 2.11).  log-max-size "is the maximum total of bytes that shall be
 * allocated for system and user trace events in the trace log"; an event
 * counts 16 bytes plus its data rounded up to 8 (CONFORMANCE.md).
 *
 * A matrix: log-full-policy (LOOP, UNTIL_FULL, APPEND) x log-max-size (the
 * smallest accepted, 64 KiB, 1 MiB) x stream-full-policy (LOOP,
 * UNTIL_FULL, FLUSH) x images on or off x a trigger armed or not.  Each
 * cell posts 2,024 tagged events of 32 bytes (with a trigger, event 1,000
 * is the trigger's), flushes, shuts down and reads the log back:
 *  - LOOP: the newest events flushed, in order, ending with the last one
 *    posted, at least as many as log-max-size holds (or all of them);
 *  - UNTIL_FULL: the first events in order; if not all, the log ends with
 *    an automatic POSIX_TRACE_STOP, its status says full and overrun, its
 *    events (system ones included) take at most log-max-size bytes but
 *    leave no room for one more, and its data region stays within the
 *    bound LOG-FORMAT.md gives;
 *  - APPEND: every event;
 *  - every log: closed, no POSIX_TRACE_ERROR.
 * One test (one process) per log policy and size runs its 12 cells.
 * Sizes below the smallest are refused by posix_trace_attr_setlogsize.
 */
#include "logtest.h"

/* CONFORMANCE.md: the smallest log-max-size posix_trace_attr_setlogsize
 * accepts. */
#define MIN_LOG_SIZE 4096u
#define EVENTS 2024u
#define EVENT_LEN 32u
#define TRIGGER_SEQ 1000u
#define STREAM_SIZE (1u << 20) /* holds every event: the stream loses none */

struct cell {
	int log_policy;
	size_t log_size;
	int stream_policy;
	int images, trigger;
	char what[128];
};

static const char *policy_name(int p)
{
	switch (p) {
	case POSIX_TRACE_LOOP: return "LOOP";
	case POSIX_TRACE_UNTIL_FULL: return "UNTIL_FULL";
	case POSIX_TRACE_FLUSH: return "FLUSH";
	case POSIX_TRACE_APPEND: return "APPEND";
	default: return "?";
	}
}

/* An event's bytes as log-max-size counts them. */
static uint64_t event_bytes(size_t len)
{
	return 16u + ((len + 7u) & ~(size_t)7u);
}

/* The data region of a log: the file past the header and name table. */
static uint64_t data_region(int fd)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	return st.st_size > (off_t)PT_LOG_DATA_OFF ? (uint64_t)st.st_size - PT_LOG_DATA_OFF : 0;
}

static struct pt_log_header log_header(int fd)
{
	struct pt_log_header h;
	ck_assert_int_eq(pread(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	return h;
}

/* Posts the cell's events into a new stream with a log, flushes, shuts
 * down; the log's file. */
static int record_cell(const struct cell *c)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	int err = lt_create_log(fd, c->log_policy, c->log_size, c->stream_policy, STREAM_SIZE,
	                        &trid);
	ck_assert_msg(err == 0, "%s: posix_trace_create_withlog: %s", c->what, strerror(err));
	trace_event_id_t ev = pt_event_id("logsize.event"), trig = pt_event_id("logsize.trigger");
	if (c->images)
		ck_assert_ok(posixtrace_set_images(trid, 1));
	if (c->trigger) {
		trace_event_set_t set;
		ck_assert_ok(posix_trace_eventset_empty(&set));
		ck_assert_ok(posix_trace_eventset_add(trig, &set));
		ck_assert_ok(posixtrace_set_trigger(trid, &set));
	}
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < EVENTS; i++)
		lt_record_tagged(c->trigger && i == TRIGGER_SEQ ? trig : ev, 0, i, EVENT_LEN);
	ck_assert_ok(posix_trace_flush(trid));
	ck_assert_ok(posix_trace_shutdown(trid));
	return fd;
}

/* The tags of the log's user events, in read order. */
static size_t tags_of(const struct lt_evlist *l, uint32_t *seq)
{
	size_t n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (lt_is_tagged(&l->ev[i]) && n < EVENTS)
			seq[n++] = lt_tag_of(&l->ev[i]).seq;
	return n;
}

static void check_loop(const struct cell *c, int fd, const uint32_t *seq, size_t n)
{
	size_t holds = c->log_size / event_bytes(EVENT_LEN);
	size_t want = holds < EVENTS ? holds : EVENTS;
	ck_assert_msg(n >= want, "%s: %zu events kept, log-max-size holds %zu of the %u flushed",
	              c->what, n, want, EVENTS);
	ck_assert_msg(n > 0 && seq[n - 1] == EVENTS - 1,
	              "%s: the last event kept is not the last one flushed (%zu kept)", c->what, n);
	for (size_t i = 1; i < n; i++)
		ck_assert_msg(seq[i] == seq[i - 1] + 1, "%s: event %u after %u", c->what, seq[i],
		              seq[i - 1]);
	/* LOG-FORMAT.md, Limits: the ring's slots, 2 x log-max-size in
	 * blocks and 17 blocks. */
	uint64_t bs = pt_log_block_size_for(1024);
	uint64_t slots = (2 * c->log_size + bs - 1) / bs + 17;
	ck_assert_msg(data_region(fd) <= slots * bs, "%s: %llu bytes of data, the ring is %llu",
	              c->what, (unsigned long long)data_region(fd),
	              (unsigned long long)(slots * bs));
}

static void check_until_full(const struct cell *c, int fd, const struct lt_evlist *l,
                             const uint32_t *seq, size_t n)
{
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(seq[i] == i, "%s: event %u at %zu", c->what, seq[i], i);
	uint64_t bytes = 0;
	for (size_t i = 0; i < l->n; i++)
		bytes += event_bytes(l->ev[i].len);
	ck_assert_msg(bytes <= c->log_size, "%s: events of %llu bytes in a log of %zu", c->what,
	              (unsigned long long)bytes, c->log_size);
	uint64_t bs = pt_log_block_size_for(1024);
	ck_assert_msg(data_region(fd) <= 2 * c->log_size + 16 * bs,
	              "%s: %llu bytes of data for a log-max-size of %zu", c->what,
	              (unsigned long long)data_region(fd), c->log_size);
	if (n == EVENTS)
		return;
	ck_assert_msg(n > 0, "%s: no event kept", c->what);
	const struct lt_rec *last = &l->ev[l->n - 1];
	int automatic = 0;
	ck_assert_msg(last->info.posix_event_id == POSIX_TRACE_STOP && last->len == sizeof(int),
	              "%s: the log ends with event %d, not an automatic STOP", c->what,
	              (int)last->info.posix_event_id);
	memcpy(&automatic, last->data, sizeof automatic);
	ck_assert_int_eq(automatic, 1);
	ck_assert_msg(bytes + event_bytes(EVENT_LEN) > c->log_size,
	              "%s: stopped with room for another event (%llu bytes of %zu)", c->what,
	              (unsigned long long)bytes, c->log_size);
	struct pt_log_header h = log_header(fd);
	ck_assert_int_eq(h.status.log_full, POSIX_TRACE_FULL);
	ck_assert_int_eq(h.status.log_overrun, POSIX_TRACE_OVERRUN);
	/* Every event the stream held is kept or counted (the count takes
	 * the keeper's own events dropped too).  A trigger's snapshot may
	 * fill the log while events are posted: the stream stops then, and
	 * what is posted after it is not traced. */
	ck_assert_msg(h.status.log_dropped >= 1 && (c->trigger || n + h.status.log_dropped >= EVENTS),
	              "%s: %llu dropped, %zu kept of %u", c->what,
	              (unsigned long long)h.status.log_dropped, n, EVENTS);
	ck_assert_uint_eq(h.status.lost_events, 0);
}

static void check_cell(const struct cell *c)
{
	int fd = record_cell(c);
	trace_id_t log;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &log));
	struct lt_evlist l = lt_read(log, LT_DATA_BUF);
	lt_hold_list(&l);
	struct posixtrace_log_info info;
	ck_assert_ok(posixtrace_log_info(log, &info));
	ck_assert_msg(info.posixtrace_closed == 1, "%s: the log is not closed", c->what);
	ck_assert_msg(lt_count_id(&l, POSIX_TRACE_ERROR) == 0, "%s: %zu ERROR events", c->what,
	              lt_count_id(&l, POSIX_TRACE_ERROR));
	uint32_t *seq = lt_hold(calloc(EVENTS, sizeof *seq));
	ck_assert_ptr_nonnull(seq);
	size_t n = tags_of(&l, seq);
	if (c->log_policy == POSIX_TRACE_LOOP) {
		check_loop(c, fd, seq, n);
	} else if (c->log_policy == POSIX_TRACE_UNTIL_FULL) {
		check_until_full(c, fd, &l, seq, n);
	} else {
		ck_assert_msg(n == EVENTS, "%s: %zu of %u events", c->what, n, EVENTS);
		for (size_t i = 0; i < n; i++)
			ck_assert_msg(seq[i] == i, "%s: event %u at %zu", c->what, seq[i], i);
	}
	ck_assert_ok(posix_trace_close(log));
	close(fd);
}

/* The 12 cells of one log policy and size. */
static void run_cells(int log_policy, size_t log_size)
{
	static const int stream_policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL,
	                                      POSIX_TRACE_FLUSH};
	for (size_t s = 0; s < 3; s++)
		for (int images = 0; images < 2; images++)
			for (int trigger = 0; trigger < 2; trigger++) {
				struct cell c = {log_policy, log_size, stream_policies[s], images,
				                 trigger, ""};
				snprintf(c.what, sizeof c.what,
				         "log %s of %zu bytes, stream %s, images %s, trigger %s",
				         policy_name(log_policy), log_size,
				         policy_name(stream_policies[s]), images ? "on" : "off",
				         trigger ? "armed" : "not armed");
				check_cell(&c);
			}
}

START_TEST(loop_log_of_the_smallest_size) { run_cells(POSIX_TRACE_LOOP, MIN_LOG_SIZE); }
END_TEST
START_TEST(loop_log_of_64k) { run_cells(POSIX_TRACE_LOOP, 64u << 10); }
END_TEST
START_TEST(loop_log_of_1m) { run_cells(POSIX_TRACE_LOOP, 1u << 20); }
END_TEST
START_TEST(until_full_log_of_the_smallest_size) { run_cells(POSIX_TRACE_UNTIL_FULL, MIN_LOG_SIZE); }
END_TEST
START_TEST(until_full_log_of_64k) { run_cells(POSIX_TRACE_UNTIL_FULL, 64u << 10); }
END_TEST
START_TEST(until_full_log_of_1m) { run_cells(POSIX_TRACE_UNTIL_FULL, 1u << 20); }
END_TEST
START_TEST(append_log_of_the_smallest_size) { run_cells(POSIX_TRACE_APPEND, MIN_LOG_SIZE); }
END_TEST
START_TEST(append_log_of_64k) { run_cells(POSIX_TRACE_APPEND, 64u << 10); }
END_TEST
START_TEST(append_log_of_1m) { run_cells(POSIX_TRACE_APPEND, 1u << 20); }
END_TEST

/* posix_trace_flush, then until its flush is done (10 s at most): the
 * next round then finds the stream empty. */
static void flush_and_wait(trace_id_t trid)
{
	ck_assert_ok(posix_trace_flush(trid));
	for (int waited = 0; waited < 10000; waited++) {
		struct posix_trace_status_info st;
		ck_assert_ok(posix_trace_get_status(trid, &st));
		ck_assert_int_eq(st.posix_stream_flush_error, 0);
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			return;
		pt_sleep_ms(1);
	}
	ck_abort_msg("a flush did not finish within 10 s");
}

/* A LOOP log that wrapped: rounds of 10,000 events, each flushed, until
 * the events posted are more than the ring holds; the log keeps the newest
 * ones, in order, ending with the last one posted, at least as many as
 * log-max-size holds, and says full and overrun.  (Stream policies LOOP
 * and UNTIL_FULL: the stream holds a round without an automatic flush;
 * each flush is waited for, so that the stream loses nothing.) */
static void loop_log_wraps(size_t log_size, int stream_policy)
{
	enum { ROUND = 10000 };
	uint64_t bs = pt_log_block_size_for(1024);
	uint64_t ring = ((2 * log_size + bs - 1) / bs + 17) * bs;
	uint32_t rounds = (uint32_t)(ring / (ROUND * 32u)) + 2; /* records of 32 bytes at least */
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, POSIX_TRACE_LOOP, log_size, stream_policy, STREAM_SIZE, &trid));
	trace_event_id_t ev = pt_event_id("logsize.event");
	ck_assert_ok(posix_trace_start(trid));
	uint32_t posted = 0;
	for (uint32_t r = 0; r < rounds; r++) {
		for (uint32_t i = 0; i < ROUND; i++)
			lt_record_tagged(ev, 0, posted++, EVENT_LEN);
		flush_and_wait(trid);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	trace_id_t log;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &log));
	struct lt_evlist l = lt_read(log, LT_DATA_BUF);
	lt_hold_list(&l);
	ck_assert_uint_eq(lt_count_id(&l, POSIX_TRACE_ERROR), 0);
	size_t n = 0;
	uint32_t prev = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (!lt_is_tagged(&l.ev[i]))
			continue;
		uint32_t seq = lt_tag_of(&l.ev[i]).seq;
		ck_assert_msg(n == 0 || seq == prev + 1, "log of %zu: event %u after %u", log_size, seq,
		              prev);
		prev = seq;
		n++;
	}
	size_t holds = log_size / event_bytes(EVENT_LEN);
	ck_assert_msg(n >= holds && n < posted, "log of %zu: %zu of %u events kept, %zu wanted",
	              log_size, n, posted, holds);
	ck_assert_uint_eq(prev, posted - 1);
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(log, &st));
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_int_eq(st.posix_log_full_status, POSIX_TRACE_FULL);
	ck_assert_int_eq(st.posix_log_overrun_status, POSIX_TRACE_OVERRUN);
	ck_assert_uint_le(data_region(fd), ring);
	ck_assert_ok(posix_trace_close(log));
	close(fd);
}

START_TEST(loop_log_that_wrapped_keeps_the_newest)
{
	static const size_t sizes[] = {MIN_LOG_SIZE, 64u << 10, 1u << 20};
	for (size_t i = 0; i < 3; i++) {
		loop_log_wraps(sizes[i], POSIX_TRACE_LOOP);
		loop_log_wraps(sizes[i], POSIX_TRACE_UNTIL_FULL);
	}
}
END_TEST

/* Below the smallest size: EINVAL from posix_trace_attr_setlogsize (it
 * "may fail" with EINVAL, "the value specified by one of the arguments is
 * invalid"), whatever the log policy; the attribute keeps its value. */
START_TEST(setlogsize_refuses_sizes_below_the_smallest)
{
	trace_attr_t attr;
	size_t got = 0;
	ck_assert_ok(posix_trace_attr_init(&attr));
	static const int policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND};
	for (size_t i = 0; i < 3; i++) {
		ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, policies[i]));
		ck_assert_ok(posix_trace_attr_setlogsize(&attr, MIN_LOG_SIZE));
		ck_assert_err(posix_trace_attr_setlogsize(&attr, 1), EINVAL);
		ck_assert_err(posix_trace_attr_setlogsize(&attr, MIN_LOG_SIZE - 1), EINVAL);
		ck_assert_ok(posix_trace_attr_getlogsize(&attr, &got));
		ck_assert_uint_eq(got, MIN_LOG_SIZE);
	}
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("logsize");
	TCase *tc = pt_tcase(s, "matrix");
	tcase_add_test(tc, loop_log_of_the_smallest_size);
	tcase_add_test(tc, loop_log_of_64k);
	tcase_add_test(tc, loop_log_of_1m);
	tcase_add_test(tc, until_full_log_of_the_smallest_size);
	tcase_add_test(tc, until_full_log_of_64k);
	tcase_add_test(tc, until_full_log_of_1m);
	tcase_add_test(tc, append_log_of_the_smallest_size);
	tcase_add_test(tc, append_log_of_64k);
	tcase_add_test(tc, append_log_of_1m);
	tc = pt_tcase(s, "wrap");
	tcase_add_test(tc, loop_log_that_wrapped_keeps_the_newest);
	tc = pt_tcase(s, "minimum");
	tcase_add_test(tc, setlogsize_refuses_sizes_below_the_smallest);
	return pt_run(s);
}
