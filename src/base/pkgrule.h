/* pkgrule.h - the entries of [packages] allow and deny ("ECO:GLOB" or
 * "GLOB"): checked when a profile or policy is read, names compared as
 * each ecosystem compares them, and whether a policy's entry covers a
 * profile's (the ceiling). The gateway matches them (pkg/rules.c). */
#ifndef SBX_PKGRULE_H
#define SBX_PKGRULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* "npm", "pypi", "deb", "go", "cargo", "maven", NULL */
extern const char *const pkgrule_ecosystems[];

/* An entry as a profile may write it: an optional known ECO and ':', then
 * a glob of package-name characters (and * ? [ ] !). Returns 0 or -1. */
int pkgrule_check(const char *entry, struct sbx_err *err);

/* The name as the ecosystem compares it: PyPI's normalised (PEP 503:
 * lower case, runs of "-_." as one "-"); Cargo's lower case with '_' as
 * '-' (crates.io's one crate); npm, deb and go as given. */
void pkgrule_normalize(const char *eco, const char *name, char *out, size_t size);

/* Whether every name entry matches, some entry of wide matches too (a
 * policy's allow list over a profile's entry), in every ecosystem entry
 * applies to. Sure answers only: a glob is covered by the same glob, by
 * "*", or by a literal prefix then "*". */
bool pkgrule_covers(const char *const *wide, size_t n, const char *entry);

/* [packages] not_after: "YYYY-MM-DD" (00:00 UTC that day) or
 * "YYYY-MM-DDTHH:MM:SSZ", no earlier than 1970 nor later than 9999.
 * *out (may be NULL): Unix seconds. Returns 0, or -1 with err. */
int pkgrule_date(const char *s, int64_t *out, struct sbx_err *err);

/* [packages] not_after, "[ECO:]DATE" or "[ECO:]none" (DATE as
 * pkgrule_date's): *eco as pkgrule_age's; *secs the date (0: none, no
 * freeze for that ecosystem). Returns 0, or -1 with err. */
int pkgrule_not_after(const char *entry, int *eco, int64_t *secs, struct sbx_err *err);

/* The not_after the entries v[0..n) give ecosystem eco, as
 * pkgrule_age_for chooses (0: none); *which its index or SIZE_MAX. */
int64_t pkgrule_not_after_for(const char *const *v, size_t n, const char *eco, size_t *which);

/* [packages] min_age, "[ECO:]DURATION" (0 or none: no age rule): *eco
 * the index in pkgrule_ecosystems, or -1 for every ecosystem; *ms the
 * duration (either may be NULL). Returns 0, or -1 with err. */
int pkgrule_age(const char *entry, int *eco, uint64_t *ms, struct sbx_err *err);

/* The min_age the entries v[0..n) give ecosystem eco (NULL: every
 * ecosystem's alone): the last entry naming it, else the last naming no
 * ecosystem, else 0; *which (may be NULL) its index, or SIZE_MAX. */
uint64_t pkgrule_age_for(const char *const *v, size_t n, const char *eco, size_t *which);

#endif
