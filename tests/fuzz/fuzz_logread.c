/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target over the trace log reader (src/log/logread.c) alone:
 * arbitrary bytes as a log, from a memory file (the pread path) and, for
 * short inputs, from a pipe (the read-whole path).  pt_logr_open must refuse
 * them (EINVAL) or open them; then reading every event, rewinding, reading
 * again (the same events), the names, the attributes, the status and the
 * info must work without a crash, a hang, a leak or a large allocation.
 * Built and run by `make fuzz` (and by `sh tests/unit/build.sh fuzz
 * SECONDS`) with ASan and UBSan, with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
 * so that CRCs do not stop the mutations at the first check.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The reader itself, so that the fuzzer checks its name count without a
 * function in the library that only tests call. */
#include "../../src/log/logread.c"
#include "fuzz_common.h"
#include "fuzz_logr.h"

static void exercise(int fd)
{
	struct pt_logr *r = NULL;
	int err = pt_logr_open(fd, &r);
	if (err) {
		if (err != EINVAL && err != ENOMEM)
			abort();
		return;
	}
	struct fuzz_digest d1 = fuzz_logr_read_all(r);
	pt_logr_rewind(r);
	struct fuzz_digest d2 = fuzz_logr_read_all(r);
	if (!fuzz_digest_same(&d1, &d2))
		abort(); /* a second pass reads the same */
	char name[PT_LOG_NAME_SIZE];
	uint32_t named = 0;
	for (trace_event_id_t id = 0; id < PT_LOG_NIDS + 2; id++)
		if (pt_logr_name(r, id, name) == 0) {
			if (memchr(name, '\0', sizeof name) == NULL)
				abort();
			named++;
		}
	if (named != r->meta.nnames)
		abort();
	struct pt_logw_params p;
	struct pt_log_status s;
	uint32_t version;
	int closed;
	uint64_t damaged;
	pt_logr_params(r, &p);
	pt_logr_status(r, &s);
	pt_logr_info(r, &version, &closed, &damaged);
	if (version < PT_LOG_VERSION_MIN || version > PT_LOG_VERSION || damaged > d1.count ||
	    memchr(p.trace_name, '\0', sizeof p.trace_name) == NULL)
		abort();
	pt_logr_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	int fd = fuzz_memfd("fuzz-logread", bytes, size);
	if (fd < 0)
		return 0;
	exercise(fd);
	close(fd);
	if (size <= 65536) { /* fits a pipe without a reader */
		int p[2];
		if (pipe2(p, O_CLOEXEC) != 0)
			return 0;
		if (!size || write(p[1], bytes, size) == (ssize_t)size) {
			close(p[1]);
			exercise(p[0]);
		} else {
			close(p[1]);
		}
		close(p[0]);
	}
	return 0;
}
