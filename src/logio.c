/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer's output (logio.h): sealed blocks go to the file
 * from one buffer at a time, written by a thread of the keeper (signals
 * blocked) while the next buffer fills, or in line when it could not be
 * started; and the writer's progress, published to the controller only
 * after the bytes it describes are written (two copies and a generation
 * count, so a new keeper always finds a consistent one).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "logio.h"

/* A call that may block on the log's destination (a slow disk, a full
 * pipe): the controller does not count that time against the keeper
 * (ms_left, keepctl.c).  A count only, read by the controller: relaxed. */
void pt_logio_destination_wait(struct pt_logw_state *st, int begin)
{
	if (st)
		__atomic_fetch_add(&st->in_io, begin ? 1u : ~0u, __ATOMIC_RELAXED);
}

int pt_logio_write_all(int fd, int seekable, const void *buf, size_t len, uint64_t off)
{
	const unsigned char *p = buf;
	while (len) {
		ssize_t n = seekable ? pwrite(fd, p, len, (off_t)off) : write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (n == 0)
			return EIO;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

/* ---- progress ----------------------------------------------------------- */

void pt_logio_keep_error(struct pt_logw *w, int err)
{
	if (!err)
		return;
	if (!w->done.error)
		w->done.error = err;
	if (!w->prog.error)
		w->prog.error = err;
}

/* Publishes w->done: the copy not current first, then the generation that
 * makes it current (release: pairs with the acquire loads of gen in
 * pt_logw_read_progress and pt_logw_progress, logwrite.h). */
void pt_logio_commit(struct pt_logw *w)
{
	struct pt_logw_state *st = w->st;
	uint64_t next = __atomic_load_n(&st->gen, __ATOMIC_RELAXED) + 1;
	/* The slot written now is the one readers copied two commits ago:
	 * release stores keep the last publication first (pairs with the
	 * acquire loads of pt_logw_read_progress, which then sees gen moved if
	 * it copied any of this). */
	uint64_t words[sizeof w->done / 8];
	memcpy(words, &w->done, sizeof words);
	uint64_t *dst = (uint64_t *)(void *)&st->prog[next & 1];
	for (size_t i = 0; i < sizeof words / 8; i++)
		__atomic_store_n(&dst[i], words[i], __ATOMIC_RELEASE);
	__atomic_store_n(&st->gen, next, __ATOMIC_RELEASE);
}

_Static_assert(sizeof(struct pt_logw_progress) % 8 == 0, "progress in words");

void pt_logw_read_progress(const struct pt_logw_state *st, struct pt_logw_progress *out)
{
	enum { WORDS = sizeof(struct pt_logw_progress) / 8 };
	uint64_t copy[WORDS];
	for (;;) {
		/* Pairs with the release store of gen in pt_logio_commit. */
		uint64_t gen = __atomic_load_n(&st->gen, __ATOMIC_ACQUIRE);
		const uint64_t *src = (const uint64_t *)(const void *)&st->prog[gen & 1];
		/* Acquire loads: the second look at gen cannot come first. */
		for (size_t i = 0; i < WORDS; i++)
			copy[i] = __atomic_load_n(&src[i], __ATOMIC_ACQUIRE);
		/* Only an unchanged gen proves the copy whole: the commit after
		 * next writes the very slot copied. */
		if (__atomic_load_n(&st->gen, __ATOMIC_ACQUIRE) == gen)
			break;
	}
	memcpy(out, copy, sizeof copy);
}

/* ---- writing ------------------------------------------------------------ */

static int write_ring(const struct pt_logw *w, const struct pt_logw_job *j)
{
	uint64_t seq = j->first_seq;
	uint32_t i = 0, bs = w->block_size;
	while (i < j->nblocks) {
		uint64_t slot = seq % w->ring_slots;
		uint64_t run = j->nblocks - i;
		if (run > w->ring_slots - slot)
			run = w->ring_slots - slot;
		const unsigned char *last = j->buf + (size_t)(i + run - 1) * bs;
		struct pt_log_block b;
		memcpy(&b, last, sizeof b);
		size_t bytes = (size_t)(run - 1) * bs + PT_LOG_BLOCK_HDR + b.payload_len;
		int err = pt_logio_write_all(w->fd, 1, j->buf + (size_t)i * bs, bytes,
		                    w->data_off + slot * bs);
		if (err)
			return err;
		i += (uint32_t)run;
		seq += run;
	}
	return 0;
}

/* A linear log on a file keeps at most DIRTY_MAX bytes not yet on disk:
 * writeback of each write starts at once, and a write waits for the data
 * DIRTY_MAX behind it.  The keeper then writes at the disk's rate, not
 * the page cache's, and the end's fdatasync has little left to do. */
#define DIRTY_MAX (64ull << 20)

static void bound_dirty(struct pt_logw *w, const struct pt_logw_job *j)
{
	if (!w->seekable || w->layout != PT_LOG_LINEAR || !j->len)
		return;
	sync_file_range(w->fd, (off_t)j->off, (off_t)j->len, SYNC_FILE_RANGE_WRITE);
	uint64_t end = j->off + j->len;
	if (end < DIRTY_MAX || end - DIRTY_MAX <= w->written_back)
		return;
	uint64_t to = end - DIRTY_MAX;
	if (w->written_back < w->data_off)
		w->written_back = w->data_off;
	sync_file_range(w->fd, (off_t)w->written_back, (off_t)(to - w->written_back),
	                SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
	                    SYNC_FILE_RANGE_WAIT_AFTER);
	w->written_back = to;
}

static int write_job(struct pt_logw *w, const struct pt_logw_job *j)
{
	int err;
	pt_logio_destination_wait(w->st, 1);
	if (w->layout == PT_LOG_RING) {
		err = write_ring(w, j);
	} else {
		err = pt_logio_write_all(w->fd, w->seekable, j->buf, j->len, j->off);
		if (!err)
			bound_dirty(w, j);
	}
	pt_logio_destination_wait(w->st, 0);
	return err;
}

/* The sealed blocks of the buffer (flushes happen between blocks: never
 * the block being filled). */
static struct pt_logw_job buffer_job(const struct pt_logw *w)
{
	struct pt_logw_job j = {
	    .buf = w->out,
	    .len = w->out_len,
	    .nblocks = w->out_blocks,
	    .first_seq = w->out_first_seq,
	    .off = w->out_off,
	    .after = w->prog,
	};
	return j;
}

void pt_logio_emptied(struct pt_logw *w)
{
	w->out_len = 0;
	w->out_blocks = 0;
	w->out_first_seq = w->prog.seq;
	w->out_off = w->prog.write_off;
}

/* The writing thread: one buffer at a time.  A buffer whose write failed
 * still counts as written (its first error is kept): the blocks after it
 * are already on their way, and a reader reports the damage there. */
static void *io_main(void *arg)
{
	struct pt_logw *w = arg;
	pthread_mutex_lock(&w->io_lock);
	for (;;) {
		while (!w->io_busy && !w->io_stop)
			pthread_cond_wait(&w->io_cond, &w->io_lock);
		if (!w->io_busy)
			break;
		struct pt_logw_job j = w->io_job;
		pthread_mutex_unlock(&w->io_lock);
		int err = write_job(w, &j);
		pthread_mutex_lock(&w->io_lock);
		int32_t first = w->done.error ? w->done.error : j.after.error ? j.after.error : err;
		w->done = j.after;
		w->done.error = first;
		pt_logio_commit(w);
		w->io_busy = 0;
		pthread_cond_broadcast(&w->io_cond);
	}
	pthread_mutex_unlock(&w->io_lock);
	return NULL;
}

/* Waits until the thread has written what it was given. */
void pt_logio_wait(struct pt_logw *w)
{
	if (!w->io_running)
		return;
	pthread_mutex_lock(&w->io_lock);
	while (w->io_busy)
		pthread_cond_wait(&w->io_cond, &w->io_lock);
	pthread_mutex_unlock(&w->io_lock);
	if (!w->prog.error)
		w->prog.error = w->done.error;
}

void pt_logio_start(struct pt_logw *w)
{
	sigset_t all, old;
	if (pthread_mutex_init(&w->io_lock, NULL) != 0)
		return;
	if (pthread_cond_init(&w->io_cond, NULL) != 0) {
		pthread_mutex_destroy(&w->io_lock);
		return;
	}
	/* No signal for the writing thread: they are the keeper's. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w->io_running = pthread_create(&w->io_thread, NULL, io_main, w) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!w->io_running) {
		pthread_cond_destroy(&w->io_cond);
		pthread_mutex_destroy(&w->io_lock);
	}
}

void pt_logio_stop(struct pt_logw *w)
{
	if (!w->io_running)
		return;
	pthread_mutex_lock(&w->io_lock);
	w->io_stop = 1;
	pthread_cond_broadcast(&w->io_cond);
	pthread_mutex_unlock(&w->io_lock);
	pthread_join(w->io_thread, NULL);
	pthread_cond_destroy(&w->io_cond);
	pthread_mutex_destroy(&w->io_lock);
	w->io_running = 0;
}

/* Writes the buffer now, after what the thread is writing. */
void pt_logio_flush(struct pt_logw *w)
{
	pt_logio_wait(w);
	if (!w->out_blocks)
		return;
	struct pt_logw_job j = buffer_job(w);
	int err = write_job(w, &j);
	/* As in io_main: a failed write still counts as written, so that what
	 * reached the file (the blocks before the failure: a disk that filled
	 * up) is not written over by later blocks. */
	pt_logio_keep_error(w, err);
	int32_t first = w->done.error ? w->done.error : w->prog.error ? w->prog.error : err;
	w->done = w->prog;
	w->done.error = first;
	pt_logio_emptied(w);
	pt_logio_commit(w);
}

/* The buffer cannot take another block: the thread writes it while the
 * other buffer fills. */
void pt_logio_flush_full(struct pt_logw *w)
{
	if (!w->io_running) {
		pt_logio_flush(w);
		return;
	}
	pthread_mutex_lock(&w->io_lock);
	while (w->io_busy)
		pthread_cond_wait(&w->io_cond, &w->io_lock);
	w->io_job = buffer_job(w);
	w->io_busy = 1;
	pthread_cond_broadcast(&w->io_cond);
	pthread_mutex_unlock(&w->io_lock);
	unsigned char *full = w->out;
	w->out = w->spare;
	w->spare = full;
	pt_logio_emptied(w);
}
