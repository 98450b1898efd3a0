/* SPDX-License-Identifier: MIT */
/*
 * t_workload: realistic workloads, traced through the `posixtrace record`
 * command and through a controller written with the library, counting every
 * event.
 *
 * Workloads of processes here: a shell loop running 2,000 short-lived
 * instrumented processes; a build (make -j2 of 200 instrumented jobs) and a
 * shell starting jobs with `&` and `wait`; a pre-forking server whose parent
 * opens the event names and whose workers post request begin/end pairs, two
 * of them killed with SIGKILL halfway and replaced; and the three-process
 * scenario of XRAT B.2.11 (trace controller, instrumented application, trace
 * analyzer).  Workloads of threads are t_wlthreads': 2,000 short-lived
 * threads (at most 50 alive) and 1,000 threads alive at once; a traced
 * process whose 100 threads posted one event each and then idle; a program
 * that forks as its first statement.  What both share: tests/workload.c.
 *
 * What every workload must show (XSH 2.11; posix_trace_attr_getmaxusereventsize,
 * DESCRIPTION: when the sum of the maximum sizes of the events that may be
 * recorded is at most stream-min-size, all are recorded without loss, whatever
 * the number of writers):
 *   - received + lost == posted when nothing is lost, and received + lost
 *     >= posted otherwise: lost is posixtrace_lost_events of
 *     posix_trace_get_status, which counts every event the stream lost,
 *     system events (FLUSH_START...) too; for a writer killed with SIGKILL,
 *     posted counts the calls that returned (its call in flight may be kept
 *     or lost);
 *   - nothing lost when the test's events fit the stream, whose size every
 *     test sets from posix_trace_attr_getmaxusereventsize (room for every
 *     user event plus 64 system events);
 *   - every gap a reader sees is bracketed as XSH 2.11 says for an overflow:
 *     POSIX_TRACE_OVERFLOW after the last event before the gap, and
 *     POSIX_TRACE_RESUME before the next event;
 *   - each writer's events arrive whole and in the order posted (the 16-byte
 *     payload is {writer, sequence number, mix(writer, sequence)});
 *   - every user event has the name its writer opened
 *     (posix_trace_eventid_get_name on the stream or on the pre-recorded log).
 * The XRAT scenario adds: START first; POSIX_TRACE_STOP after the last user
 * event when posix_trace_shutdown ends a running stream, carrying the
 * controller's pid; FLUSH_START/FLUSH_STOP of the controller's
 * posix_trace_flush carry the controller's pid and the address of its call
 * (XSH 2.11.1, posix_trace_event_info structure: posix_pid and
 * posix_prog_address); timestamps never
 * decrease over the whole log; and an event's type is in the set of
 * posix_trace_eventset_fill(POSIX_TRACE_WOPID_EVENTS) exactly when its pid
 * is 0.
 *
 * Helpers: tests/helpers/wl_post, wl_server, wl_threads and wl_forkfirst (see
 * their first comments) from $PT_TEST_HELPERS; the command is
 * $PT_TEST_HELPERS/../../posixtrace (tests that need it, or make, say
 * SKIPPED when it is missing).  Every process a test starts leads its own
 * process group, which the test kills when it ends, also when it fails; the
 * runner (main) is a child subreaper and kills whatever a test killed by its
 * timeout left behind.  Every file lives in one temporary directory that is
 * removed at the end.
 */
#include "workload.h"

/* ---- a shell loop of short-lived instrumented processes ------------------ */

#define LOOP_PROCESSES (2000 * scale)
#define LOOP_EVENTS 3

/* /bin/sh running n processes one after the other, n events each. */
static void loop_script(char *buf, size_t len, int n, int events)
{
	snprintf(buf, len,
	         "i=0; while [ $i -lt %d ]; do '%s' -w $i -c %d -n wl.loop.a -n wl.loop.b || exit 1; "
	         "i=$((i+1)); done",
	         n, pt_helper_path("wl_post"), events);
}

static void check_loop_log(const char *what, const char *log, int n, int fits)
{
	struct tally *t = tally_new(what, (uint32_t)n, loop_name);
	read_log(log, t);
	uint64_t *posted = posted_each((uint32_t)n, LOOP_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, fits);
	free(posted);
	free(t);
}

