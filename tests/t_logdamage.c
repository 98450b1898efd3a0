/*
 * t_logdamage: trace logs that were cut short or damaged, and logs whose
 * controller died without posix_trace_shutdown.
 *
 * Checks posix_trace_open / posix_trace_getnext_event on damaged logs
 * (posix_trace_close.txt, posix_trace_getnext_event.txt) and the automatic
 * shutdown of a stream with log when its process exits, execs or is killed
 * (posix_trace_create.txt: "If the process exits, invokes a member of the
 * exec family of functions, or is terminated, the trace streams ... shall be
 * automatically shut down"), with the behaviour contract ("Trace Log
 * option": damage yields the events of every complete block before it, then
 * one POSIX_TRACE_ERROR with data EBADMSG; the keeper finishes the log of a
 * dead controller).  Block layout from src/log.h (docs/LOG-FORMAT.md).
 */
#include "harness.h"

#include "../src/log.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- helpers ------------------------------------------------------------ */

#define DATA_BUF 2048

struct tag {
	uint32_t thread, seq;
};

struct rec {
	struct posix_trace_event_info info;
	size_t len;
	unsigned char data[16];    /* the first bytes: enough for tags and ints */
};

struct evlist {
	struct rec *ev;
	size_t n, cap;
};

/* Test memory lives until the test process exits; keeping it reachable
 * keeps LeakSanitizer quiet. */
static void *held[4096];
static size_t nheld;

static void *hold(void *p)
{
	ck_assert_uint_lt(nheld, sizeof held / sizeof held[0]);
	held[nheld++] = p;
	return p;
}

static int new_log_file(void)
{
	char path[] = "/tmp/pt_t_logdamage_XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unlink(path), 0);
	return fd;
}

static int create_log(int fd, int stream_policy, size_t stream_size, int log_policy,
                      size_t log_size, trace_id_t *trid)
{
	trace_attr_t attr;
	posix_trace_attr_init(&attr);
	if (stream_policy)
		posix_trace_attr_setstreamfullpolicy(&attr, stream_policy);
	if (stream_size)
		posix_trace_attr_setstreamsize(&attr, stream_size);
	posix_trace_attr_setlogfullpolicy(&attr, log_policy);
	if (log_size)
		posix_trace_attr_setlogsize(&attr, log_size);
	int err = posix_trace_create_withlog(0, &attr, fd, trid);
	posix_trace_attr_destroy(&attr);
	return err;
}

static void record_tagged(trace_event_id_t id, uint32_t seq, size_t len)
{
	unsigned char buf[DATA_BUF];
	struct tag t = {0, seq};
	memcpy(buf, &t, sizeof t);
	for (size_t i = sizeof t; i < len; i++)
		buf[i] = (unsigned char)(seq + i);
	posix_trace_event(id, buf, len);
}

static struct evlist read_all(trace_id_t trid)
{
	struct evlist l = {0};
	unsigned char buf[DATA_BUF];
	for (;;) {
		struct posix_trace_event_info info;
		size_t len = 0;
		int unavailable = -1;
		ck_assert_ok(posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable));
		if (unavailable)
			break;
		ck_assert_uint_lt(l.n, 10000000);
		if (l.n == l.cap) {
			l.cap = l.cap ? l.cap * 2 : 256;
			l.ev = realloc(l.ev, l.cap * sizeof *l.ev);
			ck_assert_ptr_nonnull(l.ev);
		}
		struct rec *r = &l.ev[l.n++];
		r->info = info;
		r->len = len;
		memcpy(r->data, buf, len < sizeof r->data ? len : sizeof r->data);
	}
	return l;	/* the caller frees l.ev or holds it */
}

static struct evlist read_log_fd(int fd)
{
	trace_id_t trid;
	int ro = pt_reopen_ro(fd);
	ck_assert_ok(posix_trace_open(ro, &trid));
	struct evlist l = read_all(trid);
	ck_assert_ok(posix_trace_close(trid));
	close(ro);
	return l;
}

static int is_tagged(const struct rec *r)
{
	return r->info.posix_event_id > POSIX_TRACE_UNNAMED_USEREVENT && r->len >= sizeof(struct tag);
}

