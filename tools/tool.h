/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): declarations shared by the command's source files.
 * The command is a client of the public <trace.h> API only.  (The library's
 * extension header is include/posixtrace.h; this one is the command's own.)
 */
#ifndef POSIXTRACE_TOOL_H
#define POSIXTRACE_TOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <signal.h>
#include <sys/types.h>
#include <trace.h>
#include <posixtrace.h>

#define PROG "posixtrace"
#define MAX_EVENT_IDS 1024 /* trace_event_set_t has one bit per id */
#define MIN_STREAM_SIZE (4u << 10) /* the command's smallest --size: a page */

/* Exit statuses of the command's own outcomes (a recorded command's status
 * is passed through instead). */
#define EXIT_FAIL 1
#define EXIT_USAGE 2
#define EXIT_DAMAGED 3 /* a log damaged inside: what could be read was printed */

/* Subcommands (one file each). */
int cmd_record(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_archive(int argc, char **argv);
int cmd_export(int argc, char **argv); /* export.c, with otlp.h */

/* util.c */
void error_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void note_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
bool parse_size(const char *s, size_t *out);
bool parse_seconds(const char *s, double *out);
/* Inline: called for every event. */
static inline uint64_t ts_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}
uint64_t now_realtime_ns(void);
void format_time(uint64_t ns, char *buf, size_t size);
void format_signed_time(int64_t ns, char *buf, size_t size);
bool format_date(uint64_t ns, bool utc, char *buf, size_t size);
bool is_printable_text(const unsigned char *data, size_t len);
/* Whether a word holds a control byte that is not text (below 0x20, not
 * a tab or a newline): such a byte is never part of a UTF-8 sequence, so
 * the data is not text.  Exact byte by byte: no borrow crosses a byte. */
static inline __attribute__((always_inline)) bool word_has_control(uint64_t x)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull,
	               lows = ~highs;
	uint64_t below = ~((x | highs) - ones * 0x20) & ~x & highs;
	uint64_t tab = x ^ (ones * '\t'), nl = x ^ (ones * '\n');
	uint64_t is_tab = ~(((tab & lows) + lows) | tab) & highs;
	uint64_t is_nl = ~(((nl & lows) + lows) | nl) & highs;
	return (below & ~is_tab & ~is_nl) != 0;
}
size_t text_length_walk(const unsigned char *data, size_t len);
/* The length of the data as text (without its trailing NUL), 0 if it is
 * not text.  Inline: asked for every event, whose binary data is most
 * often told by its first word, without the character walk (the word is
 * all data: a trailing NUL is not in it). */
static inline size_t text_length(const unsigned char *data, size_t len)
{
	if (len > 8 || (len == 8 && data[7] != '\0')) {
		uint64_t x;
		__builtin_memcpy(&x, data, 8);
		if (word_has_control(x))
			return 0;
	}
	return text_length_walk(data, len);
}
/* util.c, UTF-8: the length (2 to 4) of the valid sequence at s, len
 * bytes left, and its code point; 0: s[0] starts none (ASCII included). */
size_t utf8_sequence(const unsigned char *s, size_t len, uint32_t *code);
/* C1 controls, bidirectional formatting characters, line and paragraph
 * separators: kept escaped in text and JSON. */
bool utf8_shown_escaped(uint32_t code);
/* s with printable ASCII and valid UTF-8 as they are (but the characters
 * utf8_shown_escaped names), \ as \\ and every other byte as \xHH: for any
 * name printed as text.  ESCAPED_SIZE(n): room for n bytes. */
#define ESCAPED_SIZE(n) (4 * (n) + 1)
const char *escape_text(const char *s, char *buf, size_t size);
char *put_escaped(char *p, const char *s); /* escape_text() at p; returns the end */

/* util.c: text built in memory.  Each put_* writes at p, which has room
 * enough, and returns the end of what it wrote. */
char *put_u64(char *p, uint64_t v);                   /* up to 20 */
char *put_int(char *p, int v);                        /* up to 11 */
char *put_time(char *p, uint64_t ns);                 /* "S.NNNNNNNNN", up to 30 */
struct time_cache {
	uint64_t sec, tens_of_us;
	unsigned char sec_len; /* of the seconds' digits in text */
	unsigned char len;     /* of the seconds, the point and 5 digits; 0: none yet */
	char text[32];
};
/* Two decimal digits per entry, "00" to "99": a division per two digits. */
extern const char digit_pairs[201];
static inline void put_four_digits(char *p, uint32_t v)
{
	__builtin_memcpy(p, digit_pairs + 2 * (v / 100), 2);
	__builtin_memcpy(p + 2, digit_pairs + 2 * (v % 100), 2);
}
/* put_time() for times that seldom leave their 10 microseconds from one
 * call to the next (the times of a log, absolute or relative): the
 * seconds' digits, the point and the first five of the nanoseconds are
 * kept and copied with a fixed-size copy, and only the last four digits
 * are formatted.  Inline, the refill apart: two a line of dump. */
