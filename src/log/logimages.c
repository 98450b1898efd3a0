/* SPDX-License-Identifier: MIT */
/*
 * The images a log names (logimages.h).  Images are kept as read, each
 * naming its file in a table of distinct files (build id and path, found
 * again by a keyed hash); each process is charged for the images it keeps
 * and for the paths it names first, within bounds of its own.  The first
 * lookup after new images sorts them by process, set and start, and
 * builds the list of sets, sorted by process and time.  A lookup finds the
 * process's set in force at the event's time (the newest begun before it)
 * and the image in it by binary search; a plug-in loaded after that set
 * was described is found in the sets that follow, a few at most.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include "logimages.h"

struct pt_logi_file {
	uint8_t build_id[32];
	uint32_t path_off;
	uint16_t path_len;
	uint8_t build_id_len;
	uint8_t flags;
	uint64_t hash;
};

struct pt_logi_map {
	uint64_t time_ns, set, start, end, bias;
	int32_t pid;
	uint32_t uid, file;
	uint16_t index, count;
};

struct pt_logi_proc {
	int32_t pid;                 /* 0: a free slot */
	uint32_t maps;
	uint32_t path_bytes;
};

/* A FILE entry of an IMAGES_COMPACT block: file (index in files) placed
 * start_off and end_off past an image's load bias. */
struct pt_logi_def {
	uint64_t table;
	uint64_t start_off, end_off;
	uint32_t id, file;
	int conflicted;     /* described again differently: trusted in neither */
};

/* An image of a SET entry, its file not yet resolved. */
struct pt_logi_pend {
	struct pt_logi_map m;
	uint64_t table;
	uint32_t id;
};

struct pt_logi_set {
	int32_t pid;
	uint32_t first, n;  /* its entries, sorted by start */
	uint64_t key;
	uint64_t time_ns;   /* the earliest its entries give */
};

/* Sets after the one in force looked at for an address it does not have. */
#define LATER_SETS 8
/* Slots a hash lookup looks at, at most: past them a file is kept without
 * being shared and a process is not kept (the keys are secret: only bad
 * luck gets there). */
#define PROBES 64u

/* splitmix64's finish: every bit of the key reaches every bit. */
static uint64_t mix64(uint64_t h)
{
	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ h >> 27) * 0x94d049bb133111ebull;
	return h ^ h >> 31;
}

static void seed_once(struct pt_log_images *t)
{
	if (t->seed)
		return;
	uint64_t s = 0;
	if (getrandom(&s, sizeof s, GRND_NONBLOCK) != (ssize_t)sizeof s) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		s = mix64((uint64_t)(uintptr_t)t ^ (uint64_t)now.tv_nsec ^ (uint64_t)now.tv_sec << 32);
	}
	t->seed = s | 1;
}

/* A file as an entry describes it, its path not yet kept. */
struct file_claim {
	const uint8_t *build_id;
	const char *path;
	uint16_t path_len;
	uint8_t build_id_len, flags;
};

static uint64_t claim_hash(const struct pt_log_images *t, const struct file_claim *c)
{
	uint64_t h = mix64(t->seed ^ ((uint64_t)c->path_len << 16 | (uint64_t)c->build_id_len << 8 | c->flags));
	uint64_t w;
	for (uint32_t i = 0; i + 8 <= c->build_id_len; i += 8) {
		memcpy(&w, c->build_id + i, 8);
		h = mix64(h ^ w);
	}
	for (uint32_t i = c->build_id_len & ~7u; i < c->build_id_len; i++)
		h = mix64(h ^ c->build_id[i]);
	for (uint32_t i = 0; i + 8 <= c->path_len; i += 8) {
		memcpy(&w, c->path + i, 8);
		h = mix64(h ^ w);
	}
	for (uint32_t i = c->path_len & ~7u; i < c->path_len; i++)
		h = mix64(h ^ (unsigned char)c->path[i]);
	return h;
}

static int same_file(const struct pt_log_images *t, const struct pt_logi_file *f,
                     const struct file_claim *c)
{
	return f->path_len == c->path_len && f->build_id_len == c->build_id_len &&
	       f->flags == c->flags && memcmp(f->build_id, c->build_id, c->build_id_len) == 0 &&
	       memcmp(t->paths + f->path_off, c->path, c->path_len) == 0;
}

