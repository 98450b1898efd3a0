/* SPDX-License-Identifier: MIT */
/*
 * iso_ctl: a controller process for the isolation tests (t_isolation): it
 * traces another process with posix_trace_create (or, with -o,
 * posix_trace_create_withlog) and answers on stdout:
 *
 *   created err=E     the create's result (0 or an error number)
 *   started err=E     the start's result, when the create succeeded
 *   shutdown err=E    after a line (or EOF) on stdin
 *
 *   -p PID      the process to trace (0: itself)
 *   -o LOG      write a log (created, mode 0600)
 *   -i          POSIX_TRACE_INHERITED
 *   -a SECONDS  give up (SIGALRM) after SECONDS (default 60)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <trace.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t pid = 0;
	const char *log = NULL;
	int inherited = 0, opt, err;
	unsigned alarm_s = 60;
	trace_attr_t attr;
	trace_id_t trid;

	while ((opt = getopt(argc, argv, "p:o:ia:")) != -1) {
		switch (opt) {
		case 'p': pid = (pid_t)atol(optarg); break;
		case 'o': log = optarg; break;
		case 'i': inherited = 1; break;
		case 'a': alarm_s = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	alarm(alarm_s);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (posix_trace_attr_init(&attr) != 0 ||
	    (inherited && posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) != 0))
		return 3;
	if (log) {
		int fd = open(log, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return 4;
		err = posix_trace_create_withlog(pid, &attr, fd, &trid);
	} else {
		err = posix_trace_create(pid, &attr, &trid);
	}
	printf("created err=%d\n", err);
	if (err)
		return 0;
	printf("started err=%d\n", posix_trace_start(trid));
	char line[64];
	if (!fgets(line, sizeof line, stdin))
		line[0] = '\0';
	printf("shutdown err=%d\n", posix_trace_shutdown(trid));
	return 0;
}
