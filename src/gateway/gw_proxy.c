/* gw_proxy.c - the gateway's upstream fetches through the upstream proxy of
 * sbxrun's environment (https_proxy and the rest, read by net/proxy_chain.c;
 * no_proxy honoured), as many users reach the internet only that way.
 * sbxrun still looks up each upstream's name itself, off the loop
 * (net/resolver.c), and vets what it resolved as a direct fetch is vetted
 * (hostmatch_addr_refusal with the hop's grant: no loopback, private,
 * link-local or metadata address); libcurl then asks the upstream proxy for
 * a tunnel to that address (CONNECT ADDR:PORT, through CURLOPT_CONNECT_TO),
 * checks TLS against the upstream's name, and opens sockets to the upstream
 * proxy's own addresses (resolved once, at start) and to nothing else. The
 * host's loopback (host.sbxrun.internal) is never asked through it. */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "net/proxy_chain.h"
#include "net/resolver.h"

struct gw_proxy {
	struct proxy_chain chain;
	struct sbx_resolver *resolver;
	struct curl_slist *resolve;  /* the upstream proxy's name to its addresses, or NULL */
};

static void addr_text(const struct sockaddr_storage *ss, char *out, size_t size, bool brackets)
{
	char ip[INET6_ADDRSTRLEN] = "";

	if (ss->ss_family == AF_INET6) {
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, ip, sizeof(ip));
		snprintf(out, size, brackets ? "[%s]" : "%s", ip);
	} else {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, ip, sizeof(ip));
		snprintf(out, size, "%s", ip);
	}
}

/* libcurl is told the upstream proxy's addresses rather than looking its
 * name up again: the socket guard knows them (proxy_chain_is_proxy). */
static struct curl_slist *proxy_resolve(const struct proxy_chain *ch)
{
	char line[1024], a[INET6_ADDRSTRLEN + 2];
	int n;

	if (ch->addrs.n == 0 || hostaddr_literal(ch->host) || strchr(ch->host, '%'))
		return NULL;
	n = snprintf(line, sizeof(line), "%s:%s:", ch->host, ch->port);
	for (size_t i = 0; i < ch->addrs.n && n > 0 && (size_t)n < sizeof(line); i++) {
		addr_text(&ch->addrs.addr[i], a, sizeof(a), true);
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s", i ? "," : "", a);
	}
	return n > 0 && (size_t)n < sizeof(line) ? curl_slist_append(NULL, line) : NULL;
}

int gw_proxy_init(struct gw *gw, struct sbx_err *err)
{
	struct gw_proxy *up = xcalloc(1, sizeof(*up));

	if (proxy_chain_from_env(&up->chain, err) < 0) {
		free(up);
		return -1;
	}
	if (!up->chain.on) {
		free(up);
		return 0;
	}
	gw->upproxy = up;
	up->resolve = proxy_resolve(&up->chain);
	if (resolver_new(&up->resolver, err) < 0)
		return -1;
	if (gw_ep_add(gw, resolver_fd(up->resolver), EPOLLIN, GW_TAG_RESOLVE) < 0)
		return err_sys(err, "gateway: epoll");
	return 0;
}

void gw_proxy_fini(struct gw *gw)
{
	struct gw_proxy *up = gw->upproxy;

	if (!up)
		return;
	resolver_free(up->resolver);
	curl_slist_free_all(up->resolve);
	proxy_chain_free(&up->chain);
	free(up);
	gw->upproxy = NULL;
}

void gw_proxy_setup(struct gw *gw, void *curl)
{
	/* the host's CA bundle where sbxrun's environment names one (a
	 * network that intercepts TLS; what `ca = host` gives the sandbox) */
	const char *ca = getenv("SSL_CERT_FILE");

	(void)gw;
	if (ca && ca[0] == '/')
		curl_easy_setopt(curl, CURLOPT_CAINFO, ca);
	curl_easy_setopt(curl, CURLOPT_PROXY, "");  /* direct until gw_proxy_route says otherwise */
}

