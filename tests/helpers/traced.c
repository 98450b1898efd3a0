/* SPDX-License-Identifier: MIT */
/*
 * traced: an instrumented program for the cross-process tests (t_xproc).
 *
 * It registers event names, reports that it is ready, then posts numbered
 * events: event k has the id of names[k % nnames] and as data the sequence
 * number (uint64_t, base + k) followed by `pad` bytes equal to (uint8_t)k,
 * so that a reader can tell a torn event from a whole one.
 *
 *   -n NAME     register NAME (repeatable; default "xp.tick" and "xp.tock")
 *   -c COUNT    post COUNT events per thread, then exit 0 (default 0: forever)
 *   -d USEC     sleep USEC microseconds after each event (default 1000)
 *   -b BASE     first sequence number (default 0)
 *   -P BYTES    padding bytes after the sequence number (default 0, max 256)
 *   -l NAME -L N  register NAME only after N events; it then joins the cycle
 *   -t THREADS  post from THREADS threads (each counts its own sequence)
 *   -B          the threads post their first events at once (a barrier)
 *   -r FD       write "ready <pthread_self>\n" to FD (default: to stdout)
 *   -g FD       before posting, wait until a byte can be read from FD
 *   -s SEED     every 16 events, scribble random bytes (seeded) over every
 *               stream that traces it (its memfds named posixtrace-stream),
 *               half of them in the first 16 KiB (the header);
 *               untrusted-memory test
 *   -x          after the last event, execv(argv[optind], argv + optind):
 *               e.g.  traced -c 50 -x -- /path/traced -b 1000000
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <trace.h>
#include <unistd.h>

#define MAX_NAMES 16
#define MAX_THREADS 16

static trace_event_id_t ids[MAX_NAMES];
static int nids;
static pthread_mutex_t ids_lock = PTHREAD_MUTEX_INITIALIZER;
static const char *late_name;
static long late_after = -1;
static long count, delay_us = 1000, pad;
static uint64_t base;
static unsigned seed;
static int scribble;
static int start_together;
static pthread_barrier_t start_line;

static void add_name(const char *name)
{
	trace_event_id_t id;
	if (nids < MAX_NAMES && posix_trace_eventid_open(name, &id) == 0)
		ids[nids++] = id;
}

/* Overwrites random runs of bytes of each stream this process records into. */
static void scribble_streams(unsigned *rnd)
{
	char path[320], link[128];
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t n = readlink(path, link, sizeof link - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strncmp(link, "/memfd:posixtrace-stream", 24) != 0)
			continue;
		int fd = open(path, O_RDWR | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_size > 0) {
			size_t size = (size_t)st.st_size;
			unsigned char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (p != MAP_FAILED) {
				/* half of the runs in the first 16 KiB: the header */
				for (int run = 0; run < 64; run++) {
					size_t span = run % 2 && size > 16384 ? 16384 : size;
					size_t off = (size_t)rand_r(rnd) % span;
					size_t len = 1 + (size_t)rand_r(rnd) % 64;
					for (size_t i = off; i < off + len && i < size; i++)
						p[i] = (unsigned char)rand_r(rnd);
				}
				munmap(p, size);
			}
		}
		close(fd);
	}
	closedir(d);
}

static void *post_events(void *arg)
{
	(void)arg;
	unsigned char data[8 + 256];
	unsigned rnd = seed;
	if (start_together)
		pthread_barrier_wait(&start_line);
	for (long k = 0; count == 0 || k < count; k++) {
		if (k == late_after && late_name) {
			pthread_mutex_lock(&ids_lock);
			add_name(late_name);
			pthread_mutex_unlock(&ids_lock);
		}
		uint64_t seq = base + (uint64_t)k;
		memcpy(data, &seq, 8);
		memset(data + 8, (int)(k & 0xff), (size_t)pad);
		pthread_mutex_lock(&ids_lock);
		trace_event_id_t id = ids[k % nids];
		pthread_mutex_unlock(&ids_lock);
		posix_trace_event(id, data, 8 + (size_t)pad);
		if (scribble && k % 16 == 15)
			scribble_streams(&rnd);
		if (delay_us)
			usleep((useconds_t)delay_us);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int ready_fd = 1, go_fd = -1, threads = 1, exec_after = 0, opt;
	while ((opt = getopt(argc, argv, "n:c:d:b:P:l:L:t:r:g:s:xB")) != -1) {
		switch (opt) {
		case 'n': add_name(optarg); break;
		case 'c': count = atol(optarg); break;
		case 'd': delay_us = atol(optarg); break;
		case 'b': base = strtoull(optarg, NULL, 10); break;
		case 'P': pad = atol(optarg) > 256 ? 256 : atol(optarg); break;
		case 'l': late_name = optarg; break;
		case 'L': late_after = atol(optarg); break;
		case 't': threads = atoi(optarg) < 1 ? 1 : atoi(optarg) > MAX_THREADS ? MAX_THREADS : atoi(optarg); break;
		case 'r': ready_fd = atoi(optarg); break;
		case 'g': go_fd = atoi(optarg); break;
		case 's': seed = (unsigned)atol(optarg); scribble = 1; break;
		case 'x': exec_after = 1; break;
		case 'B': start_together = 1; break;
		default: return 2;
		}
	}
	if (nids == 0) {
		add_name("xp.tick");
		add_name("xp.tock");
	}
	if (nids == 0)
		return 3;
	dprintf(ready_fd, "ready %lu\n", (unsigned long)pthread_self());
	if (go_fd >= 0) {
		char c;
		if (read(go_fd, &c, 1) != 1)
			return 4;
	}
	pthread_t tids[MAX_THREADS];
	if (start_together)
		pthread_barrier_init(&start_line, NULL, (unsigned)threads);
	for (int i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, post_events, NULL);
	post_events(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	if (exec_after && optind < argc) {
		execv(argv[optind], argv + optind);
		return 5;
	}
	return 0;
}
