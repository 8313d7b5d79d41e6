/* gw_client.c - the gateway's side of one client connection: finding it,
 * its answers written without blocking (a head, a small body or a file),
 * its end, and the events that tell what was served or refused. The core
 * (gateway.c), the artifacts and the ecosystems answer only through here;
 * the fetches register their sockets in the same epoll (gw_ep_add). */
#define _GNU_SOURCE
#include <errno.h>
#include <json-c/json.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "gateway/gw.h"
#include "net/proxy_event.h"

int gw_ep_add(struct gw *gw, int fd, uint32_t events, uint64_t tag)
{
	struct epoll_event ev = { .events = events, .data.u64 = tag };
	if (epoll_ctl(gw->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		return 0;
	return errno == EEXIST ? epoll_ctl(gw->epfd, EPOLL_CTL_MOD, fd, &ev) : -1;
}

struct gw_client *gw_client_find(struct gw *gw, uint64_t id)
{
	for (struct gw_client *c = gw->clients; c; c = c->next)
		if (c->id == id && !c->dead)
			return c;
	return NULL;
}

bool gw_client_alive(struct gw *gw, uint64_t id)
{
	return gw_client_find(gw, id) != NULL;
}

void gw_client_kill(struct gw_client *c)
{
	if (c->dead)
		return;
	c->dead = true;
	if (c->fd >= 0)
		close(steal_fd(c->fd));
	if (c->body_fd >= 0)
		close(steal_fd(c->body_fd));
}

void gw_client_reap(struct gw *gw)
{
	for (struct gw_client **pp = &gw->clients; *pp;) {
		struct gw_client *c = *pp;
		if (!c->dead) {
			pp = &c->next;
			continue;
		}
		*pp = c->next;
		gw->held -= c->held;
		free(c->out);
		free(c->next_req);
		free(c);
	}
}

/* The kernel's send buffer of a client's connection, kept small: an
 * answer the client does not read waits in the gateway's file, not in
 * socket memory the host pays for (autotuned, it grew to megabytes, so
 * 256 unread answers of a few MiB sat whole in the kernel). The kernel
 * doubles it for its own accounting. */
#define SNDBUF (128 << 10)

void gw_client_sndbuf(int fd)
{
	int n = SNDBUF;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &n, sizeof(n));
}

/* The answer is out: the connection goes back to the proxy's door, which
 * reads and checks its next request as any other (HTTP/1.1 keep-alive). */
static void hand_back(struct gw_client *c)
{
	epoll_ctl(c->gw->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	proxy_keep(c->door, steal_fd(c->fd), c->peer, c->next_req, c->next_len);
	gw_client_kill(c);
}

/* Writes what is pending; when all is out, closes or hands the connection
 * back (keep-alive). */
void gw_client_flush(struct gw_client *c)
{
	if (!c->answering && c->out_len) {
		uint64_t ms = c->gw->conf.answer_ms ? c->gw->conf.answer_ms : GW_ANSWER_MS;
		uint64_t len = c->out_len + (uint64_t)(c->body_fd >= 0 ? c->body_len : 0);
		c->answering = true;
		c->deadline = (int64_t)(now_ms() + ms + (len >> 20) * GW_ANSWER_MIB_MS);
	}
	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			gw_client_kill(c);
			return;
		}
		c->out_off += (size_t)n;
	}
	while (c->body_fd >= 0 && c->body_off < c->body_len) {
		ssize_t n = sendfile(c->fd, c->body_fd, &c->body_off, (size_t)(c->body_len - c->body_off));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			gw_client_kill(c);
			return;
		}
	}
	if (c->out_len && c->keep && c->door) {
		hand_back(c);
	} else if (c->out_len) {
		shutdown(c->fd, SHUT_WR);
		gw_client_kill(c);
	}
}

static const char *status_text(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	default: return "Error";
	}
}

