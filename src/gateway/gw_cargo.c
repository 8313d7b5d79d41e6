/* gw_cargo.c - the Cargo ecosystem of the gateway, at /cargo/: a sparse
 * registry (RFC 2789) in front of the profile's ([packages] cargo).
 * config.json is the gateway's own: dl points back here, and there is no
 * api (publishing is not a mirror's job: cargo publish is refused by
 * cargo itself, "the registry does not support API commands"). Index
 * files are fetched from upstream by the path their name has (checked,
 * cargoidx.c), kept as index documents, and served with the lines the
 * rules refuse taken out. A .crate (dl/NAME/VERSION/download) is looked
 * up in its crate's index file, held to the same rules (a Cargo.lock pin
 * asks for it directly), fetched from the upstream config.json's dl, and
 * its sha256 checked against the line's cksum before it is cached or
 * served (gw_artifact.c: once for every sandbox).
 * Rules (rules.h): a crate refused by name is never asked upstream; a
 * version's age is the index line's pubtime (the registry's, not the
 * publisher's), and a line without one is refused under min_age and
 * not_after; a feed (OSV "crates.io") names versions; offline serves what
 * the cache holds. Yanked lines are served as upstream wrote them: cargo
 * never picks a yanked version for a new resolution, and a Cargo.lock
 * that pins one still builds, as crates.io means yanking. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "pkg/cargoidx.h"
#include "gateway/gw.h"
#include "gateway/gw_doc.h"

#define DOC_MAX (CARGOIDX_FILE_MAX)
#define CRATE_MAX (256ULL << 20)   /* crates.io refuses uploads past 10 MiB; some mirrors allow more */
#define CONFIG_KEY "config.json"

struct cargo_req {
	char name[CARGOIDX_NAME_MAX + 1];  /* lower case */
	char vers[CARGOIDX_VER_MAX + 1];   /* a download's; "" for an index file */
	char path[CARGOIDX_PATH_MAX + 1];  /* the index file's */
	struct cargoidx_line line;         /* a download's line */
};

static const char *what(const struct cargo_req *r)
{
	return r->vers[0] ? r->vers : NULL;
}

/* The document at upstream + key, kept as key: r (taken) is answered
 * through then (gw_doc.c). */
static void get_doc(struct gw *gw, struct gw_client *cl, struct cargo_req *r, const char *key, gw_doc_then then)
{
	_cleanup_free_ char *url = xasprintf("%s%s", gw->cargo_upstream, key);

	gw_doc_get(gw, cl, &(struct gw_doc_req){ .eco = "cargo", .upstream = gw->cargo_upstream, .key = key,
						 .name = r->name, .what = what(r), .url = url, .max = DOC_MAX,
						 .then = then, .arg = r });
}

/* --- the rules of one version --- */

/* 0 when line l may be served: no feed names it, and under min_age or
 * not_after its pubtime is old enough (none: refused); else -1 with why. */
static int version_ok(struct gw *gw, const struct cargoidx_line *l, char *why, size_t size)
{
	char inner[400];

	if (rules_version(&gw->conf.rules, "cargo", l->name, l->vers, why, size) < 0)
		return -1;
	if (!rules_dated(&gw->conf.rules) ||
	    rules_age(&gw->conf.rules, "cargo", l->name, l->vers, l->pubtime, (int64_t)time(NULL), inner,
		      sizeof(inner)) == 0)
		return 0;
	snprintf(why, size, "cargo %s %s: %s%s", l->name, l->vers, inner,
		 l->pubtime ? "" : " (the index line has no pubtime)");
	return -1;
}

struct keep_ctx {
	struct gw *gw;
	char told[256];
	size_t t;
};

static int keep_line(void *arg, const struct cargoidx_line *l)
{
	struct keep_ctx *k = arg;
	char why[600];

	if (version_ok(k->gw, l, why, sizeof(why)) == 0)
		return 0;
	if (k->t < sizeof(k->told) - 1)
		k->t += (size_t)snprintf(k->told + k->t, sizeof(k->told) - k->t, "%s%s%s", k->t ? ", " : "", l->vers,
					 l->pubtime ? "" : " (no pubtime)");
	return -1;
}

/* --- index files --- */

static void serve_index(struct gw *gw, struct gw_client *cl, struct cargo_req *r, const char *body, size_t len)
{
	struct keep_ctx k = { .gw = gw };
	struct cargoidx_filtered f;
	const char *why;

	if (cargoidx_filter(body, len, r->name, rules_per_version(&gw->conf.rules) ? keep_line : NULL, &k, &f,
			    &why) < 0) {
		gw_fail(gw, cl, 502, "cargo", r->name, NULL, "cargo %s: upstream's index file: %s (refused)", r->name,
			why);
		return;
	}
	if (f.dropped) {
		char by[160], key[CARGOIDX_NAME_MAX + 8];
		rules_hiding(&gw->conf.rules, "cargo", by, sizeof(by));
		snprintf(key, sizeof(key), "cargo:%s", r->name);
		gw_tell_once(gw, key, "cargo '%s': %zu version%s %s hidden: %s", r->name, f.dropped,
			     f.dropped == 1 ? "" : "s", by, k.told);
	}
	gw_reply(gw, cl, 200, "text/plain; charset=utf-8", f.out, f.len);
	free(f.out);
}

