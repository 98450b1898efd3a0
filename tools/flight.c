/* SPDX-License-Identifier: MIT */
/*
 * posixtrace record --flight-recorder: a POSIX_TRACE_LOOP stream with a
 * log that nothing is written to while the command runs (a LOOP stream is
 * flushed only when asked); each snapshot is a posix_trace_flush, which
 * writes the newest events the stream holds, and what the ring overwrote
 * since the last one is counted in POSIX_TRACE_OVERFLOW.  Snapshots are
 * taken when the recorder receives SIGUSR1 (it goes on recording) and at
 * the end, by posix_trace_shutdown's own flush; the summary says what
 * triggered each, so that a command that died of a signal or failed is
 * seen at a glance.  record and attach use it.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"

static volatile sig_atomic_t snapshot_requested;

static void on_sigusr1(int sig)
{
	(void)sig;
	snapshot_requested = 1;
}

void flight_init(struct flight *f, trace_id_t trid, uint64_t t0_ns)
{
	memset(f, 0, sizeof *f);
	f->trid = trid;
	f->t0_ns = t0_ns;
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigusr1;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: the recorder's waitpid returns to take the snapshot. */
	sigaction(SIGUSR1, &sa, NULL);
	note_msg("flight recorder: send SIGUSR1 to %d for a snapshot", (int)getpid());
}

void flight_take_pending(struct flight *f)
{
	if (!snapshot_requested)
		return;
	snapshot_requested = 0;
	uint64_t at = now_realtime_ns();
	int err = posix_trace_flush(f->trid);
	if (err) {
		error_msg("record: snapshot: %s", strerror(err));
		return;
	}
	if (f->count < FLIGHT_MAX_LISTED)
		f->at_ns[f->count] = at;
	f->count++;
}

const char *flight_command_end(bool exited, int status, char *buf, size_t size)
{
	if (!exited)
		snprintf(buf, size, "the recording was stopped");
	else if (WIFSIGNALED(status))
		snprintf(buf, size, "the command was killed by signal %d (%s)", WTERMSIG(status),
		         strsignal(WTERMSIG(status)));
	else if (WIFEXITED(status) && WEXITSTATUS(status))
		snprintf(buf, size, "the command failed (exit status %d)", WEXITSTATUS(status));
	else
		snprintf(buf, size, "the command ended");
	return buf;
}

void flight_report(const struct flight *f, const char *end)
{
	fprintf(stderr, "%s: flight recorder: %llu snapshots\n", PROG,
	        (unsigned long long)f->count + 1);
	for (uint64_t i = 0; i < f->count && i < FLIGHT_MAX_LISTED; i++)
		fprintf(stderr, "  snapshot %llu: SIGUSR1 after %.3f s\n", (unsigned long long)i + 1,
		        (double)(f->at_ns[i] - f->t0_ns) / 1e9);
	if (f->count > FLIGHT_MAX_LISTED)
		fprintf(stderr, "  (%llu more on SIGUSR1)\n",
		        (unsigned long long)(f->count - FLIGHT_MAX_LISTED));
	fprintf(stderr, "  snapshot %llu: at the end: %s\n", (unsigned long long)f->count + 1, end);
}
