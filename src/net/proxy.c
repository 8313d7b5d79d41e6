/* proxy.c - the egress proxy's event loop: accepts the sandbox's connections
 * on its door, reads one request head, checks the host against the allow
 * list, resolves it off the loop, vets the addresses, connects upstream
 * without blocking and relays both ways with half-close. One request per
 * relayed connection for plain HTTP ("Connection: close"), so every request
 * is checked; a connection the package gateway answered and keeps open
 * comes back here for its next request (proxy_keep). Nothing a sandbox
 * sends may crash or stall the host side. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <time.h>

#include "base/log.h"
#include "base/util.h"
#include "net/proxy.h"
#include "net/proxy_auth.h"
#include "net/proxy_conn.h"

static int ep_add(struct sbx_proxy *p, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };
	return epoll_ctl(p->epfd, EPOLL_CTL_ADD, fd, &ev);
}

static uint64_t conn_tag(struct conn *c, int side)
{
	return (uint64_t)(uintptr_t)c | (uint64_t)side;
}

void proxy_conn_kill(struct sbx_proxy *p, struct conn *c)
{
	if (c->state == C_DEAD)
		return;
	if (c->state == C_RELAY)
		proxy_event_close(&p->ev, c->host, c->req.port, c->bytes_up, c->bytes_down);
	c->state = C_DEAD;
	p->live--;
	free(steal_ptr(c->head));
	if (c->cfd >= 0)
		close(steal_fd(c->cfd));
	if (c->ufd >= 0)
		close(steal_fd(c->ufd));
}

/* Dead conns are freed after a batch of events, which may still name them. */
void proxy_reap(struct sbx_proxy *p)
{
	for (struct conn **pp = &p->conns; *pp;) {
		struct conn *c = *pp;
		if (c->state != C_DEAD) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		httpreq_free(&c->req);
		free(c->head);
		free(c->answer);
		relay_dir_free(&c->up);
		relay_dir_free(&c->down);
		free(c);
		p->nconns--;
	}
}

static void drain(struct sbx_proxy *p, struct conn *c)
{
	char junk[4096];
	for (;;) {
		ssize_t n = read(c->cfd, junk, sizeof(junk));
		if (n > 0)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		proxy_conn_kill(p, c);
		return;
	}
}

/* Answers with an error and lingers for the client's EOF, so that closing
 * with unread input does not reset the connection before it reads this. */
