/* SPDX-License-Identifier: MIT */
/*
 * bench_event - what recording and reading events costs a program that uses
 * libposixtrace the usual way: through <trace.h> and the shared library
 * (bench/run.sh says how this binary is linked).
 *
 * Threads are pinned: one writer on CPU 1; two writers on CPUs 0 and 1; an
 * analyzer on CPU 0 with its writer on CPU 1.  Each thread first makes
 * WARM untimed calls (they register the thread, take its lane and touch
 * the stream), then all threads meet at a barrier and the timed loop
 * starts.  Several threads are timed together: (last end - first start) /
 * all their events.  bench/run.sh starts one process per repetition, so
 * that the repetitions of every program are interleaved; REPS > 1 here is
 * for running one case alone (for example under perf).
 *
 * Usage: bench_event [REPS [SCALE [FILTER]]]
 *   SCALE multiplies the iteration counts; FILTER runs only the cases whose
 *   key contains it ("=KEY": only the case KEY; the cases bench/run.sh
 *   runs in pairs of their own, en16_flush and en16_flush_block, run only
 *   so).
 *
 * Output, one line per case (parsed by bench/run.sh):
 *   ROW|<key>|<name>|<median>|<min>|<max>|<unit>|<note>|<median of aux>
 * A case that could not be measured prints no row and says why on stderr.
 *
 * Built with -DBENCH_BASELINE against an older library's headers (bench/run.sh
 * builds the same source against the 0.2.0 library), the cases that need an
 * interface the old library lacks (triggers) are left out.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <posixtrace.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "loopclock.h"

/* Out of line and out of inter-procedural analysis: the compiler must not
 * fold the benchmarked call into its loop (clang has no noipa). */
#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noinline, noipa))
#endif
#define MAXREPS 64
#define MiB (1024u * 1024u)
#define PAYLOAD_MAX 4096 /* the largest payload the writer loop sends */
#define WARM 200000u
#define STREAM_MEMFD "/memfd:posixtrace-stream"

static int reps = 1;
static double scale = 1.0;
static const char *filter;
static trace_event_id_t ev_id;   /* the user event type every writer records */
static size_t max_data;          /* the default max data size of a stream */


_Noreturn static void fail(const char *what, int err)
{
	fprintf(stderr, "bench_event: %s: %s\n", what, strerror(err));
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	int err = pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	if (err)
		fail("pthread_setaffinity_np", err);
}

/* Cases that read on the main thread pin it; the next case gets it back
 * as it was at the start. */
static cpu_set_t initial_cpus;

static void unpin(void)
{
	pthread_setaffinity_np(pthread_self(), sizeof initial_cpus, &initial_cpus);
}

static uint64_t scaled(uint64_t n)
{
	n = (uint64_t)((double)n * scale);
	return n < 1000 ? 1000 : n;
}

/* ------------------------------------------------------------------ */
/* streams                                                             */

static trace_id_t stream_new(int policy, size_t size, int start)
{
	trace_attr_t a;
	trace_id_t trid;
	int err;
	if ((err = posix_trace_attr_init(&a)) ||
	    (err = posix_trace_attr_setstreamfullpolicy(&a, policy)) ||
	    (err = posix_trace_attr_setstreamsize(&a, size)))
		fail("trace attributes", err);
	if ((err = posix_trace_create(0, &a, &trid)))
		fail("posix_trace_create", err);
	posix_trace_attr_destroy(&a);
	if (start && (err = posix_trace_start(trid)))
		fail("posix_trace_start", err);
	return trid;
}

static void stream_end(trace_id_t trid)
{
	int err = posix_trace_shutdown(trid);
	if (err)
		fail("posix_trace_shutdown", err);
}

/* ------------------------------------------------------------------ */
/* writer loops                                                        */

/* What an instrumented program does: two changing 64-bit words in front of
 * the payload, a run-time length (the rest of a larger payload is left as
 * it is).  The same loop as the floor's and the LTTng peer's. */
NOIPA static void write_loop(uint64_t n, size_t len)
{
	_Alignas(64) static __thread unsigned char buf[PAYLOAD_MAX];
	uint64_t w[2];
	for (uint64_t i = 0; i < n; i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		posix_trace_event(ev_id, buf, len);
	}
}

