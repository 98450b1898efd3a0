/* SPDX-License-Identifier: MIT */
/*
 * A handler that siglongjmp()s out of posix_trace_event() (split from
 * t_signal, which checks the events handlers post): the thread keeps
 * recording, and neither its exit nor posix_trace_shutdown() waits for the
 * entry it abandoned.  Its checks count jumps per second and time the
 * shutdown: tests/run.sh runs it alone.
 */
#include <semaphore.h>
#include <setjmp.h>
#include <sys/mman.h>
#include "sigtest.h"

static trace_event_id_t ev_id;
static atomic_uint handler_seq; /* handler events posted */
static atomic_int loop_stop;
static long page_size;

/* ---- siglongjmp out of posix_trace_event ------------------------------- */

/* The jumping thread: every timer tick (10 kHz) it is jumped out of
 * posix_trace_event, by the timer's handler when the tick finds it posting
 * (after that handler posted an event of its own, nested), else by the
 * SIGSEGV handler of its next event, whose data it makes unreadable. */
static sigjmp_buf jump_env;
static volatile sig_atomic_t jump_in_post, fault_next;
static atomic_int jumper_parked; /* written by the jumper, read by the test's thread */
static unsigned char *bad_page;
static atomic_uint jumps;
static sem_t jumper_go;
static volatile uint32_t jumper_seq;

static void jump_tick(int sig)
{
	(void)sig;
	if (!jump_in_post) {
		fault_next = 1;
		return;
	}
	uint32_t seq = atomic_fetch_add_explicit(&handler_seq, 1, memory_order_relaxed);
	pt_post_payload(ev_id, HANDLER_WRITER, seq);
	siglongjmp(jump_env, 1);
}

static void jump_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if ((unsigned char *)si->si_addr < bad_page ||
	    (unsigned char *)si->si_addr >= bad_page + page_size)
		abort();
	siglongjmp(jump_env, 1);
}

static void jumper_post(void)
{
	struct pt_payload p = {0, jumper_seq, pt_mix(0, jumper_seq)};
	jump_in_post = 1;
	posix_trace_event(ev_id, fault_next ? (const void *)bad_page : &p, sizeof p);
	jump_in_post = 0;
}

static void *jumper(void *arg)
{
	(void)arg;
	struct timespec pause = {0, 20000};
	volatile uint32_t k = 0;
	jumper_post(); /* registered before any tick (block_timer_signals) */
	jumper_seq++;
	block_timer_signals(SIG_UNBLOCK);
	if (sigsetjmp(jump_env, 1)) {
		jump_in_post = 0;
		fault_next = 0;
		atomic_fetch_add_explicit(&jumps, 1, memory_order_relaxed);
		if (atomic_load(&loop_stop))
			goto parked;
	}
	while (!atomic_load(&loop_stop)) {
		jumper_post();
		jumper_seq++;
		if (++k % 4 == 0)
			nanosleep(&pause, NULL);
	}
	/* A last entry jumped out of, and then no event: shutdown must not wait for it. */
	fault_next = 1;
	jumper_post(); /* returns only if the event was dropped before its data were read */
parked:
	atomic_store(&jumper_parked, 1);
	while (sem_wait(&jumper_go) != 0)
		;
	return NULL;
}

static double elapsed_since(int64_t t0) { return (pt_realtime_ns() - t0) / 1e9; }

