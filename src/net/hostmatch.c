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

/* The list being compiled; quiet: the image's refused sources are told
 * once, by the allow list, not again by what is withheld. */
struct compiling {
	struct hostmatch_list *l;
	bool quiet;
};

static int list_add(struct compiling *c, const char *pat, bool exact, struct sbx_err *err)
{
	struct hostmatch_list *l = c->l;
	struct hostmatch_entry me = { .exact = exact };

	if (hostentry_parse(pat, &me.e, err) < 0)
		return err_wrap(err, "allow entry");
	me.exact = exact && !me.e.suffix;
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n++] = me;
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
static bool image_entry_refused(const struct compiling *c, const char *set, const char *entry)
{
	const char *why = hostaddr_image_refusal(entry);
	if (why && !c->quiet)
		log_warn("%s: leaving out the image's source '%s': %s", set, entry, why);
	return why != NULL;
}

static int add_one_url(struct compiling *c, const char *set, const char *url, struct sbx_err *err)
{
	if (image_entry_refused(c, set, url))
		return 0;
	_cleanup_free_ char *auth = url_authority(url);
	if (!auth)
		return err_set(err, 0, "%s: cannot read a host from '%s'", set, url);
	return list_add(c, auth, false, err);
}

/* One URL, or several separated by spaces (pip's index and file host). */
static int add_url(struct compiling *c, const char *set, const char *urls, struct sbx_err *err)
{
	_cleanup_free_ char *copy = urls ? strdup(urls) : NULL;
	char *save = NULL;

	for (char *u = copy ? strtok_r(copy, " \t\n", &save) : NULL; u; u = strtok_r(NULL, " \t\n", &save))
		if (add_one_url(c, set, u, err) < 0)
			return -1;
	return 0;
}

static int add_set(struct compiling *c, const char *name, const struct hostmatch_sets *s,
		   struct sbx_err *err)
{
	struct hostmatch_list *l = c->l;

	switch (host_set_index(name)) {
	case SBX_SET_APT: {
		size_t first = l->n;
		/* HOST, HOST:PORT, or a source's whole URL. */
		for (size_t i = 0; s && s->apt_hosts && s->apt_hosts[i]; i++) {
			const char *h = s->apt_hosts[i];
			if (strstr(h, "://") ? add_url(c, name, h, err) < 0
			    : !image_entry_refused(c, name, h) && list_add(c, h, false, err) < 0)
				return err_wrap(err, "%s", name);
		}
		/* under package rules the gateway takes apt's plain HTTP: a tunnel
		 * to these hosts (443) would go around it */
		for (size_t i = first; s && s->apt_http_only && i < l->n; i++)
			if (l->v[i].e.port == HOSTENTRY_DEFAULT_PORTS)
				l->v[i].e.port = 80;
		return 0;
	}
	case SBX_SET_NPM:
		return add_url(c, name, s ? s->npm_registry : NULL, err);
	case SBX_SET_PYPI:
		return add_url(c, name, s ? s->pypi_index : NULL, err);
	case SBX_SET_GO:
		return add_url(c, name, s ? s->go_proxy : NULL, err) < 0 ? -1
		       : add_url(c, name, s ? config_go_sumdb_url(s->go_sumdb) : NULL, err);
	case SBX_SET_CARGO:
		return add_url(c, name, s ? s->cargo_index : NULL, err);
	case SBX_SET_MAVEN:
		return add_url(c, name, s ? s->maven_repo : NULL, err);
	}
	return err_set(err, 0, "unknown host set '%s'", name);
}

static int compile(const struct sbx_strlist *allow, const struct hostmatch_sets *sets, bool quiet,
		   struct hostmatch_list *out, struct sbx_err *err)
{
	struct hostmatch_list l = { 0 };
	struct compiling c = { &l, quiet };

