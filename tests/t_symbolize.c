/* SPDX-License-Identifier: MIT */
/*
 * t_symbolize: posixtrace(1)'s symbolizer (tools/symbolize.c) names the
 * function, offset and source line of an address from the image a
 * process described, and treats that description as hostile.
 *
 * Checked: this program's own functions (a PIE: load bias not 0), by
 * function + offset and by the line of a call site (the return address
 * resolved to the call); the same file loaded at another address shares
 * its results; a program linked at fixed addresses (helper sym_nopie);
 * a function of libc, by name (and by line when its debug file is
 * installed); repeated lookups come from the cache, fast.  Refused, with
 * ENOENT and one problem message each: a wrong build id (the message
 * names the one needed, in hex), a file with a build id for an image
 * described without one, a symbolic link, a FIFO (without blocking: the
 * test's timeout), /dev/zero, a directory, a missing file, a file over
 * SYM_FILE_MAX (a sparse one, refused at once), a file of another owner
 * with check_owner (all of these with the one note SYM_NOTE_NO_FILE); --symfs finds a copy by path and by build id; random
 * bytes are refused; damaged copies of the program (its build id
 * intact) are refused or read, some read, none with a crash or a
 * descriptor left open (AddressSanitizer builds); a problem message
 * shows a path's control bytes escaped.
 * And the symbolizer as built without libdw says ENOTSUP.
 *
 * tools/symbolize.c is compiled into this program twice: as the Makefile
 * says (with libdw when found), then without libdw under other names.
 */
#include "harness.h"

#include "../tools/symbolize.c"

#undef PT_HAVE_LIBDW
#define symbolizer nolibdw_symbolizer
#define symbolizer_new nolibdw_symbolizer_new
#define symbolizer_free nolibdw_symbolizer_free
#define symbolize nolibdw_symbolize
#define symbolizer_problems nolibdw_symbolizer_problems
#define symbolizer_available nolibdw_symbolizer_available
#define symbolizer_stats nolibdw_symbolizer_stats
#define symbolize_elf_memory nolibdw_symbolize_elf_memory
#define symbolize_files nolibdw_symbolize_files
#include "../tools/symbolize.c"
#undef symbolizer
#undef symbolizer_new
#undef symbolizer_free
#undef symbolize
#undef symbolizer_problems
#undef symbolizer_available
#undef symbolizer_stats
#undef symbolize_elf_memory
#undef symbolize_files

#include "symbolize/image.h"

/* ---- code to find ------------------------------------------------------ */

__attribute__((noinline)) int known_function(int x)
{
	int r = x * 3 + 1;
	__asm__ volatile("" : "+r"(r));
	return r ^ 0x55;
}

__attribute__((noinline)) void *return_address(void)
{
	return __builtin_return_address(0);
}

__attribute__((noinline)) void *known_caller(int *line)
{
	void *ret = return_address(); *line = __LINE__;
	__asm__ volatile(""); /* not a tail call */
	return ret;
}

/* ---- helpers ----------------------------------------------------------- */

static const char *dir;

static void setup(void) { dir = pt_scratch_dir("t_symbolize"); }
static void teardown(void) { pt_remove_tree(dir); }

/* Skips a test (returns from it) when built without libdw. */
#define NEED_LIBDW()                                                                \
	do {                                                                        \
		if (!symbolizer_available()) {                                      \
			printf("t_symbolize: SKIPPED: built without libdw\n");      \
			return;                                                     \
		}                                                                   \
	} while (0)

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

/* The one problem s has not given yet, which must contain each of the
 * strings (up to three; NULL: none). */
static void assert_problem(struct symbolizer *s, const char *a, const char *b, const char *c)
{
	struct notes n = problems(s);
	ck_assert_msg(n.n == 1, "%d problems, expected 1 (first: %s)", n.n, n.n ? n.text[0] : "");
	const char *want[] = { a, b, c };
	for (int i = 0; i < 3; i++)
		ck_assert_msg(!want[i] || strstr(n.text[0], want[i]), "problem \"%s\" lacks \"%s\"",
		              n.text[0], want[i]);
}

