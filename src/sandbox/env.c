/* env.c - building the command's environment (see env.h). */
#define _GNU_SOURCE
#include "sandbox/env.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "gateway/gateway.h"
#include "net/netns.h"
#include "sandbox/plan.h"

#define DEFAULT_PATH "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

void envv_set(struct sbx_envv *e, const char *kv)
{
	size_t klen = strcspn(kv, "=");

	for (size_t i = 0; i < e->n; i++) {
		if (strncmp(e->v[i], kv, klen) == 0 && e->v[i][klen] == '=') {
			free(e->v[i]);
			e->v[i] = xstrdup(kv);
			return;
		}
	}
	e->v = xrealloc(e->v, (e->n + 2) * sizeof(char *));
	e->v[e->n++] = xstrdup(kv);
	e->v[e->n] = NULL;
}

void envv_setf(struct sbx_envv *e, const char *key, const char *value)
{
	_cleanup_free_ char *kv = xasprintf("%s=%s", key, value);
	envv_set(e, kv);
}

/* The network plan's variables: the mode, and with packages egress where
 * the package tools find the proxy, the host's CA bundle and the package
 * gateway: npm and pip ask it (plain HTTP, as absolute-URI requests to the
 * proxy named by npm_config_proxy, PIP_PROXY) where the ecosystem has an
 * upstream; the rest stays CONNECT. */
static void net_env(const struct sbx_config *cfg, const struct sbx_image *img,
		    const struct sbx_netplan *np, struct sbx_envv *e)
{
	char pypi[1024], gosumdb[1024];
	bool npm = gateway_npm_upstream(cfg, img->npm_registry) != NULL;
	struct hostmatch_sets image = plan_image_sets(img);
	bool go = gateway_go_sumdb(cfg, &image, gosumdb, sizeof(gosumdb)) == 0;
	bool pip = gateway_pypi_upstream(cfg, img->pypi_index, pypi, sizeof(pypi)) != NULL;

	for (size_t i = 0; i < np->nenv; i++) {
		const struct netplan_var *v = &np->env[i];
		const char *val = NULL;
		switch (v->value) {
		case NETPLAN_V_MODE: val = np->mode_name; break;
		case NETPLAN_V_PROXY: val = SBX_PROXY_URL; break;
		case NETPLAN_V_NO_PROXY: val = NETPLAN_NO_PROXY; break;
		case NETPLAN_V_CA: val = SBX_CA_INSIDE; break;
		case NETPLAN_V_GW_NPM: val = npm ? GATEWAY_NPM_URL : NULL; break;
		case NETPLAN_V_GW_PYPI: val = pip ? GATEWAY_PYPI_URL : NULL; break;
		case NETPLAN_V_GW_HOST: val = pip ? GATEWAY_HOST : NULL; break;
		case NETPLAN_V_GW_GO: val = go ? GATEWAY_GO_URL : NULL; break;
		case NETPLAN_V_GW_GOSUMDB: val = go ? gosumdb : NULL; break;
		case NETPLAN_V_GW_GOFLAGS: val = go ? "-mod=mod" : NULL; break;
		case NETPLAN_V_GW_GO_EMPTY: val = go ? "" : NULL; break;
		case NETPLAN_V_GW_CARGO: val = np->gw_cargo ? "sparse" : NULL; break;
		}
		if (val)
			envv_setf(e, v->name, val);
	}
}

int env_build(const struct sbx_config *cfg, const struct sbx_image *img, const char *home,
	      const struct sbx_netplan *np, char ***out, struct sbx_err *err)
{
	struct sbx_envv e = { 0 };
	const char *term = getenv("TERM"), *lang = getenv("LANG");

	(void)err;
	envv_setf(&e, "PATH", DEFAULT_PATH);
	envv_setf(&e, "HOME", home);
	envv_setf(&e, "LANG", lang && !strchr(lang, '/') ? lang : "C.UTF-8");
	if (term && !strchr(term, '/'))
		envv_setf(&e, "TERM", term);
	envv_setf(&e, "container", "sbxrun");
	for (char **p = img->env; p && *p; p++)
		if (strchr(*p, '='))
			envv_set(&e, *p);
	net_env(cfg, img, np, &e);
	for (size_t i = 0; i < cfg->env.n; i++)
		envv_set(&e, cfg->env.v[i]);
	if (!e.v) {
		e.v = xcalloc(1, sizeof(char *));
	}
	*out = e.v;
	return 0;
}
