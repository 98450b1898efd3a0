/* SPDX-License-Identifier: MIT */
/*
 * posixtrace record: run a command with a trace stream (and log) that exists
 * before the command's main() runs.
 *
 * The child is forked and held on a pipe; the parent creates the stream for
 * the child's pid with posix_trace_create_withlog, sets the filter, starts
 * it, and only then lets the child execvp the command.  The library loaded
 * by the command joins the offered stream at load, before main.
 *
 * The log is a new file (0600, O_EXCL, never through a symbolic link; see
 * outfile.c), or standard output with -o - (the command's own standard
 * output then goes to our standard error, so it cannot mix into the log).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <posixtrace.h>

#include "otlp.h"

struct record_options {
	const char *log;
	bool force;
	size_t stream_size, log_size;
	int stream_policy, log_policy;
	bool inherit;
	bool images; /* the traced processes describe their images (symbols) */
	bool flight;
	bool log_policy_given;
	struct timespec block; /* --block: a writer's wait for room; 0: none */
	struct rotation rotate; /* size 0: one log file */
	struct name_list exclude, only, triggers;
	char **command;
	bool otlp;             /* --otlp (or --discard): sent while recording */
	double otlp_wait;      /* seconds: the wait for the sender at the end */
	struct otlp_cli send;  /* its options, as export's */
};

#define FLIGHT_DEFAULT_SIZE (16u << 20)

static void record_help(FILE *out)
{
	fprintf(out,
	        "usage: %s record [OPTIONS] -- CMD [ARGS...]\n"
	        "Runs CMD traced from before its main() (and its children unless\n"
	        "--no-inherit) and writes the trace to a log.\n\n"
	        "  -o, --output LOG        log file, created 0600 (default\n"
	        "                          posixtrace-CMD-PID.ptlog, another name if taken);\n"
	        "                          - writes the log to standard output (CMD's own\n"
	        "                          standard output then goes to standard error)\n"
	        "  --force                 replace LOG if it is an existing file of yours\n"
	        "  --size BYTES            stream size, at least 4K (K, M, G suffixes)\n"
	        "  --policy P              stream full policy: loop, until-full, flush (default)\n"
	        "  --log-policy P          log full policy: loop, until-full, append (default;\n"
	        "                          the only one for a pipe)\n"
	        "  --log-size BYTES        log size limit for loop and until-full\n"
	        "  --block[=SECONDS]       with --policy flush: a writer that finds the stream\n"
	        "                          full waits up to SECONDS (default 1, at most 60)\n"
	        "                          for room instead of losing the event\n"
	        "  --rotate SIZE[,COUNT]   write LOG as a directory of numbered files, each a\n"
	        "                          complete append log, a new one past SIZE (at\n"
	        "                          least 64K), the oldest removed past COUNT files\n"
	        "                          (default: keep all); needs -o LOG\n"
	        "  --rotate-every AGE      with --rotate: a file also ends once it is AGE old\n"
	        "                          (N seconds, or Ns, Nm, Nh) and holds events, the\n"
	        "                          stream flushed into it first (default with --otlp:\n"
	        "                          10s; otherwise by size only)\n"
	        "  --filter NAME,...       do not record these event types\n"
	        "  --only NAME,...         record only these event types (and system events)\n"
	        "  --no-inherit            do not trace the children of CMD\n"
	        "  --no-images             do not record the traced programs' images (the\n"
	        "                          files, load addresses and build ids that dump,\n"
	        "                          stats and convert turn addresses into symbols by)\n"
	        "  --flight-recorder[=SIZE]  keep the newest events in a loop stream of\n"
	        "                          SIZE (default 16M) and write them only at a\n"
	        "                          snapshot: on SIGUSR1 to posixtrace, and at the end\n"
	        "  --trigger NAME,...      with --flight-recorder: a snapshot also each time\n"
	        "                          an event of one of these types is posted\n"
	        "  --otlp URL              also send spans and log records to this\n"
	        "                          OpenTelemetry receiver while recording (as export\n"
	        "                          does): the log is rotated (--rotate 1M and\n"
	        "                          --rotate-every 10s unless given; LOG a directory,\n"
	        "                          by default posixtrace-CMD-PID.ptlog) and each file\n"
	        "                          is sent once it is complete, the last at the end\n"
	        "  --otlp-wait SEC         at the end, the longest wait for the rest to be\n"
	        "                          sent (default 30; a stop signal cuts it short)\n"
	        "With --otlp, export's options of the requests:\n"
	        OTLP_SEND_HELP
	        "  -h, --help              this help\n"
	        "Exit status: that of CMD (128+N if killed by signal N; 127 if CMD was not\n"
	        "found, 126 if it could not be run), 1 if recording failed (or, CMD's being\n"
	        "0, if --otlp could not deliver everything), 2 for usage errors.\n",
	        PROG);
}

