/* gw_artifact.c - one upstream download per artifact: requests for the
 * same digest in this process wait on one fetch; another sbxrun process
 * fetching it holds the digest's lock and this one polls until it can
 * take the lock, then finds the finished file. Bytes are checked against
 * the index's digest as they stream into a temporary file, and only a
 * match is committed to the cache and served. */
#define _GNU_SOURCE
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/gosum.h"
#include "gateway/gw.h"

#define WAIT_OTHER_MS 600000

struct gw_waiter {
	struct gw_waiter *next;
	uint64_t client;
	char *name, *version;
	bool sum;  /* its digest asked for, not the file (struct gw_artifact_req) */
	enum sri_algo sum_algo;
};

struct gw_artifact {
	struct gw_artifact *next;
	struct sri want;
	char *eco, *url, *name, *version;  /* name, version: the first asker's */
	uint64_t max;
	bool plain_http;
	struct gw_waiter *waiters;
	int lockfd, tmpfd;
	char *tmp;
	struct sri_check *chk;
	bool other;  /* another process holds the lock */
	int64_t since;
};

static void release(struct gw *gw, struct gw_artifact *a)
{
	for (struct gw_artifact **pp = &gw->artifacts; *pp; pp = &(*pp)->next)
		if (*pp == a) {
			*pp = a->next;
			break;
		}
	if (a->tmp)
		gw_cache_discard(gw->cache, a->tmp);
	if (a->tmpfd >= 0)
		close(a->tmpfd);
	if (a->lockfd >= 0)
		close(a->lockfd);  /* the flock goes with it */
	sri_check_free(a->chk);
	while (a->waiters) {
		struct gw_waiter *w = a->waiters;
		a->waiters = w->next;
		free(w->name);
		free(w->version);
		free(w);
	}
	free(a->tmp);
	free(a->eco);
	free(a->url);
	free(a->name);
	free(a->version);
	free(a);
}

/* The file, or the digest the waiter asked for of its verified bytes. */
static void answer(struct gw *gw, struct gw_client *cl, const struct gw_waiter *w, int fd, off_t size)
{
	char hex[129];

	if (!w->sum) {
		gw_reply_file(gw, cl, fd, size, "application/octet-stream");
		return;
	}
	int r = sri_hex_fd(w->sum_algo, fd, hex);
	close(fd);
	if (r < 0)
		gw_fail(gw, cl, 502, NULL, NULL, NULL, "the cache's file cannot be read");
	else
		gw_reply(gw, cl, 200, "text/plain", hex, strlen(hex));
}

/* Answers every waiter from the cache ("miss" for the first, "shared" for
 * the rest of a download; "hit" when another process fetched it). */
static void serve_all(struct gw *gw, struct gw_artifact *a, const char *first, int64_t ms)
{
	int i = 0;

	for (struct gw_waiter *w = a->waiters; w; w = w->next, i++) {
		struct gw_client *cl = gw_client_find(gw, w->client);
		int fd;
		off_t size;
		if (gw_cache_artifact(gw->cache, &a->want, &fd, &size) != 1) {
			gw_fail(gw, cl, 502, a->eco, w->name, w->version, "%s %s@%s: the cache lost it",
				a->eco, w->name, w->version);
			continue;
		}
		gw_event_artifact(gw, a->eco, w->name, w->version, (uint64_t)size, i ? "shared" : first,
				  i ? 0 : ms);
		answer(gw, cl, w, fd, size);
	}
}

static void fail_all(struct gw *gw, struct gw_artifact *a, int status, const char *why)
{
	for (struct gw_waiter *w = a->waiters; w; w = w->next)
		gw_fail(gw, gw_client_find(gw, w->client), status, a->eco, w->name, w->version,
			"%s %s@%s: %s", a->eco, w->name, w->version, why);
}

static void on_data(struct gw_fetch *f, const void *p, size_t n)
{
	struct gw_artifact *a = f->arg;
	sri_check_update(a->chk, p, n);
}

/* With what it is: the file's name is the URL's last segment. */
static int commit(struct gw *gw, struct gw_artifact *a)
{
	size_t end = strcspn(a->url, "?#");
	const char *p = a->url + end;
	char file[256];

	while (p > a->url && p[-1] != '/')
		p--;
	snprintf(file, sizeof(file), "%.*s", (int)(a->url + end - p), p);
	struct gw_cache_meta m = { a->eco, a->name, a->version, file };
	return gw_cache_commit(gw->cache, &a->want, a->tmpfd, a->tmp, &m);
}

/* Go's h1 is checked on the whole file (sri.h); the rest as it streamed. */
static bool verified(struct gw_artifact *a, char *got)
{
	unsigned char h1[32];
	const char *why;

	if (a->want.algo != SRI_GOH1)
		return sri_check_end(a->chk, got);
	if (gosum_zip_h1(a->tmpfd, h1, &why) < 0) {
		snprintf(got, 129, "no hash: %s", why);
		return false;
	}
	gosum_h1_string(h1, got, 129);
	return memcmp(h1, a->want.digest, 32) == 0;
}

