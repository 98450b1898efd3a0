/*
 * bench_event - cost of recording and reading POSIX trace events with
 * libposixtrace (linked statically, -O2 -g, see the Makefile's bench rule).
 *
 * Every case runs on threads pinned to fixed CPUs (one writer: CPU 1; two
 * writers: CPUs 0 and 1; an analyzer thread: CPU 0, its writer CPU 1).  Each
 * thread first makes WARM untimed calls (which registers the thread, claims
 * its lane and touches the stream's pages), then all threads meet at a
 * barrier and the timed loop starts.  Repetitions are interleaved across the
 * cases (rep-major), like the anchors' floor benchmark, so that slow phases
 * of a noisy host spread over every row.  Each row reports median, min and
 * max over the repetitions.
 *
 * Output, one line per row (parsed by bench/run.sh):
 *   ROW|<key>|<name>|<median>|<min>|<max>|<unit>|<note>
 *
 * Usage: bench_event [REPS [SCALE [FILTER]]]
 *   REPS repetitions (default 7), SCALE multiplies the iteration counts,
 *   FILTER runs only the cases whose key contains that string ("=KEY": only
 *   the case KEY), e.g. for perf record.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#define NOIPA __attribute__((noipa))
#define CBAR() __asm__ volatile("" ::: "memory")
#define MAXREPS 64
#define MiB (1024u * 1024u)
#define PT_BENCH_BUF 4096 /* largest payload the writer loop sends */

static int reps = 7;
static double scale = 1.0;
static const char *filter;
static trace_event_id_t ev_id;   /* the user event every writer records */
static size_t max_data;          /* the streams' max data size (default) */
static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what, int err)
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
		die("pthread_setaffinity_np", err);
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
		die("trace attributes", err);
	if ((err = posix_trace_create(0, &a, &trid)))
		die("posix_trace_create", err);
	posix_trace_attr_destroy(&a);
	if (start && (err = posix_trace_start(trid)))
		die("posix_trace_start", err);
	return trid;
}

static void stream_end(trace_id_t trid)
{
	int err = posix_trace_shutdown(trid);
	if (err)
		die("posix_trace_shutdown", err);
}

/* ------------------------------------------------------------------ */
/* writer loops                                                        */

/* The same payload pattern as the anchors: two changing 64-bit words in
 * front, the rest of the buffer (for the larger payloads) left as is. */
NOIPA static uint64_t write_loop(uint64_t n, size_t len)
{
	_Alignas(64) static __thread unsigned char buf[PT_BENCH_BUF];
	uint64_t w[2];
	for (uint64_t i = 0; i < n; i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		posix_trace_event(ev_id, buf, len);
	}
	return n;
}

/* Baseline: the same loop calling an empty non-inlined function. */
NOIPA static void empty_event(trace_event_id_t id, const void *data, size_t len)
{
	(void)id;
	(void)data;
	(void)len;
	CBAR();
}

NOIPA static uint64_t empty_loop(uint64_t n, size_t len)
{
	_Alignas(64) unsigned char buf[16];
	uint64_t w[2];
	for (uint64_t i = 0; i < n; i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		empty_event(ev_id, buf, len);
	}
	return n;
}

/* ------------------------------------------------------------------ */
/* threads                                                             */

struct worker {
	pthread_t th;
	int cpu;
	uint64_t warm, n, t0, t1;
	size_t len;
	uint64_t (*loop)(uint64_t, size_t);
	pthread_barrier_t *bar;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pin(w->cpu);
	if (w->warm)
		w->loop(w->warm, w->len);
	pthread_barrier_wait(w->bar);
	w->t0 = now_ns();
	w->loop(w->n, w->len);
	w->t1 = now_ns();
	return NULL;
}

/* Runs `loop` on nthreads pinned threads (1: CPU 1; 2: CPUs 0, 1) and
 * returns aggregate ns per event: (last end - first start) / events. */
