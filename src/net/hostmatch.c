/* hostmatch.c - decides which hosts the egress proxy may reach: canonical
 * names, the compiled allow list and the vetting of resolved addresses. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <string.h>

#include "base/util.h"
#include "net/hostmatch.h"

/* A dotted quad in plain decimal without leading zeros: the only numeric
 * form accepted, since resolvers read the others as surprising addresses. */
static bool plain_dotted_quad(const char *s)
{
	int parts = 0;

	while (*s) {
		size_t n = strspn(s, "0123456789");
		int v = 0;
		for (size_t i = 0; i < n && i < 3; i++)
			v = v * 10 + (s[i] - '0');
		if (n == 0 || n > 3 || (n > 1 && s[0] == '0') || v > 255)
			return false;
		parts++;
		s += n;
		if (*s == '.' && s[1])
			s++;
		else if (*s)
			return false;
	}
	return parts == 4;
}

/* A last label of digits or 0x-hex makes the resolver treat the name as a
 * number (inet_aton), whatever came before. */
static bool looks_numeric(const char *s)
{
	const char *last = strrchr(s, '.');
	last = last ? last + 1 : s;
	if (last[0] == '0' && last[1] == 'x')
		return strspn(last + 2, "0123456789abcdef") == strlen(last + 2);
	return last[0] && strspn(last, "0123456789") == strlen(last);
}

static bool valid_name(const char *s)
{
	size_t len = strlen(s), label = 0;

	if (len == 0 || len > 253)
		return false;
	for (const char *p = s; ; p++) {
		if (*p == '.' || *p == 0) {
			if (label == 0 || label > 63 || p[-1] == '-' || p[-(long)label] == '-')
				return false;
			if (*p == 0)
				return true;
			label = 0;
		} else if (isalnum((unsigned char)*p) || *p == '-' || *p == '_') {
			label++;
		} else {
			return false;
		}
	}
}

static int canon_v6(const char *in, char *out, size_t size)
{
	char tmp[64];
	struct in6_addr a;
	size_t n = strlen(in);

	if (n < 3 || n - 2 >= sizeof(tmp) || in[n - 1] != ']')
		return -1;
	memcpy(tmp, in + 1, n - 2);
	tmp[n - 2] = 0;
	if (inet_pton(AF_INET6, tmp, &a) != 1 || !inet_ntop(AF_INET6, &a, out, size))
		return -1;
	return 0;
}

int hostmatch_canon(const char *in, char *out, size_t size)
{
	size_t n = strlen(in);

	if (in[0] == '[')
		return canon_v6(in, out, size);
	if (n == 0 || n >= size || n > HOSTMATCH_MAX)
		return -1;
	for (size_t i = 0; i <= n; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	if (n > 1 && out[n - 1] == '.')
		out[--n] = 0;
	if (!valid_name(out))
		return -1;
	if (looks_numeric(out) && !plain_dotted_quad(out))
		return -1;
	return 0;
}

int hostmatch_literal(const char *canon)
{
	unsigned char buf[16];
	if (inet_pton(AF_INET, canon, buf) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, canon, buf) == 1)
		return AF_INET6;
	return 0;
}

/* Splits HOST, *.HOST, HOST:PORT, [v6]:PORT into an entry. */
static int entry_parse(const char *pat, bool exact, struct hostmatch_entry *e, struct sbx_err *err)
{
	char host[HOSTMATCH_MAX + 8], canon[HOSTMATCH_MAX + 8];
	const char *p = pat, *colon;
	uint64_t port = 0;
	struct sbx_err perr;

	memset(e, 0, sizeof(*e));
	if (str_has_prefix(p, "*.")) {
		e->suffix = true;
		p += 2;
	}
	colon = p[0] == '[' ? strstr(p, "]:") : strrchr(p, ':');
	if (colon && p[0] == '[')
		colon++;
	if (colon && parse_count(colon + 1, 1, 65535, &port, &perr) < 0)
		return err_set(err, 0, "invalid port in allow entry '%s'", pat);
	size_t n = colon ? (size_t)(colon - p) : strlen(p);
	if (n >= sizeof(host))
		return err_set(err, 0, "allow entry '%s' is too long", pat);
	memcpy(host, p, n);
	host[n] = 0;
	if (hostmatch_canon(host, canon, sizeof(canon)) < 0)
		return err_set(err, 0, "invalid host in allow entry '%s'", pat);
	if (e->suffix && hostmatch_literal(canon))
		return err_set(err, 0, "allow entry '%s': '*.' needs a name", pat);
	e->host = xstrdup(canon);
	e->port = (int)port;
	e->exact = exact && !e->suffix;
	return 0;
}