/* The call-overhead baseline: the same loop, an empty function. */
NOIPA static void empty_event(trace_event_id_t id, const void *data, size_t len)
{
	(void)id;
	(void)data;
	(void)len;
	__asm__ volatile("" ::: "memory");
}

static void (*volatile empty_fn)(trace_event_id_t, const void *, size_t) = empty_event;

NOIPA static void empty_loop(uint64_t n, size_t len)
{
	_Alignas(64) unsigned char buf[16];
	uint64_t w[2];
	for (uint64_t i = 0; i < n; i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		empty_fn(ev_id, buf, len);
	}
}

/* ------------------------------------------------------------------ */
/* timed writer threads                                                */

typedef void (*loop_fn)(uint64_t, size_t);

struct writer {
	pthread_t th;
	int cpu;
	uint64_t warm, n, t0, t1;
	size_t len;
	loop_fn loop;
	pthread_barrier_t *start;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	pin(w->cpu);
	if (w->warm)
		w->loop(w->warm, w->len);
	pthread_barrier_wait(w->start);
	w->t0 = loop_ns();
	w->loop(w->n, w->len);
	w->t1 = loop_ns();
	return NULL;
}

/* ns per event over nthreads pinned writers (1: CPU 1; 2: CPUs 0, 1). */
static double run_writers(loop_fn loop, int nthreads, uint64_t n, uint64_t warm, size_t len)
{
	struct writer w[2];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct writer){.cpu = nthreads == 1 ? 1 : i, .warm = warm, .n = n,
		                       .len = len, .loop = loop, .start = &start};
		int err = pthread_create(&w[i].th, NULL, writer_main, &w[i]);
		if (err)
			fail("pthread_create", err);
	}
	uint64_t t0 = UINT64_MAX, t1 = 0, slowest = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
		if (loop_clock != CLOCK_MONOTONIC && w[i].t1 - w[i].t0 > slowest)
			slowest = w[i].t1 - w[i].t0;
	}
	if (loop_clock != CLOCK_MONOTONIC) /* each thread's own clock */
		t0 = 0, t1 = slowest;
	pthread_barrier_destroy(&start);
	return (double)(t1 - t0) / (double)(n * (uint64_t)nthreads);
}

/* ------------------------------------------------------------------ */
/* the calls that record nothing                                       */

static double c_empty(double *aux)
{
	(void)aux;
	return run_writers(empty_loop, 1, scaled(50000000), 0, 16);
}

/* No stream exists: the state of a program nobody traces.  The first case
 * of the process, so that no stream has existed before either. */
static double c_off_none(double *aux)
{
	(void)aux;
	return run_writers(write_loop, 1, scaled(50000000), WARM, 16);
}

/* A stream exists but has not been started. */
static double c_off_created(double *aux)
{
	(void)aux;
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 0);
	double v = run_writers(write_loop, 1, scaled(50000000), WARM, 16);
	stream_end(t);
	return v;
}

/* The stream runs; the event's type is in its filter. */
static double c_filtered(double *aux)
{
	(void)aux;
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 1);
	trace_event_set_t set;
	int err;
	if ((err = posix_trace_eventset_empty(&set)) || (err = posix_trace_eventset_add(ev_id, &set)) ||
	    (err = posix_trace_set_filter(t, &set, POSIX_TRACE_SET_EVENTSET)))
		fail("posix_trace_set_filter", err);
	double v = run_writers(write_loop, 1, scaled(50000000), WARM, 16);
	stream_end(t);
	return v;
}

/* ------------------------------------------------------------------ */
/* recording                                                           */

/* Default attributes (LOOP, 4 MiB): nobody reads, so the stream wraps and
 * the writer reuses its oldest space, as the floor's ring does. */
static double recording(size_t len, int threads, uint64_t n)
{
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 1);
	double v = run_writers(write_loop, threads, scaled(n), WARM, len);
	stream_end(t);
	return v;
}
static double c_en0(double *aux) { (void)aux; return recording(0, 1, 4000000); }
static double c_en16(double *aux) { (void)aux; return recording(16, 1, 4000000); }
static double c_en256(double *aux) { (void)aux; return recording(256, 1, 2000000); }
static double c_enmax(double *aux) { (void)aux; return recording(max_data, 1, 1000000); }
static double c_en16_2thr(double *aux) { (void)aux; return recording(16, 2, 4000000); }

