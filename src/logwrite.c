/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer, format version 3 (logfmt.h, docs/LOG-FORMAT.md).
 *
 * Blocks are built in one output buffer, each checksummed once when it is
 * sealed, and the buffer is written when it cannot take another whole block
 * (a few MiB per write), at pt_logw_sync and at pt_logw_finish.  The stream's
 * records come as stages the keeper checked: each is copied into a STAGES
 * block as it is (pt_logw_stage).  The keeper's own events are encoded one
 * by one into KEEPER blocks (pt_logw_event): the writer compares the
 * context, computes a time delta, stores two words and copies the data;
 * contexts, large time gaps, full blocks and full logs take the slow path.
 *
 * Three copies of the progress: w->prog counts every sealed block as if it
 * were written; w->done is what has been written; the caller's state holds
 * the last published w->done.  A failed write reverts prog to done, so the
 * next write starts again where the last good one ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "logwrite.h"

#define OUT_CAP (4u << 20)
#define UNLIMITED (UINT64_MAX >> 1)

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* Room kept in an UNTIL_FULL log for its last STOP event (in a new KEEPER
 * block with a context and a TIME record) and its END block. */
#define FULL_RESERVE                                                                 \
	(PT_LOG_BLOCK_HDR + PT_LOG_KEEPER_PREFIX + PT_LOG_CTX_REC + PT_LOG_TIME_REC +      \
	 PT_REC_HDR + 8u + PT_LOG_BLOCK_HDR + (uint32_t)sizeof(struct pt_log_status))
_Static_assert(FULL_RESERVE == 240, "the reserve LOG-FORMAT.md gives");

static inline void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof v);
}

static inline uint64_t word(const void *p, size_t off)
{
	uint64_t v;
	memcpy(&v, (const unsigned char *)p + off, sizeof v);
	return v;
}

/* Word by word: an array copy would go through the stack and stall. */
static inline int same_ctx(const struct pt_log_ctx *a, const struct pt_log_ctx *b)
{
	return ((word(a, 0) ^ word(b, 0)) | (word(a, 8) ^ word(b, 8)) |
	        (word(a, 16) ^ word(b, 16)) | (word(a, 24) ^ word(b, 24))) == 0;
}

/* Copies exactly len bytes; short lengths with a few overlapping moves
 * rather than a call. */
static inline void copy_data(unsigned char *dst, const unsigned char *src, uint32_t len)
{
	if (len >= 8 && len <= 16) {
		uint64_t a = word(src, 0), b = word(src, len - 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	} else if (len >= 4 && len < 8) {
		uint32_t a, b;
		memcpy(&a, src, 4);
		memcpy(&b, src + len - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + len - 4, &b, 4);
	} else if (len) {
		memcpy(dst, src, len);
	}
}

/* A call that may block on the log's destination (a slow disk, a full
 * pipe): the controller does not count that time against the keeper
 * (ms_left, keepctl.c).  A count only, read by the controller: relaxed. */
static void destination_wait(struct pt_logw_state *st, int begin)
{
	if (st)
		__atomic_fetch_add(&st->in_io, begin ? 1u : ~0u, __ATOMIC_RELAXED);
}

static int write_all(int fd, int seekable, const void *buf, size_t len, uint64_t off)
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

static void keep_error(struct pt_logw *w, int err)
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
static void commit(struct pt_logw *w)
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
		/* Pairs with the release store of gen in commit. */
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

static uint32_t count_names(const uint64_t *bits)
{
	uint32_t n = 0;
	for (size_t i = 0; i < PT_LOG_NIDS / 64; i++)
		n += (uint32_t)__builtin_popcountll(bits[i]);
	return n;
}

/* Room for blocks in the data region, the block being filled excluded. */
static void reset_room(struct pt_logw *w)
{
	const struct pt_log_header *h = &w->st->hdr;
	if (w->finished || w->prog.log_full) {
		w->room = 0;
	} else if (h->log_policy == POSIX_TRACE_UNTIL_FULL && w->layout == PT_LOG_LINEAR) {
		uint64_t used = w->prog.data_bytes + FULL_RESERVE;
		w->room = h->log_size > used ? h->log_size - used : 0;
	} else {
		w->room = UNLIMITED;
	}
}

static void no_block(struct pt_logw *w)
{
	w->blk = NULL;
	w->pos = w->blk_end = w->out; /* no room: every event takes the slow path */
}

static void emit_pending_names(struct pt_logw *w);

/* Drops every block not written: the buffer restarts from what is. */
static void discard_buffer(struct pt_logw *w)
{
	int32_t err = w->prog.error ? w->prog.error : w->done.error;
	w->prog = w->done;
	w->prog.error = w->done.error = err;
	w->out_len = 0;
	w->out_blocks = 0;
	w->out_first_seq = w->done.seq;
	w->out_off = w->done.write_off;
	no_block(w);
	reset_room(w);
	if (!w->seekable)
		emit_pending_names(w);
}

/* ---- header ------------------------------------------------------------- */

static void header_image(const struct pt_logw *w, struct pt_log_header *h)
{
	*h = w->st->hdr;
	h->flags |= w->done.flags;
	h->nnames = w->done.nnames;
	h->status = w->done.status;
	h->blocks_written = w->done.seq;
	h->data_end = w->seekable && w->layout == PT_LOG_LINEAR ? w->done.write_off : 0;
	h->crc = pt_crc32c(0, h, offsetof(struct pt_log_header, crc));
}

/* The header of a seekable log, in place: one write within its first
 * sector. */
static int header_rewrite(struct pt_logw *w)
{
	struct pt_log_header h;
	header_image(w, &h);
	return write_all(w->fd, 1, &h, sizeof h, 0);
}

/* ---- blocks ------------------------------------------------------------- */

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
		int err = write_all(w->fd, 1, j->buf + (size_t)i * bs, bytes,
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
	destination_wait(w->st, 1);
	if (w->layout == PT_LOG_RING) {
		err = write_ring(w, j);
	} else {
		err = write_all(w->fd, w->seekable, j->buf, j->len, j->off);
		if (!err)
			bound_dirty(w, j);
	}
	destination_wait(w->st, 0);
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

static void buffer_emptied(struct pt_logw *w)
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
		commit(w);
		w->io_busy = 0;
		pthread_cond_broadcast(&w->io_cond);
	}
	pthread_mutex_unlock(&w->io_lock);
	return NULL;
}

