/* SPDX-License-Identifier: MIT */
/*
 * Chrome trace event format (chrome://tracing, Perfetto).  Events are
 * written in the order the library delivers them, which is each thread's
 * exact order, so "ts" never goes back within a thread's track; nothing is
 * sorted here.  Paired begin/end events (pairs.c) become "B"/"E" events,
 * every other event an instant ("ph":"i", thread scope) with its data in
 * "args"; processes and threads are named by metadata events ("ph":"M").
 *
 * Timestamps are microseconds after the earliest dated event (a double
 * cannot hold nanoseconds since the Epoch); that start is in "otherData".
 * System events no thread recorded (OVERFLOW, RESUME, ERROR, FLUSH_START,
 * ...) go to process 0; the reader dates some of them in the past (an
 * OVERFLOW carries the time of the first lost event), so such an event goes
 * to a second (third, ... up to SYSTEM_TRACKS_MAX) track of process 0 when
 * it is older than the last event of the first one, rather than being
 * moved in time.  Times never go back within a track: an event older than
 * the last of its track (past those tracks, or a thread's whose times go
 * back: a crafted log, a clock that stepped back) is placed at that last
 * time, and its args say by how much ("time_raised_ns"; "time" is the
 * recorded one).  An event the library gives no time is listed in
 * "otherData" instead of being placed at a made-up time.
 *
 * Memory: a thread costs its ids and the time of its last event (its names
 * are written when it is first met), whatever its number of events; the
 * pairing's first pass costs a bit per event (pairs.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

#define SYSTEM_TRACKS_MAX 8

/* Chrome wants small thread ids: unless the library gives the kernel's,
 * threads are numbered per process in order of appearance, and the
 * pthread_t goes into the thread's name. */
struct chrome_thread {
	int tid;
	uint64_t last_ns; /* of its last event */
};

/* Several hosts: one process group per host, pids apart (a pid is below
 * 2^22, pid_max's largest; host LOGSET_MAX - 1 still fits an int).  The
 * events no process posted stay on process 0's tracks, whatever host. */
static int shown_pid(uint32_t host, pid_t pid)
{
	_Static_assert((uint64_t)LOGSET_MAX << 22 <= INT32_MAX + 1ull, "pids fit");
	if (!pid)
		return 0;
	return (int)((uint32_t)host << 22 | ((uint32_t)pid & ((1u << 22) - 1)));
}

static char *put_ids(char *p, int pid, int tid)
{
	p = put_int(put_str(p, ",\"pid\":"), (int)pid);
	p = put_int(put_str(p, ",\"tid\":"), tid);
	*p++ = ',';
	return p;
}

/* ,"thread":"0xHEX without its closing quote */
static char *put_thread_arg(char *p, unsigned long thread)
{
	return put_hex_u64(put_str(p, ",\"thread\":\""), thread);
}

struct chrome_writer {
	const struct trace_log *log; /* its trid: the file being read */
	FILE *file;
	struct outbuf out;
	bool first_written;
	uint64_t first_ns;
	struct thread_table threads; /* (pid, pthread_t) */
	struct chrome_thread *info;  /* by thread table index */
	size_t info_cap;
	struct thread_table pids; /* (pid, 0): threads seen per process */
	int *per_pid;
	size_t per_pid_cap;
	uint64_t system_tracks[SYSTEM_TRACKS_MAX]; /* last time on each track of process 0 */
	size_t nsystem_tracks;
	uint64_t raised; /* events placed later than their time */
	char trace_name[TRACE_NAME_MAX];
	struct pairing *pairing;
	struct site_table *sites;
	struct time_cache seconds; /* of the events' absolute times */
	/* JSON objects of events without a time, for otherData at the end: in
	 * an unlinked temporary file, as a log may hold any number of them. */
	FILE *undated_file;
	struct outbuf undated;
	uint64_t nundated;
	bool undated_failed;
};

static void write_name_metadata(struct chrome_writer *w, const char *what, int pid, int tid,
                                const char *name);
static void process_label(const struct chrome_writer *w, uint32_t host, pid_t pid, char *buf,
                          size_t size);

