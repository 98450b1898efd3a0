/*
 * posixtrace convert: a log to another trace format (CTF 1.8 for
 * babeltrace2/Trace Compass, or Chrome trace JSON for chrome://tracing and
 * Perfetto).  The formats themselves are in ctf.c and chrome.c.
 */
#include <getopt.h>
#include <string.h>

#include "posixtrace.h"

static void convert_help(FILE *out)
{
	fprintf(out,
	        "usage: %s convert LOG --to ctf DIR\n"
	        "       %s convert LOG --to chrome FILE.json\n"
	        "ctf: a CTF 1.8 trace (metadata and one stream file) in DIR, created if\n"
	        "     needed; babeltrace2 DIR lists it.\n"
	        "chrome: Chrome trace event format (instant events), FILE '-' for stdout.\n",
	        PROG, PROG);
}

int cmd_convert(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"to", required_argument, 0, 't'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	const char *format = NULL;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:h", longopts, NULL)) != -1) {
		switch (c) {
		case 't': format = optarg; break;
		case 'h': convert_help(stdout); return 0;
		case ':': return usage_error("convert", "option '%s' needs a value", argv[optind - 1]);
		default: return usage_error("convert", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (!format)
		return usage_error("convert", "--to ctf or --to chrome is required");
	if (strcmp(format, "ctf") && strcmp(format, "chrome"))
		return usage_error("convert", "unknown format '%s' (ctf, chrome)", format);
	if (argc - optind != 2)
		return usage_error("convert", argc - optind < 2 ? "LOG and output are required"
		                                                : "too many arguments");
	struct trace_log *log = trace_log_open(argv[optind]);
	if (!log)
		return EXIT_FAIL;
	int rc = !strcmp(format, "ctf") ? convert_to_ctf(log, argv[optind + 1])
	                                : convert_to_chrome(log, argv[optind + 1]);
	report_damage(log);
	trace_log_close(log);
	return rc;
}
