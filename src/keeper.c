/* SPDX-License-Identifier: MIT */
/*
 * The keeper process (keeper.h); this file runs in it alone, from
 * pt_keeper_main on, in a process forked from the controller (keepctl.c
 * is the controller's side).  It works on the controller's struct
 * pt_handle as the fork copied it: the stream's mapping, the control
 * queue and the log's shared state, its own reader.  It holds the log
 * file and the stream mapping, copies events into the log when asked
 * (posix_trace_flush), when a POSIX_TRACE_FLUSH stream has a quarter of
 * its room used, and at the end.
 * The end is posix_trace_shutdown(), or the controller going away by any
 * means: the keeper holds one end of a socket pair whose other end only the
 * controller has (close-on-exec, closed in fork children), so it sees the
 * controller go and ends the stream by itself.  docs/DESIGN.md says why a
 * process.  If the keeper dies, the controller's next call that needs it
 * notices, records POSIX_TRACE_ERROR and starts a new one, which continues
 * the log from what the old one had written (ctl.h).
 */
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "clock.h"
#include "ctl.h"
#include "handle.h"
#include "imageset.h"
#include "keeper.h"
#include "log/log.h"
#include "pidmap.h"
#include "process.h"
#include "rdv_serve.h"
#include "reader.h"
#include "registry.h"
#include "remote.h"
#include "rotate.h"
#include "stream.h"
#include "writer.h"

#define TICK_NS 100000000ull
#define REACH_EVERY 5 /* ticks between looks at a target not reached yet */
/* What an event holds of the stream besides its data (about a record's
 * header): drained bytes are counted with it. */
#define EVENT_COST 32u

#define KEEPER_PIDS_BATCH 64
#define KEEPER_IMAGES_SEEN 4096u /* a power of two */

struct keeper {
	struct pt_handle *h;
	struct pt_stream_hdr *shdr;
	struct pt_ctl *ctl;
	int sock;
	int fd;                  /* the log, or -1 */
	int controller_pidfd;    /* the controller, or -1 */
	pid_t controller;
	struct pt_logw w;
	uint32_t names_in_log;
	unsigned ticks;
	unsigned char *data;
	/* The keeper's own account of automatic flushes, nothing the target
	 * writes: bytes it drained in the current look, its credit of looks
	 * (ns: a look costs a tick) and when the credit and the tick's other
	 * work were last brought up to date (monotonic ns). */
	uint64_t drained;
	uint64_t credit;
	uint64_t credit_at;
	uint64_t next_tick;
	uint64_t moved;          /* events moved to the log: progress (ctl.h) */
	uint32_t trigger_seen;   /* trigger_hits when the last snapshot began */
	/* Snapshots triggers took, and when each type last took one
	 * (monotonic ns, 0: never; by the type the writer last named). */
	uint64_t trigger_taken;
	uint64_t trigger_last_ns[PT_NEVENT_IDS];
	struct pt_rdv_server rdv; /* its listen_fd -1: no rendezvous */
	/* The calibration of the current drain's STAGES blocks: the keeper's
	 * own points (clock.c), never anything the target wrote. */
	uint32_t clock, ncal;
	struct pt_log_calpoint cal[PT_LOG_MAX_CAL];
	/* Translations of writers of other pid namespaces met in the stage
	 * being logged, written as a PIDS block before it. */
	uint32_t npids;
	struct pt_log_pid_entry pids[KEEPER_PIDS_BATCH];
	/* The images written (a hash of pid, set and index per slot, 0:
	 * free): a LOOP stream's writers describe their set in every chunk,
	 * the log needs it once (a ring log: once per drain, as its blocks
	 * are overwritten).  Cleared when half full. */
	uint64_t images_seen[KEEPER_IMAGES_SEEN];
	uint32_t nimages_seen;
	/* Who the images were described by (image_owner): the users the
	 * stream memory has belonged to, as fstat says. */
	int images_users;        /* other than root: 0, 1 (images_uid) or 2 */
	uint32_t images_uid;
	uint32_t stage_uid;      /* that of the stage being logged */
	/* A rotated log (rotate.h): the images to repeat at the start of each
	 * file; rot_stopped once a file could not be made (the last file
	 * grows). */
	struct pt_rot_images rot_images;
	int rot_stopped;
	uint64_t file_began;     /* CLOCK_MONOTONIC ns: the current file began, or was resumed */
	int finishing;           /* the stream ends: the last drains */
};

_Static_assert(PT_CAL_POINTS <= PT_LOG_MAX_CAL, "a drain carries every calibration point");
_Static_assert((int)PT_STAGE_AFTER == (int)PT_STAGE_FOLLOWS &&
                   (int)PT_STAGE_CHUNK_START == (int)PT_STAGE_NEW_CHUNK &&
                   (int)PT_STAGE_APART == (int)PT_STAGE_ELSEWHERE,
               "the reader's and the log writer's words for how a stage follows");

/* The keeper's first error: kept for posix_trace_shutdown() and the
 * flush status, and marked in the log where it happened. */
static void keep_error(struct keeper *k, int err)
{
	int32_t none = 0;
	if (err <= 0 || !atomic_compare_exchange_strong_explicit(&k->ctl->keeper_error, &none, err,
	                                                         memory_order_relaxed,
	                                                         memory_order_relaxed))
		return;
	uint32_t zero = 0;
	atomic_compare_exchange_strong_explicit(&k->ctl->flush_error, &zero, (uint32_t)err,
	                                        memory_order_relaxed, memory_order_relaxed);
	if (!pt_handle_filtered(k->h, POSIX_TRACE_ERROR))
		pt_ctl_post(k->ctl, &k->h->src.map, POSIX_TRACE_ERROR, &err, sizeof err, NULL);
}

/* ---- the log --------------------------------------------------------- */

