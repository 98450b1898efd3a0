/* SPDX-License-Identifier: MIT */
/*
 * posixtrace attach: trace a process that is already running, either live
 * (a stream without log read with posix_trace_timedgetnext_event, one line
 * per event) or into a log (posix_trace_create_withlog).  The stream has
 * the POSIX_TRACE_INHERITED attribute unless --no-inherit: children the
 * process forks from then on are traced too.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <posixtrace.h>

#include "otlp.h"

#define POLL_NS 100000000u /* how often waits look at the clock and signals */

struct attach_options {
	pid_t pid;
	double duration; /* 0: until Ctrl-C */
	const char *log;
	bool json, force, inherit, date, utc;
	bool images; /* with -o: the traced processes describe their images */
	size_t flight_size; /* --flight-recorder: a LOOP stream of this size; 0: none */
	struct name_list triggers; /* --trigger: types whose events take a snapshot */
	struct rotation rotate; /* --rotate: size 0, a log of one file */
	bool otlp;              /* --otlp (or --discard): sent while recording */
	double otlp_wait;       /* seconds: the wait for the sender at the end */
	struct otlp_cli send;   /* its options, as export's */
};

#define FLIGHT_DEFAULT_SIZE (16u << 20)

static void attach_help(FILE *out)
{
	fprintf(out,
	        "usage: %s attach PID [OPTIONS]\n"
	        "Traces the running process PID (it must have loaded libposixtrace) and\n"
	        "the children it forks from now on.  Without -o, prints its events as\n"
	        "they come (the dump format); with -o, writes a log.  Stops after\n"
	        "--duration seconds, or on Ctrl-C.\n\n"
	        "  --duration S         stop after S seconds\n"
	        "  -o, --output LOG     write a log (created 0600; - is standard output)\n"
	        "  --force              replace LOG if it is an existing file of yours\n"
	        "  --rotate SIZE[,COUNT]  with -o: LOG is a directory of numbered files,\n"
	        "                       each a complete append log, a new one past SIZE\n"
	        "                       (at least 64K), the oldest removed past COUNT\n"
	        "  --rotate-every AGE   with --rotate: a file also ends once it is AGE old\n"
	        "                       (N seconds, or Ns, Nm, Nh) and holds events, the\n"
	        "                       stream flushed into it first (default with --otlp:\n"
	        "                       10s; otherwise by size only)\n"
	        "  -f, --format text|json  live output format\n"
	        "  --clock-date         live output: absolute times as local date and time\n"
	        "  --clock-gmt          the same in UTC\n"
	        "  --no-inherit         do not trace the children PID forks\n"
	        "  --no-images          with -o: do not record the images (files, load\n"
	        "                       addresses, build ids) that symbols come from\n"
	        "  --flight-recorder[=SIZE]  with -o: keep the newest events in a loop\n"
	        "                       stream of SIZE (default 16M), written only at a\n"
	        "                       snapshot: on SIGUSR1 to posixtrace, and at the end\n"
	        "  --trigger NAME,...   with --flight-recorder: a snapshot also each time\n"
	        "                       an event of one of these types is posted\n"
	        "  --otlp URL           with -o DIR: also send spans and log records to this\n"
	        "                       OpenTelemetry receiver while recording (as export\n"
	        "                       does); the log is rotated (--rotate 1M and\n"
	        "                       --rotate-every 10s unless given) and each file is\n"
	        "                       sent once it is complete\n"
	        "  --otlp-wait SEC      at the end, the longest wait for the rest to be\n"
	        "                       sent (default 30; a stop signal cuts it short)\n"
	        "With --otlp, export's options of the requests:\n"
	        OTLP_SEND_HELP
	        "  -h, --help           this help\n"
	        "Exit status: 0, 1 if PID cannot be traced or the log not written (or\n"
	        "--otlp could not deliver everything), 2 for usage errors.\n",
	        PROG);
}

enum { OPT_FORCE = 256, OPT_NO_INHERIT, OPT_CLOCK_DATE, OPT_CLOCK_GMT, OPT_FLIGHT, OPT_TRIGGER,
       OPT_NO_IMAGES, OPT_ROTATE, OPT_ROTATE_EVERY, OPT_OTLP_WAIT };

