/* test_hostmatch.c - canonicalisation, allow-list matching and address
 * vetting for the egress proxy, table-driven with the tricky forms. */
#include <arpa/inet.h>
#include <netinet/in.h>

#include "base/hostaddr.h"
#include "base/hostentry.h"
#include "net/hostmatch.h"
#include "unit.h"
#include "base/util.h"

static void test_canon(void)
{
	static const struct { const char *in, *out; } t[] = {
		{ "Example.TEST", "example.test" }, { "example.test.", "example.test" },
		{ "example.test..", NULL }, { ".", NULL }, { "", NULL }, { "a..b", NULL },
		{ "10.0.0.1", "10.0.0.1" }, { "127.0.0.1.", "127.0.0.1" },
		{ "2130706433", NULL }, { "0x7f000001", NULL }, { "0x7f.1", NULL },
		{ "0177.0.0.1", NULL }, { "127.1", NULL }, { "127.0.1", NULL },
		{ "010.0.0.1", NULL }, { "256.0.0.1", NULL }, { "1.2.3.4.5", NULL },
		{ "foo.0x10", NULL }, { "foo.123", NULL }, { "123.foo", "123.foo" },
		{ "[::1]", "::1" }, { "[0:0:0:0:0:0:0:1]", "::1" }, { "[::ffff:127.0.0.1]", "127.0.0.1" },
		{ "[fe80::1%eth0]", NULL }, { "[::1", NULL }, { "::1", NULL },
		{ "ex ample.test", NULL }, { "ex/ample", NULL }, { "-a.test", NULL }, { "a-.test", NULL },
		{ "HOST.SBXRUN.INTERNAL.", "host.sbxrun.internal" },
	};
	char out[300];
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = hostmatch_canon(t[i].in, out, sizeof(out));
		if (t[i].out) {
			CHECK(r == 0);
			if (r == 0)
				CHECK_STR(out, t[i].out);
		} else if (r == 0) {
			fprintf(stderr, "accepted '%s' as '%s'\n", t[i].in, out);
			CHECK(r < 0);
		} else {
			CHECK(r < 0);
		}
	}
}