static void snapshot_status(struct keeper *k, struct pt_logw_status *st)
{
	struct pt_stream_hdr *s = k->shdr;
	/* The state's value only: relaxed would do. */
	uint32_t state = atomic_load_explicit(&s->state, memory_order_acquire);
	memset(st, 0, sizeof *st);
	st->stream_status = state == PT_ST_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
	st->stream_full = (state == PT_ST_FULL || atomic_load_explicit(&s->full, memory_order_relaxed))
	                      ? POSIX_TRACE_FULL
	                      : POSIX_TRACE_NOT_FULL;
	st->lost_events = pt_handle_lost(k->h);
	st->stream_overrun = st->lost_events ? POSIX_TRACE_OVERRUN : POSIX_TRACE_NO_OVERRUN;
	st->flush_status = POSIX_TRACE_NOT_FLUSHING;
	st->flush_error = atomic_load_explicit(&k->ctl->keeper_error, memory_order_relaxed);
	/* A count only: relaxed. */
	uint64_t suppressed = atomic_load_explicit(&k->ctl->trigger_suppressed, memory_order_relaxed);
	st->triggers_suppressed = suppressed > UINT32_MAX ? UINT32_MAX : (uint32_t)suppressed;
	/* Counts only: relaxed.  The target writes them: they are what it says. */
	st->waits.waited_events = atomic_load_explicit(&s->waited_events, memory_order_relaxed);
	st->waits.waited_ns = atomic_load_explicit(&s->waited_ns, memory_order_relaxed);
	st->waits.waited_lost = atomic_load_explicit(&s->waited_lost, memory_order_relaxed);
}

/* The log's own state, where the controller's get_status finds it. */
static void publish_log_state(struct keeper *k)
{
	struct pt_logw_progress p;
	pt_logw_read_progress(&k->ctl->logw, &p);
	int full = p.log_full || p.status.log_full == POSIX_TRACE_FULL;
	if (full)
		atomic_store_explicit(&k->ctl->log_full, 1, memory_order_relaxed);
	if (p.status.log_overrun == POSIX_TRACE_OVERRUN || full)
		atomic_store_explicit(&k->ctl->log_overrun, 1, memory_order_relaxed);
}

/* New names go into the log before the events that use them. */
static void log_new_names(struct keeper *k)
{
	uint32_t n = pt_stream_nnames(&k->h->src.map);
	if (n <= k->names_in_log)
		return;
	uint32_t count = n - k->names_in_log;
	char (*names)[PT_LOG_NAME_SIZE] = calloc(count, PT_LOG_NAME_SIZE);
	if (!names) {
		keep_error(k, ENOMEM);
		return;
	}
	for (uint32_t i = 0; i < count; i++)
		pt_stream_get_name(&k->h->src.map, PT_USER_FIRST + 1 + k->names_in_log + i, names[i]);
	keep_error(k, pt_logw_names(&k->w, PT_USER_FIRST + 1 + k->names_in_log, count,
	                            (const char(*)[PT_LOG_NAME_SIZE])names));
	free(names);
	k->names_in_log = n;
}

/* The log is full (UNTIL_FULL log): its last event is the automatic
 * POSIX_TRACE_STOP the writer put there, and the stream stops. */
static void log_became_full(struct keeper *k)
{
	atomic_store_explicit(&k->ctl->log_full, 1, memory_order_relaxed);
	atomic_store_explicit(&k->ctl->log_overrun, 1, memory_order_relaxed);
	uint32_t running = PT_ST_RUNNING;
	/* The state's value only: nothing is published with it. */
	atomic_compare_exchange_strong_explicit(&k->shdr->state, &running, PT_ST_SUSPENDED,
	                                        memory_order_acq_rel, memory_order_relaxed);
	pt_wake_room_waiters(k->shdr); /* stopped: they give up */
}

_Static_assert(PT_ID_CPU == PT_LOG_STAGE_CPU && PT_CPU_NONE == PT_LOG_CPU_NONE &&
                   PT_CPU_LIMIT == PT_LOG_CPU_LIMIT && PT_CPU_REC_SIZE == PT_LOG_CPU_REC,
               "a stream's CPU records go into the log as they are");

/* The owner of a stream record and the context of a log record are the
 * same 32 bytes. */
_Static_assert(sizeof(struct pt_owner) == sizeof(struct pt_log_ctx) &&
                   offsetof(struct pt_owner, comm) == offsetof(struct pt_log_ctx, comm),
               "owner and log context");

static void log_result(struct keeper *k, int r)
{
	if (r == PT_LOGW_FULL)
		log_became_full(k);
	else if (r > 0)
		keep_error(k, r);
}

static void log_event(struct keeper *k, const struct pt_rawev *e, size_t len)
{
	struct pt_log_ctx ctx;
	memcpy(&ctx, &e->who, sizeof ctx);
	if (e->id > PT_USER_FIRST + k->names_in_log)
		log_new_names(k);
	log_result(k, pt_logw_event(&k->w, &ctx, e->real_ns, e->id, k->data, (uint32_t)len,
	                            e->truncation == POSIX_TRACE_TRUNCATED_RECORD, e->pc));
	if (e->resume_due)
		log_result(k, pt_logw_resume_mark(&k->w, &ctx, e->real_ns));
}

static void made_progress(struct keeper *k, uint64_t events)
{
	uint64_t before = k->moved;
	k->moved += events;
	if (k->moved / 256 != before / 256)
		atomic_fetch_add_explicit(&k->ctl->keeper_progress, 1, memory_order_relaxed);
}

/* The events of the library's own (the controller's, the reader's) into
 * the log, the lanes left alone. */
static void move_own_events(struct keeper *k)
{
	struct pt_rawev e;
	size_t len;
	k->h->src.rd.lanes_off = 1;
	while (pt_read_raw(&k->h->src, &e, k->data, k->h->src.map.max_data + PT_CTL_DATA_MAX, &len, 0, 0)) {
		k->drained += len + EVENT_COST;
		if (k->fd >= 0)
			log_event(k, &e, len);
		made_progress(k, 1);
	}
	k->h->src.rd.lanes_off = 0;
}

static uint64_t calibrated_ns(const struct keeper *k, uint64_t raw)
{
	struct pt_log_calseg seg = pt_log_cal_find(k->cal, k->ncal, raw);
	return pt_log_cal_apply(&seg, raw);
}

static void log_pids(struct keeper *k)
{
	if (k->npids)
		log_result(k, pt_logw_pids(&k->w, k->pids, k->npids));
	k->npids = 0;
}

static void note_pids(const struct pt_idpair *p, void *arg)
{
	struct keeper *k = arg;
	if (k->npids == KEEPER_PIDS_BATCH)
		log_pids(k);
	k->pids[k->npids++] = (struct pt_log_pid_entry){p->ns, p->pid, p->tid, p->local_pid,
	                                                p->local_tid};
}

/* A stage of a lane written in another pid namespace carries the ids of
 * this one (its OWNER records rewritten in the reader's private copy),
 * and the log learns the writer's own ids (PIDS, pidmap.h). */
