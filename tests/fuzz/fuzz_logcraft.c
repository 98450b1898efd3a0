/* SPDX-License-Identifier: MIT */
/*
 * Structure-aware libFuzzer target over the log reader (src/log/logread.c): the
 * input is not a log but a program that writes one, so every block it
 * makes has right CRCs and the mutations reach the records, the sequence
 * numbers, the layout and the holes of a file that passes every checksum.
 * (fuzz_log and fuzz_logread mutate bytes with the CRC checks compiled out;
 * this target keeps them, as a real reader has them.)
 *
 * The first bytes choose the header (format version 2 or 3, block size,
 * linear or ring and its slots, name table or not, closed, data_end,
 * max-data-size); then each step takes an opcode and its operands from the
 * input: an event record (any id, length, flags, delta), TIME, CONTEXT,
 * SWITCH, a raw word, the block sealed with a chosen sequence number, a
 * NAMES or END block, a hole of chosen size, a forged header whose payload
 * claims more than the file holds or lies in a hole.  In a version 3 log
 * the records go into STAGES or KEEPER blocks: OWNER records and section
 * starts (lane, address) too, RESUME in KEEPER blocks, and sealing chooses
 * the type, the drain number (the same, the next, any), the calibration
 * (points increasing or not, 0 to 65 of them), and section lengths and
 * counts right or wrong; blocks of the reserved types come in between,
 * and IMAGES tables of the three forms (entries with their paths, files
 * shared by images with a uid, files described once per log by id and
 * images naming them) whose entries the reader looks events up in.  The log is a memory file (holes are real: it
 * is sparse), read twice with a rewind between, and again after a rewind
 * that followed the first event; the passes must agree,
 * end by themselves, and take time in proportion to the data written
 * (checked: at most a few seconds, whatever the holes).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../src/log/logread.h"
#include "fuzz_common.h"
#include "fuzz_logr.h"

#define MAX_FILE (64ull << 20) /* apparent size: holes included */

struct input {
	const uint8_t *p;
	size_t left;
};

static uint64_t take(struct input *in, unsigned bytes)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < bytes; i++) {
		v |= (uint64_t)(in->left ? *in->p : 0) << (8 * i);
		if (in->left) {
			in->p++;
			in->left--;
		}
	}
	return v;
}

#define MAX_SECTIONS 64u

struct gen {
	int fd;
	struct pt_log_header h;
	unsigned char *payload;
	uint32_t len, cap;
	uint64_t off, seq;
	/* version 3: the sections of the records so far, the last drain */
	uint32_t nsec, sec_start[MAX_SECTIONS], sec_lane[MAX_SECTIONS];
	uint64_t sec_pc[MAX_SECTIONS], drain;
	unsigned char *out; /* a STAGES or KEEPER payload being put together */
};

static void put_at(struct gen *g, uint64_t off, const void *bytes, size_t len)
{
	if (off + len <= MAX_FILE && len)
		(void)!pwrite(g->fd, bytes, len, (off_t)off);
}

/* Where block seq goes: after the last one (linear), or its slot (ring). */
static uint64_t block_place(struct gen *g, uint64_t seq, uint32_t len)
{
	if (g->h.layout == PT_LOG_RING)
		return g->h.data_off + (seq % g->h.ring_slots) * g->h.block_size;
	uint64_t at = g->off;
	g->off += pt_log_pad8(PT_LOG_BLOCK_HDR + len);
	return at;
}

static void block(struct gen *g, uint32_t type, uint64_t seq, uint64_t ts_base,
                  const void *payload, uint32_t len, uint32_t claim)
{
	struct pt_log_block b = {PT_LOG_BLOCK_MAGIC, type, seq, ts_base, claim,
	                         pt_crc32c(0, payload, len), 0, 0};
	b.header_crc = pt_crc32c(0, &b, offsetof(struct pt_log_block, header_crc));
	uint64_t at = block_place(g, seq, claim);
	put_at(g, at, &b, sizeof b);
	put_at(g, at + sizeof b, payload, len);
}

