/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer's output (logio.h): sealed blocks go to the file
 * through a bounded queue of buffers, written in order by a thread of the
 * keeper (signals blocked) while the next buffer fills, or in line when it
 * could not be started; and the writer's progress, published to the
 * controller only after the bytes it describes are written (two copies and
 * a generation count, so a new keeper always finds a consistent one).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include <stddef.h>
#include <stdlib.h>
#include "crc32c.h"
#include "logio.h"
#include "../memcheck.h"

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
 * pt_logw_read_progress, below, and pt_logw_progress, logwstate.h). */
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
 * the page cache's, and the end's fdatasync has little left to do.
 * What is on disk then leaves the page cache: a log of gigabytes does not
 * push the machine's working set out, and the next writes take pages just
 * freed instead of fresh ones (on a VM whose host backs guest memory
 * lazily, a fresh page cost more than its copy: 0.37 against 2.1 GB/s,
 * docs/PERFORMANCE.md). */
#define DIRTY_MAX (64ull << 20)
#define DROP_ALIGN (2ull << 20)

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
	/* Advice only: a page still dirty (rewritten meanwhile) stays.  From
	 * the large folio that held the last range's end (up to 2 MiB), which
	 * that range did not cover whole, so stayed; never the header's page,
	 * which is rewritten in place. */
	uint64_t from = w->written_back & ~(DROP_ALIGN - 1);
	if (from < w->data_off)
		from = w->data_off;
	(void)posix_fadvise(w->fd, (off_t)from, (off_t)(to - from), POSIX_FADV_DONTNEED);
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

/* The header of a seekable log as progress d describes it. */
void pt_logio_header_image(const struct pt_logw *w, const struct pt_logw_progress *d,
                           struct pt_log_header *h)
{
	*h = w->st->hdr;
	h->flags |= d->flags;
	h->nnames = d->nnames;
	h->status = d->status;
	h->waits = pt_log_header_waits_of(&d->waits);
	h->blocks_written = d->seq;
	h->data_end = w->seekable && w->layout == PT_LOG_LINEAR ? d->write_off : 0;
	h->crc = pt_crc32c(0, h, offsetof(struct pt_log_header, crc));
}

/* In place: one write within the file's first sector. */
int pt_logio_header_rewrite(const struct pt_logw *w, const struct pt_logw_progress *d)
{
	struct pt_log_header h;
	pt_logio_header_image(w, d, &h);
	return pt_logio_write_all(w->fd, 1, &h, sizeof h, 0);
}

/* The sealed blocks of the buffer not handed yet (flushes happen between
 * blocks: never the block being filled). */
