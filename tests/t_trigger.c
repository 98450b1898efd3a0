/* SPDX-License-Identifier: MIT */
/*
 * t_trigger: triggers (posixtrace_set_trigger, posixtrace_get_trigger in
 * <posixtrace.h>).  An event of a type in a stream's trigger set makes the
 * keeper write what the stream holds into its log, as posix_trace_flush
 * would, between POSIX_TRACE_FLUSH_START and POSIX_TRACE_FLUSH_STOP, the
 * STOP naming the process that posted it: a flight recorder's snapshot of
 * a POSIX_TRACE_LOOP stream, nothing written before it.  Checked in the
 * controller's own process and in a target process, with the trigger's
 * type filtered out (no snapshot), with the errors each function names, and
 * with a writer that posts without pause while triggers fire.
 */
#include "harness.h"
#include "logtest.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SNAPSHOT_WAIT_MS 10000 /* a keeper looks every few ms: only a miss waits this long */

static trace_event_set_t set_of(trace_event_id_t id)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_empty(&set));
	ck_assert_ok(posix_trace_eventset_add(id, &set));
	return set;
}

/* Waits until triggers took `want` snapshots: 1, or 0 at the bound. */
static int wait_snapshots(trace_id_t trid, uint64_t want)
{
	trace_event_set_t set;
	uint64_t got = 0;
	for (int waited = 0; waited < SNAPSHOT_WAIT_MS; waited += 2) {
		ck_assert_ok(posixtrace_get_trigger(trid, &set, &got));
		if (got >= want)
			return 1;
		pt_sleep_ms(2);
	}
	return 0;
}

static off_t file_size(int fd)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	return st.st_size;
}

/* Waits until the log grows past `than`: a snapshot is counted once the
 * keeper has handed it to its writing thread, as an automatic flush is,
 * and is in the file a moment later.  The size, or `than` at the bound. */
static off_t wait_growth(int fd, off_t than)
{
	off_t size = file_size(fd);
	for (int waited = 0; size <= than && waited < SNAPSHOT_WAIT_MS; waited += 2) {
		pt_sleep_ms(2);
		size = file_size(fd);
	}
	return size;
}

/* The log of a shut-down stream, read back from the start. */
static struct lt_evlist read_log(int fd)
{
	trace_id_t rd;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	struct lt_evlist l = lt_read(rd, LT_DATA_BUF);
	ck_assert_ok(posix_trace_close(rd));
	lt_hold_list(&l);
	return l;
}

/* Index of the first event of type id at or after `from`, or l->n. */
static size_t find_id(const struct lt_evlist *l, size_t from, trace_event_id_t id)
{
	while (from < l->n && l->ev[from].info.posix_event_id != id)
		from++;
	return from;
}

/* posixtrace_set_trigger (EINVAL): a NULL set, an identifier that is not an
 * active stream's, a stream without a log; posixtrace_get_trigger (EINVAL):
 * a NULL set, a bad identifier; system event types are not triggers. */
