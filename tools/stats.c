/* SPDX-License-Identifier: MIT */
/*
 * posixtrace stats: what a log holds, in numbers: events per type and per
 * process/thread, the rate of user events over time (system events are
 * counted apart: a stream's own START/STOP/FLUSH events say nothing of how
 * busy the program was), the durations of begin/end pairs (durations.c),
 * where events were lost, the stream's final status and its attributes.
 * Several logs are read as one (logset.c): types by name (ids are each
 * log's), processes by host and pid, events per host, each log's status
 * and attributes.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

#define RATE_BUCKETS 10
/* Memory does not grow with the log: threads listed one by one, gaps of
 * the loss timeline; what is past them is counted. */
#define STATS_THREADS_MAX 65536
#define LOSS_GAPS_MAX 1024

/* One OVERFLOW .. RESUME bracket: events were lost between the two times. */
struct loss_gap {
	bool has_overflow, has_resume;
	uint64_t overflow_ns, resume_ns;
};

struct stats {
	uint64_t (*per_type)[MAX_EVENT_IDS]; /* by source log, then id */
	uint64_t *per_host;
	struct thread_table threads;
	uint64_t *thread_events; /* by thread table index */
	size_t thread_cap;
	uint64_t events_past_threads; /* of threads past STATS_THREADS_MAX */
	uint64_t total, user, system, undated;
	uint64_t user_dated; /* user events with a time: the rates are over these */
	uint64_t user_first_ns, user_last_ns;
	struct loss_gap *gaps;
	size_t ngaps, gaps_cap;
	uint64_t gaps_past; /* OVERFLOW and RESUME events past LOSS_GAPS_MAX gaps */
	uint64_t base_ns; /* relative times count from here, as in dump */
};

struct stats_options {
	char **paths;
	size_t npaths;
	struct clock_offsets offsets;
	bool per_thread;
	struct pair_rules pairs;
	struct site_options sites;
};

static void stats_help(FILE *out)
{
	fprintf(out,
	        "usage: %s stats [OPTIONS] LOG...\n"
	        "What LOG (- for standard input) holds: events per type and per\n"
	        "process/thread (sorted by pid, then thread); user events, their duration\n"
	        "and rate over time (ten slices); system events apart; the durations of\n"
	        "begin/end pairs (NAME_begin .. NAME_end of one thread, as convert pairs\n"
	        "them): count, min, p50, p90, p99 (within 0.8 %%), max, the slowest three\n"
	        "and a histogram per name, in bounded memory; lost events and where\n"
	        "they were lost (each OVERFLOW .. RESUME bracket); the final stream and\n"
	        "log status; the stream's attributes;\n"
	        "the hottest call sites (function+offset and file:line, from the images\n"
	        "the traced processes described) with the event types posted at each.\n"
	        "Several LOGs (files or rotated directories) are read as one, merged\n"
	        "on one time line as dump merges them: each log's host and how well\n"
	        "they order first, events per host, processes by host and pid, each\n"
	        "log's status and attributes.\n\n"
	        "  --pair BEGIN=END   also pair these two event names (repeatable)\n"
	        "  --no-pair          no NAME_begin/NAME_end pairing (--pair still applies)\n"
	        "  --per-thread       durations per name and thread\n"
	        LOGSET_HELP
	        SITE_HELP
	        "  -h, --help         this help\n"
	        "Exit status: 0, 1 on failure, 2 for usage errors, 3 if the log is damaged\n"
	        "inside (after printing what could be read).\n",
	        PROG);
}

static void count_thread(struct stats *s, const struct trace_event *ev)
{
	pid_t pid = ev->info.posix_pid;
	unsigned long thread = (unsigned long)ev->info.posix_thread_id;
	size_t i = thread_table_find(&s->threads, ev->host, pid, thread);
	if (i == SIZE_MAX && s->threads.count == STATS_THREADS_MAX) {
		s->events_past_threads++;
		return;
	}
	i = thread_table_index(&s->threads, ev->host, pid, thread, NULL);
	grow_zeroed((void **)&s->thread_events, &s->thread_cap, i, sizeof *s->thread_events);
	s->thread_events[i]++;
}