static double run_writers(uint64_t (*loop)(uint64_t, size_t), int nthreads, uint64_t n,
                          uint64_t warm, size_t len)
{
	struct worker w[2];
	pthread_barrier_t bar;
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		w[i] = (struct worker){.cpu = nthreads == 1 ? 1 : i, .warm = warm, .n = n,
		                       .len = len, .loop = loop, .bar = &bar};
		int err = pthread_create(&w[i].th, NULL, worker_main, &w[i]);
		if (err)
			die("pthread_create", err);
	}
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(w[i].th, NULL);
		if (w[i].t0 < t0)
			t0 = w[i].t0;
		if (w[i].t1 > t1)
			t1 = w[i].t1;
	}
	pthread_barrier_destroy(&bar);
	return (double)(t1 - t0) / (double)(n * (uint64_t)nthreads);
}

/* ------------------------------------------------------------------ */
/* cases: each returns one sample (ns per event, or M events/s)        */

#define WARM 200000ull

static double c_empty(void) { return run_writers(empty_loop, 1, scaled(50000000), 0, 16); }

/* No stream running: a stream exists but is not started. */
static double c_disabled(void)
{
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 0);
	double v = run_writers(write_loop, 1, scaled(50000000), WARM, 16);
	stream_end(t);
	return v;
}

/* Stream running, the event type in the stream's filter. */
static double c_filtered(void)
{
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 1);
	trace_event_set_t set;
	posix_trace_eventset_empty(&set);
	posix_trace_eventset_add(ev_id, &set);
	int err = posix_trace_set_filter(t, &set, POSIX_TRACE_SET_EVENTSET);
	if (err)
		die("posix_trace_set_filter", err);
	double v = run_writers(write_loop, 1, scaled(20000000), WARM, 16);
	stream_end(t);
	return v;
}

/* Recording into a running stream with the default attributes (LOOP,
 * 4 MiB, max data size 1024): no reader, so the stream wraps and writers
 * take over the oldest chunks, like the floor's overwrite ring. */
static double enabled(size_t len, int threads, uint64_t n)
{
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 1);
	double v = run_writers(write_loop, threads, scaled(n), WARM, len);
	stream_end(t);
	return v;
}
static double c_en0(void) { return enabled(0, 1, 2000000); }
static double c_en16(void) { return enabled(16, 1, 2000000); }
static double c_en256(void) { return enabled(256, 1, 2000000); }
static double c_enmax(void) { return enabled(max_data, 1, 1000000); }
static double c_en16_2(void) { return enabled(16, 2, 2000000); }

/* Same, but the stream is large enough to hold every event: no wrap. */
static double c_en16_nowrap(void)
{
	uint64_t n = scaled(2000000);
	trace_id_t t = stream_new(POSIX_TRACE_UNTIL_FULL, (size_t)((n + WARM) * 48 + 8 * MiB), 1);
	double v = run_writers(write_loop, 1, n, WARM, 16);
	struct posix_trace_status_info st;
	posix_trace_get_status(t, &st);
	if (st.posixtrace_lost_events)
		fprintf(stderr, "en16_nowrap: %llu events lost\n", st.posixtrace_lost_events);
	stream_end(t);
	return v;
}

/* ---- the online analyzer ------------------------------------------ */

#define AN_STREAM (64 * MiB)
#define AN_N 4000000ull
#define BACKLOG 300000ull

enum { RD_TRY, RD_BLOCK };

struct reader {
	pthread_t th;
	trace_id_t trid;
	int mode;
	uint64_t user_events, idle;
	/* backlog drain */
	uint64_t backlog;              /* 0: live reader */
	_Atomic uint64_t *written;
	_Atomic int *stop_writer;
	double mev_s;
};

static int read_one(struct reader *r, struct posix_trace_event_info *ev)
{
	static __thread unsigned char data[4096];
	size_t len;
	int unavailable, err;
	if (r->mode == RD_TRY)
		err = posix_trace_trygetnext_event(r->trid, ev, data, sizeof data, &len,
		                                   &unavailable);
	else
		err = posix_trace_getnext_event(r->trid, ev, data, sizeof data, &len, &unavailable);
	if (err)
		die("getnext", err);
	return !unavailable;
}

