/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target over stream memory images (tests/streamimg.h): the
 * input is a list of writes a traced process could make into the memory
 * it shares with its controller and keeper (words of lanes and chunk
 * headers, records, links, heads, chunks started anew), applied to a
 * stream of each full policy; between them the consumers run: the drain
 * of posix_trace_clear (event by event) and of the keeper (whole stages,
 * each of which must decode as the reader says), the live reader's calls,
 * a LOOP writer's steal of the oldest chunk and a writer's pop of the free
 * pool.  Lane and chunk numbers, offsets and counts of lanes are also
 * written just past the stream's geometry, or anywhere (the checked
 * accessors of src/stream.h turn them away).  Every drain must end
 * within what the stream's committed memory can hold, nothing may be read
 * outside the stream (a page after it may not be touched), and the time
 * and memory of a run are bounded by libFuzzer's -timeout and
 * -rss_limit_mb.  Built and run by `make fuzz` with ASan and UBSan.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The harness's /proc reader and the library's have one name. */
#define pt_proc_stat pt_test_proc_stat
#include "../streamimg.h"
#include "../../src/lanes.h"
#undef pt_proc_stat

static struct img images[2];
static int ready;

static uint64_t word(const uint8_t **p, size_t *n)
{
	uint64_t v = 0;
	size_t k = *n < 8 ? *n : 8;
	memcpy(&v, *p, k);
	*p += k;
	*n -= k;
	return v;
}

/* A chunk the image has committed: a base one, or the last one. */
static uint32_t chunk_of(const struct img *im, uint64_t v)
{
	uint32_t c = (uint32_t)(v % (im->m->base_chunks + 1));
	return c == im->m->base_chunks ? im->m->max_chunks - 1 : c;
}

static int room_in(const struct img *im, uint32_t c, uint32_t need)
{
	uint32_t end = (uint32_t)atomic_load(&img_chunk(im, c)->commit);
	return end >= PT_CHUNK_HDR && end % 8 == 0 && (uint64_t)end + need <= im->m->chunk_size;
}

/* A number where an index, offset or count is: one near a bound of the
 * geometry (either side of it), or any. */
static uint32_t edge_of(const struct img *im, uint64_t v)
{
	const struct pt_map *m = im->m;
	const uint32_t bounds[] = {m->max_chunks, m->max_lanes, m->chunk_size, PT_CHUNK_HDR,
	                           PT_HEAD_CHUNK_MASK, PT_NONE};
	uint32_t b = bounds[(v >> 8) % (sizeof bounds / sizeof bounds[0])];
	return v & 1 ? (uint32_t)(v >> 32) : b + (uint32_t)(v >> 4) % 5 - 2;
}

/* One write of the list: an opcode word, then its operands. */
static void apply(const struct img *im, const uint8_t **p, size_t *n)
{
	uint64_t op = word(p, n), v = word(p, n);
	uint32_t c = chunk_of(im, op >> 8), lane = (uint32_t)(op >> 24) % PT_LANES_PER_PAGE;
	unsigned char *ch = (unsigned char *)img_chunk(im, c);
	switch (op % 12) {
	case 0: memcpy((unsigned char *)img_lane(im, lane) + (op >> 32) % 8 * 8, &v, 8); break;
	case 1: memcpy(ch + (op >> 32) % 16 * 8, &v, 8); break;
	case 2: memcpy(ch + ((op >> 32) % im->m->chunk_size & ~7u), &v, 8); break;
	case 3: img_start_chunk(im, c, lane, v); break;
	case 4: {
		uint32_t len = (uint32_t)(op >> 32) % 300;
		if (room_in(im, c, PT_REC_HDR + len + 8))
			img_put(im, c, pt_rec_word0(v % 1000, 32 + (uint32_t)(v >> 16) % 992, len,
			                            (int)(v >> 63)) | (v & PT_REC_SAMEPC),
			        *p, len <= *n ? len : 0, 1);
		break;
	}
	case 5:
		if (room_in(im, c, 24))
			img_put(im, c, pt_rec_word0(0, PT_ID_TIME, 8, 0), &v, 8, 0);
		break;
	case 6: {
		struct pt_owner_rec o = {v, {(int32_t)v, (int32_t)(v >> 32), v, "fuzz"}};
		if (room_in(im, c, PT_REC_HDR + sizeof o))
			img_put(im, c, pt_rec_word0(0, PT_ID_OWNER, sizeof o, 0), &o, sizeof o, 0);
		break;
	}
	case 7: atomic_store(&img_chunk(im, c)->next, (op >> 32) & 1 ? PT_NONE : chunk_of(im, v)); break;
	case 8: img_point(im, lane, c, PT_CHUNK_HDR + (uint32_t)(v % (im->m->chunk_size / 8)) * 8); break;
	case 10: {
		/* An index, offset or count past the geometry: a head's chunk or
		 * offset, a link, a commit's end, a lane count. */
		uint32_t e = edge_of(im, v);
		struct pt_stream_hdr *h = img_hdr(im);
		switch ((op >> 32) % 5) {
		case 0: img_point(im, lane, e, PT_CHUNK_HDR); break;
		case 1: img_point(im, lane, c, e); break;
		case 2: atomic_store(&img_chunk(im, c)->next, e); break;
		case 3: atomic_store(&img_chunk(im, c)->commit, (v >> 40) << 32 | e); break;
		default: atomic_store((op >> 36) & 1 ? &h->nlanes : &h->committed_lanes, e);
		}
		break;
	}
	case 11: atomic_store(&img_hdr(im)->free_top, edge_of(im, v)); break;
	default: memcpy((unsigned char *)img_hdr(im) + offsetof(struct pt_stream_hdr, state) +
	                    (op >> 32) % 1024 * 8, &v, 8);
	}
}

/* The consumers, once: a drain (bounded), a few live calls, a steal, a
 * writer's pop of the free pool. */
static void consume(struct img *im)
{
	uint64_t errors;
	if (img_drain(im, img_drain_bound(im), &errors) == UINT64_MAX)
		abort(); /* a drain yielded more than the stream can hold */
	if (img_drain_stages(im, img_drain_bound(im), &errors) == UINT64_MAX)
		abort(); /* ... or a stage the keeper would log does not decode */
	struct pt_rawev e;
	unsigned char data[512];
	size_t len;
	for (int i = 0; i < 64 && pt_read_raw(&im->h.src, &e, data, sizeof data, &len, 1, 0); i++)
		if (len > sizeof data)
			abort();
	pt_steal_oldest(im->m);
	pt_pool_pop(im->m);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	if (!ready) {
		if (img_create(&images[0], 64 << 10, 256, POSIX_TRACE_LOOP) != 0 ||
		    img_create(&images[1], 64 << 10, 256, POSIX_TRACE_FLUSH) != 0)
			abort();
		for (int i = 0; i < 2; i++)
			img_commit_last(&images[i]);
		ready = 1;
	}
	if (size < 1)
		return 0;
	struct img *im = &images[bytes[0] & 1];
	const uint8_t *p = bytes + 1;
	size_t n = size - 1;
	if (img_reset(im) != 0)
		abort();
	atomic_store(&img_hdr(im)->committed_lanes, PT_LANES_PER_PAGE);
	for (int k = 0; n >= 16 && k < 4096; k++) {
		apply(im, &p, &n);
		if (k % 16 == 15)
			consume(im);
	}
	consume(im);
	return 0;
}