/* Waits until the thread has written what it was given. */
static void io_drain(struct pt_logw *w)
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

static void io_start(struct pt_logw *w)
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

static void io_stop(struct pt_logw *w)
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
static void flush(struct pt_logw *w)
{
	io_drain(w);
	if (!w->out_blocks)
		return;
	struct pt_logw_job j = buffer_job(w);
	int err = write_job(w, &j);
	/* As in io_main: a failed write still counts as written, so that what
	 * reached the file (the blocks before the failure: a disk that filled
	 * up) is not written over by later blocks. */
	keep_error(w, err);
	int32_t first = w->done.error ? w->done.error : w->prog.error ? w->prog.error : err;
	w->done = w->prog;
	w->done.error = first;
	buffer_emptied(w);
	commit(w);
}

/* The buffer cannot take another block: the thread writes it while the
 * other buffer fills. */
static void flush_full(struct pt_logw *w)
{
	if (!w->io_running) {
		flush(w);
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
	buffer_emptied(w);
	no_block(w);
}

/* Starts a block of `type` at the end of the buffer.  Its end is where
 * the block size or the room of an UNTIL_FULL log ends it, so that one
 * comparison per event checks both.  A KEEPER block starts with its drain
 * number; a STAGES block's prefix is written by open_stages_block. */
static void open_block(struct pt_logw *w, uint32_t type, uint64_t ts)
{
	if (w->out_len + w->block_size > w->out_cap)
		flush_full(w);
	w->blk = w->out + w->out_len;
	w->blk_type = type;
	w->pos = w->blk + PT_LOG_BLOCK_HDR;
	w->blk_end = w->blk + (w->room < w->block_size ? w->room : w->block_size);
	if (type == PT_LOG_KEEPER) {
		/* Events given outside any drain (no pt_logw_begin_drain yet):
		 * each block is a drain of its own, so they read back in the
		 * order given whatever their times. */
		if (!w->ncal)
			w->prog.drain++;
		put64(w->pos, w->prog.drain);
		w->pos += PT_LOG_KEEPER_PREFIX;
	}
	if (w->blk_end < w->pos)
		w->blk_end = w->pos;
	w->blk_records = 0;
	w->blk_ts = type == PT_LOG_STAGES ? 0 : ts;
	w->last_ts = ts;
	w->last_pc = 0;
	w->ctx_cur = -1;
	w->nctx = 0;
	w->sec = NULL;
	w->blk_sections = 0;
	memset(w->ctx_hash, 0, sizeof w->ctx_hash);
}

/* The payload's first byte after what every block of its type starts
 * with: a block that holds nothing more is not sealed. */
static const unsigned char *block_first_record(const struct pt_logw *w)
{
	if (w->blk_type == PT_LOG_KEEPER)
		return w->blk + PT_LOG_BLOCK_HDR + PT_LOG_KEEPER_PREFIX;
	if (w->blk_type == PT_LOG_STAGES)
		return w->blk + PT_LOG_BLOCK_HDR + sizeof(struct pt_log_stages) +
		       (size_t)w->ncal * sizeof(struct pt_log_calpoint);
	return w->blk + PT_LOG_BLOCK_HDR;
}

/* Whether the block being filled ends short of the block size because the
 * log has no more room. */
static int block_cut_by_room(const struct pt_logw *w)
{
	return (size_t)(w->blk_end - w->blk) < w->block_size;
}

static void seal_block(struct pt_logw *w, uint32_t type)
{
	unsigned char *payload = w->blk + PT_LOG_BLOCK_HDR;
	if (type == PT_LOG_STAGES) {
		struct pt_log_stages *pre = (struct pt_log_stages *)(void *)payload;
		pre->nsections = w->blk_sections;
	}
	struct pt_log_block b = {
	    .magic = PT_LOG_BLOCK_MAGIC,
	    .type = type,
	    .seq = w->prog.seq,
	    .ts_base = w->blk_ts,
	    .payload_len = (uint32_t)(w->pos - payload),
	    .nrecords = w->blk_records,
	};
	b.payload_crc = pt_crc32c(0, payload, b.payload_len);
	b.header_crc = pt_crc32c(0, &b, offsetof(struct pt_log_block, header_crc));
	memcpy(w->blk, &b, sizeof b);
	uint32_t len = PT_LOG_BLOCK_HDR + b.payload_len, padded = pt_log_pad8(len);
	memset(w->blk + len, 0, padded - len);
	w->room = w->room > padded ? w->room - padded : 0;
	size_t start = (size_t)(w->blk - w->out);
	if (w->layout == PT_LOG_RING) {
		/* Slots are block_size apart in the buffer as in the file; the
		 * gap between two blocks is written too, so it is zeroed. */
		memset(w->blk + padded, 0, w->block_size - padded);
		w->out_len = start + w->block_size;
		if (b.seq >= w->ring_slots) {
			w->prog.status.log_overrun = POSIX_TRACE_OVERRUN;
			w->prog.status.log_full = POSIX_TRACE_FULL;
		}
		uint64_t used = b.seq + 1 < w->ring_slots ? b.seq + 1 : w->ring_slots;
		w->prog.data_bytes = used * w->block_size;
	} else {
		w->out_len = start + padded;
		w->prog.write_off += padded;
		w->prog.data_bytes += padded;
	}
	w->prog.seq++;
	w->prog.blocks_written = w->prog.seq;
	w->out_blocks++;
	no_block(w);
	if (w->out_len + w->block_size > w->out_cap)
		flush_full(w);
}

/* Seals the block being filled, if any record is in it. */
static void close_block(struct pt_logw *w)
{
	if (!w->blk)
		return;
	if (w->pos > block_first_record(w))
		seal_block(w, w->blk_type);
	else
		no_block(w);
}

/* ---- names -------------------------------------------------------------- */

static int name_known(const uint64_t *bits, uint32_t id)
{
	return (bits[id / 64] >> (id % 64)) & 1;
}

static void name_set(uint64_t *bits, uint32_t id)
{
	bits[id / 64] |= 1ull << (id % 64);
}

/* Unseekable log: NAMES blocks for the names given and not yet in a block. */
static void emit_pending_names(struct pt_logw *w)
{
	const uint32_t entry = (uint32_t)sizeof(struct pt_log_name_entry);
	for (uint32_t id = PT_LOG_USER_FIRST + 1; id < PT_LOG_NIDS; id++) {
		if (!name_known(w->names_given, id) || name_known(w->prog.names, id))
			continue;
		if (w->blk && w->blk_type != PT_LOG_NAMES)
			close_block(w);
		if (w->blk && (size_t)(w->blk_end - w->pos) < entry)
			seal_block(w, PT_LOG_NAMES);
		if (!w->blk)
			open_block(w, PT_LOG_NAMES, w->last_ts);
		struct pt_log_name_entry e;
		e.id = id;
		memcpy(e.name, w->names[id - PT_LOG_USER_FIRST], sizeof e.name);
		memcpy(w->pos, &e, sizeof e);
		w->pos += entry;
		w->blk_records++;
		name_set(w->prog.names, id);
		w->prog.nnames++;
	}
	if (w->blk)
		seal_block(w, PT_LOG_NAMES);
}

int pt_logw_names(struct pt_logw *w, uint32_t first_id, uint32_t count,
                  const char (*names)[PT_LOG_NAME_SIZE])
{
	if (w->finished || first_id < PT_LOG_USER_FIRST || count > PT_LOG_NIDS - first_id ||
	    (count && !names))
		return EINVAL;
	int fresh = 0;
	for (uint32_t i = 0; i < count; i++) {
		uint32_t id = first_id + i;
		if (id == PT_LOG_USER_FIRST)
			continue;
		char *dst = w->names[id - PT_LOG_USER_FIRST];
		memcpy(dst, names[i], PT_LOG_NAME_SIZE);
		dst[PT_LOG_NAME_SIZE - 1] = '\0';
		name_set(w->names_given, id);
		fresh |= !name_known(w->prog.names, id);
	}
	if (!fresh)
		return 0;
	if (!w->seekable) {
		close_block(w); /* names go before the events that follow */
		emit_pending_names(w);
		return 0;
	}
	io_drain(w); /* w->done is the thread's while it writes */
	/* In place: the entries of the range, one write. */
	uint64_t off = w->st->hdr.names_off +
	               (uint64_t)(first_id - PT_LOG_USER_FIRST) * PT_LOG_NAME_SIZE;
	int err = write_all(w->fd, 1, w->names[first_id - PT_LOG_USER_FIRST],
	                    (size_t)count * PT_LOG_NAME_SIZE, off);
	if (err) {
		keep_error(w, err);
		commit(w);
		return err;
	}
	for (uint32_t i = 0; i < count; i++) {
		uint32_t id = first_id + i;
		if (id != PT_LOG_USER_FIRST) {
			name_set(w->prog.names, id);
			name_set(w->done.names, id);
		}
	}
	w->prog.nnames = w->done.nnames = count_names(w->done.names);
	commit(w);
	return 0;
}

/* ---- events ------------------------------------------------------------- */

static uint32_t ctx_hash(const struct pt_log_ctx *c)
{
	uint32_t h = (uint32_t)c->tid * 2654435761u ^ (uint32_t)c->pid * 40503u ^
	             (uint32_t)c->thread ^ (uint32_t)(c->thread >> 32);
	return (h ^ (h >> 16)) & 255u;
}

/* Context number of c in the block being filled, or -1. */
static int32_t ctx_find(const struct pt_logw *w, const struct pt_log_ctx *c)
{
	uint32_t k = w->ctx_hash[ctx_hash(c)];
	return k && same_ctx(&w->ctx[k - 1], c) ? (int32_t)k - 1 : -1;
}

static void put_meta(struct pt_logw *w, uint32_t id, uint64_t word1, const void *data,
                     uint32_t len)
{
	put64(w->pos, (uint64_t)id << PT_REC_ID_SHIFT | (uint64_t)len << PT_REC_LEN_SHIFT);
	put64(w->pos + 8, word1);
	if (len)
		memcpy(w->pos + PT_REC_HDR, data, len);
	w->pos += PT_REC_HDR + len;
}

/* Makes c the current context; room was checked. */
static void ctx_select(struct pt_logw *w, const struct pt_log_ctx *c)
{
	int32_t k = ctx_find(w, c);
	if (k >= 0) {
		put_meta(w, PT_REC_SWITCH, (uint64_t)k, NULL, 0);
	} else {
		struct pt_log_ctxrec r = {.ctx = *c, .k = w->nctx, .zero = 0};
		k = (int32_t)w->nctx++;
		w->ctx[k] = *c;
		w->ctx_hash[ctx_hash(c)] = (uint16_t)(k + 1);
		put_meta(w, PT_REC_CONTEXT, 0, &r, sizeof r);
	}
	w->ctx_cur = k;
	w->cur = *c;
}

static uint32_t ctx_cost(const struct pt_logw *w, const struct pt_log_ctx *c)
{
	if (w->ctx_cur >= 0 && same_ctx(&w->cur, c))
		return 0;
	if (ctx_find(w, c) >= 0)
		return PT_REC_HDR;
	return w->nctx < w->max_ctx ? PT_LOG_CTX_REC : UINT32_MAX / 2;
}

static inline void put_event(struct pt_logw *w, uint64_t ts, trace_event_id_t id,
                             const void *data, uint32_t len, int truncated, uint64_t pc)
{
	unsigned char *p = w->pos;
	/* The previous event's call site: no second word.  The address is
	 * stored anyway and the data go over it (room for both was checked). */
	uint64_t same = pc == w->last_pc && id != PT_REC_RESUME ? PT_REC_SAMEPC : 0;
	uint32_t hdr = PT_REC_HDR - (uint32_t)(same >> 28);
	put64(p, (ts - w->last_ts) | same | (uint64_t)id << PT_REC_ID_SHIFT |
	             (uint64_t)len << PT_REC_LEN_SHIFT | (truncated ? PT_REC_TRUNCATED : 0));
	put64(p + 8, pc);
	if (len & 7)
		put64(p + hdr + (len & ~7u), 0); /* zero padding */
	copy_data(p + hdr, data, len);
	w->pos = p + hdr + pt_log_pad8(len);
	w->last_ts = ts;
	if (id == PT_REC_RESUME)
		return; /* a meta record: the current address stays */
	w->last_pc = pc;
	w->blk_records++;
}

/* The bytes an event takes in the block being filled: the record, a
 * context and a TIME record when needed. */
static uint64_t event_cost(const struct pt_logw *w, const struct pt_log_ctx *c, uint64_t ts,
                           uint32_t len)
{
	return (uint64_t)pt_log_rec_size(len) + ctx_cost(w, c) +
	       (ts - w->last_ts > PT_REC_DELTA_MAX ? PT_LOG_TIME_REC : 0);
}

/* Puts an event where it fits: in the block being filled, else in a new
 * one.  Returns PT_LOGW_FULL when the room of the log ends first. */
static int put_event_slow(struct pt_logw *w, const struct pt_log_ctx *c, uint64_t ts,
                          trace_event_id_t id, const void *data, uint32_t len, int truncated,
                          uint64_t pc)
{
	for (;;) {
		if (w->blk && w->blk_type != PT_LOG_KEEPER)
			close_block(w);
		if (w->blk) {
			if (event_cost(w, c, ts, len) <= (uint64_t)(w->blk_end - w->pos))
				break;
			if (block_cut_by_room(w))
				return PT_LOGW_FULL;
			seal_block(w, PT_LOG_KEEPER);
		}
		open_block(w, PT_LOG_KEEPER, ts);
		if (event_cost(w, c, ts, len) > (uint64_t)(w->blk_end - w->pos) &&
		    block_cut_by_room(w))
			return PT_LOGW_FULL;
	}
	if (w->ctx_cur < 0 || !same_ctx(&w->cur, c))
		ctx_select(w, c);
	if (ts - w->last_ts > PT_REC_DELTA_MAX) {
		put_meta(w, PT_REC_TIME, 0, &ts, sizeof ts);
		w->last_ts = ts;
	}
	put_event(w, ts, id, data, len, truncated, pc);
	return 0;
}

/* An UNTIL_FULL log is full: POSIX_TRACE_STOP (automatic: data 1) ends it,
 * in the room kept for it, no earlier than any event kept.  Like the
 * automatic stop of a full stream, it carries the writer (and call) of
 * the event that found no room; `dropped` events did not fit. */
static int log_full(struct pt_logw *w, const struct pt_log_ctx *c, uint64_t ts, uint64_t pc,
                    uint32_t dropped)
{
	int automatic = 1;
	if (ts < w->max_kept_ns)
		ts = w->max_kept_ns;
	w->room += FULL_RESERVE - (PT_LOG_BLOCK_HDR + (uint32_t)sizeof(struct pt_log_status));
	if (w->blk)
		w->blk_end = w->blk + w->block_size;
	put_event_slow(w, c, ts, POSIX_TRACE_STOP, &automatic, sizeof automatic, 0, pc);
	w->prog.log_full = 1;
	w->prog.status.log_full = POSIX_TRACE_FULL;
	w->prog.status.log_overrun = POSIX_TRACE_OVERRUN;
	w->prog.status.log_dropped += dropped;
	w->room = 0;
	if (w->blk)
		w->blk_end = w->pos; /* nothing more goes in */
	return PT_LOGW_FULL;
}

/* Events that came after the log filled up. */
static int dropped_after_full(struct pt_logw *w, uint32_t events)
{
	w->prog.status.log_dropped += events;
	w->prog.status.log_overrun = POSIX_TRACE_OVERRUN;
	return PT_LOGW_FULL;
}

/* Out of line, so that the common case needs no saved registers. */
__attribute__((noinline)) static int event_slow(struct pt_logw *w, const struct pt_log_ctx *c,
                                                uint64_t ts, trace_event_id_t id,
                                                const void *data, uint32_t len, int truncated,
                                                uint64_t pc)
{
	static const struct pt_log_ctx system_ctx;
	if (w->finished)
		return EINVAL;
	if (w->prog.log_full)
		return dropped_after_full(w, 1);
	if (!c)
		c = &system_ctx;
	if (put_event_slow(w, c, ts, id, data, len, truncated, pc) == 0)
		return 0;
	return log_full(w, c, ts, pc, 1);
}

int pt_logw_event(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns,
                  trace_event_id_t id, const void *data, uint32_t len, int truncated,
                  uint64_t pc)
{
	if (unlikely(id - 1u >= PT_LOG_NIDS - 1u || id - PT_REC_META_FIRST < PT_REC_META_END -
	                                                                      PT_REC_META_FIRST ||
	             len > w->max_data || (len && !data)))
		return EINVAL;
	uint32_t rec = pt_log_rec_size(len);
	if (ts_ns > w->max_kept_ns)
		w->max_kept_ns = ts_ns;
	if (likely(ctx && w->blk_type == PT_LOG_KEEPER && same_ctx(&w->cur, ctx) &&
	           ts_ns - w->last_ts <= PT_REC_DELTA_MAX && rec <= (size_t)(w->blk_end - w->pos))) {
		put_event(w, ts_ns, id, data, len, truncated, pc);
		return 0;
	}
	return event_slow(w, ctx, ts_ns, id, data, len, truncated, pc);
}

int pt_logw_resume_mark(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns)
{
	static const struct pt_log_ctx system_ctx;
	if (w->finished)
		return EINVAL;
	if (w->prog.log_full)
		return 0;
	/* A log that fills up here keeps no event after it: no RESUME is due,
	 * and the STOP the next event finds no room for says why. */
	put_event_slow(w, ctx ? ctx : &system_ctx, ts_ns, PT_REC_RESUME, NULL, 0, 0, 0);
	return 0;
}

/* ---- stages --------------------------------------------------------------- */

int pt_logw_begin_drain(struct pt_logw *w, uint32_t clock, const struct pt_log_calpoint *cal,
                        uint32_t ncal)
{
	if (w->finished || !cal || !pt_log_cal_ok(cal, ncal) ||
	    (clock != PT_LOG_CLOCK_MONO && clock != PT_LOG_CLOCK_TSC))
		return EINVAL;
	close_block(w);
	w->prog.drain++;
	w->clock = clock;
	w->ncal = ncal;
	memcpy(w->cal, cal, ncal * sizeof *cal);
	return 0;
}

static void open_stages_block(struct pt_logw *w)
{
	struct pt_log_stages pre = {.drain = w->prog.drain, .clock = w->clock, .ncal = w->ncal};
	open_block(w, PT_LOG_STAGES, 0);
	memcpy(w->pos, &pre, sizeof pre);
	w->pos += sizeof pre;
	memcpy(w->pos, w->cal, w->ncal * sizeof w->cal[0]);
	w->pos += w->ncal * sizeof w->cal[0];
	if (w->blk_end < w->pos)
		w->blk_end = w->pos;
}

/* Appends the stage to the open section, after an OWNER record that gives
 * its base and writer when `owner_first`. */
static void section_append(struct pt_logw *w, const struct pt_logw_stage *s, int owner_first)
{
	unsigned char *start = w->pos;
	if (owner_first)
		put_meta(w, PT_LOG_STAGE_OWNER, 0, &s->start, sizeof s->start);
	memcpy(w->pos, s->rec, s->len);
	w->pos += s->len;
	struct pt_log_section h;
	memcpy(&h, w->sec, sizeof h);
	h.len += (uint32_t)(w->pos - start);
	memcpy(w->sec, &h, sizeof h);
	w->blk_records += s->events;
}

static void section_open(struct pt_logw *w, const struct pt_logw_stage *s)
{
	struct pt_log_section h = {.lane = s->lane, .len = 0, .pc = s->start_pc};
	w->sec = w->pos;
	memcpy(w->pos, &h, sizeof h);
	w->pos += sizeof h;
	w->sec_lane = s->lane;
	w->blk_sections++;
	section_append(w, s, 1);
}

/* Where the stage goes in the STAGES block being filled: 1 appended, 0
 * it does not fit. */
static int stage_into_block(struct pt_logw *w, const struct pt_logw_stage *s)
{
	uint64_t left = (uint64_t)(w->blk_end - w->pos);
	uint64_t more = (uint64_t)s->len + (s->how == PT_STAGE_NEW_CHUNK ? PT_LOG_OWNER_REC : 0);
	uint64_t fresh = sizeof(struct pt_log_section) + PT_LOG_OWNER_REC + (uint64_t)s->len;
	if (w->sec && w->sec_lane == s->lane && s->how != PT_STAGE_ELSEWHERE && more <= left) {
		section_append(w, s, s->how == PT_STAGE_NEW_CHUNK);
		return 1;
	}
	if (fresh > left)
		return 0;
	section_open(w, s);
	return 1;
}

int pt_logw_stage(struct pt_logw *w, const struct pt_logw_stage *s)
{
	if (w->finished || !w->ncal || s->len % 8 || (s->len && !s->rec))
		return EINVAL;
	if (!s->len)
		return 0;
	if (w->prog.log_full)
		return dropped_after_full(w, s->events);
	if (w->blk && w->blk_type != PT_LOG_STAGES)
		close_block(w);
	if (!w->blk || !stage_into_block(w, s)) {
		int cut = w->blk && block_cut_by_room(w);
		if (!cut) {
			close_block(w);
			open_stages_block(w);
			cut = !stage_into_block(w, s);
			if (cut && !block_cut_by_room(w)) {
				no_block(w);
				return EINVAL; /* larger than a block: not a stage */
			}
		}
		if (cut)
			return log_full(w, &s->start.ctx, s->first_ns, 0, s->events);
	}
	if (s->last_ns > w->max_kept_ns)
		w->max_kept_ns = s->last_ns;
	return 0;
}

/* ---- begin, resume, sync, clear, finish --------------------------------- */

/* fd's file type: 1 seekable (regular file), 0 stream; or an error. */
static int check_fd(int fd, int *seekable)
{
	int fl = fcntl(fd, F_GETFL);
	struct stat sb;
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &sb) != 0)
		return EBADF;
