/* SPDX-License-Identifier: MIT */
/*
 * Trace stream attributes objects: every posix_trace_attr_* function.
 *
 * Reference pages: posix_trace_attr_destroy (init/destroy), posix_trace_attr_getclockres
 * (clockres, createtime, genversion, name), posix_trace_attr_getinherited (inheritance,
 * log-full-policy, stream-full-policy), posix_trace_attr_getlogsize (log size, max data
 * size, max event sizes, stream size); values per the contract: defaults, accepted
 * values, EINVAL for NULL pointers, invalid values, and never-initialised or destroyed
 * objects, name truncation, event size formula.  Also posix_trace_create's "later
 * changes of the attributes object do not affect the stream" (posix_trace_create,
 * posix_trace_attr_destroy pages) and the creation-time attribute of a stream.
 */
#include <stdint.h>
#include <time.h>

#include "harness.h"

#define DEFAULT_STREAM_SIZE ((size_t)4194304)
#define DEFAULT_MAX_DATA_SIZE ((size_t)1024)
#define DEFAULT_LOG_SIZE ((size_t)67108864)
#define MAX_MAX_DATA_SIZE ((size_t)1048576)
#define EVENT_HEADER_SIZE ((size_t)16) /* CONFORMANCE.md: record header */
#define SYSTEM_EVENT_SIZE ((size_t)272) /* FILTER: header and two sets */
#define GENVERSION PT_TEST_GENVERSION

#define NS_PER_SEC 1000000000LL

static void fill_name(char *buf, size_t len, char c)
{
	memset(buf, c, len);
	buf[len] = '\0';
}

static void init_attr(trace_attr_t *a)
{
	ck_assert_ok(posix_trace_attr_init(a));
}

/* ---- defaults after posix_trace_attr_init ---------------------------------- */

START_TEST(test_init_default_name_is_empty)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX];
	init_attr(&a);
	memset(name, 'x', sizeof name);
	ck_assert_ok(posix_trace_attr_getname(&a, name));
	ck_assert_str_eq(name, "");
}
END_TEST

START_TEST(test_init_default_genversion)
{
	trace_attr_t a;
	char v[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getgenversion(&a, v));
	ck_assert_str_eq(v, GENVERSION);
}
END_TEST

START_TEST(test_init_default_clockres_is_monotonic_resolution)
{
	trace_attr_t a;
	struct timespec res = {-1, -1}, mono;
	init_attr(&a);
	ck_assert_int_eq(clock_getres(CLOCK_MONOTONIC, &mono), 0);
	ck_assert_ok(posix_trace_attr_getclockres(&a, &res));
	ck_assert_int_eq(res.tv_sec, mono.tv_sec);
	ck_assert_int_eq(res.tv_nsec, mono.tv_nsec);
}
END_TEST

START_TEST(test_init_default_createtime_is_zero)
{
	trace_attr_t a;
	struct timespec ct = {-1, -1};
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getcreatetime(&a, &ct));
	ck_assert_int_eq(ct.tv_sec, 0);
	ck_assert_int_eq(ct.tv_nsec, 0);
}
END_TEST

START_TEST(test_init_default_streamsize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getstreamsize(&a, &n));
	ck_assert_uint_eq(n, DEFAULT_STREAM_SIZE);
}
END_TEST

START_TEST(test_init_default_streamfullpolicy_is_loop)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getstreamfullpolicy(&a, &p));
	ck_assert_int_eq(p, POSIX_TRACE_LOOP);
}
END_TEST

START_TEST(test_init_default_maxdatasize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&a, &n));
	ck_assert_uint_eq(n, DEFAULT_MAX_DATA_SIZE);
}
END_TEST

START_TEST(test_init_default_inherited_is_close_for_child)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getinherited(&a, &p));
	ck_assert_int_eq(p, POSIX_TRACE_CLOSE_FOR_CHILD);
}
END_TEST

START_TEST(test_init_default_logsize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getlogsize(&a, &n));
	ck_assert_uint_eq(n, DEFAULT_LOG_SIZE);
}
END_TEST

START_TEST(test_init_default_logfullpolicy_is_loop)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getlogfullpolicy(&a, &p));
	ck_assert_int_eq(p, POSIX_TRACE_LOOP);
}
END_TEST

/* ---- init / destroy --------------------------------------------------------- */

START_TEST(test_init_null_is_einval)
{
	ck_assert_err(posix_trace_attr_init(NULL), EINVAL);
}
END_TEST

START_TEST(test_destroy_initialised_succeeds)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_destroy(&a));
}
END_TEST

START_TEST(test_destroy_twice_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_destroy(&a));
	ck_assert_err(posix_trace_attr_destroy(&a), EINVAL);
}
END_TEST

START_TEST(test_init_after_destroy_works)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_destroy(&a));
	ck_assert_ok(posix_trace_attr_init(&a));
	ck_assert_ok(posix_trace_attr_getstreamsize(&a, &n));
	ck_assert_uint_eq(n, DEFAULT_STREAM_SIZE);
}
END_TEST

