/* SPDX-License-Identifier: MIT */
/*
 * posixtrace stats: the durations of begin/end pairs, paired by the rules
 * of pairs.c (the same as convert's): for each slice name, or each slice
 * name and thread, the count, min, p50, p90, p99 and max, the slowest
 * instances (with their times, to find them in dump) and a histogram by
 * powers of two, as lttng-analyses and perf sched latency show them.
 * Percentiles are by nearest rank over every pair, sorted once: n log n.
 */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define SLOWEST 3
#define BAR_WIDTH 40

struct instance {
	uint64_t ns, begin_ns;
	pid_t pid;
	pid_t tid;
	unsigned long thread;
};

/* A slice name, or a slice name and a thread: one row of the table. */
struct row {
	uint32_t slice;          /* into durations.names */
	size_t thread;           /* thread table index; SIZE_MAX: all threads */
	struct instance *items;
	size_t count, cap;
};

struct open_begin {
	uint64_t begin_ns;
	size_t row;
};

struct open_stack {
	struct open_begin *items;
	size_t count, cap;
};

struct durations {
	bool per_thread;
	uint32_t slice_of_id[MAX_EVENT_IDS]; /* a begin's type: its slice + 1 */
	char (*names)[TRACE_EVENT_NAME_MAX + 1];
	uint32_t nnames;
	struct thread_table threads;  /* (pid, pthread_t) */
	struct open_stack *stacks;    /* by thread index */
	size_t stack_cap;
	struct thread_table row_index; /* (slice, thread index) */
	struct row *rows;
	size_t rows_cap;
};

struct durations *durations_new(bool per_thread)
{
	struct durations *d = xmalloc(sizeof *d);
	memset(d, 0, sizeof *d);
	d->per_thread = per_thread;
	return d;
}

static uint32_t slice_for(struct durations *d, trace_event_id_t id, const char *slice)
{
	if (id < MAX_EVENT_IDS && d->slice_of_id[id])
		return d->slice_of_id[id] - 1;
	d->names = xrealloc(d->names, (d->nnames + 1) * sizeof *d->names);
	snprintf(d->names[d->nnames], sizeof d->names[0], "%s", slice);
	if (id < MAX_EVENT_IDS)
		d->slice_of_id[id] = d->nnames + 1;
	return d->nnames++;
}

static size_t thread_of(struct durations *d, const struct trace_event *ev)
{
	size_t i = thread_table_of(&d->threads, ev, NULL);
	grow_zeroed((void **)&d->stacks, &d->stack_cap, i, sizeof *d->stacks);
	return i;
}

static size_t row_of(struct durations *d, uint32_t slice, size_t thread)
{
	size_t t = d->per_thread ? thread : SIZE_MAX;
	bool added = false;
	size_t i = thread_table_index(&d->row_index, (pid_t)slice, (unsigned long)t, &added);
	grow_zeroed((void **)&d->rows, &d->rows_cap, i, sizeof *d->rows);
	if (added)
		d->rows[i] = (struct row){slice, t, NULL, 0, 0};
	return i;
}

static void push(struct open_stack *s, struct open_begin b)
{
	if (s->count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->items = xrealloc(s->items, s->cap * sizeof *s->items);
	}
	s->items[s->count++] = b;
}

static void add_instance(struct row *r, struct instance in)
{
	if (r->count == r->cap) {
		r->cap = r->cap ? 2 * r->cap : 16;
		r->items = xrealloc(r->items, r->cap * sizeof *r->items);
	}
	r->items[r->count++] = in;
}

/* Paired events nest properly on their thread (pairs.c drops the begins
 * that would not), so an end closes the begin on top of its thread's
 * stack. */
void durations_event(struct durations *d, const struct trace_event *ev, enum pair_role role,
                     const char *slice)
{
	if (role == PAIR_NONE || !event_has_time(ev))
		return;
	size_t thread = thread_of(d, ev);
	struct open_stack *s = &d->stacks[thread];
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	if (role == PAIR_BEGIN) {
		size_t row = row_of(d, slice_for(d, ev->info.posix_event_id, slice), thread);
		push(s, (struct open_begin){ns, row});
		return;
	}
	if (!s->count)
		return;
	struct open_begin b = s->items[--s->count];
	struct instance in = {ns >= b.begin_ns ? ns - b.begin_ns : 0, b.begin_ns, ev->info.posix_pid,
	                      ev->tid, (unsigned long)ev->info.posix_thread_id};
	add_instance(&d->rows[b.row], in);
}