static bool parse_policy(const char *s, bool for_log, int *out)
{
	if (!strcmp(s, "loop"))
		*out = POSIX_TRACE_LOOP;
	else if (!strcmp(s, "until-full"))
		*out = POSIX_TRACE_UNTIL_FULL;
	else if (!for_log && !strcmp(s, "flush"))
		*out = POSIX_TRACE_FLUSH;
	else if (for_log && !strcmp(s, "append"))
		*out = POSIX_TRACE_APPEND;
	else
		return false;
	return true;
}

enum { OPT_SIZE = 256, OPT_POLICY, OPT_LOG_POLICY, OPT_LOG_SIZE, OPT_FILTER, OPT_ONLY,
       OPT_NO_INHERIT, OPT_FORCE, OPT_FLIGHT, OPT_TRIGGER, OPT_NO_IMAGES, OPT_ROTATE,
       OPT_ROTATE_EVERY, OPT_BLOCK, OPT_OTLP_WAIT };

/* --flight-recorder[=SIZE]: a LOOP stream, of SIZE unless --size says. */
static int flight_options(struct record_options *o, const char *size, bool policy_given)
{
	if (policy_given && o->stream_policy != POSIX_TRACE_LOOP)
		return usage_error("record", "--flight-recorder keeps a loop stream: not with "
		                   "--policy flush or until-full");
	o->stream_policy = POSIX_TRACE_LOOP;
	size_t n = FLIGHT_DEFAULT_SIZE;
	if (size && (!parse_size(size, &n) || n < MIN_STREAM_SIZE))
		return usage_error("record", "bad --flight-recorder size '%s' (at least 4K)", size);
	if (!o->stream_size || size)
		o->stream_size = n;
	return -1;
}

/* --block[=SECONDS]: 1 s by default; more than 0, at most the library's
 * 60 s. */
static bool parse_block(const char *arg, struct timespec *out)
{
	double seconds = 1;
	if (arg && (!parse_seconds(arg, &seconds) || !(seconds > 0) || seconds > 60))
		return false;
	out->tv_sec = (time_t)seconds;
	out->tv_nsec = (long)((seconds - (double)out->tv_sec) * 1e9);
	if (out->tv_sec == 0 && out->tv_nsec == 0)
		out->tv_nsec = 1;
	return true;
}

/* --otlp (record and attach): what it cannot go with, the rotation it
 * implies, the receiver; -1 when all is good, else the exit status. */
int live_options(const char *cmd, bool flight, const char *log, bool log_policy_given,
                 int log_policy, struct rotation *rotate, struct otlp_cli *send)
{
	if (flight)
		return usage_error(cmd, "--otlp follows a log as it is written; the flight recorder "
		                   "writes only at snapshots: not with --flight-recorder");
	if (log_policy_given && log_policy != POSIX_TRACE_APPEND)
		return usage_error(cmd, "--otlp follows an append log written as rotated files: a "
		                   "%s log is never complete while it is written: not with "
		                   "--log-policy %s",
		                   log_policy == POSIX_TRACE_LOOP ? "loop (it overwrites its oldest "
		                                                    "blocks in place)"
		                                                  : "until-full",
		                   log_policy == POSIX_TRACE_LOOP ? "loop" : "until-full");
	if (log && is_stdio_name(log))
		return usage_error(cmd, "--otlp reads the log back as it is written: not with -o -");
	if (!rotate->size)
		rotate->size = OTLP_LIVE_ROTATE_DEFAULT;
	if (!rotate->seconds)
		rotate->seconds = OTLP_LIVE_ROTATE_EVERY_DEFAULT;
	return otlp_cli_finish(send, cmd) ? -1 : EXIT_USAGE;
}

