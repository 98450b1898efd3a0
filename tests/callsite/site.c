/* SPDX-License-Identifier: MIT */
/*
 * site: posix_prog_address (XSH 2.11.1, posix_trace_event_info Structure: "the
 * address in the program from which the trace event was generated") is the
 * address of each call of posix_trace_event(), inside the calling function and
 * distinct per call site, whether the call is the header's macro,
 * (posix_trace_event)(...), a call through the function's address or the
 * macro of a binary built against 0.2 or 0.3 (posixtrace__event); and the
 * macro evaluates each argument exactly once (XSH 2.1.1, "Use of Functions":
 * a macro must evaluate each argument once) with no stream, with a stream
 * created but not started and with one running.
 *
 * The Makefile builds this file as C and as C++ at -O0, -O1 and -O2 with every
 * compiler present (tests/helpers/site-*); t_callsite runs each build.  Exits
 * 0 when everything holds, else prints what does not and exits 1.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <trace.h>

#define NOINLINE __attribute__((noinline))

typedef void (*event_fn)(trace_event_id_t, const void *, size_t);

enum { SITE_ONE = 1, SITE_TWO_A, SITE_TWO_B, SITE_PAREN, SITE_PTR, SITE_OLD, NSITES = SITE_OLD };

static trace_event_id_t ev;
static int payload;
static int n_id, n_data, n_len, failures;
static event_fn volatile fn_ptr = posix_trace_event;

static trace_event_id_t next_id(void) { n_id++; return ev; }
static const void *next_data(void) { n_data++; return &payload; }
static size_t next_len(void) { n_len++; return sizeof payload; }

static void fail(const char *what, long got, long want)
{
	fprintf(stderr, "site: %s: %ld, want %ld\n", what, got, want);
	failures++;
}

/* Extern, so that -rdynamic lists them with their sizes for dladdr1.  The
 * macro ends site_one: a tail call there would record main's address. */
NOINLINE void site_one(void)
{
	payload = SITE_ONE;
	posix_trace_event(next_id(), next_data(), next_len());
}

NOINLINE void site_two(void)
{
	payload = SITE_TWO_A;
	posix_trace_event(next_id(), next_data(), next_len());
	payload = SITE_TWO_B;
	posix_trace_event(next_id(), next_data(), next_len());
}

NOINLINE void site_paren(void)
{
	payload = SITE_PAREN;
	(posix_trace_event)(next_id(), next_data(), next_len());
	payload = 0; /* not a tail call: this function is the caller */
}

NOINLINE void site_ptr(void)
{
	payload = SITE_PTR;
	fn_ptr(next_id(), next_data(), next_len());
	payload = 0;
}

/* What the macro of 0.2 and 0.3 compiled to: the armed word tested, then
 * posixtrace__event(), which loads the word again. */
NOINLINE void site_old(void)
{
	payload = SITE_OLD;
	trace_event_id_t id = next_id();
	const void *data = next_data();
	size_t len = next_len();
	if (__atomic_load_n(posixtrace__armed, __ATOMIC_RELAXED) != 0)
		posixtrace__event(id, data, len);
	payload = 0;
}

static void post_all(void)
{
	site_one();
	site_two();
	site_paren();
	site_ptr();
	site_old();
}

/* Each argument of the NSITES calls evaluated once per round. */
static void check_counts(const char *state, int rounds)
{
	char what[96];
	snprintf(what, sizeof what, "%s: id, data, len evaluated", state);
	if (n_id != NSITES * rounds || n_data != n_id || n_len != n_id)
		fail(what, (long)n_id * 10000 + n_data * 100 + n_len,
		     (long)NSITES * rounds * 10101);
	n_id = n_data = n_len = 0;
}

static uintptr_t fn_addr(int site)
{
	switch (site) {
	case SITE_ONE: return (uintptr_t)&site_one;
	case SITE_TWO_A: case SITE_TWO_B: return (uintptr_t)&site_two;
	case SITE_PAREN: return (uintptr_t)&site_paren;
	case SITE_OLD: return (uintptr_t)&site_old;
	default: return (uintptr_t)&site_ptr;
	}
}

/* pc lies after the start of the function that posted and before its end. */
static void check_inside(int site, uintptr_t pc)
{
	Dl_info info;
	const ElfW(Sym) *sym = NULL;
	uintptr_t start = fn_addr(site);
	if (!dladdr1((void *)pc, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym ||
	    (uintptr_t)info.dli_saddr != start || pc <= start || pc >= start + sym->st_size) {
		fprintf(stderr, "site: event of site %d at %#lx (%s), not inside [%#lx, +%lu)\n", site,
		        (unsigned long)pc, info.dli_sname ? info.dli_sname : "?", (unsigned long)start,
		        sym ? (unsigned long)sym->st_size : 0ul);
		failures++;
	}
}

static void read_back(trace_id_t trid, int rounds)
{
	uintptr_t seen[NSITES + 1] = {0};
	int n = 0, unavailable = 0;
	struct posix_trace_event_info info;
	int data;
	size_t len;
	while (posix_trace_trygetnext_event(trid, &info, &data, sizeof data, &len, &unavailable) == 0 &&
	       !unavailable) {
		if (info.posix_event_id != ev)
			continue;
		n++;
		if (len != sizeof data || data < 1 || data > NSITES) {
			fail("data of an event", data, 0);
			continue;
		}
		uintptr_t pc = (uintptr_t)info.posix_prog_address;
		check_inside(data, pc);
		if (seen[data] && seen[data] != pc)
			fail("one site, two addresses", data, 0);
		seen[data] = pc;
	}
	if (n != NSITES * rounds)
		fail("events read back", n, NSITES * rounds);
	for (int i = 1; i <= NSITES; i++)
		for (int j = 1; j < i; j++)
			if (seen[i] && seen[i] == seen[j])
				fail("two sites, one address", i, j);
}

int main(void)
{
	enum { ROUNDS = 3 };
	trace_id_t trid;
	if (posix_trace_eventid_open("site", &ev) != 0) {
		fprintf(stderr, "site: posix_trace_eventid_open failed\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++)
		post_all();
	check_counts("no stream", ROUNDS);
	if (posix_trace_create(0, NULL, &trid) != 0) {
		fprintf(stderr, "site: posix_trace_create failed\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++)
		post_all();
	check_counts("created, not started", ROUNDS);
	if (posix_trace_start(trid) != 0) {
		fprintf(stderr, "site: posix_trace_start failed\n");
		return 1;
	}
	for (int r = 0; r < ROUNDS; r++)
		post_all();
	check_counts("running", ROUNDS);
	read_back(trid, ROUNDS);
	posix_trace_shutdown(trid);
	return failures ? 1 : 0;
}
