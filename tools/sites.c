/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): the call site of an event, its posix_prog_address as
 * function+0xoffset and file:line, for dump, stats and convert.  The image
 * comes from the log (posixtrace_event_image: what the traced process
 * described when it recorded), the names from that image's file and debug
 * information (symbolize.c), which checks the file before it reads it.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"
#include <posixtrace.h>

#include "tool.h"

#define RECENT_SLOTS 8192u

bool sites_init(struct site_table *t, struct trace_log *log, const struct site_options *o)
{
	memset(t, 0, sizeof *t);
	t->trid = log->trid;
	t->off = o->off;
	if (t->off)
		return true;
	/* A log without images (most logs the API writes) costs no lookup. */
	struct posixtrace_log_info info;
	t->no_images = posixtrace_log_info(t->trid, &info) == 0 && info.posixtrace_images == 0;
	struct stat st;
	struct sym_options so = {.symfs = o->symfs};
	/* Root reads only files of root's and of whoever wrote the log: a log
	 * written by another user names the files that user chose. */
	if (geteuid() == 0 && fstat(log->fd, &st) == 0) {
		so.check_owner = 1;
		so.owner = st.st_uid;
	}
	_Static_assert((RECENT_SLOTS & (RECENT_SLOTS - 1)) == 0, "a slot is some bits of a hash");
	t->recent = xmalloc(RECENT_SLOTS * sizeof *t->recent);
	memset(t->recent, 0, RECENT_SLOTS * sizeof *t->recent);
	t->sym = symbolizer_new(&so);
	if (!t->sym) {
		error_msg("no memory for symbols");
		return false;
	}
	return true;
}

void sites_free(struct site_table *t)
{
	symbolizer_free(t->sym);
	t->sym = NULL;
	for (size_t i = 0; i < t->nmemo; i++) {
		if (t->memo[i].m)
			free(t->memo[i].m->path);
		free(t->memo[i].m);
	}
	free(t->memo);
	t->memo = NULL;
	free(t->recent);
	t->recent = NULL;
	t->nmemo = t->used = 0;
}

/* Names longer than the column are cut: a C++ template's can be. */
static void put_where(struct call_site *c, const struct sym_site *s)
{
	const char *name = s->function ? s->function : s->image ? s->image : "?";
	snprintf(c->where, sizeof c->where, "%.*s+0x%llx", (int)sizeof c->where - 24, name,
	         (unsigned long long)s->offset);
	c->source[0] = '\0';
	if (s->file && s->line > 0) {
		const char *base = strrchr(s->file, '/');
		snprintf(c->source, sizeof c->source, "%.*s:%d", (int)sizeof c->source - 16,
		         base ? base + 1 : s->file, s->line);
	}
	snprintf(c->inlined, sizeof c->inlined, "%s", s->function && s->inlined ? s->inlined : "");
	escape_text(c->where, c->where_esc, sizeof c->where_esc);
	escape_text(c->source, c->source_esc, sizeof c->source_esc);
	escape_text(c->inlined, c->inlined_esc, sizeof c->inlined_esc);
	c->text_len = (size_t)snprintf(c->text, sizeof c->text, "  at %s%s%s%s%s", c->where_esc,
	                               c->source[0] ? " " : "", c->source_esc,
	                               c->inlined[0] ? ", inlined " : "", c->inlined_esc);
}

/* splitmix64's finish: every bit of the key reaches every bit of the
 * hash (call sites' addresses differ in few bits, at the same places). */
static uint64_t mix64(uint64_t h)
{
	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ h >> 27) * 0x94d049bb133111ebull;
	return h ^ h >> 31;
}

/* A site is named once: the image's identity and the address are the key. */
static uint64_t memo_hash(uint64_t pc, const struct posixtrace_image *img)
{
	uint64_t h = pc ^ img->posixtrace_start * 31 ^ img->posixtrace_load_bias;
	for (uint32_t i = 0; i < img->posixtrace_build_id_size && i < 8; i++)
		h = (h ^ img->posixtrace_build_id[i]) * 1099511628211ull;
	return mix64(h);
}

