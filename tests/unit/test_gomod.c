/* test_gomod.c - Go through the package gateway: module paths and versions
 * as requests escape them (accepted, refused, round-tripped), the proxy's
 * request paths, @v/list and .info documents from upstream, Go's h1 hash of
 * a real module zip and go.mod (made by golang.org/x/mod/zip and hashed by
 * x/mod/sumdb/dirhash: tests/helper/goproxy), a checksum database's lookup
 * answer and its signed note (signed by x/mod/sumdb with a key of its own),
 * each with the tampering it must catch. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/gomod.h"
#include "pkg/gosum.h"
#include "pkg/sri.h"
#include "unit.h"

/* mods.example/dep01 v1.0.0 as goproxy makes it (CreateFromDir) */
static const unsigned char dep01_zip[] = {
  0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x6d, 0x6f, 0x64, 0x73, 0x2e, 0x65,
  0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2f, 0x64, 0x65, 0x70, 0x30, 0x31,
  0x40, 0x76, 0x31, 0x2e, 0x30, 0x2e, 0x30, 0x2f, 0x67, 0x6f, 0x2e, 0x6d,
  0x6f, 0x64, 0xca, 0xcd, 0x4f, 0x29, 0xcd, 0x49, 0x55, 0xc8, 0xcd, 0x4f,
  0x29, 0xd6, 0x4b, 0xad, 0x48, 0xcc, 0x2d, 0xc8, 0x49, 0xd5, 0x4f, 0x49,
  0x2d, 0x30, 0x30, 0xe4, 0xe2, 0x4a, 0xcf, 0x57, 0x30, 0xd4, 0x33, 0xb4,
  0xe4, 0x02, 0x04, 0x00, 0x00, 0xff, 0xff, 0x50, 0x4b, 0x07, 0x08, 0x9e,
  0xc8, 0x8a, 0x74, 0x29, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x50,
  0x4b, 0x03, 0x04, 0x14, 0x00, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x20, 0x00, 0x00, 0x00, 0x6d, 0x6f, 0x64, 0x73, 0x2e, 0x65, 0x78,
  0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2f, 0x64, 0x65, 0x70, 0x30, 0x31, 0x40,
  0x76, 0x31, 0x2e, 0x30, 0x2e, 0x30, 0x2f, 0x6c, 0x69, 0x62, 0x2e, 0x67,
  0x6f, 0x2a, 0x48, 0x4c, 0xce, 0x4e, 0x4c, 0x4f, 0x55, 0x48, 0x49, 0x2d,
  0x30, 0x30, 0xe4, 0xe2, 0xd2, 0xd7, 0x57, 0x08, 0x4b, 0x2d, 0x2a, 0xce,
  0xcc, 0xcf, 0x53, 0xc8, 0x2c, 0x56, 0x28, 0xc9, 0xc8, 0x2c, 0x56, 0xc8,
  0xcd, 0x4f, 0x29, 0xcd, 0x49, 0x55, 0x2f, 0x56, 0x28, 0x83, 0x48, 0xe8,
  0x71, 0x25, 0xe7, 0xe7, 0x15, 0x97, 0xc0, 0xd5, 0xd9, 0x2a, 0x28, 0x95,
  0x19, 0xea, 0x19, 0xe8, 0x19, 0x28, 0x71, 0x01, 0x02, 0x00, 0x00, 0xff,
  0xff, 0x50, 0x4b, 0x07, 0x08, 0x4a, 0xaf, 0x34, 0x14, 0x48, 0x00, 0x00,
  0x00, 0x4d, 0x00, 0x00, 0x00, 0x50, 0x4b, 0x01, 0x02, 0x14, 0x00, 0x14,
  0x00, 0x08, 0x00, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x9e, 0xc8, 0x8a,
  0x74, 0x29, 0x00, 0x00, 0x00, 0x23, 0x00, 0x00, 0x00, 0x20, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x6d, 0x6f, 0x64, 0x73, 0x2e, 0x65, 0x78, 0x61, 0x6d,
  0x70, 0x6c, 0x65, 0x2f, 0x64, 0x65, 0x70, 0x30, 0x31, 0x40, 0x76, 0x31,
  0x2e, 0x30, 0x2e, 0x30, 0x2f, 0x67, 0x6f, 0x2e, 0x6d, 0x6f, 0x64, 0x50,
  0x4b, 0x01, 0x02, 0x14, 0x00, 0x14, 0x00, 0x08, 0x00, 0x08, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x4a, 0xaf, 0x34, 0x14, 0x48, 0x00, 0x00, 0x00, 0x4d,
  0x00, 0x00, 0x00, 0x20, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  0x00, 0x00, 0x00, 0x00, 0x00, 0x77, 0x00, 0x00, 0x00, 0x6d, 0x6f, 0x64,
  0x73, 0x2e, 0x65, 0x78, 0x61, 0x6d, 0x70, 0x6c, 0x65, 0x2f, 0x64, 0x65,
  0x70, 0x30, 0x31, 0x40, 0x76, 0x31, 0x2e, 0x30, 0x2e, 0x30, 0x2f, 0x6c,
  0x69, 0x62, 0x2e, 0x67, 0x6f, 0x50, 0x4b, 0x05, 0x06, 0x00, 0x00, 0x00,
  0x00, 0x02, 0x00, 0x02, 0x00, 0x9c, 0x00, 0x00, 0x00, 0x0d, 0x01, 0x00,
  0x00, 0x00, 0x00
};
static const char dep01_mod[] = "module mods.example/dep01\n\ngo 1.19\n";
#define DEP01_H1 "h1:Z0u3GTf81Zt3kjPcR/kwObGU/eci2v1+xa4HN8UtFsU="
#define DEP01_MOD_H1 "h1:ogonvgV8pLypYSS63by69TJj/j8SJAmC691WY6tV9kw="
#define VKEY "sumdb.fixture+0f3157c6+AScoGsRYqQdhX9GSt2nCMvdUggw1CbGEzdWatHY7qvnw"
/* its lookup answer from x/mod/sumdb.NewServer */
static const char lookup[] =
	"0\n"
	"mods.example/dep01 v1.0.0 h1:Z0u3GTf81Zt3kjPcR/kwObGU/eci2v1+xa4HN8UtFsU=\n"
	"mods.example/dep01 v1.0.0/go.mod h1:ogonvgV8pLypYSS63by69TJj/j8SJAmC691WY6tV9kw=\n"
	"\n"
	"go.sum database tree\n"
	"1\n"
	"bUD0CXUHbwC7GyyLaxPhbryYD0/NMYIrtWDTwv/6c0I=\n"
	"\n"
	"— sumdb.fixture DzFXxueAjlDHquaCC6YadPRWMaDldF+AtF0j+6yObMWCuzwiZ9J7iJ3FihY6cEauca+LIdoU9U3eSmW/oOTOGxuVSAo=\n"
