/* SPDX-License-Identifier: MIT */
/*
 * posixtrace export: logs sent to an OpenTelemetry receiver (a Collector,
 * or any backend that takes OTLP/HTTP): spans and log records (otlp.c) in
 * requests (otlpsend.c).  The endpoint and headers are read as the
 * OpenTelemetry exporters read them: --otlp URL, else
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT / _LOGS_ENDPOINT (used as they are),
 * else OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces, /v1/logs);
 * OTEL_EXPORTER_OTLP_HEADERS (k=v,k2=v2, values percent-decoded) and
 * --header K=V; OTEL_EXPORTER_OTLP_TIMEOUT (milliseconds),
 * OTEL_EXPORTER_OTLP_COMPRESSION (gzip, none) and OTEL_SERVICE_NAME.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "otlp.h"

static void export_help(FILE *out)
{
	fprintf(out,
	        "usage: %s export LOG... [--otlp URL] [OPTIONS]\n"
	        "Sends each LOG to an OpenTelemetry receiver over OTLP/HTTP (protobuf):\n"
	        "spans to URL/v1/traces, log records to URL/v1/logs.  Begin/end pairs\n"
	        "(NAME_begin/NAME_end, NAME:begin/NAME:end, --pair) become spans nested\n"
	        "by thread; other events become events of the enclosing span, or log\n"
	        "records; system events are log records with a severity.\n\n"
	        "  --otlp URL           the receiver (default: OTEL_EXPORTER_OTLP_ENDPOINT,\n"
	        "                       or the per-signal ..._TRACES_ENDPOINT, _LOGS_ENDPOINT)\n"
	        OTLP_SEND_HELP
	        "  -v, --verbose        each request's outcome on standard error\n"
	        "The events exported (as dump would show them):\n"
	        WINDOW_HELP
	        SITE_HELP
	        "  -h, --help           this help\n"
	        "Exit status: 0 when every span and record was delivered; 1 if any was\n"
	        "refused, dropped, or a log could not be read; 2 for usage errors; 3 if a\n"
	        "log is damaged inside (after exporting what could be read).\n",
	        PROG);
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static void trim(char **s, char **end)
{
	while (*s < *end && (**s == ' ' || **s == '\t'))
		(*s)++;
	while (*end > *s && ((*end)[-1] == ' ' || (*end)[-1] == '\t'))
		(*end)--;
}

/* K=V (value percent-decoded when from the environment) as "K: V";
 * false if it is not one, or a name or value a header cannot carry. */
