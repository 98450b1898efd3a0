/* SPDX-License-Identifier: MIT */
/* <trace.h> after the glibc headers that also carry trace names (unistd.h: _POSIX_TRACE*,
 * limits.h: TRACE_* limits, sys/types.h: the trace types).  See uses.h for the checks. */
#include <unistd.h>
#include <limits.h>
#include <sys/types.h>
#include <trace.h>

#include "uses.h"
