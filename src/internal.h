/*
 * Internal interfaces of libposixtrace.  Nothing here is exported.
 *
 * A stream is one shared mapping laid out with offsets only (see
 * docs/DESIGN.md): a header, a table of writer lanes, a table of event
 * names, then an array of equal-sized chunks.  Each writer thread owns one
 * lane per stream and fills chunks taken from a shared free pool; the reader
 * follows each lane's chain of chunks and merges lanes by timestamp.
 */
#ifndef PT_INTERNAL_H
#define PT_INTERNAL_H

#include <stdatomic.h>
#include <stdint.h>
#include <stddef.h>
#include <pthread.h>
#include <sys/types.h>
#include <time.h>
/* The public API is the only thing exported (see libposixtrace.map). */
#pragma GCC visibility push(default)
#include "../include/trace.h"
#pragma GCC visibility pop

#define PT_HIDDEN __attribute__((visibility("hidden")))

/* A full fence.  ThreadSanitizer does not model fences (gcc refuses them);
 * a sequentially consistent read-modify-write is a full barrier on x86 and
 * is understood by the sanitizer. */
#if defined(__SANITIZE_THREAD__)
#define pt_full_fence()                                                              \
	do {                                                                         \
		static _Atomic int pt_fence_word_;                                   \
		atomic_fetch_add_explicit(&pt_fence_word_, 0, memory_order_seq_cst); \
	} while (0)
#else
#define pt_full_fence() atomic_thread_fence(memory_order_seq_cst)
#endif
#define PT_LIKELY(x) __builtin_expect(!!(x), 1)
#define PT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Copies a string, truncated to fit, always terminated. */
static inline void pt_copy_str(char *dst, size_t size, const char *src)
{
	size_t n = 0;
	while (n + 1 < size && src[n])
		n++;
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
	dst[n] = '\0';
}

/* ---- event type identifiers ------------------------------------------ */

#define PT_NEVENT_IDS 1024u         /* bits in trace_event_set_t */
#define PT_SYS_FIRST 1u             /* POSIX_TRACE_START */
#define PT_SYS_LAST 8u              /* POSIX_TRACE_ERROR */
#define PT_USER_FIRST 32u           /* POSIX_TRACE_UNNAMED_USER_EVENT */
#define PT_NAME_SIZE (TRACE_EVENT_NAME_MAX + 1)

_Static_assert(PT_NEVENT_IDS - PT_USER_FIRST == TRACE_USER_EVENT_MAX, "user id range");
_Static_assert(sizeof(trace_event_set_t) * 8 == PT_NEVENT_IDS, "event set size");

PT_HIDDEN const char *pt_system_event_name(trace_event_id_t id);

/* ---- attributes -------------------------------------------------------- */

#define PT_ATTR_MAGIC 0x70744154u
#define PT_DEFAULT_STREAM_SIZE (4u << 20)
#define PT_DEFAULT_MAX_DATA 1024u
#define PT_MAX_DATA_LIMIT (1u << 20)
#define PT_DEFAULT_LOG_SIZE (64u << 20)
#define PT_GENVERSION "posixtrace 0.1.0"

struct pt_attr {
	uint32_t magic;
	int32_t stream_policy;
	int32_t stream_policy_set; /* 0: default, chosen at create time */
	int32_t log_policy;
	int32_t inheritance;
	uint32_t reserved;
	uint64_t stream_size;
	uint64_t max_data_size;
	uint64_t log_size;
	int64_t clockres_sec, clockres_nsec;
	int64_t create_sec, create_nsec;
	char name[TRACE_NAME_MAX];
	char genversion[TRACE_NAME_MAX];
};
_Static_assert(sizeof(struct pt_attr) <= sizeof(trace_attr_t), "attr fits");

PT_HIDDEN void pt_attr_defaults(struct pt_attr *a);
PT_HIDDEN int pt_attr_valid(const trace_attr_t *attr);
static inline size_t pt_record_size(size_t data_len)
{
	return 24 + ((data_len + 7) & ~(size_t)7);
}

/* ---- stream memory ----------------------------------------------------- */

