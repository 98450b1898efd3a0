/*
 * Pre-recorded streams: posix_trace_open(), posix_trace_rewind(),
 * posix_trace_close() and reading a trace log.  The file is untrusted: the
 * header is checked, every block's length is bounded and its CRC verified,
 * every record is checked against its block; the first damage ends the
 * readable part and is reported once as POSIX_TRACE_ERROR.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"

#define MAX_BLOCK (16u << 20)

/* The fuzzer build skips checksums so that mutated logs reach the parsers
 * behind them. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_OK(stored, computed) ((void)(computed), 1)
#else
#define CRC_OK(stored, computed) ((stored) == (computed))
#endif
#define MAX_UNSEEKABLE (1ull << 32)
#define DAMAGE_ERROR EBADMSG

struct block_ref {
	uint64_t off;
	uint32_t len;
};

struct pt_logreader {
	int fd;
	unsigned char *mem;        /* an unseekable log, read whole */
	uint64_t size;
	struct pt_log_header hdr;
	struct pt_log_status status;
	char names[TRACE_USER_EVENT_MAX][PT_NAME_SIZE];
	struct block_ref *blocks;
	size_t nblocks, cap;
	int damaged;               /* the index stopped at damage */
	size_t cur;                /* next block to load */
	unsigned char *buf;
	uint32_t buf_len, buf_pos;
	int error_reported;
};

