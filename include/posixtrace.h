/* SPDX-License-Identifier: MIT */
/*
 * <posixtrace.h>: posixtrace's extensions to <trace.h>.
 *
 * struct posix_trace_event_info is allocated by callers, so it cannot grow
 * under the same soname; what an event carries beyond it, what a log says
 * about its own state, and which processes can be traced are asked for here.
 * Every name starts with posixtrace_ (types, functions) or POSIXTRACE_
 * (constants); every function is in the library's versioned export map.
 * Functions return 0 or an error number, as the <trace.h> functions do.
 */
#ifndef POSIXTRACE_H
#define POSIXTRACE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <trace.h>

#ifdef __cplusplus
extern "C" {
#endif

/* In C++ a function named like a struct "hides its constructor" (g++
 * -Wshadow); C needs both names, so the warning is silenced for the two
 * declarations that share them. */
#if defined(__cplusplus) && defined(__GNUC__)
#define __PT_SAME_NAME_BEGIN _Pragma("GCC diagnostic push") \
	_Pragma("GCC diagnostic ignored \"-Wshadow\"")
#define __PT_SAME_NAME_END _Pragma("GCC diagnostic pop")
#else
#define __PT_SAME_NAME_BEGIN
#define __PT_SAME_NAME_END
#endif

#define POSIXTRACE_COMM_MAX 16 /* bytes of a thread name, with its terminating null */

/* What an event carries beyond struct posix_trace_event_info. */
struct posixtrace_event_ext {
	/* Kernel thread id (gettid()) of the thread that generated the event;
	 * 0 for an event not associated with a thread. */
	pid_t posixtrace_tid;
	/* That thread's name (PR_GET_NAME) when it first recorded into the
	 * stream; empty when unknown. */
	char posixtrace_comm[POSIXTRACE_COMM_MAX];
	/* posix_pid and posixtrace_tid are the ids in the pid namespace of the
	 * process that created the stream.  For a writer in another pid
	 * namespace: its process and thread ids there, and that namespace (the
	 * inode number of /proc/PID/ns/pid); all 0 otherwise. */
	pid_t posixtrace_ns_pid;
	pid_t posixtrace_ns_tid;
	uint64_t posixtrace_pidns;
	/* The CPU the thread ran on when it posted the event (the kernel's
	 * rseq cpu_id, read as the event is recorded), valid when
	 * posixtrace_cpu_valid is 1: CPU 0 is a CPU.  0 and 0 where the
	 * writer's thread has no rseq area registered (glibc before 2.35, or
	 * its glibc.pthread.rseq tunable set to 0), for system events and
	 * for events of logs written before version 4.  Since 0.3. */
	uint32_t posixtrace_cpu;
	uint32_t posixtrace_cpu_valid;
	uint64_t posixtrace_reserved[1];
};

/* The extension fields of the event that the most recent successful
 * posix_trace_getnext_event(), posix_trace_timedgetnext_event() or
 * posix_trace_trygetnext_event() call on trid returned.
 * EINVAL: trid is not a trace stream identifier, or no event was returned. */
__PT_SAME_NAME_BEGIN
int posixtrace_event_ext(trace_id_t trid, struct posixtrace_event_ext *ext);
__PT_SAME_NAME_END

/* One event of posixtrace_getnext_events(). */
struct posixtrace_batch_event {
	/* What posix_trace_getnext_event() gives for it. */
	struct posix_trace_event_info posixtrace_info;
	/* Its data: posixtrace_data_len bytes at posixtrace_data, inside the
	 * caller's buffer (NULL when the buffer is). */
	const void *posixtrace_data;
	size_t posixtrace_data_len;
	/* As struct posixtrace_event_ext's. */
	pid_t posixtrace_tid;
	uint32_t posixtrace_cpu;
	uint32_t posixtrace_cpu_valid;
	uint32_t posixtrace_reserved; /* 0 */
};

/* Up to max events of trid in one call, in the order and with the values
 * that as many posix_trace_getnext_event() calls (a pre-recorded stream) or
 * posix_trace_trygetnext_event() calls (an active stream) would give, each
 * with its kernel thread id and CPU; it never waits.  Each event's data,
 * at most num_bytes of it (the rest as posix_trace_getnext_event
 * truncates), is copied into buf after the previous event's; an event is
 * taken only while num_bytes of buf remain.  *count: how many (0: the end
 * of a log, or no event in an active stream now).  posixtrace_event_ext()
 * then describes the last of them.
 * EINVAL: trid is not a trace stream identifier or is an active stream
 * with a log, evs or count is NULL, max is 0, buf is NULL and bufsize is
 * not 0, or num_bytes is larger than bufsize.  Since 0.4. */
int posixtrace_getnext_events(trace_id_t trid, struct posixtrace_batch_event *evs, size_t max,
                              void *buf, size_t bufsize, size_t num_bytes, size_t *count);

/* What a pre-recorded stream's log says about itself, as read so far. */
struct posixtrace_log_info {
	uint32_t posixtrace_version;        /* log format version */
	/* 1: the log ends with its end record (closed by posix_trace_shutdown
	 * or by the stream's keeper); 0: it stops short, as a crash leaves it
	 * (known once the end has been read). */
	int posixtrace_closed;
	/* Damaged blocks met so far; each was reported by one
	 * POSIX_TRACE_ERROR event (data EBADMSG) and reading went on after it. */
	uint64_t posixtrace_damaged_blocks;
	/* Images of traced processes the log holds (posixtrace_set_images;
	 * since 0.3, 0 before): 0 means no event has a known image. */
	uint64_t posixtrace_images;
	/* Images the log describes that the reader did not keep: past the
	 * bound of the process that described them, or of the whole table
	 * (SECURITY.md, "Logs are bounded input"), or naming a file the log
	 * does not validly describe, or in entries that fail their checks.
	 * Since 0.3. */
	uint64_t posixtrace_images_dropped;
	/* Events of a trigger type that took no snapshot, held off by the
	 * keeper's minimum interval between two snapshots of one type or past
	 * its budget of snapshots (posixtrace_set_trigger; since 0.3, 0
	 * before), as the log's status says: its end, or its header's last
	 * update for a log that stops short. */
	uint64_t posixtrace_triggers_suppressed;
	uint64_t posixtrace_reserved[1];
};

/* EINVAL: trid is not a pre-recorded trace stream identifier. */
__PT_SAME_NAME_BEGIN
int posixtrace_log_info(trace_id_t trid, struct posixtrace_log_info *info);
__PT_SAME_NAME_END

/* The host a log was written on, and its clocks when the log began (a
 * file of a rotated log: when that file began).  Logs of one host and one
 * boot (posixtrace_boot_id equal) share CLOCK_MONOTONIC, so their events
 * order exactly: an event's time less the stream's creation time
 * (posix_trace_attr_getcreatetime) plus posixtrace_create_monotonic_ns is
 * its CLOCK_MONOTONIC time.  Logs of different hosts order by their
 * CLOCK_REALTIME times, each uncertain by up to its clock's maximum error
 * (adjtimex(2)'s maxerror), without bound when the clock was not
 * synchronised.  Since 0.3. */
#define POSIXTRACE_HOST_NAME_MAX 64 /* bytes of posixtrace_host_name, its null not counted */
struct posixtrace_host {
	/* uname(2)'s nodename, null-terminated; empty when not known */
	char posixtrace_host_name[POSIXTRACE_HOST_NAME_MAX + 1];
	/* 1: posixtrace_machine_id is set: /etc/machine-id, never the raw id
	 * (machine-id(5)), but HMAC-SHA256 keyed with it over the application
	 * id 863bb4c1-be97-40f0-bb34-975751328dcf, its first 16 bytes made a
	 * version 4 UUID (as systemd-id128 machine-id --app-specific=...) */
	int posixtrace_machine_known;
	unsigned char posixtrace_machine_id[16];
	/* 1: posixtrace_boot_id is /proc/sys/kernel/random/boot_id */
	int posixtrace_boot_known;
	unsigned char posixtrace_boot_id[16];
	/* CLOCK_MONOTONIC at the stream's creation time (0: not known) */
	uint64_t posixtrace_create_monotonic_ns;
	/* CLOCK_REALTIME and CLOCK_MONOTONIC read together, at most
	 * posixtrace_anchor_gap_ns apart, when the log (or file) began */
	uint64_t posixtrace_anchor_realtime_ns;
	uint64_t posixtrace_anchor_monotonic_ns;
	uint64_t posixtrace_anchor_gap_ns;
	/* 1: the next three were read (adjtimex(2)): the kernel's maximum and
	 * estimated error of CLOCK_REALTIME, in microseconds, and whether it
	 * said the clock is not synchronised (STA_UNSYNC) */
	int posixtrace_clock_known;
	int posixtrace_clock_unsynchronised;
	int64_t posixtrace_maxerror_us;
	int64_t posixtrace_esterror_us;
	uint64_t posixtrace_reserved[4];
};

/* What a pre-recorded stream's log says of its host.  ENOENT: the log names
 * none (written by a version before 0.3); EINVAL: trid is not a
 * pre-recorded trace stream identifier, or host is NULL.  Since 0.3. */
int posixtrace_log_host(trace_id_t trid, struct posixtrace_host *host);
/* This machine, now, as a log begun now would name it
 * (posixtrace_create_monotonic_ns 0).  EINVAL: host is NULL.  Since 0.3. */
int posixtrace_host_self(struct posixtrace_host *host);

/* The rendezvous of an active trace stream traced with inheritance
 * (POSIX_TRACE_INHERITED): a descendant of the stream's target that lost
 * the descriptors it inherited (Python's subprocess closes them, as do
 * many test drivers) is given the stream at load when its environment has
 * POSIXTRACE_RENDEZVOUS set to posixtrace_dir.  Put it in the environment
 * of the programs the target starts (posixtrace record does).  Since
 * version 0.3. */
#define POSIXTRACE_RENDEZVOUS_ENV "POSIXTRACE_RENDEZVOUS"
struct posixtrace_rendezvous_info {
	char posixtrace_dir[256];        /* the directory, a null-terminated path */
	uint64_t posixtrace_joined;      /* processes given the stream through it */
	/* Processes that asked and were refused (not descendants, not
	 * traceable by the controller) or had stopped waiting. */
	uint64_t posixtrace_refused;
	/* Descendants refused because they run as another user than the
	 * stream's memory belongs to (a tree traced by root where programs
	 * run as other users: their events are not in the stream). */
	uint64_t posixtrace_other_users;
	/* Processes recording into the stream (joined by any way) that could
	 * map only part of its memory (ENOMEM: an address-space limit); their
	 * events that found no room in that part are counted lost.  Since
	 * 0.3. */
	uint64_t posixtrace_short_maps;
	/* Connections to the rendezvous' others socket that the keeper's
	 * budget of /proc reads (docs/SECURITY.md) did not let it check, so
	 * that it could not say whether they descend from the target (since
	 * 0.3; a crowd there costs this count, never a join). */
	uint64_t posixtrace_others_unchecked;
	uint64_t posixtrace_reserved[1];
};

/* EINVAL: trid is not an active trace stream identifier (or info is NULL);
 * ENOENT: the stream has no rendezvous (not traced with inheritance, shut
 * down, or its directory could not be made). */
__PT_SAME_NAME_BEGIN
int posixtrace_rendezvous_info(trace_id_t trid, struct posixtrace_rendezvous_info *info);
__PT_SAME_NAME_END

/* Triggers of an active trace stream with a log: each event of a user
 * event type in the trigger set makes the stream's keeper write what the
 * stream holds into its log, as posix_trace_flush() would (between
 * POSIX_TRACE_FLUSH_START and POSIX_TRACE_FLUSH_STOP, the STOP naming the
 * process that posted it), once per look of the keeper however many were
 * posted meanwhile.  With a POSIX_TRACE_LOOP stream, that is a flight
 * recorder's snapshot.  An event the filter excludes triggers nothing;
 * system event types in set are ignored.  posixtrace_set_trigger replaces
 * the set (an empty set: no triggers); posixtrace_get_trigger gives it and,
 * when snapshots is not NULL, the number of snapshots triggers have taken.
 * EINVAL: trid is not an active trace stream identifier, set is NULL, or
 * (set) the stream has no log.  Since version 0.3. */
__PT_SAME_NAME_BEGIN
int posixtrace_set_trigger(trace_id_t trid, const trace_event_set_t *set);
int posixtrace_get_trigger(trace_id_t trid, trace_event_set_t *set, uint64_t *snapshots);
__PT_SAME_NAME_END

/* The executable images (the program, its shared libraries, dlopen'd
 * plug-ins) of traced processes, for turning posix_prog_address into a
 * function and a line.  A stream records them when asked to
 * (posixtrace_set_images) and its log keeps them: each traced process
 * describes the images it has mapped when it first records into the
 * stream and again after dlopen() or dlclose(), noticed when one of its
 * threads starts a new chunk of the stream.  What a process describes is
 * its own claim: path and build id are those it reports, so a reader opens
 * the file named only as untrusted input and checks its build id. */
#define POSIXTRACE_BUILD_ID_MAX 32
#define POSIXTRACE_IMAGE_PATH_MAX 1024
struct posixtrace_image {
	uint64_t posixtrace_start;     /* the addresses it spans in the process, */
	uint64_t posixtrace_end;       /* [start, end) */
	/* What its addresses are moved by: an address of the image is the
	 * load bias plus the address the file gives it (dl_iterate_phdr's
	 * dlpi_addr; 0 for a non-PIE executable). */
	uint64_t posixtrace_load_bias;
	uint32_t posixtrace_build_id_size; /* 0: the file has no build id */
	unsigned char posixtrace_build_id[POSIXTRACE_BUILD_ID_MAX];
	/* The file's path as the process saw it, null-terminated; empty for
	 * an image with no file (the vDSO).  1: cut to fit. */
	int posixtrace_path_truncated;
	char posixtrace_path[POSIXTRACE_IMAGE_PATH_MAX];
	/* The time the process described it. */
	struct timespec posixtrace_described;
	/* posixtrace_event_image gives this image for every event of the
	 * same process and address whose time is in [valid_from,
	 * valid_until): a symbolizer can keep its answer for them. */
	struct timespec posixtrace_valid_from, posixtrace_valid_until;
	/* The user whose rights the image's files may be read with: the
	 * owner of the stream memory the process described it in, as the
	 * kernel told the keeper that wrote the log;
	 * POSIXTRACE_UID_UNKNOWN when the log does not say.  A log is a
	 * claim of whoever owns (or may write) the log file: the command
	 * believes this only of a log written by root.  Since 0.3. */
	uint32_t posixtrace_uid;
	uint32_t posixtrace_reserved32;
	uint64_t posixtrace_reserved[1];
};
#define POSIXTRACE_UID_UNKNOWN ((uint32_t)-1)

/* Whether the processes tracing into an active trace stream describe their
 * images (on: nonzero).  Off when a stream is created.  A process
 * describes them at its next new chunk after the setting is on.
 * EINVAL: trid is not an active trace stream identifier.  Since 0.3. */
int posixtrace_set_images(trace_id_t trid, int on);

/* The image that held the address of event ev when it was recorded, for
 * a pre-recorded trace stream (a log): the image the event's process
 * described last before the event among those of its description then in
 * force; failing that (a plug-in loaded since, described after the
 * event), the earliest described later.  ev is an event that trid
 * returned.  EINVAL: trid is not a pre-recorded trace stream identifier,
 * or ev or image is NULL; ENOENT: the log holds no image of that process
 * with that address.  Since 0.3. */
int posixtrace_event_image(trace_id_t trid, const struct posix_trace_event_info *ev,
                           struct posixtrace_image *image);

/* A log written as numbered files in a directory, a new file begun once
 * the one being written passes posixtrace_file_size bytes, the oldest
 * removed while more than posixtrace_max_files are kept (0: every file is
 * kept).  The files are 00000001.ptlog, 00000002.ptlog, ... (eight digits:
 * they sort by name and time alike, up to 99999999; past it the last file
 * grows and the stream's flush error is EFBIG).  Each is a complete log
 * of log full policy POSIX_TRACE_APPEND that posix_trace_open() reads
 * alone: its header, the names of the event types the stream knows and
 * the images of the processes still alive (posixtrace_set_images) come
 * first in it.  A new file begins at the end of a drain of the stream
 * into the log (a block boundary), so a file can pass the size by what
 * one drain writes (about the stream's size); the events of each file
 * follow those of the one before it.  With posixtrace_file_seconds, a file
 * also ends once it is that many seconds old and holds events: the keeper
 * first flushes a POSIX_TRACE_FLUSH stream that holds events (an automatic
 * flush, FLUSH_START and FLUSH_STOP naming the controller), so that an
 * event reaches a closed file within about that time of being posted,
 * however slowly the stream fills; a file without events stays open.
 * The files are created through posixtrace_dirfd alone (openat with
 * O_CREAT | O_EXCL | O_NOFOLLOW, then given posixtrace_mode exactly), and
 * removed through it (unlinkat); a name already taken (a file, a symbolic
 * link) is not written through: that file, and the rotation, stop there
 * (the log goes on growing the last file), with the error as the
 * stream's flush error (posix_trace_get_status) and
 * posix_trace_shutdown()'s result. */
struct posixtrace_logdir {
	int posixtrace_dirfd;           /* an open directory (O_PATH will do) */
	mode_t posixtrace_mode;         /* of each file: 0600 and the like, within 0666 */
	uint64_t posixtrace_file_size;  /* at least 64 KiB */
	uint32_t posixtrace_max_files;  /* 0: keep them all */
	uint32_t posixtrace_file_seconds; /* 0: by size only */
	uint64_t posixtrace_reserved[2]; /* 0 */
};

/* posix_trace_create_withlog() with a rotated log in dir->posixtrace_dirfd
 * (a descriptor of its own: the caller may close its own).  The log full
 * policy of attr must be POSIX_TRACE_APPEND or left unset (each file is an
 * APPEND log; its log size is not used); the stream full policy is any
 * (POSIX_TRACE_FLUSH unless set, as posix_trace_create_withlog).
 * EINVAL: attr or a field of dir out of range, or another log full policy
 * set; EBADF: posixtrace_dirfd is not open; ENOTDIR: not a directory;
 * EEXIST and the other errors of openat: the first file could not be
 * created.  Since 0.3. */
int posixtrace_create_withlogdir(pid_t pid, const trace_attr_t *attr,
                                 const struct posixtrace_logdir *dir, trace_id_t *trid);

/* A writer that may wait: with the POSIX_TRACE_FLUSH stream full policy,
 * a writer that finds the stream full waits up to *timeout for the
 * stream's keeper to flush it, instead of losing the event (a zero
 * timeout, the default: never wait).  A writer that was still short of
 * room at the timeout loses the event, counted as before; an event posted
 * from a signal handler that interrupted a posting never waits.  With
 * another stream full policy the attribute is kept and has no effect.
 * EINVAL: attr or timeout invalid, a negative or unnormalized timespec, or
 * a timeout longer than 60 s.  Since 0.3. */
int posixtrace_attr_setblocking(trace_attr_t *attr, const struct timespec *timeout);
int posixtrace_attr_getblocking(const trace_attr_t *__PT_RESTRICT attr,
                                struct timespec *__PT_RESTRICT timeout);

/* What the writers of a stream waited (posixtrace_attr_setblocking):
 * events whose writer found the stream full and waited, the time they
 * waited in all, and those of them that still found no room (each also
 * one of posix_trace_get_status's lost events).  Counts the traced
 * processes keep in the stream: a hint, as they report it.  For a
 * pre-recorded stream (posix_trace_open), the counts its log recorded as
 * of its status (the end, or the last header update of a log that stops
 * short); 0 for a log written before they were kept.  EINVAL: trid is not
 * a trace stream identifier, or info is NULL.  Since 0.3. */
struct posixtrace_block_stats {
	uint64_t posixtrace_waited_events;
	uint64_t posixtrace_waited_ns;
	uint64_t posixtrace_waited_lost;
	uint64_t posixtrace_reserved[1];
};
int posixtrace_block_info(trace_id_t trid, struct posixtrace_block_stats *info);

/* The processes that have loaded libposixtrace and that the caller may trace
 * (the ptrace access rule), at most max of them into pids; *count is how many
 * there are.  ENOMEM: no memory for the scan. */
int posixtrace_list_processes(pid_t *pids, size_t max, size_t *count);

/* Calls fn(id, name, arg) for every user event type process pid has
 * registered, in id order, until fn returns nonzero.  ESRCH: no such
 * process; EPERM: the caller may not trace it; ENOENT: it has not loaded
 * libposixtrace. */
int posixtrace_process_eventtypes(pid_t pid,
                                  int (*fn)(trace_event_id_t id, const char *name, void *arg),
                                  void *arg);

#ifdef __cplusplus
}
#endif

#endif
