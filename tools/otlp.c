/* SPDX-License-Identifier: MIT */
/*
 * A log as OTLP traces and logs (the OpenTelemetry protocol's protobuf
 * messages; docs/OTLP.md lists every field number with the upstream file
 * and commit it was read at, tests/otlp/otlp_subset.proto is the subset).
 *
 * Begin/end pairs (pairs.c's rules, as convert uses them) become spans,
 * nested by thread: the innermost span open on the thread is a span's
 * parent.  A begin whose end never comes also opens a span, marked
 * posixtrace.unfinished: it ends with the span that encloses it, or at the
 * log's last time.  Every other user event is an event of the innermost
 * open span of its thread, or, when none is open, a log record; system
 * events (START, STOP, OVERFLOW, ERROR, ...) are log records with a
 * severity.  A last record, "posixtrace log summary", tells the log's lost
 * events and damage.
 *
 * Ids are stable: a log's key is a SHA-256 of what names it (its trace
 * name, first time, number of events, controller), a span's id the
 * SplitMix64 finaliser of that key and the index of its begin event in the
 * log, a top-level span's trace id (or the log's, --trace-per-log) the
 * same of the key and the index with two other constants.  Exporting the
 * same log again gives the same ids.
 *
 * Live (record and attach --otlp, otlplive.c): the files of a rotated log
 * as they are completed, in one pass: every begin opens a span, an end
 * closes the span of the begin pairs.c's pairer matched it with, the spans
 * opened inside it end with it unfinished (as the first pass would have
 * left them); the open spans go on from one file to the next.
 *
 * Memory: a thread's open spans (each with its attributes and at most
 * OTLP_EVENTS_PER_SPAN events: more become log records linked to it),
 * at most OTLP_OPEN_SPANS_MAX unfinished ones in all (past it a begin is an
 * event), and one batch per signal: at most batch_spans items and
 * batch_bytes bytes of encoded items (an item larger than that goes alone).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include "otlp.h"
#include "protowire.h"

/* ExportTraceServiceRequest, ExportLogsServiceRequest */
#define F_REQUEST_RESOURCE 1 /* resource_spans, resource_logs */
/* ResourceSpans, ResourceLogs */
#define F_RESOURCE 1
#define F_RESOURCE_SCOPE 2 /* scope_spans, scope_logs */
/* Resource */
#define F_RESOURCE_ATTRIBUTES 1
/* ScopeSpans, ScopeLogs */
#define F_SCOPE 1
#define F_SCOPE_ITEMS 2 /* spans, log_records */
/* InstrumentationScope */
#define F_SCOPE_NAME 1
#define F_SCOPE_VERSION 2
/* Span */
#define F_SPAN_TRACE_ID 1
#define F_SPAN_ID 2
#define F_SPAN_PARENT_ID 4
#define F_SPAN_NAME 5
#define F_SPAN_KIND 6
#define F_SPAN_START 7 /* fixed64 */
#define F_SPAN_END 8   /* fixed64 */
#define F_SPAN_ATTRIBUTES 9
#define F_SPAN_EVENTS 11
#define SPAN_KIND_INTERNAL 1
/* Span.Event */
#define F_EVENT_TIME 1 /* fixed64 */
#define F_EVENT_NAME 2
#define F_EVENT_ATTRIBUTES 3
/* LogRecord */
#define F_RECORD_TIME 1 /* fixed64 */
#define F_RECORD_SEVERITY_NUMBER 2
#define F_RECORD_SEVERITY_TEXT 3
#define F_RECORD_BODY 5
#define F_RECORD_ATTRIBUTES 6
#define F_RECORD_TRACE_ID 9
#define F_RECORD_SPAN_ID 10
#define F_RECORD_EVENT_NAME 12
#define SEVERITY_INFO 9
#define SEVERITY_WARN 13
#define SEVERITY_ERROR 17
/* KeyValue, AnyValue */
#define F_KV_KEY 1
#define F_KV_VALUE 2
#define F_ANY_STRING 1
#define F_ANY_BOOL 2
#define F_ANY_INT 3

#define PB_I64 1 /* wire type of fixed64 */
#define NAME_SIZE (TRACE_EVENT_NAME_MAX + 1)
/* A log's items are grouped per process; the bytes of a process's
 * resource and scope counted against the batch's bound. */
#define RESOURCE_ROOM 1024

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static uint8_t *buf_room(struct buf *b, size_t n)
{
	if (b->cap - b->len < n) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap - b->len < n)
			cap *= 2;
		b->p = xrealloc(b->p, cap);
		b->cap = cap;
	}
	return b->p + b->len;
}

/* n bytes of src at p (src may be NULL when n is 0: an empty buffer) */
static uint8_t *put_raw(uint8_t *p, const void *src, size_t n)
{
	if (n)
		memcpy(p, src, n);
	return p + n;
}

static void buf_done(struct buf *b, uint8_t *end)
{
	b->len = (size_t)(end - b->p);
}

struct otlp_process {
	pid_t pid;
	char exe[16];  /* the name of its main thread, or of its first named one */
	bool exe_main; /* exe is the main thread's */
	struct buf items[OTLP_SIGNALS]; /* encoded spans, log records of this batch */
	uint64_t count[OTLP_SIGNALS];
	bool listed[OTLP_SIGNALS];
};

