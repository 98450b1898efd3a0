/* SPDX-License-Identifier: MIT */
/*
 * The blocks of a trace log being written (logblock.c): events, stages and
 * drains go in (pt_logw_event, pt_logw_stage, pt_logw_begin_drain,
 * pt_logw_resume_mark, for the keeper); the block being filled in the
 * writer's output buffer is opened, sealed and closed by the rest of the
 * writer (logwrite.c: names, the end).
 */
#ifndef PT_LOGBLOCK_H
#define PT_LOGBLOCK_H

#include <trace.h>
#include "logwstate.h"

/* Room kept in an UNTIL_FULL log for its last STOP event (in a new KEEPER
 * block with a context and a TIME record) and its END block. */
#define PT_LOG_FULL_RESERVE                                                          \
	(PT_LOG_BLOCK_HDR + PT_LOG_KEEPER_PREFIX + PT_LOG_CTX_REC + PT_LOG_TIME_REC +      \
	 PT_REC_HDR + 8u + PT_LOG_BLOCK_HDR + PT_LOG_END_PAYLOAD)
_Static_assert(PT_LOG_FULL_RESERVE == 264, "the reserve LOG-FORMAT.md gives");
/* The event bytes an UNTIL_FULL log keeps for its last STOP (data: an int). */
#define PT_LOG_STOP_BYTES pt_log_event_bytes((uint32_t)sizeof(int))

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
	uint32_t start_cpu;      /* the CPU at the first record; PT_LOG_CPU_NONE: unknown */
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

/* No block is being filled: every event takes the slow path. */
PT_LOG_HIDDEN void pt_logb_none(struct pt_logw *w);
/* Starts a block of `type` (PT_LOG_KEEPER, STAGES, NAMES, END) at the end
 * of the buffer, ts its time base. */
PT_LOG_HIDDEN void pt_logb_open(struct pt_logw *w, uint32_t type, uint64_t ts);
/* Seals the block being filled as `type`: CRCs, padding, progress. */
PT_LOG_HIDDEN void pt_logb_seal(struct pt_logw *w, uint32_t type);
/* Seals the block being filled if anything is in it. */
PT_LOG_HIDDEN void pt_logb_close(struct pt_logw *w);

#endif
