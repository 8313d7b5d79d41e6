/* snapshot_copy.c - copies a session's writable layer (the overlay's upper
 * directory, read through the staging directory's fd) into a snapshot as
 * the overlay wrote it: whiteouts and the user.overlay.* attributes kept,
 * so that the copy is a lower layer of a fork. Files are reflinked (FICLONE)
 * where the file system shares extents, else only their data regions are
 * copied (SEEK_DATA/SEEK_HOLE): a 1 TB sparse file costs its data. All the
 * copy writes counts against a cap (the user's, snapshot.h). */
#define _GNU_SOURCE
#include "undo/snapshot_copy.h"

#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"

#define XATTR_LIST_MAX_BYTES 65536
#define XATTR_VALUE_MAX_BYTES 65536
/* what an inode costs, counted toward the cap whatever its data */
#define INODE_COST 512

static int charge(struct snapcopy *c, uint64_t bytes, struct sbx_err *err)
{
	c->used += bytes;
	if (c->cap && c->used > c->cap)
		return err_set(err, EDQUOT, "snapshot: past the cap of snapshots at '%s'", c->path);
	return 0;
}

/* Root's copy keeps the owner (the sandbox's host uid, sandbox/plan.c), so
 * that a fork's sandbox owns what it forks from; anyone else's copy is
 * theirs already. */
static int owner(int dirfd, const char *name, const struct stat *st)
{
	if (geteuid() != 0)
		return 0;
	return fchownat(dirfd, name, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW | (*name ? 0 : AT_EMPTY_PATH));
}

/* The user.* attributes of in (an open fd) onto out. */
static int copy_xattrs(struct snapcopy *c, int in, int out, struct sbx_err *err)
{
	if (!c->xlist) {
		c->xlist = xmalloc(XATTR_LIST_MAX_BYTES);
		c->xval = xmalloc(XATTR_VALUE_MAX_BYTES);
	}
	char *list = c->xlist, *val = c->xval;
	ssize_t n = flistxattr(in, list, XATTR_LIST_MAX_BYTES);

	if (n < 0)
		return errno == ENOTSUP ? 0 : err_sys(err, "snapshot: list the attributes of '%s'", c->path);
	for (char *k = list; k < list + n; k += strlen(k) + 1) {
		if (strncmp(k, "user.", 5) != 0)
			continue;
		ssize_t v = fgetxattr(in, k, val, XATTR_VALUE_MAX_BYTES);
		if (v < 0 || fsetxattr(out, k, val, (size_t)v, 0) < 0)
			return err_sys(err, "snapshot: attribute '%s' of '%s'", k, c->path);
	}
	return 0;
}

static int copy_range(int in, int out, off_t from, off_t to)
{
	char buf[65536];

	for (off_t pos = from; pos < to;) {
		loff_t a = pos, b = pos;
		ssize_t n = copy_file_range(in, &a, out, &b, (size_t)(to - pos), 0);
		if (n < 0 && (errno == EXDEV || errno == EINVAL || errno == EOPNOTSUPP || errno == ENOSYS)) {
			size_t want = (size_t)(to - pos) < sizeof(buf) ? (size_t)(to - pos) : sizeof(buf);
			n = pread(in, buf, want, pos);
			if (n > 0 && pwrite(out, buf, (size_t)n, pos) != n)
				return -1;
		}
		if (n <= 0)
			return n == 0 ? (errno = EIO, -1) : -1;
		pos += n;
	}
	return 0;
}

