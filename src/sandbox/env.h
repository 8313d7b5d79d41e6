/* env.h - the sandbox's environment: clean, built from the image, the
 * profile and --env, never the caller's (but TERM and LANG). */
#ifndef SBX_ENV_H
#define SBX_ENV_H

#include "base/config.h"
#include "net/netplan.h"
#include "store/store.h"

/* A NULL-terminated vector of K=V; later values replace earlier ones. */
struct sbx_envv {
	char **v;
	size_t n;
};

void envv_set(struct sbx_envv *e, const char *kv);
void envv_setf(struct sbx_envv *e, const char *key, const char *value);
/* Where the host's CA bundle appears inside with ca = host. */
#define SBX_CA_INSIDE "/run/sbxrun/host-ca.crt"

/* The image's, the network plan's, then the profile's variables. */
int env_build(const struct sbx_config *cfg, const struct sbx_image *img, const char *home,
	      const struct sbx_netplan *np, char ***out, struct sbx_err *err);

#endif
