/* gw_npm.c - the npm ecosystem of the gateway, at /npm/: packuments are
 * fetched from the upstream registry (kept briefly, revalidated with
 * their ETag), their tarball links rewritten to point back here, and a
 * tarball request is looked up in its package's packument, whose
 * dist.integrity (or old dist.shasum) the bytes must match before they
 * are cached or served. npm's other APIs (audit, search, login) are 404.
 * The profile's rules ([packages], pkg/rules.h): a name refused is
 * never asked upstream; under min_age the full packument (with "time") is
 * fetched, young versions hidden and a tarball of one refused; offline,
 * only the cache answers. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "gateway/gw_doc.h"
#include "pkg/npm_doc.h"

#define PACKUMENT_MAX (48ULL << 20)      /* an enormous packument is refused */
#define TARBALL_MAX (512ULL << 20)
#define CORGI "application/vnd.npm.install-v1+json"

struct npm_req {
	char name[NPM_NAME_MAX + 1];
	char file[256];              /* a tarball's file name, or "" */
	bool full;                   /* the full packument, not the abbreviated one */
};

/* The packument, its young versions hidden (told once per package). */
static void serve_packument(struct gw *gw, struct gw_client *cl, struct npm_req *r, const char *doc,
			    size_t len)
{
	struct npm_serve s = { .rules = &gw->conf.rules, .now_s = (int64_t)time(NULL) };
	_cleanup_free_ char *out = NULL;
	size_t out_len = 0;
	struct sbx_err err;
	char hiding[160], key[NPM_NAME_MAX + 8];

	if (npm_doc_serve(doc, len, r->name, GATEWAY_NPM_URL, &s, &out, &out_len, &err) < 0) {
		gw_fail(gw, cl, 502, "npm", r->name, NULL, "npm %s: upstream: %s", r->name, err.msg);
		return;
	}
	if (s.hidden) {
		/* npm's own "No matching version" cannot say why: this line does */
		rules_hiding(&gw->conf.rules, "npm", hiding, sizeof(hiding));
		snprintf(key, sizeof(key), "npm:%s", r->name);
		gw_tell_once(gw, key, "npm '%s': %zu version%s %s hidden: %s", r->name, s.hidden,
			     s.hidden == 1 ? "" : "s", hiding, s.told);
	}
	gw_reply(gw, cl, 200, "application/json", out, out_len);
}

/* The packument (kept as upstream sent it), or the tarball it names. */
static void serve_doc(struct gw *gw, struct gw_client *cl, const struct gw_doc *doc, void *arg)
{
	struct npm_req *r = arg;
	struct sbx_err err;
	char why[300];

	gw_doc_keep(gw, doc);
	if (!r->file[0]) {
		serve_packument(gw, cl, r, doc->body, doc->len);
		return;
	}
	struct npm_dist d;
	struct gw_artifact_req ar = { .eco = "npm", .name = r->name, .max = TARBALL_MAX };
	int found = npm_doc_find(doc->body, doc->len, r->file, &d, &err);
	if (found < 0) {
		gw_fail(gw, cl, 502, "npm", r->name, NULL, "npm %s: upstream: %s", r->name, err.msg);
	} else if (!found) {
		gw_fail(gw, cl, 404, "npm", r->name, NULL, "npm %s: no version has the tarball '%s'", r->name,
			r->file);
	} else if (rules_age(&gw->conf.rules, "npm", r->name, d.version, d.published_s, (int64_t)time(NULL), why, sizeof(why)) < 0) {
		/* a pin (a lockfile's) to a version the packument hides */
		gw_fail(gw, cl, 403, "npm", r->name, d.version, "npm %s@%s: %s", r->name, d.version, why);
	} else if (rules_version(&gw->conf.rules, "npm", r->name, d.version, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "npm", r->name, d.version, "%s", why);
	} else if (sri_from_npm(d.integrity, d.shasum, &ar.want) < 0) {
		gw_fail(gw, cl, 502, "npm", r->name, d.version, "npm %s@%s: its index gives no digest to check",
			r->name, d.version);
	} else {
		ar.version = d.version;
		ar.url = d.tarball;
		gw_artifact_get(gw, cl, &ar);
	}
	if (found > 0)
		npm_dist_free(&d);
}

