/* gateway.c - the package gateway's core: takes the requests the proxy
 * hands over, routes them to an ecosystem by the first path segment and
 * drives the clients, libcurl's sockets and the timers from its own epoll
 * (which sits in the proxy's). Answers and events: gw_client.c. */
#define _GNU_SOURCE
#include "gateway/gateway.h"

#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <time.h>

#include "base/util.h"
#include "pkg/gosum.h"
#include "gateway/gw.h"
#include "gateway/imagesrc.h"
#include "pkg/malfeed.h"
#include "gateway/pkgcache.h"

#define MAX_CLIENTS 256
/* epoll tags: small constants, or an id/fd shifted above a kind */
#define TAG_TIMER 1ULL
#define TAG_CURL_TIMER 2ULL
#define KIND_CLIENT 6ULL
#define KIND_CURL 7ULL

static const struct gw_ecosystem *const ecosystems[] = { &gw_npm, &gw_deb, &gw_pypi, &gw_go, &gw_cargo, &gw_maven };

const char *gateway_npm_upstream(const struct sbx_config *cfg, const char *image_registry)
{
	if (cfg->pkg_npm && cfg->pkg_npm[0])
		return cfg->pkg_npm;
	return image_registry && image_registry[0] ? image_registry : NULL;
}

const char *gateway_pypi_upstream(const struct sbx_config *cfg, const char *image_index, char *buf,
				  size_t size)
{
	const char *s = cfg->pkg_pypi && cfg->pkg_pypi[0] ? cfg->pkg_pypi : image_index ? image_index : "";
	size_t n = strcspn(s, " ");

	if (n == 0 || n >= size)
		return NULL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	return buf;
}

int gateway_go_sumdb(const struct sbx_config *cfg, const struct hostmatch_sets *img, char *buf, size_t size)
{
	const char *v = imagesrc_go_sumdb(cfg, img);
	size_t kn = v ? strcspn(v, " ") : 0, nn = v ? strcspn(v, "+") : 0;

	if (!imagesrc_go(cfg, img) || !v || nn >= kn)
		return -1;
	return snprintf(buf, size, "%.*s %s/sumdb/%.*s", (int)kn, v, GATEWAY_GO_URL, (int)nn, v) < (int)size ? 0 : -1;
}

void gateway_conf_init(struct sbx_gateway_conf *conf, const struct sbx_config *cfg,
		       const struct hostmatch_sets *img, char **pypi)
{
	char buf[1024];
	const char *p = gateway_pypi_upstream(cfg, img ? img->pypi_index : NULL, buf, sizeof(buf));

	*pypi = p ? xstrdup(p) : NULL;
	*conf = (struct sbx_gateway_conf){
		.allow = &cfg->allow,
		.npm_upstream = gateway_npm_upstream(cfg, img ? img->npm_registry : NULL),
		.pypi_upstream = *pypi,
		.go_upstream = imagesrc_go(cfg, img), .go_sumdb = imagesrc_go_sumdb(cfg, img),
		.cargo_upstream = imagesrc_cargo(cfg, img),
		.maven_upstream = imagesrc_maven(cfg, img),
		.events_fd = -1, .timeout_ms = cfg->pkg_timeout_ms,
		.index_max_age_ms = cfg->pkg_index_max_age_ms ? (int64_t)cfg->pkg_index_max_age_ms : -1,
		.index_max_stale_ms = (int64_t)cfg->pkg_index_max_stale_ms,
		.rules = { .allow = &cfg->pkg_allow, .deny = &cfg->pkg_deny,
			   .offline = cfg->pkg_offline == SBX_ON,
			   .report = cfg->pkg_mode == SBX_PKG_REPORT },
		.malicious = &cfg->pkg_malicious,
		.system_cache = cfg->pkg_cache, .cache_max = cfg->pkg_cache_max,
	};
	rules_set_min_age(&conf->rules, &cfg->pkg_min_age);
	rules_set_not_after(&conf->rules, &cfg->pkg_not_after);
}

int gateway_local_for(const struct sbx_gateway_conf *conf, struct proxy_local *out,
		      struct sbx_err *err)
{
	const struct hostmatch_sets *hs = conf->sets;
	struct sbx_gateway *gw;