struct open_span {
	uint64_t span_id, parent_id; /* parent 0: none */
	uint8_t trace_id[16];
	uint64_t start_ns, begin_index;
	bool unfinished;
	bool counted; /* against OTLP_OPEN_SPANS_MAX */
	char name[NAME_SIZE];
	struct buf attrs, events; /* encoded KeyValue (9) and Event (11) fields */
	uint32_t nevents;
};

struct otlp_thread {
	size_t process;
	pid_t tid;
	char comm[16];
	struct open_span *stack; /* kept allocated: their buffers are reused */
	size_t depth, cap;
};

struct batch {
	size_t *processes; /* listed, by index */
	size_t nprocesses, cap;
	uint64_t count;
	size_t bytes;
};

struct otlp_exporter {
	const struct otlp_options *o;
	struct otlp_sender *sender;
	struct otlp_totals totals;
	char host_name[256], host_id[33]; /* this machine's, or --host-name */
	/* per log */
	char log_host_name[HOST_LABEL_MAX], log_host_id[33]; /* its host record's, when it has one */
	struct trace_log *log;
	struct site_table *sites;
	struct pairing *pairing;
	char trace_name[TRACE_NAME_MAX];
	uint64_t key, last_ns, undated;
	uint8_t log_trace_id[16];
	pid_t controller;
	struct thread_table threads, pids;
	struct otlp_thread *thread;
	size_t thread_cap;
	struct otlp_process *process;
	size_t process_cap;
	size_t capped_open; /* spans open that count against OTLP_OPEN_SPANS_MAX */
	bool live;          /* otlp_live_begin: no first pass, spans carried across files */
	struct pairer *pairer; /* live: the ends matched to their begins as they come */
	uint64_t live_index;   /* live: the index of the next event of the recording */
	struct batch batch[OTLP_SIGNALS];
	struct buf request, scratch;
};

/* ---- protobuf pieces --------------------------------------------------- */

static size_t field_size(uint32_t field, size_t len)
{
	return pb_varint_size((uint64_t)field << 3) + pb_varint_size(len) + len;
}

static uint8_t *pb_head(uint8_t *p, uint32_t field, size_t len)
{
	return pb_varint(pb_key(p, field, PB_LEN), len);
}

static uint8_t *pb_fixed64(uint8_t *p, uint32_t field, uint64_t v)
{
	p = pb_key(p, field, PB_I64);
	for (int i = 0; i < 8; i++)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static uint8_t *pb_id(uint8_t *p, uint32_t field, uint64_t id)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(id >> (56 - 8 * i));
	return pb_bytes(p, field, b, sizeof b);
}

/* A KeyValue (field `field`) with a string value; the value is written
 * by put (text as it is, or hex) into vlen bytes. */
static uint8_t *kv_head(uint8_t *p, uint32_t field, const char *key, size_t vfield_len)
{
	size_t klen = strlen(key);
	size_t any = vfield_len, kv = field_size(F_KV_KEY, klen) + field_size(F_KV_VALUE, any);
	p = pb_head(p, field, kv);
	p = pb_bytes(p, F_KV_KEY, key, klen);
	return pb_head(p, F_KV_VALUE, any);
}

static uint8_t *kv_string(uint8_t *p, uint32_t field, const char *key, const void *v, size_t n)
{
	p = kv_head(p, field, key, field_size(F_ANY_STRING, n));
	return pb_bytes(p, F_ANY_STRING, v, n);
}

static uint8_t *kv_hex(uint8_t *p, uint32_t field, const char *key, const void *v, size_t n)
{
	p = kv_head(p, field, key, field_size(F_ANY_STRING, 2 * n));
	p = pb_head(p, F_ANY_STRING, 2 * n);
	return (uint8_t *)put_hex_bytes((char *)p, v, n);
}

static uint8_t *kv_int(uint8_t *p, uint32_t field, const char *key, int64_t v)
{
	p = kv_head(p, field, key, 1 + pb_varint_size((uint64_t)v));
	return pb_uint(p, F_ANY_INT, (uint64_t)v);
}

static uint8_t *kv_bool(uint8_t *p, uint32_t field, const char *key, bool v)
{
	p = kv_head(p, field, key, 2);
	return pb_uint(p, F_ANY_BOOL, v);
}

/* ---- ids ---------------------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ull;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t derived_id(uint64_t key, uint64_t index, uint64_t salt)
{
	uint64_t id = mix64(key ^ mix64(index * 4 + salt));
	return id ? id : 1; /* an all-zero id is invalid */
}

static void put_trace_id(uint8_t id[16], uint64_t key, uint64_t index)
{
	uint64_t hi = derived_id(key, index, 1), lo = derived_id(key, index, 2);
	for (int i = 0; i < 8; i++) {
		id[i] = (uint8_t)(hi >> (56 - 8 * i));
		id[8 + i] = (uint8_t)(lo >> (56 - 8 * i));
	}
}

/* FNV-1a over the bytes, then the finaliser: a key that tells logs apart
 * (no secret is in it, so no cryptographic hash is needed). */
static uint64_t key_add(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return h;
}

static uint64_t log_key(struct otlp_exporter *x, const struct log_overview *ov)
{
	uint64_t words[3] = {ov->first_ns, ov->count, (uint64_t)(int64_t)ov->controller};
	uint64_t h = key_add(0xcbf29ce484222325ULL, "posixtrace log", 15);
	h = key_add(h, x->trace_name, strlen(x->trace_name) + 1);
	return mix64(key_add(h, words, sizeof words));
}

