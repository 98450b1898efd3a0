/* SPDX-License-Identifier: MIT */
/*
 * Stream memory images for the tests and the fuzzer of its consumers
 * (tests/unit/t_streamimg.c, tests/fuzz/fuzz_stream.c).  A stream made by
 * the library (pt_stream_create), mapped again by the test with a page
 * that may not be touched right after its last byte, and a reader handle
 * over it; the test writes whatever it likes into the lanes and chunks,
 * as a traced process can, and runs the consumers: the reader's drain (the
 * keeper's and clear's), its live reads, a LOOP writer's steal.  Built
 * against the library's internal headers and linked with its objects.
 */
#ifndef PT_TEST_STREAMIMG_H
#define PT_TEST_STREAMIMG_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "../src/attr.h"
#include "../src/handle.h"
#include "../src/writer.h"

struct img {
	struct pt_handle h;
	struct pt_map *m;         /* &h.src.map */
	unsigned char *pristine;  /* the committed start as created: header to base chunks */
	size_t pristine_len;
	int last_committed;       /* img_commit_last was called */
};

/* Creates the stream and maps it with the guard page; 0 or an error. */
static inline int img_create(struct img *im, uint64_t stream_size, uint64_t max_data, int policy)
{
	struct pt_attr a;
	struct pt_map m;
	memset(im, 0, sizeof *im);
	pt_attr_defaults(&a);
	a.stream_size = stream_size;
	a.max_data_size = max_data;
	a.stream_policy = policy;
	a.stream_policy_set = 1;
	int err = pt_stream_create(&a, &m);
	if (err)
		return err;
	long page = sysconf(_SC_PAGESIZE);
	unsigned char *r = mmap(NULL, m.size + (size_t)page, PROT_NONE,
	                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r == MAP_FAILED)
		return ENOMEM;
	if (mmap(r, m.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, m.fd, 0) != r)
		return ENOMEM;
	munmap(m.base, m.size);
	m.base = r;
	im->h.kind = PT_H_ACTIVE;
	im->h.src.map = m;
	im->h.src.slot = -1;
	im->h.keeper_sock = im->h.keeper_pidfd = im->h.log_fd = -1;
	im->m = &im->h.src.map;
	im->pristine_len = m.chunks_off + (size_t)m.base_chunks * m.chunk_size;
	im->pristine = malloc(im->pristine_len);
	if (!im->pristine)
		return ENOMEM;
	memcpy(im->pristine, m.base, im->pristine_len);
	return pt_reader_init(&im->h.src.rd, im->m);
}

static inline uint32_t img_commit_last(struct img *im);

/* Back to the stream as created, with a new reader. */
static inline int img_reset(struct img *im)
{
	pt_reader_free(&im->h.src.rd);
	memcpy(im->m->base, im->pristine, im->pristine_len);
	if (im->last_committed)
		img_commit_last(im);
	return pt_reader_init(&im->h.src.rd, im->m);
}

static inline void img_destroy(struct img *im)
{
	pt_reader_free(&im->h.src.rd);
	free(im->pristine);
	munmap(im->m->base, im->m->size + (size_t)sysconf(_SC_PAGESIZE));
	close(im->m->fd);
}

static inline struct pt_stream_hdr *img_hdr(const struct img *im) { return pt_hdr(im->m); }
static inline struct pt_lane *img_lane(const struct img *im, uint32_t i) { return pt_lane_at(im->m, i); }
static inline struct pt_chunk *img_chunk(const struct img *im, uint32_t c) { return pt_chunk_at(im->m, c); }

/* The stream's last chunk (the memfd ends right after it) made committed
 * memory, as a growing stream would have it. */
static inline uint32_t img_commit_last(struct img *im)
{
	uint32_t c = im->m->max_chunks - 1;
	im->last_committed = 1;
	memset(img_chunk(im, c), 0, im->m->chunk_size);
	atomic_store(&img_hdr(im)->committed_chunks, im->m->max_chunks);
	return c;
}

/* Starts chunk c for lane `lane` as a writer would: header and a fresh
 * sequence number. */
static inline void img_start_chunk(const struct img *im, uint32_t c, uint32_t lane, uint64_t base)
{
	struct pt_chunk *ch = img_chunk(im, c);
	ch->base = base;
	ch->seq = atomic_fetch_add(&img_hdr(im)->chunk_seq, 1) + 1;
	ch->lane = lane;
	ch->owner.pid = 1;
	atomic_store(&ch->next, PT_NONE);
	atomic_store(&ch->commit, PT_CHUNK_HDR);
}

