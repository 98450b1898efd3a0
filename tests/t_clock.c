/* SPDX-License-Identifier: MIT */
/*
 * t_clock: event timestamps are what clock_gettime would have said.
 *
 * XSH 2.11.1, posix_trace_event_info Structure (posix_timestamp "the time at
 * which the trace event was generated") and posix_trace_attr_getclockres: where
 * the library records the TSC instead of calling clock_gettime, it converts
 * at read time, and the result must stay within 1 microsecond of a
 * CLOCK_REALTIME reading taken just before and just after the call to
 * posix_trace_event().  Each poster writes its readings into shared memory
 * at the event's sequence number (the event's data), so the bound is
 * checked for every event: in the tracing process with a reader keeping up
 * and with one reading only at the end, for another process traced by pid,
 * for a child across fork() with inheritance, and for events read back from
 * a log.  Each run spans seconds, so conversions cross many calibrations.
 * This is a correctness bound, not a timing one: a slow machine widens the
 * brackets, never the error.
 */
#include "harness.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NEVENTS 1500
#define SPACING_US 1000   /* NEVENTS * SPACING_US: about 1.5 s of events */
#define BOUND_NS 1000

struct bracket {
	uint64_t before, after;
};

/* Brackets in memory shared with posters in other processes. */
static struct bracket *brackets;

static void map_brackets(void)
{
	brackets = mmap(NULL, NEVENTS * sizeof *brackets, PROT_READ | PROT_WRITE,
	                MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(brackets, MAP_FAILED);
}

/* Posts NEVENTS events of type `id`, each between two clock readings. */
static void post_all(trace_event_id_t id)
{
	for (uint32_t i = 0; i < NEVENTS; i++) {
		brackets[i].before = (uint64_t)pt_realtime_ns();
		posix_trace_event(id, &i, sizeof i);
		__atomic_store_n(&brackets[i].after, (uint64_t)pt_realtime_ns(), __ATOMIC_RELEASE);
		usleep(SPACING_US);
	}
}

struct verdict {
	uint32_t seen, outside;
	int64_t worst;           /* ns beyond the bracket, the largest */
	unsigned char got[NEVENTS];
};

/* Checks one event of type `id` against its bracket. */
static void judge(struct verdict *v, trace_event_id_t id,
                  const struct posix_trace_event_info *ev, const void *data, size_t len)
{
	uint32_t i;
	if (ev->posix_event_id != id || len != sizeof i)
		return;
	memcpy(&i, data, sizeof i);
	ck_assert_uint_lt(i, NEVENTS);
	/* A reader keeping up can see the event before its poster's second
	 * reading: wait for it. */
	for (int spins = 0; !__atomic_load_n(&brackets[i].after, __ATOMIC_ACQUIRE); spins++) {
		ck_assert_int_lt(spins, 5000);
		usleep(1000);
	}
	uint64_t ts = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
	              (uint64_t)ev->posix_timestamp.tv_nsec;
	int64_t early = (int64_t)(brackets[i].before - ts);
	int64_t late = (int64_t)(ts - brackets[i].after);
	int64_t off = early > late ? early : late;
	if (off > v->worst)
		v->worst = off;
	if (off > BOUND_NS)
		v->outside++;
	v->got[i] = 1;
	v->seen++;
}

/* Reads with trygetnext until `want` events of `id` were judged or the
 * stream stays empty for 5 s. */
/* Reading gave up: which events did not come, and what the stream says
 * of losses, for whoever reads the failure. */
static void say_what_is_missing(trace_id_t trid, const struct verdict *v)
{
	uint32_t first = NEVENTS, last = 0, runs = 0;
	for (uint32_t i = 0; i < NEVENTS; i++)
		if (!v->got[i]) {
			runs += i == 0 || v->got[i - 1];
			first = i < first ? i : first;
			last = i;
		}
	struct posix_trace_status_info st = {0};
	int err = posix_trace_get_status(trid, &st);
	fprintf(stderr, "t_clock: %u events missing, %u to %u in %u runs; status %d: "
	        "running %d, full %d, overrun %d, lost %llu\n", NEVENTS - v->seen, first, last,
	        runs, err, st.posix_stream_status, st.posix_stream_full_status,
	        st.posix_stream_overrun_status, err ? 0ull : st.posixtrace_lost_events);
}

static void read_until(trace_id_t trid, trace_event_id_t id, uint32_t want, struct verdict *v)
{
	struct posix_trace_event_info ev;
	char data[64];
	size_t len;
	int unavailable, idle_ms = 0;
	while (v->seen < want && idle_ms < 5000) {
		ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len,
		                                          &unavailable));
		if (unavailable) {
			pt_sleep_ms(1);
			idle_ms++;
			continue;
		}
		idle_ms = 0;
		judge(v, id, &ev, data, len);
	}
	if (v->seen < want)
		say_what_is_missing(trid, v);
}

