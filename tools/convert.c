/* SPDX-License-Identifier: MIT */
/*
 * posixtrace convert: a log to another trace format (CTF 1.8 for
 * babeltrace2/Trace Compass, Chrome trace JSON for chrome://tracing, or
 * Perfetto's own protobuf trace for ui.perfetto.dev and trace_processor).
 * The formats themselves are in ctf.c, chrome.c and perfetto.c; each
 * converts the window of the log dump would show (window.c).  Several logs
 * are converted as one (logset.c): a process group per host.
 */
#include <getopt.h>
#include <string.h>

#include "tool.h"

static void convert_help(FILE *out)
{
	fprintf(out,
	        "usage: %s convert LOG... --to ctf DIR [--force]\n"
	        "       %s convert LOG... --to chrome FILE.json [--force] [--pair BEGIN=END]...\n"
	        "                  [--no-pair]\n"
	        "       %s convert LOG... --to perfetto FILE [--force] [--pair BEGIN=END]...\n"
	        "                  [--no-pair] [--compression deflate|zstd]\n"
	        "LOG - reads standard input.  Several LOGs (files or rotated directories)\n"
	        "are merged on one time line as dump merges them, a process group per\n"
	        "host: chrome and perfetto name each process after its host and keep\n"
	        "pids of different hosts apart (host number x 2^22 + pid); ctf writes\n"
	        "a trace per host, DIR/hostN-NAME, its env's hostname the host's, which\n"
	        "babeltrace2 DIR reads as one.\n"
	        "ctf: a CTF 1.8 trace in DIR (created 0700): a metadata file and one\n"
	        "     stream file per writer thread (256 at most: later threads share\n"
	        "     them); babeltrace2 DIR lists it.  Begin/end events stay events.\n"
	        "     An event older than the last of its stream is written at that\n"
	        "     time, its field time_raised the nanoseconds it was moved by.\n"
	        "chrome: the Chrome trace event format (Perfetto, chrome://tracing);\n"
	        "     FILE - is standard output.  Events of one thread named NAME_begin\n"
	        "     and NAME_end (or NAME:begin and NAME:end) become a slice NAME\n"
	        "     (nested pairs nest; an unmatched one stays an instant event);\n"
	        "     every other event is an instant event.\n"
	        "perfetto: Perfetto's protobuf trace (ui.perfetto.dev, trace_processor);\n"
	        "     FILE - is standard output.  A track per process and thread, the\n"
	        "     same slices and instants as chrome, names and call sites interned,\n"
	        "     times in nanoseconds (CLOCK_REALTIME) as deltas.  --compression puts\n"
	        "     the packets in Perfetto's compressed packets, batches of 480 KiB:\n"
	        "     deflate (every trace_processor and ui.perfetto.dev) or zstd\n"
	        "     (faster; trace_processor since July 2026).\n"
	        "Each event's call site (function+offset, file:line) is in its args\n"
	        "(chrome), its site and source fields (ctf) or its source location\n"
	        "(perfetto), when the log holds the images of the traced programs\n"
	        "(record asks for them).\n\n"
	        "  --to ctf|chrome|perfetto  the output format (required)\n"
	        "  --force              replace an existing output of your own (a file,\n"
	        "                       or a directory of an earlier CTF conversion)\n"
	        "  --pair BEGIN=END     also pair these two event names (repeatable)\n"
	        "  --no-pair            no NAME_begin/NAME_end pairing (--pair still applies)\n"
	        "  --compression CODEC  perfetto: deflate, zstd or none (the default)\n"
	        "The events converted (as dump would show them):\n"
	        WINDOW_HELP
	        LOGSET_HELP
	        SITE_HELP
	        "  -h, --help           this help\n"
	        "Exit status: 0, 1 on failure, 2 for usage errors, 3 if the log is damaged\n"
	        "inside (after converting what could be read).\n",
	        PROG, PROG, PROG);
}

struct convert_options {
	const char *format, *out;
	char **logs;
	size_t nlogs;
	struct clock_offsets offsets;
	bool force;
	struct pair_rules pairs;
	struct event_window window;
	struct site_options sites;
	enum pf_codec codec;
};

enum { OPT_FORCE = 256, OPT_PAIR, OPT_NO_PAIR, OPT_COMPRESS };

