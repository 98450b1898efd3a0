/* SPDX-License-Identifier: MIT */
/*
 * posixtrace stats: the durations of begin/end pairs, paired by the rules
 * of pairs.c (the same as convert's) as the events come: for each slice
 * name, or each slice name and thread, the count, min, p50, p90, p99 and
 * max, the slowest instances (with their times, to find them in dump) and
 * a histogram by powers of two, as lttng-analyses and perf sched latency
 * show them.  Nothing is kept per pair: each row is a sketch (sketch.h),
 * whose count, min, max and histogram are exact and whose percentiles (by
 * nearest rank) are within 1/128 of the exact ones, and its SLOWEST
 * slowest pairs.
 */
#include <stdlib.h>
#include <string.h>

#include "sketch.h"
#include "tool.h"

#define SLOWEST 3
#define BAR_WIDTH 40
#define OTHER_THREADS (SIZE_MAX - 1) /* a row's thread: those past the rows */

struct instance {
	uint64_t ns, begin_ns;
	pid_t pid;
	pid_t tid;
	unsigned long thread;
	uint32_t host;
};

/* A slice name, or a slice name and a thread: one row of the table. */
struct row {
	uint32_t kind;
	const char *slice;
	size_t thread; /* into durations.threads; SIZE_MAX: all, OTHER_THREADS */
	struct sketch sketch;
	struct instance slowest[SLOWEST]; /* the slowest first */
};

struct durations {
	bool per_thread;
	struct pairer *pairer;
	const struct trace_log *log;  /* its hosts' names, when printed */
	uint64_t index;               /* of the next event */
	struct thread_table threads;  /* (pid, pthread_t) of the rows */
	struct thread_table row_index; /* (kind, thread) */
	struct row *rows;
	size_t rows_cap, thread_rows;
};

struct durations *durations_new(const struct pair_rules *rules, bool per_thread)
{
	struct durations *d = xmalloc(sizeof *d);
	memset(d, 0, sizeof *d);
	d->per_thread = per_thread;
	d->pairer = pairer_new(rules);
	return d;
}

static struct row *row_at(struct durations *d, const struct pair_match *m, size_t thread)
{
	bool added = false;
	size_t i = thread_table_index(&d->row_index, 0, (pid_t)m->kind, (unsigned long)thread,
	                              &added);
	grow_zeroed((void **)&d->rows, &d->rows_cap, i, sizeof *d->rows);
	if (added)
		d->rows[i] = (struct row){.kind = m->kind, .slice = m->slice, .thread = thread};
	return &d->rows[i];
}

/* The row of a pair: its name's; with --per-thread its name's and
 * thread's, until there are DURATION_THREAD_ROWS of those, then its
 * name's row for the other threads.  So there are at most as many rows as
 * names, and DURATION_THREAD_ROWS more. */
static struct row *row_of(struct durations *d, const struct pair_match *m,
                          const struct trace_event *ev)
{
	if (!d->per_thread)
		return row_at(d, m, SIZE_MAX);
	pid_t pid = ev->info.posix_pid;
	unsigned long thread = (unsigned long)ev->info.posix_thread_id;
	size_t t = thread_table_find(&d->threads, ev->host, pid, thread);
	if (t != SIZE_MAX && thread_table_find(&d->row_index, 0, (pid_t)m->kind, t) != SIZE_MAX)
		return row_at(d, m, t);
	if (d->thread_rows == DURATION_THREAD_ROWS)
		return row_at(d, m, OTHER_THREADS);
	d->thread_rows++;
	if (t == SIZE_MAX)
		t = thread_table_index(&d->threads, ev->host, pid, thread, NULL);
	return row_at(d, m, t);
}

static void keep_if_slow(struct row *r, const struct instance *in)
{
	size_t k = r->sketch.count < SLOWEST ? (size_t)r->sketch.count : SLOWEST;
	if (k == SLOWEST && in->ns <= r->slowest[SLOWEST - 1].ns)
		return;
	if (k == SLOWEST)
		k--;
	while (k > 0 && r->slowest[k - 1].ns < in->ns) {
		r->slowest[k] = r->slowest[k - 1];
		k--;
	}
	r->slowest[k] = *in;
}

void durations_event(struct durations *d, const struct trace_event *ev)
{
	struct pair_match m;
	if (!pairer_event(d->pairer, ev, d->index++, &m))
		return;
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	struct instance in = {ns >= m.begin_ns ? ns - m.begin_ns : 0, m.begin_ns, ev->info.posix_pid,
	                      ev->tid, (unsigned long)ev->info.posix_thread_id, ev->host};
	struct row *r = row_of(d, &m, ev);
	keep_if_slow(r, &in);
	sketch_add(&r->sketch, in.ns);
}

/* Four significant digits at least: the percentiles' precision shows. */
static void format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns < 1000)
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.3f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
}

static unsigned floor_log2(uint64_t v)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

