/* SPDX-License-Identifier: MIT */
/*
 * bench_log - Trace Log throughput of libposixtrace, as a program linked
 * with the shared library sees it: writing a log while a thread records
 * flat out, and reading a pre-recorded log back.  bench/run.sh runs it
 * once per repetition, interleaved with bench_event, the floor and LTTng.
 *
 *   bench_log mklog FILE NEVENTS [THREADS]
 *       Writes a log of NEVENTS 16-byte user events into FILE without
 *       losing any (it posts in batches and waits for posix_trace_flush to
 *       finish between them); THREADS (1 or 2) writer threads post each
 *       batch, on CPU 1, or on CPUs 0 and 1.  Prints
 *       MKLOG|<user events in the log>|<file bytes>|<seconds>|<lost>|
 *       <all events in the log>.
 *
 *   bench_log run DIR NWRITE [READLOG [READS [READLOG2]]]
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
 *         median pass is reported.  READLOG2 (a log written by 2 threads)
 *         is read the same way.
 *       A small untimed log write and a plain write first warm up the
 *       code, the keeper's start and the file system.
 *
 *   bench_log read LOG [READS]
 *       The log read alone, as in run: prints the logr row for LOG (bench/run.sh
 *       runs it built against an older library, whose reader it times).
 *
 *   bench_log plain FILE SECONDS
 *       The disk's sustained rate: 1 MiB write()s into FILE for SECONDS,
 *       then fdatasync; prints PLAIN|<MB/s>|<bytes>|<seconds>, MB/s =
 *       bytes / the whole time, the fdatasync included.  FILE is removed.
 *
 *   bench_log paced FILE STREAM_MIB RATE SECONDS [PLAIN_MBS]
 *       A writer below the disk's bandwidth: one thread on CPU 1 posts
 *       RATE * SECONDS 16-byte events into a FLUSH stream of STREAM_MIB
 *       MiB with an APPEND log in FILE, in bursts of 100 us worth of
 *       events, each burst at its due time on CLOCK_MONOTONIC (it sleeps
 *       until then when ahead, and posts the bursts that are due back to
 *       back when behind), so the average rate is RATE unless the writer
 *       cannot post that fast; then it stops after SECONDS with fewer
 *       events, and the rate it achieved says so.  Then
 *       posix_trace_shutdown (an error is reported, not fatal), and the log is
 *       read back: the lost count of its status and the events missing
 *       from it (posted - user events in it), and the lost count of the
 *       live stream's status before the shutdown.  FILE is removed.
 *       PLAIN_MBS, the sustained rate the pace came from (bench_log
 *       plain), goes into the rate row's note and a row of its own.
 *
 *   bench_log exec CPU OUT CMD [ARG...]
 *       Runs CMD (on CPU unless CPU is -1) with its standard output in the
 *       file OUT, and prints EXEC|<wall seconds>|<peak RSS KiB>, the wall
 *       time from before fork to after wait4 (the command's start
 *       included), the peak RSS from wait4's rusage of the child (GNU time
 *       is not always installed).  Exits with the command's status.
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
	int err;               /* with `tolerant`: the error that ended the read */
};

/* tolerant: a log that cannot be opened or read to its end (the paced
 * writer's, when posix_trace_shutdown failed) is a result, not a failure
 * of the bench: li.err says where the read stopped. */
