/* relpath.h - workspace-relative paths given by the user (download DEST,
 * cp SESSION:PATH): checked as text before any file is opened. */
#ifndef SBX_RELPATH_H
#define SBX_RELPATH_H

#include <stddef.h>

#include "base/err.h"

/* A relative path, not empty, without a '..' component. what names the
 * argument in the message ("DEST"). Returns 0 or -1. */
int relpath_check(const char *path, const char *what, struct sbx_err *err);
/* relpath_check, and a last component that names a file (not "." nor
 * empty): its directory goes into dir ("." when none), *name points into
 * path at the last component. Returns 0 or -1. */
int relpath_split(const char *path, const char *what, char *dir, size_t dirsize, const char **name,
		  struct sbx_err *err);

/* run --copy PATH[:DEST], split at the first ':' (as --bind is): PATH is
 * a host path (not empty), DEST, when given, a relative path that names an
 * entry of the workspace (relpath_split's rules). *dest is NULL when spec
 * gives none (the caller takes PATH's name). Both are allocated. */
int relpath_copy_spec(const char *spec, char **path, char **dest, struct sbx_err *err);

#endif
