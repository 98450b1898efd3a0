/* SPDX-License-Identifier: MIT */
/*
 * bench_sites - a program with 1,000 call sites, for the cost of symbols
 * in posixtrace dump (bench/run.sh): built as the bench programs are (a
 * PIE with debug information), it posts NEVENTS 4-byte events, event i
 * from site i % 1000, each site a function of its own.
 *
 *   bench_sites NEVENTS
 */
#include <stdlib.h>
#include <trace.h>

static trace_event_id_t id;

#define SITE(n) \
	__attribute__((noinline)) static void site_##n(int i) { posix_trace_event(id, &i, sizeof i); }
#define SITES10(a) SITE(a##0) SITE(a##1) SITE(a##2) SITE(a##3) SITE(a##4) \
	SITE(a##5) SITE(a##6) SITE(a##7) SITE(a##8) SITE(a##9)
#define SITES100(a) SITES10(a##0) SITES10(a##1) SITES10(a##2) SITES10(a##3) SITES10(a##4) \
	SITES10(a##5) SITES10(a##6) SITES10(a##7) SITES10(a##8) SITES10(a##9)
SITES100(s0)
SITES100(s1)
SITES100(s2)
SITES100(s3)
SITES100(s4)
SITES100(s5)
SITES100(s6)
SITES100(s7)
SITES100(s8)
SITES100(s9)

#define REF(n) site_##n,
#define REFS10(a) REF(a##0) REF(a##1) REF(a##2) REF(a##3) REF(a##4) \
	REF(a##5) REF(a##6) REF(a##7) REF(a##8) REF(a##9)
#define REFS100(a) REFS10(a##0) REFS10(a##1) REFS10(a##2) REFS10(a##3) REFS10(a##4) \
	REFS10(a##5) REFS10(a##6) REFS10(a##7) REFS10(a##8) REFS10(a##9)
static void (*const sites[])(int) = {REFS100(s0) REFS100(s1) REFS100(s2) REFS100(s3)
                                     REFS100(s4) REFS100(s5) REFS100(s6) REFS100(s7)
                                     REFS100(s8) REFS100(s9)};
_Static_assert(sizeof sites / sizeof sites[0] == 1000, "1,000 call sites");

int main(int argc, char **argv)
{
	long n = argc == 2 ? atol(argv[1]) : 0;
	if (n <= 0 || posix_trace_eventid_open("bench.site", &id) != 0)
		return 2;
	for (long i = 0; i < n; i++)
		sites[i % 1000]((int)i);
	return 0;
}
