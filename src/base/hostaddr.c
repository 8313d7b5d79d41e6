/* hostaddr.c - what a host name or address is: the canonical form of a name
 * from a request or a profile, and the classes of addresses (loopback,
 * private, link-local, metadata) that egress refuses. Shared by the egress
 * proxy (net/) and the image store (store/), which must not let an image's
 * package sources name what only the person running sbxrun may grant. */
#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "base/hostaddr.h"
#include "base/util.h"

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
	if (inet_pton(AF_INET6, tmp, &a) != 1)
		return -1;
	/* one spelling per address: an IPv4-mapped one is its IPv4 address */
	if (IN6_IS_ADDR_V4MAPPED(&a))
		return inet_ntop(AF_INET, a.s6_addr + 12, out, (socklen_t)size) ? 0 : -1;
	return inet_ntop(AF_INET6, &a, out, (socklen_t)size) ? 0 : -1;
}

int hostaddr_canon(const char *in, char *out, size_t size)
{
	size_t n = strlen(in);

	if (in[0] == '[')
		return canon_v6(in, out, size);
	if (n == 0 || n >= size || n > HOSTADDR_MAX)
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

int hostaddr_literal(const char *canon)
{
	unsigned char buf[16];
	if (inet_pton(AF_INET, canon, buf) == 1)
		return AF_INET;
	if (inet_pton(AF_INET6, canon, buf) == 1)
		return AF_INET6;
	return 0;
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

static const char *v4_refusal(uint32_t a, const struct hostaddr_grant *g)
{
	bool loop = (a & 0xff000000) == 0x7f000000;
	if (g->internal)
		return loop ? NULL : HOSTADDR_INTERNAL " is the host's loopback only";
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

static const char *v6_refusal(const struct in6_addr *a, const struct hostaddr_grant *g)
{
	static const struct in6_addr metadata = { { { 0xfd, 0, 0x0e, 0xc2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0x54 } } };
	const uint8_t *b = a->s6_addr;

	if (IN6_IS_ADDR_V4MAPPED(a) || IN6_IS_ADDR_V4COMPAT(a)) {
		uint32_t v4;
		memcpy(&v4, b + 12, 4);
		return v4_refusal(ntohl(v4), g);
	}
	if (g->internal)
		return IN6_IS_ADDR_LOOPBACK(a) ? NULL : HOSTADDR_INTERNAL " is the host's loopback only";
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

const char *hostaddr_refusal(const struct sockaddr *sa, const struct hostaddr_grant *g)
{
	if (sa->sa_family == AF_INET)
		return v4_refusal(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr), g);
	if (sa->sa_family == AF_INET6)
		return v6_refusal(&((const struct sockaddr_in6 *)sa)->sin6_addr, g);
	return "not an internet address";
}

/* "scheme://[user@]host[:port]/path", "HOST:PORT", "[v6]:PORT" or "HOST" to
 * the canonical host; -1 if none can be read. */
static int entry_host(const char *entry, char *out, size_t size)
{
	const char *p = strstr(entry, "://");
	char host[HOSTADDR_MAX + 8];

	p = p ? p + 3 : entry;
	size_t n = strcspn(p, "/?#");
	const char *at = memchr(p, '@', n);
	if (at) {
		n -= (size_t)(at + 1 - p);
		p = at + 1;
	}
	if (n >= sizeof(host))
		return -1;
	memcpy(host, p, n);
	host[n] = 0;
	char *colon = host[0] == '[' ? strstr(host, "]:") : strrchr(host, ':');
	if (colon)
		colon[host[0] == '[' ? 1 : 0] = 0;
	return hostaddr_canon(host, out, size);
}

static bool has_suffix_label(const char *host, const char *name)
{
	size_t hl = strlen(host), nl = strlen(name);
	return strcmp(host, name) == 0 || (hl > nl && host[hl - nl - 1] == '.' && strcmp(host + hl - nl, name) == 0);
}

const char *hostaddr_internal_refusal(const char *canon, bool suffix, unsigned port)
{
	bool exact = strcmp(canon, HOSTADDR_INTERNAL) == 0;

	/* *.DOMAIN covers the subdomains of DOMAIN only */
	if (suffix ? exact || !has_suffix_label(HOSTADDR_INTERNAL, canon) : !exact)
		return NULL;
	if (suffix)
		return HOSTADDR_INTERNAL " is reached only by its own name with its port, never by *.DOMAIN";
	return port ? NULL : HOSTADDR_INTERNAL " needs its port (" HOSTADDR_INTERNAL ":PORT)";
}

const char *hostaddr_image_refusal(const char *entry)
{
	static const struct hostaddr_grant none = { false, false };
	char canon[HOSTADDR_MAX + 8];
	unsigned char buf[16];

	if (entry_host(entry, canon, sizeof(canon)) < 0)
		return "not a plain host name or address";
	if (has_suffix_label(canon, "sbxrun.internal"))
		return "a name reserved by sbxrun (the host's own services)";
	if (has_suffix_label(canon, "localhost"))
		return "the host's loopback";
	const char *why = NULL;
	if (inet_pton(AF_INET, canon, buf) == 1) {
		uint32_t v4;
		memcpy(&v4, buf, 4);
		why = v4_refusal(ntohl(v4), &none);
	} else if (inet_pton(AF_INET6, canon, buf) == 1) {
		why = v6_refusal((const struct in6_addr *)buf, &none);
	}
	/* the profile's exception for hosts named exactly is not the image's */
	return why && str_has_prefix(why, "private address") ? "private address" : why;
}
