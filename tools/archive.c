/* SPDX-License-Identifier: MIT */
/*
 * posixtrace archive: the files a log's call sites need (the images its
 * events were recorded in, with their debug and dwz files), by build id,
 * in the layout --symfs reads (DIR/.build-id/xx/rest for an image,
 * .build-id/xx/rest.debug for a debug or dwz file), as a directory or a
 * ustar file, so that the log names its call sites on another host or
 * after the programs changed, as perf archive does for perf.data.
 *
 * The files are those a log names: its writer chose them.  They are
 * opened, checked and read by the confined symbolizer's child (symproc.h)
 * with the rights of the log's claimant, exactly as dump reads them: the
 * command only copies the sealed copies the child hands back.  Only images
 * with a build id are archived (that is the name the copy goes by), at
 * most --max-size bytes in all.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "symbolize.h"
#include "symproc.h"
#include "tool.h"

#define ARCHIVE_MAX_SIZE_DEFAULT ((uint64_t)2 << 30)
#define TAR_BLOCK 512
#define COPY_CHUNK (64u << 10)
/* ".build-id/xx/" + the rest of a build id in hex + ".debug" */
#define ENTRY_NAME_MAX (16 + 2 * POSIXTRACE_BUILD_ID_MAX + 8)

static void archive_help(FILE *out)
{
	fprintf(out,
	        "usage: %s archive LOG [OUT] [--max-size SIZE] [--force]\n"
	        "Copies the files LOG's call sites need (each image an event was recorded\n"
	        "in, with its debug and dwz files) by build id into OUT, in the layout\n"
	        "--symfs reads: a directory (created 0700), or a ustar file when OUT ends\n"
	        "in .tar (OUT - is standard output).  Default OUT: LOG.symfs.  Then, on\n"
	        "any host: %s dump LOG --symfs OUT (a .tar extracted first).\n"
	        "The files are read with the rights of whoever may have written LOG, as\n"
	        "dump reads them; images without a build id are left out.\n\n"
	        "  --max-size SIZE      the most bytes of files copied (default 2G)\n"
	        "  --force              replace an existing tar file of your own\n"
	        "  --symfs DIR          look for the files under DIR first, as dump does\n"
	        "  --symbol-timeout SEC the longest wait for the symbolizer (default 10)\n"
	        "  -h, --help           this help\n"
	        "Exit status: 0, 1 on failure, 2 for usage errors, 3 if the log is damaged\n"
	        "inside (after archiving what could be read).\n",
	        PROG, PROG);
}

struct archive_options {
	const char *log, *out;
	bool force;
	uint64_t max_size;
	struct site_options sites;
};

/* Where the files go: a directory, or a tar stream. */
struct archive {
	const char *label;
	bool tar;
	int fd; /* the directory, or the tar file */
	bool dir_made[256]; /* .build-id/xx, by xx */
	bool top_made;
	uint64_t bytes, files, limit;
	bool over_limit, failed;
	/* names written, to write each once: build ids are the key */
	char (*names)[ENTRY_NAME_MAX];
	size_t nnames, names_cap;
	unsigned char buf[COPY_CHUNK];
};

enum { OPT_MAX_SIZE = 256, OPT_FORCE };