;

static void test_paths(void)
{
	static const struct { const char *in, *out; } t[] = {
		{ "golang.org/x/mod", "golang.org/x/mod" },
		{ "github.com/!azure/azure-sdk", "github.com/Azure/azure-sdk" },
		{ "mods.example/!caps", "mods.example/Caps" },
		{ "gopkg.in/yaml.v3", "gopkg.in/yaml.v3" },
		{ "a.b/c~d_e-f.g", "a.b/c~d_e-f.g" },
		{ "", NULL }, { "nodot/x", NULL }, { "Upper.com/x", NULL }, { "a.b/Caps", NULL },
		{ "a.b/!", NULL }, { "a.b/!1", NULL }, { "a.b/!!a", NULL }, { "a.b//c", NULL }, { "a.b/c/", NULL },
		{ "/a.b", NULL }, { "a.b/..", NULL }, { "a.b/../c", NULL }, { "a.b/.c", NULL }, { "a.b/c.", NULL },
		{ "a.b/c d", NULL }, { "a.b/c%2fd", NULL }, { "a.b/c\x01", NULL }, { "a.b/c\xc3\xa9", NULL },
		{ "a.b/con", NULL }, { "a.b/NUL.txt", NULL }, { "a.b/x~1", NULL }, { "-a.b/c", NULL },
		{ "a.b/c:d", NULL }, { "a.b/c+d", NULL }, { "a.b/c\\d", NULL }, { "!a.b/c", NULL },
	};
	char out[GOMOD_PATH_MAX], back[GOMOD_PATH_MAX];
	const char *why;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = gomod_path(t[i].in, strlen(t[i].in), out, sizeof(out), &why);
		if (!t[i].out) {
			CHECK(r < 0);
			continue;
		}
		CHECK(r == 0);
		CHECK_STR(out, t[i].out);
		CHECK(gomod_escape(out, back, sizeof(back)) == 0);
		CHECK_STR(back, t[i].in);
	}
	char longp[GOMOD_PATH_MAX + 8];
	memset(longp, 'a', sizeof(longp));
	memcpy(longp, "a.b/", 4);
	CHECK(gomod_path(longp, sizeof(longp), out, sizeof(out), &why) < 0);
	/* a NUL inside (found by fuzz_gomod): it would cut the name short */
	CHECK(gomod_path("a.b/c\0d", 7, out, sizeof(out), &why) < 0);
	CHECK(gomod_version("v1.0.0\0x", 8, out, sizeof(out), &why) < 0);
}