static void conn_reply(struct sbx_proxy *p, struct conn *c, int status, const char *host, const char *why)
{
	char msg[2048];
	int n = proxy_event_response(&p->ev, msg, sizeof(msg), status, host, why);

	p->count.refused++;
	if (c->ufd >= 0)
		close(steal_fd(c->ufd));
	if (n > 0 && send(c->cfd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		proxy_conn_kill(p, c);
		return;
	}
	shutdown(c->cfd, SHUT_WR);
	c->state = C_DRAIN;
	c->deadline = now_ms() + DRAIN_TIMEOUT_MS;
	drain(p, c);  /* input already queued brings no new edge */
}

void proxy_refuse(struct sbx_proxy *p, struct conn *c, int status, const char *why)
{
	proxy_event_decision(&p->ev, c->host, c->req.port, "refused", why);
	conn_reply(p, c, status, c->host, why);
}

static void relay(struct sbx_proxy *p, struct conn *c)
{
	bool err = false;
	uint64_t up0 = c->bytes_up, down0 = c->bytes_down;

	/* Both directions every round (no short-circuit), until neither moves. */
	for (bool moved = true; moved && !err;) {
		moved = relay_pump(c->cfd, c->ufd, &c->up, &c->bytes_up, &err);
		moved |= relay_pump(c->ufd, c->cfd, &c->down, &c->bytes_down, &err);
	}
	p->count.bytes_up += c->bytes_up - up0;
	p->count.bytes_down += c->bytes_down - down0;
	if (c->bytes_up != up0 || c->bytes_down != down0)
		c->deadline = now_ms() + IDLE_TIMEOUT_MS;
	if (err || (c->up.shut && c->down.shut))
		proxy_conn_kill(p, c);
}

/* down_extra: bytes an upstream proxy sent after its answer. */
static void start_relay(struct sbx_proxy *p, struct conn *c, const char *down_extra, size_t extra_len)
{
	static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";

	struct sbx_err err;
	const char *why;

	int brokered = p->cred ? proxy_cred_start(p, c, ok, sizeof(ok) - 1, &why) : 0;
	if (brokered < 0)
		proxy_refuse(p, c, 400, why);
	if (brokered)
		return;
	if (relay_dir_init(&c->up, &err) < 0 || relay_dir_init(&c->down, &err) < 0) {
		proxy_refuse(p, c, 502, "out of file descriptors");
		return;
	}
	if (c->req.kind == HTTPREQ_CONNECT)
		relay_dir_prefix(&c->down, ok, sizeof(ok) - 1);
	else
		relay_dir_prefix(&c->up, c->req.upstream, c->req.upstream_len);
	relay_dir_prefix(&c->up, c->head + c->req.head_len, c->head_len - c->req.head_len);
	relay_dir_prefix(&c->down, down_extra, extra_len);
	free(steal_ptr(c->head));
	/* a relay passes on what it reads at once: Nagle's algorithm would hold
	 * a client's second small write (a TLS record, a body after its head)
	 * until the first is acknowledged, a delayed ACK later (bench/cred.sh:
	 * 17 ms a request on a kept-alive tunnel). Not a TCP socket: ignored. */
	static const int one = 1;
	(void)setsockopt(c->cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(c->ufd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->state = C_RELAY;
	c->deadline = now_ms() + IDLE_TIMEOUT_MS;
	p->count.allowed++;
	relay(p, c);
}

/* Tries the vetted addresses in order; the first that connects wins. */
static void connect_next(struct sbx_proxy *p, struct conn *c)
{
	if (c->ufd >= 0)
		close(steal_fd(c->ufd));
	while (c->next_addr < c->dial.n) {
		struct sockaddr_storage *ss = &c->dial.addr[c->next_addr++];
		socklen_t len = ss->ss_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6);
		int fd = socket(ss->ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd < 0)
			continue;
		if (c->dial_port)
			((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)c->dial_port);
		if ((connect(fd, (struct sockaddr *)ss, len) == 0 || errno == EINPROGRESS) &&
		    ep_add(p, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, conn_tag(c, TAG_UPSTREAM)) == 0) {
			c->ufd = fd;
			c->state = C_CONNECT;
			c->deadline = now_ms() + CONNECT_TIMEOUT_MS;
			return;
		}
		close(fd);
	}
	proxy_refuse(p, c, 502, "cannot connect to any of its addresses");
}

static void chain_ask(struct sbx_proxy *p, struct conn *c)
{
	char req[1024];
	int n = proxy_chain_request(&p->chain, c->target, req, sizeof(req));

	if (n < 0 || send(c->ufd, req, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) != n) {
		proxy_refuse(p, c, 502, "cannot talk to the upstream proxy");
		return;
	}
	c->answer = xmalloc(CHAIN_ANSWER_MAX);
	c->state = C_CHAIN;
}

/* Reads the upstream proxy's answer to CONNECT; a 200 starts the relay and
 * whatever followed its head goes down to the sandbox. */
static void chain_answer(struct sbx_proxy *p, struct conn *c)
{
	size_t head;
	int r = 0;
	ssize_t n;

	while (r == 0 && (n = read(c->ufd, c->answer + c->answer_len, CHAIN_ANSWER_MAX - c->answer_len)) > 0) {
		c->answer_len += (size_t)n;
		r = proxy_chain_answer(c->answer, c->answer_len, &head);
		if (r == 0 && c->answer_len == CHAIN_ANSWER_MAX)
			r = -1;
	}
	if (r == 0 && (n == 0 || (errno != EAGAIN && errno != EINTR)))
		r = -1;
	if (r < 0)
		proxy_refuse(p, c, 502, "the upstream proxy refused the connection");
	if (r <= 0)
		return;
	proxy_event_decision(&p->ev, c->host, c->req.port, "allowed", "in allow list (via upstream proxy)");
	start_relay(p, c, c->answer + head, c->answer_len - head);
}

/* Through an upstream proxy, CONNECT to the vetted address, or to the
 * name when only the upstream proxy can resolve it. */
static void chain_plan(struct sbx_proxy *p, struct conn *c, const struct sockaddr_storage *vetted)
{
	char ip[INET6_ADDRSTRLEN] = "";

	if (vetted && vetted->ss_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)vetted)->sin_addr, ip, sizeof(ip));
	else if (vetted)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)vetted)->sin6_addr, ip, sizeof(ip));
	if (vetted && vetted->ss_family == AF_INET6)
		snprintf(c->target, sizeof(c->target), "[%s]:%d", ip, c->req.port);
	else
		snprintf(c->target, sizeof(c->target), "%s:%d", vetted ? ip : c->host, c->req.port);
	c->dial = p->chain.addrs;
	c->dial_port = 0;
}

