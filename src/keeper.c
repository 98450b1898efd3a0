/*
 * The log writer.  Each active stream with a log has a keeper: a process
 * forked from the controller at posix_trace_create_withlog() that holds the
 * log file and the stream mapping, copies events from the stream into the
 * log when asked (posix_trace_flush), when a POSIX_TRACE_FLUSH stream fills
 * up, and at the end.  The end is posix_trace_shutdown(), or the controller
 * going away by any means (exit, exec, SIGKILL): the keeper holds the read end
 * of a pipe whose only write end is the controller's, so it sees the
 * controller go and finishes the log by itself.  docs/DESIGN.md says why.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include "log.h"

#define KEEPER_TICK_MS 10
#define OUT_BUFFER (1u << 20)

PT_HIDDEN void pt_thread_reset_for_keeper(void);

int pt_log_check_fd(int fd, int log_policy, int *seekable)
{
	int fl = fcntl(fd, F_GETFL);
	struct stat st;
	if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &st) != 0)
		return EBADF;
	if (S_ISREG(st.st_mode)) {
		/* The log is laid out from the start of the file; pwrite needs
		 * O_APPEND off. */
		if ((fl & O_APPEND) && fcntl(fd, F_SETFL, fl & ~O_APPEND) != 0)
			return EINVAL;
		*seekable = 1;
		return 0;
	}
	if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISCHR(st.st_mode)) {
		*seekable = 0;
		return log_policy == POSIX_TRACE_APPEND ? 0 : EINVAL;
	}
	return EINVAL;
}

struct keeper {
	struct pt_handle *h;
	struct pt_stream_hdr *shdr;
	int fd, ctl, seekable, slot;
	int layout, policy;
	uint32_t block_size;
	uint64_t ring_slots;
	uint64_t seq;            /* next block sequence number */
	uint64_t write_off;      /* linear: where the next block goes */
	uint64_t data_bytes;     /* bytes of blocks in the data region */
	uint64_t limit;          /* UNTIL_FULL: log-max-size */
	int log_full;            /* UNTIL_FULL: nothing more is written */
	unsigned char *block;    /* block being filled: header + payload */
	uint32_t block_len, block_records;
	unsigned char *out;      /* linear: blocks waiting for one write() */
	size_t out_len, out_cap;
	unsigned char *data;     /* one event's data */
	uint32_t names_in_log;
	int error;               /* first error */
	struct pt_log_header hdr;
};

static uint32_t block_size_for(const struct pt_attr *a)
{
	uint32_t need = (uint32_t)(sizeof(struct pt_log_block) +
	                           pt_log_record_size((size_t)(a->max_data_size > 256
	                                                           ? a->max_data_size
	                                                           : 256)) + 8);
	uint32_t size = PT_LOG_MIN_BLOCK;
	while (size < need)
		size *= 2;
	return size;
}

static int write_all_at(int fd, int seekable, const void *buf, size_t len, uint64_t off)
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

static void header_init(struct pt_log_header *lh, const struct pt_map *m, int seekable,
                        int layout, uint32_t block_size, uint64_t ring_slots)
{
	const struct pt_stream_hdr *s = pt_hdr(m);
	const struct pt_attr *a = &s->attr;
	memset(lh, 0, sizeof *lh);
	memcpy(lh->magic, PT_LOG_MAGIC, 8);
	lh->version = PT_LOG_VERSION;
	lh->byte_order = PT_LOG_BOM;
	lh->header_size = PT_LOG_HEADER_SIZE;
	lh->flags = seekable ? PT_LOGF_SEEKABLE : 0;
	lh->names_off = PT_LOG_NAMES_OFF;
	lh->names_size = PT_LOG_NAMES_SIZE;
	lh->data_off = PT_LOG_DATA_OFF;
	lh->layout = (uint32_t)layout;
	lh->block_size = block_size;
	lh->ring_slots = ring_slots;
	lh->clock_id = CLOCK_MONOTONIC;
	lh->name_size = PT_NAME_SIZE;
	lh->clockres_ns = (uint64_t)a->clockres_sec * 1000000000u + (uint64_t)a->clockres_nsec;
	lh->base_real_ns = m->base_real_ns;
	memcpy(lh->trace_name, a->name, TRACE_NAME_MAX);
	memcpy(lh->genversion, a->genversion, TRACE_NAME_MAX);
	lh->trace_name[TRACE_NAME_MAX - 1] = lh->genversion[TRACE_NAME_MAX - 1] = '\0';
	lh->create_sec = a->create_sec;
	lh->create_nsec = a->create_nsec;
	lh->stream_size = a->stream_size;
	lh->max_data_size = a->max_data_size;
	lh->log_size = a->log_size;
	lh->stream_policy = a->stream_policy;
	lh->log_policy = a->log_policy;
	lh->inheritance = a->inheritance;
}

