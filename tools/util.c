/* SPDX-License-Identifier: MIT */
/*
 * Small helpers of posixtrace(1): messages, number parsing, time and data
 * formatting, name and number lists, stop signals and the progress line.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "tool.h"

volatile sig_atomic_t stop_requested;
volatile sig_atomic_t stop_signal_sent_by_process;

static void vmessage(const char *prefix, const char *fmt, va_list ap)
{
	fprintf(stderr, "%s: %s", PROG, prefix);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void error_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage("", fmt, ap);
	va_end(ap);
}

void note_msg(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmessage("note: ", fmt, ap);
	va_end(ap);
}

/* A usage error names the subcommand and points at its --help. */
int usage_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s %s: ", PROG, cmd);
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, " (try '%s %s --help')\n", PROG, cmd);
	va_end(ap);
	return EXIT_USAGE;
}

void *xmalloc(size_t size)
{
	return xrealloc(NULL, size);
}

void *xrealloc(void *p, size_t size)
{
	p = realloc(p, size ? size : 1);
	if (!p) {
		error_msg("out of memory");
		exit(EXIT_FAIL);
	}
	return p;
}

bool is_stdio_name(const char *path)
{
	return path[0] == '-' && path[1] == '\0';
}

/* Sizes accept a K, M or G suffix (powers of 1024). */
bool parse_size(const char *s, size_t *out)
{
	char *end;
	errno = 0;
	if (!s || !isdigit((unsigned char)*s))
		return false;
	unsigned long long v = strtoull(s, &end, 10);
	unsigned shift = 0;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	}
	if (*end == 'i' || *end == 'B')
		end += (*end == 'i' && end[1] == 'B') ? 2 : 1;
	if (errno || *end || v == 0 || (shift && v > (~0ULL >> shift)))
		return false;
	*out = (size_t)(v << shift);
	return true;
}

bool parse_seconds(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || v != v)
		return false;
	*out = v;
	return true;
}

/* A pid or a thread id: decimal, or hexadecimal after 0x (as dump prints
 * pthread_t values). */
static bool parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)*s))
		return false;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

uint64_t now_realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts_ns(&ts);
}

/* Seconds since the Epoch with nanoseconds, as babeltrace2 --clock-seconds. */
void format_time(uint64_t ns, char *buf, size_t size)
{
	snprintf(buf, size, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
	         (unsigned long long)(ns % 1000000000u));
}

/* Times before a base are negative: printed, not hidden. */
void format_signed_time(int64_t ns, char *buf, size_t size)
{
	uint64_t mag = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;
	snprintf(buf, size, "%c%llu.%09llu", ns < 0 ? '-' : '+',
	         (unsigned long long)(mag / 1000000000u), (unsigned long long)(mag % 1000000000u));
}

/* Date and time of day with nanoseconds, in the local time zone or UTC, as
 * babeltrace2 --clock-date (--clock-gmt). */
bool format_date(uint64_t ns, bool utc, char *buf, size_t size)
{
	time_t sec = (time_t)(ns / 1000000000u);
	struct tm tm;
	char day[40];
	if (!(utc ? gmtime_r(&sec, &tm) : localtime_r(&sec, &tm)) ||
	    !strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm))
		return false;
	snprintf(buf, size, "%s.%09u", day, (unsigned)(ns % 1000000000u));
	return true;
}

/* Printable ASCII (the C locale's isprint: the command sets no locale). */
static inline bool printable(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

/* ---- UTF-8 ----------------------------------------------------------------
 * Names and text are bytes; those that form valid UTF-8 (RFC 3629: no
 * overlong form, no surrogate, nothing past U+10FFFF) are shown as they
 * are, every other byte escaped. */

size_t utf8_sequence(const unsigned char *s, size_t len, uint32_t *code)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp, min;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, cp = c & 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, cp = c & 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, cp = c & 0x07, min = 0x10000;
	} else {
		return 0;
	}
	if (len < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	*code = cp;
	return n;
}

/* Characters a terminal acts on or that reorder or break what is shown
 * around them: the C1 controls, the bidirectional formatting characters
 * (the "Trojan Source" ones) and the line and paragraph separators. */
bool utf8_shown_escaped(uint32_t code)
{
	return (code >= 0x80 && code <= 0x9f) || code == 0x200e || code == 0x200f ||
	       (code >= 0x2028 && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069);
}