static void connected(struct sbx_proxy *p, struct conn *c)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);
	if (getsockopt(c->ufd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr) {
		connect_next(p, c);
		return;
	}
	if (c->target[0]) {
		chain_ask(p, c);
		return;
	}
	proxy_event_decision(&p->ev, c->host, c->req.port, "allowed", "in allow list");
	start_relay(p, c, "", 0);
}

/* Keeps only the addresses the grant allows, then connects. */
static void vet_and_connect(struct sbx_proxy *p, struct conn *c)
{
	const char *why = NULL;
	size_t kept = 0;

	/* the host's loopback and what no_proxy names are reached directly */
	bool chained = p->chain.on && !c->grant.internal && !proxy_chain_bypass(p->chain.no_proxy, c->host);

	if (c->res.error && chained) {
		chain_plan(p, c, NULL);
		c->next_addr = 0;
		connect_next(p, c);
		return;
	}
	if (c->res.error) {
		proxy_refuse(p, c, 502, gai_strerror(c->res.error));
		return;
	}
	for (size_t i = 0; i < c->res.n; i++) {
		const char *w = hostmatch_addr_refusal((struct sockaddr *)&c->res.addr[i], &c->grant);
		if (w)
			why = w;
		else
			c->res.addr[kept++] = c->res.addr[i];
	}
	c->res.n = kept;
	if (kept == 0) {
		proxy_refuse(p, c, 403, why ? why : "no address");
		return;
	}
	if (chained) {
		chain_plan(p, c, &c->res.addr[0]);
	} else {
		c->dial = c->res;
		c->dial_port = c->req.port;
	}
	c->next_addr = 0;
	connect_next(p, c);
}