#define PT_STREAM_MAGIC 0x315254534d525450ull /* "PTRMSTR1" */
#define PT_LAYOUT_VERSION 1u
#define PT_MAX_LANES 256u
#define PT_GUARANTEED_WRITERS 16u
#define PT_MAX_MEMBERS 1024u
#define PT_CHUNK_HDR 64u
#define PT_NONE 0xffffffffu  /* chunk link: not sealed yet / empty */
#define PT_END 0xfffffffeu   /* chunk link: lane closed after this chunk */

/* stream states (hdr->state) */
enum { PT_ST_SUSPENDED = 0, PT_ST_RUNNING = 1, PT_ST_FULL = 2, PT_ST_DEAD = 3 };
/* lane states */
enum { PT_LANE_FREE = 0, PT_LANE_ACTIVE = 1, PT_LANE_CLOSED = 2 };

/* A lane's head: where its oldest unread event is.  Packed so that the
 * reader's "consume one event" and a looping writer's "steal the oldest
 * chunk" are each one compare-and-swap: chunk index (20 bits), offset in
 * the chunk (24 bits), and a tag (20 bits) bumped whenever the chunk
 * changes, against ABA. */
#define PT_HEAD_EMPTY 0xfffffu
static inline uint64_t pt_head_pack(uint32_t chunk, uint32_t off, uint32_t tag)
{
	return (uint64_t)(chunk & 0xfffffu) | ((uint64_t)(off & 0xffffffu) << 20) |
	       ((uint64_t)(tag & 0xfffffu) << 44);
}
static inline uint32_t pt_head_chunk(uint64_t h) { return (uint32_t)(h & 0xfffffu); }
static inline uint32_t pt_head_off(uint64_t h) { return (uint32_t)((h >> 20) & 0xffffffu); }
static inline uint32_t pt_head_tag(uint64_t h) { return (uint32_t)(h >> 44); }

/* One recorded event; data follows, padded to 8 bytes. */
struct pt_record {
	uint32_t data_len;
	uint16_t id;
	uint16_t flags; /* PT_REC_TRUNCATED */
	uint64_t ts;    /* nanoseconds of the stream clock */
	uint64_t pc;
};
#define PT_REC_TRUNCATED 1u
_Static_assert(sizeof(struct pt_record) == 24, "record header");

struct pt_chunk {
	/* Written by the owning writer after each event, release order:
	 * (event count << 32) | end offset of the last committed event. */
	_Atomic uint64_t commit;
	/* PT_NONE while the owner may still write; then the next chunk of
	 * the lane, or PT_END.  Stored (release) after the final commit. */
	_Atomic uint32_t next;
	_Atomic uint32_t free_next; /* link in the free pool */
	_Atomic uint64_t first_ts;  /* timestamp of the first event */
	int32_t pid;
	uint32_t lane;
	uint64_t thread;
	uint64_t reserved[3];
};
_Static_assert(sizeof(struct pt_chunk) == PT_CHUNK_HDR, "chunk header");

struct pt_lane {
	_Atomic uint32_t state;
	uint32_t reserved;
	_Atomic uint64_t head;
	/* Events its writers attempted while the stream was full: counted
	 * here, by the writing thread alone, rather than on a line all
	 * writers would share.  Cumulative over the lane's life. */
	_Atomic uint64_t lost;
	uint64_t pad[5];
};
_Static_assert(sizeof(struct pt_lane) == 64, "lane");

struct pt_stream_hdr {
	/* Immutable after creation; a reader validates them before use. */
	uint64_t magic;
	uint32_t version;
	uint32_t hdr_size;
	uint64_t total_size;
	uint64_t lanes_off;
	uint64_t names_off;
	uint64_t chunks_off;
	uint32_t nlanes;
	uint32_t nchunks;
	uint32_t chunk_size;
	int32_t target_pid;
	uint64_t target_start;     /* /proc start time: pid reuse is noticed */
	int32_t controller_pid;
	int32_t keeper_pid;
	uint64_t controller_start;
	uint64_t keeper_start;
	uint64_t base_mono_ns; /* stream clock at creation ... */
	uint64_t base_real_ns; /* ... and CLOCK_REALTIME at the same instant */
	struct pt_attr attr;

	/* Read by every writer on every event; written only by control
	 * operations, so the lines stay shared in all caches. */
	_Alignas(128) _Atomic uint32_t state;
	_Atomic uint32_t lanes_hwm;
	/* Where the target attached the stream last: its block's token and
	 * slot.  offered_token: the block it was offered to at creation (0:
	 * the target had not loaded the library; it joins by name at load). */
	_Atomic uint64_t pcb_token;
	_Atomic int32_t pcb_slot;
	uint64_t offered_token;
	_Alignas(128) _Atomic uint64_t filter[PT_NEVENT_IDS / 64];

