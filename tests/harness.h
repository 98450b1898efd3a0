/*
 * Shared by every test program: Check (each test forked, with a timeout)
 * plus small helpers.  A test program is one file tests/t_NAME.c whose main()
 * builds a suite and returns pt_run(suite).
 */
#ifndef PT_TEST_HARNESS_H
#define PT_TEST_HARNESS_H

#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>

#define PT_TEST_TIMEOUT 20 /* seconds, per test */

static inline TCase *pt_tcase(Suite *s, const char *name)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, PT_TEST_TIMEOUT);
	suite_add_tcase(s, tc);
	return tc;
}

static inline int pt_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* Asserts that a call returns the error number (not -1/errno) expected. */
#define ck_assert_err(call, expected)                                            \
	do {                                                                     \
		int pt_rc_ = (call);                                             \
		ck_assert_msg(pt_rc_ == (expected), "%s returned %d (%s), expected %d (%s)", \
		              #call, pt_rc_, strerror(pt_rc_), (int)(expected),  \
		              strerror(expected));                               \
	} while (0)

#define ck_assert_ok(call) ck_assert_err(call, 0)

#endif
