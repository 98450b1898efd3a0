/* SPDX-License-Identifier: MIT */
/*
 * The one decoder of stream records (layout.h), used by every consumer of
 * memory a traced process can write: the live reader and the keeper's
 * drain (reader.c), a LOOP writer counting what it steals and a writer
 * taking over a lane (lanes.c).  The rules are written here once:
 *
 *  - a record is read as one 64-bit word, copied once into private memory;
 *    every decision below depends on that copy only, so a value flipped
 *    while it is read cannot make two checks disagree;
 *  - its size (8 or 16 bytes of header, then the data padded to 8) must fit
 *    in the bytes known to be there;
 *  - an event has a user id and at most max-data-size bytes of data;
 *  - a meta record (TIME, OWNER, IMAGE, CPU) has both header words and its
 *    data's size (IMAGE: within its bounds); its data is copied once before it is applied;
 *  - anything else is damage.
 *
 * A chunk header's identity (its lane and sequence number) is checked by
 * pt_chunk_identity: a reader enters a chunk only for the lane the chunk
 * names and only with a sequence number above every one it met there
 * before, so no chain of links (a cycle, a chunk named by many lanes) can
 * make it read the same stored records twice.
 */
#ifndef PT_RECORDS_H
#define PT_RECORDS_H

#include <string.h>
#include "layout.h"

/*
 * A chunk can be taken away from under its reader by a LOOP writer, so
 * reads of a chunk may race with that writer's stores: seqlock-style, they
 * are validated afterwards (a head compare-and-swap).  Under
 * ThreadSanitizer they are done by hand so that the validated race is not
 * reported as a bug.
 */
#if defined(__SANITIZE_THREAD__)
#define PT_RACY_READS 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define PT_RACY_READS 1
#endif
#endif
#ifdef PT_RACY_READS
__attribute__((no_sanitize("thread"))) static inline void pt_racy_copy(void *dst, const void *src,
                                                                       size_t n)
{
	volatile const unsigned char *s = src;
	unsigned char *d = dst;
	while (n--)
		*d++ = *s++;
}
#else
static inline void pt_racy_copy(void *dst, const void *src, size_t n) { memcpy(dst, src, n); }
#endif

/*
 * Lines a reader has copied out of a chunk, pushed out of its core's
 * caches into the shared one (CLDEMOTE, a hint: a no-op where the CPU
 * lacks it; its encoding is a hint NOP on older ones).  The writer comes
 * back to them once the stream wraps (LOOP) or once the chunk is free
 * again: a line another core holds must first be taken from it, which a
 * writer pays for in every line of its event path while a live analyzer
 * reads behind it (PERFORMANCE.md, "The reader demotes what it copied").
 * Costs the reader one instruction a line.
 */
static inline void pt_demote_read(const void *p, size_t n)
{
#if defined(__x86_64__)
	for (uintptr_t a = (uintptr_t)p & ~(uintptr_t)63; a < (uintptr_t)p + n; a += 64)
		__asm__ volatile("cldemote %0" : : "m"(*(const char *)a));
#else
	(void)p;
	(void)n;
#endif
}

enum pt_rec_kind { PT_RK_BAD = 0, PT_RK_EVENT, PT_RK_TIME, PT_RK_OWNER, PT_RK_IMAGE, PT_RK_CPU };

struct pt_rec {
	uint64_t w0;
	uint32_t kind;   /* enum pt_rec_kind */
	uint32_t id;
	uint32_t len;    /* data bytes */
	uint32_t hdr;    /* header bytes: 8 or 16 */
	uint32_t size;   /* the whole record, padded */
};

/* Decodes the record whose first word is w0, `avail` bytes being known to
 * follow its start (the word included).  PT_RK_BAD when it does not fit or
 * makes no sense. */
