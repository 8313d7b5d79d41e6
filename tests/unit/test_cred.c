/* test_cred.c - [credentials] lines (base/credspec.c) and the one rewrite
 * of a request head (net/cred.c): the secret put on the bound host's
 * requests alone, the placeholder refused anywhere else. */
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "base/credspec.h"
#include "base/util.h"
#include "net/cred.h"
#include "unit.h"

static void test_parse(void)
{
	static const struct { const char *line; int ok; const char *host; unsigned port; const char *path, *header; int scheme; } cases[] = {
		{ "GH_TOKEN=env:X github.com", 1, "github.com", 0, "", "Authorization", CREDSPEC_BEARER },
		{ "A=env:X API.Example.org.:8443/v1/ scheme=token", 1, "api.example.org", 8443, "/v1", "Authorization", CREDSPEC_TOKEN },
		{ "A=env:X h.org/x header=X-Api-Key", 1, "h.org", 0, "/x", "X-Api-Key", CREDSPEC_RAW },
		{ "A=env:X h.org scheme=BASIC", 1, "h.org", 0, "", "Authorization", CREDSPEC_BASIC },
		{ "A=env:X *.h.org", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:X @npm", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:X h.org scheme=x", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:X h.org header=a:b", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:X h.org header=a header=b", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:X h.org/a?b", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=file:rel h.org", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:1X h.org", 0, NULL, 0, NULL, NULL, 0 },
		{ "1A=env:X h.org", 0, NULL, 0, NULL, NULL, 0 },
		{ "HTTPS_PROXY=env:X h.org", 0, NULL, 0, NULL, NULL, 0 },
		{ "A=env:X", 0, NULL, 0, NULL, NULL, 0 },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		struct sbx_credspec c;
		struct sbx_err err;
		int r = credspec_parse(cases[i].line, &c, &err);
		if ((r == 0) != cases[i].ok)
			fprintf(stderr, "case %zu: %s\n", i, r ? err.msg : "accepted");
		CHECK((r == 0) == cases[i].ok);
		if (r == 0 && cases[i].ok) {
			CHECK_STR(c.host, cases[i].host);
			CHECK(c.port == cases[i].port);
			CHECK_STR(c.path, cases[i].path);
			CHECK_STR(c.header, cases[i].header);
			CHECK((int)c.scheme == cases[i].scheme);
		}
	}
	struct sbx_credspec c;
	struct sbx_err err;
	CHECK(credspec_parse("A=env:X h.org/org", &c, &err) == 0);
	CHECK(credspec_matches(&c, "h.org", 443, "/org/repo.git/info/refs?service=x"));
	CHECK(credspec_matches(&c, "h.org", 80, "/org?x"));
	CHECK(!credspec_matches(&c, "h.org", 443, "/organisation"));
	CHECK(!credspec_matches(&c, "h.org", 8443, "/org/x"));
	CHECK(!credspec_matches(&c, "x.h.org", 443, "/org/x"));
}

static void test_rewrite(void)
{
	struct sbx_strlist l = { 0 };
	struct sbx_creds *cr;
	struct sbx_err err;
	char *out = NULL;
	size_t olen;
	const char *var = NULL;

	setenv("UNIT_CRED_A", "s3cret", 1);
	setenv("UNIT_CRED_B", "tok", 1);
	config_strlist_add(&l, xstrdup("A=env:UNIT_CRED_A api.test/v1"), "t:1");
	config_strlist_add(&l, xstrdup("B=env:UNIT_CRED_B git.test scheme=basic"), "t:2");
	CHECK(cred_load(&l, &cr, &err) == 0);
	CHECK(getenv("UNIT_CRED_A") == NULL); /* wiped from the environment */
	const char *pa = cred_placeholder(cr, 0), *pb = cred_placeholder(cr, 1);
	CHECK(strncmp(pa, "sbxrun-cred-", 12) == 0 && strlen(pa) == CRED_PLACEHOLDER_LEN);
	CHECK(strcmp(pa, pb) != 0);
	char head[512];

	/* the placeholder replaced by the secret */
	snprintf(head, sizeof(head), "GET /v1/x HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer %s\r\n\r\n", pa);
	CHECK(cred_rewrite(cr, "api.test", 443, head, strlen(head), &out, &olen, &var) == CRED_USED);
	CHECK_STR(out, "GET /v1/x HTTP/1.1\r\nHost: api.test\r\nAuthorization: Bearer s3cret\r\n\r\n");
	CHECK_STR(var, "A");
	free(out);
	/* added where absent; git's basic of x-access-token:tok */
	snprintf(head, sizeof(head), "GET /r.git/info/refs HTTP/1.1\r\nHost: git.test\r\n\r\n");
	CHECK(cred_rewrite(cr, "git.test", 443, head, strlen(head), &out, &olen, &var) == CRED_USED);
	CHECK_CONTAINS(out, "Authorization: Basic eC1hY2Nlc3MtdG9rZW46dG9r\r\n\r\n");
	free(out);
	/* outside the path: nothing added */
	snprintf(head, sizeof(head), "GET /v2 HTTP/1.1\r\nHost: api.test\r\n\r\n");
	CHECK(cred_rewrite(cr, "api.test", 443, head, strlen(head), &out, &olen, &var) == CRED_NONE);
	/* the placeholder to another host, another path, in a URL, in base64 */
	snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nX-Token: %s\r\n\r\n", pa);
	CHECK(cred_rewrite(cr, "evil.test", 443, head, strlen(head), &out, &olen, &var) == CRED_REFUSED);
	CHECK_STR(var, "A");
	snprintf(head, sizeof(head), "GET /v2 HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n", pa);
	CHECK(cred_rewrite(cr, "api.test", 443, head, strlen(head), &out, &olen, &var) == CRED_REFUSED);
	snprintf(head, sizeof(head), "GET /v1/?k=%s HTTP/1.1\r\n\r\n", pa);
	CHECK(cred_rewrite(cr, "api.test", 443, head, strlen(head), &out, &olen, &var) == CRED_REFUSED);
	char pair[128], b64[200];
	snprintf(pair, sizeof(pair), "u:%s", pb);
	EVP_EncodeBlock((unsigned char *)b64, (const unsigned char *)pair, (int)strlen(pair));
	snprintf(head, sizeof(head), "GET / HTTP/1.1\r\nAuthorization: Basic %s\r\n\r\n", b64);
	CHECK(cred_rewrite(cr, "api.test", 443, head, strlen(head), &out, &olen, &var) == CRED_REFUSED);
	CHECK_STR(var, "B");
	CHECK(cred_carried(cr, head, strlen(head), &var));
	CHECK(cred_binds(cr, "api.test", 443) && cred_binds(cr, "git.test", 80) && !cred_binds(cr, "api.test", 8443));
	cred_free(cr);
	config_strlist_free(&l);
}

int main(void)
{
	test_parse();
	test_rewrite();
	return unit_done("cred");
}
