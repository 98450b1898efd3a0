/* SPDX-License-Identifier: MIT */
/*
 * t_streamimg: the consumers of stream memory on images a test writes
 * (tests/streamimg.h), as a traced process can write them: the reader's
 * drains (posix_trace_clear's, event by event, and the keeper's, in whole
 * stages copied into the log as they are) and a LOOP writer's steal
 * of the oldest chunk (XSH 2.11.1.2, POSIX_TRACE_LOOP).  Whatever the
 * image, a drain ends after at most what the stream's committed memory
 * can hold, yields each stored event at most once, reads nothing outside
 * the stream, and reports damage with POSIX_TRACE_ERROR.  The stream is
 * mapped with a page that may not be touched right after it.  The checked
 * accessors of src/stream.h (and the registry's, src/layout.h) answer NULL
 * for every lane, chunk, offset and count past the geometry, and the
 * consumers given such numbers report damage instead of reading.  Before this
 * version, the steal of a chunk ending in an OWNER record of length 0 read
 * past the stream (SIGSEGV), and drains of a cycle never ended.
 */
/* The harness's /proc reader and the library's have one name. */
#define pt_proc_stat pt_test_proc_stat
#include "../harness.h"
#include <fcntl.h>
#undef pt_proc_stat
#include "../streamimg.h"
#include "../../src/ctl.h"
#include "../../src/lanes.h"
#include "../../src/registry.h"

static struct img im;

static void setup(void)
{
	ck_assert_int_eq(img_create(&im, 64 << 10, 256, POSIX_TRACE_LOOP), 0);
}

static void teardown(void) { img_destroy(&im); }

static uint64_t ev_word(uint32_t len) { return pt_rec_word0(1, 33, len, 0); }

/* Chunk c of lane `lane` with n events of 8 bytes. */
static void chunk_of_events(uint32_t c, uint32_t lane, uint32_t n)
{
	uint64_t v = 7;
	img_start_chunk(&im, c, lane, 1000);
	for (uint32_t i = 0; i < n; i++)
		img_put(&im, c, ev_word(8), &v, 8, 1);
}

static void link_chunk(uint32_t from, uint32_t to) { atomic_store(&img_chunk(&im, from)->next, to); }

/* The drains a loop test runs: _i 0, event by event; 1, whole stages. */
static uint64_t drain(int how, uint64_t limit, uint64_t *errors)
{
	return how ? img_drain_stages(&im, limit, errors) : img_drain(&im, limit, errors);
}

START_TEST(steal_of_chunk_ending_in_bare_owner_record_reads_nothing_past_it)
{
	uint32_t c = img_commit_last(&im), size = im.m->chunk_size;
	uint64_t t = 5;
	img_start_chunk(&im, c, 0, 0);
	uint32_t off = PT_CHUNK_HDR;
	while (off + PT_REC_HDR + 8 <= size - PT_REC_HDR)
		off = img_put(&im, c, pt_rec_word0(0, PT_ID_TIME, 8, 0), &t, 8, 0);
	while (off < size - PT_REC_HDR)
		off = img_put(&im, c, ev_word(0) | PT_REC_SAMEPC, NULL, 0, 1);
	/* The last 16 bytes of the stream: an OWNER record without its data. */
	off = img_put(&im, c, pt_rec_word0(0, PT_ID_OWNER, 0, 0), NULL, 0, 0);
	ck_assert_uint_eq(off, size);
	link_chunk(c, 0);
	img_point(&im, 0, c, size - PT_REC_HDR);
	atomic_store(&img_hdr(&im)->committed_lanes, PT_LANES_PER_PAGE);
	ck_assert_uint_eq(pt_steal_oldest(im.m), c);
}
END_TEST

START_TEST(drain_of_chunk_cycle_yields_each_event_once)
{
	uint64_t errors;
	chunk_of_events(1, 0, 3);
	chunk_of_events(2, 0, 3);
	link_chunk(1, 2);
	link_chunk(2, 1);
	img_point(&im, 0, 1, PT_CHUNK_HDR);
	uint64_t n = drain(_i, 1000, &errors);
	ck_assert_uint_eq(n - errors, 6);
	ck_assert_uint_eq(errors, 1);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 0); /* reported once per run */
}
END_TEST