START_TEST(shell_loop_of_2000_processes_through_record)
{
	char *pt = tool("shell_loop_of_2000_processes_through_record");
	if (!pt)
		return;
	char script[1024];
	loop_script(script, sizeof script, LOOP_PROCESSES, LOOP_EVENTS);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("loop.ptlog");
	record(pt, argv, room_for(LOOP_PROCESSES * LOOP_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	check_loop_log("shell loop, posixtrace record", log, LOOP_PROCESSES, 1);
}
END_TEST

START_TEST(shell_loop_of_2000_processes_under_system)
{
	/* The controller traces itself with inheritance, so the shell that
	 * system() starts and everything it runs are traced. */
	char script[1024];
	loop_script(script, sizeof script, LOOP_PROCESSES, LOOP_EVENTS);
	const char *log = in_dir("loop.ptlog");
	int logfd = open_log(log);
	trace_id_t trid = create_stream(0, room_for(LOOP_PROCESSES * LOOP_EVENTS, SYS_ROOM), 0, 1,
	                                logfd);
	ck_assert_ok(posix_trace_start(trid));
	int status = system(script);
	ck_assert_ok(posix_trace_shutdown(trid));
	close(logfd);
	ck_assert_msg(exited_0(status), "the loop failed: status 0x%x", status);
	check_loop_log("shell loop, library controller, system()", log, LOOP_PROCESSES, 1);
}
END_TEST

START_TEST(shell_loop_of_2000_processes_forked_and_execed)
{
	/* The controller creates the stream for the held /bin/sh's pid. */
	char script[1024];
	loop_script(script, sizeof script, LOOP_PROCESSES, LOOP_EVENTS);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("loop.ptlog");
	int status = trace_program(argv, room_for(LOOP_PROCESSES * LOOP_EVENTS, SYS_ROOM), log,
	                           TIMEOUT_S);
	ck_assert_msg(exited_0(status), "the loop failed: status 0x%x; output: %s", status,
	              file_head(in_dir("program.out")));
	check_loop_log("shell loop, library controller, fork+exec of /bin/sh", log,
	               LOOP_PROCESSES, 1);
}
END_TEST

START_TEST(shell_loop_with_a_small_stream_marks_every_loss)
{
	/* 16 KiB cannot hold 1,500 events: the keeper must drain the stream
	 * while the loop runs, and whatever it does not save must be counted
	 * and bracketed by OVERFLOW/RESUME in the log. */
	char *pt = tool("shell_loop_with_a_small_stream_marks_every_loss");
	if (!pt)
		return;
	char script[1024];
	loop_script(script, sizeof script, 500, LOOP_EVENTS);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("loop.ptlog");
	record(pt, argv, 16 * 1024, log, TIMEOUT_S);
	check_loop_log("shell loop, 16 KiB stream, posixtrace record", log, 500, 0);
}
END_TEST

/* ---- a build: make -j2 of 200 jobs, and a shell with & and wait ---------- */

#define JOBS (200 * scale)
#define JOB_EVENTS 5

static const char *write_makefile(void)
{
	const char *path = in_dir("Makefile");
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "all:");
	for (int j = 0; j < JOBS; j++)
		fprintf(f, " job%d", j);
	fprintf(f, "\n.PHONY: all");
	for (int j = 0; j < JOBS; j++)
		fprintf(f, " job%d", j);
	fprintf(f, "\n");
	for (int j = 0; j < JOBS; j++)
		fprintf(f, "job%d:\n\t@'%s' -w %d -c %d -n wl.job.begin -n wl.job.end\n", j,
		        pt_helper_path("wl_post"), j, JOB_EVENTS);
	ck_assert_int_eq(fclose(f), 0);
	return path;
}

/* 20 rounds of 10 jobs started with & and waited for. */
static void background_script(char *buf, size_t len)
{
	snprintf(buf, len,
	         "r=0; while [ $r -lt %d ]; do j=0; while [ $j -lt 10 ]; do "
	         "'%s' -w $((r * 10 + j)) -c %d -n wl.job.begin -n wl.job.end & j=$((j+1)); done; "
	         "wait; r=$((r+1)); done",
	         JOBS / 10, pt_helper_path("wl_post"), JOB_EVENTS);
}

static void check_jobs_log(const char *what, const char *log)
{
	struct tally *t = tally_new(what, JOBS, job_name);
	read_log(log, t);
	uint64_t *posted = posted_each(JOBS, JOB_EVENTS);
	tally_finish(t, posted, NULL);
	assert_workload(t, 1);
	free(posted);
	free(t);
}

static int make_missing(const char *test)
{
	if (have_program("make"))
		return 0;
	fprintf(stderr, "t_workload: %s: SKIPPED (no make)\n", test);
	return 1;
}

START_TEST(make_j2_of_200_jobs_through_record)
{
	char *pt = tool("make_j2_of_200_jobs_through_record");
	if (!pt || make_missing("make_j2_of_200_jobs_through_record"))
		return;
	char *argv[] = {"make", "-s", "-j2", "-f", (char *)write_makefile(), "all", NULL};
	const char *log = in_dir("make.ptlog");
	record(pt, argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	check_jobs_log("make -j2, posixtrace record", log);
}
END_TEST

START_TEST(make_j2_of_200_jobs_with_a_library_controller)
{
	if (make_missing("make_j2_of_200_jobs_with_a_library_controller"))
		return;
	char *argv[] = {"make", "-s", "-j2", "-f", (char *)write_makefile(), "all", NULL};
	const char *log = in_dir("make.ptlog");
	int status = trace_program(argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	ck_assert_msg(exited_0(status), "make failed: status 0x%x; output: %s", status,
	              file_head(in_dir("program.out")));
	check_jobs_log("make -j2, library controller", log);
}
END_TEST

START_TEST(shell_background_jobs_through_record)
{
	char *pt = tool("shell_background_jobs_through_record");
	if (!pt)
		return;
	char script[1024];
	background_script(script, sizeof script);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("bg.ptlog");
	record(pt, argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	check_jobs_log("sh with & and wait, posixtrace record", log);
}
END_TEST

START_TEST(shell_background_jobs_with_a_library_controller)
{
	char script[1024];
	background_script(script, sizeof script);
	char *argv[] = {"/bin/sh", "-c", script, NULL};
	const char *log = in_dir("bg.ptlog");
	int status = trace_program(argv, room_for(JOBS * JOB_EVENTS, SYS_ROOM), log, TIMEOUT_S);
	ck_assert_msg(exited_0(status), "the shell failed: status 0x%x", status);
	check_jobs_log("sh with & and wait, library controller", log);
}
END_TEST

/* ---- a pre-forking server ------------------------------------------------ */

#define SERVER_WORKERS 8
#define SERVER_REQUESTS (5000 * scale)
#define SERVER_KILLS 2

static char *server_argv[16];

static char **server_command(const char *report)
{
	static char w[16], r[16], k[16];
	snprintf(w, sizeof w, "%d", SERVER_WORKERS);
	snprintf(r, sizeof r, "%d", SERVER_REQUESTS);
	snprintf(k, sizeof k, "%d", SERVER_KILLS);
	char **a = server_argv;
	int n = 0;
	a[n++] = pt_helper_path("wl_server");
	a[n++] = "-w", a[n++] = w;
	a[n++] = "-r", a[n++] = r;
	a[n++] = "-k", a[n++] = k;
	a[n++] = "-o", a[n++] = (char *)report;
	a[n] = NULL;
	return a;
}

static size_t server_room(void)
{
	/* every request of every slot, a request a killed worker left half done
	 * (served again by its replacement), and its call in flight */
	return room_for((uint64_t)SERVER_WORKERS * SERVER_REQUESTS * 2 + 3 * SERVER_KILLS,
	                SYS_ROOM);
}

/* Reads the server's report: what each writer posted, who was killed. */
static uint32_t read_server_report(const char *path, uint64_t *posted, uint8_t *killed)
{
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no server report %s", path);
	uint32_t n = 0, w;
	unsigned long long p;
	int k;
	while (fscanf(f, "writer %u posted %llu killed %d\n", &w, &p, &k) == 3) {
		ck_assert_uint_eq(w, n);
		ck_assert_uint_lt(n, 2 * SERVER_WORKERS);
		posted[n] = p;
		killed[n] = (uint8_t)k;
		n++;
	}
	fclose(f);
	ck_assert_uint_ge(n, SERVER_WORKERS);
	return n;
}

static void check_server_log(const char *what, const char *log, const char *report)
{
	uint64_t posted[2 * SERVER_WORKERS] = {0};
	uint8_t killed[2 * SERVER_WORKERS] = {0};
	uint32_t n = read_server_report(report, posted, killed);
	struct tally *t = tally_new(what, n, request_name);
	read_log(log, t);
	tally_finish(t, posted, killed);
	assert_workload(t, 1);
	free(t);
}

START_TEST(prefork_server_through_record)
{
	char *pt = tool("prefork_server_through_record");
	if (!pt)
		return;
	const char *log = in_dir("server.ptlog"), *report = in_dir("server.report");
	record(pt, server_command(report), server_room(), log, TIMEOUT_S);
	check_server_log("pre-forking server, posixtrace record", log, report);
}
END_TEST

START_TEST(prefork_server_with_a_library_controller)
{
	const char *log = in_dir("server.ptlog"), *report = in_dir("server.report");
	int status = trace_program(server_command(report), server_room(), log, TIMEOUT_S);
	ck_assert_msg(exited_0(status), "the server failed: status 0x%x; output: %s", status,
	              file_head(in_dir("program.out")));
	check_server_log("pre-forking server, library controller", log, report);
}
END_TEST

/* ---- XRAT B.2.11: controller, instrumented application, analyzer --------- */

#define XRAT_MAX_EVENTS 200000
#define XRAT_BEFORE_FLUSH 20000
#define XRAT_AFTER_FLUSH 500

/* This program's text (where its calls to the library are made). */
static void own_text(uintptr_t *lo, uintptr_t *hi)
{
	char exe[PATH_MAX], line[PATH_MAX + 128];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	ck_assert_int_gt(n, 0);
	exe[n] = '\0';
	FILE *f = fopen("/proc/self/maps", "r");
	ck_assert_ptr_nonnull(f);
	*lo = UINTPTR_MAX;
	*hi = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long a, b;
		char perms[8], path[PATH_MAX];
		if (sscanf(line, "%lx-%lx %7s %*s %*s %*s %4095s", &a, &b, perms, path) == 4 &&
		    perms[2] == 'x' && strcmp(path, exe) == 0) {
			if (a < *lo)
				*lo = a;
			if (b > *hi)
				*hi = b;
		}
	}
	fclose(f);
	ck_assert_msg(*lo < *hi, "no text mapping of %s", exe);
}

static struct pt_progress *map_progress(const char *path)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, 4096), 0);
	void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	ck_assert_ptr_ne(m, MAP_FAILED);
	return m;
}