	*out = (struct proxy_local){ 0 };
	if (!conf->npm_upstream && !conf->pypi_upstream && !conf->go_upstream && !conf->cargo_upstream &&
	    !conf->maven_upstream &&
	    !(hs && hs->apt_hosts && hs->apt_hosts[0]))
		return 0;
	if (gateway_new(conf, &gw, err) < 0)
		return -1;
	*out = gateway_local(gw);
	return 0;
}

/* The request line (host: as the URL gives it) and the one header the
 * ecosystems read. */
static int parse_head(struct gw_client *c, const char *head, size_t len, char *host, size_t hsize,
		      char *path, size_t psize)
{
	const char *eol = memmem(head, len, "\r\n", 2), *sp1, *sp2;

	if (!eol || !(sp1 = memchr(head, ' ', (size_t)(eol - head))) ||
	    !(sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1))))
		return 400;
	if ((size_t)(sp1 - head) == 4 && memcmp(head, "HEAD", 4) == 0)
		c->head_only = true;
	else if ((size_t)(sp1 - head) != 3 || memcmp(head, "GET", 3) != 0)
		return 405;
	/* the proxy matched the host already (canonicalised): the path after it */
	const char *u = sp1 + 1, *end = sp2;
	if ((size_t)(end - u) < 7 || strncasecmp(u, "http://", 7) != 0)
		return 400;
	u += 7;
	const char *hs = u;
	while (u < end && *u != '/')
		u++;
	if ((size_t)(u - hs) >= hsize)
		return 400;
	memcpy(host, hs, (size_t)(u - hs));
	host[u - hs] = '\0';
	size_t ulen = (size_t)(end - u);
	if (ulen == 0 || ulen >= psize)
		return ulen ? 414 : 404;
	memcpy(path, u, ulen);
	path[ulen] = '\0';
	for (const char *h = eol; (h = memmem(h, len - (size_t)(h - head), "\r\n", 2)) && h + 2 < head + len; h += 2) {
		if (strncasecmp(h + 2, "accept:", 7) != 0)
			continue;
		const char *v = h + 9, *e = memmem(v, len - (size_t)(v - head), "\r\n", 2);
		v += strspn(v, " \t");
		if (e && e > v)
			snprintf(c->accept, sizeof(c->accept), "%.*s", (int)(e - v), v);
		break;
	}
	return 0;
}

static void route(struct gw *gw, struct gw_client *c, const char *path)
{
	for (size_t i = 0; i < ARRAY_SIZE(ecosystems); i++) {
		size_t n = strlen(ecosystems[i]->name);
		if (strncmp(path + 1, ecosystems[i]->name, n) == 0 && path[1 + n] == '/') {
			ecosystems[i]->request(gw, c, path + 2 + n);
			return;
		}
	}
	gw_fail(gw, c, 404, NULL, NULL, NULL, "no such endpoint");
}

/* Whether the proxy hands plain HTTP for HOST:PORT here: the image's apt
 * hosts (past the proxy's allow list), for gw_deb.c. */
static bool claims(void *ctx, const char *host, int port)
{
	struct gw *gw = ctx;
	struct hostmatch_grant g;

	return hostmatch_check(&gw->apt, host, port, &g) == HOSTMATCH_OK;
}

/* By the URL's host: the gateway's own name routes by the path; an apt
 * host's request goes to gw_deb.c as "HOST[:PORT]/PATH", as /deb/HOST/PATH
 * would. */
static void route_host(struct gw *gw, struct gw_client *c, const char *host, const char *path)
{
	char canon[HOSTMATCH_MAX], name[HOSTMATCH_MAX + 8];
	const char *colon = strrchr(host, ':');
	int port = 80;

	snprintf(name, sizeof(name), "%.*s", (int)(colon ? colon - host : (ptrdiff_t)strlen(host)), host);
	if (colon)
		port = atoi(colon + 1);
	if (hostmatch_canon(name, canon, sizeof(canon)) == 0 && strcmp(canon, GATEWAY_HOST) == 0) {
		route(gw, c, path);
		return;
	}
	if (hostmatch_canon(name, canon, sizeof(canon)) < 0 || !claims(gw, canon, port)) {
		gw_fail(gw, c, 404, NULL, NULL, NULL, "no such endpoint");
		return;
	}
	_cleanup_free_ char *p = xasprintf("%s%s%s", canon, colon ? colon : "", path);
	gw_deb.request(gw, c, p);
}

