/* SPDX-License-Identifier: MIT */
/*
 * t_stream: trace streams traced in-process (pid 0) and the events they record.
 *
 * Checks posix_trace_create and posix_trace_shutdown (DESCRIPTION, ERRORS),
 * posix_trace_start and posix_trace_stop, posix_trace_event,
 * posix_trace_get_attr and posix_trace_get_status, posix_trace_clear, and the
 * status and event structures (XSH 2.11.1, posix_trace_status_info Structure,
 * posix_trace_event_info Structure) and the system trace event tables (XSH
 * 2.11.2, System Trace Event Type Definitions), with the
 * implementation choices of the behaviour contract (defaults, ESRCH,
 * TRACE_SYS_MAX per process, ids ignored outside 32..1023).
 * Events are read back with posix_trace_trygetnext_event.
 */
#define PT_EV_DATA 4096 /* room for the data of any event posted here */
#include "harness.h"

#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

#define MAX_EVENTS 256

static struct pt_ev got[MAX_EVENTS]; /* events read back */

/* A user event id, in the range the contract gives user events. */
static trace_event_id_t user_id(const char *name)
{
	trace_event_id_t id = pt_event_id(name);
	ck_assert_uint_ge(id, 33);
	ck_assert_uint_lt(id, 1024);
	return id;
}

/* A small stream with the given full policy (max-data-size default 1024). */
static trace_id_t create_small(int policy)
{
	return pt_create(0, (struct pt_attrs){.policy = policy, .size = 16384});
}

/* Records 1000-byte events until the stream reports FULL; returns the status
 * read at that moment (the read resets the overrun status). */
static struct posix_trace_status_info fill_until_full(trace_id_t trid, trace_event_id_t id)
{
	static unsigned char payload[1000];
	for (long i = 0; i < 1000000; i++) {
		posix_trace_event(id, payload, sizeof payload);
		if (i % 8 == 7) {
			struct posix_trace_status_info st = pt_status(trid);
			if (st.posix_stream_full_status == POSIX_TRACE_FULL)
				return st;
		}
	}
	ck_abort_msg("stream never became full");
	struct posix_trace_status_info none = {0};
	return none;
}

/* A small UNTIL_FULL stream, started and recorded into until it is full. */
static trace_id_t full_until_full_stream(trace_event_id_t id)
{
	trace_id_t trid = create_small(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(trid));
	struct posix_trace_status_info st = fill_until_full(trid, id);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	return trid;
}

/* Every function that takes a trid answers EINVAL for this one. */
static void assert_trid_rejected(trace_id_t trid)
{
	trace_attr_t attr;
	struct posix_trace_status_info st;
	trace_event_set_t set;
	struct posix_trace_event_info info;
	unsigned char buf[64];
	size_t len;
	int unavailable;
	char name[TRACE_EVENT_NAME_MAX + 1];
	trace_event_id_t id;
	struct timespec abstime;

	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_eventset_empty(&set));
	clock_gettime(CLOCK_REALTIME, &abstime);
	abstime.tv_sec += 1;

	ck_assert_err(posix_trace_start(trid), EINVAL);
	ck_assert_err(posix_trace_stop(trid), EINVAL);
	ck_assert_err(posix_trace_clear(trid), EINVAL);
	ck_assert_err(posix_trace_get_status(trid, &st), EINVAL);
	ck_assert_err(posix_trace_get_attr(trid, &attr), EINVAL);
	ck_assert_err(posix_trace_get_filter(trid, &set), EINVAL);
	ck_assert_err(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET), EINVAL);
	ck_assert_err(posix_trace_trygetnext_event(trid, &info, buf, sizeof buf, &len, &unavailable),
	              EINVAL);
	ck_assert_err(posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable),
	              EINVAL);
	ck_assert_err(posix_trace_timedgetnext_event(trid, &info, buf, sizeof buf, &len,
	                                             &unavailable, &abstime),
	              EINVAL);
	ck_assert_err(posix_trace_eventid_get_name(trid, POSIX_TRACE_START, name), EINVAL);
	ck_assert_err(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable), EINVAL);
	ck_assert_err(posix_trace_eventtypelist_rewind(trid), EINVAL);
	ck_assert_err(posix_trace_trid_eventid_open(trid, "stream_bad_trid", &id), EINVAL);
	ck_assert_err(posix_trace_shutdown(trid), EINVAL);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}

/* A trace point inside a known function: prog address must point into it.
 * Called through a volatile pointer so the compiler can neither inline nor
 * clone it; the volatile store after the call prevents a tail call. */
static volatile int sink;

__attribute__((noinline)) static void trace_point_here(trace_event_id_t id)
{
	posix_trace_event(id, NULL, 0);
	sink++;
}

__attribute__((noinline)) static void start_here(trace_id_t trid)
{
	ck_assert_ok(posix_trace_start(trid));
	sink++;
}

/* ---- posix_trace_create ------------------------------------------------- */

