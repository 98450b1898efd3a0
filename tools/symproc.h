/* SPDX-License-Identifier: MIT */
/*
 * posixtrace(1): the confined symbolizer.  The files a log's images name
 * are chosen by whoever wrote the log, so they are parsed (symbolize.h)
 * in a child process, never in the command: one child per user whose
 * claims are read, with that user's rights when the command runs as root
 * (root's only for root's own images of a log only root may write), under NO_NEW_PRIVS, not dumpable, RLIMIT_CORE 0,
 * RLIMIT_AS, RLIMIT_CPU, no descriptor but its socket, no environment.
 * The command waits for each answer at most a deadline, and for all the
 * answers about one file at most a budget; a child past either, dead,
 * or answering out of the protocol is killed and reaped, its file gives
 * no names (IMAGE+0xOFF) and one note, and a new child serves the other
 * files.  Every reply is checked as input from another user.
 * docs/SECURITY.md, "The confined symbolizer", has the threat model.
 */
#ifndef POSIXTRACE_SYMPROC_H
#define POSIXTRACE_SYMPROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <posixtrace.h>

/* Children alive at once (one per user whose files are read); one more
 * user's is started after the least recently used one is ended. */
#define SYMPROC_CHILDREN_MAX 4
/* Distinct files (path, build id, reader) asked about; later ones give
 * no names and one note. */
#define SYMPROC_FILES_MAX 4096
/* The wait for one answer, by default (--symbol-timeout); a file's
 * answers together get SYMPROC_FILE_BUDGET times that. */
#define SYMPROC_TIMEOUT_MS_DEFAULT 10000u
#define SYMPROC_FILE_BUDGET 6
/* What a child may map beyond what the command had mapped when it was
 * forked: the largest honest debug information (files of up to
 * SYM_FILE_MAX, 1 GiB, each) with room to index it. */
#define SYMPROC_AS_MAX ((uint64_t)2 << 30)
/* CPU seconds a child may use in all (RLIMIT_CPU): past them it dies,
 * costing the file it was working on; the next child starts afresh. */
#define SYMPROC_CPU_SECONDS 300
/* Notes kept (at most one per file), each cut to SYMPROC_NOTE_MAX bytes. */
#define SYMPROC_NOTES_MAX 256
#define SYMPROC_NOTE_MAX 512

/* A reply's strings: longer ones make the reply (and the child) refused. */
#define SYMPROC_NAME_MAX 4096     /* function, inlined function, source file */
#define SYMPROC_REPLY_NOTES_MAX 8 /* notes carried by one reply */

struct symproc;

struct symproc_options {
	const char *symfs;   /* --symfs DIR, or NULL */
	int log_fd;          /* the log's descriptor: its owner and mode say whose claims it holds */
	unsigned timeout_ms; /* 0: SYMPROC_TIMEOUT_MS_DEFAULT */
	bool no_demangle;    /* --no-demangle: C++ names as the files give them */
};

/* Where an address is (struct sym_site, symbolize.h), C++ names
 * demangled by the child (demangle.h) unless no_demangle; the strings are
 * bytes of the files, NUL-free, valid until the next call. */
struct symproc_site {
	const char *function; /* NULL: no symbol covers it */
	const char *inlined;  /* NULL: none */
	const char *file;     /* NULL: unknown */
	uint64_t offset;
	int line;
};

/* NULL: no memory.  No child is started before the first lookup. */
struct symproc *symproc_new(const struct symproc_options *o);
/* Ends and reaps every child. */
void symproc_free(struct symproc *p);

/* The number of img's file (its path, build id and the user it is read
 * as) in *file.  ENOSPC: past SYMPROC_FILES_MAX (one note says so);
 * ENOMEM. */
int symproc_file(struct symproc *p, const struct posixtrace_image *img, uint32_t *file);

/* address of img, whose file is *file (symproc_file): 0 and *out;
 * ENOENT: no names (the file is not usable, or its child was given up:
 * a note says why); ENOTSUP: built without libdw; EINVAL; ENOMEM. */
int symproc_lookup(struct symproc *p, uint32_t file, const struct posixtrace_image *img,
                   uint64_t address, struct symproc_site *out);

/* The files the child reads for img's addresses (its file, as read and
 * checked; the debug and dwz files it found), for posixtrace archive:
 * fd[SYMPROC_IMAGE_FD], fd[SYMPROC_DEBUG_FD], fd[SYMPROC_ALT_FD], sealed
 * memfds of size[] bytes each (at most SYM_FILE_MAX) for the caller to
 * read and close, -1: none; alt_id the dwz file's build id.  Opened by the
 * child with the reader's rights, as a lookup's files are, within the same
 * deadline and budget.  0; ENOENT (no usable file, or the child given up:
 * a note says why); ENOTSUP; EINVAL; ENOMEM. */
