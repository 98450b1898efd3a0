/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): function and source line of an address a traced process
 * recorded (posix_prog_address), from the image the process described
 * (struct posixtrace_image, <posixtrace.h>): its file, verified by build
 * id, and that file's separate debug information.  Built on elfutils'
 * libdwfl when the command is built with it (PT_HAVE_LIBDW).
 *
 * A log is untrusted input, so is every path and build id it holds: a
 * file is opened without following a symbolic link as its last
 * component, without opening anything but a regular file (a FIFO, a
 * device are never opened), up to a size cap, when o->check_owner only
 * if root or o->owner owns it, and it is used only if its GNU build id is
 * the one the image gives.  Every file (the image's, its debug file, the
 * dwz file that one names) is read into this process's own memory with
 * pread, never mapped, so that a file cut short meanwhile costs only that
 * image.  Nothing is ever fetched from the network (no debuginfod,
 * whatever DEBUGINFOD_URLS says).  The bytes read, the sizes sections
 * claim once decompressed, the DWARF walked and the sites kept are
 * counted against budgets (struct sym_options): past one, the image
 * loses its names (image+offset) and one note says so.
 */
#ifndef POSIXTRACE_SYMBOLIZE_H
#define POSIXTRACE_SYMBOLIZE_H

#include <stdint.h>
#include <sys/types.h>
#include <posixtrace.h>

/* The defaults of struct sym_options' budgets.  A larger file is
 * refused: a log's path could name anything. */
#define SYM_FILE_MAX ((off_t)512 << 20)         /* bytes of one file */
#define SYM_LOADED_MAX ((uint64_t)1 << 30)      /* bytes read and decompressed, in all */
#define SYM_SECTION_MAX ((uint64_t)256 << 20)   /* one section, decompressed */
#define SYM_IMAGE_WORK_MAX ((uint64_t)32 << 20) /* units of work per image */
#define SYM_RUN_WORK_MAX ((uint64_t)128 << 20)  /* units of work in all */
#define SYM_IMAGE_SITES_MAX (1u << 15)          /* addresses kept per image */
#define SYM_SITES_MAX (1u << 20)                /* addresses kept in all */

struct symbolizer;

#define SYM_NOTE_NO_FILE "no readable regular file there (absent, unreadable or refused)"

struct sym_options {
	/* --symfs DIR: files are looked for under DIR first: DIR/<path>,
	 * DIR/.build-id/xx/rest, and debug information in
	 * DIR/.build-id/xx/rest.debug and DIR/usr/lib/debug/.build-id/xx/rest.debug
	 * before /usr/lib/debug/.build-id/xx/rest.debug; a .gnu_debuglink
	 * file (checked by its CRC) beside the image's file, in .debug/ beside
	 * it, under /usr/lib/debug and DIR/usr/lib/debug at its directory.
	 * NULL: none. */
	const char *symfs;
	/* Nonzero (running as root): only files owned by root or by owner
	 * (the log's owner) are opened. */
	int check_owner;
	uid_t owner;
	/* Budgets; 0: the default above.  file_max: a larger file is
	 * refused.  loaded_max: bytes read from files, plus the sizes their
	 * compressed sections claim once decompressed, plus the address
	 * indexes, over the symbolizer's life; section_max: what one
	 * compressed section may claim.  A unit of work is a compile unit, a
	 * DIE, a range list entry, a symbol or a line table row read, or 16
	 * bytes of DWARF skipped or of a line program parsed: image_work_max per image (its address
	 * index, built once, and its lookups), run_work_max in all.
	 * image_sites_max, sites_max: addresses whose answer is kept (beyond,
	 * an address is looked up again each time). */
	off_t file_max;
	uint64_t loaded_max, section_max;
	uint64_t image_work_max, run_work_max;
	uint32_t image_sites_max, sites_max;
};

/* What a symbolizer holds and has spent. */
struct sym_stats {
	uint64_t images;  /* images asked about (path and build id as given) */
	uint64_t modules; /* files loaded: images that are one file share one */
	uint64_t loaded;  /* bytes counted against loaded_max */
	uint64_t work;    /* units of work spent, in all */
	uint64_t sites;   /* addresses whose answer is kept */
};

