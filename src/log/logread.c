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
 * Version 3: the drains are gathered and merged by logmerge.c.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <posixtrace.h>
#include "logread.h"
#include "logread_internal.h"

#define HUGE_PAGE (2u << 20) /* x86-64's and arm64's (4 KiB pages) */
#define WINDOW HUGE_PAGE
#define OPEN_WINDOW 4096u   /* the open walk reads headers, not payloads */
#define NONE UINT64_MAX

/* Where the decoding pointers rest when no block is being decoded. */
static const unsigned char no_payload[1];

/* ---- bytes -------------------------------------------------------------- */

/*
 * Windows a closed reader leaves, kept for the next reader the process
 * opens: a process that reads log after log (the files of a rotated log,
 * a command's passes) finds them mapped instead of having the kernel clear
 * fresh pages for every open (two drains' windows, about 26 MiB for a 64
 * MiB stream, a tenth of a 4 M-event pass).  At most STASH_SLOTS windows
 * of WINDOW bytes (32 MiB); a kept one is MADV_FREE, so the kernel may
 * take its pages back under memory pressure (the next write into them
 * maps them again, zeroed).  Slots taken and given by atomic exchange: no
 * lock, so nothing to repair in a fork child.
 */
#define STASH_SLOTS 16u
static _Atomic(unsigned char *) stash[STASH_SLOTS];

static unsigned char *stash_take(void)
{
	for (unsigned i = 0; i < STASH_SLOTS; i++) {
		if (!atomic_load_explicit(&stash[i], memory_order_relaxed))
			continue;
		/* Pairs with the release exchange in window_free: the
		 * advice is given before the window is seen here. */
		unsigned char *w = atomic_exchange_explicit(&stash[i], NULL, memory_order_acquire);
		if (w)
			return w;
	}
	return NULL;
}

/* A window no longer used: kept in a free slot (a window of WINDOW bytes),
 * else freed. */
static void window_free(unsigned char *w, size_t cap)
{
	if (!w)
		return;
	for (unsigned i = 0; cap == WINDOW && i < STASH_SLOTS; i++) {
		if (atomic_load_explicit(&stash[i], memory_order_relaxed))
			continue;
#ifdef MADV_FREE
		(void)madvise(w, cap, MADV_FREE); /* aligned on HUGE_PAGE */
#endif
		unsigned char *none = NULL;
		/* The advice before the window can be taken: once taken, its
		 * new owner's writes must not be given up by it. */
		while (i < STASH_SLOTS &&
		       !atomic_compare_exchange_strong_explicit(&stash[i], &none, w, memory_order_release,
		                                                memory_order_relaxed)) {
			none = NULL;
			i++;
		}
		if (i < STASH_SLOTS)
			return;
	}
	free(w);
}

/* A window's memory, its pages mapped in one call rather than faulted one
 * by one by the first pread into them (MADV_POPULATE_WRITE, Linux 5.14;
 * without it, or on error, they fault as before).  A window of whole huge
 * pages is aligned on them and asks for them (MADV_HUGEPAGE): the kernel
 * clears a 2 MiB page in a fraction of the time 512 small ones take (26
 * MiB of windows, 3 ms against 7.5 here), and the copies into it and the
 * decoding out of it miss the TLB less; where they are not to be had it
 * gets small pages. */
static unsigned char *new_window(size_t cap)
{
	if (cap == WINDOW) {
		unsigned char *kept = stash_take();
		if (kept)
			return kept;
	}
	int huge = cap % HUGE_PAGE == 0;
	unsigned char *w = huge ? aligned_alloc(HUGE_PAGE, cap) : malloc(cap);
#ifdef MADV_HUGEPAGE
	if (w && huge)
		(void)madvise(w, cap, MADV_HUGEPAGE);
#endif
#ifdef MADV_POPULATE_WRITE
	uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = ((uintptr_t)w + page - 1) & ~(page - 1), hi = ((uintptr_t)w + cap) & ~(page - 1);
	if (w && hi > lo)
		(void)madvise((void *)lo, hi - lo, MADV_POPULATE_WRITE);
#endif
	return w;
}

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
	if (r->f.mem)
		return r->f.size;
	if (off >= r->f.ext_lo && off < r->f.ext_hi)
		return r->f.ext_hi;
	if (off >= r->f.size)
		return off;
	off_t saved = lseek(r->f.fd, 0, SEEK_CUR);
	off_t d = lseek(r->f.fd, (off_t)off, SEEK_DATA);
	int err = d < 0 ? errno : 0;
	uint64_t until = off;
	if (err && err != ENXIO) { /* no SEEK_DATA: every byte is data */
		r->f.ext_lo = 0;
		until = r->f.ext_hi = r->f.size;
	} else if (!err && (uint64_t)d == off) {
		off_t h = lseek(r->f.fd, d, SEEK_HOLE);
		until = h > d && (uint64_t)h < r->f.size ? (uint64_t)h : r->f.size;
		r->f.ext_lo = off;
		r->f.ext_hi = until;
	}
	if (saved >= 0)
		lseek(r->f.fd, saved, SEEK_SET);
	return until;
}

