/* SPDX-License-Identifier: MIT */
/*
 * Shared by the Trace Log tests, t_log, t_logdamage and t_logsec (it includes
 * harness.h): log files, the tagged events the tests record, a
 * pre-recorded stream read back into memory, the keeper process that
 * writes a log, the tests' own CRC-32C and a thread that copies a pipe.
 * Log format constants come from src/log/logfmt.h (docs/LOG-FORMAT.md); the
 * crafted logs below are of version 2 (EVENTS blocks), those of version 3
 * are tests/logv3.h's; everything else goes through the public API.
 */
#ifndef PT_TEST_LOGTEST_H
#define PT_TEST_LOGTEST_H

#include "harness.h"

#include "../src/log/logfmt.h"

#include <posixtrace.h>

#include <dirent.h>

/* Room for one event's data read back: more than any event holds. */
#define LT_DATA_BUF 2048

/* A log that gives more events than this is never read to its end: a
 * bound that only catches a runaway. */
#define LT_MAX_READ 4000000u

/* Test memory lives until the test process exits; keeping it reachable
 * keeps LeakSanitizer quiet. */
static inline void *lt_hold(void *p)
{
	static void *held[4096];
	static size_t nheld;
	ck_assert_uint_lt(nheld, sizeof held / sizeof held[0]);
	held[nheld++] = p;
	return p;
}

/* A new empty regular file under /tmp (named after the test program),
 * already unlinked: nothing to remove.  Open read-write. */
static inline int lt_new_log_file(void)
{
	char path[PATH_MAX];
	snprintf(path, sizeof path, "/tmp/pt_%s_XXXXXX", program_invocation_short_name);
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unlink(path), 0);
	return fd;
}

/* A new log file (lt_new_log_file) holding these bytes. */
static inline int lt_file_holding(const void *bytes, size_t len)
{
	int fd = lt_new_log_file();
	ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
	return fd;
}

/* The whole content of the file behind fd (held). */
static inline unsigned char *lt_file_bytes(int fd, size_t *len)
{
	struct stat st;
	ck_assert_int_eq(fstat(fd, &st), 0);
	unsigned char *buf = lt_hold(malloc((size_t)st.st_size + 1));
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, (size_t)st.st_size, 0), st.st_size);
	*len = (size_t)st.st_size;
	return buf;
}

/* posix_trace_create_withlog for this process, with the attributes that
 * are not 0 set (the others keep their default); 0, or the first error
 * of a setter or of the creation.  No Check call: a forked controller
 * uses it too. */
static inline int lt_create_log(int fd, int log_policy, size_t log_size, int stream_policy,
                                size_t stream_size, trace_id_t *trid)
{
	trace_attr_t attr;
	int err = posix_trace_attr_init(&attr);
	if (err)
		return err;
	if (log_policy)
		err = posix_trace_attr_setlogfullpolicy(&attr, log_policy);
	if (!err && log_size)
		err = posix_trace_attr_setlogsize(&attr, log_size);
	if (!err && stream_policy)
		err = posix_trace_attr_setstreamfullpolicy(&attr, stream_policy);
	if (!err && stream_size)
		err = posix_trace_attr_setstreamsize(&attr, stream_size);
	if (!err)
		err = posix_trace_create_withlog(0, &attr, fd, trid);
	posix_trace_attr_destroy(&attr);
	return err;
}

/* posixtrace_log_info of a pre-recorded stream the library wrote: the
 * format version it writes. */
static inline struct posixtrace_log_info lt_log_info(trace_id_t trid)
{
	struct posixtrace_log_info info;
	memset(&info, 0xa5, sizeof info);
	ck_assert_ok(posixtrace_log_info(trid, &info));
	ck_assert_uint_eq(info.posixtrace_version, PT_LOG_VERSION);
	return info;
}

/* ---- tagged events ------------------------------------------------------- */

