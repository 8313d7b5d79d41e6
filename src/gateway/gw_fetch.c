/* gw_fetch.c - the gateway's upstream fetches: libcurl's multi interface
 * driven from the gateway's epoll (its sockets and its one timer), never
 * blocking the loop. Every hop is checked the way the proxy checks a
 * request: its host against the allow list, each address it connects to
 * against the address classes (hostmatch_addr_refusal, with the grant of
 * that hop's host); redirects are followed here, hop by hop, never by
 * libcurl. HTTPS with libcurl's full certificate checks; plain HTTP only
 * to host.sbxrun.internal (a lab mirror on the host, allowed exactly). */
#define _GNU_SOURCE
#define CURL_DISABLE_TYPECHECK
#include <curl/curl.h>
#include <errno.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/gw.h"
#include "net/dlurl.h"

#define MAX_HOPS 5
/* at once: each may hold a packument of up to its cap in memory; more
 * wait in line (a real npm install asks for ~70 packuments at once) */
#define MAX_FETCHES 48
#define MAX_QUEUED 4096
#define CONNECT_TIMEOUT_S 15L
#define DEFAULT_SILENCE_MS 30000
#define TOTAL_TIMEOUT_MS 600000L
#define KIND_CURL 7ULL

static curl_socket_t on_socket(void *arg, curlsocktype purpose, struct curl_sockaddr *a)
{
	struct gw_fetch *f = arg;
	const char *why = gw_proxy_socket_refusal(f, &a->addr);

	(void)purpose;
	if (why) {
		f->refused = why;
		return CURL_SOCKET_BAD;
	}
	return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol);
}

static size_t on_data(char *p, size_t size, size_t nmemb, void *arg)
{
	struct gw_fetch *f = arg;
	size_t n = size * nmemb;
	long code = 0;

	curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200)  /* a redirect's or an error's body: kept short, not streamed */
		n = n > 4096 - f->len ? (4096 > f->len ? 4096 - f->len : 0) : n;
	if (f->len + n > f->max) {
		f->too_big = true;
		return 0;
	}
	if (code == 200) {
		/* the cap holds before a byte more is written */
		if (write_all(f->fd >= 0 ? f->fd : f->spool, p, n) < 0)
			return 0;
	} else {
		f->body = xrealloc(f->body, f->len + n + 1);
		memcpy(f->body + f->len, p, n);
		f->body[f->len + n] = '\0';
	}
	if (code == 200 && f->data)
		f->data(f, p, n);
	f->len += n;
	return size * nmemb;
}

/* A header's value, trimmed, into out; only when it fits whole. */
static void header_value(const char *p, size_t n, size_t skip, char *out, size_t size)
{
	const char *v = p + skip;
	size_t l = n - skip;
	while (l && (*v == ' ' || *v == '\t'))
		v++, l--;
	while (l && (v[l - 1] == '\r' || v[l - 1] == '\n' || v[l - 1] == ' '))
		l--;
	if (l < size && !memchr(v, '\t', l))
		snprintf(out, size, "%.*s", (int)l, v);
}

static size_t on_header(char *p, size_t size, size_t nmemb, void *arg)
{
	struct gw_fetch *f = arg;
	size_t n = size * nmemb;

	if (n > 5 && strncasecmp(p, "etag:", 5) == 0)
		header_value(p, n, 5, f->resp_etag, sizeof(f->resp_etag));
	else if (n > 14 && strncasecmp(p, "last-modified:", 14) == 0)
		header_value(p, n, 14, f->resp_lastmod, sizeof(f->resp_lastmod));
	return n;
}

/* The validators as one string: the ETag, then a tab and Last-Modified. */
static void validators(struct gw_fetch *f)
{
	size_t n = strlen(f->resp_etag);

	if (f->resp_lastmod[0] && n + 1 + strlen(f->resp_lastmod) < GW_VALIDATORS_MAX)
		snprintf(f->resp_etag + n, sizeof(f->resp_etag) - n, "\t%s", f->resp_lastmod);
}

/* Scheme, host and port of one hop against the allow list. */
static int check_hop(struct gw *gw, struct gw_fetch *f, const char *url, struct dlurl *u)
{
	struct sbx_err e;
	const char *why = NULL;

	if (dlurl_split(url, u, &e) < 0) {
		snprintf(f->error, sizeof(f->error), "%s", e.msg);
	} else if (hostmatch_check(&gw->allow, u->host, u->port, &f->grant) != HOSTMATCH_OK) {
		snprintf(f->error, sizeof(f->error), "host '%s' port %d is not in profile '%s' allow list",
			 u->host, u->port, gw->profile);
	} else if (f->hop_refused && (why = f->hop_refused(gw, u->host, u->port))) {
		snprintf(f->error, sizeof(f->error), "host '%s' port %d: %s", u->host, u->port, why);
	} else if (!u->https && !f->grant.internal && !f->plain_http) {
		snprintf(f->error, sizeof(f->error), "'%.300s': upstreams are fetched over https only", url);
	} else {
		snprintf(f->resolve, sizeof(f->resolve), "%s:%d:127.0.0.1", HOSTMATCH_INTERNAL, u->port);
		return 0;
	}
	return -1;
}

