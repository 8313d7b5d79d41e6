/* wsseed.h - an image's own files at the workspace path (a re-imported
 * `image export` of a session holds its work there) become the starting
 * content of a sandbox's fresh workspace, under the same disk quota. */
#ifndef SBX_WSSEED_H
#define SBX_WSSEED_H

#include <stdint.h>

#include "base/err.h"

/* Host side, at plan time: what the image holds at workspace (a path
 * inside the rootfs below rootfs_fd), counted as diskuse counts it; 0 when
 * nothing is there (no directory, an empty one, or a symlink on the way).
 * Fails when it is more than quota (if quota is not 0), naming the image. */
int wsseed_measure(int rootfs_fd, const char *workspace, const char *image, uint64_t quota,
		   uint64_t *bytes, struct sbx_err *err);
/* Child side, before the workspace is mounted: copies the tree below src
 * into dst (regular files, directories, symlinks as symlinks; modes without
 * setuid/setgid, times kept; nothing followed). Fills dst's filesystem as
 * the sandbox writes it, so a tmpfs quota stops it with ENOSPC. */
int wsseed_copy(int src, int dst, struct sbx_err *err);

#endif
