/* proxy_cred.c - the egress proxy's side of credentials (net/cred.h):
 * the gate every request head passes, and the hand-over of a CONNECT to a
 * bound host to the TLS relay (net/tlsmitm.h). */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>

#include "base/util.h"
#include "net/cred.h"
#include "net/proxy_conn.h"

bool proxy_cred_gate(struct sbx_proxy *p, struct conn *c, char *why, size_t size)
{
	const char *var = NULL;
	char *out = NULL;
	size_t olen = 0;
	enum cred_verdict v = c->req.kind == HTTPREQ_CONNECT
		? (cred_carried(p->cred, c->head, c->req.head_len, &var) ? CRED_REFUSED : CRED_NONE)
		: cred_rewrite(p->cred, c->host, c->req.port, c->req.upstream, c->req.upstream_len, &out, &olen, &var);

	if (v == CRED_USED) {
		explicit_bzero(c->req.upstream, c->req.upstream_len);
		free(c->req.upstream);
		c->req.upstream = out;
		c->req.upstream_len = olen;
		c->cred_var = var; /* told when it is relayed */
	}
	if (v != CRED_REFUSED)
		return true;
	proxy_event_credential(p->ev.fd, var, c->host, c->req.port, "refused");
	snprintf(why, size, "the placeholder of %s is bound to another host (or sent in a URL)", var);
	return false;
}

int proxy_cred_start(struct sbx_proxy *p, struct conn *c, const char *ok, size_t len, const char **why)
{
	struct sbx_err err;

	if (!p->mitm || c->req.kind != HTTPREQ_CONNECT || !cred_binds(p->cred, c->host, c->req.port)) {
		if (c->cred_var)
			proxy_event_credential(p->ev.fd, c->cred_var, c->host, c->req.port, "used");
		return 0;
	}
	if (c->head_len != c->req.head_len) {
		*why = "bytes sent before the tunnel was established";
		return -1;
	}
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->cfd, NULL);
	epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->ufd, NULL);
	if (send(c->cfd, ok, len, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)len &&
	    tlsmitm_start(p->mitm, steal_fd(c->cfd), steal_fd(c->ufd), c->host, c->req.port, &err) == 0)
		p->count.allowed++;
	proxy_conn_kill(p, c);
	return 1;
}

static bool cut_one(void *arg, const char *host, int port)
{
	struct sbx_proxy *p = arg;
	char buf[300];
	const char *why = proxy_rules_refusal(&p->rules, host, port, buf, sizeof(buf));

	if (why)
		proxy_event_cut(&p->ev, host, port, why);
	return why != NULL;
}

void proxy_cred_cut(struct sbx_proxy *p)
{
	if (p->mitm)
		tlsmitm_cut(p->mitm, cut_one, p);
}
