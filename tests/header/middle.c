/* SPDX-License-Identifier: MIT */
/* <trace.h> between glibc headers, included twice (include guard, no redefinition).
 * See uses.h for the checks. */
#include <time.h>
#include <pthread.h>
#include <trace.h>
#include <limits.h>
#include <unistd.h>
#include <trace.h>
#include <sys/types.h>

#include "uses.h"
