/* diff.h - a unified diff of two texts, in sbxrun's own code (no diff(1)
 * spawned): lines, common ends trimmed, the middle by longest common
 * subsequence (past a bound of work, the middle as one replacement).
 * Memory is bounded whatever the files: a side past DIFF_MAX_BYTES or
 * DIFF_MAX_LINES is not held, its lines are streamed from the file as one
 * hunk that replaces the whole file. */
#ifndef SBX_DIFF_H
#define SBX_DIFF_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define DIFF_MAX_BYTES (4u << 20) /* a side held in memory and diffed line by line */
#define DIFF_MAX_LINES 100000u    /* ... of at most this many lines */

/* One side of a diff: absent (fd -1, an empty side), or a regular file
 * open on fd, read whole into data when it is at most DIFF_MAX_BYTES,
 * else (data NULL) read in chunks when written out. size: the bytes
 * considered, the file's size when it was opened (a file that grows
 * while it is diffed is not followed). */
struct diff_side {
	int fd;
	uint64_t size;
	char *data;
	size_t len;
};
#define DIFF_SIDE_NONE ((struct diff_side){ .fd = -1 })

/* Takes fd (a regular file of size bytes) into s; 0, or -1 with errno
 * when it cannot be read. */
int diff_side_open(struct diff_side *s, int fd, uint64_t size);
void diff_side_free(struct diff_side *s);
/* True when the bytes look like text (no NUL in them). */
bool diff_is_text(const char *s, size_t n);
/* Writes the hunks of a against b to out, after the two header lines
 * "--- from" and "+++ to"; nothing when they are equal. */
void diff_unified(const char *a, size_t na, const char *b, size_t nb, const char *from,
		  const char *to, FILE *out);
/* The diff of two sides: nothing when they are equal, "Binary files FROM
 * and TO differ" when one holds a NUL, else diff_unified when both are
 * held, else one hunk of every line of a removed and every line of b
 * added, streamed. Stops early once out has an error (a stream that
 * reached its cap). */
void diff_sides(const struct diff_side *a, const struct diff_side *b, const char *from,
		const char *to, FILE *out);

#endif
