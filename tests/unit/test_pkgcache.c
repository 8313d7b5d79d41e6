/* test_pkgcache.c - the package cache as a whole: artifacts listed with
 * their metadata, least recently used first; eviction by size, age and
 * all, with a digest's lock file unless held, and a dead process's
 * temporary file; index documents listed with their upstream, evicted
 * least recently used among the artifacts, the old layout's removed; the
 * metadata line stripped of tabs and newlines; and the system cache's
 * ownership check, which never follows a symlink. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/pkgcache.h"
#include "unit.h"

static char root[64];

static void put(const char *hex, size_t size, time_t used, const char *meta)
{
	char path[256];
	char *buf = xcalloc(1, size + 1);
	snprintf(path, sizeof(path), "%s/sha512/%s", root, hex);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write_all(fd, buf, size) == 0);
	close(fd);
	free(buf);
	struct timespec ts[2] = { { used, 0 }, { used, 0 } };
	CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
	if (!meta)
		return;
	snprintf(path, sizeof(path), "%s/sha512/%s.meta", root, hex);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write_all(fd, meta, strlen(meta)) == 0);
	close(fd);
}

static bool exists(const char *name)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/sha512/%s", root, name);
	return access(path, F_OK) == 0;
}

static void test_list_and_evict(void)
{
	char a[129], b[129], c[129], path[256], tmp[256];
	struct pkgcache_entry *v;
	struct pkgcache_freed f;
	struct sbx_err err;
	size_t n;
	time_t now = time(NULL);

	memset(a, 'a', 128), memset(b, 'b', 128), memset(c, 'c', 128);
	a[128] = b[128] = c[128] = '\0';
	snprintf(path, sizeof(path), "%s/sha512", root);
	CHECK(mkdir(path, 0700) == 0);
	put(a, 1000, now - 30, "npm\tleft-pad\t1.3.0\tleft-pad-1.3.0.tgz\n");
	put(b, 2000, now - 10, "npm\t@types/node\t20.1.0\tnode-20.1.0.tgz\n");
	put(c, 3000, now - 7200, NULL);
	/* a dead process's temporary file, and a lock */
	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	snprintf(tmp, sizeof(tmp), "%s/sha512/%s.tmp.%d.1", root, a, (int)pid);
	close(open(tmp, O_WRONLY | O_CREAT, 0600));
	snprintf(path, sizeof(path), "%s/sha512/%s.lock", root, a);
	close(open(path, O_WRONLY | O_CREAT, 0600));

	CHECK(pkgcache_list(root, &v, &n, &err) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK_STR(v[0].hex, c);  /* least recently used first */
		CHECK_STR(v[0].name, "?");
		CHECK_STR(v[1].name, "left-pad");
		CHECK_STR(v[1].version, "1.3.0");
		CHECK_STR(v[1].file, "left-pad-1.3.0.tgz");
		CHECK_STR(v[2].eco, "npm");
		CHECK_STR(v[2].name, "@types/node");
		CHECK(v[2].size == 2000 && v[2].used == now - 10);
	}
	free(v);
	CHECK(access(tmp, F_OK) == 0);  /* listing removes nothing */

	/* by age: what was not used for an hour */
	struct pkgcache_prune older = { .older_s = 3600 };
	CHECK(pkgcache_prune(root, &older, &f, &err) == 0);
	CHECK(f.files == 1 && f.bytes == 3000 && f.left_files == 2 && f.left_bytes == 3000);
	CHECK(!exists(c) && access(tmp, F_OK) < 0);
	/* by size: the least recently used goes, with its metadata */
	struct pkgcache_prune max = { .max = 2500 };
	CHECK(pkgcache_prune(root, &max, &f, &err) == 0);
	CHECK(f.files == 1 && f.bytes == 1000 && f.left_bytes == 2000);
	snprintf(path, sizeof(path), "%s.meta", a);
	CHECK(!exists(a) && !exists(path) && exists(b));
	/* a's lock went with it; b's stays while a download holds it */
	snprintf(path, sizeof(path), "%s.lock", a);
	CHECK(!exists(path));
	snprintf(path, sizeof(path), "%s/sha512/%s.lock", root, b);
	int held = open(path, O_RDWR | O_CREAT, 0600);
	CHECK(held >= 0 && flock(held, LOCK_EX) == 0);
	struct pkgcache_prune all = { .all = true };
	CHECK(pkgcache_prune(root, &all, &f, &err) == 0);
	CHECK(f.files == 1 && f.left_files == 0 && !exists(b));
	snprintf(path, sizeof(path), "%s.lock", b);
	CHECK(exists(path));
	close(held);
	CHECK(pkgcache_prune(root, &all, &f, &err) == 0);
	CHECK(!exists(path));
	CHECK(exists("../lock"));  /* the cache-wide one stays */
	/* a missing cache is an empty one */
	CHECK(pkgcache_list("/nonexistent/sbxrun-cache", &v, &n, &err) == 0 && n == 0);
	CHECK(pkgcache_prune("/nonexistent/sbxrun-cache", &all, &f, &err) == 0 && f.files == 0);
}

