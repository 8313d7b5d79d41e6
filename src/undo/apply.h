/* apply.h - a change set written into its project: the one host-side write
 * of what a sandbox chose. Every write goes through directory handles below
 * DIR (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
 * RESOLVE_NO_XDEV), files whole by a temporary file and rename (or, when
 * the whole set applies, moved out of it and exchanged), symlinks as
 * symlinks, no device, FIFO or socket, no setuid or setgid bit, holes
 * kept; a deletion only of what the set lists, one entry at a time. */
#ifndef SBX_APPLY_H
#define SBX_APPLY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "undo/changeset.h"

/* What an apply did and refused, one line each (the caller prints them). */
struct apply_report {
	char **lines;
	size_t n;
	size_t applied, conflicts, skipped;
};

#define APPLY_FORCE_REST 1u  /* leave out what is refused, apply the rest */
#define APPLY_EXACT_MODES 2u /* the sandbox's permission bits, not git's */

/* Applies cs (only the entries at or below paths, when npaths) to its
 * project: what its entries list, nothing else. Anything refused (a
 * conflict: changeset_check's verdict; a source in the change set that
 * cannot be read; a path too long) refuses the whole apply before its
 * first write, unless APPLY_FORCE_REST: then it is left out. Each refusal
 * and each entry skipped (a device, FIFO or socket) is a line of rep.
 * Modes are git's (changeset_applied_mode, with the caller's umask)
 * unless APPLY_EXACT_MODES. */
int apply_changeset(struct changeset *cs, char *const *paths, size_t npaths, unsigned flags,
		    struct apply_report *rep, struct sbx_err *err);
void apply_report_free(struct apply_report *rep);

#endif
