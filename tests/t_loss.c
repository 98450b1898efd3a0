/* SPDX-License-Identifier: MIT */
/*
 * t_loss: no event is lost without a word.  Every event a thread posted
 * into a stream with a log is in the log, or counted in the log's lost
 * events (posixtrace_lost_events of the pre-recorded stream), or the log
 * reads as cut short (nothing was left alive to finish it):
 *  - writers, controller and keeper SIGKILLed at random points (4
 *    processes of 4 threads, each numbering its events), and the keeper
 *    killed while it holds blocks its log's pipe has no room for;
 *  - a program that is its own controller under a seccomp filter that
 *    denies sendto (its commands to the keeper cannot be sent);
 *  - a program under RLIMIT_AS=256M joining a stream whose memory does
 *    not fit there (it maps what fits);
 *  - a process that has used up its descriptors still names its program
 *    among the images a stream records (no descriptor needed).
 * PT_LOSS_ROUNDS sets the rounds of the first (default 10; the soak runs
 * 100), PT_LOSS_SEED its random seed (default: time and pid, printed) and
 * PT_LOSS_DEBUG=1 prints the missing events of each thread, as ranges.
 */
#include "harness.h"
#include "logtest.h"

#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <posixtrace.h>

#define LOSS_WRITERS 4
#define LOSS_THREADS 4
#define LOSS_EVENTS 40000u /* per thread at most */
#define LOSS_TAG(w, t) ((uint32_t)(w) << 8 | (uint32_t)(t))

/* Shared by the test, the controller and the writers (kept by the test
 * when they are killed). */
struct loss_shared {
	_Atomic uint32_t done[LOSS_WRITERS][LOSS_THREADS]; /* events posted (calls returned) */
	_Atomic pid_t writer[LOSS_WRITERS];
	_Atomic int writers_forked;
};

struct loss_writer {
	struct loss_shared *sh;
	trace_event_id_t id;
	int w, t;
};

static void *loss_thread_main(void *p)
{
	struct loss_writer *lw = p;
	for (uint32_t seq = 0; seq < LOSS_EVENTS; seq++) {
		uint32_t data[2] = {LOSS_TAG(lw->w, lw->t), seq};
		posix_trace_event(lw->id, data, sizeof data);
		atomic_store(&lw->sh->done[lw->w][lw->t], seq + 1);
		if (seq % 64 == 63) {
			struct timespec pause = {0, 100000};
			nanosleep(&pause, NULL);
		}
	}
	return NULL;
}

static void loss_writer_main(struct loss_shared *sh, trace_event_id_t id, int w)
{
	pthread_t th[LOSS_THREADS];
	struct loss_writer lw[LOSS_THREADS];
	for (int t = 0; t < LOSS_THREADS; t++) {
		lw[t] = (struct loss_writer){sh, id, w, t};
		if (pthread_create(&th[t], NULL, loss_thread_main, &lw[t]) != 0)
			_exit(3);
	}
	for (int t = 0; t < LOSS_THREADS; t++)
		pthread_join(th[t], NULL);
	_exit(0);
}

/* The controller: a FLUSH stream of 256 KiB inherited by its 4 writer
 * processes, logging into logfd (APPEND); it flushes every 2 ms while they
 * write, then shuts the stream down.  Exit status 0, or a step's number. */
static void loss_controller_main(struct loss_shared *sh, int logfd, trace_event_id_t id)
{
	trace_attr_t attr;
	trace_id_t trid;
	if (posix_trace_attr_init(&attr) || posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) ||
	    posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH) ||
	    posix_trace_attr_setstreamsize(&attr, 256 * 1024) ||
	    posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND))
		_exit(10);
	if (posix_trace_create_withlog(0, &attr, logfd, &trid) || posix_trace_start(trid))
		_exit(11);
	for (int w = 0; w < LOSS_WRITERS; w++) {
		pid_t pid = fork();
		if (pid < 0)
			_exit(12);
		if (pid == 0)
			loss_writer_main(sh, id, w);
		atomic_store(&sh->writer[w], pid);
	}
	atomic_store(&sh->writers_forked, 1);
	/* Its writers only: the keeper is a child of this process too. */
	for (int w = 0; w < LOSS_WRITERS;) {
		posix_trace_flush(trid);
		pt_sleep_ms(2);
		while (w < LOSS_WRITERS && waitpid(atomic_load(&sh->writer[w]), NULL, WNOHANG) > 0)
			w++;
	}
	posix_trace_shutdown(trid);
	_exit(0);
}

