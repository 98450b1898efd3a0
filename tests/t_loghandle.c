/* SPDX-License-Identifier: MIT */
/*
 * t_loghandle: one pre-recorded stream read by several threads.
 *
 * posix_trace_open and posix_trace_getnext_event (XSH 2.11, the Trace Log option):
 * a trace stream identifier is usable by every thread of the process.  The
 * library reads a log without locking while one thread uses it, and must
 * give every event exactly once, in order, however threads take turns or
 * race, and posix_trace_close from another thread must leave a reader with
 * EINVAL, never a crash.
 */
#include "harness.h"

#include <posixtrace.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NEVENTS 20000

static FILE *logfile;

/* A log of NEVENTS events of type "lh.seq" carrying 0, 1, 2, ... */
static int make_log(void)
{
	logfile = tmpfile();
	ck_assert_ptr_nonnull(logfile);
	int fd = fileno(logfile);
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 4u << 20));
	trace_id_t trid;
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	trace_event_id_t id = pt_event_id("lh.seq");
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < NEVENTS; i++)
		posix_trace_event(id, &i, sizeof i);
	ck_assert_ok(posix_trace_shutdown(trid));
	posix_trace_attr_destroy(&attr);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	return fd;
}

struct reader {
	trace_id_t trid;
	uint32_t want;            /* user events to take, 0: to the end */
	uint32_t got;
	uint32_t *seen;           /* counts per sequence number, shared */
	int last_rc;
	int out_of_order;
	pthread_mutex_t *seen_lock;
};

/* Takes events until `want` user events, the end, or an error. */
static void *read_events(void *p)
{
	struct reader *r = p;
	uint32_t prev = 0;
	int have_prev = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		uint32_t seq;
		size_t len;
		int unavailable;
		r->last_rc = posix_trace_getnext_event(r->trid, &ev, &seq, sizeof seq, &len,
		                                       &unavailable);
		if (r->last_rc != 0 || unavailable)
			break;
		if (ev.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT || len != sizeof seq)
			continue;
		if (seq >= NEVENTS)
			continue;
		pthread_mutex_lock(r->seen_lock);
		r->seen[seq]++;
		pthread_mutex_unlock(r->seen_lock);
		if (have_prev && seq <= prev)
			r->out_of_order++;
		prev = seq;
		have_prev = 1;
		if (++r->got == r->want)
			break;
	}
	return NULL;
}

static uint32_t *seen_counts(void)
{
	uint32_t *seen = calloc(NEVENTS, sizeof *seen);
	ck_assert_ptr_nonnull(seen);
	return seen;
}

static void assert_each_once(const uint32_t *seen)
{
	for (uint32_t i = 0; i < NEVENTS; i++)
		ck_assert_msg(seen[i] == 1, "event %u read %u times", i, seen[i]);
}

/* Threads take turns: each reads a share, then the next one goes on. */
START_TEST(threads_taking_turns_read_every_event_once_in_order)
{
	int fd = make_log();
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	uint32_t *seen = seen_counts();
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	uint32_t total = 0;
	for (int turn = 0; total < NEVENTS && turn < 8; turn++) {
		struct reader r = {trid, turn == 7 ? 0 : NEVENTS / 8, 0, seen, 0, 0, &lock};
		pthread_t th;
		ck_assert_int_eq(pthread_create(&th, NULL, read_events, &r), 0);
		pthread_join(th, NULL);
		ck_assert_int_eq(r.last_rc, 0);
		ck_assert_int_eq(r.out_of_order, 0);
		total += r.got;
		/* The main thread reads one event between turns as well. */
		struct reader one = {trid, 1, 0, seen, 0, 0, &lock};
		if (total < NEVENTS) {
			read_events(&one);
			total += one.got;
		}
	}
	ck_assert_uint_eq(total, NEVENTS);
	assert_each_once(seen);
	ck_assert_ok(posix_trace_close(trid));
	free(seen);
	fclose(logfile);
}
END_TEST

/* Two threads at once: between them every event, once each. */
START_TEST(two_threads_at_once_share_the_events)
{
	int fd = make_log();
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	uint32_t *seen = seen_counts();
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct reader r[2] = {{trid, 0, 0, seen, 0, 0, &lock}, {trid, 0, 0, seen, 0, 0, &lock}};
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, read_events, &r[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		ck_assert_int_eq(r[i].last_rc, 0);
		ck_assert_int_eq(r[i].out_of_order, 0);
	}
	ck_assert_uint_eq(r[0].got + r[1].got, NEVENTS);
	assert_each_once(seen);
	ck_assert_ok(posix_trace_close(trid));
	free(seen);
	fclose(logfile);
}
END_TEST

/* Closed by another thread while a thread reads: the reader stops with
 * EINVAL (or has reached the end), the identifier is invalid after. */
