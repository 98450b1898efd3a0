/* SPDX-License-Identifier: MIT */
/*
 * Reading an active stream (reader.c): the reader's private place in each
 * lane, a heap that merges the lanes (and the controller's own events) by
 * time, and the events the reader reports itself.
 */
#ifndef PT_READER_H
#define PT_READER_H

#include "clock.h"
#include "ctl.h"
#include "pidmap.h"
#include "records.h"
#include "stream.h"

struct pt_cursor {           /* the reader's place in one lane */
	uint64_t head;       /* the lane head this position continues */
	uint64_t seq;        /* sequence number of its chunk (records.h) */
	uint64_t ts;         /* READY: raw time of the event at s_off */
	uint64_t polled;     /* raw time the commit word was last loaded */
	struct pt_rec_ctx ctx; /* clock base, owner and address at s_off */
	struct pt_rec rec;   /* READY: the event at s_off, decoded */
	uint32_t chunk;      /* PT_NONE: no chunk */
	uint32_t off;        /* the lane's head: the records before it are claimed */
	uint32_t end;        /* committed end, as last loaded */
	uint32_t state;
	uint32_t heap_pos;
	uint32_t end_known;  /* the commit word of this chunk was loaded */
	uint32_t reported;   /* its damage was reported (until its next event) */
	/* Records claimed from the lane (before off), in private memory: the
	 * next one at stage + s_off. */
	unsigned char *stage;
	uint32_t stage_cap, s_off, s_len;
	/* Where the last stage handed out whole ended (pt_read_stage): its
	 * chunk's sequence number and offset. */
	uint64_t handed_seq;
	uint32_t handed_end;
	/* The stage claimed whole (LOOK_STAGE), scanned when it was cut. */
	uint32_t scanned;
	struct pt_rec_scan scan;
};

#define PT_SYNTH_MAX 8

struct pt_synth {            /* an event the reader reports itself */
	trace_event_id_t id;
	uint32_t len;
	uint64_t raw;
	struct pt_caller who;
	unsigned char data[sizeof(trace_event_set_t)];
};

struct pt_reader {
	struct pt_clockconv conv;
	/* Where stage claims are counted (the keeper's, a stream with a
	 * control block); NULL: nowhere. */
	struct pt_claims *claims;
	uint64_t last_raw, last_mono; /* the latest conversion, kept monotonic */
	struct pt_cursor *cur;
	uint32_t ncur;
	uint32_t *heap;
	uint32_t nheap;
	uint32_t cap;
	uint8_t *chunk_ok;       /* chunks past the base found committed */
	uint8_t *page_ok;        /* lane pages found committed */
	/* Per chunk: the sequence number it was last entered at, and the
	 * drain that entered it (a drain enters a chunk once). */
	uint64_t *chunk_seq;
	uint32_t *drain_mark;
	uint32_t drain_no;
	uint32_t ovf_drain;      /* the drain that took the header's losses */
	int draining;
	int lanes_off;           /* pt_read_raw leaves the lanes alone */
	/* Whole stages and, with the lanes left alone, the library's own
	 * events stop at this raw time: the rest is the next drain's. */
	uint64_t until;
	uint64_t stage_bytes;    /* held by the cursors' stages */
	uint64_t poll_ticks;     /* how long an idle lane is left alone */
	uint64_t gather_raw;     /* when the lanes were last looked at */
	uint64_t ovf_raw;        /* a pending POSIX_TRACE_OVERFLOW's time */
	uint64_t ovf_pending;
	int resume_pending;
	int end_reported;
	int ctl_ready;           /* ctl_next holds the queue's oldest */
	uint32_t ctl_pos;
	struct pt_ctl_event ctl_next;
	uint32_t nsynth;
	struct pt_synth synth[PT_SYNTH_MAX];
	/* Writers' ids in this process's pid namespace (pidmap.h). */
	struct pt_pidmap ids;
};

/* An event as the reader takes it out, before it becomes a
 * posix_trace_event_info (or a log record). */
