/* test_egress.c - the egress policy, table-driven: canonical names, the
 * numeric tricks, allow-list matching, address classes, request parsing. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "hostmatch.h"
#include "httpreq.h"
#include "unit.h"
#include "util.h"

static void test_canon(void)
{
	static const struct { const char *in, *out; } good[] = {
		{ "Example.TEST", "example.test" }, { "example.test.", "example.test" },
		{ "10.1.2.3", "10.1.2.3" }, { "::1", "::1" }, { "a-b.c_d.test", "a-b.c_d.test" },
	};
	static const char *const bad[] = {
		"2130706433", "0x7f000001", "0177.0.0.1", "127.1", "127.0.1", "0x7f.0.0.1",
		"1.2.3.04", "example..test", ".example.test", "exa mple.test", "ex@mple.test", "",
		"example.test..", "fe80::1::2", "a/b",
	};
	char out[256];
	struct sbx_err err;
	for (size_t i = 0; i < ARRAY_SIZE(good); i++) {
		CHECK(host_canon(good[i].in, out, sizeof(out), &err) == 0);
		CHECK_STR(out, good[i].out);
	}
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int r = host_canon(bad[i], out, sizeof(out), &err);
		CHECK(r < 0);
		if (r == 0)
			fprintf(stderr, "  accepted '%s'\n", bad[i]);
	}
}

static void test_match(void)
{
	char *v[] = { "allowed.example", "*.pkgs.test", "mirror.lab:8080", "10.9.8.7",
		      "host.sbxrun.internal:3141", "@apt", NULL };
	char *o[] = { "t", "t", "t", "t", "t", "t", NULL };
	char *apt[] = { "deb.mirror.test", NULL };
	struct sbx_strlist l = { v, o, 6 };
	struct sbx_sets sets = { apt, NULL, NULL };
	struct sbx_allow a;
	struct sbx_err err;
	int ex, in;

	CHECK(allow_compile(&l, &sets, &a, &err) == 0);
	static const struct { const char *host; int port, ok, exact, internal; } t[] = {
		{ "allowed.example", 443, 1, 1, 0 },     { "allowed.example", 80, 1, 1, 0 },
		{ "allowed.example", 8443, 0, 0, 0 },    { "allowed.example.evil.test", 443, 0, 0, 0 },
		{ "evilallowed.example", 443, 0, 0, 0 }, { "sub.allowed.example", 443, 0, 0, 0 },
		{ "a.pkgs.test", 443, 1, 0, 0 },         { "pkgs.test", 443, 0, 0, 0 },
		{ "x.evilpkgs.test", 443, 0, 0, 0 },     { "mirror.lab", 8080, 1, 1, 0 },
		{ "mirror.lab", 80, 0, 0, 0 },           { "10.9.8.7", 80, 1, 1, 0 },
		{ "host.sbxrun.internal", 3141, 1, 1, 1 }, { "host.sbxrun.internal", 80, 0, 0, 0 },
		{ "deb.mirror.test", 80, 1, 0, 0 },      { "other.test", 80, 0, 0, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = allow_match(&a, t[i].host, t[i].port, &ex, &in);
		CHECK(r == t[i].ok);
		if (r)
			CHECK(ex == t[i].exact && in == t[i].internal);
		if (r != t[i].ok)
			fprintf(stderr, "  %s:%d\n", t[i].host, t[i].port);
	}
	allow_free(&a);
}

static int addr_ok(const char *ip, int exact, int internal)
{
	struct sockaddr_storage ss = { 0 };
	const char *why;
	if (inet_pton(AF_INET, ip, &((struct sockaddr_in *)&ss)->sin_addr) == 1)
		ss.ss_family = AF_INET;
	else if (inet_pton(AF_INET6, ip, &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1)
		ss.ss_family = AF_INET6;
	return addr_allowed((struct sockaddr *)&ss, exact, internal, &why);
}

static void test_addresses(void)
{
	static const struct { const char *ip; int exact, internal, ok; } t[] = {
		{ "93.184.216.34", 0, 0, 1 }, { "127.0.0.1", 1, 0, 0 },   { "127.0.0.1", 1, 1, 1 },
		{ "93.184.216.34", 1, 1, 0 }, { "169.254.169.254", 1, 0, 0 }, { "0.0.0.0", 1, 0, 0 },
		{ "224.0.0.1", 1, 0, 0 },     { "100.64.0.1", 1, 0, 0 },  { "10.0.0.1", 0, 0, 0 },
		{ "10.0.0.1", 1, 0, 1 },      { "192.168.1.1", 0, 0, 0 }, { "172.16.0.1", 0, 0, 0 },
		{ "::1", 1, 0, 0 },           { "::ffff:127.0.0.1", 1, 0, 0 }, { "::ffff:10.0.0.1", 0, 0, 0 },
		{ "fe80::1", 1, 0, 0 },       { "fd00:ec2::254", 1, 0, 0 }, { "fd12::1", 0, 0, 0 },
		{ "fd12::1", 1, 0, 1 },       { "2606:4700::1111", 0, 0, 1 }, { "::", 1, 0, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = addr_ok(t[i].ip, t[i].exact, t[i].internal);
		CHECK(r == t[i].ok);
		if (r != t[i].ok)
			fprintf(stderr, "  %s exact=%d internal=%d\n", t[i].ip, t[i].exact, t[i].internal);
	}
}

static int parse(const char *s, struct sbx_http_req *r, int *status)
{
	const char *why;
	return httpreq_parse(s, strlen(s), r, status, &why);
}

static void test_requests(void)
{
	struct sbx_http_req r;
	int st;

	CHECK(parse("CONNECT registry.test:443 HTTP/1.1\r\nHost: registry.test:443\r\n\r\n", &r, &st) == 1);
	CHECK(r.connect && r.port == 443);
	CHECK_STR(r.host, "registry.test");
	CHECK(parse("CONNECT [2001:db8::1]:443 HTTP/1.1\r\n\r\n", &r, &st) == 1);
	CHECK_STR(r.host, "2001:db8::1");
	CHECK(parse("GET http://deb.test/debian/dists/x HTTP/1.1\r\nHost: evil.test\r\n"
		    "Connection: keep-alive\r\nUser-Agent: apt\r\n\r\n", &r, &st) == 1);
	CHECK_STR(r.host, "deb.test");
	CHECK(r.port == 80);
	CHECK_CONTAINS(r.head, "GET /debian/dists/x HTTP/1.1\r\nHost: deb.test\r\n");
	CHECK_CONTAINS(r.head, "User-Agent: apt\r\n");
	CHECK_CONTAINS(r.head, "Connection: close\r\n\r\n");
	CHECK(!strstr(r.head, "evil.test") && !strstr(r.head, "keep-alive"));
	httpreq_free(&r);
	CHECK(parse("GET http://mirror.test:8080 HTTP/1.0\r\n\r\n", &r, &st) == 1);
	CHECK(r.port == 8080);
	CHECK_CONTAINS(r.head, "GET / HTTP/1.1\r\nHost: mirror.test:8080\r\n");
	httpreq_free(&r);
	CHECK(parse("POST http://a.test/x HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", &r, &st) == 1);
	CHECK(r.body == 5);
	httpreq_free(&r);
	CHECK(parse("GET http://a.test/x HTTP/1.1\r\n", &r, &st) == 0);
	static const struct { const char *req; int status; } bad[] = {
		{ "GET / HTTP/1.1\r\nHost: a.test\r\n\r\n", 400 },
		{ "GET http://user:pw@a.test/ HTTP/1.1\r\n\r\n", 400 },
		{ "GET https://a.test/ HTTP/1.1\r\n\r\n", 400 },
		{ "CONNECT a.test HTTP/1.1\r\n\r\n", 400 },
		{ "CONNECT a.test:99999 HTTP/1.1\r\n\r\n", 400 },
		{ "CONNECT u@a.test:443 HTTP/1.1\r\n\r\n", 400 },
		{ "GET http://a.test/ HTTP/2.0\r\n\r\n", 400 },
		{ "get http://a.test/ HTTP/1.1\r\n\r\n", 400 },
		{ "GET http://a.test/ HTTP/1.1\r\nX: a\r\n b\r\n\r\n", 400 },
		{ "GET http://a.test/ HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501 },
		{ "GET http://a.test/ HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", 400 },
		{ "GET http://a.test/ HTTP/1.1\r\nBad Header: x\r\n\r\n", 400 },
		{ "\x01\x02\x03\r\n\r\n", 400 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		st = 0;
		int rr = parse(bad[i].req, &r, &st);
		CHECK(rr < 0 && st == bad[i].status);
		if (rr >= 0)
			httpreq_free(&r);
		if (!(rr < 0 && st == bad[i].status))
			fprintf(stderr, "  request %zu: r=%d status=%d\n", i, rr, st);
	}
	char *big = malloc(SBX_HTTP_HEAD_MAX + 10);
	memset(big, 'a', SBX_HTTP_HEAD_MAX + 9);
	big[SBX_HTTP_HEAD_MAX + 9] = '\0';
	CHECK(parse(big, &r, &st) < 0 && st == 431);
	free(big);
}

int main(void)
{
	test_canon();
	test_match();
	test_addresses();
	test_requests();
	return unit_done("test_egress");
}
