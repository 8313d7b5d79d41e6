/* test_cargoidx.c - Cargo's sparse registry as the gateway reads it
 * (pkg/cargoidx.c): crate names and their index paths, index lines as
 * tests/helper/cargoreg.py writes them from crates `cargo package` made
 * (cksum, yanked, pubtime, a line without one), an index file filtered
 * (lines refused, lines that do not parse or name another crate, the
 * bounds), a version found, config.json's dl and the download URL Cargo
 * builds from it; [packages] cargo as a profile gives it. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/config.h"
#include "base/profile.h"
#include "base/util.h"
#include "pkg/cargoidx.h"
#include "unit.h"

#define CK "e65d61774660d4d8ea553b80708710aaff675a0fb1c2908a8ea76840e06d34e9"
static const char caps_line[] =
	"{\"name\":\"Caps_Crate\",\"vers\":\"1.0.0\",\"deps\":[],\"cksum\":\"" CK "\",\"features\":{},"
	"\"yanked\":false,\"pubtime\":\"2026-08-21T18:04:23Z\"}";

static void test_names(void)
{
	char n[CARGOIDX_NAME_MAX + 1], p[CARGOIDX_PATH_MAX + 1];
	static const char *const bad[] = { "", "1abc", "-a", "a.b", "a/b", "a%2e", "..", "a b", "é" };

	CHECK(cargoidx_name("Caps_Crate", 10, n, sizeof(n)) == 0);
	CHECK_STR(n, "caps_crate");
	CHECK(cargoidx_name("_x", 2, n, sizeof(n)) == 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(cargoidx_name(bad[i], strlen(bad[i]), n, sizeof(n)) < 0);
	char long_name[70];
	memset(long_name, 'a', 65);
	CHECK(cargoidx_name(long_name, 65, n, sizeof(n)) < 0);
	CHECK(cargoidx_name(long_name, 64, n, sizeof(n)) == 0);
	static const char *const paths[][2] = { { "a", "1/a" }, { "ab", "2/ab" }, { "abc", "3/a/abc" },
						{ "serde", "se/rd/serde" }, { "caps_crate", "ca/ps/caps_crate" } };
	for (size_t i = 0; i < 5; i++) {
		cargoidx_path(paths[i][0], p, sizeof(p));
		CHECK_STR(p, paths[i][1]);
		CHECK(cargoidx_path_name(paths[i][1], strlen(paths[i][1]), n, sizeof(n)) == 0);
		CHECK_STR(n, paths[i][0]);
	}
	static const char *const badp[] = { "1/ab", "3/b/abc", "Ca/ps/caps_crate", "ca/ps/Caps_Crate", "se/rd/../serde",
					    "2/ab/", "/2/ab", "3/a/abc/x", "config.json", "se/rd/serde%00" };
	for (size_t i = 0; i < sizeof(badp) / sizeof(badp[0]); i++)
		CHECK(cargoidx_path_name(badp[i], strlen(badp[i]), n, sizeof(n)) < 0);
	CHECK(cargoidx_version("1.0.0-rc.1+build.5", 18));
	CHECK(!cargoidx_version("v1.0.0", 6) && !cargoidx_version("1.0/..", 6) && !cargoidx_version("", 0));
}

static void test_lines(void)
{
	struct cargoidx_line l;
	const char *why;

	CHECK(cargoidx_line(caps_line, strlen(caps_line), &l, &why) == 0);
	CHECK_STR(l.name, "Caps_Crate");
	CHECK_STR(l.vers, "1.0.0");
	CHECK_STR(l.cksum, CK);
	CHECK(!l.yanked && l.pubtime == 1787335463);
	static const char *const ok[] = {
		"{\"name\":\"a\",\"vers\":\"1.1.0\",\"cksum\":\"" CK "\",\"yanked\":true}",
		"{\"name\":\"a\",\"vers\":\"1.1.0\",\"cksum\":\"" CK "\",\"pubtime\":null}  ",
	};
	CHECK(cargoidx_line(ok[0], strlen(ok[0]), &l, &why) == 0 && l.yanked && l.pubtime == 0);
	CHECK(cargoidx_line(ok[1], strlen(ok[1]), &l, &why) == 0 && !l.yanked && l.pubtime == 0);
	static const char *const bad[][2] = {
		{ "[1]", "not a JSON object" },
		{ "{\"name\":\"a\",\"vers\":\"1.0.0\"}", "no cksum" },
		{ "{\"name\":\"a\",\"vers\":\"1.0.0\",\"cksum\":\"E65D\"}", "no cksum" },
		{ "{\"name\":\"a/b\",\"vers\":\"1.0.0\",\"cksum\":\"" CK "\"}", "no crate name" },
		{ "{\"name\":\"a\",\"vers\":\"../1\",\"cksum\":\"" CK "\"}", "no version" },
		{ "{\"name\":\"a\",\"vers\":\"1.0.0\",\"cksum\":\"" CK "\",\"yanked\":\"no\"}", "yanked" },
		{ "{\"name\":\"a\",\"vers\":\"1.0.0\",\"cksum\":\"" CK "\",\"pubtime\":\"yesterday\"}", "pubtime" },
		{ "{\"name\":\"a\",\"vers\":\"1.0.0\",\"cksum\":\"" CK "\",\"pubtime\":5}", "pubtime" },
		{ "{\"name\":\"a\",\"vers\":\"1.0.0\",\"cksum\":\"" CK "\"} {}", "not a JSON object" },
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(cargoidx_line(bad[i][0], strlen(bad[i][0]), &l, &why) < 0);
		CHECK_CONTAINS(why, bad[i][1]);
	}
}

static int keep_even(void *arg, const struct cargoidx_line *l)
{
	(*(int *)arg)++;
	return strcmp(l->vers, "1.1.0") == 0 ? -1 : 0;
}

static void test_filter_find(void)
{
	char *body = NULL;
	struct cargoidx_filtered f;
	struct cargoidx_line l;
	const char *why;
	int asked = 0;

	body = malloc(4096);
	snprintf(body, 4096, "%s\n{\"name\":\"caps_crate\",\"vers\":\"1.1.0\",\"cksum\":\"" CK "\"}\n"
		 "not json\n{\"name\":\"other\",\"vers\":\"2.0.0\",\"cksum\":\"" CK "\"}\n\n"
		 "{\"name\":\"CAPS_CRATE\",\"vers\":\"1.2.0\",\"cksum\":\"" CK "\"}", caps_line);
	CHECK(cargoidx_filter(body, strlen(body), "caps_crate", keep_even, &asked, &f, &why) == 0);
	CHECK(f.kept == 2 && f.dropped == 1 && f.bad == 2 && asked == 3);
	CHECK(strncmp(f.out, caps_line, strlen(caps_line)) == 0 && f.out[strlen(caps_line)] == '\n');
	CHECK_CONTAINS(f.out, "\"1.2.0\"");
	CHECK(!strstr(f.out, "1.1.0") && !strstr(f.out, "other") && f.out[f.len - 1] == '\n');
	free(f.out);
	CHECK(cargoidx_find(body, strlen(body), "caps_crate", "1.1.0", &l, &why) == 1 && strcmp(l.vers, "1.1.0") == 0);
	CHECK(cargoidx_find(body, strlen(body), "caps_crate", "2.0.0", &l, &why) == 0);
	CHECK(cargoidx_find(body, strlen(body), "caps_crate", "../x", &l, &why) == 0);
	free(body);
	/* the bounds: a line too long, too many lines */
	size_t big = CARGOIDX_LINE_MAX + 2;
	body = malloc(big);
	memset(body, ' ', big);
	CHECK(cargoidx_filter(body, big, "a", NULL, NULL, &f, &why) < 0);
	CHECK_CONTAINS(why, "too long");
	free(body);
	big = (CARGOIDX_LINES_MAX + 1) * 2;
	body = malloc(big);
	for (size_t i = 0; i < big; i += 2)
		body[i] = 'x', body[i + 1] = '\n';
	CHECK(cargoidx_find(body, big, "a", "1.0.0", &l, &why) < 0);
	CHECK_CONTAINS(why, "too many lines");
	free(body);
}

