/* inroot.c - see inroot.h. */
#define _GNU_SOURCE
#include "base/inroot.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"

int inroot_open(int rootfd, const char *path, int flags, mode_t mode, struct sbx_err *err)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
				.mode = (flags & O_CREAT) ? mode : 0,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	int fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	if (fd < 0)
		return err_sys(err, "'%s'%s", path, errno == ELOOP || errno == ENOTDIR ? " (a symlink or a non-directory is in the way)" : "");
	return fd;
}

int inroot_parent(int rootfd, const char *path, const char **name, struct sbx_err *err)
{
	const char *slash = strrchr(path, '/');
	char dir[4096];

	*name = slash ? slash + 1 : path;
	if (!**name || strcmp(*name, ".") == 0 || strcmp(*name, "..") == 0)
		return err_plain(err, EINVAL, "'%s': not a file name", path);
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 0, path);
	return inroot_open(rootfd, dir[0] ? dir : "/", O_PATH | O_DIRECTORY, 0, err);
}

long long inroot_write_from(int dirfd, const char *name, int src, mode_t mode, struct sbx_err *err)
{
	char tmp[300];
	long long total = 0;
	char buf[65536];

	snprintf(tmp, sizeof(tmp), ".sbxrun-tmp-%d-%.200s", (int)getpid(), name);
	_cleanup_close_ int out = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
					 mode & 0777);
	if (out < 0)
		return err_sys(err, "create '%s'", name);
	for (;;) {
		ssize_t n = read(src, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || (n > 0 && write_all(out, buf, (size_t)n) < 0)) {
			err_sys(err, "copy to '%s'", name);
			unlinkat(dirfd, tmp, 0);
			return -1;
		}
		if (n == 0)
			break;
		total += n;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		err_sys(err, "rename to '%s'", name);
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	return total;
}
