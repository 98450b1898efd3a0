/* SPDX-License-Identifier: MIT */
/*
 * The version 3 log's gather and merge (logread.c reads the blocks).
 *
 * The STAGES and KEEPER blocks of one drain are gathered (the window they
 * lie in is kept and a fresh one takes its place, so nothing is copied),
 * checked whole, then merged by time: each STAGES section and each KEEPER
 * block is a source decoded lazily, the sources in a binary heap; the
 * source in front keeps delivering without a heap operation while its next
 * event is still ahead of the runner-up's.  No lock, no allocation and no
 * system call per event.
 *
 * The merge looks one drain ahead: an event whose writer took its time
 * before a drain began but committed it after the keeper passed its lane
 * lands in the next drain, after newer events of this one.  So the heap
 * holds the sources of the oldest drain not yet delivered and of the next
 * one; when the oldest has none left, the next becomes the oldest (its
 * ERRORs first) and the drain after it is gathered and joins.  Two drains
 * are held at a time, each within the drain bound.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "logread_internal.h"

/* ---- version 3: gathering a drain ------------------------------------------ */

/* Drain k is merged (none of its sources is in the heap): the windows
 * only it held go back to the pool, its sources away. */
static void drain_release(struct pt_logr *r, uint32_t k)
{
	pt_logr_unpin(r, k);
	struct drain *d = &r->m.dr[k];
	d->nsrc = d->ncal = d->nkctx = d->live = 0;
	d->bytes = d->errors = d->number = 0;
	d->used = d->joined = 0;
}

void pt_logm_reset(struct pt_logr *r)
{
	r->m.nheap = r->m.nlater = 0;
	r->m.cur = NULL;
	r->m.root_moved = 0;
	drain_release(r, 0);
	drain_release(r, 1);
	r->m.old = 0;
	r->m.started = r->m.at_first = 0;
	r->m.next_order = 0;
	r->m.drain_errors = r->m.carried_errors = 0;
	r->m.resume_pending = 0;
	r->m.pend = 0;
}

static int grow(void **arr, uint32_t *cap, uint32_t need, size_t elem)
{
	if (need <= *cap)
		return 1;
	uint64_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	if (n > UINT32_MAX)
		return 0;
	void *grown = realloc(*arr, (size_t)n * elem);
	if (!grown)
		return 0;
	*arr = grown;
	*cap = (uint32_t)n;
	return 1;
}

static struct src *new_src(struct pt_logr *r, struct drain *d, uint32_t kind,
                           const unsigned char *p, const unsigned char *end)
{
	if (!grow((void **)&d->src, &d->src_cap, d->nsrc + 1, sizeof *d->src))
		return NULL;
	struct src *s = &d->src[d->nsrc++];
	memset(s, 0, sizeof *s);
	s->p = p;
	s->end = end;
	s->stage_end = kind == S_STAGES ? (uintptr_t)end : 0;
	s->kind = kind;
	s->slot = (uint32_t)(d - r->m.dr);
	s->order = r->m.next_order++;
	return s;
}

/* The bits of a record's first word that make its kind and size: same
 * address, id, data length. */
#define REC_SHAPE 0x7fffffff80000000ull

/* The records of a STAGES section: an OWNER first, then events (user ids,
 * data within the log's limit) and TIME and OWNER records, filling it
 * exactly.  An event shaped as the last one checked is good without a
 * second look, and its size is known before its word is read: a run of
 * alike events is checked at the speed of the loads, not of their chain. */