START_TEST(siglongjmp_out_of_posix_trace_event)
{
	page_size = sysconf(_SC_PAGESIZE);
	bad_page = mmap(NULL, page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(bad_page, MAP_FAILED);
	ck_assert_int_eq(sem_init(&jumper_go, 0, 0), 0);
	const char *s = getenv("PT_SIGNAL_JUMP_SECONDS");
	long seconds = s ? atol(s) : 10;
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_UNTIL_FULL,
	                                                 .size = 96u << 20});
	ev_id = pt_event_id("signal.jump");
	ck_assert_ok(posix_trace_start(trid));
	atomic_store(&handler_seq, 0);
	atomic_store(&loop_stop, 0);
	on_signal(SIGALRM, NULL, jump_tick, 0);
	on_signal(SIGSEGV, jump_fault, NULL, SA_SIGINFO | SA_NODEFER);
	/* The ticks go to the jumping thread alone. */
	block_timer_signals(SIG_BLOCK);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, jumper, NULL), 0);
	set_timer(ITIMER_REAL, 100);
	pt_sleep_ms(seconds * 1000);
	atomic_store(&loop_stop, 1);
	while (!atomic_load(&jumper_parked))
		pt_sleep_ms(1);
	set_timer(ITIMER_REAL, 0);
	ck_assert_ok(posix_trace_stop(trid));

	/* Each event the thread finished is there, in order; an event it was
	 * jumped out of may be there too, and is posted again. */
	struct pt_ev e;
	uint32_t next = 0, handler_events = 0, torn = 0, gaps = 0, overflows = 0;
	while (pt_try_ev(trid, &e)) {
		struct pt_payload p;
		overflows += e.info.posix_event_id == POSIX_TRACE_OVERFLOW;
		if (!pt_is_user(&e))
			continue;
		if (!payload_of(&e, &p)) {
			torn++;
			continue;
		}
		if (p.writer == HANDLER_WRITER) {
			handler_events++;
			continue;
		}
		gaps += p.seq != next && p.seq + 1 != next;
		next = p.seq + 1;
	}
	ck_assert_uint_eq(torn, 0);
	ck_assert_uint_eq(overflows, 0);
	ck_assert_msg(gaps == 0 && (next == jumper_seq || next == jumper_seq + 1),
	              "%u gaps, %u of %u events", gaps, next, (unsigned)jumper_seq);
	ck_assert_uint_eq(handler_events, atomic_load(&handler_seq));
	ck_assert_uint_ge(atomic_load(&jumps), (uint32_t)(seconds * 1000)); /* >= 1 kHz of jumps */

	int64_t t0 = pt_realtime_ns();
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_msg(elapsed_since(t0) < 1.0, "shutdown took %.2f s", elapsed_since(t0));
	t0 = pt_realtime_ns();
	sem_post(&jumper_go);
	pthread_join(th, NULL);
	ck_assert_msg(elapsed_since(t0) < 1.0, "the thread's exit took %.2f s", elapsed_since(t0));
	signal(SIGSEGV, SIG_DFL);
	munmap(bad_page, page_size);
}
END_TEST

/* ---- a jumped-out event's address ------------------------------------- */

/* An event whose data fault, jumped out of by the SIGSEGV handler, leaves
 * nothing behind in the thread's lane: the next event, posted from the
 * site the jumped-out one was posted from, records its own address, not
 * that of the event before (a lane that took the jumped-out event's
 * address as its last one left the next record's address out). */
static sigjmp_buf addr_env;

static void addr_fault(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if ((unsigned char *)si->si_addr < bad_page ||
	    (unsigned char *)si->si_addr >= bad_page + page_size)
		abort();
	siglongjmp(addr_env, 1);
}

/* Two call sites the compiler keeps apart: gcc would fold identical
 * functions into one (noipa forbids it); clang folds none by itself. */
#ifdef __clang__
#define DISTINCT_SITE __attribute__((noinline))
#else
#define DISTINCT_SITE __attribute__((noipa))
#endif

DISTINCT_SITE static void post_from_a(const void *data)
{
	posix_trace_event(ev_id, data, 16);
}

DISTINCT_SITE static void post_from_b(const void *data)
{
	posix_trace_event(ev_id, data, 16);
}

START_TEST(jumped_out_event_leaves_no_address)
{
	page_size = sysconf(_SC_PAGESIZE);
	bad_page = mmap(NULL, page_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(bad_page, MAP_FAILED);
	trace_id_t trid = pt_create(0, (struct pt_attrs){.policy = POSIX_TRACE_LOOP});
	ev_id = pt_event_id("signal.jump.address");
	ck_assert_ok(posix_trace_start(trid));
	on_signal(SIGSEGV, addr_fault, NULL, SA_SIGINFO | SA_NODEFER);
	uint64_t good[2] = {1, 2};
	post_from_a(good);
	volatile int jumped = 0;
	if (sigsetjmp(addr_env, 1))
		jumped = 1;
	else
		post_from_b(bad_page);
	ck_assert_int_eq(jumped, 1);
	post_from_b(good);
	signal(SIGSEGV, SIG_DFL);
	ck_assert_ok(posix_trace_stop(trid));
	struct pt_ev e;
	void *addr[3] = {0};
	int n = 0;
	while (pt_try_ev(trid, &e))
		if (pt_is_user(&e) && n < 3)
			addr[n++] = e.info.posix_prog_address;
	ck_assert_int_eq(n, 2);
	ck_assert_msg(addr[1] != addr[0], "the event from b recorded a's address %p", addr[0]);
	ck_assert_ok(posix_trace_shutdown(trid));
	munmap(bad_page, page_size);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sigjump");
	TCase *tc = pt_tcase(s, "siglongjmp");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, siglongjmp_out_of_posix_trace_event);
	tcase_add_test(tc, jumped_out_event_leaves_no_address);
	return pt_run(s);
}
