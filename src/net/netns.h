/* netns.h - the sandbox's own network namespace. */
#ifndef SBX_NETNS_H
#define SBX_NETNS_H

#include "base/err.h"

/* Child side: brings `lo` up (it starts down in a new namespace). */
int netns_loopback_up(struct sbx_err *err);

/* Where package managers inside find the egress proxy. */
#define SBX_PROXY_ADDR "127.0.0.1"
#define SBX_PROXY_PORT 3128
#define SBX_PROXY_URL "http://127.0.0.1:3128"

/* Child side, with lo up: the listening socket that is the proxy's only
 * door; the host side accepts on it and connects out from its namespace. */
int netns_proxy_door(struct sbx_err *err);

/* Where name lookups inside go (the sandbox's /etc/resolv.conf names it). */
#define SBX_DNS_ADDR "127.0.0.53"
#define SBX_DNS_PORT 53
/* also on lo, so that IPv6 counts as configured (never in resolv.conf) */
#define SBX_DNS_ADDR6 "fd00:53::53"

/* Child side, with lo up and before capabilities are dropped (port 53 is
 * privileged): the UDP socket the host side's DNS stub answers on. */
int netns_dns_socket(struct sbx_err *err);

#endif
