/* SPDX-License-Identifier: MIT */
/*
 * posixtrace export: what its files share.  otlp.c turns a log into OTLP
 * spans and log records in batches, otlpsend.c sends a batch (OTLP/HTTP,
 * gzip, retries) and counts what became of it, hostid.c names the host
 * without exposing its machine id, export.c is the command.
 */
#ifndef POSIXTRACE_OTLP_H
#define POSIXTRACE_OTLP_H

#include "tool.h"

/* hostid.c */
struct sha256 {
	uint32_t h[8];
	uint64_t total;
	uint8_t block[64];
};
void sha256_init(struct sha256 *c);
void sha256_update(struct sha256 *c, const void *data, size_t len);
void sha256_final(struct sha256 *c, uint8_t out[32]);
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
};
struct otlp_sender;
/* NULL, said, when it cannot be (no libcurl in this build) */
struct otlp_sender *otlp_sender_new(const struct otlp_config *c);
/* Sends one request body of n items of the signal; the outcome in counts. */
void otlp_send(struct otlp_sender *s, enum otlp_signal sig, const uint8_t *body, size_t len,
               uint64_t items);
const struct otlp_counts *otlp_sender_counts(const struct otlp_sender *s, enum otlp_signal sig);
uint64_t otlp_sender_bytes(const struct otlp_sender *s); /* of bodies as sent */
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
const struct otlp_totals *otlp_exporter_totals(const struct otlp_exporter *x);
void otlp_exporter_free(struct otlp_exporter *x);

#endif
