/* hostmatch.c - decides which hosts the egress proxy may reach: canonical
 * names, the compiled allow list and the vetting of resolved addresses. */
#include <string.h>

#include "base/hostaddr.h"
#include "base/log.h"
#include "base/util.h"
#include "net/hostmatch.h"

int hostmatch_canon(const char *in, char *out, size_t size)
{
	return hostaddr_canon(in, out, size);
}

int hostmatch_literal(const char *canon)
{
	return hostaddr_literal(canon);
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

/* An image's package source that names what only the person running sbxrun
 * may grant (its metadata from before import dropped such entries) is left
 * out of the list. */
static bool image_entry_refused(const char *set, const char *entry)
{
	const char *why = hostaddr_image_refusal(entry);
	if (why)
		log_warn("%s: leaving out the image's source '%s': %s", set, entry, why);
	return why != NULL;
}

static int add_one_url(struct hostmatch_list *l, const char *set, const char *url,
		       struct sbx_err *err)
{
	if (image_entry_refused(set, url))
		return 0;
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
	switch (host_set_index(name)) {
	case SBX_SET_APT: {
		size_t first = l->n;
		/* HOST, HOST:PORT, or a source's whole URL. */
		for (size_t i = 0; s && s->apt_hosts && s->apt_hosts[i]; i++) {
			const char *h = s->apt_hosts[i];
			if (strstr(h, "://") ? add_url(l, name, h, err) < 0
			    : !image_entry_refused(name, h) && list_add(l, h, false, err) < 0)
				return err_wrap(err, "%s", name);
		}
		/* under package rules the gateway takes apt's plain HTTP: a tunnel
		 * to these hosts (443) would go around it */
		for (size_t i = first; s && s->apt_http_only && i < l->n; i++)
			if (l->v[i].port == 0)
				l->v[i].port = 80;
		return 0;
	}
	case SBX_SET_NPM:
		return add_url(l, name, s ? s->npm_registry : NULL, err);
	case SBX_SET_PYPI:
		return add_url(l, name, s ? s->pypi_index : NULL, err);
	}
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

void hostmatch_copy(const struct hostmatch_list *from, struct hostmatch_list *to)
{
	to->n = from->n;
	to->v = from->n ? xcalloc(from->n, sizeof(*to->v)) : NULL;
	for (size_t i = 0; i < from->n; i++) {
		to->v[i] = from->v[i];
		to->v[i].host = xstrdup(from->v[i].host);
	}
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
		/* The host's loopback only where an entry of the profile or a
		 * flag (never an image's package source) names the port. */
		if (internal && (!e->exact || hostaddr_internal_refusal(e->host, e->suffix, (unsigned)e->port)))
			continue;
		if (e->port ? e->port != port : (port != 80 && port != 443)) {
			if (r != HOSTMATCH_OK) /* an entry before may have allowed it */
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

const char *hostmatch_addr_refusal(const struct sockaddr *sa, const struct hostmatch_grant *g)
{
	struct hostaddr_grant ag = { g->private_ok, g->internal };
	return hostaddr_refusal(sa, &ag);
}
