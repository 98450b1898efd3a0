/* SPDX-License-Identifier: MIT */
/*
 * posixtrace dump: the events of a trace log, one line each, in the order
 * the library delivers them (it orders them; nothing here sorts), with a
 * trailing summary.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

/* --since/--until: seconds after the first event, or "@SECONDS" since the
 * Epoch (the absolute column of the output). */
struct time_bound {
	bool set, absolute;
	double seconds;
};

struct dump_options {
	const char *log;
	bool json, date, utc;
	struct time_bound since, until;
	struct name_list only;
	struct number_list pids, tids;
	uint64_t snapshot; /* 0: all */
	struct site_options sites;
};

static void dump_help(FILE *out)
{
	fprintf(out,
	        "usage: %s dump LOG [OPTIONS]\n"
	        "Prints the events of LOG (- for standard input), one line each, in the\n"
	        "order the library delivers them: time after the first event, absolute\n"
	        "time (seconds since the Epoch), pid, thread, event name, data (quoted\n"
	        "text when printable, else hex) and truncation marks; then a summary.\n\n"
	        "  --format text|json   json: one JSON object per line, the summary last\n"
	        "  --since T            only events at or after T\n"
	        "  --until T            only events at or before T\n"
	        "                       (T: seconds after the first event, or @SECONDS\n"
	        "                       since the Epoch)\n"
	        "  --only NAME,...      only these event types (an unknown name is an error)\n"
	        "  --pid PID,...        only events of these processes\n"
	        "  --tid TID,...        only events of these threads (the thread column:\n"
	        "                       the kernel thread id; a pthread_t such as\n"
	        "                       0x7f3a2c1b8740 is accepted too)\n"
	        "  --snapshot N         only the Nth snapshot of a flight recording (see\n"
	        "                       record): the events up to the Nth\n"
	        "                       posix_trace_flush_stop, after the one before\n"
	        "  --clock-date         absolute times as local date and time of day\n"
	        "  --clock-gmt          the same in UTC\n"
	        SITE_HELP
	        "  -h, --help           this help\n"
	        "Each event's call site ends its line: function+offset and file:line,\n"
	        "from the images the traced processes described (record does that) and\n"
	        "the files they name, used only when their build ids match.\n"
	        "Exit status: 0, 1 on failure, 2 for usage errors, 3 if the log is damaged\n"
	        "inside (after printing what could be read).\n",
	        PROG);
}

static bool parse_bound(const char *s, struct time_bound *b)
{
	b->set = true;
	b->absolute = *s == '@';
	return parse_seconds(s + b->absolute, &b->seconds);
}

enum { OPT_PID = 256, OPT_TID, OPT_CLOCK_DATE, OPT_CLOCK_GMT, OPT_SNAPSHOT };