/* The one host comparison (base/hostentry.c): read once, then covers. */
static void test_hostentry(void)
{
	static const struct { const char *in, *out; } canon[] = {
		{ "Example.ORG", "example.org" }, { "example.org.", "example.org" },
		{ "EXAMPLE.org.:443", "example.org:443" }, { "*.Example.Org.", "*.example.org" },
		{ "*.example.org:8080", "*.example.org:8080" }, { "[2001:DB8:0:0::1]", "[2001:db8::1]" },
		{ "[2001:db8::1]:443", "[2001:db8::1]:443" }, { "[::FFFF:192.0.2.1]:80", "192.0.2.1:80" },
		{ "192.0.2.1", "192.0.2.1" }, { "host_name.example", "host_name.example" },
		{ "2130706433", NULL }, { "0x7f.1", NULL }, { "127.1", NULL }, { "0177.0.0.1", NULL },
		{ "*.10.0.0.1", NULL }, { "*.[::1]", NULL }, { "example.org:0", NULL },
		{ "example.org:65536", NULL }, { "example.org:", NULL }, { "example.org:x", NULL },
		{ "[2001:db8::1", NULL }, { "[2001:db8::1]x", NULL }, { "2001:db8::1", NULL },
		{ "", NULL }, { "*.", NULL }, { ":443", NULL }, { "a b", NULL }, { "*.*.example", NULL },
		{ "example.org..", NULL }, { "[fe80::1%eth0]", NULL },
	};
	struct hostentry e;
	struct sbx_err err;
	char out[300];

	for (size_t i = 0; i < ARRAY_SIZE(canon); i++) {
		int r = hostentry_parse(canon[i].in, &e, &err);
		CHECK(canon[i].out ? r == 0 : r < 0);
		if (r == 0 && canon[i].out) {
			hostentry_format(&e, out, sizeof(out));
			CHECK_STR(out, canon[i].out);
			struct hostentry again; /* the text reads back to itself */
			CHECK(hostentry_parse(out, &again, &err) == 0 && memcmp(&again, &e, sizeof(e)) == 0);
		} else if (r == 0) {
			hostentry_format(&e, out, sizeof(out));
			fprintf(stderr, "accepted '%s' as '%s'\n", canon[i].in, out);
		}
	}
	CHECK(hostentry_parse("2130706433", &e, &err) < 0);
	CHECK_CONTAINS(err.msg, "invalid host '2130706433'");
	CHECK(hostentry_parse("a.example:99999", &e, &err) < 0);
	CHECK_CONTAINS(err.msg, "invalid port in 'a.example:99999'");

	/* wide covers narrow: every host and port narrow lets through */
	static const struct { const char *wide, *narrow; int covers; } cov[] = {
		{ "example.org", "EXAMPLE.ORG.", 1 }, { "example.org", "example.org:443", 1 },
		{ "example.org", "example.org:80", 1 }, { "example.org", "example.org:8443", 0 },
		{ "example.org:443", "example.org", 0 }, { "example.org:443", "example.org.:443", 1 },
		{ "example.org", "a.example.org", 0 }, { "example.org", "*.example.org", 0 },
		{ "*.example.org", "example.org", 0 }, { "*.example.org", "a.example.org", 1 },
		{ "*.example.org", "A.B.EXAMPLE.ORG.:443", 1 }, { "*.example.org", "*.example.org", 1 },
		{ "*.example.org", "*.b.example.org:80", 1 }, { "*.b.example.org", "*.example.org", 0 },
		{ "*.example.org", "aexample.org", 0 }, { "*.example.org", "a.example.org:22", 0 },
		{ "*.example.org:22", "a.example.org:22", 1 }, { "*.example.org:22", "a.example.org", 0 },
		{ "[2001:db8::1]", "[2001:DB8:0::1]:443", 1 }, { "[2001:db8::1]", "[2001:db8::2]", 0 },
		{ "192.0.2.1", "[::ffff:192.0.2.1]:80", 1 }, { "*.2.1", "192.0.2.1", -1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cov); i++) {
		struct hostentry w, n;
		if (cov[i].covers < 0) { /* not an entry at all */
			CHECK(hostentry_parse(cov[i].wide, &w, &err) < 0);
			continue;
		}
		CHECK(hostentry_parse(cov[i].wide, &w, &err) == 0 && hostentry_parse(cov[i].narrow, &n, &err) == 0);
		if (hostentry_covers(&w, &n) != !!cov[i].covers)
			fprintf(stderr, "'%s' covers '%s': expected %d\n", cov[i].wide, cov[i].narrow, cov[i].covers);
		CHECK(hostentry_covers(&w, &n) == !!cov[i].covers);
	}
	/* a host on a port, as the proxy asks */
	CHECK(hostentry_parse("Mirror.Example.", &e, &err) == 0);
	CHECK(hostentry_allows(&e, "mirror.example", 443) && hostentry_allows(&e, "mirror.example", 80));
	CHECK(!hostentry_allows(&e, "mirror.example", 8080) && !hostentry_allows(&e, "x.mirror.example", 443));
	e.port = HOSTENTRY_ANY_PORT; /* a host kept to the gateway: every port */
	CHECK(hostentry_allows(&e, "mirror.example", 8080) && hostentry_allows(&e, "mirror.example", 1));
	CHECK(!hostentry_allows(&e, "mirror.example.org", 443));
}

