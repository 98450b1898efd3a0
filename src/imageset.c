/* SPDX-License-Identifier: MIT */
/*
 * The executable images of this process as a set of IMAGE records
 * (layout.h), for streams that ask (images.c): the writer describes them
 * off the event path, when a thread starts a new chunk and
 * dl_iterate_phdr's dlpi_adds and dlpi_subs say objects were loaded or
 * unloaded since the set was last described (writer.c).  The keeper takes
 * the records out of what it copies into the log (pt_images_take), to
 * write them as IMAGES blocks (keeper.c, logwrite.c).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>
#include "imageset.h"
#include "records.h"
#include "recword.h"

/* ---- the writer's side: the process's images ---------------------------- */

static uint64_t generation(uint64_t adds, uint64_t subs) { return (adds << 24 ^ subs) + 1; }

static int has_counts(size_t size)
{
	return size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(unsigned long long);
}

static int generation_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	uint64_t *gen = arg;
	if (has_counts(size))
		*gen = generation(info->dlpi_adds, info->dlpi_subs);
	return 1; /* the counts are the same in every entry: the first is enough */
}

uint64_t pt_images_generation(void)
{
	uint64_t gen = 0;
	dl_iterate_phdr(generation_of, &gen);
	return gen;
}

/* The GNU build id among the notes of one PT_NOTE segment in memory. */
static void note_build_id(const unsigned char *p, size_t len, struct pt_image_rec *r)
{
	while (len >= sizeof(ElfW(Nhdr))) {
		ElfW(Nhdr) n;
		memcpy(&n, p, sizeof n);
		size_t name = (n.n_namesz + 3u) & ~3u, desc = (n.n_descsz + 3u) & ~3u;
		if (name > len - sizeof n || desc > len - sizeof n - name)
			return;
		const unsigned char *q = p + sizeof n;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && memcmp(q, "GNU", 4) == 0 &&
		    n.n_descsz > 0 && n.n_descsz <= PT_BUILD_ID_MAX) {
			memcpy(r->build_id, q + name, n.n_descsz);
			r->build_id_len = (uint8_t)n.n_descsz;
			return;
		}
		p += sizeof n + name + desc;
		len -= sizeof n + name + desc;
	}
}

/* The span and build id of one loaded object, from its program headers. */
static int image_of(const struct dl_phdr_info *info, struct pt_image_rec *r)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	memset(r, 0, sizeof *r);
	for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD) {
			lo = ph->p_vaddr < lo ? ph->p_vaddr : lo;
			hi = ph->p_vaddr + ph->p_memsz > hi ? ph->p_vaddr + ph->p_memsz : hi;
		} else if (ph->p_type == PT_NOTE && !r->build_id_len) {
			note_build_id((const unsigned char *)(info->dlpi_addr + ph->p_vaddr),
			              ph->p_memsz, r);
		}
	}
	if (lo >= hi)
		return 0;
	r->start = info->dlpi_addr + lo;
	r->end = info->dlpi_addr + hi;
	r->bias = info->dlpi_addr;
	return 1;
}

/* The path /proc/self/maps gives the mapping holding addr, into out
 * (size bytes); 0 when none fits.  The kernel's name, absolute, whatever
 * the name the object was loaded by. */
static int mapped_path(uintptr_t addr, char *out, size_t size)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	char buf[8192];
	size_t have = 0;
	int found = 0;
	for (;;) {
		ssize_t n = read(fd, buf + have, sizeof buf - 1 - have);
		if (n <= 0)
			break;
		have += (size_t)n;
		buf[have] = '\0';
		char *line = buf, *nl;
		while (!found && (nl = strchr(line, '\n'))) {
			*nl = '\0';
			unsigned long lo, hi;
			int at = 0;
			if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &at) == 2 && at > 0 &&
			    addr >= lo && addr < hi && line[at] == '/' && strlen(line + at) < size) {
				strcpy(out, line + at);
				found = 1;
			}
			line = nl + 1;
		}
		if (found)
			break;
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (have == sizeof buf - 1)
			have = 0; /* a line longer than the buffer names no path that fits */
	}
	close(fd);
	return found;
}

/* The file the kernel ran, when info is the program it loaded (its
 * program headers are the auxiliary vector's): /proc/self/exe names it
 * without a descriptor, so a process that has used up its descriptors
 * (RLIMIT_NOFILE) still names its program.  0 otherwise. */
static int program_path(const struct dl_phdr_info *info, char *out, size_t size)
{
	unsigned long phdr = getauxval(AT_PHDR);
	if (phdr == 0 || (uintptr_t)info->dlpi_phdr != phdr)
		return 0;
	ssize_t n = readlink("/proc/self/exe", out, size);
	if (n <= 0 || (size_t)n >= size || out[0] != '/')
		return 0;
	out[n] = '\0';
	return 1;
}

/* The file of an object: the name it was loaded by when that is a path
 * from the root; else (the program, an object loaded by a relative path)
 * the program's link or the file the kernel gives its first mapping; none
 * for an object without a file (the vDSO). */
static const char *path_of(const struct dl_phdr_info *info, uintptr_t start, char *buf,
                           size_t size)
{
	const char *name = info->dlpi_name;
	if (name && name[0] == '/')
		return name;
	if (program_path(info, buf, size))
		return buf;
	return mapped_path(start, buf, size) ? buf : NULL;
}

