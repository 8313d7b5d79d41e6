/* test_mavenmeta.c - Maven through the package gateway: request paths in
 * Central's layout (accepted, refused), checksum files, and
 * maven-metadata.xml as Maven's deploy writes it read and written again
 * with versions left out (latest and release following), a group's plugin
 * list, and what a peer may send that must be refused: a DOCTYPE with
 * entities, another root, too many versions, markup in a version. */
#define _GNU_SOURCE
#include <stdlib.h>

#include "base/util.h"
#include "pkg/mavenmeta.h"
#include "unit.h"

static void test_requests(void)
{
	struct maven_req r;
	const char *why = NULL;

	CHECK(maven_request("org/example/lib/1.2/lib-1.2.jar", 31, &r, &why) == 0);
	CHECK(r.kind == MAVEN_FILE && !r.sum);
	CHECK_STR(r.group, "org.example");
	CHECK_STR(r.artifact, "lib");
	CHECK_STR(r.version, "1.2");
	CHECK_STR(r.name, "org.example:lib");
	CHECK_STR(r.path, "org/example/lib/1.2/lib-1.2.jar");
	const char *p = "org/example/lib/1.2/lib-1.2-sources.jar.sha256";
	CHECK(maven_request(p, strlen(p), &r, &why) == 0);
	CHECK(r.sum && r.sum_algo == SRI_SHA256);
	CHECK_STR(r.path, "org/example/lib/1.2/lib-1.2-sources.jar");
	p = "org/example/lib/maven-metadata.xml.sha1";
	CHECK(maven_request(p, strlen(p), &r, &why) == 0);
	CHECK(r.kind == MAVEN_METADATA && r.sum && r.sum_algo == SRI_SHA1);
	CHECK_STR(r.name, "org.example:lib");
	CHECK_STR(r.path, "org/example/lib/maven-metadata.xml");
	p = "junit/junit/4.13.2+x/junit-4.13.2+x.pom";
	CHECK(maven_request(p, strlen(p), &r, &why) == 0);
	CHECK_STR(r.name, "junit:junit");

	static const char *const bad[] = {
		"org/example/../lib/1.2/lib-1.2.jar", "org/example/lib/1.2/lib-1.2.jar.md5",
		"org/example/lib/1.2/lib-1.2.jar.asc", "org/example/lib/1.2/lib-1.2.jar.sha512",
		"org/example/lib/1.2/other-1.2.jar", "org/example/lib/1.2/lib-1.3.jar", "org/example/lib/1.2/lib-1.2",
		"org/example/lib/1.2/lib-1.2.", "org/example/lib/1.0-SNAPSHOT/lib-1.0-SNAPSHOT.jar",
		"org//lib/1.2/lib-1.2.jar", "org/ex%2eample/lib/1.2/lib-1.2.jar", "org/.x/lib/1.2/lib-1.2.jar",
		"lib/1.2/lib-1.2.jar", "org/example/lib/1.2/lib-1.2.jar/", "/org/example/lib/1.2/lib-1.2.jar",
		"org/ex ample/lib/1.2/lib-1.2.jar", "maven-metadata.xml", "org/maven-metadata.xml",
		"org/example/li+b/1.2/li+b-1.2.jar", "org/example/lib/1.2/lib-1.2.jar\\x",
		"org.example/lib/1.2/lib-1.2.jar", "org/example/lib/1.2/lib-1.2..jar",
	};
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++) {
		int rc = maven_request(bad[i], strlen(bad[i]), &r, &why);
		if (rc == 0)
			fprintf(stderr, "accepted: %s\n", bad[i]);
		CHECK(rc < 0);
	}
	CHECK(maven_request("org/example/lib/1.2/lib-1.2.jar", 31, &r, NULL) == 0);
	CHECK(maven_request("org/example/lib/1.0-SNAPSHOT/lib-1.0-SNAPSHOT.jar", 49, &r, &why) < 0);
	CHECK_CONTAINS(why, "SNAPSHOT");
}

static void test_checksums(void)
{
	struct sri s;
	const char *h1 = "da39a3ee5e6b4b0d3255bfef95601890afd80709";

	CHECK(maven_checksum(h1, strlen(h1), SRI_SHA1, &s) == 0 && s.algo == SRI_SHA1);
	CHECK_STR(s.hex, h1);
	const char *with_name = "DA39A3EE5E6B4B0D3255BFEF95601890AFD80709  lib-1.2.jar\n";
	CHECK(maven_checksum(with_name, strlen(with_name), SRI_SHA1, &s) == 0);
	CHECK_STR(s.hex, h1);
	CHECK(maven_checksum(h1, strlen(h1), SRI_SHA256, &s) < 0);
	CHECK(maven_checksum("", 0, SRI_SHA1, &s) < 0);
	CHECK(maven_checksum("<html>not found</html>", 22, SRI_SHA1, &s) < 0);
	char nul[41];
	memcpy(nul, h1, 40);
	nul[5] = '\0';
	CHECK(maven_checksum(nul, 40, SRI_SHA1, &s) < 0);
}

