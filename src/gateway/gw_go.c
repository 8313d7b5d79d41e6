/* gw_go.c - the Go ecosystem of the gateway, at /go/: a GOPROXY
 * (MOD/@v/list, MOD/@v/VER.info, .mod, .zip, MOD/@latest) in front of the
 * profile's Go module proxy, and its checksum database passed through at
 * /go/sumdb/NAME/. Names are checked as the go command checks them
 * (gomod.c) before anything is asked upstream. Every .mod and .zip is
 * checked before it is cached or served against the database's lookup
 * record for that version, whose signed note is verified with the
 * profile's key (gosum.c): the zip by its h1 hash in the artifact cache
 * (gw_artifact.c, one download per version for every sandbox), the .mod
 * in memory. The note's signature proves the tree head is the database's;
 * that the record is in that tree (the tiles' proof) the go command
 * inside checks itself, through the passthrough.
 * Rules (rules.h): a module refused by name is never asked upstream; a
 * version's age is from when this cache first saw it (a .info's Time is
 * the publisher's word), recorded per module, and a young one is dropped
 * from @v/list, refused as @latest and refused by name; offline serves
 * what the cache holds. */
#define _GNU_SOURCE
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "pkg/gomod.h"
#include "pkg/gosum.h"
#include "gateway/gw.h"
#include "gateway/gw_doc.h"

#define DOC_MAX (16ULL << 20)
#define ZIP_MAX (GOSUM_ZIP_MAX)
#define LIST_MAX 20000          /* versions in one @v/list */
#define TEXT "text/plain; charset=utf-8"
#define JSON "application/json"

struct go_req {
	struct gomod_req m;
	const char *ctype; /* a passthrough's answer */
	unsigned char mod_h1[32];  /* a .mod's hash, from the database's record */
};

static const char *what(const struct go_req *r)
{
	return r->m.version[0] ? r->m.version : NULL;
}

/* The document at url (taken), kept as key below upstream: r (taken) is
 * answered through then (gw_doc.c). */
static void get_doc(struct gw *gw, struct gw_client *cl, struct go_req *r, const char *upstream, const char *key,
		    char *url, bool immutable, gw_doc_then then)
{
	_cleanup_free_ char *u = url;

	gw_doc_get(gw, cl, &(struct gw_doc_req){ .eco = "go", .upstream = upstream, .key = key, .name = r->m.path,
						 .what = what(r), .url = u, .max = DOC_MAX, .immutable = immutable,
						 .then = then, .arg = r });
}

/* --- first seen: a version's age (gw_seen.c) --- */

static void first_seen(struct gw *gw, const struct gomod_req *m, char (*v)[GOMOD_VER_MAX], size_t n, int64_t *seen,
		       bool record)
{
	_cleanup_free_ char *key = xasprintf("seen/%s", m->esc);
	_cleanup_free_ const char **p = xcalloc(n + 1, sizeof(*p));
	struct gw_seen_key k = { "go", gw->go_upstream, key };

	for (size_t i = 0; i < n; i++)
		p[i] = v[i];
	gw_first_seen(gw, &k, p, n, seen, record);
}

static int age_ok(struct gw *gw, const struct gomod_req *m, const char *version, int64_t seen, char *why,
		  size_t size)
{
	return gw_seen_ok(gw, "go", m->path, version, seen, why, size);
}

/* The same for one version (recorded when record). */
static int age_ok1(struct gw *gw, const struct gomod_req *m, const char *version, bool record, char *why,
		   size_t size)
{
	_cleanup_free_ char *key = xasprintf("seen/%s", m->esc);
	struct gw_seen_key k = { "go", gw->go_upstream, key };

	return gw_seen_ok1(gw, &k, m->path, version, record, why, size);
}

/* --- @v/list, @latest, .info --- */

