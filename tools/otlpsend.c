/* SPDX-License-Identifier: MIT */
/*
 * OTLP/HTTP requests (the OpenTelemetry protocol specification, "OTLP/HTTP"):
 * a protobuf body POSTed with Content-Type application/x-protobuf,
 * compressed with gzip (Content-Encoding: gzip) unless told not to.  A 2xx
 * answer is a success, its body an Export*ServiceResponse whose
 * partial_success says how many items the receiver rejected; 429, 502, 503
 * and 504, a connection refused, reset or closed before the answer, and a
 * timeout are retried after a wait (the answer's Retry-After, in seconds or
 * as an HTTP date, at most OTLP_RETRY_AFTER_MAX; else an exponential
 * backoff from config.backoff, doubling, at most config.backoff_max), up to
 * config.attempts attempts in all; any other answer drops the request.
 * Every item ends counted as sent, refused or dropped.
 *
 * libcurl does the HTTP (http and https only, no redirects followed, no
 * signals), zlib the gzip; without libcurl in the build the command says
 * so (otlp_can_send).  libcurl is opened when a sender that sends is made
 * (dlopen), not linked: it brings some thirty libraries, whose loading
 * cost every run of the command (dump, convert) 3.5 ms of CPU here.  Of a response, at most OTLP_RESPONSE_MAX bytes of
 * body are kept; the headers given are never printed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "otlp.h"

#ifdef PT_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef PT_HAVE_LIBCURL
#include <curl/curl.h>
#include <dlfcn.h>
#include <pthread.h>
#endif

static const char *const signal_names[OTLP_SIGNALS] = {"traces", "logs"};
static const char *const item_names[OTLP_SIGNALS] = {"spans", "log records"};

struct otlp_sender {
	struct otlp_config c;
	struct otlp_counts counts[OTLP_SIGNALS];
	uint64_t bytes, cancelled;
	unsigned char *zbuf;
	size_t zcap;
#ifdef PT_HAVE_LIBCURL
	CURL *curl;
	struct curl_slist *headers;
#endif
	/* of the response being read */
	unsigned char *response;
	size_t response_len;
	double retry_after; /* seconds; < 0: none */
};

#ifdef PT_HAVE_LIBCURL
/* ---- libcurl, opened on demand --------------------------------------------- */

#define LIBCURL_SONAME "libcurl.so.4"

static struct libcurl {
	CURLcode (*global_init)(long flags);
	void (*global_cleanup)(void);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	const char *(*easy_strerror)(CURLcode code);
	void (*easy_cleanup)(CURL *curl);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
} lib;
static char lib_error[256] = "not opened"; /* why not; "" once it is */
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

/* A symbol into a function pointer (POSIX's dlsym idiom); false if absent. */
static bool lib_symbol(void *handle, const char *name, void *fn)
{
	void *sym = dlsym(handle, name);
	memcpy(fn, &sym, sizeof sym);
	return sym != NULL;
}

static void lib_open(void)
{
	void *h = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		const char *why = dlerror();
		snprintf(lib_error, sizeof lib_error, "%s", why ? why : LIBCURL_SONAME " not found");
		return;
	}
	if (!lib_symbol(h, "curl_global_init", &lib.global_init) ||
	    !lib_symbol(h, "curl_global_cleanup", &lib.global_cleanup) ||
	    !lib_symbol(h, "curl_easy_init", &lib.easy_init) ||
	    !lib_symbol(h, "curl_easy_setopt", &lib.easy_setopt) ||
	    !lib_symbol(h, "curl_easy_perform", &lib.easy_perform) ||
	    !lib_symbol(h, "curl_easy_getinfo", &lib.easy_getinfo) ||
	    !lib_symbol(h, "curl_easy_strerror", &lib.easy_strerror) ||
	    !lib_symbol(h, "curl_easy_cleanup", &lib.easy_cleanup) ||
	    !lib_symbol(h, "curl_slist_append", &lib.slist_append) ||
	    !lib_symbol(h, "curl_slist_free_all", &lib.slist_free_all)) {
		snprintf(lib_error, sizeof lib_error, "%s lacks a function this posixtrace calls",
		         LIBCURL_SONAME);
		dlclose(h);
		return;
	}
	lib_error[0] = '\0'; /* kept open: senders come and go */
}

/* libcurl's functions, opened once; false with the reason said. */
static bool lib_ready(const char *label)
{
	pthread_once(&lib_once, lib_open);
	if (lib_error[0])
		error_msg("%s: libcurl cannot be opened: %s", label, lib_error);
	return !lib_error[0];
}
#endif

static bool otlp_can_send(void)
{
#ifdef PT_HAVE_LIBCURL
	return true;
#else
	return false;
#endif
}

