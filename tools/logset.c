/* SPDX-License-Identifier: MIT */
/*
 * Several logs read as one (dump, stats, convert): each log (a file or a
 * rotated directory) is read on its own, through the public API, one event
 * ahead, and the next event given is the earliest of those ahead, a k-way
 * merge.  Which time line:
 *
 * - Logs of one boot of one machine (equal boot ids in their host records)
 *   share CLOCK_MONOTONIC.  An event's time is CLOCK_MONOTONIC on the
 *   realtime scale of its stream's creation (posixtrace_log_host): the
 *   times of each log after the first of its boot are moved by the
 *   difference of the two scales, so that they order exactly.
 * - Logs of different boots (hosts) order by their realtime times, each
 *   moved by its host's --clock-offset.  How far that order can be wrong is
 *   said (logset_describe): the sum of the two largest maximum errors of
 *   their clocks (adjtimex's maxerror when each log began), or no bound
 *   when a clock was not synchronised or a log names no host.
 *
 * Each event keeps the ids and names of its own log (trace_event's source)
 * and says its host; the set's trid is that of the log of the event given
 * last, so that calls about that event (posixtrace_event_ext, images) go to
 * its log.  An event without a time (a damage marker) keeps its place
 * after the event before it in its own log.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tool.h"

struct log_member {
	struct trace_log *log;
	struct trace_event head; /* the next event of this log, when have */
	bool have, done;
	int64_t shift_ns;  /* added to its times: one boot's scale, the host's offset */
	uint64_t last_key; /* of the last event taken from it */
	uint32_t host;
	uint32_t domain;   /* the first member of its boot (clock domain) */
};

struct log_set {
	struct log_member *m;
	size_t n;
	size_t last; /* the member given last; SIZE_MAX: none */
	int64_t only_host; /* -1: every log; else only those of this host */
	bool primed, skim;
};

/* ---- --clock-offset ------------------------------------------------------ */

static bool parse_duration(const char *s, int64_t *ns)
{
	static const struct { const char *unit; double scale; } units[] = {
		{"ns", 1}, {"us", 1e3}, {"ms", 1e6}, {"s", 1e9}, {"", 1e9}};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || errno || (*s != '+' && *s != '-' && (*s < '0' || *s > '9')))
		return false;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcmp(end, units[i].unit))
			continue;
		double x = v * units[i].scale;
		if (!(x > -9.2e18 && x < 9.2e18))
			return false;
		*ns = (int64_t)(x < 0 ? x - 0.5 : x + 0.5);
		return true;
	}
	return false;
}

bool clock_offset_parse(struct clock_offsets *o, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	int64_t ns;
	if (!eq || eq == arg || (size_t)(eq - arg) >= HOST_LABEL_MAX || !parse_duration(eq + 1, &ns))
		return false;
	char *host = xmalloc((size_t)(eq - arg) + 1);
	memcpy(host, arg, (size_t)(eq - arg));
	host[eq - arg] = '\0';
	o->v = xrealloc(o->v, (o->n + 1) * sizeof *o->v);
	o->v[o->n++] = (struct clock_offset){host, ns};
	return true;
}

void clock_offsets_free(struct clock_offsets *o)
{
	for (size_t i = 0; i < o->n; i++)
		free((char *)o->v[i].host);
	free(o->v);
	memset(o, 0, sizeof *o);
}

/* ---- hosts and clock domains -------------------------------------------- */

static bool same_machine(const struct posixtrace_host *a, const struct posixtrace_host *b)
{
	if (a->posixtrace_machine_known != b->posixtrace_machine_known)
		return false;
	return !a->posixtrace_machine_known ||
	       !memcmp(a->posixtrace_machine_id, b->posixtrace_machine_id, 16);
}

/* One host: the same name and machine id. */
static bool same_host(const struct log_host *a, const struct log_host *b)
{
	return a->known && b->known &&
	       !strcmp(a->rec.posixtrace_host_name, b->rec.posixtrace_host_name) &&
	       same_machine(&a->rec, &b->rec);
}

/* One boot of one machine: one CLOCK_MONOTONIC (UTS namespaces of one
 * kernel have different names and one boot). */
