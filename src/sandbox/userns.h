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
/* Looks NAME or a numeric uid up in the image's /etc/passwd (read below
 * rootfs_fd without following symlinks). home may be NULL. */
int userns_lookup(int rootfs_fd, const char *user, uid_t *uid, gid_t *gid, char **home,
		  struct sbx_err *err);

#endif
