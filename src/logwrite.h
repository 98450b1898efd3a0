/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer (format in logfmt.h, docs/LOG-FORMAT.md), used by the
 * keeper process that drains a stream into its log.
 *
 * The keeper can be killed at any moment and a new one may continue the same
 * log.  Everything needed to continue is in struct pt_logw_state: a plain
 * struct without pointers that the caller keeps in memory shared with the
 * controller.  It is updated only after the bytes it describes are written,
 * and it changes by publishing a complete new copy (two copies and a
 * generation count), so what a new keeper finds is always consistent.
 * Buffers live in struct pt_logw, private to the keeper, which also runs a
 * thread (signals blocked) that writes full buffers and the ends of
 * automatic drains, in order, while the next buffer fills; if the thread
 * cannot be started, writes are made in line.
 *
 * Functions return 0 or an error number.  Errors of write/pwrite are kept
 * (the first one) in the state and returned by pt_logw_sync/finish.  A
 * writer on a pipe or socket should ignore SIGPIPE (then EPIPE is kept).
 * One thread calls the functions of one writer.
 */
#ifndef PT_LOGWRITE_H
#define PT_LOGWRITE_H

#include <pthread.h>
#include <stdint.h>
#include <trace.h>
#include "logfmt.h"

/* pt_logw_event: an UNTIL_FULL log has no room (not an error number). */
#define PT_LOGW_FULL (-1)

/* The stream's status as the caller sees it, for the log's header and END
 * block; the log's own full/overrun status is the writer's. */
struct pt_logw_status {
	int32_t stream_status, stream_full, stream_overrun;
	int32_t flush_status, flush_error;
	uint64_t lost_events;
};

/* What the log looks like after the last bytes written. */
struct pt_logw_progress {
	uint64_t seq;            /* sequence number of the next block */
	uint64_t write_off;      /* linear: file offset of the next block */
	uint64_t data_bytes;     /* bytes of blocks in the data region */
	uint64_t blocks_written; /* blocks in the log (= seq) */
	uint64_t drain;          /* number of the last drain begun */
	uint32_t flags;          /* header flags (PT_LOG_CLOSED once finished) */
	int32_t error;           /* first write error */
	int32_t log_full;        /* UNTIL_FULL: stopped, drops everything */
	uint32_t nnames;
	struct pt_log_status status;
	uint64_t names[PT_LOG_NIDS / 64]; /* ids whose names are in the log */
};

struct pt_logw_state {
	uint32_t valid;          /* set by pt_logw_begin once the log exists */
	int32_t seekable;
	uint64_t gen;            /* commits so far; prog[gen & 1] is current */
	/* Calls of the writer blocked on the log's destination now (a write,
	 * a sync): time the controller does not count against the keeper. */
	uint32_t in_io;
	uint32_t reserved;
	struct pt_log_header hdr; /* the header as begun (constant fields) */
	struct pt_logw_progress prog[2];
};

/* Sealed blocks to write, and the progress once they are. */
struct pt_logw_job {
	unsigned char *buf;
	size_t len;
	uint32_t nblocks;
	uint64_t first_seq;      /* seq of the first block */
	uint64_t off;            /* linear: file offset of the first block */
	struct pt_logw_progress after;
	unsigned char *release;  /* a buffer that goes back to the pool once written */
	int header;              /* a seekable log's header is rewritten after */
};

/* The writer's buffers and working copy; private to the keeper. */
struct pt_logw {
	struct pt_logw_state *st;
	int fd, seekable, layout, finished;
	uint64_t written_back;   /* linear: file offset up to which writeback was waited for */
	uint32_t block_size;
	uint64_t ring_slots;
	uint64_t data_off;
	uint32_t max_data;
	uint32_t max_ctx;        /* contexts one block can define */
	struct pt_logw_progress prog; /* as if every sealed block were written */
	struct pt_logw_progress done; /* as written; what commit() publishes */

	/* the output buffer: sealed blocks, then the block being filled */
	unsigned char *out;
	size_t out_cap;
	size_t out_len;          /* bytes of sealed blocks */
	uint32_t out_blocks;     /* sealed blocks in the buffer */
	uint64_t out_first_seq;  /* seq of the first block in the buffer */
	uint64_t out_off;        /* linear: file offset of the first block */

