/* SPDX-License-Identifier: MIT */
/*
 * The process control block (layout.h): made by every process when it loads
 * the library, as a sealed memfd kept across exec, so that the same process
 * finds it again after an exec and a controller that may trace it (the
 * kernel checks that, pidfd_getfd) can arm it.  Nothing is ever looked up by
 * a name on a file system.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "memcheck.h"
#include "pcb.h"
#include "pidmap.h"
#include "process.h"
#include "token.h"

/* A shared mapping in a new sealed memfd of mode 0600, whose descriptor is
 * a token that an exec keeps (token.h), or private memory when that fails,
 * and then nobody else can reach it.  A memfd larger than the process's
 * file size limit is not attempted: sizing it would raise SIGXFSZ in a
 * program that only registered an event name. */
void *pt_sealed_object(const char *name, size_t size, int *fd_out)
{
	void *p = MAP_FAILED;
	int fd = size <= pt_file_room() ? memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING) : -1;
	if (fd >= 0 && fchmod(fd, PT_MEMFD_MODE) == 0 && ftruncate(fd, (off_t)size) == 0 &&
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) == 0)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED && pt_token_make(fd, 1) != 0) {
		munmap(p, size);
		p = MAP_FAILED;
	}
	if (p == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		fd = -1;
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	*fd_out = fd;
	return p == MAP_FAILED ? NULL : p;
}

/* Whether fd is still the file whose inode a block recorded. */
int pt_fd_is(int fd, uint64_t ino)
{
	struct stat st;
	return fd >= 0 && fstat(fd, &st) == 0 && (uint64_t)st.st_ino == ino;
}

static struct pt_fdref fdref(int fd)
{
	struct stat st;
	struct pt_fdref r = {.fd = -1};
	if (fd >= 0 && fstat(fd, &st) == 0) {
		r.fd = fd;
		r.ino = (uint64_t)st.st_ino;
	}
	return r;
}

void pt_pcb_init_own(struct pt_pcb *pcb)
{
	pcb->magic = PT_PCB_MAGIC;
	pcb->version = PT_LAYOUT_VERSION;
	pcb->size = sizeof *pcb;
	pcb->pid = pt_proc.pid;
	pcb->starttime = pt_proc.starttime;
	pcb->channel_rx = fdref(pt_proc.chan_rx);
	pcb->channel_tx = fdref(pt_proc.chan_tx);
	pcb->registry = fdref(pt_proc.reg_fd);
}

/* This process's block, new. */
int pt_pcb_create(void)
{
	int fd;
	struct pt_pcb *pcb = pt_sealed_object("posixtrace-pcb", sizeof *pcb, &fd);
	if (!pcb)
		return ENOMEM;
	pt_set_pcb(pcb);
	pt_proc.pcb_fd = fd;
	pt_pcb_init_own(pcb);
	for (int i = 0; i < PT_PCB_SLOTS; i++)
		pcb->slots[i].fd = -1;
	return 0;
}

/* The number process pid has in its own pid namespace, the innermost (the
 * last field of NSpid: in /proc/PID/status): the pid it wrote in its block.
 * pid itself where the kernel shows no NSpid. */
pid_t pt_pid_in_own_ns(pid_t pid)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
	return pt_nspid_last(path, pid);
}

int pt_pcb_validate(const struct pt_pcb *pcb, pid_t pid, uint64_t starttime)
{
	return pcb->magic == PT_PCB_MAGIC && pcb->version == PT_LAYOUT_VERSION &&
	       pcb->size == sizeof *pcb && pcb->pid == pid && pcb->starttime == starttime;
}

/* Maps a block from a descriptor (a token) only when this process may open
 * its file and its size can no longer change. */
int pt_pcb_map_fd(int fd, struct pt_pcb **out)
{
	void *p;
	int err = pt_token_map_sealed(fd, sizeof **out, &p);
	if (!err)
		*out = p;
	return err;
}
