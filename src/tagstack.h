/* SPDX-License-Identifier: MIT */
/*
 * A Treiber stack in shared memory (the stream's free chunks, stream.c; its
 * free lanes, lanes.c): the top word holds a node number in its low half
 * and a tag in its high half, bumped by every change, so that a node
 * popped and pushed back between a load and a CAS is noticed.  Each node
 * has a 32-bit link word; what a number means, and which numbers are no
 * node (the end, or a scribbled value out of bounds), is the caller's.
 */
#ifndef PT_TAGSTACK_H
#define PT_TAGSTACK_H

#include <stdatomic.h>
#include <stdint.h>

static inline uint64_t pt_tagstack_top(uint64_t old, uint32_t node)
{
	return (uint64_t)node | (((old >> 32) + 1) << 32);
}

/* Pops the top node into *node: 1, or 0 when link(top, arg) says the top
 * is no node.  The load and the CAS pair with the release CAS of
 * pt_tagstack_push: the node's link, and whatever its pusher stored
 * before pushing, are seen. */
static inline int pt_tagstack_pop(_Atomic uint64_t *top_word,
                                  _Atomic uint32_t *(*link)(uint32_t node, const void *arg),
                                  const void *arg, uint32_t *node)
{
	uint64_t top = atomic_load_explicit(top_word, memory_order_acquire);
	for (;;) {
		_Atomic uint32_t *l = link((uint32_t)top, arg);
		if (!l)
			return 0;
		uint32_t next = atomic_load_explicit(l, memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(top_word, &top, pt_tagstack_top(top, next),
		                                          memory_order_acq_rel, memory_order_acquire)) {
			*node = (uint32_t)top;
			return 1;
		}
	}
}

/* Pushes node, whose link word is *link.  Release: pairs with the acquire
 * load and CAS of pt_tagstack_pop. */
static inline void pt_tagstack_push(_Atomic uint64_t *top_word, _Atomic uint32_t *link,
                                    uint32_t node)
{
	uint64_t top = atomic_load_explicit(top_word, memory_order_relaxed);
	do
		atomic_store_explicit(link, (uint32_t)top, memory_order_relaxed);
	while (!atomic_compare_exchange_weak_explicit(top_word, &top, pt_tagstack_top(top, node),
	                                              memory_order_release, memory_order_relaxed));
}

#endif
