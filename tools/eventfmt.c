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

/* System events carry binary data the standard defines: decode it.  At
 * most SYSTEM_DESCRIPTION_MAX bytes; NULL when the data is not as defined. */
#define SYSTEM_DESCRIPTION_MAX 128
static char *put_system_data(char *p, const struct trace_event *ev)
{
	int v;
	size_t set = sizeof(trace_event_set_t);
	switch (ev->info.posix_event_id) {
	case POSIX_TRACE_START:
		if (ev->len != set)
			return NULL;
		p = put_int(put_str(p, "filter: "), popcount_set(ev->data));
		return put_str(p, " event types");
	case POSIX_TRACE_FILTER:
		if (ev->len != 2 * set)
			return NULL;
		p = put_int(put_str(p, "filter: "), popcount_set(ev->data));
		p = put_int(put_str(p, " -> "), popcount_set(ev->data + set));
		return put_str(p, " event types");
	case POSIX_TRACE_STOP:
		if (!int_data(ev, &v))
			return NULL;
		return put_str(p, v ? "automatic (stream full)" : "by the controller");
	case POSIX_TRACE_ERROR:
		if (!int_data(ev, &v))
			return NULL;
		return p + snprintf(p, SYSTEM_DESCRIPTION_MAX, "error %d: %.80s", v, strerror(v));
	default:
		return NULL;
	}
}

/* Data up to this length is formatted with the rest of its line, in one
 * piece of the output buffer; longer data goes in chunks. */
#define INLINE_DATA_MAX 1024

/* The data column: decoded for system events, quoted text (newlines
 * escaped) when printable, else hex, "-" when empty.  text is
 * text_length() of the data.  Room: INLINE_DATA_MAX-long data quoted. */
static char *put_data(char *p, const struct trace_event *ev, size_t text)
{
	char *described;
	if (is_system_event(ev->info.posix_event_id) && (described = put_system_data(p, ev)))
		return described;
	if (ev->len == 0) {
		*p++ = '-';
	} else if (text) {
		*p++ = '"';
		p = put_json_chars(p, ev->data, text);
		*p++ = '"';
	} else {
		*p++ = '0';
		*p++ = 'x';
		p = put_hex_bytes(p, ev->data, ev->len);
	}
	return p;
}

