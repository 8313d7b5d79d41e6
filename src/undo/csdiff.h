/* csdiff.h - a change set as a unified diff against its project. */
#ifndef SBX_CSDIFF_H
#define SBX_CSDIFF_H

#include <stdio.h>

#include "base/err.h"
#include "undo/changeset.h"

/* Writes the diff of cs's entries (those at or below one of paths, or all
 * when npaths is 0) to out: a unified diff for a text file, one line for
 * a binary, a symlink or a special file (or a file that is one by now: a
 * live set's, never read). Memory stays bounded (diff.h): a big side is
 * streamed as one hunk. Stops at the first write error of out (a capped
 * stream: the error is returned). */
int changeset_diff(const struct changeset *cs, char *const *paths, size_t npaths, FILE *out,
		   struct sbx_err *err);

#endif
