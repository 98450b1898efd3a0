/*
 * posixtrace(1): declarations shared by the command's source files.
 * The tool is a client of the public <trace.h> API only.
 */
#ifndef POSIXTRACE_TOOL_H
#define POSIXTRACE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <trace.h>

#define PROG "posixtrace"
#define MAX_EVENT_IDS 1024 /* trace_event_set_t has one bit per id */

/* Exit statuses of the tool's own failures (a recorded command's status is
 * passed through instead). */
#define EXIT_USAGE 2
#define EXIT_FAIL 1

/* Subcommands (one file each). */
int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);

/* util.c */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool parse_size(const char *s, size_t *out);
bool parse_seconds(const char *s, double *out);
uint64_t ts_ns(const struct timespec *ts);
uint64_t now_realtime_ns(void);
void format_time(uint64_t ns, char *buf, size_t size);
bool is_printable_text(const unsigned char *data, size_t len);
void print_hex(FILE *out, const unsigned char *data, size_t len);
void print_json_string(FILE *out, const unsigned char *s, size_t len);
const char *policy_name(int policy);
void *xmalloc(size_t size);

/* A comma-separated list of event names (--only, --filter). */
struct name_list {
	char **names;
	size_t count;
};
bool name_list_parse(struct name_list *list, const char *csv);
bool name_list_has(const struct name_list *list, const char *name);
void name_list_free(struct name_list *list);

/* Signals that end a recording or a live session (SIGINT, SIGTERM, SIGHUP)
 * only set stop_requested (to the signal number); waits notice it. */
extern volatile sig_atomic_t stop_requested;
extern volatile sig_atomic_t stop_signal_sent_by_process;
void install_stop_handlers(void);

/* Progress line for long conversions, only when stderr is a terminal. */
struct progress {
	bool enabled;
	uint64_t total, done, last_ns;
	const char *what;
};
void progress_init(struct progress *p, const char *what, uint64_t total);
void progress_step(struct progress *p);
void progress_end(struct progress *p);

/* names.c: event type names of a trace stream, cached per id. */
struct name_cache {
	trace_id_t trid;
	bool known[MAX_EVENT_IDS];
	char name[MAX_EVENT_IDS][TRACE_EVENT_NAME_MAX + 1];
};
void name_cache_init(struct name_cache *c, trace_id_t trid);
const char *name_cache_get(struct name_cache *c, trace_event_id_t id);
bool is_system_event(trace_event_id_t id);

/* logfile.c: reading a trace log (a pre-recorded stream). */
struct trace_event {
	struct posix_trace_event_info info;
	const unsigned char *data;
	size_t len;
	const char *name;
};
struct trace_log {
	const char *path;
	int fd;
	trace_id_t trid;
	unsigned char *buf;
	size_t bufsize;
	struct name_cache names;
	uint64_t events_read;
	bool damaged; /* the reader reported a POSIX_TRACE_ERROR with EBADMSG */
};
struct trace_log *trace_log_open(const char *path); /* prints the error */
int trace_log_next(struct trace_log *log, struct trace_event *ev); /* 1, 0 at end, -1 */
int trace_log_rewind(struct trace_log *log);
uint64_t trace_log_count(struct trace_log *log); /* whole pass, then rewinds */
void trace_log_close(struct trace_log *log);
bool trace_log_lost(struct trace_log *log, uint64_t *lost);
void report_damage(const struct trace_log *log);

/* eventfmt.c: one event as a line of text or JSON (dump and attach). */
struct event_printer {
	bool json;
	bool have_first;
	uint64_t first_ns;
};
void print_event(struct event_printer *p, FILE *out, const struct trace_event *ev);
void describe_data(FILE *out, const struct trace_event *ev);

/* record.c helpers used by attach.c */
int apply_name_filter(trace_id_t trid, const struct name_list *exclude,
                      const struct name_list *only);
void print_log_summary(const char *path, double seconds);
const char *why_not_traceable(pid_t pid);

/* ctf.c and chrome.c */
int convert_to_ctf(struct trace_log *log, const char *dir);
int convert_to_chrome(struct trace_log *log, const char *file);

#endif