/* The same as en16 in a LOOP stream with a log (a flight recorder) whose
 * trigger is armed on another event type: what a trigger costs the events
 * that are not one (the log is written once, by the shutdown). */
#ifndef BENCH_BASELINE
static double c_en16_trigger(double *aux)
{
	(void)aux;
	char path[] = "/tmp/bench_event_trigger_XXXXXX";
	int fd = mkstemp(path), err;
	if (fd < 0)
		fail("mkstemp", errno);
	unlink(path);
	trace_attr_t a;
	trace_id_t t;
	trace_event_id_t other;
	trace_event_set_t set;
	if ((err = posix_trace_attr_init(&a)) ||
	    (err = posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_LOOP)) ||
	    (err = posix_trace_attr_setstreamsize(&a, 4 * MiB)) ||
	    (err = posix_trace_create_withlog(0, &a, fd, &t)) ||
	    (err = posix_trace_eventid_open("bench.trigger", &other)) ||
	    (err = posix_trace_eventset_empty(&set)) || (err = posix_trace_eventset_add(other, &set)) ||
	    (err = posixtrace_set_trigger(t, &set)) || (err = posix_trace_start(t)))
		fail("a stream with a trigger", err);
	posix_trace_attr_destroy(&a);
	double v = run_writers(write_loop, 1, scaled(4000000), WARM, 16);
	stream_end(t);
	close(fd);
	return v;
}
#endif

/* An UNTIL_FULL stream large enough for every event: nothing wraps, every
 * line is new (aux: events lost, expected 0). */
static double c_en16_nowrap(double *aux)
{
	uint64_t n = scaled(2000000);
	trace_id_t t = stream_new(POSIX_TRACE_UNTIL_FULL, (size_t)((n + WARM) * 64 + 8 * MiB), 1);
	double v = run_writers(write_loop, 1, n, WARM, 16);
	struct posix_trace_status_info st;
	if (posix_trace_get_status(t, &st) == 0)
		*aux = (double)st.posixtrace_lost_events;
	stream_end(t);
	return v;
}

/* A FLUSH stream with a log (to /dev/null) larger than all its events, so
 * that it is never full, with writers that may wait for room or not: what
 * the blocking attribute (posixtrace_attr_setblocking) costs a writer that
 * never waits (bench/run.sh runs the two adjacent).  A run in which the
 * stream filled after all (an event lost, a writer that waited) is not
 * this case: no value (-1), said on stderr. */
#define STREAM_FLUSH_SIZE (64 * MiB)
static double flush_never_full(int blocking)
{
	uint64_t n = scaled(2000000);
	int fd = open("/dev/null", O_WRONLY | O_CLOEXEC), err;
	if (fd < 0)
		fail("/dev/null", errno);
	trace_attr_t a;
	trace_id_t t;
	if ((err = posix_trace_attr_init(&a)) ||
	    (err = posix_trace_attr_setstreamfullpolicy(&a, POSIX_TRACE_FLUSH)) ||
	    (err = posix_trace_attr_setlogfullpolicy(&a, POSIX_TRACE_APPEND)) ||
	    (err = posix_trace_attr_setstreamsize(&a, STREAM_FLUSH_SIZE)))
		fail("trace attributes", err);
#ifndef BENCH_BASELINE
	struct timespec wait = {1, 0};
	if (blocking && (err = posixtrace_attr_setblocking(&a, &wait)))
		fail("posixtrace_attr_setblocking", err);
#else
	(void)blocking;
#endif
	if ((err = posix_trace_create_withlog(0, &a, fd, &t)) || (err = posix_trace_start(t)))
		fail("a FLUSH stream with a log", err);
	posix_trace_attr_destroy(&a);
	double v = run_writers(write_loop, 1, n, WARM, 16);
	struct posix_trace_status_info st;
	if (posix_trace_get_status(t, &st) == 0)
		v = st.posixtrace_lost_events ? -1 : v; /* full after all: not this case */
#ifndef BENCH_BASELINE
	struct posixtrace_block_stats b;
	if (blocking && posixtrace_block_info(t, &b) == 0 && b.posixtrace_waited_events)
		v = -1;
#endif
	if (v < 0)
		fprintf(stderr, "bench_event: the FLUSH stream was full (%s)\n",
		        blocking ? "blocking" : "plain");
	stream_end(t);
	close(fd);
	return v;
}
static double c_en16_flush(double *aux) { (void)aux; return flush_never_full(0); }
#ifndef BENCH_BASELINE
static double c_en16_flush_block(double *aux) { (void)aux; return flush_never_full(1); }
#endif

