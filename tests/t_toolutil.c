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
 * The formatting helpers dump and convert build their output with (put_*,
 * is_printable_text, struct outbuf) are checked against printf and
 * byte-by-byte references, at the edges of every digit count and chunk,
 * cached times across every boundary of their cache, hex at every length
 * and alignment.
 *
 * The duration sketch stats keeps per row (tools/sketch.c): every bucket
 * holds exactly the values that map to it, the buckets tile 0 .. 2^64 - 1,
 * percentiles by nearest rank are within 1/128 of the exact ones on data
 * sets of several shapes, the count, min and max are exact, and the
 * counters held never pass SKETCH_BUCKETS whatever the values.
 *
 * tools/util.c is compiled into this program with strdup and realloc
 * replaced, in that file only, by the two below: strdup fails on the call
 * the test chooses, realloc always moves the block (as realloc may), so a
 * stale pointer is certain to be a freed one.
 */
#include "harness.h"

#include <malloc.h>
#include <math.h>

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
#include "../tools/tool.c" /* the slow halves of tool.h's inline functions */
#include "../tools/sketch.c"

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

/* ---- formatting ---------------------------------------------------------- */

/* Powers of ten and their neighbours, and a spread of other magnitudes. */
static uint64_t edge_value(int i)
{
	uint64_t p = 1;
	for (int k = 0; k < i / 3 && k < 19; k++)
		p *= 10;
	if (i >= 60)
		return (uint64_t)i * 0x9e3779b97f4a7c15ull >> (i % 64);
	return i % 3 == 0 ? p : i % 3 == 1 ? p - 1 : p + 1;
}

START_TEST(put_u64_int_and_hex_match_printf)
{
	char got[64], want[64];
	for (int i = 0; i < 400; i++) {
		uint64_t v = edge_value(i);
		*put_u64(got, v) = '\0';
		snprintf(want, sizeof want, "%llu", (unsigned long long)v);
		ck_assert_str_eq(got, want);
		*put_hex_u64(got, v) = '\0';
		snprintf(want, sizeof want, "0x%llx", (unsigned long long)v);
		ck_assert_str_eq(got, want);
		*put_int(got, (int)v) = '\0';
		snprintf(want, sizeof want, "%d", (int)v);
		ck_assert_str_eq(got, want);
	}
	*put_u64(got, UINT64_MAX) = '\0';
	ck_assert_str_eq(got, "18446744073709551615");
	*put_int(got, INT_MIN) = '\0';
	ck_assert_str_eq(got, "-2147483648");
	*put_hex_u64(got, 0) = '\0';
	ck_assert_str_eq(got, "0x0");
}
END_TEST

START_TEST(times_match_format_time)
{
	char got[64], want[64];
	struct time_cache cache = {0};
	for (int i = 0; i < 400; i++) {
		uint64_t ns = edge_value(i);
		format_time(ns, want, sizeof want);
		*put_time(got, ns) = '\0';
		ck_assert_str_eq(got, want);
		/* the cached seconds follow a change of their number of digits */
		*put_time_cached(got, ns, &cache) = '\0';
		ck_assert_str_eq(got, want);
		*put_time_cached(got, ns + 1, &cache) = '\0';
		format_time(ns + 1, want, sizeof want);
		ck_assert_str_eq(got, want);
		*put_micros(got, ns) = '\0';
		snprintf(want, sizeof want, "%llu.%03u", (unsigned long long)(ns / 1000),
		         (unsigned)(ns % 1000));
		ck_assert_str_eq(got, want);
	}
}
END_TEST

/* put_time_cached keeps the seconds and the first five digits of the
 * nanoseconds: times that step forward and back across every boundary of
 * its cache (10 us, 100 us ... a second, a new count of digits of the
 * seconds) read exactly as format_time() prints them. */