static void format_duration(uint64_t ns, char *buf, size_t size)
{
	if (ns < 1000)
		snprintf(buf, size, "%llu ns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%.2f us", (double)ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, size, "%.2f ms", (double)ns / 1e6);
	else
		snprintf(buf, size, "%.3f s", (double)ns / 1e9);
}

static int by_duration(const void *a, const void *b)
{
	uint64_t x = ((const struct instance *)a)->ns, y = ((const struct instance *)b)->ns;
	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least q percent at or below. */
static uint64_t percentile(const struct row *r, unsigned q)
{
	size_t rank = (r->count * q + 99) / 100;
	return r->items[rank ? rank - 1 : 0].ns;
}

static unsigned floor_log2(uint64_t v)
{
	return v ? 63u - (unsigned)__builtin_clzll(v) : 0;
}

static void print_histogram(const struct row *r)
{
	uint64_t counts[64] = {0}, most = 0;
	unsigned lo = floor_log2(r->items[0].ns), hi = floor_log2(r->items[r->count - 1].ns);
	for (size_t i = 0; i < r->count; i++) {
		uint64_t c = ++counts[floor_log2(r->items[i].ns)];
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

static void print_slowest(const struct row *r, uint64_t base_ns)
{
	printf("    slowest:");
	for (size_t k = 0; k < SLOWEST && k < r->count; k++) {
		const struct instance *in = &r->items[r->count - 1 - k];
		char dur[32], rel[32];
		format_duration(in->ns, dur, sizeof dur);
		format_signed_time((int64_t)(in->begin_ns - base_ns), rel, sizeof rel);
		printf("%s %s from %s, pid %d", k ? ";" : "", dur, rel, (int)in->pid);
		if (in->tid)
			printf(" tid %d", (int)in->tid);
		else
			printf(" thread 0x%lx", in->thread);
	}
	printf("\n");
}

static void print_row(const struct durations *d, struct row *r, uint64_t base_ns)
{
	char name[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)], v[6][32];
	const unsigned qs[4] = {50, 90, 99, 100};
	qsort(r->items, r->count, sizeof *r->items, by_duration);
	format_duration(r->items[0].ns, v[0], sizeof v[0]);
	for (int i = 0; i < 4; i++)
		format_duration(percentile(r, qs[i]), v[i + 1], sizeof v[i + 1]);
	printf("  %s", escape_text(d->names[r->slice], name, sizeof name));
	if (r->thread != SIZE_MAX)
		printf(" (pid %d thread 0x%lx)", (int)d->threads.keys[r->thread].pid,
		       d->threads.keys[r->thread].thread);
	printf(": %llu, min %s, p50 %s, p90 %s, p99 %s, max %s\n", (unsigned long long)r->count,
	       v[0], v[1], v[2], v[3], v[4]);
	print_slowest(r, base_ns);
	print_histogram(r);
}

static const struct durations *sorting;

static int by_name_then_thread(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(sorting->names[x->slice], sorting->names[y->slice]);
	if (c || x->thread == y->thread)
		return c ? c : (x->slice > y->slice) - (x->slice < y->slice);
	return compare_thread_keys(&sorting->threads.keys[x->thread],
	                           &sorting->threads.keys[y->thread]);
}

void durations_print(struct durations *d, uint64_t base_ns)
{
	size_t n = d->row_index.count, shown = 0;
	for (size_t i = 0; i < n; i++)
		shown += d->rows[i].count != 0;
	if (!shown)
		return;
	sorting = d;
	qsort(d->rows, n, sizeof *d->rows, by_name_then_thread);
	printf("durations of begin/end pairs (count, then by nearest rank):\n");
	for (size_t i = 0; i < n; i++)
		if (d->rows[i].count)
			print_row(d, &d->rows[i], base_ns);
}

void durations_free(struct durations *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->threads.count; i++)
		free(d->stacks[i].items);
	for (size_t i = 0; i < d->row_index.count; i++)
		free(d->rows[i].items);
	free(d->stacks);
	free(d->rows);
	free(d->names);
	thread_table_free(&d->threads);
	thread_table_free(&d->row_index);
	free(d);
}
