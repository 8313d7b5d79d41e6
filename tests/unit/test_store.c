/* test_store.c - unit tests of the image store's pure parts: apt source and
 * environment parsing, names, digests and their cache, meta.json, and the
 * extractor's refusals on tarballs written here with libarchive; the uid
 * root's images get (base/paths.c). */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/digest.h"
#include "store/imgmeta.h"
#include "store/import.h"
#include "store/store.h"
#include "base/paths.h"
#include "base/util.h"
#include "unit.h"

static void test_sources_list(void)
{
	struct sbx_list h = { 0 };
	imgmeta_parse_sources_list("# comment\n"
				   "deb http://mirror.example.org/debian bookworm main\n"
				   "deb-src [arch=amd64 signed-by=/k.gpg] https://user:pw@src.example.net:8080/d x y\n"
				   "  deb http://mirror.example.org/debian bookworm-updates main\n"
				   "deb file:/local bookworm main\n"
				   "deb http://[2001:db8::1]/debian bookworm main\n"
				   "debx http://not.example/ x\n", &h);
	CHECK(h.n == 3);
	CHECK_STR(h.v[0], "mirror.example.org");
	CHECK_STR(h.v[1], "src.example.net");
	CHECK_STR(h.v[2], "2001:db8::1");
	imgmeta_list_free(h.v);
}

static void test_deb822(void)
{
	struct sbx_list h = { 0 };
	imgmeta_parse_deb822("Types: deb\nURIs: http://a.example/debian\n"
			     " https://b.example/x\nSuites: bookworm\n\n"
			     "types: deb\nuris: http://c.example/ http://a.example/y\n"
			     "Components: main\n  https://not-uris.example/\n", &h);
	CHECK(h.n == 3);
	CHECK_STR(h.v[0], "a.example");
	CHECK_STR(h.v[1], "b.example");
	CHECK_STR(h.v[2], "c.example");
	imgmeta_list_free(h.v);
}

static void test_environment(void)
{
	struct sbx_list e = { 0 };
	imgmeta_parse_environment("PATH=\"/opt/venv/bin:/usr/bin\"\n# x=y\n\nLANG='C.UTF-8'\n"
				  "export A=1\nnot a line\n1BAD=x\n=x\n", &e);
	CHECK(e.n == 3);
	CHECK_STR(e.v[0], "PATH=/opt/venv/bin:/usr/bin");
	CHECK_STR(e.v[1], "LANG=C.UTF-8");
	CHECK_STR(e.v[2], "A=1");
	imgmeta_list_free(e.v);
}

static void test_names(void)
{
	struct sbx_err err = { 0 };
	CHECK(store_name_check("minimal", &err) == 0);
	CHECK(store_name_check("debian-12.2_x", &err) == 0);
	CHECK(store_name_check("", &err) < 0);
	CHECK(store_name_check(".hidden", &err) < 0);
	CHECK(store_name_check("a/b", &err) < 0);
	CHECK(store_name_check("..", &err) < 0);
	CHECK_CONTAINS(err.msg, "invalid image name");
}

static int memfile(const char *data, size_t len)
{
	int fd = memfd_create("t", MFD_CLOEXEC);
	if (fd >= 0 && (write_all(fd, data, len) < 0 || lseek(fd, 0, SEEK_SET) < 0)) {
		close(fd);
		return -1;
	}
	return fd;
}

