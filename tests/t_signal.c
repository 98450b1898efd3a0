/* SPDX-License-Identifier: MIT */
/*
 * Events posted from signal handlers.  posix_trace_event() is
 * async-signal-safe (XSH 2.4.3, Signal Concepts): an event posted by a
 * handler that interrupted posix_trace_event() of the same thread is
 * recorded like any other, at its time; nesting deeper than the library
 * keeps (four levels inside the outermost) loses the event, counted and
 * reported with POSIX_TRACE_OVERFLOW.  Read back after the stop, the events
 * come oldest first: a handler's event never puts a later time before an
 * earlier one in its thread's lane (CONFORMANCE.md, "Clock and order").
 * A handler that siglongjmp()s out of posix_trace_event() is t_sigjump's.
 */
#include <stdlib.h>
#include <sys/mman.h>
#include "sigtest.h"

/* ---- reading back payloads ------------------------------------------------ */

#define LOOP_WRITERS 2

/* What a read-out of pt_payload events found, per writer. */
struct tally {
	uint32_t count[4];     /* events per writer */
	uint32_t next[4];      /* loop writers: the next sequence number expected */
	uint32_t out_of_order; /* loop writers' events not in posting order */
	uint32_t torn;         /* length or check wrong */
	uint32_t overflows;    /* POSIX_TRACE_OVERFLOW events */
	uint32_t time_back;    /* events older than the one read before them */
	struct timespec last;  /* the time of the event read last */
	unsigned char *seen;   /* handler writer: sequence numbers read */
	uint32_t seen_max, seen_twice;
};

static void tally_event(struct tally *t, const struct pt_ev *e)
{
	struct pt_payload p;
	if (e->info.posix_event_id == POSIX_TRACE_OVERFLOW)
		t->overflows++;
	t->time_back += !pt_ts_le(&t->last, &e->info.posix_timestamp);
	t->last = e->info.posix_timestamp;
	if (!pt_is_user(e))
		return;
	if (!payload_of(e, &p)) {
		t->torn++;
		return;
	}
	t->count[p.writer]++;
	if (p.writer < LOOP_WRITERS) {
		t->out_of_order += p.seq != t->next[p.writer];
		t->next[p.writer] = p.seq + 1;
	} else if (p.seq < t->seen_max) {
		t->seen_twice += t->seen[p.seq]++ != 0;
	}
}

/* Reads every event of the (stopped) stream into t, without keeping them. */
static void tally_stream(trace_id_t trid, struct tally *t)
{
	struct pt_ev e;
	for (uint32_t n = 0; pt_try_ev(trid, &e); n++) {
		ck_assert_msg(n < 20u * PT_DRAIN_LIMIT, "the stream never runs empty");
		tally_event(t, &e);
	}
}

/* ---- handlers posting while two threads post in a loop ------------------- */

static trace_event_id_t ev_id;
static atomic_uint handler_seq;     /* handler events posted */
static atomic_uint handler_nested;  /* of them, posted inside posix_trace_event */
static _Thread_local volatile sig_atomic_t in_post;
static atomic_int loop_stop;

static void post_from_handler(int sig)
{
	(void)sig;
	int saved = errno;
	uint32_t seq = atomic_fetch_add_explicit(&handler_seq, 1, memory_order_relaxed);
	if (in_post)
		atomic_fetch_add_explicit(&handler_nested, 1, memory_order_relaxed);
	pt_post_payload(ev_id, HANDLER_WRITER, seq);
	errno = saved;
}

/* Posts in a loop, a few hundred nanoseconds apart, until told to stop;
 * returns how many it posted. */
/* Posts a loop makes at most: the stream holds the two loops' and the
 * handler's events whatever the machine's speed (a quiet machine posted
 * 1.6 million in the 100 ms of a run, more than 32 MiB held). */
#define LOOP_MAX 1000000u

/* LOOP_MAX, or a share of it in a sanitizer build (make check sets
 * CK_TIMEOUT_MULTIPLIER there): reading a run's events back takes most of
 * the test's time, 85 s for the 50 kHz test alone under ASan, twice that
 * beside another test, against its timeout of 180 s. */
