/* csdiff.h - a change set rendered from its entries (changeset.h), the
 * one model apply writes: `changes show` (a listing), `changes diff` and
 * `changes export --patch` (git's diff format), and the MCP server's
 * list_changes and diff_changes, all to a FILE *. */
#ifndef SBX_CSDIFF_H
#define SBX_CSDIFF_H

#include <stdbool.h>
#include <stdio.h>

#include "base/err.h"
#include "undo/changeset.h"

struct cs_render {
	unsigned umask_bits; /* the modes shown are those apply gives under it */
	bool all;            /* show: no .gitignore fold, every entry listed */
	bool patch;          /* diff: `git apply`'s input: full index lines,
				binary files as GIT binary patch, what apply
				would not write left out and named on stderr */
};

/* The process's umask, read without changing it (/proc/self/status). */
unsigned changeset_umask(void);
/* Opens DIR (O_RDONLY | O_DIRECTORY | O_NOFOLLOW) and gives each entry its
 * verdict against the host now (changeset_check); *nbad counts those that
 * apply would not write. */
int changeset_verdicts(struct changeset *cs, size_t *nbad, struct sbx_err *err);
/* The listing: a first line with the counts (added, changed, deleted,
 * conflicts, not applied), then the deletions, then the rest in path
 * order, each with its kind, type, the mode apply gives it, its size,
 * its name (and a symlink's target) escaped (csname_show), and its verdict
 * on a line below. Added files and directories that the project's own
 * .gitignore rules ignore (csignore.h), with no verdict, are one line per
 * top directory unless o->all. */
int changeset_show(const struct changeset *cs, const struct cs_render *o, FILE *out, struct sbx_err *err);
/* The diff of cs's entries (those at or below one of paths, or all when
 * npaths is 0) in git's format: deletions first, `diff --git` headers with
 * git's quoting of names, new/deleted file modes and old/new mode from
 * the modes apply gives, symlinks as git shows them (mode 120000, the
 * target as the content), a unified diff of a text file, a binary one as
 * one line (as a GIT binary patch with o->patch). A line beginning with
 * '#' before an entry's header says what apply does not write of it (its
 * verdict, a mode apply does not give); git apply passes over it. The
 * bytes are the files' own: a caller writing to a terminal passes a
 * csname_escaping stream. Memory stays bounded (diff.h): a big side is
 * streamed as one hunk; a file that is special by now (a live set's) is
 * never read. Stops at the first write error of out (a capped stream: the
 * error is returned). */
int changeset_render_diff(const struct changeset *cs, char *const *paths, size_t npaths,
			  const struct cs_render *o, FILE *out, struct sbx_err *err);
/* changeset_render_diff with the caller's umask, not a patch. */
int changeset_diff(const struct changeset *cs, char *const *paths, size_t npaths, FILE *out,
		   struct sbx_err *err);

#endif
