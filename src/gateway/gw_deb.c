/* gw_deb.c - the Debian ecosystem of the gateway. apt keeps its sources
 * and its proxy: the proxy hands its plain-HTTP GETs for the image's apt
 * hosts (@apt) here, as "HOST/PATH" (http://packages.sbxrun.internal/deb/
 * HOST/PATH reaches the same place). Release files and the rest of dists/
 * are fetched and passed on (apt checks the signed chain itself), served
 * from the cache while fresh ([packages] index_max_age), then revalidated; the
 * Packages indexes among them are read into filename -> (package,
 * version, SHA256, size) tables as they pass (gw_debidx.c: from the cache,
 * else built on a worker thread, so apt-get update never waits for it); a
 * .deb is served only as such an entry says (asked while a table is being
 * built, it waits for it), through the shared verified cache
 * (gw_artifact.c); by-hash files are checked against their own name and
 * kept like artifacts. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/deb_index.h"
#include "gateway/debidx.h"
#include "gateway/gw.h"

#define INDEX_MAX (256ULL << 20)    /* an index as fetched */
#define DEB_MAX (2ULL << 30)        /* a .deb whose index gave no size */

struct deb_req {
	uint64_t client;
	char key[HOSTMATCH_MAX + 8 + DEB_PATH_MAX];  /* HOST/PATH, normalised */
	enum deb_kind kind;
	int packages;
	struct sri want;  /* by-hash */
	char *cached;     /* an index as last fetched: served while fresh, then revalidated */
	size_t cached_len;
	char etag[256];
	bool stale;       /* one was there, let go while upstream is asked */
};

static void req_free(struct deb_req *r)
{
	free(r->cached);
	free(r);
}

/* A .deb asked for while a table was being built. */
struct deb_wait {
	struct deb_wait *next;
	uint64_t client;
	char *key, *url;
};

struct gw_deb {
	struct deb_wait *waiting;  /* in the order asked */
};

/* Takes in the table of one Packages index (the file as fetched, any
 * compression; src: its SHA256, or NULL to compute it): from the cache,
 * else built on the worker (gw_debidx.c), a newer copy of the same index
 * replacing the older. */
static void learn(struct gw *gw, const char *key, const char *body, size_t len, const unsigned char *src)
{
	unsigned char sum[32];

	if (!src) {
		sri_sha256(body, len, sum);
		src = sum;
	}
	if (gw_debidx_load(gw, key, src) == 0)
		gw_debidx_build(gw, key, src, body, len);
}

static void serve_index(struct gw *gw, struct gw_client *cl, struct deb_req *r, const char *body, size_t len)
{
	if (r->kind == DEB_PACKAGES)
		learn(gw, r->key, body, len, NULL);
	gw_reply(gw, cl, 200, "application/octet-stream", body, len);
}

static void fetched(struct gw *gw, struct gw_fetch *f)
{
	struct deb_req *r = f->arg;
	struct gw_client *cl = gw_client_find(gw, r->client);
	char got[129];
	const char *body = f->body ? f->body : "";
	int64_t age;

	/* for a 304 or upstream trouble: the stale copy read again */
	if (r->stale && !(!f->error[0] && (f->status == 200 || f->status == 404)) &&
	    gw_cache_index_get(gw->cache, "deb", r->key, &r->cached, &r->cached_len, r->etag, sizeof(r->etag),
			       &age) != 1)
		r->cached = NULL;
	if (r->cached && !f->error[0] && f->status == 304) {
		gw_cache_index_touch(gw->cache, "deb", r->key);
		serve_index(gw, cl, r, r->cached, r->cached_len);
	} else if (r->cached && (f->error[0] || (f->status != 200 && f->status != 404))) {
		/* upstream trouble: the last copy is better (apt checks its signature and age) */
		serve_index(gw, cl, r, r->cached, r->cached_len);
	} else if (f->error[0]) {
		gw_fail(gw, cl, 502, NULL, NULL, NULL, "deb %s: upstream: %s", r->key, f->error);
	} else if (f->status != 200) {
		gw_fail(gw, cl, f->status == 404 ? 404 : 502, NULL, NULL, NULL, "deb %s: upstream answered HTTP %ld",
			r->key, f->status);
	} else if (r->kind == DEB_BYHASH) {
		struct sri_check *chk = sri_check_new(&r->want);
		bool ok = chk != NULL;
		if (chk) {
			sri_check_update(chk, body, f->len);
			ok = sri_check_end(chk, got);
			sri_check_free(chk);
		}
		if (!ok) {
			gw_fail(gw, cl, 502, NULL, NULL, NULL, "deb %s: upstream sent a file whose sha256 is %s "
				"(nothing cached)", r->key, chk ? got : "unknown");
		} else {
			int fd;
			_cleanup_free_ char *tmp = NULL;
			/* for `sbxrun cache ls`: an index, and the directory it indexes */
			char dir[256];
			const char *bh = strstr(r->key, "/by-hash/");
			snprintf(dir, sizeof(dir), "%.*s", (int)(bh ? bh - r->key : 0), r->key);
			struct gw_cache_meta m = { .eco = "deb", .name = "(index)", .version = "", .file = dir };
			if (gw_cache_tmp(gw->cache, &r->want, &fd, &tmp) == 0) {
				if (write_all(fd, body, f->len) < 0 || gw_cache_commit(gw->cache, &r->want, fd, tmp, &m) < 0)
					gw_cache_discard(gw->cache, tmp);
				close(fd);
				gw_cache_trim(gw->cache);
			}
			if (r->packages)
				learn(gw, r->key, body, f->len, r->want.digest);
			gw_reply(gw, cl, 200, "application/octet-stream", body, f->len);
		}
	} else {
		gw_cache_index_put(gw->cache, "deb", r->key, body, f->len, f->resp_etag);
		serve_index(gw, cl, r, body, f->len);
	}
	gw_fetch_free(f);
	req_free(r);
}