START_TEST(close_from_another_thread_while_reading)
{
	int fd = make_log();
	for (int round = 0; round < 20; round++) {
		ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
		trace_id_t trid;
		ck_assert_ok(posix_trace_open(fd, &trid));
		uint32_t *seen = seen_counts();
		pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
		struct reader r = {trid, 0, 0, seen, 0, 0, &lock};
		pthread_t th;
		ck_assert_int_eq(pthread_create(&th, NULL, read_events, &r), 0);
		struct timespec pause = {0, (round % 5) * 200000L};
		nanosleep(&pause, NULL);
		ck_assert_ok(posix_trace_close(trid));
		pthread_join(th, NULL);
		ck_assert_msg(r.last_rc == EINVAL || (r.last_rc == 0 && r.got == NEVENTS),
		              "reader ended with %d after %u events", r.last_rc, r.got);
		ck_assert_int_eq(r.out_of_order, 0);
		struct posix_trace_event_info ev;
		size_t len;
		int unavailable;
		ck_assert_err(posix_trace_getnext_event(trid, &ev, NULL, 0, &len, &unavailable),
		              EINVAL);
		free(seen);
	}
	fclose(logfile);
}
END_TEST

/* Asks posixtrace_event_ext after every event until stopped: 0 with the
 * writer's thread id, or EINVAL before the first event. */
struct ext_asker {
	trace_id_t trid;
	pid_t writer_tid;
	_Atomic int stop;
	int asked, wrong;
};

static void *ask_ext(void *p)
{
	struct ext_asker *a = p;
	while (!atomic_load(&a->stop)) {
		struct posixtrace_event_ext ext;
		int rc = posixtrace_event_ext(a->trid, &ext);
		a->wrong += !(rc == EINVAL || (rc == 0 && ext.posixtrace_tid == a->writer_tid));
		a->asked++;
	}
	return NULL;
}

/* The reading thread's posixtrace_event_ext goes without the lock while it
 * alone uses the handle: it gives the extension of the event just read,
 * and another thread asking at the same time takes the handle from it
 * (the reader still gets every event once, in order, each with its
 * extension); none is given before the first event. */
START_TEST(event_ext_follows_each_event_also_with_another_thread_asking)
{
	int fd = make_log();
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posixtrace_event_ext ext;
	ck_assert_err(posixtrace_event_ext(trid, &ext), EINVAL);
	/* make_log's events are the main thread's. */
	struct ext_asker a = {.trid = trid, .writer_tid = (pid_t)syscall(SYS_gettid)};
	uint32_t next = 0;
	pthread_t th;
	for (;;) {
		struct posix_trace_event_info ev;
		uint32_t seq;
		size_t len;
		int unavailable;
		ck_assert_ok(posix_trace_getnext_event(trid, &ev, &seq, sizeof seq, &len, &unavailable));
		if (unavailable)
			break;
		ck_assert_ok(posixtrace_event_ext(trid, &ext));
		if (ev.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT || len != sizeof seq)
			continue;
		ck_assert_int_eq(ext.posixtrace_tid, a.writer_tid);
		ck_assert_uint_eq(seq, next);
		/* Alone for the first half, then with the other thread asking. */
		if (++next == NEVENTS / 2)
			ck_assert_int_eq(pthread_create(&th, NULL, ask_ext, &a), 0);
	}
	ck_assert_uint_eq(next, NEVENTS);
	atomic_store(&a.stop, 1);
	pthread_join(th, NULL);
	ck_assert_int_eq(a.wrong, 0);
	ck_assert_int_gt(a.asked, 0);
	ck_assert_ok(posix_trace_close(trid));
	fclose(logfile);
}
END_TEST

/* The bias proves the identifier: once closed, a log's identifier is
 * refused by the thread that read it, also when a new log it reads has
 * taken the same slot. */
START_TEST(closed_identifier_refused_by_the_thread_that_read_it)
{
	int fd = make_log();
	trace_id_t old, cur;
	struct posix_trace_event_info ev;
	uint32_t seq;
	size_t len;
	int unavailable;
	struct posixtrace_event_ext ext;
	ck_assert_ok(posix_trace_open(fd, &old));
	for (int i = 0; i < 3; i++)
		ck_assert_ok(posix_trace_getnext_event(old, &ev, &seq, sizeof seq, &len, &unavailable));
	ck_assert_ok(posix_trace_close(old));
	ck_assert_err(posix_trace_getnext_event(old, &ev, &seq, sizeof seq, &len, &unavailable),
	              EINVAL);
	ck_assert_err(posixtrace_event_ext(old, &ext), EINVAL);
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &cur));
	ck_assert_uint_eq(cur & 0xff, old & 0xff); /* the same slot, a new generation */
	for (int i = 0; i < 3; i++)
		ck_assert_ok(posix_trace_getnext_event(cur, &ev, &seq, sizeof seq, &len, &unavailable));
	ck_assert_err(posix_trace_getnext_event(old, &ev, &seq, sizeof seq, &len, &unavailable),
	              EINVAL);
	ck_assert_err(posixtrace_event_ext(old, &ext), EINVAL);
	ck_assert_ok(posixtrace_event_ext(cur, &ext));
	ck_assert_ok(posix_trace_close(cur));
	fclose(logfile);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loghandle");
	TCase *tc = pt_tcase(s, "threads");
	tcase_add_test(tc, threads_taking_turns_read_every_event_once_in_order);
	tcase_add_test(tc, two_threads_at_once_share_the_events);
	tcase_add_test(tc, close_from_another_thread_while_reading);
	tcase_add_test(tc, event_ext_follows_each_event_also_with_another_thread_asking);
	tcase_add_test(tc, closed_identifier_refused_by_the_thread_that_read_it);
	return pt_run(s);
}
