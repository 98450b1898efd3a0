/* SPDX-License-Identifier: MIT */
/* Trace stream attributes objects (posix_trace_attr_*). */
#include <string.h>
#include <time.h>
#include <errno.h>
#include "attr.h"
#include "layout.h"
#include "log/log.h"

static struct pt_attr *attr_rw(trace_attr_t *attr)
{
	struct pt_attr *a = (struct pt_attr *)(void *)attr;
	return (a && a->magic == PT_ATTR_MAGIC) ? a : NULL;
}

static const struct pt_attr *attr_ro(const trace_attr_t *attr)
{
	const struct pt_attr *a = (const struct pt_attr *)(const void *)attr;
	return (a && a->magic == PT_ATTR_MAGIC) ? a : NULL;
}

int pt_attr_valid(const trace_attr_t *attr) { return attr_ro(attr) != NULL; }


static void copy_name(char *dst, const char *src)
{
	size_t n = strnlen(src, TRACE_NAME_MAX - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

void pt_attr_defaults(struct pt_attr *a)
{
	struct timespec res = {0, 1};
	memset(a, 0, sizeof *a);
	a->magic = PT_ATTR_MAGIC;
	a->stream_policy = POSIX_TRACE_LOOP;
	a->log_policy = POSIX_TRACE_LOOP;
	a->inheritance = POSIX_TRACE_CLOSE_FOR_CHILD;
	a->stream_size = PT_DEFAULT_STREAM_SIZE;
	a->max_data_size = PT_DEFAULT_MAX_DATA;
	a->log_size = PT_DEFAULT_LOG_SIZE;
	clock_getres(CLOCK_MONOTONIC, &res);
	a->clockres_sec = res.tv_sec;
	a->clockres_nsec = res.tv_nsec;
	copy_name(a->genversion, PT_GENVERSION);
}

int posix_trace_attr_init(trace_attr_t *attr)
{
	if (!attr)
		return EINVAL;
	memset(attr, 0, sizeof *attr);
	pt_attr_defaults((struct pt_attr *)(void *)attr);
	return 0;
}

int posix_trace_attr_destroy(trace_attr_t *attr)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a)
		return EINVAL;
	memset(attr, 0, sizeof *attr);
	return 0;
}

int posix_trace_attr_getclockres(const trace_attr_t *attr, struct timespec *res)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !res)
		return EINVAL;
	res->tv_sec = (time_t)a->clockres_sec;
	res->tv_nsec = (long)a->clockres_nsec;
	return 0;
}

int posix_trace_attr_getcreatetime(const trace_attr_t *attr, struct timespec *t)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !t)
		return EINVAL;
	t->tv_sec = (time_t)a->create_sec;
	t->tv_nsec = (long)a->create_nsec;
	return 0;
}

int posix_trace_attr_getgenversion(const trace_attr_t *attr, char *genversion)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !genversion)
		return EINVAL;
	copy_name(genversion, a->genversion);
	return 0;
}

int posix_trace_attr_getname(const trace_attr_t *attr, char *name)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !name)
		return EINVAL;
	copy_name(name, a->name);
	return 0;
}

int posix_trace_attr_setname(trace_attr_t *attr, const char *name)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || !name)
		return EINVAL;
	copy_name(a->name, name);
	return 0;
}

int posix_trace_attr_getinherited(const trace_attr_t *restrict attr, int *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	*v = a->inheritance;
	return 0;
}

int posix_trace_attr_setinherited(trace_attr_t *attr, int v)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || (v != POSIX_TRACE_INHERITED && v != POSIX_TRACE_CLOSE_FOR_CHILD))
		return EINVAL;
	a->inheritance = v;
	return 0;
}

int posix_trace_attr_getlogfullpolicy(const trace_attr_t *restrict attr, int *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	*v = a->log_policy;
	return 0;
}

int posix_trace_attr_setlogfullpolicy(trace_attr_t *attr, int v)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || (v != POSIX_TRACE_LOOP && v != POSIX_TRACE_UNTIL_FULL && v != POSIX_TRACE_APPEND))
		return EINVAL;
	a->log_policy = v;
	a->log_policy_set = 1;
	return 0;
}

