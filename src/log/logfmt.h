/* SPDX-License-Identifier: MIT */
/*
 * The trace log file format, version 3 (docs/LOG-FORMAT.md): on-disk
 * structures and constants shared by the writer (logwrite.c, logblock.c, logio.c) and the reader
 * (logread.c).
 *
 *   [file header, 4 KiB] [name table, 62 KiB, seekable logs only] [blocks ...]
 *
 * Integers are in the writer's byte order, given by byte_order; a reader of
 * the other order refuses the log.  Every block carries its own length, its
 * sequence number and two CRC-32C, and decodes on its own, so a damaged block
 * costs only itself and a log cut short yields every complete block.
 *
 * This header includes only libc headers, <trace.h> and the record word
 * (recword.h), which stream memory shares.
 */
#ifndef PT_LOGFMT_H
#define PT_LOGFMT_H

#include <stddef.h>
#include <stdint.h>
#include <trace.h>
#include "crc32c.h"
#include "../recword.h"

#define PT_LOG_MAGIC "PTRACLOG"
/* 4: STAGES sections may hold CPU records, which a version 3 reader
 * takes for damage.  5: the header names the host and anchors its clocks
 * (create_mono, struct pt_log_host). */
#define PT_LOG_VERSION 5u
#define PT_LOG_VERSION_HOST 5u /* the first with a host record */
#define PT_LOG_VERSION_MIN 2u /* the oldest a reader reads */
#define PT_LOG_BOM 0x01020304u /* reads 0x04030201 in the other byte order */
#define PT_LOG_HEADER_SIZE 4096u
#define PT_LOG_NAME_SIZE (TRACE_EVENT_NAME_MAX + 1)
#define PT_LOG_USER_FIRST 32u /* POSIX_TRACE_UNNAMED_USER_EVENT, entry 0 */
#define PT_LOG_NIDS (PT_LOG_USER_FIRST + TRACE_USER_EVENT_MAX) /* ids 0..1023 */
#define PT_LOG_NAMES_OFF PT_LOG_HEADER_SIZE
#define PT_LOG_NAMES_SIZE ((uint64_t)TRACE_USER_EVENT_MAX * PT_LOG_NAME_SIZE)
/* Seekable logs: blocks start after the name table, at a 4 KiB boundary. */
#define PT_LOG_DATA_OFF (PT_LOG_NAMES_OFF + ((PT_LOG_NAMES_SIZE + 4095u) & ~(uint64_t)4095u))
/* Unseekable logs have no name table: blocks follow the header. */
#define PT_LOG_DATA_OFF_NOTABLE ((uint64_t)PT_LOG_HEADER_SIZE)

#define PT_LOG_MIN_BLOCK (64u << 10)
#define PT_LOG_MAX_BLOCK (4u << 20)
#define PT_LOG_MAX_DATA ((1u << 21) - 1) /* a record's data length has 21 bits */
#define PT_LOG_MAX_RING_SLOTS (1ull << 32)

_Static_assert(PT_LOG_NIDS == 1024, "event ids have 10 bits in a record");
_Static_assert(PT_LOG_NAME_SIZE == 64, "name entries are 64 bytes");

/* header.layout */
enum { PT_LOG_LINEAR = 1, PT_LOG_RING = 2 };
/* header.flags */
#define PT_LOG_CLOSED 1u   /* finished by shutdown (pt_logw_finish) */
#define PT_LOG_SEEKABLE 2u /* header and name table kept up to date in place */
#define PT_LOG_FLAGS_KNOWN (PT_LOG_CLOSED | PT_LOG_SEEKABLE)

