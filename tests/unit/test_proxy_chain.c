/* test_proxy_chain.c - the upstream proxy's URL (https_proxy and the rest)
 * as libcurl's parser splits it: host, port (1080 by default), the
 * percent-decoded credentials, IPv6 literals; and what is refused, with
 * the variable named and the credentials never in the message. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "net/proxy_chain.h"
#include "unit.h"

static void good(const char *url, const char *host, const char *port, const char *userpass)
{
	struct proxy_chain_url u;
	struct sbx_err err = { 0 };

	CHECK(proxy_chain_parse("https_proxy", url, &u, &err) == 0);
	if (err.msg[0])
		fprintf(stderr, "%s: %s\n", url, err.msg);
	CHECK_STR(u.host, host);
	CHECK_STR(u.port, port);
	if (userpass)
		CHECK_STR(u.userpass, userpass);
	else
		CHECK(u.userpass == NULL);
	proxy_chain_url_free(&u);
}

static void bad(const char *url, const char *why)
{
	struct proxy_chain_url u;
	struct sbx_err err = { 0 };

	CHECK(proxy_chain_parse("HTTPS_PROXY", url, &u, &err) < 0);
	CHECK_CONTAINS(err.msg, "upstream proxy HTTPS_PROXY='");
	CHECK_CONTAINS(err.msg, why);
	CHECK(!strstr(err.msg, "s3cret"));  /* credentials stay out of messages */
	CHECK(u.userpass == NULL);
}

static void test_split(void)
{
	good("http://proxy.corp.example:3128", "proxy.corp.example", "3128", NULL);
	good("http://proxy.corp.example:3128/", "proxy.corp.example", "3128", NULL);
	good("HTTP://Proxy.Corp.Example:8080/path?q", "Proxy.Corp.Example", "8080", NULL);
	good("http://proxy.corp.example", "proxy.corp.example", "1080", NULL);
	good("proxy.corp.example:3128", "proxy.corp.example", "3128", NULL);  /* no scheme: http */
	good("10.1.2.3", "10.1.2.3", "1080", NULL);
	good("http://user:pw@10.1.2.3:3128/", "10.1.2.3", "3128", "user:pw");
	good("http://us%40er:p%3Aw%20d@proxy:3128", "proxy", "3128", "us@er:p:w d");
	good("http://user@proxy:3128", "proxy", "3128", "user:");
	good("http://user:@proxy:3128", "proxy", "3128", "user:");
	good("http://[2001:db8::1]:3128", "2001:db8::1", "3128", NULL);
	good("http://u:p@[::1]", "::1", "1080", "u:p");
	good("http://[fe80::1%25eth0]:3128", "fe80::1%eth0", "3128", NULL);
}

static void test_refused(void)
{
	bad("https://proxy.corp.example:3128", "only http:// proxies can be chained");
	bad("socks5://proxy.corp.example:1080", "only http:// proxies can be chained");
	bad("https://user:s3cret@proxy:3128", "'https://***@proxy:3128': only http://");
	bad("http://", "no host");
	bad("http://user:s3cret@:3128", "no host");
	bad("http://user:s3cret@/", "no host");
	bad("http://proxy:port", "the port is not a number from 1 to 65535");
	bad("http://proxy:65536", "the port is not a number from 1 to 65535");
	bad("http://proxy:0", "the port is not a number from 1 to 65535");
	bad("http://proxy:-1", "");
	bad("http://[2001:db8::1", "");
	bad("http://pro xy:3128", "");
	bad("http://pro\nxy:3128", "");
	bad("http://proxy:3128\r\nX-Evil: 1", "");
	bad("http://us\ter:s3cret@proxy:3128", "");
	/* decoded, a control character would end the header it is sent in */
	bad("http://user:s3cret%0d%0aX-Evil:%201@proxy:3128", "the user name or password is not valid");
	bad("http://us%00er:s3cret@proxy:3128", "the user name or password is not valid");
}