static uint32_t loop_max(void)
{
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
	long k = m ? strtol(m, NULL, 10) : 1;
	return k > 1 && k < 100 ? LOOP_MAX / (uint32_t)k : LOOP_MAX;
}

static uint32_t post_loop(uint32_t writer, uint32_t seq)
{
	uint32_t first = seq, most = loop_max();
	while (!atomic_load_explicit(&loop_stop, memory_order_relaxed) && seq - first < most) {
		in_post = 1;
		pt_post_payload(ev_id, writer, seq);
		in_post = 0;
		seq++;
		for (volatile int spin = 0; spin < 200; spin++)
			;
	}
	return seq - first;
}

static void *second_poster(void *arg)
{
	pt_post_payload(ev_id, 1, 0);
	block_timer_signals(SIG_UNBLOCK);
	*(uint32_t *)arg = 1 + post_loop(1, 1);
	/* The thread exits with the timer still running (its loop may end
	 * first): an event of a handler that ran once the library let go of
	 * the thread would register it again, which allocates, and would hang
	 * on the allocator's lock if it interrupted the exit's own frees
	 * (CONFORMANCE.md, a thread's first event from a handler). */
	block_timer_signals(SIG_BLOCK);
	return NULL;
}

/* One run: a timer's handler posts every `usec` µs for `ms` ms while this
 * thread and a second one post in a loop; everything is read back. */
static void handler_run(int which, long usec, long ms, uint32_t *nested)
{
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_UNTIL_FULL,
	                                                 .size = 128u << 20});
	ev_id = pt_event_id("signal.payload");
	ck_assert_ok(posix_trace_start(trid));
	atomic_store(&handler_seq, 0);
	atomic_store(&handler_nested, 0);
	atomic_store(&loop_stop, 0);
	pt_post_payload(ev_id, 0, 0); /* this thread registered before any handler */
	uint32_t posted[2] = {1, 0};
	pthread_t other;
	block_timer_signals(SIG_BLOCK);
	ck_assert_int_eq(pthread_create(&other, NULL, second_poster, &posted[1]), 0);
	block_timer_signals(SIG_UNBLOCK);
	int sig = which == ITIMER_PROF ? SIGPROF : SIGALRM;
	on_signal(sig, NULL, post_from_handler, SA_RESTART);
	set_timer(which, usec);
	int64_t end = pt_realtime_ns() + ms * 1000000;
	uint32_t seq = 1, most = loop_max();
	while (pt_realtime_ns() < end && seq <= most) {
		in_post = 1;
		pt_post_payload(ev_id, 0, seq);
		in_post = 0;
		seq++;
		for (volatile int spin = 0; spin < 200; spin++)
			;
	}
	posted[0] = seq;
	atomic_store(&loop_stop, 1);
	set_timer(which, 0);
	pthread_join(other, NULL);
	ck_assert_ok(posix_trace_stop(trid));

	uint32_t handlers = atomic_load(&handler_seq);
	struct tally t = {.seen = calloc(handlers + 1, 1), .seen_max = handlers};
	ck_assert_ptr_nonnull(t.seen);
	tally_stream(trid, &t);
	struct posix_trace_status_info st = pt_status(trid);
	ck_assert_uint_eq(t.torn, 0);
	ck_assert_uint_eq(t.out_of_order, 0);
	ck_assert_uint_eq(t.time_back, 0);
	ck_assert_uint_eq(t.count[0], posted[0]);
	ck_assert_uint_eq(t.count[1], posted[1]);
	ck_assert_msg(t.count[HANDLER_WRITER] == handlers,
	              "%u of %u handler events read (%u posted inside posix_trace_event)",
	              t.count[HANDLER_WRITER], handlers, atomic_load(&handler_nested));
	ck_assert_uint_eq(t.seen_twice, 0);
	ck_assert_uint_eq(t.overflows, 0);
	ck_assert_int_eq(st.posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	free(t.seen);
	*nested += atomic_load(&handler_nested);
	if (getenv("PT_SIGNAL_VERBOSE"))
		fprintf(stderr, "run: loop %u + %u, handler %u (%u inside posix_trace_event)\n", posted[0], posted[1], handlers, atomic_load(&handler_nested));
	ck_assert_ok(posix_trace_shutdown(trid));
}