/* Returns -1 when the options are good, else the exit status. */
static int parse_record_options(int argc, char **argv, struct record_options *o)
{
	static const struct option longopts[] = {
		{"output", required_argument, 0, 'o'},   {"size", required_argument, 0, OPT_SIZE},
		{"policy", required_argument, 0, OPT_POLICY},
		{"log-policy", required_argument, 0, OPT_LOG_POLICY},
		{"log-size", required_argument, 0, OPT_LOG_SIZE},
		{"filter", required_argument, 0, OPT_FILTER},
		{"only", required_argument, 0, OPT_ONLY},
		{"no-inherit", no_argument, 0, OPT_NO_INHERIT},
		{"no-images", no_argument, 0, OPT_NO_IMAGES},
		{"force", no_argument, 0, OPT_FORCE},
		{"flight-recorder", optional_argument, 0, OPT_FLIGHT},
		{"trigger", required_argument, 0, OPT_TRIGGER},
		{"rotate", required_argument, 0, OPT_ROTATE},
		{"rotate-every", required_argument, 0, OPT_ROTATE_EVERY},
		{"block", optional_argument, 0, OPT_BLOCK},
		{"otlp-wait", required_argument, 0, OPT_OTLP_WAIT},
		OTLP_LONGOPTS,
		{"help", no_argument, 0, 'h'},           {0, 0, 0, 0}};
	const char *flight_size = NULL;
	bool policy_given = false;
	int c, rc;
	opterr = 0;
	/* '+': stop at the command, whose own options are not ours */
	while ((c = getopt_long(argc, argv, "+:o:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': o->log = optarg; break;
		case OPT_SIZE:
			if (!parse_size(optarg, &o->stream_size))
				return usage_error("record", "bad --size '%s'", optarg);
			if (o->stream_size < MIN_STREAM_SIZE)
				return usage_error("record", "--size %s is too small: the smallest "
				                   "stream is 4K (4096 bytes)", optarg);
			break;
		case OPT_LOG_SIZE:
			if (!parse_size(optarg, &o->log_size))
				return usage_error("record", "bad --log-size '%s'", optarg);
			break;
		case OPT_POLICY:
			if (!parse_policy(optarg, false, &o->stream_policy))
				return usage_error("record", "bad --policy '%s' (loop, until-full, flush)", optarg);
			policy_given = true;
			break;
		case OPT_FLIGHT:
			o->flight = true;
			flight_size = optarg;
			break;
		case OPT_TRIGGER:
			if (!name_list_parse(&o->triggers, optarg))
				return usage_error("record", "bad --trigger '%s'", optarg);
			break;
		case OPT_LOG_POLICY:
			if (!parse_policy(optarg, true, &o->log_policy))
				return usage_error("record", "bad --log-policy '%s' (loop, until-full, append)",
				                   optarg);
			o->log_policy_given = true;
			break;
		case OPT_ROTATE:
			if (!parse_rotation(optarg, &o->rotate))
				return usage_error("record", "bad --rotate '%s' (SIZE[,COUNT], SIZE at least "
				                   "64K, COUNT at least 1)", optarg);
			break;
		case OPT_ROTATE_EVERY:
			if (!parse_rotation_age(optarg, &o->rotate.seconds))
				return usage_error("record", "bad --rotate-every '%s' (N, Ns, Nm or Nh: "
				                   "seconds, minutes or hours, at least 1 s)", optarg);
			break;
		case OPT_BLOCK:
			if (!parse_block(optarg, &o->block))
				return usage_error("record", "bad --block '%s' (seconds, more than 0, at "
				                   "most 60)", optarg);
			break;
		case OPT_FILTER:
			if (!name_list_parse(&o->exclude, optarg))
				return usage_error("record", "bad --filter '%s'", optarg);
			break;
		case OPT_ONLY:
			if (!name_list_parse(&o->only, optarg))
				return usage_error("record", "bad --only '%s'", optarg);
			break;
		case OPT_NO_INHERIT: o->inherit = false; break;
		case OPT_NO_IMAGES: o->images = false; break;
		case OPT_FORCE: o->force = true; break;
		case OPT_OTLP_WAIT:
			if (!parse_seconds(optarg, &o->otlp_wait) || o->otlp_wait < 0 ||
			    o->otlp_wait > 3600)
				return usage_error("record", "bad --otlp-wait '%s' (seconds, at most 3600)",
				                   optarg);
			break;
		case 'h': record_help(stdout); return 0;
		case ':': return usage_error("record", "option '%s' needs a value", argv[optind - 1]);
		default:
			rc = otlp_cli_option(&o->send, c, optarg, "record", argv[optind - 1]);
			if (rc > 0)
				return rc;
			if (rc == 0)
				return usage_error("record", "unknown option '%s'", argv[optind - 1]);
			o->otlp |= c == OTLP_OPT_URL || c == OTLP_OPT_DISCARD;
		}
	}
	if (o->otlp && (rc = live_options("record", o->flight, o->log, o->log_policy_given,
	                                  o->log_policy, &o->rotate, &o->send)) >= 0)
		return rc;
	if (o->exclude.count && o->only.count)
		return usage_error("record", "--filter and --only exclude each other");
	if (o->triggers.count && !o->flight)
		return usage_error("record", "--trigger takes snapshots of --flight-recorder");
	if (o->rotate.seconds && !o->rotate.size)
		return usage_error("record", "--rotate-every ends files of a rotated log: give "
		                   "--rotate SIZE too");
	/* --otlp without -o: a directory of the default name, made later */
	if (o->rotate.size && !rotation_fits("record", o->log || !o->otlp ? o->log : "DIR",
	                                     o->log_policy_given, o->log_policy, o->log_size))
		return EXIT_USAGE;
	rc = o->flight ? flight_options(o, flight_size, policy_given) : -1;
	if (rc < 0 && (o->block.tv_sec || o->block.tv_nsec) && o->stream_policy != POSIX_TRACE_FLUSH)
		return usage_error("record", "--block waits for the keeper's flush: it takes --policy "
		                   "flush only");
	if (rc >= 0)
		return rc;
	if (optind >= argc)
		return usage_error("record", "no command to run");
	o->command = argv + optind;
	return -1;
}

static int build_attr(const struct record_options *o, trace_attr_t *attr)
{
	char *copy = strdup(o->command[0]);
	posix_trace_attr_init(attr);
	/* The trace name tells readers which program the log is about. */
	posix_trace_attr_setname(attr, copy ? basename(copy) : o->command[0]);
	free(copy);
	int err = posix_trace_attr_setstreamfullpolicy(attr, o->stream_policy);
	if (!err)
		err = posix_trace_attr_setlogfullpolicy(attr, o->log_policy);
	if (!err && o->stream_size)
		err = posix_trace_attr_setstreamsize(attr, o->stream_size);
	if (!err && o->log_size)
		err = posix_trace_attr_setlogsize(attr, o->log_size);
	if (!err && (o->block.tv_sec || o->block.tv_nsec))
		err = posixtrace_attr_setblocking(attr, &o->block);
	if (!err)
		err = posix_trace_attr_setinherited(attr, o->inherit ? POSIX_TRACE_INHERITED
		                                                     : POSIX_TRACE_CLOSE_FOR_CHILD);
	if (err)
		error_msg("record: trace attributes refused: %s", strerror(err));
	return err;
}

/* The held child: tells the parent it is ready (so the library's fork
 * handlers are done and its control block is its own), waits for the go,
 * then becomes the command.  EOF instead of the go means the parent failed.
 * If execvp fails, its errno goes back through exec_fd (close-on-exec, so
 * a successful exec just closes it). */
static void run_held_child(int ready_fd, int go_fd, int exec_fd, char **command,
                           bool log_on_stdout)
{
	char go[1 + sizeof((struct posixtrace_rendezvous_info *)0)->posixtrace_dir];
	size_t got = 0;
	ssize_t n;
	if (log_on_stdout && dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
		_exit(127);
	if (write(ready_fd, "r", 1) != 1)
		_exit(127);
	close(ready_fd);
	while (got < sizeof go - 1 && ((n = read(go_fd, go + got, sizeof go - 1 - got)) > 0 ||
	                               (n < 0 && errno == EINTR)))
		got += n > 0 ? (size_t)n : 0;
	if (got < 1 || go[0] != 'g')
		_exit(127);
	close(go_fd);
	go[got] = '\0';
	if (go[1] && setenv(POSIXTRACE_RENDEZVOUS_ENV, go + 1, 1) != 0)
		_exit(127);
	execvp(command[0], command);
	int err = errno;
	if (write(exec_fd, &err, sizeof err) != (ssize_t)sizeof err)
		_exit(127);
	_exit(err == ENOENT ? 127 : 126);
}

struct held_child {
	pid_t pid;
	int go_fd;   /* write a byte: run the command; close: give up */
	int exec_fd; /* EOF once the command runs, an errno if exec failed */
};

static bool spawn_held_child(char **command, bool log_on_stdout, struct held_child *c)
{
	int ready[2], go[2], exec_err[2];
	if (pipe2(ready, O_CLOEXEC) || pipe2(go, O_CLOEXEC) || pipe2(exec_err, O_CLOEXEC)) {
		error_msg("record: pipe: %s", strerror(errno));
		return false;
	}
	fflush(NULL);
	c->pid = fork();
	if (c->pid < 0) {
		error_msg("record: fork: %s", strerror(errno));
		return false;
	}
	if (c->pid == 0) {
		close(ready[0]);
		close(go[1]);
		close(exec_err[0]);
		run_held_child(ready[1], go[0], exec_err[1], command, log_on_stdout);
	}
	close(ready[1]);
	close(go[0]);
	close(exec_err[1]);
	char r;
	while (read(ready[0], &r, 1) < 0 && errno == EINTR)
		;
	close(ready[0]);
	c->go_fd = go[1];
	c->exec_fd = exec_err[0];
	return true;
}

/* Lets the command run, with the stream's rendezvous (rdv_dir, maybe
 * empty) in its environment; returns 0 once it runs, or the errno of
 * execvp. */
static int release_child(struct held_child *c, const char *rdv_dir)
{
	int err = 0;
	ssize_t n;
	char go[1 + sizeof((struct posixtrace_rendezvous_info *)0)->posixtrace_dir];
	size_t len = (size_t)snprintf(go, sizeof go, "g%s", rdv_dir);
	if (len >= sizeof go || write(c->go_fd, go, len) != (ssize_t)len)
		err = errno ? errno : ENAMETOOLONG;
	close(c->go_fd);
	while ((n = read(c->exec_fd, &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(c->exec_fd);
	return n == (ssize_t)sizeof err ? err : 0;
}

/* System event names map to their fixed ids; other names are registered
 * in the target's registry so they keep the same id when it opens them. */
static int map_event_name(trace_id_t trid, const char *name, trace_event_id_t *id)
{
	char sysname[TRACE_EVENT_NAME_MAX + 1];
	for (trace_event_id_t i = POSIX_TRACE_START; i <= POSIX_TRACE_UNNAMED_USEREVENT; i++)
		if (posix_trace_eventid_get_name(trid, i, sysname) == 0 && !strcmp(sysname, name)) {
			*id = i;
			return 0;
		}
	return posix_trace_trid_eventid_open(trid, name, id);
}

static int apply_name_filter(trace_id_t trid, const struct name_list *exclude,
                             const struct name_list *only)
{
	trace_event_set_t set;
	const struct name_list *names = only->count ? only : exclude;
	if (!names->count)
		return 0;
	if (only->count) {
		/* everything but the listed names; system events stay recorded */
		posix_trace_eventset_fill(&set, POSIX_TRACE_ALL_EVENTS);
		for (trace_event_id_t i = POSIX_TRACE_START; i <= POSIX_TRACE_ERROR; i++)
			posix_trace_eventset_del(i, &set);
	} else {
		posix_trace_eventset_empty(&set);
	}
	for (size_t i = 0; i < names->count; i++) {
		trace_event_id_t id;
		int err = map_event_name(trid, names->names[i], &id);
		if (err) {
			error_msg("event name '%s': %s", names->names[i], strerror(err));
			return err;
		}
		if (only->count)
			posix_trace_eventset_del(id, &set);
		else
			posix_trace_eventset_add(id, &set);
	}
	int err = posix_trace_set_filter(trid, &set, POSIX_TRACE_SET_EVENTSET);
	if (err)
		error_msg("setting the filter: %s", strerror(err));
	return err;
}

/* The default name is predictable (the command and a pid), so it is
 * created with O_EXCL, and a taken name (maybe a trap laid for it) is
 * passed over for the next free one. */
static int create_default_log(const char *command, pid_t pid, char **path)
{
	char *copy = strdup(command);
	const char *base = copy ? basename(copy) : "cmd";
	size_t size = strlen(base) + 64;
	char *name = xmalloc(size);
	for (int n = 0; n < 100; n++) {
		if (n == 0)
			snprintf(name, size, "posixtrace-%s-%d.ptlog", base, (int)pid);
		else
			snprintf(name, size, "posixtrace-%s-%d-%d.ptlog", base, (int)pid, n);
		int fd = create_output_file_excl(name);
		if (fd >= 0 || errno != EEXIST) {
			if (fd < 0)
				error_msg("%s: %s", name, strerror(errno));
			free(copy);
			*path = name;
			return fd;
		}
	}
	error_msg("posixtrace-%s-%d.ptlog and 99 other names are taken; give one with -o", base,
	          (int)pid);
	free(copy);
	*path = name;
	return -1;
}

/* --otlp without -o: a new directory of the default log's name (a
 * taken name is passed over, as create_default_log does). */
static int create_default_dir(const char *command, pid_t pid, char **path)
{
	char *copy = strdup(command);
	const char *base = copy ? basename(copy) : "cmd";
	size_t size = strlen(base) + 64;
	char *name = xmalloc(size);
	int fd = -1, n;
	for (n = 0; n < 100; n++) {
		if (n == 0)
			snprintf(name, size, "posixtrace-%s-%d.ptlog", base, (int)pid);
		else
			snprintf(name, size, "posixtrace-%s-%d-%d.ptlog", base, (int)pid, n);
		if (mkdir(name, 0700) == 0) {
			fd = rotation_dir(name);
			break;
		}
		if (errno != EEXIST) {
			error_msg("%s: %s", name, strerror(errno));
			break;
		}
	}
	if (n == 100)
		error_msg("posixtrace-%s-%d.ptlog and 99 other names are taken; give one with -o",
		          base, (int)pid);
	free(copy);
	*path = name;
	return fd;
}

/* -o -: standard output, unless it is a terminal (a binary log on a
 * terminal helps nobody). */
static bool refuse_terminal_stdout(void)
{
	if (!isatty(STDOUT_FILENO))
		return false;
	error_msg("standard output is a terminal; redirect it to write the log there, "
	          "or give -o FILE");
	return true;
}

static int stdout_log_fd(void)
{
	if (refuse_terminal_stdout())
		return -1;
	int fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		error_msg("standard output: %s", strerror(errno));
	return fd;
}

/* The log's fd for -o PATH (record and attach): - is standard output,
 * anything else a new file (or, with force, one of the caller's own). */
int log_fd_for(const char *path, bool force)
{
	return is_stdio_name(path) ? stdout_log_fd() : create_output_file(path, force);
}

/* --rotate SIZE[,COUNT] (record and attach). */
bool parse_rotation(const char *s, struct rotation *r)
{
	char size[64];
	const char *comma = strchr(s, ',');
	size_t len = comma ? (size_t)(comma - s) : strlen(s);
	unsigned long long count = 0;
	char *end;
	if (len == 0 || len >= sizeof size)
		return false;
	memcpy(size, s, len);
	size[len] = '\0';
	if (!parse_size(size, &r->size) || r->size < ROTATE_MIN_SIZE)
		return false;
	if (comma) {
		errno = 0;
		count = strtoull(comma + 1, &end, 10);
		if (errno || end == comma + 1 || *end || count < 1 || count > UINT32_MAX ||
		    comma[1] == '-')
			return false;
	}
	r->count = (uint32_t)count;
	return true;
}

/* --rotate-every N[s|m|h] (record and attach): whole seconds, minutes or
 * hours, at least a second, at most what posixtrace_file_seconds holds. */
bool parse_rotation_age(const char *s, uint32_t *seconds)
{
	char *end;
	errno = 0;
	if (!isdigit((unsigned char)*s))
		return false;
	unsigned long long v = strtoull(s, &end, 10), unit = 1;
	if (*end == 'm')
		unit = 60;
	else if (*end == 'h')
		unit = 3600;
	if (*end && (strchr("smh", *end) == NULL || end[1]))
		return false;
	if (errno || v < 1 || v > UINT32_MAX / unit)
		return false;
	*seconds = (uint32_t)(v * unit);
	return true;
}

/* What --rotate contradicts, said as a usage error. */
bool rotation_fits(const char *cmd, const char *log, bool log_policy_given, int log_policy,
                   size_t log_size)
{
	if (!log || is_stdio_name(log))
		usage_error(cmd, "--rotate writes a directory of files: give it with -o DIR");
	else if (log_policy_given && log_policy != POSIX_TRACE_APPEND)
		usage_error(cmd, "--rotate writes each file as an append log: not with "
		            "--log-policy %s", log_policy == POSIX_TRACE_LOOP ? "loop" : "until-full");
	else if (log_size)
		usage_error(cmd, "--log-size bounds a loop or until-full log; with --rotate, "
		            "SIZE bounds each file");
	else
		return true;
	return false;
}

/* The directory of a rotated log, made 0700 if it is not there; one that
 * is there must be a directory (not a symbolic link) of ours that no one
 * else may write in. */
int rotation_dir(const char *path)
{
	struct stat st;
	if (mkdir(path, 0700) != 0 && errno != EEXIST) {
		error_msg("%s: %s", path, strerror(errno));
		return -1;
	}
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		error_msg("%s: not a directory (a symbolic link is not followed): %s", path,
		          strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0 || st.st_uid != geteuid() || (st.st_mode & 022)) {
		error_msg("%s: a directory of another user, or that others may write in: refused",
		          path);
		close(fd);
		return -1;
	}
	return fd;
}

int create_rotated(pid_t pid, const trace_attr_t *attr, int dirfd, const struct rotation *r,
                   trace_id_t *trid)
{
	struct posixtrace_logdir d = {.posixtrace_dirfd = dirfd,
	                              .posixtrace_mode = 0600,
	                              .posixtrace_file_size = r->size,
	                              .posixtrace_max_files = r->count,
	                              .posixtrace_file_seconds = r->seconds};
	return posixtrace_create_withlogdir(pid, attr, &d, trid);
}

/* EINVAL from posix_trace_create_withlog on something that is not a
 * regular file is the log policy: only APPEND fits a pipe. */
const char *log_create_error(int err, int fd)
{
	struct stat st;
	if (err == EINVAL && fstat(fd, &st) == 0 && !S_ISREG(st.st_mode))
		return "a log on a pipe, socket or device takes only --log-policy append";
	return strerror(err);
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_FAIL;
}

/* Waits for the command; a stop signal ends the recording at once (the
 * caller shuts the stream down) and the command is waited for afterwards.
 * The flight recorder's snapshots are taken here, between waits. */
static bool wait_for_command(pid_t pid, int *status, struct flight *f)
{
	while (!stop_requested) {
		pid_t r = waitpid(pid, status, 0);
		if (r == pid)
			return true;
		if (r < 0 && errno != EINTR) {
			*status = 0;
			return true;
		}
		if (f)
			flight_take_pending(f);
	}
	return false;
}

/* After the recording stopped, the command is waited for so its exit
 * status becomes ours; one more stop signal gives up waiting, and the
 * status is then that of a death by the first signal. */
static void finish_command(pid_t pid, int *status)
{
	/* Ctrl-C already reached the command (same process group); a signal
	 * sent to us alone is passed on so the command ends too. */
	int sig = stop_requested;
	if (stop_signal_sent_by_process)
		kill(pid, sig);
	stop_requested = 0;
	while (waitpid(pid, status, 0) < 0) {
		if (errno != EINTR || stop_requested) {
			note_msg("%d still runs; not waiting for it", (int)pid);
			*status = sig; /* as WIFSIGNALED with WTERMSIG == sig */
			return;
		}
	}
}

struct log_counts {
	uint64_t events, from_traced, lost;
};

static bool count_log(int fd, const char *path, pid_t controller, struct log_counts *c)
{
	struct trace_log *log = trace_log_open_fd(fd, path);
	struct trace_event ev;
	if (!log)
		return false;
	memset(c, 0, sizeof *c);
	while (trace_log_next(log, &ev) > 0) {
		c->events++;
		if (ev.info.posix_pid != controller && ev.info.posix_pid != 0)
			c->from_traced++;
	}
	trace_log_lost(log, &c->lost);
	finish_log(log, 0);
	trace_log_close(log);
	return true;
}

static void print_summary(int fd, const char *path, const struct log_counts *c,
                          double seconds)
{
	struct stat st;
	long long size = fstat(fd, &st) == 0 ? (long long)st.st_size : -1;
	if (size >= 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %llu events, %llu lost, %.3f s, log %s (rotated files)\n", PROG,
		        (unsigned long long)c->events, (unsigned long long)c->lost, seconds, path);
		return;
	}
	fprintf(stderr, "%s: %llu events, %llu lost, %.3f s, log %s (%lld bytes)\n", PROG,
	        (unsigned long long)c->events, (unsigned long long)c->lost, seconds, path, size);
}

void print_log_summary(int fd, const char *path, double seconds)
{
	struct log_counts c;
	if (count_log(fd, path, getpid(), &c))
		print_summary(fd, path, &c, seconds);
}

/* A log written to a pipe cannot be read back: what the stream's status
 * said just before the end is all there is to tell. */
void print_pipe_summary(trace_id_t trid, double seconds)
{
	struct posix_trace_status_info st;
	if (posix_trace_get_status(trid, &st) != 0)
		st.posixtrace_lost_events = 0;
	fprintf(stderr, "%s: %llu lost, %.3f s, log on standard output\n", PROG,
	        (unsigned long long)st.posixtrace_lost_events, seconds);
}

/* Creates, filters and starts the stream for the held child. */
static int start_stream(const struct record_options *o, pid_t child, int logfd,
                        trace_id_t *trid)
{
	trace_attr_t attr;
	int err = build_attr(o, &attr);
	if (err)
		return err;
	err = o->rotate.size ? create_rotated(child, &attr, logfd, &o->rotate, trid)
	                     : posix_trace_create_withlog(child, &attr, logfd, trid);
	posix_trace_attr_destroy(&attr);
	if (err) {
		error_msg("record: cannot create the trace stream: %s", log_create_error(err, logfd));
		return err;
	}
	err = apply_name_filter(*trid, &o->exclude, &o->only);
	if (!err && o->images && (err = posixtrace_set_images(*trid, 1)))
		error_msg("record: cannot ask for the programs' images: %s", strerror(err));
	if (!err && (err = posix_trace_start(*trid)))
		error_msg("record: cannot start the trace stream: %s", strerror(err));
	if (err)
		posix_trace_shutdown(*trid);
	return err;
}

/* Processes that had closed the descriptors they inherited (Python's
 * subprocess does) and asked for the stream through its rendezvous. */
static void report_rendezvous(trace_id_t trid)
{
	struct posixtrace_rendezvous_info rdv;
	if (posixtrace_rendezvous_info(trid, &rdv) != 0)
		return;
	if (rdv.posixtrace_joined)
		note_msg("%llu processes had closed their inherited descriptors and joined "
		         "through the rendezvous", (unsigned long long)rdv.posixtrace_joined);
	if (rdv.posixtrace_refused)
		note_msg("%llu processes asked to join through the rendezvous and were not traced "
		         "(not descendants of the command, not traceable, or too late)",
		         (unsigned long long)rdv.posixtrace_refused);
	if (rdv.posixtrace_other_users)
		note_msg("%llu processes of the command ran as another user than the trace's and "
		         "were not traced: a stream's memory is shared by one user only "
		         "(posixtrace(1), SECURITY)",
		         (unsigned long long)rdv.posixtrace_other_users);
	if (rdv.posixtrace_short_maps)
		note_msg("%llu processes of the command could map only part of the trace stream "
		         "(ENOMEM: their address-space limit, RLIMIT_AS, is smaller than its "
		         "reserve); their events that did not fit are counted as lost",
		         (unsigned long long)rdv.posixtrace_short_maps);
}

/* --block: how long the writers waited for room. */
static void report_waits(const struct record_options *o, trace_id_t trid)
{
	struct posixtrace_block_stats info;
	if ((!o->block.tv_sec && !o->block.tv_nsec) || posixtrace_block_info(trid, &info) != 0)
		return;
	note_msg("%llu events waited for room in the stream (--block), %.3f s in all, %llu of "
	         "them lost at the timeout",
	         (unsigned long long)info.posixtrace_waited_events,
	         (double)info.posixtrace_waited_ns / 1e9,
	         (unsigned long long)info.posixtrace_waited_lost);
}

/* The command could not be run: nothing to keep. */
static int give_up_on_exec(const struct record_options *o, pid_t child, trace_id_t trid,
                           const char *path, int err)
{
	error_msg("%s: %s", o->command[0], strerror(err));
	posix_trace_shutdown(trid);
	if (path)
		unlink(path);
	waitpid(child, NULL, 0);
	return err == ENOENT ? 127 : 126;
}

static void report_recording(const struct record_options *o, int fd, const char *path,
                             double seconds)
{
	struct log_counts counts;
	if (!count_log(fd, path, getpid(), &counts))
		return;
	print_summary(fd, path, &counts, seconds);
	if (counts.from_traced == 0 && counts.lost)
		note_msg("no events from %s reached the log: %llu events were lost (see the notes "
		         "above)", o->command[0], (unsigned long long)counts.lost);
	else if (counts.from_traced == 0)
		note_msg("no events from %s: it may not be linked with libposixtrace or "
		         "posted no event, or the programs it started lost both their "
		         "descriptors and the environment (%s), which nothing can reach",
		         o->command[0], POSIXTRACE_RENDEZVOUS_ENV);
}

static int open_log(const struct record_options *o, pid_t child, char **path)
{
	if (o->rotate.size && !o->log)
		return create_default_dir(o->command[0], child, path);
	if (o->rotate.size) {
		*path = strdup(o->log);
		return rotation_dir(o->log);
	}
	if (!o->log)
		return create_default_log(o->command[0], child, path);
	*path = is_stdio_name(o->log) ? NULL : strdup(o->log);
	return log_fd_for(o->log, o->force);
}

static int record(struct record_options *o)
{
	struct held_child child;
	int status = 0, rc;
	trace_id_t trid;
	bool to_stdout = o->log && is_stdio_name(o->log);
	char *path = NULL;
	if (to_stdout && refuse_terminal_stdout())
		return EXIT_FAIL;
	if (!spawn_held_child(o->command, to_stdout, &child))
		return EXIT_FAIL;
	int logfd = open_log(o, child.pid, &path);
	bool started = logfd >= 0 && !start_stream(o, child.pid, logfd, &trid);
	if (started && o->flight && !flight_set_triggers(trid, &o->triggers)) {
		posix_trace_shutdown(trid);
		started = false;
	}
	struct otlp_live *live = NULL;
	if (started && o->otlp && !(live = otlp_live_start(&o->send, logfd, path))) {
		posix_trace_shutdown(trid);
		started = false;
	}
	if (!started) {
		close(child.go_fd); /* the child exits without running the command */
		waitpid(child.pid, NULL, 0);
		if (logfd >= 0) {
			close(logfd);
			if (path && o->rotate.size)
				(void)rmdir(path); /* made for nothing, or left as it was found */
			else if (path)
				unlink(path); /* nothing was recorded into it */
		}
		free(path);
		return EXIT_FAIL;
	}
	install_stop_handlers();
	struct posixtrace_rendezvous_info rdv;
	if (posixtrace_rendezvous_info(trid, &rdv) != 0)
		rdv.posixtrace_dir[0] = '\0';
	uint64_t t0 = now_realtime_ns();
	int exec_err = release_child(&child, rdv.posixtrace_dir);
	if (exec_err) {
		rc = give_up_on_exec(o, child.pid, trid, o->rotate.size ? NULL : path, exec_err);
		otlp_live_finish(live, o->otlp_wait);
		close(logfd);
		free(path);
		return rc;
	}
	struct flight flight;
	if (o->flight)
		flight_init(&flight, trid, t0, &o->triggers);
	bool exited = wait_for_command(child.pid, &status, o->flight ? &flight : NULL);
	double seconds = (double)(now_realtime_ns() - t0) / 1e9;
	if (to_stdout)
		print_pipe_summary(trid, seconds);
	report_rendezvous(trid);
	report_waits(o, trid);
	if (o->flight)
		flight_before_shutdown(&flight);
	int err = posix_trace_shutdown(trid);
	if (err)
		error_msg("record: writing the log failed: %s", strerror(err));
	if (!to_stdout)
		report_recording(o, logfd, path, seconds);
	char end[128];
	if (o->flight)
		flight_report(&flight, flight_command_end(exited, status, end, sizeof end), logfd, path);
	close(logfd);
	if (!exited)
		finish_command(child.pid, &status);
	/* after the command: a stop signal during the wait ends the wait only */
	int sent = otlp_live_finish(live, o->otlp_wait);
	free(path);
	rc = err ? EXIT_FAIL : exit_status_of(status);
	return rc == 0 && sent ? EXIT_FAIL : rc;
}

int cmd_record(int argc, char **argv)
{
	struct record_options o = {.stream_policy = POSIX_TRACE_FLUSH,
	                           .log_policy = POSIX_TRACE_APPEND,
	                           .inherit = true, .images = true,
	                           .otlp_wait = OTLP_LIVE_WAIT_DEFAULT};
	otlp_cli_init(&o.send);
	int rc = parse_record_options(argc, argv, &o);
	if (rc < 0)
		rc = record(&o);
	name_list_free(&o.exclude);
	name_list_free(&o.only);
	name_list_free(&o.triggers);
	otlp_cli_free(&o.send);
	return rc;
}
