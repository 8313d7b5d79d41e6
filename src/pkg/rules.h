/* rules.h - the profile's package rules ([packages] allow, deny, min_age,
 * not_after, malicious, offline, mode), asked by every ecosystem of the
 * gateway the same way. */
#ifndef SBX_GW_RULES_H
#define SBX_GW_RULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/config.h"

struct gw_rules {
	const struct sbx_strlist *allow;  /* "ECO:GLOB" or "GLOB" (every ecosystem); NULL or empty: all */
	const struct sbx_strlist *deny;   /* the same; wins over allow */
	uint64_t min_age_s;               /* 0: no age rule */
	/* min_age = ECO:DURATION: ecosystem i of pkgrule_ecosystems has
	 * min_age_eco_s[i] where bit i of min_age_set is set, else min_age_s */
	uint64_t min_age_eco_s[8];
	unsigned min_age_set;
	/* not_after = [ECO:]DATE, as min_age: 0 none, else versions published
	 * later are hidden; the entry as the profile wrote it, for messages */
	int64_t not_after_s;
	const char *not_after;
	int64_t not_after_eco_s[8];
	const char *not_after_eco[8];
	unsigned not_after_set;
	const struct malfeed *feed;       /* NULL: none; the packages and versions it names are refused */
	bool offline;                     /* serve only what the cache holds */
	/* [packages] mode = report: what rules_name, rules_ecosystem, rules_age
	 * and rules_version would refuse is handed to on_report and passes (0);
	 * offline and the digests are not rules of theirs and never pass */
	bool report;
	void (*on_report)(void *arg, const char *eco, const char *name, const char *version, const char *why);
	void *report_arg;
};

struct malfeed;

/* The name as the ecosystem compares it: PyPI's normalised (PEP 503:
 * lower case, runs of "-_." as one "-"); npm and deb as given. */
void rules_normalize(const char *eco, const char *name, char *out, size_t size);

/* 0 when NAME of ecosystem ECO ("npm", "pypi", "deb") may be served; -1
 * with why ("'x' is not on the allow list", "'x' matches deny 'npm:x*'"),
 * naming the rule and where it was set. Once any allow entry exists, an
 * ecosystem none of them names is closed: `deb:*` opens apt wholly. */
int rules_name(const struct gw_rules *r, const char *eco, const char *name, char *why, size_t size);

/* 0 when ecosystem ECO is open at all; -1 with why when allow entries
 * exist and none names it (for what has no package name: apt's indexes). */
int rules_ecosystem(const struct gw_rules *r, const char *eco, char *why, size_t size);

/* Sets min_age_s and the ecosystems' own from [packages] min_age's
 * "[ECO:]DURATION" entries (pkgrule_age_for). */
void rules_set_min_age(struct gw_rules *r, const struct sbx_strlist *min_age);

/* The min_age of ecosystem eco, in seconds (0: none). */
uint64_t rules_min_age(const struct gw_rules *r, const char *eco);

/* Sets not_after from [packages] not_after's "[ECO:]DATE" entries
 * (pkgrule_not_after_for); the list must outlive r (messages name its
 * entries). */
void rules_set_not_after(struct gw_rules *r, const struct sbx_strlist *not_after);

/* The not_after of ecosystem eco, Unix seconds (0: none); *entry (may be
 * NULL) the profile's entry that set it. */
int64_t rules_not_after(const struct gw_rules *r, const char *eco, const char **entry);

/* 0 when version VERSION of NAME, published at published_s (Unix seconds;
 * 0: unknown), is old enough at now_s; -1 with why ("published 2 days ago,
 * min_age is 7 days"). An unknown date under an age rule is too young:
 * deny. */
int rules_age(const struct gw_rules *r, const char *eco, const char *name, const char *version,
	      int64_t published_s, int64_t now_s, char *why, size_t size);

/* 0 when version VERSION of NAME may be served; -1 with why when a
 * malicious-package feed names it ("npm 'x@1.0.0' is known malicious
 * (MAL-2025-1, [packages] malicious FILE)"). */
int rules_version(const struct gw_rules *r, const char *eco, const char *name, const char *version, char *why,
		  size_t size);

/* Whether an ecosystem must read the versions' dates (min_age, not_after)
 * or look at each version (a feed) before it serves an index: of any
 * ecosystem (an ecosystem's min_age of 0 may still read them). */
bool rules_dated(const struct gw_rules *r);
bool rules_per_version(const struct gw_rules *r);

/* What hides versions of an index of eco, for the line that says how
 * many: "younger than [packages] min_age (7 days)", or with not_after or
 * a feed "hidden by [packages] min_age (7 days), not_after = D, malicious". */
void rules_hiding(const struct gw_rules *r, const char *eco, char *out, size_t size);

/* An age in words ("2 days", "5 hours", "3 minutes"), as rules_age says it. */
void rules_say_age(uint64_t seconds, char *out, size_t size);

/* The refusal an offline gateway gives for what its cache lacks: "offline:
 * npm 'x' is not in the cache ([packages] offline = yes)"; version may be
 * NULL. */
void rules_offline(const char *eco, const char *name, const char *version, char *why, size_t size);

/* The rule a refusal's sentence (from the functions above) names, for the
 * "rule" of a package-refused event: "deny = npm:x*", "allow", "min_age =
 * 7 days", "offline"; "" when it names none. */
void rules_which(const char *why, char *rule, size_t size);

/* An ISO 8601 date and time in UTC as registries write it
 * ("2024-05-01T12:00:00.123Z", or with +HH:MM): Unix seconds, 0 when it
 * is not one. */
int64_t rules_time(const char *iso);

/* Under report, each function above that would refuse fills why all the
 * same, tells on_report (eco, name, version: NULL when the function was
 * not given it) and returns 0. */

#endif
