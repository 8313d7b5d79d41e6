/* debidx.h - the table the gateway keeps of one Debian Packages index, so
 * that no sandbox after the first parses it again: for each .deb it lists
 * (by its Filename, normalised, relative to the archive's root) the
 * package, version, SHA256 and size. It is built once from the Packages
 * text, stored in the cache under the SHA256 of the Packages file as
 * fetched, and read back by mapping it: fixed records sorted by path,
 * searched by bisection, and a string table. A file is checked whole
 * before it is used (its size, the Packages digest it was built from, the
 * SHA256 of its body), so a torn or damaged one is rebuilt, never trusted.
 * Each entry also has the time the gateway first saw it (debidx_date):
 * the date min_age and not_after judge a .deb by, as apt's indexes give
 * none. */
#ifndef SBX_DEBIDX_H
#define SBX_DEBIDX_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

#define DEBIDX_MAX (256ULL << 20)  /* bytes: a bigger table is neither built nor read */

/* One .deb as the table gives it; the strings point into the table. */
struct debidx_entry {
	const char *package, *version;
	unsigned char sha256[32];
	uint64_t size;  /* 0: the index gave none */
	int64_t seen;   /* Unix seconds the gateway first saw it; 0: unknown */
};

/* Builds the table of one Packages text (plain; deb_index.h says which
 * stanzas count, and a later stanza for the same path wins) whose file as
 * fetched has SHA256 src. 0 with *out (free it), *len and *entries; -1
 * with err when it is no Packages index or the table would be too big. */
int debidx_build(const char *text, size_t text_len, const unsigned char src[32], char **out, size_t *len,
		 size_t *entries, struct sbx_err *err);

/* Dates every entry of the table p (len bytes, as built, or checked) and
 * sums it again: the earliest of the time it has (none as built), now,
 * and the time of the entry of prev (a checked table, or NULL) with the
 * same path, package, version and SHA256: a version, or bytes, prev
 * lacks is seen now. Called again with another prev, the earlier wins.
 * Both tables are sorted by path: one walk of the two, no search. Returns
 * how many times were carried over. */
size_t debidx_date(char *p, size_t len, const void *prev, size_t prev_len, int64_t now);

/* Whether p (len bytes) is a whole, undamaged table built from the
 * Packages file whose SHA256 is src: 0, or -1 with err saying what is
 * wrong. Only a checked table may be given to debidx_find. */
int debidx_check(const void *p, size_t len, const unsigned char src[32], struct sbx_err *err);

/* How many entries a checked table has. */
size_t debidx_count(const void *p);

/* The entry of path (relative to the archive's root, normalised) in a
 * checked table: 1 with *e, 0 when it lists no such file. */
int debidx_find(const void *p, size_t len, const char *path, struct debidx_entry *e);

#endif
