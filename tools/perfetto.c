/* SPDX-License-Identifier: MIT */
/*
 * Perfetto's own trace format: a Trace message, that is a stream of
 * TracePacket messages (field 1, repeated), written in the order the
 * library delivers the events and never held in memory.  The field numbers
 * are those of Perfetto's published .proto files (docs/PERFETTO.md lists
 * each, with its file and the upstream commit it was read at;
 * tests/perfetto/trace_subset.proto is the subset written here).
 *
 * Each thread that posted events has a packet sequence of its own
 * (trusted_packet_sequence_id 2, 3, ...) and a thread track; the events of
 * no thread (OVERFLOW, RESUME, ERROR, ...) go to sequence 1 and a track
 * "trace system events".  A sequence begins with a packet that clears its
 * incremental state (SEQ_INCREMENTAL_STATE_CLEARED) and sets its defaults
 * (TracePacketDefaults: the clock of its timestamps, the track of its
 * events) and its clock: a ClockSnapshot relating the sequence's own clock
 * (id 64, incremental: each packet's timestamp is the nanoseconds since
 * the sequence's packet before) to CLOCK_REALTIME, the clock of the log's
 * times and the trace's clock.  Later packets carry no sequence_flags:
 * SEQ_NEEDS_INCREMENTAL_STATE only makes trace_processor skip a packet
 * whose sequence lost its state, which a file written whole, each sequence
 * cleared before its first event, never has (2 bytes an event saved;
 * docs/PERFETTO.md).  Event names, slice names and call sites
 * are interned per sequence: written once in the InternedData of the
 * packet that first uses them, then named by their iid.
 *
 * Paired begin/end events (pairs.c, as chrome.c pairs them) become
 * TYPE_SLICE_BEGIN/TYPE_SLICE_END, every other event TYPE_INSTANT; system
 * events posted by a thread are instants on their process's track.  The
 * data is a debug annotation "data" (printable text) or "data_hex" (hex);
 * an end event's are "end_data" and "end_data_hex", since Perfetto adds
 * them to the slice's.  A value that repeats on a sequence is interned
 * adaptively: its first time inline (string_value), as a unique value
 * costs; its second time as an InternedString of the packet's
 * InternedData (debug_annotation_string_values) and an iid
 * (string_value_iid); later times only the iid.  What was met is kept in
 * one table of VALUE_SLOTS recent values of at most VALUE_INTERN_MAX bytes
 * (larger ones always inline), two slots a hash, keyed by sequence, its
 * generation, the value's hash and length; an interned value's bytes are
 * kept and compared whole, never trusted to a hash.  A value pushed out is
 * only written inline again.  One table for all sequences, not one each:
 * its memory does not grow with the threads.  A time going back within a
 * sequence (a crafted log; the reader dates an OVERFLOW at its first lost
 * event) is a negative delta, as two's complement in the unsigned
 * timestamp, which Perfetto adds in 64 bits.  An event with no time is
 * placed at the time of its sequence's packet before, its annotation
 * "undated" true.  The last
 * packet is an instant "posixtrace log summary" on the system track with
 * the log's lost events and its damage.
 *
 * Memory: a thread costs its track's state (struct pf_thread) and a
 * process its track's; what each sequence has interned is kept in one set
 * of at most INTERN_MAX entries: when it is full, it is emptied and every
 * sequence clears its state again at its next packet.  Recent data values
 * cost VALUE_SLOTS slots of VALUE_INTERN_MAX bytes (1.1 MiB), allocated at
 * the first value that may be interned.  The pairing's first
 * pass costs a bit per event (pairs.c), call sites what sites.c keeps.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pfbatch.h"
#include "protowire.h"
#include "tool.h"

/* Trace */
#define F_TRACE_PACKET 1
/* TracePacket */
#define F_PACKET_CLOCK_SNAPSHOT 6
#define F_PACKET_TIMESTAMP 8
#define F_PACKET_SEQUENCE_ID 10 /* trusted_packet_sequence_id */
#define F_PACKET_TRACK_EVENT 11
#define F_PACKET_INTERNED_DATA 12
#define F_PACKET_SEQUENCE_FLAGS 13
#define F_PACKET_DEFAULTS 59    /* trace_packet_defaults */
#define F_PACKET_TRACK_DESCRIPTOR 60
#define SEQ_INCREMENTAL_STATE_CLEARED 1
/* TracePacketDefaults, TrackEventDefaults */
#define F_DEFAULTS_CLOCK_ID 58 /* timestamp_clock_id */
#define F_DEFAULTS_TRACK_EVENT 11
#define F_TRACK_EVENT_DEFAULTS_TRACK_UUID 11
/* ClockSnapshot, ClockSnapshot.Clock */
#define F_SNAPSHOT_CLOCKS 1
#define F_SNAPSHOT_PRIMARY_CLOCK 2
#define F_CLOCK_ID 1
#define F_CLOCK_TIMESTAMP 2
#define F_CLOCK_INCREMENTAL 3
#define CLOCK_REALTIME_ID 1 /* BUILTIN_CLOCK_REALTIME */
#define SEQUENCE_CLOCK_ID 64 /* the first of the sequence-scoped ids */
/* TrackDescriptor, ProcessDescriptor, ThreadDescriptor */
#define F_TRACK_UUID 1
#define F_TRACK_NAME 2
#define F_TRACK_PROCESS 3
#define F_TRACK_THREAD 4
#define F_PROCESS_PID 1
#define F_PROCESS_NAME 6
#define F_THREAD_PID 1
#define F_THREAD_TID 2
#define F_THREAD_NAME 5
/* TrackEvent */
#define F_EVENT_DEBUG_ANNOTATIONS 4
#define F_EVENT_TYPE 9
#define F_EVENT_NAME_IID 10
#define F_EVENT_TRACK_UUID 11
#define F_EVENT_NAME 23
#define F_EVENT_SOURCE_LOCATION 33
#define F_EVENT_SOURCE_LOCATION_IID 34
#define TYPE_SLICE_BEGIN 1
#define TYPE_SLICE_END 2
#define TYPE_INSTANT 3
/* DebugAnnotation */
#define F_ANNOTATION_NAME_IID 1
#define F_ANNOTATION_BOOL 2
#define F_ANNOTATION_UINT 3
#define F_ANNOTATION_STRING 6
#define F_ANNOTATION_STRING_IID 17 /* string_value_iid */
/* InternedData, EventName, DebugAnnotationName, SourceLocation */
#define F_INTERNED_EVENT_NAMES 2
#define F_INTERNED_ANNOTATION_NAMES 3
#define F_INTERNED_SOURCE_LOCATIONS 4
#define F_INTERNED_STRING_VALUES 29 /* debug_annotation_string_values */
#define F_INTERNED_IID 1
#define F_INTERNED_NAME 2
#define F_LOCATION_FILE 2
#define F_LOCATION_FUNCTION 3
#define F_LOCATION_LINE 4
/* InternedString */
#define F_INTERNED_STRING_IID 1
#define F_INTERNED_STRING_STR 2