/* The looked-up addresses vetted; the tunnel to the first allowed one. */
static int tunnel(struct gw_proxy *up, struct gw_fetch *f, const struct resolver_result *res)
{
	const char *why = "no address";
	char a[INET6_ADDRSTRLEN + 2], to[INET6_ADDRSTRLEN + 16];
	CURL *c = f->curl;
	size_t i;

	if (res->error) {
		snprintf(f->error, sizeof(f->error), "cannot look up '%s': %s (sbxrun looks up every "
			 "upstream itself, also through an upstream proxy)", f->via_host, gai_strerror(res->error));
		return -1;
	}
	for (i = 0; i < res->n; i++)
		if (!(why = hostmatch_addr_refusal((const struct sockaddr *)&res->addr[i], &f->grant)))
			break;
	if (i == res->n) {
		snprintf(f->error, sizeof(f->error), "refused to connect: %s", why);
		return -1;
	}
	addr_text(&res->addr[i], a, sizeof(a), true);
	snprintf(to, sizeof(to), "::%s:%d", a, f->via_port);  /* any host and port of this hop */
	f->connect_to = curl_slist_append(NULL, to);
	f->via_proxy = &up->chain;
	curl_easy_setopt(c, CURLOPT_PROXY, up->chain.url);
	curl_easy_setopt(c, CURLOPT_PROXYTYPE, (long)CURLPROXY_HTTP);
	curl_easy_setopt(c, CURLOPT_NOPROXY, "");  /* no_proxy was asked here */
	curl_easy_setopt(c, CURLOPT_HTTPPROXYTUNNEL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECT_TO, f->connect_to);
	if (up->resolve)
		curl_easy_setopt(c, CURLOPT_RESOLVE, up->resolve);
	return 0;
}

int gw_proxy_route(struct gw *gw, struct gw_fetch *f, const char *host, int port)
{
	struct gw_proxy *up = gw->upproxy;
	struct resolver_result res = { 0 };
	CURL *c = f->curl;

	curl_slist_free_all(f->connect_to);
	f->connect_to = NULL;
	f->via_proxy = NULL;
	curl_easy_setopt(c, CURLOPT_CONNECT_TO, NULL);
	curl_easy_setopt(c, CURLOPT_HTTPPROXYTUNNEL, 0L);
	curl_easy_setopt(c, CURLOPT_PROXY, "");  /* the address guard must see the real peer */
	if (!up || f->grant.internal || proxy_chain_bypass(up->chain.no_proxy, host))
		return 0;
	snprintf(f->via_host, sizeof(f->via_host), "%s", host);
	f->via_port = port;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&res.addr[0];
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&res.addr[0];
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		res.n = 1;
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		res.n = 1;
	} else if (resolver_lookup(up->resolver, host, (uint64_t)(uintptr_t)f, &res) == 0) {
		f->lookup_pending = true;  /* gw_fetch_wake goes on */
		return 1;
	}
	return tunnel(up, f, &res);
}

struct gw_fetch *gw_proxy_ready(struct gw *gw)
{
	struct gw_proxy *up = gw->upproxy;
	struct resolver_result res;
	uint64_t tag;

	while (up && resolver_next(up->resolver, &tag, &res) == 1) {
		struct gw_fetch *f = gw->fetches;
		while (f && !((uint64_t)(uintptr_t)f == tag && f->lookup_pending))
			f = f->next;
		if (!f)
			continue;  /* ended while it waited (the gateway closing) */
		f->lookup_pending = false;
		tunnel(up, f, &res);
		return f;
	}
	return NULL;
}

const char *gw_proxy_socket_refusal(const struct gw_fetch *f, const struct sockaddr *sa)
{
	if (!f->via_proxy)
		return hostmatch_addr_refusal(sa, &f->grant);
	return proxy_chain_is_proxy(f->via_proxy, sa) ? NULL : "not the upstream proxy's address";
}