START_TEST(test_init_after_destroy_restores_defaults)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX];
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "old"));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 8));
	ck_assert_ok(posix_trace_attr_destroy(&a));
	ck_assert_ok(posix_trace_attr_init(&a));
	ck_assert_ok(posix_trace_attr_getname(&a, name));
	ck_assert_str_eq(name, "");
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&a, &n));
	ck_assert_uint_eq(n, DEFAULT_MAX_DATA_SIZE);
}
END_TEST

/* ---- every function: NULL, never-initialised and destroyed attr objects ----- */

/* Calls one attr function on `a` with otherwise valid arguments. */
struct attr_call {
	const char *name;
	int (*call)(trace_attr_t *a);
};

static int c_destroy(trace_attr_t *a) { return posix_trace_attr_destroy(a); }
static int c_getclockres(trace_attr_t *a) { struct timespec t; return posix_trace_attr_getclockres(a, &t); }
static int c_getcreatetime(trace_attr_t *a) { struct timespec t; return posix_trace_attr_getcreatetime(a, &t); }
static int c_getgenversion(trace_attr_t *a) { char b[TRACE_NAME_MAX]; return posix_trace_attr_getgenversion(a, b); }
static int c_getname(trace_attr_t *a) { char b[TRACE_NAME_MAX]; return posix_trace_attr_getname(a, b); }
static int c_setname(trace_attr_t *a) { return posix_trace_attr_setname(a, "name"); }
static int c_getinherited(trace_attr_t *a) { int v; return posix_trace_attr_getinherited(a, &v); }
static int c_setinherited(trace_attr_t *a) { return posix_trace_attr_setinherited(a, POSIX_TRACE_INHERITED); }
static int c_getlogfullpolicy(trace_attr_t *a) { int v; return posix_trace_attr_getlogfullpolicy(a, &v); }
static int c_setlogfullpolicy(trace_attr_t *a) { return posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_APPEND); }
static int c_getstreamfullpolicy(trace_attr_t *a) { int v; return posix_trace_attr_getstreamfullpolicy(a, &v); }
static int c_setstreamfullpolicy(trace_attr_t *a) { return posix_trace_attr_setstreamfullpolicy(a, POSIX_TRACE_UNTIL_FULL); }
static int c_getlogsize(trace_attr_t *a) { size_t v; return posix_trace_attr_getlogsize(a, &v); }
static int c_setlogsize(trace_attr_t *a) { return posix_trace_attr_setlogsize(a, 4096); }
static int c_getmaxdatasize(trace_attr_t *a) { size_t v; return posix_trace_attr_getmaxdatasize(a, &v); }
static int c_setmaxdatasize(trace_attr_t *a) { return posix_trace_attr_setmaxdatasize(a, 16); }
static int c_getmaxsystemeventsize(trace_attr_t *a) { size_t v; return posix_trace_attr_getmaxsystemeventsize(a, &v); }
static int c_getmaxusereventsize(trace_attr_t *a) { size_t v; return posix_trace_attr_getmaxusereventsize(a, 8, &v); }
static int c_getstreamsize(trace_attr_t *a) { size_t v; return posix_trace_attr_getstreamsize(a, &v); }
static int c_setstreamsize(trace_attr_t *a) { return posix_trace_attr_setstreamsize(a, 65536); }

/* Every function except posix_trace_attr_init. */
static const struct attr_call attr_calls[] = {
	{"posix_trace_attr_destroy", c_destroy},
	{"posix_trace_attr_getclockres", c_getclockres},
	{"posix_trace_attr_getcreatetime", c_getcreatetime},
	{"posix_trace_attr_getgenversion", c_getgenversion},
	{"posix_trace_attr_getname", c_getname},
	{"posix_trace_attr_setname", c_setname},
	{"posix_trace_attr_getinherited", c_getinherited},
	{"posix_trace_attr_setinherited", c_setinherited},
	{"posix_trace_attr_getlogfullpolicy", c_getlogfullpolicy},
	{"posix_trace_attr_setlogfullpolicy", c_setlogfullpolicy},
	{"posix_trace_attr_getstreamfullpolicy", c_getstreamfullpolicy},
	{"posix_trace_attr_setstreamfullpolicy", c_setstreamfullpolicy},
	{"posix_trace_attr_getlogsize", c_getlogsize},
	{"posix_trace_attr_setlogsize", c_setlogsize},
	{"posix_trace_attr_getmaxdatasize", c_getmaxdatasize},
	{"posix_trace_attr_setmaxdatasize", c_setmaxdatasize},
	{"posix_trace_attr_getmaxsystemeventsize", c_getmaxsystemeventsize},
	{"posix_trace_attr_getmaxusereventsize", c_getmaxusereventsize},
	{"posix_trace_attr_getstreamsize", c_getstreamsize},
	{"posix_trace_attr_setstreamsize", c_setstreamsize},
};
#define N_ATTR_CALLS ((int)(sizeof attr_calls / sizeof attr_calls[0]))

static void expect_einval(const struct attr_call *c, trace_attr_t *a, const char *what)
{
	int rc = c->call(a);
	ck_assert_msg(rc == EINVAL, "%s on %s returned %d (%s), expected EINVAL", c->name, what,
	              rc, strerror(rc));
}