#define SYSTEM_SEQUENCE 1
/* iids of names: an event type's is its id + 1, the slice its begin
 * events open SLICE_IID_BASE + the id. */
#define SLICE_IID_BASE (MAX_EVENT_IDS + 1)

/* The debug annotations' names, interned by every sequence at its start:
 * iid = index + 1. */
enum annotation {
	DA_DATA = 1, DA_DATA_HEX, DA_END_DATA, DA_END_DATA_HEX, DA_TRUNCATION, DA_END_TRUNCATION,
	DA_UNDATED, DA_LOST_EVENTS, DA_DAMAGED, DA_CUT_SHORT, DA_COUNT
};
static const char *const annotation_names[DA_COUNT] = {
	[DA_DATA] = "data", [DA_DATA_HEX] = "data_hex", [DA_END_DATA] = "end_data",
	[DA_END_DATA_HEX] = "end_data_hex", [DA_TRUNCATION] = "truncation",
	[DA_END_TRUNCATION] = "end_truncation", [DA_UNDATED] = "undated",
	[DA_LOST_EVENTS] = "lost_events", [DA_DAMAGED] = "damaged", [DA_CUT_SHORT] = "cut_short",
};

/* (sequence, kind, iid) of what the sequences have interned since their
 * state was last cleared; past INTERN_MAX entries the set is emptied and
 * the generation moves on. */
#ifndef PERFETTO_INTERN_MAX /* a test build makes it small */
#define PERFETTO_INTERN_MAX (1u << 17)
#endif
#define INTERN_MAX PERFETTO_INTERN_MAX
enum { INTERN_NAME = 1, INTERN_SITE = 2 };
struct intern_set {
	uint64_t *slots; /* 0: empty */
	size_t nslots, count;
	uint32_t generation;
};

/* A packet sequence: its number, the generation of the interned set its
 * state was cleared in, the value of its incremental clock and of its last
 * clock snapshot. */
struct pf_sequence {
	uint32_t id, generation;
	uint64_t last_ns, snapshot_ns;
	uint64_t value_iids; /* data values interned since its state was cleared */
};

/* Recent data values of the sequences (see the head of the file). */
#define VALUE_SLOTS 4096
#define VALUE_INTERN_MAX 256
#ifndef PERFETTO_VALUE_HASH_BITS /* a test build makes values collide */
#define PERFETTO_VALUE_HASH_BITS 64
#endif
#define VALUE_HASH_BITS PERFETTO_VALUE_HASH_BITS
struct value_slot {
	uint32_t seq, generation; /* generation 0: empty */
	uint64_t hash, iid;       /* iid 0: seen once, written inline */
	uint16_t len, store;      /* its bytes, once interned: value_cache.store[store] */
	bool hex;
};
struct value_cache {
	struct value_slot slots[VALUE_SLOTS]; /* small, moved; the bytes stay */
	unsigned char store[VALUE_SLOTS][VALUE_INTERN_MAX];
};

struct pf_thread {
	struct pf_sequence seq;
	uint64_t uuid;
};

/* Call sites (sites.c's, which live until sites_free) to their iids. */
struct site_ids {
	struct site_slot { const struct call_site *site; uint64_t iid; } *slots;
	size_t nslots, count;
};

