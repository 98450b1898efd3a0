/* SPDX-License-Identifier: MIT */
/*
 * Event names.  The system events' fixed names, and the registry that maps
 * user names to ids for a process, shared by a process tree traced with
 * inheritance so that a name means one id in all of it (a sealed memfd kept
 * across fork and exec).  Every name is copied into each stream the process
 * records into, so readers and logs know every id a process posts.
 *
 * Registration is lock-free, so that no process dying at any instant can
 * block another: a name claims an entry with fetch_add, is written, then
 * published, then made the name's id by a CAS into the hash index.  Two
 * processes registering one name at the same time may both claim entries;
 * the CAS decides which is the id, both return it, and the other entry is
 * never posted.  It is still copied into streams (a name of two ids):
 * readers take ids in order up to the first unnamed one.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include "pcb.h"
#include "process.h"
#include "registry.h"
#include "stream.h"
#include "sysnames.h"
#include "token.h"

static int registry_valid(const struct pt_registry *reg)
{
	return reg->magic == PT_REGISTRY_MAGIC && reg->size == sizeof *reg;
}

static void registry_init(struct pt_registry *reg)
{
	reg->magic = PT_REGISTRY_MAGIC;
	reg->size = sizeof *reg;
	atomic_init(&reg->next_name, 1);
}

/* A new registry for this process. */
int pt_registry_create(void)
{
	int fd;
	struct pt_registry *reg = pt_sealed_object("posixtrace-names", sizeof *reg, &fd);
	if (!reg)
		return ENOMEM;
	registry_init(reg);
	pt_proc.reg = reg;
	pt_proc.reg_fd = fd;
	return 0;
}

/* Maps a registry from a descriptor (a token) only when this process may
 * open its file and its size can no longer change. */
int pt_registry_map_fd(int fd, struct pt_registry **out)
{
	void *p;
	int err = pt_token_map_sealed(fd, sizeof **out, &p);
	if (err)
		return err;
	struct pt_registry *reg = p;
	if (!registry_valid(reg)) {
		munmap(reg, sizeof *reg);
		return EINVAL;
	}
	*out = reg;
	return 0;
}

/* A fork child that is not traced with inheritance gets its own registry,
 * a copy of its parent's: the two processes' names are independent. */
void pt_registry_copy_after_fork(void)
{
	int fd;
	struct pt_registry *old = pt_proc.reg;
	struct pt_registry *reg = pt_sealed_object("posixtrace-names", sizeof *reg, &fd);
	if (!reg)
		return;
	memcpy(reg, old, sizeof *reg);
	if (old != &pt_proc.reg_fallback)
		munmap(old, sizeof *old);
	if (pt_proc.reg_fd >= 0)
		close(pt_proc.reg_fd);
	pt_proc.reg = reg;
	pt_proc.reg_fd = fd;
}

static uint32_t name_hash(const char *name)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	for (size_t i = 0; i < TRACE_EVENT_NAME_MAX && name[i]; i++)
		h = (h ^ (unsigned char)name[i]) * 16777619u;
	return h;
}

/* Whether slot value v_untrusted is a published entry named `name`. */
static int entry_is(struct pt_registry *reg, uint32_t v_untrusted, const char *name)
{
	const char *entry = pt_reg_entry(reg, v_untrusted);
	/* Pairs with the release store of name_valid in reg_register. */
	return entry && atomic_load_explicit(&reg->name_valid[v_untrusted], memory_order_acquire) &&
	       strncmp(entry, name, PT_NAME_SIZE) == 0;
}

/* Walks the probe sequence of `name`: the entry that is its id, or 0 at
 * the first empty slot after entry `mine` (0: none of ours to place) has
 * been placed there by CAS, or when the index is full. */
static uint32_t probe(struct pt_registry *reg, const char *name, uint32_t mine)
{
	uint32_t p = name_hash(name);
	for (uint32_t n = 0; n < PT_REG_HASH_SLOTS; n++, p++) {
		_Atomic uint16_t *slot = &reg->by_hash[p & (PT_REG_HASH_SLOTS - 1)];
		/* Pairs with the CAS below (an entry is published before its
		 * slot holds it). */
		uint16_t v_untrusted = atomic_load_explicit(slot, memory_order_acquire);
		if (v_untrusted == 0) {
			if (!mine)
				return 0;
			/* Release: the entry's name and name_valid before the slot;
			 * acquire on failure: the winner's entry, to compare. */
			if (atomic_compare_exchange_strong_explicit(slot, &v_untrusted, (uint16_t)mine,
			                                            memory_order_acq_rel,
			                                            memory_order_acquire))
				return mine;
		}
		if (entry_is(reg, v_untrusted, name))
			return v_untrusted; /* checked by entry_is */
	}
	return 0;
}

