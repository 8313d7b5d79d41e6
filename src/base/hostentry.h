/* hostentry.h - one host entry (HOST, *.DOMAIN, HOST:PORT, [v6]:PORT), read
 * once into its canonical form, and the one comparison every decision about
 * hosts makes: the allow list (net/hostmatch.c), the policy's ceiling
 * (base/policy.c) and, under package rules, the hosts the package gateway
 * alone may reach (net/netplan.c). Two comparisons that differ would let a
 * second spelling of a host through one of them (docs/security.md). */
#ifndef SBX_HOSTENTRY_H
#define SBX_HOSTENTRY_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"
#include "base/hostaddr.h"

/* An entry's port: one, none named (80 and 443, what a proxy serves), or
 * every port (only the hosts kept to the gateway; no entry's text says it). */
#define HOSTENTRY_DEFAULT_PORTS 0u
#define HOSTENTRY_ANY_PORT 65536u

struct hostentry {
	char host[HOSTADDR_MAX + 8]; /* canonical (hostaddr_canon), without "*." */
	unsigned port;               /* 1-65535, HOSTENTRY_DEFAULT_PORTS or _ANY_PORT */
	bool suffix;                 /* *.DOMAIN: the subdomains of DOMAIN, not itself */
};

/* Reads HOST, *.DOMAIN, HOST:PORT or [v6][:PORT]: the name lowercased,
 * without its trailing dot, an IPv6 literal compressed (an IPv4-mapped one
 * as its IPv4 address), numeric spellings other than a dotted quad
 * (2130706433, 0x7f.1, 127.1) refused, a port from 1 to 65535. Returns 0, or
 * -1 with err naming s and what is wrong with it. */
int hostentry_parse(const char *s, struct hostentry *e, struct sbx_err *err);
/* The canonical text of e (what hostentry_parse reads back to e):
 * "*.example.org", "mirror.example.org:8080", "[2001:db8::1]:443". */
void hostentry_format(const struct hostentry *e, char *out, size_t size);
/* Whether every host and port narrow lets through, wide lets through too:
 * *.DOMAIN covers its subdomains and narrower *.SUB.DOMAIN entries, never
 * DOMAIN itself nor an IP literal; an entry without a port covers 80 and
 * 443 (and an entry naming either). */
bool hostentry_covers(const struct hostentry *wide, const struct hostentry *narrow);
/* Whether e lets canon (a canonical host, hostaddr_canon) on port through:
 * hostentry_covers with the host and port as the narrow entry. */
bool hostentry_allows(const struct hostentry *e, const char *canon, unsigned port);

#endif
