/*
 * Stream memory: creating, validating and releasing the shared mapping of a
 * stream, its free chunk pool, its name table and its clock.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

#define PT_MIN_CHUNK 4096u
#define PT_MAX_CHUNK (8u << 20)   /* the head packs offsets in 24 bits */
#define PT_TARGET_CHUNKS 256u
#define PT_MAX_CHUNKS 0xffff0u

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }


void pt_ns_to_timespec(const struct pt_map *m, uint64_t ns, struct timespec *ts)
{
	/* Unsigned: a timestamp from another process may be anything. */
	uint64_t real = m->base_real_ns + (ns - m->base_mono_ns);
	if (real > (uint64_t)INT64_MAX)
		real = 0;
	ts->tv_sec = (time_t)(real / 1000000000u);
	ts->tv_nsec = (long)(real % 1000000000u);
}

/* Largest record any event of this stream can need. */
static uint64_t max_record(const struct pt_attr *a)
{
	uint64_t sys = pt_record_size(2 * sizeof(trace_event_set_t));
	uint64_t user = pt_record_size((size_t)a->max_data_size);
	return sys > user ? sys : user;
}

/*
 * Chunks are sized so that a stream has about PT_TARGET_CHUNKS of them and
 * each holds at least four of the largest records.  A chunk loses less than
 * one record at its end and every writer thread holds one partly filled
 * chunk, so stream-min-size / (usable bytes per chunk) chunks plus one per
 * writer thread hold every set of events whose sizes sum to stream-min-size.
 */
static int geometry(const struct pt_attr *a, uint32_t *chunk_size, uint32_t *nchunks)
{
	uint64_t rec = max_record(a), chunk = PT_MIN_CHUNK;
	while (chunk < 4 * rec + PT_CHUNK_HDR)
		chunk *= 2;
	while (chunk < (256u << 10) && chunk * PT_TARGET_CHUNKS < a->stream_size)
		chunk *= 2;
	if (chunk > PT_MAX_CHUNK)
		return EINVAL;
	uint64_t usable = chunk - PT_CHUNK_HDR - (rec - 8);
	uint64_t n = (a->stream_size + usable - 1) / usable + PT_GUARANTEED_WRITERS;
	if (n > PT_MAX_CHUNKS)
		return ENOMEM;
	*chunk_size = (uint32_t)chunk;
	*nchunks = (uint32_t)n;
	return 0;
}

static void pool_init(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	for (uint32_t i = 0; i < m->nchunks; i++)
		atomic_init(&pt_chunk_at(m, i)->free_next, i + 1 < m->nchunks ? i + 1 : PT_NONE);
	atomic_init(&h->free_top, 0);
	atomic_init(&h->free_count, m->nchunks);
}

static void lanes_init(const struct pt_map *m)
{
	for (uint32_t i = 0; i < m->nlanes; i++) {
		struct pt_lane *l = pt_lane_at(m, i);
		atomic_init(&l->state, PT_LANE_FREE);
		atomic_init(&l->head, pt_head_pack(PT_HEAD_EMPTY, 0, 0));
	}
}

static void fill_geometry(struct pt_map *m, const struct pt_stream_hdr *h)
{
	m->lanes_off = h->lanes_off;
	m->names_off = h->names_off;
	m->chunks_off = h->chunks_off;
	m->nlanes = h->nlanes;
	m->nchunks = h->nchunks;
	m->chunk_size = h->chunk_size;
	m->max_data = (uint32_t)h->attr.max_data_size;
	m->base_mono_ns = h->base_mono_ns;
	m->base_real_ns = h->base_real_ns;
}

/* Creates a stream in `fd` (a named shared memory object), or in a new
 * memfd when fd is -1. */