static void translate_stage(struct keeper *k, const struct pt_stage *st, struct pt_owner *start)
{
	const struct pt_map *m = &k->h->src.map;
	/* The value only: the writer's claim, like the ids it wrote.  The lane
	 * is a reader cursor's (pt_read_stage), below lanes_readable. */
	uint64_t ns = atomic_load_explicit(&pt_lane_at(m, st->lane)->owner_ns, memory_order_relaxed);
	if (!ns || ns == pt_proc.pidns)
		return;
	struct pt_idpair pair;
	if (pt_pidmap_translate(&k->h->src.rd.ids, ns, start, &pair) == 2)
		note_pids(&pair, k);
	pt_pidmap_rewrite(&k->h->src.rd.ids, ns, (unsigned char *)(uintptr_t)st->rec, st->len,
	                  m->max_data, note_pids, k);
	log_pids(k);
}

/* splitmix64's finish: every bit of the key reaches every bit. */
static uint64_t mix64(uint64_t h)
{
	h = (h ^ h >> 30) * 0xbf58476d1ce4e5b9ull;
	h = (h ^ h >> 27) * 0x94d049bb133111ebull;
	return h ^ h >> 31;
}

/* Whether the entry was written already (and if not, it is now noted). */
static int image_seen(struct keeper *k, int32_t pid, const struct pt_image_rec *r)
{
	uint64_t h = mix64(mix64(r->raw) + ((uint64_t)(uint32_t)pid << 16 | r->index)) | 1;
	/* | 1: 0 marks a free slot */
	uint32_t i = (uint32_t)(h >> 40) & (KEEPER_IMAGES_SEEN - 1);
	for (; k->images_seen[i]; i = (i + 1) & (KEEPER_IMAGES_SEEN - 1))
		if (k->images_seen[i] == h)
			return 1;
	if (2 * ++k->nimages_seen > KEEPER_IMAGES_SEEN) {
		memset(k->images_seen, 0, sizeof k->images_seen);
		k->nimages_seen = 1;
	}
	k->images_seen[i] = h;
	return 0;
}

/* The user to name as the describer of the images of records just
 * copied out of the stream: the owner of the stream memory, read from the
 * kernel after the copy, since only its owner's processes and root's can
 * open it (SECURITY.md, "Descriptors are tokens").  Root's controller
 * hands it to the user of a target of another user (remote.c), once; from
 * then on that user may have written any of it, so the first user other
 * than root stays the answer whatever the owner becomes, and a second one
 * makes it unknown for the rest of the stream. */
static uint32_t image_owner(struct keeper *k)
{
	struct stat mem;
	if (fstat(k->h->src.map.fd, &mem) != 0)
		return PT_LOG_UID_UNKNOWN;
	if (mem.st_uid != 0 && k->images_users == 0) {
		k->images_users = 1;
		k->images_uid = (uint32_t)mem.st_uid;
	} else if (mem.st_uid != 0 && k->images_users == 1 && mem.st_uid != k->images_uid) {
		k->images_users = 2;
	}
	return k->images_users == 0   ? 0
	       : k->images_users == 1 ? k->images_uid
	                              : PT_LOG_UID_UNKNOWN;
}

static void image_taken(int32_t pid, const struct pt_image_rec *r, const char *path, void *arg)
{
	struct keeper *k = arg;
	if (image_seen(k, pid, r))
		return;
	struct pt_log_image e = {
	    .pid = pid,
	    .time_ns = calibrated_ns(k, r->raw),
	    .set = r->raw,
	    .start = r->start,
	    .end = r->end,
	    .bias = r->bias,
	    .index = r->index,
	    .count = r->count,
	    .path_len = r->path_len,
	    .build_id_len = r->build_id_len,
	    .flags = r->flags & PT_IMAGE_PATH_CUT,
	};
	_Static_assert(sizeof e.build_id == sizeof r->build_id, "build ids fit");
	memcpy(e.build_id, r->build_id, r->build_id_len);
	log_result(k, pt_logw_image(&k->w, &e, path, k->stage_uid));
	if (k->h->rot.dir >= 0 || k->w.layout == PT_LOG_RING)
		keep_error(k, pt_rot_images_keep(&k->rot_images, &e, path, k->stage_uid,
		                                 pt_logw_next_seq(&k->w)));
}

static void log_stage(struct keeper *k, const struct pt_stage *st)
{
	if (st->max_id > PT_USER_FIRST + k->names_in_log)
		log_new_names(k);
	struct pt_owner start = st->start.owner;
	translate_stage(k, st, &start);
	uint32_t len = st->len;
	if (st->images) {
		/* The records are the keeper's private copy (reader.c). */
		k->stage_uid = image_owner(k);
		len = pt_images_take((unsigned char *)(uintptr_t)st->rec, st->len,
		                     k->h->src.map.max_data, &start, image_taken, k);
		if (!len)
			return;
	}
	struct pt_logw_stage s = {
	    .rec = st->rec,
	    .len = len,
	    .lane = st->lane,
	    .how = st->how,
	    .events = st->events,
	    .start_pc = st->start.pc,
	    .start_cpu = st->start.cpu,
	    .first_ns = calibrated_ns(k, st->first_raw),
	    .last_ns = calibrated_ns(k, st->last_raw),
	};
	s.start.base = st->start.base;
	memcpy(&s.start.ctx, &start, sizeof s.start.ctx);
	log_result(k, pt_logw_stage(&k->w, &s));
}

/* Every lane's records, a checked stage at a time, copied into the log as
 * they are. */
static void copy_lanes(struct keeper *k)
{
	struct pt_stage st;
	uint32_t n = pt_read_lanes(&k->h->src);
	for (uint32_t i = 0; i < n; i++) {
		while (pt_read_stage(&k->h->src, i, &st)) {
			k->drained += st.len;
			if (k->fd >= 0)
				log_stage(k, &st);
			made_progress(k, st.events);
		}
	}
}

/* The calibration points of the keeper's reader on the CLOCK_REALTIME
 * scale of the stream's creation, a point taken now the newest (clock.c
 * keeps few: a steady clock needs two).  A MONO clock needs one. */
