/* diskuse.c - on disk there is no tmpfs size to stop a sandbox, so the
 * supervisor sums what the writable layer and workspace hold and ends the
 * sandbox when it passes the quota (checked every 50 to 500 ms, by the cost
 * of a walk). Every inode counts at least one 4 KiB block, so that a bomb of
 * empty files (no blocks at all) meets the quota too.
 *
 * Nothing the sandbox makes may hide from the walk: not a mode (a directory
 * made 0000 or 0300), not depth. So the walk runs in a child process that
 * makes a user namespace of its own, mapping the host uid and gid the
 * sandbox's namespace maps: CAP_DAC_READ_SEARCH there covers every file the
 * sandbox can own, as it covers them for the sandbox's root. (A child: a
 * process must be single-threaded to enter a user namespace, and the
 * supervisor has the proxy's resolver threads. A namespace of its own
 * rather than the sandbox's: that one cannot be opened once the sandbox's
 * init is non-dumpable, and both map the same two ids.) The walk is
 * iterative and holds a bounded window of open directories; deeper ones are
 * reopened through ".." (checked by inode) on the way back up. What it still
 * cannot count ends the sandbox. Past the fork the child makes system calls
 * only: no allocation, no locks another thread may have held. */
#define _GNU_SOURCE
#include "sandbox/diskuse.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A walk that keeps meeting a moving tree is given up after this many. */
#define ATTEMPTS 3

struct dent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

struct frame {
	int fd;     /* -1 while outside the window of open directories */
	int resume; /* read on from off (after a subdirectory) */
	uint64_t ino;
	int64_t off;
};

struct walk {
	struct frame *f; /* mmap'd: no malloc in the forked child */
	size_t cap, depth, lowest_open, window;
	dev_t dev;
	uint64_t limit;
	int strict; /* what cannot be read ends the walk (else it is skipped) */
	int raced;  /* the tree moved under the walk: walk again */
	struct sbx_diskuse *du;
};

