/* SPDX-License-Identifier: MIT */
/*
 * Durations in bounded memory (sketch.h): the counters of the buckets
 * between the smallest and the largest value met, grown by half again
 * when a value falls outside (so a row pays for the range of its values,
 * not their number), never past SKETCH_BUCKETS.
 */
#include <stdlib.h>
#include <string.h>

#include "sketch.h"
#include "tool.h"

static unsigned floor_log2(uint64_t v)
{
	return 63u - (unsigned)__builtin_clzll(v);
}

size_t sketch_bucket(uint64_t v)
{
	if (v < SKETCH_EXACT)
		return (size_t)v;
	unsigned k = floor_log2(v), shift = k - SKETCH_SUB_BITS;
	size_t sub = (size_t)(v >> shift) & ((1u << SKETCH_SUB_BITS) - 1);
	return SKETCH_EXACT + (size_t)(k - 7) * (1u << SKETCH_SUB_BITS) + sub;
}

uint64_t sketch_bucket_low(size_t b)
{
	if (b < SKETCH_EXACT)
		return b;
	size_t k = 7 + (b - SKETCH_EXACT) / (1u << SKETCH_SUB_BITS);
	uint64_t sub = (b - SKETCH_EXACT) % (1u << SKETCH_SUB_BITS);
	return ((1ull << SKETCH_SUB_BITS) + sub) << (k - SKETCH_SUB_BITS);
}

uint64_t sketch_bucket_high(size_t b)
{
	if (b < SKETCH_EXACT)
		return b;
	size_t k = 7 + (b - SKETCH_EXACT) / (1u << SKETCH_SUB_BITS);
	return sketch_bucket_low(b) + ((1ull << (k - SKETCH_SUB_BITS)) - 1);
}

/* Room for bucket b: the held range grown to take it, and by half its
 * size again on the side it grew, so that values spread out one by one
 * cost few copies. */
static void hold(struct sketch *s, size_t b)
{
	size_t lo = s->lo, hi = s->lo + s->held; /* [lo, hi) */
	if (s->held && b >= lo && b < hi)
		return;
	size_t extra = s->held / 2 + 8;
	size_t nlo = lo, nhi = hi;
	if (!s->held) {
		nlo = b;
		nhi = b + 1;
	} else if (b < lo) {
		nlo = b > extra ? b - extra : 0;
	} else {
		nhi = b + 1 + extra;
	}
	if (nhi > SKETCH_BUCKETS)
		nhi = SKETCH_BUCKETS;
	uint64_t *counts = xmalloc((nhi - nlo) * sizeof *counts);
	memset(counts, 0, (nhi - nlo) * sizeof *counts);
	if (s->held)
		memcpy(counts + (lo - nlo), s->counts, s->held * sizeof *counts);
	free(s->counts);
	s->counts = counts;
	s->lo = (uint32_t)nlo;
	s->held = (uint32_t)(nhi - nlo);
}

void sketch_add(struct sketch *s, uint64_t v)
{
	size_t b = sketch_bucket(v);
	hold(s, b);
	s->counts[b - s->lo]++;
	if (!s->count || v < s->min)
		s->min = v;
	if (!s->count || v > s->max)
		s->max = v;
	s->count++;
}

uint64_t sketch_count_at(const struct sketch *s, size_t b)
{
	return b >= s->lo && b - s->lo < s->held ? s->counts[b - s->lo] : 0;
}

uint64_t sketch_quantile(const struct sketch *s, unsigned permille)
{
	if (!s->count)
		return 0;
	uint64_t rank = (s->count / 1000) * permille + ((s->count % 1000) * permille + 999) / 1000;
	if (rank <= 1)
		return s->min;
	if (rank >= s->count)
		return s->max;
	uint64_t seen = 0;
	for (size_t i = 0; i < s->held; i++) {
		seen += s->counts[i];
		if (seen < rank)
			continue;
		size_t b = s->lo + i;
		uint64_t low = sketch_bucket_low(b), high = sketch_bucket_high(b);
		uint64_t mid = low + (high - low + 1) / 2;
		return mid < s->min ? s->min : mid > s->max ? s->max : mid;
	}
	return s->max;
}

void sketch_free(struct sketch *s)
{
	free(s->counts);
	memset(s, 0, sizeof *s);
}
