/* resolver.h - name resolution for the proxy loop that never blocks it. */
#ifndef SBX_RESOLVER_H
#define SBX_RESOLVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "base/err.h"

#define RESOLVER_MAX_ADDRS 8

struct resolver_result {
	int error;   /* 0, or an EAI_* code */
	size_t n;
	struct sockaddr_storage addr[RESOLVER_MAX_ADDRS];  /* port 0 */
};

struct sbx_resolver;

int resolver_new(struct sbx_resolver **out, struct sbx_err *err);
/* Readable (an eventfd) when resolver_next has completions. */
int resolver_fd(const struct sbx_resolver *r);
/* Returns 1 with *res filled when the cache answers at once, or 0 when the
 * lookup was queued: its result comes back from resolver_next with tag. */
int resolver_lookup(struct sbx_resolver *r, const char *host, uint64_t tag, struct resolver_result *res);
/* Pops one completion: 1 with *tag and *res, 0 when there is none. */
int resolver_next(struct sbx_resolver *r, uint64_t *tag, struct resolver_result *res);
/* Returns at once; a worker stuck in a slow lookup frees what is left. */
void resolver_free(struct sbx_resolver *r);

#endif
