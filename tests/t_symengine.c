/* SPDX-License-Identifier: MIT */
/*
 * t_symengine: the symbolizer (tools/symbolize.c) on files an attacker
 * wrote, each crafted by the test itself: every cost stays within a
 * budget, and a budget spent costs only that image its names.
 *
 * Checked, one case per attack: compile units that share one long range
 * list are read once (the work does not grow with the sites looked up);
 * compile units whose lists cannot be shared spend the image's work
 * budget: the image loses its names, with one note, and nothing more is
 * spent; functions that share one long range list are read once; 100,000
 * symbols are read once into an index whose memory is counted; a
 * compressed .debug_str claiming more than the section cap is refused
 * before anything is inflated (peak memory stays small); 1,500
 * spellings of one path load one file; 100,000 distinct addresses keep at
 * most the per-image count of answers; a debug file cut short after it
 * was read costs nothing (no SIGBUS: it is never mapped), and one cut
 * short while it is read, over and over by another process, never a
 * crash; the notes for absent, unreadable and refused files are one text
 * that shows no owner, size or build id; the fuzzer's entry point
 * (symbolize_elf_memory) names a crafted image's function.
 */
#include "harness.h"

#include <sys/resource.h>
#include <zlib.h>

#include "../tools/symbolize.c"

#include "symbolize/craft.h"
#include "symbolize/image.h"

static const char *dir;

static void setup(void) { dir = pt_scratch_dir("t_symengine"); }
static void teardown(void) { pt_remove_tree(dir); }

#define NEED_LIBDW()                                                                \
	do {                                                                        \
		if (!symbolizer_available()) {                                      \
			printf("t_symengine: SKIPPED: built without libdw\n");      \
			return;                                                     \
		}                                                                   \
	} while (0)

static const unsigned char crafted_id[20] = { 0xc4, 0xaf, 0x7e, 0xd0, 1, 2, 3, 4, 5, 6,
	                                      7, 8, 9, 10, 11, 12, 13, 14, 15, 16 };
#define TEXT_END 0x101000u /* 1 MiB of text */
#define LOAD_BIAS 0x7f0000000000ull

static char *in_dir(const char *name)
{
	static char path[8][PATH_MAX];
	static int next;
	char *p = path[next++ % 8];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

static void write_file(const char *path, const void *data, size_t size, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, size), (ssize_t)size);
	close(fd);
}

/* The crafted image at path, as a process would describe it. */
static struct posixtrace_image crafted_image(const char *path)
{
	struct posixtrace_image img;
	memset(&img, 0, sizeof img);
	img.posixtrace_start = LOAD_BIAS;
	img.posixtrace_end = LOAD_BIAS + TEXT_END;
	img.posixtrace_load_bias = LOAD_BIAS;
	img.posixtrace_build_id_size = 20;
	memcpy(img.posixtrace_build_id, crafted_id, 20);
	snprintf(img.posixtrace_path, sizeof img.posixtrace_path, "%s", path);
	return img;
}

/* Writes the crafted file at path with those DWARF sections. */
static void craft_file(const char *path, const struct craft_section *sec, int n)
{
	unsigned char *elf;
	size_t size = craft_elf(crafted_id, TEXT_END, sec, n, &elf);
	write_file(path, elf, size, 0644);
	free(elf);
}

struct notes {
	int n;
	char text[8][1024];
};

static void collect(const char *msg, void *arg)
{
	struct notes *n = arg;
	if (n->n < 8)
		snprintf(n->text[n->n], sizeof n->text[0], "%s", msg);
	n->n++;
}

static struct notes problems(struct symbolizer *s)
{
	struct notes n = { 0 };
	symbolizer_problems(s, collect, &n);
	return n;
}

static uint64_t work_of(struct symbolizer *s)
{
	struct sym_stats st;
	symbolizer_stats(s, &st);
	return st.work;
}

static long peak_rss_kib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

/* A crafted address of the text: site i. */
static uint64_t site(int i) { return LOAD_BIAS + CRAFT_TEXT + 16 + (uint64_t)i * 97; }