#ifdef O_PATH
	if (fl & O_PATH)
		return EBADF;
#endif
	if (S_ISREG(sb.st_mode)) {
		/* Laid out from offset 0 with pwrite: O_APPEND must be off. */
		if ((fl & O_APPEND) && fcntl(fd, F_SETFL, fl & ~O_APPEND) != 0)
			return EINVAL;
		*seekable = 1;
		return 0;
	}
	if (S_ISFIFO(sb.st_mode) || S_ISSOCK(sb.st_mode) || S_ISCHR(sb.st_mode)) {
		*seekable = 0;
		return 0;
	}
	return EINVAL;
}

static int alloc_buffers(struct pt_logw *w)
{
	const struct pt_log_header *h = &w->st->hdr;
	w->block_size = h->block_size;
	w->layout = (int)h->layout;
	w->ring_slots = h->ring_slots;
	w->data_off = h->data_off;
	w->max_data = (uint32_t)pt_log_data_max(h->max_data_size);
	w->max_ctx = (w->block_size - PT_LOG_BLOCK_HDR) / PT_LOG_CTX_REC + 1;
	size_t cap = OUT_CAP > 2 * (size_t)w->block_size ? OUT_CAP : 2 * (size_t)w->block_size;
	if (w->layout == PT_LOG_RING) {
		/* At most one lap of the ring per flush. */
		cap -= cap % w->block_size;
		if (cap / w->block_size > w->ring_slots)
			cap = (size_t)w->ring_slots * w->block_size;
	}
	w->out_cap = cap;
	w->out = malloc(cap);
	w->spare = malloc(cap);
	w->ctx = calloc(w->max_ctx, sizeof *w->ctx);
	w->names = calloc(TRACE_USER_EVENT_MAX, sizeof *w->names);
	if (!w->out || !w->ctx || !w->names) {
		pt_logw_free(w);
		return ENOMEM;
	}
	if (w->spare)
		io_start(w); /* else every write waits */
	no_block(w);
	w->ctx_cur = -1;
	return 0;
}