static void handler_runs(int hz)
{
	uint32_t nested = 0;
	for (int run = 0; run < 10; run++)
		handler_run(run % 2 ? ITIMER_PROF : ITIMER_REAL, 1000000 / hz, 100, &nested);
	/* The runs did what they are for: handlers ran inside posix_trace_event. */
	ck_assert_uint_gt(nested, 0);
}

START_TEST(handlers_at_10khz_lose_nothing) { handler_runs(10000); }
END_TEST

START_TEST(handlers_at_50khz_lose_nothing) { handler_runs(50000); }
END_TEST

/* ---- nesting deeper than kept ------------------------------------------- */

/* Event j (level j) takes its data from page j, unreadable: reading it
 * faults inside posix_trace_event, and the SIGSEGV handler (level j + 1)
 * posts event j + 1 before it makes page j readable again.  Events 0 .. 4
 * fit; event 5, nested five deep, does not (its data is never read, so the
 * chain ends there). */
#define CHAIN 7
static unsigned char *chain_pages;
static long page_size;

static void chain_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	uintptr_t at = (uintptr_t)si->si_addr, base = (uintptr_t)chain_pages;
	if (at < base || at >= base + CHAIN * (uintptr_t)page_size)
		abort();
	int j = (int)((at - base) / (uintptr_t)page_size);
	posix_trace_event(ev_id, chain_pages + (size_t)(j + 1) * page_size, sizeof(struct pt_payload));
	mprotect(chain_pages + (size_t)j * page_size, page_size, PROT_READ);
}

START_TEST(nesting_deeper_than_kept_is_counted_lost)
{
	page_size = sysconf(_SC_PAGESIZE);
	chain_pages = mmap(NULL, CHAIN * page_size, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(chain_pages, MAP_FAILED);
	for (int j = 0; j < CHAIN; j++) {
		struct pt_payload p = {3, (uint32_t)j, pt_mix(3, (uint32_t)j)};
		memcpy(chain_pages + (size_t)j * page_size, &p, sizeof p);
	}
	trace_id_t trid = pt_create_started();
	ev_id = pt_event_id("signal.chain");
	pt_post_payload(ev_id, 0, 0);
	ck_assert_int_eq(mprotect(chain_pages, (CHAIN - 1) * page_size, PROT_NONE), 0);
	on_signal(SIGSEGV, chain_fault, NULL, SA_SIGINFO | SA_NODEFER);
	posix_trace_event(ev_id, chain_pages, sizeof(struct pt_payload));
	signal(SIGSEGV, SIG_DFL);
	ck_assert_ok(posix_trace_stop(trid));

	size_t n;
	struct pt_ev *evs = pt_drain_all(trid, &n);
	int next = 0, overflow = 0;
	struct timespec last = {0, 0};
	for (size_t i = 0; i < n; i++) {
		struct pt_payload p;
		overflow += evs[i].info.posix_event_id == POSIX_TRACE_OVERFLOW;
		if (!pt_is_user(&evs[i]) || !payload_of(&evs[i], &p) || p.writer != 3)
			continue;
		/* Each level's event in its place: posted after the one it interrupted. */
		ck_assert_int_eq((int)p.seq, next);
		ck_assert(pt_ts_le(&last, &evs[i].info.posix_timestamp));
		last = evs[i].info.posix_timestamp;
		next++;
	}
	ck_assert_int_eq(next, 5);
	ck_assert_int_eq(overflow, 1);
	ck_assert_int_eq(pt_status(trid).posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	free(evs);
	ck_assert_ok(posix_trace_shutdown(trid));
	munmap(chain_pages, CHAIN * page_size);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("signal");
	TCase *tc = pt_tcase(s, "handlers");
	/* Each test is ten runs that post and read back up to 2 M events:
	 * about 18 s on a quiet 2-CPU machine, past PT_TEST_TIMEOUT beside
	 * the rest of make check (Check's multiplier still applies). */
	tcase_set_timeout(tc, 3 * PT_TEST_TIMEOUT);
	tcase_add_test(tc, handlers_at_10khz_lose_nothing);
	tcase_add_test(tc, handlers_at_50khz_lose_nothing);
	tc = pt_tcase(s, "nesting");
	tcase_add_test(tc, nesting_deeper_than_kept_is_counted_lost);
	return pt_run(s);
}
