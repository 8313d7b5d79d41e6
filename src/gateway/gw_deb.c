/* gw_deb.c - the Debian ecosystem of the gateway. apt keeps its sources
 * and its proxy: the proxy hands its plain-HTTP GETs for the image's apt
 * hosts (@apt) here, as "HOST/PATH" (http://packages.sbxrun.internal/deb/
 * HOST/PATH reaches the same place). The route reaches apt's upstreams
 * alone: a host the allow list passes that is no npm or PyPI upstream's
 * (asked for or redirected to), by a URL built from the normalised path.
 * apt's own index files (Release, InRelease, Packages, Sources,
 * Translation, Contents: deb_classify) are fetched and passed on (apt
 * checks the signed chain itself), served from the cache while fresh
 * ([packages] index_max_age), then revalidated; the Packages indexes among
 * them, and the Sources indexes, are read into filename -> (package,
 * version, SHA256, size) tables as they pass (gw_debidx.c: from the cache,
 * else built on a worker thread, so apt-get update never waits for it),
 * each table the index of its own host and archive; a .deb, or a file of
 * a source package (.dsc, tarballs, their signatures: apt-get source), is
 * served only as such an entry says
 * (asked while a table is being built, it waits for it), through the
 * shared verified cache (gw_artifact.c); by-hash files are checked
 * against their own name and kept as an index of their directory, and
 * the cache answers a by-hash path with nothing else. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/deb_index.h"
#include "pkg/debidx.h"
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

/* The directory of a by-hash key: HOST/PATH up to "/by-hash/". */
static void byhash_dir(const char *key, char *dir, size_t size)
{
	const char *bh = strstr(key, "/by-hash/");
	snprintf(dir, size, "%.*s", (int)(bh ? bh - key : 0), key);
}

/* Whether host:port (canonical) is the host of one of urls (separated by
 * spaces): on the URL's port where it names one, else on any port (an
 * npm registry's plain HTTP is still the registry). */
static bool host_of(const char *urls, const char *host, int port)
{
	for (const char *u = urls; u && *u;) {
		size_t n = strcspn(u, " \t\n");
		const char *s = memmem(u, n, "://", 3);
		if (s) {
			s += 3;
			size_t an = strcspn(s, "/?#");
			an = s + an > u + n ? (size_t)(u + n - s) : an;
			const char *at = memrchr(s, '@', an);
			if (at)
				an -= (size_t)(at + 1 - s), s = at + 1;
			const char *close = s[0] == '[' ? memchr(s, ']', an) : NULL;
			const char *colon = memrchr(close ? close : s, ':', an - (size_t)((close ? close : s) - s));
			char name[HOSTMATCH_MAX + 8], canon[HOSTMATCH_MAX];
			size_t hn = colon ? (size_t)(colon - s) : an;
			if (hn < sizeof(name)) {
				memcpy(name, s, hn);
				name[hn] = '\0';
				if (hostmatch_canon(name, canon, sizeof(canon)) == 0 && strcmp(canon, host) == 0 &&
				    (!colon || atoi(colon + 1) == port))
					return true;
			}
		}
		u += n;
		u += strspn(u, " \t\n");
	}
	return false;
}

/* Why the deb route may not reach host:port (canonical), or NULL: it
 * reaches apt's upstreams alone (the image's @apt hosts, a mirror the
 * profile allows), never the npm or PyPI upstream of this gateway, the
 * image's or the profile's, which package rules take off the proxy. */
static const char *not_apt(const struct gw *gw, const char *host, int port)
{
	return host_of(gw->not_apt, host, port)
		? "an npm or PyPI upstream's host: the deb route reaches apt's upstreams alone" : NULL;
}

/* A .deb asked for while a table was being built. */
struct deb_wait {
	struct deb_wait *next;
	uint64_t client;
	char *key, *url;
	bool source;  /* not a .deb: a file a Sources index may list */
};

struct gw_deb {
	struct deb_wait *waiting;  /* in the order asked */
};

/* The upstream of an index at key ("HOST[:PORT]/PATH"): its cache key's
 * (gw_cache.h) base URL, "http://HOST[:PORT]/". */
