/* SPDX-License-Identifier: MIT */
/*
 * t_rotate: a log rotated into numbered files (posixtrace_create_withlogdir).
 * What it checks:
 *  - every file opens alone with posix_trace_open, names its event types,
 *    and ends closed; the events of each file follow those of the one
 *    before it; with every file kept, the files hold every event posted or
 *    count it lost (events + lost = posted), over a matrix of stream
 *    policies (LOOP, UNTIL_FULL, FLUSH) x kept files (all, 2);
 *  - with a count, only the newest files are left, and they hold the
 *    newest events; no descriptor of the controller holds a removed file
 *    (its disk space is given back while the stream runs);
 *  - images are repeated: an event of a file in the middle finds its image
 *    (posixtrace_event_image) in that file alone;
 *  - the ids of a writer in a pid namespace of its own (PIDS) are repeated:
 *    each file that holds its events, read alone, gives its own ids
 *    (posixtrace_event_ext) beside its ids here, not only the first file
 *    it wrote in (needs root: unshare(CLONE_NEWPID); skipped otherwise);
 *  - a keeper killed (SIGKILL) is followed by one that reopens the file it
 *    wrote by number and identity: every file still reads, and nothing is
 *    missing that is not counted lost;
 *  - a controller and its keeper killed together leave files that read
 *    alone, the last one up to its last complete block;
 *  - no numbered file is ever seen without its header and name table: the
 *    keeper held (fanotify permission event) at the first open it makes in
 *    the directory, the new file, sees every numbered file whole (a kill
 *    there would leave the set so);
 *  - hostile directories: a name already taken (a symbolic link, a file of
 *    another user) is refused (never opened nor followed), the error reported by
 *    posix_trace_shutdown and nothing written through it; a directory
 *    renamed and replaced by a symbolic link while the stream runs gets
 *    nothing (the keeper writes through the descriptor it was given);
 *  - by age (posixtrace_file_seconds): a FLUSH stream that fills slowly
 *    has its events in closed files while it runs (an automatic flush,
 *    then a new file); no file ends without events; LOOP and UNTIL_FULL
 *    streams end by age a file their flushes wrote into;
 *  - the arguments refused: a contradictory log policy, a size below 64
 *    KiB, a mode beyond 0666, a descriptor that is not a directory.
 * Every test runs under RLIMIT_FSIZE (FILE_CAP) and the harness's timeout.
 */
#include <dirent.h>
#include <poll.h>
#include <sched.h>
#include <sys/fanotify.h>
#include <sys/resource.h>
#include <posixtrace.h>
#include "logtest.h"

#define FILE_SIZE (64u << 10)
#define FILE_CAP (16u << 20)    /* RLIMIT_FSIZE of the test and its keepers */
#define STREAM_SIZE (1u << 20)  /* holds a burst: nothing lost in these tests */
#define PER_BURST 400u
#define BURSTS 30u
#define MAX_FILES 256u

static char dir[64];
static int dir_fd = -1;

