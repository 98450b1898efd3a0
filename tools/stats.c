/*
 * posixtrace stats: what a log holds, in numbers: events per type and per
 * process/thread, the rate over time, losses, the stream's final status and
 * its attributes.
 */
#include <stdlib.h>
#include <string.h>

#include "posixtrace.h"

#define RATE_BUCKETS 10

struct thread_count {
	pid_t pid;
	unsigned long thread;
	uint64_t events;
};

struct stats {
	uint64_t per_type[MAX_EVENT_IDS];
	struct thread_count *threads;
	size_t nthreads;
	uint64_t total, first_ns, last_ns;
	uint64_t *timestamps; /* kept to bucket the rate once the span is known */
	size_t ts_cap;
};

static void stats_help(FILE *out)
{
	fprintf(out,
	        "usage: %s stats LOG\n"
	        "Counts per event type and per process/thread, rate over time, lost\n"
	        "events, stream and log status, and the stream's attributes.\n",
	        PROG);
}

static void count_thread(struct stats *s, pid_t pid, unsigned long thread)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].pid == pid && s->threads[i].thread == thread) {
			s->threads[i].events++;
			return;
		}
	struct thread_count *grown = realloc(s->threads, (s->nthreads + 1) * sizeof *grown);
	if (!grown)
		return;
	s->threads = grown;
	s->threads[s->nthreads++] = (struct thread_count){pid, thread, 1};
}

static void add_event(struct stats *s, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	if (s->total == 0 || ns < s->first_ns)
		s->first_ns = ns;
	if (ns > s->last_ns)
		s->last_ns = ns;
	if (ev->info.posix_event_id < MAX_EVENT_IDS)
		s->per_type[ev->info.posix_event_id]++;
	count_thread(s, ev->info.posix_pid, (unsigned long)ev->info.posix_thread_id);
	if (s->total == s->ts_cap) {
		s->ts_cap = s->ts_cap ? 2 * s->ts_cap : 4096;
		s->timestamps = realloc(s->timestamps, s->ts_cap * sizeof *s->timestamps);
		if (!s->timestamps) {
			error_msg("out of memory");
			exit(EXIT_FAIL);
		}
	}
	s->timestamps[s->total++] = ns;
}

static void print_types(const struct stats *s, struct trace_log *log)
{
	printf("events by type:\n");
	for (trace_event_id_t id = 0; id < MAX_EVENT_IDS; id++)
		if (s->per_type[id])
			printf("  %10llu  %s\n", (unsigned long long)s->per_type[id],
			       name_cache_get(&log->names, id));
}

static void print_threads(const struct stats *s)
{
	printf("events by process/thread:\n");
	for (size_t i = 0; i < s->nthreads; i++)
		printf("  %10llu  pid %d thread 0x%lx\n", (unsigned long long)s->threads[i].events,
		       (int)s->threads[i].pid, s->threads[i].thread);
}

static void print_rate(const struct stats *s)
{
	double span = (double)(s->last_ns - s->first_ns) / 1e9;
	printf("duration: %.9f s, rate: %.1f events/s\n", span,
	       span > 0 ? (double)s->total / span : 0.0);
	if (span <= 0)
		return;
	uint64_t buckets[RATE_BUCKETS] = {0};
	uint64_t width = (s->last_ns - s->first_ns) / RATE_BUCKETS + 1;
	for (size_t i = 0; i < s->total; i++) {
		uint64_t ns = s->timestamps[i] < s->first_ns ? s->first_ns : s->timestamps[i];
		buckets[(ns - s->first_ns) / width]++;
	}
	printf("rate over time (%d slices of %.6f s):\n", RATE_BUCKETS, (double)width / 1e9);
	for (int b = 0; b < RATE_BUCKETS; b++)
		printf("  +%10.6f s  %10llu events  %12.1f events/s\n", (double)(width * b) / 1e9,
		       (unsigned long long)buckets[b], (double)buckets[b] * 1e9 / (double)width);
}

static void print_status(struct trace_log *log)
{
	struct posix_trace_status_info st;
	if (posix_trace_get_status(log->trid, &st) != 0)
		return;
	printf("lost events: %llu\n", (unsigned long long)st.posixtrace_lost_events);
	printf("stream: %s, %s, %s\n",
	       st.posix_stream_status == POSIX_TRACE_RUNNING ? "running" : "suspended",
	       st.posix_stream_full_status == POSIX_TRACE_FULL ? "full" : "not full",
	       st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun");
	printf("log: %s, %s, flush error %d%s\n",
	       st.posix_log_full_status == POSIX_TRACE_FULL ? "full" : "not full",
	       st.posix_log_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun",
	       st.posix_stream_flush_error,
	       st.posix_stream_flush_error ? "" : " (none)");
	if (log->damaged)
		printf("log damaged: events after the damage are unreadable\n");
}

static void print_attributes(struct trace_log *log)
{
	trace_attr_t a;
	char name[TRACE_NAME_MAX], version[TRACE_NAME_MAX];
	struct timespec created, res;
	size_t stream_size, data_size, log_size;
	int sp, lp, inh;
	if (posix_trace_get_attr(log->trid, &a) != 0)
		return;
	posix_trace_attr_getname(&a, name);
	posix_trace_attr_getgenversion(&a, version);
	posix_trace_attr_getcreatetime(&a, &created);
	posix_trace_attr_getclockres(&a, &res);
	posix_trace_attr_getstreamsize(&a, &stream_size);
	posix_trace_attr_getmaxdatasize(&a, &data_size);
	posix_trace_attr_getlogsize(&a, &log_size);
	posix_trace_attr_getstreamfullpolicy(&a, &sp);
	posix_trace_attr_getlogfullpolicy(&a, &lp);
	posix_trace_attr_getinherited(&a, &inh);
	posix_trace_attr_destroy(&a);
	char when[32];
	format_time(ts_ns(&created), when, sizeof when);
	printf("attributes:\n  name: %s\n  generation version: %s\n  created: %s\n"
	       "  clock resolution: %ld ns\n  stream size: %zu, full policy: %s\n"
	       "  max data size: %zu\n  log size: %zu, full policy: %s\n  inheritance: %s\n",
	       name, version, when, res.tv_nsec + 1000000000L * (long)res.tv_sec, stream_size,
	       policy_name(sp), data_size, log_size, policy_name(lp),
	       inh == POSIX_TRACE_INHERITED ? "inherited" : "close for child");
}

int cmd_stats(int argc, char **argv)
{
	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		stats_help(stdout);
		return 0;
	}
	if (argc < 2)
		return usage_error("stats", "no LOG given");
	if (argc > 2)
		return usage_error("stats", "too many arguments");
	if (argv[1][0] == '-')
		return usage_error("stats", "unknown option '%s'", argv[1]);
	struct trace_log *log = trace_log_open(argv[1]);
	if (!log)
		return EXIT_FAIL;
	struct stats *s = xmalloc(sizeof *s);
	memset(s, 0, sizeof *s);
	struct trace_event ev;
	int rc;
	while ((rc = trace_log_next(log, &ev)) > 0)
		add_event(s, &ev);
	printf("log: %s\nevents: %llu\n", log->path, (unsigned long long)s->total);
	print_types(s, log);
	print_threads(s);
	print_rate(s);
	print_status(log);
	print_attributes(log);
	trace_log_close(log);
	free(s->threads);
	free(s->timestamps);
	free(s);
	return rc < 0 ? EXIT_FAIL : 0;
}
