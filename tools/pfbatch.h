/* SPDX-License-Identifier: MIT */
/* Perfetto's compressed packets (pfbatch.c), for perfetto.c. */
#ifndef POSIXTRACE_PFBATCH_H
#define POSIXTRACE_PFBATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tool.h"

/* Packets gathered and written compressed to out; NULL for PF_CODEC_NONE.
 * Between pf_batch_room(b, n) and pf_batch_done(b, end) the caller writes
 * one packet of up to n (<= OUTBUF_ROOM_MAX) bytes at the pointer returned;
 * pf_batch_write adds a packet already made. */
struct pf_batch *pf_batch_new(enum pf_codec codec, struct outbuf *out);
uint8_t *pf_batch_room(struct pf_batch *b, size_t max);
void pf_batch_done(struct pf_batch *b, uint8_t *end);
void pf_batch_write(struct pf_batch *b, const void *packet, size_t n);
bool pf_batch_flush(struct pf_batch *b); /* the packets so far; false if one failed */
void pf_batch_free(struct pf_batch *b);

#endif