/* ---- attributes of an event ---------------------------------------------- */

/* "FILE:LINE" split; the line 0 when there is none. */
static size_t split_source(const char *source, unsigned *line)
{
	const char *colon = strrchr(source, ':');
	size_t len = strlen(source);
	*line = 0;
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) > 9)
		return len;
	*line = (unsigned)strtoul(colon + 1, NULL, 10);
	return (size_t)(colon - source);
}

/* The room the attributes of an event may need, its data aside. */
#define ATTRS_FIXED_MAX (1024 + CALL_SITE_WHERE_MAX + CALL_SITE_SOURCE_MAX + CALL_SITE_INLINED_MAX)

static uint8_t *put_site(uint8_t *p, uint32_t field, const struct call_site *c)
{
	unsigned line;
	size_t file_len = split_source(c->source, &line);
	/* the line of an inlined call is in the inlined function's code */
	const char *function = c->inlined[0] ? c->inlined : c->where;
	p = kv_string(p, field, "code.function.name", function, strlen(function));
	if (c->inlined[0])
		p = kv_string(p, field, "posixtrace.inlined_into", c->where, strlen(c->where));
	if (file_len)
		p = kv_string(p, field, "code.file.path", c->source, file_len);
	if (line)
		p = kv_int(p, field, "code.line.number", line);
	return p;
}

static uint8_t *put_data(uint8_t *p, uint32_t field, const struct trace_event *ev, bool end)
{
	size_t text = text_length(ev->data, ev->len);
	if (text)
		p = kv_string(p, field, end ? "posixtrace.end_data" : "posixtrace.data", ev->data, text);
	else if (ev->len)
		p = kv_hex(p, field, end ? "posixtrace.end_data_hex" : "posixtrace.data_hex", ev->data,
		           ev->len);
	if (ev->info.posix_truncation_status)
		p = kv_int(p, field, end ? "posixtrace.end_truncation" : "posixtrace.truncation",
		           (int64_t)ev->info.posix_truncation_status);
	return p;
}

static uint8_t *put_thread(uint8_t *p, uint32_t field, const struct otlp_thread *t)
{
	if (t->tid)
		p = kv_int(p, field, "thread.id", t->tid);
	if (t->comm[0])
		p = kv_string(p, field, "thread.name", t->comm, strnlen(t->comm, sizeof t->comm));
	return p;
}

static uint8_t *put_event_attrs(struct otlp_exporter *x, uint8_t *p, uint32_t field,
                                const struct trace_event *ev, const struct otlp_thread *t,
                                bool undated)
{
	const struct call_site *site = site_of(x->sites, ev);
	if (t)
		p = put_thread(p, field, t);
	if (site)
		p = put_site(p, field, site);
	p = put_data(p, field, ev, false);
	if (undated)
		p = kv_bool(p, field, "posixtrace.undated", true);
	return p;
}

/* ---- batches ------------------------------------------------------------- */

static size_t resource_attrs(struct otlp_exporter *x, const struct otlp_process *pr, uint8_t *p)
{
	uint8_t *start = p;
	const char *service = x->o->service_name ? x->o->service_name
	                      : x->trace_name[0]  ? x->trace_name
	                                          : "posixtrace";
	char version[32];
	snprintf(version, sizeof version, "%d.%d.%d", POSIXTRACE_VERSION_MAJOR,
	         POSIXTRACE_VERSION_MINOR, POSIXTRACE_VERSION_PATCH);
	p = kv_string(p, F_RESOURCE_ATTRIBUTES, "service.name", service, strlen(service));
	p = kv_string(p, F_RESOURCE_ATTRIBUTES, "host.name", x->log_host_name,
	              strlen(x->log_host_name));
	if (x->log_host_id[0])
		p = kv_string(p, F_RESOURCE_ATTRIBUTES, "host.id", x->log_host_id,
		              strlen(x->log_host_id));
	p = kv_int(p, F_RESOURCE_ATTRIBUTES, "process.pid", pr->pid);
	if (pr->exe[0])
		p = kv_string(p, F_RESOURCE_ATTRIBUTES, "process.executable.name", pr->exe,
		              strnlen(pr->exe, sizeof pr->exe));
	p = kv_string(p, F_RESOURCE_ATTRIBUTES, "telemetry.sdk.name", "posixtrace", 10);
	p = kv_string(p, F_RESOURCE_ATTRIBUTES, "telemetry.sdk.language", "c", 1);
	p = kv_string(p, F_RESOURCE_ATTRIBUTES, "telemetry.sdk.version", version, strlen(version));
	return (size_t)(p - start);
}

static size_t scope_fields(uint8_t *p)
{
	uint8_t *start = p;
	char version[32];
	snprintf(version, sizeof version, "%d.%d.%d", POSIXTRACE_VERSION_MAJOR,
	         POSIXTRACE_VERSION_MINOR, POSIXTRACE_VERSION_PATCH);
	p = pb_string(p, F_SCOPE_NAME, "posixtrace");
	p = pb_string(p, F_SCOPE_VERSION, version);
	return (size_t)(p - start);
}

/* The request of a batch: a ResourceSpans (ResourceLogs) per process, its
 * resource, one scope, its items; sent, then the batch is empty. */