static struct log_info scan_log_as(const char *path, int tolerant)
{
	struct log_info li = {0};
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		die(path, errno);
	trace_id_t t;
	int err = posix_trace_open(fd, &t);
	if (err && tolerant) {
		fprintf(stderr, "bench_log: %s: posix_trace_open: %s\n", path, strerror(err));
		li.err = err;
		close(fd);
		return li;
	}
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
		if ((err = posix_trace_getnext_event(t, &ev, data, sizeof data, &len, &unavailable))) {
			if (!tolerant)
				die("posix_trace_getnext_event", err);
			fprintf(stderr, "bench_log: %s: posix_trace_getnext_event after %llu events: %s\n",
			        path, (unsigned long long)li.total, strerror(err));
			li.err = err;
			break;
		}
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

static struct log_info scan_log(const char *path) { return scan_log_as(path, 0); }

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

/* Sequential write() in 1 MiB writes of `bytes`, or for `seconds` when
 * bytes is 0, then fdatasync: MB/s over the whole, the fdatasync
 * included; *written: the bytes. */
static double plain_write_for(const char *path, uint64_t bytes, double seconds,
                              uint64_t *written)
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
	uint64_t until = t0 + (uint64_t)(seconds * 1e9);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die(path, errno);
	if (!bytes)
		bytes = UINT64_MAX;
	uint64_t done = 0;
	while (done < bytes && (bytes != UINT64_MAX || now_ns() < until)) {
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
	if (written)
		*written = done;
	return (double)done * 1e3 / (double)(t1 - t0);
}

static double plain_write(const char *path, uint64_t bytes)
{
	return plain_write_for(path, bytes, 0, NULL);
}

/* The disk's sustained rate: a plain write as long as a paced run. */
static int plain(const char *path, double seconds)
{
	if (!(seconds > 0)) {
		fprintf(stderr, "bench_log plain: bad seconds %g\n", seconds);
		return 2;
	}
	uint64_t t0 = now_ns(), bytes;
	double mbs = plain_write_for(path, 0, seconds, &bytes);
	printf("PLAIN|%.2f|%llu|%.3f\n", mbs, (unsigned long long)bytes,
	       (double)(now_ns() - t0) / 1e9);
	fflush(stdout);
	return 0;
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

/* A writer thread of mklog: posts its share of each batch between two
 * barrier waits, while main waits for the flush of the previous batch in
 * between. */
struct mkwriter {
	pthread_barrier_t *bar;
	uint64_t n, batch;
	int idx, cpu, nthreads;
};

static void *mkwriter_main(void *arg)
{
	struct mkwriter *w = arg;
	pin(w->cpu);
	for (uint64_t i = 0; i < w->n; i += w->batch) {
		uint64_t b = w->n - i < w->batch ? w->n - i : w->batch;
		uint64_t share = b / (uint64_t)w->nthreads;
		uint64_t mine = w->idx == w->nthreads - 1 ? b - share * (uint64_t)(w->nthreads - 1) : share;
		pthread_barrier_wait(w->bar);
		/* distinct payloads in each thread: the event numbers of its share */
		write_loop(i + share * (uint64_t)w->idx, mine);
		pthread_barrier_wait(w->bar);
	}
	return NULL;
}

static int mklog(const char *path, uint64_t n, int nthreads)
{
	int fd, err;
	uint64_t t0 = now_ns();
	trace_id_t t = log_stream(path, 64 * MiB, &fd);
	if ((err = posix_trace_start(t)))
		die("posix_trace_start", err);
	/* 500 000 records of 24 to 40 B are at most 20 MB: less than half the
	 * stream, the point at which a writer asks the keeper for a flush
	 * itself. */
	const uint64_t batch = 500000;
	pthread_barrier_t bar;
	if ((err = pthread_barrier_init(&bar, NULL, (unsigned)nthreads + 1)))
		die("pthread_barrier_init", err);
	struct mkwriter w[2];
	pthread_t th[2];
	for (int k = 0; k < nthreads; k++) {
		/* one writer on CPU 1, as in the log write; two on CPUs 0 and 1 */
		w[k] = (struct mkwriter){.bar = &bar, .n = n, .batch = batch, .idx = k,
		                         .cpu = nthreads == 1 ? 1 : k, .nthreads = nthreads};
		if ((err = pthread_create(&th[k], NULL, mkwriter_main, &w[k])))
			die("pthread_create", err);
	}
	for (uint64_t i = 0; i < n; i += batch) {
		pthread_barrier_wait(&bar); /* the writers post the batch */
		pthread_barrier_wait(&bar);
		if ((err = posix_trace_flush(t)))
			die("posix_trace_flush", err);
		struct posix_trace_status_info st;
		do {
			usleep(1000);
			if ((err = posix_trace_get_status(t, &st)))
				die("posix_trace_get_status", err);
		} while (st.posix_stream_flush_status == POSIX_TRACE_FLUSHING);
	}
	for (int k = 0; k < nthreads; k++)
		pthread_join(th[k], NULL);
	pthread_barrier_destroy(&bar);
	if ((err = posix_trace_shutdown(t)))
		die("posix_trace_shutdown", err);
	uint64_t bytes = file_size(fd);
	close(fd);
	struct log_info li = scan_log(path);
	printf("MKLOG|%llu|%llu|%.2f|%llu|%llu\n", (unsigned long long)li.user,
	       (unsigned long long)bytes, (double)(now_ns() - t0) / 1e9,
	       (unsigned long long)li.lost, (unsigned long long)li.total);
	return 0;
}

static void row(const char *key, const char *name, double v, const char *unit,
                const char *note, double aux);

/* ---- paced writer ------------------------------------------------------ */

struct pacer {
	uint64_t n, t0, t1, posted;
	double rate; /* events per second */
};

static void *pacer_main(void *arg)
{
	struct pacer *p = arg;
	pin(1);
	/* 100 us worth of events a burst: small against any stream (at 40 M
	 * events/s, 4 000 events, under 100 KB), large enough that reading the
	 * clock and sleeping cost little per event */
	uint64_t burst = (uint64_t)(p->rate * 100e-6);
	if (burst < 1)
		burst = 1;
	p->t0 = now_ns();
	/* a writer that cannot keep the pace stops at the end of the time all
	 * the same, so the run and its log stay bounded; 1 ms of grace lets a
	 * writer on pace whose last sleep ended late post its last bursts */
	uint64_t end = p->t0 + (uint64_t)((double)p->n * 1e9 / p->rate) + 1000000u;
	uint64_t done = 0;
	while (done < p->n) {
		/* burst k is due when k * burst events are due: the average rate is
		 * the target whatever the sleeps' lateness, which only makes the
		 * bursts that are due come back to back */
		uint64_t due = p->t0 + (uint64_t)((double)done * 1e9 / p->rate);
		uint64_t now = now_ns();
		if (now >= end && done > 0)
			break;
		if (now < due) {
			struct timespec ts = {.tv_sec = (time_t)(due / 1000000000u),
			                      .tv_nsec = (long)(due % 1000000000u)};
			while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
				;
		}
		uint64_t b = p->n - done < burst ? p->n - done : burst;
		write_loop(done, b);
		done += b;
	}
	p->t1 = now_ns();
	p->posted = done;
	return NULL;
}

static int paced(const char *path, size_t stream_mib, double rate, double seconds,
                 double plain_mbs)
{
	if (!(rate >= 1) || !(seconds > 0) || stream_mib < 1) {
		fprintf(stderr, "bench_log paced: bad rate %g or seconds %g or stream size\n", rate,
		        seconds);
		return 2;
	}
	int fd, err;
	trace_id_t t = log_stream(path, stream_mib * MiB, &fd);
	if ((err = posix_trace_start(t)))
		die("posix_trace_start", err);
	struct pacer p = {.n = (uint64_t)(rate * seconds + 0.5), .rate = rate};
	pthread_t th;
	if ((err = pthread_create(&th, NULL, pacer_main, &p)))
		die("pthread_create", err);
	pthread_join(th, NULL);
	/* the live stream's count (since the start: nothing else asked) */
	struct posix_trace_status_info st;
	if ((err = posix_trace_get_status(t, &st)))
		die("posix_trace_get_status", err);
	/* A failed shutdown is a result of the row (the keeper did not finish
	 * the log in time): say so, and read what the log holds. */
	uint64_t s0 = now_ns();
	int shut = posix_trace_shutdown(t);
	uint64_t s1 = now_ns();
	if (shut)
		fprintf(stderr, "bench_log paced: posix_trace_shutdown: %s after %.2f s\n", strerror(shut),
		        (double)(s1 - s0) / 1e9);
	uint64_t bytes = file_size(fd);
	close(fd);
	struct log_info li = scan_log_as(path, 1);
	unlink(path);
	uint64_t missing = li.user < p.posted ? p.posted - li.user : 0;
	if (li.user > p.posted)
		fprintf(stderr, "bench_log paced: %llu user events in the log, %llu posted\n",
		        (unsigned long long)li.user, (unsigned long long)p.posted);
	char key[32], name[128];
	const char *sfx = stream_mib == 4 ? "def" : stream_mib == 16 ? "16m" : "x";
	snprintf(key, sizeof key, "pc_%s", sfx);
	snprintf(name, sizeof name, "paced writer, FLUSH %zu MiB stream: rate achieved", stream_mib);
	char note[96] = "";
	if (plain_mbs > 0)
		snprintf(note, sizeof note, "pace %.2f Mev/s; plain write for %g s: %.0f MB/s",
		         rate / 1e6, seconds, plain_mbs);
	row(key, name, (double)p.posted * 1e3 / (double)(p.t1 - p.t0), "Mev/s", note, rate / 1e6);
	if (plain_mbs > 0) {
		snprintf(key, sizeof key, "pc_%s_plain", sfx);
		row(key, "  plain write(), 1 MiB each, for as long, + fdatasync", plain_mbs, "MB/s", "",
		    0);
	}
	snprintf(key, sizeof key, "pc_%s_post", sfx);
	row(key, "  events posted", (double)p.posted / 1e6, "Mev", "", (double)bytes / 1e6);
	/* in % of those posted, the exact counts as aux: the table's columns
	 * are narrow, and the target reads the counts */
	double pct = 100.0 / (double)p.posted;
	snprintf(key, sizeof key, "pc_%s_live", sfx);
	row(key, "  events lost: the live stream's status, at the end", (double)st.posixtrace_lost_events * pct,
	    "%", "", (double)st.posixtrace_lost_events);
	snprintf(key, sizeof key, "pc_%s_lost", sfx);
	row(key, "  events lost: the log's status", (double)li.lost * pct, "%", "", (double)li.lost);
	snprintf(key, sizeof key, "pc_%s_miss", sfx);
	row(key, "  events missing from the log read back", (double)missing * pct, "%", "",
	    (double)missing);
	/* aux: the error of posix_trace_shutdown, else of reading the log back */
	snprintf(key, sizeof key, "pc_%s_shut", sfx);
	row(key, "  posix_trace_shutdown duration", (double)(s1 - s0) / 1e6, "ms", "",
	    (double)(shut ? shut : li.err));
	fflush(stdout);
	return 0;
}

/* ---- exec: wall time and peak RSS of a command ------------------------- */

static int exec_timed(int cpu, const char *out, char **cmd)
{
	if (cpu >= 0)
		pin(cpu); /* inherited by the child */
	uint64_t t0 = now_ns();
	pid_t pid = fork();
	if (pid < 0)
		die("fork", errno);
	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || dup2(fd, STDOUT_FILENO) < 0) {
			fprintf(stderr, "bench_log exec: %s: %s\n", out, strerror(errno));
			_exit(127);
		}
		execvp(cmd[0], cmd);
		fprintf(stderr, "bench_log exec: %s: %s\n", cmd[0], strerror(errno));
		_exit(127);
	}
	int status;
	struct rusage ru;
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR)
			die("wait4", errno);
	uint64_t t1 = now_ns();
	/* ru_maxrss: KiB on Linux */
	printf("EXEC|%.6f|%ld\n", (double)(t1 - t0) / 1e9, ru.ru_maxrss);
	fflush(stdout);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	fprintf(stderr, "bench_log exec: %s: signal %d\n", cmd[0], WTERMSIG(status));
	return 128 + WTERMSIG(status);
}

