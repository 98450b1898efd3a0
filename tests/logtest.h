/* SPDX-License-Identifier: MIT */
/*
 * Shared by the Trace Log tests, t_log and t_logdamage (it includes
 * harness.h): log files, the tagged events the tests record, a
 * pre-recorded stream read back into memory, the keeper process that
 * writes a log, the tests' own CRC-32C and a thread that copies a pipe.
 * Log format constants (version 2) come from src/logfmt.h
 * (docs/LOG-FORMAT.md); everything else goes through the public API.
 */
#ifndef PT_TEST_LOGTEST_H
#define PT_TEST_LOGTEST_H

#include "harness.h"

#include "../src/logfmt.h"

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

/* posixtrace_log_info of a pre-recorded stream: always format version 2. */
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
 * closes out if close_out is set. */
struct lt_pump {
	int in, out, close_out;
	size_t copied;
};

static inline void *lt_pump_main(void *arg)
{
	struct lt_pump *p = arg;
	char buf[65536];
	for (;;) {
		ssize_t n = read(p->in, buf, sizeof buf);
		if (n <= 0)
			break;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(p->out, buf + off, (size_t)(n - off));
			if (w <= 0)
				return NULL;
			off += w;
		}
		p->copied += (size_t)n;
	}
	if (p->close_out)
		close(p->out);
	return NULL;
}

#endif