/* ------------------------------------------------------------------ */
/* a live analyzer                                                     */

enum read_mode { READ_TRY, READ_BLOCK };

static int read_one(trace_id_t t, enum read_mode mode, struct posix_trace_event_info *ev)
{
	static __thread unsigned char data[PAYLOAD_MAX];
	size_t len;
	int unavailable, err;
	if (mode == READ_TRY)
		err = posix_trace_trygetnext_event(t, ev, data, sizeof data, &len, &unavailable);
	else
		err = posix_trace_getnext_event(t, ev, data, sizeof data, &len, &unavailable);
	if (err)
		fail("reading the stream", err);
	return !unavailable;
}

struct analyzer {
	pthread_t th;
	trace_id_t trid;
	enum read_mode mode;
	uint64_t user_events;
};

/* Reads on CPU 0 until the STOP event that main records once the writer
 * is done. */
static void *analyzer_main(void *arg)
{
	struct analyzer *a = arg;
	struct posix_trace_event_info ev;
	pin(0);
	for (;;) {
		if (!read_one(a->trid, a->mode, &ev))
			continue;
		if (ev.posix_event_id == ev_id)
			a->user_events++;
		else if (ev.posix_event_id == POSIX_TRACE_STOP)
			break;
	}
	return NULL;
}

#define AN_EVENTS 4000000u

/* The writer (CPU 1) records into a default stream (LOOP, 4 MiB); with
 * mode >= 0 an analyzer reads meanwhile on CPU 0.  Returns the writer's ns
 * per event; *aux: the share (%) of its events the analyzer got, the rest
 * having been overwritten before it came to them. */
static double analyzed(int mode, double *aux)
{
	uint64_t n = scaled(AN_EVENTS);
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 1);
	struct analyzer a = {.trid = t, .mode = (enum read_mode)mode};
	int err;
	if (mode >= 0 && (err = pthread_create(&a.th, NULL, analyzer_main, &a)))
		fail("pthread_create", err);
	double v = run_writers(write_loop, 1, n, WARM, 16);
	if ((err = posix_trace_stop(t)))
		fail("posix_trace_stop", err);
	if (mode >= 0) {
		/* the analyzer ends at the STOP event; one that never sees it
		 * would hang the run, so give it a generous minute */
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_sec += 60;
		if ((err = pthread_timedjoin_np(a.th, NULL, &deadline))) {
			fprintf(stderr, "bench_event: the analyzer did not see the STOP event (%s)\n",
			        strerror(err));
			exit(1);
		}
		*aux = 100.0 * (double)a.user_events / (double)(n + WARM);
	}
	stream_end(t);
	return v;
}
static double c_an_alone(double *aux) { return analyzed(-1, aux); }
static double c_an_try(double *aux) { return analyzed(READ_TRY, aux); }
static double c_an_block(double *aux) { return analyzed(READ_BLOCK, aux); }

/* Drain rate: a writer on CPU 1 records without pause into a 64 MiB LOOP
 * stream; once it has recorded BACKLOG events, the analyzer on CPU 0 reads
 * BACKLOG events, timed.  The backlog never runs dry meanwhile (aux: the
 * reads that found nothing, expected 0), so this is how fast an analyzer
 * reads while a writer runs. */
#define BACKLOG 300000u

/* The endless writer's flags, each on blocks of its own: the reader's
 * stack must not share a line the writer reads per event. */
