/* mountflags.c - the flags of a mount the kernel locks in a user
 * namespace, which every read-only remount repeats: the sandbox's binds
 * (mounts.c) and the FUSE daemon's own root (fuseroot.c). */
#define _GNU_SOURCE
#include "sandbox/mountflags.h"

#include <sys/mount.h>
#include <sys/statvfs.h>

unsigned long mountflags_locked(const struct statvfs *sv)
{
	return (sv->f_flag & ST_NOSUID ? MS_NOSUID : 0) | (sv->f_flag & ST_NODEV ? MS_NODEV : 0) |
	       (sv->f_flag & ST_NOEXEC ? MS_NOEXEC : 0) | (sv->f_flag & ST_NOATIME ? MS_NOATIME : 0) |
	       (sv->f_flag & ST_RELATIME ? MS_RELATIME : 0) |
	       (sv->f_flag & ST_NODIRATIME ? MS_NODIRATIME : 0);
}
