/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer, format version 3 (logwrite.h, logfmt.h,
 * docs/LOG-FORMAT.md): a log begun, continued by a new keeper, synced,
 * cleared and finished; its header and names.  The blocks are logblock.c's,
 * the output and published progress logio.c's.
 *
 * Blocks are built in one output buffer, each checksummed once when it is
 * sealed, and the buffer is written when it cannot take another whole block
 * (a few MiB per write), at pt_logw_sync and at pt_logw_finish; at
 * pt_logw_hand the writing thread writes what it holds (logio.c).
 *
 * Three copies of the progress: w->prog counts every sealed block as if it
 * were written; w->done is what has been written; the caller's state holds
 * the last published w->done.  A failed write reverts prog to done, so the
 * next write starts again where the last good one ended.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "logblock.h"
#include "logfmt.h"
#include "loghost.h"
#include "logio.h"
#include "logwrite.h"
#include "logwimages.h"
#include "logwstate.h"

#define OUT_CAP (4u << 20)
#define UNLIMITED (UINT64_MAX >> 1)

static uint32_t count_names(const uint64_t *bits)
{
	uint32_t n = 0;
	for (size_t i = 0; i < PT_LOG_NIDS / 64; i++)
		n += (uint32_t)__builtin_popcountll(bits[i]);
	return n;
}

/* Room for blocks in the data region, the block being filled excluded,
 * and for events (an UNTIL_FULL log: its events count against
 * log-max-size, its blocks against pt_log_full_region). */
static void reset_room(struct pt_logw *w)
{
	const struct pt_log_header *h = &w->st->hdr;
	if (w->finished || w->prog.log_full) {
		w->room = 0;
		w->ev_left = 0;
	} else if (h->log_policy == POSIX_TRACE_UNTIL_FULL && w->layout == PT_LOG_LINEAR) {
		uint64_t region = pt_log_full_region(h->log_size, h->block_size);
		uint64_t used = w->prog.data_bytes + PT_LOG_FULL_RESERVE;
		w->room = region > used ? region - used : 0;
		uint64_t events = w->prog.event_bytes + PT_LOG_STOP_BYTES;
		w->ev_left = h->log_size > events ? h->log_size - events : 0;
	} else {
		w->room = UNLIMITED;
		w->ev_left = UNLIMITED;
	}
}

static void emit_pending_names(struct pt_logw *w);

/* Drops every block not written: the buffer restarts from what is. */
static void discard_buffer(struct pt_logw *w)
{
	int32_t err = w->prog.error ? w->prog.error : w->done.error;
	w->prog = w->done;
	w->prog.error = w->done.error = err;
	w->out_len = 0;
	w->out_handed = 0;
	w->out_blocks = 0;
	w->out_first_seq = w->done.seq;
	w->out_off = w->done.write_off;
	pt_logb_none(w);
	reset_room(w);
	if (!w->seekable)
		emit_pending_names(w);
}

/* The header of a seekable log, in place, as written so far. */
static int header_rewrite(struct pt_logw *w)
{
	return pt_logio_header_rewrite(w, &w->done);
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
			pt_logb_close(w);
		if (w->blk && (size_t)(w->blk_end - w->pos) < entry)
			pt_logb_seal(w, PT_LOG_NAMES);
		if (!w->blk)
			pt_logb_open(w, PT_LOG_NAMES, w->last_ts);
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
		pt_logb_seal(w, PT_LOG_NAMES);
}

int pt_logw_pids(struct pt_logw *w, const struct pt_log_pid_entry *e, uint32_t n)
{
	const size_t entry = sizeof *e;
	if (w->finished || (n && !e))
		return EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		if (w->blk && w->blk_type != PT_LOG_PIDS)
			pt_logb_close(w);
		if (w->blk && (size_t)(w->blk_end - w->pos) < entry)
			pt_logb_seal(w, PT_LOG_PIDS);
		if (!w->blk)
			pt_logb_open(w, PT_LOG_PIDS, 0);
		if ((size_t)(w->blk_end - w->pos) < entry)
			break; /* an UNTIL_FULL log's last room */
		memcpy(w->pos, &e[i], entry);
		w->pos += entry;
		w->blk_records++;
	}
	pt_logb_close(w);
	return 0;
}

