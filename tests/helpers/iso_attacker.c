/* SPDX-License-Identifier: MIT */
/*
 * iso_attacker: another user's process for the isolation tests
 * (t_isolation).  It does what any unprivileged user can do against the
 * processes of other users: plant objects in /dev/shm and hold streams of
 * its own, then reports what reached it.  It reads commands on stdin and
 * answers on stdout, one line each.
 *
 *   iso_attacker plant -v PID -n N   its own POSIX_TRACE_INHERITED stream,
 *       started; N copies of it, mode 0666, are planted as
 *       /dev/shm/posixtrace.PID.START.OWNPID.K, and in each copy (and in the
 *       live stream, when it is an object it can open) every member entry
 *       naming itself (its pid, 4 zero bytes, its start time as
 *       /proc/PID/stat gives it) is rewritten to name PID; a live stream in
 *       /dev/shm is made mode 0666.  Every process started under PID would
 *       join them if the library trusted names.  The copies come from a
 *       descriptor of the stream or, without one, from its mapping.
 *   iso_attacker squat -v PID -p CPID[,CPID...] -n N   empty 0600 objects
 *       /dev/shm/posixtrace.PID.START.CPID.K for K < N: the names a
 *       controller CPID would predict for a stream of PID.
 *   iso_attacker fifo [-v PID]   FIFOs /dev/shm/posixtrace.x and (with -v)
 *       /dev/shm/posixtrace.PID.START.OWNPID.0.
 *   iso_attacker decoy -n N   N copies, mode 0644, of the first 64 KiB of
 *       a real stream of its own, named /dev/shm/posixtrace.OWNPID.K.OWNPID.K
 *       (valid headers a library that scans /dev/shm would open).
 *   iso_attacker hold   its own POSIX_TRACE_INHERITED stream, started.
 *
 * Every mode first answers "ready ..." (with what it did), then reads:
 *   truncate   ftruncate every planted object (and its own stream, when it
 *              is a /dev/shm object) to 0: "truncated N"
 *   read       reads its own stream: "read events=E foreign=F
 *              secret_in_stream=S secret_in_files=G", F the events of
 *              other processes, S those that carry the secret (-s), G the
 *              planted objects that hold its bytes
 *   quit       removes what it planted, shuts its stream down, exits 0
 * EOF on stdin is quit.  -a SECONDS: give up (SIGALRM) after SECONDS (60).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <trace.h>
#include <unistd.h>

#define MAX_PLANTED 512

static char planted[MAX_PLANTED][64];
static int nplanted;
static const char *secret = "iso-secret";
static int have_stream;
static trace_id_t trid;
/* Its own stream's object: a /dev/shm path or /proc/self/fd/N of a memfd
 * (own_base 0), else /proc/self/mem with the mapping at own_base. */
static char own_path[PATH_MAX];
static int own_in_shm;
static uint64_t own_base, own_size;

static void shm_path(char *out, size_t len, const char *name)
{
	if (snprintf(out, len, "/dev/shm/%s", name) >= (int)len)
		out[0] = '\0';
}

/* Field 22 of /proc/PID/stat: the start time, in clock ticks. */
static uint64_t start_time(pid_t pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	for (int field = 3; field <= 22 && p; field++)
		p = strchr(p + 1, ' ');
	return p ? strtoull(p + 1, NULL, 10) : 0;
}

static int create_own_stream(void)
{
	trace_attr_t attr;
	if (posix_trace_attr_init(&attr) != 0 ||
	    posix_trace_attr_setinherited(&attr, POSIX_TRACE_INHERITED) != 0 ||
	    posix_trace_attr_setstreamsize(&attr, 64 * 1024) != 0 ||
	    posix_trace_create(0, &attr, &trid) != 0 || posix_trace_start(trid) != 0)
		return -1;
	have_stream = 1;
	return 0;
}

/* Finds the object behind its own stream: a /dev/shm object named after
 * it, else a memfd named posixtrace-stream among its descriptors. */
