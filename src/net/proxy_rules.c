/* proxy_rules.c - the egress proxy's rules as one value: the allow list,
 * the live rules `sbxrun net allow|deny` add, and the administrator's
 * ceilings read from policy.ini. Order of precedence (docs/egress.md, "Live
 * rules"): a live deny and the policy refuse first; the allow list; a live
 * allow lifts only what the list leaves out, never an address class, the
 * package rules' withholding, a deny or the policy. proxy.c acts on what
 * these functions say (cuts, holds, events). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "base/util.h"
#include "net/proxy_rules.h"

int proxy_rules_init(struct proxy_rules *r, const struct hostmatch_list *hosts, const struct sbx_strlist *allow,
		     const struct hostmatch_sets *sets, struct sbx_err *err)
{
	memset(r, 0, sizeof(*r));
	r->sets = *sets;
	if (hosts) {
		hostmatch_copy(hosts, &r->allow);
		return 0;
	}
	return hostmatch_compile(allow, sets, &r->allow, err);
}

/* The list as one line: its entries, then the hosts kept to the gateway. */
static void hosts_text(const struct hostmatch_list *l, char *buf, size_t size)
{
	size_t len = 0;
	char e[320];

	buf[0] = '\0';
	for (size_t i = 0; i < l->n + l->nwithheld && len < size; i++) {
		hostentry_format(i < l->n ? &l->v[i].e : &l->withheld[i - l->n], e, sizeof(e));
		len += (size_t)snprintf(buf + len, size - len, "%s%s%s%s", len ? " " : "", i < l->n ? "" : "gateway-only:",
					e, i < l->n && l->v[i].exact ? "!" : "");
	}
}

bool proxy_rules_set_hosts(struct proxy_rules *r, const struct hostmatch_list *hosts, char *summary, size_t size)
{
	_cleanup_free_ char *before = xmalloc(size);

	hosts_text(&r->allow, before, size);
	hosts_text(hosts, summary, size);
	hostmatch_free(&r->allow);
	hostmatch_copy(hosts, &r->allow);
	return strcmp(before, summary) != 0;
}

static void ceilings_free(struct proxy_ceiling *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].text);
		hostmatch_free(&v[i].l);
	}
}

void proxy_rules_free(struct proxy_rules *r)
{
	hostmatch_free(&r->allow);
	ceilings_free(r->ceil, r->nceil);
	r->nceil = 0;
	free(steal_ptr(r->live));
	r->nlive = 0;
	free(steal_ptr(r->policy_error));
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);
	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static struct proxy_live_rule *live_match(const struct proxy_rules *r, const char *canon, int port, bool deny)
{
	for (size_t i = 0; i < r->nlive; i++) {
		struct proxy_live_rule *l = &r->live[i];
		if (l->used || (l->kind == PROXY_DENY) != deny)
			continue;
		if (hostentry_allows(&l->e, canon, (unsigned)port))
			return l;
	}
	return NULL;
}

/* NULL if every policy file's ceiling lets canon:port through, else the
 * path of one that does not. */
static const char *ceiling_refusal(const struct proxy_rules *r, const char *canon, int port)
{
	struct hostmatch_grant g;

	for (size_t i = 0; i < r->nceil; i++) {
		const struct proxy_ceiling *f = &r->ceil[i];
		if (f->none || (f->listed && hostmatch_check(&f->l, canon, port, &g) != HOSTMATCH_OK))
			return f->path;
	}
	return NULL;
}

const char *proxy_rules_refusal(const struct proxy_rules *r, const char *canon, int port, char *buf, size_t size)
{
	const char *capped;

	if (live_match(r, canon, port, true))
		return "denied by a live rule (sbxrun net deny)";
	if ((capped = ceiling_refusal(r, canon, port))) {
		snprintf(buf, size, "not allowed by the administrator's policy %s", capped);
		return buf;
	}
	return NULL;
}

enum hostmatch_result proxy_rules_check(struct proxy_rules *r, const char *canon, int port,
					struct hostmatch_grant *g)
{
	enum hostmatch_result res = hostmatch_check(&r->allow, canon, port, g);

	if (res != HOSTMATCH_NOT_LISTED && res != HOSTMATCH_BAD_PORT)
		return res;
	struct proxy_live_rule *a = live_match(r, canon, port, false);
	if (!a || strcmp(canon, HOSTMATCH_INTERNAL) == 0)
		return res;
	memset(g, 0, sizeof(*g));
	if (a->kind == PROXY_ALLOW_ONCE)
		a->used = true; /* matches nothing now */
	return HOSTMATCH_OK;
}

const char *proxy_rules_unapprovable(const char *host, char *buf, size_t size)
{
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	if (strcmp(host, HOSTMATCH_INTERNAL) == 0 || has_suffix(host, ".sbxrun.internal") ||
	    strcmp(host, "localhost") == 0 || has_suffix(host, ".localhost"))
		return "a name for the host's own loopback or sbxrun's services: only a profile's entry may open it";
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1)
		s6->sin6_family = AF_INET6;
	if (ss.ss_family) {
		struct hostmatch_grant none = { 0 };
		const char *w = hostmatch_addr_refusal((struct sockaddr *)&ss, &none);
		if (w) {
			snprintf(buf, size, "%s: an approval never reaches it", w);
			return buf;
		}
	}
	return NULL;
}