static void setup(void)
{
	struct rlimit rl = {FILE_CAP, FILE_CAP};
	ck_assert_int_eq(setrlimit(RLIMIT_FSIZE, &rl), 0);
	signal(SIGXFSZ, SIG_IGN);
	snprintf(dir, sizeof dir, "/tmp/pt-rotate.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	dir_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(dir_fd, 0);
	pt_children_setup();
}

static void teardown(void)
{
	pt_kill_children();
	if (dir_fd >= 0)
		close(dir_fd);
	pt_remove_tree(dir);
}

static int is_log_name(const struct dirent *e)
{
	return strlen(e->d_name) == 14 && strspn(e->d_name, "0123456789") == 8 &&
	       !strcmp(e->d_name + 8, ".ptlog");
}

/* The files' numbers in order: how many. */
static unsigned list_files(unsigned *numbers)
{
	struct dirent **v;
	int n = scandir(dir, &v, is_log_name, alphasort);
	ck_assert_int_ge(n, 0);
	ck_assert_int_le(n, MAX_FILES);
	for (int i = 0; i < n; i++) {
		numbers[i] = (unsigned)atoi(v[i]->d_name);
		free(v[i]);
	}
	free(v);
	return (unsigned)n;
}

static int open_file(unsigned number)
{
	char name[32];
	snprintf(name, sizeof name, "%08u.ptlog", number);
	int fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	return fd;
}

static off_t file_size(unsigned number)
{
	struct stat st;
	char name[32];
	snprintf(name, sizeof name, "%08u.ptlog", number);
	ck_assert_int_eq(fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
	return st.st_size;
}

struct file_read {
	uint64_t events;        /* of the test's event type */
	uint32_t first, last;   /* their sequence numbers */
	uint64_t lost;          /* the stream's, as the file's status says */
	uint64_t with_image;    /* events whose image this file gives */
	int closed, damaged;
};

/* One file, read alone: its events of type "rot:ev" in order (each
 * carries its sequence number). */
static struct file_read read_file(unsigned number)
{
	struct file_read r = {0};
	int fd = open_file(number);
	trace_id_t trid;
	ck_assert_msg(posix_trace_open(fd, &trid) == 0, "file %u does not open alone", number);
	struct posix_trace_event_info ev;
	char data[256], name[TRACE_EVENT_NAME_MAX];
	size_t len;
	int unavailable;
	trace_event_id_t mine = 0;
	int have_mine = 0;
	for (;;) {
		ck_assert_ok(posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavailable));
		if (unavailable)
			break;
		if (!have_mine && posix_trace_eventid_get_name(trid, ev.posix_event_id, name) == 0 &&
		    !strcmp(name, "rot:ev")) {
			mine = ev.posix_event_id;
			have_mine = 1;
		}
		if (!have_mine || !posix_trace_eventid_equal(trid, ev.posix_event_id, mine))
			continue;
		uint32_t seq;
		ck_assert_uint_eq(len, sizeof seq);
		memcpy(&seq, data, sizeof seq);
		if (r.events)
			ck_assert_msg(seq > r.last, "file %u: event %u after %u", number, seq, r.last);
		else
			r.first = seq;
		r.last = seq;
		r.events++;
		struct posixtrace_image img;
		if (posixtrace_event_image(trid, &ev, &img) == 0)
			r.with_image++;
	}
	struct posixtrace_log_info li;
	ck_assert_ok(posixtrace_log_info(trid, &li));
	r.closed = li.posixtrace_closed;
	r.damaged = li.posixtrace_damaged_blocks != 0;
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	r.lost = st.posixtrace_lost_events;
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
	return r;
}

/* A stream of STREAM_SIZE and the policy, logged as d says (in dir_fd). */
static trace_id_t create_in_dir(int stream_policy, struct posixtrace_logdir d)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, stream_policy));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, STREAM_SIZE));
	d.posixtrace_dirfd = dir_fd;
	ck_assert_ok(posixtrace_create_withlogdir(0, &attr, &d, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return trid;
}

static trace_id_t create_rotated(int stream_policy, uint32_t max_files)
{
	return create_in_dir(stream_policy, (struct posixtrace_logdir){
	                                        .posixtrace_mode = 0640,
	                                        .posixtrace_file_size = FILE_SIZE,
	                                        .posixtrace_max_files = max_files});
}

/* A flush carried out (flushes in a row would be one drain). */
static void wait_flushed(trace_id_t trid)
{
	struct posix_trace_status_info st;
	for (int waited = 0;; waited++) {
		ck_assert_ok(posix_trace_get_status(trid, &st));
		if (st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			return;
		ck_assert_msg(waited < 10000, "a flush not done in 10 s");
		pt_sleep_ms(1);
	}
}

/* Bursts of events numbered from *seq on, each burst flushed: a drain,
 * and a new file once one passes FILE_SIZE. */
static void post_bursts(trace_id_t trid, unsigned bursts, uint32_t *seq)
{
	trace_event_id_t id;
	ck_assert_ok(posix_trace_eventid_open("rot:ev", &id));
	for (unsigned b = 0; b < bursts; b++) {
		for (unsigned i = 0; i < PER_BURST; i++, ++*seq)
			posix_trace_event(id, seq, sizeof *seq);
		ck_assert_ok(posix_trace_flush(trid));
		wait_flushed(trid);
	}
}

/* Every file reads alone and closed, each after the one before; the sum
 * of what they hold.  lost: the last file's count (the stream's). */
static uint64_t read_all(const unsigned *numbers, unsigned n, uint64_t *lost)
{
	uint64_t events = 0;
	uint32_t last = 0;
	for (unsigned i = 0; i < n; i++) {
		if (i)
			ck_assert_uint_eq(numbers[i], numbers[i - 1] + 1);
		struct file_read r = read_file(numbers[i]);
		ck_assert_msg(r.closed && !r.damaged, "file %u: closed %d, damaged %d", numbers[i],
		              r.closed, r.damaged);
		if (r.events && events)
			ck_assert_msg(r.first > last, "file %u begins at %u, before %u", numbers[i],
			              r.first, last);
		if (r.events)
			last = r.last;
		events += r.events;
		*lost = r.lost;
	}
	return events;
}

/* Descriptors of this process (the controller) open on a removed file:
 * the disk space a count should have given back. */
static int removed_files_held(void)
{
	DIR *d = opendir("/proc/self/fd");
	int held = 0;
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d));) {
		char path[300], target[PATH_MAX];
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, target, sizeof target - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		held += strstr(target, ".ptlog (deleted)") != NULL;
	}
	closedir(d);
	return held;
}