static bool same_boot(const struct log_host *a, const struct log_host *b)
{
	return a->known && b->known && a->rec.posixtrace_boot_known &&
	       b->rec.posixtrace_boot_known &&
	       !memcmp(a->rec.posixtrace_boot_id, b->rec.posixtrace_boot_id, 16) &&
	       same_machine(&a->rec, &b->rec) && a->rec.posixtrace_create_monotonic_ns &&
	       b->rec.posixtrace_create_monotonic_ns;
}

static uint32_t add_host(struct trace_log *set, const struct log_host *h, uint32_t *unknown)
{
	for (uint32_t i = 0; i < set->nhosts; i++)
		if (same_host(&set->hosts[i], h))
			return i;
	set->hosts = xrealloc(set->hosts, (set->nhosts + 1) * sizeof *set->hosts);
	struct log_host *n = &set->hosts[set->nhosts];
	*n = *h;
	if (!h->known) {
		snprintf(n->label, sizeof n->label, "unknown-%u", ++*unknown);
	} else {
		unsigned same = 1;
		for (uint32_t i = 0; i < set->nhosts; i++)
			same += !strcmp(set->hosts[i].rec.posixtrace_host_name,
			                h->rec.posixtrace_host_name);
		if (same > 1) {
			char esc[ESCAPED_SIZE(POSIXTRACE_HOST_NAME_MAX)];
			escape_text(h->rec.posixtrace_host_name, esc, sizeof esc);
			snprintf(n->label, sizeof n->label, "%s#%u", esc, same);
		}
	}
	return set->nhosts++;
}

/* The realtime scale's distance from CLOCK_MONOTONIC: creation time less
 * create_monotonic. */
static int64_t scale_of(struct trace_log *log)
{
	trace_attr_t a;
	struct timespec created = {0, 0};
	if (posix_trace_get_attr(log->trid, &a) == 0) {
		posix_trace_attr_getcreatetime(&a, &created);
		posix_trace_attr_destroy(&a);
	}
	return (int64_t)(ts_ns(&created) - log->hosts[0].rec.posixtrace_create_monotonic_ns);
}

static bool apply_offsets(struct trace_log *set, const struct clock_offsets *o)
{
	for (size_t k = 0; o && k < o->n; k++) {
		bool found = false;
		for (uint32_t i = 0; i < set->nhosts; i++)
			if (!strcmp(set->hosts[i].label, o->v[k].host)) {
				set->hosts[i].offset_ns += o->v[k].ns;
				found = true;
			}
		if (!found) {
			error_msg("--clock-offset: no log names host '%s'", o->v[k].host);
			return false;
		}
	}
	return true;
}

static void place_members(struct trace_log *set, const struct clock_offsets *o, bool *ok)
{
	struct log_set *s = set->set;
	uint32_t unknown = 0;
	for (size_t i = 0; i < s->n; i++) {
		struct log_member *m = &s->m[i];
		m->host = add_host(set, &m->log->hosts[0], &unknown);
		m->domain = (uint32_t)i;
		for (size_t j = 0; j < i; j++)
			if (same_boot(&s->m[j].log->hosts[0], &m->log->hosts[0])) {
				m->domain = s->m[j].domain;
				break;
			}
		if (m->domain != i)
			m->shift_ns = scale_of(s->m[m->domain].log) - scale_of(m->log);
	}
	*ok = apply_offsets(set, o);
	for (size_t i = 0; i < s->n; i++)
		s->m[i].shift_ns += set->hosts[s->m[i].host].offset_ns;
}

/* ---- opening and closing ------------------------------------------------- */

struct trace_log *trace_logs_open(char *const *paths, size_t n, const struct clock_offsets *o)
{
	if (n == 1 && (!o || !o->n))
		return trace_log_open(paths[0]);
	if (n > LOGSET_MAX) {
		error_msg("%zu logs: at most %d are read as one", n, LOGSET_MAX);
		return NULL;
	}
	struct trace_log *set = xmalloc(sizeof *set);
	memset(set, 0, sizeof *set);
	set->set = xmalloc(sizeof *set->set);
	memset(set->set, 0, sizeof *set->set);
	set->set->m = xmalloc(n * sizeof *set->set->m);
	memset(set->set->m, 0, n * sizeof *set->set->m);
	set->set->last = SIZE_MAX;
	set->set->only_host = -1;
	set->path = paths[0];
	set->label = n == 1 ? paths[0] : "the logs";
	set->fd = set->dirfd = -1;
	set->seekable = true;
	for (size_t i = 0; i < n; i++) {
		struct trace_log *log = trace_log_open(paths[i]);
		if (!log) {
			trace_log_close(set);
			return NULL;
		}
		set->set->m[set->set->n++].log = log;
		set->seekable &= log->seekable;
	}
	bool ok;
	place_members(set, o, &ok);
	if (!ok) {
		trace_log_close(set);
		return NULL;
	}
	set->trid = set->set->m[0].log->trid; /* then the log of the event read last */
	return set;
}

