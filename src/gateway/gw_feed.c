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
 * The feed is read once per gateway: a session sees the records of its
 * start. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <string.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "net/proxy_event.h"
#include "pkg/malfeed.h"

#define FEED_RETRY_MS 5000
#define MAX_HELD 1024  /* requests waiting for the feed (clients are fewer) */

struct feed_url {
	char *url;
	bool loaded, fetching;
	int64_t failed_ms;  /* when the last try failed (0: not yet) */
	char error[600];
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
	for (size_t i = 0; i < l->n; i++)
		if (malfeed_is_url(l->v[i]))
			gw->feeds->v[gw->feeds->n++].url = xstrdup(l->v[i]);
	gw->feeds->waiting = gw->feeds->n;
	return 0;
}

static void event(struct gw *gw, const struct feed_url *u, size_t records, int64_t ms)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "url", json_object_new_string(u->url));
	json_object_object_add(o, "loaded", json_object_new_boolean(u->loaded));
	if (u->loaded)
		json_object_object_add(o, "packages", json_object_new_int64((int64_t)records));
	else
		json_object_object_add(o, "error", json_object_new_string(u->error));
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

/* Why the fetched feed f cannot be taken in (into u->error), or 0 when it
 * was: its records are the gateway's feed's now. */
static int take_in(struct gw *gw, struct feed_url *u, struct gw_fetch *f, size_t *records)
{
	struct malfeed *add;
	struct sbx_err e = { 0 };

	if (f->error[0])
		return snprintf(u->error, sizeof(u->error), "%s", f->error), -1;
	if (f->status != 200)
		return snprintf(u->error, sizeof(u->error), "upstream answered %ld", f->status), -1;
	add = malfeed_new();
	malfeed_add_bytes(add, f->len);
	if (malfeed_add_json(add, f->body ? f->body : "", f->len, u->url, &e) == 0) {
		malfeed_finish(add);
		*records = malfeed_count(add);
		if (malfeed_merge(gw->feed, add, &e) == 0)
			return 0;
	}
	malfeed_free(add);
	snprintf(u->error, sizeof(u->error), "%s", e.msg);
	return -1;
}

static void fetched(struct gw *gw, struct gw_fetch *f)
{
	struct feed_url *u = f->arg;
	size_t records = 0;

	u->fetching = false;
	u->loaded = take_in(gw, u, f, &records) == 0;
	event(gw, u, records, f->ms);
	gw_fetch_free(f);
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

/* Starts the fetch of each feed not loaded, none under way and past its
 * pause after a failure. */
static void ask(struct gw *gw)
{
	int64_t now = (int64_t)now_ms();

	for (size_t i = 0; i < gw->feeds->n; i++) {
		struct feed_url *u = &gw->feeds->v[i];
		if (u->loaded || u->fetching || (u->failed_ms && now - u->failed_ms < FEED_RETRY_MS))
			continue;
		struct gw_fetch *f = xcalloc(1, sizeof(*f));
		f->url = xstrdup(u->url);
		snprintf(f->accept, sizeof(f->accept), "application/json");
		f->max = MALFEED_MAX_FILE;
		f->fd = -1;
		f->done = fetched;
		f->arg = u;
		u->fetching = true;
		if (gw_fetch_start(gw, f) < 0) {
			u->fetching = false;
			u->failed_ms = now;
			snprintf(u->error, sizeof(u->error), "%s", f->error[0] ? f->error : "the fetch did not start");
			gw_fetch_free(f);
		}
	}
}

void gw_feed_poll(struct gw *gw)
{
	if (gw->feeds && gw->feeds->waiting)
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
