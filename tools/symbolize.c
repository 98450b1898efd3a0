/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): turns the addresses a log holds into function, offset and
 * source line (symbolize.h), with elfutils' libdwfl and libdw; without
 * libdw, stubs that say ENOTSUP.
 *
 * An image as a log claims it (path and build id) is an entry; the file
 * it names, read once into memory, is a module, keyed by the file's
 * device and inode and by its build id, so that every spelling of a path
 * and every process that loaded the file share one.  A module has one
 * Dwfl with one module, reported at the file's own addresses (bias 0): a
 * process address is moved to the file's by the image's load bias here.
 *
 * No file is mapped: the image's file is read with pread into memory
 * and given to libdwfl as an Elf (elf_memory, by give_main); a debug file
 * and a dwz file, which libdwfl takes only as a descriptor, are read the
 * same way and handed over as a sealed memfd of this process (find_debug):
 * no one else can cut it short.  Before libdwfl sees a copy, the sizes
 * its compressed sections claim are checked against the budgets, and its
 * .gnu_debugdata (an xz-compressed symbol table libdwfl would inflate
 * without bound) is hidden.  libdwfl opens nothing by itself: neither
 * callback calls the standard ones, the only ones that reach debuginfod,
 * and DWARF is read only when libdw would not look for a dwz file or a
 * split unit by itself (it would open and map it).
 *
 * A lookup is a search: each module's compile units' ranges are read
 * once into an index (a range list shared by several units is read
 * once), each unit's functions the first time an address falls in it;
 * every unit, DIE, range entry and line row read is counted against the
 * module's and the run's work budgets.
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

void symbolizer_stats(const struct symbolizer *s, struct sym_stats *out)
{
	(void)s;
	*out = (struct sym_stats){ 0 };
}

int symbolize_files(struct symbolizer *s, const struct posixtrace_image *img,
                    struct sym_files *out)
{
	(void)s, (void)img, (void)out;
	return ENOTSUP;
}

int symbolize_elf_memory(struct symbolizer *s, const void *bytes, size_t size, const uint64_t *at,
                         size_t n, struct sym_site *out)
{
	(void)s, (void)bytes, (void)size, (void)at, (void)n, (void)out;
	return ENOTSUP;
}

#else

#include <dwarf.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <limits.h>
#include <sys/mman.h>

#define DEBUG_ROOT "/usr/lib/debug"
#define IMAGE_BUCKETS 1024u /* power of two */
#define SITES_FIRST 64u     /* power of two */
#define PLACES_MAX 5
#define SCOPE_DEPTH 64      /* scopes nested in scopes: the stack's bound */
#define SCAN_BACK 64        /* overlapping spans looked at for one address */
#define SKIPPED_PER_UNIT 16 /* bytes of DWARF skipped that count as a unit of work */

struct build_id {
	uint32_t size;
	unsigned char bits[POSIXTRACE_BUILD_ID_MAX];
};

/* An address looked up: key and what was found. */
struct site {
	bool used;
	int line;
	uint64_t at; /* the file's address */
	const char *function, *file, *inlined;
	uint64_t offset;
};

/* Open addressing, at most half full. */
struct sites {
	struct site *slot;
	unsigned bits; /* log2 of the number of slots; 0: no table yet */
	size_t count;
};

/* An address range and what it belongs to (a unit's index, a DIE). */
struct span {
	uint64_t lo, hi;
	uint64_t who;
};

/* Sorted by lo; reach[i]: the highest hi of spans 0..i. */
struct spans {
	struct span *v;
	uint64_t *reach;
	size_t n, cap;
};

/* A compile unit of the module's DWARF. */
struct unit {
	Dwarf_Die die;
	struct spans funcs; /* its functions, once looked into */
	bool funcs_read, lines_read;
};

/* The dwz file the DWARF of a file refers to (.gnu_debugaltlink). */
struct altlink {
	char *name; /* NULL: none */
	struct build_id id;
};

/* A file read into memory and checked. */
struct loaded {
	void *bytes;
	size_t size;
	Elf *elf; /* on bytes */
	char *path;
	dev_t dev;
	ino_t ino;
};

/* A debug or dwz file kept as a sealed memfd: modules that need the same
 * file share it. */
struct aux_file {
	struct aux_file *next;
	dev_t dev;
	ino_t ino;
	struct build_id id;
	int memfd;
	bool has_crc; /* found by a .gnu_debuglink: crc is the file's CRC-32 */
	uint32_t crc;
	struct altlink alt; /* what the file's own .gnu_debugaltlink says */
};

struct symbolizer;

/* A file of an image, loaded once. */
struct module {
	struct module *next;
	struct symbolizer *s;
	dev_t dev;
	ino_t ino;
	bool has_inode;   /* false: given as bytes */
	bool search_debug; /* look for its debug files */
	struct build_id id; /* the file's */
	char *file;         /* where it was read from, for notes */
	void *bytes;        /* the file's copy, under main_elf */
	Elf *main_elf;      /* until libdwfl takes it (give_main) */
	struct altlink alt; /* of the DWARF libdwfl reads (the debug file's, else the file's) */
	bool alt_given, alt_refused;
	size_t size;                           /* of bytes */
	struct aux_file *debug_aux, *alt_aux; /* the files find_debug gave */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int err;       /* 0: usable; else what each lookup returns */
	char *problem; /* why not usable; NULL: nothing to say */
	bool reported;
	/* the address index */
	int index_state; /* 0: not built; 1: built; -1: no DWARF to use */
	Dwarf *dw;
	Dwarf_Addr dw_bias;
	struct unit *units;
	size_t nunits, units_cap;
	struct spans unit_spans;
	/* the symbol table's index: sized symbols as spans (who: an index
	 * in names), those without a size by address */
	bool symbols_read;
	Elf_Data *line_data; /* .debug_line, once looked for */
	bool line_looked;
	struct spans sized;
	struct span *sizeless;
	size_t nsizeless;
	const char **names;
	uint64_t work;
	struct sites sites;
};

/* An image as a log gives it. */
struct entry {
	struct entry *next_in_bucket, *next_made;
	uint64_t hash;
	char *path; /* as the log gives it */
	int truncated;
	struct build_id id;
	const char *base; /* in path */
	int err;          /* 0: usable (module set) */
	struct module *module;
	char *problem;
	bool reported;
};