static const char *upstream_of(const char *key, char *buf, size_t size)
{
	snprintf(buf, size, "http://%.*s/", (int)strcspn(key, "/"), key);
	return buf;
}

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
	char got[129], up[HOSTMATCH_MAX + 16];
	const char *body = f->body ? f->body : "";
	int64_t age;

	/* for a 304 or upstream trouble: the stale copy read again */
	if (r->stale && !(!f->error[0] && (f->status == 200 || f->status == 404)) &&
	    gw_cache_index_get(gw->cache, "deb", upstream_of(r->key, up, sizeof(up)), r->key, &r->cached,
			       &r->cached_len, r->etag, sizeof(r->etag), &age) != 1)
		r->cached = NULL;
	if (r->cached && !f->error[0] && f->status == 304) {
		gw_cache_index_touch(gw->cache, "deb", upstream_of(r->key, up, sizeof(up)), r->key);
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
			/* an index of this directory alone (gw_cache_deb_byhash), and
			 * what `sbxrun cache ls` shows */
			char dir[sizeof(r->key)];
			byhash_dir(r->key, dir, sizeof(dir));
			struct gw_cache_meta m = { .eco = "deb", .name = GW_DEB_BYHASH_NAME, .version = "", .file = dir };
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
		gw_cache_index_put(gw->cache, "deb", upstream_of(r->key, up, sizeof(up)), r->key, body, f->len,
				   f->resp_etag);
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
	f->hop_refused = not_apt;  /* a redirect too: apt's upstreams alone */
	f->done = fetched;
	f->arg = r;
	if (gw_fetch_start(gw, f) < 0) {
		gw_fail(gw, cl, 403, NULL, NULL, NULL, "deb %s: upstream: %s", r->key, f->error);
		gw_fetch_free(f);
		req_free(r);
	}
}

/* A by-hash file the cache holds as an index of this very directory
 * (never an artifact by its digest, never another archive's index):
 * learnt from when it is a Packages (its table by the digest its name
 * gives; the file read only to build one). */
static bool byhash_hit(struct gw *gw, struct gw_client *cl, struct deb_req *r)
{
	char dir[sizeof(r->key)];
	int fd;
	off_t size;

	byhash_dir(r->key, dir, sizeof(dir));
	if (gw_cache_deb_byhash(gw->cache, &r->want, dir, &fd, &size) != 1)
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

/* A file an index lists: a .deb (source false) or a file of a source
 * package, served as its entry says. */
static void artifact(struct gw *gw, struct gw_client *cl, const char *key, const char *url, bool source)
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
		w->source = source;
		*pp = w;
		return;
	}
	if (gw_debidx_find(gw, key, &e) != 1 && source) {
		gw_fail(gw, cl, 403, NULL, NULL, NULL, "deb %s: neither one of apt's signed index files "
			"(Release, Packages, Sources, Translation, Contents, by-hash), nor a .deb, nor a file of "
			"a source package that a Sources index fetched through the gateway lists: "
			"not served by the gateway", key);
		return;
	}
	if (gw_debidx_find(gw, key, &e) != 1) {
		name_of(key, name, sizeof(name), version, sizeof(version));
		gw_fail(gw, cl, 403, "deb", name, version, "deb %s: no Packages index fetched through the gateway "
			"lists this file, so its digest is unknown (refused; run apt-get update)", key);
		return;
	}
	if (rules_name(&gw->conf.rules, "deb", e.package, why, sizeof(why)) < 0 ||
	    rules_version(&gw->conf.rules, "deb", e.package, e.version, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "deb", e.package, e.version, "deb %s@%s: %s", e.package, e.version, why);
		return;
	}
	/* dated by when the gateway first saw it (gw_debidx.c); the signed
	 * index cannot be filtered, so apt cannot fall back to another */
	if (gw_seen_ok(gw, "deb", e.package, e.version, e.seen, why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, "deb", e.package, e.version, "%s; apt cannot pick an older version (the signed "
			"index lists this one): install one old enough by PACKAGE=VERSION, or set min_age = deb:DURATION",
			why);
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
			artifact(gw, cl, w->key, w->url, w->source);
		free(w->key), free(w->url), free(w);
	}
}

/* The upstream URL of a normalised path: every byte but unreserved ones
 * and '/' percent-encoded, so that what upstream is asked is what the
 * gateway checked (no "..", "//" or escapes of the client's). */