/* The status of the stream and of the log, as of the last update. */
struct pt_log_status {
	int32_t stream_status;  /* POSIX_TRACE_RUNNING / SUSPENDED */
	int32_t stream_full;    /* POSIX_TRACE_FULL / NOT_FULL */
	int32_t stream_overrun; /* POSIX_TRACE_OVERRUN / NO_OVERRUN */
	int32_t flush_status;   /* POSIX_TRACE_FLUSHING / NOT_FLUSHING */
	int32_t flush_error;    /* first error of the log, or 0 */
	int32_t log_overrun;    /* events were lost for the log */
	int32_t log_full;
	/* Events of a trigger's type that took no snapshot (the keeper's
	 * hold-off and budget, posixtrace_set_trigger), saturating. */
	uint32_t triggers_suppressed;
	uint64_t lost_events;   /* events lost in the stream */
	uint64_t log_dropped;   /* events dropped because an UNTIL_FULL log was full */
};
_Static_assert(sizeof(struct pt_log_status) == 48, "log status");

/* What the stream's writers waited for room (posixtrace_attr_setblocking),
 * as its status is: in the header's reserved bytes and after the status in
 * an END block; 0 in logs written before. */
struct pt_log_waits {
	uint64_t waited_events; /* events whose writer found the stream full and waited */
	uint64_t waited_ns;     /* the time they waited in all */
	uint64_t waited_lost;   /* of those, events still without room: lost */
};
_Static_assert(sizeof(struct pt_log_waits) == 24, "log waits");
/* The waits as the header keeps them: 20 bytes are what its first sector
 * has left, so the lost count saturates there (END keeps it whole). */
struct pt_log_header_waits {
	uint64_t waited_events;
	uint64_t waited_ns;
	uint32_t waited_lost;   /* saturating at UINT32_MAX */
} __attribute__((packed));
_Static_assert(sizeof(struct pt_log_header_waits) == 20, "header waits");

static inline struct pt_log_header_waits pt_log_header_waits_of(const struct pt_log_waits *w)
{
	struct pt_log_header_waits h = { w->waited_events, w->waited_ns,
	                                 w->waited_lost > UINT32_MAX ? UINT32_MAX : (uint32_t)w->waited_lost };
	return h;
}

static inline struct pt_log_waits pt_log_waits_of_header(const struct pt_log_header_waits *h)
{
	struct pt_log_waits w = { h->waited_events, h->waited_ns, h->waited_lost };
	return w;
}

/* An END block's payload: the status, then the waits. */
#define PT_LOG_END_PAYLOAD ((uint32_t)(sizeof(struct pt_log_status) + sizeof(struct pt_log_waits)))

struct pt_log_header {
	char magic[8];             /* PT_LOG_MAGIC */
	uint32_t version;          /* PT_LOG_VERSION */
	uint32_t byte_order;       /* PT_LOG_BOM */
	uint32_t header_size;      /* PT_LOG_HEADER_SIZE */
	uint32_t flags;            /* PT_LOG_CLOSED, PT_LOG_SEEKABLE */
	uint64_t names_off;        /* PT_LOG_NAMES_OFF, or 0 without a table */
	uint64_t names_size;       /* PT_LOG_NAMES_SIZE, or 0 */
	uint64_t data_off;         /* where the blocks start */
	uint32_t layout;           /* PT_LOG_LINEAR, PT_LOG_RING */
	uint32_t block_size;       /* largest block; ring slot size */
	uint64_t ring_slots;       /* PT_LOG_RING: slots; else 0 */
	uint64_t clockres_ns;      /* resolution of the event clock */
	uint32_t name_size;        /* PT_LOG_NAME_SIZE */
	uint32_t nnames;           /* user names in the log */
	char trace_name[TRACE_NAME_MAX];
	char genversion[TRACE_NAME_MAX];
	int64_t create_sec, create_nsec;
	uint64_t stream_size, max_data_size, log_size;
	int32_t stream_policy, log_policy, inheritance;
	uint32_t reserved0;
	struct pt_log_status status;
	uint64_t blocks_written;   /* blocks in the log (next sequence number) */
	uint64_t data_end;         /* linear, seekable: end of the blocks; else 0 */
	/* Version 5: CLOCK_MONOTONIC at the instant of the creation time
	 * (create_sec, create_nsec), read together with it: an event's time
	 * less the creation time, plus this, is its CLOCK_MONOTONIC time. */
	uint64_t create_mono;
	struct pt_log_header_waits waits; /* as of the last update; 0 in logs written before */
	uint32_t crc;              /* CRC-32C of every byte above */
};
_Static_assert(sizeof(struct pt_log_header) == 360, "log header");
_Static_assert(offsetof(struct pt_log_header, waits) == 336, "the waits LOG-FORMAT.md gives");
_Static_assert(sizeof(struct pt_log_header) <= 512, "the header is one sector");

