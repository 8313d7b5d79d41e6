/* diff.h - a unified diff of two texts, in sbxrun's own code (no diff(1)
 * spawned): lines, common ends trimmed, the middle by longest common
 * subsequence (past a bound of work, the middle as one replacement). */
#ifndef SBX_DIFF_H
#define SBX_DIFF_H

#include <stdbool.h>
#include <stdio.h>

/* True when the bytes look like text (no NUL in them). */
bool diff_is_text(const char *s, size_t n);
/* Writes the hunks of a against b to out, after the two header lines
 * "--- from" and "+++ to"; nothing when they are equal. */
void diff_unified(const char *a, size_t na, const char *b, size_t nb, const char *from,
		  const char *to, FILE *out);

#endif
