/* SPDX-License-Identifier: MIT */
/*
 * Shared by the two libFuzzer targets over trace logs (fuzz_log,
 * fuzz_logread): the input put in a memory file, and the digest of the
 * events read, which a second pass after a rewind must match.
 */
#ifndef PT_FUZZ_COMMON_H
#define PT_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* A log of the inputs' size cannot hold this many events: reading more
 * is a loop. */
#define FUZZ_MAX_EVENTS 2000000

/* A memory file named name holding the bytes, or -1 (nothing to fuzz). */
static inline int fuzz_memfd(const char *name, const uint8_t *bytes, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);
	if (fd < 0)
		return -1;
	if (size && write(fd, bytes, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

/* What a pass read: how many events and a digest of them. */
struct fuzz_digest {
	uint64_t count, value;
};

/* Whether the pass may read one more event. */
static inline int fuzz_digest_more(const struct fuzz_digest *d)
{
	return d->count < FUZZ_MAX_EVENTS;
}

/* Adds one event: fields, a sum of its header fields, then its data. */
static inline void fuzz_digest_add(struct fuzz_digest *d, uint64_t fields,
                                   const unsigned char *data, size_t len)
{
	d->value = d->value * 31 + fields;
	for (size_t i = 0; i < len; i++)
		d->value += data[i];
	d->count++;
}

/* The end of a pass, which must have ended by itself. */
static inline void fuzz_digest_end(const struct fuzz_digest *d)
{
	if (d->count >= FUZZ_MAX_EVENTS)
		abort(); /* a log of this size cannot hold that many */
}

/* Whether two passes read the same. */
static inline int fuzz_digest_same(const struct fuzz_digest *a, const struct fuzz_digest *b)
{
	return a->count == b->count && a->value == b->value;
}

#endif