static int parse_attach_options(int argc, char **argv, struct attach_options *o)
{
	static const struct option longopts[] = {
		{"duration", required_argument, 0, 'd'}, {"output", required_argument, 0, 'o'},
		{"format", required_argument, 0, 'f'},   {"force", no_argument, 0, OPT_FORCE},
		{"no-inherit", no_argument, 0, OPT_NO_INHERIT},
		{"no-images", no_argument, 0, OPT_NO_IMAGES},
		{"clock-date", no_argument, 0, OPT_CLOCK_DATE},
		{"clock-gmt", no_argument, 0, OPT_CLOCK_GMT},
		{"flight-recorder", optional_argument, 0, OPT_FLIGHT},
		{"trigger", required_argument, 0, OPT_TRIGGER},
		{"rotate", required_argument, 0, OPT_ROTATE},
		{"rotate-every", required_argument, 0, OPT_ROTATE_EVERY},
		{"otlp-wait", required_argument, 0, OPT_OTLP_WAIT},
		OTLP_LONGOPTS,
		{"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
	int c, rc;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":d:o:f:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			if (!parse_seconds(optarg, &o->duration) || o->duration <= 0)
				return usage_error("attach", "bad --duration '%s'", optarg);
			break;
		case 'o': o->log = optarg; break;
		case 'f':
			if (strcmp(optarg, "text") && strcmp(optarg, "json"))
				return usage_error("attach", "bad --format '%s' (text, json)", optarg);
			o->json = !strcmp(optarg, "json");
			break;
		case OPT_FORCE: o->force = true; break;
		case OPT_NO_INHERIT: o->inherit = false; break;
		case OPT_NO_IMAGES: o->images = false; break;
		case OPT_FLIGHT:
			o->flight_size = FLIGHT_DEFAULT_SIZE;
			if (optarg && (!parse_size(optarg, &o->flight_size) ||
			               o->flight_size < MIN_STREAM_SIZE))
				return usage_error("attach", "bad --flight-recorder size '%s' (at least 4K)",
				                   optarg);
			break;
		case OPT_TRIGGER:
			if (!name_list_parse(&o->triggers, optarg))
				return usage_error("attach", "bad --trigger '%s'", optarg);
			break;
		case OPT_ROTATE:
			if (!parse_rotation(optarg, &o->rotate))
				return usage_error("attach", "bad --rotate '%s' (SIZE[,COUNT], SIZE at least "
				                   "64K, COUNT at least 1)", optarg);
			break;
		case OPT_ROTATE_EVERY:
			if (!parse_rotation_age(optarg, &o->rotate.seconds))
				return usage_error("attach", "bad --rotate-every '%s' (N, Ns, Nm or Nh: "
				                   "seconds, minutes or hours, at least 1 s)", optarg);
			break;
		case OPT_CLOCK_GMT: o->utc = true; /* fall through */
		case OPT_CLOCK_DATE: o->date = true; break;
		case OPT_OTLP_WAIT:
			if (!parse_seconds(optarg, &o->otlp_wait) || o->otlp_wait < 0 ||
			    o->otlp_wait > 3600)
				return usage_error("attach", "bad --otlp-wait '%s' (seconds, at most 3600)",
				                   optarg);
			break;
		case 'h': attach_help(stdout); return 0;
		case ':': return usage_error("attach", "option '%s' needs a value", argv[optind - 1]);
		default:
			rc = otlp_cli_option(&o->send, c, optarg, "attach", argv[optind - 1]);
			if (rc > 0)
				return rc;
			if (rc == 0)
				return usage_error("attach", "unknown option '%s'", argv[optind - 1]);
			o->otlp |= c == OTLP_OPT_URL || c == OTLP_OPT_DISCARD;
		}
	}
	if (o->otlp && !o->log)
		return usage_error("attach", "--otlp follows the log as it is written: give -o DIR");
	if (o->otlp && (rc = live_options("attach", o->flight_size != 0, o->log, false,
	                                  POSIX_TRACE_APPEND, &o->rotate, &o->send)) >= 0)
		return rc;
	if (optind != argc - 1)
		return usage_error("attach", optind >= argc ? "no PID given" : "too many arguments");
	if (o->flight_size && !o->log)
		return usage_error("attach", "--flight-recorder writes a log: give -o LOG");
	if (o->triggers.count && !o->flight_size)
		return usage_error("attach", "--trigger takes snapshots of --flight-recorder");
	if (o->rotate.seconds && !o->rotate.size)
		return usage_error("attach", "--rotate-every ends files of a rotated log: give "
		                   "--rotate SIZE too");
	if (o->rotate.size && !rotation_fits("attach", o->log, false, POSIX_TRACE_APPEND, 0))
		return EXIT_USAGE;
	char *end;
	long pid = strtol(argv[optind], &end, 10);
	if (*end || end == argv[optind] || pid <= 0 || pid != (pid_t)pid)
		return usage_error("attach", "bad PID '%s'", argv[optind]);
	o->pid = (pid_t)pid;
	return -1;
}

static int stop_at_first_type(trace_event_id_t id, const char *name, void *arg)
{
	(void)id, (void)name, (void)arg;
	return 1;
}