static int read_at(struct pt_logreader *lr, void *dst, size_t len, uint64_t off)
{
	if (off > lr->size || len > lr->size - off)
		return -1;
	if (lr->mem) {
		memcpy(dst, lr->mem + off, len);
		return 0;
	}
	unsigned char *p = dst;
	while (len) {
		ssize_t n = pread(lr->fd, p, len, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
		off += (uint64_t)n;
	}
	return 0;
}

static int slurp(struct pt_logreader *lr, int fd)
{
	size_t cap = 1 << 20, len = 0;
	unsigned char *buf = malloc(cap);
	for (;;) {
		if (!buf)
			return ENOMEM;
		if (len == cap) {
			if (cap >= MAX_UNSEEKABLE)
				break;
			unsigned char *grown = realloc(buf, cap * 2);
			if (!grown) {
				free(buf);
				return ENOMEM;
			}
			buf = grown;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			free(buf);
			return EINVAL;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	lr->mem = buf;
	lr->size = len;
	return 0;
}

static int header_ok(const struct pt_log_header *h)
{
	if (memcmp(h->magic, PT_LOG_MAGIC, 8) != 0 || h->version != PT_LOG_VERSION ||
	    h->byte_order != PT_LOG_BOM || /* the other byte order is refused */
	    !CRC_OK(h->crc, pt_crc32c(0, h, offsetof(struct pt_log_header, crc))))
		return 0;
	if (h->header_size != PT_LOG_HEADER_SIZE || h->names_off != PT_LOG_NAMES_OFF ||
	    h->names_size != PT_LOG_NAMES_SIZE || h->data_off != PT_LOG_DATA_OFF ||
	    h->name_size != PT_NAME_SIZE || h->max_data_size > PT_MAX_DATA_LIMIT)
		return 0;
	if (h->layout != PT_LAYOUT_LINEAR && h->layout != PT_LAYOUT_RING)
		return 0;
	if (h->block_size < PT_LOG_MIN_BLOCK || h->block_size > MAX_BLOCK ||
	    pt_log_record_size((size_t)h->max_data_size) + sizeof(struct pt_log_block) > h->block_size)
		return 0;
	if (h->layout == PT_LAYOUT_RING && (h->ring_slots < 2 || h->ring_slots > (1u << 31)))
		return 0;
	return 1;
}

static int block_header(struct pt_logreader *lr, uint64_t off, struct pt_log_block *b)
{
	if (read_at(lr, b, sizeof *b, off) != 0 || b->magic != PT_LOG_BLOCK_MAGIC ||
	    !CRC_OK(b->header_crc, pt_crc32c(0, b, offsetof(struct pt_log_block, header_crc))) ||
	    b->payload_len > lr->hdr.block_size - sizeof *b ||
	    b->type < PT_BLK_EVENTS || b->type > PT_BLK_END)
		return 0;
	return off + sizeof *b + b->payload_len <= lr->size;
}

static int load_payload(struct pt_logreader *lr, const struct pt_log_block *b, uint64_t off)
{
	return read_at(lr, lr->buf, b->payload_len, off + sizeof *b) == 0 &&
	       CRC_OK(b->payload_crc, pt_crc32c(0, lr->buf, b->payload_len));
}

static int add_block(struct pt_logreader *lr, uint64_t off, uint32_t len)
{
	if (lr->nblocks == lr->cap) {
		size_t cap = lr->cap ? lr->cap * 2 : 64;
		struct block_ref *grown = realloc(lr->blocks, cap * sizeof *grown);
		if (!grown)
			return ENOMEM;
		lr->blocks = grown;
		lr->cap = cap;
	}
	lr->blocks[lr->nblocks].off = off;
	lr->blocks[lr->nblocks].len = len;
	lr->nblocks++;
	return 0;
}

static void read_names_block(struct pt_logreader *lr, uint32_t len)
{
	size_t entry = sizeof(uint32_t) + PT_NAME_SIZE;
	for (size_t p = 0; p + entry <= len; p += entry) {
		uint32_t id;
		memcpy(&id, lr->buf + p, sizeof id);
		if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
			continue;
		char *dst = lr->names[id - PT_USER_FIRST];
		memcpy(dst, lr->buf + p + sizeof id, PT_NAME_SIZE);
		dst[PT_NAME_SIZE - 1] = '\0';
	}
}

static int index_linear(struct pt_logreader *lr)
{
	uint64_t off = PT_LOG_DATA_OFF;
	for (uint64_t seq = 0; off < lr->size; seq++) {
		struct pt_log_block b;
		if (!block_header(lr, off, &b) || b.seq != seq) {
			lr->damaged = 1;
			return 0;
		}
		if (b.type == PT_BLK_EVENTS) {
			int err = add_block(lr, off, b.payload_len);
			if (err)
				return err;
		} else if (!load_payload(lr, &b, off)) {
			lr->damaged = 1;
			return 0;
		} else if (b.type == PT_BLK_NAMES) {
			read_names_block(lr, b.payload_len);
		} else if (b.payload_len >= sizeof lr->status) {
			memcpy(&lr->status, lr->buf, sizeof lr->status);
			return 0; /* END */
		}
		off += (sizeof b + b.payload_len + 7) & ~(uint64_t)7;
	}
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const uint64_t *)a)[0], y = ((const uint64_t *)b)[0];
	return x < y ? -1 : x > y;
}

/* The ring: every slot holding a valid block, oldest first. */
static int index_ring(struct pt_logreader *lr)
{
	uint64_t slots = lr->hdr.ring_slots, used = 0;
	uint64_t avail = (lr->size - PT_LOG_DATA_OFF) / lr->hdr.block_size + 1;
	if (slots > avail)
		slots = avail;
	uint64_t (*found)[2] = calloc(slots ? slots : 1, sizeof *found);
	if (!found)
		return ENOMEM;
	for (uint64_t i = 0; i < slots; i++) {
		struct pt_log_block b;
		uint64_t off = PT_LOG_DATA_OFF + i * lr->hdr.block_size;
		if (block_header(lr, off, &b) && b.type == PT_BLK_EVENTS &&
		    b.seq % lr->hdr.ring_slots == i) {
			found[used][0] = b.seq;
			found[used][1] = off;
			used++;
		}
	}
	qsort(found, used, sizeof *found, by_seq);
	/* A hole in the sequence is a damaged slot: what follows it is not
	 * delivered, as in a linear log. */
	for (uint64_t i = 1; i < used; i++) {
		if (found[i][0] != found[i - 1][0] + 1) {
			used = i;
			lr->damaged = 1;
			break;
		}
	}
	int err = 0;
	for (uint64_t i = 0; i < used && !err; i++) {
		struct pt_log_block b;
		block_header(lr, found[i][1], &b);
		err = add_block(lr, found[i][1], b.payload_len);
	}
	free(found);
	return err;
}

static int open_log(int fd, struct pt_logreader *lr)
{
	struct stat st;
	lr->fd = fd;
	if (fstat(fd, &st) != 0)
		return EINVAL;
	if (S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0) {
		lr->size = (uint64_t)st.st_size;
	} else {
		int err = slurp(lr, fd);
		if (err)
			return err;
	}
	if (read_at(lr, &lr->hdr, sizeof lr->hdr, 0) != 0 || !header_ok(&lr->hdr))
		return EINVAL;
	lr->hdr.trace_name[TRACE_NAME_MAX - 1] = '\0';
	lr->hdr.genversion[TRACE_NAME_MAX - 1] = '\0';
	lr->status = lr->hdr.status;
	lr->buf = malloc(lr->hdr.block_size);
	if (!lr->buf)
		return ENOMEM;
	/* A log cut inside its name table still opens, with the names it has. */
	uint64_t names_len = PT_LOG_NAMES_SIZE;
	if (lr->size < PT_LOG_NAMES_OFF + names_len)
		names_len = lr->size > PT_LOG_NAMES_OFF ? lr->size - PT_LOG_NAMES_OFF : 0;
	if (names_len)
		read_at(lr, lr->names, (size_t)names_len, PT_LOG_NAMES_OFF);
	for (uint32_t i = 0; i < TRACE_USER_EVENT_MAX; i++)
		lr->names[i][PT_NAME_SIZE - 1] = '\0';
	lr->names[0][0] = '\0';
	if (lr->size < PT_LOG_DATA_OFF)
		lr->damaged = 1; /* cut inside the name table */
	if (lr->size <= PT_LOG_DATA_OFF)
		return 0;
	return lr->hdr.layout == PT_LAYOUT_RING ? index_ring(lr) : index_linear(lr);
}

void pt_logreader_free(struct pt_handle *h)
{
	struct pt_logreader *lr = h->log;
	if (!lr)
		return;
	free(lr->mem);
	free(lr->blocks);
	free(lr->buf);
	free(lr);
	h->log = NULL;
}

int posix_trace_open(int fd, trace_id_t *trid)
{
	pt_init();
	if (!trid)
		return EINVAL;
	struct pt_logreader *lr = calloc(1, sizeof *lr);
	if (!lr)
		return ENOMEM;
	struct pt_handle *h = pt_handle_alloc();
	if (!h) {
		free(lr);
		return EAGAIN;
	}
	h->kind = PT_H_LOG;
	h->log = lr;
	int err = open_log(fd, lr);
	if (err) {
		pthread_mutex_lock(&h->lock);
		pt_logreader_free(h);
		pt_handle_release(h);
		pthread_mutex_unlock(&h->lock);
		return err == ENOMEM ? ENOMEM : EINVAL;
	}
	*trid = pt_handle_publish(h);
	return 0;
}

int posix_trace_rewind(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	h->log->cur = 0;
	h->log->buf_len = h->log->buf_pos = 0;
	h->log->error_reported = 0;
	pt_handle_put(h);
	return 0;
}

int posix_trace_close(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	pt_logreader_free(h);
	pt_handle_release(h);
	pt_handle_put(h);
	return 0;
}

static int report_damage(struct pt_logreader *lr, struct posix_trace_event_info *ev, void *data,
                         size_t num_bytes, size_t *data_len)
{
	int err = DAMAGE_ERROR;
	lr->damaged = 1;
	lr->error_reported = 1;
	lr->cur = lr->nblocks;
	lr->buf_len = lr->buf_pos = 0;
	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = POSIX_TRACE_ERROR;
	ev->posix_truncation_status = POSIX_TRACE_NOT_TRUNCATED;
	size_t n = sizeof err;
	if (n > num_bytes) {
		n = num_bytes;
		ev->posix_truncation_status = POSIX_TRACE_TRUNCATED_READ;
	}
	if (n)
		memcpy(data, &err, n);
	*data_len = n;
	return 1;
}

int pt_logreader_next(struct pt_handle *h, struct posix_trace_event_info *ev, void *data,
                      size_t num_bytes, size_t *data_len)
{
	struct pt_logreader *lr = h->log;
	while (lr->buf_pos >= lr->buf_len) {
		if (lr->cur >= lr->nblocks) {
			if (lr->damaged && !lr->error_reported)
				return report_damage(lr, ev, data, num_bytes, data_len);
			return 0;
		}
		struct block_ref *r = &lr->blocks[lr->cur++];
		struct pt_log_block b;
		if (!block_header(lr, r->off, &b) || b.payload_len != r->len || !load_payload(lr, &b, r->off))
			return report_damage(lr, ev, data, num_bytes, data_len);
		lr->buf_len = b.payload_len;
		lr->buf_pos = 0;
	}
	struct pt_log_record rec;
	uint32_t left = lr->buf_len - lr->buf_pos;
	if (left < sizeof rec)
		return report_damage(lr, ev, data, num_bytes, data_len);
	memcpy(&rec, lr->buf + lr->buf_pos, sizeof rec);
	if (rec.data_len > lr->hdr.max_data_size || pt_log_record_size(rec.data_len) > left ||
	    rec.id >= PT_NEVENT_IDS)
		return report_damage(lr, ev, data, num_bytes, data_len);
	memset(ev, 0, sizeof *ev);
	ev->posix_event_id = rec.id;
	ev->posix_pid = rec.pid;
	ev->posix_thread_id = (pthread_t)rec.thread;
	ev->posix_prog_address = (void *)(uintptr_t)rec.pc;
	ev->posix_timestamp.tv_sec = (time_t)(rec.ts / 1000000000u);
	ev->posix_timestamp.tv_nsec = (long)(rec.ts % 1000000000u);
	ev->posix_truncation_status = (rec.flags & PT_REC_TRUNCATED) ? POSIX_TRACE_TRUNCATED_RECORD
	                                                             : POSIX_TRACE_NOT_TRUNCATED;
	size_t n = rec.data_len;
	if (n > num_bytes) {
		n = num_bytes;
		ev->posix_truncation_status = POSIX_TRACE_TRUNCATED_READ;
	}
	if (n)
		memcpy(data, lr->buf + lr->buf_pos + sizeof rec, n);
	*data_len = n;
	lr->buf_pos += (uint32_t)pt_log_record_size(rec.data_len);
	return 1;
}

int pt_logreader_name(struct pt_handle *h, trace_event_id_t id, char *out)
{
	const char *sys = pt_system_event_name(id);
	if (sys) {
		strcpy(out, sys);
		return 0;
	}
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS || !h->log->names[id - PT_USER_FIRST][0])
		return EINVAL;
	strcpy(out, h->log->names[id - PT_USER_FIRST]);
	return 0;
}