START_TEST(drain_of_lanes_naming_one_self_linked_chunk_ends_at_once)
{
	uint64_t errors, t = 5;
	img_start_chunk(&im, 3, 0, 0);
	while ((uint32_t)atomic_load(&img_chunk(&im, 3)->commit) + 24 <= im.m->chunk_size)
		img_put(&im, 3, pt_rec_word0(0, PT_ID_TIME, 8, 0), &t, 8, 0);
	link_chunk(3, 3);
	for (uint32_t i = 0; i < PT_LANES_PER_PAGE; i++)
		img_point(&im, i, 3, PT_CHUNK_HDR);
	uint64_t n = drain(_i, 1000, &errors);
	ck_assert_uint_eq(n, errors);
	ck_assert_uint_ge(errors, 1);
}
END_TEST

START_TEST(drain_of_chunk_named_by_every_lane_reads_it_once)
{
	uint64_t errors;
	chunk_of_events(4, 0, 50);
	for (uint32_t i = 0; i < PT_LANES_PER_PAGE; i++)
		img_point(&im, i, 4, PT_CHUNK_HDR);
	uint64_t n = drain(_i, 100000, &errors);
	ck_assert_uint_eq(n - errors, 50);
}
END_TEST

/* One drain of posix_trace_clear's kind: the ids it yielded, counted
 * by kind (OVERFLOW, other); after each event, `between` runs, as a
 * writer would meanwhile.  Gives up past 1000 events. */
static void drain_until(uint64_t until, void (*between)(void), uint64_t *overflows,
                        uint64_t *others)
{
	struct pt_rawev e;
	unsigned char data[256];
	size_t len;
	*overflows = *others = 0;
	pt_read_begin_drain(&im.h.src, until);
	while (*overflows + *others <= 1000 && pt_read_raw(&im.h.src, &e, data, sizeof data, &len, 0, 0)) {
		*(e.id == POSIX_TRACE_OVERFLOW ? overflows : others) += 1;
		if (between)
			between();
	}
	pt_read_end_drain(&im.h.src);
}

static void lose_one(void)
{
	atomic_store(&img_hdr(&im)->ovf_ts, 5);
	atomic_fetch_add(&img_hdr(&im)->ovf_count, 1);
}

/* A writer that counts a loss while each event is read (or a target
 * counting them without pause) does not keep a drain going: the drain
 * takes the header's losses once, the next drain those counted since. */
START_TEST(drain_takes_the_losses_counted_meanwhile_once)
{
	uint64_t overflows, others;
	lose_one();
	drain_until(UINT64_MAX, lose_one, &overflows, &others);
	ck_assert_uint_eq(overflows, 1);
	drain_until(UINT64_MAX, NULL, &overflows, &others);
	ck_assert_uint_eq(overflows, 1);
	drain_until(UINT64_MAX, NULL, &overflows, &others);
	ck_assert_uint_eq(overflows, 0);
}
END_TEST

/* A drain stops at the first event recorded after its time (clear's:
 * when it was called), so that writers posting while it reads do not
 * make it last; the next drain takes the rest. */
START_TEST(drain_stops_at_events_after_its_time)
{
	uint64_t overflows, others, v = 7;
	img_start_chunk(&im, 1, 0, 1000);
	img_start_chunk(&im, 2, 1, 5000);
	for (int i = 0; i < 3; i++) {
		img_put(&im, 1, ev_word(8), &v, 8, 1);
		img_put(&im, 2, ev_word(8), &v, 8, 1);
	}
	img_point(&im, 0, 1, PT_CHUNK_HDR);
	img_point(&im, 1, 2, PT_CHUNK_HDR);
	drain_until(2000, NULL, &overflows, &others);
	ck_assert_uint_eq(others, 3);
	drain_until(UINT64_MAX, NULL, &overflows, &others);
	ck_assert_uint_eq(others, 3);
	ck_assert_uint_eq(overflows, 0);
}
END_TEST

START_TEST(head_moved_back_in_chunk_does_not_yield_again)
{
	uint64_t errors;
	chunk_of_events(5, 0, 10);
	img_point(&im, 0, 5, PT_CHUNK_HDR);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 10);
	img_point(&im, 0, 5, PT_CHUNK_HDR);
	uint64_t n = drain(_i, 1000, &errors);
	ck_assert_uint_eq(n, errors);
	ck_assert_uint_eq(errors, 1);
}
END_TEST