static void set_head(struct gw_client *c, int status, const char *ctype, uint64_t len, const char *body,
		     size_t blen)
{
	char conn[64] = "close";

	if (c->keep && c->door)
		snprintf(conn, sizeof(conn), "keep-alive\r\nKeep-Alive: timeout=%d", PROXY_KEEPALIVE_MS / 1000);
	_cleanup_free_ char *head = xasprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %llu\r\n"
					      "Connection: %s\r\nCache-Control: no-store\r\n\r\n",
					      status, status_text(status), ctype, (unsigned long long)len, conn);
	size_t hl = strlen(head);

	if (c->head_only)
		blen = 0;
	free(c->out);
	c->out = xmalloc(hl + blen + 1);
	memcpy(c->out, head, hl);
	if (blen)
		memcpy(c->out + hl, body, blen);
	c->out_len = hl + blen;
	c->out_off = 0;
}

/* A body past GW_INLINE_MAX is written to a file of the cache's and sent
 * from there, so an answer the client does not read costs the host disk,
 * counted against GW_HELD_MAX, not memory. 0, or the 503's reason. */
static uint64_t held_of(const struct gw *gw, const unsigned char *peer)
{
	uint64_t n = 0;
	for (const struct gw_client *c = gw->clients; c; c = c->next)
		if (!c->dead && memcmp(c->peer, peer, sizeof(c->peer)) == 0)
			n += c->held;
	return n;
}

static const char *spool(struct gw *gw, struct gw_client *cl, const char *body, size_t len)
{
	uint64_t max = gw->conf.held_max ? gw->conf.held_max : GW_HELD_MAX;
	uint64_t share = gw->conf.peer_share ? max / GW_PEER_SHARES : 0;
	int fd;

	if (share && held_of(gw, cl->peer) + len > share)
		return "too many answers not yet read by this address's clients; try again";
	if (gw->held + len > max)
		return "too many answers not yet read by this sandbox's clients; try again";
	if (gw_cache_scratch(gw->cache, &fd) < 0)
		return "cannot write the answer to the cache";
	if (write_all(fd, body, len) < 0) {
		close(fd);
		return "cannot write the answer to the cache";
	}
	cl->body_fd = fd;
	cl->body_off = 0;
	cl->body_len = (off_t)len;
	cl->held = len;
	gw->held += len;
	return NULL;
}

void gw_reply(struct gw *gw, struct gw_client *cl, int status, const char *ctype, const char *body,
	      size_t len)
{
	if (!cl || cl->dead || cl->out_len)
		return;
	if (len > GW_INLINE_MAX && !cl->head_only) {
		const char *refused = spool(gw, cl, body, len);
		if (refused) {
			char why[160];
			snprintf(why, sizeof(why), "sbxrun package gateway: %s\n", refused);
			set_head(cl, 503, "text/plain; charset=utf-8", strlen(why), why, strlen(why));
		} else {
			set_head(cl, status, ctype, len, NULL, 0);
		}
		gw_client_flush(cl);
		return;
	}
	set_head(cl, status, ctype, len, body, len);
	gw_client_flush(cl);
}

void gw_reply_file(struct gw *gw, struct gw_client *cl, int fd, off_t size, const char *ctype)
{
	(void)gw;
	if (!cl || cl->dead || cl->out_len) {
		close(fd);
		return;
	}
	set_head(cl, 200, ctype, (uint64_t)size, NULL, 0);
	if (!cl->head_only) {
		cl->body_fd = fd;
		cl->body_off = 0;
		cl->body_len = size;
	} else {
		close(fd);
	}
	gw_client_flush(cl);
}

static void emit(struct gw *gw, json_object *o, const char *kind)
{
	proxy_event_write(gw->conf.events_fd, o, kind);
}

static json_object *package_obj(const char *eco, const char *name, const char *version)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ecosystem", json_object_new_string(eco));
	json_object_object_add(o, "name", json_object_new_string(name ? name : ""));
	json_object_object_add(o, "version", json_object_new_string(version ? version : ""));
	return o;
}

void gw_event_index(struct gw *gw, const char *eco, const char *index, uint64_t entries, const char *table,
		    int64_t ms, const char *damaged)
{
	json_object *o = json_object_new_object();
	json_object_object_add(o, "ecosystem", json_object_new_string(eco));
	json_object_object_add(o, "index", json_object_new_string(index));
	json_object_object_add(o, "entries", json_object_new_int64((int64_t)entries));
	json_object_object_add(o, "table", json_object_new_string(table));
	json_object_object_add(o, "ms", json_object_new_int64(ms));
	if (damaged)
		json_object_object_add(o, "damaged", json_object_new_string(damaged));
	emit(gw, o, "package-index");
}

