/* resolver.h - name lookups off the proxy's loop: one worker thread runs
 * getaddrinfo, answers come back through a pipe the loop polls, and are
 * cached (a blocking lookup per request once made a download 40x slower). */
#ifndef SBX_RESOLVER_H
#define SBX_RESOLVER_H

#include <netdb.h>
#include <stddef.h>

struct sbx_resolver;

/* A finished lookup: host and its addresses (NULL on failure). */
struct sbx_answer {
	char host[256];
	struct addrinfo *ai;
	int gai_error;
};

struct sbx_resolver *resolver_new(void);
void resolver_free(struct sbx_resolver *r);
/* The fd that turns readable when answers are ready. */
int resolver_fd(const struct sbx_resolver *r);
/* Cached answer (do not free), or NULL: then the lookup is queued. */
const struct addrinfo *resolver_lookup(struct sbx_resolver *r, const char *host, int *failed);
/* Takes the finished lookups into the cache; returns how many. */
int resolver_collect(struct sbx_resolver *r);

#endif