/* Appends s (at most max bytes of it), printable ASCII only. */
static void put(struct sbx_diskuse *du, const char *s, size_t max)
{
	size_t n = strlen(du->what);

	for (; *s && max && n + 1 < sizeof(du->what); s++, max--) {
		unsigned char c = (unsigned char)*s;
		du->what[n++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	du->what[n] = '\0';
}

static void put_num(struct sbx_diskuse *du, uint64_t v)
{
	char buf[24];
	size_t i = sizeof(buf) - 1;

	buf[i] = '\0';
	do
		buf[--i] = (char)('0' + v % 10);
	while ((v /= 10) && i);
	put(du, buf + i, sizeof(buf));
}

static void fail(struct walk *w, int e, const char *what)
{
	w->du->errnum = e ? e : EIO;
	w->du->what[0] = '\0';
	put(w->du, what, sizeof(w->du->what));
}

/* The same in the walk: names the entry (if any) and how deep it is. */
static void fail_at(struct walk *w, int e, const char *what, const char *name)
{
	fail(w, e, what);
	if (name) {
		put(w->du, " '", 2);
		put(w->du, name, 64);
		put(w->du, "'", 1);
	}
	put(w->du, " (", 2);
	put_num(w->du, w->depth + (name != NULL));
	put(w->du, " levels down)", 13);
}

static int grow(struct walk *w)
{
	size_t cap = w->cap ? w->cap * 2 : 1024;
	void *p = w->f ? mremap(w->f, w->cap * sizeof(*w->f), cap * sizeof(*w->f), MREMAP_MAYMOVE)
		       : mmap(NULL, cap * sizeof(*w->f), PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -1;
	w->f = p;
	w->cap = cap;
	return 0;
}

/* Into a subdirectory; the shallowest open one leaves the window. */
static int push(struct walk *w, int fd, uint64_t ino)
{
	if (w->depth + 1 >= w->cap && grow(w) < 0) {
		close(fd);
		fail_at(w, ENOMEM, "keep track of the directories", NULL);
		return -1;
	}
	w->f[++w->depth] = (struct frame){ .fd = fd, .ino = ino };
	if (w->depth - w->lowest_open >= w->window) {
		close(w->f[w->lowest_open].fd);
		w->f[w->lowest_open++].fd = -1;
	}
	return 0;
}

/* Back up to the parent: 0, or 1 when the walk is done, -1 when the tree
 * moved (the parent reached through ".." is not the one walked down). */
static int pop(struct walk *w)
{
	struct frame *cur = &w->f[w->depth], *up = cur - 1;
	struct stat st;

	if (w->depth == 0)
		return 1;
	if (up->fd < 0) {
		up->fd = openat(cur->fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (up->fd < 0 || fstat(up->fd, &st) < 0 || st.st_dev != w->dev || st.st_ino != up->ino) {
			if (up->fd >= 0)
				close(up->fd);
			up->fd = -1;
			w->raced = 1;
			return -1;
		}
		w->lowest_open = w->depth - 1;
	}
	close(cur->fd);
	w->depth--;
	return 0;
}

/* One entry, counted: 1 with *sub open when it is a directory to walk
 * into, 0 to go on, -1 to stop (over the limit, or it cannot be counted). */
static int entry(struct walk *w, const char *name, int *sub, uint64_t *ino)
{
	int dfd = w->f[w->depth].fd;
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno == ENOENT || !w->strict)
			return 0; /* gone since the directory was read */
		fail_at(w, errno, "stat", name);
		return -1;
	}
	if (st.st_dev != w->dev)
		return 0;
	uint64_t b = (uint64_t)st.st_blocks * 512;
	w->du->bytes += b > DISKUSE_INODE_BYTES ? b : DISKUSE_INODE_BYTES;
	if (w->du->bytes > w->limit) {
		w->du->over = 1;
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return 0;
	*sub = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*sub < 0) {
		if (errno == ENOENT || errno == ENOTDIR || errno == ELOOP || !w->strict)
			return 0; /* replaced since the stat */
		fail_at(w, errno, "open the directory", name);
		return -1;
	}
	*ino = st.st_ino;
	return 1;
}

/* The entries of one read: 0 when all were counted, 1 after stepping into
 * a subdirectory (the rest is read again from its position), -1 to stop. */
static int batch(struct walk *w, const char *buf, long n)
{
	for (long pos = 0; pos < n;) {
		const struct dent64 *d = (const struct dent64 *)(buf + pos);
		uint64_t ino = 0;
		int sub = -1, r;

		pos += d->d_reclen;
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		if ((r = entry(w, d->d_name, &sub, &ino)) <= 0) {
			if (r < 0)
				return -1;
			continue;
		}
		w->f[w->depth].off = d->d_off;
		w->f[w->depth].resume = 1;
		return push(w, sub, ino) < 0 ? -1 : 1;
	}
	return 0;
}

static void walk_tree(struct walk *w)
{
	char buf[32768] __attribute__((aligned(8)));

	for (;;) {
		struct frame *f = &w->f[w->depth];
		long n = -1;

		if (!f->resume || lseek(f->fd, f->off, SEEK_SET) >= 0)
			n = syscall(SYS_getdents64, f->fd, buf, sizeof(buf));
		f->resume = 0;
		if (n < 0 && w->strict) {
			fail_at(w, errno, "read a directory", NULL);
			return;
		}
		if (n > 0 && batch(w, buf, n) < 0)
			return;
		if (n <= 0 && pop(w) != 0)
			return;
	}
}

static size_t window(void)
{
	struct rlimit rl;
	size_t n = 128;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur / 4 < n)
		n = rl.rlim_cur / 4;
	return n < 4 ? 4 : n;
}

/* One walk below dirfd; again while the tree moves under it. */
static void measure(int dirfd, uint64_t limit, int strict, struct sbx_diskuse *du)
{
	for (int attempt = 1;; attempt++) {
		struct walk w = { .limit = limit, .strict = strict, .du = du, .window = window() };
		struct stat st;
		int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		memset(du, 0, sizeof(*du));
		if (fd < 0 || fstat(fd, &st) < 0 || grow(&w) < 0) {
			fail(&w, errno, "open the writable layer");
			if (fd >= 0)
				close(fd);
			return;
		}
		w.dev = st.st_dev;
		w.f[0] = (struct frame){ .fd = fd, .ino = st.st_ino };
		walk_tree(&w);
		for (size_t i = w.lowest_open; i <= w.depth; i++)
			if (w.f[i].fd >= 0)
				close(w.f[i].fd);
		munmap(w.f, w.cap * sizeof(*w.f));
		if (!w.raced)
			return;
		if (attempt == ATTEMPTS) {
			fail(&w, ESTALE, "finish a walk: the tree kept moving");
			return;
		}
	}
}

int diskuse_bytes_at(int dirfd, const char *dir, uint64_t *out)
{
	struct sbx_diskuse du;
	int fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -1;
	measure(fd, UINT64_MAX, 0, &du);
	close(fd);
	*out = du.bytes;
	return du.errnum && !du.bytes ? -1 : 0;
}

static int write_proc(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));
	int e = errno;

	if (fd >= 0)
		close(fd);
	errno = e;
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The walker's own user namespace, mapping what the sandbox's maps. */
static int own_userns(const char *umap, const char *gmap)
{
	if (unshare(CLONE_NEWUSER) < 0 || write_proc("/proc/self/setgroups", "deny") < 0 ||
	    write_proc("/proc/self/uid_map", umap) < 0 || write_proc("/proc/self/gid_map", gmap) < 0)
		return -1;
	return 0;
}