static int params_ok(const struct pt_logw_params *p)
{
	int lp = p->log_policy, sp = p->stream_policy;
	return (lp == POSIX_TRACE_LOOP || lp == POSIX_TRACE_UNTIL_FULL ||
	        lp == POSIX_TRACE_APPEND) &&
	       (sp == POSIX_TRACE_LOOP || sp == POSIX_TRACE_UNTIL_FULL ||
	        sp == POSIX_TRACE_FLUSH) &&
	       (p->inheritance == POSIX_TRACE_CLOSE_FOR_CHILD ||
	        p->inheritance == POSIX_TRACE_INHERITED) &&
	       p->max_data_size <= PT_LOG_MAX_DATA;
}

static void header_init(struct pt_log_header *h, const struct pt_logw_params *p, int seekable)
{
	memset(h, 0, sizeof *h);
	memcpy(h->magic, PT_LOG_MAGIC, sizeof h->magic);
	h->version = PT_LOG_VERSION;
	h->byte_order = PT_LOG_BOM;
	h->header_size = PT_LOG_HEADER_SIZE;
	h->flags = seekable ? PT_LOG_SEEKABLE : 0;
	h->names_off = seekable ? PT_LOG_NAMES_OFF : 0;
	h->names_size = seekable ? PT_LOG_NAMES_SIZE : 0;
	h->data_off = seekable ? PT_LOG_DATA_OFF : PT_LOG_DATA_OFF_NOTABLE;
	h->layout = seekable && p->log_policy == POSIX_TRACE_LOOP ? PT_LOG_RING : PT_LOG_LINEAR;
	h->block_size = pt_log_block_size_for(p->max_data_size);
	if (h->layout == PT_LOG_RING) {
		uint64_t slots = p->log_size / h->block_size;
		if (slots < 2)
			slots = 2;
		h->ring_slots = slots < PT_LOG_MAX_RING_SLOTS ? slots : PT_LOG_MAX_RING_SLOTS;
	}
	h->clockres_ns = p->clockres_ns;
	h->name_size = PT_LOG_NAME_SIZE;
	memcpy(h->trace_name, p->trace_name, TRACE_NAME_MAX);
	memcpy(h->genversion, p->genversion, TRACE_NAME_MAX);
	h->trace_name[TRACE_NAME_MAX - 1] = h->genversion[TRACE_NAME_MAX - 1] = '\0';
	h->create_sec = p->create_sec;
	h->create_nsec = p->create_nsec;
	h->stream_size = p->stream_size;
	h->max_data_size = p->max_data_size;
	h->log_size = p->log_size;
	h->stream_policy = p->stream_policy;
	h->log_policy = p->log_policy;
	h->inheritance = p->inheritance;
}

