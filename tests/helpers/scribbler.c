/* SPDX-License-Identifier: MIT */
/*
 * scribbler: a traced process that attacks the consumers of its stream
 * (t_consumer).  It posts events until a stream traces it, writes one line
 * "ready" to stdout, then waits for a byte on stdin and writes the shapes
 * the consumer-side issue lists into the stream memory it shares with its
 * controller and keeper:
 *
 *   cycle      two chunks of a fresh lane link to each other, each holding
 *              three valid events (ids of "sc.cycle")
 *   selflink   every lane slot (all lane pages committed) names one chunk
 *              that links to itself and holds TIME records only
 *   samechunk  every lane slot names one chunk holding events
 *   nsforge    every lane claims an owner of its own in a pid namespace of
 *              its own (owner_ns, owner), and 64 of them hold a chunk of 10
 *              events whose writer is that owner: a reader looks them up
 *              in /proc and finds none
 *   ovfstorm   reports a loss at time 1 in the stream headers, over and
 *              over without pause, for -s seconds: as if a writer lost an
 *              event at every instant
 *   flip       flips random words of lanes and chunks and punches holes in
 *              the memfds, for -s seconds, while posting
 *
 * Then it keeps posting one event every millisecond ("sc.tick", the number
 * of events posted so far as data) until killed.  Its lines on stdout:
 * "ready", then "done N" where N is the number of user events the shape
 * stored (the most a consumer may yield of them).
 *
 *   scribbler SHAPE [-s SECONDS] [-n STREAMS]
 *
 * With -n it waits until STREAMS streams trace it (at most 4).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "../../src/layout.h"

struct stream {
	unsigned char *base;
	size_t size;
	int fd;
	struct pt_stream_hdr *h;
};

#define MAX_STREAMS 4

static trace_event_id_t tick_id, cycle_id;
static unsigned long posted;

static void post(void)
{
	posted++;
	posix_trace_event(tick_id, &posted, sizeof posted);
}

/* The streams that trace this process: their memfds, among its
 * descriptors.  How many were found (at most max). */
static int find_streams(struct stream *s, int max)
{
	char path[320], link[128];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int found = 0;
	while (d && found < max && (e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n <= 0 || (link[n] = '\0', strncmp(link, "/memfd:posixtrace-stream", 24) != 0))
			continue;
		struct stat st;
		struct stream *t = &s[found];
		t->fd = open(path, O_RDWR | O_CLOEXEC);
		if (t->fd < 0 || fstat(t->fd, &st) != 0)
			continue;
		t->size = (size_t)st.st_size;
		t->base = mmap(NULL, t->size, PROT_READ | PROT_WRITE, MAP_SHARED, t->fd, 0);
		t->h = (struct pt_stream_hdr *)t->base;
		if (t->base != MAP_FAILED && t->h->magic == PT_STREAM_MAGIC)
			found++;
		else
			close(t->fd);
	}
	if (d)
		closedir(d);
	return found;
}

static struct pt_lane *lane_at(const struct stream *s, uint32_t i)
{
	return (struct pt_lane *)(s->base + s->h->lanes_off) + i;
}

static struct pt_chunk *chunk_at(const struct stream *s, uint32_t i)
{
	return (struct pt_chunk *)(s->base + s->h->chunks_off + (size_t)i * s->h->chunk_size);
}

/* A chunk taken from the stream's free pool (as pt_pool_pop does). */
static uint32_t take_chunk(const struct stream *s)
{
	uint64_t top = atomic_load(&s->h->free_top);
	for (;;) {
		uint32_t idx = (uint32_t)top;
		if (idx >= s->h->max_chunks)
			exit(3);
		uint64_t repl = (uint64_t)atomic_load(&chunk_at(s, idx)->free_next) |
		                (((top >> 32) + 1) << 32);
		if (atomic_compare_exchange_weak(&s->h->free_top, &top, repl))
			return idx;
	}
}

/* Fills chunk c (of lane `lane`) with `events` events, or TIME records
 * when events is 0, links it to `next` and seals it. */
static void fill_chunk(const struct stream *s, uint32_t c, uint32_t lane, uint32_t events,
                       uint32_t next)
{
	struct pt_chunk *ch = chunk_at(s, c);
	unsigned char *p = (unsigned char *)ch;
	uint32_t off = PT_CHUNK_HDR, n = 0;
	ch->base = 1;
	ch->seq = atomic_fetch_add(&s->h->chunk_seq, 1) + 1;
	ch->lane = lane;
	ch->owner.pid = getpid();
	ch->owner.tid = getpid();
	strcpy(ch->owner.comm, "scribbler");
	while (off + 24 <= s->h->chunk_size && (events == 0 || n < events)) {
		uint64_t w[3] = {pt_rec_word0(1, events ? cycle_id : PT_ID_TIME, 8, 0), 0x1234, n};
		memcpy(p + off, w, sizeof w);
		off += 24;
		n++;
	}
	atomic_store(&ch->commit, ((uint64_t)(events ? n : 0) << 32) | off);
	atomic_store(&ch->event_bytes, events ? off - PT_CHUNK_HDR : 0);
	atomic_store(&ch->next, next);
}

static void point_lane(const struct stream *s, uint32_t lane, uint32_t c)
{
	struct pt_lane *l = lane_at(s, lane);
	uint64_t hd = atomic_load(&l->head);
	atomic_store(&l->head, pt_head_pack(c, PT_CHUNK_HDR, pt_head_tag(hd) + 1));
}

/* A fresh lane slot of the first page (committed at creation). */
static uint32_t fresh_lane(const struct stream *s)
{
	uint32_t n = atomic_fetch_add(&s->h->nlanes, 1);
	if (n >= PT_LANES_PER_PAGE)
		exit(3);
	return n;
}