static void test_config(void)
{
	char dl[CARGOIDX_DL_MAX + 1], url[1024];
	const char *why;
	struct cargoidx_line l = { .name = "Caps_Crate", .vers = "1.0.0", .cksum = CK };
	static const char cfg[] = "{\"dl\":\"https://static.example/crates\",\"api\":\"https://x\"}";

	CHECK(cargoidx_config_dl(cfg, strlen(cfg), dl, sizeof(dl), &why) == 0);
	CHECK(cargoidx_dl_url(dl, &l, url, sizeof(url)) == 0);
	CHECK_STR(url, "https://static.example/crates/Caps_Crate/1.0.0/download");
	CHECK(cargoidx_dl_url("http://h/{prefix}/{lowerprefix}/{crate}-{version}.crate?s={sha256-checksum}", &l, url,
			      sizeof(url)) == 0);
	CHECK_STR(url, "http://h/Ca/ps/ca/ps/Caps_Crate-1.0.0.crate?s=" CK);
	static const char *const bad[] = { "{}", "{\"dl\":\"file:///etc\"}", "{\"dl\":\"http://h/a b\"}", "[]",
					   "{\"dl\":7}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(cargoidx_config_dl(bad[i], strlen(bad[i]), dl, sizeof(dl), &why) < 0);
	CHECK(cargoidx_dl_url("http://h/", &l, url, 20) < 0);
}

/* [packages] cargo = INDEX-URL [DL-URL], as a profile gives it */
static int load(const char *text, struct sbx_config *cfg)
{
	struct sbx_err err;
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	config_init(cfg);
	int r = profile_load_stream(cfg, f, "t.ini", &err);
	fclose(f);
	return r;
}

static void test_profile(void)
{
	struct sbx_config cfg;
	struct sbx_err err;

	/* Cargo: a sparse index, and where its downloads come from when elsewhere */
	static const struct { const char *ini, *msg; } cargos[] = {
		{ "cargo = https://index.example.org/", NULL },
		{ "cargo = https://index.example.org/ https://dl.example.org/crates", NULL },
		{ "cargo = sparse+https://index.example.org/", "t.ini:2: [packages] cargo: 'sparse+https" },
		{ "cargo = https://index.example.org/ http://dl.example.org/", "[packages] cargo:" },
		{ "cargo = https://i.example.org/ https://a.example.org/ https://b.example.org/", "more than two URLs" },
	};
	for (size_t i = 0; i < ARRAY_SIZE(cargos); i++) {
		char buf[512];
		snprintf(buf, sizeof(buf), "[packages]\n%s\n", cargos[i].ini);
		CHECK(load(buf, &cfg) == 0);
		int r = config_check(&cfg, &err);
		CHECK(cargos[i].msg ? r < 0 : r == 0);
		if (cargos[i].msg && r < 0)
			CHECK_CONTAINS(err.msg, cargos[i].msg);
		config_free(&cfg);
	}
	char idx[64];
	CHECK_STR(config_cargo_index("https://i/ https://d/", idx, sizeof(idx)), "https://i/");
	CHECK_STR(config_cargo_dl("https://i/ https://d/"), "https://d/");
	CHECK(config_cargo_dl("https://i/") == NULL);
}

int main(void)
{
	test_names();
	test_lines();
	test_filter_find();
	test_config();
	test_profile();
	return unit_done("test_cargoidx");
}
