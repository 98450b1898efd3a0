/* SPDX-License-Identifier: MIT */
/*
 * The trace log reader, format versions 2 and 3 (logfmt.h,
 * docs/LOG-FORMAT.md).
 *
 * A linear log is walked block by block: each block must be valid (magic,
 * header CRC, a type of its version, lengths within the block size and the
 * file, payload CRC) and carry the next sequence number.  An invalid block
 * is skipped by scanning for the next valid block header at 8-byte
 * alignment, or at every byte in an unseekable log, which a killed keeper
 * may leave unaligned (through the data the file has, holes skipped); a sequence
 * number further on than expected is damage, reported once.  Invalid bytes
 * with nothing valid after them are a log cut short, unless the header says
 * the blocks went further.  A ring log is indexed at open from the slots
 * that hold data and read in sequence order.
 *
 * Open walks the block headers once for the names of NAMES blocks, the END
 * block's status and whether the log is closed; reading checks each block's
 * CRC once, in a 1 MiB window (two blocks at least) filled by pread, or in
 * the memory an unseekable log was read into.
 *
 * Version 2: an EVENTS block is decoded in place, record by record.
 * Version 3: the STAGES and KEEPER blocks of one drain are gathered (the
 * window they lie in is kept and a fresh one takes its place, so nothing is
 * copied), checked whole, then merged by time: each STAGES section and each
 * KEEPER block is a source decoded lazily, the sources in a binary heap; the
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
#include <sys/stat.h>
#include <unistd.h>
#include <posixtrace.h>
#include "crc32c.h"
#include "logfmt.h"
#include "logimages.h"
#include "logread.h"
#include "../recword.h"

#define WINDOW (1u << 20)
#define OPEN_WINDOW 4096u   /* the open walk reads headers, not payloads */
#define NONE UINT64_MAX

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

/* Where the decoding pointers rest when no block is being decoded. */
static const unsigned char no_payload[1];

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
	uint64_t head;
	uint64_t base;              /* STAGES: the raw base; KEEPER: the current time */
	uint64_t pc;                /* the address a same-address event repeats */
	const unsigned char *ctx;   /* 32 bytes of struct pt_log_ctx in the payload */
	struct pt_log_calseg seg;   /* STAGES: the calibration segment of raw in */
	uint64_t seg_lo, seg_hi;    /* ... [seg_lo, seg_hi] */
	uint64_t order;             /* equal times: drain, then block, then section order */
	const struct pt_log_calpoint *cal; /* STAGES: its block's points */
	const unsigned char **kctx; /* KEEPER: its block's contexts */
	uint32_t at;                /* where cal or kctx start in the drain's arrays */
	uint32_t ncal;
	uint32_t kind;              /* S_STAGES, S_KEEPER */
	uint32_t resume;            /* KEEPER: p is a RESUME record */
	uint32_t slot;              /* the drain it belongs to (r->dr) */
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
	uint32_t nwin;    /* windows held for it */
	uint32_t live;    /* its sources in the merge */
	uint64_t number;  /* its blocks' drain number; 0: merged with no other */
	int used;         /* gathered, not yet released */
	int joined;       /* its sources are in the merge */
};

/* A window holding blocks of the drains in owners (a bit per r->dr). */
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

struct pt_logr {
	int fd;
	unsigned char *mem;       /* unseekable log, read whole */
	uint64_t size;            /* bytes of the log */
	struct pt_log_header hdr;
	struct pt_log_status status;
	uint64_t data_off;
	uint32_t block_size, max_data;
	int closed;
	uint64_t damaged, damaged_max;

	/* file window */
	unsigned char *win;
	size_t win_cap, win_len, want;
	uint64_t win_off;
	uint64_t ext_lo, ext_hi;  /* a stretch of the file known to hold data */

	/* CRC work of the current pass: payloads found bad, data gone past */
	uint64_t crc_spent, crc_credit;

	/* linear walk */
	uint64_t pos, expect;
	int walk_done;

	/* ring */
	struct ring_entry *ring;
	size_t nring, ring_cur;

	/* the block being decoded */
	const unsigned char *p, *end;
	uint64_t ts, last_good_ts;
	uint64_t pc;              /* the block's previous event's address */
	const struct pt_log_ctx *ctx;
	struct pt_log_ctx *ctxs;
	uint32_t nctx, max_ctx;
	int at_end;

	/* version 3: the oldest drain (dr[old]) and the next one, merged */
	struct drain dr[2];
	uint32_t old;
	int started;              /* the pass has gathered its first drain */
	uint64_t next_order;      /* of the next source gathered */
	struct src **heap;
	uint32_t nheap, heap_cap;
	struct src *cur;          /* in front and ahead of the runner-up: no heap work */
	uint64_t limit;           /* the runner-up's head ... */
	int tie_first;            /* ... and whether cur goes first at an equal time */
	int root_moved;           /* the heap's root delivered and moved on */
	uint64_t drain_errors;    /* ERROR events to deliver before anything else */
	uint64_t carried_errors;  /* damage after a drain: first in the next one */
	uint64_t drain_cap;
	int resume_pending;
	struct pt_log_ctx resume_ctx;
	/* a block read past the drain's end: the next drain's first */
	int pend;
	const unsigned char *pend_blk;
	struct pt_log_block pend_b;
	/* windows: the current one holds blocks of the drains in win_owners
	 * (pinned when any); held ones hold earlier blocks of them; spare
	 * replaces a pinned one */
	uint32_t win_owners;
	struct held *held;
	unsigned char **pool, *spare;
	uint32_t nheld, held_cap, npool;

	uint32_t nnames;
	char names[TRACE_USER_EVENT_MAX][PT_LOG_NAME_SIZE];

	/* PIDS entries, sorted by (pid, tid) once the log is open */
	struct pt_log_pid_entry *pids;
	uint32_t npids, pids_cap;

