/* SPDX-License-Identifier: MIT */
/*
 * t_logformat: unit tests of the trace log module, format version 3
 * (src/log/logwrite.c, src/log/logread.c; docs/LOG-FORMAT.md), built standalone with
 * tests/unit/build.sh.
 *
 * Round trips of every field of an event (contexts, TIME records for large
 * and backward gaps, every data length, the truncated flag), names in place
 * and in NAMES blocks over a pipe, each log-full-policy (posix_trace_create,
 * DESCRIPTION: POSIX_TRACE_LOOP, POSIX_TRACE_UNTIL_FULL, POSIX_TRACE_APPEND),
 * clear (posix_trace_clear), finish (posix_trace_shutdown: "the trace log
 * shall be closed"), write errors kept, a writer killed and continued by
 * another, damage (a flipped byte in every position of every block: one
 * POSIX_TRACE_ERROR, the events of every other block), logs cut at every
 * 37th byte, a header that claims a huge ring over a sparse 1 TiB file,
 * forged block headers, file types and errors (posix_trace_create_withlog,
 * ERRORS; posix_trace_open, ERRORS).
 *
 * `t_logformat bench [DIR]` measures the writer against plain write()s and
 * the reader's pt_logr_next rate instead (no test asserts on time);
 * `t_logformat seeds DIR` writes the fuzzer's seed logs.
 */
#include "../harness.h"

#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* The reader itself, so that the tests see what it read (its header and
 * names) without functions in the library that only tests call. */
#include "../../src/log/logread.c"
#include "../../src/log/logblock.h"
#include "../../src/log/logio.h"
#include "../../src/log/logwimages.h"
#include "../../src/log/logwrite.h"

static uint32_t logr_nnames(const struct pt_logr *r) { return r->meta.nnames; }
static const struct pt_log_header *logr_header(const struct pt_logr *r) { return &r->hdr; }

#define MAXD 4096 /* largest data any test gives */

/* ---- files ---------------------------------------------------------------- */

static const char *tmp_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

/* A regular file with no name: nothing to remove, whatever happens. */
static int tmp_file(void)
{
	int fd = open(tmp_dir(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		char path[512];
		snprintf(path, sizeof path, "%s/t_logformat.XXXXXX", tmp_dir());
		fd = mkstemp(path);
		ck_assert_msg(fd >= 0, "mkstemp: %s", strerror(errno));
		unlink(path);
	}
	return fd;
}

/* The whole file, into malloc'd memory. */
static unsigned char *file_image(int fd, size_t *len)
{
	struct stat sb;
	ck_assert_int_eq(fstat(fd, &sb), 0);
	*len = (size_t)sb.st_size;
	unsigned char *img = malloc(*len ? *len : 1);
	ck_assert_ptr_nonnull(img);
	ck_assert_int_eq(pread(fd, img, *len, 0), (ssize_t)*len);
	return img;
}

/* A memory file holding len bytes of img. */
static int image_file(const unsigned char *img, size_t len)
{
	int fd = memfd_create("t_logformat", MFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, img, len), (ssize_t)len);
	return fd;
}

/* A pipe that holds 1 MiB, so that a test can write a log into it before
 * reading it (fails rather than blocks when it cannot have that). */
static void big_pipe(int p[2])
{
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_msg(fcntl(p[1], F_SETPIPE_SZ, 1 << 20) >= (1 << 20),
	              "a 1 MiB pipe: %s", strerror(errno));
}

/* The read end of a pipe that holds img (small enough for the pipe). */
static int image_pipe(const unsigned char *img, size_t len)
{
	int p[2];
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	if (len > 65536)
		ck_assert_int_ge(fcntl(p[1], F_SETPIPE_SZ, (int)len), (int)len);
	ck_assert_int_eq(write(p[1], img, len), (ssize_t)len);
	close(p[1]);
	return p[0];
}

/* ---- events --------------------------------------------------------------- */

struct xev {
	trace_event_id_t id;
	struct pt_log_ctx ctx;
	uint64_t ts, pc;
	uint32_t len;
	int truncated;
	uint32_t seed;
};

static const struct pt_log_ctx ctxs[] = {
    {0, 0, 0, ""}, /* system events */
    {1000, 1000, 0x7f0000001000ull, "main"},
    {1000, 1001, 0x7f0000002000ull, "worker-1"},
    {1000, 1002, 0x7f0000003000ull, "worker-2-longna"},
    {2000, 2000, 0x7f1000001000ull, "child"},
    {2000, 2000, 0x7f1000001000ull, "child-renamed"},
};
#define NCTX (sizeof ctxs / sizeof ctxs[0])

static void fill_data(unsigned char *buf, uint32_t seed, uint32_t len)
{
	uint32_t x = seed * 2654435761u + 1;
	for (uint32_t j = 0; j < len; j++) {
		x = x * 1103515245u + 12345u;
		buf[j] = (unsigned char)(x >> 16);
	}
}

/* Event i of a reproducible sequence; *ts advances (large gaps and steps
 * back included when wild). */
static struct xev gen(uint32_t i, uint32_t max_data, uint64_t *ts, int wild)
{
	struct xev e;
	memset(&e, 0, sizeof e);
	uint32_t r = i * 2654435761u;
	e.ctx = ctxs[(r >> 8) % NCTX];
	e.id = e.ctx.pid ? 33 + (r >> 12) % 6 : 1 + (r >> 12) % 7; /* ERROR (8) is damage */
	if (i % 5 == 0 && e.ctx.pid)
		e.id = POSIX_TRACE_UNNAMED_USER_EVENT;
	e.len = max_data ? (r >> 3) % (max_data + 1) : 0;
	e.truncated = i % 7 == 3;
	e.pc = 0x401000 + (uint64_t)i * 16;
	e.seed = i;
	uint64_t step = 100 + (r >> 20) % 1000;
	if (wild && i % 97 == 50)
		step = 5000000000ull + i; /* more than 32 bits of ns */
	*ts += step;
	if (wild && i % 89 == 20)
		*ts -= 3000; /* an older timestamp: kept in order, never reordered */
	e.ts = *ts;
	return e;
}

static int put(struct pt_logw *w, const struct xev *e)
{
	unsigned char buf[MAXD];
	fill_data(buf, e->seed, e->len);
	return pt_logw_event(w, &e->ctx, e->ts, e->id, buf, e->len, e->truncated, e->pc);
}

/* Events 0..n-1 of the sequence (not wild), from time ts, into w and ev. */
static void put_run(struct pt_logw *w, struct xev *ev, uint32_t n, uint32_t max_data, uint64_t ts)
{
	for (uint32_t i = 0; i < n; i++) {
		ev[i] = gen(i, max_data, &ts, 0);
		ck_assert_ok(put(w, &ev[i]));
	}
}

/* Fails the test with a message; unlike ck_assert, costs nothing when the
 * condition holds (Check's assertions write to a pipe each time, too slow
 * for loops over every byte of a log). */
#define require(cond, ...)                                                       \
	do {                                                                     \
		if (!(cond))                                                     \
			ck_abort_msg(__VA_ARGS__);                               \
	} while (0)

/* The next event must be e. */
static void expect(struct pt_logr *r, const struct xev *e, uint32_t idx)
{
	struct pt_log_event ev;
	unsigned char got[MAXD], want[MAXD];
	size_t n = 0;
	require(pt_logr_next(r, &ev, got, sizeof got, &n) == 1, "event %u missing", idx);
	require(ev.id == e->id, "event %u: id %u, expected %u", idx, ev.id, e->id);
	require(ev.ts_ns == e->ts, "event %u: ts %llu, expected %llu", idx,
	        (unsigned long long)ev.ts_ns, (unsigned long long)e->ts);
	require(memcmp(&ev.ctx, &e->ctx, sizeof ev.ctx) == 0, "event %u: context", idx);
	require(ev.pc == e->pc && ev.truncated == e->truncated, "event %u: pc/flag", idx);
	require(ev.data_len == e->len && n == e->len, "event %u: len %u/%zu, expected %u", idx,
	        ev.data_len, n, e->len);
	fill_data(want, e->seed, e->len);
	require(memcmp(got, want, e->len) == 0, "event %u: data", idx);
}

static void expect_error(struct pt_logr *r, uint64_t ts)
{
	struct pt_log_event ev;
	int data = 0;
	size_t n = 0;
	require(pt_logr_next(r, &ev, &data, sizeof data, &n) == 1, "no ERROR event");
	require(ev.id == POSIX_TRACE_ERROR, "id %u instead of POSIX_TRACE_ERROR", ev.id);
	require(data == EBADMSG && n == sizeof data, "ERROR data %d (%zu bytes)", data, n);
	require(ev.ctx.pid == 0, "ERROR with pid %d", ev.ctx.pid);
	require(ev.ts_ns == ts, "ERROR at %llu, expected %llu", (unsigned long long)ev.ts_ns,
	        (unsigned long long)ts);
}

static void expect_end(struct pt_logr *r)
{
	struct pt_log_event ev;
	char data[8];
	size_t n;
	require(pt_logr_next(r, &ev, data, sizeof data, &n) == 0,
	        "an event (id %u) after the expected end", ev.id);
	require(pt_logr_next(r, &ev, data, sizeof data, &n) == 0, "an event after the end");
}

static struct pt_logw_params params(int log_policy, uint64_t log_size, uint64_t max_data)
{
	struct pt_logw_params p;
	memset(&p, 0, sizeof p);
	strcpy(p.trace_name, "t_logformat");
	strcpy(p.genversion, "posixtrace test 2");
	p.create_sec = 1700000000;
	p.create_nsec = 123456789;
	p.clockres_ns = 1;
	p.stream_size = 1 << 20;
	p.max_data_size = max_data;
	p.log_size = log_size;
	p.stream_policy = POSIX_TRACE_FLUSH;
	p.log_policy = log_policy;
	p.inheritance = POSIX_TRACE_INHERITED;
	return p;
}

static const struct pt_logw_status status_x = {
    POSIX_TRACE_RUNNING, POSIX_TRACE_FULL, POSIX_TRACE_OVERRUN, POSIX_TRACE_NOT_FLUSHING, 0, 77, 0,
    {5, 6000, 2}};

/* The waits of status_x, read back (the header's, or an END block's). */
static void expect_waits_x(const struct pt_logr *r)
{
	struct pt_log_waits w;
	pt_logr_waits(r, &w);
	ck_assert_uint_eq(w.waited_events, 5);
	ck_assert_uint_eq(w.waited_ns, 6000);
	ck_assert_uint_eq(w.waited_lost, 2);
}

static const char names6[6][PT_LOG_NAME_SIZE] = {
    "alpha", "beta", "gamma:a-name-of-63-bytes......................................x",
    "delta", "epsilon", "zeta"};

static struct pt_logr *open_ok(int fd)
{
	struct pt_logr *r = NULL;
	ck_assert_ok(pt_logr_open(fd, &r));
	ck_assert_ptr_nonnull(r);
	return r;
}

static int closed_of(const struct pt_logr *r)
{
	int closed = -1;
	pt_logr_info(r, NULL, &closed, NULL);
	return closed;
}

static uint64_t damaged_of(const struct pt_logr *r)
{
	uint64_t d = 0;
	pt_logr_info(r, NULL, NULL, &d);
	return d;
}

/* ---- round trips ---------------------------------------------------------- */

/* Every field back as written, in order: contexts switching, TIME records
 * for gaps over 32 bits and for older timestamps, data of every length up
 * to max_data_size, the truncated flag, names in place. */
/* CRC-32C bit by bit, the definition: what pt_crc32c is checked against. */
static uint32_t crc32c_bitwise(uint32_t crc, const unsigned char *p, size_t len)
{
	crc = ~crc;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0x82f63b78u & (0u - (crc & 1)));
	}
	return ~crc;
}

/* pt_crc32c (SSE4.2's three streams and their combination where the CPU
 * has it, the table elsewhere) gives the definition's value: the check
 * value of "123456789", random data of every length to 1,100 bytes at every
 * alignment of 16 with random initial CRCs, and 1 MiB (the three streams of
 * 8 KiB parts, then of 256 bytes, then the rest). */
START_TEST(crc_is_the_definition)
{
	ck_assert_uint_eq(pt_crc32c(0, "123456789", 9), 0xe3069283u);
	size_t big = 1u << 20;
	unsigned char *buf = malloc(big + 16);
	ck_assert_ptr_nonnull(buf);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < big + 16; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		buf[i] = (unsigned char)x;
	}
	for (size_t len = 0; len <= 1100; len++) {
		for (size_t at = 0; at < 16; at += len < 300 ? 1 : 5) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			uint32_t init = (uint32_t)x;
			ck_assert_msg(pt_crc32c(init, buf + at, len) == crc32c_bitwise(init, buf + at, len),
			              "length %zu at %zu", len, at);
		}
	}
	ck_assert_uint_eq(pt_crc32c(0, buf + 3, big), crc32c_bitwise(0, buf + 3, big));
	free(buf);
}
END_TEST

/* The merge's time of a raw clock value (stage_time: the segment's line
 * without clamps inside a range found with the segment, the clamped
 * calibration outside it) is pt_log_cal_apply's of the segment
 * pt_log_cal_find gives, for calibrations of 1 to 4 points with times
 * near 0 and near UINT64_MAX and slopes from 0 to the largest, at raw
 * values around every point, both ends and the edges of the range where
 * the sum saturates, visited in random order (the segment is found again
 * as the value moves). */
