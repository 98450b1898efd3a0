/* SPDX-License-Identifier: MIT */
/*
 * Trace event type identifiers and names: posix_trace_eventid_open,
 * posix_trace_trid_eventid_open, posix_trace_eventid_get_name, posix_trace_eventid_equal,
 * posix_trace_eventtypelist_getnext_id and posix_trace_eventtypelist_rewind.
 *
 * Reference pages: posix_trace_event (eventid_open part), posix_trace_eventid_equal (equal,
 * get_name, trid_eventid_open), posix_trace_eventtypelist_getnext_id, XSH 2.11.2 (system
 * and unnamed event names), <limits.h> TRACE_EVENT_NAME_MAX / TRACE_USER_EVENT_MAX.
 * Ids, names, limits and list order per the contract: system ids 1..8, unnamed 32, user
 * ids 33..1023 in registration order, 991 names then POSIX_TRACE_UNNAMED_USEREVENT.
 * Check forks every test, so each one starts with an empty per-process registry.
 */
#include <limits.h>
#include <spawn.h>
#include <stdio.h>

#include "harness.h"

#define FIRST_USER_ID ((trace_event_id_t)33)
#define LAST_USER_ID ((trace_event_id_t)1023)
#define MAX_NAMES (TRACE_USER_EVENT_MAX - 1) /* 991: the unnamed event counts */
#define BAD_TRID ((trace_id_t)12345)

/* ---- helpers -------------------------------------------------------------------------- */

static trace_id_t shut_down_stream(void)
{
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_shutdown(trid));
	return trid;
}

static trace_event_id_t trid_open_id(trace_id_t trid, const char *name)
{
	trace_event_id_t id = 0;
	ck_assert_ok(posix_trace_trid_eventid_open(trid, name, &id));
	return id;
}

static void long_name(char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (char)('a' + i % 26);
	buf[len] = '\0';
}

static void numbered_name(char *buf, size_t size, int i)
{
	snprintf(buf, size, "user event %d", i);
}

/* Registers MAX_NAMES distinct names; asserts they get 33..1023 in order. */
static void fill_registry(void)
{
	char name[32];
	for (int i = 0; i < MAX_NAMES; i++) {
		numbered_name(name, sizeof name, i);
		trace_event_id_t id = pt_event_id(name);
		ck_assert_msg(id == FIRST_USER_ID + (trace_event_id_t)i,
		              "name %d got id %u, expected %u", i, id, FIRST_USER_ID + i);
	}
}

static void assert_name(trace_id_t trid, trace_event_id_t id, const char *expected)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	memset(buf, 'x', sizeof buf);
	ck_assert_ok(posix_trace_eventid_get_name(trid, id, buf));
	ck_assert_str_eq(buf, expected);
}

/* Reads the whole event type list into ids[]; returns how many. */
static int read_type_list(trace_id_t trid, trace_event_id_t *ids, int max)
{
	int n = 0;
	for (;;) {
		trace_event_id_t id = 0;
		int unavailable = -1;
		ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
		if (unavailable)
			return n;
		ck_assert_msg(n < max, "event type list longer than %d", max);
		ids[n++] = id;
	}
}

static trace_event_id_t next_type(trace_id_t trid)
{
	trace_event_id_t id = 0;
	int unavailable = -1;
	ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	return id;
}

static const trace_event_id_t builtin_ids[] = {1, 2, 3, 4, 5, 6, 7, 8, 32};
#define N_BUILTIN ((int)(sizeof builtin_ids / sizeof builtin_ids[0]))

static void assert_list(const trace_event_id_t *got, int n, const trace_event_id_t *want, int nwant)
{
	ck_assert_int_eq(n, nwant);
	for (int i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "list[%d] = %u, expected %u", i, got[i], want[i]);
}

/* ---- posix_trace_eventid_open ------------------------------------------------------------- */

START_TEST(test_eventid_open_first_user_id_is_33)
{
	ck_assert_uint_eq(pt_event_id("first"), FIRST_USER_ID);
}
END_TEST

START_TEST(test_eventid_open_same_name_same_id)
{
	trace_event_id_t a = pt_event_id("same");
	pt_event_id("other");
	ck_assert_uint_eq(pt_event_id("same"), a);
}
END_TEST

