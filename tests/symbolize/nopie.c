/* SPDX-License-Identifier: MIT */
/*
 * sym_nopie, for t_symbolize: a program linked at fixed addresses (not a
 * PIE: load bias 0).  Writes to stdout its own image, the return address
 * of a call in called_here() and that call's line, then exits.
 */
#include <stdio.h>

#include "image.h"

__attribute__((noinline)) void *return_address(void)
{
	return __builtin_return_address(0);
}

__attribute__((noinline)) void *called_here(int *line)
{
	void *ret = return_address(); *line = __LINE__;
	__asm__ volatile(""); /* not a tail call */
	return ret;
}

int main(void)
{
	struct posixtrace_image img;
	void *(*volatile call)(int *) = called_here;
	int line;
	uint64_t address = (uintptr_t)call(&line);
	if (!image_of((void *)(uintptr_t)address, &img))
		return 1;
	return fwrite(&img, sizeof img, 1, stdout) == 1 && fwrite(&address, sizeof address, 1, stdout) == 1 &&
	               fwrite(&line, sizeof line, 1, stdout) == 1
	           ? 0
	           : 1;
}