/* The file's index, or UINT32_MAX; *free_slot: where it would go
 * (UINT32_MAX: nowhere within PROBES). */
static uint32_t file_find(const struct pt_log_images *t, const struct file_claim *c, uint64_t h,
                          uint32_t *free_slot)
{
	*free_slot = UINT32_MAX;
	if (!t->file_slots_n)
		return UINT32_MAX;
	uint32_t mask = t->file_slots_n - 1, i = (uint32_t)(h >> 32) & mask;
	for (uint32_t n = 0; n < PROBES; n++, i = (i + 1) & mask) {
		uint32_t v = t->file_slots[i];
		if (!v) {
			*free_slot = i;
			return UINT32_MAX;
		}
		if (t->files[v - 1].hash == h && same_file(t, &t->files[v - 1], c))
			return v - 1;
	}
	return UINT32_MAX;
}

/* The slots again, twice as many, for files 0 .. nfiles - 1. */
static int file_slots_grow(struct pt_log_images *t)
{
	uint32_t n = t->file_slots_n ? t->file_slots_n * 2 : 256;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return ENOMEM;
	free(t->file_slots);
	t->file_slots = slots;
	t->file_slots_n = n;
	for (uint32_t f = 0; f < t->nfiles; f++) {
		uint32_t i = (uint32_t)(t->files[f].hash >> 32) & (n - 1);
		for (uint32_t k = 0; k < PROBES && slots[i]; k++)
			i = (i + 1) & (n - 1);
		if (!slots[i])
			slots[i] = f + 1;
	}
	return 0;
}

/* Process pid's account, made if new; NULL when there is no room. */
static struct pt_logi_proc *proc_of(struct pt_log_images *t, int32_t pid)
{
	if (2 * (t->nprocs + 1) > t->procs_n) {
		uint32_t n = t->procs_n ? t->procs_n * 2 : 64;
		struct pt_logi_proc *grown = calloc(n, sizeof *grown);
		if (!grown)
			return NULL;
		for (uint32_t k = 0; k < t->procs_n; k++) {
			if (!t->procs[k].pid)
				continue;
			uint32_t i = (uint32_t)mix64(t->seed ^ (uint32_t)t->procs[k].pid) & (n - 1);
			for (uint32_t m = 0; m < PROBES && grown[i].pid; m++)
				i = (i + 1) & (n - 1);
			if (!grown[i].pid)
				grown[i] = t->procs[k];
		}
		free(t->procs);
		t->procs = grown;
		t->procs_n = n;
	}
	uint32_t mask = t->procs_n - 1, i = (uint32_t)mix64(t->seed ^ (uint32_t)pid) & mask;
	for (uint32_t n = 0; n < PROBES; n++, i = (i + 1) & mask) {
		if (t->procs[i].pid == pid)
			return &t->procs[i];
		if (!t->procs[i].pid) {
			t->nprocs++;
			t->procs[i] = (struct pt_logi_proc){.pid = pid};
			return &t->procs[i];
		}
	}
	return NULL;
}

/* The index of the file c names, kept if new and p may pay for its path;
 * UINT32_MAX if not. */