START_TEST(test_eventid_open_distinct_names_get_ids_in_registration_order)
{
	ck_assert_uint_eq(pt_event_id("one"), 33);
	ck_assert_uint_eq(pt_event_id("two"), 34);
	ck_assert_uint_eq(pt_event_id("three"), 35);
}
END_TEST

START_TEST(test_eventid_open_names_are_case_sensitive)
{
	ck_assert_uint_ne(pt_event_id("Name"), pt_event_id("name"));
}
END_TEST

START_TEST(test_eventid_open_63_chars_accepted)
{
	char name[TRACE_EVENT_NAME_MAX + 1];
	long_name(name, TRACE_EVENT_NAME_MAX);
	ck_assert_uint_eq(pt_event_id(name), FIRST_USER_ID);
}
END_TEST

START_TEST(test_eventid_open_64_chars_is_enametoolong)
{
	char name[TRACE_EVENT_NAME_MAX + 2];
	trace_event_id_t id = 0;
	long_name(name, TRACE_EVENT_NAME_MAX + 1);
	ck_assert_err(posix_trace_eventid_open(name, &id), ENAMETOOLONG);
}
END_TEST

START_TEST(test_eventid_open_very_long_name_is_enametoolong)
{
	char name[1001];
	trace_event_id_t id = 0;
	long_name(name, 1000);
	ck_assert_err(posix_trace_eventid_open(name, &id), ENAMETOOLONG);
}
END_TEST

START_TEST(test_eventid_open_enametoolong_registers_nothing)
{
	char name[TRACE_EVENT_NAME_MAX + 2];
	trace_event_id_t id = 0;
	long_name(name, TRACE_EVENT_NAME_MAX + 1);
	ck_assert_err(posix_trace_eventid_open(name, &id), ENAMETOOLONG);
	ck_assert_uint_eq(pt_event_id("next"), FIRST_USER_ID);
}
END_TEST

START_TEST(test_eventid_open_null_name_is_einval)
{
	trace_event_id_t id = 0;
	ck_assert_err(posix_trace_eventid_open(NULL, &id), EINVAL);
}
END_TEST

START_TEST(test_eventid_open_null_id_is_einval)
{
	ck_assert_err(posix_trace_eventid_open("name", NULL), EINVAL);
}
END_TEST

START_TEST(test_eventid_open_unnamed_event_name_is_32)
{
	ck_assert_uint_eq(pt_event_id("posix_trace_unnamed_userevent"), POSIX_TRACE_UNNAMED_USEREVENT);
}
END_TEST

START_TEST(test_eventid_open_unnamed_event_name_uses_no_user_id)
{
	pt_event_id("posix_trace_unnamed_userevent");
	ck_assert_uint_eq(pt_event_id("first"), FIRST_USER_ID);
}
END_TEST

START_TEST(test_eventid_open_991_names_get_33_to_1023)
{
	fill_registry();
}
END_TEST

START_TEST(test_eventid_open_992nd_name_is_unnamed_userevent)
{
	trace_event_id_t id = 0;
	fill_registry();
	ck_assert_ok(posix_trace_eventid_open("one too many", &id));
	ck_assert_uint_eq(id, POSIX_TRACE_UNNAMED_USEREVENT);
}
END_TEST

START_TEST(test_eventid_open_every_name_past_limit_is_unnamed_userevent)
{
	fill_registry();
	ck_assert_uint_eq(pt_event_id("extra 1"), POSIX_TRACE_UNNAMED_USEREVENT);
	ck_assert_uint_eq(pt_event_id("extra 2"), POSIX_TRACE_UNNAMED_USEREVENT);
	ck_assert_uint_eq(pt_event_id("extra 1"), POSIX_TRACE_UNNAMED_USEREVENT);
}
END_TEST

START_TEST(test_eventid_open_known_names_keep_ids_past_limit)
{
	char name[32];
	fill_registry();
	numbered_name(name, sizeof name, 0);
	ck_assert_uint_eq(pt_event_id(name), FIRST_USER_ID);
	numbered_name(name, sizeof name, MAX_NAMES - 1);
	ck_assert_uint_eq(pt_event_id(name), LAST_USER_ID);
}
END_TEST