struct pf_writer {
	trace_id_t trid;
	struct trace_log *log;
	FILE *file;
	struct outbuf out;
	struct pf_batch *batch; /* NULL: packets written as they are */
	struct thread_table threads; /* (pid, pthread_t) */
	struct pf_thread *info;      /* by thread table index */
	size_t info_cap;
	struct thread_table pids; /* (pid, 0) */
	uint64_t *process_uuid;   /* by pids index */
	size_t process_cap;
	struct pf_sequence system;
	uint64_t system_uuid; /* 0 until its descriptor is written */
	uint64_t next_uuid;
	uint32_t next_sequence;
	uint64_t next_tid; /* made-up tids of threads whose kernel id is unknown */
	struct intern_set interned;
	struct site_ids site_ids;
	struct value_cache *values; /* NULL until needed */
	struct pairing *pairing;
	struct site_table *sites;
	char trace_name[TRACE_NAME_MAX];
	uint64_t first_ns, last_ns; /* the earliest time, the latest so far */
	uint64_t undated;
	uint8_t *scratch; /* a packet too large for the output buffer's room */
	size_t scratch_size;
};

/* ---- what sequences have interned ------------------------------------ */

static size_t slot_of(uint64_t key, size_t nslots)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (nslots - 1);
}

static void intern_grow(struct intern_set *s)
{
	size_t n = s->nslots ? 2 * s->nslots : 4096;
	uint64_t *slots = xmalloc(n * sizeof *slots);
	memset(slots, 0, n * sizeof *slots);
	for (size_t i = 0; i < s->nslots; i++) {
		if (!s->slots[i])
			continue;
		size_t j = slot_of(s->slots[i], n);
		while (slots[j])
			j = (j + 1) & (n - 1);
		slots[j] = s->slots[i];
	}
	free(s->slots);
	s->slots = slots;
	s->nslots = n;
}

/* true if the key was there; else it is added. */
static bool intern_seen(struct intern_set *s, uint32_t seq, unsigned kind, uint64_t iid)
{
	uint64_t key = (uint64_t)seq << 32 | (uint64_t)kind << 30 | iid;
	size_t i = slot_of(key, s->nslots);
	for (; s->slots[i]; i = (i + 1) & (s->nslots - 1))
		if (s->slots[i] == key)
			return true;
	s->slots[i] = key;
	if (++s->count * 2 > s->nslots)
		intern_grow(s);
	return false;
}

/* Room for the entries an event may add (two); when the set is at its
 * bound, it is emptied and every sequence clears its state again. */
static void intern_make_room(struct intern_set *s)
{
	if (!s->nslots)
		intern_grow(s);
	if (s->count + 2 <= INTERN_MAX)
		return;
	memset(s->slots, 0, s->nslots * sizeof *s->slots);
	s->count = 0;
	s->generation++;
}