static void wait_posted(struct pt_progress *pr, uint64_t n, const char *when)
{
	for (int i = 0; atomic_load(&pr->posted) < n; i++) {
		ck_assert_msg(i < 10000, "the application posted %llu events %s, not %llu within 10 s",
		              (unsigned long long)atomic_load(&pr->posted), when,
		              (unsigned long long)n);
		ck_assert_msg(!atomic_load(&pr->done), "the application ended early");
		pt_sleep_ms(1);
	}
}

START_TEST(xrat_controller_application_analyzer)
{
	/* process 2: the instrumented application (XRAT "Application
	 * Instrumentation"), waiting on a pipe after opening its names */
	const char *progress_path = in_dir("progress"), *log = in_dir("xrat.ptlog");
	struct pt_progress *pr = map_progress(progress_path);
	int go[2], hold[2];
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
	char count[16];
	snprintf(count, sizeof count, "%d", XRAT_MAX_EVENTS);
	/* a steady stream of events (one every microsecond or so), so that some are
	 * posted while the flush runs */
	char *argv[] = {pt_helper_path("wl_post"), "-w", "0", "-c", count, "-n", "my_first_event", "-n",
	                "my_second_event", "-s", "1000", "-g", "10", "-H", "11", "-m",
	                (char *)progress_path, NULL};
	int fds[2] = {go[0], hold[0]};
	struct proc app = spawn(argv, in_dir("app.out"), 0, fds, 2);
	close(go[0]);
	close(hold[0]);
	for (int i = 0; !atomic_load(&pr->ready); i++) {
		ck_assert_msg(i < 1000, "the application did not start: %s", file_head(in_dir("app.out")));
		pt_sleep_ms(10);
	}

	/* process 1 (this one): the trace controller, XRAT "Trace Operation
	 * Control" with a log */
	int logfd = open_log(log);
	trace_id_t trid = create_stream(app.pid, room_for(XRAT_MAX_EVENTS, SYS_ROOM), 0, 0, logfd);
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	wait_posted(pr, XRAT_BEFORE_FLUSH, "before the flush");
	ck_assert_ok(posix_trace_flush(trid));
	struct posix_trace_status_info st;
	for (int i = 0;; i++) {
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			break;
		ck_assert_msg(i < 5000, "posix_trace_flush did not end within 5 s");
		pt_sleep_ms(1);
	}
	wait_posted(pr, atomic_load(&pr->posted) + XRAT_AFTER_FLUSH, "after the flush");
	atomic_store(&pr->stop, 1);
	for (int i = 0; !atomic_load(&pr->done); i++) {
		ck_assert_msg(i < 1000, "the application did not stop posting");
		pt_sleep_ms(10);
	}
	uint64_t posted = atomic_load(&pr->posted);
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_status, POSIX_TRACE_RUNNING);
	ck_assert_ok(posix_trace_shutdown(trid)); /* while running */
	close(logfd);
	ck_assert_int_eq(write(hold[1], "x", 1), 1);
	int status = wait_exit(&app, 10, "the application");
	ck_assert_msg(exited_0(status), "the application: status 0x%x", status);

	/* process 3: the trace analyzer (XRAT "Trace Analyzer") reads the log;
	 * what it finds goes back through shared memory */
	struct tally *t = mmap(NULL, tally_size(1), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	                       -1, 0);
	ck_assert_ptr_ne(t, MAP_FAILED);
	tally_init(t, "XRAT three processes", 1, xrat_name);
	t->controller = getpid();
	own_text(&t->text_lo, &t->text_hi);
	t->read_error = -1;
	fflush(NULL);
	pid_t analyzer = pt_fork();
	if (analyzer == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(20);
		t->read_error = read_log_into(log, t);
		_exit(0);
	}
	int astatus;
	ck_assert_int_eq(waitpid(analyzer, &astatus, 0), analyzer);
	ck_assert_msg(exited_0(astatus) && t->read_error == 0,
	              "the analyzer could not read the log: status 0x%x, error %d", astatus,
	              t->read_error);
	tally_finish(t, &posted, NULL);

	/* every event of the application, named, in order, none lost */
	assert_workload(t, 1);

	/* the rest is gathered so that one run shows every rule broken */
	char bad[2400] = "";
	size_t n = 0;
