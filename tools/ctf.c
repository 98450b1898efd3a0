/* SPDX-License-Identifier: MIT */
/*
 * CTF 1.8 output: DIR/metadata (TSDL text) and DIR/stream_N (binary packets).
 *
 * Every field is in the host's byte order and byte aligned but for the
 * bit fields of the event header and of the narrow classes (see
 * HEADER_EXTENDED and SHAPE_WIDE), so events are written with stores and
 * no padding between fields; a full packet is padded to the file's next
 * 64 KiB (see FILE_ALIGN).  The clock counts nanoseconds since
 * the Epoch, the log's own time scale, so babeltrace2 --clock-seconds shows
 * the absolute times `posixtrace dump` shows.  Trace event type ids are the
 * CTF event class ids.  Lost events become the packet context's
 * events_discarded: a packet is closed before every POSIX_TRACE_OVERFLOW
 * event, and the next packet's counter includes the loss it reports.
 * Files: DIR/metadata and DIR/stream_N, one stream per writer thread for
 * the first CTF_STREAMS_MAX threads; later threads share those streams.
 * Times never go back within a stream: an event older than the last one of
 * its stream is written at that last time, and its field time_raised says
 * by how much (0 for every other event), so the recorded time is the
 * event's timestamp minus time_raised.
 * Begin/end events stay events here (babeltrace2 and Trace Compass show
 * them as they are; Trace Compass can pair them with its own analyses).
 * DIR is created 0700 and its files 0600, never through a symbolic link;
 * an existing DIR is reused only with --force and only if it holds nothing
 * but an earlier conversion's files (see outfile.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "tool.h"

#define CTF_MAGIC 0xC1FC1FC1u
#define PACKET_HEADER_SIZE (4 + 4 + 8 + 6 * 8)
/* A full packet ends where the file reaches a multiple of FILE_ALIGN,
 * padded (packet_size past content_size) by what is left, at most
 * PAD_MAX bytes: the kernel then fills whole large folios of the page
 * cache instead of clearing the part of one that a write stops in (a
 * 164 MB file in 65,600-byte writes took 59-66 ms of CPU here, in 65,536-
 * byte ones 39-45).  A packet holds at least PACKET_MIN_ROOM bytes of
 * events, so about 64 KiB; the event that crosses the boundary starts
 * the next packet. */
#define FILE_ALIGN (64u << 10)
#define PACKET_MIN_ROOM 4096u
#define PAD_MAX 4096u
#define PACKET_PAYLOAD_MAX (FILE_ALIGN + PACKET_MIN_ROOM) /* a packet's room at most */
#define PACKET_ROOM (PACKET_PAYLOAD_MAX + 4096) /* a packet and an ordinary event */

/* One CTF stream per writer thread (pid, pthread_t): the log's per-thread
 * order is exact, so times seldom go back inside a stream and babeltrace2
 * shows every event at the time dump shows.  They do go back in a log a
 * program crafted, or whose clock stepped back, and for system events with
 * no thread (pid 0, one stream), which the reader may date in the past (an
 * OVERFLOW carries the time of the first lost event): such an event is
 * raised to the stream's last time and marked (time_raised), never given a
 * stream of its own.  The streams are bounded whatever the log: at most
 * CTF_STREAMS_MAX (and one for losses no OVERFLOW reported), each holding
 * one packet of PACKET_PAYLOAD_MAX bytes at most and one event. */
#define CTF_STREAMS_MAX 256

struct ctf_stream {
	uint64_t instance_id;
	unsigned char *payload;
	size_t len, cap;
	size_t room;         /* the packet is full past this many bytes */
	uint64_t file_bytes; /* written to the stream's file */
	uint64_t ts_begin, ts_end, seq, discarded, packets_written;
};

struct ctf_writer {
	const char *dir;
	int dirfd;
	int file_fd;          /* the open stream file, -1 if none */
	uint64_t file_stream; /* whose (instance id) */
	struct ctf_stream *streams;
	size_t nstreams, streams_cap;
	struct thread_table threads; /* (pid, thread): stream index, the first ones */
	/* The thread of the last event and its stream (threads write in
	 * runs); valid only for a thread of its own stream */
	bool last_valid;
	pid_t last_pid;
	unsigned long last_thread;
	size_t last_stream;
	uint64_t shared_threads;     /* events of threads past them */
	uint64_t raised;             /* events written later than their time */
	/* Event classes, numbered in the order of their first event so that
	 * the first COMPACT_CLASSES have the compact header: class_of[type x
	 * SHAPES + shape] is a class's id + 1 (0: none yet), a type being the
	 * log's number x MAX_EVENT_IDS + the event's id. */
	uint32_t *class_of;
	size_t ntypes;
	uint32_t nclasses;
	uint32_t host; /* several hosts: the one this trace holds */
	/* The log's total loss, shared out over its OVERFLOW events: both
	 * counted by a first pass, made only for a log that has an OVERFLOW
	 * event (or for the progress line's total). */
	bool counted;
	uint64_t events, lost_total, overflows, overflows_seen;
	uint64_t first_ns, last_ns; /* earliest dated and latest time written */
	struct site_table *sites;
};

/* write_event() met an OVERFLOW before the loss was counted. */
#define NEEDS_COUNT 1

/* The event header (LTTng's "compact" header): a 5-bit class id and the
 * low 27 bits of the time in one 32-bit word, or, after the id 31
 * ("extended") and 3 bits of padding, a 32-bit class id and the whole
 * time.  A reader adds the 27 bits to the stream's clock, the previous
 * event's time or the packet's timestamp_begin, counting one wrap when
 * they are below its low bits: exact while the time moved by less than
 * 2^27 ns since.  Bit fields fill a byte from its least significant bit
 * in a little-endian trace, from its most significant in a big-endian
 * one (CTF 1.8, 4.1.5). */