/* ---- main ------------------------------------------------------------- */

static void row(const char *key, const char *name, double v, const char *unit,
                const char *note, double aux)
{
	printf("ROW|%s|%s|%.2f|%.2f|%.2f|%s|%s|%.2f\n", key, name, v, v, v, unit, note, aux);
}

/* The log read: one untimed pass, then READS timed ones on CPU 1; the
 * median pass is the row. */
static void read_row(const char *key, const char *name, const char *log, int reads)
{
	if (!log)
		return;
	double v[64];
	uint64_t events = 0;
	pin(1);
	read_pass(log, &events);
	for (int i = 0; i < reads; i++)
		v[i] = read_pass(log, &events);
	qsort(v, (size_t)reads, sizeof v[0], cmp_d);
	row(key, name, v[reads / 2], "Mev/s", "", (double)events);
}

int main(int argc, char **argv)
{
	if (argc >= 5 && !strcmp(argv[1], "exec"))
		return exec_timed(atoi(argv[2]), argv[3], argv + 4);
	if (argc >= 3 && !strcmp(argv[1], "read")) {
		int reads = argc > 3 ? atoi(argv[3]) : 3;
		read_row("logr", "log read: posix_trace_open + getnext to the end", argv[2],
		         reads < 1 || reads > 64 ? 3 : reads);
		fflush(stdout);
		return 0;
	}
	if (argc < 4 || (strcmp(argv[1], "mklog") && strcmp(argv[1], "run") &&
	                 strcmp(argv[1], "plain") && (strcmp(argv[1], "paced") || argc < 6))) {
		fprintf(stderr, "usage: bench_log mklog FILE NEVENTS [THREADS]\n"
		                "       bench_log run DIR NWRITE [READLOG [READS [READLOG2]]]\n"
		                "       bench_log read LOG [READS]\n"
		                "       bench_log plain FILE SECONDS\n"
		                "       bench_log paced FILE STREAM_MIB RATE SECONDS [PLAIN_MBS]\n"
		                "       bench_log exec CPU OUT CMD [ARG...]\n");
		return 2;
	}
	int err = posix_trace_eventid_open("bench.event", &ev_id);
	if (err)
		die("posix_trace_eventid_open", err);
	if (!strcmp(argv[1], "mklog")) {
		int threads = argc > 4 ? atoi(argv[4]) : 1;
		if (threads < 1 || threads > 2)
			threads = 1;
		return mklog(argv[2], strtoull(argv[3], NULL, 10), threads);
	}
	if (!strcmp(argv[1], "plain"))
		return plain(argv[2], strtod(argv[3], NULL));
	if (!strcmp(argv[1], "paced"))
		return paced(argv[2], (size_t)strtoull(argv[3], NULL, 10), strtod(argv[4], NULL),
		             strtod(argv[5], NULL), argc > 6 ? strtod(argv[6], NULL) : 0);

	const char *dir = argv[2];
	uint64_t nwrite = strtoull(argv[3], NULL, 10);
	const char *readlog = argc > 4 && argv[4][0] ? argv[4] : NULL;
	int reads = argc > 5 ? atoi(argv[5]) : 3;
	if (reads < 1 || reads > 64)
		reads = 3;
	const char *readlog2 = argc > 6 && argv[6][0] ? argv[6] : NULL;
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

	read_row("logr", "log read: posix_trace_open + getnext to the end", readlog, reads);
	read_row("logr_2w", "  the same, a log written by 2 threads", readlog2, reads);
	fflush(stdout);
	return 0;
}