static uint64_t xorshift(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

START_TEST(stage_time_is_the_calibration)
{
	uint64_t x = 0x243f6a8885a308d3ull;
#define RND() xorshift(&x)
	for (int round = 0; round < 4000; round++) {
		struct pt_log_calpoint cal[4];
		uint32_t n = 1 + (uint32_t)(RND() % 4);
		uint64_t raw = RND() % 4 == 0 ? RND() : RND() % 1000000;
		uint64_t real = RND() % 1000;
		if (RND() % 3 == 0)
			real = UINT64_MAX - RND() % 100000000;
		else if (RND() % 2)
			real = RND();
		for (uint32_t i = 0; i < n; i++) {
			cal[i].raw = raw;
			cal[i].real_ns = real;
			uint64_t step = RND() % 3 == 0 ? 1 + RND() % 3 : 1 + RND() % 1000000000;
			if (raw > UINT64_MAX - step) {
				n = i + 1;
				break;
			}
			raw += step;
			uint64_t up = RND() % 4 == 0 ? RND() : RND() % 2000000000;
			real = real > UINT64_MAX - up ? UINT64_MAX : real + up;
		}
		ck_assert(pt_log_cal_ok(cal, n));
		struct src s;
		memset(&s, 0, sizeof s);
		s.cal = cal;
		s.ncal = n;
		s.seg_lo = s.fast_lo = 1;
		s.seg_hi = s.fast_hi = 0;
		for (int k = 0; k < 64; k++) {
			uint64_t v;
			switch (RND() % 6) {
			case 0: v = cal[RND() % n].raw + RND() % 5 - 2; break;
			case 1: v = RND(); break;
			case 2: v = RND() % 3; break;
			case 3: v = UINT64_MAX - RND() % 3; break;
			case 4: v = s.fast_hi + RND() % 3 - 1; break;
			default: v = s.fast_lo + RND() % 3 - 1; break;
			}
			struct pt_log_calseg seg = pt_log_cal_find(cal, n, v);
			uint64_t want = pt_log_cal_apply(&seg, v), got = stage_time(&s, v);
			ck_assert_msg(got == want, "round %d, %u points, raw %llu: %llu, not %llu", round, n,
			              (unsigned long long)v, (unsigned long long)got, (unsigned long long)want);
		}
	}
#undef RND
}
END_TEST

START_TEST(roundtrip_every_field)
{
	enum { N = 20000, MAXDATA = 600 };
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, MAXDATA);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_ok(pt_logw_names(&w, 33, 6, names6));
	static struct xev ev[N];
	uint64_t ts = 1700000000000000000ull;
	for (uint32_t i = 0; i < N; i++) {
		ev[i] = gen(i, MAXDATA, &ts, 1);
		if (i < MAXDATA + 1)
			ev[i].len = i; /* every length */
		ck_assert_ok(put(&w, &ev[i]));
		if (i % 4999 == 0)
			ck_assert_ok(pt_logw_sync(&w, &status_x));
	}
	ck_assert_ok(pt_logw_finish(&w, &status_x));
	pt_logw_free(&w);

	struct pt_logr *r = open_ok(fd);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < N; i++)
			expect(r, &ev[i], i);
		expect_end(r);
		pt_logr_rewind(r);
	}
	uint32_t version;
	int closed;
	uint64_t damaged;
	pt_logr_info(r, &version, &closed, &damaged);
	ck_assert_uint_eq(version, PT_LOG_VERSION);
	ck_assert_uint_eq(version, 5);
	ck_assert_int_eq(closed, 1);
	ck_assert_uint_eq(damaged, 0);
	char name[PT_LOG_NAME_SIZE];
	ck_assert_uint_eq(logr_nnames(r), 6);
	for (uint32_t i = 0; i < 6; i++) {
		ck_assert_ok(pt_logr_name(r, 33 + i, name));
		ck_assert_str_eq(name, names6[i]);
	}
	ck_assert_err(pt_logr_name(r, 39, name), EINVAL);
	ck_assert_err(pt_logr_name(r, 32, name), EINVAL);
	ck_assert_err(pt_logr_name(r, 2, name), EINVAL);
	ck_assert_err(pt_logr_name(r, 5000, name), EINVAL);

	struct pt_logw_params q;
	pt_logr_params(r, &q);
	ck_assert_str_eq(q.trace_name, p.trace_name);
	ck_assert_str_eq(q.genversion, p.genversion);
	ck_assert(q.create_sec == p.create_sec && q.create_nsec == p.create_nsec);
	ck_assert(q.clockres_ns == p.clockres_ns && q.stream_size == p.stream_size);
	ck_assert(q.max_data_size == p.max_data_size && q.log_size == p.log_size);
	ck_assert(q.stream_policy == p.stream_policy && q.log_policy == p.log_policy);
	ck_assert(q.inheritance == p.inheritance);
	struct pt_log_status s;
	pt_logr_status(r, &s);
	ck_assert_int_eq(s.stream_status, POSIX_TRACE_RUNNING);
	ck_assert_int_eq(s.stream_full, POSIX_TRACE_FULL);
	ck_assert_int_eq(s.stream_overrun, POSIX_TRACE_OVERRUN);
	ck_assert_int_eq(s.log_full, POSIX_TRACE_NOT_FULL);
	ck_assert_uint_eq(s.lost_events, 77);
	expect_waits_x(r);
	const struct pt_log_header *h = logr_header(r);
	ck_assert_uint_eq(h->flags, PT_LOG_CLOSED | PT_LOG_SEEKABLE);
	ck_assert_uint_eq(h->waits.waited_events, 5);
	ck_assert_uint_eq(h->waits.waited_lost, 2);
	ck_assert_uint_eq(h->layout, PT_LOG_LINEAR);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* A data buffer shorter than the data: the first bytes, the full length. */
START_TEST(short_buffer_and_largest_data)
{
	enum { MAXDATA = 70000 }; /* needs 128 KiB blocks */
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_UNTIL_FULL, 64 << 20, MAXDATA);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static unsigned char big[MAXDATA];
	fill_data(big, 9, MAXDATA);
	uint32_t lens[] = {0, 1, 7, 8, 9, 4095, MAXDATA - 1, MAXDATA, MAXDATA, 3, MAXDATA};
	for (uint32_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
		ck_assert_ok(pt_logw_event(&w, &ctxs[1], 1000 + i, 40, big, lens[i], 0, i));
	ck_assert_err(pt_logw_event(&w, &ctxs[1], 2000, 40, big, MAXDATA + 1, 0, 0), EINVAL);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	struct pt_logr *r = open_ok(fd);
	ck_assert_uint_eq(logr_header(r)->block_size, 128u << 10);
	static unsigned char got[MAXDATA];
	for (uint32_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
		struct pt_log_event ev;
		size_t n;
		size_t room = i % 2 ? 5 : sizeof got;
		ck_assert_int_eq(pt_logr_next(r, &ev, got, room, &n), 1);
		ck_assert_uint_eq(ev.data_len, lens[i]);
		ck_assert_uint_eq(n, lens[i] < room ? lens[i] : room);
		ck_assert(memcmp(got, big, n) == 0);
		ck_assert_uint_eq(ev.pc, i);
	}
	expect_end(r);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* Invalid arguments and file types (posix_trace_create_withlog, ERRORS). */
START_TEST(begin_errors)
{
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	int fd = tmp_file();
	char path[64];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(ro, 0);
	ck_assert_err(pt_logw_begin(&w, &st, ro, &p), EBADF);
	ck_assert_err(pt_logw_event(&w, &ctxs[1], 1, 40, NULL, 0, 0, 0), EINVAL); /* not begun */
	ck_assert_err(pt_logw_begin(&w, &st, 12345, &p), EBADF);
	int dir = open(tmp_dir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_err(pt_logw_begin(&w, &st, dir, &p), EBADF);
	close(dir);
	int pp[2];
	ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
	p.log_policy = POSIX_TRACE_LOOP;
	ck_assert_err(pt_logw_begin(&w, &st, pp[1], &p), EINVAL);
	p.log_policy = POSIX_TRACE_UNTIL_FULL;
	ck_assert_err(pt_logw_begin(&w, &st, pp[1], &p), EINVAL);
	p.log_policy = 99;
	ck_assert_err(pt_logw_begin(&w, &st, fd, &p), EINVAL);
	p.log_policy = POSIX_TRACE_APPEND;
	p.max_data_size = PT_LOG_MAX_DATA + 1;
	ck_assert_err(pt_logw_begin(&w, &st, fd, &p), EINVAL);
	p.max_data_size = 64;
	/* A character device takes APPEND. */
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ck_assert_ok(pt_logw_begin(&w, &st, null, &p));
	ck_assert_ok(put(&w, &(struct xev){.id = 40, .ctx = ctxs[1], .ts = 5, .len = 3}));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	close(null);
	/* O_APPEND is cleared on a regular file: the header is rewritten in place. */
	int ap = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	ck_assert_ok(pt_logw_begin(&w, &st, ap, &p));
	ck_assert_int_eq(fcntl(ap, F_GETFL) & O_APPEND, 0);
	ck_assert_err(pt_logw_event(&w, &ctxs[1], 1, 0, NULL, 0, 0, 0), EINVAL);
	ck_assert_err(pt_logw_event(&w, &ctxs[1], 1, PT_REC_TIME, NULL, 0, 0, 0), EINVAL);
	ck_assert_err(pt_logw_event(&w, &ctxs[1], 1, 31, NULL, 0, 0, 0), EINVAL);
	ck_assert_err(pt_logw_event(&w, &ctxs[1], 1, 1024, NULL, 0, 0, 0), EINVAL);
	ck_assert_err(pt_logw_names(&w, 1000, 30, names6), EINVAL);
	ck_assert_err(pt_logw_names(&w, 8, 2, names6), EINVAL);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	ck_assert_err(pt_logw_finish(&w, NULL), EINVAL);
	pt_logw_free(&w);
	struct pt_logr *r = open_ok(ro);
	expect_end(r);
	ck_assert_int_eq(closed_of(r), 1);
	pt_logr_close(r);
	close(ap);
	close(ro);
	close(pp[0]);
	close(pp[1]);
	close(fd);
}
END_TEST

/* No room for the header: the error shows at begin. */
START_TEST(begin_no_space)
{
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	struct rlimit lim = {8192, 8192};
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int fd = tmp_file();
	ck_assert_err(pt_logw_begin(&w, &st, fd, &p), EFBIG);
	close(fd);
}
END_TEST

/* Errors of later writes are kept, the first one, and returned by sync and
 * finish: a pipe whose reader went away, a file that may not grow. */
START_TEST(write_errors_kept)
{
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	uint64_t ts = 1;
	int pp[2];
	ck_assert_int_eq(pipe2(pp, O_CLOEXEC), 0);
	ck_assert_ok(pt_logw_begin(&w, &st, pp[1], &p));
	close(pp[0]);
	for (uint32_t i = 0; i < 200000; i++) { /* several buffers */
		struct xev e = gen(i, 64, &ts, 0);
		ck_assert_ok(put(&w, &e));
	}
	ck_assert_err(pt_logw_sync(&w, NULL), EPIPE);
	ck_assert_int_eq(pt_logw_progress(&st)->error, EPIPE);
	ck_assert_err(pt_logw_finish(&w, NULL), EPIPE);
	pt_logw_free(&w);
	close(pp[1]);

	struct rlimit lim = {2 << 20, 2 << 20};
	signal(SIGXFSZ, SIG_IGN);
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
	int fd = tmp_file();
	static struct xev ev[200000];
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	for (uint32_t i = 0; i < 200000; i++) {
		ev[i] = gen(i, 64, &ts, 0);
		ck_assert_ok(put(&w, &ev[i]));
	}
	ck_assert_err(pt_logw_sync(&w, NULL), EFBIG);
	ck_assert_err(pt_logw_finish(&w, NULL), EFBIG);
	ck_assert_int_eq(pt_logw_progress(&st)->error, EFBIG);
	pt_logw_free(&w);
	/* What fitted reads back, in order. */
	struct pt_logr *r = open_ok(fd);
	struct pt_log_event e;
	unsigned char d[64];
	size_t n;
	uint32_t i = 0;
	while (pt_logr_next(r, &e, d, sizeof d, &n) == 1 && e.id != POSIX_TRACE_ERROR) {
		require(e.ts_ns == ev[i].ts, "event %u", i);
		i++;
	}
	ck_assert_uint_gt(i, 1000);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* Not logs (posix_trace_open, ERRORS: EINVAL). */
START_TEST(open_refuses)
{
	struct pt_logr *r = NULL;
	unsigned char junk[8192];
	memset(junk, 'x', sizeof junk);
	int fd = image_file(junk, sizeof junk);
	ck_assert_err(pt_logr_open(fd, &r), EINVAL);
	close(fd);
	fd = image_file(junk, 10);
	ck_assert_err(pt_logr_open(fd, &r), EINVAL);
	close(fd);
	fd = image_pipe(junk, 0);
	ck_assert_err(pt_logr_open(fd, &r), EINVAL);
	close(fd);
	int dn = open("/dev/zero", O_RDONLY | O_CLOEXEC); /* refused after its header */
	ck_assert_err(pt_logr_open(dn, &r), EINVAL);
	close(dn);

	/* A good header, then changed: version, byte order, CRC, sizes. */
	int log = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, log, &p));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	size_t len;
	unsigned char *img = file_image(log, &len);
	struct pt_log_header h;
	memcpy(&h, img, sizeof h);
	for (int change = 0; change < 8; change++) {
		struct pt_log_header x = h;
		switch (change) {
		case 0: x.version = 1; break;
		case 1: x.byte_order = __builtin_bswap32(PT_LOG_BOM); break;
		case 2: x.block_size = 3u << 16; break;
		case 3: x.block_size = 8u << 20; break;
		case 4: x.data_off = 8192; break;
		case 5: x.layout = 3; break;
		case 6: x.max_data_size = 1u << 22; break;
		case 7: x.log_policy = 7; break;
		}
		x.crc = pt_crc32c(0, &x, offsetof(struct pt_log_header, crc));
		memcpy(img, &x, sizeof x);
		fd = image_file(img, len);
		ck_assert_msg(pt_logr_open(fd, &r) == EINVAL, "change %d accepted", change);
		close(fd);
	}
	h.crc ^= 1;
	memcpy(img, &h, sizeof h);
	fd = image_file(img, len);
	ck_assert_err(pt_logr_open(fd, &r), EINVAL);
	close(fd);
	free(img);
	close(log);
}
END_TEST

/* Names over a pipe: NAMES blocks before the first event that uses them;
 * the same bytes saved to a file read the same. */
START_TEST(names_over_pipe)
{
	enum { N = 3000 };
	int p[2];
	big_pipe(p);
	static struct xev ev[N];
	uint64_t ts = 1;
	for (uint32_t i = 0; i < N; i++)
		ev[i] = gen(i, 40, &ts, 1);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct pt_logw w;
		struct pt_logw_state st;
		struct pt_logw_params pa = params(POSIX_TRACE_APPEND, 1 << 20, 40);
		close(p[0]);
		if (pt_logw_begin(&w, &st, p[1], &pa) != 0)
			_exit(1);
		for (uint32_t i = 0; i < N; i++) {
			if (i == 10)
				pt_logw_names(&w, 33, 3, names6);
			if (i == 2000) /* again, with three more */
				pt_logw_names(&w, 33, 6, names6);
			if (i % 1000 == 999)
				pt_logw_sync(&w, NULL);
			if (put(&w, &ev[i]) != 0)
				_exit(2);
		}
		_exit(pt_logw_finish(&w, &status_x) ? 3 : 0);
	}
	close(p[1]);
	unsigned char *all = malloc(4 << 20);
	size_t len = 0;
	ssize_t n;
	while ((n = read(p[0], all + len, (4 << 20) - len)) > 0)
		len += (size_t)n;
	close(p[0]);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer failed: %d", status);

	for (int mode = 0; mode < 2; mode++) {
		int fd = mode ? image_file(all, len) : image_pipe(all, len);
		struct pt_logr *r = open_ok(fd);
		const struct pt_log_header *h = logr_header(r);
		ck_assert_uint_eq(h->flags, 0);
		ck_assert_uint_eq(h->names_size, 0);
		ck_assert_uint_eq(h->data_off, PT_LOG_DATA_OFF_NOTABLE);
		ck_assert_uint_eq(logr_nnames(r), 6);
		char name[PT_LOG_NAME_SIZE];
		for (uint32_t i = 0; i < 6; i++) {
			ck_assert_ok(pt_logr_name(r, 33 + i, name));
			ck_assert_str_eq(name, names6[i]);
		}
		for (uint32_t i = 0; i < N; i++)
			expect(r, &ev[i], i);
		expect_end(r);
		ck_assert_int_eq(closed_of(r), 1);
		struct pt_log_status s;
		pt_logr_status(r, &s);
		ck_assert_uint_eq(s.lost_events, 77); /* from the END block */
		expect_waits_x(r);
		pt_logr_close(r);
		close(fd);
	}
	/* The first NAMES block comes before the first KEEPER block that
	 * holds event 10, after the events before it (events given outside
	 * a drain: KEEPER blocks). */
	const struct pt_log_block *b = (const void *)(all + PT_LOG_DATA_OFF_NOTABLE);
	ck_assert_uint_eq(b->type, PT_LOG_KEEPER);
	ck_assert_uint_eq(b->nrecords, 10);
	size_t next = pt_log_pad8(PT_LOG_BLOCK_HDR + b->payload_len);
	b = (const void *)((const unsigned char *)b + next);
	ck_assert_uint_eq(b->type, PT_LOG_NAMES);
	ck_assert_uint_eq(b->nrecords, 3);
	free(all);
}
END_TEST

