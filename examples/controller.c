/* SPDX-License-Identifier: MIT */
/*
 * controller: traces another program by its pid and prints its events live.
 *
 *   controller PROGRAM [ARGS...]
 *
 * The controller starts PROGRAM held on a pipe, creates a trace stream for
 * its pid (the program has not loaded libposixtrace yet: it joins the stream
 * when it does, before main), starts the stream, lets the program run, and
 * reads its events as they come (posix_trace_timedgetnext_event) until the
 * program has exited and the stream is empty.  The program knows nothing of
 * this: it only calls posix_trace_eventid_open() and posix_trace_event().
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

static pid_t start_held(char **argv, int *release)
{
	int gate[2];
	if (pipe(gate) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		char go;
		close(gate[1]);
		if (read(gate[0], &go, 1) != 1)
			_exit(127);
		close(gate[0]);
		execvp(argv[0], argv);
		fprintf(stderr, "controller: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(gate[0]);
	*release = gate[1];
	return pid;
}

static void print_event(trace_id_t trid, const struct posix_trace_event_info *ev,
                        const unsigned char *data, size_t len, const struct timespec *t0)
{
	char name[TRACE_EVENT_NAME_MAX + 1];
	if (posix_trace_eventid_get_name(trid, ev->posix_event_id, name) != 0)
		snprintf(name, sizeof name, "id %u", ev->posix_event_id);
	double ms = (double)(ev->posix_timestamp.tv_sec - t0->tv_sec) * 1e3 +
	            (double)(ev->posix_timestamp.tv_nsec - t0->tv_nsec) / 1e6;
	printf("%10.3f ms  pid %-7d %-24s", ms, (int)ev->posix_pid, name);
	int text = len > 0;
	for (size_t i = 0; i < len; i++)
		text &= data[i] >= 32 && data[i] < 127;
	if (text)
		printf(" \"%.*s\"", (int)len, (const char *)data);
	else if (len)
		printf(" (%zu bytes)", len);
	printf("\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: controller PROGRAM [ARGS...]\n");
		return 2;
	}
	int release, status = 0, done = 0;
	pid_t pid = start_held(argv + 1, &release);
	if (pid < 0)
		return 1;
	trace_id_t trid;
	int err = posix_trace_create(pid, NULL, &trid);
	if (err) {
		fprintf(stderr, "controller: posix_trace_create(%d): %s\n", (int)pid, strerror(err));
		kill(pid, SIGKILL);
		return 1;
	}
	posix_trace_start(trid);
	printf("controller %d traces %s, pid %d\n", (int)getpid(), argv[1], (int)pid);
	if (write(release, "g", 1) != 1)
		return 1;
	close(release);

	struct timespec t0 = {0, 0};
	int count = 0;
	for (;;) {
		struct posix_trace_event_info ev;
		unsigned char data[256];
		size_t len;
		int unavailable;
		struct timespec deadline;
		clock_gettime(CLOCK_REALTIME, &deadline);
		deadline.tv_nsec += 100 * 1000 * 1000;
		if (deadline.tv_nsec >= 1000000000) {
			deadline.tv_sec++;
			deadline.tv_nsec -= 1000000000;
		}
		err = posix_trace_timedgetnext_event(trid, &ev, data, sizeof data, &len, &unavailable,
		                                     &deadline);
		if (err == 0 && !unavailable) {
			if (count++ == 0)
				t0 = ev.posix_timestamp;
			print_event(trid, &ev, data, len, &t0);
			continue;
		}
		if (err != ETIMEDOUT && err != 0)
			break;
		if (done)
			break; /* the program has exited and the stream is empty */
		done = waitpid(pid, &status, WNOHANG) == pid;
	}
	posix_trace_shutdown(trid);
	printf("controller: %d events; %s exited with status %d\n", count, argv[1],
	       WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
	return 0;
}