/* ---- DWARF crafting ----------------------------------------------------- */

/* .debug_ranges (DWARF 4): n entries from at, two bytes apart, outside
 * the text, then the list's end. */
static void ranges_list(struct bytes *r, size_t n, uint64_t at)
{
	for (size_t i = 0; i < n; i++)
		put_u64(r, at + 2 * i), put_u64(r, at + 2 * i + 1);
	put_u64(r, 0), put_u64(r, 0);
}

/* Abbreviations: 1 a unit with low_pc and ranges, no children; 2 a unit
 * with low_pc and high_pc (a length), children; 3 a subprogram with a
 * name and ranges. */
static void abbrevs(struct bytes *a)
{
	put_uleb(a, 1), put_uleb(a, CRAFT_TAG_compile_unit), put_u8(a, CRAFT_CHILDREN_no);
	put_uleb(a, CRAFT_AT_low_pc), put_uleb(a, CRAFT_FORM_addr);
	put_uleb(a, CRAFT_AT_ranges), put_uleb(a, CRAFT_FORM_sec_offset);
	put_u8(a, 0), put_u8(a, 0);
	put_uleb(a, 2), put_uleb(a, CRAFT_TAG_compile_unit), put_u8(a, CRAFT_CHILDREN_yes);
	put_uleb(a, CRAFT_AT_low_pc), put_uleb(a, CRAFT_FORM_addr);
	put_uleb(a, CRAFT_AT_high_pc), put_uleb(a, CRAFT_FORM_data8);
	put_u8(a, 0), put_u8(a, 0);
	put_uleb(a, 3), put_uleb(a, CRAFT_TAG_subprogram), put_u8(a, CRAFT_CHILDREN_no);
	put_uleb(a, CRAFT_AT_name), put_uleb(a, CRAFT_FORM_string);
	put_uleb(a, CRAFT_AT_ranges), put_uleb(a, CRAFT_FORM_sec_offset);
	put_u8(a, 0), put_u8(a, 0);
	put_u8(a, 0);
}

/* A unit of 24 bytes whose ranges are at ranges_off in .debug_ranges. */
static void small_unit(struct bytes *info, uint32_t ranges_off)
{
	put_u32(info, 20), put_u16(info, 4), put_u32(info, 0), put_u8(info, 8);
	put_uleb(info, 1), put_u64(info, 0), put_u32(info, ranges_off);
}

/* Units sharing one list of nranges entries (each_own: unit i's list
 * starts at entry i of a longer one, so no two are the same list). */
