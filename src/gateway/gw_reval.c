/* gw_reval.c - index documents revalidated in the background: past
 * [packages] index_max_age and within index_max_stale, a packument or a
 * PyPI page is served from the cache at once and upstream is asked behind
 * it (RFC 5861's stale-while-revalidate), so a warm install stays warm
 * after two minutes. One fetch per document at a time, a bounded number
 * in all; what comes back renews or replaces the cached copy. */
#define _GNU_SOURCE
#include <json-c/json.h>
#include <string.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "net/proxy_event.h"

/* at once; each holds a fetch (gw_fetch.c runs 48 and queues the rest) */
#define MAX_REVALS 256

struct gw_reval {
	struct gw_reval *next;
	char *eco, *upstream, *key;
};

void gw_event_revalidated(struct gw *gw, const char *eco, const char *key, long status, int64_t ms,
			  bool background)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "ecosystem", json_object_new_string(eco));
	json_object_object_add(o, "index", json_object_new_string(key));
	json_object_object_add(o, "status", json_object_new_int64(status));
	json_object_object_add(o, "ms", json_object_new_int64(ms));
	json_object_object_add(o, "background", json_object_new_boolean(background));
	proxy_event_write(gw->conf.events_fd, o, "index-revalidated");
}

static void reval_free(struct gw *gw, struct gw_reval *v)
{
	for (struct gw_reval **pp = &gw->revals; *pp; pp = &(*pp)->next)
		if (*pp == v) {
			*pp = v->next;
			gw->nrevals--;
			break;
		}
	free(v->eco);
	free(v->upstream);
	free(v->key);
	free(v);
}

static void revalidated(struct gw *gw, struct gw_fetch *f)
{
	struct gw_reval *v = f->arg;
	bool ok = f->error[0] == '\0';

	if (ok && f->status == 304)
		gw_cache_index_touch(gw->cache, v->eco, v->upstream, v->key);
	else if (ok && f->status == 200)
		gw_cache_index_put(gw->cache, v->eco, v->upstream, v->key, f->body ? f->body : "", f->len,
				   f->resp_etag);
	/* anything else: the copy stays as it is, and past index_max_stale
	 * the next request waits for upstream (and gets its error) */
	gw_event_revalidated(gw, v->eco, v->key, ok ? f->status : 0, f->ms, true);
	reval_free(gw, v);
	gw_fetch_free(f);
}

void gw_revalidate(struct gw *gw, const struct gw_reval_req *r)
{
	if (gw->nrevals >= MAX_REVALS)
		return;
	for (struct gw_reval *o = gw->revals; o; o = o->next)
		if (strcmp(o->eco, r->eco) == 0 && strcmp(o->upstream, r->upstream) == 0 && strcmp(o->key, r->key) == 0)
			return;  /* under way */
	struct gw_reval *v = xcalloc(1, sizeof(*v));
	struct gw_fetch *f = xcalloc(1, sizeof(*f));
	v->eco = xstrdup(r->eco);
	v->upstream = xstrdup(r->upstream);
	v->key = xstrdup(r->key);
	v->next = gw->revals;
	gw->revals = v;
	gw->nrevals++;
	f->url = xstrdup(r->url);
	snprintf(f->accept, sizeof(f->accept), "%s", r->accept);
	snprintf(f->etag, sizeof(f->etag), "%s", r->etag);
	f->max = r->max;
	f->fd = -1;
	f->done = revalidated;
	f->arg = v;
	if (gw_fetch_start(gw, f) < 0) {
		reval_free(gw, v);
		gw_fetch_free(f);
	}
}

void gw_reval_fini(struct gw *gw)
{
	while (gw->revals)
		reval_free(gw, gw->revals);
}