static void take_calibration(struct keeper *k)
{
	const struct pt_map *m = &k->h->src.map;
	struct pt_clockconv *c = &k->h->src.rd.conv;
	k->clock = m->clock == PT_CLOCK_TSC ? PT_LOG_CLOCK_TSC : PT_LOG_CLOCK_MONO;
	k->ncal = 0;
	if (m->clock == PT_CLOCK_TSC && c->n)
		pt_conv_sample(c);
	for (uint32_t i = 0; m->clock == PT_CLOCK_TSC && i < c->n; i++) {
		struct pt_log_calpoint p = {c->pts[i].raw, pt_mono_to_real(m, c->pts[i].mono)};
		if (k->ncal && (p.raw <= k->cal[k->ncal - 1].raw || p.real_ns < k->cal[k->ncal - 1].real_ns))
			continue;
		k->cal[k->ncal++] = p;
	}
	if (k->ncal < 2) {
		k->clock = PT_LOG_CLOCK_MONO;
		k->cal[0] = (struct pt_log_calpoint){m->base_mono_ns, m->base_real_ns};
		k->ncal = 1;
	}
}

/* A drain (docs/LOG-FORMAT.md): the reader enters each chunk at most once,
 * the log's blocks carry its number, and it takes the events up to the
 * time it begins (the last one: all of them), so that the events of one
 * drain come before those of the next and the log reader, which merges
 * each drain by time, delivers them in the order they were recorded. */
static void begin_drain(struct keeper *k, int last)
{
	pt_read_begin_drain(&k->h->src, last ? UINT64_MAX : pt_clock_raw(k->h->src.map.clock));
	if (k->fd < 0)
		return;
	take_calibration(k);
	keep_error(k, pt_logw_begin_drain(&k->w, k->clock, k->cal, k->ncal));
}

static void repeat_image(const struct pt_rot_image *im, void *arg)
{
	struct keeper *k = arg;
	log_result(k, pt_logw_image(&k->w, &im->e, im->path, im->uid));
}

/* A ring log overwrites its oldest blocks, among them the ones that hold
 * the sets of processes still posting: each set kept (rotate.c) whose
 * newest writing is in the older half of the ring is written again, as
 * the files' descriptions are (pt_logw_images_done), so that it leaves
 * the ring no sooner than the events that need it (docs/LOG-FORMAT.md,
 * "A ring"). */
static void renew_sets(struct keeper *k)
{
	uint64_t next = pt_logw_next_seq(&k->w), half = k->w.ring_slots / 2;
	if (k->w.layout != PT_LOG_RING || next + 1 < half)
		return;
	pt_rot_images_renew(&k->rot_images, next + 1 - half, next, repeat_image, k);
}

/* Everything the stream holds, and the library's own events: at most what
 * the stream can hold (the reader's bound), whatever the writers do
 * meanwhile. */
static void drain(struct keeper *k, int last)
{
	begin_drain(k, last);
	if (k->w.layout == PT_LOG_RING && k->nimages_seen) {
		memset(k->images_seen, 0, sizeof k->images_seen);
		k->nimages_seen = 0;
	}
	log_new_names(k);
	copy_lanes(k);
	if (k->fd >= 0) {
		renew_sets(k);
		pt_logw_images_done(&k->w); /* the drain's images, one description per file */
	}
	move_own_events(k);
	pt_read_end_drain(&k->h->src);
	/* The drain gave its chunks back (retire, reader.c): writers waiting
	 * for room take them. */
	pt_wake_room_waiters(k->shdr);
}

/* ---- a rotated log (rotate.h) ------------------------------------------ */

/* A new file of the log begun on fd, with what a reader of it alone needs
 * first: the names, and the images of the processes still alive; the ids
 * of writers of other pid namespaces are written again (PIDS) before
 * their first events in it.  It counts its events from 0, as the claims
 * do from now on. */
static void begin_file(struct keeper *k, int fd)
{
	struct pt_logw_params p;
	pt_keeper_log_params(&p, k->h);
	int err = pt_logw_begin(&k->w, &k->ctl->logw, fd, &p);
	if (err) {
		keep_error(k, err);
		close(fd);
		k->fd = -1;
		return;
	}
	k->fd = fd;
	k->file_began = pt_mono_ns();
	(void)pt_logio_share_budget(&k->w, pt_keeper_queue_budget());
	pt_claims_forget(k->ctl, 0);
	k->names_in_log = 0;
	log_new_names(k);
	pt_rot_images_each(&k->rot_images, repeat_image, k);
	pt_logw_images_done(&k->w);
	pt_pidmap_unuse(&k->h->src.rd.ids);
}

/* File n, made now (unnamed where it can be: *named 0); the files past the
 * count removed.  Its number is published once the file exists and before
 * it is begun: a keeper killed in between leaves a log a new keeper cannot
 * resume, and it begins that number again when the file had no name yet,
 * else the next (start_rotated). */
static int make_file(struct keeper *k, uint64_t n, int *named)
{
	uint64_t dev, ino;
	int err = 0;
	int fd = pt_rot_create(k->h->rot.dir, n, k->h->rot.mode, &dev, &ino, named, &err);
	if (fd < 0) {
		keep_error(k, err);
		k->rot_stopped = 1;
	}
	return fd;
}

/* File n, begun unnamed, named now that its header and name table are
 * written: a kill never leaves a file of the set without them.  A name
 * taken in between (only by someone who may write in the directory) stops
 * the rotation, the error said; this file's events go nowhere a reader
 * finds them. */
static void name_file(struct keeper *k, uint64_t n, int named)
{
	if (named || k->fd < 0)
		return;
	int err = pt_rot_name_file(k->h->rot.dir, n, k->fd);
	if (err) {
		keep_error(k, err);
		k->rot_stopped = 1;
	}
}

static void publish_file(struct keeper *k, int fd, uint64_t n)
{
	struct pt_ctl *c = k->ctl;
	struct stat st;
	if (fstat(fd, &st) == 0) {
		c->rot_dev = (uint64_t)st.st_dev;
		c->rot_ino = (uint64_t)st.st_ino;
	}
	c->rot_current = n;
	while (k->h->rot.count && c->rot_current - c->rot_oldest >= k->h->rot.count) {
		keep_error(k, pt_rot_remove(k->h->rot.dir, c->rot_oldest));
		c->rot_oldest++;
	}
}

/* The blocks of the file being written (not its header and name table,
 * about 68 KiB that every file has) have passed the size: the next file is
 * made first (a name taken leaves this one written on), then this one ends
 * as a closed log.  Not at the end of the stream: no file is made for
 * nothing. */
static int may_rotate(const struct keeper *k)
{
	return k->h->rot.dir >= 0 && !k->rot_stopped && !k->finishing && k->fd >= 0;
}

static void rotate(struct keeper *k)
{
	uint64_t n = k->ctl->rot_current + 1;
	int named = 1;
	int fd = make_file(k, n, &named);
	if (fd < 0)
		return;
	struct pt_logw_status st;
	snapshot_status(k, &st);
	keep_error(k, pt_logw_finish(&k->w, &st));
	pt_logw_free(&k->w);
	close(k->fd);
	publish_file(k, fd, n);
	begin_file(k, fd);
	name_file(k, n, named);
}

