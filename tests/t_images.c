/* SPDX-License-Identifier: MIT */
/*
 * t_images: the executable images a stream records when asked
 * (posixtrace_set_images) and posixtrace_event_image reads back from its
 * log: every event's address falls in the image it is given, named by the
 * file the process ran (the program, a dlopen'd plug-in posting between
 * dlopen and dlclose, the program a child exec'd under the same pid), with
 * the build id the loaded object carries; a stream not asked records
 * none; the errors each function names.
 */
#include "harness.h"
#include "logtest.h"

#include <dlfcn.h>
#include <elf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <posixtrace.h>

/* An event as read back. */
struct lt_rec_buf {
	struct posix_trace_event_info info;
	unsigned char data[64];
};

/* The loaded object holding addr: its real path and GNU build id, found
 * from the program headers as the loader has them (independently of the
 * library's own walk). */
struct object {
	uintptr_t addr;
	char path[PATH_MAX];
	unsigned char build_id[64];
	size_t build_id_size;
};

static void note_id(const unsigned char *p, size_t len, struct object *o)
{
	while (len >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) n;
		memcpy(&n, p, sizeof n);
		size_t name = (n.n_namesz + 3u) & ~3u, desc = (n.n_descsz + 3u) & ~3u;
		if (sizeof n + name + desc > len)
			return;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_descsz <= sizeof o->build_id) {
			memcpy(o->build_id, p + sizeof n + name, n.n_descsz);
			o->build_id_size = n.n_descsz;
			return;
		}
		p += sizeof n + name + desc;
		len -= sizeof n + name + desc;
	}
}

static int find_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct object *o = arg;
	int holds = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && o->addr >= lo && o->addr < lo + ph->p_memsz)
			holds = 1;
	}
	if (!holds)
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_NOTE)
			note_id((const unsigned char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr),
			        info->dlpi_phdr[i].p_memsz, o);
	const char *name = info->dlpi_name[0] ? info->dlpi_name : "/proc/self/exe";
	ck_assert_ptr_nonnull(realpath(name, o->path));
	return 1;
}

static struct object object_of(const void *addr)
{
	struct object o = {.addr = (uintptr_t)addr};
	ck_assert_int_eq(dl_iterate_phdr(find_object, &o), 1);
	return o;
}

/* The image posixtrace_event_image gives event ev is the object `want`. */
static void assert_image_is(trace_id_t rd, const struct lt_rec_buf *ev, const struct object *want)
{
	struct posixtrace_image img;
	int err = posixtrace_event_image(rd, &ev->info, &img);
	ck_assert_msg(err == 0, "event %d at %p of process %d: no image (%s)",
	              (int)ev->info.posix_event_id, ev->info.posix_prog_address,
	              (int)ev->info.posix_pid, strerror(err));
	uintptr_t pc = (uintptr_t)ev->info.posix_prog_address;
	ck_assert_uint_le(img.posixtrace_start, pc);
	ck_assert_uint_lt(pc, img.posixtrace_end);
	char real[PATH_MAX];
	ck_assert_ptr_nonnull(realpath(img.posixtrace_path, real));
	ck_assert_str_eq(real, want->path);
	ck_assert_uint_eq(img.posixtrace_build_id_size, want->build_id_size);
	ck_assert_int_eq(memcmp(img.posixtrace_build_id, want->build_id, want->build_id_size), 0);
	ck_assert_int_eq(img.posixtrace_path_truncated, 0);
	/* A stream of this process's own: its memory is this user's (root's,
	 * run as root), which the keeper records as the describer. */
	ck_assert_uint_eq(img.posixtrace_uid, (uint32_t)geteuid());
}

/* A stream of this process logging into fd, asked for images, started. */
static trace_id_t started_with_images(int fd, int stream_policy, size_t stream_size)
{
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, 0, 0, stream_policy, stream_size, &trid));
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

/* A stream of this process logging into fd, asked for images, started:
 * POSIX_TRACE_FLUSH, its writers waiting for room (20 s at most) rather
 * than losing events, whatever the load; events of max_data bytes at most
 * (0: the default), stream_size bytes (0: the default). */
static trace_id_t started_waiting_with_images(int fd, size_t max_data, size_t stream_size)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	if (max_data)
		ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, max_data));
	if (stream_size)
		ck_assert_ok(posix_trace_attr_setstreamsize(&attr, stream_size));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH));
	struct timespec wait = {20, 0};
	ck_assert_ok(posixtrace_attr_setblocking(&attr, &wait));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

/* What the last log read said of itself (posixtrace_log_info). */
static struct posixtrace_log_info last_info;

/* Reads the log of fd; calls check(rd, event, arg) for each user event. */
static size_t each_user_event(int fd,
                              void (*check)(trace_id_t, const struct lt_rec_buf *, void *),
                              void *arg)
{
	trace_id_t rd;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	size_t n = 0;
	for (;;) {
		struct lt_rec_buf ev = {0};
		int unavailable = 0;
		size_t len = 0;
		ck_assert_ok(posix_trace_getnext_event(rd, &ev.info, ev.data, sizeof ev.data, &len,
		                                       &unavailable));
		if (unavailable)
			break;
		if (ev.info.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT)
			continue;
		check(rd, &ev, arg);
		n++;
	}
	ck_assert_ok(posixtrace_log_info(rd, &last_info));
	ck_assert_ok(posix_trace_close(rd));
	return n;
}

/* posixtrace_set_images: EINVAL for an identifier that is not an active
 * stream's.  posixtrace_event_image: EINVAL for NULL arguments and for an
 * active stream's identifier (images are read from logs). */
