/* SPDX-License-Identifier: MIT */
/*
 * floor - the cost of the bare ingredients of posix_trace_event() on this
 * machine, measured the way bench_event measures the library, so that the
 * two can be divided in one `make bench` run.
 *
 *   - reading a clock: clock_gettime(CLOCK_MONOTONIC) through the vDSO, and
 *     on x86-64 the rdtsc and rdtscp instructions;
 *   - the least a recorder can do per event: a per-thread ring (one per
 *     thread, 4 MiB like the default stream, pages touched beforehand, no
 *     reader, it wraps) into which a non-inlined event call reserves 48
 *     bytes, takes a timestamp and stores the record {event id, thread id,
 *     timestamp, caller address, pid, payload length, 16-byte payload},
 *     then publishes it with a release store of the ring's count.  Thread id
 *     and pid are cached, the caller address is the return address, the
 *     payload is copied with its run-time length, as the real call must.
 *     Timed once with clock_gettime and once with rdtsc as the record's
 *     clock, with 1 thread (CPU 1) and 2 threads (CPUs 0 and 1; aggregate:
 *     (last end - first start) / all events).
 *
 * Usage:
 *   floor [SCALE [FILTER]]  one repetition of every row whose key contains
 *                           FILTER; SCALE multiplies the iteration counts
 *   floor clock             which clock a recorder uses here (below)
 *   floor readlog LOG EVENTS [PASSES]
 *                           the least a reader of a log in the page cache
 *                           does: the file read in 2 MiB windows with pread
 *                           into one buffer (huge-page advised, as the
 *                           library's), once with nothing more and once with
 *                           a CRC-32C over every byte, the check each block
 *                           needs (x86-64: the crc32 instruction, three
 *                           independent chains over thirds of each 64 KiB,
 *                           not combined); EVENTS (the log's, as the reader
 *                           counts them) turns the time into events per
 *                           second.  The median of PASSES [3] after an
 *                           untimed one, on the calling CPU.
 *
 * Output, one line per row (parsed by bench/run.sh):
 *   ROW|<key>|<name>|<ns>|<ns>|<ns>|ns/ev|<note>|0
 * (ns per event or per clock read; one repetition, so median = min = max)
 * (readlog: M events/s) and for `floor clock`:
 *   CLOCK|tsc|<why>   or   CLOCK|clock_gettime|<why>
 * "tsc" when the kernel's clocksource is tsc and the TSC is invariant
 * (CPUID 0x80000007, EDX bit 8): then raw TSC timestamps are as good as the
 * kernel's clock, and the rdtsc ring is the floor a recorder is held to.
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
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#define HAVE_TSC 1
#else
#define HAVE_TSC 0
#endif

#include "loopclock.h"

/* Kept out of line and out of inter-procedural analysis, so that the
 * compiler cannot fold a benchmarked call into its loop (clang has no
 * noipa; the event functions are also reached through a volatile pointer). */
#if defined(__clang__)
#define NOIPA __attribute__((noinline))
#else
#define NOIPA __attribute__((noinline, noipa))
#endif
#define ALWAYS_INLINE inline __attribute__((always_inline))
#define RING_BYTES (4u * 1024u * 1024u)
#define WARM_EVENTS 200000u

static double scale = 1.0;
static const char *filter;
static volatile uint64_t sink;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}


static void fail(const char *what, int err)
{
	fprintf(stderr, "floor: %s: %s\n", what, strerror(err));
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

static uint64_t scaled(uint64_t n)
{
	n = (uint64_t)((double)n * scale);
	return n < 1000 ? 1000 : n;
}

/* ------------------------------------------------------------------ */
/* the clock decision                                                  */

static int clocksource_is_tsc(void)
{
	char name[64] = "";
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (!f)
		return 0;
	if (!fgets(name, sizeof name, f))
		name[0] = '\0';
	fclose(f);
	return strncmp(name, "tsc", 3) == 0 && (name[3] == '\n' || name[3] == '\0');
}

static int tsc_is_invariant(void)
{
#if HAVE_TSC
	unsigned a, b, c, d;
	if (!__get_cpuid(0x80000007u, &a, &b, &c, &d))
		return 0; /* the leaf does not exist */
	return (d >> 8) & 1;
#else
	return 0;
#endif
}

static int print_clock(void)
{
	int src = clocksource_is_tsc(), inv = tsc_is_invariant();
	if (HAVE_TSC && src && inv)
		printf("CLOCK|tsc|clocksource tsc, invariant TSC\n");
	else
		printf("CLOCK|clock_gettime|%s\n",
		       !HAVE_TSC ? "not x86-64"
		       : !src    ? "kernel clocksource is not tsc"
		                 : "TSC not invariant (CPUID 0x80000007 EDX bit 8 clear)");
	return 0;
}

/* ------------------------------------------------------------------ */
/* clock costs                                                         */

NOIPA static uint64_t clock_mono_loop(uint64_t n)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++)
		sum += mono_ns();
	return sum;
}