START_TEST(create_with_null_attr_uses_defaults)
{
	trace_id_t trid = pt_create_default();
	trace_attr_t attr;
	char name[TRACE_NAME_MAX];
	size_t sz;
	int v;

	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getname(&attr, name));
	ck_assert_str_eq(name, "");
	ck_assert_ok(posix_trace_attr_getgenversion(&attr, name));
	ck_assert_str_eq(name, PT_TEST_GENVERSION);
	ck_assert_ok(posix_trace_attr_getstreamsize(&attr, &sz));
	ck_assert_uint_eq(sz, 4194304);
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&attr, &sz));
	ck_assert_uint_eq(sz, 1024);
	ck_assert_ok(posix_trace_attr_getstreamfullpolicy(&attr, &v));
	ck_assert_int_eq(v, POSIX_TRACE_LOOP);
	ck_assert_ok(posix_trace_attr_getinherited(&attr, &v));
	ck_assert_int_eq(v, POSIX_TRACE_CLOSE_FOR_CHILD);
	ck_assert_ok(posix_trace_attr_getlogsize(&attr, &sz));
	ck_assert_uint_eq(sz, 67108864);
	ck_assert_ok(posix_trace_attr_getlogfullpolicy(&attr, &v));
	ck_assert_int_eq(v, POSIX_TRACE_LOOP);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

START_TEST(create_pid_zero_traces_caller)
{
	trace_id_t trid = pt_create_started();
	trace_event_id_t id = user_id("create_pid_zero");
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(pt_count_id(got, n, id), 1);
}
END_TEST

START_TEST(create_own_pid_traces_caller)
{
	trace_id_t trid;
	trace_event_id_t id = user_id("create_own_pid");
	ck_assert_ok(posix_trace_create(getpid(), NULL, &trid));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(pt_count_id(got, n, id), 1);
}
END_TEST

START_TEST(create_two_streams_gives_distinct_trids)
{
	trace_id_t a = pt_create_default(), b = pt_create_default();
	ck_assert(a != b);
}
END_TEST

START_TEST(create_reaped_child_pid_is_esrch)
{
	trace_id_t trid;
	ck_assert_err(posix_trace_create(pt_gone_pid(), NULL, &trid), ESRCH);
}
END_TEST

START_TEST(create_negative_pid_is_esrch)
{
	trace_id_t trid;
	ck_assert_err(posix_trace_create(-5, NULL, &trid), ESRCH);
}
END_TEST

/* Another live process of the same user may be traced (cross-process
 * tracing; its own tests are in t_xproc). */
START_TEST(create_parent_pid_succeeds)
{
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(getppid(), NULL, &trid));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(create_sleeping_child_pid_succeeds)
{
	trace_id_t trid;
	pid_t child = pt_fork();
	if (child == 0) {
		sleep(30);
		_exit(0);
	}
	int rc = posix_trace_create(child, NULL, &trid);
	if (rc == 0)
		rc = posix_trace_shutdown(trid);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ck_assert_ok(rc);
}
END_TEST

START_TEST(create_uninitialised_attr_is_einval)
{
	trace_attr_t attr;
	trace_id_t trid;
	memset(&attr, 0, sizeof attr);
	ck_assert_err(posix_trace_create(0, &attr, &trid), EINVAL);
}
END_TEST

START_TEST(create_destroyed_attr_is_einval)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_err(posix_trace_create(0, &attr, &trid), EINVAL);
}
END_TEST

START_TEST(create_null_trid_is_einval)
{
	ck_assert_err(posix_trace_create(0, NULL, NULL), EINVAL);
}
END_TEST

START_TEST(create_flush_policy_without_log_is_einval)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH));
	ck_assert_err(posix_trace_create(0, &attr, &trid), EINVAL);
}
END_TEST

START_TEST(create_beyond_trace_sys_max_is_eagain)
{
	trace_id_t trid[TRACE_SYS_MAX], extra;
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		ck_assert_ok(posix_trace_create(0, NULL, &trid[i]));
	ck_assert_err(posix_trace_create(0, NULL, &extra), EAGAIN);
}
END_TEST

START_TEST(create_at_limit_succeeds_after_one_shutdown)
{
	trace_id_t trid[TRACE_SYS_MAX], extra;
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		ck_assert_ok(posix_trace_create(0, NULL, &trid[i]));
	ck_assert_err(posix_trace_create(0, NULL, &extra), EAGAIN);
	ck_assert_ok(posix_trace_shutdown(trid[10]));
	ck_assert_ok(posix_trace_create(0, NULL, &extra));
	ck_assert_err(posix_trace_create(0, NULL, &trid[10]), EAGAIN);
}
END_TEST

/* The writers of the slot-reuse case: each round, 100 events whose data
 * say the round and their rank, posted when told to. */
struct reuse_writer {
	trace_event_id_t id;
	sem_t go, done;
};

static void post_round(trace_event_id_t id, uint64_t base)
{
	for (uint64_t i = 0; i < 100; i++) {
		uint64_t v = base + i;
		posix_trace_event(id, &v, sizeof v);
	}
}

static void *reuse_thread(void *arg)
{
	struct reuse_writer *w = arg;
	for (uint64_t round = 0; round < 2; round++) {
		sem_wait(&w->go);
		post_round(w->id, round * 1000 + 500);
		sem_post(&w->done);
	}
	return NULL;
}

