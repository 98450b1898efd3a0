/* SPDX-License-Identifier: MIT */
/*
 * A rotated log (posixtrace_create_withlogdir, <posixtrace.h>): numbered
 * files in a directory the caller opened, each a complete log.  The
 * controller creates the first, the keeper the next ones and removes the
 * oldest (keeper.c); both only through the directory's descriptor, by names
 * made here from a number (docs/SECURITY.md, "Rotated logs").  The images
 * the keeper repeats at the start of each file, or writes again before a
 * ring log overwrites them, are kept here too.
 */
#ifndef PT_ROTATE_H
#define PT_ROTATE_H

#include <stdint.h>
#include <sys/types.h>
#include "log/log.h"

/* The highest file number: names have PT_ROT_DIGITS digits, so they sort. */
#define PT_ROT_DIGITS 8
#define PT_ROT_MAX_FILE 99999999ull
#define PT_ROT_NAME_SIZE (PT_ROT_DIGITS + sizeof ".ptlog")
/* Images kept to repeat at the start of each file, or in a ring (the
 * oldest set forgotten past it): with paths of up to PT_LOG_IMAGE_PATH_MAX bytes, a bound of
 * the keeper's memory. */
#define PT_ROT_IMAGES_MAX 4096u
/* The file size a rotation takes: a block of the largest size and more,
 * up to what a file offset holds. */
#define PT_ROT_MIN_SIZE (64ull << 10)
#define PT_ROT_MAX_SIZE (1ull << 62)

/* The rotation a stream was created with; dir -1: a log of one file. */
struct pt_rotation {
	int dir;
	mode_t mode;            /* of every file */
	uint64_t size;          /* a new file once the current one passes it */
	uint32_t count;         /* files kept; 0: all */
	uint32_t seconds;       /* a new file once the current one is this old; 0: never */
};

/* File n, new, with the mode: its descriptor (open for writing), device
 * and inode; or -1 and *err (EEXIST: the name is taken, by anything).
 * *named 0: the file has no name yet (O_TMPFILE), so that no file of the
 * set is seen without its header: pt_rot_name_file names it once the
 * header is written.  *named 1 (a file system without unnamed files, no
 * /proc): created under its number (O_EXCL, never through a symbolic
 * link). */
int pt_rot_create(int dir, uint64_t n, mode_t mode, uint64_t *dev, uint64_t *ino, int *named,
                  int *err);
/* The unnamed file fd named n (a link, which never replaces a name
 * taken: EEXIST); 0 or an error number. */
int pt_rot_name_file(int dir, uint64_t n, int fd);
/* File n again for a new keeper: only the regular file of that device and
 * inode (never through a symbolic link); -1 otherwise. */
int pt_rot_reopen(int dir, uint64_t n, uint64_t dev, uint64_t ino);
/* File n removed (gone already: 0); an error number otherwise. */
int pt_rot_remove(int dir, uint64_t n);

struct pt_rot_image {
	struct pt_log_image e;
	uint32_t uid;
	char *path;             /* e.path_len bytes */
	uint64_t seq;           /* a ring: the log's next block when last written */
	uint32_t gone;          /* a ring: its process was found gone */
};
struct pt_rot_images {
	struct pt_rot_image *v;
	uint32_t n;
	uint64_t forgotten;     /* past PT_ROT_IMAGES_MAX */
	int32_t probed_pid;     /* the process last looked at when kept, */
	int probed_gone;        /* and whether it was gone */
};
/* An image written to the log, at or after block seq (one whose path or
 * build id is longer than the log takes is not kept): it replaces the
 * images of an older set of its process (an older set than those kept is
 * not kept; the same image again is only written later).  Past
 * PT_ROT_IMAGES_MAX, the oldest set kept is forgotten.  ENOMEM (not
 * kept). */
int pt_rot_images_keep(struct pt_rot_images *t, const struct pt_log_image *e, const char *path,
                       uint32_t uid, uint64_t seq);
/* Forgets the images of processes that are gone, then calls fn on the
 * others' (in the order they were kept). */
void pt_rot_images_each(struct pt_rot_images *t,
                        void (*fn)(const struct pt_rot_image *im, void *arg), void *arg);
/* A ring log: calls fn on each image last written before block `before`
 * (it is written again now, at or after block `seq`), of a process alive,
 * or found gone now for the first time while it was alive when its image
 * was kept (its events may be newer than the image's last writing);
 * forgets the others (a process gone when its image was kept posted no
 * event after it). */
void pt_rot_images_renew(struct pt_rot_images *t, uint64_t before, uint64_t seq,
                         void (*fn)(const struct pt_rot_image *im, void *arg), void *arg);

#endif
