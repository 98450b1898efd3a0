/* SPDX-License-Identifier: MIT */
/*
 * Memory that several processes map: a stream, a process control block, a
 * name registry.  Offsets only, never pointers.  Whoever reads memory that
 * another process can write validates every index, offset and length
 * against values it keeps in private memory (see docs/SECURITY.md); every
 * such object is a sealed memfd, so its size cannot change under a reader.
 */
#ifndef PT_LAYOUT_H
#define PT_LAYOUT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include "recword.h"
/* The public functions are the only symbols exported (libposixtrace.map),
 * whichever header a source file includes first. */
#pragma GCC visibility push(default)
#include "../include/trace.h"
#include "../include/posixtrace.h"
#pragma GCC visibility pop

#define PT_LAYOUT_VERSION 8u /* 8: watching, beside state */
#define PT_SEALS_REQUIRED 0x0007 /* F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW */

/* ---- event type identifiers ------------------------------------------ */

#define PT_NEVENT_IDS 1024u         /* bits in trace_event_set_t */
#define PT_SYS_FIRST 1u             /* POSIX_TRACE_START */
#define PT_SYS_LAST 8u              /* POSIX_TRACE_ERROR */
#define PT_USER_FIRST 32u           /* POSIX_TRACE_UNNAMED_USER_EVENT */
#define PT_NAME_SIZE (TRACE_EVENT_NAME_MAX + 1)
#define PT_MAX_DATA_LIMIT (1u << 20)
/* The longest a writer waits for room (posixtrace_attr_setblocking). */
#define PT_BLOCK_MAX_NS (60ull * 1000000000ull)

_Static_assert(PT_NEVENT_IDS - PT_USER_FIRST == TRACE_USER_EVENT_MAX, "user id range");
_Static_assert(sizeof(trace_event_set_t) * 8 == PT_NEVENT_IDS, "event set size");
_Static_assert(PT_NAME_SIZE == 64, "name entries are one cache line");

/* ---- records -------------------------------------------------------------
 * A record is a header then its data, padded to 8 bytes (recword.h):
 *   word0: time delta (31 bits) | same address (1 bit) | id (10 bits) |
 *          data length (21 bits) | truncated at generation (1 bit)
 *   word1: the program address of the call; absent (the header is 8 bytes)
 *          when the same-address bit says it is that of the previous event
 *          record of the chunk, as in a loop that posts from one place.
 * The delta is in raw clock units (clock.h) from the lane's current
 * base: the chunk's base, or the last OWNER or TIME record before it.
 * Ids 9 to 31 are never events; four of them are meta records (always with
 * both words) that the reader consumes and never reports; after one, the
 * next event carries its address again (after CPU, the address is kept
 * for the reader, but the writer gives it anyway). */
#define PT_ID_TIME 9u  /* data: u64, the new base */
#define PT_ID_OWNER 10u /* data: struct pt_owner_rec; a new owner took the lane over */
#define PT_ID_IMAGE 11u /* data: struct pt_image_rec and its path; see images.c */
/* data: u32 cpu, u32 0: the CPU of the events that follow, up to the next
 * CPU or OWNER record (PT_CPU_NONE: unknown).  A chunk's records start
 * with the CPU unknown. */
#define PT_ID_CPU 12u
#define PT_CPU_NONE 0xffffffffu
/* CPU numbers a reader takes from a record: below this (Linux's NR_CPUS
 * is at most 8192); any other value reads as unknown. */
#define PT_CPU_LIMIT 65536u
#define PT_CPU_REC_SIZE 24u
static inline int pt_cpu_known(uint32_t cpu) { return cpu < PT_CPU_LIMIT; }

_Static_assert(PT_NEVENT_IDS - 1 <= PT_REC_ID_MASK, "ids fit");
_Static_assert(PT_MAX_DATA_LIMIT <= PT_REC_LEN_MASK, "lengths fit");

/* The largest a record of data_len bytes can be (both words). */
static inline size_t pt_record_size(size_t data_len) { return PT_REC_HDR + ((data_len + 7) & ~(size_t)7); }

#define PT_COMM_SIZE 16

/* Who writes a lane from here on (OWNER record data, chunk header). */
struct pt_owner {
	int32_t pid;
	int32_t tid;      /* kernel thread id */
	uint64_t thread;  /* pthread_t */
	char comm[PT_COMM_SIZE];
};
_Static_assert(sizeof(struct pt_owner) == 32, "owner");