static void test_match(void)
{
	char *pats[] = { "allowed.example", "*.cdn.test", "mirror.lab.test:8080", "Exact.Test.",
			 "host.sbxrun.internal:9000", "10.1.2.3", "[2001:db8::1]:443", "@apt", "@npm", "@pypi" };
	struct sbx_strlist allow = { pats, NULL, ARRAY_SIZE(pats) };
	const char *apt[] = { "deb.example.test", "sec.example.test:8081", "http://url.example.test/debian", NULL };
	struct hostmatch_sets sets = { apt, "https://npm.example.test/", "http://u@pypi.example.test:3141/simple" };
	struct hostmatch_list l;
	struct sbx_err err;
	static const struct { const char *host; int port; enum hostmatch_result r; int priv, internal; } t[] = {
		{ "allowed.example", 443, HOSTMATCH_OK, 1, 0 },
		{ "allowed.example", 80, HOSTMATCH_OK, 1, 0 },
		{ "allowed.example", 8443, HOSTMATCH_BAD_PORT, 0, 0 },
		{ "allowed.example.evil.test", 443, HOSTMATCH_NOT_LISTED, 0, 0 },
		{ "evilallowed.example", 443, HOSTMATCH_NOT_LISTED, 0, 0 },
		{ "x.allowed.example", 443, HOSTMATCH_NOT_LISTED, 0, 0 },
		{ "cdn.test", 443, HOSTMATCH_NOT_LISTED, 0, 0 },
		{ "a.cdn.test", 443, HOSTMATCH_OK, 0, 0 },
		{ "b.a.cdn.test", 80, HOSTMATCH_OK, 0, 0 },
		{ "xcdn.test", 443, HOSTMATCH_NOT_LISTED, 0, 0 },
		{ "mirror.lab.test", 8080, HOSTMATCH_OK, 1, 0 },
		{ "mirror.lab.test", 80, HOSTMATCH_BAD_PORT, 0, 0 },
		{ "exact.test", 443, HOSTMATCH_OK, 1, 0 },
		{ "host.sbxrun.internal", 9000, HOSTMATCH_OK, 1, 1 },
		{ "host.sbxrun.internal", 80, HOSTMATCH_BAD_PORT, 0, 0 },
		{ "10.1.2.3", 443, HOSTMATCH_OK, 1, 0 },
		{ "10.1.2.4", 443, HOSTMATCH_NOT_LISTED, 0, 0 },
		{ "2001:db8::1", 443, HOSTMATCH_OK, 1, 0 },
		{ "2001:db8::1", 80, HOSTMATCH_BAD_PORT, 0, 0 },
		{ "deb.example.test", 80, HOSTMATCH_OK, 0, 0 },
		{ "sec.example.test", 8081, HOSTMATCH_OK, 0, 0 },
		{ "url.example.test", 80, HOSTMATCH_OK, 0, 0 },
		{ "npm.example.test", 443, HOSTMATCH_OK, 0, 0 },
		{ "pypi.example.test", 3141, HOSTMATCH_OK, 0, 0 },
		{ "pypi.example.test", 443, HOSTMATCH_BAD_PORT, 0, 0 },
	};

	CHECK(hostmatch_compile(&allow, &sets, &l, &err) == 0);
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		struct hostmatch_grant g;
		enum hostmatch_result r = hostmatch_check(&l, t[i].host, t[i].port, &g);
		if (r != t[i].r)
			fprintf(stderr, "%s:%d -> %d\n", t[i].host, t[i].port, r);
		CHECK(r == t[i].r);
		if (r == HOSTMATCH_OK) {
			CHECK(g.private_ok == !!t[i].priv);
			CHECK(g.internal == !!t[i].internal);
		}
	}
	hostmatch_free(&l);

	char *wild_internal[] = { "*.sbxrun.internal:9000", "host.sbxrun.internal" };
	struct sbx_strlist a2 = { wild_internal, NULL, 2 };
	struct hostmatch_grant g;
	CHECK(hostmatch_compile(&a2, NULL, &l, &err) == 0);
	CHECK(hostmatch_check(&l, "host.sbxrun.internal", 9000, &g) != HOSTMATCH_OK);
	CHECK(hostmatch_check(&l, "host.sbxrun.internal", 443, &g) != HOSTMATCH_OK);
	hostmatch_free(&l);
	/* the rule both the allow list and [packages] upstreams ask */
	CHECK(hostaddr_internal_refusal("host.sbxrun.internal", false, 9000) == NULL);
	CHECK_CONTAINS(hostaddr_internal_refusal("host.sbxrun.internal", false, 0), "needs its port");
	CHECK_CONTAINS(hostaddr_internal_refusal("sbxrun.internal", true, 9000), "never by *.DOMAIN");
	CHECK_CONTAINS(hostaddr_internal_refusal("internal", true, 0), "never by *.DOMAIN");
	CHECK(hostaddr_internal_refusal("host.sbxrun.internal", true, 0) == NULL); /* its subdomains */
	CHECK(hostaddr_internal_refusal("npm.example.org", false, 0) == NULL);

	/* an entry that allows a port is not undone by a later one for the
	 * same host with another port, in either order */
	char *two[] = { "mirror.example.test", "mirror.example.test:8080" };
	struct sbx_strlist a4 = { two, NULL, 2 };
	CHECK(hostmatch_compile(&a4, NULL, &l, &err) == 0);
	CHECK(hostmatch_check(&l, "mirror.example.test", 443, &g) == HOSTMATCH_OK);
	CHECK(hostmatch_check(&l, "mirror.example.test", 8080, &g) == HOSTMATCH_OK);
	CHECK(hostmatch_check(&l, "mirror.example.test", 8443, &g) == HOSTMATCH_BAD_PORT);
	hostmatch_free(&l);

	char *badp[] = { "*.10.0.0.1" };
	struct sbx_strlist a3 = { badp, NULL, 1 };
	CHECK(hostmatch_compile(&a3, NULL, &l, &err) < 0);
}

static const char *refusal(const char *addr, int priv, int internal)
{
	struct sockaddr_storage ss = { 0 };
	struct hostmatch_grant g = { priv, internal };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	if (inet_pton(AF_INET, addr, &s4->sin_addr) == 1)
		s4->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &s6->sin6_addr) == 1)
		s6->sin6_family = AF_INET6;
	return hostmatch_addr_refusal((struct sockaddr *)&ss, &g);
}