static int section_ok(const unsigned char *p, uint32_t len, uint32_t max_data, int cpu_recs)
{
	if (len < PT_LOG_OWNER_REC || pt_rec_id(ld64(p)) != PT_LOG_STAGE_OWNER)
		return 0;
	uint64_t shape = 1; /* no word has this shape */
	uint32_t off = 0, shape_size = 0;
	while (off < len) {
		uint32_t left = len - off;
		/* Four at a time: what four turns of the test below would
		 * find, with one branch. */
		if (likely(left >= 4 * (uint64_t)shape_size)) {
			const unsigned char *q = p + off;
			uint64_t differ = ((ld64(q) & REC_SHAPE) ^ shape) |
			                  ((ld64(q + shape_size) & REC_SHAPE) ^ shape) |
			                  ((ld64(q + 2 * shape_size) & REC_SHAPE) ^ shape) |
			                  ((ld64(q + 3 * shape_size) & REC_SHAPE) ^ shape);
			if (likely(!differ)) {
				off += 4 * shape_size;
				continue;
			}
		}
		uint64_t w0 = ld64(p + off); /* len and off are multiples of 8 */
		if (likely((w0 & REC_SHAPE) == shape && shape_size <= left)) {
			off += shape_size;
			continue;
		}
		uint32_t id = pt_rec_id(w0), dlen = pt_rec_len(w0);
		uint64_t size = pt_rec_size(w0);
		if (id >= PT_LOG_USER_FIRST) {
			if (dlen > max_data || size > left)
				return 0;
			shape = w0 & REC_SHAPE;
			shape_size = (uint32_t)size;
		} else if ((w0 & PT_REC_SAMEPC) || size > left ||
		           !((id == PT_LOG_STAGE_TIME && dlen == 8) ||
		             (id == PT_LOG_STAGE_OWNER && dlen == sizeof(struct pt_log_owner)) ||
		             (id == PT_LOG_STAGE_CPU && dlen == 8 && cpu_recs))) {
			return 0;
		}
		off += (uint32_t)size;
	}
	return 1;
}

/* A STAGES payload, checked whole; its sections become sources of d. */
static int add_stages(struct pt_logr *r, struct drain *d, const unsigned char *pl, uint32_t len)
{
	struct pt_log_stages pre;
	if (len < sizeof pre)
		return EBADMSG;
	memcpy(&pre, pl, sizeof pre);
	if (pre.ncal < 1 || pre.ncal > PT_LOG_MAX_CAL || pre.nsections < 1 ||
	    sizeof pre + (uint64_t)pre.ncal * sizeof(struct pt_log_calpoint) > len)
		return EBADMSG;
	if (!grow((void **)&d->cal, &d->cal_cap, d->ncal + pre.ncal, sizeof *d->cal))
		return ENOMEM;
	struct pt_log_calpoint *cal = &d->cal[d->ncal];
	memcpy(cal, pl + sizeof pre, pre.ncal * sizeof *cal);
	if (!pt_log_cal_ok(cal, pre.ncal))
		return EBADMSG;
	uint32_t off = (uint32_t)(sizeof pre + pre.ncal * sizeof *cal), first = d->nsrc;
	for (uint32_t i = 0; i < pre.nsections; i++) {
		struct pt_log_section sec;
		if (len - off < sizeof sec)
			goto bad;
		memcpy(&sec, pl + off, sizeof sec);
		off += sizeof sec;
		if (sec.len % 8 || sec.len > len - off ||
		    !section_ok(pl + off, sec.len, r->max_data, r->hdr.version >= 4))
			goto bad;
		struct src *s = new_src(r, d, S_STAGES, pl + off, pl + off + sec.len);
		if (!s) {
			d->nsrc = first;
			return ENOMEM;
		}
		s->pc = sec.pc;
		s->at = d->ncal;
		s->ncal = pre.ncal;
		off += sec.len;
	}
	if (off != len)
		goto bad;
	d->ncal += pre.ncal;
	return 0;
bad:
	d->nsrc = first;
	return EBADMSG;
}

/* The length of the good records of a KEEPER payload (those before any
 * damage: EVENTS rules, system events, RESUME), and its contexts. */
