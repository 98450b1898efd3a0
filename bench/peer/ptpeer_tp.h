/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST tracepoint provider of the peer benchmark (ust_peer.c):
 * one event type, ptpeer:event, whose payload is two 64-bit integers, the
 * 16 bytes that bench_event records with posix_trace_event().
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER ptpeer

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./ptpeer_tp.h"

#if !defined(PTPEER_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define PTPEER_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(
	ptpeer, event,
	LTTNG_UST_TP_ARGS(uint64_t, first, uint64_t, second),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, first, first)
		lttng_ust_field_integer(uint64_t, second, second)
	)
)

#endif /* PTPEER_TP_H */

#include <lttng/tracepoint-event.h>