/* FNV-1a over the build id and the path: the slot a file is looked for
 * at (entries are compared whole, so a collision costs sharing only). */
static uint32_t file_hash(const struct pt_log_shared_file *f, const char *path)
{
	uint32_t h = 2166136261u;
	for (uint32_t i = 0; i < f->build_id_len; i++)
		h = (h ^ f->build_id[i]) * 16777619u;
	for (uint32_t i = 0; i < f->path_len; i++)
		h = (h ^ (unsigned char)path[i]) * 16777619u;
	return h;
}

/* The number of the gathered FILE entry equal to f and path, or -1; *slot:
 * where it is, or the free slot it would take (UINT32_MAX: none). */
static int64_t file_find(const struct pt_logw *w, const struct pt_log_shared_file *f,
                         const char *path, uint32_t *slot)
{
	uint32_t i = file_hash(f, path) & (PT_LOGW_IMG_SLOTS - 1);
	*slot = UINT32_MAX;
	for (uint32_t n = 0; n < PT_LOGW_IMG_SLOTS; n++, i = (i + 1) & (PT_LOGW_IMG_SLOTS - 1)) {
		if (!w->img_slots[i]) {
			*slot = w->img_nfiles < PT_LOGW_IMG_FILES ? i : UINT32_MAX;
			return -1;
		}
		const unsigned char *at = w->img + w->img_slots[i] - 1;
		if (memcmp(at, f, sizeof *f) == 0 && memcmp(at + sizeof *f, path, f->path_len) == 0)
			return w->img_file_no[i];
	}
	return -1;
}

/* The gathered entries as an IMAGES_SHARED block: as many of them as the
 * room of an UNTIL_FULL log takes (each refers only to files before it). */
static void shared_flush(struct pt_logw *w)
{
	if (!w->img_len)
		return;
	pt_logb_close(w);
	pt_logb_open(w, PT_LOG_IMAGES_SHARED, 0);
	uint32_t len = 0, n = 0, room = (uint32_t)(w->blk_end - w->pos);
	while (len < w->img_len) {
		uint32_t size;
		memcpy(&size, w->img + len, sizeof size);
		if (size > room - len)
			break;
		len += size;
		n++;
	}
	memcpy(w->pos, w->img, len);
	w->pos += len;
	w->blk_records = n;
	pt_logb_close(w);
	w->img_len = w->img_nfiles = 0;
	memset(w->img_slots, 0, sizeof w->img_slots);
}

static int images_room(struct pt_logw *w)
{
	if (w->img)
		return 0;
	w->img_cap = w->block_size - PT_LOG_BLOCK_HDR;
	w->img = malloc(w->img_cap);
	return w->img ? 0 : ENOMEM;
}

/* Both gathered image payloads, as blocks. */
static void images_flush(struct pt_logw *w)
{
	pt_logwi_flush(w);
	shared_flush(w);
}

int pt_logw_image(struct pt_logw *w, const struct pt_log_image *e, const char *path, uint32_t uid)
{
	if (w->finished || !e || e->path_len > PT_LOG_IMAGE_PATH_MAX ||
	    e->build_id_len > sizeof e->build_id)
		return EINVAL;
	int err = pt_logwi_image(w, e, path, uid);
	if (err != PT_LOGWI_TABLE_FULL)
		return err;
	err = images_room(w);
	if (err)
		return err;
	struct pt_log_shared_file f = {
	    .entry_size = pt_log_shared_file_size(e->path_len),
	    .kind = PT_LOG_SHARED_FILE,
	    .path_len = e->path_len,
	    .build_id_len = e->build_id_len,
	    .flags = e->flags & 1u,
	};
	memcpy(f.build_id, e->build_id, e->build_id_len);
	uint32_t slot;
	int64_t file = file_find(w, &f, path, &slot);
	const uint32_t image_size = sizeof(struct pt_log_shared_image);
	if (w->img_len + (file < 0 ? f.entry_size : 0) + image_size > w->img_cap) {
		shared_flush(w);
		file = file_find(w, &f, path, &slot);
	}
	if (file < 0) {
		unsigned char *at = w->img + w->img_len;
		memcpy(at, &f, sizeof f);
		memcpy(at + sizeof f, path, e->path_len);
		memset(at + sizeof f + e->path_len, 0, f.entry_size - sizeof f - e->path_len);
		file = w->img_nfiles++;
		if (slot != UINT32_MAX) {
			w->img_slots[slot] = w->img_len + 1;
			w->img_file_no[slot] = (uint32_t)file;
		}
		w->img_len += f.entry_size;
	}
	struct pt_log_shared_image m = {
	    .entry_size = image_size,
	    .kind = PT_LOG_SHARED_IMAGE,
	    .index = e->index,
	    .count = e->count,
	    .file = (uint32_t)file,
	    .pid = e->pid,
	    .uid = uid,
	    .time_ns = e->time_ns,
	    .set = e->set,
	    .start = e->start,
	    .end = e->end,
	    .bias = e->bias,
	};
	memcpy(w->img + w->img_len, &m, sizeof m);
	w->img_len += image_size;
	return 0;
}