static struct pt_logw_job buffer_job(const struct pt_logw *w)
{
	struct pt_logw_job j = {
	    .buf = w->out + w->out_handed,
	    .len = w->out_len - w->out_handed,
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
	w->out_handed = 0;
	w->out_blocks = 0;
	w->out_first_seq = w->prog.seq;
	w->out_off = w->prog.write_off;
}

/* What was handed is the thread's: the buffer goes on after it. */
static void handed(struct pt_logw *w)
{
	w->out_handed = w->out_len;
	w->out_blocks = 0;
	w->out_first_seq = w->prog.seq;
	w->out_off = w->prog.write_off;
}

/* ---- the writing thread and its queue ----------------------------------- */

/* Buffers the queue may hold, the one filling included: eight times the
 * stream, but at least 64 MiB and at most 256 MiB (DESIGN.md, "The
 * keeper's output queue"); each one past the first two also has to fit in
 * the memory the process may still use (pt_mem_headroom). */
#define QUEUE_MIN (64ull << 20)
#define QUEUE_MAX (256ull << 20)
#define QUEUE_STREAMS 8u

static uint32_t pt_logio_max_buffers(uint64_t stream_size, size_t cap)
{
	uint64_t bound = stream_size > QUEUE_MIN / QUEUE_STREAMS ? stream_size * QUEUE_STREAMS
	                                                          : QUEUE_MIN;
	if (bound > QUEUE_MAX || stream_size > QUEUE_MAX / QUEUE_STREAMS)
		bound = QUEUE_MAX;
	uint64_t n = bound / cap;
	return n < 2 ? 2 : n > 4096 ? 4096 : (uint32_t)n;
}

/* A job's blocks, then the header it asks for: the progress they make
 * (a failed write still counts as written, its first error kept: the
 * blocks after it are already on their way, and a reader reports the
 * damage there).  w->done is only read: it is the thread's while a job is
 * queued, and the keeper reads it under io_lock. */
static struct pt_logw_progress run_job(struct pt_logw *w, const struct pt_logw_job *j)
{
	int err = write_job(w, j);
	struct pt_logw_progress d = j->after;
	d.error = w->done.error ? w->done.error : j->after.error ? j->after.error : err;
	if (j->header && w->seekable) {
		pt_logio_destination_wait(w->st, 1);
		err = pt_logio_header_rewrite(w, &d);
		pt_logio_destination_wait(w->st, 0);
		if (!d.error)
			d.error = err;
	}
	return d;
}

/* The writing thread: the jobs in the order handed. */
static void *io_main(void *arg)
{
	struct pt_logw *w = arg;
	pthread_mutex_lock(&w->io_lock);
	for (;;) {
		while (!w->njobs && !w->io_stop)
			pthread_cond_wait(&w->io_cond, &w->io_lock);
		if (!w->njobs)
			break;
		struct pt_logw_job j = w->jobs[w->job_first];
		w->io_busy = 1; /* no longer grows (queue_job) */
		pthread_mutex_unlock(&w->io_lock);
		struct pt_logw_progress d = run_job(w, &j);
		pthread_mutex_lock(&w->io_lock);
		w->done = d;
		pt_logio_commit(w);
		if (j.release)
			w->pool[w->npool++] = j.release;
		w->job_first = (w->job_first + 1) % (w->max_bufs + 1);
		w->njobs--;
		w->io_busy = 0;
		pthread_cond_broadcast(&w->io_cond);
	}
	pthread_mutex_unlock(&w->io_lock);
	return NULL;
}

/* Hands the buffer's sealed blocks not handed yet to the thread; release:
 * the buffer is done with once they are written.  Blocks that follow the
 * last job queued in the same buffer join it, so that a buffer has at
 * most two jobs (one being written) and the ring never fills. */
static void queue_job(struct pt_logw *w, unsigned char *release, int header)
{
	struct pt_logw_job j = buffer_job(w);
	j.release = release;
	j.header = header;
	pthread_mutex_lock(&w->io_lock);
	uint32_t ring = w->max_bufs + 1;
	struct pt_logw_job *last = w->njobs ? &w->jobs[(w->job_first + w->njobs - 1) % ring] : NULL;
	if (last && (w->njobs > 1 || !w->io_busy) && !last->release &&
	    last->buf + last->len == j.buf) {
		last->len += j.len;
		last->nblocks += j.nblocks;
		last->after = j.after;
		last->release = release;
		last->header |= header;
	} else {
		w->jobs[(w->job_first + w->njobs) % ring] = j;
		w->njobs++;
	}
	/* The thread's errors so far become the keeper's to report. */
	if (!w->prog.error)
		w->prog.error = w->done.error;
	pthread_cond_broadcast(&w->io_cond);
	pthread_mutex_unlock(&w->io_lock);
}

/* Whether one more buffer fits the budget shared with the other keepers
 * of the controller (a queue without a slot keeps to its first two). */
static int budget_allows(const struct pt_logw *w)
{
	if (!w->budget)
		return 1;
	if (w->budget_slot < 0)
		return 0;
	uint64_t sum = 0;
	/* Counts only, each keeper's own: relaxed (two keepers that grow at
	 * once may pass the budget by a buffer each). */
	for (int i = 0; i < PT_QUEUE_KEEPERS; i++)
		sum += atomic_load_explicit(&w->budget->held[i], memory_order_relaxed);
	return sum + w->out_cap <= PT_QUEUE_BUDGET;
}

static void budget_note(const struct pt_logw *w)
{
	if (w->budget && w->budget_slot >= 0)
		atomic_store_explicit(&w->budget->held[w->budget_slot], (uint64_t)w->nbufs * w->out_cap,
		                      memory_order_relaxed);
}

int pt_logio_share_budget(struct pt_logw *w, struct pt_queue_budget *b)
{
	w->budget = b;
	w->budget_slot = -1;
	int32_t self = (int32_t)getpid();
	for (int i = 0; b && i < PT_QUEUE_KEEPERS; i++) {
		int32_t none = 0;
		if (atomic_compare_exchange_strong_explicit(&b->owner[i], &none, self,
		                                            memory_order_relaxed, memory_order_relaxed)) {
			/* nbufs changes in this thread only (take_buffer). */
			w->budget_slot = i;
			budget_note(w);
			return 0;
		}
	}
	return b ? EAGAIN : 0;
}

void pt_queue_budget_release(struct pt_queue_budget *b, pid_t keeper)
{
	for (int i = 0; b && keeper > 0 && i < PT_QUEUE_KEEPERS; i++) {
		if (atomic_load_explicit(&b->owner[i], memory_order_relaxed) != (int32_t)keeper)
			continue;
		atomic_store_explicit(&b->held[i], 0, memory_order_relaxed);
		atomic_store_explicit(&b->owner[i], 0, memory_order_relaxed);
	}
}

/* A buffer to fill: from the pool, a new one while the bounds (its own,
 * the budget shared with the controller's other keepers) and the memory
 * allow, else the next one the thread is done with. */
static unsigned char *take_buffer(struct pt_logw *w)
{
	unsigned char *b = NULL;
	pthread_mutex_lock(&w->io_lock);
	if (!w->npool && w->nbufs < w->max_bufs && budget_allows(w) &&
	    pt_mem_headroom(w->out_cap, w->out_cap) == 0) {
		pthread_mutex_unlock(&w->io_lock);
		b = malloc(w->out_cap);
		pthread_mutex_lock(&w->io_lock);
		if (b) {
			w->nbufs++;
			budget_note(w);
		}
	}
	while (!b && !w->npool)
		pthread_cond_wait(&w->io_cond, &w->io_lock);
	if (!b)
		b = w->pool[--w->npool];
	pthread_mutex_unlock(&w->io_lock);
	return b;
}

/* Waits until the thread has written everything it was given. */
void pt_logio_wait(struct pt_logw *w)
{
	if (!w->io_running)
		return;
	pthread_mutex_lock(&w->io_lock);
	while (w->njobs)
		pthread_cond_wait(&w->io_cond, &w->io_lock);
	pthread_mutex_unlock(&w->io_lock);
	if (!w->prog.error)
		w->prog.error = w->done.error;
}

/* The pool (one spare buffer in it) and the ring of jobs; 0 without
 * memory, then every write is made in line. */
static int queue_alloc(struct pt_logw *w)
{
	w->max_bufs = pt_logio_max_buffers(w->st->hdr.stream_size, w->out_cap);
	w->pool = calloc(w->max_bufs, sizeof *w->pool);
	w->jobs = calloc(w->max_bufs + 1, sizeof *w->jobs);
	if (!w->jobs || !w->pool)
		return 0;
	w->pool[0] = malloc(w->out_cap);
	if (!w->pool[0])
		return 0;
	w->npool = 1; /* freed by pt_logio_stop whatever happens next */
	w->nbufs = 2;
	return 1;
}

void pt_logio_start(struct pt_logw *w)
{
	sigset_t all, old;
	if (!queue_alloc(w))
		return;
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

/* After everything given is written; frees the pool (the buffer filling
 * is the caller's). */
void pt_logio_stop(struct pt_logw *w)
{
	if (w->io_running) {
		pthread_mutex_lock(&w->io_lock);
		w->io_stop = 1;
		pthread_cond_broadcast(&w->io_cond);
		pthread_mutex_unlock(&w->io_lock);
		pthread_join(w->io_thread, NULL);
		pthread_cond_destroy(&w->io_cond);
		pthread_mutex_destroy(&w->io_lock);
		w->io_running = 0;
	}
	for (uint32_t i = 0; w->pool && i < w->npool; i++)
		free(w->pool[i]);
	if (w->budget && w->budget_slot >= 0) {
		atomic_store_explicit(&w->budget->held[w->budget_slot], 0, memory_order_relaxed);
		atomic_store_explicit(&w->budget->owner[w->budget_slot], 0, memory_order_relaxed);
	}
	w->budget = NULL;
	w->budget_slot = -1;
	free(w->pool);
	free(w->jobs);
	w->pool = NULL;
	w->jobs = NULL;
	w->npool = w->njobs = 0;
}

/* Writes the buffer now, after everything the thread was given. */
void pt_logio_flush(struct pt_logw *w)
{
	pt_logio_wait(w);
	if (!w->out_blocks) {
		pt_logio_emptied(w);
		return;
	}
	struct pt_logw_job j = buffer_job(w);
	int err = write_job(w, &j);
	/* As in run_job: a failed write still counts as written, so that what
	 * reached the file (the blocks before the failure: a disk that filled
	 * up) is not written over by later blocks. */
	pt_logio_keep_error(w, err);
	int32_t first = w->done.error ? w->done.error : w->prog.error ? w->prog.error : err;
	w->done = w->prog;
	w->done.error = first;
	pt_logio_emptied(w);
	pt_logio_commit(w);
}

/* The end of an automatic drain: the thread writes the buffer's sealed
 * blocks, then the header, while the keeper goes on. */
void pt_logio_hand(struct pt_logw *w)
{
	queue_job(w, NULL, 1);
	handed(w);
}

/* The buffer cannot take another block: the thread writes it while the
 * next one fills. */
void pt_logio_flush_full(struct pt_logw *w)
{
	if (!w->io_running) {
		pt_logio_flush(w);
		return;
	}
	unsigned char *full = w->out;
	queue_job(w, full, 0);
	w->out = take_buffer(w);
	pt_logio_emptied(w);
}
