/* SPDX-License-Identifier: MIT */
/* <trace.h> first in a C++ translation unit, then C and C++ library headers.
 * See uses.h for the checks. */
#include <trace.h>
#include <pthread.h>
#include <ctime>
#include <climits>
#include <string>

#include "uses.h"