/* Loop test: _i indexes attr_calls. */
START_TEST(test_every_function_null_attr_is_einval)
{
	expect_einval(&attr_calls[_i], NULL, "a NULL attr");
}
END_TEST

START_TEST(test_every_function_zeroed_attr_is_einval)
{
	trace_attr_t a;
	memset(&a, 0, sizeof a);
	expect_einval(&attr_calls[_i], &a, "a never-initialised (zeroed) attr");
}
END_TEST

START_TEST(test_every_function_destroyed_attr_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_destroy(&a));
	expect_einval(&attr_calls[_i], &a, "a destroyed attr");
}
END_TEST

START_TEST(test_every_function_works_on_initialised_attr)
{
	trace_attr_t a;
	int rc;
	init_attr(&a);
	rc = attr_calls[_i].call(&a);
	ck_assert_msg(rc == 0, "%s on an initialised attr returned %d (%s)", attr_calls[_i].name,
	              rc, strerror(rc));
}
END_TEST

START_TEST(test_garbage_filled_attr_getname_is_einval)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX];
	memset(&a, 0xa5, sizeof a);
	ck_assert_err(posix_trace_attr_getname(&a, name), EINVAL);
}
END_TEST

/* Every getter with a NULL output pointer. */
struct getter_call {
	const char *name;
	int (*call)(const trace_attr_t *a);
};

static int n_getclockres(const trace_attr_t *a) { return posix_trace_attr_getclockres(a, NULL); }
static int n_getcreatetime(const trace_attr_t *a) { return posix_trace_attr_getcreatetime(a, NULL); }
static int n_getgenversion(const trace_attr_t *a) { return posix_trace_attr_getgenversion(a, NULL); }
static int n_getname(const trace_attr_t *a) { return posix_trace_attr_getname(a, NULL); }
static int n_getinherited(const trace_attr_t *a) { return posix_trace_attr_getinherited(a, NULL); }
static int n_getlogfullpolicy(const trace_attr_t *a) { return posix_trace_attr_getlogfullpolicy(a, NULL); }
static int n_getstreamfullpolicy(const trace_attr_t *a) { return posix_trace_attr_getstreamfullpolicy(a, NULL); }
static int n_getlogsize(const trace_attr_t *a) { return posix_trace_attr_getlogsize(a, NULL); }
static int n_getmaxdatasize(const trace_attr_t *a) { return posix_trace_attr_getmaxdatasize(a, NULL); }
static int n_getmaxsystemeventsize(const trace_attr_t *a) { return posix_trace_attr_getmaxsystemeventsize(a, NULL); }
static int n_getmaxusereventsize(const trace_attr_t *a) { return posix_trace_attr_getmaxusereventsize(a, 8, NULL); }
static int n_getstreamsize(const trace_attr_t *a) { return posix_trace_attr_getstreamsize(a, NULL); }

static const struct getter_call getter_calls[] = {
	{"posix_trace_attr_getclockres", n_getclockres},
	{"posix_trace_attr_getcreatetime", n_getcreatetime},
	{"posix_trace_attr_getgenversion", n_getgenversion},
	{"posix_trace_attr_getname", n_getname},
	{"posix_trace_attr_getinherited", n_getinherited},
	{"posix_trace_attr_getlogfullpolicy", n_getlogfullpolicy},
	{"posix_trace_attr_getstreamfullpolicy", n_getstreamfullpolicy},
	{"posix_trace_attr_getlogsize", n_getlogsize},
	{"posix_trace_attr_getmaxdatasize", n_getmaxdatasize},
	{"posix_trace_attr_getmaxsystemeventsize", n_getmaxsystemeventsize},
	{"posix_trace_attr_getmaxusereventsize", n_getmaxusereventsize},
	{"posix_trace_attr_getstreamsize", n_getstreamsize},
};
#define N_GETTER_CALLS ((int)(sizeof getter_calls / sizeof getter_calls[0]))

/* Loop test: _i indexes getter_calls. */
START_TEST(test_every_getter_null_output_is_einval)
{
	trace_attr_t a;
	int rc;
	init_attr(&a);
	rc = getter_calls[_i].call(&a);
	ck_assert_msg(rc == EINVAL, "%s with a NULL output pointer returned %d (%s), expected EINVAL",
	              getter_calls[_i].name, rc, strerror(rc));
}
END_TEST

/* ---- trace-name --------------------------------------------------------------- */

START_TEST(test_setname_getname_round_trip)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "my stream"));
	ck_assert_ok(posix_trace_attr_getname(&a, name));
	ck_assert_str_eq(name, "my stream");
}
END_TEST

START_TEST(test_setname_twice_keeps_last)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "a rather longer first name"));
	ck_assert_ok(posix_trace_attr_setname(&a, "second"));
	ck_assert_ok(posix_trace_attr_getname(&a, name));
	ck_assert_str_eq(name, "second");
}
END_TEST

START_TEST(test_setname_empty_string)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "x"));
	ck_assert_ok(posix_trace_attr_setname(&a, ""));
	ck_assert_ok(posix_trace_attr_getname(&a, name));
	ck_assert_str_eq(name, "");
}
END_TEST