/* An IMAGES table (type 7): entries shaped right, or nearly. */
static void images_table(struct gen *g, struct input *in)
{
	unsigned char t[2048];
	uint32_t n = 0, entries = 1 + (uint32_t)take(in, 1) % 4;
	for (uint32_t i = 0; i < entries; i++) {
		struct pt_log_image e = {0};
		e.pid = (int32_t)(take(in, 1) % 4);
		e.set = take(in, 1) % 4;
		e.time_ns = 1000000000 + take(in, 3);
		e.start = take(in, 2) << 12;
		e.end = e.start + take(in, 2);
		e.bias = take(in, 2) << 12;
		e.count = (uint16_t)take(in, 1);
		e.index = (uint16_t)(e.count ? take(in, 1) % (e.count + 1u) : 0);
		e.path_len = (uint16_t)(take(in, 2) % 600);
		e.build_id_len = (uint8_t)(take(in, 1) % 40);
		e.flags = (uint8_t)take(in, 1);
		e.entry_size = take(in, 1) % 16 ? pt_log_image_size(e.path_len) : (uint32_t)take(in, 2);
		uint32_t size = pt_log_image_size(e.path_len);
		if (n + size > sizeof t)
			break;
		memcpy(t + n, &e, sizeof e);
		memset(t + n + sizeof e, 'a' + (int)(take(in, 1) % 26), size - sizeof e);
		n += size;
	}
	block(g, PT_LOG_IMAGES, g->seq++, 0, t, n, n);
}

/* An IMAGES_SHARED table (type 8): FILE and IMAGE entries (with a uid),
 * and now and then an entry of another kind or size, a file number past
 * the files, a size that is wrong; files repeated so that the reader
 * shares them. */
static void shared_images_table(struct gen *g, struct input *in)
{
	unsigned char t[2048];
	uint32_t n = 0, files = 0, entries = 1 + (uint32_t)take(in, 1) % 6;
	for (uint32_t i = 0; i < entries; i++) {
		uint32_t what = (uint32_t)take(in, 1);
		uint32_t size;
		if (what % 3 == 0) {
			struct pt_log_shared_file f = {.kind = PT_LOG_SHARED_FILE};
			f.path_len = (uint16_t)(take(in, 1) & 1 ? take(in, 1) % 8 : take(in, 2) % 600);
			f.build_id_len = (uint8_t)(take(in, 1) % 40);
			f.flags = (uint8_t)take(in, 1);
			memset(f.build_id, (int)take(in, 1) % 4, sizeof f.build_id);
			size = pt_log_shared_file_size(f.path_len);
			f.entry_size = what & 0x80 ? (uint32_t)take(in, 2) : size;
			if (n + size > sizeof t)
				break;
			memcpy(t + n, &f, sizeof f);
			memset(t + n + sizeof f, 'a' + (int)(take(in, 1) % 4), size - sizeof f);
			files++;
		} else if (what % 3 == 1) {
			struct pt_log_shared_image m = {.kind = PT_LOG_SHARED_IMAGE};
			m.entry_size = sizeof m + (what & 0x40 ? 8u * (uint32_t)(take(in, 1) % 4) : 0);
			m.file = (uint32_t)(what & 0x20 ? take(in, 1) : (files ? take(in, 1) % files : 0));
			m.pid = (int32_t)(take(in, 1) % 4);
			m.uid = (uint32_t)(take(in, 1) & 1 ? take(in, 4) : UINT32_MAX);
			m.set = take(in, 1) % 4;
			m.time_ns = 1000000000 + take(in, 3);
			m.start = take(in, 2) << 12;
			m.end = m.start + take(in, 2);
			m.bias = take(in, 2) << 12;
			m.count = (uint16_t)take(in, 1);
			m.index = (uint16_t)(m.count ? take(in, 1) % (m.count + 1u) : 0);
			size = m.entry_size;
			if (what & 0x80)
				m.entry_size = (uint32_t)take(in, 2);
			if (n + size > sizeof t)
				break;
			memset(t + n, 0, size);
			memcpy(t + n, &m, sizeof m);
		} else {
			uint32_t head[2] = {8u * (1 + (uint32_t)take(in, 1) % 4), (uint32_t)take(in, 2)};
			size = head[0];
			if (n + size > sizeof t)
				break;
			memset(t + n, 0, size);
			memcpy(t + n, head, sizeof head);
		}
		n += size;
	}
	block(g, PT_LOG_IMAGES_SHARED, g->seq++, 0, t, n, n);
}

/* An IMAGES_COMPACT table (type 9): one of two tables, FILE entries
 * (ids few, so that they are described again, the same or not) and SET
 * entries (ids described or not, counts true or lies), and now and then
 * an unknown kind, a body length that lies, a varint cut short. */