static bool add_header(struct otlp_config *c, const char *kv, size_t n, bool decode)
{
	char *copy = strndup(kv, n), *eq = strchr(copy, '=');
	if (!eq || c->nheaders == OTLP_HEADERS_MAX) {
		free(copy);
		return false;
	}
	char *k = copy, *kend = eq, *v = eq + 1, *vend = copy + n;
	trim(&k, &kend);
	trim(&v, &vend);
	*kend = '\0';
	*vend = '\0';
	char *w = v;
	for (char *r = v; *r; r++) {
		if (decode && r[0] == '%' && hex_value(r[1]) >= 0 && hex_value(r[2]) >= 0) {
			*w++ = (char)(hex_value(r[1]) * 16 + hex_value(r[2]));
			r += 2;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
	bool ok = *k && strcspn(k, ": \t\r\n") == strlen(k) && strcspn(v, "\r\n") == strlen(v);
	if (ok) {
		size_t len = strlen(k) + strlen(v) + 3;
		c->headers[c->nheaders] = xmalloc(len);
		snprintf(c->headers[c->nheaders++], len, "%s: %s", k, v);
	}
	free(copy);
	return ok;
}

static bool env_headers(struct otlp_config *c)
{
	const char *env = getenv("OTEL_EXPORTER_OTLP_HEADERS");
	while (env && *env) {
		size_t n = strcspn(env, ",");
		if (n && !add_header(c, env, n, true))
			return false;
		env += n + (env[n] == ',');
	}
	return true;
}

static char *join_url(const char *base, const char *path)
{
	size_t n = strlen(base);
	while (n && base[n - 1] == '/')
		n--;
	char *url = xmalloc(n + strlen(path) + 1);
	memcpy(url, base, n);
	strcpy(url + n, path);
	return url;
}

static bool set_urls(struct otlp_cli *o)
{
	static const char *const paths[OTLP_SIGNALS] = {"/v1/traces", "/v1/logs"};
	static const char *const envs[OTLP_SIGNALS] = {"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	                                               "OTEL_EXPORTER_OTLP_LOGS_ENDPOINT"};
	const char *base = o->url ? o->url : getenv("OTEL_EXPORTER_OTLP_ENDPOINT");
	for (int s = 0; s < OTLP_SIGNALS; s++) {
		const char *own = o->url ? NULL : getenv(envs[s]);
		if (own && *own)
			o->urls[s] = strdup(own);
		else if (base && *base)
			o->urls[s] = join_url(base, paths[s]);
		else if (!o->config.discard)
			return false;
		o->config.url[s] = o->urls[s];
	}
	return true;
}

static bool parse_count(const char *s, unsigned long max, size_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);
	if (*s < '0' || *s > '9' || *end || v == 0 || v > max)
		return false;
	*out = v;
	return true;
}

int otlp_cli_option(struct otlp_cli *o, int c, const char *arg, const char *cmd,
                    const char *opt)
{
	size_t n;
	double sec;
	switch (c) {
	case OTLP_OPT_URL: o->url = arg; break;
	case OTLP_OPT_HEADER:
		if (!add_header(&o->config, arg, strlen(arg), false))
			return usage_error(cmd, "bad --header (K=V, a header's name and value)");
		break;
	case OTLP_OPT_SERVICE: o->otlp.service_name = arg; break;
	case OTLP_OPT_HOST: o->otlp.host_name = arg; break;
	case OTLP_OPT_TRACE_PER_LOG: o->otlp.trace_per_log = true; break;
	case OTLP_OPT_BATCH_SPANS:
		if (!parse_count(arg, 1u << 20, &o->otlp.batch_spans))
			return usage_error(cmd, "bad --batch-spans '%s' (1 to 1048576)", arg);
		break;
	case OTLP_OPT_BATCH_BYTES:
		if (!parse_size(arg, &o->otlp.batch_bytes) || o->otlp.batch_bytes < 1024 ||
		    o->otlp.batch_bytes > ((size_t)1 << 30))
			return usage_error(cmd, "bad --batch-bytes '%s' (1K to 1G)", arg);
		break;
	case OTLP_OPT_COMPRESSION:
		if (strcmp(arg, "gzip") && strcmp(arg, "none"))
			return usage_error(cmd, "bad --compression '%s' (gzip, none)", arg);
		o->config.gzip = !strcmp(arg, "gzip");
		break;
	case OTLP_OPT_TIMEOUT:
	case OTLP_OPT_CONNECT_TIMEOUT:
	case OTLP_OPT_BACKOFF:
		if (!parse_seconds(arg, &sec) || sec > 3600 || (sec <= 0 && c != OTLP_OPT_BACKOFF))
			return usage_error(cmd, "bad %s '%s' (seconds)", opt, arg);
		*(c == OTLP_OPT_TIMEOUT ? &o->config.timeout
		  : c == OTLP_OPT_CONNECT_TIMEOUT ? &o->config.connect_timeout : &o->config.backoff) = sec;
		break;
	case OTLP_OPT_ATTEMPTS:
		if (!parse_count(arg, 100, &n))
			return usage_error(cmd, "bad --attempts '%s' (1 to 100)", arg);
		o->config.attempts = (unsigned)n;
		break;
	case OTLP_OPT_DISCARD: o->config.discard = true; break;
	case OTLP_OPT_PAIR:
		if (!pair_rules_add(&o->otlp.pairs, arg))
			return usage_error(cmd, "bad --pair '%s' (BEGIN=END, two different "
			                   "event names)", arg);
		break;
	case OTLP_OPT_NO_PAIR: o->otlp.pairs.suffixes = false; break;
	default: return 0;
	}
	return -1;
}

static void env_defaults(struct otlp_cli *o)
{
	const char *v = getenv("OTEL_EXPORTER_OTLP_TIMEOUT");
	char *end;
	if (v && *v) {
		double ms = strtod(v, &end);
		if (!*end && ms > 0 && ms <= 3600e3)
			o->config.timeout = ms / 1000;
	}
	v = getenv("OTEL_EXPORTER_OTLP_COMPRESSION");
	if (v && !strcmp(v, "none"))
		o->config.gzip = false;
	v = getenv("OTEL_SERVICE_NAME");
	if (v && *v)
		o->otlp.service_name = v;
}

void otlp_cli_init(struct otlp_cli *o)
{
	memset(o, 0, sizeof *o);
	o->config = (struct otlp_config){.gzip = true, .timeout = 10, .connect_timeout = 5,
	                                 .attempts = 5, .backoff = 1, .backoff_max = 30,
	                                 .label = "export"};
	o->otlp.pairs.suffixes = true;
	o->otlp.batch_spans = OTLP_BATCH_SPANS_DEFAULT;
	o->otlp.batch_bytes = OTLP_BATCH_BYTES_DEFAULT;
	env_defaults(o);
}

bool otlp_cli_finish(struct otlp_cli *o, const char *cmd)
{
	if (!env_headers(&o->config)) {
		usage_error(cmd, "bad OTEL_EXPORTER_OTLP_HEADERS (k=v,k2=v2)");
		return false;
	}
	if (!set_urls(o)) {
		usage_error(cmd, "no receiver: give --otlp URL (or set OTEL_EXPORTER_OTLP_ENDPOINT), "
		            "or --discard");
		return false;
	}
	return true;
}

void otlp_cli_free(struct otlp_cli *o)
{
	for (size_t i = 0; i < o->config.nheaders; i++)
		free(o->config.headers[i]);
	o->config.nheaders = 0;
	for (int i = 0; i < OTLP_SIGNALS; i++) {
		free(o->urls[i]);
		o->urls[i] = NULL;
	}
	window_free(&o->otlp.window);
	pair_rules_free(&o->otlp.pairs);
}

static int parse_export_options(int argc, char **argv, struct otlp_cli *o)
{
	static const struct option longopts[] = {
		OTLP_LONGOPTS,
		{"verbose", no_argument, 0, 'v'},
		{"help", no_argument, 0, 'h'},
		SITE_LONGOPTS,
		WINDOW_LONGOPTS,
		{0, 0, 0, 0}};
	int c, rc;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hv", longopts, NULL)) != -1) {
		if (c == 'h') {
			export_help(stdout);
			return 0;
		}
		if (c == 'v') {
			o->config.verbose = true;
			continue;
		}
		if (c == ':')
			return usage_error("export", "option '%s' needs a value", argv[optind - 1]);
		if ((rc = otlp_cli_option(o, c, optarg, "export", argv[optind - 1])) > 0)
			return rc;
		if (rc < 0)
			continue;
		int w = window_option(c, optarg, &o->otlp.window, "export");
		if (w < 0)
			return EXIT_USAGE;
		if (w > 0)
			continue;
		if (!site_option(c, optarg, &o->otlp.sites))
			return usage_error("export", "unknown option '%s'", argv[optind - 1]);
	}
	if (optind == argc)
		return usage_error("export", "no LOG given");
	return otlp_cli_finish(o, "export") ? -1 : EXIT_USAGE;
}

static int export_one(struct otlp_cli *o, struct otlp_exporter *x, const char *path)
{
	struct trace_log *log = trace_log_open(path);
	struct site_table sites;
	if (!log)
		return EXIT_FAIL;
	if (!window_attach(&o->otlp.window, log) || !sites_init(&sites, log, &o->otlp.sites)) {
		trace_log_close(log);
		return EXIT_FAIL;
	}
	int rc = otlp_export_log(x, log, &sites);
	sites_notes(&sites, "export");
	sites_free(&sites);
	if (!log->seekable && window_names_unknown(&o->otlp.window, log))
		rc = EXIT_FAIL;
	rc = window_finish(&o->otlp.window, log, finish_log(log, rc));
	trace_log_close(log);
	return rc;
}

int cmd_export(int argc, char **argv)
{
	struct otlp_cli o;
	otlp_cli_init(&o);
	int rc = parse_export_options(argc, argv, &o);
	int first_log = optind;
	struct otlp_sender *s = NULL;
	struct otlp_exporter *x = NULL;
	if (rc < 0 && !(s = otlp_sender_new(&o.config)))
		rc = EXIT_FAIL;
	if (rc < 0) {
		x = otlp_exporter_new(&o.otlp, s);
		rc = 0;
		for (int i = first_log; i < argc && !stop_requested; i++) {
			int r = export_one(&o, x, argv[i]);
			if (r > rc)
				rc = r;
		}
		if (!otlp_print_summary("export", s, x, o.config.discard) && rc == 0)
			rc = EXIT_FAIL;
	}
	otlp_exporter_free(x);
	otlp_sender_free(s);
	otlp_cli_free(&o);
	return rc;
}