START_TEST(test_setname_copies_the_string)
{
	trace_attr_t a;
	char src[16] = "original";
	char name[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, src));
	strcpy(src, "changed");
	ck_assert_ok(posix_trace_attr_getname(&a, name));
	ck_assert_str_eq(name, "original");
}
END_TEST

START_TEST(test_setname_63_chars_kept_whole)
{
	trace_attr_t a;
	char in[TRACE_NAME_MAX], out[TRACE_NAME_MAX];
	init_attr(&a);
	fill_name(in, TRACE_NAME_MAX - 1, 'n');
	ck_assert_ok(posix_trace_attr_setname(&a, in));
	ck_assert_ok(posix_trace_attr_getname(&a, out));
	ck_assert_str_eq(out, in);
}
END_TEST

START_TEST(test_setname_64_chars_truncated_to_63)
{
	trace_attr_t a;
	char in[TRACE_NAME_MAX + 1], out[TRACE_NAME_MAX];
	init_attr(&a);
	fill_name(in, TRACE_NAME_MAX, 'n');
	ck_assert_ok(posix_trace_attr_setname(&a, in));
	ck_assert_ok(posix_trace_attr_getname(&a, out));
	ck_assert_uint_eq(strlen(out), TRACE_NAME_MAX - 1);
	ck_assert_int_eq(strncmp(out, in, TRACE_NAME_MAX - 1), 0);
}
END_TEST

START_TEST(test_setname_very_long_truncated_to_63)
{
	trace_attr_t a;
	char in[1001], out[TRACE_NAME_MAX + 16];
	init_attr(&a);
	for (int i = 0; i < 1000; i++)
		in[i] = (char)('a' + i % 26);
	in[1000] = '\0';
	memset(out, 'z', sizeof out);
	ck_assert_ok(posix_trace_attr_setname(&a, in));
	ck_assert_ok(posix_trace_attr_getname(&a, out));
	ck_assert_uint_eq(strlen(out), TRACE_NAME_MAX - 1);
	ck_assert_int_eq(strncmp(out, in, TRACE_NAME_MAX - 1), 0);
}
END_TEST

START_TEST(test_setname_null_name_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setname(&a, NULL), EINVAL);
}
END_TEST

/* ---- generation-version and clock-resolution (read-only) ----------------------- */

START_TEST(test_genversion_fits_trace_name_max)
{
	trace_attr_t a;
	char v[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getgenversion(&a, v));
	ck_assert_uint_lt(strlen(v), TRACE_NAME_MAX);
	ck_assert_uint_gt(strlen(v), 0);
}
END_TEST

START_TEST(test_genversion_unchanged_by_setters)
{
	trace_attr_t a;
	char v[TRACE_NAME_MAX];
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "posixtrace 9.9.9"));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 0));
	ck_assert_ok(posix_trace_attr_setstreamsize(&a, 1));
	ck_assert_ok(posix_trace_attr_getgenversion(&a, v));
	ck_assert_str_eq(v, GENVERSION);
}
END_TEST

START_TEST(test_clockres_unchanged_by_setters)
{
	trace_attr_t a;
	struct timespec before, after;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getclockres(&a, &before));
	ck_assert_ok(posix_trace_attr_setname(&a, "x"));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_UNTIL_FULL));
	ck_assert_ok(posix_trace_attr_getclockres(&a, &after));
	ck_assert_int_eq(after.tv_sec, before.tv_sec);
	ck_assert_int_eq(after.tv_nsec, before.tv_nsec);
}
END_TEST

START_TEST(test_clockres_is_a_valid_positive_timespec)
{
	trace_attr_t a;
	struct timespec res;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getclockres(&a, &res));
	ck_assert_int_ge(res.tv_sec, 0);
	ck_assert_int_ge(res.tv_nsec, 0);
	ck_assert_int_lt(res.tv_nsec, 1000000000L);
	ck_assert(res.tv_sec > 0 || res.tv_nsec > 0);
}
END_TEST

/* ---- stream-min-size ------------------------------------------------------------- */

START_TEST(test_setstreamsize_getstreamsize_round_trip)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setstreamsize(&a, 65536));
	ck_assert_ok(posix_trace_attr_getstreamsize(&a, &n));
	ck_assert_uint_eq(n, 65536);
}
END_TEST

START_TEST(test_setstreamsize_one_is_accepted)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setstreamsize(&a, 1));
	ck_assert_ok(posix_trace_attr_getstreamsize(&a, &n));
	ck_assert_uint_eq(n, 1);
}
END_TEST

START_TEST(test_setstreamsize_zero_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setstreamsize(&a, 0), EINVAL);
}
END_TEST

/* ---- stream-full-policy ---------------------------------------------------------- */

static const int stream_policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_FLUSH};

/* Loop test: _i indexes stream_policies. */
START_TEST(test_setstreamfullpolicy_round_trip)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&a, stream_policies[_i]));
	ck_assert_ok(posix_trace_attr_getstreamfullpolicy(&a, &p));
	ck_assert_int_eq(p, stream_policies[_i]);
}
END_TEST