#define HEADER_COMPACT_SIZE 4
#define HEADER_EXTENDED_SIZE (1 + 4 + 8)
#define COMPACT_CLASSES 31u
#define HEADER_EXTENDED 31u
#define COMPACT_TIME_SPAN (1ull << 27)
#define BIG_ENDIAN_TRACE (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__)

/* Four classes per event type, with the same name and printing the same
 * fields, in the shape of an event's values: narrow (pid in 24 bits, tid
 * and prog_address in 48, truncation and data_len in one byte, 2 and 6
 * bits, time_raised in 8) or wide (32, 64, 8 and 32, 64 bits); with
 * strings (text, site, source, inlined: NUL-terminated) or plain (no
 * text and no site: the four are empty arrays of UTF-8, which print as
 * "" and take no byte). */
#define SHAPE_WIDE 1u
#define SHAPE_STRINGS 2u
#define SHAPES 4u
#define NARROW_VALUE_MAX ((1ull << 48) - 1)
#define NARROW_PID_MIN (-(1 << 23))
#define NARROW_PID_MAX ((1 << 23) - 1)
#define NARROW_LEN_MAX 63u
#define NARROW_RAISED_MAX 255u

/* The fields before the data: the context's cpu_id, pid, tid,
 * prog_address, truncation, data_len; after it the text's, site's,
 * source's and inlined's NULs at least, and time_raised. */
#define WIDE_FIXED_SIZE (4 + 4 + 8 + 8 + 1 + 4)
#define WIDE_TAIL_SIZE 8

/* Room for n more bytes in the stream's packet.  A packet is written once
 * it holds its room (PACKET_PAYLOAD_MAX bytes at most), so the buffer
 * holds that and one event: it grows past it only for an event larger
 * than any before, and is given back once that packet is written. */
static unsigned char *payload_room(struct ctf_stream *s, size_t n)
{
	if (s->len + n > s->cap) {
		size_t want = s->len + n;
		s->cap = want < PACKET_ROOM ? PACKET_ROOM : want;
		s->payload = xrealloc(s->payload, s->cap);
	}
	return s->payload + s->len;
}

#define PUT_VALUE(p, type, value)                \
	do {                                     \
		type v_ = (type)(value);         \
		memcpy((p), &v_, sizeof v_);     \
		(p) += sizeof v_;                \
	} while (0)

static void stream_name(uint64_t instance_id, char *name, size_t size)
{
	snprintf(name, size, "stream_%llu", (unsigned long long)instance_id);
}

/* What an earlier conversion left in DIR (replaced with --force). */
static bool is_ctf_file(const char *name)
{
	return !strcmp(name, "metadata") ||
	       (!strncmp(name, "stream_", 7) && name[7] &&
	        strspn(name + 7, "0123456789") == strlen(name + 7));
}

static bool write_all(int fd, const struct iovec *iov, int n)
{
	size_t want = 0;
	for (int i = 0; i < n; i++)
		want += iov[i].iov_len;
	ssize_t done = writev(fd, iov, n);
	if (done == (ssize_t)want)
		return true;
	if (done >= 0)
		errno = EIO; /* a short write to a regular file: the disk is full */
	return false;
}

static void report_file_error(const struct ctf_writer *w, uint64_t instance, int err)
{
	char name[64];
	stream_name(instance, name, sizeof name);
	error_msg("%s/%s: %s", w->dir, name, strerror(err));
}

static int close_stream_file(struct ctf_writer *w)
{
	if (w->file_fd < 0)
		return 0;
	int rc = close(w->file_fd);
	w->file_fd = -1;
	if (rc != 0)
		report_file_error(w, w->file_stream, errno);
	return rc;
}

/* The file of the stream that wrote last stays open: a thread's packets go
 * out through one descriptor (not an open and a close each), and at most
 * one file is open whatever the number of threads (a log may have more
 * than a process may open).  The first packet creates the file. */
static int stream_file(struct ctf_writer *w, struct ctf_stream *s, const char *name)
{
	if (w->file_fd >= 0 && w->file_stream == s->instance_id)
		return w->file_fd;
	if (close_stream_file(w) != 0)
		return -1;
	int fd = s->packets_written
	                 ? openat(w->dirfd, name, O_WRONLY | O_APPEND | O_NOFOLLOW | O_CLOEXEC)
	                 : create_file_in(w->dirfd, w->dir, name); /* says why not */
	if (fd < 0 && s->packets_written)
		report_file_error(w, s->instance_id, errno);
	if (fd >= 0) {
		w->file_fd = fd;
		w->file_stream = s->instance_id;
	}
	return fd;
}

/* The payload that ends a packet at the file's next FILE_ALIGN boundary
 * but one that leaves less than PACKET_MIN_ROOM. */
static size_t packet_room(uint64_t file_bytes)
{
	uint64_t end = file_bytes + PACKET_HEADER_SIZE + PACKET_MIN_ROOM;
	end = (end + FILE_ALIGN - 1) / FILE_ALIGN * FILE_ALIGN;
	return (size_t)(end - file_bytes - PACKET_HEADER_SIZE);
}

static const unsigned char padding[PAD_MAX];

/* Packets are appended to the stream's file as they fill, so only one
 * packet per stream is held in memory.  A full one (align) is padded to
 * the next FILE_ALIGN boundary when that takes at most PAD_MAX bytes. */