	for (size_t i = 0; allow && i < allow->n; i++) {
		const char *pat = allow->v[i];
		int r = pat[0] == '@' ? add_set(&c, pat, sets, err) : list_add(&c, pat, true, err);
		if (r < 0) {
			hostmatch_free(&l);
			return -1;
		}
	}
	*out = l;
	return 0;
}

int hostmatch_compile(const struct sbx_strlist *allow, const struct hostmatch_sets *sets,
		      struct hostmatch_list *out, struct sbx_err *err)
{
	return compile(allow, sets, false, out, err);
}

int hostmatch_withhold(struct hostmatch_list *l, const struct sbx_strlist *entries,
		       const struct hostmatch_sets *sets, struct sbx_err *err)
{
	struct hostmatch_list kept;
	struct hostmatch_sets all = sets ? *sets : (struct hostmatch_sets){ 0 };

	all.apt_http_only = false;
	if (compile(entries, &all, true, &kept, err) < 0)
		return -1;
	l->withheld = xrealloc(l->withheld, (l->nwithheld + kept.n + 1) * sizeof(*l->withheld));
	for (size_t i = 0; i < kept.n; i++) {
		l->withheld[l->nwithheld] = kept.v[i].e;
		l->withheld[l->nwithheld++].port = HOSTENTRY_ANY_PORT;
	}
	hostmatch_free(&kept);
	return 0;
}

void hostmatch_free(struct hostmatch_list *l)
{
	free(l->v);
	free(l->withheld);
	*l = (struct hostmatch_list){ 0 };
}

void hostmatch_copy(const struct hostmatch_list *from, struct hostmatch_list *to)
{
	*to = (struct hostmatch_list){ .n = from->n, .nwithheld = from->nwithheld };
	to->v = xcalloc(from->n + 1, sizeof(*to->v));
	memcpy(to->v, from->v, from->n * sizeof(*to->v));
	to->withheld = xcalloc(from->nwithheld + 1, sizeof(*to->withheld));
	memcpy(to->withheld, from->withheld, from->nwithheld * sizeof(*to->withheld));
}

static bool withheld(const struct hostmatch_list *l, const char *canon, int port)
{
	for (size_t i = 0; i < l->nwithheld; i++)
		if (hostentry_allows(&l->withheld[i], canon, (unsigned)port))
			return true;
	return false;
}

enum hostmatch_result hostmatch_check(const struct hostmatch_list *l, const char *canon, int port,
				      struct hostmatch_grant *grant)
{
	bool internal = strcmp(canon, HOSTMATCH_INTERNAL) == 0;
	enum hostmatch_result r = HOSTMATCH_NOT_LISTED;

	memset(grant, 0, sizeof(*grant));
	for (size_t i = 0; i < l->n; i++) {
		const struct hostmatch_entry *me = &l->v[i];
		struct hostentry any = me->e;
		any.port = HOSTENTRY_ANY_PORT;
		if (!hostentry_allows(&any, canon, (unsigned)port))
			continue;
		/* The host's loopback only where an entry of the profile or a
		 * flag (never an image's package source) names the port. */
		if (internal && (!me->exact || hostaddr_internal_refusal(me->e.host, me->e.suffix, me->e.port)))
			continue;
		if (!hostentry_allows(&me->e, canon, (unsigned)port)) {
			if (r != HOSTMATCH_OK) /* an entry before may have allowed it */
				r = HOSTMATCH_BAD_PORT;
			continue;
		}
		grant->private_ok |= me->exact;
		grant->internal = internal;
		r = HOSTMATCH_OK;
	}
	if (r == HOSTMATCH_OK && withheld(l, canon, port)) {
		memset(grant, 0, sizeof(*grant));
		r = HOSTMATCH_GATEWAY_ONLY;
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
	case HOSTMATCH_GATEWAY_ONLY: return "kept to the package gateway by";
	}
	return "?";
}

const char *hostmatch_addr_refusal(const struct sockaddr *sa, const struct hostmatch_grant *g)
{
	struct hostaddr_grant ag = { g->private_ok, g->internal };
	return hostaddr_refusal(sa, &ag);
}