static int parse_dump_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option longopts[] = {
		{"format", required_argument, 0, 'f'},  {"since", required_argument, 0, 's'},
		{"until", required_argument, 0, 'u'},   {"only", required_argument, 0, 'n'},
		{"pid", required_argument, 0, OPT_PID}, {"tid", required_argument, 0, OPT_TID},
		{"clock-date", no_argument, 0, OPT_CLOCK_DATE},
		{"clock-gmt", no_argument, 0, OPT_CLOCK_GMT},
		{"snapshot", required_argument, 0, OPT_SNAPSHOT},
		SITE_LONGOPTS,
		{"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage_error("dump", "bad --format '%s' (text, json)", optarg);
			o->json = !strcmp(optarg, "json");
			break;
		case 's':
			if (!parse_bound(optarg, &o->since))
				return usage_error("dump", "bad --since '%s'", optarg);
			break;
		case 'u':
			if (!parse_bound(optarg, &o->until))
				return usage_error("dump", "bad --until '%s'", optarg);
			break;
		case 'n':
			if (!name_list_parse(&o->only, optarg))
				return usage_error("dump", "bad --only '%s'", optarg);
			break;
		case OPT_PID:
			if (!number_list_parse(&o->pids, optarg))
				return usage_error("dump", "bad --pid '%s'", optarg);
			break;
		case OPT_TID:
			if (!number_list_parse(&o->tids, optarg))
				return usage_error("dump", "bad --tid '%s'", optarg);
			break;
		case OPT_SNAPSHOT: {
			char *end;
			errno = 0;
			unsigned long long n = strtoull(optarg, &end, 10);
			if (errno || end == optarg || *end || n == 0 || optarg[0] == '-')
				return usage_error("dump", "bad --snapshot '%s' (1, 2, ...)", optarg);
			o->snapshot = n;
			break;
		}
		case OPT_CLOCK_GMT: o->utc = true; /* fall through */
		case OPT_CLOCK_DATE: o->date = true; break;
		case 'h': dump_help(stdout); return 0;
		case ':': return usage_error("dump", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (site_option(c, optarg, &o->sites))
				break;
			return usage_error("dump", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return usage_error("dump", optind >= argc ? "no LOG given" : "too many arguments");
	o->log = argv[optind];
	return -1;
}

static uint64_t bound_ns(const struct time_bound *b, uint64_t first_ns)
{
	double ns = b->seconds * 1e9;
	if (b->absolute)
		return ns < 0 ? 0 : (uint64_t)ns;
	return ns < 0 && (uint64_t)-ns > first_ns ? 0 : first_ns + (int64_t)ns;
}

/* --tid names the thread column: the kernel thread id once the library
 * gives it, the pthread_t until then (and still accepted then). */
static bool thread_selected(const struct dump_options *o, const struct trace_event *ev)
{
	return number_list_has(&o->tids, (unsigned long)ev->info.posix_thread_id) ||
	       (ev->tid && number_list_has(&o->tids, (uint64_t)ev->tid));
}

static bool selected(const struct dump_options *o, const struct trace_event *ev,
                     uint64_t first_ns)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	/* an event without a time is neither before nor after a bound */
	if (o->since.set && event_has_time(ev) && ns < bound_ns(&o->since, first_ns))
		return false;
	if (o->until.set && event_has_time(ev) && ns > bound_ns(&o->until, first_ns))
		return false;
	if (o->pids.count && !number_list_has(&o->pids, (uint64_t)(uint32_t)ev->info.posix_pid))
		return false;
	if (o->tids.count && !thread_selected(o, ev))
		return false;
	return !o->only.count || name_list_has(&o->only, ev->name);
}

/* An --only name that names no event type of the log is a mistake (a typo
 * would otherwise show an empty trace).  A log read from a pipe may learn
 * names as it is read, so there the check waits for the end. */
static const char *unknown_only_name(const struct dump_options *o, struct trace_log *log)
{
	for (size_t i = 0; i < o->only.count; i++)
		if (!event_type_exists(log->trid, o->only.names[i]))
			return o->only.names[i];
	return NULL;
}

static int refuse_unknown_name(const char *name, struct trace_log *log)
{
	error_msg("%s: no event type named '%s' in this log", log->label, name);
	trace_log_close(log);
	return EXIT_FAIL;
}

static void print_summary(const struct dump_options *o, struct trace_log *log,
                          uint64_t shown)
{
	uint64_t lost = 0;
	enum log_state state = log_state(log);
	trace_log_lost(log, &lost);
	if (o->json)
		printf("{\"summary\":{\"events\":%llu,\"shown\":%llu,\"lost\":%llu,\"damaged\":%s,"
		       "\"cut_short\":%s}}\n",
		       (unsigned long long)log->events_read, (unsigned long long)shown,
		       (unsigned long long)lost, state == LOG_DAMAGED ? "true" : "false",
		       state == LOG_CUT_SHORT ? "true" : "false");
	else
		printf("# %llu events (%llu shown), %llu lost%s\n",
		       (unsigned long long)log->events_read, (unsigned long long)shown,
		       (unsigned long long)lost,
		       state == LOG_DAMAGED ? ", log damaged" :
		       state == LOG_CUT_SHORT ? ", log cut short" : "");
}

static int dump(const struct dump_options *o)
{
	struct trace_log *log = trace_log_open(o->log);
	if (!log)
		return EXIT_FAIL;
	const char *unknown = unknown_only_name(o, log);
	if (unknown && log->seekable)
		return refuse_unknown_name(unknown, log);
	struct event_printer printer = {.json = o->json, .date = o->date, .utc = o->utc};
	struct site_table sites;
	if (!sites_init(&sites, log, &o->sites)) {
		trace_log_close(log);
		return EXIT_FAIL;
	}
	struct trace_event ev;
	struct outbuf out;
	uint64_t shown = 0;
	int rc;
	printer.first_ns = log_time_base(log);
	printer.have_first = true;
	outbuf_init(&out, stdout);
	uint64_t snapshot = 1, held = 0; /* the one this event belongs to; the last with events */
	while ((rc = trace_log_next(log, &ev)) > 0) {
		if ((!o->snapshot || o->snapshot == snapshot) && selected(o, &ev, printer.first_ns)) {
			printer.site = site_of(&sites, &ev);
			print_event(&printer, &out, &ev);
			shown++;
		}
		held = snapshot;
		snapshot += ev.info.posix_event_id == POSIX_TRACE_FLUSH_STOP;
	}
	bool written = outbuf_flush(&out);
	outbuf_free(&out);
	sites_notes(&sites, "dump");
	sites_free(&sites);
	if (unknown && (unknown = unknown_only_name(o, log)) != NULL)
		return refuse_unknown_name(unknown, log);
	print_summary(o, log, shown);
	rc = finish_log(log, rc < 0 ? EXIT_FAIL : 0);
	if (o->snapshot > held) {
		error_msg("%s: no snapshot %llu: the log holds %llu", log->label,
		          (unsigned long long)o->snapshot, (unsigned long long)held);
		rc = rc ? rc : EXIT_FAIL;
	}
	trace_log_close(log);
	if (!written || fflush(stdout) != 0 || ferror(stdout)) {
		error_msg("writing the output failed");
		return EXIT_FAIL;
	}
	return rc;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o = {0};
	int rc = parse_dump_options(argc, argv, &o);
	if (rc < 0)
		rc = dump(&o);
	name_list_free(&o.only);
	number_list_free(&o.pids);
	number_list_free(&o.tids);
	return rc;
}