static void config_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg);

/* The index file, for an index request or a download's line. */
static void index_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	struct cargo_req *r = arg;
	char why[600];
	const char *bad;

	gw_doc_keep(gw, d);
	if (!r->vers[0]) {
		serve_index(gw, cl, r, d->body, d->len);
		return;
	}
	int found = cargoidx_find(d->body, d->len, r->name, r->vers, &r->line, &bad);
	if (found < 0) {
		gw_fail(gw, cl, 502, "cargo", r->name, r->vers, "cargo %s: upstream's index file: %s (refused)",
			r->name, bad);
	} else if (!found) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "cargo %s: the index has no version '%s' (with a cksum)", r->name,
			r->vers);
	} else if (version_ok(gw, &r->line, why, sizeof(why)) < 0) {
		/* a pin (Cargo.lock's) to a version the index file hides */
		gw_fail(gw, cl, 403, "cargo", r->name, r->vers, "%s", why);
	} else {
		/* the upstream's dl: r goes on, freed with that document */
		struct cargo_req *next = xcalloc(1, sizeof(*next));
		*next = (struct cargo_req){ .line = r->line };
		memcpy(next->name, r->name, sizeof(r->name));
		memcpy(next->vers, r->vers, sizeof(r->vers));
		get_doc(gw, cl, next, CONFIG_KEY, config_then);
	}
}

/* The upstream's config.json: where its .crate files are. */
static void config_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	const struct cargo_req *r = arg;
	char dl[CARGOIDX_DL_MAX + 1], url[CARGOIDX_DL_MAX + 512];
	const char *why;

	if (cargoidx_config_dl(d->body, d->len, dl, sizeof(dl), &why) < 0 ||
	    cargoidx_dl_url(dl, &r->line, url, sizeof(url)) < 0) {
		gw_fail(gw, cl, 502, "cargo", r->name, r->vers, "cargo: upstream's config.json: %s",
			why ? why : "dl too long");
		return;
	}
	gw_doc_keep(gw, d);
	struct gw_artifact_req ar = { .eco = "cargo", .name = r->line.name, .version = r->line.vers, .url = url,
				      .max = CRATE_MAX };
	if (sri_from_hex256(r->line.cksum, &ar.want) < 0) {
		gw_fail(gw, cl, 502, "cargo", r->name, r->vers, "cargo %s %s: no cksum to check", r->name, r->vers);
		return;
	}
	gw_artifact_get(gw, cl, &ar);
}

/* --- requests --- */

/* dl/NAME/VERSION/download: 0 with the name and version, or -1. */
static int dl_path(const char *p, size_t len, struct cargo_req *r)
{
	const char *s1 = memchr(p, '/', len), *s2 = s1 ? memchr(s1 + 1, '/', len - (size_t)(s1 + 1 - p)) : NULL;

	if (!s2 || len - (size_t)(s2 + 1 - p) != 8 || memcmp(s2 + 1, "download", 8) != 0 ||
	    cargoidx_name(p, (size_t)(s1 - p), r->name, sizeof(r->name)) < 0 ||
	    !cargoidx_version(s1 + 1, (size_t)(s2 - s1 - 1)))
		return -1;
	memcpy(r->vers, s1 + 1, (size_t)(s2 - s1 - 1));
	r->vers[s2 - s1 - 1] = '\0';
	return 0;
}

static void cargo_config(struct gw *gw, struct gw_client *cl)
{
	/* no "api": nothing is published through a mirror */
	static const char doc[] = "{\"dl\":\"" GATEWAY_CARGO_URL "dl\"}\n";

	gw_reply(gw, cl, 200, "application/json", doc, sizeof(doc) - 1);
}

static void cargo_request(struct gw *gw, struct gw_client *cl, const char *raw)
{
	size_t len = strcspn(raw, "?#");
	struct cargo_req *r;
	char refused[600];

	if (!gw->cargo_upstream) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "no Cargo registry is configured ([packages] cargo)");
		return;
	}
	if (len == 11 && memcmp(raw, CONFIG_KEY, 11) == 0) {
		cargo_config(gw, cl);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	if (len > 3 && memcmp(raw, "dl/", 3) == 0 ? dl_path(raw + 3, len - 3, r) < 0
						   : cargoidx_path_name(raw, len, r->name, sizeof(r->name)) < 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "cargo: not a sparse index path (1/a, 2/ab, 3/a/abc, ab/cd/abcd) "
			"or dl/NAME/VERSION/download");
		free(r);
		return;
	}
	if (rules_name(&gw->conf.rules, "cargo", r->name, refused, sizeof(refused)) < 0) {
		gw_fail(gw, cl, 403, "cargo", r->name, what(r), "%s", refused);
		free(r);
		return;
	}
	cargoidx_path(r->name, r->path, sizeof(r->path));
	get_doc(gw, cl, r, r->path, index_then);
}

const struct gw_ecosystem gw_cargo = { .name = "cargo", .request = cargo_request };