static void fetch_index(struct gw *gw, struct gw_client *cl, struct deb_req *r, const char *url)
{
	struct gw_fetch *f = xcalloc(1, sizeof(*f));

	f->url = xstrdup(url);
	if (r->cached) {
		/* not held in memory while upstream is asked (minutes, at worst) */
		snprintf(f->etag, sizeof(f->etag), "%s", r->etag);
		free(steal_ptr(r->cached));
		r->stale = true;
	}
	f->max = INDEX_MAX;
	f->fd = -1;
	f->plain_http = true;
	f->done = fetched;
	f->arg = r;
	if (gw_fetch_start(gw, f) < 0) {
		gw_fail(gw, cl, 403, NULL, NULL, NULL, "deb %s: upstream: %s", r->key, f->error);
		gw_fetch_free(f);
		req_free(r);
	}
}

/* A by-hash file the cache holds: learnt from when it is a Packages (its
 * table by the digest its name gives; the file read only to build one). */
static bool byhash_hit(struct gw *gw, struct gw_client *cl, struct deb_req *r)
{
	int fd;
	off_t size;

	if (gw_cache_artifact(gw->cache, &r->want, &fd, &size) != 1)
		return false;
	if (r->packages && gw_debidx_load(gw, r->key, r->want.digest) == 0 && (uint64_t)size <= INDEX_MAX) {
		_cleanup_free_ char *buf = xmalloc((size_t)size + 1);
		if (pread(fd, buf, (size_t)size, 0) == size)
			gw_debidx_build(gw, r->key, r->want.digest, buf, (size_t)size);
	}
	gw_reply_file(gw, cl, fd, size, "application/octet-stream");
	return true;
}

/* The package and version a .deb's file name gives: NAME_VERSION_ARCH.deb */
static void name_of(const char *key, char *name, size_t nsize, char *version, size_t vsize)
{
	const char *base = strrchr(key, '/');
	base = base ? base + 1 : key;
	size_t n = strcspn(base, "_");
	snprintf(name, nsize, "%.*s", (int)n, base);
	const char *v = base[n] ? base + n + 1 : "";
	snprintf(version, vsize, "%.*s", (int)strcspn(v, "_"), v);
}

