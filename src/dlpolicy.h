/* dlpolicy.h - which URLs `sbxrun download` may fetch: hosts from the
 * profile's [download] allow list, and never a loopback, link-local,
 * metadata or (unless named exactly) private address. */
#ifndef SBX_DLPOLICY_H
#define SBX_DLPOLICY_H

#include <sys/socket.h>

#include "config.h"

#define SBX_HOST_INTERNAL "host.sbxrun.internal"

/* Returns 1 if host:port is on the list; *exact says it was named exactly
 * (which private addresses need). */
int dlpolicy_host_allowed(const struct sbx_strlist *allow, const char *host, int port, int *exact);
/* Returns 1 if a connection to sa may be made; *why says why not. */
int dlpolicy_addr_allowed(const struct sockaddr *sa, int exact, int internal, const char **why);

#endif
