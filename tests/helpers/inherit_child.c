/* SPDX-License-Identifier: MIT */
/*
 * inherit_child: a program linking libposixtrace, started by t_inherit with
 * fork+exec, posix_spawn, vfork+exec or system() from a process traced with
 * POSIX_TRACE_INHERITED.  It never creates a stream itself: whatever it
 * records reaches a stream only if it joined its parent's at load.
 *
 * It registers its names in order, reports
 *     "ids <pid> <id of name 1> <id of name 2> ...\n"
 * on the report fd, optionally waits for a go byte, then posts COUNT events
 * of the first name's id, event k with the data {tag, k} (two uint32_t).
 *
 *   -n NAME   register NAME (repeatable; default "inh.exec")
 *   -c COUNT  events to post (default 3)
 *   -t TAG    first word of every event's data (default 0)
 *   -d USEC   sleep USEC microseconds after each event (default 0)
 *   -r FD     report fd (default 1)
 *   -g FD     before posting, wait until a byte can be read from FD
 *   -x        after the last event, execv(argv[optind], argv + optind)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <trace.h>
#include <unistd.h>

#define MAX_NAMES 8

int main(int argc, char **argv)
{
	const char *names[MAX_NAMES];
	trace_event_id_t ids[MAX_NAMES];
	int nnames = 0, report = 1, go = -1, exec_after = 0, opt;
	long count = 3, delay_us = 0;
	uint32_t tag = 0;
	while ((opt = getopt(argc, argv, "n:c:t:d:r:g:x")) != -1) {
		switch (opt) {
		case 'n':
			if (nnames < MAX_NAMES)
				names[nnames++] = optarg;
			break;
		case 'c': count = atol(optarg); break;
		case 't': tag = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'd': delay_us = atol(optarg); break;
		case 'r': report = atoi(optarg); break;
		case 'g': go = atoi(optarg); break;
		case 'x': exec_after = 1; break;
		default: return 2;
		}
	}
	if (nnames == 0)
		names[nnames++] = "inh.exec";
	char line[256];
	int len = snprintf(line, sizeof line, "ids %d", (int)getpid());
	for (int i = 0; i < nnames; i++) {
		if (posix_trace_eventid_open(names[i], &ids[i]) != 0)
			return 3;
		len += snprintf(line + len, sizeof line - (size_t)len, " %u", ids[i]);
	}
	len += snprintf(line + len, sizeof line - (size_t)len, "\n");
	if (write(report, line, (size_t)len) != len)
		return 4;
	if (go >= 0) {
		char c;
		if (read(go, &c, 1) != 1)
			return 5;
	}
	for (long k = 0; k < count; k++) {
		uint32_t data[2] = {tag, (uint32_t)k};
		posix_trace_event(ids[0], data, sizeof data);
		if (delay_us)
			usleep((useconds_t)delay_us);
	}
	if (exec_after && optind < argc) {
		execv(argv[optind], argv + optind);
		return 6;
	}
	return 0;
}