static void rotate_if_full(struct keeper *k)
{
	if (may_rotate(k) && k->w.prog.write_off - k->w.data_off >= k->h->rot.size)
		rotate(k);
}

/* A keeper of a rotated log: the first file, which the controller gave
 * the first keeper; for a later keeper the file its predecessor wrote,
 * found again by number and identity, resumed; or, when that cannot be (it
 * was killed while it changed files), the next number begun, what it had
 * claimed and not written counted lost.  1: resumed (the caller settles
 * the claims); 0: begun anew, or no file. */
static int start_rotated(struct keeper *k)
{
	struct pt_ctl *c = k->ctl;
	int fd = k->fd >= 0 ? k->fd
	                    : pt_rot_reopen(k->h->rot.dir, c->rot_current, c->rot_dev, c->rot_ino);
	k->fd = -1;
	if (fd >= 0 && pt_logw_resume(&k->w, &c->logw, fd) == 0) {
		k->fd = fd;
		return 1;
	}
	if (fd >= 0)
		close(fd);
	struct pt_logw_progress p;
	pt_logw_read_progress(&c->logw, &p);
	pt_claims_settle(c, &k->h->src.map, p.stage_events);
	/* The number published is free again when the keeper killed had not
	 * named its file yet; a file made named and not published by it takes
	 * the next number. */
	uint64_t n = c->rot_current, dev, ino;
	int err = 0, named = 1;
	fd = pt_rot_create(k->h->rot.dir, n, k->h->rot.mode, &dev, &ino, &named, &err);
	for (int tries = 0; fd < 0 && err == EEXIST && tries < 2; tries++)
		fd = pt_rot_create(k->h->rot.dir, ++n, k->h->rot.mode, &dev, &ino, &named, &err);
	if (fd < 0) {
		keep_error(k, err);
		k->rot_stopped = 1;
		return 0;
	}
	publish_file(k, fd, n);
	begin_file(k, fd);
	name_file(k, n, named);
	return 0;
}

/* Everything now in the stream goes to the log, between FLUSH_START and
 * FLUSH_STOP carrying who caused the flush (XSH 2.11.1, posix_trace_event_info Structure); the STOP reaches
 * the log with the next flush, in its place by time.  written: the flush
 * ends once the log's writing thread has written it all (posix_trace_flush,
 * the end); else (an automatic flush) once it is handed to the thread, so
 * that a disk that stalls does not stop the drains while the queue has
 * room (DESIGN.md, "The keeper's output queue"). */
static void flush(struct keeper *k, const struct pt_caller *who, uint32_t request, int written)
{
	if (!pt_handle_filtered(k->h, POSIX_TRACE_FLUSH_START))
		pt_ctl_put(k->ctl, k->h->src.map.clock, POSIX_TRACE_FLUSH_START, NULL, 0, who);
	log_new_names(k);
	drain(k, 0);
	if (!pt_handle_filtered(k->h, POSIX_TRACE_FLUSH_STOP))
		pt_ctl_put(k->ctl, k->h->src.map.clock, POSIX_TRACE_FLUSH_STOP, NULL, 0, who);
	struct pt_logw_status st;
	snapshot_status(k, &st);
	keep_error(k, written ? pt_logw_sync(&k->w, &st) : pt_logw_hand(&k->w, &st));
	rotate_if_full(k);
	publish_log_state(k);
	/* Release: flush_error, log_full and log_overrun first; pairs with the
	 * acquire load of flush_done in active_status (query.c). */
	atomic_store_explicit(&k->ctl->flush_done, request, memory_order_release);
}