START_TEST(cached_times_across_every_boundary)
{
	static const uint64_t steps[] = {1, 9999, 10000, 10001, 99999, 100000, 999999999,
	                                 1000000000, 1000000001, 123456789};
	char got[64], want[64];
	struct time_cache cache = {0};
	uint64_t ns = 0;
	for (int i = 0; i < 4000; i++) {
		uint64_t step = steps[i % (sizeof steps / sizeof steps[0])];
		if (i % 7 == 3 && ns >= step)
			ns -= step; /* back, as a log's relative times may go */
		else
			ns += step * (uint64_t)(1 + i / 400);
		if (i % 500 == 499)
			ns = edge_value(i / 5) - (uint64_t)(i % 3); /* new digit counts */
		format_time(ns, want, sizeof want);
		*put_time_cached(got, ns, &cache) = '\0';
		ck_assert_str_eq(got, want);
	}
	*put_time_cached(got, UINT64_MAX, &cache) = '\0';
	format_time(UINT64_MAX, want, sizeof want);
	ck_assert_str_eq(got, want);
}
END_TEST

/* put_hex_bytes: every length (whole 16-byte blocks and the bytes after
 * them), at every alignment, every byte value, as printf's "%02x". */
START_TEST(hex_bytes_as_printf_at_every_length)
{
	unsigned char data[80];
	char got[2 * sizeof data + 1], want[2 * sizeof data + 1];
	for (int round = 0; round < 4; round++) {
		for (size_t i = 0; i < sizeof data; i++)
			data[i] = (unsigned char)(i * 37 + (size_t)round * 64 + i / 7);
		for (size_t at = 0; at < 16; at++)
			for (size_t len = 0; at + len <= sizeof data; len++) {
				*put_hex_bytes(got, data + at, len) = '\0';
				for (size_t i = 0; i < len; i++)
					snprintf(want + 2 * i, 3, "%02x", data[at + i]);
				want[2 * len] = '\0';
				ck_assert_str_eq(got, want);
			}
	}
}
END_TEST

/* The definition, one byte at a time. */
static bool reference_is_text(const unsigned char *d, size_t len)
{
	if (len && d[len - 1] == '\0')
		len--;
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		uint32_t code;
		size_t n = utf8_sequence(d + i, len - i, &code);
		if (n && !utf8_shown_escaped(code))
			i += n - 1;
		else if (!((d[i] >= 0x20 && d[i] < 0x7f) || d[i] == '\t' || d[i] == '\n'))
			return false;
	}
	return true;
}

START_TEST(printable_text_as_defined_at_every_position)
{
	static const unsigned char odd[] = {0x00, 0x01, 0x09, 0x0a, 0x0d, 0x1f, 0x20,
	                                    0x7e, 0x7f, 0x80, 0xa0, 0xff};
	unsigned char d[40];
	for (size_t len = 0; len <= 33; len++)
		for (size_t at = 0; at <= len; at++)
			for (size_t k = 0; k < sizeof odd; k++) {
				memset(d, 'x', sizeof d);
				if (at < len)
					d[at] = odd[k];
				ck_assert_int_eq(is_printable_text(d, len), reference_is_text(d, len));
				if (len)
					d[len - 1] = '\0';
				ck_assert_int_eq(is_printable_text(d, len), reference_is_text(d, len));
			}
	/* a character of 2, 3 or 4 bytes (valid, or cut by the end) anywhere,
	 * across the 8-byte words */
	static const char *chars[] = {"\xc3\xa9", "\xe6\x97\xa5", "\xf0\x9f\x98\x80", "\xc2\x9b"};
	for (size_t len = 1; len <= 33; len++)
		for (size_t at = 0; at < len; at++)
			for (size_t k = 0; k < sizeof chars / sizeof chars[0]; k++) {
				memset(d, 'x', sizeof d);
				size_t n = strlen(chars[k]);
				memcpy(d + at, chars[k], at + n <= len ? n : len - at);
				ck_assert_int_eq(is_printable_text(d, len), reference_is_text(d, len));
			}
}
END_TEST