START_TEST(chunk_restarted_by_a_writer_is_read_again)
{
	uint64_t errors;
	chunk_of_events(6, 0, 4);
	img_point(&im, 0, 6, PT_CHUNK_HDR);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 4);
	/* The lane's writer moves on to chunk 7; the reader retires 6, which a
	 * writer of lane 1 then starts again: its events are new ones. */
	chunk_of_events(7, 0, 2);
	link_chunk(6, 7);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 2);
	chunk_of_events(6, 1, 3);
	img_point(&im, 1, 6, PT_CHUNK_HDR);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 3);
	ck_assert_uint_eq(errors, 0);
}
END_TEST

/* xorshift64: the random images are the same at every run. */
static uint64_t rnd(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* A chunk of the image: a base one, or the last (committed here). */
static uint32_t any_chunk(uint64_t *x)
{
	uint32_t c = (uint32_t)(rnd(x) % (im.m->base_chunks + 1));
	return c == im.m->base_chunks ? im.m->max_chunks - 1 : c;
}

/* Whether img_put may append 64 bytes to chunk c (its commit word may be
 * anything by now). */
static int room_in(uint32_t c)
{
	uint32_t end = (uint32_t)atomic_load(&img_chunk(&im, c)->commit);
	return end >= PT_CHUNK_HDR && end % 8 == 0 && (uint64_t)end + 64 <= im.m->chunk_size;
}

/* One random change, as a scribbler makes them. */
static void scribble(uint64_t *x)
{
	uint64_t v = rnd(x), r = rnd(x);
	uint32_t c = any_chunk(x), lane = (uint32_t)(r % PT_LANES_PER_PAGE);
	unsigned char *ch = (unsigned char *)img_chunk(&im, c);
	switch (r >> 60) {
	case 0: memcpy((unsigned char *)img_lane(&im, lane) + (r >> 8) % 8 * 8, &v, 8); break;
	case 1: memcpy(ch + (r >> 8) % 16 * 8, &v, 8); break;
	case 2: memcpy(ch + ((r >> 8) % im.m->chunk_size & ~7u), &v, 8); break;
	case 3: case 4: img_start_chunk(&im, c, lane, v % 1000); break;
	case 5: case 6: case 7:
		if (room_in(c))
			img_put(&im, c, ev_word((uint32_t)(v % 8)), &v, (uint32_t)(v % 8), 1);
		break;
	case 8: link_chunk(c, any_chunk(x)); break;
	case 9: case 10: img_point(&im, lane, c, PT_CHUNK_HDR + (uint32_t)(v % 64) * 8); break;
	case 11: img_point(&im, lane, c, PT_CHUNK_HDR); break;
	default: {
		uint64_t t = v % 5000;
		if (room_in(c))
			img_put(&im, c, pt_rec_word0(0, PT_ID_TIME, 8, 0), &t, 8, 0);
	}
	}
}

START_TEST(random_images_drain_within_the_streams_memory)
{
	uint64_t x = 0x9e3779b97f4a7c15ull + (uint64_t)_i, errors, most = 0;
	img_commit_last(&im);
	atomic_store(&img_hdr(&im)->committed_lanes, PT_LANES_PER_PAGE);
	for (int round = 0; round < 300; round++) {
		ck_assert_int_eq(img_reset(&im), 0);
		for (int k = 0; k < 200; k++) {
			scribble(&x);
			if (k % 50 == 49) {
				uint64_t n = drain(k / 50 % 2, img_drain_bound(&im), &errors);
				ck_assert_uint_ne(n, UINT64_MAX);
				most = n > most ? n : most;
				pt_steal_oldest(im.m);
			}
		}
	}
	printf("t_streamimg: random images: the longest drain yielded %llu events (bound %llu)\n",
	       (unsigned long long)most, (unsigned long long)img_drain_bound(&im));
}
END_TEST

/* ---- the checked accessors (stream.h) -------------------------------------
 * Every number another process can write where an index, offset or count
 * is: a lane, a chunk, an offset in a chunk, a count of lanes, a name's id. */

/* Whether [p, p + len) lies inside the stream's mapping. */
static int in_map(const void *p, size_t len)
{
	const unsigned char *b = im.m->base, *q = p;
	return q >= b && len <= im.m->size && (size_t)(q - b) <= im.m->size - len;
}

/* Numbers near every bound, then random ones (xorshift, fixed seed). */
static uint32_t probe_value(uint32_t k, uint64_t *x)
{
	const struct pt_map *m = im.m;
	const uint32_t edges[] = {0, 1, 7, 8, PT_CHUNK_HDR - 8, PT_CHUNK_HDR, PT_CHUNK_HDR + 4,
	                          m->chunk_size - 8, m->chunk_size, m->chunk_size + 8,
	                          m->max_lanes - 1, m->max_lanes, m->max_lanes + 1,
	                          m->max_chunks - 1, m->max_chunks, m->max_chunks + 1,
	                          PT_HEAD_CHUNK_MASK - 1, PT_HEAD_OFF_MASK, PT_NONE - 1, PT_NONE};
	uint32_t n = sizeof edges / sizeof edges[0];
	if (k < n)
		return edges[k];
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return k % 2 ? (uint32_t)*x : (uint32_t)(*x % (2 * (uint64_t)m->max_chunks + 64));
}

/* Checks the accessors answer NULL (an offset: 0, a count: the most the
 * map holds) for every number outside the geometry, and that what they
 * answer otherwise lies inside the mapping. */
START_TEST(accessors_answer_null_for_numbers_past_the_geometry)
{
	const struct pt_map *m = im.m;
	uint64_t x = 0x2545f4914f6cdd1dull;
	for (uint32_t k = 0; k < 1000000; k++) {
		uint32_t v = probe_value(k, &x);
		struct pt_lane *l = pt_lane_get(m, v);
		struct pt_chunk *ch = pt_chunk_get(m, v);
		ck_assert_int_eq(l != NULL, v < m->max_lanes);
		ck_assert(!l || (in_map(l, sizeof *l) && l == pt_lane_at(m, v)));
		ck_assert_int_eq(ch != NULL, v < m->max_chunks);
		ck_assert(!ch || (in_map(ch, m->chunk_size) && ch == pt_chunk_at(m, v)));
		ck_assert_int_eq(pt_chunk_off_ok(m, v),
		                 v >= PT_CHUNK_HDR && v <= m->chunk_size && v % 8 == 0);
		uint32_t end = pt_commit_end(m, (uint64_t)k << 32 | v, PT_CHUNK_HDR);
		ck_assert_uint_eq(end, v >= PT_CHUNK_HDR && v <= m->chunk_size ? v : 0);
		ck_assert_uint_eq(pt_commit_end(m, v, m->chunk_size), v == m->chunk_size ? v : 0);
		ck_assert_uint_eq(pt_lanes_within(m, v), v < m->max_lanes ? v : m->max_lanes);
	}
	for (uint32_t id = 0; id < 2 * PT_NEVENT_IDS; id++) {
		char *name = pt_name_get(m, id);
		ck_assert_int_eq(name != NULL, id > PT_USER_FIRST && id < PT_NEVENT_IDS);
		ck_assert(!name || (in_map(name, PT_NAME_SIZE) &&
		                    (unsigned char *)name + PT_NAME_SIZE <= m->base + m->lanes_off));
	}
	ck_assert_int_eq(pt_stream_get_name(m, PT_NEVENT_IDS, (char[PT_NAME_SIZE]){0}), EINVAL);
}
END_TEST

/* Checks that a reader given heads, links and commit words that name a
 * chunk past the stream, an offset past a chunk or an end past it reports
 * each such lane damaged (POSIX_TRACE_ERROR) and reads the events before
 * the damage, never memory outside the stream (the page after it may not
 * be touched); _i: the drain's kind, as above. */
START_TEST(heads_links_and_ends_past_the_geometry_are_damage_not_reads)
{
	const struct pt_map *m = im.m;
	uint64_t errors;
	/* Lanes 0, 1: heads naming a chunk past the stream. */
	img_point(&im, 0, m->max_chunks, PT_CHUNK_HDR);
	img_point(&im, 1, PT_HEAD_CHUNK_MASK - 1, PT_CHUNK_HDR);
	/* Lane 2: a chunk's offset past its end (the head has room for 16 MiB). */
	chunk_of_events(1, 2, 2);
	img_point(&im, 2, 1, m->chunk_size + 8);
	/* Lanes 3 and 4: three and two events, then a link past the stream. */
	chunk_of_events(2, 3, 3);
	link_chunk(2, m->max_chunks);
	img_point(&im, 3, 2, PT_CHUNK_HDR);
	chunk_of_events(3, 4, 2);
	link_chunk(3, PT_NONE - 1);
	img_point(&im, 4, 3, PT_CHUNK_HDR);
	/* Lane 5: a commit word whose end is past the chunk. */
	chunk_of_events(4, 5, 1);
	atomic_store(&img_chunk(&im, 4)->commit, 1ull << 32 | (m->chunk_size + 8));
	img_point(&im, 5, 4, PT_CHUNK_HDR);
	uint64_t n = drain(_i, 1000, &errors);
	ck_assert_uint_eq(n - errors, 5);
	ck_assert_uint_eq(errors, 6);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 0); /* reported once per run */
}
END_TEST

