/* fuseroot.c - the root the fuse-overlayfs daemon (fuselayer.c) runs in.
 *
 * The daemon starts in a private copy of the sandbox's mount namespace taken
 * before pivot_root: the host's whole tree, with the staging tmpfs at /tmp.
 * It needs little of that: its binary, the loader and the libraries, the
 * image (lower), the writable layer, and a /proc (fuse-overlayfs works
 * through /proc/self/fd). So it gets a small tmpfs of its own holding only
 * those, bound in from the copy (read-only but the layer), with a /proc of
 * the pid namespace made for it alone (fuselayer.c), and pivots into it; the old root is detached, so nothing of the user's home or
 * of the rest of the host stays reachable by path. With mount, pivot_root,
 * open_tree and open_by_handle_at denied by its seccomp filter afterwards, it
 * cannot get back.
 *
 * Sources are cloned with open_tree() first: the new tmpfs is mounted over
 * /tmp, which hides the staging dirs there. Each clone is recursive (a
 * non-recursive bind of a mount with locked submounts fails in a user
 * namespace) and made read-only with mount_setattr(), which only adds flags
 * and so keeps those the kernel locked. Where mount_setattr() is missing
 * (Linux 5.11), a read-only bind remount that repeats the locked flags. */
#define _GNU_SOURCE
#include "sandbox/fuseroot.h"
#include "sandbox/mountflags.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"

#define FUSEROOT_BIN "/fuse-overlayfs"

#define RO_EXEC (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define RO_DATA (RO_EXEC | MOUNT_ATTR_NOEXEC)

/* What the daemon sees, and nothing else. /bin, /sbin, /lib and /lib64 are
 * symlinks on a merged-/usr host and are copied as such. /dev/null: libfuse
 * opens it to make sure fds 0-2 are open. */
static const struct fuseroot_src {
	const char *src, *dst;
	uint64_t attr;
	int optional;
} sources[] = {
	{ "/tmp/lower", "lower", RO_DATA, 0 },
	/* upper and work in one mount: fuse-overlayfs renames from one into the
	 * other, which fails with EXDEV across two bind mounts */
	{ "/tmp/layer", "layer", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0 },
	{ "/usr", "usr", RO_EXEC, 0 },
	{ "/bin", "bin", RO_EXEC, 1 },
	{ "/sbin", "sbin", RO_EXEC, 1 },
	{ "/lib", "lib", RO_EXEC, 1 },
	{ "/lib64", "lib64", RO_EXEC, 1 },
	{ "/etc/ld.so.cache", "etc/ld.so.cache", RO_DATA, 1 },
	{ "/dev/null", "dev/null", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0 },
};

#define N_TREES (ARRAY_SIZE(sources) + 1) /* and the binary */

struct fuseroot_tree {
	int fd;            /* detached clone, or -1 */
	char link[64];     /* or a symlink to copy, or "" */
	const char *dst;
	uint64_t attr;
};

static int clone_tree(const char *src, const char *dst, uint64_t attr, int optional,
		      struct fuseroot_tree *t)
{
	struct stat st;

	*t = (struct fuseroot_tree){ .fd = -1, .dst = dst, .attr = attr };
	if (lstat(src, &st) < 0)
		return optional && errno == ENOENT ? 0 : -1;
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlink(src, t->link, sizeof(t->link) - 1);
		if (n <= 0 || (size_t)n >= sizeof(t->link) - 1)
			return -1;
		t->link[n] = '\0';
		return 0;
	}
	t->fd = (int)syscall(SYS_open_tree, AT_FDCWD, src,
			     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_SYMLINK_NOFOLLOW);
	if (t->fd < 0)
		return -1;
	struct mount_attr ma = { .attr_set = attr };
	if (syscall(SYS_mount_setattr, t->fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &ma, sizeof(ma)) == 0)
		t->attr = 0; /* done */
	else if (errno != ENOSYS)
		return -1;
	return 0;
}

/* Linux 5.11: a read-only bind remount must repeat the flags the kernel
 * locked (nosuid, nodev, noexec, atime), or it fails with EPERM. */
