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
 * An end closes a begin as soon as it comes, so stats measures in one pass
 * (pairer_event).  Convert must decide at a begin whether it is paired (a
 * begin is an instant if its end never comes): a first pass marks the
 * paired events by their index in the log, one bit each, and the writer
 * asks about each event in the second pass (pairing_scan, pairing_role).
 *
 * Memory is bounded whatever the log: a thread keeps its PAIR_DEPTH_MAX
 * innermost open begins, PAIR_OPEN_MAX are kept in all, and at most
 * PAIR_THREADS_MAX threads have begins kept at once (threads whose begins
 * are all closed make room).  Past a bound the oldest open begin of the
 * thread is forgotten, or, if the thread has none kept, the new one is not
 * kept; each is counted (struct pair_limits).  Since only the oldest begins
 * of a thread are ever forgotten, the pairs found are always right: an end
 * whose begin was forgotten closes nothing.
 */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define NAME_SIZE (TRACE_EVENT_NAME_MAX + 1)

struct open_begin {
	uint32_t kind;
	uint64_t index, ns;
};

/* A thread's open begins, oldest first, in a ring: ring[i % cap] for i in
 * [bottom, top). */
struct pair_thread {
	uint32_t host; /* of several logs' hosts (trace_event's) */
	pid_t pid;
	unsigned long thread;
	struct open_begin *ring;
	uint32_t cap; /* a power of two, at most PAIR_DEPTH_MAX */
	uint64_t bottom, top;
};

struct id_role {
	bool resolved;
	unsigned char role;
	uint32_t kind;
	char slice[NAME_SIZE];
};

/* What a begin and its end have in common, and the slice they make. */
struct pair_kind {
	char key[NAME_SIZE + 8];
	char slice[NAME_SIZE];
};

struct pairer {
	const struct pair_rules *rules;
	/* by the event's log (of several: ids are each log's), then id */
	struct id_role (*ids)[MAX_EVENT_IDS];
	size_t nsources;
	struct pair_kind **kinds; /* each allocated once: a match's slice points into it */
	size_t nkinds;
	struct pair_thread *threads;
	size_t nthreads, threads_cap;
	size_t empty; /* threads with no open begin kept: room to make */
	uint32_t *slots; /* open addressing: index + 1, 0 when empty */
	size_t nslots;
	size_t last; /* the thread found last, + 1 */
	uint64_t open; /* open begins kept, in all */
	struct pair_limits limits;
};

