/* SPDX-License-Identifier: MIT */
/*
 * posixtrace export: what its files share.  otlp.c turns a log into OTLP
 * spans and log records in batches, otlpsend.c sends a batch (OTLP/HTTP,
 * gzip, retries) and counts what became of it, hostid.c names the host
 * without exposing its machine id, export.c is the command.
 */
#ifndef POSIXTRACE_OTLP_H
#define POSIXTRACE_OTLP_H

#include <stdatomic.h>

#include "tool.h"

/* hostid.c */
/* host.id of this machine (posixtrace_host_self's machine id), 32 hex
 * digits; 0 or an error number */
int host_id(char out[33]);

enum otlp_signal { OTLP_TRACES, OTLP_LOGS, OTLP_SIGNALS };

/* What became of the spans (OTLP_TRACES) or log records (OTLP_LOGS). */
struct otlp_counts {
	uint64_t sent;     /* in requests the receiver accepted */
	uint64_t refused;  /* of those, rejected by partial success */
	uint64_t dropped;  /* in requests given up: an error not retried, or attempts spent */
	uint64_t requests, retries;
};

/* otlpsend.c: the receiver and how to talk to it */
#define OTLP_HEADERS_MAX 64
#define OTLP_RESPONSE_MAX (64u << 10) /* bytes of a response body read */
#define OTLP_RETRY_AFTER_MAX 60.0     /* seconds: a longer Retry-After is cut to it */
struct otlp_config {
	const char *url[OTLP_SIGNALS]; /* the full URLs, /v1/traces and /v1/logs */
	char *headers[OTLP_HEADERS_MAX]; /* "Name: value" */
	size_t nheaders;
	bool gzip;
	bool discard;           /* encode and compress, send nothing (a benchmark's sink) */
	double timeout, connect_timeout; /* seconds */
	unsigned attempts;      /* of one request, the first included */
	double backoff, backoff_max; /* seconds: the first wait, the longest */
	bool verbose;           /* each request's outcome on stderr */
	const char *label;      /* what messages begin with: "export", "otlp" */
	/* NULL: a stop signal (stop_requested) ends the retries; else, once
	 * it is set, the request under way is given up and no other is made
	 * (its items counted dropped): the live sender's end (otlplive.c) */
	atomic_bool *cancel;
};
struct otlp_sender;
/* NULL, said, when it cannot be (no libcurl in this build) */
struct otlp_sender *otlp_sender_new(const struct otlp_config *c);
/* Sends one request body of n items of the signal; the outcome in counts. */
void otlp_send(struct otlp_sender *s, enum otlp_signal sig, const uint8_t *body, size_t len,
               uint64_t items);
const struct otlp_counts *otlp_sender_counts(const struct otlp_sender *s, enum otlp_signal sig);
uint64_t otlp_sender_bytes(const struct otlp_sender *s); /* of bodies as sent */
/* Requests not attempted once config.cancel was set (their items are in
 * the counts' dropped). */
uint64_t otlp_sender_cancelled(const struct otlp_sender *s);
void otlp_sender_free(struct otlp_sender *s);

/* otlp.c: logs to batches */
#define OTLP_BATCH_SPANS_DEFAULT 512
#define OTLP_BATCH_BYTES_DEFAULT ((size_t)4 << 20)
#define OTLP_EVENTS_PER_SPAN 128  /* events of a span, the SDK's limit; more are linked records */
#define OTLP_OPEN_SPANS_MAX 65536 /* unfinished begins kept open at once, in all */
struct otlp_options {
	const char *service_name; /* NULL: each log's trace name */
	const char *host_name;    /* NULL: this machine's */
	bool trace_per_log;
	size_t batch_spans, batch_bytes; /* per request: items, bytes before compression */
	struct pair_rules pairs;
	struct event_window window;
	struct site_options sites;
};
struct otlp_totals {
	uint64_t spans, unfinished, span_events, records, linked_records, not_opened;
};
struct otlp_exporter;
struct otlp_exporter *otlp_exporter_new(const struct otlp_options *o, struct otlp_sender *s);
/* Exports one log (opened, windowed); the exit status of reading it. */
int otlp_export_log(struct otlp_exporter *x, struct trace_log *log, struct site_table *sites);
void otlp_exporter_free(struct otlp_exporter *x);
/* Live (record and attach --otlp): the files of one rotated log, each as
 * it is complete, exported as one trace: begins are opened as they come
 * (no first pass), an end closes the span of its begin (pairs.c's pairer),
 * the spans still open carried to the next file; key_ns and controller
 * name the recording (its span ids).  At the end, the spans still open are
 * unfinished, and one summary record says lost and state. */
void otlp_live_begin(struct otlp_exporter *x, uint64_t key_ns, pid_t controller);
int otlp_live_file(struct otlp_exporter *x, struct trace_log *log, struct site_table *sites);
void otlp_live_end(struct otlp_exporter *x, uint64_t lost, enum log_state state);
/* What became of everything, on standard error (cmd: "export", "otlp");
 * true if all was delivered. */
bool otlp_print_summary(const char *cmd, const struct otlp_sender *s,
                        const struct otlp_exporter *x, bool discard);

/* export.c: the options of a sender, export's and record's and attach's
 * (--otlp and what goes with it) and the OTEL_EXPORTER_OTLP_* variables. */