/* Where an address is.  The address is taken for a return address (the
 * instruction after the call, what the library records), so function
 * and line are those of address - 1, the call instruction's: a caller's
 * frame is resolved that way by perf report (its unwinders keep ip - 1
 * for every frame but the first), gdb and eu-stack.  offset counts from
 * the function's start to the address itself (as gdb's "info symbol"
 * and objdump's labels give it), so function + offset is the address
 * dump prints.  Strings are bytes read from the files: escape them
 * before printing. */
struct sym_site {
	const char *function; /* NULL: no symbol covers it */
	/* The innermost function inlined into `function` where the call is
	 * (whose line `line` is), as perf report --inline names it; NULL:
	 * the call is the function's own. */
	const char *inlined;
	uint64_t offset;      /* function == NULL: the address the file gives
	                       * (address - load bias), for image+offset */
	const char *file;     /* source file as DWARF names it; NULL: unknown */
	int line;             /* 0: unknown */
	const char *image;    /* the last component of the image's path */
};

/* NULL: no memory. o may be NULL (no symfs, no owner check). */
struct symbolizer *symbolizer_new(const struct sym_options *o);
void symbolizer_free(struct symbolizer *s);

/* 0: *out filled (its strings valid until symbolizer_free).  EINVAL: s,
 * img or out NULL, an image's build id longer than POSIXTRACE_BUILD_ID_MAX,
 * or address outside [start, end).  ENOENT: no file usable for the image
 * (symbolizer_problems says why, except for an image without a path, the
 * vDSO, or a budget spent).  ENOMEM.  ENOTSUP: built without libdw.  A
 * file is read once: images whose paths name it (whatever the spelling:
 * the file's device and inode are the key) or that have its build id
 * share it, wherever processes loaded it; an address is looked up once
 * while the budget of kept addresses lasts.
 * Never blocks on a file that is not a regular one.  Not thread-safe. */
int symbolize(struct symbolizer *s, const struct posixtrace_image *img, uint64_t address,
              struct sym_site *out);

/* Calls fn once per image that could not be used, with why, e.g.
 * "/usr/bin/prog: build id 3f2a... needed, the file's is 77c1... (a
 * different build: rebuilt?)".  A file absent, unreadable or refused (a
 * symbolic link, not a regular file, too large, of another owner) gets
 * one and the same note, SYM_NOTE_NO_FILE after the path, which shows
 * nothing of the file: only what was read from a file is told.  Each
 * problem is given once: a later call gives only those found since.  Messages are printable ASCII (a path's
 * other bytes as \xHH). */
void symbolizer_problems(struct symbolizer *s, void (*fn)(const char *msg, void *arg), void *arg);

/* 0: built without libdw (symbolize() always ENOTSUP). */
int symbolizer_available(void);

void symbolizer_stats(const struct symbolizer *s, struct sym_stats *out);

/* The files symbolize() reads for img's addresses, for an archive
 * (posixtrace archive): the image's file as read and checked (image,
 * image_size: the symbolizer's copy, valid until symbolizer_free; a
 * .gnu_debugdata section in it is hidden, as symbolize() hides it), and
 * the debug and dwz files found for it (sealed memfds holding their
 * checked copies, duplicated for the caller to close; -1: none), alt_id
 * the dwz file's build id.  0; ENOENT: no file usable (symbolizer_problems
 * says why); EINVAL; ENOMEM; ENOTSUP without libdw. */
struct sym_files {
	const void *image;
	size_t image_size;
	int debug_fd, alt_fd;
	uint32_t alt_id_size;
	unsigned char alt_id[POSIXTRACE_BUILD_ID_MAX];
};
int symbolize_files(struct symbolizer *s, const struct posixtrace_image *img,
                    struct sym_files *out);

/* The engine's parsing on an image given as bytes (a copy is made),
 * with the symbolizer's budgets, checks and lookups as for a file but
 * no debug file looked for and no build id required: out[i] for the
 * file's address at[i] (at[i] is taken for a return address as
 * symbolize() does), its strings valid until symbolizer_free.  0, or
 * ENOENT (the image is not usable: symbolizer_problems says why; out[]
 * then has offsets only), EINVAL, ENOMEM, ENOTSUP (without libdw).  For
 * the fuzzer and tests: symbolize() loads files through the same path. */
int symbolize_elf_memory(struct symbolizer *s, const void *bytes, size_t size, const uint64_t *at,
                         size_t n, struct sym_site *out);

#endif
