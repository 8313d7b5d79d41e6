/* gw_feed.c - [packages] malicious = URL: a malicious-package feed that
 * the gateway fetches itself, as it fetches an upstream (its host on the
 * allow list, every hop's address checked, plain http only to
 * host.sbxrun.internal), when it starts serving. Files and directories are
 * read before the gateway starts (malfeed_load); a URL cannot be, so until
 * every named URL has loaded the gateway answers no package request from a
 * feed that is not whole: each request waits (held, as a client waits for
 * an upstream) and is served once the feed is in, or gets 503 with the
 * reason when the fetch fails. A request after a failure asks again, at
 * most once every FEED_RETRY_MS; between tries it gets the 503 at once.
 * A feed fetched is kept in the cache as an index document ("osv", below
 * its URL) with its validators: a copy within [packages] index_max_age is
 * taken in at the start without asking, one within index_max_stale past
 * that too, asked again behind it, and under offline = yes a copy of any
 * age, never asked. A feed in hand is asked again (with its validators)
 * each time its copy is index_max_age old, so a gateway that runs for
 * weeks (a sidecar) refuses what the feed named since it started: what
 * comes replaces what the URL gave before (a record it dropped is no
 * longer refused); a failure keeps the copy and asks again an
 * index_max_age later. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <string.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "net/proxy_event.h"
#include "pkg/malfeed.h"

#define FEED_RETRY_MS 5000
#define FEED_ECO "osv"   /* its cache's index documents */
#define FEED_KEY "feed"
#define MAX_HELD 1024  /* requests waiting for the feed (clients are fewer) */

struct feed_url {
	char *url;
	bool loaded, fetching;
	int64_t failed_ms;  /* when the last try failed (0: not yet) */
	char error[600];
	char etag[GW_VALIDATORS_MAX + 1];  /* the cached copy's validators */
	int64_t cached_age_ms;             /* its age when taken in; -1: none was */
	int64_t fresh_ms;                  /* when the copy in hand was upstream's */
	size_t bytes, records;             /* what the copy in hand counts */
};

struct held {
	struct held *next;
	uint64_t client;
	char *host, *path;
};

struct gw_feeds {
	struct feed_url *v;
	size_t n, waiting;  /* URLs, and those not loaded */
	struct held *held;
	size_t nheld;
	gw_feed_route route;
};

/* What one fetch gave: the records taken in, or the error (a 304: none). */
static void event(struct gw *gw, const struct feed_url *u, bool ok, bool again, size_t records, int64_t ms)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "url", json_object_new_string(u->url));
	json_object_object_add(o, "loaded", json_object_new_boolean(ok));
	if (again)
		json_object_object_add(o, "again", json_object_new_boolean(true));
	if (ok)
		json_object_object_add(o, "packages", json_object_new_int64((int64_t)records));
	else
		json_object_object_add(o, "error", json_object_new_string(u->error));
	if (u->cached_age_ms >= 0)
		json_object_object_add(o, "cached_age_ms", json_object_new_int64(u->cached_age_ms));
	json_object_object_add(o, "ms", json_object_new_int64(ms));
	proxy_event_write(gw->conf.events_fd, o, "feed");
}

/* The held requests: served when every feed is in, else each told why. */
static void release(struct gw *gw, const struct feed_url *failed)
{
	struct gw_feeds *fs = gw->feeds;
	struct held *h = fs->held;

	fs->held = NULL;
	fs->nheld = 0;
	while (h) {
		struct held *next = h->next;
		struct gw_client *c = gw_client_find(gw, h->client);
		if (c && !c->dead && failed)
			gw_fail(gw, c, 503, NULL, NULL, NULL,
				"[packages] malicious %s could not be loaded (%s): nothing it would have to check is "
				"served until it is", failed->url, failed->error);
		else if (c && !c->dead)
			fs->route(gw, c, h->host, h->path);
		free(h->host);
		free(h->path);
		free(h);
		h = next;
	}
	gw_client_reap(gw);
}

/* The feed's bytes taken in: its records are the gateway's feed's now, in
 * place of what the URL gave before; else -1 with why in u->error. */
