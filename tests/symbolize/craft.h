/* SPDX-License-Identifier: MIT */
/*
 * Crafted ELF files for t_symengine: a 64-bit little-endian shared object
 * with one PT_LOAD [0, text_end), a GNU build id note, a .text of
 * [CRAFT_TEXT, text_end) covered by one function symbol (crafted_fn), and
 * whatever other sections (DWARF) the test gives, byte for byte.
 */
#ifndef PT_TEST_SYMBOLIZE_CRAFT_H
#define PT_TEST_SYMBOLIZE_CRAFT_H

#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The DWARF numbers the crafted files use (<dwarf.h> is libdw's). */
#define CRAFT_TAG_compile_unit 0x11
#define CRAFT_TAG_subprogram 0x2e
#define CRAFT_CHILDREN_no 0
#define CRAFT_CHILDREN_yes 1
#define CRAFT_AT_name 0x03
#define CRAFT_AT_low_pc 0x11
#define CRAFT_AT_high_pc 0x12
#define CRAFT_AT_ranges 0x55
#define CRAFT_FORM_addr 0x01
#define CRAFT_FORM_data8 0x07
#define CRAFT_FORM_string 0x08
#define CRAFT_FORM_sec_offset 0x17

#define CRAFT_TEXT 0x1000u
#define CRAFT_SECTIONS_MAX 16

/* A growing byte buffer. */
struct bytes {
	unsigned char *p;
	size_t n, cap;
};

static inline void put(struct bytes *b, const void *data, size_t n)
{
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->n + n)
			cap *= 2;
		b->p = realloc(b->p, cap);
		if (!b->p)
			abort();
		b->cap = cap;
	}
	if (data)
		memcpy(b->p + b->n, data, n);
	else
		memset(b->p + b->n, 0, n);
	b->n += n;
}

static inline void put_u8(struct bytes *b, uint8_t v) { put(b, &v, 1); }
static inline void put_u16(struct bytes *b, uint16_t v) { put(b, &v, 2); }
static inline void put_u32(struct bytes *b, uint32_t v) { put(b, &v, 4); }
static inline void put_u64(struct bytes *b, uint64_t v) { put(b, &v, 8); }
static inline void put_str(struct bytes *b, const char *s) { put(b, s, strlen(s) + 1); }

static inline void put_uleb(struct bytes *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		put_u8(b, (uint8_t)(c | (v ? 0x80 : 0)));
	} while (v);
}

static inline void align_to(struct bytes *b, size_t a)
{
	while (b->n % a)
		put_u8(b, 0);
}

struct craft_section {
	const char *name;
	uint32_t type;
	uint64_t flags;
	const void *data;
	size_t size;
};

/* The file's bytes in *out (malloc'd), its build id (20 bytes) id, its
 * text cut in nfuncs functions of equal size: crafted_fn, then f1, f2... */
static inline size_t craft_elf_n(const unsigned char id[20], uint64_t text_end, size_t nfuncs,
                                 const struct craft_section *extra, int nextra,
                                 unsigned char **out)
{
	struct bytes f = { 0 }, shstr = { 0 }, strtab = { 0 }, symtab = { 0 }, note = { 0 };
	Elf64_Shdr sh[CRAFT_SECTIONS_MAX + 6];
	int n = 0;
	memset(sh, 0, sizeof sh);
	put_u8(&shstr, 0);
	put_u8(&strtab, 0);
	put_str(&strtab, "crafted_fn");
	put_u32(&note, 4), put_u32(&note, 20), put_u32(&note, NT_GNU_BUILD_ID);
	put(&note, "GNU", 4), put(&note, id, 20);

	put(&f, NULL, sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Phdr));
	n++; /* the null section */