static const int bad_stream_policies[] = {0, POSIX_TRACE_APPEND, -1, 99};

/* Loop test: _i indexes bad_stream_policies. */
START_TEST(test_setstreamfullpolicy_invalid_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setstreamfullpolicy(&a, bad_stream_policies[_i]), EINVAL);
}
END_TEST

/* ---- log-full-policy ------------------------------------------------------------- */

static const int log_policies[] = {POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND};

/* Loop test: _i indexes log_policies. */
START_TEST(test_setlogfullpolicy_round_trip)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&a, log_policies[_i]));
	ck_assert_ok(posix_trace_attr_getlogfullpolicy(&a, &p));
	ck_assert_int_eq(p, log_policies[_i]);
}
END_TEST

static const int bad_log_policies[] = {0, POSIX_TRACE_FLUSH, -1, 99};

/* Loop test: _i indexes bad_log_policies. */
START_TEST(test_setlogfullpolicy_invalid_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setlogfullpolicy(&a, bad_log_policies[_i]), EINVAL);
}
END_TEST

/* ---- inheritance ------------------------------------------------------------------- */

START_TEST(test_setinherited_inherited_round_trip)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_attr_getinherited(&a, &p));
	ck_assert_int_eq(p, POSIX_TRACE_INHERITED);
}
END_TEST

START_TEST(test_setinherited_close_for_child_round_trip)
{
	trace_attr_t a;
	int p = -1;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setinherited(&a, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_attr_setinherited(&a, POSIX_TRACE_CLOSE_FOR_CHILD));
	ck_assert_ok(posix_trace_attr_getinherited(&a, &p));
	ck_assert_int_eq(p, POSIX_TRACE_CLOSE_FOR_CHILD);
}
END_TEST

static const int bad_inherit_policies[] = {2, -1, 99};

/* Loop test: _i indexes bad_inherit_policies. */
START_TEST(test_setinherited_invalid_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setinherited(&a, bad_inherit_policies[_i]), EINVAL);
}
END_TEST

/* ---- log-max-size ------------------------------------------------------------------- */

START_TEST(test_setlogsize_getlogsize_round_trip)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setlogsize(&a, 123456));
	ck_assert_ok(posix_trace_attr_getlogsize(&a, &n));
	ck_assert_uint_eq(n, 123456);
}
END_TEST

START_TEST(test_setlogsize_zero_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setlogsize(&a, 0), EINVAL);
}
END_TEST

/* ---- max-data-size ------------------------------------------------------------------- */

static const size_t good_max_data_sizes[] = {0, 1, 100, 4096, MAX_MAX_DATA_SIZE};

/* Loop test: _i indexes good_max_data_sizes. */
START_TEST(test_setmaxdatasize_round_trip)
{
	trace_attr_t a;
	size_t n = 12345;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, good_max_data_sizes[_i]));
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&a, &n));
	ck_assert_uint_eq(n, good_max_data_sizes[_i]);
}
END_TEST

START_TEST(test_setmaxdatasize_above_1mib_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setmaxdatasize(&a, MAX_MAX_DATA_SIZE + 1), EINVAL);
}
END_TEST

START_TEST(test_setmaxdatasize_size_max_is_einval)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_err(posix_trace_attr_setmaxdatasize(&a, SIZE_MAX), EINVAL);
}
END_TEST

/* ---- max event sizes ------------------------------------------------------------------ */

static size_t round_up_8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

START_TEST(test_maxsystemeventsize_is_272)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&a, &n));
	ck_assert_uint_eq(n, SYSTEM_EVENT_SIZE);
}
END_TEST

START_TEST(test_maxsystemeventsize_independent_of_maxdatasize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 0));
	ck_assert_ok(posix_trace_attr_getmaxsystemeventsize(&a, &n));
	ck_assert_uint_eq(n, SYSTEM_EVENT_SIZE);
}
END_TEST

START_TEST(test_maxusereventsize_zero_data_is_header_only)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 0, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE);
}
END_TEST

START_TEST(test_maxusereventsize_rounds_data_up_to_8)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 1, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + 8);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 8, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + 8);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 9, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + 16);
}
END_TEST

START_TEST(test_maxusereventsize_matches_formula_up_to_maxdatasize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	for (size_t len = 0; len <= DEFAULT_MAX_DATA_SIZE; len++) {
		ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, len, &n));
		ck_assert_msg(n == EVENT_HEADER_SIZE + round_up_8(len),
		              "data_len %zu: event size %zu, expected %zu", len, n,
		              EVENT_HEADER_SIZE + round_up_8(len));
	}
}
END_TEST

START_TEST(test_maxusereventsize_grows_with_data_len)
{
	trace_attr_t a;
	size_t small = 0, big = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 10, &small));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 500, &big));
	ck_assert_uint_gt(big, small);
	ck_assert_uint_ge(big, 500);
}
END_TEST

