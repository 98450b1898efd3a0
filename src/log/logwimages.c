/* SPDX-License-Identifier: MIT */
/*
 * The files a log has described, and the IMAGES_COMPACT payload being
 * gathered (logwimages.h, docs/LOG-FORMAT.md).  A file (its build id,
 * path, and span from its load bias) gets an id in the writer's table the
 * first time an image names it, and a FILE entry; every image after that
 * costs its SET entry a file id and a load bias.  The images of one set of
 * one process arriving in order share one SET entry, whose numbers are
 * deltas from the SET entry before it.  A ring log overwrites its oldest
 * blocks: a file's description is written again before its block goes,
 * while blocks that refer to it remain (pt_logwi_renew).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "logblock.h"
#include "logwimages.h"

#define SLOTS (2u * PT_LOGW_TABLE_FILES)
/* Images of one SET entry, at most: its worst size stays small. */
#define SET_PAIRS 64u
#define SET_WORST (1u + 5u + 1u + 3u * PT_LOG_VARINT_MAX + 5u + 3u * 3u + \
                   SET_PAIRS * (5u + PT_LOG_VARINT_MAX))
#define FILE_WORST (1u + 5u + 5u + 2u + 32u + 2u * PT_LOG_VARINT_MAX + 3u + PT_LOG_IMAGE_PATH_MAX)

enum { UNDESCRIBED, GATHERED, WRITTEN };

struct cfile {
	uint64_t start_off, end_off; /* start and end less the load bias */
	uint64_t def_seq;            /* WRITTEN: the block of its newest description */
	uint64_t ref_seq;            /* the newest block referring to it (+ 1; 0: none) */
	uint32_t def_off;            /* GATHERED: its FILE entry's offset in the payload */
	uint32_t path_off, hash;
	uint16_t path_len;
	uint8_t build_id_len, flags, state, referenced;
	uint8_t build_id[32];
};

struct set_entry {
	int open;
	int32_t pid;
	uint32_t uid, first, n, count;
	uint64_t time_ns, set;
	uint32_t file[SET_PAIRS];
	uint64_t bias[SET_PAIRS];
};

struct pt_logw_compact {
	uint64_t table;
	uint32_t nfiles, npaths;
	uint32_t slots[SLOTS]; /* file + 1 by hash, 0 free */
	struct cfile files[PT_LOGW_TABLE_FILES];
	char paths[PT_LOGW_TABLE_PATHS];
	unsigned char *buf; /* the payload: the table, then entries */
	uint32_t len, cap, nentries;
	int32_t prev_pid;   /* of the SET entry before: what deltas count from */
	uint64_t prev_time, prev_set;
	struct set_entry cur;
};

static uint64_t table_id(const void *salt)
{
	uint64_t v = 0;
	if (getrandom(&v, sizeof v, GRND_NONBLOCK) != (ssize_t)sizeof v) {
		struct timespec now;
		clock_gettime(CLOCK_REALTIME, &now);
		v = (uint64_t)now.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)now.tv_sec ^
		    (uint64_t)(uintptr_t)salt;
	}
	return v ? v : 1;
}

static void payload_reset(struct pt_logw_compact *c)
{
	memcpy(c->buf, &c->table, sizeof c->table);
	c->len = PT_LOG_COMPACT_PREFIX;
	c->nentries = 0;
	c->prev_pid = 0;
	c->prev_time = c->prev_set = 0;
	c->cur.open = 0;
}

static struct pt_logw_compact *compact_of(struct pt_logw *w)
{
	if (w->cimg)
		return w->cimg;
	struct pt_logw_compact *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->cap = w->block_size - PT_LOG_BLOCK_HDR;
	c->buf = malloc(c->cap);
	if (!c->buf) {
		free(c);
		return NULL;
	}
	c->table = table_id(c);
	payload_reset(c);
	w->cimg = c;
	return c;
}

/* FNV-1a over what makes a file: a collision costs a comparison only. */
static uint32_t file_hash(const struct pt_log_image *e, const char *path)
{
	uint32_t h = 2166136261u;
	const uint64_t span[2] = {e->start - e->bias, e->end - e->bias};
	const unsigned char *s = (const unsigned char *)span;
	for (uint32_t i = 0; i < sizeof span; i++)
		h = (h ^ s[i]) * 16777619u;
	for (uint32_t i = 0; i < e->build_id_len; i++)
		h = (h ^ e->build_id[i]) * 16777619u;
	for (uint32_t i = 0; i < e->path_len; i++)
		h = (h ^ (unsigned char)path[i]) * 16777619u;
	return (h ^ e->flags) * 16777619u;
}

