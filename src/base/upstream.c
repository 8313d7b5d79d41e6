/* upstream.c - [packages] upstreams: each checked when the profile is
 * read, and the allow-list entries a gateway reaching them needs. */
#define _GNU_SOURCE
#include "base/upstream.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/hostaddr.h"
#include "base/options.h"
#include "base/util.h"

#define NOT_UPSTREAM "not an https:// URL (or http://" HOSTADDR_INTERNAL ":PORT/ for a mirror on this host)"

/* A package upstream: https with a host, or plain http to a mirror on
 * this host (reached as host.sbxrun.internal, with its port); no spaces or
 * controls. NULL if it is one, with *auth and *len its "host[:port]"
 * (userinfo dropped), else why not. */
static const char *upstream_check(const char *u, const char **auth, size_t *len)
{
	char host[HOSTADDR_MAX + 8], canon[HOSTADDR_MAX + 8];
	const char *a, *at, *colon;
	uint64_t port = 0;
	struct sbx_err e;
	size_t n = strlen(u);

	if (n > 1000)
		return NOT_UPSTREAM;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)u[i] <= ' ' || u[i] == 0x7f)
			return NOT_UPSTREAM;
	bool https = str_has_prefix(u, "https://");
	if (!https && !str_has_prefix(u, "http://"))
		return NOT_UPSTREAM;
	a = strstr(u, "://") + 3;
	n = strcspn(a, "/?#");
	if ((at = memrchr(a, '@', n))) {
		n -= (size_t)(at + 1 - a);
		a = at + 1;
	}
	if (a[0] == '[') {
		const char *rb = memchr(a, ']', n);
		colon = rb && rb + 1 < a + n ? rb + 1 : NULL;
		if (!rb || (colon && *colon != ':'))
			return NOT_UPSTREAM;
	} else {
		colon = memchr(a, ':', n);
	}
	size_t hn = colon ? (size_t)(colon - a) : n;
	if (hn == 0 || hn >= sizeof(host))
		return NOT_UPSTREAM;
	snprintf(host, sizeof(host), "%.*s", (int)hn, a);
	if (hostaddr_canon(host, canon, sizeof(canon)) < 0)
		return NOT_UPSTREAM;
	size_t pn = colon ? (size_t)(a + n - colon - 1) : 0;
	char digits[8] = "";
	bool bad_port = colon && (pn == 0 || pn >= sizeof(digits) ||
				  (snprintf(digits, sizeof(digits), "%.*s", (int)pn, colon + 1),
				   parse_count(digits, 1, 65535, &port, &e) < 0));
	const char *why = hostaddr_internal_refusal(canon, false, bad_port ? 0 : (unsigned)port);
	if (why)
		return why;
	if (bad_port)
		return "its port is not a number from 1 to 65535";
	if (!https && strcmp(canon, HOSTADDR_INTERNAL) != 0)
		return NOT_UPSTREAM;
	*auth = a;
	*len = n;
	return NULL;
}

const char *config_upstream_why(const char *url)
{
	const char *auth;
	size_t n;

	return upstream_check(url, &auth, &n);
}

bool config_image_source(const char *v, enum sbx_key key)
{
	int set = key == SBX_K_PKG_GO ? SBX_SET_GO : key == SBX_K_PKG_CARGO ? SBX_SET_CARGO
		  : key == SBX_K_PKG_MAVEN ? SBX_SET_MAVEN : -1;
	return v && set >= 0 && strcmp(v, sbx_host_sets[set]) == 0;
}

int config_upstream_entry(const char *url, char *out, size_t size)
{
	const char *auth;
	size_t n;

	if (!url || upstream_check(url, &auth, &n))
		return -1;
	/* no port: https's own, which an entry without a port allows */
	return snprintf(out, size, "%.*s", (int)n, auth) < (int)size ? 0 : -1;
}