static void test_versions(void)
{
	static const struct { const char *in, *out; } t[] = {
		{ "v1.0.0", "v1.0.0" }, { "v0.0.0-20200101000000-abcdefabcdef", "v0.0.0-20200101000000-abcdefabcdef" },
		{ "v2.3.4+incompatible", "v2.3.4+incompatible" }, { "v1.2.3-!r!c.1", "v1.2.3-RC.1" },
		{ "v1.2.3-rc.0", "v1.2.3-rc.0" }, { "v10.20.30", "v10.20.30" },
		{ "", NULL }, { "1.0.0", NULL }, { "v1.0", NULL }, { "v1", NULL }, { "v01.0.0", NULL },
		{ "v1.0.0-", NULL }, { "v1.0.0-01", NULL }, { "v1.0.0-a..b", NULL }, { "v1.0.0+build", NULL },
		{ "master", NULL }, { "v1.0.0/../x", NULL }, { "v1.0.0-RC", NULL }, { "v1.0.0 ", NULL },
		{ "latest", NULL }, { "v1.0.0-a_b", NULL }, { "v1.0.0\n", NULL },
	};
	char out[GOMOD_VER_MAX];

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = gomod_version(t[i].in, strlen(t[i].in), out, sizeof(out), NULL);
		CHECK(t[i].out ? r == 0 : r < 0);
		if (t[i].out && r == 0)
			CHECK_STR(out, t[i].out);
	}
}

static void test_requests(void)
{
	static const struct { const char *in; int kind; const char *path, *version; } t[] = {
		{ "mods.example/dep01/@v/list", GOMOD_LIST, "mods.example/dep01", "" },
		{ "mods.example/dep01/@latest", GOMOD_LATEST, "mods.example/dep01", "" },
		{ "mods.example/!caps/@v/v0.1.0.info", GOMOD_INFO, "mods.example/Caps", "v0.1.0" },
		{ "a.b/c/@v/v1.0.0.mod", GOMOD_MOD, "a.b/c", "v1.0.0" },
		{ "a.b/c/v2/@v/v2.0.0-!r!c1.zip", GOMOD_ZIP, "a.b/c/v2", "v2.0.0-RC1" },
		{ "a.b/c/@v/v1.0.0.tar", -1, NULL, NULL }, { "a.b/c/@v/master.info", -1, NULL, NULL },
		{ "a.b/c/@v/", -1, NULL, NULL }, { "a.b/c", -1, NULL, NULL }, { "a.b/c/@v/x/v1.0.0.zip", -1, NULL, NULL },
		{ "a.b/c/@v/list/", -1, NULL, NULL }, { "a.b/../c/@v/list", -1, NULL, NULL },
		{ "/@v/list", -1, NULL, NULL }, { "a.b/c/@latest/", -1, NULL, NULL }, { "a.b/c/@v/.zip", -1, NULL, NULL },
	};
	struct gomod_req r;
	const char *why;

	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int st = gomod_request(t[i].in, strlen(t[i].in), &r, &why);
		if (t[i].kind < 0) {
			CHECK(st < 0);
			continue;
		}
		CHECK(st == 0);
		CHECK((int)r.kind == t[i].kind);
		CHECK_STR(r.path, t[i].path);
		CHECK_STR(r.version, t[i].version);
	}
	CHECK(gomod_request("mods.example/!caps/@v/v0.1.0.info", 33, &r, NULL) == 0);
	CHECK_STR(r.esc, "mods.example/!caps");
	CHECK_STR(r.vesc, "v0.1.0");
}

