/* SPDX-License-Identifier: MIT */
/*
 * posixtrace dump: the events of a trace log, one line each, in the order
 * the library delivers them (it orders them; nothing here sorts), with a
 * trailing summary; several logs merged on one time line (logset.c), after
 * a header that names each log's host and says how well they order.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

struct dump_options {
	char **logs;
	size_t nlogs;
	struct clock_offsets offsets;
	bool json, date, utc, cpu;
	struct event_window window;
	struct site_options sites;
};

static void dump_help(FILE *out)
{
	fprintf(out,
	        "usage: %s dump LOG... [OPTIONS]\n"
	        "Prints the events of LOG (- for standard input), one line each, in the\n"
	        "order the library delivers them: time after the first event, absolute\n"
	        "time (seconds since the Epoch), pid, thread, event name, data (quoted\n"
	        "text when printable, else hex) and truncation marks; then a summary.\n"
	        "Several LOGs (files or rotated directories) are merged on one time\n"
	        "line: logs of one boot of one machine exactly, logs of other hosts by\n"
	        "their clocks; a header names each log's host and says how well they\n"
	        "order, and each event's host comes before its pid.\n\n"
	        "  --format text|json   json: one JSON object per line, the summary last\n"
	        WINDOW_HELP
	        LOGSET_HELP
	        "  --clock-date         absolute times as local date and time of day\n"
	        "  --clock-gmt          the same in UTC\n"
	        "  --cpu                text: the CPU each event was posted on, in [ ]\n"
	        "                       after the thread ([  -]: unknown); json has \"cpu\"\n"
	        "                       whenever it is known\n"
	        SITE_HELP
	        "  -h, --help           this help\n"
	        "Each event's call site ends its line: function+offset and file:line,\n"
	        "from the images the traced processes described (record does that) and\n"
	        "the files they name, used only when their build ids match.\n"
	        "Exit status: 0, 1 on failure, 2 for usage errors, 3 if the log is damaged\n"
	        "inside (after printing what could be read).\n",
	        PROG);
}

enum { OPT_CLOCK_DATE = 256, OPT_CLOCK_GMT, OPT_CPU };

static int parse_dump_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option longopts[] = {
		{"format", required_argument, 0, 'f'},
		{"clock-date", no_argument, 0, OPT_CLOCK_DATE},
		{"clock-gmt", no_argument, 0, OPT_CLOCK_GMT},
		{"cpu", no_argument, 0, OPT_CPU},
		WINDOW_LONGOPTS,
		SITE_LONGOPTS,
		LOGSET_LONGOPTS,
		{"help", no_argument, 0, 'h'},          {0, 0, 0, 0}};
	int c, w;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage_error("dump", "bad --format '%s' (text, json)", optarg);
			o->json = !strcmp(optarg, "json");
			break;
		case OPT_CLOCK_GMT: o->utc = true; /* fall through */
		case OPT_CLOCK_DATE: o->date = true; break;
		case OPT_CPU: o->cpu = true; break;
		case 'h': dump_help(stdout); return 0;
		case LOGSET_OPT_CLOCK_OFFSET:
			if (!clock_offset_parse(&o->offsets, optarg))
				return usage_error("dump", "bad --clock-offset '%s' (HOST=[+-]DURATION)",
				                   optarg);
			break;
		case ':': return usage_error("dump", "option '%s' needs a value", argv[optind - 1]);
		default:
			if ((w = window_option(c, optarg, &o->window, "dump")) != 0) {
				if (w < 0)
					return EXIT_USAGE;
				break;
			}
			if (site_option(c, optarg, &o->sites))
				break;
			return usage_error("dump", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("dump", "no LOG given");
	o->logs = argv + optind;
	o->nlogs = (size_t)(argc - optind);
	return -1;
}

static void print_summary(const struct dump_options *o, struct trace_log *log,
                          uint64_t shown)
{
	uint64_t lost = 0;
	struct posixtrace_block_stats w;
	enum log_state state = log_state(log);
	trace_log_lost(log, &lost);
	trace_log_waits(log, &w);
	if (o->json)
		printf("{\"summary\":{\"events\":%llu,\"shown\":%llu,\"lost\":%llu,\"waited\":%llu,"
		       "\"waited_ns\":%llu,\"waited_lost\":%llu,\"damaged\":%s,\"cut_short\":%s}}\n",
		       (unsigned long long)log->events_read, (unsigned long long)shown,
		       (unsigned long long)lost, (unsigned long long)w.posixtrace_waited_events,
		       (unsigned long long)w.posixtrace_waited_ns,
		       (unsigned long long)w.posixtrace_waited_lost, state == LOG_DAMAGED ? "true" : "false",
		       state == LOG_CUT_SHORT ? "true" : "false");
	else {
		printf("# %llu events (%llu shown), %llu lost%s", (unsigned long long)log->events_read,
		       (unsigned long long)shown, (unsigned long long)lost,
		       state == LOG_DAMAGED ? ", log damaged" :
		       state == LOG_CUT_SHORT ? ", log cut short" : "");
		if (w.posixtrace_waited_events)
			printf("; %llu waited for room (%.3f s), %llu of them lost",
			       (unsigned long long)w.posixtrace_waited_events,
			       (double)w.posixtrace_waited_ns / 1e9,
			       (unsigned long long)w.posixtrace_waited_lost);
		putchar('\n');
	}
}

static int dump(struct dump_options *o)
{
	struct trace_log *log = trace_logs_open(o->logs, o->nlogs, &o->offsets);
	if (!log)
		return EXIT_FAIL;
	struct event_printer printer = {
	    .json = o->json, .date = o->date, .utc = o->utc, .cpu_column = o->cpu, .log = log};
	if (o->json)
		logset_describe_json(log, stdout);
	else
		logset_describe(log, stdout, "# ");
	/* relative times count from the log's first event, before any window */
	printer.first_ns = log_time_base(log);
	printer.have_first = true;
	if (!window_attach(&o->window, log)) {
		trace_log_close(log);
		return EXIT_FAIL;
	}
	struct site_table sites;
	if (!sites_init(&sites, log, &o->sites)) {
		trace_log_close(log);
		return EXIT_FAIL;
	}
	struct trace_event ev;
	struct outbuf out;
	uint64_t shown = 0;
	int rc;
	outbuf_init(&out, stdout);
	while ((rc = trace_log_next(log, &ev)) > 0) {
		printer.site = sites.off ? NULL : site_of(&sites, &ev); /* --no-symbols: no call */
		print_event(&printer, &out, &ev);
		shown++;
	}
	bool written = outbuf_flush(&out);
	outbuf_free(&out);
	sites_notes(&sites, "dump");
	sites_free(&sites);
	if (!log->seekable && window_names_unknown(&o->window, log)) {
		trace_log_close(log);
		return EXIT_FAIL;
	}
	print_summary(o, log, shown);
	rc = finish_log(log, rc < 0 ? EXIT_FAIL : 0);
	rc = window_finish(&o->window, log, rc);
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
	window_free(&o.window);
	clock_offsets_free(&o.offsets);
	return rc;
}