static int list_add(struct hostmatch_list *l, const char *pat, bool exact, struct sbx_err *err)
{
	struct hostmatch_entry e;
	if (entry_parse(pat, exact, &e, err) < 0)
		return -1;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = e;
	return 0;
}

/* "scheme://[user@]host[:port]/path" to "host[:port]"; NULL if not a URL. */
static char *url_authority(const char *url)
{
	const char *p = strstr(url, "://");
	if (!p)
		return NULL;
	p += 3;
	size_t n = strcspn(p, "/?#");
	const char *at = memchr(p, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	return n ? strndup(p, n) : NULL;
}

static int add_one_url(struct hostmatch_list *l, const char *set, const char *url,
		       struct sbx_err *err)
{
	_cleanup_free_ char *auth = url_authority(url);
	if (!auth)
		return err_set(err, 0, "%s: cannot read a host from '%s'", set, url);
	return list_add(l, auth, false, err);
}

/* One URL, or several separated by spaces (pip's index and file host). */
static int add_url(struct hostmatch_list *l, const char *set, const char *urls, struct sbx_err *err)
{
	_cleanup_free_ char *copy = urls ? strdup(urls) : NULL;
	char *save = NULL;

	for (char *u = copy ? strtok_r(copy, " \t\n", &save) : NULL; u; u = strtok_r(NULL, " \t\n", &save))
		if (add_one_url(l, set, u, err) < 0)
			return -1;
	return 0;
}

static int add_set(struct hostmatch_list *l, const char *name, const struct hostmatch_sets *s,
		   struct sbx_err *err)
{
	if (strcmp(name, "@apt") == 0) {
		/* HOST, HOST:PORT, or a source's whole URL. */
		for (size_t i = 0; s && s->apt_hosts && s->apt_hosts[i]; i++) {
			const char *h = s->apt_hosts[i];
			if ((strstr(h, "://") ? add_url(l, "@apt", h, err) : list_add(l, h, false, err)) < 0)
				return err_wrap(err, "@apt");
		}
		return 0;
	}
	if (strcmp(name, "@npm") == 0)
		return add_url(l, "@npm", s ? s->npm_registry : NULL, err);
	if (strcmp(name, "@pypi") == 0)
		return add_url(l, "@pypi", s ? s->pypi_index : NULL, err);
	return err_set(err, 0, "unknown host set '%s'", name);
}

int hostmatch_compile(const struct sbx_strlist *allow, const struct hostmatch_sets *sets,
		      struct hostmatch_list *out, struct sbx_err *err)
{
	struct hostmatch_list l = { 0 };

	for (size_t i = 0; allow && i < allow->n; i++) {
		const char *pat = allow->v[i];
		int r = pat[0] == '@' ? add_set(&l, pat, sets, err) : list_add(&l, pat, true, err);
		if (r < 0) {
			hostmatch_free(&l);
			return -1;
		}
	}
	*out = l;
	return 0;
}

void hostmatch_free(struct hostmatch_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i].host);
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

static bool name_matches(const struct hostmatch_entry *e, const char *host)
{
	if (!e->suffix)
		return strcmp(e->host, host) == 0;
	size_t hl = strlen(host), el = strlen(e->host);
	return hl > el + 1 && host[hl - el - 1] == '.' && strcmp(host + hl - el, e->host) == 0;
}

enum hostmatch_result hostmatch_check(const struct hostmatch_list *l, const char *canon, int port,
				      struct hostmatch_grant *grant)
{
	bool internal = strcmp(canon, HOSTMATCH_INTERNAL) == 0;
	enum hostmatch_result r = HOSTMATCH_NOT_LISTED;

