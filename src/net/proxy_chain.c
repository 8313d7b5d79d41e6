/* proxy_chain.c - chaining the egress proxy through the upstream HTTP proxy
 * named in sbxrun's own environment (a corporate network): each allowed
 * connection becomes a CONNECT to it. Only http:// proxies; Basic auth from
 * the URL's userinfo. The URL is split by libcurl's parser (CURLU, loaded
 * lazily like the rest of libcurl, base/lazylib.c), as dlurl.c splits a
 * download's. Resolved once at start, so the loop never blocks. */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "net/proxy_chain.h"

#define DEFAULT_PORT "1080"  /* curl's default for a proxy */

static const char *const env_names[] = { "https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY" };

static const char *env_pick(const char **name)
{
	for (size_t i = 0; i < ARRAY_SIZE(env_names); i++) {
		const char *v = getenv(env_names[i]);
		if (v && *v) {
			*name = env_names[i];
			return v;
		}
	}
	return NULL;
}

const char *proxy_chain_env(void)
{
	const char *name;
	return env_pick(&name);
}

/* The URL as a message shows it: any credentials hidden. */
static void shown(const char *url, char *buf, size_t size)
{
	const char *s = strstr(url, "://"), *at = strrchr(url, '@');

	s = s ? s + 3 : url;
	if (at && at >= s)
		snprintf(buf, size, "%.*s***%s", (int)(s - url), url, at);
	else
		snprintf(buf, size, "%s", url);
}

/* A part of u, or NULL when it has none; -1 when it cannot be read. */
static int part(CURLU *u, CURLUPart what, unsigned flags, CURLUcode none, char **out)
{
	CURLUcode rc = curl_url_get(u, what, out, flags);

	if (rc == none) {
		*out = NULL;
		return 0;
	}
	return rc == CURLUE_OK ? 0 : -1;
}

static void secret_free(char *s)
{
	if (s) {
		explicit_bzero(s, strlen(s));
		curl_free(s);
	}
}

/* Basic credentials, percent-decoded as curl decodes them (a control
 * character refused): "user:password", or NULL without a user. */
static int credentials(CURLU *u, struct proxy_chain_url *out)
{
	char *user = NULL, *pw = NULL;
	int r = -1;

	if (part(u, CURLUPART_USER, CURLU_URLDECODE, CURLUE_NO_USER, &user) == 0 &&
	    part(u, CURLUPART_PASSWORD, CURLU_URLDECODE, CURLUE_NO_PASSWORD, &pw) == 0) {
		if (user)
			out->userpass = xasprintf("%s:%s", user, pw ? pw : "");
		r = 0;
	}
	secret_free(user);
	secret_free(pw);
	return r;
}

/* Host (brackets off an IPv6 literal, its zone as %ZONE for getaddrinfo)
 * and port, 1080 when the URL names none. */
static int host_port(CURLU *u, struct proxy_chain_url *out, const char **why)
{
	char *host = NULL, *zone = NULL, *port = NULL;
	uint64_t p;
	struct sbx_err perr;
	int r = -1;

	if (part(u, CURLUPART_HOST, 0, CURLUE_NO_HOST, &host) < 0 || !host || !host[0]) {
		*why = "no host";
	} else if (part(u, CURLUPART_ZONEID, 0, CURLUE_NO_ZONEID, &zone) < 0 ||
		   part(u, CURLUPART_PORT, 0, CURLUE_NO_PORT, &port) < 0 ||
		   (port && parse_count(port, 1, 65535, &p, &perr) < 0)) {
		*why = "the port is not a number from 1 to 65535";
	} else {
		size_t n = strlen(host);
		bool v6 = host[0] == '[' && n > 2 && host[n - 1] == ']';
		int len = snprintf(out->host, sizeof(out->host), "%.*s%s%s", (int)(v6 ? n - 2 : n),
				   host + v6, zone ? "%" : "", zone ? zone : "");
		snprintf(out->port, sizeof(out->port), "%s", port ? port : DEFAULT_PORT);
		*why = "the host name is too long";
		r = len > 0 && (size_t)len < sizeof(out->host) ? 0 : -1;
	}
	curl_free(host);
	curl_free(zone);
	curl_free(port);
	return r;
}

int proxy_chain_parse(const char *name, const char *url, struct proxy_chain_url *out,
		      struct sbx_err *err)
{
	/* no scheme: http, as curl takes a proxy's */
	_cleanup_free_ char *full = strstr(url, "://") ? xstrdup(url) : xasprintf("http://%s", url);
	CURLU *u = curl_url();
	char *scheme = NULL, show[512];
	const char *why = NULL;
	CURLUcode rc;

	memset(out, 0, sizeof(*out));
	if (!u)
		return err_set(err, 0, "out of memory");
	rc = curl_url_set(u, CURLUPART_URL, full, CURLU_NON_SUPPORT_SCHEME);
	if (rc != CURLUE_OK || curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK)
		why = rc == CURLUE_BAD_PORT_NUMBER ? "the port is not a number from 1 to 65535"
		    : rc == CURLUE_NO_HOST ? "no host" : "not a URL";
	else if (strcmp(scheme, "http") != 0)
		why = "only http:// proxies can be chained";
	else if (host_port(u, out, &why) == 0)
		why = credentials(u, out) < 0 ? "the user name or password is not valid (a control character?)"
					      : NULL;
	curl_free(scheme);
	curl_url_cleanup(u);
	explicit_bzero(full, strlen(full));
	if (!why)
		return 0;
	proxy_chain_url_free(out);
	shown(url, show, sizeof(show));
	return err_set(err, 0, "upstream proxy %s='%s': %s", name, show, why);
}