	/* IMAGES entries (logimages.h) */
	struct pt_log_images images;
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

/* ---- bytes -------------------------------------------------------------- */

static size_t pread_full(int fd, void *dst, size_t len, uint64_t off)
{
	unsigned char *p = dst;
	size_t got = 0;
	while (got < len) {
		ssize_t n = pread(fd, p + got, len - got, (off_t)(off + got));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	return got;
}

/* Where the stretch of data holding off ends (the next hole, or the end of
 * the log); off itself when off is in a hole.  The stretch found is kept,
 * so a file without holes costs a few lseek calls once.  The file offset of
 * the caller's descriptor is left where it was. */
static uint64_t data_until(struct pt_logr *r, uint64_t off)
{
	if (r->mem)
		return r->size;
	if (off >= r->ext_lo && off < r->ext_hi)
		return r->ext_hi;
	if (off >= r->size)
		return off;
	off_t saved = lseek(r->fd, 0, SEEK_CUR);
	off_t d = lseek(r->fd, (off_t)off, SEEK_DATA);
	int err = d < 0 ? errno : 0;
	uint64_t until = off;
	if (err && err != ENXIO) { /* no SEEK_DATA: every byte is data */
		r->ext_lo = 0;
		until = r->ext_hi = r->size;
	} else if (!err && (uint64_t)d == off) {
		off_t h = lseek(r->fd, d, SEEK_HOLE);
		until = h > d && (uint64_t)h < r->size ? (uint64_t)h : r->size;
		r->ext_lo = off;
		r->ext_hi = until;
	}
	if (saved >= 0)
		lseek(r->fd, saved, SEEK_SET);
	return until;
}

/* The window holds blocks of gathered drains: it is kept (held) for them
 * and the spare one becomes the window.  0 without memory. */
static int retire_window(struct pt_logr *r)
{
	if (!r->spare || r->nheld == r->held_cap)
		return 0;
	r->held[r->nheld++] = (struct held){r->win, r->win_owners};
	for (uint32_t k = 0; k < 2; k++)
		r->dr[k].nwin += (r->win_owners >> k) & 1;
	r->win = r->spare;
	r->spare = NULL;
	r->win_len = 0;
	r->win_owners = 0;
	return 1;
}

/* The bytes [off, off + len) of the log, or NULL when the log does not
 * have them.  A file is read through the window, want bytes at a time but
 * not into a hole: a hole's zeros are never worth reading ahead. */
static const unsigned char *view(struct pt_logr *r, uint64_t off, size_t len)
{
	if (off > r->size || len > r->size - off)
		return NULL;
	if (r->mem)
		return r->mem + off;
	if (off >= r->win_off && off - r->win_off + len <= r->win_len)
		return r->win + (off - r->win_off);
	size_t n = len > r->want ? len : r->want;
	if (n > r->win_cap)
		n = r->win_cap;
	if (n > r->size - off)
		n = (size_t)(r->size - off);
	uint64_t data = data_until(r, off) - off;
	if (n > len && data < n)
		n = data > len ? (size_t)data : len;
	if (n < len || (r->win_owners && !retire_window(r)))
		return NULL;
	r->win_off = off;
	r->win_len = pread_full(r->fd, r->win, n, off);
	return r->win_len >= len ? r->win : NULL;
}

/* Where data starts at or after off, and where it ends (*end); NONE when
 * there is no more.  Holes of a sparse file are skipped. */
static uint64_t next_data(struct pt_logr *r, uint64_t off, uint64_t *end)
{
	*end = r->size;
	if (off >= r->size)
		return NONE;
	if (r->mem)
		return off;
	off_t d = lseek(r->fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? NONE : off; /* no SEEK_DATA: all data */
	off_t h = lseek(r->fd, d, SEEK_HOLE);
	if (h > d && (uint64_t)h < r->size)
		*end = (uint64_t)h;
	return (uint64_t)d < r->size ? (uint64_t)d : NONE;
}

/* ---- blocks ------------------------------------------------------------- */

/* EVENTS blocks belong to version 2 logs, STAGES, KEEPER, PIDS and the
 * reserved table types to version 3 ones. */
static int type_ok(const struct pt_logr *r, uint32_t type)
{
	if (type == PT_LOG_NAMES || type == PT_LOG_END)
		return 1;
	if (r->hdr.version < 3)
		return type == PT_LOG_EVENTS;
	return type == PT_LOG_STAGES || type == PT_LOG_KEEPER || type == PT_LOG_PIDS ||
	       type == PT_LOG_IMAGES || type == PT_LOG_IMAGES_SHARED || type == PT_LOG_IMAGES_COMPACT ||
	       (type >= PT_LOG_RESERVED_FIRST && type < PT_LOG_RESERVED_END);
}

static int block_header_ok(const struct pt_logr *r, const unsigned char *p, uint64_t off,
                           struct pt_log_block *b)
{
	memcpy(b, p, sizeof *b);
	return b->magic == PT_LOG_BLOCK_MAGIC &&
	       CRC_OK(b->header_crc, b, offsetof(struct pt_log_block, header_crc)) &&
	       type_ok(r, b->type) &&
	       b->payload_len <= r->block_size - PT_LOG_BLOCK_HDR &&
	       PT_LOG_BLOCK_HDR + (uint64_t)b->payload_len <= r->size - off;
}

/*
 * The block at off (header b, found valid) with its payload, if the payload
 * is all data and its CRC is right.  A payload with a hole in it is refused
 * unread: a hole holds no block, and its zeros would cost reading and a CRC
 * of bytes the file does not have.  A pass spends on payloads that turn out
 * bad at most CRC_SLACK plus twice the data it has gone past (crc_credit),
 * so that forged headers every few bytes, each claiming 4 MiB, cost no more
 * than a constant times the data, over the whole pass and not per scan.
 */
#define CRC_SLACK (16u << 20)
static const unsigned char *payload_ok(struct pt_logr *r, uint64_t off,
                                       const struct pt_log_block *b)
{
	uint64_t whole = PT_LOG_BLOCK_HDR + (uint64_t)b->payload_len;
	if (r->crc_spent + b->payload_len > CRC_SLACK + 2 * r->crc_credit ||
	    data_until(r, off) < off + whole)
		return NULL;
	const unsigned char *p = view(r, off, (size_t)whole);
	if (p && CRC_OK(b->payload_crc, p + PT_LOG_BLOCK_HDR, b->payload_len)) {
		r->crc_credit += whole;
		return p;
	}
	r->crc_spent += b->payload_len;
	return NULL;
}

/* The block at off if it is valid; its payload checked when verify. */
static const unsigned char *block_at(struct pt_logr *r, uint64_t off, int verify,
                                     struct pt_log_block *b)
{
	const unsigned char *p = view(r, off, PT_LOG_BLOCK_HDR);
	if (!p || !block_header_ok(r, p, off, b))
		return NULL;
	return verify ? payload_ok(r, off, b) : p;
}

/* The data a scan went past, from *from to to less the holes it jumped,
 * is credit for payload checks; credited as it goes, so that a payload
 * found after forged ones can still be checked. */
static void credit(struct pt_logr *r, uint64_t *from, uint64_t *holes, uint64_t to)
{
	if (to > *from + *holes)
		r->crc_credit += to - *from - *holes;
	*from = to > *from ? to : *from;
	*holes = 0;
}

/*
 * Where a block may start.  A seekable log's blocks are 8-aligned from the
 * start of the file: its writer cuts a block a killed keeper left unfinished
 * before it goes on.  An unseekable one (no PT_LOG_SEEKABLE, wherever it is
 * read from) cannot be cut: the keeper that continues it writes right after
 * the remains, so its blocks may start at any byte.
 */
static uint64_t block_step(const struct pt_logr *r)
{
	return r->hdr.flags & PT_LOG_SEEKABLE ? 8 : 1;
}

static uint64_t step_up(uint64_t off, uint64_t step)
{
	return (off + step - 1) & ~(step - 1);
}

/*
 * The first place at or after i (a multiple of step) in p[0, avail) where a
 * block header with the block magic fits, or the first place not looked at
 * (past avail - PT_LOG_BLOCK_HDR).  In place, over the window: a byte-wise
 * scan looks for the magic's first byte with memchr, each byte once.
 */
static uint64_t find_magic(const unsigned char *p, uint64_t avail, uint64_t i, uint64_t step)
{
	const uint32_t magic = PT_LOG_BLOCK_MAGIC;
	if (avail < PT_LOG_BLOCK_HDR)
		return i;
	uint64_t last = avail - PT_LOG_BLOCK_HDR; /* the last place a header fits */
	if (step == 8) {
		while (i <= last && ld32(p + i) != magic)
			i += 8;
		return i;
	}
	unsigned char first;
	memcpy(&first, &magic, 1);
	while (i <= last) {
		const unsigned char *q = memchr(p + i, first, (size_t)(last - i + 1));
		if (!q)
			return last + 1;
		i = (uint64_t)(q - p);
		if (ld32(p + i) == magic)
			return i;
		i++;
	}
	return i;
}

/* The next valid block at or after off (at a place a block may start:
 * block_step) whose sequence number is at least min_seq, or NONE.  Costs
 * one pass over the data; the data it goes past is credit for payload
 * checks (payload_ok). */
static uint64_t scan(struct pt_logr *r, uint64_t off, uint64_t min_seq, int verify,
                     struct pt_log_block *b)
{
	off_t saved = r->mem ? 0 : lseek(r->fd, 0, SEEK_CUR);
	uint64_t found = NONE, end = 0, credited = off, holes = 0, step = block_step(r);
	size_t want = r->want;
	r->want = r->win_cap; /* large reads, whatever the caller reads */
	off = step_up(off, step);
	while (off + PT_LOG_BLOCK_HDR <= r->size) {
		if (off >= end) {
			uint64_t d = next_data(r, off, &end);
			if (d == NONE)
				break;
			if (d > off) {
				holes += d - off;
				off = step_up(d, step);
			}
			continue;
		}
		const unsigned char *p = view(r, off, PT_LOG_BLOCK_HDR);
		if (!p)
			break;
		/* What the window has, up to the end of this stretch of data. */
		uint64_t avail = r->mem ? r->size - off : r->win_len - (off - r->win_off);
		if (avail > end - off)
			avail = end - off;
		uint64_t i = find_magic(p, avail, 0, step);
		if (i + PT_LOG_BLOCK_HDR > avail) {
			/* Nothing here: on from the first place not looked at
			 * (the window moves), or past this stretch of data. */
			off = avail < end - off ? off + i : end;
			continue;
		}
		uint64_t cand = off + i;
		credit(r, &credited, &holes, cand);
		if (block_at(r, cand, 0, b) && b->seq >= min_seq &&
		    (!verify || payload_ok(r, cand, b))) {
			found = cand;
			break;
		}
		off = cand + step;
	}
	credit(r, &credited, &holes, found != NONE ? found : off < r->size ? off : r->size);
	if (!r->mem && saved >= 0)
		lseek(r->fd, saved, SEEK_SET);
	r->want = want;
	return found;
}

/* Linear log: nothing valid from off on. */
static int walk_tail(struct pt_logr *r, uint64_t off)
{
	r->walk_done = 1;
	r->pos = r->size;
	/* Damage if the header vouches for blocks there and the file has
	 * them all; otherwise the log was cut short (a crash). */
	uint64_t data_end = r->hdr.data_end;
	if (off < r->size && data_end && off < data_end && r->size >= data_end)
		return B_DAMAGE;
	return B_END;
}

/*
 * The least sequence number the next block may carry.  A seekable log
 * never holds a block numbered below the expected one but by damage: a
 * keeper that continues it cuts what the killed one wrote past its last
 * published progress.  An unseekable log cannot be cut, and its progress is
 * published after each whole write of up to 4 MiB: a keeper killed in the
 * middle of one leaves its complete blocks in the pipe, and the next keeper
 * numbers its blocks again from the progress published before them.  Its
 * blocks are new events, never copies, so any number is taken.
 */
static uint64_t least_seq(const struct pt_logr *r)
{
	return r->hdr.flags & PT_LOG_SEEKABLE ? r->expect : 0;
}

/* Linear log: the next block (*off, *b), damage before it, or the end. */
static int walk(struct pt_logr *r, int verify, uint64_t *off, struct pt_log_block *b)
{
	if (r->walk_done)
		return B_END;
	uint64_t at = r->pos;
	if (at >= r->size)
		return walk_tail(r, at);
	/* The number first: a payload is checked only if it would be read. */
	uint64_t min_seq = least_seq(r);
	if (!block_at(r, at, 0, b) || b->seq < min_seq || (verify && !payload_ok(r, at, b))) {
		at = scan(r, at + block_step(r), min_seq, verify, b);
		if (at == NONE)
			return walk_tail(r, r->pos);
	}
	if (b->seq > r->expect) {
		/* Blocks are missing: damage, then this block. */
		r->expect = b->seq;
		r->pos = at;
		return B_DAMAGE;
	}
	r->expect = b->seq + 1;
	r->pos = at + pt_log_pad8(PT_LOG_BLOCK_HDR + b->payload_len);
	if (b->type == PT_LOG_END)
		r->walk_done = 1;
	*off = at;
	return B_BLOCK;
}

/* ---- names and status ---------------------------------------------------- */

static void take_name(struct pt_logr *r, uint32_t id, const char *name)
{
	if (id <= PT_LOG_USER_FIRST || id >= PT_LOG_NIDS)
		return;
	char *dst = r->names[id - PT_LOG_USER_FIRST];
	memcpy(dst, name, PT_LOG_NAME_SIZE);
	dst[PT_LOG_NAME_SIZE - 1] = '\0';
}

static void names_block(struct pt_logr *r, const unsigned char *payload, uint32_t len)
{
	const size_t entry = sizeof(struct pt_log_name_entry);
	for (size_t at = 0; at + entry <= len; at += entry) {
		struct pt_log_name_entry e;
		memcpy(&e, payload + at, entry);
		take_name(r, e.id, e.name);
	}
}

/* At most this many PIDS entries are kept (24 bytes of the log each). */
#define PIDS_MAX (1u << 20)

static void pids_block(struct pt_logr *r, const unsigned char *p, uint32_t len)
{
	const uint32_t n = len / (uint32_t)sizeof(struct pt_log_pid_entry);
	if (n > r->pids_cap - r->npids) {
		uint32_t want = r->npids + n;
		if (want > PIDS_MAX)
			want = PIDS_MAX;
		if (want <= r->pids_cap)
			return;
		struct pt_log_pid_entry *grown = realloc(r->pids, (size_t)want * sizeof *grown);
		if (!grown)
			return; /* the events keep the ids they carry */
		r->pids = grown;
		r->pids_cap = want;
	}
	for (uint32_t i = 0; i < n && r->npids < r->pids_cap; i++)
		memcpy(&r->pids[r->npids++], p + (size_t)i * sizeof *r->pids, sizeof *r->pids);
}

static int by_ids(const void *a, const void *b)
{
	const struct pt_log_pid_entry *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The own ids of the writer the log names (pid, tid), or NULL. */
static const struct pt_log_pid_entry *pids_find(const struct pt_logr *r, int32_t pid, int32_t tid)
{
	struct pt_log_pid_entry key = {.pid = pid, .tid = tid};
	return r->npids ? bsearch(&key, r->pids, r->npids, sizeof key, by_ids) : NULL;
}

/* A NAMES, PIDS or END block met by a walk or the ring index. */
static void meta_block(struct pt_logr *r, uint64_t off, const struct pt_log_block *b)
{
	const unsigned char *p = payload_ok(r, off, b);
	if (!p)
		return;
	p += PT_LOG_BLOCK_HDR;
	if (b->type == PT_LOG_NAMES) {
		names_block(r, p, b->payload_len);
	} else if (b->type == PT_LOG_PIDS) {
		if (r->hdr.version >= 3)
			pids_block(r, p, b->payload_len);
	} else if (b->type == PT_LOG_IMAGES || b->type == PT_LOG_IMAGES_SHARED ||
	           b->type == PT_LOG_IMAGES_COMPACT) {
		if (r->hdr.version >= 3)
			pt_logi_block(&r->images, b->type, p, b->payload_len);
	} else if (b->type == PT_LOG_END && b->payload_len >= sizeof r->status) {
		memcpy(&r->status, p, sizeof r->status);
		r->closed = 1;
	}
}

static void name_table(struct pt_logr *r)
{
	if (!r->hdr.names_size || r->size <= r->hdr.names_off)
		return;
	uint64_t len = r->size - r->hdr.names_off;
	if (len > r->hdr.names_size)
		len = r->hdr.names_size;
	for (uint32_t i = 1; (uint64_t)(i + 1) * PT_LOG_NAME_SIZE <= len; i++) {
		const unsigned char *p = view(r, r->hdr.names_off + (uint64_t)i * PT_LOG_NAME_SIZE,
		                              PT_LOG_NAME_SIZE);
		if (p)
			take_name(r, PT_LOG_USER_FIRST + i, (const char *)p);
	}
}

/* ---- the ring ------------------------------------------------------------ */

static int ring_push(struct pt_logr *r, size_t *cap, uint64_t seq, uint64_t off, uint32_t len,
                     uint32_t kind)
{
	if (r->nring == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct ring_entry *grown = realloc(r->ring, n * sizeof *grown);
		if (!grown)
			return ENOMEM;
		r->ring = grown;
		*cap = n;
	}
	r->ring[r->nring++] = (struct ring_entry){seq, off, len, kind};
	return 0;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = ((const struct ring_entry *)a)->seq, y = ((const struct ring_entry *)b)->seq;
	return x < y ? -1 : x > y;
}

/* Every slot whose first bytes are data, then the delivery order. */
static int ring_index(struct pt_logr *r)
{
	const uint64_t bs = r->block_size, slots = r->hdr.ring_slots;
	size_t cap = 0;
	uint64_t off = r->data_off, end = 0;
	off_t saved = r->mem ? 0 : lseek(r->fd, 0, SEEK_CUR);
	int err = 0;
	while (!err) {
		uint64_t d = next_data(r, off, &end);
		if (d == NONE)
			break;
		uint64_t i = d <= r->data_off ? 0 : (d - r->data_off + bs - 1) / bs;
		for (; i < slots && !err; i++) {
			uint64_t at = r->data_off + i * bs;
			if (at >= end)
				break;
			unsigned char raw[PT_LOG_BLOCK_HDR];
			struct pt_log_block b;
			const unsigned char *p = raw;
			if (r->mem) {
				p = view(r, at, sizeof raw);
			} else if (at + sizeof raw > r->size ||
			           pread_full(r->fd, raw, sizeof raw, at) != sizeof raw) {
				p = NULL;
			}
			if (p && block_header_ok(r, p, at, &b) && b.type != PT_LOG_END &&
			    b.seq % slots == i)
				err = ring_push(r, &cap, b.seq, at, b.payload_len, b.type);
		}
		if (i >= slots || end >= r->size)
			break;
		off = end;
	}
	if (!r->mem && saved >= 0)
		lseek(r->fd, saved, SEEK_SET);
	if (err)
		return err;
	if (r->nring > 1)
		qsort(r->ring, r->nring, sizeof *r->ring, by_seq);

	/* The newest block says which sequence numbers the ring holds; a
	 * closed log's header says which it must hold. */
	int closed_hdr = (r->hdr.flags & PT_LOG_CLOSED) != 0;
	uint64_t top = r->nring ? r->ring[r->nring - 1].seq : 0;
	int want_all = closed_hdr && r->hdr.blocks_written > 0;
	if (want_all && r->hdr.blocks_written - 1 > top)
		top = r->hdr.blocks_written - 1;
	uint64_t lo = top >= slots - 1 ? top - (slots - 1) : 0;
	size_t first = 0;
	while (first < r->nring && r->ring[first].seq < lo)
		first++;
	struct ring_entry *found = r->ring;
	size_t nfound = r->nring;
	r->ring = NULL;
	r->nring = 0;
	cap = 0;
	uint64_t expect = want_all ? lo : first < nfound ? found[first].seq : 0;
	for (size_t k = first; k < nfound && !err; k++) {
		if (found[k].seq > expect)
			err = ring_push(r, &cap, expect, 0, 0, E_DAMAGE);
		if (!err && (found[k].kind == PT_LOG_NAMES || found[k].kind == PT_LOG_PIDS ||
		             found[k].kind == PT_LOG_IMAGES || found[k].kind == PT_LOG_IMAGES_SHARED ||
		             found[k].kind == PT_LOG_IMAGES_COMPACT)) {
			struct pt_log_block b;
			if (block_at(r, found[k].off, 0, &b))
				meta_block(r, found[k].off, &b);
		} else if (!err) {
			err = ring_push(r, &cap, found[k].seq, found[k].off, found[k].len, E_BLOCK);
		}
		expect = found[k].seq + 1;
	}
	int complete = !want_all || (nfound > first && found[nfound - 1].seq == top);
	if (!err && want_all && !complete)
		err = ring_push(r, &cap, expect, 0, 0, E_DAMAGE);
	free(found);
	r->closed = closed_hdr && complete;
	return err;
}

/* ---- open ---------------------------------------------------------------- */

static int header_ok(const struct pt_log_header *h)
{
	if (memcmp(h->magic, PT_LOG_MAGIC, sizeof h->magic) != 0 || h->version < PT_LOG_VERSION_MIN ||
	    h->version > PT_LOG_VERSION ||
	    h->byte_order != PT_LOG_BOM || /* the other byte order is refused */
	    !CRC_OK(h->crc, h, offsetof(struct pt_log_header, crc)))
		return 0;
	if (h->header_size != PT_LOG_HEADER_SIZE || (h->flags & ~PT_LOG_FLAGS_KNOWN) ||
	    h->name_size != PT_LOG_NAME_SIZE || h->max_data_size > PT_LOG_MAX_DATA)
		return 0;
	int table = h->names_off == PT_LOG_NAMES_OFF && h->names_size == PT_LOG_NAMES_SIZE &&
	            h->data_off == PT_LOG_DATA_OFF;
	int notable = h->names_off == 0 && h->names_size == 0 &&
	              h->data_off == PT_LOG_DATA_OFF_NOTABLE;
	if (!table && !notable)
		return 0;
	if (h->block_size < PT_LOG_MIN_BLOCK || h->block_size > PT_LOG_MAX_BLOCK ||
	    (h->block_size & (h->block_size - 1)) ||
	    h->block_size < pt_log_block_size_of(h->version, h->max_data_size))
		return 0;
	if (h->layout == PT_LOG_RING)
		return h->ring_slots >= 2 && h->ring_slots <= PT_LOG_MAX_RING_SLOTS;
	return h->layout == PT_LOG_LINEAR;
}

static int params_ok(const struct pt_log_header *h)
{
	return pt_log_policies_ok((int)h->log_policy, (int)h->stream_policy, (int)h->inheritance);
}

/* An unseekable log, whole; the header is checked as soon as it is in. */
static int slurp(struct pt_logr *r, int fd)
{
	size_t cap = 1u << 20, len = 0;
	unsigned char *buf = malloc(cap);
	int checked = 0;
	for (;;) {
		if (!buf)
			return ENOMEM;
		if (len == cap) {
			if (cap >= PT_LOGR_MAX_UNSEEKABLE) {
				free(buf);
				return ENOMEM;
			}
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
		if (n <= 0)
			break;
		len += (size_t)n;
		if (!checked && len >= sizeof r->hdr) {
			memcpy(&r->hdr, buf, sizeof r->hdr);
			if (!header_ok(&r->hdr)) {
				free(buf);
				return EINVAL;
			}
			checked = 1;
		}
	}
	r->mem = buf;
	r->size = len;
	return 0;
}

static void drain_reset(struct pt_logr *r);

static void walk_reset(struct pt_logr *r)
{
	r->pos = r->data_off;
	r->expect = 0;
	r->walk_done = 0;
	r->ring_cur = 0;
	r->p = r->end = no_payload;
	r->ctx = NULL;
	r->at_end = 0;
	r->last_good_ts = 0;
	r->crc_spent = r->crc_credit = 0;
	drain_reset(r);
}

/* Linear log: the names of NAMES blocks, the END block, closed. */
static void open_walk(struct pt_logr *r)
{
	uint64_t off;
	struct pt_log_block b;
	int res;
	r->want = OPEN_WINDOW;
	walk_reset(r);
	while ((res = walk(r, r->mem != NULL, &off, &b)) != B_END)
		if (res == B_BLOCK &&
		    (b.type == PT_LOG_NAMES || b.type == PT_LOG_PIDS || b.type == PT_LOG_IMAGES ||
		     b.type == PT_LOG_IMAGES_SHARED || b.type == PT_LOG_IMAGES_COMPACT ||
		     b.type == PT_LOG_END))
			meta_block(r, off, &b);
	walk_reset(r);
}

static int open_log(struct pt_logr *r, int fd)
{
	struct stat sb;
	r->fd = fd;
	if (fstat(fd, &sb) != 0)
		return EINVAL;
	off_t end = -1;
	if (S_ISREG(sb.st_mode))
		end = sb.st_size;
	else if (S_ISBLK(sb.st_mode))
		end = lseek(fd, 0, SEEK_END);
	if (end >= 0) {
		r->size = (uint64_t)end;
		if (pread_full(fd, &r->hdr, sizeof r->hdr, 0) != sizeof r->hdr)
			return EINVAL;
	} else {
		int err = slurp(r, fd);
		if (err)
			return err;
		if (r->size < sizeof r->hdr)
			return EINVAL;
		memcpy(&r->hdr, r->mem, sizeof r->hdr);
	}
	if (!header_ok(&r->hdr) || !params_ok(&r->hdr))
		return EINVAL;
	struct pt_log_header *h = &r->hdr;
	h->trace_name[TRACE_NAME_MAX - 1] = h->genversion[TRACE_NAME_MAX - 1] = '\0';
	r->status = h->status;
	r->data_off = h->data_off;
	r->block_size = h->block_size;
	r->max_data = (uint32_t)pt_log_data_max(h->max_data_size);
	r->max_ctx = (r->block_size - PT_LOG_BLOCK_HDR) / PT_LOG_CTX_REC + 1;
	r->ctxs = calloc(r->max_ctx, sizeof *r->ctxs);
	r->pool = malloc(POOL_KEEP * sizeof *r->pool);
	if (!r->ctxs || !r->pool)
		return ENOMEM;
	r->drain_cap = DRAIN_MAX;
	if (!r->mem) {
		/* Large reads, but no larger than the file. */
		r->win_cap = 2 * (size_t)r->block_size;
		if (r->win_cap < WINDOW)
			r->win_cap = WINDOW;
		if (r->win_cap > r->size)
			r->win_cap = (size_t)r->size;
		r->win = malloc(r->win_cap);
		if (!r->win)
			return ENOMEM;
	}
	r->want = OPEN_WINDOW;
	name_table(r);
	int err = 0;
	if (h->layout == PT_LOG_RING)
		err = ring_index(r);
	else
		open_walk(r);
	if (err)
		return err;
	for (uint32_t i = 1; i < TRACE_USER_EVENT_MAX; i++)
		r->nnames += r->names[i][0] != '\0';
	if (r->npids > 1)
		qsort(r->pids, r->npids, sizeof *r->pids, by_ids);
	walk_reset(r);
	r->want = r->win_cap;
	return 0;
}

int pt_logr_open(int fd, struct pt_logr **out)
{
	struct pt_logr *r = calloc(1, sizeof *r);
	if (!r)
		return ENOMEM;
	int err = open_log(r, fd);
	if (err) {
		pt_logr_close(r);
		return err == ENOMEM ? ENOMEM : EINVAL;
	}
	*out = r;
	return 0;
}

void pt_logr_close(struct pt_logr *r)
{
	if (!r)
		return;
	free(r->mem);
	free(r->win);
	free(r->ring);
	free(r->ctxs);
	for (uint32_t i = 0; i < r->nheld; i++)
		free(r->held[i].buf);
	for (uint32_t i = 0; i < r->npool; i++)
		free(r->pool[i]);
	free(r->held);
	free(r->pool);
	free(r->spare);
	pt_logi_free(&r->images);
	for (uint32_t k = 0; k < 2; k++) {
		free(r->dr[k].src);
		free(r->dr[k].cal);
		free(r->dr[k].kctx);
	}
	free(r->heap);
	free(r->pids);
	free(r);
}

void pt_logr_rewind(struct pt_logr *r)
{
	walk_reset(r);
	r->damaged = 0;
}

/* ---- reading ------------------------------------------------------------- */

static void start_block(struct pt_logr *r, const unsigned char *blk, const struct pt_log_block *b)
{
	r->p = blk + PT_LOG_BLOCK_HDR;
	r->end = r->p + b->payload_len;
	r->ts = b->ts_base;
	r->pc = 0;
	r->ctx = NULL;
	r->nctx = 0;
}

/* The next EVENTS block to decode, damage, or the end. */
static int next_block(struct pt_logr *r)
{
	struct pt_log_block b;
	if (r->hdr.layout == PT_LOG_RING) {
		while (r->ring_cur < r->nring) {
			const struct ring_entry *e = &r->ring[r->ring_cur++];
			if (e->kind == E_DAMAGE)
				return B_DAMAGE;
			const unsigned char *p = block_at(r, e->off, 1, &b);
			if (!p || b.seq != e->seq || b.type != PT_LOG_EVENTS)
				return B_DAMAGE;
			start_block(r, p, &b);
			return B_BLOCK;
		}
		return B_END;
	}
	for (;;) {
		uint64_t off;
		int res = walk(r, 1, &off, &b);
		if (res != B_BLOCK)
			return res;
		if (b.type == PT_LOG_END)
			return B_END;
		if (b.type == PT_LOG_EVENTS) {
			start_block(r, view(r, off, PT_LOG_BLOCK_HDR + (size_t)b.payload_len), &b);
			return B_BLOCK;
		}
	}
}

/* Where an event goes: the reader's own record (pt_logr_next) or the
 * caller's posix_trace_event_info and extension (pt_logr_next_posix). */
struct out {
	struct pt_log_event *ev;
	struct posix_trace_event_info *info;
	struct posixtrace_event_ext *ext;
};

/* Fills the output from the event's parts; ctx is the 32 bytes of a
 * struct pt_log_ctx, its name not yet terminated.  Field by field: the
 * stores match the loads that follow them. */
__attribute__((always_inline)) static inline void emit(const struct out *o, uint32_t id,
                                                       uint64_t w0, const unsigned char *ctx,
                                                       uint64_t pc, uint64_t ts, size_t n)
{
	uint32_t len = pt_rec_len(w0);
	uint64_t comm0 = ld64(ctx + 16), comm1 = ld64(ctx + 24) & ~(0xffull << 56);
	if (o->info) {
		struct posix_trace_event_info *i = o->info;
		i->posix_event_id = id;
		i->posix_pid = (pid_t)ld32(ctx);
		i->posix_thread_id = (pthread_t)ld64(ctx + 8);
		i->posix_prog_address = (void *)(uintptr_t)pc;
		i->posix_timestamp.tv_sec = (time_t)(ts / 1000000000u);
		i->posix_timestamp.tv_nsec = (long)(ts % 1000000000u);
		i->posix_truncation_status = n < len               ? POSIX_TRACE_TRUNCATED_READ
		                             : (w0 >> 63)          ? POSIX_TRACE_TRUNCATED_RECORD
		                                                   : POSIX_TRACE_NOT_TRUNCATED;
		o->ext->posixtrace_tid = (pid_t)ld32(ctx + 4);
		/* The pid again, beside the thread id: pt_logr_own_ids finds
		 * the writer's own ids from both, when they are asked for. */
		o->ext->posixtrace_ns_pid = i->posix_pid;
		memcpy(o->ext->posixtrace_comm, &comm0, 8);
		memcpy(o->ext->posixtrace_comm + 8, &comm1, 8);
	} else {
		struct pt_log_event *e = o->ev;
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
	}
}

static int deliver_damage(struct pt_logr *r, const struct out *o, void *data, size_t num_bytes,
                          size_t *data_len)
{
	static const struct pt_log_ctx nobody;
	int err = EBADMSG;
	size_t n = num_bytes < sizeof err ? num_bytes : sizeof err;
	r->p = r->end = no_payload; /* the rest of the block, if any, is skipped */
	r->damaged++;
	if (r->damaged > r->damaged_max)
		r->damaged_max = r->damaged;
	emit(o, POSIX_TRACE_ERROR, pt_rec_word0(0, POSIX_TRACE_ERROR, sizeof err, 0),
	     (const unsigned char *)&nobody, 0, r->last_good_ts, n);
	if (n)
		memcpy(data, &err, n);
	*data_len = n;
	return 1;
}

/* A record that is not a plain event: a meta record (0), or damage (-1). */
static int meta_record(struct pt_logr *r, uint64_t w0, size_t left)
{
	const unsigned char *p = r->p;
	uint32_t id = pt_rec_id(w0);
	uint32_t len = pt_rec_len(w0);
	if (left < PT_REC_HDR || pt_log_rec_size(len) > left || (w0 & PT_REC_SAMEPC))
		return -1;
	if (id == PT_REC_TIME && len == 8) {
		r->ts = ld64(p + PT_REC_HDR);
	} else if (id == PT_REC_CONTEXT && len == sizeof(struct pt_log_ctxrec)) {
		struct pt_log_ctxrec c;
		memcpy(&c, p + PT_REC_HDR, sizeof c);
		if (c.k > r->nctx || c.k >= r->max_ctx)
			return -1;
		c.ctx.comm[sizeof c.ctx.comm - 1] = '\0';
		r->ctxs[c.k] = c.ctx;
		if (c.k == r->nctx)
			r->nctx++;
		r->ctx = &r->ctxs[c.k];
		r->ts += pt_rec_delta(w0);
	} else if (id == PT_REC_SWITCH && len == 0 && ld64(p + 8) < r->nctx) {
		r->ctx = &r->ctxs[ld64(p + 8)];
		r->ts += pt_rec_delta(w0);
	} else {
		return -1; /* an unknown meta record, a bad length, no context */
	}
	r->p = p + pt_log_rec_size(len);
	return 0;
}

/* Copies exactly n bytes; short lengths with a few overlapping moves
 * rather than a call. */
static inline void copy_out(unsigned char *dst, const unsigned char *src, size_t n)
{
	if (n >= 8 && n <= 16) {
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

/* The record at r->p, if it is an event that can be delivered: the
 * common case, kept small. */
static inline int take_event(struct pt_logr *r, const struct out *o, void *data,
                             size_t num_bytes, size_t *data_len)
{
	const unsigned char *p = r->p;
	size_t left = (size_t)(r->end - p);
	if (unlikely(left < PT_REC_HDR_MIN))
		return 0;
	uint64_t w0 = ld64(p);
	uint32_t id = pt_rec_id(w0);
	uint32_t len = pt_rec_len(w0);
	uint32_t hdr = pt_rec_hdr(w0);
	size_t size = hdr + pt_log_pad8(len);
	if (unlikely(size > left || len > r->max_data || !r->ctx ||
	             (id < PT_LOG_USER_FIRST && id - 1u >= 8u)))
		return 0;
	uint64_t ts = r->ts + (pt_rec_delta(w0));
	size_t n = len < num_bytes ? len : num_bytes;
	r->ts = ts;
	r->last_good_ts = ts;
	r->p = p + size;
	if (hdr == PT_REC_HDR)
		r->pc = ld64(p + 8);
	emit(o, id, w0, (const unsigned char *)r->ctx, r->pc, ts, n);
	copy_out(data, p + hdr, n);
	*data_len = n;
	return 1;
}

/* ---- version 3: gathering a drain ------------------------------------------ */

/* Room for the window that replaces a pinned one, and for holding it. */
static int spare_ready(struct pt_logr *r)
{
	if (r->nheld == r->held_cap) {
		uint32_t n = r->held_cap ? r->held_cap * 2 : 16;
		struct held *grown = realloc(r->held, n * sizeof *grown);
		if (!grown)
			return 0;
		r->held = grown;
		r->held_cap = n;
	}
	if (!r->spare)
		r->spare = r->npool ? r->pool[--r->npool] : malloc(r->win_cap);
	return r->spare != NULL;
}

/* Drain k is merged (none of its sources is in the heap): the windows
 * only it held go back to the pool, its sources away. */
static void drain_release(struct pt_logr *r, uint32_t k)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < r->nheld; i++) {
		struct held h = r->held[i];
		h.owners &= ~(1u << k);
		if (h.owners)
			r->held[kept++] = h;
		else if (r->npool < POOL_KEEP)
			r->pool[r->npool++] = h.buf;
		else
			free(h.buf);
	}
	r->nheld = kept;
	r->win_owners &= ~(1u << k);
	struct drain *d = &r->dr[k];
	d->nsrc = d->ncal = d->nkctx = d->nwin = d->live = 0;
	d->bytes = d->errors = d->number = 0;
	d->used = d->joined = 0;
}

static void drain_reset(struct pt_logr *r)
{
	r->nheap = 0;
	r->cur = NULL;
	r->root_moved = 0;
	drain_release(r, 0);
	drain_release(r, 1);
	r->old = 0;
	r->started = 0;
	r->next_order = 0;
	r->drain_errors = r->carried_errors = 0;
	r->resume_pending = 0;
	r->pend = 0;
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
	s->kind = kind;
	s->slot = (uint32_t)(d - r->dr);
	s->order = r->next_order++;
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
static int section_ok(const unsigned char *p, uint32_t len, uint32_t max_data)
{
	if (len < PT_LOG_OWNER_REC || pt_rec_id(ld64(p)) != PT_LOG_STAGE_OWNER)
		return 0;
	uint64_t shape = 1; /* no word has this shape */
	uint32_t off = 0, shape_size = 0;
	while (off < len) {
		uint32_t left = len - off;
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
		             (id == PT_LOG_STAGE_OWNER && dlen == sizeof(struct pt_log_owner)))) {
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
		if (sec.len % 8 || sec.len > len - off || !section_ok(pl + off, sec.len, r->max_data))
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

/* The next block of the log in reading order, payload checked. */
static int next_any(struct pt_logr *r, const unsigned char **blk, struct pt_log_block *b)
{
	if (r->hdr.layout == PT_LOG_RING) {
		if (r->ring_cur >= r->nring)
			return B_END;
		const struct ring_entry *e = &r->ring[r->ring_cur++];
		if (e->kind == E_DAMAGE)
			return B_DAMAGE;
		*blk = block_at(r, e->off, 1, b);
		return *blk && b->seq == e->seq ? B_BLOCK : B_DAMAGE;
	}
	uint64_t off;
	int res = walk(r, 1, &off, b);
	if (res == B_BLOCK)
		*blk = view(r, off, PT_LOG_BLOCK_HDR + (size_t)b->payload_len);
	return res;
}

/* Adds a block to drain k; damage in it is one error of the drain. */
static void add_block(struct pt_logr *r, uint32_t k, const unsigned char *blk,
                      const struct pt_log_block *b)
{
	struct drain *d = &r->dr[k];
	const unsigned char *pl = blk + PT_LOG_BLOCK_HDR;
	uint32_t before = d->nsrc;
	if (!r->mem)
		r->win_owners |= 1u << k;
	int err = b->type == PT_LOG_STAGES ? add_stages(r, d, pl, b->payload_len)
	                                   : add_keeper(r, d, pl, b->payload_len, b->ts_base);
	d->bytes += b->payload_len + (uint64_t)(d->nsrc - before) * sizeof(struct src);
	if (err)
		d->errors++;
}

/* Whether drain d, holding blocks already, ends before this block (the
 * drain number changes, or the drain's memory would pass its bound). */
static int drain_ends(const struct pt_logr *r, const struct drain *d, uint64_t drain,
                      const struct pt_log_block *b, uint64_t number)
{
	return number != drain || number == 0 || d->bytes + b->payload_len > r->drain_cap ||
	       (uint64_t)d->nwin * r->win_cap > r->drain_cap;
}

/* Gathers the next drain of the log into r->dr[k] (released): its blocks,
 * their sources, its errors.  Damage among the drain's blocks is an error
 * of the drain; damage after its last block, an error between it and the
 * next.  0 when the log has nothing more. */
static int gather(struct pt_logr *r, uint32_t k)
{
	struct drain *dr = &r->dr[k];
	uint64_t drain = 0, after = 0; /* errors since the drain's last block */
	int have = 0;
	dr->errors = r->carried_errors;
	r->carried_errors = 0;
	for (;;) {
		const unsigned char *blk = NULL;
		struct pt_log_block b;
		int res = B_BLOCK;
		if (r->pend) {
			blk = r->pend_blk;
			b = r->pend_b;
			r->pend = 0;
		} else {
			if (r->win_owners && !spare_ready(r))
				break; /* no memory for more: the drain is cut here */
			res = next_any(r, &blk, &b);
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
		if (have && drain_ends(r, dr, drain, &b, number)) {
			r->pend = 1;
			r->pend_blk = blk;
			r->pend_b = b;
			break;
		}
		have = 1;
		drain = dr->number = number;
		dr->errors += after;
		after = 0;
		add_block(r, k, blk, &b);
	}
	if (have)
		r->carried_errors = after;
	else
		dr->errors += after;
	dr->used = have || dr->errors;
	return dr->used;
}

/* ---- version 3: merging a drain -------------------------------------------- */

/* The segment of s's calibration that holds raw, found when raw leaves
 * the one in use. */
__attribute__((noinline)) static void find_segment(struct src *s, uint64_t raw)
{
	const struct pt_log_calpoint *c = s->cal;
	uint32_t n = s->ncal, i = 1;
	s->seg = pt_log_cal_find(c, n, raw);
	while (i < n - 1 && raw >= c[i].raw)
		i++;
	s->seg_lo = n == 1 || i == 1 ? 0 : c[i - 1].raw;
	s->seg_hi = n == 1 || i == n - 1 ? UINT64_MAX : c[i].raw - 1;
}

/* The calibration of raw. */
__attribute__((always_inline)) static inline uint64_t stage_time(struct src *s, uint64_t raw)
{
	if (unlikely(raw < s->seg_lo || raw > s->seg_hi))
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
			/* TIME or OWNER: a new base; the next event carries its address */
			s->base = ld64(rec + PT_REC_HDR);
			s->pc = 0;
			if (id == PT_LOG_STAGE_OWNER)
				s->ctx = rec + PT_REC_HDR + 8;
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
	s->seg_lo = 1;
	s->seg_hi = 0; /* no segment yet */
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

static void sift_down(struct pt_logr *r, uint32_t i)
{
	struct src **h = r->heap, *x = h[i];
	uint32_t n = r->nheap;
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

/* Drain k, gathered, joins the merge: its sources that have events go
 * into the heap, beside those of the drain before it still there.  No
 * memory for the heap: the drain is one error. */
static void join(struct pt_logr *r, uint32_t k)
{
	struct drain *d = &r->dr[k];
	d->joined = 1;
	if (!grow((void **)&r->heap, &r->heap_cap, r->nheap + d->nsrc, sizeof *r->heap)) {
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
		if (src_start(s)) {
			r->heap[r->nheap++] = s;
			d->live++;
		}
	}
	for (uint32_t i = r->nheap / 2; i-- > 0;)
		sift_down(r, i);
}

/* The root delivered and moved on: back into place, or out when done. */
static void fix_root(struct pt_logr *r)
{
	struct src *s = r->heap[0];
	if (s->p >= s->end) {
		r->dr[s->slot].live--;
		r->heap[0] = r->heap[--r->nheap];
	}
	if (r->nheap)
		sift_down(r, 0);
	r->root_moved = 0;
}

/*
 * The oldest drain has delivered its events (or there is none yet): the
 * next one becomes the oldest, its ERRORs due at once, and the drain after
 * it is gathered and joins the merge, so that two drains are merged at a
 * time.  0 when no drain is left.
 */
static int next_drain(struct pt_logr *r)
{
	uint32_t k = r->old;
	if (r->dr[k].used) {
		drain_release(r, k);
		k = r->old ^= 1;
	} else if (!r->started) {
		r->started = 1;
		if (gather(r, k))
			join(r, k);
	}
	struct drain *d = &r->dr[k];
	if (!d->used)
		return 0;
	if (!d->joined)
		join(r, k); /* drain 0, or next to one: it waited */
	r->drain_errors += d->errors;
	d->errors = 0;
	/* Drain 0 (blocks written outside any drain) is merged with no other:
	 * its events come in the order given. */
	if (gather(r, k ^ 1) && d->number && r->dr[k ^ 1].number)
		join(r, k ^ 1);
	return 1;
}

/* The runner-up of the root s: what s's next events are compared with. */
static void set_limit(struct pt_logr *r, const struct src *s)
{
	const struct src *run = NULL;
	if (r->nheap > 1)
		run = r->heap[1];
	if (r->nheap > 2 && src_before(r->heap[2], run))
		run = r->heap[2];
	r->limit = run ? run->head : UINT64_MAX;
	r->tie_first = run ? s->order < run->order : 1;
}

/* s delivered the event of time ts and its next record is not a plain
 * event: applies what comes before its next one; s leaves the front
 * unless it is a section whose next event is still ahead. */
__attribute__((noinline)) static void src_moved(struct pt_logr *r, struct src *s, uint64_t ts)
{
	if (s->kind == S_KEEPER)
		s->base = ts;
	int more = src_advance(s);
	if (!more)
		s->p = s->end;
	if (!more || s->kind != S_STAGES || s->head > r->limit ||
	    (s->head == r->limit && !r->tie_first)) {
		r->cur = NULL;
		r->root_moved = 1;
	}
}

/* Delivers the event at s->p (s the root), then moves s on; s stays in
 * front, without heap work, while its next event is still ahead. */
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
	emit(o, pt_rec_id(w0), w0, s->ctx, s->pc, ts, n);
	copy_out(data, p + hdr, n);
	*data_len = n;
	r->last_good_ts = ts;
	p += hdr + pt_log_pad8(len);
	s->p = p;
	if (likely(s->kind == S_STAGES && p < s->end)) {
		uint64_t w1 = ld64(p);
		if (likely(pt_rec_id(w1) >= PT_LOG_USER_FIRST)) {
			uint64_t t = stage_time(s, s->base + pt_rec_delta(w1));
			s->head = t;
			if (likely(t < r->limit || (t == r->limit && r->tie_first)))
				return 1;
			r->cur = NULL;
			r->root_moved = 1;
			return 1;
		}
	}
	src_moved(r, s, ts);
	return 1;
}

static int deliver_resume(struct pt_logr *r, uint64_t ts, const struct out *o, size_t *data_len)
{
	emit(o, POSIX_TRACE_RESUME, 0, (const unsigned char *)&r->resume_ctx, 0, ts, 0);
	*data_len = 0;
	r->resume_pending = 0;
	return 1;
}

/* Version 3: the events of the oldest drain and the next one by time, a
 * drain's errors first when it becomes the oldest, RESUME where a RESUME
 * record said; then the drain after them joins. */
static int next_merged(struct pt_logr *r, const struct out *o, void *data, size_t num_bytes,
                       size_t *data_len)
{
	for (;;) {
		if (r->drain_errors) {
			r->drain_errors--;
			return deliver_damage(r, o, data, num_bytes, data_len);
		}
		if (r->root_moved)
			fix_root(r);
		if (!r->dr[r->old].live) {
			if (!next_drain(r))
				return 0;
			continue;
		}
		struct src *s = r->heap[0];
		if (s->resume) {
			r->resume_pending = 1;
			memcpy(&r->resume_ctx, s->ctx, sizeof r->resume_ctx);
			r->resume_ctx.comm[sizeof r->resume_ctx.comm - 1] = '\0';
			s->base = s->head;
			s->p += PT_REC_HDR;
			s->resume = 0;
			if (!src_advance(s))
				s->p = s->end;
			r->root_moved = 1;
			continue;
		}
		if (r->resume_pending)
			return deliver_resume(r, s->head, o, data_len);
		set_limit(r, s);
		r->cur = s;
		return take_head(r, s, o, data, num_bytes, data_len);
	}
}

/* Everything but the common case: meta records, the next block, damage,
 * the end. */
__attribute__((noinline)) static int next_slow(struct pt_logr *r, const struct out *o,
                                               void *data, size_t num_bytes, size_t *data_len)
{
	if (r->hdr.version >= 3)
		return next_merged(r, o, data, num_bytes, data_len);
	for (;;) {
		if (take_event(r, o, data, num_bytes, data_len))
			return 1;
		size_t left = (size_t)(r->end - r->p);
		if (left >= PT_REC_HDR) {
			if (meta_record(r, ld64(r->p), left) < 0)
				return deliver_damage(r, o, data, num_bytes, data_len);
			continue;
		}
		if (left) /* a payload that ends inside a record */
			return deliver_damage(r, o, data, num_bytes, data_len);
		if (r->at_end)
			return 0;
		int res = next_block(r);
		if (res == B_DAMAGE)
			return deliver_damage(r, o, data, num_bytes, data_len);
		if (res == B_END) {
			r->at_end = 1;
			r->p = r->end = no_payload;
			return 0;
		}
	}
}

int pt_logr_next(struct pt_logr *r, struct pt_log_event *ev, void *data, size_t num_bytes,
                 size_t *data_len)
{
	struct out o = {ev, NULL, NULL};
	if (likely(r->cur != NULL))
		return take_head(r, r->cur, &o, data, num_bytes, data_len);
	if (likely(take_event(r, &o, data, num_bytes, data_len)))
		return 1;
	return next_slow(r, &o, data, num_bytes, data_len);
}

void pt_logr_own_ids(const struct pt_logr *r, struct posixtrace_event_ext *ext)
{
	pid_t pid = ext->posixtrace_ns_pid; /* the event's pid, as emit left it */
	int32_t tid = ext->posixtrace_tid ? ext->posixtrace_tid : pid;
	const struct pt_log_pid_entry *e = pids_find(r, pid, tid);
	ext->posixtrace_ns_pid = e ? e->ns_pid : 0;
	ext->posixtrace_ns_tid = e && ext->posixtrace_tid ? e->ns_tid : 0;
	ext->posixtrace_pidns = e ? e->ns : 0;
}

int pt_logr_next_posix(struct pt_logr *r, struct posix_trace_event_info *info,
                       struct posixtrace_event_ext *ext, void *data, size_t num_bytes,
                       size_t *data_len)
{
	struct out o = {NULL, info, ext};
	if (likely(r->cur != NULL))
		return take_head(r, r->cur, &o, data, num_bytes, data_len);
	if (likely(take_event(r, &o, data, num_bytes, data_len)))
		return 1;
	return next_slow(r, &o, data, num_bytes, data_len);
}

/* ---- accessors ----------------------------------------------------------- */

int pt_logr_name(const struct pt_logr *r, trace_event_id_t id, char *out)
{
	if (id <= PT_LOG_USER_FIRST || id >= PT_LOG_NIDS || !r->names[id - PT_LOG_USER_FIRST][0])
		return EINVAL;
	/* The name and its terminator only, as for an active stream: the
	 * caller's array need not hold more (posix_trace_eventid_get_name). */
	const char *name = r->names[id - PT_LOG_USER_FIRST];
	size_t n = strnlen(name, PT_LOG_NAME_SIZE - 1);
	memcpy(out, name, n);
	out[n] = '\0';
	return 0;
}

void pt_logr_params(const struct pt_logr *r, struct pt_logw_params *p)
{
	const struct pt_log_header *h = &r->hdr;
	memset(p, 0, sizeof *p);
	memcpy(p->trace_name, h->trace_name, TRACE_NAME_MAX);
	memcpy(p->genversion, h->genversion, TRACE_NAME_MAX);
	p->create_sec = h->create_sec;
	p->create_nsec = h->create_nsec;
	p->clockres_ns = h->clockres_ns;
	p->stream_size = h->stream_size;
	p->max_data_size = h->max_data_size;
	p->log_size = h->log_size;
	p->stream_policy = h->stream_policy;
	p->log_policy = h->log_policy;
	p->inheritance = h->inheritance;
}

void pt_logr_status(const struct pt_logr *r, struct pt_log_status *s)
{
	*s = r->status;
}

void pt_logr_info(const struct pt_logr *r, uint32_t *version, int *closed,
                  uint64_t *damaged_blocks)
{
	if (version)
		*version = r->hdr.version;
	if (closed)
		*closed = r->closed;
	if (damaged_blocks)
		*damaged_blocks = r->damaged_max;
}

uint64_t pt_logr_images(const struct pt_logr *r) { return pt_logi_count(&r->images); }

uint64_t pt_logr_images_dropped(const struct pt_logr *r) { return pt_logi_dropped(&r->images); }

int pt_logr_image(struct pt_logr *r, int32_t pid, uint64_t addr, uint64_t ns,
                  struct posixtrace_image *out)
{
	return pt_logi_find(&r->images, pid, addr, ns, out);
}

void pt_logr_drain_cap(struct pt_logr *r, uint64_t bytes)
{
	r->drain_cap = bytes < DRAIN_MAX ? bytes : DRAIN_MAX;
}
