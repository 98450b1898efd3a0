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
 * mapped with a page that may not be touched right after it.  Before this
 * version, the steal of a chunk ending in an OWNER record of length 0 read
 * past the stream (SIGSEGV), and drains of a cycle never ended.
 */
/* The harness's /proc reader and the library's have one name. */
#define pt_proc_stat pt_test_proc_stat
#include "../harness.h"
#undef pt_proc_stat
#include "../streamimg.h"
#include "../../src/lanes.h"

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
	tc = pt_tcase_fixture(s, "random", setup, teardown);
	tcase_add_loop_test(tc, random_images_drain_within_the_streams_memory, 0, 4);
	return pt_run(s);
}
