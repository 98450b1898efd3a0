/* SPDX-License-Identifier: MIT */
/*
 * The clock of event timestamps.  Writers record a raw value: the TSC on
 * x86-64 when the kernel itself keeps time with an invariant TSC, else
 * CLOCK_MONOTONIC in nanoseconds.  Readers turn raw values into
 * CLOCK_MONOTONIC nanoseconds with calibration points they take themselves
 * and keep in private memory (never a conversion a traced process wrote),
 * then onto the CLOCK_REALTIME scale of the stream's creation.
 */
#ifndef PT_CLOCK_H
#define PT_CLOCK_H

#include <stdint.h>
#include <time.h>
#include "layout.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

static inline uint64_t pt_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t pt_real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* A raw timestamp of clock `kind` (PT_CLOCK_TSC or PT_CLOCK_MONO). */
static inline uint64_t pt_clock_raw(uint32_t kind)
{
#if defined(__x86_64__)
	if (kind == PT_CLOCK_TSC)
		return __rdtsc();
#endif
	(void)kind;
	return pt_mono_ns();
}

/* The clock a new stream records with: PT_CLOCK_TSC where it is safe. */
uint32_t pt_clock_choose(void);

#define PT_CAL_POINTS 64

struct pt_calpoint {
	uint64_t raw;
	uint64_t mono;
};

/* A line between two points as a multiplier, for the raw range [lo, hi). */
struct pt_convseg {
	uint64_t lo, hi;
	uint64_t raw, mono;      /* the line's origin */
	uint64_t mult;           /* ns per raw unit, fixed point .PT_CONV_SHIFT */
};

/* A reader's private conversion from raw values to CLOCK_MONOTONIC ns. */
struct pt_clockconv {
	uint32_t kind;
	uint32_t n;
	uint64_t ticks_1ms;      /* raw units in about a millisecond */
	/* The segment the last conversion used: a reader converts events in
	 * time order, so most fall in the same one. */
	struct pt_convseg seg;
	struct pt_calpoint pts[PT_CAL_POINTS];
};

#define PT_CONV_SHIFT 40

/* CLOCK_MONOTONIC and CLOCK_REALTIME at one instant (a stream's base:
 * every time read back as CLOCK_REALTIME is placed by it). */
void pt_clock_pair(uint64_t *mono, uint64_t *real);

void pt_conv_init(struct pt_clockconv *c, uint32_t kind);
void pt_conv_sample(struct pt_clockconv *c);
uint64_t pt_conv_mono(struct pt_clockconv *c, uint64_t raw);

#endif
