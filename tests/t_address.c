/* SPDX-License-Identifier: MIT */
/*
 * t_address: every event reports the address of the call that posted it.
 *
 * XSH 2.11.1, posix_trace_event_info Structure: posix_prog_address is "the
 * address in the program from which the trace event was generated".  The
 * stream stores an address once per run of events from one call site, so
 * this checks runs and alternations of two call sites, over many chunks, in
 * a POSIX_TRACE_LOOP stream that wraps, with a reader taking events while
 * they are posted and with one reading at the end, and from several threads.
 */
#include "harness.h"

#include <pthread.h>
#include <stdint.h>

#define NEVENTS 60000

static trace_event_id_t ev_id;

struct tag {
	uint32_t seq;
	uint32_t site;
};

__attribute__((noinline)) static void post_from_a(uint32_t seq)
{
	struct tag t = {seq, 'a'};
	posix_trace_event(ev_id, &t, sizeof t);
	__asm__ volatile("" ::: "memory"); /* keeps the call apart from b's */
}

__attribute__((noinline)) static void post_from_b(uint32_t seq)
{
	struct tag t = {seq, 'b'};
	posix_trace_event(ev_id, &t, sizeof t);
	__asm__ volatile("" ::: "memory");
}

/* Runs of 1 to 5 from one site, then the other. */
static void post_pattern(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if ((i / (1 + i % 5)) % 2)
			post_from_a(i);
		else
			post_from_b(i);
	}
}

struct check {
	void *addr[2];            /* the address each site reported first */
	uint32_t seen, wrong;
};

static void judge(struct check *c, const struct posix_trace_event_info *ev, const void *data,
                  size_t len)
{
	struct tag t;
	if (ev->posix_event_id != ev_id || len != sizeof t)
		return;
	memcpy(&t, data, sizeof t);
	int site = t.site == 'a' ? 0 : 1;
	if (!c->addr[site])
		c->addr[site] = ev->posix_prog_address;
	if (ev->posix_prog_address != c->addr[site] || !ev->posix_prog_address)
		c->wrong++;
	c->seen++;
}

static void take_all(trace_id_t trid, struct check *c)
{
	for (;;) {
		struct posix_trace_event_info ev;
		struct tag t;
		size_t len;
		int unavailable;
		ck_assert_ok(posix_trace_trygetnext_event(trid, &ev, &t, sizeof t, &len, &unavailable));
		if (unavailable)
			return;
		judge(c, &ev, &t, len);
	}
}

static void assert_sites(const struct check *c, uint32_t at_least)
{
	ck_assert_uint_ge(c->seen, at_least);
	ck_assert_uint_eq(c->wrong, 0);
	ck_assert_ptr_nonnull(c->addr[0]);
	ck_assert_ptr_nonnull(c->addr[1]);
	ck_assert_ptr_ne(c->addr[0], c->addr[1]);
}

START_TEST(addresses_of_runs_and_alternations_read_at_the_end)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_UNTIL_FULL, .size = 8u << 20});
	ev_id = pt_event_id("addr.ev");
	ck_assert_ok(posix_trace_start(trid));
	post_pattern(NEVENTS);
	struct check c = {0};
	take_all(trid, &c);
	assert_sites(&c, NEVENTS);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

START_TEST(addresses_in_a_wrapping_loop_stream_read_while_posting)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_LOOP, .size = 64u << 10});
	ev_id = pt_event_id("addr.ev");
	ck_assert_ok(posix_trace_start(trid));
	struct check c = {0};
	for (uint32_t round = 0; round < 40; round++) {
		post_pattern(1000 + round * 37);
		take_all(trid, &c);
	}
	assert_sites(&c, 1000);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

static void *poster(void *arg)
{
	post_pattern((uint32_t)(uintptr_t)arg);
	return NULL;
}

START_TEST(addresses_from_several_threads)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_UNTIL_FULL, .size = 16u << 20});
	ev_id = pt_event_id("addr.ev");
	ck_assert_ok(posix_trace_start(trid));
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, poster, (void *)(uintptr_t)20000), 0);
	struct check c = {0};
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	take_all(trid, &c);
	assert_sites(&c, 4 * 20000);
	ck_assert_ok(posix_trace_shutdown(trid));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("address");
	TCase *tc = pt_tcase(s, "prog_address");
	tcase_add_test(tc, addresses_of_runs_and_alternations_read_at_the_end);
	tcase_add_test(tc, addresses_in_a_wrapping_loop_stream_read_while_posting);
	tcase_add_test(tc, addresses_from_several_threads);
	return pt_run(s);
}
