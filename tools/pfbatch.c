/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's compressed packets for convert --to perfetto --compress: the
 * packets perfetto.c writes are gathered in a batch, and each batch is one
 * TracePacket holding them compressed (compressed_packets, 50, deflate with
 * a zlib header; or zstd_compressed_packets, 133, one zstd frame).
 * trace_processor expands such a packet into the packets it holds, in
 * their order, and reads them as if they had been written one by one
 * (src/trace_processor/importers/proto/proto_trace_tokenizer.h); the
 * schema asks that each such packet, keys and lengths included, be less
 * than 512 KB (protos/perfetto/trace/trace_packet.proto).  A batch is at
 * most BATCH_MAX bytes before compression, so at most the compressor's
 * bound of that after it; a packet larger than a batch is written as it
 * is, between two batches (trace_processor takes compressed and plain
 * packets in one trace, though not two codecs).
 */
#include <stdlib.h>
#include <string.h>

#ifdef PT_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef PT_HAVE_ZSTD
#include <zstd.h>
#endif

#include "pfbatch.h"
#include "protowire.h"

/* 480 KiB of packets: their compressed form, even if nothing compresses,
 * stays under 512 KB with both codecs' bounds (n + n/256 + 64 for zstd,
 * less for deflate) and the wrapper's keys. */
#define BATCH_MAX (480u << 10)
#define BATCH_PACKET_FIELD_DEFLATE 50
#define BATCH_PACKET_FIELD_ZSTD 133
#define TRACE_PACKET_FIELD 1
/* zstd's level 1: on the bench's log as fast as its fast level -1 and 0.6
 * times its bytes (docs/PERFETTO.md, "Compressed packets") */
#define ZSTD_BATCH_LEVEL 1

struct pf_batch {
	enum pf_codec codec;
	struct outbuf *out;
	uint8_t *buf; /* BATCH_MAX bytes of packets */
	size_t len;
	uint8_t *packed; /* the compressed batch, packed_cap bytes */
	size_t packed_cap;
	bool failed;
#ifdef PT_HAVE_ZLIB
	z_stream z;
	bool z_ready;
#endif
#ifdef PT_HAVE_ZSTD
	ZSTD_CCtx *zstd;
#endif
};

bool pf_codec_parse(const char *name, enum pf_codec *codec)
{
	if (!strcmp(name, "none"))
		*codec = PF_CODEC_NONE;
	else if (!strcmp(name, "deflate"))
		*codec = PF_CODEC_DEFLATE;
	else if (!strcmp(name, "zstd"))
		*codec = PF_CODEC_ZSTD;
	else
		return false;
	return true;
}

const char *pf_codec_missing(enum pf_codec codec)
{
#ifndef PT_HAVE_ZLIB
	if (codec == PF_CODEC_DEFLATE)
		return "posixtrace was built without zlib (zlib1g-dev, scripts/install-deps.sh)";
#endif
#ifndef PT_HAVE_ZSTD
	if (codec == PF_CODEC_ZSTD)
		return "posixtrace was built without zstd (libzstd-dev, scripts/install-deps.sh)";
#endif
	(void)codec;
	return NULL;
}

static size_t packed_bound(enum pf_codec codec)
{
#ifdef PT_HAVE_ZLIB
	if (codec == PF_CODEC_DEFLATE)
		return compressBound(BATCH_MAX);
#endif
#ifdef PT_HAVE_ZSTD
	if (codec == PF_CODEC_ZSTD)
		return ZSTD_compressBound(BATCH_MAX);
#endif
	(void)codec;
	return BATCH_MAX;
}

struct pf_batch *pf_batch_new(enum pf_codec codec, struct outbuf *out)
{
	if (codec == PF_CODEC_NONE || pf_codec_missing(codec))
		return NULL;
	struct pf_batch *b = xmalloc(sizeof *b);
	memset(b, 0, sizeof *b);
	b->codec = codec;
	b->out = out;
	b->buf = xmalloc(BATCH_MAX);
	b->packed_cap = packed_bound(codec);
	b->packed = xmalloc(b->packed_cap);
	return b;
}

