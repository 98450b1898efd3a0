/*
 * One trace event as one line, in text (for people) or JSON (for scripts),
 * shared by `dump` and the live output of `attach`.
 */
#include <string.h>

#include "posixtrace.h"

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
	} else if (is_printable_text(ev->data, ev->len)) {
		size_t n = ev->data[ev->len - 1] == '\0' ? ev->len - 1 : ev->len;
		print_json_string(out, ev->data, n); /* quoted, escapes newlines */
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

static void print_text(FILE *out, const struct trace_event *ev,
                       uint64_t ns, uint64_t rel_ns)
{
	char abs[32], rel[32];
	format_time(ns, abs, sizeof abs);
	format_time(rel_ns, rel, sizeof rel);
	fprintf(out, "+%s %s %7d 0x%-14lx %-24s ", rel, abs, (int)ev->info.posix_pid,
	        (unsigned long)ev->info.posix_thread_id, ev->name);
	describe_data(out, ev);
	if (ev->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD)
		fputs(" [truncated when recorded]", out);
	else if (ev->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ)
		fputs(" [truncated on read]", out);
	fputc('\n', out);
}

static void print_json(FILE *out, const struct trace_event *ev,
                       uint64_t ns, uint64_t rel_ns)
{
	char abs[32], rel[32];
	format_time(ns, abs, sizeof abs);
	format_time(rel_ns, rel, sizeof rel);
	fprintf(out, "{\"ts\":%s,\"ts_ns\":%llu,\"rel\":%s,\"pid\":%d,\"thread\":\"0x%lx\","
	             "\"prog_address\":\"0x%lx\",\"id\":%u,\"name\":",
	        abs, (unsigned long long)ns, rel, (int)ev->info.posix_pid,
	        (unsigned long)ev->info.posix_thread_id,
	        (unsigned long)(uintptr_t)ev->info.posix_prog_address, ev->info.posix_event_id);
	print_json_string(out, (const unsigned char *)ev->name, strlen(ev->name));
	fprintf(out, ",\"len\":%zu,\"truncation\":\"%s\",\"data_hex\":\"", ev->len,
	        truncation_name(ev->info.posix_truncation_status));
	print_hex(out, ev->data, ev->len);
	fputc('"', out);
	if (is_printable_text(ev->data, ev->len)) {
		fputs(",\"text\":", out);
		print_json_string(out, ev->data,
		                  ev->data[ev->len - 1] == '\0' ? ev->len - 1 : ev->len);
	}
	fputs("}\n", out);
}

void print_event(struct event_printer *p, FILE *out, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	if (!p->have_first) {
		p->have_first = true;
		p->first_ns = ns;
	}
	/* never print a negative relative time (an OVERFLOW may predate the
	 * first event read) */
	uint64_t rel_ns = ns > p->first_ns ? ns - p->first_ns : 0;
	if (p->json)
		print_json(out, ev, ns, rel_ns);
	else
		print_text(out, ev, ns, rel_ns);
}