/* Explains why a pid cannot be traced, or NULL if it looks traceable.  The
 * library finds the process as `list` does (its control block), so a
 * program linked statically with libposixtrace.a, which no look at its
 * mappings would show, is found too. */
/* Whether the shared library is mapped in pid: a program that has loaded
 * it and not yet run its constructor has no control block yet, and is
 * reached by the stream when it has (the keeper's late reach). */
static bool maps_the_library(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/maps", (int)pid);
	FILE *maps = fopen(path, "r");
	bool mapped = false;
	while (maps && !mapped && fgets(line, sizeof line, maps))
		mapped = strstr(line, "/libposixtrace.so") != NULL;
	if (maps)
		fclose(maps);
	return mapped;
}

static const char *why_not_traceable(pid_t pid)
{
	int err = posixtrace_process_eventtypes(pid, stop_at_first_type, NULL);
	switch (err) {
	case 0: return NULL;
	case ESRCH: return "no such process";
	case EPERM: return "not permitted";
	case ENOENT:
		return maps_the_library(pid) ? NULL
		                              : "not instrumented (libposixtrace is not loaded in it)";
	default: return strerror(err);
	}
}

static const char *create_error(int err)
{
	switch (err) {
	case ESRCH: return "no such process";
	case EPERM: return "not permitted";
	default: return strerror(err);
	}
}

static bool time_is_up(uint64_t deadline)
{
	return stop_requested || (deadline && now_realtime_ns() >= deadline);
}

static uint64_t deadline_of(double duration)
{
	return duration > 0 ? now_realtime_ns() + (uint64_t)(duration * 1e9) : 0;
}

static void print_status_line(trace_id_t trid, uint64_t events)
{
	struct posix_trace_status_info st;
	unsigned long long lost = 0;
	if (posix_trace_get_status(trid, &st) == 0)
		lost = st.posixtrace_lost_events;
	fprintf(stderr, "%s: %llu events, %llu lost\n", PROG, (unsigned long long)events, lost);
}

/* Reads events until the deadline, then stops the stream and drains what is
 * left so nothing recorded before the stop is missed. */
static int watch_live(trace_id_t trid, const struct attach_options *o)
{
	struct event_printer printer = {.json = o->json, .date = o->date, .utc = o->utc};
	struct name_cache *names = xmalloc(sizeof *names);
	size_t bufsize = 1 << 20;
	unsigned char *buf = xmalloc(bufsize);
	uint64_t deadline = deadline_of(o->duration), events = 0;
	bool stopping = false;
	struct outbuf out;
	name_cache_init(names, trid);
	outbuf_init(&out, stdout);
	for (;;) {
		struct trace_event ev;
		size_t len;
		int unavailable = 0, err;
		if (!stopping && time_is_up(deadline)) {
			posix_trace_stop(trid);
			stopping = true;
		}
		if (stopping) {
			err = posix_trace_trygetnext_event(trid, &ev.info, buf, bufsize, &len, &unavailable);
		} else {
			uint64_t at = now_realtime_ns() + POLL_NS;
			struct timespec abstime = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
			err = posix_trace_timedgetnext_event(trid, &ev.info, buf, bufsize, &len,
			                                     &unavailable, &abstime);
		}
		if (err == ETIMEDOUT || err == EINTR)
			continue;
		if (err || unavailable)
			break;
		ev.data = buf;
		ev.len = len;
		ev.name = name_cache_get(names, ev.info.posix_event_id);
		read_event_ext(trid, &ev);
		print_event(&printer, &out, &ev);
		outbuf_flush(&out); /* live: every event shows as it comes */
		fflush(stdout);
		events++;
	}
	outbuf_free(&out);
	print_status_line(trid, events);
	free(buf);
	free(names);
	return 0;
}

static void wait_until(uint64_t deadline, struct flight *f)
{
	while (!time_is_up(deadline)) {
		struct timespec nap = {0, POLL_NS};
		nanosleep(&nap, NULL);
		if (f)
			flight_take_pending(f);
	}
}

/* The trace is named after the process (its comm), which Chrome output and
 * stats show.  A log grows as record's does (APPEND, the one policy a pipe
 * takes). */