START_TEST(errors)
{
	trace_id_t trid = pt_create_started();
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posixtrace_set_images(trid, 0));
	struct posix_trace_event_info info = {0};
	struct posixtrace_image img;
	ck_assert_err(posixtrace_event_image(trid, &info, &img), EINVAL);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_err(posixtrace_set_images(trid, 1), EINVAL);

	int fd = lt_new_log_file();
	ck_assert_ok(lt_create_log(fd, 0, 0, 0, 0, &trid));
	ck_assert_ok(posix_trace_shutdown(trid));
	trace_id_t rd;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	ck_assert_err(posixtrace_event_image(rd, NULL, &img), EINVAL);
	ck_assert_err(posixtrace_event_image(rd, &info, NULL), EINVAL);
	ck_assert_err(posixtrace_set_images(rd, 1), EINVAL);
	info.posix_pid = getpid();
	info.posix_prog_address = (void *)(uintptr_t)&errors;
	ck_assert_err(posixtrace_event_image(rd, &info, &img), ENOENT);
	ck_assert_ok(posix_trace_close(rd));
}
END_TEST

struct expect {
	trace_event_id_t main_id, plugin_id;
	struct object main, plugin;
	size_t main_seen, plugin_seen;
};

static void check_program_and_plugin(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct expect *x = arg;
	if (ev->info.posix_event_id == x->plugin_id) {
		assert_image_is(rd, ev, &x->plugin);
		x->plugin_seen++;
	} else {
		ck_assert_uint_eq(ev->info.posix_event_id, x->main_id);
		assert_image_is(rd, ev, &x->main);
		x->main_seen++;
	}
}

/* The program's events and those a plug-in posts between dlopen and
 * dlclose, each in its own file's image with that file's build id;
 * after the dlclose the program's events are still its own. */
START_TEST(program_and_plugin)
{
	int fd = lt_new_log_file();
	trace_id_t trid = started_with_images(fd, 0, 0);
	struct expect x = {.main_id = pt_event_id("img.main"), .main = object_of((void *)&object_of)};
	uint32_t seq = 0;
	posix_trace_event(x.main_id, &seq, sizeof seq);
	char *path = pt_helper_path("dl_plugin.so");
	void *dl = dlopen(path, RTLD_NOW);
	ck_assert_msg(dl != NULL, "%s", dlerror());
	int (*post)(uint32_t) = (int (*)(uint32_t))dlsym(dl, "plugin_post");
	ck_assert_ptr_nonnull(post);
	x.plugin = object_of((void *)post);
	for (seq = 1; seq <= 3; seq++)
		ck_assert_ok(post(seq));
	ck_assert_int_eq(dlclose(dl), 0);
	posix_trace_event(x.main_id, &seq, sizeof seq);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_ok(posix_trace_eventid_open("dl.event", &x.plugin_id));
	ck_assert_uint_eq(each_user_event(fd, check_program_and_plugin, &x), 5);
	ck_assert_uint_eq(x.main_seen, 2);
	ck_assert_uint_eq(x.plugin_seen, 3);
	ck_assert_uint_gt(last_info.posixtrace_images, 2); /* program, plug-in, libraries */
}
END_TEST

static void check_none(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	(void)arg;
	struct posixtrace_image img;
	ck_assert_err(posixtrace_event_image(rd, &ev->info, &img), ENOENT);
}

/* A stream not asked for images records none (posixtrace_log_info counts
 * none). */
START_TEST(not_asked_none)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, 0, 0, 0, 0, &trid));
	ck_assert_ok(posix_trace_start(trid));
	trace_event_id_t id = pt_event_id("img.none");
	for (int i = 0; i < 10; i++)
		posix_trace_event(id, &i, sizeof i);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_uint_eq(each_user_event(fd, check_none, NULL), 10);
	ck_assert_uint_eq(last_info.posixtrace_images, 0);
}
END_TEST

struct loop_expect {
	struct object main;
	size_t seen;
};

static void check_loop(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct loop_expect *x = arg;
	assert_image_is(rd, ev, &x->main);
	x->seen++;
}

/* A LOOP stream overwrites the chunk its writer described its images in
 * long before it is read (a flight recorder): the writer describes them
 * again in every chunk it starts, so every event the log holds, after
 * the ring went round many times, still has its image, and the log holds
 * the set a handful of times at most, not once per chunk. */
START_TEST(loop_stream_keeps_images)
{
	int fd = lt_new_log_file();
	trace_id_t trid = started_with_images(fd, POSIX_TRACE_LOOP, 64 << 10);
	struct loop_expect x = {.main = object_of((void *)&object_of)};
	trace_event_id_t id = pt_event_id("img.loop");
	for (uint32_t i = 0; i < 200000; i++)
		posix_trace_event(id, &i, sizeof i);
	ck_assert_ok(posix_trace_shutdown(trid));
	size_t n = each_user_event(fd, check_loop, &x);
	ck_assert_uint_gt(n, 1000);
	ck_assert_uint_lt(n, 200000); /* the ring did go round */
	ck_assert_uint_eq(x.seen, n);
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	ck_assert_int_lt(st.st_size, 2 << 20);
}
END_TEST

struct race {
	trace_event_id_t id;
	atomic_int stop;
};

static void *poster(void *arg)
{
	struct race *r = arg;
	for (uint32_t i = 0; !atomic_load(&r->stop); i++) {
		posix_trace_event(r->id, &i, sizeof i);
		if (i % 100 == 99)
			usleep(100); /* a log of some 10^5 events, not of what 3 threads can post */
	}
	return NULL;
}

struct race_expect {
	trace_event_id_t plugin_id;
	struct object main;
	char plugin_path[PATH_MAX];
	size_t main_seen, plugin_seen;
};