/* ---- policies ------------------------------------------------------------- */

/* LOOP: a ring of slots (2 x log-max-size in blocks and 17, LOG-FORMAT.md,
 * Limits); after it wraps, the newest blocks in order, at least
 * log-max-size bytes of events, and log full and overrun are set. */
START_TEST(loop_ring_keeps_newest)
{
	enum { N = 120000, SLOTS = 4 };
	const uint64_t RING = pt_log_ring_slots(SLOTS * (64u << 10), 64u << 10);
	ck_assert_uint_eq(RING, 2 * SLOTS + 17);
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_LOOP, SLOTS * (64 << 10), 16);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_ok(pt_logw_names(&w, 33, 2, names6));
	static struct xev ev[N];
	uint64_t ts = 1000;
	for (uint32_t i = 0; i < N; i++) {
		ev[i] = gen(i, 16, &ts, 0);
		ck_assert_ok(put(&w, &ev[i]));
		if (i == 100) {
			ck_assert_ok(pt_logw_sync(&w, NULL)); /* a short block */
			ck_assert_int_eq(pt_logw_progress(&st)->status.log_overrun, 0);
		}
	}
	ck_assert_ok(pt_logw_finish(&w, &status_x));
	ck_assert(pt_logw_progress(&st)->seq > RING);
	pt_logw_free(&w);
	struct stat sb;
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_uint_le((uint64_t)sb.st_size, PT_LOG_DATA_OFF + RING * (64u << 10));

	struct pt_logr *r = open_ok(fd);
	ck_assert_uint_eq(logr_header(r)->layout, PT_LOG_RING);
	ck_assert_uint_eq(logr_header(r)->ring_slots, RING);
	/* The events are a suffix of what was written, in order. */
	struct pt_log_event e;
	unsigned char data[64];
	size_t n;
	ck_assert_int_eq(pt_logr_next(r, &e, data, sizeof data, &n), 1);
	uint32_t first = 0;
	while (first < N && ev[first].ts != e.ts_ns)
		first++;
	ck_assert_uint_lt(first, N);
	ck_assert_uint_gt(first, N / 2);
	ck_assert_uint_ge((uint64_t)(N - first) * pt_log_event_bytes(16), SLOTS * (64u << 10));
	pt_logr_rewind(r);
	for (uint32_t i = first; i < N; i++)
		expect(r, &ev[i], i);
	expect_end(r);
	ck_assert_int_eq(closed_of(r), 1);
	struct pt_log_status s;
	pt_logr_status(r, &s);
	ck_assert_int_eq(s.log_full, POSIX_TRACE_FULL);
	ck_assert_int_eq(s.log_overrun, POSIX_TRACE_OVERRUN);
	char name[PT_LOG_NAME_SIZE];
	ck_assert_ok(pt_logr_name(r, 34, name));
	ck_assert_str_eq(name, "beta");
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* UNTIL_FULL: the log stops when its events reach log-max-size (16 bytes
 * and the data rounded up to 8 each, the STOP's included) with
 * POSIX_TRACE_STOP (data 1, the time of the event that did not fit, pid 0)
 * and drops the rest; its data region stays within 2 x log-max-size and
 * 16 blocks. */
START_TEST(until_full_stops)
{
	enum { N = 20000, LOGSIZE = 100 << 10 };
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_UNTIL_FULL, LOGSIZE, 100);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static struct xev ev[N];
	uint64_t ts = 5;
	uint32_t full_at = N;
	for (uint32_t i = 0; i < N; i++) {
		ev[i] = gen(i, 100, &ts, 1);
		int rc = put(&w, &ev[i]);
		if (rc == PT_LOGW_FULL && full_at == N)
			full_at = i;
		ck_assert_int_eq(rc, full_at == N ? 0 : PT_LOGW_FULL);
		if (i % 501 == 0)
			ck_assert_ok(pt_logw_sync(&w, NULL));
	}
	ck_assert_uint_lt(full_at, N);
	ck_assert_int_eq(pt_logw_progress(&st)->log_full, 1);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	struct stat sb;
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_uint_le((uint64_t)sb.st_size - PT_LOG_DATA_OFF,
	                  pt_log_full_region(LOGSIZE, 64u << 10));
	uint64_t kept_bytes = pt_log_event_bytes(sizeof(int)); /* the STOP */
	for (uint32_t i = 0; i < full_at; i++)
		kept_bytes += pt_log_event_bytes(ev[i].len);
	ck_assert_uint_le(kept_bytes, LOGSIZE);
	ck_assert_uint_gt(kept_bytes + pt_log_event_bytes(ev[full_at].len), LOGSIZE);

	struct pt_logr *r = open_ok(fd);
	for (uint32_t i = 0; i < full_at; i++)
		expect(r, &ev[i], i);
	struct pt_log_event e;
	int data = 0;
	size_t n;
	ck_assert_int_eq(pt_logr_next(r, &e, &data, sizeof data, &n), 1);
	ck_assert_uint_eq(e.id, POSIX_TRACE_STOP);
	ck_assert_int_eq(data, 1);
	/* The stop belongs to the writer whose event found no room. */
	ck_assert_int_eq(memcmp(&e.ctx, &ev[full_at].ctx, sizeof e.ctx), 0);
	ck_assert_uint_eq(e.ts_ns, ev[full_at].ts);
	expect_end(r);
	struct pt_log_status s;
	pt_logr_status(r, &s);
	ck_assert_int_eq(s.log_full, POSIX_TRACE_FULL);
	ck_assert_int_eq(s.log_overrun, POSIX_TRACE_OVERRUN);
	ck_assert_uint_eq(s.log_dropped, N - full_at);
	ck_assert_int_eq(closed_of(r), 1);
	pt_logr_close(r);
	close(fd);

	/* A log-max-size too small for one event besides the STOP (24
	 * bytes; the smallest event takes 16), which the writer takes
	 * (posix_trace_attr_setlogsize does not): STOP and END only. */
	fd = tmp_file();
	p.log_size = 24 + 15;
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_int_eq(put(&w, &ev[0]), PT_LOGW_FULL);
	ck_assert_int_eq(put(&w, &ev[1]), PT_LOGW_FULL);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_uint_le((uint64_t)sb.st_size, PT_LOG_DATA_OFF + 256); /* END: status and waits */
	r = open_ok(fd);
	ck_assert_int_eq(pt_logr_next(r, &e, &data, sizeof data, &n), 1);
	ck_assert_uint_eq(e.id, POSIX_TRACE_STOP);
	ck_assert_uint_eq(e.ts_ns, ev[0].ts);
	expect_end(r);
	pt_logr_status(r, &s);
	ck_assert_uint_eq(s.log_dropped, 2);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* APPEND: log-max-size does not limit the log. */
START_TEST(append_grows)
{
	enum { N = 30000 };
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 64 << 10, 32);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static struct xev ev[N];
	put_run(&w, ev, N, 32, 5);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	struct stat sb;
	ck_assert_int_eq(fstat(fd, &sb), 0);
	ck_assert_uint_gt((uint64_t)sb.st_size, PT_LOG_DATA_OFF + 10 * (64u << 10));
	struct pt_logr *r = open_ok(fd);
	for (uint32_t i = 0; i < N; i++)
		expect(r, &ev[i], i);
	expect_end(r);
	struct pt_log_status s;
	pt_logr_status(r, &s);
	ck_assert_int_eq(s.log_full, POSIX_TRACE_NOT_FULL);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* ---- clear, sync, resume -------------------------------------------------- */

/* posix_trace_clear: a seekable log loses its events (not its names); an
 * unseekable one keeps what was written and drops what was not. */
START_TEST(clear_seekable_and_pipe)
{
	enum { N = 2000 };
	static struct xev ev[N];
	uint64_t ts = 5;
	for (uint32_t i = 0; i < N; i++)
		ev[i] = gen(i, 24, &ts, 0);
	struct pt_logw w;
	struct pt_logw_state st;

	int fd = tmp_file();
	struct pt_logw_params p = params(POSIX_TRACE_UNTIL_FULL, 16 << 10, 24);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_ok(pt_logw_names(&w, 33, 2, names6));
	uint32_t i = 0;
	while (put(&w, &ev[i]) == 0) /* until full */
		i++;
	ck_assert_ok(pt_logw_clear(&w));
	ck_assert_int_eq(pt_logw_progress(&st)->log_full, 0);
	ck_assert_uint_eq(pt_logw_progress(&st)->seq, 0);
	for (i = 1000; i < 1100; i++)
		ck_assert_ok(put(&w, &ev[i]));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	struct pt_logr *r = open_ok(fd);
	for (i = 1000; i < 1100; i++)
		expect(r, &ev[i], i);
	expect_end(r);
	ck_assert_uint_eq(logr_nnames(r), 2);
	struct pt_log_status s;
	pt_logr_status(r, &s);
	ck_assert_int_eq(s.log_full, POSIX_TRACE_NOT_FULL);
	pt_logr_close(r);
	close(fd);

	int pp[2];
	big_pipe(pp);
	p.log_policy = POSIX_TRACE_APPEND;
	ck_assert_ok(pt_logw_begin(&w, &st, pp[1], &p));
	for (i = 0; i < 100; i++)
		ck_assert_ok(put(&w, &ev[i]));
	ck_assert_ok(pt_logw_sync(&w, NULL));
	for (i = 100; i < 200; i++)
		ck_assert_ok(put(&w, &ev[i])); /* not written yet: dropped */
	ck_assert_ok(pt_logw_names(&w, 33, 2, names6)); /* not written yet: kept */
	ck_assert_ok(pt_logw_clear(&w));
	for (i = 200; i < 300; i++)
		ck_assert_ok(put(&w, &ev[i]));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	close(pp[1]);
	r = open_ok(pp[0]);
	for (i = 0; i < 100; i++)
		expect(r, &ev[i], i);
	for (i = 200; i < 300; i++)
		expect(r, &ev[i], i);
	expect_end(r);
	ck_assert_uint_eq(logr_nnames(r), 2);
	pt_logr_close(r);
	close(pp[0]);
}
END_TEST

/* A writer that stops without finishing (killed): the log is readable up to
 * its last sync with the status of that sync, and not closed. */
START_TEST(sync_without_finish)
{
	enum { N = 5000 };
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 48);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static struct xev ev[N];
	uint64_t ts = 5;
	for (uint32_t i = 0; i < N; i++) {
		ev[i] = gen(i, 48, &ts, 1);
		ck_assert_ok(put(&w, &ev[i]));
		if (i == 3999)
			ck_assert_ok(pt_logw_sync(&w, &status_x));
	}
	pt_logw_free(&w); /* the last 1000 events were never written */
	struct pt_logr *r = open_ok(fd);
	for (uint32_t i = 0; i < 4000; i++)
		expect(r, &ev[i], i);
	expect_end(r);
	ck_assert_int_eq(closed_of(r), 0);
	ck_assert_uint_eq(damaged_of(r), 0);
	struct pt_log_status s;
	pt_logr_status(r, &s);
	ck_assert_uint_eq(s.lost_events, 77);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* A second writer continues from a copy of the state: the log goes on with
 * the next sequence number; what the first had not written is gone. */
START_TEST(resume_from_copied_state)
{
	enum { N = 30000 };
	static struct xev ev[N];
	uint64_t ts = 5;
	for (uint32_t i = 0; i < N; i++)
		ev[i] = gen(i, 20, &ts, 0);
	for (int kind = 0; kind < 2; kind++) { /* APPEND, LOOP */
		int fd = tmp_file();
		struct pt_logw w1, w2;
		struct pt_logw_state st, copy;
		struct pt_logw_params p =
		    params(kind ? POSIX_TRACE_LOOP : POSIX_TRACE_APPEND, 64 << 20, 20);
		ck_assert_ok(pt_logw_begin(&w1, &st, fd, &p));
		ck_assert_ok(pt_logw_names(&w1, 33, 2, names6));
		for (uint32_t i = 0; i < 10000; i++)
			ck_assert_ok(put(&w1, &ev[i]));
		ck_assert_ok(pt_logw_sync(&w1, NULL));
		uint64_t seq = pt_logw_progress(&st)->seq;
		for (uint32_t i = 10000; i < 12000; i++)
			ck_assert_ok(put(&w1, &ev[i]));
		memcpy(&copy, &st, sizeof copy);
		/* What a killed writer leaves after its last block: half a
		 * block, not recorded in the state. */
		unsigned char junk[3000];
		memset(junk, 0x5a, sizeof junk);
		if (!kind)
			ck_assert_int_eq(pwrite(fd, junk, sizeof junk,
			                        (off_t)pt_logw_progress(&copy)->write_off),
			                 (ssize_t)sizeof junk);
		pt_logw_free(&w1);

		ck_assert_ok(pt_logw_resume(&w2, &copy, fd));
		ck_assert_ok(pt_logw_names(&w2, 33, 3, names6));
		for (uint32_t i = 20000; i < N; i++)
			ck_assert_ok(put(&w2, &ev[i]));
		ck_assert_ok(pt_logw_finish(&w2, NULL));
		ck_assert_uint_gt(pt_logw_progress(&copy)->seq, seq);
		pt_logw_free(&w2);
		ck_assert_err(pt_logw_resume(&w2, &copy, fd), EINVAL); /* finished */

		struct pt_logr *r = open_ok(fd);
		for (uint32_t i = 0; i < 10000; i++)
			expect(r, &ev[i], i);
		for (uint32_t i = 20000; i < N; i++)
			expect(r, &ev[i], i);
		expect_end(r);
		ck_assert_int_eq(closed_of(r), 1);
		ck_assert_uint_eq(damaged_of(r), 0);
		ck_assert_uint_eq(logr_nnames(r), 3);
		pt_logr_close(r);
		close(fd);
	}
}
END_TEST

struct shared_run {
	struct pt_logw_state st;
	volatile uint32_t synced; /* events the child has synced */
};

/* A real writer process killed with SIGKILL at any moment, its state in
 * shared memory; a new writer continues.  The log holds a prefix of the
 * first writer's events, then the second's, no damage, no duplicate. */
START_TEST(resume_after_sigkill)
{
	enum { N1 = 400000, N2 = 1000 };
	struct shared_run *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
	                             MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
	int fd = tmp_file();
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		struct pt_logw w;
		struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 24);
		if (pt_logw_begin(&w, &sh->st, fd, &p) != 0)
			_exit(1);
		uint64_t ts = 5;
		for (uint32_t i = 0; i < N1; i++) {
			struct xev e = gen(i, 24, &ts, 0);
			put(&w, &e);
			if (i % 5000 == 4999) {
				pt_logw_sync(&w, NULL);
				sh->synced = i + 1;
			}
		}
		for (;;)
			pause();
	}
	for (int t = 0; t < 10000 && sh->synced < 50000; t++)
		pt_sleep_ms(1);
	struct pt_logw_progress pr; /* read while the writer runs */
	pt_logw_read_progress(&sh->st, &pr);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ck_assert_uint_gt(pr.seq, 0);
	ck_assert_uint_ge(sh->synced, 50000);

	struct pt_logw w;
	ck_assert_ok(pt_logw_resume(&w, &sh->st, fd));
	uint64_t ts = 1ull << 62;
	struct xev tail[N2];
	for (uint32_t i = 0; i < N2; i++) {
		tail[i] = gen(i, 24, &ts, 0);
		tail[i].id = 40;
		ck_assert_ok(put(&w, &tail[i]));
	}
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);

	struct pt_logr *r = open_ok(fd);
	uint64_t gts = 5;
	uint32_t i = 0;
	struct pt_log_event e;
	unsigned char data[64];
	size_t n;
	for (;;) {
		ck_assert_int_eq(pt_logr_next(r, &e, data, sizeof data, &n), 1);
		ck_assert_uint_ne(e.id, POSIX_TRACE_ERROR);
		if (e.id == 40 && e.ts_ns >= (1ull << 62))
			break;
		struct xev x = gen(i, 24, &gts, 0);
		ck_assert_msg(e.ts_ns == x.ts && e.id == x.id && n == x.len,
		              "event %u of the killed writer", i);
		i++;
	}
	ck_assert_uint_ge(i, 50000);
	pt_logr_rewind(r);
	for (uint32_t k = 0; k < i; k++)
		ck_assert_int_eq(pt_logr_next(r, &e, data, sizeof data, &n), 1);
	for (uint32_t k = 0; k < N2; k++)
		expect(r, &tail[k], k);
	expect_end(r);
	ck_assert_int_eq(closed_of(r), 1);
	pt_logr_close(r);
	close(fd);
	munmap(sh, sizeof *sh);
}
END_TEST