/*
 * Version 5: the host the log (or this file of a rotated log) was written
 * on, right after the header in its first sector, written once when the
 * file begins (header rewrites leave it).  The anchor is CLOCK_REALTIME and
 * CLOCK_MONOTONIC read together when the file began (the pair of the
 * narrowest of a few tries: anchor_gap_ns apart at most), the clock's state
 * is adjtimex(2)'s at that time.  A reader refuses a version 5 log whose
 * record fails its CRC, has unknown flags or an unterminated name.
 */
#define PT_LOG_HOST_OFF 360u
#define PT_LOG_HOST_NAME_SIZE 68u /* 64 (HOST_NAME_MAX) + NUL, padded */
#define PT_LOG_HOST_MACHINE 1u /* machine holds the keyed hash of /etc/machine-id */
#define PT_LOG_HOST_BOOT 2u    /* boot holds /proc/sys/kernel/random/boot_id */
#define PT_LOG_HOST_CLOCK 4u   /* maxerror_us, esterror_us were read (adjtimex) */
#define PT_LOG_HOST_UNSYNC 8u  /* adjtimex said STA_UNSYNC: the clock is not synchronised */
#define PT_LOG_HOST_FLAGS_KNOWN 15u
struct pt_log_host {
	uint32_t flags;          /* PT_LOG_HOST_* */
	uint32_t reserved;
	uint64_t anchor_real_ns, anchor_mono_ns, anchor_gap_ns;
	int64_t maxerror_us, esterror_us;
	uint8_t machine[16];     /* HMAC-SHA256(machine id, PT_LOG_HOST_APP_ID), a UUID */
	uint8_t boot[16];
	char name[PT_LOG_HOST_NAME_SIZE]; /* uname's nodename, NUL-terminated */
	uint32_t crc;            /* CRC-32C of every byte above */
};
_Static_assert(sizeof(struct pt_log_host) == 152, "host record");
_Static_assert(PT_LOG_HOST_OFF + sizeof(struct pt_log_host) <= 512,
               "the host record is in the header's sector");
/* The application id the machine id is hashed with (systemd's
 * sd_id128_get_machine_app_specific: `systemd-id128 machine-id
 * --app-specific=863bb4c1be9740f0bb34975751328dcf` prints the same). */
#define PT_LOG_HOST_APP_ID "863bb4c1be9740f0bb34975751328dcf"

/* block.type: EVENTS in version 2 logs only, STAGES and KEEPER in version 3
 * only; the reserved types are tables a later revision adds, skipped. */
enum {
	PT_LOG_EVENTS = 1,
	PT_LOG_NAMES = 2,
	PT_LOG_END = 3,
	PT_LOG_STAGES = 4,
	PT_LOG_KEEPER = 5,
	PT_LOG_PIDS = 6, /* version 3: the ids of writers in other pid namespaces */
	PT_LOG_IMAGES = 7, /* version 3: the executable images of traced processes */
	PT_LOG_IMAGES_SHARED = 8, /* the same, files shared and the describer's uid */
	PT_LOG_IMAGES_COMPACT = 9, /* the same, files described once per log */
};
#define PT_LOG_RESERVED_FIRST 10u
#define PT_LOG_RESERVED_END 32u
#define PT_LOG_BLOCK_MAGIC 0x32424c50u /* "PLB2" */

struct pt_log_block {
	uint32_t magic;            /* PT_LOG_BLOCK_MAGIC */
	uint32_t type;             /* PT_LOG_EVENTS, NAMES, END */
	uint64_t seq;              /* 0, 1, 2, ... in write order */
	uint64_t ts_base;          /* ns, CLOCK_REALTIME scale */
	uint32_t payload_len;      /* bytes after this header, padding excluded */
	uint32_t payload_crc;      /* CRC-32C of the payload */
	uint32_t nrecords;         /* event records (EVENTS), entries (NAMES) */
	uint32_t header_crc;       /* CRC-32C of the 36 bytes above */
};
_Static_assert(sizeof(struct pt_log_block) == 40, "block header");
#define PT_LOG_BLOCK_HDR ((uint32_t)sizeof(struct pt_log_block))