static int same_file(const struct pt_logw_compact *c, const struct cfile *f,
                     const struct pt_log_image *e, const char *path)
{
	return f->start_off == e->start - e->bias && f->end_off == e->end - e->bias &&
	       f->path_len == e->path_len && f->build_id_len == e->build_id_len &&
	       f->flags == (e->flags & 1u) && memcmp(f->build_id, e->build_id, e->build_id_len) == 0 &&
	       memcmp(c->paths + f->path_off, path, e->path_len) == 0;
}

/* The id of e's file, added to the table if new; UINT32_MAX when it has
 * no room for it. */
static uint32_t file_id(struct pt_logw_compact *c, const struct pt_log_image *e, const char *path)
{
	uint32_t h = file_hash(e, path), i = h & (SLOTS - 1);
	for (; c->slots[i]; i = (i + 1) & (SLOTS - 1)) {
		const struct cfile *f = &c->files[c->slots[i] - 1];
		if (f->hash == h && same_file(c, f, e, path))
			return c->slots[i] - 1;
	}
	if (c->nfiles == PT_LOGW_TABLE_FILES || e->path_len > PT_LOGW_TABLE_PATHS - c->npaths)
		return UINT32_MAX;
	struct cfile *f = &c->files[c->nfiles];
	memset(f, 0, sizeof *f);
	f->start_off = e->start - e->bias;
	f->end_off = e->end - e->bias;
	f->path_off = c->npaths;
	f->path_len = e->path_len;
	f->hash = h;
	f->build_id_len = e->build_id_len;
	f->flags = e->flags & 1u;
	memcpy(f->build_id, e->build_id, e->build_id_len);
	memcpy(c->paths + c->npaths, path, e->path_len);
	c->npaths += e->path_len;
	c->slots[i] = ++c->nfiles;
	return c->nfiles - 1;
}

/* An entry of kind into the payload: its body is body[0, n). */
static void put_entry(struct pt_logw_compact *c, uint8_t kind, const unsigned char *body,
                      uint32_t n)
{
	c->buf[c->len++] = kind;
	c->len += pt_log_varint_put(c->buf + c->len, n);
	memcpy(c->buf + c->len, body, n);
	c->len += n;
	c->nentries++;
}

static void put_file(struct pt_logw_compact *c, uint32_t id)
{
	struct cfile *f = &c->files[id];
	unsigned char body[FILE_WORST];
	uint32_t n = pt_log_varint_put(body, id);
	body[n++] = f->flags;
	body[n++] = f->build_id_len;
	memcpy(body + n, f->build_id, f->build_id_len);
	n += f->build_id_len;
	n += pt_log_varint_put(body + n, f->start_off);
	n += pt_log_varint_put(body + n, f->end_off);
	n += pt_log_varint_put(body + n, f->path_len);
	memcpy(body + n, c->paths + f->path_off, f->path_len);
	n += f->path_len;
	f->def_off = c->len;
	f->state = GATHERED;
	put_entry(c, PT_LOG_COMPACT_FILE, body, n);
}

/* The SET entry being gathered into the payload. */
static void set_close(struct pt_logw_compact *c)
{
	struct set_entry *s = &c->cur;
	if (!s->open)
		return;
	s->open = 0;
	uint8_t flags = PT_LOG_COMPACT_PAGES;
	for (uint32_t i = 0; i < s->n; i++)
		if (s->bias[i] & ((1u << PT_LOG_COMPACT_PAGE_SHIFT) - 1))
			flags = 0;
	unsigned char body[SET_WORST];
	uint32_t n = 0;
	body[n++] = flags;
	n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)s->pid - c->prev_pid));
	n += pt_log_varint_put(body + n, (uint32_t)(s->uid + 1u));
	n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)(s->time_ns - c->prev_time)));
	n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)(s->set - c->prev_set)));
	n += pt_log_varint_put(body + n, s->count);
	n += pt_log_varint_put(body + n, s->first);
	n += pt_log_varint_put(body + n, s->n);
	uint64_t prev = 0;
	for (uint32_t i = 0; i < s->n; i++) {
		uint64_t b = flags ? s->bias[i] >> PT_LOG_COMPACT_PAGE_SHIFT : s->bias[i];
		n += pt_log_varint_put(body + n, s->file[i]);
		n += pt_log_varint_put(body + n, pt_log_zigzag((int64_t)(b - prev)));
		prev = b;
	}
	c->prev_pid = s->pid;
	c->prev_time = s->time_ns;
	c->prev_set = s->set;
	put_entry(c, PT_LOG_COMPACT_SET, body, n);
}

