/* SPDX-License-Identifier: MIT */
/* <posixtrace.h> from C++: see ext.h and uses.h for the checks. */
#include <cstddef>
#include <posixtrace.h>

#include "ext.h"
#include "uses.h"

int (*pth_ext_fn)(trace_id_t, int, const char *, size_t) = pth_ext;