void proxy_chain_url_free(struct proxy_chain_url *u)
{
	if (u->userpass) {
		explicit_bzero(u->userpass, strlen(u->userpass));
		free(u->userpass);
	}
	memset(u, 0, sizeof(*u));
}

static void set_auth(struct proxy_chain *chain, const char *userpass)
{
	size_t n = strlen(userpass);
	unsigned char *b64 = xmalloc(4 * ((n + 2) / 3) + 1);
	EVP_EncodeBlock(b64, (const unsigned char *)userpass, (int)n);
	chain->auth_header = xasprintf("Proxy-Authorization: Basic %s\r\n", b64);
	explicit_bzero(b64, strlen((char *)b64));
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
	const char *name = NULL, *url = env_pick(&name), *np = getenv("no_proxy");
	struct proxy_chain_url u;

	memset(chain, 0, sizeof(*chain));
	if (!url)
		return 0;
	if (proxy_chain_parse(name, url, &u, err) < 0)
		return -1;
	if (u.userpass)
		set_auth(chain, u.userpass);
	chain->url = xstrdup(url);
	snprintf(chain->host, sizeof(chain->host), "%s", u.host);
	snprintf(chain->port, sizeof(chain->port), "%s", u.port);
	if (!np || !*np)
		np = getenv("NO_PROXY");
	chain->no_proxy = np && *np ? xstrdup(np) : NULL;
	int r = resolve(chain, u.host, u.port, err);
	proxy_chain_url_free(&u);
	if (r < 0) {
		proxy_chain_free(chain);
		return -1;
	}
	chain->on = true;
	return 0;
}

void proxy_chain_free(struct proxy_chain *chain)
{
	free(chain->auth_header);
	if (chain->url)
		explicit_bzero(chain->url, strlen(chain->url));
	free(chain->url);
	free(chain->no_proxy);
	memset(chain, 0, sizeof(*chain));
}

/* An address or a range ADDR/BITS of no_proxy against an IP literal. */
static bool addr_in(const char *entry, const char *canon)
{
	unsigned char want[16], have[16];
	char addr[64];
	const char *slash = strchr(entry, '/');
	size_t n = slash ? (size_t)(slash - entry) : strlen(entry);
	int fam = strchr(canon, ':') ? AF_INET6 : AF_INET, len = fam == AF_INET ? 32 : 128;
	uint64_t bits = (uint64_t)len;
	struct sbx_err e;

	if (n && entry[0] == '[' && entry[n - 1] == ']')
		entry++, n -= 2;
	if (n >= sizeof(addr))
		return false;
	snprintf(addr, sizeof(addr), "%.*s", (int)n, entry);
	if (inet_pton(fam, addr, want) != 1 || inet_pton(fam, canon, have) != 1 ||
	    (slash && parse_count(slash + 1, 0, (uint64_t)len, &bits, &e) < 0))
		return false;
	for (int i = 0; i < (int)bits; i++)
		if ((want[i / 8] ^ have[i / 8]) & (0x80 >> (i % 8)))
			return false;
	return true;
}

/* One no_proxy entry, trimmed, against canon. */
static bool entry_covers(const char *entry, size_t n, const char *canon, bool literal)
{
	char e[300];
	size_t cl = strlen(canon), el;

	if (n == 0 || n >= sizeof(e))
		return false;
	snprintf(e, sizeof(e), "%.*s", (int)n, entry);
	if (literal)
		return addr_in(e, canon);
	char *colon = strrchr(e, ':');  /* a name's port: curl ignores it too */
	if (colon)
		*colon = '\0';
	char *name = e + (str_has_prefix(e, "*.") ? 2 : e[0] == '.' ? 1 : 0);
	el = strlen(name);
	if (el && name[el - 1] == '.')
		name[--el] = '\0';
	if (el == 0 || el > cl)
		return false;
	return strcasecmp(canon + cl - el, name) == 0 && (cl == el || canon[cl - el - 1] == '.');
}

bool proxy_chain_bypass(const char *no_proxy, const char *canon)
{
	bool literal = strchr(canon, ':') || strspn(canon, "0123456789.") == strlen(canon);

	if (!no_proxy)
		return false;
	for (const char *p = no_proxy; *p;) {
		p += strspn(p, ", \t");
		size_t n = strcspn(p, ", \t");
		if (n == 1 && *p == '*')
			return true;
		if (entry_covers(p, n, canon, literal))
			return true;
		p += n;
	}
	return false;
}

bool proxy_chain_is_proxy(const struct proxy_chain *chain, const struct sockaddr *sa)
{
	for (size_t i = 0; i < chain->addrs.n; i++) {
		const struct sockaddr *a = (const struct sockaddr *)&chain->addrs.addr[i];
		if (a->sa_family != sa->sa_family)
			continue;
		if (sa->sa_family == AF_INET) {
			const struct sockaddr_in *x = (const void *)a, *y = (const void *)sa;
			if (x->sin_port == y->sin_port && x->sin_addr.s_addr == y->sin_addr.s_addr)
				return true;
		} else if (sa->sa_family == AF_INET6) {
			const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)sa;
			if (x->sin6_port == y->sin6_port && memcmp(&x->sin6_addr, &y->sin6_addr, 16) == 0)
				return true;
		}
	}
	return false;
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