static int header_write(int fd, int seekable, struct pt_log_header *lh)
{
	unsigned char page[PT_LOG_HEADER_SIZE];
	lh->crc = pt_crc32c(0, lh, offsetof(struct pt_log_header, crc));
	memset(page, 0, sizeof page);
	memcpy(page, lh, sizeof *lh);
	return write_all_at(fd, seekable, page, sizeof page, 0);
}

/* Name table entries [from, to) as they stand in the stream. */
static void names_image(const struct pt_map *m, unsigned char *dst, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i < to; i++) {
		char *e = (char *)dst + (size_t)(i - from) * PT_NAME_SIZE;
		memset(e, 0, PT_NAME_SIZE);
		pt_stream_get_name(m, PT_USER_FIRST + i, e);
	}
}

static uint32_t names_known(const struct pt_map *m)
{
	uint32_t n = 1;
	while (n < TRACE_USER_EVENT_MAX &&
	       atomic_load_explicit(&pt_hdr(m)->name_valid[n], memory_order_acquire))
		n++;
	return n - 1; /* user names after the unnamed event */
}

/* ---- blocks ------------------------------------------------------------ */

static void keep_error(struct keeper *k, int err)
{
	if (!err)
		return;
	if (!k->error)
		k->error = err;
	uint32_t none = 0;
	atomic_compare_exchange_strong_explicit(&k->shdr->flush_error, &none, (uint32_t)err,
	                                        memory_order_relaxed, memory_order_relaxed);
	pt_write_event(k->slot, POSIX_TRACE_ERROR, &err, sizeof err, pt_now_ns(), 0, 1);
}

static int out_flush(struct keeper *k)
{
	if (!k->out_len)
		return 0;
	int err = write_all_at(k->fd, k->seekable, k->out, k->out_len, k->write_off);
	k->write_off += k->out_len;
	k->out_len = 0;
	return err;
}

static void seal_block(struct keeper *k, uint32_t type)
{
	struct pt_log_block *b = (struct pt_log_block *)k->block;
	b->magic = PT_LOG_BLOCK_MAGIC;
	b->type = type;
	b->seq = k->seq++;
	b->payload_len = k->block_len;
	b->payload_crc = pt_crc32c(0, k->block + sizeof *b, k->block_len);
	b->nrecords = k->block_records;
	b->header_crc = pt_crc32c(0, b, offsetof(struct pt_log_block, header_crc));
}

/* Writes the block being filled, if any. */
static void emit_block(struct keeper *k, uint32_t type)
{
	if (type == PT_BLK_EVENTS && !k->block_records)
		return;
	seal_block(k, type);
	size_t len = sizeof(struct pt_log_block) + k->block_len;
	int err = 0;
	if (k->layout == PT_LAYOUT_RING) {
		uint64_t slot = (k->seq - 1) % k->ring_slots;
		if (k->seq - 1 >= k->ring_slots) {
			atomic_store_explicit(&k->shdr->log_full, 1, memory_order_relaxed);
			atomic_store_explicit(&k->shdr->log_overrun, 1, memory_order_relaxed);
			k->hdr.status.log_overrun = POSIX_TRACE_OVERRUN;
			k->hdr.status.log_full = POSIX_TRACE_FULL;
		}
		err = write_all_at(k->fd, 1, k->block, len,
		                   PT_LOG_DATA_OFF + slot * (uint64_t)k->block_size);
		k->data_bytes = (k->seq < k->ring_slots ? k->seq : k->ring_slots) * k->block_size;
	} else {
		size_t padded = (len + 7) & ~(size_t)7;
		if (k->out_len + padded > k->out_cap)
			err = out_flush(k);
		memset(k->block + len, 0, padded - len);
		memcpy(k->out + k->out_len, k->block, padded);
		k->out_len += padded;
		k->data_bytes += padded;
	}
	k->hdr.blocks_written++;
	k->block_len = 0;
	k->block_records = 0;
	keep_error(k, err);
}

