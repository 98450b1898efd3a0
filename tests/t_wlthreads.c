/* SPDX-License-Identifier: MIT */
/*
 * t_wlthreads: the workloads of threads, traced through the `posixtrace
 * record` command and through a controller written with the library,
 * counting every event (split from t_workload, whose first comment says what
 * every workload must show): 2,000 short-lived threads (at most 50 alive)
 * and 1,000 threads alive at once; a traced process whose 100 threads posted
 * one event each and then idle; a program that forks as its first
 * statement.  Helpers: tests/helpers/wl_threads and wl_forkfirst; what the
 * workload programs share: tests/workload.c.
 */
#include "workload.h"

/* ---- threads ------------------------------------------------------------- */

#define CHURN_THREADS (2000 * scale)
#define CHURN_ALIVE 50
#define CHURN_EVENTS 20
#define ALIVE_THREADS 1000
#define ALIVE_EVENTS (60 * scale)

struct poster {
	trace_event_id_t id;
	uint32_t writer, count;
	pthread_barrier_t *created, *posted;
};

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	if (p->created)
		pthread_barrier_wait(p->created);
	for (uint32_t k = 0; k < p->count; k++)
		pt_post_payload(p->id, p->writer, k);
	if (p->posted)
		pthread_barrier_wait(p->posted);
	return NULL;
}

static void start_poster(pthread_t *th, struct poster *p)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	ck_assert_int_eq(pthread_create(th, &attr, poster_main, p), 0);
	pthread_attr_destroy(&attr);
}

/* A stream for this process, read by a thread while the test's own
 * threads write. */
static struct live_reader *self_traced(const char *what, uint32_t nwriters, size_t size,
                                       int policy, struct tally **t, trace_id_t *trid)
{
	*trid = create_stream(0, size, policy, 0, -1);
	*t = tally_new(what, nwriters, thread_name);
	ck_assert_ok(posix_trace_start(*trid));
	return live_reader_start(*trid, *t);
}

static void thread_churn(trace_event_id_t id, struct poster *posters, uint32_t threads,
                         uint32_t alive, uint32_t count)
{
	pthread_t th[CHURN_ALIVE];
	ck_assert_uint_le(alive, CHURN_ALIVE);
	for (uint32_t i = 0; i < threads; i++) {
		if (i >= alive)
			pthread_join(th[i % alive], NULL);
		posters[i] = (struct poster){id, i, count, NULL, NULL};
		start_poster(&th[i % alive], &posters[i]);
	}
	for (uint32_t i = threads > alive ? threads - alive : 0; i < threads; i++)
		pthread_join(th[i % alive], NULL);
}

