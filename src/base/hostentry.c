/* hostentry.c - a host entry read once into its canonical form, and the one
 * comparison of entries and hosts (see hostentry.h). */
#include "base/hostentry.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

#define BAD_HOST "invalid host '%s' (HOST, *.DOMAIN, HOST:PORT or [IPv6]:PORT; an IPv4 " \
		 "address only as a dotted quad)"

/* Where the port's colon is in p (after "*."), or NULL; -1 when a bracket
 * is left open or followed by anything but ":PORT". */
static int port_colon(const char *p, const char **colon)
{
	*colon = NULL;
	if (p[0] != '[') {
		*colon = strrchr(p, ':');
		return 0;
	}
	const char *end = strchr(p, ']');
	if (!end || (end[1] && end[1] != ':'))
		return -1;
	*colon = end[1] ? end + 1 : NULL;
	return 0;
}

int hostentry_parse(const char *s, struct hostentry *e, struct sbx_err *err)
{
	char host[HOSTADDR_MAX + 8];
	const char *p = s, *colon;
	uint64_t port = 0;
	struct sbx_err perr;

	memset(e, 0, sizeof(*e));
	if (str_has_prefix(p, "*.")) {
		e->suffix = true;
		p += 2;
	}
	if (port_colon(p, &colon) < 0)
		return err_set(err, 0, BAD_HOST, s);
	if (colon && parse_count(colon + 1, 1, 65535, &port, &perr) < 0)
		return err_set(err, 0, "invalid port in '%s' (a number from 1 to 65535)", s);
	size_t n = colon ? (size_t)(colon - p) : strlen(p);
	if (n == 0 || n >= sizeof(host))
		return err_set(err, 0, BAD_HOST, s);
	memcpy(host, p, n);
	host[n] = '\0';
	if (hostaddr_canon(host, e->host, sizeof(e->host)) < 0)
		return err_set(err, 0, BAD_HOST, s);
	if (e->suffix && hostaddr_literal(e->host))
		return err_set(err, 0, "'%s': '*.' needs a name, not an address", s);
	e->port = (unsigned)port;
	return 0;
}

void hostentry_format(const struct hostentry *e, char *out, size_t size)
{
	bool v6 = hostaddr_literal(e->host) == AF_INET6;
	char port[16] = "";

	if (e->port && e->port != HOSTENTRY_ANY_PORT)
		snprintf(port, sizeof(port), ":%u", e->port);
	snprintf(out, size, "%s%s%s%s%s", e->suffix ? "*." : "", v6 ? "[" : "", e->host, v6 ? "]" : "",
		 port);
}

static bool ports_cover(unsigned wide, unsigned narrow)
{
	if (wide == HOSTENTRY_ANY_PORT || wide == narrow)
		return true;
	/* none named: 80 and 443, each of which a narrower entry may name */
	return wide == HOSTENTRY_DEFAULT_PORTS && (narrow == 80 || narrow == 443);
}

/* Whether name is a subdomain of domain (not domain itself). */
static bool below(const char *name, const char *domain)
{
	size_t nl = strlen(name), dl = strlen(domain);
	return nl > dl + 1 && name[nl - dl - 1] == '.' && strcmp(name + nl - dl, domain) == 0;
}

static bool names_cover(const struct hostentry *wide, const struct hostentry *narrow)
{
	if (!wide->suffix)
		return !narrow->suffix && strcmp(wide->host, narrow->host) == 0;
	if (hostaddr_literal(narrow->host))
		return false;
	/* *.D covers *.D, and *.SUB.D and SUB.D */
	return (narrow->suffix && strcmp(wide->host, narrow->host) == 0) || below(narrow->host, wide->host);
}

bool hostentry_covers(const struct hostentry *wide, const struct hostentry *narrow)
{
	return ports_cover(wide->port, narrow->port) && names_cover(wide, narrow);
}

bool hostentry_allows(const struct hostentry *e, const char *canon, unsigned port)
{
	struct hostentry h = { .port = port, .suffix = false };

	if (port == HOSTENTRY_DEFAULT_PORTS || port >= HOSTENTRY_ANY_PORT ||
	    snprintf(h.host, sizeof(h.host), "%s", canon) >= (int)sizeof(h.host))
		return false;
	return hostentry_covers(e, &h);
}