static uint32_t seq_of(const struct rec *r)
{
	struct tag t;
	memcpy(&t, r->data, sizeof t);
	return t.seq;
}

static int error_data(const struct rec *r)
{
	int v = -1;
	if (r->len == sizeof v)
		memcpy(&v, r->data, sizeof v);
	return v;
}

/* The tagged events of l are exactly 0, 1, ..., n-1, in order. */
static void assert_all_seqs(const struct evlist *l, uint32_t n)
{
	uint32_t next = 0;
	for (size_t i = 0; i < l->n; i++) {
		if (!is_tagged(&l->ev[i]))
			continue;
		ck_assert_msg(seq_of(&l->ev[i]) == next, "event %u read where %u was expected",
		              seq_of(&l->ev[i]), next);
		next++;
	}
	ck_assert_uint_eq(next, n);
}

/* ---- the reference log and its blocks ------------------------------------ */

#define REF_EVENTS 600u
#define REF_LEN 150u

struct block {
	uint64_t start, end, padded_end; /* end: header + payload */
	uint32_t type, nrecords;
};

struct ref {
	int fd;
	unsigned char *bytes;
	size_t size;
	struct evlist events;    /* read from the intact log */
	struct block blocks[64];
	size_t nblocks;
};

static struct ref ref;

/* A complete log of nevents events of REF_LEN bytes. */
static void ref_build(int log_policy, size_t log_size, uint32_t nevents)
{
	trace_id_t trid;
	trace_event_id_t id;
	struct stat st;
	memset(&ref, 0, sizeof ref);
	ref.fd = new_log_file();
	ck_assert_ok(create_log(ref.fd, 0, 0, log_policy, log_size, &trid));
	ck_assert_ok(posix_trace_eventid_open("damage_ref", &id));
	ck_assert_ok(posix_trace_start(trid));
	for (uint32_t i = 0; i < nevents; i++)
		record_tagged(id, i, REF_LEN);
	ck_assert_ok(posix_trace_shutdown(trid));
	ck_assert_int_eq(fstat(ref.fd, &st), 0);
	ref.size = (size_t)st.st_size;
	ref.bytes = malloc(ref.size);
	ck_assert_ptr_nonnull(ref.bytes);
	ck_assert_int_eq(pread(ref.fd, ref.bytes, ref.size, 0), (ssize_t)ref.size);
	ref.events = read_log_fd(ref.fd);
	hold(ref.events.ev);
	if (log_policy == POSIX_TRACE_APPEND)
		assert_all_seqs(&ref.events, nevents);
}

/* The blocks of a linear log, in file order. */
static void ref_index_linear(void)
{
	uint64_t off = PT_LOG_DATA_OFF;
	size_t records = 0;
	while (off < ref.size) {
		struct pt_log_block b;
		ck_assert_uint_lt(ref.nblocks, 64);
		ck_assert_uint_le(off + sizeof b, ref.size);
		memcpy(&b, ref.bytes + off, sizeof b);
		ck_assert_uint_eq(b.magic, PT_LOG_BLOCK_MAGIC);
		struct block *k = &ref.blocks[ref.nblocks++];
		k->start = off;
		k->end = off + sizeof b + b.payload_len;
		k->padded_end = (k->end + 7) & ~(uint64_t)7;
		k->type = b.type;
		k->nrecords = b.type == PT_BLK_EVENTS ? b.nrecords : 0;
		records += k->nrecords;
		off = k->padded_end;
	}
	ck_assert_uint_ge(ref.nblocks, 3); /* two EVENTS blocks or more, and END */
	ck_assert_uint_eq(ref.blocks[ref.nblocks - 1].type, PT_BLK_END);
	ck_assert_uint_eq(records, ref.events.n);
}

/* A log whose content is the reference log changed by the caller. */
static int write_copy(const unsigned char *bytes, size_t len)
{
	int fd = new_log_file();
	ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
	return fd;
}

/* got must be the first `keep` events of the reference log, then (if
 * damaged) one POSIX_TRACE_ERROR with data EBADMSG, then nothing. */
