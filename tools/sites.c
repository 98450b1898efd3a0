/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): the call site of an event, its posix_prog_address as
 * function+0xoffset and file:line, for dump, stats and convert.  The image
 * comes from the log (posixtrace_event_image: what the traced process
 * described when it recorded), the names from that image's file and debug
 * information, read by the confined symbolizer (symproc.h) with the
 * rights of whoever described the image.  What is kept of the sites is
 * bounded (SITES_MEMORY_MAX): each site's own text in one allocation of
 * its size, sources and inlined functions interned.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "symproc.h"
#include <posixtrace.h>

#include "tool.h"

#define RECENT_SLOTS 8192u
#define TABLE_FIRST 1024u /* slots of the memo and string tables at first (powers of two) */

bool sites_init(struct site_table *t, struct trace_log *log, const struct site_options *o)
{
	memset(t, 0, sizeof *t);
	t->log = log;
	t->off = o->off;
	if (t->off)
		return true;
	/* A log without images (most logs the API writes) costs no lookup. */
	struct posixtrace_log_info info;
	t->no_images = log->dirfd < 0 && !log->set && posixtrace_log_info(log->trid, &info) == 0 &&
	               info.posixtrace_images == 0;
	_Static_assert((RECENT_SLOTS & (RECENT_SLOTS - 1)) == 0, "a slot is some bits of a hash");
	t->recent = xmalloc(RECENT_SLOTS * sizeof *t->recent);
	memset(t->recent, 0, RECENT_SLOTS * sizeof *t->recent);
	/* The log's owner and mode say whose claims its images are. */
	struct symproc_options so = {.symfs = o->symfs, .log_fd = log->fd, .timeout_ms = o->timeout_ms,
	                             .no_demangle = o->no_demangle};
	t->sym = symproc_new(&so);
	if (!t->sym) {
		error_msg("no memory for symbols");
		return false;
	}
	return true;
}

void sites_free(struct site_table *t)
{
	symproc_free(t->sym);
	t->sym = NULL;
	for (size_t i = 0; i < t->nmemo; i++)
		free(t->memo[i].m);
	for (size_t i = 0; i < t->nstrings; i++)
		free(t->strings[i].raw);
	free(t->memo);
	free(t->strings);
	free(t->recent);
	t->memo = NULL;
	t->strings = NULL;
	t->recent = NULL;
	t->nmemo = t->used = t->nstrings = t->strings_used = t->kept = 0;
}

/* splitmix64's finish: every bit of the key reaches every bit of the
 * hash (call sites' addresses differ in few bits, at the same places). */
static uint64_t mix64(uint64_t h)
{
	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ h >> 27) * 0x94d049bb133111ebull;
	return h ^ h >> 31;
}

static uint64_t string_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return mix64(h);
}

/* Whether n more bytes fit under the cap; counted when they do. */
static bool room_for(struct site_table *t, size_t n)
{
	if (n > SITES_MEMORY_MAX - t->kept)
		return false;
	t->kept += n;
	return true;
}

static bool strings_grow(struct site_table *t)
{
	size_t n = t->nstrings ? 2 * t->nstrings : TABLE_FIRST;
	if (!room_for(t, n * sizeof *t->strings))
		return false;
	struct site_string *old = t->strings;
	size_t old_n = t->nstrings;
	t->strings = xmalloc(n * sizeof *t->strings);
	memset(t->strings, 0, n * sizeof *t->strings);
	t->nstrings = n;
	for (size_t i = 0; i < old_n; i++) {
		if (!old[i].raw)
			continue;
		size_t j = old[i].hash & (n - 1);
		while (t->strings[j].raw)
			j = (j + 1) & (n - 1);
		t->strings[j] = old[i];
	}
	free(old);
	t->kept -= old_n * sizeof *t->strings;
	return true;
}