static __attribute__((noreturn)) void walker_main(int dirfd, int out, const char *umap,
						  const char *gmap, uint64_t limit, int strict)
{
	struct sbx_diskuse du = { 0 };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (own_userns(umap, gmap) < 0) {
		struct walk w = { .du = &du };
		fail(&w, errno, "make the walk's user namespace");
	} else {
		measure(dirfd, limit, strict, &du);
	}
	_exit(write(out, &du, sizeof(du)) == (ssize_t)sizeof(du) ? 0 : 1);
}

static int cannot(struct sbx_diskuse *du, int e, const char *what)
{
	struct walk w = { .du = du };

	memset(du, 0, sizeof(*du));
	fail(&w, e, what);
	return 1;
}

/* One walk in a child with CAP_DAC_READ_SEARCH over what uid and gid own
 * (root walks itself: it has the capability, and threads do not matter). */
static int walk_as(int dirfd, uid_t uid, gid_t gid, uint64_t limit, int strict, struct sbx_diskuse *du)
{
	char umap[32], gmap[32];
	int p[2];
	ssize_t n = 0, r;

	memset(du, 0, sizeof(*du));
	if (geteuid() == 0) {
		measure(dirfd, limit, strict, du);
		return 0;
	}
	snprintf(umap, sizeof(umap), "0 %u 1\n", (unsigned)uid);
	snprintf(gmap, sizeof(gmap), "0 %u 1\n", (unsigned)gid);
	if (pipe2(p, O_CLOEXEC) < 0)
		return cannot(du, errno, "start the walk");
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		walker_main(dirfd, p[1], umap, gmap, limit, strict);
	}
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return cannot(du, errno, "start the walk");
	}
	while (n < (ssize_t)sizeof(*du) &&
	       ((r = read(p[0], (char *)du + n, sizeof(*du) - (size_t)n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? r : 0;
	close(p[0]);
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(*du))
		return cannot(du, EIO, "finish the walk: it ended without a result");
	return 0;
}

int diskuse_check(int dirfd, uid_t uid, gid_t gid, uint64_t quota, struct sbx_diskuse *du)
{
	walk_as(dirfd, uid, gid, quota, 1, du);
	return du->over || du->errnum;
}

int diskuse_owned_bytes_at(int dirfd, const char *dir, uint64_t *out)
{
	struct sbx_diskuse du;
	int fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	*out = 0;
	if (fd < 0)
		return -1;
	walk_as(fd, geteuid(), getegid(), UINT64_MAX, 0, &du);
	if (du.errnum && !du.bytes) /* no walk of our own: what this process reads */
		measure(fd, UINT64_MAX, 0, &du);
	close(fd);
	*out = du.bytes;
	return du.errnum && !du.bytes ? -1 : 0;
}

uint64_t diskuse_next_ms(uint64_t walk_ms, uint64_t used, uint64_t quota)
{
	uint64_t next = walk_ms * 20;

	if (used >= quota - quota / 4)
		next = walk_ms * 4;
	return next < 50 ? 50 : next > 500 ? 500 : next;
}