/* The window holds blocks of gathered drains: it is kept (held) for them
 * and the spare one becomes the window.  0 without memory. */
static int retire_window(struct pt_logr *r)
{
	if (!r->f.spare || r->f.nheld == r->f.held_cap)
		return 0;
	r->f.held[r->f.nheld++] = (struct held){r->f.win, r->f.win_owners};
	for (uint32_t k = 0; k < 2; k++)
		r->f.held_by[k] += (r->f.win_owners >> k) & 1;
	r->f.win = r->f.spare;
	r->f.spare = NULL;
	r->f.win_len = 0;
	r->f.win_owners = 0;
	return 1;
}

/* The bytes [off, off + len) of the log, or NULL when the log does not
 * have them.  A file is read through the window, want bytes at a time but
 * not into a hole: a hole's zeros are never worth reading ahead. */
static const unsigned char *view(struct pt_logr *r, uint64_t off, size_t len)
{
	if (off > r->f.size || len > r->f.size - off)
		return NULL;
	if (r->f.mem)
		return r->f.mem + off;
	if (off >= r->f.win_off && off - r->f.win_off + len <= r->f.win_len)
		return r->f.win + (off - r->f.win_off);
	size_t n = len > r->f.want ? len : r->f.want;
	if (n > r->f.win_cap)
		n = r->f.win_cap;
	if (n > r->f.size - off)
		n = (size_t)(r->f.size - off);
	uint64_t data = data_until(r, off) - off;
	if (n > len && data < n)
		n = data > len ? (size_t)data : len;
	if (n < len || (r->f.win_owners && !retire_window(r)))
		return NULL;
	r->f.win_off = off;
	r->f.win_len = pread_full(r->f.fd, r->f.win, n, off);
	return r->f.win_len >= len ? r->f.win : NULL;
}

/* Where data starts at or after off, and where it ends (*end); NONE when
 * there is no more.  Holes of a sparse file are skipped. */