/* The process's index in pids; its name is written when it is first met. */
static size_t process_of(struct chrome_writer *w, uint32_t host, pid_t pid)
{
	bool added;
	size_t i = thread_table_index(&w->pids, host, pid, 0, &added);
	grow_zeroed((void **)&w->per_pid, &w->per_pid_cap, i, sizeof *w->per_pid);
	if (added) {
		char label[TRACE_NAME_MAX + HOST_LABEL_MAX + 64];
		process_label(w, host, pid, label, sizeof label);
		write_name_metadata(w, "process_name", shown_pid(host, pid), 0, label);
	}
	return i;
}

/* The thread's track; its name is written when it is first met. */
static struct chrome_thread *thread_track(struct chrome_writer *w, const struct trace_event *ev)
{
	bool added;
	size_t i = thread_table_of(&w->threads, ev, &added);
	grow_zeroed((void **)&w->info, &w->info_cap, i, sizeof *w->info);
	struct chrome_thread *t = &w->info[i];
	if (added) {
		/* the log is read without thread names: asked for once a thread */
		struct trace_event named = *ev;
		char label[64];
		unsigned long thread = (unsigned long)ev->info.posix_thread_id;
		read_event_ext(w->log->trid, &named);
		size_t proc = process_of(w, ev->host, ev->info.posix_pid);
		t->tid = named.tid ? (int)named.tid : ++w->per_pid[proc];
		if (named.tid && named.comm[0])
			snprintf(label, sizeof label, "%.16s (pthread 0x%lx)", named.comm, thread);
		else
			snprintf(label, sizeof label, "thread 0x%lx", thread);
		write_name_metadata(w, "thread_name", shown_pid(ev->host, ev->info.posix_pid), t->tid,
		                    label);
	}
	return t;
}

/* The first track of process 0 whose last event is not later than this
 * one; a new track when there is none, up to SYSTEM_TRACKS_MAX; past them,
 * the last track, at its last time (*at).  The last times of the tracks
 * only decrease from the first track to the newest (a new track is opened
 * for an event older than every track's last, and an event joins the first
 * track not later than it, so stays older than the track before), hence a
 * binary search. */
static int system_track(struct chrome_writer *w, uint64_t ns, uint64_t *at)
{
	size_t lo = 0, hi = w->nsystem_tracks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->system_tracks[mid] <= ns)
			hi = mid;
		else
			lo = mid + 1;
	}
	*at = ns;
	if (lo == w->nsystem_tracks) {
		if (w->nsystem_tracks < SYSTEM_TRACKS_MAX)
			w->nsystem_tracks++;
		else
			*at = w->system_tracks[--lo];
	}
	w->system_tracks[lo] = *at;
	return (int)lo + 1;
}

/* Data up to this length is formatted with the rest of its event, in one
 * piece of the output buffer; longer data goes in chunks. */
#define INLINE_DATA_MAX 1024
/* An event object but its data: the fixed fields, two names as JSON. */
#define EVENT_FIXED_MAX (512 + 2 * JSON_CHARS_SIZE(TRACE_EVENT_NAME_MAX + 1) + \
                         JSON_CHARS_SIZE(CALL_SITE_WHERE_MAX) +    \
                         2 * JSON_CHARS_SIZE(CALL_SITE_SOURCE_MAX))

static char *put_json_name(char *p, const char *name)
{
	*p++ = '"';
	p = put_json_chars(p, (const unsigned char *)name, strlen(name));
	*p++ = '"';
	return p;
}

/* "args" up to its data.  The seconds of "time" seldom change; raised:
 * how much later than its time the event is placed. */