/* A process to kill now: the keeper (a child of the controller, or of the
 * test once the controller is gone), the controller or a writer. */
static pid_t loss_victim(pid_t controller, const struct loss_shared *sh, unsigned *seed,
                         const char **what)
{
	pid_t pid = 0;
	switch (rand_r(seed) % 6) {
	case 0:
		*what = "controller";
		return controller;
	case 1:
		*what = "writer";
		return atomic_load(&sh->writer[rand_r(seed) % LOSS_WRITERS]);
	default: /* the keeper, four times as often: its death is what loses events */
		*what = "keeper";
		if (pt_procs_named(controller, "posixtrace-keep", &pid) == 0)
			pt_procs_named(getpid(), "posixtrace-keep", &pid);
		return pid;
	}
}

/* Reaps every descendant (the test is their reaper) within 20 s. */
static void loss_reap_all(pid_t controller, int *controller_status)
{
	for (int waited = 0;; waited += 2) {
		int status;
		pid_t r = waitpid(-1, &status, WNOHANG);
		if (r < 0 && errno == ECHILD)
			return;
		if (r == controller)
			*controller_status = status;
		if (r > 0)
			continue;
		if (waited >= 20000) {
			pt_kill_descendants();
			ck_abort_msg("processes of the round did not end within 20 s");
		}
		pt_sleep_ms(2);
	}
}

/* A check made per event: Check's ck_assert records its place in the
 * test's message file each time it passes (hundreds of millions of
 * records over the soak's rounds); this says something only on failure. */
#define LOSS_CHECK(cond, ...)                                                    \
	do {                                                                     \
		if (!(cond))                                                     \
			ck_abort_msg(__VA_ARGS__);                               \
	} while (0)

/* An event read back from a log. */
struct loss_ev {
	trace_event_id_t id;
	size_t len;
	unsigned char data[64];
};

/* The next event of rd: 1, or 0 at the end of the log. */
static int loss_next(trace_id_t rd, struct loss_ev *ev)
{
	struct posix_trace_event_info info;
	int unavailable = 0;
	ev->len = 0;
	int err = posix_trace_getnext_event(rd, &info, ev->data, sizeof ev->data, &ev->len,
	                                    &unavailable);
	LOSS_CHECK(err == 0, "posix_trace_getnext_event: %s", strerror(err));
	ev->id = info.posix_event_id;
	return !unavailable;
}

struct loss_count {
	uint32_t logged[LOSS_WRITERS][LOSS_THREADS]; /* events below done */
	uint32_t max_seq[LOSS_WRITERS][LOSS_THREADS]; /* highest logged + 1 */
	unsigned char *seen;
	uint64_t errors, events;
};

static void loss_count_event(struct loss_count *c, const struct loss_shared *sh,
                             const struct loss_ev *ev)
{
	uint32_t data[2];
	LOSS_CHECK(ev->len == sizeof data, "an event of %zu bytes", ev->len);
	memcpy(data, ev->data, sizeof data);
	uint32_t w = data[0] >> 8, t = data[0] & 0xff, seq = data[1];
	LOSS_CHECK(w < LOSS_WRITERS && t < LOSS_THREADS && seq < LOSS_EVENTS,
	           "an event not posted: tag %#x seq %u", data[0], seq);
	size_t bit = ((size_t)w * LOSS_THREADS + t) * LOSS_EVENTS + seq;
	LOSS_CHECK(!(c->seen[bit / 8] & 1u << bit % 8), "writer %u thread %u: event %u twice", w,
	           t, seq);
	c->seen[bit / 8] |= (unsigned char)(1u << bit % 8);
	uint32_t done = atomic_load(&sh->done[w][t]);
	LOSS_CHECK(seq <= done, "writer %u thread %u: event %u logged, %u posted", w, t, seq,
	           done);
	if (seq < done)
		c->logged[w][t]++;
	if (seq + 1 > c->max_seq[w][t])
		c->max_seq[w][t] = seq + 1;
	c->events++;
}

