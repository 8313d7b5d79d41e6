/* diskuse.c - on disk there is no tmpfs size to stop a sandbox, so the
 * supervisor sums what the writable layer and workspace hold and ends the
 * sandbox when it passes the quota (checked every 50 to 500 ms, by the cost
 * of a walk). Every inode counts at least one 4 KiB block, so that a bomb of
 * empty files (no blocks at all) meets the quota too. */
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
		uint64_t b = (uint64_t)st.st_blocks * 512;
		sum += b > DISKUSE_INODE_BYTES ? b : DISKUSE_INODE_BYTES;
		if (S_ISDIR(st.st_mode) && depth < 512) {
			int sub = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (sub >= 0)
				sum += walk(sub, dev, depth + 1);
		}
	}
	closedir(d);
	return sum;
}

int diskuse_bytes_at(int dirfd, const char *dir, uint64_t *out)
{
	struct stat st;
	int fd = openat(dirfd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*out = walk(fd, st.st_dev, 0);
	return 0;
}

int diskuse_bytes(const char *dir, uint64_t *out)
{
	return diskuse_bytes_at(AT_FDCWD, dir, out);
}

uint64_t diskuse_next_ms(uint64_t walk_ms, uint64_t used, uint64_t quota)
{
	uint64_t next = walk_ms * 20;

	if (used >= quota - quota / 4)
		next = walk_ms * 4;
	return next < 50 ? 50 : next > 500 ? 500 : next;
}
