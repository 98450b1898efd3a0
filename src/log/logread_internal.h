/* SPDX-License-Identifier: MIT */
/*
 * The log reader's insides, shared by its two files and by no one else
 * (src/log/log.h is the log's face): the reader's state, one part per
 * concern; what logread.c gives the merge (the next block, windows held
 * for a drain, the damage event); the version 3 merge of logmerge.c.
 * Inline here: what the per-event path of both files runs (emit,
 * copy_out, take_head).
 */
#ifndef PT_LOGREAD_INTERNAL_H
#define PT_LOGREAD_INTERNAL_H

#include <stdint.h>
#include <string.h>
#include <posixtrace.h>
#include <trace.h>
#include "crc32c.h"
#include "logfmt.h"
#include "logimages.h"
#include "../recword.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

/* A fuzzer build skips the checksums, so that mutated logs reach the
 * parsers behind them. */
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
#define CRC_OK(stored, data, len) ((void)(stored), (void)(data), (void)(len), 1)
#else
#define CRC_OK(stored, data, len) ((stored) == pt_crc32c(0, (data), (len)))
#endif

/* What the next block is: a block, damage before it, the end. */
enum { B_BLOCK, B_DAMAGE, B_END };
enum { E_BLOCK, E_DAMAGE };

/* Version 3: the payloads of one drain (their memory counted in: the
 * sources' index and the windows held for them) stay within this; two
 * drains are held at a time (the one delivered and the next). */
#define DRAIN_MAX (256ull << 20)
/* Windows kept for the next drains once one is merged; more are freed. */
#define POOL_KEEP 32u

enum { S_STAGES, S_KEEPER };


/*
 * A source of a drain's merge: one STAGES section or one KEEPER block,
 * checked whole when gathered, then decoded as the merge asks.  p is the
 * record the source delivers next (an event, or a KEEPER's RESUME), head
 * its time; the records before it were applied.
 */
struct src {
	const unsigned char *p, *end;
	uintptr_t stage_end;        /* STAGES: end; KEEPER: 0 (the front's one test) */
	uint64_t head;
	uint64_t base;              /* STAGES: the raw base; KEEPER: the current time */
	uint64_t pc;                /* the address a same-address event repeats */
	const unsigned char *ctx;   /* 32 bytes of struct pt_log_ctx in the payload */
	uint32_t cpu;               /* STAGES: the current CPU, checked; PT_LOG_CPU_NONE */
	struct pt_log_calseg seg;   /* STAGES: the calibration segment of raw in */
	uint64_t seg_lo, seg_hi;    /* ... [seg_lo, seg_hi] */
	uint64_t fast_lo, fast_hi;  /* where in it the time is seg's line with no
	                             * clamp: raw >= seg.raw, no saturation */
	uint64_t order;             /* equal times: drain, then block, then section order */
	const struct pt_log_calpoint *cal; /* STAGES: its block's points */
	const unsigned char **kctx; /* KEEPER: its block's contexts */
	uint32_t at;                /* where cal or kctx start in the drain's arrays */
	uint32_t ncal;
	uint32_t kind;              /* S_STAGES, S_KEEPER */
	uint32_t resume;            /* KEEPER: p is a RESUME record */
	uint32_t slot;              /* the drain it belongs to (r->m.dr) */
	/* where it starts, as gathered: a rewind before the first drains are
	 * released starts it again (pt_logm_restart) */
	const unsigned char *start;
	uint64_t start_base, start_pc;
};

/*
 * A drain gathered: its sources, their calibration points and KEEPER
 * contexts.  The sources point into the payloads, in windows held for the
 * drain (or the memory of an unseekable log), until every source has
 * delivered its events; the arrays are not resized meanwhile.
 */
struct drain {
	struct src *src;
	struct pt_log_calpoint *cal;
	const unsigned char **kctx;
	uint32_t nsrc, src_cap, ncal, cal_cap, nkctx, kctx_cap;
	uint64_t bytes;   /* payloads and sources, for the bound */
	uint64_t errors;  /* ERRORs due when it becomes the oldest drain */
	uint32_t live;    /* its sources in the merge */
	uint64_t number;  /* its blocks' drain number; 0: merged with no other */
	int used;         /* gathered, not yet released */
	int joined;       /* its sources are in the merge */
};

