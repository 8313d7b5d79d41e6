/* proxy_chain.h - the upstream proxy sbxrun's own environment names, which
 * the egress proxy must go through when the host reaches out only that way. */
#ifndef SBX_PROXY_CHAIN_H
#define SBX_PROXY_CHAIN_H

#include <stdbool.h>

#include "base/err.h"
#include "net/resolver.h"

struct proxy_chain {
	bool on;
	struct resolver_result addrs;  /* ports set */
	char *auth_header;             /* "Proxy-Authorization: ...\r\n" or NULL */
	char *url;                     /* the variable's value (libcurl reads it as this
					* file did: the gateway's fetches), credentials in it */
	char host[256], port[8];       /* as proxy_chain_parse split it */
	char *no_proxy;                /* no_proxy or NO_PROXY, or NULL */
};

/* The upstream proxy's URL the environment names (the first of the
 * variables below that is set), or NULL. */
const char *proxy_chain_env(void);
/* An upstream proxy's URL, split by libcurl's parser. */
struct proxy_chain_url {
	char host[256];  /* a name or an address; an IPv6 one bare, its zone as %ZONE */
	char port[8];    /* 1080 (curl's default for a proxy) when the URL names none */
	char *userpass;  /* "user:password" percent-decoded, or NULL without a user */
};
/* Splits url, the value of the variable name (named in the messages, the
 * credentials hidden): http:// or no scheme, a host, a port from 1 to
 * 65535. No network access. Returns 0 or -1; free with
 * proxy_chain_url_free. */
int proxy_chain_parse(const char *name, const char *url, struct proxy_chain_url *out,
		      struct sbx_err *err);
void proxy_chain_url_free(struct proxy_chain_url *u);
/* Reads https_proxy, HTTPS_PROXY, http_proxy, HTTP_PROXY (the first set)
 * and resolves it once, at start. Not set: chain->on is false. */
int proxy_chain_from_env(struct proxy_chain *chain, struct sbx_err *err);
void proxy_chain_free(struct proxy_chain *chain);
/* Whether a connection to canon (a canonical host) goes around the upstream
 * proxy, as no_proxy says (curl's reading): "*" for all; else entries
 * separated by commas, each a name that covers itself and its subdomains
 * (a leading "." or "*." and a trailing dot ignored, case ignored, any
 * ":PORT" ignored), an IP address, or an IP range ADDR/BITS. */
bool proxy_chain_bypass(const char *no_proxy, const char *canon);
/* Whether sa is one of the upstream proxy's addresses (resolved at start). */
bool proxy_chain_is_proxy(const struct proxy_chain *chain, const struct sockaddr *sa);
/* The CONNECT request for target ("host:port") into buf; its length or -1. */
int proxy_chain_request(const struct proxy_chain *chain, const char *target, char *buf, size_t size);
/* Looks at the upstream proxy's answer: 1 when a 200 head is complete (its
 * length in *head_len), 0 when more is needed, -1 when it refused. */
int proxy_chain_answer(const char *buf, size_t len, size_t *head_len);

#endif