	memset(grant, 0, sizeof(*grant));
	for (size_t i = 0; i < l->n; i++) {
		const struct hostmatch_entry *e = &l->v[i];
		if (!name_matches(e, canon))
			continue;
		/* The host's loopback only where an exact entry names the port. */
		if (internal && (e->suffix || e->port == 0))
			continue;
		if (e->port ? e->port != port : (port != 80 && port != 443)) {
			r = HOSTMATCH_BAD_PORT;
			continue;
		}
		grant->private_ok |= e->exact;
		grant->internal = internal;
		r = HOSTMATCH_OK;
	}
	return r;
}

const char *hostmatch_result_str(enum hostmatch_result r)
{
	switch (r) {
	case HOSTMATCH_OK: return "allowed";
	case HOSTMATCH_BAD_NAME: return "not a valid host name";
	case HOSTMATCH_NOT_LISTED: return "not in";
	case HOSTMATCH_BAD_PORT: return "port not allowed for this host in";
	}
	return "?";
}

/* Masks of IPv4 ranges, in host order. */
struct v4range { uint32_t net, mask; const char *why; bool private_range; };

static const struct v4range v4ranges[] = {
	{ 0xa9fea9fe, 0xffffffff, "cloud metadata address", false },
	{ 0x00000000, 0xff000000, "unspecified address", false },
	{ 0x7f000000, 0xff000000, "loopback address", false },
	{ 0xa9fe0000, 0xffff0000, "link-local address", false },
	{ 0x64400000, 0xffc00000, "shared (CGNAT) address", false },
	{ 0xe0000000, 0xf0000000, "multicast address", false },
	{ 0xf0000000, 0xf0000000, "reserved address", false },
	{ 0x0a000000, 0xff000000, "private address", true },
	{ 0xac100000, 0xfff00000, "private address", true },
	{ 0xc0a80000, 0xffff0000, "private address", true },
};

static const char *v4_refusal(uint32_t a, const struct hostmatch_grant *g)
{
	bool loop = (a & 0xff000000) == 0x7f000000;
	if (g->internal)
		return loop ? NULL : "host.sbxrun.internal is the host's loopback only";
	for (size_t i = 0; i < ARRAY_SIZE(v4ranges); i++) {
		const struct v4range *r = &v4ranges[i];
		if ((a & r->mask) != r->net)
			continue;
		if (r->private_range && g->private_ok)
			return NULL;
		return r->private_range ? "private address (allowed only for hosts named exactly)" : r->why;
	}
	return NULL;
}

static const char *v6_refusal(const struct in6_addr *a, const struct hostmatch_grant *g)
{
	static const struct in6_addr metadata = { { { 0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x54 } } };
	const uint8_t *b = a->s6_addr;

	if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
		uint32_t v4;
		memcpy(&v4, b + 12, 4);
		return v4_refusal(ntohl(v4), g);
	}
	if (g->internal)
		return IN6_IS_ADDR_LOOPBACK(a) ? NULL : "host.sbxrun.internal is the host's loopback only";
	if (memcmp(a, &metadata, sizeof(metadata)) == 0)
		return "cloud metadata address";
	if (IN6_IS_ADDR_UNSPECIFIED(a))
		return "unspecified address";
	if (IN6_IS_ADDR_LOOPBACK(a))
		return "loopback address";
	if (IN6_IS_ADDR_LINKLOCAL(a) || IN6_IS_ADDR_SITELOCAL(a))
		return "link-local address";
	if (IN6_IS_ADDR_MULTICAST(a))
		return "multicast address";
	/* NAT64 and 6to4 embed IPv4 addresses that could be anything. */
	if ((b[0] == 0 && b[1] == 0x64 && b[2] == 0xff && b[3] == 0x9b) || (b[0] == 0x20 && b[1] == 0x02))
		return "IPv4-embedding address";
	if ((b[0] & 0xfe) == 0xfc && !g->private_ok)
		return "private address (allowed only for hosts named exactly)";
	return NULL;
}

const char *hostmatch_addr_refusal(const struct sockaddr *sa, const struct hostmatch_grant *g)
{
	if (sa->sa_family == AF_INET)
		return v4_refusal(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr), g);
	if (sa->sa_family == AF_INET6)
		return v6_refusal(&((const struct sockaddr_in6 *)sa)->sin6_addr, g);
	return "not an internet address";
}
