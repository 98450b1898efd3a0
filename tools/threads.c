/* SPDX-License-Identifier: MIT */
/*
 * A table from (pid, thread) to a dense index, for per-thread data kept in
 * plain arrays (stats counts, Chrome track numbers, open begin events).  A
 * log may hold thousands of threads and millions of events, so lookups are
 * hashed rather than a walk over every thread seen.
 */
#include <stdlib.h>
#include <string.h>

#include "tool.h"

static size_t hash_key(pid_t pid, unsigned long thread)
{
	uint64_t h = ((uint64_t)thread ^ ((uint64_t)(uint32_t)pid << 32)) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 20);
}

static void place(struct thread_table *t, size_t index)
{
	size_t mask = t->nslots - 1;
	size_t s = hash_key(t->keys[index].pid, t->keys[index].thread) & mask;
	while (t->slots[s])
		s = (s + 1) & mask;
	t->slots[s] = (uint32_t)index + 1;
}

/* Kept at most half full, so probes stay short. */
static void grow_slots(struct thread_table *t)
{
	free(t->slots);
	t->nslots = t->nslots ? t->nslots * 2 : 64;
	t->slots = xmalloc(t->nslots * sizeof *t->slots);
	memset(t->slots, 0, t->nslots * sizeof *t->slots);
	for (size_t i = 0; i < t->count; i++)
		place(t, i);
}

size_t thread_table_index(struct thread_table *t, pid_t pid, unsigned long thread, bool *added)
{
	if (added)
		*added = false;
	if (t->nslots) {
		size_t mask = t->nslots - 1;
		for (size_t s = hash_key(pid, thread) & mask; t->slots[s]; s = (s + 1) & mask) {
			const struct thread_key *k = &t->keys[t->slots[s] - 1];
			if (k->pid == pid && k->thread == thread)
				return t->slots[s] - 1;
		}
	}
	if (t->count == t->key_cap) {
		t->key_cap = t->key_cap ? 2 * t->key_cap : 64;
		t->keys = xrealloc(t->keys, t->key_cap * sizeof *t->keys);
	}
	size_t index = t->count++;
	t->keys[index] = (struct thread_key){pid, thread};
	if (2 * t->count > t->nslots)
		grow_slots(t); /* places every key, the new one too */
	else
		place(t, index);
	if (added)
		*added = true;
	return index;
}

void thread_table_free(struct thread_table *t)
{
	free(t->keys);
	free(t->slots);
	memset(t, 0, sizeof *t);
}

int compare_thread_keys(const void *a, const void *b)
{
	const struct thread_key *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}
