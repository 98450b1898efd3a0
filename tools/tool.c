/* SPDX-License-Identifier: MIT */
/*
 * The out-of-line halves of tool.h's inline functions: what each does
 * when its common case, inline where every event asks, does not answer
 * (a name not cached yet, data that may be text, a time past the cached
 * 10 microseconds, an output buffer full).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tool.h"

/* Two decimal digits per division: a division per digit was what
 * formatting a time cost most. */
const char digit_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Names are looked up once per id: live streams and logs read from a pipe
 * learn new names while we read, so a failed lookup is retried next time
 * (name_cache_get calls this for an id not known yet). */
const char *name_cache_lookup(struct name_cache *c, trace_event_id_t id)
{
	static char unknown[32];
	if (id >= MAX_EVENT_IDS) {
		snprintf(unknown, sizeof unknown, "event_%u", id);
		return unknown;
	}
	if (!c->known[id]) {
		if (posix_trace_eventid_get_name(c->trid, id, c->name[id]) != 0) {
			snprintf(unknown, sizeof unknown, "event_%u", id);
			return unknown;
		}
		c->known[id] = true;
	}
	return c->name[id];
}

/* text_length's walk, character by character. */
size_t text_length_walk(const unsigned char *data, size_t len)
{
	if (!is_printable_text(data, len))
		return 0;
	return data[len - 1] == '\0' ? len - 1 : len;
}

/* put_time_cached's refill: the cache filled for the 10 microseconds
 * tens_of_us, then the time. */
char *put_time_refill(char *p, uint64_t ns, uint64_t tens_of_us, struct time_cache *c)
{
	uint64_t sec = tens_of_us / 100000u;
	uint32_t first5 = (uint32_t)(tens_of_us % 100000u);
	if (!c->len || c->sec != sec) {
		c->sec = sec;
		c->sec_len = (unsigned char)(put_u64(c->text, sec) - c->text);
		c->text[c->sec_len] = '.';
	}
	char *d = c->text + c->sec_len + 1;
	d[0] = (char)('0' + first5 / 10000u);
	put_four_digits(d + 1, first5 % 10000u);
	c->tens_of_us = tens_of_us;
	c->len = (unsigned char)(c->sec_len + 6);
	return put_time_from_cache(p, ns, tens_of_us, c);
}

static bool write_fully(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t done = write(fd, p, n);
		if (done < 0 && errno == EINTR)
			continue;
		if (done == 0)
			errno = EIO; /* nothing written, no reason given */
		if (done <= 0)
			return false;
		p += done;
		n -= (size_t)done;
	}
	return true;
}

/* Straight to the descriptor once stdio has written what it holds: stdio
 * splits a large write in two (the whole blocks, then a remainder it
 * buffers). */
bool outbuf_flush(struct outbuf *o)
{
	if (o->len && !o->failed) {
		int fd = fileno(o->out);
		if (fd < 0)
			o->failed = fwrite(o->buf, 1, o->len, o->out) != o->len;
		else
			o->failed = fflush(o->out) != 0 || !write_fully(fd, o->buf, o->len);
		if (o->failed)
			o->err = errno;
	}
	o->len = 0;
	return !o->failed;
}
