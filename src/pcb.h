/* SPDX-License-Identifier: MIT */
/*
 * The process control block (pcb.c): this process's own, another's
 * mapped and checked, and the sealed objects every shared block is made
 * of.
 */
#ifndef PT_PCB_H
#define PT_PCB_H

#include "process.h"

int pt_pcb_create(void);
void pt_pcb_init_own(struct pt_pcb *pcb);
/* pid (of the caller's pid namespace) as this process's namespace sees it. */
pid_t pt_pid_in_own_ns(pid_t pid);
int pt_pcb_validate(const struct pt_pcb *pcb, pid_t pid, uint64_t starttime);
/* Maps a block after checking its seals and size. */
int pt_pcb_map_fd(int fd, struct pt_pcb **out);
void *pt_sealed_object(const char *name, size_t size, int *fd_out);
/* Whether fd is open on the inode ino. */
int pt_fd_is(int fd, uint64_t ino);

#endif