static void note_loss(struct stats *s, const struct trace_event *ev)
{
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	struct loss_gap *open = s->ngaps && !s->gaps[s->ngaps - 1].has_resume
	                                ? &s->gaps[s->ngaps - 1] : NULL;
	if (ev->info.posix_event_id == POSIX_TRACE_RESUME && open) {
		open->has_resume = true;
		open->resume_ns = ns;
		return;
	}
	if (s->ngaps == LOSS_GAPS_MAX) {
		s->gaps_past++;
		return;
	}
	if (s->ngaps == s->gaps_cap) {
		s->gaps_cap = s->gaps_cap ? 2 * s->gaps_cap : 16;
		s->gaps = xrealloc(s->gaps, s->gaps_cap * sizeof *s->gaps);
	}
	struct loss_gap *g = &s->gaps[s->ngaps++];
	memset(g, 0, sizeof *g);
	if (ev->info.posix_event_id == POSIX_TRACE_OVERFLOW) {
		g->has_overflow = true;
		g->overflow_ns = ns;
	} else { /* a RESUME with no OVERFLOW before it */
		g->has_resume = true;
		g->resume_ns = ns;
	}
}

static void add_event(struct stats *s, const struct trace_event *ev)
{
	trace_event_id_t id = ev->info.posix_event_id;
	uint64_t ns = ts_ns(&ev->info.posix_timestamp);
	s->total++;
	if (id < MAX_EVENT_IDS)
		s->per_type[ev->source][id]++;
	s->per_host[ev->host]++;
	count_thread(s, ev);
	if (!event_has_time(ev))
		s->undated++;
	if (id == POSIX_TRACE_OVERFLOW || id == POSIX_TRACE_RESUME)
		note_loss(s, ev);
	if (is_system_event(id)) {
		s->system++;
		return;
	}
	s->user++;
	if (!event_has_time(ev))
		return; /* counted, but no time to place it at */
	if (s->user_dated == 0 || ns < s->user_first_ns)
		s->user_first_ns = ns;
	if (s->user_dated == 0 || ns > s->user_last_ns)
		s->user_last_ns = ns;
	s->user_dated++;
}

struct type_row {
	char name[TRACE_EVENT_NAME_MAX + 1];
	uint64_t count;
};

/* By name: ids are each log's own.  In the order of the first log's ids,
 * then of the next log's new names. */
static void print_types(const struct stats *s, struct trace_log *log)
{
	char name[ESCAPED_SIZE(TRACE_EVENT_NAME_MAX)];
	size_t nsrc = trace_log_sources(log), nrows = 0;
	struct type_row *rows = xmalloc(nsrc * MAX_EVENT_IDS * sizeof *rows);
	for (size_t src = 0; src < nsrc; src++) {
		struct trace_log *one = trace_log_source(log, (uint32_t)src);
		for (trace_event_id_t id = 0; id < MAX_EVENT_IDS; id++) {
			if (!s->per_type[src][id])
				continue;
			const char *n = name_cache_get(&one->names, id);
			size_t r = 0;
			while (r < nrows && strcmp(rows[r].name, n))
				r++;
			if (r == nrows) {
				snprintf(rows[r].name, sizeof rows[r].name, "%s", n);
				rows[nrows++].count = 0;
			}
			rows[r].count += s->per_type[src][id];
		}
	}
	printf("events by type:\n");
	for (size_t r = 0; r < nrows; r++)
		printf("  %10llu  %s\n", (unsigned long long)rows[r].count,
		       escape_text(rows[r].name, name, sizeof name));
	free(rows);
}

static void print_hosts(const struct stats *s, const struct trace_log *log)
{
	if (log->nhosts < 2)
		return;
	printf("events by host:\n");
	for (uint32_t h = 0; h < log->nhosts; h++)
		printf("  %10llu  %s\n", (unsigned long long)s->per_host[h], log->hosts[h].label);
}

/* qsort has no argument for the keys: a merge sort of indexes into them.
 * (Only this listing is sorted; events never are.) */
static void sort_indexes(size_t *idx, size_t *tmp, size_t n, const struct thread_key *keys)
{
	if (n < 2)
		return;
	size_t half = n / 2;
	sort_indexes(idx, tmp, half, keys);
	sort_indexes(idx + half, tmp, n - half, keys);
	size_t i = 0, j = half, k = 0;
	while (i < half && j < n)
		tmp[k++] = compare_thread_keys(&keys[idx[j]], &keys[idx[i]]) < 0 ? idx[j++] : idx[i++];
	while (i < half)
		tmp[k++] = idx[i++];
	while (j < n)
		tmp[k++] = idx[j++];
	memcpy(idx, tmp, n * sizeof *idx);
}

