/* SPDX-License-Identifier: MIT */
/*
 * The image (struct posixtrace_image) that holds an address of this
 * process, described as the library describes one (dl_iterate_phdr): for
 * t_symbolize and its helper sym_nopie, which describe themselves.
 */
#ifndef PT_TEST_SYMBOLIZE_IMAGE_H
#define PT_TEST_SYMBOLIZE_IMAGE_H

#include <elf.h>
#include <link.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <posixtrace.h>

struct image_query {
	uintptr_t address;
	struct posixtrace_image *img;
	int found;
};

/* The GNU build id among the notes of a PT_NOTE segment. */
static inline void image_build_id(const unsigned char *p, size_t size, size_t align,
                                  struct posixtrace_image *img)
{
	size_t at = 0;
	while (at + sizeof(ElfW(Nhdr)) <= size) {
		const ElfW(Nhdr) *n = (const void *)(p + at);
		size_t name = at + sizeof *n, desc = name + ((n->n_namesz + align - 1) & -align);
		if (desc + n->n_descsz > size)
			return;
		if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
		    memcmp(p + name, "GNU", 4) == 0 && n->n_descsz <= POSIXTRACE_BUILD_ID_MAX) {
			img->posixtrace_build_id_size = n->n_descsz;
			memcpy(img->posixtrace_build_id, p + desc, n->n_descsz);
			return;
		}
		at = desc + ((n->n_descsz + align - 1) & -align);
	}
}

static inline int image_of_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct image_query *q = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD)
			continue;
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (start < lo)
			lo = start;
		if (start + ph->p_memsz > hi)
			hi = start + ph->p_memsz;
	}
	if (q->address < lo || q->address >= hi)
		return 0;
	struct posixtrace_image *img = q->img;
	memset(img, 0, sizeof *img);
	img->posixtrace_start = lo;
	img->posixtrace_end = hi;
	img->posixtrace_load_bias = info->dlpi_addr;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE && !img->posixtrace_build_id_size)
			image_build_id((const void *)(info->dlpi_addr + ph->p_vaddr), ph->p_memsz,
			               ph->p_align == 8 ? 8 : 4, img);
	}
	if (info->dlpi_name && info->dlpi_name[0])
		strncpy(img->posixtrace_path, info->dlpi_name, sizeof img->posixtrace_path - 1);
	else if (readlink("/proc/self/exe", img->posixtrace_path, sizeof img->posixtrace_path - 1) < 0)
		return 0;
	q->found = 1;
	return 1;
}

/* 1: *img describes the image that holds address. */
static inline int image_of(const void *address, struct posixtrace_image *img)
{
	struct image_query q = { (uintptr_t)address, img, 0 };
	dl_iterate_phdr(image_of_object, &q);
	return q.found;
}

#endif
