/* gw_maven.c - the Maven ecosystem of the gateway, at /maven/: a
 * repository in Maven Central's layout in front of the profile's
 * ([packages] maven). Paths are read strictly (mavenmeta.c) before
 * anything is asked upstream. Every file (jar, pom, ...) is verified
 * before it is cached or served against upstream's checksum beside it,
 * .sha256 else .sha1; a file without one is refused (fail closed). The
 * .sha1 and .sha256 the client asks for are made here from the verified
 * bytes (gw_artifact.c, one download per file for every sandbox).
 * maven-metadata.xml is read and written again (mavenmeta.c) with only
 * the versions the rules let through, latest and release among them.
 * Rules (rules.h) on GROUP:ARTIFACT: refused by name is never asked
 * upstream; Maven has no publish time to trust, so a version's age is from
 * when this cache first saw it (listed in metadata, or its checksum
 * fetched), recorded per artifact (gw_seen.c); a pinned version is held
 * to the same rules; offline serves what the cache holds. */
#define _GNU_SOURCE
#include <string.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "gateway/gw_doc.h"
#include "pkg/mavenmeta.h"

#define FILE_MAX (512ULL << 20)  /* one jar, pom, ... */
#define SUM_MAX 4096             /* a checksum file */
#define XML "application/xml"

struct mvn_req {
	struct maven_req m;
	enum sri_algo algo; /* the checksum file being fetched */
};

static const char *what(const struct mvn_req *r)
{
	return r->m.version[0] ? r->m.version : NULL;
}

static void missing(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg);

/* The document at url (taken), kept as key: r (taken) is answered through
 * then (gw_doc.c). */
static void get_doc(struct gw *gw, struct gw_client *cl, struct mvn_req *r, const char *key, char *url,
		    bool immutable, uint64_t max, gw_doc_then then)
{
	_cleanup_free_ char *u = url;

	gw_doc_get(gw, cl, &(struct gw_doc_req){ .eco = "maven", .upstream = gw->maven_upstream, .key = key,
						 .name = r->m.name, .what = what(r), .url = u, .max = max,
						 .immutable = immutable, .then = then, .missing = missing, .arg = r });
}

static struct gw_seen_key seen_key(struct gw *gw, const struct maven_req *m, char *buf, size_t size)
{
	snprintf(buf, size, "seen/%s", m->name);
	return (struct gw_seen_key){ "maven", gw->maven_upstream, buf };
}

/* --- files: their checksum, then the file --- */

static void sum_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg);

/* The checksum file of the next algorithm: .sha256 first, then .sha1. */
static void get_sum(struct gw *gw, struct gw_client *cl, struct mvn_req *r)
{
	_cleanup_free_ char *key = xasprintf("sum/%s", r->m.path);

	get_doc(gw, cl, r, key, xasprintf("%s%s.%s", gw->maven_upstream, r->m.path, sri_algo_name(r->algo)), true,
		SUM_MAX, sum_then);
}

/* Upstream has no such file: a checksum of the next algorithm, or none
 * (refused). */
static void missing(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	const struct mvn_req *r = arg;

	(void)d;
	if (r->m.kind != MAVEN_FILE) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "maven %s: upstream has no '%s'", r->m.name, r->m.path);
	} else if (r->algo == SRI_SHA256) {
		struct mvn_req *next = xmalloc(sizeof(*next));
		*next = *r;
		next->algo = SRI_SHA1;
		get_sum(gw, cl, next);
	} else {
		gw_fail(gw, cl, 502, "maven", r->m.name, r->m.version, "maven %s %s: upstream has no checksum "
			"(.sha256 or .sha1) for '%s': refused, nothing can be verified", r->m.name, r->m.version,
			r->m.path);
	}
}

/* The cache keeps "ALGO HEX" (the algorithm the file was fetched for). */
static void sum_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	const struct mvn_req *r = arg;
	const char *body = d->body;
	size_t len = d->len;
	struct sri want;
	char why[600], line[160];
	enum sri_algo algo = r->algo;

	if (!d->fetched && len > 5 && memcmp(body, "sha1 ", 5) == 0) {
		algo = SRI_SHA1;
		body += 5, len -= 5;
	} else if (!d->fetched && len > 7 && memcmp(body, "sha256 ", 7) == 0) {
		algo = SRI_SHA256;
		body += 7, len -= 7;
	}
	if (maven_checksum(body, len, algo, &want) < 0) {
		gw_fail(gw, cl, 502, "maven", r->m.name, r->m.version, "maven %s %s: upstream's .%s for '%s' is not "
			"one (refused)", r->m.name, r->m.version, sri_algo_name(algo), r->m.path);
		return;
	}
	if (d->fetched) {
		int n = snprintf(line, sizeof(line), "%s %s", sri_algo_name(algo), want.hex);
		gw_cache_index_put(gw->cache, d->eco, d->upstream, d->key, line, (size_t)n, "");
	}
	/* the version exists upstream: recorded as seen now, if it never was */
	char sk[MAVEN_PATH_MAX + 160];
	struct gw_seen_key k = seen_key(gw, &r->m, sk, sizeof(sk));
	if (gw_seen_ok1(gw, &k, r->m.name, r->m.version, true, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "maven", r->m.name, r->m.version, "%s", why);
		return;
	}
	_cleanup_free_ char *url = xasprintf("%s%s", gw->maven_upstream, r->m.path);
	struct gw_artifact_req ar = { .eco = "maven", .name = r->m.name, .version = r->m.version, .url = url,
				      .want = want, .max = FILE_MAX, .sum = r->m.sum, .sum_algo = r->m.sum_algo };
	gw_artifact_get(gw, cl, &ar);
}

