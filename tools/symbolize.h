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
 * device are never opened), up to SYM_FILE_MAX bytes, when o->check_owner
 * only if root or o->owner owns it, and it is used only if its GNU build
 * id is the one the image gives.  Nothing is ever fetched from the
 * network (no debuginfod, whatever DEBUGINFOD_URLS says).
 */
#ifndef POSIXTRACE_SYMBOLIZE_H
#define POSIXTRACE_SYMBOLIZE_H

#include <stdint.h>
#include <sys/types.h>
#include <posixtrace.h>

/* A larger file is refused: a log's path could name anything. */
#define SYM_FILE_MAX ((off_t)1 << 30)

struct symbolizer;

struct sym_options {
	/* --symfs DIR: files are looked for under DIR first: DIR/<path>,
	 * DIR/.build-id/xx/rest, and debug information in
	 * DIR/.build-id/xx/rest.debug and DIR/usr/lib/debug/.build-id/xx/rest.debug
	 * before /usr/lib/debug/.build-id/xx/rest.debug.  NULL: none. */
	const char *symfs;
	/* Nonzero (running as root): only files owned by root or by owner
	 * (the log's owner) are opened. */
	int check_owner;
	uid_t owner;
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
 * vDSO).  ENOMEM.  ENOTSUP: built without libdw.  Files are opened and
 * read once per image (path and build id; processes that loaded it at
 * different addresses share it) and each address is looked up once.
 * Never blocks on a file that is not a regular one.  Not thread-safe. */
int symbolize(struct symbolizer *s, const struct posixtrace_image *img, uint64_t address,
              struct sym_site *out);

/* Calls fn once per image that could not be used, with why, e.g.
 * "/usr/bin/prog: build id 3f2a... needed, the file's is 77c1... (a
 * different build: rebuilt?)", "...: not a regular file", "...: owned by
 * uid 1001", "...: too large".  Each problem is given once: a later call
 * gives only those found since.  Messages are printable ASCII (a path's
 * other bytes as \xHH). */
void symbolizer_problems(struct symbolizer *s, void (*fn)(const char *msg, void *arg), void *arg);

/* 0: built without libdw (symbolize() always ENOTSUP). */
int symbolizer_available(void);

#endif
