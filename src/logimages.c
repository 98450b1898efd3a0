/* SPDX-License-Identifier: MIT */
/*
 * The images a log names (logimages.h).  Entries are kept as read; the
 * first lookup after new ones sorts them by process, set and start, and
 * builds the list of sets, sorted by process and time.  A lookup finds the
 * process's set in force at the event's time (the newest begun before it)
 * and the image in it by binary search; a plug-in loaded after that set
 * was described is found in the sets that follow, a few at most.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "logimages.h"

struct pt_logi_entry {
	struct pt_log_image h;
	char path[PT_LOG_IMAGE_PATH_MAX + 1];
};

struct pt_logi_set {
	int32_t pid;
	uint32_t first, n;  /* its entries, sorted by start */
	uint64_t key;
	uint64_t time_ns;   /* the earliest its entries give */
};

/* Sets after the one in force looked at for an address it does not have. */
#define LATER_SETS 8

static int entry_ok(const struct pt_log_image *h, uint32_t left)
{
	return h->entry_size == pt_log_image_size(h->path_len) && h->entry_size <= left &&
	       h->path_len <= PT_LOG_IMAGE_PATH_MAX && h->build_id_len <= sizeof h->build_id &&
	       h->start < h->end && h->index < h->count && h->pid > 0;
}

void pt_logi_block(struct pt_log_images *t, const unsigned char *p, uint32_t len)
{
	uint32_t off = 0;
	while (len - off >= sizeof(struct pt_log_image)) {
		struct pt_log_image h;
		memcpy(&h, p + off, sizeof h);
		if (!entry_ok(&h, len - off))
			break; /* the block's CRC was right: the writer's damage, or a craft */
		if (t->n == t->cap) {
			uint32_t cap = t->cap ? t->cap * 2 : 64;
			if (cap > PT_LOGI_MAX)
				cap = PT_LOGI_MAX;
			struct pt_logi_entry *grown = cap > t->cap ? realloc(t->e, cap * sizeof *grown) : NULL;
			if (!grown)
				return; /* past the cap (or no memory): the rest is not kept */
			t->e = grown;
			t->cap = cap;
		}
		struct pt_logi_entry *e = &t->e[t->n++];
		/* Zeros past the build id, whatever the file holds there: a
		 * lookup copies all 32 bytes, no loop of a variable count. */
		memset(h.build_id + h.build_id_len, 0, sizeof h.build_id - h.build_id_len);
		e->h = h;
		memcpy(e->path, p + off + sizeof h, h.path_len);
		e->path[h.path_len] = '\0';
		off += h.entry_size;
		t->indexed = 0;
	}
}

static int by_set_start(const void *a, const void *b)
{
	const struct pt_log_image *x = &((const struct pt_logi_entry *)a)->h;
	const struct pt_log_image *y = &((const struct pt_logi_entry *)b)->h;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->set != y->set)
		return x->set < y->set ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int by_pid_time(const void *a, const void *b)
{
	const struct pt_logi_set *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->time_ns != y->time_ns)
		return x->time_ns < y->time_ns ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static int build_index(struct pt_log_images *t)
{
	free(t->sets);
	t->sets = NULL;
	t->nsets = 0;
	if (!t->n)
		return 0;
	qsort(t->e, t->n, sizeof *t->e, by_set_start);
	t->sets = malloc(t->n * sizeof *t->sets);
	if (!t->sets)
		return ENOMEM;
	for (uint32_t i = 0; i < t->n; i++) {
		const struct pt_log_image *h = &t->e[i].h;
		struct pt_logi_set *s = t->nsets ? &t->sets[t->nsets - 1] : NULL;
		if (s && s->pid == h->pid && s->key == h->set) {
			s->n++;
			s->time_ns = h->time_ns < s->time_ns ? h->time_ns : s->time_ns;
			continue;
		}
		t->sets[t->nsets++] = (struct pt_logi_set){h->pid, i, 1, h->set, h->time_ns};
	}
	qsort(t->sets, t->nsets, sizeof *t->sets, by_pid_time);
	t->indexed = 1;
	return 0;
}

/* The entry of set s that holds addr, or NULL. */
static const struct pt_logi_entry *in_set(const struct pt_log_images *t,
                                          const struct pt_logi_set *s, uint64_t addr)
{
	uint32_t lo = 0, hi = s->n; /* the first entry starting after addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->e[s->first + mid].h.start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct pt_logi_entry *e = lo ? &t->e[s->first + lo - 1] : NULL;
	return e && addr < e->h.end ? e : NULL;
}

/* The index of the first set of pid (or nsets). */
static uint32_t first_set(const struct pt_log_images *t, int32_t pid, uint64_t ns)
{
	uint32_t lo = 0, hi = t->nsets;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct pt_logi_set *s = &t->sets[mid];
		if (s->pid < pid || (s->pid == pid && s->time_ns <= ns))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo; /* the first of pid begun after ns */
}

/* Field by field: the path is copied as far as it goes, not the whole
 * array (a lookup per event of a log being symbolized). */
static struct timespec timespec_of(uint64_t ns)
{
	return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

static void fill(const struct pt_logi_entry *e, struct posixtrace_image *out)
{
	_Static_assert(sizeof out->posixtrace_build_id == sizeof e->h.build_id, "build ids");
	memcpy(out->posixtrace_build_id, e->h.build_id, sizeof out->posixtrace_build_id);
	memset(out->posixtrace_reserved, 0, sizeof out->posixtrace_reserved);
	out->posixtrace_reserved32 = 0;
	out->posixtrace_uid = POSIXTRACE_UID_UNKNOWN;
	out->posixtrace_start = e->h.start;
	out->posixtrace_end = e->h.end;
	out->posixtrace_load_bias = e->h.bias;
	out->posixtrace_build_id_size = e->h.build_id_len;
	out->posixtrace_path_truncated = e->h.flags & 1;
	memcpy(out->posixtrace_path, e->path, e->h.path_len + 1u);
	out->posixtrace_described = timespec_of(e->h.time_ns);
}

int pt_logi_find(struct pt_log_images *t, int32_t pid, uint64_t addr, uint64_t ns,
                 struct posixtrace_image *out)
{
	if (!t->indexed) {
		int err = build_index(t);
		if (err)
			return err;
	}
	uint32_t after = first_set(t, pid, ns);
	const struct pt_logi_entry *e = NULL;
	if (after > 0 && t->sets[after - 1].pid == pid)
		e = in_set(t, &t->sets[after - 1], addr); /* the set in force */
	for (uint32_t i = after; !e && i < t->nsets && i < after + LATER_SETS; i++)
		if (t->sets[i].pid == pid)
			e = in_set(t, &t->sets[i], addr);
	if (!e)
		return ENOENT;
	fill(e, out);
	/* The same sets are in force, and looked at, from the newest begun
	 * at or before ns to the next of the process. */
	int in_force = after > 0 && t->sets[after - 1].pid == pid;
	int next = after < t->nsets && t->sets[after].pid == pid;
	out->posixtrace_valid_from = timespec_of(in_force ? t->sets[after - 1].time_ns : 0);
	out->posixtrace_valid_until = timespec_of(next ? t->sets[after].time_ns : UINT64_MAX);
	return 0;
}

void pt_logi_free(struct pt_log_images *t)
{
	free(t->e);
	free(t->sets);
	memset(t, 0, sizeof *t);
}
