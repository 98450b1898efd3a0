/* SPDX-License-Identifier: MIT */
/*
 * Checks that logs and the command's input are treated as hostile: crafted
 * logs with every CRC right (tests/logtest.h writes them) cost the library
 * reader and every posixtrace command time in proportion to the data the
 * file holds (item 5: payloads that are holes, forged headers that would
 * make each resync scan CRC 16 MiB again); the command's tables and tracks
 * stay n log n against chosen keys and times (item 6); a log rewritten
 * while `convert --to ctf` reads it twice is damage, never a signal
 * (item 7); a clock resolution near 2^64 in a header is printed right
 * (item 8); names from a log are printed escaped (item 9).
 *
 * Time bounds are generous (the old code took more than 10 s where the
 * bound is a few seconds) and scaled by CK_TIMEOUT_MULTIPLIER.
 */
#include "logtest.h"

#include <sys/resource.h>

#define HOLE_BLOCK (4u << 20)
#define HOLE_BLOCKS 4000u

static const char *dir;

static void setup(void)
{
	dir = pt_scratch_dir("pt_logsec");
}

static void teardown(void) { pt_remove_tree(dir); }

static double scale(void)
{
	const char *m = getenv("CK_TIMEOUT_MULTIPLIER");
	double v = m ? atof(m) : 1;
	return v >= 1 ? v : 1;
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

/* Runs `posixtrace ARGS...` with stdout into dir/out (or /dev/null), files
 * it writes limited to 1 GiB; killed after limit seconds (times the
 * multiplier), which fails the test.  Returns the wait status. */
static int run_pt(double limit, const char *out, ...)
{
	char *argv[16] = {(char *)posixtrace_path()};
	va_list ap;
	va_start(ap, out);
	int argc = pt_append_args(argv, 1, 16, va_arg(ap, const char *), ap);
	va_end(ap);
	double start = now_s();
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit fs = {1u << 30, 1u << 30};
		int fd = open(out ? path_of(out) : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, 1) < 0 || setrlimit(RLIMIT_FSIZE, &fs) != 0 ||
		    chdir(dir) != 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int status = 0;
	limit *= scale();
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);
		if (r == pid)
			break;
		if (now_s() - start > limit) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			ck_abort_msg("posixtrace %s ... %s took more than %.0f s", argv[1],
			             argv[argc - 1], limit);
		}
		usleep(2000);
	}
	return status;
}

/* The command ended by itself with one of the exit statuses given (3: the
 * log is damaged, which crafted logs are). */
static void assert_exit(int status, const char *what)
{
	char how[96];
	pt_describe_status(status, how, sizeof how);
	ck_assert_msg(WIFEXITED(status) && (WEXITSTATUS(status) == 0 || WEXITSTATUS(status) == 3),
	              "%s: %s", what, how);
}

/* dump, stats and both converts of dir/name, each within limit seconds. */
static void every_command(const char *name, double limit)
{
	const char *log = path_of(name);
	char chrome[64], ctf[64];
	snprintf(chrome, sizeof chrome, "%s.json", name);
	snprintf(ctf, sizeof ctf, "%s.ctf", name);
	assert_exit(run_pt(limit, NULL, "dump", log, NULL), "dump");
	assert_exit(run_pt(limit, NULL, "stats", log, NULL), "stats");
	assert_exit(run_pt(limit, NULL, "convert", log, "--to", "chrome", chrome, NULL), "chrome");
	assert_exit(run_pt(limit, NULL, "convert", log, "--to", "ctf", ctf, NULL), "ctf");
}

static const struct pt_log_ctx ctx_a = {100, 100, 0x1000, "a"};

/* ---- item 5: holes and forged headers ------------------------------------ */

/* One event, HOLE_BLOCKS blocks of 4 MiB whose payloads are holes (their
 * CRC that of zeros: right, for whoever reads them), one event. */
