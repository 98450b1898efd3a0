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

static void print_text(const struct event_printer *p, FILE *out, const struct trace_event *ev,
                       uint64_t ns)
{
	char abs[64], rel[32], thread[96], name[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)];
	absolute_time(p, ns, abs, sizeof abs);
	if (event_has_time(ev))
		format_signed_time((int64_t)(ns - p->first_ns), rel, sizeof rel);
	else
		snprintf(rel, sizeof rel, "%-12s", "-"); /* no time to count from */
	format_thread(ev, thread, sizeof thread);
	fprintf(out, "%s %s %7d %-16s %-24s ", rel, abs, (int)ev->info.posix_pid, thread,
	        escape_text(ev->name, name, sizeof name));
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
