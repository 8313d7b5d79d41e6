/* test_gateway.c - the package gateway's pure parts: npm package names
 * from request paths, packument rewriting and lookup, SRI parsing and
 * checking (the bytes of "hello\n" against its real digests), the package
 * rules by name and age, and a packument served under min_age (young
 * versions hidden, dist-tags moved to the newest mature version of their
 * kind). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/npm_doc.h"
#include "pkg/rules.h"
#include "pkg/sri.h"
#include "unit.h"

/* printf 'hello\n' | openssl dgst -sha512 -binary | base64, and sha1sum */
#define HELLO_SHA512 "sha512-58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3+TH5Sq5B7dosKyB6NuEPi8uNRSI+VIePWzFufOO2vAGWKQ=="
#define HELLO_SHA1 "f572d396fae9206628714fb2ce00f72e94f2258f"

static void test_names(void)
{
	static const struct { const char *in, *out; } t[] = {
		{ "express", "express" }, { "@types%2fnode", "@types/node" }, { "@types%2Fnode", "@types/node" },
		{ "@types/node", "@types/node" }, { "%40types%2fnode", "@types/node" }, { "JSONStream", "JSONStream" },
		{ "lodash.merge", "lodash.merge" }, { "..", NULL }, { ".hidden", NULL }, { "_x", NULL },
		{ "a/b", NULL }, { "@scope", NULL }, { "@scope/", NULL }, { "@/x", NULL }, { "@a/b/c", NULL },
		{ "a%2e%2e", NULL }, { "a b", NULL }, { "", NULL }, { "a:b", NULL }, { "a%00", NULL },
	};
	char out[NPM_NAME_MAX + 1];
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = npm_doc_name(t[i].in, strlen(t[i].in), out, sizeof(out));
		if (t[i].out) {
			CHECK(r == 0);
			CHECK_STR(out, t[i].out);
		} else if (r == 0) {
			fprintf(stderr, "accepted '%s'\n", t[i].in);
			CHECK(r < 0);
		}
	}
	char longname[400];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(npm_doc_name(longname, strlen(longname), out, sizeof(out)) < 0);
}

static const char doc[] =
	"{\"name\":\"@s/p\",\"dist-tags\":{\"latest\":\"1.0.0\"},\"versions\":{"
	"\"1.0.0\":{\"name\":\"@s/p\",\"dist\":{\"tarball\":\"https://up.example.org/@s/p/-/p-1.0.0.tgz\","
	"\"integrity\":\"" HELLO_SHA512 "\"}},"
	"\"0.9.0\":{\"dist\":{\"tarball\":\"https://other.example.net/x/p-0.9.0.tgz?x=1\",\"shasum\":\"" HELLO_SHA1 "\"}},"
	"\"0.1.0\":{\"dist\":{\"tarball\":\"https://up.example.org/@s/p/-/..\"}},"
	"\"0.2.0\":{\"dist\":{\"tarball\":42}}}}";

static void test_rewrite(void)
{
	char *out = NULL;
	size_t len = 0;
	struct sbx_err err;

	CHECK(npm_doc_rewrite(doc, strlen(doc), "@s/p", "http://packages.sbxrun.internal/npm/", &out, &len, &err) == 0);
	CHECK_CONTAINS(out, "\"tarball\":\"http://packages.sbxrun.internal/npm/@s/p/-/p-1.0.0.tgz\"");
	CHECK_CONTAINS(out, "\"tarball\":\"http://packages.sbxrun.internal/npm/@s/p/-/p-0.9.0.tgz\"");
	CHECK(strstr(out, "0.1.0") == NULL);  /* no plain file name: dropped */
	CHECK(strstr(out, "0.2.0") == NULL);
	CHECK(strstr(out, "example") == NULL);  /* no upstream link is left */
	CHECK_CONTAINS(out, HELLO_SHA512);      /* the digests stay as upstream gave them */
	free(out);
	CHECK(npm_doc_rewrite("[1]", 3, "p", "b/", &out, &len, &err) < 0);
	CHECK(npm_doc_rewrite("{\"versions\":{}} x", 17, "p", "b/", &out, &len, &err) < 0);
	CHECK(npm_doc_rewrite("{\"versions\":[]}", 15, "p", "b/", &out, &len, &err) < 0);
	CHECK(npm_doc_rewrite("", 0, "p", "b/", &out, &len, &err) < 0);
	/* no dist-tags, or not an object (fuzz_npmdoc found the first): served as they are */
	static const char *const untagged[] = {
		"{\"versions\":{\"1.0.0\":{\"dist\":{\"tarball\":\"http://h.example.org/p-1.0.0.tgz\"}}}}",
		"{\"dist-tags\":[\"1.0.0\"],\"versions\":{}}",
	};
	for (size_t i = 0; i < ARRAY_SIZE(untagged); i++) {
		CHECK(npm_doc_rewrite(untagged[i], strlen(untagged[i]), "p", "b/", &out, &len, &err) == 0);
		CHECK(strstr(out, "h.example.org") == NULL);
		free(out);
	}
}