static void write_long_data(struct outbuf *o, const struct trace_event *ev, size_t text)
{
	if (text) {
		outbuf_json_string(o, ev->data, text);
	} else {
		outbuf_write(o, "0x", 2);
		outbuf_hex(o, ev->data, ev->len);
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

static char *put_truncation_mark(char *p, const struct trace_event *ev)
{
	if (ev->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD)
		p = put_str(p, " [truncated when recorded]");
	else if (ev->info.posix_truncation_status == POSIX_TRACE_TRUNCATED_READ)
		p = put_str(p, " [truncated on read]");
	return p;
}

/* What was written from start to end, then spaces up to width ("%-*s").
 * Room: width bytes after end (spaces are laid down in one go). */
static inline char *pad_to(char *start, char *end, size_t width)
{
	memset(end, ' ', width);
	return (size_t)(end - start) < width ? start + width : end;
}

/* The thread column: the kernel thread id (and name, escaped) when the
 * library gives them, else the pthread_t as posix_thread_id holds it;
 * padded to 16. */
static char *put_thread(char *p, const struct trace_event *ev)
{
	char *start = p;
	if (ev->tid) {
		p = put_int(p, (int)ev->tid);
		if (ev->comm[0]) {
			*p++ = '/';
			p = put_escaped(p, ev->comm);
		}
	} else {
		p = put_hex_u64(p, (unsigned long)ev->info.posix_thread_id);
	}
	return pad_to(start, p, 16);
}

/* "%s %s ": relative time, absolute time (or date). */
static char *put_columns(struct event_printer *pr, char *p, const struct trace_event *ev,
                         uint64_t ns)
{
	char *start = p;
	if (event_has_time(ev)) {
		uint64_t rel = ns - pr->first_ns;
		bool neg = (int64_t)rel < 0;
		*p++ = neg ? '-' : '+';
		p = put_time_cached(p, neg ? -rel : rel, &pr->rel_seconds);
	} else {
		*p++ = '-'; /* no time to count from */
		p = pad_to(start, p, 12);
	}
	*p++ = ' ';
	if (!pr->date || !format_date(ns, pr->utc, p, 64))
		p = put_time_cached(p, ns, &pr->abs_seconds);
	else
		p += strlen(p);
	*p++ = ' ';
	return p;
}

/* "%7d THREAD ": the pid, right-aligned, and the thread column. */
static char *put_pid_and_thread(char *p, const struct trace_event *ev)
{
	char pid[16], *pid_end = put_int(pid, (int)ev->info.posix_pid);
	size_t k = (size_t)(pid_end - pid);
	memset(p, ' ', 7);
	p += k < 7 ? 7 - k : 0;
	memcpy(p, pid, k);
	p += k;
	*p++ = ' ';
	p = put_thread(p, ev);
	*p++ = ' ';
	return p;
}

/* A thread's events come in runs: its columns are formatted once a run. */
static char *put_thread_columns(struct event_printer *pr, char *p, const struct trace_event *ev)
{
	struct thread_columns *c = &pr->last_thread;
	if (!c->valid || c->pid != ev->info.posix_pid || c->tid != ev->tid ||
	    c->thread != (unsigned long)ev->info.posix_thread_id ||
	    memcmp(c->comm, ev->comm, sizeof c->comm)) {
		c->valid = true;
		c->pid = ev->info.posix_pid;
		c->tid = ev->tid;
		c->thread = (unsigned long)ev->info.posix_thread_id;
		memcpy(c->comm, ev->comm, sizeof c->comm);
		c->len = (unsigned char)(put_pid_and_thread(c->text, ev) - c->text);
	}
	memcpy(p, c->text, sizeof c->text);
	return p + c->len;
}

/* "[%3d] " of the CPU, as perf script shows it ("[  -] " unknown). */
static char *put_cpu_column(char *p, const struct trace_event *ev)
{
	char num[16], *end = num;
	if (ev->cpu >= 0)
		end = put_int(num, ev->cpu);
	else
		*end++ = '-';
	size_t k = (size_t)(end - num);
	*p++ = '[';
	if (k < 3) {
		memset(p, ' ', 3 - k);
		p += 3 - k;
	}
	memcpy(p, num, k);
	p += k;
	*p++ = ']';
	*p++ = ' ';
	return p;
}

/* "%-24s " of the escaped name.  A log's events mostly come in runs of a
 * type: the column is formatted once a run.  The run is known by the id
 * and the name's address: name_cache_get() gives an id the same name at
 * the same address every time (a name of no type too: "event_ID"). */
static char *put_name_column(struct event_printer *pr, char *p, const struct trace_event *ev)
{
	struct name_column *c = &pr->last_name;
	if (c->name != ev->name || c->id != ev->info.posix_event_id) {
		char *end = pad_to(c->text, put_escaped(c->text, ev->name), 24);
		*end++ = ' ';
		c->len = (unsigned short)(end - c->text);
		c->name = ev->name;
		c->id = ev->info.posix_event_id;
	}
	if (c->len <= 32) {
		memcpy(p, c->text, 32); /* a fixed size: no call */
		return p + c->len;
	}
	memcpy(p, c->text, c->len);
	return p + c->len;
}

/* The columns, the name and the marks; the data is inline up to
 * INLINE_DATA_MAX bytes. */
#define TEXT_LINE_FIXED (2 * 36 + 64 + 2 * HOST_LABEL_MAX + THREAD_COLUMNS_MAX + \
                         ESCAPED_SIZE(TRACE_EVENT_NAME_MAX) + 24 + SYSTEM_DESCRIPTION_MAX + 64)

static void print_text(struct event_printer *pr, struct outbuf *o,
                       const struct trace_event *ev, uint64_t ns)
{
	size_t text = text_length(ev->data, ev->len);
	char *p = outbuf_room(o, TEXT_LINE_FIXED + 2 + JSON_CHARS_SIZE(INLINE_DATA_MAX));
	p = put_columns(pr, p, ev, ns);
	/* one host: no label, and no call an event to say so */
	const char *host = pr->log && pr->log->nhosts > 1 ? event_host_label(pr->log, ev) : NULL;
	if (host) /* several hosts: which one, before the pid, as wide as the widest */
		p = pad_to(p, put_str(p, host), pr->host_width);
	p = put_thread_columns(pr, p, ev);
	if (pr->cpu_column)
		p = put_cpu_column(p, ev);
	p = put_name_column(pr, p, ev);
	if (ev->len <= INLINE_DATA_MAX) { /* system events' data always is */
		p = put_data(p, ev, text);
	} else {
		outbuf_done(o, p);
		write_long_data(o, ev, text);
		p = outbuf_room(o, 64);
	}
	p = put_truncation_mark(p, ev);
	if (pr->site) {
		outbuf_done(o, p);
		p = outbuf_room(o, CALL_SITE_TEXT_MAX + 2);
		memcpy(p, pr->site->text, pr->site->text_len);
		p += pr->site->text_len;
	}
	*p++ = '\n';
	outbuf_done(o, p);
}

/* The JSON line's fields but its data, with room for INLINE_DATA_MAX
 * bytes of it in hex and as text. */
#define JSON_LINE_FIXED (400 + JSON_CHARS_SIZE(16) + JSON_CHARS_SIZE(TRACE_EVENT_NAME_MAX) + \
                         JSON_CHARS_SIZE(HOST_LABEL_MAX) + \
                         JSON_CHARS_SIZE(CALL_SITE_WHERE_MAX) +            \
                         2 * JSON_CHARS_SIZE(CALL_SITE_SOURCE_MAX))