#ifdef PT_HAVE_ZLIB
static size_t deflate_batch(struct pf_batch *b)
{
	if (!b->z_ready) {
		if (deflateInit(&b->z, Z_BEST_SPEED) != Z_OK)
			return 0;
		b->z_ready = true;
	} else if (deflateReset(&b->z) != Z_OK) {
		return 0;
	}
	b->z.next_in = b->buf;
	b->z.avail_in = (uInt)b->len;
	b->z.next_out = b->packed;
	b->z.avail_out = (uInt)b->packed_cap;
	return deflate(&b->z, Z_FINISH) == Z_STREAM_END ? b->z.total_out : 0;
}
#endif

#ifdef PT_HAVE_ZSTD
static size_t zstd_batch(struct pf_batch *b)
{
	if (!b->zstd && !(b->zstd = ZSTD_createCCtx()))
		return 0;
	size_t n = ZSTD_compressCCtx(b->zstd, b->packed, b->packed_cap, b->buf, b->len,
	                             ZSTD_BATCH_LEVEL);
	return ZSTD_isError(n) ? 0 : n;
}
#endif

/* The batch compressed into b->packed: its length, 0 on failure. */
static size_t pack(struct pf_batch *b)
{
#ifdef PT_HAVE_ZLIB
	if (b->codec == PF_CODEC_DEFLATE)
		return deflate_batch(b);
#endif
#ifdef PT_HAVE_ZSTD
	if (b->codec == PF_CODEC_ZSTD)
		return zstd_batch(b);
#endif
	return 0;
}

/* The wrapper: Trace.packet { compressed_packets or zstd_compressed_packets }. */
static void write_packed(struct pf_batch *b, size_t n)
{
	uint32_t field = b->codec == PF_CODEC_ZSTD ? BATCH_PACKET_FIELD_ZSTD
	                                           : BATCH_PACKET_FIELD_DEFLATE;
	uint8_t head[4 * PB_VARINT_MAX];
	uint8_t *p = pb_key(head, TRACE_PACKET_FIELD, PB_LEN);
	p = pb_varint(p, pb_varint_size((uint64_t)field << 3 | PB_LEN) + pb_varint_size(n) + n);
	p = pb_varint(pb_key(p, field, PB_LEN), n);
	outbuf_write(b->out, head, (size_t)(p - head));
	outbuf_write(b->out, b->packed, n);
}

bool pf_batch_flush(struct pf_batch *b)
{
	if (b->failed) {
		b->len = 0;
		return false;
	}
	if (!b->len)
		return true;
	size_t n = pack(b);
	if (n)
		write_packed(b, n);
	b->failed = !n; /* the batch is dropped and the conversion fails */
	b->len = 0;
	return !b->failed;
}

uint8_t *pf_batch_room(struct pf_batch *b, size_t max)
{
	if (b->len + max > BATCH_MAX)
		pf_batch_flush(b);
	return b->buf + b->len;
}

void pf_batch_done(struct pf_batch *b, uint8_t *end)
{
	b->len = (size_t)(end - b->buf);
}

void pf_batch_write(struct pf_batch *b, const void *packet, size_t n)
{
	if (n > BATCH_MAX) {
		pf_batch_flush(b);
		outbuf_write(b->out, packet, n);
		return;
	}
	memcpy(pf_batch_room(b, n), packet, n);
	b->len += n;
}

void pf_batch_free(struct pf_batch *b)
{
	if (!b)
		return;
#ifdef PT_HAVE_ZLIB
	if (b->z_ready)
		deflateEnd(&b->z);
#endif
#ifdef PT_HAVE_ZSTD
	ZSTD_freeCCtx(b->zstd);
#endif
	free(b->buf);
	free(b->packed);
	free(b);
}
