/* SPDX-License-Identifier: MIT */
/*
 * bench_log - Trace Log throughput of libposixtrace, as a program linked
 * with the shared library sees it: writing a log while a thread records
 * flat out, and reading a pre-recorded log back.  bench/run.sh runs it
 * once per repetition, interleaved with bench_event, the floor and LTTng.
 *
 *   bench_log mklog FILE NEVENTS
 *       Writes a log of NEVENTS 16-byte user events into FILE without
 *       losing any (it posts in batches and waits for posix_trace_flush to
 *       finish between them).  Prints
 *       MKLOG|<user events in the log>|<file bytes>|<seconds>|<lost>.
 *
 *   bench_log run DIR NWRITE [READLOG [READS]]
 *       One repetition of every case; files are created in DIR (on the
 *       file system under test) and removed.
 *       - log write: stream-full-policy POSIX_TRACE_FLUSH, log-full-policy
 *         POSIX_TRACE_APPEND, a regular file; a 16 MiB stream, then the
 *         default (4 MiB) one.  One writer thread on CPU 1 posts NWRITE
 *         16-byte events as fast as it can, then main calls
 *         posix_trace_shutdown.  Elapsed = first event .. shutdown
 *         returned.  The log is then read back (posix_trace_open): the user
 *         events in it, posixtrace_lost_events of its status, and the
 *         keeper's busy time = the sum over its flushes of FLUSH_STOP -
 *         FLUSH_START.
 *       - plain write: as many bytes as that log, 1 MiB write()s then
 *         fdatasync, into a new file in DIR.
 *       - log read (with READLOG): posix_trace_open + posix_trace_getnext_
 *         event to the end, one untimed pass then READS timed passes; the
 *         median pass is reported.
 *       A small untimed log write and a plain write first warm up the
 *       code, the keeper's start and the file system.
 *
 * Output, one line per row (parsed by bench/run.sh; one repetition, so
 * median = min = max):
 *   ROW|<key>|<name>|<value>|<value>|<value>|<unit>|<note>|<aux>
 * A row that could not be measured is left out, and stderr says why.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

/* Out of line and out of inter-procedural analysis (clang has no noipa). */
#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noinline, noipa))
#endif
#define MiB (1024u * 1024u)

static trace_event_id_t ev_id;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int err)
{
	fprintf(stderr, "bench_log: %s: %s\n", what, strerror(err));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (err)
		die("pthread_setaffinity_np", err);
}

/* bench_event's payload loop: two changing words, 16 bytes. */
NOIPA static void write_loop(uint64_t first, uint64_t n)
{
	_Alignas(64) unsigned char buf[16];
	uint64_t w[2];
	for (uint64_t i = first; i < first + n; i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		posix_trace_event(ev_id, buf, 16);
	}
}

/* A stream with a log in `path`: FLUSH / APPEND.  stream_size 0: default. */
static trace_id_t log_stream(const char *path, size_t stream_size, int *fd_out)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path, errno);
	trace_attr_t a;
	trace_id_t trid;
	int err;
	if ((err = posix_trace_attr_init(&a)) ||
	    (err = posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH)) ||
	    (err = posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND)) ||
	    (stream_size && (err = posix_trace_attr_setstreamsize(&a, stream_size))))
		die("trace attributes", err);
	if ((err = posix_trace_create_withlog(0, &a, fd, &trid)))
		die("posix_trace_create_withlog", err);
	posix_trace_attr_destroy(&a);
	*fd_out = fd;
	return trid;
}

static uint64_t file_size(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 ? (uint64_t)st.st_size : 0;
}

static double ts_ns(const struct timespec *t) { return (double)t->tv_sec * 1e9 + (double)t->tv_nsec; }

/* What a log holds. */
struct log_info {
	uint64_t user, total, flushes, lost;
	double keeper_busy_ns; /* sum of FLUSH_STOP - FLUSH_START */
};

static struct log_info scan_log(const char *path)
{
	struct log_info li = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path, errno);
	trace_id_t t;
	int err = posix_trace_open(fd, &t);
	if (err)
		die("posix_trace_open", err);
	struct posix_trace_status_info st;
	if ((err = posix_trace_get_status(t, &st)))
		die("posix_trace_get_status", err);
	li.lost = st.posixtrace_lost_events;
	struct posix_trace_event_info ev;
	unsigned char data[1024];
	size_t len;
	int unavailable;
	double start = -1;
	for (;;) {
		if ((err = posix_trace_getnext_event(t, &ev, data, sizeof data, &len, &unavailable)))
			die("posix_trace_getnext_event", err);
		if (unavailable)
			break;
		li.total++;
		if (ev.posix_event_id == ev_id)
			li.user++;
		else if (ev.posix_event_id == POSIX_TRACE_FLUSH_START)
			start = ts_ns(&ev.posix_timestamp);
		else if (ev.posix_event_id == POSIX_TRACE_FLUSH_STOP && start >= 0) {
			li.keeper_busy_ns += ts_ns(&ev.posix_timestamp) - start;
			li.flushes++;
			start = -1;
		}
	}
	posix_trace_close(t);
	close(fd);
	return li;
}

