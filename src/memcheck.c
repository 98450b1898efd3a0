/* SPDX-License-Identifier: MIT */
/*
 * How much memory this process may still use.  A memory cgroup enforces its
 * limit with the OOM killer, not with an error, and shared memory beyond
 * what the machine has is the same: so the memory a stream commits is
 * checked against the cgroup's headroom, the memory available and
 * RLIMIT_AS before any of it is committed, and ENOMEM is the answer when it
 * does not fit (posix_trace_create, ERRORS).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "memcheck.h"

#define MARGIN (8ull << 20) /* left for everything else the process does */
#define UNLIMITED UINT64_MAX

ssize_t pt_read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return n;
}

/* A number file: "max" (cgroup v2) and huge values are unlimited. */
static uint64_t read_u64(const char *path)
{
	char buf[64];
	if (pt_read_text(path, buf, sizeof buf) < 0 || strncmp(buf, "max", 3) == 0)
		return UNLIMITED;
	unsigned long long v = strtoull(buf, NULL, 10);
	return v >= (1ull << 62) ? UNLIMITED : v;
}

/* A "key value" line of a memory.stat or /proc/meminfo style file. */
static uint64_t read_key(const char *path, const char *key)
{
	char buf[4096];
	size_t klen = strlen(key);
	if (pt_read_text(path, buf, sizeof buf) < 0)
		return 0;
	for (char *p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) == 0 && (p[klen] == ' ' || p[klen] == ':'))
			return strtoull(p + klen + 1 + strspn(p + klen + 1, " :"), NULL, 10);
	}
	return 0;
}

static uint64_t room(uint64_t limit, uint64_t used)
{
	if (limit == UNLIMITED)
		return UNLIMITED;
	return limit > used ? limit - used : 0;
}

/* cgroup v2: the tightest level from this process's cgroup up to the root. */
static uint64_t v2_room(const char *rel)
{
	char dir[512], path[600];
	uint64_t best = UNLIMITED;
	snprintf(dir, sizeof dir, "/sys/fs/cgroup%s", rel);
	for (;;) {
		snprintf(path, sizeof path, "%s/memory.max", dir);
		uint64_t max = read_u64(path);
		if (max != UNLIMITED) {
			snprintf(path, sizeof path, "%s/memory.current", dir);
			uint64_t cur = read_u64(path);
			snprintf(path, sizeof path, "%s/memory.stat", dir);
			uint64_t cache = read_key(path, "inactive_file");
			uint64_t r = room(max, cur > cache ? cur - cache : 0);
			if (r < best)
				best = r;
		}
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir || strcmp(dir, "/sys/fs/cgroup") == 0)
			break;
		*slash = '\0';
	}
	return best;
}

/* cgroup v1: the memory controller's own hierarchical limit. */
static uint64_t v1_room(const char *rel)
{
	char path[600];
	snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.limit_in_bytes", rel);
	uint64_t limit = read_u64(path);
	snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.stat", rel);
	uint64_t hier = read_key(path, "hierarchical_memory_limit");
	uint64_t cache = read_key(path, "total_inactive_file");
	if (hier && hier < limit)
		limit = hier >= (1ull << 62) ? UNLIMITED : hier;
	snprintf(path, sizeof path, "/sys/fs/cgroup/memory%s/memory.usage_in_bytes", rel);
	uint64_t used = read_u64(path);
	if (used == UNLIMITED)
		return UNLIMITED;
	return room(limit, used > cache ? used - cache : 0);
}

static uint64_t cgroup_room(void)
{
	char buf[2048], *save = NULL;
	uint64_t best = UNLIMITED;
	if (pt_read_text("/proc/self/cgroup", buf, sizeof buf) < 0)
		return UNLIMITED;
	for (char *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		*c2 = '\0';
		const char *ctrls = c1 + 1, *rel = c2 + 1;
		uint64_t r = UNLIMITED;
		if (strcmp(line, "0") == 0 && *ctrls == '\0')
			r = v2_room(strcmp(rel, "/") == 0 ? "" : rel);
		else if (strstr(ctrls, "memory"))
			r = v1_room(strcmp(rel, "/") == 0 ? "" : rel);
		if (r < best)
			best = r;
	}
	return best;
}

static uint64_t available_memory(void)
{
	uint64_t kb = read_key("/proc/meminfo", "MemAvailable") + read_key("/proc/meminfo", "SwapFree");
	return kb ? kb * 1024 : UNLIMITED;
}

/* Address space this process may still map (RLIMIT_AS). */
uint64_t pt_as_room(void)
{
	struct rlimit rl;
	char buf[128];
	if (getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return UNLIMITED;
	unsigned long long pages = 0;
	if (pt_read_text("/proc/self/statm", buf, sizeof buf) >= 0)
		pages = strtoull(buf, NULL, 10);
	uint64_t used = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
	return room((uint64_t)rl.rlim_cur, used);
}

/* The largest file this process may make (RLIMIT_FSIZE): a memfd sized
 * beyond it would fail, and raise SIGXFSZ in the caller. */
uint64_t pt_file_room(void)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY)
		return UNLIMITED;
	return (uint64_t)rl.rlim_cur;
}

int pt_mem_headroom(uint64_t bytes, uint64_t address_space)
{
	if (address_space && address_space > pt_as_room())
		return ENOMEM;
	uint64_t need = bytes + MARGIN;
	if (need < bytes || need > available_memory() || need > cgroup_room())
		return ENOMEM;
	return 0;
}