struct symbolizer {
	struct sym_options opt;
	char *symfs;
	struct entry *bucket[IMAGE_BUCKETS];
	struct entry *first, **last_made, *last_hit;
	struct module *modules, **last_module;
	struct aux_file *aux;
	uint64_t entries, nmodules, loaded, work, sites;
	struct module *opening; /* the module whose Dwfl is being set up */
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

/* Absent, unreadable and refused say the same: what a file is, who owns
 * it, how large it is, whether it exists are not told of a file this
 * process could not (or would not) read. */
static int no_file(char **why, const char *path)
{
	return note(why, path, "%s", SYM_NOTE_NO_FILE);
}

static void hex(const struct build_id *id, char *out)
{
	for (uint32_t i = 0; i < id->size; i++)
		sprintf(out + 2 * i, "%02x", id->bits[i]);
	out[2 * id->size] = '\0';
}

static bool same_id(const struct build_id *a, const struct build_id *b)
{
	return a->size == b->size && memcmp(a->bits, b->bits, a->size) == 0;
}

/* ---- budgets ----------------------------------------------------------- */

static uint64_t or_default(uint64_t v, uint64_t def) { return v ? v : def; }

/* Counts bytes about to be held; false (nothing counted) past the
 * budget. */
static bool take_bytes(struct symbolizer *s, uint64_t n)
{
	if (n > s->opt.loaded_max - s->loaded)
		return false;
	s->loaded += n;
	return true;
}

/* The module's names are dropped for good, with one note. */
static void over_budget(struct module *m)
{
	if (m->err)
		return;
	m->err = ENOENT;
	bool image = m->work > m->s->opt.image_work_max;
	note(&m->problem, m->file,
	     "its debug information costs more than the budget (%llu units of work %s): "
	     "no names", (unsigned long long)(image ? m->s->opt.image_work_max
	                                             : m->s->opt.run_work_max),
	     image ? "per image" : "in all");
}

/* Counts work done for m; false (and m unusable) past a budget. */
static bool charge(struct module *m, uint64_t units)
{
	struct symbolizer *s = m->s;
	m->work += units;
	s->work += units;
	if (m->work <= s->opt.image_work_max && s->work <= s->opt.run_work_max)
		return true;
	over_budget(m);
	return false;
}

/* Counts n bytes of m's indexes against loaded_max; false (and m
 * unusable) past it. */
static bool take_index_bytes(struct module *m, uint64_t n)
{
	if (take_bytes(m->s, n))
		return true;
	if (!m->err) {
		m->err = ENOENT;
		note(&m->problem, m->file, "its address index needs more memory than what is left "
		     "of the budget (%llu bytes in all): no names",
		     (unsigned long long)m->s->opt.loaded_max);
	}
	return false;
}

/* ---- opening a file ---------------------------------------------------- */

static bool usable_stat(const struct symbolizer *s, const struct stat *st)
{
	return S_ISREG(st->st_mode) && st->st_size <= s->opt.file_max &&
	       (!s->opt.check_owner || st->st_uid == 0 || st->st_uid == s->opt.owner);
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

/* A descriptor for reading path, a regular file the options allow, and
 * its *st, or -1 (*present: whether something was there to note; what is
 * never said).  O_PATH first: opening a device, even for reading, can
 * act (a watchdog starts, a tape rewinds), and a FIFO would block; an
 * O_PATH descriptor does neither, and is what fstat checks before
 * anything is opened for reading. */
static int open_regular(const struct symbolizer *s, const char *path, struct stat *st,
                        bool *present)
{
	int pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	*present = pfd >= 0 || (errno != ENOENT && errno != ENOTDIR);
	if (pfd < 0)
		return -1;
	struct stat st2;
	int fd = -1;
	if (fstat(pfd, st) == 0 && usable_stat(s, st))
		fd = reopen(pfd, path);
	close(pfd);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st2) != 0 || st2.st_dev != st->st_dev || st2.st_ino != st->st_ino ||
	    !usable_stat(s, &st2)) {
		close(fd);
		return -1;
	}
	*st = st2;
	return fd;
}

/* size bytes of fd from its start into buf; false if it gave fewer (cut
 * short meanwhile) or failed. */
static bool read_exactly(int fd, void *buf, size_t size)
{
	for (size_t got = 0; got < size;) {
		ssize_t n = pread(fd, (char *)buf + got, size - got, (off_t)got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		got += (size_t)n;
	}
	return true;
}

/* The process described an image without a build id: a file with one is
 * taken for another file (the library reads the id from the image it
 * describes, so the same file would have shown it).  Both without one,
 * nothing verifies the file: it is used as it is.  The file was read: its
 * own build id may be told. */
static int check_build_id(const struct build_id *got, bool got_more, const struct build_id *want,
                          const char *path, char **why)
{
	char need[2 * POSIXTRACE_BUILD_ID_MAX + 1], has[2 * POSIXTRACE_BUILD_ID_MAX + 1];
	hex(want, need);
	if (got->size == 0 && want->size == 0)
		return 0;
	if (got->size == 0)
		return note(why, path, "build id %s needed, the file has none", need);
	if (want->size == 0)
		return note(why, path, "has a build id, the process described none (another file?)");
	if (!got_more && same_id(got, want))
		return 0;
	hex(got, has);
	return note(why, path, "build id %s needed, the file's is %s%s (a different build: rebuilt?)",
	            need, has, got_more ? "..." : "");
}

/* The file's GNU build id; false: its notes are unreadable. */
static bool file_build_id(Elf *elf, struct build_id *id, bool *more)
{
	const void *bits;
	ssize_t n = dwelf_elf_gnu_build_id(elf, &bits);
	*more = n > POSIXTRACE_BUILD_ID_MAX;
	id->size = n <= 0 ? 0 : *more ? POSIXTRACE_BUILD_ID_MAX : (uint32_t)n;
	if (id->size)
		memcpy(id->bits, bits, id->size);
	return n >= 0;
}

static uint64_t big_endian64(const unsigned char *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

/* sh_type of section scn set to SHT_NOBITS in the file's bytes: its
 * contents are then never read. */
static void hide_section(Elf *elf, unsigned char *bytes, size_t size, size_t index)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh))
		return;
	uint64_t at = eh.e_shoff + (uint64_t)index * eh.e_shentsize + 4; /* sh_type */
	if (at > at + 4 || at + 4 > size)
		return;
	uint32_t t = SHT_NOBITS;
	unsigned char b[4];
	for (int i = 0; i < 4; i++)
		b[i] = (unsigned char)(eh.e_ident[EI_DATA] == ELFDATA2MSB ? t >> (24 - 8 * i)
		                                                          : t >> (8 * i));
	memcpy(bytes + at, b, 4);
}

/* The sizes the file's compressed sections claim once decompressed
 * (SHF_COMPRESSED's ch_size, a .zdebug section's "ZLIB" header), each
 * within section_max and all counted against loaded_max before libdw
 * inflates any; *hide: a .gnu_debugdata section, to hide (its size is
 * told only inside its xz stream).  0, or -1 and *why. */
