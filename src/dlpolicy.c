/* dlpolicy.c - see dlpolicy.h. */
#define _GNU_SOURCE
#include "dlpolicy.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int match_one(const char *pat, const char *host, int port, int *exact)
{
	char h[300];
	const char *colon = strrchr(pat, ':');
	int pport = 0;

	if (pat[0] == '@')
		return 0;
	if (colon && pat[0] != '[') {
		pport = atoi(colon + 1);
		snprintf(h, sizeof(h), "%.*s", (int)(colon - pat), pat);
	} else {
		snprintf(h, sizeof(h), "%s", pat);
	}
	if (pport ? port != pport : (port != 80 && port != 443))
		return 0;
	if (strncmp(h, "*.", 2) == 0) {
		size_t hl = strlen(host), sl = strlen(h + 1);
		return hl > sl && strcasecmp(host + hl - sl, h + 1) == 0;
	}
	if (strcasecmp(h, host) != 0)
		return 0;
	*exact = 1;
	return 1;
}

int dlpolicy_host_allowed(const struct sbx_strlist *allow, const char *host, int port, int *exact)
{
	*exact = 0;
	for (size_t i = 0; i < allow->n; i++)
		if (match_one(allow->v[i], host, port, exact))
			return 1;
	return 0;
}

static int v4_class(uint32_t a, const char **why)
{
	struct { uint32_t net, mask; const char *why; } bad[] = {
		{ 0x7f000000, 0xff000000, "loopback" },   { 0x00000000, 0xff000000, "unspecified" },
		{ 0xa9fe0000, 0xffff0000, "link-local or metadata" },
		{ 0xe0000000, 0xf0000000, "multicast" },  { 0x64400000, 0xffc00000, "carrier-grade NAT" },
		{ 0xffffffff, 0xffffffff, "broadcast" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if ((a & bad[i].mask) == bad[i].net)
			return *why = bad[i].why, -1;
	if ((a & 0xff000000) == 0x0a000000 || (a & 0xfff00000) == 0xac100000 ||
	    (a & 0xffff0000) == 0xc0a80000)
		return *why = "private", 0;
	return 1;
}

int dlpolicy_addr_allowed(const struct sockaddr *sa, int exact, int internal, const char **why)
{
	uint32_t a;
	int c;

	if (sa->sa_family == AF_INET) {
		a = ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr);
	} else if (sa->sa_family == AF_INET6) {
		const struct in6_addr *v6 = &((const struct sockaddr_in6 *)sa)->sin6_addr;
		if (IN6_IS_ADDR_V4MAPPED(v6)) {
			memcpy(&a, &v6->s6_addr[12], 4);
			a = ntohl(a);
		} else {
			if (IN6_IS_ADDR_LOOPBACK(v6) && internal)
				return 1;
			if (IN6_IS_ADDR_LOOPBACK(v6) || IN6_IS_ADDR_UNSPECIFIED(v6) ||
			    IN6_IS_ADDR_LINKLOCAL(v6) || IN6_IS_ADDR_MULTICAST(v6) ||
			    (v6->s6_addr[0] & 0xfe) == 0xfc)
				return *why = "a loopback, link-local, multicast or private IPv6 address", 0;
			return 1;
		}
	} else {
		return *why = "not an IP address", 0;
	}
	if (internal && (a & 0xff000000) == 0x7f000000)
		return 1;
	c = v4_class(a, why);
	return c > 0 || (c == 0 && exact);
}