static struct {
	_Alignas(128) _Atomic uint64_t written;
	_Alignas(128) _Atomic int stop;
	char pad[124];
} endless;

static void *endless_writer(void *arg)
{
	(void)arg;
	_Alignas(64) unsigned char buf[16];
	uint64_t w[2];
	pin(1);
	for (uint64_t i = 1; !atomic_load_explicit(&endless.stop, memory_order_relaxed); i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		posix_trace_event(ev_id, buf, 16);
		if ((i & 1023) == 0)
			atomic_store_explicit(&endless.written, i, memory_order_relaxed);
	}
	return NULL;
}

static double drain(enum read_mode mode, double *aux)
{
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 64 * MiB, 1);
	uint64_t backlog = scaled(BACKLOG), got = 0, idle = 0;
	struct posix_trace_event_info ev;
	pthread_t wr;
	atomic_store(&endless.written, 0);
	atomic_store(&endless.stop, 0);
	pin(0);
	int err = pthread_create(&wr, NULL, endless_writer, NULL);
	if (err)
		fail("pthread_create", err);
	while (atomic_load_explicit(&endless.written, memory_order_relaxed) < backlog)
		sched_yield();
	uint64_t t0 = loop_ns();
	while (got < backlog) {
		if (read_one(t, mode, &ev))
			got++;
		else
			idle++;
	}
	uint64_t t1 = loop_ns();
	atomic_store(&endless.stop, 1);
	pthread_join(wr, NULL);
	stream_end(t);
	unpin();
	*aux = (double)idle;
	return (double)backlog * 1e3 / (double)(t1 - t0);
}
static double c_drain_try(double *aux) { return drain(READ_TRY, aux); }
static double c_drain_block(double *aux) { return drain(READ_BLOCK, aux); }

/* ------------------------------------------------------------------ */
/* bytes per recorded event in the stream                              */

#define MAX_STREAM_FDS 64

struct stream_fd {
	ino_t ino;
	uint64_t allocated; /* st_blocks * 512 */
};

/* This process's open stream memfds (the fds of /proc/self/fd whose link
 * reads "/memfd:posixtrace-stream (deleted)"). */
static int stream_fds(struct stream_fd *out, int max)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int k = 0;
	if (!d)
		return 0;
	while ((de = readdir(d)) && k < max) {
		char link[256];
		struct stat st;
		ssize_t len = readlinkat(dirfd(d), de->d_name, link, sizeof link - 1);
		if (len <= 0)
			continue;
		link[len] = '\0';
		if (strncmp(link, STREAM_MEMFD, strlen(STREAM_MEMFD)) != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, 0) != 0)
			continue;
		out[k].ino = st.st_ino;
		out[k].allocated = (uint64_t)st.st_blocks * 512u;
		k++;
	}
	closedir(d);
	return k;
}

/* Bytes allocated to the stream memfd that is open now and was not in
 * `before`: the stream created in between.  0 if there is none. */
static uint64_t new_stream_bytes(const struct stream_fd *before, int nbefore)
{
	struct stream_fd now[MAX_STREAM_FDS];
	int k = stream_fds(now, MAX_STREAM_FDS);
	for (int i = 0; i < k; i++) {
		int seen = 0;
		for (int j = 0; j < nbefore; j++)
			seen |= now[i].ino == before[j].ino;
		if (!seen)
			return now[i].allocated;
	}
	return 0;
}

#define MEM_STREAM (16 * MiB)
static uint64_t mem_bytes; /* for the note */

/* A 16 MiB UNTIL_FULL stream filled with 16-byte events until it is full
 * (then stopped), its memory measured, then read out: allocated bytes per
 * event it held.  aux: events held. */
