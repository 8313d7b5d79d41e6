/* httpreq.h - the request head a sandbox sends to the egress proxy. */
#ifndef SBX_HTTPREQ_H
#define SBX_HTTPREQ_H

#include <stddef.h>

#define HTTPREQ_MAX_HEAD 16384
/* Longest Proxy-Authorization value kept; a longer one is kept as bad. */
#define HTTPREQ_MAX_AUTH 512

enum httpreq_kind { HTTPREQ_CONNECT, HTTPREQ_ABSOLUTE };

struct httpreq {
	enum httpreq_kind kind;
	char host[272];   /* as written, "[v6]" kept; canonicalise with hostmatch */
	int port;
	char *upstream;   /* ABSOLUTE: the rewritten head to send upstream */
	size_t upstream_len;
	size_t head_len;  /* bytes of the input the head used */
	/* Proxy-Authorization's value ("" when absent), never sent upstream;
	 * auth_bad: given twice or too long, so it cannot be right. */
	char auth[HTTPREQ_MAX_AUTH];
	int auth_bad;
};

/* Parses buf[0..len). Returns 1 with *req filled (free with httpreq_free),
 * 0 when the head is not complete yet, or -1 with *status (400, 431) and
 * *why set when the request is refused as malformed. */
int httpreq_parse(const char *buf, size_t len, struct httpreq *req, int *status, const char **why);
void httpreq_free(struct httpreq *req);

#endif