/* The length of the character at s to show as it is (printable ASCII, or
 * a valid UTF-8 sequence not shown escaped), 0 for a byte to escape. */
static size_t shown_as_is(const unsigned char *s, size_t len)
{
	uint32_t code;
	size_t n;
	if (s[0] < 0x80)
		return printable(s[0]);
	n = utf8_sequence(s, len, &code);
	return n && !utf8_shown_escaped(code) ? n : 0;
}

/* Whether a word's 8 bytes are all printable: no byte below 0x20 and none
 * above 0x7e (the bit tricks of "Bit Twiddling Hacks", exact for a whole
 * word). */
static inline __attribute__((always_inline)) bool word_printable(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t below = (x - ones * 0x20) & ~x & highs;
	uint64_t above = ((x + ones * (127 - 0x7e)) | x) & highs;
	return !(below | above);
}

/* The length of the text character at s: printable ASCII, a tab, a
 * newline or UTF-8 shown as it is; 0 if it is not text. */
static size_t text_char(const unsigned char *s, size_t len)
{
	return s[0] == '\t' || s[0] == '\n' ? 1 : shown_as_is(s, len);
}

/* Text is shown as text when it is printable ASCII or UTF-8 (tabs and
 * newlines allowed, a trailing NUL too, since C strings are often posted
 * with it); everything else in hex.  Eight bytes are looked at a time; a
 * word with anything else character by character. */
bool is_printable_text(const unsigned char *data, size_t len)
{
	size_t i = 0;
	if (len && data[len - 1] == '\0')
		len--;
	if (len == 0)
		return false;
	while (i + 8 <= len) {
		uint64_t x;
		memcpy(&x, data + i, 8);
		if (word_printable(x)) {
			i += 8;
			continue;
		}
		if (word_has_control(x))
			return false;
		/* a character may run past the word: the next word starts after it */
		for (size_t end = i + 8; i < end;) {
			size_t k = text_char(data + i, len - i);
			if (!k)
				return false;
			i += k;
		}
	}
	while (i < len) {
		size_t k = text_char(data + i, len - i);
		if (!k)
			return false;
		i += k;
	}
	return true;
}

/* ---- formatting into memory ----------------------------------------------
 * The put_* functions write at p (the caller has made the room) and return
 * the end: the outputs are built per event with no stdio call per field and
 * no printf parsing, which were most of what dump and convert cost. */

static const char hex_digits[] = "0123456789abcdef";

static unsigned decimal_digits(uint64_t v)
{
	static const uint64_t powers[20] = {
		1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
		100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull};
	/* log10(2) is about 1233 / 4096: the digits of 2^bits, maybe one more */
	unsigned t = (unsigned)(64 - __builtin_clzll(v | 1)) * 1233 >> 12;
	unsigned n = t + (v >= powers[t]);
	return n ? n : 1;
}

/* Written from its end straight into place (a memcpy of a variable length
 * was a library call per number), four digits per long division. */
