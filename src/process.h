/* SPDX-License-Identifier: MIT */
/*
 * The process side of the library: the streams this process records into,
 * its control block, channel and name registry, its threads, and what a
 * fork child and an exec'd image keep (process.c, join.c, pcb.c,
 * channel.c, registry.c).
 */
#ifndef PT_PROCESS_H
#define PT_PROCESS_H

#include "stream.h"

/* A stream this process records into, by slot (the slot of its pcb and its
 * bit in the armed word). */
struct pt_attached {
	/* A line's start: the recording path's fields below share one line in
	 * every slot, and a slot's index is a shift. */
	_Alignas(64) _Atomic(struct pt_map *) map; /* NULL when the slot is free */
	/* Copies of what the recording path reads of the map, on the same
	 * line as map; written before map is published.  hdr is published
	 * too (pt_publish_map), and while map is NULL it is
	 * &pt_unmapped_hdr, a header that says SUSPENDED: the inline record
	 * loads hdr alone and its state test sends an unmapped slot to the
	 * general path. */
	_Atomic(struct pt_stream_hdr *) hdr;
	/* Payloads shorter than this take the recording path's inline record
	 * (writer.c, append_fast): what clock, max_data and traced allow, in
	 * one compare (with the length's width: no load into a register
	 * first); 0: none does. */
	uint64_t fast_len;
	uint32_t clock;
	uint32_t max_data;
	uint64_t gen;                 /* changes each time the slot is reused */
	uint32_t offer_gen;           /* pcb slot gen this mapping came from */
	int traced;                   /* this process records into it */
	uint32_t names_synced;        /* registry entries copied into the stream */
	struct pt_map own;            /* storage for a stream this process joined */
	/* The token by which the stream crosses this process's exec and goes
	 * to the children it starts by exec (token.h); -1 for none. */
	int exec_token;
	/* Events posted while the slot was armed and its stream not mapped yet
	 * (another thread was mapping it): counted lost in the stream once it
	 * is (pt_count_unmapped_losses).  A number only: relaxed. */
	_Atomic uint64_t unmapped_lost;
	/* The images this process describes to the stream (writer.c,
	 * imageset.c): the generation of its set (0: none yet) and the
	 * slot's gen it was made for; the set as records (PT_IMAGES_COPY_MAX
	 * bytes mapped once), images_len of them, and where the next chunk
	 * goes on; the set's key and the objects unloaded when it was read
	 * (encode_images); who is describing now (one thread at a time: the
	 * plain fields are touched only by it). */
	_Atomic uint64_t images_gen;
	_Atomic uint64_t images_for;
	unsigned char *images_recs;
	uint32_t images_len;
	uint32_t images_next;
	uint64_t images_key;
	uint64_t images_unloads;
	_Atomic uint32_t images_busy;
	_Atomic uint32_t images_whole; /* the set was described whole (a hint) */
};

/* At most this much of a process's set is described (some 2,000 images
 * with paths of 100 bytes); the images past it are left out. */
#define PT_IMAGES_COPY_MAX (256u << 10)

struct pt_thread;

struct pt_process {
	/* This process's control block (pcb_fallback until it exists); its
	 * armed word is what posix_trace_event() tests. */
	_Alignas(128) struct pt_pcb *pcb;
	/* Zeroed in a fork child by the kernel (MADV_WIPEONFORK): a writer
	 * that finds it zero is in a child whose fork handler has not run.
	 * Outside one it holds pt_fork_word_value(): the recording path's one
	 * test (== PT_FORK_WORD_FAST) also says writers need no fence. */
	volatile uint64_t *fork_word;
	/* The word beside the fork word (wiped with it): an armed word the
	 * recording path found with one bit set while the fork word said
	 * PT_FORK_WORD_FAST (record_general keeps it).  An armed word equal
	 * to it takes the inline record with one compare; 0 (and where no
	 * page is wiped on fork, always): none yet. */
	_Atomic uint64_t *fast_armed;
	/* Where, from the thread pointer, each thread's CPU number is (an
	 * int32): the cpu_id of its rseq area, or a -1 of its own where glibc
	 * registers none (pt_cpu_now, thread.h). */
	intptr_t cpu_off;
	int pcb_fd;
	struct pt_registry *reg;       /* names (reg_fallback until it exists) */
	int reg_fd;
	int chan_rx, chan_tx;          /* the channel streams are handed over on */
	uint64_t owner_token;          /* pid << 32 | start time: owner of lanes */
	/* Its pid namespace (the inode of /proc/self/ns/pid, 0 unknown), and
	 * whether /proc shows that namespace's pids: the pid in an owner token
	 * means something to this process only then (pt_owner_alive). */
	uint64_t pidns;
	int proc_is_ours;
	int wipe_on_fork;              /* fork_word is zeroed in a fork child */
	/* lifecycle.c's pt_fork_child, for a writer that finds the fork word
	 * wiped before the library's fork handler ran. */
	void (*fork_child)(void);
	/* The page <trace.h>'s macro reads filters from (process.c,
	 * make_filter_page; slots.c, pt_filter_follow); NULL: none. */
	unsigned char *filter_page;
	size_t filter_page_len;
	/* The slot whose stream the page mirrors, -1: none (written under
	 * lock, read by pt_filter_publish's first look without it). */
	_Atomic int filter_page_slot;
	pid_t pid;
	uint64_t starttime;
	_Alignas(128) struct pt_attached attached[PT_MAX_STREAMS];
	uint64_t next_gen;
	int use_membarrier;
	pthread_mutex_t lock;          /* attached[], threads, names */
	struct pt_thread *threads;
	pthread_key_t thread_key;     /* valid when have_thread_key */
	int have_thread_key;
	struct pt_pcb pcb_fallback;
	struct pt_registry reg_fallback;
};

