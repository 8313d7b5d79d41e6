/* test_proxy_chain.c - the upstream proxy's URL (https_proxy and the rest)
 * as libcurl's parser splits it: host, port (1080 by default), the
 * percent-decoded credentials, IPv6 literals; and what is refused, with
 * the variable named and the credentials never in the message. */
#define _GNU_SOURCE
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

int main(void)
{
	test_split();
	test_refused();
	return unit_done("test_proxy_chain");
}
