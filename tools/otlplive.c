/* SPDX-License-Identifier: MIT */
/*
 * record and attach --otlp: spans and log records sent while recording
 * (docs/OTLP.md, "Sending while recording").
 *
 * The library has no network code, and an active stream with a log cannot
 * be read, so the command follows the log: --otlp writes it as a rotated
 * log (NNNNNNNN.ptlog files, each a complete APPEND log), and a thread of
 * the command exports each file once it is complete, carrying the spans
 * still open from one file to the next (otlp.c's live mode).  A file is
 * complete when the keeper has closed it: the next file exists and this
 * one, read to its end, says it was closed (its END record), or two later
 * files exist (a keeper that died and a new one that went on), or the
 * recording is over.  The keeper writes its files whatever this thread
 * does: the traced processes write into the stream, the keeper into the
 * files, and neither ever waits for this thread or the network.  If this
 * thread falls behind, the files wait on disk: with --rotate SIZE,COUNT
 * the keeper removes the oldest ones, and a file removed before it was
 * read is counted, never sent.
 *
 * Memory: one file read at a time (the reader's own bounds), what otlp.c
 * keeps (the open spans, at most OTLP_OPEN_SPANS_MAX, and one batch per
 * signal), one request at a time.
 *
 * At the end (otlp_live_finish) the rest is read and sent within a bounded
 * wait; past it, or on a stop signal, the request under way is given up
 * and the files left are read and counted without being sent.  The stop
 * signals are blocked in this thread: they reach the command's main
 * thread, whose waits they end.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <posixtrace.h>

#include "otlp.h"

#define POLL_MS 100 /* how often the thread looks for a completed file */
#define FILE_DIGITS 8

struct otlp_live {
	struct otlp_cli *cli;
	struct otlp_sender *sender;
	struct otlp_exporter *x;
	int dirfd;
	const char *label;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool ended; /* the recording is over: every file is complete */
	bool done;  /* the thread has sent (or counted) everything */
	atomic_bool cancel;
	uint64_t next; /* the number of the next file to export */
	uint64_t files_sent, files_missed, files_unread;
	uint64_t lost;
	enum log_state state;
	bool read_failed;
	/* One table of call sites for all the files, as for a rotated log read
	 * as one trace: what an earlier file's images named is known in a
	 * later file (whose images may not all be repeated). */
	struct site_table sites;
	bool sites_ready;
};

static int open_numbered(int dirfd, uint64_t n)
{
	char name[32];
	snprintf(name, sizeof name, "%0*llu.ptlog", FILE_DIGITS, (unsigned long long)n);
	return openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
}

static bool numbered_exists(int dirfd, uint64_t n)
{
	char name[32];
	snprintf(name, sizeof name, "%0*llu.ptlog", FILE_DIGITS, (unsigned long long)n);
	return faccessat(dirfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
}

/* The smallest number of a file past n, 0 if there is none. */
static uint64_t first_file_after(int dirfd, uint64_t n)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	uint64_t best = 0;
	struct dirent *e;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		const char *s = e->d_name;
		if (strlen(s) != FILE_DIGITS + 6 || strspn(s, "0123456789") != FILE_DIGITS ||
		    strcmp(s + FILE_DIGITS, ".ptlog"))
			continue;
		uint64_t v = strtoull(s, NULL, 10);
		if (v > n && (!best || v < best))
			best = v;
	}
	closedir(d);
	return best;
}

/* Read to its end, the file says it was closed by its keeper. */
static bool log_closed(struct trace_log *log)
{
	struct trace_event ev;
	struct posixtrace_log_info info;
	while (trace_log_skim(log, &ev) > 0)
		;
	bool closed = posixtrace_log_info(log->trid, &info) == 0 && info.posixtrace_closed;
	trace_log_rewind(log);
	return closed;
}

static void export_file(struct otlp_live *l, struct trace_log *log)
{
	uint64_t lost;
	if (!l->sites_ready && sites_init(&l->sites, log, &l->cli->otlp.sites)) {
		l->sites_ready = true;
		l->sites.no_images = false; /* a later file may have images */
	}
	l->sites.log = log;
	if (!l->sites_ready || otlp_live_file(l->x, log, &l->sites) != 0)
		l->read_failed = true;
	enum log_state s = log_state(log);
	if (s > l->state)
		l->state = s;
	if (trace_log_lost(log, &lost) && lost > l->lost)
		l->lost = lost; /* each file counts the stream's losses since it began */
	l->files_sent++;
}

/* The next file, exported if it is complete: 1 when something was done
 * (a file exported or passed over), 0 when it is not complete yet, -1
 * when there is none left (the recording is over). */
static int export_next(struct otlp_live *l, bool ended)
{
	int fd = open_numbered(l->dirfd, l->next);
	if (fd < 0 && errno == ENOENT) {
		uint64_t later = first_file_after(l->dirfd, l->next);
		if (!later)
			return ended ? -1 : 0;
		/* removed past --rotate's COUNT before it was read */
		l->files_missed += later - l->next;
		l->next = later;
		return 1;
	}
	if (fd < 0) {
		error_msg("otlp: %s: file %llu: %s", l->label, (unsigned long long)l->next,
		          strerror(errno));
		l->files_unread++;
		l->next++;
		return 1;
	}
	bool later = numbered_exists(l->dirfd, l->next + 1);
	if (!ended && !later) {
		close(fd);
		return 0;
	}
	char label[64];
	snprintf(label, sizeof label, "%0*llu.ptlog", FILE_DIGITS, (unsigned long long)l->next);
	struct trace_log *log = trace_log_open_fd(fd, label);
	close(fd);
	if (!log) {
		l->files_unread++;
		l->next++;
		return 1;
	}
	if (!ended && !numbered_exists(l->dirfd, l->next + 2) && !log_closed(log)) {
		trace_log_close(log); /* the keeper is closing it: again soon */
		return 0;
	}
	export_file(l, log);
	trace_log_close(log);
	l->next++;
	return 1;
}