static void check_race(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct race_expect *x = arg;
	struct posixtrace_image img;
	int err = posixtrace_event_image(rd, &ev->info, &img);
	ck_assert_msg(err == 0, "event %d at %p: no image", (int)ev->info.posix_event_id,
	              ev->info.posix_prog_address);
	char real[PATH_MAX];
	ck_assert_ptr_nonnull(realpath(img.posixtrace_path, real));
	if (ev->info.posix_event_id == x->plugin_id) {
		ck_assert_str_eq(real, x->plugin_path);
		x->plugin_seen++;
	} else {
		ck_assert_str_eq(real, x->main.path);
		x->main_seen++;
	}
}

/* Three threads post (in bursts) while the main thread loads a plug-in,
 * posts from it and unloads it, 40 times: the threads that notice the
 * set changed describe it one at a time, and every event of the log has
 * its image, the plug-in's events the plug-in's.  Writers wait for room:
 * under load the keeper may fall behind, and no event may be lost. */
START_TEST(threads_while_plugins_come_and_go)
{
	int fd = lt_new_log_file();
	trace_id_t trid = started_waiting_with_images(fd, 0, 0);
	struct race r = {.id = pt_event_id("img.race")};
	struct race_expect x = {.main = object_of((void *)&object_of)};
	char *path = pt_helper_path("dl_plugin.so");
	ck_assert_ptr_nonnull(realpath(path, x.plugin_path));
	pthread_t th[3];
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, poster, &r), 0);
	for (uint32_t round = 0; round < 40; round++) {
		void *dl = dlopen(path, RTLD_NOW);
		ck_assert_msg(dl != NULL, "%s", dlerror());
		int (*post)(uint32_t) = (int (*)(uint32_t))dlsym(dl, "plugin_post");
		ck_assert_ptr_nonnull(post);
		ck_assert_ok(post(round));
		ck_assert_int_eq(dlclose(dl), 0);
		pt_sleep_ms(1);
	}
	atomic_store(&r.stop, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_ok(posix_trace_eventid_open("dl.event", &x.plugin_id));
	each_user_event(fd, check_race, &x);
	ck_assert_uint_eq(x.plugin_seen, 40);
	ck_assert_uint_gt(x.main_seen, 0);
}
END_TEST

/* Posters that post a burst of events each time the main thread opens a
 * window (an odd number), while the window stays open. */
struct churn {
	trace_event_id_t id;
	atomic_uint window, idle, posted;
	atomic_int stop;
};

#define CHURN_POSTERS 6
#define CHURN_ROUNDS 150
#define CHURN_DATA 900 /* 4 to a chunk of 4 KiB */
#define CHURN_BURST 40

/* The calling thread on one CPU of those it may run on (the first). */
static void on_one_cpu(void)
{
	cpu_set_t set;
	ck_assert_int_eq(pthread_getaffinity_np(pthread_self(), sizeof set, &set), 0);
	int cpu = 0;
	while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
		cpu++;
	ck_assert_int_lt(cpu, CPU_SETSIZE);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(pthread_setaffinity_np(pthread_self(), sizeof set, &set), 0);
}

static void *churn_poster(void *arg)
{
	struct churn *c = arg;
	on_one_cpu();
	unsigned char data[CHURN_DATA] = {0};
	unsigned seen = 0;
	while (!atomic_load(&c->stop)) {
		unsigned w = atomic_load(&c->window);
		if (w == seen || (w & 1) == 0) {
			sched_yield();
			continue;
		}
		seen = w;
		atomic_fetch_sub(&c->idle, 1);
		for (int i = 0; i < CHURN_BURST && atomic_load(&c->window) == w; i++) {
			posix_trace_event(c->id, data, sizeof data);
			atomic_fetch_add(&c->posted, 1);
		}
		atomic_fetch_add(&c->idle, 1);
	}
	return NULL;
}

/* The main thread loads the plug-in, posts from it and unloads it, 150
 * times, while six threads post events of which four fill a chunk of
 * 4 KiB, all on one CPU, so that one is often preempted between taking
 * its event's time and reading the process's set.  Every event names an
 * image, the plug-in's the plug-in's: the set with the plug-in is whole
 * in the lane before the plug-in's event (not cut at the end of the
 * main thread's chunk, its rest left for a next chunk that the last
 * round never starts), and a set read after an unload is not put in
 * force from a time before it (a poster's event time, taken before the
 * plug-in's event).  Found under ThreadSanitizer as "event 34 at
 * 0x7f...: no image" in threads_while_plugins_come_and_go. */
START_TEST(plugin_event_while_sets_race)
{
	int fd = lt_new_log_file();
	trace_id_t trid = started_waiting_with_images(fd, CHURN_DATA, 1 << 20);
	struct churn c = {.id = pt_event_id("img.churn")};
	atomic_store(&c.idle, CHURN_POSTERS);
	struct race_expect x = {.main = object_of((void *)&object_of)};
	char *path = pt_helper_path("dl_plugin.so");
	ck_assert_ptr_nonnull(realpath(path, x.plugin_path));
	on_one_cpu();
	pthread_t th[CHURN_POSTERS];
	for (int i = 0; i < CHURN_POSTERS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, churn_poster, &c), 0);
	for (unsigned round = 1; round <= CHURN_ROUNDS; round++) {
		atomic_store(&c.window, 2 * round - 1);
		void *dl = dlopen(path, RTLD_NOW);
		ck_assert_msg(dl != NULL, "%s", dlerror());
		int (*post)(uint32_t) = (int (*)(uint32_t))dlsym(dl, "plugin_post");
		ck_assert_ptr_nonnull(post);
		ck_assert_ok(post(round));
		ck_assert_int_eq(dlclose(dl), 0);
		atomic_store(&c.window, 2 * round);
		/* The posters out of their bursts (60 s at most). */
		for (int i = 0; atomic_load(&c.idle) < CHURN_POSTERS; i++) {
			ck_assert_int_lt(i, 600000);
			usleep(100);
		}
	}
	atomic_store(&c.stop, 1);
	for (int i = 0; i < CHURN_POSTERS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_ok(posix_trace_eventid_open("dl.event", &x.plugin_id));
	each_user_event(fd, check_race, &x);
	ck_assert_uint_eq(x.plugin_seen, CHURN_ROUNDS);
	ck_assert_uint_eq(x.main_seen, atomic_load(&c.posted));
}
END_TEST