extern struct pt_process pt_proc;

/* The fork word outside a fork child: PT_FORK_WORD_FAST when writers order
 * themselves with a compiler barrier (membarrier(2) registered), 2 when
 * they pay a full fence (the general path). */
#define PT_FORK_WORD_FAST 1u
static inline uint64_t pt_fork_word_value(void)
{
	return pt_proc.use_membarrier ? PT_FORK_WORD_FAST : 2u;
}
/* Set while this thread forks a keeper (keepctl.c): the fork handlers and
 * exit() in the child know they are in a keeper, which sets itself up. */
extern __thread int pt_forking_keeper;

/* process.c */

/* Who this process is (pid, start time, pid namespace); again in a fork
 * child. */
void pt_proc_identify(void);
/* The process's own state before any stream (lifecycle.c calls it once). */
void pt_proc_setup(void);
void pt_proc_lock_init(void);
/* Start time of a process (clock ticks since boot, /proc/PID/stat field
 * 22) and its parent: with the pid, it names a process across pid reuse. */
uint64_t pt_proc_stat(pid_t pid, pid_t *ppid);
/* Full barrier on every thread of this process (and of every process, with
 * global); 0 when membarrier did it. */
int pt_fence_all(int global);
void pt_fence_all_slowly(void);
pid_t pt_gettid(void);
pid_t pt_proc_pid(void);
void pt_set_pcb(struct pt_pcb *pcb);
/* The payloads the inline record takes: those of a stream this process
 * records into, timed with the TSC (the one clock read inline), up to
 * max_data (a longer one is truncated, by the general record).  Those
 * longer than PT_FAST_COPY_MAX are copied by a call, the others with a
 * few word moves. */
#define PT_FAST_COPY_MAX 32u
static inline uint64_t pt_fast_len(int traced, uint32_t clock, uint32_t max_data)
{
#if defined(__x86_64__)
	if (traced && clock == PT_CLOCK_TSC)
		return (uint64_t)max_data + 1;
#endif
	(void)traced, (void)clock, (void)max_data;
	return 0;
}
/* The header of no stream (zero: SUSPENDED, nothing watched, no
 * waiters): a slot's hdr while its map is NULL. */
extern struct pt_stream_hdr pt_unmapped_hdr;
/* Publishes m in a slot: the copies the recording path reads, then map
 * and hdr (release: pair with the acquire loads of map in record_general
 * and pt_release_lanes and of hdr in record, writer.c). */
static inline void pt_publish_map(struct pt_attached *a, struct pt_map *m)
{
	a->clock = m->clock;
	a->max_data = m->max_data;
	a->fast_len = pt_fast_len(a->traced, m->clock, m->max_data);
	atomic_store_explicit(&a->map, m, memory_order_release);
	atomic_store_explicit(&a->hdr, (struct pt_stream_hdr *)m->base, memory_order_release);
}
/* Unpublishes a slot's map (the grace period that follows is the
 * caller's, as for map: an inline record that still found the real hdr
 * is inside its entry, and the functions it may go on to load map again
 * and drop the event when it is NULL, writer.c). */
static inline void pt_unpublish_map(struct pt_attached *a, memory_order order)
{
	atomic_store_explicit(&a->hdr, &pt_unmapped_hdr, memory_order_relaxed);
	atomic_store_explicit(&a->map, NULL, order);
}
void pt_arm(int slot, int on);
/* Whether a lane's owner (token, and the pid namespace it was written
 * from) may still be alive: 1 unless this process can tell it is dead. */
int pt_owner_alive(uint64_t token, uint64_t pidns);

#endif