static void rotate_cell(int stream_policy, uint32_t max_files)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	uint64_t lost = 0;
	trace_id_t trid = create_rotated(stream_policy, max_files);
	ck_assert_ok(posix_trace_start(trid));
	post_bursts(trid, BURSTS, &seq);
	ck_assert_int_eq(removed_files_held(), 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 2);
	uint64_t events = read_all(numbers, n, &lost);
	if (max_files == 0) {
		ck_assert_uint_eq(numbers[0], 1);
		ck_assert_uint_ge(n, 4);
		ck_assert_msg(events + lost == seq, "%llu events + %llu lost, %u posted",
		              (unsigned long long)events, (unsigned long long)lost, seq);
	} else {
		/* The oldest removed: the newest max_files are left, the last
		 * event posted in the last one. */
		ck_assert_uint_eq(n, max_files);
		ck_assert_uint_gt(numbers[0], 1);
		struct file_read r = read_file(numbers[n - 1]);
		if (r.events == 0)
			r = read_file(numbers[n - 2]);
		ck_assert_uint_eq(r.last, seq - 1);
		ck_assert_uint_lt(events, seq);
	}
	/* Each file within the size plus one drain (a burst, the header). */
	for (unsigned i = 0; i < n; i++)
		ck_assert_int_le(file_size(numbers[i]), FILE_SIZE + STREAM_SIZE + (128 << 10));
}

START_TEST(flush_stream_every_file_kept)
{
	rotate_cell(POSIX_TRACE_FLUSH, 0);
}
END_TEST

START_TEST(flush_stream_two_files_kept)
{
	rotate_cell(POSIX_TRACE_FLUSH, 2);
}
END_TEST

START_TEST(loop_stream_every_file_kept)
{
	rotate_cell(POSIX_TRACE_LOOP, 0);
}
END_TEST

START_TEST(loop_stream_two_files_kept)
{
	rotate_cell(POSIX_TRACE_LOOP, 2);
}
END_TEST

START_TEST(until_full_stream_every_file_kept)
{
	rotate_cell(POSIX_TRACE_UNTIL_FULL, 0);
}
END_TEST

START_TEST(until_full_stream_two_files_kept)
{
	rotate_cell(POSIX_TRACE_UNTIL_FULL, 2);
}
END_TEST

/* A rotation by age (posixtrace_file_seconds) as well as by size: a file
 * far larger than what is posted, 1 s. */
static trace_id_t create_aged(int stream_policy)
{
	return create_in_dir(stream_policy, (struct posixtrace_logdir){
	                                        .posixtrace_mode = 0600,
	                                        .posixtrace_file_size = 64u << 20,
	                                        .posixtrace_file_seconds = 1});
}

/* Waits (10 s at most) until file number `number` exists and the file
 * before it reads closed: that file ended.  Its read. */
static struct file_read wait_file_ended(unsigned number)
{
	char name[32];
	snprintf(name, sizeof name, "%08u.ptlog", number);
	for (int waited = 0; faccessat(dir_fd, name, F_OK, AT_SYMLINK_NOFOLLOW) != 0; waited++) {
		ck_assert_msg(waited < 1000, "file %u not begun in 10 s", number);
		pt_sleep_ms(10);
	}
	struct file_read r = read_file(number - 1);
	ck_assert_msg(r.closed && !r.damaged, "file %u: closed %d, damaged %d", number - 1,
	              r.closed, r.damaged);
	return r;
}

/* One event (its number seq) posted. */
static void post_one(uint32_t *seq)
{
	trace_event_id_t id;
	ck_assert_ok(posix_trace_eventid_open("rot:ev", &id));
	posix_trace_event(id, seq, sizeof *seq);
	++*seq;
}

/* A FLUSH stream that fills slowly (an event every 50 ms, never a
 * quarter of the stream, never flushed by the test) still has its events
 * in closed files while it runs: a file ends by age, after an automatic
 * flush, and each ended file reads alone, closed, with the events posted
 * before it ended; at the end, every event posted is in one file, none
 * lost.  Before posixtrace_file_seconds the events stayed in the stream
 * and the first file until shutdown. */
START_TEST(slow_writer_files_end_by_age)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	uint64_t lost = 0;
	trace_id_t trid = create_aged(POSIX_TRACE_FLUSH);
	ck_assert_ok(posix_trace_start(trid));
	for (unsigned file = 2; file <= 4; file++) {
		unsigned before = list_files(numbers);
		for (int i = 0; i < 200 && list_files(numbers) == before; i++) {
			post_one(&seq);
			pt_sleep_ms(50);
		}
		struct file_read r = wait_file_ended(file);
		ck_assert_msg(r.events > 0, "file %u ended with no event", file - 1);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 4);
	uint64_t events = read_all(numbers, n, &lost);
	ck_assert_msg(events == seq && lost == 0, "%llu events, %llu lost, %u posted",
	              (unsigned long long)events, (unsigned long long)lost, seq);
}
END_TEST

/* Age alone makes no file: a stream with nothing posted keeps its one
 * file through 2.5 periods; one event then ends it (within 10 s), and the
 * next file, without events, stays through 2.5 periods more. */