/* ---- log write ------------------------------------------------------- */

struct writer {
	uint64_t n, t0, t1;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	pin(1);
	w->t0 = now_ns();
	write_loop(0, w->n);
	w->t1 = now_ns();
	return NULL;
}

struct logw {
	double mb_s, mev_s, post_mev_s, lost_pct, keeper_mb_s, keeper_busy_pct, shutdown_ms;
	uint64_t bytes, logged, lost;
};

static struct logw log_write(const char *path, size_t stream_size, uint64_t n)
{
	int fd;
	trace_id_t t = log_stream(path, stream_size, &fd);
	int err = posix_trace_start(t);
	if (err)
		die("posix_trace_start", err);
	struct writer w = {.n = n};
	pthread_t th;
	if ((err = pthread_create(&th, NULL, writer_main, &w)))
		die("pthread_create", err);
	pthread_join(th, NULL);
	uint64_t s0 = now_ns();
	if ((err = posix_trace_shutdown(t)))
		die("posix_trace_shutdown", err);
	uint64_t s1 = now_ns();
	struct logw r = {0};
	r.bytes = file_size(fd);
	close(fd);
	double el = (double)(s1 - w.t0);
	struct log_info li = scan_log(path);
	r.logged = li.user;
	r.mb_s = (double)r.bytes * 1e3 / el;
	r.mev_s = (double)li.user * 1e3 / el;
	r.post_mev_s = (double)n * 1e3 / (double)(w.t1 - w.t0);
	r.lost = li.lost;
	r.lost_pct = 100.0 * (double)li.lost / (double)n;
	/* bytes the keeper wrote per second of flushing: what it could hand
	 * to the disk if the disk took everything at once */
	r.keeper_mb_s = li.keeper_busy_ns > 0 ? (double)r.bytes * 1e3 / li.keeper_busy_ns : 0;
	r.keeper_busy_pct = 100.0 * li.keeper_busy_ns / el;
	r.shutdown_ms = (double)(s1 - s0) / 1e6;
	if (li.user + li.lost < n)
		fprintf(stderr, "bench_log: %s: %llu logged + %llu lost < %llu posted\n", path,
		        (unsigned long long)li.user, (unsigned long long)li.lost,
		        (unsigned long long)n);
	return r;
}

/* Sequential write() of `bytes` in 1 MiB writes, then fdatasync: MB/s. */
static double plain_write(const char *path, uint64_t bytes)
{
	static unsigned char *buf;
	if (!buf) {
		buf = malloc(MiB);
		if (!buf)
			die("malloc", ENOMEM);
		for (size_t i = 0; i < MiB; i++)
			buf[i] = (unsigned char)(i * 131u + 7u);
	}
	uint64_t t0 = now_ns();
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path, errno);
	for (uint64_t done = 0; done < bytes;) {
		size_t len = bytes - done < MiB ? (size_t)(bytes - done) : MiB;
		ssize_t k = write(fd, buf, len);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			die("write", errno);
		}
		done += (uint64_t)k;
	}
	if (fdatasync(fd) != 0)
		die("fdatasync", errno);
	uint64_t t1 = now_ns();
	close(fd);
	unlink(path);
	return (double)bytes * 1e3 / (double)(t1 - t0);
}

/* ---- pre-recorded read ----------------------------------------------- */

static double read_pass(const char *path, uint64_t *events)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path, errno);
	struct posix_trace_event_info ev;
	unsigned char data[1024];
	size_t len;
	int unavailable, err;
	uint64_t n = 0, sum = 0, t0 = now_ns();
	trace_id_t t;
	if ((err = posix_trace_open(fd, &t)))
		die("posix_trace_open", err);
	for (;;) {
		if ((err = posix_trace_getnext_event(t, &ev, data, sizeof data, &len, &unavailable)))
			die("posix_trace_getnext_event", err);
		if (unavailable)
			break;
		n++;
		sum += ev.posix_event_id + len;
	}
	uint64_t t1 = now_ns();
	posix_trace_close(t);
	close(fd);
	if (sum == 0)
		fprintf(stderr, "bench_log: empty log %s\n", path);
	*events = n;
	return (double)n * 1e3 / (double)(t1 - t0);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* ---- mklog ------------------------------------------------------------ */

