/* SPDX-License-Identifier: MIT */
/*
 * Raw timestamps and their conversion (see clock.h).  A calibration point is
 * {TSC before, CLOCK_MONOTONIC, TSC after}, the narrowest of three tries;
 * between two points a raw value is interpolated, so conversion follows NTP
 * slewing and VM migration as closely as points are taken: at creation, at
 * every control and read call (at most once per millisecond), and on every
 * tick of a stream's keeper.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "internal.h"
#include "clock.h"

#if defined(__x86_64__)
#include <cpuid.h>

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
	int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
	              O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
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

static uint64_t interpolate(const struct pt_calpoint *a, const struct pt_calpoint *b, uint64_t raw)
{
	uint64_t dr = b->raw - a->raw, dm = b->mono - a->mono;
	if (!dr)
		return a->mono;
	if (raw >= a->raw) {
		unsigned __int128 x = (unsigned __int128)(raw - a->raw) * dm / dr;
		return x > UINT64_MAX - a->mono ? UINT64_MAX : a->mono + (uint64_t)x;
	}
	unsigned __int128 x = (unsigned __int128)(a->raw - raw) * dm / dr;
	return x > a->mono ? 0 : a->mono - (uint64_t)x;
}

/* Appends a point; a point that the last segment predicts within 100 ns
 * replaces the last one instead, so a steady clock keeps few points. */
static void add_point(struct pt_clockconv *c, struct pt_calpoint p)
{
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

/* CLOCK_MONOTONIC nanoseconds of a raw value (of an event already
 * recorded, so not later than now, unless the writer lied). */
uint64_t pt_conv_mono(struct pt_clockconv *c, uint64_t raw)
{
	if (c->kind != PT_CLOCK_TSC || c->n < 2)
		return raw;
	struct pt_calpoint *last = &c->pts[c->n - 1];
	if (raw > last->raw && raw - last->raw > c->ticks_1ms) {
		pt_conv_sample(c);
		last = &c->pts[c->n - 1];
	}
	if (raw >= last->raw)
		return interpolate(&c->pts[c->n - 2], last, raw);
	uint32_t lo = 0, hi = c->n - 1; /* pts[lo].raw <= raw < pts[hi].raw */
	if (raw < c->pts[0].raw)
		return interpolate(&c->pts[0], &c->pts[1], raw);
	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (c->pts[mid].raw <= raw)
			lo = mid;
		else
			hi = mid;
	}
	return interpolate(&c->pts[lo], &c->pts[hi], raw);
}
