/* env.c - building the command's environment (see env.h). */
#define _GNU_SOURCE
#include "sandbox/env.h"

#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "net/netns.h"

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

/* packages egress: only the package tools are pointed at the proxy, so
 * other code keeps getting "Network is unreachable" (proxy_env = tools). */
static void proxy_env(const struct sbx_config *cfg, const char *ca, struct sbx_envv *e)
{
	static const char *const tools[] = { "PIP_PROXY", "npm_config_proxy", "npm_config_https_proxy",
					     "YARN_HTTP_PROXY", "YARN_HTTPS_PROXY", "CARGO_HTTP_PROXY" };
	static const char *const all[] = { "http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY" };
	static const char *const cas[] = { "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT",
					   "NODE_EXTRA_CA_CERTS", "npm_config_cafile", "CARGO_HTTP_CAINFO" };

	envv_setf(e, "SBXRUN_NETWORK", sbx_egress_names[cfg->egress]);
	if (cfg->egress != SBX_EGRESS_PACKAGES)
		return;
	envv_setf(e, "SBXRUN_PROXY", SBX_PROXY_URL);
	for (size_t i = 0; i < ARRAY_SIZE(tools); i++)
		envv_setf(e, tools[i], SBX_PROXY_URL);
	if (cfg->proxy_env == SBX_PROXY_ENV_ALL) {
		for (size_t i = 0; i < ARRAY_SIZE(all); i++)
			envv_setf(e, all[i], SBX_PROXY_URL);
		envv_setf(e, "no_proxy", "localhost,127.0.0.1");
		envv_setf(e, "NO_PROXY", "localhost,127.0.0.1");
	}
	for (size_t i = 0; ca && i < ARRAY_SIZE(cas); i++)
		envv_setf(e, cas[i], ca);
}

int env_build(const struct sbx_config *cfg, const struct sbx_image *img, const char *home,
	      const char *ca, char ***out, struct sbx_err *err)
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
	proxy_env(cfg, ca, &e);
	for (size_t i = 0; i < cfg->env.n; i++)
		envv_set(&e, cfg->env.v[i]);
	if (!e.v) {
		e.v = xcalloc(1, sizeof(char *));
	}
	*out = e.v;
	return 0;
}
