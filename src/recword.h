/* SPDX-License-Identifier: MIT */
/*
 * The first word of a record, the same in stream memory (layout.h) and in
 * a log's EVENTS blocks (logfmt.h), and its header:
 *   word0: bits 0-30 time delta, 31 same address (word1 left out: the
 *          address is the previous event record's), 32-41 event id, 42-62
 *          data length, 63 truncated when recorded
 *   word1: the program address (a log's SWITCH record: a context number)
 * then the data, padded to 8 bytes.  Meta records always have both words.
 * What the delta counts from, and which ids are meta records, each format
 * says.  This header includes only <stdint.h>.
 */
#ifndef PT_RECWORD_H
#define PT_RECWORD_H

#include <stdint.h>

#define PT_REC_HDR 16u            /* the header with both words */
#define PT_REC_HDR_MIN 8u         /* word0 alone */
#define PT_REC_SAMEPC (1ull << 31)
#define PT_REC_DELTA_MASK 0x7fffffffu
#define PT_REC_ID_SHIFT 32
#define PT_REC_ID_MASK 0x3ffu
#define PT_REC_LEN_SHIFT 42
#define PT_REC_LEN_MASK 0x1fffffu
#define PT_REC_TRUNCATED (1ull << 63)
#define PT_REC_DELTA_MAX ((uint64_t)PT_REC_DELTA_MASK)

static inline uint64_t pt_rec_word0(uint64_t delta, uint32_t id, uint32_t len, int truncated)
{
	return delta | ((uint64_t)id << PT_REC_ID_SHIFT) | ((uint64_t)len << PT_REC_LEN_SHIFT) |
	       (truncated ? PT_REC_TRUNCATED : 0);
}
static inline uint32_t pt_rec_delta(uint64_t w0) { return (uint32_t)w0 & PT_REC_DELTA_MASK; }
static inline uint32_t pt_rec_id(uint64_t w0) { return (uint32_t)(w0 >> PT_REC_ID_SHIFT) & PT_REC_ID_MASK; }
static inline uint32_t pt_rec_len(uint64_t w0) { return (uint32_t)(w0 >> PT_REC_LEN_SHIFT) & PT_REC_LEN_MASK; }
/* The header of the record whose first word is w0, and its whole size. */
static inline uint32_t pt_rec_hdr(uint64_t w0) { return (w0 & PT_REC_SAMEPC) ? PT_REC_HDR_MIN : PT_REC_HDR; }
static inline uint64_t pt_rec_size(uint64_t w0)
{
	return pt_rec_hdr(w0) + (((uint64_t)pt_rec_len(w0) + 7) & ~(uint64_t)7);
}

#endif