/* IP literals and the reserved loopback name need no lookup. */
static bool fixed_address(struct conn *c)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)&c->res.addr[0];
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&c->res.addr[0];

	memset(&c->res, 0, sizeof(c->res));
	if (c->grant.internal) {
		s4->sin_family = AF_INET;
		s4->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	} else if (inet_pton(AF_INET, c->host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
	} else if (inet_pton(AF_INET6, c->host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
	} else {
		return false;
	}
	c->res.n = 1;
	return true;
}

const struct proxy_local *proxy_service(const struct sbx_proxy *p)
{
	return &p->local;
}

/* Whether a request no rule allows may be held and asked about: not one
 * for an address class an approval never reaches (proxy_rule_add refuses
 * those, so asking would be a question no answer can lift). */
static bool askable(const struct conn *c)
{
	char buf[300];

	return proxy_rules_unapprovable(c->host, buf, sizeof(buf)) == NULL;
}

/* No answer to the client yet: listed by proxy_pending_each until a rule
 * decides it (recheck_held) or ask_ms passes (timers: 403). */
static void hold(struct sbx_proxy *p, struct conn *c)
{
	if (c->state == C_HELD)
		return; /* still undecided: it keeps its place and deadline */
	c->state = C_HELD;
	c->held_since = now_ms();
	c->held_id = ++p->held_seq;
	c->deadline = c->held_since + (int64_t)p->ask_ms;
	proxy_event_decision(&p->ev, c->host, c->req.port, "asked", "no rule allows or refuses it: held for an answer");
}

void proxy_check_request(struct sbx_proxy *p, struct conn *c)
{
	enum hostmatch_result r;
	char why[256];

	/* Before the allow list: a peer without the secret learns nothing. */
	if (p->auth && (c->req.auth_bad || !proxy_auth_check(p->auth, c->req.auth))) {
		log_sanitize(c->host, sizeof(c->host), c->req.host);
		proxy_refuse(p, c, 407, c->req.auth[0] || c->req.auth_bad ? "wrong proxy credentials"
								      : "proxy credentials required");
		return;
	}
	if (hostmatch_canon(c->req.host, c->host, sizeof(c->host)) < 0) {
		log_sanitize(c->host, sizeof(c->host), c->req.host);
		proxy_refuse(p, c, 403, "not a valid host name (numeric IPv4 forms are refused)");
		return;
	}
	if (p->cred && !proxy_cred_gate(p, c, why, sizeof(why))) {
		proxy_refuse(p, c, 403, why);
		return;
	}
	if (p->local.host && c->req.kind == HTTPREQ_ABSOLUTE && c->req.port == 80 &&
	    strcmp(c->host, p->local.host) == 0) {
		/* the service reads and answers from here on */
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->cfd, NULL);
		p->local.take(p->local.ctx, p, steal_fd(c->cfd), c->peer, c->head, c->head_len);
		p->count.allowed++;
		proxy_conn_kill(p, c);
		return;
	}
	const char *no = proxy_rules_refusal(&p->rules, c->host, c->req.port, why, sizeof(why));
	if (no) {
		proxy_refuse(p, c, 403, no);
		return;
	}
	/* a live allow lifts only what the list leaves out: an approved host
	 * is dialled as an unlisted one (no private, loopback or internal grant) */
	r = proxy_rules_check(&p->rules, c->host, c->req.port, &c->grant);
	/* apt's plain HTTP to its hosts goes to the gateway, under package
	 * rules (GATEWAY_ONLY) as without, and behind an upstream proxy too
	 * (the gateway fetches through it: gateway/gw_proxy.c) */
	if ((r == HOSTMATCH_OK || r == HOSTMATCH_GATEWAY_ONLY) && p->local.claims &&
	    c->req.kind == HTTPREQ_ABSOLUTE && p->local.claims(p->local.ctx, c->host, c->req.port)) {
		proxy_event_decision(&p->ev, c->host, c->req.port, "allowed", "package gateway");
		epoll_ctl(p->epfd, EPOLL_CTL_DEL, c->cfd, NULL);
		p->local.take(p->local.ctx, p, steal_fd(c->cfd), c->peer, c->head, c->head_len);
		p->count.allowed++;
		proxy_conn_kill(p, c);
		return;
	}
	if ((r == HOSTMATCH_NOT_LISTED || r == HOSTMATCH_BAD_PORT) && p->ask_ms && askable(c)) {
		hold(p, c);
		return;
	}
	if (r != HOSTMATCH_OK) {
		snprintf(why, sizeof(why), "%s profile '%s' %s", hostmatch_result_str(r), p->ev.profile,
			 r == HOSTMATCH_GATEWAY_ONLY ? "package rules" : "allow list");
		proxy_refuse(p, c, 403, why);
		return;
	}
	if (fixed_address(c)) {
		vet_and_connect(p, c);
		return;
	}
	c->state = C_RESOLVE;
	c->deadline = now_ms() + RESOLVE_TIMEOUT_MS;
	if (resolver_lookup(p->resolver, c->host, c->id, &c->res) == 1)
		vet_and_connect(p, c);
}

static void read_head(struct sbx_proxy *p, struct conn *c)
{
	int status;
	const char *why;

	bool eof = false;

	while (c->head_len < HTTPREQ_MAX_HEAD) {
		ssize_t n = read(c->cfd, c->head + c->head_len, HTTPREQ_MAX_HEAD - c->head_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno != EAGAIN) {
			proxy_conn_kill(p, c);
			return;
		}
		/* A client may send its request and half-close at once. */
		eof = n == 0;
		if (n <= 0)
			break;
		c->head_len += (size_t)n;
	}
	int r = httpreq_parse(c->head, c->head_len, &c->req, &status, &why);
	if (r == 0) {
		if (eof)
			proxy_conn_kill(p, c);
		return;
	}
	if (r < 0) {
		proxy_event_decision(&p->ev, "", 0, "refused", why);
		conn_reply(p, c, status, "", why);
		return;
	}
	proxy_check_request(p, c);
}

/* A sandbox's door, full: the listening socket is left out of the loop
 * (its backlog holds the next connections) until a connection ends. */
static void accepting(struct sbx_proxy *p, bool on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.u64 = TAG_LISTEN };

	if (p->paused == !on || epoll_ctl(p->epfd, EPOLL_CTL_MOD, p->lfd, &ev) < 0)
		return;
	p->paused = !on;
}

static struct conn *conn_new(struct sbx_proxy *p, int fd, const unsigned char *peer, int64_t timeout_ms)
{
	struct conn *c = xcalloc(1, sizeof(*c));