START_TEST(escapes_of_every_byte)
{
	for (int c = 1; c < 256; c++) {
		char s[3] = {(char)c, 'a', '\0'}, want[16], got[16];
		escape_text(s, want, sizeof want);
		*put_escaped(got, s) = '\0';
		ck_assert_str_eq(got, want);
	}
	for (int c = 0; c < 256; c++) {
		unsigned char b = (unsigned char)c;
		char got[16], want[16];
		*put_json_chars(got, &b, 1) = '\0';
		if (c == '"' || c == '\\')
			snprintf(want, sizeof want, "\\%c", c);
		else if (c == '\n' || c == '\t')
			snprintf(want, sizeof want, "\\%c", c == '\n' ? 'n' : 't');
		else if (c < 0x20 || c == 0x7f)
			snprintf(want, sizeof want, "\\u%04x", c);
		else if (c > 0x7f) /* alone, no byte above 0x7f is UTF-8 */
			snprintf(want, sizeof want, "\\\\x%02x", c);
		else
			snprintf(want, sizeof want, "%c", c);
		ck_assert_str_eq(got, want);
	}
}
END_TEST

/* Names as users read them: valid UTF-8 (two, three and four bytes) is
 * kept as it is in text and JSON; invalid bytes (a lone continuation
 * byte, an overlong form, a surrogate, past U+10FFFF, a sequence cut
 * short) are escaped one by one, so names that differ are shown
 * differently; C1 controls and bidirectional overrides stay escaped. */
START_TEST(utf8_kept_invalid_bytes_escaped)
{
	static const struct {
		const char *in, *text, *json;
	} cases[] = {
		{"caf\xc3\xa9:cr\xc3\xa8me", "caf\xc3\xa9:cr\xc3\xa8me", "caf\xc3\xa9:cr\xc3\xa8me"},
		{"\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac", "\xe6\x97\xa5\xe6\x9c\xac"},
		{"\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!", "\xf0\x9f\x98\x80!"},
		{"a\x80" "b", "a\\x80b", "a\\\\x80b"},
		{"\xc0\xaf", "\\xc0\\xaf", "\\\\xc0\\\\xaf"},             /* overlong '/' */
		{"\xed\xa0\x80", "\\xed\\xa0\\x80", "\\\\xed\\\\xa0\\\\x80"}, /* U+D800 */
		{"\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80",
		 "\\\\xf4\\\\x90\\\\x80\\\\x80"},                        /* U+110000 */
		{"\xe6\x97", "\\xe6\\x97", "\\\\xe6\\\\x97"},               /* cut short */
		{"\xc2\x9b" "2J", "\\xc2\\x9b2J", "\\u009b2J"},                   /* C1 CSI */
		{"x\xe2\x80\xaey", "x\\xe2\\x80\\xaey", "x\\u202ey"},          /* RLO */
		{"a\\b", "a\\\\b", "a\\\\b"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char text[64], put[64], json[64];
		escape_text(cases[i].in, text, sizeof text);
		ck_assert_str_eq(text, cases[i].text);
		*put_escaped(put, cases[i].in) = '\0';
		ck_assert_str_eq(put, cases[i].text);
		*put_json_chars(json, (const unsigned char *)cases[i].in, strlen(cases[i].in)) = '\0';
		ck_assert_str_eq(json, cases[i].json);
	}
	/* cut at a whole character, never inside one */
	char small[5];
	ck_assert_str_eq(escape_text("ab\xe6\x97\xa5", small, sizeof small), "ab");
	ck_assert_str_eq(escape_text("\xe6\x97\xa5x", small, sizeof small), "\xe6\x97\xa5x");
	/* UTF-8 payloads are text; invalid or C1 ones are not */
	ck_assert(is_printable_text((const unsigned char *)"\xd0\xb7\xd0\xb0\xd0\xbf\xd1\x80\xd0\xbe\xd1\x81", 12));
	ck_assert(is_printable_text((const unsigned char *)"1234567\xe6\x97\xa5", 10));
	ck_assert(!is_printable_text((const unsigned char *)"1234567\xe6\x97", 9));
	ck_assert(!is_printable_text((const unsigned char *)"abcdefg\xc2\x9b", 9));
}
END_TEST

/* A JSON string written in chunks never cuts a character in two. */
START_TEST(json_string_chunks_keep_characters)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	ck_assert_ptr_nonnull(f);
	struct outbuf o;
	outbuf_init(&o, f);
	unsigned char data[3 * 5000];
	for (size_t i = 0; i < sizeof data; i += 3)
		memcpy(data + i, "\xe6\x97\xa5", 3);
	outbuf_json_string(&o, data, sizeof data);
	ck_assert(outbuf_flush(&o));
	outbuf_free(&o);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_ptr_null(memchr(text, '\\', size)); /* nothing escaped */
	ck_assert_uint_eq(size, sizeof data + 2);
	free(text);
}
END_TEST

