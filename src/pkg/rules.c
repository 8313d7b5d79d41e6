/* rules.c - package rules by name and age (rules.h): glob matching per
 * ecosystem, deny before allow, and the sentences a refusal carries. */
#define _GNU_SOURCE
#include "pkg/rules.h"

#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/pkgrule.h"
#include "pkg/malfeed.h"

void rules_normalize(const char *eco, const char *name, char *out, size_t size)
{
	pkgrule_normalize(eco, name, out, size);
}

/* An entry "ECO:GLOB" applies to ECO only, "GLOB" to every ecosystem;
 * *named tells whether the entry names this ecosystem. */
static bool entry_matches(const char *entry, const char *eco, const char *norm, bool *named)
{
	const char *colon = strchr(entry, ':'), *glob = entry;
	char g[256];

	if (colon) {
		if ((size_t)(colon - entry) != strlen(eco) || strncmp(entry, eco, strlen(eco)) != 0)
			return false;
		glob = colon + 1;
	}
	*named = true;
	rules_normalize(eco, glob, g, sizeof(g));
	return fnmatch(g, norm, 0) == 0;
}

/* A refusal, or under [packages] mode = report a report of one: passes. */
static int refuse(const struct gw_rules *r, const char *eco, const char *name, const char *version,
		  const char *why)
{
	if (!r->report)
		return -1;
	if (r->on_report)
		r->on_report(r->report_arg, eco, name, version, why);
	return 0;
}

static const char *origin_of(const struct sbx_strlist *l, size_t i)
{
	return l->origin && l->origin[i] ? l->origin[i] : "the profile";
}

int rules_name(const struct gw_rules *r, const char *eco, const char *name, char *why, size_t size)
{
	char norm[256];
	bool named = false, any = false;

	rules_normalize(eco, name, norm, sizeof(norm));
	for (size_t i = 0; r->deny && i < r->deny->n; i++)
		if (entry_matches(r->deny->v[i], eco, norm, &named)) {
			snprintf(why, size, "%s '%s' is denied by [packages] deny = %s (%s)", eco, name, r->deny->v[i],
				 origin_of(r->deny, i));
			return refuse(r, eco, name, NULL, why);
		}
	const char *origin, *id = malfeed_match(r->feed, eco, name, NULL, &origin);
	if (id) {
		snprintf(why, size, "%s '%s' is known malicious (%s, [packages] malicious %s)", eco, name, id, origin);
		return refuse(r, eco, name, NULL, why);
	}
	if (!r->allow || r->allow->n == 0)
		return 0;
	for (size_t i = 0; i < r->allow->n; i++) {
		named = false;
		if (entry_matches(r->allow->v[i], eco, norm, &named))
			return 0;
		any |= named;
	}
	snprintf(why, size, "%s '%s' is not on the allow list ([packages] allow%s, %s)", eco, name,
		 any ? "" : ", which names nothing of this ecosystem", origin_of(r->allow, 0));
	return refuse(r, eco, name, NULL, why);
}

int rules_ecosystem(const struct gw_rules *r, const char *eco, char *why, size_t size)
{
	bool named = false;

	if (!r->allow || r->allow->n == 0)
		return 0;
	for (size_t i = 0; i < r->allow->n && !named; i++)
		(void)entry_matches(r->allow->v[i], eco, "", &named);
	if (named)
		return 0;
	snprintf(why, size, "%s is closed: [packages] allow names nothing of this ecosystem (%s)", eco,
		 origin_of(r->allow, 0));
	return refuse(r, eco, NULL, NULL, why);
}

static void say_age(char *out, size_t size, uint64_t s)
{
	if (s >= 86400 * 2)
		snprintf(out, size, "%llu days", (unsigned long long)(s / 86400));
	else if (s >= 3600 * 2)
		snprintf(out, size, "%llu hours", (unsigned long long)(s / 3600));
	else if (s >= 120)
		snprintf(out, size, "%llu minutes", (unsigned long long)(s / 60));
	else
		snprintf(out, size, "%llu seconds", (unsigned long long)s);
}