struct pairing {
	struct pairer *pairer;
	uint64_t *paired; /* one bit per event index */
	size_t paired_words;
	pid_t *controllers; /* by host: the process of its first START, 0 if none */
	uint32_t nhosts;
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

static uint32_t kind_of(struct pairer *p, const char *key, const char *slice)
{
	for (size_t i = 0; i < p->nkinds; i++)
		if (!strcmp(p->kinds[i]->key, key))
			return (uint32_t)i;
	p->kinds = xrealloc(p->kinds, (p->nkinds + 1) * sizeof *p->kinds);
	struct pair_kind *k = xmalloc(sizeof *k);
	snprintf(k->key, sizeof k->key, "%s", key);
	snprintf(k->slice, sizeof k->slice, "%s", slice);
	p->kinds[p->nkinds] = k;
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

static void resolve_name(struct pairer *p, struct id_role *r, const char *name)
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
		strcpy(r->slice, rule->slice);
		r->kind = kind_of(p, key, r->slice);
		return;
	}
	if (p->rules->suffixes && (r->role = suffix_role(name, key, r->slice)) != PAIR_NONE)
		r->kind = kind_of(p, key, r->slice);
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
static const struct id_role *type_role(struct pairer *p, const struct trace_event *ev)
{
	static const struct id_role none = {0};
	trace_event_id_t id = ev->info.posix_event_id;
	if (id >= MAX_EVENT_IDS || is_system_event(id))
		return &none;
	if (ev->source >= p->nsources) {
		size_t n = (size_t)ev->source + 1;
		p->ids = xrealloc(p->ids, n * sizeof *p->ids);
		memset(p->ids + p->nsources, 0, (n - p->nsources) * sizeof *p->ids);
		p->nsources = n;
	}
	struct id_role *r = &p->ids[ev->source][id];
	if (r->resolved) /* only ever from a known name */
		return r;
	if (is_placeholder_name(ev->name))
		return &none;
	resolve_name(p, r, ev->name);
	return r;
}

static bool can_pair(const struct trace_event *ev)
{
	return event_has_thread(ev) && event_has_time(ev);
}

/* ---- threads ------------------------------------------------------------- */

static void place(struct pairer *p, size_t index)
{
	size_t mask = p->nslots - 1;
	const struct pair_thread *t = &p->threads[index];
	size_t s = (size_t)keyed_hash2((uint64_t)t->host << 32 | (uint32_t)t->pid, t->thread) & mask;
	while (p->slots[s])
		s = (s + 1) & mask;
	p->slots[s] = (uint32_t)index + 1;
}

static void rehash(struct pairer *p, size_t nslots)
{
	free(p->slots);
	p->nslots = nslots;
	p->slots = xmalloc(nslots * sizeof *p->slots);
	memset(p->slots, 0, nslots * sizeof *p->slots);
	for (size_t i = 0; i < p->nthreads; i++)
		place(p, i);
	p->last = 0;
}

static bool thread_is(const struct pair_thread *t, uint32_t host, pid_t pid, unsigned long thread)
{
	return t->pid == pid && t->thread == thread && t->host == host;
}

static size_t find_thread(struct pairer *p, uint32_t host, pid_t pid, unsigned long thread)
{
	if (p->last && thread_is(&p->threads[p->last - 1], host, pid, thread))
		return p->last - 1;
	if (!p->nslots)
		return SIZE_MAX;
	size_t mask = p->nslots - 1;
	for (size_t s = (size_t)keyed_hash2((uint64_t)host << 32 | (uint32_t)pid, thread) & mask;
	     p->slots[s]; s = (s + 1) & mask) {
		const struct pair_thread *t = &p->threads[p->slots[s] - 1];
		if (thread_is(t, host, pid, thread)) {
			p->last = p->slots[s];
			return p->last - 1;
		}
	}
	return SIZE_MAX;
}

/* The threads with no open begin kept are let go; worth it only when they
 * are a quarter of the table, so that each new thread costs a constant. */
static bool make_room(struct pairer *p)
{
	if (p->empty < PAIR_THREADS_MAX / 4)
		return false;
	size_t kept = 0;
	for (size_t i = 0; i < p->nthreads; i++) {
		struct pair_thread *t = &p->threads[i];
		if (t->top == t->bottom)
			free(t->ring);
		else
			p->threads[kept++] = *t;
	}
	p->nthreads = kept;
	p->empty = 0;
	rehash(p, p->nslots);
	return true;
}

/* The thread's entry, a new one if there is room; SIZE_MAX if not. */
static size_t thread_for_begin(struct pairer *p, uint32_t host, pid_t pid, unsigned long thread)
{
	size_t i = find_thread(p, host, pid, thread);
	if (i != SIZE_MAX)
		return i;
	if (p->nthreads == PAIR_THREADS_MAX && !make_room(p))
		return SIZE_MAX;
	if (p->nthreads == p->threads_cap) {
		p->threads_cap = p->threads_cap ? 2 * p->threads_cap : 64;
		p->threads = xrealloc(p->threads, p->threads_cap * sizeof *p->threads);
	}
	i = p->nthreads++;
	p->threads[i] = (struct pair_thread){host, pid, thread, NULL, 0, 0, 0};
	p->empty++;
	if (2 * p->nthreads > p->nslots)
		rehash(p, p->nslots ? 2 * p->nslots : 64);
	else
		place(p, i);
	p->last = i + 1;
	return i;
}

static void forget_oldest(struct pairer *p, struct pair_thread *t)
{
	t->bottom++;
	p->open--;
	if (t->top == t->bottom)
		p->empty++;
}

/* The ring at a new size (its open begins kept in order): doubled when
 * full, halved when a quarter full, so that a thread holds room for about
 * what it has open, not for the most it ever had. */
static void resize_ring(struct pair_thread *t, uint32_t cap)
{
	struct open_begin *ring = xmalloc(cap * sizeof *ring);
	for (uint64_t i = t->bottom; i < t->top; i++)
		ring[i % cap] = t->ring[i % t->cap];
	free(t->ring);
	t->ring = ring;
	t->cap = cap;
}

static void push(struct pairer *p, struct pair_thread *t, struct open_begin b)
{
	if (t->top - t->bottom == PAIR_DEPTH_MAX) {
		forget_oldest(p, t);
		p->limits.too_deep++;
	} else if (p->open >= PAIR_OPEN_MAX) {
		if (t->top == t->bottom) {
			p->limits.not_kept++;
			return;
		}
		forget_oldest(p, t);
		p->limits.too_many++;
	}
	if (t->top - t->bottom == t->cap)
		resize_ring(t, t->cap ? 2 * t->cap : 4);
	if (t->top == t->bottom)
		p->empty--;
	t->ring[t->top++ % t->cap] = b;
	p->open++;
}

/* An end closes the innermost open begin of its kind; begins opened after
 * that one are dropped (instants), so what is paired nests properly.  At
 * most PAIR_DEPTH_MAX open begins are looked at. */
static bool close_pair(struct pairer *p, struct pair_thread *t, uint32_t kind,
                       struct pair_match *m)
{
	for (uint64_t i = t->top; i > t->bottom; i--) {
		const struct open_begin *b = &t->ring[(i - 1) % t->cap];
		if (b->kind != kind)
			continue;
		m->begin_index = b->index;
		m->begin_ns = b->ns;
		m->kind = kind;
		m->slice = p->kinds[kind]->slice;
		p->open -= t->top - (i - 1);
		t->top = i - 1;
		if (t->top == t->bottom)
			p->empty++;
		if (t->cap > 4 && t->top - t->bottom <= t->cap / 4)
			resize_ring(t, t->cap / 2);
		return true;
	}
	return false;
}

struct pairer *pairer_new(const struct pair_rules *rules)
{
	struct pairer *p = xmalloc(sizeof *p);
	memset(p, 0, sizeof *p);
	p->rules = rules;
	return p;
}

bool pairer_event(struct pairer *p, const struct trace_event *ev, uint64_t index,
                  struct pair_match *m)
{
	if (!p->rules->suffixes && !p->rules->count)
		return false;
	const struct id_role *r = type_role(p, ev);
	if (r->role == PAIR_NONE || !can_pair(ev))
		return false;
	pid_t pid = ev->info.posix_pid;
	unsigned long thread = (unsigned long)ev->info.posix_thread_id;
	if (r->role == PAIR_END) {
		size_t i = find_thread(p, ev->host, pid, thread);
		return i != SIZE_MAX && close_pair(p, &p->threads[i], r->kind, m);
	}
	size_t i = thread_for_begin(p, ev->host, pid, thread);
	if (i == SIZE_MAX) {
		p->limits.not_kept++;
		return false;
	}
	push(p, &p->threads[i], (struct open_begin){r->kind, index, ts_ns(&ev->info.posix_timestamp)});
	return false;
}

const struct pair_limits *pairer_limits(const struct pairer *p)
{
	return &p->limits;
}

static void free_threads(struct pairer *p)
{
	for (size_t i = 0; i < p->nthreads; i++)
		free(p->threads[i].ring);
	free(p->threads);
	free(p->slots);
	p->threads = NULL;
	p->slots = NULL;
	p->nthreads = p->threads_cap = p->nslots = p->empty = p->last = 0;
	p->open = 0;
}

void pairer_free(struct pairer *p)
{
	if (!p)
		return;
	free_threads(p);
	for (size_t i = 0; i < p->nkinds; i++)
		free(p->kinds[i]);
	free(p->kinds);
	free(p->ids);
	free(p);
}

/* ---- marks for convert --------------------------------------------------- */

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

/* First pass (then the log is rewound); also gives the earliest time, the
 * number of events and the controller (the process of the first START). */
struct pairing *pairing_scan(struct trace_log *log, const struct pair_rules *rules,
                             struct log_overview *o)
{
	struct pairing *p = xmalloc(sizeof *p);
	struct trace_event ev;
	struct pair_match m;
	uint64_t index = 0;
	memset(p, 0, sizeof *p);
	memset(o, 0, sizeof *o);
	p->pairer = pairer_new(rules);
	p->nhosts = log->nhosts ? log->nhosts : 1;
	p->controllers = xmalloc(p->nhosts * sizeof *p->controllers);
	memset(p->controllers, 0, p->nhosts * sizeof *p->controllers);
	while (trace_log_skim(log, &ev) > 0) {
		uint64_t ns = ts_ns(&ev.info.posix_timestamp);
		if (event_has_time(&ev) && (o->first_ns == 0 || ns < o->first_ns))
			o->first_ns = ns;
		if (ev.info.posix_event_id == POSIX_TRACE_START && !o->controller)
			o->controller = ev.info.posix_pid;
		if (ev.info.posix_event_id == POSIX_TRACE_START && ev.host < p->nhosts &&
		    !p->controllers[ev.host])
			p->controllers[ev.host] = ev.info.posix_pid;
		if (pairer_event(p->pairer, &ev, index, &m)) {
			mark(p, m.begin_index);
			mark(p, index);
		}
		index++;
	}
	o->count = index;
	trace_log_rewind(log);
	free_threads(p->pairer);
	return p;
}

enum pair_role pairing_role(struct pairing *p, uint64_t index, const struct trace_event *ev,
                            const char **slice)
{
	if (!marked(p, index))
		return PAIR_NONE;
	const struct id_role *r = type_role(p->pairer, ev);
	*slice = r->slice;
	return (enum pair_role)r->role;
}

const struct pair_limits *pairing_limits(const struct pairing *p)
{
	return pairer_limits(p->pairer);
}

void pairing_free(struct pairing *p)
{
	if (!p)
		return;
	pairer_free(p->pairer);
	free(p->paired);
	free(p->controllers);
	free(p);
}

pid_t pairing_controller(const struct pairing *p, uint32_t host)
{
	return host < p->nhosts ? p->controllers[host] : 0;
}

bool pair_limits_text(const struct pair_limits *l, char *buf, size_t size)
{
	uint64_t n = l->too_deep + l->too_many + l->not_kept;
	if (!n)
		return false;
	snprintf(buf, size,
	         "%llu begin events left unpaired by the bounds of pairing: %llu nested deeper "
	         "than %d on their thread, %llu past %d open in all, %llu with no room (%d threads "
	         "with open begins, or %d open)",
	         (unsigned long long)n, (unsigned long long)l->too_deep, PAIR_DEPTH_MAX,
	         (unsigned long long)l->too_many, PAIR_OPEN_MAX, (unsigned long long)l->not_kept,
	         PAIR_THREADS_MAX, PAIR_OPEN_MAX);
	return true;
}

/* The role ev's type plays by the rules, whether or not it was paired (a
 * begin whose end never came: PAIR_BEGIN), and its slice's name. */
enum pair_role pairing_type_role(struct pairing *p, const struct trace_event *ev,
                                 const char **slice)
{
	return pairer_type_role(p->pairer, ev, slice);
}

enum pair_role pairer_type_role(struct pairer *p, const struct trace_event *ev,
                                const char **slice)
{
	if ((!p->rules->suffixes && !p->rules->count) || !can_pair(ev))
		return PAIR_NONE;
	const struct id_role *r = type_role(p, ev);
	*slice = r->slice;
	return (enum pair_role)r->role;
}