static char *put_u64_long(char *p, uint64_t v)
{
	char *end = p + decimal_digits(v), *d = end;
	for (; v >= 10000; v /= 10000) {
		d -= 4;
		put_four_digits(d, (uint32_t)(v % 10000));
	}
	if (v >= 100) {
		d -= 2;
		memcpy(d, digit_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10)
		memcpy(d - 2, digit_pairs + 2 * v, 2);
	else
		d[-1] = (char)('0' + v);
	return end;
}

/* Ids, lengths and flags are mostly one digit or two: those take no
 * division loop.  A function of util.c, not an inline of tool.h, which
 * util.c includes: the command's files make no circle. */
char *put_u64(char *p, uint64_t v)
{
	if (v >= 100)
		return put_u64_long(p, v);
	if (v >= 10)
		*p++ = (char)('0' + v / 10);
	*p++ = (char)('0' + v % 10);
	return p;
}

char *put_int(char *p, int v)
{
	if (v < 0)
		*p++ = '-';
	return put_u64(p, v < 0 ? -(uint64_t)(int64_t)v : (uint64_t)v);
}

/* "%09u" of v < 10^9, in two halves that do not wait for each other. */
static char *put_nine_digits(char *p, uint32_t v)
{
	uint32_t low8 = v % 100000000u;
	p[0] = (char)('0' + v / 100000000u);
	put_four_digits(p + 1, low8 / 10000);
	put_four_digits(p + 5, low8 % 10000);
	return p + 9;
}

/* "%llu.%09llu" of seconds and nanoseconds, as format_time(). */
char *put_time(char *p, uint64_t ns)
{
	p = put_u64(p, ns / 1000000000u);
	*p++ = '.';
	return put_nine_digits(p, (uint32_t)(ns % 1000000000u));
}

/* "%llu.%03u" of microseconds and nanoseconds. */
char *put_micros(char *p, uint64_t ns)
{
	uint32_t frac = (uint32_t)(ns % 1000);
	p = put_u64(p, ns / 1000);
	p[0] = '.';
	p[1] = (char)('0' + frac / 100);
	memcpy(p + 2, digit_pairs + 2 * (frac % 100), 2);
	return p + 4;
}

/* "0x%lx" */
char *put_hex_u64(char *p, uint64_t v)
{
	unsigned bits = 64 - (unsigned)__builtin_clzll(v | 1);
	char *end = p + 2 + (bits + 3) / 4, *d = end;
	p[0] = '0';
	p[1] = 'x';
	do
		*--d = hex_digits[v & 15];
	while (v >>= 4);
	return end;
}

/* Each byte's two hex digits, one copy per byte. */
static const char hex_pairs[513] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
	"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
	"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
	"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
	"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
	"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

#ifdef __SSE2__
/* 16 bytes as 32 hex digits: the nibbles of every byte at once. */
static void put_hex16(char *p, const unsigned char *data)
{
	__m128i v = _mm_loadu_si128((const __m128i *)(const void *)data);
	__m128i nibble = _mm_set1_epi8(0x0f);
	__m128i high = _mm_and_si128(_mm_srli_epi16(v, 4), nibble);
	__m128i low = _mm_and_si128(v, nibble);
	__m128i first = _mm_unpacklo_epi8(high, low), second = _mm_unpackhi_epi8(high, low);
	__m128i zero = _mm_set1_epi8('0'), nine = _mm_set1_epi8(9);
	__m128i letters = _mm_set1_epi8('a' - '0' - 10);
	first = _mm_add_epi8(_mm_add_epi8(first, zero),
	                     _mm_and_si128(_mm_cmpgt_epi8(first, nine), letters));
	second = _mm_add_epi8(_mm_add_epi8(second, zero),
	                      _mm_and_si128(_mm_cmpgt_epi8(second, nine), letters));
	_mm_storeu_si128((__m128i *)(void *)p, first);
	_mm_storeu_si128((__m128i *)(void *)(p + 16), second);
}
#endif

/* Room: 2 * len. */
char *put_hex_bytes(char *p, const unsigned char *data, size_t len)
{
	size_t i = 0;
#ifdef __SSE2__
	if (len == 16) { /* the common payload: no loop */
		put_hex16(p, data);
		return p + 32;
	}
	for (; i + 16 <= len; i += 16)
		put_hex16(p + 2 * i, data + i);
#endif
	for (; i < len; i++)
		memcpy(p + 2 * i, hex_pairs + 2 * data[i], 2);
	return p + 2 * len;
}

static char *put_byte_escape(char *p, unsigned char c)
{
	p[0] = '\\';
	p[1] = 'x';
	p[2] = hex_digits[c >> 4];
	p[3] = hex_digits[c & 15];
	return p + 4;
}

/* put_json_chars past ASCII (out of line: it keeps that loop short): the
 * UTF-8 character at s (len bytes left) as it is (or \uXXXX), *used its
 * bytes; a byte that starts none as the text \xHH. */
static __attribute__((noinline)) char *put_json_utf8(char *p, const unsigned char *s, size_t len,
                                                     size_t *used)
{
	uint32_t code;
	size_t n = utf8_sequence(s, len, &code);
	*used = n ? n : 1;
	if (n == 0) {
		*p++ = '\\';
		return put_byte_escape(p, s[0]);
	}
	if (utf8_shown_escaped(code)) {
		p = put_str(p, "\\u");
		for (int shift = 12; shift >= 0; shift -= 4)
			*p++ = hex_digits[code >> shift & 15];
		return p;
	}
	memcpy(p, s, n);
	return p + n;
}

/* The inside of a JSON string (room: JSON_CHARS_SIZE(len)): printable
 * ASCII and valid UTF-8 as they are (the characters utf8_shown_escaped
 * names as \uXXXX), '"' and '\\' and control characters with JSON's
 * escapes, and each byte that is not valid UTF-8 as the text \xHH (in the
 * JSON, \\xHH): the output is valid UTF-8 and valid JSON whatever the bytes. */
char *put_json_chars(char *p, const unsigned char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		if (printable(c) && c != '"' && c != '\\') {
			*p++ = (char)c;
		} else if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else if (c == '\n' || c == '\t') {
			*p++ = '\\';
			*p++ = c == '\n' ? 'n' : 't';
		} else if (c < 0x80) {
			memcpy(p, "\\u00", 4);
			p[4] = hex_digits[c >> 4];
			p[5] = hex_digits[c & 15];
			p += 6;
		} else {
			size_t used;
			p = put_json_utf8(p, s + i, len - i, &used);
			i += used - 1;
		}
	}
	return p;
}

