/* gw_debidx.c - the tables gw_deb.c looks a .deb up in, one per Packages
 * index apt fetched (debidx.h): taken from the cache when an earlier
 * sandbox built it, else built on a worker thread (unpacked, read, sorted,
 * stored in the cache) so that the gateway's loop, which serves every
 * other client meanwhile, never waits the second or two a Debian main
 * index takes. A .deb asked for while a table is built waits for it
 * (gw_deb.c). Tables are searched newest first: a newer copy of an index
 * replaces the older.
 *
 * Each entry carries the time the gateway first saw that file of that
 * package and version (debidx_date): a table built anew takes the times of
 * the last table built for the same index (its Packages or Sources file by
 * path, whatever compression or by-hash name it came under), named by a
 * small index document of the cache, "seen/HOST/PATH" holding that table's
 * digest; what that table lacks is stamped now. So the record is bounded
 * by the index itself (a table's cap), never grows past it, and is the
 * cache's: a table or its name evicted makes versions young again. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/deb_index.h"
#include "pkg/debidx.h"
#include "gateway/gw.h"

#define UNPACKED_MAX (1ULL << 30)   /* a Packages index unpacked (on disk) */
#define PENDING_MAX (1ULL << 30)    /* the indexes waiting for the worker, in all */

struct table {
	struct table *next;
	uint64_t seq;          /* the order learnt: newer first */
	char *key;             /* the Packages index's HOST/PATH */
	char *root;            /* HOST/ROOT its Filenames are relative to */
	void *p;               /* mapped (from the cache) or allocated */
	size_t len;
	bool mapped;
};

struct job {
	struct job *next;
	uint64_t seq;
	char *key;
	unsigned char src[32];
	int fd;                /* in: the file as fetched, in a file of the cache's */
	size_t len;
	char *table;           /* out */
	size_t table_len, entries;
	char error[300];
	int64_t ms;
	char *damaged;         /* why the cache's table was not trusted */
	bool has_prev;         /* the last table of the same index, to date by */
	unsigned char prev[32];
};

/* Shared with the worker, under lock; whoever is last frees it. */
struct worker {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *todo, *done;
	bool stop, working;
	bool orphaned;           /* the gateway went while a job ran: the worker frees this */
	int efd;
	struct gw_cache *cache;  /* the worker's own handle */
};

struct gw_debidx {
	struct table *tables;
	uint64_t seq;
	size_t pending;        /* jobs not reaped */
	uint64_t pending_bytes;  /* their files' (at most PENDING_MAX) */
	struct worker *w;
	pthread_t thread;
	char *damaged;         /* what the last load found, for the build's event */
};

/* The name of the record of the last table of the index at key: the
 * cache's index document "seen/HOST/DIR/Packages" (or Sources) below
 * upstream "http://HOST/", whatever compression or by-hash name the
 * index came under (a by-hash file in a source directory is a Sources). */
static void seen_name(const char *key, char *up, size_t usize, char *name, size_t size)
{
	const char *bh = strstr(key, "/by-hash/"), *slash = strrchr(key, '/');
	size_t dir = bh ? (size_t)(bh - key) : slash ? (size_t)(slash - key) : 0;
	bool src = bh ? dir >= 7 && strncmp(key + dir - 7, "/source", 7) == 0
		      : slash && strncmp(slash + 1, "Sources", 7) == 0;
	unsigned char d[32];

	snprintf(up, usize, "http://%.*s/", (int)strcspn(key, "/"), key);
	if (dir + 32 < 200) {
		snprintf(name, size, "seen/%.*s/%s", (int)dir, key, src ? "Sources" : "Packages");
		return;
	}
	sri_sha256(key, dir, d);  /* too long a name for the cache: its digest */
	snprintf(name, size, "seen/%s-", src ? "Sources" : "Packages");
	for (size_t i = 0; i < 20; i++)
		snprintf(name + strlen(name), size - strlen(name), "%02x", d[i]);
}