static void test_list_info(void)
{
	static const char body[] = "v1.0.0\nv1.1.0\r\n\nmaster\nv1.2.3-RC.1\n../../x\nv2.0.0+incompatible\nv1";
	char (*v)[GOMOD_VER_MAX] = xcalloc(8, GOMOD_VER_MAX);
	size_t n, dropped;
	char out[GOMOD_VER_MAX];

	CHECK(gomod_list(body, strlen(body), v, 8, &n, &dropped) == 0);
	CHECK(n == 4 && dropped == 3);
	CHECK_STR(v[0], "v1.0.0");
	CHECK_STR(v[1], "v1.1.0");
	CHECK_STR(v[2], "v1.2.3-RC.1");
	CHECK_STR(v[3], "v2.0.0+incompatible");
	CHECK(gomod_list(body, strlen(body), v, 3, &n, &dropped) < 0);  /* past max: refused whole */
	CHECK(gomod_list("", 0, v, 8, &n, &dropped) == 0 && n == 0);
	free(v);

	static const char info[] = "{\"Version\":\"v1.2.3\",\"Time\":\"2099-01-01T00:00:00Z\"}";
	CHECK(gomod_info_version(info, strlen(info), out, sizeof(out)) == 0);
	CHECK_STR(out, "v1.2.3");
	static const char *const bad[] = { "", "[]", "{}", "{\"Version\":1}", "{\"Version\":\"master\"}",
					   "{\"Version\":\"v1.0.0\\u0000x\"}", "{\"Version\":\"v1.0.0\"", "null" };
	for (size_t i = 0; i < ARRAY_SIZE(bad); i++)
		CHECK(gomod_info_version(bad[i], strlen(bad[i]), out, sizeof(out)) < 0);
}

static int tmp_with(const void *p, size_t n)
{
	int fd = memfd_create("zip", MFD_CLOEXEC);
	CHECK(fd >= 0 && write(fd, p, n) == (ssize_t)n);
	return fd;
}

static void test_h1(void)
{
	unsigned char h[32];
	char s[64];
	const char *why;
	int fd = tmp_with(dep01_zip, sizeof(dep01_zip));

	CHECK(gosum_zip_h1(fd, h, &why) == 0);
	gosum_h1_string(h, s, sizeof(s));
	CHECK_STR(s, DEP01_H1);
	/* the artifact check on it, as the cache does on every serve */
	struct sri want;
	CHECK(sri_from_goh1(h, &want) == 0);
	CHECK(sri_check_fd(&want, fd));
	close(fd);

	gosum_mod_h1(dep01_mod, strlen(dep01_mod), h);
	gosum_h1_string(h, s, sizeof(s));
	CHECK_STR(s, DEP01_MOD_H1);

	/* one byte of the first file's (deflated) data changed: not the
	 * hash the database gives, whether it inflates or not */
	unsigned char *z = xmalloc(sizeof(dep01_zip));
	memcpy(z, dep01_zip, sizeof(dep01_zip));
	z[30 + strlen("mods.example/dep01@v1.0.0/go.mod") + 4] ^= 0x20;
	fd = tmp_with(z, sizeof(dep01_zip));
	CHECK(!sri_check_fd(&want, fd));
	close(fd);
	fd = tmp_with("not a zip", 9);
	CHECK(gosum_zip_h1(fd, h, &why) < 0);
	close(fd);
	fd = tmp_with(z, 100);  /* cut short */
	CHECK(gosum_zip_h1(fd, h, &why) < 0);
	close(fd);
	free(z);
}

