/* SPDX-License-Identifier: MIT */
/*
 * demo: the three roles of POSIX tracing in one program.
 * The controller creates a stream for this process, filters one event type
 * out and starts it; worker threads (the traced code) record events; the
 * analyzer reads them back oldest first and prints them decoded.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <trace.h>

#define WORKERS 3
#define ROUNDS 4

static trace_event_id_t ev_work, ev_done, ev_noise;

static void *worker(void *arg)
{
	int n = (int)(long)arg;
	for (int i = 0; i < ROUNDS; i++) {
		char msg[32];
		snprintf(msg, sizeof msg, "worker %d step %d", n, i);
		posix_trace_event(ev_work, msg, strlen(msg));
		posix_trace_event(ev_noise, &i, sizeof i); /* filtered out */
	}
	posix_trace_event(ev_done, &n, sizeof n);
	return NULL;
}

static void print_data(trace_event_id_t id, const unsigned char *data, size_t len)
{
	if (id == ev_work) {
		printf(" \"%.*s\"", (int)len, (const char *)data);
		return;
	}
	if (len == sizeof(int) && (id == ev_done || id == POSIX_TRACE_STOP)) {
		int v;
		memcpy(&v, data, sizeof v);
		printf(" %d", v);
		return;
	}
	if (len)
		printf(" (%zu bytes)", len);
}

static void analyze(trace_id_t trid)
{
	struct posix_trace_event_info ev;
	unsigned char data[256];
	size_t len;
	int unavailable, count = 0;
	struct timespec first = {0, 0};
	printf("%-12s %-22s %-6s %-14s %s\n", "time(us)", "event", "pid", "thread", "data");
	for (;;) {
		if (posix_trace_trygetnext_event(trid, &ev, data, sizeof data, &len, &unavailable) ||
		    unavailable)
			break;
		char name[TRACE_EVENT_NAME_MAX + 1];
		if (posix_trace_eventid_get_name(trid, ev.posix_event_id, name) != 0)
			strcpy(name, "?");
		if (count++ == 0)
			first = ev.posix_timestamp;
		long long us = ((long long)(ev.posix_timestamp.tv_sec - first.tv_sec) * 1000000000 +
		                (ev.posix_timestamp.tv_nsec - first.tv_nsec)) / 1000;
		printf("%-12lld %-22s %-6d %-14lx", us, name, (int)ev.posix_pid,
		       (unsigned long)ev.posix_thread_id);
		print_data(ev.posix_event_id, data, len);
		printf("\n");
	}
	printf("%d events read\n", count);
}

int main(void)
{
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_set_t filter;
	pthread_t threads[WORKERS];

	/* Traced code registers its event types (before any stream exists). */
	posix_trace_eventid_open("demo:work", &ev_work);
	posix_trace_eventid_open("demo:done", &ev_done);
	posix_trace_eventid_open("demo:noise", &ev_noise);

	/* Controller */
	posix_trace_attr_init(&attr);
	posix_trace_attr_setname(&attr, "demo");
	posix_trace_attr_setstreamsize(&attr, 1 << 20);
	if (posix_trace_create(0, &attr, &trid) != 0) {
		fprintf(stderr, "demo: posix_trace_create failed\n");
		return 1;
	}
	posix_trace_attr_destroy(&attr);
	posix_trace_eventset_empty(&filter);
	posix_trace_eventset_add(ev_noise, &filter);
	posix_trace_set_filter(trid, &filter, POSIX_TRACE_SET_EVENTSET);
	posix_trace_start(trid);

	for (long i = 0; i < WORKERS; i++)
		pthread_create(&threads[i], NULL, worker, (void *)i);
	for (int i = 0; i < WORKERS; i++)
		pthread_join(threads[i], NULL);
	posix_trace_stop(trid);

	/* Analyzer */
	analyze(trid);
	struct posix_trace_status_info st;
	posix_trace_get_status(trid, &st);
	printf("stream %s, %s, %s\n",
	       st.posix_stream_status == POSIX_TRACE_RUNNING ? "running" : "suspended",
	       st.posix_stream_full_status == POSIX_TRACE_FULL ? "full" : "not full",
	       st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun");
	posix_trace_shutdown(trid);
	return 0;
}