/* Whether the connection stays open after the answer (HTTP/1.1, no
 * "Connection: close", no body to the request); then what was read past
 * the head is the next request's start, kept for the proxy. */
static void keep_alive(struct gw_client *c, const char *head, size_t len)
{
	const char *end = memmem(head, len, "\r\n\r\n", 4), *eol = memmem(head, len, "\r\n", 2);

	if (!end || eol - head < 9 || memcmp(eol - 9, " HTTP/1.1", 9) != 0)
		return;
	for (const char *h = eol + 2, *e; h < end + 2; h = e + 2) {
		e = memmem(h, (size_t)(end + 2 - h), "\r\n", 2);
		size_t n = (size_t)(e - h);
		if ((n > 15 && strncasecmp(h, "content-length:", 15) == 0 && strspn(h + 15, " \t0") < n - 15) ||
		    (n > 18 && strncasecmp(h, "transfer-encoding:", 18) == 0) ||
		    (n > 11 && strncasecmp(h, "connection:", 11) == 0 && memmem(h, n, "lose", 4)))
			return;
	}
	end += 4;
	c->keep = true;
	c->next_len = len - (size_t)(end - head);
	if (c->next_len) {
		c->next_req = xmalloc(c->next_len);
		memcpy(c->next_req, end, c->next_len);
	}
}

static void take(void *ctx, struct sbx_proxy *door, int fd, const unsigned char *peer, const char *head,
		 size_t len)
{
	struct gw *gw = ctx;
	struct gw_client *c = xcalloc(1, sizeof(*c));
	char path[2048], host[HOSTMATCH_MAX + 8];
	size_t n = 0;

	for (struct gw_client *o = gw->clients; o; o = o->next)
		n += !o->dead;
	c->id = ++gw->next_id;
	c->fd = fd;
	gw_client_sndbuf(fd);
	c->gw = gw;
	c->door = door;
	memcpy(c->peer, peer, sizeof(c->peer));
	c->body_fd = -1;
	c->deadline = (int64_t)now_ms() + GW_CLIENT_TIMEOUT_MS;
	c->next = gw->clients;
	gw->clients = c;
	if (gw_ep_add(gw, fd, EPOLLOUT | EPOLLRDHUP | EPOLLET, c->id << 8 | KIND_CLIENT) < 0 || n >= MAX_CLIENTS) {
		gw_client_kill(c);
		return;
	}
	keep_alive(c, head, len);
	int st = parse_head(c, head, len, host, sizeof(host), path, sizeof(path));
	if (st)
		gw_fail(gw, c, st, NULL, NULL, NULL, "%s", st == 405 ? "only GET and HEAD" : "bad request");
	else if (!gw_feed_hold(gw, c, host, path))
		route_host(gw, c, host, path);
	gw_client_reap(gw);
}

static size_t clients_of(void *ctx, const unsigned char *peer)
{
	struct gw *gw = ctx;
	size_t n = 0;

	for (struct gw_client *c = gw->clients; c; c = c->next)
		n += !c->dead && (!peer || memcmp(c->peer, peer, sizeof(c->peer)) == 0);
	return n;
}

static void timers(struct gw *gw)
{
	uint64_t ticks;
	int64_t now = (int64_t)now_ms();

	(void)!read(gw->tfd, &ticks, sizeof(ticks));
	for (struct gw_client *c = gw->clients; c; c = c->next)
		if (!c->dead && c->deadline <= now)
			gw_client_kill(c);
	gw_artifact_poll(gw);
	gw_feed_poll(gw);
}

