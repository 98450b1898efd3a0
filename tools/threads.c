/* SPDX-License-Identifier: MIT */
/*
 * A table from (host, pid, thread) to a dense index, for per-thread data kept in
 * plain arrays (stats counts, Chrome track numbers, open begin events).  A
 * log may hold thousands of threads and millions of events, so lookups are
 * hashed rather than a walk over every thread seen.  The keys come from a
 * log anyone may have written: the hash is SipHash-1-3 with a key drawn
 * from getrandom at the first use, so that no log can make its keys collide
 * (pids k * 4096 all landed in one slot of the unkeyed hash before).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "tool.h"

static uint64_t sip_key[2];
static bool sip_keyed;

/* getrandom can only fail on kernels older than 3.17 or when interrupted:
 * then the time and the pid, which a log's author cannot know in advance. */
static void sip_init(void)
{
	if (getrandom(sip_key, sizeof sip_key, 0) != (ssize_t)sizeof sip_key) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sip_key[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)getpid();
		sip_key[1] = (uint64_t)ts.tv_sec * 0xc2b2ae3d27d4eb4full ^ (uintptr_t)&ts;
	}
	sip_keyed = true;
}

#define ROTL(x, b) (((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND(v0, v1, v2, v3)                                                   \
	do {                                                                       \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);          \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                             \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                             \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);          \
	} while (0)

/* SipHash-1-3 of the two words a and b (16 bytes of input). */
uint64_t keyed_hash2(uint64_t a, uint64_t b)
{
	if (!sip_keyed)
		sip_init();
	uint64_t v0 = sip_key[0] ^ 0x736f6d6570736575ull, v1 = sip_key[1] ^ 0x646f72616e646f6dull;
	uint64_t v2 = sip_key[0] ^ 0x6c7967656e657261ull, v3 = sip_key[1] ^ 0x7465646279746573ull;
	const uint64_t m[3] = {a, b, 16ull << 56};
	for (int i = 0; i < 3; i++) {
		v3 ^= m[i];
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m[i];
	}
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

static size_t hash_key(uint32_t host, pid_t pid, unsigned long thread)
{
	return (size_t)keyed_hash2((uint64_t)host << 32 | (uint32_t)pid, (uint64_t)thread);
}

static void place(struct thread_table *t, size_t index)
{
	size_t mask = t->nslots - 1;
	size_t s = hash_key(t->keys[index].host, t->keys[index].pid, t->keys[index].thread) & mask;
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

static bool key_is(const struct thread_key *k, uint32_t host, pid_t pid, unsigned long thread)
{
	return k->pid == pid && k->thread == thread && k->host == host;
}

size_t thread_table_find(const struct thread_table *t, uint32_t host, pid_t pid,
                         unsigned long thread)
{
	if (t->last && key_is(&t->keys[t->last - 1], host, pid, thread))
		return t->last - 1;
	if (t->nslots) {
		size_t mask = t->nslots - 1;
		for (size_t s = hash_key(host, pid, thread) & mask; t->slots[s]; s = (s + 1) & mask) {
			const struct thread_key *k = &t->keys[t->slots[s] - 1];
			if (key_is(k, host, pid, thread))
				return t->slots[s] - 1;
		}
	}
	return SIZE_MAX;
}

size_t thread_table_index(struct thread_table *t, uint32_t host, pid_t pid, unsigned long thread,
                          bool *added)
{
	if (added)
		*added = false;
	size_t found = thread_table_find(t, host, pid, thread);
	if (found != SIZE_MAX) {
		t->last = found + 1;
		return found;
	}
	if (t->count == t->key_cap) {
		t->key_cap = t->key_cap ? 2 * t->key_cap : 64;
		t->keys = xrealloc(t->keys, t->key_cap * sizeof *t->keys);
	}
	size_t index = t->count++;
	t->keys[index] = (struct thread_key){host, pid, thread};
	if (2 * t->count > t->nslots)
		grow_slots(t); /* places every key, the new one too */
	else
		place(t, index);
	if (added)
		*added = true;
	t->last = index + 1;
	return index;
}

size_t thread_table_of(struct thread_table *t, const struct trace_event *ev, bool *added)
{
	return thread_table_index(t, ev->host, ev->info.posix_pid,
	                          (unsigned long)ev->info.posix_thread_id, added);
}

void grow_zeroed(void **array, size_t *cap, size_t index, size_t elem)
{
	if (index < *cap)
		return;
	size_t old = *cap, n = old ? 2 * old : 64;
	while (n <= index)
		n *= 2;
	*array = xrealloc(*array, n * elem);
	memset((char *)*array + old * elem, 0, (n - old) * elem);
	*cap = n;
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
	if (x->host != y->host)
		return x->host < y->host ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return 0;
}