void rules_set_min_age(struct gw_rules *r, const struct sbx_strlist *l)
{
	size_t which;

	r->min_age_s = pkgrule_age_for((const char *const *)l->v, l->n, NULL, NULL) / 1000;
	r->min_age_set = 0;
	for (unsigned i = 0; pkgrule_ecosystems[i] && i < 8; i++) {
		r->min_age_eco_s[i] = pkgrule_age_for((const char *const *)l->v, l->n, pkgrule_ecosystems[i], &which) / 1000;
		if (which != SIZE_MAX && strchr(l->v[which], ':'))
			r->min_age_set |= 1u << i;
	}
}

uint64_t rules_min_age(const struct gw_rules *r, const char *eco)
{
	for (unsigned i = 0; eco && pkgrule_ecosystems[i] && i < 8; i++)
		if (strcmp(eco, pkgrule_ecosystems[i]) == 0)
			return r->min_age_set & (1u << i) ? r->min_age_eco_s[i] : r->min_age_s;
	return r->min_age_s;
}

void rules_set_not_after(struct gw_rules *r, const struct sbx_strlist *l)
{
	size_t which;
	int eco;

	r->not_after_s = pkgrule_not_after_for((const char *const *)l->v, l->n, NULL, &which);
	r->not_after = which != SIZE_MAX ? l->v[which] : NULL;
	r->not_after_set = 0;
	for (unsigned i = 0; pkgrule_ecosystems[i] && i < 8; i++) {
		r->not_after_eco_s[i] = pkgrule_not_after_for((const char *const *)l->v, l->n, pkgrule_ecosystems[i],
							      &which);
		r->not_after_eco[i] = which != SIZE_MAX ? l->v[which] : NULL;
		if (which != SIZE_MAX && pkgrule_not_after(l->v[which], &eco, NULL, NULL) == 0 && eco == (int)i)
			r->not_after_set |= 1u << i;
	}
}

int64_t rules_not_after(const struct gw_rules *r, const char *eco, const char **entry)
{
	for (unsigned i = 0; eco && pkgrule_ecosystems[i] && i < 8; i++)
		if (strcmp(eco, pkgrule_ecosystems[i]) == 0 && r->not_after_set & (1u << i)) {
			if (entry)
				*entry = r->not_after_eco[i];
			return r->not_after_eco_s[i];
		}
	if (entry)
		*entry = r->not_after;
	return r->not_after_s;
}

static int age_why(const struct gw_rules *r, const char *eco, int64_t published_s, int64_t now_s, char *why,
		   size_t size)
{
	char age[32], min[32];
	uint64_t min_age = rules_min_age(r, eco);
	const char *frozen;
	int64_t not_after = rules_not_after(r, eco, &frozen);

	if (not_after && published_s <= 0) {
		snprintf(why, size, "its publication date is unknown, and [packages] not_after = %s", frozen);
		return -1;
	}
	if (not_after && published_s > not_after) {
		char when[32];
		time_t t = (time_t)published_s;
		struct tm tm;
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&t, &tm));
		snprintf(why, size, "published %s, after [packages] not_after = %s", when, frozen);
		return -1;
	}
	if (!min_age)
		return 0;
	say_age(min, sizeof(min), min_age);
	if (published_s <= 0) {
		snprintf(why, size, "its publication date is unknown, and [packages] min_age is %s", min);
		return -1;
	}
	if (now_s >= published_s && (uint64_t)(now_s - published_s) >= min_age)
		return 0;
	say_age(age, sizeof(age), now_s > published_s ? (uint64_t)(now_s - published_s) : 0);
	snprintf(why, size, "published %s ago, [packages] min_age is %s", age, min);
	return -1;
}

int rules_age(const struct gw_rules *r, const char *eco, const char *name, const char *version,
	      int64_t published_s, int64_t now_s, char *why, size_t size)
{
	if (age_why(r, eco, published_s, now_s, why, size) == 0)
		return 0;
	return refuse(r, eco, name, version, why);
}

int rules_version(const struct gw_rules *r, const char *eco, const char *name, const char *version, char *why,
		  size_t size)
{
	const char *origin, *id = malfeed_match(r->feed, eco, name, version, &origin);

	if (!id)
		return 0;
	snprintf(why, size, "%s '%s@%s' is known malicious (%s, [packages] malicious %s)", eco, name, version, id,
		 origin);
	return refuse(r, eco, name, version, why);
}

