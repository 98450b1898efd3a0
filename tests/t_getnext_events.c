/* SPDX-License-Identifier: MIT */
/*
 * t_getnext_events: posixtrace_getnext_events(), several events in one
 * call (<posixtrace.h>).
 *
 * Checks that on a pre-recorded stream it gives, batch after batch, the
 * events posix_trace_getnext_event gives one by one, every field of each
 * (the event information, the data and its length, the kernel thread id
 * and the CPU posixtrace_event_ext gives for it), truncating data to
 * num_bytes as getnext does; that it takes an event only while num_bytes
 * of the buffer remain; that the end of a log is a count of 0; that a
 * rewind starts it over; that posixtrace_event_ext then describes the last
 * event given; that on an active stream without a log it gives what
 * posix_trace_trygetnext_event gives, and 0 events without waiting when
 * there are none; and each of its EINVAL cases.
 */
#include "logtest.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <unistd.h>

#define WRITERS 3
#define EVENTS_EACH 400

/* One event as the one-by-one functions give it, with its extension. */
struct one {
	struct posix_trace_event_info info;
	size_t len;
	unsigned char data[LT_DATA_BUF];
	pid_t tid;
	uint32_t cpu, cpu_valid;
};

static trace_event_id_t writer_id[WRITERS];

/* Data lengths from 8 to 1,107 bytes: past the default max-data-size of
 * 1,024, so some events are truncated when recorded. */
static size_t event_len(uint32_t writer, uint32_t seq)
{
	return sizeof(struct lt_tag) + (seq * 37u + writer * 101u) % 1100u;
}

static void *writer_main(void *arg)
{
	uint32_t w = (uint32_t)(uintptr_t)arg;
	for (uint32_t s = 0; s < EVENTS_EACH; s++)
		lt_record_tagged(writer_id[w], w, s, event_len(w, s));
	return NULL;
}

/* A log of WRITERS threads' events, shut down (closed); its descriptor. */
static int build_log(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	int fd = lt_new_log_file();
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 4u << 20));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	for (uint32_t w = 0; w < WRITERS; w++) {
		char name[32];
		snprintf(name, sizeof name, "batch_writer_%u", w);
		writer_id[w] = pt_event_id(name);
	}
	ck_assert_ok(posix_trace_start(trid));
	pthread_t th[WRITERS];
	for (uint32_t w = 0; w < WRITERS; w++)
		ck_assert_int_eq(pthread_create(&th[w], NULL, writer_main, (void *)(uintptr_t)w), 0);
	for (uint32_t w = 0; w < WRITERS; w++)
		ck_assert_int_eq(pthread_join(th[w], NULL), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	return fd;
}

static trace_id_t open_log(int fd)
{
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &trid));
	return trid;
}

/* The next event of trid by getnext (a log) or trygetnext (an active
 * stream), num_bytes of its data at most, and its extension; 0 when none. */
static int next_one(trace_id_t trid, bool active, size_t num_bytes, struct one *o)
{
	int unavailable = -1;
	ck_assert_uint_le(num_bytes, sizeof o->data);
	if (active)
		ck_assert_ok(posix_trace_trygetnext_event(trid, &o->info, o->data, num_bytes, &o->len,
		                                          &unavailable));
	else
		ck_assert_ok(posix_trace_getnext_event(trid, &o->info, o->data, num_bytes, &o->len,
		                                       &unavailable));
	if (unavailable)
		return 0;
	struct posixtrace_event_ext ext;
	ck_assert_ok(posixtrace_event_ext(trid, &ext));
	o->tid = ext.posixtrace_tid;
	o->cpu = ext.posixtrace_cpu;
	o->cpu_valid = ext.posixtrace_cpu_valid;
	return 1;
}

/* Every field alike.  Of two active streams' events, not the time (the
 * same event's time in two streams is not one, a few nanoseconds apart),
 * nor the address of a system event (each stream's own start and stop,
 * made by calls at other addresses). */