static void print_threads(const struct stats *s, const struct trace_log *log)
{
	size_t n = s->threads.count;
	size_t *idx = xmalloc(n * sizeof *idx), *tmp = xmalloc(n * sizeof *tmp);
	for (size_t i = 0; i < n; i++)
		idx[i] = i;
	sort_indexes(idx, tmp, n, s->threads.keys);
	printf("events by process/thread:\n");
	for (size_t i = 0; i < n; i++) {
		const struct thread_key *k = &s->threads.keys[idx[i]];
		printf("  %10llu  ", (unsigned long long)s->thread_events[idx[i]]);
		if (log->nhosts > 1 && k->host < log->nhosts)
			printf("host %s ", log->hosts[k->host].label);
		printf("pid %d thread 0x%lx\n", (int)k->pid, k->thread);
	}
	if (s->events_past_threads)
		printf("  %10llu  of threads past the first %d (not listed one by one)\n",
		       (unsigned long long)s->events_past_threads, STATS_THREADS_MAX);
	free(idx);
	free(tmp);
}

static void print_relative(const struct stats *s, uint64_t ns)
{
	char rel[32], abs[32];
	format_signed_time((int64_t)(ns - s->base_ns), rel, sizeof rel);
	format_time(ns, abs, sizeof abs);
	printf("%s (%s)", rel, abs);
}

/* Second pass: user events into slices of the span they cover. */
static void print_rate_slices(const struct stats *s, struct trace_log *log)
{
	uint64_t buckets[RATE_BUCKETS] = {0};
	uint64_t width = (s->user_last_ns - s->user_first_ns) / RATE_BUCKETS + 1;
	struct trace_event ev;
	trace_log_rewind(log);
	while (trace_log_next(log, &ev) > 0) {
		uint64_t ns = ts_ns(&ev.info.posix_timestamp);
		if (is_system_event(ev.info.posix_event_id) || !event_has_time(&ev) ||
		    ns < s->user_first_ns || (ns - s->user_first_ns) / width >= RATE_BUCKETS)
			continue; /* (the log is read twice alike; this only keeps it safe) */
		buckets[(ns - s->user_first_ns) / width]++;
	}
	printf("rate of user events over time (%d slices of %.6f s):\n", RATE_BUCKETS,
	       (double)width / 1e9);
	for (int b = 0; b < RATE_BUCKETS; b++)
		printf("  +%10.6f s  %10llu events  %12.1f events/s\n", (double)(width * b) / 1e9,
		       (unsigned long long)buckets[b], (double)buckets[b] * 1e9 / (double)width);
}

static void print_rate(const struct stats *s, struct trace_log *log)
{
	if (s->user_dated == 0) {
		printf("user events: %llu\n", (unsigned long long)s->user);
	} else {
		double span = (double)(s->user_last_ns - s->user_first_ns) / 1e9;
		printf("user events: %llu, first at ", (unsigned long long)s->user);
		print_relative(s, s->user_first_ns);
		printf(", duration: %.9f s, rate: ", span);
		if (span > 0)
			printf("%.1f events/s\n", (double)s->user_dated / span);
		else
			printf("- events/s (a single instant)\n");
		if (span > 0)
			print_rate_slices(s, log);
	}
	printf("system events: %llu (not in the rates)\n", (unsigned long long)s->system);
	if (s->undated)
		printf("events without a time: %llu\n", (unsigned long long)s->undated);
}

/* The log records how many events were lost in total (the status); where
 * is told by the OVERFLOW (time of the first lost event) and RESUME (time
 * of the next event reported) the reader put around each gap. */
static void print_losses(const struct stats *s, uint64_t lost)
{
	printf("lost events: %llu\n", (unsigned long long)lost);
	if (!s->ngaps) {
		if (lost)
			printf("loss timeline: no OVERFLOW event; the losses are not placed in time\n");
		return;
	}
	printf("loss timeline (%zu gap%s; the log counts losses in total only):\n", s->ngaps,
	       s->ngaps == 1 ? "" : "s");
	for (size_t i = 0; i < s->ngaps; i++) {
		const struct loss_gap *g = &s->gaps[i];
		printf("  from ");
		if (g->has_overflow)
			print_relative(s, g->overflow_ns);
		else
			printf("an unknown time (no OVERFLOW)");
		printf(" to ");
		if (g->has_resume)
			print_relative(s, g->resume_ns);
		else
			printf("the end (no RESUME)");
		putchar('\n');
	}
	if (s->gaps_past)
		printf("  and %llu more OVERFLOW or RESUME events past the first %d gaps\n",
		       (unsigned long long)s->gaps_past, LOSS_GAPS_MAX);
}

