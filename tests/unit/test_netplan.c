/* test_netplan.c - the network plan derived from a profile and an image's
 * package sources: each mode's steps, the default sets, the sets expanded
 * from the image, and what a sandbox, `sbxrun proxy` and a pod get. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/options.h"
#include "base/util.h"
#include "net/netplan.h"
#include "unit.h"

static void cfg_make(struct sbx_config *cfg, const char *egress, const char *const *allow,
		     const char *proxy_env, const char *ca)
{
	struct sbx_err err;
	config_init(cfg);
	CHECK(config_set(cfg, options_by_key(SBX_K_PROFILE), "lab", "t", 1, &err) == 0);
	CHECK(config_set(cfg, options_by_key(SBX_K_EGRESS), egress, "t", 0, &err) == 0);
	for (size_t i = 0; allow && allow[i]; i++)
		CHECK(config_set(cfg, options_by_key(SBX_K_ALLOW), allow[i], "t", 0, &err) == 0);
	if (proxy_env)
		CHECK(config_set(cfg, options_by_key(SBX_K_PROXY_ENV), proxy_env, "t", 0, &err) == 0);
	if (ca)
		CHECK(config_set(cfg, options_by_key(SBX_K_CA), ca, "t", 0, &err) == 0);
}

/* The variable's kind, or -1 when the plan does not set it. */
static int var(const struct sbx_netplan *np, const char *name)
{
	for (size_t i = 0; i < np->nenv; i++)
		if (!strcmp(np->env[i].name, name))
			return (int)np->env[i].value;
	return -1;
}

static enum hostmatch_result result(const struct sbx_netplan *np, const char *host, int port)
{
	struct hostmatch_grant g;
	return hostmatch_check(&np->hosts, host, port, &g);
}

static int allowed(const struct sbx_netplan *np, const char *host, int port)
{
	return result(np, host, port) == HOSTMATCH_OK;
}

static const char *const apt[] = { "deb.example.org", "http://security.example.org/debian", NULL };
static const struct hostmatch_sets sets = { apt, "https://npm.example.org/",
					    "https://pypi.example.org/simple https://files.example.org" };

static void test_modes(void)
{
	static const struct { const char *mode; int netns, dns, proxy; } t[] = {
		{ "none", 1, 1, 0 }, { "packages", 1, 1, 1 }, { "full", 0, 0, 0 },
	};
	for (size_t i = 0; i < 3; i++) {
		struct sbx_config cfg;
		struct sbx_netplan np;
		cfg_make(&cfg, t[i].mode, sbx_host_sets, NULL, "image");
		netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
		CHECK_STR(np.mode_name, t[i].mode);
		CHECK(np.own_netns == t[i].netns);
		CHECK(np.dns_stub == t[i].dns);
		CHECK(np.proxy == t[i].proxy);
		CHECK(!np.writable_root);
		CHECK(var(&np, "SBXRUN_NETWORK") == NETPLAN_V_MODE);
		CHECK((var(&np, "SBXRUN_PROXY") == NETPLAN_V_PROXY) == t[i].proxy);
		CHECK((var(&np, "PIP_PROXY") == NETPLAN_V_PROXY) == t[i].proxy);
		CHECK(var(&np, "https_proxy") < 0);   /* proxy_env = tools */
		CHECK(var(&np, "SSL_CERT_FILE") < 0); /* ca = image */
		CHECK(netplan_expand(&np, &sets, &(struct sbx_err){ 0 }) == 0);
		CHECK((np.hosts.n > 0) == t[i].proxy); /* only a proxy needs the list */
		netplan_free(&np);
		config_free(&cfg);
	}
}

/* The three sets (what cli.c gives a sandbox with no list), expanded from
 * the image; a list the policy emptied stays empty. */
static void test_default_sets(void)
{
	struct sbx_config cfg;
	struct sbx_netplan np;
	struct sbx_err err = { 0 };

	cfg_make(&cfg, "packages", NULL, NULL, "image");
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(np.allow->n == 0);
	CHECK(netplan_expand(&np, &sets, &err) == 0);
	CHECK(!allowed(&np, "npm.example.org", 443));
	netplan_free(&np);
	config_free(&cfg);
	cfg_make(&cfg, "packages", sbx_host_sets, NULL, "image");
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(np.allow->n == SBX_SET__COUNT);
	for (int i = 0; i < SBX_SET__COUNT; i++)
		CHECK_STR(np.allow->v[i], sbx_host_sets[i]);
	CHECK(netplan_expand(&np, &sets, &err) == 0);
	CHECK(allowed(&np, "deb.example.org", 80));
	CHECK(allowed(&np, "security.example.org", 443));
	CHECK(allowed(&np, "npm.example.org", 443));
	CHECK(allowed(&np, "pypi.example.org", 443));
	CHECK(allowed(&np, "files.example.org", 443));
	CHECK(!allowed(&np, "evil.example.org", 443));
	CHECK(!allowed(&np, "deb.example.org", 22));
	netplan_free(&np);
	/* no image sources: the sets expand to nothing */
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(netplan_expand(&np, NULL, &err) == 0);
	CHECK(np.hosts.n == 0);
	netplan_free(&np);
	config_free(&cfg);
}