static uint64_t site_iid(struct site_ids *m, const struct call_site *site)
{
	if (2 * (m->count + 1) > m->nslots) {
		size_t n = m->nslots ? 2 * m->nslots : 1024;
		struct site_slot *slots = xmalloc(n * sizeof *slots);
		memset(slots, 0, n * sizeof *slots);
		for (size_t i = 0; i < m->nslots; i++) {
			if (!m->slots[i].site)
				continue;
			size_t j = slot_of((uint64_t)(uintptr_t)m->slots[i].site, n);
			while (slots[j].site)
				j = (j + 1) & (n - 1);
			slots[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = slots;
		m->nslots = n;
	}
	size_t i = slot_of((uint64_t)(uintptr_t)site, m->nslots);
	for (; m->slots[i].site; i = (i + 1) & (m->nslots - 1))
		if (m->slots[i].site == site)
			return m->slots[i].iid;
	m->slots[i].site = site;
	m->slots[i].iid = ++m->count;
	return m->count;
}

/* iids fit the intern set's keys; past them a site is written inline */
#define SITE_IIDS_MAX ((1u << 30) - 1)

/* ---- packets ---------------------------------------------------------- */

/* Room for a packet of at most max bytes (nesting included): in the
 * output buffer, or in the scratch buffer for a large payload. */
static uint8_t *packet_room(struct pf_writer *w, size_t max)
{
	if (max <= OUTBUF_ROOM_MAX)
		return w->batch ? pf_batch_room(w->batch, max) : (uint8_t *)outbuf_room(&w->out, max);
	if (w->scratch_size < max) {
		free(w->scratch);
		w->scratch = xmalloc(max);
		w->scratch_size = max;
	}
	return w->scratch;
}

static void packet_done(struct pf_writer *w, size_t max, uint8_t *end)
{
	if (max <= OUTBUF_ROOM_MAX && w->batch)
		pf_batch_done(w->batch, end);
	else if (max <= OUTBUF_ROOM_MAX)
		outbuf_done(&w->out, (char *)end);
	else if (w->batch)
		pf_batch_write(w->batch, w->scratch, (size_t)(end - w->scratch));
	else
		outbuf_write(&w->out, w->scratch, (size_t)(end - w->scratch));
}

static uint8_t *put_descriptor_head(uint8_t *p, uint32_t seq, uint64_t uuid, uint8_t **packet,
                                    uint8_t **track)
{
	p = pb_open(p, F_TRACE_PACKET, packet);
	p = pb_uint(p, F_PACKET_SEQUENCE_ID, seq);
	p = pb_open(p, F_PACKET_TRACK_DESCRIPTOR, track);
	return pb_uint(p, F_TRACK_UUID, uuid);
}

#define DESCRIPTOR_MAX (128 + TRACE_NAME_MAX + HOST_LABEL_MAX + 64)

/* Several hosts: one process group per host, pids and tids apart (below
 * 2^22, pid_max's largest), as Perfetto keys processes and threads by
 * them. */
static int64_t shown_id(uint32_t host, int64_t id)
{
	return host ? (int64_t)((uint64_t)host << 22 | ((uint64_t)id & ((1u << 22) - 1))) : id;
}

static void write_process_descriptor(struct pf_writer *w, uint32_t seq, uint64_t uuid,
                                     uint32_t host, pid_t pid)
{
	char name[TRACE_NAME_MAX + HOST_LABEL_MAX + 32];
	uint8_t *packet, *track, *process;
	int n = 0;
	if (w->log->nhosts > 1 && host < w->log->nhosts)
		n = snprintf(name, sizeof name, "%s: ", w->log->hosts[host].label);
	if (pid == pairing_controller(w->pairing, host))
		snprintf(name + n, sizeof name - (size_t)n, "posixtrace controller");
	else
		snprintf(name + n, sizeof name - (size_t)n, "%s",
		         w->trace_name[0] ? w->trace_name : "process");
	uint8_t *p = put_descriptor_head(packet_room(w, DESCRIPTOR_MAX), seq, uuid, &packet, &track);
	p = pb_open(p, F_TRACK_PROCESS, &process);
	p = pb_uint(p, F_PROCESS_PID, (uint64_t)shown_id(host, pid));
	p = pb_string(p, F_PROCESS_NAME, name);
	p = pb_close(packet, pb_close(track, pb_close(process, p)));
	packet_done(w, DESCRIPTOR_MAX, p);
}

static void write_thread_descriptor(struct pf_writer *w, uint32_t seq, uint64_t uuid,
                                    const struct trace_event *named, int64_t tid)
{
	char name[64];
	uint8_t *packet, *track, *thread;
	unsigned long pthread = (unsigned long)named->info.posix_thread_id;
	if (named->tid && named->comm[0])
		snprintf(name, sizeof name, "%.16s (pthread 0x%lx)", named->comm, pthread);
	else
		snprintf(name, sizeof name, "thread 0x%lx", pthread);
	uint8_t *p = put_descriptor_head(packet_room(w, DESCRIPTOR_MAX), seq, uuid, &packet, &track);
	p = pb_open(p, F_TRACK_THREAD, &thread);
	p = pb_uint(p, F_THREAD_PID, (uint64_t)shown_id(named->host, named->info.posix_pid));
	/* a made-up tid (no kernel tid known) is above every host's range */
	p = pb_uint(p, F_THREAD_TID, (uint64_t)(named->tid ? shown_id(named->host, tid) : tid));
	p = pb_string(p, F_THREAD_NAME, name);
	p = pb_close(packet, pb_close(track, pb_close(thread, p)));
	packet_done(w, DESCRIPTOR_MAX, p);
}

static void write_system_descriptor(struct pf_writer *w)
{
	uint8_t *packet, *track;
	w->system_uuid = ++w->next_uuid;
	uint8_t *p = put_descriptor_head(packet_room(w, DESCRIPTOR_MAX), SYSTEM_SEQUENCE,
	                                 w->system_uuid, &packet, &track);
	p = pb_string(p, F_TRACK_NAME, "trace system events");
	p = pb_close(packet, pb_close(track, p));
	packet_done(w, DESCRIPTOR_MAX, p);
}

static uint8_t *put_clock(uint8_t *p, uint32_t id, uint64_t ns, bool incremental)
{
	uint8_t *clock;
	p = pb_open(p, F_SNAPSHOT_CLOCKS, &clock);
	p = pb_uint(p, F_CLOCK_ID, id);
	p = pb_uint(p, F_CLOCK_TIMESTAMP, ns);
	if (incremental)
		p = pb_uint(p, F_CLOCK_INCREMENTAL, 1);
	return pb_close(clock, p);
}

#define SEQUENCE_START_MAX 512

/* The packet that (re)starts a sequence: its state cleared, its defaults,
 * the annotations' names, its clock at ns.  The clock of a snapshot never
 * goes back within a sequence (Perfetto requires it of the trace clock). */
static void start_sequence(struct pf_writer *w, struct pf_sequence *s, uint64_t track_uuid,
                           uint64_t ns)
{
	uint8_t *packet, *defaults, *te_defaults, *interned, *name, *snapshot;
	if (ns < s->snapshot_ns)
		ns = s->snapshot_ns;
	s->snapshot_ns = s->last_ns = ns;
	s->generation = w->interned.generation;
	s->value_iids = 0;
	uint8_t *p = pb_open(packet_room(w, SEQUENCE_START_MAX), F_TRACE_PACKET, &packet);
	p = pb_uint(p, F_PACKET_SEQUENCE_ID, s->id);
	p = pb_uint(p, F_PACKET_SEQUENCE_FLAGS, SEQ_INCREMENTAL_STATE_CLEARED);
	p = pb_open(p, F_PACKET_DEFAULTS, &defaults);
	p = pb_uint(p, F_DEFAULTS_CLOCK_ID, SEQUENCE_CLOCK_ID);
	p = pb_open(p, F_DEFAULTS_TRACK_EVENT, &te_defaults);
	p = pb_uint(p, F_TRACK_EVENT_DEFAULTS_TRACK_UUID, track_uuid);
	p = pb_close(defaults, pb_close(te_defaults, p));
	p = pb_open(p, F_PACKET_INTERNED_DATA, &interned);
	for (int i = 1; i < DA_COUNT; i++) {
		p = pb_open(p, F_INTERNED_ANNOTATION_NAMES, &name);
		p = pb_uint(p, F_INTERNED_IID, (uint64_t)i);
		p = pb_close(name, pb_string(p, F_INTERNED_NAME, annotation_names[i]));
	}
	p = pb_close(interned, p);
	p = pb_open(p, F_PACKET_CLOCK_SNAPSHOT, &snapshot);
	p = put_clock(p, CLOCK_REALTIME_ID, ns, false);
	p = put_clock(p, SEQUENCE_CLOCK_ID, ns, true);
	p = pb_uint(p, F_SNAPSHOT_PRIMARY_CLOCK, CLOCK_REALTIME_ID);
	p = pb_close(packet, pb_close(snapshot, p));
	packet_done(w, SEQUENCE_START_MAX, p);
}

/* ---- tracks ------------------------------------------------------------ */

static uint64_t process_track(struct pf_writer *w, uint32_t host, pid_t pid, uint32_t seq)
{
	bool added;
	size_t i = thread_table_index(&w->pids, host, pid, 0, &added);
	grow_zeroed((void **)&w->process_uuid, &w->process_cap, i, sizeof *w->process_uuid);
	if (added) {
		w->process_uuid[i] = ++w->next_uuid;
		write_process_descriptor(w, seq, w->process_uuid[i], host, pid);
	}
	return w->process_uuid[i];
}

static struct pf_thread *thread_of(struct pf_writer *w, const struct trace_event *ev)
{
	bool added;
	size_t i = thread_table_of(&w->threads, ev, &added);
	grow_zeroed((void **)&w->info, &w->info_cap, i, sizeof *w->info);
	struct pf_thread *t = &w->info[i];
	if (added) {
		/* the log is read without thread names: asked for once a thread */
		struct trace_event named = *ev;
		read_event_ext(w->log->trid, &named); /* of several logs: the event's */
		t->seq.id = ++w->next_sequence;
		process_track(w, ev->host, ev->info.posix_pid, t->seq.id);
		t->uuid = ++w->next_uuid;
		write_thread_descriptor(w, t->seq.id, t->uuid, &named,
		                        named.tid ? (int64_t)named.tid : (int64_t)++w->next_tid);
	}
	return t;
}

/* ---- events ------------------------------------------------------------ */

/* "FILE:LINE" split; the line 0 when there is none. */
static size_t split_source(const char *source, unsigned *line)
{
	const char *colon = strrchr(source, ':');
	size_t len = strlen(source);
	*line = 0;
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
	    strlen(colon + 1) > 9)
		return len;
	*line = (unsigned)strtoul(colon + 1, NULL, 10);
	return (size_t)(colon - source);
}

/* A SourceLocation's fields (iid 0: inline, without one). */
static uint8_t *put_location(uint8_t *p, uint64_t iid, const struct call_site *c)
{
	unsigned line;
	size_t file_len = split_source(c->source, &line);
	if (iid)
		p = pb_uint(p, F_INTERNED_IID, iid);
	if (file_len)
		p = pb_bytes(p, F_LOCATION_FILE, c->source, file_len);
	if (c->inlined[0]) {
		/* the line is in the inlined function's code */
		size_t n = strlen(c->inlined), k = strlen(c->where);
		p = pb_varint(pb_key(p, F_LOCATION_FUNCTION, PB_LEN), n + 15 + k + 1);
		memcpy(p, c->inlined, n);
		memcpy(p + n, " (inlined into ", 15);
		memcpy(p + n + 15, c->where, k);
		p[n + 15 + k] = ')';
		p += n + 15 + k + 1;
	} else {
		p = pb_string(p, F_LOCATION_FUNCTION, c->where);
	}
	if (line)
		p = pb_uint(p, F_LOCATION_LINE, line);
	return p;
}

#define LOCATION_MAX (64 + CALL_SITE_WHERE_MAX + CALL_SITE_SOURCE_MAX + CALL_SITE_INLINED_MAX)
/* An event's packet but its data: framing, two names, a call site. */
#define EVENT_FIXED_MAX (512 + 2 * ESCAPED_SIZE(TRACE_EVENT_NAME_MAX) + 2 * LOCATION_MAX)

static uint8_t *put_annotation_uint(uint8_t *p, enum annotation name, unsigned type, uint64_t v)
{
	uint8_t *a;
	p = pb_open(p, F_EVENT_DEBUG_ANNOTATIONS, &a);
	p = pb_uint(p, F_ANNOTATION_NAME_IID, name);
	return pb_close(a, pb_uint(p, type, v));
}

/* An event's data value: text, or bytes written in hex; inline (iid 0)
 * or by the iid of its sequence's interned value, the InternedString
 * written in this packet when new_entry. */
struct event_value {
	const unsigned char *bytes;
	size_t len; /* 0: no data */
	bool hex, new_entry;
	uint64_t iid;
};

static uint64_t value_hash(const unsigned char *b, size_t len, bool hex, uint32_t seq)
{
	uint64_t h = (uint64_t)seq << 33 ^ (uint64_t)len << 1 ^ hex, word;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		memcpy(&word, b + i, 8);
		h = (h ^ word) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	/* MurmurHash3's finaliser: every bit of h moves the slot's */
	h = (h ^ h >> 33) * 0xff51afd7ed558ccdull;
	h = (h ^ h >> 33) * 0xc4ceb9fe1a85ec53ull;
	return (h ^ h >> 33) >> (64 - VALUE_HASH_BITS);
}

static bool value_matches(const struct value_cache *c, const struct value_slot *slot,
                          const struct pf_sequence *s, uint64_t hash, const struct event_value *v)
{
	return slot->seq == s->id && slot->generation == s->generation && slot->hash == hash &&
	       slot->len == v->len && slot->hex == v->hex &&
	       (!slot->iid || !memcmp(c->store[slot->store], v->bytes, v->len));
}

static struct value_cache *value_cache(struct pf_writer *w)
{
	if (!w->values) {
		w->values = xmalloc(sizeof *w->values);
		memset(w->values->slots, 0, sizeof w->values->slots);
		for (unsigned i = 0; i < VALUE_SLOTS; i++)
			w->values->slots[i].store = (uint16_t)i;
	}
	return w->values;
}

/* The value among the recent ones: met again (interned now, or before),
 * or taking the place of the older of its hash's two slots, inline.  Two
 * slots a hash, the more recently used first, so that two values of one
 * hash do not push each other out.  A value met once keeps its hash only
 * (a unique value costs no copy); the bytes kept are those of the value
 * interned, the time it is met again, which any later one must equal. */
static void value_lookup(struct pf_writer *w, struct pf_sequence *s, struct event_value *v)
{
	struct value_cache *c = value_cache(w);
	uint64_t hash = value_hash(v->bytes, v->len, v->hex, s->id);
	struct value_slot *pair = &c->slots[hash & (VALUE_SLOTS - 2)], older = pair[0];
	bool met = value_matches(c, &pair[0], s, hash, v);
	if (!met) {
		met = value_matches(c, &pair[1], s, hash, v);
		if (met) {
			pair[0] = pair[1];
		} else {
			pair[0] = (struct value_slot){.seq = s->id, .generation = s->generation,
			                              .hash = hash, .len = (uint16_t)v->len,
			                              .store = pair[1].store, .hex = v->hex};
		}
		pair[1] = older;
	}
	if (met && !pair[0].iid) {
		memcpy(c->store[pair[0].store], v->bytes, v->len);
		pair[0].iid = ++s->value_iids;
		v->new_entry = true;
	}
	v->iid = pair[0].iid; /* 0 when first met */
}

static struct event_value value_of(struct pf_writer *w, const struct trace_event *ev,
                                   struct pf_sequence *s)
{
	size_t text = text_length(ev->data, ev->len);
	struct event_value v = {ev->data, text ? text : ev->len, !text && ev->len, false, 0};
	if (v.len && v.len <= VALUE_INTERN_MAX)
		value_lookup(w, s, &v);
	return v;
}

/* A value's string: the text, or its bytes in hex. */
static uint8_t *put_value_string(uint8_t *p, uint32_t field, const struct event_value *v)
{
	if (!v->hex)
		return pb_bytes(p, field, v->bytes, v->len);
	p = pb_varint(pb_key(p, field, PB_LEN), 2 * v->len);
	return (uint8_t *)put_hex_bytes((char *)p, v->bytes, v->len);
}

static uint8_t *put_data(uint8_t *p, const struct trace_event *ev, const struct event_value *v,
                         bool end)
{
	if (v->len) {
		uint8_t *a;
		enum annotation name = v->hex ? (end ? DA_END_DATA_HEX : DA_DATA_HEX)
		                              : (end ? DA_END_DATA : DA_DATA);
		p = pb_open(p, F_EVENT_DEBUG_ANNOTATIONS, &a);
		p = pb_uint(p, F_ANNOTATION_NAME_IID, name);
		if (v->iid)
			p = pb_uint(p, F_ANNOTATION_STRING_IID, v->iid);
		else
			p = put_value_string(p, F_ANNOTATION_STRING, v);
		p = pb_close(a, p);
	}
	if (ev->info.posix_truncation_status)
		p = put_annotation_uint(p, end ? DA_END_TRUNCATION : DA_TRUNCATION, F_ANNOTATION_UINT,
		                        (uint64_t)ev->info.posix_truncation_status);
	return p;
}

/* An event's name as a string field: valid UTF-8 as it is (protobuf's
 * strings are UTF-8), any other name as dump prints it (escape_text: an
 * invalid byte as \xHH), so that names stay distinct and readable. */
static bool valid_utf8(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len = strlen(s);
	uint32_t code;
	for (size_t i = 0; i < len;) {
		size_t k = u[i] < 0x80 ? 1 : utf8_sequence(u + i, len - i, &code);
		if (k == 0)
			return false;
		i += k;
	}
	return true;
}

static uint8_t *put_name_string(uint8_t *p, uint32_t field, const char *name)
{
	char buf[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)];
	if (valid_utf8(name))
		return pb_string(p, field, name);
	return pb_string(p, field, escape_text(name, buf, sizeof buf));
}