void pt_logw_images_done(struct pt_logw *w)
{
	pt_logwi_renew(w);
	images_flush(w);
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
		pt_logb_close(w); /* names go before the events that follow */
		emit_pending_names(w);
		return 0;
	}
	pt_logio_wait(w); /* w->done is the thread's while it writes */
	/* In place: the entries of the range, one write. */
	uint64_t off = w->st->hdr.names_off +
	               (uint64_t)(first_id - PT_LOG_USER_FIRST) * PT_LOG_NAME_SIZE;
	int err = pt_logio_write_all(w->fd, 1, w->names[first_id - PT_LOG_USER_FIRST],
	                    (size_t)count * PT_LOG_NAME_SIZE, off);
	if (err) {
		pt_logio_keep_error(w, err);
		pt_logio_commit(w);
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
	pt_logio_commit(w);
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
	w->ctx = calloc(w->max_ctx, sizeof *w->ctx);
	w->names = calloc(TRACE_USER_EVENT_MAX, sizeof *w->names);
	if (!w->out || !w->ctx || !w->names) {
		pt_logw_free(w);
		return ENOMEM;
	}
	pt_logio_start(w); /* without the thread, every write waits */
	pt_logb_none(w);
	w->ctx_cur = -1;
	return 0;
}

static int params_ok(const struct pt_logw_params *p)
{
	return pt_log_policies_ok(p->log_policy, p->stream_policy, p->inheritance) &&
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
	if (h->layout == PT_LOG_RING)
		h->ring_slots = pt_log_ring_slots(p->log_size, h->block_size);
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
	h->create_mono = p->create_mono;
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
	pt_logio_emptied(w);
	reset_room(w);

	/* Header and empty name table in one write: no space shows here. */
	size_t len = (size_t)st->hdr.data_off;
	unsigned char *img = calloc(1, len);
	if (!img) {
		pt_logw_free(w);
		return ENOMEM;
	}
	pt_logio_header_image(w, &w->done, (struct pt_log_header *)img);
	struct pt_log_host host;
	pt_log_host_take(&host);
	memcpy(img + PT_LOG_HOST_OFF, &host, sizeof host);
	if (seekable && ftruncate(fd, 0) != 0)
		err = errno == EINTR ? EIO : errno;
	if (!err)
		err = pt_logio_write_all(fd, seekable, img, len, 0);
	free(img);
	if (err) {
		pt_logw_free(w);
		return err;
	}
	pt_logio_commit(w);
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
	pt_logio_emptied(w);
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

/* Status s into prog, and into done too when it is the keeper's (no job
 * queued): else the thread's next job carries it there. */
static void take_status(struct pt_logw *w, const struct pt_logw_status *s, int both)
{
	if (!s)
		return;
	struct pt_log_status *d[2] = {&w->prog.status, &w->done.status};
	int32_t error = both ? w->done.error : w->prog.error;
	for (int i = 0; i < 1 + both; i++) {
		d[i]->stream_status = s->stream_status;
		d[i]->stream_full = s->stream_full;
		d[i]->stream_overrun = s->stream_overrun;
		d[i]->flush_status = s->flush_status;
		d[i]->flush_error = s->flush_error ? s->flush_error : error;
		d[i]->lost_events = s->lost_events;
		d[i]->triggers_suppressed = s->triggers_suppressed;
	}
	w->prog.waits = s->waits;
	if (both)
		w->done.waits = s->waits;
}

int pt_logw_sync(struct pt_logw *w, const struct pt_logw_status *s)
{
	if (w->finished)
		return w->done.error ? w->done.error : EINVAL;
	images_flush(w);
	pt_logb_close(w);
	pt_logio_flush(w);
	take_status(w, s, 1);
	if (w->seekable)
		pt_logio_keep_error(w, header_rewrite(w));
	pt_logio_commit(w);
	return w->done.error;
}

int pt_logw_hand(struct pt_logw *w, const struct pt_logw_status *s)
{
	if (!w->io_running)
		return pt_logw_sync(w, s);
	if (w->finished)
		return w->prog.error ? w->prog.error : EINVAL;
	images_flush(w);
	pt_logb_close(w);
	take_status(w, s, 0);
	pt_logio_hand(w);
	return w->prog.error;
}

int pt_logw_clear(struct pt_logw *w)
{
	if (w->finished)
		return EINVAL;
	int err = 0;
	pt_logio_wait(w);
	w->out_len = 0;
	w->out_handed = 0;
	w->out_blocks = 0;
	pt_logb_none(w);
	w->img_len = w->img_nfiles = 0;
	memset(w->img_slots, 0, sizeof w->img_slots);
	pt_logwi_forget(w); /* descriptions not yet written are dropped too */
	struct pt_logw_progress *d = &w->done;
	d->log_full = 0;
	d->status.log_full = POSIX_TRACE_NOT_FULL;
	d->status.log_overrun = POSIX_TRACE_NO_OVERRUN;
	d->status.log_dropped = 0;
	if (w->seekable) {
		d->event_bytes = 0;
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
	pt_logio_keep_error(w, err);
	pt_logio_commit(w);
	return err;
}

int pt_logw_finish(struct pt_logw *w, const struct pt_logw_status *s)
{
	if (w->finished)
		return w->done.error ? w->done.error : EINVAL;
	images_flush(w);
	pt_logb_close(w);
	pt_logio_wait(w);
	take_status(w, s, 1);
	if (w->layout == PT_LOG_LINEAR) {
		pt_logb_open(w, PT_LOG_END, w->last_ts);
		memcpy(w->pos, &w->prog.status, sizeof w->prog.status);
		w->pos += sizeof w->prog.status;
		memcpy(w->pos, &w->prog.waits, sizeof w->prog.waits);
		w->pos += sizeof w->prog.waits;
		pt_logb_seal(w, PT_LOG_END);
	}
	pt_logio_flush(w);
	w->prog.flags |= PT_LOG_CLOSED;
	w->done.flags |= PT_LOG_CLOSED;
	w->finished = 1;
	w->room = 0;
	struct stat sb;
	int regular = fstat(w->fd, &sb) == 0 && S_ISREG(sb.st_mode);
	if (w->seekable) {
		if (w->layout == PT_LOG_LINEAR && ftruncate(w->fd, (off_t)w->done.write_off) != 0)
			pt_logio_keep_error(w, errno);
		pt_logio_keep_error(w, header_rewrite(w));
	}
	pt_logio_destination_wait(w->st, 1);
	if (regular && fdatasync(w->fd) != 0)
		pt_logio_keep_error(w, errno);
	pt_logio_destination_wait(w->st, 0);
	pt_logio_commit(w);
	return w->done.error;
}

void pt_logw_free(struct pt_logw *w)
{
	pt_logio_stop(w); /* after what it was given is written */
	free(w->out);
	free(w->ctx);
	free(w->names);
	free(w->img);
	w->img = NULL;
	pt_logwi_free(w);
	w->img_len = w->img_nfiles = 0;
	w->out = NULL;
	w->ctx = NULL;
	w->names = NULL;
	w->blk = w->pos = w->blk_end = NULL;
	w->out_len = 0;
	w->out_blocks = 0;
	w->finished = 1;
}
