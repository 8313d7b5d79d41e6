/* cspatch.h - git's own forms for what a patch carries besides lines: the
 * blob id of a side and a binary file as `GIT binary patch` (a literal:
 * zlib-deflated, base85 in lines of 52 bytes), and `changes export
 * --patch`, the change set as one patch that `git apply` takes. */
#ifndef SBX_CSPATCH_H
#define SBX_CSPATCH_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "undo/changeset.h"

#define CS_BLOB_HEX 40
#define CS_BLOB_NONE "0000000000000000000000000000000000000000"

/* The blob id git gives n bytes (SHA-1 of "blob N", a NUL and the bytes). */
void cspatch_blob_id(const char *s, size_t n, char out[CS_BLOB_HEX + 1]);
/* The same of what is readable from fd (a regular file, read from its
 * start); *size gets its length. */
int cspatch_blob_id_fd(int fd, char out[CS_BLOB_HEX + 1], uint64_t *size, struct sbx_err *err);
/* "GIT binary patch", a literal of what fd holds (from its start; empty
 * when fd < 0) and the blank line that ends it, streamed to out. */
int cspatch_binary(int fd, FILE *out, struct sbx_err *err);
/* Writes the whole change set (those at or below one of paths, or all
 * when npaths is 0) as a patch to file: a temporary name beside it, made
 * durable and renamed over it, so that a failure leaves nothing
 * half-written. umask_bits: the modes apply gives (changeset_applied_mode).
 * What the patch cannot carry, or apply would not write, is named on
 * stderr. */
int changeset_export_patch(const struct changeset *cs, char *const *paths, size_t npaths,
			   unsigned umask_bits, const char *file, struct sbx_err *err);

#endif