/* Events posted and neither logged nor counted: for a controller that
 * shut its stream down, every event posted; for a killed controller, whose
 * keeper ended the stream when it saw it die (events posted after that are
 * not recorded), those below each thread's last logged one. */
static uint64_t loss_missing(const struct loss_count *c, const struct loss_shared *sh,
                             int controller_shut_down)
{
	uint64_t missing = 0;
	for (int w = 0; w < LOSS_WRITERS; w++)
		for (int t = 0; t < LOSS_THREADS; t++) {
			uint32_t done = atomic_load(&sh->done[w][t]);
			uint32_t expected = controller_shut_down ? done
			                    : (c->max_seq[w][t] < done ? c->max_seq[w][t] : done);
			uint32_t logged = 0;
			for (uint32_t s = 0; s < expected; s++) {
				size_t bit = ((size_t)w * LOSS_THREADS + t) * LOSS_EVENTS + s;
				logged += (c->seen[bit / 8] >> bit % 8) & 1;
			}
			missing += expected - logged;
			if (getenv("PT_LOSS_DEBUG") && expected > logged) {
				printf("  w%d t%d done %u expected %u logged %u:", w, t, done, expected, logged);
				int shown = 0;
				for (uint32_t s = 0; s < expected && shown < 8;) {
					size_t bit = ((size_t)w * LOSS_THREADS + t) * LOSS_EVENTS + s;
					if ((c->seen[bit / 8] >> bit % 8) & 1) { s++; continue; }
					uint32_t e = s;
					for (;; e++) {
						size_t b2 = ((size_t)w * LOSS_THREADS + t) * LOSS_EVENTS + e;
						if (e >= expected || ((c->seen[b2 / 8] >> b2 % 8) & 1)) break;
					}
					printf(" [%u,%u)", s, e);
					shown++;
					s = e;
				}
				printf("\n");
			}
		}
	return missing;
}