static uint64_t next_data(struct pt_logr *r, uint64_t off, uint64_t *end)
{
	*end = r->f.size;
	if (off >= r->f.size)
		return NONE;
	if (r->f.mem)
		return off;
	off_t d = lseek(r->f.fd, (off_t)off, SEEK_DATA);
	if (d < 0)
		return errno == ENXIO ? NONE : off; /* no SEEK_DATA: all data */
	off_t h = lseek(r->f.fd, d, SEEK_HOLE);
	if (h > d && (uint64_t)h < r->f.size)
		*end = (uint64_t)h;
	return (uint64_t)d < r->f.size ? (uint64_t)d : NONE;
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
	       PT_LOG_BLOCK_HDR + (uint64_t)b->payload_len <= r->f.size - off;
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
	if (r->w.crc_spent + b->payload_len > CRC_SLACK + 2 * r->w.crc_credit ||
	    data_until(r, off) < off + whole)
		return NULL;
	const unsigned char *p = view(r, off, (size_t)whole);
	if (p && CRC_OK(b->payload_crc, p + PT_LOG_BLOCK_HDR, b->payload_len)) {
		r->w.crc_credit += whole;
		return p;
	}
	r->w.crc_spent += b->payload_len;
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
		r->w.crc_credit += to - *from - *holes;
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
	off_t saved = r->f.mem ? 0 : lseek(r->f.fd, 0, SEEK_CUR);
	uint64_t found = NONE, end = 0, credited = off, holes = 0, step = block_step(r);
	size_t want = r->f.want;
	r->f.want = r->f.win_cap; /* large reads, whatever the caller reads */
	off = step_up(off, step);
	while (off + PT_LOG_BLOCK_HDR <= r->f.size) {
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
		uint64_t avail = r->f.mem ? r->f.size - off : r->f.win_len - (off - r->f.win_off);
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
	credit(r, &credited, &holes, found != NONE ? found : off < r->f.size ? off : r->f.size);
	if (!r->f.mem && saved >= 0)
		lseek(r->f.fd, saved, SEEK_SET);
	r->f.want = want;
	return found;
}

/* Linear log: nothing valid from off on. */
static int walk_tail(struct pt_logr *r, uint64_t off)
{
	r->w.walk_done = 1;
	r->w.pos = r->f.size;
	/* Damage if the header vouches for blocks there and the file has
	 * them all; otherwise the log was cut short (a crash). */
	uint64_t data_end = r->hdr.data_end;
	if (off < r->f.size && data_end && off < data_end && r->f.size >= data_end)
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
	return r->hdr.flags & PT_LOG_SEEKABLE ? r->w.expect : 0;
}

/* Linear log: the next block (*off, *b), damage before it, or the end. */
static int walk(struct pt_logr *r, int verify, uint64_t *off, struct pt_log_block *b)
{
	if (r->w.walk_done)
		return B_END;
	uint64_t at = r->w.pos;
	if (at >= r->f.size)
		return walk_tail(r, at);
	/* The number first: a payload is checked only if it would be read. */
	uint64_t min_seq = least_seq(r);
	if (!block_at(r, at, 0, b) || b->seq < min_seq || (verify && !payload_ok(r, at, b))) {
		at = scan(r, at + block_step(r), min_seq, verify, b);
		if (at == NONE)
			return walk_tail(r, r->w.pos);
	}
	if (b->seq > r->w.expect) {
		/* Blocks are missing: damage, then this block. */
		r->w.expect = b->seq;
		r->w.pos = at;
		return B_DAMAGE;
	}
	r->w.expect = b->seq + 1;
	r->w.pos = at + pt_log_pad8(PT_LOG_BLOCK_HDR + b->payload_len);
	if (b->type == PT_LOG_END)
		r->w.walk_done = 1;
	*off = at;
	return B_BLOCK;
}

/* ---- names and status ---------------------------------------------------- */

static void take_name(struct pt_logr *r, uint32_t id, const char *name)
{
	if (id <= PT_LOG_USER_FIRST || id >= PT_LOG_NIDS)
		return;
	char *dst = r->meta.names[id - PT_LOG_USER_FIRST];
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
	if (n > r->meta.pids_cap - r->meta.npids) {
		uint32_t want = r->meta.npids + n;
		if (want > PIDS_MAX)
			want = PIDS_MAX;
		if (want <= r->meta.pids_cap)
			return;
		struct pt_log_pid_entry *grown = realloc(r->meta.pids, (size_t)want * sizeof *grown);
		if (!grown)
			return; /* the events keep the ids they carry */
		r->meta.pids = grown;
		r->meta.pids_cap = want;
	}
	struct logr_meta *m = &r->meta;
	for (uint32_t i = 0; i < n && m->npids < m->pids_cap; i++)
		memcpy(&m->pids[m->npids++], p + (size_t)i * sizeof *m->pids, sizeof *m->pids);
}

static int by_ids(const void *a, const void *b)
{
	const struct pt_log_pid_entry *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The own ids of the writer the log names (pid, tid), or NULL. */
static const struct pt_log_pid_entry *pids_find(struct pt_logr *r, int32_t pid, int32_t tid)
{
	struct logr_meta *m = &r->meta;
	if (!m->npids)
		return NULL;
	if (m->memo_set && m->memo_pid == pid && m->memo_tid == tid)
		return m->memo;
	struct pt_log_pid_entry key = {.pid = pid, .tid = tid};
	m->memo = bsearch(&key, m->pids, m->npids, sizeof key, by_ids);
	m->memo_pid = pid;
	m->memo_tid = tid;
	m->memo_set = 1;
	return m->memo;
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
			pt_logi_block(&r->meta.images, b->type, p, b->payload_len);
	} else if (b->type == PT_LOG_END && b->payload_len >= sizeof r->status) {
		memcpy(&r->status, p, sizeof r->status);
		if (b->payload_len >= PT_LOG_END_PAYLOAD)
			memcpy(&r->waits, p + sizeof r->status, sizeof r->waits);
		r->closed = 1;
	}
}

static void name_table(struct pt_logr *r)
{
	if (!r->hdr.names_size || r->f.size <= r->hdr.names_off)
		return;
	uint64_t len = r->f.size - r->hdr.names_off;
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
	if (r->ring.n == *cap) {
		size_t n = *cap ? *cap * 2 : 64;
		struct ring_entry *grown = realloc(r->ring.e, n * sizeof *grown);
		if (!grown)
			return ENOMEM;
		r->ring.e = grown;
		*cap = n;
	}
	r->ring.e[r->ring.n++] = (struct ring_entry){seq, off, len, kind};
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
	off_t saved = r->f.mem ? 0 : lseek(r->f.fd, 0, SEEK_CUR);
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
			if (r->f.mem) {
				p = view(r, at, sizeof raw);
			} else if (at + sizeof raw > r->f.size ||
			           pread_full(r->f.fd, raw, sizeof raw, at) != sizeof raw) {
				p = NULL;
			}
			if (p && block_header_ok(r, p, at, &b) && b.type != PT_LOG_END &&
			    b.seq % slots == i)
				err = ring_push(r, &cap, b.seq, at, b.payload_len, b.type);
		}
		if (i >= slots || end >= r->f.size)
			break;
		off = end;
	}
	if (!r->f.mem && saved >= 0)
		lseek(r->f.fd, saved, SEEK_SET);
	if (err)
		return err;
	if (r->ring.n > 1)
		qsort(r->ring.e, r->ring.n, sizeof *r->ring.e, by_seq);

	/* The newest block says which sequence numbers the ring holds; a
	 * closed log's header says which it must hold. */
	int closed_hdr = (r->hdr.flags & PT_LOG_CLOSED) != 0;
	uint64_t top = r->ring.n ? r->ring.e[r->ring.n - 1].seq : 0;
	int want_all = closed_hdr && r->hdr.blocks_written > 0;
	if (want_all && r->hdr.blocks_written - 1 > top)
		top = r->hdr.blocks_written - 1;
	uint64_t lo = top >= slots - 1 ? top - (slots - 1) : 0;
	size_t first = 0;
	while (first < r->ring.n && r->ring.e[first].seq < lo)
		first++;
	struct ring_entry *found = r->ring.e;
	size_t nfound = r->ring.n;
	r->ring.e = NULL;
	r->ring.n = 0;
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

