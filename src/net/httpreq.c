/* httpreq.c - parses the request head the sandbox sends to the proxy:
 * CONNECT host:port, or absolute-form plain HTTP, which is rewritten to
 * origin-form with a matching Host header and "Connection: close" so each
 * connection carries exactly one checked request. */
#define _GNU_SOURCE
#include <ctype.h>
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "base/util.h"
#include "net/httpreq.h"

static int bad(int *status, const char **why, int code, const char *msg)
{
	*status = code;
	*why = msg;
	return -1;
}

static bool parse_port(const char *s, size_t n, int *port)
{
	int v = 0;
	if (n == 0 || n > 5)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v < 1 || v > 65535)
		return false;
	*port = v;
	return true;
}

/* "host[:port]" or "[v6][:port]"; defport < 0 makes the port mandatory. */
static const char *parse_authority(const char *a, size_t n, int defport, struct httpreq *req)
{
	size_t hl;
	const char *colon;

	if (n == 0)
		return "empty host";
	if (memchr(a, '@', n))
		return "userinfo in the authority";
	if (a[0] == '[') {
		const char *end = memchr(a, ']', n);
		if (!end)
			return "unterminated IPv6 literal";
		hl = (size_t)(end - a) + 1;
		colon = hl < n ? a + hl : NULL;
		if (colon && *colon != ':')
			return "junk after IPv6 literal";
	} else {
		colon = memchr(a, ':', n);
		hl = colon ? (size_t)(colon - a) : n;
	}
	if (hl == 0 || hl >= sizeof(req->host))
		return "bad host length";
	for (size_t i = 0; i < hl; i++)
		if (!isgraph((unsigned char)a[i]) || strchr("/?#%\\\"<>", a[i]))
			return "bad character in host";
	memcpy(req->host, a, hl);
	req->host[hl] = 0;
	if (colon) {
		if (!parse_port(colon + 1, n - hl - 1, &req->port))
			return "bad port";
	} else if (defport < 0) {
		return "CONNECT needs host:port";
	} else {
		req->port = defport;
	}
	return NULL;
}

/* Headers the proxy owns: the hop-by-hop ones and Host, set from the URI. */
static bool drop_header(const char *line, size_t n)
{
	static const char *const names[] = { "host", "connection", "proxy-connection",
		"proxy-authorization", "keep-alive", "upgrade", "te" };
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		size_t k = strlen(names[i]);
		if (n > k && line[k] == ':' && strncasecmp(line, names[i], k) == 0)
			return true;
	}
	return false;
}

static bool valid_header(const char *line, size_t n)
{
	const char *colon = memchr(line, ':', n);
	if (!colon || colon == line)
		return false;
	for (const char *p = line; p < colon; p++)
		if (!isgraph((unsigned char)*p))
			return false;
	for (size_t i = 0; i < n; i++)
		if (line[i] == '\r' || line[i] == '\n' || line[i] == 0)
			return false;
	return true;
}

static void append(struct httpreq *req, size_t *cap, const char *s, size_t n)
{
	if (req->upstream_len + n + 1 > *cap) {
		*cap = (req->upstream_len + n + 1) * 2;
		req->upstream = xrealloc(req->upstream, *cap);
	}
	memcpy(req->upstream + req->upstream_len, s, n);
	req->upstream_len += n;
	req->upstream[req->upstream_len] = 0;
}

/* Keeps Proxy-Authorization's value (the proxy's own credentials, which
 * drop_header keeps from going upstream). */
static void note_auth(const char *line, size_t n, struct httpreq *req)
{
	static const char name[] = "proxy-authorization:";
	size_t k = sizeof(name) - 1;

	if (n < k || strncasecmp(line, name, k) != 0)
		return;
	while (k < n && (line[k] == ' ' || line[k] == '\t'))
		k++;
	while (n > k && (line[n - 1] == ' ' || line[n - 1] == '\t'))
		n--;
	if (req->auth[0] || n - k >= sizeof(req->auth)) {
		req->auth_bad = 1;
		return;
	}
	memcpy(req->auth, line + k, n - k);
	req->auth[n - k] = 0;
}

