/* SPDX-License-Identifier: MIT */
/*
 * Raw timestamps and their conversion (see clock.h).  A calibration point is
 * {TSC before, CLOCK_MONOTONIC, TSC after}, the narrowest of three tries;
 * between two points a raw value is interpolated, so conversion follows NTP
 * slewing and VM migration as closely as points are taken: at creation, at
 * posix_trace_start, on every tick of a stream's keeper, and whenever a
 * conversion meets a value more than a millisecond past the last point.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "clock.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include "memcheck.h"

static int invariant_tsc(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000000u, &a, &b, &c, &d) || a < 0x80000007u)
		return 0;
	__get_cpuid(0x80000007u, &a, &b, &c, &d);
	return (d >> 8) & 1;
}

/* The kernel keeps time with the TSC only when it found it stable and
 * synchronised across CPUs: then so can we. */
static int kernel_uses_tsc(void)
{
	char buf[32];
	if (pt_read_text("/sys/devices/system/clocksource/clocksource0/current_clocksource", buf,
	                 sizeof buf) <= 0)
		return 0;
	return strncmp(buf, "tsc\n", 4) == 0;
}
#endif

uint32_t pt_clock_choose(void)
{
#if defined(__x86_64__)
	if (invariant_tsc() && kernel_uses_tsc())
		return PT_CLOCK_TSC;
#endif
	return PT_CLOCK_MONO;
}

static struct pt_calpoint take_point(uint32_t kind)
{
	struct pt_calpoint best = {0, 0};
	uint64_t width = UINT64_MAX;
	for (int i = 0; i < 3; i++) {
		uint64_t before = pt_clock_raw(kind);
		uint64_t mono = pt_mono_ns();
		uint64_t after = pt_clock_raw(kind);
		if (kind != PT_CLOCK_TSC)
			return (struct pt_calpoint){mono, mono};
		if (after >= before && after - before < width) {
			width = after - before;
			best.raw = before + (after - before) / 2;
			best.mono = mono;
		}
	}
	return best;
}

/* Tries at a stream's base pair. */
#define PAIR_TRIES 8

/* The realtime clock read between two monotonic reads, the narrowest of a
 * few tries, placed at their middle.  Read one after the other, the second
 * clock would be late by the first's call: hundreds of ns when its lines
 * are cold on a busy machine, more if the thread is preempted between
 * them, and every event read back as CLOCK_REALTIME as late (t_clock). */
void pt_clock_pair(uint64_t *mono, uint64_t *real)
{
	uint64_t width = UINT64_MAX;
	for (int i = 0; i < PAIR_TRIES; i++) {
		uint64_t before = pt_mono_ns();
		uint64_t r = pt_real_ns();
		uint64_t after = pt_mono_ns();
		if (after >= before && after - before < width) {
			width = after - before;
			*mono = before + width / 2;
			*real = r;
		}
	}
}

void pt_conv_init(struct pt_clockconv *c, uint32_t kind)
{
	memset(c, 0, sizeof *c);
	c->kind = kind;
	if (kind != PT_CLOCK_TSC)
		return;
	c->pts[0] = take_point(kind);
	/* A first rate from two points a little apart. */
	struct timespec pause = {0, 200000};
	nanosleep(&pause, NULL);
	c->pts[1] = take_point(kind);
	c->n = 2;
	uint64_t dr = c->pts[1].raw - c->pts[0].raw, dm = c->pts[1].mono - c->pts[0].mono;
	c->ticks_1ms = dm ? (uint64_t)((unsigned __int128)dr * 1000000u / dm) : 1000000u;
}

/* The segment a..b as a multiplier: one division per segment, a multiply
 * per event.  With 40 fractional bits the rounding error stays under a
 * nanosecond for 10^12 ticks (minutes at GHz rates) past a point; past that
 * conversion samples a new point first (pt_conv_mono). */