/* The event's name: interned (its iid, and the entry the first time on
 * this sequence), or inline when the log does not know it yet (a log from
 * a pipe learns names as it is read). */
struct event_name {
	uint64_t iid;    /* 0: inline */
	const char *str; /* to intern or to write inline; NULL: none (a slice's end) */
	bool new_entry;
};

static struct event_name name_of(struct pf_writer *w, const struct trace_event *ev,
                                 enum pair_role role, const char *slice, uint32_t seq)
{
	struct event_name n = {0, role == PAIR_BEGIN ? slice : ev->name, false};
	trace_event_id_t id = ev->info.posix_event_id;
	if (role == PAIR_END)
		n.str = NULL;
	else if (!w->log->set && id < MAX_EVENT_IDS && w->log->names.known[id]) {
		/* (of several logs, ids are each log's own: names go inline) */
		n.iid = role == PAIR_BEGIN ? SLICE_IID_BASE + id : (uint64_t)id + 1;
		n.new_entry = !intern_seen(&w->interned, seq, INTERN_NAME, n.iid);
	}
	return n;
}

struct event_site {
	const struct call_site *site; /* NULL: none */
	uint64_t iid;                 /* 0: inline (a site past sites.c's memory) */
	bool new_entry;
};

static struct event_site site_for(struct pf_writer *w, const struct trace_event *ev, uint32_t seq)
{
	struct event_site s = {site_of(w->sites, ev), 0, false};
	if (s.site && s.site != &w->sites->scratch && w->site_ids.count < SITE_IIDS_MAX) {
		s.iid = site_iid(&w->site_ids, s.site);
		s.new_entry = !intern_seen(&w->interned, seq, INTERN_SITE, s.iid);
	}
	return s;
}