START_TEST(no_file_by_age_without_events)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	uint64_t lost = 0;
	trace_id_t trid = create_aged(POSIX_TRACE_FLUSH);
	ck_assert_ok(posix_trace_start(trid));
	pt_sleep_ms(2500);
	ck_assert_uint_eq(list_files(numbers), 1);
	post_one(&seq);
	struct file_read r = wait_file_ended(2);
	ck_assert_uint_eq(r.events, 1);
	pt_sleep_ms(2500);
	ck_assert_uint_eq(list_files(numbers), 2);
	ck_assert_ok(posix_trace_shutdown(trid));
	unsigned n = list_files(numbers);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(read_all(numbers, n, &lost), 1);
	ck_assert_uint_eq(lost, 0);
}
END_TEST

/* The other stream policies are written to the log only by a flush (and
 * at the end): age ends a file that holds events a flush wrote, never
 * flushes itself.  Bursts flushed every 300 ms for about 3 s: files end
 * by age (at least 3), every event is in one of them or counted lost. */
static void age_with_flushes(int stream_policy)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	uint64_t lost = 0;
	trace_id_t trid = create_aged(stream_policy);
	ck_assert_ok(posix_trace_start(trid));
	for (int i = 0; i < 10; i++) {
		post_bursts(trid, 1, &seq);
		pt_sleep_ms(300);
	}
	struct file_read r = wait_file_ended(3);
	ck_assert_uint_gt(r.events, 0);
	ck_assert_ok(posix_trace_shutdown(trid));
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 3);
	uint64_t events = read_all(numbers, n, &lost);
	ck_assert_msg(events + lost == seq, "%llu events + %llu lost, %u posted",
	              (unsigned long long)events, (unsigned long long)lost, seq);
}

START_TEST(age_with_a_loop_stream)
{
	age_with_flushes(POSIX_TRACE_LOOP);
}
END_TEST

START_TEST(age_with_an_until_full_stream)
{
	age_with_flushes(POSIX_TRACE_UNTIL_FULL);
}
END_TEST

/* The mode given, exactly, whatever the umask. */
START_TEST(files_have_the_mode_given)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	umask(077);
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posix_trace_start(trid));
	post_bursts(trid, 10, &seq);
	ck_assert_ok(posix_trace_shutdown(trid));
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 2);
	for (unsigned i = 0; i < n; i++) {
		struct stat st;
		char name[32];
		snprintf(name, sizeof name, "%08u.ptlog", numbers[i]);
		ck_assert_int_eq(fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW), 0);
		ck_assert_int_eq(st.st_mode & 07777, 0640);
	}
}
END_TEST

/* A file in the middle gives the images of its events by itself. */
START_TEST(images_repeated_in_every_file)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posixtrace_set_images(trid, 1));
	ck_assert_ok(posix_trace_start(trid));
	post_bursts(trid, BURSTS, &seq);
	ck_assert_ok(posix_trace_shutdown(trid));
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 3);
	unsigned middle = 0;
	for (unsigned i = 1; i + 1 < n; i++) {
		struct file_read r = read_file(numbers[i]);
		if (!r.events)
			continue;
		ck_assert_msg(r.with_image == r.events, "file %u: %llu of %llu events with an image",
		              numbers[i], (unsigned long long)r.with_image,
		              (unsigned long long)r.events);
		middle++;
	}
	ck_assert_uint_ge(middle, 1);
}
END_TEST

/* ---- a writer of another pid namespace ---------------------------------- */

struct ns_payload {
	uint32_t seq;
	int32_t ns_tid; /* gettid() in the writer's namespace */
};

struct ns_writer {
	pid_t middle, pid; /* the writer's pid here */
	int go, done;      /* a byte: post a burst; a byte back: posted */
};

/* In its own pid namespace (pid 1 there): a burst of events for each byte
 * read, a byte back after each; ends at end of file.  After its first
 * event it waits for a few of the keeper's ticks, which look at the lanes'
 * writers (keeper.c, tick): a look then must not stand for the ids the
 * file has not been given yet (before, the first file had none of them). */
static void ns_writer_main(int go, int done)
{
	trace_event_id_t id;
	if (posix_trace_eventid_open("rot:ns", &id) != 0)
		_exit(3);
	struct ns_payload pl = {0, (int32_t)gettid()};
	char c;
	while (read(go, &c, 1) == 1) {
		for (unsigned i = 0; i < PER_BURST; i++, pl.seq++) {
			posix_trace_event(id, &pl, sizeof pl);
			if (pl.seq == 0)
				pt_sleep_ms(350);
		}
		if (write(done, "d", 1) != 1)
			_exit(3);
	}
	_exit(getpid() == 1 ? 0 : 4);
}

/* A process that forks the writer into a new pid namespace and waits for
 * it; pid 0 when no namespace could be made. */
