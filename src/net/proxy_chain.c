/* proxy_chain.c - chaining the egress proxy through the upstream HTTP proxy
 * named in sbxrun's own environment (a corporate network): each allowed
 * connection becomes a CONNECT to it. Only http:// proxies; Basic auth from
 * the URL's userinfo. Resolved once at start, so the loop never blocks. */
#define _GNU_SOURCE
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "net/proxy_chain.h"

const char *proxy_chain_env(void)
{
	static const char *const names[] = { "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		const char *v = getenv(names[i]);
		if (v && *v)
			return v;
	}
	return NULL;
}

static void set_auth(struct proxy_chain *chain, const char *user, size_t n)
{
	unsigned char *b64 = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock(b64, (const unsigned char *)user, (int)n);
	chain->auth_header = xasprintf("Proxy-Authorization: Basic %s\r\n", b64);
	free(b64);
}

static int resolve(struct proxy_chain *chain, const char *host, const char *port, struct sbx_err *err)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	int e = getaddrinfo(host, port, &hints, &ai);

	if (e)
		return err_set(err, 0, "upstream proxy '%s': %s", host, gai_strerror(e));
	for (struct addrinfo *a = ai; a && chain->addrs.n < RESOLVER_MAX_ADDRS; a = a->ai_next)
		if (a->ai_addrlen <= sizeof(chain->addrs.addr[0]))
			memcpy(&chain->addrs.addr[chain->addrs.n++], a->ai_addr, a->ai_addrlen);
	freeaddrinfo(ai);
	return 0;
}

int proxy_chain_from_env(struct proxy_chain *chain, struct sbx_err *err)
{
	const char *url = proxy_chain_env(), *p, *at, *colon;
	char host[256], port[8] = "1080";  /* curl's default for a proxy */
	size_t n;

	memset(chain, 0, sizeof(*chain));
	if (!url)
		return 0;
	p = strstr(url, "://");
	if (p && strncasecmp(url, "http://", 7) != 0)
		return err_set(err, 0, "upstream proxy '%s': only http:// proxies can be chained", url);
	p = p ? p + 3 : url;
	n = strcspn(p, "/");
	at = memchr(p, '@', n);
	if (at) {
		set_auth(chain, p, (size_t)(at - p));
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	colon = p[0] == '[' ? memchr(p, ']', n) : p;
	colon = colon ? memchr(colon, ':', n - (size_t)(colon - p)) : NULL;
	size_t hl = colon ? (size_t)(colon - p) : n;
	if (hl == 0 || hl >= sizeof(host) || (colon && (n - hl - 1 == 0 || n - hl - 1 >= sizeof(port))))
		return err_set(err, 0, "upstream proxy: cannot read '%s'", url);
	memcpy(host, p[0] == '[' ? p + 1 : p, p[0] == '[' ? hl - 2 : hl);
	host[p[0] == '[' ? hl - 2 : hl] = 0;
	if (colon) {
		memcpy(port, colon + 1, n - hl - 1);
		port[n - hl - 1] = 0;
	}
	if (resolve(chain, host, port, err) < 0)
		return -1;
	chain->on = true;
	return 0;
}

void proxy_chain_free(struct proxy_chain *chain)
{
	free(chain->auth_header);
	memset(chain, 0, sizeof(*chain));
}

int proxy_chain_request(const struct proxy_chain *chain, const char *target, char *buf, size_t size)
{
	int n = snprintf(buf, size, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n%s\r\n", target, target,
			 chain->auth_header ? chain->auth_header : "");
	return n < 0 || (size_t)n >= size ? -1 : n;
}

int proxy_chain_answer(const char *buf, size_t len, size_t *head_len)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);

	if (len >= 12 && (strncmp(buf, "HTTP/1.", 7) != 0 || strncmp(buf + 8, " 200", 4) != 0))
		return -1;
	if (!end)
		return 0;
	if (len < 12)
		return -1;
	*head_len = (size_t)(end - buf) + 4;
	return 1;
}