static uint8_t *put_interned(uint8_t *p, const struct event_name *n, const struct event_site *s,
                             const struct event_value *v)
{
	uint8_t *interned, *entry;
	if (!n->new_entry && !s->new_entry && !v->new_entry)
		return p;
	p = pb_open(p, F_PACKET_INTERNED_DATA, &interned);
	if (n->new_entry) {
		p = pb_open(p, F_INTERNED_EVENT_NAMES, &entry);
		p = pb_uint(p, F_INTERNED_IID, n->iid);
		p = pb_close(entry, put_name_string(p, F_INTERNED_NAME, n->str));
	}
	if (s->new_entry) {
		p = pb_open(p, F_INTERNED_SOURCE_LOCATIONS, &entry);
		p = pb_close(entry, put_location(p, s->iid, s->site));
	}
	if (v->new_entry) {
		p = pb_open(p, F_INTERNED_STRING_VALUES, &entry);
		p = pb_uint(p, F_INTERNED_STRING_IID, v->iid);
		p = pb_close(entry, put_value_string(p, F_INTERNED_STRING_STR, v));
	}
	return pb_close(interned, p);
}

static uint8_t *put_track_event(uint8_t *p, const struct trace_event *ev, enum pair_role role,
                                uint64_t track_uuid, const struct event_name *n,
                                const struct event_site *s, const struct event_value *v,
                                bool undated)
{
	static const unsigned char types[] = {
		[PAIR_NONE] = TYPE_INSTANT, [PAIR_BEGIN] = TYPE_SLICE_BEGIN, [PAIR_END] = TYPE_SLICE_END};
	uint8_t *event, *location;
	p = pb_open(p, F_PACKET_TRACK_EVENT, &event);
	p = pb_uint(p, F_EVENT_TYPE, types[role]);
	if (track_uuid)
		p = pb_uint(p, F_EVENT_TRACK_UUID, track_uuid);
	if (n->iid)
		p = pb_uint(p, F_EVENT_NAME_IID, n->iid);
	else if (n->str)
		p = put_name_string(p, F_EVENT_NAME, n->str);
	if (s->iid) {
		p = pb_uint(p, F_EVENT_SOURCE_LOCATION_IID, s->iid);
	} else if (s->site) {
		p = pb_open(p, F_EVENT_SOURCE_LOCATION, &location);
		p = pb_close(location, put_location(p, 0, s->site));
	}
	p = put_data(p, ev, v, role == PAIR_END);
	if (undated)
		p = put_annotation_uint(p, DA_UNDATED, F_ANNOTATION_BOOL, 1);
	return pb_close(event, p);
}