/* The digest of the last table built for the index at key: 1, or 0. */
static int seen_get(struct gw *gw, const char *key, unsigned char prev[32])
{
	char up[HOSTMATCH_MAX + 16], name[256], etag[8];
	_cleanup_free_ char *body = NULL;
	size_t len;
	int64_t age;
	struct sri s;

	seen_name(key, up, sizeof(up), name, sizeof(name));
	if (gw_cache_index_get(gw->cache, "deb", up, name, &body, &len, etag, sizeof(etag), &age) != 1 || len < 64)
		return 0;
	body[64] = '\0';
	if (sri_from_hex256(body, &s) < 0)
		return 0;
	memcpy(prev, s.digest, 32);
	return 1;
}

static void seen_put(struct gw *gw, const char *key, const unsigned char src[32])
{
	char up[HOSTMATCH_MAX + 16], name[256], hex[66];

	seen_name(key, up, sizeof(up), name, sizeof(name));
	for (size_t i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", src[i]);
	hex[64] = '\n';
	gw_cache_index_put(gw->cache, "deb", up, name, hex, 65, "");
}

static void job_free(struct job *j)
{
	free(j->key);
	if (j->fd >= 0)
		close(j->fd);
	free(j->table);
	free(j->damaged);
	free(j);
}

static void worker_free(struct worker *w)
{
	for (struct job *j; (j = w->todo); w->todo = j->next, job_free(j))
		;
	for (struct job *j; (j = w->done); w->done = j->next, job_free(j))
		;
	close(w->efd);
	gw_cache_close(w->cache);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->cond);
	free(w);
}

/* The entries dated: by the last table of the same index where the cache
 * still has it (checked whole, as any table), else now. */
static void date(struct worker *w, struct job *j)
{
	void *prev = NULL;
	size_t len = 0;
	char why[300];

	if (j->has_prev && (!w->cache || gw_cache_debidx_get(w->cache, j->prev, &prev, &len, why, sizeof(why)) != 1))
		prev = NULL;
	(void)debidx_date(j->table, j->table_len, prev, len, (int64_t)time(NULL));
	if (prev)
		munmap(prev, len);
}

static void run(struct worker *w, struct job *j)
{
	int64_t t0 = (int64_t)now_ms();
	size_t tlen = 0;
	struct sbx_err err;
	void *body = j->len ? mmap(NULL, j->len, PROT_READ, MAP_PRIVATE, j->fd, 0) : (void *)"";
	void *text = MAP_FAILED;
	int tfd = -1;

	/* the index unpacked into a file of the cache, read through a mapping */
	if (body == MAP_FAILED || !w->cache || gw_cache_scratch(w->cache, &tfd) < 0)
		err_sys(&err, "cannot map the index or make a file for it");
	else if (deb_unpack(body, j->len, UNPACKED_MAX, tfd, &tlen, &err) == 0 &&
		 (text = tlen ? mmap(NULL, tlen, PROT_READ, MAP_PRIVATE, tfd, 0) : (void *)"") == MAP_FAILED)
		err_sys(&err, "cannot map the unpacked index");
	if (text == MAP_FAILED ||
	    debidx_build(text, tlen, j->src, &j->table, &j->table_len, &j->entries, &err) < 0) {
		snprintf(j->error, sizeof(j->error), "%s", err.msg);
	} else {
		date(w, j);
		(void)gw_cache_debidx_put(w->cache, j->src, j->table, j->table_len, j->key);
	}
	if (text != MAP_FAILED && tlen)
		munmap(text, tlen);
	if (body != MAP_FAILED && j->len)
		munmap(body, j->len);
	if (tfd >= 0)
		close(tfd);
	close(steal_fd(j->fd));
	j->ms = (int64_t)now_ms() - t0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t one = 1;

	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->todo && !w->stop)
			pthread_cond_wait(&w->cond, &w->lock);
		if (w->stop)
			break;
		struct job *j = w->todo;
		w->todo = j->next;
		w->working = true;
		pthread_mutex_unlock(&w->lock);
		run(w, j);
		pthread_mutex_lock(&w->lock);
		w->working = false;
		struct job **pp = &w->done;
		while (*pp)
			pp = &(*pp)->next;
		j->next = NULL;
		*pp = j;
		(void)!write(w->efd, &one, sizeof(one));
	}
	bool orphaned = w->orphaned;
	pthread_mutex_unlock(&w->lock);
	if (orphaned)
		worker_free(w);
	return NULL;
}