static void craft_units(const char *path, size_t nunits, size_t nranges, bool each_own)
{
	struct bytes a = { 0 }, info = { 0 }, r = { 0 };
	abbrevs(&a);
	ranges_list(&r, nranges + (each_own ? nunits : 0), 0x40000000);
	for (size_t i = 0; i < nunits; i++)
		small_unit(&info, each_own ? (uint32_t)(16 * i) : 0);
	struct craft_section sec[] = {
		{ ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		{ ".debug_info", SHT_PROGBITS, 0, info.p, info.n },
		{ ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n },
	};
	craft_file(path, sec, 3);
	free(a.p), free(info.p), free(r.p);
}

/* ---- 1. work ------------------------------------------------------------ */

enum { SITES = 100 };

/* Every site of the crafted image named crafted_fn; the work spent. */
static uint64_t all_named(struct symbolizer *s, const struct posixtrace_image *img, uint64_t *first)
{
	int named = 0;
	for (int i = 0; i < SITES; i++) {
		struct sym_site out;
		int rc = symbolize(s, img, site(i), &out);
		named += rc == 0 && out.function && strcmp(out.function, "crafted_fn") == 0;
		if (i == 0)
			*first = work_of(s);
	}
	ck_assert_int_eq(named, SITES);
	return work_of(s);
}

/* 20,000 units of 24 bytes pointing at one 2,000-entry list cost a walk
 * of every unit and every entry per site (seconds each) before one index
 * per image: the list is read once, whatever the sites. */
START_TEST(units_share_one_range_list)
{
	NEED_LIBDW();
	enum { UNITS = 4000, RANGES = 2000 };
	craft_units(in_dir("units"), UNITS, RANGES, false);
	struct posixtrace_image img = crafted_image(in_dir("units"));
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t first, work = all_named(s, &img, &first);
	printf("t_symengine: %d units sharing %d ranges: work %llu after one site, %llu after %d\n",
	       UNITS, RANGES, (unsigned long long)first, (unsigned long long)work, SITES);
	ck_assert_uint_le(work, UNITS + RANGES + 16);
	ck_assert_uint_eq(work, first);
	ck_assert_int_eq(problems(s).n, 0);
	symbolizer_free(s);
}
END_TEST

/* Units whose lists all differ cannot be read once: the image's work
 * budget runs out, the image loses its names with one note, and later
 * lookups spend nothing. */
START_TEST(units_over_the_work_budget)
{
	NEED_LIBDW();
	enum { UNITS = 2000, RANGES = 2000, BUDGET = 200000 };
	craft_units(in_dir("own"), UNITS, RANGES, true);
	struct posixtrace_image img = crafted_image(in_dir("own"));
	struct sym_options o = { .image_work_max = BUDGET };
	struct symbolizer *s = symbolizer_new(&o);
	struct sym_site out;
	ck_assert_int_eq(symbolize(s, &img, site(0), &out), ENOENT);
	uint64_t spent = work_of(s);
	for (int i = 1; i < SITES; i++)
		ck_assert_int_eq(symbolize(s, &img, site(i), &out), ENOENT);
	ck_assert_uint_eq(work_of(s), spent);
	ck_assert_uint_le(spent, BUDGET + 1);
	struct notes n = problems(s);
	ck_assert_int_eq(n.n, 1);
	ck_assert_msg(strstr(n.text[0], "budget") && strstr(n.text[0], "own"), "note: %s", n.text[0]);
	symbolizer_free(s);
}
END_TEST

/* 20,000 functions of one unit pointing at one 1,000-entry list: each
 * site walked every function's list; the unit's functions are now read
 * once into an index. */
START_TEST(functions_share_one_range_list)
{
	NEED_LIBDW();
	enum { FUNCS = 20000, RANGES = 1000 };
	struct bytes a = { 0 }, info = { 0 }, r = { 0 };
	abbrevs(&a);
	ranges_list(&r, RANGES, 0x40000000);
	put_u32(&info, 0), put_u16(&info, 4), put_u32(&info, 0), put_u8(&info, 8);
	put_uleb(&info, 2), put_u64(&info, 0), put_u64(&info, TEXT_END);
	for (int i = 0; i < FUNCS; i++)
		put_uleb(&info, 3), put_str(&info, "f"), put_u32(&info, 0);
	put_u8(&info, 0);
	uint32_t len = (uint32_t)info.n - 4;
	memcpy(info.p, &len, 4);
	struct craft_section sec[] = {
		{ ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		{ ".debug_info", SHT_PROGBITS, 0, info.p, info.n },
		{ ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n },
	};
	craft_file(in_dir("funcs"), sec, 3);
	free(a.p), free(info.p), free(r.p);

	struct posixtrace_image img = crafted_image(in_dir("funcs"));
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t first, work = all_named(s, &img, &first);
	printf("t_symengine: %d functions sharing %d ranges: work %llu after one site, %llu after %d\n",
	       FUNCS, RANGES, (unsigned long long)first, (unsigned long long)work, SITES);
	ck_assert_uint_le(first, 2 * FUNCS + RANGES + 64);
	ck_assert_uint_le(work - first, 4 * SITES);
	ck_assert_int_eq(problems(s).n, 0);
	symbolizer_free(s);
}
END_TEST

/* 100,000 function symbols: each name found by a search in an index
 * read once (libdwfl's own lookup reads every symbol for each address),
 * the work the same after one site and after a thousand; the index's
 * memory is counted against the budget of bytes held. */
START_TEST(many_symbols_one_index)
{
	NEED_LIBDW();
	enum { FUNCS = 100000, LOOKUPS = 1000 };
	unsigned char *elf;
	size_t size = craft_elf_n(crafted_id, TEXT_END, FUNCS, NULL, 0, &elf);
	write_file(in_dir("syms"), elf, size, 0644);
	free(elf);
	struct posixtrace_image img = crafted_image(in_dir("syms"));
	uint64_t each = (TEXT_END - CRAFT_TEXT) / FUNCS, first = 0;
	struct symbolizer *s = symbolizer_new(NULL);
	int wrong = 0;
	for (int i = 0; i < LOOKUPS; i++) {
		unsigned k = 1 + (unsigned)i * 97 % (FUNCS - 1);
		char want[32];
		snprintf(want, sizeof want, "f%u", k);
		struct sym_site out;
		uint64_t at = LOAD_BIAS + CRAFT_TEXT + k * each + 3;
		wrong += symbolize(s, &img, at, &out) != 0 || !out.function ||
		         strcmp(out.function, want) != 0 || out.offset != 3;
		if (i == 0)
			first = work_of(s);
	}
	ck_assert_int_eq(wrong, 0);
	ck_assert_uint_ge(first, FUNCS);
	ck_assert_uint_eq(work_of(s), first);
	symbolizer_free(s);

	/* the index's memory counts against loaded_max: with room for the
	 * file and not for the index, the image loses its names, one note */
	struct sym_options o = { .loaded_max = size + (1 << 20) };
	s = symbolizer_new(&o);
	struct sym_site out;
	ck_assert_int_eq(symbolize(s, &img, LOAD_BIAS + CRAFT_TEXT + 8, &out), ENOENT);
	struct sym_stats stats;
	symbolizer_stats(s, &stats);
	ck_assert_uint_le(stats.loaded, o.loaded_max);
	struct notes n = problems(s);
	ck_assert_int_eq(n.n, 1);
	ck_assert_msg(strstr(n.text[0], "memory") && strstr(n.text[0], "budget"), "note: %s",
	              n.text[0]);
	symbolizer_free(s);
}
END_TEST

/* ---- 2. memory ---------------------------------------------------------- */

/* A .debug_str marked compressed whose zlib stream inflates to claim
 * bytes, beside a unit for libdw to read. */
static void craft_compressed(const char *path, uint64_t claim)
{
	enum { CHUNK = 1 << 20 };
	struct bytes a = { 0 }, info = { 0 }, r = { 0 }, str = { 0 };
	abbrevs(&a);
	ranges_list(&r, 1, 0x40000000);
	small_unit(&info, 0);
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = claim, .ch_addralign = 1 };
	put(&str, &ch, sizeof ch);
	z_stream z;
	memset(&z, 0, sizeof z);
	ck_assert_int_eq(deflateInit(&z, 9), Z_OK);
	unsigned char *zeros = calloc(1, CHUNK), *out = malloc(CHUNK);
	ck_assert(zeros && out);
	for (uint64_t left = claim; left || z.avail_in;) {
		if (!z.avail_in && left) {
			z.next_in = zeros;
			z.avail_in = (uInt)(left < CHUNK ? left : CHUNK);
			left -= z.avail_in;
		}
		z.next_out = out, z.avail_out = CHUNK;
		ck_assert_int_ne(deflate(&z, left ? Z_NO_FLUSH : Z_FINISH), Z_STREAM_ERROR);
		put(&str, out, CHUNK - z.avail_out);
	}
	int rc;
	do {
		z.next_out = out, z.avail_out = CHUNK;
		rc = deflate(&z, Z_FINISH);
		put(&str, out, CHUNK - z.avail_out);
	} while (rc == Z_OK);
	ck_assert_int_eq(rc, Z_STREAM_END);
	deflateEnd(&z);
	free(zeros), free(out);
	struct craft_section sec[] = {
		{ ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		{ ".debug_info", SHT_PROGBITS, 0, info.p, info.n },
		{ ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n },
		{ ".debug_str", SHT_PROGBITS, SHF_COMPRESSED, str.p, str.n },
	};
	craft_file(path, sec, 4);
	free(a.p), free(info.p), free(r.p), free(str.p);
}

/* 64 MiB claimed against a cap of 8 MiB: refused before libdw inflates
 * it (the peak memory of this process grows by less than the claim), the
 * image unusable with one note. */
START_TEST(compressed_section_over_the_cap)
{
	NEED_LIBDW();
	const uint64_t claim = 64 << 20;
	craft_compressed(in_dir("zstr"), claim);
	struct posixtrace_image img = crafted_image(in_dir("zstr"));
	struct sym_options o = { .section_max = 8 << 20 };
	long before = peak_rss_kib();
	struct symbolizer *s = symbolizer_new(&o);
	struct sym_site out;
	int rc = symbolize(s, &img, site(0), &out);
	long grew = peak_rss_kib() - before;
	printf("t_symengine: .debug_str claiming %llu bytes: rc %d, peak RSS +%ld KiB\n",
	       (unsigned long long)claim, rc, grew);
	ck_assert_int_eq(rc, ENOENT);
	struct notes n = problems(s);
	ck_assert_int_eq(n.n, 1);
	ck_assert_msg(strstr(n.text[0], "compressed section"), "note: %s", n.text[0]);
	ck_assert_int_lt(grew, 16 << 10);
	symbolizer_free(s);

	/* the same claim within the caps: read, and named */
	o.section_max = 0;
	s = symbolizer_new(&o);
	ck_assert_int_eq(symbolize(s, &img, site(0), &out), 0);
	ck_assert_str_eq(out.function, "crafted_fn");
	symbolizer_free(s);
}
END_TEST

/* 1,500 spellings of one path ("//", "/./") share one module: the
 * file is read once, and memory does not grow with the spellings. */
START_TEST(spellings_share_one_module)
{
	NEED_LIBDW();
	enum { SPELLINGS = 1500 };
	static unsigned char pad[256 << 10];
	memset(pad, 0x5a, sizeof pad);
	struct craft_section sec[] = { { ".comment", SHT_PROGBITS, 0, pad, sizeof pad } };
	craft_file(in_dir("prog"), sec, 1);
	struct stat st;
	ck_assert_int_eq(stat(in_dir("prog"), &st), 0);
	long before = peak_rss_kib();
	struct symbolizer *s = symbolizer_new(NULL);
	int named = 0;
	for (int i = 0; i < SPELLINGS; i++) {
		char path[PATH_MAX];
		int dots = i % 40, slashes = i / 40;
		int n = snprintf(path, sizeof path, "%s", dir);
		for (int k = 0; k < dots; k++)
			n += snprintf(path + n, sizeof path - (size_t)n, "/.");
		for (int k = 0; k <= slashes; k++)
			n += snprintf(path + n, sizeof path - (size_t)n, "/");
		snprintf(path + n, sizeof path - (size_t)n, "prog");
		struct posixtrace_image img = crafted_image(path);
		struct sym_site out;
		named += symbolize(s, &img, site(i % SITES), &out) == 0 && out.function &&
		         strcmp(out.function, "crafted_fn") == 0;
	}
	long grew = peak_rss_kib() - before;
	struct sym_stats stats;
	symbolizer_stats(s, &stats);
	printf("t_symengine: %d spellings: %llu module(s), %llu bytes loaded, peak RSS +%ld KiB\n",
	       SPELLINGS, (unsigned long long)stats.modules, (unsigned long long)stats.loaded, grew);
	ck_assert_int_eq(named, SPELLINGS);
	ck_assert_uint_eq(stats.images, SPELLINGS);
	ck_assert_uint_eq(stats.modules, 1);
	/* the file once, and its index */
	ck_assert_uint_ge(stats.loaded, (uint64_t)st.st_size);
	ck_assert_uint_lt(stats.loaded, 2 * (uint64_t)st.st_size);
	ck_assert_int_lt(grew, 32 << 10);
	symbolizer_free(s);
}
END_TEST

__attribute__((noinline)) int engine_function(int x)
{
	int r = x * 7 + 3;
	__asm__ volatile("" : "+r"(r));
	return r;
}

/* 100,000 distinct addresses of one image: at most image_sites_max
 * answers kept, and memory grows by no more than they take. */
START_TEST(many_sites_bounded)
{
	NEED_LIBDW();
	enum { DISTINCT = 100000 };
	struct posixtrace_image img;
	ck_assert(image_of((const void *)engine_function, &img));
	uint64_t span = img.posixtrace_end - img.posixtrace_start - 1;
	ck_assert_uint_gt(span, DISTINCT);
	long before = peak_rss_kib();
	struct symbolizer *s = symbolizer_new(NULL);
	int failed = 0;
	for (int i = 0; i < DISTINCT; i++) {
		struct sym_site out;
		failed += symbolize(s, &img, img.posixtrace_start + 1 + (uint64_t)i * (span / DISTINCT),
		                    &out) != 0;
	}
	long grew = peak_rss_kib() - before;
	struct sym_stats stats;
	symbolizer_stats(s, &stats);
	printf("t_symengine: %d sites: %llu kept, peak RSS +%ld KiB\n", DISTINCT,
	       (unsigned long long)stats.sites, grew);
	ck_assert_int_eq(failed, 0);
	ck_assert_uint_le(stats.sites, SYM_IMAGE_SITES_MAX);
	ck_assert_int_lt(grew, 16 << 10); /* 23 MiB before the bound */
	symbolizer_free(s);
}
END_TEST

/* ---- 3. files cut short ------------------------------------------------- */

static const char *self_path(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	return path;
}

static void copy_file(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	struct stat st;
	ck_assert_int_ge(in, 0);
	ck_assert_int_eq(fstat(in, &st), 0);
	unsigned char *b = malloc((size_t)st.st_size);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(pread(in, b, (size_t)st.st_size, 0), st.st_size);
	close(in);
	write_file(to, b, (size_t)st.st_size, 0644);
	free(b);
}

/* The crafted image at dir/prog without DWARF, its debug file (units
 * sharing a range list, the same build id) where --symfs dir finds it by
 * build id; the debug file's path in debug. */
static struct posixtrace_image with_debug_file(char *debug, size_t size)
{
	char h[41], sub[PATH_MAX];
	for (int i = 0; i < 20; i++)
		sprintf(h + 2 * i, "%02x", crafted_id[i]);
	craft_file(in_dir("prog"), NULL, 0);
	ck_assert_int_eq(mkdir(in_dir(".build-id"), 0755), 0);
	snprintf(sub, sizeof sub, "%s/.build-id/%.2s", dir, h);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	ck_assert_int_lt(snprintf(debug, size, "%s/%s.debug", sub, h + 2), (int)size);
	craft_units(debug, 20000, 100, false);
	return crafted_image(in_dir("prog"));
}

/* The debug file cut short after the first lookup: a mapping of it would
 * die of SIGBUS at the next; the copy in memory goes on. */
START_TEST(debug_file_cut_short_after_reading)
{
	NEED_LIBDW();
	char debug[PATH_MAX];
	struct posixtrace_image img = with_debug_file(debug, sizeof debug);
	struct sym_options o = { .symfs = dir };
	struct symbolizer *s = symbolizer_new(&o);
	struct sym_site out;
	ck_assert_int_eq(symbolize(s, &img, site(0), &out), 0);
	ck_assert_str_eq(out.function, "crafted_fn");
	uint64_t work = work_of(s);
	ck_assert_int_eq(truncate(debug, 0), 0);
	for (int i = 1; i < 4; i++) {
		ck_assert_int_eq(symbolize(s, &img, site(i), &out), 0);
		ck_assert_str_eq(out.function, "crafted_fn");
	}
	ck_assert_uint_ge(work, 20000); /* its units were read */
	ck_assert_int_eq(problems(s).n, 0);
	symbolizer_free(s);
}
END_TEST

/* Another process cuts the debug file short and writes it back, over and
 * over, while it is read: each lookup gives the function (from the
 * image's file), never a crash. */
START_TEST(debug_file_cut_short_while_read)
{
	NEED_LIBDW();
	enum { ROUNDS = 60 };
	char debug[PATH_MAX];
	struct posixtrace_image img = with_debug_file(debug, sizeof debug);
	struct stat st;
	ck_assert_int_eq(stat(debug, &st), 0);
	pid_t cutter = pt_fork();
	if (cutter == 0) {
		int fd = open(debug, O_RDWR | O_CLOEXEC);
		unsigned char *b = malloc((size_t)st.st_size);
		if (fd < 0 || !b || pread(fd, b, (size_t)st.st_size, 0) != st.st_size)
			_exit(1);
		for (unsigned i = 0;; i++) {
			if (ftruncate(fd, (off_t)(i * 7919u % (unsigned)st.st_size)) != 0 ||
			    pwrite(fd, b, (size_t)st.st_size, 0) != st.st_size)
				_exit(1);
		}
	}
	struct sym_options o = { .symfs = dir };
	int named = 0;
	for (int r = 0; r < ROUNDS; r++) {
		struct symbolizer *s = symbolizer_new(&o);
		for (int i = 0; i < 4; i++) {
			struct sym_site out;
			int rc = symbolize(s, &img, site(i), &out);
			named += rc == 0 && out.function && strcmp(out.function, "crafted_fn") == 0;
		}
		problems(s);
		symbolizer_free(s);
	}
	kill(cutter, SIGKILL);
	waitpid(cutter, NULL, 0);
	ck_assert_int_eq(named, 4 * ROUNDS);
}
END_TEST

/* ---- 4. notes ----------------------------------------------------------- */

/* The note about path, from a symbolizer with o, run as uid (when root):
 * written to fd. */
static void note_as(uid_t uid, const struct sym_options *o, const char *path, bool wrong_id, int fd)
{
	if (geteuid() == 0 && uid != 0 && (setgid(65534) != 0 || setuid(uid) != 0))
		_exit(2);
	struct posixtrace_image img;
	if (!image_of((const void *)engine_function, &img))
		_exit(3);
	snprintf(img.posixtrace_path, sizeof img.posixtrace_path, "%s", path);
	img.posixtrace_build_id[0] ^= wrong_id ? 0x5a : 0;
	struct symbolizer *s = symbolizer_new(o);
	struct sym_site out;
	struct notes n = { 0 };
	if (symbolize(s, &img, (uintptr_t)engine_function + 4, &out) != ENOENT)
		_exit(4);
	symbolizer_problems(s, collect, &n);
	if (n.n != 1)
		_exit(5);
	const char *after = n.text[0] + strlen(path);
	if (write(fd, after, strlen(after) + 1) < 0)
		_exit(6);
	symbolizer_free(s);
	_exit(0);
}

static void note_of(uid_t uid, const struct sym_options *o, const char *path, bool wrong_id,
                    char *out, size_t size)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	pid_t pid = pt_fork();
	if (pid == 0) {
		close(p[0]);
		note_as(uid, o, path, wrong_id, p[1]);
	}
	close(p[1]);
	ssize_t n = read(p[0], out, size - 1);
	close(p[0]);
	int status;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child status %#x", path,
	              status);
	out[n > 0 ? n : 0] = '\0';
}