static int parse_archive_options(int argc, char **argv, struct archive_options *o)
{
	static const struct option longopts[] = {
		{"max-size", required_argument, 0, OPT_MAX_SIZE}, {"force", no_argument, 0, OPT_FORCE},
		{"help", no_argument, 0, 'h'}, SITE_LONGOPTS, {0, 0, 0, 0}};
	size_t size;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_MAX_SIZE:
			if (!parse_size(optarg, &size))
				return usage_error("archive", "bad --max-size '%s'", optarg);
			o->max_size = size;
			break;
		case OPT_FORCE: o->force = true; break;
		case 'h': archive_help(stdout); return 0;
		case ':': return usage_error("archive", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (c != SITE_OPT_NO_SYMBOLS && c != SITE_OPT_NO_DEMANGLE &&
			    site_option(c, optarg, &o->sites))
				break;
			return usage_error("archive", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (argc - optind < 1 || argc - optind > 2)
		return usage_error("archive", argc - optind < 1 ? "LOG is required" : "too many arguments");
	o->log = argv[optind];
	o->out = argc - optind == 2 ? argv[optind + 1] : NULL;
	return -1;
}

/* ---- tar (POSIX ustar) ---------------------------------------------------- */

static void octal(char *field, size_t width, uint64_t v)
{
	/* width - 1 digits and a NUL */
	for (size_t i = width - 1; i-- > 0; v >>= 3)
		field[i] = (char)('0' + (v & 7));
	field[width - 1] = '\0';
}

static bool write_all(int fd, const void *p, size_t n)
{
	while (n) {
		ssize_t done = write(fd, p, n);
		if (done < 0 && errno == EINTR)
			continue;
		if (done <= 0)
			return false;
		p = (const char *)p + done;
		n -= (size_t)done;
	}
	return true;
}

/* A ustar header: name (at most 99 bytes), a directory ('5') or a file
 * ('0') of size bytes. */
static bool tar_header(struct archive *a, const char *name, bool dir, uint64_t size)
{
	unsigned char h[TAR_BLOCK];
	memset(h, 0, sizeof h);
	memcpy(h, name, strlen(name));
	octal((char *)h + 100, 8, dir ? 0755 : 0644);
	octal((char *)h + 108, 8, 0);
	octal((char *)h + 116, 8, 0);
	octal((char *)h + 124, 12, size);
	octal((char *)h + 136, 12, (uint64_t)time(NULL));
	h[156] = dir ? '5' : '0';
	memcpy(h + 257, "ustar", 6);
	memcpy(h + 263, "00", 2);
	memset(h + 148, ' ', 8);
	unsigned sum = 0;
	for (size_t i = 0; i < sizeof h; i++)
		sum += h[i];
	octal((char *)h + 148, 7, sum);
	h[155] = ' ';
	return write_all(a->fd, h, sizeof h);
}

/* ---- the output ----------------------------------------------------------- */

static bool make_dir(struct archive *a, const char *name)
{
	if (a->tar)
		return tar_header(a, name, true, 0);
	if (mkdirat(a->fd, name, 0700) != 0 && errno != EEXIST) {
		error_msg("%s/%s: %s", a->label, name, strerror(errno));
		return false;
	}
	return true;
}

/* .build-id/ and .build-id/xx/ made once each. */
static bool make_dirs(struct archive *a, const char *hex)
{
	char name[32];
	unsigned xx = (unsigned)strtoul((char[3]){hex[0], hex[1], '\0'}, NULL, 16) & 255;
	if (!a->top_made && !(a->top_made = make_dir(a, a->tar ? ".build-id/" : ".build-id")))
		return false;
	if (a->dir_made[xx])
		return true;
	snprintf(name, sizeof name, ".build-id/%.2s%s", hex, a->tar ? "/" : "");
	return a->dir_made[xx] = make_dir(a, name);
}

static bool written_already(struct archive *a, const char *name)
{
	for (size_t i = 0; i < a->nnames; i++)
		if (!strcmp(a->names[i], name))
			return true;
	if (a->nnames == a->names_cap) {
		a->names_cap = a->names_cap ? 2 * a->names_cap : 64;
		a->names = xrealloc(a->names, a->names_cap * sizeof *a->names);
	}
	snprintf(a->names[a->nnames++], ENTRY_NAME_MAX, "%s", name);
	return false;
}

/* size bytes of fd (a sealed memfd the child gave) to out, in chunks. */
static bool copy_bytes(struct archive *a, int fd, uint64_t size, int out)
{
	for (uint64_t at = 0; at < size;) {
		size_t want = size - at < sizeof a->buf ? (size_t)(size - at) : sizeof a->buf;
		ssize_t n = pread(fd, a->buf, want, (off_t)at);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0 || !write_all(out, a->buf, (size_t)n))
			return false;
		at += (uint64_t)n;
	}
	return true;
}

/* The file of fd (size bytes) as .build-id/xx/rest[.debug] of build id
 * id: once per name, within the size limit. */
static bool put_file(struct archive *a, const unsigned char *id, uint32_t id_size, bool debug,
                     int fd, uint64_t size)
{
	char hex[2 * POSIXTRACE_BUILD_ID_MAX + 1], name[ENTRY_NAME_MAX];
	for (uint32_t i = 0; i < id_size; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	snprintf(name, sizeof name, ".build-id/%.2s/%s%s", hex, hex + 2, debug ? ".debug" : "");
	if (written_already(a, name))
		return true;
	if (size > a->limit - a->bytes) {
		a->over_limit = true;
		return true;
	}
	if (!make_dirs(a, hex))
		return false;
	bool ok;
	if (a->tar) {
		static const unsigned char zeros[TAR_BLOCK];
		ok = tar_header(a, name, false, size) && copy_bytes(a, fd, size, a->fd) &&
		     write_all(a->fd, zeros, (TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
	} else {
		int out = create_file_in(a->fd, a->label, name);
		ok = out >= 0 && copy_bytes(a, fd, size, out);
		if (out >= 0 && close(out) != 0)
			ok = false;
	}
	if (!ok)
		error_msg("%s: writing %s failed: %s", a->label, name, strerror(errno));
	a->bytes += size;
	a->files++;
	return ok;
}

/* The files of one image, as the child gave them. */
static bool put_image(struct archive *a, const struct posixtrace_image *img,
                      struct symproc_files *f)
{
	bool ok = put_file(a, img->posixtrace_build_id, img->posixtrace_build_id_size, false,
	                   f->fd[SYMPROC_IMAGE_FD], f->size[SYMPROC_IMAGE_FD]);
	if (ok && f->fd[SYMPROC_DEBUG_FD] >= 0)
		ok = put_file(a, img->posixtrace_build_id, img->posixtrace_build_id_size, true,
		              f->fd[SYMPROC_DEBUG_FD], f->size[SYMPROC_DEBUG_FD]);
	if (ok && f->fd[SYMPROC_ALT_FD] >= 0)
		ok = put_file(a, f->alt_id, f->alt_id_size, true, f->fd[SYMPROC_ALT_FD],
		              f->size[SYMPROC_ALT_FD]);
	for (int k = 0; k < 3; k++)
		if (f->fd[k] >= 0)
			close(f->fd[k]);
	return ok;
}

static bool open_output(struct archive *a, const struct archive_options *o)
{
	size_t n = strlen(a->label);
	a->tar = n >= 4 && !strcmp(a->label + n - 4, ".tar");
	if (is_stdio_name(a->label)) {
		a->tar = true;
		a->fd = STDOUT_FILENO;
		return true;
	}
	if (a->tar)
		return (a->fd = create_output_file(a->label, o->force)) >= 0;
	if (mkdir(a->label, 0700) != 0) {
		error_msg("%s: %s", a->label, errno == EEXIST ? "exists; not writing into it" : strerror(errno));
		return false;
	}
	a->fd = open(a->label, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (a->fd < 0)
		error_msg("%s: %s", a->label, strerror(errno));
	return a->fd >= 0;
}

static bool close_output(struct archive *a)
{
	static const unsigned char end[2 * TAR_BLOCK];
	bool ok = !a->tar || write_all(a->fd, end, sizeof end);
	if (a->fd != STDOUT_FILENO && close(a->fd) != 0)
		ok = false;
	if (!ok)
		error_msg("%s: %s", a->label, strerror(errno));
	return ok;
}

/* ---- the log's images ------------------------------------------------------ */

static void print_note(const char *msg, void *arg)
{
	(void)arg;
	fprintf(stderr, "%s: archive: %s\n", PROG, msg);
}

/* Each file an event's image names, once (the symbolizer numbers them). */
static int archive_images(struct trace_log *log, struct symproc *sym, struct archive *a,
                          uint64_t *images)
{
	unsigned char *asked = calloc(SYMPROC_FILES_MAX / 8, 1);
	struct posixtrace_image img;
	struct trace_event ev;
	int rc;
	if (!asked) {
		error_msg("no memory");
		return -1;
	}
	log->without_thread_names = true;
	while ((rc = trace_log_next(log, &ev)) > 0 && !a->failed) {
		uint32_t file;
		if (!ev.info.posix_prog_address ||
		    posixtrace_event_image(log->trid, &ev.info, &img) != 0 ||
		    !img.posixtrace_path[0] || img.posixtrace_build_id_size == 0 ||
		    symproc_file(sym, &img, &file) != 0 || (asked[file / 8] & (1u << (file % 8))))
			continue;
		asked[file / 8] |= (unsigned char)(1u << (file % 8));
		(*images)++;
		struct symproc_files f;
		if (symproc_files(sym, file, &img, &f) == 0 && !put_image(a, &img, &f))
			a->failed = true;
	}
	free(asked);
	return rc < 0 || a->failed ? -1 : 0;
}

int cmd_archive(int argc, char **argv)
{
	struct archive_options o = {.max_size = ARCHIVE_MAX_SIZE_DEFAULT};
	int rc = parse_archive_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	char *default_out = NULL;
	if (!o.out) {
		default_out = xmalloc(strlen(o.log) + 8);
		sprintf(default_out, "%s.symfs", o.log);
		o.out = default_out;
	}
	struct trace_log *log = trace_log_open(o.log);
	if (!log) {
		free(default_out);
		return EXIT_FAIL;
	}
	struct archive *a = calloc(1, sizeof *a);
	struct symproc_options so = {.symfs = o.sites.symfs, .log_fd = log->fd,
	                             .timeout_ms = o.sites.timeout_ms};
	struct symproc *sym = symproc_new(&so);
	uint64_t images = 0;
	rc = EXIT_FAIL;
	if (!a || !sym) {
		error_msg("no memory");
	} else if (!symbolizer_available()) {
		error_msg("archive: built without elfutils' libdw: no file can be checked");
	} else {
		a->label = o.out;
		a->limit = o.max_size;
		if (open_output(a, &o)) {
			int got = archive_images(log, sym, a, &images);
			bool closed = close_output(a);
			rc = got == 0 && closed ? 0 : EXIT_FAIL;
			symproc_notes(sym, print_note, NULL);
			if (a->over_limit)
				fprintf(stderr, "%s: archive: files left out past --max-size (%llu bytes)\n",
				        PROG, (unsigned long long)a->limit);
			fprintf(stderr, "%s: archive %s: %llu files, %llu bytes, for %llu images; read "
			        "with: %s dump %s --symfs %s\n", PROG, a->label,
			        (unsigned long long)a->files, (unsigned long long)a->bytes,
			        (unsigned long long)images, PROG, o.log,
			        a->tar ? "DIR (where it is extracted)" : a->label);
		}
	}
	rc = finish_log(log, rc);
	symproc_free(sym);
	if (a)
		free(a->names);
	free(a);
	trace_log_close(log);
	free(default_out);
	return rc;
}
