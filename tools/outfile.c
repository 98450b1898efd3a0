/* SPDX-License-Identifier: MIT */
/*
 * Files and directories the command writes (logs, Chrome JSON, CTF
 * directories).  The command often runs as root in directories others can
 * write to, so a new file is created with O_EXCL and O_NOFOLLOW, mode 0600
 * (a trace shows what a program did: it is private), a directory 0700; a
 * symbolic link is never followed, and an existing file is replaced only
 * when the caller asked (--force) and it is the caller's own regular file
 * with no other hard link (else a planted link would make root overwrite a
 * file of its own choosing).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tool.h"

/* Why an existing path (lstat) may not be replaced, or NULL. */
static const char *replace_refusal(const struct stat *st, bool force, bool want_dir)
{
	if (S_ISLNK(st->st_mode))
		return "is a symbolic link; not following it";
	if (want_dir && !S_ISDIR(st->st_mode))
		return "exists and is not a directory";
	if (!want_dir && !S_ISREG(st->st_mode))
		return "exists and is not a regular file (use - for standard output)";
	if (!force)
		return "exists; not overwriting it without --force";
	if (st->st_uid != geteuid())
		return "belongs to another user; not overwriting it";
	if (!want_dir && st->st_nlink != 1)
		return "has other hard links; not overwriting it";
	return NULL;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int create_output_file_excl(const char *path)
{
	return open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
}

/* The existing file is opened without following a link and checked to be
 * the one lstat saw before it is truncated. */
static int replace_file(const char *path, const struct stat *seen)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		error_msg("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || !same_file(&st, seen) || !S_ISREG(st.st_mode) ||
	    st.st_nlink != 1 || st.st_uid != geteuid()) {
		error_msg("%s: changed while being opened; not overwriting it", path);
		close(fd);
		return -1;
	}
	if (ftruncate(fd, 0) != 0 || fcntl(fd, F_SETFL, 0) != 0) {
		error_msg("%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

int create_output_file(const char *path, bool force)
{
	for (int tries = 0; tries < 3; tries++) {
		int fd = create_output_file_excl(path);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST) {
			error_msg("%s: %s", path, strerror(errno));
			return -1;
		}
		struct stat st;
		if (lstat(path, &st) != 0) {
			if (errno == ENOENT)
				continue; /* removed meanwhile: create it */
			error_msg("%s: %s", path, strerror(errno));
			return -1;
		}
		const char *why = replace_refusal(&st, force, false);
		if (why) {
			error_msg("%s: %s", path, why);
			return -1;
		}
		return replace_file(path, &st);
	}
	error_msg("%s: keeps appearing and disappearing; not writing it", path);
	return -1;
}

/* An existing directory is emptied of what an earlier conversion wrote;
 * anything else in it (or a subdirectory, a link) is a reason to stop. */
static int empty_directory(int dirfd, const char *path, bool (*ours)(const char *name))
{
	int scan = dup(dirfd);
	DIR *d = scan >= 0 ? fdopendir(scan) : NULL;
	struct dirent *e;
	int rc = 0;
	if (!d) {
		error_msg("%s: %s", path, strerror(errno));
		if (scan >= 0)
			close(scan);
		return -1;
	}
	while (rc == 0 && (e = readdir(d)) != NULL) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (!ours(e->d_name) || fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 ||
		    !S_ISREG(st.st_mode)) {
			error_msg("%s: holds '%s', which this command did not write; not overwriting it",
			          path, e->d_name);
			rc = -1;
		} else if (unlinkat(dirfd, e->d_name, 0) != 0) {
			error_msg("%s/%s: %s", path, e->d_name, strerror(errno));
			rc = -1;
		}
	}
	closedir(d);
	return rc;
}

static int open_directory(const char *path, const struct stat *seen)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		error_msg("%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || (seen && !same_file(&st, seen)) || st.st_uid != geteuid()) {
		error_msg("%s: changed while being opened; not writing into it", path);
		close(fd);
		return -1;
	}
	return fd;
}

int create_output_dir(const char *path, bool force, bool (*ours)(const char *name))
{
	if (mkdir(path, 0700) == 0)
		return open_directory(path, NULL);
	if (errno != EEXIST) {
		error_msg("%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (lstat(path, &st) != 0) {
		error_msg("%s: %s", path, strerror(errno));
		return -1;
	}
	const char *why = replace_refusal(&st, force, true);
	if (why) {
		error_msg("%s: %s", path, why);
		return -1;
	}
	int fd = open_directory(path, &st);
	if (fd >= 0 && empty_directory(fd, path, ours) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int create_file_in(int dirfd, const char *dir, const char *name)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		error_msg("%s/%s: %s", dir, name, strerror(errno));
	return fd;
}

FILE *open_output_stream(const char *file, bool force)
{
	if (is_stdio_name(file))
		return stdout;
	int fd = create_output_file(file, force);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (fd >= 0 && !f) {
		error_msg("%s: %s", file, strerror(errno));
		close(fd);
	}
	return f;
}

int close_output_stream(FILE *f, struct outbuf *out, const char *file)
{
	int err = outbuf_flush(out) ? 0 : out->err;
	outbuf_free(out);
	if ((f == stdout ? fflush(f) : fclose(f)) != 0 && !err)
		err = errno;
	if (err)
		error_msg("%s: %s", is_stdio_name(file) ? "standard output" : file, strerror(err));
	return err;
}