/* no_proxy, as curl reads it: which upstreams the gateway (and the
 * egress proxy) reach directly rather than through the upstream proxy. */
static void test_no_proxy(void)
{
	static const struct { const char *list, *host; bool direct; } t[] = {
		{ NULL, "registry.example.org", false }, { "", "registry.example.org", false },
		{ "*", "registry.example.org", true }, { "*", "192.0.2.1", true },
		{ "example.org", "example.org", true }, { "example.org", "registry.example.org", true },
		{ ".example.org", "registry.example.org", true }, { "*.example.org", "a.b.example.org", true },
		{ "Example.Org.", "registry.example.org", true }, { "example.org:443", "example.org", true },
		{ "example.org", "badexample.org", false }, { "registry.example.org", "example.org", false },
		{ "localhost, 127.0.0.1,.corp.example", "mirror.corp.example", true },
		{ "localhost,127.0.0.1", "registry.example.org", false },
		{ "127.0.0.1", "127.0.0.1", true }, { "127.0.0.1", "127.0.0.2", false },
		{ "10.0.0.0/8", "10.20.30.40", true }, { "10.0.0.0/8", "11.0.0.1", false },
		{ "192.0.2.0/25", "192.0.2.127", true }, { "192.0.2.0/25", "192.0.2.128", false },
		{ "[2001:db8::1]", "2001:db8::1", true }, { "2001:db8::/32", "2001:db8:1::5", true },
		{ "2001:db8::/32", "2001:db9::5", false }, { "10.0.0.0/33", "10.0.0.1", false },
		{ "example.org", "192.0.2.1", false }, { "10.0.0.1", "10.0.0.1.example", false },
		{ ",,", "example.org", false },
	};
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		bool r = proxy_chain_bypass(t[i].list, t[i].host);
		if (r != t[i].direct)
			fprintf(stderr, "no_proxy '%s', host '%s': %d\n", t[i].list ? t[i].list : "(unset)", t[i].host, r);
		CHECK(r == t[i].direct);
	}
}

/* The gateway's sockets through the upstream proxy go to its addresses
 * (resolved at start) alone; the URL is kept for libcurl as given. */
static void test_chain_from_env(void)
{
	struct proxy_chain ch;
	struct sbx_err err = { 0 };
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(3128) };

	setenv("https_proxy", "http://u:p%40ss@127.0.0.1:3128", 1);
	setenv("no_proxy", "localhost,.corp.example", 1);
	CHECK(proxy_chain_from_env(&ch, &err) == 0 && ch.on);
	CHECK_STR(ch.url, "http://u:p%40ss@127.0.0.1:3128");
	CHECK_STR(ch.host, "127.0.0.1");
	CHECK_STR(ch.port, "3128");
	CHECK_STR(ch.no_proxy, "localhost,.corp.example");
	a.sin_addr.s_addr = htonl(0x7f000001);
	CHECK(proxy_chain_is_proxy(&ch, (struct sockaddr *)&a));
	a.sin_port = htons(3129);
	CHECK(!proxy_chain_is_proxy(&ch, (struct sockaddr *)&a));
	a.sin_port = htons(3128);
	a.sin_addr.s_addr = htonl(0x7f000002);
	CHECK(!proxy_chain_is_proxy(&ch, (struct sockaddr *)&a));
	proxy_chain_free(&ch);
	unsetenv("no_proxy");
	setenv("NO_PROXY", "*", 1);
	CHECK(proxy_chain_from_env(&ch, &err) == 0 && ch.on);
	CHECK_STR(ch.no_proxy, "*");
	proxy_chain_free(&ch);
	unsetenv("NO_PROXY");
	unsetenv("https_proxy");
}

int main(void)
{
	test_split();
	test_refused();
	test_no_proxy();
	test_chain_from_env();
	return unit_done("test_proxy_chain");
}
