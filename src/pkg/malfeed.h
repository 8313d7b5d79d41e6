/* malfeed.h - a malicious-package feed ([packages] malicious): OSV records
 * (the OpenSSF malicious-packages format: MAL-* ids, affected[].package
 * {ecosystem, name}, versions, ranges), read once into a sorted table and
 * asked by the package rules (pkg/rules.c) for every ecosystem. */
#ifndef SBX_MALFEED_H
#define SBX_MALFEED_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/config.h"
#include "base/err.h"

struct malfeed;

/* Bounds on what a feed may make sbxrun spend. */
#define MALFEED_MAX_FILE (64u << 20)        /* one JSON file */
#define MALFEED_MAX_BYTES (1024ull << 20)   /* every file of the feeds together */
#define MALFEED_MAX_RECORDS 2000000u        /* affected packages, all feeds */
#define MALFEED_MAX_DEPTH 8                 /* directories below a feed's */

/* Whether a [packages] malicious entry is a URL (the gateway fetches it:
 * gateway/gw_feed.c) rather than a file or directory. */
static inline bool malfeed_is_url(const char *v)
{
	return strncmp(v, "https://", 8) == 0 || strncmp(v, "http://", 7) == 0;
}

/* Reads every feed of paths that is no URL: a JSON file (one OSV record,
 * or an array of them) or a directory searched for *.json files (the
 * OpenSSF repository's osv/ tree), without following symbolic links. A
 * file that is not OSV JSON, or any bound passed, fails the whole load: a
 * feed half read would let through what its other half names. Returns 0,
 * or -1 with err. */
int malfeed_load(const struct sbx_strlist *paths, struct malfeed **out, struct sbx_err *err);

/* Moves every record of src into dst (sorted again) and frees src; with
 * the two past MALFEED_MAX_RECORDS or MALFEED_MAX_BYTES, -1 with err and
 * both as they were. */
int malfeed_merge(struct malfeed *dst, struct malfeed *src, struct sbx_err *err);
/* As malfeed_merge, after dropping every record of dst that came from
 * origin (a feed fetched again: what it no longer names is no longer
 * refused), origin_bytes being what those had counted against
 * MALFEED_MAX_BYTES. With the bounds passed, -1 with err and both as they
 * were. */
int malfeed_replace(struct malfeed *dst, const char *origin, size_t origin_bytes, struct malfeed *src,
		    struct sbx_err *err);
/* Counts len bytes read from outside the files (a fetched feed) against
 * MALFEED_MAX_BYTES. */
void malfeed_add_bytes(struct malfeed *f, size_t len);

/* An empty feed, records added from memory (tests, fuzzing), then sorted. */
struct malfeed *malfeed_new(void);
int malfeed_add_json(struct malfeed *f, const char *json, size_t len, const char *origin, struct sbx_err *err);
void malfeed_finish(struct malfeed *f);

/* The record naming ECO ("npm", "pypi", "deb", "go", "cargo", "maven")
 * NAME at VERSION, or NULL. version NULL: a record naming every version
 * of the package. A range the feed gives in an order sbxrun cannot compare
 * (an ECOSYSTEM range outside npm's semver, a GIT range) names every
 * version: when unsure, deny. *origin: the feed file it came from. */
const char *malfeed_match(const struct malfeed *f, const char *eco, const char *name, const char *version,
			  const char **origin);
size_t malfeed_count(const struct malfeed *f);
void malfeed_free(struct malfeed *f);

#endif