#define XRAT_RULE(cond, ...)                                                                  \
	do {                                                                                   \
		if (!(cond) && n < sizeof bad)                                                 \
			n += (size_t)snprintf(bad + n, sizeof bad - n, "\n  - " __VA_ARGS__); \
	} while (0)
	pid_t me = getpid();
	XRAT_RULE(t->first_id == POSIX_TRACE_START && t->first_pid == me,
	          "the first event is id %u of pid %d, not START of the controller", t->first_id,
	          (int)t->first_pid);
	/* posix_trace_shutdown ended the running window */
	XRAT_RULE(t->sys[POSIX_TRACE_STOP] == 1 && t->last_stop_pos > t->last_user_pos,
	          "the running window is not closed by one STOP after the last user event "
	          "(%llu STOP, the last at #%lld, the last user event at #%lld)",
	          (unsigned long long)t->sys[POSIX_TRACE_STOP], (long long)t->last_stop_pos,
	          (long long)t->last_user_pos);
	XRAT_RULE(t->sys[POSIX_TRACE_STOP] == 0 || t->last_stop_pid == me,
	          "the shutdown's STOP carries pid %d, not the controller's", (int)t->last_stop_pid);
	/* the explicit flush, made while the application posted */
	XRAT_RULE(t->ctl_flush_state == 3,
	          "no FLUSH_START then FLUSH_STOP with the controller's pid followed by events of "
	          "the application (%llu FLUSH_START and %llu FLUSH_STOP carry its pid)",
	          (unsigned long long)t->ctl_flush_start, (unsigned long long)t->ctl_flush_stop);
	XRAT_RULE(t->problems[P_ADDR] == 0, "%s", t->first[P_ADDR]);
	XRAT_RULE(t->problems[P_TS] == 0, "timestamps decrease %llu times, the first: %s",
	          (unsigned long long)t->problems[P_TS], t->first[P_TS]);
	XRAT_RULE(t->problems[P_WOPID] == 0, "%llu events break the WOPID rule, the first: %s",
	          (unsigned long long)t->problems[P_WOPID], t->first[P_WOPID]);
