/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): turns the addresses a log holds into function, offset and
 * source line (symbolize.h), with elfutils' libdwfl; without libdw, stubs
 * that say ENOTSUP.
 *
 * Each distinct image (path and build id) gets one Dwfl with one module,
 * reported at the file's own addresses (bias 0): a process address is
 * moved to the file's by the image's load bias here, so every process
 * that loaded the same file, wherever, shares that Dwfl and its cache of
 * addresses looked up.  libdwfl opens nothing by itself: the main file
 * is opened, checked and given as an Elf by give_main (find_elf), the
 * debug files are opened and checked by find_debug (find_debuginfo);
 * neither calls the standard callbacks, the only ones that reach
 * debuginfod.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"

#ifndef PT_HAVE_LIBDW

struct symbolizer {
	int unused;
};

struct symbolizer *symbolizer_new(const struct sym_options *o)
{
	(void)o;
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *s) { free(s); }

int symbolize(struct symbolizer *s, const struct posixtrace_image *img, uint64_t address,
              struct sym_site *out)
{
	(void)s, (void)img, (void)address, (void)out;
	return ENOTSUP;
}

void symbolizer_problems(struct symbolizer *s, void (*fn)(const char *msg, void *arg), void *arg)
{
	(void)s, (void)fn, (void)arg;
}

int symbolizer_available(void) { return 0; }

#else

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>

#define DEBUG_ROOT "/usr/lib/debug"
#define IMAGE_BUCKETS 1024u /* power of two */
#define SITES_FIRST 64u     /* power of two */
#define SITES_MAX (1u << 18) /* slots: an image's cache stops growing there */
#define PLACES_MAX 5

struct build_id {
	uint32_t size;
	unsigned char bits[POSIXTRACE_BUILD_ID_MAX];
};

/* An address looked up: key and what was found. */
struct site {
	bool used;
	uint64_t at; /* the file's address */
	const char *function, *file, *inlined;
	uint64_t offset;
	int line;
};

/* Open addressing, at most half full. */
struct sites {
	struct site *slot;
	unsigned bits; /* log2 of the number of slots; 0: no table yet */
	size_t count;
};

/* A file opened and checked. */
struct opened {
	int fd;
	Elf *elf;
	char *path;
};

/* The dwz file the DWARF of a file refers to (.gnu_debugaltlink). */
struct altlink {
	char *name; /* NULL: none */
	struct build_id id;
};

struct symbolizer;

struct entry {
	struct entry *next_in_bucket, *next_made;
	const struct symbolizer *s;
	uint64_t hash;
	char *path; /* as the log gives it */
	int truncated;
	struct build_id id;
	const char *base; /* in path */
	int err;          /* 0: usable; else what each lookup returns */
	char *problem;    /* why not usable; NULL: nothing to say */
	bool reported;
	char *file;           /* the file used (a place of path) */
	struct opened main;   /* until libdwfl takes it (give_main) */
	struct altlink alt;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct sites sites;
};

struct symbolizer {
	struct sym_options opt;
	char *symfs;
	struct entry *bucket[IMAGE_BUCKETS];
	struct entry *first, **last_made;
	struct entry *last_hit;
};

/* ---- notes ------------------------------------------------------------- */

/* path with every byte but printable ASCII as \xHH, \ as \\. */
static char *escape_path(const char *path)
{
	char *out = malloc(4 * strlen(path) + 1), *p = out;
	if (!out)
		return NULL;
	for (const unsigned char *c = (const unsigned char *)path; *c; c++) {
		if (*c >= 0x20 && *c < 0x7f && *c != '\\')
			*p++ = (char)*c;
		else
			p += sprintf(p, *c == '\\' ? "\\\\" : "\\x%02x", *c);
	}
	*p = '\0';
	return out;
}

/* *why = "PATH: what"; returns -1 (a failure) for the caller to return.
 * Out of memory, *why stays NULL: the file is then taken as absent. */