static uint32_t keeper_good(const struct pt_logr *r, const unsigned char *pl, uint32_t len,
                            uint32_t *nctx)
{
	uint32_t off = PT_LOG_KEEPER_PREFIX;
	*nctx = 0;
	while (off < len) {
		uint32_t left = len - off;
		if (left < PT_REC_HDR_MIN)
			break;
		uint64_t w0 = ld64(pl + off);
		uint32_t id = pt_rec_id(w0), dlen = pt_rec_len(w0);
		uint64_t size = pt_rec_size(w0);
		if (size > left)
			break;
		if ((id >= 1 && id <= 8) || id >= PT_LOG_USER_FIRST) {
			if (dlen > r->max_data || !*nctx)
				break;
		} else if (id < PT_REC_META_FIRST || id > PT_REC_RESUME || (w0 & PT_REC_SAMEPC)) {
			break;
		} else if (id == PT_REC_TIME) {
			if (dlen != 8)
				break;
		} else if (id == PT_REC_CONTEXT) {
			uint32_t k = dlen == sizeof(struct pt_log_ctxrec) ? ld32(pl + off + 48) : UINT32_MAX;
			if (k > *nctx || k >= r->max_ctx)
				break;
			*nctx += k == *nctx;
		} else if (id == PT_REC_SWITCH) {
			if (dlen || ld64(pl + off + 8) >= *nctx)
				break;
		} else if (dlen || ld64(pl + off + 8) || !*nctx) { /* RESUME */
			break;
		}
		off += (uint32_t)size;
	}
	return off;
}

/* A KEEPER payload: a source of d of its good records; damage after
 * them is an error of the drain. */
static int add_keeper(struct pt_logr *r, struct drain *d, const unsigned char *pl, uint32_t len,
                      uint64_t ts_base)
{
	uint32_t nctx, good = keeper_good(r, pl, len, &nctx);
	if (!grow((void **)&d->kctx, &d->kctx_cap, d->nkctx + nctx, sizeof *d->kctx))
		return ENOMEM;
	struct src *s = new_src(r, d, S_KEEPER, pl + PT_LOG_KEEPER_PREFIX, pl + good);
	if (!s)
		return ENOMEM;
	s->base = ts_base;
	s->at = d->nkctx;
	d->nkctx += nctx;
	return good == len ? 0 : EBADMSG;
}

/* Adds a block to drain k; damage in it is one error of the drain. */
static void add_block(struct pt_logr *r, uint32_t k, const unsigned char *blk,
                      const struct pt_log_block *b)
{
	struct drain *d = &r->m.dr[k];
	const unsigned char *pl = blk + PT_LOG_BLOCK_HDR;
	uint32_t before = d->nsrc;
	pt_logr_pin(r, k);
	int err = b->type == PT_LOG_STAGES ? add_stages(r, d, pl, b->payload_len)
	                                   : add_keeper(r, d, pl, b->payload_len, b->ts_base);
	d->bytes += b->payload_len + (uint64_t)(d->nsrc - before) * sizeof(struct src);
	if (err)
		d->errors++;
}

/* Whether drain d, holding blocks already, ends before this block (the
 * drain number changes, or the drain's memory would pass its bound). */
static int drain_ends(const struct pt_logr *r, uint32_t k, uint64_t drain,
                      const struct pt_log_block *b, uint64_t number)
{
	return number != drain || number == 0 ||
	       r->m.dr[k].bytes + b->payload_len > r->m.drain_cap ||
	       (uint64_t)r->f.held_by[k] * r->f.win_cap > r->m.drain_cap;
}

/* Gathers the next drain of the log into r->m.dr[k] (released): its blocks,
 * their sources, its errors.  Damage among the drain's blocks is an error
 * of the drain; damage after its last block, an error between it and the
 * next.  0 when the log has nothing more. */