#undef XRAT_RULE
	ck_assert_msg(n == 0, "%s (controller pid %d); broken:%s", t->summary, (int)me, bad);
	munmap(t, tally_size(1));
	munmap(pr, 4096);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("workload");
	TCase *tc = long_tcase(s, "shell_loop");
	tcase_add_test(tc, shell_loop_of_2000_processes_through_record);
	tcase_add_test(tc, shell_loop_of_2000_processes_under_system);
	tcase_add_test(tc, shell_loop_of_2000_processes_forked_and_execed);
	tcase_add_test(tc, shell_loop_with_a_small_stream_marks_every_loss);

	tc = long_tcase(s, "build");
	tcase_add_test(tc, make_j2_of_200_jobs_through_record);
	tcase_add_test(tc, make_j2_of_200_jobs_with_a_library_controller);
	tcase_add_test(tc, shell_background_jobs_through_record);
	tcase_add_test(tc, shell_background_jobs_with_a_library_controller);

	tc = long_tcase(s, "prefork_server");
	tcase_add_test(tc, prefork_server_through_record);
	tcase_add_test(tc, prefork_server_with_a_library_controller);

	tc = long_tcase(s, "xrat");
	tcase_add_test(tc, xrat_controller_application_analyzer);
	return workload_run(s, "pt-workload");
}