static void test_find(void)
{
	struct npm_dist d;
	struct sbx_err err;

	CHECK(npm_doc_find(doc, strlen(doc), "p-1.0.0.tgz", &d, &err) == 1);
	CHECK_STR(d.version, "1.0.0");
	CHECK_STR(d.tarball, "https://up.example.org/@s/p/-/p-1.0.0.tgz");
	CHECK_STR(d.integrity, HELLO_SHA512);
	CHECK(d.shasum == NULL);
	npm_dist_free(&d);
	CHECK(npm_doc_find(doc, strlen(doc), "p-0.9.0.tgz", &d, &err) == 1);
	CHECK_STR(d.shasum, HELLO_SHA1);
	npm_dist_free(&d);
	CHECK(npm_doc_find(doc, strlen(doc), "p-2.0.0.tgz", &d, &err) == 0);
	CHECK(npm_doc_find("{}", 2, "p-2.0.0.tgz", &d, &err) < 0);
}

static int hello_fd(const char *text)
{
	char path[] = "/tmp/test_gateway.XXXXXX";
	int fd = mkstemp(path);
	unlink(path);
	CHECK(write_all(fd, text, strlen(text)) == 0);
	return fd;
}

static void test_sri(void)
{
	struct sri s;
	char got[129];

	CHECK(sri_from_npm(HELLO_SHA512, NULL, &s) == 0);
	CHECK(s.algo == SRI_SHA512 && s.len == 64);
	CHECK_STR(s.hex, "e7c22b994c59d9cf2b48e549b1e24666636045930d3da7c1acb299d1c3b7f931"
		  "f94aae41edda2c2b207a36e10f8bcb8d45223e54878f5b316e7ce3b6bc019629");
	/* the strongest of several; unknown ones skipped */
	CHECK(sri_from_npm("md5-abc sha1-9XLTlvrpIGYocU+yzgD3LpTyJY8= " HELLO_SHA512, NULL, &s) == 0);
	CHECK(s.algo == SRI_SHA512);
	CHECK(sri_from_npm("sha1-9XLTlvrpIGYocU+yzgD3LpTyJY8=", NULL, &s) == 0 && s.algo == SRI_SHA1);
	CHECK_STR(s.hex, HELLO_SHA1);
	CHECK(sri_from_npm(NULL, HELLO_SHA1, &s) == 0 && s.algo == SRI_SHA1);
	CHECK(sri_from_npm("", "", &s) < 0);
	CHECK(sri_from_npm("md5-XrY7u+Ae7tCTyyK7j1rNww==", NULL, &s) < 0);
	CHECK(sri_from_npm("sha512-short", NULL, &s) < 0);
	CHECK(sri_from_npm("sha512-" "58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3+TH5Sq5B7dosKyB6NuEPi8uNRSI+VIePWzFufOO2vAGWK!==",
			   NULL, &s) < 0);
	/* padding only at the end, exactly as long as the digest needs (fuzz_sri:
	 * "...=Q" decoded to a digest of its own), so no second spelling */
	CHECK(sri_from_npm("sha1-9XLTlvrpIGYocU+yzgD3LpTyJY=8", NULL, &s) < 0);
	CHECK(sri_from_npm("sha1-9XLTlvrpIGYocU+yzgD3LpTyJY8A", NULL, &s) < 0);
	CHECK(sri_from_npm("sha512-" "58IrmUxZ2c8rSOVJseJGZmNgRZMNPafBrLKZ0cO3+TH5Sq5B7dosKyB6NuEPi8uNRSI+VIePWzFufOO2vAGWKQA=",
			   NULL, &s) < 0);
	CHECK(sri_from_npm(NULL, "f572d396fae9206628714fb2ce00f72e94f2258", &s) < 0);
	CHECK(sri_from_npm(NULL, "g572d396fae9206628714fb2ce00f72e94f2258f", &s) < 0);

	/* streaming check: right, and one byte off */
	CHECK(sri_from_npm(HELLO_SHA512, NULL, &s) == 0);
	struct sri_check *c = sri_check_new(&s);
	sri_check_update(c, "hel", 3);
	sri_check_update(c, "lo\n", 3);
	CHECK(sri_check_end(c, got));
	CHECK_STR(got, s.hex);
	sri_check_free(c);
	c = sri_check_new(&s);
	sri_check_update(c, "hello!", 6);
	CHECK(!sri_check_end(c, got));
	CHECK(strcmp(got, s.hex) != 0);
	sri_check_free(c);

	int fd = hello_fd("hello\n");
	CHECK(sri_check_fd(&s, fd));
	close(fd);
	fd = hello_fd("hellO\n");
	CHECK(!sri_check_fd(&s, fd));
	close(fd);
	CHECK(sri_from_npm(NULL, HELLO_SHA1, &s) == 0);
	fd = hello_fd("hello\n");
	CHECK(sri_check_fd(&s, fd));
	close(fd);
}

