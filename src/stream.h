/* SPDX-License-Identifier: MIT */
/*
 * Stream memory: a sealed memfd (layout.h) and each process's validated,
 * private view of it.  A stream is created by its controller with the
 * memory its events need committed at once; the chunks and lanes that each
 * further writer holds are committed when that writer needs them.
 */
#ifndef PT_STREAM_H
#define PT_STREAM_H

#include "internal.h"

/* A mapping of a stream, its geometry validated once and kept in private
 * memory: what the mapping itself says later is not trusted. */
struct pt_map {
	unsigned char *base;
	size_t size;
	int fd;
	uint64_t names_off, lanes_off, chunks_off;
	uint32_t max_lanes, max_chunks, base_chunks, chunk_size, grow_chunks;
	uint32_t clock;
	uint32_t max_data;
	int policy;                 /* stream full policy */
	int inherited;              /* POSIX_TRACE_INHERITED */
	uint64_t event_room;
	uint64_t base_mono_ns, base_real_ns;
	uint64_t block_ns;          /* FLUSH: a full stream's wait, at most PT_BLOCK_MAX_NS */
};

static inline struct pt_stream_hdr *pt_hdr(const struct pt_map *m)
{
	return (struct pt_stream_hdr *)m->base;
}

/* ---- reaching into the stream ----------------------------------------------
 * A lane or chunk number, an offset in a chunk or a count of lanes that was
 * read from the stream is a word another process wrote: its name ends in
 * _untrusted until it is checked, and it reaches memory only through the
 * checked accessors below, which answer NULL (an offset: 0; a count: the
 * most the geometry holds) when it is outside the geometry kept in private
 * memory.  The raw pt_lane_at and pt_chunk_at take numbers already proven,
 * and each use says where the proof is: the writer's own lane (checked by
 * pt_lane_claim, lanes.c, when it took it), a reader cursor's chunk (entered
 * through may_enter, reader.c), a loop bounded by a checked count. */

static inline struct pt_lane *pt_lane_at(const struct pt_map *m, uint32_t i)
{
	return (struct pt_lane *)(m->base + m->lanes_off) + i;
}
static inline struct pt_chunk *pt_chunk_at(const struct pt_map *m, uint32_t i)
{
	return (struct pt_chunk *)(m->base + m->chunks_off + (size_t)i * m->chunk_size);
}

/* Lane lane_untrusted, or NULL past the lanes mapped.  Whether its page is
 * committed is the reader's question (lanes_readable, reader.c). */
static inline struct pt_lane *pt_lane_get(const struct pt_map *m, uint32_t lane_untrusted)
{
	return lane_untrusted < m->max_lanes ? pt_lane_at(m, lane_untrusted) : NULL;
}

/* Chunk chunk_untrusted (PT_NONE included), or NULL past the chunks mapped
 * (max_chunks: a short map counts those that fit).  Whether it is committed
 * is the reader's question (chunk_ok, reader.c). */
static inline struct pt_chunk *pt_chunk_get(const struct pt_map *m, uint32_t chunk_untrusted)
{
	return chunk_untrusted < m->max_chunks ? pt_chunk_at(m, chunk_untrusted) : NULL;
}

/* Whether a record may begin or end at off_untrusted in a chunk: after
 * the chunk's header, within the chunk, at a multiple of 8 (recword.h). */
static inline int pt_chunk_off_ok(const struct pt_map *m, uint32_t off_untrusted)
{
	return off_untrusted >= PT_CHUNK_HDR && off_untrusted <= m->chunk_size &&
	       off_untrusted % 8 == 0;
}

/* The end of the records a chunk's commit word says, when it is within the
 * chunk and not before `from` (an offset the caller checked); else 0, where
 * no record ends. */
static inline uint32_t pt_commit_end(const struct pt_map *m, uint64_t commit_untrusted,
                                     uint32_t from)
{
	uint32_t end_untrusted = (uint32_t)commit_untrusted;
	return end_untrusted >= from && end_untrusted <= m->chunk_size ? end_untrusted : 0;
}

/* A count of lanes read from the stream, at most the lanes mapped. */
static inline uint32_t pt_lanes_within(const struct pt_map *m, uint32_t nlanes_untrusted)
{
	return nlanes_untrusted < m->max_lanes ? nlanes_untrusted : m->max_lanes;
}

/* The name entry of user event id, or NULL for an id that has none.  The
 * id is the caller's or a record's: 10 bits, checked here all the same. */