struct exec_expect {
	pid_t child;
	trace_event_id_t before_id;
	struct object test, helper;
	size_t before, after;
};

static void check_exec(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct exec_expect *x = arg;
	ck_assert_int_eq(ev->info.posix_pid, x->child);
	if (ev->info.posix_event_id == x->before_id) {
		assert_image_is(rd, ev, &x->test);
		x->before++;
	} else {
		struct posixtrace_image img;
		ck_assert_ok(posixtrace_event_image(rd, &ev->info, &img));
		char real[PATH_MAX];
		ck_assert_ptr_nonnull(realpath(img.posixtrace_path, real));
		ck_assert_str_eq(real, x->helper.path);
		x->after++;
	}
}

/* A child traced with inheritance posts, then execs a program that posts
 * under the same pid: the events before the exec are in this program's
 * image, those after in the other's. */
START_TEST(exec_keeps_pid_changes_image)
{
	int fd = lt_new_log_file();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	struct exec_expect x = {.before_id = pt_event_id("img.before"),
	                        .test = object_of((void *)&object_of)};
	char *helper = pt_helper_path("wl_post");
	ck_assert_ptr_nonnull(realpath(helper, x.helper.path));
	x.child = pt_fork();
	if (x.child == 0) {
		int one = 1;
		posix_trace_event(x.before_id, &one, sizeof one);
		execl(helper, helper, "-c", "4", "-n", "img.after", (char *)NULL);
		_exit(127);
	}
	int status;
	ck_assert_int_eq(waitpid(x.child, &status, 0), x.child);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_uint_eq(each_user_event(fd, check_exec, &x), 5);
	ck_assert_uint_eq(x.before, 1);
	ck_assert_uint_eq(x.after, 4);
}
END_TEST

/* ---- the describer's uid: a stream handed to another user ---------------- */

#define IMG_USER "ptiso_a" /* the unprivileged users t_isolation uses too */
#define IMG_USER_B "ptiso_b"

/* The uid of user `name`, created if missing; -1 when it cannot be. */
static long img_user(const char *name, gid_t *gid)
{
	struct passwd *pw = getpwnam(name);
	if (!pw) {
		pid_t pid = pt_fork();
		if (pid == 0) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0) {
				dup2(null, 1);
				dup2(null, 2);
			}
			execl("/usr/sbin/useradd", "useradd", "--system", "--no-create-home", "--shell",
			      "/usr/sbin/nologin", name, (char *)NULL);
			_exit(127);
		}
		int status;
		ck_assert_int_eq(waitpid(pid, &status, 0), pid);
		pw = getpwnam(name);
	}
	if (!pw || pw->pw_uid == 0)
		return -1;
	*gid = pw->pw_gid;
	return (long)pw->pw_uid;
}

struct user_expect {
	pid_t pid;
	uint32_t uid;
	size_t seen;
};

static void check_user(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct user_expect *x = arg;
	struct posixtrace_image img;
	ck_assert_int_eq(ev->info.posix_pid, x->pid);
	ck_assert_ok(posixtrace_event_image(rd, &ev->info, &img));
	ck_assert_uint_eq(img.posixtrace_uid, x->uid);
	x->seen++;
}

/* The images of a log name who described them, from the owner of the
 * stream memory (docs/SECURITY.md, "Images and symbols"): root traces,
 * by its pid, a process that became an unprivileged user; root's
 * controller gives the stream memory to that user, so the images the
 * process describes say that user's uid, not root's (nor unknown).  Runs
 * as root (SKIPPED otherwise, or when the user cannot be made). */
START_TEST(handed_to_user_names_user)
{
	gid_t gid;
	long uid = geteuid() == 0 ? img_user(IMG_USER, &gid) : -1;
	if (uid < 0) {
		fprintf(stderr, "handed_to_user_names_user: SKIPPED (needs root and user %s)\n",
		        IMG_USER);
		return;
	}
	int go[2], ready[2];
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(ready), 0);
	pid_t child = pt_fork();
	if (child == 0) {
		char c;
		close(go[1]);
		if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid((uid_t)uid) != 0 ||
		    write(ready[1], "r", 1) != 1)
			_exit(2);
		if (read(go[0], &c, 1) != 1)
			_exit(3);
		trace_event_id_t id;
		if (posix_trace_eventid_open("img.user", &id) != 0)
			_exit(4);
		for (uint32_t i = 0; i < 100; i++)
			posix_trace_event(id, &i, sizeof i);
		_exit(0);
	}
	close(go[0]);
	char c;
	ck_assert_int_eq(read(ready[0], &c, 1), 1); /* the child is the user's now */
	int fd = lt_new_log_file();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_create_withlog(child, &attr, fd, &trid));
	posix_trace_attr_destroy(&attr);
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	close(go[1]);
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the traced child failed (%d)",
	              status);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct user_expect x = {.pid = child, .uid = (uint32_t)uid};
	ck_assert_uint_eq(each_user_event(fd, check_user, &x), 100);
	ck_assert_uint_eq(x.seen, 100);
}
END_TEST

/* The stream memory of this controller owned by uid (its descriptor found
 * in /proc/self/fd), given to uid2:gid2. */
