/* httpreq.c - see httpreq.h. Strict on purpose: what the proxy cannot
 * parse exactly, it refuses with 400, so that the host it checked is the
 * host the request goes to. */
#define _GNU_SOURCE
#include "httpreq.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"

#define BAD(code, text) (*status = (code), *why = (text), -1)

/* host[:port] or [v6][:port]; no userinfo. */
static int parse_authority(const char *a, size_t n, int need_port, int def_port,
			   struct sbx_http_req *r)
{
	const char *end = a + n, *colon;
	size_t hl;

	if (memchr(a, '@', n) || n == 0)
		return -1;
	if (*a == '[') {
		const char *rb = memchr(a, ']', n);
		if (!rb)
			return -1;
		hl = (size_t)(rb - a - 1);
		memcpy(r->host, a + 1, hl < sizeof(r->host) ? hl : 0);
		colon = rb + 1 < end ? rb + 1 : NULL;
		if (colon && *colon != ':')
			return -1;
	} else {
		colon = memchr(a, ':', n);
		hl = (size_t)((colon ? colon : end) - a);
		if (hl >= sizeof(r->host))
			return -1;
		memcpy(r->host, a, hl);
	}
	if (hl == 0 || hl >= sizeof(r->host))
		return -1;
	r->host[hl] = '\0';
	if (!colon) {
		r->port = def_port;
		return need_port ? -1 : 0;
	}
	const char *p = colon + 1;
	if (p == end || end - p > 5)
		return -1;
	int port = 0;
	for (; p < end; p++) {
		if (!isdigit((unsigned char)*p))
			return -1;
		port = port * 10 + (*p - '0');
	}
	if (port < 1 || port > 65535)
		return -1;
	r->port = port;
	return 0;
}

/* Headers we drop: the proxy decides the connection's fate, and the
 * credentials of a proxy are nobody else's business. */
static int dropped(const char *name, size_t n)
{
	static const char *const drop[] = { "host", "connection", "proxy-connection", "keep-alive",
					    "proxy-authorization", "upgrade", "te", "trailer" };
	for (size_t i = 0; i < ARRAY_SIZE(drop); i++)
		if (strlen(drop[i]) == n && !strncasecmp(name, drop[i], n))
			return 1;
	return 0;
}

static int copy_headers(const char *h, const char *end, struct sbx_http_req *r, FILE *out,
			int *status, const char **why)
{
	int have_len = 0;

	while (h < end) {
		const char *eol = memmem(h, (size_t)(end - h), "\r\n", 2);
		if (!eol)
			eol = end;
		if (*h == ' ' || *h == '\t')
			return BAD(400, "folded header lines are not accepted");
		const char *colon = memchr(h, ':', (size_t)(eol - h));
		if (!colon || colon == h)
			return BAD(400, "malformed header line");
		size_t n = (size_t)(colon - h);
		for (size_t i = 0; i < n; i++)
			if (!isalnum((unsigned char)h[i]) && !strchr("!#$%&'*+-.^_`|~", h[i]))
				return BAD(400, "bad header name");
		if (n == 17 && !strncasecmp(h, "transfer-encoding", n))
			return BAD(501, "request bodies in chunked encoding are not supported");
		if (n == 14 && !strncasecmp(h, "content-length", n)) {
			char *e;
			const char *v = colon + 1 + strspn(colon + 1, " \t");
			unsigned long long len = strtoull(v, &e, 10);
			if (!isdigit((unsigned char)*v) || (e != eol && strspn(e, " \t") != (size_t)(eol - e)) ||
			    (have_len && len != r->body))
				return BAD(400, "bad Content-Length");
			r->body = len;
			have_len = 1;
		}
		if (!dropped(h, n))
			fprintf(out, "%.*s\r\n", (int)(eol - h), h);
		h = eol + 2;
	}
	return 0;
}

static int plain_head(const char *method, const char *target, size_t tlen, const char *headers,
		      const char *end, struct sbx_http_req *r, int *status, const char **why)
{
	size_t alen = strcspn(target + 7, "/?# ");
	if (alen > tlen - 7)
		alen = tlen - 7;
	if (parse_authority(target + 7, alen, 0, 80, r) < 0)
		return BAD(400, "bad authority in the request target");
	const char *path = target + 7 + alen;
	size_t plen = tlen - 7 - alen;
	char *buf = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&buf, &size);
	int v6 = strchr(r->host, ':') != NULL;
	fprintf(out, "%s %s%.*s HTTP/1.1\r\nHost: %s%s%s", method, plen && *path == '/' ? "" : "/",
		(int)plen, path, v6 ? "[" : "", r->host, v6 ? "]" : "");
	if (r->port != 80)
		fprintf(out, ":%d", r->port);
	fprintf(out, "\r\n");
	int rc = copy_headers(headers, end, r, out, status, why);
	fprintf(out, "Connection: close\r\n\r\n");
	fclose(out);
	if (rc < 0) {
		free(buf);
		return -1;
	}
	r->head = buf;
	r->head_len = size;
	return 0;
}

int httpreq_parse(const char *buf, size_t len, struct sbx_http_req *r, int *status, const char **why)
{
	const char *end = memmem(buf, len, "\r\n\r\n", 4);
	char method[16];

	memset(r, 0, sizeof(*r));
	if (!end)
		return len >= SBX_HTTP_HEAD_MAX ? BAD(431, "request head too large") : 0;
	r->consumed = (size_t)(end - buf) + 4;
	const char *eol = memmem(buf, (size_t)(end - buf) + 2, "\r\n", 2);
	const char *sp1 = memchr(buf, ' ', (size_t)(eol - buf));
	const char *sp2 = sp1 ? memchr(sp1 + 1, ' ', (size_t)(eol - sp1 - 1)) : NULL;
	if (!sp1 || !sp2 || sp1 == buf || (size_t)(sp1 - buf) >= sizeof(method) ||
	    (eol - sp2 - 1 != 8) || (strncmp(sp2 + 1, "HTTP/1.1", 8) && strncmp(sp2 + 1, "HTTP/1.0", 8)))
		return BAD(400, "not an HTTP/1.x request line");
	memcpy(method, buf, (size_t)(sp1 - buf));
	method[sp1 - buf] = '\0';
	for (char *m = method; *m; m++)
		if (!isupper((unsigned char)*m))
			return BAD(400, "bad method");
	const char *target = sp1 + 1;
	size_t tlen = (size_t)(sp2 - target);
	if (!strcmp(method, "CONNECT")) {
		r->connect = 1;
		return parse_authority(target, tlen, 1, 0, r) < 0
			? BAD(400, "CONNECT needs host:port") : 1;
	}
	if (tlen > 0 && target[0] == '/')
		return BAD(400, "origin-form request: this is a proxy, send an absolute URL");
	if (tlen < 8 || strncasecmp(target, "http://", 7))
		return BAD(400, "only http:// URLs (and CONNECT for https)");
	return plain_head(method, target, tlen, eol + 2, end + 2, r, status, why) < 0 ? -1 : 1;
}

void httpreq_free(struct sbx_http_req *r)
{
	free(r->head);
	r->head = NULL;
}