static uint32_t payload_room(const struct keeper *k)
{
	return k->block_size - (uint32_t)sizeof(struct pt_log_block) - k->block_len;
}

static void put_record(struct keeper *k, const struct posix_trace_event_info *ev,
                       const void *data, size_t len)
{
	size_t size = pt_log_record_size(len);
	if (size > payload_room(k))
		emit_block(k, PT_BLK_EVENTS);
	struct pt_log_record r = {
	    .data_len = (uint32_t)len,
	    .id = (uint16_t)ev->posix_event_id,
	    .flags = ev->posix_truncation_status == POSIX_TRACE_TRUNCATED_RECORD ? PT_REC_TRUNCATED : 0,
	    .pid = ev->posix_pid,
	    .ts = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u + (uint64_t)ev->posix_timestamp.tv_nsec,
	    .pc = (uint64_t)(uintptr_t)ev->posix_prog_address,
	    .thread = (uint64_t)ev->posix_thread_id,
	};
	unsigned char *p = k->block + sizeof(struct pt_log_block) + k->block_len;
	memcpy(p, &r, sizeof r);
	memcpy(p + sizeof r, data, len);
	memset(p + sizeof r + len, 0, size - sizeof r - len);
	k->block_len += (uint32_t)size;
	k->block_records++;
}

/* UNTIL_FULL log: would this record, plus room for the final STOP, pass
 * log-max-size? */
static int log_would_overflow(const struct keeper *k, size_t len)
{
	uint64_t stop = sizeof(struct pt_log_block) + pt_log_record_size(sizeof(int)) + 8;
	uint64_t pending = k->block_records ? sizeof(struct pt_log_block) + k->block_len + 8 : 0;
	return k->data_bytes + pending + pt_log_record_size(len) + stop > k->limit;
}

/* The log is full: the last event of an UNTIL_FULL log is POSIX_TRACE_STOP,
 * and the stream stops. */
static void log_became_full(struct keeper *k, uint64_t ts_ns)
{
	struct posix_trace_event_info stop;
	int automatic = 1;
	memset(&stop, 0, sizeof stop);
	stop.posix_event_id = POSIX_TRACE_STOP;
	stop.posix_timestamp.tv_sec = (time_t)(ts_ns / 1000000000u);
	stop.posix_timestamp.tv_nsec = (long)(ts_ns % 1000000000u);
	put_record(k, &stop, &automatic, sizeof automatic);
	emit_block(k, PT_BLK_EVENTS);
	k->log_full = 1;
	k->hdr.status.log_full = POSIX_TRACE_FULL;
	k->hdr.status.log_overrun = POSIX_TRACE_OVERRUN;
	atomic_store_explicit(&k->shdr->log_full, 1, memory_order_relaxed);
	atomic_store_explicit(&k->shdr->log_overrun, 1, memory_order_relaxed);
	uint32_t running = PT_ST_RUNNING;
	atomic_compare_exchange_strong_explicit(&k->shdr->state, &running, PT_ST_SUSPENDED,
	                                        memory_order_acq_rel, memory_order_relaxed);
}

