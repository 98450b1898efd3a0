/* SPDX-License-Identifier: MIT */
/*
 * ust_peer - the LTTng-UST side of the comparison: fires the tracepoint
 * ptpeer:event (a 16-byte payload, the two changing words bench_event
 * sends) N times in a loop on one thread pinned to CPU 1, as bench_event's
 * single writer is.  Whether anything is recorded, and with which
 * contexts, is decided by the LTTng session that bench/run.sh set up before
 * starting it (or the lack of one).
 *
 * Usage: ust_peer N [WARM]
 *   Fires WARM untimed events first (default 200000, bench_event's warm-up),
 *   then N timed ones.  Prints one line:
 *   PEER|<ns per timed event>|<events fired in all>
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ptpeer_tp.h"

/* CLOCK_MONOTONIC, or with BENCH_CLOCK=cpu the thread's own CPU time, as
 * bench_event and floor time their loops. */
static uint64_t loop_ns(void)
{
	const char *c = getenv("BENCH_CLOCK");
	struct timespec ts;
	clock_gettime(c && !strcmp(c, "cpu") ? CLOCK_THREAD_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Out of line so that the loop is the same code whatever N is. */
__attribute__((noinline)) static void fire(uint64_t first, uint64_t n)
{
	for (uint64_t i = first; i < first + n; i++)
		lttng_ust_tracepoint(ptpeer, event, i, i * 0x9e3779b97f4a7c15ull);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ust_peer N [WARM]\n");
		return 2;
	}
	uint64_t n = strtoull(argv[1], NULL, 10);
	uint64_t warm = argc > 2 ? strtoull(argv[2], NULL, 10) : 200000;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (err) {
		fprintf(stderr, "ust_peer: pthread_setaffinity_np: %s\n", strerror(err));
		return 1;
	}
	fire(0, warm);
	uint64_t t0 = loop_ns();
	fire(warm, n);
	uint64_t t1 = loop_ns();
	printf("PEER|%.3f|%llu\n", n ? (double)(t1 - t0) / (double)n : 0.0,
	       (unsigned long long)(warm + n));
	return 0;
}