static void chown_stream(uid_t uid, uid_t uid2, gid_t gid2)
{
	DIR *d = opendir("/proc/self/fd");
	ck_assert_ptr_nonnull(d);
	int done = 0;
	struct dirent *e;
	while (!done && (e = readdir(d))) {
		char link[300], target[256];
		snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(link, target, sizeof target - 1);
		struct stat st;
		int fd = atoi(e->d_name);
		if (n <= 0 || fstat(fd, &st) != 0)
			continue;
		target[n] = '\0';
		if (strstr(target, "memfd:posixtrace-stream") && st.st_uid == uid) {
			ck_assert_int_eq(fchown(fd, uid2, gid2), 0);
			done = 1;
		}
	}
	closedir(d);
	ck_assert_msg(done, "no stream memory of uid %u here", (unsigned)uid);
}

/* A child of user (uid, gid), a byte on done once it is (so that root's
 * controller finds it that user's), then for each byte it reads on go: 5
 * events of "img.phase1", then after a dlopen of the next of plugins (a
 * new set described) 5 of "img.phase2", and so on; a byte on done after
 * each phase. */
static pid_t phased_child(long uid, gid_t gid, int go, int done, char *const *plugins, int nplugins)
{
	pid_t child = pt_fork();
	if (child != 0)
		return child;
	if (setgroups(0, NULL) != 0 || setgid(gid) != 0 || setuid((uid_t)uid) != 0 ||
	    write(done, "r", 1) != 1)
		_exit(2);
	for (int phase = 0; phase <= nplugins; phase++) {
		char c, name[32];
		if (read(go, &c, 1) != 1)
			_exit(3);
		if (phase > 0 && !dlopen(plugins[phase - 1], RTLD_NOW))
			_exit(4);
		snprintf(name, sizeof name, "img.phase%d", phase + 1);
		trace_event_id_t id;
		if (posix_trace_eventid_open(name, &id) != 0)
			_exit(5);
		for (uint32_t i = 0; i < 5; i++)
			posix_trace_event(id, &i, sizeof i);
		if (write(done, "d", 1) != 1)
			_exit(6);
	}
	_exit(0);
}

/* Until the flush begun is over (posix_trace_flush only begins it), 20 s
 * at most. */
static void wait_flushed(trace_id_t trid)
{
	struct posix_trace_status_info st;
	for (int i = 0; i < 20000; i++) {
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			return;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
	ck_abort_msg("the flush did not end in 20 s");
}

struct phase_expect {
	trace_id_t rd;
	uint32_t uid[3];
	size_t seen[3];
};

static void check_phase(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct phase_expect *x = arg;
	char name[TRACE_EVENT_NAME_MAX];
	ck_assert_ok(posix_trace_eventid_get_name(rd, ev->info.posix_event_id, name));
	int phase = name[strlen(name) - 1] - '1';
	ck_assert(phase >= 0 && phase < 3);
	struct posixtrace_image img;
	ck_assert_ok(posixtrace_event_image(rd, &ev->info, &img));
	ck_assert_msg(img.posixtrace_uid == x->uid[phase], "phase %d: uid %u, not %u", phase + 1,
	              (unsigned)img.posixtrace_uid, (unsigned)x->uid[phase]);
	x->seen[phase]++;
}

/* Who described an image is the first user other than root that owned
 * the stream memory, whoever owns it later, and unknown once a second one
 * has (docs/LOG-FORMAT.md, "Who described an image"): root traces a
 * process of user A (the stream becomes A's); after the images of its
 * first phase are in the log, root gives the memory to root, then to user
 * B, and the process describes a new set (a dlopen) in each phase: the
 * first two phases' images say A, the third's unknown.  Runs as root. */
START_TEST(owner_sticky_then_unknown)
{
	gid_t gid;
	long uid = geteuid() == 0 ? img_user(IMG_USER, &gid) : -1;
	gid_t gid_b;
	long uid_b = uid >= 0 ? img_user(IMG_USER_B, &gid_b) : -1;
	if (uid < 0 || uid_b < 0 || uid == uid_b) {
		fprintf(stderr, "owner_sticky_then_unknown: SKIPPED (needs root and two users)\n");
		return;
	}
	int go[2], done[2];
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	char *plugins[] = {pt_helper_path("dl_filler.so"), pt_helper_path("dl_filler8.so")};
	pid_t child = phased_child(uid, gid, go[0], done[1], plugins, 2);
	char c;
	ck_assert_int_eq(read(done[0], &c, 1), 1); /* A's now */
	int fd = lt_new_log_file();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_create_withlog(child, &attr, fd, &trid));
	posix_trace_attr_destroy(&attr);
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	for (int phase = 0; phase < 3; phase++) {
		if (phase == 1)
			chown_stream((uid_t)uid, 0, 0);
		else if (phase == 2)
			chown_stream(0, (uid_t)uid_b, gid_b);
		ck_assert_int_eq(write(go[1], "g", 1), 1);
		ck_assert_int_eq(read(done[0], &c, 1), 1);
		ck_assert_ok(posix_trace_flush(trid)); /* the keeper takes the phase's images */
		wait_flushed(trid);
	}
	int status;
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the traced child failed (%d)",
	              status);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct phase_expect x = {.uid = {(uint32_t)uid, (uint32_t)uid, POSIXTRACE_UID_UNKNOWN}};
	ck_assert_uint_eq(each_user_event(fd, check_phase, &x), 15);
	ck_assert_uint_eq(x.seen[0], 5);
	ck_assert_uint_eq(x.seen[1], 5);
	ck_assert_uint_eq(x.seen[2], 5);
}
END_TEST


/* ---- images shared across a log: IMAGES_COMPACT ------------------------- */