	/* Reader wake-up: a reader that is about to sleep sets waiters; a
	 * writer that sees it bumps futex_seq and wakes. */
	_Alignas(128) _Atomic uint32_t futex_seq;
	_Atomic uint32_t waiters;

	/* Free chunk pool (Treiber stack, tagged top), touched once per chunk. */
	_Alignas(128) _Atomic uint64_t free_top;
	_Atomic uint32_t free_count;

	/* Loss accounting, touched only when events are lost. */
	_Alignas(128) _Atomic uint32_t overrun;   /* reset by get_status */
	_Atomic uint32_t full;
	_Atomic uint64_t lost_total;              /* cumulative; plus the lanes' */
	_Atomic uint64_t full_ts;                 /* UNTIL_FULL: stop time */
	_Atomic uint32_t ended_full;              /* shut down while full */

	/* LOOP: a pending POSIX_TRACE_OVERFLOW.  The reader looks at it for
	 * every event, so it is kept away from the counters above, which
	 * writers hit for every event lost while the stream is full. */
	_Alignas(128) _Atomic uint64_t ovf_count;
	_Atomic uint64_t ovf_ts;

	/* Trace Log: shared by the controller and the stream's keeper
	 * process (src/keeper.c). */
	_Alignas(128) _Atomic uint32_t flush_req;     /* bumped by each flush request */
	_Atomic uint32_t flush_done;    /* the last request the keeper finished */
	_Atomic uint32_t flush_error;   /* first error, reset by get_status */
	_Atomic uint32_t log_full;
	_Atomic uint32_t log_overrun;   /* reset by get_status */
	_Atomic uint32_t keeper_ack;    /* futex: bumped after each command */
	_Atomic uint32_t keeper_wake;   /* futex the keeper sleeps on */
	_Atomic uint32_t keeper_kicked; /* a writer asked for a flush */

	_Alignas(64) _Atomic uint8_t name_valid[TRACE_USER_EVENT_MAX];

	/* POSIX_TRACE_INHERITED: the processes traced in the stream.  An
	 * exec'd or spawned process joins at load when it, or its parent, is
	 * a member. */
	_Alignas(64) _Atomic uint32_t nmembers;
	struct pt_member {
		_Atomic int32_t pid;
		uint32_t reserved;
		_Atomic uint64_t start;
	} members[PT_MAX_MEMBERS];
};

/* A mapping of a stream, with its geometry validated once and kept in
 * private memory: what the mapping itself says later is not trusted. */
struct pt_map {
	unsigned char *base;
	size_t size;
	int fd;
	uint64_t lanes_off, names_off, chunks_off;
	uint32_t nlanes, nchunks, chunk_size;
	uint32_t max_data;
	uint64_t base_mono_ns, base_real_ns;
};

static inline struct pt_stream_hdr *pt_hdr(const struct pt_map *m)
{
	return (struct pt_stream_hdr *)m->base;
}
static inline struct pt_lane *pt_lane_at(const struct pt_map *m, uint32_t i)
{
	return (struct pt_lane *)(m->base + m->lanes_off) + i;
}
static inline struct pt_chunk *pt_chunk_at(const struct pt_map *m, uint32_t i)
{
	return (struct pt_chunk *)(m->base + m->chunks_off + (size_t)i * m->chunk_size);
}
static inline char *pt_name_at(const struct pt_map *m, uint32_t user_index)
{
	return (char *)(m->base + m->names_off) + (size_t)user_index * PT_NAME_SIZE;
}

PT_HIDDEN int pt_stream_map_create(const struct pt_attr *attr, pid_t target, int fd,
                                   struct pt_map *out);