static int check_sections(struct symbolizer *s, Elf *elf, const char *path, size_t *hide,
                          uint64_t *claimed, char **why)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	*hide = 0;
	*claimed = 0;
	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return 0; /* no section names: libdw finds no DWARF either */
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		uint64_t size = 0;
		if (sh.sh_flags & SHF_COMPRESSED) {
			GElf_Chdr ch;
			if (!gelf_getchdr(scn, &ch))
				return note(why, path, "a compressed section's header is unreadable");
			size = ch.ch_size;
		} else if (name && strncmp(name, ".zdebug", 7) == 0) {
			Elf_Data *d = elf_rawdata(scn, NULL);
			if (!d || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4) != 0)
				continue; /* libdw does not inflate it */
			size = big_endian64((const unsigned char *)d->d_buf + 4);
		} else {
			if (name && strcmp(name, ".gnu_debugdata") == 0)
				*hide = elf_ndxscn(scn);
			continue;
		}
		if (size > s->opt.section_max)
			return note(why, path, "a compressed section claims %llu bytes, over the cap "
			            "of %llu", (unsigned long long)size,
			            (unsigned long long)s->opt.section_max);
		*claimed += size;
		if (*claimed > s->opt.loaded_max)
			return note(why, path, "its compressed sections claim more than the budget "
			            "of %llu bytes", (unsigned long long)s->opt.loaded_max);
	}
	return 0;
}

static void drop_loaded(struct loaded *f)
{
	if (f->elf)
		elf_end(f->elf);
	free(f->bytes);
	free(f->path);
	*f = (struct loaded){ .elf = NULL };
}

/* bytes (malloc'd, size of them, counted already) checked as a file of
 * an image (a program or library) or a debug file, its compressed
 * sections' sizes counted: 0 and *f, or -1 and *why (bytes freed). */
static int check_bytes(struct symbolizer *s, void *bytes, size_t size, bool image,
                       const struct build_id *want, const char *path, struct loaded *f,
                       char **why)
{
	Elf *elf = elf_memory(bytes, size);
	GElf_Ehdr eh;
	size_t hide = 0;
	uint64_t claimed = 0;
	struct build_id id;
	bool more;
	int rc = -1;
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		note(why, path, "not an ELF file");
	else if (image && (!gelf_getehdr(elf, &eh) || (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)))
		note(why, path, "not a program nor a shared library");
	else if (!file_build_id(elf, &id, &more))
		note(why, path, "unreadable notes (%s)", elf_errmsg(-1));
	else if ((!want || check_build_id(&id, more, want, path, why) == 0) &&
	         check_sections(s, elf, path, &hide, &claimed, why) == 0) {
		if (!take_bytes(s, claimed))
			note(why, path, "its compressed sections claim more than what is left of the "
			     "budget of %llu bytes", (unsigned long long)s->opt.loaded_max);
		else
			rc = 0;
	}
	if (rc == 0 && hide) {
		hide_section(elf, bytes, size, hide);
		elf_end(elf);
		elf = elf_memory(bytes, size); /* reads the section headers again */
	}
	if (rc == 0 && (!elf || !(f->path = strdup(path)))) {
		note(why, path, "no memory");
		rc = -1;
	}
	if (rc != 0) {
		if (elf)
			elf_end(elf);
		free(bytes);
		return -1;
	}
	f->bytes = bytes;
	f->size = size;
	f->elf = elf;
	return 0;
}

