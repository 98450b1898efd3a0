/* SPDX-License-Identifier: MIT */
/*
 * untraced - what an event statement costs a program that nothing traces,
 * in instructions: one loop, built three ways by bench/run.sh, each run
 * under callgrind (--toggle-collect=loop) for two loop counts; the
 * difference of the two counts over the difference of the loop counts is
 * the loop's instructions per iteration, and the row subtracts the empty
 * loop's:
 *   -DUNTRACED_POSIXTRACE  posix_trace_event(id, 16 B, 16) through
 *                          <trace.h>'s macro and the shared library, no
 *                          stream in the process
 *   -DUNTRACED_LTTNG       the LTTng-UST tracepoint ptpeer:event with its
 *                          two 64-bit words (ptpeer_tp.h), no session
 *   neither                the same loop with no event statement
 * Each iteration writes the two words bench_event and ust_peer send into
 * the program's payload buffer, as bench_event's loop does: that is the
 * program's work, the same in the three; what is left is the event
 * statement's (the tracepoint takes the words themselves, and evaluates
 * them only when enabled).
 *
 * Usage: untraced N
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(UNTRACED_POSIXTRACE)
#include <trace.h>
static trace_event_id_t ev_id;
#elif defined(UNTRACED_LTTNG)
#include "ptpeer_tp.h"
#endif

unsigned char payload[16];

__attribute__((noinline)) static void loop(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++) {
		uint64_t w[2] = {i, i * 0x9e3779b97f4a7c15ull};
		memcpy(payload, w, sizeof w);
#if defined(UNTRACED_POSIXTRACE)
		posix_trace_event(ev_id, payload, sizeof payload);
#elif defined(UNTRACED_LTTNG)
		lttng_ust_tracepoint(ptpeer, event, w[0], w[1]);
#else
		__asm__ __volatile__("" ::: "memory"); /* the stores stay in the loop */
#endif
	}
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: untraced N\n");
		return 2;
	}
#if defined(UNTRACED_POSIXTRACE)
	int err = posix_trace_eventid_open("bench.untraced", &ev_id);
	if (err) {
		fprintf(stderr, "untraced: posix_trace_eventid_open: error %d\n", err);
		return 1;
	}
#endif
	loop(strtoull(argv[1], NULL, 10));
	return 0;
}
