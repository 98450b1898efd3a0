/* SPDX-License-Identifier: MIT */
/*
 * wl_server: a pre-forking server for the workload tests (t_workload).
 *
 * The parent opens the event names "req_begin" and "req_end" and never posts
 * itself; it forks the workers, which inherit the names and post one
 * begin/end pair per request.  Some workers are killed with SIGKILL halfway
 * through (while they keep posting) and a fresh worker is forked in their
 * place to serve the requests they had not finished, as a supervisor would.
 *
 * Worker slot w posts as writer w; the i-th replacement posts as writer
 * WORKERS + i.  A writer's event k has the type req_begin (k even) or
 * req_end (k odd) and the 16-byte payload {writer, k, pt_mix(writer, k)}.
 * After each posix_trace_event returns, the worker stores k + 1 in its slot
 * of an anonymous MAP_SHARED mapping made before the first fork, so the
 * parent knows how many calls returned even for a worker it killed (whose
 * call in flight may or may not have been recorded).
 *
 * At the end the parent writes one line per writer to the report file:
 *     writer W posted N killed K
 * (K is 1 for a worker killed while posting) and exits 0 if every worker it
 * did not kill exited 0.
 *
 *   -w WORKERS   workers (default 8, at most 32)
 *   -r REQUESTS  requests per worker slot (default 5000)
 *   -k KILLS     workers to kill halfway and replace (default 2)
 *   -o FILE      the report (default: standard output)
 *   -a SECONDS   give up (SIGALRM) after SECONDS (default 120)
 */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <trace.h>
#include <unistd.h>

#include "../harness.h" /* pt_payload, pt_post_payload */

#define MAX_WORKERS 32
#define MAX_WRITERS (2 * MAX_WORKERS)

struct shared {
	_Atomic uint64_t posted[MAX_WRITERS]; /* calls that returned, per writer */
};

static trace_event_id_t req_begin, req_end;
static struct shared *shm;

static void post(uint32_t writer, uint32_t seq)
{
	pt_post_payload(seq % 2 ? req_end : req_begin, writer, seq);
	atomic_store_explicit(&shm->posted[writer], (uint64_t)seq + 1, memory_order_release);
}

/* Serves `requests` requests.  A worker that is to be killed slows down
 * after half of them, so that the kill finds it posting; it still ends by
 * itself if the kill never comes. */
static void serve(uint32_t writer, long requests, int victim)
{
	for (long r = 0; r < requests; r++) {
		post(writer, (uint32_t)(2 * r));
		post(writer, (uint32_t)(2 * r + 1));
		if (victim && r >= requests / 2)
			usleep(50);
	}
}

static pid_t fork_worker(uint32_t writer, long requests, int victim)
{
	pid_t pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		serve(writer, requests, victim);
		_exit(0);
	}
	return pid;
}

/* Waits until the victim has posted half of its events, then kills it. */
static int kill_halfway(pid_t pid, uint32_t writer, long requests)
{
	int status;
	while (atomic_load_explicit(&shm->posted[writer], memory_order_acquire) <
	       (uint64_t)requests) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return 0; /* ended before the kill */
		usleep(100);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
}

int main(int argc, char **argv)
{
	int workers = 8, kills = 2, opt;
	long requests = 5000;
	unsigned alarm_s = 120;
	const char *report = NULL;
	while ((opt = getopt(argc, argv, "w:r:k:o:a:")) != -1) {
		switch (opt) {
		case 'w': workers = atoi(optarg); break;
		case 'r': requests = atol(optarg); break;
		case 'k': kills = atoi(optarg); break;
		case 'o': report = optarg; break;
		case 'a': alarm_s = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	if (workers < 1 || workers > MAX_WORKERS || kills < 0 || kills > workers || requests < 2)
		return 2;
	alarm(alarm_s);
	if (posix_trace_eventid_open("req_begin", &req_begin) ||
	    posix_trace_eventid_open("req_end", &req_end))
		return 3;
	shm = mmap(NULL, sizeof *shm, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shm == MAP_FAILED)
		return 4;

	pid_t pids[MAX_WRITERS];
	int killed[MAX_WRITERS] = {0};
	for (int w = 0; w < workers; w++)
		pids[w] = fork_worker((uint32_t)w, requests, w < kills);
	int failed = 0, nwriters = workers;
	for (int w = 0; w < kills; w++) {
		killed[w] = kill_halfway(pids[w], (uint32_t)w, requests);
		pids[w] = 0;
		if (!killed[w])
			continue;
		/* the replacement serves the requests the victim did not end */
		long done = (long)(atomic_load(&shm->posted[w]) / 2);
		pids[nwriters] = fork_worker((uint32_t)nwriters, requests - done, 0);
		nwriters++;
	}
	for (int w = 0; w < nwriters; w++) {
		int status;
		if (pids[w] == 0)
			continue;
		waitpid(pids[w], &status, 0);
		failed |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	}

	FILE *out = report ? fopen(report, "w") : stdout;
	if (!out)
		return 5;
	for (int w = 0; w < nwriters; w++)
		fprintf(out, "writer %d posted %llu killed %d\n", w,
		        (unsigned long long)atomic_load(&shm->posted[w]), killed[w]);
	if (fclose(out) != 0)
		return 5;
	return failed ? 6 : 0;
}