/* The upstream URL of a packument: the scope's '/' escaped, as npm does. */
static char *doc_url(const char *upstream, const char *name)
{
	const char *slash = strchr(name, '/');
	if (!slash)
		return xasprintf("%s%s", upstream, name);
	return xasprintf("%s%.*s%%2f%s", upstream, (int)(slash - name), name, slash + 1);
}

/* The packument in the form r asks for (gw_doc.c: kept briefly, then
 * revalidated with its validators); offline, the other form will do, but
 * not under min_age: only the full one has dates. */
static void get_doc(struct gw *gw, struct gw_client *cl, struct npm_req *r)
{
	char key[NPM_NAME_MAX + 2], other[NPM_NAME_MAX + 2];  /* the cache's: "+" first for the full form */
	_cleanup_free_ char *url = doc_url(gw->npm_upstream, r->name);

	snprintf(key, sizeof(key), "%s%s", r->full ? "+" : "", r->name);
	snprintf(other, sizeof(other), "%s%s", r->full ? "" : "+", r->name);
	gw_doc_get(gw, cl, &(struct gw_doc_req){ .eco = "npm", .upstream = gw->npm_upstream, .key = key,
						 .name = r->name, .url = url,
						 .accept = r->full ? "application/json" : CORGI, .max = PACKUMENT_MAX,
						 .revalidate = true,
						 .offline_key = rules_dated(&gw->conf.rules) ? NULL : other,
						 .gone = "no such package upstream", .then = serve_doc, .arg = r });
}

/* The version in a tarball's file name ("name-1.2.3.tgz"), NULL if none. */
static const char *file_version(const char *name, const char *file, char *out, size_t size)
{
	const char *base = strchr(name, '/') ? strchr(name, '/') + 1 : name;
	size_t bl = strlen(base), fl = strlen(file);

	if (fl <= bl + 5 || strncmp(file, base, bl) != 0 || file[bl] != '-' || strcmp(file + fl - 4, ".tgz") != 0 ||
	    fl - bl - 5 >= size)
		return NULL;
	snprintf(out, size, "%.*s", (int)(fl - bl - 5), file + bl + 1);
	return out;
}

static void npm_request(struct gw *gw, struct gw_client *cl, const char *path)
{
	struct npm_req *r;
	size_t len = strcspn(path, "?#");
	const char *sep = memmem(path, len, "/-/", 3);
	char why[600], ver[128];

	cl->json_errors = true;
	if (!gw->npm_upstream) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "no npm upstream is configured");
		return;
	}
	if (len >= 2 && path[0] == '-' && path[1] == '/') {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "not served by the gateway");
		return;
	}
	r = xcalloc(1, sizeof(*r));
	size_t nlen = sep ? (size_t)(sep - path) : len;
	size_t flen = sep ? len - nlen - 3 : 0;
	if (npm_doc_name(path, nlen, r->name, sizeof(r->name)) < 0 || flen >= sizeof(r->file) ||
	    (sep && (flen == 0 || memchr(sep + 3, '/', flen)))) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "not an npm package path");
		free(r);
		return;
	}
	if (sep)
		memcpy(r->file, sep + 3, flen);
	if (rules_name(&gw->conf.rules, "npm", r->name, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "npm", r->name, file_version(r->name, r->file, ver, sizeof(ver)), "%s", why);
		free(r);
		return;
	}
	/* a tarball is looked up in the abbreviated form npm itself reads;
	 * min_age needs the dates only the full one has */
	r->full = rules_dated(&gw->conf.rules) || (!sep && !strstr(cl->accept, CORGI));
	get_doc(gw, cl, r);
}

const struct gw_ecosystem gw_npm = { .name = "npm", .request = npm_request };