/* s (raw bytes) and its escaped form, kept once; NULL past the cap. */
static const struct site_string *intern(struct site_table *t, const char *s)
{
	uint64_t h = string_hash(s);
	if (2 * (t->strings_used + 1) > t->nstrings && !strings_grow(t))
		return NULL;
	size_t j = h & (t->nstrings - 1);
	for (; t->strings[j].raw; j = (j + 1) & (t->nstrings - 1))
		if (t->strings[j].hash == h && strcmp(t->strings[j].raw, s) == 0)
			return &t->strings[j];
	size_t len = strlen(s), esc = ESCAPED_SIZE(len);
	if (!room_for(t, len + 1 + esc))
		return NULL;
	char *raw = memcpy(xmalloc(len + 1 + esc), s, len + 1);
	escape_text(raw, raw + len + 1, esc);
	t->strings[j] = (struct site_string){h, raw, raw + len + 1};
	t->strings_used++;
	return &t->strings[j];
}

static const struct site_string no_string = {0, "", ""};

static char *append(char *p, const char *s)
{
	size_t n = strlen(s);
	memcpy(p, s, n);
	return p + n;
}

/* A site's where (raw and escaped) and text, in buf (site_size bytes;
 * esc: where escaped). */
static void put_site(struct call_site *c, const char *where, const char *esc,
                     const struct site_string *source, const struct site_string *inlined,
                     char *buf)
{
	size_t wlen = strlen(where), elen = strlen(esc);
	memcpy(buf, where, wlen + 1);
	memcpy(buf + wlen + 1, esc, elen + 1);
	char *text = buf + wlen + 1 + elen + 1, *p = append(text, "  at ");
	p = append(p, esc);
	if (source->raw[0])
		p = append(append(p, " "), source->esc);
	if (inlined->raw[0])
		p = append(append(p, ", inlined "), inlined->esc);
	*p = '\0';
	*c = (struct call_site){.where = buf, .source = source->raw, .inlined = inlined->raw,
	                        .where_esc = buf + wlen + 1, .source_esc = source->esc,
	                        .inlined_esc = inlined->esc, .text = text,
	                        .text_len = (size_t)(p - text)};
}

/* The bytes put_site writes for these strings. */
static size_t site_size(const char *where, const char *esc, const struct site_string *source,
                        const struct site_string *inlined)
{
	size_t e = strlen(esc);
	return strlen(where) + 1 + e + 1 + sizeof "  at " - 1 + e +
	       (source->raw[0] ? 1 + strlen(source->esc) : 0) +
	       (inlined->raw[0] ? sizeof ", inlined " - 1 + strlen(inlined->esc) : 0) + 1;
}

/* "name+0xOFF", the name cut to the column, as the where of a site. */
static void put_where(char *where, const char *name, uint64_t offset)
{
	snprintf(where, CALL_SITE_WHERE_MAX, "%.*s+0x%llx", CALL_SITE_WHERE_MAX - 24, name,
	         (unsigned long long)offset);
}

/* Names longer than the column are cut: a C++ template's can be. */
static void put_source(char *source, const struct symproc_site *s)
{
	source[0] = '\0';
	if (s->file && s->line > 0) {
		const char *base = strrchr(s->file, '/');
		snprintf(source, CALL_SITE_SOURCE_MAX, "%.*s:%d", CALL_SITE_SOURCE_MAX - 16,
		         base ? base + 1 : s->file, s->line);
	}
}

static const char *image_name(const struct posixtrace_image *img)
{
	const char *base = strrchr(img->posixtrace_path, '/');
	return base ? base + 1 : img->posixtrace_path;
}

/* A site's memo key: its file and the address in it. */
static uint64_t memo_hash(uint32_t file, uint64_t at)
{
	return mix64(at ^ (uint64_t)file << 44 ^ (uint64_t)file);
}