static uint32_t file_of(struct pt_log_images *t, const struct file_claim *c,
                        struct pt_logi_proc *p, uint32_t budget)
{
	uint64_t h = claim_hash(t, c);
	uint32_t slot, f = file_find(t, c, h, &slot);
	if (f != UINT32_MAX)
		return f;
	if (c->path_len > budget - p->path_bytes ||
	    c->path_len > PT_LOGI_PATHS - t->npaths)
		return UINT32_MAX;
	if (t->nfiles == t->files_cap) {
		uint32_t cap = t->files_cap ? t->files_cap * 2 : 64;
		struct pt_logi_file *grown = realloc(t->files, cap * sizeof *grown);
		if (!grown)
			return UINT32_MAX;
		t->files = grown;
		t->files_cap = cap;
	}
	if (!t->paths || t->npaths + c->path_len > t->paths_cap) { /* never NULL once a file is kept */
		size_t cap = t->paths_cap ? t->paths_cap * 2 : 4096;
		while (cap < t->npaths + c->path_len)
			cap *= 2;
		char *grown = realloc(t->paths, cap);
		if (!grown)
			return UINT32_MAX;
		t->paths = grown;
		t->paths_cap = cap;
	}
	if (2 * (t->nfiles + 1) > t->file_slots_n) {
		if (file_slots_grow(t))
			return UINT32_MAX;
		file_find(t, c, h, &slot);
	}
	struct pt_logi_file *nf = &t->files[t->nfiles];
	memset(nf, 0, sizeof *nf);
	memcpy(nf->build_id, c->build_id, c->build_id_len);
	nf->build_id_len = c->build_id_len;
	nf->flags = c->flags;
	nf->path_len = c->path_len;
	nf->path_off = (uint32_t)t->npaths;
	nf->hash = h;
	memcpy(t->paths + t->npaths, c->path, c->path_len);
	t->npaths += c->path_len;
	p->path_bytes += c->path_len;
	if (slot != UINT32_MAX)
		t->file_slots[slot] = t->nfiles + 1;
	return t->nfiles++;
}

/* Process pid's account, if it and the table may keep one more image. */
static struct pt_logi_proc *charge(struct pt_log_images *t, int32_t pid)
{
	seed_once(t);
	struct pt_logi_proc *p = t->n + t->npend < PT_LOGI_MAX ? proc_of(t, pid) : NULL;
	return p && p->maps < PT_LOGI_PER_PROCESS ? p : NULL;
}

/* Room for one more image in t->e: 0 or ENOMEM. */
static int map_room(struct pt_log_images *t)
{
	if (t->n < t->cap)
		return 0;
	uint32_t cap = t->cap ? t->cap * 2 : 64;
	struct pt_logi_map *grown = cap <= PT_LOGI_MAX ? realloc(t->e, cap * sizeof *grown) : NULL;
	if (!grown)
		return ENOMEM;
	t->e = grown;
	t->cap = cap;
	return 0;
}

/* Keeps image m of file c, if its process and the table have room. */
static void keep(struct pt_log_images *t, struct pt_logi_map m, const struct file_claim *c)
{
	struct pt_logi_proc *p = charge(t, m.pid);
	if (!p || map_room(t)) {
		t->dropped++;
		return;
	}
	m.file = file_of(t, c, p, PT_LOGI_PATHS_PER_PROCESS);
	if (m.file == UINT32_MAX) {
		t->dropped++;
		return;
	}
	p->maps++;
	t->e[t->n++] = m;
	t->indexed = 0;
}

static int image_ok(const struct pt_logi_map *m)
{
	return m->start < m->end && m->index < m->count && m->pid > 0;
}

/* A type 7 payload: each entry carries its file; no uid. */
static void images_block(struct pt_log_images *t, const unsigned char *p, uint32_t len)
{
	uint32_t off = 0;
	while (len - off >= sizeof(struct pt_log_image)) {
		struct pt_log_image h;
		memcpy(&h, p + off, sizeof h);
		struct pt_logi_map m = {h.time_ns, h.set, h.start, h.end, h.bias, h.pid,
		                        POSIXTRACE_UID_UNKNOWN, 0, h.index, h.count};
		if (h.entry_size != pt_log_image_size(h.path_len) || h.entry_size > len - off ||
		    h.path_len > PT_LOG_IMAGE_PATH_MAX || h.build_id_len > sizeof h.build_id ||
		    !image_ok(&m))
			break; /* the block's CRC was right: the writer's damage, or a craft */
		struct file_claim c = {h.build_id, (const char *)p + off + sizeof h, h.path_len,
		                       h.build_id_len, (uint8_t)(h.flags & 1u)};
		keep(t, m, &c);
		off += h.entry_size;
	}
}

/* The FILE entries of the IMAGES_SHARED payload being read (offsets). */
struct block_files {
	uint32_t *off;
	uint32_t n, cap;
};

