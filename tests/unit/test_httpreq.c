/* test_httpreq.c - the proxy's request-head parser, table-driven. */
#include "net/httpreq.h"
#include "unit.h"
#include "base/util.h"

struct tcase {
	const char *in;
	int ret, status, kind, port;
	const char *host;
};

static const struct tcase cases[] = {
	{ "CONNECT a.example.test:443 HTTP/1.1\r\nHost: a.example.test:443\r\n\r\n", 1, 0, HTTPREQ_CONNECT, 443, "a.example.test" },
	{ "CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", 1, 0, HTTPREQ_CONNECT, 443, "[2001:db8::1]" },
	{ "CONNECT a.example.test HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "CONNECT a.example.test:0 HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "CONNECT a.example.test:65536 HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "CONNECT a.example.test:44x HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "CONNECT user:pw@a.example.test:443 HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "CONNECT [::1 HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test/x?y HTTP/1.1\r\nHost: evil.test\r\nAccept: */*\r\n\r\n", 1, 0, HTTPREQ_ABSOLUTE, 80, "a.example.test" },
	{ "GET HTTP://A.example.test:8080 HTTP/1.0\r\n\r\n", 1, 0, HTTPREQ_ABSOLUTE, 8080, "A.example.test" },
	{ "GET http://u:p@a.example.test/ HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test@evil.test/ HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET /index.html HTTP/1.1\r\nHost: a.example.test\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET https://a.example.test/ HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http:///x HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test/ HTTP/2.0\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test/ HTTP/1.1\r\nBad header\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test/ HTTP/1.1\r\n: x\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test/ HTTP/1.1\r\nX: a\nb\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET  http://a.example.test/ HTTP/1.1\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", -1, 400, 0, 0, NULL },
	{ "GET http://a.example.test/ HTTP/1.1\r\n", 0, 0, 0, 0, NULL },
	{ "", 0, 0, 0, 0, NULL },
};

static void test_table(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		const struct tcase *c = &cases[i];
		struct httpreq req;
		int status = 0;
		const char *why = NULL;
		int r = httpreq_parse(c->in, strlen(c->in), &req, &status, &why);
		if (r != c->ret)
			fprintf(stderr, "case %zu: got %d (%s)\n", i, r, why ? why : "");
		CHECK(r == c->ret);
		if (r < 0)
			CHECK(status == c->status && why);
		if (r == 1 && c->ret == 1) {
			CHECK((int)req.kind == c->kind);
			CHECK(req.port == c->port);
			CHECK_STR(req.host, c->host);
			CHECK(req.head_len == strlen(c->in));
		}
		if (r == 1)
			httpreq_free(&req);
	}
}

static void test_rewrite(void)
{
	const char *in = "GET http://a.example.test:8080/dists/x?y=1 HTTP/1.1\r\nHost: evil.test\r\n"
			 "Connection: keep-alive\r\nProxy-Authorization: x\r\nUser-Agent: apt\r\n\r\nBODY";
	struct httpreq req;
	int status;
	const char *why;
	CHECK(httpreq_parse(in, strlen(in), &req, &status, &why) == 1);
	CHECK_STR(req.upstream, "GET /dists/x?y=1 HTTP/1.1\r\nHost: a.example.test:8080\r\n"
		  "User-Agent: apt\r\nConnection: close\r\n\r\n");
	CHECK(req.upstream_len == strlen(req.upstream));
	CHECK(req.head_len == strlen(in) - 4);
	httpreq_free(&req);

	const char *q = "HEAD http://a.example.test?x HTTP/1.1\r\n\r\n";
	CHECK(httpreq_parse(q, strlen(q), &req, &status, &why) == 1);
	CHECK_STR(req.upstream, "HEAD /?x HTTP/1.1\r\nHost: a.example.test\r\nConnection: close\r\n\r\n");
	httpreq_free(&req);
}

static void test_limits(void)
{
	char *big = xmalloc(HTTPREQ_MAX_HEAD + 100);
	struct httpreq req;
	int status = 0;
	const char *why;
	memset(big, 'a', HTTPREQ_MAX_HEAD + 100);
	memcpy(big, "GET http://a/ HTTP/1.1\r\nX: ", 27);
	CHECK(httpreq_parse(big, HTTPREQ_MAX_HEAD - 1, &req, &status, &why) == 0);
	CHECK(httpreq_parse(big, HTTPREQ_MAX_HEAD + 100, &req, &status, &why) == -1);
	CHECK(status == 431);
	const char nul[] = "GET http://a\0b/ HTTP/1.1\r\n\r\n";
	CHECK(httpreq_parse(nul, sizeof(nul) - 1, &req, &status, &why) == -1);
	free(big);
}

int main(void)
{
	test_table();
	test_rewrite();
	test_limits();
	return unit_done("httpreq");
}