static int note(char **why, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int note(char **why, const char *path, const char *fmt, ...)
{
	char *what = NULL, *esc = escape_path(path);
	va_list ap;
	va_start(ap, fmt);
	int n = vasprintf(&what, fmt, ap);
	va_end(ap);
	free(*why);
	*why = NULL;
	if (esc && n >= 0 && asprintf(why, "%s: %s", esc, what) < 0)
		*why = NULL;
	free(esc);
	if (n >= 0)
		free(what);
	return -1;
}

static void hex(const struct build_id *id, char *out)
{
	for (uint32_t i = 0; i < id->size; i++)
		sprintf(out + 2 * i, "%02x", id->bits[i]);
	out[2 * id->size] = '\0';
}

/* ---- opening a file ---------------------------------------------------- */

static int usable_stat(const struct symbolizer *s, const struct stat *st, const char *path,
                       char **why)
{
	if (S_ISLNK(st->st_mode))
		return note(why, path, "a symbolic link (not followed)");
	if (!S_ISREG(st->st_mode))
		return note(why, path, "not a regular file");
	if (st->st_size > SYM_FILE_MAX)
		return note(why, path, "too large (%lld bytes; at most %lld)",
		            (long long)st->st_size, (long long)SYM_FILE_MAX);
	if (s->opt.check_owner && st->st_uid != 0 && st->st_uid != s->opt.owner)
		return note(why, path, "owned by uid %lu, neither root nor the log's owner",
		            (unsigned long)st->st_uid);
	return 0;
}

/* Opens for reading the file that pfd (O_PATH) names: through /proc, the
 * same inode whatever has been renamed since; without /proc, by name, the
 * inode compared by the caller. */
static int reopen(int pfd, const char *path)
{
	char proc[40];
	snprintf(proc, sizeof proc, "/proc/self/fd/%d", pfd);
	int fd = open(proc, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	return fd;
}

/* A descriptor for reading path, a regular file the options allow, or
 * -1 and *why (NULL: it does not exist).  O_PATH first: opening a
 * device, even for reading, can act (a watchdog starts, a tape
 * rewinds), and a FIFO would block; an O_PATH descriptor does neither,
 * and is what fstat checks before anything is opened for reading. */
static int open_regular(const struct symbolizer *s, const char *path, char **why)
{
	int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0)
		return errno == ENOENT || errno == ENOTDIR ? -1 : note(why, path, "%s", strerror(errno));
	struct stat st, st2;
	int fd = -1;
	if (fstat(pfd, &st) != 0)
		note(why, path, "%s", strerror(errno));
	else if (usable_stat(s, &st, path, why) == 0 && (fd = reopen(pfd, path)) < 0)
		note(why, path, "%s", strerror(errno));
	close(pfd);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st2) != 0 || st2.st_dev != st.st_dev || st2.st_ino != st.st_ino) {
		close(fd);
		return note(why, path, "replaced while it was opened");
	}
	if (usable_stat(s, &st2, path, why) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The process described an image without a build id: a file with one is
 * taken for another file (the library reads the id from the image it
 * describes, so the same file would have shown it).  Both without one,
 * nothing verifies the file: it is used as it is. */
static int check_build_id(Elf *elf, const struct build_id *want, const char *path, char **why)
{
	const void *bits;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
	char need[2 * POSIXTRACE_BUILD_ID_MAX + 1], has[2 * POSIXTRACE_BUILD_ID_MAX + 1];
	hex(want, need);
	if (n < 0)
		return note(why, path, "unreadable notes (%s)", elf_errmsg(-1));
	if (n == 0 && want->size == 0)
		return 0;
	if (n == 0)
		return note(why, path, "build id %s needed, the file has none", need);
	if (want->size == 0)
		return note(why, path, "has a build id, the process described none (another file?)");
	if ((size_t)n == want->size && memcmp(bits, want->bits, want->size) == 0)
		return 0;
	struct build_id got = { .size = n > POSIXTRACE_BUILD_ID_MAX ? POSIXTRACE_BUILD_ID_MAX
	                                                            : (uint32_t)n };
	memcpy(got.bits, bits, got.size);
	hex(&got, has);
	return note(why, path, "build id %s needed, the file's is %s%s (a different build: rebuilt?)",
	            need, has, (size_t)n > got.size ? "..." : "");
}

static int check_elf(Elf *elf, bool image, const struct build_id *want, const char *path,
                     char **why)
{
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return note(why, path, "not an ELF file");
	GElf_Ehdr eh;
	if (image && (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)))
		return note(why, path, "not a program nor a shared library");
	return check_build_id(elf, want, path, why);
}