static void compact_images_table(struct gen *g, struct input *in)
{
	unsigned char t[2048], body[700];
	uint64_t table = 1 + take(in, 1) % 2;
	memcpy(t, &table, sizeof table);
	uint32_t n = PT_LOG_COMPACT_PREFIX, entries = 1 + (uint32_t)take(in, 1) % 6;
	for (uint32_t i = 0; i < entries; i++) {
		uint32_t what = (uint32_t)take(in, 1), b = 0;
		uint8_t kind = (uint8_t)(what % 3 == 0 ? PT_LOG_COMPACT_FILE
		                         : what % 3 == 1 ? PT_LOG_COMPACT_SET : take(in, 1));
		if (kind == PT_LOG_COMPACT_FILE) {
			b += pt_log_varint_put(body + b, take(in, 1) % 8);
			body[b++] = (uint8_t)take(in, 1);
			uint8_t idlen = (uint8_t)(take(in, 1) % 40);
			body[b++] = idlen;
			memset(body + b, (int)take(in, 1) % 4, idlen);
			b += idlen;
			b += pt_log_varint_put(body + b, take(in, 2));
			b += pt_log_varint_put(body + b, take(in, 2));
			uint32_t path = (uint32_t)(take(in, 1) & 1 ? take(in, 1) % 8 : take(in, 2) % 600);
			b += pt_log_varint_put(body + b, path);
			if (path > sizeof body - b)
				path = (uint32_t)(sizeof body - b);
			memset(body + b, 'a' + (int)(take(in, 1) % 4), path);
			b += path;
		} else if (kind == PT_LOG_COMPACT_SET) {
			body[b++] = (uint8_t)take(in, 1);
			b += pt_log_varint_put(body + b, take(in, 1) % 8);
			b += pt_log_varint_put(body + b, take(in, 4));
			b += pt_log_varint_put(body + b, take(in, 4));
			b += pt_log_varint_put(body + b, take(in, 1) % 8);
			uint64_t count = take(in, 1), first = take(in, 1) % 4, pairs = take(in, 1) % 6;
			b += pt_log_varint_put(body + b, count);
			b += pt_log_varint_put(body + b, first);
			b += pt_log_varint_put(body + b, what & 0x80 ? take(in, 8) : pairs);
			for (uint64_t k = 0; k < pairs; k++) {
				b += pt_log_varint_put(body + b, take(in, 1) % 10);
				b += pt_log_varint_put(body + b, take(in, 3));
			}
		} else {
			b = (uint32_t)take(in, 1) % 16;
			memset(body, (int)take(in, 1), b);
		}
		uint32_t claimed = what & 0x40 ? (uint32_t)take(in, 2) : b;
		if (n + 1 + PT_LOG_VARINT_MAX + b > sizeof t)
			break;
		t[n++] = kind;
		n += pt_log_varint_put(t + n, claimed);
		memcpy(t + n, body, b);
		n += b;
	}
	if (take(in, 1) % 16 == 0)
		t[n++] = 0x80; /* a varint cut short */
	block(g, PT_LOG_IMAGES_COMPACT, g->seq++, 0, t, n, n);
}

static void rec(struct gen *g, const void *bytes, uint32_t n)
{
	if (g->len + n > g->cap)
		return;
	memcpy(g->payload + g->len, bytes, n);
	g->len += n;
}

static void word(struct gen *g, uint64_t w)
{
	rec(g, &w, 8);
}

static uint64_t w0(uint32_t id, uint32_t len, uint32_t delta)
{
	return (delta & PT_REC_DELTA_MASK) | (uint64_t)(id & PT_REC_ID_MASK) << PT_REC_ID_SHIFT |
	       (uint64_t)(len & PT_REC_LEN_MASK) << PT_REC_LEN_SHIFT;
}

static void seal(struct gen *g, uint64_t seq, uint64_t ts)
{
	block(g, PT_LOG_EVENTS, seq, ts, g->payload, g->len, g->len);
	g->len = 0;
}

static void out_put(struct gen *g, uint32_t *n, const void *bytes, uint32_t len)
{
	if (*n + len > g->cap)
		len = g->cap - *n;
	memcpy(g->out + *n, bytes, len);
	*n += len;
}