static struct symbolizer *new_symbolizer(const char *symfs, int check_owner, uid_t owner)
{
	struct sym_options o = { .symfs = symfs, .check_owner = check_owner, .owner = owner };
	struct symbolizer *s = symbolizer_new(&o);
	ck_assert_ptr_nonnull(s);
	return s;
}

/* This program's image, and an address inside known_function. */
static struct posixtrace_image self_image(uint64_t *inside)
{
	struct posixtrace_image img;
	ck_assert(image_of((const void *)known_function, &img));
	ck_assert_uint_gt(img.posixtrace_build_id_size, 0);
	*inside = (uintptr_t)known_function + 4;
	return img;
}

/* img with another path. */
static struct posixtrace_image renamed(struct posixtrace_image img, const char *path)
{
	ck_assert_uint_lt(strlen(path), sizeof img.posixtrace_path);
	snprintf(img.posixtrace_path, sizeof img.posixtrace_path, "%s", path);
	return img;
}

static char *in_dir(const char *name)
{
	static char path[8][PATH_MAX];
	static int next;
	char *p = path[next++ % 8];
	snprintf(p, PATH_MAX, "%s/%s", dir, name);
	return p;
}

/* How a copy is damaged from a byte on: random bytes, cut there, or 64
 * bytes changed at random after it. */
enum damage { INTACT, FILL, CUT, FLIP };

static void copy_file(const char *from, const char *to, mode_t mode, enum damage how, size_t at,
                      unsigned seed)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	struct stat st;
	ck_assert_int_ge(in, 0);
	ck_assert_int_ge(out, 0);
	ck_assert_int_eq(fstat(in, &st), 0);
	size_t size = (size_t)st.st_size;
	unsigned char *b = malloc(size);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(read(in, b, size), (ssize_t)size);
	for (size_t i = at; how == FILL && i < size; i++)
		b[i] = (unsigned char)(rand_r(&seed) >> 7);
	for (int i = 0; how == FLIP && at < size && i < 64; i++)
		b[at + (size_t)rand_r(&seed) % (size - at)] ^= (unsigned char)(1 + rand_r(&seed) % 255);
	if (how == CUT && at < size)
		size = at;
	ck_assert_int_eq(write(out, b, size), (ssize_t)size);
	free(b);
	close(in);
	ck_assert_int_eq(fchmod(out, mode), 0);
	close(out);
}

static const char *self_path(void)
{
	static char path[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
	ck_assert_int_gt(n, 0);
	path[n] = '\0';
	return path;
}

/* The image's build id in hex. */
static void id_hex(const struct posixtrace_image *img, char out[2 * POSIXTRACE_BUILD_ID_MAX + 1])
{
	for (uint32_t i = 0; i < img->posixtrace_build_id_size; i++)
		sprintf(out + 2 * i, "%02x", img->posixtrace_build_id[i]);
	out[2 * img->posixtrace_build_id_size] = '\0';
}

/* How many descriptors this process has open: the symbolizer must
 * close all it opened, whether libdwfl took them or not. */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	int n = 0;
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash ? slash + 1 : path;
}

static void read_all(int fd, void *buf, size_t size)
{
	for (size_t got = 0; got < size;) {
		ssize_t n = read(fd, (char *)buf + got, size - got);
		ck_assert_int_gt(n, 0);
		got += (size_t)n;
	}
}

static bool same_site(const struct sym_site *a, const struct sym_site *b)
{
	return a->function == b->function && a->offset == b->offset && a->file == b->file &&
	       a->line == b->line && a->image == b->image;
}

/* ---- 1. finding functions and lines ------------------------------------ */