static int write_packet(struct ctf_writer *w, struct ctf_stream *s, uint64_t discarded,
                        bool align)
{
	char name[64];
	uint64_t content = PACKET_HEADER_SIZE + (uint64_t)s->len;
	uint64_t pad = align ? (FILE_ALIGN - (s->file_bytes + content) % FILE_ALIGN) % FILE_ALIGN : 0;
	if (pad > PAD_MAX)
		pad = 0;
	uint32_t header[2] = {CTF_MAGIC, 0};
	uint64_t instance = s->instance_id;
	uint64_t context[6] = {s->ts_begin, s->ts_end, content * 8, (content + pad) * 8, s->seq++,
	                       discarded};
	struct iovec iov[5] = {{header, sizeof header}, {&instance, sizeof instance},
	                       {context, sizeof context}};
	int n = 3;
	if (s->len)
		iov[n++] = (struct iovec){s->payload, s->len};
	if (pad)
		iov[n++] = (struct iovec){(void *)padding, (size_t)pad};
	stream_name(s->instance_id, name, sizeof name);
	int fd = stream_file(w, s, name);
	if (fd < 0)
		return -1;
	s->packets_written++;
	if (!write_all(fd, iov, n)) {
		report_file_error(w, s->instance_id, errno);
		return -1;
	}
	s->file_bytes += content + pad;
	s->room = packet_room(s->file_bytes);
	s->len = 0;
	s->ts_begin = s->ts_end;
	return 0;
}

/* The payload buffer back to its ordinary size once an event larger
 * than any before has been written: keep bytes of it. */
static void shrink_payload(struct ctf_stream *s, size_t keep)
{
	if (s->cap <= PACKET_ROOM || keep > PACKET_ROOM)
		return;
	unsigned char *small = xmalloc(PACKET_ROOM);
	memcpy(small, s->payload, keep);
	free(s->payload);
	s->payload = small;
	s->cap = PACKET_ROOM;
}

/* babeltrace2 reports the growth of events_discarded between packets; a
 * stream whose first packet would already count losses starts with an
 * empty packet counting none, so the count shows. */
static int flush_packet(struct ctf_writer *w, struct ctf_stream *s, bool align)
{
	if (s->seq == 0 && s->discarded) {
		size_t len = s->len;
		s->len = 0;
		uint64_t end = s->ts_end;
		s->ts_end = s->ts_begin;
		if (write_packet(w, s, 0, false))
			return -1;
		s->len = len;
		s->ts_end = end;
	}
	return write_packet(w, s, s->discarded, align);
}

/* The event of size bytes just put at the end of the packet went past its
 * room: the packet ends before it (at the time of the event before,
 * before), and it starts the next, whose timestamp_begin is that time,
 * the clock its header was written against.  An event alone in its packet
 * makes a packet of its own. */
static __attribute__((noinline)) int packet_full(struct ctf_writer *w, struct ctf_stream *s,
                                                 size_t size, uint64_t before)
{
	if (s->len == size) {
		if (flush_packet(w, s, true) != 0)
			return -1;
		shrink_payload(s, 0);
		return 0;
	}
	size_t at = s->len - size;
	uint64_t ts = s->ts_end;
	s->len = at;
	s->ts_end = before;
	if (flush_packet(w, s, true) != 0)
		return -1;
	memmove(s->payload, s->payload + at, size);
	s->len = size;
	s->ts_end = ts;
	shrink_payload(s, size);
	return 0;
}

static struct ctf_stream *new_stream(struct ctf_writer *w)
{
	if (w->nstreams == w->streams_cap) {
		w->streams_cap = w->streams_cap ? 2 * w->streams_cap : 16;
		w->streams = xrealloc(w->streams, w->streams_cap * sizeof *w->streams);
	}
	struct ctf_stream *s = &w->streams[w->nstreams];
	memset(s, 0, sizeof *s);
	s->instance_id = w->nstreams++;
	s->room = packet_room(0);
	return s;
}

/* A thread past the first CTF_STREAMS_MAX shares a stream, the same for
 * all its events (and in every run: not a keyed hash; a log that sends its
 * threads to one stream only gets times raised there). */
static size_t shared_stream(pid_t pid, unsigned long thread)
{
	uint64_t h = ((uint64_t)(uint32_t)pid * 0x9e3779b97f4a7c15ull) ^ (uint64_t)thread;
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 29;
	return (size_t)(h % CTF_STREAMS_MAX);
}

static struct ctf_stream *stream_for(struct ctf_writer *w, const struct trace_event *ev)
{
	pid_t pid = ev->info.posix_pid;
	unsigned long thread = (unsigned long)ev->info.posix_thread_id;
	if (w->last_valid && w->last_pid == pid && w->last_thread == thread)
		return &w->streams[w->last_stream];
	size_t i = thread_table_find(&w->threads, ev->host, pid, thread);
	if (i == SIZE_MAX && w->threads.count < CTF_STREAMS_MAX) {
		thread_table_index(&w->threads, ev->host, pid, thread, NULL);
		i = new_stream(w)->instance_id;
	}
	if (i != SIZE_MAX) {
		w->last_valid = true;
		w->last_pid = pid;
		w->last_thread = thread;
		w->last_stream = i;
		return &w->streams[i];
	}
	w->shared_threads++;
	return &w->streams[shared_stream(pid, thread)];
}

/* How many events one OVERFLOW stands for: the log knows only the total,
 * so it is shared out (at least one each, the remainder to the first). */