/* A STAGES payload of the records so far: the prefix, a calibration and
 * the sections, each with its length; flags make any of them wrong. */
static uint32_t stages_payload(struct gen *g, struct input *in, uint64_t drain)
{
	uint64_t flags = take(in, 1);
	uint32_t ncal = flags & 3 ? (uint32_t)(flags & 3) : flags & 4 ? 0 : PT_LOG_MAX_CAL + 1;
	uint32_t nsec = g->nsec ? g->nsec : 1, n = 0;
	if (!g->nsec)
		g->sec_start[0] = 0, g->sec_lane[0] = 0, g->sec_pc[0] = 0;
	struct pt_log_stages pre = {drain, (uint32_t)(flags >> 3 & 1) + 1, ncal, nsec, 0, 0};
	if (flags & 0x80)
		pre.nsections = flags & 0x10 ? nsec + 1 : 0;
	out_put(g, &n, &pre, sizeof pre);
	struct pt_log_calpoint p = {take(in, 4), take(in, 4) + 1000000000};
	for (uint32_t i = 0; i < ncal; i++) {
		out_put(g, &n, &p, sizeof p);
		p.raw += flags & 0x40 ? 0 : take(in, 2) + 1;
		p.real_ns += take(in, 2);
	}
	for (uint32_t i = 0; i < nsec; i++) {
		uint32_t end = i + 1 < nsec ? g->sec_start[i + 1] : g->len;
		struct pt_log_section sec = {g->sec_lane[i], end - g->sec_start[i], g->sec_pc[i]};
		if ((flags & 0x20) && i + 1 == nsec)
			sec.len += (uint32_t)(take(in, 1) % 3) * 4;
		out_put(g, &n, &sec, sizeof sec);
		out_put(g, &n, g->payload + g->sec_start[i], end - g->sec_start[i]);
	}
	return n;
}

/* Version 3: the records so far sealed into a STAGES or a KEEPER block of
 * a drain chosen from the input. */
static void seal_v3(struct gen *g, struct input *in, uint64_t seq, uint64_t ts)
{
	uint64_t d = take(in, 1);
	uint32_t type = d & 1 ? PT_LOG_KEEPER : PT_LOG_STAGES, n = 0;
	uint64_t drain = (d >> 1 & 3) < 2 ? g->drain : (d >> 1 & 3) == 2 ? g->drain + 1 : take(in, 1);
	if (type == PT_LOG_STAGES) {
		n = stages_payload(g, in, drain);
	} else {
		out_put(g, &n, &drain, sizeof drain);
		out_put(g, &n, g->payload, g->len);
	}
	block(g, type, seq, ts, g->out, n, n);
	g->drain = drain;
	g->len = g->nsec = 0;
}

static void header(struct gen *g, struct input *in)
{
	struct pt_log_header *h = &g->h;
	uint64_t knobs = take(in, 2);
	memset(h, 0, sizeof *h);
	memcpy(h->magic, PT_LOG_MAGIC, sizeof h->magic);
	h->version = (knobs >> 11) & 1 ? 3 : 2;
	h->byte_order = PT_LOG_BOM;
	h->header_size = PT_LOG_HEADER_SIZE;
	int table = knobs & 1;
	h->flags = (table ? PT_LOG_SEEKABLE : 0) | ((knobs >> 1) & 1 ? PT_LOG_CLOSED : 0);
	h->names_off = table ? PT_LOG_NAMES_OFF : 0;
	h->names_size = table ? PT_LOG_NAMES_SIZE : 0;
	h->data_off = table ? PT_LOG_DATA_OFF : PT_LOG_DATA_OFF_NOTABLE;
	h->layout = (knobs >> 2) & 1 ? PT_LOG_RING : PT_LOG_LINEAR;
	h->ring_slots = h->layout == PT_LOG_RING ? 2 + ((knobs >> 3) & 7) : 0;
	h->block_size = PT_LOG_MIN_BLOCK << ((knobs >> 6) & 3 ? ((knobs >> 6) & 3) * 2 - 1 : 0);
	h->max_data_size = (knobs >> 8) & 1 ? 1000 : 256;
	if (h->block_size < pt_log_block_size_of(h->version, h->max_data_size))
		h->block_size = pt_log_block_size_of(h->version, h->max_data_size);
	h->clockres_ns = take(in, 8);
	h->name_size = PT_LOG_NAME_SIZE;
	memcpy(h->trace_name, "craft", 6);
	h->stream_policy = POSIX_TRACE_LOOP;
	h->log_policy = h->layout == PT_LOG_RING ? POSIX_TRACE_LOOP : POSIX_TRACE_APPEND;
	h->inheritance = POSIX_TRACE_CLOSE_FOR_CHILD;
	h->blocks_written = (knobs >> 9) & 1 ? take(in, 1) : 0;
	h->data_end = (knobs >> 10) & 1 ? h->data_off + take(in, 3) * 8 : 0;
	h->crc = pt_crc32c(0, h, offsetof(struct pt_log_header, crc));
	put_at(g, 0, h, sizeof *h);
	g->off = h->data_off;
	g->cap = h->block_size - PT_LOG_BLOCK_HDR;
}

