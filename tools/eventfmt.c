/* SPDX-License-Identifier: MIT */
/*
 * One trace event as one line, in text (for people) or JSON (for scripts),
 * shared by `dump` and the live output of `attach`.  Times are printed as
 * the library gives them: relative times before the base are negative, and
 * an event without a time shows none.
 */
#include <string.h>

#include "tool.h"

static int popcount_set(const unsigned char *data)
{
	trace_event_set_t set;
	memcpy(&set, data, sizeof set);
	int n = 0;
	for (size_t i = 0; i < sizeof set.__bits / sizeof set.__bits[0]; i++)
		n += __builtin_popcountll(set.__bits[i]);
	return n;
}

static bool int_data(const struct trace_event *ev, int *v)
{
	if (ev->len != sizeof *v)
		return false;
	memcpy(v, ev->data, sizeof *v);
	return true;
}

/* System events carry binary data the standard defines: decode it. */
static bool describe_system_data(FILE *out, const struct trace_event *ev)
{
	int v;
	size_t set = sizeof(trace_event_set_t);
	switch (ev->info.posix_event_id) {
	case POSIX_TRACE_START:
		if (ev->len != set)
			return false;
		fprintf(out, "filter: %d event types", popcount_set(ev->data));
		return true;
	case POSIX_TRACE_FILTER:
		if (ev->len != 2 * set)
			return false;
		fprintf(out, "filter: %d -> %d event types", popcount_set(ev->data),
		        popcount_set(ev->data + set));
		return true;
	case POSIX_TRACE_STOP:
		if (!int_data(ev, &v))
			return false;
		fputs(v ? "automatic (stream full)" : "by the controller", out);
		return true;
	case POSIX_TRACE_ERROR:
		if (!int_data(ev, &v))
			return false;
		fprintf(out, "error %d: %s", v, strerror(v));
		return true;
	default:
		return false;
	}
}

void describe_data(FILE *out, const struct trace_event *ev)
{
	if (is_system_event(ev->info.posix_event_id) && describe_system_data(out, ev))
		return;
	if (ev->len == 0) {
		fputs("-", out);
	} else if (text_length(ev->data, ev->len)) {
		/* quoted, escapes newlines */
		print_json_string(out, ev->data, text_length(ev->data, ev->len));
	} else {
		fputs("0x", out);
		print_hex(out, ev->data, ev->len);
	}
}

static const char *truncation_name(int status)
{
	switch (status) {
	case POSIX_TRACE_TRUNCATED_RECORD: return "record";
	case POSIX_TRACE_TRUNCATED_READ: return "read";
	default: return "none";
	}
}

/* The absolute time: seconds since the Epoch, or a date. */
static void absolute_time(const struct event_printer *p, uint64_t ns, char *buf, size_t size)
{
	if (!p->date || !format_date(ns, p->utc, buf, size))
		format_time(ns, buf, size);
}

/* The line's fixed columns are built by hand: printf's parsing was most of
 * the time dump spent per event. */
static char *put_u64(char *p, uint64_t v)
{
	char tmp[20], *d = tmp + sizeof tmp;
	do
		*--d = (char)('0' + v % 10);
	while (v /= 10);
	size_t k = (size_t)(tmp + sizeof tmp - d);
	memcpy(p, d, k);
	return p + k;
}

/* "%llu.%09llu" of seconds and nanoseconds, as format_time. */
static char *put_time(char *p, uint64_t ns)
{
	uint32_t frac = (uint32_t)(ns % 1000000000u);
	p = put_u64(p, ns / 1000000000u);
	*p++ = '.';
	for (int i = 8; i >= 0; i--, frac /= 10)
		p[i] = (char)('0' + frac % 10);
	return p + 9;
}

static char *put_int(char *p, int v)
{
	if (v < 0)
		*p++ = '-';
	return put_u64(p, v < 0 ? -(uint64_t)(int64_t)v : (uint64_t)v);
}

/* s, then spaces up to width ("%-*s"). */
static char *put_left(char *p, const char *s, size_t width)
{
	size_t k = strlen(s);
	memcpy(p, s, k);
	for (; k < width; k++)
		p[k] = ' ';
	return p + k;
}

