/*
 * Chrome trace event format: every trace event becomes an instant event
 * ("ph":"i", thread scope) with its data in "args"; processes and threads
 * get names through metadata events ("ph":"M").  Timestamps are
 * microseconds after the first event (a double cannot hold nanoseconds
 * since the Epoch); the absolute start is in "otherData".
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "posixtrace.h"

/* Chrome wants small thread ids: threads are numbered per process in order
 * of appearance, and the pthread_t goes into the thread's name. */
struct chrome_thread {
	pid_t pid;
	unsigned long thread;
	int tid;
};

struct chrome_writer {
	FILE *out;
	bool first_written;
	uint64_t first_ns;
	struct chrome_thread *threads;
	size_t nthreads;
	char trace_name[TRACE_NAME_MAX];
	pid_t controller; /* pid of the START event: the recorder, not the program */
};

static int thread_number(struct chrome_writer *w, pid_t pid, unsigned long thread)
{
	int per_pid = 0;
	for (size_t i = 0; i < w->nthreads; i++) {
		if (w->threads[i].pid != pid)
			continue;
		if (w->threads[i].thread == thread)
			return w->threads[i].tid;
		per_pid++;
	}
	struct chrome_thread *grown = realloc(w->threads, (w->nthreads + 1) * sizeof *grown);
	if (!grown) {
		error_msg("out of memory");
		exit(EXIT_FAIL);
	}
	w->threads = grown;
	w->threads[w->nthreads++] = (struct chrome_thread){pid, thread, per_pid + 1};
	return per_pid + 1;
}

static void separator(struct chrome_writer *w)
{
	fputs(w->first_written ? ",\n" : "\n", w->out);
	w->first_written = true;
}

static void write_event(struct chrome_writer *w, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	uint64_t rel = ns > w->first_ns ? ns - w->first_ns : 0;
	int tid = thread_number(w, ev->info.posix_pid, (unsigned long)ev->info.posix_thread_id);
	separator(w);
	fputs("{\"name\":", w->out);
	print_json_string(w->out, (const unsigned char *)ev->name, strlen(ev->name));
	fprintf(w->out, ",\"cat\":\"%s\",\"ph\":\"i\",\"s\":\"t\",\"ts\":%llu.%03u,\"pid\":%d,"
	                "\"tid\":%d,\"args\":{\"id\":%u,\"thread\":\"0x%lx\",\"prog_address\":\"0x%lx\","
	                "\"truncation\":%d,\"len\":%zu,\"time\":\"%llu.%09u\"",
	        is_system_event(ev->info.posix_event_id) ? "system" : "user",
	        (unsigned long long)(rel / 1000), (unsigned)(rel % 1000), (int)ev->info.posix_pid,
	        tid, ev->info.posix_event_id, (unsigned long)ev->info.posix_thread_id,
	        (unsigned long)(uintptr_t)ev->info.posix_prog_address,
	        ev->info.posix_truncation_status, ev->len,
	        (unsigned long long)(ns / 1000000000u), (unsigned)(ns % 1000000000u));
	if (is_printable_text(ev->data, ev->len)) {
		fputs(",\"data\":", w->out);
		print_json_string(w->out, ev->data,
		                  ev->data[ev->len - 1] == '\0' ? ev->len - 1 : ev->len);
	} else if (ev->len) {
		fputs(",\"data_hex\":\"", w->out);
		print_hex(w->out, ev->data, ev->len);
		fputc('"', w->out);
	}
	fputs("}}", w->out);
}

static void write_name_metadata(struct chrome_writer *w, const char *what, pid_t pid, int tid,
                                const char *name)
{
	separator(w);
	fprintf(w->out, "{\"name\":\"%s\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
	        what, (int)pid, tid);
	print_json_string(w->out, (const unsigned char *)name, strlen(name));
	fputs("}}", w->out);
}

static void process_label(const struct chrome_writer *w, pid_t pid, char *buf, size_t size)
{
	if (pid == 0)
		snprintf(buf, size, "trace system events");
	else if (pid == w->controller)
		snprintf(buf, size, "posixtrace controller (%d)", (int)pid);
	else
		snprintf(buf, size, "%s (%d)", w->trace_name[0] ? w->trace_name : "process", (int)pid);
}

static void write_names(struct chrome_writer *w)
{
	char label[TRACE_NAME_MAX + 64];
	for (size_t i = 0; i < w->nthreads; i++) {
		const struct chrome_thread *t = &w->threads[i];
		if (t->tid == 1) {
			process_label(w, t->pid, label, sizeof label);
			write_name_metadata(w, "process_name", t->pid, 0, label);
		}
		snprintf(label, sizeof label, "thread 0x%lx", t->thread);
		write_name_metadata(w, "thread_name", t->pid, t->tid, label);
	}
}

static void read_trace_name(struct trace_log *log, char *name)
{
	trace_attr_t a;
	name[0] = '\0';
	if (posix_trace_get_attr(log->trid, &a) == 0) {
		posix_trace_attr_getname(&a, name);
		posix_trace_attr_destroy(&a);
	}
}

static int write_chrome(struct chrome_writer *w, struct trace_log *log, struct progress *pr)
{
	struct trace_event ev;
	int rc;
	fputs("{\"traceEvents\":[", w->out);
	while ((rc = trace_log_next(log, &ev)) > 0) {
		if (log->events_read == 1)
			w->first_ns = ts_ns(&ev.info.posix_timestamp);
		if (ev.info.posix_event_id == POSIX_TRACE_START && !w->controller)
			w->controller = ev.info.posix_pid;
		write_event(w, &ev);
		progress_step(pr);
	}
	write_names(w);
	uint64_t lost = 0;
	trace_log_lost(log, &lost);
	fprintf(w->out, "\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"trace_name\":");
	print_json_string(w->out, (const unsigned char *)w->trace_name, strlen(w->trace_name));
	fprintf(w->out, ",\"start\":\"%llu.%09u\",\"lost_events\":%llu,\"damaged\":%s}}\n",
	        (unsigned long long)(w->first_ns / 1000000000u),
	        (unsigned)(w->first_ns % 1000000000u), (unsigned long long)lost,
	        log->damaged ? "true" : "false");
	return rc;
}

int convert_to_chrome(struct trace_log *log, const char *file)
{
	struct chrome_writer w = {0};
	struct progress pr;
	bool to_stdout = !strcmp(file, "-");
	w.out = to_stdout ? stdout : fopen(file, "w");
	if (!w.out) {
		error_msg("%s: %s", file, strerror(errno));
		return EXIT_FAIL;
	}
	read_trace_name(log, w.trace_name);
	progress_init(&pr, "converting", isatty(STDERR_FILENO) ? trace_log_count(log) : 0);
	int rc = write_chrome(&w, log, &pr);
	progress_end(&pr);
	free(w.threads);
	if ((to_stdout ? fflush(w.out) : fclose(w.out)) != 0) {
		error_msg("%s: %s", file, strerror(errno));
		return EXIT_FAIL;
	}
	return rc < 0 ? EXIT_FAIL : 0;
}
