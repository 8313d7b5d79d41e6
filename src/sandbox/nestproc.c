/* nestproc.c - the sandbox's /proc where the kernel refuses it a proc of
 * its own (a container's /proc with masked paths: mount_too_revealing),
 * even with subset=pid: a read-only tmpfs holding binds of a few files
 * that describe the machine, as a full tier's /proc shows them too, and
 * no process at all. The container's own /proc is never bound whole: it
 * would show the container's processes, and a process of the caller's uid
 * there (the CI job's shell, its environ, its memory) would be open to
 * the sandbox through /proc/PID. docs/security.md says what is missing. */
#define _GNU_SOURCE
#include "sandbox/nestproc.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <stdio.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "sandbox/mounts.h"
#include "sandbox/tier.h"

/* What tools read to size themselves (nproc, free, uptime, Python's and
 * Node's os modules); none names a process. */
static const char *const files[] = { "cpuinfo", "meminfo", "stat", "uptime", "loadavg", "version",
				     "filesystems" };

static int bind_file(int rootfd, const char *name, struct sbx_err *err)
{
	char src[64], dst[64], inside[64];
	struct stat st;
	_cleanup_close_ int from = -1, to = -1;

	snprintf(src, sizeof(src), "/proc/%s", name);
	from = open(src, O_PATH | O_CLOEXEC);
	if (from < 0 || fstat(from, &st) < 0 || !S_ISREG(st.st_mode))
		return 0; /* this kernel has none */
	snprintf(inside, sizeof(inside), "/proc/%s", name);
	if ((to = mounts_mkpath(rootfd, inside, 0, err)) < 0)
		return -1;
	snprintf(src, sizeof(src), "/proc/self/fd/%d", from);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d", to);
	return mount(src, dst, NULL, MS_BIND, NULL) < 0 ? err_sys(err, "bind '/proc/%s'", name) : 0;
}

int nestproc_files(int rootfd, struct sbx_err *err)
{
	char target[64];
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int dir = mounts_mkpath(rootfd, "/proc", 1, err);

	if (dir < 0)
		return -1;
	snprintf(target, sizeof(target), "/proc/self/fd/%d", dir);
	if (mount("sbxproc", target, "tmpfs", TIER_PROC_FLAGS, "size=16k,nr_inodes=32,mode=0555") < 0)
		return err_sys(err, "mount 'tmpfs' on '/proc'");
	for (size_t i = 0; i < ARRAY_SIZE(files); i++)
		if (bind_file(rootfd, files[i], err) < 0)
			return -1;
	_cleanup_close_ int proc = openat(rootfd, "proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (proc < 0 || syscall(SYS_mount_setattr, proc, "", AT_EMPTY_PATH, &ro, sizeof(ro)) < 0)
		return err_sys(err, "make '/proc' read-only");
	return 0;
}