static void flush(struct otlp_exporter *x, enum otlp_signal sig)
{
	struct batch *b = &x->batch[sig];
	if (!b->count)
		return;
	x->request.len = 0;
	for (size_t i = 0; i < b->nprocesses; i++) {
		struct otlp_process *pr = &x->process[b->processes[i]];
		uint8_t res[RESOURCE_ROOM], scope[128];
		size_t rlen = resource_attrs(x, pr, res), slen = scope_fields(scope);
		size_t scope_len = field_size(F_SCOPE, slen) + pr->items[sig].len;
		size_t rs_len = field_size(F_RESOURCE, rlen) + field_size(F_RESOURCE_SCOPE, scope_len);
		uint8_t *p = buf_room(&x->request, field_size(F_REQUEST_RESOURCE, rs_len));
		p = pb_head(p, F_REQUEST_RESOURCE, rs_len);
		p = pb_bytes(p, F_RESOURCE, res, rlen);
		p = pb_head(p, F_RESOURCE_SCOPE, scope_len);
		p = pb_bytes(p, F_SCOPE, scope, slen);
		memcpy(p, pr->items[sig].p, pr->items[sig].len);
		buf_done(&x->request, p + pr->items[sig].len);
		pr->items[sig].len = 0;
		pr->count[sig] = 0;
		pr->listed[sig] = false;
	}
	otlp_send(x->sender, sig, x->request.p, x->request.len, b->count);
	b->nprocesses = 0;
	b->count = 0;
	b->bytes = 0;
}

/* After an item was appended at `from` in the process's buffer: counted in
 * the batch; a batch it would make too large is sent first without it. */
static void item_added(struct otlp_exporter *x, enum otlp_signal sig, size_t proc, size_t from)
{
	struct batch *b = &x->batch[sig];
	struct otlp_process *pr = &x->process[proc];
	size_t n = pr->items[sig].len - from, extra = pr->listed[sig] ? 0 : RESOURCE_ROOM;
	if (b->count && b->bytes + n + extra > x->o->batch_bytes) {
		x->scratch.len = 0;
		memcpy(buf_room(&x->scratch, n), pr->items[sig].p + from, n);
		pr->items[sig].len = from;
		flush(x, sig);
		memcpy(buf_room(&pr->items[sig], n), x->scratch.p, n);
		pr->items[sig].len = n;
		extra = RESOURCE_ROOM;
	}
	if (!pr->listed[sig]) {
		pr->listed[sig] = true;
		if (b->nprocesses == b->cap) {
			b->cap = b->cap ? 2 * b->cap : 16;
			b->processes = xrealloc(b->processes, b->cap * sizeof *b->processes);
		}
		b->processes[b->nprocesses++] = proc;
	}
	pr->count[sig]++;
	b->count++;
	b->bytes += n + extra;
	if (b->count >= x->o->batch_spans || b->bytes >= x->o->batch_bytes)
		flush(x, sig);
}

/* ---- processes and threads ------------------------------------------------ */

static size_t process_of(struct otlp_exporter *x, pid_t pid)
{
	bool added;
	size_t i = thread_table_index(&x->pids, 0, pid, 0, &added);
	grow_zeroed((void **)&x->process, &x->process_cap, i, sizeof *x->process);
	if (added)
		x->process[i].pid = pid;
	return i;
}

static struct otlp_thread *thread_of(struct otlp_exporter *x, const struct trace_event *ev)
{
	if (!event_has_thread(ev))
		return NULL;
	bool added;
	size_t i = thread_table_of(&x->threads, ev, &added);
	grow_zeroed((void **)&x->thread, &x->thread_cap, i, sizeof *x->thread);
	struct otlp_thread *t = &x->thread[i];
	if (added) {
		/* the log is read without thread names: asked for once a thread */
		struct trace_event named = *ev;
		read_event_ext(x->log->trid, &named);
		t->tid = named.tid;
		memcpy(t->comm, named.comm, sizeof t->comm);
		t->process = process_of(x, ev->info.posix_pid);
		struct otlp_process *pr = &x->process[t->process];
		bool main_thread = named.tid && named.tid == ev->info.posix_pid;
		if (named.comm[0] && (!pr->exe[0] || (main_thread && !pr->exe_main))) {
			memcpy(pr->exe, named.comm, sizeof pr->exe);
			pr->exe_main = main_thread;
		}
	}
	return t;
}

/* ---- spans ---------------------------------------------------------------- */

static void open_span(struct otlp_exporter *x, struct otlp_thread *t, const struct trace_event *ev,
                      uint64_t index, uint64_t ns, const char *slice, bool unfinished,
                      bool undated)
{
	if (t->depth == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 4;
		t->stack = xrealloc(t->stack, cap * sizeof *t->stack);
		memset(t->stack + t->cap, 0, (cap - t->cap) * sizeof *t->stack);
		t->cap = cap;
	}
	struct open_span *parent = t->depth ? &t->stack[t->depth - 1] : NULL;
	struct open_span *s = &t->stack[t->depth++];
	s->span_id = derived_id(x->key, index, 0);
	s->parent_id = parent ? parent->span_id : 0;
	if (parent)
		memcpy(s->trace_id, parent->trace_id, sizeof s->trace_id);
	else if (x->o->trace_per_log)
		memcpy(s->trace_id, x->log_trace_id, sizeof s->trace_id);
	else
		put_trace_id(s->trace_id, x->key, index);
	s->start_ns = ns;
	s->begin_index = index;
	s->unfinished = unfinished;
	s->counted = unfinished || x->live;
	snprintf(s->name, sizeof s->name, "%s", slice);
	s->attrs.len = s->events.len = 0;
	s->nevents = 0;
	uint8_t *p = buf_room(&s->attrs, ATTRS_FIXED_MAX + 2 * ev->len + 64);
	p = put_event_attrs(x, p, F_SPAN_ATTRIBUTES, ev, t, undated);
	p = kv_string(p, F_SPAN_ATTRIBUTES, "posixtrace.begin", ev->name, strlen(ev->name));
	buf_done(&s->attrs, p);
	if (s->counted)
		x->capped_open++;
}

