/* SPDX-License-Identifier: MIT */
/*
 * Begin/end events paired into durations (slices in Perfetto and
 * chrome://tracing).  By default an event named NAME_begin or NAME:begin
 * opens a slice NAME that the next NAME_end (NAME:end) of the same thread
 * closes; --pair BEGIN=END adds pairs by full names.  Pairs nest: an end
 * closes the innermost open begin of its kind, and begins left open inside
 * it stay instants, as does an end with no begin.  Events of different
 * threads never pair (a thread's events come in exact order; across threads
 * only by timestamp).
 *
 * The decision needs the whole log (a begin is an instant if its end never
 * comes), so a first pass marks the paired events by their index in the
 * log and the writer asks about each event in the second pass.
 */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define NAME_SIZE (TRACE_EVENT_NAME_MAX + 1)

/* An open begin; below, the previous open begin of the same kind in the
 * same stack (+ 1, 0 if none) and where the kind's innermost is kept. */
struct open_begin {
	uint32_t kind;
	uint64_t index;
	size_t below;
	size_t top_slot; /* index into pairing.tops */
};

struct open_stack {
	struct open_begin *items;
	size_t count, cap;
};

struct id_role {
	bool resolved;
	unsigned char role;
	uint32_t kind;
	char slice[NAME_SIZE];
};

struct pairing {
	const struct pair_rules *rules;
	struct id_role ids[MAX_EVENT_IDS];
	char (*kinds)[NAME_SIZE + 8]; /* what a begin and its end have in common */
	size_t nkinds;
	uint64_t *paired; /* one bit per event index */
	size_t paired_words;
	struct thread_table threads;
	struct open_stack *stacks; /* by thread table index */
	size_t stack_cap;
	/* The innermost open begin of each (kind, thread): its place in the
	 * thread's stack + 1, 0 if none; found by (kind, thread table index). */
	struct thread_table top_index;
	size_t *tops;
	size_t tops_cap;
};

/* The slice of an explicit pair is named after what BEGIN and END have in
 * common up to a separator (lock_take=lock_give: "lock"), else BEGIN. */
static void explicit_slice_name(struct pair_rule *r)
{
	size_t common = 0, cut = 0;
	while (r->begin[common] && r->begin[common] == r->end[common]) {
		if (strchr("_:.-", r->begin[common]))
			cut = common;
		common++;
	}
	if (cut > 0) {
		memcpy(r->slice, r->begin, cut);
		r->slice[cut] = '\0';
	} else {
		strcpy(r->slice, r->begin);
	}
}

bool pair_rules_add(struct pair_rules *r, const char *spec)
{
	const char *eq = strchr(spec, '=');
	size_t blen = eq ? (size_t)(eq - spec) : 0;
	if (!eq || blen == 0 || !eq[1] || blen > TRACE_EVENT_NAME_MAX ||
	    strlen(eq + 1) > TRACE_EVENT_NAME_MAX || strchr(eq + 1, '=') ||
	    (strlen(eq + 1) == blen && !strncmp(spec, eq + 1, blen)))
		return false;
	r->rules = xrealloc(r->rules, (r->count + 1) * sizeof *r->rules);
	struct pair_rule *p = &r->rules[r->count++];
	memset(p, 0, sizeof *p);
	memcpy(p->begin, spec, (size_t)(eq - spec));
	strcpy(p->end, eq + 1);
	explicit_slice_name(p);
	return true;
}

void pair_rules_free(struct pair_rules *r)
{
	free(r->rules);
	r->rules = NULL;
	r->count = 0;
}

static uint32_t kind_of(struct pairing *p, const char *key)
{
	for (size_t i = 0; i < p->nkinds; i++)
		if (!strcmp(p->kinds[i], key))
			return (uint32_t)i;
	p->kinds = xrealloc(p->kinds, (p->nkinds + 1) * sizeof *p->kinds);
	snprintf(p->kinds[p->nkinds], sizeof p->kinds[0], "%s", key);
	return (uint32_t)p->nkinds++;
}

/* NAME_begin / NAME:begin (and _end, :end) with a non-empty NAME.  The key
 * keeps the separator, so x_begin pairs with x_end and not with x:end. */
static enum pair_role suffix_role(const char *name, char *key, char *slice)
{
	static const char *const words[] = {"begin", "end"};
	size_t len = strlen(name);
	for (int w = 0; w < 2; w++) {
		size_t wl = strlen(words[w]);
		if (len < wl + 2 || strcmp(name + len - wl, words[w]))
			continue;
		char sep = name[len - wl - 1];
		if (sep != '_' && sep != ':')
			continue;
		memcpy(key, name, len - wl);
		key[len - wl] = '\0';
		memcpy(slice, name, len - wl - 1);
		slice[len - wl - 1] = '\0';
		return w == 0 ? PAIR_BEGIN : PAIR_END;
	}
	return PAIR_NONE;
}

static void resolve_name(struct pairing *p, struct id_role *r, const char *name)
{
	char key[NAME_SIZE + 8];
	r->resolved = true;
	r->role = PAIR_NONE;
	for (size_t i = 0; i < p->rules->count; i++) {
		const struct pair_rule *rule = &p->rules->rules[i];
		if (strcmp(name, rule->begin) && strcmp(name, rule->end))
			continue;
		r->role = strcmp(name, rule->begin) ? PAIR_END : PAIR_BEGIN;
		snprintf(key, sizeof key, "=%zu", i); /* no event name is a suffix key */
		r->kind = kind_of(p, key);
		strcpy(r->slice, rule->slice);
		return;
	}
	if (p->rules->suffixes && (r->role = suffix_role(name, key, r->slice)) != PAIR_NONE)
		r->kind = kind_of(p, key);
}