static int find_own_object(void)
{
	char prefix[64], path[300], link[PATH_MAX];
	struct dirent *e;
	snprintf(prefix, sizeof prefix, "posixtrace.%d.", (int)getpid());
	DIR *d = opendir("/dev/shm");
	while (d && (e = readdir(d))) {
		struct stat st;
		shm_path(path, sizeof path, e->d_name);
		if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && stat(path, &st) == 0 &&
		    st.st_uid == getuid() && S_ISREG(st.st_mode)) {
			snprintf(own_path, sizeof own_path, "%s", path);
			own_in_shm = 1;
			closedir(d);
			return 0;
		}
	}
	if (d)
		closedir(d);
	d = opendir("/proc/self/fd");
	while (d && (e = readdir(d))) {
		snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, link, sizeof link - 1);
		if (len > 0 && (link[len] = '\0', strstr(link, "posixtrace-stream"))) {
			snprintf(own_path, sizeof own_path, "%s", path);
			closedir(d);
			return 0;
		}
	}
	if (d)
		closedir(d);
	/* No descriptor kept: the mapping itself, read through /proc/self/mem. */
	FILE *maps = fopen("/proc/self/maps", "r");
	char line[512];
	while (maps && fgets(line, sizeof line, maps)) {
		unsigned long long lo, hi;
		if (strstr(line, "posixtrace-stream") && sscanf(line, "%llx-%llx", &lo, &hi) == 2) {
			snprintf(own_path, sizeof own_path, "/proc/self/mem");
			own_base = lo;
			own_size = hi - lo;
			fclose(maps);
			return 0;
		}
	}
	if (maps)
		fclose(maps);
	return -1;
}

/* Opens its own stream's object; its size goes to *size. */
static int open_own_object(int flags, size_t *size)
{
	struct stat st;
	int fd = open(own_path, flags | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (own_base) {
		*size = (size_t)own_size;
		return fd;
	}
	if (fstat(fd, &st) != 0 || st.st_size <= 0) {
		close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	return fd;
}

/* Rewrites every {pid, 0, start} entry of (from) into (to): the layout of
 * a member entry.  Returns how many it rewrote. */
static int patch_members(unsigned char *p, size_t size, pid_t from, uint64_t from_start,
                         pid_t to, uint64_t to_start)
{
	int n = 0;
	for (size_t off = 0; off + 16 <= size; off += 8) {
		int32_t pid;
		uint32_t pad;
		uint64_t start;
		memcpy(&pid, p + off, 4);
		memcpy(&pad, p + off + 4, 4);
		memcpy(&start, p + off + 8, 8);
		if (pid != (int32_t)from || pad != 0 || start != from_start)
			continue;
		int32_t npid = (int32_t)to;
		memcpy(p + off, &npid, 4);
		memcpy(p + off + 8, &to_start, 8);
		n++;
	}
	return n;
}

/* Writes a copy of src (the first `limit` bytes, all if 0) as
 * /dev/shm/NAME, mode `mode`, leaving pages of zeros as holes. */
static int plant_copy(int src, size_t size, size_t limit, const char *name, mode_t mode)
{
	char path[300];
	shm_path(path, sizeof path, name);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0)
		return -1;
	fchmod(fd, mode);
	if (nplanted < MAX_PLANTED)
		snprintf(planted[nplanted++], sizeof planted[0], "%s", name);
	static unsigned char page[4096], zero[4096];
	size_t end = limit && limit < size ? limit : size;
	for (size_t off = 0; off < end; off += sizeof page) {
		ssize_t n = pread(src, page, sizeof page, (off_t)(own_base + off));
		if (n <= 0)
			break;
		if (memcmp(page, zero, (size_t)n) != 0 && pwrite(fd, page, (size_t)n, (off_t)off) != n)
			break;
	}
	int rc = ftruncate(fd, (off_t)size);
	close(fd);
	return rc;
}

/* Rewrites the member entries of a planted object (see patch_members). */
static int patch_file(const char *path, pid_t from, uint64_t from_start, pid_t to,
                      uint64_t to_start)
{
	int fd = open(path, O_RDWR | O_CLOEXEC), n = 0;
	struct stat st;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && st.st_size > 0) {
		unsigned char *p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		                        fd, 0);
		if (p != MAP_FAILED) {
			n = patch_members(p, (size_t)st.st_size, from, from_start, to, to_start);
			munmap(p, (size_t)st.st_size);
		}
	}
	close(fd);
	return n;
}