START_TEST(errors_and_system_types)
{
	trace_event_set_t set, got;
	uint64_t snapshots = 99;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_WOPID_EVENTS));
	trace_id_t plain = pt_create_default();
	ck_assert_err(posixtrace_set_trigger(plain, &set), EINVAL);
	ck_assert_err(posixtrace_set_trigger(plain, NULL), EINVAL);
	ck_assert_err(posixtrace_get_trigger(plain, NULL, NULL), EINVAL);
	ck_assert_ok(posix_trace_shutdown(plain));
	ck_assert_err(posixtrace_set_trigger(plain, &set), EINVAL);
	ck_assert_err(posixtrace_get_trigger(plain, &got, NULL), EINVAL);

	trace_id_t trid;
	ck_assert_ok(lt_create_log(lt_new_log_file(), 0, 0, POSIX_TRACE_LOOP, 0, &trid));
	trace_event_id_t boom = pt_event_id("trigger.boom");
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_SYSTEM_EVENTS));
	ck_assert_ok(posix_trace_eventset_add(boom, &set));
	ck_assert_ok(posixtrace_set_trigger(trid, &set));
	ck_assert_ok(posixtrace_get_trigger(trid, &got, &snapshots));
	ck_assert_uint_eq(snapshots, 0);
	for (trace_event_id_t id = 0; id < 1024; id++) {
		int member = -1;
		ck_assert_ok(posix_trace_eventset_ismember(id, &got, &member));
		ck_assert_int_eq(member, id == boom);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* A LOOP stream with a log: nothing is written until the trigger's event
 * is posted; then one snapshot holds every event before it and the
 * trigger's event itself, followed in time by its FLUSH_START and its
 * FLUSH_STOP naming this process; the events after it go to the log with
 * the shutdown's flush. */
START_TEST(trigger_event_takes_a_snapshot)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, 0, 0, POSIX_TRACE_LOOP, 1 << 20, &trid));
	trace_event_id_t a = pt_event_id("trigger.a"), boom = pt_event_id("trigger.boom");
	trace_event_set_t set = set_of(boom);
	ck_assert_ok(posixtrace_set_trigger(trid, &set));
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < 100; i++)
		lt_record_tagged(a, 0, i, sizeof(struct lt_tag));
	pt_sleep_ms(50);
	off_t before = file_size(fd);
	lt_record_tagged(boom, 0, 100, sizeof(struct lt_tag));
	ck_assert_msg(wait_snapshots(trid, 1), "no snapshot within %d ms", SNAPSHOT_WAIT_MS);
	ck_assert_msg(wait_growth(fd, before) > before, "the snapshot wrote nothing (%lld bytes)",
	              (long long)before);
	for (uint32_t i = 101; i < 151; i++)
		lt_record_tagged(a, 0, i, sizeof(struct lt_tag));
	ck_assert_ok(posix_trace_shutdown(trid));

	struct lt_evlist l = read_log(fd);
	size_t trig = find_id(&l, 0, boom);
	size_t start = find_id(&l, 0, POSIX_TRACE_FLUSH_START);
	size_t stop = find_id(&l, start, POSIX_TRACE_FLUSH_STOP);
	ck_assert_uint_lt(trig, start);
	ck_assert_uint_lt(stop, l.n);
	ck_assert_int_eq(l.ev[stop].info.posix_pid, getpid());
	ck_assert_uint_eq(lt_count_id(&l, POSIX_TRACE_FLUSH_START), 2);
	ck_assert_uint_eq(lt_count_id(&l, boom), 1);
	uint32_t next = 0;
	for (size_t i = 0; i < l.n; i++) {
		if (!lt_is_tagged(&l.ev[i]))
			continue;
		struct lt_tag t = lt_tag_of(&l.ev[i]);
		ck_assert_uint_eq(t.seq, next);
		ck_assert(t.seq > 100 ? i > stop : i < start);
		next++;
	}
	ck_assert_uint_eq(next, 151);
}
END_TEST

/* The filter wins: an event of a trigger's type that the filter excludes
 * is not recorded and takes no snapshot. */
START_TEST(filtered_trigger_takes_none)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, 0, 0, POSIX_TRACE_LOOP, 0, &trid));
	trace_event_id_t a = pt_event_id("trigger.a"), boom = pt_event_id("trigger.boom");
	trace_event_set_t set = set_of(boom);
	ck_assert_ok(posixtrace_set_trigger(trid, &set));
	ck_assert_ok(posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	lt_record_tagged(boom, 0, 0, sizeof(struct lt_tag));
	lt_record_tagged(a, 0, 1, sizeof(struct lt_tag));
	/* A look happens within a tick; wait several. */
	pt_sleep_ms(200);
	trace_event_set_t got;
	uint64_t snapshots = 99;
	ck_assert_ok(posixtrace_get_trigger(trid, &got, &snapshots));
	ck_assert_uint_eq(snapshots, 0);
	/* Taken out of the filter, it triggers again. */
	ck_assert_ok(posix_trace_set_filter(trid, &set, POSIX_TRACE_SUB_EVENTSET));
	lt_record_tagged(boom, 0, 2, sizeof(struct lt_tag));
	ck_assert_msg(wait_snapshots(trid, 1), "no snapshot within %d ms", SNAPSHOT_WAIT_MS);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct lt_evlist l = read_log(fd);
	ck_assert_uint_eq(lt_count_id(&l, boom), 1);
	ck_assert_uint_eq(lt_count_id(&l, a), 1);
	ck_assert_uint_eq(lt_count_id(&l, POSIX_TRACE_FLUSH_START), 2);
}
END_TEST