#define MANY_CHILDREN 2000
/* Bytes of log a process whose files were described already may cost for
 * its images (its SET entry, and its share of the blocks' headers); a set
 * that a block's end cuts in two pays a second SET entry's fields, and the
 * first SET entry of a block, whose pid, time and key are not differences
 * from the entry before, some 10 bytes more. */
#define PER_PROCESS_BOUND 64
#define SET_CONTINUED_BOUND 24
#define SET_FIRST_BOUND 16

/* What a log's IMAGES_COMPACT blocks hold (the test's own walk of a
 * linear log): per set of a process (pid and set key), the bytes of its
 * SET entries and the images they place of its count; the bytes of the
 * blocks, of their FILE entries. */
struct compact_usage {
	uint64_t block_bytes, file_bytes, set_bytes, shared_blocks;
	uint32_t files, nsets;
	int32_t pid[MANY_CHILDREN + 64];
	uint64_t set[MANY_CHILDREN + 64];
	uint32_t bytes[MANY_CHILDREN + 64], entries[MANY_CHILDREN + 64], firsts[MANY_CHILDREN + 64];
	uint64_t placed[MANY_CHILDREN + 64], count[MANY_CHILDREN + 64];
};

static uint64_t get_varint(const unsigned char *p, uint32_t len, uint32_t *off)
{
	uint64_t v;
	ck_assert_int_eq(pt_log_varint_get(p, len, off, &v), 0);
	return v;
}

static uint32_t usage_slot(struct compact_usage *u, int32_t pid, uint64_t set)
{
	for (uint32_t i = 0; i < u->nsets; i++)
		if (u->pid[i] == pid && u->set[i] == set)
			return i;
	ck_assert_uint_lt(u->nsets, sizeof u->pid / sizeof u->pid[0]);
	u->pid[u->nsets] = pid;
	u->set[u->nsets] = set;
	return u->nsets++;
}

static void compact_payload(struct compact_usage *u, const unsigned char *p, uint32_t len)
{
	int32_t pid = 0;
	uint64_t set = 0;
	int first_set = 1;
	for (uint32_t off = PT_LOG_COMPACT_PREFIX; off < len;) {
		uint32_t at = off + 1;
		uint64_t n = get_varint(p, len, &at);
		uint32_t entry = at + (uint32_t)n - off;
		if (p[off] == PT_LOG_COMPACT_FILE) {
			u->file_bytes += entry;
			u->files++;
		} else if (p[off] == PT_LOG_COMPACT_SET) {
			uint32_t b = at + 1;
			pid += (int32_t)pt_log_unzigzag(get_varint(p, len, &b));
			get_varint(p, len, &b); /* uid */
			get_varint(p, len, &b); /* time */
			set += (uint64_t)pt_log_unzigzag(get_varint(p, len, &b));
			uint64_t count = get_varint(p, len, &b);
			get_varint(p, len, &b); /* first */
			uint32_t i = usage_slot(u, pid, set);
			u->bytes[i] += entry;
			u->entries[i]++;
			u->firsts[i] += first_set;
			first_set = 0;
			u->placed[i] += get_varint(p, len, &b);
			u->count[i] = count;
			u->set_bytes += entry;
		}
		off = at + (uint32_t)n;
	}
}

static void compact_usage_of(int fd, struct compact_usage *u)
{
	size_t len;
	const unsigned char *img = lt_file_bytes(fd, &len);
	struct pt_log_header h;
	memcpy(&h, img, sizeof h);
	ck_assert_uint_eq(h.layout, PT_LOG_LINEAR);
	memset(u, 0, sizeof *u);
	for (uint64_t off = h.data_off; off + PT_LOG_BLOCK_HDR <= len;) {
		struct pt_log_block b;
		memcpy(&b, img + off, sizeof b);
		ck_assert_uint_eq(b.magic, PT_LOG_BLOCK_MAGIC);
		uint32_t size = pt_log_pad8(PT_LOG_BLOCK_HDR + b.payload_len);
		if (b.type == PT_LOG_IMAGES_COMPACT) {
			u->block_bytes += size;
			compact_payload(u, img + off + PT_LOG_BLOCK_HDR, b.payload_len);
		}
		u->shared_blocks += b.type == PT_LOG_IMAGES_SHARED;
		off += size;
	}
}

/* A stream of this process and its children, logging into fd with the
 * log policy and size given, asked for images, started. */
static trace_id_t inherited_with_images(int fd, int log_policy, size_t log_size)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	if (log_policy)
		ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, log_policy));
	if (log_size)
		ck_assert_ok(posix_trace_attr_setlogsize(&attr, log_size));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

/* The kinds of one-event children: this program, this program posting
 * from a dlopen'd plug-in, another program (exec'd). */
enum { KIND_SAME, KIND_PLUGIN, KIND_EXEC };

static int kind_of(uint32_t i)
{
	return i % 100 == 1 ? KIND_PLUGIN : i % 100 == 2 ? KIND_EXEC : KIND_SAME;
}

/* Every other child posts from the plug-in, whose image is the last of
 * its set. */
static int kind_of_half_plugin(uint32_t i)
{
	return i % 2 ? KIND_PLUGIN : KIND_SAME;
}

static void one_event_child(int kind, uint32_t i, trace_event_id_t id, const char *plugin,
                            char *helper)
{
	if (kind == KIND_PLUGIN) {
		void *dl = dlopen(plugin, RTLD_NOW);
		int (*post)(uint32_t) = dl ? (int (*)(uint32_t))dlsym(dl, "plugin_post") : NULL;
		_exit(post && post(i) == 0 ? 0 : 1);
	}
	if (kind == KIND_EXEC) {
		execl(helper, helper, "-c", "1", "-n", "img.exec", (char *)NULL);
		_exit(127);
	}
	posix_trace_event(id, &i, sizeof i);
	_exit(0);
}