/*
 * A record of an EVENTS payload (the record word of recword.h): one or two
 * 64-bit words, then the data padded to 8 bytes.
 *   word0: bits 0-30 time delta (ns since the previous record of the block,
 *          the first one since ts_base), 31 same address, 32-41 event id,
 *          42-62 data length, 63 truncated when recorded
 *          (POSIX_TRACE_TRUNCATED_RECORD)
 *   word1: program address (SWITCH: the context number); absent when bit 31
 *          says the address is that of the previous event record of the
 *          block.  Meta records always have both words.
 */
/* Meta record ids (9 to 31 are never events). */
#define PT_REC_TIME 9u    /* data: u64 absolute timestamp, the new current time */
#define PT_REC_CONTEXT 10u /* data: struct pt_log_ctxrec; defines and selects k */
#define PT_REC_SWITCH 11u /* word1: k, selects a context defined in the block */
#define PT_REC_META_FIRST 9u
#define PT_REC_META_END 32u

/* The writer of an event: process, kernel thread, pthread_t, thread name.
 * System events not caused by a process have all of it zero. */
struct pt_log_ctx {
	int32_t pid, tid;
	uint64_t thread;
	char comm[16];
};
_Static_assert(sizeof(struct pt_log_ctx) == 32, "context");

/* One event as the log records it, decoded (the reader's, logread.h). */
struct pt_log_event {
	trace_event_id_t id;
	int truncated;          /* 1: data truncated when recorded */
	struct pt_log_ctx ctx;  /* pid, kernel tid, pthread_t, thread name (NUL-terminated) */
	uint64_t pc;            /* program address */
	uint64_t ts_ns;         /* ns since the Epoch, CLOCK_REALTIME scale */
	uint32_t data_len;      /* the data's full length in the log */
	uint32_t cpu;           /* the CPU it was posted on; PT_LOG_CPU_NONE: unknown */
};

/* CONTEXT record data. */
struct pt_log_ctxrec {
	struct pt_log_ctx ctx;
	uint32_t k;
	uint32_t zero;
};
_Static_assert(sizeof(struct pt_log_ctxrec) == 40, "context record");

#define PT_LOG_CTX_REC (PT_REC_HDR + (uint32_t)sizeof(struct pt_log_ctxrec)) /* 56 */
#define PT_LOG_TIME_REC (PT_REC_HDR + 8u)                                    /* 24 */

/* An entry of a NAMES payload (68 bytes, entries packed). */
struct pt_log_name_entry {
	uint32_t id;
	char name[PT_LOG_NAME_SIZE];
};
_Static_assert(sizeof(struct pt_log_name_entry) == 68, "name entry");

/* A PIDS entry: a writer of another pid namespace, by the ids its events
 * carry in the log (those of the namespace of the stream's creator) and
 * by its ids in its own namespace. */
struct pt_log_pid_entry {
	uint64_t ns;               /* the writer's namespace: the inode of /proc/PID/ns/pid */
	int32_t pid, tid;          /* as the log's events name it */
	int32_t ns_pid, ns_tid;    /* in its own namespace */
};
_Static_assert(sizeof(struct pt_log_pid_entry) == 24, "pid entry");

/* An IMAGES payload: entries, each this and path_len bytes of path, zeros
 * to a multiple of 8 (entry_size).  What a traced process said of an image
 * it had mapped (posixtrace_set_images): untrusted, its path is a claim. */
