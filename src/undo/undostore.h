/* undostore.h - where change sets are kept, and what they cost:
 * $XDG_DATA_HOME/sbxrun/changes/ID/ holds one change set (changeset.h:
 * manifest, entries, upper/, work/), mode 0700, the user's alone. */
#ifndef SBX_UNDOSTORE_H
#define SBX_UNDOSTORE_H

#include <stdint.h>

#include "base/err.h"

/* The changes directory, made (0700) if missing; *out is allocated. */
int undostore_changes_dir(char **out, struct sbx_err *err);
/* Bytes allocated below the changes directory (every change set, sparse
 * files as they are on disk), and the snapshots' (snapshot_usage): the
 * one per-user cap. Measured as the disk quota measures a layer
 * (diskuse_owned_bytes_at): no mode the sandbox left hides a byte. */
int undostore_usage(uint64_t *out, struct sbx_err *err);
/* The same for one change set's directory (0 if it cannot be opened). */
uint64_t undostore_bytes(const char *dir);
/* When change set id was made, from its id (UTC, seconds), or 0: the age
 * of a set whose manifest cannot be read. */
int64_t undostore_id_time(const char *id);
/* True for a change set id as changeset_create makes them (no '/', no
 * dot first, printable): what the commands accept before opening one. */
int undostore_id_valid(const char *id);

#endif