int pt_logw_begin(struct pt_logw *w, struct pt_logw_state *st, int fd,
                  const struct pt_logw_params *p)
{
	int seekable = 0;
	memset(w, 0, sizeof *w);
	w->fd = -1;
	w->finished = 1; /* until it has begun: every call but free fails */
	int err = check_fd(fd, &seekable);
	if (err)
		return err;
	if (!p || !params_ok(p) || (!seekable && p->log_policy != POSIX_TRACE_APPEND))
		return EINVAL;
	/* Publishes nothing (no keeper reads the state yet): relaxed would do. */
	__atomic_store_n(&st->valid, 0, __ATOMIC_RELEASE);
	memset(st, 0, sizeof *st);
	st->seekable = seekable;
	header_init(&st->hdr, p, seekable);
	w->st = st;
	w->fd = fd;
	w->seekable = seekable;
	err = alloc_buffers(w);
	if (err)
		return err;
	w->finished = 0;
	w->done.seq = 0;
	w->done.write_off = st->hdr.data_off;
	w->done.status.stream_status = POSIX_TRACE_SUSPENDED;
	w->prog = w->done;
	buffer_emptied(w);
	reset_room(w);

	/* Header and empty name table in one write: no space shows here. */
	size_t len = (size_t)st->hdr.data_off;
	unsigned char *img = calloc(1, len);
	if (!img) {
		pt_logw_free(w);
		return ENOMEM;
	}
	header_image(w, (struct pt_log_header *)img);
	if (seekable && ftruncate(fd, 0) != 0)
		err = errno == EINTR ? EIO : errno;
	if (!err)
		err = write_all(fd, seekable, img, len, 0);
	free(img);
	if (err) {
		pt_logw_free(w);
		return err;
	}
	commit(w);
	/* Release: the state built above first; pairs with the acquire load of
	 * valid in pt_logw_resume. */
	__atomic_store_n(&st->valid, 1, __ATOMIC_RELEASE);
	return 0;
}

