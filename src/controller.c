/*
 * The controller: trace stream identifiers, creation, start, stop, filter,
 * clear, status, attributes and shutdown.
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "internal.h"

static struct pt_handle handles[TRACE_SYS_MAX];
static pthread_mutex_t handles_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t handles_once = PTHREAD_ONCE_INIT;

static void handles_init(void)
{
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		pthread_mutex_init(&handles[i].lock, NULL);
		pthread_cond_init(&handles[i].idle, NULL);
		handles[i].gen = 1;
		handles[i].map.fd = -1;
	}
}

static trace_id_t trid_of(const struct pt_handle *h)
{
	return ((trace_id_t)h->gen << 8) | (trace_id_t)(h - handles + 1);
}

/* Returns the handle locked, or NULL for an identifier that is not (or no
 * longer, or not in this process) a trace stream. */
struct pt_handle *pt_handle_get(trace_id_t trid)
{
	pt_init();
	pthread_once(&handles_once, handles_init);
	trace_id_t idx = (trid & 0xff) - 1;
	if (idx >= TRACE_SYS_MAX || (trid >> 8) > UINT32_MAX)
		return NULL;
	struct pt_handle *h = &handles[idx];
	pthread_mutex_lock(&h->lock);
	if (!h->in_use || h->dying || h->gen != (uint32_t)(trid >> 8)) {
		pthread_mutex_unlock(&h->lock);
		return NULL;
	}
	return h;
}

void pt_handle_put(struct pt_handle *h) { pthread_mutex_unlock(&h->lock); }

void pt_handles_after_fork(void)
{
	pthread_mutex_init(&handles_lock, NULL);
	for (int i = 0; i < TRACE_SYS_MAX; i++) {
		struct pt_handle *h = &handles[i];
		pthread_mutex_init(&h->lock, NULL);
		pthread_cond_init(&h->idle, NULL);
		if (h->in_use)
			pt_stream_unmap(&h->map);
		h->in_use = h->dying = h->readers = 0;
		h->gen++;
	}
}

static int check_target(pid_t pid)
{
	if (pid == 0 || pid == pt_proc.pid)
		return 0;
	if (pid < 0 || (kill(pid, 0) != 0 && errno == ESRCH))
		return ESRCH;
	/* Tracing another process needs the cross-process attachment, which
	 * this version does not have yet. */
	return ENOTSUP;
}

static struct pt_handle *handle_alloc(void)
{
	pthread_once(&handles_once, handles_init);
	pthread_mutex_lock(&handles_lock);
	struct pt_handle *found = NULL;
	for (int i = 0; i < TRACE_SYS_MAX && !found; i++) {
		pthread_mutex_lock(&handles[i].lock);
		if (!handles[i].in_use && !handles[i].dying) {
			found = &handles[i];
			found->in_use = 1;
			found->dying = 1; /* invisible until ready */
		}
		pthread_mutex_unlock(&handles[i].lock);
	}
	pthread_mutex_unlock(&handles_lock);
	return found;
}

static void handle_release(struct pt_handle *h)
{
	pthread_mutex_lock(&h->lock);
	h->in_use = h->dying = 0;
	h->gen++;
	pthread_mutex_unlock(&h->lock);
}

static int create_stream(pid_t pid, const trace_attr_t *attr, trace_id_t *trid)
{
	pt_init();
	if (!trid)
		return EINVAL;
	struct pt_attr a;
	if (attr) {
		if (!pt_attr_valid(attr))
			return EINVAL;
		memcpy(&a, attr, sizeof a);
	} else {
		pt_attr_defaults(&a);
	}
	if (a.stream_policy == POSIX_TRACE_FLUSH)
		return EINVAL; /* a stream without a log cannot flush */
	int err = check_target(pid);
	if (err)
		return err;
	struct pt_handle *h = handle_alloc();
	if (!h)
		return EAGAIN;
	err = pt_stream_map_create(&a, pt_proc.pid, &h->map);
	if (err) {
		handle_release(h);
		return err;
	}
	int slot = pt_attach(&h->map);
	if (slot < 0) {
		pt_stream_unmap(&h->map);
		handle_release(h);
		return EAGAIN;
	}
	pthread_mutex_lock(&h->lock);
	h->slot = slot;
	h->readers = 0;
	h->typelist_pos = 0;
	h->resume_pending = 0;
	h->npending = 0;
	h->broken_reported = 0;
	memset(h->broken, 0, sizeof h->broken);
	h->dying = 0;
	*trid = trid_of(h);
	pthread_mutex_unlock(&h->lock);
	return 0;
}

