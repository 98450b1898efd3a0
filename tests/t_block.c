/* SPDX-License-Identifier: MIT */
/*
 * A writer that may wait (posixtrace_attr_setblocking): with the FLUSH
 * policy, a full stream makes a writer wait, bounded, for the keeper to
 * drain it instead of losing the event.
 *  - flat-out writers into a small stream lose nothing: every event is in
 *    the log, exactly once, and the waits are counted;
 *  - with the keeper stopped, a writer waits its timeout, then the event is
 *    lost and counted;
 *  - an event posted by a signal handler that interrupted a waiting writer
 *    does not wait (the waited count does not move, the event is lost);
 *  - the attribute's errors and its default;
 *  - the counts (waits, time waited, events lost at the timeout) reach the
 *    log: posixtrace_block_info on a log opened with posix_trace_open gives
 *    what the stream counted, from the END block of a closed log, from the
 *    header of a log still being written, and from the END block of a log
 *    written to a pipe (whose header is written once, before any wait);
 *    a log written before the counts were kept reads 0.
 */
#include "harness.h"
#include "logtest.h"
#include <posixtrace.h>

#define WRITERS 4
#define STREAM_SIZE (64u * 1024u)

static trace_event_id_t block_id;

static trace_id_t create_blocking(int fd, long timeout_ms)
{
	trace_attr_t attr;
	trace_id_t trid;
	struct timespec t = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, STREAM_SIZE));
	ck_assert_ok(posixtrace_attr_setblocking(&attr, &t));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_eventid_open("block", &block_id));
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

static struct posixtrace_block_stats block_info(trace_id_t trid)
{
	struct posixtrace_block_stats info;
	ck_assert_ok(posixtrace_block_info(trid, &info));
	return info;
}

/* A test that fails or times out with the keeper stopped lets it go on,
 * so that it ends with the test's process: at exit, and from a watcher
 * process once the test's process is gone (Check kills it at its timeout). */
static pid_t keeper_held;
static void release_keeper(void)
{
	if (keeper_held > 0)
		kill(keeper_held, SIGCONT);
}

static void watch_keeper(pid_t keeper)
{
	pid_t test = getpid();
	if (fork() != 0)
		return;
	/* None of the test's descriptors (the keeper's socket above all) stay
	 * open in the watcher: the keeper's end of the stream would wait for it. */
	for (int fd = 3; fd < 1024; fd++)
		close(fd);
	/* Out of the test's process group: timeout(1) and a runner that stops
	 * a test signal its whole group, which would end the watcher and leave
	 * the keeper (in a session of its own) stopped for good. */
	setsid();
	for (int i = 0; i < 120 * 100 && getppid() == test; i++)
		usleep(10000);
	kill(keeper, SIGCONT);
	_exit(0);
}

static pid_t stopped_keeper(void)
{
	pid_t keeper = 0;
	for (int i = 0; i < 5000 && pt_procs_named(getpid(), "posixtrace-keep", &keeper) != 1; i++)
		pt_sleep_ms(1);
	ck_assert_int_gt(keeper, 0);
	keeper_held = keeper;
	atexit(release_keeper);
	watch_keeper(keeper);
	ck_assert_int_eq(kill(keeper, SIGSTOP), 0);
	char state = 0;
	for (int i = 0; i < 5000 && (pt_proc_stat(keeper, NULL, 0, &state, NULL) != 0 || state != 'T');
	     i++)
		pt_sleep_ms(1);
	ck_assert_int_eq(state, 'T');
	return keeper;
}

/* Whether a thread of this process other than the caller sleeps (the
 * writers sleep only in their wait for room), looked for up to 10 s. */
static int wait_for_a_sleeping_thread(void)
{
	for (int i = 0; i < 10000; i++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;
		int found = 0;
		while (d && !found && (e = readdir(d))) {
			pid_t tid = (pid_t)atoi(e->d_name);
			char path[64], state = 0;
			snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
			FILE *f = tid > 0 && tid != (pid_t)gettid() ? fopen(path, "r") : NULL;
			if (f) {
				found = fscanf(f, "%*d (%*[^)]) %c", &state) == 1 && state == 'S';
				fclose(f);
			}
		}
		if (d)
			closedir(d);
		if (found)
			return 1;
		pt_sleep_ms(1);
	}
	return 0;
}

/* A flush carried out (the header of a seekable log is rewritten then). */
static void wait_flushed(trace_id_t trid)
{
	for (int i = 0; pt_status(trid).posix_stream_flush_status == POSIX_TRACE_FLUSHING; i++) {
		ck_assert_msg(i < 10000, "a flush not done in 10 s");
		pt_sleep_ms(1);
	}
}

