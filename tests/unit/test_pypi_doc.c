/* test_pypi_doc.c - PyPI's simple pages in the package gateway: project
 * and file names from request paths, the HTML form's anchors (entities,
 * comments, odd quoting) and the JSON form's files read from untrusted
 * pages, the pages served (links back to the gateway, digests kept,
 * metadata links dropped, young files hidden by the age rule), content
 * negotiation and versions from file names. */
#include <stdlib.h>

#include "base/util.h"
#include "pkg/pypi_doc.h"
#include "unit.h"

#define H1 "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"  /* sha256 of "hello\n" */
#define H2 "2C26B46B68FFC68FF99B453C1D30413413422D706483BFA0F98A5E886266E7AE"  /* of "foo", upper case */
#define BASE "http://packages.sbxrun.internal/pypi/files/demo/"

static void test_names(void)
{
	static const struct { const char *in, *out; } t[] = {
		{ "demo", "demo" }, { "Foo_Bar.baz", "foo-bar-baz" }, { "a--_.b", "a-b" }, { "%46oo", "foo" },
		{ "zope.interface", "zope-interface" }, { "A1", "a1" }, { "x", "x" },
		{ "", NULL }, { "-a", NULL }, { "a-", NULL }, { "a/b", NULL }, { "..", NULL }, { "a%2fb", NULL },
		{ "a b", NULL }, { "a%00", NULL }, { "a%", NULL }, { "a%4", NULL }, { "a%zz", NULL }, { "a:b", NULL },
	};
	char out[PYPI_NAME_MAX + 1];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = pypi_doc_name(t[i].in, strlen(t[i].in), out, sizeof(out));
		if (t[i].out) {
			CHECK(r == 0);
			CHECK_STR(out, t[i].out);
		} else if (r == 0) {
			fprintf(stderr, "accepted '%s'\n", t[i].in);
			CHECK(r < 0);
		}
	}
	char longname[300];
	memset(longname, 'a', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	CHECK(pypi_doc_name(longname, strlen(longname), out, sizeof(out)) < 0);

	static const struct { const char *in, *out; } f[] = {
		{ "demo-1.0-py3-none-any.whl", "demo-1.0-py3-none-any.whl" },
		{ "demo-1.0%2Blocal.tar.gz", "demo-1.0+local.tar.gz" }, { "demo-1!2.0.zip", "demo-1!2.0.zip" },
		{ ".hidden", NULL }, { "a/b", NULL }, { "a%2fb", NULL }, { "", NULL }, { "..", NULL },
		{ "a%00b", NULL }, { "a b.whl", NULL }, { "a?b", NULL },
	};
	char file[PYPI_FILE_MAX + 1];
	for (size_t i = 0; i < ARRAY_SIZE(f); i++) {
		int r = pypi_doc_filename(f[i].in, strlen(f[i].in), file, sizeof(file));
		if (f[i].out) {
			CHECK(r == 0);
			CHECK_STR(file, f[i].out);
		} else if (r == 0) {
			fprintf(stderr, "accepted file '%s'\n", f[i].in);
			CHECK(r < 0);
		}
	}
}

static const char html[] =
	"<!DOCTYPE html>\n<html><head><meta name=\"pypi:repository-version\" content=\"1.0\"></head><body>\n"
	"<!-- <a href=\"https://evil.example/x.whl#sha256=" H1 "\">x-1.0.whl</a> -->\n"
	"<a href=\"../../files/demo-1.0-py3-none-any.whl#sha256=" H1 "\" data-requires-python=\"&gt;=3.8\" "
	"data-dist-info-metadata=\"sha256=" H1 "\" data-core-metadata=\"true\">demo-1.0-py3-none-any.whl</a><br/>\n"
	"<A HREF='https://files.example.org/d/demo-0.9.tar.gz?a=1&amp;b=2#sha256=" H2 "' data-yanked>\n  demo-0.9.tar.gz </A>\n"
	"<a href=https://files.example.org/demo-0.8.tar.gz#sha256=2c26b46b68f.c68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae >"
	"demo-0.8.tar.gz</a>\n"
	"<a href=\"/x/demo-0.7.zip#sha256=" H1 "\" data-yanked=\"broken &amp; bad\">demo-0.7.zip</a>\n"
	"<a href=\"/x/evil#sha256=" H1 "\">../../etc/passwd</a>\n"
	"<a href=\"/x/y#sha256=" H1 "\"><b>demo-0.6.zip</b></a>\n"
	"<a href=\"/x/z#sha256=" H1 "\">demo-0.5.zip\n";  /* no end: left out */