static int gather(struct pt_logr *r, uint32_t k)
{
	struct drain *dr = &r->m.dr[k];
	uint64_t drain = 0, after = 0; /* errors since the drain's last block */
	int have = 0;
	dr->errors = r->m.carried_errors;
	r->m.carried_errors = 0;
	for (;;) {
		const unsigned char *blk = NULL;
		struct pt_log_block b;
		int res = B_BLOCK;
		if (r->m.pend) {
			blk = r->m.pend_blk;
			b = r->m.pend_b;
			r->m.pend = 0;
		} else {
			if (!pt_logr_spare_ready(r))
				break; /* no memory for more: the drain is cut here */
			res = pt_logr_next_any(r, &blk, &b);
		}
		if (res == B_END || (res == B_BLOCK && b.type == PT_LOG_END))
			break;
		if (res == B_DAMAGE || !blk || ((b.type == PT_LOG_STAGES || b.type == PT_LOG_KEEPER) &&
		                                b.payload_len < sizeof(uint64_t))) {
			after++;
			continue;
		}
		if (b.type != PT_LOG_STAGES && b.type != PT_LOG_KEEPER)
			continue; /* names were read at open; tables are not events */
		uint64_t number = ld64(blk + PT_LOG_BLOCK_HDR);
		if (have && drain_ends(r, k, drain, &b, number)) {
			r->m.pend = 1;
			r->m.pend_blk = blk;
			r->m.pend_b = b;
			break;
		}
		have = 1;
		drain = dr->number = number;
		dr->errors += after;
		after = 0;
		add_block(r, k, blk, &b);
	}
	if (have)
		r->m.carried_errors = after;
	else
		dr->errors += after;
	dr->used = have || dr->errors;
	return dr->used;
}

/* ---- version 3: merging a drain -------------------------------------------- */

/* The segment of s's calibration that holds raw, found when raw leaves
 * the one in use, and the part of it where the time is the segment's line
 * with no clamp (raw at or after the segment's point, the sum below
 * UINT64_MAX). */
static void find_segment(struct src *s, uint64_t raw)
{
	const struct pt_log_calpoint *c = s->cal;
	uint32_t n = s->ncal, i = 1;
	s->seg = pt_log_cal_find(c, n, raw);
	while (i < n - 1 && raw >= c[i].raw)
		i++;
	s->seg_lo = n == 1 || i == 1 ? 0 : c[i - 1].raw;
	s->seg_hi = n == 1 || i == n - 1 ? UINT64_MAX : c[i].raw - 1;
	/* the largest d with (d * mult) >> SHIFT <= UINT64_MAX - real */
	unsigned __int128 room = ((unsigned __int128)(UINT64_MAX - s->seg.real) + 1) << PT_LOG_CAL_SHIFT;
	unsigned __int128 d = s->seg.mult ? (room - 1) / s->seg.mult : ~(unsigned __int128)0;
	uint64_t reach = UINT64_MAX - s->seg.raw;
	uint64_t fast_hi = s->seg.raw + (d < reach ? (uint64_t)d : reach);
	s->fast_lo = s->seg_lo > s->seg.raw ? s->seg_lo : s->seg.raw;
	s->fast_hi = s->seg_hi < fast_hi ? s->seg_hi : fast_hi;
}

/* stage_time outside the fast range: the segment found again if raw
 * left it, and the calibration with its clamps. */
__attribute__((noinline)) uint64_t pt_logm_stage_time_slow(struct src *s, uint64_t raw)
{
	if (raw < s->seg_lo || raw > s->seg_hi)
		find_segment(s, raw);
	return pt_log_cal_apply(&s->seg, raw);
}

/* Moves s to its next event (or RESUME), applying the records before it;
 * 0 when it has none left. */
static int src_advance(struct src *s)
{
	while (s->p < s->end) {
		const unsigned char *rec = s->p;
		uint64_t w0 = ld64(rec);
		uint32_t id = pt_rec_id(w0);
		if (s->kind == S_STAGES) {
			if (id >= PT_LOG_USER_FIRST) {
				s->head = stage_time(s, s->base + pt_rec_delta(w0));
				return 1;
			}
			/* TIME or OWNER: a new base, and the next event carries
			 * its address; CPU: a CPU only */
			if (id == PT_LOG_STAGE_CPU) {
				s->cpu = pt_log_cpu_checked(ld32(rec + PT_REC_HDR));
			} else {
				s->base = ld64(rec + PT_REC_HDR);
				s->pc = 0;
				if (id == PT_LOG_STAGE_OWNER) {
					s->ctx = rec + PT_REC_HDR + 8;
					s->cpu = PT_LOG_CPU_NONE;
				}
			}
		} else {
			uint64_t t = s->base + pt_rec_delta(w0);
			s->resume = id == PT_REC_RESUME;
			if (id < PT_REC_META_FIRST || id >= PT_LOG_USER_FIRST || s->resume) {
				s->head = t;
				return 1;
			}
			if (id == PT_REC_TIME) {
				s->base = ld64(rec + PT_REC_HDR);
			} else if (id == PT_REC_CONTEXT) {
				uint32_t k = ld32(rec + PT_REC_HDR + sizeof(struct pt_log_ctx));
				s->ctx = s->kctx[k] = rec + PT_REC_HDR;
				s->base = t;
			} else { /* SWITCH */
				s->ctx = s->kctx[ld64(rec + 8)];
				s->base = t;
			}
		}
		s->p = rec + pt_rec_size(w0);
	}
	return 0;
}