/* A killed writer on a pipe leaves part of a block; the next writer's
 * blocks follow it.  The reader skips the part without an error. */
START_TEST(pipe_torn_block)
{
	static struct xev ev[3000];
	uint64_t ts = 5;
	for (uint32_t i = 0; i < 3000; i++)
		ev[i] = gen(i, 30, &ts, 0);
	int p[2];
	big_pipe(p);
	struct pt_logw w;
	struct pt_logw_state st, copy;
	struct pt_logw_params pa = params(POSIX_TRACE_APPEND, 1 << 20, 30);
	ck_assert_ok(pt_logw_begin(&w, &st, p[1], &pa));
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_ok(put(&w, &ev[i]));
	ck_assert_ok(pt_logw_sync(&w, NULL));
	memcpy(&copy, &st, sizeof copy);
	/* The first writer's next block, cut in the middle of its write. */
	int tp[2];
	big_pipe(tp);
	struct pt_logw_state st2 = st;
	struct pt_logw wt;
	ck_assert_ok(pt_logw_resume(&wt, &st2, tp[1]));
	for (uint32_t i = 1000; i < 2000; i++)
		ck_assert_ok(put(&wt, &ev[i]));
	ck_assert_ok(pt_logw_sync(&wt, NULL));
	pt_logw_free(&wt);
	static unsigned char torn[1 << 20];
	ssize_t got = read(tp[0], torn, sizeof torn);
	ck_assert_int_gt(got, 10000);
	/* A write cut by SIGKILL leaves a multiple of 8 bytes: the writer
	 * writes whole blocks padded to 8, and a pipe takes a write's first
	 * len % PAGE_SIZE bytes, then whole pages.  Blocks start at
	 * multiples of 8 (LOG-FORMAT.md, Overview: Alignment). */
	size_t half = ((size_t)got / 2) & ~(size_t)7;
	ck_assert_int_eq(write(p[1], torn, half), (ssize_t)half);
	close(tp[0]);
	close(tp[1]);
	pt_logw_free(&w);

	ck_assert_ok(pt_logw_resume(&w, &copy, p[1]));
	for (uint32_t i = 2000; i < 3000; i++)
		ck_assert_ok(put(&w, &ev[i]));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	close(p[1]);
	struct pt_logr *r = open_ok(p[0]);
	for (uint32_t i = 0; i < 1000; i++)
		expect(r, &ev[i], i);
	for (uint32_t i = 2000; i < 3000; i++)
		expect(r, &ev[i], i);
	expect_end(r);
	ck_assert_uint_eq(damaged_of(r), 0);
	ck_assert_int_eq(closed_of(r), 1);
	pt_logr_close(r);
	close(p[0]);
}
END_TEST

/* ---- damage --------------------------------------------------------------- */

struct tblock {
	size_t off, end;       /* bytes [off, end) of the header and payload */
	uint32_t type, nev;    /* nev: event records of a KEEPER block */
	uint64_t drain;        /* a KEEPER block's drain number */
};

/* The blocks of a linear log image, as laid out (the test's own walk).
 * The writer is given events outside any drain (no pt_logw_begin_drain):
 * they are in KEEPER blocks of drain 0, each read on its own and merged
 * with no other, so that a block's events are contiguous in read order
 * and a damaged block's ERROR comes where it was (LOG-FORMAT.md, Drains). */
static size_t blocks_of(const unsigned char *img, size_t len, size_t data_off, struct tblock *out,
                        size_t max)
{
	size_t n = 0, off = data_off;
	while (off + PT_LOG_BLOCK_HDR <= len && n < max) {
		struct pt_log_block b;
		memcpy(&b, img + off, sizeof b);
		ck_assert_uint_eq(b.magic, PT_LOG_BLOCK_MAGIC);
		ck_assert_uint_eq(b.seq, n);
		out[n].off = off;
		out[n].end = off + PT_LOG_BLOCK_HDR + b.payload_len;
		out[n].type = b.type;
		out[n].nev = b.type == PT_LOG_KEEPER ? b.nrecords : 0;
		out[n].drain = 0;
		ck_assert(b.type != PT_LOG_EVENTS && b.type != PT_LOG_STAGES);
		if (b.type == PT_LOG_KEEPER) {
			ck_assert_uint_ge(b.payload_len, PT_LOG_KEEPER_PREFIX);
			memcpy(&out[n].drain, img + off + PT_LOG_BLOCK_HDR, sizeof out[n].drain);
			ck_assert_uint_eq(out[n].drain, 0);
		}
		off += pt_log_pad8(PT_LOG_BLOCK_HDR + b.payload_len);
		n++;
	}
	ck_assert_uint_eq(off, len);
	return n;
}

enum { SMALL_N = 160 };
static struct xev small_ev[SMALL_N];

/* A small log of many short blocks (a sync every 11 events); seekable or
 * written to a pipe. */
static unsigned char *small_log(int seekable, size_t *len)
{
	uint64_t ts = 77;
	for (uint32_t i = 0; i < SMALL_N; i++)
		small_ev[i] = gen(i, 40, &ts, 1);
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 40);
	int fd, pp[2] = {-1, -1};
	if (seekable) {
		fd = tmp_file();
	} else {
		big_pipe(pp);
		fd = pp[1];
	}
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	for (uint32_t i = 0; i < SMALL_N; i++) {
		if (i == 50)
			ck_assert_ok(pt_logw_names(&w, 33, 6, names6));
		ck_assert_ok(put(&w, &small_ev[i]));
		if (i % 11 == 10)
			ck_assert_ok(pt_logw_sync(&w, NULL));
	}
	ck_assert_ok(pt_logw_finish(&w, &status_x));
	pt_logw_free(&w);
	unsigned char *img;
	if (seekable) {
		img = file_image(fd, len);
	} else {
		close(pp[1]);
		img = malloc(1 << 20);
		*len = 0;
		ssize_t n;
		while ((n = read(pp[0], img + *len, (1 << 20) - *len)) > 0)
			*len += (size_t)n;
		fd = pp[0];
	}
	close(fd);
	return img;
}

/* Reads the whole log: the events must be small_ev minus those of block
 * `lost` (SIZE_MAX: none), with one ERROR in their place when `error`:
 * damage after a drain's last block and before the next drain's first is
 * reported between the two drains, with the time of the last event
 * delivered before it (LOG-FORMAT.md, Drains), and every KEEPER block
 * here is a drain of its own. */
static void check_small(int fd, const struct tblock *bl, size_t nb, size_t lost, int error,
                        int closed, const char *what)
{
	struct pt_logr *r = NULL;
	int rc = pt_logr_open(fd, &r);
	require(rc == 0, "%s: open: %d", what, rc);
	uint32_t ev = 0;
	uint64_t last_ts = 0;
	for (size_t k = 0; k < nb; k++) {
		if (k == lost) {
			if (error)
				expect_error(r, last_ts);
			ev += bl[k].nev;
			continue;
		}
		for (uint32_t j = 0; j < bl[k].nev; j++, ev++) {
			expect(r, &small_ev[ev], ev);
			last_ts = small_ev[ev].ts;
		}
	}
	expect_end(r);
	require(closed_of(r) == closed, "%s: closed %d", what, closed_of(r));
	require(damaged_of(r) == (uint64_t)(error != 0), "%s: damaged", what);
	pt_logr_close(r);
}

/* A flipped byte anywhere in a block (header or payload) costs that block
 * only: one ERROR where its events were, every other block's events. */
START_TEST(flip_every_byte)
{
	for (int seekable = 1; seekable >= 0; seekable--) {
		size_t len;
		unsigned char *img = small_log(seekable, &len);
		size_t data_off = seekable ? PT_LOG_DATA_OFF : PT_LOG_DATA_OFF_NOTABLE;
		struct tblock bl[64];
		size_t nb = blocks_of(img, len, data_off, bl, 64);
		ck_assert_uint_gt(nb, 12);
		ck_assert_uint_eq(bl[nb - 1].type, PT_LOG_END);
		int file = image_file(img, len);
		check_small(file, bl, nb, SIZE_MAX, 0, 1, "intact");
		unsigned flips = 0;
		for (size_t k = 0; k < nb; k++) {
			for (size_t at = bl[k].off; at < bl[k].end; at++) {
				char what[96];
				snprintf(what, sizeof what, "%s log, block %zu, byte %zu",
				         seekable ? "seekable" : "pipe", k, at - bl[k].off);
				img[at] ^= 0x10;
				int end_block = bl[k].type == PT_LOG_END;
				/* A pipe's END block damaged looks like a log cut
				 * short: nothing says more was written. */
				int error = !(end_block && !seekable);
				int fd = file;
				if (at % 7 == 0) /* read from a pipe: in memory */
					fd = image_pipe(img, len);
				else
					require(pwrite(file, img + at, 1, (off_t)at) == 1,
					        "pwrite");
				check_small(fd, bl, nb, k, error, !end_block, what);
				if (fd != file)
					close(fd);
				img[at] ^= 0x10;
				require(pwrite(file, img + at, 1, (off_t)at) == 1, "pwrite");
				flips++;
			}
		}
		ck_assert_uint_gt(flips, 4000);
		close(file);
		free(img);
	}
}
END_TEST

/* Two damaged blocks in a row, and a run of zeros over several blocks: one
 * ERROR for each run of blocks lost. */
START_TEST(damage_runs)
{
	size_t len;
	unsigned char *img = small_log(1, &len);
	struct tblock bl[64];
	size_t nb = blocks_of(img, len, PT_LOG_DATA_OFF, bl, 64);
	memset(img + bl[3].off + 8, 0, bl[5].end - bl[3].off - 8); /* 3, 4, 5 */
	img[bl[9].off + 50] ^= 1;                                  /* 9 (payload) */
	img[bl[10].off + 2] ^= 1;                                  /* 10 (header) */
	int fd = image_file(img, len);
	struct pt_logr *r = open_ok(fd);
	uint32_t ev = 0;
	uint64_t last = 0;
	for (size_t k = 0; k < nb; k++) {
		int lost = (k >= 3 && k <= 5) || k == 9 || k == 10;
		if (k == 3 || k == 9)
			expect_error(r, last);
		for (uint32_t j = 0; j < bl[k].nev; j++, ev++) {
			if (lost)
				continue;
			expect(r, &small_ev[ev], ev);
			last = small_ev[ev].ts;
		}
	}
	expect_end(r);
	ck_assert_uint_eq(damaged_of(r), 2);
	ck_assert_int_eq(closed_of(r), 1);
	pt_logr_rewind(r);
	struct pt_log_event e;
	char d[64];
	size_t n;
	int errors = 0;
	while (pt_logr_next(r, &e, d, sizeof d, &n) == 1)
		errors += e.id == POSIX_TRACE_ERROR;
	ck_assert_int_eq(errors, 2);
	ck_assert_uint_eq(damaged_of(r), 2);
	pt_logr_close(r);
	close(fd);
	free(img);
}
END_TEST

/* Cut at every 37th byte: every complete block's events, no ERROR, not
 * closed (closed only when nothing was cut). */
START_TEST(cut_every_37th_byte)
{
	for (int seekable = 1; seekable >= 0; seekable--) {
		size_t len;
		unsigned char *img = small_log(seekable, &len);
		size_t data_off = seekable ? PT_LOG_DATA_OFF : PT_LOG_DATA_OFF_NOTABLE;
		struct tblock bl[64];
		size_t nb = blocks_of(img, len, data_off, bl, 64);
		unsigned cuts = 0;
		/* every 37th byte, and the whole log last */
		for (size_t cut = 0; cut <= len;
		     cut += cut + 37 > len && cut < len ? len - cut : 37) {
			int fd = seekable || cut % 3 ? image_file(img, cut) : image_pipe(img, cut);
			struct pt_logr *r = NULL;
			int rc = pt_logr_open(fd, &r);
			cuts++;
			/* version 5: the host record ends the header's sector */
			if (cut < PT_LOG_HOST_OFF + sizeof(struct pt_log_host)) {
				ck_assert_msg(rc == EINVAL, "cut %zu opened", cut);
				close(fd);
				continue;
			}
			ck_assert_msg(rc == 0, "cut %zu: %d", cut, rc);
			uint32_t ev = 0;
			for (size_t k = 0; k < nb && bl[k].end <= cut; k++)
				for (uint32_t j = 0; j < bl[k].nev; j++, ev++)
					expect(r, &small_ev[ev], ev);
			expect_end(r);
			ck_assert_msg(closed_of(r) == (cut == len), "cut %zu: closed", cut);
			ck_assert_uint_eq(damaged_of(r), 0);
			if (seekable && cut < PT_LOG_NAMES_OFF + 64 * 2)
				ck_assert_uint_eq(logr_nnames(r), 0);
			else if (cut == len)
				ck_assert_uint_eq(logr_nnames(r), 6);
			pt_logr_close(r);
			close(fd);
		}
		ck_assert_uint_gt(cuts, seekable ? 1900 : 60);
		free(img);
	}
}
END_TEST

