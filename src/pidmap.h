/* SPDX-License-Identifier: MIT */
/*
 * Process and thread ids across pid namespaces (pidmap.c).  A writer
 * records getpid() and gettid(), its ids in its own pid namespace, and
 * the lane it writes records that namespace (struct pt_lane's owner_ns).
 * posix_pid, and the thread id of the extension, are the ids in the
 * namespace of the process that created the stream: the reader there (the
 * controller, its keeper) finds them in its own /proc, where the process
 * whose /proc/PID/ns/pid is that namespace has the local id as the last
 * field of NSpid in /proc/PID/status (and likewise each of its threads).
 * A process gone before its ids were looked up keeps its local ids; a
 * thread that ended before, of a process still there, gets its process's
 * pid and keeps its local thread id.
 */
#ifndef PT_PIDMAP_H
#define PT_PIDMAP_H

#include <stdint.h>
#include <sys/types.h>
#include "layout.h"

/* One translation: the ids in the reader's namespace and the local ones. */
struct pt_idpair {
	uint64_t ns;              /* the writer's pid namespace (inode number) */
	int32_t local_pid, local_tid;
	int32_t pid, tid;         /* 0: not found (the process was gone) */
	int32_t used;             /* returned by a translation already */
	int32_t reserved;
};

struct pt_pidmap {
	uint64_t own_ns;          /* the reader's namespace: nothing to do there */
	int proc_is_ours;         /* /proc numbers processes as the reader's namespace does */
	struct pt_idpair *slot;   /* open addressing by (ns, local_pid, local_tid) */
	uint32_t nslots, used;
	uint64_t refilled_ms;     /* CLOCK_MONOTONIC ms of the last refill (0: none yet) */
	uint32_t tokens;          /* looks at a known process's threads that may be taken now */
	/* The scan of /proc for processes not known yet: one at a time, begun
	 * when a miss waits for it and a scan token allows (PT_PIDMAP_SCAN_BURST,
	 * one more every PT_PIDMAP_SCAN_MS); the miss that begins it reads up
	 * to PT_PIDMAP_MISS_ENTRIES entries at once, the rest is read
	 * PT_PIDMAP_STEP_ENTRIES entries a step, a step at most every
	 * PT_PIDMAP_STEP_MS. */
	void *scan;               /* the DIR of the scan under way, or NULL */
	uint64_t scan_began_ms;   /* CLOCK_MONOTONIC ms (0: never) */
	uint64_t scan_refilled_ms; /* of the last scan token gained (0: none yet) */
	uint32_t scan_tokens;     /* scans that may begin now */
	uint64_t step_ms;         /* of the last step */
	uint32_t scans_begun, scans_done;
	int rescan;               /* a miss waits for a scan not begun yet */
	uint64_t entries_read;    /* /proc entries and task entries looked at */
};

/* The last field of NSpid in a /proc status file: the id in the
 * process's (or thread's) own namespace; fallback when there is none. */
pid_t pt_nspid_last(const char *status_path, pid_t fallback);

/* own_ns: the reader's pid namespace; proc_is_ours: its /proc shows that
 * namespace (else /proc is never looked through: its numbers would be
 * another namespace's). */
void pt_pidmap_init(struct pt_pidmap *m, uint64_t own_ns, int proc_is_ours);
void pt_pidmap_free(struct pt_pidmap *m); /* the scan under way closed too */

/* The ids of `who`, a writer of namespace ns, in the reader's namespace,
 * written over who->pid and who->tid; *pair (when not NULL) gets the
 * translation.  0 when the namespace is the reader's own or unknown (who
 * unchanged), 1 when translated (2 the first time this translation is
 * given to a pair: pair NULL only learns it, so that what is given first
 * after pt_pidmap_unuse is still 2), -1 when the writer was not found, or
 * not yet: who unchanged.
 * Bounded (docs/SECURITY.md): a process not seen before waits for the next
 * scan of /proc, which answers every miss at once; a scan begins when a
 * token allows (a burst of PT_PIDMAP_SCAN_BURST, then one every
 * PT_PIDMAP_SCAN_MS), the miss that begins it reads up to
 * PT_PIDMAP_MISS_ENTRIES entries at once (so that the writer that just
 * appeared is found before its events are written), and the rest of a
 * larger /proc at most PT_PIDMAP_STEP_ENTRIES entries per step, a step at
 * most every PT_PIDMAP_STEP_MS (by pt_pidmap_step); a thread not seen before, of a
 * known process, costs a look at that process's threads (at most
 * PT_PIDMAP_STEP_ENTRIES of them), one every PT_PIDMAP_RESCAN_MS on
 * average (a few at once).  A process the first scan after its miss did
 * not find is remembered as gone. */
int pt_pidmap_translate(struct pt_pidmap *m, uint64_t ns, struct pt_owner *who,
                        struct pt_idpair *pair);
#define PT_PIDMAP_RESCAN_MS 50
#define PT_PIDMAP_SCAN_MS 250
#define PT_PIDMAP_STEP_MS 50
#define PT_PIDMAP_STEP_ENTRIES 512
#define PT_PIDMAP_SCAN_BURST 4
#define PT_PIDMAP_MISS_ENTRIES 4096

/* Every translation counts as not used yet: the next translation of each
 * returns 2 again (a rotated log's new file, which must name its writers
 * again to read alone).  A pass over the table: at most 2^18 entries. */
void pt_pidmap_unuse(struct pt_pidmap *m);

/* The scan's next step, if one is due (the keeper's tick). */
void pt_pidmap_step(struct pt_pidmap *m);

/* The OWNER records of buf[0, len) (whole records of stream memory,
 * checked, in private memory) rewritten with the ids of the reader's
 * namespace; fn(pair, arg) for each translation used the first time.  Records that do not
 * decode end the walk. */
void pt_pidmap_rewrite(struct pt_pidmap *m, uint64_t ns, unsigned char *buf, uint32_t len,
                       uint32_t max_data, void (*fn)(const struct pt_idpair *, void *), void *arg);

#endif