bool rules_dated(const struct gw_rules *r)
{
	for (unsigned i = 0; i < 8; i++)
		if ((r->min_age_set & (1u << i) && r->min_age_eco_s[i]) ||
		    (r->not_after_set & (1u << i) && r->not_after_eco_s[i]))
			return true;
	return r->min_age_s || r->not_after_s;
}

bool rules_per_version(const struct gw_rules *r)
{
	return rules_dated(r) || (r->feed && malfeed_count(r->feed));
}

void rules_hiding(const struct gw_rules *r, const char *eco, char *out, size_t size)
{
	char min[32] = "";
	bool feed = r->feed && malfeed_count(r->feed);
	const char *frozen;
	int64_t not_after = rules_not_after(r, eco, &frozen);

	if (rules_min_age(r, eco))
		say_age(min, sizeof(min), rules_min_age(r, eco));
	if (!not_after && !feed) {
		snprintf(out, size, "younger than [packages] min_age (%s)", min);
		return;
	}
	snprintf(out, size, "under [packages]%s%s%s%s%s%s%s", min[0] ? " min_age (" : "", min, min[0] ? ")" : "",
		 not_after ? (min[0] ? ", not_after = " : " not_after = ") : "", not_after ? frozen : "",
		 feed && (min[0] || not_after) ? "," : "", feed ? " malicious" : "");
}

void rules_say_age(uint64_t s, char *out, size_t size)
{
	say_age(out, size, s);
}

void rules_offline(const char *eco, const char *name, const char *version, char *why, size_t size)
{
	snprintf(why, size, "offline: %s '%s%s%s' is not in the cache ([packages] offline = yes)", eco, name,
		 version ? "@" : "", version ? version : "");
}

void rules_which(const char *why, char *rule, size_t size)
{
	const char *p;

	snprintf(rule, size, "%s", "");
	if ((p = strstr(why, "[packages] deny = ")))
		snprintf(rule, size, "deny = %.*s", (int)strcspn(p + 18, " "), p + 18);
	else if (strstr(why, "[packages] allow"))
		snprintf(rule, size, "allow");
	else if ((p = strstr(why, "[packages] min_age is ")))
		snprintf(rule, size, "min_age = %.*s", (int)strcspn(p + 22, ",;)"), p + 22);
	else if (strstr(why, "[packages] offline = yes"))
		snprintf(rule, size, "offline");
	else if ((p = strstr(why, "[packages] not_after = ")))
		snprintf(rule, size, "not_after = %.*s", (int)strcspn(p + 23, " ,;)"), p + 23);
	else if ((p = strstr(why, "is known malicious (")))
		snprintf(rule, size, "malicious = %.*s", (int)strcspn(p + 20, ","), p + 20);
}

int64_t rules_time(const char *iso)
{
	struct tm tm = { 0 };
	int n = 0, oh = 0, om = 0;
	char sign;

	if (!iso || sscanf(iso, "%4d-%2d-%2dT%2d:%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
			   &tm.tm_min, &tm.tm_sec, &n) != 6 || n != 19)
		return 0;
	iso += n;
	if (*iso == '.')
		iso += 1 + strspn(iso + 1, "0123456789");
	if (*iso == 'Z' && iso[1] == '\0') {
		/* UTC */
	} else if (sscanf(iso, "%c%2d:%2d%n", &sign, &oh, &om, &n) == 3 && (sign == '+' || sign == '-') &&
		   iso[n] == '\0' && n == 6) {
		oh = sign == '-' ? -oh : oh;
		om = sign == '-' ? -om : om;
	} else {
		return 0;
	}
	if (tm.tm_year < 1970 || tm.tm_mon < 1 || tm.tm_mon > 12 || tm.tm_mday < 1 || tm.tm_mday > 31 ||
	    tm.tm_hour > 23 || tm.tm_min > 59 || tm.tm_sec > 60)
		return 0;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	time_t t = timegm(&tm);
	return t > 0 ? (int64_t)t - oh * 3600 - om * 60 : 0;
}
