/* SPDX-License-Identifier: MIT */
/*
 * Reading a trace log through the public API (posix_trace_open and the
 * pre-recorded stream functions), what the command concludes about a log's
 * damage, and the event-name cache every command uses to print names.
 */
#include <dirent.h>
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

/* The thread's name, its 15 bytes and a NUL, in pieces that each lie in
 * one of the two overlapping 8-byte stores ([0,8) and [7,15)) that the
 * library's 15-byte copy into the extension makes: a load across both
 * waits until they reach the cache (a failed store forwarding, a tenth
 * of convert --to ctf's time in perf before).  Correct whatever the
 * stores were; only faster for those. */
static inline void copy_comm(char *to, const char *from)
{
	memcpy(to, from, 4);
	memcpy(to + 4, from + 4, 2);
	to[6] = from[6];
	memcpy(to + 7, from + 7, 8);
	to[15] = '\0';
}

/* The extension's thread id and CPU, and its thread name if names. */
static inline void read_ext(trace_id_t trid, struct trace_event *ev, bool names)
{
	struct posixtrace_event_ext ext;
	ev->tid = 0;
	ev->comm[0] = '\0';
	ev->cpu = -1;
	if (posixtrace_event_ext(trid, &ext) == 0) {
		ev->tid = ext.posixtrace_tid;
		if (ext.posixtrace_cpu_valid && ext.posixtrace_cpu <= INT32_MAX)
			ev->cpu = (int32_t)ext.posixtrace_cpu;
		if (names)
			copy_comm(ev->comm, ext.posixtrace_comm);
	}
}

/*
 * The kernel thread id and the thread name come from the extension of
 * <posixtrace.h>; every output uses them when they are set (dump's thread
 * column, the --tid filter, dump --format json, Chrome tids and thread names).
 */
void read_event_ext(trace_id_t trid, struct trace_event *ev)
{
	read_ext(trid, ev, true);
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

static int open_input(const char *path, const char *label, bool *seekable, bool *dir)
{
	struct stat st;
	int fd = is_stdio_name(path) ? dup(STDIN_FILENO) : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		error_msg("%s: %s", label, strerror(errno));
		return -1;
	}
	*dir = fstat(fd, &st) == 0 && S_ISDIR(st.st_mode);
	if (*dir)
		return fd;
	if (isatty(fd)) {
		error_msg("%s: is a terminal, not a trace log", label);
		close(fd);
		return -1;
	}
	*seekable = S_ISREG(st.st_mode);
	return fd;
}

/* The log's own trid and fd, a buffer of the stream's max-data-size
 * (which never truncates on read), its names. */
static void take_log(struct trace_log *log, int fd, trace_id_t trid)
{
	log->fd = fd;
	log->trid = trid;
	trace_attr_t attr;
	size_t max = 1 << 20;
	if (posix_trace_get_attr(trid, &attr) == 0) {
		posix_trace_attr_getmaxdatasize(&attr, &max);
		posix_trace_attr_destroy(&attr);
	}
	if (max < 256)
		max = 256; /* system events carry up to 256 */
	if (max > log->bufsize) {
		free(log->buf);
		log->bufsize = max;
		log->buf = xmalloc(log->bufsize);
	}
	name_cache_init(&log->names, trid);
	/* LOG-FORMAT.md: the CPU record is version 4's; a live stream has it */
	struct posixtrace_log_info info;
	log->cpu_records = posixtrace_log_info(trid, &info) != 0 || info.posixtrace_version >= 4;
}

static struct trace_log *new_log(const char *path, const char *label, bool seekable)
{
	struct trace_log *log = xmalloc(sizeof *log);
	memset(log, 0, sizeof *log);
	log->path = path;
	log->label = label;
	log->seekable = seekable;
	log->fd = -1;
	log->dirfd = -1;
	return log;
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
	struct trace_log *log = new_log(path, label, seekable);
	take_log(log, fd, trid);
	return log;
}

/* ---- a rotated log: a directory of numbered files ---- */

#define ROTATED_DIGITS 8
#define ROTATED_SUFFIX ".ptlog"