/* The file fd (st its status) read into memory and checked. */
static int load_fd(struct symbolizer *s, int fd, const struct stat *st, bool image,
                   const struct build_id *want, const char *path, struct loaded *f, char **why)
{
	size_t size = (size_t)st->st_size;
	if (!take_bytes(s, size))
		return note(why, path, "not read: what is left of the budget of bytes read "
		            "(%llu in all) is too little", (unsigned long long)s->opt.loaded_max);
	void *bytes = malloc(size ? size : 1);
	if (!bytes)
		return note(why, path, "no memory");
	if (!read_exactly(fd, bytes, size)) {
		free(bytes);
		return note(why, path, "cut short or unreadable while it was read");
	}
	*f = (struct loaded){ .dev = st->st_dev, .ino = st->st_ino };
	return check_bytes(s, bytes, size, image, want, path, f, why);
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

static void image_places(const struct symbolizer *s, const struct entry *e, struct places *p)
{
	char rel[16 + 2 * POSIXTRACE_BUILD_ID_MAX];
	p->n = 0;
	if (s->symfs)
		place(p, s->symfs, e->path, "");
	if (s->symfs && build_id_dir(&e->id, rel))
		place(p, s->symfs, rel, "");
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

/* A .gnu_debuglink name where gdb looks for it: beside the file, in .debug/
 * beside it, and under the global debug directory (DEBUG_ROOT, and
 * DIR/DEBUG_ROOT with --symfs) at the file's directory.  name is a file
 * name alone (debuglink_name_ok). */
static void debuglink_places(const struct symbolizer *s, const char *file, const char *name,
                             struct places *p)
{
	const char *slash = strrchr(file, '/');
	char dir[PATH_MAX], sub[NAME_MAX + 2], root[PATH_MAX];
	p->n = 0;
	if (snprintf(dir, sizeof dir, "%.*s", slash ? (slash == file ? 1 : (int)(slash - file)) : 1,
	             slash ? file : ".") >= (int)sizeof dir)
		return;
	snprintf(sub, sizeof sub, "/%s", name);
	place(p, dir, name, "");
	place(p, dir, ".debug", sub);
	if (slash && file[0] == '/') {
		place(p, DEBUG_ROOT, dir, sub);
		if (s->symfs && snprintf(root, sizeof root, "%s%s", s->symfs, DEBUG_ROOT) <
		                    (int)sizeof root)
			place(p, root, dir, sub);
	}
}

/* A debuglink names a file, never a path: no slash, not . or .. */
static bool debuglink_name_ok(const char *name)
{
	size_t n = strnlen(name, NAME_MAX + 1);
	return n > 0 && n <= NAME_MAX && !strchr(name, '/') && strcmp(name, ".") != 0 &&
	       strcmp(name, "..") != 0;
}

/* The CRC-32 (IEEE 802.3, as zlib's crc32) that .gnu_debuglink records of
 * the debug file's bytes. */
static uint32_t debuglink_crc(const unsigned char *p, size_t n)
{
	static uint32_t table[256];
	static bool made;
	if (!made) {
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
		made = true;
	}
	uint32_t crc = 0xffffffffu;
	for (size_t i = 0; i < n; i++)
		crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
	return crc ^ 0xffffffffu;
}

/* ---- modules ----------------------------------------------------------- */

static struct module *module_by_inode(const struct symbolizer *s, dev_t dev, ino_t ino)
{
	for (struct module *m = s->modules; m; m = m->next)
		if (m->has_inode && m->dev == dev && m->ino == ino)
			return m;
	return NULL;
}

static struct module *module_by_id(const struct symbolizer *s, const struct build_id *id)
{
	for (struct module *m = s->modules; id->size && m; m = m->next)
		if (m->has_inode && same_id(&m->id, id))
			return m;
	return NULL;
}

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

/* f's bytes as a sealed memfd (f dropped): a descriptor libdwfl may map,
 * which no one can cut short. */
static int to_memfd(struct loaded *f)
{
	int fd = memfd_create("posixtrace-debug", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	bool ok = fd >= 0;
	for (size_t done = 0; ok && done < f->size;) {
		ssize_t n = write(fd, (const char *)f->bytes + done, f->size - done);
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0;
		done += ok ? (size_t)n : 0;
	}
	if (ok)
		ok = fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) == 0;
	if (!ok && fd >= 0)
		close(fd);
	drop_loaded(f);
	return ok ? fd : -1;
}

/* The debug (or dwz) file with build id want at one of places, read and
 * kept as a memfd: a duplicate of its descriptor, or -1.  With crc (a
 * .gnu_debuglink's), the file's bytes must have that CRC-32 too, and
 * want is checked only if it is a build id (a file without one is
 * verified by its CRC alone); *crc_bad: a file was refused for its CRC. */
static int aux_open(struct symbolizer *s, const struct places *p, const struct build_id *want,
                    const uint32_t *crc, bool *crc_bad, struct aux_file **found)
{
	for (int i = 0; i < p->n; i++) {
		struct stat st;
		bool present;
		int fd = open_regular(s, p->path[i], &st, &present);
		if (fd < 0)
			continue;
		struct aux_file *a;
		for (a = s->aux; a; a = a->next)
			if (a->dev == st.st_dev && a->ino == st.st_ino)
				break;
		if (a) {
			close(fd);
			if (!same_id(&a->id, want) || (crc && !(a->has_crc && a->crc == *crc)))
				continue;
			*found = a;
			return fcntl(a->memfd, F_DUPFD_CLOEXEC, 0);
		}
		struct loaded f;
		char *why = NULL;
		int rc = load_fd(s, fd, &st, false, crc && !want->size ? NULL : want, p->path[i], &f,
		                 &why);
		close(fd);
		free(why); /* the image is usable without: nothing to say */
		if (rc != 0)
			continue;
		uint32_t its_crc = crc ? debuglink_crc(f.bytes, f.size) : 0;
		if (crc && its_crc != *crc) {
			*crc_bad = true;
			drop_loaded(&f);
			continue;
		}
		if (!(a = calloc(1, sizeof *a))) {
			drop_loaded(&f);
			return -1;
		}
		a->dev = st.st_dev, a->ino = st.st_ino, a->id = *want;
		a->has_crc = crc != NULL, a->crc = its_crc;
		read_altlink(f.elf, &a->alt);
		if ((a->memfd = to_memfd(&f)) < 0) {
			free(a->alt.name);
			free(a);
			return -1;
		}
		a->next = s->aux;
		s->aux = a;
		*found = a;
		return fcntl(a->memfd, F_DUPFD_CLOEXEC, 0);
	}
	return -1;
}

/* The debug file a .gnu_debuglink names (by file name alone, with its
 * CRC-32), where gdb looks for it, read with the same checks as any debug
 * file: a duplicate of its memfd, or -1 (a note when a file was refused
 * for its CRC). */
static int debuglink_open(struct module *m, const char *name, GElf_Word crc,
                          struct aux_file **found)
{
	struct places p;
	uint32_t want_crc = crc;
	bool crc_bad = false;
	if (!debuglink_name_ok(name))
		return -1;
	debuglink_places(m->s, m->file, name, &p);
	int fd = aux_open(m->s, &p, &m->id, &want_crc, &crc_bad, found);
	if (fd < 0 && crc_bad && !m->problem) {
		char *esc = escape_path(name);
		note(&m->problem, m->file, "debug file %s not used: its CRC is not the one the "
		     ".gnu_debuglink gives (another build?)", esc ? esc : "");
		free(esc);
	}
	return fd;
}

/* libdwfl's find_debuginfo: the image's debug file, or (asked with the
 * name a .gnu_debugaltlink gave) its dwz file, checked as the image is
 * and given as a memfd.  -1 leaves *debug_name alone: libdwfl would open
 * a name left there itself. */
static int find_debug(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                      const char *file_name, const char *debuglink, GElf_Word crc, char **debug_name)
{
	(void)mod, (void)modname, (void)base, (void)file_name;
	struct module *m = *userdata;
	bool alt = m->alt.name && debuglink && crc == 0 && strcmp(debuglink, m->alt.name) == 0;
	struct aux_file *found = NULL;
	struct places p;
	if (!m->search_debug) {
		m->alt_refused |= alt;
		return -1;
	}
	debug_places(m->s, alt ? &m->alt.id : &m->id, alt ? m->alt.name : NULL, &p);
	int fd = aux_open(m->s, &p, alt ? &m->alt.id : &m->id, NULL, NULL, &found);
	if (fd < 0 && !alt && debuglink)
		fd = debuglink_open(m, debuglink, crc, &found);
	char *name = fd >= 0 ? strdup("posixtrace-debug") : NULL;
	if (fd >= 0 && !name) {
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		m->alt_refused |= alt;
		return -1;
	}
	if (alt) {
		m->alt_given = true;
		m->alt_aux = found;
	} else {
		free(m->alt.name);
		m->alt = (struct altlink){ .name = found->alt.name ? strdup(found->alt.name) : NULL,
		                           .id = found->alt.id };
		m->alt_given = m->alt_refused = false;
		m->debug_aux = found;
	}
	free(*debug_name);
	*debug_name = name;
	return fd;
}

/* libdwfl's find_elf: the image's file, read and checked already. */
static int give_main(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                     char **file_name, Elf **elfp)
{
	(void)mod, (void)modname, (void)base;
	struct module *m = *userdata;
	if (!m || !m->main_elf)
		return -1;
	*elfp = m->main_elf;
	*file_name = strdup(m->file);
	m->main_elf = NULL;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = give_main,
	.find_debuginfo = find_debug,
	.section_address = dwfl_offline_section_address,
};

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

static int dwfl_failed(struct module *m, const char *what)
{
	note(&m->problem, m->file, "%s (%s)", what, dwfl_errmsg(-1));
	return ENOENT;
}

/* One Dwfl module for the file, at its own addresses; its Elf given now
 * (give_main finds the module through the userdata libdwfl keeps). */
static int start_dwfl(struct module *m, const char *name)
{
	GElf_Addr low = 0, high = 0, bias;
	void **userdata;
	if (!load_span(m->main_elf, &low, &high)) {
		note(&m->problem, m->file, "no loadable segment");
		return ENOENT;
	}
	if (!(m->dwfl = dwfl_begin(&callbacks)))
		return ENOMEM;
	dwfl_report_begin(m->dwfl);
	m->mod = dwfl_report_module(m->dwfl, name, low, high);
	if (!m->mod)
		return dwfl_failed(m, "not usable");
	dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = m;
	if (dwfl_report_end(m->dwfl, NULL, NULL) != 0 || !dwfl_module_getelf(m->mod, &bias))
		return dwfl_failed(m, "not usable");
	if (bias != 0) {
		note(&m->problem, m->file, "unexpected layout");
		return ENOENT;
	}
	return 0;
}

/* A module for f (taken: its bytes are the module's), its Dwfl started;
 * NULL: no memory. */
static struct module *new_module(struct symbolizer *s, struct loaded *f, bool has_inode)
{
	struct module *m = calloc(1, sizeof *m);
	bool more;
	if (!m) {
		drop_loaded(f);
		return NULL;
	}
	m->s = s;
	m->dev = f->dev, m->ino = f->ino, m->has_inode = has_inode, m->search_debug = has_inode;
	file_build_id(f->elf, &m->id, &more);
	m->file = f->path;
	m->bytes = f->bytes;
	m->size = f->size;
	m->main_elf = f->elf;
	*f = (struct loaded){ .elf = NULL };
	read_altlink(m->main_elf, &m->alt);
	const char *slash = strrchr(m->file, '/');
	m->err = start_dwfl(m, slash ? slash + 1 : m->file);
	*s->last_module = m;
	s->last_module = &m->next;
	s->nmodules++;
	return m;
}

static void free_module(struct module *m)
{
	if (m->dwfl)
		dwfl_end(m->dwfl);
	if (m->main_elf)
		elf_end(m->main_elf);
	free(m->bytes);
	for (size_t i = 0; i < m->nunits; i++) {
		free(m->units[i].funcs.v);
		free(m->units[i].funcs.reach);
	}
	free(m->units);
	free(m->unit_spans.v);
	free(m->unit_spans.reach);
	free(m->sized.v);
	free(m->sized.reach);
	free(m->sizeless);
	free(m->names);
	free(m->sites.slot);
	free(m->alt.name);
	free(m->problem);
	free(m->file);
	free(m);
}

/* ---- entries: images as the log gives them ----------------------------- */

/* The module of the file at path: one already loaded (same inode, or
 * another file with the same build id), else the file read now.  0, or
 * -1 and *why (NULL: nothing there). */
static int module_at(struct symbolizer *s, const char *path, const struct build_id *want,
                     struct module **out, char **why)
{
	struct stat st;
	bool present;
	int fd = open_regular(s, path, &st, &present);
	if (fd < 0)
		return present ? no_file(why, path) : -1;
	struct module *m = module_by_inode(s, st.st_dev, st.st_ino);
	if (m) {
		close(fd);
		if (check_build_id(&m->id, false, want, path, why) != 0)
			return -1;
		*out = m;
		return 0;
	}
	struct loaded f;
	int rc = load_fd(s, fd, &st, true, want, path, &f, why);
	close(fd);
	if (rc != 0)
		return -1;
	if ((m = module_by_id(s, want))) {
		drop_loaded(&f); /* the same contents, loaded already */
		*out = m;
		return 0;
	}
	if (!(*out = new_module(s, &f, true)))
		return note(why, path, "no memory");
	return 0;
}

/* Finds the image's file: e->module, or e->err and e->problem. */
static void entry_open(struct symbolizer *s, struct entry *e)
{
	struct places p;
	e->err = ENOENT;
	if (!e->path[0])
		return; /* no file: the vDSO */
	if (e->truncated) {
		note(&e->problem, e->path, "path cut short in the log");
		return;
	}
	image_places(s, e, &p);
	for (int i = 0; i < p.n; i++) {
		char *because = NULL;
		if (module_at(s, p.path[i], &e->id, &e->module, &because) == 0) {
			free(e->problem);
			e->problem = NULL;
			e->err = 0;
			return;
		}
		if (!e->problem)
			e->problem = because;
		else
			free(because);
	}
	if (!e->problem)
		no_file(&e->problem, e->path);
}

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
	return e->hash == h && e->truncated == truncated && same_id(&e->id, id) &&
	       strncmp(e->path, path, len) == 0 && e->path[len] == '\0';
}

static struct entry *new_entry(struct symbolizer *s, uint64_t h, const char *path, size_t len,
                               const struct build_id *id, int truncated)
{
	struct entry *e = calloc(1, sizeof *e);
	if (!e || !(e->path = strndup(path, len))) {
		free(e);
		return NULL;
	}
	e->hash = h;
	e->truncated = truncated;
	e->id = *id;
	e->base = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	e->next_in_bucket = s->bucket[h & (IMAGE_BUCKETS - 1)];
	s->bucket[h & (IMAGE_BUCKETS - 1)] = e;
	*s->last_made = e;
	s->last_made = &e->next_made;
	s->entries++;
	entry_open(s, e);
	return e;
}

/* The image's entry, made (and its file found) the first time. */
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
	free(e->problem);
	free(e->path);
	free(e);
}

