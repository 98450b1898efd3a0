/* SPDX-License-Identifier: MIT */
/*
 * Recording (writer.c): posix_trace_event, a thread's entry and grace
 * period, its registration and end.
 */
#ifndef PT_WRITER_H
#define PT_WRITER_H

#include "thread.h"

struct pt_thread *pt_thread_self(void);
void pt_thread_exit(void *arg);
void pt_forget_other_threads(void);

/* After posix_trace_eventid_open: whether the calling thread's next event
 * describes a new set of images first (images.c). */
void pt_images_recheck(void);

#endif
