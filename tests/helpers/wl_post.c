/* SPDX-License-Identifier: MIT */
/*
 * wl_post: a short-lived instrumented process for the workload tests
 * (t_workload): a shell loop or a build runs it thousands of times, and the
 * three-process scenario uses it as the instrumented application.
 *
 * It opens its event names, posts numbered events from its main thread and
 * exits.  Event k has the type names[k % nnames] and the 16-byte payload
 * {writer, k, pt_mix(writer, k)}, so a reader can check counts, per-writer
 * order and whole records (the layout is the one t_workload.c reads).
 *
 *   -w WRITER   writer id carried in every payload (default 0)
 *   -c COUNT    events to post (default 3)
 *   -n NAME     an event name (repeatable; default "wl.step")
 *   -d USEC     sleep USEC microseconds after each event (default 0)
 *   -s NSEC     spin NSEC nanoseconds after each event (default 0): a steady
 *               stream of events without the scheduler's sleep granularity
 *   -g FD       before posting, wait until a byte can be read from FD
 *   -m FILE     shared progress file (struct pt_progress of tests/harness.h, mapped
 *               MAP_SHARED): `ready` is set once the names are open, the
 *               number of calls that returned is stored after each
 *               posix_trace_event returns, posting ends early once `stop`
 *               is set, and `done` is set at the end
 *   -H FD       after posting, wait until a byte (or EOF) can be read from FD
 *               before exiting
 *   -a SECONDS  give up (SIGALRM) after SECONDS (default 120), so that a
 *               process left behind by a killed test does not live on
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <trace.h>
#include <unistd.h>

#include "../harness.h" /* pt_post_payload, pt_progress */

#define MAX_NAMES 8

static struct pt_progress *map_progress(const char *path)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	void *p = mmap(NULL, sizeof(struct pt_progress), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

static void spin_ns(long ns)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) < ns);
}

static int wait_byte(int fd)
{
	char c;
	return read(fd, &c, 1) >= 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	const char *names[MAX_NAMES];
	trace_event_id_t ids[MAX_NAMES];
	int nnames = 0, go_fd = -1, hold_fd = -1, opt;
	uint32_t writer = 0;
	long count = 3, delay_us = 0, spin = 0;
	unsigned alarm_s = 120;
	struct pt_progress *progress = NULL;

	while ((opt = getopt(argc, argv, "w:c:n:d:s:g:m:H:a:")) != -1) {
		switch (opt) {
		case 'w': writer = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 'c': count = atol(optarg); break;
		case 'n': if (nnames < MAX_NAMES) names[nnames++] = optarg; break;
		case 'd': delay_us = atol(optarg); break;
		case 's': spin = atol(optarg); break;
		case 'g': go_fd = atoi(optarg); break;
		case 'm':
			progress = map_progress(optarg);
			if (!progress)
				return 3;
			break;
		case 'H': hold_fd = atoi(optarg); break;
		case 'a': alarm_s = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	alarm(alarm_s);
	if (nnames == 0)
		names[nnames++] = "wl.step";
	for (int i = 0; i < nnames; i++)
		if (posix_trace_eventid_open(names[i], &ids[i]) != 0)
			return 4;
	if (progress)
		atomic_store(&progress->ready, 1);
	if (go_fd >= 0 && wait_byte(go_fd) != 0)
		return 5;
	for (long k = 0; k < count; k++) {
		if (progress && atomic_load(&progress->stop))
			break;
		pt_post_payload(ids[k % nnames], writer, (uint32_t)k);
		if (progress)
			atomic_store(&progress->posted, (uint64_t)k + 1);
		if (delay_us)
			usleep((useconds_t)delay_us);
		if (spin)
			spin_ns(spin);
	}
	if (progress)
		atomic_store(&progress->done, 1);
	if (hold_fd >= 0)
		wait_byte(hold_fd);
	return 0;
}