static void report(const char *what, const struct verdict *v)
{
	fprintf(stderr, "t_clock: %s: %u events, %u beyond %d ns, worst %lld ns\n", what,
	        v->seen, v->outside, BOUND_NS, (long long)v->worst);
	ck_assert_uint_eq(v->seen, NEVENTS);
	ck_assert_uint_eq(v->outside, 0);
}

/* ---- in the tracing process --------------------------------------------- */

struct reader_arg {
	trace_id_t trid;
	trace_event_id_t id;
	struct verdict v;
};

static void *reader_thread(void *p)
{
	struct reader_arg *a = p;
	read_until(a->trid, a->id, NEVENTS, &a->v);
	return NULL;
}

START_TEST(self_with_a_reader_keeping_up)
{
	map_brackets();
	trace_id_t trid = pt_create_default();
	struct reader_arg a = {.trid = trid, .id = pt_event_id("clock.self")};
	ck_assert_ok(posix_trace_start(trid));
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, reader_thread, &a), 0);
	post_all(a.id);
	pthread_join(th, NULL);
	report("same process, reader keeping up", &a.v);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(self_read_only_at_the_end)
{
	map_brackets();
	trace_id_t trid = pt_create(0, (struct pt_attrs){.size = 1u << 20});
	trace_event_id_t id = pt_event_id("clock.late");
	ck_assert_ok(posix_trace_start(trid));
	post_all(id);
	struct verdict v = {0};
	read_until(trid, id, NEVENTS, &v);
	report("same process, read at the end", &v);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- in other processes -------------------------------------------------- */

/* A child that waits for a byte on `go`, then posts every event. */
static pid_t spawn_poster(int go)
{
	pid_t pid = pt_fork();
	if (pid == 0) {
		char c;
		if (read(go, &c, 1) != 1)
			_exit(2);
		trace_event_id_t id;
		if (posix_trace_eventid_open("clock.child", &id) != 0)
			_exit(3);
		post_all(id);
		_exit(0);
	}
	return pid;
}

START_TEST(another_process_traced_by_pid)
{
	map_brackets();
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t child = spawn_poster(go[0]);
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(child, NULL, &trid));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	struct verdict v = {0};
	trace_event_id_t id;
	ck_assert_ok(posix_trace_trid_eventid_open(trid, "clock.child", &id));
	read_until(trid, id, NEVENTS, &v);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	report("another process", &v);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(child_across_fork_with_inheritance)
{
	map_brackets();
	trace_attr_t attr;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_start(trid));
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t child = spawn_poster(go[0]);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	trace_event_id_t id;
	ck_assert_ok(posix_trace_trid_eventid_open(trid, "clock.child", &id));
	struct verdict v = {0};
	read_until(trid, id, NEVENTS, &v);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	report("child across fork", &v);
	ck_assert_ok(posix_trace_shutdown(trid));
	posix_trace_attr_destroy(&attr);
}
END_TEST

/* ---- from a log ------------------------------------------------------------ */

START_TEST(events_read_back_from_a_log)
{
	map_brackets();
	FILE *tmp = tmpfile();
	ck_assert_ptr_nonnull(tmp);
	int fd = fileno(tmp);
	trace_id_t trid;
	ck_assert_ok(posix_trace_create_withlog(0, NULL, fd, &trid));
	trace_event_id_t id = pt_event_id("clock.log");
	ck_assert_ok(posix_trace_start(trid));
	post_all(id);
	ck_assert_ok(posix_trace_shutdown(trid));

	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	trace_event_id_t logged = 0;
	struct posix_trace_event_info ev;
	char data[64];
	size_t len;
	int unavailable;
	struct verdict v = {0};
	for (;;) {
		ck_assert_ok(posix_trace_getnext_event(trid, &ev, data, sizeof data, &len,
		                                       &unavailable));
		if (unavailable)
			break;
		if (!logged && pt_name_is(trid, ev.posix_event_id, "clock.log"))
			logged = ev.posix_event_id;
		judge(&v, logged, &ev, data, len);
	}
	report("read back from a log", &v);
	ck_assert_ok(posix_trace_close(trid));
	fclose(tmp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("clock");
	TCase *tc = pt_tcase(s, "timestamps");
	tcase_add_test(tc, self_with_a_reader_keeping_up);
	tcase_add_test(tc, self_read_only_at_the_end);
	tcase_add_test(tc, another_process_traced_by_pid);
	tcase_add_test(tc, child_across_fork_with_inheritance);
	tcase_add_test(tc, events_read_back_from_a_log);
	return pt_run(s);
}