/* A window holding blocks of the drains in owners (a bit per r->m.dr). */
struct held {
	unsigned char *buf;
	uint32_t owners;
};

/* Ring log: what reading delivers, in order. */
struct ring_entry {
	uint64_t seq;
	uint64_t off;
	uint32_t len;
	uint32_t kind; /* E_BLOCK, E_DAMAGE */
};

/* The file and the windows it is read through (logread.c). */
struct logr_file {
	int fd;
	unsigned char *mem;       /* unseekable log, read whole */
	uint64_t size;            /* bytes of the log */
	unsigned char *win;
	size_t win_cap, win_len, want;
	uint64_t win_off;
	uint64_t ext_lo, ext_hi;  /* a stretch of the file known to hold data */
	/* The current window holds blocks of the drains in win_owners
	 * (pinned when any); held ones hold earlier blocks of them; spare
	 * replaces a pinned one. */
	uint32_t win_owners;
	struct held *held;
	unsigned char **pool, *spare;
	uint32_t nheld, held_cap, npool;
	uint32_t held_by[2];      /* windows held for each drain */
};

/* A linear log's walk, and the CRC work of the pass: payloads found bad,
 * data gone past (payload_ok, logread.c). */
struct logr_walk {
	uint64_t pos, expect;
	int walk_done;
	uint64_t crc_spent, crc_credit;
};

/* A ring log's blocks in delivery order. */
struct logr_ring {
	struct ring_entry *e;
	size_t n, cur;
};

/* Version 2: the EVENTS block being decoded. */
struct logr_v2 {
	const unsigned char *p, *end;
	uint64_t ts;
	uint64_t pc;              /* the block's previous event's address */
	const struct pt_log_ctx *ctx;
	struct pt_log_ctx *ctxs;
	uint32_t nctx;
	int at_end;
};

/* Version 3: the oldest drain (dr[old]) and the next one, merged
 * (logmerge.c). */
struct pt_logm {
	struct src *cur;          /* in front and ahead of the runner-up: no heap work */
	uint64_t limit;           /* the runner-up's head ... */
	int tie_first;            /* ... and whether cur goes first at an equal time */
	uint32_t run_slot;        /* where the runner-up is: heap[1] or heap[2], 0 elsewhere */
	int root_moved;           /* the heap's root delivered and moved on */
	struct drain dr[2];
	uint32_t old;
	int started;              /* the pass has gathered its first drain */
	int at_first;             /* no drain released since: a rewind restarts the sources */
	uint64_t first_errors;    /* the first drain's errors, due first */
	uint64_t next_order;      /* of the next source gathered */
	struct src **heap;        /* the sources that have delivered or are due */
	uint32_t nheap, heap_cap;
	/* Sources not yet reached: their first event is after the heap's root.
	 * A heap of its own (keys fixed until a source is reached), so that
	 * the merge's heap holds the few sources that overlap in time, not all
	 * of two drains' sections. */
	struct src **later;
	uint32_t nlater, later_cap;
	uint64_t drain_errors;    /* ERROR events to deliver before anything else */
	uint64_t carried_errors;  /* damage after a drain: first in the next one */
	uint64_t drain_cap;
	int resume_pending;
	struct pt_log_ctx resume_ctx;
	/* a block read past the drain's end: the next drain's first */
	int pend;
	const unsigned char *pend_blk;
	struct pt_log_block pend_b;
};

/* What the log says besides its events: names, own ids, images. */
struct logr_meta {
	uint32_t nnames;
	char names[TRACE_USER_EVENT_MAX][PT_LOG_NAME_SIZE];
	/* PIDS entries, sorted by (pid, tid) once the log is open */
	struct pt_log_pid_entry *pids;
	uint32_t npids, pids_cap;
	/* the last writer looked up, and its entry (NULL: none): a writer's
	 * events come in runs */
	int32_t memo_pid, memo_tid;
	int memo_set;
	const struct pt_log_pid_entry *memo;
	/* IMAGES entries (logimages.h) */
	struct pt_log_images images;
};