static void wait_a_poll(struct otlp_live *l)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += POLL_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&l->lock);
	if (!l->ended)
		pthread_cond_timedwait(&l->cond, &l->lock, &until);
	pthread_mutex_unlock(&l->lock);
}

/* The sender is the least urgent work of the recording: niced by
 * SENDER_NICE (this thread only, Linux's per-thread priority), so that on a
 * busy machine the traced program and the keeper run first and the files
 * wait on disk instead. */
#define SENDER_NICE 10

static void *sender_main(void *arg)
{
	struct otlp_live *l = arg;
	errno = 0;
	int nice_now = getpriority(PRIO_PROCESS, 0);
	if (errno == 0)
		(void)setpriority(PRIO_PROCESS, (id_t)gettid(),
		                  nice_now + SENDER_NICE > 19 ? 19 : nice_now + SENDER_NICE);
	for (;;) {
		pthread_mutex_lock(&l->lock);
		bool ended = l->ended;
		pthread_mutex_unlock(&l->lock);
		int r = export_next(l, ended);
		if (r < 0)
			break;
		if (r == 0)
			wait_a_poll(l);
	}
	otlp_live_end(l->x, l->lost, l->state);
	if (l->sites_ready) {
		sites_notes(&l->sites, "otlp");
		sites_free(&l->sites);
	}
	pthread_mutex_lock(&l->lock);
	l->done = true;
	pthread_cond_broadcast(&l->cond);
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

static void live_free(struct otlp_live *l)
{
	otlp_exporter_free(l->x);
	otlp_sender_free(l->sender);
	pthread_mutex_destroy(&l->lock);
	pthread_cond_destroy(&l->cond);
	if (l->dirfd >= 0)
		close(l->dirfd);
	free(l);
}

struct otlp_live *otlp_live_start(struct otlp_cli *cli, int dirfd, const char *label)
{
	struct otlp_live *l = xmalloc(sizeof *l);
	memset(l, 0, sizeof *l);
	atomic_init(&l->cancel, false);
	l->cli = cli;
	l->label = label;
	l->next = 1;
	cli->config.cancel = &l->cancel;
	cli->config.label = "otlp";
	pthread_mutex_init(&l->lock, NULL);
	pthread_cond_init(&l->cond, NULL);
	l->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	/* the sender (libcurl's start) before any thread */
	if (l->dirfd < 0 || !(l->sender = otlp_sender_new(&cli->config))) {
		if (l->dirfd < 0)
			error_msg("otlp: %s: %s", label, strerror(errno));
		live_free(l);
		return NULL;
	}
	l->x = otlp_exporter_new(&cli->otlp, l->sender);
	otlp_live_begin(l->x, now_realtime_ns(), getpid());
	sigset_t stops, old;
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigaddset(&stops, SIGUSR1);
	pthread_sigmask(SIG_BLOCK, &stops, &old);
	int err = pthread_create(&l->thread, NULL, sender_main, l);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		error_msg("otlp: cannot start the sender: %s", strerror(err));
		live_free(l);
		return NULL;
	}
	return l;
}

static void print_live_summary(struct otlp_live *l)
{
	otlp_print_summary("otlp", l->sender, l->x, l->cli->config.discard);
	fprintf(stderr, "%s otlp: %llu files of %s read and %s", PROG,
	        (unsigned long long)l->files_sent, l->label,
	        l->cli->config.discard ? "encoded (discarded)" : "sent");
	if (l->files_missed)
		fprintf(stderr, ", %llu removed (--rotate's COUNT) before they were read: their "
		        "events were not sent", (unsigned long long)l->files_missed);
	if (l->files_unread)
		fprintf(stderr, ", %llu could not be read", (unsigned long long)l->files_unread);
	fputc('\n', stderr);
	if (otlp_sender_cancelled(l->sender))
		note_msg("otlp: the wait for the receiver at the end was over: %llu requests "
		         "not sent (their items are counted dropped)",
		         (unsigned long long)otlp_sender_cancelled(l->sender));
}

int otlp_live_finish(struct otlp_live *l, double wait)
{
	if (!l)
		return 0;
	/* a new stop signal cuts the wait short */
	stop_requested = 0;
	uint64_t deadline = now_realtime_ns() + (uint64_t)(wait * 1e9);
	pthread_mutex_lock(&l->lock);
	l->ended = true;
	pthread_cond_broadcast(&l->cond);
	while (!l->done) {
		if (stop_requested || now_realtime_ns() >= deadline) {
			atomic_store(&l->cancel, true);
			break;
		}
		struct timespec until;
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += POLL_MS * 1000000L;
		if (until.tv_nsec >= 1000000000L) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&l->cond, &l->lock, &until);
	}
	pthread_mutex_unlock(&l->lock);
	pthread_join(l->thread, NULL);
	const struct otlp_counts *sp = otlp_sender_counts(l->sender, OTLP_TRACES);
	const struct otlp_counts *lr = otlp_sender_counts(l->sender, OTLP_LOGS);
	bool delivered = !sp->refused && !sp->dropped && !lr->refused && !lr->dropped &&
	                 !l->files_missed && !l->files_unread && !l->read_failed;
	print_live_summary(l);
	live_free(l);
	return delivered ? 0 : EXIT_FAIL;
}