	/* A thread (when it could be started) writes jobs in the order they
	 * are handed: a full buffer, and the end of an automatic drain, after
	 * which the buffer goes on filling (out_handed: its bytes already
	 * handed).  Buffers come from a pool, at most max_bufs in all (the
	 * one filling included); the keeper waits only when every one is
	 * full.  Under io_lock: the jobs (a ring of max_bufs + 1), the pool,
	 * io_busy (the first job is being written), and w->done while any
	 * job is queued: the thread's then. */
	size_t out_handed;
	unsigned char **pool;
	uint32_t npool, nbufs, max_bufs;
	struct pt_logw_job *jobs;
	uint32_t job_first, njobs;
	int io_running, io_busy, io_stop;
	pthread_t io_thread;
	pthread_mutex_t io_lock;
	pthread_cond_t io_cond;

	/* the block being filled (at out + out_len); NULL when none */
	unsigned char *blk;
	uint32_t blk_type;       /* PT_LOG_KEEPER, PT_LOG_STAGES, PT_LOG_NAMES */
	unsigned char *pos;      /* where the next record goes */
	unsigned char *blk_end;  /* out + out_len + block_size */
	uint32_t blk_records;
	uint64_t blk_ts;         /* the block's ts_base */
	uint64_t last_ts;        /* time of the block's previous record */
	uint64_t last_pc;        /* address of the block's previous event record; 0: none */
	int32_t ctx_cur;         /* current context number, -1: none */
	uint32_t nctx;
	struct pt_log_ctx cur;   /* copy of context ctx_cur */
	struct pt_log_ctx *ctx;  /* the block's contexts [max_ctx] */
	uint16_t ctx_hash[256];  /* tid hash -> context number + 1 */

	/* A STAGES block: its open section (NULL: none) and the lane it is
	 * of, its sections; the drain's calibration, copied into each block. */
	unsigned char *sec;
	uint32_t sec_lane;
	uint32_t blk_sections;
	uint32_t clock, ncal;
	struct pt_log_calpoint cal[PT_LOG_MAX_CAL];
	/* The latest time of an event kept so far: an UNTIL_FULL log's STOP
	 * is no earlier. */
	uint64_t max_kept_ns;

	/* UNTIL_FULL: bytes the data region may still take before the final
	 * STOP and END; UINT64_MAX for the other policies */
	uint64_t room;

	/* names given (all ids) and their text, to re-emit after a discard */
	uint64_t names_given[PT_LOG_NIDS / 64];
	char (*names)[PT_LOG_NAME_SIZE]; /* [TRACE_USER_EVENT_MAX] */
};

/*
 * Begins a log on fd: a regular file takes any log policy (truncated, written
 * with pwrite from offset 0, O_APPEND cleared); a FIFO, socket or character
 * device only POSIX_TRACE_APPEND (EINVAL otherwise, and for other file
 * types); EBADF if fd is not open for writing; EINVAL for parameters out of
 * range.  Writes the header and the (empty) name table at once, so ENOSPC
 * or EFBIG show here.  ENOMEM for the buffers.
 */
PT_LOG_HIDDEN int pt_logw_begin(struct pt_logw *w, struct pt_logw_state *st, int fd,
                                const struct pt_logw_params *p);

/* A new keeper continues the log st describes on fd (the same file).
 * EINVAL if st is not a begun, unfinished log; EBADF as above. */
PT_LOG_HIDDEN int pt_logw_resume(struct pt_logw *w, struct pt_logw_state *st, int fd);

/* Writers of other pid namespaces, translated: a PIDS block of the
 * entries (version 3), which a reader uses to give their own ids back.
 * Entries that find no room in an UNTIL_FULL log are left out (the events
 * still carry the translated ids).  EINVAL for a finished log. */
PT_LOG_HIDDEN int pt_logw_pids(struct pt_logw *w, const struct pt_log_pid_entry *e, uint32_t n);

/* Names of user event ids first_id .. first_id + count - 1 become known:
 * written in place in the name table of a seekable log, else as a NAMES
 * block before the next event.  Names already in the log are skipped, so a
 * resumed keeper may give every name again.  Id 32 (the unnamed event) is
 * ignored.  EINVAL for ids out of range. */
PT_LOG_HIDDEN int pt_logw_names(struct pt_logw *w, uint32_t first_id, uint32_t count,
                                const char (*names)[PT_LOG_NAME_SIZE]);

/* Appends one event.  ts_ns on the CLOCK_REALTIME scale; events are kept in
 * the order given (an older time is encoded, never reordered).  ctx: the
 * writer; all zero for a system event not caused by a process.  truncated:
 * POSIX_TRACE_TRUNCATED_RECORD when recorded.  Returns 0; PT_LOGW_FULL when
 * an UNTIL_FULL log has no room: then POSIX_TRACE_STOP (data int 1, time
 * ts_ns, pid 0) is the log's last event and later events are dropped (and
 * counted); EINVAL for an id that is not an event type or len above
 * max_data_size. */