/* The writer's context of the event pt_logr_next_posix gave last (32
 * bytes of struct pt_log_ctx, its name not yet terminated; NULL before the
 * first) and its CPU.  ctx points where the event's record found it (a
 * section's OWNER, a KEEPER context, the version 2 table), which stays
 * until the next read; a rewind, which may let windows go, copies it into
 * kept first.  The second: the time's seconds, kept for the next event
 * (sec_ns = sec * 10^9: an event in the same second needs no division). */
struct logr_last {
	const unsigned char *ctx;
	uint32_t cpu;
	unsigned char kept[32];
	uint64_t sec_ns, sec;
};

/* The reader: the log's header and status, and one part per concern. */
struct pt_logr {
	struct pt_logm m;         /* first: the per-event path starts here */
	struct logr_last last;
	struct logr_v2 v2;
	uint64_t last_good_ts;    /* the time of a damage event */
	struct pt_log_header hdr;
	struct pt_log_host host;  /* version 5: checked at open; older: zeros */
	struct pt_log_status status;
	struct pt_log_waits waits;
	uint64_t data_off;
	uint32_t block_size, max_data;
	uint32_t max_ctx;         /* contexts a block can define */
	int closed;
	uint64_t damaged, damaged_max;
	struct logr_file f;
	struct logr_walk w;
	struct logr_ring ring;
	struct logr_meta meta;
};

static inline uint64_t ld64(const unsigned char *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

static inline uint32_t ld32(const unsigned char *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof v);
	return v;
}

/* Where an event goes: the reader's own record (pt_logr_next) or the
 * caller's posix_trace_event_info and the reader's last (pt_logr_next_posix). */
struct out {
	struct pt_log_event *ev;
	struct posix_trace_event_info *info;
	struct logr_last *last;
};

/* ts as seconds and nanoseconds; the second of the event before is
 * reused while the events stay in it. */
__attribute__((always_inline)) static inline void split_time(struct logr_last *l, uint64_t ts,
                                                             struct timespec *out)
{
	uint64_t in_sec = ts - l->sec_ns;
	if (unlikely(in_sec >= 1000000000u)) {
		l->sec = ts / 1000000000u;
		l->sec_ns = l->sec * 1000000000u;
		in_sec = ts - l->sec_ns;
	}
	out->tv_sec = (time_t)l->sec;
	out->tv_nsec = (long)in_sec;
}

/* Fills the output from the event's parts; ctx is the 32 bytes of a
 * struct pt_log_ctx, its name not yet terminated.  Field by field: the
 * stores match the loads that follow them. */
__attribute__((always_inline)) static inline void emit(const struct out *o, uint32_t id,
                                                       uint64_t w0, const unsigned char *ctx,
                                                       uint64_t pc, uint64_t ts, size_t n,
                                                       uint32_t cpu)
{
	uint32_t len = pt_rec_len(w0);
	if (o->info) {
		struct posix_trace_event_info *i = o->info;
		i->posix_event_id = id;
		i->posix_pid = (pid_t)ld32(ctx);
		i->posix_thread_id = (pthread_t)ld64(ctx + 8);
		i->posix_prog_address = (void *)(uintptr_t)pc;
		split_time(o->last, ts, &i->posix_timestamp);
		i->posix_truncation_status = n < len               ? POSIX_TRACE_TRUNCATED_READ
		                             : (w0 >> 63)          ? POSIX_TRACE_TRUNCATED_RECORD
		                                                   : POSIX_TRACE_NOT_TRUNCATED;
		/* The context as it is: the extension is made of it when
		 * asked for (pt_logr_event_ext). */
		o->last->ctx = ctx;
		o->last->cpu = cpu;
	} else {
		struct pt_log_event *e = o->ev;
		uint64_t comm0 = ld64(ctx + 16), comm1 = ld64(ctx + 24) & ~(0xffull << 56);
		e->id = id;
		e->truncated = (int)(w0 >> 63);
		e->ctx.pid = (int32_t)ld32(ctx);
		e->ctx.tid = (int32_t)ld32(ctx + 4);
		e->ctx.thread = ld64(ctx + 8);
		memcpy(e->ctx.comm, &comm0, 8);
		memcpy(e->ctx.comm + 8, &comm1, 8);
		e->pc = pc;
		e->ts_ns = ts;
		e->data_len = len;
		e->cpu = cpu;
	}
}

