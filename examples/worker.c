/* SPDX-License-Identifier: MIT */
/*
 * worker: an ordinary instrumented program.  It names its trace points and
 * calls posix_trace_event(); whether anything is recorded is decided by
 * whoever traces it (examples/controller, the posixtrace command).
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

static trace_event_id_t ev_job, ev_done;

static void *job(void *arg)
{
	int n = (int)(long)arg;
	for (int step = 0; step < 3; step++) {
		char text[48];
		int len = snprintf(text, sizeof text, "job %d step %d", n, step);
		posix_trace_event(ev_job, text, (size_t)len);
		usleep(2000);
	}
	posix_trace_event(ev_done, &n, sizeof n);
	return NULL;
}

int main(void)
{
	pthread_t threads[2];
	posix_trace_eventid_open("worker:job", &ev_job);
	posix_trace_eventid_open("worker:done", &ev_done);
	for (long i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, job, (void *)i);
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