static struct gw_debidx *state(struct gw *gw)
{
	if (!gw->debidx)
		gw->debidx = xcalloc(1, sizeof(*gw->debidx));
	return gw->debidx;
}

static void table_free(struct table *t)
{
	if (t->mapped)
		munmap(t->p, t->len);
	else
		free(t->p);
	free(t->key);
	free(t->root);
	free(t);
}

/* Into the list by seq, newest first; an older copy of the same index
 * goes (and a table older than the copy there is dropped). */
static void add_table(struct gw_debidx *d, struct table *t)
{
	for (struct table **pp = &d->tables; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->key, t->key) != 0)
			continue;
		if ((*pp)->seq > t->seq) {
			table_free(t);
			return;
		}
		struct table *old = *pp;
		*pp = old->next;
		table_free(old);
		break;
	}
	struct table **pp = &d->tables;
	while (*pp && (*pp)->seq > t->seq)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
}

static struct table *table_new(uint64_t seq, const char *key, void *p, size_t len, bool mapped)
{
	struct table *t = xcalloc(1, sizeof(*t));
	char root[DEB_PATH_MAX + HOSTMATCH_MAX + 8];

	deb_index_root(key, root, sizeof(root));
	t->seq = seq;
	t->key = xstrdup(key);
	t->root = xstrdup(root);
	t->p = p;
	t->len = len;
	t->mapped = mapped;
	return t;
}

int gw_debidx_load(struct gw *gw, const char *key, const unsigned char src[32])
{
	struct gw_debidx *d = state(gw);
	int64_t t0 = (int64_t)now_ms();
	char why[300];
	void *p;
	size_t len;

	free(d->damaged);
	d->damaged = NULL;
	int r = gw_cache_debidx_get(gw->cache, src, &p, &len, why, sizeof(why));
	if (r < 0)
		d->damaged = xstrdup(why);
	if (r != 1)
		return 0;
	add_table(d, table_new(++d->seq, key, p, len, true));
	unsigned char prev[32];
	if (!seen_get(gw, key, prev))  /* (read: kept from eviction as the table is) */
		seen_put(gw, key, src);
	gw_event_index(gw, "deb", key, debidx_count(p), "cache", (int64_t)now_ms() - t0, NULL);
	return 1;
}

static int start_worker(struct gw *gw, struct gw_debidx *d)
{
	struct worker *w = xcalloc(1, sizeof(*w));

	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	w->cache = gw_cache_dup(gw->cache);
	if (w->efd < 0 || gw_ep_add(gw, w->efd, EPOLLIN, GW_TAG_DEBIDX) < 0 ||
	    pthread_create(&d->thread, NULL, worker_main, w) != 0) {
		if (w->efd >= 0)
			epoll_ctl(gw->epfd, EPOLL_CTL_DEL, w->efd, NULL);
		worker_free(w);
		return -1;
	}
	d->w = w;
	return 0;
}

/* A job done: its table in, or the line saying its packages are refused. */
static void take_in(struct gw *gw, struct gw_debidx *d, struct job *j)
{
	if (j->error[0]) {
		fprintf(stderr, "sbxrun: gateway: deb %s: %s (its packages will be refused)\n", j->key, j->error);
	} else {
		gw_event_index(gw, "deb", j->key, j->entries, "built", j->ms, j->damaged);
		seen_put(gw, j->key, j->src);  /* the next table of this index is dated by it */
		add_table(d, table_new(j->seq, j->key, steal_ptr(j->table), j->table_len, false));
	}
	job_free(j);
}