/* A list names what it names: @npm alone leaves apt out; hosts are exact. */
static void test_listed(void)
{
	static const char *const allow[] = { "@npm", "mirror.example.org:8080", NULL };
	struct sbx_config cfg;
	struct sbx_netplan np;
	struct sbx_err err = { 0 };

	cfg_make(&cfg, "packages", allow, NULL, "image");
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(np.allow == &cfg.allow);
	CHECK(netplan_expand(&np, &sets, &err) == 0);
	CHECK(allowed(&np, "npm.example.org", 443));
	CHECK(!allowed(&np, "deb.example.org", 80));
	CHECK(allowed(&np, "mirror.example.org", 8080));
	CHECK(!allowed(&np, "mirror.example.org", 443));
	netplan_free(&np);
	config_free(&cfg);
}

/* proxy_env = all adds the generic variables; ca = host the CA ones, when
 * the host has a bundle (SSL_CERT_FILE names one here). */
static void test_env(void)
{
	struct sbx_config cfg;
	struct sbx_netplan np;

	setenv("SSL_CERT_FILE", "/proc/self/status", 1);
	cfg_make(&cfg, "packages", NULL, "all", "host");
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(var(&np, "https_proxy") == NETPLAN_V_PROXY);
	CHECK(var(&np, "NO_PROXY") == NETPLAN_V_NO_PROXY);
	CHECK_STR(np.ca_file, "/proc/self/status");
	CHECK(var(&np, "REQUESTS_CA_BUNDLE") == NETPLAN_V_CA);
	CHECK(var(&np, "SBXRUN_NETWORK") == NETPLAN_V_MODE && np.env[0].value == NETPLAN_V_MODE);
	netplan_free(&np);
	config_free(&cfg);
	/* none: no proxy, no CA, whatever ca says */
	cfg_make(&cfg, "none", NULL, "all", "host");
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(np.ca_file == NULL && np.nenv == 1);
	netplan_free(&np);
	config_free(&cfg);
	unsetenv("SSL_CERT_FILE");
}

/* `sbxrun proxy`: the list as cli.c left it (an empty one stays empty: a
 * policy may have dropped the default sets); never a CA or variables of use. */
static void test_proxy(void)
{
	struct sbx_config cfg;
	struct sbx_netplan np;
	struct sbx_err err = { 0 };

	cfg_make(&cfg, "packages", NULL, NULL, "host");
	netplan_derive(&cfg, NETPLAN_PROXY, &np);
	CHECK(np.proxy && np.allow == &cfg.allow && np.ca_file == NULL);
	CHECK(netplan_expand(&np, &sets, &err) == 0);
	CHECK(np.hosts.n == 0);
	netplan_free(&np);
	config_free(&cfg);
	cfg_make(&cfg, "none", NULL, NULL, NULL);
	netplan_derive(&cfg, NETPLAN_PROXY, &np);
	CHECK(!np.proxy);
	config_free(&cfg);
}

/* Under a package rule `sbxrun proxy` (a pod's sidecar) closes the ways
 * around the gateway as a sandbox does: @npm, @pypi and the profile's
 * upstream entry leave its list, @apt stays plain HTTP only. */
