/* nonroot.h - [sandbox] user: a user beside the sandbox's root whom the
 * commands run as (nonroot.c). One host id is mapped into the sandbox (its
 * root); the user is a user namespace of its own below it, mapping the
 * user's uid to that root, over a mount namespace where all but the user's
 * own places are read-only (docs/security.md). */
#ifndef SBX_NONROOT_H
#define SBX_NONROOT_H

#include <sys/types.h>

#include "base/config.h"
#include "base/err.h"

struct sbx_plan;

struct sbx_nonroot {
	char *name;        /* NULL: the commands run as the sandbox's root */
	uid_t uid;
	gid_t gid;
	char *home;
	int create;        /* not in the image's /etc/passwd: added at start */
	char **envp;       /* the user's commands' environment */
	char **root_envp;  /* root's (--user root) */
};

/* The user of cfg->user, looked up in the image's /etc/passwd or chosen
 * (uid 1000, else the lowest free one above), its environment, and
 * whether the plan's command runs as it (plan->as_user). After the
 * environment is built (plan->envp). Bad input: -1 with err. */
int nonroot_plan(const struct sbx_config *cfg, struct sbx_plan *plan, struct sbx_err *err);
/* A session's request for one command: who (NULL: the session's default,
 * "root"/"0", or the user's name or uid) to *as_user. */
int nonroot_pick(const struct sbx_plan *plan, const char *who, int *as_user, struct sbx_err *err);
/* The environment of a command of that identity (not owned). */
char **nonroot_env(const struct sbx_plan *plan, int as_user);
/* Inside, as the sandbox's root, after pivot_root: the user's lines in
 * /etc/passwd, group (shadow, gshadow where the image has them), its HOME
 * and the package managers' settings there (pip, npm), each only when
 * missing: the sandbox's own layer, never the image. */
int nonroot_setup(const struct sbx_plan *plan, struct sbx_err *err);
/* A command's init, before it drops its capabilities, when plan->as_user:
 * a mount namespace (own_mntns: a new one; else the one it has) where
 * everything but HOME, /tmp, /var/tmp, /dev, /proc, the workspace and
 * writable binds is read-only, then a user namespace mapping the user's
 * uid and gid to the sandbox's root. */
int nonroot_enter(const struct sbx_plan *plan, int own_mntns, struct sbx_err *err);
void nonroot_free(struct sbx_nonroot *u);

#endif