/* Every bucket of the sketch lies in one power of two: these counts are
 * exact. */
static void print_histogram(const struct row *r)
{
	const struct sketch *s = &r->sketch;
	uint64_t counts[64] = {0}, most = 0;
	unsigned lo = floor_log2(s->min), hi = floor_log2(s->max);
	for (size_t i = 0; i < s->held; i++) {
		uint64_t c = (counts[floor_log2(sketch_bucket_low(s->lo + i))] += s->counts[i]);
		most = c > most ? c : most;
	}
	for (unsigned b = lo; b <= hi; b++) {
		char from[32], to[32], bar[BAR_WIDTH + 1];
		size_t len = (size_t)((counts[b] * BAR_WIDTH + most - 1) / most);
		memset(bar, '#', len);
		bar[len] = '\0';
		format_duration(b ? 1ull << b : 0, from, sizeof from);
		format_duration(b < 63 ? 1ull << (b + 1) : UINT64_MAX, to, sizeof to);
		printf("      %10s .. %-10s %10llu |%s\n", from, to, (unsigned long long)counts[b], bar);
	}
}

/* "host NAME " of several hosts' logs, else nothing */
static void print_host(const struct durations *d, uint32_t host)
{
	if (d->log && d->log->nhosts > 1 && host < d->log->nhosts)
		printf("host %s ", d->log->hosts[host].label);
}

static void print_slowest(const struct durations *d, const struct row *r, uint64_t base_ns)
{
	printf("    slowest:");
	for (size_t k = 0; k < SLOWEST && k < r->sketch.count; k++) {
		const struct instance *in = &r->slowest[k];
		char dur[32], rel[32];
		format_duration(in->ns, dur, sizeof dur);
		format_signed_time((int64_t)(in->begin_ns - base_ns), rel, sizeof rel);
		printf("%s %s from %s, ", k ? ";" : "", dur, rel);
		print_host(d, in->host);
		printf("pid %d", (int)in->pid);
		if (in->tid)
			printf(" tid %d", (int)in->tid);
		else
			printf(" thread 0x%lx", in->thread);
	}
	printf("\n");
}

static void print_row(const struct durations *d, const struct row *r, uint64_t base_ns)
{
	char name[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)], v[5][32];
	const unsigned permille[3] = {500, 900, 990};
	format_duration(r->sketch.min, v[0], sizeof v[0]);
	for (int i = 0; i < 3; i++)
		format_duration(sketch_quantile(&r->sketch, permille[i]), v[i + 1], sizeof v[i + 1]);
	format_duration(r->sketch.max, v[4], sizeof v[4]);
	printf("  %s", escape_text(r->slice, name, sizeof name));
	if (r->thread == OTHER_THREADS)
		printf(" (other threads, past %d thread rows)", DURATION_THREAD_ROWS);
	else if (r->thread != SIZE_MAX) {
		printf(" (");
		print_host(d, d->threads.keys[r->thread].host);
		printf("pid %d thread 0x%lx)", (int)d->threads.keys[r->thread].pid,
		       d->threads.keys[r->thread].thread);
	}
	printf(": %llu, min %s, p50 %s, p90 %s, p99 %s, max %s\n",
	       (unsigned long long)r->sketch.count, v[0], v[1], v[2], v[3], v[4]);
	print_slowest(d, r, base_ns);
	print_histogram(r);
}

static const struct durations *sorting;

/* By name, then thread (the other threads last). */
static int by_name_then_thread(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->slice, y->slice);
	if (c || x->kind != y->kind)
		return c ? c : (x->kind > y->kind) - (x->kind < y->kind);
	if (x->thread == y->thread)
		return 0;
	if (x->thread == OTHER_THREADS || y->thread == OTHER_THREADS)
		return x->thread == OTHER_THREADS ? 1 : -1;
	return compare_thread_keys(&sorting->threads.keys[x->thread],
	                           &sorting->threads.keys[y->thread]);
}

void durations_print(struct durations *d, const struct trace_log *log, uint64_t base_ns)
{
	d->log = log;
	size_t n = d->row_index.count;
	char limits[PAIR_LIMITS_TEXT_SIZE];
	if (pair_limits_text(pairer_limits(d->pairer), limits, sizeof limits))
		printf("pairing: %s\n", limits);
	if (!n)
		return;
	sorting = d;
	qsort(d->rows, n, sizeof *d->rows, by_name_then_thread);
	printf("durations of begin/end pairs (count, min and max exact; percentiles by nearest "
	       "rank, within 0.8 %%):\n");
	for (size_t i = 0; i < n; i++)
		print_row(d, &d->rows[i], base_ns);
}

void durations_free(struct durations *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->row_index.count; i++)
		sketch_free(&d->rows[i].sketch);
	free(d->rows);
	pairer_free(d->pairer);
	thread_table_free(&d->threads);
	thread_table_free(&d->row_index);
	free(d);
}