static inline char *put_time_from_cache(char *p, uint64_t ns, uint64_t tens_of_us,
                                        const struct time_cache *c)
{
	__builtin_memcpy(p, c->text, sizeof c->text);
	put_four_digits(p + c->len, (uint32_t)(ns - tens_of_us * 10000u));
	return p + c->len + 4;
}
char *put_time_refill(char *p, uint64_t ns, uint64_t tens_of_us, struct time_cache *c);
static inline char *put_time_cached(char *p, uint64_t ns, struct time_cache *c) /* 34 */
{
	uint64_t tens_of_us = ns / 10000u;
	if (__builtin_expect(!c->len || c->tens_of_us != tens_of_us, 0))
		return put_time_refill(p, ns, tens_of_us, c);
	return put_time_from_cache(p, ns, tens_of_us, c);
}
char *put_micros(char *p, uint64_t ns);               /* "US.NNN", up to 24 */
char *put_hex_u64(char *p, uint64_t v);               /* "0x%lx", up to 18 */
/* Inline, so that a string literal's length is known where it is put. */
static inline char *put_str(char *p, const char *s)
{
	size_t k = __builtin_strlen(s);
	__builtin_memcpy(p, s, k);
	return p + k;
}
char *put_hex_bytes(char *p, const unsigned char *data, size_t len); /* 2 * len */
#define JSON_CHARS_SIZE(n) (6 * (n))
char *put_json_chars(char *p, const unsigned char *s, size_t len); /* no quotes */

/* util.c: output gathered in memory and written in large pieces.  Between
 * outbuf_room(o, n) (at most OUTBUF_ROOM_MAX) and outbuf_done(o, end) the
 * caller writes up to n bytes at the pointer room returned.  Whatever else
 * writes to the same FILE must come after outbuf_flush(). */
#define OUTBUF_ROOM_MAX (16u << 10)
struct outbuf {
	FILE *out;
	char *buf;
	size_t len;
	bool failed; /* a write to out failed, with errno err */
	int err;
};
void outbuf_init(struct outbuf *o, FILE *out);
bool outbuf_flush(struct outbuf *o); /* false if any write failed */
/* Written out once it holds OUTBUF_FLUSH bytes or more.  Inline (the flush
 * in tool.c): a line of dump asks for room once and is done once. */
#define OUTBUF_FLUSH (256u << 10)
static inline char *outbuf_room(struct outbuf *o, size_t n)
{
	if (o->len + n > OUTBUF_FLUSH + OUTBUF_ROOM_MAX)
		outbuf_flush(o);
	return o->buf + o->len;
}
static inline void outbuf_done(struct outbuf *o, char *end)
{
	o->len = (size_t)(end - o->buf);
	if (o->len >= OUTBUF_FLUSH)
		outbuf_flush(o);
}
void outbuf_write(struct outbuf *o, const void *s, size_t n);
void outbuf_puts(struct outbuf *o, const char *s);
void outbuf_hex(struct outbuf *o, const unsigned char *data, size_t len);
void outbuf_json_string(struct outbuf *o, const unsigned char *s, size_t len);
void outbuf_free(struct outbuf *o);
const char *policy_name(int policy);
void *xmalloc(size_t size);
void *xrealloc(void *p, size_t size);
bool is_stdio_name(const char *path); /* "-": standard input or output */

/* A comma-separated list of event names (--only, --filter). */
struct name_list {
	char **names;
	size_t count;
};
bool name_list_parse(struct name_list *list, const char *csv);
bool name_list_has(const struct name_list *list, const char *name);
void name_list_free(struct name_list *list);

/* A comma-separated list of numbers (--pid, --tid). */
struct number_list {
	uint64_t *values;
	size_t count;
};
bool number_list_parse(struct number_list *list, const char *csv);
bool number_list_has(const struct number_list *list, uint64_t value);
void number_list_free(struct number_list *list);

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
bool progress_wanted(void); /* stderr is a terminal: worth counting the events */
void progress_init(struct progress *p, const char *what, uint64_t total);
void progress_step(struct progress *p);
void progress_end(struct progress *p);

/* threads.c: a (pid, thread) pair to a dense index 0, 1, 2, ... in order of
 * appearance, so that callers keep per-thread data in plain arrays. */
struct thread_key {
	uint32_t host; /* of several logs' hosts (trace_event's host); 0 */
	pid_t pid;
	unsigned long thread;
};
struct thread_table {
	struct thread_key *keys; /* by index */
	size_t count, key_cap;
	uint32_t *slots; /* open addressing: index + 1, 0 when empty */
	size_t nslots;
	size_t last; /* the key found last, + 1 (0: none): runs of one thread */
};
size_t thread_table_index(struct thread_table *t, uint32_t host, pid_t pid, unsigned long thread,
                          bool *added);
/* The index of a key already in the table, SIZE_MAX if it is not. */
size_t thread_table_find(const struct thread_table *t, uint32_t host, pid_t pid,
                         unsigned long thread);