static int plant(pid_t victim, int copies)
{
	uint64_t vstart = start_time(victim), mystart = start_time(getpid());
	size_t size;
	if (!vstart || create_own_stream() != 0 || find_own_object() != 0)
		return -1;
	int fd = open_own_object(O_RDONLY, &size);
	if (fd < 0)
		return -1;
	int made = 0, patched = 0;
	for (int k = 0; k < copies; k++) {
		char name[64], path[300];
		snprintf(name, sizeof name, "posixtrace.%d.%llu.%d.%d", (int)victim,
		         (unsigned long long)vstart, (int)getpid(), 100 + k);
		if (plant_copy(fd, size, 0, name, 0666) != 0)
			continue;
		made++;
		shm_path(path, sizeof path, name);
		patched += patch_file(path, getpid(), mystart, victim, vstart);
	}
	close(fd);
	/* Its live stream too, when it is an object it can reach: then its
	 * own stream id reads what the victim records. */
	if (!own_base) {
		patched += patch_file(own_path, getpid(), mystart, victim, vstart);
		if (own_in_shm)
			chmod(own_path, 0666);
	}
	printf("ready own=%s patched=%d copies=%d\n", own_path, patched, made);
	return 0;
}

static int squat(pid_t victim, const char *ctls, int n)
{
	uint64_t vstart = start_time(victim);
	if (!vstart)
		return -1;
	int made = 0;
	char *list = strdup(ctls), *save = NULL;
	for (char *c = strtok_r(list, ",", &save); c; c = strtok_r(NULL, ",", &save)) {
		for (int k = 0; k < n; k++) {
			char name[64], path[300];
			snprintf(name, sizeof name, "posixtrace.%d.%llu.%d.%d", (int)victim,
			         (unsigned long long)vstart, atoi(c), k);
			shm_path(path, sizeof path, name);
			int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			if (fd < 0)
				continue;
			close(fd);
			if (nplanted < MAX_PLANTED)
				snprintf(planted[nplanted++], sizeof planted[0], "%s", name);
			made++;
		}
	}
	free(list);
	printf("ready squatted=%d\n", made);
	return 0;
}

static int make_fifo(const char *name)
{
	char path[300];
	shm_path(path, sizeof path, name);
	if (mkfifo(path, 0666) != 0)
		return 0;
	chmod(path, 0666);
	if (nplanted < MAX_PLANTED)
		snprintf(planted[nplanted++], sizeof planted[0], "%s", name);
	return 1;
}

static int fifos(pid_t victim)
{
	int made = make_fifo("posixtrace.x");
	if (victim > 0) {
		char name[64];
		snprintf(name, sizeof name, "posixtrace.%d.%llu.%d.0", (int)victim,
		         (unsigned long long)start_time(victim), (int)getpid());
		made += make_fifo(name);
	}
	printf("ready fifos=%d\n", made);
	return 0;
}

static int decoys(int n)
{
	size_t size;
	if (create_own_stream() != 0 || find_own_object() != 0)
		return -1;
	int fd = open_own_object(O_RDONLY, &size);
	if (fd < 0)
		return -1;
	int made = 0;
	for (int k = 0; k < n; k++) {
		char name[64];
		snprintf(name, sizeof name, "posixtrace.%d.%d.%d.%d", (int)getpid(), k,
		         (int)getpid(), k);
		made += plant_copy(fd, size, 64 * 1024, name, 0644) == 0;
	}
	close(fd);
	printf("ready decoys=%d prefix=posixtrace.%d.\n", made, (int)getpid());
	return 0;
}