/* A thread that recorded into a stream records into the next stream its
 * process creates in the same slot (the lowest free one, which the
 * shutdown freed): the calling thread's 100 events and those of a thread
 * that lived through the shutdown are all in the new stream, in order.
 * The recording path tests no lane generation: this holds only because
 * the shutdown leaves every thread's lane in that slot without room. */
START_TEST(threads_record_into_a_new_stream_in_a_reused_slot)
{
	struct reuse_writer w = {.id = user_id("stream_slot_reuse")};
	pthread_t th;
	ck_assert_int_eq(sem_init(&w.go, 0, 0), 0);
	ck_assert_int_eq(sem_init(&w.done, 0, 0), 0);
	ck_assert_int_eq(pthread_create(&th, NULL, reuse_thread, &w), 0);
	for (uint64_t round = 0; round < 2; round++) {
		trace_id_t trid = pt_create_default();
		ck_assert_ok(posix_trace_start(trid));
		post_round(w.id, round * 1000);
		sem_post(&w.go);
		sem_wait(&w.done);
		int n = pt_drain_user(trid, got, MAX_EVENTS);
		ck_assert_int_eq(n, 200);
		uint64_t next_mine = round * 1000, next_its = round * 1000 + 500;
		for (int i = 0; i < n; i++) {
			uint64_t v;
			ck_assert_uint_eq(got[i].len, sizeof v);
			memcpy(&v, got[i].data, sizeof v);
			int mine = pthread_equal(got[i].info.posix_thread_id, pthread_self());
			ck_assert_uint_eq(v, mine ? next_mine++ : next_its++);
		}
		ck_assert_uint_eq(next_mine, round * 1000 + 100);
		ck_assert_uint_eq(next_its, round * 1000 + 600);
		ck_assert_ok(posix_trace_shutdown(trid));
	}
	ck_assert_int_eq(pthread_join(th, NULL), 0);
}
END_TEST

START_TEST(new_stream_is_suspended_not_full_no_overrun)
{
	struct posix_trace_status_info st = pt_status(pt_create_default());
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
}
END_TEST

START_TEST(new_stream_log_status_fields)
{
	struct posix_trace_status_info st = pt_status(pt_create_default());
	ck_assert_int_eq(st.posix_stream_flush_status, POSIX_TRACE_NOT_FLUSHING);
	ck_assert_int_eq(st.posix_stream_flush_error, 0);
	ck_assert_int_eq(st.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_int_eq(st.posix_log_full_status, POSIX_TRACE_NOT_FULL);
}
END_TEST

START_TEST(new_stream_has_no_events)
{
	trace_id_t trid = pt_create_default();
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 0);
}
END_TEST

/* ---- posix_trace_start / posix_trace_stop ------------------------------- */

START_TEST(start_records_start_event_with_empty_filter_data)
{
	trace_event_set_t empty;
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_eventset_empty(&empty));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[0].len, sizeof(trace_event_set_t));
	ck_assert_int_eq(got[0].info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_mem_eq(got[0].data, &empty, sizeof empty);
}
END_TEST

START_TEST(start_event_has_caller_pid_and_thread)
{
	trace_id_t trid = pt_create_started();
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 1);
	ck_assert_int_eq(got[0].info.posix_pid, getpid());
	ck_assert(pthread_equal(got[0].info.posix_thread_id, pthread_self()));
}
END_TEST

START_TEST(start_event_prog_address_is_in_caller)
{
	void (*volatile fn)(trace_id_t) = start_here;
	trace_id_t trid = pt_create_default();
	fn(trid);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 1);
	uintptr_t pc = (uintptr_t)got[0].info.posix_prog_address;
	uintptr_t lo = (uintptr_t)fn;
	ck_assert_msg(pc > lo && pc < lo + 4096, "prog address %p not inside start_here (%p)",
	              got[0].info.posix_prog_address, (void *)lo);
}
END_TEST

START_TEST(start_sets_status_running)
{
	struct posix_trace_status_info st = pt_status(pt_create_started());
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
}
END_TEST

START_TEST(start_when_running_records_no_second_start)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_start(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_START), 1);
	ck_assert_int_eq(pt_status(trid).posix_stream_status, POSIX_TRACE_RUNNING);
}
END_TEST

START_TEST(stop_records_stop_event_with_int_zero)
{
	trace_id_t trid = pt_create_started();
	int zero = 0;
	ck_assert_ok(posix_trace_stop(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_STOP);
	ck_assert_uint_eq(got[1].len, sizeof(int));
	ck_assert_mem_eq(got[1].data, &zero, sizeof zero);
}
END_TEST

START_TEST(stop_event_has_caller_pid_and_thread)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	ck_assert_int_eq(got[1].info.posix_pid, getpid());
	ck_assert(pthread_equal(got[1].info.posix_thread_id, pthread_self()));
}
END_TEST

START_TEST(stop_sets_status_suspended)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_stop(trid));
	struct posix_trace_status_info st = pt_status(trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
}
END_TEST

START_TEST(stop_when_suspended_records_nothing)
{
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 0);
	ck_assert_int_eq(pt_status(trid).posix_stream_status, POSIX_TRACE_SUSPENDED);
}
END_TEST