#if HAVE_TSC
NOIPA static uint64_t rdtsc_loop(uint64_t n)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++)
		sum += __rdtsc();
	return sum;
}

NOIPA static uint64_t rdtscp_loop(uint64_t n)
{
	uint64_t sum = 0;
	unsigned cpu;
	for (uint64_t i = 0; i < n; i++)
		sum += __rdtscp(&cpu);
	return sum + cpu;
}
#endif

/* ------------------------------------------------------------------ */
/* the per-thread ring                                                 */

struct floor_record {
	uint32_t id;
	uint32_t tid;
	uint64_t ts;
	uint64_t pc;
	uint32_t pid;
	uint32_t len;
	unsigned char payload[16];
};
_Static_assert(sizeof(struct floor_record) == 48, "the floor's record is 48 bytes");

/* One per thread; the published count on a block of its own, as a reader
 * would poll it, apart from the writer's private cursor. */
struct floor_ring {
	_Alignas(128) _Atomic uint64_t published;
	_Alignas(128) unsigned char *base;
	size_t next;                 /* byte offset of the next record */
	char pad[128 - sizeof(unsigned char *) - sizeof(size_t)];
};

static struct floor_ring rings[2];
static __thread struct floor_ring *my_ring;
static __thread uint32_t my_tid;
static uint32_t my_pid;

static ALWAYS_INLINE void ring_put(uint64_t ts, uint32_t id, const void *data, size_t len,
                                   uint64_t pc)
{
	struct floor_ring *r = my_ring;
	size_t at = r->next;
	if (at + sizeof(struct floor_record) > RING_BYTES)
		at = 0;
	r->next = at + sizeof(struct floor_record);
	struct floor_record *rec = (struct floor_record *)(r->base + at);
	if (len > sizeof rec->payload)
		len = sizeof rec->payload;
	rec->id = id;
	rec->tid = my_tid;
	rec->ts = ts;
	rec->pc = pc;
	rec->pid = my_pid;
	rec->len = (uint32_t)len;
	memcpy(rec->payload, data, len);
	uint64_t count = atomic_load_explicit(&r->published, memory_order_relaxed);
	atomic_store_explicit(&r->published, count + 1, memory_order_release);
}

NOIPA static void event_mono(uint32_t id, const void *data, size_t len)
{
	ring_put(mono_ns(), id, data, len, (uint64_t)__builtin_return_address(0));
}

#if HAVE_TSC
NOIPA static void event_tsc(uint32_t id, const void *data, size_t len)
{
	ring_put(__rdtsc(), id, data, len, (uint64_t)__builtin_return_address(0));
}
#endif

typedef void (*event_fn)(uint32_t, const void *, size_t);
static event_fn volatile ring_mono_fn = event_mono;
#if HAVE_TSC
static event_fn volatile ring_tsc_fn = event_tsc;
#endif

/* The payload loop bench_event uses: two changing words, run-time length. */
NOIPA static uint64_t event_loop(event_fn fn, uint64_t n)
{
	uint64_t w[2];
	size_t len = sizeof w;
	for (uint64_t i = 0; i < n; i++) {
		w[0] = i;
		w[1] = i * 0x9e3779b97f4a7c15ull;
		fn(7, w, len);
	}
	return w[0];
}

static void ring_setup(struct floor_ring *r)
{
	if (!r->base) {
		r->base = aligned_alloc(4096, RING_BYTES);
		if (!r->base)
			fail("aligned_alloc", ENOMEM);
	}
	memset(r->base, 0, RING_BYTES);
	r->next = 0;
	atomic_store(&r->published, 0);
}

