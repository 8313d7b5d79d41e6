/* test_httpreq.c - the proxy's request-head parser, table-driven. */
#include "net/httpreq.h"
#include "net/proxy_auth.h"
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

/* Proxy-Authorization is kept for the proxy and never goes upstream. */
static void test_auth_header(void)
{
	static const char get[] = "GET http://a.example.test/ HTTP/1.1\r\nProxy-Authorization:  Basic dTpw \r\n"
				  "Accept: */*\r\n\r\n";
	static const char twice[] = "CONNECT a.example.test:443 HTTP/1.1\r\nProxy-Authorization: Basic dTpw\r\n"
				    "proxy-authorization: Basic dTpx\r\n\r\n";
	struct httpreq req;
	int status;
	const char *why;
	char *big = xmalloc(HTTPREQ_MAX_AUTH + 200);

	CHECK(httpreq_parse(get, sizeof(get) - 1, &req, &status, &why) == 1);
	CHECK_STR(req.auth, "Basic dTpw");
	CHECK(!req.auth_bad);
	CHECK(!strstr(req.upstream, "dTpw"));
	httpreq_free(&req);
	CHECK(httpreq_parse(twice, sizeof(twice) - 1, &req, &status, &why) == 1);
	CHECK(req.auth_bad);
	httpreq_free(&req);
	int n = snprintf(big, HTTPREQ_MAX_AUTH + 200, "CONNECT a:1 HTTP/1.1\r\nProxy-Authorization: Basic %0*d\r\n\r\n",
			 HTTPREQ_MAX_AUTH, 0);
	CHECK(httpreq_parse(big, (size_t)n, &req, &status, &why) == 1);
	CHECK(req.auth_bad && !req.auth[0]);
	httpreq_free(&req);
	free(big);
}

static void test_auth_check(void)
{
	struct sbx_err err;
	char out[16];

	/* "u:pw" "u:pX" "other:pw" "u:p" "u:pw\0" */
	CHECK(proxy_auth_check("u:pw", "Basic dTpwdw=="));
	CHECK(proxy_auth_check("u:pw", "basic   dTpwdw"));  /* padding optional, scheme any case */
	CHECK(!proxy_auth_check("u:pw", "Basic dTpwWA=="));
	CHECK(!proxy_auth_check("u:pw", "Basic b3RoZXI6cHc="));
	CHECK(!proxy_auth_check("u:pw", "Basic dTpw"));
	CHECK(!proxy_auth_check("u:pw", "Basic dTpwdwA="));
	CHECK(!proxy_auth_check("u:pw", "Bearer dTpwdw=="));
	CHECK(!proxy_auth_check("u:pw", ""));
	CHECK(!proxy_auth_check("u:pw", "Basic dTpwdw=*"));
	/* a password alone: any user name, the password whole */
	CHECK(proxy_auth_check("pw", "Basic b3RoZXI6cHc="));
	CHECK(proxy_auth_check("pw", "Basic dTpwdw=="));
	CHECK(!proxy_auth_check("pw", "Basic cHc="));        /* "pw": no user part */
	CHECK(!proxy_auth_check("pw", "Basic dTpwWA=="));
	CHECK(proxy_auth_b64decode("YWJj", 4, out, sizeof(out)) == 3 && strcmp(out, "abc") == 0);
	CHECK(proxy_auth_b64decode("YQ", 2, out, sizeof(out)) == 1 && strcmp(out, "a") == 0);
	CHECK(proxy_auth_b64decode("Y", 1, out, sizeof(out)) == -1);
	CHECK(proxy_auth_b64decode("YWJjYWJjYWJjYWJjYWJjYWJj", 24, out, sizeof(out)) == -1);
	CHECK(proxy_auth_b64decode("YWJjYWJjYWJjYWJjYWI=", 20, out, sizeof(out)) == 14);
	CHECK(proxy_auth_b64decode("YWJj===", 7, out, sizeof(out)) == -1);
	CHECK(proxy_auth_b64decode("YW=j", 4, out, sizeof(out)) == -1);
	/* a header far longer than any secret: refused, never decoded */
	char *huge = malloc(9000);
	memset(huge, 'Q', 8999);
	huge[8999] = 0;
	memcpy(huge, "Basic ", 6);
	CHECK(!proxy_auth_check("u:pw", huge));
	free(huge);
	CHECK(proxy_auth_valid("u:pw", "x", &err) == 0);
	CHECK(proxy_auth_valid("", "x", &err) < 0);
	CHECK(proxy_auth_valid(":pw", "x", &err) < 0);
	CHECK(proxy_auth_valid("u:p\tw", "x", &err) < 0);
}

int main(void)
{
	test_table();
	test_rewrite();
	test_limits();
	test_auth_header();
	test_auth_check();
	return unit_done("httpreq");
}
