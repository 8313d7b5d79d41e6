/* netplan.c - the network plan (see netplan.h): one function turns the
 * profile's [network] section and the image's package sources into what
 * each step does, so a mode's meaning is written down once. */
#define _GNU_SOURCE
#include "net/netplan.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

/* packages egress: only the package tools are pointed at the proxy, so
 * other code keeps getting "Network is unreachable" (proxy_env = tools). */
static const char *const tool_vars[] = { "SBXRUN_PROXY", "PIP_PROXY", "npm_config_proxy",
					 "npm_config_https_proxy", "YARN_HTTP_PROXY",
					 "YARN_HTTPS_PROXY", "CARGO_HTTP_PROXY" };
static const char *const all_vars[] = { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY" };
static const char *const no_proxy_vars[] = { "no_proxy", "NO_PROXY" };
/* The package gateway's endpoints, the way the hosted containers point
 * their package managers at their mirror. */
static const char *const gw_npm_vars[] = { "NPM_CONFIG_REGISTRY" };
static const char *const gw_pypi_vars[] = { "PIP_INDEX_URL", "UV_INDEX_URL", "UV_DEFAULT_INDEX" };
static const char *const gw_host_vars[] = { "PIP_TRUSTED_HOST" };
static const char *const gw_go_empty_vars[] = { "GONOSUMDB", "GOPRIVATE", "GONOPROXY" };
static const char *const ca_vars[] = { "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT",
				       "NODE_EXTRA_CA_CERTS", "npm_config_cafile", "CARGO_HTTP_CAINFO",
				       "GIT_SSL_CAINFO" };

/* The host's CA bundle: on networks that intercept TLS, package managers
 * inside must trust what the host trusts (docs/design.md, facts it rests on). */
static char *host_ca_bundle(void)
{
	static const char *const known[] = { "/etc/ssl/certs/ca-certificates.crt",
					     "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem" };
	const char *env = getenv("SSL_CERT_FILE");

	if (env && env[0] == '/' && access(env, R_OK) == 0)
		return xstrdup(env);
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (access(known[i], R_OK) == 0)
			return xstrdup(known[i]);
	return NULL;
}

static void add_vars(struct sbx_netplan *np, const char *const *names, size_t n,
		     enum netplan_value value)
{
	for (size_t i = 0; i < n && np->nenv < NETPLAN_MAX_VARS; i++)
		np->env[np->nenv++] = (struct netplan_var){ names[i], value };
}

static void plan_env(const struct sbx_config *cfg, enum netplan_for who, struct sbx_netplan *np)
{
	add_vars(np, (const char *const[]){ "SBXRUN_NETWORK" }, 1, NETPLAN_V_MODE);
	if (!np->proxy)
		return;
	add_vars(np, tool_vars, ARRAY_SIZE(tool_vars), NETPLAN_V_PROXY);
	if (cfg->proxy_env == SBX_PROXY_ENV_ALL || who == NETPLAN_POD) {
		add_vars(np, all_vars, ARRAY_SIZE(all_vars), NETPLAN_V_PROXY);
		add_vars(np, no_proxy_vars, ARRAY_SIZE(no_proxy_vars), NETPLAN_V_NO_PROXY);
	}
	if (np->ca_file)
		add_vars(np, ca_vars, ARRAY_SIZE(ca_vars), NETPLAN_V_CA);
	add_vars(np, gw_npm_vars, ARRAY_SIZE(gw_npm_vars), NETPLAN_V_GW_NPM);
	add_vars(np, gw_pypi_vars, ARRAY_SIZE(gw_pypi_vars), NETPLAN_V_GW_PYPI);
	add_vars(np, gw_host_vars, ARRAY_SIZE(gw_host_vars), NETPLAN_V_GW_HOST);
	add_vars(np, (const char *const[]){ "GOPROXY" }, 1, NETPLAN_V_GW_GO);
	add_vars(np, (const char *const[]){ "GOSUMDB" }, 1, NETPLAN_V_GW_GOSUMDB);
	add_vars(np, (const char *const[]){ "GOFLAGS" }, 1, NETPLAN_V_GW_GOFLAGS);
	add_vars(np, gw_go_empty_vars, ARRAY_SIZE(gw_go_empty_vars), NETPLAN_V_GW_GO_EMPTY);
	add_vars(np, (const char *const[]){ "CARGO_REGISTRIES_CRATES_IO_PROTOCOL" }, 1, NETPLAN_V_GW_CARGO);
}

void netplan_ca_vars(struct sbx_netplan *np)
{
	for (size_t i = 0; i < np->nenv; i++)
		if (np->env[i].value == NETPLAN_V_CA)
			return;
	add_vars(np, ca_vars, ARRAY_SIZE(ca_vars), NETPLAN_V_CA);
}

void netplan_derive(const struct sbx_config *cfg, enum netplan_for who, struct sbx_netplan *np)
{
	memset(np, 0, sizeof(*np));
	np->mode = cfg->egress;
	np->mode_name = sbx_egress_names[cfg->egress];
	np->own_netns = cfg->egress != SBX_EGRESS_FULL;
	np->dns_stub = np->own_netns && who != NETPLAN_POD;
	np->proxy = cfg->egress == SBX_EGRESS_PACKAGES;
	np->writable_root = np->proxy && who == NETPLAN_POD; /* apt and pip install into / */
	/* an empty list under packages stays empty: cli.c gave the default
	 * sets, and what is left is what the policy let through */
	np->allow = &cfg->allow;
	if (np->proxy && who == NETPLAN_SANDBOX && cfg->ca == SBX_CA_HOST)
		np->ca_file = host_ca_bundle();
	np->profile = cfg->profile ? cfg->profile : "?";
	/* a sidecar's peers are held to the rules as a sandbox is; a pod's
	 * plan compiles no list (its sidecar's does) */
	np->gateway_only = np->proxy && who != NETPLAN_POD &&
			   (cfg->pkg_allow.n || cfg->pkg_deny.n || cfg->pkg_min_age.n || cfg->pkg_not_after.n ||
			    cfg->pkg_malicious.n ||
			    cfg->pkg_offline == SBX_ON);
	np->gw_cargo = np->proxy && cfg->pkg_cargo;
	np->gw_cargo_from = cfg->pkg_cargo ? cfg->pkg_cargo : "";
	char idx[1024];
	const char *ups[NETPLAN_UPSTREAMS] = { cfg->pkg_npm, cfg->pkg_pypi, cfg->pkg_go,
					       config_go_sumdb_url(cfg->pkg_go_sumdb),
					       config_cargo_index(cfg->pkg_cargo, idx, sizeof(idx)),
					       config_cargo_dl(cfg->pkg_cargo), cfg->pkg_maven };
	for (size_t i = 0; i < NETPLAN_UPSTREAMS; i++)
		if (!np->gateway_only || config_upstream_entry(ups[i], np->gateway_entry[i],
							       sizeof(np->gateway_entry[i])) < 0)
			np->gateway_entry[i][0] = '\0';
	plan_env(cfg, who, np);
}

/* Under package rules: the gateway's upstreams (the profile's npm and pypi,
 * the image's @npm, @pypi and @apt) are kept to it, on every port and
 * whatever entry of the list names them (another spelling, a port, a
 * *.DOMAIN): one comparison, base/hostentry.c, decides. */
static int withhold_upstreams(struct sbx_netplan *np, const struct hostmatch_sets *image,
			      struct sbx_err *err)
{
	char *v[NETPLAN_UPSTREAMS + SBX_SET__COUNT], *origin[NETPLAN_UPSTREAMS + SBX_SET__COUNT] = { NULL };
	struct sbx_strlist kept = { v, origin, 0 };

	for (size_t i = 0; i < NETPLAN_UPSTREAMS; i++)
		if (np->gateway_entry[i][0])
			v[kept.n++] = np->gateway_entry[i];
	for (size_t i = 0; i < SBX_SET__COUNT; i++)
		v[kept.n++] = (char *)sbx_host_sets[i];
	return hostmatch_withhold(&np->hosts, &kept, image, err);
}

int netplan_expand(struct sbx_netplan *np, const struct hostmatch_sets *sets, struct sbx_err *err)
{
	struct hostmatch_sets image = { 0 };

	if (!np->proxy)
		return 0;
	if (sets)
		np->sets = image = *sets;
	/* cargo = @cargo with an image that names no registry: none */
	if (np->gw_cargo && !strcmp(np->gw_cargo_from, sbx_host_sets[SBX_SET_CARGO]) &&
	    !(sets && sets->cargo_index && sets->cargo_index[0]))
		np->gw_cargo = false;
	if (np->gateway_only) {
		np->sets.npm_registry = NULL;
		np->sets.pypi_index = NULL;
		np->sets.go_proxy = np->sets.go_sumdb = np->sets.cargo_index = np->sets.maven_repo = NULL;
		np->sets.apt_http_only = true;
	}
	if (hostmatch_compile(np->allow, &np->sets, &np->hosts, err) < 0 ||
	    (np->gateway_only && withhold_upstreams(np, &image, err) < 0))
		return err_wrap(err, "profile '%s'", np->profile);
	return 0;
}

void netplan_free(struct sbx_netplan *np)
{
	hostmatch_free(&np->hosts);
	free(np->ca_file);
	np->ca_file = NULL;
}