static uint64_t loss_of_next_overflow(struct ctf_writer *w)
{
	uint64_t n = w->overflows_seen++;
	/* The count is the first pass's: a log that changed since may have
	 * more OVERFLOW events now (or had none then). */
	if (n >= w->overflows || w->lost_total < w->overflows)
		return 1;
	uint64_t share = w->lost_total / w->overflows;
	return share + (n < w->lost_total % w->overflows);
}

/* The event's data: up to 16 bytes (the common payloads) with two
 * overlapping moves rather than a call. */
static inline void put_data(unsigned char *p, const unsigned char *d, size_t n)
{
	if (n >= 8 && n <= 16) {
		uint64_t a, b;
		memcpy(&a, d, 8);
		memcpy(&b, d + n - 8, 8);
		memcpy(p, &a, 8);
		memcpy(p + n - 8, &b, 8);
	} else if (n) {
		memcpy(p, d, n);
	}
}

/* A 48-bit field: the value's low six bytes in the trace's (the host's)
 * byte order.  Little-endian: one 8-byte store, whose last two bytes the
 * next field overwrites (payload_room leaves room past every event). */
static inline unsigned char *put_u48(unsigned char *p, uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	memcpy(p, (const unsigned char *)&v + 2, 6);
#else
	memcpy(p, &v, 8);
#endif
	return p + 6;
}

static inline bool fits_narrow(const struct trace_event *ev, uint64_t raised)
{
	uint64_t thread = (unsigned long)ev->info.posix_thread_id;
	uint64_t address = (uintptr_t)ev->info.posix_prog_address;
	uint32_t pid = (uint32_t)ev->info.posix_pid - (uint32_t)NARROW_PID_MIN;
	return ((thread | address) >> 48) == 0 && pid <= (uint32_t)(NARROW_PID_MAX - NARROW_PID_MIN) &&
	       (unsigned)ev->info.posix_truncation_status <= 2 && ev->len <= NARROW_LEN_MAX &&
	       raised <= NARROW_RAISED_MAX;
}

/* A new class for a type in a shape: the next id. */
static uint32_t new_class(struct ctf_writer *w, uint32_t type, unsigned shape)
{
	w->class_of[(size_t)type * SHAPES + shape] = ++w->nclasses;
	return w->nclasses - 1;
}

/* The id of the class of a type in a shape, numbered at its first use. */
static inline uint32_t class_id(struct ctf_writer *w, uint32_t type, unsigned shape)
{
	uint32_t known = w->class_of[(size_t)type * SHAPES + shape];
	return known ? known - 1 : new_class(w, type, shape);
}

/* The header of an event of class id at ts, the stream's clock at ref
 * (ts >= ref). */
static inline unsigned char *put_header(unsigned char *p, uint32_t id, uint64_t ts, uint64_t ref)
{
	if (id < COMPACT_CLASSES && ts - ref < COMPACT_TIME_SPAN) {
		uint32_t low = (uint32_t)ts & (uint32_t)(COMPACT_TIME_SPAN - 1);
		PUT_VALUE(p, uint32_t, BIG_ENDIAN_TRACE ? id << 27 | low : id | low << 5);
		return p;
	}
	PUT_VALUE(p, uint8_t, BIG_ENDIAN_TRACE ? HEADER_EXTENDED << 3 : HEADER_EXTENDED);
	PUT_VALUE(p, uint32_t, id);
	PUT_VALUE(p, uint64_t, ts);
	return p;
}

/* A 24-bit signed field (a narrow pid), as put_u48 writes. */
static inline unsigned char *put_i24(unsigned char *p, int32_t v)
{
	uint32_t u = (uint32_t)v;
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	memcpy(p, (const unsigned char *)&u + 1, 3);
#else
	memcpy(p, &u, 4);
#endif
	return p + 3;
}

/* The fields from pid to data_len of a narrow class. */
static inline unsigned char *put_narrow_ids(unsigned char *p, pid_t pid, uint64_t thread,
                                            uint64_t address, unsigned trunc, size_t len)
{
	p = put_u48(put_u48(put_i24(p, pid), thread), address);
	PUT_VALUE(p, uint8_t, BIG_ENDIAN_TRACE ? trunc << 6 | len : trunc | len << 2);
	return p;
}

/* The fields from pid to data_len, in the class's widths. */
static inline unsigned char *put_ids(unsigned char *p, const struct trace_event *ev, bool narrow)
{
	uint64_t thread = (unsigned long)ev->info.posix_thread_id;
	uint64_t address = (uintptr_t)ev->info.posix_prog_address;
	unsigned trunc = (unsigned)ev->info.posix_truncation_status;
	if (narrow)
		return put_narrow_ids(p, ev->info.posix_pid, thread, address, trunc, ev->len);
	PUT_VALUE(p, int32_t, ev->info.posix_pid);
	PUT_VALUE(p, uint64_t, thread);
	PUT_VALUE(p, uint64_t, address);
	PUT_VALUE(p, uint8_t, ev->info.posix_truncation_status);
	PUT_VALUE(p, uint32_t, ev->len);
	return p;
}

