/* test_deb_index.c - the gateway's Debian side: request paths normalised
 * and sorted into kinds, Packages indexes parsed (stanzas without a digest
 * left out), plain and compressed, into the tables the cache keeps
 * (debidx.h: built, searched, and refused when torn, damaged or of another
 * Packages file), and the lookups apt's requests make. */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "base/util.h"
#include "pkg/deb_index.h"
#include "pkg/debidx.h"
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
	CHECK(deb_classify("h/debian/dists/bookworm/main/binary-amd64/by-hash/SHA256/abc", hex, &pk) == DEB_OTHER);
	CHECK(deb_classify("h/debian/pool/main/s/sl/sl_5.dsc", hex, &pk) == DEB_OTHER);  /* as a Sources index lists */
	CHECK(deb_classify("h/debian/dists/bookworm/main/source/Sources.xz", hex, &pk) == DEB_PACKAGES);
	CHECK(deb_classify("h/repo/Sources", hex, &pk) == DEB_PACKAGES);
	CHECK(deb_classify("h/debian/dists/bookworm/main/source/by-hash/SHA256/" SHA_A, hex, &pk) == DEB_BYHASH);
	CHECK(pk == 1);
	CHECK(deb_classify("h/debian/dists/bookworm/main/xsource/by-hash/SHA256/" SHA_A, hex, &pk) == DEB_BYHASH);
	CHECK(pk == 0);
	CHECK(deb_classify("h/etc/passwd", hex, &pk) == DEB_OTHER);
	/* relayed unverified: apt's own index files alone, which it checks
	 * against the signed Release; a "/dists/" segment is not enough */
	static const char *const index[] = {
		"h/debian/dists/bookworm/Release", "h/debian/dists/bookworm/Release.gpg",
		"h/debian/dists/bookworm/main/binary-amd64/Release", "h/debian/dists/bookworm/main/source/Sources.diff/Index",
		"h/debian/dists/bookworm/main/i18n/Translation-pt_BR.bz2", "h/debian/dists/bookworm/main/Contents-amd64.gz",
		"h/debian/dists/bookworm/main/Contents-udeb-amd64", "h/debian/dists/bookworm/main/binary-amd64/Packages.diff/Index",
		"h/debian/dists/bookworm/main/binary-amd64/Packages.diff/T-2026-01-01-0000.00-F-2026-01-01-0000.00.gz",
		"h/repo/InRelease",
	};
	for (size_t i = 0; i < ARRAY_SIZE(index); i++) {
		if (deb_classify(index[i], hex, &pk) != DEB_INDEX)
			fprintf(stderr, "not an index: %s\n", index[i]);
		CHECK(deb_classify(index[i], hex, &pk) == DEB_INDEX);
	}
	CHECK(deb_classify("h/repo/Packages.lzma", hex, &pk) == DEB_PACKAGES);
	static const char *const other[] = {
		"h/@anyone/dists/-/dists-1.0.0.tgz", "h/debian/dists/bookworm/main/evil.whl",
		"h/debian/dists/bookworm/main/dep11/Components-amd64.yml.gz", "h/debian/dists/x/Packages.tgz",
		"h/debian/dists/x/Translation-en.tar", "h/debian/dists/x/Translation-", "h/debian/dists/x/Contents-a.b",
		"h/debian/dists/x/Packages.diff/evil.tgz", "h/debian/dists/x/evil.diff/Index", "h/x/Release.tgz",
		"h/debian/dists/bookworm/main/binary-amd64/Sources.diff.gz", "Index",
	};
	for (size_t i = 0; i < ARRAY_SIZE(other); i++) {
		if (deb_classify(other[i], hex, &pk) != DEB_OTHER)
			fprintf(stderr, "served: %s\n", other[i]);
		CHECK(deb_classify(other[i], hex, &pk) == DEB_OTHER);
	}
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

static const unsigned char src_a[32] = { 1, 2, 3 }, src_b[32] = { 9 };