/* A source's first event: a section starts with its OWNER, after which
 * the address is the section's. */
static int src_start(struct src *s)
{
	s->seg_lo = s->fast_lo = 1;
	s->seg_hi = s->fast_hi = 0; /* no segment yet */
	s->cpu = PT_LOG_CPU_NONE;
	if (s->kind == S_STAGES) {
		s->base = ld64(s->p + PT_REC_HDR);
		s->ctx = s->p + PT_REC_HDR + 8;
		s->p += PT_LOG_OWNER_REC;
	}
	return src_advance(s);
}

static inline int src_before(const struct src *a, const struct src *b)
{
	return a->head < b->head || (a->head == b->head && a->order < b->order);
}

static void sift_down_in(struct src **h, uint32_t n, uint32_t i)
{
	struct src *x = h[i];
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && src_before(h[c + 1], h[c]))
			c++;
		if (!src_before(h[c], x))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = x;
}

static void sift_down(struct pt_logm *m, uint32_t i) { sift_down_in(m->heap, m->nheap, i); }

/*
 * The sources whose first event comes before the heap's root move from
 * the heap of later ones into the merge's heap, so that its root is the first of
 * all.  A later source's key (its first event's time, its order) does
 * not change until it moves, so the merge delivers what one heap of every
 * source would, in the same order.
 */
static void reach(struct pt_logm *m)
{
	while (m->nlater && (!m->nheap || src_before(m->later[0], m->heap[0]))) {
		struct src *s = m->later[0];
		m->later[0] = m->later[--m->nlater];
		if (m->nlater)
			sift_down_in(m->later, m->nlater, 0);
		uint32_t i = m->nheap++;
		while (i && src_before(s, m->heap[(i - 1) / 2])) {
			m->heap[i] = m->heap[(i - 1) / 2];
			i = (i - 1) / 2;
		}
		m->heap[i] = s;
	}
}

/* Drain k, gathered, joins the merge: its sources that have events go
 * into the heap, beside those of the drain before it still there.  No
 * memory for the heap: the drain is one error. */
static void join(struct pt_logr *r, uint32_t k)
{
	struct drain *d = &r->m.dr[k];
	d->joined = 1;
	uint32_t all = r->m.nheap + r->m.nlater + d->nsrc;
	if (all < d->nsrc || !grow((void **)&r->m.heap, &r->m.heap_cap, all, sizeof *r->m.heap) ||
	    !grow((void **)&r->m.later, &r->m.later_cap, r->m.nlater + d->nsrc, sizeof *r->m.later)) {
		d->nsrc = 0;
		d->errors++;
		return;
	}
	for (uint32_t i = 0; i < d->nsrc; i++) {
		struct src *s = &d->src[i];
		/* The arrays are complete: where the source's part of them is
		 * (none when no KEEPER block of the drain defines a context). */
		if (s->kind == S_STAGES)
			s->cal = d->cal + s->at;
		else if (d->kctx)
			s->kctx = d->kctx + s->at;
		s->start = s->p;
		s->start_base = s->base;
		s->start_pc = s->pc;
		if (src_start(s)) {
			r->m.later[r->m.nlater++] = s;
			d->live++;
		}
	}
	for (uint32_t i = r->m.nlater / 2; i-- > 0;)
		sift_down_in(r->m.later, r->m.nlater, i);
	reach(&r->m);
}

