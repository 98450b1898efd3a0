/* SPDX-License-Identifier: MIT */
/*
 * server: an instrumented program that serves requests, each between a
 * "request_begin" and a "request_end" event (posixtrace stats measures
 * the pairs, convert --to chrome shows them as slices), and that crashes
 * on the request -c names, for the flight recorder (make demo):
 *
 *   posixtrace record --flight-recorder=1M -o crash.ptlog -- server -n 100000 -c 99990
 *
 * keeps the newest events in memory and writes them when the server dies
 * of SIGSEGV; posixtrace dump shows where each was posted.
 *
 * usage: server [-n REQUESTS] [-c CRASH_AT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <trace.h>
#include <unistd.h>

static trace_event_id_t ev_begin, ev_end, ev_lookup;

struct entry {
	int key;
	int value;
};

/* The entry of key: none for the request that crashes. */
static struct entry *lookup(struct entry *table, int key, int crash_at)
{
	posix_trace_event(ev_lookup, &key, sizeof key);
	return key == crash_at ? NULL : &table[key % 64];
}

__attribute__((noinline)) static int handle_request(struct entry *table, int n, int crash_at)
{
	posix_trace_event(ev_begin, &n, sizeof n);
	struct entry *e = lookup(table, n, crash_at);
	int value = e->value; /* a NULL entry: SIGSEGV */
	posix_trace_event(ev_end, &value, sizeof value);
	return value;
}

int main(int argc, char **argv)
{
	int requests = 1000, crash_at = -1, opt;
	while ((opt = getopt(argc, argv, "n:c:")) != -1) {
		if (opt == 'n')
			requests = atoi(optarg);
		else if (opt == 'c')
			crash_at = atoi(optarg);
		else
			return 2;
	}
	static struct entry table[64];
	for (int i = 0; i < 64; i++)
		table[i] = (struct entry){i, i * i};
	if (posix_trace_eventid_open("request_begin", &ev_begin) ||
	    posix_trace_eventid_open("request_end", &ev_end) ||
	    posix_trace_eventid_open("lookup", &ev_lookup))
		return 1;
	long sum = 0;
	for (int n = 0; n < requests; n++)
		sum += handle_request(table, n, crash_at);
	printf("served %d requests (%ld)\n", requests, sum);
	return 0;
}
