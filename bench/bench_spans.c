/* SPDX-License-Identifier: MIT */
/*
 * bench_spans - a program that posts NPAIRS begin/end pairs, for the
 * encoding rate of posixtrace export (bench/run.sh): every tenth pair is
 * a request_begin/request_end around nine db:begin/db:end pairs, each
 * with 16 bytes of text, so that export makes NPAIRS spans nested two
 * deep, in traces of ten spans.
 *
 *   bench_spans NPAIRS [--time]
 *
 * With --time it prints the nanoseconds its posting loop took per event
 * (CLOCK_MONOTONIC around the loop): the traced program's own cost, which
 * bench/run.sh compares under record -o and record --otlp.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>

static double now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
	trace_event_id_t req_begin, req_end, db_begin, db_end;
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	static const char text[] = "SELECT 1 FROM t;";
	if (posix_trace_eventid_open("request_begin", &req_begin) ||
	    posix_trace_eventid_open("request_end", &req_end) ||
	    posix_trace_eventid_open("db:begin", &db_begin) ||
	    posix_trace_eventid_open("db:end", &db_end))
		return 1;
	double start = now_ns();
	for (long i = 0; i < n; i += 10) {
		posix_trace_event(req_begin, text, 16);
		for (int k = 0; k < 9; k++) {
			posix_trace_event(db_begin, text, 16);
			posix_trace_event(db_end, text, 16);
		}
		posix_trace_event(req_end, text, 16);
	}
	if (argc > 2 && !strcmp(argv[2], "--time"))
		printf("%.2f\n", (now_ns() - start) / (double)(2 * ((n + 9) / 10 * 10)));
	return 0;
}
