/* SPDX-License-Identifier: MIT */
/*
 * t_toolutil: the lists of posixtrace(1)'s options (tools/util.c) when
 * memory runs out half-way.
 *
 * name_list_parse grows the list's array, then copies the name.  If the copy
 * (strdup) fails after the array has grown, the grown array must still be the
 * list's: realloc may have moved it and freed the old one, so a list that kept
 * the old pointer would hold a freed block.  Checked: after such a failure the
 * list holds exactly the names copied before, every pointer in it valid, its
 * array the one realloc returned last, and name_list_free releases everything
 * (a leak fails the test under AddressSanitizer).
 *
 * tools/util.c is compiled into this program with strdup and realloc
 * replaced, in that file only, by the two below: strdup fails on the call
 * the test chooses, realloc always moves the block (as realloc may), so a
 * stale pointer is certain to be a freed one.
 */
#include "harness.h"

#include <malloc.h>

/* ---- strdup and realloc for tools/util.c -------------------------------- */

static int strdup_calls;     /* calls since the test began */
static int strdup_fails_at;  /* this call (1, 2, ...) returns NULL; 0: none */
static void *last_realloc;   /* the block realloc returned last */

static char *failing_strdup(const char *s)
{
	if (++strdup_calls == strdup_fails_at) {
		errno = ENOMEM;
		return NULL;
	}
	size_t n = strlen(s) + 1;
	char *copy = malloc(n);
	if (copy)
		memcpy(copy, s, n);
	return copy;
}

/* A new block every time: the contents copied, the old block freed. */
static void *moving_realloc(void *old, size_t size)
{
	void *p = malloc(size);
	if (!p)
		return NULL;
	if (old) {
		size_t had = malloc_usable_size(old);
		memcpy(p, old, had < size ? had : size);
		free(old);
	}
	last_realloc = p;
	return p;
}

#define strdup failing_strdup
#define realloc moving_realloc
#include "../tools/util.c"
#undef strdup
#undef realloc

/* ---- helpers ------------------------------------------------------------ */

/* The next strdup call counted from now that is to fail (1: the next). */
static void fail_strdup_call(int nth)
{
	strdup_calls = 0;
	strdup_fails_at = nth;
}

/* list holds exactly names[0..count-1], in that order. */
static void assert_names(const struct name_list *list, const char *const *names, size_t count)
{
	ck_assert_uint_eq(list->count, count);
	for (size_t i = 0; i < count; i++) {
		ck_assert_ptr_nonnull(list->names[i]);
		ck_assert_str_eq(list->names[i], names[i]);
		ck_assert(name_list_has(list, names[i]));
	}
}

/* ---- name lists ---------------------------------------------------------- */

START_TEST(name_list_keeps_every_name)
{
	static const char *const want[] = {"alpha", "beta", "gamma"};
	struct name_list list = {0};
	fail_strdup_call(0);
	ck_assert(name_list_parse(&list, "alpha,beta,gamma"));
	assert_names(&list, want, 3);
	ck_assert(!name_list_has(&list, "delta"));
	name_list_free(&list);
	ck_assert_ptr_null(list.names);
	ck_assert_uint_eq(list.count, 0);
}
END_TEST

/* strdup calls: 1 copies the whole argument, 2.. copy the names. */
START_TEST(name_list_whole_after_the_first_name_copy_fails)
{
	struct name_list list = {0};
	fail_strdup_call(2);
	ck_assert(!name_list_parse(&list, "alpha,beta"));
	assert_names(&list, NULL, 0);
	ck_assert_ptr_eq(list.names, last_realloc); /* grown: the list's to free */
	ck_assert(!name_list_has(&list, "alpha"));
	name_list_free(&list);
	ck_assert_ptr_null(list.names);
}
END_TEST

