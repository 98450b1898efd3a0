/* SPDX-License-Identifier: MIT */
/*
 * posixtrace stats: the hottest call sites, as perf report --sort sym
 * lists functions: the user events per call site (function+offset and
 * file:line, sites.c), most first, each with the event types posted there.
 * Counted by site and type in one table; sorted once at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define HOT_SITES_SHOWN 20
#define TYPES_SHOWN 3

struct site_count {
	char *key;           /* where, a tab, source: NULL for a free slot */
	uint32_t id;         /* the type: its log (of several) x MAX_EVENT_IDS + its id */
	uint64_t count;
};

struct hot_sites {
	struct site_table sites;
	struct site_count *slots;
	size_t nslots, used;
	uint64_t user, named;
};

static void *zeroed(size_t n, size_t size)
{
	void *p = xmalloc(n * size);
	memset(p, 0, n * size);
	return p;
}

static uint64_t hash_key(const char *s, uint32_t id)
{
	uint64_t h = 1469598103934665603ull ^ id;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

static void grow(struct hot_sites *h)
{
	size_t n = h->nslots ? 2 * h->nslots : 256;
	struct site_count *old = h->slots;
	size_t old_n = h->nslots;
	h->slots = zeroed(n, sizeof *h->slots);
	h->nslots = n;
	for (size_t i = 0; i < old_n; i++) {
		if (!old[i].key)
			continue;
		size_t j = hash_key(old[i].key, old[i].id) & (n - 1);
		while (h->slots[j].key)
			j = (j + 1) & (n - 1);
		h->slots[j] = old[i];
	}
	free(old);
}

static void count(struct hot_sites *h, const char *key, uint32_t id)
{
	if (2 * (h->used + 1) > h->nslots)
		grow(h);
	size_t j = hash_key(key, id) & (h->nslots - 1);
	while (h->slots[j].key && (h->slots[j].id != id || strcmp(h->slots[j].key, key)))
		j = (j + 1) & (h->nslots - 1);
	if (!h->slots[j].key) {
		h->slots[j] = (struct site_count){strcpy(xmalloc(strlen(key) + 1), key), id, 0};
		h->used++;
	}
	h->slots[j].count++;
}

struct hot_sites *hot_sites_new(struct trace_log *log, const struct site_options *o)
{
	struct hot_sites *h = zeroed(1, sizeof *h);
	if (!sites_init(&h->sites, log, o)) {
		free(h);
		return NULL;
	}
	return h;
}

void hot_sites_event(struct hot_sites *h, const struct trace_event *ev)
{
	if (is_system_event(ev->info.posix_event_id))
		return;
	h->user++;
	const struct call_site *c = site_of(&h->sites, ev);
	if (!c)
		return;
	h->named++;
	char key[CALL_SITE_WHERE_MAX + 1 + CALL_SITE_SOURCE_MAX + 1 + CALL_SITE_INLINED_MAX];
	snprintf(key, sizeof key, "%s\t%s\t%s", c->where, c->source, c->inlined);
	count(h, key, ev->source * MAX_EVENT_IDS + ev->info.posix_event_id % MAX_EVENT_IDS);
}

/* A site's total and where its rows are, for sorting. */
struct site_total {
	const char *key;
	uint64_t count;
	size_t first, n; /* its rows */
};

static int by_count(const void *a, const void *b)
{
	const struct site_total *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->key, y->key);
}

static int by_key_count(const void *a, const void *b)
{
	const struct site_count *x = a, *y = b;
	int k = strcmp(x->key, y->key);
	if (k)
		return k;
	return x->count > y->count ? -1 : x->count < y->count;
}

/* Field i (0, 1, 2) of a key "where\tsource\tinlined", escaped into buf. */
static const char *key_field(const char *key, int i, char *buf, size_t size)
{
	char raw[CALL_SITE_WHERE_MAX];
	for (; i > 0 && key; i--)
		key = strchr(key, '\t') ? strchr(key, '\t') + 1 : NULL;
	size_t len = key ? strcspn(key, "\t") : 0;
	len = len < sizeof raw ? len : sizeof raw - 1;
	memcpy(raw, key ? key : "", len);
	raw[len] = '\0';
	return escape_text(raw, buf, size);
}

static void print_site(const struct site_total *t, const struct site_count *rows, size_t n,
                       uint64_t user, struct trace_log *log)
{
	char where[ESCAPED_SIZE(CALL_SITE_WHERE_MAX)];
	char source[ESCAPED_SIZE(CALL_SITE_SOURCE_MAX)];
	char inlined[ESCAPED_SIZE(CALL_SITE_INLINED_MAX)];
	char name[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)];
	printf("  %10llu %5.1f%%  %s", (unsigned long long)t->count,
	       user ? 100.0 * (double)t->count / (double)user : 0.0,
	       key_field(t->key, 0, where, sizeof where));
	if (*key_field(t->key, 1, source, sizeof source))
		printf(" (%s%s%s)", source, *key_field(t->key, 2, inlined, sizeof inlined) ?
		       ", inlined " : "", inlined);
	printf("\n");
	for (size_t i = 0; i < n && i < TYPES_SHOWN; i++)
		printf("  %10llu          %s\n", (unsigned long long)rows[i].count,
		       escape_text(name_cache_get(&trace_log_source(log, rows[i].id / MAX_EVENT_IDS)->names,
		                                  rows[i].id % MAX_EVENT_IDS),
		                   name, sizeof name));
	if (n > TYPES_SHOWN)
		printf("             ...      %zu more types\n", n - TYPES_SHOWN);
}

void hot_sites_print(struct hot_sites *h, struct trace_log *log)
{
	struct site_count *rows = zeroed(h->used ? h->used : 1, sizeof *rows);
	size_t n = 0;
	for (size_t i = 0; i < h->nslots; i++)
		if (h->slots[i].key)
			rows[n++] = h->slots[i];
	qsort(rows, n, sizeof *rows, by_key_count);
	struct site_total *totals = zeroed(n ? n : 1, sizeof *totals);
	size_t nt = 0;
	for (size_t i = 0; i < n; i++) {
		if (!nt || strcmp(totals[nt - 1].key, rows[i].key))
			totals[nt++] = (struct site_total){rows[i].key, 0, i, 0};
		totals[nt - 1].count += rows[i].count;
		totals[nt - 1].n++;
	}
	qsort(totals, nt, sizeof *totals, by_count);
	printf("hottest call sites (user events, %llu of %llu with a site):\n",
	       (unsigned long long)h->named, (unsigned long long)h->user);
	for (size_t i = 0; i < nt && i < HOT_SITES_SHOWN; i++)
		print_site(&totals[i], rows + totals[i].first, totals[i].n, h->user, log);
	if (nt > HOT_SITES_SHOWN)
		printf("  ... %zu more sites\n", nt - HOT_SITES_SHOWN);
	free(totals);
	free(rows);
}

void hot_sites_free(struct hot_sites *h)
{
	if (!h)
		return;
	sites_notes(&h->sites, "stats");
	sites_free(&h->sites);
	for (size_t i = 0; i < h->nslots; i++)
		free(h->slots[i].key);
	free(h->slots);
	free(h);
}