static void list_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	struct go_req *r = arg;
	char (*v)[GOMOD_VER_MAX] = xcalloc(LIST_MAX, GOMOD_VER_MAX), why[600], told[256] = "";
	size_t n, dropped, hidden = 0, o = 0, t = 0;

	if (gomod_list(d->body, d->len, v, LIST_MAX, &n, &dropped) < 0) {
		free(v);
		gw_fail(gw, cl, 502, "go", r->m.path, NULL, "go %s: upstream's version list is too long", r->m.path);
		return;
	}
	gw_doc_keep(gw, d);
	_cleanup_free_ char *out = xmalloc(n * GOMOD_VER_MAX + 1);
	_cleanup_free_ int64_t *seen = xcalloc(n + 1, sizeof(*seen));
	first_seen(gw, &r->m, v, n, seen, true);
	for (size_t i = 0; i < n; i++) {
		if (age_ok(gw, &r->m, v[i], seen[i], why, sizeof(why)) < 0) {
			if (hidden++ < 6 && t < sizeof(told))
				t += (size_t)snprintf(told + t, sizeof(told) - t, "%s%s", t ? ", " : "", v[i]);
			continue;
		}
		o += (size_t)sprintf(out + o, "%s\n", v[i]);
	}
	free(v);
	if (hidden) {
		char by[160], key[GOMOD_PATH_MAX + 8];
		rules_hiding(&gw->conf.rules, "go", by, sizeof(by));
		snprintf(key, sizeof(key), "go:%s", r->m.path);
		gw_tell_once(gw, key, "go '%s': %zu version%s %s hidden (%s; the age of a Go version is since the "
			     "gateway first saw it)", r->m.path, hidden, hidden == 1 ? "" : "s", by, told);
	}
	gw_reply(gw, cl, 200, TEXT, out, o);
}

/* @latest and .info: {"Version": ...}, the version checked (the one asked
 * for, or for @latest one the rules allow); served as upstream wrote it. */
static void info_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	struct go_req *r = arg;
	char v[GOMOD_VER_MAX], why[600];

	if (gomod_info_version(d->body, d->len, v, sizeof(v)) < 0 ||
	    (r->m.kind == GOMOD_INFO && strcmp(v, r->m.version) != 0)) {
		gw_fail(gw, cl, 502, "go", r->m.path, what(r), "go %s: upstream's %s is not for a version asked for",
			r->m.path, r->m.kind == GOMOD_INFO ? ".info" : "@latest");
		return;
	}
	if (r->m.kind == GOMOD_LATEST && age_ok1(gw, &r->m, v, true, why, sizeof(why)) < 0) {
		/* the go command then picks from @v/list, which shows only what may be served */
		gw_fail(gw, cl, 404, "go", r->m.path, v, "%s", why);
		return;
	}
	gw_doc_keep(gw, d);
	gw_reply(gw, cl, 200, JSON, d->body, d->len);
}

/* --- .mod and .zip: against the checksum database --- */

static void mod_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg);

/* The lookup record of the version asked for: the note verified, the
 * hashes read; then the .mod fetched or the zip served. */
static void lookup_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	struct go_req *r = arg;
	unsigned char zip[32], mod[32];
	size_t note;
	const char *why;

	if (gosum_lookup(d->body, d->len, r->m.path, r->m.version, zip, mod, &note, &why) < 0 ||
	    gosum_note_verify(d->body + note, d->len - note, gw->go_sumdb_key, &why) < 0) {
		gw_fail(gw, cl, 502, "go", r->m.path, r->m.version, "go %s %s: the checksum database's answer: %s "
			"(refused)", r->m.path, r->m.version, why);
		return;
	}
	gw_doc_keep(gw, d);
	char refused[600];
	if (age_ok1(gw, &r->m, r->m.version, true, refused, sizeof(refused)) < 0) {
		gw_fail(gw, cl, 403, "go", r->m.path, r->m.version, "%s", refused);
		return;
	}
	if (r->m.kind == GOMOD_ZIP) {
		_cleanup_free_ char *url = xasprintf("%s%s/@v/%s.zip", gw->go_upstream, r->m.esc, r->m.vesc);
		struct gw_artifact_req ar = { .eco = "go", .name = r->m.path, .version = r->m.version, .url = url,
					      .max = ZIP_MAX };
		sri_from_goh1(zip, &ar.want);
		gw_artifact_get(gw, cl, &ar);
		return;
	}
	struct go_req *next = xcalloc(1, sizeof(*next));
	_cleanup_free_ char *key = xasprintf("mod/%s@%s", r->m.esc, r->m.vesc);
	next->m = r->m;
	memcpy(next->mod_h1, mod, 32);
	get_doc(gw, cl, next, gw->go_upstream, key, xasprintf("%s%s/@v/%s.mod", gw->go_upstream, r->m.esc, r->m.vesc),
		true, mod_then);
}