static struct ns_writer start_ns_writer(void)
{
	int out[2], go[2], done[2];
	ck_assert_int_eq(pipe(out), 0);
	ck_assert_int_eq(pipe(go), 0);
	ck_assert_int_eq(pipe(done), 0);
	struct ns_writer w = {pt_fork(), 0, go[1], done[0]};
	if (w.middle == 0) {
		close(go[1]);
		close(done[0]);
		pid_t t = -1;
		if (unshare(CLONE_NEWPID) == 0 && (t = fork()) == 0)
			ns_writer_main(go[0], done[1]);
		if (write(out[1], &t, sizeof t) != sizeof t)
			_exit(5);
		int status = 0;
		if (t > 0)
			waitpid(t, &status, 0);
		_exit(t > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : 6);
	}
	pt_track(w.middle);
	close(go[0]);
	close(done[1]);
	close(out[1]);
	ck_assert_int_eq(read(out[0], &w.pid, sizeof w.pid), (ssize_t)sizeof w.pid);
	close(out[0]);
	return w;
}

/* One file read alone: the writer's events, each checked for its ids here
 * and its own; how many. */
static uint64_t read_ns_events(unsigned number, pid_t pid)
{
	int fd = open_file(number);
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posix_trace_event_info ev;
	struct posixtrace_event_ext ext;
	char name[TRACE_EVENT_NAME_MAX];
	struct ns_payload pl;
	size_t len;
	uint64_t events = 0;
	for (;;) {
		int unavailable;
		ck_assert_ok(posix_trace_getnext_event(trid, &ev, &pl, sizeof pl, &len, &unavailable));
		if (unavailable)
			break;
		if (posix_trace_eventid_get_name(trid, ev.posix_event_id, name) != 0 ||
		    strcmp(name, "rot:ns") != 0)
			continue;
		ck_assert_uint_eq(len, sizeof pl);
		ck_assert_ok(posixtrace_event_ext(trid, &ext));
		ck_assert_msg(ev.posix_pid == pid, "file %u, event %u: pid %d, not %d", number,
		              pl.seq, (int)ev.posix_pid, (int)pid);
		ck_assert_msg(ext.posixtrace_ns_pid == 1 && ext.posixtrace_ns_tid == pl.ns_tid &&
		                  ext.posixtrace_pidns != 0,
		              "file %u, event %u: own ids %d/%d in namespace %llu, not 1/%d", number,
		              pl.seq, (int)ext.posixtrace_ns_pid, (int)ext.posixtrace_ns_tid,
		              (unsigned long long)ext.posixtrace_pidns, (int)pl.ns_tid);
		ck_assert_int_ne(ext.posixtrace_tid, pl.ns_tid);
		events++;
	}
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
	return events;
}

/* A writer in a pid namespace of its own (inheritance) posts bursts over
 * several files: every file that holds its events gives its own ids read
 * alone (before, only the file its ids were first written to did; the
 * others' events had no namespace ids). */
START_TEST(pids_repeated_in_every_file)
{
	if (geteuid() != 0) {
		fprintf(stderr, "t_rotate: pids_repeated_in_every_file skipped (not root)\n");
		return;
	}
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH));
	ck_assert_ok(posix_trace_attr_setstreamsize(&attr, STREAM_SIZE));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	struct posixtrace_logdir d = {.posixtrace_dirfd = dir_fd,
	                              .posixtrace_mode = 0600,
	                              .posixtrace_file_size = FILE_SIZE};
	ck_assert_ok(posixtrace_create_withlogdir(0, &attr, &d, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	ck_assert_ok(posix_trace_start(trid));
	struct ns_writer w = start_ns_writer();
	if (w.pid <= 0) {
		fprintf(stderr, "t_rotate: pids_repeated_in_every_file skipped (no pid namespace)\n");
		ck_assert_ok(posix_trace_shutdown(trid));
		return;
	}
	for (unsigned b = 0; b < BURSTS; b++) {
		char c;
		ck_assert_int_eq(write(w.go, "g", 1), 1);
		ck_assert_int_eq(read(w.done, &c, 1), 1);
		ck_assert_ok(posix_trace_flush(trid));
		wait_flushed(trid);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	close(w.go);
	int status = pt_wait_exit(w.middle, 10000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "writer: status %#x", status);
	close(w.done);
	unsigned numbers[MAX_FILES];
	unsigned n = list_files(numbers), with_events = 0;
	uint64_t events = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t e = read_ns_events(numbers[i], w.pid);
		with_events += e != 0;
		events += e;
	}
	ck_assert_uint_ge(with_events, 3);
	ck_assert_uint_eq(events, BURSTS * PER_BURST);
}
END_TEST

/* The keeper killed: the controller's next call starts another, which
 * reopens the file being written by number and identity and goes on. */
START_TEST(keeper_killed_then_resumed)
{
	unsigned numbers[MAX_FILES];
	uint32_t seq = 0;
	uint64_t lost = 0;
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posix_trace_start(trid));
	post_bursts(trid, BURSTS / 2, &seq);
	unsigned before = list_files(numbers);
	ck_assert_uint_ge(before, 2); /* the keeper writes a file other than the first */
	pid_t keeper = lt_find_keeper();
	ck_assert_int_gt(keeper, 0);
	ck_assert_int_eq(kill(keeper, SIGKILL), 0);
	while (kill(keeper, 0) == 0 && waitpid(keeper, NULL, WNOHANG) == 0)
		pt_sleep_ms(1);
	trace_event_id_t id;
	ck_assert_ok(posix_trace_eventid_open("rot:ev", &id));
	for (unsigned b = 0; b < BURSTS / 2; b++) {
		for (unsigned i = 0; i < PER_BURST; i++, ++seq)
			posix_trace_event(id, &seq, sizeof seq);
		int err = posix_trace_flush(trid);
		ck_assert_msg(err == 0 || err == EIO, "flush: %d", err); /* EIO: the keeper had died */
	}
	int err = posix_trace_shutdown(trid);
	ck_assert_msg(err == 0 || err == EIO, "shutdown: %d", err);
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 2);
	/* Killed between drains, the keeper's file was taken up again by the
	 * next one, which closed it: every file is closed, none passed over. */
	uint64_t events = 0;
	uint32_t last = 0;
	for (unsigned i = 0; i < n; i++) {
		struct file_read r = read_file(numbers[i]);
		ck_assert_msg(r.closed && !r.damaged, "file %u: closed %d", numbers[i], r.closed);
		if (i)
			ck_assert_uint_eq(numbers[i], numbers[i - 1] + 1);
		if (r.events && events)
			ck_assert_uint_gt(r.first, last);
		if (r.events)
			last = r.last;
		events += r.events;
		lost = r.lost;
	}
	ck_assert_msg(events + lost == seq, "%llu events + %llu lost, %u posted",
	              (unsigned long long)events, (unsigned long long)lost, seq);
}
END_TEST