struct pt_owner_rec {
	uint64_t base;    /* raw clock base of the records that follow */
	struct pt_owner owner;
};
_Static_assert(sizeof(struct pt_owner_rec) == 40, "owner record");

/* An executable image the writing process has mapped (posixtrace_set_images):
 * the fixed part, then path_len bytes of path (no terminating null).  A
 * process describes all its images at once, as one set: index 0 starts a
 * new set of that process, replacing the one before. */
#define PT_IMAGE_PATH_MAX 512u
#define PT_BUILD_ID_MAX 32u
struct pt_image_rec {
	uint64_t raw;        /* the writer's clock when the set began: its key */
	uint64_t start, end; /* [start, end) in the process */
	uint64_t bias;       /* dlpi_addr */
	uint16_t index;      /* in its set */
	uint16_t count;      /* images in the set */
	uint16_t path_len;   /* at most PT_IMAGE_PATH_MAX */
	uint8_t build_id_len;
	uint8_t flags;       /* PT_IMAGE_PATH_CUT */
	uint8_t build_id[PT_BUILD_ID_MAX];
};
#define PT_IMAGE_PATH_CUT 1u
_Static_assert(sizeof(struct pt_image_rec) == 72, "image record");
_Static_assert(PT_BUILD_ID_MAX <= POSIXTRACE_BUILD_ID_MAX &&
               PT_IMAGE_PATH_MAX < POSIXTRACE_IMAGE_PATH_MAX, "an image record fits the public one");

/* ---- chunks --------------------------------------------------------------
 * The event space is cut into equal chunks.  Each writer thread fills the
 * chunk at the tail of its lane; the reader follows each lane's chain. */
#define PT_CHUNK_HDR 128u
#define PT_NONE 0xffffffffu /* chunk link: still open; no chunk */

struct pt_chunk {
	/* Line 0, written by the owning writer after each event (release):
	 * (event count << 32) | end offset of the last committed record. */
	_Atomic uint64_t commit;
	/* PT_NONE while the lane's writers may still append; then the next
	 * chunk of the lane.  Stored (release) after the final commit. */
	_Atomic uint32_t next;
	_Atomic uint32_t free_next;  /* link in the free pool */
	/* Bytes of event records in the chunk, stored by the writer that
	 * seals it (the "held" accounting, see pt_stream_hdr.held). */
	_Atomic uint32_t event_bytes;
	uint32_t pad0;
	uint64_t pad1[5];
	/* Line 1, written once when a writer starts the chunk.  A reader
	 * enters the chunk only for the lane it names and only with a
	 * sequence number above those it met before (records.h). */
	uint64_t base;               /* raw clock base of its first records */
	struct pt_owner owner;       /* writer of its first records */
	uint64_t seq;                /* from the stream's chunk_seq, never 0 */
	uint32_t lane;               /* the lane it was started for */
	uint32_t pad2;
	uint64_t pad3;
};
_Static_assert(sizeof(struct pt_chunk) == PT_CHUNK_HDR, "chunk header");
_Static_assert(offsetof(struct pt_chunk, base) == 64, "chunk header lines");

/* ---- lanes ---------------------------------------------------------------
 * A lane is a sequence of records written by one thread at a time, in time
 * order.  A thread claims a lane on its first event and gives it back when
 * it exits; the next thread that claims it continues in its open chunk after
 * an OWNER record, so finished threads and processes leave no partly filled
 * chunk behind.  A lane whose owner process died is taken back. */

/* The head: where the oldest unread record of a lane is.  Everything that
 * moves it (the reader consuming, the reader retiring a chunk, a LOOP writer
 * stealing the oldest chunk, clear) is one compare-and-swap: chunk index + 1
 * (20 bits, 0: the lane has no unread chunk), offset (24 bits), tag (20
 * bits) bumped when the chunk changes.  Zeroed memory is an empty lane, so
 * lanes need no initialisation when their page is committed. */
#define PT_HEAD_CHUNK_MASK 0xfffffu
#define PT_HEAD_OFF_SHIFT 20
#define PT_HEAD_OFF_MASK 0xffffffu
#define PT_HEAD_TAG_SHIFT 44
#define PT_MAX_CHUNKS 0xffff0u
#define PT_MAX_CHUNK_SIZE (8u << 20)
_Static_assert(PT_MAX_CHUNKS < PT_HEAD_CHUNK_MASK, "chunk index fits the head");
_Static_assert(PT_MAX_CHUNK_SIZE <= PT_HEAD_OFF_MASK + 1, "offset fits the head");