static void test_proxy_under_rules(void)
{
	static const char *const allow[] = { "@apt", "@npm", "@pypi", "mirror.example.org:8443",
					     "other.example.org", NULL };
	enum netplan_for who[] = { NETPLAN_SANDBOX, NETPLAN_PROXY };
	struct sbx_config cfg;
	struct sbx_netplan np;
	struct sbx_err err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(who); i++) {
		cfg_make(&cfg, "packages", allow, NULL, "image");
		CHECK(config_set(&cfg, options_by_key(SBX_K_PKG_NPM), "https://mirror.example.org:8443/npm/",
				 "t", 0, &err) == 0);
		CHECK(config_set(&cfg, options_by_key(SBX_K_PKG_ALLOW), "npm:left-pad", "t", 0, &err) == 0);
		netplan_derive(&cfg, who[i], &np);
		CHECK(np.gateway_only);
		CHECK(netplan_expand(&np, &sets, &err) == 0);
		CHECK(!allowed(&np, "npm.example.org", 443));
		CHECK(!allowed(&np, "pypi.example.org", 443));
		CHECK(!allowed(&np, "mirror.example.org", 8443));
		/* apt's plain HTTP: the gateway takes it (the proxy hands it over) */
		CHECK(result(&np, "deb.example.org", 80) == HOSTMATCH_GATEWAY_ONLY);
		CHECK(!allowed(&np, "deb.example.org", 443));
		CHECK(allowed(&np, "other.example.org", 443));
		/* the gateway's endpoints for the package managers */
		CHECK(var(&np, "NPM_CONFIG_REGISTRY") == NETPLAN_V_GW_NPM);
		CHECK(var(&np, "UV_DEFAULT_INDEX") == NETPLAN_V_GW_PYPI);
		CHECK(var(&np, "PIP_TRUSTED_HOST") == NETPLAN_V_GW_HOST);
		netplan_free(&np);
		config_free(&cfg);
	}
	/* no rule: the ways stay open */
	cfg_make(&cfg, "packages", allow, NULL, "image");
	netplan_derive(&cfg, NETPLAN_PROXY, &np);
	CHECK(!np.gateway_only);
	CHECK(netplan_expand(&np, &sets, &err) == 0);
	CHECK(allowed(&np, "npm.example.org", 443));
	netplan_free(&np);
	config_free(&cfg);
}

/* Issue 34, point 2: under package rules the gateway's upstreams are kept
 * to it whatever spelling of them the allow list has (the policy accepts
 * each of these as the upstream's own entry): upper case, a trailing dot,
 * the default port named, a *.DOMAIN over it, an IP literal spelt another
 * way; and the image's upstreams named by hand. Other hosts stay open. */
static void test_rules_withhold_every_spelling(void)
{
	static const struct { const char *upstream, *entry, *host; int port; } t[] = {
		{ "https://registry.example.org/", "REGISTRY.EXAMPLE.ORG", "registry.example.org", 443 },
		{ "https://registry.example.org/", "registry.example.org.", "registry.example.org", 443 },
		{ "https://registry.example.org/", "REGISTRY.EXAMPLE.ORG.:443", "registry.example.org", 443 },
		{ "https://registry.example.org/", "registry.example.org:80", "registry.example.org", 80 },
		{ "https://registry.example.org/", "registry.example.org:8443", "registry.example.org", 8443 },
		{ "https://registry.example.org/", "*.example.org", "registry.example.org", 443 },
		{ "https://registry.example.org/", "*.EXAMPLE.ORG.", "registry.example.org", 80 },
		{ "https://Registry.Example.Org./npm/", "registry.example.org", "registry.example.org", 443 },
		{ "https://registry.example.org:8443/", "registry.example.org", "registry.example.org", 443 },
		{ "https://[2001:db8::5]/", "[2001:DB8:0:0::5]:443", "2001:db8::5", 443 },
		{ "https://[2001:db8::5]/", "[2001:db8::5]", "2001:db8::5", 80 },
		{ "https://[::ffff:192.0.2.5]/", "192.0.2.5:443", "192.0.2.5", 443 },
		{ "https://192.0.2.5/", "[::ffff:192.0.2.5]", "192.0.2.5", 443 },
		{ "http://host.sbxrun.internal:4873/", "HOST.SBXRUN.INTERNAL.:4873", "host.sbxrun.internal", 4873 },
		/* the image's own upstreams (@npm, @pypi and its file host, @apt) */
		{ NULL, "NPM.example.org.", "npm.example.org", 443 },
		{ NULL, "files.example.org:443", "files.example.org", 443 },
		{ NULL, "*.example.org", "pypi.example.org", 443 },
		{ NULL, "deb.example.org:443", "deb.example.org", 443 },
		{ NULL, "Security.Example.Org.:80", "security.example.org", 80 },
	};
	struct sbx_config cfg;
	struct sbx_netplan np;
	struct sbx_err err = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const char *const allow[] = { "@apt", t[i].entry, "other.example.net", NULL };
		cfg_make(&cfg, "packages", allow, NULL, "image");
		if (t[i].upstream)
			CHECK(config_set(&cfg, options_by_key(SBX_K_PKG_NPM), t[i].upstream, "t", 0, &err) == 0);
		CHECK(config_set(&cfg, options_by_key(SBX_K_PKG_DENY), "npm:evil", "t", 0, &err) == 0);
		netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
		CHECK(netplan_expand(&np, &sets, &err) == 0);
		enum hostmatch_result r = result(&np, t[i].host, t[i].port);
		if (r != HOSTMATCH_GATEWAY_ONLY)
			fprintf(stderr, "entry '%s', upstream %s: %s:%d -> %d\n", t[i].entry,
				t[i].upstream ? t[i].upstream : "the image's", t[i].host, t[i].port, r);
		CHECK(r == HOSTMATCH_GATEWAY_ONLY);
		CHECK(allowed(&np, "other.example.net", 443));
		netplan_free(&np);
		/* without a rule the entry lets the host through */
		config_free(&cfg);
		cfg_make(&cfg, "packages", allow, NULL, "image");
		netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
		CHECK(netplan_expand(&np, &sets, &err) == 0);
		r = result(&np, t[i].host, t[i].port);
		CHECK(r != HOSTMATCH_GATEWAY_ONLY);
		netplan_free(&np);
		config_free(&cfg);
	}
	/* Cargo's index and its download host alike: the gateway's alone */
	const char *const callow[] = { "index.example.org", "dl.example.org", "other.example.net", NULL };
	cfg_make(&cfg, "packages", callow, NULL, "image");
	CHECK(config_set(&cfg, options_by_key(SBX_K_PKG_CARGO), "https://index.example.org/ https://dl.example.org/c",
			 "t", 0, &err) == 0);
	CHECK(config_set(&cfg, options_by_key(SBX_K_PKG_MIN_AGE), "1d", "t", 0, &err) == 0);
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(np.gw_cargo);
	CHECK(netplan_expand(&np, &sets, &err) == 0);
	CHECK(result(&np, "index.example.org", 443) == HOSTMATCH_GATEWAY_ONLY);
	CHECK(result(&np, "dl.example.org", 443) == HOSTMATCH_GATEWAY_ONLY);
	CHECK(allowed(&np, "other.example.net", 443));
	netplan_free(&np);
	config_free(&cfg);
}

