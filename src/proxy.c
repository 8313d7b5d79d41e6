/* proxy.c - the packages egress proxy (see proxy.h). One loop, no threads
 * but the resolver's: each connection reads a request head, is checked
 * (name before any lookup, every address after it), connects out from the
 * host's namespace, and then relays bytes both ways. A plain HTTP request is
 * sent upstream with "Connection: close" and only its declared body, so
 * every request on a connection is checked; CONNECT is a tunnel (no TLS
 * interception). Whatever comes from inside is untrusted: heads are capped,
 * parsed strictly, and garbage gets a 400, never a crash. */
#define _GNU_SOURCE
#include "proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostmatch.h"
#include "httpreq.h"
#include "log.h"
#include "resolver.h"
#include "util.h"

#define MAX_CONNS 128
#define RELAY_BUF 65536
#define MAX_ADDRS 8
#define ID_LISTEN (~0ULL)
#define ID_RESOLVER (~1ULL)

enum { C_FREE, C_HEAD, C_RESOLVE, C_CONNECT, C_RELAY };

struct buf {
	char d[RELAY_BUF];
	size_t off, len;
};

struct conn {
	int state;
	int cfd, ufd;
	char in[SBX_HTTP_HEAD_MAX];
	size_t inlen;
	struct sbx_http_req req;
	char host[256];
	int port, exact, internal;
	struct sockaddr_storage addr[MAX_ADDRS];
	int naddr, next;
	struct buf up, dn;
	int c_eof, u_eof, u_shut;
	uint64_t body_left;
	uint64_t bytes_up, bytes_down;
	uint64_t deadline;
};

struct sbx_proxy {
	char *profile;
	int events_fd;
	struct sbx_allow allow;
	int listen, ep;
	struct sbx_resolver *res;
	struct conn *c;
	char **logged; /* refused hosts already said on stderr */
	size_t nlogged;
	struct sbx_proxy_stats st;
};

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void event(struct sbx_proxy *p, const char *host, int port, const char *decision,
		  const char *reason, const struct conn *c)
{
	if (p->events_fd < 0)
		return;
	char when[40];
	time_t t = time(NULL);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "time", json_object_new_string(when));
	json_object_object_add(o, "event", json_object_new_string("egress"));
	json_object_object_add(o, "host", json_object_new_string(host));
	json_object_object_add(o, "port", json_object_new_int(port));
	json_object_object_add(o, "decision", json_object_new_string(decision));
	json_object_object_add(o, "reason", json_object_new_string(reason));
	json_object_object_add(o, "bytes_up", json_object_new_int64(c ? (int64_t)c->bytes_up : 0));
	json_object_object_add(o, "bytes_down", json_object_new_int64(c ? (int64_t)c->bytes_down : 0));
	_cleanup_free_ char *line = xasprintf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));
	json_object_put(o);
	(void)!write(p->events_fd, line, strlen(line));
}

static void ep_set(struct sbx_proxy *p, int fd, uint64_t id, uint32_t ev)
{
	struct epoll_event e = { .events = ev, .data.u64 = id };
	if (epoll_ctl(p->ep, EPOLL_CTL_MOD, fd, &e) < 0 && errno == ENOENT)
		epoll_ctl(p->ep, EPOLL_CTL_ADD, fd, &e);
}

static void conn_close(struct sbx_proxy *p, struct conn *c)
{
	if (c->state == C_RELAY)
		event(p, c->host, c->port, "allow", "closed", c);
	if (c->cfd >= 0)
		close(c->cfd);
	if (c->ufd >= 0)
		close(c->ufd);
	p->st.bytes_up += c->bytes_up;
	p->st.bytes_down += c->bytes_down;
	httpreq_free(&c->req);
	c->state = C_FREE;
	c->cfd = c->ufd = -1;
}

static const char *status_text(int code)
{
	switch (code) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 431: return "Request Header Fields Too Large";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	default: return "Gateway Timeout";
	}
}

/* Answers with an error and closes; a refusal by policy is also said on
 * stderr, once per host, since package managers seldom show the body. */