/* ---- spans ------------------------------------------------------------- */

/* Adds a span to t, its memory (and its reach's) counted for m. */
static bool spans_add(struct module *m, struct spans *t, uint64_t lo, uint64_t hi, uint64_t who)
{
	if (lo >= hi)
		return true;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 16;
		if (!take_index_bytes(m, (cap - t->cap) * (sizeof *t->v + sizeof *t->reach)))
			return false;
		struct span *v = realloc(t->v, cap * sizeof *v);
		if (!v)
			return false;
		t->v = v, t->cap = cap;
	}
	t->v[t->n++] = (struct span){ lo, hi, who };
	return true;
}

static int span_order(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : x->who < y->who ? -1 : x->who > y->who;
}

static bool spans_sort(struct spans *t)
{
	if (t->n)
		qsort(t->v, t->n, sizeof *t->v, span_order);
	free(t->reach);
	if (!(t->reach = malloc((t->n ? t->n : 1) * sizeof *t->reach)))
		return false;
	for (size_t i = 0; i < t->n; i++)
		t->reach[i] = i && t->reach[i - 1] > t->v[i].hi ? t->reach[i - 1] : t->v[i].hi;
	return true;
}

/* The span holding pc that starts last (the innermost, when spans
 * nest), looking back over at most SCAN_BACK spans that start before
 * it; NULL: none. */
static const struct span *spans_find(const struct spans *t, uint64_t pc)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* the first span starting after pc */
		size_t mid = lo + (hi - lo) / 2;
		if (t->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo, steps = 0; i-- > 0 && steps < SCAN_BACK && t->reach[i] > pc; steps++)
		if (t->v[i].hi > pc)
			return &t->v[i];
	return NULL;
}

/* ---- the address index ------------------------------------------------- */

/* The ranges of die into t (as who), each entry counted; false: the
 * budget is spent or no memory. */
static bool read_ranges(struct module *m, Dwarf_Die *die, struct spans *t, uint64_t who)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (!charge(m, 1) || !spans_add(m, t, start, end, who))
			return false;
	return true;
}

/* Whether die's ranges hold pc, each entry counted: 1, 0, or -1 (the
 * budget is spent). */
static int has_pc(struct module *m, Dwarf_Die *die, Dwarf_Addr pc)
{
	Dwarf_Addr base, start, end;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		if (!charge(m, 1))
			return -1;
		if (start <= pc && pc < end)
			return 1;
	}
	return 0;
}

/* A key for the range list of die: the same key, the same ranges.  0:
 * none (one range, or an attribute not read). */
static uint64_t ranges_key(Dwarf_Die *die, Dwarf_Addr base)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	if (!dwarf_attr(die, DW_AT_ranges, &a) || dwarf_formudata(&a, &off) != 0)
		return 0;
	return (off + 1) * 0x9e3779b97f4a7c15ull ^ base ^ (uint64_t)dwarf_whatform(&a) << 56;
}

/* A set of keys, open addressing (0: an empty slot). */
struct keys {
	uint64_t *slot;
	size_t n, cap;
};

