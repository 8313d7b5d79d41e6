/* test_rmrf.c - rm_rf_at (base/util.c): a tree removed whole, unreadable
 * directories in it made removable through their own handles, never
 * through a name another process may swap for a symlink (the mode of what
 * a symlink names never changes, whatever the timing), and never a mount
 * below the tree entered. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "unit.h"

#define PAIRS 4

static char base[] = "/tmp/sbx-rmrf-XXXXXX";

/* The race made certain: the first stat of "d0" that finds a directory
 * swaps it with "s0", the symlink beside it, at once after (rm_rf_at
 * is linked into this binary: its calls come here). */
static int swap_armed;

int fstatat(int dirfd, const char *name, struct stat *st, int flags)
{
	int r = (int)syscall(SYS_newfstatat, dirfd, name, st, flags);

	if (r == 0 && swap_armed && !strcmp(name, "d0") && S_ISDIR(st->st_mode)) {
		swap_armed = 0;
		syscall(SYS_renameat2, dirfd, "d0", dirfd, "s0", RENAME_EXCHANGE);
	}
	return r;
}

static int bfd(void)
{
	return open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* t/dN, a directory of mode 0500 with a file in it, beside t/sN, a symlink
 * to target (a directory of mode 0500 outside t). */
static void make_tree(int b)
{
	char n[64];

	mkdirat(b, "t", 0700);
	for (int i = 0; i < PAIRS; i++) {
		snprintf(n, sizeof(n), "t/d%d", i);
		mkdirat(b, n, 0700);
		snprintf(n, sizeof(n), "t/d%d/f", i);
		close(openat(b, n, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
		snprintf(n, sizeof(n), "t/d%d", i);
		(void)!fchmodat(b, n, 0500, 0);
		snprintf(n, sizeof(n), "t/s%d", i);
		(void)!symlinkat("../target", b, n);
	}
}

/* Swaps each tN's dN and sN for ever (the parent kills it). */
static void racer(int b)
{
	char d[64], s[64];

	for (unsigned k = 0;; k++) {
		snprintf(d, sizeof(d), "t/d%u", k % PAIRS);
		snprintf(s, sizeof(s), "t/s%u", k % PAIRS);
		syscall(SYS_renameat2, b, d, b, s, RENAME_EXCHANGE);
	}
}

/* The swap between a stat and what follows it. */
static void test_a_symlink_swapped_in_after_a_stat(void)
{
	struct stat st;
	struct sbx_err err;
	int b = bfd();

	mkdirat(b, "target", 0500);
	make_tree(b);
	swap_armed = 1;
	rm_rf_at(b, "t", &err);
	swap_armed = 0;
	rm_rf_at(b, "t", &err);
	CHECK(fstatat(b, "target", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 07777) == 0500);
	CHECK(fstatat(b, "t", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	CHECK(unlinkat(b, "target", AT_REMOVEDIR) == 0);
	close(b);
}

/* Another process swapping names all the while. */
static void test_a_swapped_symlink_never_has_its_target_chmodded(void)
{
	struct stat st;
	struct sbx_err err;
	int b = bfd(), bad = 0, runs = 0;

	mkdirat(b, "target", 0500);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		make_tree(b);
		pid_t pid = fork();
		if (pid == 0)
			racer(b);
		rm_rf_at(b, "t", &err);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		rm_rf_at(b, "t", &err); /* what the race left */
		bad += fstatat(b, "target", &st, AT_SYMLINK_NOFOLLOW) < 0 || (st.st_mode & 07777) != 0500;
		(void)!fchmodat(b, "target", 0500, 0);
		runs++;
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while (!bad && (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 < 300);
	if (bad)
		fprintf(stderr, "the symlinks' target was chmodded in run %d\n", runs);
	CHECK(bad == 0);
	CHECK(fstatat(b, "t", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	CHECK(unlinkat(b, "target", AT_REMOVEDIR) == 0);
	close(b);
}

/* A read-only and an unreadable directory are removed; a symlink to a
 * directory goes as a link. */
static void test_modes_and_symlinks(void)
{
	struct stat st;
	struct sbx_err err;
	int b = bfd();

	mkdirat(b, "keep", 0755);
	mkdirat(b, "t", 0700);
	mkdirat(b, "t/ro", 0700);
	close(openat(b, "t/ro/f", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	mkdirat(b, "t/ro/none", 0700);
	close(openat(b, "t/ro/none/g", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
	(void)!fchmodat(b, "t/ro/none", 0, 0);
	(void)!fchmodat(b, "t/ro", 0500, 0);
	(void)!symlinkat("../keep", b, "t/link");
	(void)!fchmodat(b, "keep", 0555, 0);
	CHECK(rm_rf_at(b, "t", &err) == 0);
	CHECK(fstatat(b, "t", &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT);
	CHECK(fstatat(b, "keep", &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & 07777) == 0555);
	unlinkat(b, "keep", AT_REMOVEDIR);
	close(b);
}

static void write_map(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		(void)!write(fd, text, strlen(text));
		close(fd);
	}
}

/* In a user and mount namespace of its own (where allowed): a tmpfs
 * mounted below the tree is refused, what is on it untouched. */
static void test_a_mount_below_is_never_entered(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		struct sbx_err err;
		struct stat sb;
		char m[256];
		char map[64];
		uid_t uid = getuid();
		gid_t gid = getgid();
		if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
			_exit(77);
		/* our own ids inside, to write on the tmpfs */
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)uid, (unsigned)uid);
		write_map("/proc/self/uid_map", map);
		write_map("/proc/self/setgroups", "deny");
		snprintf(map, sizeof(map), "%u %u 1", (unsigned)gid, (unsigned)gid);
		write_map("/proc/self/gid_map", map);
		snprintf(m, sizeof(m), "%s/t/m", base);
		int b = bfd();
		mkdirat(b, "t", 0700);
		mkdirat(b, "t/m", 0700);
		if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || mount("t", m, "tmpfs", 0, NULL) < 0)
			_exit(77);
		close(openat(b, "t/m/precious", O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
		int r = rm_rf_at(b, "t", &err);
		int ok = r < 0 && strstr(err.msg, "mount point") && fstatat(b, "t/m/precious", &sb, 0) == 0;
		umount(m);
		rm_rf_at(b, "t", &err);
		_exit(ok ? 0 : 1);
	}
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 77)
		fprintf(stderr, "test_rmrf: no user namespace here: the mount test was not run\n");
	else
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(void)
{
	if (!mkdtemp(base))
		return 1;
	test_modes_and_symlinks();
	test_a_mount_below_is_never_entered();
	test_a_symlink_swapped_in_after_a_stat();
	test_a_swapped_symlink_never_has_its_target_chmodded();
	rmdir(base);
	return unit_done("test_rmrf");
}