/* The sequence an event goes to, (re)started if its state is not of this
 * generation; *track_uuid, the track when it is not the sequence's own. */
static struct pf_sequence *sequence_of(struct pf_writer *w, const struct trace_event *ev,
                                       uint64_t ns, uint64_t *track_uuid)
{
	*track_uuid = 0;
	intern_make_room(&w->interned);
	if (event_has_thread(ev)) {
		struct pf_thread *t = thread_of(w, ev);
		if (is_system_event(ev->info.posix_event_id))
			*track_uuid = process_track(w, ev->host, ev->info.posix_pid, t->seq.id);
		if (t->seq.generation != w->interned.generation)
			start_sequence(w, &t->seq, t->uuid, ns);
		return &t->seq;
	}
	if (!w->system_uuid)
		write_system_descriptor(w);
	if (w->system.generation != w->interned.generation)
		start_sequence(w, &w->system, w->system_uuid, ns);
	return &w->system;
}

static void write_event(struct pf_writer *w, const struct trace_event *ev, enum pair_role role,
                        const char *slice)
{
	bool undated = !event_has_time(ev);
	uint64_t track_uuid, ns = undated ? w->first_ns : ts_ns(&ev->info.posix_timestamp);
	struct pf_sequence *s = sequence_of(w, ev, ns, &track_uuid);
	if (undated) {
		ns = s->last_ns;
		w->undated++;
	} else if (ns > w->last_ns) {
		w->last_ns = ns;
	}
	struct event_name n = name_of(w, ev, role, slice, s->id);
	struct event_site site = site_for(w, ev, s->id);
	struct event_value value = value_of(w, ev, s);
	/* a value is written once: inline or interned, with its entry's framing */
	size_t max = EVENT_FIXED_MAX + 2 * ev->len + 64;
	uint8_t *packet;
	uint8_t *p = pb_open(packet_room(w, max), F_TRACE_PACKET, &packet);
	p = pb_uint(p, F_PACKET_TIMESTAMP, ns - s->last_ns); /* a negative delta wraps */
	s->last_ns = ns;
	p = pb_uint(p, F_PACKET_SEQUENCE_ID, s->id);
	p = put_interned(p, &n, &site, &value);
	p = put_track_event(p, ev, role, track_uuid, &n, &site, &value, undated);
	packet_done(w, max, pb_close(packet, p));
}

