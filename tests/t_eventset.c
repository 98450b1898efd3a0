/* SPDX-License-Identifier: MIT */
/*
 * Trace event type sets: posix_trace_eventset_empty, _fill, _add, _del, _ismember.
 *
 * Reference page: posix_trace_eventset_add (all five functions).  Membership of each fill
 * constant per the contract (WOPID = OVERFLOW, RESUME, ERROR; SYSTEM = ids 1..8; ALL =
 * ids 1..8 and 32..1023), add/del idempotence ("shall not be considered an error"),
 * EINVAL for ids >= 1024, NULL pointers and an invalid `what`.
 */
#include <limits.h>

#include "harness.h"

#define N_IDS 1024 /* trace_event_set_t holds ids 0..1023 */

static int is_member(trace_event_id_t id, const trace_event_set_t *set)
{
	int m = -1;
	ck_assert_ok(posix_trace_eventset_ismember(id, set, &m));
	return m != 0;
}

/* Asserts that exactly the ids for which expected(id) is true are members. */
static void assert_membership(const trace_event_set_t *set, int (*expected)(trace_event_id_t),
                              const char *what)
{
	for (trace_event_id_t id = 0; id < N_IDS; id++) {
		int m = is_member(id, set);
		ck_assert_msg(m == expected(id), "%s: id %u is %sa member", what, id, m ? "" : "not ");
	}
}

static int none(trace_event_id_t id) { (void)id; return 0; }
static int wopid(trace_event_id_t id)
{
	return id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_RESUME || id == POSIX_TRACE_ERROR;
}
static int system_ids(trace_event_id_t id) { return id >= 1 && id <= 8; }
static int all_ids(trace_event_id_t id) { return (id >= 1 && id <= 8) || (id >= 32 && id < N_IDS); }
static int only_100(trace_event_id_t id) { return id == 100; }

static void empty_set(trace_event_set_t *set)
{
	ck_assert_ok(posix_trace_eventset_empty(set));
}

/* ---- empty / fill ------------------------------------------------------------------ */

START_TEST(test_empty_has_no_members)
{
	trace_event_set_t set;
	memset(&set, 0xff, sizeof set);
	empty_set(&set);
	assert_membership(&set, none, "empty");
}
END_TEST

START_TEST(test_empty_clears_a_filled_set)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS));
	empty_set(&set);
	assert_membership(&set, none, "empty after fill");
}
END_TEST

START_TEST(test_fill_wopid_is_overflow_resume_error)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_WOPID_EVENTS));
	assert_membership(&set, wopid, "POSIX_TRACE_WOPID_EVENTS");
}
END_TEST

START_TEST(test_fill_system_is_ids_1_to_8)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_SYSTEM_EVENTS));
	assert_membership(&set, system_ids, "POSIX_TRACE_SYSTEM_EVENTS");
}
END_TEST

START_TEST(test_fill_all_is_system_and_user_ids)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS));
	assert_membership(&set, all_ids, "POSIX_TRACE_ALL_EVENTS");
}
END_TEST

START_TEST(test_fill_all_includes_unnamed_user_event)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS));
	ck_assert(is_member(POSIX_TRACE_UNNAMED_USEREVENT, &set));
}
END_TEST

START_TEST(test_fill_replaces_previous_content)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_SYSTEM_EVENTS));
	assert_membership(&set, system_ids, "SYSTEM fill over {100}");
}
END_TEST

static const int bad_what[] = {0, 4, -1, 99, POSIX_TRACE_ALL_EVENTS + 1};

/* Loop test: _i indexes bad_what. */
START_TEST(test_fill_invalid_what_is_einval)
{
	trace_event_set_t set;
	ck_assert_err(posix_trace_eventset_fill(&set, bad_what[_i]), EINVAL);
}
END_TEST

START_TEST(test_fill_null_set_is_einval)
{
	ck_assert_err(posix_trace_eventset_fill(NULL, POSIX_TRACE_ALL_EVENTS), EINVAL);
}
END_TEST

START_TEST(test_empty_null_set_is_einval)
{
	ck_assert_err(posix_trace_eventset_empty(NULL), EINVAL);
}
END_TEST

/* ---- add / del / ismember ----------------------------------------------------------- */

START_TEST(test_add_makes_only_that_id_a_member)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	assert_membership(&set, only_100, "{100}");
}
END_TEST

START_TEST(test_add_every_valid_id)
{
	trace_event_set_t set;
	empty_set(&set);
	for (trace_event_id_t id = 0; id < N_IDS; id++) {
		ck_assert_ok(posix_trace_eventset_add(id, &set));
		ck_assert(is_member(id, &set));
	}
}
END_TEST

START_TEST(test_add_twice_is_not_an_error)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	assert_membership(&set, only_100, "{100} added twice");
}
END_TEST

START_TEST(test_add_twice_then_del_once_removes)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	ck_assert_ok(posix_trace_eventset_del(100, &set));
	ck_assert(!is_member(100, &set));
}
END_TEST

START_TEST(test_del_removes_only_that_id)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_SYSTEM_EVENTS));
	ck_assert_ok(posix_trace_eventset_del(POSIX_TRACE_STOP, &set));
	for (trace_event_id_t id = 0; id < N_IDS; id++)
		ck_assert_int_eq(is_member(id, &set), system_ids(id) && id != POSIX_TRACE_STOP);
}
END_TEST

START_TEST(test_del_absent_is_not_an_error)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_del(100, &set));
	assert_membership(&set, none, "empty after deleting an absent id");
}
END_TEST

START_TEST(test_del_twice_is_not_an_error)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(100, &set));
	ck_assert_ok(posix_trace_eventset_del(100, &set));
	ck_assert_ok(posix_trace_eventset_del(100, &set));
	ck_assert(!is_member(100, &set));
}
END_TEST