int posix_trace_attr_getstreamfullpolicy(const trace_attr_t *restrict attr, int *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	*v = a->stream_policy;
	return 0;
}

int posix_trace_attr_setstreamfullpolicy(trace_attr_t *attr, int v)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || (v != POSIX_TRACE_LOOP && v != POSIX_TRACE_UNTIL_FULL && v != POSIX_TRACE_FLUSH))
		return EINVAL;
	a->stream_policy = v;
	a->stream_policy_set = 1;
	return 0;
}

int posix_trace_attr_getlogsize(const trace_attr_t *restrict attr, size_t *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	*v = (size_t)a->log_size;
	return 0;
}

/* log-max-size counts events only (logfmt.h).  A documented floor,
 * PT_LOG_MIN_LOG_SIZE, keeps every size accepted useful: 4096 bytes hold
 * an UNTIL_FULL log's START and STOP and 84 events of 32 bytes, or 3 of
 * the default max-data-size; smaller sizes are refused ("may fail",
 * EINVAL) whatever the log policy, since it may be set afterwards. */
int posix_trace_attr_setlogsize(trace_attr_t *attr, size_t v)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || v < PT_LOG_MIN_LOG_SIZE)
		return EINVAL;
	a->log_size = v;
	return 0;
}

int posix_trace_attr_getmaxdatasize(const trace_attr_t *restrict attr, size_t *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	*v = (size_t)a->max_data_size;
	return 0;
}

int posix_trace_attr_setmaxdatasize(trace_attr_t *attr, size_t v)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || v > PT_MAX_DATA_LIMIT)
		return EINVAL;
	a->max_data_size = v;
	return 0;
}

int posix_trace_attr_getmaxsystemeventsize(const trace_attr_t *restrict attr,
                                           size_t *restrict v)
{
	if (!attr_ro(attr) || !v)
		return EINVAL;
	/* The largest system event is POSIX_TRACE_FILTER: two event sets. */
	*v = pt_record_size(2 * sizeof(trace_event_set_t));
	return 0;
}

int posix_trace_attr_getmaxusereventsize(const trace_attr_t *restrict attr, size_t data_len,
                                         size_t *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	if (data_len > a->max_data_size)
		data_len = (size_t)a->max_data_size;
	*v = pt_record_size(data_len);
	return 0;
}

int posix_trace_attr_getstreamsize(const trace_attr_t *restrict attr, size_t *restrict v)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !v)
		return EINVAL;
	*v = (size_t)a->stream_size;
	return 0;
}

int posix_trace_attr_setstreamsize(trace_attr_t *attr, size_t v)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || v == 0)
		return EINVAL;
	a->stream_size = v;
	return 0;
}

int posixtrace_attr_setblocking(trace_attr_t *attr, const struct timespec *timeout)
{
	struct pt_attr *a = attr_rw(attr);
	if (!a || !timeout || timeout->tv_sec < 0 || timeout->tv_nsec < 0 ||
	    timeout->tv_nsec >= 1000000000L ||
	    (uint64_t)timeout->tv_sec > PT_BLOCK_MAX_NS / 1000000000u ||
	    (uint64_t)timeout->tv_sec * 1000000000u + (uint64_t)timeout->tv_nsec > PT_BLOCK_MAX_NS)
		return EINVAL;
	a->block_ns = (uint64_t)timeout->tv_sec * 1000000000u + (uint64_t)timeout->tv_nsec;
	return 0;
}

int posixtrace_attr_getblocking(const trace_attr_t *restrict attr,
                                struct timespec *restrict timeout)
{
	const struct pt_attr *a = attr_ro(attr);
	if (!a || !timeout)
		return EINVAL;
	timeout->tv_sec = (time_t)(a->block_ns / 1000000000u);
	timeout->tv_nsec = (long)(a->block_ns % 1000000000u);
	return 0;
}
