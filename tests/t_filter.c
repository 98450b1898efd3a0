/* SPDX-License-Identifier: MIT */
/*
 * t_filter: the trace event type filter of a stream traced in-process.
 *
 * Checks posix_trace_set_filter / posix_trace_get_filter
 * (posix_trace_get_filter, DESCRIPTION): empty filter at creation
 * (posix_trace_create, DESCRIPTION), SET/ADD/SUB semantics, filtered events
 * not recorded (posix_trace_event, DESCRIPTION), the POSIX_TRACE_FILTER system
 * event with old and new sets as data when the filter changes while running,
 * and the event_filter data of POSIX_TRACE_START (XSH 2.11.2, table "Trace and
 * Trace Event Filter Options: System Trace Events").  The contract adds: the
 * filter applies to system event types too.  Events are read back with
 * posix_trace_trygetnext_event.
 */
#include "harness.h"

#include <stdarg.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

#define MAX_EVENTS 128

static struct pt_ev got[MAX_EVENTS]; /* events read back */

/* A set holding exactly the ids given (list terminated by 0). */
static trace_event_set_t set_of(trace_event_id_t first, ...)
{
	trace_event_set_t set;
	va_list ap;
	ck_assert_ok(posix_trace_eventset_empty(&set));
	va_start(ap, first);
	for (trace_event_id_t id = first; id != 0; id = va_arg(ap, trace_event_id_t))
		ck_assert_ok(posix_trace_eventset_add(id, &set));
	va_end(ap);
	return set;
}

static trace_event_set_t empty_set(void)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_empty(&set));
	return set;
}

static trace_event_set_t filter_of(trace_id_t trid)
{
	trace_event_set_t set;
	memset(&set, 0xa5, sizeof set);
	ck_assert_ok(posix_trace_get_filter(trid, &set));
	return set;
}

#define assert_set_eq(a, b) ck_assert_mem_eq(&(a), &(b), sizeof(trace_event_set_t))

/* ---- defaults ------------------------------------------------------------ */

START_TEST(new_stream_filter_is_empty)
{
	trace_event_set_t f = filter_of(pt_create_default()), e = empty_set();
	assert_set_eq(f, e);
	for (trace_event_id_t id = 0; id < 1024; id++) {
		int member = -1;
		ck_assert_ok(posix_trace_eventset_ismember(id, &f, &member));
		ck_assert_int_eq(member, 0);
	}
}
END_TEST

START_TEST(without_filter_every_event_is_recorded)
{
	trace_event_id_t a = pt_event_id("default_a"), b = pt_event_id("default_b");
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(a, NULL, 0);
	posix_trace_event(b, NULL, 0);
	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, NULL, 0);
	ck_assert_ok(posix_trace_stop(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_START), 1);
	ck_assert_int_eq(pt_count_id(got, n, a), 1);
	ck_assert_int_eq(pt_count_id(got, n, b), 1);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_UNNAMED_USEREVENT), 1);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_STOP), 1);
}
END_TEST

/* ---- SET / ADD / SUB ------------------------------------------------------ */

START_TEST(set_eventset_makes_filter_equal_to_set)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 500, 1023, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, s);
}
END_TEST

START_TEST(set_eventset_replaces_previous_filter)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t a = set_of(40, 41, 0), b = set_of(42, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &b, POSIX_TRACE_SET_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, b);
}
END_TEST

START_TEST(set_eventset_with_empty_set_clears_filter)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t a = set_of(40, 41, 0), e = empty_set();
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &e, POSIX_TRACE_SET_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, e);
}
END_TEST

START_TEST(add_eventset_makes_union)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t a = set_of(40, 41, 0), b = set_of(41, 900, POSIX_TRACE_STOP, 0);
	trace_event_set_t want = set_of(40, 41, 900, POSIX_TRACE_STOP, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &b, POSIX_TRACE_ADD_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, want);
}
END_TEST

START_TEST(add_eventset_to_empty_filter_gives_set)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t a = set_of(33, 64, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_ADD_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, a);
}
END_TEST

START_TEST(sub_eventset_removes_members)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t a = set_of(40, 41, 42, 0), b = set_of(41, 42, 0);
	trace_event_set_t want = set_of(40, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &b, POSIX_TRACE_SUB_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, want);
}
END_TEST