START_TEST(test_maxusereventsize_stays_constant_above_maxdatasize)
{
	trace_attr_t a;
	size_t at_max = 0, n = 0;
	const size_t above[] = {DEFAULT_MAX_DATA_SIZE + 1, DEFAULT_MAX_DATA_SIZE + 8, 100000,
	                        SIZE_MAX};
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, DEFAULT_MAX_DATA_SIZE, &at_max));
	ck_assert_uint_eq(at_max, EVENT_HEADER_SIZE + DEFAULT_MAX_DATA_SIZE);
	for (size_t i = 0; i < sizeof above / sizeof above[0]; i++) {
		ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, above[i], &n));
		ck_assert_uint_eq(n, at_max);
	}
}
END_TEST

START_TEST(test_maxusereventsize_follows_setmaxdatasize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 100));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 100, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + 104);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 5000, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + 104);
}
END_TEST

START_TEST(test_maxusereventsize_with_maxdatasize_zero_is_header_only)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 0));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, 64, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE);
}
END_TEST

START_TEST(test_maxusereventsize_at_1mib_maxdatasize)
{
	trace_attr_t a;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, MAX_MAX_DATA_SIZE));
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&a, SIZE_MAX, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + MAX_MAX_DATA_SIZE);
}
END_TEST

/* ---- streams created from an attributes object ---------------------------------------- */

/* Sets non-default values in every settable attribute. */
static void set_custom(trace_attr_t *a)
{
	ck_assert_ok(posix_trace_attr_setname(a, "before"));
	ck_assert_ok(posix_trace_attr_setstreamsize(a, 1048576));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(a, 100));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(a, POSIX_TRACE_UNTIL_FULL));
	ck_assert_ok(posix_trace_attr_setinherited(a, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_attr_setlogsize(a, 200000));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_APPEND));
}

static void change_all(trace_attr_t *a)
{
	ck_assert_ok(posix_trace_attr_setname(a, "after"));
	ck_assert_ok(posix_trace_attr_setstreamsize(a, 2097152));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(a, 300));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(a, POSIX_TRACE_LOOP));
	ck_assert_ok(posix_trace_attr_setinherited(a, POSIX_TRACE_CLOSE_FOR_CHILD));
	ck_assert_ok(posix_trace_attr_setlogsize(a, 300000));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(a, POSIX_TRACE_UNTIL_FULL));
}

static trace_id_t create_from(const trace_attr_t *a)
{
	trace_id_t trid = 0;
	ck_assert_ok(posix_trace_create(0, a, &trid));
	return trid;
}

static void get_stream_attr(trace_id_t trid, trace_attr_t *out)
{
	init_attr(out);
	ck_assert_ok(posix_trace_get_attr(trid, out));
}

static void assert_stream_name(trace_id_t trid, const char *expected)
{
	trace_attr_t out;
	char name[TRACE_NAME_MAX];
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getname(&out, name));
	ck_assert_str_eq(name, expected);
	ck_assert_ok(posix_trace_attr_destroy(&out));
}

START_TEST(test_stream_keeps_name_after_attr_change)
{
	trace_attr_t a;
	init_attr(&a);
	set_custom(&a);
	trace_id_t trid = create_from(&a);
	change_all(&a);
	assert_stream_name(trid, "before");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_stream_keeps_sizes_and_policies_after_attr_change)
{
	trace_attr_t a, out;
	size_t n = 0;
	int p = -1;
	init_attr(&a);
	set_custom(&a);
	trace_id_t trid = create_from(&a);
	change_all(&a);
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getstreamsize(&out, &n));
	ck_assert_uint_eq(n, 1048576);
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&out, &n));
	ck_assert_uint_eq(n, 100);
	ck_assert_ok(posix_trace_attr_getstreamfullpolicy(&out, &p));
	ck_assert_int_eq(p, POSIX_TRACE_UNTIL_FULL);
	ck_assert_ok(posix_trace_attr_getinherited(&out, &p));
	ck_assert_int_eq(p, POSIX_TRACE_INHERITED);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_stream_keeps_log_attrs_after_attr_change)
{
	trace_attr_t a, out;
	size_t n = 0;
	int p = -1;
	init_attr(&a);
	set_custom(&a);
	trace_id_t trid = create_from(&a);
	change_all(&a);
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getlogsize(&out, &n));
	ck_assert_uint_eq(n, 200000);
	ck_assert_ok(posix_trace_attr_getlogfullpolicy(&out, &p));
	ck_assert_int_eq(p, POSIX_TRACE_APPEND);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_stream_unaffected_by_attr_destroy)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "kept"));
	trace_id_t trid = create_from(&a);
	ck_assert_ok(posix_trace_attr_destroy(&a));
	memset(&a, 0, sizeof a);
	assert_stream_name(trid, "kept");
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_attr_reusable_for_two_streams)
{
	trace_attr_t a;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "first"));
	trace_id_t t1 = create_from(&a);
	ck_assert_ok(posix_trace_attr_setname(&a, "second"));
	trace_id_t t2 = create_from(&a);
	assert_stream_name(t1, "first");
	assert_stream_name(t2, "second");
	ck_assert_ok(posix_trace_shutdown(t1));
	ck_assert_ok(posix_trace_shutdown(t2));
}
END_TEST