int pt_logw_resume(struct pt_logw *w, struct pt_logw_state *st, int fd)
{
	int seekable = 0;
	memset(w, 0, sizeof *w);
	w->fd = -1;
	w->finished = 1;
	/* Pairs with the release store of valid in pt_logw_begin. */
	if (!__atomic_load_n(&st->valid, __ATOMIC_ACQUIRE))
		return EINVAL;
	int err = check_fd(fd, &seekable);
	if (err)
		return err;
	const struct pt_logw_progress *p = pt_logw_progress(st);
	if (seekable != st->seekable || (p->flags & PT_LOG_CLOSED))
		return EINVAL;
	w->st = st;
	w->fd = fd;
	w->seekable = seekable;
	w->done = *p;
	err = alloc_buffers(w);
	if (err)
		return err;
	w->finished = 0;
	w->prog = w->done;
	buffer_emptied(w);
	memcpy(w->names_given, w->done.names, sizeof w->names_given);
	reset_room(w);
	/* A killed writer may have left part of a block after the last one it
	 * recorded: cut it, so that the log continues right there. */
	if (seekable && w->layout == PT_LOG_LINEAR &&
	    ftruncate(fd, (off_t)w->done.write_off) != 0) {
		err = errno;
		pt_logw_free(w);
		return err;
	}
	return 0;
}