int posix_trace_create(pid_t pid, const trace_attr_t *restrict attr, trace_id_t *restrict trid)
{
	return create_stream(pid, attr, trid);
}

static void filter_snapshot(const struct pt_stream_hdr *hdr, trace_event_set_t *set)
{
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		set->__bits[i] = atomic_load_explicit(&hdr->filter[i], memory_order_relaxed);
}

int posix_trace_start(trace_id_t trid)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
	if (state == PT_ST_SUSPENDED) {
		trace_event_set_t filter;
		filter_snapshot(hdr, &filter);
		pt_write_event(h->slot, POSIX_TRACE_START, &filter, sizeof filter, pt_now_ns(), pc, 1);
		atomic_store_explicit(&hdr->state, PT_ST_RUNNING, memory_order_release);
		pt_arm(h->slot, 1);
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_stop(trace_id_t trid)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t running = PT_ST_RUNNING;
	if (atomic_compare_exchange_strong_explicit(&hdr->state, &running, PT_ST_SUSPENDED,
	                                            memory_order_acq_rel, memory_order_acquire)) {
		int manual = 0;
		pt_arm(h->slot, 0);
		pt_write_event(h->slot, POSIX_TRACE_STOP, &manual, sizeof manual, pt_now_ns(), pc, 1);
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_shutdown(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	h->dying = 1;
	atomic_store_explicit(&hdr->state, PT_ST_DEAD, memory_order_release);
	pt_wake_readers(hdr);
	while (h->readers > 0)
		pthread_cond_wait(&h->idle, &h->lock);
	pt_detach(h->slot);
	pt_stream_unmap(&h->map);
	h->in_use = 0;
	h->dying = 0;
	h->gen++;
	pthread_mutex_unlock(&h->lock);
	return 0;
}

int posix_trace_clear(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t full = PT_ST_FULL;
	atomic_compare_exchange_strong_explicit(&hdr->state, &full, PT_ST_SUSPENDED,
	                                        memory_order_acq_rel, memory_order_relaxed);
	pt_discard_all(h);
	/* "As if returning from posix_trace_create()": the filter is empty
	 * again; names and running/suspended status are kept. */
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++)
		atomic_store_explicit(&hdr->filter[i], 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->ovf_count, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->ovf_ts, UINT64_MAX, memory_order_relaxed);
	atomic_store_explicit(&hdr->overrun, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->lost_status, 0, memory_order_relaxed);
	atomic_store_explicit(&hdr->full, 0, memory_order_relaxed);
	h->npending = 0;
	h->resume_pending = 0;
	pt_handle_put(h);
	return 0;
}

int posix_trace_get_status(trace_id_t trid, struct posix_trace_status_info *st)
{
	if (!st)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	uint32_t state = atomic_load_explicit(&hdr->state, memory_order_acquire);
	memset(st, 0, sizeof *st);
	st->posix_stream_status = state == PT_ST_RUNNING ? POSIX_TRACE_RUNNING : POSIX_TRACE_SUSPENDED;
	st->posix_stream_full_status =
	    (state == PT_ST_FULL || atomic_load_explicit(&hdr->full, memory_order_relaxed))
	        ? POSIX_TRACE_FULL
	        : POSIX_TRACE_NOT_FULL;
	st->posix_stream_overrun_status =
	    atomic_exchange_explicit(&hdr->overrun, 0, memory_order_relaxed) ? POSIX_TRACE_OVERRUN
	                                                                      : POSIX_TRACE_NO_OVERRUN;
	st->posixtrace_lost_events = atomic_exchange_explicit(&hdr->lost_status, 0,
	                                                      memory_order_relaxed);
	st->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
	st->posix_stream_flush_error = 0;
	st->posix_log_overrun_status = POSIX_TRACE_NO_OVERRUN;
	st->posix_log_full_status = POSIX_TRACE_NOT_FULL;
	pt_handle_put(h);
	return 0;
}

int posix_trace_get_attr(trace_id_t trid, trace_attr_t *attr)
{
	if (!attr)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_attr a;
	memcpy(&a, &pt_hdr(&h->map)->attr, sizeof a);
	pt_handle_put(h);
	a.magic = PT_ATTR_MAGIC;
	a.name[TRACE_NAME_MAX - 1] = '\0';
	a.genversion[TRACE_NAME_MAX - 1] = '\0';
	memset(attr, 0, sizeof *attr);
	memcpy(attr, &a, sizeof a);
	return 0;
}

int posix_trace_get_filter(trace_id_t trid, trace_event_set_t *set)
{
	if (!set)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	filter_snapshot(pt_hdr(&h->map), set);
	pt_handle_put(h);
	return 0;
}

int posix_trace_set_filter(trace_id_t trid, const trace_event_set_t *set, int how)
{
	uintptr_t pc = (uintptr_t)__builtin_return_address(0);
	if (!set || (how != POSIX_TRACE_SET_EVENTSET && how != POSIX_TRACE_ADD_EVENTSET &&
	             how != POSIX_TRACE_SUB_EVENTSET))
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	trace_event_set_t change[2]; /* old, new: the data of POSIX_TRACE_FILTER */
	filter_snapshot(hdr, &change[0]);
	for (unsigned i = 0; i < PT_NEVENT_IDS / 64; i++) {
		uint64_t w = change[0].__bits[i], s = set->__bits[i];
		w = how == POSIX_TRACE_SET_EVENTSET ? s : how == POSIX_TRACE_ADD_EVENTSET ? (w | s) : (w & ~s);
		change[1].__bits[i] = w;
		atomic_store_explicit(&hdr->filter[i], w, memory_order_relaxed);
	}
	if (atomic_load_explicit(&hdr->state, memory_order_acquire) == PT_ST_RUNNING)
		pt_write_event(h->slot, POSIX_TRACE_FILTER, change, sizeof change, pt_now_ns(), pc, 0);
	pt_handle_put(h);
	return 0;
}

int posix_trace_trid_eventid_open(trace_id_t trid, const char *restrict name,
                                  trace_event_id_t *restrict id)
{
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	pt_handle_put(h);
	/* One registry per traced process: the ids agree with the target's
	 * own posix_trace_eventid_open(). */
	return pt_register_name(name, id);
}

int posix_trace_eventid_get_name(trace_id_t trid, trace_event_id_t id, char *name)
{
	if (!name)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	int err = pt_stream_get_name(&h->map, id, name);
	pt_handle_put(h);
	return err;
}

int posix_trace_eventid_equal(trace_id_t trid, trace_event_id_t a, trace_event_id_t b)
{
	(void)trid;
	return a == b;
}

/* The list: system events, the unnamed user event, then the names the
 * stream knows, in id order. */
static trace_event_id_t typelist_id(uint32_t pos)
{
	if (pos < PT_SYS_LAST)
		return PT_SYS_FIRST + pos;
	if (pos == PT_SYS_LAST)
		return POSIX_TRACE_UNNAMED_USEREVENT;
	return PT_USER_FIRST + 1 + (pos - PT_SYS_LAST - 1);
}

int posix_trace_eventtypelist_getnext_id(trace_id_t trid, trace_event_id_t *restrict id,
                                         int *restrict unavailable)
{
	if (!id || !unavailable)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	struct pt_stream_hdr *hdr = pt_hdr(&h->map);
	*unavailable = 1;
	for (;;) {
		trace_event_id_t cand = typelist_id(h->typelist_pos);
		if (cand >= PT_NEVENT_IDS)
			break;
		/* Names are registered in id order: the first unknown id ends
		 * the list for now, and a name registered later comes next. */
		if (cand > PT_USER_FIRST &&
		    !atomic_load_explicit(&hdr->name_valid[cand - PT_USER_FIRST], memory_order_acquire))
			break;
		h->typelist_pos++;
		*id = cand;
		*unavailable = 0;
		break;
	}
	pt_handle_put(h);
	return 0;
}

int posix_trace_eventtypelist_rewind(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid);
	if (!h)
		return EINVAL;
	h->typelist_pos = 0;
	pt_handle_put(h);
	return 0;
}