/* Absent, unreadable (a file of root's in a directory only root may
 * search, read as another user), a symbolic link, a FIFO, a device, too
 * large, of another owner: one text, with no owner, size or build id.  A
 * file read whose build id differs: its build id may be told. */
START_TEST(notes_tell_nothing_unread)
{
	NEED_LIBDW();
	uid_t user = geteuid() == 0 ? 65534 : geteuid();
	ck_assert_int_eq(mkdir(in_dir("private"), 0700), 0);
	copy_file(self_path(), in_dir("private/prog"));
	copy_file(self_path(), in_dir("big"));
	copy_file(self_path(), in_dir("theirs"));
	ck_assert_int_eq(chmod(dir, 0755), 0);
	ck_assert_int_eq(chmod(in_dir("big"), 0644), 0);
	ck_assert_int_eq(symlink(self_path(), in_dir("link")), 0);
	ck_assert_int_eq(mkfifo(in_dir("fifo"), 0644), 0);
	if (geteuid() == 0)
		ck_assert_int_eq(chown(in_dir("theirs"), 1, 1), 0);
	struct sym_options plain = { 0 }, small = { .file_max = 4096 },
	                   owner = { .check_owner = 1, .owner = geteuid() == 0 ? 65534 : geteuid() + 1 };
	struct {
		const char *path;
		const struct sym_options *o;
		bool as_root;
	} cases[] = {
		{ in_dir("absent"), &plain, false },  { in_dir("link"), &plain, false },
		{ in_dir("fifo"), &plain, false },    { "/dev/null", &plain, false },
		{ in_dir("big"), &small, false },     { in_dir("theirs"), &owner, true },
		{ in_dir("private/prog"), &plain, false },
	};
	int ncases = geteuid() == 0 ? 7 : 6;
	char first[1024] = "", text[1024];
	for (int i = 0; i < ncases; i++) {
		note_of(cases[i].as_root ? 0 : user, cases[i].o, cases[i].path, true, text, sizeof text);
		if (i == 0)
			snprintf(first, sizeof first, "%s", text);
		ck_assert_msg(strcmp(text, first) == 0, "%s: \"%s\", not \"%s\"", cases[i].path, text,
		              first);
	}
	ck_assert_msg(!strstr(first, "uid") && !strstr(first, "bytes") && !strstr(first, "build id"),
	              "note \"%s\"", first);
	if (geteuid() != 0)
		printf("t_symengine: not root: the unreadable file's note not checked\n");
	/* read, with another build id: told */
	note_of(0, &plain, in_dir("big"), true, text, sizeof text);
	ck_assert_msg(strstr(text, "build id") && strstr(text, "the file's is"), "note \"%s\"", text);
}
END_TEST