START_TEST(sub_eventset_ignores_absent_members)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t a = set_of(40, 41, 0), b = set_of(41, 99, 700, 0);
	trace_event_set_t want = set_of(40, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &b, POSIX_TRACE_SUB_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, want);
}
END_TEST

START_TEST(sub_all_events_empties_filter)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t all, a = set_of(40, POSIX_TRACE_START, 1000, 0), e = empty_set();
	ck_assert_ok(posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS));
	ck_assert_ok(posix_trace_set_filter(trid, &a, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &all, POSIX_TRACE_SUB_EVENTSET));
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, e);
}
END_TEST

/* ---- what gets recorded --------------------------------------------------- */

START_TEST(filtered_user_event_is_not_recorded)
{
	trace_event_id_t a = pt_event_id("filtered_a"), b = pt_event_id("kept_b");
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(a, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(a, "a", 1);
	posix_trace_event(b, "b", 1);
	posix_trace_event(a, "a", 1);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[1].info.posix_event_id, b);
}
END_TEST

START_TEST(event_removed_from_filter_is_recorded_again)
{
	trace_event_id_t a = pt_event_id("unfiltered_again");
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(a, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SUB_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(a, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(pt_count_id(got, n, a), 1);
}
END_TEST

START_TEST(all_events_filter_records_nothing)
{
	trace_event_id_t a = pt_event_id("all_filtered");
	trace_id_t trid = pt_create_default();
	trace_event_set_t all;
	ck_assert_ok(posix_trace_eventset_fill(&all, POSIX_TRACE_ALL_EVENTS));
	ck_assert_ok(posix_trace_set_filter(trid, &all, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(a, NULL, 0);
	posix_trace_event(POSIX_TRACE_UNNAMED_USEREVENT, NULL, 0);
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_int_eq(pt_drain(trid, got, MAX_EVENTS), 0);
}
END_TEST

START_TEST(start_event_data_is_filter_at_start)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 77, 1023, POSIX_TRACE_ERROR, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	ck_assert_uint_eq(got[0].len, sizeof(trace_event_set_t));
	ck_assert_mem_eq(got[0].data, &s, sizeof s);
}
END_TEST

START_TEST(filtering_stop_suppresses_stop_event)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(POSIX_TRACE_STOP, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_stop(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_SUSPENDED);
}
END_TEST

START_TEST(filtering_start_suppresses_start_event)
{
	trace_event_id_t a = pt_event_id("after_hidden_start");
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(POSIX_TRACE_START, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(a, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, a);
}
END_TEST

/* ---- POSIX_TRACE_FILTER event --------------------------------------------- */

START_TEST(filter_change_while_running_records_old_and_new_sets)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t old = set_of(40, 0), add = set_of(50, 0), now = set_of(40, 50, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &old, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_set_filter(trid, &add, POSIX_TRACE_ADD_EVENTSET));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_FILTER);
	ck_assert_uint_eq(got[1].len, 2 * sizeof(trace_event_set_t));
	ck_assert_int_eq(got[1].info.posix_truncation_status, POSIX_TRACE_NOT_TRUNCATED);
	ck_assert_mem_eq(got[1].data, &old, sizeof old);
	ck_assert_mem_eq(got[1].data + sizeof old, &now, sizeof now);
}
END_TEST

START_TEST(filter_event_has_caller_pid_and_thread)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 0);
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_FILTER);
	ck_assert_int_eq(got[1].info.posix_pid, getpid());
	ck_assert(pthread_equal(got[1].info.posix_thread_id, pthread_self()));
}
END_TEST

START_TEST(filter_sub_while_running_records_old_and_new_sets)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t old = set_of(40, 41, 0), sub = set_of(41, 0), now = set_of(40, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &old, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_set_filter(trid, &sub, POSIX_TRACE_SUB_EVENTSET));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_FILTER);
	ck_assert_uint_eq(got[1].len, 2 * sizeof(trace_event_set_t));
	ck_assert_mem_eq(got[1].data, &old, sizeof old);
	ck_assert_mem_eq(got[1].data + sizeof old, &now, sizeof now);
}
END_TEST

START_TEST(filter_set_while_running_records_event_even_if_unchanged)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, POSIX_TRACE_FILTER);
	ck_assert_uint_eq(got[1].len, 2 * sizeof(trace_event_set_t));
	ck_assert_mem_eq(got[1].data, &s, sizeof s);
	ck_assert_mem_eq(got[1].data + sizeof s, &s, sizeof s);
}
END_TEST