START_TEST(own_function_and_call_site)
{
	NEED_LIBDW();
	uint64_t inside;
	struct posixtrace_image img = self_image(&inside);
	ck_assert_uint_ne(img.posixtrace_load_bias, 0); /* built as a PIE */
	int fds = open_fds();
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	struct sym_site site;
	ck_assert_ok(symbolize(s, &img, inside, &site));
	ck_assert_str_eq(site.function, "known_function");
	ck_assert_uint_eq(site.offset, 4);
	ck_assert_str_eq(site.image, "t_symbolize");

	int line = 0;
	void *(*volatile call)(int *) = known_caller;
	uint64_t ret = (uintptr_t)call(&line);
	ck_assert_ok(symbolize(s, &img, ret, &site));
	ck_assert_str_eq(site.function, "known_caller");
	ck_assert_uint_eq(site.offset, ret - (uintptr_t)known_caller);
	ck_assert_ptr_nonnull(site.file);
	ck_assert_str_eq(base_name(site.file), "t_symbolize.c");
	ck_assert_int_eq(site.line, line);

	/* the same file in another process, elsewhere */
	struct posixtrace_image moved = img;
	const uint64_t by = 0x7000000;
	moved.posixtrace_start += by, moved.posixtrace_end += by, moved.posixtrace_load_bias += by;
	struct sym_site there;
	ck_assert_ok(symbolize(s, &moved, ret + by, &there));
	ck_assert_ptr_eq(there.function, site.function);
	ck_assert_ptr_eq(there.file, site.file);
	ck_assert_int_eq(there.line, line);
	ck_assert_err(symbolize(s, &moved, ret, &there), EINVAL); /* not in that image */
	ck_assert_int_eq(problems(s).n, 0);
	symbolizer_free(s);
	ck_assert_int_eq(open_fds(), fds);
}
END_TEST