static void write_hole_log(int fd)
{
	struct lt_craft c;
	uint32_t len = HOLE_BLOCK - PT_LOG_BLOCK_HDR;
	unsigned char *zeros = calloc(1, len);
	ck_assert_ptr_nonnull(zeros);
	uint32_t crc = lt_crc32c(zeros, len);
	free(zeros);
	lt_craft_begin(&c, fd, HOLE_BLOCK, 1, "holes");
	lt_craft_event(&c, &ctx_a, 33, 1000, 0x10, 0, "first", 5);
	lt_craft_seal(&c);
	for (uint32_t i = 0; i < HOLE_BLOCKS; i++)
		lt_craft_raw(&c, PT_LOG_EVENTS, c.seq++, 2000, len, crc, NULL, 0);
	lt_craft_event(&c, &ctx_a, 33, 3000, 0x10, 0, "last", 4);
	lt_craft_end(&c);
}

/*
 * Tiny valid blocks, each followed by forged headers 40 bytes apart, each
 * claiming a 4 MiB payload (in the file, CRC wrong) and a number far ahead:
 * every walk step met a forged header, and every scan could CRC 16 MiB of
 * them before reaching the next valid block.
 */
#define FORGED_UNITS 36000u
#define FORGED_PER_UNIT 4u
static uint32_t write_forged_log(int fd)
{
	struct lt_craft c;
	uint32_t claim = HOLE_BLOCK - PT_LOG_BLOCK_HDR, events = 0;
	lt_craft_begin(&c, fd, HOLE_BLOCK, 1, "forged");
	for (uint32_t u = 0; u < FORGED_UNITS; u++) {
		lt_craft_event(&c, &ctx_a, 33, 1000 + u, 0x10, 0, NULL, 0);
		lt_craft_seal(&c);
		events++;
		for (uint32_t k = 0; k < FORGED_PER_UNIT; k++) {
			uint64_t at = c.off;
			lt_craft_raw(&c, PT_LOG_EVENTS, 1ull << 40, 0, claim, 0x1234, NULL, 0);
			c.off = at + PT_LOG_BLOCK_HDR; /* the next header inside this payload */
		}
	}
	lt_craft_end(&c);
	return events;
}

/* Reads the log twice (rewind between) through the library; the number of
 * user events of each pass. */
static size_t read_twice(const char *name, size_t *damage)
{
	int fd = open(path_of(name), O_RDONLY | O_CLOEXEC);
	trace_id_t trid;
	ck_assert_int_ge(fd, 0);
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct lt_evlist l1 = lt_read(trid, LT_DATA_BUF);
	ck_assert_ok(posix_trace_rewind(trid));
	struct lt_evlist l2 = lt_read(trid, LT_DATA_BUF);
	ck_assert_uint_eq(l1.n, l2.n);
	size_t user = l1.n - lt_count_id(&l1, POSIX_TRACE_ERROR);
	*damage = lt_count_id(&l1, POSIX_TRACE_ERROR);
	lt_free(&l1);
	lt_free(&l2);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
	return user;
}

static int sparse_files(void)
{
	int fd = new_file("probe");
	ck_assert_int_eq(ftruncate(fd, 1 << 20), 0);
	off_t d = lseek(fd, 0, SEEK_DATA);
	close(fd);
	return d < 0 && errno == ENXIO;
}

START_TEST(item5_holes_library)
{
	if (!sparse_files())
		return; /* the file system has no holes to skip */
	int fd = new_file("holes.ptlog");
	write_hole_log(fd);
	close(fd);
	double t0 = now_s();
	size_t damage, user = read_twice("holes.ptlog", &damage);
	double t = now_s() - t0;
	ck_assert_uint_eq(user, 2);
	ck_assert_uint_ge(damage, 1);
	ck_assert_msg(t < 3 * scale(), "16 GiB of holes read twice in %.1f s", t);
}
END_TEST

START_TEST(item5_forged_library)
{
	int fd = new_file("forged.ptlog");
	uint32_t events = write_forged_log(fd);
	close(fd);
	double t0 = now_s();
	size_t damage, user = read_twice("forged.ptlog", &damage);
	double t = now_s() - t0;
	ck_assert_uint_eq(user, events);
	ck_assert_msg(t < 3 * scale(), "forged headers read twice in %.1f s", t);
}
END_TEST

START_TEST(item5_holes_commands)
{
	if (!sparse_files())
		return;
	int fd = new_file("holes.ptlog");
	write_hole_log(fd);
	close(fd);
	every_command("holes.ptlog", 5);
}
END_TEST