static void build_attr(const struct attach_options *o, bool with_log, trace_attr_t *attr)
{
	char path[64], comm[TRACE_NAME_MAX] = "";
	posix_trace_attr_init(attr);
	if (with_log)
		posix_trace_attr_setlogfullpolicy(attr, POSIX_TRACE_APPEND);
	if (o->flight_size) {
		posix_trace_attr_setstreamfullpolicy(attr, POSIX_TRACE_LOOP);
		posix_trace_attr_setstreamsize(attr, o->flight_size);
	}
	posix_trace_attr_setinherited(attr, o->inherit ? POSIX_TRACE_INHERITED
	                                               : POSIX_TRACE_CLOSE_FOR_CHILD);
	snprintf(path, sizeof path, "/proc/%d/comm", (int)o->pid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fgets(comm, sizeof comm, f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	if (comm[0])
		posix_trace_attr_setname(attr, comm);
}

static int create_stream(const struct attach_options *o, int logfd, trace_id_t *trid)
{
	trace_attr_t attr;
	build_attr(o, logfd >= 0, &attr);
	int err = logfd < 0       ? posix_trace_create(o->pid, &attr, trid)
	          : o->rotate.size ? create_rotated(o->pid, &attr, logfd, &o->rotate, trid)
	                           : posix_trace_create_withlog(o->pid, &attr, logfd, trid);
	posix_trace_attr_destroy(&attr);
	if (err && logfd >= 0 && err == EINVAL)
		error_msg("cannot trace process %d: %s", (int)o->pid, log_create_error(err, logfd));
	else if (err)
		error_msg("cannot trace process %d: %s", (int)o->pid, create_error(err));
	else if (logfd >= 0 && o->images && (err = posixtrace_set_images(*trid, 1)) != 0) {
		error_msg("cannot ask process %d for its images: %s", (int)o->pid, strerror(err));
		posix_trace_shutdown(*trid);
	}
	return err;
}

static void drop_log(const struct attach_options *o, int logfd)
{
	if (logfd < 0)
		return;
	close(logfd);
	if (o->rotate.size)
		(void)rmdir(o->log); /* made for nothing, or left as it was found */
	else if (!is_stdio_name(o->log))
		unlink(o->log); /* created (or emptied) for nothing */
}

static int attach(struct attach_options *o)
{
	const char *why = why_not_traceable(o->pid);
	if (why) {
		error_msg("cannot trace process %d: %s", (int)o->pid, why);
		return EXIT_FAIL;
	}
	int logfd = -1, err;
	trace_id_t trid;
	if (o->log && (logfd = o->rotate.size ? rotation_dir(o->log) : log_fd_for(o->log, o->force)) < 0)
		return EXIT_FAIL;
	if (create_stream(o, logfd, &trid)) {
		drop_log(o, logfd);
		return EXIT_FAIL;
	}
	struct otlp_live *live = NULL;
	if (o->otlp && !(live = otlp_live_start(&o->send, logfd, o->log))) {
		posix_trace_shutdown(trid);
		close(logfd);
		return EXIT_FAIL;
	}
	if (o->flight_size && !flight_set_triggers(trid, &o->triggers)) {
		posix_trace_shutdown(trid);
		drop_log(o, logfd);
		return EXIT_FAIL;
	}
	install_stop_handlers();
	uint64_t t0 = now_realtime_ns();
	if ((err = posix_trace_start(trid)) != 0) {
		error_msg("cannot start tracing process %d: %s", (int)o->pid, strerror(err));
		posix_trace_shutdown(trid);
		otlp_live_finish(live, o->otlp_wait);
		drop_log(o, logfd);
		return EXIT_FAIL;
	}
	if (logfd < 0) {
		watch_live(trid, o);
		posix_trace_shutdown(trid);
		return 0;
	}
	struct flight flight;
	if (o->flight_size)
		flight_init(&flight, trid, t0, &o->triggers);
	wait_until(deadline_of(o->duration), o->flight_size ? &flight : NULL);
	double seconds = (double)(now_realtime_ns() - t0) / 1e9;
	bool to_stdout = is_stdio_name(o->log);
	if (to_stdout)
		print_pipe_summary(trid, seconds);
	if (o->flight_size)
		flight_before_shutdown(&flight);
	err = posix_trace_shutdown(trid);
	if (err)
		error_msg("writing the log failed: %s", strerror(err));
	if (!to_stdout)
		print_log_summary(logfd, o->log, seconds);
	if (o->flight_size)
		flight_report(&flight,
		              stop_requested ? "the recording was stopped" : "the duration was over",
		              logfd, to_stdout ? NULL : o->log);
	close(logfd);
	int sent = otlp_live_finish(live, o->otlp_wait);
	return err || sent ? EXIT_FAIL : 0;
}

int cmd_attach(int argc, char **argv)
{
	struct attach_options o = {.inherit = true, .images = true,
	                           .otlp_wait = OTLP_LIVE_WAIT_DEFAULT};
	otlp_cli_init(&o.send);
	int rc = parse_attach_options(argc, argv, &o);
	if (rc < 0)
		rc = attach(&o);
	name_list_free(&o.triggers);
	otlp_cli_free(&o.send);
	return rc;
}