int pt_logm_restart(struct pt_logr *r)
{
	struct pt_logm *m = &r->m;
	uint32_t all = m->dr[0].nsrc + m->dr[1].nsrc;
	/* every source of both drains may wait at once now, more than when
	 * the second joined (some of the first had been reached) */
	if (!m->at_first || all < m->dr[0].nsrc ||
	    !grow((void **)&m->later, &m->later_cap, all, sizeof *m->later) ||
	    !grow((void **)&m->heap, &m->heap_cap, all, sizeof *m->heap))
		return 0;
	m->nheap = m->nlater = 0;
	m->cur = NULL;
	m->root_moved = m->resume_pending = 0;
	m->drain_errors = m->first_errors;
	for (uint32_t k = 0; k < 2; k++) {
		struct drain *d = &m->dr[k];
		if (!d->joined)
			continue;
		d->live = 0;
		for (uint32_t i = 0; i < d->nsrc; i++) {
			struct src *s = &d->src[i];
			s->p = s->start;
			s->base = s->start_base;
			s->pc = s->start_pc;
			s->ctx = NULL;
			s->resume = 0;
			if (src_start(s)) {
				m->later[m->nlater++] = s;
				d->live++;
			}
		}
	}
	for (uint32_t i = m->nlater / 2; i-- > 0;)
		sift_down_in(m->later, m->nlater, i);
	reach(m);
	return 1;
}

/* The root delivered and moved on: back into place, or out when done. */
static void fix_root(struct pt_logm *m)
{
	struct src *s = m->heap[0];
	if (s->p >= s->end) {
		m->dr[s->slot].live--;
		m->heap[0] = m->heap[--m->nheap];
	}
	if (m->nheap)
		sift_down(m, 0);
	reach(m);
	m->root_moved = 0;
}

/*
 * The oldest drain has delivered its events (or there is none yet): the
 * next one becomes the oldest, its ERRORs due at once, and the drain after
 * it is gathered and joins the merge, so that two drains are merged at a
 * time.  0 when no drain is left.
 */
static int next_drain(struct pt_logr *r)
{
	uint32_t k = r->m.old;
	if (r->m.dr[k].used) {
		drain_release(r, k);
		k = r->m.old ^= 1;
		r->m.at_first = 0;
	} else if (!r->m.started) {
		r->m.started = r->m.at_first = 1;
		if (gather(r, k))
			join(r, k);
	}
	struct drain *d = &r->m.dr[k];
	if (!d->used)
		return 0;
	if (!d->joined)
		join(r, k); /* drain 0, or next to one: it waited */
	if (r->m.at_first)
		r->m.first_errors = r->m.drain_errors + d->errors;
	r->m.drain_errors += d->errors;
	d->errors = 0;
	/* Drain 0 (blocks written outside any drain) is merged with no other:
	 * its events come in the order given. */
	if (gather(r, k ^ 1) && d->number && r->m.dr[k ^ 1].number)
		join(r, k ^ 1);
	return 1;
}

/* The runner-up of the root s: what s's next events are compared with
 * (in the heap or later). */
static void set_limit(struct pt_logm *m, const struct src *s)
{
	const struct src *run = NULL;
	uint32_t slot = 0;
	if (m->nheap > 1) {
		run = m->heap[1];
		slot = 1;
	}
	if (m->nheap > 2 && src_before(m->heap[2], run)) {
		run = m->heap[2];
		slot = 2;
	}
	if (m->nlater && (!run || src_before(m->later[0], run))) {
		run = m->later[0];
		slot = 0;
	}
	m->limit = run ? run->head : UINT64_MAX;
	m->tie_first = run ? s->order < run->order : 1;
	m->run_slot = slot;
}

/* pt_logm_switch in a larger heap: the root sifted down.  Apart, so that
 * the swap of two or three sources saves no register. */
