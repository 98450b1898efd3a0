/* SPDX-License-Identifier: MIT */
/* CRC-32C (Castagnoli) for trace log headers and blocks: SSE4.2 when the CPU
 * has it, else table-driven. */
#include <pthread.h>
#include "crc32c.h"

static uint32_t table[8][256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

static void make_table(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			table[t][i] = (table[t - 1][i] >> 8) ^ table[0][table[t - 1][i] & 0xff];
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <string.h>
/*
 * SSE4.2 has a CRC-32C instruction.  It has a latency of three cycles, so
 * long buffers are cut in three parts whose CRCs are computed together and
 * then combined: shifting a CRC over n zero bytes is a linear map, tabulated
 * once for each part length (the method of Mark Adler's crc32c.c).
 */
#define SHIFT_LONG 8192u
#define SHIFT_SHORT 256u
static uint32_t shift_long[4][256], shift_short[4][256];

static uint32_t gf2_times(const uint32_t *mat, uint32_t vec)
{
	uint32_t sum = 0;
	for (; vec; vec >>= 1, mat++)
		if (vec & 1)
			sum ^= *mat;
	return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat)
{
	for (int n = 0; n < 32; n++)
		square[n] = gf2_times(mat, mat[n]);
}

/* The operator that appends `len` zero bytes (len a power of two). */
static void zeros_operator(uint32_t *even, size_t len)
{
	uint32_t odd[32], row = 1;
	odd[0] = 0x82f63b78u;
	for (int n = 1; n < 32; n++, row <<= 1)
		odd[n] = row;
	gf2_square(even, odd); /* two zero bits */
	gf2_square(odd, even); /* four */
	do {
		gf2_square(even, odd); /* one zero byte, then four, ... */
		len >>= 1;
		if (!len)
			return;
		gf2_square(odd, even);
		len >>= 1;
	} while (len);
	memcpy(even, odd, sizeof odd);
}

static void make_shift_table(uint32_t tab[4][256], size_t len)
{
	uint32_t op[32];
	zeros_operator(op, len);
	for (uint32_t n = 0; n < 256; n++)
		for (int b = 0; b < 4; b++)
			tab[b][n] = gf2_times(op, n << (8 * b));
}

static inline uint32_t crc_shift(uint32_t tab[4][256], uint32_t crc)
{
	return tab[0][crc & 0xff] ^ tab[1][(crc >> 8) & 0xff] ^ tab[2][(crc >> 16) & 0xff] ^
	       tab[3][crc >> 24];
}

__attribute__((target("sse4.2"))) static uint64_t crc_three(uint64_t c0, const unsigned char **pp,
                                                            size_t *lenp, size_t part,
                                                            uint32_t tab[4][256])
{
	const unsigned char *p = *pp;
	size_t len = *lenp;
	while (len >= 3 * part) {
		uint64_t c1 = 0, c2 = 0;
		const unsigned char *end = p + part;
		do {
			uint64_t a, b, d;
			memcpy(&a, p, 8);
			memcpy(&b, p + part, 8);
			memcpy(&d, p + 2 * part, 8);
			c0 = __builtin_ia32_crc32di(c0, a);
			c1 = __builtin_ia32_crc32di(c1, b);
			c2 = __builtin_ia32_crc32di(c2, d);
			p += 8;
		} while (p < end);
		c0 = crc_shift(tab, (uint32_t)c0) ^ c1;
		c0 = crc_shift(tab, (uint32_t)c0) ^ c2;
		p += 2 * part;
		len -= 3 * part;
	}
	*pp = p;
	*lenp = len;
	return c0;
}

__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p,
                                                            size_t len)
{
	uint64_t c = crc;
	c = crc_three(c, &p, &len, SHIFT_LONG, shift_long);
	c = crc_three(c, &p, &len, SHIFT_SHORT, shift_short);
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	uint32_t c32 = (uint32_t)c;
	while (len--)
		c32 = __builtin_ia32_crc32qi(c32, *p++);
	return c32;
}
#define HAVE_CRC_SSE42 1
#endif

static int use_hw;

static void init_crc(void)
{
	make_table();
#ifdef HAVE_CRC_SSE42
	__builtin_cpu_init();
	use_hw = __builtin_cpu_supports("sse4.2");
	make_shift_table(shift_long, SHIFT_LONG);
	make_shift_table(shift_short, SHIFT_SHORT);
#endif
}

uint32_t pt_crc32c(uint32_t crc, const void *data, size_t len)
{
	const unsigned char *p = data;
	pthread_once(&table_once, init_crc);
	crc = ~crc;
#ifdef HAVE_CRC_SSE42
	if (use_hw)
		return ~crc_sse42(crc, p, len);
#endif
	while (len >= 8) {
		uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
		                     (uint32_t)p[3] << 24);
		crc = table[7][lo & 0xff] ^ table[6][(lo >> 8) & 0xff] ^ table[5][(lo >> 16) & 0xff] ^
		      table[4][lo >> 24] ^ table[3][p[4]] ^ table[2][p[5]] ^ table[1][p[6]] ^
		      table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}
