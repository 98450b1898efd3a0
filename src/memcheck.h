/* SPDX-License-Identifier: MIT */
/*
 * What this process may still commit (memcheck.c): memory under its cgroup's
 * limit and what the system has, address space, file size; and the small
 * /proc and /sys files those come from.
 */
#ifndef PT_MEMCHECK_H
#define PT_MEMCHECK_H

#include <stdint.h>
#include <sys/types.h>

/* Memory this process may still use: 0 when `bytes` more fit
 * under its memory cgroup's limit, the available memory and RLIMIT_AS. */
int pt_mem_headroom(uint64_t bytes, uint64_t address_space);
uint64_t pt_as_room(void);
uint64_t pt_file_room(void);
/* The start of a small text file (/proc, /sys), NUL-terminated: the bytes
 * read, or -1. */
ssize_t pt_read_text(const char *path, char *buf, size_t size);

#endif