/* A target process posts the trigger's event: the snapshot's FLUSH_STOP
 * names it, and the trigger was given by type name in the stream's own
 * name space (posix_trace_trid_eventid_open). */
START_TEST(trigger_in_a_target_process)
{
	int go[2];
	ck_assert_int_eq(pipe(go), 0);
	pid_t child = pt_fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		trace_event_id_t a, boom;
		if (posix_trace_eventid_open("trigger.a", &a) || posix_trace_eventid_open("trigger.boom", &boom))
			_exit(3);
		for (uint32_t i = 0; i < 10; i++)
			lt_record_tagged(a, 1, i, sizeof(struct lt_tag));
		lt_record_tagged(boom, 1, 10, sizeof(struct lt_tag));
		_exit(read(go[0], &c, 1) == 0 ? 0 : 4);
	}
	pt_track(child);
	close(go[0]);
	int fd = lt_new_log_file();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_LOOP));
	ck_assert_ok(posix_trace_create_withlog(child, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	trace_event_id_t boom;
	ck_assert_ok(posix_trace_trid_eventid_open(trid, "trigger.boom", &boom));
	trace_event_set_t set = set_of(boom);
	ck_assert_ok(posixtrace_set_trigger(trid, &set));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_msg(wait_snapshots(trid, 1), "no snapshot within %d ms", SNAPSHOT_WAIT_MS);
	close(go[1]);
	ck_assert_int_eq(pt_wait_exit(child, 10000), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct lt_evlist l = read_log(fd);
	size_t trig = find_id(&l, 0, boom);
	ck_assert_uint_lt(trig, l.n);
	ck_assert_int_eq(l.ev[trig].info.posix_pid, child);
	size_t stop = find_id(&l, trig, POSIX_TRACE_FLUSH_STOP);
	ck_assert_uint_lt(stop, l.n);
	ck_assert_int_eq(l.ev[stop].info.posix_pid, child);
}
END_TEST

struct flood {
	trace_event_id_t a, boom;
	_Atomic int stop;
	uint32_t posted;
};

static void *flood_main(void *p)
{
	struct flood *f = p;
	while (!atomic_load(&f->stop)) {
		lt_record_tagged(f->a, 2, f->posted, sizeof(struct lt_tag));
		f->posted++;
	}
	return NULL;
}

/* A writer posts without pause into a small LOOP ring while another
 * thread posts an event of ten trigger types, each once the last one's
 * snapshot was taken (ten types: one type takes at most one snapshot per
 * hold-off): ten snapshots, no more, and the writer's events in the log
 * are in order and end with its last one. */
START_TEST(triggers_under_a_running_writer)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, 0, 0, POSIX_TRACE_LOOP, 64 * 1024, &trid));
	struct flood f = {pt_event_id("trigger.a"), pt_event_id("trigger.boom"), 0, 0};
	trace_event_id_t boom[10];
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_empty(&set));
	for (int k = 0; k < 10; k++) {
		char name[32];
		snprintf(name, sizeof name, "trigger.boom%d", k);
		boom[k] = pt_event_id(name);
		ck_assert_ok(posix_trace_eventset_add(boom[k], &set));
	}
	ck_assert_ok(posixtrace_set_trigger(trid, &set));
	ck_assert_ok(posix_trace_start(trid));
	pthread_t w;
	ck_assert_int_eq(pthread_create(&w, NULL, flood_main, &f), 0);
	uint64_t snapshots = 0;
	for (uint32_t k = 0; k < 10; k++) {
		lt_record_tagged(boom[k], 3, k, sizeof(struct lt_tag));
		ck_assert_msg(wait_snapshots(trid, k + 1), "snapshot %u not taken", k + 1);
	}
	atomic_store(&f.stop, 1);
	ck_assert_int_eq(pthread_join(w, NULL), 0);
	trace_event_set_t got;
	ck_assert_ok(posixtrace_get_trigger(trid, &got, &snapshots));
	ck_assert_uint_eq(snapshots, 10);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct lt_evlist l = read_log(fd);
	for (int k = 0; k < 10; k++)
		ck_assert_uint_eq(lt_count_id(&l, boom[k]), 1);
	ck_assert_uint_eq(lt_count_id(&l, POSIX_TRACE_FLUSH_START), 11);
	int64_t last = -1;
	for (size_t i = 0; i < l.n; i++) {
		if (l.ev[i].info.posix_event_id != f.a)
			continue;
		struct lt_tag t = lt_tag_of(&l.ev[i]);
		ck_assert_int_gt((int64_t)t.seq, last);
		last = t.seq;
	}
	ck_assert_int_eq(last, (int64_t)f.posted - 1);
}
END_TEST

