/* SPDX-License-Identifier: MIT */
/*
 * A histogram of durations in bounded memory (tools/sketch.c), HDR style:
 * values below 128 ns each have a bucket of their own; every power of two
 * above, [2^k, 2^(k+1)), is cut into 64 buckets of equal width.  A value
 * is told by its bucket's middle, which is within 1/128 (0.79 %) of any
 * value in the bucket.  At most SKETCH_BUCKETS counters (30 KiB) whatever
 * the number of values; the count, the minimum and the maximum
 * are exact.
 */
#ifndef POSIXTRACE_SKETCH_H
#define POSIXTRACE_SKETCH_H

#include <stddef.h>
#include <stdint.h>

#define SKETCH_EXACT 128u    /* values below are exact */
#define SKETCH_SUB_BITS 6u   /* 64 buckets per power of two above */
#define SKETCH_BUCKETS (SKETCH_EXACT + (64u - 7u) * (1u << SKETCH_SUB_BITS))

struct sketch {
	uint64_t count, min, max;
	uint32_t lo, held;  /* counts[i] is bucket lo + i, held of them */
	uint64_t *counts;
};

size_t sketch_bucket(uint64_t v);
uint64_t sketch_bucket_low(size_t b);  /* the bucket's smallest value */
uint64_t sketch_bucket_high(size_t b); /* and its largest */
void sketch_add(struct sketch *s, uint64_t v);
/* The value of nearest rank ceil(count * permille / 1000) (the smallest
 * with at least that share at or below it), within 1/128 of it; the
 * exact minimum and maximum at the ends.  0 when empty. */
uint64_t sketch_quantile(const struct sketch *s, unsigned permille);
/* The count of bucket b (0 when it holds nothing). */
uint64_t sketch_count_at(const struct sketch *s, size_t b);
void sketch_free(struct sketch *s);

#endif
