/* SPDX-License-Identifier: MIT */
/*
 * t_toolbounds: posixtrace's stats and convert on logs crafted to cost
 * them (tests/logtest.h writes them, every CRC right) stay in bounded
 * memory and output, and stats' percentiles keep their stated precision.
 *
 * - times_go_back: a thread whose every event is older than the one
 *   before, and system events (no thread) likewise: `convert --to ctf`
 *   writes one stream each (the old code wrote a stream file per event),
 *   babeltrace2 reads every event back, and each event's timestamp less
 *   its time_raised field is its recorded time; `convert --to chrome`
 *   counts the events it placed later; `convert --to perfetto` writes
 *   them as negative deltas, and its trace, decoded by protoc, gives every
 *   event at its recorded time (tests/cli/perfetto_check.py against dump).
 * - many_threads: threads that each open a begin and close it after every
 *   other thread has opened one (all open at once) and post an instant:
 *   the CTF streams stay at most CTF_STREAMS_MAX (+1), babeltrace2 reads
 *   every event; stats, stats --per-thread, convert --to chrome and
 *   convert --to perfetto peak under BOUND_KB of resident memory (the old code kept every thread's
 *   state and open begins: far more); stats reports the begins past its
 *   bounds and lists STATS_THREADS_MAX threads, the events of the others
 *   on one line; --per-thread gives at most DURATION_THREAD_ROWS rows of a
 *   thread and one for the other threads, which hold every pair measured.
 * - open_begins_budget: more nested begins open at once than pairing keeps
 *   (PAIR_OPEN_MAX): exactly that many pairs measured, and stats counts
 *   the begins it let go, by reason.
 * - loss_gaps_bounded: stats' loss timeline lists its first LOSS_GAPS_MAX
 *   gaps and counts the rest.
 * - quantiles: a million begin/end pairs of known durations (spread over
 *   six decades): stats' count is exact, min and max exact to the printed
 *   digits, p50/p90/p99 within 1 % of the exact nearest-rank values the
 *   test computes, the three slowest are the three longest; stats peaks
 *   under BOUND_KB (the old code kept every pair).
 *
 * - ctf_header_and_widths: `convert --to ctf`'s compact event header (32
 *   bits of time after the stream's last, the whole time past 2^32 ns) and
 *   its two classes per type (48-bit tid and address, 8-bit data_len and
 *   time_raised, or the full widths): events at gaps around 2^32 ns and
 *   far beyond, pthread_t values, addresses and data lengths on either
 *   side of each narrow bound, times that go back by 255 and 256 ns;
 *   babeltrace2 lists every event as dump does (tests/cli/compare.py ctf:
 *   time, name, pid, thread, address, truncation, data), and a 16-byte
 *   event of a thread takes at most CTF_EVENT_16_BYTES bytes of its stream
 *   file (67 before the compact header and classes).
 *
 * Peak memory is the command's ru_maxrss (wait4), which includes what
 * this process held when it forked: the test keeps little until then.
 * Under a sanitizer the
 * command's memory is the sanitizer's (shadow, quarantine): the bound is
 * then not checked, and the test says so.  PT_TOOLBOUNDS_BACK,
 * PT_TOOLBOUNDS_THREADS and PT_TOOLBOUNDS_PAIRS set the sizes (the events
 * going back per stream, the threads, the pairs: tests/soak/toolbounds.sh
 * gives the issue's) and then each command's peak memory and time are
 * printed; the bounds stay the same.
 */
#include "logtest.h"

#include <math.h>
#include <stdbool.h>
#include <sys/resource.h>

#define BOUND_KB (48u << 10) /* peak resident memory of one command */
#define CTF_STREAMS_MAX 256  /* tools/ctf.c */
#define PAIR_THREADS_MAX 65536 /* tools/tool.h */
#define DURATION_THREAD_ROWS 1024 /* tools/tool.h */
#define STATS_THREADS_MAX 65536 /* tools/stats.c */
/* A 16-byte event in CTF (tools/ctf.c): header 6, cpu_id 4, pid 4, tid 6,
 * prog_address 6, truncation 1, data_len 1, data 16, four empty strings
 * 4, time_raised 1. */
#define CTF_EVENT_16_BYTES 49

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