static void take_status(struct pt_logw *w, const struct pt_logw_status *s)
{
	if (!s)
		return;
	struct pt_log_status *d[2] = {&w->prog.status, &w->done.status};
	for (int i = 0; i < 2; i++) {
		d[i]->stream_status = s->stream_status;
		d[i]->stream_full = s->stream_full;
		d[i]->stream_overrun = s->stream_overrun;
		d[i]->flush_status = s->flush_status;
		d[i]->flush_error = s->flush_error ? s->flush_error : w->done.error;
		d[i]->lost_events = s->lost_events;
	}
}

int pt_logw_sync(struct pt_logw *w, const struct pt_logw_status *s)
{
	if (w->finished)
		return w->done.error ? w->done.error : EINVAL;
	close_block(w);
	flush(w);
	take_status(w, s);
	if (w->seekable)
		keep_error(w, header_rewrite(w));
	commit(w);
	return w->done.error;
}

int pt_logw_clear(struct pt_logw *w)
{
	if (w->finished)
		return EINVAL;
	int err = 0;
	io_drain(w);
	w->out_len = 0;
	w->out_blocks = 0;
	no_block(w);
	struct pt_logw_progress *d = &w->done;
	d->log_full = 0;
	d->status.log_full = POSIX_TRACE_NOT_FULL;
	d->status.log_overrun = POSIX_TRACE_NO_OVERRUN;
	d->status.log_dropped = 0;
	if (w->seekable) {
		if (ftruncate(w->fd, (off_t)w->data_off) != 0)
			err = errno;
		d->seq = d->blocks_written = 0;
		d->write_off = w->data_off;
		w->written_back = w->data_off;
		d->data_bytes = 0;
	}
	discard_buffer(w); /* prog = done; an unseekable log re-emits its names */
	if (w->seekable && !err)
		err = header_rewrite(w);
	keep_error(w, err);
	commit(w);
	return err;
}