/* The innermost open span of t ends at ns; end, the event that ends it
 * (NULL: none, an unfinished span). */
static void close_span(struct otlp_exporter *x, struct otlp_thread *t, uint64_t ns,
                       const struct trace_event *end)
{
	struct open_span *s = &t->stack[--t->depth];
	if (s->counted)
		x->capped_open--;
	if (s->unfinished) {
		x->totals.unfinished++;
		uint8_t *p = buf_room(&s->attrs, 64);
		buf_done(&s->attrs, kv_bool(p, F_SPAN_ATTRIBUTES, "posixtrace.unfinished", true));
	} else if (end) {
		uint8_t *p = buf_room(&s->attrs, ATTRS_FIXED_MAX + 2 * end->len);
		p = kv_string(p, F_SPAN_ATTRIBUTES, "posixtrace.end", end->name, strlen(end->name));
		buf_done(&s->attrs, put_data(p, F_SPAN_ATTRIBUTES, end, true));
	}
	size_t name_len = strlen(s->name);
	size_t len = 18 + 10 + (s->parent_id ? 10 : 0) + field_size(F_SPAN_NAME, name_len) + 2 +
	             9 + 9 + s->attrs.len + s->events.len;
	struct buf *out = &x->process[t->process].items[OTLP_TRACES];
	size_t from = out->len;
	uint8_t *p = pb_head(buf_room(out, field_size(F_SCOPE_ITEMS, len)), F_SCOPE_ITEMS, len);
	p = pb_bytes(p, F_SPAN_TRACE_ID, s->trace_id, 16);
	p = pb_id(p, F_SPAN_ID, s->span_id);
	if (s->parent_id)
		p = pb_id(p, F_SPAN_PARENT_ID, s->parent_id);
	p = pb_bytes(p, F_SPAN_NAME, s->name, name_len);
	p = pb_uint(p, F_SPAN_KIND, SPAN_KIND_INTERNAL);
	p = pb_fixed64(p, F_SPAN_START, s->start_ns);
	p = pb_fixed64(p, F_SPAN_END, ns < s->start_ns ? s->start_ns : ns);
	p = put_raw(p, s->attrs.p, s->attrs.len);
	p = put_raw(p, s->events.p, s->events.len);
	buf_done(out, p);
	x->totals.spans++;
	item_added(x, OTLP_TRACES, t->process, from);
}

/* An end closes the innermost paired span; the unfinished ones open inside
 * it end with it. */
static void end_span(struct otlp_exporter *x, struct otlp_thread *t, uint64_t ns,
                     const struct trace_event *ev)
{
	while (t->depth && t->stack[t->depth - 1].unfinished)
		close_span(x, t, ns, NULL);
	if (t->depth)
		close_span(x, t, ns, ev);
}

static void event_record(struct otlp_exporter *x, const struct trace_event *ev,
                         struct otlp_thread *t, uint64_t ns, bool undated,
                         const struct open_span *in);

/* An event of the innermost span of t; past OTLP_EVENTS_PER_SPAN, a record
 * linked to the span (its trace and span ids), so that none is dropped. */
static void span_event(struct otlp_exporter *x, struct otlp_thread *t,
                       const struct trace_event *ev, uint64_t ns, bool undated)
{
	struct open_span *s = &t->stack[t->depth - 1];
	if (s->nevents >= OTLP_EVENTS_PER_SPAN) {
		x->totals.linked_records++;
		event_record(x, ev, t, ns, undated, s);
		return;
	}
	s->nevents++;
	x->totals.span_events++;
	uint8_t attrs[ATTRS_FIXED_MAX];
	size_t name_len = strlen(ev->name);
	size_t room = ATTRS_FIXED_MAX + 2 * ev->len + name_len;
	uint8_t *big = room > sizeof attrs ? xmalloc(room) : NULL, *a = big ? big : attrs;
	size_t alen = (size_t)(put_event_attrs(x, a, F_EVENT_ATTRIBUTES, ev, NULL, undated) - a);
	size_t len = 9 + field_size(F_EVENT_NAME, name_len) + alen;
	uint8_t *p = pb_head(buf_room(&s->events, field_size(F_SPAN_EVENTS, len)), F_SPAN_EVENTS, len);
	p = pb_fixed64(p, F_EVENT_TIME, ns);
	p = pb_bytes(p, F_EVENT_NAME, ev->name, name_len);
	memcpy(p, a, alen);
	buf_done(&s->events, p + alen);
	free(big);
}

/* ---- log records ------------------------------------------------------------ */

static unsigned severity_of(const struct trace_event *ev, const char **text)
{
	trace_event_id_t id = ev->info.posix_event_id;
	if (id == POSIX_TRACE_ERROR) {
		*text = "ERROR";
		return SEVERITY_ERROR;
	}
	if (id == POSIX_TRACE_OVERFLOW) {
		*text = "WARN";
		return SEVERITY_WARN;
	}
	*text = "INFO";
	return SEVERITY_INFO;
}

