/* SPDX-License-Identifier: MIT */
/*
 * The slots of the streams this process records into (slots.c).
 */
#ifndef PT_SLOTS_H
#define PT_SLOTS_H

#include "process.h"

/* A stream this process created for itself, in a free slot: the slot, or
 * -1 when all are taken. */
int pt_attach_local(struct pt_map *m);
/* Unpublishes a slot, waits for writers inside, unmaps what the process
 * itself joined (with the lock held, or taking it). */
void pt_detach_locked(int slot);
void pt_detach(int slot);
/* The slot's stream crosses this process's exec and goes to the children
 * it starts by exec as a token of fd's file (made once, kept until the
 * slot is let go); pt_slot_forget_exec_token lets it go now.  Lock held. */
void pt_slot_keep_across_exec(int slot, int fd);
void pt_slot_forget_exec_token(int slot);
/* The page <trace.h>'s macro reads filters from follows the streams this
 * process records into (pt_proc.lock held). */
void pt_filter_follow(void);
/* An event of slot's stream was filtered out by the library: the macro
 * tests that stream's filter itself from now on, if the page mirrors it
 * (never waits: a lock another thread holds leaves it to a later event). */
void pt_filter_publish(int slot);

#endif