static inline uint64_t pt_head_pack(uint32_t chunk, uint32_t off, uint32_t tag)
{
	uint64_t c = chunk == PT_NONE ? 0 : (uint64_t)chunk + 1;
	return (c & PT_HEAD_CHUNK_MASK) | ((uint64_t)(off & PT_HEAD_OFF_MASK) << PT_HEAD_OFF_SHIFT) |
	       ((uint64_t)(tag & 0xfffffu) << PT_HEAD_TAG_SHIFT);
}
static inline uint32_t pt_head_chunk(uint64_t h)
{
	uint32_t c = (uint32_t)(h & PT_HEAD_CHUNK_MASK);
	return c ? c - 1 : PT_NONE;
}
static inline uint32_t pt_head_off(uint64_t h) { return (uint32_t)(h >> PT_HEAD_OFF_SHIFT) & PT_HEAD_OFF_MASK; }
static inline uint32_t pt_head_tag(uint64_t h) { return (uint32_t)(h >> PT_HEAD_TAG_SHIFT); }

struct pt_lane {
	_Atomic uint64_t head;
	/* 0: free; else the owner process, pid << 32 | low bits of its start
	 * time, so that a lane of a dead process can be taken back. */
	_Atomic uint64_t owner;
	_Atomic uint32_t tail1;      /* the lane's open chunk + 1; 0 before the first */
	_Atomic uint32_t free_next1; /* link in the stack of free lanes: lane + 1, 0 ends it */
	/* Events its writers attempted while the stream was full: counted
	 * here, by the writing thread alone, not on a line all writers share. */
	_Atomic uint64_t lost;
	/* The pid namespace of the owner (an inode number, 0 unknown), stored
	 * before owner: its pid means something only in that namespace. */
	_Atomic uint64_t owner_ns;
	uint64_t pad[3];
};
_Static_assert(sizeof(struct pt_lane) == 64, "lane");

/* ---- the stream header ---------------------------------------------------- */

#define PT_STREAM_MAGIC 0x325254534d525450ull /* "PTRMSTR2" */
#define PT_LANES_PER_PAGE 64u

/* stream states (hdr->state) */
enum { PT_ST_SUSPENDED = 0, PT_ST_RUNNING = 1, PT_ST_FULL = 2, PT_ST_DEAD = 3 };
/* state_watching of a running stream that watches no id. */
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define PT_ST_RUNNING_UNWATCHED ((uint64_t)PT_ST_RUNNING)
#else
#define PT_ST_RUNNING_UNWATCHED ((uint64_t)PT_ST_RUNNING << 32)
#endif
/* clocks of raw timestamps */
enum { PT_CLOCK_MONO = 1, PT_CLOCK_TSC = 2 };

/* The stream's attributes as created (the public trace_attr_t's content). */
struct pt_attr {
	uint32_t magic;
	int32_t stream_policy;
	int32_t stream_policy_set; /* 0: default, chosen at create time */
	int32_t log_policy;
	int32_t inheritance;
	uint32_t log_policy_set; /* 1: set by posix_trace_attr_setlogfullpolicy */
	uint64_t stream_size;
	uint64_t max_data_size;
	uint64_t log_size;
	int64_t clockres_sec, clockres_nsec;
	int64_t create_sec, create_nsec;
	char name[TRACE_NAME_MAX];
	char genversion[TRACE_NAME_MAX];
	/* FLUSH: how long a writer that finds the stream full waits for the
	 * keeper (posixtrace_attr_setblocking); 0: never. */
	uint64_t block_ns;
};
_Static_assert(sizeof(struct pt_attr) <= sizeof(trace_attr_t), "attr fits");

struct pt_stream_hdr {
	/* Immutable after creation; every process keeps its own validated
	 * copy (struct pt_map, stream.h) and never reads these again. */
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint64_t total_size;     /* the memfd's sealed size */
	uint64_t names_off, lanes_off, chunks_off;
	uint32_t max_lanes, max_chunks;
	uint32_t base_chunks;    /* committed at creation */
	uint32_t chunk_size;
	uint32_t clock;          /* PT_CLOCK_* */
	uint32_t grow_chunks;    /* chunks committed per growth step */
	uint64_t event_room;     /* stream-min-size: the bytes of events held before full */
	uint64_t base_mono_ns;   /* CLOCK_MONOTONIC at creation ... */
	uint64_t base_real_ns;   /* ... and CLOCK_REALTIME at the same instant */
	struct pt_attr attr;