/* n one-event children of the kinds kind(i), one after the other; the
 * log flushed every flush_every of them (0: never), so that their images
 * span drains. */
static void run_children_of(trace_id_t trid, uint32_t n, uint32_t flush_every,
                            int (*kind)(uint32_t))
{
	trace_event_id_t id = pt_event_id("img.many");
	char *plugin = pt_helper_path("dl_plugin.so"), *helper = pt_helper_path("wl_post");
	for (uint32_t i = 0; i < n; i++) {
		pid_t child = pt_fork();
		if (child == 0)
			one_event_child(kind(i), i, id, plugin, helper);
		int status;
		ck_assert_int_eq(waitpid(child, &status, 0), child);
		ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %u: %d", i, status);
		if (flush_every && i % flush_every == flush_every - 1)
			ck_assert_ok(posix_trace_flush(trid));
	}
}

static void run_children(trace_id_t trid, uint32_t n, uint32_t flush_every)
{
	run_children_of(trid, n, flush_every, kind_of);
}

struct many_expect {
	trace_event_id_t same_id, plugin_id, exec_id;
	struct object main;
	char plugin_path[PATH_MAX], helper_path[PATH_MAX];
	int every; /* 1: every event has its image; 0: those with one are checked */
	size_t checked[3], with_image;
};

static void check_many(trace_id_t rd, const struct lt_rec_buf *ev, void *arg)
{
	struct many_expect *x = arg;
	struct posixtrace_image img;
	int err = posixtrace_event_image(rd, &ev->info, &img);
	if (x->every)
		ck_assert_msg(err == 0, "process %d: no image", (int)ev->info.posix_pid);
	if (err)
		return;
	x->with_image++;
	char real[PATH_MAX];
	ck_assert_ptr_nonnull(realpath(img.posixtrace_path, real));
	int kind = ev->info.posix_event_id == x->plugin_id ? KIND_PLUGIN
	           : ev->info.posix_event_id == x->exec_id ? KIND_EXEC
	                                                   : KIND_SAME;
	ck_assert_str_eq(real, kind == KIND_PLUGIN ? x->plugin_path
	                       : kind == KIND_EXEC ? x->helper_path
	                                           : x->main.path);
	if (kind == KIND_SAME)
		assert_image_is(rd, ev, &x->main);
	x->checked[kind]++;
}

static void many_expect_init(struct many_expect *x)
{
	x->same_id = pt_event_id("img.many");
	ck_assert_ok(posix_trace_eventid_open("dl.event", &x->plugin_id));
	x->exec_id = pt_event_id("img.exec");
	x->main = object_of((void *)&object_of);
	ck_assert_ptr_nonnull(realpath(pt_helper_path("dl_plugin.so"), x->plugin_path));
	ck_assert_ptr_nonnull(realpath(pt_helper_path("wl_post"), x->helper_path));
}

/* 2,000 one-event children (most of them this program, some posting from
 * a dlopen'd plug-in, some another program): the log describes each file
 * once (a FILE entry per distinct file, no IMAGES_SHARED block), every
 * process's whole set in one SET entry, and each process's images cost at
 * most 64 bytes of log, its SET entries and its share of the
 * IMAGES_COMPACT blocks' headers counted; every event resolves to the
 * right file of each kind.  A child continues the chunk the one before
 * left (its lane was given back), and some 4 % of them found there less
 * room than their set takes. */
START_TEST(many_processes_cost_little)
{
	int fd = lt_new_log_file();
	trace_id_t trid = inherited_with_images(fd, POSIX_TRACE_APPEND, 0);
	run_children(trid, MANY_CHILDREN, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	static struct compact_usage u;
	compact_usage_of(fd, &u);
	uint32_t whole = 0;
	for (uint32_t i = 0; i < u.nsets; i++)
		whole += u.placed[i] == u.count[i];
	fprintf(stderr, "many_processes_cost_little: %u sets described, %u whole, %llu bytes of "
	        "IMAGES_COMPACT blocks, %u FILE entries (%llu bytes), SET entries %llu bytes\n",
	        u.nsets, whole, (unsigned long long)u.block_bytes, u.files,
	        (unsigned long long)u.file_bytes, (unsigned long long)u.set_bytes);
	ck_assert_uint_eq(u.shared_blocks, 0);
	/* One set per process (a pid the system gave twice is two). */
	ck_assert_uint_eq(u.nsets, MANY_CHILDREN);
	ck_assert_uint_eq(whole, MANY_CHILDREN);
	ck_assert_uint_lt(u.files, 32); /* libraries, this program, the plug-in, the helper */
	for (uint32_t i = 0; i < u.nsets; i++)
		ck_assert_uint_le(u.bytes[i], PER_PROCESS_BOUND +
		                                  SET_CONTINUED_BOUND * (u.entries[i] - 1) +
		                                  SET_FIRST_BOUND * u.firsts[i]);
	ck_assert_uint_le(u.block_bytes - u.file_bytes, (uint64_t)PER_PROCESS_BOUND * u.nsets);
	struct many_expect x = {.every = 1};
	many_expect_init(&x);
	ck_assert_uint_eq(each_user_event(fd, check_many, &x), MANY_CHILDREN);
	ck_assert_uint_eq(x.with_image, MANY_CHILDREN);
	ck_assert_uint_gt(x.checked[KIND_SAME], 1000);
	ck_assert_uint_gt(x.checked[KIND_PLUGIN], 0);
	ck_assert_uint_gt(x.checked[KIND_EXEC], 0);
	ck_assert_uint_eq(last_info.posixtrace_images_dropped, 0);
}
END_TEST

/* 300 one-event children (this program, and every other one posting from
 * a dlopen'd plug-in, the last image of its set) recording into a stream
 * of 4 KiB chunks, where a set of some 800 bytes does not fit in the room
 * the child before left in its lane's chunk one time in five: every
 * child's whole set is in the log, and its event resolves. */
START_TEST(small_chunks_every_process_described)
{
	int fd = lt_new_log_file();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, 16));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, 256 << 10));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	run_children_of(trid, 300, 0, kind_of_half_plugin);
	ck_assert_ok(posix_trace_shutdown(trid));
	static struct compact_usage u;
	compact_usage_of(fd, &u);
	uint32_t whole = 0;
	for (uint32_t i = 0; i < u.nsets; i++)
		whole += u.placed[i] == u.count[i];
	struct many_expect x = {0};
	many_expect_init(&x);
	size_t n = each_user_event(fd, check_many, &x);
	fprintf(stderr, "small_chunks_every_process_described: %u sets, %u whole, %zu of %zu "
	        "events with their image\n", u.nsets, whole, x.with_image, n);
	ck_assert_uint_eq(n, 300);
	ck_assert_uint_eq(u.nsets, 300);
	ck_assert_uint_eq(whole, 300);
	ck_assert_uint_eq(x.with_image, 300);
	ck_assert_uint_eq(last_info.posixtrace_images_dropped, 0);
}
END_TEST

