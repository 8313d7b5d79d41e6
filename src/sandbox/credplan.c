/* credplan.c - see credplan.h. */
#define _GNU_SOURCE
#include "sandbox/credplan.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/paths.h"
#include "base/util.h"
#include "sandbox/env.h"

#define IMAGE_BUNDLE "/etc/ssl/certs/ca-certificates.crt"

static int make_bundle_file(struct sbx_credplan *cp, struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;

	if (paths_state_dir(&dir, err) < 0)
		return -1;
	cp->bundle = xasprintf("%s/cred-ca-XXXXXX", dir);
	int fd = mkostemp(cp->bundle, O_CLOEXEC);
	if (fd < 0) {
		free(steal_ptr(cp->bundle));
		return err_sys(err, "credentials: the CA bundle in '%s'", dir);
	}
	/* read inside by whatever uid the command has */
	if (fchmod(fd, 0644) < 0) {
		close(fd);
		return err_sys(err, "credentials: chmod '%s'", cp->bundle);
	}
	close(fd);
	return 0;
}

int credplan_make(const struct sbx_config *cfg, struct sbx_netplan *np, struct sbx_credplan **out,
		  struct sbx_err *err)
{
	struct sbx_credplan *cp;

	*out = NULL;
	if (!cfg->creds.n)
		return 0;
	if (!np->proxy)
		return err_set(err, 0, "%s: [credentials] needs egress = packages (the proxy puts the secret on)",
			       cfg->creds.origin[0]);
	cp = xcalloc(1, sizeof(*cp));
	if (cred_load(&cfg->creds, &cp->cr, err) < 0 || make_bundle_file(cp, err) < 0) {
		credplan_free(cp);
		return -1;
	}
	cp->base = steal_ptr(np->ca_file);
	np->ca_file = xstrdup(cp->bundle);
	netplan_ca_vars(np);
	*out = cp;
	return 0;
}

void credplan_env(const struct sbx_credplan *cp, char ***envp)
{
	struct sbx_envv e = { *envp, 0 };

	while (e.v[e.n])
		e.n++;
	for (size_t i = 0; cp && i < cred_count(cp->cr); i++)
		envv_setf(&e, cred_var(cp->cr, i), cred_placeholder(cp->cr, i));
	*envp = e.v;
}

/* The bundle the CA's certificate is appended to: the host's or the image's. */
static int open_base(const struct sbx_credplan *cp, int rootfs_fd, struct sbx_err *err)
{
	struct sbx_err e2;
	int fd = cp->base ? open(cp->base, O_RDONLY | O_CLOEXEC) : inroot_open(rootfs_fd, IMAGE_BUNDLE, O_RDONLY, 0, &e2);

	if (fd < 0 && cp->base)
		return err_sys(err, "credentials: '%s'", cp->base);
	return fd; /* an image without a bundle: the CA alone */
}

int credplan_ca(struct sbx_credplan *cp, int rootfs_fd, struct sbx_err *err)
{
	char buf[65536];
	ssize_t n;

	/* a second try (another tier) was cloned while the first CA existed:
	 * a new one, which that process never held */
	tlsca_free(steal_ptr(cp->ca));
	if (tlsca_new(cred_hosts(cp->cr), &cp->ca, err) < 0)
		return -1;
	_cleanup_close_ int out = open(cp->bundle, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int in = open_base(cp, rootfs_fd, err);
	if (out < 0)
		return err_sys(err, "credentials: '%s'", cp->bundle);
	if (in < 0 && cp->base)
		return -1;
	while (in >= 0 && (n = read(in, buf, sizeof(buf))) > 0)
		if (write_all(out, buf, (size_t)n) < 0)
			return err_sys(err, "credentials: write '%s'", cp->bundle);
	const char *pem = tlsca_pem(cp->ca);
	if (write_all(out, "\n", 1) < 0 || write_all(out, pem, strlen(pem)) < 0)
		return err_sys(err, "credentials: write '%s'", cp->bundle);
	return 0;
}

void credplan_free(struct sbx_credplan *cp)
{
	if (!cp)
		return;
	tlsca_free(cp->ca);
	cred_free(cp->cr);
	if (cp->bundle)
		unlink(cp->bundle);
	free(cp->bundle);
	free(cp->base);
	free(cp);
}