void logset_close(struct trace_log *log)
{
	for (size_t i = 0; i < log->set->n; i++)
		trace_log_close(log->set->m[i].log);
	free(log->set->m);
	free(log->set);
	free(log->hosts);
	free(log);
}

struct trace_log *trace_log_source(struct trace_log *log, uint32_t source)
{
	if (!log->set)
		return log;
	return log->set->m[source < log->set->n ? source : 0].log;
}

size_t trace_log_sources(const struct trace_log *log)
{
	return log->set ? log->set->n : 1;
}

const char *event_host_label(const struct trace_log *log, const struct trace_event *ev)
{
	if (log->nhosts < 2 || ev->host >= log->nhosts)
		return NULL;
	return log->hosts[ev->host].label;
}

/* ---- the merge ----------------------------------------------------------- */

static uint64_t shifted(uint64_t ns, int64_t shift)
{
	if (shift >= 0)
		return ns > UINT64_MAX - (uint64_t)shift ? UINT64_MAX : ns + (uint64_t)shift;
	uint64_t back = (uint64_t)0 - (uint64_t)shift;
	return ns > back ? ns - back : 1; /* 0 would read as "no time" */
}

/* The member's next event, its time moved to the set's line. */
static void advance(struct trace_log *set, struct log_member *m)
{
	struct trace_log *log = m->log;
	log->without_thread_names = set->without_thread_names;
	log->with_cpu = set->with_cpu;
	bool tid = set->filter && set->filter->needs_tid;
	int rc = set->set->skim ? trace_log_skim(log, &m->head) : trace_log_next(log, &m->head);
	m->have = rc > 0;
	m->done = rc <= 0;
	if (!m->have)
		return;
	if (set->set->skim && tid)
		read_event_ext(log->trid, &m->head);
	m->head.source = (uint32_t)(m - set->set->m);
	m->head.host = m->host;
	m->head.shift_ns = 0;
	if (event_has_time(&m->head)) {
		uint64_t was = ts_ns(&m->head.info.posix_timestamp);
		uint64_t ns = shifted(was, m->shift_ns);
		m->head.shift_ns = (int64_t)(ns - was);
		m->head.info.posix_timestamp.tv_sec = (time_t)(ns / 1000000000u);
		m->head.info.posix_timestamp.tv_nsec = (long)(ns % 1000000000u);
		m->last_key = ns;
	}
}

void logset_only_host(struct trace_log *log, int64_t host)
{
	if (log->set)
		log->set->only_host = host;
}

uint32_t logset_host_of(const struct trace_log *log, uint32_t source)
{
	return log->set && source < log->set->n ? log->set->m[source].host : 0;
}

static bool member_in(const struct log_set *s, const struct log_member *m)
{
	return s->only_host < 0 || m->host == (uint64_t)s->only_host;
}

int logset_next(struct trace_log *log, struct trace_event *ev, bool skim)
{
	struct log_set *s = log->set;
	if (!s->primed) {
		s->skim = skim;
		for (size_t i = 0; i < s->n; i++)
			if (member_in(s, &s->m[i]))
				advance(log, &s->m[i]);
		s->primed = true;
	} else if (s->last != SIZE_MAX) {
		advance(log, &s->m[s->last]);
	}
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < s->n; i++) {
		/* the earliest; at equal times the log given first */
		if (s->m[i].have && (best == SIZE_MAX || s->m[i].last_key < s->m[best].last_key))
			best = i;
	}
	s->last = best;
	if (best == SIZE_MAX)
		return 0;
	*ev = s->m[best].head;
	log->trid = s->m[best].log->trid;
	return 1;
}