static trace_event_id_t reg_register(struct pt_registry *reg, const char *name)
{
	uint32_t known = probe(reg, name, 0);
	if (known)
		return PT_USER_FIRST + known;
	/* An index only (entry i is published by name_valid[i]): relaxed
	 * would do. */
	uint32_t i = atomic_fetch_add_explicit(&reg->next_name, 1, memory_order_acq_rel);
	if (i == 0 || i >= TRACE_USER_EVENT_MAX) {
		atomic_store_explicit(&reg->next_name, TRACE_USER_EVENT_MAX, memory_order_relaxed);
		return POSIX_TRACE_UNNAMED_USEREVENT;
	}
	size_t len = strnlen(name, TRACE_EVENT_NAME_MAX);
	memcpy(reg->names[i], name, len);
	reg->names[i][len] = '\0';
	/* Pairs with the acquire loads of name_valid in entry_is and pt_reg_name. */
	atomic_store_explicit(&reg->name_valid[i], 1, memory_order_release);
	uint32_t id = probe(reg, name, i);
	return id ? PT_USER_FIRST + id : PT_USER_FIRST + i;
}

/* The name of a user id in a registry other processes write (untrusted). */
int pt_reg_name(struct pt_registry *reg, trace_event_id_t id, char *out)
{
	if (id <= PT_USER_FIRST || id >= PT_NEVENT_IDS)
		return EINVAL;
	uint32_t i = id - PT_USER_FIRST;
	/* Pairs with the release store of name_valid in reg_register. */
	if (!atomic_load_explicit(&reg->name_valid[i], memory_order_acquire))
		return EINVAL;
	memcpy(out, reg->names[i], PT_NAME_SIZE);
	out[TRACE_EVENT_NAME_MAX] = '\0';
	return 0;
}

uint32_t pt_reg_count(struct pt_registry *reg)
{
	/* An index only (see reg_register): relaxed would do. */
	uint32_t n = atomic_load_explicit(&reg->next_name, memory_order_acquire);
	return n > TRACE_USER_EVENT_MAX ? TRACE_USER_EVENT_MAX : n;
}

/* Copies the names of a registry from entry `from` into a stream's table. */
void pt_reg_to_stream(struct pt_registry *reg, const struct pt_map *m, uint32_t from)
{
	uint32_t n = pt_reg_count(reg);
	char name[PT_NAME_SIZE];
	for (uint32_t i = from ? from : 1; i < n; i++)
		if (pt_reg_name(reg, PT_USER_FIRST + i, name) == 0)
			pt_stream_set_name(m, PT_USER_FIRST + i, name);
}

/* A process whose registry is still empty (it has just started, or just
 * exec'd) takes the names of a stream it joins, so ids keep their meaning. */
void pt_reg_adopt_stream_names(struct pt_registry *reg, const struct pt_map *m)
{
	if (pt_reg_count(reg) > 1)
		return;
	char name[PT_NAME_SIZE];
	for (uint32_t i = 1; i < TRACE_USER_EVENT_MAX; i++) {
		if (pt_stream_get_name(m, PT_USER_FIRST + i, name) != 0)
			break;
		if (reg_register(reg, name) != PT_USER_FIRST + i)
			break;
	}
}

/* Every name registered so far goes into a stream the process records
 * into.  Caller holds pt_proc.lock. */
void pt_seed_names(struct pt_attached *a)
{
	struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
	if (!m || !a->traced)
		return;
	uint32_t n = pt_reg_count(pt_proc.reg);
	if (n != a->names_synced)
		pt_reg_to_stream(pt_proc.reg, m, 1);
	a->names_synced = n;
}

static void sync_names(void)
{
	pthread_mutex_lock(&pt_proc.lock);
	for (int i = 0; i < PT_MAX_STREAMS; i++)
		pt_seed_names(&pt_proc.attached[i]);
	pthread_mutex_unlock(&pt_proc.lock);
}

/* Registers `name` in a registry (NULL: this process's). */
int pt_register_name_in(struct pt_registry *reg, const char *name, trace_event_id_t *id)
{
	if (!name || !id)
		return EINVAL;
	if (strnlen(name, TRACE_EVENT_NAME_MAX + 1) > TRACE_EVENT_NAME_MAX)
		return ENAMETOOLONG;
	if (strcmp(name, PT_UNNAMED_NAME) == 0) {
		*id = POSIX_TRACE_UNNAMED_USEREVENT;
		return 0;
	}
	*id = reg_register(reg ? reg : pt_proc.reg, name);
	/* Also when the name was known: another process of the tree may
	 * have registered it, into streams this process does not share. */
	if (!reg)
		sync_names();
	return 0;
}

/* The list: system events, the unnamed user event, then the names the
 * stream knows, in id order. */
trace_event_id_t pt_typelist_id(uint32_t pos)
{
	if (pos < PT_SYS_LAST)
		return PT_SYS_FIRST + pos;
	if (pos == PT_SYS_LAST)
		return POSIX_TRACE_UNNAMED_USEREVENT;
	return PT_USER_FIRST + 1 + (pos - PT_SYS_LAST - 1);
}
