/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): record, watch and read POSIX trace streams and logs.
 * This file only dispatches to the subcommands (one source file each); a
 * new one is one more line in the table.
 */
#include <string.h>

#include "tool.h"

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"record", cmd_record, "run a command and record its trace into a log"},
	{"attach", cmd_attach, "trace a running instrumented process (live or into a log)"},
	{"dump", cmd_dump, "print the events of a log, one line each"},
	{"stats", cmd_stats, "counts, rates, losses and attributes of a log"},
	{"convert", cmd_convert, "convert a log to CTF 1.8 or Chrome trace JSON"},
	{"export", cmd_export, "send logs to an OpenTelemetry collector (OTLP/HTTP)"},
	{"archive", cmd_archive, "copy the files a log's call sites need, by build id (--symfs)"},
	{"list", cmd_list, "list instrumented processes you may trace, and their event types"},
};

static void print_usage(FILE *out)
{
	fprintf(out, "usage: %s COMMAND [OPTIONS] ...\n\ncommands:\n", PROG);
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'%s COMMAND --help' describes a command; see posixtrace(1).\n", PROG);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		error_msg("no command given (try '%s --help')", PROG);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		print_usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("%s %d.%d.%d\n", PROG, POSIXTRACE_VERSION_MAJOR, POSIXTRACE_VERSION_MINOR,
		       POSIXTRACE_VERSION_PATCH);
		return 0;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	error_msg("unknown command '%s' (try '%s --help')", argv[1], PROG);
	return EXIT_USAGE;
}
