/* test_deb_index.c - the gateway's Debian side: request paths normalised
 * and sorted into kinds, Packages indexes parsed (stanzas without a digest
 * left out), plain and compressed, and the lookups apt's requests make. */
#include <stdlib.h>

#include "base/util.h"
#include "gateway/deb_index.h"
#include "unit.h"

#define SHA_A "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03"
#define SHA_B "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

static void test_norm(void)
{
	static const struct { const char *in, *out; } t[] = {
		{ "/debian/pool/main/s/sl/sl_5.02-1%2bb1_amd64.deb", "debian/pool/main/s/sl/sl_5.02-1+b1_amd64.deb" },
		{ "a//b/./c", "a/b/c" }, { "./x.deb", "x.deb" }, { "a/%7e/b", "a/~/b" },
		{ "a/../b", NULL }, { "a/%2e%2e/b", NULL }, { "..", NULL }, { "a/%00", NULL }, { "a/%zz", NULL },
		{ "a/%2", NULL }, { "a\nb", NULL }, { "", NULL }, { "/", NULL },
	};
	char out[DEB_PATH_MAX];
	for (size_t i = 0; i < ARRAY_SIZE(t); i++) {
		int r = deb_path_norm(t[i].in, strlen(t[i].in), out, sizeof(out));
		if (t[i].out) {
			CHECK(r == 0);
			CHECK_STR(out, t[i].out);
		} else {
			if (r == 0)
				fprintf(stderr, "accepted '%s' as '%s'\n", t[i].in, out);
			CHECK(r < 0);
		}
	}
}

static void test_classify(void)
{
	char hex[65];
	int pk;
	CHECK(deb_classify("h/debian/pool/main/s/sl/sl_5_amd64.deb", hex, &pk) == DEB_ARTIFACT);
	CHECK(deb_classify("h/debian/pool/main/d/d-i/x_1_amd64.udeb", hex, &pk) == DEB_ARTIFACT);
	CHECK(deb_classify("h/debian/dists/bookworm/InRelease", hex, &pk) == DEB_INDEX);
	CHECK(deb_classify("h/debian/dists/bookworm/main/i18n/Translation-en.xz", hex, &pk) == DEB_INDEX);
	CHECK(deb_classify("h/debian/dists/bookworm/main/binary-amd64/Packages.xz", hex, &pk) == DEB_PACKAGES);
	CHECK(deb_classify("h/repo/Packages", hex, &pk) == DEB_PACKAGES);
	CHECK(deb_classify("h/repo/Release", hex, &pk) == DEB_INDEX);
	CHECK(deb_classify("h/debian/dists/bookworm/main/binary-amd64/by-hash/SHA256/" SHA_A, hex, &pk) == DEB_BYHASH);
	CHECK(pk == 1);
	CHECK_STR(hex, SHA_A);
	CHECK(deb_classify("h/debian/dists/bookworm/main/i18n/by-hash/SHA256/" SHA_A, hex, &pk) == DEB_BYHASH);
	CHECK(pk == 0);
	CHECK(deb_classify("h/debian/dists/bookworm/main/binary-amd64/by-hash/SHA256/abc", hex, &pk) == DEB_INDEX);
	CHECK(deb_classify("h/debian/pool/main/s/sl/sl_5.dsc", hex, &pk) == DEB_OTHER);
	CHECK(deb_classify("h/etc/passwd", hex, &pk) == DEB_OTHER);
}

static void test_root(void)
{
	char root[DEB_PATH_MAX];
	deb_index_root("h/debian/dists/bookworm/main/binary-amd64/Packages.xz", root, sizeof(root));
	CHECK_STR(root, "h/debian");
	deb_index_root("h/debian/dists/bookworm/main/binary-amd64/by-hash/SHA256/" SHA_A, root, sizeof(root));
	CHECK_STR(root, "h/debian");
	deb_index_root("h:8080/repo/Packages", root, sizeof(root));
	CHECK_STR(root, "h:8080/repo");
}

static const char packages[] =
	"Package: sl\n"
	"Version: 5.02-1+b1\n"
	"Architecture: amd64\n"
	"Description: Steam Locomotive\n"
	" SL (Steam Locomotive) runs across your terminal.\n"
	" Filename: pool/evil.deb\n"
	"Filename: pool/main/s/sl/sl_5.02-1+b1_amd64.deb\n"
	"Size: 12345\n"
	"SHA256: " SHA_A "\n"
	"\n"
	"Package: nodigest\n"
	"Version: 1\n"
	"Filename: pool/main/n/nodigest/nodigest_1_all.deb\n"
	"MD5sum: d41d8cd98f00b204e9800998ecf8427e\n"
	"\n"
	"Package: badpath\n"
	"Version: 1\n"
	"Filename: pool/../../etc/x.deb\n"
	"SHA256: " SHA_A "\n"
	"\n"
	"Package: shortsum\n"
	"Version: 1\n"
	"Filename: pool/s.deb\n"
	"SHA256: abcd\n"
	"\r\n"
	"package: lower\n"
	"version: 2:1.0\n"
	"filename: ./lower_1.0_all.deb\n"
	"sha256: " SHA_B "\n";