/* true if key was new (and is now in), false if there already; *nomem. */
static bool keys_add(struct keys *k, uint64_t key, bool *nomem)
{
	if (2 * (k->n + 1) > k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		uint64_t *slot = calloc(cap, sizeof *slot);
		if (!slot) {
			*nomem = true;
			return true;
		}
		for (size_t i = 0; i < k->cap; i++)
			for (size_t j = k->slot[i] * 0x9e3779b97f4a7c15ull >> 40 & (cap - 1);
			     k->slot[i]; j = (j + 1) & (cap - 1))
				if (!slot[j]) {
					slot[j] = k->slot[i];
					break;
				}
		free(k->slot);
		k->slot = slot, k->cap = cap;
	}
	for (size_t j = key * 0x9e3779b97f4a7c15ull >> 40 & (k->cap - 1);; j = (j + 1) & (k->cap - 1)) {
		if (k->slot[j] == key)
			return false;
		if (!k->slot[j]) {
			k->slot[j] = key;
			k->n++;
			return true;
		}
	}
}

/* die's ranges into t, unless a range list with the same key was read
 * for an earlier DIE: that one, first, is the one a walk would find. */
static bool index_ranges(struct module *m, Dwarf_Die *die, Dwarf_Addr base, struct keys *seen,
                         struct spans *t, uint64_t who)
{
	uint64_t key = ranges_key(die, base);
	bool nomem = false;
	if (key && !keys_add(seen, key, &nomem))
		return true;
	return !nomem && read_ranges(m, die, t, who);
}

static bool add_unit(struct module *m, Dwarf_Die *die)
{
	if (m->nunits == m->units_cap) {
		size_t cap = m->units_cap ? 2 * m->units_cap : 64;
		if (!take_index_bytes(m, (cap - m->units_cap) * sizeof *m->units))
			return false;
		struct unit *u = realloc(m->units, cap * sizeof *u);
		if (!u)
			return false;
		m->units = u, m->units_cap = cap;
	}
	m->units[m->nunits++] = (struct unit){ .die = *die };
	return true;
}

/* Whether libdw may read m's DIEs without opening a file by itself: it
 * looks for a dwz file on its own when the DWARF names one that was not
 * given. */
static bool dwarf_safe(const struct module *m)
{
	return !m->alt.name || (m->alt_given && !m->alt_refused);
}

/* The compile units' ranges, read once.  A split or skeleton unit is
 * left out: libdw would open its .dwo file by itself. */
static bool build_index(struct module *m)
{
	m->dw = dwfl_module_getdwarf(m->mod, &m->dw_bias);
	if (!m->dw || !dwarf_safe(m)) {
		m->index_state = -1;
		return true;
	}
	struct keys seen = { 0 };
	Dwarf_CU *cu = NULL;
	Dwarf_Die die;
	Dwarf_Half version;
	uint8_t type;
	bool ok = true;
	while (ok && dwarf_get_units(m->dw, cu, &cu, &version, &type, &die, NULL) == 0) {
		if (!charge(m, 1)) {
			ok = false;
			break;
		}
		if (type != DW_UT_compile || dwarf_tag(&die) != DW_TAG_compile_unit)
			continue;
		Dwarf_Addr base = 0;
		dwarf_lowpc(&die, &base);
		ok = add_unit(m, &die) &&
		     index_ranges(m, &die, base, &seen, &m->unit_spans, m->nunits - 1);
	}
	free(seen.slot);
	if (ok && !(ok = spans_sort(&m->unit_spans)))
		m->err = m->err ? m->err : ENOMEM;
	m->index_state = ok ? 1 : -1;
	return ok;
}

/* Tags whose children may hold a function: C++ puts functions in
 * namespaces and classes. */
static int holds_functions(int tag)
{
	return tag == DW_TAG_namespace || tag == DW_TAG_class_type ||
	       tag == DW_TAG_structure_type || tag == DW_TAG_union_type;
}

/* The next sibling, the DWARF skipped to reach it counted. */
static int next_sibling(struct module *m, Dwarf_Die *die)
{
	Dwarf_Off from = dwarf_dieoffset(die);
	if (dwarf_siblingof(die, die) != 0)
		return 1;
	Dwarf_Off to = dwarf_dieoffset(die);
	return charge(m, 1 + (to > from ? (to - from) / SKIPPED_PER_UNIT : 0)) ? 0 : -1;
}

/* The functions under die (a unit, namespace or class) into u->funcs. */
static bool index_functions(struct module *m, struct unit *u, Dwarf_Die *die, Dwarf_Addr base,
                            struct keys *seen, int depth)
{
	Dwarf_Die child;
	int rc;
	if (depth > SCOPE_DEPTH || dwarf_child(die, &child) != 0)
		return true;
	do {
		int tag = dwarf_tag(&child);
		if (tag == DW_TAG_subprogram &&
		    !index_ranges(m, &child, base, seen, &u->funcs, dwarf_dieoffset(&child)))
			return false;
		if (holds_functions(tag) && !index_functions(m, u, &child, base, seen, depth + 1))
			return false;
	} while ((rc = next_sibling(m, &child)) == 0);
	return rc > 0;
}

/* The unit holding pc (file address of the DWARF), NULL: none, or the
 * budget spent (m->err). */
static struct unit *unit_at(struct module *m, Dwarf_Addr pc)
{
	if (m->index_state == 0 && !build_index(m))
		return NULL;
	if (m->index_state < 0)
		return NULL;
	const struct span *sp = spans_find(&m->unit_spans, pc);
	return sp ? &m->units[sp->who] : NULL;
}

/* Under die, the innermost inlined subroutine holding pc, or NULL. */
static const char *inlined_under(struct module *m, Dwarf_Die *die, Dwarf_Addr pc, int depth)
{
	Dwarf_Die child;
	int rc;
	if (depth > SCOPE_DEPTH || dwarf_child(die, &child) != 0)
		return NULL;
	do {
		int tag = dwarf_tag(&child), in;
		if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_lexical_block)
			continue;
		if ((in = has_pc(m, &child, pc)) < 0)
			return NULL;
		if (in) {
			const char *inner = inlined_under(m, &child, pc, depth + 1);
			Dwarf_Attribute a;
			/* a C++ function's linkage name says its class and
			 * arguments (demangled by the caller) */
			if (!inner && !m->err && tag == DW_TAG_inlined_subroutine &&
			    !(inner = dwarf_formstring(
			              dwarf_attr_integrate(&child, DW_AT_linkage_name, &a))))
				inner = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &a));
			return inner;
		}
	} while ((rc = next_sibling(m, &child)) == 0);
	return NULL;
}

/* The innermost function inlined where pc is (its name from the abstract
 * origin), or NULL: the call was made by the function itself. */