static void assert_prefix_then_error(const struct evlist *got, size_t keep, int damaged,
                                     const char *what, uint64_t where)
{
	ck_assert_msg(got->n == keep + (damaged ? 1 : 0),
	              "%s at %llu: %zu events read, expected %zu%s", what, (unsigned long long)where,
	              got->n, keep, damaged ? " and an ERROR" : "");
	for (size_t i = 0; i < keep; i++) {
		const struct rec *a = &ref.events.ev[i], *b = &got->ev[i];
		ck_assert_msg(b->info.posix_event_id == a->info.posix_event_id &&
		                  b->info.posix_timestamp.tv_sec == a->info.posix_timestamp.tv_sec &&
		                  b->info.posix_timestamp.tv_nsec == a->info.posix_timestamp.tv_nsec &&
		                  b->len == a->len &&
		                  memcmp(b->data, a->data, a->len < sizeof a->data ? a->len : sizeof a->data) == 0,
		              "%s at %llu: event %zu differs", what, (unsigned long long)where, i);
	}
	if (damaged) {
		const struct rec *e = &got->ev[keep];
		ck_assert_msg(e->info.posix_event_id == POSIX_TRACE_ERROR && error_data(e) == EBADMSG,
		              "%s at %llu: last event id %u data %d, expected ERROR EBADMSG", what,
		              (unsigned long long)where, e->info.posix_event_id, error_data(e));
	}
}

/* ---- truncated logs ---------------------------------------------------------- */

START_TEST(log_cut_every_37_bytes_yields_prefix_then_error)
{
	ref_build(POSIX_TRACE_APPEND, 0, REF_EVENTS);
	ref_index_linear();
	int fd = write_copy(ref.bytes, ref.size);
	size_t cuts = 0;
	/* from the end down, so that each cut is one ftruncate */
	uint64_t last = PT_LOG_DATA_OFF + ((ref.size - PT_LOG_DATA_OFF) / 37) * 37;
	for (uint64_t cut = last;; cut -= 37) {
		ck_assert_int_eq(ftruncate(fd, (off_t)cut), 0);
		size_t keep = 0;
		int boundary = cut == PT_LOG_DATA_OFF;
		for (size_t k = 0; k < ref.nblocks; k++) {
			if (ref.blocks[k].end <= cut)
				keep += ref.blocks[k].nrecords;
			if (ref.blocks[k].end <= cut && cut <= ref.blocks[k].padded_end)
				boundary = 1;
		}
		struct evlist got = read_log_fd(fd);
		assert_prefix_then_error(&got, keep, !boundary, "cut", cut);
		free(got.ev);
		cuts++;
		if (cut < PT_LOG_DATA_OFF + 37)
			break;
	}
	ck_assert_uint_gt(cuts, 1000);
}
END_TEST

START_TEST(log_cut_at_each_block_end_yields_complete_blocks_without_error)
{
	ref_build(POSIX_TRACE_APPEND, 0, REF_EVENTS);
	ref_index_linear();
	int fd = write_copy(ref.bytes, ref.size);
	for (size_t k = ref.nblocks; k-- > 0;) {
		size_t keep = 0;
		for (size_t j = 0; j <= k; j++)
			keep += ref.blocks[j].nrecords;
		ck_assert_int_eq(ftruncate(fd, (off_t)ref.blocks[k].end), 0);
		struct evlist got = read_log_fd(fd);
		assert_prefix_then_error(&got, keep, 0, "block end", ref.blocks[k].end);
		free(got.ev);
	}
}
END_TEST

START_TEST(log_cut_one_byte_short_loses_only_the_last_block)
{
	ref_build(POSIX_TRACE_APPEND, 0, REF_EVENTS);
	ref_index_linear();
	int fd = write_copy(ref.bytes, ref.size - 1); /* inside the END block */
	struct evlist got = read_log_fd(fd);
	hold(got.ev);
	assert_prefix_then_error(&got, ref.events.n, 1, "cut", ref.size - 1);
}
END_TEST