START_TEST(item5_forged_commands)
{
	int fd = new_file("forged.ptlog");
	write_forged_log(fd);
	close(fd);
	every_command("forged.ptlog", 5);
}
END_TEST

/* ---- item 6: chosen keys, times that go back, deep stacks ---------------- */

/* Threads whose keys all fell in one slot of the unkeyed hash (pid k*4096,
 * thread 0), each posting `rounds` events in turn. */
#define COLLIDE_THREADS 20000u
static void write_colliding_log(int fd, uint32_t threads, uint32_t rounds)
{
	struct lt_craft c;
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "collide");
	lt_craft_name(&c, 33, "tick");
	uint64_t ts = 1000;
	for (uint32_t r = 0; r < rounds; r++)
		for (uint32_t k = 1; k <= threads; k++) {
			struct pt_log_ctx ctx = {(int32_t)(k * 4096), 0, 0, ""};
			lt_craft_event(&c, &ctx, 33, ts++, 0x10, 0, NULL, 0);
		}
	lt_craft_end(&c);
}

START_TEST(item6_colliding_threads)
{
	int fd = new_file("collide.ptlog");
	write_colliding_log(fd, 2 * COLLIDE_THREADS, 12);
	close(fd);
	const char *log = path_of("collide.ptlog");
	assert_exit(run_pt(5, NULL, "stats", log, NULL), "stats");
	assert_exit(run_pt(5, NULL, "convert", log, "--to", "chrome", "c.json", NULL), "chrome");
	/* CTF writes a file per thread: fewer threads */
	fd = new_file("collide2.ptlog");
	write_colliding_log(fd, COLLIDE_THREADS, 12);
	close(fd);
	assert_exit(run_pt(8, NULL, "convert", path_of("collide2.ptlog"), "--to", "ctf", "c.ctf",
	                   NULL),
	            "ctf");
}
END_TEST

/* System events of no thread whose times go back at every event: each one
 * opens a track (Chrome) or a stream instance (CTF). */
static void write_backwards_log(int fd, uint32_t n)
{
	struct lt_craft c;
	const struct pt_log_ctx none = {0, 0, 0, ""};
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "backwards");
	for (uint32_t i = 0; i < n; i++)
		lt_craft_event(&c, &none, POSIX_TRACE_FLUSH_START, 1000000000ull - i, 0, 0, NULL, 0);
	lt_craft_end(&c);
}

START_TEST(item6_times_go_back)
{
	int fd = new_file("back.ptlog");
	write_backwards_log(fd, 200000);
	close(fd);
	assert_exit(run_pt(5, NULL, "convert", path_of("back.ptlog"), "--to", "chrome", "b.json",
	                   NULL),
	            "chrome");
	/* CTF writes a file per instance: fewer, many events each */
	fd = new_file("back2.ptlog");
	struct lt_craft c;
	const struct pt_log_ctx none = {0, 0, 0, ""};
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "backwards");
	for (uint32_t r = 0; r < 40; r++)
		for (uint32_t i = 0; i < 10000; i++)
			lt_craft_event(&c, &none, POSIX_TRACE_FLUSH_START, 1000000000ull - i + r * 2, 0,
			               0, NULL, 0);
	lt_craft_end(&c);
	close(fd);
	assert_exit(run_pt(8, NULL, "convert", path_of("back2.ptlog"), "--to", "ctf", "b.ctf", NULL),
	            "ctf");
}
END_TEST

/* One thread: many begins, then as many ends of another kind (none pairs);
 * then of the same kind (all pair, nested). */