/* Every user event the log tests record starts with this tag. */
struct lt_tag {
	uint32_t thread, seq;
};

/* Records one tagged event of len bytes (sizeof(struct lt_tag) to
 * LT_DATA_BUF, or it aborts): the tag, then bytes made of it.  No Check
 * call: a forked controller records in a loop (a passing Check assertion
 * writes to Check's message file). */
static inline void lt_record_tagged(trace_event_id_t id, uint32_t thread, uint32_t seq,
                                    size_t len)
{
	unsigned char buf[LT_DATA_BUF];
	struct lt_tag t = {thread, seq};
	if (len < sizeof t || len > sizeof buf)
		abort();
	memcpy(buf, &t, sizeof t);
	for (size_t i = sizeof t; i < len; i++)
		buf[i] = (unsigned char)(seq * 31u + i + thread * 7u);
	posix_trace_event(id, buf, len);
}

/* ---- events read back ------------------------------------------------------ */

/* One event as posix_trace_getnext_event gave it. */
struct lt_rec {
	struct posix_trace_event_info info;
	size_t len;
	unsigned char *data; /* in its list's blob */
};

/* Events in read order.  lt_add appends one; lt_done makes the data
 * pointers point into the blob, which moves while the list grows. */
struct lt_evlist {
	struct lt_rec *ev;
	size_t n, cap;
	unsigned char *blob; /* the data of every event, one after another */
	size_t blob_len, blob_cap;
	struct posixtrace_log_info log; /* after the last event, if the reader asked */
};

static inline void lt_add(struct lt_evlist *l, const struct posix_trace_event_info *info,
                          const void *data, size_t len)
{
	ck_assert_uint_lt(l->n, LT_MAX_READ);
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 256;
		l->ev = realloc(l->ev, l->cap * sizeof *l->ev);
		ck_assert_ptr_nonnull(l->ev);
	}
	if (l->blob_len + len > l->blob_cap) {
		l->blob_cap = (l->blob_cap + len) * 2;
		l->blob = realloc(l->blob, l->blob_cap);
		ck_assert_ptr_nonnull(l->blob);
	}
	struct lt_rec *r = &l->ev[l->n++];
	r->info = *info;
	r->len = len;
	r->data = (unsigned char *)(uintptr_t)l->blob_len; /* an offset until lt_done */
	if (len)
		memcpy(l->blob + l->blob_len, data, len);
	l->blob_len += len;
}

static inline void lt_done(struct lt_evlist *l)
{
	static unsigned char no_data[1]; /* no blob: no event has data */
	unsigned char *base = l->blob ? l->blob : no_data;
	for (size_t i = 0; i < l->n; i++)
		l->ev[i].data = base + (uintptr_t)l->ev[i].data;
}

/* The list's memory kept until the test process exits, or freed. */
static inline void lt_hold_list(const struct lt_evlist *l)
{
	lt_hold(l->ev);
	lt_hold(l->blob);
}

static inline void lt_free(struct lt_evlist *l)
{
	free(l->ev);
	free(l->blob);
}

/* Reads every event of trid from where its reading stands to the end, with
 * posix_trace_getnext_event into a buffer of bufsize bytes (0: no buffer,
 * the data argument NULL).  The caller holds or frees the list. */
static inline struct lt_evlist lt_read(trace_id_t trid, size_t bufsize)
{
	struct lt_evlist l = {0};
	unsigned char *buf = malloc(bufsize ? bufsize : 1);
	ck_assert_ptr_nonnull(buf);
	for (;;) {
		struct posix_trace_event_info info;
		size_t len = 0;
		int unavailable = -1;
		ck_assert_ok(posix_trace_getnext_event(trid, &info, bufsize ? buf : NULL, bufsize,
		                                       &len, &unavailable));
		if (unavailable)
			break;
		lt_add(&l, &info, buf, len);
	}
	free(buf);
	lt_done(&l);
	return l;
}