static const char *dir;

static void setup(void)
{
	dir = pt_scratch_dir("pt_toolbounds");
}

static void teardown(void) { pt_remove_tree(dir); }

static double env_number(const char *name, double dflt)
{
	const char *m = getenv(name);
	double v = m ? atof(m) : dflt;
	return v >= 1 ? v : dflt;
}

static bool soaking(void)
{
	return getenv("PT_TOOLBOUNDS_BACK") || getenv("PT_TOOLBOUNDS_THREADS") ||
	       getenv("PT_TOOLBOUNDS_PAIRS");
}

static uint32_t size_of(const char *name, uint32_t dflt)
{
	double v = env_number(name, dflt);
	return v < 4e9 ? (uint32_t)v : dflt;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* dir/name, valid until the fourth next call. */
static const char *path_of(const char *name)
{
	static char paths[4][256];
	static int next;
	char *p = paths[next++ % 4];
	ck_assert_int_lt(snprintf(p, sizeof paths[0], "%s/%.64s", dir, name), (int)sizeof paths[0]);
	return p;
}

static int new_file(const char *name)
{
	int fd = open(path_of(name), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static const char *posixtrace_path(void)
{
	static char path[PATH_MAX + 32], real[PATH_MAX];
	snprintf(path, sizeof path, "%.*s/../../posixtrace", PATH_MAX - 1, pt_helpers_dir());
	ck_assert_msg(realpath(path, real) && access(real, X_OK) == 0, "%s not found", path);
	return real;
}

/* Runs `posixtrace ARGS...` in dir, stdout into dir/out (or /dev/null),
 * files it writes limited to 4 GiB, killed after 120 s (times Check's
 * multiplier: a hang fails the test, no speed is checked).  Exit status 0
 * required; returns the peak resident memory in KiB. */
static long run_pt(const char *out, ...)
{
	char *argv[16] = {(char *)posixtrace_path()};
	va_list ap;
	va_start(ap, out);
	int argc = pt_append_args(argv, 1, 16, va_arg(ap, const char *), ap);
	va_end(ap);
	double start = now_s(), limit = 120 * env_number("CK_TIMEOUT_MULTIPLIER", 1);
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit fs = {4ull << 30, 4ull << 30};
		int fd = open(out ? path_of(out) : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int null = open("/dev/null", O_WRONLY);
		if (fd < 0 || null < 0 || dup2(fd, 1) < 0 || setrlimit(RLIMIT_FSIZE, &fs) != 0 ||
		    chdir(dir) != 0 || (!soaking() && dup2(null, 2) < 0))
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	struct rusage ru;
	for (;;) {
		pid_t r = wait4(pid, &status, WNOHANG, &ru);
		ck_assert_int_ge(r, 0);
		if (r == pid)
			break;
		if (now_s() - start > limit) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ck_abort_msg("posixtrace %s %s: still running after %.0f s", argv[1],
			             argv[argc - 1], limit);
		}
		usleep(2000);
	}
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "posixtrace %s %s: %s",
	              argv[1], argv[argc - 1], how);
	if (soaking())
		fprintf(stderr, "t_toolbounds: posixtrace %s %s ... %s: %.1f MB peak, %.2f s\n",
		        argv[1], argv[2][0] == '-' ? argv[2] : "", argv[argc - 1],
		        (double)ru.ru_maxrss / 1024, now_s() - start);
	return ru.ru_maxrss;
}

/* The command's peak stayed under the bound (not checked under a
 * sanitizer, said once). */
static void assert_bounded(long kb, const char *what)
{
	static bool said;
	if (SANITIZED) {
		if (!said)
			fprintf(stderr, "t_toolbounds: sanitized build: peak memory not checked\n");
		said = true;
		return;
	}
	ck_assert_msg(kb <= (long)BOUND_KB, "%s: %ld KiB peak resident memory, bound %u KiB", what,
	              kb, BOUND_KB);
}

/* The files named stream_N in dir/name. */
static size_t count_streams(const char *name)
{
	DIR *d = opendir(path_of(name));
	ck_assert_ptr_nonnull(d);
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += strncmp(e->d_name, "stream_", 7) == 0;
	closedir(d);
	return n;
}

static bool have_babeltrace2(void)
{
	if (system("command -v babeltrace2 >/dev/null 2>&1") == 0)
		return true;
	fprintf(stderr, "t_toolbounds: SKIP the babeltrace2 checks: babeltrace2 is not installed "
	                "(scripts/install-deps.sh installs it)\n");
	return false;
}

/* babeltrace2's lines for the trace in dir/name: their number, and into
 * recorded (if not NULL, room for max) each event's timestamp less its
 * time_raised; *raised counts the events with time_raised > 0. */
static size_t read_ctf(const char *name, uint64_t *recorded, size_t max, size_t *raised)
{
	char cmd[PATH_MAX + 64], line[4096];
	snprintf(cmd, sizeof cmd, "babeltrace2 --clock-seconds '%s' 2>&1", path_of(name));
	FILE *f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = 0;
	*raised = 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long long sec, nsec, up;
		const char *tail = strstr(line, "time_raised = ");
		ck_assert_msg(sscanf(line, "[%llu.%llu]", &sec, &nsec) == 2 && tail &&
		              sscanf(tail, "time_raised = %llu }", &up) == 1,
		              "babeltrace2: %s", line);
		if (recorded) {
			ck_assert_uint_lt(n, max);
			recorded[n] = sec * 1000000000ull + nsec - up;
		}
		*raised += up > 0;
		n++;
	}
	ck_assert_int_eq(pclose(f), 0);
	return n;
}

static int by_value(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The Perfetto trace dir/trace of log, decoded by protoc with the
 * project's schema subset, holds dump's events (tests/cli/perfetto_check.py
 * replays its incremental times); skipped without protoc or python3. */
static void check_perfetto(const char *trace, const char *log)
{
	if (system("command -v protoc >/dev/null 2>&1 && command -v python3 >/dev/null 2>&1")) {
		fprintf(stderr, "t_toolbounds: SKIP the Perfetto trace's check: no protoc or python3 "
		                "(scripts/install-deps.sh installs them)\n");
		return;
	}
	char root[PATH_MAX + 16], real[PATH_MAX], cmd[6 * PATH_MAX];
	snprintf(root, sizeof root, "%.*s/../../..", PATH_MAX - 1, pt_helpers_dir());
	ck_assert_ptr_nonnull(realpath(root, real));
	snprintf(cmd, sizeof cmd,
	         "protoc --decode=perfetto.protos.Trace --proto_path='%s/tests/perfetto' "
	         "'%s/tests/perfetto/trace_subset.proto' <'%s/%s' >'%s/pf.txt' && "
	         "'%s' dump '%s' --format json >'%s/pf.jsonl' 2>/dev/null && "
	         "python3 '%s/tests/cli/perfetto_check.py' '%s/pf.txt' '%s/pf.jsonl' >&2",
	         real, real, dir, trace, dir, posixtrace_path(), log, dir, real, dir, dir);
	ck_assert_msg(system(cmd) == 0, "the Perfetto trace %s does not hold dump's events", trace);
}

/* ---- item 10: times that go back ----------------------------------------- */

#define BACK_BASE 1700000000000000000ull

/* n events of one thread, then n system events of no thread, each older
 * than the one before. */
static void write_backwards_log(int fd, uint32_t n)
{
	struct lt_craft c;
	const struct pt_log_ctx a = {100, 100, 0x1000, "a"}, none = {0, 0, 0, ""};
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "backwards");
	lt_craft_name(&c, 33, "tick");
	for (uint32_t i = 0; i < n; i++)
		lt_craft_event(&c, &a, 33, BACK_BASE - i, 0x10, 1, NULL, 0);
	for (uint32_t i = 0; i < n; i++)
		lt_craft_event(&c, &none, POSIX_TRACE_FLUSH_START, BACK_BASE - 5 - i, 0, 0, NULL, 0);
	lt_craft_end(&c);
}

START_TEST(times_go_back)
{
	uint32_t n = size_of("PT_TOOLBOUNDS_BACK", 20000);
	int fd = new_file("back.ptlog");
	write_backwards_log(fd, n);
	close(fd);
	const char *log = path_of("back.ptlog");
	run_pt(NULL, "convert", log, "--to", "ctf", "back.ctf", NULL);
	size_t streams = count_streams("back.ctf");
	ck_assert_msg(streams <= 2, "%zu CTF streams for one thread and the system events", streams);
	if (have_babeltrace2()) {
		uint64_t *got = malloc(2 * (size_t)n * sizeof *got);
		ck_assert_ptr_nonnull(got);
		size_t raised;
		ck_assert_uint_eq(read_ctf("back.ctf", got, 2 * (size_t)n, &raised), 2 * (size_t)n);
		ck_assert_uint_eq(raised, 2 * ((size_t)n - 1));
		qsort(got, 2 * (size_t)n, sizeof *got, by_value);
		uint64_t *want = malloc(2 * (size_t)n * sizeof *want);
		ck_assert_ptr_nonnull(want);
		for (uint32_t i = 0; i < n; i++) {
			want[i] = BACK_BASE - i;
			want[n + i] = BACK_BASE - 5 - i;
		}
		qsort(want, 2 * (size_t)n, sizeof *want, by_value);
		for (size_t i = 0; i < 2 * (size_t)n; i++)
			ck_assert_msg(got[i] == want[i], "recorded time %zu: %llu, want %llu", i,
			              (unsigned long long)got[i], (unsigned long long)want[i]);
		free(got);
		free(want);
	}
	run_pt(NULL, "convert", log, "--to", "chrome", "back.json", NULL);
	size_t len;
	fd = open(path_of("back.json"), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	char *json = (char *)lt_file_bytes(fd, &len);
	close(fd);
	json[len] = '\0';
	/* the thread's events after its first, and the system events past
	 * the eight tracks of process 0 */
	char want[64];
	snprintf(want, sizeof want, "\"time_raised_events\":%u,", (n - 1) + (n - 8));
	ck_assert_msg(strstr(json, want), "no %s in the Chrome file's otherData", want);
	run_pt(NULL, "convert", log, "--to", "perfetto", "back.pftrace", NULL);
	check_perfetto("back.pftrace", log);
}
END_TEST

/* ---- item 11: threads ---------------------------------------------------- */

/* Each thread (pid k * 4096) opens x_begin, once every one has: closes it
 * with x_end and posts a tick. */
static void write_threads_log(int fd, uint32_t threads)
{
	struct lt_craft c;
	uint64_t ts = BACK_BASE;
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "threads");
	lt_craft_name(&c, 33, "x_begin");
	lt_craft_name(&c, 34, "x_end");
	lt_craft_name(&c, 35, "tick");
	for (int round = 0; round < 2; round++)
		for (uint32_t k = 1; k <= threads; k++) {
			struct pt_log_ctx ctx = {(int32_t)(k * 4096), 0, 0x1000 + k, ""};
			lt_craft_event(&c, &ctx, round ? 34 : 33, ts++, 0x10, 0, NULL, 0);
			if (round)
				lt_craft_event(&c, &ctx, 35, ts++, 0x10, 1, NULL, 0);
		}
	lt_craft_end(&c);
}

START_TEST(many_threads)
{
	uint32_t n = size_of("PT_TOOLBOUNDS_THREADS", 150000);
	int fd = new_file("threads.ptlog");
	write_threads_log(fd, n);
	close(fd);
	const char *log = path_of("threads.ptlog");
	assert_bounded(run_pt("stats.txt", "stats", log, NULL), "stats");
	assert_bounded(run_pt("per-thread.txt", "stats", "--per-thread", log, NULL),
	               "stats --per-thread");
	assert_bounded(run_pt(NULL, "convert", log, "--to", "chrome", "threads.json", NULL),
	               "convert --to chrome");
	assert_bounded(run_pt(NULL, "convert", log, "--to", "perfetto", "threads.pftrace", NULL),
	               "convert --to perfetto");
	run_pt(NULL, "convert", log, "--to", "ctf", "threads.ctf", NULL);
	size_t streams = count_streams("threads.ctf");
	ck_assert_msg(streams <= CTF_STREAMS_MAX, "%zu CTF streams", streams);
	size_t raised;
	if (have_babeltrace2())
		ck_assert_uint_eq(read_ctf("threads.ctf", NULL, 0, &raised), 3 * (size_t)n);
	/* stats measured the pairs of the threads it kept, and says how many
	 * begins it left */
	char line[1024], want[64];
	bool measured = false, reported = false;
	unsigned long long listed = 0, past = 0, events;
	snprintf(want, sizeof want, "  x: %u, ", n < PAIR_THREADS_MAX ? n : PAIR_THREADS_MAX);
	FILE *f = fopen(path_of("stats.txt"), "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f)) {
		measured |= strncmp(line, want, strlen(want)) == 0;
		reported |= strncmp(line, "pairing: ", 9) == 0 && n > PAIR_THREADS_MAX;
		listed += strstr(line, "  pid ") && strstr(line, " thread 0x");
		if (sscanf(line, " %llu  of threads past the first", &events) == 1 &&
		    strstr(line, "of threads past the first 65536"))
			past = events;
	}
	fclose(f);
	/* threads listed one by one up to STATS_THREADS_MAX, the events of
	 * the others on one line */
	ck_assert_uint_eq(listed, n < STATS_THREADS_MAX ? n : STATS_THREADS_MAX);
	ck_assert_uint_eq(past, n > STATS_THREADS_MAX ? 3ull * (n - STATS_THREADS_MAX) : 0);
	ck_assert_msg(measured, "stats did not measure the pairs of the threads it kept");
	/* --per-thread: at most DURATION_THREAD_ROWS rows of a thread, then
	 * one for the other threads; together, every pair measured */
	unsigned long long rows = 0, pairs = 0, count;
	f = fopen(path_of("per-thread.txt"), "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f)) {
		const char *colon = strstr(line, "): ");
		if (strncmp(line, "  x (", 5) || !colon || sscanf(colon, "): %llu,", &count) != 1)
			continue;
		rows++;
		pairs += count;
	}
	fclose(f);
	ck_assert_uint_le(rows, DURATION_THREAD_ROWS + 1);
	ck_assert_uint_eq(pairs, n < PAIR_THREADS_MAX ? n : PAIR_THREADS_MAX);
	ck_assert_msg(reported || n <= PAIR_THREADS_MAX, "stats did not report the begins it left");
}
END_TEST

/* Threads that each open OPEN_DEPTH nested begins, more than
 * PAIR_OPEN_MAX in all, then close them, innermost first: the threads met
 * first keep theirs; the thread that reaches the bound keeps its newest
 * (its oldest let go, "past ... open in all"); later threads keep none
 * ("no room").  Every pair measured is a true one: PAIR_OPEN_MAX of them. */
#define PAIR_OPEN_MAX 262144 /* tools/tool.h */
#define OPEN_DEPTH 200u
#define OPEN_THREADS 2048u
START_TEST(open_begins_budget)
{
	int fd = new_file("open.ptlog");
	struct lt_craft c;
	uint64_t ts = BACK_BASE;
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "open");
	lt_craft_name(&c, 33, "x_begin");
	lt_craft_name(&c, 34, "x_end");
	for (int end = 0; end < 2; end++)
		for (uint32_t k = 1; k <= OPEN_THREADS; k++) {
			struct pt_log_ctx ctx = {(int32_t)k, (int32_t)k, 0x1000, ""};
			for (uint32_t j = 0; j < OPEN_DEPTH; j++)
				lt_craft_event(&c, &ctx, end ? 34 : 33, ts++, 0x10, 1, NULL, 0);
		}
	lt_craft_end(&c);
	close(fd);
	assert_bounded(run_pt("open.txt", "stats", path_of("open.ptlog"), NULL), "stats");
	uint32_t full = PAIR_OPEN_MAX / OPEN_DEPTH, rest = PAIR_OPEN_MAX % OPEN_DEPTH;
	char want_row[64], want_line[256], line[1024];
	snprintf(want_row, sizeof want_row, "  x: %u, ", PAIR_OPEN_MAX);
	snprintf(want_line, sizeof want_line,
	         "pairing: %u begin events left unpaired by the bounds of pairing: 0 nested deeper "
	         "than 256 on their thread, %u past %u open in all, %u with no room",
	         OPEN_DEPTH * OPEN_THREADS - PAIR_OPEN_MAX, OPEN_DEPTH - rest, PAIR_OPEN_MAX,
	         (OPEN_THREADS - full - 1) * OPEN_DEPTH);
	bool row = false, said = false;
	FILE *f = fopen(path_of("open.txt"), "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f)) {
		row |= strncmp(line, want_row, strlen(want_row)) == 0;
		said |= strncmp(line, want_line, strlen(want_line)) == 0;
	}
	fclose(f);
	ck_assert_msg(row, "stats did not measure exactly %u pairs", PAIR_OPEN_MAX);
	ck_assert_msg(said, "no line '%s'", want_line);
}
END_TEST

