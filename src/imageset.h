/* SPDX-License-Identifier: MIT */
/*
 * The executable images of this process, described to streams that ask
 * (imageset.c).
 */
#ifndef PT_IMAGESET_H
#define PT_IMAGESET_H

#include <stdint.h>
#include "layout.h"

/* A number that changes when an object is loaded or unloaded (never 0). */
uint64_t pt_images_generation(void);

/* What one reading of the set saw, at one moment (the loader's lock held
 * through it): its generation (as pt_images_generation), the number of
 * objects unloaded until then, the records made. */
struct pt_images_read {
	uint64_t gen, unloads;
	uint32_t count;
};

/* The whole set as IMAGE records (both header words, raw left 0), as many
 * as fit in buf's size bytes, into buf: the bytes used. */
uint32_t pt_images_encode(unsigned char *buf, uint32_t size, struct pt_images_read *out);

/* The set's key (pt_image_rec.raw) written into the records buf[0, len)
 * that pt_images_encode made. */
void pt_images_stamp(unsigned char *buf, uint32_t len, uint64_t key);

/* Takes the IMAGE records out of the records rec[0, len) (private memory,
 * checked: a stage), calling fn for each with the pid of the writer then
 * current (start: the one at rec); what remains is moved together.  Its
 * length.  An IMAGE's path_len and build_id_len are cut to what its
 * record holds. */
typedef void pt_image_taken_fn(int32_t pid, const struct pt_image_rec *r, const char *path,
                               void *arg);
uint32_t pt_images_take(unsigned char *rec, uint32_t len, uint32_t max_data,
                        const struct pt_owner *start, pt_image_taken_fn *fn, void *arg);

#endif