int pt_logreader_typelist(struct pt_handle *h, trace_event_id_t *id)
{
	for (;;) {
		trace_event_id_t cand = pt_typelist_id(h->typelist_pos);
		if (cand >= PT_NEVENT_IDS)
			return 0;
		h->typelist_pos++;
		if (cand <= PT_USER_FIRST || h->log->names[cand - PT_USER_FIRST][0]) {
			*id = cand;
			return 1;
		}
	}
}

void pt_logreader_attr(struct pt_handle *h, trace_attr_t *attr)
{
	const struct pt_log_header *lh = &h->log->hdr;
	struct pt_attr a;
	pt_attr_defaults(&a);
	memcpy(a.name, lh->trace_name, TRACE_NAME_MAX);
	memcpy(a.genversion, lh->genversion, TRACE_NAME_MAX);
	a.clockres_sec = (int64_t)(lh->clockres_ns / 1000000000u);
	a.clockres_nsec = (int64_t)(lh->clockres_ns % 1000000000u);
	a.create_sec = lh->create_sec;
	a.create_nsec = lh->create_nsec;
	a.stream_size = lh->stream_size;
	a.max_data_size = lh->max_data_size;
	a.log_size = lh->log_size;
	a.stream_policy = lh->stream_policy;
	a.stream_policy_set = 1;
	a.log_policy = lh->log_policy;
	a.inheritance = lh->inheritance;
	memset(attr, 0, sizeof *attr);
	memcpy(attr, &a, sizeof a);
}

void pt_logreader_status(struct pt_handle *h, struct posix_trace_status_info *st)
{
	const struct pt_log_status *s = &h->log->status;
	st->posix_stream_status = s->stream_status == POSIX_TRACE_RUNNING ? POSIX_TRACE_RUNNING
	                                                                    : POSIX_TRACE_SUSPENDED;
	st->posix_stream_full_status = s->stream_full ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
	st->posix_stream_overrun_status = s->stream_overrun ? POSIX_TRACE_OVERRUN
	                                                    : POSIX_TRACE_NO_OVERRUN;
	st->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
	st->posix_stream_flush_error = s->flush_error;
	st->posix_log_overrun_status = s->log_overrun ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
	st->posix_log_full_status = s->log_full ? POSIX_TRACE_FULL : POSIX_TRACE_NOT_FULL;
	st->posixtrace_lost_events = s->lost_events;
}