static int mklog(const char *path, uint64_t n)
{
	int fd, err;
	uint64_t t0 = now_ns();
	trace_id_t t = log_stream(path, 64 * MiB, &fd);
	if ((err = posix_trace_start(t)))
		die("posix_trace_start", err);
	/* 500 000 records of 40 B are 20 MB: less than half the stream, the
	 * point at which a writer asks the keeper for a flush itself. */
	const uint64_t batch = 500000;
	for (uint64_t i = 0; i < n; i += batch) {
		write_loop(i, n - i < batch ? n - i : batch);
		if ((err = posix_trace_flush(t)))
			die("posix_trace_flush", err);
		struct posix_trace_status_info st;
		do {
			usleep(1000);
			if ((err = posix_trace_get_status(t, &st)))
				die("posix_trace_get_status", err);
		} while (st.posix_stream_flush_status == POSIX_TRACE_FLUSHING);
	}
	if ((err = posix_trace_shutdown(t)))
		die("posix_trace_shutdown", err);
	uint64_t bytes = file_size(fd);
	close(fd);
	struct log_info li = scan_log(path);
	printf("MKLOG|%llu|%llu|%.2f|%llu\n", (unsigned long long)li.user,
	       (unsigned long long)bytes, (double)(now_ns() - t0) / 1e9,
	       (unsigned long long)li.lost);
	return 0;
}

/* ---- main ------------------------------------------------------------- */

static void row(const char *key, const char *name, double v, const char *unit,
                const char *note, double aux)
{
	printf("ROW|%s|%s|%.2f|%.2f|%.2f|%s|%s|%.2f\n", key, name, v, v, v, unit, note, aux);
}

int main(int argc, char **argv)
{
	if (argc < 4 || (strcmp(argv[1], "mklog") && strcmp(argv[1], "run"))) {
		fprintf(stderr, "usage: bench_log mklog FILE NEVENTS | run DIR NWRITE [READLOG [READS]]\n");
		return 2;
	}
	int err = posix_trace_eventid_open("bench.event", &ev_id);
	if (err)
		die("posix_trace_eventid_open", err);
	if (!strcmp(argv[1], "mklog"))
		return mklog(argv[2], strtoull(argv[3], NULL, 10));

	const char *dir = argv[2];
	uint64_t nwrite = strtoull(argv[3], NULL, 10);
	const char *readlog = argc > 4 && argv[4][0] ? argv[4] : NULL;
	int reads = argc > 5 ? atoi(argv[5]) : 3;
	if (reads < 1 || reads > 64)
		reads = 3;
	char logpath[4096], plainpath[4096];
	snprintf(logpath, sizeof logpath, "%s/bench.log", dir);
	snprintf(plainpath, sizeof plainpath, "%s/plain.dat", dir);

	/* warm-up: code, the keeper's fork, the file system (the first large
	 * plain write of a process was ~2x slower than the next ones when the
	 * warm-up wrote only 16 MiB) */
	log_write(logpath, 16 * MiB, nwrite / 10 < 100000 ? 100000 : nwrite / 10);
	unlink(logpath);
	plain_write(plainpath, 128 * MiB);

	static const struct {
		const char *sfx, *what;
		size_t size;
	} sizes[] = {{"16m", "16 MiB", 16 * MiB}, {"def", "default 4 MiB", 0}};
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		struct logw r = log_write(logpath, sizes[i].size, nwrite);
		unlink(logpath);
		double plain = plain_write(plainpath, r.bytes);
		char key[32], name[128];
		snprintf(key, sizeof key, "logw_%s", sizes[i].sfx);
		snprintf(name, sizeof name, "log write, FLUSH %s stream, APPEND file", sizes[i].what);
		row(key, name, r.mb_s, "MB/s", "", (double)r.bytes / 1e6);
		snprintf(key, sizeof key, "logw_%s_plain", sizes[i].sfx);
		row(key, "  plain write(), 1 MiB each, + fdatasync, same bytes", plain, "MB/s", "", 0);
		snprintf(key, sizeof key, "logw_%s_keeper", sizes[i].sfx);
		if (r.keeper_mb_s > 0)
			row(key, "  keeper: log bytes / its busy time", r.keeper_mb_s, "MB/s", "",
			    r.keeper_busy_pct);
		else
			fprintf(stderr, "bench_log: %s: no FLUSH_START .. FLUSH_STOP pair in the log\n",
			        key);
		snprintf(key, sizeof key, "logw_%s_ev", sizes[i].sfx);
		row(key, "  events in the log / elapsed", r.mev_s, "Mev/s", "", (double)r.logged);
		snprintf(key, sizeof key, "logw_%s_lost", sizes[i].sfx);
		row(key, "  events lost, of those posted", r.lost_pct, "%", "", r.post_mev_s);
		snprintf(key, sizeof key, "logw_%s_bpe", sizes[i].sfx);
		row(key, "  log bytes per event in it", r.logged ? (double)r.bytes / (double)r.logged : 0,
		    "B/ev", "", (double)r.logged);
		snprintf(key, sizeof key, "logw_%s_shut", sizes[i].sfx);
		row(key, "  posix_trace_shutdown duration", r.shutdown_ms, "ms", "", 0);
	}

	if (readlog) {
		double v[64];
		uint64_t events = 0;
		pin(1);
		read_pass(readlog, &events); /* untimed */
		for (int i = 0; i < reads; i++)
			v[i] = read_pass(readlog, &events);
		qsort(v, (size_t)reads, sizeof v[0], cmp_d);
		row("logr", "log read: posix_trace_open + getnext to the end", v[reads / 2], "Mev/s",
		    "", (double)events);
	}
	fflush(stdout);
	return 0;
}
