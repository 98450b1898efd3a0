/* SPDX-License-Identifier: MIT */
/*
 * posixtrace list: the running processes that have loaded libposixtrace and
 * that the caller may trace (as `lttng list -u` lists instrumented
 * applications), with the event types each registered.
 */
#include <errno.h>
#include <getopt.h>
#include <posixtrace.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static void list_help(FILE *out)
{
	fprintf(out,
	        "usage: %s list [PID...]\n"
	        "Lists the running processes that have loaded libposixtrace and that\n"
	        "you may trace (your own; any as root), with the event types each has\n"
	        "registered.  With PIDs, only those.\n\n"
	        "  -h, --help              this help\n"
	        "Exit status: 0, or 1 if a PID given is not such a process.\n",
	        PROG);
}

/* Names and comm come from the processes listed, anyone's program: escaped. */
static int print_type(trace_event_id_t id, const char *name, void *arg)
{
	char escaped[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)];
	(void)arg;
	printf("    %4u %s\n", id, escape_text(name, escaped, sizeof escaped));
	return 0;
}

static void print_comm(pid_t pid)
{
	char path[64], comm[64] = "?";
	snprintf(path, sizeof path, "/proc/%d/comm", (int)pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	char escaped[ESCAPED_SIZE(sizeof comm)];
	printf("%d %s\n", (int)pid, escape_text(comm, escaped, sizeof escaped));
}

/* 0, or the error of asking pid. */
static int list_one(pid_t pid)
{
	int err = posixtrace_process_eventtypes(pid, print_type, NULL);
	if (err)
		return err;
	return 0;
}

static int list_all(void)
{
	size_t n = 0, cap = 0;
	pid_t *pids = NULL;
	int err = posixtrace_list_processes(NULL, 0, &n);
	while (!err && n > cap) {
		cap = n + 16;
		pid_t *grown = realloc(pids, cap * sizeof *pids);
		if (!grown) {
			err = ENOMEM;
			break;
		}
		pids = grown;
		err = posixtrace_list_processes(pids, cap, &n);
	}
	if (err) {
		error_msg("list: %s", strerror(err));
		free(pids);
		return EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		print_comm(pids[i]);
		list_one(pids[i]); /* it may have exited meanwhile */
	}
	free(pids);
	return 0;
}

int cmd_list(int argc, char **argv)
{
	static const struct option longopts[] = {{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", longopts, NULL)) != -1) {
		if (c == 'h') {
			list_help(stdout);
			return 0;
		}
		return usage_error("list", "unknown option '%s'", argv[optind - 1]);
	}
	if (optind == argc)
		return list_all();
	int rc = 0;
	for (int i = optind; i < argc; i++) {
		char *end;
		long pid = strtol(argv[i], &end, 10);
		if (*argv[i] == '\0' || *end || pid <= 0)
			return usage_error("list", "bad pid '%s'", argv[i]);
		print_comm((pid_t)pid);
		int err = list_one((pid_t)pid);
		if (err) {
			error_msg("list: %ld: %s", pid,
			          err == ENOENT ? "has not loaded libposixtrace" : strerror(err));
			rc = EXIT_FAIL;
		}
	}
	return rc;
}