	/* Read by every writer per event; written only by control calls.
	 * The recording path reads state and watching as one word
	 * (state_watching == PT_ST_RUNNING_UNWATCHED: running, nothing
	 * watched), each is written alone. */
	_Alignas(128) union {
		struct {
			_Atomic uint32_t state;
			/* Set once a filter or a trigger is (pt_watch_store),
			 * never cleared: while it is 0, no id is watched, and
			 * the recording path tests it with state instead of the
			 * id's watch word. */
			_Atomic uint32_t watching;
		};
		_Atomic uint64_t state_watching;
	};
	/* filter | trigger: the one word per id the recording path tests
	 * once watching is set; only an id whose bit is set looks at the two
	 * apart. */
	_Alignas(64) _Atomic uint64_t watch[PT_NEVENT_IDS / 64];
	/* What <trace.h>'s macro reads through its mirror of this page. */
	_Alignas(64) _Atomic uint64_t filter[PT_NEVENT_IDS / 64];
	/* Ids whose events ask the keeper for a snapshot
	 * (posixtrace_set_trigger); read only once watch says so. */
	_Atomic uint64_t trigger[PT_NEVENT_IDS / 64];

	/* Reader wake-up: a reader about to sleep sets waiters; a writer that
	 * sees it bumps futex_seq and wakes. */
	_Alignas(128) _Atomic uint32_t futex_seq;
	_Atomic uint32_t waiters;

	/* Free chunk pool (Treiber stack, tagged top), touched once per chunk;
	 * held: bytes of events in sealed, unread chunks. */
	_Alignas(128) _Atomic uint64_t free_top;
	_Atomic uint32_t free_count;
	_Atomic uint32_t committed_chunks;
	_Atomic uint64_t held;
	/* The sequence number of the last chunk started (pt_chunk.seq). */
	_Atomic uint64_t chunk_seq;

	/* Lanes: created so far (a high-water mark), committed lane slots,
	 * the stack of free lanes (tag << 32 | lane + 1, 0: empty).  Touched
	 * once per thread. */
	_Alignas(128) _Atomic uint32_t nlanes;
	_Atomic uint32_t committed_lanes;
	_Atomic uint64_t free_lanes;

	/* Loss accounting, touched only when events are lost. */
	_Alignas(128) _Atomic uint32_t overrun;   /* reset by get_status */
	_Atomic uint32_t full;
	_Atomic uint64_t lost_total;              /* cumulative; plus the lanes' */
	_Atomic uint64_t full_ts;                 /* UNTIL_FULL: stop time (raw) */
	_Atomic int32_t full_pid;                 /* ... and who found it full */
	_Atomic uint32_t ended_full;              /* shut down while full */
	_Atomic uint64_t full_pc;
	/* Processes that could map only part of the stream (RLIMIT_AS): the
	 * chunks past their mapping are full for them (pt_stream_map_fd). */
	_Atomic uint64_t short_maps;
	/* Events whose writers waited for room (posixtrace_attr_setblocking),
	 * the nanoseconds they waited, and those of them that still found no
	 * room: counts only. */
	_Atomic uint64_t waited_events;
	_Atomic uint64_t waited_ns;
	_Atomic uint64_t waited_lost;

	/* A pending POSIX_TRACE_OVERFLOW: count and first lost time (raw).
	 * The reader looks at it for every event, so it is away from the
	 * counters above, which writers hit while a stream is full. */
	_Alignas(128) _Atomic uint64_t ovf_count;
	_Atomic uint64_t ovf_ts;

	/* Trace Log: a writer asks the keeper for a flush. */
	_Alignas(128) _Atomic uint32_t keeper_wake;  /* futex the keeper sleeps on */
	_Atomic uint32_t keeper_kicked;
	_Atomic int32_t kick_pid;
	_Atomic uint64_t kick_pc;
	/* Events of a trigger's type recorded, and the last one's writer:
	 * hints, as the kick is (the keeper's trigger_snapshot). */
	_Atomic uint32_t trigger_hits;
	_Atomic int32_t trigger_pid;
	_Atomic uint64_t trigger_pc;
	/* Nonzero: writers describe their processes' images at chunk starts
	 * (posixtrace_set_images). */
	_Atomic uint32_t images;
	/* The type of the last event of a trigger's type: a hint, for the
	 * keeper's hold-off per type (a stream made before it was added
	 * leaves it 0: one hold-off for every type). */
	_Atomic uint32_t trigger_id;
	/* Writers waiting for room set room_waiters; the keeper (a drain) and
	 * a stop bump room_seq, and wake them only when someone waits. */
	_Atomic uint32_t room_seq;
	_Atomic uint32_t room_waiters;