START_TEST(log_cut_inside_header_is_einval)
{
	const size_t cuts[] = {0,
	                       1,
	                       8,
	                       16,
	                       100,
	                       offsetof(struct pt_log_header, crc),
	                       offsetof(struct pt_log_header, crc) + 3};
	ref_build(POSIX_TRACE_APPEND, 0, 10);
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		trace_id_t trid;
		int fd = write_copy(ref.bytes, cuts[i]);
		ck_assert_msg(posix_trace_open(pt_reopen_ro(fd), &trid) == EINVAL, "cut at %zu opened",
		              cuts[i]);
		close(fd);
	}
}
END_TEST

START_TEST(log_cut_after_header_opens_without_events)
{
	ref_build(POSIX_TRACE_APPEND, 0, 10);
	int fd = write_copy(ref.bytes, PT_LOG_DATA_OFF); /* header and names only */
	struct evlist got = read_log_fd(fd);
	hold(got.ev);
	ck_assert_uint_eq(got.n, 0);
}
END_TEST

START_TEST(log_cut_inside_name_table_opens_then_reports_error)
{
	const size_t cuts[] = {PT_LOG_HEADER_SIZE + 1, PT_LOG_HEADER_SIZE + 4096, PT_LOG_DATA_OFF - 1};
	ref_build(POSIX_TRACE_APPEND, 0, 10);
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		int fd = write_copy(ref.bytes, cuts[i]);
		struct evlist got = read_log_fd(fd);
		hold(got.ev);
		assert_prefix_then_error(&got, 0, 1, "cut in name table", cuts[i]);
		close(fd);
	}
}
END_TEST

/* ---- changed bytes ------------------------------------------------------------ */

/* Flips one byte at offset `at` of a copy and checks what is read. */
static void flip_and_check(uint64_t at, size_t keep, const char *what)
{
	unsigned char *copy = malloc(ref.size);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, ref.bytes, ref.size);
	copy[at] ^= 0x40;
	int fd = write_copy(copy, ref.size);
	struct evlist got = read_log_fd(fd);
	assert_prefix_then_error(&got, keep, 1, what, at);
	free(got.ev);
	free(copy);
	close(fd);
}

START_TEST(byte_flipped_in_block_payload_yields_earlier_blocks_then_error)
{
	ref_build(POSIX_TRACE_APPEND, 0, REF_EVENTS);
	ref_index_linear();
	size_t keep = 0;
	for (size_t k = 0; k < ref.nblocks; k++) {
		const struct block *b = &ref.blocks[k];
		flip_and_check((b->start + sizeof(struct pt_log_block) + b->end) / 2, keep, "payload");
		keep += b->nrecords;
	}
}
END_TEST

START_TEST(byte_flipped_in_block_header_yields_earlier_blocks_then_error)
{
	ref_build(POSIX_TRACE_APPEND, 0, REF_EVENTS);
	ref_index_linear();
	size_t keep = 0;
	for (size_t k = 0; k < ref.nblocks; k++) {
		const struct block *b = &ref.blocks[k];
		flip_and_check(b->start + offsetof(struct pt_log_block, seq), keep, "block seq");
		flip_and_check(b->start + offsetof(struct pt_log_block, payload_len), keep,
		               "block length");
		keep += b->nrecords;
	}
}
END_TEST

START_TEST(byte_flipped_in_first_record_header_yields_error_first)
{
	ref_build(POSIX_TRACE_APPEND, 0, REF_EVENTS);
	ref_index_linear();
	/* the data_len of the first record: the payload CRC catches it */
	flip_and_check(ref.blocks[0].start + sizeof(struct pt_log_block) + 1, 0, "record length");
}
END_TEST

