/* test_diskuse.c - the disk walker: every depth (past its window of open
 * directories, reopened through ".."), wide directories read in several
 * parts around subdirectories, the early stop past the limit, and what a
 * mode hides from the caller but not from the walk in its own user
 * namespace; then rm_rf_at removes it all with few fds. Run as root, it drops to nobody first: the walk is meant for
 * an unprivileged supervisor. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/diskuse.h"
#include "unit.h"

#define DEEP 700

static uint64_t ref_sum;

static int ref_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)path;
	(void)flag;
	if (ftw->level > 0) {
		uint64_t b = (uint64_t)st->st_blocks * 512;
		ref_sum += b > DISKUSE_INODE_BYTES ? b : DISKUSE_INODE_BYTES;
	}
	return 0;
}

/* What the walker should find, by the C library's own (path-based) walk. */
static uint64_t reference(const char *dir)
{
	ref_sum = 0;
	CHECK(nftw(dir, ref_one, 16, FTW_PHYS | FTW_MOUNT) == 0);
	return ref_sum;
}

static void write_file(int dfd, const char *name, size_t size)
{
	static char buf[65536];
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	memset(buf, 'x', sizeof(buf));
	for (size_t n = 0; fd >= 0 && n < size; n += sizeof(buf))
		if (write(fd, buf, size - n < sizeof(buf) ? size - n : sizeof(buf)) <= 0)
			fd = -1 - fd;
	CHECK(fd >= 0);
	if (fd >= 0)
		close(fd);
}

/* A wide directory (several reads of entries) with subdirectories among
 * its entries, and a chain DEEP directories down with a file now and then. */
static void build(int root)
{
	char name[32];
	int wide, fd;

	CHECK(mkdirat(root, "wide", 0755) == 0);
	wide = openat(root, "wide", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (int i = 0; i < 2000; i++) {
		snprintf(name, sizeof(name), "entry-number-%04d", i);
		if (i % 97 == 0) {
			CHECK(mkdirat(wide, name, 0755) == 0);
			int sub = openat(wide, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			write_file(sub, "inside", 20000);
			close(sub);
		} else {
			write_file(wide, name, i % 5 == 0 ? 5000 : 0);
		}
	}
	close(wide);
	fd = dup(root);
	for (int d = 0; d < DEEP; d++) {
		CHECK(mkdirat(fd, "d", 0755) == 0);
		if (d % 50 == 0)
			write_file(fd, "f", 100000);
		int next = openat(fd, "d", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	write_file(fd, "bottom", 3 << 20);
	close(fd);
}

static long us_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000L + (t.tv_nsec - t0->tv_nsec) / 1000;
}

static void test_deep_and_wide(const char *dir, int root)
{
	struct sbx_diskuse du;
	uint64_t want = reference(dir), got = 0;
	struct timespec t0;

	CHECK(want > (3u << 20) + DEEP * DISKUSE_INODE_BYTES);
	CHECK(diskuse_bytes_at(root, ".", &got) == 0);
	CHECK(got == want);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(diskuse_check(root, geteuid(), getegid(), UINT64_MAX - 1, &du) == 0);
	printf("test_diskuse: a walk of %d directories, %d entries: %ld us\n", DEEP + 22,
	       DEEP + 2030, us_since(&t0));
	CHECK(du.errnum == 0 && !du.over);
	CHECK(du.bytes == want);
	/* past the limit the walk stops there */
	CHECK(diskuse_check(root, geteuid(), getegid(), want / 2, &du) == 1);
	CHECK(du.over && du.errnum == 0 && du.bytes > want / 2 && du.bytes <= want);
}

/* A 0000 directory and a 0300 one (write and search, no read) hide their
 * content from their owner's plain walk, not from diskuse_check. */
static void test_modes(const char *dir, int root)
{
	struct sbx_diskuse du;
	uint64_t plain = 0, want;
	int fd;

	CHECK(mkdirat(root, "closed", 0755) == 0 && mkdirat(root, "wonly", 0755) == 0);
	fd = openat(root, "closed", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(mkdirat(fd, "deeper", 0700) == 0);
	int in = openat(fd, "deeper", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	write_file(in, "big", 2 << 20);
	close(in);
	close(fd);
	fd = openat(root, "wonly", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	write_file(fd, "big", 2 << 20);
	close(fd);
	want = reference(dir);
	CHECK(fchmodat(root, "closed", 0000, 0) == 0 && fchmodat(root, "wonly", 0300, 0) == 0);
	CHECK(diskuse_bytes_at(root, ".", &plain) == 0);
	CHECK(plain < want - (4u << 20));
	CHECK(diskuse_check(root, geteuid(), getegid(), UINT64_MAX - 1, &du) == 0);
	CHECK(du.errnum == 0);
	CHECK(du.bytes == want);
	CHECK(diskuse_check(root, geteuid(), getegid(), want - (1u << 20), &du) == 1 && du.over);
	/* a uid the walk does not map: what it cannot open ends the sandbox */
	CHECK(diskuse_check(root, geteuid() + 1, getegid(), UINT64_MAX - 1, &du) == 1);
	CHECK(du.errnum != 0);
	if (du.errnum == EACCES)
		CHECK_CONTAINS(du.what, "open the directory '");
}

/* What the walk's own process and user namespace cost, on an empty tree. */
static void test_cost(int root)
{
	struct sbx_diskuse du;
	struct timespec t0;
	uint64_t b;
	long inproc, child;
	int empty;

	CHECK(mkdirat(root, "empty", 0755) == 0);
	empty = openat(root, "empty", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 100; i++)
		CHECK(diskuse_bytes_at(empty, ".", &b) == 0 && b == 0);
	inproc = us_since(&t0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 100; i++)
		CHECK(diskuse_check(empty, geteuid(), getegid(), 1, &du) == 0 && du.bytes == 0);
	child = us_since(&t0);
	printf("test_diskuse: an empty walk: %ld us in process, %ld us in its own process and "
	       "user namespace\n", inproc / 100, child / 100);
	close(empty);
}

static int run_all(void)
{
	char dir[] = "/tmp/sbxrun-test-diskuse-XXXXXX";
	char cmd[128];

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	int root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	build(root);
	test_deep_and_wide(dir, root);
	test_modes(dir, root);
	test_cost(root);
	close(root);
	/* and the layer goes, 0000 directories, depth and all, with few fds */
	struct rlimit rl = { 256, 256 };
	struct sbx_err err = { 0 };
	CHECK(setrlimit(RLIMIT_NOFILE, &rl) == 0);
	CHECK(rm_rf_at(AT_FDCWD, dir, &err) == 0);
	if (err.msg[0])
		fprintf(stderr, "rm_rf_at: %s: %s\n", err.msg, strerror(err.errnum));
	CHECK(access(dir, F_OK) < 0 && errno == ENOENT);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	(void)!system(cmd);
	return unit_done("test_diskuse");
}

int main(void)
{
	if (geteuid() != 0)
		return run_all();
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setgid(65534) < 0 || setuid(65534) < 0) {
			perror("test_diskuse: become nobody");
			_exit(1);
		}
		/* as sbxrun is, after an exec: its /proc files are its own */
		prctl(PR_SET_DUMPABLE, 1);
		int r = run_all();
		fflush(stdout);
		_exit(r);
	}
	int status = 1;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