PT_HIDDEN int pt_stream_map_open(int fd, struct pt_map *out);
PT_HIDDEN int pt_stream_map_check(const struct pt_map *m);
PT_HIDDEN void pt_stream_unmap(struct pt_map *m);
PT_HIDDEN uint32_t pt_pool_pop(const struct pt_map *m);
PT_HIDDEN void pt_pool_push(const struct pt_map *m, uint32_t chunk);
PT_HIDDEN void pt_wake_readers(struct pt_stream_hdr *h);
PT_HIDDEN uint64_t pt_stream_lost(const struct pt_map *m);
PT_HIDDEN void pt_stream_end(struct pt_stream_hdr *h);
PT_HIDDEN void pt_stream_set_name(const struct pt_map *m, trace_event_id_t id,
                                  const char *name);
PT_HIDDEN int pt_stream_get_name(const struct pt_map *m, trace_event_id_t id,
                                 char *out);
static inline uint64_t pt_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
PT_HIDDEN void pt_ns_to_timespec(const struct pt_map *m, uint64_t ns,
                                 struct timespec *ts);

/* ---- the process control block (src/pcb.c) ------------------------------ */

#define PT_PCB_MAGIC 0x3142435054505450ull /* "PTPTPCB1" */
enum { PT_SLOT_FREE = 0, PT_SLOT_CLAIMED = 1, PT_SLOT_OFFERED = 2, PT_SLOT_ATTACHED = 3 };

struct pt_pcb_slot {
	_Atomic uint32_t state;
	_Atomic uint32_t gen;     /* bumped by each offer */
	uint32_t reserved[2];
	char name[48];            /* shm name of a stream offered by a controller */
};

struct pt_pcb {
	uint64_t magic;
	uint32_t version;
	uint32_t size;
	int32_t pid;
	uint32_t reserved;
	uint64_t starttime;
	uint64_t token;
	/* Bit i: slot i holds a stream that may be running.  The only load
	 * of posix_trace_event when nothing is traced. */
	_Alignas(128) _Atomic uint64_t armed;
	_Alignas(128) struct pt_pcb_slot slots[TRACE_SYS_MAX];
	int32_t registry_fd;      /* the process's fd of its name registry */
};

/* The name registry of a process tree: a memfd shared by a process and its
 * fork children (and, through an inherited fd, by exec'd children traced
 * with inheritance), so that all of them map a name to one id.  Entry i is
 * user event id 32 + i (entry 0 unused). */
#define PT_REGISTRY_MAGIC 0x3147455254505450ull /* "PTPTREG1" */
struct pt_registry {
	uint64_t magic;
	uint32_t size;
	_Atomic uint32_t next_name;
	_Atomic uint8_t name_valid[TRACE_USER_EVENT_MAX];
	char names[TRACE_USER_EVENT_MAX][PT_NAME_SIZE];
};

/* A controller's view of a target's block and registry. */
struct pt_pcbref {
	struct pt_pcb *pcb;
	struct pt_registry *reg;
	uint64_t token;
	int slot;
	uint32_t gen;
};

PT_HIDDEN uint64_t pt_proc_starttime(pid_t pid);
PT_HIDDEN uint64_t pt_proc_stat(pid_t pid, pid_t *ppid);
PT_HIDDEN int pt_stream_has_ancestor(const struct pt_stream_hdr *h);
PT_HIDDEN void pt_pcb_create(void);
PT_HIDDEN int pt_stream_add_member(const struct pt_map *m, pid_t pid, uint64_t start);
PT_HIDDEN int pt_stream_is_member(const struct pt_stream_hdr *h, pid_t pid, uint64_t start);
PT_HIDDEN void pt_pcb_recreate_after_fork(void);
PT_HIDDEN void pt_registry_open(void);
PT_HIDDEN void pt_registry_use_inherited(void);
PT_HIDDEN void pt_registry_drop_inherited(void);
PT_HIDDEN void pt_registry_copy_after_fork(void);
PT_HIDDEN trace_event_id_t pt_reg_register(struct pt_registry *reg, const char *name);
PT_HIDDEN int pt_reg_name(struct pt_registry *reg, trace_event_id_t id, char *out);
PT_HIDDEN uint32_t pt_reg_count(struct pt_registry *reg);
PT_HIDDEN void pt_reg_to_stream(struct pt_registry *reg, const struct pt_map *m, uint32_t from);
PT_HIDDEN void pt_reg_adopt_stream_names(struct pt_registry *reg, const struct pt_map *m);
PT_HIDDEN int pt_may_trace(pid_t pid);
PT_HIDDEN int pt_pcb_attach(pid_t pid, uint64_t starttime, struct pt_pcbref *out);
PT_HIDDEN void pt_pcb_detach(struct pt_pcbref *ref);
PT_HIDDEN int pt_pcb_offer(struct pt_pcbref *ref, const char *shm_name);
PT_HIDDEN void pt_pcb_arm(struct pt_pcbref *ref, int on);
PT_HIDDEN void pt_pcb_withdraw(struct pt_pcbref *ref);
PT_HIDDEN void pt_stream_shm_name(char *out, size_t len, pid_t target, uint64_t tstart,
                                  uint32_t seq);
