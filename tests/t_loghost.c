/* SPDX-License-Identifier: MIT */
/*
 * t_loghost: the host record of a version 5 log (docs/LOG-FORMAT.md, "Host
 * record") through posixtrace_log_host and posixtrace_host_self:
 *   - a log names the host it was written on (the name, the keyed hash of
 *     the machine id and the boot id posixtrace_host_self gives), and its
 *     clocks: the anchor pair read within its gap, and the creation's
 *     CLOCK_MONOTONIC, which maps an event's time to CLOCK_MONOTONIC
 *     within the time it took to post it;
 *   - the machine id is never in the log, only its hash;
 *   - a ring (LOOP) log keeps its record through the header's rewrites;
 *   - each file of a rotated log begins with a record of its own, anchored
 *     when the file began;
 *   - a log written before version 5 (the tests' own version 3 and 4
 *     writer) reads, and names no host (ENOENT);
 *   - a crafted host record (a name without its null, unknown flags, a
 *     wrong CRC) makes the log refused (EINVAL), never read past its field;
 *     a name of 67 bytes and its null reads cut to 64; a file that ends
 *     inside its host record is refused.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>

#include "logv3.h"

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t ts_of(const struct timespec *t)
{
	return (uint64_t)t->tv_sec * 1000000000u + (uint64_t)t->tv_nsec;
}

/* A log of this process with one user event posted between two reads of
 * CLOCK_MONOTONIC, shut down; its fd. */
static int log_with_one_event(uint64_t *mono_before, uint64_t *mono_after)
{
	trace_id_t trid;
	trace_event_id_t id;
	int fd = lt_new_log_file();
	ck_assert_ok(lt_create_log(fd, POSIX_TRACE_APPEND, 0, 0, 0, &trid));
	ck_assert_ok(posix_trace_eventid_open("host_probe", &id));
	ck_assert_ok(posix_trace_start(trid));
	*mono_before = now_ns(CLOCK_MONOTONIC);
	posix_trace_event(id, NULL, 0);
	*mono_after = now_ns(CLOCK_MONOTONIC);
	ck_assert_ok(posix_trace_shutdown(trid));
	return fd;
}