/* Checks that a LOOP writer looking for the oldest chunk to take passes
 * over heads naming a chunk past the stream and does not take a chunk
 * whose link leads past it. */
START_TEST(steal_passes_over_heads_and_links_past_the_geometry)
{
	const struct pt_map *m = im.m;
	img_point(&im, 0, m->max_chunks, PT_CHUNK_HDR);
	img_point(&im, 1, PT_HEAD_CHUNK_MASK - 1, PT_CHUNK_HDR);
	chunk_of_events(1, 2, 2);
	link_chunk(1, m->max_chunks);
	img_point(&im, 2, 1, PT_CHUNK_HDR);
	ck_assert_uint_eq(pt_steal_oldest(m), PT_NONE);
	link_chunk(1, 2); /* the same chunk with a link inside: taken */
	chunk_of_events(2, 2, 0);
	ck_assert_uint_eq(pt_steal_oldest(m), 1);
}
END_TEST

/* Checks that counts of lanes past the geometry (nlanes, committed_lanes
 * at their largest) make the reader and the lost count look at the lanes
 * mapped only (all of them are committed here: img_reset writes them). */
START_TEST(lane_counts_past_the_geometry_reach_only_the_lanes_mapped)
{
	uint64_t errors;
	struct pt_stream_hdr *h = img_hdr(&im);
	chunk_of_events(1, 0, 4);
	img_point(&im, 0, 1, PT_CHUNK_HDR);
	atomic_store(&img_lane(&im, 0)->lost, 5);
	atomic_store(&h->lost_total, 0);
	atomic_store(&h->nlanes, UINT32_MAX);
	atomic_store(&h->committed_lanes, UINT32_MAX);
	ck_assert_uint_eq(pt_read_lanes(&im.h.src), im.m->max_lanes);
	ck_assert_uint_eq(drain(_i, 1000, &errors), 4);
	ck_assert_uint_eq(errors, 0);
	ck_assert_uint_eq(pt_stream_lost(im.m), 5);
	atomic_store(&h->nlanes, im.m->max_lanes + 1);
	ck_assert_uint_eq(pt_read_lanes(&im.h.src), im.m->max_lanes);
	ck_assert_uint_eq(pt_stream_lost(im.m), 5);
	/* Lane pages after the first made holes again: the counts say they are
	 * there, the reader and the lost count do not fault them in. */
	uint64_t from = im.m->lanes_off + PT_LANES_PER_PAGE * sizeof(struct pt_lane);
	ck_assert_int_eq(fallocate(im.m->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)from,
	                           (off_t)(im.m->chunks_off - from)), 0);
	pt_reader_free(&im.h.src.rd);
	ck_assert_int_eq(pt_reader_init(&im.h.src.rd, im.m), 0);
	ck_assert_uint_eq(pt_read_lanes(&im.h.src), PT_LANES_PER_PAGE);
	ck_assert_uint_eq(pt_stream_lost(im.m), 5);
	ck_assert(pt_stream_backed(im.m, from, 4096) == 0);
}
END_TEST