/* Appends a record (word0 and, unless same-address, word1) with `len`
 * bytes of data to chunk c; commits it with `events` more events. */
static inline uint32_t img_put(const struct img *im, uint32_t c, uint64_t w0, const void *data,
                               uint32_t len, uint32_t events)
{
	struct pt_chunk *ch = img_chunk(im, c);
	uint64_t commit = atomic_load(&ch->commit);
	uint32_t off = (uint32_t)commit, hdr = pt_rec_hdr(w0);
	unsigned char *p = (unsigned char *)ch + off;
	uint64_t pc = 0x1000;
	memcpy(p, &w0, 8);
	if (hdr == PT_REC_HDR)
		memcpy(p + 8, &pc, 8);
	if (len)
		memcpy(p + hdr, data, len);
	off += hdr + ((len + 7) & ~7u);
	atomic_store(&ch->commit, ((commit >> 32) + events) << 32 | off);
	return off;
}

static inline void img_point(const struct img *im, uint32_t lane, uint32_t c, uint32_t off)
{
	struct pt_stream_hdr *h = img_hdr(im);
	if (atomic_load(&h->nlanes) <= lane)
		atomic_store(&h->nlanes, lane + 1);
	uint64_t hd = atomic_load(&img_lane(im, lane)->head);
	atomic_store(&img_lane(im, lane)->head, pt_head_pack(c, off, pt_head_tag(hd) + 1));
}

/* A drain, as the keeper's: the events it yielded (and POSIX_TRACE_ERROR
 * among them in *errors); gives up (returns UINT64_MAX) past `limit`. */
static inline uint64_t img_drain(struct img *im, uint64_t limit, uint64_t *errors)
{
	struct pt_rawev e;
	unsigned char data[PT_MAX_DATA_LIMIT > 4096 ? 4096 : PT_MAX_DATA_LIMIT];
	size_t len;
	uint64_t n = 0;
	*errors = 0;
	pt_read_begin_drain(&im->h.src, UINT64_MAX);
	while (pt_read_raw(&im->h.src, &e, data, sizeof data, &len, 0, 0)) {
		*errors += e.id == POSIX_TRACE_ERROR;
		if (++n > limit) {
			n = UINT64_MAX;
			break;
		}
	}
	pt_read_end_drain(&im->h.src);
	return n;
}

/* A drain as the keeper makes it (keeper.c, drain): each lane's records
 * in whole stages, then the reader's own events with the lanes left
 * alone.  Every stage handed out must decode whole, with the events it
 * says (pt_rec_scan on the bytes themselves); the events (stored ones and
 * the reader's) and POSIX_TRACE_ERROR among them in *errors; UINT64_MAX
 * past `limit` or for a stage that does not decode as said. */
static inline uint64_t img_drain_stages(struct img *im, uint64_t limit, uint64_t *errors)
{
	struct pt_stage st;
	uint64_t n = 0;
	*errors = 0;
	pt_read_begin_drain(&im->h.src, UINT64_MAX);
	uint32_t lanes = pt_read_lanes(&im->h.src);
	for (uint32_t i = 0; i < lanes && n <= limit; i++) {
		while (n <= limit && pt_read_stage(&im->h.src, i, &st)) {
			struct pt_rec_scan scan = {.until = UINT64_MAX, .ctx = st.start};
			pt_rec_scan(st.rec, 0, st.len, im->m->max_data, &scan);
			if (scan.end != st.len || scan.events != st.events || st.lane != i)
				n = UINT64_MAX - 1;
			n = n == UINT64_MAX - 1 ? n : n + st.events;
		}
	}
	struct pt_rawev e;
	unsigned char data[512];
	size_t len;
	im->h.src.rd.lanes_off = 1;
	while (n <= limit && pt_read_raw(&im->h.src, &e, data, sizeof data, &len, 0, 0)) {
		*errors += e.id == POSIX_TRACE_ERROR;
		n++;
	}
	im->h.src.rd.lanes_off = 0;
	pt_read_end_drain(&im->h.src);
	return n > limit ? UINT64_MAX : n;
}

/* The most events a drain may yield: every byte of the chunks that are
 * committed memory (the base, and the last one if img_commit_last made it
 * so) an 8-byte event record, plus the reader's own events. */
static inline uint64_t img_drain_bound(const struct img *im)
{
	uint64_t chunks = (uint64_t)im->m->base_chunks + 1;
	return chunks * (im->m->chunk_size / PT_REC_HDR_MIN) + 4 * PT_LANES_PER_PAGE + 64;
}

#endif
