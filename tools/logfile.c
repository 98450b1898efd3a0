/* SPDX-License-Identifier: MIT */
/*
 * Reading a trace log through the public API (posix_trace_open and the
 * pre-recorded stream functions), what the command concludes about a log's
 * damage, and the event-name cache every command uses to print names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <posixtrace.h>

#include "tool.h"

void name_cache_init(struct name_cache *c, trace_id_t trid)
{
	c->trid = trid;
	memset(c->known, 0, sizeof c->known);
}

/* Names are looked up once per id: live streams and logs read from a pipe
 * learn new names while we read, so a failed lookup is retried next time. */
const char *name_cache_get(struct name_cache *c, trace_event_id_t id)
{
	static char unknown[32];
	if (id >= MAX_EVENT_IDS) {
		snprintf(unknown, sizeof unknown, "event_%u", id);
		return unknown;
	}
	if (!c->known[id]) {
		if (posix_trace_eventid_get_name(c->trid, id, c->name[id]) != 0) {
			snprintf(unknown, sizeof unknown, "event_%u", id);
			return unknown;
		}
		c->known[id] = true;
	}
	return c->name[id];
}

/* The system event types, then the user types the stream lists. */
bool event_type_exists(trace_id_t trid, const char *name)
{
	char other[TRACE_EVENT_NAME_MAX + 1];
	trace_event_id_t id;
	int unavailable = 0;
	for (id = POSIX_TRACE_START; id <= POSIX_TRACE_ERROR; id++)
		if (posix_trace_eventid_get_name(trid, id, other) == 0 && !strcmp(other, name))
			return true;
	if (posix_trace_eventtypelist_rewind(trid) != 0)
		return false;
	while (posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == 0 && !unavailable)
		if (posix_trace_eventid_get_name(trid, id, other) == 0 && !strcmp(other, name))
			return true;
	return false;
}

/*
 * The kernel thread id and the thread name come from the extension of
 * <posixtrace.h>; every output uses them when they are set (dump's thread
 * column, the --tid filter, dump --format json, Chrome tids and thread names).
 */
void read_event_ext(trace_id_t trid, struct trace_event *ev)
{
	struct posixtrace_event_ext ext;
	ev->tid = 0;
	ev->comm[0] = '\0';
	if (posixtrace_event_ext(trid, &ext) == 0) {
		ev->tid = ext.posixtrace_tid;
		memcpy(ev->comm, ext.posixtrace_comm, sizeof ev->comm);
		ev->comm[sizeof ev->comm - 1] = '\0';
	}
}

/* System events the reader synthesizes (OVERFLOW, RESUME, ERROR, ...) have
 * no process and no thread. */
bool event_has_thread(const struct trace_event *ev)
{
	return ev->info.posix_pid != 0 || ev->info.posix_thread_id != 0 || ev->tid != 0;
}

static const char *open_error(int err)
{
	return err == EINVAL ? "not a posixtrace log (corrupt, truncated header or wrong format)"
	                     : strerror(err);
}

static int open_input(const char *path, const char *label, bool *seekable)
{
	struct stat st;
	int fd = is_stdio_name(path) ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error_msg("%s: %s", label, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		error_msg("%s: is a directory, not a trace log", label);
		close(fd);
		return -1;
	}
	if (isatty(fd)) {
		error_msg("%s: is a terminal, not a trace log", label);
		close(fd);
		return -1;
	}
	*seekable = S_ISREG(st.st_mode);
	return fd;
}

static struct trace_log *log_from_fd(int fd, const char *path, const char *label,
                                     bool seekable)
{
	trace_id_t trid;
	int err = posix_trace_open(fd, &trid);
	if (err) {
		error_msg("%s: %s", label, open_error(err));
		close(fd);
		return NULL;
	}
	struct trace_log *log = xmalloc(sizeof *log);
	memset(log, 0, sizeof *log);
	log->path = path;
	log->label = label;
	log->fd = fd;
	log->seekable = seekable;
	log->trid = trid;
	/* A buffer of the stream's max-data-size never truncates on read. */
	trace_attr_t attr;
	size_t max = 1 << 20;
	if (posix_trace_get_attr(trid, &attr) == 0) {
		posix_trace_attr_getmaxdatasize(&attr, &max);
		posix_trace_attr_destroy(&attr);
	}
	log->bufsize = max < 256 ? 256 : max; /* system events carry up to 256 */
	log->buf = xmalloc(log->bufsize);
	name_cache_init(&log->names, trid);
	return log;
}

struct trace_log *trace_log_open(const char *path)
{
	const char *label = is_stdio_name(path) ? "standard input" : path;
	bool seekable = false;
	int fd = open_input(path, label, &seekable);
	return fd < 0 ? NULL : log_from_fd(fd, path, label, seekable);
}

/* A log just written, read through the descriptor it was written with
 * (opening its path again could find another file there by now). */
struct trace_log *trace_log_open_fd(int fd, const char *path)
{
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0) {
		error_msg("%s: %s", path, strerror(errno));
		return NULL;
	}
	return log_from_fd(dup_fd, path, path, true);
}