static int take_body(struct gw *gw, struct feed_url *u, const char *body, size_t len, size_t *records)
{
	struct malfeed *add = malfeed_new();
	struct sbx_err e = { 0 };

	malfeed_add_bytes(add, len);
	if (malfeed_add_json(add, body, len, u->url, &e) == 0) {
		malfeed_finish(add);
		*records = malfeed_count(add);
		if (malfeed_replace(gw->feed, u->url, u->bytes, add, &e) == 0) {
			u->bytes = len;
			u->records = *records;
			return 0;
		}
	}
	malfeed_free(add);
	snprintf(u->error, sizeof(u->error), "%s", e.msg);
	return -1;
}

/* The cache's copy, taken in when its age allows (the file's comment);
 * whether it was, and in *fresh whether upstream need not be asked. */
static bool from_cache(struct gw *gw, struct feed_url *u, bool *fresh)
{
	_cleanup_free_ char *body = NULL;
	size_t len = 0, records = 0;
	int64_t age = 0;

	u->cached_age_ms = -1;
	if (!gw->cache || !gw_cache_index_get(gw->cache, FEED_ECO, u->url, FEED_KEY, &body, &len, u->etag,
					      sizeof(u->etag), &age))
		return false;
	*fresh = gw->conf.rules.offline || gw_index_fresh(gw, age);
	int64_t max = gw->conf.index_max_age_ms > 0 ? gw->conf.index_max_age_ms : GW_INDEX_MAX_AGE_MS;
	if (!*fresh && (age < 0 || age >= max + gw->conf.index_max_stale_ms))
		return false;  /* too old to stand in: upstream is waited for */
	if (take_body(gw, u, body, len, &records) < 0)
		return false;  /* not what was kept: fetched again */
	u->cached_age_ms = age;
	u->fresh_ms = (int64_t)now_ms() - age;
	gw_tell_once(gw, u->url, "[packages] malicious %s: %zu affected packages (the cache's copy, %lld s old%s)",
		     u->url, records, (long long)(age / 1000), *fresh ? "" : "; asked again behind it");
	return true;
}

static void fetched(struct gw *gw, struct gw_fetch *f)
{
	struct feed_url *u = f->arg;
	size_t records = 0;
	bool again = u->loaded;  /* a cached copy's revalidation */
	int ok = 0;

	u->fetching = false;
	if (f->error[0] || (f->status != 200 && !(again && f->status == 304))) {
		if (f->error[0])
			snprintf(u->error, sizeof(u->error), "%s", f->error);
		else
			snprintf(u->error, sizeof(u->error), "upstream answered %ld", f->status);
		ok = -1;
	} else if (f->status == 304) {
		gw_cache_index_touch(gw->cache, FEED_ECO, u->url, FEED_KEY);
		records = u->records;
	} else if ((ok = take_body(gw, u, f->body ? f->body : "", f->len, &records)) == 0) {
		gw_cache_index_put(gw->cache, FEED_ECO, u->url, FEED_KEY, f->body ? f->body : "", f->len, f->resp_etag);
		snprintf(u->etag, sizeof(u->etag), "%s", f->resp_etag);
	}
	u->loaded = again || ok == 0;
	if (again || ok == 0)
		u->fresh_ms = (int64_t)now_ms();  /* asked: again an index_max_age on, answered or not */
	event(gw, u, ok == 0, again, records, f->ms);
	gw_fetch_free(f);
	if (again) {
		char key[700];
		snprintf(key, sizeof(key), "again %s", u->url);
		if (ok < 0)
			gw_tell_once(gw, key, "[packages] malicious %s could not be asked again (%s): the copy in hand "
				     "stands", u->url, u->error);
		return;
	}
	if (!u->loaded) {
		u->failed_ms = (int64_t)now_ms();
		gw_tell_once(gw, u->url, "[packages] malicious %s could not be loaded (%s): package requests get 503 "
			     "until it is", u->url, u->error);
		release(gw, u);
		return;
	}
	gw_tell_once(gw, u->url, "[packages] malicious %s: %zu affected packages", u->url, records);
	if (--gw->feeds->waiting == 0)
		release(gw, NULL);
}

static void start(struct gw *gw, struct feed_url *u)
{
	struct gw_fetch *f = xcalloc(1, sizeof(*f));

	f->url = xstrdup(u->url);
	snprintf(f->accept, sizeof(f->accept), "application/json");
	if (u->loaded)
		snprintf(f->etag, sizeof(f->etag), "%s", u->etag);
	f->max = MALFEED_MAX_FILE;
	f->fd = -1;
	f->done = fetched;
	f->arg = u;
	u->fetching = true;
	if (gw_fetch_start(gw, f) < 0) {
		u->fetching = false;
		u->failed_ms = (int64_t)now_ms();
		snprintf(u->error, sizeof(u->error), "%s", f->error[0] ? f->error : "the fetch did not start");
		gw_fetch_free(f);
	}
}

