/* SPDX-License-Identifier: MIT */
/*
 * tree_thief: a member of a traced tree, run as another user, that attacks
 * without the library (t_isolation).  It uses every descriptor its
 * ancestors passed down through exec as a hostile program would: each
 * posixtrace memfd it tries to map, and to open again through
 * /proc/self/fd, read-only and read-write; from each socket (an ancestor's
 * channel) it takes every message waiting and tries the same on each
 * descriptor they carry.  What it maps is searched for the secret.  Files
 * of its own user are not counted: they are its own.
 *
 *   tree_thief -s SECRET
 *
 * prints one line and exits 0:
 *   thief lib=L memfds=M sockets=S received=R opened=O mapped=P secret=X
 * L is 1 when libposixtrace is loaded in it (the test wants it 0: this
 * program does not use the library), M the memfds it inherited, S its
 * sockets, R the descriptors it took off them, O the openings that
 * succeeded, P the mappings, X the mappings holding the secret.
 */
#include <dirent.h>
#include <poll.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *secret = "";
static int opened, mapped, found;

static int library_loaded(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int loaded = 0;
	while (f && fgets(line, sizeof line, f))
		loaded |= strstr(line, "libposixtrace") != NULL;
	if (f)
		fclose(f);
	return loaded;
}

static int is_memfd(int fd)
{
	char path[64], link[256];
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	ssize_t n = readlink(path, link, sizeof link - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	return strncmp(link, "/memfd:posixtrace-", 18) == 0;
}

static void try_map(int fd, int prot)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || st.st_size <= 0)
		return;
	void *p = mmap(NULL, (size_t)st.st_size, prot, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	mapped++;
	found += *secret && memmem(p, (size_t)st.st_size, secret, strlen(secret)) != NULL;
	munmap(p, (size_t)st.st_size);
}

/* Every way in to the file behind fd, unless it is its own user's. */
static void attack(int fd)
{
	char path[64];
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_uid == getuid())
		return;
	try_map(fd, PROT_READ);
	snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
	int ro = open(path, O_RDONLY | O_CLOEXEC);
	int rw = open(path, O_RDWR | O_CLOEXEC);
	if (ro >= 0) {
		opened++;
		try_map(ro, PROT_READ);
		close(ro);
	}
	if (rw >= 0) {
		opened++;
		try_map(rw, PROT_READ | PROT_WRITE);
		close(rw);
	}
}

/* Takes every message waiting on socket s: what an ancestor's channel
 * holds for it.  Returns the descriptors received. */
static int drain_socket(int s)
{
	int received = 0;
	for (int i = 0; i < 64; i++) {
		char data[256];
		union {
			struct cmsghdr h;
			char buf[CMSG_SPACE(8 * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
		} u;
		struct iovec iov = {.iov_base = data, .iov_len = sizeof data};
		struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf,
		                    .msg_controllen = sizeof u.buf};
		if (recvmsg(s, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
			break;
		for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c)) {
			if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
				continue;
			size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
			for (size_t k = 0; k < n; k++) {
				int fd;
				memcpy(&fd, CMSG_DATA(c) + k * sizeof fd, sizeof fd);
				received++;
				attack(fd);
				close(fd);
			}
		}
	}
	return received;
}

int main(int argc, char **argv)
{
	for (int o; (o = getopt(argc, argv, "s:")) != -1;)
		if (o == 's')
			secret = optarg;
	int memfds = 0, sockets = 0, received = 0;
	int fds[1024], n = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d)) != NULL && n < 1024;)
		if (e->d_name[0] >= '0' && e->d_name[0] <= '9' && atoi(e->d_name) != dirfd(d))
			fds[n++] = atoi(e->d_name);
	if (d)
		closedir(d);
	for (int i = 0; i < n; i++) {
		struct stat st;
		if (is_memfd(fds[i])) {
			memfds++;
			attack(fds[i]);
		} else if (fstat(fds[i], &st) == 0 && S_ISSOCK(st.st_mode)) {
			sockets++;
			received += drain_socket(fds[i]);
		}
	}
	/* A controller that cannot reach its target at once leaves the offer
	 * to the stream's keeper (keeper.c), which may not have run yet on a
	 * loaded machine: wait for it (10 s at most) rather than report an
	 * empty channel as nothing to attack. */
	if (received == 0 && sockets > 0) {
		struct pollfd p[64];
		nfds_t np = 0;
		for (int i = 0; i < n && np < 64; i++) {
			struct stat st;
			if (!is_memfd(fds[i]) && fstat(fds[i], &st) == 0 && S_ISSOCK(st.st_mode))
				p[np++] = (struct pollfd){.fd = fds[i], .events = POLLIN};
		}
		if (poll(p, np, 10000) > 0)
			for (nfds_t i = 0; i < np; i++)
				if (p[i].revents & POLLIN)
					received += drain_socket(p[i].fd);
	}
	printf("thief lib=%d memfds=%d sockets=%d received=%d opened=%d mapped=%d secret=%d\n",
	       library_loaded(), memfds, sockets, received, opened, mapped, found);
	return 0;
}
