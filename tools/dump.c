/*
 * posixtrace dump: the events of a trace log, one line each, oldest first,
 * with a trailing summary.
 */
#include <getopt.h>
#include <string.h>

#include "posixtrace.h"

/* --since/--until: seconds after the first event, or "@SECONDS" since the
 * Epoch (the absolute column of the output). */
struct time_bound {
	bool set, absolute;
	double seconds;
};

struct dump_options {
	const char *log;
	bool json;
	struct time_bound since, until;
	struct name_list only;
};

static void dump_help(FILE *out)
{
	fprintf(out,
	        "usage: %s dump LOG [--format text|json] [--since T] [--until T] [--only NAME,...]\n"
	        "Prints one line per event: time after the first event, absolute time\n"
	        "(seconds since the Epoch), pid, thread, event name, data (quoted text\n"
	        "when printable, else hex) and truncation marks; then a summary.\n"
	        "T is seconds after the first event, or @SECONDS since the Epoch.\n"
	        "--format json prints one JSON object per line (the summary last).\n",
	        PROG);
}

static bool parse_bound(const char *s, struct time_bound *b)
{
	b->set = true;
	b->absolute = *s == '@';
	return parse_seconds(s + b->absolute, &b->seconds);
}

static int parse_dump_options(int argc, char **argv, struct dump_options *o)
{
	static const struct option longopts[] = {
		{"format", required_argument, 0, 'f'}, {"since", required_argument, 0, 's'},
		{"until", required_argument, 0, 'u'},  {"only", required_argument, 0, 'n'},
		{"help", no_argument, 0, 'h'},         {0, 0, 0, 0}};
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
		case 'h': dump_help(stdout); return 0;
		case ':': return usage_error("dump", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("dump", "unknown option '%s'", argv[optind - 1]);
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

static bool selected(const struct dump_options *o, const struct trace_event *ev,
                     uint64_t first_ns)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	if (o->since.set && ns < bound_ns(&o->since, first_ns))
		return false;
	if (o->until.set && ns > bound_ns(&o->until, first_ns))
		return false;
	return !o->only.count || name_list_has(&o->only, ev->name);
}

static void print_summary(const struct dump_options *o, struct trace_log *log,
                          uint64_t shown)
{
	uint64_t lost = 0;
	trace_log_lost(log, &lost);
	if (o->json)
		printf("{\"summary\":{\"events\":%llu,\"shown\":%llu,\"lost\":%llu,\"damaged\":%s}}\n",
		       (unsigned long long)log->events_read, (unsigned long long)shown,
		       (unsigned long long)lost, log->damaged ? "true" : "false");
	else
		printf("# %llu events (%llu shown), %llu lost%s\n",
		       (unsigned long long)log->events_read, (unsigned long long)shown,
		       (unsigned long long)lost, log->damaged ? ", log damaged" : "");
}

static int dump(const struct dump_options *o)
{
	struct trace_log *log = trace_log_open(o->log);
	if (!log)
		return EXIT_FAIL;
	struct event_printer printer = {.json = o->json};
	struct trace_event ev;
	uint64_t shown = 0, first_ns = 0;
	int rc;
	bool base_found = false;
	while ((rc = trace_log_next(log, &ev)) > 0) {
		/* Relative times count from the log's first event, shown or not;
		 * a leading OVERFLOW carries the time of a lost event, not a base. */
		if (!base_found) {
			first_ns = ts_ns(&ev.info.posix_timestamp);
			base_found = ev.info.posix_event_id != POSIX_TRACE_OVERFLOW;
			printer.have_first = true;
			printer.first_ns = first_ns;
		}
		if (selected(o, &ev, first_ns)) {
			print_event(&printer, stdout, &ev);
			shown++;
		}
	}
	print_summary(o, log, shown);
	report_damage(log);
	trace_log_close(log);
	if (fflush(stdout) != 0) {
		error_msg("writing the output failed");
		return EXIT_FAIL;
	}
	return rc < 0 ? EXIT_FAIL : 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_options o = {0};
	int rc = parse_dump_options(argc, argv, &o);
	if (rc < 0)
		rc = dump(&o);
	name_list_free(&o.only);
	return rc;
}