static bool memo_grow(struct site_table *t)
{
	size_t n = t->nmemo ? 2 * t->nmemo : TABLE_FIRST;
	if (!room_for(t, n * sizeof *t->memo))
		return false;
	struct memo_slot *old = t->memo;
	size_t old_n = t->nmemo;
	t->memo = xmalloc(n * sizeof *t->memo);
	memset(t->memo, 0, n * sizeof *t->memo);
	t->nmemo = n;
	for (size_t i = 0; i < old_n; i++) {
		if (!old[i].m)
			continue;
		size_t j = old[i].hash & (n - 1);
		while (t->memo[j].m)
			j = (j + 1) & (n - 1);
		t->memo[j] = old[i];
	}
	free(old);
	t->kept -= old_n * sizeof *t->memo;
	return true;
}

/* IMAGE+0xOFF in the scratch site: past the cap, nothing is kept. */
static const struct call_site *unnamed_past_cap(struct site_table *t, uint64_t at,
                                                const struct posixtrace_image *img)
{
	put_where(t->scratch_where, image_name(img), at);
	escape_text(t->scratch_where, t->scratch_esc, sizeof t->scratch_esc);
	int n = snprintf(t->scratch_text, sizeof t->scratch_text, "  at %s", t->scratch_esc);
	t->scratch = (struct call_site){.where = t->scratch_where, .source = "", .inlined = "",
	                                .where_esc = t->scratch_esc, .source_esc = "",
	                                .inlined_esc = "", .text = t->scratch_text,
	                                .text_len = (size_t)n};
	return &t->scratch;
}

/* The names of at in file, from the symbolizer: where, source and inlined. */
static void ask(struct site_table *t, uint32_t file, const struct posixtrace_image *img,
                uint64_t pc, char *where, char *source, const char **inlined)
{
	struct symproc_site s;
	int err = symproc_lookup(t->sym, file, img, pc, &s);
	t->no_libdw |= err == ENOTSUP;
	*inlined = "";
	source[0] = '\0';
	if (err) {
		/* The image is known, its file is not usable: where in the file,
		 * as perf shows an address of a DSO without symbols. */
		put_where(where, image_name(img), pc - img->posixtrace_load_bias);
		return;
	}
	put_where(where, s.function ? s.function : image_name(img), s.offset);
	put_source(source, &s);
	if (s.function && s.inlined)
		*inlined = s.inlined;
}

static const struct call_site *past_cap(struct site_table *t)
{
	t->full = true;
	return NULL;
}

/* The site of pc in img, named by the symbolizer the first time; NULL
 * when it is not kept (past the cap, or past the symbolizer's files). */