/* A controller that posts and flushes until killed, with its keeper. */
static void controller_until_killed(void)
{
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posix_trace_start(trid));
	uint32_t seq = 0;
	for (;;)
		post_bursts(trid, 1, &seq);
}

static pid_t keeper_of(pid_t controller)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)controller, (int)controller);
	FILE *f = fopen(path, "r");
	pid_t keeper = 0;
	if (f && fgets(line, sizeof line, f))
		keeper = (pid_t)atoi(line);
	if (f)
		fclose(f);
	return keeper;
}

/* Both killed at once (kill -9 of a recorder and its keeper): what is
 * left reads alone, the last file up to its last complete block. */
START_TEST(controller_and_keeper_killed)
{
	unsigned numbers[MAX_FILES];
	pid_t controller = pt_fork();
	if (controller == 0) {
		controller_until_killed();
		_exit(0);
	}
	pt_track(controller);
	unsigned n = 0;
	for (int waited = 0; (n = list_files(numbers)) < 4; waited++) {
		ck_assert_msg(waited < 10000, "only %u files after 10 s", n);
		pt_sleep_ms(1);
	}
	pid_t keeper = keeper_of(controller);
	ck_assert_int_gt(keeper, 0);
	kill(keeper, SIGKILL);
	kill(controller, SIGKILL);
	pt_wait_exit(controller, 5000);
	while (kill(keeper, 0) == 0)
		pt_sleep_ms(1);
	n = list_files(numbers);
	uint32_t last = 0;
	uint64_t events = 0;
	for (unsigned i = 0; i < n; i++) {
		/* A file made an instant before the kill may hold nothing yet;
		 * only the last. */
		if (i == n - 1 && file_size(numbers[i]) == 0)
			break;
		struct file_read r = read_file(numbers[i]);
		if (i + 1 < n - 1)
			ck_assert_msg(r.closed, "file %u of %u not closed", numbers[i], n);
		ck_assert(!r.damaged);
		if (r.events && events)
			ck_assert_uint_gt(r.first, last);
		if (r.events)
			last = r.last;
		events += r.events;
	}
	ck_assert_uint_gt(events, 0);
}
END_TEST

/* The keeper held (a fanotify permission event, answered by a process
 * of the test's: a thread would make the keeper's fork one of a
 * multithreaded process) at the first open it makes in the directory: the
 * file it makes when the first file is full.  While it waits there, every
 * numbered file is looked at by fstatat (which no permission event stops);
 * each must hold at least a header and its name table. */
struct held_keeper {
	int held;               /* the keeper was held once */
	int short_files;        /* numbered files seen below HEADER_MIN then */
	char short_name[32];
};
#define HEADER_MIN (64u << 10) /* a header and an empty name table: about 68 KiB */