/* A hash of two words keyed at random per process (SipHash-1-3): for
 * tables whose keys come from a log. */
uint64_t keyed_hash2(uint64_t a, uint64_t b);
void thread_table_free(struct thread_table *t);
struct trace_event;
/* The index of the thread that posted ev (its pid and pthread_t). */
size_t thread_table_of(struct thread_table *t, const struct trace_event *ev, bool *added);
/* *array, of *cap elements of elem bytes, grown (zeroed) to hold index:
 * per-thread data beside a thread table. */
void grow_zeroed(void **array, size_t *cap, size_t index, size_t elem);
int compare_thread_keys(const void *a, const void *b); /* by host, pid, then thread */

/* outfile.c: files and directories the command writes.  New ones are created
 * 0600/0700 and never through a symbolic link; an existing one is replaced
 * only with force, and only if it is the caller's own (a regular file with
 * one link, or a directory holding only what the command writes there).
 * Every refusal is one line on stderr. */
int create_output_file(const char *path, bool force); /* fd, or -1 */
int create_output_file_excl(const char *path);      /* fd, -1 (errno EEXIST: taken) */
int create_output_dir(const char *path, bool force,
                      bool (*ours)(const char *name)); /* dir fd, or -1 */
int create_file_in(int dirfd, const char *dir, const char *name); /* fd, or -1 */
/* A converter's output as a stream: standard output for "-", else a new
 * file as create_output_file makes it; NULL after one line on stderr.
 * close_output_stream flushes the buffer written to it, frees that, closes
 * the stream (stdout is flushed) and says what failed: 0 or an errno. */
FILE *open_output_stream(const char *file, bool force);
int close_output_stream(FILE *f, struct outbuf *out, const char *file);

/* Event type names of a trace stream, cached per id (name_cache_init in
 * logfile.c, name_cache_lookup in tool.c). */
struct name_cache {
	trace_id_t trid;
	bool known[MAX_EVENT_IDS];
	char name[MAX_EVENT_IDS][TRACE_EVENT_NAME_MAX + 1];
};
void name_cache_init(struct name_cache *c, trace_id_t trid);
const char *name_cache_lookup(struct name_cache *c, trace_event_id_t id);
/* The name of id: the same text at the same address every time once
 * known (eventfmt.c relies on it); "event_ID" for an id of no type.
 * Inline: asked for every event, and known after the first. */
static inline const char *name_cache_get(struct name_cache *c, trace_event_id_t id)
{
	if (id < MAX_EVENT_IDS && c->known[id])
		return c->name[id];
	return name_cache_lookup(c, id);
}
static inline bool is_system_event(trace_event_id_t id)
{
	return id >= POSIX_TRACE_START && id <= POSIX_TRACE_ERROR;
}
bool event_type_exists(trace_id_t trid, const char *name);

/* One event as the library gave it. */
struct trace_event {
	struct posix_trace_event_info info;
	const unsigned char *data;
	size_t len;
	const char *name;
	/* What posixtrace_event_ext() will add: the kernel thread id (0 when
	 * unknown) and the thread's name ("" when unknown): read_event_ext(). */
	pid_t tid;
	char comm[16]; /* POSIXTRACE_COMM_MAX */
	/* The CPU it was posted on (posixtrace_cpu), -1 when unknown or not
	 * read (a converter without thread names and without with_cpu). */
	int32_t cpu;
	/* Of several logs read as one (logset.c): the log it came from (its
	 * ids and names are that log's) and its host, an index into the
	 * log's hosts; 0 and 0 for a single log. */
	uint32_t source, host;
	int64_t shift_ns; /* added to its time by the merge (its log gave it less) */
};
void read_event_ext(trace_id_t trid, struct trace_event *ev);
/* The library gives a time of 0 to an event it cannot date (the marker of
 * a damaged log): such an event has no time, and none is made up for it.
 * Inline: asked for every event. */
static inline bool event_has_time(const struct trace_event *ev)
{
	return ev->info.posix_timestamp.tv_sec != 0 || ev->info.posix_timestamp.tv_nsec != 0;
}
bool event_has_thread(const struct trace_event *ev);

/* logfile.c: reading a trace log (a pre-recorded stream); "-" is standard
 * input. */
/* A filter of the events the log gives (window.c): keep() sees every event
 * read, in order, and says whether trace_log_next and trace_log_skim give
 * it; rewound() is told when the log starts again. */
struct log_filter {
	bool (*keep)(struct log_filter *f, const struct trace_event *ev);
	void (*rewound)(struct log_filter *f);
	bool needs_tid; /* keep() looks at the kernel thread id */
};
enum log_state {
	LOG_COMPLETE,   /* no damage */
	LOG_CUT_SHORT,  /* ends early, as a crash leaves it: read to its end */
	LOG_DAMAGED,    /* damaged inside: events may be missing in the middle */
};
/* logset.c: the host a log was written on (posixtrace_log_host), as the
 * command names it: its node name (escaped as text, escape_text), "NAME#2"
 * for a second host of one name (another machine id), "unknown-N" for the
 * Nth log that names none. */