/* OVERFLOW events of no thread, each a gap of the loss timeline: stats
 * lists LOSS_GAPS_MAX and counts the rest on one line. */
#define LOSS_GAPS_MAX 1024 /* tools/stats.c */
START_TEST(loss_gaps_bounded)
{
	uint32_t n = 3 * LOSS_GAPS_MAX;
	int fd = new_file("gaps.ptlog");
	struct lt_craft c;
	const struct pt_log_ctx none = {0, 0, 0, ""};
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "gaps");
	for (uint32_t i = 0; i < n; i++)
		lt_craft_event(&c, &none, POSIX_TRACE_OVERFLOW, BACK_BASE + i, 0, 0, NULL, 0);
	lt_craft_end(&c);
	close(fd);
	run_pt("gaps.txt", "stats", path_of("gaps.ptlog"), NULL);
	char line[1024], want[96];
	unsigned gaps = 0;
	bool counted = false;
	snprintf(want, sizeof want, "  and %u more OVERFLOW or RESUME events past the first %u gaps",
	         n - LOSS_GAPS_MAX, LOSS_GAPS_MAX);
	FILE *f = fopen(path_of("gaps.txt"), "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f)) {
		gaps += strncmp(line, "  from ", 7) == 0;
		counted |= strncmp(line, want, strlen(want)) == 0;
	}
	fclose(f);
	ck_assert_uint_eq(gaps, LOSS_GAPS_MAX);
	ck_assert_msg(counted, "no line '%s'", want);
}
END_TEST

