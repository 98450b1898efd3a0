/* SPDX-License-Identifier: MIT */
/*
 * The trace log writer's state (shared with the controller, in struct
 * pt_ctl) and its private buffers: what logwrite.c, logblock.c and logio.c
 * work on together (logwrite.h says how the writer is used).
 */
#ifndef PT_LOGWSTATE_H
#define PT_LOGWSTATE_H

#include <pthread.h>
#include <stdint.h>
#include "logfmt.h"

/* pt_logw_event: an UNTIL_FULL log has no room (not an error number). */
#define PT_LOGW_FULL (-1)
/* Files one gathered IMAGES_SHARED payload shares (twice that many slots). */
#define PT_LOGW_IMG_FILES 256u
#define PT_LOGW_IMG_SLOTS (2u * PT_LOGW_IMG_FILES)

/* The stream's status as the caller sees it, for the log's header and END
 * block; the log's own full/overrun status is the writer's. */
struct pt_logw_status {
	int32_t stream_status, stream_full, stream_overrun;
	int32_t flush_status, flush_error;
	uint64_t lost_events;
	uint32_t triggers_suppressed;
	struct pt_log_waits waits;
};

/* What the log looks like after the last bytes written. */
struct pt_logw_progress {
	uint64_t seq;            /* sequence number of the next block */
	uint64_t write_off;      /* linear: file offset of the next block */
	uint64_t data_bytes;     /* bytes of blocks in the data region */
	uint64_t event_bytes;    /* UNTIL_FULL: the events' bytes (pt_log_event_bytes) */
	uint64_t blocks_written; /* blocks in the log (= seq) */
	uint64_t drain;          /* number of the last drain begun */
	/* Events of stages in sealed blocks, or dropped and counted in
	 * log_dropped (a full UNTIL_FULL log): what a new keeper compares with
	 * the events keepers claimed (struct pt_claims, ctl.h). */
	uint64_t stage_events;
	uint32_t flags;          /* header flags (PT_LOG_CLOSED once finished) */
	int32_t error;           /* first write error */
	int32_t log_full;        /* UNTIL_FULL: stopped, drops everything */
	uint32_t nnames;
	struct pt_log_status status;
	struct pt_log_waits waits;
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
	/* The budget this queue shares with the other keepers of its
	 * controller (logio.h), and its slot there; NULL, -1: none. */
	struct pt_queue_budget *budget;
	int budget_slot;
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
	uint64_t blk_stage_events; /* events of the stages in the block */
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
	 * STOP and END (pt_log_full_region); UINT64_MAX >> 1 for the other
	 * policies */
	uint64_t room;
	/* UNTIL_FULL: event bytes log-max-size still takes, the final STOP's
	 * kept apart; UINT64_MAX >> 1 for the other policies */
	uint64_t ev_left;

	/* The IMAGES_SHARED payload being gathered (img_cap bytes, NULL
	 * until the first image), written as a block by images_done and
	 * before a sync, a hand or the end; its files by a hash of build id
	 * and path (slot: offset + 1 in img, 0 free), so that the images of
	 * every process of a drain share their descriptions. */
	unsigned char *img;
	uint32_t img_len, img_cap, img_nfiles;
	uint32_t img_slots[PT_LOGW_IMG_SLOTS];
	uint32_t img_file_no[PT_LOGW_IMG_SLOTS];
	/* The files this log describes once, and the IMAGES_COMPACT payload
	 * being gathered (logwimages.c); NULL until the first image. */
	struct pt_logw_compact *cimg;

	/* names given (all ids) and their text, to re-emit after a discard */
	uint64_t names_given[PT_LOG_NIDS / 64];
	char (*names)[PT_LOG_NAME_SIZE]; /* [TRACE_USER_EVENT_MAX] */
};

/* The state's current progress, while no writer runs (a killed keeper's,
 * a finished log's).  Pairs with the release store of gen in pt_logio_commit
 * (logio.c). */
static inline const struct pt_logw_progress *pt_logw_progress(const struct pt_logw_state *st)
{
	return &st->prog[__atomic_load_n(&st->gen, __ATOMIC_ACQUIRE) & 1];
}

#endif