static void setup(struct gw *gw, struct gw_fetch *f, CURL *c)
{
	uint64_t silence = gw->conf.timeout_ms ? gw->conf.timeout_ms : DEFAULT_SILENCE_MS;

	curl_easy_setopt(c, CURLOPT_PRIVATE, f);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);  /* each hop is checked here */
	curl_easy_setopt(c, CURLOPT_NETRC, (long)CURL_NETRC_IGNORED);
	gw_proxy_setup(gw, c);  /* direct, or through the upstream proxy per hop (gw_proxy_route) */
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, CONNECT_TIMEOUT_S);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, TOTAL_TIMEOUT_MS);
	/* a stalled upstream: under a byte a second for the silence window */
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, (long)((silence + 999) / 1000));
	curl_easy_setopt(c, CURLOPT_USERAGENT, "sbxrun-gateway");
	curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_data);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, f);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, f);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, on_socket);
	curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, f);
	if (f->max)
		curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)f->max);
	struct curl_slist *h = NULL;
	if (f->accept[0]) {
		_cleanup_free_ char *a = xasprintf("Accept: %s", f->accept);
		h = curl_slist_append(h, a);
	}
	size_t tag = strcspn(f->etag, "\t");
	if (tag) {
		_cleanup_free_ char *a = xasprintf("If-None-Match: %.*s", (int)tag, f->etag);
		h = curl_slist_append(h, a);
	}
	if (f->etag[tag] == '\t' && f->etag[tag + 1]) {
		_cleanup_free_ char *a = xasprintf("If-Modified-Since: %s", f->etag + tag + 1);
		h = curl_slist_append(h, a);
	}
	f->hdrs = h;
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
}

/* Points the handle at url (checked) and hands it to the multi. */
static int hop(struct gw *gw, struct gw_fetch *f, const char *url)
{
	struct dlurl u;

	if (check_hop(gw, f, url, &u) < 0)
		return -1;
	f->resolve_list = curl_slist_append(NULL, f->resolve);
	curl_easy_setopt(f->curl, CURLOPT_RESOLVE, f->grant.internal ? f->resolve_list : NULL);
	curl_easy_setopt(f->curl, CURLOPT_URL, url);
	int route = gw_proxy_route(gw, f, u.host, u.port);
	if (route != 0)  /* refused, or waiting for sbxrun's own lookup */
		return route < 0 ? -1 : 0;
	if (curl_multi_add_handle(gw->multi, f->curl) != CURLM_OK) {
		snprintf(f->error, sizeof(f->error), "cannot start the transfer");
		return -1;
	}
	return 0;
}

static size_t running(const struct gw *gw)
{
	size_t n = 0;

	for (const struct gw_fetch *o = gw->fetches; o; o = o->next)
		n++;
	return n;
}

static CURLM *multi(struct gw *gw);

static int launch(struct gw *gw, struct gw_fetch *f)
{
	if (!multi(gw)) {
		snprintf(f->error, sizeof(f->error), "cannot start libcurl");
		return -1;
	}
	/* a body not streamed to the caller's file goes to one of the cache's
	 * own, never into memory (an endless index stops at f->max) */
	if (f->fd < 0 && !f->spooled) {
		if (gw_cache_scratch(gw->cache, &f->spool) < 0) {
			snprintf(f->error, sizeof(f->error), "cannot make a temporary file in the cache: %s",
				 strerror(errno));
			return -1;
		}
		f->spooled = true;
	}
	f->curl = curl_easy_init();
	if (!f->curl) {
		snprintf(f->error, sizeof(f->error), "out of memory");
		return -1;
	}
	setup(gw, f, f->curl);
	if (hop(gw, f, f->url) < 0)
		return -1;
	f->next = gw->fetches;
	gw->fetches = f;
	return 0;
}