__attribute__((noinline)) static int switch_by_sift(struct pt_logm *m)
{
	sift_down(m, 0);
	reach(m);
	struct src *s = m->heap[0];
	if (s->resume || m->resume_pending) {
		m->cur = NULL;
		return 1;
	}
	set_limit(m, s);
	m->cur = s;
	return 1;
}

/* What the next pt_logm_next would do after take_head's source passed the
 * runner-up, done at once, so that the next event is taken in front again
 * (the sources of two writers' lanes interleave event by event): no
 * source ended, so the oldest drain still has some and no error is due; a
 * RESUME at the new root is left to pt_logm_next. */
__attribute__((noinline)) int pt_logm_switch(struct pt_logm *m)
{
	struct src **h = m->heap, *s = h[0];
	uint32_t n = m->nheap, c = m->run_slot;
	/* A heap of two or three (the lanes of two writers taking turns, and
	 * the keeper's) whose runner-up is a child: that child comes before s
	 * (s passed it) and before every later source (it was chosen over
	 * them), so it takes s's place; both children are leaves. */
	if ((n == 2 || n == 3) && c) {
		struct src *o = h[c], *l = m->nlater ? m->later[0] : NULL;
		h[0] = o;
		h[c] = s;
		if (o->resume || m->resume_pending) {
			m->cur = NULL;
			return 1;
		}
		struct src *run = h[1];
		uint32_t slot = 1;
		if (n == 3 && src_before(h[2], run)) {
			run = h[2];
			slot = 2;
		}
		if (l && src_before(l, run)) {
			run = l;
			slot = 0;
		}
		m->limit = run->head;
		m->tie_first = o->order < run->order;
		m->run_slot = slot;
		m->cur = o;
		return 1;
	}
	return switch_by_sift(m);
}

/* s delivered the event of time ts and its next record is not a plain
 * event: applies what comes before its next one; s leaves the front
 * unless it is a section whose next event is still ahead. */
__attribute__((noinline)) int pt_logm_src_moved(struct pt_logm *m, struct src *s, uint64_t ts)
{
	if (s->kind == S_KEEPER)
		s->base = ts;
	int more = src_advance(s);
	if (!more)
		s->p = s->end;
	if (!more || s->kind != S_STAGES || s->head > m->limit ||
	    (s->head == m->limit && !m->tie_first)) {
		m->cur = NULL;
		m->root_moved = 1;
	}
	return 1;
}

static int deliver_resume(struct pt_logr *r, uint64_t ts, const struct out *o, size_t *data_len)
{
	emit(o, POSIX_TRACE_RESUME, 0, (const unsigned char *)&r->m.resume_ctx, 0, ts, 0,
	     PT_LOG_CPU_NONE);
	*data_len = 0;
	r->m.resume_pending = 0;
	return 1;
}

/* Version 3: the events of the oldest drain and the next one by time, a
 * drain's errors first when it becomes the oldest, RESUME where a RESUME
 * record said; then the drain after them joins. */
int pt_logm_next(struct pt_logr *r, const struct out *o, void *data, size_t num_bytes,
                 size_t *data_len)
{
	for (;;) {
		if (r->m.drain_errors) {
			r->m.drain_errors--;
			return pt_logr_damage(r, o, data, num_bytes, data_len);
		}
		if (r->m.root_moved)
			fix_root(&r->m);
		if (!r->m.dr[r->m.old].live) {
			if (!next_drain(r))
				return 0;
			continue;
		}
		struct src *s = r->m.heap[0];
		if (s->resume) {
			r->m.resume_pending = 1;
			memcpy(&r->m.resume_ctx, s->ctx, sizeof r->m.resume_ctx);
			r->m.resume_ctx.comm[sizeof r->m.resume_ctx.comm - 1] = '\0';
			s->base = s->head;
			s->p += PT_REC_HDR;
			s->resume = 0;
			if (!src_advance(s))
				s->p = s->end;
			r->m.root_moved = 1;
			continue;
		}
		if (r->m.resume_pending)
			return deliver_resume(r, s->head, o, data_len);
		set_limit(&r->m, s);
		r->m.cur = s;
		return take_head(r, s, o, data, num_bytes, data_len);
	}
}