/* A user event that carries a tag. */
static inline int lt_is_tagged(const struct lt_rec *r)
{
	return r->info.posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT &&
	       r->len >= sizeof(struct lt_tag);
}

static inline struct lt_tag lt_tag_of(const struct lt_rec *r)
{
	struct lt_tag t;
	memcpy(&t, r->data, sizeof t);
	return t;
}

/* How many events of l have type id. */
static inline size_t lt_count_id(const struct lt_evlist *l, trace_event_id_t id)
{
	size_t c = 0;
	for (size_t i = 0; i < l->n; i++)
		c += l->ev[i].info.posix_event_id == id;
	return c;
}

/* ---- the keeper ------------------------------------------------------------ */

/* The keeper (posixtrace-keep, the child that writes the log) of a log
 * stream this process created, the newest if there are several, once it
 * has named itself soon after the fork; 0 if none did within 5 s.  No
 * Check call: a forked controller uses it too. */
static inline pid_t lt_find_keeper(void)
{
	for (int tries = 0; tries < 5000; tries++) {
		pid_t found = 0;
		DIR *d = opendir("/proc");
		if (!d)
			return 0;
		for (struct dirent *e; (e = readdir(d));) {
			char comm[64];
			pid_t ppid, pid = (pid_t)atoi(e->d_name);
			if (pid > found && pt_proc_stat(pid, comm, sizeof comm, NULL, &ppid) == 0 &&
			    ppid == getpid() && strcmp(comm, "posixtrace-keep") == 0)
				found = pid;
		}
		closedir(d);
		if (found)
			return found;
		pt_sleep_ms(1);
	}
	return 0;
}

/* ---- bytes ------------------------------------------------------------------- */

/* CRC-32C written out here, so that the tests do not trust the library's. */
static inline uint32_t lt_crc32c(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t c = 0xffffffffu;
	while (len--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
	}
	return ~c;
}

/* Copies everything from one fd to another until EOF (a thread), then
 * closes out if close_out is set.  A slow reader: piece bytes at most per
 * read (0: 64 KiB), nap_us microseconds after each.  copied may be read
 * while it runs. */
struct lt_pump {
	int in, out, close_out;
	size_t piece;
	unsigned nap_us;
	atomic_size_t copied;
};

static inline void *lt_pump_main(void *arg)
{
	struct lt_pump *p = arg;
	char buf[65536];
	size_t piece = p->piece && p->piece < sizeof buf ? p->piece : sizeof buf;
	for (;;) {
		ssize_t n = read(p->in, buf, piece);
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(p->out, buf + off, (size_t)(n - off));
			if (w <= 0)
				return NULL;
			off += w;
		}
		atomic_fetch_add(&p->copied, (size_t)n);
		if (p->nap_us)
			usleep(p->nap_us);
	}
	if (p->close_out)
		close(p->out);
	return NULL;
}

/* ---- crafted logs ------------------------------------------------------------ */

/*
 * A log written record by record (docs/LOG-FORMAT.md) with every CRC right,
 * its contents as hostile as a test wants: a seekable linear log with a
 * name table.  Events are given an absolute time and a context; the block
 * gets the CONTEXT (as context 0) and TIME records it needs.  Blocks are
 * sealed when full, by lt_craft_seal and by lt_craft_end (an END block).
 */
struct lt_craft {
	int fd;
	uint32_t block_size;
	uint64_t off, seq;           /* where the next block goes, its number */
	unsigned char *payload;      /* the block being filled */
	uint32_t len, nrec;
	uint64_t ts_base, ts;        /* the block's base and current time */
	struct pt_log_ctx ctx;       /* the block's context 0, when have_ctx */
	int have_ctx;
};

/* The header of a log with these parameters (the rest as a stream of
 * this library writes it); the CRC is computed. */
