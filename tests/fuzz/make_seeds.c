/* SPDX-License-Identifier: MIT */
/*
 * Writes the seed corpus of the log fuzzers (fuzz_log, fuzz_logread) into
 * the directory given as argument: real trace logs, format version 3
 * (STAGES and KEEPER blocks, a drain per flush), written by the library
 * through the public API - one per log-full-policy (APPEND linear, LOOP
 * ring, UNTIL_FULL that filled), one written to a pipe (no
 * name table, names in NAMES blocks), several event names (some
 * registered while tracing), data truncated at max-data-size, blocks
 * sealed by flushes - and damaged copies: cut inside a block, a payload
 * byte flipped, a block's sequence number changed, a record of a STAGES
 * and of a KEEPER block with an invalid id, a block's drain number
 * changed, a run of zeros over several blocks.  Every seed stays
 * below the fuzzers' -max_len (512 KiB: a ring log holds at least 17
 * spare slots of 64 KiB, and one that holds anything writes four blocks;
 * a ring that wrapped, over a megabyte, is left to fuzz_logcraft, which
 * crafts rings of 2 to 9 slots).  Block boundaries come from the
 * format definitions (src/log/logfmt.h, docs/LOG-FORMAT.md).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <posixtrace.h>
#include <trace.h>

#include "../../src/log/logfmt.h"

#define MAX_SEED (512u << 10)

static const char *dir;
static int failures;

static void fail(const char *what, const char *file)
{
	fprintf(stderr, "make_seeds: %s: %s\n", file, what);
	failures++;
}

static void wait_flushed(trace_id_t trid)
{
	struct posix_trace_status_info st;
	for (int i = 0; i < 5000; i++) {
		if (posix_trace_get_status(trid, &st) != 0 ||
		    st.posix_stream_flush_status == POSIX_TRACE_NOT_FLUSHING)
			return;
		struct timespec ms = {0, 1000000};
		nanosleep(&ms, NULL);
	}
}

/* n events of several types and lengths; a flush every flush_every. */
static void record(trace_id_t trid, const char *file, int n, int flush_every)
{
	trace_event_id_t ids[4];
	posix_trace_eventid_open("seed:alpha", &ids[0]);
	posix_trace_eventid_open("seed:beta", &ids[1]);
	ids[2] = POSIX_TRACE_UNNAMED_USEREVENT;
	posix_trace_start(trid);
	for (int i = 0; i < n; i++) {
		char text[100];
		if (i == n / 2) /* a name that comes while tracing */
			posix_trace_eventid_open("seed:gamma, named late", &ids[3]);
		int len = snprintf(text, sizeof text, "event %d of %s %s", i, file,
		                   i % 7 ? "" : "with a tail longer than max-data-size (64)");
		posix_trace_event(ids[i % (i >= n / 2 ? 4 : 3)], text, (size_t)len);
		if (flush_every && i % flush_every == flush_every - 1) {
			posix_trace_flush(trid);
			wait_flushed(trid);
		}
	}
	posix_trace_stop(trid);
}

static int create(int fd, const char *file, int log_policy, size_t log_size, trace_id_t *trid)
{
	trace_attr_t attr;
	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, file);
	posix_trace_attr_setlogfullpolicy(&attr, log_policy);
	posix_trace_attr_setlogsize(&attr, log_size);
	posix_trace_attr_setmaxdatasize(&attr, 64);
	int err = posix_trace_create_withlog(0, &attr, fd, trid);
	posix_trace_attr_destroy(&attr);
	return err;
}

static int open_seed(const char *file)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		fail("cannot create", file);
	return fd;
}

static void check_size(int fd, const char *file)
{
	struct stat sb;
	if (fstat(fd, &sb) != 0 || sb.st_size <= (off_t)PT_LOG_HEADER_SIZE)
		fail("no log written", file);
	else if (sb.st_size > (off_t)MAX_SEED)
		fail("larger than the fuzzers' -max_len", file);
}

static void write_log(const char *file, int log_policy, size_t log_size, int n, int flush_every)
{
	trace_id_t trid;
	int fd = open_seed(file);
	if (fd < 0)
		return;
	if (create(fd, file, log_policy, log_size, &trid) != 0) {
		fail("posix_trace_create_withlog failed", file);
	} else {
		if (posixtrace_set_images(trid, 1) != 0) /* IMAGES_SHARED blocks too */
			fail("posixtrace_set_images failed", file);
		record(trid, file, n, flush_every);
		posix_trace_shutdown(trid);
		check_size(fd, file);
	}
	close(fd);
}

/* Copies a pipe into a file until EOF (a thread). */
struct pump {
	int in, out;
};

