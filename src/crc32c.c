/* CRC-32C (Castagnoli), table-driven, for trace log blocks. */
#include <pthread.h>
#include "log.h"

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
/* SSE4.2 has a CRC-32C instruction: several GB/s instead of one. */
__attribute__((target("sse4.2"))) static uint32_t crc_sse42(uint32_t crc, const unsigned char *p,
                                                            size_t len)
{
	uint64_t c = crc;
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
