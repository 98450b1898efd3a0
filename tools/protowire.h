/* SPDX-License-Identifier: MIT */
/*
 * The protocol buffers wire format, written by hand for perfetto.c: a key
 * is (field << 3 | wire type) as a varint; integers are varints (7 bits a
 * byte, low first); strings, bytes and messages are a varint length, then
 * their bytes.  Each pb_* writes at p, which has room enough, and returns
 * the end of what it wrote.
 */
#ifndef POSIXTRACE_PROTOWIRE_H
#define POSIXTRACE_PROTOWIRE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define PB_VARINT 0
#define PB_LEN 2
#define PB_VARINT_MAX 10
/* The room a message opened with pb_open may need beyond its bytes: its
 * key and a length of up to PB_VARINT_MAX bytes. */
#define PB_NEST_ROOM (2 * PB_VARINT_MAX)

static inline uint8_t *pb_varint(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

static inline size_t pb_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint8_t *pb_key(uint8_t *p, uint32_t field, unsigned type)
{
	return pb_varint(p, (uint64_t)field << 3 | type);
}

static inline uint8_t *pb_uint(uint8_t *p, uint32_t field, uint64_t v)
{
	return pb_varint(pb_key(p, field, PB_VARINT), v);
}

static inline uint8_t *pb_bytes(uint8_t *p, uint32_t field, const void *s, size_t n)
{
	p = pb_varint(pb_key(p, field, PB_LEN), n);
	memcpy(p, s, n);
	return p + n;
}

static inline uint8_t *pb_string(uint8_t *p, uint32_t field, const char *s)
{
	return pb_bytes(p, field, s, strlen(s));
}

/* A message inside another: pb_open writes its key and keeps a byte for
 * its length at *mark; pb_close, given the end of the message, writes the
 * length there, moving the message when the length takes more than a
 * byte (most messages here are shorter than 128 bytes). */
static inline uint8_t *pb_open(uint8_t *p, uint32_t field, uint8_t **mark)
{
	p = pb_key(p, field, PB_LEN);
	*mark = p;
	return p + 1;
}

static inline uint8_t *pb_close(uint8_t *mark, uint8_t *end)
{
	size_t len = (size_t)(end - mark - 1);
	if (len < 0x80) {
		*mark = (uint8_t)len;
		return end;
	}
	size_t n = pb_varint_size(len);
	memmove(mark + n, mark + 1, len);
	pb_varint(mark, len);
	return end + n - 1;
}

#endif