static bool memo_same(const struct site_memo *m, uint64_t pc, const struct posixtrace_image *img)
{
	/* One build id, one file: the path tells apart only files without. */
	return m->pc == pc && m->start == img->posixtrace_start &&
	       m->bias == img->posixtrace_load_bias &&
	       m->build_id_size == img->posixtrace_build_id_size &&
	       memcmp(m->build_id, img->posixtrace_build_id, m->build_id_size) == 0 &&
	       (m->build_id_size || strcmp(m->path, img->posixtrace_path) == 0);
}

static void memo_grow(struct site_table *t)
{
	size_t n = t->nmemo ? 2 * t->nmemo : 1024;
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
}

/* The site of pc in img, named by the symbolizer the first time. */
static const struct call_site *memo_site(struct site_table *t, uint64_t pc,
                                         const struct posixtrace_image *img)
{
	uint64_t h = memo_hash(pc, img);
	if (2 * (t->used + 1) > t->nmemo)
		memo_grow(t);
	size_t j = h & (t->nmemo - 1);
	for (; t->memo[j].m; j = (j + 1) & (t->nmemo - 1))
		if (t->memo[j].hash == h && memo_same(t->memo[j].m, pc, img))
			return &t->memo[j].m->site;
	struct site_memo *m = xmalloc(sizeof *m);
	memset(m, 0, sizeof *m);
	m->pc = pc;
	m->start = img->posixtrace_start;
	m->bias = img->posixtrace_load_bias;
	m->build_id_size = img->posixtrace_build_id_size;
	memcpy(m->build_id, img->posixtrace_build_id, sizeof m->build_id);
	m->path = strcpy(xmalloc(strlen(img->posixtrace_path) + 1), img->posixtrace_path);
	struct sym_site s;
	int err = symbolize(t->sym, img, pc, &s);
	t->no_libdw |= err == ENOTSUP;
	if (err) {
		/* The image is known, its file is not usable: where in the file,
		 * as perf shows an address of a DSO without symbols. */
		const char *base = strrchr(img->posixtrace_path, '/');
		s = (struct sym_site){.offset = pc - img->posixtrace_load_bias,
		                      .image = base ? base + 1 : img->posixtrace_path};
	}
	put_where(&m->site, &s);
	t->memo[j] = (struct memo_slot){h, m};
	t->used++;
	return &m->site;
}

static uint64_t ns_of(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

const struct call_site *site_of(struct site_table *t, const struct trace_event *ev)
{
	uintptr_t pc = (uintptr_t)ev->info.posix_prog_address;
	if (t->off || !pc)
		return NULL;
	t->asked++;
	if (t->no_images)
		return NULL;
	uint64_t ns = ns_of(&ev->info.posix_timestamp);
	uint64_t h = mix64((uint64_t)pc ^ (uint64_t)(uint32_t)ev->info.posix_pid << 40);
	struct recent_site *r = &t->recent[h & (RECENT_SLOTS - 1)];
	if (r->site && r->pid == ev->info.posix_pid && r->pc == pc && r->from <= ns && ns < r->until) {
		t->with_image++;
		return r->site;
	}
	if (posixtrace_event_image(t->trid, &ev->info, &t->img) != 0)
		return NULL;
	t->with_image++;
	*r = (struct recent_site){ev->info.posix_pid, pc, ns_of(&t->img.posixtrace_valid_from),
	                          ns_of(&t->img.posixtrace_valid_until), memo_site(t, pc, &t->img)};
	return r->site;
}

static void print_problem(const char *msg, void *arg)
{
	fprintf(stderr, "%s: %s: %s\n", PROG, (const char *)arg, msg);
}

void sites_notes(struct site_table *t, const char *cmd)
{
	if (t->off)
		return;
	if (t->sym)
		symbolizer_problems(t->sym, print_problem, (void *)cmd);
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
	if (opt == SITE_OPT_SYMFS)
		o->symfs = arg;
	else if (opt == SITE_OPT_NO_SYMBOLS)
		o->off = true;
	else
		return false;
	return true;
}
