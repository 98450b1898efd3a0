/* SPDX-License-Identifier: MIT */
/*
 * forker: an instrumented program to record with `posixtrace record` (make
 * demo, tests/cli/run.sh).  It forks a child and runs threads, and each of
 * them posts named events with text data; it also posts one binary event,
 * one larger than the default max-data-size (truncated when recorded) and
 * one without data.  With -v it prints every event it posts as
 * "emit PID NAME HEXDATA", so a test can compare a recording with it.
 *
 * usage: forker [-r ROUNDS] [-t THREADS] [-s SLEEP_MS] [-n] [-v]
 *   -n: do not fork a child
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

static int rounds = 3, nthreads = 2, sleep_ms = 0, verbose = 0, no_fork = 0;
static trace_event_id_t ev_start, ev_work, ev_child, ev_blob, ev_big, ev_done;

/* One write() per line keeps lines whole across threads and processes. */
static void report(trace_event_id_t id, const char *name, const void *data, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	if (!verbose)
		return;
	size_t size = len * 2 + 128;
	char *line = malloc(size);
	if (!line)
		return;
	int n = snprintf(line, size, "emit %d %s ", (int)getpid(), name);
	for (size_t i = 0; i < len; i++) {
		line[n++] = hex[((const unsigned char *)data)[i] >> 4];
		line[n++] = hex[((const unsigned char *)data)[i] & 15];
	}
	line[n++] = '\n';
	if (write(STDOUT_FILENO, line, (size_t)n) != n)
		perror("forker: write");
	free(line);
	(void)id;
}

static void post(trace_event_id_t id, const char *name, const void *data, size_t len)
{
	posix_trace_event(id, data, len);
	report(id, name, data, len);
}

static void post_text(trace_event_id_t id, const char *name, const char *text)
{
	post(id, name, text, strlen(text));
}

static void pause_a_little(void)
{
	struct timespec ts = {sleep_ms / 1000, (long)(sleep_ms % 1000) * 1000000L};
	if (sleep_ms)
		nanosleep(&ts, NULL);
}

static void *worker(void *arg)
{
	char msg[64];
	for (int r = 0; r < rounds; r++) {
		snprintf(msg, sizeof msg, "thread %ld round %d", (long)arg, r);
		post_text(ev_work, "forker:work", msg);
		pause_a_little();
	}
	return NULL;
}

static void run_child(void)
{
	char msg[64];
	for (int r = 0; r < rounds; r++) {
		snprintf(msg, sizeof msg, "child round %d", r);
		post_text(ev_child, "forker:child", msg);
		pause_a_little();
	}
	exit(0);
}

static void post_special_events(void)
{
	unsigned char blob[16];
	char big[2000];
	for (size_t i = 0; i < sizeof blob; i++)
		blob[i] = (unsigned char)(i * 17);
	memset(big, 'x', sizeof big);
	post(ev_blob, "forker:blob", blob, sizeof blob);
	post(ev_big, "forker:big", big, sizeof big);
}

static void parse_args(int argc, char **argv)
{
	int c;
	while ((c = getopt(argc, argv, "r:t:s:nv")) != -1) {
		switch (c) {
		case 'r': rounds = atoi(optarg); break;
		case 't': nthreads = atoi(optarg); break;
		case 's': sleep_ms = atoi(optarg); break;
		case 'n': no_fork = 1; break;
		case 'v': verbose = 1; break;
		default:
			fprintf(stderr, "usage: forker [-r ROUNDS] [-t THREADS] [-s SLEEP_MS] [-n] [-v]\n");
			exit(2);
		}
	}
	if (nthreads < 0 || nthreads > 64)
		nthreads = 2;
}

int main(int argc, char **argv)
{
	pthread_t threads[64];
	parse_args(argc, argv);
	posix_trace_eventid_open("forker:start", &ev_start);
	posix_trace_eventid_open("forker:work", &ev_work);
	posix_trace_eventid_open("forker:child", &ev_child);
	posix_trace_eventid_open("forker:blob", &ev_blob);
	posix_trace_eventid_open("forker:big", &ev_big);
	posix_trace_eventid_open("forker:done", &ev_done);

	post_text(ev_start, "forker:start", "hello from forker");
	post_special_events();
	pid_t child = no_fork ? -1 : fork();
	if (child == 0)
		run_child();
	for (long i = 0; i < nthreads; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	for (int i = 0; i < nthreads; i++)
		pthread_join(threads[i], NULL);
	if (child > 0)
		waitpid(child, NULL, 0);
	post(ev_done, "forker:done", NULL, 0);
	return 0;
}