static int block_file_add(struct block_files *b, uint32_t off)
{
	if (b->n == b->cap) {
		uint32_t cap = b->cap ? b->cap * 2 : 64;
		uint32_t *grown = realloc(b->off, cap * sizeof *grown);
		if (!grown)
			return ENOMEM;
		b->off = grown;
		b->cap = cap;
	}
	b->off[b->n++] = off;
	return 0;
}

/* The image entry at p (entry_size checked), with its file from the
 * block's FILE entries; 0 when it is not a valid one. */
static int shared_image(const unsigned char *p, const struct block_files *b,
                        const unsigned char *payload, struct pt_logi_map *m,
                        struct file_claim *c)
{
	struct pt_log_shared_image s;
	memcpy(&s, p, sizeof s);
	*m = (struct pt_logi_map){s.time_ns, s.set,  s.start, s.end,   s.bias,
	                          s.pid,     s.uid,  s.file,  s.index, s.count};
	if (s.entry_size < sizeof s || s.file >= b->n || !image_ok(m))
		return 0;
	struct pt_log_shared_file f;
	memcpy(&f, payload + b->off[s.file], sizeof f);
	*c = (struct file_claim){NULL, (const char *)payload + b->off[s.file] + sizeof f, f.path_len,
	                         f.build_id_len, (uint8_t)(f.flags & 1u)};
	c->build_id = payload + b->off[s.file] + offsetof(struct pt_log_shared_file, build_id);
	return 1;
}

/* An IMAGES_SHARED payload: FILE entries, and images naming them. */
static void shared_block(struct pt_log_images *t, const unsigned char *p, uint32_t len)
{
	struct block_files b = {0};
	uint32_t off = 0;
	while (len - off >= 8) {
		uint32_t size;
		uint16_t kind;
		memcpy(&size, p + off, sizeof size);
		memcpy(&kind, p + off + 4, sizeof kind);
		if (size < 8 || size % 8 || size > len - off)
			break; /* the block's CRC was right: the writer's damage, or a craft */
		if (kind == PT_LOG_SHARED_FILE) {
			struct pt_log_shared_file f;
			if (size < sizeof f)
				break;
			memcpy(&f, p + off, sizeof f);
			if (f.path_len > PT_LOG_IMAGE_PATH_MAX || f.build_id_len > sizeof f.build_id ||
			    size < pt_log_shared_file_size(f.path_len) || block_file_add(&b, off))
				break;
		} else if (kind == PT_LOG_SHARED_IMAGE) {
			struct pt_logi_map m;
			struct file_claim c;
			if (!shared_image(p + off, &b, p, &m, &c))
				break;
			keep(t, m, &c);
		}
		off += size;
	}
	free(b.off);
}


/* ---- IMAGES_COMPACT ----------------------------------------------------- */

static uint32_t def_hash(const struct pt_log_images *t, uint64_t table, uint32_t id)
{
	return (uint32_t)(mix64(mix64(t->seed ^ table) ^ id) >> 32);
}

/* The description of (table, id), or UINT32_MAX; *free_slot as in
 * file_find. */
static uint32_t def_find(const struct pt_log_images *t, uint64_t table, uint32_t id,
                         uint32_t *free_slot)
{
	*free_slot = UINT32_MAX;
	if (!t->def_slots_n)
		return UINT32_MAX;
	uint32_t mask = t->def_slots_n - 1, i = def_hash(t, table, id) & mask;
	for (uint32_t n = 0; n < PROBES; n++, i = (i + 1) & mask) {
		uint32_t v = t->def_slots[i];
		if (!v) {
			*free_slot = i;
			return UINT32_MAX;
		}
		if (t->defs[v - 1].table == table && t->defs[v - 1].id == id)
			return v - 1;
	}
	return UINT32_MAX;
}

