/* fuselayer.h - the writable layer through fuse-overlayfs, on kernels whose
 * tmpfs lacks the user xattrs that the kernel's overlay needs (Linux < 6.6):
 * the upper layer stays on the size-capped staging tmpfs, so the disk quota
 * is that tmpfs's size and inode count (ENOSPC at the limit). */
#ifndef SBX_FUSELAYER_H
#define SBX_FUSELAYER_H

#include <sys/types.h>

#include "base/err.h"

/* Host side, at plan time: the fuse-overlayfs binary on PATH (malloc'ed) if
 * it and /dev/fuse can be used, else NULL and why in `why`. */
char *fuselayer_probe(char *why, size_t size);
/* Child side, in its user and mount namespaces: mounts an empty FUSE file
 * system on `target` for fuse-overlayfs to serve. Returns the /dev/fuse fd. */
int fuselayer_mount(const char *target, struct sbx_err *err);

struct sbx_fuselayer {
	pid_t pid;   /* fuse-overlayfs, a child of the host side, or 0 */
	int pidfd;
};
/* Host side: starts fuse-overlayfs serving fuse_fd (as /dev/fd/3) in the
 * sandbox's user namespace as uid/gid, in a copy of its mount namespace
 * taken now (before pivot_root), with the staging tmpfs's /tmp/lower,
 * /tmp/layer/upper and /tmp/layer/work. It stays outside the sandbox's pid namespace
 * and dies with the host side. */
int fuselayer_spawn(const char *bin, int userns_fd, int mntns_fd, int fuse_fd, uid_t uid, gid_t gid,
		    struct sbx_fuselayer *fl, struct sbx_err *err);
/* Whether it has already ended (it is not reaped here). */
int fuselayer_ended(const struct sbx_fuselayer *fl);
/* Kills and reaps it (after the sandbox ended). */
void fuselayer_stop(struct sbx_fuselayer *fl);

#endif
