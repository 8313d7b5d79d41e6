/* gw_seen.c - when the gateway first saw a version, for the ecosystems
 * whose upstream gives no publish time sbxrun can trust (Go: .info's Time
 * is the publisher's word; Maven: nothing at all): the age rules (min_age,
 * not_after) count from then. The record is an index document of the
 * cache, "VERSION SECONDS" lines, one per package; only versions upstream
 * listed or vouched for are recorded (a sandbox cannot fill it with
 * made-up ones), and a record lost to eviction makes versions younger,
 * never older. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "gateway/gw.h"

void gw_first_seen(struct gw *gw, const struct gw_seen_key *k, const char *const *v, size_t n, int64_t *seen,
		   bool record)
{
	_cleanup_free_ char *body = NULL, *add = NULL;
	char etag[8];
	size_t len = 0, alen = 0;
	int64_t age, now = (int64_t)time(NULL);

	if (gw_cache_index_get(gw->cache, k->eco, k->upstream, k->key, &body, &len, etag, sizeof(etag), &age) != 1)
		len = 0;
	for (size_t i = 0; i < n; i++) {
		size_t vl = strlen(v[i]);
		seen[i] = 0;
		for (const char *p = body, *e; p && p < body + len && !seen[i]; p = e + 1) {
			if (!(e = memchr(p, '\n', (size_t)(body + len - p))))
				break;
			if ((size_t)(e - p) > vl + 1 && memcmp(p, v[i], vl) == 0 && p[vl] == ' ')
				seen[i] = strtoll(p + vl + 1, NULL, 10);
		}
		if (seen[i] || !record)
			continue;
		seen[i] = now;
		add = xrealloc(add, alen + vl + 24);
		alen += (size_t)sprintf(add + alen, "%s %" PRId64 "\n", v[i], now);
	}
	if (!alen)
		return;
	_cleanup_free_ char *out = xmalloc(len + alen + 1);
	memcpy(out, body ? body : "", len);
	memcpy(out + len, add, alen);
	gw_cache_index_put(gw->cache, k->eco, k->upstream, k->key, out, len + alen, "");
}

int gw_seen_ok(struct gw *gw, const char *eco, const char *name, const char *version, int64_t seen, char *why,
	       size_t size)
{
	char inner[400];
	int64_t now = (int64_t)time(NULL);
	struct gw_rules strict = gw->conf.rules;

	if (rules_version(&gw->conf.rules, eco, name, version, why, size) < 0)
		return -1;  /* a malicious-package feed names it */
	/* judged as enforced, so that a report says "first seen" too */
	strict.report = false;
	if (!rules_dated(&strict) || rules_age(&strict, eco, name, version, seen ? seen : now, now, inner,
					       sizeof(inner)) == 0)
		return 0;
	snprintf(why, size, "%s %s %s: first seen by the gateway %s", eco, name, version,
		 inner + (strncmp(inner, "published ", 10) == 0 ? 10 : 0));
	if (!gw->conf.rules.report)
		return -1;
	if (gw->conf.rules.on_report)
		gw->conf.rules.on_report(gw->conf.rules.report_arg, eco, name, version, why);
	return 0;
}

int gw_seen_ok1(struct gw *gw, const struct gw_seen_key *k, const char *name, const char *version, bool record,
		char *why, size_t size)
{
	int64_t seen;

	gw_first_seen(gw, k, &version, 1, &seen, record);
	return gw_seen_ok(gw, k->eco, name, version, seen, why, size);
}