static void assert_same_event(const struct one *want, const struct posixtrace_batch_event *got,
                              size_t at, bool two_streams)
{
	const struct posix_trace_event_info *a = &want->info, *b = &got->posixtrace_info;
	bool own = !two_streams || a->posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT;
	bool one_time = !two_streams;
	ck_assert_msg(a->posix_event_id == b->posix_event_id, "event %zu: id %u, want %u", at,
	              (unsigned)b->posix_event_id, (unsigned)a->posix_event_id);
	ck_assert_int_eq(a->posix_pid, b->posix_pid);
	if (own)
		ck_assert_ptr_eq(a->posix_prog_address, b->posix_prog_address);
	ck_assert_int_eq(a->posix_truncation_status, b->posix_truncation_status);
	ck_assert(pthread_equal(a->posix_thread_id, b->posix_thread_id));
	if (one_time) {
		ck_assert_int_eq(a->posix_timestamp.tv_sec, b->posix_timestamp.tv_sec);
		ck_assert_int_eq(a->posix_timestamp.tv_nsec, b->posix_timestamp.tv_nsec);
	}
	ck_assert_uint_eq(want->len, got->posixtrace_data_len);
	ck_assert_msg(want->len == 0 || memcmp(want->data, got->posixtrace_data, want->len) == 0,
	              "event %zu: other data", at);
	ck_assert_int_eq(want->tid, got->posixtrace_tid);
	ck_assert_uint_eq(want->cpu, got->posixtrace_cpu);
	ck_assert_uint_eq(want->cpu_valid, got->posixtrace_cpu_valid);
	ck_assert_uint_eq(got->posixtrace_reserved, 0);
}

/* Reads trid_one one by one and trid_batch in batches of max (buffer of
 * bufsize, num_bytes an event) side by side to their ends; asserts that
 * they agree event by event and that each batch stopped only at max, at
 * the end, or when num_bytes no longer fitted.  Returns the events. */
static size_t compare_to_end(trace_id_t trid_one, trace_id_t trid_batch, bool active, size_t max,
                             size_t bufsize, size_t num_bytes)
{
	struct posixtrace_batch_event *evs = calloc(max, sizeof *evs);
	unsigned char *buf = malloc(bufsize);
	struct one *want = malloc(sizeof *want);
	ck_assert(evs && buf && want);
	size_t total = 0, count;
	bool stopped_short = false; /* the last batch ended with num_bytes free */
	do {
		memset(evs, 0xa5, max * sizeof *evs);
		ck_assert_ok(posixtrace_getnext_events(trid_batch, evs, max, buf, bufsize, num_bytes,
		                                       &count));
		ck_assert_uint_le(count, max);
		size_t used = 0;
		for (size_t i = 0; i < count; i++, total++) {
			ck_assert_msg(next_one(trid_one, active, num_bytes, want),
			              "the batch gave event %zu, one by one ended", total);
			assert_same_event(want, &evs[i], total, active);
			ck_assert_ptr_eq(evs[i].posixtrace_data, buf + used);
			used += evs[i].posixtrace_data_len;
			ck_assert_uint_le(used, bufsize);
		}
		if (count) {
			struct posixtrace_event_ext ext;
			ck_assert_ok(posixtrace_event_ext(trid_batch, &ext)); /* the last one's */
			ck_assert_int_eq(ext.posixtrace_tid, evs[count - 1].posixtrace_tid);
			ck_assert_uint_eq(ext.posixtrace_cpu, evs[count - 1].posixtrace_cpu);
		}
		ck_assert_msg(!stopped_short || !count,
		              "a batch stopped before the end with num_bytes free");
		stopped_short = count < max && bufsize - used >= num_bytes;
		ck_assert_uint_le(total, LT_MAX_READ);
	} while (count);
	ck_assert_msg(!next_one(trid_one, active, num_bytes, want), "one by one gave more events");
	free(evs);
	free(buf);
	free(want);
	return total;
}

START_TEST(log_batches_give_what_getnext_gives)
{
	int fd = build_log();
	trace_id_t one = open_log(fd), batch = open_log(fd);
	/* 7 an event: batches that end at max; 64 KiB: never at the buffer */
	size_t n = compare_to_end(one, batch, false, 7, 64u << 10, LT_DATA_BUF);
	ck_assert_uint_ge(n, WRITERS * EVENTS_EACH);
}
END_TEST

START_TEST(log_batches_truncate_data_as_getnext_does)
{
	int fd = build_log();
	trace_id_t one = open_log(fd), batch = open_log(fd);
	/* 16 bytes of each event: most are truncated on read */
	compare_to_end(one, batch, false, 1000, 16 * 1000, 16);
}
END_TEST

START_TEST(log_batch_stops_when_num_bytes_no_longer_fit)
{
	int fd = build_log();
	trace_id_t one = open_log(fd), batch = open_log(fd);
	/* room for a few events whatever their length: batches end at the
	 * buffer, checked by compare_to_end */
	compare_to_end(one, batch, false, 4096, 3 * LT_DATA_BUF - 1, LT_DATA_BUF);
}
END_TEST

START_TEST(log_batch_without_data_gives_every_event)
{
	int fd = build_log();
	trace_id_t one = open_log(fd), batch = open_log(fd);
	struct posixtrace_batch_event evs[64];
	struct one want;
	size_t count, total = 0;
	do {
		ck_assert_ok(posixtrace_getnext_events(batch, evs, 64, NULL, 0, 0, &count));
		for (size_t i = 0; i < count; i++, total++) {
			ck_assert(next_one(one, false, 0, &want));
			assert_same_event(&want, &evs[i], total, false);
			ck_assert_ptr_null(evs[i].posixtrace_data);
		}
	} while (count);
	ck_assert_uint_ge(total, WRITERS * EVENTS_EACH);
}
END_TEST