/* Opens path and checks it: 0 and *f, or -1 and *why (NULL: absent).
 * image: a program or library (else a debug file, of any ELF type).
 * ELF_C_READ, not a mapping: a file cut short while it is read gives
 * read errors, where a mapping would give SIGBUS. */
static int open_checked(const struct symbolizer *s, const char *path, bool image,
                        const struct build_id *want, struct opened *f, char **why)
{
	int fd = open_regular(s, path, why);
	if (fd < 0)
		return -1;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	char *copy = NULL;
	if (check_elf(elf, image, want, path, why) == 0 && !(copy = strdup(path)))
		note(why, path, "no memory");
	if (!copy) {
		elf_end(elf);
		close(fd);
		return -1;
	}
	*f = (struct opened){ .fd = fd, .elf = elf, .path = copy };
	return 0;
}

static void close_opened(struct opened *f)
{
	if (f->elf)
		elf_end(f->elf);
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	*f = (struct opened){ .fd = -1 };
}

/* ---- where files are --------------------------------------------------- */

struct places {
	int n;
	char path[PLACES_MAX][PATH_MAX];
};

/* Adds a + b + c (b after a slash unless it starts with one); a path too
 * long is left out. */
static void place(struct places *p, const char *a, const char *b, const char *c)
{
	const char *slash = a[0] && b[0] != '/' ? "/" : "";
	if (p->n < PLACES_MAX &&
	    (size_t)snprintf(p->path[p->n], PATH_MAX, "%s%s%s%s", a, slash, b, c) < PATH_MAX)
		p->n++;
}

/* ".build-id/xx/rest": where a build id's files are kept. */
static bool build_id_dir(const struct build_id *id, char *out)
{
	if (id->size < 2)
		return false;
	char h[2 * POSIXTRACE_BUILD_ID_MAX + 1];
	hex(id, h);
	sprintf(out, ".build-id/%.2s/%s", h, h + 2);
	return true;
}

static void image_places(const struct entry *e, struct places *p)
{
	char rel[16 + 2 * POSIXTRACE_BUILD_ID_MAX];
	const char *symfs = e->s->symfs;
	p->n = 0;
	if (symfs)
		place(p, symfs, e->path, "");
	if (symfs && build_id_dir(&e->id, rel))
		place(p, symfs, rel, "");
	place(p, "", e->path, "");
}

/* Debug files by build id; name: a dwz file's own name, tried last. */
static void debug_places(const struct symbolizer *s, const struct build_id *id, const char *name,
                         struct places *p)
{
	char rel[16 + 2 * POSIXTRACE_BUILD_ID_MAX], root[32 + sizeof rel];
	p->n = 0;
	if (build_id_dir(id, rel)) {
		snprintf(root, sizeof root, "%s/%s", DEBUG_ROOT, rel);
		if (s->symfs) {
			place(p, s->symfs, rel, ".debug");
			place(p, s->symfs, root, ".debug");
		}
		place(p, "", root, ".debug");
	}
	if (name && name[0] == '/') {
		if (s->symfs)
			place(p, s->symfs, name, "");
		place(p, "", name, "");
	}
}

/* The first place that has the file: 0 and *f, or -1 and *why, the note
 * on the first file found unusable (NULL: none was there). */
static int open_first(const struct symbolizer *s, const struct places *p, bool image,
                      const struct build_id *want, struct opened *f, char **why)
{
	*why = NULL;
	for (int i = 0; i < p->n; i++) {
		char *because = NULL;
		if (open_checked(s, p->path[i], image, want, f, &because) == 0) {
			free(*why);
			*why = NULL;
			return 0;
		}
		if (!*why)
			*why = because;
		else
			free(because);
	}
	return -1;
}

/* ---- debug files ------------------------------------------------------- */