static int write_event(struct ctf_writer *w, const struct trace_event *ev)
{
	uint64_t ts = ts_ns(&ev->info.posix_timestamp);
	if (ev->info.posix_event_id == POSIX_TRACE_OVERFLOW && !w->counted)
		return NEEDS_COUNT;
	if (event_has_time(ev) && (w->first_ns == 0 || ts < w->first_ns))
		w->first_ns = ts;
	if (ts > w->last_ns)
		w->last_ns = ts;
	struct ctf_stream *s = stream_for(w, ev);
	uint64_t raised = 0;
	if (ts < s->ts_end) {
		raised = s->ts_end - ts;
		ts = s->ts_end;
		w->raised++;
	}
	if (ev->info.posix_event_id == POSIX_TRACE_OVERFLOW) {
		/* the loss is counted in the packet that starts with it */
		if (s->len && flush_packet(w, s, false))
			return -1;
		shrink_payload(s, 0);
		s->discarded += loss_of_next_overflow(w);
	}
	/* the reader's clock: the packet's timestamp_begin for its first
	 * event (this time for the stream's first), else the last event's */
	uint64_t clock = s->ts_end;
	if (s->len == 0 && s->seq == 0)
		s->ts_begin = clock = ts;
	s->ts_end = ts;
	size_t text = text_length(ev->data, ev->len);
	const struct call_site *c = site_of(w->sites, ev);
	/* Bytes of a file: escaped, as dump prints them, for whoever prints
	 * the trace (babeltrace2 writes strings to the terminal as they are). */
	size_t where = 1, source = 1, inlined = 1;
	if (c) {
		where = strlen(c->where_esc) + 1;
		source = strlen(c->source_esc) + 1;
		inlined = strlen(c->inlined_esc) + 1;
	}
	unsigned char *p = payload_room(s, HEADER_EXTENDED_SIZE + WIDE_FIXED_SIZE + ev->len + text +
	                                       1 + where + source + inlined + WIDE_TAIL_SIZE);
	unsigned char *start = p;
	uint32_t type = ev->source * MAX_EVENT_IDS + (ev->info.posix_event_id % MAX_EVENT_IDS);
	bool narrow = fits_narrow(ev, raised), strings = text || c;
	p = put_header(p, class_id(w, type, (narrow ? 0 : SHAPE_WIDE) | (strings ? SHAPE_STRINGS : 0)),
	               ts, clock);
	PUT_VALUE(p, int32_t, ev->cpu);
	p = put_ids(p, ev, narrow);
	put_data(p, ev->data, ev->len);
	p += ev->len;
	if (strings) {
		memcpy(p, ev->data, text);
		p += text;
		*p++ = '\0'; /* the text's NUL */
		if (c) {
			memcpy(p, c->where_esc, where);
			memcpy(p + where, c->source_esc, source);
			memcpy(p + where + source, c->inlined_esc, inlined);
			p += where + source + inlined;
		} else {
			memset(p, 0, 3); /* no site: three empty strings */
			p += 3;
		}
	}
	if (narrow)
		PUT_VALUE(p, uint8_t, raised);
	else
		PUT_VALUE(p, uint64_t, raised);
	s->len += (size_t)(p - start);
	return s->len > s->room ? packet_full(w, s, (size_t)(p - start), clock) : 0;
}

/* The size of an event of a narrow plain class with a compact header. */
#define COMMON_EVENT_SIZE(len) (HEADER_COMPACT_SIZE + 4 + 3 + 6 + 6 + 1 + (len) + 1)

/* The events read ahead that take the common way, from the first, written
 * as write_event writes them: a user event of the thread of the last event
 * written (its stream's clock then that event's time), not before it and
 * less than COMPACT_TIME_SPAN after it, in its packet's room, its values
 * narrow, no text and no site, its type's narrow plain class known and
 * compact.  How many were written: the next one is write_event's.  What
 * holds for the whole run (the thread, the stream, the site table's
 * answer) is tested once and kept in locals: the stores into the packet
 * would otherwise have every field of w and s read again an event. */
static size_t write_common_run(struct ctf_writer *w, const struct posixtrace_batch_event *e,
                               size_t n, bool cpu_records)
{
	if (!w->last_valid || (w->sites->no_images == false && w->sites->off == false))
		return 0;
	struct ctf_stream *s = &w->streams[w->last_stream];
	pid_t pid = w->last_pid;
	uint64_t thread = w->last_thread;
	if ((s->len == 0 && s->seq == 0) || s->cap < PACKET_ROOM || thread >> 48 ||
	    (uint32_t)pid - (uint32_t)NARROW_PID_MIN > (uint32_t)(NARROW_PID_MAX - NARROW_PID_MIN))
		return 0;
	bool cpu_known = (!pid && !thread) || cpu_records; /* as read_event_ahead */
	bool count_asked = !w->sites->off; /* site_of counts an event with an address */
	const uint32_t *class_of = w->class_of;
	unsigned char *payload = s->payload;
	size_t room = s->room, len = s->len, i;
	uint64_t clock = s->ts_end, first = w->first_ns, last = w->last_ns, asked = 0;
	for (i = 0; i < n; i++, e++) {
		const struct posix_trace_event_info *info = &e->posixtrace_info;
		trace_event_id_t id = info->posix_event_id;
		uint64_t ts = ts_ns(&info->posix_timestamp);
		uint64_t address = (uintptr_t)info->posix_prog_address;
		unsigned trunc = (unsigned)info->posix_truncation_status;
		size_t dlen = e->posixtrace_data_len;
		/* ts - clock wraps when ts is before clock */
		if (info->posix_pid != pid || (unsigned long)info->posix_thread_id != thread ||
		    id - (POSIX_TRACE_ERROR + 1) >= MAX_EVENT_IDS - (POSIX_TRACE_ERROR + 1) ||
		    ts - clock >= COMPACT_TIME_SPAN || address >> 48 || trunc > 2 ||
		    dlen > NARROW_LEN_MAX || len + COMMON_EVENT_SIZE(dlen) > room)
			break;
		uint32_t known = class_of[(size_t)id * SHAPES]; /* narrow, plain: shape 0 */
		const unsigned char *data = e->posixtrace_data;
		if (known - 1 >= COMPACT_CLASSES || text_length(data, dlen))
			break;
		int32_t cpu = -1;
		if (cpu_known && e->posixtrace_cpu_valid && e->posixtrace_cpu <= INT32_MAX)
			cpu = (int32_t)e->posixtrace_cpu;
		unsigned char *p = put_header(payload + len, known - 1, ts, clock);
		PUT_VALUE(p, int32_t, cpu);
		p = put_narrow_ids(p, pid, thread, address, trunc, dlen);
		put_data(p, data, dlen);
		p[dlen] = 0; /* time_raised */
		len += COMMON_EVENT_SIZE(dlen);
		asked += count_asked && address;
		if ((info->posix_timestamp.tv_sec || info->posix_timestamp.tv_nsec) &&
		    (first == 0 || ts < first))
			first = ts;
		if (ts > last)
			last = ts;
		clock = ts;
	}
	s->len = len;
	s->ts_end = clock;
	w->first_ns = first;
	w->last_ns = last;
	w->sites->asked += asked;
	return i;
}

