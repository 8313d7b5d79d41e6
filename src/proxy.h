/* proxy.h - the packages egress proxy, served from the host side's loop:
 * its only door is a listening socket the sandbox made on its own
 * 127.0.0.1 and handed over; connections go out from the host's network
 * namespace, to allowed hosts only. */
#ifndef SBX_PROXY_H
#define SBX_PROXY_H

#include <stdint.h>

#include "config.h"
#include "err.h"

struct sbx_proxy;

struct sbx_proxy_conf {
	const char *profile;          /* named in refusals */
	const struct sbx_strlist *allow;
	char *const *apt_hosts;       /* the image's package sources (@apt) */
	const char *npm_registry;     /* @npm: URL(s), space-separated */
	const char *pypi_index;       /* @pypi: URL(s), space-separated */
	int events_fd;                /* -1, or where JSON-lines events go */
};

struct sbx_proxy_stats {
	uint64_t allowed, refused, bytes_up, bytes_down;
};

int proxy_new(const struct sbx_proxy_conf *conf, int listen_fd, struct sbx_proxy **out,
	      struct sbx_err *err);
/* An epoll fd: readable when proxy_dispatch has work. */
int proxy_pollfd(const struct sbx_proxy *p);
/* Milliseconds until a connection times out (-1: none). */
int proxy_timeout_ms(const struct sbx_proxy *p);
/* Non-blocking: handles what is ready and what timed out. */
void proxy_dispatch(struct sbx_proxy *p);
void proxy_stats(const struct sbx_proxy *p, struct sbx_proxy_stats *s);
void proxy_free(struct sbx_proxy *p);

#endif