static void dispatch(void *ctx)
{
	struct gw *gw = ctx;
	struct epoll_event evs[64];
	int n = epoll_wait(gw->epfd, evs, ARRAY_SIZE(evs), 0);

	for (int i = 0; i < n; i++) {
		uint64_t tag = evs[i].data.u64;
		if (tag == TAG_TIMER) {
			timers(gw);
		} else if (tag == GW_TAG_DEBIDX) {
			gw_deb_wake(gw);
		} else if (tag == GW_TAG_RESOLVE) {
			gw_fetch_wake(gw);
		} else if (tag == TAG_CURL_TIMER) {
			uint64_t ticks;
			(void)!read(gw->curl_tfd, &ticks, sizeof(ticks));
			gw_fetch_timer(gw);
		} else if ((tag & 0xff) == KIND_CURL) {
			gw_fetch_sock_event(gw, (int)(tag >> 8), evs[i].events);
		} else if ((tag & 0xff) == KIND_CLIENT) {
			struct gw_client *c = gw_client_find(gw, tag >> 8);
			if (c && c->out_len)
				gw_client_flush(c);
			else if (c && (evs[i].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
				gw_client_kill(c);  /* gone before its answer */
		}
	}
	gw_client_reap(gw);
}

static void local_free(void *ctx)
{
	gateway_free(ctx);
}

struct proxy_local gateway_local(struct sbx_gateway *gw)
{
	struct gw *g = (struct gw *)gw;
	return (struct proxy_local){ .host = GATEWAY_HOST, .ctx = g, .pollfd = g->epfd,
				     .dispatch = dispatch, .take = take, .claims = claims,
				     .clients_of = clients_of, .free = local_free };
}

struct sbx_gateway *gateway_of(const struct proxy_local *l)
{
	return l && l->take == take ? l->ctx : NULL;
}

static const char *fill_system;

void gateway_fill_system(const char *dir)
{
	fill_system = dir;
}

/* The user's cache (or root's system cache while it fills it), with the
 * system cache looked up first and the cap. */
static int cache_open(struct gw *gw, const struct sbx_gateway_conf *conf, struct sbx_err *err)
{
	_cleanup_free_ char *root = NULL;

	if (fill_system)
		root = xstrdup(fill_system);
	else if (conf->cache_dir)
		root = xstrdup(conf->cache_dir);
	else if (pkgcache_user_root(&root, err) < 0)
		return -1;
	if (gw_cache_open(root, fill_system != NULL, &gw->cache, err) < 0)
		return -1;
	gw_cache_cap(gw->cache, conf->cache_max);
	if (!fill_system)
		gw_cache_system(gw->cache, conf->system_cache);
	return 0;
}

/* The image's apt hosts, whose plain HTTP the proxy hands here (they must
 * pass the allow list too, first in the proxy, then on every hop). */
static int compile_apt(struct gw *gw, struct sbx_err *err)
{
	static char *apt[] = { "@apt", NULL }, *origin[] = { "the image's apt sources", NULL };
	const struct sbx_strlist al = { apt, origin, 1 };

	return hostmatch_compile(&al, gw->conf.sets, &gw->apt, err);
}

static char *with_slash(const char *url)
{
	size_t n = strlen(url);
	return xasprintf("%s%s", url, n && url[n - 1] == '/' ? "" : "/");
}

/* [packages] go and go_sumdb: the upstreams, and the checksum database's
 * key checked whole (config.c checked its shape). */
static int go_conf(struct gw *gw, const struct sbx_gateway_conf *conf, struct sbx_err *err)
{
	const char *why, *v = conf->go_sumdb;
	size_t nl, kn = v ? strcspn(v, " ") : 0;

	if (!conf->go_upstream)
		return 0;
	if (!v || !config_go_sumdb_url(v))
		return err_set(err, 0, "[packages] go: needs go_sumdb = NAME+HASH+KEY URL");
	gw->go_sumdb_key = xasprintf("%.*s", (int)kn, v);
	if (gosum_vkey_check(gw->go_sumdb_key, &nl, &why) < 0)
		return err_set(err, 0, "[packages] go_sumdb: '%s': %s", gw->go_sumdb_key, why);
	gw->go_sumdb_name = xasprintf("%.*s", (int)nl, v);
	gw->go_upstream = with_slash(conf->go_upstream);
	gw->go_sumdb_url = with_slash(config_go_sumdb_url(v));
	return 0;
}

int gateway_new(const struct sbx_gateway_conf *conf, struct sbx_gateway **out, struct sbx_err *err)
{
	struct gw *gw = xcalloc(1, sizeof(*gw));
	struct itimerspec its = { { 0, 200000000 }, { 0, 200000000 } };

	gw->conf = *conf;
	gw->epfd = gw->tfd = gw->curl_tfd = -1;
	gw->profile = xstrdup(conf->profile_name ? conf->profile_name : "default");
	gw->conf.profile_name = gw->profile;
	gw_live_init(gw);
	if (conf->npm_upstream) {
		size_t n = strlen(conf->npm_upstream);
		gw->npm_upstream = xasprintf("%s%s", conf->npm_upstream, n && conf->npm_upstream[n - 1] == '/' ? "" : "/");
	}
	if (conf->pypi_upstream) {
		size_t n = strlen(conf->pypi_upstream);
		gw->pypi_upstream = xasprintf("%s%s", conf->pypi_upstream, n && conf->pypi_upstream[n - 1] == '/' ? "" : "/");
	}
	if (go_conf(gw, conf, err) < 0)
		goto fail;
	char idx[1024];
	if (config_cargo_index(conf->cargo_upstream, idx, sizeof(idx)))
		gw->cargo_upstream = with_slash(idx);
	if (conf->maven_upstream)
		gw->maven_upstream = with_slash(conf->maven_upstream);
	const struct hostmatch_sets *hs = conf->sets;
	gw->not_apt = xasprintf("%s %s %s %s %s %s %s %s", gw->cargo_upstream ? gw->cargo_upstream : "",
				gw->maven_upstream ? gw->maven_upstream : "",
				gw->go_upstream ? gw->go_upstream : "",
				gw->go_sumdb_url ? gw->go_sumdb_url : "", gw->npm_upstream ? gw->npm_upstream : "",
				gw->pypi_upstream ? gw->pypi_upstream : "", hs && hs->npm_registry ? hs->npm_registry : "",
				hs && hs->pypi_index ? hs->pypi_index : "");
	/* an upstream's host is on the allow list already (config_upstream_entry,
	 * or the image's @npm and @pypi): every hop, the first included, must pass it */
	if (hostmatch_compile(gw->conf.allow, gw->conf.sets, &gw->allow, err) < 0 || compile_apt(gw, err) < 0 ||
	    cache_open(gw, conf, err) < 0)
		goto fail;
	if (gw_feed_init(gw, route_host, err) < 0)
		goto fail;
	gw->conf.rules.on_report = gw_report;
	gw->conf.rules.report_arg = gw;
	gw->epfd = epoll_create1(EPOLL_CLOEXEC);
	gw->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	gw->curl_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (gw->epfd < 0 || gw->tfd < 0 || gw->curl_tfd < 0 || timerfd_settime(gw->tfd, 0, &its, NULL) < 0 ||
	    gw_ep_add(gw, gw->tfd, EPOLLIN, TAG_TIMER) < 0 || gw_ep_add(gw, gw->curl_tfd, EPOLLIN, TAG_CURL_TIMER) < 0) {
		err_sys(err, "gateway: epoll");
		goto fail;
	}
	/* libcurl's multi handle comes with the first fetch (gw_fetch.c); the
	 * upstream proxy is read now (only when sbxrun's environment names one,
	 * which the egress proxy reads at its start too) */
	if (gw_proxy_init(gw, err) < 0)
		goto fail;
	*out = (struct sbx_gateway *)gw;
	return 0;
fail:
	err_wrap(err, "package gateway");
	gateway_free((struct sbx_gateway *)gw);
	return -1;
}

void gateway_free(struct sbx_gateway *g)
{
	struct gw *gw = (struct gw *)g;

	if (!gw)
		return;
	/* clients first: what the fetches' ends answer goes nowhere */
	for (struct gw_client *c = gw->clients; c; c = c->next)
		gw_client_kill(c);
	gw_fetch_fini(gw);
	gw_feed_fini(gw);
	gw_reval_fini(gw);
	gw_artifact_fini(gw);
	for (size_t i = 0; i < ARRAY_SIZE(ecosystems); i++)
		if (ecosystems[i]->free)
			ecosystems[i]->free(gw);
	gw_client_reap(gw);
	gw_cache_close(gw->cache);
	hostmatch_free(&gw->allow);
	hostmatch_free(&gw->apt);
	if (gw->epfd >= 0)
		close(gw->epfd);
	if (gw->tfd >= 0)
		close(gw->tfd);
	if (gw->curl_tfd >= 0)
		close(gw->curl_tfd);
	free(gw->npm_upstream);
	free(gw->pypi_upstream);
	free(gw->go_upstream);
	free(gw->go_sumdb_key);
	free(gw->go_sumdb_name);
	free(gw->go_sumdb_url);
	free(gw->cargo_upstream);
	free(gw->maven_upstream);
	free(gw->not_apt);
	free(gw->profile);
	gw_live_fini(gw);
	malfeed_free(gw->feed);
	for (size_t i = 0; i < gw->ntold; i++)
		free(gw->told[i]);
	free(gw->told);
	free(gw);
}