static const struct call_site *memo_site(struct site_table *t, uint64_t pc,
                                         const struct posixtrace_image *img)
{
	uint32_t file;
	uint64_t at = pc - img->posixtrace_load_bias;
	if (symproc_file(t->sym, img, &file) != 0)
		return NULL;
	uint64_t h = memo_hash(file, at);
	size_t j = h & (t->nmemo - 1);
	for (; t->nmemo && t->memo[j].m; j = (j + 1) & (t->nmemo - 1))
		if (t->memo[j].hash == h && t->memo[j].m->at == at && t->memo[j].m->file == file)
			return &t->memo[j].m->site;
	if (t->full || (2 * (t->used + 1) > t->nmemo && !memo_grow(t)))
		return past_cap(t);
	for (j = h & (t->nmemo - 1); t->memo[j].m; j = (j + 1) & (t->nmemo - 1))
		;
	char where[CALL_SITE_WHERE_MAX], source[CALL_SITE_SOURCE_MAX];
	char inlined[CALL_SITE_INLINED_MAX];
	const char *inl;
	ask(t, file, img, pc, where, source, &inl);
	snprintf(inlined, sizeof inlined, "%s", inl);
	const struct site_string *src = source[0] ? intern(t, source) : &no_string;
	const struct site_string *in = inlined[0] ? intern(t, inlined) : &no_string;
	char esc[ESCAPED_SIZE(CALL_SITE_WHERE_MAX)];
	escape_text(where, esc, sizeof esc);
	size_t size = src && in ? site_size(where, esc, src, in) : 0;
	if (!src || !in || !room_for(t, sizeof(struct site_memo) + size))
		return past_cap(t);
	struct site_memo *m = xmalloc(sizeof *m + size);
	m->at = at;
	m->file = file;
	put_site(&m->site, where, esc, src, in, (char *)(m + 1));
	t->memo[j] = (struct memo_slot){h, m};
	t->used++;
	return &m->site;
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

/* site_of's lookup, apart: the early answers then save no register. */
static __attribute__((noinline)) const struct call_site *site_lookup(struct site_table *t,
                                                                    const struct trace_event *ev)
{
	uintptr_t pc = (uintptr_t)ev->info.posix_prog_address;
	/* the time its log gave it: of several logs, the event may have been
	 * moved onto their common line */
	struct posix_trace_event_info info = ev->info;
	uint64_t ns = ns_of(&info.posix_timestamp) - (uint64_t)ev->shift_ns;
	if (ev->shift_ns && event_has_time(ev)) {
		info.posix_timestamp.tv_sec = (time_t)(ns / 1000000000u);
		info.posix_timestamp.tv_nsec = (long)(ns % 1000000000u);
	}
	uint64_t h = mix64((uint64_t)pc ^ (uint64_t)(uint32_t)ev->info.posix_pid << 40 ^ ev->source);
	struct recent_site *r = &t->recent[h & (RECENT_SLOTS - 1)];
	if (r->site && r->pid == ev->info.posix_pid && r->source == ev->source && r->pc == pc &&
	    r->from <= ns && ns < r->until) {
		t->with_image++;
		return r->site;
	}
	if (posixtrace_event_image(t->log->trid, &info, &t->img) != 0)
		return NULL;
	t->with_image++;
	const struct call_site *site = memo_site(t, pc, &t->img);
	if (!site)
		return unnamed_past_cap(t, pc - t->img.posixtrace_load_bias, &t->img);
	*r = (struct recent_site){ev->info.posix_pid, ev->source, pc,
	                          ns_of(&t->img.posixtrace_valid_from),
	                          ns_of(&t->img.posixtrace_valid_until), site};
	return site;
}

const struct call_site *site_of(struct site_table *t, const struct trace_event *ev)
{
	if (t->off || !ev->info.posix_prog_address)
		return NULL;
	t->asked++;
	return t->no_images ? NULL : site_lookup(t, ev);
}

static void print_problem(const char *msg, void *arg)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, (const char *)arg, msg);
}

void sites_notes(struct site_table *t, const char *cmd)
{
	if (t->off)
		return;
	symproc_notes(t->sym, print_problem, (void *)cmd);
	if (t->full)
		fprintf(stderr, "%s: %s: symbols: more than %zu MiB of call sites: the later ones "
		                "shown as IMAGE+0xOFF\n", PROG, cmd, SITES_MEMORY_MAX >> 20);
	if (t->no_libdw)
		fprintf(stderr, "%s: %s: no symbols: this posixtrace was built without libdw "
		                "(elfutils)\n", PROG, cmd);
	else if (t->asked && !t->with_image)
		fprintf(stderr, "%s: %s: no symbols: the log holds no images (recorded with "
		                "--no-images, by a program that did not ask for them, or by an "
		                "older posixtrace)\n", PROG, cmd);
}

bool site_option(int opt, const char *arg, struct site_options *o)
{
	double seconds;
	if (opt == SITE_OPT_SYMFS) {
		o->symfs = arg;
	} else if (opt == SITE_OPT_NO_SYMBOLS) {
		o->off = true;
	} else if (opt == SITE_OPT_NO_DEMANGLE) {
		o->no_demangle = true;
	} else if (opt == SITE_OPT_TIMEOUT) {
		/* a bad value ends the command as any usage error does */
		if (!parse_seconds(arg, &seconds) || !(seconds >= 0.001 && seconds <= 86400)) {
			fprintf(stderr, "%s: bad --symbol-timeout '%s' (seconds, 0.001 to 86400)\n", PROG,
			        arg);
			exit(EXIT_USAGE);
		}
		o->timeout_ms = (unsigned)(seconds * 1000 + 0.5);
	} else {
		return false;
	}
	return true;
}