static void refuse(struct sbx_proxy *p, struct conn *c, int code, const char *why)
{
	const char *host = c->host[0] ? c->host : "?";
	_cleanup_free_ char *body = xasprintf("sbxrun: egress to '%s:%d' refused by profile '%s': %s\n",
					      host, c->port, p->profile, why);
	_cleanup_free_ char *resp = xasprintf(
		"HTTP/1.1 %d %s\r\nX-Sbxrun-Refused: profile=%s; host=%s\r\nContent-Type: text/plain\r\n"
		"Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
		code, status_text(code), p->profile, host, strlen(body), body);
	(void)!write(c->cfd, resp, strlen(resp));
	if (code == 403) {
		p->st.refused++;
		int seen = 0;
		for (size_t i = 0; i < p->nlogged; i++)
			seen |= !strcmp(p->logged[i], host);
		if (!seen && p->nlogged < 256) {
			p->logged = xrealloc(p->logged, (p->nlogged + 1) * sizeof(char *));
			p->logged[p->nlogged++] = xstrdup(host);
			log_warn("egress: refused '%s' port %d (%s; profile '%s')", host, c->port, why,
				 p->profile);
		}
	}
	event(p, host, c->port, "refuse", why, NULL);
	c->state = C_HEAD; /* not relaying: no "allow" event on close */
	conn_close(p, c);
}

static void try_connect(struct sbx_proxy *p, struct conn *c, uint64_t id);

/* Keeps the addresses the guard allows; refuses if none is left. */
static void got_addresses(struct sbx_proxy *p, struct conn *c, const struct addrinfo *ai,
			  uint64_t id)
{
	const char *why = "no address";

	c->naddr = c->next = 0;
	for (; ai && c->naddr < MAX_ADDRS; ai = ai->ai_next) {
		if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
			continue;
		if (!addr_allowed(ai->ai_addr, c->exact, c->internal, &why))
			continue;
		memcpy(&c->addr[c->naddr], ai->ai_addr, ai->ai_addrlen);
		((struct sockaddr_in *)&c->addr[c->naddr])->sin_port = htons((uint16_t)c->port);
		c->naddr++;
	}
	if (c->naddr == 0) {
		char reason[200];
		snprintf(reason, sizeof(reason), "its address is %s", why);
		refuse(p, c, 403, reason);
		return;
	}
	try_connect(p, c, id);
}

/* IP literals and host.sbxrun.internal need no lookup. */
static int literal(struct conn *c, struct addrinfo *ai, struct sockaddr_storage *ss)
{
	struct sockaddr_in *in = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

	memset(ai, 0, sizeof(*ai));
	memset(ss, 0, sizeof(*ss));
	ai->ai_addr = (struct sockaddr *)ss;
	if (c->internal || inet_pton(AF_INET, c->host, &in->sin_addr) == 1) {
		if (c->internal)
			inet_pton(AF_INET, "127.0.0.1", &in->sin_addr);
		in->sin_family = ai->ai_family = AF_INET;
		ai->ai_addrlen = sizeof(*in);
		return 1;
	}
	if (inet_pton(AF_INET6, c->host, &in6->sin6_addr) == 1) {
		in6->sin6_family = ai->ai_family = AF_INET6;
		ai->ai_addrlen = sizeof(*in6);
		return 1;
	}
	return 0;
}

static void resolve(struct sbx_proxy *p, struct conn *c, uint64_t id)
{
	struct addrinfo ai;
	struct sockaddr_storage ss;
	int failed;

	if (literal(c, &ai, &ss)) {
		got_addresses(p, c, &ai, id);
		return;
	}
	const struct addrinfo *r = resolver_lookup(p->res, c->host, &failed);
	if (failed) {
		refuse(p, c, 502, "the name does not resolve");
		return;
	}
	if (r) {
		got_addresses(p, c, r, id);
		return;
	}
	c->state = C_RESOLVE;
	c->deadline = now_ms() + 30000;
	ep_set(p, c->cfd, id, 0);
}