START_TEST(second_stop_records_no_second_stop)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_ok(posix_trace_stop(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_STOP), 1);
}
END_TEST

START_TEST(events_before_start_are_not_recorded)
{
	trace_event_id_t id = user_id("before_start");
	trace_id_t trid = pt_create_default();
	posix_trace_event(id, "x", 1);
	ck_assert_ok(posix_trace_start(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
}
END_TEST

START_TEST(events_after_stop_are_not_recorded)
{
	trace_event_id_t id = user_id("after_stop");
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_stop(trid));
	posix_trace_event(id, "x", 1);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(pt_count_id(got, n, id), 0);
}
END_TEST

START_TEST(restart_after_stop_records_start_and_events)
{
	trace_event_id_t id = user_id("restart");
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 4);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_STOP);
	ck_assert_uint_eq(got[2].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[3].info.posix_event_id, id);
}
END_TEST

/* ---- posix_trace_event -------------------------------------------------- */

START_TEST(event_has_id_pid_and_thread)
{
	trace_event_id_t id = user_id("fields");
	trace_id_t trid = pt_create_started();
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
	ck_assert_int_eq(got[1].info.posix_pid, getpid());
	ck_assert(pthread_equal(got[1].info.posix_thread_id, pthread_self()));
}
END_TEST

START_TEST(event_prog_address_is_in_calling_function)
{
	void (*volatile fn)(trace_event_id_t) = trace_point_here;
	trace_event_id_t id = user_id("prog_address");
	trace_id_t trid = pt_create_started();
	fn(id);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	uintptr_t pc = (uintptr_t)got[1].info.posix_prog_address;
	uintptr_t lo = (uintptr_t)fn;
	ck_assert_msg(pc > lo && pc < lo + 4096, "prog address %p not inside trace_point_here (%p)",
	              got[1].info.posix_prog_address, (void *)lo);
}
END_TEST

static void *post_from_thread(void *arg)
{
	posix_trace_event(*(trace_event_id_t *)arg, NULL, 0);
	return NULL;
}

START_TEST(event_from_other_thread_has_that_thread_id)
{
	trace_event_id_t id = user_id("other_thread");
	trace_id_t trid = pt_create_started();
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, post_from_thread, &id), 0);
	ck_assert_int_eq(pthread_join(th, NULL), 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
	ck_assert(pthread_equal(got[1].info.posix_thread_id, th));
	ck_assert(!pthread_equal(got[1].info.posix_thread_id, pthread_self()));
}
END_TEST

START_TEST(events_are_read_in_recording_order)
{
	trace_event_id_t id = user_id("order");
	trace_id_t trid = pt_create_started();
	for (int i = 0; i < 50; i++)
		posix_trace_event(id, &i, sizeof i);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 51);
	for (int i = 0; i < 50; i++) {
		int v;
		ck_assert_uint_eq(got[i + 1].len, sizeof v);
		memcpy(&v, got[i + 1].data, sizeof v);
		ck_assert_int_eq(v, i);
	}
}
END_TEST

START_TEST(event_timestamps_are_non_decreasing)
{
	trace_event_id_t id = user_id("timestamps");
	trace_id_t trid = pt_create_started();
	for (int i = 0; i < 100; i++)
		posix_trace_event(id, NULL, 0);
	ck_assert_ok(posix_trace_stop(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 102);
	for (int i = 1; i < n; i++)
		ck_assert_int_ge(pt_ns(&got[i].info.posix_timestamp),
		                 pt_ns(&got[i - 1].info.posix_timestamp));
}
END_TEST

START_TEST(event_timestamp_is_close_to_realtime)
{
	trace_event_id_t id = user_id("realtime");
	trace_id_t trid = pt_create_started();
	int64_t before = pt_realtime_ns();
	posix_trace_event(id, NULL, 0);
	int64_t after = pt_realtime_ns();
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	int64_t ts = pt_ns(&got[1].info.posix_timestamp);
	ck_assert_int_ge(got[1].info.posix_timestamp.tv_nsec, 0);
	ck_assert_int_lt(got[1].info.posix_timestamp.tv_nsec, 1000000000);
	ck_assert_int_ge(ts, before - 1000000000);
	ck_assert_int_le(ts, after + 1000000000);
}
END_TEST

START_TEST(event_data_round_trips)
{
	unsigned char payload[300];
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (unsigned char)(i * 7 + 1);
	trace_event_id_t id = user_id("data");
	trace_id_t trid = pt_create_started();
	posix_trace_event(id, payload, sizeof payload);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	ck_assert_uint_eq(got[1].len, sizeof payload);
	ck_assert_int_eq(got[1].info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_mem_eq(got[1].data, payload, sizeof payload);
}
END_TEST

static trace_id_t create_with_max_data(size_t max)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.max_data = max});
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

