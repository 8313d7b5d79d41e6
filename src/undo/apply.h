/* apply.h - a change set written into its project: the one host-side write
 * of what a sandbox chose. Every write goes through directory handles below
 * DIR (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS),
 * files whole by a temporary file and rename (or, when the whole set
 * applies, moved out of it and exchanged), symlinks as symlinks, no
 * device, FIFO or socket, no setuid or setgid bit, holes kept. */
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

/* Applies cs (only the entries at or below paths, when npaths) to its
 * project. A conflict (the host's file no longer has the digest it had when
 * the run ended, or it changed during the run) refuses the whole apply
 * unless force_rest: then what conflicts is left out. Each conflict and
 * each entry skipped (a device, FIFO or socket) is a line of rep. */
int apply_changeset(struct changeset *cs, char *const *paths, size_t npaths, bool force_rest,
		    struct apply_report *rep, struct sbx_err *err);
void apply_report_free(struct apply_report *rep);

#endif
