/* SPDX-License-Identifier: MIT */
/*
 * CRC-32C (Castagnoli polynomial 0x1EDC6F41, reflected, initial value and
 * final xor 0xFFFFFFFF), the checksum of trace log headers and blocks.
 */
#ifndef PT_CRC32C_H
#define PT_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Symbols of the log module are internal to the library. */
#ifndef PT_LOG_HIDDEN
#define PT_LOG_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Continues crc (0 to start) over len bytes at data.  Thread-safe. */
PT_LOG_HIDDEN uint32_t pt_crc32c(uint32_t crc, const void *data, size_t len);

#endif