/* Why an approval of e could never take effect, or NULL. */
static const char *approval_refusal(const struct proxy_rules *r, const struct hostentry *e, char *buf, size_t size)
{
	struct hostmatch_grant g;
	const char *w = proxy_rules_unapprovable(e->host, buf, size);

	if (w)
		return w;
	for (int i = 0; i < 2; i++) {
		unsigned pt = e->port == HOSTENTRY_DEFAULT_PORTS ? (i ? 443u : 80u) : e->port;
		if (live_match(r, e->host, (int)pt, true))
			return "denied by a live rule (an approval never lifts a deny)";
		if ((w = ceiling_refusal(r, e->host, (int)pt))) {
			snprintf(buf, size, "not allowed by the administrator's policy %s", w);
			return buf;
		}
		if (hostmatch_check(&r->allow, e->host, (int)pt, &g) == HOSTMATCH_GATEWAY_ONLY)
			return "kept to the package gateway by the profile's package rules";
	}
	return NULL;
}

const char *proxy_rules_kind_name(enum proxy_rule k)
{
	return k == PROXY_ALLOW_ONCE ? "allow-once" : k == PROXY_ALLOW_SESSION ? "allow-session" : "deny";
}

static void live_text(const struct hostentry *e, char *text, size_t size)
{
	if (e->port == HOSTENTRY_ANY_PORT)
		snprintf(text, size, "%s", e->host);
	else
		hostentry_format(e, text, size);
}

int proxy_rules_add(struct proxy_rules *r, const char *entry, enum proxy_rule kind, char *text, size_t size,
		    struct sbx_err *err)
{
	struct hostentry e;
	char buf[300];
	const char *why;

	if (hostentry_parse(entry, &e, err) < 0)
		return -1;
	if (e.suffix)
		return err_set(err, 0, "'%s': a live rule names one host (HOST or HOST:PORT), not *.DOMAIN",
			       entry);
	if (kind != PROXY_DENY && (why = approval_refusal(r, &e, buf, sizeof(buf))))
		return err_set(err, 0, "cannot allow '%s': %s", entry, why);
	if (kind == PROXY_DENY && e.port == HOSTENTRY_DEFAULT_PORTS)
		e.port = HOSTENTRY_ANY_PORT; /* a deny without a port: every port */
	r->live = xrealloc(r->live, (r->nlive + 1) * sizeof(*r->live));
	r->live[r->nlive++] = (struct proxy_live_rule){ e, kind, false };
	live_text(&e, text, size);
	return 0;
}

void proxy_rules_list(const struct proxy_rules *r, void (*fn)(void *arg, const char *kind, const char *entry),
		      void *arg)
{
	char text[320];

	for (size_t i = 0; i < r->allow.n; i++) {
		hostentry_format(&r->allow.v[i].e, text, sizeof(text));
		fn(arg, "allow", text);
	}
	for (size_t i = 0; i < r->nlive; i++) {
		if (r->live[i].used)
			continue;
		live_text(&r->live[i].e, text, sizeof(text));
		fn(arg, proxy_rules_kind_name(r->live[i].kind), text);
	}
	for (size_t i = 0; i < r->nceil; i++)
		if (r->ceil[i].text)
			fn(arg, "policy", r->ceil[i].text);
}

/* "FILE: egress none ENTRY..." for one file's ceiling. */
static char *ceiling_text(const struct proxy_ceiling *f, const struct sbx_strlist *allow)
{
	char s[1024];
	size_t len = (size_t)snprintf(s, sizeof(s), "%s:", f->path);

	if (f->none && len < sizeof(s))
		len += (size_t)snprintf(s + len, sizeof(s) - len, " egress none");
	for (size_t k = 0; f->listed && k < allow->n && len < sizeof(s); k++)
		len += (size_t)snprintf(s + len, sizeof(s) - len, " %s", allow->v[k]);
	return xstrdup(s);
}

int proxy_rules_set_policy(struct proxy_rules *r, const struct sbx_policy *pol, char *summary, size_t size,
			   struct sbx_err *err)
{
	struct proxy_ceiling next[SBX_POLICY_MAX_FILES] = { 0 };
	size_t n = 0;

	for (size_t i = 0; pol && i < pol->n; i++) {
		const struct sbx_config *caps = &pol->file[i].caps;
		struct proxy_ceiling *f = &next[n];
		bool egress = caps->origin[SBX_K_EGRESS] != NULL, listed = caps->origin[SBX_K_ALLOW] != NULL;
		if (!egress && !listed)
			continue;
		f->path = xstrdup(pol->file[i].path);
		f->none = egress && caps->egress < SBX_EGRESS_PACKAGES;
		f->listed = listed;
		n++;
		if (listed && hostmatch_compile(&caps->allow, &r->sets, &f->l, err) < 0) {
			ceilings_free(next, n);
			return err_wrap(err, "%s", pol->file[i].path);
		}
		f->text = ceiling_text(f, &caps->allow);
	}
	ceilings_free(r->ceil, r->nceil);
	memcpy(r->ceil, next, sizeof(next));
	r->nceil = n;
	free(steal_ptr(r->policy_error));
	summary[0] = '\0';
	for (size_t i = 0; i < n; i++)
		snprintf(summary + strlen(summary), size - strlen(summary), "%s%s", i ? "; " : "", r->ceil[i].text);
	if (!n)
		snprintf(summary, size, "no network ceiling");
	return 0;
}

bool proxy_rules_policy_error_new(struct proxy_rules *r, const char *msg)
{
	if (r->policy_error && strcmp(r->policy_error, msg) == 0)
		return false;
	free(r->policy_error);
	r->policy_error = xstrdup(msg);
	return true;
}