static int remount_ro(int dirfd, const char *dst, uint64_t attr)
{
	char path[64];
	struct statvfs sv;
	_cleanup_close_ int fd = openat(dirfd, dst, O_PATH | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstatvfs(fd, &sv) < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	unsigned long fl = MS_BIND | MS_REMOUNT | mountflags_locked(&sv) |
			   (attr & MOUNT_ATTR_RDONLY ? MS_RDONLY : 0) |
			   (attr & MOUNT_ATTR_NOSUID ? MS_NOSUID : 0) |
			   (attr & MOUNT_ATTR_NODEV ? MS_NODEV : 0) |
			   (attr & MOUNT_ATTR_NOEXEC ? MS_NOEXEC : 0);
	return mount(NULL, path, NULL, fl, NULL);
}

/* Places one clone (or symlink) at its name below the new root. */
static int place(int rootfd, const struct fuseroot_tree *t)
{
	const char *slash = strrchr(t->dst, '/');

	if (t->fd < 0 && !t->link[0])
		return 0; /* an optional source this host does not have */
	if (slash) {
		char parent[32];
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - t->dst), t->dst);
		if (mkdirat(rootfd, parent, 0755) < 0 && errno != EEXIST)
			return -1;
	}
	if (t->link[0])
		return symlinkat(t->link, rootfd, t->dst);
	struct stat st;
	if (fstat(t->fd, &st) < 0)
		return -1;
	if (S_ISDIR(st.st_mode) ? mkdirat(rootfd, t->dst, 0755) < 0
				: mknodat(rootfd, t->dst, S_IFREG | 0644, 0) < 0)
		return -1;
	if (syscall(SYS_move_mount, t->fd, "", rootfd, t->dst, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return -1;
	return t->attr ? remount_ro(rootfd, t->dst, t->attr) : 0;
}

static void close_trees(struct fuseroot_tree *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].fd >= 0)
			close(t[i].fd);
}

/* The new root: a tiny tmpfs over /tmp (what is below is cloned already),
 * filled, then pivoted into; the old root is detached, the new one made
 * read-only (the layer, a mount of its own, stays writable). */
static int build_and_pivot(struct fuseroot_tree *trees, size_t n)
{
	if (mount("sbxfuse", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=0755,size=64k,nr_inodes=64") < 0)
		return -1;
	_cleanup_close_ int rootfd = open("/tmp", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (place(rootfd, &trees[i]) < 0)
			return -1;
	/* fuse-overlayfs reads /proc/sys/kernel/overflow[ug]id, works through
	 * /proc/self/fd and checks that /proc is a writable procfs; this one
	 * shows only the daemon's own pid namespace */
	if (mkdirat(rootfd, "proc", 0555) < 0 ||
	    mount("proc", "/tmp/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return -1;
	if (fchdir(rootfd) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
	    umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		return -1;
	return mount(NULL, "/", NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		     NULL);
}

int fuseroot_enter(const char *bin)
{
	struct fuseroot_tree trees[N_TREES];
	size_t n = ARRAY_SIZE(sources);
	int r = -1;

	for (size_t i = 0; i < N_TREES; i++)
		trees[i] = (struct fuseroot_tree){ .fd = -1 };
	/* nothing of this must propagate back into the sandbox's namespace */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (clone_tree(sources[i].src, sources[i].dst, sources[i].attr, sources[i].optional,
			       &trees[i]) < 0)
			goto out;
	if (fuseroot_exec_path(bin) != bin && clone_tree(bin, &FUSEROOT_BIN[1], RO_EXEC, 0, &trees[n++]) < 0)
		goto out;
	r = build_and_pivot(trees, n);
out:
	close_trees(trees, N_TREES);
	return r;
}

const char *fuseroot_exec_path(const char *bin)
{
	static const char *const covered[] = { "/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/" };

	for (size_t i = 0; i < ARRAY_SIZE(covered); i++)
		if (!strncmp(bin, covered[i], strlen(covered[i])))
			return bin;
	return FUSEROOT_BIN;
}
