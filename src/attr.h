/* SPDX-License-Identifier: MIT */
/*
 * Trace stream attributes (attr.c): their defaults, the version string,
 * and the test that an attribute object is one.
 */
#ifndef PT_ATTR_H
#define PT_ATTR_H

#include "internal.h"

#define PT_ATTR_MAGIC 0x70744154u
#define PT_DEFAULT_STREAM_SIZE (4u << 20)
#define PT_DEFAULT_MAX_DATA 1024u
#define PT_DEFAULT_LOG_SIZE (64u << 20)
#define PT_STR_(x) #x
#define PT_STR(x) PT_STR_(x)
#define PT_GENVERSION                                                                  \
	"posixtrace " PT_STR(POSIXTRACE_VERSION_MAJOR) "." PT_STR(POSIXTRACE_VERSION_MINOR) "." \
	    PT_STR(POSIXTRACE_VERSION_PATCH)

void pt_attr_defaults(struct pt_attr *a);
int pt_attr_valid(const trace_attr_t *attr);

#endif