/* What a record says beside its event's attributes. */
struct record_info {
	uint64_t ns;
	bool undated;
	unsigned severity;
	const char *severity_text, *name;
	const struct open_span *span; /* the span it belongs to, or NULL */
};

/* A record of ev (or, ev NULL, the log's summary, its attributes given). */
static void log_record(struct otlp_exporter *x, size_t proc, const struct trace_event *ev,
                       const struct otlp_thread *t, const struct record_info *r,
                       const uint8_t *extra, size_t extra_len)
{
	size_t name_len = strlen(r->name), stext_len = strlen(r->severity_text);
	size_t room = ATTRS_FIXED_MAX + (ev ? 2 * ev->len : 0);
	uint8_t attrs[ATTRS_FIXED_MAX];
	uint8_t *big = room > sizeof attrs ? xmalloc(room) : NULL, *a = big ? big : attrs;
	size_t alen = ev ? (size_t)(put_event_attrs(x, a, F_RECORD_ATTRIBUTES, ev, t, r->undated) - a)
	                 : 0;
	size_t body = field_size(F_ANY_STRING, name_len);
	size_t len = 9 + 2 + field_size(F_RECORD_SEVERITY_TEXT, stext_len) +
	             field_size(F_RECORD_BODY, body) + alen + extra_len + (r->span ? 18 + 10 : 0) +
	             field_size(F_RECORD_EVENT_NAME, name_len);
	struct buf *out = &x->process[proc].items[OTLP_LOGS];
	size_t from = out->len;
	uint8_t *p = pb_head(buf_room(out, field_size(F_SCOPE_ITEMS, len)), F_SCOPE_ITEMS, len);
	p = pb_fixed64(p, F_RECORD_TIME, r->ns);
	p = pb_uint(p, F_RECORD_SEVERITY_NUMBER, r->severity);
	p = pb_bytes(p, F_RECORD_SEVERITY_TEXT, r->severity_text, stext_len);
	p = pb_bytes(pb_head(p, F_RECORD_BODY, body), F_ANY_STRING, r->name, name_len);
	p = put_raw(p, a, alen);
	p = put_raw(p, extra, extra_len);
	if (r->span) {
		p = pb_bytes(p, F_RECORD_TRACE_ID, r->span->trace_id, 16);
		p = pb_id(p, F_RECORD_SPAN_ID, r->span->span_id);
	}
	p = pb_bytes(p, F_RECORD_EVENT_NAME, r->name, name_len);
	buf_done(out, p);
	free(big);
	x->totals.records++;
	item_added(x, OTLP_LOGS, proc, from);
}

/* in: the span it is an event of, past OTLP_EVENTS_PER_SPAN, or NULL */
static void event_record(struct otlp_exporter *x, const struct trace_event *ev,
                         struct otlp_thread *t, uint64_t ns, bool undated,
                         const struct open_span *in)
{
	struct record_info r = {ns, undated, 0, NULL, ev->name, in};
	r.severity = severity_of(ev, &r.severity_text);
	size_t proc = t ? t->process : process_of(x, ev->info.posix_pid);
	log_record(x, proc, ev, t, &r, NULL, 0);
}

static void summary_record(struct otlp_exporter *x, uint64_t lost, enum log_state state)
{
	uint8_t extra[256], *p = extra;
	p = kv_int(p, F_RECORD_ATTRIBUTES, "posixtrace.lost_events", (int64_t)lost);
	p = kv_bool(p, F_RECORD_ATTRIBUTES, "posixtrace.damaged", state == LOG_DAMAGED);
	p = kv_bool(p, F_RECORD_ATTRIBUTES, "posixtrace.cut_short", state == LOG_CUT_SHORT);
	bool bad = lost || state != LOG_COMPLETE;
	struct record_info r = {x->last_ns, false, bad ? SEVERITY_WARN : SEVERITY_INFO,
	                        bad ? "WARN" : "INFO", "posixtrace log summary", NULL};
	log_record(x, process_of(x, x->controller), NULL, NULL, &r, extra, (size_t)(p - extra));
}

/* ---- the log ---------------------------------------------------------------- */

static void export_event(struct otlp_exporter *x, const struct trace_event *ev, uint64_t index)
{
	bool undated = !event_has_time(ev);
	uint64_t ns = undated ? x->last_ns : ts_ns(&ev->info.posix_timestamp);
	const char *slice = NULL, *type_slice = NULL;
	if (undated)
		x->undated++;
	else if (ns > x->last_ns)
		x->last_ns = ns;
	enum pair_role role = pairing_role(x->pairing, index, ev, &slice);
	struct otlp_thread *t = thread_of(x, ev);
	if (role == PAIR_BEGIN) {
		open_span(x, t, ev, index, ns, slice, false, undated);
	} else if (role == PAIR_END) {
		end_span(x, t, ns, ev);
	} else if (t && !undated && pairing_type_role(x->pairing, ev, &type_slice) == PAIR_BEGIN &&
	           x->capped_open < OTLP_OPEN_SPANS_MAX) {
		open_span(x, t, ev, index, ns, type_slice, true, false);
	} else {
		if (t && !undated && pairing_type_role(x->pairing, ev, &type_slice) == PAIR_BEGIN)
			x->totals.not_opened++;
		if (t && t->depth && !is_system_event(ev->info.posix_event_id))
			span_event(x, t, ev, ns, undated);
		else
			event_record(x, ev, t, ns, undated, NULL);
	}
}

