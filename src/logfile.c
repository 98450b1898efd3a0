/* SPDX-License-Identifier: MIT */
/*
 * Pre-recorded streams (logfile.h): a trace stream identifier over the log
 * reader (logread.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "attr.h"
#include "handle.h"
#include "lifecycle.h"
#include "logfile.h"
#include "log/log.h"
#include "registry.h"
#include "sysnames.h"

static struct pt_logr *reader(struct pt_handle *h) { return h->log->r; }
static void pt_logfile_free(struct pt_handle *h);

int posix_trace_open(int fd, trace_id_t *trid)
{
	pt_init();
	if (!trid)
		return EINVAL;
	struct pt_logfile *lf = calloc(1, sizeof *lf);
	if (!lf)
		return ENOMEM;
	int err = pt_logr_open(fd, &lf->r);
	if (err) {
		free(lf);
		return err == ENOMEM ? ENOMEM : EINVAL;
	}
	struct pt_handle *h = pt_handle_alloc();
	if (!h) {
		pt_logr_close(lf->r);
		free(lf);
		return EAGAIN;
	}
	h->kind = PT_H_LOG;
	h->log = lf;
	h->drop_log = pt_logfile_free;
	*trid = pt_handle_publish(h);
	return 0;
}

int posix_trace_rewind(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	pt_logr_rewind(reader(h));
	pt_handle_put(h);
	return 0;
}

static void pt_logfile_free(struct pt_handle *h)
{
	if (h->log) {
		pt_logr_close(h->log->r);
		free(h->log);
	}
	h->log = NULL;
}

int posix_trace_close(trace_id_t trid)
{
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	pt_logfile_free(h);
	pt_handle_release(h);
	pt_handle_put(h);
	return 0;
}

int pt_logfile_name(struct pt_handle *h, trace_event_id_t id, char *out)
{
	const char *sys = pt_system_event_name(id);
	if (sys) {
		strcpy(out, sys);
		return 0;
	}
	return pt_logr_name(reader(h), id, out);
}

int pt_logfile_typelist(struct pt_handle *h, trace_event_id_t *id)
{
	char name[PT_NAME_SIZE];
	for (;;) {
		trace_event_id_t cand = pt_typelist_id(h->typelist_pos);
		if (cand >= PT_NEVENT_IDS)
			return 0;
		h->typelist_pos++;
		if (cand <= PT_USER_FIRST || pt_logr_name(reader(h), cand, name) == 0) {
			*id = cand;
			return 1;
		}
	}
}

void pt_logfile_attr(struct pt_handle *h, trace_attr_t *attr)
{
	struct pt_logw_params p;
	struct pt_attr a;
	pt_logr_params(reader(h), &p);
	pt_attr_defaults(&a);
	memcpy(a.name, p.trace_name, TRACE_NAME_MAX);
	memcpy(a.genversion, p.genversion, TRACE_NAME_MAX);
	a.name[TRACE_NAME_MAX - 1] = a.genversion[TRACE_NAME_MAX - 1] = '\0';
	a.clockres_sec = (int64_t)(p.clockres_ns / 1000000000u);
	a.clockres_nsec = (int64_t)(p.clockres_ns % 1000000000u);
	a.create_sec = p.create_sec;
	a.create_nsec = p.create_nsec;
	a.stream_size = p.stream_size;
	a.max_data_size = p.max_data_size;
	a.log_size = p.log_size;
	a.stream_policy = p.stream_policy;
	a.stream_policy_set = 1;
	a.log_policy = p.log_policy;
	a.inheritance = p.inheritance;
	memset(attr, 0, sizeof *attr);
	memcpy(attr, &a, sizeof a);
}

void pt_logfile_status(struct pt_handle *h, struct posix_trace_status_info *st)
{
	struct pt_log_status s;
	pt_logr_status(reader(h), &s);
	st->posix_stream_status = s.stream_status == POSIX_TRACE_RUNNING ? POSIX_TRACE_RUNNING
	                                                                   : POSIX_TRACE_SUSPENDED;
	st->posix_stream_full_status = s.stream_full == POSIX_TRACE_FULL ? POSIX_TRACE_FULL
	                                                                  : POSIX_TRACE_NOT_FULL;
	st->posix_stream_overrun_status = s.stream_overrun == POSIX_TRACE_OVERRUN
	                                      ? POSIX_TRACE_OVERRUN
	                                      : POSIX_TRACE_NO_OVERRUN;
	st->posix_stream_flush_status = POSIX_TRACE_NOT_FLUSHING;
	st->posix_stream_flush_error = s.flush_error > 0 && s.flush_error < 4096 ? s.flush_error : 0;
	st->posix_log_overrun_status = s.log_overrun == POSIX_TRACE_OVERRUN ? POSIX_TRACE_OVERRUN
	                                                                     : POSIX_TRACE_NO_OVERRUN;
	st->posix_log_full_status = s.log_full == POSIX_TRACE_FULL ? POSIX_TRACE_FULL
	                                                            : POSIX_TRACE_NOT_FULL;
	st->posixtrace_lost_events = s.lost_events;
}

void pt_logfile_block_info(struct pt_handle *h, struct posixtrace_block_stats *info)
{
	struct pt_log_waits w;
	pt_logr_waits(reader(h), &w);
	info->posixtrace_waited_events = w.waited_events;
	info->posixtrace_waited_ns = w.waited_ns;
	info->posixtrace_waited_lost = w.waited_lost;
}

void pt_logfile_info(struct pt_handle *h, struct posixtrace_log_info *info)
{
	pt_logr_info(reader(h), &info->posixtrace_version, &info->posixtrace_closed,
	             &info->posixtrace_damaged_blocks);
	info->posixtrace_images = pt_logr_images(reader(h));
	info->posixtrace_images_dropped = pt_logr_images_dropped(reader(h));
	struct pt_log_status st;
	pt_logr_status(reader(h), &st);
	info->posixtrace_triggers_suppressed = st.triggers_suppressed;
}

static void host_out(const struct pt_log_host *in, uint64_t create_mono,
                     struct posixtrace_host *out)
{
	_Static_assert(sizeof out->posixtrace_host_name <= sizeof in->name, "names fit");
	memset(out, 0, sizeof *out);
	memcpy(out->posixtrace_host_name, in->name, sizeof out->posixtrace_host_name - 1);
	out->posixtrace_machine_known = (in->flags & PT_LOG_HOST_MACHINE) != 0;
	if (out->posixtrace_machine_known)
		memcpy(out->posixtrace_machine_id, in->machine, sizeof in->machine);
	out->posixtrace_boot_known = (in->flags & PT_LOG_HOST_BOOT) != 0;
	if (out->posixtrace_boot_known)
		memcpy(out->posixtrace_boot_id, in->boot, sizeof in->boot);
	out->posixtrace_create_monotonic_ns = create_mono;
	out->posixtrace_anchor_realtime_ns = in->anchor_real_ns;
	out->posixtrace_anchor_monotonic_ns = in->anchor_mono_ns;
	out->posixtrace_anchor_gap_ns = in->anchor_gap_ns;
	out->posixtrace_clock_known = (in->flags & PT_LOG_HOST_CLOCK) != 0;
	if (out->posixtrace_clock_known) {
		out->posixtrace_clock_unsynchronised = (in->flags & PT_LOG_HOST_UNSYNC) != 0;
		out->posixtrace_maxerror_us = in->maxerror_us;
		out->posixtrace_esterror_us = in->esterror_us;
	}
}

int pt_logfile_host(struct pt_handle *h, struct posixtrace_host *host)
{
	struct pt_log_host in;
	uint64_t create_mono;
	int err = pt_logr_host(reader(h), &in, &create_mono);
	if (!err)
		host_out(&in, create_mono, host);
	return err;
}

void pt_host_self(struct posixtrace_host *host)
{
	struct pt_log_host in;
	pt_log_host_take(&in);
	host_out(&in, 0, host);
}

int pt_logfile_image(struct pt_handle *h, const struct posix_trace_event_info *ev,
                     struct posixtrace_image *image)
{
	uint64_t ns = (uint64_t)ev->posix_timestamp.tv_sec * 1000000000u +
	              (uint64_t)ev->posix_timestamp.tv_nsec;
	return pt_logr_image(reader(h), ev->posix_pid, (uint64_t)(uintptr_t)ev->posix_prog_address,
	                     ns, image);
}