START_TEST(test_add_and_del_highest_id_1023)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(N_IDS - 1, &set));
	ck_assert(is_member(N_IDS - 1, &set));
	ck_assert_ok(posix_trace_eventset_del(N_IDS - 1, &set));
	ck_assert(!is_member(N_IDS - 1, &set));
}
END_TEST

START_TEST(test_ismember_writes_zero_for_non_member)
{
	trace_event_set_t set;
	int m = 42;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_ismember(5, &set, &m));
	ck_assert_int_eq(m, 0);
}
END_TEST

START_TEST(test_ismember_writes_non_zero_for_member)
{
	trace_event_set_t set;
	int m = 0;
	empty_set(&set);
	ck_assert_ok(posix_trace_eventset_add(5, &set));
	ck_assert_ok(posix_trace_eventset_ismember(5, &set, &m));
	ck_assert_int_ne(m, 0);
}
END_TEST

START_TEST(test_sets_are_independent_objects)
{
	trace_event_set_t a, b;
	empty_set(&a);
	empty_set(&b);
	ck_assert_ok(posix_trace_eventset_add(100, &a));
	ck_assert(!is_member(100, &b));
}
END_TEST

START_TEST(test_set_copy_keeps_membership)
{
	trace_event_set_t a, b;
	empty_set(&a);
	ck_assert_ok(posix_trace_eventset_add(700, &a));
	b = a;
	ck_assert(is_member(700, &b));
}
END_TEST

static const trace_event_id_t bad_ids[] = {N_IDS, N_IDS + 1, 4096, UINT_MAX};

/* Loop tests: _i indexes bad_ids. */
START_TEST(test_add_id_1024_or_more_is_einval)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_err(posix_trace_eventset_add(bad_ids[_i], &set), EINVAL);
	assert_membership(&set, none, "empty after a failed add");
}
END_TEST

START_TEST(test_del_id_1024_or_more_is_einval)
{
	trace_event_set_t set;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS));
	ck_assert_err(posix_trace_eventset_del(bad_ids[_i], &set), EINVAL);
	assert_membership(&set, all_ids, "ALL after a failed del");
}
END_TEST

START_TEST(test_ismember_id_1024_or_more_is_einval)
{
	trace_event_set_t set;
	int m = 0;
	ck_assert_ok(posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS));
	ck_assert_err(posix_trace_eventset_ismember(bad_ids[_i], &set, &m), EINVAL);
}
END_TEST

START_TEST(test_add_null_set_is_einval)
{
	ck_assert_err(posix_trace_eventset_add(5, NULL), EINVAL);
}
END_TEST

START_TEST(test_del_null_set_is_einval)
{
	ck_assert_err(posix_trace_eventset_del(5, NULL), EINVAL);
}
END_TEST

START_TEST(test_ismember_null_set_is_einval)
{
	int m = 0;
	ck_assert_err(posix_trace_eventset_ismember(5, NULL, &m), EINVAL);
}
END_TEST

START_TEST(test_ismember_null_result_is_einval)
{
	trace_event_set_t set;
	empty_set(&set);
	ck_assert_err(posix_trace_eventset_ismember(5, &set, NULL), EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eventset");
	TCase *tc;
	const int n_bad_ids = (int)(sizeof bad_ids / sizeof bad_ids[0]);

	tc = pt_tcase(s, "empty_fill");
	tcase_add_test(tc, test_empty_has_no_members);
	tcase_add_test(tc, test_empty_clears_a_filled_set);
	tcase_add_test(tc, test_fill_wopid_is_overflow_resume_error);
	tcase_add_test(tc, test_fill_system_is_ids_1_to_8);
	tcase_add_test(tc, test_fill_all_is_system_and_user_ids);
	tcase_add_test(tc, test_fill_all_includes_unnamed_user_event);
	tcase_add_test(tc, test_fill_replaces_previous_content);
	tcase_add_loop_test(tc, test_fill_invalid_what_is_einval, 0,
	                    (int)(sizeof bad_what / sizeof bad_what[0]));
	tcase_add_test(tc, test_fill_null_set_is_einval);
	tcase_add_test(tc, test_empty_null_set_is_einval);

	tc = pt_tcase(s, "add_del_ismember");
	tcase_add_test(tc, test_add_makes_only_that_id_a_member);
	tcase_add_test(tc, test_add_every_valid_id);
	tcase_add_test(tc, test_add_twice_is_not_an_error);
	tcase_add_test(tc, test_add_twice_then_del_once_removes);
	tcase_add_test(tc, test_del_removes_only_that_id);
	tcase_add_test(tc, test_del_absent_is_not_an_error);
	tcase_add_test(tc, test_del_twice_is_not_an_error);
	tcase_add_test(tc, test_add_and_del_highest_id_1023);
	tcase_add_test(tc, test_ismember_writes_zero_for_non_member);
	tcase_add_test(tc, test_ismember_writes_non_zero_for_member);
	tcase_add_test(tc, test_sets_are_independent_objects);
	tcase_add_test(tc, test_set_copy_keeps_membership);

	tc = pt_tcase(s, "errors");
	tcase_add_loop_test(tc, test_add_id_1024_or_more_is_einval, 0, n_bad_ids);
	tcase_add_loop_test(tc, test_del_id_1024_or_more_is_einval, 0, n_bad_ids);
	tcase_add_loop_test(tc, test_ismember_id_1024_or_more_is_einval, 0, n_bad_ids);
	tcase_add_test(tc, test_add_null_set_is_einval);
	tcase_add_test(tc, test_del_null_set_is_einval);
	tcase_add_test(tc, test_ismember_null_set_is_einval);
	tcase_add_test(tc, test_ismember_null_result_is_einval);

	return pt_run(s);
}