static void put_file(const char *rel, size_t size, time_t used)
{
	char path[512];
	char *buf = xcalloc(1, size + 1);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write_all(fd, buf, size) == 0);
	close(fd);
	free(buf);
	struct timespec ts[2] = { { used, 0 }, { used, 0 } };
	CHECK(utimensat(AT_FDCWD, path, ts, 0) == 0);
}

static void test_index_documents(void)
{
	static const char up[] = "0123456789abcdef0123456789abcdef";
	char path[512], rel[256], d[129];
	struct pkgcache_entry *v;
	struct pkgcache_freed f;
	struct sbx_err err;
	size_t n;
	time_t now = time(NULL);

	memset(d, 'd', 128);
	d[128] = '\0';
	snprintf(path, sizeof(path), "%s/index/npm/%s", root, up);
	CHECK(mkdir_p(path, 0700, &err) == 0);
	snprintf(rel, sizeof(rel), "index/npm/%s/.upstream", up);
	put_file(rel, 0, now);
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	int fd = open(path, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write_all(fd, "http://reg.example:8080/\n", 25) == 0);
	close(fd);
	snprintf(rel, sizeof(rel), "index/npm/%s/+@scope%%pkg", up);
	put_file(rel, 500, now - 40);
	snprintf(rel, sizeof(rel), "index/npm/%s/left-pad", up);
	put_file(rel, 300, now - 5);
	put("dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
	    1000, now - 20, "npm\tleft-pad\t1.3.0\tleft-pad-1.3.0.tgz\n");
	put_file("index/npm/old-layout", 700, now);  /* before the upstream was in the key */

	CHECK(pkgcache_list(root, &v, &n, &err) == 0);
	CHECK(n == 3);
	if (n == 3) {
		CHECK_STR(v[0].algo, "index");  /* least recently used first */
		CHECK_STR(v[0].eco, "npm");
		CHECK_STR(v[0].name, "@scope/pkg");
		CHECK_STR(v[0].version, "(index, full)");
		CHECK_STR(v[0].hex, up);
		CHECK_STR(v[0].file, "http://reg.example:8080/");
		CHECK(v[0].size == 500);
		CHECK_STR(v[1].algo, "sha512");
		CHECK_STR(v[2].name, "left-pad");
		CHECK_STR(v[2].version, "(index)");
	}
	free(v);
	snprintf(path, sizeof(path), "%s/index/npm/old-layout", root);
	CHECK(access(path, F_OK) == 0);  /* listing removes nothing */
	/* counted under the cap with the artifacts, least recently used first;
	 * the old layout's document goes at any eviction */
	struct pkgcache_prune max = { .max = 1300 };
	CHECK(pkgcache_prune(root, &max, &f, &err) == 0);
	CHECK(f.files == 1 && f.bytes == 500 && f.left_files == 2 && f.left_bytes == 1300);
	CHECK(access(path, F_OK) < 0);
	max.max = 400;
	CHECK(pkgcache_prune(root, &max, &f, &err) == 0);
	CHECK(f.files == 1 && f.bytes == 1000 && f.left_files == 1 && f.left_bytes == 300);
	CHECK(!exists(d));
	struct pkgcache_prune all = { .all = true };
	CHECK(pkgcache_prune(root, &all, &f, &err) == 0);
	CHECK(f.files == 1 && f.bytes == 300 && f.left_files == 0);
	snprintf(path, sizeof(path), "%s/index", root);
	CHECK(access(path, F_OK) < 0);
}