START_TEST(test_names_registered_before_stream_are_known_to_it)
{
	trace_event_id_t id = pt_event_id("early");
	trace_id_t trid = pt_create_default();
	assert_name(trid, id, "early");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_names_registered_after_stream_creation_are_known_to_it)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t id = pt_event_id("late");
	assert_name(trid, id, "late");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_name_of_63_chars_round_trips_through_get_name)
{
	char name[TRACE_EVENT_NAME_MAX + 1];
	long_name(name, TRACE_EVENT_NAME_MAX);
	trace_event_id_t id = pt_event_id(name);
	trace_id_t trid = pt_create_default();
	assert_name(trid, id, name);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_name_past_limit_is_not_registered)
{
	fill_registry();
	pt_event_id("one too many");
	trace_id_t trid = pt_create_default();
	assert_name(trid, POSIX_TRACE_UNNAMED_USEREVENT, "posix_trace_unnamed_userevent");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- a program started by exec ------------------------------------------------------------ */

/*
 * Ids are given "for any given process" (posix_trace_eventid_open); only
 * processes traced into one stream with inheritance share a name space
 * (CONFORMANCE.md, "Event type identifiers").  A program started by
 * posix_spawn inherits its parent's registry descriptor: it must use it only
 * when it joined such a stream.  names_filler registers 991 names and says
 * which ids they got.
 */
struct filler_report {
	unsigned first, last;
	long unnamed;
};

static struct filler_report run_filler(int empty_environment)
{
	char *path = pt_helper_path("names_filler");
	char *argv[] = {path, "-N", "991", "-p", "filler", NULL};
	char *no_environment[] = {NULL};
	int out[2];
	ck_assert_int_eq(pipe(out), 0);
	posix_spawn_file_actions_t fa;
	ck_assert_ok(posix_spawn_file_actions_init(&fa));
	ck_assert_ok(posix_spawn_file_actions_adddup2(&fa, out[1], 1));
	ck_assert_ok(posix_spawn_file_actions_addclose(&fa, out[0]));
	pid_t pid;
	ck_assert_ok(posix_spawn(&pid, path, &fa, NULL, argv,
	                         empty_environment ? no_environment : environ));
	pt_track(pid);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	char line[128];
	size_t got = 0;
	ssize_t n;
	while (got < sizeof line - 1 && (n = read(out[0], line + got, sizeof line - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
	line[got] = '\0';
	close(out[0]);
	int status = pt_wait_exit(pid, 15000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "names_filler failed: %#x",
	              status);
	struct filler_report r;
	ck_assert_msg(sscanf(line, "first %u last %u unnamed %ld", &r.first, &r.last, &r.unnamed) == 3,
	              "names_filler said: %s", line);
	return r;
}

/* No stream anywhere: the spawned program's 991 names are its own (ids 33 to
 * 1023), and the parent's next new name still gets an id of its own (34);
 * with the parent's environment (even) and with none (odd). */
START_TEST(test_spawned_program_without_stream_keeps_its_names_apart)
{
	pt_children_setup();
	ck_assert_uint_eq(pt_event_id("parent.before"), FIRST_USER_ID);
	struct filler_report r = run_filler(_i % 2);
	trace_event_id_t after = pt_event_id("parent.after");
	ck_assert_msg(after == FIRST_USER_ID + 1 && r.first == FIRST_USER_ID &&
	              r.last == LAST_USER_ID && r.unnamed == 0,
	              "the parent's next name got %u; the spawned program's names: first %u last "
	              "%u, %ld unnamed", after, r.first, r.last, r.unnamed);
	pt_kill_children();
}
END_TEST

/* A stream traced with inheritance: the spawned program joins it and
 * shares its parent's names (one id per name in the traced tree): 990 ids
 * were left, the last of its names is unnamed, and so is the parent's
 * next one; the stream names the child's first name. */
START_TEST(test_spawned_program_in_inherited_stream_shares_names)
{
	pt_children_setup();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_create(0, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_uint_eq(pt_event_id("parent.before"), FIRST_USER_ID);
	struct filler_report r = run_filler(_i % 2);
	ck_assert_msg(r.first == FIRST_USER_ID + 1 && r.last == POSIX_TRACE_UNNAMED_USEREVENT &&
	              r.unnamed == 1,
	              "the traced child's names: first %u last %u, %ld unnamed", r.first, r.last,
	              r.unnamed);
	ck_assert_uint_eq(pt_event_id("parent.after"), POSIX_TRACE_UNNAMED_USEREVENT);
	assert_name(trid, FIRST_USER_ID + 1, "filler.0");
	ck_assert_ok(posix_trace_shutdown(trid));
	pt_kill_children();
}
END_TEST

/* ---- posix_trace_trid_eventid_open ------------------------------------------------------ */

START_TEST(test_trid_eventid_open_first_user_id_is_33)
{
	trace_id_t trid = pt_create_default();
	ck_assert_uint_eq(trid_open_id(trid, "first"), FIRST_USER_ID);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_same_name_same_id)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t a = trid_open_id(trid, "same");
	trid_open_id(trid, "other");
	ck_assert_uint_eq(trid_open_id(trid, "same"), a);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_then_eventid_open_same_id)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t a = trid_open_id(trid, "shared");
	ck_assert_uint_eq(pt_event_id("shared"), a);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_eventid_open_then_trid_eventid_open_same_id)
{
	trace_event_id_t a = pt_event_id("shared");
	trace_id_t trid = pt_create_default();
	ck_assert_uint_eq(trid_open_id(trid, "shared"), a);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_name_known_to_get_name)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t id = trid_open_id(trid, "by trid");
	assert_name(trid, id, "by trid");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_name_known_to_other_stream)
{
	trace_id_t t1 = pt_create_default();
	trace_id_t t2 = pt_create_default();
	trace_event_id_t id = trid_open_id(t1, "by trid");
	assert_name(t2, id, "by trid");
	ck_assert_ok(posix_trace_shutdown(t1));
	ck_assert_ok(posix_trace_shutdown(t2));
}
END_TEST

START_TEST(test_trid_eventid_open_63_chars_accepted)
{
	char name[TRACE_EVENT_NAME_MAX + 1];
	trace_id_t trid = pt_create_default();
	long_name(name, TRACE_EVENT_NAME_MAX);
	ck_assert_uint_eq(trid_open_id(trid, name), FIRST_USER_ID);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_64_chars_is_enametoolong)
{
	char name[TRACE_EVENT_NAME_MAX + 2];
	trace_event_id_t id = 0;
	trace_id_t trid = pt_create_default();
	long_name(name, TRACE_EVENT_NAME_MAX + 1);
	ck_assert_err(posix_trace_trid_eventid_open(trid, name, &id), ENAMETOOLONG);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_past_limit_is_unnamed_userevent)
{
	trace_id_t trid = pt_create_default();
	fill_registry();
	ck_assert_uint_eq(trid_open_id(trid, "one too many"), POSIX_TRACE_UNNAMED_USEREVENT);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_trid_eventid_open_trid_zero_is_einval)
{
	trace_event_id_t id = 0;
	ck_assert_err(posix_trace_trid_eventid_open(0, "name", &id), EINVAL);
}
END_TEST

START_TEST(test_trid_eventid_open_unknown_trid_is_einval)
{
	trace_event_id_t id = 0;
	ck_assert_err(posix_trace_trid_eventid_open(BAD_TRID, "name", &id), EINVAL);
}
END_TEST

START_TEST(test_trid_eventid_open_shut_down_trid_is_einval)
{
	trace_event_id_t id = 0;
	trace_id_t trid = shut_down_stream();
	ck_assert_err(posix_trace_trid_eventid_open(trid, "name", &id), EINVAL);
}
END_TEST

/* ---- posix_trace_eventid_get_name ------------------------------------------------------ */

static const struct {
	trace_event_id_t id;
	const char *name;
} builtin_names[] = {
	{POSIX_TRACE_START, "posix_trace_start"},
	{POSIX_TRACE_STOP, "posix_trace_stop"},
	{POSIX_TRACE_FILTER, "posix_trace_filter"},
	{POSIX_TRACE_OVERFLOW, "posix_trace_overflow"},
	{POSIX_TRACE_RESUME, "posix_trace_resume"},
	{POSIX_TRACE_FLUSH_START, "posix_trace_flush_start"},
	{POSIX_TRACE_FLUSH_STOP, "posix_trace_flush_stop"},
	{POSIX_TRACE_ERROR, "posix_trace_error"},
	{POSIX_TRACE_UNNAMED_USEREVENT, "posix_trace_unnamed_userevent"},
};

/* Loop test: _i indexes builtin_names. */
START_TEST(test_get_name_of_builtin_event)
{
	trace_id_t trid = pt_create_default();
	assert_name(trid, builtin_names[_i].id, builtin_names[_i].name);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_get_name_of_registered_user_event)
{
	trace_id_t trid = pt_create_default();
	pt_event_id("alpha");
	trace_event_id_t id = pt_event_id("beta");
	assert_name(trid, id, "beta");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_get_name_repeated_gives_same_name)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t id = pt_event_id("stable");
	assert_name(trid, id, "stable");
	pt_event_id("another");
	assert_name(trid, id, "stable");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

static const trace_event_id_t unnamed_ids[] = {0, 9, 31, FIRST_USER_ID, 500, LAST_USER_ID,
                                               LAST_USER_ID + 1, UINT_MAX};

/* Loop test: _i indexes unnamed_ids (nothing registered). */
START_TEST(test_get_name_of_id_without_name_is_einval)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	trace_id_t trid = pt_create_default();
	ck_assert_err(posix_trace_eventid_get_name(trid, unnamed_ids[_i], buf), EINVAL);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_get_name_of_next_unregistered_user_id_is_einval)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	trace_id_t trid = pt_create_default();
	trace_event_id_t id = pt_event_id("only");
	ck_assert_err(posix_trace_eventid_get_name(trid, id + 1, buf), EINVAL);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_get_name_trid_zero_is_einval)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	ck_assert_err(posix_trace_eventid_get_name(0, POSIX_TRACE_START, buf), EINVAL);
}
END_TEST