/* A TSDL string literal of a name as dump prints it (escape_text: valid
 * UTF-8 as it is, which babeltrace2 reads back; a backslash doubled and
 * any other byte as \xHH), so that names that differ stay distinct;
 * TSDL's own escapes for '"' and '\\'. */
static void write_tsdl_string(FILE *out, const char *s)
{
	char text[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX > TRACE_NAME_MAX ? TRACE_EVENT_NAME_MAX
	                                                             : TRACE_NAME_MAX)];
	fputc('"', out);
	for (const char *c = escape_text(s, text, sizeof text); *c; c++) {
		if (*c == '"' || *c == '\\')
			fputc('\\', out);
		fputc(*c, out);
	}
	fputc('"', out);
}

static const char metadata_types[] =
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"typealias integer { size = 24; align = 8; signed = true; } := int24_t;\n"
	"typealias integer { size = 8; align = 8; signed = false; encoding = UTF8; } := utf8_t;\n"
	"typealias integer { size = 6; align = 1; signed = false; } := uint6_t;\n"
	"typealias integer { size = 5; align = 1; signed = false; } := uint5_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; base = 16; } := uint64_hex_t;\n"
	"typealias integer { size = 48; align = 8; signed = false; base = 16; } := uint48_hex_t;\n"
	"typealias integer { size = 27; align = 1; signed = false;\n"
	"                    map = clock.posixtrace.value; } := uint27_clock_t;\n"
	"typealias integer { size = 64; align = 8; signed = false;\n"
	"                    map = clock.posixtrace.value; } := uint64_clock_t;\n\n";

static void write_metadata_head(FILE *out, struct trace_log *log, uint32_t host)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX] = "", version[TRACE_NAME_MAX] = "";
	if (posix_trace_get_attr(log->trid, &a) == 0) {
		posix_trace_attr_getname(&a, name);
		posix_trace_attr_getgenversion(&a, version);
		posix_trace_attr_destroy(&a);
	}
	uint32_t probe = 1;
	bool little = *(unsigned char *)&probe == 1;
	fprintf(out, "/* CTF 1.8 */\n\n%s", metadata_types);
	fprintf(out,
	        "trace {\n\tmajor = 1;\n\tminor = 8;\n\tbyte_order = %s;\n"
	        "\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint32_t stream_id;\n"
	        "\t\tuint64_t stream_instance_id;\n\t};\n"
	        "};\n\n",
	        little ? "le" : "be");
	fputs("env {\n\tdomain = \"posixtrace\";\n\ttracer_name = \"posixtrace\";\n\ttrace_name = ",
	      out);
	write_tsdl_string(out, name);
	fputs(";\n\tgenversion = ", out);
	write_tsdl_string(out, version);
	if (log->nhosts > 1 && log->hosts[host].known) { /* a trace per host: LTTng's name */
		fputs(";\n\thostname = ", out);
		write_tsdl_string(out, log->hosts[host].rec.posixtrace_host_name);
	}
	fputs(";\n};\n\n", out);
	fputs("clock {\n\tname = posixtrace;\n"
	      "\tdescription = \"CLOCK_MONOTONIC mapped onto CLOCK_REALTIME at stream creation\";\n"
	      "\tfreq = 1000000000;\n\tprecision = 1;\n\toffset_s = 0;\n\toffset = 0;\n"
	      "\tabsolute = true;\n};\n\n",
	      out);
	fputs("stream {\n\tid = 0;\n\tpacket.context := struct {\n"
	      "\t\tuint64_clock_t timestamp_begin;\n\t\tuint64_clock_t timestamp_end;\n"
	      "\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
	      "\t\tuint64_t packet_seq_num;\n\t\tuint64_t events_discarded;\n\t};\n"
	      /* see HEADER_EXTENDED */
	      "\tevent.header := struct {\n"
	      "\t\tenum : uint5_t { compact = 0 ... 30, extended = 31 } id;\n"
	      "\t\tvariant <id> {\n"
	      "\t\t\tstruct { uint27_clock_t timestamp; } compact;\n"
	      "\t\t\tstruct { uint32_t id; uint64_clock_t timestamp; } extended;\n"
	      "\t\t} v;\n\t} align(8);\n"
	      /* A stream is a thread's: the CPU changes from event to event
	       * (-1: unknown). */
	      "\tevent.context := struct {\n\t\tint32_t cpu_id;\n\t};\n"
	      "};\n\n",
	      out);
}