/* s as a terminal may show it (room: ESCAPED_SIZE(strlen(s))): printable
 * ASCII and UTF-8 as they are (but the characters utf8_shown_escaped
 * names), a backslash doubled, any other byte as \xHH, so that no name can
 * move the cursor, retitle the terminal or start a line of its own, and
 * names that differ are shown differently. */
/* Past put_escaped's common case (out of line: it keeps that loop short):
 * the UTF-8 character at *u as it is, or its first byte as \xHH. */
static __attribute__((noinline)) char *put_other_char(char *p, const unsigned char **u)
{
	size_t n = shown_as_is(*u, 4); /* a NUL ends a sequence: 4 is safe */
	if (!n) {
		p = put_byte_escape(p, **u);
		n = 1;
	} else {
		memcpy(p, *u, n);
		p += n;
	}
	*u += n;
	return p;
}

char *put_escaped(char *p, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	for (unsigned char c; (c = *u) != '\0';) {
		if (printable(c) && c != '\\') { /* most names are all this */
			*p++ = (char)c;
			u++;
		} else if (c == '\\') {
			*p++ = '\\';
			*p++ = '\\';
			u++;
		} else {
			p = put_other_char(p, &u);
		}
	}
	return p;
}

/* ---- buffered output -----------------------------------------------------
 * Output is gathered in memory and written in pieces of OUTBUF_FLUSH
 * bytes or more.  The buffer never grows: data of any length is written in
 * chunks, and one reservation is at most OUTBUF_ROOM_MAX bytes. */

#define DATA_CHUNK 1024 /* bytes of data formatted per reservation */

void outbuf_init(struct outbuf *o, FILE *out)
{
	o->out = out;
	o->len = 0;
	o->failed = false;
	o->err = 0;
	o->buf = xmalloc(OUTBUF_FLUSH + OUTBUF_ROOM_MAX);
}

void outbuf_write(struct outbuf *o, const void *s, size_t n)
{
	while (n) {
		size_t k = n < OUTBUF_ROOM_MAX ? n : OUTBUF_ROOM_MAX;
		char *p = outbuf_room(o, k);
		memcpy(p, s, k);
		outbuf_done(o, p + k);
		s = (const char *)s + k;
		n -= k;
	}
}

void outbuf_puts(struct outbuf *o, const char *s)
{
	outbuf_write(o, s, strlen(s));
}

void outbuf_hex(struct outbuf *o, const unsigned char *data, size_t len)
{
	do {
		size_t k = len < DATA_CHUNK ? len : DATA_CHUNK;
		outbuf_done(o, put_hex_bytes(outbuf_room(o, 2 * k), data, k));
		data += k;
		len -= k;
	} while (len);
}

/* A JSON string, quotes included. */
void outbuf_json_string(struct outbuf *o, const unsigned char *s, size_t len)
{
	outbuf_write(o, "\"", 1);
	do {
		size_t k = len < DATA_CHUNK ? len : DATA_CHUNK;
		/* a chunk ends before a character cut by it (at most 3 bytes back) */
		for (size_t back = 0; k < len && back < 3 && (s[k] & 0xc0) == 0x80; back++)
			k--;
		outbuf_done(o, put_json_chars(outbuf_room(o, JSON_CHARS_SIZE(k)), s, k));
		s += k;
		len -= k;
	} while (len);
	outbuf_write(o, "\"", 1);
}

void outbuf_free(struct outbuf *o)
{
	free(o->buf);
	o->buf = NULL;
}

/* Names from a log or a traced program, for a terminal: put_escaped() into
 * buf, cut at a whole character or escape when buf is too small. */