int pt_stream_map_create(const struct pt_attr *attr, pid_t target, int fd, struct pt_map *out)
{
	uint32_t chunk_size, nchunks;
	int err = geometry(attr, &chunk_size, &nchunks);
	if (err)
		return err;
	uint64_t lanes_off = round_up(sizeof(struct pt_stream_hdr), 64);
	uint64_t names_off = lanes_off + (uint64_t)PT_MAX_LANES * sizeof(struct pt_lane);
	uint64_t chunks_off = round_up(names_off + (uint64_t)TRACE_USER_EVENT_MAX * PT_NAME_SIZE, 4096);
	uint64_t total = chunks_off + (uint64_t)nchunks * chunk_size;
	if (total > (uint64_t)SIZE_MAX / 2)
		return ENOMEM;

	if (fd < 0)
		fd = (int)syscall(SYS_memfd_create, "posixtrace-stream", MFD_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? EAGAIN : ENOMEM;
	/* Reserve every page now: a stream that cannot be backed fails here
	 * with ENOMEM instead of faulting in a writer later. */
	if (ftruncate(fd, (off_t)total) != 0 || fallocate(fd, 0, 0, (off_t)total) != 0) {
		close(fd);
		return ENOMEM;
	}
	void *p = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return ENOMEM;
	}

	struct pt_stream_hdr *h = p;
	struct timespec real;
	h->magic = PT_STREAM_MAGIC;
	h->version = PT_LAYOUT_VERSION;
	h->hdr_size = sizeof *h;
	h->total_size = total;
	h->lanes_off = lanes_off;
	h->names_off = names_off;
	h->chunks_off = chunks_off;
	h->nlanes = PT_MAX_LANES;
	h->nchunks = nchunks;
	h->chunk_size = chunk_size;
	h->target_pid = target;
	h->attr = *attr;
	h->base_mono_ns = pt_now_ns();
	clock_gettime(CLOCK_REALTIME, &real);
	h->base_real_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
	h->attr.create_sec = real.tv_sec;
	h->attr.create_nsec = real.tv_nsec;
	atomic_init(&h->state, PT_ST_SUSPENDED);
	atomic_init(&h->ovf_ts, UINT64_MAX);

	out->base = p;
	out->size = (size_t)total;
	out->fd = fd;
	fill_geometry(out, h);
	lanes_init(out);
	pool_init(out);
	return 0;
}

/* Maps a stream another process created and validates it. */
int pt_stream_map_open(int fd, struct pt_map *out)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(struct pt_stream_hdr) ||
	    (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 2)
		return EINVAL;
	void *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return ENOMEM;
	out->base = p;
	out->size = (size_t)st.st_size;
	out->fd = -1;
	if (pt_stream_map_check(out) != 0) {
		munmap(p, out->size);
		out->base = NULL;
		return EINVAL;
	}
	fill_geometry(out, pt_hdr(out));
	return 0;
}

/* Validates the geometry a mapping claims before anything is read through it. */
int pt_stream_map_check(const struct pt_map *m)
{
	const struct pt_stream_hdr *h = pt_hdr(m);
	if (m->size < sizeof *h || h->magic != PT_STREAM_MAGIC || h->version != PT_LAYOUT_VERSION ||
	    h->hdr_size != sizeof *h || h->total_size != m->size)
		return EINVAL;
	if (h->nlanes == 0 || h->nlanes > PT_MAX_LANES || h->nchunks == 0 ||
	    h->nchunks > PT_MAX_CHUNKS || h->chunk_size < PT_MIN_CHUNK ||
	    h->chunk_size > PT_MAX_CHUNK || h->chunk_size % 64 != 0 ||
	    h->attr.max_data_size > PT_MAX_DATA_LIMIT)
		return EINVAL;
	if (h->lanes_off < sizeof *h || h->lanes_off % 64 ||
	    h->names_off < h->lanes_off + (uint64_t)h->nlanes * sizeof(struct pt_lane) ||
	    h->chunks_off < h->names_off + (uint64_t)TRACE_USER_EVENT_MAX * PT_NAME_SIZE ||
	    h->chunks_off % 64 || h->chunks_off + (uint64_t)h->nchunks * h->chunk_size > m->size)
		return EINVAL;
	if (pt_record_size((size_t)h->attr.max_data_size) * 4 + PT_CHUNK_HDR > h->chunk_size)
		return EINVAL;
	return 0;
}

void pt_stream_unmap(struct pt_map *m)
{
	if (m->base)
		munmap(m->base, m->size);
	if (m->fd >= 0)
		close(m->fd);
	m->base = NULL;
	m->fd = -1;
}