/* ---- flat-out writers lose nothing --------------------------------------- */

static uint32_t per_writer;

static void *flat_out(void *arg)
{
	uint32_t writer = (uint32_t)(uintptr_t)arg;
	for (uint32_t seq = 0; seq < per_writer; seq++) {
		uint32_t v[2] = {writer, seq};
		posix_trace_event(block_id, v, sizeof v);
	}
	return NULL;
}

START_TEST(flat_out_writers_lose_nothing)
{
	per_writer = pt_stress_scaled(50000, 5000, 50000);
	int fd = lt_new_log_file();
	trace_id_t trid = create_blocking(fd, 30000);
	/* The keeper held until a writer sleeps in its wait, so that some
	 * writer waits however fast the keeper is (under a sanitizer, the
	 * writers can be slower than it). */
	pid_t keeper = stopped_keeper();
	pthread_t th[WRITERS];
	for (uintptr_t i = 0; i < WRITERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, flat_out, (void *)i), 0);
	ck_assert_msg(wait_for_a_sleeping_thread(), "no writer sleeps");
	ck_assert_int_eq(kill(keeper, SIGCONT), 0);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	ck_assert_uint_eq(pt_status(trid).posix_stream_overrun_status, POSIX_TRACE_NO_OVERRUN);
	struct posixtrace_block_stats info = block_info(trid);
	ck_assert_ok(posix_trace_shutdown(trid));

	trace_id_t log;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &log));
	uint8_t *seen = calloc((size_t)WRITERS * per_writer, 1);
	ck_assert_ptr_nonnull(seen);
	size_t total = 0;
	struct pt_ev e;
	int unavailable = 0;
	for (size_t all = 0;; all++) {
		ck_assert_ok(posix_trace_getnext_event(log, &e.info, e.data, sizeof e.data, &e.len,
		                                       &unavailable));
		if (unavailable)
			break;
		ck_assert_uint_lt(all, PT_DRAIN_LIMIT * 4);
		ck_assert_int_ne(e.info.posix_event_id, POSIX_TRACE_OVERFLOW);
		if (e.info.posix_event_id != block_id)
			continue;
		uint32_t v[2];
		ck_assert_uint_eq(e.len, sizeof v);
		memcpy(v, e.data, sizeof v);
		ck_assert_uint_lt(v[0], WRITERS);
		ck_assert_uint_lt(v[1], per_writer);
		ck_assert_msg(!seen[(size_t)v[0] * per_writer + v[1]], "event %u/%u twice", v[0], v[1]);
		seen[(size_t)v[0] * per_writer + v[1]] = 1;
		total++;
	}
	ck_assert_uint_eq(total, (size_t)WRITERS * per_writer);
	/* The stream holds 64 KiB: writers that far outrun it waited. */
	ck_assert_uint_gt(info.posixtrace_waited_events, 0);
	ck_assert_uint_gt(info.posixtrace_waited_ns, 0);
	ck_assert_uint_eq(info.posixtrace_waited_lost, 0);
	/* The log says the same: nothing waited after the writers ended. */
	struct posixtrace_block_stats logged = block_info(log);
	ck_assert_uint_eq(logged.posixtrace_waited_events, info.posixtrace_waited_events);
	ck_assert_uint_eq(logged.posixtrace_waited_ns, info.posixtrace_waited_ns);
	ck_assert_uint_eq(logged.posixtrace_waited_lost, 0);
	free(seen);
	ck_assert_ok(posix_trace_close(log));
	close(fd);
}
END_TEST

/* ---- a stopped keeper: the wait ends at the timeout ---------------------- */