/* One round: returns 1 when the log was finished and checked in full. */
static int loss_round(unsigned round, unsigned *seed, trace_event_id_t id)
{
	struct loss_shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE,
	                              MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ck_assert_ptr_ne(sh, MAP_FAILED);
	int logfd = lt_new_log_file();
	pid_t controller = fork();
	ck_assert_int_ge(controller, 0);
	if (controller == 0)
		loss_controller_main(sh, logfd, id);
	int kills = 1 + (int)(rand_r(seed) % 3);
	char said[256] = "";
	for (int k = 0; k < kills; k++) {
		pt_sleep_ms(rand_r(seed) % 40);
		const char *what = "";
		pid_t victim = loss_victim(controller, sh, seed, &what);
		if (victim > 0 && kill(victim, SIGKILL) == 0)
			snprintf(said + strlen(said), sizeof said - strlen(said), " %s", what);
	}
	int controller_status = -1;
	loss_reap_all(controller, &controller_status);
	int shut_down = WIFEXITED(controller_status) && WEXITSTATUS(controller_status) == 0;
	ck_assert_msg(shut_down || WIFSIGNALED(controller_status), "round %u: controller status %#x",
	              round, controller_status);

	struct loss_count c = {.seen = calloc(LOSS_WRITERS * LOSS_THREADS, LOSS_EVENTS / 8 + 1)};
	ck_assert_ptr_nonnull(c.seen);
	trace_id_t rd;
	ck_assert_int_eq(lseek(logfd, 0, SEEK_SET), 0);
	int err = posix_trace_open(logfd, &rd);
	if (err == EINVAL && !shut_down) {
		/* Killed before its log's header was written: no log at all. */
		printf("round %u: killed%s before the log began\n", round, said);
		free(c.seen);
		close(logfd);
		munmap(sh, sizeof *sh);
		return 0;
	}
	ck_assert_ok(err);
	for (;;) {
		struct loss_ev ev;
		if (!loss_next(rd, &ev))
			break;
		if (ev.id == POSIX_TRACE_ERROR)
			c.errors++;
		else if (ev.id >= POSIX_TRACE_UNNAMED_USEREVENT)
			loss_count_event(&c, sh, &ev);
	}
	struct posixtrace_log_info info;
	ck_assert_ok(posixtrace_log_info(rd, &info));
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(rd, &st));
	ck_assert_ok(posix_trace_close(rd));
	uint64_t missing = loss_missing(&c, sh, shut_down);
	uint64_t posted = 0;
	for (int w = 0; w < LOSS_WRITERS; w++)
		for (int t = 0; t < LOSS_THREADS; t++)
			posted += atomic_load(&sh->done[w][t]);
	printf("round %u: killed%s; posted %llu, logged %llu, lost %llu, missing %llu, "
	       "errors %llu, %s\n",
	       round, said[0] ? said : " nothing", (unsigned long long)posted,
	       (unsigned long long)c.events, (unsigned long long)st.posixtrace_lost_events,
	       (unsigned long long)missing, (unsigned long long)c.errors,
	       info.posixtrace_closed ? "closed" : "cut short");
	fflush(stdout);
	if (info.posixtrace_closed)
		ck_assert_msg(missing <= st.posixtrace_lost_events,
		              "round %u (killed%s): %llu events posted are neither in the log nor in "
		              "its lost count (%llu)",
		              round, said, (unsigned long long)missing,
		              (unsigned long long)st.posixtrace_lost_events);
	free(c.seen);
	close(logfd);
	munmap(sh, sizeof *sh);
	return info.posixtrace_closed;
}

static unsigned loss_env(const char *name, unsigned fallback)
{
	const char *v = getenv(name);
	return v && *v ? (unsigned)strtoul(v, NULL, 10) : fallback;
}

/* Writers, controller and keeper SIGKILLed at random: every event posted
 * is in the log or in its lost count, unless the log is cut short. */
START_TEST(random_kills_lose_nothing_unsaid)
{
	pt_subreaper_setup();
	unsigned rounds = loss_env("PT_LOSS_ROUNDS", 10);
	unsigned seed = loss_env("PT_LOSS_SEED", (unsigned)time(NULL) ^ (unsigned)getpid() << 16);
	printf("random_kills_lose_nothing_unsaid: seed %u, %u rounds\n", seed, rounds);
	trace_event_id_t id = pt_event_id("loss.event");
	unsigned closed = 0;
	for (unsigned round = 1; round <= rounds; round++)
		closed += (unsigned)loss_round(round, &seed, id);
	printf("%u of %u logs finished and checked in full\n", closed, rounds);
}
END_TEST

/* The events of a log: those tagged `tag` (counted) and its lost count;
 * whether it ends with its end record. */
static uint64_t loss_tagged(int fd, uint32_t tag, uint64_t *lost, int *closed)
{
	trace_id_t rd;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	uint64_t n = 0;
	struct loss_ev ev;
	while (loss_next(rd, &ev)) {
		uint32_t data[2];
		if (ev.id < POSIX_TRACE_UNNAMED_USEREVENT || ev.len != sizeof data)
			continue;
		memcpy(data, ev.data, sizeof data);
		n += data[0] == tag;
	}
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(rd, &st));
	*lost = st.posixtrace_lost_events;
	struct posixtrace_log_info info;
	ck_assert_ok(posixtrace_log_info(rd, &info));
	*closed = info.posixtrace_closed;
	ck_assert_ok(posix_trace_close(rd));
	return n;
}

