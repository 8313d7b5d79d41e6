/* mountflags.h - the mount flags a remount must keep (mountflags.c). */
#ifndef SBX_MOUNTFLAGS_H
#define SBX_MOUNTFLAGS_H

struct statvfs;

/* The MS_ flags a bind remount must repeat, from its statvfs: the kernel
 * locks nosuid, nodev, noexec and the atime flags of a mount a user
 * namespace got from outside, and a remount without them fails (EPERM). */
unsigned long mountflags_locked(const struct statvfs *sv);

#endif