/* The blocks of a ring log, in sequence order. */
static size_t ring_blocks(uint64_t *offs, uint32_t *nrec, size_t max)
{
	struct pt_log_header h;
	memcpy(&h, ref.bytes, sizeof h);
	ck_assert_uint_eq(h.layout, PT_LAYOUT_RING);
	size_t n = 0;
	for (uint64_t seq = 0;; seq++) {
		int found = 0;
		for (uint64_t slot = 0; slot < h.ring_slots; slot++) {
			uint64_t off = PT_LOG_DATA_OFF + slot * h.block_size;
			struct pt_log_block b;
			if (off + sizeof b > ref.size)
				continue;
			memcpy(&b, ref.bytes + off, sizeof b);
			if (b.magic == PT_LOG_BLOCK_MAGIC && b.seq == seq) {
				ck_assert_uint_lt(n, max);
				offs[n] = off;
				nrec[n] = b.nrecords;
				n++;
				found = 1;
			}
		}
		if (!found && n)
			break;
		ck_assert_uint_lt(seq, 1000000);
	}
	return n;
}

START_TEST(ring_log_byte_flipped_in_payload_yields_earlier_blocks_then_error)
{
	uint64_t offs[64];
	uint32_t nrec[64];
	ref_build(POSIX_TRACE_LOOP, 256u << 10, 5000);
	size_t n = ring_blocks(offs, nrec, 64);
	ck_assert_uint_ge(n, 3);
	/* the second oldest block */
	flip_and_check(offs[1] + sizeof(struct pt_log_block) + 100, nrec[0], "ring payload");
}
END_TEST

START_TEST(ring_log_byte_flipped_in_block_header_yields_earlier_blocks_then_error)
{
	uint64_t offs[64];
	uint32_t nrec[64];
	ref_build(POSIX_TRACE_LOOP, 256u << 10, 5000);
	size_t n = ring_blocks(offs, nrec, 64);
	ck_assert_uint_ge(n, 3);
	flip_and_check(offs[1] + offsetof(struct pt_log_block, payload_crc), nrec[0],
	               "ring block header");
}
END_TEST

/* ---- a controller that goes away without posix_trace_shutdown ------------- */

enum ending { END_SIGKILL, END_EXIT, END__EXIT, END_EXEC };

static int proc_stat(pid_t pid, char *comm, size_t commlen, char *state, pid_t *ppid)
{
	char path[64], buf[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	char *op = strchr(buf, '('), *cp = strrchr(buf, ')');
	if (!op || !cp || cp < op)
		return -1;
	size_t len = (size_t)(cp - op - 1);
	if (len >= commlen)
		len = commlen - 1;
	memcpy(comm, op + 1, len);
	comm[len] = '\0';
	int pp = 0;
	if (sscanf(cp + 1, " %c %d", state, &pp) != 2)
		return -1;
	*ppid = pp;
	return 0;
}

/* In the controller: its keeper, once it has named itself; 0 if none. */
static pid_t child_find_keeper(void)
{
	for (int tries = 0; tries < 5000; tries++) {
		pid_t found = 0;
		DIR *d = opendir("/proc");
		if (!d)
			return 0;
		for (struct dirent *e; (e = readdir(d));) {
			char comm[64], state;
			pid_t ppid, pid = (pid_t)atoi(e->d_name);
			if (pid > 0 && proc_stat(pid, comm, sizeof comm, &state, &ppid) == 0 &&
			    ppid == getpid() && strcmp(comm, "posixtrace-keep") == 0)
				found = pid;
		}
		closedir(d);
		if (found)
			return found;
		pt_sleep_ms(1);
	}
	return 0;
}

/* True once the process is gone (or a zombie nobody has reaped yet). */
static int keeper_gone(pid_t pid)
{
	char comm[64], state;
	pid_t ppid;
	if (proc_stat(pid, comm, sizeof comm, &state, &ppid) != 0)
		return 1;
	return state == 'Z' || state == 'X' || strcmp(comm, "posixtrace-keep") != 0;
}

static void wait_keeper_gone(pid_t keeper)
{
	for (int i = 0; i < 5000 && !keeper_gone(keeper); i++)
		pt_sleep_ms(1);
	ck_assert_msg(keeper_gone(keeper), "keeper %d still running", (int)keeper);
}

/* The controller (a forked child): a stream with log, K events, maybe a
 * flush, its keeper's pid to the parent, then the ending. */
__attribute__((noreturn)) static void controller(int fd, int report, uint32_t k, int flush,
                                                 enum ending how)
{
	trace_id_t trid;
	trace_event_id_t id;
	if (create_log(fd, 0, 0, POSIX_TRACE_APPEND, 0, &trid) != 0 ||
	    posix_trace_eventid_open("dying_controller", &id) != 0 || posix_trace_start(trid) != 0)
		_exit(3);
	for (uint32_t i = 0; i < k; i++)
		record_tagged(id, i, 64);
	if (flush) {
		struct posix_trace_status_info st;
		if (posix_trace_flush(trid) != 0)
			_exit(4);
		do {
			pt_sleep_ms(1);
			if (posix_trace_get_status(trid, &st) != 0)
				_exit(5);
		} while (st.posix_stream_flush_status == POSIX_TRACE_FLUSHING);
	}
	pid_t keeper = child_find_keeper();
	if (write(report, &keeper, sizeof keeper) != (ssize_t)sizeof keeper)
		_exit(6);
	switch (how) {
	case END_SIGKILL:
		for (;;)
			pause();
	case END_EXIT:
		exit(0);
	case END__EXIT:
		_exit(0);
	case END_EXEC:
		execl("/bin/true", "true", (char *)NULL);
		_exit(7);
	}
	_exit(8);
}

/* Runs a controller; returns its keeper's pid after the controller ended. */
static pid_t run_controller(int fd, uint32_t k, int flush, enum ending how)
{
	int p[2], status;
	pid_t keeper = 0;
	ck_assert_int_eq(pipe(p), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		close(p[0]);
		controller(fd, p[1], k, flush, how);
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &keeper, sizeof keeper), (ssize_t)sizeof keeper);
	close(p[0]);
	ck_assert_int_gt(keeper, 0);
	if (how == END_SIGKILL)
		ck_assert_int_eq(kill(child, SIGKILL), 0);
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	if (how == END_SIGKILL)
		ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	else
		ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	return keeper;
}

