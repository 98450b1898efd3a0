/* SPDX-License-Identifier: MIT */
/* <trace.h> from C++: compiles with the C++ library headers around it, declares the
 * functions with C linkage (check.sh looks for the unmangled symbols) and keeps the
 * spec's prototypes.  See uses.h for the checks. */
#include <climits>
#include <cstddef>
#include <ctime>
#include <trace.h>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <sys/types.h>

#include "uses.h"