/* ------------------------------------------------------------------ */
/* threads                                                             */

enum kind { K_CLOCK, K_TSC, K_TSCP, K_RING_MONO, K_RING_TSC };

struct worker {
	pthread_t th;
	int index, cpu;
	enum kind kind;
	uint64_t n, t0, t1;
	pthread_barrier_t *start;
};

static uint64_t run_kind(enum kind kind, uint64_t n)
{
	switch (kind) {
	case K_CLOCK:
		return clock_mono_loop(n);
#if HAVE_TSC
	case K_TSC:
		return rdtsc_loop(n);
	case K_TSCP:
		return rdtscp_loop(n);
	case K_RING_TSC:
		return event_loop(ring_tsc_fn, n);
#else
	case K_TSC:
	case K_TSCP:
	case K_RING_TSC:
		return 0;
#endif
	case K_RING_MONO:
		return event_loop(ring_mono_fn, n);
	}
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pin(w->cpu);
	my_ring = &rings[w->index];
	my_tid = (uint32_t)syscall(SYS_gettid);
	/* untimed: code, branch predictors, the ring's cache lines */
	sink += run_kind(w->kind, w->kind >= K_RING_MONO ? WARM_EVENTS : WARM_EVENTS / 10);
	pthread_barrier_wait(w->start);
	w->t0 = loop_ns();
	sink += run_kind(w->kind, w->n);
	w->t1 = loop_ns();
	return NULL;
}