START_TEST(test_stream_maxusereventsize_uses_stream_maxdatasize)
{
	trace_attr_t a, out;
	size_t n = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 40));
	trace_id_t trid = create_from(&a);
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&a, 4000));
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getmaxusereventsize(&out, 4000, &n));
	ck_assert_uint_eq(n, EVENT_HEADER_SIZE + 40);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_stream_createtime_is_realtime_at_create)
{
	trace_attr_t out;
	struct timespec before, after, ct;
	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &before), 0);
	trace_id_t trid = create_from(NULL);
	ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &after), 0);
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getcreatetime(&out, &ct));
	ck_assert_int_ge(ct.tv_nsec, 0);
	ck_assert_int_lt(ct.tv_nsec, 1000000000L);
	ck_assert_int_ge(pt_ns(&ct), pt_ns(&before) - NS_PER_SEC);
	ck_assert_int_le(pt_ns(&ct), pt_ns(&after) + NS_PER_SEC);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_createtime_of_attr_used_for_create_stays_zero)
{
	trace_attr_t a;
	struct timespec ct = {-1, -1};
	init_attr(&a);
	trace_id_t trid = create_from(&a);
	ck_assert_ok(posix_trace_attr_getcreatetime(&a, &ct));
	ck_assert_int_eq(ct.tv_sec, 0);
	ck_assert_int_eq(ct.tv_nsec, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_stream_genversion_and_clockres_are_the_defaults)
{
	trace_attr_t out;
	char v[TRACE_NAME_MAX];
	struct timespec res, mono;
	trace_id_t trid = create_from(NULL);
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getgenversion(&out, v));
	ck_assert_str_eq(v, GENVERSION);
	ck_assert_ok(posix_trace_attr_getclockres(&out, &res));
	ck_assert_int_eq(clock_getres(CLOCK_MONOTONIC, &mono), 0);
	ck_assert_int_eq(res.tv_sec, mono.tv_sec);
	ck_assert_int_eq(res.tv_nsec, mono.tv_nsec);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_stream_from_null_attr_has_default_attrs)
{
	trace_attr_t out;
	char name[TRACE_NAME_MAX];
	size_t n = 0;
	int p = -1;
	trace_id_t trid = create_from(NULL);
	get_stream_attr(trid, &out);
	ck_assert_ok(posix_trace_attr_getname(&out, name));
	ck_assert_str_eq(name, "");
	ck_assert_ok(posix_trace_attr_getstreamsize(&out, &n));
	ck_assert_uint_eq(n, DEFAULT_STREAM_SIZE);
	ck_assert_ok(posix_trace_attr_getmaxdatasize(&out, &n));
	ck_assert_uint_eq(n, DEFAULT_MAX_DATA_SIZE);
	ck_assert_ok(posix_trace_attr_getstreamfullpolicy(&out, &p));
	ck_assert_int_eq(p, POSIX_TRACE_LOOP);
	ck_assert_ok(posix_trace_attr_getinherited(&out, &p));
	ck_assert_int_eq(p, POSIX_TRACE_CLOSE_FOR_CHILD);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(test_create_with_zeroed_attr_is_einval)
{
	trace_attr_t a;
	trace_id_t trid = 0;
	memset(&a, 0, sizeof a);
	ck_assert_err(posix_trace_create(0, &a, &trid), EINVAL);
}
END_TEST

START_TEST(test_create_with_destroyed_attr_is_einval)
{
	trace_attr_t a;
	trace_id_t trid = 0;
	init_attr(&a);
	ck_assert_ok(posix_trace_attr_destroy(&a));
	ck_assert_err(posix_trace_create(0, &a, &trid), EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("attr");
	TCase *tc;

	tc = pt_tcase(s, "defaults");
	tcase_add_test(tc, test_init_default_name_is_empty);
	tcase_add_test(tc, test_init_default_genversion);
	tcase_add_test(tc, test_init_default_clockres_is_monotonic_resolution);
	tcase_add_test(tc, test_init_default_createtime_is_zero);
	tcase_add_test(tc, test_init_default_streamsize);
	tcase_add_test(tc, test_init_default_streamfullpolicy_is_loop);
	tcase_add_test(tc, test_init_default_maxdatasize);
	tcase_add_test(tc, test_init_default_inherited_is_close_for_child);
	tcase_add_test(tc, test_init_default_logsize);
	tcase_add_test(tc, test_init_default_logfullpolicy_is_loop);

	tc = pt_tcase(s, "init_destroy");
	tcase_add_test(tc, test_init_null_is_einval);
	tcase_add_test(tc, test_destroy_initialised_succeeds);
	tcase_add_test(tc, test_destroy_twice_is_einval);
	tcase_add_test(tc, test_init_after_destroy_works);
	tcase_add_test(tc, test_init_after_destroy_restores_defaults);

	tc = pt_tcase(s, "invalid_objects");
	tcase_add_loop_test(tc, test_every_function_null_attr_is_einval, 0, N_ATTR_CALLS);
	tcase_add_loop_test(tc, test_every_function_zeroed_attr_is_einval, 0, N_ATTR_CALLS);
	tcase_add_loop_test(tc, test_every_function_destroyed_attr_is_einval, 0, N_ATTR_CALLS);
	tcase_add_loop_test(tc, test_every_function_works_on_initialised_attr, 0, N_ATTR_CALLS);
	tcase_add_test(tc, test_garbage_filled_attr_getname_is_einval);
	tcase_add_loop_test(tc, test_every_getter_null_output_is_einval, 0, N_GETTER_CALLS);

	tc = pt_tcase(s, "name");
	tcase_add_test(tc, test_setname_getname_round_trip);
	tcase_add_test(tc, test_setname_twice_keeps_last);
	tcase_add_test(tc, test_setname_empty_string);
	tcase_add_test(tc, test_setname_copies_the_string);
	tcase_add_test(tc, test_setname_63_chars_kept_whole);
	tcase_add_test(tc, test_setname_64_chars_truncated_to_63);
	tcase_add_test(tc, test_setname_very_long_truncated_to_63);
	tcase_add_test(tc, test_setname_null_name_is_einval);

	tc = pt_tcase(s, "read_only");
	tcase_add_test(tc, test_genversion_fits_trace_name_max);
	tcase_add_test(tc, test_genversion_unchanged_by_setters);
	tcase_add_test(tc, test_clockres_unchanged_by_setters);
	tcase_add_test(tc, test_clockres_is_a_valid_positive_timespec);

	tc = pt_tcase(s, "policies");
	tcase_add_loop_test(tc, test_setstreamfullpolicy_round_trip, 0,
	                    (int)(sizeof stream_policies / sizeof stream_policies[0]));
	tcase_add_loop_test(tc, test_setstreamfullpolicy_invalid_is_einval, 0,
	                    (int)(sizeof bad_stream_policies / sizeof bad_stream_policies[0]));
	tcase_add_loop_test(tc, test_setlogfullpolicy_round_trip, 0,
	                    (int)(sizeof log_policies / sizeof log_policies[0]));
	tcase_add_loop_test(tc, test_setlogfullpolicy_invalid_is_einval, 0,
	                    (int)(sizeof bad_log_policies / sizeof bad_log_policies[0]));
	tcase_add_test(tc, test_setinherited_inherited_round_trip);
	tcase_add_test(tc, test_setinherited_close_for_child_round_trip);
	tcase_add_loop_test(tc, test_setinherited_invalid_is_einval, 0,
	                    (int)(sizeof bad_inherit_policies / sizeof bad_inherit_policies[0]));

	tc = pt_tcase(s, "sizes");
	tcase_add_test(tc, test_setstreamsize_getstreamsize_round_trip);
	tcase_add_test(tc, test_setstreamsize_one_is_accepted);
	tcase_add_test(tc, test_setstreamsize_zero_is_einval);
	tcase_add_test(tc, test_setlogsize_getlogsize_round_trip);
	tcase_add_test(tc, test_setlogsize_zero_is_einval);
	tcase_add_loop_test(tc, test_setmaxdatasize_round_trip, 0,
	                    (int)(sizeof good_max_data_sizes / sizeof good_max_data_sizes[0]));
	tcase_add_test(tc, test_setmaxdatasize_above_1mib_is_einval);
	tcase_add_test(tc, test_setmaxdatasize_size_max_is_einval);

	tc = pt_tcase(s, "event_sizes");
	tcase_add_test(tc, test_maxsystemeventsize_is_272);
	tcase_add_test(tc, test_maxsystemeventsize_independent_of_maxdatasize);
	tcase_add_test(tc, test_maxusereventsize_zero_data_is_header_only);
	tcase_add_test(tc, test_maxusereventsize_rounds_data_up_to_8);
	tcase_add_test(tc, test_maxusereventsize_matches_formula_up_to_maxdatasize);
	tcase_add_test(tc, test_maxusereventsize_grows_with_data_len);
	tcase_add_test(tc, test_maxusereventsize_stays_constant_above_maxdatasize);
	tcase_add_test(tc, test_maxusereventsize_follows_setmaxdatasize);
	tcase_add_test(tc, test_maxusereventsize_with_maxdatasize_zero_is_header_only);
	tcase_add_test(tc, test_maxusereventsize_at_1mib_maxdatasize);

	tc = pt_tcase(s, "streams");
	tcase_add_test(tc, test_stream_keeps_name_after_attr_change);
	tcase_add_test(tc, test_stream_keeps_sizes_and_policies_after_attr_change);
	tcase_add_test(tc, test_stream_keeps_log_attrs_after_attr_change);
	tcase_add_test(tc, test_stream_unaffected_by_attr_destroy);
	tcase_add_test(tc, test_attr_reusable_for_two_streams);
	tcase_add_test(tc, test_stream_maxusereventsize_uses_stream_maxdatasize);
	tcase_add_test(tc, test_stream_createtime_is_realtime_at_create);
	tcase_add_test(tc, test_createtime_of_attr_used_for_create_stays_zero);
	tcase_add_test(tc, test_stream_genversion_and_clockres_are_the_defaults);
	tcase_add_test(tc, test_stream_from_null_attr_has_default_attrs);
	tcase_add_test(tc, test_create_with_zeroed_attr_is_einval);
	tcase_add_test(tc, test_create_with_destroyed_attr_is_einval);

	return pt_run(s);
}
