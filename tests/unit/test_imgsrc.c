/* test_imgsrc.c - @go, @cargo, @maven as store/imgsrc.c reads them from
 * the probe's lines: GOPROXY's first URL, GOSUMDB's forms with the key the
 * go binary carries, cargo's source replacement (chains, [registries],
 * quoting, comments, a git index, a local directory), Maven's mirrors
 * (mirrorOf's forms, namespaces, a DOCTYPE refused) and its super POM. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/imgsrc.h"
#include "unit.h"

#define KEY "sumdb.fixture+1a2b3c4d+AbCdEfGhIjKlMnOpQrStUvWxYz0123456789+/abcdef"

static void test_go(void)
{
	char b[256];

	CHECK_STR(imgsrc_goproxy("https://a.example/p,direct", b, sizeof(b)), "https://a.example/p");
	CHECK_STR(imgsrc_goproxy("https://a.example|https://b.example", b, sizeof(b)), "https://a.example");
	CHECK_STR(imgsrc_goproxy("file:///x,https://c.example/", b, sizeof(b)), "https://c.example/");
	CHECK(imgsrc_goproxy("direct", b, sizeof(b)) == NULL);
	CHECK(imgsrc_goproxy("off", b, sizeof(b)) == NULL);
	CHECK(imgsrc_goproxy("direct,https://a.example", b, sizeof(b)) == NULL);
	CHECK(imgsrc_goproxy("https://a b", b, sizeof(b)) == NULL);
	CHECK(imgsrc_goproxy("", b, sizeof(b)) == NULL);

	char *s;
	CHECK_STR((s = imgsrc_gosumdb("sumdb.fixture", KEY)), KEY " https://sumdb.fixture");
	free(s);
	CHECK_STR((s = imgsrc_gosumdb("sumdb.fixture https://m.example/db", KEY)), KEY " https://m.example/db");
	free(s);
	CHECK_STR((s = imgsrc_gosumdb(KEY, NULL)), KEY " https://sumdb.fixture");
	free(s);
	/* the key found for another name is not this one's */
	CHECK_STR((s = imgsrc_gosumdb("other.example", KEY)), "other.example https://other.example");
	free(s);
	CHECK((s = imgsrc_gosumdb("off", KEY)) == NULL);
	CHECK((s = imgsrc_gosumdb("", KEY)) == NULL);
	CHECK((s = imgsrc_gosumdb("Bad_Name", NULL)) == NULL);
	CHECK((s = imgsrc_gosumdb("sumdb.fixture ftp://x", KEY)) == NULL);
}

static void test_cargo(void)
{
	char b[256];
	const char *why;

	CHECK_STR(imgsrc_cargo("[source.crates-io]\nreplace-with = \"lab\" # mirror\n\n[source.lab]\n"
			       "registry = \"sparse+https://c.example/index/\"\n", b, sizeof(b), &why),
		  "https://c.example/index/");
	CHECK_STR(imgsrc_cargo("[source.'crates-io']\nreplace-with='a'\n[source.\"a\"]\nreplace-with = \"b\"\n"
			       "[registries.b]\nindex = \"sparse+https://r.example/\"\n", b, sizeof(b), &why),
		  "https://r.example/");
	CHECK_STR(imgsrc_cargo("source.crates-io.replace-with = \"x\"\nsource.x.registry = "
			       "\"sparse+https://d.example/\"\n", b, sizeof(b), &why), "https://d.example/");
	/* the last value said wins, as in TOML it would be an error anyway */
	CHECK(imgsrc_cargo("[registries.crates-io]\nprotocol = \"sparse\"\n", b, sizeof(b), &why) == NULL);
	CHECK(why == NULL);
	CHECK(imgsrc_cargo("[source.crates-io]\nreplace-with = \"g\"\n[source.g]\n"
			   "registry = \"https://git.example/index\"\n", b, sizeof(b), &why) == NULL);
	CHECK_CONTAINS(why, "git index");
	CHECK(imgsrc_cargo("[source.crates-io]\nreplace-with = \"v\"\n[source.v]\ndirectory = \"vendor\"\n", b,
			   sizeof(b), &why) == NULL);
	CHECK_CONTAINS(why, "local directory");
	CHECK(imgsrc_cargo("[source.crates-io]\nreplace-with = \"a\"\n[source.a]\nreplace-with = \"a\"\n", b,
			   sizeof(b), &why) == NULL);
	CHECK(imgsrc_cargo("[source.crates-io]\nreplace-with = \"a\"\n[source.a]\nregistry = "
			   "\"sparse+https://a b/\"\n", b, sizeof(b), &why) == NULL);
	CHECK(imgsrc_cargo("", b, sizeof(b), &why) == NULL);
}