static inline void lt_craft_header(struct pt_log_header *h, uint32_t block_size,
                                   uint64_t clockres_ns, const char *trace_name)
{
	memset(h, 0, sizeof *h);
	memcpy(h->magic, PT_LOG_MAGIC, sizeof h->magic);
	h->version = 2; /* EVENTS blocks: a version 2 log */
	h->byte_order = PT_LOG_BOM;
	h->header_size = PT_LOG_HEADER_SIZE;
	h->flags = PT_LOG_SEEKABLE;
	h->names_off = PT_LOG_NAMES_OFF;
	h->names_size = PT_LOG_NAMES_SIZE;
	h->data_off = PT_LOG_DATA_OFF;
	h->layout = PT_LOG_LINEAR;
	h->block_size = block_size;
	h->clockres_ns = clockres_ns;
	h->name_size = PT_LOG_NAME_SIZE;
	snprintf(h->trace_name, sizeof h->trace_name, "%s", trace_name);
	snprintf(h->genversion, sizeof h->genversion, "%s", PT_TEST_GENVERSION);
	h->create_sec = 1700000000;
	h->stream_size = 1 << 20;
	h->max_data_size = 256;
	h->stream_policy = POSIX_TRACE_LOOP;
	h->log_policy = POSIX_TRACE_APPEND;
	h->inheritance = POSIX_TRACE_CLOSE_FOR_CHILD;
	h->status.stream_status = POSIX_TRACE_RUNNING;
	h->status.stream_full = POSIX_TRACE_NOT_FULL;
	h->status.stream_overrun = POSIX_TRACE_NO_OVERRUN;
	h->status.flush_status = POSIX_TRACE_NOT_FLUSHING;
	h->status.log_overrun = POSIX_TRACE_NO_OVERRUN;
	h->status.log_full = POSIX_TRACE_NOT_FULL;
	h->crc = lt_crc32c(h, offsetof(struct pt_log_header, crc));
}