/* Live analyzer: reads until it sees the STOP event that main records
 * after the writer has finished. */
static void *reader_live(void *arg)
{
	struct reader *r = arg;
	struct posix_trace_event_info ev;
	pin(0);
	for (;;) {
		if (!read_one(r, &ev)) {
			r->idle++;
			continue;
		}
		if (ev.posix_event_id == ev_id)
			r->user_events++;
		else if (ev.posix_event_id == POSIX_TRACE_STOP)
			break;
	}
	return NULL;
}

struct an_sample {
	double writer_ns, read_frac;
};

/* One writer (CPU 1) records AN_N events into a default (4 MiB, LOOP)
 * stream; with mode >= 0 an analyzer on CPU 0 reads them while they are
 * written (an analyzer that falls behind loses the oldest events).  Returns the writer's ns/event
 * and the fraction of its events the analyzer got (the rest were lost). */
static struct an_sample analyzer_live(int mode)
{
	uint64_t n = scaled(AN_N);
	/* The default stream size: the writer's warm-up has touched every
	 * page before the timing starts, with or without an analyzer. */
	trace_id_t t = stream_new(POSIX_TRACE_LOOP, 4 * MiB, 1);
	struct reader r = {.trid = t, .mode = mode};
	if (mode >= 0) {
		int err = pthread_create(&r.th, NULL, reader_live, &r);
		if (err)
			die("pthread_create", err);
	}
	struct an_sample s = {.writer_ns = run_writers(write_loop, 1, n, WARM, 16)};
	int err = posix_trace_stop(t);
	if (err)
		die("posix_trace_stop", err);
	if (mode >= 0) {
		pthread_join(r.th, NULL);
		s.read_frac = (double)r.user_events / (double)(n + WARM);
	}
	stream_end(t);
	return s;
}

static struct an_sample last_try, last_block;
static double last_alone;
static double c_an_alone(void) { return last_alone = analyzer_live(-1).writer_ns; }
static double c_an_try(void) { last_try = analyzer_live(RD_TRY); return last_try.writer_ns; }
static double c_an_block(void)
{
	last_block = analyzer_live(RD_BLOCK);
	return last_block.writer_ns;
}

/* Backlog drain: the writer runs without pause; once it has recorded
 * BACKLOG events the analyzer reads BACKLOG events, timed.  The backlog
 * never empties during those reads (it only loses what is read), so the
 * analyzer is never idle and the rate is its drain rate with a writer
 * running on the other CPU. */
static void *writer_endless(void *arg)
{
	struct reader *r = arg;
	/* Copied once: the reader's stack (its event, its counters) must not
	 * share a line this loop reads per event. */
	_Atomic int *stop = r->stop_writer;
	_Atomic uint64_t *written = r->written;
	_Alignas(64) unsigned char buf[16];
	uint64_t w[2];
	pin(1);
	for (uint64_t i = 1; !atomic_load_explicit(stop, memory_order_relaxed); i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		memcpy(buf, w, sizeof w);
		posix_trace_event(ev_id, buf, 16);
		if ((i & 1023) == 0)
			atomic_store_explicit(written, i, memory_order_relaxed);
	}
	return NULL;
}

/* The writer's flags, each on lines of their own. */
static struct {
	_Alignas(128) _Atomic uint64_t written;
	_Alignas(128) _Atomic int stop;
	char pad[124];
} endless;

static uint64_t last_idle;