static void look_while_held(struct held_keeper *h)
{
	int fd = fcntl(dir_fd, F_DUPFD_CLOEXEC, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	if (!d)
		return;
	rewinddir(d);
	for (struct dirent *e; (e = readdir(d));) {
		struct stat st;
		if (!is_log_name(e) || fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    st.st_size >= (off_t)HEADER_MIN)
			continue;
		h->short_files++;
		snprintf(h->short_name, sizeof h->short_name, "%.14s", e->d_name);
	}
	closedir(d);
}

/* Answers every open in the directory until stop is readable, holding the
 * first one of a process other than the test's (the keeper's) while it
 * looks; then what it saw, on result. */
static void answer_opens(int fan, pid_t test, int stop, int result)
{
	struct held_keeper h = {0};
	char buf[4096] __attribute__((aligned(8)));
	for (;;) {
		struct pollfd p[2] = {{fan, POLLIN, 0}, {stop, POLLIN, 0}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			_exit(1);
		if (p[1].revents)
			break;
		ssize_t n = read(fan, buf, sizeof buf);
		for (struct fanotify_event_metadata *m = (void *)buf; n > 0 && FAN_EVENT_OK(m, n);
		     m = FAN_EVENT_NEXT(m, n)) {
			if (m->fd < 0)
				continue;
			if (m->pid != test && !h.held) {
				h.held = 1;
				look_while_held(&h);
			}
			struct fanotify_response r = {m->fd, FAN_ALLOW};
			if (write(fan, &r, sizeof r) != sizeof r)
				_exit(1);
			close(m->fd);
		}
	}
	_exit(write(result, &h, sizeof h) == sizeof h ? 0 : 1);
}

START_TEST(no_file_seen_before_its_header)
{
	struct held_keeper h;
	int stop[2], result[2];
	int fan = fanotify_init(FAN_CLASS_CONTENT | FAN_CLOEXEC, O_RDONLY | O_CLOEXEC | O_LARGEFILE);
	if (fan < 0) {
		printf("SKIP no_file_seen_before_its_header: fanotify_init: %s\n", strerror(errno));
		return;
	}
	ck_assert_int_eq(fanotify_mark(fan, FAN_MARK_ADD, FAN_OPEN_PERM | FAN_EVENT_ON_CHILD, dir_fd,
	                               NULL),
	                 0);
	ck_assert_int_eq(pipe2(stop, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(result, O_CLOEXEC), 0);
	pid_t test = getpid();
	pid_t answerer = pt_fork();
	if (answerer == 0)
		answer_opens(fan, test, stop[0], result[1]);
	pt_track(answerer);
	close(fan);
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posix_trace_start(trid));
	uint32_t seq = 0;
	unsigned numbers[MAX_FILES];
	for (unsigned b = 0; list_files(numbers) < 3; b++) {
		ck_assert_msg(b < 20 * BURSTS, "only %u files after %u bursts", list_files(numbers), b);
		post_bursts(trid, 1, &seq);
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_int_eq(write(stop[1], "", 1), 1);
	ck_assert_int_eq(read(result[0], &h, sizeof h), (ssize_t)sizeof h);
	ck_assert_int_eq(pt_wait_exit(answerer, 10000), 0);
	ck_assert_msg(h.held, "the keeper opened nothing in the directory");
	ck_assert_msg(h.short_files == 0, "%d file(s) without a whole header in the set, %s",
	              h.short_files, h.short_name);
}
END_TEST

/* A name taken before the keeper gets to it: a symbolic link is not
 * followed, the rotation stops there (the last file grows), the error is
 * shutdown's, and the link's target is untouched. */
START_TEST(symlink_in_place_of_the_next_file)
{
	char victim[96], link_path[96];
	snprintf(victim, sizeof victim, "%s.victim", dir);
	int v = open(victim, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ck_assert_int_ge(v, 0);
	close(v);
	snprintf(link_path, sizeof link_path, "%s/00000002.ptlog", dir);
	ck_assert_int_eq(symlink(victim, link_path), 0);
	uint32_t seq = 0;
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posix_trace_start(trid));
	post_bursts(trid, 10, &seq);
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_log_overrun_status, POSIX_TRACE_NO_OVERRUN);
	ck_assert_int_eq(posix_trace_shutdown(trid), EEXIST);
	struct stat vs;
	ck_assert_int_eq(stat(victim, &vs), 0);
	ck_assert_int_eq(vs.st_size, 0);
	unlink(victim);
	struct file_read r = read_file(1);
	ck_assert(r.closed);
	ck_assert_uint_eq(r.events + r.lost, seq);
	ck_assert_int_gt(file_size(1), FILE_SIZE);
}
END_TEST

/* The first name taken by a file of another user: refused at creation. */
START_TEST(first_name_taken_by_another_user)
{
	char path[96];
	snprintf(path, sizeof path, "%s/00000001.ptlog", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchown(fd, 65534, 65534), 0);
	close(fd);
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	struct posixtrace_logdir d = {.posixtrace_dirfd = dir_fd,
	                              .posixtrace_mode = 0600,
	                              .posixtrace_file_size = FILE_SIZE};
	ck_assert_int_eq(posixtrace_create_withlogdir(0, &attr, &d, &trid), EEXIST);
	ck_assert_int_eq(file_size(1), 0);
	ck_assert_ok(posix_trace_attr_destroy(&attr));
}
END_TEST

/* The directory renamed and a symbolic link put in its place while the
 * stream runs: the files go on in the directory it was given. */
START_TEST(directory_replaced_by_a_symlink)
{
	char moved[96], elsewhere[96];
	snprintf(moved, sizeof moved, "%s.moved", dir);
	snprintf(elsewhere, sizeof elsewhere, "%s.elsewhere", dir);
	ck_assert_int_eq(mkdir(elsewhere, 0700), 0);
	uint32_t seq = 0;
	trace_id_t trid = create_rotated(POSIX_TRACE_FLUSH, 0);
	ck_assert_ok(posix_trace_start(trid));
	post_bursts(trid, 3, &seq);
	ck_assert_int_eq(rename(dir, moved), 0);
	ck_assert_int_eq(symlink(elsewhere, dir), 0);
	post_bursts(trid, BURSTS, &seq);
	ck_assert_ok(posix_trace_shutdown(trid));
	DIR *d = opendir(elsewhere);
	ck_assert_ptr_nonnull(d);
	int entries = 0;
	for (struct dirent *e; (e = readdir(d));)
		entries += e->d_name[0] != '.';
	closedir(d);
	ck_assert_int_eq(entries, 0);
	unlink(dir);
	rmdir(elsewhere);
	ck_assert_int_eq(rename(moved, dir), 0);
	unsigned numbers[MAX_FILES];
	uint64_t lost = 0;
	unsigned n = list_files(numbers);
	ck_assert_uint_ge(n, 3);
	ck_assert_uint_eq(read_all(numbers, n, &lost) + lost, seq);
}
END_TEST

static int create_with(int log_policy, uint64_t size, mode_t mode, int fd)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	if (log_policy)
		ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, log_policy));
	struct posixtrace_logdir d = {.posixtrace_dirfd = fd,
	                              .posixtrace_mode = mode,
	                              .posixtrace_file_size = size};
	int err = posixtrace_create_withlogdir(0, &attr, &d, &trid);
	if (!err)
		ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return err;
}

