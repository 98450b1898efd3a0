/* SPDX-License-Identifier: MIT */
/*
 * The library's memfds among a process's descriptors (procfd.c), as
 * /proc/PID/fd shows them: a control block ("posixtrace-pcb"), a name
 * registry ("posixtrace-names") or a stream ("posixtrace-stream").  What a
 * name says is a hint only: each user checks the descriptor it gets
 * (seals, size, owner) before it believes it.
 */
#ifndef PT_PROCFD_H
#define PT_PROCFD_H

#include <sys/types.h>

enum pt_memfd_kind { PT_MEMFD_PCB = 'p', PT_MEMFD_NAMES = 'n', PT_MEMFD_STREAM = 's' };

/* Calls fn(fd, kind, arg) for each such descriptor of pid (0: this
 * process), until fn returns non-zero (it keeps what it found in arg);
 * returns 0, or ENOENT / EPERM when the table cannot be read (no such
 * process, not allowed). */
int pt_each_memfd(pid_t pid, int (*fn)(int fd, enum pt_memfd_kind kind, void *arg), void *arg);

#endif
