/* SPDX-License-Identifier: MIT */
/*
 * t_pidmap: what ids of another pid namespace cost the reader that
 * translates them (src/pidmap.c), linked from the static library, with
 * opendir and readdir wrapped (-Wl,--wrap) so that every look through
 * /proc is counted.  (Security, fourth round, item 8: each id not known yet
 * made the keeper scan the whole of /proc, up to twenty times a second: a
 * traced process in its own namespace that starts a process every
 * millisecond while 2,000 sleep kept its keeper at 38-55 % of a CPU.)
 *
 * A namespace holds PT_SOAK_PIDMAP_SLEEPERS (600) sleeping processes; for
 * a second the test asks every millisecond for an id nobody has, then for
 * one of the sleepers until it is translated.  Checked: at most a burst
 * of PT_PIDMAP_SCAN_BURST scans of /proc, then one per PT_PIDMAP_SCAN_MS
 * (250 ms), no call reads more than a miss's bound of entries, and a
 * sleeper's ids are translated once a scan reaches them (and are its ids:
 * its NSpid names them).
 */
#include "../harness.h"

#include <dirent.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../../src/pidmap.h"

/* Every look through /proc, counted. */
static unsigned long proc_opens, entries;
DIR *__real_opendir(const char *name);
struct dirent *__real_readdir(DIR *d);
DIR *__wrap_opendir(const char *name);
struct dirent *__wrap_readdir(DIR *d);

DIR *__wrap_opendir(const char *name)
{
	if (strcmp(name, "/proc") == 0)
		proc_opens++;
	return __real_opendir(name);
}

struct dirent *__wrap_readdir(DIR *d)
{
	entries++;
	return __real_readdir(d);
}

static uint64_t mono_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t ns_inode(pid_t pid)
{
	char path[64];
	struct stat st;
	snprintf(path, sizeof path, "/proc/%d/ns/pid", (int)pid);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

/* A pid namespace whose first process starts `sleepers` processes that
 * sleep until it dies (it waits for a byte on its stdin's pipe, or EOF);
 * its pid here in *init. */
static pid_t namespace_of_sleepers(long sleepers, pid_t *init, int *hold_end)
{
	int ready[2], hold[2];
	ck_assert_int_eq(pipe(ready), 0);
	ck_assert_int_eq(pipe(hold), 0);
	pid_t middle = fork();
	ck_assert_int_ge(middle, 0);
	if (middle == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		close(hold[1]);
		pid_t first = -1;
		if (unshare(CLONE_NEWPID) != 0 || (first = fork()) < 0)
			_exit(3);
		if (first == 0) {
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			for (long i = 0; i < sleepers; i++) {
				pid_t s = fork();
				if (s == 0) {
					prctl(PR_SET_PDEATHSIG, SIGKILL);
					for (;;)
						pause();
				}
				if (s < 0)
					_exit(4);
			}
			char c = 'r';
			if (write(ready[1], &c, 1) != 1)
				_exit(5);
			while (read(hold[0], &c, 1) < 0)
				;
			_exit(0); /* pid 1 gone: the kernel ends the namespace's processes */
		}
		if (write(ready[1], &first, sizeof first) != sizeof first)
			_exit(5);
		int status;
		waitpid(first, &status, 0);
		_exit(0);
	}
	close(ready[1]);
	close(hold[0]);
	ck_assert_int_eq(read(ready[0], init, sizeof *init), (ssize_t)sizeof *init);
	char c;
	ck_assert_int_eq(read(ready[0], &c, 1), 1);
	close(ready[0]);
	*hold_end = hold[1];
	return middle;
}

START_TEST(misses_cost_one_bounded_scan_per_interval)
{
	if (geteuid() != 0) {
		fprintf(stderr, "t_pidmap: skipped (not root: no pid namespace)\n");
		return;
	}
	const char *v = getenv("PT_SOAK_PIDMAP_SLEEPERS");
	long sleepers = v && atol(v) > 0 ? atol(v) : 600;
	pid_t init;
	int hold;
	pid_t middle = namespace_of_sleepers(sleepers, &init, &hold);
	uint64_t ns = ns_inode(init), own = ns_inode(getpid());
	ck_assert_uint_ne(ns, 0);
	ck_assert_uint_ne(ns, own);
	struct pt_pidmap m;
	pt_pidmap_init(&m, own, 1);

	unsigned long opens0 = proc_opens, most = 0, calls = 0;
	uint64_t t0 = mono_ns();
	while (mono_ns() - t0 < 1000000000ull) {
		/* Ids nobody has (a namespace's pids stay below the sleepers'
		 * count here): each is a miss. */
		struct pt_owner who = {.pid = (int32_t)(100000 + calls), .tid = (int32_t)(100000 + calls)};
		unsigned long before = entries;
		ck_assert_int_eq(pt_pidmap_translate(&m, ns, &who, NULL), -1);
		if (entries - before > most)
			most = entries - before;
		calls++;
		pt_sleep_ms(1);
	}
	uint64_t elapsed = mono_ns() - t0;
	unsigned long scans = proc_opens - opens0;

	/* A sleeper (local pids 2 to sleepers + 1): translated once a scan
	 * reaches it, whatever the misses before. */
	struct pt_owner who = {.pid = (int32_t)(sleepers / 2 + 1), .tid = 0};
	int r = -1;
	for (int waited = 0; r != 1 && r != 2 && waited < 20000; waited += 5) {
		who.pid = (int32_t)(sleepers / 2 + 1);
		r = pt_pidmap_translate(&m, ns, &who, NULL);
		if (r != 1 && r != 2)
			pt_sleep_ms(5);
	}
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/status", (int)who.pid);
	pid_t local = r > 0 ? pt_nspid_last(path, 0) : 0;
	fprintf(stderr,
	        "t_pidmap: %lu misses in %.2f s among %ld sleepers: %lu scans of /proc, at most "
	        "%lu entries read in one call; sleeper %ld: %s (pid %d here)\n",
	        calls, (double)elapsed / 1e9, sleepers, scans, most, sleepers / 2 + 1,
	        r > 0 ? "translated" : "not translated", (int)who.pid);
	close(hold);
	int status;
	waitpid(middle, &status, 0);
	pt_pidmap_free(&m);

	uint64_t intervals = (elapsed + PT_PIDMAP_SCAN_MS * 1000000ull - 1) / (PT_PIDMAP_SCAN_MS * 1000000ull);
	ck_assert_msg(scans <= intervals + PT_PIDMAP_SCAN_BURST,
	              "%lu scans of /proc in %.2f s (at most %llu wanted)", scans, (double)elapsed / 1e9,
	              (unsigned long long)intervals + PT_PIDMAP_SCAN_BURST);
	/* Entries that are not processes (self, sys, ...) are read but not
	 * counted against a read: a few dozen. */
	ck_assert_msg(most <= PT_PIDMAP_MISS_ENTRIES + 128,
	              "one call read %lu entries of /proc (a miss reads at most %u processes)", most,
	              PT_PIDMAP_MISS_ENTRIES);
	ck_assert_msg(r > 0 && local == sleepers / 2 + 1,
	              "sleeper %ld was not translated (%d, its NSpid %d)", sleepers / 2 + 1, r,
	              (int)local);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pidmap");
	TCase *tc = pt_tcase(s, "pidmap");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, misses_cost_one_bounded_scan_per_interval);
	return pt_run(s);
}