/* What a file's .gnu_debugaltlink says: a name, then a build id. */
static void read_altlink(Elf *elf, struct altlink *alt)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	free(alt->name);
	*alt = (struct altlink){ .name = NULL };
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    strcmp(name, ".gnu_debugaltlink") != 0)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return;
		size_t len = strnlen(d->d_buf, d->d_size), idn = d->d_size - len - (len < d->d_size);
		if (len == d->d_size || len >= PATH_MAX || idn == 0 || idn > POSIXTRACE_BUILD_ID_MAX ||
		    !(alt->name = strndup(d->d_buf, len)))
			return;
		alt->id.size = (uint32_t)idn;
		memcpy(alt->id.bits, (const char *)d->d_buf + len + 1, idn);
		return;
	}
}

/* libdwfl's find_debuginfo: the image's debug file, or (asked with the
 * name a .gnu_debugaltlink gave) its dwz file, checked as the image is;
 * libdwfl maps it from the descriptor (cut short meanwhile, by its
 * owner, it would give SIGBUS: only a debug file is read that way).  -1
 * leaves *debug_name alone: libdwfl would open a name left there itself. */
static int find_debug(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                      const char *file_name, const char *debuglink, GElf_Word crc, char **debug_name)
{
	(void)mod, (void)modname, (void)base, (void)file_name;
	struct entry *e = *userdata;
	bool alt = e->alt.name && debuglink && crc == 0 && strcmp(debuglink, e->alt.name) == 0;
	struct places p;
	struct opened f;
	char *why;
	debug_places(e->s, alt ? &e->alt.id : &e->id, alt ? e->alt.name : NULL, &p);
	int rc = open_first(e->s, &p, false, alt ? &e->alt.id : &e->id, &f, &why);
	free(why); /* the image is usable without: nothing to say */
	if (rc != 0)
		return -1;
	if (!alt)
		read_altlink(f.elf, &e->alt);
	elf_end(f.elf);
	free(*debug_name);
	*debug_name = f.path;
	return f.fd;
}

/* libdwfl's find_elf: the image's file, opened and checked already. */
static int give_main(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                     char **file_name, Elf **elfp)
{
	(void)mod, (void)modname, (void)base;
	struct entry *e = *userdata;
	if (!e->main.elf)
		return -1;
	int fd = e->main.fd;
	*elfp = e->main.elf;
	*file_name = e->main.path;
	e->main = (struct opened){ .fd = -1 };
	return fd;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = give_main,
	.find_debuginfo = find_debug,
	.section_address = dwfl_offline_section_address,
};

/* ---- an image's Dwfl --------------------------------------------------- */

/* The span of the file's PT_LOAD segments; low as libdwfl computes the
 * file's own start (the first segment's aligned address), so that the
 * module's bias is 0. */
static bool load_span(Elf *elf, GElf_Addr *low, GElf_Addr *high)
{
	size_t n;
	bool any = false;
	if (elf_getphdrnum(elf, &n) != 0)
		return false;
	*high = 0;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return false;
		if (ph.p_type != PT_LOAD)
			continue;
		if (!any)
			*low = ph.p_vaddr & -ph.p_align;
		any = true;
		if (ph.p_vaddr + ph.p_memsz > *high)
			*high = ph.p_vaddr + ph.p_memsz;
	}
	return any && *high > *low;
}

static int dwfl_failed(struct entry *e, const char *what)
{
	note(&e->problem, e->file, "%s (%s)", what, dwfl_errmsg(-1));
	return ENOENT;
}

