/* SPDX-License-Identifier: MIT */
/*
 * The test harness's helpers that call the trace API (declared in
 * tests/harness.h): streams, events read back, writer and reader threads.
 * Kept apart from tests/harness.c so that a test built without the library
 * (t_logformat) links the rest of the harness alone.
 */
#include "harness.h"

trace_event_id_t pt_event_id(const char *name)
{
	trace_event_id_t id = 0;
	ck_assert_ok(posix_trace_eventid_open(name, &id));
	return id;
}

trace_id_t pt_create_default(void)
{
	trace_id_t trid;
	ck_assert_ok(posix_trace_create(0, NULL, &trid));
	return trid;
}

trace_id_t pt_create_started(void)
{
	trace_id_t trid = pt_create_default();
	ck_assert_ok(posix_trace_start(trid));
	return trid;
}

trace_id_t pt_create(pid_t pid, struct pt_attrs a)
{
	trace_attr_t attr;
	trace_id_t trid;
	ck_assert_ok(posix_trace_attr_init(&attr));
	if (a.policy)
		ck_assert_ok(posix_trace_attr_setstreamfullpolicy(&attr, a.policy));
	if (a.size)
		ck_assert_ok(posix_trace_attr_setstreamsize(&attr, a.size));
	if (a.max_data)
		ck_assert_ok(posix_trace_attr_setmaxdatasize(&attr, a.max_data));
	ck_assert_ok(posix_trace_create(pid, &attr, &trid));
	ck_assert_ok(posix_trace_attr_destroy(&attr));
	return trid;
}

struct posix_trace_status_info pt_status(trace_id_t trid)
{
	struct posix_trace_status_info st;
	memset(&st, 0xa5, sizeof st);
	ck_assert_ok(posix_trace_get_status(trid, &st));
	return st;
}

int pt_name_is(trace_id_t trid, trace_event_id_t id, const char *name)
{
	char buf[TRACE_EVENT_NAME_MAX + 1];
	return posix_trace_eventid_get_name(trid, id, buf) == 0 && strcmp(buf, name) == 0;
}

int pt_try_event(trace_id_t trid, struct posix_trace_event_info *info, void *data,
                 size_t room, size_t *len)
{
	int unavailable = -1;
	ck_assert_ok(posix_trace_trygetnext_event(trid, info, data, room, len, &unavailable));
	return !unavailable;
}

/* The members of the event at `at`, laid out as `layout` says. */
static int try_event_at(trace_id_t trid, unsigned char *at, struct pt_ev_layout layout)
{
	return pt_try_event(trid, (struct posix_trace_event_info *)at, at + layout.data_offset,
	                    layout.data_room, (size_t *)(at + layout.len_offset));
}

static int is_user_at(const unsigned char *at)
{
	const struct posix_trace_event_info *info = (const void *)at;
	return info->posix_event_id >= POSIX_TRACE_UNNAMED_USEREVENT;
}

int pt_drain_into_layout(trace_id_t trid, void *out, int max, int user_only,
                         struct pt_ev_layout layout)
{
	unsigned char *e = malloc(layout.size);
	int n = 0;
	ck_assert_ptr_nonnull(e);
	for (int all = 0; try_event_at(trid, e, layout); all++) {
		ck_assert_msg(all < PT_DRAIN_LIMIT, "the stream never runs empty");
		if (user_only && !is_user_at(e))
			continue;
		ck_assert_msg(n < max, "more than %d events to keep", max);
		memcpy((unsigned char *)out + (size_t)n++ * layout.size, e, layout.size);
	}
	free(e);
	return n;
}

void *pt_drain_all_layout(trace_id_t trid, size_t *n, struct pt_ev_layout layout)
{
	size_t cap = 256;
	unsigned char *out = malloc(cap * layout.size);
	ck_assert_ptr_nonnull(out);
	for (*n = 0;; ++*n) {
		ck_assert_msg(*n <= PT_DRAIN_LIMIT, "the stream never runs empty");
		if (*n == cap) {
			cap *= 2;
			out = realloc(out, cap * layout.size);
			ck_assert_ptr_nonnull(out);
		}
		if (!try_event_at(trid, out + *n * layout.size, layout))
			return out;
	}
}

uint32_t pt_data_u32(const void *data, size_t len)
{
	uint32_t v;
	ck_assert_uint_eq(len, sizeof v);
	memcpy(&v, data, sizeof v);
	return v;
}

void *pt_writer_main(void *p)
{
	struct pt_writer *w = p;
	pthread_barrier_wait(w->go);
	for (uint32_t i = 0; i < w->count; i++)
		w->post(w->id, w->thread, i);
	return NULL;
}

void pt_run_writers(struct pt_writer *w, uint32_t n)
{
	pthread_barrier_t go;
	pthread_barrier_init(&go, NULL, n);
	for (uint32_t i = 0; i < n; i++) {
		w[i].go = &go;
		ck_assert_int_eq(pthread_create(&w[i].self, NULL, pt_writer_main, &w[i]), 0);
	}
	for (uint32_t i = 0; i < n; i++)
		pthread_join(w[i].self, NULL);
	pthread_barrier_destroy(&go);
}

void *pt_blocked_reader_main(void *p)
{
	struct pt_blocked_reader *b = p;
	struct posix_trace_event_info info;
	unsigned char data[64];
	size_t len;
	int unavailable;
	struct timespec abstime = pt_in_ms(10000);
	if (b->timed)
		b->rc = posix_trace_timedgetnext_event(b->trid, &info, data, sizeof data, &len,
		                                       &unavailable, &abstime);
	else
		b->rc = posix_trace_getnext_event(b->trid, &info, data, sizeof data, &len,
		                                  &unavailable);
	atomic_store(&b->done, 1);
	return NULL;
}