	c->id = ++p->next_id;
	memcpy(c->peer, peer, sizeof(c->peer));
	c->cfd = fd;
	c->ufd = -1;
	c->head = xmalloc(HTTPREQ_MAX_HEAD);
	c->up.pipe[0] = c->up.pipe[1] = c->down.pipe[0] = c->down.pipe[1] = -1;
	c->deadline = now_ms() + timeout_ms;
	if (ep_add(p, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET, conn_tag(c, TAG_CLIENT)) < 0) {
		close(fd);
		free(c->head);
		free(c);
		return NULL;
	}
	c->next = p->conns;
	p->conns = c;
	p->nconns++;
	p->live++;
	return c;
}

static void accept_all(struct sbx_proxy *p)
{
	for (int i = 0; i < ACCEPT_BATCH; i++) {
		struct sockaddr_storage ss = { 0 };
		socklen_t sl = sizeof(ss);
		unsigned char peer[PROXY_PEER_KEY];
		if (p->queue && !proxy_room_for(p, NULL)) {
			accepting(p, false);
			return;
		}
		int fd = accept4(p->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0)
			return;  /* EAGAIN, or a transient error: try on the next event */
		proxy_peer_key(&ss, peer);
		if (!proxy_room_for(p, peer)) {
			p->count.turned_away++;
			close(fd);
			continue;
		}
		struct conn *c = conn_new(p, fd, peer, p->head_timeout_ms);
		if (c)
			read_head(p, c);
	}
}

void proxy_keep(struct sbx_proxy *p, int fd, const unsigned char *peer, const char *next, size_t len)
{
	struct conn *c = len < HTTPREQ_MAX_HEAD ? conn_new(p, fd, peer, PROXY_KEEPALIVE_MS + 1000) : NULL;

	if (!c) {
		if (len >= HTTPREQ_MAX_HEAD)
			close(fd);
		return;
	}
	/* what came after the last request is the next one's start; the
	 * socket is writable, so the loop reads the rest and parses it */
	memcpy(c->head, next, len);
	c->head_len = len;
	c->kept = true;
}

static void resolved(struct sbx_proxy *p)
{
	uint64_t tag;
	struct resolver_result res;

	while (resolver_next(p->resolver, &tag, &res)) {
		for (struct conn *c = p->conns; c; c = c->next) {
			if (c->id != tag || c->state != C_RESOLVE)
				continue;
			c->res = res;
			vet_and_connect(p, c);
		}
	}
}

static void timers(struct sbx_proxy *p)
{
	uint64_t ticks;
	int64_t now = now_ms();

	if (read(p->tfd, &ticks, sizeof(ticks)) < 0) {
		/* EAGAIN: a spurious wake-up; the sweep is harmless. */
	}
	for (struct conn *c = p->conns; c; c = c->next) {
		if (c->state == C_DEAD || c->deadline > now)
			continue;
		if (c->state == C_HELD)
			proxy_refuse(p, c, 403, "no answer within ask_timeout (held, then refused)");
		else if (c->state == C_RESOLVE)
			proxy_refuse(p, c, 504, "name lookup timed out");
		else if (c->state == C_CONNECT)
			connect_next(p, c);
		else if (c->state == C_CHAIN)
			proxy_refuse(p, c, 504, "the upstream proxy did not answer");
		else
			proxy_conn_kill(p, c);
	}
}

static void conn_event(struct sbx_proxy *p, struct conn *c, int side, uint32_t events)
{
	switch (c->state) {
	case C_HEAD: read_head(p, c); break;
	case C_CONNECT:
		/* Only the upstream socket turning writable ends a connect. */
		if (side == TAG_UPSTREAM && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			connected(p, c);
		break;
	case C_CHAIN: chain_answer(p, c); break;
	case C_RELAY: relay(p, c); break;
	case C_DRAIN: drain(p, c); break;
	default: break;  /* input waits in the socket until the relay starts */
	}
}

int proxy_dispatch(struct sbx_proxy *p)
{
	struct epoll_event evs[64];
	int n = epoll_wait(p->epfd, evs, ARRAY_SIZE(evs), 0);

	if (n < 0)
		return errno == EINTR ? 0 : -1;
	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;
		if (tag == TAG_LISTEN)
			accept_all(p);
		else if (tag == TAG_RESOLVER)
			resolved(p);
		else if (tag == TAG_TIMER)
			timers(p);
		else if (tag == TAG_LOCAL)
			p->local.dispatch(p->local.ctx);
		else
			conn_event(p, (struct conn *)(uintptr_t)(tag & ~3ULL), (int)(tag & 3), evs[i].events);
	}
	proxy_reap(p);
	if (p->paused && proxy_may_resume(p))
		accepting(p, true);
	return 0;
}