/* name_cache_get()'s stand-in for a name it does not know (yet). */
static bool is_placeholder_name(const char *name)
{
	if (strncmp(name, "event_", 6) || !name[6])
		return false;
	return strspn(name + 6, "0123456789") == strlen(name + 6);
}

/* The role an event's type plays, whoever posted it.  A name not known yet
 * (a log from a pipe learns names as it goes) is asked again next time. */
static const struct id_role *type_role(struct pairing *p, const struct trace_event *ev)
{
	static const struct id_role none = {0};
	trace_event_id_t id = ev->info.posix_event_id;
	if (id >= MAX_EVENT_IDS || is_system_event(id))
		return &none;
	if (p->ids[id].resolved) /* only ever from a known name */
		return &p->ids[id];
	if (is_placeholder_name(ev->name))
		return &none;
	resolve_name(p, &p->ids[id], ev->name);
	return &p->ids[id];
}

static bool can_pair(const struct trace_event *ev)
{
	return event_has_thread(ev) && event_has_time(ev);
}

static void mark(struct pairing *p, uint64_t index)
{
	size_t word = (size_t)(index / 64);
	if (word >= p->paired_words) {
		size_t n = p->paired_words ? p->paired_words : 1024;
		while (n <= word)
			n *= 2;
		p->paired = xrealloc(p->paired, n * sizeof *p->paired);
		memset(p->paired + p->paired_words, 0, (n - p->paired_words) * sizeof *p->paired);
		p->paired_words = n;
	}
	p->paired[word] |= 1ull << (index % 64);
}

static bool marked(const struct pairing *p, uint64_t index)
{
	size_t word = (size_t)(index / 64);
	return word < p->paired_words && (p->paired[word] >> (index % 64)) & 1;
}

static size_t thread_of(struct pairing *p, const struct trace_event *ev)
{
	size_t i = thread_table_of(&p->threads, ev, NULL);
	grow_zeroed((void **)&p->stacks, &p->stack_cap, i, sizeof *p->stacks);
	return i;
}

static size_t top_slot(struct pairing *p, uint32_t kind, size_t thread)
{
	size_t i = thread_table_index(&p->top_index, (pid_t)kind, thread, NULL);
	grow_zeroed((void **)&p->tops, &p->tops_cap, i, sizeof *p->tops);
	return i;
}

static void push(struct pairing *p, size_t thread, uint32_t kind, uint64_t index)
{
	struct open_stack *s = &p->stacks[thread];
	size_t slot = top_slot(p, kind, thread);
	if (s->count == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 16;
		s->items = xrealloc(s->items, s->cap * sizeof *s->items);
	}
	s->items[s->count] = (struct open_begin){kind, index, p->tops[slot], slot};
	p->tops[slot] = ++s->count;
}

/* An end closes the innermost open begin of its kind; begins opened after
 * that one are dropped (instants), so what is paired nests properly.  The
 * innermost of a kind is looked up, not searched for down the stack (an
 * end with no begin under a deep stack would walk all of it), and each
 * begin is dropped once: linear in the events. */
static void close_pair(struct pairing *p, size_t thread, uint32_t kind, uint64_t index)
{
	struct open_stack *s = &p->stacks[thread];
	size_t slot = thread_table_find(&p->top_index, (pid_t)kind, thread);
	if (slot == SIZE_MAX || p->tops[slot] == 0)
		return;
	size_t at = p->tops[slot] - 1;
	mark(p, s->items[at].index);
	mark(p, index);
	while (s->count > at) {
		const struct open_begin *b = &s->items[--s->count];
		p->tops[b->top_slot] = b->below;
	}
}

static void scan_event(struct pairing *p, const struct trace_event *ev, uint64_t index)
{
	const struct id_role *r = type_role(p, ev);
	if (r->role == PAIR_NONE || !can_pair(ev))
		return;
	size_t thread = thread_of(p, ev);
	if (r->role == PAIR_BEGIN)
		push(p, thread, r->kind, index);
	else
		close_pair(p, thread, r->kind, index);
}

/* First pass (then the log is rewound); also gives the earliest time and
 * the number of events. */
struct pairing *pairing_scan(struct trace_log *log, const struct pair_rules *rules,
                             uint64_t *first_ns, uint64_t *count)
{
	struct pairing *p = xmalloc(sizeof *p);
	struct trace_event ev;
	uint64_t index = 0;
	memset(p, 0, sizeof *p);
	p->rules = rules;
	*first_ns = 0;
	while (trace_log_skim(log, &ev) > 0) {
		uint64_t ns = ts_ns(&ev.info.posix_timestamp);
		if (event_has_time(&ev) && (*first_ns == 0 || ns < *first_ns))
			*first_ns = ns;
		if (rules->suffixes || rules->count)
			scan_event(p, &ev, index);
		index++;
	}
	*count = index;
	trace_log_rewind(log);
	for (size_t i = 0; i < p->threads.count; i++)
		free(p->stacks[i].items);
	free(p->stacks);
	p->stacks = NULL;
	thread_table_free(&p->threads);
	free(p->tops);
	p->tops = NULL;
	thread_table_free(&p->top_index);
	return p;
}

enum pair_role pairing_role(struct pairing *p, uint64_t index, const struct trace_event *ev,
                            const char **slice)
{
	if (!marked(p, index))
		return PAIR_NONE;
	const struct id_role *r = type_role(p, ev);
	*slice = r->slice;
	return (enum pair_role)r->role;
}

void pairing_free(struct pairing *p)
{
	if (!p)
		return;
	free(p->kinds);
	free(p->paired);
	free(p);
}