#define HOST_LABEL_MAX (ESCAPED_SIZE(POSIXTRACE_HOST_NAME_MAX) + 16)
struct log_host {
	char label[HOST_LABEL_MAX];
	bool known; /* the log has a host record: rec */
	struct posixtrace_host rec;
	int64_t offset_ns; /* --clock-offset: added to its events' times */
};
struct log_set;
struct trace_log {
	const char *path;
	const char *label; /* for messages: the path, or "standard input" */
	int fd;
	bool seekable; /* a regular file (names are all known at open) */
	trace_id_t trid;
	unsigned char *buf;
	size_t bufsize;
	struct name_cache names;
	/* Set by a caller that uses neither tid nor comm of an event: they
	 * are then 0 and "", but for events with no pid and no pthread_t. */
	bool without_thread_names;
	bool with_cpu; /* read each event's CPU even without thread names */
	/* Set by a caller that uses no comm and calls nothing about the last
	 * event read (posixtrace_event_ext): a single log's events are then
	 * read ahead, up to 256 a call (posixtrace_getnext_events), each with
	 * its tid and CPU; comm stays "". */
	bool read_ahead;
	struct read_ahead *ahead; /* NULL until the first read ahead */
	/* The file read may hold CPU records (format version 4 on, or not a
	 * log): before, every event's CPU is unknown, and is not asked for. */
	bool cpu_records;
	uint64_t events_read;
	/* POSIX_TRACE_ERROR events with EBADMSG (damage) met, and events read
	 * after the last of them: see log_state(). */
	uint64_t damage_reports, events_after_damage;
	/* A rotated log (a directory of NNNNNNNN.ptlog files) is read as one
	 * trace, a file after the other: the directory, the files' names in
	 * order, the one being read (fd and trid are its own), and what the
	 * files read before it said (the worst state, the most lost: each
	 * file's status counts the stream's losses so far). */
	int dirfd; /* -1: a single log */
	char **files;
	size_t nfiles, file;
	enum log_state files_state;
	uint64_t files_lost;
	struct posixtrace_block_stats files_waits;
	struct log_filter *filter; /* NULL: every event */
	/* Its hosts: one for a single log (known or not), those of the logs
	 * of a set (logset.c), which each event's host indexes. */
	struct log_host *hosts;
	uint32_t nhosts;
	struct log_set *set; /* several logs read as one; NULL: a single log */
};
struct trace_log *trace_log_open(const char *path); /* prints the error */
struct trace_log *trace_log_open_fd(int fd, const char *path); /* a log we wrote */
int trace_log_next(struct trace_log *log, struct trace_event *ev); /* 1, 0 at end, -1 */
/* trace_log_next() for a pass before the one that writes (then rewound):
 * no thread name, and the kernel thread id only for an event with no pid
 * and no pthread_t (what event_has_thread() needs); damage is not counted. */
int trace_log_skim(struct trace_log *log, struct trace_event *ev);
/* For a caller that takes the events read ahead as the library gave them
 * (convert --to ctf): those not yet given, a batch read if none is left:
 * 1 (*evs, *n of them, at least one), 0 at the end, -1 (said) on an
 * error, TRACE_LOG_NOT_AHEAD when the log's events are not read ahead
 * (several logs, a filter, a caller that did not set read_ahead, large
 * events: trace_log_next then).  trace_log_took: the caller used the first
 * k of them, none a damage marker (a POSIX_TRACE_ERROR); trace_log_next
 * gives the next one.  The CPU, tid and comm of such an event are those
 * read_ahead gives (see struct trace_log). */
#define TRACE_LOG_NOT_AHEAD 2
int trace_log_ahead(struct trace_log *log, const struct posixtrace_batch_event **evs, size_t *n);
void trace_log_took(struct trace_log *log, size_t k);
int trace_log_rewind(struct trace_log *log);
void trace_log_close(struct trace_log *log);
bool trace_log_lost(struct trace_log *log, uint64_t *lost);
/* What the writers waited for room (--block), as the log says: for a
 * rotated log the most any file read says. */
void trace_log_waits(struct trace_log *log, struct posixtrace_block_stats *waits);
enum log_state log_state(const struct trace_log *log);
int finish_log(const struct trace_log *log, int rc); /* notes damage; the exit status */
uint64_t log_time_base(struct trace_log *log); /* first recorded time; rewinds */

/* logset.c: several logs (files or rotated directories) read as one, their
 * events merged on one time line.  Logs of one host and boot share
 * CLOCK_MONOTONIC and order exactly (their times put on the scale of the
 * first of them); logs of different hosts order by their realtime times,
 * each moved by its host's --clock-offset.  Events of equal times come in
 * the order of the logs given.  At most LOGSET_MAX logs. */
