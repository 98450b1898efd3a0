/* SPDX-License-Identifier: MIT */
/*
 * The host record of a version 5 log (struct pt_log_host, logfmt.h): taken
 * by the writer when a file of the log begins (the reader checks it:
 * logread.c).
 */
#ifndef PT_LOGHOST_H
#define PT_LOGHOST_H

#include "logfmt.h"

/* This machine now: its name, the keyed hash of its machine id, its boot
 * id, a realtime and monotonic pair read together, adjtimex's state; what
 * cannot be read is left out (its flag clear).  The CRC is set. */
PT_LOG_HIDDEN void pt_log_host_take(struct pt_log_host *h);

#endif