/* Checks that the free chunk pool ends at a number past the stream: on
 * top, or as the link of the chunk on top. */
START_TEST(free_pool_ends_at_a_chunk_past_the_geometry)
{
	struct pt_stream_hdr *h = img_hdr(&im);
	atomic_store(&h->free_top, im.m->max_chunks);
	ck_assert_uint_eq(pt_pool_pop(im.m), PT_NONE);
	atomic_store(&h->free_top, 2);
	atomic_store(&img_chunk(&im, 2)->free_next, PT_HEAD_CHUNK_MASK);
	ck_assert_uint_eq(pt_pool_pop(im.m), 2);
	ck_assert_uint_eq(pt_pool_pop(im.m), PT_NONE);
}
END_TEST

/* Checks that a new keeper settling the claim of a dead one counts it
 * only for a lane inside the stream: the lane number is in memory that a
 * process other than this one wrote. */
START_TEST(claim_of_a_lane_past_the_geometry_is_not_counted)
{
	struct pt_ctl *c = calloc(1, sizeof *c);
	ck_assert_ptr_nonnull(c);
	const uint32_t lanes[] = {im.m->max_lanes, PT_NONE, 0};
	for (unsigned k = 0; k < 3; k++) {
		atomic_store(&c->claims.taken, 0);
		atomic_store(&c->claims.base, 0);
		atomic_store(&c->claims.events, 7);
		atomic_store(&c->claims.lane, lanes[k]);
		atomic_store(&c->claims.head, 12345); /* not lane 0's head: it moved */
		ck_assert_uint_eq(pt_claims_settle(c, im.m, 0), lanes[k] == 0 ? 7 : 0);
	}
	free(c);
}
END_TEST