static void test_digest(const char *dir)
{
	char hex[SBX_DIGEST_HEX + 1];
	struct sbx_err err = { 0 };
	bool hit = true;
	_cleanup_close_ int fd = memfile("abc", 3);
	_cleanup_close_ int cache = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(digest_fd(fd, hex, &err) == 0);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	CHECK(digest_valid(hex));
	CHECK(!digest_valid("BA78"));
	memset(hex, 0, sizeof(hex));
	CHECK(digest_cached(cache, fd, hex, &hit, &err) == 0 && !hit);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
	memset(hex, 0, sizeof(hex));
	CHECK(digest_cached(cache, fd, hex, &hit, &err) == 0 && hit);
	CHECK_STR(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

static void test_meta_roundtrip(const char *dir)
{
	char *env[] = { "PATH=/bin", NULL }, *hosts[] = { "h.example", NULL };
	struct sbx_meta m = { .name = "n", .digest = "d", .source = "/s\"q", .env = env,
			      .apt_hosts = hosts, .size = 1234, .created = 99 }, r;
	struct sbx_err err = { 0 };
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	CHECK(store_meta_write(fd, &m, &err) == 0);
	CHECK(store_meta_read(fd, &r, &err) == 0);
	CHECK_STR(r.name, "n");
	CHECK_STR(r.source, "/s\"q");
	CHECK_STR(r.env[0], "PATH=/bin");
	CHECK_STR(r.apt_hosts[0], "h.example");
	CHECK(r.apt_hosts[1] == NULL);
	CHECK_STR(r.npm_registry, "");
	CHECK(r.size == 1234 && r.created == 99);
	store_meta_free(&r);
}

struct ent { const char *name; int type; const char *link; int mode; };

/* A tar of the given entries, written with libarchive into a memfd. */
static int make_tar(const struct ent *ents, size_t n)
{
	int fd = memfd_create("tar", MFD_CLOEXEC);
	struct archive *a = archive_write_new();
	archive_write_set_format_pax_restricted(a);
	archive_write_open_fd(a, fd);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *e = archive_entry_new();
		archive_entry_set_pathname(e, ents[i].name);
		archive_entry_set_filetype(e, (unsigned)ents[i].type);
		archive_entry_set_perm(e, (mode_t)ents[i].mode);
		if (ents[i].type == AE_IFLNK)
			archive_entry_set_symlink(e, ents[i].link);
		else if (ents[i].link)
			archive_entry_set_hardlink(e, ents[i].link);
		if (ents[i].type == AE_IFREG && !ents[i].link)
			archive_entry_set_size(e, 2);
		archive_write_header(a, e);
		if (ents[i].type == AE_IFREG && !ents[i].link)
			archive_write_data(a, "x\n", 2);
		archive_entry_free(e);
	}
	archive_write_close(a);
	archive_write_free(a);
	lseek(fd, 0, SEEK_SET);
	return fd;
}

static int extract(const struct ent *ents, size_t n, const char *dir, struct sbx_err *err)
{
	struct sbx_import_stats st = { 0 };
	_cleanup_close_ int fd = make_tar(ents, n);
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return import_extract_fd(fd, dfd, &import_default_limits, &st, err);
}

static void test_extract(const char *base)
{
	_cleanup_free_ char *dir = xasprintf("%s/x", base);
	struct sbx_err err = { 0 };
	struct stat st;
	const struct ent good[] = {
		{ "./a", AE_IFDIR, NULL, 0755 }, { "./a/f", AE_IFREG, NULL, 04755 },
		{ "./a/h", AE_IFREG, "./a/f", 0644 }, { "./a/l", AE_IFLNK, "/etc/passwd", 0777 },
		{ "./a/dev", AE_IFCHR, NULL, 0600 },
	};
	const struct ent bad1[] = { { "a/../../x", AE_IFREG, NULL, 0644 } };
	const struct ent bad2[] = { { "l", AE_IFLNK, "/tmp", 0777 }, { "l/x", AE_IFREG, NULL, 0644 } };
	const struct ent bad3[] = { { "h", AE_IFREG, "/etc/passwd", 0644 } };

	mkdir(dir, 0700);
	CHECK(extract(good, ARRAY_SIZE(good), dir, &err) == 0);
	_cleanup_free_ char *f = xasprintf("%s/a/f", dir), *dev = xasprintf("%s/a/dev", dir);
	CHECK(stat(f, &st) == 0 && (st.st_mode & 07777) == 0755 && st.st_nlink == 2);
	CHECK(lstat(dev, &st) < 0);
	CHECK(extract(bad1, 1, dir, &err) < 0);
	CHECK_CONTAINS(err.msg, "'..'");
	CHECK(extract(bad2, 2, dir, &err) < 0);
	CHECK_CONTAINS(err.msg, "symlink");
	CHECK(extract(bad3, 1, dir, &err) < 0);
	CHECK_CONTAINS(err.msg, "absolute path");
	char cwd[4096];
	CHECK(getcwd(cwd, sizeof(cwd)) && strcmp(cwd, dir) != 0);
}

/* Root's images and sandboxes: uid 2147000000 where the maps hold it (the
 * host), else the highest id both maps hold (root of a rootless
 * container), never 0. */
static void test_root_host_id(void)
{
	const char *host = "         0          0 4294967295\n";
	const char *rootless = "         0       1017          1\n         1    1148576      65536\n";

	CHECK(paths_root_host_id_of(host, host) == SBX_ROOT_HOST_UID);
	CHECK(paths_root_host_id_of(rootless, rootless) == 65536);
	CHECK(paths_root_host_id_of(rootless, "0 1017 1\n1 1148576 1000\n") == 1000);
	CHECK(paths_root_host_id_of("0 1017 1\n", "0 1017 1\n") == SBX_ROOT_HOST_UID);
	CHECK(paths_root_host_id_of("", "") == SBX_ROOT_HOST_UID);
	CHECK(paths_root_host_id_of(host, rootless) == 65536);
}

int main(void)
{
	char tmpl[] = "/tmp/sbx-unit-store.XXXXXX";
	char *dir = mkdtemp(tmpl);
	struct sbx_err err = { 0 };

	test_sources_list();
	test_deb822();
	test_environment();
	test_names();
	test_root_host_id();
	if (dir) {
		test_digest(dir);
		test_meta_roundtrip(dir);
		test_extract(dir);
		_cleanup_close_ int fd = open("/tmp", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rm_rf_at(fd, dir + 5, &err);
	}
	CHECK(dir != NULL);
	return unit_done("test_store");
}