/* A pod: every proxy variable whatever proxy_env says, no CA (the image's),
 * no DNS stub (the cluster's), a writable root under packages. */
static void test_pod(void)
{
	struct sbx_config cfg;
	struct sbx_netplan np;

	cfg_make(&cfg, "packages", NULL, "tools", "host");
	netplan_derive(&cfg, NETPLAN_POD, &np);
	CHECK(np.proxy && np.own_netns && !np.dns_stub && np.writable_root);
	CHECK(var(&np, "HTTPS_PROXY") == NETPLAN_V_PROXY);
	CHECK(var(&np, "no_proxy") == NETPLAN_V_NO_PROXY);
	CHECK(var(&np, "SSL_CERT_FILE") < 0 && np.ca_file == NULL);
	CHECK(var(&np, "PIP_INDEX_URL") == NETPLAN_V_GW_PYPI);
	CHECK(np.hosts.n == 0);
	config_free(&cfg);
	cfg_make(&cfg, "full", NULL, NULL, NULL);
	netplan_derive(&cfg, NETPLAN_POD, &np);
	CHECK(!np.own_netns && !np.proxy && !np.writable_root && np.nenv == 1);
	config_free(&cfg);
}

/* A source of the image that names what only the caller may grant (the
 * host's loopback) is left out of the expanded list. */
static void test_image_refusal(void)
{
	static const char *const bad[] = { "127.0.0.1:3142", "deb.example.org", NULL };
	struct hostmatch_sets s = { bad, NULL, NULL };
	struct sbx_config cfg;
	struct sbx_netplan np;
	struct sbx_err err = { 0 };

	cfg_make(&cfg, "packages", sbx_host_sets, NULL, "image");
	netplan_derive(&cfg, NETPLAN_SANDBOX, &np);
	CHECK(netplan_expand(&np, &s, &err) == 0);
	CHECK(np.hosts.n == 1 && allowed(&np, "deb.example.org", 443));
	netplan_free(&np);
	config_free(&cfg);
}

int main(void)
{
	test_modes();
	test_default_sets();
	test_listed();
	test_env();
	test_proxy();
	test_proxy_under_rules();
	test_rules_withhold_every_spelling();
	test_pod();
	test_image_refusal();
	return unit_done("test_netplan");
}
