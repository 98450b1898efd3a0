/*
 * Writes real trace logs (one per log policy, with names, several threads'
 * worth of events, truncated data and a pipe-style APPEND log) into the
 * directory given as argument: the seed corpus of fuzz_log.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <trace.h>

static void write_log(const char *dir, const char *file, int log_policy, size_t log_size, int n)
{
	char path[512];
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t a, b;
	snprintf(path, sizeof path, "%s/%s", dir, file);
	int fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0)
		return;
	posix_trace_eventid_open("seed:alpha", &a);
	posix_trace_eventid_open("seed:beta", &b);
	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, file);
	posix_trace_attr_setlogfullpolicy(&attr, log_policy);
	posix_trace_attr_setlogsize(&attr, log_size);
	posix_trace_attr_setmaxdatasize(&attr, 64);
	if (posix_trace_create_withlog(0, &attr, fd, &trid) == 0) {
		posix_trace_start(trid);
		for (int i = 0; i < n; i++) {
			char text[100];
			int len = snprintf(text, sizeof text, "event %d of %s %s", i, file,
			                   i % 7 ? "" : "with a tail longer than max-data-size (64)");
			posix_trace_event(i % 2 ? a : b, text, (size_t)len);
		}
		posix_trace_stop(trid);
		posix_trace_shutdown(trid);
	}
	close(fd);
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : ".";
	write_log(dir, "append.ptlog", POSIX_TRACE_APPEND, 1 << 20, 300);
	write_log(dir, "loop.ptlog", POSIX_TRACE_LOOP, 128 << 10, 6000);
	write_log(dir, "untilfull.ptlog", POSIX_TRACE_UNTIL_FULL, 100 << 10, 5000);
	write_log(dir, "small.ptlog", POSIX_TRACE_APPEND, 1 << 20, 3);
	return 0;
}
