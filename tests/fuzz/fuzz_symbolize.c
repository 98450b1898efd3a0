/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target over the symbolizer's parsing (tools/symbolize.c),
 * in process: the input is an ELF image, given to symbolize_elf_memory,
 * the entry a file read from disk goes through too (the checks of the
 * file's sections and of the sizes its compressed sections claim, libdwfl
 * and libdw on the copy, the address index, the lookups), with small
 * budgets so that one input costs little.  Addresses: a few fixed ones
 * where crafted and compiled images have code, and two taken from the
 * input's last 16 bytes.  Any answer is fine; a crash, a leak, a hang or
 * an allocation past the budgets is not.  Seeds: tests/fuzz/sym_seeds.c.
 * Built and run by `make fuzz` with ASan and UBSan.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../tools/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sym_options o = { .file_max = 1 << 20, .loaded_max = 64 << 20,
		                 .section_max = 16 << 20, .image_work_max = 1 << 20,
		                 .run_work_max = 1 << 20, .image_sites_max = 64, .sites_max = 64 };
	uint64_t at[8] = { 0x1008, 0x1100, 0x401010, 0x1139, 0x10000, 0x200000 };
	struct sym_site out[8];
	if (size >= 16) {
		memcpy(&at[6], data + size - 16, 8);
		memcpy(&at[7], data + size - 8, 8);
	}
	struct symbolizer *s = symbolizer_new(&o);
	if (!s)
		return 0;
	int rc = symbolize_elf_memory(s, data, size, at, 8, out);
	if (rc != 0 && rc != ENOENT && rc != ENOMEM)
		abort();
	for (int i = 0; rc == 0 && i < 8; i++)
		if (out[i].line < 0 || (!out[i].function && out[i].offset != at[i]) ||
		    (!out[i].file && out[i].line))
			abort();
	symbolizer_free(s);
	return 0;
}
