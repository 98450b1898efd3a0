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
bool parse_u64(const char *s, uint64_t *out)
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

uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
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

/* Text is shown as text when it is printable ASCII (a trailing NUL allowed,
 * since C strings are often posted with it); everything else in hex. */
bool is_printable_text(const unsigned char *data, size_t len)
{
	if (len && data[len - 1] == '\0')
		len--;
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++)
		if (!(printable(data[i]) || data[i] == '\t' || data[i] == '\n'))
			return false;
	return true;
}

/* The length of the data as text (without its trailing NUL), 0 if it is
 * not text. */
size_t text_length(const unsigned char *data, size_t len)
{
	if (!is_printable_text(data, len))
		return 0;
	return data[len - 1] == '\0' ? len - 1 : len;
}

/* Data of any length goes out through a buffer of this size: one stdio
 * call per chunk, not per byte. */
#define CHUNK 1024

void print_hex(FILE *out, const unsigned char *data, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char buf[CHUNK];
	size_t n = 0;
	for (size_t i = 0; i < len; i++) {
		if (n + 2 > sizeof buf) {
			fwrite(buf, 1, n, out);
			n = 0;
		}
		buf[n++] = digits[data[i] >> 4];
		buf[n++] = digits[data[i] & 15];
	}
	fwrite(buf, 1, n, out);
}

/* JSON strings: bytes outside printable ASCII are escaped as \u00XX so the
 * output is valid UTF-8 whatever the data. */
void print_json_string(FILE *out, const unsigned char *s, size_t len)
{
	static const char digits[] = "0123456789abcdef";
	char buf[CHUNK];
	size_t n = 0;
	buf[n++] = '"';
	for (size_t i = 0; i < len; i++) {
		unsigned char c = s[i];
		if (n + 7 > sizeof buf) { /* room for this byte and the closing quote */
			fwrite(buf, 1, n, out);
			n = 0;
		}
		if (c == '"' || c == '\\') {
			buf[n++] = '\\';
			buf[n++] = (char)c;
		} else if (c == '\n' || c == '\t') {
			buf[n++] = '\\';
			buf[n++] = c == '\n' ? 'n' : 't';
		} else if (!printable(c)) {
			memcpy(buf + n, "\\u00", 4);
			buf[n + 4] = digits[c >> 4];
			buf[n + 5] = digits[c & 15];
			n += 6;
		} else {
			buf[n++] = (char)c;
		}
	}
	buf[n++] = '"';
	fwrite(buf, 1, n, out);
}

/* Names from a log or a traced program, for a terminal: printable ASCII as
 * it is, a backslash doubled, any other byte as \xHH, so that no name can
 * move the cursor, retitle the terminal or start a line of its own.  Cut at
 * a whole escape when buf is too small. */
const char *escape_text(const char *s, char *buf, size_t size)
{
	static const char digits[] = "0123456789abcdef";
	size_t n = 0;
	if (!size)
		return buf;
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		size_t k = c == '\\' ? 2 : printable(c) ? 1 : 4;
		if (n + k >= size)
			break;
		if (k == 1) {
			buf[n] = (char)c;
		} else if (k == 2) {
			buf[n] = buf[n + 1] = '\\';
		} else {
			buf[n] = '\\';
			buf[n + 1] = 'x';
			buf[n + 2] = digits[c >> 4];
			buf[n + 3] = digits[c & 15];
		}
		n += k;
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

void progress_init(struct progress *p, const char *what, uint64_t total)
{
	p->enabled = total >= PROGRESS_MIN_EVENTS && isatty(STDERR_FILENO);
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