START_TEST(program_at_fixed_addresses)
{
	NEED_LIBDW();
	int out[2];
	ck_assert_int_eq(pipe(out), 0);
	char *helper = pt_helper_path("sym_nopie");
	pid_t pid = pt_fork();
	if (pid == 0) {
		dup2(out[1], 1);
		execl(helper, helper, (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	struct posixtrace_image img;
	uint64_t address;
	int line, status;
	read_all(out[0], &img, sizeof img);
	read_all(out[0], &address, sizeof address);
	read_all(out[0], &line, sizeof line);
	close(out[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_uint_eq(img.posixtrace_load_bias, 0);

	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	struct sym_site site;
	ck_assert_ok(symbolize(s, &img, address, &site));
	ck_assert_str_eq(site.function, "called_here");
	ck_assert_str_eq(site.image, "sym_nopie");
	ck_assert_ptr_nonnull(site.file);
	ck_assert_str_eq(base_name(site.file), "nopie.c");
	ck_assert_int_eq(site.line, line);
	symbolizer_free(s);
}
END_TEST

START_TEST(libc_function_by_name)
{
	NEED_LIBDW();
	struct posixtrace_image img;
	pid_t (*volatile f)(void) = getpid;
	uint64_t address = (uintptr_t)f + 1;
	ck_assert(image_of((const void *)(uintptr_t)address, &img));
	ck_assert_ptr_nonnull(strstr(img.posixtrace_path, "libc"));
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	struct sym_site site;
	ck_assert_ok(symbolize(s, &img, address, &site));
	ck_assert_ptr_nonnull(site.function);
	ck_assert_msg(strstr(site.function, "getpid"), "function %s", site.function);
	ck_assert_uint_eq(site.offset, 1);
	ck_assert_str_eq(site.image, base_name(img.posixtrace_path));

	/* its separate debug information, when installed */
	char debug[PATH_MAX], h[2 * POSIXTRACE_BUILD_ID_MAX + 1];
	id_hex(&img, h);
	snprintf(debug, sizeof debug, "/usr/lib/debug/.build-id/%.2s/%s.debug", h, h + 2);
	struct stat st;
	if (lstat(debug, &st) == 0 && S_ISREG(st.st_mode)) {
		ck_assert_msg(site.file && site.line > 0, "no line from %s", debug);
	} else {
		printf("t_symbolize: %s not installed: libc's lines not checked\n", debug);
	}
	ck_assert_int_eq(problems(s).n, 0);
	symbolizer_free(s);
}
END_TEST

START_TEST(cache_makes_repeats_fast)
{
	NEED_LIBDW();
	uint64_t inside;
	struct posixtrace_image img = self_image(&inside);
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	enum { DISTINCT = 2000, ROUNDS = 100 };
	static struct sym_site first[DISTINCT];
	uint64_t span = img.posixtrace_end - img.posixtrace_start - 1;
	for (int i = 0; i < DISTINCT; i++)
		ck_assert_ok(symbolize(s, &img, img.posixtrace_start + 1 + (uint64_t)i * 7919 % span,
		                       &first[i]));
	/* no ck_assert in the loop: each is a message to Check's parent */
	int differ = 0;
	double t0 = now();
	for (int r = 0; r < ROUNDS; r++)
		for (int i = 0; i < DISTINCT; i++) {
			struct sym_site again;
			differ += symbolize(s, &img, img.posixtrace_start + 1 + (uint64_t)i * 7919 % span,
			                    &again) != 0 || !same_site(&again, &first[i]);
		}
	double took = now() - t0;
	ck_assert_int_eq(differ, 0);
	if (getenv("T_SYMBOLIZE_VERBOSE"))
		printf("t_symbolize: %d cached lookups: %.3f s\n", DISTINCT * ROUNDS, took);
	/* some 100 ns each, 500 under the sanitizers */
	ck_assert_msg(took < 1.0, "%d cached lookups took %.2f s", DISTINCT * ROUNDS, took);
	symbolizer_free(s);
}
END_TEST

/* ---- 2. build ids ------------------------------------------------------ */

START_TEST(wrong_build_id)
{
	NEED_LIBDW();
	uint64_t inside;
	struct posixtrace_image img = self_image(&inside);
	img.posixtrace_build_id[3] ^= 0x5a;
	char needed[2 * POSIXTRACE_BUILD_ID_MAX + 1];
	id_hex(&img, needed);
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	struct sym_site site;
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	ck_assert_err(symbolize(s, &img, inside + 1, &site), ENOENT);
	assert_problem(s, needed, "different build", img.posixtrace_path);
	ck_assert_int_eq(problems(s).n, 0); /* said once */

	/* described without a build id, the file has one */
	img.posixtrace_build_id_size = 0;
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	assert_problem(s, "has a build id", NULL, NULL);

	img.posixtrace_build_id_size = POSIXTRACE_BUILD_ID_MAX + 1;
	ck_assert_err(symbolize(s, &img, inside, &site), EINVAL);
	symbolizer_free(s);
}
END_TEST

/* ---- 3. what is not opened --------------------------------------------- */

/* A lookup in img renamed to path: ENOENT, and a problem with `why`
 * (NULL: no problem). */
static void refused(struct symbolizer *s, const char *path, const char *why)
{
	uint64_t inside;
	struct posixtrace_image img = renamed(self_image(&inside), path);
	struct sym_site site;
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	if (why)
		assert_problem(s, why, path[0] ? path : NULL, NULL);
	else
		ck_assert_int_eq(problems(s).n, 0);
}

START_TEST(links_fifos_devices_missing)
{
	NEED_LIBDW();
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	ck_assert_int_eq(symlink(self_path(), in_dir("link")), 0);
	refused(s, in_dir("link"), SYM_NOTE_NO_FILE);
	ck_assert_int_eq(mkfifo(in_dir("fifo"), 0600), 0);
	refused(s, in_dir("fifo"), SYM_NOTE_NO_FILE);
	refused(s, "/dev/zero", SYM_NOTE_NO_FILE);
	refused(s, dir, SYM_NOTE_NO_FILE);
	refused(s, in_dir("missing"), SYM_NOTE_NO_FILE);
	uint64_t inside;
	struct posixtrace_image img = renamed(self_image(&inside), in_dir("esc\033[2J\n"));
	struct sym_site site;
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	assert_problem(s, "/esc\\x1b[2J\\x0a: " SYM_NOTE_NO_FILE, NULL, NULL);
	refused(s, "", NULL); /* the vDSO: no file, nothing to say */

	img = renamed(self_image(&inside), "/nonexistent/dir/prog");
	img.posixtrace_path_truncated = 1;
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	assert_problem(s, "cut short", NULL, NULL);
	symbolizer_free(s);
}
END_TEST

/* ---- 4. size ----------------------------------------------------------- */

START_TEST(too_large)
{
	NEED_LIBDW();
	int fd = open(in_dir("huge"), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ftruncate(fd, SYM_FILE_MAX + 1), 0);
	close(fd);
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	double t0 = now();
	refused(s, in_dir("huge"), SYM_NOTE_NO_FILE);
	ck_assert_msg(now() - t0 < 0.5, "%.2f s to refuse", now() - t0);
	symbolizer_free(s);
}
END_TEST

/* ---- 5. owners --------------------------------------------------------- */

START_TEST(owner_checked)
{
	NEED_LIBDW();
	uint64_t inside;
	const char *copy = in_dir("prog");
	copy_file(self_path(), copy, 0755, INTACT, 0, 0);
	/* as root: a file of 65534's, the log root's; else a file of ours,
	 * the log another user's */
	uid_t holder = geteuid() == 0 ? 65534 : geteuid();
	uid_t other = geteuid() == 0 ? 0 : geteuid() + 1;
	if (geteuid() == 0)
		ck_assert_int_eq(chown(copy, 65534, 65534), 0);
	struct posixtrace_image img = renamed(self_image(&inside), copy);
	struct sym_site site;

	struct symbolizer *s = new_symbolizer(NULL, 1, other);
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	assert_problem(s, SYM_NOTE_NO_FILE, copy, NULL); /* the owner not told */
	struct notes none = problems(s);
	ck_assert_int_eq(none.n, 0);
	symbolizer_free(s);

	s = new_symbolizer(NULL, 1, holder);
	ck_assert_ok(symbolize(s, &img, inside, &site));
	ck_assert_str_eq(site.function, "known_function");
	symbolizer_free(s);

	s = new_symbolizer(NULL, 0, other); /* not checked */
	ck_assert_ok(symbolize(s, &img, inside, &site));
	symbolizer_free(s);
}
END_TEST

/* ---- 6. --symfs -------------------------------------------------------- */

START_TEST(symfs_by_path_and_build_id)
{
	NEED_LIBDW();
	uint64_t inside;
	struct posixtrace_image img = renamed(self_image(&inside), "/nonexistent/prog");
	char path[PATH_MAX], h[2 * POSIXTRACE_BUILD_ID_MAX + 1];
	ck_assert_int_eq(mkdir(in_dir("nonexistent"), 0755), 0);
	copy_file(self_path(), in_dir("nonexistent/prog"), 0755, INTACT, 0, 0);

	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	struct sym_site site;
	ck_assert_err(symbolize(s, &img, inside, &site), ENOENT);
	assert_problem(s, "/nonexistent/prog", SYM_NOTE_NO_FILE, NULL);
	symbolizer_free(s);

	s = new_symbolizer(dir, 0, 0);
	ck_assert_ok(symbolize(s, &img, inside, &site));
	ck_assert_str_eq(site.function, "known_function");
	ck_assert_str_eq(site.image, "prog");

	/* by build id: DIR/.build-id/xx/rest */
	id_hex(&img, h);
	ck_assert_int_eq(mkdir(in_dir(".build-id"), 0755), 0);
	snprintf(path, sizeof path, "%s/.build-id/%.2s", dir, h);
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof path, "%s/.build-id/%.2s/%s", dir, h, h + 2);
	copy_file(self_path(), path, 0755, INTACT, 0, 0);
	img = renamed(img, "/nowhere/else");
	ck_assert_ok(symbolize(s, &img, inside, &site));
	ck_assert_str_eq(site.function, "known_function");
	ck_assert_int_eq(problems(s).n, 0);
	symbolizer_free(s);
}
END_TEST

/* ---- 7. hostile files --------------------------------------------------- */

START_TEST(garbage_and_damaged_files)
{
	NEED_LIBDW();
	uint64_t inside;
	struct posixtrace_image self = self_image(&inside);
	char name[64];
	struct stat st;
	ck_assert_int_eq(stat(self_path(), &st), 0);

	/* random bytes */
	copy_file(self_path(), in_dir("random"), 0644, FILL, 0, 1);
	struct symbolizer *s = new_symbolizer(NULL, 0, 0);
	refused(s, in_dir("random"), "not an ELF file");
	symbolizer_free(s);

	/* The program's headers and notes kept (its build id matches), what
	 * follows damaged.  Some copies must be taken (libdwfl then reads the
	 * damage), and none may crash. */
	int fds = open_fds(), taken = 0;
	size_t from[] = { 1024, 4096, (size_t)st.st_size / 2 };
	for (unsigned i = 0; i < 36; i++) {
		enum damage how = (enum damage)(FILL + i % 3);
		snprintf(name, sizeof name, "damaged%u", i);
		copy_file(self_path(), in_dir(name), 0644, how, from[i / 3 % 3], i);
		struct posixtrace_image img = renamed(self, in_dir(name));
		s = new_symbolizer(NULL, 0, 0);
		for (uint64_t a = img.posixtrace_start + 1; a < img.posixtrace_end; a += 509) {
			struct sym_site site;
			int rc = symbolize(s, &img, a, &site);
			ck_assert_msg(rc == 0 || rc == ENOENT, "%s: %s", name, strerror(rc));
			if (rc == 0)
				ck_assert_str_eq(site.image, name);
			taken += rc == 0 && a == img.posixtrace_start + 1;
		}
		problems(s);
		symbolizer_free(s);
	}
	ck_assert_int_gt(taken, 0);
	ck_assert_int_eq(open_fds(), fds);
}
END_TEST

/* ---- without libdw ------------------------------------------------------ */

START_TEST(without_libdw_enotsup)
{
	uint64_t inside;
	struct posixtrace_image img = self_image(&inside);
	struct nolibdw_symbolizer *s = nolibdw_symbolizer_new(NULL);
	ck_assert_ptr_nonnull(s);
	struct sym_site site;
	ck_assert_int_eq(nolibdw_symbolizer_available(), 0);
	ck_assert_err(nolibdw_symbolize(s, &img, inside, &site), ENOTSUP);
	struct sym_files files;
	ck_assert_err(nolibdw_symbolize_files(s, &img, &files), ENOTSUP);
	struct notes n = { 0 };
	nolibdw_symbolizer_problems(s, collect, &n);
	ck_assert_int_eq(n.n, 0);
	nolibdw_symbolizer_free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("symbolize");
	TCase *tc = pt_tcase_fixture(s, "symbolize", setup, teardown);
	tcase_add_test(tc, own_function_and_call_site);
	tcase_add_test(tc, program_at_fixed_addresses);
	tcase_add_test(tc, libc_function_by_name);
	tcase_add_test(tc, cache_makes_repeats_fast);
	tcase_add_test(tc, wrong_build_id);
	tcase_add_test(tc, links_fifos_devices_missing);
	tcase_add_test(tc, too_large);
	tcase_add_test(tc, owner_checked);
	tcase_add_test(tc, symfs_by_path_and_build_id);
	tcase_add_test(tc, garbage_and_damaged_files);
	tcase_add_test(tc, without_libdw_enotsup);
	return pt_run_scratch(s, "t_symbolize");
}
