/* credplan.h - a sandbox's [credentials] (credplan.c): the secrets and
 * placeholders read while planning (net/cred.h), and the CA made on the
 * host side after the clone and before GO, so that no process of the
 * sandbox ever held its key; its certificate joins the CA bundle the
 * sandbox trusts (the file bound at /run/sbxrun/host-ca.crt, named by
 * SSL_CERT_FILE, NODE_EXTRA_CA_CERTS, GIT_SSL_CAINFO and the rest). */
#ifndef SBX_CREDPLAN_H
#define SBX_CREDPLAN_H

#include "base/config.h"
#include "base/err.h"
#include "net/cred.h"
#include "net/netplan.h"
#include "net/tlsca.h"

struct sbx_credplan {
	struct sbx_creds *cr;
	struct sbx_tlsca *ca;  /* NULL until credplan_ca */
	char *bundle;          /* host path of the bundle the sandbox gets */
	char *base;            /* the bundle it extends (the host's), or NULL: the image's */
};

/* NULL *out when the profile binds nothing. Sets the CA bundle of np to
 * the one credplan_ca fills (before env_build reads np). */
int credplan_make(const struct sbx_config *cfg, struct sbx_netplan *np, struct sbx_credplan **out,
		  struct sbx_err *err);
/* Each bound variable set to its placeholder in *envp (after env_build:
 * over the profile's and --env's). cp NULL: nothing. */
void credplan_env(const struct sbx_credplan *cp, char ***envp);
/* Host side, after clone, before GO: the CA, and the bundle written with
 * its certificate after the host's (or the image's, at rootfs_fd). */
int credplan_ca(struct sbx_credplan *cp, int rootfs_fd, struct sbx_err *err);
void credplan_free(struct sbx_credplan *cp);

#endif