START_TEST(log_end_is_a_count_of_zero_and_rewind_starts_over)
{
	int fd = build_log();
	trace_id_t log = open_log(fd);
	struct posixtrace_batch_event evs[256];
	static unsigned char buf[256 * LT_DATA_BUF];
	size_t count, first = 0, total = 0;
	ck_assert_ok(posixtrace_getnext_events(log, evs, 256, buf, sizeof buf, LT_DATA_BUF, &first));
	ck_assert_uint_eq(first, 256);
	struct posix_trace_event_info first_info = evs[0].posixtrace_info;
	for (total = first; total <= LT_MAX_READ; total += count) {
		ck_assert_ok(posixtrace_getnext_events(log, evs, 256, buf, sizeof buf, LT_DATA_BUF,
		                                       &count));
		if (!count)
			break;
	}
	ck_assert_uint_ge(total, WRITERS * EVENTS_EACH);
	count = 99;
	ck_assert_ok(posixtrace_getnext_events(log, evs, 256, buf, sizeof buf, LT_DATA_BUF, &count));
	ck_assert_uint_eq(count, 0); /* still the end */
	ck_assert_ok(posix_trace_rewind(log));
	ck_assert_ok(posixtrace_getnext_events(log, evs, 1, buf, sizeof buf, LT_DATA_BUF, &count));
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(evs[0].posixtrace_info.posix_event_id, first_info.posix_event_id);
	ck_assert_int_eq(evs[0].posixtrace_info.posix_timestamp.tv_sec,
	                 first_info.posix_timestamp.tv_sec);
	ck_assert_int_eq(evs[0].posixtrace_info.posix_timestamp.tv_nsec,
	                 first_info.posix_timestamp.tv_nsec);
}
END_TEST

START_TEST(log_events_have_their_writers_thread_ids)
{
	int fd = build_log();
	trace_id_t log = open_log(fd);
	struct posixtrace_batch_event evs[128];
	static unsigned char buf[128 * LT_DATA_BUF];
	size_t count, tagged = 0;
	pid_t tid_of[WRITERS] = {0};
	do {
		ck_assert_ok(posixtrace_getnext_events(log, evs, 128, buf, sizeof buf, LT_DATA_BUF,
		                                       &count));
		for (size_t i = 0; i < count; i++) {
			const struct posixtrace_batch_event *e = &evs[i];
			if (e->posixtrace_info.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT ||
			    e->posixtrace_data_len < sizeof(struct lt_tag))
				continue;
			struct lt_tag t;
			memcpy(&t, e->posixtrace_data, sizeof t);
			ck_assert_uint_lt(t.thread, WRITERS);
			ck_assert_int_ne(e->posixtrace_tid, 0);
			ck_assert_int_ne(e->posixtrace_tid, getpid()); /* the writers are threads */
			if (!tid_of[t.thread])
				tid_of[t.thread] = e->posixtrace_tid;
			ck_assert_int_eq(e->posixtrace_tid, tid_of[t.thread]);
			tagged++;
		}
	} while (count);
	ck_assert_uint_eq(tagged, WRITERS * EVENTS_EACH);
	ck_assert_int_ne(tid_of[0], tid_of[1]);
	ck_assert_int_ne(tid_of[1], tid_of[2]);
}
END_TEST

/* Two active streams without a log recording the same events. */
static void two_active_streams(trace_id_t *a, trace_id_t *b)
{
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 4u << 20));
	ck_assert_ok(posix_trace_create(0, &attr, a));
	ck_assert_ok(posix_trace_create(0, &attr, b));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	for (uint32_t w = 0; w < WRITERS; w++) {
		char name[32];
		snprintf(name, sizeof name, "batch_writer_%u", w);
		writer_id[w] = pt_event_id(name);
	}
	ck_assert_ok(posix_trace_start(*a));
	ck_assert_ok(posix_trace_start(*b));
}

/* The writers on one CPU: each stream reads the CPU when the event is
 * posted to it, and a thread that moved between the two posts (it did
 * under TSan) would give the streams two CPUs for one event. */
static void stay_on_one_cpu(void)
{
	cpu_set_t allowed, one;
	ck_assert_int_eq(sched_getaffinity(0, sizeof allowed, &allowed), 0);
	CPU_ZERO(&one);
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &allowed)) {
			CPU_SET(c, &one);
			break;
		}
	ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
}