static int truncate_all(void)
{
	int n = 0;
	for (int i = 0; i < nplanted; i++) {
		char path[300];
		shm_path(path, sizeof path, planted[i]);
		n += truncate(path, 0) == 0;
	}
	if (own_in_shm)
		n += truncate(own_path, 0) == 0; /* its memfd is left alone: it reads it */
	return n;
}

static int file_has_secret(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	struct stat st;
	int found = 0;
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (p != MAP_FAILED) {
			found = memmem(p, (size_t)st.st_size, secret, strlen(secret)) != NULL;
			munmap(p, (size_t)st.st_size);
		}
	}
	close(fd);
	return found;
}

static void read_stream(void)
{
	static char data[65536];
	long events = 0, foreign = 0, with_secret = 0, files = 0;
	while (have_stream && events < 1000000) {
		struct posix_trace_event_info info;
		size_t len = 0;
		int unavailable = 0;
		if (posix_trace_trygetnext_event(trid, &info, data, sizeof data, &len,
		                                 &unavailable) != 0 || unavailable)
			break;
		events++;
		if (info.posix_pid != getpid())
			foreign++;
		if (memmem(data, len, secret, strlen(secret)))
			with_secret++;
	}
	for (int i = 0; i < nplanted; i++) {
		char path[300];
		shm_path(path, sizeof path, planted[i]);
		files += file_has_secret(path);
	}
	printf("read events=%ld foreign=%ld secret_in_stream=%ld secret_in_files=%ld\n", events,
	       foreign, with_secret, files);
}

static void clean_up(void)
{
	for (int i = 0; i < nplanted; i++) {
		char path[300];
		struct stat st;
		shm_path(path, sizeof path, planted[i]);
		/* A FIFO is opened for writing before it goes: whoever is stuck
		 * opening it for reading goes on. */
		int fifo = lstat(path, &st) == 0 && S_ISFIFO(st.st_mode) ?
		                   open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC) : -1;
		unlink(path);
		if (fifo >= 0)
			close(fifo);
	}
	nplanted = 0;
	if (have_stream)
		posix_trace_shutdown(trid);
	have_stream = 0;
}

int main(int argc, char **argv)
{
	pid_t victim = 0;
	const char *ctls = NULL;
	int n = 1, opt, rc;
	unsigned alarm_s = 60;

	if (argc < 2)
		return 2;
	const char *mode = argv[1];
	optind = 2;
	while ((opt = getopt(argc, argv, "v:p:n:s:a:")) != -1) {
		switch (opt) {
		case 'v': victim = (pid_t)atol(optarg); break;
		case 'p': ctls = optarg; break;
		case 'n': n = atoi(optarg); break;
		case 's': secret = optarg; break;
		case 'a': alarm_s = (unsigned)atoi(optarg); break;
		default: return 2;
		}
	}
	alarm(alarm_s);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (strcmp(mode, "plant") == 0)
		rc = plant(victim, n);
	else if (strcmp(mode, "squat") == 0)
		rc = ctls ? squat(victim, ctls, n) : -1;
	else if (strcmp(mode, "fifo") == 0)
		rc = fifos(victim);
	else if (strcmp(mode, "decoy") == 0)
		rc = decoys(n);
	else if (strcmp(mode, "hold") == 0)
		rc = create_own_stream() == 0 ? (printf("ready\n"), 0) : -1;
	else
		return 2;
	if (rc != 0) {
		printf("failed %s\n", strerror(errno));
		clean_up();
		return 1;
	}
	char line[128];
	while (fgets(line, sizeof line, stdin)) {
		if (strncmp(line, "truncate", 8) == 0)
			printf("truncated %d\n", truncate_all());
		else if (strncmp(line, "read", 4) == 0)
			read_stream();
		else if (strncmp(line, "quit", 4) == 0)
			break;
	}
	clean_up();
	return 0;
}