static void fetched(struct gw *gw, struct gw_fetch *f)
{
	struct gw_artifact *a = f->arg;
	char got[129], why[600];

	if (f->error[0] || f->status != 200) {
		snprintf(why, sizeof(why), "upstream: %s", f->error[0] ? f->error : "an HTTP error");
		if (!f->error[0])
			snprintf(why, sizeof(why), "upstream answered HTTP %ld", f->status);
		fail_all(gw, a, f->status == 404 ? 404 : 502, why);
	} else if (!verified(a, got)) {
		char want[140];
		if (a->want.algo == SRI_GOH1)
			gosum_h1_string(a->want.digest, want, sizeof(want));
		if (a->want.algo == SRI_GOH1)
			snprintf(why, sizeof(why), "integrity mismatch: the checksum database says %s, upstream "
				 "sent %s (nothing cached)", want, got);
		else
			snprintf(why, sizeof(why), "integrity mismatch: the index says %s %s, upstream sent %s "
				 "(nothing cached)", sri_algo_name(a->want.algo), a->want.hex, got);
		fail_all(gw, a, 502, why);
	} else if (commit(gw, a) < 0) {
		fail_all(gw, a, 502, "cannot write to the cache");
	} else {
		free(steal_ptr(a->tmp));
		serve_all(gw, a, "miss", f->ms);
		gw_cache_trim(gw->cache);  /* the waiters hold their files open */
	}
	gw_fetch_free(f);
	release(gw, a);
}

/* Holding the lock: the file may have appeared meanwhile; else fetch. */
static void locked(struct gw *gw, struct gw_artifact *a)
{
	int fd;
	off_t size;

	if (gw_cache_artifact(gw->cache, &a->want, &fd, &size) == 1) {
		close(fd);
		serve_all(gw, a, "hit", 0);
		release(gw, a);
		return;
	}
	struct gw_fetch *f = xcalloc(1, sizeof(*f));
	a->chk = sri_check_new(&a->want);
	if (!a->chk || gw_cache_tmp(gw->cache, &a->want, &a->tmpfd, &a->tmp) < 0) {
		free(f);
		fail_all(gw, a, 502, "cannot write to the cache");
		release(gw, a);
		return;
	}
	f->url = xstrdup(a->url);
	f->max = a->max;
	f->plain_http = a->plain_http;
	f->fd = a->tmpfd;
	f->data = on_data;
	f->done = fetched;
	f->arg = a;
	if (gw_fetch_start(gw, f) < 0) {
		fail_all(gw, a, 403, f->error);
		gw_fetch_free(f);
		release(gw, a);
	}
}

static void try_lock(struct gw *gw, struct gw_artifact *a)
{
	int r = gw_cache_lock(gw->cache, &a->want, &a->lockfd);

	a->other = r == 0;
	if (r < 0) {
		fail_all(gw, a, 502, "cannot lock the cache");
		release(gw, a);
	} else if (r == 1) {
		locked(gw, a);
	} else if ((int64_t)now_ms() - a->since > WAIT_OTHER_MS) {
		fail_all(gw, a, 504, "another sbxrun's download of it did not end");
		release(gw, a);
	}
}

void gw_artifact_get(struct gw *gw, struct gw_client *cl, const struct gw_artifact_req *r)
{
	struct gw_artifact *a;
	struct gw_waiter *w = xcalloc(1, sizeof(*w));
	int fd;
	off_t size;

	w->client = cl->id;
	w->name = xstrdup(r->name);
	w->version = xstrdup(r->version);
	w->sum = r->sum;
	w->sum_algo = r->sum_algo;
	if (gw_cache_artifact(gw->cache, &r->want, &fd, &size) == 1) {
		gw_event_artifact(gw, r->eco, r->name, r->version, (uint64_t)size, "hit", 0);
		answer(gw, cl, w, fd, size);
		free(w->name), free(w->version), free(w);
		return;
	}
	if (gw->conf.rules.offline) {  /* what the cache lacks is refused */
		char why[600];
		rules_offline(r->eco, r->name, r->version, why, sizeof(why));
		gw_fail(gw, cl, 503, r->eco, r->name, r->version, "%s", why);
		free(w->name), free(w->version), free(w);
		return;
	}
	for (a = gw->artifacts; a; a = a->next)
		if (a->want.algo == r->want.algo && strcmp(a->want.hex, r->want.hex) == 0)
			break;
	if (a) {  /* joins; the first waiter stays first */
		struct gw_waiter **pp = &a->waiters;
		while (*pp)
			pp = &(*pp)->next;
		*pp = w;
		return;
	}
	a = xcalloc(1, sizeof(*a));
	a->want = r->want;
	a->eco = xstrdup(r->eco);
	a->url = xstrdup(r->url);
	a->name = xstrdup(r->name);
	a->version = xstrdup(r->version ? r->version : "?");
	a->max = r->max;
	a->plain_http = r->plain_http;
	a->lockfd = a->tmpfd = -1;
	a->waiters = w;
	a->since = (int64_t)now_ms();
	a->next = gw->artifacts;
	gw->artifacts = a;
	try_lock(gw, a);
}

void gw_artifact_poll(struct gw *gw)
{
	struct gw_artifact *next;

	for (struct gw_artifact *a = gw->artifacts; a; a = next) {
		next = a->next;
		if (a->other)
			try_lock(gw, a);
	}
}

void gw_artifact_fini(struct gw *gw)
{
	while (gw->artifacts)
		release(gw, gw->artifacts);
}
