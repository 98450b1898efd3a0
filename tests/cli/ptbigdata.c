/* SPDX-License-Identifier: MIT */
/*
 * ptbigdata: writes a log whose events carry more data than converters
 * format in one piece (tests/cli/perfetto.sh): a stream of 1 MiB
 * max-data-size whose log is LOG, a begin/end pair "big:begin" (30,000
 * bytes 0, 1, ..., 255, 0, ...: binary) and "big:end" (40,000 bytes 'x':
 * text), then "huge" (300,000 bytes of a pseudo-random sequence: binary,
 * more than one of Perfetto's compressed batches holds once in hex).
 *
 * usage: ptbigdata LOG
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	static unsigned char data[300000];
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t begin, end, huge;
	if (argc != 2) {
		fprintf(stderr, "usage: ptbigdata LOG\n");
		return 2;
	}
	int fd = open(argv[1], O_CREAT | O_TRUNC | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 || posix_trace_attr_init(&attr) || posix_trace_attr_setmaxdatasize(&attr, 1u << 20) ||
	    posix_trace_create_withlog(0, &attr, fd, &trid)) {
		perror("ptbigdata");
		return 1;
	}
	if (posix_trace_eventid_open("big:begin", &begin) || posix_trace_eventid_open("big:end", &end) ||
	    posix_trace_eventid_open("huge", &huge) ||
	    posix_trace_start(trid)) {
		fprintf(stderr, "ptbigdata: cannot start\n");
		return 1;
	}
	for (size_t i = 0; i < sizeof data; i++)
		data[i] = (unsigned char)i;
	posix_trace_event(begin, data, 30000);
	memset(data, 'x', sizeof data);
	posix_trace_event(end, data, 40000);
	uint32_t x = 1;
	for (size_t i = 0; i < sizeof data; i++) {
		x = x * 1103515245u + 12345u;
		data[i] = (unsigned char)(x >> 24);
	}
	posix_trace_event(huge, data, sizeof data);
	return posix_trace_shutdown(trid) || close(fd) ? 1 : 0;
}
