/* diskuse.c - on disk there is no tmpfs size to stop a sandbox, so the
 * supervisor sums what the writable layer and workspace hold and ends the
 * sandbox when it passes the quota (checked every half second). */
#define _GNU_SOURCE
#include "sandbox/diskuse.h"

#include <dirent.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static uint64_t walk(int dirfd, dev_t dev, int depth)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *e;
	uint64_t sum = 0;

	if (!d) {
		close(dirfd);
		return 0;
	}
	while ((e = readdir(d))) {
		struct stat st;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (fstatat(dirfd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 || st.st_dev != dev)
			continue;
		sum += (uint64_t)st.st_blocks * 512;
		if (S_ISDIR(st.st_mode) && depth < 512) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sum += walk(sub, dev, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

int diskuse_bytes(const char *dir, uint64_t *out)
{
	struct stat st;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*out = walk(fd, st.st_dev, 0);
	return 0;
}