/* One module for the file, at its own addresses; its Elf given now. */
static int start_dwfl(struct entry *e)
{
	GElf_Addr low = 0, high = 0, bias;
	void **userdata;
	if (!load_span(e->main.elf, &low, &high)) {
		note(&e->problem, e->file, "no loadable segment");
		return ENOENT;
	}
	if (!(e->dwfl = dwfl_begin(&callbacks)))
		return ENOMEM;
	dwfl_report_begin(e->dwfl);
	e->mod = dwfl_report_module(e->dwfl, e->base, low, high);
	if (!e->mod)
		return dwfl_failed(e, "not usable");
	dwfl_module_info(e->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = e;
	if (dwfl_report_end(e->dwfl, NULL, NULL) != 0 || !dwfl_module_getelf(e->mod, &bias))
		return dwfl_failed(e, "not usable");
	if (bias != 0) {
		note(&e->problem, e->file, "unexpected layout");
		return ENOENT;
	}
	return 0;
}

/* Finds, checks and reports the image's file; e->err says how it went. */
static void entry_open(struct entry *e)
{
	struct places p;
	if (!e->path[0]) {
		e->err = ENOENT; /* no file: the vDSO */
		return;
	}
	if (e->truncated) {
		e->err = ENOENT;
		note(&e->problem, e->path, "path cut short in the log");
		return;
	}
	image_places(e, &p);
	if (open_first(e->s, &p, true, &e->id, &e->main, &e->problem) != 0) {
		e->err = ENOENT;
		if (!e->problem)
			note(&e->problem, e->path, "no such file");
		return;
	}
	if (!(e->file = strdup(e->main.path))) {
		e->err = ENOMEM;
		return;
	}
	read_altlink(e->main.elf, &e->alt);
	e->err = start_dwfl(e);
}

/* ---- images ------------------------------------------------------------ */

static uint64_t image_hash(const char *path, size_t len, const struct build_id *id, int truncated)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)truncated; /* FNV-1a */
	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)path[i]) * 0x100000001b3ull;
	for (uint32_t i = 0; i < id->size; i++)
		h = (h ^ id->bits[i]) * 0x100000001b3ull;
	return h ^ id->size;
}

static bool same_image(const struct entry *e, uint64_t h, const char *path, size_t len,
                       const struct build_id *id, int truncated)
{
	return e->hash == h && e->truncated == truncated && e->id.size == id->size &&
	       memcmp(e->id.bits, id->bits, id->size) == 0 && strncmp(e->path, path, len) == 0 &&
	       e->path[len] == '\0';
}

static struct entry *new_entry(struct symbolizer *s, uint64_t h, const char *path, size_t len,
                               const struct build_id *id, int truncated)
{
	struct entry *e = calloc(1, sizeof *e);
	if (!e || !(e->path = strndup(path, len))) {
		free(e);
		return NULL;
	}
	e->s = s;
	e->hash = h;
	e->truncated = truncated;
	e->id = *id;
	e->base = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	e->main.fd = -1;
	e->next_in_bucket = s->bucket[h & (IMAGE_BUCKETS - 1)];
	s->bucket[h & (IMAGE_BUCKETS - 1)] = e;
	*s->last_made = e;
	s->last_made = &e->next_made;
	entry_open(e);
	return e;
}

/* The image's entry, made (and its file opened) the first time. */
static struct entry *entry_for(struct symbolizer *s, const struct posixtrace_image *img)
{
	const char *path = img->posixtrace_path;
	size_t len = strnlen(path, sizeof img->posixtrace_path);
	/* a path with no end in the log is one cut short */
	int truncated = img->posixtrace_path_truncated || len == sizeof img->posixtrace_path;
	struct build_id id = { .size = img->posixtrace_build_id_size };
	memcpy(id.bits, img->posixtrace_build_id, id.size);
	uint64_t h = image_hash(path, len, &id, truncated);
	if (s->last_hit && same_image(s->last_hit, h, path, len, &id, truncated))
		return s->last_hit;
	for (struct entry *e = s->bucket[h & (IMAGE_BUCKETS - 1)]; e; e = e->next_in_bucket)
		if (same_image(e, h, path, len, &id, truncated))
			return s->last_hit = e;
	struct entry *e = new_entry(s, h, path, len, &id, truncated);
	return e ? (s->last_hit = e) : NULL;
}

static void free_entry(struct entry *e)
{
	if (e->dwfl)
		dwfl_end(e->dwfl);
	close_opened(&e->main);
	free(e->sites.slot);
	free(e->alt.name);
	free(e->problem);
	free(e->file);
	free(e->path);
	free(e);
}

/* ---- addresses --------------------------------------------------------- */

static size_t site_index(const struct sites *t, uint64_t at)
{
	return (size_t)((at * 0x9e3779b97f4a7c15ull) >> (64 - t->bits));
}