struct pt_log_image {
	int32_t pid;               /* as the log's events name it */
	uint32_t entry_size;       /* this header, the path, the padding */
	uint64_t time_ns;          /* when the process began describing its set */
	uint64_t set;              /* the same for every entry of a set of pid */
	uint64_t start, end;       /* [start, end) in the process */
	uint64_t bias;             /* its load bias */
	uint16_t index, count;     /* in its set */
	uint16_t path_len;         /* at most PT_LOG_IMAGE_PATH_MAX */
	uint8_t build_id_len;      /* at most 32 */
	uint8_t flags;             /* bit 0: the path was cut */
	uint8_t build_id[32];
};
_Static_assert(sizeof(struct pt_log_image) == 88, "image entry");
#define PT_LOG_IMAGE_PATH_MAX 512u

static inline uint32_t pt_log_image_size(uint32_t path_len)
{
	return (uint32_t)sizeof(struct pt_log_image) + ((path_len + 7u) & ~7u);
}

/* An IMAGES_SHARED payload: entries, each starting with entry_size and
 * kind.  A FILE describes a file once (its build id and path); an IMAGE
 * places the nth FILE entry of the same block (from 0) in a process, with
 * the user whose memory it was described in.  entry_size may be larger
 * than the kind's size (a later revision's fields, skipped); an unknown
 * kind is skipped whole. */
enum { PT_LOG_SHARED_FILE = 1, PT_LOG_SHARED_IMAGE = 2 };

struct pt_log_shared_file {
	uint32_t entry_size;       /* 48 + path_len rounded up to 8, or more */
	uint16_t kind;             /* PT_LOG_SHARED_FILE */
	uint16_t path_len;         /* at most PT_LOG_IMAGE_PATH_MAX */
	uint8_t build_id_len;      /* at most 32 */
	uint8_t flags;             /* bit 0: the path was cut */
	uint8_t reserved[6];
	uint8_t build_id[32];
};
_Static_assert(sizeof(struct pt_log_shared_file) == 48, "shared file entry");

struct pt_log_shared_image {
	uint32_t entry_size;       /* 64, or more */
	uint16_t kind;             /* PT_LOG_SHARED_IMAGE */
	uint16_t index, count;     /* in its set */
	uint16_t reserved;
	uint32_t file;             /* the block's FILE entry it is, from 0 */
	int32_t pid;               /* as the log's events name it */
	uint32_t uid;              /* who described it (PT_LOG_UID_UNKNOWN) */
	uint64_t time_ns;          /* when the process began describing its set */
	uint64_t set;              /* the same for every entry of a set of pid */
	uint64_t start, end;       /* [start, end) in the process */
	uint64_t bias;             /* its load bias */
};
_Static_assert(sizeof(struct pt_log_shared_image) == 64, "shared image entry");
#define PT_LOG_UID_UNKNOWN UINT32_MAX

static inline uint32_t pt_log_shared_file_size(uint32_t path_len)
{
	return (uint32_t)sizeof(struct pt_log_shared_file) + ((path_len + 7u) & ~7u);
}

/* An IMAGES_COMPACT payload (docs/LOG-FORMAT.md): the u64 table its file
 * ids belong to (the writer's, nonzero), then entries at any byte, each a
 * kind byte, a varint body length and the body.  A FILE entry gives a file
 * a log-wide id; a SET entry places files, by id, in a process, each by its
 * load bias only.  Numbers are unsigned LEB128 varints; signed deltas are
 * zigzagged. */
enum { PT_LOG_COMPACT_FILE = 1, PT_LOG_COMPACT_SET = 2 };
#define PT_LOG_COMPACT_PREFIX 8u
/* SET flags: biases are counted in pages of 4096 bytes. */
#define PT_LOG_COMPACT_PAGES 1u
#define PT_LOG_COMPACT_PAGE_SHIFT 12u
/* The most bytes a varint of 64 bits takes. */
#define PT_LOG_VARINT_MAX 10u

