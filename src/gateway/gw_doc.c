/* gw_doc.c - one index document for an ecosystem: cached, else fetched
 * (gw_doc.h). The cached copy is not held in memory while upstream is
 * asked (minutes, at worst): it is read again for a 304 or when upstream
 * fails. */
#define _GNU_SOURCE
#include <string.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "gateway/gw_doc.h"

/* One document being fetched; its strings are its own. */
struct doc {
	uint64_t client;
	char *eco, *upstream, *key, *name, *what, *gone;
	bool revalidate;
	bool stale;                          /* a copy was there when upstream was asked */
	char etag[GW_VALIDATORS_MAX + 1];    /* its validators */
	gw_doc_then then, missing;
	void *arg;
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static struct doc *doc_new(const struct gw_client *cl, const struct gw_doc_req *q)
{
	struct doc *d = xcalloc(1, sizeof(*d));

	d->client = cl->id;
	d->eco = xstrdup(q->eco);
	d->upstream = xstrdup(q->upstream);
	d->key = xstrdup(q->key);
	d->name = xstrdup(q->name);
	d->what = dup_or_null(q->what);
	d->gone = dup_or_null(q->gone);
	d->revalidate = q->revalidate;
	d->then = q->then;
	d->missing = q->missing;
	d->arg = q->arg;
	return d;
}

static void doc_free(struct doc *d)
{
	free(d->eco);
	free(d->upstream);
	free(d->key);
	free(d->name);
	free(d->what);
	free(d->gone);
	free(d->arg);
	free(d);
}

static void give(struct gw *gw, struct gw_client *cl, const struct doc *d, gw_doc_then fn, const char *body,
		 size_t len, bool fetched, const char *validators)
{
	struct gw_doc g = { d->eco, d->upstream, d->key, d->name, d->what, body, len, fetched, validators };

	fn(gw, cl, &g, d->arg);
}

void gw_doc_keep(struct gw *gw, const struct gw_doc *d)
{
	if (d->fetched)
		gw_cache_index_put(gw->cache, d->eco, d->upstream, d->key, d->body, d->len, d->validators);
}

/* Upstream has no such document. */
static void gone(struct gw *gw, struct gw_client *cl, const struct doc *d)
{
	if (d->missing)
		give(gw, cl, d, d->missing, NULL, 0, false, "");
	else if (d->gone)
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "%s %s: %s", d->eco, d->name, d->gone);
	else
		gw_fail(gw, cl, 404, NULL, NULL, NULL, "%s %s: upstream has no '%s'", d->eco, d->name, d->key);
}

static void doc_fetched(struct gw *gw, struct gw_fetch *f)
{
	struct doc *d = f->arg;
	struct gw_client *cl = gw_client_find(gw, d->client);
	bool answered = f->error[0] == '\0';
	bool missing = answered && (f->status == 404 || f->status == 410 || f->status == 451);
	_cleanup_free_ char *copy = NULL;
	size_t copy_len = 0;
	int64_t age;

	if (d->stale && d->revalidate)
		gw_event_revalidated(gw, d->eco, d->key, answered ? f->status : 0, f->ms, false);
	/* for a 304 or upstream trouble: the stale copy read again */
	if (cl && d->stale && !(answered && (f->status == 200 || missing)) &&
	    gw_cache_index_get(gw->cache, d->eco, d->upstream, d->key, &copy, &copy_len, d->etag, sizeof(d->etag),
			       &age) != 1)
		free(steal_ptr(copy));
	if (!cl) {
		/* gone: nothing to answer */
	} else if (answered && f->status == 200) {
		give(gw, cl, d, d->then, f->body ? f->body : "", f->len, true, d->revalidate ? f->resp_etag : "");
	} else if (answered && f->status == 304 && d->revalidate && copy) {
		gw_cache_index_touch(gw->cache, d->eco, d->upstream, d->key);
		give(gw, cl, d, d->then, copy, copy_len, false, "");
	} else if (missing) {
		gone(gw, cl, d);
	} else if (copy) {
		/* upstream trouble: the last copy, however old, is better */
		give(gw, cl, d, d->then, copy, copy_len, false, "");
	} else if (!answered) {
		gw_fail(gw, cl, 502, d->eco, d->name, d->what, "%s %s: upstream: %s", d->eco, d->name, f->error);
	} else {
		gw_fail(gw, cl, 502, d->eco, d->name, d->what, "%s %s: upstream answered HTTP %ld", d->eco, d->name,
			f->status);
	}
	gw_fetch_free(f);
	doc_free(d);
}

/* The cached copy (offline: the other key's will do), 1 with body; or 0. */
static int cached(struct gw *gw, const struct gw_doc_req *q, struct doc *d, char **body, size_t *len,
		  int64_t *age)
{
	if (gw_cache_index_get(gw->cache, q->eco, q->upstream, q->key, body, len, d->etag, sizeof(d->etag), age) == 1)
		return 1;
	free(steal_ptr(*body));
	if (gw->conf.rules.offline && q->offline_key &&
	    gw_cache_index_get(gw->cache, q->eco, q->upstream, q->offline_key, body, len, d->etag, sizeof(d->etag),
			       age) == 1)
		return 1;
	free(steal_ptr(*body));
	return 0;
}

static void fetch(struct gw *gw, struct gw_client *cl, const struct gw_doc_req *q, struct doc *d)
{
	struct gw_fetch *f = xcalloc(1, sizeof(*f));

	f->url = xstrdup(q->url);
	if (q->accept)
		snprintf(f->accept, sizeof(f->accept), "%s", q->accept);
	if (d->stale && d->revalidate)
		snprintf(f->etag, sizeof(f->etag), "%s", d->etag);
	f->max = q->max;
	f->fd = -1;
	f->done = doc_fetched;
	f->arg = d;
	if (gw_fetch_start(gw, f) < 0) {
		gw_fail(gw, cl, 403, d->eco, d->name, d->what, "%s %s: upstream: %s", d->eco, d->name, f->error);
		gw_fetch_free(f);
		doc_free(d);
	}
}

void gw_doc_get(struct gw *gw, struct gw_client *cl, const struct gw_doc_req *q)
{
	struct doc *d = doc_new(cl, q);
	_cleanup_free_ char *body = NULL;
	size_t len = 0;
	int64_t age = 0;
	bool offline = gw->conf.rules.offline;
	bool have = cached(gw, q, d, &body, &len, &age) == 1;
	bool fresh = have && (offline || q->immutable || gw_index_fresh(gw, age));

	if (fresh || (have && q->revalidate && gw_index_stale_ok(gw, age))) {
		give(gw, cl, d, d->then, body, len, false, "");
		if (!fresh)
			gw_revalidate(gw, &(struct gw_reval_req){ d->eco, d->upstream, d->key, q->url,
								  q->accept ? q->accept : "", d->etag, q->max });
		doc_free(d);
		return;
	}
	if (offline) {
		char why[600];
		rules_offline(d->eco, d->name, d->what, why, sizeof(why));
		gw_fail(gw, cl, 503, d->eco, d->name, d->what, "%s", why);
		doc_free(d);
		return;
	}
	d->stale = have;
	fetch(gw, cl, q, d);
}