/* The thread column as format_thread() has it, the name escaped. */
static char *put_thread(char *p, const struct trace_event *ev)
{
	char *start = p;
	if (ev->tid) {
		p = put_int(p, (int)ev->tid);
		if (ev->comm[0]) {
			char comm[ESCAPED_SIZE(sizeof ev->comm)];
			*p++ = '/';
			p = put_left(p, escape_text(ev->comm, comm, sizeof comm), 0);
		}
	} else {
		static const char digits[] = "0123456789abcdef";
		unsigned long v = (unsigned long)ev->info.posix_thread_id;
		char tmp[16], *d = tmp + sizeof tmp;
		do
			*--d = digits[v & 15];
		while (v >>= 4);
		*p++ = '0';
		*p++ = 'x';
		memcpy(p, d, (size_t)(tmp + sizeof tmp - d));
		p += tmp + sizeof tmp - d;
	}
	while (p - start < 16)
		*p++ = ' ';
	return p;
}

/* "%s %s %7d ": relative time, absolute time, pid; returns the end. */
static char *put_columns(const struct event_printer *pr, char *p, const struct trace_event *ev,
                         uint64_t ns)
{
	char pid[16];
	if (event_has_time(ev)) {
		uint64_t rel = ns - pr->first_ns;
		bool neg = (int64_t)rel < 0;
		*p++ = neg ? '-' : '+';
		p = put_time(p, neg ? -rel : rel);
	} else {
		p = put_left(p, "-", 12); /* no time to count from */
	}
	*p++ = ' ';
	if (pr->date) {
		char abs[64];
		absolute_time(pr, ns, abs, sizeof abs);
		p = put_left(p, abs, 0);
	} else {
		p = put_time(p, ns);
	}
	*p++ = ' ';
	size_t k = (size_t)(put_int(pid, (int)ev->info.posix_pid) - pid);
	for (size_t pad = k; pad < 7; pad++)
		*p++ = ' ';
	memcpy(p, pid, k);
	return p + k;
}

static void print_text(const struct event_printer *p, FILE *out, const struct trace_event *ev,
                       uint64_t ns)
{
	char line[640], name[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)];
	char *end = put_columns(p, line, ev, ns);
	*end++ = ' ';
	end = put_thread(end, ev);
	*end++ = ' ';
	end = put_left(end, escape_text(ev->name, name, sizeof name), 24);
	*end++ = ' ';
	fwrite(line, 1, (size_t)(end - line), out);
	describe_data(out, ev);
	if (ev->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD)
		fputs(" [truncated when recorded]", out);
	else if (ev->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ)
		fputs(" [truncated on read]", out);
	fputc('\n', out);
}

static void print_json(const struct event_printer *p, FILE *out, const struct trace_event *ev,
                       uint64_t ns)
{
	char abs[64], rel[32];
	format_time(ns, abs, sizeof abs);
	if (event_has_time(ev))
		format_signed_time((int64_t)(ns - p->first_ns), rel, sizeof rel);
	else
		strcpy(rel, "null");
	fprintf(out, "{\"ts\":%s,\"ts_ns\":%llu,\"rel\":%s,", abs, (unsigned long long)ns,
	        rel[0] == '+' ? rel + 1 : rel);
	if (p->date && format_date(ns, p->utc, abs, sizeof abs))
		fprintf(out, "\"date\":\"%s\",", abs);
	fprintf(out, "\"pid\":%d,\"thread\":\"0x%lx\",", (int)ev->info.posix_pid,
	        (unsigned long)ev->info.posix_thread_id);
	if (ev->tid) {
		fprintf(out, "\"tid\":%d,\"comm\":", (int)ev->tid);
		print_json_string(out, (const unsigned char *)ev->comm, strlen(ev->comm));
		fputc(',', out);
	}
	fprintf(out, "\"prog_address\":\"0x%lx\",\"id\":%u,\"name\":",
	        (unsigned long)(uintptr_t)ev->info.posix_prog_address, ev->info.posix_event_id);
	print_json_string(out, (const unsigned char *)ev->name, strlen(ev->name));
	fprintf(out, ",\"len\":%zu,\"truncation\":\"%s\",\"data_hex\":\"", ev->len,
	        truncation_name(ev->info.posix_truncation_status));
	print_hex(out, ev->data, ev->len);
	fputc('"', out);
	size_t text = text_length(ev->data, ev->len);
	if (text) {
		fputs(",\"text\":", out);
		print_json_string(out, ev->data, text);
	}
	fputs("}\n", out);
}

/* Without a base given, the first dated event is the base (live output). */
void print_event(struct event_printer *p, FILE *out, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	if (!p->have_first && event_has_time(ev)) {
		p->have_first = true;
		p->first_ns = ns;
	}
	if (p->json)
		print_json(p, out, ev, ns);
	else
		print_text(p, out, ev, ns);
}
