/* httpreq.h - the request head a package manager sends to the proxy:
 * CONNECT host:port (HTTPS) or an absolute-form plain HTTP request, which is
 * rewritten to origin-form with a Host header that matches its authority. */
#ifndef SBX_HTTPREQ_H
#define SBX_HTTPREQ_H

#include <stddef.h>
#include <stdint.h>

#define SBX_HTTP_HEAD_MAX 16384

struct sbx_http_req {
	int connect;             /* CONNECT: a tunnel; else one plain request */
	char host[256];          /* as in the request (IPv6 without brackets) */
	int port;
	char *head;              /* plain HTTP: the head to send upstream */
	size_t head_len;
	size_t consumed;         /* bytes of the input that made the head */
	uint64_t body;           /* plain HTTP: Content-Length to pass on */
};

/* 1: a head was parsed; 0: more bytes needed; -1: bad (*status is 400,
 * 431 or 501 and *why says why). */
int httpreq_parse(const char *buf, size_t len, struct sbx_http_req *req, int *status,
		  const char **why);
void httpreq_free(struct sbx_http_req *req);

#endif
