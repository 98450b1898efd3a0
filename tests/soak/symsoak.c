/* SPDX-License-Identifier: MIT */
/*
 * The symbolizer (tools/symbolize.c) against the attacks at full size, for
 * tests/soak/symbols.sh: each mode crafts its files in DIR, looks up its
 * sites with the default budgets and prints one line: the sites looked up
 * and named, the seconds, the peak RSS (getrusage), the work counted and
 * the notes.
 *
 *   compressed  a .debug_str marked compressed, a real zlib stream
 *               inflating to 1 GiB (about 1 MB of file)
 *   sites       200,000 distinct call sites in one image
 *   units       20,000 compile units of 24 bytes sharing a 2,000-entry
 *               range list; SITES distinct sites
 *   functions   90,000 functions sharing a 1,000-entry range list
 *   spellings   1,500 spellings ("//", "/./") of this program's path
 *   hole        4 spellings of a file whose .debug_str is a 512 MiB hole
 *
 * Usage: symsoak MODE DIR [SITES]   (SITES: units and functions, default 200)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "../../tools/symbolize.h"
#include "../symbolize/craft.h"
#include "../symbolize/image.h"

#define TEXT_END 0x401000u /* 4 MiB of text */
#define LOAD_BIAS 0x7f0000000000ull

static const unsigned char id[20] = { 0x50, 0xa4, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14 };

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void write_file(const char *path, const void *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size || close(fd) != 0)
		die(path);
}

static void craft_file(const char *path, const struct craft_section *sec, int n)
{
	unsigned char *elf;
	size_t size = craft_elf(id, TEXT_END, sec, n, &elf);
	write_file(path, elf, size);
	free(elf);
}

static struct posixtrace_image image_at(const char *path)
{
	struct posixtrace_image img;
	memset(&img, 0, sizeof img);
	img.posixtrace_start = LOAD_BIAS;
	img.posixtrace_end = LOAD_BIAS + TEXT_END;
	img.posixtrace_load_bias = LOAD_BIAS;
	img.posixtrace_build_id_size = 20;
	memcpy(img.posixtrace_build_id, id, 20);
	snprintf(img.posixtrace_path, sizeof img.posixtrace_path, "%s", path);
	return img;
}

static void abbrevs(struct bytes *a)
{
	put_uleb(a, 1), put_uleb(a, 0x11), put_u8(a, 0);    /* unit, no children */
	put_uleb(a, 0x11), put_uleb(a, 0x01);               /* low_pc addr */
	put_uleb(a, 0x55), put_uleb(a, 0x17), put_u8(a, 0), put_u8(a, 0); /* ranges */
	put_uleb(a, 2), put_uleb(a, 0x11), put_u8(a, 1);    /* unit, children */
	put_uleb(a, 0x11), put_uleb(a, 0x01);
	put_uleb(a, 0x12), put_uleb(a, 0x07), put_u8(a, 0), put_u8(a, 0); /* high_pc data8 */
	put_uleb(a, 3), put_uleb(a, 0x2e), put_u8(a, 0);    /* subprogram */
	put_uleb(a, 0x03), put_uleb(a, 0x08);               /* name string */
	put_uleb(a, 0x55), put_uleb(a, 0x17), put_u8(a, 0), put_u8(a, 0);
	put_u8(a, 0);
}

static void ranges_list(struct bytes *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		put_u64(r, 0x40000000 + 2 * i), put_u64(r, 0x40000001 + 2 * i);
	put_u64(r, 0), put_u64(r, 0);
}

