/* SPDX-License-Identifier: MIT */
/*
 * The extensions of <posixtrace.h>: what an event carries beyond
 * struct posix_trace_event_info, what a log says about itself, and which
 * processes can be traced.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "handle.h"
#include "lifecycle.h"
#include "logfile.h"
#include "log/log.h"
#include "procfd.h"
#include "registry.h"
#include "remote.h"

/* The caller holds the handle (its lock or its bias). */
static int copy_ext(const struct pt_handle *h, struct posixtrace_event_ext *ext)
{
	if (h->kind == PT_H_LOG)
		return pt_logr_event_ext(h->log->r, ext);
	if (!h->has_ext)
		return EINVAL;
	*ext = h->ext;
	return 0;
}

int posixtrace_event_ext(trace_id_t trid, struct posixtrace_event_ext *ext)
{
	if (!ext)
		return EINVAL;
	/* The thread that reads the handle alone asks without the lock: the
	 * extension is its own (getnext.c, biased_next).  A biased handle is
	 * valid and of either kind this function accepts. */
	struct pt_thread *t = pt_thread_peek();
	struct pt_handle *h = pt_handle_enter_biased(trid, t);
	if (h) {
		int err = copy_ext(h, ext);
		pt_handle_leave_biased(t);
		return err;
	}
	h = pt_handle_get(trid, PT_H_ACTIVE | PT_H_LOG);
	if (!h)
		return EINVAL;
	int err = copy_ext(h, ext);
	pt_handle_put(h);
	return err;
}

int posixtrace_log_info(trace_id_t trid, struct posixtrace_log_info *info)
{
	if (!info)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	memset(info, 0, sizeof *info);
	pt_logfile_info(h, info);
	pt_handle_put(h);
	return 0;
}

int posixtrace_log_host(trace_id_t trid, struct posixtrace_host *host)
{
	if (!host)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_LOG);
	if (!h)
		return EINVAL;
	int err = pt_logfile_host(h, host);
	pt_handle_put(h);
	return err;
}

int posixtrace_host_self(struct posixtrace_host *host)
{
	if (!host)
		return EINVAL;
	pt_host_self(host);
	return 0;
}

int posixtrace_rendezvous_info(trace_id_t trid, struct posixtrace_rendezvous_info *info)
{
	if (!info)
		return EINVAL;
	struct pt_handle *h = pt_handle_get(trid, PT_H_ACTIVE);
	if (!h)
		return EINVAL;
	int err = h->rdv.fd >= 0 && h->rdv.dir[0] ? 0 : ENOENT;
	memset(info, 0, sizeof *info);
	_Static_assert(sizeof info->posixtrace_dir == PT_RDV_DIR_MAX, "the path fits");
	if (!err) {
		memcpy(info->posixtrace_dir, h->rdv.dir, sizeof info->posixtrace_dir);
		/* Counts only: relaxed. */
		info->posixtrace_joined = atomic_load_explicit(&h->src.ctl->rdv.joined, memory_order_relaxed);
		info->posixtrace_refused = atomic_load_explicit(&h->src.ctl->rdv.refused, memory_order_relaxed);
		info->posixtrace_other_users =
		    atomic_load_explicit(&h->src.ctl->rdv.other_users, memory_order_relaxed);
		/* Written by traced processes: a count to report, nothing more. */
		info->posixtrace_short_maps =
		    atomic_load_explicit(&pt_hdr(&h->src.map)->short_maps, memory_order_relaxed);
		info->posixtrace_others_unchecked =
		    atomic_load_explicit(&h->src.ctl->rdv.others_unchecked, memory_order_relaxed);
	}
	pt_handle_put(h);
	return err;
}

static int is_block(int fd, enum pt_memfd_kind kind, void *found)
{
	(void)fd;
	*(int *)found = kind == PT_MEMFD_PCB;
	return *(int *)found;
}

/* Whether pid has loaded the library: its fd table shows a control block
 * (reading it needs the same permission as tracing it). */
static int instrumented(pid_t pid)
{
	int found = 0;
	pt_each_memfd(pid, is_block, &found);
	return found;
}

int posixtrace_list_processes(pid_t *pids, size_t max, size_t *count)
{
	if (!count || (!pids && max))
		return EINVAL;
	pt_init();
	DIR *d = opendir("/proc");
	if (!d)
		return ENOMEM;
	struct dirent *e;
	size_t n = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		pid_t pid = (pid_t)atoi(e->d_name);
		struct pt_remote r;
		if (pid == pt_proc.pid || !instrumented(pid) || pt_remote_open(pid, &r) != 0)
			continue;
		pt_remote_close(&r);
		if (n < max)
			pids[n] = pid;
		n++;
	}
	closedir(d);
	*count = n;
	return 0;
}

int posixtrace_process_eventtypes(pid_t pid,
                                  int (*fn)(trace_event_id_t id, const char *name, void *arg),
                                  void *arg)
{
	if (!fn)
		return EINVAL;
	pt_init();
	struct pt_remote r;
	int err = pt_remote_open(pid, &r);
	if (!err)
		err = pt_remote_reach(&r);
	if (!err && !r.reg)
		err = ENOENT;
	char name[PT_NAME_SIZE];
	uint32_t n = err ? 0 : pt_reg_count(r.reg);
	for (uint32_t i = 1; i < n; i++)
		if (pt_reg_name(r.reg, PT_USER_FIRST + i, name) == 0 && fn(PT_USER_FIRST + i, name, arg))
			break;
	pt_remote_close(&r);
	return err;
}