static inline uint32_t pt_log_varint_put(unsigned char *p, uint64_t v)
{
	uint32_t n = 0;
	while (v >= 0x80) {
		p[n++] = (unsigned char)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (unsigned char)v;
	return n;
}

/* The varint at p[*off, len) into *v: 0, or -1 when it runs past len or
 * past 64 bits. */
static inline int pt_log_varint_get(const unsigned char *p, uint32_t len, uint32_t *off,
                                    uint64_t *v)
{
	uint64_t x = 0;
	for (uint32_t shift = 0, i = *off; i < len && shift < 64; shift += 7, i++) {
		uint64_t b = p[i] & 0x7fu;
		if (shift == 63 && b > 1)
			return -1;
		x |= b << shift;
		if (!(p[i] & 0x80)) {
			*off = i + 1;
			*v = x;
			return 0;
		}
	}
	return -1;
}

static inline uint64_t pt_log_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t pt_log_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* ---- version 3: STAGES and KEEPER payloads --------------------------------
 * A STAGES payload: a prefix, ncal calibration points, then nsections
 * sections, each a header and `len` bytes of stream records (layout.h):
 * deltas in raw clock units from the section's base, TIME (9) and OWNER
 * (10) the meta records, and CPU (12) since version 4, an OWNER record
 * first.  A KEEPER payload: the u64
 * drain number, then records as in an EVENTS payload, plus RESUME (12). */
struct pt_log_stages {
	uint64_t drain;
	uint32_t clock;            /* PT_LOG_CLOCK_* */
	uint32_t ncal;             /* 1 to PT_LOG_MAX_CAL */
	uint32_t nsections;        /* at least 1 */
	uint32_t reserved;
	uint64_t reserved2;
};
_Static_assert(sizeof(struct pt_log_stages) == 32, "stages prefix");
enum { PT_LOG_CLOCK_MONO = 1, PT_LOG_CLOCK_TSC = 2 };
#define PT_LOG_MAX_CAL 64u

/* A calibration point: a raw clock value and its time (ns, the
 * CLOCK_REALTIME scale of the stream's creation). */
struct pt_log_calpoint {
	uint64_t raw;
	uint64_t real_ns;
};
_Static_assert(sizeof(struct pt_log_calpoint) == 16, "calibration point");

struct pt_log_section {
	uint32_t lane;             /* informational */
	uint32_t len;              /* bytes of records, a multiple of 8 */
	uint64_t pc;               /* the address a first same-address event repeats */
};
_Static_assert(sizeof(struct pt_log_section) == 16, "section header");

#define PT_LOG_STAGE_TIME 9u   /* data: u64, the new raw base */
#define PT_LOG_STAGE_OWNER 10u /* data: struct pt_log_owner */
/* data: u32 cpu, u32 0; version 4.  The CPU of the section's events that
 * follow, up to the next CPU or OWNER record; PT_LOG_CPU_NONE and any
 * value from PT_LOG_CPU_LIMIT up: unknown (the section starts so). */
#define PT_LOG_STAGE_CPU 12u
#define PT_LOG_CPU_REC 24u
#define PT_LOG_CPU_NONE 0xffffffffu
#define PT_LOG_CPU_LIMIT 65536u
static inline uint32_t pt_log_cpu_checked(uint32_t cpu)
{
	return cpu < PT_LOG_CPU_LIMIT ? cpu : PT_LOG_CPU_NONE;
}
struct pt_log_owner {
	uint64_t base;             /* raw base of the records that follow */
	struct pt_log_ctx ctx;     /* their writer */
};
_Static_assert(sizeof(struct pt_log_owner) == 40, "owner record");
#define PT_LOG_OWNER_REC (PT_REC_HDR + (uint32_t)sizeof(struct pt_log_owner)) /* 56 */

#define PT_LOG_KEEPER_PREFIX 8u /* u64 drain */
#define PT_REC_RESUME 12u       /* KEEPER blocks: RESUME before the next event */

/* The most a STAGES block spends besides records: its prefix with every
 * calibration point, a section header and its OWNER record. */
#define PT_LOG_STAGES_OVERHEAD                                                        \
	((uint32_t)sizeof(struct pt_log_stages) + PT_LOG_MAX_CAL * 16u +              \
	 (uint32_t)sizeof(struct pt_log_section) + PT_LOG_OWNER_REC)

/* The line of a calibration segment, as every reader and the keeper
 * compute it: m = floor((real_b - real_a) * 2^40 / (raw_b - raw_a)), then
 * real = real_a +/- floor(|raw - raw_a| * m / 2^40) (0 below 0, UINT64_MAX
 * above it).  A single point has the slope 1 (m = 2^40). */
#define PT_LOG_CAL_SHIFT 40
struct pt_log_calseg {
	uint64_t raw, real, mult;
};

/* The attributes a header carries that only take listed values: the log
 * and stream full policies and the inheritance (writer and reader both). */
static inline int pt_log_policies_ok(int log_policy, int stream_policy, int inheritance)
{
	return (log_policy == POSIX_TRACE_LOOP || log_policy == POSIX_TRACE_UNTIL_FULL ||
	        log_policy == POSIX_TRACE_APPEND) &&
	       (stream_policy == POSIX_TRACE_LOOP || stream_policy == POSIX_TRACE_UNTIL_FULL ||
	        stream_policy == POSIX_TRACE_FLUSH) &&
	       (inheritance == POSIX_TRACE_CLOSE_FOR_CHILD || inheritance == POSIX_TRACE_INHERITED);
}

static inline struct pt_log_calseg pt_log_calseg(const struct pt_log_calpoint *a,
                                                 const struct pt_log_calpoint *b)
{
	struct pt_log_calseg s = {a->raw, a->real_ns, 1ull << PT_LOG_CAL_SHIFT};
	if (b && b->raw > a->raw) {
		uint64_t dm = b->real_ns > a->real_ns ? b->real_ns - a->real_ns : 0;
		unsigned __int128 m = ((unsigned __int128)dm << PT_LOG_CAL_SHIFT) / (b->raw - a->raw);
		s.mult = m > UINT64_MAX ? UINT64_MAX : (uint64_t)m;
	}
	return s;
}

static inline uint64_t pt_log_cal_apply(const struct pt_log_calseg *s, uint64_t raw)
{
	if (raw >= s->raw) {
		unsigned __int128 x = ((unsigned __int128)(raw - s->raw) * s->mult) >> PT_LOG_CAL_SHIFT;
		return x > UINT64_MAX - s->real ? UINT64_MAX : s->real + (uint64_t)x;
	}
	unsigned __int128 x = ((unsigned __int128)(s->raw - raw) * s->mult) >> PT_LOG_CAL_SHIFT;
	return x > s->real ? 0 : s->real - (uint64_t)x;
}

/* Whether n points (1 to PT_LOG_MAX_CAL) make a calibration: raw strictly
 * increasing, real_ns not decreasing. */
static inline int pt_log_cal_ok(const struct pt_log_calpoint *p, uint32_t n)
{
	if (n < 1 || n > PT_LOG_MAX_CAL)
		return 0;
	for (uint32_t i = 1; i < n; i++)
		if (p[i].raw <= p[i - 1].raw || p[i].real_ns < p[i - 1].real_ns)
			return 0;
	return 1;
}

/* The segment of n checked points that converts raw: between the two
 * consecutive points around it, the first two below the first point, the
 * last two above the last. */
static inline struct pt_log_calseg pt_log_cal_find(const struct pt_log_calpoint *p, uint32_t n,
                                                   uint64_t raw)
{
	if (n == 1)
		return pt_log_calseg(&p[0], NULL);
	uint32_t i = 1;
	while (i < n - 1 && raw >= p[i].raw)
		i++;
	return pt_log_calseg(&p[i - 1], &p[i]);
}

/* The parameters a log is written with: the stream's attributes. */
struct pt_logw_params {
	char trace_name[TRACE_NAME_MAX];
	char genversion[TRACE_NAME_MAX];
	int64_t create_sec, create_nsec;
	uint64_t clockres_ns;
	uint64_t stream_size, max_data_size, log_size;
	int32_t stream_policy, log_policy, inheritance;
	uint64_t create_mono;    /* CLOCK_MONOTONIC at the creation time */
};

static inline uint32_t pt_log_pad8(uint32_t n)
{
	return (n + 7u) & ~7u;
}

/* Bytes of an event record with len bytes of data (both words: the most). */
static inline uint32_t pt_log_rec_size(uint32_t len)
{
	return PT_REC_HDR + pt_log_pad8(len);
}

/* The largest data a record may carry: the stream's max-data-size, or a
 * system event's (POSIX_TRACE_FILTER: two trace_event_set_t), whichever is
 * larger. */
#define PT_LOG_SYSTEM_DATA_MAX 256u
_Static_assert(2 * sizeof(trace_event_set_t) == PT_LOG_SYSTEM_DATA_MAX, "FILTER's data");
static inline uint64_t pt_log_data_max(uint64_t max_data_size)
{
	return max_data_size > PT_LOG_SYSTEM_DATA_MAX ? max_data_size : PT_LOG_SYSTEM_DATA_MAX;
}

/* The block size a log of `version` needs: room for a block header, what a
 * block spends besides records (version 2: a context; version 3: a STAGES
 * prefix with every calibration point, a section and its OWNER record), a
 * TIME record and the largest record; 64 KiB at least, a power of two. */
static inline uint32_t pt_log_block_size_of(uint32_t version, uint64_t max_data_size)
{
	max_data_size = pt_log_data_max(max_data_size);
	/* v2: a context; v4: a section may start with a CPU record too */
	uint64_t fixed = version >= 4   ? PT_LOG_STAGES_OVERHEAD + PT_LOG_CPU_REC
	                 : version == 3 ? PT_LOG_STAGES_OVERHEAD
	                                : PT_LOG_CTX_REC;
	uint64_t need = PT_LOG_BLOCK_HDR + fixed + PT_LOG_TIME_REC + PT_REC_HDR +
	                ((max_data_size + 7u) & ~(uint64_t)7u);
	uint32_t size = PT_LOG_MIN_BLOCK;
	while (size < need && size < PT_LOG_MAX_BLOCK)
		size *= 2;
	return size;
}

/* ---- log-max-size (docs/LOG-FORMAT.md, Limits) ------------------------------
 * log-max-size counts events only: an event counts as its record with
 * both words, 16 bytes plus its data rounded up to 8, whether it is a
 * system or a user event and however the block stores it.  Headers,
 * prefixes, calibration, sections, contexts, names, PIDS and IMAGES tables
 * and padding are kept apart. */
#define PT_LOG_MIN_LOG_SIZE 4096u     /* the smallest posix_trace_attr_setlogsize takes */
#define PT_LOG_RING_SHORT_BLOCKS 16u  /* blocks sealed short a ring has room for */
#define PT_LOG_FULL_SLACK_BLOCKS 16u  /* UNTIL_FULL: blocks of overhead besides */

static inline uint64_t pt_log_event_bytes(uint32_t len)
{
	return pt_log_rec_size(len);
}

/* A LOOP log's ring: room for twice log-max-size in whole blocks, the
 * blocks sealed short that it tolerates, and the slot being written
 * over: 2 x log_size / block_size rounded up, + 17.  2 to 2^32. */
static inline uint64_t pt_log_ring_slots(uint64_t log_size, uint32_t block_size)
{
	uint64_t q = log_size / block_size, r = log_size % block_size;
	uint64_t slots = 2 * q + (2 * r + block_size - 1) / block_size + PT_LOG_RING_SHORT_BLOCKS + 1;
	return slots < PT_LOG_MAX_RING_SLOTS ? slots : PT_LOG_MAX_RING_SLOTS;
}

/* An UNTIL_FULL log's data region (blocks and their padding) is at most
 * this: twice log-max-size and 16 blocks (saturating). */
static inline uint64_t pt_log_full_region(uint64_t log_size, uint32_t block_size)
{
	uint64_t slack = (uint64_t)PT_LOG_FULL_SLACK_BLOCKS * block_size;
	if (log_size > (UINT64_MAX - slack) / 2)
		return UINT64_MAX;
	return 2 * log_size + slack;
}

/* The block size the writer uses (version 3). */
static inline uint32_t pt_log_block_size_for(uint64_t max_data_size)
{
	return pt_log_block_size_of(PT_LOG_VERSION, max_data_size);
}

#endif