int pt_logw_finish(struct pt_logw *w, const struct pt_logw_status *s)
{
	if (w->finished)
		return w->done.error ? w->done.error : EINVAL;
	close_block(w);
	io_drain(w);
	take_status(w, s);
	if (w->layout == PT_LOG_LINEAR) {
		open_block(w, PT_LOG_END, w->last_ts);
		memcpy(w->pos, &w->prog.status, sizeof w->prog.status);
		w->pos += sizeof w->prog.status;
		seal_block(w, PT_LOG_END);
	}
	flush(w);
	w->prog.flags |= PT_LOG_CLOSED;
	w->done.flags |= PT_LOG_CLOSED;
	w->finished = 1;
	w->room = 0;
	struct stat sb;
	int regular = fstat(w->fd, &sb) == 0 && S_ISREG(sb.st_mode);
	if (w->seekable) {
		if (w->layout == PT_LOG_LINEAR && ftruncate(w->fd, (off_t)w->done.write_off) != 0)
			keep_error(w, errno);
		keep_error(w, header_rewrite(w));
	}
	destination_wait(w->st, 1);
	if (regular && fdatasync(w->fd) != 0)
		keep_error(w, errno);
	destination_wait(w->st, 0);
	commit(w);
	return w->done.error;
}

void pt_logw_free(struct pt_logw *w)
{
	io_stop(w); /* after what it was given is written */
	free(w->out);
	free(w->spare);
	free(w->ctx);
	free(w->names);
	w->out = w->spare = NULL;
	w->ctx = NULL;
	w->names = NULL;
	w->blk = w->pos = w->blk_end = NULL;
	w->out_len = 0;
	w->out_blocks = 0;
	w->finished = 1;
}