static int defs_grow(struct pt_log_images *t)
{
	if (t->ndefs == t->defs_cap) {
		uint32_t cap = t->defs_cap ? t->defs_cap * 2 : 64;
		struct pt_logi_def *grown = realloc(t->defs, cap * sizeof *grown);
		if (!grown)
			return ENOMEM;
		t->defs = grown;
		t->defs_cap = cap;
	}
	if (2 * (t->ndefs + 1) <= t->def_slots_n)
		return 0;
	uint32_t n = t->def_slots_n ? t->def_slots_n * 2 : 256;
	uint32_t *slots = calloc(n, sizeof *slots);
	if (!slots)
		return ENOMEM;
	free(t->def_slots);
	t->def_slots = slots;
	t->def_slots_n = n;
	for (uint32_t d = 0; d < t->ndefs; d++) {
		uint32_t i = def_hash(t, t->defs[d].table, t->defs[d].id) & (n - 1);
		for (uint32_t k = 0; k < PROBES && slots[i]; k++)
			i = (i + 1) & (n - 1);
		if (!slots[i])
			slots[i] = d + 1;
	}
	return 0;
}

/* A FILE entry: (table, id) describes file c, start_off and end_off past
 * a bias.  Described again the same way: nothing new; differently: the id
 * is trusted in neither, and counted. */
static void def_keep(struct pt_log_images *t, uint64_t table, uint32_t id,
                     const struct file_claim *c, uint64_t start_off, uint64_t end_off)
{
	seed_once(t);
	uint32_t slot, d = def_find(t, table, id, &slot);
	if (d != UINT32_MAX) {
		const struct pt_logi_def *old = &t->defs[d];
		if (old->start_off != start_off || old->end_off != end_off ||
		    !same_file(t, &t->files[old->file], c)) {
			if (!old->conflicted)
				t->conflicts++;
			t->defs[d].conflicted = 1;
		}
		return;
	}
	/* A description not kept is not counted: the images naming it are. */
	struct pt_logi_proc described = {0}; /* charged against the whole table's bound only */
	if (t->ndefs >= PT_LOGI_DEFS || defs_grow(t))
		return;
	def_find(t, table, id, &slot);
	uint32_t f = file_of(t, c, &described, PT_LOGI_PATHS);
	if (f == UINT32_MAX || slot == UINT32_MAX)
		return;
	t->defs[t->ndefs] = (struct pt_logi_def){table, start_off, end_off, id, f, 0};
	t->def_slots[slot] = ++t->ndefs;
}

/* The next byte of [p + *off, len) into *v: 0 or -1. */
static int get_byte(const unsigned char *p, uint32_t len, uint32_t *off, uint8_t *v)
{
	if (*off >= len)
		return -1;
	*v = p[(*off)++];
	return 0;
}

/* A FILE entry's body: 0, or -1 when it is not a valid one. */
static int compact_file(struct pt_log_images *t, uint64_t table, const unsigned char *p,
                        uint32_t len)
{
	uint32_t off = 0;
	uint64_t id, start_off, end_off, path_len;
	uint8_t flags, build_id_len;
	if (pt_log_varint_get(p, len, &off, &id) || id > UINT32_MAX || get_byte(p, len, &off, &flags) ||
	    get_byte(p, len, &off, &build_id_len) || build_id_len > 32 || build_id_len > len - off)
		return -1;
	const uint8_t *build_id = p + off;
	off += build_id_len;
	if (pt_log_varint_get(p, len, &off, &start_off) || pt_log_varint_get(p, len, &off, &end_off) ||
	    pt_log_varint_get(p, len, &off, &path_len) || path_len > PT_LOG_IMAGE_PATH_MAX ||
	    path_len > len - off)
		return -1;
	struct file_claim c = {build_id, (const char *)p + off, (uint16_t)path_len, build_id_len,
	                       (uint8_t)(flags & 1u)};
	def_keep(t, table, (uint32_t)id, &c, start_off, end_off);
	return 0;
}

/* Image m of file (table, id), kept until the descriptions are all read. */
static void pend_keep(struct pt_log_images *t, const struct pt_logi_map *m, uint64_t table,
                      uint32_t id)
{
	struct pt_logi_proc *p = charge(t, m->pid);
	if (!p) {
		t->dropped++;
		return;
	}
	if (t->npend == t->pend_cap) {
		uint32_t cap = t->pend_cap ? t->pend_cap * 2 : 64;
		struct pt_logi_pend *grown = cap <= PT_LOGI_MAX ? realloc(t->pend, cap * sizeof *grown) : NULL;
		if (!grown) {
			t->dropped++;
			return;
		}
		t->pend = grown;
		t->pend_cap = cap;
	}
	p->maps++;
	t->pend[t->npend++] = (struct pt_logi_pend){*m, table, id};
	t->indexed = 0;
}