START_TEST(filter_change_while_suspended_records_no_filter_event)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_stop(trid));
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SUB_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 3);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_FILTER), 0);
}
END_TEST

START_TEST(filter_change_while_running_takes_effect_immediately)
{
	trace_event_id_t a = pt_event_id("switched_off");
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(a, 0);
	ck_assert_ok(posix_trace_start(trid));
	posix_trace_event(a, "1", 1);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_ADD_EVENTSET));
	posix_trace_event(a, "2", 1);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(got[1].info.posix_event_id, a);
	ck_assert_mem_eq(got[1].data, "1", 1);
	ck_assert_uint_eq(got[2].info.posix_event_id, POSIX_TRACE_FILTER);
}
END_TEST

/* ---- several streams ------------------------------------------------------ */

START_TEST(two_streams_with_different_filters_get_different_events)
{
	trace_event_id_t a = pt_event_id("two_a"), b = pt_event_id("two_b");
	trace_id_t s1 = pt_create_default(), s2 = pt_create_default();
	trace_event_set_t fa = set_of(a, 0), fb = set_of(b, 0);
	ck_assert_ok(posix_trace_set_filter(s1, &fa, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_set_filter(s2, &fb, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(s1));
	ck_assert_ok(posix_trace_start(s2));
	posix_trace_event(a, NULL, 0);
	posix_trace_event(b, NULL, 0);
	int n = pt_drain(s1, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, b);
	n = pt_drain(s2, got, MAX_EVENTS);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(got[1].info.posix_event_id, a);
}
END_TEST

START_TEST(setting_filter_of_one_stream_leaves_other_unchanged)
{
	trace_id_t s1 = pt_create_default(), s2 = pt_create_default();
	trace_event_set_t s = set_of(40, 0), e = empty_set();
	ck_assert_ok(posix_trace_set_filter(s1, &s, POSIX_TRACE_SET_EVENTSET));
	trace_event_set_t f = filter_of(s2);
	assert_set_eq(f, e);
}
END_TEST

/* ---- errors --------------------------------------------------------------- */

START_TEST(set_filter_bad_how_is_einval)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 0);
	ck_assert_err(posix_trace_set_filter(trid, &s, 0), EINVAL);
	ck_assert_err(posix_trace_set_filter(trid, &s, 4), EINVAL);
	ck_assert_err(posix_trace_set_filter(trid, &s, -1), EINVAL);
	ck_assert_err(posix_trace_set_filter(trid, &s, 12345), EINVAL);
}
END_TEST

START_TEST(set_filter_bad_how_leaves_filter_unchanged)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 0), t = set_of(41, 0);
	ck_assert_ok(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET));
	ck_assert_err(posix_trace_set_filter(trid, &t, 0), EINVAL);
	trace_event_set_t f = filter_of(trid);
	assert_set_eq(f, s);
}
END_TEST

START_TEST(set_filter_bad_how_while_running_records_nothing)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = set_of(40, 0);
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_err(posix_trace_set_filter(trid, &s, 99), EINVAL);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(got[0].info.posix_event_id, POSIX_TRACE_START);
}
END_TEST

START_TEST(set_filter_null_set_is_einval)
{
	trace_id_t trid = pt_create_default();
	ck_assert_err(posix_trace_set_filter(trid, NULL, POSIX_TRACE_SET_EVENTSET), EINVAL);
	ck_assert_err(posix_trace_set_filter(trid, NULL, POSIX_TRACE_ADD_EVENTSET), EINVAL);
	ck_assert_err(posix_trace_set_filter(trid, NULL, POSIX_TRACE_SUB_EVENTSET), EINVAL);
}
END_TEST

START_TEST(get_filter_null_set_is_einval)
{
	ck_assert_err(posix_trace_get_filter(pt_create_default(), NULL), EINVAL);
}
END_TEST

START_TEST(filter_functions_reject_never_valid_trids)
{
	static const trace_id_t bad[] = {0, 12345, ~0UL};
	trace_event_set_t s = empty_set();
	(void)pt_create_default();
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_err(posix_trace_set_filter(bad[i], &s, POSIX_TRACE_SET_EVENTSET), EINVAL);
		ck_assert_err(posix_trace_get_filter(bad[i], &s), EINVAL);
	}
}
END_TEST