/* The class of an event type in a shape (see SHAPE_WIDE). */
static void write_class(FILE *out, uint32_t id, const char *name, unsigned shape)
{
	bool wide = shape & SHAPE_WIDE;
	const char *strings = shape & SHAPE_STRINGS
	                              ? "\t\tstring text;\n\t\tstring site;\n\t\tstring source;\n"
	                                "\t\tstring inlined;\n"
	                              : "\t\tutf8_t text[0];\n\t\tutf8_t site[0];\n"
	                                "\t\tutf8_t source[0];\n\t\tutf8_t inlined[0];\n";
	fputs("event {\n\tname = ", out);
	write_tsdl_string(out, name);
	fprintf(out,
	        ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n"
	        "\t\t%s pid;\n\t\t%s tid;\n\t\t%s prog_address;\n"
	        "\t\tenum : %s { none = 0, record = 1, read = 2 } truncation;\n"
	        "\t\t%s data_len;\n\t\tuint8_t data[data_len];\n%s"
	        "\t\t%s time_raised;\n\t};\n"
	        "};\n\n",
	        id, wide ? "int32_t" : "int24_t", wide ? "uint64_hex_t" : "uint48_hex_t",
	        wide ? "uint64_hex_t" : "uint48_hex_t",
	        wide ? "uint8_t" : "integer { size = 2; align = 1; signed = false; }",
	        wide ? "uint32_t" : "uint6_t", strings, wide ? "uint64_t" : "uint8_t");
}

static bool class_used(const struct ctf_writer *w, uint32_t type)
{
	const uint32_t *of = &w->class_of[(size_t)type * SHAPES];
	return of[0] || of[1] || of[2] || of[3];
}

/* The classes of a type its events used; a type that has none (listed
 * by the log, no event in the trace) has its general one. */
static void write_event_classes(struct ctf_writer *w, FILE *out, uint32_t type, const char *name)
{
	const uint32_t *of = &w->class_of[(size_t)type * SHAPES];
	if (!class_used(w, type))
		class_id(w, type, SHAPE_WIDE | SHAPE_STRINGS);
	for (unsigned shape = 0; shape < SHAPES; shape++)
		if (of[shape])
			write_class(out, of[shape] - 1, name, shape);
}

/* Event classes: every type the log names, and any other id it used. */
static int write_metadata(struct ctf_writer *w, struct trace_log *log)
{
	int fd = create_file_in(w->dirfd, w->dir, "metadata");
	FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out) {
		if (fd >= 0) {
			error_msg("%s/metadata: %s", w->dir, strerror(errno));
			close(fd);
		}
		return -1;
	}
	write_metadata_head(out, log, w->host);
	for (size_t src = 0; src < trace_log_sources(log); src++) {
		struct trace_log *one = trace_log_source(log, (uint32_t)src);
		if (log->set && log->hosts && one->hosts &&
		    logset_host_of(log, (uint32_t)src) != w->host)
			continue;
		bool listed[MAX_EVENT_IDS] = {false};
		trace_event_id_t id;
		int unavailable = 0;
		posix_trace_eventtypelist_rewind(one->trid);
		while (posix_trace_eventtypelist_getnext_id(one->trid, &id, &unavailable) == 0 &&
		       !unavailable)
			if (id < MAX_EVENT_IDS)
				listed[id] = true;
		for (id = 0; id < MAX_EVENT_IDS; id++)
			if (listed[id] || class_used(w, (uint32_t)(src * MAX_EVENT_IDS + id)))
				write_event_classes(w, out, (uint32_t)(src * MAX_EVENT_IDS + id),
				                    name_cache_get(&one->names, id));
	}
	if (fclose(out) != 0) {
		error_msg("%s/metadata: %s", w->dir, strerror(errno));
		return -1;
	}
	return 0;
}

/* First pass: the number of events (for the progress line) and of
 * OVERFLOW events, and the log's total loss, to share it out. */
static void count_events(struct trace_log *log, struct ctf_writer *w)
{
	struct trace_event ev;
	while (trace_log_skim(log, &ev) > 0) {
		w->events++;
		w->overflows += ev.info.posix_event_id == POSIX_TRACE_OVERFLOW;
	}
	trace_log_rewind(log);
	trace_log_lost(log, &w->lost_total);
	w->counted = true;
}

/* 0, -1 (said) or NEEDS_COUNT. */
static int write_streams(struct ctf_writer *w, struct trace_log *log, struct progress *pr)
{
	struct trace_event ev;
	int rc;
	for (;;) {
		/* the progress line counts every event: then one at a time */
		const struct posixtrace_batch_event *evs;
		size_t n;
		rc = pr->enabled ? TRACE_LOG_NOT_AHEAD : trace_log_ahead(log, &evs, &n);
		if (rc == 1) {
			size_t k = write_common_run(w, evs, n, log->cpu_records);
			trace_log_took(log, k);
			if (k == n)
				continue;
		} else if (rc != TRACE_LOG_NOT_AHEAD) {
			break;
		}
		if ((rc = trace_log_next(log, &ev)) <= 0)
			break;
		int written = write_event(w, &ev);
		if (written)
			return written;
		if (pr->enabled) /* what it counts is shown only then: no call an event */
			progress_step(pr);
	}
	if (rc < 0)
		return -1;
	for (size_t i = 0; i < w->nstreams; i++)
		if (w->streams[i].len && flush_packet(w, &w->streams[i], false))
			return -1;
	if (close_stream_file(w) != 0)
		return -1;
	if (!w->counted)
		trace_log_lost(log, &w->lost_total); /* known once the log is read */
	return 0;
}

/* Losses no OVERFLOW event reported (a log that wrapped, a stream that lost
 * events without a reader to report them) still show: a stream of their
 * own with two empty packets, the second counting them. */
