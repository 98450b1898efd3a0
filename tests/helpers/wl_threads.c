/* SPDX-License-Identifier: MIT */
/*
 * wl_threads: thread workloads for the workload tests (t_workload).
 *
 * Thread t is writer t: its event k has the type of the name given with -n
 * (default "wl.thread") and the 16-byte payload {t, k, pt_mix(t, k)}.
 *
 *   churn  -n THREADS -p ALIVE -c COUNT: THREADS short-lived threads, at most
 *          ALIVE at once, each posting COUNT events and exiting
 *   alive  -n THREADS -c COUNT: all THREADS threads are created, then all
 *          post COUNT events, then all exit (two barriers)
 *   idle   -n THREADS -s SECONDS -r FD: each thread posts one event and then
 *          stays alive; once all have posted a byte is written to FD; the
 *          threads exit after SECONDS more
 *
 *   usage: wl_threads MODE [-n THREADS] [-p ALIVE] [-c COUNT] [-s SECONDS]
 *                          [-r FD] [-e NAME] [-a ALARM_SECONDS]
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>
#include <unistd.h>

#include "../harness.h" /* pt_payload, pt_post_payload */

static trace_event_id_t event_id;
static long count = 20;
static pthread_barrier_t created, posted;
static sem_t slots; /* churn: threads that may still start */
static pthread_mutex_t idle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t idle_cond = PTHREAD_COND_INITIALIZER;
static int idle_posted, idle_over;

static void post_events(uint32_t writer, long n)
{
	for (long k = 0; k < n; k++)
		pt_post_payload(event_id, writer, (uint32_t)k);
}

static void *churn_thread(void *arg)
{
	post_events((uint32_t)(uintptr_t)arg, count);
	sem_post(&slots);
	return NULL;
}

static void *alive_thread(void *arg)
{
	pthread_barrier_wait(&created);
	post_events((uint32_t)(uintptr_t)arg, count);
	pthread_barrier_wait(&posted);
	return NULL;
}

static void *idle_thread(void *arg)
{
	post_events((uint32_t)(uintptr_t)arg, 1);
	pthread_mutex_lock(&idle_lock);
	idle_posted++;
	pthread_cond_broadcast(&idle_cond);
	while (!idle_over)
		pthread_cond_wait(&idle_cond, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	return NULL;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), long writer, int detached)
{
	pthread_attr_t attr;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	if (detached)
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	int err = pthread_create(t, &attr, fn, (void *)(uintptr_t)writer);
	pthread_attr_destroy(&attr);
	return err;
}

/* Detached threads; a semaphore keeps at most `alive` of them running. */
static int churn(long threads, long alive)
{
	sem_init(&slots, 0, (unsigned)alive);
	for (long t = 0; t < threads; t++) {
		pthread_t th;
		while (sem_wait(&slots) != 0)
			;
		if (start_thread(&th, churn_thread, t, 1) != 0)
			return 6;
	}
	for (long i = 0; i < alive; i++)
		while (sem_wait(&slots) != 0)
			;
	/* The last threads may still be returning; they posted everything. */
	return 0;
}

static int all_alive(long threads)
{
	pthread_t *th = calloc((size_t)threads, sizeof *th);
	if (!th)
		return 6;
	pthread_barrier_init(&created, NULL, (unsigned)threads);
	pthread_barrier_init(&posted, NULL, (unsigned)threads);
	for (long t = 0; t < threads; t++)
		if (start_thread(&th[t], alive_thread, t, 0) != 0)
			return 6;
	for (long t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	free(th);
	return 0;
}

static int idle(long threads, unsigned seconds, int ready_fd)
{
	pthread_t *th = calloc((size_t)threads, sizeof *th);
	if (!th)
		return 6;
	for (long t = 0; t < threads; t++)
		if (start_thread(&th[t], idle_thread, t, 0) != 0)
			return 6;
	pthread_mutex_lock(&idle_lock);
	while (idle_posted < threads)
		pthread_cond_wait(&idle_cond, &idle_lock);
	pthread_mutex_unlock(&idle_lock);
	if (ready_fd >= 0 && write(ready_fd, "p", 1) != 1)
		return 7;
	while (seconds > 0)
		seconds = sleep(seconds);
	pthread_mutex_lock(&idle_lock);
	idle_over = 1;
	pthread_cond_broadcast(&idle_cond);
	pthread_mutex_unlock(&idle_lock);
	for (long t = 0; t < threads; t++)
		pthread_join(th[t], NULL);
	free(th);
	return 0;
}

int main(int argc, char **argv)
{
	long threads = 100, alive = 50;
	unsigned seconds = 5, alarm_s = 120;
	int ready_fd = -1, opt;
	const char *name = "wl.thread";
	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "n:p:c:s:r:e:a:")) != -1) {
		switch (opt) {
		case 'n': threads = atol(optarg); break;
		case 'p': alive = atol(optarg); break;
		case 'c': count = atol(optarg); break;
		case 's': seconds = (unsigned)atoi(optarg); break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'e': name = optarg; break;
		case 'a': alarm_s = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	if (threads < 1 || alive < 1)
		return 2;
	alarm(alarm_s);
	if (posix_trace_eventid_open(name, &event_id) != 0)
		return 3;
	if (!strcmp(mode, "churn"))
		return churn(threads, alive);
	if (!strcmp(mode, "alive"))
		return all_alive(threads);
	if (!strcmp(mode, "idle"))
		return idle(threads, seconds, ready_fd);
	return 2;
}