PT_LOG_HIDDEN int pt_logw_event(struct pt_logw *w, const struct pt_log_ctx *ctx, uint64_t ts_ns,
                                trace_event_id_t id, const void *data, uint32_t len,
                                int truncated, uint64_t pc);

/* A drain begins (docs/LOG-FORMAT.md, Drains): its number is the last
 * one plus 1, and its STAGES blocks carry the calibration given (clock:
 * PT_LOG_CLOCK_*; 1 to PT_LOG_MAX_CAL points, raw increasing).  The block
 * being filled is sealed first: a block holds one drain.  EINVAL for a
 * calibration that is not one. */
PT_LOG_HIDDEN int pt_logw_begin_drain(struct pt_logw *w, uint32_t clock,
                                      const struct pt_log_calpoint *cal, uint32_t ncal);

/* How a stage continues what the writer had of its lane. */
enum {
	PT_STAGE_FOLLOWS,   /* right after the lane's previous stage */
	PT_STAGE_NEW_CHUNK, /* at the start of the lane's next chunk: base and
	                     * writer from its header, no address yet */
	PT_STAGE_ELSEWHERE, /* anywhere else: a section of its own */
};

/* A run of one lane's records, checked by the stream's decoder (records.h)
 * in private memory: written into a STAGES block as it is. */
struct pt_logw_stage {
	const unsigned char *rec;
	uint32_t len;            /* whole records, a multiple of 8 */
	uint32_t lane;
	uint32_t how;            /* PT_STAGE_* */
	uint32_t events;
	struct pt_log_owner start; /* base and writer at the first record */
	uint64_t start_pc;       /* the address a same-address first event repeats */
	uint64_t first_ns, last_ns; /* times of its first and last events */
};

/* Appends a stage to the drain.  0; PT_LOGW_FULL when an UNTIL_FULL log
 * has no room for it: it is dropped whole (its events counted), and
 * POSIX_TRACE_STOP, no earlier than any event kept, ends the log; EINVAL
 * outside a drain or for a length that is not whole words. */
PT_LOG_HIDDEN int pt_logw_stage(struct pt_logw *w, const struct pt_logw_stage *s);

/* POSIX_TRACE_RESUME is due before the next event after ts_ns (a RESUME
 * record in a KEEPER block, docs/LOG-FORMAT.md): the keeper read an
 * overflow and does not know the next event's time. */
PT_LOG_HIDDEN int pt_logw_resume_mark(struct pt_logw *w, const struct pt_log_ctx *ctx,
                                      uint64_t ts_ns);

/* Closes the block being filled, writes everything buffered and, for a
 * seekable log, rewrites the header with status s (NULL: the last one).
 * Returns the first error of the log. */
PT_LOG_HIDDEN int pt_logw_sync(struct pt_logw *w, const struct pt_logw_status *s);

/* The end of an automatic drain: closes the block being filled and hands
 * everything buffered to the writing thread, with status s for the header
 * rewritten after it (NULL: the last one); it waits only when the queue
 * holds max_bufs buffers.  Without the thread, pt_logw_sync.  Returns the
 * first error of the log known so far. */
PT_LOG_HIDDEN int pt_logw_hand(struct pt_logw *w, const struct pt_logw_status *s);

/* posix_trace_clear: a seekable log loses its events (back to the header
 * and name table, sequence numbers from 0, log full/overrun reset); an
 * unseekable one keeps what was written.  Events not yet written are
 * dropped either way. */
PT_LOG_HIDDEN int pt_logw_clear(struct pt_logw *w);

/* The end: an END block with status s (linear), the CLOSED flag in the
 * header (seekable), a linear seekable log truncated to its end, fdatasync.
 * Returns the first error of the log. */
PT_LOG_HIDDEN int pt_logw_finish(struct pt_logw *w, const struct pt_logw_status *s);

/* Frees the buffers (not the state, not the fd). */
PT_LOG_HIDDEN void pt_logw_free(struct pt_logw *w);

/* The state's current progress, while no writer runs (a killed keeper's,
 * a finished log's).  Pairs with the release store of gen in pt_logio_commit
 * (logio.c). */
static inline const struct pt_logw_progress *pt_logw_progress(const struct pt_logw_state *st)
{
	return &st->prog[__atomic_load_n(&st->gen, __ATOMIC_ACQUIRE) & 1];
}

/* A consistent copy of the current progress while a writer may be running
 * in another process (the controller asking for log_full or the first
 * error): copied again if the writer published twice meanwhile. */
PT_LOG_HIDDEN void pt_logw_read_progress(const struct pt_logw_state *st,
                                         struct pt_logw_progress *out);

#endif
