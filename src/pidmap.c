/* SPDX-License-Identifier: MIT */
/*
 * Process and thread ids across pid namespaces (pidmap.h): a cache of
 * translations filled from /proc, looked through at most once every
 * PT_PIDMAP_RESCAN_MS.  A namespace's processes are found by the inode of
 * /proc/PID/ns/pid, their local ids by the last field of NSpid.  What a
 * writer claims (its namespace, its ids) is untrusted like everything in
 * stream memory: it can only make its own events name another process of
 * that namespace, as it could forge them anyway.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include "internal.h"
#include "memcheck.h"
#include "pidmap.h"
#include "records.h"

#define MIN_SLOTS 64u
#define MAX_SLOTS (1u << 18) /* 8 MiB; a full table stops learning: ids stay local */
#define PIDMAP_BURST 4u

pid_t pt_nspid_last(const char *status_path, pid_t fallback)
{
	char buf[4096];
	if (pt_read_text(status_path, buf, sizeof buf) <= 0)
		return fallback;
	char *p = strstr(buf, "\nNSpid:");
	if (!p)
		return fallback;
	p += 7;
	pid_t last = fallback;
	for (;;) {
		char *end;
		long v = strtol(p, &end, 10);
		if (end == p || v <= 0)
			break;
		last = (pid_t)v;
		p = end;
	}
	return last;
}

void pt_pidmap_init(struct pt_pidmap *m, uint64_t own_ns, int proc_is_ours)
{
	memset(m, 0, sizeof *m);
	m->own_ns = own_ns;
	m->proc_is_ours = proc_is_ours;
}

void pt_pidmap_free(struct pt_pidmap *m)
{
	if (m->scan)
		closedir(m->scan);
	free(m->slot);
	pt_pidmap_init(m, m->own_ns, m->proc_is_ours);
}

static uint32_t hash(uint64_t ns, int32_t lpid, int32_t ltid)
{
	uint64_t h = ns * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uint32_t)lpid * 0xc2b2ae3d27d4eb4full ^
	             (uint64_t)(uint32_t)ltid * 0x165667b19e3779f9ull;
	return (uint32_t)(h ^ h >> 29);
}

static struct pt_idpair *find(const struct pt_pidmap *m, uint64_t ns, int32_t lpid, int32_t ltid)
{
	if (!m->nslots)
		return NULL;
	for (uint32_t i = hash(ns, lpid, ltid) & (m->nslots - 1);; i = (i + 1) & (m->nslots - 1)) {
		struct pt_idpair *p = &m->slot[i];
		if (!p->ns)
			return NULL;
		if (p->ns == ns && p->local_pid == lpid && p->local_tid == ltid)
			return p;
	}
}

static int grow(struct pt_pidmap *m)
{
	uint32_t n = m->nslots ? m->nslots * 2 : MIN_SLOTS;
	if (n > MAX_SLOTS)
		return -1;
	struct pt_idpair *s = calloc(n, sizeof *s), *old = m->slot;
	if (!s)
		return -1;
	uint32_t oldn = m->nslots;
	m->slot = s;
	m->nslots = n;
	for (uint32_t i = 0; i < oldn; i++) {
		if (!old[i].ns)
			continue;
		uint32_t j = hash(old[i].ns, old[i].local_pid, old[i].local_tid) & (n - 1);
		while (s[j].ns)
			j = (j + 1) & (n - 1);
		s[j] = old[i];
	}
	free(old);
	return 0;
}

/* Adds or updates a translation; the slot, or NULL when the table is full. */
static struct pt_idpair *put(struct pt_pidmap *m, const struct pt_idpair *e)
{
	struct pt_idpair *p = find(m, e->ns, e->local_pid, e->local_tid);
	if (p) {
		if (!p->pid)
			*p = *e;
		return p;
	}
	if ((m->used + 1) * 4 > m->nslots * 3 && grow(m) != 0)
		return NULL;
	uint32_t i = hash(e->ns, e->local_pid, e->local_tid) & (m->nslots - 1);
	while (m->slot[i].ns)
		i = (i + 1) & (m->nslots - 1);
	m->slot[i] = *e;
	m->used++;
	return &m->slot[i];
}

static uint64_t ns_of(const char *dir)
{
	char path[400];
	struct stat st;
	snprintf(path, sizeof path, "%s/ns/pid", dir);
	return stat(path, &st) == 0 ? (uint64_t)st.st_ino : 0;
}