static void test_addr(void)
{
	static const struct { const char *a; int priv, internal, ok; } t[] = {
		{ "93.184.216.34", 0, 0, 1 }, { "127.0.0.1", 0, 0, 0 }, { "127.0.0.1", 1, 0, 0 },
		{ "127.0.0.1", 1, 1, 1 }, { "93.184.216.34", 1, 1, 0 }, { "::1", 1, 1, 1 },
		{ "169.254.169.254", 1, 0, 0 }, { "169.254.1.1", 1, 0, 0 }, { "0.0.0.0", 1, 0, 0 },
		{ "100.64.0.1", 1, 0, 0 }, { "100.127.255.255", 1, 0, 0 }, { "100.128.0.1", 0, 0, 1 },
		{ "224.0.0.1", 1, 0, 0 }, { "255.255.255.255", 1, 0, 0 },
		{ "10.0.0.1", 0, 0, 0 }, { "10.0.0.1", 1, 0, 1 }, { "172.16.0.1", 0, 0, 0 },
		{ "172.32.0.1", 0, 0, 1 }, { "192.168.1.1", 0, 0, 0 }, { "192.168.1.1", 1, 0, 1 },
		{ "::", 1, 0, 0 }, { "::1", 1, 0, 0 }, { "fe80::1", 1, 0, 0 }, { "ff02::1", 1, 0, 0 },
		{ "fd00:ec2::254", 1, 0, 0 }, { "fd00::1", 0, 0, 0 }, { "fd00::1", 1, 0, 1 },
		{ "::ffff:127.0.0.1", 1, 0, 0 }, { "::ffff:169.254.169.254", 1, 0, 0 },
		{ "::ffff:10.0.0.1", 0, 0, 0 }, { "::ffff:93.184.216.34", 0, 0, 1 },
		{ "64:ff9b::7f00:1", 1, 0, 0 }, { "2002:7f00:1::", 1, 0, 0 }, { "2001:db8::1", 0, 0, 1 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const char *why = refusal(t[i].a, t[i].priv, t[i].internal);
		if ((why == NULL) != !!t[i].ok)
			fprintf(stderr, "%s priv=%d internal=%d: %s\n", t[i].a, t[i].priv, t[i].internal,
				why ? why : "allowed");
		CHECK((why == NULL) == !!t[i].ok);
	}
}

/* An image's package sources never open loopback, private or reserved
 * addresses (hostaddr_image_refusal), and the host's loopback is never
 * granted through an image set even where one slipped into old metadata. */
static void test_image_sources(void)
{
	static const struct { const char *src; int ok; } t[] = {
		{ "http://deb.example.org/debian", 1 }, { "deb.example.org", 1 },
		{ "https://registry.example.com/", 1 }, { "https://[2001:db8::1]:8443/simple", 1 },
		{ "http://host.sbxrun.internal:4873/", 0 }, { "HOST.SBXRUN.INTERNAL", 0 },
		{ "http://packages.sbxrun.internal/npm/", 0 }, { "sbxrun.internal", 0 },
		{ "http://localhost:8080/", 0 }, { "http://a.localhost/", 0 },
		{ "http://127.0.0.1:5000/simple", 0 }, { "http://user:pw@127.0.0.1/", 0 },
		{ "http://10.1.2.3/debian", 0 }, { "192.168.0.10", 0 }, { "172.20.0.1:3142", 0 },
		{ "http://169.254.169.254/", 0 }, { "http://[::1]:4873/", 0 }, { "http://[fd00::1]/", 0 },
		{ "http://[fe80::1]/", 0 }, { "http://0.0.0.0/", 0 }, { "http://2130706433/", 0 },
		{ "http://0x7f.1/", 0 }, { "http://100.64.0.1/", 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		const char *why = hostaddr_image_refusal(t[i].src);
		if ((why == NULL) != !!t[i].ok)
			fprintf(stderr, "%s: %s\n", t[i].src, why ? why : "allowed");
		CHECK((why == NULL) == !!t[i].ok);
	}

	/* @npm naming the host's loopback: left out of the compiled list */
	struct hostmatch_sets sets = { NULL, "http://host.sbxrun.internal:4873/",
				       "http://10.0.0.5/simple https://index.example.org/simple" };
	char *allow[] = { "@npm", "@pypi" };
	struct sbx_strlist a = { allow, NULL, 2 };
	struct hostmatch_list l;
	struct hostmatch_grant g;
	struct sbx_err err = { 0 };
	CHECK(hostmatch_compile(&a, &sets, &l, &err) == 0);
	CHECK(hostmatch_check(&l, "host.sbxrun.internal", 4873, &g) == HOSTMATCH_NOT_LISTED);
	CHECK(hostmatch_check(&l, "10.0.0.5", 80, &g) == HOSTMATCH_NOT_LISTED);
	CHECK(hostmatch_check(&l, "index.example.org", 443, &g) == HOSTMATCH_OK && !g.private_ok);
	hostmatch_free(&l);
}

int main(void)
{
	test_hostentry();
	test_canon();
	test_image_sources();
	test_match();
	test_addr();
	return unit_done("hostmatch");
}
