/* SPDX-License-Identifier: MIT */
/*
 * The library's life in every process that loads it: at load (or at the
 * first call that needs it, whichever comes first) the process's state is
 * set up and what an exec kept or a parent passed down is adopted; in a
 * fork child, the streams traced with inheritance are kept and the rest is
 * let go.  The API's entry points call pt_init(); nothing below them does.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "adopt.h"
#include "channel.h"
#include "handle.h"
#include "join.h"
#include "lifecycle.h"
#include "pcb.h"
#include "process.h"
#include "registry.h"
#include "slots.h"
#include "stream.h"
#include "writer.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static void pt_fork_child(void);

static void do_init(void)
{
	pt_proc_setup();
	pt_proc.fork_child = pt_fork_child;
	/* Without a key (EAGAIN: the process took all PTHREAD_KEYS_MAX), events
	 * are still recorded; an exiting thread's lanes then go back only when
	 * the process ends.  Setting another library's key would be worse. */
	pt_proc.have_thread_key = pthread_key_create(&pt_proc.thread_key, pt_thread_exit) == 0;
	pthread_atfork(pt_take_offers_before_fork, NULL, pt_fork_child);
	pt_adopt_at_load();
}

void pt_init(void) { pthread_once(&init_once, do_init); }

__attribute__((constructor)) static void pt_constructor(void) { pt_init(); }

/* ---- fork ------------------------------------------------------------ */

/* Whether the child keeps recording into the stream of this slot:
 * POSIX_TRACE_INHERITED, and not shut down. */
static int child_keeps(struct pt_attached *a, struct pt_map *m)
{
	return a->traced && m->inherited &&
	       atomic_load_explicit(&pt_hdr(m)->state, memory_order_relaxed) != PT_ST_DEAD;
}

static int sort_streams_for_child(void)
{
	int kept = 0;
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
		if (!m)
			continue;
		if (child_keeps(a, m)) {
			if (m != &a->own) { /* the controller's own stream: now the child's */
				a->own = *m;
				pt_handle_forget_map(m);
			}
			a->gen = ++pt_proc.next_gen;
			/* A thread of the parent may have been describing its images. */
			atomic_store_explicit(&a->images_busy, 0, memory_order_relaxed);
			pt_publish_map(a, &a->own);
			kept = 1;
			continue;
		}
		if (m == &a->own)
			pt_stream_unmap(&a->own);
		pt_slot_forget_exec_token(i);
		pt_unpublish_map(a, memory_order_relaxed);
	}
	return kept;
}

/* A block and channel of its own: the parent's are the parent's. */
static void new_identity_objects(void)
{
	if (pt_proc.pcb != &pt_proc.pcb_fallback)
		munmap(pt_proc.pcb, sizeof *pt_proc.pcb);
	if (pt_proc.pcb_fd >= 0)
		close(pt_proc.pcb_fd);
	if (pt_proc.chan_rx >= 0)
		close(pt_proc.chan_rx);
	if (pt_proc.chan_tx >= 0)
		close(pt_proc.chan_tx);
	pt_proc.chan_rx = pt_proc.chan_tx = -1;
	pt_set_pcb(&pt_proc.pcb_fallback);
	pt_proc.pcb_fd = -1;
	memset(&pt_proc.pcb_fallback, 0, sizeof pt_proc.pcb_fallback);
	pt_channel_create(&pt_proc.chan_rx, &pt_proc.chan_tx);
	if (pt_pcb_create() != 0)
		pt_pcb_init_own(pt_proc.pcb);
}

/*
 * The child of fork() keeps the streams traced with inheritance (recording
 * from lanes of its own) and drops the others; the parent's trace stream
 * identifiers are not valid in it.  Only the forking thread exists in the
 * child.  Runs as the fork handler, or from the child's first event when a
 * fork handler that ran before the library's posted one (the fork word).
 */
static void pt_fork_child(void)
{
	if (pt_forking_keeper)
		return; /* the keeper sets itself up (keeper.c) */
	if (pt_proc.wipe_on_fork && *pt_proc.fork_word)
		return;
	pt_proc_lock_init();
	pt_proc_identify();
	int kept = sort_streams_for_child();
	pt_filter_follow();
	if (!kept)
		pt_registry_copy_after_fork();
	new_identity_objects();
	for (int i = 0; i < PT_MAX_STREAMS; i++) {
		struct pt_attached *a = &pt_proc.attached[i];
		struct pt_map *m = atomic_load_explicit(&a->map, memory_order_relaxed);
		if (!m)
			continue;
		struct pt_pcb_slot *s = &pt_proc.pcb->slots[i];
		atomic_store_explicit(&s->state, PT_SLOT_ATTACHED, memory_order_relaxed);
		pt_slot_keep_across_exec(i, a->own.fd);
		pt_record_slot_fd(i, a->exec_token);
		a->offer_gen = atomic_load_explicit(&s->gen, memory_order_relaxed);
		pt_arm(i, 1);
	}
	pt_forget_other_threads();
	pt_handles_after_fork();
	if (pt_proc.wipe_on_fork)
		*pt_proc.fork_word = pt_fork_word_value();
}
