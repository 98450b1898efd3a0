/* SPDX-License-Identifier: MIT */
/*
 * The library's memfds among a process's descriptors (procfd.h): one walk
 * of /proc/PID/fd for the load-time adoption (adopt.c), the reach of a
 * target (remote.c) and the list of traceable processes (ext.c).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "procfd.h"

#define MEMFD_PREFIX "/memfd:posixtrace-"

static enum pt_memfd_kind kind_of(const char *link)
{
	const char *name = link + sizeof MEMFD_PREFIX - 1;
	if (strncmp(link, MEMFD_PREFIX, sizeof MEMFD_PREFIX - 1) != 0)
		return 0;
	return strncmp(name, "pcb", 3) == 0       ? PT_MEMFD_PCB
	       : strncmp(name, "names", 5) == 0   ? PT_MEMFD_NAMES
	       : strncmp(name, "stream", 6) == 0  ? PT_MEMFD_STREAM
	                                          : 0;
}

int pt_each_memfd(pid_t pid, int (*fn)(int fd, enum pt_memfd_kind kind, void *arg), void *arg)
{
	char dir[64], path[384], link[128];
	if (pid)
		snprintf(dir, sizeof dir, "/proc/%d/fd", (int)pid);
	else
		snprintf(dir, sizeof dir, "/proc/self/fd");
	DIR *d = opendir(dir);
	if (!d)
		return errno == ENOENT || errno == ESRCH ? ENOENT : EPERM;
	int own = pid ? -1 : dirfd(d), stop = 0;
	struct dirent *e;
	while (!stop && (e = readdir(d))) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		int fd = atoi(e->d_name);
		if (fd == own)
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		enum pt_memfd_kind kind = kind_of(link);
		if (kind)
			stop = fn(fd, kind, arg);
	}
	closedir(d);
	return 0;
}