/* A ring slot damaged: one ERROR there, the other blocks in order. */
START_TEST(ring_slot_damaged)
{
	enum { N = 60000, LOGSIZE = 64 << 10 };
	const uint64_t SLOTS = pt_log_ring_slots(LOGSIZE, 64u << 10); /* the smallest ring but 1 */
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_LOOP, LOGSIZE, 16);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static struct xev ev[N];
	put_run(&w, ev, N, 16, 1000);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	uint64_t blocks = pt_logw_progress(&st)->seq;
	pt_logw_free(&w);
	size_t len;
	unsigned char *img = file_image(fd, &len);
	close(fd);
	/* Events per block, by sequence number (read from the slots). */
	uint32_t nev[64];
	ck_assert_uint_le(SLOTS, 64);
	uint64_t first_seq = blocks - SLOTS;
	for (uint64_t s = first_seq; s < blocks; s++) {
		struct pt_log_block b;
		memcpy(&b, img + PT_LOG_DATA_OFF + (s % SLOTS) * (64u << 10), sizeof b);
		ck_assert_uint_eq(b.seq, s);
		nev[s - first_seq] = b.nrecords;
	}
	uint32_t total = 0;
	for (uint64_t k = 0; k < SLOTS; k++)
		total += nev[k];
	for (uint64_t k = 0; k < SLOTS; k++) {
		for (int where = 0; where < 2; where++) {
			uint64_t s = first_seq + (uint64_t)k;
			size_t at = PT_LOG_DATA_OFF + (s % SLOTS) * (64u << 10) +
			            (where ? 1000 : 9); /* header, payload */
			img[at] ^= 0x40;
			fd = image_file(img, len);
			struct pt_logr *r = open_ok(fd);
			uint32_t i = N - total;
			uint64_t last = 0;
			for (uint64_t b = 0; b < SLOTS; b++) {
				if (b == k) {
					expect_error(r, last);
					i += nev[b];
					continue;
				}
				for (uint32_t j = 0; j < nev[b]; j++, i++) {
					expect(r, &ev[i], i);
					last = ev[i].ts;
				}
			}
			expect_end(r);
			/* The newest block's header lost: the ring is not known
			 * complete (its payload lost: still closed, damaged). */
			ck_assert_int_eq(closed_of(r), k != SLOTS - 1 || where);
			pt_logr_close(r);
			close(fd);
			img[at] ^= 0x40;
		}
	}
	free(img);
}
END_TEST

static long maxrss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* A block image with another sequence number (CRC redone). */
static void reseq(unsigned char *blk, uint64_t seq)
{
	struct pt_log_block b;
	memcpy(&b, blk, sizeof b);
	b.seq = seq;
	b.header_crc = pt_crc32c(0, &b, offsetof(struct pt_log_block, header_crc));
	memcpy(blk, &b, sizeof b);
}

/* A KEEPER block image with another drain number (payload CRC redone;
 * reseq redoes the header's). */
static void redrain(unsigned char *blk, uint64_t drain)
{
	struct pt_log_block b;
	memcpy(&b, blk, sizeof b);
	ck_assert_uint_eq(b.type, PT_LOG_KEEPER);
	memcpy(blk + PT_LOG_BLOCK_HDR, &drain, sizeof drain);
	b.payload_crc = pt_crc32c(0, blk + PT_LOG_BLOCK_HDR, b.payload_len);
	memcpy(blk, &b, sizeof b);
}

/* A header claiming 2^31 ring slots over a sparse 1 TiB file, with three
 * blocks far apart: open reads only what is there, quickly, with little
 * memory; the same file laid out linear is scanned through its data only.
 * The copies carry drain number 0, as the writer's block does (events
 * given outside any drain), so each is read on its own and the blocks
 * lost between them are reported between them (LOG-FORMAT.md, Drains). */
START_TEST(sparse_huge_ring)
{
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_LOOP, 2 * (64 << 10), 16);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static struct xev ev[100];
	put_run(&w, ev, 100, 16, 1000);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	size_t len;
	unsigned char *img = file_image(fd, &len);
	const uint64_t tib = 1ull << 40, bs = 64u << 10;
	if (ftruncate(fd, (off_t)tib) != 0) {
		printf("t_logformat: SKIPPED sparse_huge_ring: no 1 TiB sparse file here (%s)\n",
		       strerror(errno));
		close(fd);
		free(img);
		return;
	}
	struct pt_log_header h;
	memcpy(&h, img, sizeof h);
	h.ring_slots = 1ull << 31;
	h.flags = PT_LOG_SEEKABLE; /* as a writer that crashed leaves it */
	h.crc = pt_crc32c(0, &h, offsetof(struct pt_log_header, crc));
	ck_assert_int_eq(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	unsigned char *blk = img + PT_LOG_DATA_OFF;
	size_t blen = len - PT_LOG_DATA_OFF;
	uint64_t slots[3] = {1000, 1001, (tib - PT_LOG_DATA_OFF) / bs - 1};
	ck_assert_uint_eq(((const struct pt_log_block *)(const void *)blk)->nrecords, 100);
	for (int k = 0; k < 3; k++) {
		redrain(blk, 0);
		reseq(blk, slots[k]);
		ck_assert_int_eq(pwrite(fd, blk, blen, (off_t)(PT_LOG_DATA_OFF + slots[k] * bs)),
		                 (ssize_t)blen);
	}
	ck_assert_int_eq(ftruncate(fd, (off_t)tib), 0);

	long rss = maxrss_kib();
	double t0 = now_s();
	struct pt_logr *r = open_ok(fd);
	double t_open = now_s() - t0;
	for (int k = 0; k < 4; k++) { /* the writer's block (seq 0), then the three */
		if (k == 1 || k == 3)
			expect_error(r, ev[99].ts); /* seqs 1 .. 999, 1002 .. missing */
		for (uint32_t i = 0; i < 100; i++)
			expect(r, &ev[i], i);
	}
	expect_end(r);
	pt_logr_close(r);
	long grown = maxrss_kib() - rss;
	printf("t_logformat: sparse 1 TiB ring (2^31 slots): open %.3f s, memory +%ld KiB\n",
	       t_open, grown);
	ck_assert_int_lt(grown, 32 << 10);

	/* Linear: the blocks are found by scanning the data there is. */
	h.layout = PT_LOG_LINEAR;
	h.ring_slots = 0;
	h.crc = pt_crc32c(0, &h, offsetof(struct pt_log_header, crc));
	ck_assert_int_eq(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	t0 = now_s();
	r = open_ok(fd);
	t_open = now_s() - t0;
	for (int k = 0; k < 4; k++) {
		if (k == 1 || k == 3)
			expect_error(r, ev[99].ts);
		for (uint32_t i = 0; i < 100; i++)
			expect(r, &ev[i], i);
	}
	expect_end(r);
	pt_logr_close(r);
	printf("t_logformat: sparse 1 TiB linear: open %.3f s\n", t_open);
	close(fd);
	free(img);
}
END_TEST

/* A forged file: after a valid header, block headers with right CRCs back
 * to back, each claiming a 4 MiB payload that is wrong.  Reading checks a
 * bounded number of those payloads (a few times the file), not each one
 * (which would take hours). */
START_TEST(forged_headers_bounded)
{
	const size_t len = PT_LOG_DATA_OFF + (16u << 20);
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, PT_LOG_MAX_DATA);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	unsigned char *img = calloc(1, len);
	ck_assert_int_eq(pread(fd, img, PT_LOG_DATA_OFF, 0), (ssize_t)PT_LOG_DATA_OFF);
	for (size_t at = PT_LOG_DATA_OFF; at + PT_LOG_BLOCK_HDR <= len; at += PT_LOG_BLOCK_HDR) {
		struct pt_log_block b = {.magic = PT_LOG_BLOCK_MAGIC,
		                         .type = PT_LOG_KEEPER,
		                         .seq = 5,
		                         .payload_len = PT_LOG_MAX_BLOCK - PT_LOG_BLOCK_HDR};
		b.header_crc = pt_crc32c(0, &b, offsetof(struct pt_log_block, header_crc));
		memcpy(img + at, &b, sizeof b);
	}
	ck_assert_int_eq(ftruncate(fd, 0), 0);
	ck_assert_int_eq(pwrite(fd, img, len, 0), (ssize_t)len);
	free(img);
	double t0 = now_s();
	struct pt_logr *r = open_ok(fd);
	struct pt_log_event e;
	char d[64];
	size_t n;
	int events = 0;
	while (pt_logr_next(r, &e, d, sizeof d, &n) == 1)
		ck_assert_int_lt(++events, 1000);
	pt_logr_close(r);
	printf("t_logformat: 16 MiB of forged block headers: open and read %.3f s, %d events\n",
	       now_s() - t0, events);
	close(fd);
}
END_TEST

/* Arbitrary bytes after a valid header: no crash, bounded, an end. */
START_TEST(garbage_after_header)
{
	size_t len;
	unsigned char *img = small_log(1, &len);
	uint32_t x = 12345;
	for (int round = 0; round < 300; round++) {
		unsigned char *copy = malloc(len);
		memcpy(copy, img, len);
		int n = 1 + round % 40;
		for (int k = 0; k < n; k++) {
			x = x * 1103515245u + 12345u;
			size_t at = PT_LOG_DATA_OFF + (x >> 4) % (len - PT_LOG_DATA_OFF);
			x = x * 1103515245u + 12345u;
			copy[at] = (unsigned char)(x >> 16);
		}
		int fd = round % 2 ? image_file(copy, len) : image_pipe(copy, len);
		struct pt_logr *r = open_ok(fd);
		struct pt_log_event e;
		char d[64];
		size_t dn;
		int events = 0;
		while (pt_logr_next(r, &e, d, sizeof d, &dn) == 1)
			ck_assert_int_lt(++events, 100000);
		ck_assert_int_le(events, SMALL_N + 64);
		pt_logr_close(r);
		close(fd);
		free(copy);
	}
	free(img);
}
END_TEST

/* ---- version 3: drains, stages, RESUME ------------------------------------ */

/* The calibration of the drain the stages below are timed with. */
static const struct pt_log_calpoint *cal_now;
static uint32_t ncal_now;

/* A raw clock value's time, as the format computes it (logfmt.h). */
static uint64_t cal_time(uint64_t raw)
{
	struct pt_log_calseg s = pt_log_cal_find(cal_now, ncal_now, raw);
	return pt_log_cal_apply(&s, raw);
}

/* Three points of a clock that runs 3 units per ns, then a little
 * faster (a TSC calibrated twice as the keeper does). */
static const struct pt_log_calpoint cal_tsc[3] = {
    {3000000000ull, 1700000000000000000ull},
    {6000000000ull, 1700000001000000000ull},
    {9000000000ull, 1700000002000000007ull},
};
/* One point: CLOCK_MONOTONIC ns, real = real_0 + (raw - raw_0). */
static const struct pt_log_calpoint cal_mono[1] = {{5000000000ull, 1700000100000000000ull}};

/* What the writer knows of a lane of the stream: where its records'
 * deltas count from, the address of its previous event (0: none), its
 * writer. */
struct lane {
	uint32_t lane;
	uint64_t base, pc;
	struct pt_log_ctx ctx;
};

/* A stage built by hand: a run of one lane's stream records (src/layout.h:
 * word0 with the raw delta from the base, the same-address bit, id and
 * length; word1 the address unless the same-address bit says it is the
 * previous event's; TIME and OWNER meta records), as the keeper copies it
 * from the stream. */
struct stg {
	struct lane *l;
	unsigned char rec[72 << 10];
	uint32_t len, events;
	struct pt_logw_stage s;
};

static void stg_begin(struct stg *g, struct lane *l, uint32_t how)
{
	memset(g, 0, sizeof *g);
	g->l = l;
	g->s.lane = l->lane;
	g->s.how = how;
	g->s.start.base = l->base;
	g->s.start.ctx = l->ctx;
	g->s.start_pc = l->pc;
}

static void stg_put(struct stg *g, uint64_t w0, uint64_t w1, int two, const void *data,
                    uint32_t len)
{
	uint32_t hdr = two ? PT_REC_HDR : PT_REC_HDR_MIN;
	require(g->len + hdr + pt_log_pad8(len) <= sizeof g->rec, "stage too large");
	unsigned char *p = g->rec + g->len;
	memcpy(p, &w0, 8);
	if (two)
		memcpy(p + 8, &w1, 8);
	memset(p + hdr, 0, pt_log_pad8(len));
	if (len)
		memcpy(p + hdr, data, len);
	g->len += hdr + pt_log_pad8(len);
}

/* A TIME record: the lane's base becomes raw, its address none. */
static void stg_time(struct stg *g, uint64_t raw)
{
	stg_put(g, pt_rec_word0(0, PT_LOG_STAGE_TIME, 8, 0), 0, 1, &raw, 8);
	g->l->base = raw;
	g->l->pc = 0;
}

/* An OWNER record of the stream: another thread took the lane over. */
static void stg_owner(struct stg *g, uint64_t base, const struct pt_log_ctx *ctx)
{
	struct pt_log_owner o = {base, *ctx};
	stg_put(g, pt_rec_word0(0, PT_LOG_STAGE_OWNER, sizeof o, 0), 0, 1, &o, sizeof o);
	g->l->base = base;
	g->l->ctx = *ctx;
	g->l->pc = 0;
}

/* A user event at raw time raw, from address pc (same: without word1, pc
 * being the lane's previous address); its expected form into *x. */
static void stg_event(struct stg *g, uint64_t raw, trace_event_id_t id, uint64_t pc, int same,
                      uint32_t len, int truncated, uint32_t seed, struct xev *x)
{
	unsigned char data[MAXD];
	struct lane *l = g->l;
	require(raw >= l->base && raw - l->base <= PT_REC_DELTA_MAX, "delta out of range");
	if (same)
		pc = l->pc;
	fill_data(data, seed, len);
	uint64_t w0 = pt_rec_word0(raw - l->base, id, len, truncated) | (same ? PT_REC_SAMEPC : 0);
	stg_put(g, w0, pc, !same, data, len);
	l->pc = pc;
	uint64_t ts = cal_time(raw);
	if (!g->events)
		g->s.first_ns = ts;
	g->s.last_ns = ts;
	g->events++;
	memset(x, 0, sizeof *x);
	x->id = id;
	x->ctx = l->ctx;
	x->ts = ts;
	x->pc = pc;
	x->len = len;
	x->truncated = truncated;
	x->seed = seed;
}

