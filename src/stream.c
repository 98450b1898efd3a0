/* SPDX-License-Identifier: MIT */
/*
 * Stream memory: creating, validating and releasing a stream's sealed
 * memfd, committing memory as writers need it, the free chunk pool, the
 * name table.  See layout.h for what lives where.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "clock.h"
#include "layout.h"
#include "memcheck.h"
#include "stream.h"
#include "sysnames.h"
#include "tagstack.h"
#include "token.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

#define MIN_CHUNK 4096u
#define TARGET_CHUNKS 256u
#define CHUNK_FOR_SMALL_STREAMS (256u << 10)
#define GROWTH_MIN (256ull << 20) /* address space for the chunks of further writers */
#define GROW_BYTES (128u << 10)   /* committed per growth step */
#define PAGE 4096u

static uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

/* Largest record a writer may append at once: an event, and before it a
 * TIME or OWNER record. */
static uint64_t max_append(uint64_t max_data)
{
	return pt_record_size((size_t)max_data) + pt_record_size(sizeof(struct pt_owner_rec));
}

struct geometry {
	uint32_t chunk_size, base_chunks, max_chunks, max_lanes, grow_chunks;
	uint64_t names_off, lanes_off, chunks_off, total;
};

/*
 * Chunks are sized so that a small stream has about TARGET_CHUNKS of them
 * and each holds at least four of the largest records, so that a chunk
 * loses less than a quarter of itself at its end.  The chunks committed at
 * creation hold stream-min-size bytes of events however they are cut into
 * chunks; the address space after them is for the chunks further writers
 * hold, committed when they need it.
 */
static int geometry_with(const struct pt_attr *a, uint64_t growth_room, struct geometry *g)
{
	uint64_t rec = max_append(a->max_data_size);
	uint64_t want = a->stream_size / TARGET_CHUNKS;
	if (want > CHUNK_FOR_SMALL_STREAMS)
		want = CHUNK_FOR_SMALL_STREAMS;
	uint64_t chunk = round_up(4 * rec + PT_CHUNK_HDR, PAGE);
	if (chunk < want)
		chunk = round_up(want, PAGE);
	if (chunk < MIN_CHUNK)
		chunk = MIN_CHUNK;
	if (chunk > PT_MAX_CHUNK_SIZE)
		return EINVAL;
	uint64_t usable = chunk - PT_CHUNK_HDR - rec;
	uint64_t base = (a->stream_size + usable - 1) / usable + 2;
	if (base > PT_MAX_CHUNKS / 2)
		return ENOMEM;
	uint64_t growth = base * chunk * 4 > GROWTH_MIN ? base * chunk * 4 : GROWTH_MIN;
	if (growth > growth_room)
		growth = growth_room;
	uint64_t maxc = base + growth / chunk;
	if (maxc > PT_MAX_CHUNKS)
		maxc = PT_MAX_CHUNKS;
	g->chunk_size = (uint32_t)chunk;
	g->base_chunks = (uint32_t)base;
	g->max_chunks = (uint32_t)maxc;
	g->max_lanes = (uint32_t)round_up(maxc, PT_LANES_PER_PAGE);
	g->grow_chunks = (uint32_t)(GROW_BYTES / chunk ? GROW_BYTES / chunk : 1);
	g->names_off = round_up(sizeof(struct pt_stream_hdr), PAGE);
	g->lanes_off = round_up(g->names_off + (uint64_t)TRACE_USER_EVENT_MAX * PT_NAME_SIZE, PAGE);
	g->chunks_off = round_up(g->lanes_off + (uint64_t)g->max_lanes * sizeof(struct pt_lane), PAGE);
	g->total = g->chunks_off + (uint64_t)maxc * chunk;
	return g->total > (uint64_t)SIZE_MAX / 4 ? ENOMEM : 0;
}

/* The address space after the base chunks is a quarter of what the
 * process may still map, and the whole memfd stays within the largest file
 * it may make. */
static int geometry(const struct pt_attr *a, struct geometry *g)
{
	uint64_t file_room = pt_file_room(), growth = pt_as_room() / 4;
	int err = geometry_with(a, growth, g);
	if (!err && g->total > file_room) {
		uint64_t base_only;
		err = geometry_with(a, 0, g);
		base_only = g->total;
		if (!err && base_only > file_room)
			return ENOMEM;
		if (!err)
			err = geometry_with(a, file_room - base_only, g);
		while (!err && g->total > file_room && g->max_chunks > g->base_chunks)
			err = geometry_with(a, (uint64_t)(g->max_chunks - g->base_chunks - 1) * g->chunk_size, g);
		if (!err && g->total > file_room)
			return ENOMEM;
	}
	return err;
}