START_TEST(filter_functions_reject_shutdown_trid)
{
	trace_id_t trid = pt_create_default();
	trace_event_set_t s = empty_set();
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_err(posix_trace_set_filter(trid, &s, POSIX_TRACE_SET_EVENTSET), EINVAL);
	ck_assert_err(posix_trace_get_filter(trid, &s), EINVAL);
}
END_TEST

/* ---- clear ----------------------------------------------------------------- */

/* posix_trace_clear, DESCRIPTION: the stream is reinitialised "as if it were returning
 * from posix_trace_create()", whose filter is empty; names are kept. */
START_TEST(clear_empties_filter_and_records_filtered_ids_again)
{
	trace_event_id_t a = pt_event_id("clear_a");
	trace_id_t trid = pt_create_default();
	trace_event_set_t f = set_of(a, 0), e = empty_set();
	ck_assert_ok(posix_trace_set_filter(trid, &f, POSIX_TRACE_SET_EVENTSET));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_ok(posix_trace_clear(trid));
	trace_event_set_t after = filter_of(trid);
	assert_set_eq(after, e);
	posix_trace_event(a, NULL, 0);
	int n = pt_drain(trid, got, MAX_EVENTS);
	ck_assert_int_eq(pt_count_id(got, n, a), 1);
	ck_assert_int_eq(pt_count_id(got, n, POSIX_TRACE_FILTER), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("filter");
	TCase *tc;

	tc = pt_tcase(s, "defaults");
	tcase_add_test(tc, new_stream_filter_is_empty);
	tcase_add_test(tc, without_filter_every_event_is_recorded);

	tc = pt_tcase(s, "how");
	tcase_add_test(tc, set_eventset_makes_filter_equal_to_set);
	tcase_add_test(tc, set_eventset_replaces_previous_filter);
	tcase_add_test(tc, set_eventset_with_empty_set_clears_filter);
	tcase_add_test(tc, add_eventset_makes_union);
	tcase_add_test(tc, add_eventset_to_empty_filter_gives_set);
	tcase_add_test(tc, sub_eventset_removes_members);
	tcase_add_test(tc, sub_eventset_ignores_absent_members);
	tcase_add_test(tc, sub_all_events_empties_filter);

	tc = pt_tcase(s, "recording");
	tcase_add_test(tc, filtered_user_event_is_not_recorded);
	tcase_add_test(tc, event_removed_from_filter_is_recorded_again);
	tcase_add_test(tc, all_events_filter_records_nothing);
	tcase_add_test(tc, start_event_data_is_filter_at_start);
	tcase_add_test(tc, filtering_stop_suppresses_stop_event);
	tcase_add_test(tc, filtering_start_suppresses_start_event);

	tc = pt_tcase(s, "filter_event");
	tcase_add_test(tc, filter_change_while_running_records_old_and_new_sets);
	tcase_add_test(tc, filter_event_has_caller_pid_and_thread);
	tcase_add_test(tc, filter_sub_while_running_records_old_and_new_sets);
	tcase_add_test(tc, filter_set_while_running_records_event_even_if_unchanged);
	tcase_add_test(tc, filter_change_while_suspended_records_no_filter_event);
	tcase_add_test(tc, filter_change_while_running_takes_effect_immediately);

	tc = pt_tcase(s, "streams");
	tcase_add_test(tc, two_streams_with_different_filters_get_different_events);
	tcase_add_test(tc, setting_filter_of_one_stream_leaves_other_unchanged);

	tc = pt_tcase(s, "errors");
	tcase_add_test(tc, set_filter_bad_how_is_einval);
	tcase_add_test(tc, set_filter_bad_how_leaves_filter_unchanged);
	tcase_add_test(tc, set_filter_bad_how_while_running_records_nothing);
	tcase_add_test(tc, set_filter_null_set_is_einval);
	tcase_add_test(tc, get_filter_null_set_is_einval);
	tcase_add_test(tc, filter_functions_reject_never_valid_trids);
	tcase_add_test(tc, filter_functions_reject_shutdown_trid);
	tcase_add_test(tc, clear_empties_filter_and_records_filtered_ids_again);

	return pt_run(s);
}