START_TEST(item6_deep_begin_stack)
{
	int fd = new_file("nest.ptlog");
	struct lt_craft c;
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "nest");
	lt_craft_name(&c, 33, "x_begin");
	lt_craft_name(&c, 34, "y_end");
	for (uint32_t i = 0; i < 400000; i++)
		lt_craft_event(&c, &ctx_a, i < 200000 ? 33 : 34, 1000 + i, 0x10, 1, NULL, 0);
	lt_craft_end(&c);
	close(fd);
	assert_exit(run_pt(5, NULL, "convert", path_of("nest.ptlog"), "--to", "chrome", "n.json",
	                   NULL),
	            "chrome");
	assert_exit(run_pt(5, NULL, "stats", path_of("nest.ptlog"), NULL), "stats");
	/* and as many ends of the same kind: every pair nests in the one
	 * before; stats keeps the 256 innermost open begins of a thread
	 * (PAIR_DEPTH_MAX, tools/tool.h), measures their pairs and says how
	 * many older begins it let go */
	fd = new_file("pairs.ptlog");
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "pairs");
	lt_craft_name(&c, 33, "x_begin");
	lt_craft_name(&c, 34, "x_end");
	for (uint32_t i = 0; i < 400000; i++)
		lt_craft_event(&c, &ctx_a, i < 200000 ? 33 : 34, 1000 + i, 0x10, 1, NULL, 0);
	lt_craft_end(&c);
	close(fd);
	assert_exit(run_pt(5, "pairs.txt", "stats", path_of("pairs.ptlog"), NULL),
	            "stats of deep pairs");
	char line[512];
	int found = 0, said = 0;
	FILE *f = fopen(path_of("pairs.txt"), "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof line, f)) {
		found += strncmp(line, "  x: 256, ", 10) == 0;
		said += strncmp(line, "pairing: 199744 begin events left unpaired", 42) == 0;
	}
	fclose(f);
	ck_assert_msg(found == 1, "stats did not measure the 256 innermost pairs");
	ck_assert_msg(said == 1, "stats did not say how many begins it let go");
	assert_exit(run_pt(5, NULL, "stats", "--per-thread", path_of("pairs.ptlog"), NULL),
	            "stats --per-thread of deep pairs");
}
END_TEST

/* ---- item 7: a log rewritten between convert's two passes ----------------- */

/* Two logs of one size: the second has an OVERFLOW in its last block. */
static void write_flip_logs(unsigned char **a, unsigned char **b, size_t *len)
{
	for (int v = 0; v < 2; v++) {
		int fd = new_file(v ? "flip_b" : "flip_a");
		struct lt_craft c;
		lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "flip");
		for (uint32_t i = 0; i < 60000; i++)
			lt_craft_event(&c, &ctx_a, 33, 1000 + i, 0x10, 0, "0123456789abcdef", 16);
		const struct pt_log_ctx none = {0, 0, 0, ""};
		lt_craft_event(&c, &none, v ? POSIX_TRACE_OVERFLOW : POSIX_TRACE_FLUSH_START, 999999,
		               0, 0, NULL, 0);
		lt_craft_end(&c);
		size_t n;
		unsigned char *bytes = lt_file_bytes(fd, &n);
		*(v ? b : a) = bytes;
		*len = n;
		close(fd);
	}
}

START_TEST(item7_rewritten_while_converted)
{
	unsigned char *a = NULL, *b = NULL;
	size_t len = 0;
	write_flip_logs(&a, &b, &len);
	int fd = new_file("flip.ptlog");
	ck_assert_int_eq(pwrite(fd, a, len, 0), (ssize_t)len);
	size_t tail = 64u << 10, at = len - tail; /* the blocks that differ */
	pid_t writer = fork();
	ck_assert_int_ge(writer, 0);
	if (writer == 0) {
		for (int i = 0;; i++) {
			if (pwrite(fd, (i & 1) ? b + at : a + at, tail, (off_t)at) != (ssize_t)tail)
				_exit(1);
			usleep(700);
		}
	}
	pt_track(writer);
	for (int i = 0; i < 40; i++) {
		char out[32];
		snprintf(out, sizeof out, "flip%d.ctf", i);
		int status = run_pt(10, NULL, "convert", path_of("flip.ptlog"), "--to", "ctf", out,
		                    NULL);
		char how[96];
		pt_describe_status(status, how, sizeof how);
		ck_assert_msg(WIFEXITED(status), "try %d: %s", i, how);
	}
	pt_reap(writer);
	close(fd);
}
END_TEST

/* ---- item 8: a clock resolution near 2^64 ---------------------------------- */

