/* resolver.c - see resolver.h. */
#define _GNU_SOURCE
#include "resolver.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

#define CACHE_MAX 128
#define TTL 60

struct entry {
	char host[256];
	struct addrinfo *ai;
	int failed;
	time_t at;
	int pending;
};

struct sbx_resolver {
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	char queue[CACHE_MAX][256];
	size_t qn;
	int pipe[2];
	struct entry cache[CACHE_MAX];
};

static void *worker(void *arg)
{
	struct sbx_resolver *r = arg;
	char host[256];

	for (;;) {
		pthread_mutex_lock(&r->mu);
		while (r->qn == 0)
			pthread_cond_wait(&r->cv, &r->mu);
		memcpy(host, r->queue[0], sizeof(host));
		memmove(r->queue[0], r->queue[1], (r->qn - 1) * sizeof(r->queue[0]));
		r->qn--;
		pthread_mutex_unlock(&r->mu);
		struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
		struct sbx_answer *a = xcalloc(1, sizeof(*a));
		memcpy(a->host, host, sizeof(a->host));
		a->gai_error = getaddrinfo(host, NULL, &hints, &a->ai);
		if (write(r->pipe[1], &a, sizeof(a)) != sizeof(a)) {
			if (a->ai)
				freeaddrinfo(a->ai);
			free(a);
		}
	}
	return NULL;
}

struct sbx_resolver *resolver_new(void)
{
	struct sbx_resolver *r = xcalloc(1, sizeof(*r));
	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	if (pipe2(r->pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
		free(r);
		return NULL;
	}
	return r;
}

void resolver_free(struct sbx_resolver *r)
{
	if (!r)
		return;
	if (r->started) {
		pthread_cancel(r->thread);
		pthread_join(r->thread, NULL);
	}
	for (size_t i = 0; i < CACHE_MAX; i++)
		if (r->cache[i].ai)
			freeaddrinfo(r->cache[i].ai);
	close(r->pipe[0]);
	close(r->pipe[1]);
	free(r);
}

int resolver_fd(const struct sbx_resolver *r)
{
	return r->pipe[0];
}

static struct entry *slot(struct sbx_resolver *r, const char *host, int create)
{
	struct entry *oldest = &r->cache[0];
	for (size_t i = 0; i < CACHE_MAX; i++) {
		if (!strcmp(r->cache[i].host, host))
			return &r->cache[i];
		if (!r->cache[i].pending && r->cache[i].at < oldest->at)
			oldest = &r->cache[i];
	}
	if (!create)
		return NULL;
	if (oldest->ai)
		freeaddrinfo(oldest->ai);
	memset(oldest, 0, sizeof(*oldest));
	snprintf(oldest->host, sizeof(oldest->host), "%s", host);
	return oldest;
}

const struct addrinfo *resolver_lookup(struct sbx_resolver *r, const char *host, int *failed)
{
	struct entry *e = slot(r, host, 0);
	time_t now = time(NULL);

	*failed = 0;
	if (e && !e->pending && now - e->at < (e->failed ? 5 : TTL)) {
		*failed = e->failed;
		return e->ai;
	}
	if (e && e->pending)
		return NULL;
	e = slot(r, host, 1);
	e->pending = 1;
	e->at = now;
	if (!r->started && pthread_create(&r->thread, NULL, worker, r) == 0)
		r->started = 1;
	pthread_mutex_lock(&r->mu);
	if (r->qn < CACHE_MAX)
		snprintf(r->queue[r->qn++], 256, "%s", host);
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int resolver_collect(struct sbx_resolver *r)
{
	struct sbx_answer *a;
	int n = 0;

	while (read(r->pipe[0], &a, sizeof(a)) == sizeof(a)) {
		struct entry *e = slot(r, a->host, 1);
		if (e->ai)
			freeaddrinfo(e->ai);
		e->ai = a->ai;
		e->failed = a->gai_error != 0;
		e->pending = 0;
		e->at = time(NULL);
		free(a);
		n++;
	}
	return n;
}