START_TEST(stopped_keeper_wait_times_out_and_loss_is_counted)
{
	int fd = lt_new_log_file();
	trace_id_t trid = create_blocking(fd, 200);
	pid_t keeper = stopped_keeper();
	uint32_t posted = 0;
	/* 64 KiB holds fewer than 8192 events of 24 bytes: past it, one waits
	 * 200 ms, is lost, and the stream is full. */
	while (pt_status(trid).posix_stream_full_status != POSIX_TRACE_FULL) {
		ck_assert_uint_lt(posted, 100000);
		uint32_t v[2] = {0, posted++};
		posix_trace_event(block_id, v, sizeof v);
	}
	struct posixtrace_block_stats info = block_info(trid);
	ck_assert_uint_eq(info.posixtrace_waited_events, 1);
	ck_assert_uint_ge(info.posixtrace_waited_ns, 200000000u);
	ck_assert_uint_eq(info.posixtrace_waited_lost, 1);
	ck_assert_int_eq(kill(keeper, SIGCONT), 0);
	/* A log still being written: its header's counts, as of the flush. */
	ck_assert_ok(posix_trace_flush(trid));
	wait_flushed(trid);
	trace_id_t log;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &log));
	ck_assert_int_eq(lt_log_info(log).posixtrace_closed, 0);
	struct posixtrace_block_stats logged = block_info(log);
	ck_assert_uint_eq(logged.posixtrace_waited_events, 1);
	ck_assert_uint_eq(logged.posixtrace_waited_ns, info.posixtrace_waited_ns);
	ck_assert_uint_eq(logged.posixtrace_waited_lost, 1);
	ck_assert_ok(posix_trace_close(log));
	/* Closed: its END block's. */
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &log));
	ck_assert_int_eq(lt_log_info(log).posixtrace_closed, 1);
	logged = block_info(log);
	ck_assert_uint_eq(logged.posixtrace_waited_events, 1);
	ck_assert_uint_eq(logged.posixtrace_waited_ns, info.posixtrace_waited_ns);
	ck_assert_uint_eq(logged.posixtrace_waited_lost, 1);
	ck_assert_ok(posix_trace_close(log));
	close(fd);
}
END_TEST

/* ---- the counts in a log written to a pipe --------------------------------- */

/* An unseekable log's header is written once, at its start: the counts
 * reach it in the END block only. */
START_TEST(log_through_a_pipe_ends_with_the_counts)
{
	int pipefd[2];
	ck_assert_int_eq(pipe(pipefd), 0);
	int copy = lt_new_log_file();
	trace_id_t trid = create_blocking(pipefd[1], 200);
	close(pipefd[1]);
	/* After the keeper's fork (ThreadSanitizer ends a child of a process
	 * with threads that starts one); the pipe holds its header until then. */
	struct lt_pump pump = {.in = pipefd[0], .out = copy};
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, lt_pump_main, &pump), 0);
	pid_t keeper = stopped_keeper();
	for (uint32_t posted = 0; pt_status(trid).posix_stream_full_status != POSIX_TRACE_FULL;) {
		ck_assert_uint_lt(posted, 100000);
		uint32_t v[2] = {0, posted++};
		posix_trace_event(block_id, v, sizeof v);
	}
	struct posixtrace_block_stats info = block_info(trid);
	ck_assert_int_eq(kill(keeper, SIGCONT), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	pthread_join(th, NULL);
	close(pipefd[0]);
	trace_id_t log;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(copy), &log));
	ck_assert_int_eq(lt_log_info(log).posixtrace_closed, 1);
	struct posixtrace_block_stats logged = block_info(log);
	ck_assert_uint_eq(logged.posixtrace_waited_events, 1);
	ck_assert_uint_eq(logged.posixtrace_waited_ns, info.posixtrace_waited_ns);
	ck_assert_uint_eq(logged.posixtrace_waited_lost, 1);
	ck_assert_ok(posix_trace_close(log));
	close(copy);
}
END_TEST

/* ---- a log written before the counts ------------------------------------- */

/* Its header's reserved bytes and its 48-byte END: 0 waits, no error. */
START_TEST(log_without_the_counts_reads_zero)
{
	int fd = lt_new_log_file();
	struct lt_craft c;
	lt_craft_begin(&c, fd, 64 * 1024, 1, "old");
	lt_craft_name(&c, 33, "old:ev");
	struct pt_log_ctx ctx = {.pid = 1, .tid = 1};
	uint32_t v = 7;
	lt_craft_event(&c, &ctx, 33, 1000, 0x1000, 0, &v, sizeof v);
	lt_craft_end(&c);
	trace_id_t log;
	ck_assert_ok(posix_trace_open(pt_reopen_ro(fd), &log));
	struct posixtrace_block_stats logged;
	memset(&logged, 0xff, sizeof logged);
	ck_assert_ok(posixtrace_block_info(log, &logged));
	ck_assert_uint_eq(logged.posixtrace_waited_events, 0);
	ck_assert_uint_eq(logged.posixtrace_waited_ns, 0);
	ck_assert_uint_eq(logged.posixtrace_waited_lost, 0);
	ck_assert_uint_eq(logged.posixtrace_reserved[0], 0);
	ck_assert_ok(posix_trace_close(log));
	close(fd);
}
END_TEST

/* ---- a nested post never waits -------------------------------------------- */

static _Atomic int writer_stop, handler_done;
static _Atomic pid_t writer_tid;