/* Starts a log in the empty file fd: its header and an empty name table. */
static inline void lt_craft_begin(struct lt_craft *c, int fd, uint32_t block_size,
                                  uint64_t clockres_ns, const char *trace_name)
{
	struct pt_log_header h;
	memset(c, 0, sizeof *c);
	c->fd = fd;
	c->block_size = block_size;
	c->off = PT_LOG_DATA_OFF;
	c->payload = lt_hold(malloc(block_size));
	ck_assert_ptr_nonnull(c->payload);
	lt_craft_header(&h, block_size, clockres_ns, trace_name);
	ck_assert_int_eq(pwrite(fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	ck_assert_int_eq(ftruncate(fd, (off_t)PT_LOG_DATA_OFF), 0);
}

/* Names user event id (33 to 1023) in the name table. */
static inline void lt_craft_name(struct lt_craft *c, trace_event_id_t id, const char *name)
{
	char entry[PT_LOG_NAME_SIZE] = {0};
	ck_assert_uint_lt(strlen(name), sizeof entry);
	memcpy(entry, name, strlen(name));
	off_t at = (off_t)(PT_LOG_NAMES_OFF + (uint64_t)(id - PT_LOG_USER_FIRST) * PT_LOG_NAME_SIZE);
	ck_assert_int_eq(pwrite(c->fd, entry, sizeof entry, at), (ssize_t)sizeof entry);
}

/* A block header with these fields at c->off, CRC right; payload_len bytes
 * of payload follow, of which only the first `written` are written (the
 * rest stays a hole, or what was there).  c->off moves past the block. */
static inline void lt_craft_raw(struct lt_craft *c, uint32_t type, uint64_t seq,
                                uint64_t ts_base, uint32_t payload_len, uint32_t payload_crc,
                                const void *payload, uint32_t written)
{
	struct pt_log_block b = {PT_LOG_BLOCK_MAGIC, type, seq, ts_base, payload_len,
	                         payload_crc, 0, 0};
	b.header_crc = lt_crc32c(&b, offsetof(struct pt_log_block, header_crc));
	ck_assert_int_eq(pwrite(c->fd, &b, sizeof b, (off_t)c->off), (ssize_t)sizeof b);
	if (written)
		ck_assert_int_eq(pwrite(c->fd, payload, written, (off_t)(c->off + sizeof b)),
		                 (ssize_t)written);
	c->off += pt_log_pad8(PT_LOG_BLOCK_HDR + payload_len);
}

/* Writes the block being filled, if any. */
static inline void lt_craft_seal(struct lt_craft *c)
{
	if (!c->len)
		return;
	lt_craft_raw(c, PT_LOG_EVENTS, c->seq++, c->ts_base, c->len,
	             lt_crc32c(c->payload, c->len), c->payload, c->len);
	c->len = 0;
	c->nrec = 0;
	c->have_ctx = 0;
}

static inline void lt_craft_put(struct lt_craft *c, uint64_t w0, uint64_t w1, int two,
                                const void *data, uint32_t len)
{
	unsigned char *p = c->payload + c->len;
	memcpy(p, &w0, 8);
	if (two)
		memcpy(p + 8, &w1, 8);
	uint32_t hdr = two ? PT_REC_HDR : PT_REC_HDR_MIN;
	memset(p + hdr, 0, pt_log_pad8(len));
	if (len)
		memcpy(p + hdr, data, len);
	c->len += hdr + pt_log_pad8(len);
}

static inline uint64_t lt_craft_w0(uint32_t id, uint32_t len, uint32_t delta)
{
	return (uint64_t)delta | (uint64_t)id << PT_REC_ID_SHIFT | (uint64_t)len << PT_REC_LEN_SHIFT;
}

/* One event of ctx at time ts (any order: a TIME record when it goes back
 * or jumps), from address pc; same_pc: without word1 (the address of the
 * block's previous event). */
static inline void lt_craft_event(struct lt_craft *c, const struct pt_log_ctx *ctx,
                                  trace_event_id_t id, uint64_t ts, uint64_t pc, int same_pc,
                                  const void *data, uint32_t len)
{
	uint32_t need = PT_LOG_CTX_REC + PT_LOG_TIME_REC + pt_log_rec_size(len);
	if (c->len + need > c->block_size - PT_LOG_BLOCK_HDR)
		lt_craft_seal(c);
	if (!c->len) {
		c->ts_base = c->ts = ts;
		same_pc = 0;
	}
	if (!c->have_ctx || memcmp(&c->ctx, ctx, sizeof *ctx)) {
		struct pt_log_ctxrec rec = {*ctx, 0, 0};
		lt_craft_put(c, lt_craft_w0(PT_REC_CONTEXT, sizeof rec, 0), 0, 1, &rec, sizeof rec);
		c->ctx = *ctx;
		c->have_ctx = 1;
	}
	if (ts < c->ts || ts - c->ts > PT_REC_DELTA_MAX) {
		lt_craft_put(c, lt_craft_w0(PT_REC_TIME, 8, 0), 0, 1, &ts, 8);
		c->ts = ts;
	}
	uint64_t w0 = lt_craft_w0(id, len, (uint32_t)(ts - c->ts)) | (same_pc ? PT_REC_SAMEPC : 0);
	lt_craft_put(c, w0, pc, !same_pc, data, len);
	c->ts = ts;
	c->nrec++;
}

/* Seals the last block and ends the log with its END block (the log is
 * closed). */
static inline void lt_craft_end(struct lt_craft *c)
{
	struct pt_log_status st;
	struct pt_log_header h;
	lt_craft_seal(c);
	ck_assert_int_eq(pread(c->fd, &h, sizeof h, 0), (ssize_t)sizeof h);
	st = h.status;
	lt_craft_raw(c, PT_LOG_END, c->seq++, 0, sizeof st, lt_crc32c(&st, sizeof st), &st,
	             sizeof st);
	ck_assert_int_eq(ftruncate(c->fd, (off_t)c->off), 0);
}

#endif