#define LOGSET_MAX 256
struct clock_offsets {
	struct clock_offset {
		const char *host; /* a host's label */
		int64_t ns;
	} *v;
	size_t n;
};
/* --clock-offset HOST=[+-]DURATION (ns, us, ms, s; seconds without a
 * unit): false when it is not one. */
bool clock_offset_parse(struct clock_offsets *o, const char *arg);
void clock_offsets_free(struct clock_offsets *o);
#define LOGSET_OPT_CLOCK_OFFSET 1200
#define LOGSET_LONGOPTS {"clock-offset", required_argument, 0, LOGSET_OPT_CLOCK_OFFSET}
#define LOGSET_HELP "  --clock-offset HOST=[+-]DURATION  add DURATION (10ms, -1.5s, 250us, ns;\n" \
	"                       seconds without a unit) to the times of HOST's logs:\n" \
	"                       a known skew of its clock (repeatable)\n"
/* One log (as trace_log_open) or several as one; NULL, said, when one
 * does not open or an offset names no host of them. */
struct trace_log *trace_logs_open(char *const *paths, size_t n, const struct clock_offsets *o);
/* The log of the event read last (its names, its trid): the set's member,
 * or log itself. */
struct trace_log *trace_log_source(struct trace_log *log, uint32_t source);
size_t trace_log_sources(const struct trace_log *log); /* 1 for a single log */
/* What a reader of several logs must be told first: each log's host, and
 * how well their events order (exact, or uncertain by the sum of the two
 * largest clock errors, or without bound), each line after prefix; a
 * single log says nothing.  JSON: one object, {"hosts":[...],"order":...}. */
void logset_describe(struct trace_log *log, FILE *out, const char *prefix);
void logset_describe_json(struct trace_log *log, FILE *out);
/* The label of an event's host (NULL: a single host, nothing to say). */
const char *event_host_label(const struct trace_log *log, const struct trace_event *ev);
/* Only the logs of this host (-1: all), from the next rewind on, and
 * the host of a log of the set. */
void logset_only_host(struct trace_log *log, int64_t host);
uint32_t logset_host_of(const struct trace_log *log, uint32_t source);
int logset_next(struct trace_log *log, struct trace_event *ev, bool skim);
int logset_rewind(struct trace_log *log);
void logset_close(struct trace_log *log);
bool logset_lost(struct trace_log *log, uint64_t *lost);
void logset_waits(struct trace_log *log, struct posixtrace_block_stats *waits); /* the sum */
enum log_state logset_state(const struct trace_log *log);
int logset_finish(const struct trace_log *log, int rc);

/* window.c: the window of a log dump and every converter look at.
 * --since/--until: seconds after the first event, or "@SECONDS" since the
 * Epoch (the absolute column of dump). */
struct time_bound {
	bool set, absolute;
	double seconds;
};
struct event_window {
	struct log_filter filter; /* first: the log calls it */
	struct time_bound since, until;
	struct name_list only;
	struct number_list pids, tids;
	uint64_t snapshot; /* 0: all */
	uint64_t since_ns, until_ns;
	uint64_t current, held; /* the snapshot of the next event; the last with events */
};
#define WINDOW_OPT_SINCE 1100
#define WINDOW_OPT_UNTIL 1101
#define WINDOW_OPT_ONLY 1102
#define WINDOW_OPT_PID 1103
#define WINDOW_OPT_TID 1104
#define WINDOW_OPT_SNAPSHOT 1105
#define WINDOW_LONGOPTS {"since", required_argument, 0, WINDOW_OPT_SINCE}, \
	{"until", required_argument, 0, WINDOW_OPT_UNTIL}, \
	{"only", required_argument, 0, WINDOW_OPT_ONLY}, \
	{"pid", required_argument, 0, WINDOW_OPT_PID}, \
	{"tid", required_argument, 0, WINDOW_OPT_TID}, \
	{"snapshot", required_argument, 0, WINDOW_OPT_SNAPSHOT}
#define WINDOW_HELP "  --since T            only events at or after T\n" \
	"  --until T            only events at or before T\n" \
	"                       (T: seconds after the first event, or @SECONDS\n" \
	"                       since the Epoch)\n" \
	"  --only NAME,...      only these event types (an unknown name is an error)\n" \
	"  --pid PID,...        only events of these processes\n" \
	"  --tid TID,...        only events of these threads (the thread column:\n" \
	"                       the kernel thread id; a pthread_t such as\n" \
	"                       0x7f3a2c1b8740 is accepted too)\n" \
	"  --snapshot N         only the Nth snapshot of a flight recording (see\n" \
	"                       record): the events up to the Nth\n" \
	"                       posix_trace_flush_stop, after the one before\n"
/* 1: opt was a window option, taken; 0: it is not one; -1 (said): its
 * argument is bad (the usage error's status is EXIT_USAGE). */
int window_option(int opt, const char *arg, struct event_window *w, const char *cmd);
/* The window set on the log (a pass for the first time if a bound is
 * relative); false (said) if --only names no type of a seekable log. */
