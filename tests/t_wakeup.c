/* SPDX-License-Identifier: MIT */
/*
 * t_wakeup: a reader blocked in posix_trace_getnext_event is woken by every
 * event (posix_trace_getnext_event, DESCRIPTION: "If no trace event is
 * available, the function shall block until one is available").
 *
 * A writer posts one event, then waits until the reader has it, hundreds of
 * times, so that the reader goes to sleep between events at every moment
 * of the writer's commit.  An event that fails to wake it would be found
 * only with the next one, and there is none: the reader would sleep to its
 * deadline.  The check is that no event takes seconds to arrive (a bound
 * that only catches a lost wake-up, far above any scheduling delay).
 */
#include "harness.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#define ROUNDS 1000

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct shared {
	trace_id_t trid;
	trace_event_id_t id;
	sem_t got;               /* the reader has taken one event */
	_Atomic uint64_t posted_ns; /* when the writer posted the last one */
	uint64_t worst_ns;
	int failed_round;        /* -1: none */
	atomic_int stopped;      /* the reader gave up */
	int err;
};

static void *reader(void *p)
{
	struct shared *s = p;
	for (int round = 0; round < ROUNDS; round++) {
		for (;;) {
			struct posix_trace_event_info ev;
			uint32_t data;
			size_t len;
			int unavailable;
			struct timespec deadline = pt_in_ms(5000);
			int err = posix_trace_timedgetnext_event(s->trid, &ev, &data, sizeof data,
			                                         &len, &unavailable, &deadline);
			if (err) {
				s->failed_round = round;
				s->err = err;
				atomic_store(&s->stopped, 1);
				sem_post(&s->got);
				return NULL;
			}
			if (!unavailable && ev.posix_event_id == s->id)
				break;
		}
		uint64_t late = now_ns() - atomic_load(&s->posted_ns);
		if (late > s->worst_ns)
			s->worst_ns = late;
		if (late > 2000000000u && s->failed_round < 0) {
			s->failed_round = round;
			s->err = ETIMEDOUT;
		}
		sem_post(&s->got);
	}
	return NULL;
}

START_TEST(every_single_event_wakes_a_blocked_reader)
{
	struct shared s = {.failed_round = -1};
	ck_assert_ok(posix_trace_create(0, NULL, &s.trid));
	s.id = pt_event_id("wake.one");
	ck_assert_int_eq(sem_init(&s.got, 0, 0), 0);
	ck_assert_ok(posix_trace_start(s.trid));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, reader, &s), 0);
	for (uint32_t round = 0; round < ROUNDS && !atomic_load(&s.stopped); round++) {
		/* Vary the moment: the reader is napping, about to sleep (it
		 * naps for about a millisecond first), or asleep when the event
		 * comes. */
		struct timespec pause = {0, round % 4 == 0 ? (long)(round % 23) * 60000L
		                                           : 500000L + (long)(round * 37 % 1000) * 2500L};
		nanosleep(&pause, NULL);
		atomic_store(&s.posted_ns, now_ns());
		posix_trace_event(s.id, &round, sizeof round);
		while (sem_wait(&s.got) != 0)
			;
	}
	pthread_join(th, NULL);
	fprintf(stderr, "t_wakeup: %d rounds, the slowest event reached the reader after %.3f ms\n",
	        ROUNDS, (double)s.worst_ns / 1e6);
	ck_assert_msg(s.failed_round < 0, "round %d: the reader was not woken (%s)", s.failed_round,
	              strerror(s.err));
	ck_assert_ok(posix_trace_shutdown(s.trid));
	sem_destroy(&s.got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wakeup");
	TCase *tc = pt_tcase(s, "blocked_reader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_single_event_wakes_a_blocked_reader);
	return pt_run(s);
}