static void test_meta_format(void)
{
	char line[256];

	pkgcache_meta_format("npm", "evil\tname\n", NULL, "f.tgz", line, sizeof(line));
	CHECK_STR(line, "npm\tevil?name?\t?\tf.tgz\n");
}

static void test_system_check(void)
{
	struct sbx_err err;
	char dir[128];

	snprintf(dir, sizeof(dir), "%s/sys", root);
	CHECK(mkdir(dir, 0755) == 0);
	if (geteuid() == 0) {
		CHECK(pkgcache_system_check(dir, &err) == 0);
		CHECK(chmod(dir, 0775) == 0);
		CHECK(pkgcache_system_check(dir, &err) < 0);
		CHECK_CONTAINS(err.msg, "is writable by others than root (mode 0775)");
	} else {
		CHECK(pkgcache_system_check(dir, &err) < 0);
		CHECK_CONTAINS(err.msg, "not root");
	}
	CHECK(pkgcache_system_check("relative/dir", &err) < 0);
	CHECK(pkgcache_system_check("/nonexistent/sbxrun-cache", &err) < 0);
	/* a symlink anywhere on the way is never followed */
	char link[160], below[200];
	snprintf(link, sizeof(link), "%s/link", root);
	CHECK(symlink(dir, link) == 0);
	snprintf(below, sizeof(below), "%s/sub", link);
	CHECK(pkgcache_system_open(link, false, &err) < 0);
	if (geteuid() == 0)  /* (a user's own directory above is refused first) */
		CHECK_CONTAINS(err.msg, "is a symlink (never followed)");
	CHECK(pkgcache_system_open(below, true, &err) < 0);
	if (geteuid() == 0)
		CHECK_CONTAINS(err.msg, "is a symlink (never followed)");
	snprintf(below, sizeof(below), "%s/sub", dir);
	CHECK(access(below, F_OK) < 0);  /* nothing made through it */
	CHECK(pkgcache_system_check("/tmp/../tmp", &err) < 0);
	if (geteuid() == 0) {
		/* root makes what is missing, 0755 whatever its umask */
		CHECK(chmod(dir, 0755) == 0);
		snprintf(below, sizeof(below), "%s/a/b", dir);
		mode_t old = umask(077);
		int fd = pkgcache_system_open(below, true, &err);
		umask(old);
		struct stat st;
		CHECK(fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 07777) == 0755);
		if (fd >= 0)
			close(fd);
		/* a subdirectory another user owns is refused, named */
		snprintf(below, sizeof(below), "%s/a/b/sha1", dir);
		CHECK(mkdir(below, 0755) == 0 && chown(below, 65534, 65534) == 0);
		snprintf(below, sizeof(below), "%s/a/b", dir);
		CHECK(pkgcache_system_writable(below, false, &err) < 0);
		CHECK_CONTAINS(err.msg, "'sha1' belongs to uid 65534, not root");
	}
}

int main(void)
{
	struct sbx_err err;

	snprintf(root, sizeof(root), "/tmp/test_pkgcache.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	test_list_and_evict();
	test_index_documents();
	test_meta_format();
	test_system_check();
	int dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	rm_rf_at(dfd, root + 5, &err);
	close(dfd);
	return unit_done("test_pkgcache");
}
