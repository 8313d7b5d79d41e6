/* userns.h - the user namespace: one uid mapped, decided on the host side. */
#ifndef SBX_USERNS_H
#define SBX_USERNS_H

#include <sys/types.h>

#include "base/err.h"

/* Host side: writes setgroups=deny, uid_map and gid_map of pid. */
int userns_write_maps(pid_t pid, uid_t in_uid, uid_t host_uid, gid_t in_gid, gid_t host_gid,
		      struct sbx_err *err);
/* Child side: takes the mapped identity (a root caller's child starts
 * unmapped) while keeping the namespace's capabilities for setup. */
int userns_become(uid_t uid, gid_t gid, struct sbx_err *err);
/* Per-user counts the kernel keeps in each user namespace and checks at
 * every level up (/proc/sys/user): inotify instances and watches, fanotify
 * groups and marks. The sandbox's namespace gets half of the host user's
 * of each, so that the sandbox cannot take them all from the user's own
 * programs on the host (an editor or build tool would get EMFILE). */
#define SBX_UCOUNTS 4
struct sbx_ucounts {
	long host[SBX_UCOUNTS]; /* the host user's (this namespace's), or -1 */
	long max[SBX_UCOUNTS];  /* the sandbox's, or -1: not set (the kernel has no such count) */
	char text[SBX_UCOUNTS][24]; /* max as written, made on the host side: no printf in the child */
};
/* The name below /proc/sys/user of count i. */
const char *userns_ucount_name(int i);
/* Host side, before clone: reads the host's values, halves them. */
void userns_ucounts_plan(struct sbx_ucounts *u);
/* Child side, in its new namespace with its capabilities: sets them. -1
 * (err set) where /proc/sys cannot be written (a container that mounts it
 * read-only): the sandbox then shares the host user's. */
int userns_ucounts_apply(const struct sbx_ucounts *u, struct sbx_err *err);
/* Looks NAME or a numeric uid up in the image's /etc/passwd (read below
 * rootfs_fd without following symlinks). home may be NULL. */
int userns_lookup(int rootfs_fd, const char *user, uid_t *uid, gid_t *gid, char **home,
		  struct sbx_err *err);

#endif