static void ack(struct keeper *k, uint32_t commands)
{
	/* Release: the commands' effects first; pairs with the acquire load of
	 * keeper_ack in wait_ack (keepctl.c). */
	atomic_fetch_add_explicit(&k->ctl->keeper_ack, commands, memory_order_release);
	syscall(SYS_futex, &k->ctl->keeper_ack, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

__attribute__((noreturn)) static void finish(struct keeper *k, const struct pt_caller *who)
{
	/* No process joins a stream that is ending. */
	pt_rdv_remove(&k->h->rdv);
	k->finishing = 1;
	if (k->fd >= 0) {
		/* A request number only (it becomes flush_done): relaxed would do. */
		flush(k, who, atomic_load_explicit(&k->ctl->flush_req, memory_order_acquire), 1);
		drain(k, 1); /* the last FLUSH_STOP, the shutdown's STOP, late commits */
		struct pt_logw_status st;
		snapshot_status(k, &st);
		keep_error(k, pt_logw_finish(&k->w, &st));
	}
	int err = atomic_load_explicit(&k->ctl->keeper_error, memory_order_relaxed);
	/* Release: keeper_error first; pairs with the acquire load of
	 * keeper_finished in keeper_result (keepctl.c). */
	atomic_store_explicit(&k->ctl->keeper_finished, 1, memory_order_release);
	ack(k, 1);
	_exit(err > 0 && err < 256 ? err : err ? EIO : 0);
}

/* The controller is gone (exit, exec, kill): the stream ends as if it had
 * called posix_trace_shutdown(). */
__attribute__((noreturn)) static void controller_gone(struct keeper *k)
{
	struct pt_caller ctl = {k->controller, 0, 0, 0};
	uint32_t running = PT_ST_RUNNING;
	int manual = 0;
	/* The state's value only, as in log_became_full. */
	if (atomic_compare_exchange_strong_explicit(&k->shdr->state, &running, PT_ST_SUSPENDED,
	                                            memory_order_acq_rel, memory_order_relaxed) &&
	    !pt_handle_filtered(k->h, POSIX_TRACE_STOP))
		pt_ctl_put(k->ctl, k->h->src.map.clock, POSIX_TRACE_STOP, &manual, sizeof manual, &ctl);
	pt_stream_end(k->shdr);
	pt_wake_readers(k->shdr);
	pt_wake_room_waiters(k->shdr);
	if (k->h->remote)
		pt_remote_withdraw(&k->h->target);
	finish(k, &ctl);
}

/* Whether the stream's words hint at a flush: a writer's kick, a quarter
 * of the room held, a full stream.  The target writes them: they make the
 * keeper look, never flush by themselves. */
static int flush_hinted(const struct keeper *k)
{
	const struct pt_stream_hdr *s = k->shdr;
	if (k->fd < 0 || k->h->src.map.policy != POSIX_TRACE_FLUSH)
		return 0;
	/* Acquire: pairs with the exchange in pt_keeper_kick (writer.c), so
	 * that kick_pid and kick_pc are the kicker's. */
	return atomic_load_explicit(&s->keeper_kicked, memory_order_acquire) ||
	       atomic_load_explicit(&s->state, memory_order_relaxed) == PT_ST_FULL ||
	       atomic_load_explicit(&s->held, memory_order_relaxed) >= k->h->src.map.event_room / 4;
}

/* A flush the keeper takes itself, asked by the writer pid at pc (the
 * controller when no writer is named): only when a drain would find
 * something (its own FLUSH_START and FLUSH_STOP do not count), so that a
 * look that finds nothing records nothing.  1 when it flushed. */
static int flush_asked_by(struct keeper *k, pid_t pid, uint64_t pc)
{
	struct pt_caller who = {pid > 0 ? pid : k->controller, 0, 0, pc};
	/* A full stream is flushed even with nothing to drain: the flush is
	 * what restarts it (at_end, reader.c). */
	if (!pt_read_pending(&k->h->src) &&
	    atomic_load_explicit(&k->shdr->state, memory_order_relaxed) != PT_ST_FULL)
		return 0;
	/* A request number only (active_status compares it with flush_done):
	 * relaxed would do.  Every request counted before this one is done
	 * once this flush is (its number is larger); a posix_trace_flush among
	 * them waits for its data written, so the flush writes them then.
	 * flush_done is this process's own word. */
	uint32_t prev = atomic_fetch_add_explicit(&k->ctl->flush_req, 1, memory_order_acq_rel);
	int waited_for = prev != atomic_load_explicit(&k->ctl->flush_done, memory_order_relaxed);
	flush(k, &who, prev + 1, waited_for);
	return 1;
}

/* An automatic flush of a POSIX_TRACE_FLUSH stream.  The writer that
 * asked; a flush nobody asked for yet (a quarter held, seen before the
 * kick) names the last one that did, or the controller. */
static void auto_flush(struct keeper *k)
{
	if (k->fd < 0 || k->h->src.map.policy != POSIX_TRACE_FLUSH)
		return;
	pid_t pid = atomic_load_explicit(&k->shdr->kick_pid, memory_order_relaxed);
	uint64_t pc = atomic_load_explicit(&k->shdr->kick_pc, memory_order_relaxed);
	atomic_store_explicit(&k->shdr->keeper_kicked, 0, memory_order_relaxed);
	flush_asked_by(k, pid, pc);
}

/* The current file is posixtrace_file_seconds old: what a FLUSH stream
 * holds goes to it first (an automatic flush the controller is named for,
 * only when the stream holds events), then it ends if it holds events; a
 * file without events stays, looked at again a period later.  So an
 * event reaches a closed file within about a period and a tick, however
 * slowly the stream fills. */
static void rotate_if_old(struct keeper *k, uint64_t now)
{
	uint64_t period = (uint64_t)k->h->rot.seconds * 1000000000u;
	if (!period || !may_rotate(k) || now - k->file_began < period)
		return;
	if (k->h->src.map.policy == POSIX_TRACE_FLUSH)
		flush_asked_by(k, 0, 0);
	if (may_rotate(k) && k->w.prog.stage_events + k->w.blk_stage_events)
		rotate(k);
	else
		k->file_began = now;
}

/* Looks at the stream are paid from a credit that grows by a tick's worth
 * each tick, up to CREDIT_MAX.  A look costs a tick and is paid back by
 * what it drained: in full from REFUND_PART of the room on, in part below
 * that (a look that drains the whole room earns the most).  A writer that
 * fills the stream gets a look each time it kicks, however small the last
 * one was: looks right after a flush, which find what came during it,
 * must not use the credit up, or the keeper would sleep a tick while the
 * stream overflows.  A target that only scribbles the hints or bumps
 * keeper_wake gets one look per tick, each finding nothing to record. */
#define CREDIT_MAX (4 * TICK_NS)
/* A 256th (16 KiB of a 4 MiB stream): once an automatic drain hands its
 * blocks to the log's writing thread instead of writing them, the look
 * after it comes sooner and finds less; paid back in part from a
 * thirty-second, such looks still used the credit up (the keeper slept up
 * to 90 ms in a 10 s run at 14 M events/s into a 4 MiB stream). */
#define REFUND_PART 256u

static void credit_update(struct keeper *k, uint64_t now)
{
	k->credit += now - k->credit_at;
	k->credit_at = now;
	if (k->credit > CREDIT_MAX)
		k->credit = CREDIT_MAX;
}

/* The keeper's budget for triggers (docs/SECURITY.md): at most one
 * snapshot per type every TRIGGER_HOLDOFF_NS, at most TRIGGER_SNAPSHOTS_MAX
 * for the whole stream; events of a trigger's type beyond that are
 * counted, in the log's status (LOG-FORMAT.md) and posixtrace_log_info. */
#define TRIGGER_HOLDOFF_NS 1000000000ull
#define TRIGGER_SNAPSHOTS_MAX 64u

static void trigger_suppress(struct keeper *k, uint32_t events)
{
	/* A count only: relaxed. */
	atomic_fetch_add_explicit(&k->ctl->trigger_suppressed, events, memory_order_relaxed);
}

/* Whether a snapshot for an event of type id may be taken now: its type's
 * hold-off is over and the stream's budget is not spent.  The type is the
 * writer's hint: a made-up one only moves its events to another type's
 * hold-off, and the budget bounds every type together. */
static int trigger_allowed(const struct keeper *k, uint32_t id, uint64_t now)
{
	uint64_t last = k->trigger_last_ns[id < PT_NEVENT_IDS ? id : 0];
	return k->trigger_taken < TRIGGER_SNAPSHOTS_MAX && (!last || now - last >= TRIGGER_HOLDOFF_NS);
}

/* Events of a trigger's type were recorded since the last snapshot
 * (posixtrace_set_trigger): everything the stream holds goes to the log,
 * as posix_trace_flush would write it, marked by FLUSH_START and
 * FLUSH_STOP naming the writer, unless the hold-off of its type or the
 * stream's budget says no (then the events are counted as suppressed).
 * The count is a hint the target could scribble: it costs a look, paid
 * from the credit as any look, and writes only events the stream holds,
 * which the target could have posted with the trigger's type itself. */
static int trigger_snapshot(struct keeper *k)
{
	/* Pairs with the release fetch-add in trigger_fire (writer.c). */
	uint32_t hits = atomic_load_explicit(&k->shdr->trigger_hits, memory_order_acquire);
	if (k->fd < 0 || hits == k->trigger_seen)
		return 0;
	uint32_t events = hits - k->trigger_seen;
	k->trigger_seen = hits;
	/* Hints only: relaxed. */
	uint32_t id = atomic_load_explicit(&k->shdr->trigger_id, memory_order_relaxed);
	uint64_t now = pt_mono_ns();
	if (!trigger_allowed(k, id, now)) {
		trigger_suppress(k, events);
		return 0;
	}
	k->credit -= TICK_NS;
	if (flush_asked_by(k, atomic_load_explicit(&k->shdr->trigger_pid, memory_order_relaxed),
	                   atomic_load_explicit(&k->shdr->trigger_pc, memory_order_relaxed))) {
		atomic_fetch_add_explicit(&k->ctl->trigger_snapshots, 1, memory_order_relaxed);
		k->trigger_taken++;
		k->trigger_last_ns[id < PT_NEVENT_IDS ? id : 0] = now;
		/* Events of the same look beyond the first took no snapshot of
		 * their own, as before the hold-off: not counted. */
	}
	return 1;
}

static void look(struct keeper *k)
{
	uint64_t room = k->h->src.map.event_room, part = room / REFUND_PART + 1;
	k->drained = 0;
	auto_flush(k);
	k->credit -= TICK_NS;
	if (k->drained >= room)
		k->credit += CREDIT_MAX;
	else
		k->credit += k->drained >= part ? TICK_NS : TICK_NS * k->drained / part;
	if (k->credit > CREDIT_MAX)
		k->credit = CREDIT_MAX;
}

/* A target that had not loaded the library at creation gets the stream
 * once it has. */
static void reach_late(struct keeper *k)
{
	struct pt_handle *h = k->h;
	if (!h->remote)
		return;
	/* A target that changed user and exec'd before taking the offer made
	 * a block of its own: the offer goes there (looked at every tick,
	 * while it waits). */
	if (h->target.pcb && pt_remote_offer_stranded(&h->target)) {
		pt_remote_withdraw(&h->target);
		pt_remote_unreach(&h->target);
	}
	if (h->target.pcb || ++k->ticks % REACH_EVERY)
		return;
	/* The state's value only. */
	if (pt_remote_hand_over(&h->target, &h->src.map,
	                        atomic_load_explicit(&k->shdr->state, memory_order_acquire) ==
	                            PT_ST_RUNNING) == 0)
		pt_rdv_follow_owner(&h->rdv, h->src.map.fd);
}

static void command(struct keeper *k, const struct pt_cmd_msg *msg)
{
	struct pt_caller who = msg->who;
	if (msg->cmd == PT_CMD_CLEAR) {
		pt_discard_all(&k->h->src);
		if (k->fd >= 0) {
			keep_error(k, pt_logw_clear(&k->w));
			pt_claims_forget(k->ctl, k->w.done.stage_events);
		}
		/* posix_trace_clear: the log is no longer full. */
		atomic_store_explicit(&k->ctl->log_full, 0, memory_order_relaxed);
		atomic_store_explicit(&k->ctl->log_overrun, 0, memory_order_relaxed);
	} else if (msg->cmd == PT_CMD_FINISH) {
		finish(k, &who);
	}
	ack(k, 1);
}

/* FLUSH commands in a row are carried out as one flush (each is
 * acknowledged): a burst of posix_trace_flush calls costs one. */
static void flush_pending(struct keeper *k, const struct pt_cmd_msg *last, uint32_t *flushes)
{
	if (!*flushes)
		return;
	struct pt_caller who = last->who;
	/* A request number only, as in finish: every request sent before the
	 * message was taken is counted in it. */
	uint32_t req = atomic_load_explicit(&k->ctl->flush_req, memory_order_acquire);
	/* Every request counted so far was carried out by a flush that began
	 * after it (flush_done is this process's own word): a burst of flushes
	 * costs one flush, not one per batch of messages, each with its
	 * FLUSH_START, FLUSH_STOP and block in the log. */
	if (req != atomic_load_explicit(&k->ctl->flush_done, memory_order_relaxed))
		flush(k, &who, req, 1);
	ack(k, *flushes);
	*flushes = 0;
}

/* A burst of posix_trace_flush calls is one flush: while flushes are
 * waiting, more that come within a millisecond of each other (for at most
 * BURST_NS) join them, instead of a flush, with its FLUSH_START, FLUSH_STOP
 * and a block of the log (a whole slot of a ring log), per batch of
 * messages. */
#define BURST_NS 20000000ull

static int more_soon(int sock, uint64_t until)
{
	struct pollfd p = {.fd = sock, .events = POLLIN};
	return pt_mono_ns() < until && poll(&p, 1, 1) > 0 && (p.revents & POLLIN);
}

/* Carries out the commands waiting, after up to timeout_ms for the first;
 * ends the stream if the controller is gone (its end of the socket hung
 * up, or its pidfd says it exited). */
static void serve(struct keeper *k, int timeout_ms)
{
	struct pollfd p[2] = {{.fd = k->sock, .events = POLLIN},
	                      {.fd = k->controller_pidfd, .events = POLLIN}};
	if (poll(p, k->controller_pidfd >= 0 ? 2 : 1, timeout_ms) <= 0)
		return;
	struct pt_cmd_msg msg, last = {0};
	uint32_t flushes = 0;
	ssize_t got;
	uint64_t settle = pt_mono_ns() + BURST_NS;
	for (;;) {
		while ((got = recv(k->sock, &msg, sizeof msg, MSG_DONTWAIT)) == sizeof msg) {
			if (msg.cmd == PT_CMD_FLUSH) {
				last = msg;
				flushes++;
				continue;
			}
			flush_pending(k, &last, &flushes);
			command(k, &msg);
		}
		if (!flushes || got == 0 || !more_soon(k->sock, settle))
			break;
	}
	flush_pending(k, &last, &flushes);
	if (got == 0 || (p[0].revents & (POLLHUP | POLLERR)) || (p[1].revents & POLLIN))
		controller_gone(k);
}

/* Once per tick: a target not reached yet, the clock's calibration, the
 * writers of other pid namespaces while they live, and last, after the
 * joins and the drains, the others socket of the rendezvous (its own
 * budget: a crowd of another user there delays nothing else). */
static void tick(struct keeper *k, uint64_t now)
{
	if (now < k->next_tick)
		return;
	k->next_tick = now + TICK_NS;
	reach_late(k);
	pt_conv_sample(&k->h->src.rd.conv);
	if (k->fd >= 0)
		pt_read_learn_writers(&k->h->src);
	pt_pidmap_step(&k->h->src.rd.ids);
	if (k->rdv.listen_fd >= 0)
		pt_rdv_serve_others(&k->rdv);
}

/* The keeper sleeps on keeper_wake (a writer's kick, a command) with a
 * tick's timeout, and looks at the stream when its credit allows: it never
 * spins, whatever the target writes. */
__attribute__((noreturn)) static void keeper_loop(struct keeper *k)
{
	k->credit_at = pt_mono_ns();
	k->credit = CREDIT_MAX;
	for (;;) {
		/* Pairs with the release fetch-adds of keeper_wake in pt_keeper_kick
		 * (writer.c), send_cmd (keepctl.c) and on_connection (rdv_serve.c):
		 * what came before the count moved is seen. */
		uint32_t wake = atomic_load_explicit(&k->shdr->keeper_wake, memory_order_acquire);
		serve(k, 0);
		uint64_t now = pt_mono_ns();
		int more_joiners = k->rdv.listen_fd >= 0 &&
		                   pt_rdv_serve_pending(&k->rdv, now >= k->next_tick);
		now = pt_mono_ns();
		credit_update(k, now);
		if (k->credit < TICK_NS) {
			serve(k, (int)((TICK_NS - k->credit + 999999) / 1000000));
			continue;
		}
		if (!trigger_snapshot(k) && flush_hinted(k))
			look(k);
		rotate_if_old(k, now);
		tick(k, now);
		if (more_joiners)
			continue;
		struct timespec timeout = {0, (long)TICK_NS};
		syscall(SYS_futex, &k->shdr->keeper_wake, FUTEX_WAIT, wake, &timeout, NULL, 0);
	}
}

/* Descendants of the target that lost their descriptors ask for the
 * stream (rendezvous.h); the target is the controller itself for a
 * stream of its own. */
static void start_rendezvous(struct keeper *k, int registry_fd)
{
	struct pt_handle *h = k->h;
	k->rdv = (struct pt_rdv_server){
	    .listen_fd = h->rdv.fd,
	    .others_fd = h->rdv.others_fd,
	    .stream_fd = h->src.map.fd,
	    .registry_fd = registry_fd,
	    .target = h->remote ? h->target.pid : k->controller,
	    .target_start = h->remote ? h->target.start : pt_proc.starttime,
	    .counts = &k->ctl->rdv,
	};
	if (h->rdv.fd >= 0 && pt_rdv_serve_start(&k->rdv, &k->shdr->keeper_wake) != 0)
		k->rdv.listen_fd = -1;
}

/* Leaves the keeper with the descriptors it uses and stdio. */
static void close_other_fds(const int *keep, int n)
{
	int lo = 3;
	for (;;) {
		int next = INT_MAX;
		for (int i = 0; i < n; i++)
			if (keep[i] >= lo && keep[i] < next)
				next = keep[i];
		if (next == INT_MAX) {
			syscall(SYS_close_range, (unsigned)lo, ~0u, 0u);
			return;
		}
		if (next > lo)
			syscall(SYS_close_range, (unsigned)lo, (unsigned)next - 1, 0u);
		lo = next + 1;
	}
}

void pt_keeper_main(struct pt_handle *h, int sock, pid_t controller)
{
	struct keeper keeper = {.h = h, .shdr = pt_hdr(&h->src.map), .ctl = h->src.ctl, .sock = sock,
	                        .fd = h->log_fd, .controller = controller, .controller_pidfd = -1};
	struct keeper *k = &keeper;
	signal(SIGINT, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	/* A signal meant for its controller and sent by name (pkill -USR1 -f
	 * "posixtrace record", whose keeper has the same command line) ends
	 * nothing. */
	signal(SIGUSR1, SIG_IGN);
	signal(SIGUSR2, SIG_IGN);
	/* A write error is an error number to report, not a death. */
	signal(SIGPIPE, SIG_IGN);
	signal(SIGXFSZ, SIG_IGN);
	setsid();
	prctl(PR_SET_NAME, "posixtrace-keep");
	int registry_fd = h->remote ? h->target.reg_fd : pt_proc.reg_fd;
	int keep[] = {k->sock, k->fd, k->h->src.map.fd, k->h->target.pidfd, k->h->target.tx,
	              h->rdv.fd, h->rdv.others_fd, registry_fd, h->rot.dir};
	close_other_fds(keep, (int)(sizeof keep / sizeof keep[0]));
	/* The controller's end of the socket may live on in a process that
	 * did not run the library's fork handler; its pidfd tells its exit
	 * anyway.  A controller gone before this is no longer the parent. */
	k->controller_pidfd = (int)syscall(SYS_pidfd_open, k->controller, 0);
	pt_proc_lock_init();
	pt_forget_other_threads();
	/* The controller's own streams and block are not the keeper's. */
	for (int i = 0; i < PT_MAX_STREAMS; i++)
		pt_unpublish_map(&pt_proc.attached[i], memory_order_relaxed);
	pt_set_pcb(&pt_proc.pcb_fallback);
	k->data = malloc(k->h->src.map.max_data + PT_CTL_DATA_MAX);
	int resumed = 1;
	if (k->data && h->rot.dir >= 0)
		resumed = start_rotated(k);
	else if (!k->data || (k->fd >= 0 && pt_logw_resume(&k->w, &k->ctl->logw, k->fd) != 0))
		_exit(ENOMEM);
	if (k->fd >= 0 && resumed) {
		(void)pt_logio_share_budget(&k->w, pt_keeper_queue_budget());
		struct pt_logw_progress p;
		pt_logw_read_progress(&k->ctl->logw, &p);
		k->names_in_log = p.nnames;
		/* What a killed keeper took and did not write is lost: counted. */
		pt_claims_settle(k->ctl, &k->h->src.map, p.stage_events);
	}
	/* Only now that the log's writer is resumed: a controller that ended
	 * within microseconds of its posix_trace_create still gets the
	 * shutdown its stream is owed (posix_trace_create: as if it had
	 * called posix_trace_shutdown()). */
	if (getppid() != k->controller)
		controller_gone(k);
	if (!k->file_began)
		k->file_began = pt_mono_ns(); /* a file resumed: its age counts from now */
	start_rendezvous(k, registry_fd);
	keeper_loop(k);
}
