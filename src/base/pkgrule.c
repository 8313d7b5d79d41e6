/* pkgrule.c - see pkgrule.h: the syntax of a package rule, names as each
 * ecosystem compares them, and the sure-only coverage a ceiling needs. */
#include "base/pkgrule.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/util.h"

const char *const pkgrule_ecosystems[] = { "npm", "pypi", "deb", "go", "cargo", "maven", NULL };

#define GLOB_MAX 214 /* npm's longest name */

static bool eco_known(const char *s, size_t n)
{
	for (size_t i = 0; pkgrule_ecosystems[i]; i++)
		if (strlen(pkgrule_ecosystems[i]) == n && strncmp(s, pkgrule_ecosystems[i], n) == 0)
			return true;
	return false;
}

int pkgrule_check(const char *entry, struct sbx_err *err)
{
	const char *colon = strchr(entry, ':'), *glob = colon ? colon + 1 : entry;
	size_t n = strlen(glob);

	if (colon && !eco_known(entry, (size_t)(colon - entry)))
		return err_set(err, 0, "'%s': unknown ecosystem '%.*s' (ECO:GLOB, ECO one of npm, pypi, deb, go, "
			       "cargo, maven)",
			       entry, (int)(colon - entry), entry);
	if (n == 0 || n > GLOB_MAX)
		return err_set(err, 0, "'%s' is not [ECO:]GLOB (a package name or glob, at most %d "
			       "characters; ECO one of npm, pypi, deb, go, cargo, maven)", entry, GLOB_MAX);
	/* Maven's names are GROUP:ARTIFACT */
	bool maven = colon && colon - entry == 5 && strncmp(entry, "maven", 5) == 0;
	for (const char *p = glob; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("-._~@/+*?[]!", *p) && !(maven && *p == ':'))
			return err_set(err, 0, "'%s': '%c' is not a package name or glob character", entry,
				       *p);
	return 0;
}

void pkgrule_normalize(const char *eco, const char *name, char *out, size_t size)
{
	size_t o = 0;
	bool pypi = strcmp(eco, "pypi") == 0, cargo = strcmp(eco, "cargo") == 0;

	if (!size)
		return;
	for (const char *p = name; *p && o + 1 < size; p++) {
		if (pypi && strchr("-_.", *p)) {
			if (o && out[o - 1] == '-')
				continue;
			out[o++] = '-';
		} else if (cargo) {
			/* crates.io: one crate whatever the case, '-' and '_' alike */
			out[o++] = *p == '_' ? '-' : (char)tolower((unsigned char)*p);
		} else {
			out[o++] = pypi ? (char)tolower((unsigned char)*p) : *p;
		}
	}
	out[o] = '\0';
}

static bool has_meta(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (strchr("*?[\\", s[i]))
			return true;
	return false;
}

/* Both globs of one ecosystem, normalised. */
static bool glob_covers(const char *eco, const char *wide, const char *entry)
{
	char w[GLOB_MAX + 1], e[GLOB_MAX + 1];
	size_t wl;

	pkgrule_normalize(eco, wide, w, sizeof(w));
	pkgrule_normalize(eco, entry, e, sizeof(e));
	wl = strlen(w);
	if (strcmp(w, e) == 0)
		return true;
	if (!has_meta(e, strlen(e)))
		return fnmatch(w, e, 0) == 0;
	/* PREFIX*: every name the entry matches starts with PREFIX */
	return wl && w[wl - 1] == '*' && !has_meta(w, wl - 1) && strncmp(w, e, wl - 1) == 0;
}

/* wide applies to eco: "eco:GLOB" or "GLOB"; *glob is past the prefix */
static bool applies(const char *rule, const char *eco, const char **glob)
{
	const char *colon = strchr(rule, ':');

	*glob = colon ? colon + 1 : rule;
	return !colon || ((size_t)(colon - rule) == strlen(eco) && strncmp(rule, eco, strlen(eco)) == 0);
}

/* one ecosystem's glob under some entry of the list */
static bool eco_covered(const char *const *wide, size_t n, const char *eco, const char *glob)
{
	const char *wg;

	for (size_t i = 0; i < n; i++)
		if (applies(wide[i], eco, &wg) && glob_covers(eco, wg, glob))
			return true;
	return false;
}

bool pkgrule_covers(const char *const *wide, size_t n, const char *entry)
{
	const char *colon = strchr(entry, ':');
	char eco[8];

	if (colon) {
		size_t len = (size_t)(colon - entry);
		if (len >= sizeof(eco))
			return false;
		memcpy(eco, entry, len);
		eco[len] = '\0';
		return eco_covered(wide, n, eco, colon + 1);
	}
	/* an entry for every ecosystem: covered in each of them */
	for (size_t i = 0; pkgrule_ecosystems[i]; i++)
		if (!eco_covered(wide, n, pkgrule_ecosystems[i], entry))
			return false;
	return true;
}