static const char *inlined_at(struct module *m, struct unit *u, Dwarf_Addr pc)
{
	if (!u->funcs_read) {
		struct keys seen = { 0 };
		Dwarf_Addr base = 0;
		dwarf_lowpc(&u->die, &base);
		u->funcs_read = true;
		bool ok = index_functions(m, u, &u->die, base, &seen, 0) && spans_sort(&u->funcs);
		free(seen.slot);
		if (!ok) {
			u->funcs.n = 0;
			return NULL;
		}
	}
	const struct span *sp = spans_find(&u->funcs, pc);
	Dwarf_Die fn;
	if (!sp || !dwarf_offdie(m->dw, sp->who, &fn))
		return NULL;
	return inlined_under(m, &fn, pc, 0);
}

/* The size the line program of unit claims (its unit_length), which
 * libdw parses whole: programs of several units may overlap, so each is
 * counted.  0: none, or not readable. */
static uint64_t line_program_size(struct module *m, Dwarf_Die *unit)
{
	Dwarf_Attribute a;
	Dwarf_Word off;
	if (!dwarf_attr(unit, DW_AT_stmt_list, &a) || dwarf_formudata(&a, &off) != 0)
		return 0;
	Elf *elf = dwarf_getelf(m->dw);
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	if (!m->line_looked && elf && elf_getshdrstrndx(elf, &shstrndx) == 0 &&
	    gelf_getehdr(elf, &eh) && /* the lengths below are read in this machine's order */
	    eh.e_ident[EI_DATA] == (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB
	                                                                   : ELFDATA2MSB)) {
		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			const char *name;
			if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
			    strcmp(name, ".debug_line") == 0) {
				m->line_data = elf_getdata(scn, NULL);
				break;
			}
		}
	}
	m->line_looked = true;
	Elf_Data *d = m->line_data;
	uint32_t len32;
	uint64_t len64;
	if (!d || !d->d_buf || off > d->d_size || d->d_size - off < 4)
		return 0;
	memcpy(&len32, (const char *)d->d_buf + off, 4);
	len64 = len32;
	if (len32 == 0xffffffffu && d->d_size - off >= 12)
		memcpy(&len64, (const char *)d->d_buf + off + 4, 8);
	return len64 < d->d_size - off ? len64 : d->d_size - off; /* libdw reads no further */
}

/* The line of pc by the unit's line table, whose program's bytes and
 * rows are counted the first time. */
static void line_at(struct module *m, struct unit *u, Dwarf_Addr pc, struct site *r)
{
	Dwarf_Lines *lines;
	size_t n = 0;
	int line;
	if (!u->lines_read) {
		u->lines_read = true;
		if (!charge(m, line_program_size(m, &u->die) / SKIPPED_PER_UNIT))
			return;
		if (dwarf_getsrclines(&u->die, &lines, &n) != 0)
			n = 0;
		if (!charge(m, 1 + n))
			return;
	}
	Dwarf_Line *l = dwarf_getsrc_die(&u->die, pc);
	if (l && (r->file = dwarf_linesrc(l, NULL, NULL)) && dwarf_lineno(l, &line) == 0)
		r->line = line > 0 ? line : 0;
}

/* How libdwfl ranks symbols at one address: global, weak, local. */
static uint64_t binding_rank(const GElf_Sym *sym)
{
	int b = GELF_ST_BIND(sym->st_info);
	return b == STB_GLOBAL ? 3 : b == STB_WEAK ? 2 : b == STB_LOCAL ? 1 : 0;
}

/* The symbol table (the debug file's when it has one, which libdwfl
 * finds) read once into two sorted arrays, each symbol counted.
 * libdwfl's own lookup reads every symbol for each address. */
static bool read_symbols(struct module *m)
{
	int n = dwfl_module_getsymtab(m->mod);
	m->symbols_read = true;
	if (n <= 0)
		return true;
	if (!charge(m, (uint64_t)n) ||
	    !take_index_bytes(m, (uint64_t)n * (sizeof *m->names + sizeof *m->sizeless)) ||
	    !(m->names = calloc((size_t)n, sizeof *m->names)) ||
	    !(m->sizeless = calloc((size_t)n, sizeof *m->sizeless)))
		return false;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		Elf *elf = NULL;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, &elf, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || shndx == SHN_UNDEF || type == STT_SECTION ||
		    type == STT_FILE || type == STT_TLS)
			continue;
		/* who: the rank, then the lower index, so that of symbols at
		 * one address the one libdwfl takes sorts last, where
		 * spans_find looks first */
		uint64_t who = binding_rank(&sym) << 32 | (uint32_t)(INT32_MAX - i);
		m->names[i] = name;
		GElf_Shdr sh;
		Elf_Scn *scn = elf && shndx != SHN_ABS ? elf_getscn(elf, shndx) : NULL;
		if (sym.st_size == 0 && scn && gelf_getshdr(scn, &sh) && addr >= sh.sh_addr &&
		    addr - sh.sh_addr < sh.sh_size) /* within its section, as libdwfl takes it */
			m->sizeless[m->nsizeless++] = (struct span){ addr, sh.sh_addr + sh.sh_size, who };
		else if (sym.st_size != 0 && !spans_add(m, &m->sized, addr, addr + sym.st_size, who))
			return false;
	}
	if (m->nsizeless)
		qsort(m->sizeless, m->nsizeless, sizeof *m->sizeless, span_order);
	return spans_sort(&m->sized);
}

/* The symbol holding pc (as libdwfl chooses: a sized one holding it,
 * the latest to start, the best bound; else the last one without a size
 * at or before pc, if no sized one ends between) and *off, pc's offset
 * in it; NULL: none. */