static bool is_damage_marker(const struct trace_event *ev)
{
	int v;
	if (ev->info.posix_event_id != POSIX_TRACE_ERROR || ev->len != sizeof v)
		return false;
	memcpy(&v, ev->data, sizeof v);
	return v == EBADMSG;
}

/* The event and its name: 1, 0 at the end, -1 (said) on an error. */
static int read_event(struct trace_log *log, struct trace_event *ev)
{
	size_t len;
	int unavailable;
	int err = posix_trace_getnext_event(log->trid, &ev->info, log->buf, log->bufsize, &len,
	                                    &unavailable);
	if (err) {
		error_msg("%s: reading events: %s", log->label, strerror(err));
		return -1;
	}
	if (unavailable)
		return 0;
	ev->data = log->buf;
	ev->len = len;
	ev->name = name_cache_get(&log->names, ev->info.posix_event_id);
	return 1;
}

/* The kernel thread id and name cost a call into the library per event:
 * without thread names, asked for only where event_has_thread() needs
 * them. */
static void read_thread(struct trace_log *log, struct trace_event *ev, bool names)
{
	if (names || (!ev->info.posix_pid && !ev->info.posix_thread_id)) {
		read_event_ext(log->trid, ev);
	} else {
		ev->tid = 0;
		ev->comm[0] = '\0';
	}
}

/* A window (log->filter) sees every event; the caller, those it keeps. */
static bool filtered_out(struct trace_log *log, const struct trace_event *ev)
{
	return log->filter && !log->filter->keep(log->filter, ev);
}

static bool filter_needs_tid(const struct trace_log *log)
{
	return log->filter && log->filter->needs_tid;
}

int trace_log_skim(struct trace_log *log, struct trace_event *ev)
{
	int rc;
	do {
		if ((rc = read_event(log, ev)) <= 0)
			return rc;
		read_thread(log, ev, filter_needs_tid(log));
	} while (filtered_out(log, ev));
	return rc;
}

int trace_log_next(struct trace_log *log, struct trace_event *ev)
{
	do {
		int rc = read_event(log, ev);
		if (rc <= 0)
			return rc;
		read_thread(log, ev, !log->without_thread_names || filter_needs_tid(log));
		if (is_damage_marker(ev)) {
			log->damage_reports++;
			log->events_after_damage = 0;
		} else if (log->damage_reports) {
			log->events_after_damage++;
		}
		log->events_read++;
	} while (filtered_out(log, ev));
	return 1;
}

int trace_log_rewind(struct trace_log *log)
{
	log->events_read = 0;
	log->damage_reports = 0;
	log->events_after_damage = 0;
	if (log->filter)
		log->filter->rewound(log->filter);
	return posix_trace_rewind(log->trid);
}

/* The time relative times count from: that of the first event recorded
 * by a thread or dated by the stream.  A leading OVERFLOW carries the time
 * of a lost event, and an undated event has none. */
uint64_t log_time_base(struct trace_log *log)
{
	struct trace_event ev;
	uint64_t base = 0;
	while (!base && trace_log_next(log, &ev) > 0)
		if (event_has_time(&ev) && ev.info.posix_event_id != POSIX_TRACE_OVERFLOW)
			base = ts_ns(&ev.info.posix_timestamp);
	trace_log_rewind(log);
	return base;
}

bool trace_log_lost(struct trace_log *log, uint64_t *lost)
{
	struct posix_trace_status_info st;
	if (posix_trace_get_status(log->trid, &st) != 0)
		return false;
	*lost = st.posixtrace_lost_events;
	return true;
}

/*
 * Cut short or damaged inside, from what has been read so far (call it after
 * reading to the end).  Through <trace.h> alone, damage shows as
 * POSIX_TRACE_ERROR events with EBADMSG: one, at the very end, is the cut a
 * crash leaves; more than one, or events after one, mean damage inside.
 *
 * The log says itself whether it was closed and how many damaged blocks
 * were met (posixtrace_log_info); the events seen are the fallback.
 */
enum log_state log_state(const struct trace_log *log)
{
	struct posixtrace_log_info li;
	if (posixtrace_log_info(log->trid, &li) == 0) {
		if (li.posixtrace_damaged_blocks)
			return LOG_DAMAGED;
		return li.posixtrace_closed ? LOG_COMPLETE : LOG_CUT_SHORT;
	}
	if (log->damage_reports > 1 || (log->damage_reports && log->events_after_damage))
		return LOG_DAMAGED;
	return log->damage_reports ? LOG_CUT_SHORT : LOG_COMPLETE;
}

/* After a whole pass: one line on stderr about damage, and the exit status
 * (rc if it already says something failed). */
int finish_log(const struct trace_log *log, int rc)
{
	switch (log_state(log)) {
	case LOG_CUT_SHORT:
		note_msg("%s: the log ends early (cut short, as a crash leaves it); "
		         "read up to its last complete block",
		         log->label);
		return rc;
	case LOG_DAMAGED:
		error_msg("%s: the log is damaged inside; events may be missing where the errors are",
		          log->label);
		return rc ? rc : EXIT_DAMAGED;
	default:
		return rc;
	}
}

void trace_log_close(struct trace_log *log)
{
	if (!log)
		return;
	posix_trace_close(log->trid);
	close(log->fd);
	free(log->buf);
	free(log);
}