int pkgrule_date(const char *s, int64_t *out, struct sbx_err *err)
{
	struct tm tm = { 0 }, back;
	int n = 0;
	size_t len = strlen(s);

	if (len == 10)
		n = sscanf(s, "%4d-%2d-%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday) == 3 ? 3 : 0;
	else if (len == 20 && s[10] == 'T' && s[19] == 'Z')
		n = sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			   &tm.tm_min, &tm.tm_sec) == 6 ? 6 : 0;
	for (size_t i = 0; n && i < len; i++)  /* digits where digits go: no signs, no spaces */
		if ((i == 4 || i == 7) ? s[i] != '-' : (i == 13 || i == 16) ? s[i] != ':' : i == 10 || i == 19 ? 0
		    : (s[i] < '0' || s[i] > '9'))
			n = 0;
	if (n && tm.tm_year >= 1970 && tm.tm_mon >= 1 && tm.tm_mon <= 12 && tm.tm_hour < 24 && tm.tm_min < 60 &&
	    tm.tm_sec < 60) {
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		back = tm;
		time_t t = timegm(&tm);
		/* timegm normalises Feb 30 into March: a date that moved was none */
		if (t >= 0 && tm.tm_mday == back.tm_mday && tm.tm_mon == back.tm_mon) {
			if (out)
				*out = (int64_t)t;
			return 0;
		}
	}
	return err_set(err, 0, "'%s' is not a date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC)", s);
}

int pkgrule_age(const char *entry, int *eco, uint64_t *ms, struct sbx_err *err)
{
	const char *colon = strchr(entry, ':');
	uint64_t v;
	int e = -1;
	struct sbx_err derr;

	if (colon) {
		for (size_t i = 0; pkgrule_ecosystems[i] && e < 0; i++)
			if (strlen(pkgrule_ecosystems[i]) == (size_t)(colon - entry) &&
			    strncmp(entry, pkgrule_ecosystems[i], (size_t)(colon - entry)) == 0)
				e = (int)i;
		if (e < 0)
			return err_set(err, 0, "'%s': unknown ecosystem '%.*s' (ECO:DURATION, ECO one of npm, pypi, "
				       "deb, go, cargo, maven)", entry, (int)(colon - entry), entry);
	}
	const char *d = colon ? colon + 1 : entry;
	if (strcmp(d, "0") != 0 && parse_duration_ms(d, &v, &derr) < 0)
		return err_set(err, 0, "'%s' is not [ECO:]DURATION (e.g. 7d, or npm:3d, deb:0; none or 0: no "
			       "age rule)", entry);
	if (strcmp(d, "0") == 0)
		v = 0;
	if (eco)
		*eco = e;
	if (ms)
		*ms = v;
	return 0;
}

/* The ecosystem an entry's "ECO:" names (index in pkgrule_ecosystems),
 * -1 for none (no colon, or what precedes the first is no ecosystem's
 * name: a date's "T00:00:00Z" has colons too). */
static int eco_of(const char *entry)
{
	const char *colon = strchr(entry, ':');

	for (size_t i = 0; colon && pkgrule_ecosystems[i]; i++)
		if (strlen(pkgrule_ecosystems[i]) == (size_t)(colon - entry) &&
		    strncmp(entry, pkgrule_ecosystems[i], (size_t)(colon - entry)) == 0)
			return (int)i;
	return -1;
}

int pkgrule_not_after(const char *entry, int *eco, int64_t *secs, struct sbx_err *err)
{
	int e = eco_of(entry);
	const char *d = e < 0 ? entry : strchr(entry, ':') + 1;
	size_t word = strspn(entry, "abcdefghijklmnopqrstuvwxyz");
	int64_t t = 0;

	if (e < 0 && word && entry[word] == ':')
		return err_set(err, 0, "'%s': unknown ecosystem '%.*s' (ECO:DATE, ECO one of npm, pypi, deb, go, "
			       "cargo, maven)", entry, (int)word, entry);
	if (strcmp(d, "none") != 0 && pkgrule_date(d, &t, NULL) < 0)
		return err_set(err, 0, "'%s' is not [ECO:]DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC; "
			       "ECO:none for an ecosystem the freeze leaves out)", entry);
	if (eco)
		*eco = e;
	if (secs)
		*secs = t;
	return 0;
}

/* The entry of v[0..n) that governs ecosystem eco (NULL: the one for
 * every ecosystem): the last naming it, else the last naming none;
 * SIZE_MAX: neither. An entry that does not read (each was checked when
 * read) is passed over. */
static size_t pick(const char *const *v, size_t n, const char *eco, bool dates)
{
	size_t all = SIZE_MAX, own = SIZE_MAX;
	int e;

	for (size_t i = 0; i < n; i++) {
		if ((dates ? pkgrule_not_after(v[i], &e, NULL, NULL) : pkgrule_age(v[i], &e, NULL, NULL)) < 0)
			continue;
		if (e < 0)
			all = i;
		else if (eco && strcmp(pkgrule_ecosystems[e], eco) == 0)
			own = i;
	}
	return own != SIZE_MAX ? own : all;
}

int64_t pkgrule_not_after_for(const char *const *v, size_t n, const char *eco, size_t *which)
{
	size_t w = pick(v, n, eco, true);
	int64_t t = 0;

	if (w != SIZE_MAX)
		(void)pkgrule_not_after(v[w], NULL, &t, NULL);
	if (which)
		*which = w;
	return t;
}

uint64_t pkgrule_age_for(const char *const *v, size_t n, const char *eco, size_t *which)
{
	size_t w = pick(v, n, eco, false);
	uint64_t ms = 0;

	if (w != SIZE_MAX)
		(void)pkgrule_age(v[w], NULL, &ms, NULL);
	if (which)
		*which = w;
	return ms;
}