static char *put_args_head(char *p, const struct trace_event *ev, bool paired,
                           struct time_cache *seconds, uint64_t raised, struct site_table *sites)
{
	const struct call_site *c = site_of(sites, ev);
	p = put_str(p, "\"args\":{");
	if (paired) {
		p = put_json_name(put_str(p, "\"event\":"), ev->name);
		*p++ = ',';
	}
	p = put_u64(put_str(p, "\"id\":"), ev->info.posix_event_id);
	p = put_thread_arg(p, (unsigned long)ev->info.posix_thread_id);
	p = put_hex_u64(put_str(p, "\",\"prog_address\":\""),
	                (unsigned long)(uintptr_t)ev->info.posix_prog_address);
	if (c) {
		p = put_json_chars(put_str(p, "\",\"site\":\""), (const unsigned char *)c->where,
		                   strlen(c->where));
		if (c->source[0])
			p = put_json_chars(put_str(p, "\",\"source\":\""),
			                   (const unsigned char *)c->source, strlen(c->source));
		if (c->inlined[0])
			p = put_json_chars(put_str(p, "\",\"inlined\":\""),
			                   (const unsigned char *)c->inlined, strlen(c->inlined));
	}
	p = put_int(put_str(p, "\",\"truncation\":"), ev->info.posix_truncation_status);
	p = put_u64(put_str(p, ",\"len\":"), ev->len);
	p = put_time_cached(put_str(p, ",\"time\":\""), ts_ns(&ev->info.posix_timestamp), seconds);
	*p++ = '"';
	if (raised)
		p = put_u64(put_str(p, ",\"time_raised_ns\":"), raised);
	if (ev->cpu >= 0)
		p = put_int(put_str(p, ",\"cpu\":"), ev->cpu);
	return p;
}

/* The data as text or hex, then the end of "args" (and of the event). */
static char *put_args_data(char *p, const struct trace_event *ev, size_t text)
{
	if (text) {
		p = put_str(p, ",\"data\":\"");
		p = put_json_chars(p, ev->data, text);
		*p++ = '"';
	} else if (ev->len) {
		p = put_str(p, ",\"data_hex\":\"");
		p = put_hex_bytes(p, ev->data, ev->len);
		*p++ = '"';
	}
	return put_str(p, "}}");
}

static void write_long_args_data(struct outbuf *o, const struct trace_event *ev, size_t text)
{
	if (text) {
		outbuf_puts(o, ",\"data\":");
		outbuf_json_string(o, ev->data, text);
	} else {
		outbuf_puts(o, ",\"data_hex\":\"");
		outbuf_hex(o, ev->data, ev->len);
		outbuf_write(o, "\"", 1);
	}
	outbuf_write(o, "}}", 2);
}

/* p (from outbuf_room) holds the event up to its args' data: the data,
 * the end of the args and of the event. */
static void finish_event(struct outbuf *o, char *p, const struct trace_event *ev)
{
	size_t text = text_length(ev->data, ev->len);
	if (ev->len <= INLINE_DATA_MAX) {
		outbuf_done(o, put_args_data(p, ev, text));
	} else {
		outbuf_done(o, p);
		write_long_args_data(o, ev, text);
	}
}

/* Room for an event object with up to INLINE_DATA_MAX bytes of data. */
static char *event_room(struct outbuf *o)
{
	return outbuf_room(o, EVENT_FIXED_MAX + JSON_CHARS_SIZE(INLINE_DATA_MAX));
}

static char *put_separator(struct chrome_writer *w, char *p)
{
	if (w->first_written)
		*p++ = ',';
	*p++ = '\n';
	w->first_written = true;
	return p;
}