/* Called for each image, with its record (raw left 0) and path
 * (r->path_len bytes), count left 0; nonzero stops the calls (the walk
 * goes on counting). */
typedef int pt_image_fn(const struct pt_image_rec *r, const char *path, void *arg);

struct walk {
	pt_image_fn *fn;
	void *arg;
	uint32_t index;
	int stopped, counted;
	uint64_t adds, subs;
	char path[PATH_MAX];
};

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *wk = arg;
	if (has_counts(size)) {
		wk->counted = 1;
		wk->adds = info->dlpi_adds;
		wk->subs = info->dlpi_subs;
	}
	struct pt_image_rec r;
	if (!image_of(info, &r))
		return 0;
	/* Counted only when it has a path: a maps lookup for each. */
	if (!(info->dlpi_name && info->dlpi_name[0] == '/') && info->dlpi_name[0] &&
	    strncmp(info->dlpi_name, "linux-", 6) == 0)
		return 0; /* the vDSO */
	uint32_t index = wk->index++;
	if (wk->stopped)
		return 0;
	const char *path = path_of(info, r.start, wk->path, sizeof wk->path);
	if (!path)
		path = "";
	size_t len = strlen(path);
	if (len > PT_IMAGE_PATH_MAX) {
		len = PT_IMAGE_PATH_MAX;
		r.flags |= PT_IMAGE_PATH_CUT;
	}
	r.index = (uint16_t)index;
	r.path_len = (uint16_t)len;
	wk->stopped = wk->fn(&r, path, wk->arg) != 0;
	return 0;
}

/* ---- the keeper's side: out of the stage, into the log ------------------ */

uint32_t pt_images_take(unsigned char *rec, uint32_t len, uint32_t max_data,
                        const struct pt_owner *start, pt_image_taken_fn *fn, void *arg)
{
	struct pt_rec_ctx ctx = {.owner = *start, .cpu = PT_CPU_NONE};
	struct pt_rec r;
	uint32_t off = 0, out = 0;
	while (off < len && pt_rec_at(rec, off, len, max_data, &r) != PT_RK_BAD) {
		if (r.kind == PT_RK_IMAGE) {
			struct pt_image_rec img;
			memcpy(&img, rec + off + PT_REC_HDR, sizeof img);
			uint32_t room = r.len - (uint32_t)sizeof img;
			if (img.path_len > room)
				img.path_len = (uint16_t)room;
			if (img.build_id_len > PT_BUILD_ID_MAX)
				img.build_id_len = PT_BUILD_ID_MAX;
			fn(ctx.owner.pid, &img, (const char *)rec + off + PT_REC_HDR + sizeof img, arg);
		} else {
			pt_rec_apply(&ctx, &r, rec + off);
			if (out != off)
				memmove(rec + out, rec + off, r.size);
			out += r.size;
		}
		off += r.size;
	}
	/* What does not decode stays as it was, for the log's checks. */
	if (off < len && out != off)
		memmove(rec + out, rec + off, len - off);
	return out + (len - off);
}

/* ---- the set as records, kept to be written again ----------------------- */

struct encoding {
	unsigned char *buf;
	uint32_t size, used, count;
};

static int encode_one(const struct pt_image_rec *r, const char *path, void *arg)
{
	struct encoding *e = arg;
	uint32_t len = (uint32_t)sizeof *r + r->path_len;
	uint32_t size = (uint32_t)pt_record_size(len);
	if (size > e->size - e->used)
		return 1; /* the images past the buffer are not described */
	unsigned char *p = e->buf + e->used;
	uint64_t w0 = pt_rec_word0(0, PT_ID_IMAGE, len, 0), w1 = 0;
	memset(p, 0, size);
	memcpy(p, &w0, sizeof w0);
	memcpy(p + 8, &w1, sizeof w1);
	memcpy(p + PT_REC_HDR, r, sizeof *r);
	memcpy(p + PT_REC_HDR + sizeof *r, path, r->path_len);
	e->used += size;
	e->count++;
	return 0;
}

/* Bytes n of value v at offset off of the pt_image_rec of every record of
 * buf[0, len) (made by encode_one). */
static void set_each(unsigned char *buf, uint32_t len, size_t off, const void *v, size_t n)
{
	for (uint32_t at = 0; at < len;) {
		uint64_t w0;
		memcpy(&w0, buf + at, sizeof w0);
		memcpy(buf + at + PT_REC_HDR + off, v, n);
		at += (uint32_t)pt_rec_size(w0);
	}
}

uint32_t pt_images_encode(unsigned char *buf, uint32_t size, struct pt_images_read *out)
{
	struct encoding e = {.buf = buf, .size = size};
	struct walk wk = {.fn = encode_one, .arg = &e};
	/* One walk: the loader's lock is held through it, so the records,
	 * their count and the counts of loads and unloads are of one moment. */
	dl_iterate_phdr(each_object, &wk);
	uint16_t count = wk.index > UINT16_MAX ? UINT16_MAX : (uint16_t)wk.index;
	set_each(buf, e.used, offsetof(struct pt_image_rec, count), &count, sizeof count);
	out->gen = wk.counted ? generation(wk.adds, wk.subs) : 0;
	out->unloads = wk.subs;
	out->count = e.count;
	return e.used;
}

void pt_images_stamp(unsigned char *buf, uint32_t len, uint64_t key)
{
	set_each(buf, len, offsetof(struct pt_image_rec, raw), &key, sizeof key);
}