bool window_attach(struct event_window *w, struct trace_log *log);
/* After the last pass: an --only name that names no type (said), which a
 * log read from a pipe can tell only then. */
bool window_names_unknown(const struct event_window *w, struct trace_log *log);
/* After the last pass: rc, or a failure if --snapshot is past the log's
 * last (said). */
int window_finish(const struct event_window *w, struct trace_log *log, int rc);
void window_free(struct event_window *w);

/* eventfmt.c: one event as a line of text or JSON (dump and attach). */
#define THREAD_COLUMNS_MAX 128 /* pid, thread id, escaped name, padding */
struct thread_columns { /* those of the thread that posted last */
	bool valid;
	pid_t pid, tid;
	unsigned long thread;
	char comm[16];
	unsigned char len;
	char text[THREAD_COLUMNS_MAX];
};
/* The name column of the type printed last: escaped, padded, its space */
#define NAME_COLUMN_MAX (ESCAPED_SIZE(TRACE_EVENT_NAME_MAX) + 24)
struct name_column {
	const char *name; /* the name formatted (NULL: none yet), of this id */
	trace_event_id_t id;
	unsigned short len;
	char text[NAME_COLUMN_MAX];
};
struct call_site;
struct event_printer {
	bool json;
	bool have_first;
	uint64_t first_ns;
	bool date, utc; /* absolute times as a date (--clock-date, --clock-gmt) */
	bool cpu_column; /* text: the CPU after the thread (--cpu) */
	struct time_cache rel_seconds, abs_seconds;
	struct thread_columns last_thread;
	struct name_column last_name;
	const struct call_site *site; /* the event's, or NULL */
	/* The log read (NULL: a live stream): with several hosts, each
	 * event's host is shown (text: before the pid; JSON: "host"). */
	const struct trace_log *log;
	size_t host_width; /* of the host column: the longest host name, a space */
};
void print_event(struct event_printer *p, struct outbuf *o, const struct trace_event *ev);

/* sites.c: an event's call site, posix_prog_address by name, from the
 * confined symbolizer (symproc.h) */
struct site_options {
	const char *symfs;   /* --symfs DIR */
	bool off;            /* --no-symbols */
	unsigned timeout_ms; /* --symbol-timeout; 0: the default */
	bool no_demangle;    /* --no-demangle */
};
/* The longest of each string of a site, its NUL included: a longer name
 * is cut. */
#define CALL_SITE_WHERE_MAX 320
#define CALL_SITE_SOURCE_MAX 160
#define CALL_SITE_INLINED_MAX 160
#define CALL_SITE_TEXT_MAX (24 + ESCAPED_SIZE(CALL_SITE_WHERE_MAX) + \
                            2 * ESCAPED_SIZE(CALL_SITE_SOURCE_MAX))
struct call_site {
	const char *where;   /* function+0xOFF, or IMAGE+0xOFF (no symbol): raw bytes of the file */
	const char *source;  /* FILE:LINE, or empty */
	const char *inlined; /* the function inlined there (SOURCE is its line), or empty */
	/* the three escaped once (escape_text), for text; dump's end of line,
	 * "  at WHERE SOURCE, inlined INLINED" (text_len bytes, no NUL) */
	const char *where_esc, *source_esc, *inlined_esc;
	const char *text;
	size_t text_len;
};
/* What sites.c keeps of all sites together: names, their escaped forms,
 * the tables.  Past it, a site not named yet is shown as IMAGE+0xOFF
 * without asking the symbolizer (one note says so). */
#define SITES_MEMORY_MAX ((size_t)64 << 20)
struct site_memo {
	uint64_t at; /* the address in the file (the process's less the load bias) */
	uint32_t file;
	struct call_site site; /* where, where_esc and text: the memo's; source and inlined: interned */
};
struct site_string {
	uint64_t hash;
	char *raw, *esc; /* one allocation */
};
struct site_table {
	struct symproc *sym;
	/* The log read: its trid is that of the file being read (a rotated
	 * log changes files as it goes). */
	const struct trace_log *log;
	bool off, no_libdw, no_images, full;
	uint64_t asked, with_image; /* events looked up, with an image */
	struct memo_slot { uint64_t hash; struct site_memo *m; } *memo; /* sites named so far */
	size_t nmemo, used;
	struct site_string *strings; /* sources and inlined functions, interned */
	size_t nstrings, strings_used;
	size_t kept; /* bytes of all of these, at most SITES_MEMORY_MAX */
	struct posixtrace_image img;
	/* An unnamed site past the cap, valid until the next site_of */
	struct call_site scratch;
	char scratch_where[CALL_SITE_WHERE_MAX], scratch_esc[ESCAPED_SIZE(CALL_SITE_WHERE_MAX)];
	char scratch_text[CALL_SITE_TEXT_MAX];
	/* The answers of recent lookups by process and address, each for the
	 * times the library says it holds (posixtrace_image's valid_from,
	 * valid_until): most events need no lookup at all. */
	struct recent_site {
		int32_t pid;
		uint32_t source; /* of several logs */
		uint64_t pc, from, until;
		const struct call_site *site;
	} *recent;
};
bool sites_init(struct site_table *t, struct trace_log *log, const struct site_options *o);
/* NULL: no site (no image holds the address, or --no-symbols); else the
 * site (IMAGE+0xOFF when its file is not usable), valid until sites_free,
 * or only until the next site_of past SITES_MEMORY_MAX */