enum { SYMPROC_IMAGE_FD, SYMPROC_DEBUG_FD, SYMPROC_ALT_FD };
struct symproc_files {
	int fd[3];
	uint64_t size[3];
	uint32_t alt_id_size;
	unsigned char alt_id[POSIXTRACE_BUILD_ID_MAX];
};
int symproc_files(struct symproc *p, uint32_t file, const struct posixtrace_image *img,
                  struct symproc_files *out);

/* Calls fn once per note not given yet: the children's (symbolizer_problems)
 * and the command's own ("PATH: symbols given up (time budget)"). */
void symproc_notes(struct symproc *p, void (*fn)(const char *msg, void *arg), void *arg);

/* ---- the parts the tests call ------------------------------------------ */

/* Whose claims a log is, from its fstat: SYMPROC_PER_IMAGE when root owns
 * it, it is a regular file and neither group nor others may write it
 * (each image's posixtrace_uid is then believed); else the user who may
 * have written it: its owner, or nobody when others may write it (or a
 * group, and root owns it; or it is not a regular file). */
#define SYMPROC_PER_IMAGE ((uid_t)-1)
uid_t symproc_log_claimant(const struct stat *log, uid_t nobody);
/* The user img's files are read as, for a command run as root: claimant,
 * or (SYMPROC_PER_IMAGE) the image's uid, root's included; nobody for an
 * unknown uid or a claimant that is root. */
uid_t symproc_reader(uid_t claimant, const struct posixtrace_image *img, uid_t nobody);

/* Whether a command of effective uid euid, whose /proc/self/uid_map says
 * uid_map (NULL: unknown), has rights over other users' files, so that its
 * children must take the rights of the user they read for: root of the
 * initial user namespace, or of one that maps more than one uid.  Root of
 * a user namespace that maps one uid alone (unshare --user
 * --map-root-user) has the rights of that one user outside: there is no
 * other user to read as (no other uid is mapped, setgroups is denied), so
 * its children keep its rights, as those of any user's command do, and a
 * file of real root, which it sees as the overflow uid, is read with the
 * same rights as outside the namespace. */
bool symproc_root_over_others(uid_t euid, const char *uid_map);

/* A reply, checked.  The layout (both ends are this program): */
struct symproc_reply_head {
	uint32_t seq;         /* the request's */
	int32_t err;          /* symbolize()'s: 0, ENOENT, EINVAL, ENOMEM or ENOTSUP */
	uint64_t offset;
	int32_t line;
	/* Then function, inlined and file, each its bytes and a NUL (0xffff:
	 * NULL, nothing follows for it), then `notes` notes, each a uint16_t
	 * length, its bytes (printable ASCII) and a NUL. */
	uint16_t function_len, inlined_len, file_len;
	uint16_t notes;
};
struct symproc_reply {
	int err;
	struct symproc_site site;
	unsigned notes;
	const char *note[SYMPROC_REPLY_NOTES_MAX];
};
/* msg, len bytes: 0 and *out (its strings in msg) when it is a
 * well-formed reply to request seq, else EPROTO. */
int symproc_parse_reply(const unsigned char *msg, size_t len, uint32_t seq,
                        struct symproc_reply *out);

/* Whether fd, a descriptor a child gave, may be read: only a sealed memfd
 * (a regular file no one can grow, shrink nor write, on no file system
 * whose read could block) of at most SYM_FILE_MAX bytes (*size). */
bool symproc_sealed_memfd(int fd, uint64_t *size);

/* The reply to a files request: its head, then notes as a reply's, and
 * beside it one descriptor per kind given, in the order of the bits. */
#define SYMPROC_FILE_IMAGE 1u
#define SYMPROC_FILE_DEBUG 2u
#define SYMPROC_FILE_ALT 4u
#define SYMPROC_FILE_ALL 7u
struct symproc_files_head {
	uint32_t seq;
	int32_t err;
	uint32_t kinds; /* SYMPROC_FILE_*: the image always, unless err */
	uint32_t alt_id_size;
	unsigned char alt_id[POSIXTRACE_BUILD_ID_MAX];
	uint16_t notes;
	uint16_t unused;
};
struct symproc_files_reply {
	int err;
	uint32_t kinds;
	uint32_t alt_id_size;
	unsigned char alt_id[POSIXTRACE_BUILD_ID_MAX];
	unsigned notes;
	const char *note[SYMPROC_REPLY_NOTES_MAX];
};
/* msg, len bytes with nfds descriptors beside: 0 and *out when it is a
 * well-formed reply to files request seq, else EPROTO. */
int symproc_parse_files_reply(const unsigned char *msg, size_t len, uint32_t seq, unsigned nfds,
                              struct symproc_files_reply *out);

#endif