static int pt_populate(void *p, size_t len, int fd, uint64_t off)
{
	if (madvise(p, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return ENOMEM;
	/* Kernels before 5.14: allocate, then write every page. */
	if (fallocate(fd, 0, (off_t)off, (off_t)len) != 0)
		return ENOMEM;
	for (size_t i = 0; i < len; i += PAGE)
		((volatile unsigned char *)p)[i] = ((volatile unsigned char *)p)[i];
	return 0;
}

int pt_stream_backed(const struct pt_map *m, uint64_t off, uint64_t len)
{
	off_t hole = lseek(m->fd, (off_t)off, SEEK_HOLE);
	return hole >= 0 && (uint64_t)hole >= off + len;
}

static void fill_map(struct pt_map *m, const struct pt_stream_hdr *h)
{
	m->names_off = h->names_off;
	m->lanes_off = h->lanes_off;
	m->chunks_off = h->chunks_off;
	m->max_lanes = h->max_lanes;
	m->max_chunks = h->max_chunks;
	m->base_chunks = h->base_chunks;
	m->chunk_size = h->chunk_size;
	m->grow_chunks = h->grow_chunks;
	m->clock = h->clock;
	m->max_data = (uint32_t)h->attr.max_data_size;
	m->policy = h->attr.stream_policy;
	m->inherited = h->attr.inheritance == POSIX_TRACE_INHERITED;
	m->event_room = h->event_room;
	m->base_mono_ns = h->base_mono_ns;
	m->base_real_ns = h->base_real_ns;
	/* Whatever another process wrote there, a writer waits at most this. */
	m->block_ns = h->attr.block_ns < PT_BLOCK_MAX_NS ? h->attr.block_ns : PT_BLOCK_MAX_NS;
	if (m->policy != POSIX_TRACE_FLUSH)
		m->block_ns = 0;
}

static void pool_init(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	for (uint32_t i = 0; i < m->base_chunks; i++)
		atomic_init(&pt_chunk_at(m, i)->free_next, i + 1 < m->base_chunks ? i + 1 : PT_NONE);
	atomic_init(&h->free_top, 0);
	atomic_init(&h->free_count, m->base_chunks);
	atomic_init(&h->committed_chunks, m->base_chunks);
	atomic_init(&h->committed_lanes, PT_LANES_PER_PAGE);
}

static void header_init(struct pt_stream_hdr *h, const struct pt_attr *a, const struct geometry *g)
{
	h->magic = PT_STREAM_MAGIC;
	h->version = PT_LAYOUT_VERSION;
	h->hdr_size = sizeof *h;
	h->total_size = g->total;
	h->names_off = g->names_off;
	h->lanes_off = g->lanes_off;
	h->chunks_off = g->chunks_off;
	h->max_lanes = g->max_lanes;
	h->max_chunks = g->max_chunks;
	h->base_chunks = g->base_chunks;
	h->chunk_size = g->chunk_size;
	h->grow_chunks = g->grow_chunks;
	h->clock = pt_clock_choose();
	h->event_room = a->stream_size;
	h->attr = *a;
	pt_clock_pair(&h->base_mono_ns, &h->base_real_ns);
	h->attr.create_sec = (int64_t)(h->base_real_ns / 1000000000u);
	h->attr.create_nsec = (int64_t)(h->base_real_ns % 1000000000u);
	atomic_init(&h->state, PT_ST_SUSPENDED);
	atomic_init(&h->ovf_ts, UINT64_MAX);
}

/* Commits the header, names and first lane page, and the base chunks. */
static int commit_base(unsigned char *p, int fd, const struct geometry *g)
{
	uint64_t first = g->lanes_off + PT_LANES_PER_PAGE * sizeof(struct pt_lane);
	int err = pt_populate(p, (size_t)first, fd, 0);
	if (!err)
		err = pt_populate(p + g->chunks_off, (size_t)g->base_chunks * g->chunk_size, fd,
		                  g->chunks_off);
	return err;
}

int pt_stream_create(const struct pt_attr *attr, struct pt_map *out)
{
	struct geometry g;
	int err = geometry(attr, &g);
	if (!err)
		err = pt_mem_headroom(g.chunks_off + (uint64_t)g.base_chunks * g.chunk_size, g.total);
	if (err)
		return err;
	int fd = memfd_create("posixtrace-stream", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? EAGAIN : ENOMEM;
	void *p = MAP_FAILED;
	/* Its descriptors leave this process only as tokens (token.h): the
	 * mode says who may open them. */
	if (fchmod(fd, PT_MEMFD_MODE) == 0 && ftruncate(fd, (off_t)g.total) == 0 &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
		p = mmap(NULL, (size_t)g.total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED || commit_base(p, fd, &g) != 0) {
		if (p != MAP_FAILED)
			munmap(p, (size_t)g.total);
		close(fd);
		return ENOMEM;
	}
	header_init(p, attr, &g);
	out->base = p;
	out->size = (size_t)g.total;
	out->fd = fd;
	fill_map(out, p);
	pool_init(out);
	return 0;
}

/* The geometry a mapping claims, checked before anything is read through it. */
static int header_ok(const struct pt_stream_hdr *h, size_t size)
{
	if (size < sizeof *h || h->magic != PT_STREAM_MAGIC || h->version != PT_LAYOUT_VERSION ||
	    h->hdr_size != sizeof *h || h->total_size != size)
		return 0;
	if (h->chunk_size < MIN_CHUNK || h->chunk_size > PT_MAX_CHUNK_SIZE ||
	    h->chunk_size % PAGE || h->attr.max_data_size > PT_MAX_DATA_LIMIT ||
	    max_append(h->attr.max_data_size) * 2 + PT_CHUNK_HDR > h->chunk_size)
		return 0;
	if (h->base_chunks == 0 || h->base_chunks > h->max_chunks ||
	    h->max_chunks > PT_MAX_CHUNKS || h->max_lanes == 0 ||
	    h->max_lanes % PT_LANES_PER_PAGE || h->max_lanes > PT_MAX_CHUNKS + PT_LANES_PER_PAGE ||
	    h->grow_chunks == 0 || (h->clock != PT_CLOCK_MONO && h->clock != PT_CLOCK_TSC))
		return 0;
	if (h->names_off < sizeof *h || h->names_off % PAGE ||
	    h->lanes_off < h->names_off + (uint64_t)TRACE_USER_EVENT_MAX * PT_NAME_SIZE ||
	    h->lanes_off % PAGE ||
	    h->chunks_off < h->lanes_off + (uint64_t)h->max_lanes * sizeof(struct pt_lane) ||
	    h->chunks_off % PAGE || h->chunks_off + (uint64_t)h->max_chunks * h->chunk_size > size)
		return 0;
	return 1;
}

/* The stream's whole memfd (*len bytes), or, when the address space does
 * not have room for it (RLIMIT_AS), the longest prefix found by halving
 * that does: *len says how long.  NULL when not even a page fits. */
static void *map_what_fits(int fd, size_t *len)
{
	for (size_t want = *len; want >= PAGE; want = want / 2 / PAGE * PAGE) {
		void *p = mmap(NULL, want, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			*len = want;
			return p;
		}
		if (errno != ENOMEM)
			return NULL;
	}
	return NULL;
}

int pt_stream_map_fd(int fd, struct pt_map *out)
{
	struct stat st;
	int seals = fcntl(fd, F_GET_SEALS);
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || seals < 0 ||
	    (seals & PT_SEALS_REQUIRED) != PT_SEALS_REQUIRED ||
	    st.st_size < (off_t)sizeof(struct pt_stream_hdr) ||
	    (uint64_t)st.st_size > (uint64_t)SIZE_MAX / 4)
		return EINVAL;
	size_t len = (size_t)st.st_size;
	void *p = map_what_fits(fd, &len);
	if (!p)
		return ENOMEM;
	/* One copy of the header, so that a writer racing with us cannot
	 * change it between the check and its use. */
	struct pt_stream_hdr h;
	memcpy(&h, p, sizeof h);
	if (!header_ok(&h, (size_t)st.st_size) || !pt_stream_backed(&(struct pt_map){.fd = fd}, 0, PAGE)) {
		munmap(p, len);
		return EINVAL;
	}
	if (len < h.chunks_off) {
		munmap(p, len);
		return ENOMEM; /* not even the lanes fit */
	}
	out->base = p;
	out->size = len;
	out->fd = fd;
	fill_map(out, &h);
	if (len < (size_t)st.st_size) {
		/* The chunks past the mapping are full for this process: the
		 * pool's and the lanes' checks against max_chunks keep it off
		 * them, and its events that find no chunk are counted lost. */
		uint64_t fit = (len - h.chunks_off) / h.chunk_size;
		if (fit < out->max_chunks)
			out->max_chunks = (uint32_t)fit;
		atomic_fetch_add_explicit(&pt_hdr(out)->short_maps, 1, memory_order_relaxed);
	}
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

/* The pool is a tagged stack (tagstack.h) of chunk numbers; one at or past
 * max_chunks ends it.  The giver's last reads of a chunk (retire, reader.c)
 * come before its push, and so before the next pop. */
static _Atomic uint32_t *free_chunk_link(uint32_t idx_untrusted, const void *m)
{
	struct pt_chunk *ch = pt_chunk_get(m, idx_untrusted);
	return ch ? &ch->free_next : NULL;
}

uint32_t pt_pool_pop(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint32_t idx;
	if (!pt_tagstack_pop(&h->free_top, free_chunk_link, m, &idx))
		return PT_NONE;
	atomic_fetch_sub_explicit(&h->free_count, 1, memory_order_relaxed);
	return idx;
}

/* idx: a chunk the caller took (popped, stolen, retired, grown). */
void pt_pool_push(const struct pt_map *m, uint32_t idx)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	pt_tagstack_push(&h->free_top, &pt_chunk_at(m, idx)->free_next, idx);
	atomic_fetch_add_explicit(&h->free_count, 1, memory_order_relaxed);
}

int pt_stream_grow(const struct pt_map *m)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	/* Pairs with the release CAS below in another writer; only the value is
	 * used here (relaxed would do). */
	uint32_t c = atomic_load_explicit(&h->committed_chunks, memory_order_acquire);
	if (c < m->base_chunks || c >= m->max_chunks)
		return ENOMEM;
	uint32_t n = m->max_chunks - c < m->grow_chunks ? m->max_chunks - c : m->grow_chunks;
	size_t bytes = (size_t)n * m->chunk_size;
	/* c < max_chunks and n <= max_chunks - c, checked above. */
	if (pt_mem_headroom(bytes, 0) != 0 ||
	    pt_populate(pt_chunk_at(m, c), bytes, m->fd, m->chunks_off + (uint64_t)c * m->chunk_size))
		return ENOMEM;
	/* Two writers may commit the same pages; one of them adds the chunks.
	 * Release: the pages first; pairs with the acquire loads of
	 * committed_chunks in open_chunk and oldest_sealed (lanes.c). */
	if (atomic_compare_exchange_strong_explicit(&h->committed_chunks, &c, c + n,
	                                            memory_order_acq_rel, memory_order_acquire))
		for (uint32_t i = c; i < c + n; i++)
			pt_pool_push(m, i);
	return 0;
}

int pt_stream_commit_lane(const struct pt_map *m, uint32_t lane)
{
	struct pt_stream_hdr *h = pt_hdr(m);
	uint32_t page_end = (lane / PT_LANES_PER_PAGE + 1) * PT_LANES_PER_PAGE;
	/* Pairs with the release CAS below in another writer: a lane under it
	 * is backed. */
	uint32_t cur = atomic_load_explicit(&h->committed_lanes, memory_order_acquire);
	if (lane >= m->max_lanes)
		return ENOMEM;
	if (lane < cur && cur <= m->max_lanes)
		return 0;
	/* The page of lane, which is below max_lanes (checked above), a
	 * multiple of PT_LANES_PER_PAGE (header_ok). */
	struct pt_lane *first = pt_lane_at(m, page_end - PT_LANES_PER_PAGE);
	if (pt_mem_headroom(PAGE, 0) != 0 ||
	    pt_populate(first, PAGE, m->fd, m->lanes_off + (uint64_t)(page_end - PT_LANES_PER_PAGE) *
	                                                      sizeof(struct pt_lane)))
		return ENOMEM;
	/* Release: the page first; pairs with the acquire loads of committed_lanes
	 * above and in lanes_known (lanes.c). */
	while (cur < page_end &&
	       !atomic_compare_exchange_weak_explicit(&h->committed_lanes, &cur, page_end,
	                                              memory_order_acq_rel, memory_order_acquire))
		;
	return 0;
}

void pt_wake_readers(struct pt_stream_hdr *h)
{
	atomic_store_explicit(&h->waiters, 0, memory_order_relaxed);
	/* Pairs with the acquire load of futex_seq in wait_for_event (getnext.c). */
	atomic_fetch_add_explicit(&h->futex_seq, 1, memory_order_release);
	syscall(SYS_futex, &h->futex_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void pt_wake_waiting_readers(struct pt_stream_hdr *h)
{
	/* The change, then a look at waiters: pairs with the reader's store of
	 * waiters, fence, second look (wait_for_event in getnext.c). */
	pt_full_fence();
	if (atomic_load_explicit(&h->waiters, memory_order_relaxed))
		pt_wake_readers(h);
}

void pt_wake_room_waiters(struct pt_stream_hdr *h)
{
	/* The count moves first, then a look at room_waiters: pairs with the
	 * waiter's increment of room_waiters, then its load of room_seq
	 * (wait_for_room, writer.c), all sequentially consistent. */
	atomic_fetch_add(&h->room_seq, 1);
	if (atomic_load(&h->room_waiters))
		syscall(SYS_futex, &h->room_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void pt_stream_set_name(const struct pt_map *m, trace_event_id_t id, const char *name)
{
	char *dst = pt_name_get(m, id);
	if (!dst)
		return;
	uint32_t idx = id - PT_USER_FIRST;
	struct pt_stream_hdr *h = pt_hdr(m);
	/* Pairs with the release store below (an earlier setter); the value only. */
	if (atomic_load_explicit(&h->name_valid[idx], memory_order_acquire))
		return;
	size_t n = strnlen(name, TRACE_EVENT_NAME_MAX);
	memcpy(dst, name, n);
	dst[n] = '\0';
	/* Release: the name first; pairs with the acquire loads of name_valid in
	 * pt_stream_get_name, pt_stream_nnames and, in query.c,
	 * posix_trace_eventtypelist_getnext_id. */
	atomic_store_explicit(&h->name_valid[idx], 1, memory_order_release);
}

int pt_stream_get_name(const struct pt_map *m, trace_event_id_t id, char *out)
{
	const char *sys = pt_system_event_name(id);
	if (sys) {
		strcpy(out, sys);
		return 0;
	}
	const char *src = pt_name_get(m, id);
	if (!src)
		return EINVAL;
	/* Pairs with the release store of name_valid in pt_stream_set_name. */
	if (!atomic_load_explicit(&pt_hdr(m)->name_valid[id - PT_USER_FIRST], memory_order_acquire))
		return EINVAL;
	size_t n = strnlen(src, TRACE_EVENT_NAME_MAX);
	memcpy(out, src, n);
	out[n] = '\0';
	return 0;
}

/* User names known: entries 1.. up to the first gap. */
uint32_t pt_stream_nnames(const struct pt_map *m)
{
	uint32_t n = 1;
	/* Pairs with the release store in pt_stream_set_name; only the count is
	 * used (pt_stream_get_name loads the flag again). */
	while (n < TRACE_USER_EVENT_MAX &&
	       atomic_load_explicit(&pt_hdr(m)->name_valid[n], memory_order_acquire))
		n++;
	return n - 1;
}

/* Every event lost so far (cumulative): the header's count and the
 * lanes'.  Read from a mapping others write: only a number. */
uint64_t pt_stream_lost(const struct pt_map *m)
{
	uint64_t n = atomic_load_explicit(&pt_hdr(m)->lost_total, memory_order_relaxed);
	uint32_t lanes_untrusted = atomic_load_explicit(&pt_hdr(m)->nlanes, memory_order_relaxed);
	uint32_t committed_untrusted =
	    atomic_load_explicit(&pt_hdr(m)->committed_lanes, memory_order_relaxed);
	uint32_t lanes = pt_lanes_within(m, lanes_untrusted < committed_untrusted ? lanes_untrusted
	                                                                          : committed_untrusted);
	if (lanes > PT_LANES_PER_PAGE &&
	    !pt_stream_backed(m, m->lanes_off, (uint64_t)lanes * sizeof(struct pt_lane)))
		lanes = PT_LANES_PER_PAGE;
	for (uint32_t i = 0; i < lanes; i++) /* lanes: within max_lanes and backed */
		n += atomic_load_explicit(&pt_lane_at(m, i)->lost, memory_order_relaxed);
	return n;
}

/* Shutdown: writers stop.  A stream that had stopped itself because it was
 * full keeps that fact, so that the end of what is read (or logged) still
 * reports the overflow and the automatic stop. */
void pt_stream_end(struct pt_stream_hdr *h)
{
	/* Acquire: a FULL carries the full_ts, full_pid and full_pc that
	 * stream_full (writer.c) stored on to ended_full.  Both releases pair
	 * with the acquire loads of state and ended_full in at_end (reader.c);
	 * pt_drop_dead (join.c) uses the value only. */
	if (atomic_exchange_explicit(&h->state, PT_ST_DEAD, memory_order_acq_rel) == PT_ST_FULL)
		atomic_store_explicit(&h->ended_full, 1, memory_order_release);
}