static unsigned shape_cycle(const struct stream *s)
{
	uint32_t lane = fresh_lane(s), a = take_chunk(s), b = take_chunk(s);
	fill_chunk(s, a, lane, 3, b);
	fill_chunk(s, b, lane, 3, a);
	point_lane(s, lane, a);
	return 6;
}

/* Every lane page written, so that it is committed memory. */
static uint32_t all_lanes(const struct stream *s)
{
	uint32_t n = s->h->max_lanes;
	for (uint32_t i = 0; i < n; i++)
		atomic_store(&lane_at(s, i)->owner, atomic_load(&lane_at(s, i)->owner));
	atomic_store(&s->h->nlanes, n);
	atomic_store(&s->h->committed_lanes, n);
	return n;
}

static unsigned shape_selflink(const struct stream *s)
{
	uint32_t c = take_chunk(s), n = all_lanes(s);
	fill_chunk(s, c, 0, 0, c);
	for (uint32_t i = 0; i < n; i++)
		point_lane(s, i, c);
	return 0;
}

static unsigned shape_samechunk(const struct stream *s)
{
	uint32_t c = take_chunk(s), last = take_chunk(s), n = all_lanes(s);
	fill_chunk(s, last, 0, 1, PT_NONE);
	fill_chunk(s, c, 0, 100, last);
	for (uint32_t i = 0; i < n; i++)
		point_lane(s, i, c);
	return 101;
}

static unsigned shape_nsforge(const struct stream *s)
{
	uint32_t n = all_lanes(s), stored = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct pt_lane *l = lane_at(s, i);
		atomic_store(&l->owner_ns, 0xf0000000ull + 1000 + i);
		atomic_store(&l->owner, ((uint64_t)(i + 2) << 32) | 1);
		if (i >= 64)
			continue;
		uint32_t c = take_chunk(s);
		fill_chunk(s, c, i, 10, PT_NONE);
		chunk_at(s, c)->owner.pid = (int32_t)(i + 2);
		chunk_at(s, c)->owner.tid = (int32_t)(i + 2);
		point_lane(s, i, c);
		stored += 10;
	}
	return stored;
}

static unsigned shape_ovfstorm(const struct stream *streams, int n, int seconds)
{
	time_t end = time(NULL) + seconds;
	while (time(NULL) < end)
		for (int k = 0; k < 4096; k++) {
			struct pt_stream_hdr *h = streams[k % n].h;
			atomic_store(&h->ovf_ts, 1);
			atomic_fetch_add(&h->ovf_count, 1);
		}
	return 0;
}

static unsigned xorshift(unsigned *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 17;
	*x ^= *x << 5;
	return *x;
}

static unsigned shape_flip(const struct stream *streams, int n, int seconds)
{
	unsigned rnd = (unsigned)getpid() * 2654435761u;
	time_t end = time(NULL) + seconds;
	while (time(NULL) < end) {
		const struct stream *s = &streams[xorshift(&rnd) % (unsigned)n];
		size_t first = s->h->lanes_off, span = s->size - first;
		for (int k = 0; k < 64; k++) {
			size_t off = (first + (size_t)xorshift(&rnd) % span) & ~(size_t)7;
			uint64_t v = (uint64_t)xorshift(&rnd) << 32 | xorshift(&rnd);
			if (k % 4 == 0)
				v &= 0xffffffffu; /* small numbers: plausible indexes */
			memcpy(s->base + off, &v, sizeof v);
		}
		if (xorshift(&rnd) % 8 == 0)
			fallocate(s->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
			          (off_t)((first + (size_t)xorshift(&rnd) % span) & ~(size_t)4095), 4096);
		for (int k = 0; k < 16; k++)
			post();
		usleep(200);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int seconds = 2, want = 1;
	if (argc < 2)
		return 2;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "-s") == 0)
			seconds = atoi(argv[i + 1]);
		else if (strcmp(argv[i], "-n") == 0)
			want = atoi(argv[i + 1]);
	}
	if (want < 1 || want > MAX_STREAMS)
		return 2;
	setvbuf(stdout, NULL, _IOLBF, 0);
	posix_trace_eventid_open("sc.tick", &tick_id);
	posix_trace_eventid_open("sc.cycle", &cycle_id);
	struct stream s[MAX_STREAMS];
	int n;
	memset(s, 0, sizeof s);
	for (int tries = 0; (n = find_streams(s, want)) < want; tries++) {
		for (int i = 0; i < n; i++) {
			munmap(s[i].base, s[i].size);
			close(s[i].fd);
		}
		if (tries > 10000)
			return 3;
		post();
		usleep(1000);
	}
	post();
	printf("ready\n");
	char go;
	if (read(0, &go, 1) != 1)
		return 4;
	unsigned stored = 0;
	if (strcmp(argv[1], "cycle") == 0)
		stored = shape_cycle(&s[0]);
	else if (strcmp(argv[1], "selflink") == 0)
		stored = shape_selflink(&s[0]);
	else if (strcmp(argv[1], "samechunk") == 0)
		stored = shape_samechunk(&s[0]);
	else if (strcmp(argv[1], "nsforge") == 0)
		stored = shape_nsforge(&s[0]);
	else if (strcmp(argv[1], "ovfstorm") == 0)
		stored = shape_ovfstorm(s, n, seconds);
	else if (strcmp(argv[1], "flip") == 0)
		stored = shape_flip(s, n, seconds);
	else
		return 2;
	printf("done %u\n", stored);
	for (;;) {
		post();
		usleep(1000);
	}
}