/* The slot of at, or the empty one it would take. */
static struct site *site_probe(const struct sites *t, uint64_t at)
{
	size_t mask = ((size_t)1 << t->bits) - 1;
	for (size_t i = site_index(t, at);; i = (i + 1) & mask)
		if (!t->slot[i].used || t->slot[i].at == at)
			return &t->slot[i];
}

static bool sites_grow(struct sites *t)
{
	unsigned bits = t->bits ? t->bits + 1 : __builtin_ctz(SITES_FIRST);
	if (((size_t)1 << bits) > SITES_MAX)
		return false;
	struct sites n = { .slot = calloc((size_t)1 << bits, sizeof *n.slot), .bits = bits,
	                   .count = t->count };
	if (!n.slot)
		return false;
	for (size_t i = 0; t->bits && i < ((size_t)1 << t->bits); i++)
		if (t->slot[i].used)
			*site_probe(&n, t->slot[i].at) = t->slot[i];
	free(t->slot);
	*t = n;
	return true;
}

/* at's slot, to fill if not used; NULL when the table is full (or no
 * memory for it): then at is looked up every time. */
static struct site *site_slot(struct sites *t, uint64_t at)
{
	bool room = t->bits && 2 * (t->count + 1) <= ((size_t)1 << t->bits);
	if (!room)
		room = sites_grow(t);
	if (!t->bits)
		return NULL;
	struct site *slot = site_probe(t, at);
	return slot->used || room ? slot : NULL;
}

/* The line of addr by the compile units' own ranges.  libdwfl finds a
 * unit through .debug_aranges only (elfutils 0.188), which clang does
 * not write by default. */
static void line_by_units(Dwfl_Module *mod, uint64_t addr, struct site *r)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(mod, &bias);
	Dwarf_CU *cu = NULL;
	Dwarf_Die die;
	int line;
	while (dw && dwarf_get_units(dw, cu, &cu, NULL, NULL, &die, NULL) == 0) {
		if (dwarf_haspc(&die, addr - bias) <= 0)
			continue;
		Dwarf_Line *l = dwarf_getsrc_die(&die, addr - bias);
		if (l && (r->file = dwarf_linesrc(l, NULL, NULL)) && dwarf_lineno(l, &line) == 0)
			r->line = line > 0 ? line : 0;
		return;
	}
}

/* The compile unit holding addr: through .debug_aranges, else by the
 * units' own ranges (clang writes no aranges).  0: none. */
static int unit_of(Dwfl_Module *mod, uint64_t addr, Dwarf_Die *unit, Dwarf_Addr *bias)
{
	Dwarf_Die *found = dwfl_module_addrdie(mod, addr, bias);
	if (found) {
		*unit = *found;
		return 1;
	}
	Dwarf *dw = dwfl_module_getdwarf(mod, bias);
	Dwarf_CU *cu = NULL;
	while (dw && dwarf_get_units(dw, cu, &cu, NULL, NULL, unit, NULL) == 0)
		if (dwarf_haspc(unit, addr - *bias) > 0)
			return 1;
	return 0;
}

/* DIEs a lookup may visit: a crafted unit (siblings pointing back) costs
 * this much, not a loop. */
#define SCOPE_BUDGET 100000
#define SCOPE_DEPTH 64 /* scopes nested in scopes: the stack's bound */

/* Tags whose children may hold a function: C++ puts functions in
 * namespaces and classes. */
