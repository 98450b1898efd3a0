/* SPDX-License-Identifier: MIT */
/*
 * The files of a rotated log and the images repeated at their start
 * (rotate.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "rotate.h"

static void pt_rot_name(char name[PT_ROT_NAME_SIZE], uint64_t n)
{
	snprintf(name, PT_ROT_NAME_SIZE, "%0*llu.ptlog", PT_ROT_DIGITS, (unsigned long long)n);
}

int pt_rot_create(int dir, uint64_t n, mode_t mode, uint64_t *dev, uint64_t *ino, int *err)
{
	char name[PT_ROT_NAME_SIZE];
	struct stat st;
	if (n == 0 || n > PT_ROT_MAX_FILE) {
		*err = EFBIG;
		return -1;
	}
	pt_rot_name(name, n);
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	/* The mode exactly, whatever the umask of the process creating it. */
	if (fchmod(fd, mode) != 0 || fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		(void)unlinkat(dir, name, 0);
		return -1;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return fd;
}

int pt_rot_reopen(int dir, uint64_t n, uint64_t dev, uint64_t ino)
{
	char name[PT_ROT_NAME_SIZE];
	struct stat st;
	if (n == 0 || n > PT_ROT_MAX_FILE)
		return -1;
	pt_rot_name(name, n);
	int fd = openat(dir, name, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_dev != dev ||
	    (uint64_t)st.st_ino != ino) {
		close(fd);
		return -1;
	}
	return fd;
}

int pt_rot_remove(int dir, uint64_t n)
{
	char name[PT_ROT_NAME_SIZE];
	pt_rot_name(name, n);
	return unlinkat(dir, name, 0) == 0 || errno == ENOENT ? 0 : errno;
}

static void forget(struct pt_rot_images *t, uint32_t i)
{
	free(t->v[i].path);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof t->v[0]);
	t->n--;
}

int pt_rot_images_keep(struct pt_rot_images *t, const struct pt_log_image *e, const char *path,
                       uint32_t uid)
{
	for (uint32_t i = 0; i < t->n;)
		if (t->v[i].e.pid == e->pid && t->v[i].e.set != e->set)
			forget(t, i);
		else
			i++;
	if (!t->v && !(t->v = calloc(PT_ROT_IMAGES_MAX, sizeof t->v[0])))
		return ENOMEM;
	if (t->n == PT_ROT_IMAGES_MAX) {
		forget(t, 0);
		t->forgotten++;
	}
	char *copy = malloc(e->path_len + 1u);
	if (!copy)
		return ENOMEM;
	memcpy(copy, path, e->path_len);
	copy[e->path_len] = '\0';
	t->v[t->n++] = (struct pt_rot_image){*e, uid, copy};
	return 0;
}

/* A pid of the keeper's own namespace (the log's events name them so). */
static int process_gone(int32_t pid)
{
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

void pt_rot_images_each(struct pt_rot_images *t,
                        void (*fn)(const struct pt_rot_image *im, void *arg), void *arg)
{
	for (uint32_t i = 0; i < t->n;)
		if (process_gone(t->v[i].e.pid))
			forget(t, i);
		else
			fn(&t->v[i++], arg);
}