static char *put_json_head(struct event_printer *pr, char *p,
                           const struct trace_event *ev, uint64_t ns)
{
	p = put_time_cached(put_str(p, "{\"ts\":"), ns, &pr->abs_seconds);
	p = put_u64(put_str(p, ",\"ts_ns\":"), ns);
	p = put_str(p, ",\"rel\":");
	if (event_has_time(ev)) {
		uint64_t rel = ns - pr->first_ns;
		bool neg = (int64_t)rel < 0;
		if (neg)
			*p++ = '-';
		p = put_time(p, neg ? -rel : rel);
	} else {
		p = put_str(p, "null");
	}
	*p++ = ',';
	if (pr->date && format_date(ns, pr->utc, p + 8, 64)) {
		memcpy(p, "\"date\":\"", 8);
		p += 8 + strlen(p + 8);
		p = put_str(p, "\",");
	}
	const char *host = pr->log ? event_host_label(pr->log, ev) : NULL;
	if (host) /* escaped as text already: only \\ and " need more */
		p = put_str(put_json_chars(put_str(p, "\"host\":\""), (const unsigned char *)host,
		                           strlen(host)), "\",");
	p = put_int(put_str(p, "\"pid\":"), (int)ev->info.posix_pid);
	p = put_hex_u64(put_str(p, ",\"thread\":\""), (unsigned long)ev->info.posix_thread_id);
	p = put_str(p, "\",");
	if (ev->tid) {
		p = put_int(put_str(p, "\"tid\":"), (int)ev->tid);
		p = put_str(p, ",\"comm\":\"");
		p = put_json_chars(p, (const unsigned char *)ev->comm, strlen(ev->comm));
		p = put_str(p, "\",");
	}
	if (ev->cpu >= 0)
		p = put_str(put_int(put_str(p, "\"cpu\":"), (int)ev->cpu), ",");
	p = put_hex_u64(put_str(p, "\"prog_address\":\""),
	                (unsigned long)(uintptr_t)ev->info.posix_prog_address);
	if (pr->site) {
		p = put_json_chars(put_str(p, "\",\"site\":\""), (const unsigned char *)pr->site->where,
		                   strlen(pr->site->where));
		if (pr->site->source[0])
			p = put_json_chars(put_str(p, "\",\"source\":\""),
			                   (const unsigned char *)pr->site->source,
			                   strlen(pr->site->source));
		if (pr->site->inlined[0])
			p = put_json_chars(put_str(p, "\",\"inlined\":\""),
			                   (const unsigned char *)pr->site->inlined,
			                   strlen(pr->site->inlined));
	}
	p = put_u64(put_str(p, "\",\"id\":"), ev->info.posix_event_id);
	p = put_str(p, ",\"name\":\"");
	p = put_json_chars(p, (const unsigned char *)ev->name, strlen(ev->name));
	p = put_u64(put_str(p, "\",\"len\":"), ev->len);
	p = put_str(p, ",\"truncation\":\"");
	p = put_str(p, truncation_name(ev->info.posix_truncation_status));
	return put_str(p, "\",\"data_hex\":\"");
}

static void print_json(struct event_printer *pr, struct outbuf *o,
                       const struct trace_event *ev, uint64_t ns)
{
	size_t text = text_length(ev->data, ev->len);
	char *p = outbuf_room(o, JSON_LINE_FIXED + 2 * INLINE_DATA_MAX +
	                             JSON_CHARS_SIZE(INLINE_DATA_MAX));
	p = put_json_head(pr, p, ev, ns);
	if (ev->len <= INLINE_DATA_MAX) {
		p = put_hex_bytes(p, ev->data, ev->len);
		if (text) {
			p = put_str(p, "\",\"text\":\"");
			p = put_json_chars(p, ev->data, text);
		}
		p = put_str(p, "\"}\n");
		outbuf_done(o, p);
		return;
	}
	outbuf_done(o, p);
	outbuf_hex(o, ev->data, ev->len);
	outbuf_write(o, "\"", 1);
	if (text) {
		outbuf_puts(o, ",\"text\":");
		outbuf_json_string(o, ev->data, text);
	}
	outbuf_write(o, "}\n", 2);
}

/* Without a base given, the first dated event is the base (live output). */
void print_event(struct event_printer *p, struct outbuf *o, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	if (p->log && !p->host_width)
		for (uint32_t h = 0; h < p->log->nhosts; h++) {
			size_t k = strlen(p->log->hosts[h].label) + 1;
			if (k > p->host_width)
				p->host_width = k;
		}
	if (!p->have_first && event_has_time(ev)) {
		p->have_first = true;
		p->first_ns = ns;
	}
	if (p->json)
		print_json(p, o, ev, ns);
	else
		print_text(p, o, ev, ns);
}