START_TEST(log_names_its_host_and_maps_event_times_to_monotonic)
{
	uint64_t before, after;
	int fd = log_with_one_event(&before, &after);
	trace_id_t trid;
	ck_assert_ok(posix_trace_open(fd, &trid));
	struct posixtrace_host h, self;
	memset(&h, 0xa5, sizeof h);
	ck_assert_ok(posixtrace_log_host(trid, &h));
	ck_assert_ok(posixtrace_host_self(&self));
	ck_assert_str_eq(h.posixtrace_host_name, self.posixtrace_host_name);
	ck_assert_int_eq(h.posixtrace_machine_known, self.posixtrace_machine_known);
	ck_assert_mem_eq(h.posixtrace_machine_id, self.posixtrace_machine_id, 16);
	ck_assert_int_eq(h.posixtrace_boot_known, self.posixtrace_boot_known);
	ck_assert_mem_eq(h.posixtrace_boot_id, self.posixtrace_boot_id, 16);
	ck_assert_uint_eq(self.posixtrace_create_monotonic_ns, 0);
	/* the anchor: read before the event, the pair within its gap */
	ck_assert_uint_gt(h.posixtrace_anchor_monotonic_ns, 0);
	ck_assert_uint_le(h.posixtrace_anchor_monotonic_ns, before);
	ck_assert_uint_lt(h.posixtrace_anchor_gap_ns, 1000000000u);
	ck_assert_uint_gt(h.posixtrace_create_monotonic_ns, 0);
	ck_assert_uint_le(h.posixtrace_create_monotonic_ns, h.posixtrace_anchor_monotonic_ns);
	/* the event's time on CLOCK_MONOTONIC, by the creation's pair */
	trace_attr_t attr;
	struct timespec created;
	ck_assert_ok(posix_trace_get_attr(trid, &attr));
	ck_assert_ok(posix_trace_attr_getcreatetime(&attr, &created));
	posix_trace_attr_destroy(&attr);
	struct posix_trace_event_info info;
	char buf[256];
	size_t len;
	int unavailable, seen = 0;
	while (posix_trace_getnext_event(trid, &info, buf, sizeof buf, &len, &unavailable) == 0 &&
	       !unavailable) {
		char name[TRACE_EVENT_NAME_MAX + 1];
		ck_assert_ok(posix_trace_eventid_get_name(trid, info.posix_event_id, name));
		if (strcmp(name, "host_probe"))
			continue;
		uint64_t mono = ts_of(&info.posix_timestamp) - ts_of(&created) +
		                h.posixtrace_create_monotonic_ns;
		ck_assert_uint_ge(mono, before);
		ck_assert_uint_le(mono, after);
		seen++;
	}
	ck_assert_int_eq(seen, 1);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* The header is rewritten in place at every flush and at the end (its
 * first 360 bytes): the host record after it stays, in a ring too. */
START_TEST(ring_log_keeps_its_host_record_through_header_rewrites)
{
	trace_id_t trid;
	trace_event_id_t id;
	int fd = lt_new_log_file();
	ck_assert_ok(lt_create_log(fd, POSIX_TRACE_LOOP, 256u << 10, 0, 0, &trid));
	ck_assert_ok(posix_trace_eventid_open("ring_probe", &id));
	ck_assert_ok(posix_trace_start(trid));
	char data[512] = {0};
	for (int round = 0; round < 4; round++) {
		for (int i = 0; i < 400; i++)
			posix_trace_event(id, data, sizeof data);
		ck_assert_ok(posix_trace_flush(trid));
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	struct posixtrace_host h, self;
	ck_assert_ok(posix_trace_open(fd, &trid));
	ck_assert_ok(posixtrace_log_host(trid, &h));
	ck_assert_ok(posixtrace_host_self(&self));
	ck_assert_str_eq(h.posixtrace_host_name, self.posixtrace_host_name);
	ck_assert_uint_gt(h.posixtrace_create_monotonic_ns, 0);
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* 16 bytes as 32 lowercase hex digits */
static void hex16(const unsigned char *b, char out[33])
{
	for (int i = 0; i < 16; i++)
		snprintf(out + 2 * i, 3, "%02x", b[i]);
}

START_TEST(log_holds_the_hash_of_the_machine_id_never_the_id)
{
	char text[64] = "";
	int mfd = open("/etc/machine-id", O_RDONLY);
	if (mfd < 0)
		return; /* nothing to leak: the record says the id is unknown (next test) */
	ssize_t n = read(mfd, text, 32);
	close(mfd);
	ck_assert_int_eq(n, 32);
	text[32] = '\0';
	uint64_t b, a;
	int fd = log_with_one_event(&b, &a);
	size_t len;
	unsigned char *bytes = lt_file_bytes(fd, &len);
	unsigned char raw[16];
	for (int i = 0; i < 16; i++) {
		unsigned v;
		ck_assert_int_eq(sscanf(text + 2 * i, "%2x", &v), 1);
		raw[i] = (unsigned char)v;
	}
	ck_assert_ptr_null(memmem(bytes, len, raw, sizeof raw));
	ck_assert_ptr_null(memmem(bytes, len, text, 32));
	trace_id_t trid;
	struct posixtrace_host h;
	ck_assert_ok(posix_trace_open(fd, &trid));
	ck_assert_ok(posixtrace_log_host(trid, &h));
	ck_assert_int_eq(h.posixtrace_machine_known, 1);
	char hashed[33];
	hex16(h.posixtrace_machine_id, hashed);
	ck_assert_str_ne(hashed, text);
	ck_assert_uint_eq(h.posixtrace_machine_id[6] >> 4, 4); /* a version 4 UUID */
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
}
END_TEST

/* The record of file number (1, 2, ...) of a rotated log in dirfd. */
static struct posixtrace_host rotated_file_host(int dirfd, int number)
{
	char name[32];
	snprintf(name, sizeof name, "%08d.ptlog", number);
	int fd = openat(dirfd, name, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	trace_id_t trid;
	struct posixtrace_host h;
	ck_assert_ok(posix_trace_open(fd, &trid));
	ck_assert_ok(posixtrace_log_host(trid, &h));
	ck_assert_ok(posix_trace_close(trid));
	close(fd);
	return h;
}

START_TEST(each_rotated_file_begins_with_its_own_host_record)
{
	const char *dir = pt_scratch_dir("pt_loghost");
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY);
	ck_assert_int_ge(dirfd, 0);
	trace_attr_t attr;
	trace_id_t trid;
	trace_event_id_t id;
	ck_assert_ok(posix_trace_attr_init(&attr));
	ck_assert_ok(posix_trace_attr_setlogfullpolicy(&attr, POSIX_TRACE_APPEND));
	struct posixtrace_logdir ld = {.posixtrace_dirfd = dirfd, .posixtrace_mode = 0600,
	                               .posixtrace_file_size = 64u << 10};
	ck_assert_ok(posixtrace_create_withlogdir(0, &attr, &ld, &trid));
	posix_trace_attr_destroy(&attr);
	ck_assert_ok(posix_trace_eventid_open("rotating", &id));
	ck_assert_ok(posix_trace_start(trid));
	char data[1024] = {0};
	/* past one file's size, a flush ends the file */
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < 100; i++)
			posix_trace_event(id, data, sizeof data);
		ck_assert_ok(posix_trace_flush(trid));
	}
	ck_assert_ok(posix_trace_shutdown(trid));
	struct posixtrace_host h1 = rotated_file_host(dirfd, 1), h2 = rotated_file_host(dirfd, 2);
	ck_assert_str_eq(h1.posixtrace_host_name, h2.posixtrace_host_name);
	ck_assert_uint_eq(h1.posixtrace_create_monotonic_ns, h2.posixtrace_create_monotonic_ns);
	ck_assert_uint_gt(h2.posixtrace_anchor_monotonic_ns, h1.posixtrace_anchor_monotonic_ns);
	close(dirfd);
	pt_remove_tree(dir);
}
END_TEST

START_TEST(logs_before_version_5_read_and_name_no_host)
{
	for (uint32_t version = 3; version <= 4; version++) {
		struct v3 g;
		int fd = lt_new_log_file();
		v3_begin(&g, fd, version, PT_LOG_LINEAR, 0);
		v3_end(&g);
		trace_id_t trid;
		struct posixtrace_host h;
		ck_assert_ok(posix_trace_open(fd, &trid));
		ck_assert_int_eq(posixtrace_log_host(trid, &h), ENOENT);
		ck_assert_ok(posix_trace_close(trid));
		close(fd);
	}
}
END_TEST

/* A copy of a good log whose host record was changed by fn, its CRC made
 * right again (or not, when fn says so); posix_trace_open's answer. */
static int open_with_host(void (*fn)(struct pt_log_host *h, int *fix_crc))
{
	uint64_t b, a;
	int fd = log_with_one_event(&b, &a);
	size_t len;
	unsigned char *bytes = lt_file_bytes(fd, &len);
	close(fd);
	struct pt_log_host h;
	memcpy(&h, bytes + PT_LOG_HOST_OFF, sizeof h);
	int fix = 1;
	fn(&h, &fix);
	if (fix)
		h.crc = lt_crc32c(&h, offsetof(struct pt_log_host, crc));
	memcpy(bytes + PT_LOG_HOST_OFF, &h, sizeof h);
	int copy = lt_file_holding(bytes, len);
	trace_id_t trid;
	int err = posix_trace_open(copy, &trid);
	if (!err) {
		struct posixtrace_host out;
		ck_assert_ok(posixtrace_log_host(trid, &out));
		ck_assert_uint_le(strlen(out.posixtrace_host_name), POSIXTRACE_HOST_NAME_MAX);
		ck_assert_ok(posix_trace_close(trid));
	}
	close(copy);
	return err;
}

static void unterminated_name(struct pt_log_host *h, int *fix) { (void)fix; memset(h->name, 'x', sizeof h->name); }
static void longest_name(struct pt_log_host *h, int *fix) { (void)fix; memset(h->name, 'y', 64); memset(h->name + 64, 0, sizeof h->name - 64); }
static void unknown_flags(struct pt_log_host *h, int *fix) { (void)fix; h->flags |= 0x80000000u; }
static void reserved_set(struct pt_log_host *h, int *fix) { (void)fix; h->reserved = 7; }
static void wrong_crc(struct pt_log_host *h, int *fix) { h->name[0] ^= 1; *fix = 0; }
static void name_cut_short(struct pt_log_host *h, int *fix) { (void)fix; memset(h->name + 1, 'z', sizeof h->name - 1); h->name[sizeof h->name - 1] = '\0'; }

START_TEST(crafted_host_record_is_refused_or_read_within_its_field)
{
	ck_assert_int_eq(open_with_host(unterminated_name), EINVAL);
	ck_assert_int_eq(open_with_host(unknown_flags), EINVAL);
	ck_assert_int_eq(open_with_host(reserved_set), EINVAL);
	ck_assert_int_eq(open_with_host(wrong_crc), EINVAL);
	ck_assert_int_eq(open_with_host(longest_name), 0);
	/* 67 bytes then the null: terminated in its field, longer than a host
	 * name may be: read, and cut to POSIXTRACE_HOST_NAME_MAX */
	ck_assert_int_eq(open_with_host(name_cut_short), 0);
}
END_TEST

/* A file that ends inside its host record (a copy cut short, or forged
 * to end there) is refused, its bytes never read past the end. */
START_TEST(log_cut_inside_its_host_record_is_refused)
{
	uint64_t b, a;
	int fd = log_with_one_event(&b, &a);
	size_t len;
	unsigned char *bytes = lt_file_bytes(fd, &len);
	close(fd);
	const size_t cuts[] = {PT_LOG_HOST_OFF, PT_LOG_HOST_OFF + 1, PT_LOG_HOST_OFF + 80,
	                       PT_LOG_HOST_OFF + sizeof(struct pt_log_host) - 1};
	for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
		int cut = lt_file_holding(bytes, cuts[i]);
		trace_id_t trid;
		ck_assert_msg(posix_trace_open(cut, &trid) == EINVAL, "cut at %zu opened", cuts[i]);
		close(cut);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("loghost");
	TCase *tc = pt_tcase(s, "host");
	tcase_add_test(tc, log_names_its_host_and_maps_event_times_to_monotonic);
	tcase_add_test(tc, log_holds_the_hash_of_the_machine_id_never_the_id);
	tcase_add_test(tc, ring_log_keeps_its_host_record_through_header_rewrites);
	tcase_add_test(tc, each_rotated_file_begins_with_its_own_host_record);
	tcase_add_test(tc, logs_before_version_5_read_and_name_no_host);
	tcase_add_test(tc, crafted_host_record_is_refused_or_read_within_its_field);
	tcase_add_test(tc, log_cut_inside_its_host_record_is_refused);
	return pt_run_scratch(s, "pt_loghost");
}