static bool otlp_can_gzip(void)
{
#ifdef PT_HAVE_ZLIB
	return true;
#else
	return false;
#endif
}

/* ---- gzip ------------------------------------------------------------------ */

/* The body as gzip in s->zbuf; its length, 0 on failure (said). */
static size_t gzip_body(struct otlp_sender *s, const uint8_t *body, size_t len)
{
#ifdef PT_HAVE_ZLIB
	z_stream z;
	memset(&z, 0, sizeof z);
	/* 15 + 16: a gzip header and trailer around the deflate stream */
	if (deflateInit2(&z, Z_BEST_SPEED, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		error_msg("%s: zlib cannot start", s->c.label);
		return 0;
	}
	size_t need = deflateBound(&z, (uLong)len);
	if (s->zcap < need) {
		free(s->zbuf);
		s->zbuf = xmalloc(need);
		s->zcap = need;
	}
	z.next_in = (Bytef *)(uintptr_t)body;
	z.avail_in = (uInt)len;
	z.next_out = s->zbuf;
	z.avail_out = (uInt)need;
	int rc = deflate(&z, Z_FINISH);
	size_t out = z.total_out;
	deflateEnd(&z);
	if (rc != Z_STREAM_END) {
		error_msg("%s: zlib failed to compress a request", s->c.label);
		return 0;
	}
	return out;
#else
	(void)s;
	(void)body;
	(void)len;
	return 0;
#endif
}

#ifdef PT_HAVE_LIBCURL
/* ---- partial success ---------------------------------------------------------- */

static bool read_varint(const unsigned char **p, const unsigned char *end, uint64_t *v)
{
	*v = 0;
	for (unsigned shift = 0; *p < end && shift < 64; shift += 7) {
		unsigned char b = *(*p)++;
		*v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* The bytes of field `field` (length-delimited) of a message, or of the
 * varint field into *v; false if absent or malformed. */
static bool find_field(const unsigned char *p, const unsigned char *end, uint32_t field,
                       const unsigned char **value, size_t *len, uint64_t *v)
{
	uint64_t key, n;
	while (p < end) {
		if (!read_varint(&p, end, &key))
			return false;
		switch (key & 7) {
		case 0:
			if (!read_varint(&p, end, &n))
				return false;
			if (key >> 3 == field && v) {
				*v = n;
				return true;
			}
			break;
		case 1: if (end - p < 8) return false; p += 8; break;
		case 5: if (end - p < 4) return false; p += 4; break;
		case 2:
			if (!read_varint(&p, end, &n) || n > (uint64_t)(end - p))
				return false;
			if (key >> 3 == field && value) {
				*value = p;
				*len = (size_t)n;
				return true;
			}
			p += n;
			break;
		default: return false;
		}
	}
	return false;
}

/* ExportTraceServiceResponse.partial_success (1): rejected_spans (1),
 * error_message (2); the same numbers in ExportLogsServiceResponse. */
static uint64_t rejected_items(struct otlp_sender *s, enum otlp_signal sig)
{
	const unsigned char *ps, *msg, *end = s->response + s->response_len;
	size_t ps_len, msg_len;
	uint64_t rejected = 0;
	if (!s->response_len || !find_field(s->response, end, 1, &ps, &ps_len, NULL))
		return 0;
	find_field(ps, ps + ps_len, 1, NULL, NULL, &rejected);
	if ((int64_t)rejected < 0)
		rejected = 0;
	if (find_field(ps, ps + ps_len, 2, &msg, &msg_len, NULL) && msg_len) {
		char text[201], esc[ESCAPED_SIZE(200)];
		snprintf(text, sizeof text, "%.*s", (int)(msg_len > 200 ? 200 : msg_len), msg);
		note_msg("%s: %s: the receiver says: %s", s->c.label, signal_names[sig],
		         escape_text(text, esc, sizeof esc));
	}
	return rejected;
}

/* ---- retries ------------------------------------------------------------------- */

static bool retried_status(long status)
{
	return status == 429 || status == 502 || status == 503 || status == 504;
}

/* A stop signal, or the caller's cancel when it gave one, ends the
 * attempts (config.cancel). */
static bool stopping(const struct otlp_sender *s)
{
	return s->c.cancel ? atomic_load(s->c.cancel) : stop_requested != 0;
}

/* In steps of at most 50 ms, so that a cancel ends the wait soon. */
static void sleep_seconds(const struct otlp_sender *s, double sec)
{
	while (sec > 0 && !stopping(s)) {
		double step = sec < 0.05 ? sec : 0.05;
		struct timespec ts = {0, (long)(step * 1e9)};
		nanosleep(&ts, NULL);
		sec -= step;
	}
}

/* Retry-After: delay-seconds or an HTTP-date (RFC 9110, 10.2.3). */
static double parse_retry_after(const char *v)
{
	char *end;
	while (*v == ' ' || *v == '\t')
		v++;
	if (*v >= '0' && *v <= '9') {
		unsigned long long sec = strtoull(v, &end, 10);
		return sec > OTLP_RETRY_AFTER_MAX ? OTLP_RETRY_AFTER_MAX : (double)sec;
	}
	struct tm tm;
	memset(&tm, 0, sizeof tm);
	const char *rest = strptime(v, "%a, %d %b %Y %H:%M:%S GMT", &tm);
	if (!rest)
		return -1;
	double d = difftime(timegm(&tm), time(NULL));
	return d < 0 ? 0 : d > OTLP_RETRY_AFTER_MAX ? OTLP_RETRY_AFTER_MAX : d;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	struct otlp_sender *s = arg;
	size_t len = size * n, keep = OTLP_RESPONSE_MAX - s->response_len;
	if (keep > len)
		keep = len;
	memcpy(s->response + s->response_len, data, keep);
	s->response_len += keep;
	return len; /* the rest is read and not kept */
}

/* libcurl asks at least once a second during a transfer: a nonzero answer
 * aborts it (CURLE_ABORTED_BY_CALLBACK). */
static int on_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
                       curl_off_t ulnow)
{
	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	return stopping(arg);
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct otlp_sender *s = arg;
	size_t len = size * n;
	char line[256];
	if (len > 12 && len < sizeof line && !strncasecmp(data, "retry-after:", 12)) {
		memcpy(line, data + 12, len - 12);
		line[len - 12] = '\0';
		line[strcspn(line, "\r\n")] = '\0';
		s->retry_after = parse_retry_after(line);
	}
	return len;
}

/* A failure of the transport worth another attempt. */
static bool retried_error(CURLcode rc)
{
	return rc == CURLE_COULDNT_CONNECT || rc == CURLE_OPERATION_TIMEDOUT ||
	       rc == CURLE_GOT_NOTHING || rc == CURLE_SEND_ERROR || rc == CURLE_RECV_ERROR ||
	       rc == CURLE_PARTIAL_FILE;
}

/* One attempt: the HTTP status (0: none came, *err the transport's error). */
static long attempt(struct otlp_sender *s, enum otlp_signal sig, const uint8_t *body, size_t len,
                    CURLcode *err)
{
	long status = 0;
	s->response_len = 0;
	s->retry_after = -1;
	lib.easy_setopt(s->curl, CURLOPT_URL, s->c.url[sig]);
	lib.easy_setopt(s->curl, CURLOPT_POSTFIELDS, (const char *)body);
	lib.easy_setopt(s->curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	*err = lib.easy_perform(s->curl);
	if (*err == CURLE_OK)
		lib.easy_getinfo(s->curl, CURLINFO_RESPONSE_CODE, &status);
	return status;
}
#endif

static void drop(struct otlp_sender *s, enum otlp_signal sig, uint64_t items, const char *why)
{
	s->counts[sig].dropped += items;
	error_msg("%s: %s: %llu %s dropped: %s", s->c.label, signal_names[sig],
	          (unsigned long long)items, item_names[sig], why);
}

void otlp_send(struct otlp_sender *s, enum otlp_signal sig, const uint8_t *body, size_t len,
               uint64_t items)
{
	struct otlp_counts *n = &s->counts[sig];
	if (s->c.cancel && atomic_load(s->c.cancel)) {
		s->cancelled++;
		n->dropped += items;
		return;
	}
	n->requests++;
	if (s->c.gzip) {
		len = gzip_body(s, body, len);
		body = s->zbuf;
		if (!len) {
			drop(s, sig, items, "not compressed");
			return;
		}
	}
	s->bytes += len;
	if (s->c.discard) {
		n->sent += items;
		return;
	}
#ifdef PT_HAVE_LIBCURL
	double wait = s->c.backoff;
	char why[160];
	for (unsigned k = 1;; k++) {
		CURLcode err;
		long status = attempt(s, sig, body, len, &err);
		if (status >= 200 && status < 300) {
			uint64_t rejected = rejected_items(s, sig);
			n->sent += items;
			n->refused += rejected > items ? items : rejected;
			if (s->c.verbose)
				note_msg("%s: %s: HTTP %ld, %llu %s, %llu refused", s->c.label,
				         signal_names[sig], status, (unsigned long long)items, item_names[sig],
				         (unsigned long long)rejected);
			return;
		}
		if (status)
			snprintf(why, sizeof why, "HTTP %ld", status);
		else
			snprintf(why, sizeof why, "%s", lib.easy_strerror(err));
		bool again = status ? retried_status(status) : retried_error(err);
		if (!again) {
			drop(s, sig, items, why);
			return;
		}
		if (k >= s->c.attempts || stopping(s)) {
			snprintf(why + strlen(why), sizeof why - strlen(why), " after %u attempts", k);
			drop(s, sig, items, why);
			return;
		}
		double delay = s->retry_after >= 0 ? s->retry_after : wait;
		if (s->c.verbose)
			note_msg("%s: %s: %s, attempt %u again in %.3f s", s->c.label,
			         signal_names[sig], why, k + 1, delay);
		n->retries++;
		sleep_seconds(s, delay);
		wait = wait * 2 > s->c.backoff_max ? s->c.backoff_max : wait * 2;
	}
#else
	drop(s, sig, items, "this posixtrace was built without libcurl");
#endif
}

struct otlp_sender *otlp_sender_new(const struct otlp_config *c)
{
	if (!c->discard && !otlp_can_send()) {
		error_msg("%s: this posixtrace was built without libcurl, so it cannot send "
		          "(install libcurl4-openssl-dev and build again: scripts/install-deps.sh); "
		          "--discard still encodes", c->label);
		return NULL;
	}
	if (c->gzip && !otlp_can_gzip()) {
		error_msg("%s: this posixtrace was built without zlib: use --compression none",
		          c->label);
		return NULL;
	}
	struct otlp_sender *s = xmalloc(sizeof *s);
	memset(s, 0, sizeof *s);
	s->c = *c;
	s->response = xmalloc(OTLP_RESPONSE_MAX);
#ifdef PT_HAVE_LIBCURL
	if (!c->discard) {
		if (!lib_ready(c->label)) {
			free(s->response);
			free(s);
			return NULL;
		}
		if (lib.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK || !(s->curl = lib.easy_init())) {
			error_msg("%s: libcurl cannot start", c->label);
			free(s->response);
			free(s);
			return NULL;
		}
		s->headers = lib.slist_append(NULL, "Content-Type: application/x-protobuf");
		if (c->gzip)
			s->headers = lib.slist_append(s->headers, "Content-Encoding: gzip");
		for (size_t i = 0; i < c->nheaders; i++)
			s->headers = lib.slist_append(s->headers, c->headers[i]);
		s->headers = lib.slist_append(s->headers, "Expect:"); /* no 100-continue round trip */
		lib.easy_setopt(s->curl, CURLOPT_HTTPHEADER, s->headers);
		lib.easy_setopt(s->curl, CURLOPT_NOSIGNAL, 1L);
		lib.easy_setopt(s->curl, CURLOPT_PROTOCOLS_STR, "http,https");
		lib.easy_setopt(s->curl, CURLOPT_FOLLOWLOCATION, 0L);
		lib.easy_setopt(s->curl, CURLOPT_TIMEOUT_MS, (long)(c->timeout * 1000));
		lib.easy_setopt(s->curl, CURLOPT_CONNECTTIMEOUT_MS, (long)(c->connect_timeout * 1000));
		lib.easy_setopt(s->curl, CURLOPT_WRITEFUNCTION, on_body);
		lib.easy_setopt(s->curl, CURLOPT_WRITEDATA, s);
		lib.easy_setopt(s->curl, CURLOPT_HEADERFUNCTION, on_header);
		lib.easy_setopt(s->curl, CURLOPT_HEADERDATA, s);
		lib.easy_setopt(s->curl, CURLOPT_USERAGENT, "posixtrace-otlp/1");
		if (c->cancel) {
			lib.easy_setopt(s->curl, CURLOPT_XFERINFOFUNCTION, on_progress);
			lib.easy_setopt(s->curl, CURLOPT_XFERINFODATA, s);
			lib.easy_setopt(s->curl, CURLOPT_NOPROGRESS, 0L);
		}
	}
#endif
	return s;
}

const struct otlp_counts *otlp_sender_counts(const struct otlp_sender *s, enum otlp_signal sig)
{
	return &s->counts[sig];
}

uint64_t otlp_sender_bytes(const struct otlp_sender *s)
{
	return s->bytes;
}

uint64_t otlp_sender_cancelled(const struct otlp_sender *s)
{
	return s->cancelled;
}

void otlp_sender_free(struct otlp_sender *s)
{
	if (!s)
		return;
#ifdef PT_HAVE_LIBCURL
	if (s->curl) {
		lib.easy_cleanup(s->curl);
		lib.slist_free_all(s->headers);
		lib.global_cleanup();
	}
#endif
	free(s->response);
	free(s->zbuf);
	free(s);
}
