/* SPDX-License-Identifier: MIT */
/*
 * fds_open: a program linked with libposixtrace that writes one line on
 * its standard output and one on its standard error once loaded, and
 * exits 0 if both writes succeeded (t_isolation: a forged control block
 * handed down by exec must not make the library close them at load).
 */
#include <string.h>
#include <trace.h>
#include <unistd.h>

static int say(int fd, const char *line)
{
	return write(fd, line, strlen(line)) == (ssize_t)strlen(line);
}

int main(void)
{
	int out = say(1, "stdout open\n");
	int err = say(2, "stderr open\n");
	/* A call into the library, so that the linker keeps it needed. */
	trace_event_id_t id;
	posix_trace_eventid_open("fds_open", &id);
	return out && err ? 0 : 1;
}
