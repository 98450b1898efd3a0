/* SPDX-License-Identifier: MIT */
/*
 * The trace log component (src/log/, format in docs/LOG-FORMAT.md) as the
 * rest of src/ sees it: the only header of the folder that files outside it
 * include (tests/layers/check.sh holds it).
 *
 * What it shows:
 * - the writer, for the keeper and its controller (logwrite.h: a log begun,
 *   continued, synced, finished; logblock.h: the drains and events it is
 *   fed; logio.h: the queue's shared budget and the published progress);
 * - struct pt_logw_state (logwstate.h), which the control block embeds:
 *   it lives in memory shared with the controller, so its layout is part of
 *   the face, not hidden behind a pointer;
 * - the format's sizes and the time calibration (logfmt.h), which the
 *   attributes (the smallest log) and the keeper use;
 * - the reader, for the pre-recorded streams (logread.h);
 * - the host record a log begins with (loghost.h), which the reader
 *   gives back and posixtrace_host_self takes now.
 * The images' index (logimages.h), the CRC (crc32c.h) and the reader's
 * insides (logread_internal.h, logmerge.c) are the log's own.
 */
#ifndef PT_LOG_H
#define PT_LOG_H

#include "logblock.h"
#include "logfmt.h"
#include "loghost.h"
#include "logio.h"
#include "logread.h"
#include "logwrite.h"
#include "logwstate.h"

#endif
