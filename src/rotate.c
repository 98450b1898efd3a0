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

/* An unnamed file in the directory, when its file system makes them and
 * this process can name it later through /proc/self/fd (the link that
 * names exactly this inode); -1 otherwise. */
static int unnamed_file(int dir, mode_t mode)
{
	char self[32];
	struct stat st, via_proc;
	int fd = openat(dir, ".", O_WRONLY | O_TMPFILE | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	if (fstat(fd, &st) != 0 || stat(self, &via_proc) != 0 || st.st_ino != via_proc.st_ino ||
	    st.st_dev != via_proc.st_dev) {
		close(fd);
		return -1;
	}
	return fd;
}

int pt_rot_create(int dir, uint64_t n, mode_t mode, uint64_t *dev, uint64_t *ino, int *named,
                  int *err)
{
	char name[PT_ROT_NAME_SIZE];
	struct stat st;
	if (n == 0 || n > PT_ROT_MAX_FILE) {
		*err = EFBIG;
		return -1;
	}
	pt_rot_name(name, n);
	/* A name taken is found before the file being written is ended (it
	 * goes on); the link that names the new one refuses it too. */
	if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
		*err = EEXIST;
		return -1;
	}
	if (errno != ENOENT) {
		*err = errno;
		return -1;
	}
	int fd = unnamed_file(dir, mode);
	*named = fd < 0;
	if (fd < 0)
		fd = openat(dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	/* The mode exactly, whatever the umask of the process creating it. */
	if (fchmod(fd, mode) != 0 || fstat(fd, &st) != 0) {
		*err = errno;
		close(fd);
		if (*named)
			(void)unlinkat(dir, name, 0);
		return -1;
	}
	*dev = (uint64_t)st.st_dev;
	*ino = (uint64_t)st.st_ino;
	return fd;
}

int pt_rot_name_file(int dir, uint64_t n, int fd)
{
	char name[PT_ROT_NAME_SIZE], self[32];
	pt_rot_name(name, n);
	snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
	return linkat(AT_FDCWD, self, dir, name, AT_SYMLINK_FOLLOW) == 0 ? 0 : errno;
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

/* A pid of the keeper's own namespace (the log's events name them so). */
static int process_gone(int32_t pid)
{
	return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH;
}

static void forget(struct pt_rot_images *t, uint32_t i)
{
	free(t->v[i].path);
	memmove(&t->v[i], &t->v[i + 1], (t->n - i - 1) * sizeof t->v[0]);
	t->n--;
}

/* The images of the set of image i forgotten. */
static void forget_set(struct pt_rot_images *t, uint32_t i)
{
	int32_t pid = t->v[i].e.pid;
	uint64_t set = t->v[i].e.set;
	for (uint32_t j = 0; j < t->n;)
		if (t->v[j].e.pid == pid && t->v[j].e.set == set) {
			forget(t, j);
			t->forgotten++;
		} else {
			j++;
		}
}

int pt_rot_images_keep(struct pt_rot_images *t, const struct pt_log_image *e, const char *path,
                       uint32_t uid, uint64_t seq)
{
	/* A traced process's claim: what the log refuses is not kept (the
	 * bound of the copy's memory). */
	if (e->path_len > PT_LOG_IMAGE_PATH_MAX || e->build_id_len > sizeof e->build_id)
		return 0;
	for (uint32_t i = 0; i < t->n;) {
		struct pt_rot_image *im = &t->v[i];
		if (im->e.pid != e->pid) {
			i++;
		} else if (im->e.set > e->set) {
			return 0; /* taken after a newer set of its process */
		} else if (im->e.set != e->set) {
			forget(t, i);
		} else if (im->e.index == e->index) {
			im->seq = seq;
			im->gone = 0;
			return 0;
		} else {
			i++;
		}
	}
	if (!t->v && !(t->v = calloc(PT_ROT_IMAGES_MAX, sizeof t->v[0])))
		return ENOMEM;
	if (t->n == PT_ROT_IMAGES_MAX)
		forget_set(t, 0);
	char *copy = malloc(e->path_len + 1u);
	if (!copy)
		return ENOMEM;
	memcpy(copy, path, e->path_len);
	copy[e->path_len] = '\0';
	if (e->pid != t->probed_pid) { /* a set's images come together: one look each */
		t->probed_pid = e->pid;
		t->probed_gone = process_gone(e->pid);
	}
	t->v[t->n++] = (struct pt_rot_image){*e, uid, copy, seq, (uint32_t)t->probed_gone};
	return 0;
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

void pt_rot_images_renew(struct pt_rot_images *t, uint64_t before, uint64_t seq,
                         void (*fn)(const struct pt_rot_image *im, void *arg), void *arg)
{
	int32_t last_pid = 0;
	int last_gone = 0;
	t->probed_pid = 0; /* looked at again in the next drain */
	for (uint32_t i = 0; i < t->n;) {
		struct pt_rot_image *im = &t->v[i];
		if (im->seq >= before) {
			i++;
			continue;
		}
		if (im->e.pid != last_pid) { /* a set's images are side by side: one look each */
			last_pid = im->e.pid;
			last_gone = process_gone(last_pid);
		}
		if (last_gone && im->gone) {
			forget(t, i);
			continue;
		}
		im->gone = last_gone;
		im->seq = seq;
		fn(im, arg);
		i++;
	}
}