PT_HIDDEN int pt_controller_alive(const struct pt_stream_hdr *h);
PT_HIDDEN void pt_reclaim_stale_streams(void);

/* ---- the process: streams that trace it, its threads, its names ------- */

/* A stream this process records into (process-local). */
struct pt_attached {
	_Atomic(struct pt_map *) map; /* NULL when the slot is free */
	uint64_t gen;                 /* changes each time the slot is reused */
	uint32_t offer_gen;           /* pcb slot gen this mapping came from */
	int traced;                   /* this process records into it */
	int inherited;                /* POSIX_TRACE_INHERITED: fork children too */
	struct pt_map own;            /* storage for a stream attached as target */
};

struct pt_wlane {              /* a thread's writing position in one stream */
	uint64_t gen;          /* pt_attached.gen it belongs to; 0 = none */
	unsigned char *chunk;  /* current chunk */
	uint32_t lane;
	uint32_t off;          /* end of the last committed event */
	uint32_t count;        /* events committed in the chunk */
	uint32_t cap;          /* chunk size */
};

struct pt_thread {
	/* Odd while the thread is inside posix_trace_event: a stream is not
	 * unmapped until every thread has been seen outside (grace period). */
	_Alignas(128) _Atomic uint64_t cs_seq;
	pthread_t self;
	struct pt_thread *next;
	struct pt_wlane lanes[TRACE_SYS_MAX];
};

struct pt_process {
	/* This process's control block (pcb_fallback until it exists); its
	 * armed word is what posix_trace_event() tests. */
	_Alignas(128) struct pt_pcb *pcb;
	int pcb_fd;
	struct pt_registry *reg;       /* names (reg_fallback until it exists) */
	int reg_fd;
	int inherited_reg_fd;          /* a parent's registry passed down by exec */
	_Alignas(128) struct pt_attached attached[TRACE_SYS_MAX];
	pid_t pid;
	uint64_t next_gen;
	int use_membarrier;
	int system_writer;             /* keeper: events carry pid 0, thread 0 */
	pthread_mutex_t lock;          /* attached[], threads, names */
	struct pt_thread *threads;
	pthread_key_t thread_key;
	pthread_mutex_t attach_lock;   /* a writer attaching an offered stream */
	uint32_t names_synced;         /* registry entries copied into streams */
	struct pt_pcb pcb_fallback;
	struct pt_registry reg_fallback;
};

PT_HIDDEN extern struct pt_process pt_proc;

PT_HIDDEN void pt_init(void);
PT_HIDDEN int pt_attach(struct pt_map *m, int traced, const char *name);
PT_HIDDEN void pt_detach(int slot);
PT_HIDDEN void pt_arm(int slot, int on);
PT_HIDDEN void pt_attach_offered(int slot);
PT_HIDDEN void pt_sync_names(void);
PT_HIDDEN void pt_join_named_streams(void);
PT_HIDDEN void pt_barrier(void);
PT_HIDDEN void pt_barrier_locked(void);
PT_HIDDEN int pt_fence_all(int global);
PT_HIDDEN int pt_register_name(const char *name, trace_event_id_t *id);
PT_HIDDEN int pt_register_name_in(struct pt_registry *reg, const char *name, trace_event_id_t *id);
PT_HIDDEN void pt_seed_names(const struct pt_map *m);

/* Writes one event into a stream on behalf of the calling thread.
 * force: record even when the stream is not running (START, STOP).
 * Returns 0 if recorded, -1 if filtered, suspended or lost. */
PT_HIDDEN int pt_write_event(int slot, trace_event_id_t id, const void *data,
                             size_t len, uint64_t ts, uintptr_t pc, int force);
static inline int pt_filtered(const struct pt_stream_hdr *h, trace_event_id_t id)
{
	uint64_t w = atomic_load_explicit(&h->filter[id / 64], memory_order_relaxed);
	return (int)((w >> (id % 64)) & 1);
}