void config_proxy_defaults(struct sbx_config *cfg, bool proxy_alone)
{
	struct sbx_err ignore;
	char up[320];
	bool packages = cfg->egress == SBX_EGRESS_PACKAGES;

	if (cfg->allow.n == 0 && (proxy_alone || packages))
		for (size_t i = 0; i < SBX_SET__COUNT; i++)
			config_set(cfg, options_by_key(SBX_K_ALLOW), sbx_host_sets[i], "default", 0, &ignore);
	if (packages && config_upstream_entry(cfg->pkg_npm, up, sizeof(up)) == 0)
		config_set(cfg, options_by_key(SBX_K_ALLOW), up, cfg->origin[SBX_K_PKG_NPM], 0, &ignore);
	if (packages && config_upstream_entry(cfg->pkg_pypi, up, sizeof(up)) == 0)
		config_set(cfg, options_by_key(SBX_K_ALLOW), up, cfg->origin[SBX_K_PKG_PYPI], 0, &ignore);
	char idx[1024];
	const char *cargo_ups[] = { config_cargo_index(cfg->pkg_cargo, idx, sizeof(idx)), config_cargo_dl(cfg->pkg_cargo) };
	for (size_t i = 0; i < 2; i++)
		if (packages && config_upstream_entry(cargo_ups[i], up, sizeof(up)) == 0)
			config_set(cfg, options_by_key(SBX_K_ALLOW), up, cfg->origin[SBX_K_PKG_CARGO], 0, &ignore);
	const char *go_ups[] = { cfg->pkg_go, config_go_sumdb_url(cfg->pkg_go_sumdb), cfg->pkg_maven };
	const enum sbx_key go_keys[] = { SBX_K_PKG_GO, SBX_K_PKG_GO_SUMDB, SBX_K_PKG_MAVEN };
	for (size_t i = 0; i < 3; i++)
		if (packages && config_upstream_entry(go_ups[i], up, sizeof(up)) == 0)
			config_set(cfg, options_by_key(SBX_K_ALLOW), up, cfg->origin[go_keys[i]], 0, &ignore);
	/* malicious = URL: the gateway fetches the feed */
	for (size_t i = 0; i < cfg->pkg_malicious.n; i++)
		if (packages && cfg->pkg_malicious.v[i][0] != '/' &&
		    config_upstream_entry(cfg->pkg_malicious.v[i], up, sizeof(up)) == 0)
			config_set(cfg, options_by_key(SBX_K_ALLOW), up, cfg->pkg_malicious.origin[i], 0, &ignore);
	/* go = @go, cargo = @cargo, maven = @maven: the image's hosts, the set */
	const enum sbx_key set_keys[] = { SBX_K_PKG_GO, SBX_K_PKG_CARGO, SBX_K_PKG_MAVEN };
	const char *set_vals[] = { cfg->pkg_go, cfg->pkg_cargo, cfg->pkg_maven };
	for (size_t i = 0; i < 3; i++)
		if (packages && config_image_source(set_vals[i], set_keys[i]))
			config_set(cfg, options_by_key(SBX_K_ALLOW), set_vals[i], cfg->origin[set_keys[i]], 0, &ignore);
}

const char *config_go_sumdb_url(const char *v)
{
	const char *sp = v ? strchr(v, ' ') : NULL;

	if (!sp)
		return NULL;
	sp += strspn(sp, " ");
	return *sp ? sp : NULL;
}

static int check_upstream(const struct sbx_config *cfg, enum sbx_key key, const char *name,
			  const char *url, struct sbx_err *err);

const char *config_cargo_index(const char *v, char *buf, size_t size)
{
	size_t n = v ? strcspn(v, " ") : 0;

	if (!n || n >= size)
		return NULL;
	memcpy(buf, v, n);
	buf[n] = '\0';
	return buf;
}

const char *config_cargo_dl(const char *v)
{
	return config_go_sumdb_url(v);  /* the same shape: what follows the first word */
}