static int setup_fds(struct sbx_proxy *p, int listen_fd, struct sbx_err *err)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	int fl = fcntl(listen_fd, F_GETFL);

	if (fl < 0 || fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0)
		return err_sys(err, "proxy: listening socket");
	p->lfd = listen_fd;
	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0)
		return err_sys(err, "proxy: epoll_create1");
	p->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (p->tfd < 0 || timerfd_settime(p->tfd, 0, &its, NULL) < 0)
		return err_sys(err, "proxy: timerfd");
	if (ep_add(p, p->lfd, EPOLLIN, TAG_LISTEN) < 0 ||
	    ep_add(p, resolver_fd(p->resolver), EPOLLIN, TAG_RESOLVER) < 0 ||
	    ep_add(p, p->tfd, EPOLLIN, TAG_TIMER) < 0 ||
	    (p->local.host && ep_add(p, p->local.pollfd, EPOLLIN, TAG_LOCAL) < 0))
		return err_sys(err, "proxy: epoll_ctl");
	return 0;
}

int proxy_new(const struct sbx_proxy_conf *conf, int listen_fd, struct sbx_proxy **out,
	      struct sbx_err *err)
{
	struct sbx_proxy *p = xcalloc(1, sizeof(*p));
	struct hostmatch_sets sets = conf->sets;

	p->epfd = p->tfd = p->lfd = -1;
	p->max_conns = conf->max_conns ? conf->max_conns : MAX_CONNS;
	p->max_per_peer = conf->max_per_peer;
	p->head_timeout_ms = conf->head_timeout_ms ? conf->head_timeout_ms : HEAD_TIMEOUT_MS;
	p->queue = conf->queue_when_full;
	p->auth = conf->auth ? xstrdup(conf->auth) : NULL;
	p->local = conf->local;
	/* splice has no MSG_NOSIGNAL: a sandbox hanging up mid-transfer would
	 * kill the supervisor. Children must reset SIGPIPE before exec. */
	signal(SIGPIPE, SIG_IGN);
	proxy_event_init(&p->ev, conf->profile_name, conf->events_fd);
	if (proxy_rules_init(&p->rules, conf->hosts, conf->allow, &sets, err) < 0) {
		err_wrap(err, "profile '%s'", conf->profile_name ? conf->profile_name : "?");
		goto fail;
	}
	char summary[1024];
	if (conf->policy && proxy_rules_set_policy(&p->rules, conf->policy, summary, sizeof(summary), err) < 0)
		goto fail;
	p->cred = conf->cred;
	if (conf->cred && conf->tlsca && tlsmitm_new(conf->tlsca, conf->cred, conf->events_fd, &p->mitm, err) < 0)
		goto fail;
	if (proxy_chain_from_env(&p->chain, err) < 0 || resolver_new(&p->resolver, err) < 0 ||
	    setup_fds(p, listen_fd, err) < 0)
		goto fail;
	*out = p;
	return 0;
fail:
	if (p->lfd < 0)
		close(listen_fd);
	proxy_free(p);
	return -1;
}

int proxy_pollfd(struct sbx_proxy *p)
{
	return p->epfd;
}

void proxy_counters(const struct sbx_proxy *p, struct sbx_proxy_counters *out)
{
	*out = p->count;
	out->open = p->live;
}

void proxy_free(struct sbx_proxy *p)
{
	if (!p)
		return;
	for (struct conn *c = p->conns; c; c = c->next)
		proxy_conn_kill(p, c);
	proxy_reap(p);
	tlsmitm_free(p->mitm);
	resolver_free(p->resolver);
	proxy_rules_free(&p->rules);
	proxy_chain_free(&p->chain);
	proxy_event_fini(&p->ev);
	if (p->local.host && p->local.free)
		p->local.free(p->local.ctx);
	if (p->auth) {
		explicit_bzero(p->auth, strlen(p->auth));
		free(p->auth);
	}
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->tfd >= 0)
		close(p->tfd);
	if (p->lfd >= 0)
		close(p->lfd);
	free(p);
}
