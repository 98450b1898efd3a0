/* SPDX-License-Identifier: MIT */
/*
 * The library's life in a process (lifecycle.c): set up at load or at the
 * first call of the API, and again in a fork child.
 */
#ifndef PT_LIFECYCLE_H
#define PT_LIFECYCLE_H

/* Sets the library up in this process, once; every entry point of the API
 * that may come first calls it (a program's own constructor may run before
 * the library's). */
void pt_init(void);

#endif