int gw_fetch_start(struct gw *gw, struct gw_fetch *f)
{
	if (gw->conf.rules.offline) {  /* the ecosystems answer first; this is the backstop */
		snprintf(f->error, sizeof(f->error), "offline: nothing is fetched ([packages] offline = yes)");
		return -1;
	}
	f->start_ms = (int64_t)now_ms();
	if (!f->max)
		f->max = UINT64_MAX / 2;
	if (running(gw) < MAX_FETCHES)
		return launch(gw, f);
	if (gw->nqueued >= MAX_QUEUED) {
		snprintf(f->error, sizeof(f->error), "too many upstream fetches waiting (%d)", MAX_QUEUED);
		return -1;
	}
	/* started from the loop when a running one ends (start_queued) */
	struct gw_fetch **tail = &gw->queued;
	while (*tail)
		tail = &(*tail)->next;
	f->next = NULL;
	*tail = f;
	gw->nqueued++;
	return 0;
}

/* A slot came free: the oldest waiting fetches take it. One that cannot
 * start ends here, from the loop, as any fetch ends. */
static void start_queued(struct gw *gw)
{
	while (gw->queued && running(gw) < MAX_FETCHES) {
		struct gw_fetch *f = gw->queued;
		gw->queued = f->next;
		gw->nqueued--;
		f->next = NULL;
		if (launch(gw, f) < 0) {
			f->ms = (int64_t)now_ms() - f->start_ms;
			f->done(gw, f);
		}
	}
}

void gw_fetch_free(struct gw_fetch *f)
{
	if (!f)
		return;
	if (f->curl)
		curl_easy_cleanup(f->curl);
	if (f->mapped && f->body)
		munmap(steal_ptr(f->body), f->len);
	if (f->spooled)
		close(f->spool);
	curl_slist_free_all(f->hdrs);
	curl_slist_free_all(f->resolve_list);
	curl_slist_free_all(f->connect_to);
	free(f->url);
	free(f->body);
	free(f);
}

static void unlink_fetch(struct gw *gw, struct gw_fetch *f)
{
	for (struct gw_fetch **pp = &gw->fetches; *pp; pp = &(*pp)->next)
		if (*pp == f) {
			*pp = f->next;
			return;
		}
}

/* The body as written to the spool, mapped read-only for the caller:
 * its pages are the page cache's, read in as the parsers touch them, and
 * go with gw_fetch_free. */
static void map_body(struct gw_fetch *f)
{
	if (!f->spooled || f->len == 0)
		return;
	void *m = mmap(NULL, f->len, PROT_READ, MAP_PRIVATE, f->spool, 0);
	if (m == MAP_FAILED) {
		snprintf(f->error, sizeof(f->error), "cannot map the body: %s", strerror(errno));
		return;
	}
	free(f->body);  /* an earlier hop's error body, if any */
	f->body = m;
	f->mapped = true;
}

/* Ends a fetch, from the loop: its owner is told, a waiting one starts. */
static void end_fetch(struct gw *gw, struct gw_fetch *f)
{
	f->ms = (int64_t)now_ms() - f->start_ms;
	if (!f->error[0] && f->status == 200)
		map_body(f);
	validators(f);
	unlink_fetch(gw, f);
	f->done(gw, f);
	start_queued(gw);
}

/* A hop ended: a redirect starts the next (checked) hop, else done. */
static void finished(struct gw *gw, struct gw_fetch *f, CURLcode rc)
{
	char *loc = NULL;

	curl_multi_remove_handle(gw->multi, f->curl);
	curl_slist_free_all(f->resolve_list);
	f->resolve_list = NULL;
	curl_easy_getinfo(f->curl, CURLINFO_RESPONSE_CODE, &f->status);
	if (rc == CURLE_OK && f->status >= 300 && f->status < 400 &&
	    curl_easy_getinfo(f->curl, CURLINFO_REDIRECT_URL, &loc) == CURLE_OK && loc) {
		_cleanup_free_ char *next = xstrdup(loc);
		free(steal_ptr(f->body));
		f->len = 0;  /* the spool is empty: only a 200's body goes there */
		f->resp_etag[0] = f->resp_lastmod[0] = '\0';
		if (++f->hops > MAX_HOPS)
			snprintf(f->error, sizeof(f->error), "more than %d redirects", MAX_HOPS);
		else if (hop(gw, f, next) == 0)
			return;
	} else if (f->too_big) {
		snprintf(f->error, sizeof(f->error), "larger than the gateway's cap of %llu bytes",
			 (unsigned long long)f->max);
	} else if (f->refused) {
		snprintf(f->error, sizeof(f->error), "refused to connect: %s", f->refused);
	} else if (rc == CURLE_OPERATION_TIMEDOUT) {
		snprintf(f->error, sizeof(f->error), "the upstream stalled (timed out)");
	} else if (rc != CURLE_OK) {
		snprintf(f->error, sizeof(f->error), "%s", curl_easy_strerror(rc));
	}
	end_fetch(gw, f);
}