static void write_event(struct chrome_writer *w, const struct trace_event *ev,
                        enum pair_role role, const char *slice)
{
	static const char phase[] = {[PAIR_NONE] = 'i', [PAIR_BEGIN] = 'B', [PAIR_END] = 'E'};
	uint64_t ns = ts_ns(&ev->info.posix_timestamp), at = ns;
	struct chrome_thread *t = event_has_thread(ev) ? thread_track(w, ev) : NULL;
	int track = 0;
	if (t) {
		at = ns < t->last_ns ? t->last_ns : ns;
		t->last_ns = at;
	} else {
		track = system_track(w, ns, &at);
	}
	w->raised += at != ns;
	uint64_t rel = at - w->first_ns; /* first_ns is the earliest dated time */
	char *p = put_separator(w, event_room(&w->out));
	p = put_json_name(put_str(p, "{\"name\":"), role == PAIR_NONE ? ev->name : slice);
	if (is_system_event(ev->info.posix_event_id))
		p = put_str(p, ",\"cat\":\"system\",\"ph\":\"");
	else
		p = put_str(p, ",\"cat\":\"user\",\"ph\":\"");
	*p++ = phase[role];
	if (role == PAIR_NONE)
		p = put_str(p, "\",\"s\":\"t\",");
	else
		p = put_str(p, "\",");
	p = put_micros(put_str(p, "\"ts\":"), rel);
	p = put_ids(p, shown_pid(ev->host, ev->info.posix_pid), t ? t->tid : track);
	finish_event(&w->out, put_args_head(p, ev, role != PAIR_NONE, &w->seconds, at - ns, w->sites),
	             ev);
}

static bool open_undated(struct chrome_writer *w)
{
	if (w->undated_file)
		return true;
	if (w->undated_failed)
		return false;
	if (!(w->undated_file = tmpfile())) {
		error_msg("a temporary file for events without a time: %s; they are left out",
		          strerror(errno));
		w->undated_failed = true;
		return false;
	}
	outbuf_init(&w->undated, w->undated_file);
	return true;
}

/* No time, no place on a timeline: kept for otherData. */
static void keep_undated(struct chrome_writer *w, const struct trace_event *ev)
{
	if (!open_undated(w))
		return;
	char *p = event_room(&w->undated);
	if (w->nundated++)
		*p++ = ',';
	p = put_json_name(put_str(p, "{\"name\":"), ev->name);
	p = put_int(put_str(p, ",\"pid\":"), shown_pid(ev->host, ev->info.posix_pid));
	*p++ = ',';
	finish_event(&w->undated, put_args_head(p, ev, false, &w->seconds, 0, w->sites), ev);
}

/* The undated events, copied from their temporary file into the output. */
static void copy_undated(struct chrome_writer *w)
{
	char chunk[OUTBUF_ROOM_MAX];
	size_t n;
	if (!outbuf_flush(&w->undated) || fflush(w->undated_file) != 0) {
		error_msg("a temporary file for events without a time: %s; they are left out",
		          strerror(errno));
		return;
	}
	rewind(w->undated_file);
	outbuf_puts(&w->out, ",\"undated_events\":[");
	while ((n = fread(chunk, 1, sizeof chunk, w->undated_file)) > 0)
		outbuf_write(&w->out, chunk, n);
	outbuf_write(&w->out, "]", 1);
}

static void write_name_metadata(struct chrome_writer *w, const char *what, int pid, int tid,
                                const char *name)
{
	char *p = put_separator(w, outbuf_room(&w->out, 128 + JSON_CHARS_SIZE(strlen(name))));
	p = put_str(put_str(put_str(p, "{\"name\":\""), what), "\",\"ph\":\"M\",\"ts\":0,\"pid\":");
	p = put_int(p, (int)pid);
	p = put_int(put_str(p, ",\"tid\":"), tid);
	p = put_json_name(put_str(p, ",\"args\":{\"name\":"), name);
	outbuf_done(&w->out, put_str(p, "}}"));
}

static void process_label(const struct chrome_writer *w, uint32_t host, pid_t pid, char *buf,
                          size_t size)
{
	const char *on = host < w->log->nhosts && w->log->nhosts > 1 ? w->log->hosts[host].label : NULL;
	int n = on ? snprintf(buf, size, "%s: ", on) : 0;
	if (n < 0 || (size_t)n >= size)
		n = 0;
	if (pid == pairing_controller(w->pairing, host))
		snprintf(buf + n, size - (size_t)n, "posixtrace controller (%d)", (int)pid);
	else
		snprintf(buf + n, size - (size_t)n, "%s (%d)",
		         w->trace_name[0] ? w->trace_name : "process", (int)pid);
}

/* Processes and threads are named as they are met; the tracks of process
 * 0 at the end. */
