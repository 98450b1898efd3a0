/* SPDX-License-Identifier: MIT */
/*
 * Instantiates the probe of ptpeer_tp.h inside the peer program, the way an
 * application that carries its own tracepoint provider is built.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "ptpeer_tp.h"