int logset_rewind(struct trace_log *log)
{
	struct log_set *s = log->set;
	int err = 0;
	for (size_t i = 0; i < s->n; i++) {
		int e = trace_log_rewind(s->m[i].log);
		if (e && !err)
			err = e;
		s->m[i].have = s->m[i].done = false;
		s->m[i].last_key = 0;
	}
	s->primed = false;
	s->last = SIZE_MAX;
	return err;
}

bool logset_lost(struct trace_log *log, uint64_t *lost)
{
	*lost = 0;
	bool any = false;
	for (size_t i = 0; i < log->set->n; i++) {
		uint64_t one;
		if (member_in(log->set, &log->set->m[i]) && trace_log_lost(log->set->m[i].log, &one)) {
			*lost = *lost > UINT64_MAX - one ? UINT64_MAX : *lost + one;
			any = true;
		}
	}
	return any;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

void logset_waits(struct trace_log *log, struct posixtrace_block_stats *waits)
{
	memset(waits, 0, sizeof *waits);
	for (size_t i = 0; i < log->set->n; i++) {
		struct posixtrace_block_stats one;
		if (!member_in(log->set, &log->set->m[i]))
			continue;
		trace_log_waits(log->set->m[i].log, &one);
		waits->posixtrace_waited_events =
		    add_sat(waits->posixtrace_waited_events, one.posixtrace_waited_events);
		waits->posixtrace_waited_ns = add_sat(waits->posixtrace_waited_ns, one.posixtrace_waited_ns);
		waits->posixtrace_waited_lost =
		    add_sat(waits->posixtrace_waited_lost, one.posixtrace_waited_lost);
	}
}

enum log_state logset_state(const struct trace_log *log)
{
	enum log_state worst = LOG_COMPLETE;
	for (size_t i = 0; i < log->set->n; i++) {
		enum log_state s = log_state(log->set->m[i].log);
		if (s > worst)
			worst = s;
	}
	return worst;
}

int logset_finish(const struct trace_log *log, int rc)
{
	for (size_t i = 0; i < log->set->n; i++)
		rc = finish_log(log->set->m[i].log, rc);
	return rc;
}

/* ---- what the reader is told --------------------------------------------- */

/* The clock error of a domain (a boot): the largest maxerror of its logs;
 * false when one of them is not synchronised or not known. */
static bool domain_error(const struct trace_log *log, uint32_t domain, uint64_t *us,
                         bool *unsync)
{
	*us = 0;
	for (size_t i = 0; i < log->set->n; i++) {
		const struct log_member *m = &log->set->m[i];
		const struct log_host *h = &m->log->hosts[0];
		if (m->domain != domain)
			continue;
		if (!h->known || !h->rec.posixtrace_clock_known)
			return false;
		if (h->rec.posixtrace_clock_unsynchronised || h->rec.posixtrace_maxerror_us < 0) {
			*unsync = true;
			return false;
		}
		if ((uint64_t)h->rec.posixtrace_maxerror_us > *us)
			*us = (uint64_t)h->rec.posixtrace_maxerror_us;
	}
	return true;
}

enum order_kind { ORDER_EXACT, ORDER_BOUNDED, ORDER_UNSYNC, ORDER_UNKNOWN };

/* How well the merged events order between boots: *us, the sum of the two
 * largest errors, when bounded. */
static enum order_kind order_of(const struct trace_log *log, uint64_t *us, size_t *domains)
{
	uint64_t first = 0, second = 0;
	bool unsync = false, unknown = false;
	*domains = 0;
	for (size_t i = 0; i < log->set->n; i++) {
		uint64_t e;
		if (log->set->m[i].domain != i)
			continue;
		++*domains;
		if (!domain_error(log, (uint32_t)i, &e, &unsync))
			unknown = true;
		else if (e > first)
			second = first, first = e;
		else if (e > second)
			second = e;
	}
	*us = first + second;
	if (*domains < 2)
		return ORDER_EXACT;
	return unsync ? ORDER_UNSYNC : unknown ? ORDER_UNKNOWN : ORDER_BOUNDED;
}

static const char *order_text(enum order_kind k, uint64_t us, size_t domains, char *buf,
                              size_t size)
{
	switch (k) {
	case ORDER_EXACT:
		return "exact: every log is of one boot of one machine (CLOCK_MONOTONIC)";
	case ORDER_BOUNDED:
		snprintf(buf, size, "between the %zu hosts' clocks uncertain by up to %llu.%06llu s "
		         "(the sum of the two largest maxerror)", domains,
		         (unsigned long long)(us / 1000000), (unsigned long long)(us % 1000000));
		return buf;
	case ORDER_UNSYNC:
		snprintf(buf, size, "between the %zu hosts' clocks unsynchronised: a clock was not "
		         "synchronised (STA_UNSYNC), no bound", domains);
		return buf;
	default:
		snprintf(buf, size, "between the %zu hosts' clocks unknown: a log does not say its "
		         "clock's error", domains);
		return buf;
	}
}

static void host_text(const struct log_host *h, char *buf, size_t size)
{
	const char *esc = h->label;
	if (!h->known) {
		snprintf(buf, size, "%s (the log names no host)", h->label);
		return;
	}
	if (!h->rec.posixtrace_clock_known)
		snprintf(buf, size, "%s, clock error not known", esc);
	else if (h->rec.posixtrace_clock_unsynchronised)
		snprintf(buf, size, "%s, clock unsynchronised", esc);
	else
		snprintf(buf, size, "%s, clock maxerror %lld us", esc,
		         (long long)h->rec.posixtrace_maxerror_us);
}

void logset_describe(struct trace_log *log, FILE *out, const char *prefix)
{
	char buf[512], text[HOST_LABEL_MAX + 64], when[48];
	if (!log->set)
		return;
	for (size_t i = 0; i < log->set->n; i++) {
		const struct log_member *m = &log->set->m[i];
		host_text(&log->hosts[m->host], text, sizeof text);
		fprintf(out, "%slog %s: host %s", prefix, m->log->label, text);
		if (m->domain != i)
			fprintf(out, "; one boot with %s", log->set->m[m->domain].log->label);
		if (log->hosts[m->host].offset_ns) {
			format_signed_time(log->hosts[m->host].offset_ns, when, sizeof when);
			fprintf(out, "; --clock-offset %s s", when);
		}
		fputc('\n', out);
	}
	uint64_t us;
	size_t domains;
	enum order_kind k = order_of(log, &us, &domains);
	fprintf(out, "%sorder: %s\n", prefix, order_text(k, us, domains, buf, sizeof buf));
}

void logset_describe_json(struct trace_log *log, FILE *out)
{
	static const char *const kinds[] = {"exact", "bounded", "unsynchronised", "unknown"};
	if (!log->set)
		return;
	struct outbuf o;
	outbuf_init(&o, out);
	outbuf_puts(&o, "{\"hosts\":[");
	for (size_t i = 0; i < log->set->n; i++) {
		const struct log_member *m = &log->set->m[i];
		const struct log_host *h = &log->hosts[m->host];
		char num[32];
		outbuf_puts(&o, i ? ",{\"log\":" : "{\"log\":");
		outbuf_json_string(&o, (const unsigned char *)m->log->label, strlen(m->log->label));
		outbuf_puts(&o, ",\"host\":");
		outbuf_json_string(&o, (const unsigned char *)h->label, strlen(h->label));
		outbuf_puts(&o, ",\"known\":");
		outbuf_puts(&o, h->known ? "true" : "false");
		if (h->known && h->rec.posixtrace_clock_known) {
			outbuf_puts(&o, ",\"unsynchronised\":");
			outbuf_puts(&o, h->rec.posixtrace_clock_unsynchronised ? "true" : "false");
			snprintf(num, sizeof num, ",\"maxerror_us\":%lld",
			         (long long)h->rec.posixtrace_maxerror_us);
			outbuf_puts(&o, num);
		}
		snprintf(num, sizeof num, ",\"boot_of\":%zu", (size_t)m->domain);
		outbuf_puts(&o, num);
		snprintf(num, sizeof num, ",\"offset_ns\":%lld}", (long long)h->offset_ns);
		outbuf_puts(&o, num);
	}
	uint64_t us;
	size_t domains;
	enum order_kind k = order_of(log, &us, &domains);
	char tail[96];
	snprintf(tail, sizeof tail, "],\"order\":\"%s\",\"uncertainty_us\":%llu}\n", kinds[k],
	         (unsigned long long)(k == ORDER_BOUNDED ? us : 0));
	outbuf_puts(&o, tail);
	outbuf_flush(&o);
	outbuf_free(&o);
}