static void check_dead_controller(uint32_t k, int flush, enum ending how)
{
	int fd = new_log_file();
	pid_t keeper = run_controller(fd, k, flush, how);
	wait_keeper_gone(keeper);
	struct evlist l = read_log_fd(fd);
	hold(l.ev);
	assert_all_seqs(&l, k);
	for (size_t i = 0; i < l.n; i++)
		ck_assert_uint_ne(l.ev[i].info.posix_event_id, POSIX_TRACE_ERROR);
}

START_TEST(controller_killed_before_any_flush_log_has_every_event)
{
	check_dead_controller(2000, 0, END_SIGKILL);
}
END_TEST

START_TEST(controller_killed_after_flush_log_has_every_event)
{
	check_dead_controller(2000, 1, END_SIGKILL);
}
END_TEST

START_TEST(controller_exit_without_shutdown_log_has_every_event)
{
	check_dead_controller(2000, 0, END_EXIT);
}
END_TEST

START_TEST(controller__exit_without_shutdown_log_has_every_event)
{
	check_dead_controller(2000, 0, END__EXIT);
}
END_TEST

START_TEST(controller_exec_without_shutdown_log_has_every_event)
{
	check_dead_controller(2000, 0, END_EXEC);
}
END_TEST

START_TEST(controller_killed_log_reports_completed_stream_status)
{
	int fd = new_log_file();
	trace_id_t trid;
	pid_t keeper = run_controller(fd, 100, 0, END_SIGKILL);
	wait_keeper_gone(keeper);
	int ro = pt_reopen_ro(fd);
	ck_assert_ok(posix_trace_open(ro, &trid));
	struct posix_trace_status_info st;
	ck_assert_ok(posix_trace_get_status(trid, &st));
	ck_assert_int_eq(st.posix_stream_flush_status, POSIX_TRACE_NOT_FLUSHING);
	ck_assert_int_eq(st.posix_stream_flush_error, 0);
	ck_assert_uint_eq(st.posixtrace_lost_events, 0);
}
END_TEST

/* A controller recording continuously into a small POSIX_TRACE_FLUSH
 * stream, so that flushes are going on when it is killed. */