static void note_undated(const struct otlp_exporter *x, const char *cmd, const char *label)
{
	if (x->undated)
		note_msg("%s: %s: %llu events without a time, placed at the time of the event "
		         "before (attribute posixtrace.undated)", cmd, label,
		         (unsigned long long)x->undated);
}

static void read_trace_name(struct trace_log *log, char *name)
{
	trace_attr_t a;
	name[0] = '\0';
	if (posix_trace_get_attr(log->trid, &a) == 0) {
		posix_trace_attr_getname(&a, name);
		posix_trace_attr_destroy(&a);
	}
}

/* The spans still open end at the last time, unfinished (live: every
 * span is opened as paired until its end comes); the summary. */
static void end_log(struct otlp_exporter *x, uint64_t lost, enum log_state state)
{
	for (size_t i = 0; i < x->threads.count; i++)
		while (x->thread[i].depth) {
			x->thread[i].stack[x->thread[i].depth - 1].unfinished = true;
			close_span(x, &x->thread[i], x->last_ns, NULL);
		}
	summary_record(x, lost, state);
	flush(x, OTLP_TRACES);
	flush(x, OTLP_LOGS);
	for (size_t i = 0; i < x->thread_cap; i++) {
		for (size_t k = 0; k < x->thread[i].cap; k++) {
			free(x->thread[i].stack[k].attrs.p);
			free(x->thread[i].stack[k].events.p);
		}
		free(x->thread[i].stack);
	}
	for (size_t i = 0; i < x->process_cap; i++)
		for (int s = 0; s < OTLP_SIGNALS; s++)
			free(x->process[i].items[s].p);
	free(x->thread);
	free(x->process);
	thread_table_free(&x->threads);
	thread_table_free(&x->pids);
	pairing_free(x->pairing);
	pairer_free(x->pairer);
	x->thread = NULL;
	x->process = NULL;
	x->thread_cap = x->process_cap = 0;
	x->pairing = NULL;
	x->pairer = NULL;
	x->live = false;
}

/* The host the log names (its node name as text, its machine id's hash),
 * else this machine; --host-name before either. */
static void log_host(struct otlp_exporter *x, const struct trace_log *log)
{
	const struct log_host *h = log->nhosts ? &log->hosts[0] : NULL;
	snprintf(x->log_host_name, sizeof x->log_host_name, "%s", x->host_name);
	memcpy(x->log_host_id, x->host_id, sizeof x->log_host_id);
	if (!h || !h->known)
		return;
	if (!x->o->host_name)
		snprintf(x->log_host_name, sizeof x->log_host_name, "%s", h->label);
	x->log_host_id[0] = '\0';
	if (h->rec.posixtrace_machine_known)
		put_hex_bytes(x->log_host_id, h->rec.posixtrace_machine_id, 16)[0] = '\0';
}

int otlp_export_log(struct otlp_exporter *x, struct trace_log *log, struct site_table *sites)
{
	struct log_overview ov;
	struct trace_event ev;
	char limits[PAIR_LIMITS_TEXT_SIZE];
	uint64_t index = 0;
	int rc;
	x->log = log;
	x->sites = sites;
	log_host(x, log);
	read_trace_name(log, x->trace_name);
	x->pairing = pairing_scan(log, &x->o->pairs, &ov);
	x->controller = ov.controller;
	x->last_ns = ov.first_ns;
	x->undated = 0;
	x->capped_open = 0;
	x->key = log_key(x, &ov);
	put_trace_id(x->log_trace_id, x->key, UINT64_MAX / 4);
	log->without_thread_names = true; /* thread_of() asks for them */
	while ((rc = trace_log_next(log, &ev)) > 0)
		export_event(x, &ev, index++);
	if (pair_limits_text(pairing_limits(x->pairing), limits, sizeof limits))
		note_msg("export: %s: %s", log->label, limits);
	note_undated(x, "export", log->label);
	uint64_t lost = 0;
	trace_log_lost(log, &lost);
	end_log(x, lost, log_state(log));
	return rc < 0 ? EXIT_FAIL : 0;
}

/* ---- live: the files of a rotated log as they are written ------------------- */

/* An end that closes the begin of index begin: the span of that begin
 * closes, the spans opened inside it end with it, unfinished (as export's
 * first pass would have left them); false if that begin opened no span
 * (past OTLP_OPEN_SPANS_MAX). */
static bool close_begun(struct otlp_exporter *x, struct otlp_thread *t, uint64_t begin,
                        uint64_t ns, const struct trace_event *end)
{
	size_t at = t->depth;
	while (at && t->stack[at - 1].begin_index != begin)
		at--;
	if (!at)
		return false;
	while (t->depth > at) {
		t->stack[t->depth - 1].unfinished = true;
		close_span(x, t, ns, NULL);
	}
	close_span(x, t, ns, end);
	return true;
}

static void live_event(struct otlp_exporter *x, const struct trace_event *ev, uint64_t index)
{
	bool undated = !event_has_time(ev);
	uint64_t ns = undated ? x->last_ns : ts_ns(&ev->info.posix_timestamp);
	const char *slice = NULL;
	struct pair_match m;
	if (undated)
		x->undated++;
	else if (ns > x->last_ns)
		x->last_ns = ns;
	struct otlp_thread *t = thread_of(x, ev);
	bool ends = pairer_event(x->pairer, ev, index, &m);
	if (ends && t && close_begun(x, t, m.begin_index, ns, ev))
		return;
	if (!ends && t && !undated && pairer_type_role(x->pairer, ev, &slice) == PAIR_BEGIN) {
		if (x->capped_open < OTLP_OPEN_SPANS_MAX) {
			open_span(x, t, ev, index, ns, slice, false, false);
			return;
		}
		x->totals.not_opened++;
	}
	if (t && t->depth && !is_system_event(ev->info.posix_event_id))
		span_event(x, t, ev, ns, undated);
	else
		event_record(x, ev, t, ns, undated, NULL);
}