static void test_lookup(void)
{
	unsigned char zip[32], mod[32];
	size_t note;
	const char *why;
	char s[64];

	CHECK(gosum_lookup(lookup, strlen(lookup), "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) == 0);
	gosum_h1_string(zip, s, sizeof(s));
	CHECK_STR(s, DEP01_H1);
	gosum_h1_string(mod, s, sizeof(s));
	CHECK_STR(s, DEP01_MOD_H1);
	CHECK(gosum_note_verify(lookup + note, strlen(lookup) - note, VKEY, &why) == 0);
	/* another module's or version's answer, or a bad line */
	CHECK(gosum_lookup(lookup, strlen(lookup), "mods.example/dep02", "v1.0.0", zip, mod, &note, &why) < 0);
	CHECK(gosum_lookup(lookup, strlen(lookup), "mods.example/dep01", "v1.0.1", zip, mod, &note, &why) < 0);
	CHECK(gosum_lookup(lookup, strlen(lookup), "mods.example/dep0", "v1.0.0", zip, mod, &note, &why) < 0);
	char *bad = xstrdup(lookup);
	*strstr(bad, "h1:Z0") = 'H';
	CHECK(gosum_lookup(bad, strlen(bad), "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) < 0);
	free(bad);
	CHECK(gosum_lookup("0\n", 2, "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) < 0);
	CHECK(gosum_lookup("x\n\n", 3, "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) < 0);
	/* only the zip's line */
	bad = xstrdup(lookup);
	char *l2 = strstr(bad, "mods.example/dep01 v1.0.0/go.mod");
	memmove(l2, strchr(l2, '\n') + 1, strlen(strchr(l2, '\n') + 1) + 1);
	CHECK(gosum_lookup(bad, strlen(bad), "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) < 0);
	free(bad);

	/* the note: a changed tree, another key, a broken signature */
	CHECK(gosum_lookup(lookup, strlen(lookup), "mods.example/dep01", "v1.0.0", zip, mod, &note, &why) == 0);
	char *n = xstrdup(lookup + note);
	n[strlen("go.sum database tree\n")] = '2';
	CHECK(gosum_note_verify(n, strlen(n), VKEY, &why) < 0);
	free(n);
	CHECK(gosum_note_verify(lookup + note, strlen(lookup) - note,
				"other.db+0f3157c6+AScoGsRYqQdhX9GSt2nCMvdUggw1CbGEzdWatHY7qvnw", &why) < 0);
	CHECK(gosum_note_verify(lookup + note, strlen(lookup) - note,
				"sumdb.fixture+0f3157c7+AScoGsRYqQdhX9GSt2nCMvdUggw1CbGEzdWatHY7qvnw", &why) < 0);
	n = xstrdup(lookup + note);
	char *sig = strstr(n, "DzFX");
	sig[10] = sig[10] == 'A' ? 'B' : 'A';
	CHECK(gosum_note_verify(n, strlen(n), VKEY, &why) < 0);
	free(n);
	CHECK(gosum_note_verify("x\n", 2, VKEY, &why) < 0);
	size_t nl;
	CHECK(gosum_vkey_check(VKEY, &nl, &why) == 0 && nl == strlen("sumdb.fixture"));
	CHECK(gosum_vkey_check("sumdb.fixture", &nl, &why) < 0);
	CHECK(gosum_vkey_check("a+b+c", &nl, &why) < 0);
}

int main(void)
{
	test_paths();
	test_versions();
	test_requests();
	test_list_info();
	test_h1();
	test_lookup();
	return unit_done("test_gomod");
}