/* Reflinked whole, or its data regions copied: holes stay holes. */
static int copy_data(struct snapcopy *c, int in, int out, const struct stat *st, struct sbx_err *err)
{
	if (!c->no_reflink && ioctl(out, FICLONE, in) == 0)
		return charge(c, (uint64_t)st->st_blocks * 512, err);
	c->no_reflink = 1;
	for (off_t pos = 0; pos < st->st_size;) {
		off_t data = lseek(in, pos, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break;
		if (data < 0)
			data = pos, hole = st->st_size; /* no SEEK_DATA: all of it */
		else if ((hole = lseek(in, data, SEEK_HOLE)) < 0)
			hole = st->st_size;
		if (charge(c, (uint64_t)(hole - data), err) < 0)
			return -1;
		if (copy_range(in, out, data, hole) < 0)
			return err_sys(err, "snapshot: copy '%s'", c->path);
		pos = hole;
	}
	if (ftruncate(out, st->st_size) < 0)
		return err_sys(err, "snapshot: size of '%s'", c->path);
	return 0;
}

/* The session may swap a file for a FIFO (or a device) between the stat
 * and the open: nothing is opened that could block (O_NONBLOCK), and only
 * a regular file is read; what is there now is the next pass's. */
static int copy_file(struct snapcopy *c, int sdir, int ddir, const char *name, const struct stat *lst,
		     struct sbx_err *err)
{
	_cleanup_close_ int in = openat(sdir, name, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	struct stat fst, *st = &fst;

	if (in < 0 || fstat(in, &fst) < 0)
		return err_sys(err, "snapshot: open '%s'", c->path);
	if (!S_ISREG(fst.st_mode) || fst.st_ino != lst->st_ino || fst.st_dev != lst->st_dev)
		return err_plain(err, EAGAIN, "snapshot: '%s' was replaced while it was copied", c->path);
	out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (out < 0)
		return err_sys(err, "snapshot: create '%s'", c->path);
	struct timespec t[2] = { st->st_atim, st->st_mtim };
	if (copy_data(c, in, out, st, err) < 0 || copy_xattrs(c, in, out, err) < 0)
		return -1;
	if (owner(out, "", st) < 0 || fchmod(out, st->st_mode & 01777) < 0 || futimens(out, t) < 0)
		return err_sys(err, "snapshot: mode of '%s'", c->path);
	return 0;
}

static int copy_dir(struct snapcopy *c, int sdir, int ddir, const char *name, const struct stat *st,
		    int depth, struct sbx_err *err);

/* The second pass (c->resync): an entry the first copied that has not
 * changed since (its ctime, which no one sets back, older than since_s;
 * a file's size and mtime as copied) is kept and counted; whatever else is
 * at its name in the copy goes. 0: kept, 1: copy it (a directory: walk it
 * again). */
static int resync_entry(struct snapcopy *c, int ddir, const char *name, const struct stat *st,
			struct sbx_err *err)
{
	struct stat d;

	if (fstatat(ddir, name, &d, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 1 : err_sys(err, "snapshot: stat the copy of '%s'", c->path);
	if ((d.st_mode & S_IFMT) == (st->st_mode & S_IFMT)) {
		if (S_ISDIR(st->st_mode))
			return 1;
		if (st->st_ctim.tv_sec < c->since_s &&
		    (!S_ISREG(st->st_mode) || (d.st_size == st->st_size && d.st_mtim.tv_sec == st->st_mtim.tv_sec &&
					       d.st_mtim.tv_nsec == st->st_mtim.tv_nsec)))
			return charge(c, S_ISREG(d.st_mode) ? (uint64_t)d.st_blocks * 512 : 0, err) < 0 ? -1 : 0;
	}
	return rm_rf_at(ddir, name, err) < 0 ? -1 : 1;
}

/* c->keep is p or below it. */
static bool kept(const struct snapcopy *c, const char *p)
{
	size_t l = strlen(p);
	return c->keep && !strncmp(c->keep, p, l) && (!c->keep[l] || c->keep[l] == '/');
}

/* The second pass: what the copy has and the source no longer does goes
 * (not c->keep, nor what is on the way to it or below it). */
static int resync_sweep(struct snapcopy *c, int in, int out, struct sbx_err *err)
{
	size_t l = strlen(c->path);
	if (c->keep && !strncmp(c->path, c->keep, strlen(c->keep)) &&
	    (!c->path[strlen(c->keep)] || c->path[strlen(c->keep)] == '/'))
		return 0;
	DIR *d = fdopendir(dup(out));
	struct dirent *e;
	struct stat st;
	int r = d ? 0 : err_sys(err, "snapshot: read the copy of '%s'", c->path);

	while (r == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(c->path + l, sizeof(c->path) - l, "/%s", e->d_name);
		if (!kept(c, c->path) && fstatat(in, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			r = rm_rf_at(out, e->d_name, err);
		c->path[l] = '\0';
	}
	if (d)
		closedir(d);
	return r;
}

static int copy_entry(struct snapcopy *c, int sdir, int ddir, const char *name, int depth,
		      struct sbx_err *err)
{
	struct stat st;
	char target[4096];
	struct timespec t[2];

	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(err, "snapshot: stat '%s'", c->path);
	t[0] = st.st_atim, t[1] = st.st_mtim;
	if (charge(c, INODE_COST, err) < 0)
		return -1;
	c->files++;
	int k = c->resync ? resync_entry(c, ddir, name, &st, err) : 1;
	if (k <= 0)
		return k;
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		return copy_dir(c, sdir, ddir, name, &st, depth + 1, err);
	case S_IFREG:
		return copy_file(c, sdir, ddir, name, &st, err);
	case S_IFLNK: {
		ssize_t n = readlinkat(sdir, name, target, sizeof(target) - 1);
		if (n < 0)
			return err_sys(err, "snapshot: read link '%s'", c->path);
		target[n] = '\0';
		if (symlinkat(target, ddir, name) < 0 || owner(ddir, name, &st) < 0 ||
		    utimensat(ddir, name, t, AT_SYMLINK_NOFOLLOW) < 0)
			return err_sys(err, "snapshot: link '%s'", c->path);
		return 0;
	}
	case S_IFCHR: /* an overlay whiteout: a file deleted below */
		if (st.st_rdev != makedev(0, 0))
			return 0;
		if (mknodat(ddir, name, S_IFCHR | 0000, makedev(0, 0)) < 0 || owner(ddir, name, &st) < 0)
			return err_sys(err, "snapshot: whiteout '%s'", c->path);
		return 0;
	case S_IFIFO:
		if (mkfifoat(ddir, name, st.st_mode & 0777) < 0 || owner(ddir, name, &st) < 0)
			return err_sys(err, "snapshot: FIFO '%s'", c->path);
		return 0;
	default: /* devices a sandbox cannot make, sockets: nothing to keep */
		return 0;
	}
}

static int copy_dir(struct snapcopy *c, int sdir, int ddir, const char *name, const struct stat *st,
		    int depth, struct sbx_err *err)
{
	if (depth > SNAPCOPY_MAX_DEPTH)
		return err_set(err, ELOOP, "snapshot: '%s' is deeper than %d directories", c->path,
			       SNAPCOPY_MAX_DEPTH);
	_cleanup_close_ int in = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (in < 0)
		return err_sys(err, "snapshot: open '%s'", c->path);
	if (mkdirat(ddir, name, 0700) < 0 && errno != EEXIST)
		return err_sys(err, "snapshot: create '%s'", c->path);
	_cleanup_close_ int out = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (out < 0)
		return err_sys(err, "snapshot: open the copy of '%s'", c->path);
	if (copy_xattrs(c, in, out, err) < 0)
		return -1;
	size_t len = strlen(c->path);
	DIR *d = fdopendir(dup(in));
	struct dirent *e;
	int r = d ? 0 : err_sys(err, "snapshot: read '%s'", c->path);
	while (r == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(c->path + len, sizeof(c->path) - len, "/%s", e->d_name);
		r = copy_entry(c, in, out, e->d_name, depth, err);
		c->path[len] = '\0';
	}
	if (d)
		closedir(d);
	if (r == 0 && c->resync)
		r = resync_sweep(c, in, out, err);
	struct timespec t[2] = { st->st_atim, st->st_mtim };
	if (r == 0 && (owner(out, "", st) < 0 || fchmod(out, st->st_mode & 01777) < 0 || futimens(out, t) < 0))
		r = err_sys(err, "snapshot: mode of '%s'", c->path);
	return r;
}

int snapcopy_tree(struct snapcopy *c, int sdir, int ddir, struct sbx_err *err)
{
	struct stat st;

	if (fstat(sdir, &st) < 0)
		return err_sys(err, "snapshot: stat the layer");
	return copy_dir(c, sdir, ddir, ".", &st, 0, err);
}

void snapcopy_free(struct snapcopy *c)
{
	free(c->xlist);
	free(c->xval);
	c->xlist = c->xval = NULL;
}

int snapcopy_opaque(int fd, struct sbx_err *err)
{
	if (fsetxattr(fd, "user.overlay.opaque", "y", 1, 0) < 0)
		return err_sys(err, "snapshot: mark the workspace opaque");
	return 0;
}