/* The deltas of a block's SET entries count from the entry before. */
struct set_base {
	int32_t pid;
	uint64_t time_ns, set;
};

/* A SET entry's body: 0, or -1 when it is not a valid one (the images
 * before the fault are kept). */
static int compact_set(struct pt_log_images *t, uint64_t table, const unsigned char *p,
                       uint32_t len, struct set_base *b)
{
	uint32_t off = 0;
	uint8_t flags;
	uint64_t dpid, uid, dtime, dset, count, first, n;
	if (get_byte(p, len, &off, &flags) || pt_log_varint_get(p, len, &off, &dpid) ||
	    pt_log_varint_get(p, len, &off, &uid) || pt_log_varint_get(p, len, &off, &dtime) ||
	    pt_log_varint_get(p, len, &off, &dset) || pt_log_varint_get(p, len, &off, &count) ||
	    pt_log_varint_get(p, len, &off, &first) || pt_log_varint_get(p, len, &off, &n))
		return -1;
	int64_t dp = pt_log_unzigzag(dpid);
	if (dp < -(int64_t)UINT32_MAX || dp > (int64_t)UINT32_MAX)
		return -1;
	int64_t pid = (int64_t)b->pid + dp;
	/* Each image takes 2 bytes at least: a count past the body is a lie. */
	if (pid <= 0 || pid > INT32_MAX || uid > UINT32_MAX || count == 0 || count > UINT16_MAX ||
	    first >= count || n == 0 || n > count - first || n > (len - off) / 2)
		return -1;
	b->pid = (int32_t)pid;
	b->time_ns += (uint64_t)pt_log_unzigzag(dtime);
	b->set += (uint64_t)pt_log_unzigzag(dset);
	unsigned shift = flags & PT_LOG_COMPACT_PAGES ? PT_LOG_COMPACT_PAGE_SHIFT : 0;
	uint64_t units = 0;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t id, delta;
		if (pt_log_varint_get(p, len, &off, &id) || id > UINT32_MAX ||
		    pt_log_varint_get(p, len, &off, &delta))
			return -1;
		units += (uint64_t)pt_log_unzigzag(delta);
		struct pt_logi_map m = {b->time_ns, b->set, 0, 0, units << shift, b->pid,
		                        (uint32_t)(uid - 1u), 0, (uint16_t)(first + i), (uint16_t)count};
		pend_keep(t, &m, table, (uint32_t)id);
	}
	return 0;
}

/* An IMAGES_COMPACT payload: the table, then FILE and SET entries. */
static void compact_block(struct pt_log_images *t, const unsigned char *p, uint32_t len)
{
	if (len < PT_LOG_COMPACT_PREFIX)
		return;
	uint64_t table;
	memcpy(&table, p, sizeof table);
	struct set_base b = {0, 0, 0};
	uint32_t off = PT_LOG_COMPACT_PREFIX;
	while (off < len) {
		uint8_t kind = p[off];
		uint32_t at = off + 1;
		uint64_t n;
		if (pt_log_varint_get(p, len, &at, &n) || n > len - at) {
			t->dropped++; /* the block's CRC was right: the writer's damage, or a craft */
			return;
		}
		int bad = kind == PT_LOG_COMPACT_FILE  ? compact_file(t, table, p + at, (uint32_t)n)
		          : kind == PT_LOG_COMPACT_SET ? compact_set(t, table, p + at, (uint32_t)n, &b)
		                                       : 0;
		if (bad) {
			t->dropped++;
			return;
		}
		off = at + (uint32_t)n;
	}
}

/* The image pending image q resolves to, in *m: 0, or -1 when no valid
 * description gives its file. */