/* [packages] cargo = INDEX-URL [DOWNLOAD-URL]: each an upstream's URL. */
static int check_cargo(const struct sbx_config *cfg, struct sbx_err *err)
{
	const char *v = cfg->pkg_cargo, *dl = config_cargo_dl(v), *auth, *why = NULL;
	char idx[1024];
	size_t n;

	if (!v || config_image_source(v, SBX_K_PKG_CARGO))
		return 0;
	if (v[0] == '@')
		why = "the image's own registry is @cargo";
	else if (!config_cargo_index(v, idx, sizeof(idx)))
		why = "not INDEX-URL [DOWNLOAD-URL]";
	else if (dl && strchr(dl, ' '))
		why = "more than two URLs (INDEX-URL [DOWNLOAD-URL])";
	else if (!(why = upstream_check(idx, &auth, &n)) && dl)
		why = upstream_check(dl, &auth, &n);
	return why ? err_set(err, 0, "%s: [packages] cargo: '%s': %s", cfg->origin[SBX_K_PKG_CARGO], v, why) : 0;
}

/* [packages] go_sumdb = NAME+HASH+KEY URL: the key's shape here (the
 * gateway checks the key itself when it starts), the URL as an upstream's. */
static int check_go(const struct sbx_config *cfg, struct sbx_err *err)
{
	const char *v = cfg->pkg_go_sumdb, *url = config_go_sumdb_url(v), *auth, *why = NULL;
	size_t n, kn = v ? strcspn(v, " ") : 0;
	const char *p1 = v ? memchr(v, '+', kn) : NULL, *p2 = p1 ? memchr(p1 + 1, '+', kn - (size_t)(p1 + 1 - v)) : NULL;

	if (check_upstream(cfg, SBX_K_PKG_GO, "go", cfg->pkg_go, err) < 0)
		return -1;
	if (cfg->pkg_go && !v && !config_image_source(cfg->pkg_go, SBX_K_PKG_GO))
		return err_set(err, 0, "%s: [packages] go: needs go_sumdb = NAME+HASH+KEY URL (every module is "
			       "verified against a checksum database)", cfg->origin[SBX_K_PKG_GO]);
	if (!v)
		return 0;
	if (!p1 || p1 == v || !p2 || p2 - p1 != 9 || strspn(p1 + 1, "0123456789abcdef") < 8 || v + kn - p2 < 2)
		why = "not a verifier key NAME+HASH+KEY, then a space and the database's URL";
	else if (!url || strchr(url, ' '))
		why = "no URL after the verifier key (NAME+HASH+KEY URL)";
	else
		why = upstream_check(url, &auth, &n);
	if (why)
		return err_set(err, 0, "%s: [packages] go_sumdb: '%s': %s", cfg->origin[SBX_K_PKG_GO_SUMDB], v, why);
	return 0;
}

/* [packages] npm or pypi, refused at load with the reason. */
static int check_upstream(const struct sbx_config *cfg, enum sbx_key key, const char *name,
			  const char *url, struct sbx_err *err)
{
	const char *auth, *why;
	size_t n;

	if (!url || config_image_source(url, key))
		return 0;
	if (url[0] == '@')
		return err_set(err, 0, "%s: [packages] %s: '%s': the image's own is @%s (npm's and pypi's: the "
			       "key left out)", cfg->origin[key], name, url, name);
	if (!(why = upstream_check(url, &auth, &n)))
		return 0;
	return err_set(err, 0, "%s: [packages] %s: '%s': %s", cfg->origin[key], name, url, why);
}

int config_check_upstreams(const struct sbx_config *cfg, struct sbx_err *err)
{
	if (check_upstream(cfg, SBX_K_PKG_NPM, "npm", cfg->pkg_npm, err) < 0 ||
	    check_upstream(cfg, SBX_K_PKG_PYPI, "pypi", cfg->pkg_pypi, err) < 0 || check_go(cfg, err) < 0 ||
	    check_cargo(cfg, err) < 0 ||
	    check_upstream(cfg, SBX_K_PKG_MAVEN, "maven", cfg->pkg_maven, err) < 0)
		return -1;
	return 0;
}