/* A process posts across 300 drains into a LOOP log of 16 KiB (a ring
 * that goes round many times), from a stream that describes its set once
 * (POSIX_TRACE_FLUSH: no new set at each chunk): the block that held its
 * set leaves the ring long before its last events, and the keeper writes
 * the set again before the ring overwrites it, so every event the log
 * holds still has its image. */
START_TEST(ring_log_long_lived_process_resolves)
{
	int fd = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(fd, POSIX_TRACE_LOOP, 16 << 10, POSIX_TRACE_FLUSH, 0, &trid));
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	trace_event_id_t id = pt_event_id("img.long");
	unsigned char data[200] = {0};
	for (uint32_t i = 0; i < 300; i++) {
		for (int k = 0; k < 5; k++)
			posix_trace_event(id, data, sizeof data);
		ck_assert_ok(posix_trace_flush(trid));
		wait_flushed(trid);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	struct pt_log_header h;
	ck_assert_int_eq(pread(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	ck_assert_uint_gt(h.blocks_written, 4 * h.ring_slots); /* went round */
	struct many_expect x = {.every = 1};
	many_expect_init(&x);
	size_t n = each_user_event(fd, check_many, &x);
	fprintf(stderr, "ring_log_long_lived_process_resolves: %zu events, %zu with their image\n", n,
	        x.with_image);
	ck_assert_uint_gt(n, 0);
	ck_assert_uint_eq(x.with_image, n);
	ck_assert_uint_eq(last_info.posixtrace_images_dropped, 0);
}
END_TEST

/* A LOOP log (a ring) goes round several times while one-event children
 * come and go, a flush every 10: the blocks that first described the
 * files are overwritten, and the writer describes the files again before
 * that, so no image the log holds names a file the log does not describe
 * (none dropped), and the events of the newest children resolve. */
START_TEST(ring_log_wrapped_still_resolves)
{
	int fd = lt_new_log_file();
	trace_id_t trid = inherited_with_images(fd, POSIX_TRACE_LOOP, 16 << 10);
	run_children(trid, 600, 10);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct pt_log_header h;
	ck_assert_int_eq(pread(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	ck_assert_uint_eq(h.layout, PT_LOG_RING);
	ck_assert_uint_gt(h.blocks_written, 2 * h.ring_slots); /* went round */
	struct many_expect x = {0};
	many_expect_init(&x);
	size_t n = each_user_event(fd, check_many, &x);
	ck_assert_uint_lt(n, 600);
	ck_assert_uint_eq(last_info.posixtrace_images_dropped, 0);
	ck_assert_uint_gt(last_info.posixtrace_images, 0);
	fprintf(stderr, "ring_log_wrapped_still_resolves: %zu events, %zu with their image\n", n,
	        x.with_image);
	ck_assert_uint_gt(x.with_image, n / 2);
}
END_TEST

/* An UNTIL_FULL log stops while children still come: the images it kept
 * all name files it describes, and the events it kept resolve. */
START_TEST(until_full_log_resolves)
{
	int fd = lt_new_log_file();
	trace_id_t trid = inherited_with_images(fd, POSIX_TRACE_UNTIL_FULL, 8 << 10);
	run_children(trid, 400, 10);
	ck_assert_ok(posix_trace_shutdown(trid));
	struct many_expect x = {0};
	many_expect_init(&x);
	size_t n = each_user_event(fd, check_many, &x);
	ck_assert_uint_lt(n, 400);
	ck_assert_uint_eq(last_info.posixtrace_images_dropped, 0);
	ck_assert_uint_gt(x.with_image, n / 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("images");
	TCase *tc = pt_tcase(s, "images");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, program_and_plugin);
	tcase_add_test(tc, not_asked_none);
	tcase_add_test(tc, exec_keeps_pid_changes_image);
	tcase_add_test(tc, loop_stream_keeps_images);
	tcase_add_test(tc, threads_while_plugins_come_and_go);
	tcase_add_test(tc, plugin_event_while_sets_race);
	tcase_add_test(tc, handed_to_user_names_user);
	tcase_add_test(tc, owner_sticky_then_unknown);
	tcase_add_test(tc, many_processes_cost_little);
	tcase_add_test(tc, small_chunks_every_process_described);
	tcase_add_test(tc, ring_log_wrapped_still_resolves);
	tcase_add_test(tc, ring_log_long_lived_process_resolves);
	tcase_add_test(tc, until_full_log_resolves);
	return pt_run(s);
}