/* ---- item 11: percentiles ------------------------------------------------ */

/* Durations spread over six decades (100 ns to 100 ms), from a fixed
 * sequence. */
static uint64_t duration_of(uint32_t i)
{
	uint32_t x = i * 2654435761u;
	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	return (uint64_t)(100.0 * pow(10.0, 6.0 * (double)x / 4294967296.0));
}

/* n pairs of durations duration_of(0 .. n - 1), half on each of two
 * threads, one after the other. */
static void write_pairs_log(int fd, uint32_t n)
{
	struct lt_craft c;
	const struct pt_log_ctx a = {100, 100, 0x1000, "a"}, b = {100, 101, 0x2000, "b"};
	uint64_t ts = BACK_BASE;
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "pairs");
	lt_craft_name(&c, 33, "x_begin");
	lt_craft_name(&c, 34, "x_end");
	for (uint32_t i = 0; i < n; i++) {
		const struct pt_log_ctx *ctx = i < n / 2 ? &a : &b;
		uint64_t d = duration_of(i);
		lt_craft_event(&c, ctx, 33, ts, 0x10, 1, NULL, 0);
		lt_craft_event(&c, ctx, 34, ts + d, 0x10, 1, NULL, 0);
		ts += d + 50;
	}
	lt_craft_end(&c);
}