START_TEST(event_data_longer_than_max_is_truncated_record)
{
	unsigned char payload[100];
	for (size_t i = 0; i < sizeof payload; i++)
		payload[i] = (unsigned char)(200 - i);
	trace_event_id_t id = user_id("truncated");
	trace_id_t trid = create_with_max_data(16);
	posix_trace_event(id, payload, sizeof payload);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	ck_assert_uint_eq(got[1].len, 16);
	ck_assert_int_eq(got[1].info.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);
	ck_assert_mem_eq(got[1].data, payload, 16);
}
END_TEST

START_TEST(event_data_of_exactly_max_is_not_truncated)
{
	unsigned char payload[16] = "0123456789abcdef";
	trace_event_id_t id = user_id("exact_max");
	trace_id_t trid = create_with_max_data(16);
	posix_trace_event(id, payload, sizeof payload);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	ck_assert_uint_eq(got[1].len, 16);
	ck_assert_int_eq(got[1].info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_mem_eq(got[1].data, payload, 16);
}
END_TEST

START_TEST(event_ids_outside_user_range_are_ignored)
{
	static const trace_event_id_t bad[] = {0, POSIX_TRACE_START, POSIX_TRACE_STOP,
	                                       POSIX_TRACE_FILTER, POSIX_TRACE_OVERFLOW,
	                                       POSIX_TRACE_ERROR, 9, 31, 1024, 1025, 5000,
	                                       0xffffffffu};
	trace_event_id_t marker = user_id("marker");
	trace_id_t trid = pt_create_started();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		posix_trace_event(bad[i], "bad", 3);
	posix_trace_event(marker, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[1].info.posix_event_id, marker);
}
END_TEST

START_TEST(event_unnamed_user_event_is_recorded)
{
	trace_id_t trid = pt_create_started();
	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, "u", 1);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_UNNAMED_USEREVENT);
	ck_assert_uint_eq(got[1].len, 1);
}
END_TEST

START_TEST(event_with_null_data_has_length_zero)
{
	trace_event_id_t id = user_id("null_data");
	trace_id_t trid = pt_create_started();
	posix_trace_event(id, NULL, 10);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
	ck_assert_uint_eq(got[1].len, 0);
}
END_TEST

START_TEST(event_without_any_stream_has_no_effect)
{
	trace_event_id_t id = user_id("no_stream");
	posix_trace_event(id, "abc", 3);
	trace_id_t trid = pt_create_started();
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 1);
}
END_TEST

START_TEST(event_lands_in_every_running_stream)
{
	trace_event_id_t id = user_id("several");
	trace_id_t trid[3];
	for (int i = 0; i < 3; i++)
		trid[i] = pt_create_started();
	posix_trace_event(id, "abc", 3);
	for (int i = 0; i < 3; i++) {
		int n = pt_drain(trid[i], got, MAX_EVENTS);
		ck_assert_int_eq(n, 2);
		ck_assert_uint_eq(got[1].info.posix_event_id, id);
		ck_assert_uint_eq(got[1].len, 3);
		ck_assert_mem_eq(got[1].data, "abc", 3);
	}
}
END_TEST

START_TEST(event_skips_suspended_stream_of_several)
{
	trace_event_id_t id = user_id("suspended_one");
	trace_id_t running = pt_create_started(), suspended = pt_create_default();
	posix_trace_event(id, NULL, 0);
	ck_assert_int_eq(pt_count_id(got, pt_drain(running, got, MAX_EVENTS), id), 1);
	ck_assert_int_eq(pt_drain(suspended, got, MAX_EVENTS), 0);
}
END_TEST

/* ---- posix_trace_get_attr ------------------------------------------------ */

static trace_id_t create_named(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setname(&attr, "my stream"));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 65536));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, 200));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_UNTIL_FULL));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return trid;
}

START_TEST(get_attr_returns_creation_attributes)
{
	trace_id_t trid = create_named();
	trace_attr_t attr;
	char name[TRACE_NAME_MAX];
	size_t sz;
	int v;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getname(&attr, name));
	ck_assert_str_eq(name, "my stream");
	ck_assert_ok(posix_trace_attr_getstreamsize(&attr, &sz));
	ck_assert_uint_eq(sz, 65536);
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&attr, &sz));
	ck_assert_uint_eq(sz, 200);
	ck_assert_ok(posix_trace_attr_getstreamfullpolicy(&attr, &v));
	ck_assert_int_eq(v, POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_attr_getinherited(&attr, &v));
	ck_assert_int_eq(v, POSIX_TRACE_CLOSE_FOR_CHILD);
}
END_TEST

START_TEST(get_attr_creation_time_is_realtime_at_create)
{
	trace_attr_t attr;
	struct timespec created;
	int64_t before = pt_realtime_ns();
	trace_id_t trid = pt_create_default();
	int64_t after = pt_realtime_ns();
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getcreatetime(&attr, &created));
	ck_assert_int_ge(pt_ns(&created), before);
	ck_assert_int_le(pt_ns(&created), after);
}
END_TEST

START_TEST(get_attr_genversion_and_clock_resolution)
{
	trace_attr_t attr;
	struct timespec res, mono;
	char gen[TRACE_NAME_MAX];
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getgenversion(&attr, gen));
	ck_assert_str_eq(gen, PT_TEST_GENVERSION);
	ck_assert_ok(posix_trace_attr_getclockres(&attr, &res));
	ck_assert_int_eq(clock_getres(CLOCK_MONOTONIC, &mono), 0);
	ck_assert_int_eq(res.tv_sec, mono.tv_sec);
	ck_assert_int_eq(res.tv_nsec, mono.tv_nsec);
}
END_TEST