static void test_maven(void)
{
	char b[256];
	const char *x;

	x = "<settings xmlns=\"http://maven.apache.org/SETTINGS/1.0.0\"><mirrors>"
	    "<mirror><mirrorOf>*,!central</mirrorOf><url>https://no.example/</url></mirror>"
	    "<mirror><mirrorOf> external:* </mirrorOf><url>\n https://m.example/m2/ </url></mirror>"
	    "</mirrors></settings>";
	CHECK_STR(imgsrc_maven_settings(x, strlen(x), b, sizeof(b)), "https://m.example/m2/");
	x = "<settings><mirrors><mirror><mirrorOf>other,central</mirrorOf><url>https://c.example/</url></mirror>"
	    "</mirrors></settings>";
	CHECK_STR(imgsrc_maven_settings(x, strlen(x), b, sizeof(b)), "https://c.example/");
	x = "<settings><mirrors><!-- <mirror><mirrorOf>*</mirrorOf><url>https://x.example/</url></mirror> -->"
	    "</mirrors></settings>";
	CHECK(imgsrc_maven_settings(x, strlen(x), b, sizeof(b)) == NULL);
	x = "<settings><mirrors><mirror><mirrorOf>snapshots</mirrorOf><url>https://s.example/</url></mirror>"
	    "</mirrors></settings>";
	CHECK(imgsrc_maven_settings(x, strlen(x), b, sizeof(b)) == NULL);
	x = "<!DOCTYPE s [<!ENTITY e \"https://e.example/\">]><settings><mirrors><mirror><mirrorOf>*</mirrorOf>"
	    "<url>&e;</url></mirror></mirrors></settings>";
	CHECK(imgsrc_maven_settings(x, strlen(x), b, sizeof(b)) == NULL);
	x = "<settings><mirrors><mirror><mirrorOf>*</mirrorOf><url>file:///repo</url></mirror></mirrors></settings>";
	CHECK(imgsrc_maven_settings(x, strlen(x), b, sizeof(b)) == NULL);
	CHECK(imgsrc_maven_settings("<settings", 9, b, sizeof(b)) == NULL);

	x = "<project><modelVersion>4.0.0</modelVersion><repositories><repository><id>other</id>"
	    "<url>https://o.example/</url></repository><repository><id>central</id><name>C</name>"
	    "<url>https://central.example/maven2</url></repository></repositories></project>";
	CHECK_STR(imgsrc_maven_superpom(x, strlen(x), b, sizeof(b)), "https://central.example/maven2");
	x = "<project><repositories/></project>";
	CHECK(imgsrc_maven_superpom(x, strlen(x), b, sizeof(b)) == NULL);
}

static void test_lines(void)
{
	struct imgsrc s;
	imgsrc_parse("npm https://n.example/\ngo-proxy https://g.example/,direct\ngo-sumdb sumdb.fixture\n"
		     "go-key " KEY "\ncargo-file /root/.cargo/config.toml\ncargo| [source.crates-io]\n"
		     "cargo| replace-with = \"m\"\ncargo| [source.m]\ncargo| registry = \"sparse+https://c.example/\"\n"
		     "cargo-file /usr/local/cargo/config.toml\ncargo| [source.crates-io]\ncargo| replace-with = \"n\"\n"
		     "cargo| [source.n]\ncargo| registry = \"sparse+https://second.example/\"\n"
		     "maven-file /root/.m2/settings.xml\nmaven| <settings><mirrors><mirror>\n"
		     "maven| <mirrorOf>central</mirrorOf><url>https://m.example/</url></mirror></mirrors></settings>\n"
		     "maven-jar /usr/share/java/maven-model-builder.jar\n", &s);
	CHECK_STR(s.go_proxy, "https://g.example/");
	CHECK_STR(s.go_sumdb, KEY " https://sumdb.fixture");
	CHECK_STR(s.cargo_index, "https://c.example/");
	CHECK_STR(s.maven_repo, "https://m.example/");
	CHECK_STR(s.maven_jar, "/usr/share/java/maven-model-builder.jar");
	imgsrc_free(&s);
	imgsrc_parse("npm https://n.example/\n", &s);
	CHECK_STR(s.go_proxy, "");
	CHECK_STR(s.go_sumdb, "");
	CHECK_STR(s.cargo_index, "");
	CHECK_STR(s.maven_repo, "");
	imgsrc_free(&s);
	imgsrc_parse(NULL, &s);
	CHECK_STR(s.go_sumdb, "");
	imgsrc_free(&s);
}

int main(void)
{
	test_go();
	test_cargo();
	test_maven();
	test_lines();
	return unit_done("test_imgsrc");
}