/* (security, fourth round, item 7: a traced process that posts its
 * trigger every 256 events took about ten snapshots a second, each up to
 * the ring's size of the log's disk, with no bound.)  A writer posts its
 * trigger's type every 256 events for a second: one type takes at most
 * one snapshot per hold-off (one second, docs/SECURITY.md), so at most
 * 1 + the seconds elapsed; the events that took none are counted in the
 * log's status and read back with posixtrace_log_info. */
static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

START_TEST(trigger_flood_is_held_off)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, 0, 0, POSIX_TRACE_LOOP, 1 << 20, &trid));
	trace_event_id_t a = pt_event_id("trigger.a"), boom = pt_event_id("trigger.boom");
	trace_event_set_t set = set_of(boom);
	ck_assert_ok(posixtrace_set_trigger(trid, &set));
	ck_assert_ok(posix_trace_start(trid));
	uint64_t t0 = mono_ns(), posted = 0, triggers = 0;
	while (mono_ns() - t0 < 1000000000ull) {
		for (int i = 0; i < 255; i++)
			lt_record_tagged(a, 0, (uint32_t)posted++, sizeof(struct lt_tag));
		lt_record_tagged(boom, 0, (uint32_t)triggers++, sizeof(struct lt_tag));
		pt_sleep_ms(1); /* a busy writer, not a spin: the keeper gets its looks */
	}
	/* Whole seconds begun: each lets one more snapshot of the type. */
	uint64_t elapsed_s = (mono_ns() - t0 + 999999999ull) / 1000000000ull;
	trace_event_set_t got;
	uint64_t snapshots = 0;
	ck_assert_ok(posixtrace_get_trigger(trid, &got, &snapshots));
	ck_assert_ok(posix_trace_shutdown(trid));
	trace_id_t rd;
	struct posixtrace_log_info info;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	ck_assert_ok(posixtrace_log_info(rd, &info));
	ck_assert_ok(posix_trace_close(rd));
	fprintf(stderr, "trigger_flood_is_held_off: %llu triggers in %llu s: %llu snapshots, %llu "
	                "suppressed\n",
	        (unsigned long long)triggers, (unsigned long long)elapsed_s,
	        (unsigned long long)snapshots, (unsigned long long)info.posixtrace_triggers_suppressed);
	ck_assert_msg(snapshots >= 1 && snapshots <= 1 + elapsed_s,
	              "%llu triggers in %llu s took %llu snapshots (at most %llu wanted)",
	              (unsigned long long)triggers, (unsigned long long)elapsed_s,
	              (unsigned long long)snapshots, (unsigned long long)(1 + elapsed_s));
	ck_assert_msg(info.posixtrace_triggers_suppressed > 0 &&
	                  info.posixtrace_triggers_suppressed <= triggers,
	              "the log counts %llu suppressed triggers of %llu",
	              (unsigned long long)info.posixtrace_triggers_suppressed,
	              (unsigned long long)triggers);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trigger");
	TCase *tc = pt_tcase(s, "trigger");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, errors_and_system_types);
	tcase_add_test(tc, trigger_event_takes_a_snapshot);
	tcase_add_test(tc, filtered_trigger_takes_none);
	tcase_add_test(tc, trigger_in_a_target_process);
	tcase_add_test(tc, triggers_under_a_running_writer);
	tcase_add_test(tc, trigger_flood_is_held_off);
	return pt_run(s);
}