static double drain_policy(int mode, int policy)
{
	trace_id_t t = stream_new(policy, AN_STREAM, 1);
	atomic_store(&endless.written, 0);
	atomic_store(&endless.stop, 0);
	uint64_t backlog = scaled(BACKLOG);
	struct reader r = {.trid = t, .mode = mode, .written = &endless.written,
	                   .stop_writer = &endless.stop};
	struct posix_trace_event_info ev;
	pthread_t wr;
	pin(0);
	int err = pthread_create(&wr, NULL, writer_endless, &r);
	if (err)
		die("pthread_create", err);
	while (atomic_load_explicit(&endless.written, memory_order_relaxed) < backlog)
		sched_yield();
	uint64_t got = 0, t0 = now_ns();
	while (got < backlog) {
		if (read_one(&r, &ev))
			got++;
		else
			r.idle++;
	}
	uint64_t t1 = now_ns();
	atomic_store(&endless.stop, 1);
	pthread_join(wr, NULL);
	last_idle = r.idle;
	stream_end(t);
	return (double)backlog * 1e3 / (double)(t1 - t0);
}
static double c_drain_try(void) { return drain_policy(RD_TRY, POSIX_TRACE_LOOP); }
static double c_drain_block(void) { return drain_policy(RD_BLOCK, POSIX_TRACE_LOOP); }
/* The same with UNTIL_FULL: the writer's events past a full stream are
 * lost instead of overwriting the oldest ones, which are those the reader
 * is reading, so this measures the reader rather than the overwrite race. */
static double c_drain_try_uf(void) { return drain_policy(RD_TRY, POSIX_TRACE_UNTIL_FULL); }

/* ---- memory -------------------------------------------------------- */

/* Bytes of the stream mapping(s) of this process. */
static uint64_t stream_mapping_bytes(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uint64_t total = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long lo, hi;
		if (strstr(line, "posixtrace-stream") && sscanf(line, "%lx-%lx", &lo, &hi) == 2)
			total += hi - lo;
	}
	fclose(f);
	return total;
}

static uint64_t mem_events, mem_bytes;
static size_t mem_stream_size = 16 * MiB;

/* An UNTIL_FULL stream is filled with 16-byte events by one thread, then
 * read out completely: bytes of the whole mapping per event it held. */
static double c_mem16(void)
{
	trace_id_t t = stream_new(POSIX_TRACE_UNTIL_FULL, mem_stream_size, 1);
	uint64_t cap = mem_stream_size / 16 + 100000;
	run_writers(write_loop, 1, cap, 0, 16);
	mem_bytes = stream_mapping_bytes();
	struct reader r = {.trid = t, .mode = RD_TRY};
	struct posix_trace_event_info ev;
	uint64_t got = 0;
	while (read_one(&r, &ev))
		got += ev.posix_event_id == ev_id;
	mem_events = got;
	stream_end(t);
	return got ? (double)mem_bytes / (double)got : 0;
}

/* ------------------------------------------------------------------ */
/* harness                                                             */

struct bcase {
	const char *key, *name, *unit;
	double (*fn)(void);
	double v[MAXREPS];
	double aux[MAXREPS];
};

#define C(k, nm, u, f) {.key = k, .name = nm, .unit = u, .fn = f}
static struct bcase cases[] = {
	C("empty", "baseline: empty noinline call, same loop", "ns/ev", c_empty),
	C("disabled", "posix_trace_event, no stream running", "ns/ev", c_disabled),
	C("filtered", "posix_trace_event, running, event filtered", "ns/ev", c_filtered),
	C("en0", "posix_trace_event, running, 0 B payload", "ns/ev", c_en0),
	C("en16", "posix_trace_event, running, 16 B payload", "ns/ev", c_en16),
	C("en256", "posix_trace_event, running, 256 B payload", "ns/ev", c_en256),
	C("enmax", "posix_trace_event, running, max-data-size payload", "ns/ev", c_enmax),
	C("en16_2thr", "posix_trace_event, 16 B, 2 threads (aggregate)", "ns/ev", c_en16_2),
	C("en16_nowrap", "posix_trace_event, 16 B, stream holds all (no wrap)", "ns/ev",
	  c_en16_nowrap),
	C("an_alone", "analyzer case: 1 writer alone (4 MiB LOOP stream)", "ns/ev", c_an_alone),
	C("an_try", "  writer + live analyzer, trygetnext (spins)", "ns/ev", c_an_try),
	C("an_block", "  writer + live analyzer, getnext (blocks)", "ns/ev", c_an_block),
	C("drain_try", "analyzer drain rate, trygetnext, writer running", "Mev/s", c_drain_try),
	C("drain_block", "analyzer drain rate, getnext, writer running", "Mev/s", c_drain_block),
	C("drain_try_uf", "analyzer drain rate, trygetnext, UNTIL_FULL stream, writer running",
	  "Mev/s", c_drain_try_uf),
	C("mem16", "memory per 16 B event (16 MiB UNTIL_FULL stream)", "B/ev", c_mem16),
};
#undef C
#define NCASES (sizeof cases / sizeof cases[0])

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void stats(double *v, int k, double *med, double *lo, double *hi)
{
	double s[MAXREPS];
	memcpy(s, v, (size_t)k * sizeof *v);
	qsort(s, (size_t)k, sizeof *s, cmp_d);
	*med = k % 2 ? s[k / 2] : (s[k / 2 - 1] + s[k / 2]) / 2;
	*lo = s[0];
	*hi = s[k - 1];
}