static void test_html(void)
{
	struct pypi_page pg;
	struct sbx_err err;
	const struct pypi_file *f;

	CHECK(pypi_doc_parse(html, strlen(html), &pg, &err) == 0);
	CHECK(!pg.json);
	CHECK(pg.n == 4);
	CHECK((f = pypi_doc_find(&pg, "demo-1.0-py3-none-any.whl")) != NULL);
	if (f) {
		CHECK_STR(f->url, "../../files/demo-1.0-py3-none-any.whl");
		CHECK_STR(f->sha256, H1);
		CHECK_STR(f->requires_python, ">=3.8");
		CHECK(f->yanked == NULL && f->upload_time == 0 && f->size == -1);
	}
	CHECK((f = pypi_doc_find(&pg, "demo-0.9.tar.gz")) != NULL);
	if (f) {
		CHECK_STR(f->url, "https://files.example.org/d/demo-0.9.tar.gz?a=1&b=2");
		CHECK_STR(f->sha256, "2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae");
		CHECK_STR(f->yanked, "");
	}
	CHECK((f = pypi_doc_find(&pg, "demo-0.8.tar.gz")) != NULL);
	if (f)
		CHECK_STR(f->sha256, "");  /* not a sha256 in hex: none */
	CHECK((f = pypi_doc_find(&pg, "demo-0.7.zip")) != NULL);
	if (f)
		CHECK_STR(f->yanked, "broken & bad");
	CHECK(pypi_doc_find(&pg, "x-1.0.whl") == NULL);
	CHECK(pypi_doc_find(&pg, "../../etc/passwd") == NULL);

	size_t len = 0;
	bool keep[4] = { true, true, true, false };
	char *out = pypi_doc_html(&pg, "demo", BASE, keep, &len);
	CHECK(out && strlen(out) == len);
	CHECK_CONTAINS(out, "<a href=\"" BASE "demo-1.0-py3-none-any.whl#sha256=" H1 "\" data-requires-python=\"&gt;=3.8\">"
		       "demo-1.0-py3-none-any.whl</a>");
	CHECK_CONTAINS(out, "<a href=\"" BASE "demo-0.9.tar.gz#sha256=2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae\" "
		       "data-yanked=\"\">demo-0.9.tar.gz</a>");
	CHECK(strstr(out, "demo-0.8") == NULL);  /* no sha256 */
	CHECK(strstr(out, "demo-0.7") == NULL);  /* not kept */
	CHECK(strstr(out, "metadata") == NULL);
	CHECK(strstr(out, "example") == NULL);   /* no upstream link is left */
	free(out);

	out = pypi_doc_json(&pg, "demo", BASE, NULL, &len);
	CHECK(out && strlen(out) == len);
	CHECK_CONTAINS(out, "\"meta\":{\"api-version\":\"1.0\"}");
	CHECK_CONTAINS(out, "\"url\":\"" BASE "demo-1.0-py3-none-any.whl\",\"hashes\":{\"sha256\":\"" H1 "\"},"
		       "\"requires-python\":\">=3.8\"");
	CHECK_CONTAINS(out, "\"yanked\":true");
	CHECK_CONTAINS(out, "\"yanked\":\"broken & bad\"");
	CHECK(strstr(out, "example") == NULL);
	free(out);
	pypi_page_free(&pg);

	CHECK(pypi_doc_parse("", 0, &pg, &err) < 0);
	CHECK(pypi_doc_parse("plain text", 10, &pg, &err) < 0);
	CHECK(pypi_doc_parse("<a href=\"x\0\">", 13, &pg, &err) < 0);
	CHECK(pypi_doc_parse("<a href=\"x#sha256=" H1, strlen("<a href=\"x#sha256=" H1), &pg, &err) == 0);
	CHECK(pg.n == 0);
	pypi_page_free(&pg);
}