static void killed_while_flushing(long delay_ms)
{
	int fd = new_log_file(), p[2];
	pid_t keeper = 0;
	ck_assert_int_eq(pipe(p), 0);
	pid_t child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		trace_id_t trid;
		trace_event_id_t id;
		close(p[0]);
		if (create_log(fd, POSIX_TRACE_FLUSH, 64u << 10, POSIX_TRACE_APPEND, 0, &trid) != 0 ||
		    posix_trace_eventid_open("killed_while_flushing", &id) != 0 ||
		    posix_trace_start(trid) != 0)
			_exit(3);
		keeper = child_find_keeper();
		if (write(p[1], &keeper, sizeof keeper) != (ssize_t)sizeof keeper)
			_exit(6);
		for (uint32_t i = 0;; i++) {
			record_tagged(id, i, 64);
			if (i % 100 == 99)
				pt_sleep_ms(1);
		}
	}
	close(p[1]);
	ck_assert_int_eq(read(p[0], &keeper, sizeof keeper), (ssize_t)sizeof keeper);
	ck_assert_int_gt(keeper, 0);
	pt_sleep_ms(delay_ms);
	ck_assert_int_eq(kill(child, SIGKILL), 0);
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	wait_keeper_gone(keeper);

	struct evlist l = read_log_fd(fd);
	hold(l.ev);
	uint32_t next = 0;
	size_t flushes = 0;
	for (size_t i = 0; i < l.n; i++) {
		flushes += l.ev[i].info.posix_event_id == POSIX_TRACE_FLUSH_START;
		ck_assert_uint_ne(l.ev[i].info.posix_event_id, POSIX_TRACE_ERROR);
		if (!is_tagged(&l.ev[i]))
			continue;
		/* no gap, no duplicate, in order */
		ck_assert_msg(seq_of(&l.ev[i]) == next, "event %u read where %u was expected",
		              seq_of(&l.ev[i]), next);
		next++;
	}
	ck_assert_uint_gt(next, 0);
	ck_assert_uint_gt(flushes, 0);
}

START_TEST(controller_killed_while_flushing_log_has_every_event_up_to_the_last)
{
	unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();
	for (int round = 0; round < 3; round++)
		killed_while_flushing(20 + rand_r(&seed) % 300);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("logdamage");
	TCase *tc;

	tc = pt_tcase(s, "truncated");
	tcase_add_test(tc, log_cut_every_37_bytes_yields_prefix_then_error);
	tcase_add_test(tc, log_cut_at_each_block_end_yields_complete_blocks_without_error);
	tcase_add_test(tc, log_cut_one_byte_short_loses_only_the_last_block);
	tcase_add_test(tc, log_cut_inside_header_is_einval);
	tcase_add_test(tc, log_cut_after_header_opens_without_events);
	tcase_add_test(tc, log_cut_inside_name_table_opens_then_reports_error);

	tc = pt_tcase(s, "changed");
	tcase_add_test(tc, byte_flipped_in_block_payload_yields_earlier_blocks_then_error);
	tcase_add_test(tc, byte_flipped_in_block_header_yields_earlier_blocks_then_error);
	tcase_add_test(tc, byte_flipped_in_first_record_header_yields_error_first);
	tcase_add_test(tc, ring_log_byte_flipped_in_payload_yields_earlier_blocks_then_error);
	tcase_add_test(tc, ring_log_byte_flipped_in_block_header_yields_earlier_blocks_then_error);

	tc = pt_tcase(s, "dead_controller");
	tcase_add_test(tc, controller_killed_before_any_flush_log_has_every_event);
	tcase_add_test(tc, controller_killed_after_flush_log_has_every_event);
	tcase_add_test(tc, controller_exit_without_shutdown_log_has_every_event);
	tcase_add_test(tc, controller__exit_without_shutdown_log_has_every_event);
	tcase_add_test(tc, controller_exec_without_shutdown_log_has_every_event);
	tcase_add_test(tc, controller_killed_log_reports_completed_stream_status);
	tcase_add_test(tc, controller_killed_while_flushing_log_has_every_event_up_to_the_last);

	return pt_run(s);
}
