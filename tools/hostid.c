/* SPDX-License-Identifier: MIT */
/*
 * The host.id of the OTLP exporter: the machine id of machine-id(5), which
 * that page says not to expose, as the library hashes it for the host
 * record of every log (posixtrace_host_self, posixtrace_log_host: as
 * systemd's sd_id128_get_machine_app_specific() with the application id
 * 863bb4c1-be97-40f0-bb34-975751328dcf), in 32 lowercase hex digits.
 * SHA-256 is FIPS 180-4's, written here (the command links no crypto
 * library): it names a log (otlp.c, the ids of its spans).
 */
#include <errno.h>
#include <string.h>

#include "otlp.h"

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

void sha256_init(struct sha256 *c)
{
	static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
	                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
	memcpy(c->h, iv, sizeof iv);
	c->total = 0;
}

void sha256_update(struct sha256 *c, const void *data, size_t len)
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

void sha256_final(struct sha256 *c, uint8_t out[32])
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

/* 32 hex digits in out: the library takes the machine id and hashes it
 * as every log's host record does, so host.id and the logs agree. */
int host_id(char out[33])
{
	struct posixtrace_host h;
	if (posixtrace_host_self(&h) != 0)
		return EINVAL;
	if (!h.posixtrace_machine_known)
		return ENOENT;
	put_hex_bytes(out, h.posixtrace_machine_id, sizeof h.posixtrace_machine_id)[0] = '\0';
	return 0;
}
