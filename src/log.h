/*
 * The trace log file format (docs/LOG-FORMAT.md), version 1.
 *
 *   [file header, 4 KiB] [name table, 62 KiB] [blocks ...]
 *
 * Integers are in the writer's byte order, given by byte_order; a reader of
 * the other order refuses the log.  Every block carries its own length and a
 * CRC-32C, so a log cut short or damaged yields every complete block before
 * the damage.
 */
#ifndef PT_LOG_H
#define PT_LOG_H

#include <stdint.h>
#include "internal.h"

#define PT_LOG_MAGIC "PTRACLOG"
#define PT_LOG_VERSION 1u
#define PT_LOG_BOM 0x01020304u
#define PT_LOG_HEADER_SIZE 4096u
#define PT_LOG_NAMES_OFF PT_LOG_HEADER_SIZE
#define PT_LOG_NAMES_SIZE (TRACE_USER_EVENT_MAX * PT_NAME_SIZE)
#define PT_LOG_DATA_OFF (PT_LOG_NAMES_OFF + ((PT_LOG_NAMES_SIZE + 4095u) & ~4095u))
#define PT_LOG_BLOCK_MAGIC 0x4b4c4250u /* "PBLK" */
#define PT_LOG_MIN_BLOCK (64u << 10)

/* Layout of the data region. */
enum { PT_LAYOUT_LINEAR = 1, PT_LAYOUT_RING = 2 };
/* Block types. */
enum { PT_BLK_EVENTS = 1, PT_BLK_NAMES = 2, PT_BLK_END = 3 };
/* header.flags */
#define PT_LOGF_CLOSED 1u      /* written completely by shutdown */
#define PT_LOGF_SEEKABLE 2u    /* header and name table kept up to date in place */

struct pt_log_status {
	int32_t stream_status, stream_full, stream_overrun;
	int32_t flush_status, flush_error;
	int32_t log_overrun, log_full;
	int32_t reserved;
	uint64_t lost_events;
};

struct pt_log_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t header_size;     /* PT_LOG_HEADER_SIZE */
	uint32_t flags;
	uint64_t names_off, names_size, data_off;
	uint32_t layout;          /* PT_LAYOUT_* */
	uint32_t block_size;      /* ring slot size; largest linear block */
	uint64_t ring_slots;      /* PT_LAYOUT_RING: number of slots */
	uint32_t clock_id;        /* CLOCK_MONOTONIC: event clock */
	uint32_t name_size;       /* bytes per name entry */
	uint64_t clockres_ns;
	uint64_t base_real_ns;    /* event timestamps are stored on this scale */
	/* the stream's attributes */
	char trace_name[TRACE_NAME_MAX];
	char genversion[TRACE_NAME_MAX];
	int64_t create_sec, create_nsec;
	uint64_t stream_size, max_data_size, log_size;
	int32_t stream_policy, log_policy, inheritance;
	uint32_t nnames;          /* user names in the name table */
	struct pt_log_status status;
	uint64_t blocks_written;
	uint32_t reserved[8];
	uint32_t crc;             /* CRC-32C of everything above */
};

struct pt_log_block {
	uint32_t magic;
	uint32_t type;
	uint64_t seq;
	uint32_t payload_len;
	uint32_t payload_crc;
	uint32_t nrecords;
	uint32_t header_crc;      /* CRC-32C of the 28 bytes above */
};
_Static_assert(sizeof(struct pt_log_block) == 32, "block header");

/* An event in a block; data follows, padded to 8 bytes. */
struct pt_log_record {
	uint32_t data_len;
	uint16_t id;
	uint16_t flags;           /* PT_REC_TRUNCATED */
	int32_t pid;
	uint32_t reserved;
	uint64_t ts;              /* nanoseconds since base_real_ns's epoch (realtime) */
	uint64_t pc;
	uint64_t thread;
};
_Static_assert(sizeof(struct pt_log_record) == 40, "log record");

/* A NAMES block payload is a sequence of entries: id (u32) + name (name_size). */

PT_HIDDEN uint32_t pt_crc32c(uint32_t crc, const void *data, size_t len);
static inline size_t pt_log_record_size(size_t data_len)
{
	return sizeof(struct pt_log_record) + ((data_len + 7) & ~(size_t)7);
}

#endif