/* Starts the fetch of each feed not loaded, none under way and past its
 * pause after a failure (offline: none). */
static void ask(struct gw *gw)
{
	int64_t now = (int64_t)now_ms();

	for (size_t i = 0; i < gw->feeds->n && !gw->conf.rules.offline; i++) {
		struct feed_url *u = &gw->feeds->v[i];
		if (!u->loaded && !u->fetching && (!u->failed_ms || now - u->failed_ms >= FEED_RETRY_MS))
			start(gw, u);
	}
}

int gw_feed_init(struct gw *gw, gw_feed_route route, struct sbx_err *err)
{
	const struct sbx_strlist *l = gw->conf.malicious;
	size_t urls = 0;

	if (!l || !l->n)
		return 0;
	if (malfeed_load(l, &gw->feed, err) < 0)
		return -1;
	gw->conf.rules.feed = gw->feed;
	for (size_t i = 0; i < l->n; i++)
		urls += malfeed_is_url(l->v[i]);
	if (!urls)
		return 0;
	gw->feeds = xcalloc(1, sizeof(*gw->feeds));
	gw->feeds->v = xcalloc(urls, sizeof(*gw->feeds->v));
	gw->feeds->route = route;
	for (size_t i = 0; i < l->n; i++) {
		if (!malfeed_is_url(l->v[i]))
			continue;
		struct feed_url *u = &gw->feeds->v[gw->feeds->n++];
		bool fresh = false;
		u->url = xstrdup(l->v[i]);
		if (!from_cache(gw, u, &fresh)) {
			gw->feeds->waiting++;
			if (gw->conf.rules.offline) {  /* nothing to wait for */
				snprintf(u->error, sizeof(u->error), "not in the cache, and [packages] offline = yes");
				u->failed_ms = 1;
			}
			continue;
		}
		u->loaded = true;
		if (!fresh)
			u->fresh_ms = 0;  /* asked again at once, behind it */
	}
	return 0;
}

void gw_feed_poll(struct gw *gw)
{
	if (!gw->feeds)
		return;
	int64_t now = (int64_t)now_ms();
	int64_t max = gw->conf.index_max_age_ms > 0 ? gw->conf.index_max_age_ms : GW_INDEX_MAX_AGE_MS;
	for (size_t i = 0; i < gw->feeds->n && !gw->conf.rules.offline; i++) {
		struct feed_url *u = &gw->feeds->v[i];
		if (u->loaded && !u->fetching && now - u->fresh_ms >= max)
			start(gw, u);
	}
	if (gw->feeds->waiting)
		ask(gw);
}

bool gw_feed_hold(struct gw *gw, struct gw_client *c, const char *host, const char *path)
{
	struct gw_feeds *fs = gw->feeds;

	if (!fs || !fs->waiting)
		return false;
	ask(gw);
	const struct feed_url *busy = NULL, *failed = NULL;
	for (size_t i = 0; i < fs->n; i++) {
		if (fs->v[i].fetching)
			busy = &fs->v[i];
		else if (!fs->v[i].loaded)
			failed = &fs->v[i];
	}
	if (failed || !busy || fs->nheld >= MAX_HELD) {
		failed = failed ? failed : &fs->v[0];
		gw_fail(gw, c, 503, NULL, NULL, NULL,
			"[packages] malicious %s is not loaded (%s): nothing it would have to check is served until "
			"it is", failed->url, failed->error[0] ? failed->error : "too many requests waiting for it");
		return true;
	}
	struct held *h = xcalloc(1, sizeof(*h));
	h->client = c->id;
	h->host = xstrdup(host);
	h->path = xstrdup(path);
	h->next = fs->held;
	fs->held = h;
	fs->nheld++;
	return true;
}

void gw_feed_fini(struct gw *gw)
{
	struct gw_feeds *fs = gw->feeds;

	if (!fs)
		return;
	while (fs->held) {
		struct held *h = fs->held;
		fs->held = h->next;
		free(h->host);
		free(h->path);
		free(h);
	}
	for (size_t i = 0; i < fs->n; i++)
		free(fs->v[i].url);
	free(fs->v);
	free(fs);
	gw->feeds = NULL;
}