static void write_system_names(struct chrome_writer *w)
{
	char label[64];
	if (w->nsystem_tracks && thread_table_find(&w->pids, 0, 0, 0) == SIZE_MAX)
		write_name_metadata(w, "process_name", 0, 0, "trace system events");
	for (size_t i = 0; i < w->nsystem_tracks; i++) {
		if (i == 0)
			snprintf(label, sizeof label, "system events");
		else
			snprintf(label, sizeof label, "system events dated earlier (%zu)", i + 1);
		write_name_metadata(w, "thread_name", 0, (int)i + 1, label);
	}
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

static void write_other_data(struct chrome_writer *w, struct trace_log *log)
{
	uint64_t lost = 0;
	enum log_state state = log_state(log);
	trace_log_lost(log, &lost);
	char *p = outbuf_room(&w->out, 512 + JSON_CHARS_SIZE(sizeof w->trace_name));
	p = put_str(p, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace_name\":");
	p = put_json_name(p, w->trace_name);
	p = put_time(put_str(p, ",\"start\":\""), w->first_ns);
	p = put_u64(put_str(p, "\",\"lost_events\":"), lost);
	p = put_str(p, state == LOG_DAMAGED ? ",\"damaged\":true" : ",\"damaged\":false");
	p = put_str(p, state == LOG_CUT_SHORT ? ",\"cut_short\":true" : ",\"cut_short\":false");
	p = put_u64(put_str(p, ",\"time_raised_events\":"), w->raised);
	const struct pair_limits *l = pairing_limits(w->pairing);
	p = put_u64(put_str(p, ",\"unpaired_by_bounds\":"), l->too_deep + l->too_many + l->not_kept);
	outbuf_done(&w->out, p);
	if (w->undated_file)
		copy_undated(w);
	outbuf_puts(&w->out, "}}\n");
}

static int write_chrome(struct chrome_writer *w, struct trace_log *log, struct progress *pr)
{
	struct trace_event ev;
	uint64_t index = 0;
	int rc;
	outbuf_puts(&w->out, "{\"traceEvents\":[");
	while ((rc = trace_log_next(log, &ev)) > 0) {
		const char *slice = NULL;
		enum pair_role role = pairing_role(w->pairing, index++, &ev, &slice);
		if (event_has_time(&ev))
			write_event(w, &ev, role, slice);
		else
			keep_undated(w, &ev);
		progress_step(pr);
	}
	write_system_names(w);
	write_other_data(w, log);
	return rc;
}

static void free_writer(struct chrome_writer *w)
{
	if (w->undated_file) {
		outbuf_free(&w->undated);
		fclose(w->undated_file);
	}
	thread_table_free(&w->threads);
	thread_table_free(&w->pids);
	free(w->info);
	free(w->per_pid);
	pairing_free(w->pairing);
}

int convert_to_chrome(struct trace_log *log, const char *file, bool force,
                      const struct pair_rules *pairs, struct site_table *sites)
{
	struct chrome_writer w = {.sites = sites};
	struct progress pr;
	struct log_overview overview;
	char limits[PAIR_LIMITS_TEXT_SIZE];
	w.file = open_output_stream(file, force);
	if (!w.file)
		return EXIT_FAIL;
	outbuf_init(&w.out, w.file);
	read_trace_name(log, w.trace_name);
	w.log = log;
	w.pairing = pairing_scan(log, pairs, &overview);
	w.first_ns = overview.first_ns;
	log->without_thread_names = true; /* thread_track() asks for them */
	log->with_cpu = true;                /* args.cpu */
	progress_init(&pr, "converting", overview.count);
	int rc = write_chrome(&w, log, &pr);
	progress_end(&pr);
	if (pair_limits_text(pairing_limits(w.pairing), limits, sizeof limits))
		note_msg("convert: %s", limits);
	if (w.raised)
		note_msg("convert: %llu events placed later than their time, where times went back "
		         "within a track (args.time_raised_ns)", (unsigned long long)w.raised);
	int err = close_output_stream(w.file, &w.out, file);
	free_writer(&w);
	return err || rc < 0 ? EXIT_FAIL : 0;
}
