/* hostmatch.h - host names, the egress allow list and address vetting. */
#ifndef SBX_HOSTMATCH_H
#define SBX_HOSTMATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

#include "base/config.h"
#include "base/err.h"
#include "base/hostentry.h"

#define HOSTMATCH_INTERNAL "host.sbxrun.internal"
#define HOSTMATCH_MAX 256

/* The image's package sources, expanding @apt, @npm, @pypi, @go, @cargo
 * and @maven (struct sbx_image's, read at import). */
struct hostmatch_sets {
	const char *const *apt_hosts; /* NULL-terminated HOST or HOST:PORT */
	const char *npm_registry;     /* a URL or NULL */
	const char *pypi_index;       /* a URL or NULL */
	const char *go_proxy;         /* a URL or NULL (@go, with go_sumdb's URL) */
	const char *go_sumdb;         /* "NAME+HASH+KEY URL" or NULL */
	const char *cargo_index;      /* a URL ("sparse+https://...") or NULL */
	const char *maven_repo;       /* a URL or NULL */
	bool apt_http_only;           /* @apt's hosts on port 80 alone (no tunnel) */
};

struct hostmatch_entry {
	struct hostentry e;  /* canonical: base/hostentry.h, the one comparison */
	bool exact;          /* named exactly in the profile (private addresses ok) */
};

struct hostmatch_list {
	struct hostmatch_entry *v;
	size_t n;
	/* Under package rules, the hosts the package gateway alone reaches
	 * (every port): hostmatch_check says HOSTMATCH_GATEWAY_ONLY for them,
	 * whatever entry of v lets them through (hostmatch_withhold). */
	struct hostentry *withheld;
	size_t nwithheld;
};

enum hostmatch_result {
	HOSTMATCH_OK,
	HOSTMATCH_BAD_NAME,    /* not a name, nor a plain IP literal */
	HOSTMATCH_NOT_LISTED,
	HOSTMATCH_BAD_PORT,    /* listed, but not on this port */
	HOSTMATCH_GATEWAY_ONLY, /* listed, but kept to the package gateway (its upstream) */
};

/* What a match allows after resolution. */
struct hostmatch_grant {
	bool private_ok;  /* named exactly: a lab mirror may be private */
	bool internal;    /* host.sbxrun.internal: the host's loopback */
};

/* Canonicalises a host from a request: lowercase, one trailing dot dropped,
 * "[v6]" to its compressed form without brackets. Numeric IPv4 forms other
 * than a plain dotted quad (2130706433, 0x7f.1, 0177.0.0.1, 127.1) are
 * neither names nor addresses and are refused. Returns 0 or -1. */
int hostmatch_canon(const char *in, char *out, size_t size);
/* Whether a canonical host is an IP literal (AF_INET, AF_INET6) or 0. */
int hostmatch_literal(const char *canon);

int hostmatch_compile(const struct sbx_strlist *allow, const struct hostmatch_sets *sets,
		      struct hostmatch_list *out, struct sbx_err *err);
/* Keeps the hosts of entries (HOST[:PORT], a URL, or @apt, @npm, @pypi
 * expanded from sets) to the package gateway: on every port, whatever
 * spelling, port or *.DOMAIN entry of l lets them through. */
int hostmatch_withhold(struct hostmatch_list *l, const struct sbx_strlist *entries,
		       const struct hostmatch_sets *sets, struct sbx_err *err);
void hostmatch_free(struct hostmatch_list *l);
void hostmatch_copy(const struct hostmatch_list *from, struct hostmatch_list *to);
enum hostmatch_result hostmatch_check(const struct hostmatch_list *l, const char *canon, int port,
				      struct hostmatch_grant *grant);
const char *hostmatch_result_str(enum hostmatch_result r);

/* Vets a resolved address: NULL if it may be dialled, else why not. */
const char *hostmatch_addr_refusal(const struct sockaddr *sa, const struct hostmatch_grant *g);

#endif
