/* hostmatch.c - see hostmatch.h. Names are checked before any DNS lookup;
 * addresses after, so that an allowed name resolving to loopback or a cloud
 * metadata address is still refused. */
#define _GNU_SOURCE
#include "hostmatch.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

/* A strict dotted quad: four decimal parts 0-255 without leading zeros. */
static int dotted_quad(const char *s)
{
	int parts = 0;
	for (;;) {
		if (!isdigit((unsigned char)*s) || (s[0] == '0' && isdigit((unsigned char)s[1])))
			return 0;
		int v = 0, n = 0;
		for (; isdigit((unsigned char)*s) && n < 4; s++, n++)
			v = v * 10 + (*s - '0');
		if (n > 3 || v > 255)
			return 0;
		parts++;
		if (*s == '\0')
			return parts == 4;
		if (*s != '.' || parts == 4)
			return 0;
		s++;
	}
}

/* All labels numeric (or hex): a form inet_aton would take as an address. */
static int looks_numeric(const char *s)
{
	struct in_addr a;
	if (inet_aton(s, &a))
		return 1;
	return s[0] && strspn(s, "0123456789.") == strlen(s);
}

int host_canon(const char *in, char *out, size_t size, struct sbx_err *err)
{
	size_t n = strlen(in);
	struct in6_addr v6;

	if (n && in[n - 1] == '.')
		n--;
	if (n == 0 || n >= size || n > 253)
		return err_set(err, 0, "bad host name");
	for (size_t i = 0; i < n; i++)
		out[i] = (char)tolower((unsigned char)in[i]);
	out[n] = '\0';
	if (strchr(out, ':')) {
		if (inet_pton(AF_INET6, out, &v6) != 1)
			return err_set(err, 0, "'%s' is not an IPv6 address", out);
		return 0;
	}
	if (looks_numeric(out) && !dotted_quad(out))
		return err_set(err, 0, "'%s': numeric host forms other than a dotted quad are refused", out);
	if (strspn(out, "abcdefghijklmnopqrstuvwxyz0123456789.-_") != n || strstr(out, "..") ||
	    out[0] == '.' || out[0] == '-' || out[n - 1] == '.')
		return err_set(err, 0, "'%s' is not a host name", out);
	return 0;
}

static void add(struct sbx_allow *a, const char *host, int suffix, int port, int exact)
{
	a->e = xrealloc(a->e, (a->n + 1) * sizeof(*a->e));
	struct sbx_allow_entry *e = &a->e[a->n++];
	snprintf(e->host, sizeof(e->host), "%s", host);
	e->suffix = suffix;
	e->port = port;
	e->exact = exact;
}

/* "HOST", "HOST:PORT", "*.SUFFIX", "[V6]:PORT" or a URL (for sets). */
static void add_pattern(struct sbx_allow *a, const char *pat, int from_set)
{
	char buf[512], host[300];
	const char *p = pat, *colon;
	int port = 0, suffix = 0;

	if (strstr(p, "://")) {
		p = strstr(p, "://") + 3;
		snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(p, "/?#"), p);
		p = buf;
		if (strchr(p, '@'))
			p = strrchr(p, '@') + 1;
	}
	if (!strncmp(p, "*.", 2)) {
		suffix = 1;
		p += 2;
	}
	if (*p == '[') {
		const char *end = strchr(p, ']');
		if (!end)
			return;
		snprintf(host, sizeof(host), "%.*s", (int)(end - p - 1), p + 1);
		colon = end[1] == ':' ? end + 1 : NULL;
	} else {
		colon = strchr(p, ':');
		snprintf(host, sizeof(host), "%.*s", colon ? (int)(colon - p) : (int)strlen(p), p);
	}
	if (colon)
		port = atoi(colon + 1);
	char canon[256];
	struct sbx_err e;
	if (host_canon(host, canon, sizeof(canon), &e) == 0)
		add(a, canon, suffix, port, !suffix && !from_set);
}