void gw_debidx_build(struct gw *gw, const char *key, const unsigned char src[32], const char *body,
		     size_t len)
{
	struct gw_debidx *d = state(gw);
	struct job *j = xcalloc(1, sizeof(*j));

	j->seq = ++d->seq;
	j->key = xstrdup(key);
	memcpy(j->src, src, 32);
	j->len = len;
	j->damaged = steal_ptr(d->damaged);
	j->has_prev = seen_get(gw, key, j->prev) && memcmp(j->prev, src, 32) != 0;
	/* the worker reads a copy in a file, not in memory: indexes waiting
	 * to be read cost the host disk, PENDING_MAX in all; past it one is
	 * not read, and the .debs it lists are refused */
	j->fd = -1;
	if (d->pending_bytes + len > PENDING_MAX) {
		snprintf(j->error, sizeof(j->error), "more than %llu MiB of indexes wait to be read",
			 (unsigned long long)(PENDING_MAX >> 20));
		take_in(gw, d, j);
		return;
	}
	if (gw_cache_scratch(gw->cache, &j->fd) < 0 || write_all(j->fd, body, len) < 0) {
		snprintf(j->error, sizeof(j->error), "cannot copy the index to the cache: %s", strerror(errno));
		take_in(gw, d, j);
		return;
	}
	if (!d->w && start_worker(gw, d) < 0) {
		/* no thread to be had: built here, the loop waits this once */
		struct worker here = { .cache = gw->cache };
		run(&here, j);
		take_in(gw, d, j);
		return;
	}
	pthread_mutex_lock(&d->w->lock);
	struct job **pp = &d->w->todo;
	while (*pp)
		pp = &(*pp)->next;
	*pp = j;
	d->pending++;
	d->pending_bytes += len;
	pthread_cond_signal(&d->w->cond);
	pthread_mutex_unlock(&d->w->lock);
}

bool gw_debidx_busy(const struct gw *gw)
{
	return gw->debidx && gw->debidx->pending;
}

void gw_debidx_reap(struct gw *gw)
{
	struct gw_debidx *d = gw->debidx;
	uint64_t n;

	if (!d || !d->w)
		return;
	(void)!read(d->w->efd, &n, sizeof(n));
	pthread_mutex_lock(&d->w->lock);
	struct job *done = d->w->done;
	d->w->done = NULL;
	pthread_mutex_unlock(&d->w->lock);
	while (done) {
		struct job *j = done;
		done = j->next;
		d->pending--;
		d->pending_bytes -= j->len;
		take_in(gw, d, j);
	}
}

int gw_debidx_find(const struct gw *gw, const char *key, struct debidx_entry *e)
{
	if (!gw->debidx)
		return 0;
	for (const struct table *t = gw->debidx->tables; t; t = t->next) {
		size_t n = strlen(t->root);
		if (strncmp(key, t->root, n) == 0 && key[n] == '/' && debidx_find(t->p, t->len, key + n + 1, e) == 1)
			return 1;
	}
	return 0;
}

void gw_debidx_free(struct gw *gw)
{
	struct gw_debidx *d = gw->debidx;

	if (!d)
		return;
	while (d->tables) {
		struct table *t = d->tables;
		d->tables = t->next;
		table_free(t);
	}
	if (d->w) {
		pthread_mutex_lock(&d->w->lock);
		d->w->stop = true;
		bool working = d->w->working;
		d->w->orphaned = working;  /* then it frees itself when its job ends */
		pthread_cond_signal(&d->w->cond);
		pthread_mutex_unlock(&d->w->lock);
		if (working) {
			pthread_detach(d->thread);
		} else {
			pthread_join(d->thread, NULL);
			worker_free(d->w);
		}
	}
	free(d->damaged);
	free(d);
	gw->debidx = NULL;
}