struct otlp_cli {
	const char *url;
	struct otlp_config config;
	struct otlp_options otlp;
	char *urls[OTLP_SIGNALS];
};
enum {
	OTLP_OPT_URL = 0x4000, OTLP_OPT_HEADER, OTLP_OPT_SERVICE, OTLP_OPT_HOST,
	OTLP_OPT_TRACE_PER_LOG, OTLP_OPT_BATCH_SPANS, OTLP_OPT_BATCH_BYTES, OTLP_OPT_COMPRESSION,
	OTLP_OPT_TIMEOUT, OTLP_OPT_CONNECT_TIMEOUT, OTLP_OPT_ATTEMPTS, OTLP_OPT_BACKOFF,
	OTLP_OPT_DISCARD, OTLP_OPT_PAIR, OTLP_OPT_NO_PAIR
};
#define OTLP_LONGOPTS \
	{"otlp", required_argument, 0, OTLP_OPT_URL}, \
	{"header", required_argument, 0, OTLP_OPT_HEADER}, \
	{"service-name", required_argument, 0, OTLP_OPT_SERVICE}, \
	{"host-name", required_argument, 0, OTLP_OPT_HOST}, \
	{"trace-per-log", no_argument, 0, OTLP_OPT_TRACE_PER_LOG}, \
	{"batch-spans", required_argument, 0, OTLP_OPT_BATCH_SPANS}, \
	{"batch-bytes", required_argument, 0, OTLP_OPT_BATCH_BYTES}, \
	{"compression", required_argument, 0, OTLP_OPT_COMPRESSION}, \
	{"timeout", required_argument, 0, OTLP_OPT_TIMEOUT}, \
	{"connect-timeout", required_argument, 0, OTLP_OPT_CONNECT_TIMEOUT}, \
	{"attempts", required_argument, 0, OTLP_OPT_ATTEMPTS}, \
	{"backoff", required_argument, 0, OTLP_OPT_BACKOFF}, \
	{"discard", no_argument, 0, OTLP_OPT_DISCARD}, \
	{"pair", required_argument, 0, OTLP_OPT_PAIR}, \
	{"no-pair", no_argument, 0, OTLP_OPT_NO_PAIR}
#define OTLP_SEND_HELP \
	"  --header K=V         a header of every request (repeatable; also\n" \
	"                       OTEL_EXPORTER_OTLP_HEADERS); never printed\n" \
	"  --service-name NAME  the resource's service.name (default: OTEL_SERVICE_NAME,\n" \
	"                       else the log's program)\n" \
	"  --host-name NAME     the resource's host.name (default: this host's)\n" \
	"  --trace-per-log      one trace id per log (default: one per top-level span)\n" \
	"  --batch-spans N      spans (log records) per request (default 512)\n" \
	"  --batch-bytes SIZE   encoded bytes per request (default 4M)\n" \
	"  --compression gzip|none  the request bodies (default gzip)\n" \
	"  --timeout SEC        of one request (default 10)\n" \
	"  --connect-timeout SEC of one connection (default 5)\n" \
	"  --attempts N         of one request, retries included (default 5)\n" \
	"  --backoff SEC        the first wait before a retry (default 1; doubles,\n" \
	"                       at most 30 s; a Retry-After answer replaces it)\n" \
	"  --discard            encode (and compress) everything, send nothing\n" \
	"  --pair BEGIN=END     also pair these two event names (repeatable)\n" \
	"  --no-pair            no NAME_begin/NAME_end pairing\n"
/* The defaults, then the environment's OTEL_EXPORTER_OTLP_TIMEOUT,
 * _COMPRESSION and OTEL_SERVICE_NAME. */
void otlp_cli_init(struct otlp_cli *o);
/* One option of OTLP_LONGOPTS: -1 taken, 0 not one of them, else the
 * exit status of a usage error (said, with cmd). */
int otlp_cli_option(struct otlp_cli *o, int c, const char *arg, const char *cmd,
                    const char *opt);
/* After the options: the environment's headers, the URLs; false (said
 * as a usage error of cmd) when they are bad or name no receiver. */
bool otlp_cli_finish(struct otlp_cli *o, const char *cmd);
void otlp_cli_free(struct otlp_cli *o);

/* record.c: --otlp's checks and implied rotation, for record and attach;
 * -1 when all is good, else the exit status (said). */
int live_options(const char *cmd, bool flight, const char *log, bool log_policy_given,
                 int log_policy, struct rotation *rotate, struct otlp_cli *send);

/* otlplive.c: record and attach --otlp, a thread of the command that
 * follows a rotated log as the keeper writes it (docs/OTLP.md, "Sending
 * while recording"). */
#define OTLP_LIVE_ROTATE_DEFAULT ((size_t)1 << 20) /* --rotate's SIZE when not given */
#define OTLP_LIVE_ROTATE_EVERY_DEFAULT 10u /* --rotate-every's seconds when not given */
#define OTLP_LIVE_WAIT_DEFAULT 30.0 /* seconds: the wait for the sender at the end */
struct otlp_live;
/* The sender started on the rotated log in dirfd (label for messages);
 * NULL (said) if it cannot be. */
struct otlp_live *otlp_live_start(struct otlp_cli *cli, int dirfd, const char *label);
/* After the recording ended (the stream shut down): the rest sent within
 * wait seconds (a stop signal meanwhile cuts it short), the summary said;
 * 0 if all was delivered, else EXIT_FAIL. */
int otlp_live_finish(struct otlp_live *l, double wait);

#endif