/* Walks the header lines after the request line; rewrites when asked. */
static const char *headers(const char *p, const char *end, struct httpreq *req, size_t *cap, bool keep)
{
	while (p < end) {
		const char *eol = memmem(p, (size_t)(end - p), "\r\n", 2);
		size_t n = (size_t)(eol - p);
		if (!valid_header(p, n))
			return "malformed header line";
		note_auth(p, n, req);
		if (keep && !drop_header(p, n)) {
			append(req, cap, p, n);
			append(req, cap, "\r\n", 2);
		}
		p = eol + 2;
	}
	return NULL;
}

static const char *absolute(const char *method, size_t ml, const char *target, size_t tl,
			    struct httpreq *req, size_t *cap)
{
	const char *auth = target + 7, *path;
	size_t al, pl;
	const char *why;

	if (tl < 7 || strncasecmp(target, "http://", 7) != 0)
		return tl > 0 && target[0] == '/' ? "origin-form request (not a proxy request)" :
			"unsupported request target";
	al = strcspn(auth, "/? ");
	if ((size_t)(auth - target) + al > tl)
		al = tl - 7;
	if ((why = parse_authority(auth, al, 80, req)))
		return why;
	path = auth + al;
	pl = tl - 7 - al;
	req->kind = HTTPREQ_ABSOLUTE;
	append(req, cap, method, ml);
	append(req, cap, " ", 1);
	if (pl == 0 || path[0] != '/')
		append(req, cap, "/", 1);
	append(req, cap, path, pl);
	append(req, cap, " HTTP/1.1\r\nHost: ", 17);
	append(req, cap, auth, al);
	append(req, cap, "\r\n", 2);
	return NULL;
}

static bool token(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isalpha((unsigned char)s[i]) && s[i] != '-' && s[i] != '_')
			return false;
	return n > 0 && n < 24;
}

static const char *request_line(const char *buf, const char *eol, struct httpreq *req, size_t *cap)
{
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf)), *sp2;

	if (!sp1 || !token(buf, (size_t)(sp1 - buf)))
		return "malformed request line";
	sp2 = memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1));
	if (!sp2 || (size_t)(eol - sp2 - 1) != 8 || strncmp(sp2 + 1, "HTTP/1.", 7) != 0 ||
	    (sp2[8] != '0' && sp2[8] != '1'))
		return "malformed request line";
	for (const char *p = sp1 + 1; p < sp2; p++)
		if (!isgraph((unsigned char)*p))
			return "bad character in request target";
	if ((size_t)(sp1 - buf) == 7 && strncmp(buf, "CONNECT", 7) == 0) {
		req->kind = HTTPREQ_CONNECT;
		return parse_authority(sp1 + 1, (size_t)(sp2 - sp1 - 1), -1, req);
	}
	return absolute(buf, (size_t)(sp1 - buf), sp1 + 1, (size_t)(sp2 - sp1 - 1), req, cap);
}

int httpreq_parse(const char *buf, size_t len, struct httpreq *req, int *status, const char **why)
{
	size_t scan = len < HTTPREQ_MAX_HEAD ? len : HTTPREQ_MAX_HEAD, cap = 0;
	const char *end = memmem(buf, scan, "\r\n\r\n", 4), *eol;

	memset(req, 0, sizeof(*req));
	/* Garbage (a TLS hello sent straight at the proxy) fails at once. */
	for (size_t i = 0; i < len && buf[i] != ' '; i++)
		if (i >= 24 || (!isalpha((unsigned char)buf[i]) && buf[i] != '-' && buf[i] != '_'))
			return bad(status, why, 400, "malformed request line");
	if (memchr(buf, 0, scan))
		return bad(status, why, 400, "NUL byte in request head");
	if (!end)
		return len >= HTTPREQ_MAX_HEAD ? bad(status, why, 431, "request head too large") : 0;
	eol = memmem(buf, (size_t)(end - buf) + 2, "\r\n", 2);
	*why = request_line(buf, eol, req, &cap);
	if (!*why)
		*why = headers(eol + 2, end + 2, req, &cap, req->kind == HTTPREQ_ABSOLUTE);
	if (*why) {
		httpreq_free(req);
		*status = 400;
		return -1;
	}
	if (req->kind == HTTPREQ_ABSOLUTE)
		append(req, &cap, "Connection: close\r\n\r\n", 21);
	req->head_len = (size_t)(end - buf) + 4;
	return 1;
}

void httpreq_free(struct httpreq *req)
{
	free(req->upstream);
	req->upstream = NULL;
	req->upstream_len = 0;
}