const struct call_site *site_of(struct site_table *t, const struct trace_event *ev);
/* Why symbols are missing, on standard error, once. */
void sites_notes(struct site_table *t, const char *cmd);
void sites_free(struct site_table *t);
/* --symfs, --no-symbols, --symbol-timeout and --no-demangle: true when opt is one of
 * them (getopt codes SITE_OPT_*) and was taken; false too, after a
 * message, when its argument is not valid (*bad set). */
#define SITE_OPT_SYMFS 1000
#define SITE_OPT_NO_SYMBOLS 1001
#define SITE_OPT_TIMEOUT 1002
#define SITE_OPT_NO_DEMANGLE 1003
#define SITE_LONGOPTS {"symfs", required_argument, 0, SITE_OPT_SYMFS}, \
	{"no-symbols", no_argument, 0, SITE_OPT_NO_SYMBOLS}, \
	{"symbol-timeout", required_argument, 0, SITE_OPT_TIMEOUT}, \
	{"no-demangle", no_argument, 0, SITE_OPT_NO_DEMANGLE}
#define SITE_HELP "  --symfs DIR          look for the traced programs' files under DIR first\n" \
	"                       (DIR/PATH, DIR/.build-id/xx/yyy[.debug])\n" \
	"  --no-symbols         print addresses without turning them into names\n" \
	"  --no-demangle        C++ function names as the files give them (_ZN...)\n" \
	"  --symbol-timeout SEC the longest wait for one answer of the symbolizer\n" \
	"                       (default 10; an image's answers get 6 times that)\n"
bool site_option(int opt, const char *arg, struct site_options *o);

/* hotsites.c: stats' table of the hottest call sites */
struct hot_sites;
struct hot_sites *hot_sites_new(struct trace_log *log, const struct site_options *o);
void hot_sites_event(struct hot_sites *h, const struct trace_event *ev);
void hot_sites_print(struct hot_sites *h, struct trace_log *log);
void hot_sites_free(struct hot_sites *h); /* and its notes on standard error */

/* record.c and attach.c: what both do with a target and a log */
void print_log_summary(int fd, const char *path, double seconds);
void print_pipe_summary(trace_id_t trid, double seconds);
/* --rotate SIZE[,COUNT] of record and attach (posixtrace_create_withlogdir). */
#define ROTATE_MIN_SIZE (64u << 10)
struct rotation {
	size_t size;      /* 0: none */
	uint32_t count;   /* 0: keep every file */
	uint32_t seconds; /* --rotate-every: a file also ends at this age; 0: never */
};
bool parse_rotation(const char *s, struct rotation *r);
bool parse_rotation_age(const char *s, uint32_t *seconds); /* N[s|m|h], at least 1 s */
bool rotation_fits(const char *cmd, const char *log, bool log_policy_given, int log_policy,
                   size_t log_size);
int rotation_dir(const char *path); /* prints the error */
int create_rotated(pid_t pid, const trace_attr_t *attr, int dirfd, const struct rotation *r,
                   trace_id_t *trid);
int log_fd_for(const char *path, bool force); /* fd or -1; "-" is stdout */
const char *log_create_error(int err, int fd);

/* pairs.c: begin/end events of one thread paired into durations. */
struct pair_rule {
	char begin[TRACE_EVENT_NAME_MAX + 1], end[TRACE_EVENT_NAME_MAX + 1];
	char slice[TRACE_EVENT_NAME_MAX + 1];
};
struct pair_rules {
	bool suffixes; /* NAME_begin/NAME_end and NAME:begin/NAME:end */
	struct pair_rule *rules;
	size_t count;
};
bool pair_rules_add(struct pair_rules *r, const char *spec); /* "BEGIN=END" */
void pair_rules_free(struct pair_rules *r);
/* What pairing keeps (pairs.c): the open begins of a thread (its
 * innermost), the open begins in all, the threads with open begins at once.
 * Past them the oldest open begin of the thread is forgotten (or the new
 * one, if the thread has none kept), and counted. */