static const struct pt_logw_stage *stg_done(struct stg *g)
{
	g->s.rec = g->rec;
	g->s.len = g->len;
	g->s.events = g->events;
	return &g->s;
}

/* A keeper's own event (KEEPER block) and its expected form. */
static void keeper_event(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts,
                         trace_event_id_t id, uint32_t seed, struct xev *x)
{
	memset(x, 0, sizeof *x);
	x->id = id;
	x->ctx = *ctx;
	x->ts = ts;
	x->pc = 0x500000 + seed;
	x->len = seed % 9;
	x->seed = seed;
	ck_assert_ok(put(w, x));
}

/* Events [from, to) of x in the order the reader merges one drain: by
 * time, equal times in block then section order, which is the order the
 * test gave them in (a stable sort). */
static void merge_order(struct xev *x, uint32_t from, uint32_t to)
{
	for (uint32_t i = from + 1; i < to; i++)
		for (uint32_t j = i; j > from && x[j].ts < x[j - 1].ts; j--) {
			struct xev t = x[j];
			x[j] = x[j - 1];
			x[j - 1] = t;
		}
}

/* A STAGES or KEEPER block as laid out, and a STAGES block's sections. */
struct vsec {
	uint32_t lane, len, owners, events;
	uint64_t pc;
	uint64_t owner_base; /* the base of its first record, an OWNER */
};
struct vblock {
	uint32_t type, nrecords, ncal, nsections;
	uint64_t drain;
	struct vsec sec[16];
};

/* The blocks of a linear log image (the test's own walk), STAGES
 * sections and records decoded. */
static size_t vblocks_of(const unsigned char *img, size_t len, struct vblock *out, size_t max)
{
	size_t n = 0, off = PT_LOG_DATA_OFF;
	while (off + PT_LOG_BLOCK_HDR <= len) {
		struct pt_log_block b;
		memcpy(&b, img + off, sizeof b);
		ck_assert_uint_eq(b.magic, PT_LOG_BLOCK_MAGIC);
		ck_assert_uint_eq(b.seq, n);
		ck_assert_uint_lt(n, max);
		struct vblock *v = &out[n++];
		memset(v, 0, sizeof *v);
		v->type = b.type;
		v->nrecords = b.nrecords;
		const unsigned char *pl = img + off + PT_LOG_BLOCK_HDR;
		if (b.type == PT_LOG_KEEPER || b.type == PT_LOG_STAGES)
			memcpy(&v->drain, pl, sizeof v->drain);
		if (b.type == PT_LOG_STAGES) {
			struct pt_log_stages pre;
			memcpy(&pre, pl, sizeof pre);
			v->ncal = pre.ncal;
			v->nsections = pre.nsections;
			ck_assert_uint_le(pre.nsections, 16);
			size_t at = sizeof pre + pre.ncal * sizeof(struct pt_log_calpoint);
			uint32_t events = 0;
			for (uint32_t k = 0; k < pre.nsections; k++) {
				struct pt_log_section h;
				memcpy(&h, pl + at, sizeof h);
				at += sizeof h;
				struct vsec *s = &v->sec[k];
				s->lane = h.lane;
				s->len = h.len;
				s->pc = h.pc;
				memcpy(&s->owner_base, pl + at + PT_REC_HDR, 8);
				for (size_t r = at; r < at + h.len;) {
					uint64_t w0;
					memcpy(&w0, pl + r, 8);
					if (pt_rec_id(w0) == PT_LOG_STAGE_OWNER)
						s->owners++;
					else if (pt_rec_id(w0) >= PT_LOG_USER_FIRST)
						s->events++;
					if (r == at)
						ck_assert_uint_eq(pt_rec_id(w0), PT_LOG_STAGE_OWNER);
					r += pt_rec_size(w0);
				}
				events += s->events;
				at += h.len;
			}
			ck_assert_uint_eq(at, b.payload_len);
			ck_assert_uint_eq(events, b.nrecords);
		}
		off += pt_log_pad8(PT_LOG_BLOCK_HDR + b.payload_len);
	}
	ck_assert_uint_eq(off, len);
	return n;
}

/* The log of fd read back: exactly x[0..n), then the end (twice: after a
 * rewind too), no damage. */
static void expect_log(int fd, const struct xev *x, uint32_t n)
{
	struct pt_logr *r = open_ok(fd);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++)
			expect(r, &x[i], i);
		expect_end(r);
		pt_logr_rewind(r);
	}
	ck_assert_uint_eq(damaged_of(r), 0);
	pt_logr_close(r);
}

/* pt_logw_begin_drain (LOG-FORMAT.md, STAGES payload and Drains): a
 * calibration that is not one (no points, more than 64, raw values not
 * strictly increasing, real_ns decreasing, an unknown clock) is EINVAL and
 * begins nothing; a stage outside a drain, or not of whole words, is
 * EINVAL.  Each drain's number is the last one plus 1; the block being
 * filled is sealed first, so a block holds one drain; a drain's events
 * are merged by time with the next drain's (a later drain's events here
 * are older: they come first), not with those of the drain after. */
START_TEST(drain_numbers_and_calibration)
{
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	static struct pt_log_calpoint cal64[65];
	for (uint32_t i = 0; i < 65; i++)
		cal64[i] = (struct pt_log_calpoint){1000000000ull + i * 1000000ull,
		                                    1700000300000000000ull + i * 999999ull};
	static struct xev x[64];
	uint32_t n = 0;
	struct lane l = {4, 1000000000ull, 0, ctxs[1]};
	struct stg *g = malloc(sizeof *g);
	ck_assert_ptr_nonnull(g);
	cal_now = cal64;
	ncal_now = 64;
	stg_begin(g, &l, PT_STAGE_ELSEWHERE);
	struct xev dummy;
	stg_event(g, l.base + 10, 40, 0x401000, 0, 8, 0, 1, &dummy);
	ck_assert_err(pt_logw_stage(&w, stg_done(g)), EINVAL); /* no drain begun */

	struct pt_log_calpoint bad[2] = {{100, 1000}, {100, 2000}};
	ck_assert_err(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, NULL, 1), EINVAL);
	ck_assert_err(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, cal64, 0), EINVAL);
	ck_assert_err(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, cal64, 65), EINVAL);
	ck_assert_err(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, bad, 2), EINVAL); /* raw equal */
	bad[1].raw = 99;
	ck_assert_err(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, bad, 2), EINVAL); /* raw back */
	bad[1] = (struct pt_log_calpoint){200, 999};
	ck_assert_err(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, bad, 2), EINVAL); /* real back */
	bad[1].real_ns = 1000; /* equal real_ns: not decreasing, a calibration */
	ck_assert_err(pt_logw_begin_drain(&w, 0, bad, 2), EINVAL);
	ck_assert_err(pt_logw_begin_drain(&w, 3, bad, 2), EINVAL);
	ck_assert_uint_eq(w.prog.drain, 0);
	ck_assert_err(pt_logw_stage(&w, stg_done(g)), EINVAL); /* still none */

	/* Drain 1: 64 points; a stage and a keeper event between its events. */
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, cal64, 64));
	ck_assert_uint_eq(w.prog.drain, 1);
	stg_begin(g, &l, PT_STAGE_ELSEWHERE);
	for (uint32_t i = 0; i < 8; i++) /* across 8 segments of the 64 */
		stg_event(g, 1000000000ull + i * 7000000ull + 5, 40 + i % 3, 0x401000 + i, 0, i, 0,
		          10 + i, &x[n++]);
	struct pt_logw_stage odd = *stg_done(g);
	odd.len = 12; /* not whole words */
	ck_assert_err(pt_logw_stage(&w, &odd), EINVAL);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	keeper_event(&w, &ctxs[0], x[3].ts + 1, POSIX_TRACE_FLUSH_START, 100, &x[n++]);
	merge_order(x, 0, n);
	uint32_t d1 = n;

	/* Drain 2: older times than drain 1's; three points. */
	cal_now = cal_tsc;
	ncal_now = 3;
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, cal_tsc, 3));
	ck_assert_uint_eq(w.prog.drain, 2);
	keeper_event(&w, &ctxs[0], 1700000000500000000ull, POSIX_TRACE_FLUSH_STOP, 101, &x[n++]);
	l = (struct lane){5, 4000000000ull, 0, ctxs[2]};
	stg_begin(g, &l, PT_STAGE_ELSEWHERE);
	for (uint32_t i = 0; i < 6; i++) { /* on both sides of the middle point */
		uint64_t raw = 4000000000ull + i * 900000000ull;
		int same = i > 0;
		if (raw - l.base > PT_REC_DELTA_MAX) { /* a TIME record: no address */
			stg_time(g, raw - 7);
			same = 0;
		}
		stg_event(g, raw, 41, 0x402000, same, 16, i == 2, 20 + i, &x[n++]);
	}
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	/* The reader merges a drain with the next one (LOG-FORMAT.md, Drains):
	 * drain 2's older events come first. */
	merge_order(x, d1, n);
	merge_order(x, 0, n);
	uint32_t d2 = n;

	/* Drain 3: one point, MONO. */
	cal_now = cal_mono;
	ncal_now = 1;
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_MONO, cal_mono, 1));
	l = (struct lane){6, 4000000000ull, 0, ctxs[3]}; /* below the point: real - distance */
	stg_begin(g, &l, PT_STAGE_ELSEWHERE);
	stg_event(g, 4000000000ull + 3, 42, 0x403000, 0, 0, 0, 30, &x[n++]);
	stg_event(g, 6000000000ull, 42, 0x403000, 1, 0, 0, 31, &x[n++]);
	ck_assert_uint_eq(x[n - 2].ts, 1700000100000000000ull - 999999997ull);
	ck_assert_uint_eq(x[n - 1].ts, 1700000100000000000ull + 1000000000ull);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	keeper_event(&w, &ctxs[0], x[n - 1].ts, POSIX_TRACE_STOP, 102, &x[n]);
	n++;
	merge_order(x, d2, n);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	ck_assert_uint_eq(pt_logw_progress(&st)->drain, 3);
	pt_logw_free(&w);

	size_t len;
	unsigned char *img = file_image(fd, &len);
	static struct vblock vb[16];
	size_t nb = vblocks_of(img, len, vb, 16);
	/* Drain by drain, a STAGES block with the drain's calibration and a
	 * KEEPER block, and the END block. */
	const uint32_t types[] = {PT_LOG_STAGES, PT_LOG_KEEPER, PT_LOG_KEEPER, PT_LOG_STAGES,
	                          PT_LOG_STAGES, PT_LOG_KEEPER, PT_LOG_END};
	const uint64_t drains[] = {1, 1, 2, 2, 3, 3, 0};
	ck_assert_uint_eq(nb, 7);
	for (size_t k = 0; k < nb; k++) {
		ck_assert_uint_eq(vb[k].type, types[k]);
		ck_assert_uint_eq(vb[k].drain, drains[k]);
	}
	ck_assert_uint_eq(vb[0].ncal, 64);
	ck_assert_uint_eq(vb[3].ncal, 3);
	ck_assert_uint_eq(vb[4].ncal, 1);
	expect_log(fd, x, n);
	free(img);
	free(g);
	close(fd);
}
END_TEST

/* pt_logw_stage's sections (LOG-FORMAT.md, STAGES payload): a
 * PT_STAGE_FOLLOWS stage continues the open section when it is of the
 * same lane (no new record), else opens a section of its own whose OWNER
 * gives the lane's base and writer and whose pc is the address a first
 * same-address event repeats; PT_STAGE_NEW_CHUNK continues the section
 * after an OWNER record (a new base and writer, no address);
 * PT_STAGE_ELSEWHERE always opens a section.  The reader gives every
 * event its time through the calibration, its writer (OWNER records of
 * the stream too), its address (TIME and OWNER records reset it), the
 * truncated flag and its data, merged by time with the other lanes and
 * the keeper's events. */
START_TEST(stage_sections)
{
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_ok(pt_logw_names(&w, 33, 6, names6));
	cal_now = cal_tsc;
	ncal_now = 3;
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, cal_tsc, 3));
	static struct xev x[32];
	uint32_t n = 0;
	struct stg *g = malloc(sizeof *g);
	ck_assert_ptr_nonnull(g);
	const uint64_t RA = 5000000000ull, RB = RA + 500;
	struct lane a = {3, RA, 0, ctxs[1]}, b = {7, RB, 0x7000, ctxs[3]};

	stg_begin(g, &a, PT_STAGE_ELSEWHERE); /* section 0 */
	stg_event(g, RA + 100, 33, 0x401000, 0, 5, 0, 1, &x[n++]);
	stg_event(g, RA + 400, 34, 0, 1, 16, 0, 2, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	stg_begin(g, &a, PT_STAGE_FOLLOWS); /* the open section goes on */
	stg_event(g, RA + 700, 34, 0, 1, 0, 0, 3, &x[n++]);
	stg_event(g, RA + 1000, 35, 0x401100, 0, 64, 0, 4, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	const uint64_t RA2 = RA + 5000000;
	a.base = RA2; /* the lane's next chunk: another thread wrote it */
	a.ctx = ctxs[2];
	a.pc = 0;
	stg_begin(g, &a, PT_STAGE_NEW_CHUNK);
	stg_event(g, RA2 + 10, 36, 0x401200, 0, 1, 0, 5, &x[n++]);
	const uint64_t RA3 = RA2 + 3000000000ull; /* past the second point */
	stg_time(g, RA3);
	stg_event(g, RA3 + 5, 36, 0x401300, 0, 2, 0, 6, &x[n++]);
	stg_event(g, RA3 + 50, 37, 0, 1, 40, 1, 7, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));

	stg_begin(g, &b, PT_STAGE_ELSEWHERE); /* section 1: its pc is b's address */
	stg_event(g, RB + 1, 38, 0, 1, 3, 0, 8, &x[n++]);
	stg_event(g, RB + 2000, 38, 0x7100, 0, 9, 0, 9, &x[n++]);
	stg_owner(g, RA3 - 1000, &ctxs[4]); /* the stream's own OWNER record */
	stg_event(g, RA3 - 990, POSIX_TRACE_UNNAMED_USER_EVENT, 0x7200, 0, 0, 0, 10, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));

	stg_begin(g, &a, PT_STAGE_FOLLOWS); /* section 2: a's, after b's */
	stg_event(g, RA3 + 90, 37, 0, 1, 8, 0, 11, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	a.base = RA3 + 200;
	a.pc = 0x401500;
	stg_begin(g, &a, PT_STAGE_ELSEWHERE); /* section 3: a's again, elsewhere */
	stg_event(g, RA3 + 300, 33, 0, 1, 7, 0, 12, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	keeper_event(&w, &ctxs[0], cal_time(RA + 1500), POSIX_TRACE_FILTER, 13, &x[n++]);
	merge_order(x, 0, n);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);

	size_t len;
	unsigned char *img = file_image(fd, &len);
	static struct vblock vb[8];
	size_t nb = vblocks_of(img, len, vb, 8);
	ck_assert_uint_eq(nb, 3);
	ck_assert_uint_eq(vb[0].type, PT_LOG_STAGES);
	ck_assert_uint_eq(vb[0].nsections, 4);
	ck_assert_uint_eq(vb[0].nrecords, 12);
	const struct {
		uint32_t lane, owners, events;
		uint64_t pc, base;
	} want[4] = {
	    {3, 2, 7, 0, RA}, {7, 2, 3, 0x7000, RB}, {3, 1, 1, 0x401300, RA3}, {3, 1, 1, 0x401500, RA3 + 200}};
	for (int k = 0; k < 4; k++) {
		const struct vsec *s = &vb[0].sec[k];
		ck_assert_uint_eq(s->lane, want[k].lane);
		ck_assert_uint_eq(s->owners, want[k].owners);
		ck_assert_uint_eq(s->events, want[k].events);
		ck_assert_uint_eq(s->pc, want[k].pc);
		ck_assert_uint_eq(s->owner_base, want[k].base);
	}
	ck_assert_uint_eq(vb[1].type, PT_LOG_KEEPER);
	ck_assert_uint_eq(vb[1].drain, 1);
	expect_log(fd, x, n);
	free(img);
	free(g);
	close(fd);
}
END_TEST