START_TEST(item8_huge_clock_resolution)
{
	int fd = new_file("res.ptlog");
	struct lt_craft c;
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, UINT64_MAX - 5, "res");
	lt_craft_event(&c, &ctx_a, 33, 1000, 0x10, 0, NULL, 0);
	lt_craft_end(&c);
	close(fd);
	assert_exit(run_pt(5, "res.txt", "stats", path_of("res.ptlog"), NULL), "stats");
	size_t n;
	fd = open(path_of("res.txt"), O_RDONLY);
	char *text = (char *)lt_file_bytes(fd, &n);
	close(fd);
	text[n] = '\0';
	ck_assert_msg(strstr(text, "clock resolution: 18446744073709551610 ns\n"), "%s", text);
}
END_TEST

/* ---- item 9: names that are terminal commands ------------------------------ */

#define EVIL_NAME "\033]0;owned\007\n+0.000000000 0000000000.000000000 1 1/init FAKE"
#define EVIL_COMM "\033[2J\033[Hx"

/* No byte of the output is a control character other than newline, and
 * no line is the forged one. */
static void assert_clean(const char *name)
{
	size_t n;
	int fd = open(path_of(name), O_RDONLY);
	ck_assert_int_ge(fd, 0);
	unsigned char *text = lt_file_bytes(fd, &n);
	close(fd);
	ck_assert_uint_gt(n, 0);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(text[i] == '\n' || (text[i] >= 0x20 && text[i] < 0x7f),
		              "%s: byte 0x%02x at %zu", name, text[i], i);
	text[n] = '\0';
	ck_assert_msg(!strstr((char *)text, "\n+0.000000000 0000000000.000000000 1 1/init FAKE"),
	              "%s: a forged line", name);
}

START_TEST(item9_names_escaped)
{
	int fd = new_file("evil.ptlog");
	struct lt_craft c;
	struct pt_log_ctx evil = {1, 1, 0x1000, EVIL_COMM};
	lt_craft_begin(&c, fd, PT_LOG_MIN_BLOCK, 1, "\033[31mred");
	lt_craft_name(&c, 33, EVIL_NAME);
	lt_craft_event(&c, &evil, 33, 1000, 0x10, 0, "data\033", 5);
	lt_craft_event(&c, &evil, 33, 2000, 0x10, 0, "text", 4);
	lt_craft_end(&c);
	close(fd);
	const char *log = path_of("evil.ptlog");
	assert_exit(run_pt(5, "dump.txt", "dump", log, NULL), "dump");
	assert_clean("dump.txt");
	assert_exit(run_pt(5, "dump.json", "dump", log, "--format", "json", NULL), "dump json");
	assert_clean("dump.json");
	assert_exit(run_pt(5, "stats.txt", "stats", log, NULL), "stats");
	assert_clean("stats.txt");
	assert_exit(run_pt(5, NULL, "convert", log, "--to", "chrome", "evil.json", NULL), "chrome");
	assert_clean("evil.json");
	/* still readable: the escapes are there */
	size_t n;
	fd = open(path_of("dump.txt"), O_RDONLY);
	char *text = (char *)lt_file_bytes(fd, &n);
	close(fd);
	text[n] = '\0';
	ck_assert_msg(strstr(text, "1/\\x1b[2J\\x1b[Hx"), "%s", text);
	ck_assert_msg(strstr(text, "\\x1b]0;owned\\x07\\x0a+0.000000000"), "%s", text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("logsec");
	TCase *tc = pt_tcase_fixture(s, "item5", setup, teardown);
	tcase_add_test(tc, item5_holes_library);
	tcase_add_test(tc, item5_forged_library);
	tc = pt_tcase_fixture(s, "item5_commands", setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, item5_holes_commands);
	tcase_add_test(tc, item5_forged_commands);
	tc = pt_tcase_fixture(s, "item6", setup, teardown);
	tcase_set_timeout(tc, 40);
	tcase_add_test(tc, item6_colliding_threads);
	tcase_add_test(tc, item6_times_go_back);
	tcase_add_test(tc, item6_deep_begin_stack);
	tc = pt_tcase_fixture(s, "item7", setup, teardown);
	tcase_add_checked_fixture(tc, pt_children_setup, pt_kill_children);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, item7_rewritten_while_converted);
	tc = pt_tcase_fixture(s, "item8_9", setup, teardown);
	tcase_add_test(tc, item8_huge_clock_resolution);
	tcase_add_test(tc, item9_names_escaped);
	return pt_run_scratch(s, "pt_logsec");
}