START_TEST(attr_changed_after_create_does_not_affect_stream)
{
	trace_attr_t attr, out;
	trace_id_t trid;
	char name[TRACE_NAME_MAX];
	size_t sz;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setname(&attr, "before"));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, 64));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_attr_setname(&attr, "after"));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, 8));
	ck_assert_ok(posix_trace_attr_init(&out));
	ck_assert_ok(posix_trace_get_attr(trid, &out));
	ck_assert_ok(posix_trace_attr_getname(&out, name));
	ck_assert_str_eq(name, "before");
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&out, &sz));
	ck_assert_uint_eq(sz, 64);
}
END_TEST

START_TEST(attr_destroyed_after_create_does_not_affect_stream)
{
	unsigned char payload[40] = {1, 2, 3};
	trace_event_id_t id = user_id("destroyed_attr");
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, 32));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(id, payload, sizeof payload);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 2);
	ck_assert_uint_eq(got[1].len, 32);
	ck_assert_int_eq(got[1].info.posix_truncation_status, POSIX_TRACE_TRUNCATED_RECORD);
}
END_TEST

START_TEST(get_attr_null_attr_is_einval)
{
	ck_assert_err(posix_trace_get_attr(pt_create_default(), NULL), EINVAL);
}
END_TEST

/* ---- posix_trace_get_status ---------------------------------------------- */

START_TEST(get_status_null_statusinfo_is_einval)
{
	ck_assert_err(posix_trace_get_status(pt_create_default(), NULL), EINVAL);
}
END_TEST

START_TEST(until_full_stream_stops_itself_when_full)
{
	trace_event_id_t id = user_id("fill_stop");
	trace_id_t trid = create_small(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(trid));
	struct posix_trace_status_info st = fill_until_full(trid, id);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
}
END_TEST

START_TEST(get_status_reports_overrun_once_then_resets_it)
{
	trace_event_id_t id = user_id("overrun");
	trace_id_t trid = create_small(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(trid));
	struct posix_trace_status_info st = fill_until_full(trid, id);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	st = pt_status(trid);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
}
END_TEST

START_TEST(get_status_lost_events_counted_then_reset)
{
	trace_event_id_t id = user_id("lost");
	trace_id_t trid = create_small(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(trid));
	(void)fill_until_full(trid, id);
	for (int i = 0; i < 5; i++)
		posix_trace_event(id, NULL, 0);
	struct posix_trace_status_info st = pt_status(trid);
	ck_assert_uint_eq(st.posixtrace_lost_events, 5);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	ck_assert_uint_eq(pt_status(trid).posixtrace_lost_events, 0);
}
END_TEST

START_TEST(start_on_full_until_full_stream_changes_nothing)
{
	trace_event_id_t id = user_id("start_full");
	trace_id_t trid = create_small(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(trid));
	(void)fill_until_full(trid, id);
	ck_assert_ok(posix_trace_start(trid));
	struct posix_trace_status_info st = pt_status(trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_FULL);
}
END_TEST

/* ---- posix_trace_clear ---------------------------------------------------- */

START_TEST(clear_discards_recorded_events)
{
	trace_event_id_t id = user_id("clear_gone");
	trace_id_t trid = pt_create_started();
	for (int i = 0; i < 10; i++)
		posix_trace_event(id, &i, sizeof i);
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 0);
}
END_TEST

START_TEST(clear_keeps_running_stream_running)
{
	trace_event_id_t id = user_id("clear_running");
	trace_id_t trid = pt_create_started();
	posix_trace_event(id, "old", 3);
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_status, POSIX_TRACE_RUNNING);
	posix_trace_event(id, "new", 3);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, id);
	ck_assert_mem_eq(got[0].data, "new", 3);
}
END_TEST

START_TEST(clear_keeps_suspended_stream_suspended)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_status, POSIX_TRACE_SUSPENDED);
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 0);
}
END_TEST

START_TEST(clear_keeps_event_names)
{
	char name[TRACE_EVENT_NAME_MAX + 1];
	trace_id_t trid = pt_create_started();
	trace_event_id_t id = user_id("clear_named");
	trace_event_id_t tid;
	ck_assert_ok(posix_trace_trid_eventid_open(trid, "clear_named_by_trid", &tid));
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_ok(posix_trace_eventid_get_name(trid, id, name));
	ck_assert_str_eq(name, "clear_named");
	ck_assert_ok(posix_trace_eventid_get_name(trid, tid, name));
	ck_assert_str_eq(name, "clear_named_by_trid");
	ck_assert_ok(posix_trace_eventid_get_name(trid, POSIX_TRACE_START, name));
	ck_assert_str_eq(name, "posix_trace_start");
}
END_TEST

START_TEST(clear_makes_full_stream_not_full)
{
	trace_id_t trid = full_until_full_stream(user_id("clear_full"));
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_full_status, POSIX_TRACE_NOT_FULL);
}
END_TEST

