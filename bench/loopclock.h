/* SPDX-License-Identifier: MIT */
/* The clock the benchmarks time their loops with (bench_event.c, floor.c). */
#ifndef POSIXTRACE_BENCH_LOOPCLOCK_H
#define POSIXTRACE_BENCH_LOOPCLOCK_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The clock of the timed loops: CLOCK_MONOTONIC, or with BENCH_CLOCK=cpu
 * the thread's own CPU time (a loop's cost without the time other jobs
 * took its CPU from it, on a shared machine; threads timed together
 * then count as the slowest one's time). */
static clockid_t loop_clock = CLOCK_MONOTONIC;

static inline uint64_t loop_ns(void)
{
	struct timespec ts;
	clock_gettime(loop_clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void choose_loop_clock(void)
{
	const char *c = getenv("BENCH_CLOCK");
	if (c && !strcmp(c, "cpu"))
		loop_clock = CLOCK_THREAD_CPUTIME_ID;
}

#endif