static int write_unreported_loss(struct ctf_writer *w)
{
	if (w->overflows || !w->lost_total)
		return 0;
	struct ctf_stream *s = new_stream(w);
	s->ts_begin = s->ts_end = w->first_ns;
	if (write_packet(w, s, 0, false))
		return -1;
	s->ts_end = w->last_ns;
	return write_packet(w, s, w->lost_total, false);
}

static void free_streams(struct ctf_writer *w)
{
	for (size_t i = 0; i < w->nstreams; i++)
		free(w->streams[i].payload);
	free(w->streams);
	thread_table_free(&w->threads);
	w->last_valid = false;
	w->streams = NULL;
	w->nstreams = w->streams_cap = 0;
	w->shared_threads = w->raised = 0;
}

/* What a pass that stopped at an OVERFLOW wrote is removed, and the log
 * is written again once its loss is counted. */
static int write_counted(struct ctf_writer *w, struct trace_log *log, struct progress *pr)
{
	if (close_stream_file(w) != 0)
		return -1;
	for (size_t i = 0; i < w->nstreams; i++) {
		char name[64];
		stream_name(w->streams[i].instance_id, name, sizeof name);
		if (w->streams[i].packets_written && unlinkat(w->dirfd, name, 0) != 0) {
			error_msg("%s/%s: %s", w->dir, name, strerror(errno));
			return -1;
		}
	}
	free_streams(w);
	memset(w->class_of, 0, w->ntypes * SHAPES * sizeof *w->class_of);
	w->nclasses = 0;
	w->first_ns = w->last_ns = 0;
	trace_log_rewind(log);
	count_events(log, w);
	progress_init(pr, "converting", w->events);
	return write_streams(w, log, pr);
}

static int convert_one(struct trace_log *log, const char *dir, bool force,
                       struct site_table *sites, uint32_t host)
{
	struct ctf_writer w = {.dir = dir, .file_fd = -1, .sites = sites, .host = host};
	struct progress pr;
	w.dirfd = create_output_dir(dir, force, is_ctf_file);
	if (w.dirfd < 0)
		return EXIT_FAIL;
	w.ntypes = trace_log_sources(log) * MAX_EVENT_IDS;
	w.class_of = xmalloc(w.ntypes * SHAPES * sizeof *w.class_of);
	memset(w.class_of, 0, w.ntypes * SHAPES * sizeof *w.class_of);
	log->without_thread_names = true; /* CTF's tid is the pthread_t */
	log->with_cpu = true;                /* the event context's cpu_id */
	log->read_ahead = true;              /* no comm, nothing asked of the last event */
	if (progress_wanted())
		count_events(log, &w); /* the line shows the total */
	progress_init(&pr, "converting", w.events);
	int rc = write_streams(&w, log, &pr);
	if (rc == NEEDS_COUNT)
		rc = write_counted(&w, log, &pr);
	progress_end(&pr);
	if (rc == 0)
		rc = write_unreported_loss(&w);
	if (close_stream_file(&w) != 0)
		rc = -1;
	if (rc == 0)
		rc = write_metadata(&w, log);
	if (w.shared_threads)
		note_msg("convert: more than %d threads: %llu events of the later ones share their "
		         "streams", CTF_STREAMS_MAX, (unsigned long long)w.shared_threads);
	if (w.raised)
		note_msg("convert: %llu events written later than their time, where times went back "
		         "within a stream (field time_raised)", (unsigned long long)w.raised);
	free_streams(&w);
	free(w.class_of);
	close(w.dirfd);
	return rc ? EXIT_FAIL : 0;
}

/* A host's trace directory: its number and name, the name's bytes other
 * than letters, digits, '.', '_' and '-' made '_' (a host name is the
 * log's: never a path). */
static void host_dir(const struct trace_log *log, uint32_t host, const char *dir, char *buf,
                     size_t size)
{
	char name[POSIXTRACE_HOST_NAME_MAX + 1];
	const struct log_host *h = &log->hosts[host];
	snprintf(name, sizeof name, "%s", h->known ? h->rec.posixtrace_host_name : "unknown");
	for (char *c = name; *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
		      (*c >= '0' && *c <= '9') || *c == '.' || *c == '_' || *c == '-'))
			*c = '_';
	snprintf(buf, size, "%s/host%u-%s", dir, host + 1, name);
}

/* Several hosts: a trace per host, each in a directory of DIR with the
 * host in its environment (hostname), which babeltrace2 reads as one
 * (their clocks are absolute, on the Unix epoch). */
int convert_to_ctf(struct trace_log *log, const char *dir, bool force, struct site_table *sites)
{
	if (trace_log_sources(log) * MAX_EVENT_IDS > 65536) {
		error_msg("convert: a CTF trace holds the types of at most %d logs",
		          65536 / MAX_EVENT_IDS);
		return EXIT_FAIL;
	}
	if (log->nhosts < 2)
		return convert_one(log, dir, force, sites, 0);
	if (mkdir(dir, 0700) != 0 && !(errno == EEXIST && force)) {
		error_msg("%s: %s", dir, strerror(errno));
		return EXIT_FAIL;
	}
	int rc = 0;
	for (uint32_t h = 0; h < log->nhosts && !rc; h++) {
		char sub[PATH_MAX];
		host_dir(log, h, dir, sub, sizeof sub);
		logset_only_host(log, (int64_t)h);
		trace_log_rewind(log);
		rc = convert_one(log, sub, force, sites, h);
	}
	logset_only_host(log, -1);
	return rc;
}