/* as maven-deploy-plugin writes it */
static const char meta[] = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
			   "<metadata modelVersion=\"1.1.0\">\n"
			   "  <groupId>org.example</groupId>\n  <artifactId>lib</artifactId>\n"
			   "  <versioning>\n    <latest>2.0</latest>\n    <release>2.0</release>\n"
			   "    <versions>\n      <version>1.0</version>\n      <version>1.1</version>\n"
			   "      <version> 2.0 </version>\n      <version>bad<x/>one</version>\n"
			   "      <version>../1</version>\n    </versions>\n"
			   "    <lastUpdated>20260101120000</lastUpdated>\n  </versioning>\n</metadata>\n";

static void test_metadata(void)
{
	struct mavenmeta m;
	const char *why = NULL;
	size_t len;

	CHECK(mavenmeta_parse(meta, strlen(meta), &m, &why) == 0);
	CHECK(m.versioning && m.n == 3 && m.dropped == 2);
	CHECK_STR(m.group, "org.example");
	CHECK_STR(m.artifact, "lib");
	CHECK_STR(m.versions[2], "2.0");
	CHECK_STR(m.latest, "2.0");
	CHECK_STR(m.updated, "20260101120000");
	char *all = mavenmeta_write(&m, NULL, &len);
	CHECK_CONTAINS(all, "<latest>2.0</latest>\n    <release>2.0</release>\n    <versions>\n      <version>1.0</version>\n"
		       "      <version>1.1</version>\n      <version>2.0</version>\n    </versions>\n"
		       "    <lastUpdated>20260101120000</lastUpdated>");
	CHECK(strlen(all) == len);
	/* what is written reads again the same */
	struct mavenmeta again;
	CHECK(mavenmeta_parse(all, len, &again, &why) == 0 && again.n == 3 && again.dropped == 0);
	mavenmeta_free(&again);
	free(all);
	bool keep[3] = { true, true, false };
	char *some = mavenmeta_write(&m, keep, &len);
	CHECK_CONTAINS(some, "<latest>1.1</latest>\n    <release>1.1</release>\n    <versions>\n      <version>1.0</version>\n"
		       "      <version>1.1</version>\n    </versions>");
	free(some);
	bool none[3] = { false, false, false };
	char *empty = mavenmeta_write(&m, none, &len);
	CHECK_CONTAINS(empty, "<versioning>\n    <versions>\n    </versions>");
	CHECK(!strstr(empty, "<latest>"));
	free(empty);
	mavenmeta_free(&m);
}

static void test_plugins_and_refusals(void)
{
	struct mavenmeta m;
	const char *why = NULL;
	size_t len;
	const char *group = "<metadata><plugins><plugin><name>Apache Maven Dependency Plugin &amp; more</name>"
			    "<prefix>dependency</prefix><artifactId>maven-dependency-plugin</artifactId></plugin>"
			    "<plugin><prefix>bad prefix</prefix><artifactId>x</artifactId></plugin></plugins></metadata>";

	CHECK(mavenmeta_parse(group, strlen(group), &m, &why) < 0);
	const char *ok = "<metadata><plugins><plugin><name>Dep &lt;Plugin&gt;</name><prefix>dependency</prefix>"
			 "<artifactId>maven-dependency-plugin</artifactId></plugin></plugins></metadata>";
	CHECK(mavenmeta_parse(ok, strlen(ok), &m, &why) == 0 && !m.versioning && m.nplugins == 1);
	char *out = mavenmeta_write(&m, NULL, &len);
	CHECK_CONTAINS(out, "<name>Dep &lt;Plugin&gt;</name>");
	CHECK_CONTAINS(out, "<prefix>dependency</prefix>");
	free(out);
	mavenmeta_free(&m);

	const char *lol = "<?xml version=\"1.0\"?><!DOCTYPE metadata [<!ENTITY a \"aaaaaaaa\">"
			  "<!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;\">]><metadata><versioning><versions>"
			  "<version>&b;</version></versions></versioning></metadata>";
	CHECK(mavenmeta_parse(lol, strlen(lol), &m, &why) < 0);
	CHECK_CONTAINS(why, "DOCTYPE");
	const char *ext = "<?xml version=\"1.0\"?><!DOCTYPE metadata SYSTEM \"file:///etc/passwd\"><metadata/>";
	CHECK(mavenmeta_parse(ext, strlen(ext), &m, &why) < 0);
	CHECK(mavenmeta_parse("<project/>", 10, &m, &why) < 0);
	CHECK_CONTAINS(why, "<metadata>");
	CHECK(mavenmeta_parse("<metadata>", 10, &m, &why) < 0);
	CHECK(mavenmeta_parse("", 0, &m, &why) < 0);
	const char *other = "<metadata><groupId>org..x</groupId></metadata>";
	CHECK(mavenmeta_parse(other, strlen(other), &m, &why) < 0);

	/* too many versions: refused whole, never cut short */
	char *big = NULL;
	size_t bl = 0;
	FILE *f = open_memstream(&big, &bl);
	fputs("<metadata><versioning><versions>", f);
	for (int i = 0; i <= MAVENMETA_VERSIONS_MAX; i++)
		fprintf(f, "<version>1.%d</version>", i);
	fputs("</versions></versioning></metadata>", f);
	fclose(f);
	CHECK(mavenmeta_parse(big, bl, &m, &why) < 0);
	CHECK_CONTAINS(why, "more versions");
	free(big);
}

int main(void)
{
	test_requests();
	test_checksums();
	test_metadata();
	test_plugins_and_refusals();
	return unit_done("test_mavenmeta");
}