/* Version 5: the host record is whole (CRC), of known flags, its name
 * terminated; nothing else in it can make the reader go astray. */
static int host_ok(const struct pt_log_host *h)
{
	return CRC_OK(h->crc, h, offsetof(struct pt_log_host, crc)) &&
	       !(h->flags & ~PT_LOG_HOST_FLAGS_KNOWN) && h->reserved == 0 &&
	       memchr(h->name, '\0', sizeof h->name) != NULL;
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
	r->f.mem = buf;
	r->f.size = len;
	return 0;
}

static void walk_reset(struct pt_logr *r)
{
	r->w.pos = r->data_off;
	r->w.expect = 0;
	r->w.walk_done = 0;
	r->ring.cur = 0;
	r->v2.p = r->v2.end = no_payload;
	r->v2.ctx = NULL;
	r->v2.at_end = 0;
	r->last_good_ts = 0;
	r->w.crc_spent = r->w.crc_credit = 0;
	pt_logm_reset(r);
}

/* Linear log: the names of NAMES blocks, the END block, closed. */
static void open_walk(struct pt_logr *r)
{
	uint64_t off;
	struct pt_log_block b;
	int res;
	r->f.want = OPEN_WINDOW;
	walk_reset(r);
	while ((res = walk(r, r->f.mem != NULL, &off, &b)) != B_END)
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
	r->f.fd = fd;
	if (fstat(fd, &sb) != 0)
		return EINVAL;
	off_t end = -1;
	if (S_ISREG(sb.st_mode))
		end = sb.st_size;
	else if (S_ISBLK(sb.st_mode))
		end = lseek(fd, 0, SEEK_END);
	if (end >= 0) {
		r->f.size = (uint64_t)end;
		if (pread_full(fd, &r->hdr, sizeof r->hdr, 0) != sizeof r->hdr)
			return EINVAL;
		if (r->hdr.version >= PT_LOG_VERSION_HOST &&
		    pread_full(fd, &r->host, sizeof r->host, PT_LOG_HOST_OFF) != sizeof r->host)
			return EINVAL;
	} else {
		int err = slurp(r, fd);
		if (err)
			return err;
		if (r->f.size < PT_LOG_HOST_OFF + sizeof r->host)
			return EINVAL;
		memcpy(&r->hdr, r->f.mem, sizeof r->hdr);
		if (r->hdr.version >= PT_LOG_VERSION_HOST)
			memcpy(&r->host, r->f.mem + PT_LOG_HOST_OFF, sizeof r->host);
	}
	if (!header_ok(&r->hdr) || !params_ok(&r->hdr))
		return EINVAL;
	if (r->hdr.version >= PT_LOG_VERSION_HOST) {
		if (!host_ok(&r->host))
			return EINVAL;
	} else {
		r->hdr.create_mono = 0; /* reserved before version 5 */
	}
	struct pt_log_header *h = &r->hdr;
	h->trace_name[TRACE_NAME_MAX - 1] = h->genversion[TRACE_NAME_MAX - 1] = '\0';
	r->status = h->status;
	r->waits = pt_log_waits_of_header(&h->waits);
	r->data_off = h->data_off;
	r->block_size = h->block_size;
	r->max_data = (uint32_t)pt_log_data_max(h->max_data_size);
	r->max_ctx = (r->block_size - PT_LOG_BLOCK_HDR) / PT_LOG_CTX_REC + 1;
	r->v2.ctxs = calloc(r->max_ctx, sizeof *r->v2.ctxs);
	r->f.pool = malloc(POOL_KEEP * sizeof *r->f.pool);
	if (!r->v2.ctxs || !r->f.pool)
		return ENOMEM;
	r->m.drain_cap = DRAIN_MAX;
	if (!r->f.mem) {
		/* Large reads, but no larger than the file. */
		r->f.win_cap = 2 * (size_t)r->block_size;
		if (r->f.win_cap < WINDOW)
			r->f.win_cap = WINDOW;
		if (r->f.win_cap > r->f.size)
			r->f.win_cap = (size_t)r->f.size;
		r->f.win = new_window(r->f.win_cap);
		if (!r->f.win)
			return ENOMEM;
	}
	r->f.want = OPEN_WINDOW;
	name_table(r);
	int err = 0;
	if (h->layout == PT_LOG_RING)
		err = ring_index(r);
	else
		open_walk(r);
	if (err)
		return err;
	for (uint32_t i = 1; i < TRACE_USER_EVENT_MAX; i++)
		r->meta.nnames += r->meta.names[i][0] != '\0';
	if (r->meta.npids > 1)
		qsort(r->meta.pids, r->meta.npids, sizeof *r->meta.pids, by_ids);
	r->meta.memo_set = 0;
	walk_reset(r);
	r->f.want = r->f.win_cap;
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
	free(r->f.mem);
	window_free(r->f.win, r->f.win_cap);
	free(r->ring.e);
	free(r->v2.ctxs);
	for (uint32_t i = 0; i < r->f.nheld; i++)
		window_free(r->f.held[i].buf, r->f.win_cap);
	for (uint32_t i = 0; i < r->f.npool; i++)
		window_free(r->f.pool[i], r->f.win_cap);
	free(r->f.held);
	free(r->f.pool);
	window_free(r->f.spare, r->f.win_cap);
	pt_logi_free(&r->meta.images);
	for (uint32_t k = 0; k < 2; k++) {
		free(r->m.dr[k].src);
		free(r->m.dr[k].cal);
		free(r->m.dr[k].kctx);
	}
	free(r->m.heap);
	free(r->m.later);
	free(r->meta.pids);
	free(r);
}