static void *pump_main(void *arg)
{
	struct pump *p = arg;
	char buf[65536];
	ssize_t n;
	while ((n = read(p->in, buf, sizeof buf)) > 0)
		if (write(p->out, buf, (size_t)n) != n)
			break;
	return NULL;
}

/* An APPEND log written to a pipe, as `posixtrace record -o -` does. */
static void write_pipe_log(const char *file, int n)
{
	int p[2];
	pthread_t th;
	trace_id_t trid;
	int fd = open_seed(file);
	if (fd < 0 || pipe(p) != 0)
		return;
	struct pump pump = {p[0], fd};
	if (pthread_create(&th, NULL, pump_main, &pump) != 0) {
		fail("no thread", file);
		return;
	}
	int err = create(p[1], file, POSIX_TRACE_APPEND, 0, &trid);
	close(p[1]); /* the keeper has its own */
	if (err == 0) {
		record(trid, file, n, n / 4);
		posix_trace_shutdown(trid);
	} else {
		fail("posix_trace_create_withlog on a pipe failed", file);
	}
	pthread_join(th, NULL);
	close(p[0]);
	check_size(fd, file);
	close(fd);
}

/* ---- damaged copies --------------------------------------------------------- */

struct image {
	unsigned char *bytes;
	size_t len;
	uint64_t block[64]; /* offsets of the blocks, in file order */
	size_t nblocks;
};

static int load(const char *file, uint64_t data_off, struct image *im)
{
	char path[512];
	struct stat sb;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_RDONLY);
	memset(im, 0, sizeof *im);
	if (fd < 0 || fstat(fd, &sb) != 0 || !(im->bytes = malloc((size_t)sb.st_size)) ||
	    read(fd, im->bytes, (size_t)sb.st_size) != sb.st_size) {
		fail("cannot read back", file);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	im->len = (size_t)sb.st_size;
	for (uint64_t off = data_off; off + PT_LOG_BLOCK_HDR <= im->len && im->nblocks < 64;) {
		struct pt_log_block b;
		memcpy(&b, im->bytes + off, sizeof b);
		if (b.magic != PT_LOG_BLOCK_MAGIC)
			break;
		im->block[im->nblocks++] = off;
		off += pt_log_pad8(PT_LOG_BLOCK_HDR + b.payload_len);
	}
	if (im->nblocks < 4) {
		fail("fewer than four blocks", file);
		free(im->bytes);
		return -1;
	}
	return 0;
}

static void save(const char *file, const unsigned char *bytes, size_t len)
{
	int fd = open_seed(file);
	if (fd < 0)
		return;
	if (write(fd, bytes, len) != (ssize_t)len)
		fail("short write", file);
	close(fd);
}