	_Alignas(64) _Atomic uint8_t name_valid[TRACE_USER_EVENT_MAX];
};
_Static_assert(offsetof(struct pt_stream_hdr, watching) ==
                       offsetof(struct pt_stream_hdr, state) + 4 &&
               offsetof(struct pt_stream_hdr, state_watching) ==
                       offsetof(struct pt_stream_hdr, state),
               "state and watching are one word");

/* ---- the process control block ------------------------------------------
 * Every process that loads the library makes one (a sealed memfd).  It holds
 * the word posix_trace_event() tests and the slots through which a
 * controller offers a stream; the stream itself is handed over through the
 * process's channel (a socket pair), see src/channel.c. */
#define PT_PCB_MAGIC 0x3242435054505450ull /* "PTPTPCB2" */
#define PT_PCB_SLOTS 64
enum { PT_SLOT_FREE = 0, PT_SLOT_OFFERED = 1, PT_SLOT_ATTACHED = 2 };

struct pt_pcb_slot {
	_Atomic uint32_t state;
	_Atomic uint32_t gen;     /* bumped by each offer */
	int32_t fd;               /* the process's own fd of the attached stream (exec) */
	uint32_t pad;
	uint64_t ino;             /* ... and its inode, checked before the fd is used */
};

struct pt_fdref {             /* a descriptor a process keeps across exec */
	int32_t fd;
	uint32_t pad;
	uint64_t ino;
};

struct pt_pcb {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
	int32_t pid;
	uint32_t pad;
	uint64_t starttime;
	struct pt_fdref channel_tx;   /* the end a controller pulls with pidfd_getfd */
	struct pt_fdref channel_rx;   /* the end the process receives on */
	struct pt_fdref registry;
	/* The pid of a descendant looking at the channel's queue (a lock:
	 * the peek offset belongs to the socket all of them share). */
	_Atomic int32_t peek_owner;
	uint32_t pad2;
	/* Bit i: slot i holds a stream that may be running.  The only load
	 * of posix_trace_event when nothing is traced. */
	_Alignas(128) _Atomic uint64_t armed;
	_Alignas(128) struct pt_pcb_slot slots[PT_PCB_SLOTS];
};
_Static_assert(PT_PCB_SLOTS == 64, "armed is a 64-bit mask");

/* ---- the name registry -----------------------------------------------------
 * A process tree traced with inheritance shares one, so that a name means
 * one id everywhere.  Entry i is user event id 32 + i (entry 0 unused). */
#define PT_REGISTRY_MAGIC 0x3347455254505450ull /* "PTPTREG3" */
/* The index of names by hash: open addressing, linear probing, never a
 * deletion; a slot holds an entry (0: empty).  Twice the entries, so
 * probes stay short. */
#define PT_REG_HASH_SLOTS 2048u
_Static_assert(PT_REG_HASH_SLOTS >= 2 * TRACE_USER_EVENT_MAX &&
                   (PT_REG_HASH_SLOTS & (PT_REG_HASH_SLOTS - 1)) == 0,
               "a power of two, at least twice the entries");
struct pt_registry {
	uint64_t magic;
	uint32_t size;
	_Atomic uint32_t next_name;
	_Atomic uint8_t name_valid[TRACE_USER_EVENT_MAX];
	char names[TRACE_USER_EVENT_MAX][PT_NAME_SIZE];
	/* The entry that is a name's id: the first one CASed into an empty
	 * slot of its probe sequence. */
	_Atomic uint16_t by_hash[PT_REG_HASH_SLOTS];
};

/* The name of entry entry_untrusted (an index read from by_hash, which
 * every process of the tree writes), or NULL: 0 and the entries past the
 * table are none.  Whether it is published is name_valid's to say. */
static inline char *pt_reg_entry(struct pt_registry *reg, uint32_t entry_untrusted)
{
	if (entry_untrusted == 0 || entry_untrusted >= TRACE_USER_EVENT_MAX)
		return NULL;
	return reg->names[entry_untrusted];
}

#endif
