/* SPDX-License-Identifier: MIT */
/* <trace.h> on its own: the header is self-contained (size_t, pid_t, pthread_t and
 * struct timespec come with it).  See uses.h for the checks. */
#include <trace.h>

#include "uses.h"