static int holds_functions(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* Under die, the innermost inlined subroutine holding pc, or NULL.  Until
 * the function holding pc is found (in_function 0) the walk goes into
 * namespaces and classes, where C++ puts functions; inside it, into its
 * lexical blocks and inlined subroutines.  Walked with dwarf_child and
 * dwarf_siblingof (dwarf_getscopes leaks on damaged DWARF, elfutils 0.188). */
static const char *inlined_under(Dwarf_Die *die, Dwarf_Addr pc, int in_function, int *budget,
                                 int depth)
{
	Dwarf_Die child;
	if (depth > SCOPE_DEPTH || dwarf_child(die, &child) != 0)
		return NULL;
	do {
		if (--*budget < 0)
			return NULL;
		int tag = dwarf_tag(&child);
		int scope = in_function ? tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block
		                        : tag == DW_TAG_subprogram;
		if (scope && dwarf_haspc(&child, pc) > 0) {
			const char *inner = inlined_under(&child, pc, 1, budget, depth + 1);
			Dwarf_Attribute a;
			if (!inner && tag == DW_TAG_inlined_subroutine)
				inner = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &a));
			return inner;
		}
		if (!in_function && holds_functions(tag)) {
			const char *name = inlined_under(&child, pc, 0, budget, depth + 1);
			if (name || *budget < 0)
				return name;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
	return NULL;
}

/* The innermost function inlined where addr is (its name from the
 * abstract origin), or NULL: the call was made by the function itself. */
static const char *inlined_at(Dwfl_Module *mod, uint64_t addr)
{
	Dwarf_Die unit;
	Dwarf_Addr bias;
	int budget = SCOPE_BUDGET;
	if (!unit_of(mod, addr, &unit, &bias))
		return NULL;
	return inlined_under(&unit, addr - bias, 0, &budget, 0);
}

/* at - 1: at is a return address, the call before it (symbolize.h). */
static void look_up(const struct entry *e, uint64_t at, struct site *r)
{
	uint64_t call = at - 1;
	GElf_Off off = 0;
	GElf_Sym sym;
	int line = 0;
	r->at = at;
	r->function = dwfl_module_addrinfo(e->mod, call, &off, &sym, NULL, NULL, NULL);
	r->offset = r->function ? off + (at - call) : at;
	Dwfl_Line *l = dwfl_module_getsrc(e->mod, call);
	r->file = l ? dwfl_lineinfo(l, NULL, &line, NULL, NULL, NULL) : NULL;
	r->line = r->file && line > 0 ? line : 0;
	if (!r->file)
		line_by_units(e->mod, call, r);
	r->inlined = r->function ? inlined_at(e->mod, call) : NULL;
}

/* ---- the interface ----------------------------------------------------- */

struct symbolizer *symbolizer_new(const struct sym_options *o)
{
	struct symbolizer *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	if (o)
		s->opt = *o;
	if (o && o->symfs && !(s->symfs = strdup(o->symfs))) {
		free(s);
		return NULL;
	}
	s->opt.symfs = s->symfs;
	s->last_made = &s->first;
	elf_version(EV_CURRENT); /* before elf_begin, which comes before any Dwfl */
	return s;
}

void symbolizer_free(struct symbolizer *s)
{
	if (!s)
		return;
	for (struct entry *e = s->first, *next; e; e = next) {
		next = e->next_made;
		free_entry(e);
	}
	free(s->symfs);
	free(s);
}

int symbolize(struct symbolizer *s, const struct posixtrace_image *img, uint64_t address,
              struct sym_site *out)
{
	if (!s || !img || !out || img->posixtrace_build_id_size > POSIXTRACE_BUILD_ID_MAX ||
	    address < img->posixtrace_start || address >= img->posixtrace_end)
		return EINVAL;
	struct entry *e = entry_for(s, img);
	if (!e)
		return ENOMEM;
	if (e->err)
		return e->err;
	uint64_t at = address - img->posixtrace_load_bias;
	struct site once = { .used = false }, *r = site_slot(&e->sites, at);
	if (!r)
		r = &once;
	if (!r->used) {
		look_up(e, at, r);
		if (r != &once) {
			r->used = true;
			e->sites.count++;
		}
	}
	*out = (struct sym_site){ .function = r->function, .inlined = r->inlined,
	                          .offset = r->offset, .file = r->file,
	                          .line = r->line, .image = e->base };
	return 0;
}

void symbolizer_problems(struct symbolizer *s, void (*fn)(const char *msg, void *arg), void *arg)
{
	for (struct entry *e = s ? s->first : NULL; e; e = e->next_made)
		if (e->problem && !e->reported) {
			e->reported = true;
			fn(e->problem, arg);
		}
}

int symbolizer_available(void) { return 1; }

#endif
