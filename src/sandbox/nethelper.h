/* nethelper.h - the sandbox's network namespace, made by a helper beside
 * the child while it builds the file system (nethelper.c). */
#ifndef SBX_NETHELPER_H
#define SBX_NETHELPER_H

#include <sys/types.h>

#include "base/err.h"
#include "net/netplan.h"

struct nethelper {
	pid_t pid; /* -1: none started */
	int sock;
};

/* Forks the helper: a new network namespace, lo up, the DNS stub's socket
 * and, with np->proxy, the proxy's door. */
int nethelper_start(const struct sbx_netplan *np, struct nethelper *h, struct sbx_err *err);
/* Joins the helper's namespace and hands the DNS stub's socket and the
 * proxy's door to the host side over sync; reaps the helper. */
int nethelper_join(struct nethelper *h, int sync, struct sbx_err *err);

#endif