/* A duration as stats prints it ("12 ns", "1.234 us", ...) in ns. */
static double parse_duration(const char *s)
{
	double v;
	char unit[4];
	ck_assert_msg(sscanf(s, "%lf %3[a-z]", &v, unit) == 2, "duration '%s'", s);
	if (!strcmp(unit, "s"))
		return v * 1e9;
	if (!strcmp(unit, "ms"))
		return v * 1e6;
	if (!strcmp(unit, "us"))
		return v * 1e3;
	ck_assert_str_eq(unit, "ns");
	return v;
}

static void assert_close(const char *what, double got, uint64_t want, double within)
{
	ck_assert_msg(fabs(got - (double)want) <= within * (double)want,
	              "%s: stats says %.0f ns, exact %llu ns (%.3f %% off, %.3f %% allowed)", what,
	              got, (unsigned long long)want, 100 * fabs(got - (double)want) / (double)want,
	              100 * within);
}

START_TEST(quantiles)
{
	uint32_t n = size_of("PT_TOOLBOUNDS_PAIRS", 1000000);
	int fd = new_file("pairs.ptlog");
	write_pairs_log(fd, n);
	close(fd);
	assert_bounded(run_pt("pairs.txt", "stats", path_of("pairs.ptlog"), NULL), "stats");
	/* only now: the command's peak counts what this process held when it
	 * forked */
	uint64_t *d = malloc((size_t)n * sizeof *d);
	ck_assert_ptr_nonnull(d);
	for (uint32_t i = 0; i < n; i++)
		d[i] = duration_of(i);
	qsort(d, n, sizeof *d, by_value);
	char line[1024], min[32], p50[32], p90[32], p99[32], max[32];
	unsigned long long count = 0;
	FILE *f = fopen(path_of("pairs.txt"), "r");
	ck_assert_ptr_nonnull(f);
	bool row = false, slowest = false;
	while (fgets(line, sizeof line, f)) {
		if (sscanf(line, "  x: %llu, min %31[^,], p50 %31[^,], p90 %31[^,], p99 %31[^,], "
		                 "max %31[^\n]", &count, min, p50, p90, p99, max) == 6) {
			row = true;
			continue;
		}
		if (!row || slowest || strncmp(line, "    slowest:", 12))
			continue;
		/* the three longest, longest first */
		const char *p = line + 12;
		for (int k = 0; k < 3; k++) {
			char dur[32];
			ck_assert_int_eq(sscanf(p, " %31[^f]from", dur), 1);
			assert_close("slowest", parse_duration(dur), d[n - 1 - k], 0.0005);
			if (k < 2) {
				p = strchr(p, ';');
				ck_assert_ptr_nonnull(p);
				p++;
			}
		}
		slowest = true;
	}
	fclose(f);
	ck_assert_msg(row && slowest, "no row for x in stats' output");
	ck_assert_uint_eq(count, n);
	/* nearest rank: the smallest value with at least q of them at or
	 * below; the printed digits are worth 0.05 % */
	const unsigned permille[3] = {500, 900, 990};
	const char *got[3] = {p50, p90, p99}, *names[3] = {"p50", "p90", "p99"};
	assert_close("min", parse_duration(min), d[0], 0.0005);
	assert_close("max", parse_duration(max), d[n - 1], 0.0005);
	for (int i = 0; i < 3; i++) {
		uint64_t rank = ((uint64_t)n * permille[i] + 999) / 1000;
		assert_close(names[i], parse_duration(got[i]), d[rank - 1], 0.01);
	}
	free(d);
}
END_TEST