static void mod_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	struct go_req *r = arg;
	unsigned char h[32];
	char want[64], got[64];

	gosum_mod_h1(d->body, d->len, h);
	if (memcmp(h, r->mod_h1, 32) != 0) {
		gosum_h1_string(r->mod_h1, want, sizeof(want));
		gosum_h1_string(h, got, sizeof(got));
		gw_fail(gw, cl, 502, "go", r->m.path, r->m.version, "go %s %s: integrity mismatch: the checksum "
			"database says go.mod %s, upstream sent %s (nothing cached)", r->m.path, r->m.version, want, got);
		return;
	}
	gw_doc_keep(gw, d);
	gw_event_artifact(gw, "go", r->m.path, r->m.version, d->len, d->fetched ? "miss" : "hit", 0);
	gw_reply(gw, cl, 200, TEXT, d->body, d->len);
}

static void get_lookup(struct gw *gw, struct gw_client *cl, struct go_req *r)
{
	_cleanup_free_ char *key = xasprintf("lookup/%s@%s", r->m.esc, r->m.vesc);

	get_doc(gw, cl, r, gw->go_sumdb_url, key, xasprintf("%slookup/%s@%s", gw->go_sumdb_url, r->m.esc, r->m.vesc),
		true, lookup_then);
}

/* --- the checksum database, passed through --- */

static void pass_then(struct gw *gw, struct gw_client *cl, const struct gw_doc *d, void *arg)
{
	const struct go_req *r = arg;

	gw_doc_keep(gw, d);
	gw_reply(gw, cl, 200, r->ctype, d->body, d->len);
}

/* A tile's path below tile/: H/L/N... with L a level or "data", N its
 * x-prefixed three-digit groups, the last maybe ".p/W" (a partial tile). */
static bool tile_path(const char *p, size_t len, bool *partial)
{
	size_t seg = 0;

	*partial = false;
	for (size_t i = 0, start = 0; i <= len; i++) {
		if (i < len && p[i] != '/')
			continue;
		const char *s = p + start;
		size_t n = i - start, d = strspn(s, "0123456789");
		bool ok = (n > 0 && d >= n && n <= 3) || (seg == 1 && n == 4 && memcmp(s, "data", 4) == 0) ||
			  (seg >= 2 && n == 4 && s[0] == 'x' && strspn(s + 1, "0123456789") >= 3) ||
			  (seg >= 2 && n == 5 && strspn(s, "0123456789") >= 3 && memcmp(s + 3, ".p", 2) == 0);
		if (!ok || ++seg > 12)
			return false;
		*partial |= n == 5;
		start = i + 1;
	}
	return seg >= 3;
}