static char *upstream_url(const char *hostport, const char *norm)
{
	static const char keep[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~/";
	size_t n = strlen(norm);
	char *path = xmalloc(3 * n + 1), *o = path;

	for (const unsigned char *p = (const unsigned char *)norm; *p; p++)
		o += *p && strchr(keep, *p) ? sprintf(o, "%c", *p) : sprintf(o, "%%%02X", *p);
	*o = '\0';
	char *url = xasprintf("http://%s/%s", hostport, path);
	free(path);
	return url;
}

/* "HOST[:PORT]/PATH" (PATH still URL-encoded) into the canonical
 * "HOST[:PORT]", its port and the normalised PATH: 0, or -1. */
static int target(const char *path, char *hostport, size_t hsize, int *port, char *norm, size_t nsize)
{
	size_t hl = strcspn(path, "/"), len = strcspn(path, "?#");
	char host[HOSTMATCH_MAX + 8], name[HOSTMATCH_MAX];

	if (path[hl] != '/' || hl == 0 || hl >= sizeof(host) || path[len] != '\0')
		return -1;
	memcpy(host, path, hl);
	host[hl] = '\0';
	char *colon = strchr(host, ':');
	if (colon)
		*colon++ = '\0';
	*port = colon ? atoi(colon) : 80;
	if (hostmatch_canon(host, name, sizeof(name)) < 0 ||
	    (colon && (strlen(colon) == 0 || strlen(colon) > 5 || strspn(colon, "0123456789") != strlen(colon) ||
		       *port < 1 || *port > 65535)) ||
	    deb_path_norm(path + hl + 1, len - hl - 1, norm, nsize) < 0)
		return -1;
	snprintf(hostport, hsize, "%s%s%s", name, colon ? ":" : "", colon ? colon : "");
	return 0;
}

/* An index (or a by-hash file): from the cache as the rules allow, else
 * fetched. The rules ask first: a closed ecosystem serves nothing, by-hash
 * files come only from what the cache recorded as this directory's
 * index, offline asks nobody. */
static void index_request(struct gw *gw, struct gw_client *cl, struct deb_req *r, const char *url)
{
	char why[600];

	if (rules_ecosystem(&gw->conf.rules, "deb", why, sizeof(why)) < 0) {
		gw_fail(gw, cl, 403, NULL, NULL, NULL, "deb %s: %s", r->key, why);
		req_free(r);
		return;
	}
	if (r->kind == DEB_BYHASH && byhash_hit(gw, cl, r)) {
		req_free(r);
		return;
	}
	if (r->kind != DEB_BYHASH) {
		int64_t age;
		char up[HOSTMATCH_MAX + 16];
		if (gw_cache_index_get(gw->cache, "deb", upstream_of(r->key, up, sizeof(up)), r->key, &r->cached,
				       &r->cached_len, r->etag, sizeof(r->etag), &age) != 1)
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
		rules_offline("deb", r->key, NULL, why, sizeof(why));
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "%s", why);
		req_free(r);
		return;
	}
	fetch_index(gw, cl, r, url);
}

/* path: "HOST[:PORT]/PATH", PATH still URL-encoded. */
static void deb_request(struct gw *gw, struct gw_client *cl, const char *path)
{
	char hostport[HOSTMATCH_MAX + 8], norm[DEB_PATH_MAX], hex[65];
	struct hostmatch_grant g;
	const char *why;
	int port;

	if (target(path, hostport, sizeof(hostport), &port, norm, sizeof(norm)) < 0) {
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "not an apt archive path");
		return;
	}
	char *colon = strchr(hostport, ':');
	if (colon)
		*colon = '\0';
	bool listed = hostmatch_check(&gw->allow, hostport, port, &g) == HOSTMATCH_OK;
	why = listed ? not_apt(gw, hostport, port) : "not in the profile's allow list";
	if (colon)
		*colon = ':';
	if (why) {
		_cleanup_free_ char *told = xasprintf("deb-host %s", hostport);
		if (listed)  /* an npm or PyPI upstream: a few hosts, told once each */
			gw_tell_once(gw, told, "deb %s: %s", hostport, why);
		gw_fail(gw, cl, 403, NULL, NULL, NULL, "deb %s: %s", hostport, why);
		return;
	}
	struct deb_req *r = xcalloc(1, sizeof(*r));
	r->client = cl->id;
	snprintf(r->key, sizeof(r->key), "%s/%s", hostport, norm);
	_cleanup_free_ char *url = upstream_url(hostport, norm);
	r->kind = deb_classify(norm, hex, &r->packages);
	switch (r->kind) {
	case DEB_ARTIFACT:
	case DEB_OTHER:
		artifact(gw, cl, r->key, url, r->kind == DEB_OTHER);
		req_free(r);
		return;
	case DEB_BYHASH:
		if (sri_from_hex256(hex, &r->want) < 0) {
			gw_fail(gw, cl, 404, NULL, NULL, NULL, "not a by-hash path");
			req_free(r);
			return;
		}
		break;
	case DEB_PACKAGES:
	case DEB_INDEX:
		break;
	}
	index_request(gw, cl, r, url);
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
