/* SPDX-License-Identifier: MIT */
/*
 * A stream's lanes (lanes.c): a thread claims one per stream and level,
 * gives it back when it ends; a LOOP writer steals the oldest chunk; losses
 * and the bytes held are counted in the stream's header.
 */
#ifndef PT_LANES_H
#define PT_LANES_H

#include "thread.h"

int pt_lane_claim(struct pt_thread *t, struct pt_wlane *w, const struct pt_map *m, int nested);
void pt_lane_release(struct pt_wlane *w, const struct pt_map *m);
uint32_t pt_steal_oldest(const struct pt_map *m);
void pt_note_loss(struct pt_stream_hdr *h, uint64_t ts, uint64_t n);
void pt_held_sub(struct pt_stream_hdr *h, uint32_t bytes);

/* The events lost while a's stream was not mapped yet, counted
 * in it now that it is. */
void pt_count_unmapped_losses(struct pt_attached *a);

#endif