/* Checks that a name registry whose index by hash (which every process of
 * a traced tree writes) holds entry numbers past the table, or 0xffff
 * everywhere, is read only inside the table: a name is then registered
 * without a slot of the index, under the next entry. */
START_TEST(registry_slots_past_the_table_name_no_entry)
{
	struct pt_registry *reg = calloc(1, sizeof *reg);
	ck_assert_ptr_nonnull(reg);
	atomic_store(&reg->next_name, 1);
	for (uint32_t i = 0; i < PT_REG_HASH_SLOTS; i++)
		atomic_store(&reg->by_hash[i], i % 2 ? 0xffff : TRACE_USER_EVENT_MAX);
	trace_event_id_t id = 0;
	char name[PT_NAME_SIZE];
	ck_assert_int_eq(pt_register_name_in(reg, "scribbled", &id), 0);
	ck_assert_uint_eq(id, PT_USER_FIRST + 1);
	ck_assert_int_eq(pt_reg_name(reg, id, name), 0);
	ck_assert_str_eq(name, "scribbled");
	ck_assert_ptr_null(pt_reg_entry(reg, 0));
	ck_assert_ptr_null(pt_reg_entry(reg, TRACE_USER_EVENT_MAX));
	ck_assert_ptr_null(pt_reg_entry(reg, UINT32_MAX));
	ck_assert_ptr_eq(pt_reg_entry(reg, TRACE_USER_EVENT_MAX - 1), reg->names[TRACE_USER_EVENT_MAX - 1]);
	free(reg);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("streamimg");
	TCase *tc = pt_tcase_fixture(s, "shapes", setup, teardown);
	tcase_add_test(tc, steal_of_chunk_ending_in_bare_owner_record_reads_nothing_past_it);
	tcase_add_loop_test(tc, drain_of_chunk_cycle_yields_each_event_once, 0, 2);
	tcase_add_loop_test(tc, drain_of_lanes_naming_one_self_linked_chunk_ends_at_once, 0, 2);
	tcase_add_loop_test(tc, drain_of_chunk_named_by_every_lane_reads_it_once, 0, 2);
	tcase_add_test(tc, drain_takes_the_losses_counted_meanwhile_once);
	tcase_add_test(tc, drain_stops_at_events_after_its_time);
	tcase_add_loop_test(tc, head_moved_back_in_chunk_does_not_yield_again, 0, 2);
	tcase_add_loop_test(tc, chunk_restarted_by_a_writer_is_read_again, 0, 2);
	tc = pt_tcase_fixture(s, "accessors", setup, teardown);
	tcase_add_test(tc, accessors_answer_null_for_numbers_past_the_geometry);
	tcase_add_loop_test(tc, heads_links_and_ends_past_the_geometry_are_damage_not_reads, 0, 2);
	tcase_add_test(tc, steal_passes_over_heads_and_links_past_the_geometry);
	tcase_add_loop_test(tc, lane_counts_past_the_geometry_reach_only_the_lanes_mapped, 0, 2);
	tcase_add_test(tc, free_pool_ends_at_a_chunk_past_the_geometry);
	tcase_add_test(tc, claim_of_a_lane_past_the_geometry_is_not_counted);
	tcase_add_test(tc, registry_slots_past_the_table_name_no_entry);
	tc = pt_tcase_fixture(s, "random", setup, teardown);
	tcase_add_loop_test(tc, random_images_drain_within_the_streams_memory, 0, 4);
	return pt_run(s);
}