/* Version 3 steps that version 2 has not: OWNER, a section, RESUME, a
 * block of a reserved type. */
static void step_v3(struct gen *g, struct input *in, uint32_t op)
{
	if (op == 0) { /* OWNER */
		struct pt_log_owner o = {take(in, 4), {(int32_t)take(in, 2), (int32_t)take(in, 2),
		                                       take(in, 2), ""}};
		for (int i = 0; i < 16; i++)
			o.ctx.comm[i] = (char)take(in, 1);
		word(g, w0(PT_LOG_STAGE_OWNER, sizeof o, (uint32_t)take(in, 1)));
		word(g, 0);
		rec(g, &o, sizeof o);
	} else if (op == 1) { /* a section starts here */
		if (g->nsec < MAX_SECTIONS) {
			g->sec_start[g->nsec] = g->len;
			g->sec_lane[g->nsec] = (uint32_t)take(in, 1);
			g->sec_pc[g->nsec++] = take(in, 2);
		}
	} else if (op == 2) { /* RESUME */
		word(g, w0(PT_REC_RESUME, 0, (uint32_t)take(in, 2)));
		word(g, take(in, 1) & 1 ? take(in, 1) : 0);
	} else if (take(in, 1) & 1) { /* an IMAGES table, of any form */
		uint64_t form = take(in, 1) % 3;
		if (form == 0)
			images_table(g, in);
		else if (form == 1)
			shared_images_table(g, in);
		else
			compact_images_table(g, in);
	} else { /* a PIDS table, a table of a later revision, or a type past them */
		unsigned char t[48];
		for (size_t i = 0; i < sizeof t; i++)
			t[i] = (unsigned char)take(in, 1);
		uint32_t type = PT_LOG_PIDS + (uint32_t)(take(in, 1) % (PT_LOG_RESERVED_END - PT_LOG_PIDS + 1));
		uint32_t n = (uint32_t)(take(in, 1) % (sizeof t + 1));
		block(g, type, g->seq++, 0, t, n, n);
	}
}

