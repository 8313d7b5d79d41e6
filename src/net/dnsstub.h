/* dnsstub.h - the host side's answer to every name lookup a sandbox
 * without full egress makes: on a UDP socket the sandbox made in its own
 * network namespace (127.0.0.53:53, named by its /etc/resolv.conf), never
 * forwarded anywhere. */
#ifndef SBX_DNSSTUB_H
#define SBX_DNSSTUB_H

#include "base/err.h"

struct sbx_dnsstub;

/* fd: the socket the sandbox handed over; the stub takes it (closed by
 * dnsstub_free). hostname: the sandbox's, answered with 127.0.1.1.
 * events_fd: -1, or where one JSON line per lookup goes. */
int dnsstub_new(int fd, const char *profile, const char *hostname, int events_fd,
		struct sbx_dnsstub **out, struct sbx_err *err);
int dnsstub_pollfd(const struct sbx_dnsstub *d);
/* Answers the queries waiting, without blocking; nothing a sandbox sends
 * makes it fail. */
void dnsstub_dispatch(struct sbx_dnsstub *d);
void dnsstub_free(struct sbx_dnsstub *d);

#endif