/* Whether copy_out copies n bytes without a call. */
static inline int copy_is_short(size_t n)
{
	return n == 0 || (n >= 4 && n <= 32);
}

/* Copies n bytes, n of copy_is_short, with two overlapping moves; never
 * a call, so that a path that copies this way saves no register. */
__attribute__((always_inline)) static inline void copy_short(unsigned char *dst,
                                                             const unsigned char *src, size_t n)
{
	if (n > 16) {
		unsigned char a[16], b[16];
		memcpy(a, src, 16);
		memcpy(b, src + n - 16, 16);
		memcpy(dst, a, 16);
		memcpy(dst + n - 16, b, 16);
	} else if (n >= 8) {
		uint64_t a = ld64(src), b = ld64(src + n - 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n) {
		uint32_t a = ld32(src), b = ld32(src + n - 4);
		memcpy(dst, &a, 4);
		memcpy(dst + n - 4, &b, 4);
	}
}

/* Copies exactly n bytes; short lengths with a few overlapping moves
 * rather than a call. */
static inline void copy_out(unsigned char *dst, const unsigned char *src, size_t n)
{
	if (n > 16 && n <= 32) {
		unsigned char a[16], b[16];
		memcpy(a, src, 16);
		memcpy(b, src + n - 16, 16);
		memcpy(dst, a, 16);
		memcpy(dst + n - 16, b, 16);
	} else if (n >= 8 && n <= 16) {
		uint64_t a = ld64(src), b = ld64(src + n - 8);
		memcpy(dst, &a, 8);
		memcpy(dst + n - 8, &b, 8);
	} else if (n >= 4 && n < 8) {
		uint32_t a = ld32(src), b = ld32(src + n - 4);
		memcpy(dst, &a, 4);
		memcpy(dst + n - 4, &b, 4);
	} else if (n) {
		memcpy(dst, src, n);
	}
}

/* How far ahead of a source's next record its bytes are fetched: about
 * forty records of 24 bytes, 16 lines. */
#define PREFETCH_AHEAD 1024

/* ---- logread.c: blocks for the merge ------------------------------------ */

/* The next block of the log in reading order, payload checked (*blk its
 * header): B_BLOCK, B_DAMAGE or B_END. */
PT_LOG_HIDDEN int pt_logr_next_any(struct pt_logr *r, const unsigned char **blk,
                                   struct pt_log_block *b);
/* The window's blocks belong to drain k (bit k of r->f.win_owners): it is
 * kept for the drain when the file moves on (pinned). */
PT_LOG_HIDDEN void pt_logr_pin(struct pt_logr *r, uint32_t k);
/* Room for the window that replaces a pinned one; 0 without memory. */
PT_LOG_HIDDEN int pt_logr_spare_ready(struct pt_logr *r);
/* Drain k holds no window any more. */
PT_LOG_HIDDEN void pt_logr_unpin(struct pt_logr *r, uint32_t k);
/* Delivers one POSIX_TRACE_ERROR event (data int EBADMSG); returns 1. */
PT_LOG_HIDDEN int pt_logr_damage(struct pt_logr *r, const struct out *o, void *data,
                                 size_t num_bytes, size_t *data_len);

/* ---- logmerge.c: version 3 ---------------------------------------------- */

/* Back to no drain gathered (open, rewind). */
PT_LOG_HIDDEN void pt_logm_reset(struct pt_logr *r);
/* A rewind while the first two drains gathered are still held: their
 * sources start again, nothing is read again; 0 when that cannot be (a
 * drain was released, or none gathered yet). */
PT_LOG_HIDDEN int pt_logm_restart(struct pt_logr *r);
/* The next event of a version 3 log when no source is in front (r->m.cur
 * NULL): 1 and the event, or 0 at the end. */
PT_LOG_HIDDEN int pt_logm_next(struct pt_logr *r, const struct out *o, void *data,
                               size_t num_bytes, size_t *data_len);
/* The source in front passed the runner-up and has events left: the heap
 * is put right and the new root comes to the front at once.  Returns 1
 * (the event delivered), so that the per-event path ends in a jump. */
PT_LOG_HIDDEN int pt_logm_switch(struct pt_logm *m);
/* The source in front delivered the event of time ts and its next record
 * is not a plain event of its section: 1, as pt_logm_switch. */
PT_LOG_HIDDEN int pt_logm_src_moved(struct pt_logm *m, struct src *s, uint64_t ts);
PT_LOG_HIDDEN uint64_t pt_logm_stage_time_slow(struct src *s, uint64_t raw);
/* The front source's next event is at raw, outside its segment's fast
 * range (logread.c): its time the slow way, then as front_next: 1, as
 * pt_logm_switch. */
PT_LOG_HIDDEN int pt_logr_front_slow(struct pt_logm *m, struct src *s, uint64_t raw);

/* Whether raw is in s's fast range, where its time is fast_time's. */
__attribute__((always_inline)) static inline int in_fast_range(const struct src *s, uint64_t raw)
{
	return raw >= s->fast_lo && raw <= s->fast_hi;
}

/* The segment's line without its clamps: pt_log_cal_apply's value of a
 * raw in the fast range. */
__attribute__((always_inline)) static inline uint64_t fast_time(const struct src *s, uint64_t raw)
{
	return s->seg.real +
	       (uint64_t)(((unsigned __int128)(raw - s->seg.raw) * s->seg.mult) >> PT_LOG_CAL_SHIFT);
}

/* The calibration of raw: pt_log_cal_apply's value. */
__attribute__((always_inline)) static inline uint64_t stage_time(struct src *s, uint64_t raw)
{
	if (unlikely(!in_fast_range(s, raw)))
		return pt_logm_stage_time_slow(s, raw);
	return fast_time(s, raw);
}

/* s, in front, has delivered the event of time ts and moved on to p: its
 * next event's time, and whether it is still ahead of the runner-up.
 * Every way out but the common one is a call in tail position, so that
 * the per-event path saves no register.  Returns 1. */
__attribute__((always_inline)) static inline int front_next(struct pt_logm *m, struct src *s,
                                                            const unsigned char *p, uint64_t ts)
{
	if (likely((uintptr_t)p < s->stage_end)) {
		uint64_t w1 = ld64(p);
		if (likely(pt_rec_id(w1) >= PT_LOG_USER_FIRST)) {
			uint64_t raw = s->base + pt_rec_delta(w1);
			if (unlikely(!in_fast_range(s, raw)))
				return pt_logr_front_slow(m, s, raw);
			uint64_t t = fast_time(s, raw);
			s->head = t;
			if (likely(t < m->limit || (t == m->limit && m->tie_first)))
				return 1;
			return pt_logm_switch(m);
		}
	}
	return pt_logm_src_moved(m, s, ts);
}

/* Delivers the event at s->p (s the root), then moves s on; s stays in
 * front, without heap work, while its next event is still ahead
 * (pt_logr_next_posix does the same for getnext's common case). */
__attribute__((always_inline)) static inline int take_head(struct pt_logr *r, struct src *s,
                                                          const struct out *o, void *data,
                                                          size_t num_bytes, size_t *data_len)
{
	const unsigned char *p = s->p;
	uint64_t w0 = ld64(p);
	uint32_t len = pt_rec_len(w0), hdr = pt_rec_hdr(w0);
	size_t n = len < num_bytes ? len : num_bytes;
	uint64_t ts = s->head;
	if (hdr == PT_REC_HDR)
		s->pc = ld64(p + 8);
	emit(o, pt_rec_id(w0), w0, s->ctx, s->pc, ts, n, s->cpu);
	copy_out(data, p + hdr, n);
	*data_len = n;
	r->last_good_ts = ts;
	p += hdr + pt_log_pad8(len);
	s->p = p;
	/* The drain was read and checked long before its merge reaches this
	 * source: the lines ahead are far from the core by then. */
	__builtin_prefetch((const void *)((uintptr_t)p + PREFETCH_AHEAD)); /* no pointer past the end */
	return front_next(&r->m, s, p, ts);
}

#endif
