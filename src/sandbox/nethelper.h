/* nethelper.h - the sandbox's network namespace, made by a thread beside
 * the child's main thread while it builds the file system (nethelper.c). */
#ifndef SBX_NETHELPER_H
#define SBX_NETHELPER_H

#include <pthread.h>

#include "base/err.h"
#include "net/netplan.h"

struct nethelper {
	int started;
	pthread_t thread;
	const struct sbx_netplan *np;
	int fds[3];         /* the namespace, the DNS stub's socket, the proxy's door (or -1) */
	struct sbx_err err; /* the thread's failure */
};

/* Starts the thread: a new network namespace, lo up, the DNS stub's
 * socket and, with np->proxy, the proxy's door. */
int nethelper_start(const struct sbx_netplan *np, struct nethelper *h, struct sbx_err *err);
/* Waits for the thread, joins its namespace and hands the DNS stub's
 * socket and the proxy's door to the host side over sync. */
int nethelper_join(struct nethelper *h, int sync, struct sbx_err *err);

#endif
