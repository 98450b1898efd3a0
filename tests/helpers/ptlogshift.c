/* SPDX-License-Identifier: MIT */
/*
 * ptlogshift: a copy of a linear version 5 trace log that plays another
 * host whose realtime clock is off: every realtime time in it moved by
 * SECONDS (the header's creation time, the host record's anchor, each
 * STAGES block's calibration, each KEEPER block's base and TIME records),
 * optionally another host name and boot id and an unsynchronised clock or
 * another maxerror; every CRC made right again.  --v4 makes it the log a
 * version 4 writer wrote (the same blocks; no create_mono, no host record).  The blocks' image tables
 * keep their times (a shifted copy is read with --no-symbols).  For the
 * tests of posixtrace(1) that merge logs of several hosts.
 *
 * usage: ptlogshift IN OUT SECONDS [--host NAME] [--boot HEX32] [--unsync]
 *                   [--maxerror US] [--v4]
 * Exit status: 0, 1 when IN is not a linear version 5 log, 2 for usage.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/log/logfmt.h"

static uint32_t crc32c(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint32_t crc = 0xFFFFFFFFu;
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = crc & 1 ? (crc >> 1) ^ 0x82F63B78u : crc >> 1;
	}
	return crc ^ 0xFFFFFFFFu;
}

static unsigned char *load(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 20;
	unsigned char *buf = malloc(cap);
	*len = 0;
	size_t n;
	while (buf && (n = fread(buf + *len, 1, cap - *len, f)) > 0) {
		*len += n;
		if (*len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	return buf;
}

static void add_u64(unsigned char *at, int64_t shift)
{
	uint64_t v;
	memcpy(&v, at, 8);
	v += (uint64_t)shift;
	memcpy(at, &v, 8);
}

/* KEEPER records: TIME records hold absolute times. */
static void shift_keeper(unsigned char *pl, uint32_t len, int64_t shift)
{
	uint32_t off = PT_LOG_KEEPER_PREFIX;
	while (off + 8 <= len) {
		uint64_t w0;
		memcpy(&w0, pl + off, 8);
		uint64_t size = pt_rec_size(w0);
		if (off + size > len)
			return;
		if (pt_rec_id(w0) == PT_REC_TIME && pt_rec_len(w0) == 8)
			add_u64(pl + off + PT_REC_HDR, shift);
		off += (uint32_t)size;
	}
}

static int shift_blocks(unsigned char *b, size_t len, uint64_t off, int64_t shift)
{
	int n = 0;
	while (off + PT_LOG_BLOCK_HDR <= len) {
		struct pt_log_block h;
		memcpy(&h, b + off, sizeof h);
		if (h.magic != PT_LOG_BLOCK_MAGIC || off + PT_LOG_BLOCK_HDR + h.payload_len > len)
			break;
		unsigned char *pl = b + off + PT_LOG_BLOCK_HDR;
		if (h.type == PT_LOG_STAGES) {
			struct pt_log_stages s;
			memcpy(&s, pl, sizeof s);
			for (uint32_t i = 0; i < s.ncal && sizeof s + 16 * (i + 1) <= h.payload_len; i++)
				add_u64(pl + sizeof s + 16 * i + 8, shift);
		} else if (h.type == PT_LOG_KEEPER) {
			h.ts_base += (uint64_t)shift;
			shift_keeper(pl, h.payload_len, shift);
		}
		h.payload_crc = crc32c(pl, h.payload_len);
		h.header_crc = crc32c(&h, offsetof(struct pt_log_block, header_crc));
		memcpy(b + off, &h, sizeof h);
		off += pt_log_pad8(PT_LOG_BLOCK_HDR + h.payload_len);
		n++;
	}
	return n;
}

static int usage(void)
{
	fprintf(stderr, "usage: ptlogshift IN OUT SECONDS [--host NAME] [--boot HEX32] "
	                "[--unsync] [--maxerror US] [--v4]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	size_t len;
	unsigned char *b = load(argv[1], &len);
	int64_t shift = (int64_t)(strtod(argv[3], NULL) * 1e9);
	struct pt_log_header h;
	struct pt_log_host host;
	if (!b || len < 512) {
		fprintf(stderr, "ptlogshift: %s: cannot read a log\n", argv[1]);
		return 1;
	}
	memcpy(&h, b, sizeof h);
	memcpy(&host, b + PT_LOG_HOST_OFF, sizeof host);
	if (memcmp(h.magic, PT_LOG_MAGIC, 8) || h.version != PT_LOG_VERSION_HOST ||
	    h.layout != PT_LOG_LINEAR) {
		fprintf(stderr, "ptlogshift: %s: not a linear version 5 log\n", argv[1]);
		return 1;
	}
	int v4 = 0;
	for (int i = 4; i < argc; i++) {
		if (!strcmp(argv[i], "--v4")) {
			v4 = 1;
		} else if (!strcmp(argv[i], "--host") && i + 1 < argc) {
			memset(host.name, 0, sizeof host.name);
			snprintf(host.name, sizeof host.name, "%s", argv[++i]);
		} else if (!strcmp(argv[i], "--boot") && i + 1 < argc && strlen(argv[i + 1]) == 32) {
			const char *hex = argv[++i];
			for (int k = 0; k < 16; k++) {
				unsigned v;
				if (sscanf(hex + 2 * k, "%2x", &v) != 1)
					return usage();
				host.boot[k] = (uint8_t)v;
			}
			host.flags |= PT_LOG_HOST_BOOT;
		} else if (!strcmp(argv[i], "--unsync")) {
			host.flags |= PT_LOG_HOST_CLOCK | PT_LOG_HOST_UNSYNC;
		} else if (!strcmp(argv[i], "--maxerror") && i + 1 < argc) {
			host.flags = (host.flags | PT_LOG_HOST_CLOCK) & ~PT_LOG_HOST_UNSYNC;
			host.maxerror_us = strtoll(argv[++i], NULL, 10);
		} else {
			return usage();
		}
	}
	uint64_t created = (uint64_t)h.create_sec * 1000000000u + (uint64_t)h.create_nsec;
	created += (uint64_t)shift;
	h.create_sec = (int64_t)(created / 1000000000u);
	h.create_nsec = (int64_t)(created % 1000000000u);
	host.anchor_real_ns += (uint64_t)shift;
	host.crc = crc32c(&host, offsetof(struct pt_log_host, crc));
	if (v4) {
		h.version = 4;
		h.create_mono = 0;
		memset(&host, 0, sizeof host);
	}
	h.crc = crc32c(&h, offsetof(struct pt_log_header, crc));
	memcpy(b, &h, sizeof h);
	memcpy(b + PT_LOG_HOST_OFF, &host, sizeof host);
	int blocks = shift_blocks(b, len, h.data_off, shift);
	FILE *out = fopen(argv[2], "wb");
	if (!out || fwrite(b, 1, len, out) != len || fclose(out) != 0) {
		fprintf(stderr, "ptlogshift: %s: %s\n", argv[2], strerror(errno));
		return 1;
	}
	fprintf(stderr, "ptlogshift: %d blocks\n", blocks);
	free(b);
	return 0;
}
