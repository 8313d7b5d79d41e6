/* inroot.h - host-side access to a sandbox's files that never follows what
 * the sandbox planted: every path is resolved below a root fd with
 * openat2(RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS). */
#ifndef SBX_INROOT_H
#define SBX_INROOT_H

#include <sys/types.h>

#include "base/err.h"

int inroot_open(int rootfd, const char *path, int flags, mode_t mode, struct sbx_err *err);
/* Opens the directory that holds path's last component; *name points into
 * path at that component (which must be a plain name). */
int inroot_parent(int rootfd, const char *path, const char **name, struct sbx_err *err);
/* Copies all of src into a new file NAME in dirfd: a temporary name made
 * with O_EXCL|O_NOFOLLOW, then renamed over NAME. Returns bytes or -1. */
long long inroot_write_from(int dirfd, const char *name, int src, mode_t mode, struct sbx_err *err);

#endif