static inline uint32_t pt_rec_decode(uint64_t w0, uint32_t avail, uint32_t max_data,
                                     struct pt_rec *r)
{
	r->w0 = w0;
	r->id = pt_rec_id(w0);
	r->len = pt_rec_len(w0);
	r->hdr = pt_rec_hdr(w0);
	r->size = (uint32_t)pt_rec_size(w0); /* at most 16 + 2^21: fits */
	r->kind = PT_RK_BAD;
	if (avail < PT_REC_HDR_MIN || r->size > avail)
		return r->kind;
	if (r->id >= PT_USER_FIRST && r->id < PT_NEVENT_IDS) {
		if (r->len <= max_data)
			r->kind = PT_RK_EVENT;
	} else if (!(w0 & PT_REC_SAMEPC)) {
		if (r->id == PT_ID_TIME && r->len == sizeof(uint64_t))
			r->kind = PT_RK_TIME;
		else if (r->id == PT_ID_OWNER && r->len == sizeof(struct pt_owner_rec))
			r->kind = PT_RK_OWNER;
		else if (r->id == PT_ID_IMAGE && r->len >= sizeof(struct pt_image_rec) &&
		         r->len <= sizeof(struct pt_image_rec) + PT_IMAGE_PATH_MAX)
			r->kind = PT_RK_IMAGE;
		else if (r->id == PT_ID_CPU && r->len == sizeof(uint64_t))
			r->kind = PT_RK_CPU;
	}
	return r->kind;
}

/* Reads and decodes the record at `off` of `buf`, whose readable bytes end
 * at `end` (off < end, both within buf). */
static inline uint32_t pt_rec_at(const unsigned char *buf, uint32_t off, uint32_t end,
                                 uint32_t max_data, struct pt_rec *r)
{
	uint64_t w0 = 0;
	if (end - off >= sizeof w0)
		pt_racy_copy(&w0, buf + off, sizeof w0);
	return pt_rec_decode(w0, end - off, max_data, r);
}

/* What a lane's records say about the ones after them: the clock base,
 * who writes, the address the next same-address event repeats, the CPU
 * (PT_CPU_NONE: unknown; set it so where a chunk starts). */
struct pt_rec_ctx {
	uint64_t base;
	uint64_t pc;
	struct pt_owner owner;
	uint32_t cpu;
};

/* A CPU record's number, checked: a value out of bounds is unknown. */
static inline uint32_t pt_rec_cpu(const unsigned char *p)
{
	uint32_t cpu;
	pt_racy_copy(&cpu, p + PT_REC_HDR, sizeof cpu);
	return pt_cpu_known(cpu) ? cpu : PT_CPU_NONE;
}

/* Applies the decoded record `r` found at `p` (a meta record changes the
 * base and the owner; an event with its address sets the address the next
 * ones may repeat).  Its data is copied once, then used. */
static inline void pt_rec_apply(struct pt_rec_ctx *c, const struct pt_rec *r,
                                const unsigned char *p)
{
	if (r->kind == PT_RK_EVENT) {
		if (r->hdr == PT_REC_HDR)
			pt_racy_copy(&c->pc, p + 8, sizeof c->pc);
		return;
	}
	if (r->kind == PT_RK_CPU) {
		/* The address stays: the keeper puts one after a section's
		 * OWNER, before events that repeat the section's address. */
		c->cpu = pt_rec_cpu(p);
		return;
	}
	c->pc = 0; /* after a meta record the next event carries its address */
	if (r->kind == PT_RK_OWNER) {
		struct pt_owner_rec o;
		pt_racy_copy(&o, p + PT_REC_HDR, sizeof o);
		c->base = o.base;
		c->owner = o.owner;
		c->owner.comm[PT_COMM_SIZE - 1] = '\0';
		c->cpu = PT_CPU_NONE; /* a new writer: its CPU is not known yet */
	} else if (r->kind == PT_RK_TIME) {
		pt_racy_copy(&c->base, p + PT_REC_HDR, sizeof c->base);
	}
}

/* A walk over the whole records of buf[off, end). */
struct pt_rec_walk {
	uint32_t off;        /* where the walk stopped */
	uint32_t events;     /* event records walked */
	uint32_t event_bytes;
	int damaged;         /* stopped at a record that makes no sense */
};

/* Walks whole records from `off` until `stop` (a record boundary the
 * caller expects) or the first that does not fit before `end`, applying
 * each to *c.  At most (end - off) / 8 steps. */
static inline void pt_rec_walk(const unsigned char *buf, uint32_t off, uint32_t stop,
                               uint32_t end, uint32_t max_data, struct pt_rec_ctx *c,
                               struct pt_rec_walk *w)
{
	struct pt_rec r;
	memset(w, 0, sizeof *w);
	while (off < stop && stop <= end) {
		if (pt_rec_at(buf, off, end, max_data, &r) == PT_RK_BAD) {
			w->damaged = end - off >= PT_REC_HDR_MIN;
			break;
		}
		pt_rec_apply(c, &r, buf + off);
		if (r.kind == PT_RK_EVENT) {
			w->events++;
			w->event_bytes += r.size;
		}
		off += r.size;
	}
	w->off = off;
}