/* ---- 5. the fuzzer's entry point ---------------------------------------- */

START_TEST(entry_point_in_memory)
{
	NEED_LIBDW();
	unsigned char *elf;
	size_t size = craft_elf(crafted_id, TEXT_END, NULL, 0, &elf);
	struct symbolizer *s = symbolizer_new(NULL);
	uint64_t at[2] = { CRAFT_TEXT + 8, TEXT_END + 64 };
	struct sym_site out[2];
	ck_assert_int_eq(symbolize_elf_memory(s, elf, size, at, 2, out), 0);
	ck_assert_str_eq(out[0].function, "crafted_fn");
	ck_assert_uint_eq(out[0].offset, 8);
	ck_assert_ptr_null(out[1].function);
	elf[1] = 'X'; /* not ELF */
	ck_assert_int_eq(symbolize_elf_memory(s, elf, size, at, 2, out), ENOENT);
	struct notes n = problems(s);
	ck_assert_int_eq(n.n, 1);
	ck_assert_msg(strstr(n.text[0], "not an ELF file"), "note: %s", n.text[0]);
	symbolizer_free(s);
	free(elf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symengine");
	TCase *tc = pt_tcase_fixture(s, "symengine", setup, teardown);
	tcase_add_test(tc, units_share_one_range_list);
	tcase_add_test(tc, units_over_the_work_budget);
	tcase_add_test(tc, functions_share_one_range_list);
	tcase_add_test(tc, many_symbols_one_index);
	tcase_add_test(tc, compressed_section_over_the_cap);
	tcase_add_test(tc, spellings_share_one_module);
	tcase_add_test(tc, many_sites_bounded);
	tcase_add_test(tc, debug_file_cut_short_after_reading);
	tcase_add_test(tc, debug_file_cut_short_while_read);
	tcase_add_test(tc, notes_tell_nothing_unread);
	tcase_add_test(tc, entry_point_in_memory);
	return pt_run_scratch(s, "t_symengine");
}