static struct pt_convseg segment(const struct pt_calpoint *a, const struct pt_calpoint *b,
                                 uint64_t lo, uint64_t hi)
{
	uint64_t dr = b->raw - a->raw, dm = b->mono > a->mono ? b->mono - a->mono : 0;
	unsigned __int128 mult = dr ? ((unsigned __int128)dm << PT_CONV_SHIFT) / dr : 0;
	return (struct pt_convseg){lo, hi, a->raw, a->mono,
	                           mult > UINT64_MAX ? UINT64_MAX : (uint64_t)mult};
}

static uint64_t seg_convert(const struct pt_convseg *s, uint64_t raw)
{
	if (raw >= s->raw) {
		unsigned __int128 x = ((unsigned __int128)(raw - s->raw) * s->mult) >> PT_CONV_SHIFT;
		return x > UINT64_MAX - s->mono ? UINT64_MAX : s->mono + (uint64_t)x;
	}
	unsigned __int128 x = ((unsigned __int128)(s->raw - raw) * s->mult) >> PT_CONV_SHIFT;
	return x > s->mono ? 0 : s->mono - (uint64_t)x;
}

static uint64_t interpolate(const struct pt_calpoint *a, const struct pt_calpoint *b, uint64_t raw)
{
	struct pt_convseg s = segment(a, b, 0, UINT64_MAX);
	return seg_convert(&s, raw);
}

/* Appends a point; a point that the last segment predicts within 100 ns
 * replaces the last one instead, so a steady clock keeps few points. */
static void add_point(struct pt_clockconv *c, struct pt_calpoint p)
{
	c->seg.lo = c->seg.hi = 0; /* the current segment may have changed */
	if (p.raw <= c->pts[c->n - 1].raw)
		return;
	if (c->n >= 2) {
		uint64_t predicted = interpolate(&c->pts[c->n - 2], &c->pts[c->n - 1], p.raw);
		uint64_t err = predicted > p.mono ? predicted - p.mono : p.mono - predicted;
		if (err < 100) {
			c->pts[c->n - 1] = p;
			return;
		}
	}
	if (c->n == PT_CAL_POINTS) {
		/* Forget the middle of the oldest segments, keep the ends. */
		memmove(&c->pts[1], &c->pts[2], (PT_CAL_POINTS - 2) * sizeof c->pts[0]);
		c->n--;
	}
	c->pts[c->n++] = p;
}

void pt_conv_sample(struct pt_clockconv *c)
{
	if (c->kind == PT_CLOCK_TSC && c->n)
		add_point(c, take_point(c->kind));
}

/* Finds the segment of raw and makes it the current one. */
static void find_segment(struct pt_clockconv *c, uint64_t raw)
{
	struct pt_calpoint *last = &c->pts[c->n - 1];
	if (raw > last->raw && raw - last->raw > c->ticks_1ms) {
		pt_conv_sample(c);
		last = &c->pts[c->n - 1];
	}
	if (raw >= last->raw) {
		/* Beyond the last point: extrapolated, until a millisecond
		 * later, when a new point is due. */
		uint64_t hi = last->raw + c->ticks_1ms;
		c->seg = segment(&c->pts[c->n - 2], last, last->raw, hi < last->raw ? UINT64_MAX : hi);
		return;
	}
	if (raw < c->pts[0].raw) {
		c->seg = segment(&c->pts[0], &c->pts[1], 0, c->pts[0].raw);
		return;
	}
	uint32_t lo = 0, hi = c->n - 1; /* pts[lo].raw <= raw < pts[hi].raw */
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->pts[mid].raw <= raw)
			lo = mid;
		else
			hi = mid;
	}
	c->seg = segment(&c->pts[lo], &c->pts[hi], c->pts[lo].raw, c->pts[hi].raw);
}

/* CLOCK_MONOTONIC nanoseconds of a raw value (of an event already
 * recorded, so not later than now, unless the writer lied). */
uint64_t pt_conv_mono(struct pt_clockconv *c, uint64_t raw)
{
	if (c->kind != PT_CLOCK_TSC || c->n < 2)
		return raw;
	if (PT_UNLIKELY(raw < c->seg.lo || raw >= c->seg.hi))
		find_segment(c, raw);
	return seg_convert(&c->seg, raw);
}