/* A rewind right after the first events (a command that looks at the
 * first event's time before its pass) reads nothing again. */
void pt_logr_rewind(struct pt_logr *r)
{
	if (r->last.ctx && r->last.ctx != r->last.kept) {
		memcpy(r->last.kept, r->last.ctx, sizeof r->last.kept);
		r->last.ctx = r->last.kept;
	}
	if (r->hdr.version >= 3 && pt_logm_restart(r))
		r->last_good_ts = 0;
	else
		walk_reset(r);
	r->damaged = 0;
}

/* ---- windows held for the drains --------------------------------------- */

/* The current window holds blocks of drain k: it is pinned, not reread. */
void pt_logr_pin(struct pt_logr *r, uint32_t k)
{
	if (!r->f.mem)
		r->f.win_owners |= 1u << k;
}

/* Room for the window that replaces a pinned one, and for holding it;
 * nothing to do while the window is not pinned. */
int pt_logr_spare_ready(struct pt_logr *r)
{
	if (!r->f.win_owners)
		return 1;
	if (r->f.nheld == r->f.held_cap) {
		uint32_t n = r->f.held_cap ? r->f.held_cap * 2 : 16;
		struct held *grown = realloc(r->f.held, n * sizeof *grown);
		if (!grown)
			return 0;
		r->f.held = grown;
		r->f.held_cap = n;
	}
	if (!r->f.spare)
		r->f.spare = r->f.npool ? r->f.pool[--r->f.npool] : new_window(r->f.win_cap);
	return r->f.spare != NULL;
}

/* Drain k is done with its windows: those only it held go back to the
 * pool (up to POOL_KEEP), or are freed. */
void pt_logr_unpin(struct pt_logr *r, uint32_t k)
{
	uint32_t kept = 0;
	for (uint32_t i = 0; i < r->f.nheld; i++) {
		struct held h = r->f.held[i];
		h.owners &= ~(1u << k);
		if (h.owners)
			r->f.held[kept++] = h;
		else if (r->f.npool < POOL_KEEP)
			r->f.pool[r->f.npool++] = h.buf;
		else
			free(h.buf);
	}
	r->f.nheld = kept;
	r->f.win_owners &= ~(1u << k);
	r->f.held_by[k] = 0;
}