START_TEST(contradictions_refused)
{
	ck_assert_int_eq(create_with(POSIX_TRACE_LOOP, FILE_SIZE, 0600, dir_fd), EINVAL);
	ck_assert_int_eq(create_with(POSIX_TRACE_UNTIL_FULL, FILE_SIZE, 0600, dir_fd), EINVAL);
	ck_assert_int_eq(create_with(0, FILE_SIZE - 1, 0600, dir_fd), EINVAL);
	ck_assert_int_eq(create_with(0, FILE_SIZE, 04600, dir_fd), EINVAL);
	ck_assert_int_eq(create_with(0, FILE_SIZE, 0700, dir_fd), EINVAL);
	char path[96];
	snprintf(path, sizeof path, "%s/plain", dir);
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(create_with(0, FILE_SIZE, 0600, fd), ENOTDIR);
	close(fd);
	ck_assert_int_eq(create_with(0, FILE_SIZE, 0600, fd), EBADF);
	unsigned numbers[MAX_FILES];
	ck_assert_uint_eq(list_files(numbers), 0);
	ck_assert_int_eq(create_with(POSIX_TRACE_APPEND, FILE_SIZE, 0600, dir_fd), 0);
	ck_assert_uint_eq(list_files(numbers), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rotate");
	TCase *tc = pt_tcase_fixture(s, "matrix", setup, teardown);
	tcase_add_test(tc, flush_stream_every_file_kept);
	tcase_add_test(tc, flush_stream_two_files_kept);
	tcase_add_test(tc, loop_stream_every_file_kept);
	tcase_add_test(tc, loop_stream_two_files_kept);
	tcase_add_test(tc, until_full_stream_every_file_kept);
	tcase_add_test(tc, until_full_stream_two_files_kept);
	tc = pt_tcase_fixture(s, "age", setup, teardown);
	tcase_add_test(tc, slow_writer_files_end_by_age);
	tcase_add_test(tc, no_file_by_age_without_events);
	tcase_add_test(tc, age_with_a_loop_stream);
	tcase_add_test(tc, age_with_an_until_full_stream);
	tc = pt_tcase_fixture(s, "files", setup, teardown);
	tcase_add_test(tc, files_have_the_mode_given);
	tcase_add_test(tc, images_repeated_in_every_file);
	tcase_add_test(tc, pids_repeated_in_every_file);
	tc = pt_tcase_fixture(s, "crash", setup, teardown);
	tcase_add_test(tc, keeper_killed_then_resumed);
	tcase_add_test(tc, controller_and_keeper_killed);
	tcase_add_test(tc, no_file_seen_before_its_header);
	tc = pt_tcase_fixture(s, "hostile", setup, teardown);
	tcase_add_test(tc, symlink_in_place_of_the_next_file);
	tcase_add_test(tc, first_name_taken_by_another_user);
	tcase_add_test(tc, directory_replaced_by_a_symlink);
	tcase_add_test(tc, contradictions_refused);
	return pt_run(s);
}