/* posix_trace_attr_getstreamfullpolicy, POSIX_TRACE_UNTIL_FULL: the
 * trace system restarts a full stream once it is empty, a START first.
 * A clear empties it: it runs again, and what is read after is that START
 * with the filter the clear emptied, then the next event; nothing of the
 * events the clear dropped (no OVERFLOW, no automatic STOP). */
START_TEST(clear_restarts_stream_stopped_because_full)
{
	trace_event_id_t id = user_id("clear_restarts");
	trace_id_t trid = full_until_full_stream(id);
	trace_event_set_t some;
	ck_assert_ok(posix_trace_eventset_empty(&some));
	ck_assert_ok(posix_trace_eventset_add(POSIX_TRACE_FILTER, &some));
	ck_assert_ok(posix_trace_set_filter(trid, &some, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_clear(trid));
	struct posix_trace_status_info st = pt_status(trid);
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(st.posix_stream_full_status, POSIX_TRACE_NOT_FULL);
	posix_trace_event(id, "new", 3);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	trace_event_set_t empty;
	ck_assert_ok(posix_trace_eventset_empty(&empty));
	ck_assert_uint_eq(got[0].len, sizeof empty);
	ck_assert_mem_eq(got[0].data, &empty, sizeof empty);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
	ck_assert_mem_eq(got[1].data, "new", 3);
}
END_TEST

/* A stream full and then stopped by hand (which changes nothing of a full
 * stream, posix_trace_stop) is restarted by the clear all the same; one
 * stopped by hand before it filled stays stopped (the case above it). */
START_TEST(clear_restarts_full_stream_stop_left_alone)
{
	trace_id_t trid = full_until_full_stream(user_id("clear_full_stop"));
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_full_status, POSIX_TRACE_FULL);
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_status, POSIX_TRACE_SUSPENDED);
}
END_TEST

START_TEST(clear_resets_overrun_status)
{
	trace_event_id_t id = user_id("clear_overrun");
	trace_id_t trid = create_small(POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_start(trid));
	(void)fill_until_full(trid, id);
	posix_trace_event(id, NULL, 0); /* lost: overrun again */
	ck_assert_ok(posix_trace_clear(trid));
	ck_assert_int_eq(pt_status(trid).posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
}
END_TEST

/* ---- posix_trace_shutdown and invalid trids ------------------------------ */

START_TEST(shutdown_suspended_stream_succeeds)
{
	ck_assert_ok(posix_trace_shutdown(pt_create_default()));
}
END_TEST

START_TEST(shutdown_running_stream_with_unread_events_succeeds)
{
	trace_event_id_t id = user_id("unread");
	trace_id_t trid = pt_create_started();
	for (int i = 0; i < 10; i++)
		posix_trace_event(id, &i, sizeof i);
	ck_assert_ok(posix_trace_shutdown(trid));
	posix_trace_event(id, NULL, 0); /* no stream left: no effect, no crash */
}
END_TEST

START_TEST(shutdown_trid_is_invalid_afterwards)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posix_trace_shutdown(trid));
	assert_trid_rejected(trid);
}
END_TEST

START_TEST(shutdown_leaves_other_streams_working)
{
	trace_event_id_t id = user_id("other_streams");
	trace_id_t a = pt_create_started(), b = pt_create_started();
	ck_assert_ok(posix_trace_shutdown(a));
	posix_trace_event(id, NULL, 0);
	int n = pt_drain(b, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, id);
}
END_TEST

START_TEST(trid_zero_is_rejected)
{
	(void)pt_create_default();
	assert_trid_rejected(0);
}
END_TEST

START_TEST(trid_12345_is_rejected)
{
	(void)pt_create_default();
	assert_trid_rejected(12345);
}
END_TEST

START_TEST(trid_all_ones_is_rejected)
{
	(void)pt_create_default();
	assert_trid_rejected(~0UL);
}
END_TEST