static inline char *pt_name_get(const struct pt_map *m, trace_event_id_t id)
{
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return NULL;
	return (char *)(m->base + m->names_off) + (size_t)(id - PT_USER_FIRST) * PT_NAME_SIZE;
}

/* Creates a stream: ENOMEM when it is larger than the memory this process
 * may use (checked before anything is committed), EAGAIN out of fds. */
int pt_stream_create(const struct pt_attr *attr, struct pt_map *out);
/* Maps a stream received or inherited from another process: the memfd
 * must be sealed against resizing and hold a valid stream.  When the
 * whole of it does not fit in the address space (RLIMIT_AS), what fits
 * of it is mapped, header, names and lanes at least (ENOMEM otherwise):
 * max_chunks counts the chunks mapped, and the header's short_maps this
 * process. */
int pt_stream_map_fd(int fd, struct pt_map *out);
void pt_stream_unmap(struct pt_map *m);
/* Whether the bytes [off, off + len) of the stream are committed memory: a
 * reader checks before it touches what a writer says (a hole would be
 * allocated at the reader's expense). */
int pt_stream_backed(const struct pt_map *m, uint64_t off, uint64_t len);

uint32_t pt_pool_pop(const struct pt_map *m);
void pt_pool_push(const struct pt_map *m, uint32_t chunk);
/* Commits more chunks into the pool; 0 when it did. */
int pt_stream_grow(const struct pt_map *m);
/* Commits the page of lane slot `lane`. */
int pt_stream_commit_lane(const struct pt_map *m, uint32_t lane);

void pt_wake_readers(struct pt_stream_hdr *h);
/* For a change a writer made that a reader reports without a record of its
 * own (an overflow, the stream full): a reader that announced its sleep is
 * woken, as by an event (append_record, writer.c). */
void pt_wake_waiting_readers(struct pt_stream_hdr *h);
/* Chunks came back, or the stream stopped: writers waiting for room look
 * again (posixtrace_attr_setblocking). */
void pt_wake_room_waiters(struct pt_stream_hdr *h);
uint64_t pt_stream_lost(const struct pt_map *m);
void pt_stream_end(struct pt_stream_hdr *h);
void pt_stream_set_name(const struct pt_map *m, trace_event_id_t id, const char *name);
int pt_stream_get_name(const struct pt_map *m, trace_event_id_t id, char *out);
uint32_t pt_stream_nnames(const struct pt_map *m);
static inline int pt_filtered(const struct pt_stream_hdr *h, trace_event_id_t id)
{
	uint64_t w = atomic_load_explicit(&h->filter[id / 64], memory_order_relaxed);
	return (int)((w >> (id % 64)) & 1);
}

/* Whether the id is watched (filter | trigger): its word is looked at only
 * once a filter or a trigger was ever set. */
static inline int pt_watched(const struct pt_stream_hdr *h, trace_event_id_t id)
{
	if (PT_LIKELY(!atomic_load_explicit(&h->watching, memory_order_relaxed)))
		return 0;
	uint64_t w = atomic_load_explicit(&h->watch[id / 64], memory_order_relaxed);
	return (int)((w >> (id % 64)) & 1);
}

static inline int pt_triggers(const struct pt_stream_hdr *h, trace_event_id_t id)
{
	uint64_t w = atomic_load_explicit(&h->trigger[id / 64], memory_order_relaxed);
	return (int)((w >> (id % 64)) & 1);
}

/* A word of the filter and of the trigger set into the header: watch is
 * a superset of both whenever a writer may look (set before, cleared
 * after), and watching is set before any watch bit (and stays: two
 * controllers may set filters at once, and a cleared flag could hide the
 * other's).  Numbers only: relaxed, as the filter always was. */
static inline void pt_watch_store(struct pt_stream_hdr *h, unsigned i, uint64_t filter,
                                  uint64_t trigger)
{
	if ((filter | trigger) && !atomic_load_explicit(&h->watching, memory_order_relaxed))
		atomic_store_explicit(&h->watching, 1, memory_order_relaxed);
	atomic_fetch_or_explicit(&h->watch[i], filter | trigger, memory_order_relaxed);
	atomic_store_explicit(&h->filter[i], filter, memory_order_relaxed);
	atomic_store_explicit(&h->trigger[i], trigger, memory_order_relaxed);
	atomic_store_explicit(&h->watch[i], filter | trigger, memory_order_relaxed);
}


#endif