static int is_number(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* Threads of process pid (local pid lpid of namespace ns), at most
 * PT_PIDMAP_STEP_ENTRIES of them. */
static void learn_threads(struct pt_pidmap *m, uint64_t ns, pid_t pid, int32_t lpid)
{
	char dir[320], path[640];
	snprintf(dir, sizeof dir, "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	uint32_t read = 0;
	for (struct dirent *e; d && read < PT_PIDMAP_STEP_ENTRIES && (e = readdir(d)) != NULL;) {
		if (!is_number(e->d_name))
			continue;
		read++;
		snprintf(path, sizeof path, "%s/%s/status", dir, e->d_name);
		pid_t tid = (pid_t)atol(e->d_name), ltid = pt_nspid_last(path, 0);
		struct pt_idpair t = {ns, lpid, ltid, pid, tid, 0, 0};
		if (ltid > 0)
			put(m, &t);
	}
	m->entries_read += read;
	if (d)
		closedir(d);
}

/* One entry of /proc: a process of another namespace than the reader's,
 * with its main thread, learnt. */
static void learn_process(struct pt_pidmap *m, const char *name)
{
	char dir[320], path[640];
	snprintf(dir, sizeof dir, "/proc/%s", name);
	uint64_t ns = ns_of(dir);
	if (!ns || ns == m->own_ns)
		return;
	snprintf(path, sizeof path, "%s/status", dir);
	pid_t pid = (pid_t)atol(name), lpid = pt_nspid_last(path, 0);
	struct pt_idpair p = {ns, lpid, lpid, pid, pid, 0, 0};
	if (lpid > 0)
		put(m, &p);
}

static uint64_t mono_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000u + (uint64_t)t.tv_nsec / 1000000u;
}

/* A scan token: a bucket of PT_PIDMAP_SCAN_BURST that gains one every
 * PT_PIDMAP_SCAN_MS, so that a few processes appearing together are each
 * found at once and misses a writer forges cost a bounded number of scans. */
static int scan_token(struct pt_pidmap *m, uint64_t now)
{
	uint64_t gained = (now - m->scan_refilled_ms) / PT_PIDMAP_SCAN_MS;
	if (!m->scan_refilled_ms || gained >= PT_PIDMAP_SCAN_BURST - m->scan_tokens)
		m->scan_tokens = PT_PIDMAP_SCAN_BURST;
	else
		m->scan_tokens += (uint32_t)gained;
	if (gained || !m->scan_refilled_ms)
		m->scan_refilled_ms = now;
	if (!m->scan_tokens)
		return 0;
	m->scan_tokens--;
	return 1;
}

/* A scan begins when a miss waits for one and a token allows. */
static int scan_begin(struct pt_pidmap *m, uint64_t now)
{
	if (!m->rescan || !scan_token(m, now))
		return 0;
	m->scan = opendir("/proc");
	if (!m->scan)
		return 0;
	m->rescan = 0;
	m->scan_began_ms = now;
	m->scans_begun++;
	return 1;
}

/* Reads up to max entries of the scan under way; closes it at its end. */
static void scan_read(struct pt_pidmap *m, uint32_t max)
{
	struct dirent *e = NULL;
	for (uint32_t read = 0; read < max && (e = readdir(m->scan)) != NULL;) {
		if (!is_number(e->d_name))
			continue;
		read++;
		m->entries_read++;
		learn_process(m, e->d_name);
	}
	if (e)
		return;
	closedir(m->scan);
	m->scan = NULL;
	m->scans_done = m->scans_begun;
}

void pt_pidmap_step(struct pt_pidmap *m)
{
	if (!m->proc_is_ours)
		return;
	uint64_t now = mono_ms();
	if (!m->scan) {
		if (!scan_begin(m, now))
			return;
	} else if (now - m->step_ms < PT_PIDMAP_STEP_MS) {
		return;
	}
	m->step_ms = now;
	scan_read(m, PT_PIDMAP_STEP_ENTRIES);
}

/* A miss: a scan it may begin is read at once, up to PT_PIDMAP_MISS_ENTRIES
 * (the writer it waits for is then known before its events are written);
 * a scan under way takes its next step when one is due. */
static void scan_for_miss(struct pt_pidmap *m)
{
	if (!m->proc_is_ours)
		return;
	if (m->scan) {
		pt_pidmap_step(m);
		return;
	}
	uint64_t now = mono_ms();
	if (!scan_begin(m, now))
		return;
	m->step_ms = now;
	scan_read(m, PT_PIDMAP_MISS_ENTRIES);
}

/* A look at a known process's threads may be taken: a token of a bucket
 * that gains one every PT_PIDMAP_RESCAN_MS, up to PIDMAP_BURST, so that
 * ids a writer forges cost a bounded number of looks. */
static int may_look(struct pt_pidmap *m)
{
	if (!m->proc_is_ours)
		return 0;
	uint64_t now = mono_ms(), gained = (now - m->refilled_ms) / PT_PIDMAP_RESCAN_MS;
	if (!m->refilled_ms || gained >= PIDMAP_BURST - m->tokens)
		m->tokens = PIDMAP_BURST;
	else
		m->tokens += (uint32_t)gained;
	if (gained || !m->refilled_ms)
		m->refilled_ms = now;
	if (!m->tokens)
		return 0;
	m->tokens--;
	return 1;
}

/* A thread (ns, lpid, ltid) of a known process not known: a look at that
 * process's threads when a token allows, else it waits for one. */
static void look_at_threads(struct pt_pidmap *m, const struct pt_idpair *proc, int32_t ltid)
{
	struct pt_idpair *p = find(m, proc->ns, proc->local_pid, ltid);
	if (p && p->pid)
		return;
	if (!may_look(m)) {
		struct pt_idpair wait = {proc->ns, proc->local_pid, ltid, 0, 0, 0,
		                         (int32_t)(m->scans_begun + 1)};
		if (!p)
			put(m, &wait);
		return;
	}
	learn_threads(m, proc->ns, proc->pid, proc->local_pid);
	p = find(m, proc->ns, proc->local_pid, ltid);
	struct pt_idpair none = {proc->ns, proc->local_pid, ltid, 0, 0, 0, 0};
	if (!p)
		put(m, &none);
	else if (!p->pid)
		*p = none;
}

/* (ns, lpid, ltid) not known: its process waits for the scan (an entry
 * without ids that names the scan: its `reserved`), which takes a step if
 * one is due; then, its process known, its thread is looked for.  Once a
 * scan that began after the miss is done, a writer still not found is
 * gone: it costs no more looks. */
static void look_up(struct pt_pidmap *m, uint64_t ns, int32_t lpid, int32_t ltid)
{
	struct pt_idpair *proc = find(m, ns, lpid, lpid);
	if (!proc || !proc->pid) {
		if (!proc) {
			struct pt_idpair wait = {ns, lpid, lpid, 0, 0, 0, (int32_t)(m->scans_begun + 1)};
			put(m, &wait);
			m->rescan = 1;
		} else if ((uint32_t)proc->reserved > m->scans_done) {
			m->rescan = 1;
		}
		scan_for_miss(m);
		proc = find(m, ns, lpid, lpid);
	}
	if (proc && proc->pid && ltid != lpid)
		look_at_threads(m, proc, ltid);
}

/* Whether an entry without ids still waits for a look: for a scan not
 * done yet, or for its process's threads, now that the process is known. */
static int waiting(const struct pt_pidmap *m, const struct pt_idpair *p)
{
	if (p->pid || !p->reserved)
		return 0;
	if (p->local_tid == p->local_pid)
		return (uint32_t)p->reserved > m->scans_done;
	const struct pt_idpair *proc = find(m, p->ns, p->local_pid, p->local_pid);
	if (!proc || proc->pid)
		return 1;
	return proc->reserved && (uint32_t)proc->reserved > m->scans_done;
}

int pt_pidmap_translate(struct pt_pidmap *m, uint64_t ns, struct pt_owner *who,
                        struct pt_idpair *pair)
{
	if (!ns || ns == m->own_ns || who->pid <= 0)
		return 0;
	int32_t ltid = who->tid > 0 ? who->tid : who->pid;
	struct pt_idpair *p = find(m, ns, who->pid, ltid);
	if (!p || waiting(m, p)) {
		look_up(m, ns, who->pid, ltid);
		p = find(m, ns, who->pid, ltid);
	}
	if ((!p || !p->pid) && ltid != who->pid) {
		/* A thread that ended before it was looked up: its process
		 * still names it, with the thread id of its namespace. */
		struct pt_idpair *proc = find(m, ns, who->pid, who->pid);
		struct pt_idpair e = {ns, who->pid, ltid, proc ? proc->pid : 0, ltid, 0, 0};
		if (proc && proc->pid)
			p = put(m, &e);
	}
	if (!p || !p->pid)
		return -1;
	int first = 0;
	if (pair) {
		first = !p->used;
		p->used = 1;
		*pair = *p;
	}
	who->pid = p->pid;
	if (who->tid > 0)
		who->tid = p->tid;
	return first ? 2 : 1;
}

void pt_pidmap_unuse(struct pt_pidmap *m)
{
	for (uint32_t i = 0; i < m->nslots; i++)
		m->slot[i].used = 0;
}

void pt_pidmap_rewrite(struct pt_pidmap *m, uint64_t ns, unsigned char *buf, uint32_t len,
                       uint32_t max_data, void (*fn)(const struct pt_idpair *, void *), void *arg)
{
	struct pt_rec r;
	for (uint32_t off = 0; len - off >= PT_REC_HDR_MIN; off += r.size) {
		uint64_t w0;
		memcpy(&w0, buf + off, sizeof w0);
		if (pt_rec_decode(w0, len - off, max_data, &r) == PT_RK_BAD)
			return;
		if (r.kind != PT_RK_OWNER)
			continue;
		struct pt_owner_rec o;
		struct pt_idpair pair;
		memcpy(&o, buf + off + PT_REC_HDR, sizeof o);
		if (pt_pidmap_translate(m, ns, &o.owner, &pair) == 2 && fn)
			fn(&pair, arg);
		memcpy(buf + off + PT_REC_HDR, &o, sizeof o);
	}
}