int allow_compile(const struct sbx_strlist *list, const struct sbx_sets *sets, struct sbx_allow *out,
		  struct sbx_err *err)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; list && i < list->n; i++) {
		const char *v = list->v[i];
		char *const *set = !strcmp(v, "@apt") ? sets->apt : !strcmp(v, "@npm") ? sets->npm
				 : !strcmp(v, "@pypi") ? sets->pypi : NULL;
		if (v[0] == '@') {
			for (; set && *set; set++)
				if (**set)
					add_pattern(out, *set, 1);
			continue;
		}
		if (host_pattern_check(v, err) < 0)
			return -1;
		add_pattern(out, v, 0);
	}
	return 0;
}

void allow_free(struct sbx_allow *a)
{
	free(a->e);
	memset(a, 0, sizeof(*a));
}

int allow_match(const struct sbx_allow *a, const char *host, int port, int *exact, int *internal)
{
	int ok = 0;

	*exact = *internal = 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct sbx_allow_entry *e = &a->e[i];
		int is_internal = !strcmp(e->host, SBX_HOST_INTERNAL);
		if (is_internal ? port != e->port || !e->port
				: e->port ? port != e->port : port != 80 && port != 443)
			continue;
		if (e->suffix) {
			size_t hl = strlen(host), sl = strlen(e->host);
			if (hl > sl + 1 && host[hl - sl - 1] == '.' && !strcmp(host + hl - sl, e->host))
				ok = 1;
		} else if (!strcmp(e->host, host)) {
			ok = 1;
			*exact |= e->exact;
			*internal |= is_internal;
		}
	}
	return ok;
}

/* -1: never; 0: only for hosts named exactly (private); 1: public. */
static int v4_class(uint32_t a, const char **why)
{
	static const struct { uint32_t net, mask; const char *why; } bad[] = {
		{ 0x7f000000, 0xff000000, "loopback" },   { 0x00000000, 0xff000000, "unspecified" },
		{ 0xa9fe0000, 0xffff0000, "link-local or cloud metadata" },
		{ 0xe0000000, 0xf0000000, "multicast" },  { 0xf0000000, 0xf0000000, "reserved" },
		{ 0x64400000, 0xffc00000, "carrier-grade NAT" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		if ((a & bad[i].mask) == bad[i].net)
			return *why = bad[i].why, -1;
	if ((a & 0xff000000) == 0x0a000000 || (a & 0xfff00000) == 0xac100000 ||
	    (a & 0xffff0000) == 0xc0a80000)
		return *why = "private (allowed only for a host the profile names exactly)", 0;
	return 1;
}

static int v6_class(const struct in6_addr *v6, const char **why)
{
	static const unsigned char metadata[16] = { 0xfd, 0x00, 0x0e, 0xc2, [15] = 0x54, [14] = 0x02 };
	if (IN6_IS_ADDR_LOOPBACK(v6) || IN6_IS_ADDR_UNSPECIFIED(v6))
		return *why = "loopback or unspecified", -1;
	if (IN6_IS_ADDR_LINKLOCAL(v6) || IN6_IS_ADDR_MULTICAST(v6) || !memcmp(v6, metadata, 16))
		return *why = "link-local, multicast or cloud metadata", -1;
	if ((v6->s6_addr[0] & 0xfe) == 0xfc)
		return *why = "private (allowed only for a host the profile names exactly)", 0;
	return 1;
}

int addr_allowed(const struct sockaddr *sa, int exact, int internal, const char **why)
{
	uint32_t a;
	int c;

	if (sa->sa_family == AF_INET6) {
		const struct in6_addr *v6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (!IN6_IS_ADDR_V4MAPPED(v6) && !IN6_IS_ADDR_V4COMPAT(v6)) {
			if (internal && IN6_IS_ADDR_LOOPBACK(v6))
				return 1;
			c = v6_class(v6, why);
			return c > 0 || (c == 0 && exact);
		}
		memcpy(&a, &v6->s6_addr[12], 4);
	} else if (sa->sa_family == AF_INET) {
		a = ((const struct sockaddr_in *)sa)->sin_addr.s_addr;
	} else {
		return *why = "not an IP address", 0;
	}
	a = ntohl(a);
	if (internal)
		return (a & 0xff000000) == 0x7f000000 ? 1 : (*why = "not loopback", 0);
	c = v4_class(a, why);
	return c > 0 || (c == 0 && exact);
}