/* Long pieces cross the flush size and the data chunks: what comes out is
 * what went in, in order. */
START_TEST(outbuf_writes_everything_in_order)
{
	char *text = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&text, &size);
	ck_assert_ptr_nonnull(f);
	struct outbuf o;
	outbuf_init(&o, f);
	size_t big = 3 * OUTBUF_FLUSH + 12345;
	unsigned char *data = malloc(big);
	ck_assert_ptr_nonnull(data);
	for (size_t i = 0; i < big; i++)
		data[i] = (unsigned char)(i * 7 + i / 251);
	outbuf_hex(&o, data, big);
	outbuf_json_string(&o, data, big);
	outbuf_write(&o, data, big);
	for (int i = 0; i < 100000; i++)
		outbuf_done(&o, put_u64(outbuf_room(&o, 24), (uint64_t)i));
	ck_assert(outbuf_flush(&o));
	outbuf_free(&o);
	ck_assert_int_eq(fclose(f), 0);

	char *want = malloc(JSON_CHARS_SIZE(big) + 2 * big + big + 2), *p = want;
	ck_assert_ptr_nonnull(want);
	p = put_hex_bytes(p, data, big);
	*p++ = '"';
	p = put_json_chars(p, data, big);
	*p++ = '"';
	memcpy(p, data, big);
	p += big;
	size_t head = (size_t)(p - want);
	ck_assert_uint_ge(size, head);
	ck_assert(memcmp(text, want, head) == 0);
	char *q = text + head;
	for (int i = 0; i < 100000; i++) {
		char num[24];
		size_t k = (size_t)(put_u64(num, (uint64_t)i) - num);
		ck_assert(memcmp(q, num, k) == 0);
		q += k;
	}
	ck_assert_uint_eq((size_t)(q - text), size);
	free(want);
	free(data);
	free(text);
}
END_TEST

/* ---- the duration sketch ------------------------------------------------ */

START_TEST(sketch_buckets_tile_every_value)
{
	ck_assert_uint_eq(sketch_bucket_low(0), 0);
	ck_assert_uint_eq(sketch_bucket_high(SKETCH_BUCKETS - 1), UINT64_MAX);
	for (size_t b = 0; b < SKETCH_BUCKETS; b++) {
		uint64_t low = sketch_bucket_low(b), high = sketch_bucket_high(b);
		ck_assert_uint_le(low, high);
		ck_assert_uint_eq(sketch_bucket(low), b);
		ck_assert_uint_eq(sketch_bucket(high), b);
		if (b + 1 < SKETCH_BUCKETS)
			ck_assert_uint_eq(high + 1, sketch_bucket_low(b + 1));
		/* the middle is within 1/128 of any value of the bucket */
		uint64_t mid = low + (high - low + 1) / 2;
		ck_assert((double)(mid - low) <= (double)low / 128 + 0.5);
		ck_assert((double)(high - mid) <= (double)low / 128 + 0.5);
	}
}
END_TEST

static uint64_t lcg_next(uint64_t *state)
{
	*state = *state * 6364136223846793005ull + 1442695040888963407ull;
	return *state >> 11;
}

static int by_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Values of one shape: 0 uniform below 100, 1 log-uniform over 12
 * decades, 2 a few distinct values, 3 a tail of huge ones. */
