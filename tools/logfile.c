/*
 * Reading a trace log through the public API (posix_trace_open and the
 * pre-recorded stream functions), and the event-name cache every command
 * uses to print names.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "posixtrace.h"

bool is_system_event(trace_event_id_t id)
{
	return id >= POSIX_TRACE_START && id <= POSIX_TRACE_ERROR;
}

void name_cache_init(struct name_cache *c, trace_id_t trid)
{
	c->trid = trid;
	memset(c->known, 0, sizeof c->known);
}

/* Names are looked up once per id: live streams may learn new names while
 * we read, so a failed lookup is retried next time. */
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

static const char *open_error(int err)
{
	return err == EINVAL ? "not a posixtrace log (corrupt, truncated header or wrong format)"
	                     : strerror(err);
}

struct trace_log *trace_log_open(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error_msg("%s: %s", path, strerror(errno));
		return NULL;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		error_msg("%s: is a directory, not a trace log", path);
		close(fd);
		return NULL;
	}
	trace_id_t trid;
	int err = posix_trace_open(fd, &trid);
	if (err) {
		error_msg("%s: %s", path, open_error(err));
		close(fd);
		return NULL;
	}
	struct trace_log *log = xmalloc(sizeof *log);
	memset(log, 0, sizeof *log);
	log->path = path;
	log->fd = fd;
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

static bool is_damage_marker(const struct trace_event *ev)
{
	int v;
	if (ev->info.posix_event_id != POSIX_TRACE_ERROR || ev->len != sizeof v)
		return false;
	memcpy(&v, ev->data, sizeof v);
	return v == EBADMSG;
}

int trace_log_next(struct trace_log *log, struct trace_event *ev)
{
	size_t len;
	int unavailable;
	int err = posix_trace_getnext_event(log->trid, &ev->info, log->buf, log->bufsize, &len,
	                                    &unavailable);
	if (err) {
		error_msg("%s: reading events: %s", log->path, strerror(err));
		return -1;
	}
	if (unavailable)
		return 0;
	ev->data = log->buf;
	ev->len = len;
	ev->name = name_cache_get(&log->names, ev->info.posix_event_id);
	if (is_damage_marker(ev))
		log->damaged = true;
	log->events_read++;
	return 1;
}

int trace_log_rewind(struct trace_log *log)
{
	log->events_read = 0;
	log->damaged = false;
	return posix_trace_rewind(log->trid);
}

uint64_t trace_log_count(struct trace_log *log)
{
	struct trace_event ev;
	uint64_t n = 0;
	while (trace_log_next(log, &ev) > 0)
		n++;
	trace_log_rewind(log);
	return n;
}

bool trace_log_lost(struct trace_log *log, uint64_t *lost)
{
	struct posix_trace_status_info st;
	if (posix_trace_get_status(log->trid, &st) != 0)
		return false;
	*lost = st.posixtrace_lost_events;
	return true;
}

void report_damage(const struct trace_log *log)
{
	if (log->damaged)
		note_msg("%s: the log is damaged; events after the damage are unreadable", log->path);
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
