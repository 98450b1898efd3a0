/* SPDX-License-Identifier: MIT */
/*
 * Descriptors that leave a process (token.c).  A memfd of the library
 * crosses exec and sockets only as a token: an O_PATH descriptor of a file
 * of mode 0600, which maps nothing, reads nothing and writes nothing.
 * Whoever receives one opens the file afresh through /proc/self/fd, and the
 * kernel then checks the opener's own rights on it: its owner's processes
 * and root's open it, nobody else's.  So a descriptor that goes down a tree
 * to a member of another user, or that another user takes off an
 * ancestor's channel, gives that user nothing (SECURITY.md, "Descriptors
 * are tokens").
 */
#ifndef PT_TOKEN_H
#define PT_TOKEN_H

#include <stddef.h>

/* The mode of every memfd the library makes, set before anyone else can
 * get a descriptor of it. */
#define PT_MEMFD_MODE 0600

/* Turns fd, in place (same number), into a token of its file, kept
 * across exec or not: 0, or an error number (fd unchanged). */
int pt_token_make(int fd, int across_exec);

/* A new descriptor, read-write and close-on-exec, of the file behind fd (a
 * token or any descriptor, left open), opened with this process's rights;
 * only for a regular file named as the library's memfds (opening anything
 * else could have effects: a device, a FIFO).  -1 with errno (EACCES: the
 * kernel refused, the file is another user's). */
int pt_token_open(int fd);

/* Maps the size bytes of the sealed memfd behind fd through pt_token_open:
 * 0; EACCES when the file is not this process's to open; EINVAL when it is
 * not sealed against resizing or not exactly size bytes; ENOMEM. */
int pt_token_map_sealed(int fd, size_t size, void **out);

#endif