#define PAIR_DEPTH_MAX 256
#define PAIR_OPEN_MAX 262144
#define PAIR_THREADS_MAX 65536
struct pair_limits {
	uint64_t too_deep;  /* forgotten: PAIR_DEPTH_MAX open on its thread */
	uint64_t too_many;  /* forgotten: PAIR_OPEN_MAX open in all */
	uint64_t not_kept;  /* never kept: no room for its thread, or none left */
};
enum pair_role { PAIR_NONE, PAIR_BEGIN, PAIR_END };
/* One pass: an end closes a begin as it comes. */
struct pairer;
struct pair_match {
	uint64_t begin_index, begin_ns;
	uint32_t kind;     /* the same for every pair of one slice name and rule */
	const char *slice; /* valid until pairer_free */
};
struct pairer *pairer_new(const struct pair_rules *rules);
/* true when ev, the index-th event of the log, is an end that closes the
 * begin *m tells. */
bool pairer_event(struct pairer *p, const struct trace_event *ev, uint64_t index,
                  struct pair_match *m);
const struct pair_limits *pairer_limits(const struct pairer *p);
/* The role of ev's type by the rules (pairing_type_role, in one pass). */
enum pair_role pairer_type_role(struct pairer *p, const struct trace_event *ev,
                                const char **slice);
void pairer_free(struct pairer *p);
/* Two passes (convert): which events of a log are paired. */
struct pairing;
struct log_overview {
	uint64_t first_ns, count; /* the earliest time, the number of events */
	pid_t controller;         /* the process of the first START event, 0 if none */
};
struct pairing *pairing_scan(struct trace_log *log, const struct pair_rules *rules,
                             struct log_overview *o);
enum pair_role pairing_role(struct pairing *p, uint64_t index, const struct trace_event *ev,
                            const char **slice);
/* The role of ev's type by the rules, paired or not (an unpaired begin is
 * PAIR_BEGIN), and its slice: export makes unfinished spans of begins. */
enum pair_role pairing_type_role(struct pairing *p, const struct trace_event *ev,
                                 const char **slice);
const struct pair_limits *pairing_limits(const struct pairing *p);
/* The process of the first START of the host's logs (its recorder), 0. */
pid_t pairing_controller(const struct pairing *p, uint32_t host);
void pairing_free(struct pairing *p);
/* The limits' counts as one line of text; false (nothing) if all are 0. */
#define PAIR_LIMITS_TEXT_SIZE 320
bool pair_limits_text(const struct pair_limits *l, char *buf, size_t size);

/* flight.c: the flight recorder of record and attach, snapshots on SIGUSR1,
 * on events of the --trigger types and at the end. */
#define FLIGHT_MAX_LISTED 32
struct flight {
	trace_id_t trid;
	uint64_t t0_ns;
	uint64_t count;                    /* snapshots taken on SIGUSR1 */
	uint64_t at_ns[FLIGHT_MAX_LISTED]; /* when, the first ones */
	const struct name_list *triggers;  /* --trigger NAME: the types */
	uint64_t triggered;                /* snapshots the triggers took */
};
/* Events of these types take a snapshot (before the command starts):
 * false, said, when one cannot be set. */
bool flight_set_triggers(trace_id_t trid, const struct name_list *triggers);
void flight_init(struct flight *f, trace_id_t trid, uint64_t t0_ns,
                 const struct name_list *triggers); /* SIGUSR1 from now */
void flight_take_pending(struct flight *f); /* a snapshot, if SIGUSR1 came */
void flight_before_shutdown(struct flight *f); /* the triggers' count */
/* What ended a command record ran, for the summary, in buf. */
const char *flight_command_end(bool exited, int status, char *buf, size_t size);
/* The summary; logfd, when a regular file, is read back so that each
 * snapshot is named by what took it. */
void flight_report(const struct flight *f, const char *end, int logfd, const char *path);

/* durations.c: begin/end pairs measured, for stats, in bounded memory
 * (sketch.h): a row per slice name, or per name and thread (at most
 * DURATION_THREAD_ROWS of those; past them the pairs go to a row of their
 * name for the other threads). */
#define DURATION_THREAD_ROWS 1024
struct durations;
struct durations *durations_new(const struct pair_rules *rules, bool per_thread);
void durations_event(struct durations *d, const struct trace_event *ev);
void durations_print(struct durations *d, const struct trace_log *log, uint64_t base_ns);
void durations_free(struct durations *d);

/* ctf.c and chrome.c */
int convert_to_ctf(struct trace_log *log, const char *dir, bool force, struct site_table *sites);
int convert_to_chrome(struct trace_log *log, const char *file, bool force,
                      const struct pair_rules *pairs, struct site_table *sites);
/* perfetto.c; its packets written as they are (PF_CODEC_NONE) or in
 * Perfetto's compressed packets (pfbatch.c) */
enum pf_codec { PF_CODEC_NONE, PF_CODEC_DEFLATE, PF_CODEC_ZSTD };
bool pf_codec_parse(const char *name, enum pf_codec *codec); /* none, deflate, zstd */
/* Why this build cannot write codec (a sentence), or NULL if it can. */
const char *pf_codec_missing(enum pf_codec codec);
int convert_to_perfetto(struct trace_log *log, const char *file, bool force,
                        const struct pair_rules *pairs, struct site_table *sites,
                        enum pf_codec codec);

#endif