/* --- maven-metadata.xml --- */

/* The versions the rules let through (each recorded as seen), and the
 * line that says how many were hidden. */
static bool *keep_of(struct gw *gw, const struct mvn_req *r, const struct mavenmeta *mm)
{
	bool *keep = xcalloc(mm->n + 1, sizeof(*keep));
	_cleanup_free_ int64_t *seen = xcalloc(mm->n + 1, sizeof(*seen));
	_cleanup_free_ const char **v = xcalloc(mm->n + 1, sizeof(*v));
	char why[600], told[256] = "", sk[MAVEN_PATH_MAX + 160];
	size_t hidden = 0, t = 0;
	struct gw_seen_key k = seen_key(gw, &r->m, sk, sizeof(sk));

	for (size_t i = 0; i < mm->n; i++)
		v[i] = mm->versions[i];
	gw_first_seen(gw, &k, v, mm->n, seen, true);
	for (size_t i = 0; i < mm->n; i++) {
		keep[i] = gw_seen_ok(gw, "maven", r->m.name, v[i], seen[i], why, sizeof(why)) == 0;
		if (!keep[i] && hidden++ < 6 && t < sizeof(told))
			t += (size_t)snprintf(told + t, sizeof(told) - t, "%s%s", t ? ", " : "", v[i]);
	}
	if (hidden) {
		char by[160], key[MAVEN_PATH_MAX + 160];
		rules_hiding(&gw->conf.rules, "maven", by, sizeof(by));
		snprintf(key, sizeof(key), "maven:%s", r->m.name);
		gw_tell_once(gw, key, "maven '%s': %zu version%s %s hidden (%s; the age of a Maven version is since "
			     "the gateway first saw it)", r->m.name, hidden, hidden == 1 ? "" : "s", by, told);
	}
	return keep;
}

static void meta_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	const struct mvn_req *r = arg;
	struct mavenmeta mm;
	const char *why;
	char hex[129];

	if (mavenmeta_parse(d->body, d->len, &mm, &why) < 0) {
		gw_fail(gw, cl, 502, "maven", r->m.name, NULL, "maven %s: upstream's maven-metadata.xml: %s (refused)",
			r->m.name, why);
		return;
	}
	if (mm.versioning && ((mm.group[0] && strcmp(mm.group, r->m.group) != 0) ||
			      (mm.artifact[0] && strcmp(mm.artifact, r->m.artifact) != 0))) {
		gw_fail(gw, cl, 502, "maven", r->m.name, NULL, "maven %s: upstream's maven-metadata.xml is %s:%s's "
			"(refused)", r->m.name, mm.group, mm.artifact);
		mavenmeta_free(&mm);
		return;
	}
	gw_doc_keep(gw, d);
	_cleanup_free_ bool *keep = mm.versioning ? keep_of(gw, r, &mm) : NULL;
	size_t olen;
	_cleanup_free_ char *out = mavenmeta_write(&mm, keep, &olen);
	mavenmeta_free(&mm);
	if (!r->m.sum) {
		gw_reply(gw, cl, 200, XML, out, olen);
		return;
	}
	sri_hex_mem(r->m.sum_algo, out, olen, hex);  /* of what is served */
	gw_reply(gw, cl, 200, "text/plain", hex, strlen(hex));
}

static void mvn_request(struct gw *gw, struct gw_client *cl, const char *raw)
{
	struct mvn_req *r;
	const char *why;
	char refused[600];

	if (!gw->maven_upstream) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "no Maven upstream is configured ([packages] maven)");
		return;
	}
	r = xcalloc(1, sizeof(*r));
	if (maven_request(raw, strcspn(raw, "?#"), &r->m, &why) < 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "maven: not a repository path: %s", why);
		free(r);
		return;
	}
	if (rules_name(&gw->conf.rules, "maven", r->m.name, refused, sizeof(refused)) < 0 ||
	    (r->m.kind == MAVEN_FILE &&
	     rules_version(&gw->conf.rules, "maven", r->m.name, r->m.version, refused, sizeof(refused)) < 0)) {
		gw_fail(gw, cl, 403, "maven", r->m.name, what(r), "%s", refused);
		free(r);
		return;
	}
	if (r->m.kind == MAVEN_METADATA) {
		_cleanup_free_ char *key = xasprintf("meta/%s", r->m.path);
		get_doc(gw, cl, r, key, xasprintf("%s%s", gw->maven_upstream, r->m.path), false, MAVENMETA_MAX,
			meta_then);
		return;
	}
	r->algo = SRI_SHA256;
	get_sum(gw, cl, r);
}

const struct gw_ecosystem gw_maven = { .name = "maven", .request = mvn_request };