static bool is_rotated_name(const char *n)
{
	return strlen(n) == ROTATED_DIGITS + strlen(ROTATED_SUFFIX) &&
	       strspn(n, "0123456789") == ROTATED_DIGITS && !strcmp(n + ROTATED_DIGITS, ROTATED_SUFFIX);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of its files in order (names of one form: at most 10^8 of
 * them); false (said) when it holds none. */
static bool list_rotated(struct trace_log *log)
{
	int fd = fcntl(log->dirfd, F_DUPFD_CLOEXEC, 3);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	size_t cap = 0;
	struct dirent *e;
	if (!d) {
		error_msg("%s: %s", log->label, strerror(errno));
		if (fd >= 0)
			close(fd);
		return false;
	}
	while ((e = readdir(d)) != NULL) {
		if (!is_rotated_name(e->d_name))
			continue;
		if (log->nfiles == cap) {
			cap = cap ? 2 * cap : 64;
			log->files = xrealloc(log->files, cap * sizeof *log->files);
		}
		size_t len = strlen(e->d_name) + 1;
		log->files[log->nfiles] = xmalloc(len);
		memcpy(log->files[log->nfiles++], e->d_name, len);
	}
	closedir(d);
	if (!log->nfiles) {
		error_msg("%s: a directory, with no rotated log in it (files %0*d%s, ...)", log->label,
		          ROTATED_DIGITS, 1, ROTATED_SUFFIX);
		return false;
	}
	qsort(log->files, log->nfiles, sizeof *log->files, by_name);
	return true;
}

static int open_rotated_file(const struct trace_log *log, size_t i, int *fd, trace_id_t *trid)
{
	struct stat st;
	*fd = openat(log->dirfd, log->files[i], O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		return errno;
	int err = fstat(*fd, &st) != 0 ? errno : !S_ISREG(st.st_mode) ? EINVAL : 0;
	if (!err)
		err = posix_trace_open(*fd, trid);
	if (err)
		close(*fd);
	return err;
}

/* A file that is no log (empty, or its header incomplete) ends the set
 * where a recording killed while it began the file cut it, when it is the
 * last; before another file, it is damage.  A file gone or refused (removed
 * by the rotation meanwhile, its mode) is only passed over. */
static void pass_over(struct trace_log *log, size_t i, int err)
{
	bool last = i + 1 == log->nfiles;
	if (err != EINVAL) {
		note_msg("%s/%s: passed over: %s", log->label, log->files[i], open_error(err));
		return;
	}
	enum log_state s = last ? LOG_CUT_SHORT : LOG_DAMAGED;
	if (s > log->files_state)
		log->files_state = s;
	if (last)
		note_msg("%s/%s: passed over: no complete header (the set's end, cut as the file began)",
		         log->label, log->files[i]);
	else
		error_msg("%s/%s: passed over: %s, before %s", log->label, log->files[i],
		          open_error(err), log->files[i + 1]);
}

static enum log_state file_state(const struct trace_log *log);
static bool file_lost(struct trace_log *log, uint64_t *lost);
static void most_waits(struct posixtrace_block_stats *most, const struct posixtrace_block_stats *w);

/* The file read to its end: what it says is kept, and it is closed. */
static void close_rotated_file(struct trace_log *log, bool keep_state)
{
	uint64_t lost;
	if (keep_state) {
		enum log_state s = file_state(log);
		if (s > log->files_state)
			log->files_state = s;
		if (file_lost(log, &lost) && lost > log->files_lost)
			log->files_lost = lost;
		struct posixtrace_block_stats waits;
		if (posixtrace_block_info(log->trid, &waits) == 0)
			most_waits(&log->files_waits, &waits);
	}
	posix_trace_close(log->trid);
	close(log->fd);
	log->fd = -1;
	log->damage_reports = log->events_after_damage = 0;
}

/* The first file from i on that opens (one without a header passed over,
 * said) replaces the one open (what it says kept: keep_state); false when
 * none does, the one open left so (the set's last). */
static bool open_rotated_from(struct trace_log *log, size_t i, bool keep_state)
{
	for (; i < log->nfiles; i++) {
		int fd;
		trace_id_t trid;
		int err = open_rotated_file(log, i, &fd, &trid);
		if (err) {
			pass_over(log, i, err);
			continue;
		}
		if (log->fd >= 0)
			close_rotated_file(log, keep_state);
		log->file = i;
		take_log(log, fd, trid);
		return true;
	}
	return false;
}

static struct trace_log *rotated_log(int dirfd, const char *path, const char *label)
{
	struct trace_log *log = new_log(path, label, true);
	log->dirfd = dirfd;
	if (!list_rotated(log))
		;
	else if (open_rotated_from(log, 0, false))
		return log;
	else
		error_msg("%s: none of its %zu files opens as a trace log", label, log->nfiles);
	trace_log_close(log);
	return NULL;
}

/* The next file of a rotated log, at the end of one: true if there is one. */
static bool next_rotated(struct trace_log *log)
{
	if (log->dirfd < 0 || log->file + 1 >= log->nfiles)
		return false;
	return open_rotated_from(log, log->file + 1, true);
}

/* The host of its (first) file, known or not: a single log's one host. */
static void log_host_read(struct trace_log *log)
{
	log->hosts = xmalloc(sizeof *log->hosts);
	memset(log->hosts, 0, sizeof *log->hosts);
	log->nhosts = 1;
	struct log_host *h = log->hosts;
	h->known = posixtrace_log_host(log->trid, &h->rec) == 0;
	if (h->known)
		escape_text(h->rec.posixtrace_host_name, h->label, sizeof h->label);
	else
		snprintf(h->label, sizeof h->label, "unknown");
}

static struct trace_log *with_host(struct trace_log *log)
{
	if (log)
		log_host_read(log);
	return log;
}

struct trace_log *trace_log_open(const char *path)
{
	const char *label = is_stdio_name(path) ? "standard input" : path;
	bool seekable = false, dir = false;
	int fd = open_input(path, label, &seekable, &dir);
	if (fd >= 0 && dir)
		return with_host(rotated_log(fd, path, label));
	return fd < 0 ? NULL : with_host(log_from_fd(fd, path, label, seekable));
}

/* A log just written, read through the descriptor it was written with
 * (opening its path again could find another file there by now); a
 * rotated log's through its directory's. */
struct trace_log *trace_log_open_fd(int fd, const char *path)
{
	struct stat st;
	int dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0) {
		error_msg("%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(dup_fd, &st) == 0 && S_ISDIR(st.st_mode))
		return with_host(rotated_log(dup_fd, path, path));
	return with_host(log_from_fd(dup_fd, path, path, true));
}

static bool is_damage_marker(const struct trace_event *ev)
{
	int v;
	if (ev->info.posix_event_id != POSIX_TRACE_ERROR || ev->len != sizeof v)
		return false;
	memcpy(&v, ev->data, sizeof v);
	return v == EBADMSG;
}

/* read_event's other answers: an error (said), or the end of a file (the
 * next one of a rotated log, if any).  Apart, so that the common case
 * saves no register for them. */
static __attribute__((noinline)) int read_event_other(struct trace_log *log,
                                                      struct trace_event *ev, int err);

/* The event and its name: 1, 0 at the end, -1 (said) on an error. */
static inline int read_event(struct trace_log *log, struct trace_event *ev)
{
	size_t len;
	int unavailable;
	int err = posix_trace_getnext_event(log->trid, &ev->info, log->buf, log->bufsize, &len,
	                                    &unavailable);
	if (__builtin_expect(err || unavailable, 0))
		return read_event_other(log, ev, err);
	ev->data = log->buf;
	ev->len = len;
	ev->name = name_cache_get(&log->names, ev->info.posix_event_id);
	ev->source = ev->host = 0;
	ev->shift_ns = 0;
	return 1;
}

static int read_event_other(struct trace_log *log, struct trace_event *ev, int err)
{
	if (err) {
		error_msg("%s: reading events: %s", log->label, strerror(err));
		return -1;
	}
	return next_rotated(log) ? read_event(log, ev) : 0;
}

/* The kernel thread id and name cost a call into the library per event:
 * without thread names, asked for only where event_has_thread() needs
 * them, or for the CPU (the id and the CPU, not the name) where the file
 * may hold one. */
static inline void read_thread(struct trace_log *log, struct trace_event *ev, bool names, bool cpu)
{
	if (names || (!ev->info.posix_pid && !ev->info.posix_thread_id)) {
		read_ext(log->trid, ev, true);
	} else if (cpu && log->cpu_records) {
		read_ext(log->trid, ev, false);
	} else {
		ev->tid = 0;
		ev->comm[0] = '\0';
		ev->cpu = -1;
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
	if (log->set) {
		do
			if ((rc = logset_next(log, ev, true)) <= 0)
				return rc;
		while (filtered_out(log, ev));
		return rc;
	}
	do {
		if ((rc = read_event(log, ev)) <= 0)
			return rc;
		read_thread(log, ev, filter_needs_tid(log), false);
	} while (filtered_out(log, ev));
	return rc;
}

/* The events read ahead and their data.  The buffer holds 16 events of
 * the log's max-data-size, 64 KiB at least (READ_AHEAD_EVENTS of 256
 * bytes): the library takes an event while a whole one fits.  A log whose
 * max-data-size is over READ_AHEAD_MAX_DATA is read an event at a time;
 * a later file of a rotated log that has one gets a buffer of one event. */
#define READ_AHEAD_EVENTS 256
#define READ_AHEAD_MIN_EVENTS 16
#define READ_AHEAD_MIN_ROOM (64u << 10)
#define READ_AHEAD_MAX_DATA (16u << 10)
struct read_ahead {
	struct posixtrace_batch_event evs[READ_AHEAD_EVENTS];
	size_t count, next;
	size_t bufsize;
	unsigned char buf[];
};

/* The buffer for events of max_data bytes at most. */
static size_t read_ahead_room(size_t max_data)
{
	size_t room = max_data <= READ_AHEAD_MAX_DATA ? READ_AHEAD_MIN_EVENTS * max_data : max_data;
	return room < READ_AHEAD_MIN_ROOM ? READ_AHEAD_MIN_ROOM : room;
}

/* The next events into log->ahead, from the next file of a rotated log
 * when one ends (whose max-data-size may be larger): 1, 0 at the end, -1
 * (said) on an error. */
static __attribute__((noinline)) int read_ahead_fill(struct trace_log *log)
{
	for (;;) {
		struct read_ahead *a = log->ahead;
		if (a->bufsize < read_ahead_room(log->bufsize)) {
			a = log->ahead = xrealloc(a, sizeof *a + read_ahead_room(log->bufsize));
			a->bufsize = read_ahead_room(log->bufsize);
		}
		int err = posixtrace_getnext_events(log->trid, a->evs, READ_AHEAD_EVENTS, a->buf,
		                                    a->bufsize, log->bufsize, &a->count);
		a->next = 0;
		if (err) {
			a->count = 0;
			error_msg("%s: reading events: %s", log->label, strerror(err));
			return -1;
		}
		if (a->count)
			return 1;
		if (!next_rotated(log))
			return 0;
	}
}

/* read_event and read_thread, from the events read ahead. */
static inline int read_event_ahead(struct trace_log *log, struct trace_event *ev)
{
	struct read_ahead *a = log->ahead;
	if (__builtin_expect(a->next == a->count, 0)) {
		int rc = read_ahead_fill(log);
		if (rc <= 0)
			return rc;
		a = log->ahead;
	}
	const struct posixtrace_batch_event *e = &a->evs[a->next++];
	ev->info = e->posixtrace_info;
	ev->data = (unsigned char *)(uintptr_t)e->posixtrace_data;
	ev->len = e->posixtrace_data_len;
	ev->name = name_cache_get(&log->names, ev->info.posix_event_id);
	ev->source = ev->host = 0;
	ev->shift_ns = 0;
	ev->comm[0] = '\0';
	ev->tid = 0;
	ev->cpu = -1;
	if ((!ev->info.posix_pid && !ev->info.posix_thread_id) || log->cpu_records) {
		ev->tid = e->posixtrace_tid;
		if (e->posixtrace_cpu_valid && e->posixtrace_cpu <= INT32_MAX)
			ev->cpu = (int32_t)e->posixtrace_cpu;
	}
	return 1;
}

/* Reading ahead gives what read_event and read_thread give a caller that
 * wants no names (but a system event's comm): log->ahead is set when it
 * may, at the first read. */
static __attribute__((noinline)) bool start_reading_ahead(struct trace_log *log)
{
	if (!log->read_ahead || !log->without_thread_names || !log->with_cpu ||
	    filter_needs_tid(log) || log->bufsize > READ_AHEAD_MAX_DATA)
		return false;
	size_t room = read_ahead_room(log->bufsize);
	log->ahead = xmalloc(sizeof *log->ahead + room);
	log->ahead->bufsize = room;
	log->ahead->count = log->ahead->next = 0;
	return true;
}

int trace_log_next(struct trace_log *log, struct trace_event *ev)
{
	if (log->set) {
		do {
			int rc = logset_next(log, ev, false);
			if (rc <= 0)
				return rc;
			log->events_read++;
		} while (filtered_out(log, ev));
		return 1;
	}
	bool ahead = log->ahead || (log->read_ahead && start_reading_ahead(log));
	do {
		int rc;
		if (ahead) {
			rc = read_event_ahead(log, ev);
			if (rc <= 0)
				return rc;
		} else {
			rc = read_event(log, ev);
			if (rc <= 0)
				return rc;
			read_thread(log, ev, !log->without_thread_names || filter_needs_tid(log),
			            log->with_cpu);
		}
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

int trace_log_ahead(struct trace_log *log, const struct posixtrace_batch_event **evs, size_t *n)
{
	if (log->set || log->filter || !(log->ahead || (log->read_ahead && start_reading_ahead(log))))
		return TRACE_LOG_NOT_AHEAD;
	struct read_ahead *a = log->ahead;
	if (a->next == a->count) {
		int rc = read_ahead_fill(log);
		if (rc <= 0)
			return rc;
		a = log->ahead;
	}
	*evs = &a->evs[a->next];
	*n = a->count - a->next;
	return 1;
}

void trace_log_took(struct trace_log *log, size_t k)
{
	log->ahead->next += k;
	log->events_read += k;
	if (log->damage_reports)
		log->events_after_damage += k;
}

int trace_log_rewind(struct trace_log *log)
{
	if (log->ahead)
		log->ahead->count = log->ahead->next = 0;
	log->events_read = 0;
	log->damage_reports = 0;
	log->events_after_damage = 0;
	if (log->filter)
		log->filter->rewound(log->filter);
	if (log->set)
		return logset_rewind(log);
	if (log->dirfd < 0 || log->file == 0)
		return posix_trace_rewind(log->trid);
	close_rotated_file(log, false);
	log->files_state = LOG_COMPLETE;
	log->files_lost = 0;
	memset(&log->files_waits, 0, sizeof log->files_waits);
	return open_rotated_from(log, 0, false) ? 0 : EIO;
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

static bool file_lost(struct trace_log *log, uint64_t *lost)
{
	struct posix_trace_status_info st;
	if (posix_trace_get_status(log->trid, &st) != 0)
		return false;
	*lost = st.posixtrace_lost_events;
	return true;
}

/* A rotated log: the most any file read says (each counts the stream's
 * losses since it was created). */
bool trace_log_lost(struct trace_log *log, uint64_t *lost)
{
	if (log->set)
		return logset_lost(log, lost);
	if (!file_lost(log, lost))
		return false;
	if (log->files_lost > *lost)
		*lost = log->files_lost;
	return true;
}

/* Each file's counts are the stream's since it was created. */
static void most_waits(struct posixtrace_block_stats *most, const struct posixtrace_block_stats *w)
{
	if (w->posixtrace_waited_events > most->posixtrace_waited_events)
		most->posixtrace_waited_events = w->posixtrace_waited_events;
	if (w->posixtrace_waited_ns > most->posixtrace_waited_ns)
		most->posixtrace_waited_ns = w->posixtrace_waited_ns;
	if (w->posixtrace_waited_lost > most->posixtrace_waited_lost)
		most->posixtrace_waited_lost = w->posixtrace_waited_lost;
}

void trace_log_waits(struct trace_log *log, struct posixtrace_block_stats *waits)
{
	if (log->set) {
		logset_waits(log, waits);
		return;
	}
	*waits = log->files_waits;
	struct posixtrace_block_stats w;
	if (log->fd >= 0 && posixtrace_block_info(log->trid, &w) == 0)
		most_waits(waits, &w);
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
static enum log_state file_state(const struct trace_log *log)
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

/* A rotated log: the worst of its files read so far. */
enum log_state log_state(const struct trace_log *log)
{
	if (log->set)
		return logset_state(log);
	enum log_state s = file_state(log);
	return log->files_state > s ? log->files_state : s;
}

/* After a whole pass: one line on stderr about damage, and the exit status
 * (rc if it already says something failed). */
int finish_log(const struct trace_log *log, int rc)
{
	if (log->set)
		return logset_finish(log, rc);
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
	if (log->set) {
		logset_close(log);
		return;
	}
	if (log->fd >= 0) {
		posix_trace_close(log->trid);
		close(log->fd);
	}
	if (log->dirfd >= 0)
		close(log->dirfd);
	for (size_t i = 0; i < log->nfiles; i++)
		free(log->files[i]);
	free(log->files);
	free(log->buf);
	free(log->ahead);
	free(log->hosts);
	free(log);
}
