/*
 * libFuzzer target: arbitrary bytes as a trace log.  posix_trace_open must
 * refuse them with EINVAL or open them; reading every event, rewinding and
 * reading again, the names and the status must then work without a crash, a
 * hang or a large allocation (run under ASan and UBSan by `make fuzz`).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <trace.h>

static void read_all(trace_id_t trid)
{
	struct posix_trace_event_info ev;
	unsigned char data[256];
	char name[TRACE_EVENT_NAME_MAX + 1];
	size_t len;
	int unavailable;
	for (int i = 0; i < 1000000; i++) {
		if (posix_trace_getnext_event(trid, &ev, data, sizeof data, &len, &unavailable) != 0 ||
		    unavailable)
			break;
		posix_trace_eventid_get_name(trid, ev.posix_event_id, name);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *bytes, size_t size)
{
	int fd = memfd_create("fuzz-log", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (size && write(fd, bytes, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	trace_id_t trid;
	if (posix_trace_open(fd, &trid) == 0) {
		struct posix_trace_status_info st;
		trace_attr_t attr;
		trace_event_id_t id;
		int unavailable;
		read_all(trid);
		posix_trace_rewind(trid);
		read_all(trid);
		posix_trace_get_status(trid, &st);
		posix_trace_attr_init(&attr);
		posix_trace_get_attr(trid, &attr);
		while (posix_trace_eventtypelist_getnext_id(trid, &id, &unavailable) == 0 && !unavailable)
			;
		posix_trace_close(trid);
	}
	close(fd);
	return 0;
}