/* A stage that does not fit in the STAGES block being filled seals it; the
 * next block starts with the drain's prefix and calibration and a section
 * whose OWNER and pc make it decode on its own, so that its first event,
 * from the same address as the one before it, still has that address
 * (LOG-FORMAT.md, STAGES payload).  A stage is never split; one larger
 * than a block is not a stage (EINVAL). */
START_TEST(stage_fills_block)
{
	enum { STAGES = 24, PER = 128, DLEN = 48 }; /* 8 KiB stages */
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	cal_now = cal_tsc;
	ncal_now = 3;
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_TSC, cal_tsc, 3));
	static struct xev x[STAGES * PER];
	uint32_t n = 0;
	struct stg *g = malloc(sizeof *g);
	ck_assert_ptr_nonnull(g);
	struct lane l = {1, 5000000000ull, 0, ctxs[1]};
	for (uint32_t s = 0; s < STAGES; s++) {
		stg_begin(g, &l, s ? PT_STAGE_FOLLOWS : PT_STAGE_ELSEWHERE);
		for (uint32_t i = 0; i < PER; i++, n++) {
			if (n && n % 1000 == 0)
				stg_time(g, l.base + 2000000000ull);
			stg_event(g, l.base + 100 + (n % 1000) * 1000, 40, 0x401000 + n / 1000,
			          n % 1000 != 0, DLEN, 0, n, &x[n]);
		}
		ck_assert_uint_le(g->len, 8192 + 24);
		ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	}
	/* Larger than a block: refused, nothing written of it. */
	stg_begin(g, &l, PT_STAGE_FOLLOWS);
	struct xev big;
	for (uint32_t i = 0; i < 1300; i++)
		stg_event(g, l.base + 2000000 + i, 40, 0, 1, DLEN, 0, 1, &big);
	ck_assert_uint_gt(g->len, 64u << 10);
	ck_assert_err(pt_logw_stage(&w, stg_done(g)), EINVAL);
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);

	size_t len;
	unsigned char *img = file_image(fd, &len);
	static struct vblock vb[16];
	size_t nb = vblocks_of(img, len, vb, 16);
	ck_assert_uint_ge(nb, 4); /* three STAGES blocks at least, END */
	uint32_t events = 0;
	for (size_t k = 0; k + 1 < nb; k++) {
		ck_assert_uint_eq(vb[k].type, PT_LOG_STAGES);
		ck_assert_uint_eq(vb[k].drain, 1);
		ck_assert_uint_eq(vb[k].ncal, 3);
		ck_assert_uint_eq(vb[k].nsections, 1); /* one lane, stages follow */
		ck_assert_uint_eq(vb[k].nrecords % PER, 0); /* whole stages */
		events += vb[k].nrecords;
		if (k > 0) /* the address the block's first event repeats */
			ck_assert_uint_eq(vb[k].sec[0].pc, x[events - vb[k].nrecords - 1].pc);
	}
	ck_assert_uint_eq(events, n);
	ck_assert_uint_eq(vb[nb - 1].type, PT_LOG_END);
	expect_log(fd, x, n);
	free(img);
	free(g);
	close(fd);
}
END_TEST

/* Writes stages of lane 0 (64 events, 4 KiB, later and later) into an
 * UNTIL_FULL log until one does not fit, then (if late) a stage of lane
 * 1 whose events are older than the last kept; returns the stages kept
 * and their events in x. */
static uint32_t fill_until_full(struct pt_logw *w, struct stg *g, struct xev *x, int late,
                                uint32_t kept, struct pt_logw_stage *dropped)
{
	enum { PER = 64, DLEN = 48 };
	struct lane l0 = {0, 5000000000ull, 0, ctxs[1]}, l1 = {1, 5000000000ull, 0, ctxs[2]};
	for (uint32_t s = 0;; s++) {
		int odd = late && s == kept;
		struct lane *l = odd ? &l1 : &l0;
		stg_begin(g, l, s ? PT_STAGE_FOLLOWS : PT_STAGE_ELSEWHERE);
		for (uint32_t i = 0; i < PER; i++) {
			uint32_t k = s * PER + i;
			stg_event(g, l->base + (odd ? 100 + i : 1000 + k * 1000), 40, 0x401000, i > 0,
			          DLEN, 0, k, &x[k]);
		}
		int rc = pt_logw_stage(w, stg_done(g));
		if (rc == PT_LOGW_FULL) {
			*dropped = g->s;
			return s;
		}
		ck_assert_ok(rc);
		ck_assert_uint_lt(s, 60);
	}
}

/* UNTIL_FULL with stages (LOG-FORMAT.md, How the writer keeps a log:
 * UNTIL_FULL; posix_trace_create, log-full-policy POSIX_TRACE_UNTIL_FULL):
 * a stage none of whose events fits is dropped whole and its events counted in
 * log_dropped; POSIX_TRACE_STOP (data 1, the writer of the first event
 * dropped) is the log's last event, at a time no earlier than any event
 * kept nor than the first one dropped; later stages and events are
 * dropped and counted; the file stays within data_off + 2 x log-max-size
 * + 16 blocks.  (A stage of which some events fit keeps them: t_logsize.) */
START_TEST(until_full_drops_stage_whole)
{
	/* 9 stages of 64 events of 48 bytes (64 bytes each as log-max-size
	 * counts them), the STOP, and less than one event more. */
	enum { LOGSIZE = 9 * 64 * 64 + 24 + 32 };
	static struct xev x[64 * 64];
	struct stg *g = malloc(sizeof *g);
	ck_assert_ptr_nonnull(g);
	cal_now = cal_mono;
	ncal_now = 1;
	uint32_t kept = 0;
	for (int late = 0; late < 2; late++) {
		int fd = tmp_file();
		struct pt_logw w;
		struct pt_logw_state st;
		struct pt_logw_params p = params(POSIX_TRACE_UNTIL_FULL, LOGSIZE, 64);
		ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
		ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_MONO, cal_mono, 1));
		struct pt_logw_stage dropped;
		/* The writer is deterministic: the second run fills up at the
		 * same stage, which is then lane 1's, with older events. */
		uint32_t s = fill_until_full(&w, g, x, late, kept, &dropped);
		if (!late)
			kept = s;
		ck_assert_uint_eq(s, kept);
		ck_assert_uint_gt(kept, 3);
		uint64_t max_kept = x[kept * 64 - 1].ts;
		ck_assert(late ? dropped.first_ns < max_kept : dropped.first_ns > max_kept);
		struct lane l = {0, 9000000000ull, 0, ctxs[3]};
		stg_begin(g, &l, PT_STAGE_ELSEWHERE);
		struct xev after;
		for (uint32_t i = 0; i < 5; i++)
			stg_event(g, l.base + i, 40, 0x401000, 0, 0, 0, i, &after);
		ck_assert_int_eq(pt_logw_stage(&w, stg_done(g)), PT_LOGW_FULL);
		ck_assert_int_eq(put(&w, &after), PT_LOGW_FULL);
		ck_assert_ok(pt_logw_finish(&w, NULL));
		pt_logw_free(&w);
		struct stat sb;
		ck_assert_int_eq(fstat(fd, &sb), 0);
		ck_assert_uint_le((uint64_t)sb.st_size,
		                  PT_LOG_DATA_OFF + pt_log_full_region(LOGSIZE, 64u << 10));
		ck_assert_uint_eq(kept, 9);

		struct pt_logr *r = open_ok(fd);
		for (uint32_t i = 0; i < kept * 64; i++)
			expect(r, &x[i], i);
		struct pt_log_event e;
		int data = 0;
		size_t dn;
		ck_assert_int_eq(pt_logr_next(r, &e, &data, sizeof data, &dn), 1);
		ck_assert_uint_eq(e.id, POSIX_TRACE_STOP);
		ck_assert_int_eq(data, 1);
		ck_assert_int_eq(memcmp(&e.ctx, &dropped.start.ctx, sizeof e.ctx), 0);
		ck_assert_uint_ge(e.ts_ns, max_kept);
		ck_assert_uint_ge(e.ts_ns, dropped.first_ns);
		ck_assert_uint_eq(e.ts_ns, late ? max_kept : dropped.first_ns);
		expect_end(r);
		struct pt_log_status s2;
		pt_logr_status(r, &s2);
		ck_assert_int_eq(s2.log_full, POSIX_TRACE_FULL);
		ck_assert_int_eq(s2.log_overrun, POSIX_TRACE_OVERRUN);
		ck_assert_uint_eq(s2.log_dropped, 64 + 5 + 1);
		ck_assert_int_eq(closed_of(r), 1);
		pt_logr_close(r);
		close(fd);
	}
	free(g);
}
END_TEST

/* UNTIL_FULL, a stage of which only some events fit (LOG-FORMAT.md, How
 * the writer keeps a log: UNTIL_FULL): its records up to the first event
 * that does not fit in log-max-size are kept, the rest is dropped and
 * counted; the STOP, at the stage's last event's time (no earlier than any
 * event kept nor than the first dropped), ends the log; the events kept
 * take at most log-max-size bytes as it counts them (16 + data rounded up
 * to 8), though the stage stored most of them with one word. */
START_TEST(until_full_keeps_the_part_of_a_stage_that_fits)
{
	enum { PER = 64, DLEN = 48, KEEP = 2 * PER + 10 };
	/* two stages and ten events (64 bytes each as counted), the STOP */
	const uint64_t logsize = KEEP * pt_log_event_bytes(DLEN) + pt_log_event_bytes(sizeof(int));
	static struct xev x[3 * PER];
	struct stg *g = malloc(sizeof *g);
	ck_assert_ptr_nonnull(g);
	cal_now = cal_mono;
	ncal_now = 1;
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_UNTIL_FULL, logsize, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_MONO, cal_mono, 1));
	struct lane l = {0, 5000000000ull, 0, ctxs[1]};
	uint64_t last_ns = 0;
	for (uint32_t s = 0; s < 3; s++) {
		stg_begin(g, &l, s ? PT_STAGE_FOLLOWS : PT_STAGE_ELSEWHERE);
		for (uint32_t i = 0; i < PER; i++) {
			uint32_t k = s * PER + i;
			stg_event(g, l.base + 1000 + k * 1000, 40, 0x401000, i > 0, DLEN, 0, k, &x[k]);
		}
		const struct pt_logw_stage *stage = stg_done(g);
		last_ns = stage->last_ns;
		ck_assert_int_eq(pt_logw_stage(&w, stage), s < 2 ? 0 : PT_LOGW_FULL);
	}
	ck_assert_ok(pt_logw_finish(&w, NULL));
	ck_assert_uint_eq(pt_logw_progress(&st)->event_bytes, logsize);
	pt_logw_free(&w);

	struct pt_logr *r = open_ok(fd);
	for (uint32_t i = 0; i < KEEP; i++)
		expect(r, &x[i], i);
	struct pt_log_event e;
	int data = 0;
	size_t dn;
	ck_assert_int_eq(pt_logr_next(r, &e, &data, sizeof data, &dn), 1);
	ck_assert_uint_eq(e.id, POSIX_TRACE_STOP);
	ck_assert_int_eq(data, 1);
	ck_assert_uint_eq(e.ts_ns, last_ns);
	ck_assert_uint_ge(e.ts_ns, x[KEEP].ts);
	ck_assert_int_eq(memcmp(&e.ctx, &ctxs[1], sizeof e.ctx), 0);
	expect_end(r);
	struct pt_log_status s2;
	pt_logr_status(r, &s2);
	ck_assert_int_eq(s2.log_full, POSIX_TRACE_FULL);
	ck_assert_uint_eq(s2.log_dropped, 3 * PER - KEEP);
	pt_logr_close(r);
	close(fd);
	free(g);
}
END_TEST

/* pt_logw_resume_mark (LOG-FORMAT.md, KEEPER payload: RESUME): the reader
 * reports POSIX_TRACE_RESUME right before the next event it delivers after
 * the mark's time, with that event's timestamp and the mark's writer (XSH
 * 2.11, Trace Event Type Definitions: POSIX_TRACE_RESUME, the first valid
 * event after the overflow), whether that event is in the same drain or a
 * later one; without a later event, none. */
START_TEST(resume_mark_before_next_event)
{
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	cal_now = cal_mono;
	ncal_now = 1;
	static struct xev x[64];
	uint32_t n = 0;
	struct stg *g = malloc(sizeof *g);
	ck_assert_ptr_nonnull(g);
	struct lane l = {2, 6000000000ull, 0, ctxs[1]};

	/* Drain 1: events at 0..9 us; an overflow read at 4.5 us. */
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_MONO, cal_mono, 1));
	stg_begin(g, &l, PT_STAGE_ELSEWHERE);
	for (uint32_t i = 0; i < 10; i++)
		stg_event(g, l.base + i * 1000, 40, 0x401000, i > 0, 4, 0, i, &x[n++]);
	ck_assert_ok(pt_logw_resume_mark(&w, &ctxs[0], x[4].ts + 500));
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	/* Another mark after the drain's last event: the next is in drain 2. */
	ck_assert_ok(pt_logw_resume_mark(&w, &ctxs[2], x[9].ts + 1));
	/* Drain 2: a keeper event first, then a stage. */
	ck_assert_ok(pt_logw_begin_drain(&w, PT_LOG_CLOCK_MONO, cal_mono, 1));
	stg_begin(g, &l, PT_STAGE_ELSEWHERE);
	for (uint32_t i = 10; i < 13; i++)
		stg_event(g, l.base + i * 1000, 40, 0x401000, 0, 4, 0, i, &x[n++]);
	ck_assert_ok(pt_logw_stage(&w, stg_done(g)));
	keeper_event(&w, &ctxs[0], x[10].ts - 100, POSIX_TRACE_FLUSH_STOP, 50, &x[n++]);
	merge_order(x, 10, n);
	/* A last mark with no event after it. */
	ck_assert_ok(pt_logw_resume_mark(&w, &ctxs[0], x[n - 1].ts + 10));
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);

	struct pt_logr *r = open_ok(fd);
	for (int pass = 0; pass < 2; pass++) {
		for (uint32_t i = 0; i < n; i++) {
			if (i == 5 || i == 10) {
				struct pt_log_event e;
				char d[8];
				size_t dn = 99;
				require(pt_logr_next(r, &e, d, sizeof d, &dn) == 1, "no RESUME");
				require(e.id == POSIX_TRACE_RESUME, "id %u before event %u, RESUME expected",
				        e.id, i);
				require(e.ts_ns == x[i].ts, "RESUME at %llu, the next event at %llu",
				        (unsigned long long)e.ts_ns, (unsigned long long)x[i].ts);
				require(memcmp(&e.ctx, i == 5 ? &ctxs[0] : &ctxs[2], sizeof e.ctx) == 0,
				        "RESUME's writer");
				require(e.data_len == 0 && dn == 0, "RESUME with data");
			}
			expect(r, &x[i], i);
		}
		expect_end(r);
		pt_logr_rewind(r);
	}
	ck_assert_uint_eq(damaged_of(r), 0);
	pt_logr_close(r);
	free(g);
	close(fd);
}
END_TEST