/* ns per event, aggregate over the threads (1: CPU 1; 2: CPUs 0 and 1). */
static double run_threads(enum kind kind, int nthreads, uint64_t n)
{
	struct worker w[2];
	pthread_barrier_t start;
	pthread_barrier_init(&start, NULL, (unsigned)nthreads);
	for (int i = 0; i < nthreads; i++) {
		ring_setup(&rings[i]);
		w[i] = (struct worker){.index = i, .cpu = nthreads == 1 ? 1 : i, .kind = kind,
		                       .n = n, .start = &start};
		int err = pthread_create(&w[i].th, NULL, worker_main, &w[i]);
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
/* rows                                                                */

struct row {
	const char *key, *name, *note;
	enum kind kind;
	int threads;
	uint64_t n; /* per thread, at SCALE 1 */
};

static const struct row rows[] = {
	{"fl_clock", "floor: clock_gettime(CLOCK_MONOTONIC)", "vDSO", K_CLOCK, 1, 4000000},
#if HAVE_TSC
	{"fl_rdtsc", "floor: rdtsc", "", K_TSC, 1, 4000000},
	{"fl_rdtscp", "floor: rdtscp", "", K_TSCP, 1, 4000000},
#endif
	{"fl_ring_mono", "floor: per-thread ring, clock_gettime", "48 B record, 4 MiB ring, no reader",
	 K_RING_MONO, 1, 4000000},
#if HAVE_TSC
	{"fl_ring_tsc", "floor: per-thread ring, rdtsc", "48 B record, 4 MiB ring, no reader",
	 K_RING_TSC, 1, 4000000},
#endif
	{"fl_ring_mono_2thr", "floor: per-thread ring, clock_gettime, 2 threads",
	 "aggregate; a ring each", K_RING_MONO, 2, 4000000},
#if HAVE_TSC
	{"fl_ring_tsc_2thr", "floor: per-thread ring, rdtsc, 2 threads", "aggregate; a ring each",
	 K_RING_TSC, 2, 4000000},
#endif
};

/* ------------------------------------------------------------------ */
/* the log read's floor                                                */

#define READ_WINDOW (2u << 20)
#define CRC_CHUNK (64u << 10)

#if HAVE_TSC
/* The crc32 instruction's throughput: three chains, so that its latency
 * is hidden; the chains are not combined (a few dozen instructions a
 * chunk). */
__attribute__((target("sse4.2"))) static uint64_t crc_chains(const unsigned char *p, size_t n)
{
	size_t third = n / 24 * 8;
	const unsigned char *q = p + third, *r = q + third;
	unsigned long long a = ~0ull, b = ~0ull, c = ~0ull;
	for (size_t i = 0; i < third; i += 8) {
		uint64_t x, y, z;
		memcpy(&x, p + i, 8);
		memcpy(&y, q + i, 8);
		memcpy(&z, r + i, 8);
		a = __builtin_ia32_crc32di(a, x);
		b = __builtin_ia32_crc32di(b, y);
		c = __builtin_ia32_crc32di(c, z);
	}
	for (size_t i = 3 * third; i < n; i++)
		a = __builtin_ia32_crc32qi((unsigned)a, p[i]);
	return a ^ b ^ c;
}
#endif

/* One pass over the log: ns for the whole file. */
static uint64_t read_pass(const char *path, unsigned char *buf, int crc)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		fail(path, errno);
	uint64_t sum = 0, off = 0, t0 = mono_ns();
	for (;;) {
		ssize_t got = pread(fd, buf, READ_WINDOW, (off_t)off);
		if (got < 0)
			fail("pread", errno);
		if (got == 0)
			break;
#if HAVE_TSC
		for (size_t at = 0; crc && at < (size_t)got; at += CRC_CHUNK)
			sum += crc_chains(buf + at, (size_t)got - at < CRC_CHUNK ? (size_t)got - at : CRC_CHUNK);
#endif
		off += (uint64_t)got;
	}
	uint64_t t1 = mono_ns();
	sink += sum + off;
	close(fd);
	return t1 - t0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static double read_median(const char *path, unsigned char *buf, int crc, int passes)
{
	uint64_t ns[16];
	read_pass(path, buf, crc); /* untimed: the page cache and the buffer warm */
	for (int i = 0; i < passes; i++)
		ns[i] = read_pass(path, buf, crc);
	qsort(ns, (size_t)passes, sizeof ns[0], cmp_u64);
	return (double)ns[passes / 2];
}

static int read_floor(int argc, char **argv)
{
	if (argc < 4) {
		fprintf(stderr, "usage: floor readlog LOG EVENTS [PASSES]\n");
		return 2;
	}
	double events = atof(argv[3]);
	int passes = argc > 4 ? atoi(argv[4]) : 3;
	if (events <= 0 || passes < 1 || passes > 16) {
		fprintf(stderr, "floor readlog: EVENTS > 0, PASSES 1 to 16\n");
		return 2;
	}
	unsigned char *buf = aligned_alloc(READ_WINDOW, READ_WINDOW);
	if (!buf)
		fail("aligned_alloc", ENOMEM);
	madvise(buf, READ_WINDOW, MADV_HUGEPAGE); /* advice: no error to act on */
	memset(buf, 0, READ_WINDOW);
	double ns = read_median(argv[2], buf, 0, passes);
	printf("ROW|fl_logpread|floor: log read, pread of 2 MiB windows|%.2f|%.2f|%.2f|Mev/s|"
	       "%.2f ns an event|%.0f\n", events * 1e3 / ns, events * 1e3 / ns, events * 1e3 / ns,
	       ns / events, events);
#if HAVE_TSC
	if (__builtin_cpu_supports("sse4.2")) {
		ns = read_median(argv[2], buf, 1, passes);
		printf("ROW|fl_logread|floor: log read, pread of 2 MiB windows + CRC-32C|%.2f|%.2f|%.2f|"
		       "Mev/s|%.2f ns an event|%.0f\n", events * 1e3 / ns, events * 1e3 / ns,
		       events * 1e3 / ns, ns / events, events);
	}
#endif
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	choose_loop_clock();
	if (argc > 1 && !strcmp(argv[1], "clock"))
		return print_clock();
	if (argc > 1 && !strcmp(argv[1], "readlog"))
		return read_floor(argc, argv);
	if (argc > 1)
		scale = atof(argv[1]);
	if (argc > 2)
		filter = argv[2];
	if (scale <= 0)
		scale = 1;
	my_pid = (uint32_t)getpid();

	for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
		const struct row *r = &rows[i];
		if (filter && !strstr(r->key, filter))
			continue;
		double v = run_threads(r->kind, r->threads, scaled(r->n));
		printf("ROW|%s|%s|%.2f|%.2f|%.2f|ns/ev|%s|0\n", r->key, r->name, v, v, v, r->note);
		fflush(stdout);
	}
	for (int i = 0; i < 2; i++)
		free(rings[i].base);
	return 0;
}
