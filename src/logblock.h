/* SPDX-License-Identifier: MIT */
/*
 * The blocks of a trace log being written (logblock.c): the block being
 * filled in the writer's output buffer, opened, sealed and closed by the
 * rest of the writer (logwrite.c: names, the end); events and stages go in
 * through logwrite.h's pt_logw_event and pt_logw_stage.
 */
#ifndef PT_LOGBLOCK_H
#define PT_LOGBLOCK_H

#include "logwrite.h"

/* Room kept in an UNTIL_FULL log for its last STOP event (in a new KEEPER
 * block with a context and a TIME record) and its END block. */
#define PT_LOG_FULL_RESERVE                                                          \
	(PT_LOG_BLOCK_HDR + PT_LOG_KEEPER_PREFIX + PT_LOG_CTX_REC + PT_LOG_TIME_REC +      \
	 PT_REC_HDR + 8u + PT_LOG_BLOCK_HDR + (uint32_t)sizeof(struct pt_log_status))
_Static_assert(PT_LOG_FULL_RESERVE == 240, "the reserve LOG-FORMAT.md gives");

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