static double c_mem16(double *aux)
{
	struct stream_fd before[MAX_STREAM_FDS];
	int nbefore = stream_fds(before, MAX_STREAM_FDS);
	trace_id_t t = stream_new(POSIX_TRACE_UNTIL_FULL, MEM_STREAM, 1);
	struct posix_trace_status_info st;
	int err;
	uint64_t posted = 0;
	pin(1);
	do {
		/* every event takes 16 bytes or more, so it is full by then */
		if (posted > 2 * MEM_STREAM / 16) {
			fprintf(stderr, "bench_event: mem16: %llu events and the stream is not full\n",
			        (unsigned long long)posted);
			exit(1);
		}
		write_loop(10000, 16);
		posted += 10000;
		if ((err = posix_trace_get_status(t, &st)))
			fail("posix_trace_get_status", err);
	} while (st.posix_stream_full_status != POSIX_TRACE_FULL);
	unpin();
	if ((err = posix_trace_stop(t)))
		fail("posix_trace_stop", err);
	mem_bytes = new_stream_bytes(before, nbefore);
	struct posix_trace_event_info ev;
	uint64_t held = 0;
	while (read_one(t, READ_TRY, &ev))
		held += ev.posix_event_id == ev_id;
	stream_end(t);
	*aux = (double)held;
	if (!held || !mem_bytes) {
		fprintf(stderr, "bench_event: mem16: %s\n",
		        !mem_bytes ? "no new " STREAM_MEMFD " among the fds of /proc/self/fd"
		                   : "the full stream held no event");
		return -1;
	}
	return (double)mem_bytes / (double)held;
}

/* ------------------------------------------------------------------ */
/* harness                                                             */

struct bcase {
	const char *key, *name, *unit;
	double (*fn)(double *aux);
	int named_only; /* runs only when FILTER names it (=KEY): run.sh pairs it */
	double v[MAXREPS], aux[MAXREPS];
};

#define C(k, nm, u, f) {.key = k, .name = nm, .unit = u, .fn = f}
#define C_NAMED(k, nm, u, f) {.key = k, .name = nm, .unit = u, .fn = f, .named_only = 1}
static struct bcase cases[] = {
	C("off_none", "posix_trace_event, no stream exists", "ns/ev", c_off_none),
	C("empty", "  baseline: empty out-of-line call, same loop", "ns/ev", c_empty),
	C("off_created", "posix_trace_event, a stream created, not started", "ns/ev", c_off_created),
	C("filtered", "posix_trace_event, running, event filtered", "ns/ev", c_filtered),
	C("en0", "posix_trace_event, running, 0 B payload", "ns/ev", c_en0),
	C("en16", "posix_trace_event, running, 16 B payload", "ns/ev", c_en16),
	C("en256", "posix_trace_event, running, 256 B payload", "ns/ev", c_en256),
	C("enmax", "posix_trace_event, running, max-data-size payload", "ns/ev", c_enmax),
	C("en16_2thr", "posix_trace_event, 16 B, 2 threads (aggregate)", "ns/ev", c_en16_2thr),
#ifndef BENCH_BASELINE
	C("en16_trigger", "posix_trace_event, 16 B, a trigger armed on another type", "ns/ev",
	  c_en16_trigger),
#endif
	C("en16_nowrap", "posix_trace_event, 16 B, stream holds all (no wrap)", "ns/ev",
	  c_en16_nowrap),
	C_NAMED("en16_flush", "posix_trace_event, 16 B, FLUSH stream never full", "ns/ev",
	        c_en16_flush),
#ifndef BENCH_BASELINE
	C_NAMED("en16_flush_block", "  the same, writers may wait (--block), never do", "ns/ev",
	        c_en16_flush_block),
#endif
	C("an_alone", "writer alone (4 MiB LOOP stream)", "ns/ev", c_an_alone),
	C("an_try", "  writer + live analyzer, trygetnext loop", "ns/ev", c_an_try),
	C("an_block", "  writer + live analyzer, getnext (blocks)", "ns/ev", c_an_block),
	C("drain_try", "analyzer read rate, trygetnext, writer running", "Mev/s", c_drain_try),
	C("drain_block", "analyzer read rate, getnext, writer running", "Mev/s", c_drain_block),
	C("mem16", "stream bytes per 16 B event (16 MiB UNTIL_FULL)", "B/ev", c_mem16),
};
#undef C
#undef C_NAMED
#define NCASES (sizeof cases / sizeof cases[0])

/* A case that hangs (a reader that never sees its STOP event, a writer
 * stuck in the library) ends the process with its name, instead of
 * leaving bench/run.sh to kill a silent process much later. */
