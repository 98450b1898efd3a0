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
 *
 * The system events recorded by the controller wake such a reader too
 * (system_event_wakes_a_blocked_reader).
 */
#include "harness.h"

#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <sched.h>
#include <sys/syscall.h>

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

/* ---- system events ----------------------------------------------------- */

/*
 * The events the controller records (posix_trace_start, posix_trace_stop,
 * posix_trace_set_filter) wake a reader asleep in another thread, as user
 * events do: it returns with that event, not at its deadline.  The reader is
 * first seen asleep for good (in futex(2), no voluntary context switch for
 * 50 ms: past its naps), so that only a wake-up can end its wait.  Its
 * timed calls have a deadline (120 s) far past the wait allowed here (30 s).
 */
enum sys_cause { CAUSE_START, CAUSE_STOP, CAUSE_FILTER, NCAUSES };

struct sys_reader {
	trace_id_t trid;
	int timed;               /* timedgetnext, else getnext */
	_Atomic pid_t tid;
	sem_t got;               /* an event taken, or the reader's end */
	_Atomic trace_event_id_t last;
	atomic_int err;
};

static void *read_system_events(void *p)
{
	struct sys_reader *r = p;
	atomic_store(&r->tid, gettid());
	for (;;) {
		struct posix_trace_event_info ev;
		unsigned char data[512];
		size_t len;
		int unavailable = 1;
		struct timespec deadline = pt_in_ms(120000);
		int err = r->timed ? posix_trace_timedgetnext_event(r->trid, &ev, data, sizeof data,
		                                                    &len, &unavailable, &deadline)
		                   : posix_trace_getnext_event(r->trid, &ev, data, sizeof data, &len,
		                                               &unavailable);
		if (err || unavailable) {
			atomic_store(&r->err, err ? err : ENODATA);
			sem_post(&r->got);
			return NULL;
		}
		atomic_store(&r->last, ev.posix_event_id);
		sem_post(&r->got);
	}
}

static long voluntary_switches(pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof path, "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	long n = -1;
	while (f && fgets(line, sizeof line, f))
		if (sscanf(line, "voluntary_ctxt_switches: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

static int in_futex(pid_t tid)
{
	char path[64];
	long nr = -1;
	snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%ld", &nr) != 1)
			nr = -1;
		fclose(f);
	}
	return nr == SYS_futex;
}

/* Until the reader sleeps in its long wait (bounded: 20 s). */
static void wait_until_asleep(struct sys_reader *r)
{
	while (!atomic_load(&r->tid))
		sched_yield();
	pid_t tid = atomic_load(&r->tid);
	for (int tries = 0; tries < 400; tries++) {
		long before = voluntary_switches(tid);
		struct timespec pause = {0, 50000000L};
		nanosleep(&pause, NULL);
		if (before >= 0 && in_futex(tid) && voluntary_switches(tid) == before)
			return;
	}
	ck_abort_msg("the reader never went to sleep");
}

/* The reader's next event, within 30 s. */
static trace_event_id_t next_taken(struct sys_reader *r, const char *what)
{
	struct timespec limit = pt_in_ms(30000);
	int rc;
	while ((rc = sem_timedwait(&r->got, &limit)) != 0 && errno == EINTR)
		;
	ck_assert_msg(rc == 0, "%s: the reader, asleep in %s, was not woken within 30 s", what,
	              r->timed ? "timedgetnext (deadline 120 s)" : "getnext");
	ck_assert_msg(atomic_load(&r->err) == 0, "%s: the reader's call failed: %s", what,
	              strerror(atomic_load(&r->err)));
	return atomic_load(&r->last);
}

START_TEST(system_event_wakes_a_blocked_reader)
{
	static const char *const what[NCAUSES] = {"posix_trace_start", "posix_trace_stop",
	                                          "posix_trace_set_filter"};
	static const trace_event_id_t expected[NCAUSES] = {POSIX_TRACE_START, POSIX_TRACE_STOP,
	                                                   POSIX_TRACE_FILTER};
	enum sys_cause cause = (enum sys_cause)(_i / 2);
	struct sys_reader r = {.timed = _i % 2};
	ck_assert_int_eq(sem_init(&r.got, 0, 0), 0);
	ck_assert_ok(posix_trace_create(0, NULL, &r.trid));
	if (cause != CAUSE_START)
		ck_assert_ok(posix_trace_start(r.trid));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, read_system_events, &r), 0);
	if (cause != CAUSE_START)
		ck_assert_int_eq(next_taken(&r, "the first START"), POSIX_TRACE_START);
	wait_until_asleep(&r);
	if (cause == CAUSE_START) {
		ck_assert_ok(posix_trace_start(r.trid));
	} else if (cause == CAUSE_STOP) {
		ck_assert_ok(posix_trace_stop(r.trid));
	} else {
		trace_event_set_t none;
		ck_assert_ok(posix_trace_eventset_empty(&none));
		ck_assert_ok(posix_trace_set_filter(r.trid, &none, POSIX_TRACE_SET_EVENTSET));
	}
	trace_event_id_t got = next_taken(&r, what[cause]);
	ck_assert_msg(got == expected[cause], "after %s the reader got event %u, not %u",
	              what[cause], (unsigned)got, (unsigned)expected[cause]);
	/* Shutdown wakes the reader too: it ends with EINVAL. */
	ck_assert_ok(posix_trace_shutdown(r.trid));
	pthread_join(th, NULL);
	ck_assert_int_eq(atomic_load(&r.err), EINVAL);
	sem_destroy(&r.got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wakeup");
	TCase *tc = pt_tcase(s, "blocked_reader");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, every_single_event_wakes_a_blocked_reader);
	tc = pt_tcase(s, "system_events");
	tcase_set_timeout(tc, 60);
	/* Each cause, with getnext (even) and timedgetnext (odd). */
	tcase_add_loop_test(tc, system_event_wakes_a_blocked_reader, 0, 2 * NCAUSES);
	return pt_run(s);
}