static const char json[] =
	"{\"meta\":{\"api-version\":\"1.1\"},\"name\":\"demo\",\"versions\":[\"1.0\",\"2.0\"],\"files\":["
	"{\"filename\":\"demo-1.0-py3-none-any.whl\",\"url\":\"https://files.example.org/demo-1.0-py3-none-any.whl\","
	"\"hashes\":{\"sha256\":\"" H1 "\",\"md5\":\"x\"},\"requires-python\":\">=3.8\",\"core-metadata\":{\"sha256\":\"" H1 "\"},"
	"\"dist-info-metadata\":true,\"size\":6,\"upload-time\":\"2024-01-02T03:04:05.678Z\",\"yanked\":false},"
	"{\"filename\":\"demo-2.0.tar.gz\",\"url\":\"../demo-2.0.tar.gz#sha256=" H1 "\",\"hashes\":{},"
	"\"size\":3,\"upload-time\":\"2025-01-02T03:04:05Z\",\"yanked\":\"oops\"},"
	"{\"filename\":\"demo-2.0-py3-none-any.whl\",\"url\":\"/d/demo-2.0-py3-none-any.whl\",\"hashes\":{\"sha256\":\"" H2 "\"},"
	"\"size\":4},"
	"{\"filename\":42,\"url\":\"x\"},{\"filename\":\"../x\",\"url\":\"x\",\"hashes\":{\"sha256\":\"" H1 "\"}},7]}";