static int parse_convert_options(int argc, char **argv, struct convert_options *o)
{
	static const struct option longopts[] = {
		{"to", required_argument, 0, 't'},        {"force", no_argument, 0, OPT_FORCE},
		{"pair", required_argument, 0, OPT_PAIR}, {"no-pair", no_argument, 0, OPT_NO_PAIR},
		{"compression", required_argument, 0, OPT_COMPRESS},
		{"help", no_argument, 0, 'h'},            SITE_LONGOPTS,
		WINDOW_LONGOPTS,                          LOGSET_LONGOPTS,
		{0, 0, 0, 0}};
	bool pair_options = false, compress_option = false;
	int c, w;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': o->format = optarg; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_PAIR:
			if (!pair_rules_add(&o->pairs, optarg))
				return usage_error("convert", "bad --pair '%s' (BEGIN=END, two different "
				                   "event names)", optarg);
			pair_options = true;
			break;
		case OPT_NO_PAIR: o->pairs.suffixes = false; pair_options = true; break;
		case OPT_COMPRESS:
			if (!pf_codec_parse(optarg, &o->codec))
				return usage_error("convert", "unknown --compression '%s' (deflate, zstd, none)",
				                   optarg);
			compress_option = true;
			break;
		case 'h': convert_help(stdout); return 0;
		case LOGSET_OPT_CLOCK_OFFSET:
			if (!clock_offset_parse(&o->offsets, optarg))
				return usage_error("convert", "bad --clock-offset '%s' (HOST=[+-]DURATION)",
				                   optarg);
			break;
		case ':': return usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
		default:
			if ((w = window_option(c, optarg, &o->window, "convert")) != 0) {
				if (w < 0)
					return EXIT_USAGE;
				break;
			}
			if (site_option(c, optarg, &o->sites))
				break;
			return usage_error("convert", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!o->format)
		return usage_error("convert", "--to ctf, chrome or perfetto is required");
	if (strcmp(o->format, "ctf") && strcmp(o->format, "chrome") && strcmp(o->format, "perfetto"))
		return usage_error("convert", "unknown format '%s' (ctf, chrome, perfetto)", o->format);
	if (argc - optind < 2)
		return usage_error("convert", "LOG and output are required");
	o->logs = argv + optind;
	o->nlogs = (size_t)(argc - optind - 1);
	o->out = argv[argc - 1];
	if (!strcmp(o->format, "ctf") && is_stdio_name(o->out))
		return usage_error("convert", "a CTF trace is a directory: it cannot go to "
		                   "standard output");
	if (!strcmp(o->format, "ctf") && pair_options)
		return usage_error("convert", "--pair and --no-pair are for --to chrome "
		                   "and perfetto (CTF keeps begin/end events as events)");
	if (compress_option && strcmp(o->format, "perfetto"))
		return usage_error("convert", "--compression is for --to perfetto");
	if (pf_codec_missing(o->codec))
		return usage_error("convert", "--compression: %s", pf_codec_missing(o->codec));
	return -1;
}

static int convert_window(const struct convert_options *o, struct trace_log *log,
                          struct site_table *sites)
{
	if (!strcmp(o->format, "ctf"))
		return convert_to_ctf(log, o->out, o->force, sites);
	if (!strcmp(o->format, "chrome"))
		return convert_to_chrome(log, o->out, o->force, &o->pairs, sites);
	return convert_to_perfetto(log, o->out, o->force, &o->pairs, sites, o->codec);
}

int cmd_convert(int argc, char **argv)
{
	struct convert_options o = {.pairs.suffixes = true};
	int rc = parse_convert_options(argc, argv, &o);
	if (rc < 0) {
		struct trace_log *log = trace_logs_open(o.logs, o.nlogs, &o.offsets);
		struct site_table sites;
		if (!log) {
			rc = EXIT_FAIL;
		} else if (!window_attach(&o.window, log) || !sites_init(&sites, log, &o.sites)) {
			rc = EXIT_FAIL;
			trace_log_close(log);
		} else {
			rc = convert_window(&o, log, &sites);
			sites_notes(&sites, "convert");
			sites_free(&sites);
			if (!log->seekable && window_names_unknown(&o.window, log))
				rc = EXIT_FAIL;
			rc = window_finish(&o.window, log, finish_log(log, rc));
			trace_log_close(log);
		}
	}
	window_free(&o.window);
	pair_rules_free(&o.pairs);
	clock_offsets_free(&o.offsets);
	return rc;
}