/* ---- CTF's compact header and narrow classes ----------------------------- */

#define WIDE_BASE 1700000000000000000ull

/* Events of four threads whose values sit on either side of each bound of
 * the narrow class and of the compact header's 32 bits of time. */
static void write_widths_log(int fd)
{
	struct lt_craft c;
	const struct pt_log_ctx narrow = {200, 201, 0x7f0000001000ull, "narrow"},
	                        edge = {200, 202, (1ull << 48) - 1, "edge"},
	                        wide = {200, 203, 1ull << 48, "wide"},
	                        top = {200, 204, UINT64_MAX, "top"};
	static unsigned char data[256];
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)(i * 7 + 1);
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "widths");
	lt_craft_name(&c, 33, "tick");
	lt_craft_name(&c, 34, "tock");
	const uint64_t gaps[] = {0, 1, (1ull << 32) - 1, 1ull << 32, (1ull << 32) + 1, 3,
	                         1000000000000000ull, 5};
	uint64_t t = WIDE_BASE;
	for (size_t i = 0; i < sizeof gaps / sizeof gaps[0]; i++) {
		t += gaps[i];
		lt_craft_event(&c, &narrow, i % 2 ? 34 : 33, t, 0x401000 + i, 0, data, 16);
	}
	const uint32_t lens[] = {0, 1, 255, 256, 200}; /* the log's max data size: 256 */
	const uint64_t pcs[] = {0, (1ull << 48) - 1, 1ull << 48, UINT64_MAX, 0x10};
	for (size_t i = 0; i < 5; i++) {
		lt_craft_event(&c, &edge, 33, t + 10 + i, pcs[i], 0, data, lens[i]);
		lt_craft_event(&c, &wide, 34, t + 10 + i, pcs[4 - i], 0, data, lens[4 - i]);
		lt_craft_event(&c, &top, 33, t + 10 + i, 0x10, 0, data, 8);
	}
	/* back by 255 (time_raised fits 8 bits), then by 256 more */
	lt_craft_event(&c, &narrow, 33, t - 255, 0x401000, 0, data, 16);
	lt_craft_event(&c, &narrow, 34, t - 511, 0x401000, 0, data, 16);
	lt_craft_event(&c, &narrow, 33, t + 1, 0x401000, 0, data, 16);
	lt_craft_end(&c);
}