const char *escape_text(const char *s, char *buf, size_t size)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = 0, left = strlen(s);
	if (!size)
		return buf;
	while (left) {
		size_t in = *u == '\\' ? 0 : shown_as_is(u, left);
		size_t out = *u == '\\' ? 2 : in ? in : 4;
		if (n + out >= size)
			break;
		if (*u == '\\') {
			buf[n] = buf[n + 1] = '\\';
			in = 1;
		} else if (in) {
			memcpy(buf + n, u, in);
		} else {
			put_byte_escape(buf + n, *u);
			in = 1;
		}
		n += out;
		u += in;
		left -= in;
	}
	buf[n] = '\0';
	return buf;
}

const char *policy_name(int policy)
{
	switch (policy) {
	case POSIX_TRACE_LOOP: return "loop";
	case POSIX_TRACE_UNTIL_FULL: return "until-full";
	case POSIX_TRACE_FLUSH: return "flush";
	case POSIX_TRACE_APPEND: return "append";
	default: return "?";
	}
}

bool name_list_parse(struct name_list *list, const char *csv)
{
	char *copy = strdup(csv), *save = NULL;
	if (!copy)
		return false;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (strlen(tok) > TRACE_EVENT_NAME_MAX) {
			free(copy);
			return false;
		}
		/* The grown array is stored before strdup can fail: realloc may
		 * have freed the old one (tests/t_toolutil.c). */
		list->names = xrealloc(list->names, (list->count + 1) * sizeof *list->names);
		if (!(list->names[list->count] = strdup(tok))) {
			free(copy);
			return false;
		}
		list->count++;
	}
	free(copy);
	return list->count > 0;
}

bool name_list_has(const struct name_list *list, const char *name)
{
	for (size_t i = 0; i < list->count; i++)
		if (strcmp(list->names[i], name) == 0)
			return true;
	return false;
}

void name_list_free(struct name_list *list)
{
	for (size_t i = 0; i < list->count; i++)
		free(list->names[i]);
	free(list->names);
	list->names = NULL;
	list->count = 0;
}

bool number_list_parse(struct number_list *list, const char *csv)
{
	char *copy = strdup(csv), *save = NULL;
	if (!copy)
		return false;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		if (!parse_u64(tok, &v)) {
			free(copy);
			return false;
		}
		list->values = xrealloc(list->values, (list->count + 1) * sizeof *list->values);
		list->values[list->count++] = v;
	}
	free(copy);
	return list->count > 0;
}

bool number_list_has(const struct number_list *list, uint64_t value)
{
	for (size_t i = 0; i < list->count; i++)
		if (list->values[i] == value)
			return true;
	return false;
}

void number_list_free(struct number_list *list)
{
	free(list->values);
	list->values = NULL;
	list->count = 0;
}

/* A terminal's Ctrl-C reaches the whole foreground process group; a signal
 * sent with kill(2) reaches only us, and the caller may want to pass it on. */
static void on_stop_signal(int sig, siginfo_t *info, void *context)
{
	(void)context;
	stop_requested = sig;
	if (info && info->si_code == SI_USER)
		stop_signal_sent_by_process = 1;
}

/* No SA_RESTART: a blocking wait returns EINTR so the caller can stop. */
void install_stop_handlers(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = on_stop_signal;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

#define PROGRESS_MIN_EVENTS 100000 /* smaller logs convert in a blink */

bool progress_wanted(void)
{
	return isatty(STDERR_FILENO);
}

void progress_init(struct progress *p, const char *what, uint64_t total)
{
	p->enabled = total >= PROGRESS_MIN_EVENTS && progress_wanted();
	p->total = total;
	p->done = 0;
	p->last_ns = 0;
	p->what = what;
}

void progress_step(struct progress *p)
{
	p->done++;
	if (!p->enabled || (p->done & 1023))
		return;
	uint64_t now = now_realtime_ns();
	if (now - p->last_ns < 200000000u)
		return; /* redraw at most five times a second */
	p->last_ns = now;
	fprintf(stderr, "\r%s: %s %llu/%llu events (%u%%)", PROG, p->what,
	        (unsigned long long)p->done, (unsigned long long)p->total,
	        (unsigned)(p->done * 100 / (p->total ? p->total : 1)));
}

void progress_end(struct progress *p)
{
	if (p->enabled)
		fprintf(stderr, "\r%s: %s %llu events (100%%)\n", PROG, p->what,
		        (unsigned long long)p->done);
}