static void test_json(void)
{
	struct pypi_page pg;
	struct sbx_err err;
	const struct pypi_file *f;
	size_t len = 0;

	CHECK(pypi_doc_parse(json, strlen(json), &pg, &err) == 0);
	CHECK(pg.json && pg.n == 3 && pg.nversions == 2);
	CHECK((f = pypi_doc_find(&pg, "demo-1.0-py3-none-any.whl")) != NULL);
	if (f) {
		CHECK_STR(f->sha256, H1);
		CHECK(f->upload_time == 1704164645 && f->size == 6 && f->yanked == NULL);
	}
	CHECK((f = pypi_doc_find(&pg, "demo-2.0.tar.gz")) != NULL);
	if (f) {
		CHECK_STR(f->sha256, "");  /* JSON: only hashes counts, not the URL's fragment */
		CHECK_STR(f->url, "../demo-2.0.tar.gz");
		CHECK_STR(f->yanked, "oops");
	}
	char *out = pypi_doc_json(&pg, "demo", BASE, NULL, &len);
	CHECK_CONTAINS(out, "\"meta\":{\"api-version\":\"1.1\"}");
	CHECK_CONTAINS(out, "\"versions\":[\"1.0\",\"2.0\"]");
	CHECK_CONTAINS(out, "\"size\":6,\"upload-time\":\"2024-01-02T03:04:05Z\"");
	CHECK(strstr(out, "metadata") == NULL);
	CHECK(strstr(out, "demo-2.0.tar.gz") == NULL);
	CHECK(strstr(out, "example") == NULL);
	free(out);
	bool keep[3] = { true, true, false };
	out = pypi_doc_json(&pg, "demo", BASE, keep, &len);
	CHECK(strstr(out, "demo-2.0-py3") == NULL);
	free(out);
	pypi_page_free(&pg);

	static const char *const bad[] = { "{}", "{\"meta\":{},\"files\":{}}", "{\"files\":[]}",
					   "{\"meta\":{},\"files\":[]} x", "[1]", "{" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(pypi_doc_parse(bad[i], strlen(bad[i]), &pg, &err) < 0);
	const char *empty = " {\"meta\":{},\"files\":[]}";
	CHECK(pypi_doc_parse(empty, strlen(empty), &pg, &err) == 0 && pg.n == 0);
	pypi_page_free(&pg);
}

/* The age rule hides young files; a page without dates keeps nothing */
static void test_keep(void)
{
	struct gw_rules r = { .min_age_s = 7 * 86400 };
	struct pypi_page pg;
	struct sbx_err err;
	bool keep[4];
	size_t len = 0;

	CHECK(pypi_doc_parse(json, strlen(json), &pg, &err) == 0 && pg.n == 3);
	pg.files[1].upload_time = 1704164645 + 9 * 86400;
	pypi_doc_keep(&pg, "demo", &r, 1704164645 + 10 * 86400, keep);
	CHECK(keep[0] && !keep[1] && !keep[2]);  /* 10 days, 1 day, no date */
	char *out = pypi_doc_json(&pg, "demo", BASE, keep, &len);
	CHECK_CONTAINS(out, "demo-1.0-py3-none-any.whl");
	CHECK(strstr(out, "demo-2.0") == NULL);
	free(out);
	r.min_age_s = 0;
	pypi_doc_keep(&pg, "demo", &r, 0, keep);
	CHECK(keep[0] && keep[1] && keep[2]);
	pypi_page_free(&pg);

	r.min_age_s = 60;
	CHECK(pypi_doc_parse(html, strlen(html), &pg, &err) == 0 && pg.n == 4);
	pypi_doc_keep(&pg, "demo", &r, 1704164645, keep);
	CHECK(!keep[0] && !keep[1] && !keep[2] && !keep[3]);
	pypi_page_free(&pg);
}

static void test_accept(void)
{
	CHECK(pypi_doc_wants_json("application/vnd.pypi.simple.v1+json, application/vnd.pypi.simple.v1+html; q=0.1, "
				  "text/html; q=0.01"));
	CHECK(pypi_doc_wants_json("application/vnd.pypi.simple.latest+json"));
	CHECK(!pypi_doc_wants_json(""));
	CHECK(!pypi_doc_wants_json("text/html"));
	CHECK(!pypi_doc_wants_json("*/*"));
	CHECK(!pypi_doc_wants_json("application/vnd.pypi.simple.v1+json;q=0, text/html"));
	CHECK(!pypi_doc_wants_json("application/vnd.pypi.simple.v1+json;q=0.2, text/*"));
	CHECK(!pypi_doc_wants_json("application/json"));
}

static void test_versions(void)
{
	static const struct { const char *project, *file, *version; } t[] = {
		{ "demo", "demo-1.0-py3-none-any.whl", "1.0" },
		{ "my-pkg", "my_pkg-2.0.1-1-py3-none-any.whl", "2.0.1" },
		{ "my-pkg", "my-pkg-1.2.tar.gz", "1.2" }, { "my-pkg", "My.Pkg-1.2.zip", "1.2" },
		{ "demo", "demo-1.0+local.tar.gz", "1.0+local" }, { "demo", "demo-1.0-py3.8.egg", "1.0" },
		{ "demo", "demo.txt", "" }, { "demo", "", "" }, { "other", "x-3.0.tar.gz", "3.0" },
	};
	char v[64];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		pypi_doc_version(t[i].project, t[i].file, v, sizeof(v));
		CHECK_STR(v, t[i].version);
	}
}

int main(void)
{
	test_names();
	test_html();
	test_json();
	test_keep();
	test_accept();
	test_versions();
	return unit_done("test_pypi_doc");
}