/* Whether e continues the SET entry being gathered. */
static int set_continues(const struct set_entry *s, const struct pt_log_image *e, uint32_t uid)
{
	return s->open && s->pid == e->pid && s->set == e->set && s->time_ns == e->time_ns &&
	       s->uid == uid && s->count == e->count && s->first + s->n == e->index &&
	       s->n < SET_PAIRS;
}


/* A ring log: whether file f's newest description is old enough that the
 * ring may overwrite it before the blocks that refer to it. */
static int description_ageing(const struct pt_logw *w, const struct cfile *f)
{
	return w->layout == PT_LOG_RING && f->state == WRITTEN &&
	       f->def_seq + w->ring_slots / 2 <= pt_logw_next_seq(w);
}

int pt_logwi_image(struct pt_logw *w, const struct pt_log_image *e, const char *path, uint32_t uid)
{
	struct pt_logw_compact *c = compact_of(w);
	if (!c)
		return ENOMEM;
	uint32_t id = file_id(c, e, path);
	if (id == UINT32_MAX)
		return PT_LOGWI_TABLE_FULL;
	struct cfile *f = &c->files[id];
	int describe = f->state == UNDESCRIBED || description_ageing(w, f);
	if (!set_continues(&c->cur, e, uid))
		set_close(c);
	if (c->len + (describe ? FILE_WORST : 0) + SET_WORST > c->cap) {
		pt_logwi_flush(w);
		describe = f->state == UNDESCRIBED || description_ageing(w, f);
	}
	if (describe)
		put_file(c, id);
	struct set_entry *s = &c->cur;
	if (!s->open)
		*s = (struct set_entry){.open = 1, .pid = e->pid, .uid = uid, .first = e->index,
		                        .count = e->count, .time_ns = e->time_ns, .set = e->set};
	s->file[s->n] = id;
	s->bias[s->n++] = e->bias;
	f->referenced = 1;
	return 0;
}

void pt_logwi_renew(struct pt_logw *w)
{
	struct pt_logw_compact *c = w->cimg;
	if (!c || w->layout != PT_LOG_RING)
		return;
	for (uint32_t id = 0; id < c->nfiles; id++) {
		struct cfile *f = &c->files[id];
		int referred = f->referenced || (f->ref_seq && f->ref_seq - 1 + w->ring_slots > pt_logw_next_seq(w));
		if (!referred || !description_ageing(w, f))
			continue;
		set_close(c);
		if (c->len + FILE_WORST > c->cap)
			pt_logwi_flush(w);
		put_file(c, id);
	}
}

/* The payload's bytes up to the last entry that fits in room. */
static uint32_t payload_cut(const struct pt_logw_compact *c, uint32_t room, uint32_t *entries)
{
	uint32_t off = PT_LOG_COMPACT_PREFIX, fit = 0;
	*entries = 0;
	while (off < c->len) {
		uint32_t at = off + 1;
		uint64_t n;
		if (pt_log_varint_get(c->buf, c->len, &at, &n) || n > c->len - at)
			break; /* not reached: the writer wrote it */
		off = at + (uint32_t)n;
		if (off > room)
			break;
		fit = off;
		++*entries;
	}
	return fit;
}

void pt_logwi_flush(struct pt_logw *w)
{
	struct pt_logw_compact *c = w->cimg;
	if (!c)
		return;
	set_close(c);
	if (c->len == PT_LOG_COMPACT_PREFIX)
		return;
	pt_logb_close(w);
	pt_logb_open(w, PT_LOG_IMAGES_COMPACT, 0);
	uint64_t seq = w->prog.seq;
	uint32_t entries, len = payload_cut(c, (uint32_t)(w->blk_end - w->pos), &entries);
	if (len > PT_LOG_COMPACT_PREFIX) {
		memcpy(w->pos, c->buf, len);
		w->pos += len;
		w->blk_records = entries;
	}
	pt_logb_close(w);
	for (uint32_t id = 0; id < c->nfiles; id++) {
		struct cfile *f = &c->files[id];
		if (f->state == GATHERED) {
			f->state = f->def_off < len ? WRITTEN : UNDESCRIBED;
			f->def_seq = seq;
		}
		if (f->referenced)
			f->ref_seq = seq + 1;
		f->referenced = 0;
	}
	payload_reset(c);
}

void pt_logwi_forget(struct pt_logw *w)
{
	struct pt_logw_compact *c = w->cimg;
	if (!c)
		return;
	for (uint32_t id = 0; id < c->nfiles; id++) {
		c->files[id].state = UNDESCRIBED;
		c->files[id].referenced = 0;
		c->files[id].ref_seq = 0;
	}
	payload_reset(c);
}

void pt_logwi_free(struct pt_logw *w)
{
	if (!w->cimg)
		return;
	free(w->cimg->buf);
	free(w->cimg);
	w->cimg = NULL;
}