#define CASE_LIMIT 120
#define STRINGIFY(x) #x
#define TO_STRING(x) STRINGIFY(x)
static const char *volatile running_case = "";

static void case_timeout(int sig)
{
	static const char head[] = "bench_event: case ", tail[] = " did not finish in " TO_STRING(CASE_LIMIT) " s\n";
	const char *key = running_case;
	(void)sig;
	if (write(2, head, sizeof head - 1) < 0 || write(2, key, strlen(key)) < 0 ||
	    write(2, tail, sizeof tail - 1) < 0)
		_exit(3);
	_exit(3);
}

static double run_case(struct bcase *c, double *aux)
{
	running_case = c->key;
	alarm(CASE_LIMIT);
	double v = c->fn(aux);
	alarm(0);
	return v;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void stats(const double *v, int k, double *med, double *lo, double *hi)
{
	double s[MAXREPS];
	memcpy(s, v, (size_t)k * sizeof *v);
	qsort(s, (size_t)k, sizeof *s, cmp_double);
	*med = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	*lo = s[0];
	*hi = s[k - 1];
}

static int selected(const struct bcase *c)
{
	if (filter && filter[0] == '=')
		return !strcmp(c->key, filter + 1);
	if (c->named_only)
		return 0;
	return !filter || strstr(c->key, filter) != NULL;
}

static void note_for(const struct bcase *c, double aux, char *note, size_t size)
{
	note[0] = '\0';
	if (!strcmp(c->key, "an_try") || !strcmp(c->key, "an_block"))
		snprintf(note, size, "the analyzer (CPU 0) read %.1f%% of the events", aux);
	else if (!strcmp(c->key, "mem16"))
		snprintf(note, size, "%.0f events held; %llu B allocated to the stream's memfd", aux,
		         (unsigned long long)mem_bytes);
	else if (!strcmp(c->key, "enmax"))
		snprintf(note, size, "max data size %zu B", max_data);
	else if (!strncmp(c->key, "drain", 5))
		snprintf(note, size, "%llu events read; reads finding nothing: %.0f",
		         (unsigned long long)scaled(BACKLOG), aux);
	else if (!strcmp(c->key, "en16_nowrap"))
		snprintf(note, size, "events lost: %.0f", aux);
}

int main(int argc, char **argv)
{
	choose_loop_clock();
	if (argc > 1)
		reps = atoi(argv[1]);
	if (argc > 2)
		scale = atof(argv[2]);
	if (argc > 3)
		filter = argv[3];
	if (reps < 1 || reps > MAXREPS)
		reps = 1;
	if (scale <= 0)
		scale = 1;
	pthread_getaffinity_np(pthread_self(), sizeof initial_cpus, &initial_cpus);
	signal(SIGALRM, case_timeout);

	int err = posix_trace_eventid_open("bench.event", &ev_id);
	if (err)
		fail("posix_trace_eventid_open", err);
	trace_attr_t a;
	if ((err = posix_trace_attr_init(&a)) || (err = posix_trace_attr_getmaxdatasize(&a, &max_data)))
		fail("trace attributes", err);
	posix_trace_attr_destroy(&a);
	if (max_data > PAYLOAD_MAX)
		max_data = PAYLOAD_MAX;

	for (int r = 0; r < reps; r++)
		for (size_t i = 0; i < NCASES; i++)
			if (selected(&cases[i]))
				cases[i].v[r] = run_case(&cases[i], &cases[i].aux[r]);

	for (size_t i = 0; i < NCASES; i++) {
		struct bcase *c = &cases[i];
		double med, lo, hi, amed, alo, ahi;
		char note[200];
		if (!selected(c))
			continue;
		stats(c->v, reps, &med, &lo, &hi);
		if (lo < 0)
			continue; /* not measured in some repetition: said on stderr */
		stats(c->aux, reps, &amed, &alo, &ahi);
		note_for(c, amed, note, sizeof note);
		printf("ROW|%s|%s|%.2f|%.2f|%.2f|%s|%s|%.2f\n", c->key, c->name, med, lo, hi, c->unit,
		       note, amed);
	}
	fflush(stdout);
	return 0;
}
