/* SPDX-License-Identifier: MIT */
/* <trace.h> first, before every glibc header it could clash with: it must not
 * redefine or be redefined by them.  See uses.h for the checks. */
#include <trace.h>
#include <unistd.h>
#include <limits.h>
#include <sys/types.h>
#include <time.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stddef.h>
#include <string.h>
#include <errno.h>

#include "uses.h"
