/* wsseed.c - see wsseed.h. A copy rather than another overlay: the
 * workspace stays one plain directory (bound, exported, counted and
 * cleaned as before), and an image without workspace content costs one
 * open and one readdir. */
#define _GNU_SOURCE
#include "sandbox/wsseed.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/openat2.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/diskuse.h"

#define MAX_DEPTH 256

int wsseed_measure(int rootfs_fd, const char *workspace, const char *image, uint64_t quota,
		   uint64_t *bytes, struct sbx_err *err)
{
	struct open_how how = { .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int fd = (int)syscall(SYS_openat2, rootfs_fd, workspace, &how, sizeof(how));
	char have[32], max[32];

	*bytes = 0;
	if (fd < 0 || diskuse_bytes_at(fd, ".", bytes) < 0)
		return 0;
	if (quota && *bytes > quota) {
		format_size(*bytes, have, sizeof(have));
		format_size(quota, max, sizeof(max));
		return err_set(err, 0, "image '%s' holds %s at the workspace '%s', more than the disk "
			       "quota (%s): raise --disk (or [limits] disk)", image, have, workspace, max);
	}
	return 0;
}

static int copy_tree(int sdir, int ddir, int depth, struct sbx_err *err);

static int copy_file(int sdir, const char *name, const struct stat *st, int ddir, struct sbx_err *err)
{
	_cleanup_close_ int in = openat(sdir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_close_ int out = openat(ddir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					 st->st_mode & 0777);
	char buf[65536];
	ssize_t n;

	if (in < 0 || out < 0)
		return err_sys(err, "'%s'", name);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write_all(out, buf, (size_t)n) < 0)
			return err_sys(err, "write '%s'", name);
	if (n < 0)
		return err_sys(err, "read '%s'", name);
	if (fchmod(out, st->st_mode & 01777) < 0)
		return err_sys(err, "chmod '%s'", name);
	return 0;
}

static int copy_entry(int sdir, const char *name, int ddir, int depth, struct sbx_err *err)
{
	struct stat st;
	char link[4096];

	if (fstatat(sdir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(err, "'%s'", name);
	if (S_ISREG(st.st_mode)) {
		if (copy_file(sdir, name, &st, ddir, err) < 0)
			return -1;
	} else if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(sdir, name, link, sizeof(link) - 1);
		if (n < 0 || (link[n] = '\0', symlinkat(link, ddir, name) < 0))
			return err_sys(err, "symlink '%s'", name);
	} else if (S_ISDIR(st.st_mode)) {
		if (depth >= MAX_DEPTH)
			return err_set(err, 0, "deeper than %d levels", MAX_DEPTH);
		if (mkdirat(ddir, name, 0700) < 0)
			return err_sys(err, "mkdir '%s'", name);
		_cleanup_close_ int s = openat(sdir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int d = openat(ddir, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (s < 0 || d < 0)
			return err_sys(err, "'%s'", name);
		if (copy_tree(s, d, depth + 1, err) < 0)
			return -1;
		if (fchmod(d, st.st_mode & 01777) < 0)
			return err_sys(err, "chmod '%s'", name);
	} else {
		return 0; /* FIFOs and sockets: nothing to carry over */
	}
	struct timespec t[2] = { st.st_atim, st.st_mtim };
	utimensat(ddir, name, t, AT_SYMLINK_NOFOLLOW);
	return 0;
}

struct copy_ctx {
	int ddir, depth;
	struct sbx_err *err;
};

static int copy_one(int sdir, const char *name, void *arg)
{
	const struct copy_ctx *c = arg;
	return copy_entry(sdir, name, c->ddir, c->depth, c->err);
}

static int copy_tree(int sdir, int ddir, int depth, struct sbx_err *err)
{
	struct copy_ctx ctx = { ddir, depth, err };
	return dir_each(sdir, copy_one, &ctx, err);
}

int wsseed_copy(int src, int dst, struct sbx_err *err)
{
	return copy_tree(src, dst, 0, err) < 0 ? err_wrap(err, "workspace from the image") : 0;
}
