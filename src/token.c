/* SPDX-License-Identifier: MIT */
/*
 * Descriptors that leave a process are tokens (token.h).  The check that
 * makes them safe is the kernel's: opening /proc/self/fd/N of an O_PATH
 * descriptor is a new open of the file, with the permission check of the
 * opener's credentials against the file's owner and mode, so no rule of
 * ours decides who may use a descriptor that reached it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "layout.h"
#include "token.h"

#define MEMFD_PREFIX "/memfd:posixtrace-"

static void fd_path(char *buf, size_t len, int fd)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

int pt_token_make(int fd, int across_exec)
{
	char path[48];
	fd_path(path, sizeof path, fd);
	int t = open(path, O_PATH | O_CLOEXEC);
	if (t < 0)
		return errno;
	int err = dup3(t, fd, across_exec ? 0 : O_CLOEXEC) < 0 ? errno : 0;
	close(t);
	return err;
}

/* Whether fd is a regular file that /proc names as one of the library's
 * memfds: a name is only a hint, but it keeps the opening below from
 * reaching devices and FIFOs a sender could hand over. */
static int is_library_memfd(int fd)
{
	char path[48], link[sizeof MEMFD_PREFIX + 32];
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
		return 0;
	fd_path(path, sizeof path, fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	return n >= (ssize_t)sizeof MEMFD_PREFIX - 1 &&
	       memcmp(link, MEMFD_PREFIX, sizeof MEMFD_PREFIX - 1) == 0;
}

int pt_token_open(int fd)
{
	char path[48];
	if (fd < 0 || !is_library_memfd(fd)) {
		errno = EINVAL;
		return -1;
	}
	fd_path(path, sizeof path, fd);
	return open(path, O_RDWR | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
}

int pt_token_map_sealed(int fd, size_t size, void **out)
{
	int rw = pt_token_open(fd);
	if (rw < 0)
		return errno == EACCES || errno == EPERM ? EACCES : EINVAL;
	struct stat st;
	int seals = fcntl(rw, F_GET_SEALS), err = 0;
	void *p = MAP_FAILED;
	if (fstat(rw, &st) != 0 || !S_ISREG(st.st_mode) || seals < 0 ||
	    (seals & PT_SEALS_REQUIRED) != PT_SEALS_REQUIRED || st.st_size != (off_t)size)
		err = EINVAL;
	else if ((p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, rw, 0)) == MAP_FAILED)
		err = ENOMEM;
	close(rw);
	if (!err)
		*out = p;
	return err;
}