static void hex_of(const unsigned char d[32], char hex[65])
{
	for (int i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

/* A table built, checked and searched. */
static char *table(const char *text, size_t len, size_t *tlen, size_t *entries)
{
	char *t = NULL;
	struct sbx_err err;

	CHECK(debidx_build(text, len, src_a, &t, tlen, entries, &err) == 0);
	CHECK(t && debidx_check(t, *tlen, src_a, &err) == 0);
	return t;
}

/* A Sources index: each file of a stanza's Checksums-Sha256, below its
 * Directory, with the source package's name and version; lines that are
 * not exactly "SHA256 SIZE NAME", names with a '/', a Directory that
 * climbs, two Checksums-Sha256 in one stanza: left out. */
static const char sources[] =
	"Package: hello\n"
	"Binary: hello\n"
	"Version: 2.10-3\n"
	"Directory: pool/main/h/hello\n"
	"Files:\n"
	" d41d8cd98f00b204e9800998ecf8427e 1 hello_2.10-3.md5only\n"
	"Checksums-Sha256:\n"
	" " SHA_A " 1847 hello_2.10-3.dsc\n"
	" " SHA_B " 725946 hello_2.10.orig.tar.gz\n"
	" " SHA_A " 12 ../escape.tar.gz\n"
	" " SHA_A " 12 sub/dir.tar.gz\n"
	" " SHA_A " twelve bad-size.tar.gz\n"
	" abcd 12 short-sum.tar.gz\n"
	" " SHA_A " 12 three words.tar.gz\n"
	"Standards-Version: 4.6.0\n"
	" " SHA_A " 12 not-in-the-field.tar.gz\n"
	"\n"
	"Package: climb\n"
	"Version: 1\n"
	"Directory: pool/../../etc\n"
	"Checksums-Sha256:\n"
	" " SHA_A " 1 climb_1.dsc\n"
	"\n"
	"Package: twice\n"
	"Version: 1\n"
	"Directory: pool/t\n"
	"Checksums-Sha256:\n"
	" " SHA_A " 1 twice_1.dsc\n"
	"Checksums-sha256:\n"
	" " SHA_B " 1 twice_1.dsc\n"
	"\n"
	"Package: flat\n"
	"Version: 1:0.1\n"
	"Directory: .\n"
	"Checksums-Sha256:\n"
	" " SHA_B " 5 flat_0.1.dsc\n";

static void test_sources(void)
{
	struct debidx_entry e;
	size_t len, n;
	char hex[65];
	char *t = table(sources, sizeof(sources) - 1, &len, &n);

	CHECK(n == 3);
	CHECK(debidx_find(t, len, "pool/main/h/hello/hello_2.10-3.dsc", &e) == 1);
	CHECK_STR(e.package, "hello");
	CHECK_STR(e.version, "2.10-3");
	CHECK(e.size == 1847);
	hex_of(e.sha256, hex);
	CHECK_STR(hex, SHA_A);
	CHECK(debidx_find(t, len, "pool/main/h/hello/hello_2.10.orig.tar.gz", &e) == 1 && e.size == 725946);
	hex_of(e.sha256, hex);
	CHECK_STR(hex, SHA_B);
	CHECK(debidx_find(t, len, "pool/main/h/escape.tar.gz", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/h/hello/sub/dir.tar.gz", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/h/hello/bad-size.tar.gz", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/h/hello/short-sum.tar.gz", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/h/hello/three", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/h/hello/not-in-the-field.tar.gz", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/h/hello/hello_2.10-3.md5only", &e) == 0);
	CHECK(debidx_find(t, len, "etc/climb_1.dsc", &e) == 0);
	CHECK(debidx_find(t, len, "pool/t/twice_1.dsc", &e) == 0);
	CHECK(debidx_find(t, len, "flat_0.1.dsc", &e) == 1 && strcmp(e.version, "1:0.1") == 0);
	free(t);
}

static void test_parse(void)
{
	struct debidx_entry e;
	struct sbx_err err;
	size_t len, n;
	char hex[65];
	char *t = table(packages, sizeof(packages) - 1, &len, &n);

	CHECK(n == 2 && debidx_count(t) == 2);
	CHECK(debidx_find(t, len, "pool/main/s/sl/sl_5.02-1+b1_amd64.deb", &e) == 1);
	CHECK_STR(e.package, "sl");
	CHECK_STR(e.version, "5.02-1+b1");
	hex_of(e.sha256, hex);
	CHECK_STR(hex, SHA_A);
	CHECK(e.size == 12345);
	CHECK(debidx_find(t, len, "pool/evil.deb", &e) == 0);
	CHECK(debidx_find(t, len, "pool/main/n/nodigest/nodigest_1_all.deb", &e) == 0);
	CHECK(debidx_find(t, len, "pool/s.deb", &e) == 0);
	CHECK(debidx_find(t, len, "etc/x.deb", &e) == 0);
	CHECK(debidx_find(t, len, "lower_1.0_all.deb", &e) == 1 && strcmp(e.version, "2:1.0") == 0 && e.size == 0);
	CHECK(debidx_find(t, len, "", &e) == 0);
	free(t);

	/* of one path the later stanza wins; many entries, each found */
	static const char twice[] = "Package: lower\nVersion: 1\nFilename: l.deb\nSHA256: " SHA_A "\n\n"
				    "Package: lower\nVersion: 3\nFilename: ./l.deb\nSHA256: " SHA_B "\n";
	t = table(twice, sizeof(twice) - 1, &len, &n);
	CHECK(n == 1 && debidx_find(t, len, "l.deb", &e) == 1 && strcmp(e.version, "3") == 0);
	free(t);
	char *big = xmalloc(3000 * 200), path[64];
	size_t bl = 0;
	for (int i = 0; i < 3000; i++)
		bl += (size_t)snprintf(big + bl, 200, "Package: p%d\nVersion: 1\nFilename: pool/p%d.deb\nSHA256: %s\n\n",
				       i, i, SHA_B);
	t = table(big, bl, &len, &n);
	CHECK(n == 3000);
	int found = 0;
	for (int i = 0; i < 3000; i++) {
		char name[16];
		snprintf(path, sizeof(path), "pool/p%d.deb", i);
		snprintf(name, sizeof(name), "p%d", i);
		found += debidx_find(t, len, path, &e) == 1 && strcmp(e.package, name) == 0;
	}
	CHECK(found == 3000);
	CHECK(debidx_find(t, len, "pool/p3000.deb", &e) == 0);
	free(big);
	free(t);
	static const char upper[] = "Package: up\nVersion: 1\nFilename: up.deb\nSHA256: E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855\n";
	t = table(upper, sizeof(upper) - 1, &len, &n);
	CHECK(debidx_find(t, len, "up.deb", &e) == 1);
	hex_of(e.sha256, hex);
	CHECK_STR(hex, SHA_B);
	free(t);
	t = table("", 0, &len, &n);  /* an empty index: an empty table */
	CHECK(n == 0 && debidx_find(t, len, "up.deb", &e) == 0);
	free(t);
	CHECK(debidx_build("<html>not found</html>\n", 23, src_a, &t, &len, &n, &err) < 0);
	CHECK_CONTAINS(err.msg, "neither a Packages nor a Sources index");
	CHECK(debidx_build("a\0b", 3, src_a, &t, &len, &n, &err) < 0);
}

/* A table is trusted only whole, undamaged and of its own Packages file. */
static void test_check(void)
{
	struct sbx_err err;
	size_t len, n;
	char *t = table(packages, sizeof(packages) - 1, &len, &n);

	CHECK(debidx_check(t, len, src_b, &err) < 0);
	CHECK_CONTAINS(err.msg, "another Packages file");
	CHECK(debidx_check(t, len - 1, src_a, &err) < 0);  /* torn */
	CHECK_CONTAINS(err.msg, "torn");
	CHECK(debidx_check(t, 40, src_a, &err) < 0);
	CHECK(debidx_check(t, 0, src_a, &err) < 0);
	/* any byte changed, in the head or the body, is caught */
	size_t bad = 0;
	for (size_t i = 0; i < len; i++) {
		t[i] ^= 0x20;
		bad += debidx_check(t, len, src_a, &err) < 0;
		t[i] ^= 0x20;
	}
	CHECK(bad == len);
	CHECK(debidx_check(t, len, src_a, &err) == 0);
	/* the digest of one entry changed: the checksum says so */
	char *p = memmem(t, len, "\xe3\xb0\xc4\x42", 4);
	CHECK(p != NULL);
	if (p) {
		p[0] ^= 1;
		CHECK(debidx_check(t, len, src_a, &err) < 0);
		CHECK_CONTAINS(err.msg, "damaged");
	}
	char *longer = xmalloc(len + 8);
	memcpy(longer, t, len);
	memset(longer + len, 0, 8);
	CHECK(debidx_check(longer, len + 8, src_a, &err) < 0);
	free(longer);
	free(t);
}

/* A stanza of the index of test_date: NAME_VERSION_all.deb with sha256 SHA. */
static void stanza(char *buf, size_t size, const char *name, const char *version, const char *sha)
{
	snprintf(buf + strlen(buf), size - strlen(buf), "Package: %s\nVersion: %s\nFilename: pool/%s_%s_all.deb\n"
		 "SHA256: %s\n\n", name, version, name, version, sha);
}

static int64_t seen_of(const char *t, size_t len, const char *path)
{
	struct debidx_entry e;
	return debidx_find(t, len, path, &e) == 1 ? e.seen : -1;
}

/* The time the gateway first saw each file: carried from the last table
 * of the same index to the next, whatever else changed in the index; a
 * version (or other bytes under the same path) not in it is seen now;
 * the table's checksum is made again (it passes its check). */
static void test_date(void)
{
	char v1[1024] = "", v2[1024] = "";
	struct sbx_err err;
	size_t l1, l2, n;
	const int64_t t0 = 1700000000, t1 = t0 + 86400, t2 = t1 + 86400;

	stanza(v1, sizeof(v1), "a", "1", SHA_A);
	stanza(v1, sizeof(v1), "b", "1", SHA_A);
	stanza(v1, sizeof(v1), "c", "1", SHA_A);
	char *old = table(v1, strlen(v1), &l1, &n);
	CHECK(seen_of(old, l1, "pool/a_1_all.deb") == 0);  /* as built: not dated */
	CHECK(debidx_date(old, l1, NULL, 0, t0) == 0);
	CHECK(debidx_check(old, l1, src_a, &err) == 0);
	CHECK(seen_of(old, l1, "pool/a_1_all.deb") == t0 && seen_of(old, l1, "pool/c_1_all.deb") == t0);

	/* the index refreshed: a kept, b's version 2 beside 1 gone, c's bytes
	 * changed under the same name, d new */
	stanza(v2, sizeof(v2), "d", "1", SHA_A);
	stanza(v2, sizeof(v2), "a", "1", SHA_A);
	stanza(v2, sizeof(v2), "b", "2", SHA_A);
	stanza(v2, sizeof(v2), "c", "1", SHA_B);
	char *cur = table(v2, strlen(v2), &l2, &n);
	CHECK(debidx_date(cur, l2, old, l1, t1) == 1);
	CHECK(debidx_check(cur, l2, src_a, &err) == 0);
	CHECK(seen_of(cur, l2, "pool/a_1_all.deb") == t0);
	CHECK(seen_of(cur, l2, "pool/b_2_all.deb") == t1);
	CHECK(seen_of(cur, l2, "pool/c_1_all.deb") == t1);
	CHECK(seen_of(cur, l2, "pool/d_1_all.deb") == t1);
	CHECK(seen_of(cur, l2, "pool/b_1_all.deb") == -1);

	/* dated again by another table (the system cache's): the earlier wins,
	 * a later one changes nothing, and a table never dates anything later */
	CHECK(debidx_date(cur, l2, cur, l2, t2) == 0);
	CHECK(seen_of(cur, l2, "pool/a_1_all.deb") == t0 && seen_of(cur, l2, "pool/d_1_all.deb") == t1);
	CHECK(debidx_date(old, l1, cur, l2, t0 - 10) == 0);  /* a clock set back: now, the earliest */
	CHECK(seen_of(old, l1, "pool/a_1_all.deb") == t0 - 10);
	CHECK(debidx_check(old, l1, src_a, &err) == 0);

	/* a prev whose strings lie past its end (forged, with its checksum
	 * made to match): nothing carried from it, every entry still dated */
	free(cur);
	cur = table(v2, strlen(v2), &l2, &n);
	memset(old + 88, 0xff, 4);  /* the first record's path */
	CHECK(debidx_date(cur, l2, old, l1, t1) == 0);
	CHECK(seen_of(cur, l2, "pool/a_1_all.deb") == t1 && seen_of(cur, l2, "pool/d_1_all.deb") == t1);
	free(old);
	free(cur);
}

/* printf 'Package: z\n' | gzip -9n | xxd -i */
static const unsigned char gz[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x0b, 0x48,
	0x4c, 0xce, 0x4e, 0x4c, 0x4f, 0xb5, 0x52, 0xa8, 0xe2, 0x02, 0x00, 0xc3, 0xa4, 0x4f, 0x3e, 0x0b, 0x00, 0x00, 0x00 };

/* deb_unpack into a memory file, read back whole (NUL-terminated). */
static int unpacked(const void *p, size_t n, size_t max, char **out, size_t *len, struct sbx_err *err)
{
	int fd = memfd_create("unpacked", MFD_CLOEXEC);
	int r = fd < 0 ? -1 : deb_unpack(p, n, max, fd, len, err);

	*out = NULL;
	if (r == 0) {
		*out = xmalloc(*len + 1);
		if (pread(fd, *out, *len, 0) != (ssize_t)*len)
			r = -1;
		(*out)[*len] = '\0';
	}
	if (fd >= 0)
		close(fd);
	return r;
}

static void test_unpack(void)
{
	char *out = NULL;
	size_t len = 0;
	struct sbx_err err;

	CHECK(unpacked(gz, sizeof(gz), 1 << 20, &out, &len, &err) == 0);
	CHECK(out && len == 11 && memcmp(out, "Package: z\n", 11) == 0);
	free(out);
	CHECK(unpacked("Package: y\n", 11, 1 << 20, &out, &len, &err) == 0);
	CHECK(out && len == 11 && memcmp(out, "Package: y\n", 11) == 0);
	free(out);
	CHECK(unpacked("Package: y\n", 11, 4, &out, &len, &err) < 0);
	CHECK_CONTAINS(err.msg, "more than");
	CHECK(unpacked("", 0, 4, &out, &len, &err) == 0 && len == 0);
	free(out);
}

int main(void)
{
	test_norm();
	test_classify();
	test_root();
	test_sources();
	test_parse();
	test_check();
	test_date();
	test_unpack();
	return unit_done("test_deb_index");
}