static void test_rules(void)
{
	char *allow_v[] = { "pypi:numpy", "npm:@types/*", "deb:*" }, *deny_v[] = { "npm:@types/evil*" };
	char *orig[] = { "lab.ini:4", "lab.ini:5", "lab.ini:6" };
	struct sbx_strlist allow = { allow_v, orig, 3 }, deny = { deny_v, orig, 1 }, none = { 0 };
	struct gw_rules r = { .allow = &allow, .deny = &deny, .min_age_s = 7 * 86400 };
	char why[256], n[64];

	rules_normalize("pypi", "Zope.Interface__x", n, sizeof(n));
	CHECK_STR(n, "zope-interface-x");
	rules_normalize("npm", "@Types/Node", n, sizeof(n));
	CHECK_STR(n, "@Types/Node");
	/* crates.io: one crate whatever the case, '-' and '_' alike */
	rules_normalize("cargo", "Serde_JSON-x", n, sizeof(n));
	CHECK_STR(n, "serde-json-x");
	char *cdeny_v[] = { "cargo:serde-json*" };
	struct sbx_strlist cdeny = { cdeny_v, orig, 1 };
	struct gw_rules cr = { .deny = &cdeny };
	CHECK(rules_name(&cr, "cargo", "Serde_Json", why, sizeof(why)) == -1);
	CHECK_CONTAINS(why, "cargo 'Serde_Json' is denied by [packages] deny = cargo:serde-json*");
	CHECK(rules_name(&cr, "cargo", "serde", why, sizeof(why)) == 0);
	CHECK(rules_name(&cr, "npm", "serde-json", why, sizeof(why)) == 0);
	CHECK(rules_name(&r, "pypi", "NumPy", why, sizeof(why)) == 0);
	CHECK(rules_name(&r, "pypi", "pandas", why, sizeof(why)) == -1);
	CHECK_CONTAINS(why, "pypi 'pandas' is not on the allow list");
	CHECK(rules_name(&r, "npm", "@types/node", why, sizeof(why)) == 0);
	CHECK(rules_name(&r, "npm", "@types/evil-x", why, sizeof(why)) == -1);
	CHECK_CONTAINS(why, "denied by [packages] deny = npm:@types/evil* (lab.ini:4)");
	CHECK(rules_name(&r, "npm", "left-pad", why, sizeof(why)) == -1);
	CHECK(rules_name(&r, "deb", "gcc", why, sizeof(why)) == 0);
	/* apt's indexes have no name: open when any entry names deb */
	CHECK(rules_ecosystem(&r, "deb", why, sizeof(why)) == 0);
	allow.n = 2;
	CHECK(rules_ecosystem(&r, "deb", why, sizeof(why)) == -1);
	CHECK_CONTAINS(why, "deb is closed: [packages] allow names nothing of this ecosystem (lab.ini:4)");
	CHECK(rules_ecosystem(&r, "npm", why, sizeof(why)) == 0);
	allow_v[1] = "left-pad";  /* every ecosystem's */
	CHECK(rules_ecosystem(&r, "deb", why, sizeof(why)) == 0);
	allow_v[1] = "npm:@types/*";
	allow.n = 3;
	r.allow = &none;
	CHECK(rules_ecosystem(&r, "deb", why, sizeof(why)) == 0);
	CHECK(rules_name(&r, "npm", "left-pad", why, sizeof(why)) == 0);
	allow_v[0] = "pypi:numpy";
	r.allow = &allow;
	allow.n = 1;
	CHECK(rules_name(&r, "npm", "x", why, sizeof(why)) == -1);
	CHECK_CONTAINS(why, "which names nothing of this ecosystem");
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 1000000000, 1000000000 + 8 * 86400, why, sizeof(why)) == 0);
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 1000000000, 1000000000 + 2 * 86400, why, sizeof(why)) == -1);
	CHECK_STR(why, "published 2 days ago, [packages] min_age is 7 days");
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 0, 1000000000, why, sizeof(why)) == -1);
	r.min_age_s = 0;
	CHECK(rules_age(&r, "npm", "x", "1.0.0", 0, 1000000000, why, sizeof(why)) == 0);
}