/* A complete head: the policy decides before any lookup. */
static void on_head(struct sbx_proxy *p, struct conn *c, uint64_t id)
{
	struct sbx_err err;
	int status;
	const char *why;
	int r = httpreq_parse(c->in, c->inlen, &c->req, &status, &why);

	if (r == 0)
		return;
	if (r < 0) {
		refuse(p, c, status, why);
		return;
	}
	c->port = c->req.port;
	if (host_canon(c->req.host, c->host, sizeof(c->host), &err) < 0) {
		snprintf(c->host, sizeof(c->host), "?");
		refuse(p, c, 403, err.msg);
		return;
	}
	if (!allow_match(&p->allow, c->host, c->port, &c->exact, &c->internal)) {
		refuse(p, c, 403, "not in the allow list");
		return;
	}
	resolve(p, c, id);
}

static void try_connect(struct sbx_proxy *p, struct conn *c, uint64_t id)
{
	while (c->next < c->naddr) {
		struct sockaddr_storage *a = &c->addr[c->next++];
		socklen_t len = a->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		if (c->ufd >= 0)
			close(c->ufd);
		c->ufd = socket(a->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (c->ufd < 0)
			continue;
		if (connect(c->ufd, (struct sockaddr *)a, len) == 0 || errno == EINPROGRESS) {
			c->state = C_CONNECT;
			c->deadline = now_ms() + 15000;
			ep_set(p, c->cfd, id, 0);
			ep_set(p, c->ufd, id | 1, EPOLLOUT);
			return;
		}
	}
	refuse(p, c, 502, "cannot connect");
}

static void buf_put(struct buf *b, const void *d, size_t n)
{
	memcpy(b->d + b->off + b->len, d, n);
	b->len += n;
}

/* Connected: the tunnel's 200, or the rewritten plain request. */
static void connected(struct sbx_proxy *p, struct conn *c)
{
	const char *rest = c->in + c->req.consumed;
	size_t nrest = c->inlen - c->req.consumed;

	p->st.allowed++;
	event(p, c->host, c->port, "allow", c->req.connect ? "CONNECT" : "HTTP", NULL);
	if (c->req.connect) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		buf_put(&c->dn, ok, sizeof(ok) - 1);
		buf_put(&c->up, rest, nrest);
		c->body_left = UINT64_MAX;
	} else {
		size_t body = nrest < c->req.body ? nrest : (size_t)c->req.body;
		buf_put(&c->up, c->req.head, c->req.head_len);
		buf_put(&c->up, rest, body);
		c->bytes_up += c->req.head_len + body;
		c->body_left = c->req.body - body;
	}
	c->state = C_RELAY;
	c->deadline = now_ms() + 300000;
}

/* Moves what one side gave into the other's buffer; returns -1 on error. */
static int pull(int fd, struct buf *b, uint64_t limit, int *eof, uint64_t *count)
{
	if (b->off + b->len == RELAY_BUF && b->off) {
		memmove(b->d, b->d + b->off, b->len);
		b->off = 0;
	}
	size_t room = RELAY_BUF - b->off - b->len;
	if (room > limit)
		room = (size_t)limit;
	if (room == 0)
		return 0;
	ssize_t n = read(fd, b->d + b->off + b->len, room);
	if (n > 0) {
		b->len += (size_t)n;
		*count += (uint64_t)n;
	} else if (n == 0) {
		*eof = 1;
	} else if (errno != EAGAIN && errno != EINTR) {
		return -1;
	}
	return 0;
}

static int push(int fd, struct buf *b)
{
	if (!b->len)
		return 0;
	ssize_t n = send(fd, b->d + b->off, b->len, MSG_NOSIGNAL);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -1;
	b->off += (size_t)n;
	b->len -= (size_t)n;
	if (!b->len)
		b->off = 0;
	return 0;
}