/* A scan of records in private memory (pt_rec_scan): what it is given,
 * what it found. */
struct pt_rec_scan {
	uint64_t until;          /* given: events later than this raw time stay */
	struct pt_rec_ctx ctx;   /* given: at the start; found: after the records */
	uint32_t end;            /* where the records taken end */
	uint32_t later;          /* it stopped at an event later than `until` */
	uint32_t events;
	uint32_t max_id;         /* the highest event id */
	uint32_t images;         /* IMAGE records */
	uint64_t first_raw, last_raw; /* raw times of the first and last events */
};

/* One pass over the whole records of buf[off, end), a copy in private
 * memory (no racy reads): up to the first that does not decode, or the
 * first event later than s->until, applying each to s->ctx and noting the
 * events' times and ids. */
static inline void pt_rec_scan(const unsigned char *buf, uint32_t off, uint32_t end,
                               uint32_t max_data, struct pt_rec_scan *s)
{
	struct pt_rec r;
	s->events = s->max_id = s->later = s->images = 0;
	s->first_raw = s->last_raw = 0;
	while (end - off >= PT_REC_HDR_MIN) {
		uint64_t w0;
		memcpy(&w0, buf + off, sizeof w0);
		if (pt_rec_decode(w0, end - off, max_data, &r) == PT_RK_BAD)
			break;
		if (r.kind != PT_RK_EVENT) {
			pt_rec_apply(&s->ctx, &r, buf + off);
			s->images += r.kind == PT_RK_IMAGE;
			off += r.size;
			continue;
		}
		/* Later than `until`: base + delta > until, without a sum that a
		 * base written by the target could make wrap. */
		uint64_t base = s->ctx.base, dmax = s->until >= base ? s->until - base : 0;
		if (s->until < base || pt_rec_delta(w0) > dmax) {
			s->later = 1;
			break;
		}
		/* A run of events that differ from this one in their delta only
		 * decode alike: a comparison or two each. */
		uint64_t same = w0 & ~(uint64_t)PT_REC_DELTA_MASK, last = w0;
		uint32_t n = 1;
		for (off += r.size; end - off >= r.size; off += r.size, n++) {
			uint64_t w;
			memcpy(&w, buf + off, sizeof w);
			if ((w & ~(uint64_t)PT_REC_DELTA_MASK) != same)
				break;
			if (pt_rec_delta(w) > dmax) {
				s->later = 1;
				break;
			}
			last = w;
		}
		if (!s->events)
			s->first_raw = base + pt_rec_delta(w0);
		s->events += n;
		s->last_raw = base + pt_rec_delta(last);
		s->max_id = r.id > s->max_id ? r.id : s->max_id;
		if (r.hdr == PT_REC_HDR)
			memcpy(&s->ctx.pc, buf + off - r.size + 8, sizeof s->ctx.pc);
		if (s->later)
			break;
	}
	s->end = off;
}

/* The chunk header line a writer writes when it starts a chunk, copied
 * once. */
struct pt_chunk_id {
	uint64_t base;
	uint64_t seq;
	uint32_t lane;
	struct pt_owner owner;
};

static inline void pt_chunk_read_id(const struct pt_chunk *ch, struct pt_chunk_id *id)
{
	pt_racy_copy(&id->base, &ch->base, sizeof id->base);
	pt_racy_copy(&id->seq, &ch->seq, sizeof id->seq);
	pt_racy_copy(&id->lane, &ch->lane, sizeof id->lane);
	pt_racy_copy(&id->owner, &ch->owner, sizeof id->owner);
	id->owner.comm[PT_COMM_SIZE - 1] = '\0';
}

/* Whether a reader at sequence number `lane_seq` of lane `lane` may enter
 * a chunk whose header says `id`, the chunk having been entered last with
 * sequence number `chunk_seq` (0: never). */
static inline int pt_chunk_identity(const struct pt_chunk_id *id, uint32_t lane, uint64_t lane_seq,
                                    uint64_t chunk_seq)
{
	if (id->lane != lane || id->seq == 0)
		return 0;
	return id->seq > lane_seq && id->seq > chunk_seq;
}

#endif