void gw_fetch_wake(struct gw *gw)
{
	struct gw_fetch *f;

	while ((f = gw_proxy_ready(gw))) {
		if (!f->error[0] && curl_multi_add_handle(gw->multi, f->curl) == CURLM_OK)
			continue;
		if (!f->error[0])
			snprintf(f->error, sizeof(f->error), "cannot start the transfer");
		end_fetch(gw, f);
	}
}

static void check_done(struct gw *gw)
{
	CURLMsg *m;
	int left;

	while ((m = curl_multi_info_read(gw->multi, &left))) {
		struct gw_fetch *f = NULL;
		if (m->msg != CURLMSG_DONE)
			continue;
		curl_easy_getinfo(m->easy_handle, CURLINFO_PRIVATE, (char **)&f);
		if (f)
			finished(gw, f, m->data.result);
	}
}

static int on_sock(CURL *e, curl_socket_t s, int what, void *arg, void *sockp)
{
	struct gw *gw = arg;
	uint32_t ev = EPOLLET;

	(void)e;
	(void)sockp;
	if (what == CURL_POLL_REMOVE) {
		epoll_ctl(gw->epfd, EPOLL_CTL_DEL, s, NULL);
		return 0;
	}
	if (what & CURL_POLL_IN)
		ev |= EPOLLIN;
	if (what & CURL_POLL_OUT)
		ev |= EPOLLOUT;
	ev &= ~(uint32_t)EPOLLET;  /* level-triggered: libcurl may leave data unread */
	gw_ep_add(gw, s, ev, (uint64_t)s << 8 | KIND_CURL);
	return 0;
}

static int on_timer(CURLM *m, long ms, void *arg)
{
	struct gw *gw = arg;
	struct itimerspec its = { 0 };

	(void)m;
	if (ms >= 0) {
		if (ms == 0)
			ms = 1;
		its.it_value.tv_sec = ms / 1000;
		its.it_value.tv_nsec = (ms % 1000) * 1000000;
	}
	timerfd_settime(gw->curl_tfd, 0, &its, NULL);
	return 0;
}

void gw_fetch_sock_event(struct gw *gw, int fd, uint32_t events)
{
	int running, flags = 0;

	if (events & EPOLLIN)
		flags |= CURL_CSELECT_IN;
	if (events & EPOLLOUT)
		flags |= CURL_CSELECT_OUT;
	if (events & (EPOLLERR | EPOLLHUP))
		flags |= CURL_CSELECT_ERR;
	curl_multi_socket_action(gw->multi, fd, flags, &running);
	check_done(gw);
}

void gw_fetch_timer(struct gw *gw)
{
	int running;
	curl_multi_socket_action(gw->multi, CURL_SOCKET_TIMEOUT, 0, &running);
	check_done(gw);
}

/* The multi handle, made by the first fetch: libcurl is loaded then
 * (lazylib.c), with its TLS library and their start-up. Made with the
 * gateway, that was 5-12 ms of every sandbox whose image has a package
 * upstream (apt sources are enough), spent on the host side between READY
 * and supervise(), whether or not anything was ever asked for: the
 * command started later on two CPUs, and its end was seen that much later
 * (bench/netstart.sh). */
static CURLM *multi(struct gw *gw)
{
	if (gw->multi)
		return gw->multi;
	gw->multi = curl_multi_init();
	if (!gw->multi)
		return NULL;
	curl_multi_setopt(gw->multi, CURLMOPT_SOCKETFUNCTION, on_sock);
	curl_multi_setopt(gw->multi, CURLMOPT_SOCKETDATA, gw);
	curl_multi_setopt(gw->multi, CURLMOPT_TIMERFUNCTION, on_timer);
	curl_multi_setopt(gw->multi, CURLMOPT_TIMERDATA, gw);
	curl_multi_setopt(gw->multi, CURLMOPT_MAX_HOST_CONNECTIONS, 8L);
	return gw->multi;
}

void gw_fetch_fini(struct gw *gw)
{
	while (gw->fetches) {
		struct gw_fetch *f = gw->fetches;
		gw->fetches = f->next;
		curl_multi_remove_handle(gw->multi, f->curl);
		snprintf(f->error, sizeof(f->error), "the gateway is closing");
		f->done(gw, f);
	}
	while (gw->queued) {
		struct gw_fetch *f = gw->queued;
		gw->queued = f->next;
		snprintf(f->error, sizeof(f->error), "the gateway is closing");
		f->done(gw, f);
	}
	gw->nqueued = 0;
	if (gw->multi)
		curl_multi_cleanup(steal_ptr(gw->multi));
	gw_proxy_fini(gw);
}
