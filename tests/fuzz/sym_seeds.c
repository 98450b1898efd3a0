/* SPDX-License-Identifier: MIT */
/*
 * Seeds for fuzz_symbolize: crafted images (tests/symbolize/craft.h), one
 * without DWARF, one with compile units and a range list, one with a unit
 * of functions, one with a compressed .debug_str.
 * Usage: sym_seeds DIR
 */
#include <stdio.h>
#include <stdlib.h>

#include "../symbolize/craft.h"


static const unsigned char id[20] = { 0xf0, 0x0d };

static void seed(const char *dir, const char *name, const struct craft_section *sec, int n)
{
	unsigned char *elf;
	size_t size = craft_elf(id, 0x3000, sec, n, &elf);
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(elf, 1, size, f) != size || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	free(elf);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sym_seeds DIR\n");
		return 2;
	}
	struct bytes a = { 0 }, info = { 0 }, r = { 0 }, funcs = { 0 };
	put_uleb(&a, 1), put_uleb(&a, CRAFT_TAG_compile_unit), put_u8(&a, 0);
	put_uleb(&a, CRAFT_AT_low_pc), put_uleb(&a, CRAFT_FORM_addr);
	put_uleb(&a, CRAFT_AT_ranges), put_uleb(&a, CRAFT_FORM_sec_offset), put_u8(&a, 0), put_u8(&a, 0);
	put_uleb(&a, 2), put_uleb(&a, CRAFT_TAG_compile_unit), put_u8(&a, 1);
	put_uleb(&a, CRAFT_AT_low_pc), put_uleb(&a, CRAFT_FORM_addr);
	put_uleb(&a, CRAFT_AT_high_pc), put_uleb(&a, CRAFT_FORM_data8), put_u8(&a, 0), put_u8(&a, 0);
	put_uleb(&a, 3), put_uleb(&a, CRAFT_TAG_subprogram), put_u8(&a, 0);
	put_uleb(&a, CRAFT_AT_name), put_uleb(&a, CRAFT_FORM_string);
	put_uleb(&a, CRAFT_AT_ranges), put_uleb(&a, CRAFT_FORM_sec_offset), put_u8(&a, 0), put_u8(&a, 0);
	put_u8(&a, 0);
	for (int i = 0; i < 4; i++)
		put_u64(&r, 0x1000 + 0x100 * (uint64_t)i), put_u64(&r, 0x1080 + 0x100 * (uint64_t)i);
	put_u64(&r, 0), put_u64(&r, 0);
	for (int i = 0; i < 3; i++) {
		put_u32(&info, 20), put_u16(&info, 4), put_u32(&info, 0), put_u8(&info, 8);
		put_uleb(&info, 1), put_u64(&info, 0), put_u32(&info, (uint32_t)(16 * i));
	}
	put_u32(&funcs, 0), put_u16(&funcs, 4), put_u32(&funcs, 0), put_u8(&funcs, 8);
	put_uleb(&funcs, 2), put_u64(&funcs, 0x1000), put_u64(&funcs, 0x2000);
	for (int i = 0; i < 3; i++)
		put_uleb(&funcs, 3), put_str(&funcs, "fn"), put_u32(&funcs, (uint32_t)(16 * i));
	put_u8(&funcs, 0);
	uint32_t len = (uint32_t)funcs.n - 4;
	memcpy(funcs.p, &len, 4);
	/* a compressed .debug_str: a header claiming 4 KiB, then a stored
	 * zlib stream of zeros */
	struct bytes z = { 0 };
	Elf64_Chdr ch = { .ch_type = ELFCOMPRESS_ZLIB, .ch_size = 4096, .ch_addralign = 1 };
	put(&z, &ch, sizeof ch);
	put_u8(&z, 0x78), put_u8(&z, 0x01), put_u8(&z, 1), put_u16(&z, 4096), put_u16(&z, 0xefff);
	put(&z, NULL, 4096);
	put_u8(&z, 0), put_u8(&z, 0), put_u8(&z, 0), put_u8(&z, 1); /* adler32 of zeros: 1 */
	struct craft_section units[] = {
		{ ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		{ ".debug_info", SHT_PROGBITS, 0, info.p, info.n },
		{ ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n },
		{ ".debug_str", SHT_PROGBITS, SHF_COMPRESSED, z.p, z.n },
	};
	struct craft_section fns[] = {
		{ ".debug_abbrev", SHT_PROGBITS, 0, a.p, a.n },
		{ ".debug_info", SHT_PROGBITS, 0, funcs.p, funcs.n },
		{ ".debug_ranges", SHT_PROGBITS, 0, r.p, r.n },
	};
	seed(argv[1], "plain", NULL, 0);
	seed(argv[1], "units", units, 3);
	seed(argv[1], "functions", fns, 3);
	seed(argv[1], "compressed", units, 4);
	free(a.p), free(info.p), free(r.p), free(funcs.p), free(z.p);
	return 0;
}