START_TEST(name_list_whole_after_a_later_name_copy_fails)
{
	static const char *const want[] = {"alpha", "beta"};
	struct name_list list = {0};
	fail_strdup_call(4);
	ck_assert(!name_list_parse(&list, "alpha,beta,gamma,delta"));
	assert_names(&list, want, 2);
	ck_assert_ptr_eq(list.names, last_realloc);
	ck_assert(!name_list_has(&list, "gamma"));
	name_list_free(&list);
	ck_assert_ptr_null(list.names);
	ck_assert_uint_eq(list.count, 0);
}
END_TEST

/* A list that met a failure still takes more names (--only given twice). */
START_TEST(name_list_grows_again_after_a_failure)
{
	static const char *const want[] = {"alpha", "beta", "gamma"};
	struct name_list list = {0};
	fail_strdup_call(3);
	ck_assert(!name_list_parse(&list, "alpha,beta"));
	assert_names(&list, want, 1);
	fail_strdup_call(0);
	ck_assert(name_list_parse(&list, "beta,gamma"));
	assert_names(&list, want, 3);
	ck_assert_ptr_eq(list.names, last_realloc);
	name_list_free(&list);
}
END_TEST

START_TEST(name_list_untouched_when_the_argument_copy_fails)
{
	struct name_list list = {0};
	fail_strdup_call(1);
	ck_assert(!name_list_parse(&list, "alpha,beta"));
	ck_assert_ptr_null(list.names);
	ck_assert_uint_eq(list.count, 0);
}
END_TEST

START_TEST(name_list_rejects_a_name_too_long)
{
	char csv[TRACE_EVENT_NAME_MAX + 16];
	struct name_list list = {0};
	fail_strdup_call(0);
	strcpy(csv, "ok,");
	memset(csv + 3, 'x', TRACE_EVENT_NAME_MAX + 1);
	csv[3 + TRACE_EVENT_NAME_MAX + 1] = '\0';
	ck_assert(!name_list_parse(&list, csv));
	assert_names(&list, (const char *const[]){"ok"}, 1);
	name_list_free(&list);
}
END_TEST

START_TEST(name_list_rejects_an_empty_argument)
{
	struct name_list list = {0};
	fail_strdup_call(0);
	ck_assert(!name_list_parse(&list, ""));
	ck_assert(!name_list_parse(&list, ",,"));
	ck_assert_uint_eq(list.count, 0);
	name_list_free(&list);
}
END_TEST

/* ---- number lists --------------------------------------------------------- */

START_TEST(number_list_keeps_decimal_and_hex)
{
	struct number_list list = {0};
	fail_strdup_call(0);
	ck_assert(number_list_parse(&list, "12,0x10,7"));
	ck_assert_uint_eq(list.count, 3);
	ck_assert(number_list_has(&list, 12));
	ck_assert(number_list_has(&list, 16));
	ck_assert(number_list_has(&list, 7));
	ck_assert(!number_list_has(&list, 10));
	ck_assert(!number_list_parse(&list, "3,x"));
	ck_assert(number_list_has(&list, 3)); /* taken before the bad one */
	number_list_free(&list);
	ck_assert_ptr_null(list.values);
}
END_TEST

START_TEST(number_list_untouched_when_the_argument_copy_fails)
{
	struct number_list list = {0};
	fail_strdup_call(1);
	ck_assert(!number_list_parse(&list, "1,2"));
	ck_assert_ptr_null(list.values);
	ck_assert_uint_eq(list.count, 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toolutil");
	TCase *tc = pt_tcase(s, "name_list");
	tcase_add_test(tc, name_list_keeps_every_name);
	tcase_add_test(tc, name_list_whole_after_the_first_name_copy_fails);
	tcase_add_test(tc, name_list_whole_after_a_later_name_copy_fails);
	tcase_add_test(tc, name_list_grows_again_after_a_failure);
	tcase_add_test(tc, name_list_untouched_when_the_argument_copy_fails);
	tcase_add_test(tc, name_list_rejects_a_name_too_long);
	tcase_add_test(tc, name_list_rejects_an_empty_argument);
	tc = pt_tcase(s, "number_list");
	tcase_add_test(tc, number_list_keeps_decimal_and_hex);
	tcase_add_test(tc, number_list_untouched_when_the_argument_copy_fails);
	return pt_run(s);
}