/* Events of a trigger type the keeper's hold-off or budget let take no
 * snapshot (posixtrace_set_trigger), when there were any. */
static void print_suppressed_triggers(struct trace_log *log)
{
	struct posixtrace_log_info info;
	if (posixtrace_log_info(log->trid, &info) == 0 && info.posixtrace_triggers_suppressed)
		printf("triggers suppressed: %llu (no snapshot: held off or past the budget)\n",
		       (unsigned long long)info.posixtrace_triggers_suppressed);
}

/* What writers that may wait (--block) waited, when any did. */
static void print_waits(struct trace_log *log)
{
	struct posixtrace_block_stats w;
	trace_log_waits(log, &w);
	if (w.posixtrace_waited_events)
		printf("waited for room: %llu events, %.3f s in all, %llu of them lost at the "
		       "timeout (--block)\n",
		       (unsigned long long)w.posixtrace_waited_events,
		       (double)w.posixtrace_waited_ns / 1e9,
		       (unsigned long long)w.posixtrace_waited_lost);
}

static void print_status(struct trace_log *log)
{
	struct posix_trace_status_info st;
	if (posix_trace_get_status(log->trid, &st) != 0)
		return;
	printf("stream: %s, %s, %s\n",
	       st.posix_stream_status == POSIX_TRACE_RUNNING ? "running" : "suspended",
	       st.posix_stream_full_status == POSIX_TRACE_FULL ? "full" : "not full",
	       st.posix_stream_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun");
	printf("log: %s, %s, flush error %d%s\n",
	       st.posix_log_full_status == POSIX_TRACE_FULL ? "full" : "not full",
	       st.posix_log_overrun_status == POSIX_TRACE_OVERRUN ? "overrun" : "no overrun",
	       st.posix_stream_flush_error,
	       st.posix_stream_flush_error ? "" : " (none)");
	switch (log_state(log)) {
	case LOG_CUT_SHORT:
		printf("log integrity: cut short (ends early, as a crash leaves it)\n");
		break;
	case LOG_DAMAGED:
		printf("log integrity: damaged inside (events may be missing)\n");
		break;
	default:
		printf("log integrity: complete\n");
	}
	print_suppressed_triggers(log);
	print_waits(log);
}

/* In ns; a log's header may claim any resolution up to 2^64 - 1 ns, which
 * no long holds: such a one is printed in seconds. */
static void format_resolution(const struct timespec *res, char *buf, size_t size)
{
	uint64_t sec = (uint64_t)res->tv_sec, nsec = (uint64_t)res->tv_nsec;
	if (res->tv_sec >= 0 && nsec < 1000000000u && sec <= (UINT64_MAX - nsec) / 1000000000u)
		snprintf(buf, size, "%llu ns", (unsigned long long)(sec * 1000000000u + nsec));
	else
		snprintf(buf, size, "%lld s %ld ns", (long long)res->tv_sec, (long)res->tv_nsec);
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
	char when[32], resolution[48];
	char ename[ESCAPED_SIZE(TRACE_NAME_MAX)], eversion[ESCAPED_SIZE(TRACE_NAME_MAX)];
	format_time(ts_ns(&created), when, sizeof when);
	format_resolution(&res, resolution, sizeof resolution);
	printf("attributes:\n  name: %s\n  generation version: %s\n  created: %s\n"
	       "  clock resolution: %s\n  stream size: %zu, full policy: %s\n"
	       "  max data size: %zu\n  log size: %zu, full policy: %s\n  inheritance: %s\n",
	       escape_text(name, ename, sizeof ename), escape_text(version, eversion, sizeof eversion),
	       when, resolution, stream_size, policy_name(sp), data_size, log_size, policy_name(lp),
	       inh == POSIX_TRACE_INHERITED ? "inherited" : "close for child");
}

/* Status and attributes: the log's, or each log's of several, after the
 * losses of them all. */
static void print_logs(struct trace_log *log, const struct stats *s)
{
	uint64_t lost = 0;
	trace_log_lost(log, &lost);
	print_losses(s, lost);
	if (!log->set) {
		print_status(log);
		print_attributes(log);
		return;
	}
	for (size_t i = 0; i < trace_log_sources(log); i++) {
		struct trace_log *one = trace_log_source(log, (uint32_t)i);
		printf("of log %s:\n", one->label);
		print_status(one);
		print_attributes(one);
	}
}

enum { OPT_PAIR = 256, OPT_NO_PAIR, OPT_PER_THREAD };

static int parse_stats_options(int argc, char **argv, struct stats_options *o)
{
	static const struct option longopts[] = {
		{"pair", required_argument, 0, OPT_PAIR}, {"no-pair", no_argument, 0, OPT_NO_PAIR},
		{"per-thread", no_argument, 0, OPT_PER_THREAD}, {"help", no_argument, 0, 'h'},
		SITE_LONGOPTS,
		LOGSET_LONGOPTS,
		{0, 0, 0, 0}};
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_PAIR:
			if (!pair_rules_add(&o->pairs, optarg))
				return usage_error("stats", "bad --pair '%s' (BEGIN=END, two different "
				                   "event names)", optarg);
			break;
		case OPT_NO_PAIR: o->pairs.suffixes = false; break;
		case OPT_PER_THREAD: o->per_thread = true; break;
		case 'h': stats_help(stdout); return 0;
		case LOGSET_OPT_CLOCK_OFFSET:
			if (!clock_offset_parse(&o->offsets, optarg))
				return usage_error("stats", "bad --clock-offset '%s' (HOST=[+-]DURATION)",
				                   optarg);
			break;
		case ':': return usage_error("stats", "option '%s' needs a value", argv[optind - 1]);
		default:
			if (site_option(c, optarg, &o->sites))
				break;
			return usage_error("stats", "unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return usage_error("stats", "no LOG given");
	o->paths = argv + optind;
	o->npaths = (size_t)(argc - optind);
	return -1;
}

static void free_stats(struct stats *s)
{
	thread_table_free(&s->threads);
	free(s->per_type);
	free(s->per_host);
	free(s->thread_events);
	free(s->gaps);
	free(s);
}

/* The pass that counts, and measures the pairs as they close. */
static int count_events(struct stats *s, struct trace_log *log, struct durations *d,
                        struct hot_sites *hot)
{
	struct trace_event ev;
	int rc;
	while ((rc = trace_log_next(log, &ev)) > 0) {
		add_event(s, &ev);
		hot_sites_event(hot, &ev);
		durations_event(d, &ev);
	}
	return rc;
}

int cmd_stats(int argc, char **argv)
{
	struct stats_options o = {.pairs = {.suffixes = true}};
	int rc = parse_stats_options(argc, argv, &o);
	struct trace_log *log = rc >= 0 ? NULL : trace_logs_open(o.paths, o.npaths, &o.offsets);
	clock_offsets_free(&o.offsets);
	if (!log) {
		pair_rules_free(&o.pairs);
		return rc >= 0 ? rc : EXIT_FAIL;
	}
	struct stats *s = xmalloc(sizeof *s);
	memset(s, 0, sizeof *s);
	s->per_type = xmalloc(trace_log_sources(log) * sizeof *s->per_type);
	memset(s->per_type, 0, trace_log_sources(log) * sizeof *s->per_type);
	s->per_host = xmalloc(log->nhosts * sizeof *s->per_host);
	memset(s->per_host, 0, log->nhosts * sizeof *s->per_host);
	s->base_ns = log_time_base(log);
	struct durations *d = durations_new(&o.pairs, o.per_thread);
	struct hot_sites *hot = hot_sites_new(log, &o.sites);
	if (!hot) {
		trace_log_close(log);
		durations_free(d);
		pair_rules_free(&o.pairs);
		free_stats(s);
		return EXIT_FAIL;
	}
	rc = count_events(s, log, d, hot);
	/* the state is that of the whole log: taken before a second pass */
	rc = finish_log(log, rc < 0 ? EXIT_FAIL : 0);
	if (log->set)
		logset_describe(log, stdout, "");
	else
		printf("log: %s\n", log->label);
	printf("events: %llu (%llu user, %llu system)\n",
	       (unsigned long long)s->total, (unsigned long long)s->user,
	       (unsigned long long)s->system);
	print_types(s, log);
	print_hosts(s, log);
	print_threads(s, log);
	print_rate(s, log);
	durations_print(d, log, s->base_ns);
	if (!o.sites.off)
		hot_sites_print(hot, log);
	print_logs(log, s);
	hot_sites_free(hot);
	trace_log_close(log);
	durations_free(d);
	pair_rules_free(&o.pairs);
	free_stats(s);
	return rc;
}