START_TEST(test_get_name_unknown_trid_is_einval)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	ck_assert_err(posix_trace_eventid_get_name(BAD_TRID, POSIX_TRACE_START, buf), EINVAL);
}
END_TEST

START_TEST(test_get_name_shut_down_trid_is_einval)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	trace_id_t trid = shut_down_stream();
	ck_assert_err(posix_trace_eventid_get_name(trid, POSIX_TRACE_START, buf), EINVAL);
}
END_TEST

/* ---- posix_trace_eventid_equal ------------------------------------------------------------ */

START_TEST(test_eventid_equal_same_system_id_is_non_zero)
{
	trace_id_t trid = pt_create_default();
	ck_assert_int_ne(posix_trace_eventid_equal(trid, POSIX_TRACE_START, POSIX_TRACE_START), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_eventid_equal_different_system_ids_is_zero)
{
	trace_id_t trid = pt_create_default();
	ck_assert_int_eq(posix_trace_eventid_equal(trid, POSIX_TRACE_START, POSIX_TRACE_STOP), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_eventid_equal_ids_of_same_name_is_non_zero)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t a = pt_event_id("x");
	trace_event_id_t b = trid_open_id(trid, "x");
	ck_assert_int_ne(posix_trace_eventid_equal(trid, a, b), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_eventid_equal_ids_of_different_names_is_zero)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t a = pt_event_id("x");
	trace_event_id_t b = pt_event_id("y");
	ck_assert_int_eq(posix_trace_eventid_equal(trid, a, b), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_eventid_equal_user_and_unnamed_is_zero)
{
	trace_id_t trid = pt_create_default();
	trace_event_id_t a = pt_event_id("x");
	ck_assert_int_eq(posix_trace_eventid_equal(trid, a, POSIX_TRACE_UNNAMED_USEREVENT), 0);
	ck_assert_int_ne(posix_trace_eventid_equal(trid, POSIX_TRACE_UNNAMED_USEREVENT,
	                                           POSIX_TRACE_UNNAMED_USER_EVENT), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* ---- posix_trace_eventtypelist_getnext_id / _rewind ---------------------------------------- */

START_TEST(test_typelist_fresh_stream_is_system_ids_then_unnamed)
{
	trace_event_id_t got[16];
	trace_id_t trid = pt_create_default();
	int n = read_type_list(trid, got, 16);
	assert_list(got, n, builtin_ids, N_BUILTIN);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_lists_user_ids_registered_before_creation)
{
	trace_event_id_t got[16];
	const trace_event_id_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 32, 33, 34, 35};
	pt_event_id("a");
	pt_event_id("b");
	pt_event_id("c");
	trace_id_t trid = pt_create_default();
	int n = read_type_list(trid, got, 16);
	assert_list(got, n, want, (int)(sizeof want / sizeof want[0]));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_lists_user_ids_registered_after_creation)
{
	trace_event_id_t got[16];
	const trace_event_id_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 32, 33, 34};
	trace_id_t trid = pt_create_default();
	pt_event_id("a");
	trid_open_id(trid, "b");
	int n = read_type_list(trid, got, 16);
	assert_list(got, n, want, (int)(sizeof want / sizeof want[0]));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_full_registry_lists_every_user_id)
{
	static trace_event_id_t got[1100];
	trace_id_t trid = pt_create_default();
	fill_registry();
	pt_event_id("one too many");
	int n = read_type_list(trid, got, 1100);
	ck_assert_int_eq(n, N_BUILTIN + MAX_NAMES);
	for (int i = 0; i < N_BUILTIN; i++)
		ck_assert_uint_eq(got[i], builtin_ids[i]);
	for (int i = 0; i < MAX_NAMES; i++)
		ck_assert_uint_eq(got[N_BUILTIN + i], FIRST_USER_ID + (trace_event_id_t)i);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_sets_unavailable_zero_when_returning_an_id)
{
	trace_event_id_t id = 0;
	int unavailable = 7;
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(id, POSIX_TRACE_START);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_unavailable_stays_set_after_end)
{
	trace_event_id_t got[16], id = 0;
	trace_id_t trid = pt_create_default();
	read_type_list(trid, got, 16);
	for (int i = 0; i < 3; i++) {
		int unavailable = 0;
		ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
		ck_assert_int_ne(unavailable, 0);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

/* The list ends where the names end; a name registered afterwards is the
 * next one listed (an implementation choice: the spec's "next trace event
 * type identifier in that same list" for a list that has grown). */
START_TEST(test_typelist_lists_name_registered_after_end)
{
	trace_event_id_t got[16], id = 0;
	int unavailable = 0;
	trace_id_t trid = pt_create_default();
	read_type_list(trid, got, 16);
	trace_event_id_t late = pt_event_id("registered at the end");
	ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
	ck_assert_int_eq(unavailable, 0);
	ck_assert_uint_eq(id, late);
	ck_assert_ok(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable));
	ck_assert_int_ne(unavailable, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_rewind_after_new_registration_lists_it)
{
	trace_event_id_t got[16];
	const trace_event_id_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 32, 33};
	trace_id_t trid = pt_create_default();
	read_type_list(trid, got, 16);
	pt_event_id("registered at the end");
	ck_assert_ok(posix_trace_eventtypelist_rewind(trid));
	int n = read_type_list(trid, got, 16);
	assert_list(got, n, want, (int)(sizeof want / sizeof want[0]));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_rewind_restarts_mid_list)
{
	trace_id_t trid = pt_create_default();
	ck_assert_uint_eq(next_type(trid), 1);
	ck_assert_uint_eq(next_type(trid), 2);
	ck_assert_uint_eq(next_type(trid), 3);
	ck_assert_ok(posix_trace_eventtypelist_rewind(trid));
	ck_assert_uint_eq(next_type(trid), 1);
	ck_assert_uint_eq(next_type(trid), 2);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_rewind_after_end_lists_again)
{
	trace_event_id_t got[16];
	trace_id_t trid = pt_create_default();
	pt_event_id("a");
	read_type_list(trid, got, 16);
	ck_assert_ok(posix_trace_eventtypelist_rewind(trid));
	int n = read_type_list(trid, got, 16);
	const trace_event_id_t want[] = {1, 2, 3, 4, 5, 6, 7, 8, 32, 33};
	assert_list(got, n, want, (int)(sizeof want / sizeof want[0]));
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_rewind_on_fresh_stream_succeeds)
{
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_eventtypelist_rewind(trid));
	ck_assert_uint_eq(next_type(trid), 1);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_typelist_iterators_are_per_stream)
{
	trace_id_t t1 = pt_create_default();
	trace_id_t t2 = pt_create_default();
	ck_assert_uint_eq(next_type(t1), 1);
	ck_assert_uint_eq(next_type(t1), 2);
	ck_assert_uint_eq(next_type(t1), 3);
	ck_assert_uint_eq(next_type(t2), 1);
	ck_assert_uint_eq(next_type(t1), 4);
	ck_assert_ok(posix_trace_eventtypelist_rewind(t2));
	ck_assert_uint_eq(next_type(t1), 5);
	ck_assert_ok(posix_trace_shutdown(t1));
	ck_assert_ok(posix_trace_shutdown(t2));
}
END_TEST

START_TEST(test_typelist_getnext_trid_zero_is_einval)
{
	trace_event_id_t id = 0;
	int unavailable = 0;
	ck_assert_err(posix_trace_eventtypelist_getnext_id(0, &id, &unavailable), EINVAL);
}
END_TEST

START_TEST(test_typelist_getnext_unknown_trid_is_einval)
{
	trace_event_id_t id = 0;
	int unavailable = 0;
	ck_assert_err(posix_trace_eventtypelist_getnext_id(BAD_TRID, &id, &unavailable), EINVAL);
}
END_TEST

START_TEST(test_typelist_getnext_shut_down_trid_is_einval)
{
	trace_event_id_t id = 0;
	int unavailable = 0;
	trace_id_t trid = shut_down_stream();
	ck_assert_err(posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable), EINVAL);
}
END_TEST

START_TEST(test_typelist_rewind_trid_zero_is_einval)
{
	ck_assert_err(posix_trace_eventtypelist_rewind(0), EINVAL);
}
END_TEST

START_TEST(test_typelist_rewind_unknown_trid_is_einval)
{
	ck_assert_err(posix_trace_eventtypelist_rewind(BAD_TRID), EINVAL);
}
END_TEST

START_TEST(test_typelist_rewind_shut_down_trid_is_einval)
{
	trace_id_t trid = shut_down_stream();
	ck_assert_err(posix_trace_eventtypelist_rewind(trid), EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("eventid");
	TCase *tc;

	tc = pt_tcase(s, "eventid_open");
	tcase_add_test(tc, test_eventid_open_first_user_id_is_33);
	tcase_add_test(tc, test_eventid_open_same_name_same_id);
	tcase_add_test(tc, test_eventid_open_distinct_names_get_ids_in_registration_order);
	tcase_add_test(tc, test_eventid_open_names_are_case_sensitive);
	tcase_add_test(tc, test_eventid_open_63_chars_accepted);
	tcase_add_test(tc, test_eventid_open_64_chars_is_enametoolong);
	tcase_add_test(tc, test_eventid_open_very_long_name_is_enametoolong);
	tcase_add_test(tc, test_eventid_open_enametoolong_registers_nothing);
	tcase_add_test(tc, test_eventid_open_null_name_is_einval);
	tcase_add_test(tc, test_eventid_open_null_id_is_einval);
	tcase_add_test(tc, test_eventid_open_unnamed_event_name_is_32);
	tcase_add_test(tc, test_eventid_open_unnamed_event_name_uses_no_user_id);
	tcase_add_test(tc, test_eventid_open_991_names_get_33_to_1023);
	tcase_add_test(tc, test_eventid_open_992nd_name_is_unnamed_userevent);
	tcase_add_test(tc, test_eventid_open_every_name_past_limit_is_unnamed_userevent);
	tcase_add_test(tc, test_eventid_open_known_names_keep_ids_past_limit);
	tcase_add_test(tc, test_names_registered_before_stream_are_known_to_it);
	tcase_add_test(tc, test_names_registered_after_stream_creation_are_known_to_it);
	tcase_add_test(tc, test_name_of_63_chars_round_trips_through_get_name);
	tcase_add_test(tc, test_name_past_limit_is_not_registered);

	tc = pt_tcase(s, "spawned_program");
	tcase_add_loop_test(tc, test_spawned_program_without_stream_keeps_its_names_apart, 0, 2);
	tcase_add_loop_test(tc, test_spawned_program_in_inherited_stream_shares_names, 0, 2);

	tc = pt_tcase(s, "trid_eventid_open");
	tcase_add_test(tc, test_trid_eventid_open_first_user_id_is_33);
	tcase_add_test(tc, test_trid_eventid_open_same_name_same_id);
	tcase_add_test(tc, test_trid_eventid_open_then_eventid_open_same_id);
	tcase_add_test(tc, test_eventid_open_then_trid_eventid_open_same_id);
	tcase_add_test(tc, test_trid_eventid_open_name_known_to_get_name);
	tcase_add_test(tc, test_trid_eventid_open_name_known_to_other_stream);
	tcase_add_test(tc, test_trid_eventid_open_63_chars_accepted);
	tcase_add_test(tc, test_trid_eventid_open_64_chars_is_enametoolong);
	tcase_add_test(tc, test_trid_eventid_open_past_limit_is_unnamed_userevent);
	tcase_add_test(tc, test_trid_eventid_open_trid_zero_is_einval);
	tcase_add_test(tc, test_trid_eventid_open_unknown_trid_is_einval);
	tcase_add_test(tc, test_trid_eventid_open_shut_down_trid_is_einval);

	tc = pt_tcase(s, "get_name");
	tcase_add_loop_test(tc, test_get_name_of_builtin_event, 0,
	                    (int)(sizeof builtin_names / sizeof builtin_names[0]));
	tcase_add_test(tc, test_get_name_of_registered_user_event);
	tcase_add_test(tc, test_get_name_repeated_gives_same_name);
	tcase_add_loop_test(tc, test_get_name_of_id_without_name_is_einval, 0,
	                    (int)(sizeof unnamed_ids / sizeof unnamed_ids[0]));
	tcase_add_test(tc, test_get_name_of_next_unregistered_user_id_is_einval);
	tcase_add_test(tc, test_get_name_trid_zero_is_einval);
	tcase_add_test(tc, test_get_name_unknown_trid_is_einval);
	tcase_add_test(tc, test_get_name_shut_down_trid_is_einval);

	tc = pt_tcase(s, "eventid_equal");
	tcase_add_test(tc, test_eventid_equal_same_system_id_is_non_zero);
	tcase_add_test(tc, test_eventid_equal_different_system_ids_is_zero);
	tcase_add_test(tc, test_eventid_equal_ids_of_same_name_is_non_zero);
	tcase_add_test(tc, test_eventid_equal_ids_of_different_names_is_zero);
	tcase_add_test(tc, test_eventid_equal_user_and_unnamed_is_zero);

	tc = pt_tcase(s, "eventtypelist");
	tcase_add_test(tc, test_typelist_fresh_stream_is_system_ids_then_unnamed);
	tcase_add_test(tc, test_typelist_lists_user_ids_registered_before_creation);
	tcase_add_test(tc, test_typelist_lists_user_ids_registered_after_creation);
	tcase_add_test(tc, test_typelist_full_registry_lists_every_user_id);
	tcase_add_test(tc, test_typelist_sets_unavailable_zero_when_returning_an_id);
	tcase_add_test(tc, test_typelist_unavailable_stays_set_after_end);
	tcase_add_test(tc, test_typelist_lists_name_registered_after_end);
	tcase_add_test(tc, test_typelist_rewind_after_new_registration_lists_it);
	tcase_add_test(tc, test_typelist_rewind_restarts_mid_list);
	tcase_add_test(tc, test_typelist_rewind_after_end_lists_again);
	tcase_add_test(tc, test_typelist_rewind_on_fresh_stream_succeeds);
	tcase_add_test(tc, test_typelist_iterators_are_per_stream);
	tcase_add_test(tc, test_typelist_getnext_trid_zero_is_einval);
	tcase_add_test(tc, test_typelist_getnext_unknown_trid_is_einval);
	tcase_add_test(tc, test_typelist_getnext_shut_down_trid_is_einval);
	tcase_add_test(tc, test_typelist_rewind_trid_zero_is_einval);
	tcase_add_test(tc, test_typelist_rewind_unknown_trid_is_einval);
	tcase_add_test(tc, test_typelist_rewind_shut_down_trid_is_einval);

	return pt_run(s);
}