static int open_fds(void)
{
	int n = 0;
	for (int fd = 0; fd < 1024; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/* posix_trace_create, ERRORS: ENOMEM, and the failed call leaves nothing
 * open (each of five such calls leaked a descriptor once). */
START_TEST(create_beyond_memory_is_enomem_and_leaks_no_fd)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, (size_t)1 << 40));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	int before = open_fds();
	for (int i = 0; i < 5; i++)
		ck_assert_err(posix_trace_create(0, &attr, &trid), ENOMEM);
	ck_assert_int_eq(open_fds(), before);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("stream");
	TCase *tc;

	tc = pt_tcase(s, "create");
	tcase_add_test(tc, create_with_null_attr_uses_defaults);
	tcase_add_test(tc, create_pid_zero_traces_caller);
	tcase_add_test(tc, create_own_pid_traces_caller);
	tcase_add_test(tc, create_two_streams_gives_distinct_trids);
	tcase_add_test(tc, threads_record_into_a_new_stream_in_a_reused_slot);
	tcase_add_test(tc, create_reaped_child_pid_is_esrch);
	tcase_add_test(tc, create_negative_pid_is_esrch);
	tcase_add_test(tc, create_parent_pid_succeeds);
	tcase_add_test(tc, create_sleeping_child_pid_succeeds);
	tcase_add_test(tc, create_uninitialised_attr_is_einval);
	tcase_add_test(tc, create_destroyed_attr_is_einval);
	tcase_add_test(tc, create_null_trid_is_einval);
	tcase_add_test(tc, create_flush_policy_without_log_is_einval);
	tcase_add_test(tc, create_beyond_memory_is_enomem_and_leaks_no_fd);
	tcase_add_test(tc, create_beyond_trace_sys_max_is_eagain);
	tcase_add_test(tc, create_at_limit_succeeds_after_one_shutdown);
	tcase_add_test(tc, new_stream_is_suspended_not_full_no_overrun);
	tcase_add_test(tc, new_stream_log_status_fields);
	tcase_add_test(tc, new_stream_has_no_events);

	tc = pt_tcase(s, "start_stop");
	tcase_add_test(tc, start_records_start_event_with_empty_filter_data);
	tcase_add_test(tc, start_event_has_caller_pid_and_thread);
	tcase_add_test(tc, start_event_prog_address_is_in_caller);
	tcase_add_test(tc, start_sets_status_running);
	tcase_add_test(tc, start_when_running_records_no_second_start);
	tcase_add_test(tc, stop_records_stop_event_with_int_zero);
	tcase_add_test(tc, stop_event_has_caller_pid_and_thread);
	tcase_add_test(tc, stop_sets_status_suspended);
	tcase_add_test(tc, stop_when_suspended_records_nothing);
	tcase_add_test(tc, second_stop_records_no_second_stop);
	tcase_add_test(tc, events_before_start_are_not_recorded);
	tcase_add_test(tc, events_after_stop_are_not_recorded);
	tcase_add_test(tc, restart_after_stop_records_start_and_events);

	tc = pt_tcase(s, "event");
	tcase_add_test(tc, event_has_id_pid_and_thread);
	tcase_add_test(tc, event_prog_address_is_in_calling_function);
	tcase_add_test(tc, event_from_other_thread_has_that_thread_id);
	tcase_add_test(tc, events_are_read_in_recording_order);
	tcase_add_test(tc, event_timestamps_are_non_decreasing);
	tcase_add_test(tc, event_timestamp_is_close_to_realtime);
	tcase_add_test(tc, event_data_round_trips);
	tcase_add_test(tc, event_data_longer_than_max_is_truncated_record);
	tcase_add_test(tc, event_data_of_exactly_max_is_not_truncated);
	tcase_add_test(tc, event_ids_outside_user_range_are_ignored);
	tcase_add_test(tc, event_unnamed_user_event_is_recorded);
	tcase_add_test(tc, event_with_null_data_has_length_zero);
	tcase_add_test(tc, event_without_any_stream_has_no_effect);
	tcase_add_test(tc, event_lands_in_every_running_stream);
	tcase_add_test(tc, event_skips_suspended_stream_of_several);

	tc = pt_tcase(s, "get_attr");
	tcase_add_test(tc, get_attr_returns_creation_attributes);
	tcase_add_test(tc, get_attr_creation_time_is_realtime_at_create);
	tcase_add_test(tc, get_attr_genversion_and_clock_resolution);
	tcase_add_test(tc, attr_changed_after_create_does_not_affect_stream);
	tcase_add_test(tc, attr_destroyed_after_create_does_not_affect_stream);
	tcase_add_test(tc, get_attr_null_attr_is_einval);

	tc = pt_tcase(s, "get_status");
	tcase_add_test(tc, get_status_null_statusinfo_is_einval);
	tcase_add_test(tc, until_full_stream_stops_itself_when_full);
	tcase_add_test(tc, get_status_reports_overrun_once_then_resets_it);
	tcase_add_test(tc, get_status_lost_events_counted_then_reset);
	tcase_add_test(tc, start_on_full_until_full_stream_changes_nothing);

	tc = pt_tcase(s, "clear");
	tcase_add_test(tc, clear_discards_recorded_events);
	tcase_add_test(tc, clear_keeps_running_stream_running);
	tcase_add_test(tc, clear_keeps_suspended_stream_suspended);
	tcase_add_test(tc, clear_keeps_event_names);
	tcase_add_test(tc, clear_makes_full_stream_not_full);
	tcase_add_test(tc, clear_resets_overrun_status);
	tcase_add_test(tc, clear_restarts_stream_stopped_because_full);
	tcase_add_test(tc, clear_restarts_full_stream_stop_left_alone);

	tc = pt_tcase(s, "shutdown");
	tcase_add_test(tc, shutdown_suspended_stream_succeeds);
	tcase_add_test(tc, shutdown_running_stream_with_unread_events_succeeds);
	tcase_add_test(tc, shutdown_trid_is_invalid_afterwards);
	tcase_add_test(tc, shutdown_leaves_other_streams_working);
	tcase_add_test(tc, trid_zero_is_rejected);
	tcase_add_test(tc, trid_12345_is_rejected);
	tcase_add_test(tc, trid_all_ones_is_rejected);

	return pt_run(s);
}