static void relay(struct sbx_proxy *p, struct conn *c, uint64_t id, uint32_t ev, int upstream)
{
	int err = 0;

	if (!upstream && (ev & EPOLLIN) && !c->c_eof && c->body_left) {
		uint64_t before = c->up.len;
		err |= pull(c->cfd, &c->up, c->body_left, &c->c_eof, &c->bytes_up);
		if (c->body_left != UINT64_MAX)
			c->body_left -= c->up.len - before;
	}
	if (upstream && (ev & (EPOLLIN | EPOLLHUP)) && !c->u_eof)
		err |= pull(c->ufd, &c->dn, UINT64_MAX, &c->u_eof, &c->bytes_down);
	err |= push(c->ufd, &c->up) | push(c->cfd, &c->dn);
	if (ev & EPOLLERR)
		err = -1;
	if (err || (c->u_eof && !c->dn.len)) {
		conn_close(p, c); /* the server is done (or gone): nothing more to deliver */
		return;
	}
	if ((c->c_eof || !c->body_left) && !c->up.len && !c->u_shut && c->c_eof) {
		shutdown(c->ufd, SHUT_WR); /* half-close: the client has said all */
		c->u_shut = 1;
	}
	c->deadline = now_ms() + 300000;
	uint32_t cev = (c->dn.len ? EPOLLOUT : 0) |
		       (!c->c_eof && c->body_left && c->up.off + c->up.len < RELAY_BUF ? EPOLLIN : 0);
	uint32_t uev = (c->up.len ? EPOLLOUT : 0) | (!c->u_eof && c->dn.off + c->dn.len < RELAY_BUF ? EPOLLIN : 0);
	ep_set(p, c->cfd, id & ~1ULL, cev);
	ep_set(p, c->ufd, id | 1, uev);
}

static void on_connect(struct sbx_proxy *p, struct conn *c, uint64_t id)
{
	int e = 0;
	socklen_t len = sizeof(e);

	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e) {
		try_connect(p, c, id & ~1ULL);
		return;
	}
	connected(p, c);
	relay(p, c, id, 0, 1);
}

static void on_client(struct sbx_proxy *p, struct conn *c, uint64_t id)
{
	ssize_t n = read(c->cfd, c->in + c->inlen, sizeof(c->in) - c->inlen);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
		conn_close(p, c);
		return;
	}
	if (n > 0)
		c->inlen += (size_t)n;
	on_head(p, c, id);
}

static void accept_all(struct sbx_proxy *p)
{
	for (;;) {
		int fd = accept4(p->listen, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;
		size_t i = 0;
		while (i < MAX_CONNS && p->c[i].state != C_FREE)
			i++;
		if (i == MAX_CONNS) {
			static const char busy[] = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\n\r\n";
			(void)!write(fd, busy, sizeof(busy) - 1);
			close(fd);
			continue;
		}
		struct conn *c = &p->c[i];
		memset(c, 0, sizeof(*c));
		c->cfd = fd;
		c->ufd = -1;
		c->state = C_HEAD;
		c->deadline = now_ms() + 30000;
		ep_set(p, fd, (uint64_t)i << 1, EPOLLIN);
	}
}

/* Connections waiting for a name get it (or their refusal). */
static void answers(struct sbx_proxy *p)
{
	resolver_collect(p->res);
	for (size_t i = 0; i < MAX_CONNS; i++)
		if (p->c[i].state == C_RESOLVE)
			resolve(p, &p->c[i], (uint64_t)i << 1);
}

static void expire(struct sbx_proxy *p)
{
	uint64_t now = now_ms();
	for (size_t i = 0; i < MAX_CONNS; i++) {
		struct conn *c = &p->c[i];
		if (c->state == C_FREE || now < c->deadline)
			continue;
		if (c->state == C_RELAY)
			conn_close(p, c);
		else
			refuse(p, c, 504, "timed out");
	}
}

void proxy_dispatch(struct sbx_proxy *p)
{
	struct epoll_event ev[64];
	int n = epoll_wait(p->ep, ev, 64, 0);

	for (int i = 0; i < n; i++) {
		uint64_t id = ev[i].data.u64;
		if (id == ID_LISTEN) {
			accept_all(p);
			continue;
		}
		if (id == ID_RESOLVER) {
			answers(p);
			continue;
		}
		struct conn *c = &p->c[id >> 1];
		if (c->state == C_HEAD && !(id & 1))
			on_client(p, c, id);
		else if (c->state == C_CONNECT && (id & 1))
			on_connect(p, c, id);
		else if (c->state == C_RELAY)
			relay(p, c, id, ev[i].events, (int)(id & 1));
	}
	expire(p);
}

int proxy_timeout_ms(const struct sbx_proxy *p)
{
	uint64_t now = now_ms(), next = UINT64_MAX;
	for (size_t i = 0; i < MAX_CONNS; i++)
		if (p->c[i].state != C_FREE && p->c[i].deadline < next)
			next = p->c[i].deadline;
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)(next - now);
}