/* The next block of the log in reading order, payload checked. */
int pt_logr_next_any(struct pt_logr *r, const unsigned char **blk, struct pt_log_block *b)
{
	if (r->hdr.layout == PT_LOG_RING) {
		if (r->ring.cur >= r->ring.n)
			return B_END;
		const struct ring_entry *e = &r->ring.e[r->ring.cur++];
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

/* ---- reading ------------------------------------------------------------- */

static void start_block(struct pt_logr *r, const unsigned char *blk, const struct pt_log_block *b)
{
	r->v2.p = blk + PT_LOG_BLOCK_HDR;
	r->v2.end = r->v2.p + b->payload_len;
	r->v2.ts = b->ts_base;
	r->v2.pc = 0;
	r->v2.ctx = NULL;
	r->v2.nctx = 0;
}

/* The next EVENTS block to decode, damage, or the end. */
static int next_block(struct pt_logr *r)
{
	struct pt_log_block b;
	if (r->hdr.layout == PT_LOG_RING) {
		while (r->ring.cur < r->ring.n) {
			const struct ring_entry *e = &r->ring.e[r->ring.cur++];
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

int pt_logr_damage(struct pt_logr *r, const struct out *o, void *data, size_t num_bytes,
                   size_t *data_len)
{
	static const struct pt_log_ctx nobody;
	int err = EBADMSG;
	size_t n = num_bytes < sizeof err ? num_bytes : sizeof err;
	r->v2.p = r->v2.end = no_payload; /* the rest of the block, if any, is skipped */
	r->damaged++;
	if (r->damaged > r->damaged_max)
		r->damaged_max = r->damaged;
	emit(o, POSIX_TRACE_ERROR, pt_rec_word0(0, POSIX_TRACE_ERROR, sizeof err, 0),
	     (const unsigned char *)&nobody, 0, r->last_good_ts, n, PT_LOG_CPU_NONE);
	if (n)
		memcpy(data, &err, n);
	*data_len = n;
	return 1;
}

/* A record that is not a plain event: a meta record (0), or damage (-1). */
static int meta_record(struct pt_logr *r, uint64_t w0, size_t left)
{
	const unsigned char *p = r->v2.p;
	uint32_t id = pt_rec_id(w0);
	uint32_t len = pt_rec_len(w0);
	if (left < PT_REC_HDR || pt_log_rec_size(len) > left || (w0 & PT_REC_SAMEPC))
		return -1;
	if (id == PT_REC_TIME && len == 8) {
		r->v2.ts = ld64(p + PT_REC_HDR);
	} else if (id == PT_REC_CONTEXT && len == sizeof(struct pt_log_ctxrec)) {
		struct pt_log_ctxrec c;
		memcpy(&c, p + PT_REC_HDR, sizeof c);
		if (c.k > r->v2.nctx || c.k >= r->max_ctx)
			return -1;
		c.ctx.comm[sizeof c.ctx.comm - 1] = '\0';
		r->v2.ctxs[c.k] = c.ctx;
		if (c.k == r->v2.nctx)
			r->v2.nctx++;
		r->v2.ctx = &r->v2.ctxs[c.k];
		r->v2.ts += pt_rec_delta(w0);
	} else if (id == PT_REC_SWITCH && len == 0 && ld64(p + 8) < r->v2.nctx) {
		r->v2.ctx = &r->v2.ctxs[ld64(p + 8)];
		r->v2.ts += pt_rec_delta(w0);
	} else {
		return -1; /* an unknown meta record, a bad length, no context */
	}
	r->v2.p = p + pt_log_rec_size(len);
	return 0;
}

/* The record at r->v2.p, if it is an event that can be delivered: the
 * common case, kept small. */
static inline int take_event(struct pt_logr *r, const struct out *o, void *data,
                             size_t num_bytes, size_t *data_len)
{
	const unsigned char *p = r->v2.p;
	size_t left = (size_t)(r->v2.end - p);
	if (unlikely(left < PT_REC_HDR_MIN))
		return 0;
	uint64_t w0 = ld64(p);
	uint32_t id = pt_rec_id(w0);
	uint32_t len = pt_rec_len(w0);
	uint32_t hdr = pt_rec_hdr(w0);
	size_t size = hdr + pt_log_pad8(len);
	if (unlikely(size > left || len > r->max_data || !r->v2.ctx ||
	             (id < PT_LOG_USER_FIRST && id - 1u >= 8u)))
		return 0;
	uint64_t ts = r->v2.ts + (pt_rec_delta(w0));
	size_t n = len < num_bytes ? len : num_bytes;
	r->v2.ts = ts;
	r->last_good_ts = ts;
	r->v2.p = p + size;
	if (hdr == PT_REC_HDR)
		r->v2.pc = ld64(p + 8);
	emit(o, id, w0, (const unsigned char *)r->v2.ctx, r->v2.pc, ts, n, PT_LOG_CPU_NONE);
	copy_out(data, p + hdr, n);
	*data_len = n;
	return 1;
}

/* Everything but the common case: meta records, the next block, damage,
 * the end. */
__attribute__((noinline)) static int next_slow(struct pt_logr *r, const struct out *o,
                                               void *data, size_t num_bytes, size_t *data_len)
{
	if (r->hdr.version >= 3)
		return pt_logm_next(r, o, data, num_bytes, data_len);
	for (;;) {
		if (take_event(r, o, data, num_bytes, data_len))
			return 1;
		size_t left = (size_t)(r->v2.end - r->v2.p);
		if (left >= PT_REC_HDR) {
			if (meta_record(r, ld64(r->v2.p), left) < 0)
				return pt_logr_damage(r, o, data, num_bytes, data_len);
			continue;
		}
		if (left) /* a payload that ends inside a record */
			return pt_logr_damage(r, o, data, num_bytes, data_len);
		if (r->v2.at_end)
			return 0;
		int res = next_block(r);
		if (res == B_DAMAGE)
			return pt_logr_damage(r, o, data, num_bytes, data_len);
		if (res == B_END) {
			r->v2.at_end = 1;
			r->v2.p = r->v2.end = no_payload;
			return 0;
		}
	}
}

int pt_logr_next(struct pt_logr *r, struct pt_log_event *ev, void *data, size_t num_bytes,
                 size_t *data_len)
{
	struct out o = {ev, NULL, NULL};
	if (likely(r->m.cur != NULL))
		return take_head(r, r->m.cur, &o, data, num_bytes, data_len);
	if (likely(take_event(r, &o, data, num_bytes, data_len)))
		return 1;
	return next_slow(r, &o, data, num_bytes, data_len);
}

size_t pt_logr_next_batch(struct pt_logr *r, struct posixtrace_batch_event *evs, size_t max,
                          unsigned char *buf, size_t bufsize, size_t num_bytes)
{
	const struct logr_last *l = &r->last;
	unsigned char *at = buf; /* NULL only with bufsize 0: no byte is copied */
	size_t n = 0, left = bufsize;
	for (; n < max && left >= num_bytes; n++) {
		struct posixtrace_batch_event *e = &evs[n];
		int unavailable;
		size_t len;
		pt_logr_next_posix(r, &e->posixtrace_info, at, num_bytes, &len, &unavailable);
		if (unavailable)
			break;
		e->posixtrace_data = at;
		e->posixtrace_data_len = len;
		if (len) {
			at += len;
			left -= len;
		}
		/* what pt_logr_event_ext would say of it */
		e->posixtrace_tid = l->ctx ? (pid_t)ld32(l->ctx + 4) : 0;
		e->posixtrace_cpu_valid = l->ctx && l->cpu != PT_LOG_CPU_NONE;
		e->posixtrace_cpu = e->posixtrace_cpu_valid ? l->cpu : 0;
		e->posixtrace_reserved = 0;
	}
	return n;
}

int pt_logr_event_ext(struct pt_logr *r, struct posixtrace_event_ext *ext)
{
	const struct logr_last *l = &r->last;
	if (!l->ctx)
		return EINVAL;
	pid_t pid = (pid_t)ld32(l->ctx);
	memset(ext, 0, sizeof *ext);
	ext->posixtrace_tid = (pid_t)ld32(l->ctx + 4);
	memcpy(ext->posixtrace_comm, l->ctx + 16, 15);
	ext->posixtrace_cpu_valid = l->cpu != PT_LOG_CPU_NONE;
	ext->posixtrace_cpu = l->cpu != PT_LOG_CPU_NONE ? l->cpu : 0;
	int32_t tid = ext->posixtrace_tid ? ext->posixtrace_tid : pid;
	const struct pt_log_pid_entry *e = pids_find(r, pid, tid);
	ext->posixtrace_ns_pid = e ? e->ns_pid : 0;
	ext->posixtrace_ns_tid = e && ext->posixtrace_tid ? e->ns_tid : 0;
	ext->posixtrace_pidns = e ? e->ns : 0;
	return 0;
}

/* pt_logr_next_posix without a source in front: a version 2 block, or the
 * merge's full step.  Apart, so that the front source's path saves only
 * the registers it needs. */
__attribute__((noinline)) static int next_posix_other(struct pt_logr *r,
                                                      struct posix_trace_event_info *info,
                                                      void *data, size_t num_bytes,
                                                      size_t *data_len, int *unavailable)
{
	struct out o = {NULL, info, &r->last};
	int got = take_event(r, &o, data, num_bytes, data_len) ||
	          next_slow(r, &o, data, num_bytes, data_len);
	*unavailable = !got;
	return got;
}

/* The front source's event when its data takes a call to copy. */
__attribute__((noinline)) static int next_posix_long(struct pt_logr *r,
                                                     struct posix_trace_event_info *info,
                                                     void *data, size_t num_bytes,
                                                     size_t *data_len, int *unavailable)
{
	struct out o = {NULL, info, &r->last};
	*unavailable = 0;
	return take_head(r, r->m.cur, &o, data, num_bytes, data_len);
}

/* Out of line: front_next's common way saves no register for it. */
__attribute__((noinline)) int pt_logr_front_slow(struct pt_logm *m, struct src *s, uint64_t raw)
{
	uint64_t t = pt_logm_stage_time_slow(s, raw);
	s->head = t;
	if (t < m->limit || (t == m->limit && m->tie_first))
		return 1;
	return pt_logm_switch(m);
}

/* The front source's event with data of a few moves is the path without
 * a call that returns: every other case jumps out.  take_head's work in
 * an order where each value is used soon after it is loaded (the caller's
 * outputs first, the source's state last), so that the path keeps no
 * stack frame and saves 4 registers, not 6. */
int pt_logr_next_posix(struct pt_logr *r, struct posix_trace_event_info *info, void *data,
                       size_t num_bytes, size_t *data_len, int *unavailable)
{
	*unavailable = 0; /* the other ways set it again */
	struct src *s = r->m.cur;
	if (unlikely(s == NULL))
		return next_posix_other(r, info, data, num_bytes, data_len, unavailable);
	const unsigned char *p = s->p;
	uint64_t w0 = ld64(p);
	uint32_t len = pt_rec_len(w0);
	size_t n = len < num_bytes ? len : num_bytes;
	if (unlikely(!copy_is_short(n)))
		return next_posix_long(r, info, data, num_bytes, data_len, unavailable);
	*data_len = n;
	info->posix_truncation_status = num_bytes < len ? POSIX_TRACE_TRUNCATED_READ : (int)(w0 >> 63);
	info->posix_event_id = pt_rec_id(w0);
	uint32_t hdr = pt_rec_hdr(w0);
	const unsigned char *at = p + hdr;
	p = at + pt_log_pad8(len);
	if (hdr == PT_REC_HDR)
		s->pc = ld64(at - PT_REC_HDR_MIN);
	info->posix_prog_address = (void *)(uintptr_t)s->pc;
	copy_short(data, at, n);
	const unsigned char *ctx = s->ctx;
	info->posix_pid = (pid_t)ld32(ctx);
	info->posix_thread_id = (pthread_t)ld64(ctx + 8);
	r->last.ctx = ctx;
	r->last.cpu = s->cpu;
	uint64_t ts = s->head;
	r->last_good_ts = ts;
	split_time(&r->last, ts, &info->posix_timestamp);
	s->p = p;
	/* The drain was read and checked long before its merge reaches this
	 * source: the lines ahead are far from the core by then. */
	__builtin_prefetch((const void *)((uintptr_t)p + PREFETCH_AHEAD)); /* no pointer past the end */
	return front_next(&r->m, s, p, ts);
}

/* ---- accessors ----------------------------------------------------------- */

int pt_logr_name(const struct pt_logr *r, trace_event_id_t id, char *out)
{
	if (id <= PT_LOG_USER_FIRST || id >= PT_LOG_NIDS || !r->meta.names[id - PT_LOG_USER_FIRST][0])
		return EINVAL;
	/* The name and its terminator only, as for an active stream: the
	 * caller's array need not hold more (posix_trace_eventid_get_name). */
	const char *name = r->meta.names[id - PT_LOG_USER_FIRST];
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

void pt_logr_waits(const struct pt_logr *r, struct pt_log_waits *w)
{
	*w = r->waits;
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

int pt_logr_host(const struct pt_logr *r, struct pt_log_host *host, uint64_t *create_mono)
{
	if (r->hdr.version < PT_LOG_VERSION_HOST)
		return ENOENT;
	*host = r->host;
	*create_mono = r->hdr.create_mono;
	return 0;
}

uint64_t pt_logr_images(const struct pt_logr *r) { return pt_logi_count(&r->meta.images); }

uint64_t pt_logr_images_dropped(const struct pt_logr *r) { return pt_logi_dropped(&r->meta.images); }

int pt_logr_image(struct pt_logr *r, int32_t pid, uint64_t addr, uint64_t ns,
                  struct posixtrace_image *out)
{
	return pt_logi_find(&r->meta.images, pid, addr, ns, out);
}

void pt_logr_drain_cap(struct pt_logr *r, uint64_t bytes)
{
	r->m.drain_cap = bytes < DRAIN_MAX ? bytes : DRAIN_MAX;
}
