/* hostmatch.h - egress policy: host names canonicalised and matched against
 * an allow list, and addresses classified after resolution. Used by the
 * packages proxy and by `sbxrun download`. */
#ifndef SBX_HOSTMATCH_H
#define SBX_HOSTMATCH_H

#include <stddef.h>
#include <sys/socket.h>

#include "config.h"

#define SBX_HOST_INTERNAL "host.sbxrun.internal"

/* One compiled entry: a host or *.suffix, a port (0: 80 and 443). */
struct sbx_allow_entry {
	char host[256];
	int suffix;   /* *.host: subdomains only */
	int port;
	int exact;    /* named in the profile itself (not through a set or suffix) */
};

struct sbx_allow {
	struct sbx_allow_entry *e;
	size_t n;
};

/* Package sources of the image, for @apt, @npm and @pypi. */
struct sbx_sets {
	char *const *apt;      /* host names */
	char *const *npm;      /* URLs or hosts */
	char *const *pypi;     /* URLs or hosts */
};

/* Lowercases, drops one trailing dot; refuses numeric forms that are not a
 * plain dotted quad (decimal, hex, octal and short IPv4 forms), empty
 * labels and bad characters. IPv6 literals come without brackets. */
int host_canon(const char *in, char *out, size_t size, struct sbx_err *err);
int allow_compile(const struct sbx_strlist *list, const struct sbx_sets *sets, struct sbx_allow *out,
		  struct sbx_err *err);
void allow_free(struct sbx_allow *a);
/* Returns 1 if host (canonical) and port are allowed; *exact is set when an
 * entry names the host exactly, *internal for host.sbxrun.internal. */
int allow_match(const struct sbx_allow *a, const char *host, int port, int *exact, int *internal);
/* Returns 1 if a connection to sa may be made; *why says why not. */
int addr_allowed(const struct sockaddr *sa, int exact, int internal, const char **why);

#endif