/* The pool is a Treiber stack whose top carries a tag in its high half, so
 * a chunk popped and pushed back between a load and a CAS is noticed. */
uint32_t pt_pool_pop(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint64_t top = atomic_load_explicit(&h->free_top, memory_order_acquire);
	for (;;) {
		uint32_t idx = (uint32_t)top;
		if (idx >= m->nchunks)
			return PT_NONE;
		uint32_t next = atomic_load_explicit(&pt_chunk_at(m, idx)->free_next,
		                                     memory_order_relaxed);
		uint64_t repl = (uint64_t)next | (((top >> 32) + 1) << 32);
		if (atomic_compare_exchange_weak_explicit(&h->free_top, &top, repl,
		                                          memory_order_acq_rel,
		                                          memory_order_acquire)) {
			atomic_fetch_sub_explicit(&h->free_count, 1, memory_order_relaxed);
			return idx;
		}
	}
}

void pt_pool_push(const struct pt_map *m, uint32_t idx)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	struct pt_chunk *c = pt_chunk_at(m, idx);
	uint64_t top = atomic_load_explicit(&h->free_top, memory_order_relaxed);
	uint64_t repl;
	do {
		atomic_store_explicit(&c->free_next, (uint32_t)top, memory_order_relaxed);
		repl = (uint64_t)idx | (((top >> 32) + 1) << 32);
	} while (!atomic_compare_exchange_weak_explicit(&h->free_top, &top, repl,
	                                                memory_order_release,
	                                                memory_order_relaxed));
	atomic_fetch_add_explicit(&h->free_count, 1, memory_order_relaxed);
}

void pt_wake_readers(struct pt_stream_hdr *h)
{
	atomic_store_explicit(&h->waiters, 0, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->futex_seq, 1, memory_order_release);
	syscall(SYS_futex, &h->futex_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void pt_stream_set_name(const struct pt_map *m, trace_event_id_t id, const char *name)
{
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return;
	uint32_t idx = id - PT_USER_FIRST;
	struct pt_stream_hdr *h = pt_hdr(m);
	if (atomic_load_explicit(&h->name_valid[idx], memory_order_acquire))
		return;
	char *dst = pt_name_at(m, idx);
	size_t n = strnlen(name, TRACE_EVENT_NAME_MAX);
	memcpy(dst, name, n);
	dst[n] = '\0';
	atomic_store_explicit(&h->name_valid[idx], 1, memory_order_release);
}

int pt_stream_get_name(const struct pt_map *m, trace_event_id_t id, char *out)
{
	const char *sys = pt_system_event_name(id);
	if (sys) {
		strcpy(out, sys);
		return 0;
	}
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return EINVAL;
	uint32_t idx = id - PT_USER_FIRST;
	if (!atomic_load_explicit(&pt_hdr(m)->name_valid[idx], memory_order_acquire))
		return EINVAL;
	const char *src = pt_name_at(m, idx);
	size_t n = strnlen(src, TRACE_EVENT_NAME_MAX);
	memcpy(out, src, n);
	out[n] = '\0';
	return 0;
}

/* Every event lost so far (cumulative): the header's count and the
 * lanes'.  Read from a mapping others write: only a number. */
uint64_t pt_stream_lost(const struct pt_map *m)
{
	uint64_t n = atomic_load_explicit(&pt_hdr(m)->lost_total, memory_order_relaxed);
	uint32_t lanes = atomic_load_explicit(&pt_hdr(m)->lanes_hwm, memory_order_relaxed);
	if (lanes > m->nlanes)
		lanes = m->nlanes;
	for (uint32_t i = 0; i < lanes; i++)
		n += atomic_load_explicit(&pt_lane_at(m, i)->lost, memory_order_relaxed);
	return n;
}

/* Shutdown: writers stop.  A stream that had stopped itself because it was
 * full keeps that fact, so that the end of what is read (or logged) still
 * reports the overflow and the automatic stop. */
void pt_stream_end(struct pt_stream_hdr *h)
{
	if (atomic_exchange_explicit(&h->state, PT_ST_DEAD, memory_order_acq_rel) == PT_ST_FULL)
		atomic_store_explicit(&h->ended_full, 1, memory_order_release);
}
