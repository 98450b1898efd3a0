/* SPDX-License-Identifier: MIT */
/*
 * ptemit: an instrumented program for the tests of posixtrace(1) that posts
 * the events its arguments name, so a test chooses event names (begin/end
 * pairs, nesting, unmatched ones) and which thread posts them.
 *
 * usage: ptemit SCRIPT...
 * Each SCRIPT is a space-separated list of steps run by one thread (the
 * first by the main thread, the others by threads started together):
 *   NAME             post event NAME, with the name as data
 *   sleep=MS         sleep MS milliseconds
 *   ready=FILE       create FILE (tells a test the program runs)
 *   wait=FILE        wait until FILE exists
 *   until=FILE,NAME  post NAME every 20 ms until FILE exists
 *   child=NAME       fork a child that posts NAME and exits; wait for it
 *   count=N,NAME     post NAME N times, the data of the K-th the decimal K
 *   values=N,D,KIND,NAME  post NAME N times with 16 bytes of data, the K-th
 *                    event's value number K mod D (D 0: K, every value
 *                    unique); KIND text ("value-%010ld"), binary (two
 *                    64-bit words, the number and its golden-ratio product)
 *                    or none (no data at all)
 *   crash=SIG        die of signal SIG (its default action)
 * Waits give up after 30 s (exit 3), so a broken test cannot hang.
 */
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#define MAX_THREADS 16
#define WAIT_LIMIT_MS 30000

static void post(const char *name)
{
	trace_event_id_t id;
	if (posix_trace_eventid_open(name, &id) != 0) {
		fprintf(stderr, "ptemit: cannot open event type '%s'\n", name);
		exit(2);
	}
	posix_trace_event(id, name, strlen(name));
}

static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Posts every (NAME non-NULL) 20 ms until FILE exists. */
static void wait_for_file(const char *file, const char *name)
{
	for (long waited = 0; access(file, F_OK) != 0; waited += 20) {
		if (waited >= WAIT_LIMIT_MS) {
			fprintf(stderr, "ptemit: %s did not appear\n", file);
			exit(3);
		}
		if (name)
			post(name);
		sleep_ms(20);
	}
}

static void run_child(const char *name)
{
	pid_t pid = fork();
	if (pid == 0) {
		post(name);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static void post_count(char *arg)
{
	char *name = strchr(arg, ','), text[24];
	trace_event_id_t id;
	if (!name) {
		fprintf(stderr, "ptemit: count=N,NAME\n");
		exit(2);
	}
	*name++ = '\0';
	if (posix_trace_eventid_open(name, &id) != 0)
		exit(2);
	for (long k = 0, n = atol(arg); k < n; k++) {
		int len = snprintf(text, sizeof text, "%ld", k);
		posix_trace_event(id, text, (size_t)len);
	}
}

static void post_values(char *arg)
{
	char *distinct = strchr(arg, ','), *kind = distinct ? strchr(distinct + 1, ',') : NULL;
	char *name = kind ? strchr(kind + 1, ',') : NULL;
	char data[32];
	trace_event_id_t id;
	if (!name) {
		fprintf(stderr, "ptemit: values=N,D,KIND,NAME\n");
		exit(2);
	}
	*distinct++ = *kind++ = *name++ = '\0';
	long n = atol(arg), d = atol(distinct);
	bool binary = !strcmp(kind, "binary");
	if (posix_trace_eventid_open(name, &id) != 0)
		exit(2);
	for (long k = 0; k < n; k++) {
		uint64_t v = (uint64_t)(d > 0 ? k % d : k), words[2] = {v, v * 0x9e3779b97f4a7c15ull};
		if (binary)
			memcpy(data, words, sizeof words);
		else
			snprintf(data, sizeof data, "value-%010llu", (unsigned long long)(v % 10000000000ull));
		posix_trace_event(id, data, strcmp(kind, "none") ? 16 : 0);
	}
}

static void step(char *tok)
{
	char *arg = strchr(tok, '=');
	if (!arg) {
		post(tok);
		return;
	}
	*arg++ = '\0';
	if (!strcmp(tok, "sleep")) {
		sleep_ms(atol(arg));
	} else if (!strcmp(tok, "ready")) {
		FILE *f = fopen(arg, "w");
		if (f)
			fclose(f);
	} else if (!strcmp(tok, "wait")) {
		wait_for_file(arg, NULL);
	} else if (!strcmp(tok, "until")) {
		char *name = strchr(arg, ',');
		if (!name) {
			fprintf(stderr, "ptemit: until=FILE,NAME\n");
			exit(2);
		}
		*name++ = '\0';
		wait_for_file(arg, name);
	} else if (!strcmp(tok, "child")) {
		run_child(arg);
	} else if (!strcmp(tok, "count")) {
		post_count(arg);
	} else if (!strcmp(tok, "values")) {
		post_values(arg);
	} else if (!strcmp(tok, "crash")) {
		signal(atoi(arg), SIG_DFL);
		raise(atoi(arg));
		exit(3);
	} else {
		fprintf(stderr, "ptemit: unknown step '%s'\n", tok);
		exit(2);
	}
}

static void *run_script(void *arg)
{
	char *script = strdup(arg), *save = NULL;
	if (!script)
		exit(2);
	for (char *tok = strtok_r(script, " ", &save); tok; tok = strtok_r(NULL, " ", &save))
		step(tok);
	free(script);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t threads[MAX_THREADS];
	int n = argc - 2;
	if (argc < 2 || n > MAX_THREADS) {
		fprintf(stderr, "usage: ptemit SCRIPT... (at most %d + 1)\n", MAX_THREADS);
		return 2;
	}
	for (int i = 0; i < n; i++)
		if (pthread_create(&threads[i], NULL, run_script, argv[i + 2]) != 0)
			return 2;
	run_script(argv[1]);
	for (int i = 0; i < n; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