/* Whether some thread of pid waits in the kernel where `where` names
 * (its wchan): every thread if all, the main one if main. */
static int loss_waits_in(pid_t pid, const char *where, int main_only)
{
	char path[64], wchan[64];
	snprintf(path, sizeof path, "/proc/%d/task", (int)pid);
	DIR *d = opendir(path);
	int found = 0;
	for (struct dirent *e; d && !found && (e = readdir(d));) {
		int tid = atoi(e->d_name);
		if (tid <= 0 || (main_only && tid != pid))
			continue;
		snprintf(path, sizeof path, "/proc/%d/task/%d/wchan", (int)pid, tid);
		int fd = open(path, O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, wchan, sizeof wchan - 1) : -1;
		if (fd >= 0)
			close(fd);
		wchan[n > 0 ? n : 0] = '\0';
		found = strstr(wchan, where) != NULL;
	}
	if (d)
		closedir(d);
	return found;
}

/* A process that copies the pipe `in` into `out` until its end (a
 * process, not a thread: the controller forks a new keeper meanwhile, and
 * a fork from a process of one thread is what ThreadSanitizer supports). */
static pid_t loss_pump(int in, int out)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	char buf[65536];
	for (ssize_t n; (n = read(in, buf, sizeof buf)) != 0;)
		if (n > 0 && write(out, buf, (size_t)n) != n)
			_exit(1);
	_exit(0);
}

#define HELD_EVENTS 20000u
#define HELD_TAG 0x4e1du

/* The keeper killed while it holds blocks it drained and could not write
 * yet (its log is a pipe nobody reads, on which it waits to write an
 * explicit flush): the keeper
 * that replaces it counts them lost.  Every one of the 20,000 events is in
 * the log or in its lost count. */
START_TEST(keeper_killed_holding_blocks_counts_them)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	int out = lt_new_log_file();
	trace_id_t trid;
	ck_assert_ok(lt_create_log(p[1], POSIX_TRACE_APPEND, 0, POSIX_TRACE_LOOP, 4u << 20, &trid));
	close(p[1]);
	ck_assert_ok(posix_trace_start(trid));
	pid_t keeper = lt_find_keeper();
	ck_assert_int_gt(keeper, 0);
	trace_event_id_t id = pt_event_id("loss.held");
	for (uint32_t i = 0; i < HELD_EVENTS; i++) {
		uint32_t data[2] = {HELD_TAG, i};
		posix_trace_event(id, data, sizeof data);
	}
	ck_assert_ok(posix_trace_flush(trid));
	/* Drained: the keeper writes an explicit flush in line once drained,
	 * and waits on the full pipe. */
	int waited = 0;
	while (!loss_waits_in(keeper, "pipe", 1)) {
		ck_assert_msg(waited < 10000, "the keeper did not come to wait on its pipe");
		pt_sleep_ms(5);
		waited += 5;
	}
	ck_assert_int_eq(kill(keeper, SIGKILL), 0);
	pid_t pump = loss_pump(p[0], out);
	ck_assert_int_ge(pump, 0);
	pt_track(pump);
	close(p[0]);
	int err = posix_trace_shutdown(trid);
	ck_assert_int_eq(pt_wait_exit(pump, 15000), 0);
	uint64_t lost;
	int closed;
	uint64_t logged = loss_tagged(out, HELD_TAG, &lost, &closed);
	printf("keeper killed holding blocks: shutdown %s, logged %llu, lost %llu, %s\n",
	       strerror(err), (unsigned long long)logged, (unsigned long long)lost,
	       closed ? "closed" : "cut short");
	/* Events of blocks the killed keeper wrote whole into the pipe but had
	 * not published yet are both in the log and counted: never less. */
	ck_assert_uint_ge(logged + lost, HELD_EVENTS);
	ck_assert_uint_le(lost, HELD_EVENTS);
	ck_assert_int_eq(err, EIO); /* the keeper died: said */
	ck_assert_int_eq(closed, 1);
}
END_TEST

#define SECCOMP_EVENTS 25000u
#define SECCOMP_TAG 0x5ecu