void otlp_live_begin(struct otlp_exporter *x, uint64_t key_ns, pid_t controller)
{
	uint64_t words[2] = {key_ns, (uint64_t)(int64_t)controller};
	x->key = mix64(key_add(key_add(0xcbf29ce484222325ULL, "posixtrace live", 16), words, sizeof words));
	put_trace_id(x->log_trace_id, x->key, UINT64_MAX / 4);
	x->live = true;
	x->pairer = pairer_new(&x->o->pairs);
	x->controller = controller;
	x->live_index = 0;
	x->last_ns = 0;
	x->undated = 0;
	x->capped_open = 0;
	x->trace_name[0] = '\0';
}

int otlp_live_file(struct otlp_exporter *x, struct trace_log *log, struct site_table *sites)
{
	struct trace_event ev;
	int rc;
	x->log = log;
	x->sites = sites;
	log_host(x, log); /* each file's own record: the host it was written on */
	if (!x->trace_name[0])
		read_trace_name(log, x->trace_name);
	log->without_thread_names = true; /* thread_of() asks for them */
	while ((rc = trace_log_next(log, &ev)) > 0)
		live_event(x, &ev, x->live_index++);
	/* what the file held goes now, not with the next one */
	flush(x, OTLP_TRACES);
	flush(x, OTLP_LOGS);
	x->log = NULL;
	x->sites = NULL;
	return rc < 0 ? EXIT_FAIL : 0;
}

void otlp_live_end(struct otlp_exporter *x, uint64_t lost, enum log_state state)
{
	char limits[PAIR_LIMITS_TEXT_SIZE];
	if (pair_limits_text(pairer_limits(x->pairer), limits, sizeof limits))
		note_msg("%s", limits);
	note_undated(x, "otlp", "the recording");
	end_log(x, lost, state);
}

/* The summary of export and of record/attach --otlp (cmd). */
bool otlp_print_summary(const char *cmd, const struct otlp_sender *s,
                        const struct otlp_exporter *x, bool discard)
{
	const struct otlp_counts *sp = otlp_sender_counts(s, OTLP_TRACES);
	const struct otlp_counts *lr = otlp_sender_counts(s, OTLP_LOGS);
	const struct otlp_totals *t = &x->totals;
	fprintf(stderr,
	        "%s %s: spans: %llu %s, %llu refused by the receiver, %llu dropped; "
	        "log records: %llu %s, %llu refused, %llu dropped; %llu requests, %llu retries, "
	        "%llu bytes%s\n",
	        PROG, cmd, (unsigned long long)(sp->sent - sp->refused), discard ? "encoded" : "sent",
	        (unsigned long long)sp->refused, (unsigned long long)sp->dropped,
	        (unsigned long long)(lr->sent - lr->refused), discard ? "encoded" : "sent",
	        (unsigned long long)lr->refused, (unsigned long long)lr->dropped,
	        (unsigned long long)(sp->requests + lr->requests),
	        (unsigned long long)(sp->retries + lr->retries),
	        (unsigned long long)otlp_sender_bytes(s), discard ? " (discarded)" : "");
	if (t->unfinished)
		note_msg("%s: %llu spans unfinished at the end of their log (attribute "
		         "posixtrace.unfinished)", cmd, (unsigned long long)t->unfinished);
	if (t->linked_records)
		note_msg("%s: %llu events past %d in a span, sent as log records with its "
		         "trace and span ids", cmd, (unsigned long long)t->linked_records,
		         OTLP_EVENTS_PER_SPAN);
	if (t->not_opened)
		note_msg("%s: %llu begins past %d spans open at once, sent as events", cmd,
		         (unsigned long long)t->not_opened, OTLP_OPEN_SPANS_MAX);
	return !sp->refused && !sp->dropped && !lr->refused && !lr->dropped;
}

struct otlp_exporter *otlp_exporter_new(const struct otlp_options *o, struct otlp_sender *s)
{
	struct otlp_exporter *x = xmalloc(sizeof *x);
	struct utsname u;
	memset(x, 0, sizeof *x);
	x->o = o;
	x->sender = s;
	if (o->host_name)
		snprintf(x->host_name, sizeof x->host_name, "%s", o->host_name);
	else if (uname(&u) == 0)
		snprintf(x->host_name, sizeof x->host_name, "%s", u.nodename);
	if (host_id(x->host_id) != 0)
		x->host_id[0] = '\0'; /* no machine id: no host.id */
	snprintf(x->log_host_name, sizeof x->log_host_name, "%s", x->host_name);
	memcpy(x->log_host_id, x->host_id, sizeof x->log_host_id);
	return x;
}

void otlp_exporter_free(struct otlp_exporter *x)
{
	if (!x)
		return;
	for (int s = 0; s < OTLP_SIGNALS; s++)
		free(x->batch[s].processes);
	free(x->request.p);
	free(x->scratch.p);
	free(x);
}
