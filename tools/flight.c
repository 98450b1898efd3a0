/* SPDX-License-Identifier: MIT */
/*
 * posixtrace record --flight-recorder: a POSIX_TRACE_LOOP stream with a
 * log that nothing is written to while the command runs (a LOOP stream is
 * flushed only when asked); each snapshot is a posix_trace_flush, which
 * writes the newest events the stream holds, and what the ring overwrote
 * since the last one is counted in POSIX_TRACE_OVERFLOW.  Snapshots are
 * taken when the recorder receives SIGUSR1 (it goes on recording), when a
 * traced process posts an event of a --trigger type (the library's
 * triggers: the stream's keeper takes it, posixtrace_set_trigger) and at
 * the end, by posix_trace_shutdown's own flush; the summary says what
 * took each, read back from the log, so that a command that died of a
 * signal or failed is seen at a glance.  record and attach use it.
 */
#include <errno.h>
#include <fcntl.h>
#include <posixtrace.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tool.h"

static volatile sig_atomic_t snapshot_requested;

static void on_sigusr1(int sig)
{
	(void)sig;
	snapshot_requested = 1;
}

bool flight_set_triggers(trace_id_t trid, const struct name_list *triggers)
{
	trace_event_set_t set;
	posix_trace_eventset_empty(&set);
	for (size_t i = 0; i < triggers->count; i++) {
		trace_event_id_t id;
		int err = posix_trace_trid_eventid_open(trid, triggers->names[i], &id);
		if (err) {
			error_msg("--trigger %s: %s", triggers->names[i], strerror(err));
			return false;
		}
		posix_trace_eventset_add(id, &set);
	}
	int err = triggers->count ? posixtrace_set_trigger(trid, &set) : 0;
	if (err)
		error_msg("--trigger: %s", strerror(err));
	return err == 0;
}

void flight_init(struct flight *f, trace_id_t trid, uint64_t t0_ns,
                 const struct name_list *triggers)
{
	memset(f, 0, sizeof *f);
	f->trid = trid;
	f->t0_ns = t0_ns;
	f->triggers = triggers;
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

void flight_before_shutdown(struct flight *f)
{
	trace_event_set_t set;
	if (posixtrace_get_trigger(f->trid, &set, &f->triggered) != 0)
		f->triggered = 0;
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

/* The snapshots as the log holds them, each named by what took it: a
 * FLUSH_STOP posted by this process ends one of its own (SIGUSR1 in
 * order, the end last); one posted by another process ends a trigger's,
 * named by the last event of a trigger type before it.  False when the
 * log cannot be read back. */
static bool report_from_log(const struct flight *f, const char *end, int logfd, const char *path)
{
	struct stat st;
	if (logfd < 0 || !path || fstat(logfd, &st) != 0 || !S_ISREG(st.st_mode))
		return false;
	char *text = NULL;
	size_t text_len = 0;
	FILE *lines = open_memstream(&text, &text_len);
	struct trace_log *log = lines ? trace_log_open_fd(logfd, path) : NULL;
	if (!log) {
		if (lines)
			fclose(lines);
		free(text);
		return false;
	}
	log->without_thread_names = true;
	struct trace_event ev;
	char trigger[TRACE_EVENT_NAME_MAX + 1] = "";
	uint64_t n = 0, own = 0, trigger_ns = 0;
	pid_t trigger_pid = 0;
	bool listed = false;
	while (trace_log_next(log, &ev) > 0) {
		uint64_t ns = (uint64_t)ev.info.posix_timestamp.tv_sec * 1000000000u +
		              (uint64_t)ev.info.posix_timestamp.tv_nsec;
		double after = ns >= f->t0_ns ? (double)(ns - f->t0_ns) / 1e9 : 0;
		if (ev.name && f->triggers && name_list_has(f->triggers, ev.name)) {
			snprintf(trigger, sizeof trigger, "%s", ev.name);
			trigger_pid = ev.info.posix_pid;
			trigger_ns = ns;
		}
		if (ev.info.posix_event_id != POSIX_TRACE_FLUSH_STOP)
			continue;
		listed = true;
		n++;
		if (ev.info.posix_pid != getpid() && trigger[0]) {
			char name[4 * TRACE_EVENT_NAME_MAX + 1];
			escape_text(trigger, name, sizeof name);
			fprintf(lines, "  snapshot %llu: trigger %s posted by %d after %.3f s\n",
			        (unsigned long long)n, name, (int)trigger_pid,
			        trigger_ns >= f->t0_ns ? (double)(trigger_ns - f->t0_ns) / 1e9 : 0);
		} else if (ev.info.posix_pid != getpid()) {
			fprintf(lines, "  snapshot %llu: asked by process %d after %.3f s\n",
			        (unsigned long long)n, (int)ev.info.posix_pid, after);
		} else if (own++ < f->count) {
			fprintf(lines, "  snapshot %llu: SIGUSR1 after %.3f s\n", (unsigned long long)n,
			        after);
		} else {
			fprintf(lines, "  snapshot %llu: at the end: %s\n", (unsigned long long)n, end);
		}
		trigger[0] = '\0';
	}
	struct posixtrace_log_info info;
	uint64_t suppressed = posixtrace_log_info(log->trid, &info) == 0
	                          ? info.posixtrace_triggers_suppressed
	                          : 0;
	trace_log_close(log);
	fclose(lines);
	if (listed)
		fprintf(stderr, "%s: flight recorder: %llu snapshots\n%s", PROG, (unsigned long long)n,
		        text);
	if (listed && suppressed)
		fprintf(stderr,
		        "  %llu trigger events took no snapshot (at most one per type a second, "
		        "64 in all)\n",
		        (unsigned long long)suppressed);
	free(text);
	return listed;
}

void flight_report(const struct flight *f, const char *end, int logfd, const char *path)
{
	if (report_from_log(f, end, logfd, path))
		return;
	fprintf(stderr, "%s: flight recorder: %llu snapshots\n", PROG,
	        (unsigned long long)(f->count + f->triggered + 1));
	if (f->triggered)
		fprintf(stderr, "  %llu taken by --trigger events\n", (unsigned long long)f->triggered);
	for (uint64_t i = 0; i < f->count && i < FLIGHT_MAX_LISTED; i++)
		fprintf(stderr, "  snapshot %llu: SIGUSR1 after %.3f s\n", (unsigned long long)i + 1,
		        (double)(f->at_ns[i] - f->t0_ns) / 1e9);
	if (f->count > FLIGHT_MAX_LISTED)
		fprintf(stderr, "  (%llu more on SIGUSR1)\n",
		        (unsigned long long)(f->count - FLIGHT_MAX_LISTED));
	fprintf(stderr, "  snapshot %llu: at the end: %s\n",
	        (unsigned long long)(f->count + f->triggered + 1), end);
}