/* 2024-01-01T00:00:00Z */
#define T0 1704067200

static void test_times(void)
{
	char rule[64];

	CHECK(rules_time("2024-01-01T00:00:00Z") == T0);
	CHECK(rules_time("2024-01-01T00:00:00.123Z") == T0);
	CHECK(rules_time("2024-01-01T02:00:00+02:00") == T0);
	CHECK(rules_time("2023-12-31T23:00:00-01:00") == T0);
	const char *bad[] = { NULL, "", "2024-01-01", "2024-01-01T00:00:00", "2024-13-01T00:00:00Z",
			      "2024-01-01T00:00:00Zx", "2024-01-01 00:00:00Z", "x2024-01-01T00:00:00Z",
			      "2024-01-01T00:00:00+2:00" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(rules_time(bad[i]) == 0);
	rules_which("npm 'x' is denied by [packages] deny = npm:x* (lab.ini:4)", rule, sizeof(rule));
	CHECK_STR(rule, "deny = npm:x*");
	rules_which("npm 'x' is not on the allow list ([packages] allow, lab.ini:4)", rule, sizeof(rule));
	CHECK_STR(rule, "allow");
	rules_which("npm x@2.0.0: published 2 days ago, [packages] min_age is 7 days", rule, sizeof(rule));
	CHECK_STR(rule, "min_age = 7 days");
	char why[200];
	rules_offline("npm", "x", "1.0.0", why, sizeof(why));
	CHECK_STR(why, "offline: npm 'x@1.0.0' is not in the cache ([packages] offline = yes)");
	rules_which(why, rule, sizeof(rule));
	CHECK_STR(rule, "offline");
	rules_which("upstream answered HTTP 500", rule, sizeof(rule));
	CHECK_STR(rule, "");
}

#define V(ver, date) "\"" ver "\":{\"dist\":{\"tarball\":\"https://up.example.org/y/-/y-" ver ".tgz\"}}"
#define DAY 86400

/* Published (T0 + days): 1.0.0 -30, 1.1.0 -20, 2.0.0-rc.1 -15, 2.0.0-rc.2 -1,
 * 1.2.0 -2, 2.0.0-beta.1 -0.5, 0.9.0 with no date; latest 1.2.0, next
 * 2.0.0-rc.2, beta 2.0.0-beta.1 (no older prerelease: the release below
 * it), old 0.9.0 (nothing older: dropped). */
static const char young_doc[] =
	"{\"name\":\"y\",\"dist-tags\":{\"latest\":\"1.2.0\",\"next\":\"2.0.0-rc.2\",\"beta\":\"2.0.0-beta.1\","
	"\"old\":\"0.9.0\"},\"versions\":{" V("0.9.0", 0) "," V("1.0.0", 0) "," V("1.1.0", 0) "," V("1.2.0", 0) ","
	V("2.0.0-rc.1", 0) "," V("2.0.0-rc.2", 0) "," V("2.0.0-beta.1", 0) "},\"time\":{"
	"\"created\":\"2023-01-01T00:00:00Z\",\"1.0.0\":\"2023-12-02T00:00:00Z\",\"1.1.0\":\"2023-12-12T00:00:00Z\","
	"\"2.0.0-rc.1\":\"2023-12-17T00:00:00.000Z\",\"2.0.0-rc.2\":\"2023-12-31T00:00:00Z\","
	"\"1.2.0\":\"2023-12-30T00:00:00Z\",\"2.0.0-beta.1\":\"2023-12-31T12:00:00Z\"}}";

static void test_min_age(void)
{
	struct gw_rules r = { .min_age_s = 7 * DAY };
	struct npm_serve s = { .rules = &r, .now_s = T0 };
	char *out = NULL;
	size_t len;
	struct sbx_err err;

	CHECK(npm_doc_serve(young_doc, strlen(young_doc), "y", "http://g/npm/", &s, &out, &len, &err) == 0);
	CHECK(s.hidden == 4);
	CHECK_STR(s.told, "2.0.0-rc.2 (published 24 hours ago), 2.0.0-beta.1 (published 12 hours ago), "
		  "1.2.0 (published 2 days ago) and 1 more");
	CHECK_CONTAINS(out, "\"dist-tags\":{\"latest\":\"1.1.0\",\"next\":\"2.0.0-rc.1\",\"beta\":\"1.1.0\"}");
	CHECK(strstr(out, "\"1.2.0\"") == NULL && strstr(out, "2.0.0-rc.2") == NULL && strstr(out, "0.9.0") == NULL);
	CHECK_CONTAINS(out, "\"1.0.0\":\"2023-12-02T00:00:00Z\"");  /* time stays for what is served */
	CHECK_CONTAINS(out, "http://g/npm/y/-/y-1.1.0.tgz");
	free(out);

	/* no rule: everything, tags as they were */
	struct npm_serve none = { .rules = NULL };
	CHECK(npm_doc_serve(young_doc, strlen(young_doc), "y", "http://g/npm/", &none, &out, &len, &err) == 0);
	CHECK(none.hidden == 0);
	CHECK_CONTAINS(out, "\"latest\":\"1.2.0\"");
	CHECK_CONTAINS(out, "\"old\":\"0.9.0\"");
	free(out);

	/* everything young (or undated): no version, no tag */
	r.min_age_s = 365 * DAY;
	CHECK(npm_doc_serve(young_doc, strlen(young_doc), "y", "http://g/npm/", &s, &out, &len, &err) == 0);
	CHECK(s.hidden == 7);
	CHECK_CONTAINS(out, "\"dist-tags\":{}");
	CHECK_CONTAINS(out, "\"versions\":{}");
	free(out);

	/* semver's order, not the text's: 1.10.0 after 1.9.0, rc.10 after rc.9 */
	static const char order[] =
		"{\"dist-tags\":{\"latest\":\"1.11.0\",\"next\":\"2.0.0-rc.11\"},\"versions\":{" V("1.9.0", 0) ","
		V("1.10.0", 0) "," V("1.11.0", 0) "," V("2.0.0-rc.9", 0) "," V("2.0.0-rc.10", 0) "," V("2.0.0-rc.11", 0)
		"},\"time\":{\"1.9.0\":\"2023-01-01T00:00:00Z\",\"1.10.0\":\"2023-01-02T00:00:00Z\","
		"\"2.0.0-rc.9\":\"2023-01-01T00:00:00Z\",\"2.0.0-rc.10\":\"2023-01-02T00:00:00Z\"}}";
	r.min_age_s = 7 * DAY;
	CHECK(npm_doc_serve(order, strlen(order), "y", "http://g/npm/", &s, &out, &len, &err) == 0);
	CHECK_CONTAINS(out, "\"dist-tags\":{\"latest\":\"1.10.0\",\"next\":\"2.0.0-rc.10\"}");
	CHECK_STR(s.told, "2.0.0-rc.11 (date unknown), 1.11.0 (date unknown)");
	free(out);

	/* a tarball's date comes with it */
	struct npm_dist d;
	CHECK(npm_doc_find(young_doc, strlen(young_doc), "y-1.2.0.tgz", &d, &err) == 1);
	CHECK(d.published_s == T0 - 2 * DAY);
	npm_dist_free(&d);
	CHECK(npm_doc_find(young_doc, strlen(young_doc), "y-0.9.0.tgz", &d, &err) == 1);
	CHECK(d.published_s == 0);
	npm_dist_free(&d);
}

int main(void)
{
	test_names();
	test_rewrite();
	test_find();
	test_sri();
	test_rules();
	test_times();
	test_min_age();
	return unit_done("test_gateway");
}