/* Copies of `from` with one kind of damage each, named prefix-KIND. */
static void damage(const char *from, uint64_t data_off, const char *prefix)
{
	struct image im;
	char name[128];
	if (load(from, data_off, &im) != 0)
		return;
	unsigned char *copy = malloc(im.len);
	if (!copy) {
		free(im.bytes);
		return;
	}
	uint64_t b1 = im.block[1], b2 = im.block[2];

	snprintf(name, sizeof name, "%s-cut.ptlog", prefix); /* the writer died mid-block */
	save(name, im.bytes, (size_t)(b2 + PT_LOG_BLOCK_HDR + 20));

	memcpy(copy, im.bytes, im.len); /* a payload byte flipped: bad CRC */
	copy[b1 + PT_LOG_BLOCK_HDR + 30] ^= 0x20;
	snprintf(name, sizeof name, "%s-flip.ptlog", prefix);
	save(name, copy, im.len);

	memcpy(copy, im.bytes, im.len); /* block 1 claims a later number */
	copy[b1 + offsetof(struct pt_log_block, seq)] += 3;
	snprintf(name, sizeof name, "%s-seq.ptlog", prefix);
	save(name, copy, im.len);

	/* A record id that is neither event nor meta: in the first STAGES
	 * block (the record after its first section's OWNER) and in the
	 * first KEEPER block (its first record, after the drain number). */
	for (int type = PT_LOG_STAGES; type <= PT_LOG_KEEPER; type++) {
		uint64_t at = 0;
		for (size_t k = 0; k < im.nblocks && !at; k++) {
			struct pt_log_block b;
			memcpy(&b, im.bytes + im.block[k], sizeof b);
			if (b.type != (uint32_t)type)
				continue;
			uint64_t pl = im.block[k] + PT_LOG_BLOCK_HDR, rec = pl + PT_LOG_KEEPER_PREFIX;
			if (type == PT_LOG_STAGES) {
				struct pt_log_stages pre;
				memcpy(&pre, im.bytes + pl, sizeof pre);
				rec = pl + sizeof pre + (uint64_t)pre.ncal * sizeof(struct pt_log_calpoint) +
				      sizeof(struct pt_log_section) + PT_LOG_OWNER_REC;
			}
			if (rec + 8 <= pl + b.payload_len)
				at = rec;
		}
		if (!at) {
			fail("no record to damage", from);
			continue;
		}
		memcpy(copy, im.bytes, im.len);
		uint64_t w0;
		memcpy(&w0, copy + at, sizeof w0);
		w0 = (w0 & ~((uint64_t)PT_REC_ID_MASK << PT_REC_ID_SHIFT)) |
		     (uint64_t)20 << PT_REC_ID_SHIFT;
		memcpy(copy + at, &w0, sizeof w0);
		snprintf(name, sizeof name, "%s-record-%s.ptlog", prefix,
		         type == PT_LOG_STAGES ? "stages" : "keeper");
		save(name, copy, im.len);
	}

	memcpy(copy, im.bytes, im.len); /* block 2 with the drain number of block 1 plus 5 */
	if (b2 + PT_LOG_BLOCK_HDR + 8 <= im.len && b1 + PT_LOG_BLOCK_HDR + 8 <= im.len) {
		uint64_t d;
		memcpy(&d, copy + b1 + PT_LOG_BLOCK_HDR, sizeof d);
		d += 5;
		memcpy(copy + b2 + PT_LOG_BLOCK_HDR, &d, sizeof d);
		snprintf(name, sizeof name, "%s-drain.ptlog", prefix);
		save(name, copy, im.len);
	}

	memcpy(copy, im.bytes, im.len); /* zeros over blocks 1 to 2 */
	memset(copy + b1 + 8, 0, (size_t)(im.block[3] - b1 - 8));
	snprintf(name, sizeof name, "%s-zeros.ptlog", prefix);
	save(name, copy, im.len);

	free(copy);
	free(im.bytes);
}

/* Copies of `from` with a crafted host record each (its CRC right):
 * a name without its null, the longest name, unknown flags, every flag
 * and extreme errors, zeros; and one with a wrong CRC. */
static void host_seeds(const char *from)
{
	struct image im;
	char name[128];
	if (load(from, PT_LOG_DATA_OFF, &im) != 0)
		return;
	struct pt_log_host orig;
	memcpy(&orig, im.bytes + PT_LOG_HOST_OFF, sizeof orig);
	for (int kind = 0; kind < 6; kind++) {
		struct pt_log_host h = orig;
		static const char *const names[] = {"unterminated", "longest", "flags", "extreme",
		                                    "zeros", "crc"};
		switch (kind) {
		case 0: memset(h.name, 'x', sizeof h.name); break;
		case 1: memset(h.name, 'y', POSIXTRACE_HOST_NAME_MAX); break;
		case 2: h.flags = 0xffffffffu; break;
		case 3:
			h.flags = PT_LOG_HOST_FLAGS_KNOWN;
			h.maxerror_us = INT64_MIN;
			h.esterror_us = INT64_MAX;
			h.anchor_real_ns = h.anchor_mono_ns = h.anchor_gap_ns = UINT64_MAX;
			break;
		case 4: memset(&h, 0, sizeof h); break;
		default: break;
		}
		h.crc = pt_crc32c(0, &h, offsetof(struct pt_log_host, crc)) ^ (kind == 5);
		memcpy(im.bytes + PT_LOG_HOST_OFF, &h, sizeof h);
		snprintf(name, sizeof name, "host-%s.ptlog", names[kind]);
		save(name, im.bytes, im.len);
	}
	free(im.bytes);
}

int main(int argc, char **argv)
{
	dir = argc > 1 ? argv[1] : ".";
	write_log("append.ptlog", POSIX_TRACE_APPEND, 1 << 20, 300, 40);
	write_log("loop.ptlog", POSIX_TRACE_LOOP, 4096, 1500, 0);
	write_log("untilfull.ptlog", POSIX_TRACE_UNTIL_FULL, 100 << 10, 5000, 0);
	write_log("small.ptlog", POSIX_TRACE_APPEND, 1 << 20, 3, 0);
	write_pipe_log("pipe.ptlog", 300);
	damage("append.ptlog", PT_LOG_DATA_OFF, "append");
	damage("pipe.ptlog", PT_LOG_DATA_OFF_NOTABLE, "pipe");
	host_seeds("small.ptlog");
	return failures ? 1 : 0;
}