static const char *symbol_at(struct module *m, uint64_t pc, uint64_t *off)
{
	if (!m->symbols_read && !read_symbols(m)) {
		if (!m->err)
			m->err = ENOMEM;
		return NULL;
	}
	const struct span *sp = spans_find(&m->sized, pc);
	if (sp) {
		*off = pc - sp->lo;
		return m->names[INT32_MAX - (uint32_t)sp->who];
	}
	size_t lo = 0, hi = m->nsizeless;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->sizeless[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct span *z = &m->sizeless[lo - 1];
	/* a sized symbol between it and pc: pc is past that one's end */
	size_t a = 0, b = m->sized.n;
	while (a < b) {
		size_t mid = a + (b - a) / 2;
		if (m->sized.v[mid].lo <= pc)
			a = mid + 1;
		else
			b = mid;
	}
	if ((a && m->sized.v[a - 1].lo >= z->lo) || pc > z->hi)
		return NULL;
	*off = pc - z->lo;
	return m->names[INT32_MAX - (uint32_t)z->who];
}

/* at - 1: at is a return address, the call before it (symbolize.h).
 * false: the module's budget ran out (its names are dropped). */
static bool look_up(struct module *m, uint64_t at, struct site *r)
{
	uint64_t call = at - 1, off = 0;
	*r = (struct site){ .at = at };
	r->function = symbol_at(m, call, &off);
	r->offset = r->function ? off + (at - call) : at;
	struct unit *u = unit_at(m, call - m->dw_bias);
	if (u) {
		line_at(m, u, call - m->dw_bias, r);
		if (r->function && !m->err)
			r->inlined = inlined_at(m, u, call - m->dw_bias);
	}
	return !m->err;
}

/* ---- addresses kept ---------------------------------------------------- */

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

static bool sites_grow(struct sites *t, size_t max)
{
	unsigned bits = t->bits ? t->bits + 1 : __builtin_ctz(SITES_FIRST);
	if (((size_t)1 << bits) > 2 * (size_t)max)
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

/* at's slot, to fill if not used; NULL when the module's table or the
 * run's budget of kept addresses is full (or no memory): then at is
 * looked up every time. */
static struct site *site_slot(struct symbolizer *s, struct sites *t, uint64_t at)
{
	bool room = t->count < s->opt.image_sites_max && s->sites < s->opt.sites_max;
	if (room && !(t->bits && 2 * (t->count + 1) <= ((size_t)1 << t->bits)))
		room = sites_grow(t, s->opt.image_sites_max);
	if (!t->bits)
		return NULL;
	struct site *slot = site_probe(t, at);
	return slot->used || room ? slot : NULL;
}

/* The answer for the file address at in m, kept if there is room. */
static int site_in(struct module *m, uint64_t at, struct site *once, const struct site **out)
{
	struct symbolizer *s = m->s;
	struct site *r = site_slot(s, &m->sites, at);
	if (r && r->used) {
		*out = r;
		return 0;
	}
	if (m->err || !look_up(m, at, once))
		return ENOENT;
	if (r) {
		*r = *once;
		r->used = true;
		m->sites.count++;
		s->sites++;
		*out = r;
	} else {
		*out = once;
	}
	return 0;
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
	s->opt.file_max = (off_t)or_default((uint64_t)s->opt.file_max, SYM_FILE_MAX);
	s->opt.loaded_max = or_default(s->opt.loaded_max, SYM_LOADED_MAX);
	s->opt.section_max = or_default(s->opt.section_max, SYM_SECTION_MAX);
	s->opt.image_work_max = or_default(s->opt.image_work_max, SYM_IMAGE_WORK_MAX);
	s->opt.run_work_max = or_default(s->opt.run_work_max, SYM_RUN_WORK_MAX);
	s->opt.image_sites_max = (uint32_t)or_default(s->opt.image_sites_max, SYM_IMAGE_SITES_MAX);
	s->opt.sites_max = (uint32_t)or_default(s->opt.sites_max, SYM_SITES_MAX);
	s->last_made = &s->first;
	s->last_module = &s->modules;
	elf_version(EV_CURRENT); /* before elf_memory, which comes before any Dwfl */
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
	for (struct module *m = s->modules, *next; m; m = next) {
		next = m->next;
		free_module(m);
	}
	for (struct aux_file *a = s->aux, *next; a; a = next) {
		next = a->next;
		close(a->memfd);
		free(a->alt.name);
		free(a);
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
	struct site once;
	const struct site *r;
	int err = site_in(e->module, address - img->posixtrace_load_bias, &once, &r);
	if (err)
		return err;
	/* a kept answer is only pointed to: its strings are the module's */
	*out = (struct sym_site){ .function = r->function, .inlined = r->inlined,
	                          .offset = r->offset, .file = r->file,
	                          .line = r->line, .image = e->base };
	return 0;
}

int symbolize_files(struct symbolizer *s, const struct posixtrace_image *img,
                    struct sym_files *out)
{
	if (!s || !img || !out || img->posixtrace_build_id_size > POSIXTRACE_BUILD_ID_MAX)
		return EINVAL;
	struct entry *e = entry_for(s, img);
	if (!e)
		return ENOMEM;
	if (e->err)
		return e->err;
	struct module *m = e->module;
	Dwarf_Addr bias;
	if (!m->err && !m->dw && m->index_state == 0)
		dwfl_module_getdwarf(m->mod, &bias); /* looks for the debug and dwz files */
	*out = (struct sym_files){ .image = m->bytes, .image_size = m->size, .debug_fd = -1,
	                           .alt_fd = -1 };
	if (m->debug_aux && (out->debug_fd = fcntl(m->debug_aux->memfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return ENOMEM;
	if (m->alt_aux && (out->alt_fd = fcntl(m->alt_aux->memfd, F_DUPFD_CLOEXEC, 0)) < 0) {
		close(out->debug_fd);
		out->debug_fd = -1;
		return ENOMEM;
	}
	if (m->alt_aux) {
		out->alt_id_size = m->alt_aux->id.size;
		memcpy(out->alt_id, m->alt_aux->id.bits, m->alt_aux->id.size);
	}
	return 0;
}

int symbolize_elf_memory(struct symbolizer *s, const void *bytes, size_t size, const uint64_t *at,
                         size_t n, struct sym_site *out)
{
	if (!s || (!bytes && size) || (n && (!at || !out)))
		return EINVAL;
	for (size_t i = 0; i < n; i++)
		out[i] = (struct sym_site){ .offset = at[i], .image = "memory" };
	struct module *m = NULL;
	char *why = NULL;
	void *copy = NULL;
	struct loaded f = { .elf = NULL };
	if (!take_bytes(s, size))
		note(&why, "memory", "not read: over the budget of bytes read");
	else if (!(copy = malloc(size ? size : 1)))
		return ENOMEM;
	if (copy) {
		memcpy(copy, bytes, size);
		if (check_bytes(s, copy, size, true, NULL, "memory", &f, &why) == 0 &&
		    !(m = new_module(s, &f, false)))
			return ENOMEM;
	}
	if (!m || m->err) {
		struct module *holder = m;
		if (!m && why) { /* kept as a module's note, to be given */
			if (!(holder = calloc(1, sizeof *holder))) {
				free(why);
				return ENOMEM;
			}
			holder->s = s, holder->err = ENOENT, holder->problem = why;
			holder->file = strdup("memory");
			*s->last_module = holder;
			s->last_module = &holder->next;
		}
		return ENOENT;
	}
	for (size_t i = 0; i < n; i++) {
		struct site once;
		const struct site *r;
		if (site_in(m, at[i], &once, &r) != 0)
			return ENOENT;
		out[i] = (struct sym_site){ .function = r->function, .inlined = r->inlined,
		                            .offset = r->offset, .file = r->file, .line = r->line,
		                            .image = "memory" };
	}
	return 0;
}

void symbolizer_problems(struct symbolizer *s, void (*fn)(const char *msg, void *arg), void *arg)
{
	for (struct entry *e = s ? s->first : NULL; e; e = e->next_made)
		if (e->problem && !e->reported) {
			e->reported = true;
			fn(e->problem, arg);
		}
	for (struct module *m = s ? s->modules : NULL; m; m = m->next)
		if (m->problem && !m->reported) {
			m->reported = true;
			fn(m->problem, arg);
		}
}

void symbolizer_stats(const struct symbolizer *s, struct sym_stats *out)
{
	*out = (struct sym_stats){ .images = s->entries, .modules = s->nmodules,
	                           .loaded = s->loaded, .work = s->work, .sites = s->sites };
}

int symbolizer_available(void) { return 1; }

#endif
