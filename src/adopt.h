/* SPDX-License-Identifier: MIT */
/*
 * At load (adopt.c): what an exec kept for this process.
 */
#ifndef PT_ADOPT_H
#define PT_ADOPT_H

/* A new program, or this one after exec: takes back its own block,
 * channel, registry and streams, joins what an ancestor traced with
 * inheritance, takes the offers that waited on its channel, closes
 * another process's. */
void pt_adopt_at_load(void);

#endif