/* ---- bench ---------------------------------------------------------------- */

/* A file with no name in dir. */
static int bench_file(const char *dir)
{
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0) {
		fprintf(stderr, "bench: %s: %s\n", dir, strerror(errno));
		exit(1);
	}
	return fd;
}

/* N events of 16 bytes from 4 threads taking turns every 64 events, 37 ns
 * apart: the log the benchmark writes and reads. */
static double bench_write(int fd, uint32_t n)
{
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	unsigned char payload[16] = "0123456789abcdef";
	double t0 = now_s();
	if (pt_logw_begin(&w, &st, fd, &p) != 0)
		exit(1);
	uint64_t ts = 1700000000000000000ull;
	for (uint32_t i = 0; i < n; i++) {
		ts += 37;
		memcpy(payload, &i, sizeof i);
		pt_logw_event(&w, &ctxs[1 + ((i >> 6) & 3)], ts, 40, payload, 16, 0, 0x401000);
	}
	if (pt_logw_finish(&w, NULL) != 0)
		exit(1);
	double t = now_s() - t0;
	pt_logw_free(&w);
	return t;
}

/* The same bytes with plain 1 MiB write()s, then fdatasync. */
static double bench_plain(int fd, size_t bytes)
{
	static unsigned char mb[1 << 20];
	memset(mb, 0x33, sizeof mb);
	double t0 = now_s();
	for (size_t done = 0; done < bytes; done += sizeof mb) {
		size_t n = bytes - done < sizeof mb ? bytes - done : sizeof mb;
		if (write(fd, mb, n) != (ssize_t)n)
			exit(1);
	}
	fdatasync(fd);
	return now_s() - t0;
}

static double bench_read(int fd, uint32_t n)
{
	struct pt_logr *r;
	struct pt_log_event ev;
	unsigned char data[64];
	size_t len;
	uint32_t count = 0;
	if (pt_logr_open(fd, &r) != 0)
		exit(1);
	double t0 = now_s();
	while (pt_logr_next(r, &ev, data, sizeof data, &len) == 1)
		count++;
	double t = now_s() - t0;
	pt_logr_close(r);
	if (count != n)
		exit(1);
	return t;
}

static double median(double *v, int n)
{
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && v[j] < v[j - 1]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[n / 2];
}

/* Log write vs plain write()s of the same bytes (both end with fdatasync),
 * in dir (default: TMPDIR or /tmp) and in /dev/shm (no disk: the CPU cost);
 * pt_logr_next over the log, warm. Medians of 5, interleaved. */
static int bench(const char *dir)
{
	enum { N = 4 << 20, REPS = 5 };
	const char *dirs[2] = {dir ? dir : tmp_dir(), "/dev/shm"};
	for (int d = 0; d < 2; d++) {
		double tw[REPS], tp[REPS], tr[REPS];
		size_t bytes = 0;
		for (int rep = 0; rep < REPS; rep++) {
			int fd = bench_file(dirs[d]);
			tw[rep] = bench_write(fd, N);
			struct stat sb;
			fstat(fd, &sb);
			bytes = (size_t)sb.st_size;
			int pf = bench_file(dirs[d]);
			tp[rep] = bench_plain(pf, bytes);
			close(pf);
			bench_read(fd, N); /* warm */
			tr[rep] = bench_read(fd, N);
			close(fd);
		}
		double w = median(tw, REPS), pl = median(tp, REPS), r = median(tr, REPS);
		printf("%s: log write %u events of 16 B (%.1f MB): %.1f M events/s, %.0f MB/s; "
		       "plain 1 MiB write()s %.0f MB/s; log/plain %.2f\n",
		       dirs[d], N, bytes / 1e6, N / w / 1e6, bytes / w / 1e6, bytes / pl / 1e6,
		       pl / w);
		printf("%s: log read, pt_logr_next (warm): %.1f M events/s\n", dirs[d],
		       N / r / 1e6);
	}
	return 0;
}

/* ---- seeds of the fuzzer -------------------------------------------------- */

static int seed_log(const char *dir, const char *file, int log_policy, uint64_t log_size,
                    int pipe_form, uint32_t n)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
	int pp[2] = {-1, -1};
	if (fd < 0 || (pipe_form && (pipe2(pp, O_CLOEXEC) != 0 ||
	                             fcntl(pp[1], F_SETPIPE_SZ, 1 << 20) < 0)))
		return 1;
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(log_policy, log_size, 40);
	if (pt_logw_begin(&w, &st, pipe_form ? pp[1] : fd, &p) != 0)
		return 1;
	uint64_t ts = 1700000000000000000ull;
	for (uint32_t i = 0; i < n; i++) {
		struct xev e = gen(i, 40, &ts, 1);
		if (i == 3)
			pt_logw_names(&w, 33, 6, names6);
		if (i % 50 == 49)
			pt_logw_sync(&w, &status_x);
		put(&w, &e);
	}
	pt_logw_finish(&w, &status_x);
	pt_logw_free(&w);
	if (pipe_form) {
		static unsigned char buf[1 << 20];
		close(pp[1]);
		ssize_t got = read(pp[0], buf, sizeof buf);
		if (got <= 0 || write(fd, buf, (size_t)got) != got)
			return 1;
		close(pp[0]);
	}
	close(fd);
	return 0;
}

/* Small real logs of each kind, the corpus tests/fuzz/fuzz_logread starts
 * from. */
static int seeds(const char *dir)
{
	return seed_log(dir, "append.ptlog", POSIX_TRACE_APPEND, 1 << 20, 0, 400) |
	       seed_log(dir, "pipe.ptlog", POSIX_TRACE_APPEND, 1 << 20, 1, 400) |
	       seed_log(dir, "full.ptlog", POSIX_TRACE_UNTIL_FULL, 12 << 10, 0, 2000) |
	       seed_log(dir, "ring.ptlog", POSIX_TRACE_LOOP, 2 * (64 << 10), 0, 6000) |
	       seed_log(dir, "tiny.ptlog", POSIX_TRACE_APPEND, 1 << 20, 1, 3);
}

/* ---- images: files described once per log -------------------------------- */

#define IMG_T0 1700000000000000000ull

/* Process pid's only image: file "/lib/fNNNNN.so" (NNNNN: file), at
 * 0x10000 * (file + 1) and 0x1000 bytes long, its set begun at IMG_T0. */
static void image_of_file(struct pt_logw *w, int32_t pid, uint32_t file)
{
	char path[32];
	snprintf(path, sizeof path, "/lib/f%05u.so", file);
	struct pt_log_image e = {.pid = pid, .time_ns = IMG_T0, .set = 1,
	                         .start = 0x10000ull * (file + 1), .count = 1,
	                         .path_len = (uint16_t)strlen(path), .build_id_len = 4};
	e.end = e.start + 0x1000;
	e.bias = e.start;
	memcpy(e.build_id, &file, sizeof file);
	ck_assert_ok(pt_logw_image(w, &e, path, 0));
}

/* Process pid's image is file's (image_of_file). */
static void assert_image_of_file(struct pt_logr *r, int32_t pid, uint32_t file)
{
	char path[32];
	snprintf(path, sizeof path, "/lib/f%05u.so", file);
	struct posixtrace_image img;
	uint64_t addr = 0x10000ull * (file + 1) + 0x10;
	ck_assert_msg(pt_logr_image(r, pid, addr, IMG_T0 + 1, &img) == 0, "pid %d: no image", pid);
	ck_assert_str_eq(img.posixtrace_path, path);
	ck_assert_uint_eq(img.posixtrace_start, addr - 0x10);
	uint32_t id;
	memcpy(&id, img.posixtrace_build_id, sizeof id);
	ck_assert_uint_eq(id, file);
}

/* The blocks of a linear log of each type (the test's own walk). */
static void count_block_types(int fd, uint32_t *by_type)
{
	size_t len;
	unsigned char *img = file_image(fd, &len);
	for (uint64_t off = PT_LOG_DATA_OFF; off + PT_LOG_BLOCK_HDR <= len;) {
		struct pt_log_block b;
		memcpy(&b, img + off, sizeof b);
		ck_assert_uint_eq(b.magic, PT_LOG_BLOCK_MAGIC);
		if (b.type < 32)
			by_type[b.type]++;
		off += pt_log_pad8(PT_LOG_BLOCK_HDR + b.payload_len);
	}
	free(img);
}

/* The writer's table of files described holds 4,096: the images of files
 * past it are written whole (IMAGES_SHARED), none lost, and every image
 * reads back with its own file; files already described are still named
 * by id after the table filled. */
START_TEST(images_table_full_falls_back)
{
	enum { FILES = PT_LOGW_TABLE_FILES + 300 };
	int fd = tmp_file();
	struct pt_logw w;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w, &st, fd, &p));
	for (uint32_t f = 0; f < FILES; f++) {
		image_of_file(&w, (int32_t)(100 + f), f);
		if (f % 500 == 499)
			pt_logw_images_done(&w);
	}
	image_of_file(&w, 99, 7); /* a file described long ago: an id */
	ck_assert_ok(pt_logw_finish(&w, NULL));
	pt_logw_free(&w);
	uint32_t by_type[32] = {0};
	count_block_types(fd, by_type);
	ck_assert_uint_gt(by_type[PT_LOG_IMAGES_COMPACT], 0);
	ck_assert_uint_gt(by_type[PT_LOG_IMAGES_SHARED], 0);
	struct pt_logr *r = open_ok(fd);
	ck_assert_uint_eq(pt_logr_images(r), FILES + 1);
	ck_assert_uint_eq(pt_logr_images_dropped(r), 0);
	for (uint32_t f = 0; f < FILES; f += 97)
		assert_image_of_file(r, (int32_t)(100 + f), f);
	assert_image_of_file(r, (int32_t)(100 + FILES - 1), FILES - 1);
	assert_image_of_file(r, 99, 7);
	pt_logr_close(r);
	close(fd);
}
END_TEST

/* A keeper that continues a log (pt_logw_resume) numbers its files from
 * 0 again, in a table of its own: the images of both keepers read back
 * with their own files, none taken for the other's. */
START_TEST(images_after_resume_keep_their_files)
{
	int fd = tmp_file();
	struct pt_logw w1, w2;
	struct pt_logw_state st;
	struct pt_logw_params p = params(POSIX_TRACE_APPEND, 1 << 20, 64);
	ck_assert_ok(pt_logw_begin(&w1, &st, fd, &p));
	for (uint32_t f = 0; f < 10; f++)
		image_of_file(&w1, (int32_t)(100 + f), f);
	ck_assert_ok(pt_logw_sync(&w1, NULL));
	pt_logw_free(&w1);
	ck_assert_ok(pt_logw_resume(&w2, &st, fd));
	for (uint32_t f = 10; f < 20; f++)
		image_of_file(&w2, (int32_t)(100 + f), f);
	image_of_file(&w2, 99, 3); /* described by the first keeper: again */
	ck_assert_ok(pt_logw_finish(&w2, NULL));
	pt_logw_free(&w2);
	struct pt_logr *r = open_ok(fd);
	ck_assert_uint_eq(pt_logr_images(r), 21);
	ck_assert_uint_eq(pt_logr_images_dropped(r), 0);
	for (uint32_t f = 0; f < 20; f++)
		assert_image_of_file(r, (int32_t)(100 + f), f);
	assert_image_of_file(r, 99, 3);
	pt_logr_close(r);
	close(fd);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "bench") == 0)
		return bench(argc > 2 ? argv[2] : NULL);
	if (argc > 2 && strcmp(argv[1], "seeds") == 0)
		return seeds(argv[2]);
	signal(SIGPIPE, SIG_IGN);
	Suite *s = suite_create("logformat");
	TCase *tc = pt_tcase(s, "roundtrip");
	tcase_add_test(tc, roundtrip_every_field);
	tcase_add_test(tc, crc_is_the_definition);
	tcase_add_test(tc, stage_time_is_the_calibration);
	tcase_add_test(tc, short_buffer_and_largest_data);
	tcase_add_test(tc, names_over_pipe);
	tc = pt_tcase(s, "errors");
	tcase_add_test(tc, begin_errors);
	tcase_add_test(tc, begin_no_space);
	tcase_add_test(tc, write_errors_kept);
	tcase_add_test(tc, open_refuses);
	tc = pt_tcase(s, "policies");
	tcase_add_test(tc, loop_ring_keeps_newest);
	tcase_add_test(tc, until_full_stops);
	tcase_add_test(tc, append_grows);
	tc = pt_tcase(s, "lifecycle");
	tcase_add_test(tc, clear_seekable_and_pipe);
	tcase_add_test(tc, sync_without_finish);
	tcase_add_test(tc, resume_from_copied_state);
	tcase_add_test(tc, resume_after_sigkill);
	tcase_add_test(tc, pipe_torn_block);
	tc = pt_tcase(s, "damage");
	tcase_add_test(tc, flip_every_byte);
	tcase_add_test(tc, damage_runs);
	tcase_add_test(tc, cut_every_37th_byte);
	tcase_add_test(tc, ring_slot_damaged);
	tcase_add_test(tc, sparse_huge_ring);
	tcase_add_test(tc, garbage_after_header);
	tcase_add_test(tc, forged_headers_bounded);
	tc = pt_tcase(s, "v3");
	tcase_add_test(tc, drain_numbers_and_calibration);
	tcase_add_test(tc, stage_sections);
	tcase_add_test(tc, stage_fills_block);
	tcase_add_test(tc, until_full_drops_stage_whole);
	tcase_add_test(tc, until_full_keeps_the_part_of_a_stage_that_fits);
	tcase_add_test(tc, resume_mark_before_next_event);
	tcase_add_test(tc, images_table_full_falls_back);
	tcase_add_test(tc, images_after_resume_keep_their_files);
	return pt_run(s);
}