/* A seccomp filter that makes sendto (and sendmsg too, with `both`) fail
 * with EPERM, and nothing else. */
static int deny_sending(int both)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_sendto, 2, 0),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, both ? __NR_sendmsg : __NR_sendto, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return errno;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0 ? errno : 0;
}

/* A program that is its own controller under a seccomp filter denying
 * sendto (send's system call; with _i 1, sendmsg too): its 25,000 events
 * are in the log or in its lost count, and its shutdown finishes the log
 * (its keeper, which it cannot send to, is told the end by end of file). */
START_TEST(seccomp_denying_sendto_loses_nothing_unsaid)
{
	int fd = lt_new_log_file();
	trace_event_id_t id = pt_event_id("loss.seccomp");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (deny_sending(_i) != 0)
			_exit(100);
		trace_id_t trid;
		if (lt_create_log(fd, 0, 0, 0, 0, &trid) || posix_trace_start(trid))
			_exit(101);
		for (uint32_t i = 0; i < SECCOMP_EVENTS; i++) {
			uint32_t data[2] = {SECCOMP_TAG, i};
			posix_trace_event(id, data, sizeof data);
			if (i % 5000 == 4999)
				posix_trace_flush(trid);
		}
		_exit(posix_trace_shutdown(trid));
	}
	pt_track(pid);
	int status = pt_wait_exit(pid, 15000);
	ck_assert_msg(WIFEXITED(status), "the program did not exit");
	ck_assert_int_ne(WEXITSTATUS(status), 100);
	uint64_t lost;
	int closed;
	uint64_t logged = loss_tagged(fd, SECCOMP_TAG, &lost, &closed);
	printf("seccomp (sendto%s denied): shutdown %d (%s), logged %llu, lost %llu, %s\n",
	       _i ? " and sendmsg" : "", WEXITSTATUS(status),
	       strerror(WEXITSTATUS(status)), (unsigned long long)logged, (unsigned long long)lost,
	       closed ? "closed" : "cut short");
	ck_assert_uint_eq(logged + lost, SECCOMP_EVENTS);
	ck_assert_int_eq(WEXITSTATUS(status), 0);
	ck_assert_int_eq(closed, 1);
}
END_TEST

#define NOFD_TAG 0xfdu

/* A process that has used up its descriptors (as RLIMIT_NOFILE=16 makes a
 * traced program do) still names its program in the images its stream
 * records: the event's image is the program's file. */
START_TEST(program_named_without_a_descriptor)
{
	int fd = lt_new_log_file();
	trace_event_id_t id = pt_event_id("loss.nofd");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		trace_id_t trid;
		if (lt_create_log(fd, 0, 0, 0, 0, &trid) || posixtrace_set_images(trid, 1) ||
		    posix_trace_start(trid))
			_exit(101);
		struct rlimit rl = {16, 16};
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0)
			_exit(102);
		int first = -1, last = -1;
		for (int d; (d = dup(0)) >= 0; last = d)
			if (first < 0)
				first = d;
		if (errno != EMFILE)
			_exit(103);
		uint32_t data[2] = {NOFD_TAG, 0};
		posix_trace_event(id, data, sizeof data);
		for (int d = first; first >= 0 && d <= last; d++)
			close(d);
		_exit(posix_trace_shutdown(trid));
	}
	pt_track(pid);
	int status = pt_wait_exit(pid, 15000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the program: status %#x",
	              status);
	char want[PATH_MAX];
	ck_assert_ptr_nonnull(realpath("/proc/self/exe", want));
	trace_id_t rd;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	struct posix_trace_event_info info;
	unsigned char data[64];
	size_t len;
	int unavailable = 0, seen = 0;
	for (;;) {
		ck_assert_ok(posix_trace_getnext_event(rd, &info, data, sizeof data, &len, &unavailable));
		if (unavailable)
			break;
		if (info.posix_event_id < POSIX_TRACE_UNNAMED_USEREVENT)
			continue;
		struct posixtrace_image img;
		int err = posixtrace_event_image(rd, &info, &img);
		printf("event at %p: image %s (%s)\n", info.posix_prog_address,
		       err ? "none" : img.posixtrace_path, strerror(err));
		ck_assert_int_eq(err, 0);
		ck_assert_str_eq(img.posixtrace_path, want);
		seen++;
	}
	ck_assert_ok(posix_trace_close(rd));
	ck_assert_int_eq(seen, 1);
}
END_TEST