#define CRAFT_ADD(nm, ty, fl, ad, dt, sz, lk, inf, al, es)                                   \
	do {                                                                                  \
		align_to(&f, (al) ? (al) : 1);                                                \
		sh[n] = (Elf64_Shdr){ .sh_name = (uint32_t)shstr.n, .sh_type = (ty),          \
			              .sh_flags = (fl), .sh_addr = (ad), .sh_offset = f.n,    \
			              .sh_size = (sz), .sh_link = (lk), .sh_info = (inf),     \
			              .sh_addralign = (al), .sh_entsize = (es) };             \
		put_str(&shstr, nm);                                                          \
		if ((ty) != SHT_NOBITS)                                                       \
			put(&f, dt, sz);                                                      \
		n++;                                                                          \
	} while (0)
	size_t note_off = 0;
	align_to(&f, 4);
	note_off = f.n;
	CRAFT_ADD(".note.gnu.build-id", SHT_NOTE, SHF_ALLOC, 0x200, note.p, note.n, 0, 0, 4, 0);
	int text = n;
	CRAFT_ADD(".text", SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, CRAFT_TEXT, NULL,
	          text_end - CRAFT_TEXT, 0, 0, 16, 0);
	Elf64_Sym none = { 0 };
	put(&symtab, &none, sizeof none);
	uint64_t each = (text_end - CRAFT_TEXT) / (nfuncs ? nfuncs : 1);
	for (size_t i = 0; i < nfuncs; i++) {
		char name[32];
		snprintf(name, sizeof name, "f%zu", i);
		Elf64_Sym fn = { .st_name = i ? (uint32_t)strtab.n : 1,
			         .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
			         .st_shndx = (uint16_t)text, .st_value = CRAFT_TEXT + i * each,
			         .st_size = each };
		if (i)
			put_str(&strtab, name);
		put(&symtab, &fn, sizeof fn);
	}
	CRAFT_ADD(".symtab", SHT_SYMTAB, 0, 0, symtab.p, symtab.n, (uint32_t)n + 1, 1, 8,
	          sizeof(Elf64_Sym));
	CRAFT_ADD(".strtab", SHT_STRTAB, 0, 0, strtab.p, strtab.n, 0, 0, 1, 0);
	for (int i = 0; i < nextra && i < CRAFT_SECTIONS_MAX; i++)
		CRAFT_ADD(extra[i].name, extra[i].type, extra[i].flags, 0, extra[i].data,
		          extra[i].size, 0, 0, 1, 0);
	int shstrndx = n;
	uint32_t shstr_name = (uint32_t)shstr.n;
	put_str(&shstr, ".shstrtab");
	sh[n++] = (Elf64_Shdr){ .sh_name = shstr_name, .sh_type = SHT_STRTAB, .sh_offset = f.n,
		                .sh_size = shstr.n, .sh_addralign = 1 };
	put(&f, shstr.p, shstr.n);
	align_to(&f, 8);
	size_t shoff = f.n;
	put(&f, sh, (size_t)n * sizeof(Elf64_Shdr));
#undef CRAFT_ADD

	Elf64_Ehdr eh = { .e_type = ET_DYN, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
		          .e_phoff = sizeof(Elf64_Ehdr), .e_shoff = shoff,
		          .e_ehsize = sizeof(Elf64_Ehdr), .e_phentsize = sizeof(Elf64_Phdr),
		          .e_phnum = 2, .e_shentsize = sizeof(Elf64_Shdr), .e_shnum = (uint16_t)n,
		          .e_shstrndx = (uint16_t)shstrndx };
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	Elf64_Phdr ph[2] = {
		{ .p_type = PT_LOAD, .p_flags = PF_R | PF_X, .p_memsz = text_end, .p_align = 0x1000 },
		{ .p_type = PT_NOTE, .p_flags = PF_R, .p_offset = note_off, .p_vaddr = 0x200,
		  .p_paddr = 0x200, .p_filesz = note.n, .p_memsz = note.n, .p_align = 4 },
	};
	memcpy(f.p, &eh, sizeof eh);
	memcpy(f.p + sizeof eh, ph, sizeof ph);
	free(shstr.p), free(strtab.p), free(symtab.p), free(note.p);
	*out = f.p;
	return f.n;
}

static inline size_t craft_elf(const unsigned char id[20], uint64_t text_end,
                               const struct craft_section *extra, int nextra, unsigned char **out)
{
	return craft_elf_n(id, text_end, 1, extra, nextra, out);
}

#endif