static void artifact(struct gw *gw, struct gw_client *cl, const char *key, const char *url)
{
	struct debidx_entry e;
	char name[256], version[256], why[512], hex[65];

	if (gw_debidx_busy(gw)) {  /* its table may be among those being built */
		struct deb_wait *w = xcalloc(1, sizeof(*w)), **pp;
		if (!gw->deb)
			gw->deb = xcalloc(1, sizeof(*gw->deb));
		for (pp = &gw->deb->waiting; *pp; pp = &(*pp)->next)
			;
		w->client = cl->id;
		w->key = xstrdup(key);
		w->url = xstrdup(url);
		*pp = w;
		return;
	}
	if (gw_debidx_find(gw, key, &e) != 1) {
		name_of(key, name, sizeof(name), version, sizeof(version));
		gw_fail(gw, cl, 403, "deb", name, version, "deb %s: no Packages index fetched through the gateway "
			"lists this file, so its digest is unknown (refused; run apt-get update)", key);
		return;
	}
	if (rules_name(&gw->conf.rules, "deb", e.package, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "deb", e.package, e.version, "deb %s@%s: %s", e.package, e.version, why);
		return;
	}
	struct gw_artifact_req ar = { .eco = "deb", .name = e.package, .version = e.version, .url = url,
				      .max = e.size ? e.size : DEB_MAX, .plain_http = true };
	for (size_t i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", e.sha256[i]);
	if (sri_from_hex256(hex, &ar.want) < 0) {
		gw_fail(gw, cl, 502, "deb", e.package, e.version, "deb %s@%s: a bad digest", e.package, e.version);
		return;
	}
	gw_artifact_get(gw, cl, &ar);
}

void gw_deb_wake(struct gw *gw)
{
	gw_debidx_reap(gw);
	while (gw->deb && gw->deb->waiting && !gw_debidx_busy(gw)) {
		struct deb_wait *w = gw->deb->waiting;
		gw->deb->waiting = w->next;
		struct gw_client *cl = gw_client_find(gw, w->client);
		if (cl)
			artifact(gw, cl, w->key, w->url);
		free(w->key), free(w->url), free(w);
	}
}

/* path: "HOST[:PORT]/PATH", PATH still URL-encoded. */
static void deb_request(struct gw *gw, struct gw_client *cl, const char *path)
{
	size_t hl = strcspn(path, "/"), len = strcspn(path, "?#");
	char host[HOSTMATCH_MAX + 8], name[HOSTMATCH_MAX], norm[DEB_PATH_MAX], hex[65];
	struct deb_req *r;

	if (path[hl] != '/' || hl == 0 || hl >= sizeof(host) || path[len] != '\0') {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "not an apt archive path");
		return;
	}
	memcpy(host, path, hl);
	host[hl] = '\0';
	char *colon = strchr(host, ':');
	if (colon)
		*colon = '\0';
	if (hostmatch_canon(host, name, sizeof(name)) < 0 ||
	    (colon && (strlen(colon + 1) == 0 || strlen(colon + 1) > 5 || strspn(colon + 1, "0123456789") != strlen(colon + 1))) ||
	    deb_path_norm(path + hl + 1, len - hl - 1, norm, sizeof(norm)) < 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "not an apt archive path");
		return;
	}
	r = xcalloc(1, sizeof(*r));
	r->client = cl->id;
	snprintf(r->key, sizeof(r->key), "%s%s%s/%s", name, colon ? ":" : "", colon ? colon + 1 : "", norm);
	_cleanup_free_ char *url = xasprintf("http://%s%s%s/%s", name, colon ? ":" : "", colon ? colon + 1 : "",
					     path + hl + 1);
	r->kind = deb_classify(norm, hex, &r->packages);
	switch (r->kind) {
	case DEB_ARTIFACT:
		artifact(gw, cl, r->key, url);
		req_free(r);
		return;
	case DEB_BYHASH:
		if (sri_from_hex256(hex, &r->want) < 0 || byhash_hit(gw, cl, r)) {
			if (r->want.len == 0)
				gw_fail(gw, cl, 404, NULL, NULL, NULL, "not a by-hash path");
			req_free(r);
			return;
		}
		break;
	case DEB_PACKAGES:
	case DEB_INDEX:
		break;
	case DEB_OTHER:
		gw_fail(gw, cl, 403, NULL, NULL, NULL, "deb %s: neither an index of dists/ nor a .deb: "
			"not served by the gateway", r->key);
		req_free(r);
		return;
	}
	if (r->kind != DEB_BYHASH) {
		int64_t age;
		if (gw_cache_index_get(gw->cache, "deb", r->key, &r->cached, &r->cached_len, r->etag,
				       sizeof(r->etag), &age) != 1)
			r->cached = NULL;
		/* offline: as last fetched, however old; else unasked while fresh
		 * (by-hash files and .debs never change: they are artifacts) */
		if (r->cached && (gw->conf.rules.offline || gw_index_fresh(gw, age))) {
			serve_index(gw, cl, r, r->cached, r->cached_len);
			req_free(r);
			return;
		}
	}
	if (gw->conf.rules.offline) {
		/* a 404, as for what upstream lacks: apt then asks for the next
		 * form it knows (InRelease, then Release; .xz, then .gz) */
		char why[600];
		rules_offline("deb", r->key, NULL, why, sizeof(why));
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "%s", why);
		req_free(r);
		return;
	}
	fetch_index(gw, cl, r, url);
}

static void deb_free(struct gw *gw)
{
	while (gw->deb && gw->deb->waiting) {
		struct deb_wait *w = gw->deb->waiting;
		gw->deb->waiting = w->next;
		free(w->key), free(w->url), free(w);
	}
	free(gw->deb);
	gw->deb = NULL;
	gw_debidx_free(gw);
}

const struct gw_ecosystem gw_deb = { .name = "deb", .request = deb_request, .free = deb_free };
