/* resolver.c - getaddrinfo on worker threads with a small TTL cache, so the
 * proxy's event loop never waits on DNS (a blocking lookup per request made
 * a download 40 times slower: docs/design.md). Completions are signalled through
 * an eventfd the loop polls. The workers start with the first lookup that
 * misses the cache: most sandboxes make none, and four threads cost a
 * start-up a few hundred microseconds. */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>

#include "base/util.h"
#include "net/resolver.h"

#define WORKERS 4
#define CACHE_SIZE 128
#define TTL_OK 60
#define TTL_FAIL 10

struct job {
	struct job *next;
	char *host;
	uint64_t tag;
	struct resolver_result res;
};

struct cache_entry {
	char *host;
	time_t expires;
	struct resolver_result res;
};

struct sbx_resolver {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *todo, *done;
	struct cache_entry cache[CACHE_SIZE];
	int refs;      /* the owner plus each live worker; the last one frees */
	bool stopping;
	bool started;  /* the workers were started (on the first lookup) */
	int efd;
};

static time_t now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static void job_free(struct job *j)
{
	free(j->host);
	free(j);
}

/* Drops one reference with the lock held; frees on the last. */
static void unref_locked(struct sbx_resolver *r)
{
	if (--r->refs > 0) {
		pthread_mutex_unlock(&r->lock);
		return;
	}
	pthread_mutex_unlock(&r->lock);
	for (struct job *l = r->todo, *n; l; l = n) {
		n = l->next;
		job_free(l);
	}
	for (struct job *l = r->done, *n; l; l = n) {
		n = l->next;
		job_free(l);
	}
	for (size_t i = 0; i < CACHE_SIZE; i++)
		free(r->cache[i].host);
	close(r->efd);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->cond);
	free(r);
}

static void lookup(const char *host, struct resolver_result *res)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_family = AF_UNSPEC };
	struct addrinfo *ai = NULL;

	memset(res, 0, sizeof(*res));
	res->error = getaddrinfo(host, NULL, &hints, &ai);
	for (struct addrinfo *a = ai; a && res->n < RESOLVER_MAX_ADDRS; a = a->ai_next)
		if ((a->ai_family == AF_INET || a->ai_family == AF_INET6) && a->ai_addrlen <= sizeof(res->addr[0]))
			memcpy(&res->addr[res->n++], a->ai_addr, a->ai_addrlen);
	if (ai)
		freeaddrinfo(ai);
	if (!res->error && res->n == 0)
		res->error = EAI_NONAME;
}

static void cache_put_locked(struct sbx_resolver *r, const char *host, const struct resolver_result *res)
{
	struct cache_entry *victim = &r->cache[0];
	for (size_t i = 0; i < CACHE_SIZE; i++) {
		struct cache_entry *e = &r->cache[i];
		if (!e->host || strcmp(e->host, host) == 0) {
			victim = e;
			break;
		}
		if (e->expires < victim->expires)
			victim = e;
	}
	free(victim->host);
	victim->host = xstrdup(host);
	victim->expires = now_s() + (res->error ? TTL_FAIL : TTL_OK);
	victim->res = *res;
}

/* With the lock held: the answer goes to the cache and the done list, and
 * the proxy's loop is woken (the eventfd's counter cannot overflow at this
 * rate). */
static void job_done_locked(struct sbx_resolver *r, struct job *j)
{
	uint64_t one = 1;

	cache_put_locked(r, j->host, &j->res);
	j->next = r->done;
	r->done = j;
	(void)!write(r->efd, &one, sizeof(one));
}

static void *worker(void *arg)
{
	struct sbx_resolver *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		while (!r->todo && !r->stopping)
			pthread_cond_wait(&r->cond, &r->lock);
		if (r->stopping)
			break;
		struct job *j = r->todo;
		r->todo = j->next;
		pthread_mutex_unlock(&r->lock);
		lookup(j->host, &j->res);
		pthread_mutex_lock(&r->lock);
		if (r->stopping) {
			job_free(j);
			break;
		}
		job_done_locked(r, j);
	}
	unref_locked(r);
	return NULL;
}

int resolver_new(struct sbx_resolver **out, struct sbx_err *err)
{
	struct sbx_resolver *r = xcalloc(1, sizeof(*r));

	r->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->efd < 0) {
		free(r);
		return err_sys(err, "eventfd");
	}
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->cond, NULL);
	r->refs = 1;
	*out = r;
	return 0;
}

/* With the lock held: starts the workers; how many are running. */
static int start_workers_locked(struct sbx_resolver *r)
{
	int n = 0;

	r->started = true;
	for (int i = 0; i < WORKERS; i++) {
		pthread_t t;
		r->refs++;
		if (pthread_create(&t, NULL, worker, r) != 0) {
			r->refs--;
			break;
		}
		pthread_detach(t);
		n++;
	}
	return n;
}

int resolver_fd(const struct sbx_resolver *r)
{
	return r->efd;
}

int resolver_lookup(struct sbx_resolver *r, const char *host, uint64_t tag, struct resolver_result *res)
{
	time_t now = now_s();

	pthread_mutex_lock(&r->lock);
	for (size_t i = 0; i < CACHE_SIZE; i++) {
		struct cache_entry *e = &r->cache[i];
		if (e->host && e->expires > now && strcmp(e->host, host) == 0) {
			*res = e->res;
			pthread_mutex_unlock(&r->lock);
			return 1;
		}
	}
	struct job *j = xcalloc(1, sizeof(*j));
	j->host = xstrdup(host);
	j->tag = tag;
	if (!r->started && start_workers_locked(r) == 0) {
		/* no thread could be made: this lookup blocks, rather than never
		 * being answered; a later one tries the threads again */
		r->started = false;
		pthread_mutex_unlock(&r->lock);
		lookup(j->host, &j->res);
		pthread_mutex_lock(&r->lock);
		job_done_locked(r, j);
		pthread_mutex_unlock(&r->lock);
		return 0;
	}
	/* Order does not matter: each job carries its own tag. */
	j->next = r->todo;
	r->todo = j;
	pthread_cond_signal(&r->cond);
	pthread_mutex_unlock(&r->lock);
	return 0;
}

int resolver_next(struct sbx_resolver *r, uint64_t *tag, struct resolver_result *res)
{
	uint64_t count;
	struct job *j;

	pthread_mutex_lock(&r->lock);
	j = r->done;
	if (j)
		r->done = j->next;
	else if (read(r->efd, &count, sizeof(count)) < 0 && errno != EAGAIN) {
		/* Only EAGAIN is expected: the counter was already drained. */
	}
	pthread_mutex_unlock(&r->lock);
	if (!j)
		return 0;
	*tag = j->tag;
	*res = j->res;
	job_free(j);
	return 1;
}

void resolver_free(struct sbx_resolver *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_cond_broadcast(&r->cond);
	unref_locked(r);
}