static void craft_units(const char *path, size_t units, size_t ranges)
{
	struct bytes a = { 0 }, info = { 0 }, r = { 0 };
	abbrevs(&a);
	ranges_list(&r, ranges);
	for (size_t i = 0; i < units; i++) {
		put_u32(&info, 20), put_u16(&info, 4), put_u32(&info, 0), put_u8(&info, 8);
		put_uleb(&info, 1), put_u64(&info, 0), put_u32(&info, 0);
	}
	struct craft_section sec[] = { { ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		                       { ".debug_info", SHT_PROGBITS, 0, info.p, info.n },
		                       { ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n } };
	craft_file(path, sec, 3);
	free(a.p), free(info.p), free(r.p);
}

static void craft_functions(const char *path, size_t funcs, size_t ranges, struct bytes *extra,
                            const char *extra_name, uint64_t extra_flags)
{
	struct bytes a = { 0 }, info = { 0 }, r = { 0 };
	abbrevs(&a);
	ranges_list(&r, ranges);
	put_u32(&info, 0), put_u16(&info, 4), put_u32(&info, 0), put_u8(&info, 8);
	put_uleb(&info, 2), put_u64(&info, 0), put_u64(&info, TEXT_END);
	for (size_t i = 0; i < funcs; i++)
		put_uleb(&info, 3), put_str(&info, "f"), put_u32(&info, 0);
	put_u8(&info, 0);
	uint32_t len = (uint32_t)info.n - 4;
	memcpy(info.p, &len, 4);
	struct craft_section sec[] = { { ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		                       { ".debug_info", SHT_PROGBITS, 0, info.p, info.n },
		                       { ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n },
		                       { extra_name, SHT_PROGBITS, extra_flags,
		                         extra ? extra->p : NULL, extra ? extra->n : 0 } };
	craft_file(path, sec, extra ? 4 : 3);
	free(a.p), free(info.p), free(r.p);
}

/* A zlib stream of claim zeros behind an Elf64_Chdr. */
static void compressed_zeros(struct bytes *out, uint64_t claim)
{
	enum { CHUNK = 1 << 20 };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = claim, .ch_addralign = 1 };
	put(out, &ch, sizeof ch);
	z_stream z;
	memset(&z, 0, sizeof z);
	unsigned char *zeros = calloc(1, CHUNK), *buf = malloc(CHUNK);
	if (!zeros || !buf || deflateInit(&z, 9) != Z_OK)
		die("deflate");
	uint64_t left = claim;
	int rc;
	do {
		if (!z.avail_in && left) {
			z.next_in = zeros;
			z.avail_in = (uInt)(left < CHUNK ? left : CHUNK);
			left -= z.avail_in;
		}
		z.next_out = buf, z.avail_out = CHUNK;
		rc = deflate(&z, left || z.avail_in ? Z_NO_FLUSH : Z_FINISH);
		put(out, buf, CHUNK - z.avail_out);
	} while (rc != Z_STREAM_END);
	deflateEnd(&z);
	free(zeros), free(buf);
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void print_note(const char *msg, void *arg)
{
	printf("%s:   note: %s\n", (const char *)arg, msg);
}

/* Looks up n sites of each image and prints the line. */
static void run(const char *mode, struct posixtrace_image *imgs, int nimgs, long n, long step)
{
	struct symbolizer *s = symbolizer_new(NULL);
	long named = 0, looked = 0;
	double t0 = now();
	for (int k = 0; k < nimgs; k++)
		for (long i = 0; i < n; i++, looked++) {
			struct sym_site out;
			uint64_t a = imgs[k].posixtrace_start + 0x1000 + 1 + (uint64_t)(i * step) %
			             (imgs[k].posixtrace_end - imgs[k].posixtrace_start - 0x1001);
			named += symbolize(s, &imgs[k], a, &out) == 0 && out.function;
		}
	double took = now() - t0;
	struct sym_stats st;
	struct rusage ru;
	symbolizer_stats(s, &st);
	getrusage(RUSAGE_SELF, &ru);
	printf("%s: %ld sites, %ld named, %.3f s (%.3f ms a site), peak RSS %.1f MiB, "
	       "modules %llu, loaded %llu bytes, work %llu, kept %llu\n",
	       mode, looked, named, took, 1e3 * took / (double)(looked ? looked : 1),
	       ru.ru_maxrss / 1024.0, (unsigned long long)st.modules,
	       (unsigned long long)st.loaded, (unsigned long long)st.work,
	       (unsigned long long)st.sites);
	symbolizer_problems(s, print_note, (void *)mode);
	symbolizer_free(s);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: symsoak MODE DIR [SITES]\n");
		return 2;
	}
	const char *mode = argv[1], *dir = argv[2];
	long sites = argc > 3 ? atol(argv[3]) : 200;
	char path[PATH_MAX];
	snprintf(path, sizeof path, "%s/%s", dir, mode);
	struct posixtrace_image img = image_at(path);
	if (strcmp(mode, "compressed") == 0) {
		struct bytes z = { 0 };
		compressed_zeros(&z, (uint64_t)1 << 30);
		craft_functions(path, 1, 1, &z, ".debug_str", SHF_COMPRESSED);
		free(z.p);
		run(mode, &img, 1, 10, 4099);
	} else if (strcmp(mode, "sites") == 0) {
		craft_file(path, NULL, 0);
		run(mode, &img, 1, 200000, 19);
	} else if (strcmp(mode, "units") == 0) {
		craft_units(path, 20000, 2000);
		run(mode, &img, 1, sites, 4099);
	} else if (strcmp(mode, "functions") == 0) {
		craft_functions(path, 90000, 1000, NULL, NULL, 0);
		run(mode, &img, 1, sites, 4099);
	} else if (strcmp(mode, "spellings") == 0 || strcmp(mode, "hole") == 0) {
		bool hole = mode[0] == 'h';
		if (hole) {
			struct bytes str = { 0 };
			craft_functions(path, 1, 1, &str, ".debug_str", 0);
			/* the last section's bytes: make .debug_str a 512 MiB hole by
			 * growing the file and pointing the section at the end */
			int fd = open(path, O_RDWR);
			struct stat st;
			if (fd < 0 || fstat(fd, &st) != 0)
				die(path);
			unsigned char *b = malloc((size_t)st.st_size);
			if (!b || pread(fd, b, (size_t)st.st_size, 0) != st.st_size)
				die(path);
			Elf64_Ehdr *eh = (void *)b;
			Elf64_Shdr *sh = (void *)(b + eh->e_shoff);
			const char *names = (const char *)b + sh[eh->e_shstrndx].sh_offset;
			for (int i = 0; i < eh->e_shnum; i++)
				if (strcmp(names + sh[i].sh_name, ".debug_str") == 0) {
					sh[i].sh_offset = (uint64_t)st.st_size;
					sh[i].sh_size = (uint64_t)511 << 20;
				}
			if (pwrite(fd, b, (size_t)st.st_size, 0) != st.st_size ||
			    ftruncate(fd, st.st_size + ((off_t)511 << 20)) != 0)
				die(path);
			close(fd);
			free(b);
		}
		struct posixtrace_image self;
		if (!hole) { /* this program, described as the library would */
			if (!image_of((const void *)main, &self))
				die("image_of");
			snprintf(path, sizeof path, "%s", self.posixtrace_path);
		}
		int n = hole ? 4 : 1500;
		struct posixtrace_image *imgs = calloc((size_t)n, sizeof *imgs);
		if (!imgs)
			die("calloc");
		const char *slash = strrchr(path, '/');
		for (int i = 0; i < n; i++) {
			imgs[i] = hole ? image_at("") : self;
			int len = snprintf(imgs[i].posixtrace_path, sizeof imgs[i].posixtrace_path,
			                   "%.*s", (int)(slash - path), path);
			for (int k = 0; k < i % 40; k++)
				len += snprintf(imgs[i].posixtrace_path + len, 8, "/.");
			for (int k = 0; k <= i / 40; k++)
				len += snprintf(imgs[i].posixtrace_path + len, 8, "/");
			snprintf(imgs[i].posixtrace_path + len, sizeof imgs[i].posixtrace_path - (size_t)len,
			         "%s", slash + 1);
		}
		run(mode, imgs, n, 4, 4099);
		free(imgs);
	} else {
		fprintf(stderr, "symsoak: unknown mode %s\n", mode);
		return 2;
	}
	return 0;
}