/* n events of 16 bytes of one thread, 1 us apart. */
static void write_plain_log(int fd, uint32_t n)
{
	struct lt_craft c;
	const struct pt_log_ctx a = {300, 301, 0x7f0000002000ull, "plain"};
	unsigned char data[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "plain");
	lt_craft_name(&c, 33, "tick");
	for (uint32_t i = 0; i < n; i++)
		lt_craft_event(&c, &a, 33, WIDE_BASE + 1000ull * i, 0x401000, i > 0, data, sizeof data);
	lt_craft_end(&c);
}

static off_t file_size(const char *name)
{
	struct stat st;
	ck_assert_int_eq(stat(path_of(name), &st), 0);
	return st.st_size;
}

START_TEST(ctf_header_and_widths)
{
	int fd = new_file("widths.ptlog");
	write_widths_log(fd);
	close(fd);
	run_pt(NULL, "convert", path_of("widths.ptlog"), "--to", "ctf", "widths.ctf", NULL);
	if (have_babeltrace2()) {
		size_t raised;
		/* the 8 + 15 + 3 events, every one read */
		ck_assert_uint_eq(read_ctf("widths.ctf", NULL, 0, &raised), 26);
		ck_assert_uint_eq(raised, 2);
		if (system("command -v python3 >/dev/null 2>&1") == 0) {
			char root[PATH_MAX + 16], real[PATH_MAX], cmd[4 * PATH_MAX];
			snprintf(root, sizeof root, "%.*s/../../..", PATH_MAX - 1, pt_helpers_dir());
			ck_assert_ptr_nonnull(realpath(root, real));
			snprintf(cmd, sizeof cmd,
			         "cd '%s' && '%s' dump widths.ptlog --format json >w.jsonl 2>/dev/null && "
			         "babeltrace2 --clock-seconds widths.ctf >w.txt && "
			         "python3 '%s/tests/cli/compare.py' ctf w.jsonl w.txt >&2",
			         dir, posixtrace_path(), real);
			ck_assert_msg(system(cmd) == 0, "babeltrace2 does not list dump's events");
		} else {
			fprintf(stderr, "t_toolbounds: SKIP the CTF comparison with dump: no python3\n");
		}
	}
	const uint32_t n = 10000;
	fd = new_file("plain.ptlog");
	write_plain_log(fd, n);
	close(fd);
	run_pt(NULL, "convert", path_of("plain.ptlog"), "--to", "ctf", "plain.ctf", NULL);
	/* the packets' headers and contexts (64 bytes a 64 KiB packet) are
	 * in the bound's slack */
	off_t bytes = file_size("plain.ctf/stream_0");
	ck_assert_msg(bytes <= (off_t)n * CTF_EVENT_16_BYTES + 4096,
	              "%lld bytes of CTF for %u events of 16 bytes: %.1f each, bound %d",
	              (long long)bytes, n, (double)bytes / n, CTF_EVENT_16_BYTES);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("toolbounds");
	TCase *tc = pt_tcase_fixture(s, "item10", setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, times_go_back);
	tc = pt_tcase_fixture(s, "ctf", setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, ctf_header_and_widths);
	tc = pt_tcase_fixture(s, "item11", setup, teardown);
	tcase_set_timeout(tc, 240);
	tcase_add_test(tc, many_threads);
	tcase_add_test(tc, open_begins_budget);
	tcase_add_test(tc, loss_gaps_bounded);
	tcase_add_test(tc, quantiles);
	return pt_run_scratch(s, "pt_toolbounds");
}