/* One step of the program. */
static void step(struct gen *g, struct input *in, uint64_t *ts)
{
	unsigned char buf[1100];
	uint64_t op = take(in, 1);
	if (g->h.version >= 3 && op % 16 >= 12) {
		step_v3(g, in, (uint32_t)(op % 16 - 12));
		return;
	}
	switch (op % 12) {
	case 0: case 1: { /* an event */
		uint32_t id = (uint32_t)take(in, 2), len = (uint32_t)take(in, 1) * 4;
		if (id & 0x1000) /* a system event, as KEEPER blocks hold */
			id = (id & 0xfc00) | (1 + (id & 0x3ff) % 8);
		uint64_t w = w0(id, len, (uint32_t)take(in, 2)) | (id & 0x400 ? PT_REC_SAMEPC : 0) |
		             (id & 0x800 ? PT_REC_TRUNCATED : 0);
		word(g, w);
		if (!(w & PT_REC_SAMEPC))
			word(g, take(in, 2));
		memset(buf, 0, sizeof buf);
		for (uint32_t i = 0; i < len && in->left; i++)
			buf[i] = (unsigned char)take(in, 1);
		rec(g, buf, pt_log_pad8(len));
		break;
	}
	case 2: /* TIME */
		word(g, w0(PT_REC_TIME, 8, 0));
		word(g, 0);
		word(g, *ts = take(in, 1) & 1 ? *ts - take(in, 4) : *ts + take(in, 4));
		break;
	case 3: { /* CONTEXT */
		struct pt_log_ctxrec c = {{(int32_t)take(in, 2), (int32_t)take(in, 2), take(in, 2), ""},
		                          (uint32_t)take(in, 1), 0};
		for (int i = 0; i < 4; i++)
			c.ctx.comm[i] = (char)take(in, 1);
		word(g, w0(PT_REC_CONTEXT, sizeof c, 0));
		word(g, 0);
		rec(g, &c, sizeof c);
		break;
	}
	case 4: /* SWITCH */
		word(g, w0(PT_REC_SWITCH, 0, (uint32_t)take(in, 1)));
		word(g, take(in, 1));
		break;
	case 5: /* a raw word */
		word(g, take(in, 8));
		break;
	case 6: case 7: { /* the block sealed: the next number, or one near it */
		uint64_t d = take(in, 1);
		uint64_t seq = d < 200 ? g->seq : d < 230 ? g->seq + (d - 199) : g->seq - (d - 229);
		if (g->h.version >= 3)
			seal_v3(g, in, seq, *ts);
		else
			seal(g, seq, *ts);
		g->seq = seq + 1;
		break;
	}
	case 8: { /* NAMES */
		struct pt_log_name_entry e[2];
		memset(e, 0, sizeof e);
		for (int i = 0; i < 2; i++) {
			e[i].id = (uint32_t)take(in, 2) % 1030;
			for (int k = 0; k < 8; k++)
				e[i].name[k] = (char)take(in, 1);
		}
		block(g, PT_LOG_NAMES, g->seq++, 0, e, sizeof e, sizeof e);
		break;
	}
	case 9: { /* END */
		struct pt_log_status s;
		memset(&s, 0, sizeof s);
		s.lost_events = take(in, 1);
		block(g, PT_LOG_END, g->seq++, 0, &s, sizeof s, sizeof s);
		break;
	}
	case 10: /* a hole */
		g->off += (take(in, 2) + 1) * 4096;
		g->off &= ~(uint64_t)7;
		break;
	default: { /* a header whose payload is a hole, or claims past the end */
		uint32_t claim = (uint32_t)(take(in, 3) % (g->h.block_size - PT_LOG_BLOCK_HDR + 1));
		block(g, g->h.version >= 3 ? PT_LOG_STAGES : PT_LOG_EVENTS, g->seq++, *ts, NULL, 0,
		      claim);
		break;
	}
	}
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	struct input in = {bytes, size};
	struct gen g = {0};
	g.fd = fuzz_memfd("fuzz-logcraft", NULL, 0);
	if (g.fd < 0)
		return 0;
	header(&g, &in);
	g.payload = malloc(g.cap);
	g.out = malloc(g.cap);
	if (!g.payload || !g.out) {
		free(g.payload);
		free(g.out);
		close(g.fd);
		return 0;
	}
	uint64_t ts = 1000000000;
	g.drain = 1;
	while (in.left)
		step(&g, &in, &ts);
	if (g.len && g.h.version >= 3)
		seal_v3(&g, &in, g.seq++, ts);
	else if (g.len)
		seal(&g, g.seq++, ts);
	free(g.payload);
	free(g.out);
	struct pt_logr *r = NULL;
	double t0 = now_s();
	if (pt_logr_open(g.fd, &r) == 0) {
		struct fuzz_digest d1 = fuzz_logr_read_all(r);
		pt_logr_rewind(r);
		struct fuzz_digest d2 = fuzz_logr_read_all(r);
		if (!fuzz_digest_same(&d1, &d2))
			abort();
		/* a rewind after the first event starts the first drains'
		 * sources again (pt_logm_restart): the same pass again */
		struct pt_log_event ev;
		unsigned char data[300];
		size_t len;
		pt_logr_rewind(r);
		(void)pt_logr_next(r, &ev, data, sizeof data, &len);
		pt_logr_rewind(r);
		struct fuzz_digest d3 = fuzz_logr_read_all(r);
		if (!fuzz_digest_same(&d1, &d3))
			abort();
		pt_logr_close(r);
	}
	/* 64 MiB of file at most, and 256 KiB of input: anything beyond a few
	 * seconds is work out of proportion to the data (holes read, payloads
	 * checked again and again). */
	if (now_s() - t0 > 5)
		abort();
	close(g.fd);
	return 0;
}