static void test_parse(void)
{
	struct deb_index ix = { 0 };
	struct sbx_err err;
	const struct deb_entry *e;

	CHECK(deb_index_add(&ix, "h/debian", packages, sizeof(packages) - 1, &err) == 2);
	e = deb_index_find(&ix, "h/debian/pool/main/s/sl/sl_5.02-1+b1_amd64.deb");
	CHECK(e != NULL);
	if (e) {
		CHECK_STR(e->package, "sl");
		CHECK_STR(e->version, "5.02-1+b1");
		CHECK_STR(e->sha256, SHA_A);
		CHECK(e->size == 12345);
	}
	CHECK(deb_index_find(&ix, "h/debian/pool/evil.deb") == NULL);
	CHECK(deb_index_find(&ix, "h/debian/pool/main/n/nodigest/nodigest_1_all.deb") == NULL);
	CHECK(deb_index_find(&ix, "h/debian/pool/s.deb") == NULL);
	CHECK(deb_index_find(&ix, "h/etc/x.deb") == NULL);
	e = deb_index_find(&ix, "h/debian/lower_1.0_all.deb");
	CHECK(e && strcmp(e->version, "2:1.0") == 0 && e->size == 0);
	CHECK(deb_index_find(&ix, "other/debian/pool/main/s/sl/sl_5.02-1+b1_amd64.deb") == NULL);
	/* a newer index replaces an entry; many entries grow the table */
	static const char newer[] = "Package: lower\nVersion: 3\nFilename: lower_1.0_all.deb\nSHA256: " SHA_A "\n";
	CHECK(deb_index_add(&ix, "h/debian", newer, sizeof(newer) - 1, &err) == 1);
	e = deb_index_find(&ix, "h/debian/lower_1.0_all.deb");
	CHECK(e && strcmp(e->version, "3") == 0);
	for (int i = 0; i < 3000; i++) {
		char st[256];
		int n = snprintf(st, sizeof(st), "Package: p%d\nVersion: 1\nFilename: pool/p%d.deb\nSHA256: %s\n", i, i, SHA_B);
		CHECK(deb_index_add(&ix, "h/x", st, (size_t)n, &err) == 1);
	}
	CHECK(ix.n == 3002);  /* before "up" */
	e = deb_index_find(&ix, "h/x/pool/p2999.deb");
	CHECK(e && strcmp(e->package, "p2999") == 0);
	static const char upper[] = "Package: up\nVersion: 1\nFilename: up.deb\nSHA256: E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\n";
	CHECK(deb_index_add(&ix, "h/x", upper, sizeof(upper) - 1, &err) == 1);
	e = deb_index_find(&ix, "h/x/up.deb");
	CHECK(e && strcmp(e->sha256, SHA_B) == 0);
	CHECK(deb_index_add(&ix, "h/x", "<html>not found</html>\n", 23, &err) < 0);
	CHECK_CONTAINS(err.msg, "not a Packages index");
	CHECK(deb_index_add(&ix, "h/x", "a\0b", 3, &err) < 0);
	deb_index_free(&ix);
}

/* printf 'Package: z\n' | gzip -9n | xxd -i */
static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x0b, 0x48,
	0x4c, 0xce, 0x4e, 0x4c, 0x4f, 0xb5, 0x52, 0xa8, 0xe2, 0x02, 0x00, 0xc3, 0xa4, 0x4f, 0x3e, 0x0b, 0x00, 0x00, 0x00 };

static void test_unpack(void)
{
	char *out = NULL;
	size_t len = 0;
	struct sbx_err err;

	CHECK(deb_unpack(gz, sizeof(gz), 1 << 20, &out, &len, &err) == 0);
	CHECK(out && len == 11 && memcmp(out, "Package: z\n", 11) == 0);
	free(out);
	CHECK(deb_unpack("Package: y\n", 11, 1 << 20, &out, &len, &err) == 0);
	CHECK(out && len == 11 && memcmp(out, "Package: y\n", 11) == 0);
	free(out);
	CHECK(deb_unpack("Package: y\n", 11, 4, &out, &len, &err) < 0);
	CHECK_CONTAINS(err.msg, "more than");
	CHECK(deb_unpack("", 0, 4, &out, &len, &err) == 0 && len == 0);
	free(out);
}

int main(void)
{
	test_norm();
	test_classify();
	test_root();
	test_parse();
	test_unpack();
	return unit_done("test_deb_index");
}