int proxy_pollfd(const struct sbx_proxy *p)
{
	return p->ep;
}

void proxy_stats(const struct sbx_proxy *p, struct sbx_proxy_stats *s)
{
	*s = p->st;
	for (size_t i = 0; i < MAX_CONNS; i++) {
		s->bytes_up += p->c[i].state != C_FREE ? p->c[i].bytes_up : 0;
		s->bytes_down += p->c[i].state != C_FREE ? p->c[i].bytes_down : 0;
	}
}

/* "a b c" → {"a", "b", "c", NULL} */
static char **split(const char *s)
{
	char **v = xcalloc(1, sizeof(char *));
	size_t n = 0;
	_cleanup_free_ char *copy = xstrdup(s ? s : "");
	for (char *save = NULL, *t = strtok_r(copy, " \t\n", &save); t; t = strtok_r(NULL, " \t\n", &save)) {
		v = xrealloc(v, (n + 2) * sizeof(char *));
		v[n++] = xstrdup(t);
		v[n] = NULL;
	}
	return v;
}

int proxy_new(const struct sbx_proxy_conf *conf, int listen_fd, struct sbx_proxy **out,
	      struct sbx_err *err)
{
	struct sbx_proxy *p = xcalloc(1, sizeof(*p));
	_cleanup_strv_ char **npm = split(conf->npm_registry), **pypi = split(conf->pypi_index);
	struct sbx_sets sets = { conf->apt_hosts, npm, pypi };
	/* packages egress without an allow list: the image's package sources */
	static char *set_names[] = { "@apt", "@pypi", "@npm", NULL };
	static char *set_origins[] = { "default", "default", "default", NULL };
	const struct sbx_strlist sets_only = { set_names, set_origins, 3 };
	const struct sbx_strlist *allow = conf->allow && conf->allow->n ? conf->allow : &sets_only;

	p->profile = xstrdup(conf->profile ? conf->profile : "default");
	p->events_fd = conf->events_fd;
	p->listen = listen_fd;
	p->c = xcalloc(MAX_CONNS, sizeof(*p->c));
	for (size_t i = 0; i < MAX_CONNS; i++)
		p->c[i].cfd = p->c[i].ufd = -1;
	p->ep = epoll_create1(EPOLL_CLOEXEC);
	p->res = resolver_new();
	if (p->ep < 0 || !p->res || allow_compile(allow, &sets, &p->allow, err) < 0) {
		if (!err->msg[0])
			err_sys(err, "start the egress proxy");
		p->listen = -1;
		proxy_free(p);
		return -1;
	}
	ep_set(p, listen_fd, ID_LISTEN, EPOLLIN);
	ep_set(p, resolver_fd(p->res), ID_RESOLVER, EPOLLIN);
	*out = p;
	return 0;
}

void proxy_free(struct sbx_proxy *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < MAX_CONNS; i++)
		if (p->c[i].state != C_FREE)
			conn_close(p, &p->c[i]);
	resolver_free(p->res);
	allow_free(&p->allow);
	if (p->ep >= 0)
		close(p->ep);
	for (size_t i = 0; i < p->nlogged; i++)
		free(p->logged[i]);
	free(p->logged);
	free(p->c);
	free(p->profile);
	free(p);
}
