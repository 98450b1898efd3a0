/* SPDX-License-Identifier: MIT */
/*
 * The host record (loghost.h).  The machine id of machine-id(5), which that
 * page says not to expose, becomes an id of its own for this application as
 * systemd's sd_id128_get_machine_app_specific() makes it: HMAC-SHA256 keyed
 * with the 16 bytes of the machine id over the 16 bytes of
 * PT_LOG_HOST_APP_ID, the first 16 bytes of the result made a UUID version
 * 4 (RFC 9562).  The raw id cannot be recovered from it.  SHA-256 is FIPS
 * 180-4's, written here: the library links no crypto library.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "crc32c.h"
#include "loghost.h"

struct sha256 {
	uint32_t h[8];
	uint64_t total;
	uint8_t block[64];
};

static const uint32_t sha256_k[64] = {
	0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4,
	0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
	0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f,
	0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
	0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc,
	0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
	0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116,
	0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
	0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
	0xc67178f2};

static uint32_t ror(uint32_t x, unsigned n)
{
	return x >> n | x << (32 - n);
}

static void sha256_block(uint32_t h[8], const uint8_t *b)
{
	uint32_t w[64], s[8];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
		       (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
	for (int i = 16; i < 64; i++) {
		uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ w[i - 15] >> 3;
		uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ w[i - 2] >> 10;
		w[i] = w[i - 16] + s0 + w[i - 7] + s1;
	}
	memcpy(s, h, sizeof s);
	for (int i = 0; i < 64; i++) {
		uint32_t t1 = s[7] + (ror(s[4], 6) ^ ror(s[4], 11) ^ ror(s[4], 25)) +
		              ((s[4] & s[5]) ^ (~s[4] & s[6])) + sha256_k[i] + w[i];
		uint32_t t2 = (ror(s[0], 2) ^ ror(s[0], 13) ^ ror(s[0], 22)) +
		              ((s[0] & s[1]) ^ (s[0] & s[2]) ^ (s[1] & s[2]));
		memmove(s + 1, s, 7 * sizeof *s);
		s[4] += t1;
		s[0] = t1 + t2;
	}
	for (int i = 0; i < 8; i++)
		h[i] += s[i];
}

static void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(c->h, iv, sizeof iv);
	c->total = 0;
}

static void sha256_update(struct sha256 *c, const void *data, size_t len)
{
	const uint8_t *p = data;
	while (len) {
		size_t used = (size_t)(c->total % 64), n = 64 - used < len ? 64 - used : len;
		memcpy(c->block + used, p, n);
		c->total += n;
		p += n;
		len -= n;
		if (used + n == 64)
			sha256_block(c->h, c->block);
	}
}

static void sha256_final(struct sha256 *c, uint8_t out[32])
{
	uint64_t bits = c->total * 8;
	uint8_t pad[72] = {0x80};
	size_t used = (size_t)(c->total % 64), n = used < 56 ? 56 - used : 120 - used;
	for (int i = 0; i < 8; i++)
		pad[n + (size_t)i] = (uint8_t)(bits >> (56 - 8 * i));
	sha256_update(c, pad, n + 8);
	for (int i = 0; i < 8; i++) {
		out[4 * i] = (uint8_t)(c->h[i] >> 24);
		out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
		out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
		out[4 * i + 3] = (uint8_t)c->h[i];
	}
}

/* HMAC (RFC 2104) with SHA-256, a key of 16 bytes over 16 bytes */
static void hmac_sha256(const uint8_t key[16], const uint8_t msg[16], uint8_t out[32])
{
	uint8_t pad[64], inner[32];
	struct sha256 c;
	for (int round = 0; round < 2; round++) {
		memset(pad, round ? 0x5c : 0x36, sizeof pad);
		for (size_t i = 0; i < 16; i++)
			pad[i] ^= key[i];
		sha256_init(&c);
		sha256_update(&c, pad, sizeof pad);
		if (round)
			sha256_update(&c, inner, sizeof inner);
		else
			sha256_update(&c, msg, 16);
		sha256_final(&c, round ? out : inner);
	}
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* 32 hex digits (a UUID's dashes skipped), then the end or a newline */
static int parse_id128(const char *s, uint8_t id[16])
{
	size_t n = 0;
	for (; *s && *s != '\n' && n < 32; s++) {
		if (*s == '-')
			continue;
		int d = hex_digit(*s);
		if (d < 0)
			return 0;
		id[n / 2] = (uint8_t)(n % 2 ? id[n / 2] | d : d << 4);
		n++;
	}
	return n == 32 && (*s == '\0' || *s == '\n');
}

/* A file of one id: 1 if it held one */
static int read_id128(const char *path, uint8_t id[16])
{
	char text[64];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	ssize_t n;
	do
		n = read(fd, text, sizeof text - 1);
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n <= 0)
		return 0;
	text[n] = '\0';
	return parse_id128(text, id);
}

static uint64_t ns_of(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CLOCK_REALTIME on both sides of CLOCK_MONOTONIC; the narrowest of five
 * tries, its realtime the middle of the two reads. */
static void take_anchor(struct pt_log_host *h)
{
	h->anchor_gap_ns = UINT64_MAX;
	for (int i = 0; i < 5; i++) {
		uint64_t before = ns_of(CLOCK_REALTIME), mono = ns_of(CLOCK_MONOTONIC);
		uint64_t after = ns_of(CLOCK_REALTIME);
		if (after < before || after - before >= h->anchor_gap_ns)
			continue;
		h->anchor_gap_ns = after - before;
		h->anchor_real_ns = before + (after - before) / 2;
		h->anchor_mono_ns = mono;
	}
	if (h->anchor_gap_ns == UINT64_MAX) { /* the realtime clock went back each time */
		h->anchor_real_ns = ns_of(CLOCK_REALTIME);
		h->anchor_mono_ns = ns_of(CLOCK_MONOTONIC);
	}
}

static void take_clock_state(struct pt_log_host *h)
{
	struct timex tx;
	memset(&tx, 0, sizeof tx); /* modes 0: read only, allowed to anyone */
	int state = adjtimex(&tx);
	if (state < 0)
		return;
	h->flags |= PT_LOG_HOST_CLOCK;
	if (state == TIME_ERROR || (tx.status & STA_UNSYNC))
		h->flags |= PT_LOG_HOST_UNSYNC;
	h->maxerror_us = tx.maxerror;
	h->esterror_us = tx.esterror;
}

void pt_log_host_take(struct pt_log_host *h)
{
	struct utsname u;
	uint8_t id[16], app[16], mac[32];
	memset(h, 0, sizeof *h);
	if (uname(&u) == 0) {
		size_t n = strnlen(u.nodename, sizeof u.nodename);
		if (n > PT_LOG_HOST_NAME_SIZE - 1)
			n = PT_LOG_HOST_NAME_SIZE - 1;
		memcpy(h->name, u.nodename, n);
	}
	if (read_id128("/etc/machine-id", id) && parse_id128(PT_LOG_HOST_APP_ID, app)) {
		hmac_sha256(id, app, mac);
		mac[6] = (uint8_t)((mac[6] & 0x0f) | 0x40); /* version 4 */
		mac[8] = (uint8_t)((mac[8] & 0x3f) | 0x80); /* variant RFC 4122 */
		memcpy(h->machine, mac, sizeof h->machine);
		h->flags |= PT_LOG_HOST_MACHINE;
	}
	memset(id, 0, sizeof id);
	if (read_id128("/proc/sys/kernel/random/boot_id", h->boot))
		h->flags |= PT_LOG_HOST_BOOT;
	take_anchor(h);
	take_clock_state(h);
	h->crc = pt_crc32c(0, h, offsetof(struct pt_log_host, crc));
}
