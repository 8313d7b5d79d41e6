/* test_download.c - download's pure checks: the URL against the allow list
 * (net/dlurl.c) and workspace-relative paths (base/relpath.c, also cp's). */
#include "base/relpath.h"
#include "base/util.h"
#include "net/dlurl.h"
#include "unit.h"

static void test_relpath(void)
{
	static const struct { const char *in, *dir, *name; } t[] = {
		{ "a", ".", "a" }, { "sub/a", "sub", "a" }, { "x/y/z.bin", "x/y", "z.bin" },
		{ "./a", ".", "a" }, { "a..b", ".", "a..b" }, { "..a/b..", "..a", "b.." },
		{ "", NULL, NULL }, { "/etc/passwd", NULL, NULL }, { "..", NULL, NULL },
		{ "../x", NULL, NULL }, { "a/../../x", NULL, NULL }, { "a/..", NULL, NULL },
		{ "sub/", NULL, NULL }, { "sub/.", NULL, NULL }, { ".", NULL, NULL },
	};
	char dir[64];
	const char *name;
	struct sbx_err err;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = relpath_split(t[i].in, "DEST", dir, sizeof(dir), &name, &err);
		if (t[i].dir) {
			CHECK(r == 0);
			if (r == 0) {
				CHECK_STR(dir, t[i].dir);
				CHECK_STR(name, t[i].name);
			}
		} else {
			CHECK(r < 0);
			if (r < 0)
				CHECK_CONTAINS(err.msg, "DEST");
		}
	}
	CHECK(relpath_check("sub", "PATH", &err) == 0);
	CHECK(relpath_check("a/../b", "PATH", &err) < 0);
	CHECK_CONTAINS(err.msg, "must not contain '..'");
	char longp[100];
	memset(longp, 'a', sizeof(longp) - 1);
	longp[50] = '/';
	longp[99] = '\0';
	CHECK(relpath_split(longp, "DEST", dir, sizeof(dir), &name, &err) == 0);
	longp[50] = 'a';
	longp[80] = '/';
	CHECK(relpath_split(longp, "DEST", dir, sizeof(dir), &name, &err) < 0);
	CHECK_CONTAINS(err.msg, "too long");
}

static void test_dlurl(void)
{
	char *hosts[] = { "example.test", "*.files.example.test", "host.sbxrun.internal:8080",
			  "[2001:db8::1]" };
	struct sbx_strlist allow = { hosts, NULL, 4 };
	struct hostmatch_list l;
	struct sbx_err err;
	struct dlurl u;
	static const struct { const char *url; int port; const char *msg; } t[] = {
		{ "https://example.test/a", 443, NULL },
		{ "http://EXAMPLE.test./a", 80, NULL },
		{ "https://a.files.example.test:443/x?y#z", 443, NULL },
		{ "http://host.sbxrun.internal:8080/f", 8080, NULL },
		{ "https://[2001:DB8:0::1]/p", 443, NULL }, /* was refused: curl's brackets */
		{ "ftp://example.test/a", 0, "only http and https" },
		{ "file:///etc/passwd", 0, "only http and https" },
		{ "https://evil.test/", 0, "not in [download] allow" },
		{ "https://example.test:8443/", 0, "not in [download] allow" },
		{ "https://files.example.test/", 0, "not in [download] allow" },
		/* curl's parser turns numeric forms into the dotted quad it dials */
		{ "http://0x7f.1/", 0, "host '127.0.0.1' port 80 is not in" },
		{ "http://[::1]:8080/", 0, "host '::1' port 8080 is not in" },
		{ "http://host.sbxrun.internal/", 0, "not in [download] allow" },
		{ "not a url", 0, "is not a URL" },
		{ "https://example.test:99999/", 0, "is not a URL" },
	};

	CHECK(hostmatch_compile(&allow, NULL, &l, &err) == 0);
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = dlurl_check(&l, t[i].url, "p", &u, &err);
		if (!t[i].msg) {
			CHECK(r == 0);
			if (r == 0)
				CHECK(u.port == t[i].port);
		} else {
			CHECK(r < 0);
			if (r < 0)
				CHECK_CONTAINS(err.msg, t[i].msg);
			else
				fprintf(stderr, "accepted: %s\n", t[i].url);
		}
	}
	CHECK(dlurl_check(&l, "http://host.sbxrun.internal:8080/", "p", &u, &err) == 0 && u.grant.internal);
	hostmatch_free(&l);

	/* the split alone, as the gateway's fetches use it: no allow list */
	CHECK(dlurl_split("https://Evil.test/x", &u, &err) == 0 && u.https && u.port == 443);
	CHECK_STR(u.host, "evil.test");
	CHECK(dlurl_split("http://[::1]:8080/", &u, &err) == 0 && !u.https && u.port == 8080);
	CHECK_STR(u.host, "::1");
	CHECK(dlurl_split("ftp://example.test/", &u, &err) < 0);
	CHECK_CONTAINS(err.msg, "only http and https");
	CHECK(dlurl_split("http://0x7f.1.2.3.4/", &u, &err) < 0);
	CHECK(dlurl_split("https://example.test:0/", &u, &err) < 0);
	CHECK_CONTAINS(err.msg, "not a URL with a host and port");
}

int main(void)
{
	test_relpath();
	test_dlurl();
	return unit_done("test_download");
}