#define AS_EVENTS 25000u
#define AS_WRITER 7u

/* A program started under RLIMIT_AS=256M, which leaves no room for the
 * whole of a default stream's memory (its reserve is 261 MiB), joining a
 * stream traced with inheritance (as under posixtrace record): it maps
 * what fits, records there, and every one of its 25,000 events is in the
 * log or in its lost count; the stream says one process mapped it short. */
START_TEST(joiner_under_rlimit_as_counts_what_did_not_fit)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	printf("joiner_under_rlimit_as: not under AddressSanitizer or ThreadSanitizer, whose "
	       "shadow memory does not fit in 256 MiB of address space\n");
	return;
#endif
	int fd = lt_new_log_file();
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED));
	ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, POSIX_TRACE_FLUSH));
	ck_assert_ok(posix_trace_create_withlog(0, &attr, fd, &trid));
	ck_assert_ok(posix_trace_start(trid));
	char *helper = pt_helper_path("wl_post");
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rlimit rl = {256u << 20, 256u << 20};
		if (setrlimit(RLIMIT_AS, &rl) != 0)
			_exit(100);
		execl(helper, "wl_post", "-w", "7", "-c", "25000", "-n", "loss.as", (char *)NULL);
		_exit(101);
	}
	pt_track(pid);
	int status = pt_wait_exit(pid, 30000);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "wl_post: status %#x", status);
	struct posixtrace_rendezvous_info rdv;
	ck_assert_ok(posixtrace_rendezvous_info(trid, &rdv));
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));

	trace_id_t rd;
	ck_assert_int_eq(lseek(fd, 0, SEEK_SET), 0);
	ck_assert_ok(posix_trace_open(fd, &rd));
	uint64_t logged = 0;
	struct loss_ev ev;
	while (loss_next(rd, &ev)) {
		struct pt_payload p;
		if (ev.id < POSIX_TRACE_UNNAMED_USEREVENT || ev.len != sizeof p)
			continue;
		memcpy(&p, ev.data, sizeof p);
		logged += p.writer == AS_WRITER;
	}
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(rd, &st));
	ck_assert_ok(posix_trace_close(rd));
	printf("joiner under RLIMIT_AS: logged %llu, lost %llu, short maps %llu\n",
	       (unsigned long long)logged, (unsigned long long)st.posixtrace_lost_events,
	       (unsigned long long)rdv.posixtrace_short_maps);
	ck_assert_uint_eq(logged + st.posixtrace_lost_events, AS_EVENTS);
	ck_assert_uint_eq(rdv.posixtrace_short_maps, 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loss");
	TCase *tc = pt_tcase(s, "keeper_killed");
	tcase_set_timeout(tc, 20 + 8 * loss_env("PT_LOSS_ROUNDS", 10));
	tcase_add_test(tc, random_kills_lose_nothing_unsaid);
	tc = pt_tcase_fixture(s, "keeper_held", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, keeper_killed_holding_blocks_counts_them);
	tc = pt_tcase_fixture(s, "seccomp", pt_children_setup, pt_kill_children);
	tcase_add_loop_test(tc, seccomp_denying_sendto_loses_nothing_unsaid, 0, 2);
	tc = pt_tcase_fixture(s, "address_space", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, joiner_under_rlimit_as_counts_what_did_not_fit);
	tc = pt_tcase_fixture(s, "descriptors", pt_children_setup, pt_kill_children);
	tcase_add_test(tc, program_named_without_a_descriptor);
	return pt_run(s);
}