struct pt_rawev {
	trace_event_id_t id;
	int32_t truncation;      /* posix_truncation_status */
	uint64_t real_ns;        /* on the CLOCK_REALTIME scale of the stream's creation */
	uint64_t pc;
	struct pt_owner who;     /* system events: comm empty, tid/thread maybe 0 */
	uint64_t ns;             /* the writer's pid namespace, 0 unknown: who's ids are there */
	uint32_t cpu;            /* the CPU it was posted on; PT_CPU_NONE: unknown */
	/* POSIX_TRACE_OVERFLOW read with the lanes left alone: RESUME is due
	 * before the next event, whose time the caller does not know. */
	int resume_due;
};
/* What a reader reads: a stream's mapping, the reader's own state, the
 * controller's private queue of its events and its filter (NULL: none),
 * and the stream's slot when this process records into it too (-1).  A
 * controller's handle holds one (handle.h); so does a test's image. */
struct pt_source {
	struct pt_map map;
	struct pt_reader rd;
	struct pt_ctl *ctl;
	int slot;
};
int pt_source_filtered(const struct pt_source *s, trace_event_id_t id);
int pt_read_raw(struct pt_source *h, struct pt_rawev *e, void *data, size_t num_bytes,
                size_t *data_len, int live, uintptr_t pc);

/* One event out of the stream, or 0 when none is there now.  `live`: the
 * stream is read while writers may be running, and lanes that were found
 * empty are looked at again at most once per poll interval. */
int pt_read_next(struct pt_source *h, struct posix_trace_event_info *ev,
                 struct posixtrace_event_ext *ext, void *data, size_t num_bytes, size_t *data_len,
                 int live, uintptr_t pc);
void pt_discard_all(struct pt_source *h);
/* A drain (the keeper's, clear's): from here until pt_read_end_drain,
 * pt_read_raw with live = 0 yields each stored record at most once and
 * enters each chunk at most once, so it ends after at most what the
 * stream can hold, whatever writers (or a scribbler) do meanwhile; and it
 * stops at the first event after `until` (a raw time), so that honest
 * writers posting while it reads do not make it last that long. */
void pt_read_begin_drain(struct pt_source *h, uint64_t until);
void pt_read_end_drain(struct pt_source *h);

/* How a stage continues the last one handed out of its lane. */
enum { PT_STAGE_AFTER, PT_STAGE_CHUNK_START, PT_STAGE_APART };

/* A lane's records claimed and checked whole, in the reader's private
 * memory: what the keeper writes into a log as it is. */
struct pt_stage {
	const unsigned char *rec;
	uint32_t len;
	uint32_t lane;
	uint32_t how;            /* PT_STAGE_* */
	uint32_t events;
	uint32_t max_id;         /* the highest event id in it */
	uint32_t images;         /* IMAGE records in it (the keeper takes them out) */
	struct pt_rec_ctx start; /* base, writer and address at its first record */
	uint64_t first_raw, last_raw; /* raw times of its first and last events */
};

/* The ids of the processes that own lanes from other pid namespaces,
 * looked up now in this process's namespace (pidmap.h), so that a drain
 * after they ended still names them by them. */
void pt_read_learn_writers(struct pt_source *h);

/* During a drain: the lanes there are now, then the next stage of lane i
 * (1), or 0 when the lane has nothing more for this drain (idle; damaged:
 * reported by an event pt_read_raw yields; its next chunk is the next
 * drain's).  The stage stays valid until the next call for that lane. */
uint32_t pt_read_lanes(struct pt_source *h);
/* Whether a drain would find something now (nothing is taken). */
int pt_read_pending(struct pt_source *h);
int pt_read_stage(struct pt_source *h, uint32_t i, struct pt_stage *st);
int pt_reader_init(struct pt_reader *rd, const struct pt_map *m);
void pt_reader_free(struct pt_reader *rd);
/* CLOCK_MONOTONIC ns on the CLOCK_REALTIME scale of the stream's creation. */
uint64_t pt_mono_to_real(const struct pt_map *m, uint64_t mono);

#endif
