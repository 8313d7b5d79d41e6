/* idmap.h - a root caller's --project DIR, shown to the sandbox through an
 * idmapped mount: DIR's owner and group appear as the sandbox's host uid
 * and gid (SBX_ROOT_HOST_UID), so its files are the sandbox's own and the
 * overlay can copy them up; DIR itself is never written. */
#ifndef SBX_IDMAP_H
#define SBX_IDMAP_H

#include "base/err.h"
#include "sandbox/plan.h"

/* Host side, as root, before the sandbox is cloned: DIR (plan->project.src,
 * checked to be the inode the plan names) cloned as a detached mount (not
 * recursive: as an overlay's lower layer, only DIR's own mount), read-only,
 * nosuid, nodev, idmapped. Returns its fd, which the child attaches in its
 * own mount namespace (mounts.c); -1 when DIR's file system cannot be
 * idmapped, the message naming DIR and why. */
int idmap_project(const struct sbx_plan *plan, struct sbx_err *err);

#endif