static int pend_resolve(const struct pt_log_images *t, const struct pt_logi_pend *q,
                        struct pt_logi_map *m)
{
	uint32_t slot, d = def_find(t, q->table, q->id, &slot);
	if (d == UINT32_MAX || t->defs[d].conflicted)
		return -1;
	*m = q->m;
	m->file = t->defs[d].file;
	m->start = m->bias + t->defs[d].start_off;
	m->end = m->bias + t->defs[d].end_off;
	return image_ok(m) ? 0 : -1;
}

/* The pending images joined to the others, or dropped. */
static void settle(struct pt_log_images *t)
{
	for (uint32_t i = 0; i < t->npend; i++) {
		struct pt_logi_map m;
		if (pend_resolve(t, &t->pend[i], &m) || map_room(t)) {
			t->dropped++;
			continue;
		}
		t->e[t->n++] = m;
	}
	t->npend = 0;
	t->indexed = 0;
}

uint64_t pt_logi_count(const struct pt_log_images *t)
{
	uint64_t n = t->n;
	struct pt_logi_map m;
	for (uint32_t i = 0; i < t->npend; i++)
		n += pend_resolve(t, &t->pend[i], &m) == 0;
	return n;
}

uint64_t pt_logi_dropped(const struct pt_log_images *t)
{
	return t->dropped + t->npend - (pt_logi_count(t) - t->n);
}

void pt_logi_block(struct pt_log_images *t, uint32_t type, const unsigned char *p, uint32_t len)
{
	if (type == PT_LOG_IMAGES)
		images_block(t, p, len);
	else if (type == PT_LOG_IMAGES_SHARED)
		shared_block(t, p, len);
	else if (type == PT_LOG_IMAGES_COMPACT)
		compact_block(t, p, len);
}

static int by_set_start(const void *a, const void *b)
{
	const struct pt_logi_map *x = a, *y = b;
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
		const struct pt_logi_map *h = &t->e[i];
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
static const struct pt_logi_map *in_set(const struct pt_log_images *t,
                                          const struct pt_logi_set *s, uint64_t addr)
{
	uint32_t lo = 0, hi = s->n; /* the first entry starting after addr */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (t->e[s->first + mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct pt_logi_map *e = lo ? &t->e[s->first + lo - 1] : NULL;
	return e && addr < e->end ? e : NULL;
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

static void fill(const struct pt_log_images *t, const struct pt_logi_map *e,
                 struct posixtrace_image *out)
{
	const struct pt_logi_file *f = &t->files[e->file];
	_Static_assert(sizeof out->posixtrace_build_id == sizeof f->build_id, "build ids");
	memcpy(out->posixtrace_build_id, f->build_id, sizeof out->posixtrace_build_id);
	memset(out->posixtrace_reserved, 0, sizeof out->posixtrace_reserved);
	out->posixtrace_reserved32 = 0;
	out->posixtrace_uid = e->uid;
	out->posixtrace_start = e->start;
	out->posixtrace_end = e->end;
	out->posixtrace_load_bias = e->bias;
	out->posixtrace_build_id_size = f->build_id_len;
	out->posixtrace_path_truncated = f->flags & 1;
	memcpy(out->posixtrace_path, t->paths + f->path_off, f->path_len);
	out->posixtrace_path[f->path_len] = '\0';
	out->posixtrace_described = timespec_of(e->time_ns);
}

int pt_logi_find(struct pt_log_images *t, int32_t pid, uint64_t addr, uint64_t ns,
                 struct posixtrace_image *out)
{
	if (t->npend)
		settle(t);
	if (!t->indexed) {
		int err = build_index(t);
		if (err)
			return err;
	}
	uint32_t after = first_set(t, pid, ns);
	const struct pt_logi_map *e = NULL;
	if (after > 0 && t->sets[after - 1].pid == pid)
		e = in_set(t, &t->sets[after - 1], addr); /* the set in force */
	for (uint32_t i = after; !e && i < t->nsets && i < after + LATER_SETS; i++)
		if (t->sets[i].pid == pid)
			e = in_set(t, &t->sets[i], addr);
	if (!e)
		return ENOENT;
	fill(t, e, out);
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
	free(t->files);
	free(t->paths);
	free(t->file_slots);
	free(t->procs);
	free(t->defs);
	free(t->def_slots);
	free(t->pend);
	memset(t, 0, sizeof *t);
}