START_TEST(churn_of_2000_threads_in_a_traced_process)
{
	struct poster *posters = calloc(CHURN_THREADS, sizeof *posters);
	struct tally *t;
	trace_id_t trid;
	ck_assert_ptr_nonnull(posters);
	struct live_reader *r = self_traced("2,000 short-lived threads, library reader",
	                                    CHURN_THREADS,
	                                    room_for(CHURN_THREADS * CHURN_EVENTS, SYS_ROOM), 0, &t,
	                                    &trid);
	thread_churn(pt_event_id("wl.thread"), posters, CHURN_THREADS, CHURN_ALIVE, CHURN_EVENTS);
	live_reader_finish(r);
	ck_assert_ok(posix_trace_shutdown(trid));
	uint64_t *posted = posted_each(CHURN_THREADS, CHURN_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(posters);
	free(t);
}
END_TEST

START_TEST(churn_of_2000_threads_through_record)
{
	char *pt = tool("churn_of_2000_threads_through_record");
	if (!pt)
		return;
	char n[16], p[16], c[16];
	snprintf(n, sizeof n, "%d", CHURN_THREADS);
	snprintf(p, sizeof p, "%d", CHURN_ALIVE);
	snprintf(c, sizeof c, "%d", CHURN_EVENTS);
	char *argv[] = {pt_helper_path("wl_threads"), "churn", "-n", n, "-p", p, "-c", c, NULL};
	const char *log = in_dir("churn.ptlog");
	record(pt, argv, room_for(CHURN_THREADS * CHURN_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	struct tally *t = tally_new("2,000 short-lived threads, posixtrace record", CHURN_THREADS,
	                            thread_name);
	read_log(log, t);
	uint64_t *posted = posted_each(CHURN_THREADS, CHURN_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}
END_TEST

START_TEST(churn_with_a_small_loop_stream_marks_every_loss)
{
	/* 64 KiB hold a fraction of 40,000 events: whatever the reader does
	 * not take in time is lost, and each gap must be counted and
	 * bracketed by OVERFLOW/RESUME (XSH 2.11). */
	struct poster *posters = calloc(CHURN_THREADS, sizeof *posters);
	struct tally *t;
	trace_id_t trid;
	ck_assert_ptr_nonnull(posters);
	struct live_reader *r = self_traced("2,000 threads, 64 KiB LOOP stream, library reader",
	                                    CHURN_THREADS, 64 * 1024, POSIX_TRACE_LOOP, &t, &trid);
	thread_churn(pt_event_id("wl.thread"), posters, CHURN_THREADS, CHURN_ALIVE, CHURN_EVENTS);
	live_reader_finish(r);
	ck_assert_ok(posix_trace_shutdown(trid));
	uint64_t *posted = posted_each(CHURN_THREADS, CHURN_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 0);
	free(posted);
	free(posters);
	free(t);
}
END_TEST

START_TEST(thousand_threads_alive_at_once_in_a_traced_process)
{
	static struct poster posters[ALIVE_THREADS];
	static pthread_t th[ALIVE_THREADS];
	pthread_barrier_t created, posted_all;
	struct tally *t;
	trace_id_t trid;
	trace_event_id_t id = pt_event_id("wl.thread");
	struct live_reader *r = self_traced("1,000 threads alive at once, library reader",
	                                    ALIVE_THREADS,
	                                    room_for(ALIVE_THREADS * ALIVE_EVENTS, SYS_ROOM), 0, &t,
	                                    &trid);
	pthread_barrier_init(&created, NULL, ALIVE_THREADS);
	pthread_barrier_init(&posted_all, NULL, ALIVE_THREADS);
	for (uint32_t i = 0; i < ALIVE_THREADS; i++) {
		posters[i] = (struct poster){id, i, ALIVE_EVENTS, &created, &posted_all};
		start_poster(&th[i], &posters[i]);
	}
	for (uint32_t i = 0; i < ALIVE_THREADS; i++)
		pthread_join(th[i], NULL);
	live_reader_finish(r);
	ck_assert_ok(posix_trace_shutdown(trid));
	uint64_t *posted = posted_each(ALIVE_THREADS, ALIVE_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}
END_TEST

START_TEST(thousand_threads_alive_at_once_through_record)
{
	char *pt = tool("thousand_threads_alive_at_once_through_record");
	if (!pt)
		return;
	char n[16], c[16];
	snprintf(n, sizeof n, "%d", ALIVE_THREADS);
	snprintf(c, sizeof c, "%d", ALIVE_EVENTS);
	char *argv[] = {pt_helper_path("wl_threads"), "alive", "-n", n, "-c", c, NULL};
	const char *log = in_dir("alive.ptlog");
	record(pt, argv, room_for(ALIVE_THREADS * ALIVE_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	struct tally *t = tally_new("1,000 threads alive at once, posixtrace record",
	                            ALIVE_THREADS, thread_name);
	read_log(log, t);
	uint64_t *posted = posted_each(ALIVE_THREADS, ALIVE_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}
END_TEST

/* ---- an idle traced process with 100 live threads ------------------------ */

#define IDLE_THREADS 100
#define IDLE_SECONDS (5 * scale)
#define IDLE_STREAM (4u << 20)      /* the default size, stated */
#define IDLE_GROWTH_MAX (1u << 20)  /* a few blocks at most */
#define IDLE_FLUSH_STARTS_MAX 100

/* Watches the log while the program idles: returns the largest growth
 * beyond base, and stops watching early once it is past the limit. */
static off_t watch_log_growth(struct proc *p, const char *log, off_t base, int *status)
{
	off_t growth = 0;
	for (int waited_ms = 0;; waited_ms += 50) {
		off_t size = file_size(log);
		if (size - base > growth)
			growth = size - base;
		if (growth >= (off_t)IDLE_GROWTH_MAX)
			return growth; /* the caller fails; cleanup kills the program */
		pid_t r = waitpid(p->pid, status, WNOHANG);
		if (r == p->pid) {
			kill(-p->pid, SIGKILL);
			drop_group(p->pid);
			return growth;
		}
		ck_assert_msg(waited_ms < (IDLE_SECONDS + 15) * 1000, "the idle program did not end");
		pt_sleep_ms(50);
	}
}

static void check_idle_log(const char *what, const char *log, off_t growth)
{
	struct tally *t = tally_new(what, IDLE_THREADS, thread_name);
	read_log(log, t);
	uint64_t *posted = posted_each(IDLE_THREADS, 1);
	tally_finish(t, posted, NULL);
	fprintf(stderr, "t_wlthreads: %s: the log grew %lld bytes while %d threads idled\n", what,
	        (long long)growth, IDLE_THREADS);
	assert_workload(t, 1);
	ck_assert_msg(t->sys[POSIX_TRACE_FLUSH_START] < IDLE_FLUSH_STARTS_MAX,
	              "%s; %llu FLUSH_START for %d events: the keeper flushes in a loop (log grew "
	              "%lld bytes while idle)",
	              t->summary, (unsigned long long)t->sys[POSIX_TRACE_FLUSH_START],
	              IDLE_THREADS, (long long)growth);
	free(posted);
	free(t);
}

static char **idle_command(void)
{
	static char n[16], s[16];
	static char *argv[12];
	snprintf(n, sizeof n, "%d", IDLE_THREADS);
	snprintf(s, sizeof s, "%d", IDLE_SECONDS);
	int i = 0;
	argv[i++] = pt_helper_path("wl_threads");
	argv[i++] = "idle";
	argv[i++] = "-n", argv[i++] = n;
	argv[i++] = "-s", argv[i++] = s;
	argv[i++] = "-r", argv[i++] = "10"; /* the pipe below, as fd 10 */
	argv[i] = NULL;
	return argv;
}

START_TEST(idle_process_with_100_threads_through_record)
{
	char *pt = tool("idle_process_with_100_threads_through_record");
	if (!pt)
		return;
	int ready[2];
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	const char *log = in_dir("idle.ptlog");
	char **cmd = idle_command();
	struct proc p = start_record(pt, cmd, IDLE_STREAM, log, &ready[1], 1);
	close(ready[1]);
	ck_assert_msg(wait_byte(ready[0], 15000), "the threads did not post: %s",
	              file_head(in_dir("record.out")));
	pt_sleep_ms(200);
	off_t base = file_size(log);
	int status = 0;
	off_t growth = watch_log_growth(&p, log, base, &status);
	ck_assert_msg(growth < (off_t)IDLE_GROWTH_MAX,
	              "idle process, posixtrace record: the log grew by %lld bytes while 100 "
	              "threads that posted one event each idled (from %lld bytes)",
	              (long long)growth, (long long)base);
	record_ended(status, cmd);
	check_idle_log("idle process, posixtrace record", log, growth);
}
END_TEST

START_TEST(idle_process_with_100_threads_with_a_library_controller)
{
	int ready[2];
	ck_assert_int_eq(pipe2(ready, O_CLOEXEC), 0);
	const char *log = in_dir("idle.ptlog");
	struct proc p = spawn(idle_command(), in_dir("program.out"), 1, &ready[1], 1);
	close(ready[1]);
	/* an appending log, as posixtrace record makes: its size shows what
	 * the keeper writes (a LOOP log would wrap around) */
	int logfd = open_log(log);
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, IDLE_STREAM));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	ck_assert_ok(posix_trace_create_withlog(p.pid, &attr, logfd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));
	release(&p);
	ck_assert_msg(wait_byte(ready[0], 15000), "the threads did not post");
	/* the first flush: everything posted so far goes to the log */
	ck_assert_ok(posix_trace_flush(trid));
	struct posix_trace_status_info st;
	for (int i = 0;; i++) {
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			break;
		ck_assert_msg(i < 500, "posix_trace_flush did not end within 5 s");
		pt_sleep_ms(10);
	}
	off_t base = file_size(log);
	int status = 0;
	off_t growth = watch_log_growth(&p, log, base, &status);
	ck_assert_msg(growth < (off_t)IDLE_GROWTH_MAX,
	              "idle process, library controller: the log grew by %lld bytes after the "
	              "first flush while 100 threads that posted one event each idled (from %lld)",
	              (long long)growth, (long long)base);
	ck_assert_msg(exited_0(status), "the idle program: status 0x%x", status);
	ck_assert_ok(posix_trace_shutdown(trid));
	close(logfd);
	check_idle_log("idle process, library controller", log, growth);
}
END_TEST

/* ---- fork as the first statement of main --------------------------------- */

#define FORK_RUNS (50 * scale)
#define FORK_CHILD_EVENTS 100

/* Runs one traced run per call of run(); counts the runs whose log is not
 * right and reports the first. */
static void check_fork_runs(const char *what, void (*run)(const char *log))
{
	char first[1400] = "";
	int bad = 0;
	for (int i = 0; i < FORK_RUNS; i++) {
		char name[32], msg[1200];
		snprintf(name, sizeof name, "fork%d.ptlog", i);
		const char *log = in_dir(name);
		run(log);
		struct tally *t = tally_new(what, 2, forkfirst_name);
		read_log(log, t);
		uint64_t posted[2] = {1, FORK_CHILD_EVENTS};
		tally_finish(t, posted, NULL);
		if (tally_verdict(t, 1, msg, sizeof msg)) {
			if (bad++ == 0)
				snprintf(first, sizeof first, "run %d: %s", i + 1, msg);
		}
		free(t);
		unlink(log);
	}
	ck_assert_msg(bad == 0, "%d of %d runs went wrong; %s", bad, FORK_RUNS, first);
}

static char **forkfirst_command(void)
{
	static char c[16];
	static char *argv[4];
	snprintf(c, sizeof c, "%d", FORK_CHILD_EVENTS);
	argv[0] = pt_helper_path("wl_forkfirst");
	argv[1] = c;
	argv[2] = "1";
	argv[3] = NULL;
	return argv;
}

static void forkfirst_record_run(const char *log)
{
	record(tool("fork_first_in_main_through_record"), forkfirst_command(),
	       room_for(FORK_CHILD_EVENTS + 1, SYS_ROOM), log, 20);
}

static void forkfirst_library_run(const char *log)
{
	int status = trace_program(forkfirst_command(), room_for(FORK_CHILD_EVENTS + 1, SYS_ROOM),
	                           log, 20);
	ck_assert_msg(exited_0(status), "wl_forkfirst: status 0x%x", status);
}

START_TEST(fork_first_in_main_through_record)
{
	if (!tool("fork_first_in_main_through_record"))
		return;
	check_fork_runs("fork first in main, posixtrace record", forkfirst_record_run);
}
END_TEST

START_TEST(fork_first_in_main_with_a_library_controller)
{
	check_fork_runs("fork first in main, library controller", forkfirst_library_run);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("wlthreads");
	TCase *tc = long_tcase(s, "threads");
	tcase_add_test(tc, churn_of_2000_threads_in_a_traced_process);
	tcase_add_test(tc, churn_of_2000_threads_through_record);
	tcase_add_test(tc, churn_with_a_small_loop_stream_marks_every_loss);
	tcase_add_test(tc, thousand_threads_alive_at_once_in_a_traced_process);
	tcase_add_test(tc, thousand_threads_alive_at_once_through_record);

	tc = long_tcase(s, "idle");
	tcase_add_test(tc, idle_process_with_100_threads_through_record);
	tcase_add_test(tc, idle_process_with_100_threads_with_a_library_controller);

	tc = long_tcase(s, "fork_first");
	tcase_add_test(tc, fork_first_in_main_through_record);
	tcase_add_test(tc, fork_first_in_main_with_a_library_controller);
	return workload_run(s, "pt-wlthreads");
}