void gw_event_artifact(struct gw *gw, const char *eco, const char *name, const char *version,
		       uint64_t bytes, const char *cache, int64_t upstream_ms)
{
	json_object *o = package_obj(eco, name, version);
	json_object_object_add(o, "bytes", json_object_new_int64((int64_t)bytes));
	json_object_object_add(o, "cache", json_object_new_string(cache));
	json_object_object_add(o, "upstream_ms", json_object_new_int64(upstream_ms));
	emit(gw, o, "package");
}

void gw_fail(struct gw *gw, struct gw_client *cl, int status, const char *eco, const char *name,
	     const char *version, const char *fmt, ...)
{
	char msg[768], clean[800], rule[300];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_sanitize(clean, sizeof(clean), msg);
	if (name) {
		json_object *o = package_obj(eco, name, version);
		json_object_object_add(o, "status", json_object_new_int(status));
		json_object_object_add(o, "reason", json_object_new_string(msg));
		rules_which(msg, rule, sizeof(rule));
		if (rule[0])
			json_object_object_add(o, "rule", json_object_new_string(rule));
		json_object_object_add(o, "decision", json_object_new_string("enforce"));
		emit(gw, o, "package-refused");
		fprintf(stderr, "sbxrun: gateway: %s\n", clean);
	}
	_cleanup_free_ char *body = xasprintf("sbxrun package gateway: %s\n", clean);
	if (cl && cl->json_errors) {
		/* npm prints a JSON body's "error" with its own message */
		json_object *o = json_object_new_object();
		body[strlen(body) - 1] = '\0';
		json_object_object_add(o, "error", json_object_new_string(body));
		free(body);
		body = xstrdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
		gw_reply(gw, cl, status, "application/json", body, strlen(body));
		return;
	}
	gw_reply(gw, cl, status, "text/plain; charset=utf-8", body, strlen(body));
}

/* Whether key was told in this gateway already; from now on it was. */
static bool told_before(struct gw *gw, const char *key)
{
	for (size_t i = 0; i < gw->ntold; i++)
		if (strcmp(gw->told[i], key) == 0)
			return true;
	gw->told = xrealloc(gw->told, (gw->ntold + 1) * sizeof(*gw->told));
	gw->told[gw->ntold++] = xstrdup(key);
	return false;
}

void gw_report(void *arg, const char *eco, const char *name, const char *version, const char *why)
{
	struct gw *gw = arg;
	char rule[300], clean[800];
	_cleanup_free_ char *ev = NULL, *line = NULL;

	rules_which(why, rule, sizeof(rule));
	ev = xasprintf("report\n%s\n%s\n%s\n%s", eco, name ? name : "", version ? version : "", rule);
	if (!told_before(gw, ev)) {
		json_object *o = package_obj(eco, name, version);
		json_object_object_add(o, "reason", json_object_new_string(why));
		if (rule[0])
			json_object_object_add(o, "rule", json_object_new_string(rule));
		json_object_object_add(o, "decision", json_object_new_string("report"));
		emit(gw, o, "package-refused");
	}
	line = xasprintf("report\n%s\n%s\n%s", eco, name ? name : "", rule);
	if (told_before(gw, line))
		return;
	log_sanitize(clean, sizeof(clean), why);
	fprintf(stderr, "sbxrun: gateway: report: %s %s%s%s would be refused: %s (served: [packages] mode = report)\n",
		eco, name ? "'" : "(its indexes)", name ? name : "", name ? "'" : "", clean);
}

void gw_tell_once(struct gw *gw, const char *key, const char *fmt, ...)
{
	char msg[768], clean[800];
	va_list ap;

	if (told_before(gw, key))
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_sanitize(clean, sizeof(clean), msg);
	fprintf(stderr, "sbxrun: gateway: %s\n", clean);
}