/* ---- controller handles (trace_id_t) ----------------------------------- */

#define PT_PENDING_MAX 8

struct pt_synth {               /* an event the reader reports itself */
	trace_event_id_t id;
	uint64_t ts;
	uint32_t len;
	unsigned char data[sizeof(trace_event_set_t)];
};

enum { PT_H_ACTIVE = 1, PT_H_LOG = 2 };
struct pt_logreader;

struct pt_commit_cache {         /* the reader's last view of a lane's chunk */
	uint64_t key;             /* head without its offset; UINT64_MAX: none */
	uint32_t end;
};

struct pt_handle {
	pthread_mutex_t lock;
	int kind;                  /* PT_H_ACTIVE or PT_H_LOG */
	struct pt_logreader *log;  /* PT_H_LOG: the pre-recorded stream */
	pid_t keeper;              /* active stream with log: its keeper */
	int keeper_ctl;            /* write end of the keeper's command pipe */
	int has_log;               /* active stream with a log */
	int remote;                /* the stream traces another process */
	pid_t target_pid;
	uint64_t target_start;
	struct pt_pcbref target;   /* the target's control block, if reached */
	char shm_name[48];         /* named stream: its shared memory name */
	int named;                 /* remote, or traced with inheritance */
	pthread_cond_t idle;
	int in_use;
	int dying;
	uint32_t gen;
	int slot;                  /* index in pt_proc.attached */
	struct pt_map map;
	int readers;               /* threads inside a getnext call */
	uint32_t typelist_pos;
	int resume_pending;
	int end_reported;          /* OVERFLOW and STOP of a stream ended full */
	uint64_t lost_seen;        /* pt_stream_lost() at the last get_status */
	uint32_t npending;
	struct pt_synth pending[PT_PENDING_MAX];
	unsigned char broken[PT_MAX_LANES];
	struct pt_commit_cache commit_cache[PT_MAX_LANES];
};

PT_HIDDEN struct pt_handle *pt_handle_get(trace_id_t trid, int kinds);
PT_HIDDEN struct pt_handle *pt_handle_alloc(void);
PT_HIDDEN trace_id_t pt_handle_publish(struct pt_handle *h);
PT_HIDDEN void pt_handle_release(struct pt_handle *h);
PT_HIDDEN void pt_handle_put(struct pt_handle *h);
PT_HIDDEN void pt_handles_after_fork(void);

/* reader */
PT_HIDDEN int pt_read_next(struct pt_handle *h, struct posix_trace_event_info *ev,
                           void *data, size_t num_bytes, size_t *data_len);
PT_HIDDEN void pt_discard_all(struct pt_handle *h);

/* Trace Log: the keeper process of an active stream with log */
PT_HIDDEN int pt_log_check_fd(int fd, int log_policy, int *seekable);
PT_HIDDEN int pt_keeper_start(struct pt_handle *h, int fd, int seekable);
PT_HIDDEN int pt_keeper_command(struct pt_handle *h, char cmd);
PT_HIDDEN int pt_keeper_finish(struct pt_handle *h);
PT_HIDDEN int pt_forking_keeper(void);
PT_HIDDEN void pt_remote_abandon(struct pt_handle *h);
PT_HIDDEN void pt_handle_forget_map(const struct pt_map *m);
PT_HIDDEN void pt_keeper_kick(struct pt_stream_hdr *h);
/* Trace Log: pre-recorded streams */
PT_HIDDEN int pt_logreader_next(struct pt_handle *h, struct posix_trace_event_info *ev,
                                void *data, size_t num_bytes, size_t *data_len);
PT_HIDDEN int pt_logreader_name(struct pt_handle *h, trace_event_id_t id, char *out);
PT_HIDDEN int pt_logreader_typelist(struct pt_handle *h, trace_event_id_t *id);
PT_HIDDEN void pt_logreader_attr(struct pt_handle *h, trace_attr_t *attr);
PT_HIDDEN void pt_logreader_status(struct pt_handle *h, struct posix_trace_status_info *st);
PT_HIDDEN void pt_logreader_free(struct pt_handle *h);
PT_HIDDEN trace_event_id_t pt_typelist_id(uint32_t pos);

#endif