static void log_event(struct keeper *k, const struct posix_trace_event_info *ev,
                      const void *data, size_t len)
{
	if (k->log_full) {
		k->hdr.status.log_overrun = POSIX_TRACE_OVERRUN;
		atomic_store_explicit(&k->shdr->log_overrun, 1, memory_order_relaxed);
		return;
	}
	if (k->layout == PT_LAYOUT_LINEAR && k->policy == POSIX_TRACE_UNTIL_FULL &&
	    log_would_overflow(k, len)) {
		log_became_full(k, (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
		                       (uint64_t)ev->posix_timestamp.tv_nsec);
		atomic_store_explicit(&k->shdr->log_overrun, 1, memory_order_relaxed);
		return;
	}
	put_record(k, ev, data, len);
}

/* New names go into the log before the events that use them: in place in
 * the name table of a seekable log, as a NAMES block otherwise. */
static void log_new_names(struct keeper *k)
{
	uint32_t n = names_known(&k->h->map);
	if (n <= k->names_in_log)
		return;
	uint32_t from = k->names_in_log + 1, to = n + 1; /* entries, by user index */
	if (k->seekable) {
		size_t len = (size_t)(to - from) * PT_NAME_SIZE;
		unsigned char *img = malloc(len);
		if (!img) {
			keep_error(k, ENOMEM);
			return;
		}
		names_image(&k->h->map, img, from, to);
		keep_error(k, write_all_at(k->fd, 1, img, len,
		                           PT_LOG_NAMES_OFF + (uint64_t)from * PT_NAME_SIZE));
		free(img);
	} else {
		emit_block(k, PT_BLK_EVENTS);
		for (uint32_t i = from; i < to; i++) {
			size_t entry = sizeof(uint32_t) + PT_NAME_SIZE;
			if (entry > payload_room(k))
				emit_block(k, PT_BLK_NAMES);
			unsigned char *p = k->block + sizeof(struct pt_log_block) + k->block_len;
			uint32_t id = PT_USER_FIRST + i;
			memcpy(p, &id, sizeof id);
			names_image(&k->h->map, p + sizeof id, i, i + 1);
			k->block_len += (uint32_t)entry;
			k->block_records++;
		}
		emit_block(k, PT_BLK_NAMES);
	}
	k->names_in_log = n;
	k->hdr.nnames = n;
}

static void snapshot_status(struct keeper *k)
{
	struct pt_stream_hdr *s = k->shdr;
	uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
	struct pt_log_status *st = &k->hdr.status;
	st->stream_status = state == PT_ST_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
	st->stream_full = (state == PT_ST_FULL || atomic_load_explicit(&s->full, memory_order_relaxed))
	                      ? POSIX_TRACE_FULL
	                      : POSIX_TRACE_NOT_FULL;
	st->lost_events = pt_stream_lost(&k->h->map);
	if (st->lost_events)
		st->stream_overrun = POSIX_TRACE_OVERRUN;
	st->flush_status = POSIX_TRACE_NOT_FLUSHING;
	st->flush_error = k->error;
}

/* Copies every event now in the stream into the log.  FLUSH_START and
 * FLUSH_STOP are recorded once the drain has made room (a full stream could
 * not take them before), with the times the flush began and ended; they
 * reach the log with the next flush. */
static void flush_stream(struct keeper *k, uint32_t request)
{
	struct posix_trace_event_info ev;
	size_t len;
	uint64_t began = pt_now_ns();
	log_new_names(k);
	while (pt_read_next(k->h, &ev, k->data, k->h->map.max_data, &len))
		log_event(k, &ev, k->data, len);
	emit_block(k, PT_BLK_EVENTS);
	keep_error(k, out_flush(k));
	pt_write_event(k->slot, POSIX_TRACE_FLUSH_START, NULL, 0, began, 0, 1);
	pt_write_event(k->slot, POSIX_TRACE_FLUSH_STOP, NULL, 0, pt_now_ns(), 0, 1);
	if (k->seekable) {
		snapshot_status(k);
		keep_error(k, header_write(k->fd, 1, &k->hdr));
	}
	atomic_store_explicit(&k->shdr->flush_done, request, memory_order_release);
}

static void clear_log(struct keeper *k)
{
	k->out_len = 0;
	k->block_len = k->block_records = 0;
	k->log_full = 0;
	k->hdr.status.log_full = POSIX_TRACE_NOT_FULL;
	k->hdr.status.log_overrun = POSIX_TRACE_NO_OVERRUN;
	atomic_store_explicit(&k->shdr->log_full, 0, memory_order_relaxed);
	atomic_store_explicit(&k->shdr->log_overrun, 0, memory_order_relaxed);
	if (!k->seekable)
		return; /* APPEND to a pipe: what was written stays written */
	k->seq = 0;
	k->write_off = PT_LOG_DATA_OFF;
	k->data_bytes = 0;
	k->hdr.blocks_written = 0;
	if (ftruncate(k->fd, (off_t)PT_LOG_DATA_OFF) != 0)
		keep_error(k, errno);
	keep_error(k, header_write(k->fd, 1, &k->hdr));
}

/* The last flush: everything recorded, the final status, then to disk. */
__attribute__((noreturn)) static void finish_log(struct keeper *k)
{
	if (k->fd < 0)
		_exit(0);
	uint32_t req = atomic_load_explicit(&k->shdr->flush_req, memory_order_acquire);
	flush_stream(k, req);
	/* FLUSH_START and FLUSH_STOP of the last flush are still in the stream. */
	struct posix_trace_event_info ev;
	size_t len;
	while (pt_read_next(k->h, &ev, k->data, k->h->map.max_data, &len))
		log_event(k, &ev, k->data, len);
	emit_block(k, PT_BLK_EVENTS);
	snapshot_status(k);
	k->hdr.flags |= PT_LOGF_CLOSED;
	if (k->layout == PT_LAYOUT_LINEAR) {
		memcpy(k->block + sizeof(struct pt_log_block), &k->hdr.status, sizeof k->hdr.status);
		k->block_len = sizeof k->hdr.status;
		k->block_records = 0;
		emit_block(k, PT_BLK_END);
	}
	keep_error(k, out_flush(k));
	if (k->seekable) {
		if (k->layout == PT_LAYOUT_LINEAR && ftruncate(k->fd, (off_t)k->write_off) != 0)
			keep_error(k, errno);
		keep_error(k, header_write(k->fd, 1, &k->hdr));
		if (fdatasync(k->fd) != 0)
			keep_error(k, errno);
	}
	_exit(k->error > 0 && k->error < 256 ? k->error : k->error ? EIO : 0);
}

static int stream_needs_flush(const struct keeper *k)
{
	const struct pt_stream_hdr *s = k->shdr;
	if (k->fd < 0 || s->attr.stream_policy != POSIX_TRACE_FLUSH)
		return 0;
	return atomic_load_explicit(&s->state, memory_order_relaxed) == PT_ST_FULL ||
	       atomic_load_explicit(&s->free_count, memory_order_relaxed) < k->h->map.nchunks * 3 / 4;
}

/* Wakes the keeper; once until it has flushed, whoever asks. */
void pt_keeper_kick(struct pt_stream_hdr *h)
{
	if (atomic_load_explicit(&h->keeper_kicked, memory_order_relaxed) ||
	    atomic_exchange_explicit(&h->keeper_kicked, 1, memory_order_acq_rel))
		return;
	atomic_fetch_add_explicit(&h->keeper_wake, 1, memory_order_release);
	syscall(SYS_futex, &h->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

static void ack(struct keeper *k)
{
	atomic_fetch_add_explicit(&k->shdr->keeper_ack, 1, memory_order_release);
	syscall(SYS_futex, &k->shdr->keeper_ack, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

__attribute__((noreturn)) static void keeper_loop(struct keeper *k)
{
	for (;;) {
		uint32_t wake = atomic_load_explicit(&k->shdr->keeper_wake, memory_order_acquire);
		struct pollfd p = {.fd = k->ctl, .events = POLLIN};
		int n = poll(&p, 1, 0);
		if (n > 0 && (p.revents & POLLIN)) {
			char cmds[64];
			ssize_t got = read(k->ctl, cmds, sizeof cmds);
			for (ssize_t i = 0; i < got; i++) {
				if (cmds[i] == 'F')
					flush_stream(k, atomic_load_explicit(&k->shdr->flush_req,
					                                     memory_order_acquire));
				else if (cmds[i] == 'C')
					clear_log(k);
				else if (cmds[i] == 'S')
					finish_log(k);
				ack(k);
			}
			if (got == 0)
				p.revents |= POLLHUP;
		}
		if (n > 0 && (p.revents & (POLLHUP | POLLERR))) {
			/* The controller is gone: the stream is shut down as if
			 * it had called posix_trace_shutdown(). */
			pt_stream_end(k->shdr);
			pt_wake_readers(k->shdr);
			if (k->h->named)
				pt_remote_abandon(k->h);
			finish_log(k);
		}
		if (stream_needs_flush(k)) {
			uint32_t req = atomic_fetch_add_explicit(&k->shdr->flush_req, 1,
			                                         memory_order_acq_rel) + 1;
			atomic_store_explicit(&k->shdr->keeper_kicked, 0, memory_order_relaxed);
			flush_stream(k, req);
			continue;
		}
		atomic_store_explicit(&k->shdr->keeper_kicked, 0, memory_order_relaxed);
		/* Commands also bump keeper_wake; the controller's death is
		 * seen on the next tick. */
		struct timespec tick = {0, KEEPER_TICK_MS * 1000000L};
		syscall(SYS_futex, &k->shdr->keeper_wake, FUTEX_WAIT, wake, &tick, NULL, 0);
	}
}

/* Leaves the keeper with only the log, its command pipe and stdio. */
static void close_other_fds(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;
	if (lo > 3)
		syscall(SYS_close_range, 3u, (unsigned)lo - 1, 0u);
	if (hi > lo + 1)
		syscall(SYS_close_range, (unsigned)lo + 1, (unsigned)hi - 1, 0u);
	syscall(SYS_close_range, (unsigned)hi + 1, ~0u, 0u);
}

static __thread int forking_keeper;

int pt_forking_keeper(void) { return forking_keeper; }

__attribute__((noreturn)) static void keeper_main(struct keeper *k)
{
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	setsid();
	prctl(PR_SET_NAME, "posixtrace-keep");
	close_other_fds(k->fd >= 0 ? k->fd : k->ctl, k->ctl);
	pthread_mutex_init(&pt_proc.lock, NULL);
	pt_thread_reset_for_keeper();
	pt_proc.system_writer = 1;
	pt_proc.pid = getpid();
	pt_proc.pcb = &pt_proc.pcb_fallback; /* the controller's block is not ours */
	for (int i = 0; i < TRACE_SYS_MAX; i++)
		if (i != k->slot)
			atomic_store_explicit(&pt_proc.attached[i].map, NULL, memory_order_relaxed);
	k->h->npending = 0;
	k->h->resume_pending = 0;
	for (uint32_t l = 0; l < PT_MAX_LANES; l++)
		k->h->commit_cache[l].key = UINT64_MAX;
	if (k->fd >= 0) {
		k->block = malloc(k->block_size);
		k->out_cap = OUT_BUFFER > 2 * k->block_size ? OUT_BUFFER : 2 * k->block_size;
		k->out = malloc(k->out_cap);
		k->data = malloc(k->h->map.max_data ? k->h->map.max_data : 1);
		if (!k->block || !k->out || !k->data)
			_exit(2);
	}
	keeper_loop(k);
}

/* Writes the header and name table of a new log; the keeper goes on. */
static int log_begin(struct keeper *k, struct pt_handle *h, int fd, int seekable)
{
	const struct pt_attr *a = &pt_hdr(&h->map)->attr;
	int layout = seekable && a->log_policy == POSIX_TRACE_LOOP ? PT_LAYOUT_RING : PT_LAYOUT_LINEAR;
	uint32_t block_size = block_size_for(a);
	uint64_t slots = a->log_size / block_size;
	if (slots < 2)
		slots = 2;
	header_init(&k->hdr, &h->map, seekable, layout, block_size,
	            layout == PT_LAYOUT_RING ? slots : 0);
	k->hdr.nnames = names_known(&h->map);
	unsigned char *names = calloc(1, PT_LOG_DATA_OFF - PT_LOG_NAMES_OFF);
	if (!names)
		return ENOMEM;
	names_image(&h->map, names + PT_NAME_SIZE, 1, k->hdr.nnames + 1);
	int err = 0;
	if (seekable && ftruncate(fd, 0) != 0)
		err = errno;
	if (!err)
		err = header_write(fd, seekable, &k->hdr);
	if (!err)
		err = write_all_at(fd, seekable, names, PT_LOG_DATA_OFF - PT_LOG_NAMES_OFF,
		                   PT_LOG_NAMES_OFF);
	free(names);
	if (err)
		return err == EFBIG || err == ENOSPC || err == EBADF ? err : ENOSPC;
	k->fd = fd;
	k->seekable = seekable;
	k->layout = layout;
	k->policy = a->log_policy;
	k->block_size = block_size;
	k->ring_slots = slots;
	k->write_off = PT_LOG_DATA_OFF;
	k->limit = a->log_size;
	k->names_in_log = k->hdr.nnames;
	return 0;
}

/* Starts the keeper of a stream: with a log (fd >= 0), and for a stream
 * that traces another process (to shut it down if the controller dies). */
int pt_keeper_start(struct pt_handle *h, int fd, int seekable)
{
	struct pt_stream_hdr *s = pt_hdr(&h->map);
	int ctl[2];
	struct keeper *k = calloc(1, sizeof *k);
	if (!k)
		return ENOMEM;
	k->fd = -1;
	int err = fd >= 0 ? log_begin(k, h, fd, seekable) : 0;
	if (err) {
		free(k);
		return err;
	}
	if (pipe2(ctl, O_CLOEXEC) != 0) {
		free(k);
		return EAGAIN;
	}
	k->h = h;
	k->shdr = s;
	k->ctl = ctl[0];
	k->slot = h->slot;

	forking_keeper = 1;
	pid_t pid = fork();
	forking_keeper = 0;
	if (pid == 0)
		keeper_main(k);
	free(k);
	close(ctl[0]);
	if (pid < 0) {
		close(ctl[1]);
		return EAGAIN;
	}
	h->keeper = pid;
	h->keeper_ctl = ctl[1];
	s->keeper_pid = pid;
	s->keeper_start = pt_proc_starttime(pid);
	return 0;
}

static void wake_keeper(struct pt_stream_hdr *s)
{
	atomic_fetch_add_explicit(&s->keeper_wake, 1, memory_order_release);
	syscall(SYS_futex, &s->keeper_wake, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/* Sends a command; waits until the keeper has carried it out. */
int pt_keeper_command(struct pt_handle *h, char cmd)
{
	struct pt_stream_hdr *s = pt_hdr(&h->map);
	if (cmd == 'F')
		atomic_fetch_add_explicit(&s->flush_req, 1, memory_order_acq_rel);
	uint32_t seen = atomic_load_explicit(&s->keeper_ack, memory_order_acquire);
	if (write(h->keeper_ctl, &cmd, 1) != 1)
		return EIO;
	wake_keeper(s);
	if (cmd == 'F')
		return 0; /* posix_trace_flush only starts the flush */
	while (atomic_load_explicit(&s->keeper_ack, memory_order_acquire) == seen) {
		struct timespec tick = {0, 50 * 1000 * 1000};
		if (waitpid(h->keeper, NULL, WNOHANG) == h->keeper) {
			h->keeper = 0;
			return EIO;
		}
		syscall(SYS_futex, &s->keeper_ack, FUTEX_WAIT, seen, &tick, NULL, 0);
	}
	return 0;
}

/* posix_trace_shutdown: the keeper writes everything and exits. */
int pt_keeper_finish(struct pt_handle *h)
{
	struct pt_stream_hdr *s = pt_hdr(&h->map);
	char cmd = 'S';
	int status = 0, err = 0;
	if (write(h->keeper_ctl, &cmd, 1) != 1)
		err = EIO;
	wake_keeper(s);
	close(h->keeper_ctl);
	h->keeper_ctl = -1;
	while (waitpid(h->keeper, &status, 0) < 0 && errno == EINTR)
		;
	h->keeper = 0;
	/* The exit status, not the shared mapping (which the target can
	 * write), says how the log ended. */
	if (!err && WIFEXITED(status))
		err = WEXITSTATUS(status);
	else if (!err)
		err = EIO;
	return err;
}