START_TEST(active_stream_batches_give_what_trygetnext_gives)
{
	trace_id_t one, batch;
	stay_on_one_cpu();
	two_active_streams(&one, &batch);
	pthread_t th[WRITERS];
	for (uint32_t w = 0; w < WRITERS; w++)
		ck_assert_int_eq(pthread_create(&th[w], NULL, writer_main, (void *)(uintptr_t)w), 0);
	for (uint32_t w = 0; w < WRITERS; w++)
		ck_assert_int_eq(pthread_join(th[w], NULL), 0);
	ck_assert_ok(posix_trace_stop(one));
	ck_assert_ok(posix_trace_stop(batch));
	size_t n = compare_to_end(one, batch, true, 5, 64u << 10, LT_DATA_BUF);
	ck_assert_uint_ge(n, WRITERS * EVENTS_EACH);
}
END_TEST

START_TEST(active_stream_without_events_gives_none_at_once)
{
	trace_id_t a, b;
	two_active_streams(&a, &b);
	struct posixtrace_batch_event evs[8];
	unsigned char buf[8 * 64];
	size_t count = 99;
	/* the start event, then nothing: no wait */
	ck_assert_ok(posixtrace_getnext_events(a, evs, 8, buf, sizeof buf, 64, &count));
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(evs[0].posixtrace_info.posix_event_id, POSIX_TRACE_START);
	ck_assert_int_eq(evs[0].posixtrace_tid, (pid_t)syscall(SYS_gettid));
	ck_assert_ok(posixtrace_getnext_events(a, evs, 8, buf, sizeof buf, 64, &count));
	ck_assert_uint_eq(count, 0);
	lt_record_tagged(writer_id[0], 0, 7, 40);
	ck_assert_ok(posixtrace_getnext_events(a, evs, 8, buf, sizeof buf, 64, &count));
	ck_assert_uint_eq(count, 1);
	ck_assert_uint_eq(evs[0].posixtrace_info.posix_event_id, writer_id[0]);
	ck_assert_uint_eq(evs[0].posixtrace_data_len, 40);
	ck_assert_int_eq(evs[0].posixtrace_tid, (pid_t)syscall(SYS_gettid));
}
END_TEST

START_TEST(invalid_arguments_are_einval)
{
	int fd = build_log();
	trace_id_t log = open_log(fd);
	struct posixtrace_batch_event evs[4];
	unsigned char buf[256];
	size_t count = 99;
	ck_assert_err(posixtrace_getnext_events(log, NULL, 4, buf, sizeof buf, 64, &count), EINVAL);
	ck_assert_err(posixtrace_getnext_events(log, evs, 4, buf, sizeof buf, 64, NULL), EINVAL);
	ck_assert_err(posixtrace_getnext_events(log, evs, 0, buf, sizeof buf, 64, &count), EINVAL);
	ck_assert_err(posixtrace_getnext_events(log, evs, 4, NULL, sizeof buf, 0, &count), EINVAL);
	ck_assert_err(posixtrace_getnext_events(log, evs, 4, buf, 63, 64, &count), EINVAL);
	ck_assert_uint_eq(count, 99); /* untouched by a refused call */
	ck_assert_ok(posix_trace_close(log));
	ck_assert_err(posixtrace_getnext_events(log, evs, 4, buf, sizeof buf, 64, &count), EINVAL);
	ck_assert_err(posixtrace_getnext_events(0, evs, 4, buf, sizeof buf, 64, &count), EINVAL);

	/* an active stream with a log: its keeper reads it */
	trace_attr_t attr;
	trace_id_t withlog;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, lt_new_log_file(), &withlog));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(withlog));
	ck_assert_err(posixtrace_getnext_events(withlog, evs, 4, buf, sizeof buf, 64, &count),
	              EINVAL);
	ck_assert_ok(posix_trace_shutdown(withlog));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("getnext_events");
	TCase *tc = pt_tcase(s, "log");
	tcase_add_test(tc, log_batches_give_what_getnext_gives);
	tcase_add_test(tc, log_batches_truncate_data_as_getnext_does);
	tcase_add_test(tc, log_batch_stops_when_num_bytes_no_longer_fit);
	tcase_add_test(tc, log_batch_without_data_gives_every_event);
	tcase_add_test(tc, log_end_is_a_count_of_zero_and_rewind_starts_over);
	tcase_add_test(tc, log_events_have_their_writers_thread_ids);

	tc = pt_tcase(s, "active");
	tcase_add_test(tc, active_stream_batches_give_what_trygetnext_gives);
	tcase_add_test(tc, active_stream_without_events_gives_none_at_once);

	tc = pt_tcase(s, "errors");
	tcase_add_test(tc, invalid_arguments_are_einval);
	return pt_run(s);
}