static void sumdb_request(struct gw *gw, struct gw_client *cl, const char *p, size_t len)
{
	size_t nl = strlen(gw->go_sumdb_name);
	struct go_req *r;
	bool partial = false;
	const char *why = "not supported, latest, lookup/MODULE@VERSION or tile/...";

	if (len <= nl + 1 || memcmp(p, gw->go_sumdb_name, nl) != 0 || p[nl] != '/') {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "go: no checksum database '%.*s' here (the profile's is '%s')",
			(int)strcspn(p, "/"), p, gw->go_sumdb_name);
		return;
	}
	p += nl + 1;
	len -= nl + 1;
	if (len == 9 && memcmp(p, "supported", 9) == 0) {
		gw_reply(gw, cl, 200, TEXT, "", 0);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	r->ctype = TEXT;
	if (len > 7 && memcmp(p, "lookup/", 7) == 0) {
		const char *at = memrchr(p, '@', len);
		if (at && at > p + 7 && gomod_path(p + 7, (size_t)(at - p - 7), r->m.path, sizeof(r->m.path), &why) == 0 &&
		    gomod_version(at + 1, (size_t)(p + len - at - 1), r->m.version, sizeof(r->m.version), &why) == 0)
			why = NULL;
	} else if (len > 5 && memcmp(p, "tile/", 5) == 0 && tile_path(p + 5, len - 5, &partial)) {
		snprintf(r->m.path, sizeof(r->m.path), "(checksum database)");
		r->ctype = "application/octet-stream";
		why = NULL;
	} else if (len == 6 && memcmp(p, "latest", 6) == 0) {
		snprintf(r->m.path, sizeof(r->m.path), "(checksum database)");
		why = NULL;
	}
	if (why) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "go: checksum database path: %s", why);
		free(r);
		return;
	}
	_cleanup_free_ char *key = xasprintf("sumdb/%.*s", (int)len, p);
	/* a full tile never changes; lookups and the rest are asked again */
	get_doc(gw, cl, r, gw->go_sumdb_url, key, xasprintf("%s%.*s", gw->go_sumdb_url, (int)len, p),
		p[0] == 't' && !partial, pass_then);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* The go command escapes '!' as %21 (Go's URL path escaping): percent
 * escapes of the characters a module path or version may hold are decoded;
 * any other escape ('/', '%', a control byte...) stays, and is refused. */
static void unpercent(const char *in, size_t len, char *out, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 1 < size; i++) {
		int hi = i + 2 < len && in[i] == '%' ? hexval(in[i + 1]) : -1, lo = hi >= 0 ? hexval(in[i + 2]) : -1;
		char c = (char)(hi * 16 + lo);
		if (lo >= 0 && ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || strchr("!~+-._@", c))) {
			out[o++] = c;
			i += 2;
		} else {
			out[o++] = in[i];
		}
	}
	out[o] = '\0';
}

static void go_request(struct gw *gw, struct gw_client *cl, const char *raw)
{
	char path[2048];
	size_t len;
	struct go_req *r;
	const char *why;
	char refused[600];

	unpercent(raw, strcspn(raw, "?#"), path, sizeof(path));
	len = strlen(path);

	if (!gw->go_upstream) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "no Go upstream is configured ([packages] go)");
		return;
	}
	if (len > 6 && strncmp(path, "sumdb/", 6) == 0) {
		sumdb_request(gw, cl, path + 6, len - 6);
		return;
	}
	r = xcalloc(1, sizeof(*r));
	if (gomod_request(path, len, &r->m, &why) < 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "go: not a module proxy path: %s", why);
		free(r);
		return;
	}
	if (rules_name(&gw->conf.rules, "go", r->m.path, refused, sizeof(refused)) < 0 ||
	    (r->m.kind == GOMOD_INFO && age_ok1(gw, &r->m, r->m.version, false, refused, sizeof(refused)) < 0)) {
		gw_fail(gw, cl, 403, "go", r->m.path, what(r), "%s", refused);
		free(r);
		return;
	}
	_cleanup_free_ char *key = NULL;
	switch (r->m.kind) {
	case GOMOD_LIST:
		key = xasprintf("list/%s", r->m.esc);
		get_doc(gw, cl, r, gw->go_upstream, key, xasprintf("%s%s/@v/list", gw->go_upstream, r->m.esc), false,
			list_then);
		break;
	case GOMOD_LATEST:
		key = xasprintf("latest/%s", r->m.esc);
		get_doc(gw, cl, r, gw->go_upstream, key, xasprintf("%s%s/@latest", gw->go_upstream, r->m.esc), false,
			info_then);
		break;
	case GOMOD_INFO:
		key = xasprintf("info/%s@%s", r->m.esc, r->m.vesc);
		get_doc(gw, cl, r, gw->go_upstream, key,
			xasprintf("%s%s/@v/%s.info", gw->go_upstream, r->m.esc, r->m.vesc), true, info_then);
		break;
	case GOMOD_MOD:
	case GOMOD_ZIP:
		/* the age rule once the database vouched for the version: a pinned
		 * one is recorded then, and matures */
		get_lookup(gw, cl, r);
		break;
	}
}

const struct gw_ecosystem gw_go = { .name = "go", .request = go_request };
