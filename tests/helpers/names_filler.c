/* SPDX-License-Identifier: MIT */
/*
 * names_filler: a program linking libposixtrace that registers COUNT new
 * event names ("PREFIX.0", "PREFIX.1", ...) with posix_trace_eventid_open
 * and reports on stdout
 *     "first <id> last <id> unnamed <n>\n"
 * (the ids of the first and last names, and how many got
 * POSIX_TRACE_UNNAMED_USEREVENT), then exits 0 (2 on a failed call).
 * t_eventid starts it to see whose name space a new program uses.
 *
 *   -N COUNT   names to register (default 991)
 *   -p PREFIX  their prefix (default "filler")
 */
#include <stdio.h>
#include <stdlib.h>
#include <trace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long count = 991;
	const char *prefix = "filler";
	int opt;
	while ((opt = getopt(argc, argv, "N:p:")) != -1) {
		if (opt == 'N')
			count = strtol(optarg, NULL, 10);
		else if (opt == 'p')
			prefix = optarg;
		else
			return 2;
	}
	trace_event_id_t first = 0, last = 0;
	long unnamed = 0;
	for (long i = 0; i < count; i++) {
		char name[TRACE_EVENT_NAME_MAX + 1];
		trace_event_id_t id;
		snprintf(name, sizeof name, "%s.%ld", prefix, i);
		if (posix_trace_eventid_open(name, &id) != 0)
			return 2;
		if (i == 0)
			first = id;
		last = id;
		unnamed += id == POSIX_TRACE_UNNAMED_USEREVENT;
	}
	printf("first %u last %u unnamed %ld\n", (unsigned)first, (unsigned)last, unnamed);
	return fflush(stdout) == 0 ? 0 : 2;
}
