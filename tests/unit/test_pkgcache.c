/* test_pkgcache.c - the package cache as a whole: artifacts listed with
 * their metadata, least recently used first; eviction by size, age and
 * all, with a digest's lock file unless held, and a dead process's
 * temporary file; the
 * metadata line stripped of tabs and newlines; and the system cache's
 * ownership check. */
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
}

int main(void)
{
	struct sbx_err err;

	snprintf(root, sizeof(root), "/tmp/test_pkgcache.XXXXXX");
	if (!mkdtemp(root))
		return 1;
	test_list_and_evict();
	test_meta_format();
	test_system_check();
	int dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
	rm_rf_at(dfd, root + 5, &err);
	close(dfd);
	return unit_done("test_pkgcache");
}