/* The last packet: the log's losses and damage, on the system track at
 * the time of its last packet. */
static void write_summary(struct pf_writer *w, struct trace_log *log)
{
	uint64_t lost = 0, track_uuid;
	uint8_t *packet, *event;
	enum log_state state = log_state(log);
	const struct trace_event none = {0}; /* of no thread */
	trace_log_lost(log, &lost);
	uint64_t ns = w->last_ns > w->first_ns ? w->last_ns : w->first_ns;
	struct pf_sequence *s = sequence_of(w, &none, ns, &track_uuid);
	uint8_t *p = pb_open(packet_room(w, 256), F_TRACE_PACKET, &packet);
	p = pb_uint(p, F_PACKET_TIMESTAMP, ns - s->last_ns);
	s->last_ns = ns;
	p = pb_uint(p, F_PACKET_SEQUENCE_ID, s->id);
	p = pb_open(p, F_PACKET_TRACK_EVENT, &event);
	p = pb_uint(p, F_EVENT_TYPE, TYPE_INSTANT);
	p = pb_string(p, F_EVENT_NAME, "posixtrace log summary");
	p = put_annotation_uint(p, DA_LOST_EVENTS, F_ANNOTATION_UINT, lost);
	p = put_annotation_uint(p, DA_DAMAGED, F_ANNOTATION_BOOL, state == LOG_DAMAGED);
	p = put_annotation_uint(p, DA_CUT_SHORT, F_ANNOTATION_BOOL, state == LOG_CUT_SHORT);
	p = pb_close(packet, pb_close(event, p));
	packet_done(w, 256, p);
}

static int write_trace(struct pf_writer *w, struct trace_log *log, struct progress *pr)
{
	struct trace_event ev;
	uint64_t index = 0;
	int rc;
	while ((rc = trace_log_next(log, &ev)) > 0) {
		const char *slice = NULL;
		enum pair_role role = pairing_role(w->pairing, index++, &ev, &slice);
		write_event(w, &ev, role, slice);
		progress_step(pr);
	}
	write_summary(w, log);
	return rc;
}

static void read_trace_name(struct trace_log *log, char *name)
{
	trace_attr_t a;
	name[0] = '\0';
	if (posix_trace_get_attr(log->trid, &a) == 0) {
		posix_trace_attr_getname(&a, name);
		posix_trace_attr_destroy(&a);
	}
}

static void free_writer(struct pf_writer *w)
{
	thread_table_free(&w->threads);
	thread_table_free(&w->pids);
	free(w->info);
	free(w->process_uuid);
	free(w->interned.slots);
	free(w->site_ids.slots);
	free(w->values);
	free(w->scratch);
	pf_batch_free(w->batch);
	pairing_free(w->pairing);
}

int convert_to_perfetto(struct trace_log *log, const char *file, bool force,
                        const struct pair_rules *pairs, struct site_table *sites,
                        enum pf_codec codec)
{
	struct pf_writer w = {.sites = sites, .log = log, .trid = log->trid,
	                      .next_sequence = SYSTEM_SEQUENCE,
	                      .next_tid = log->nhosts > 1 ? (uint64_t)LOGSET_MAX << 22 : 1u << 22,
	                      .system.id = SYSTEM_SEQUENCE};
	struct progress pr;
	struct log_overview overview;
	char limits[PAIR_LIMITS_TEXT_SIZE];
	w.interned.generation = 1; /* a sequence of generation 0 has not started */
	w.file = open_output_stream(file, force);
	if (!w.file)
		return EXIT_FAIL;
	outbuf_init(&w.out, w.file);
	w.batch = pf_batch_new(codec, &w.out);
	read_trace_name(log, w.trace_name);
	w.pairing = pairing_scan(log, pairs, &overview);
	w.first_ns = overview.first_ns;
	log->without_thread_names = true; /* thread_of() asks for them */
	progress_init(&pr, "converting", overview.count);
	int rc = write_trace(&w, log, &pr);
	progress_end(&pr);
	if (pair_limits_text(pairing_limits(w.pairing), limits, sizeof limits))
		note_msg("convert: %s", limits);
	if (w.undated)
		note_msg("convert: %llu events without a time, placed at the time of the event "
		         "before on their track (annotation undated)", (unsigned long long)w.undated);
	bool packed = !w.batch || pf_batch_flush(w.batch);
	if (!packed)
		error_msg("convert: %s: the compressor failed", file);
	int err = close_output_stream(w.file, &w.out, file);
	free_writer(&w);
	if (!packed)
		return EXIT_FAIL;
	return err || rc < 0 ? EXIT_FAIL : 0;
}