static void post_from_handler(int sig)
{
	(void)sig;
	uint32_t v[2] = {1, 0};
	posix_trace_event(block_id, v, sizeof v);
	atomic_store(&handler_done, 1);
}

static void *writer_until_stopped(void *arg)
{
	(void)arg;
	atomic_store(&writer_tid, (pid_t)gettid());
	for (uint32_t seq = 0; !atomic_load(&writer_stop); seq++) {
		uint32_t v[2] = {0, seq};
		posix_trace_event(block_id, v, sizeof v);
	}
	return NULL;
}

START_TEST(signal_handler_interrupting_a_wait_does_not_wait)
{
	int fd = lt_new_log_file();
	trace_id_t trid = create_blocking(fd, 60000);
	pid_t keeper = stopped_keeper();
	struct sigaction sa = {.sa_handler = post_from_handler};
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, writer_until_stopped, NULL), 0);
	/* The writer sleeps only in its wait for room. */
	char state = 0;
	for (int i = 0; i < 10000 && state != 'S'; i++) {
		pt_sleep_ms(1);
		pid_t tid = atomic_load(&writer_tid);
		char path[64];
		snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)tid);
		FILE *f = tid ? fopen(path, "r") : NULL;
		if (f) {
			if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
				state = 0;
			fclose(f);
		}
	}
	ck_assert_int_eq(state, 'S');
	ck_assert_int_eq(pthread_kill(th, SIGUSR1), 0);
	/* A handler that waited would wait 60 s: past the test's timeout. */
	while (!atomic_load(&handler_done))
		pt_sleep_ms(1);
	ck_assert_uint_eq(block_info(trid).posixtrace_waited_events, 0);
	ck_assert_uint_eq(pt_status(trid).posix_stream_overrun_status, POSIX_TRACE_OVERRUN);
	ck_assert_int_eq(kill(keeper, SIGCONT), 0);
	atomic_store(&writer_stop, 1);
	pthread_join(th, NULL);
	/* The writer's own wait ended with room once the keeper ran. */
	ck_assert_uint_ge(block_info(trid).posixtrace_waited_events, 1);
	ck_assert_ok(posix_trace_shutdown(trid));
	close(fd);
}
END_TEST

/* ---- the attribute ------------------------------------------------------- */

START_TEST(attribute_default_set_get_and_errors)
{
	trace_attr_t attr;
	struct timespec t = {7, 7};
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posixtrace_attr_getblocking(&attr, &t));
	ck_assert_int_eq(t.tv_sec, 0);
	ck_assert_int_eq(t.tv_nsec, 0);
	struct timespec ok = {1, 500000000};
	ck_assert_ok(posixtrace_attr_setblocking(&attr, &ok));
	ck_assert_ok(posixtrace_attr_getblocking(&attr, &t));
	ck_assert_int_eq(t.tv_sec, 1);
	ck_assert_int_eq(t.tv_nsec, 500000000);
	struct timespec max = {60, 0};
	ck_assert_ok(posixtrace_attr_setblocking(&attr, &max));
	struct timespec bad[] = {{-1, 0}, {0, -1}, {0, 1000000000}, {60, 1}, {61, 0}};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		ck_assert_err(posixtrace_attr_setblocking(&attr, &bad[i]), EINVAL);
	ck_assert_ok(posixtrace_attr_getblocking(&attr, &t));
	ck_assert_int_eq(t.tv_sec, 60); /* unchanged by the refused ones */
	ck_assert_err(posixtrace_attr_setblocking(&attr, NULL), EINVAL);
	ck_assert_err(posixtrace_attr_getblocking(&attr, NULL), EINVAL);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	trace_attr_t junk;
	memset(&junk, 0, sizeof junk);
	ck_assert_err(posixtrace_attr_setblocking(&junk, &ok), EINVAL);
	ck_assert_err(posixtrace_attr_getblocking(&junk, &t), EINVAL);
	struct posixtrace_block_stats info;
	ck_assert_err(posixtrace_block_info((trace_id_t)12345, &info), EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("block");
	TCase *tc = pt_tcase(s, "block");
	tcase_add_test(tc, flat_out_writers_lose_nothing);
	tcase_add_test(tc, stopped_keeper_wait_times_out_and_loss_is_counted);
	tcase_add_test(tc, log_through_a_pipe_ends_with_the_counts);
	tcase_add_test(tc, log_without_the_counts_reads_zero);
	tcase_add_test(tc, signal_handler_interrupting_a_wait_does_not_wait);
	tcase_add_test(tc, attribute_default_set_get_and_errors);
	return pt_run(s);
}