/* FILTER: cases whose key contains it; "=KEY": that case only. */
static int selected(const struct bcase *c)
{
	if (!filter)
		return 1;
	if (filter[0] == '=')
		return !strcmp(c->key, filter + 1);
	return strstr(c->key, filter) != NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1)
		reps = atoi(argv[1]);
	if (argc > 2)
		scale = atof(argv[2]);
	if (argc > 3)
		filter = argv[3];
	if (reps < 1 || reps > MAXREPS)
		reps = 7;
	if (scale <= 0)
		scale = 1;

	int err = posix_trace_eventid_open("bench.event", &ev_id);
	if (err)
		die("posix_trace_eventid_open", err);
	trace_attr_t a;
	posix_trace_attr_init(&a);
	posix_trace_attr_getmaxdatasize(&a, &max_data);
	posix_trace_attr_destroy(&a);
	if (max_data > PT_BENCH_BUF)
		max_data = PT_BENCH_BUF;

	for (int r = 0; r < reps; r++) {
		for (size_t i = 0; i < NCASES; i++) {
			if (!selected(&cases[i]))
				continue;
			cases[i].v[r] = cases[i].fn();
			if (!strcmp(cases[i].key, "an_try"))
				cases[i].aux[r] = 100 * last_try.read_frac;
			else if (!strcmp(cases[i].key, "an_block"))
				cases[i].aux[r] = 100 * last_block.read_frac;
			else if (!strncmp(cases[i].key, "drain", 5))
				cases[i].aux[r] = (double)last_idle;
			else if (!strcmp(cases[i].key, "mem16"))
				cases[i].aux[r] = (double)mem_events;
		}
	}

	for (size_t i = 0; i < NCASES; i++) {
		struct bcase *c = &cases[i];
		if (!selected(c))
			continue;
		double med, lo, hi, am, alo, ahi;
		char note[200] = "";
		stats(c->v, reps, &med, &lo, &hi);
		stats(c->aux, reps, &am, &alo, &ahi);
		if (!strcmp(c->key, "an_try") || !strcmp(c->key, "an_block")) {
			snprintf(note, sizeof note, "analyzer on CPU0 read med %.1f%% (%.1f..%.1f%%) of events",
			         am, alo, ahi);
		} else if (!strcmp(c->key, "mem16")) {
			snprintf(note, sizeof note, "%llu events held, mapping %llu B; record 24 B + data",
			         (unsigned long long)mem_events, (unsigned long long)mem_bytes);
		} else if (!strcmp(c->key, "enmax")) {
			snprintf(note, sizeof note, "max-data-size = %zu B", max_data);
		} else if (!strncmp(c->key, "drain", 5)) {
			snprintf(note, sizeof note, "backlog of %llu events read; idle polls med %.0f",
			         (unsigned long long)scaled(BACKLOG), am);
		}
		/* the last field is the median of the auxiliary value (run.sh
		 * aggregates it over separate invocations) */
		printf("ROW|%s|%s|%.2f|%.2f|%.2f|%s|%s|%.2f\n", c->key, c->name, med, lo, hi,
		       c->unit, note, am);
	}
	fflush(stdout);
	return 0;
}