static uint64_t shaped(int shape, uint64_t *state)
{
	uint64_t r = lcg_next(state);
	switch (shape) {
	case 0: return r % 100;
	case 1: return (uint64_t)pow(10.0, (double)(r % 1000000) / 1000000.0 * 12.0);
	case 2: return 1000 + 1000 * (r % 4);
	default: return r % 100 ? 5000 + r % 300 : (r << 20);
	}
}

START_TEST(sketch_percentiles_within_1_of_128)
{
	const unsigned permille[] = {1, 10, 250, 500, 900, 990, 999, 1000};
	for (int shape = 0; shape < 4; shape++) {
		for (size_t n = 1; n <= 200000; n = n < 10 ? n + 1 : n * 7) {
			uint64_t state = 42 + n, *v = malloc(n * sizeof *v);
			struct sketch s = {0};
			ck_assert_ptr_nonnull(v);
			for (size_t i = 0; i < n; i++) {
				v[i] = shaped(shape, &state);
				sketch_add(&s, v[i]);
			}
			qsort(v, n, sizeof *v, by_u64);
			ck_assert_uint_eq(s.count, n);
			ck_assert_uint_eq(s.min, v[0]);
			ck_assert_uint_eq(s.max, v[n - 1]);
			ck_assert_uint_le(s.held, SKETCH_BUCKETS);
			for (size_t q = 0; q < sizeof permille / sizeof permille[0]; q++) {
				uint64_t rank = (n * permille[q] + 999) / 1000, exact = v[rank ? rank - 1 : 0];
				uint64_t got = sketch_quantile(&s, permille[q]);
				double off = got > exact ? (double)(got - exact) : (double)(exact - got);
				ck_assert_msg(off <= (double)exact / 128,
				              "shape %d, %zu values, %u permille: %llu, exact %llu", shape, n,
				              permille[q], (unsigned long long)got, (unsigned long long)exact);
			}
			uint64_t total = 0;
			for (size_t b = 0; b < SKETCH_BUCKETS; b++)
				total += sketch_count_at(&s, b);
			ck_assert_uint_eq(total, n);
			sketch_free(&s);
			free(v);
		}
	}
}
END_TEST

/* The widest range there is, met one value at a time from both ends: the
 * counters held stay within SKETCH_BUCKETS. */
START_TEST(sketch_memory_bounded_by_its_buckets)
{
	struct sketch s = {0};
	for (unsigned k = 0; k < 64; k++) {
		sketch_add(&s, 1ull << k);
		sketch_add(&s, UINT64_MAX >> k);
		ck_assert_uint_le(s.held, SKETCH_BUCKETS);
		ck_assert_uint_le(s.lo + s.held, SKETCH_BUCKETS);
	}
	sketch_add(&s, 0);
	ck_assert_uint_eq(s.count, 129);
	ck_assert_uint_eq(s.min, 0);
	ck_assert_uint_eq(s.max, UINT64_MAX);
	ck_assert_uint_eq(sketch_quantile(&s, 1000), UINT64_MAX);
	ck_assert_uint_eq(sketch_quantile(&s, 1), 0);
	sketch_free(&s);
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
	tc = pt_tcase(s, "formatting");
	tcase_add_test(tc, put_u64_int_and_hex_match_printf);
	tcase_add_test(tc, times_match_format_time);
	tcase_add_test(tc, cached_times_across_every_boundary);
	tcase_add_test(tc, hex_bytes_as_printf_at_every_length);
	tcase_add_test(tc, printable_text_as_defined_at_every_position);
	tcase_add_test(tc, escapes_of_every_byte);
	tcase_add_test(tc, utf8_kept_invalid_bytes_escaped);
	tcase_add_test(tc, json_string_chunks_keep_characters);
	tcase_add_test(tc, outbuf_writes_everything_in_order);
	tc = pt_tcase(s, "sketch");
	tcase_add_test(tc, sketch_buckets_tile_every_value);
	tcase_add_test(tc, sketch_percentiles_within_1_of_128);
	tcase_add_test(tc, sketch_memory_bounded_by_its_buckets);
	return pt_run(s);
}
