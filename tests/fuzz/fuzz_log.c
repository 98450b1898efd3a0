/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target over the whole library: arbitrary bytes as a trace log,
 * given to posix_trace_open as a memory file.  It must refuse them (EINVAL)
 * or open them; then reading every event, rewinding and reading again (the
 * same events), the names, the event type list, the attributes, the status,
 * posixtrace_log_info and posixtrace_event_ext must work without a crash, a
 * hang, a leak or a large allocation, and posix_trace_close must free it
 * all.  Built and run by `make fuzz` with ASan and UBSan, with
 * FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION so that CRCs do not stop the
 * mutations at the first check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <posixtrace.h>
#include <trace.h>

#include "fuzz_common.h"

/* Reads to the end: what was read, and the number of POSIX_TRACE_ERROR
 * events in it. */
static struct fuzz_digest read_all(trace_id_t trid, uint64_t *errors)
{
	struct posix_trace_event_info ev;
	struct posixtrace_event_ext ext;
	unsigned char data[256];
	char name[TRACE_EVENT_NAME_MAX + 1];
	size_t len;
	int unavailable;
	struct fuzz_digest d = {0, 0};
	*errors = 0;
	while (fuzz_digest_more(&d)) {
		if (posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavailable) != 0)
			abort(); /* an open log reads to its end */
		if (unavailable)
			break;
		if (len > sizeof data || posixtrace_event_ext(trid, &ext) != 0 ||
		    memchr(ext.posixtrace_comm, '\0', sizeof ext.posixtrace_comm) == NULL)
			abort();
		if (posix_trace_eventid_get_name(trid, ev.posix_event_id, name) == 0 &&
		    memchr(name, '\0', sizeof name) == NULL)
			abort();
		*errors += ev.posix_event_id == POSIX_TRACE_ERROR;
		fuzz_digest_add(&d, ev.posix_event_id + (uint64_t)ev.posix_timestamp.tv_sec +
		                        (uint64_t)ev.posix_timestamp.tv_nsec + len +
		                        (uint64_t)ev.posix_pid,
		                data, len);
	}
	fuzz_digest_end(&d);
	return d;
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	int fd = fuzz_memfd("fuzz-log", bytes, size);
	if (fd < 0)
		return 0;
	trace_id_t trid;
	int err = posix_trace_open(fd, &trid);
	if (err == 0) {
		struct posix_trace_status_info st;
		struct posixtrace_log_info info;
		trace_attr_t attr;
		trace_event_id_t id;
		int unavailable;
		uint64_t e1, e2;
		struct fuzz_digest d1 = read_all(trid, &e1);
		if (posix_trace_rewind(trid) != 0)
			abort();
		struct fuzz_digest d2 = read_all(trid, &e2);
		if (!fuzz_digest_same(&d1, &d2) || e1 != e2)
			abort(); /* a second pass reads the same */
		/* one ERROR per damaged block (a forged log may also hold
		 * recorded ERROR events); the library writes version 5 and
		 * reads 2 to 5 (docs/LOG-FORMAT.md) */
		if (posixtrace_log_info(trid, &info) != 0 || info.posixtrace_version < 2 ||
		    info.posixtrace_version > 5 ||
		    info.posixtrace_damaged_blocks > e2 ||
		    (info.posixtrace_closed != 0 && info.posixtrace_closed != 1))
			abort();
		if (posix_trace_get_status(trid, &st) != 0)
			abort();
		/* the host: named by version 5 logs only, its name within bounds */
		struct posixtrace_host host;
		int herr = posixtrace_log_host(trid, &host);
		if (herr != (info.posixtrace_version >= 5 ? 0 : ENOENT) ||
		    (!herr && strnlen(host.posixtrace_host_name, sizeof host.posixtrace_host_name) >
		                  POSIXTRACE_HOST_NAME_MAX))
			abort();
		posix_trace_attr_init(&attr);
		if (posix_trace_get_attr(trid, &attr) != 0)
			abort();
		posix_trace_attr_destroy(&attr);
		for (int i = 0; i < 2000; i++)
			if (posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) != 0 ||
			    unavailable)
				break;
		if (posix_trace_close(trid) != 0)
			abort();
	} else if (err != EINVAL && err != ENOMEM) {
		abort();
	}
	close(fd);
	return 0;
}
