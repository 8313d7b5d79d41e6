/* gw_cache.c - the gateway's cache on the host, per user: artifacts
 * content-addressed (ALGO/HEX, ALGO the digest the index gave), written to
 * a temporary file, fsync'd and renamed into place only after they matched
 * that digest, and checked again each time they are served, so a torn or
 * damaged file is never handed out; a lock file per digest (flock) makes
 * several sbxrun processes share one download. Index documents (INDEX/ECO/
 * KEY) are kept with their ETag for revalidation. Everything is opened
 * below the root's directory fd, never through a symlink.
 * Hooks left for later: a size cap with LRU eviction (the artifacts' atime
 * is touched on every hit, see gw_cache_artifact), and a system cache root
 * fills and users read (looked up before the user's, read-only). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"
#include "gateway/gw.h"

#define INDEX_MAX (64ULL << 20)
#define ETAG_MAX 255

struct gw_cache {
	int dirfd;
	unsigned seq;
};

int gw_cache_open(const char *root, struct gw_cache **out, struct sbx_err *err)
{
	static const char *const subdirs[] = { "sha1", "sha256", "sha512", "index", "index/npm" };
	struct gw_cache *c;

	if (mkdir_p(root, 0700, err) < 0)
		return err_wrap(err, "cache '%s'", root);
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return err_sys(err, "cache '%s'", root);
	for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++)
		if (mkdirat(fd, subdirs[i], 0700) < 0 && errno != EEXIST) {
			err_sys(err, "cache '%s/%s'", root, subdirs[i]);
			close(fd);
			return -1;
		}
	c = xcalloc(1, sizeof(*c));
	c->dirfd = fd;
	*out = c;
	return 0;
}

void gw_cache_close(struct gw_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	free(c);
}

static void art_path(const struct sri *want, char *buf, size_t size, const char *suffix)
{
	snprintf(buf, size, "%s/%s%s", sri_algo_name(want->algo), want->hex, suffix);
}

int gw_cache_artifact(struct gw_cache *c, const struct sri *want, int *fd, off_t *size)
{
	char path[256];
	struct stat st;

	art_path(want, path, sizeof(path), "");
	int f = openat(c->dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return 0;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || !sri_check_fd(want, f)) {
		/* damaged on disk: never served, fetched again */
		close(f);
		unlinkat(c->dirfd, path, 0);
		return 0;
	}
	/* the LRU hook: when it was last used */
	struct timespec ts[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
	futimens(f, ts);
	*fd = f;
	*size = st.st_size;
	return 1;
}

int gw_cache_lock(struct gw_cache *c, const struct sri *want, int *fd)
{
	char path[256];

	art_path(want, path, sizeof(path), ".lock");
	int f = openat(c->dirfd, path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f < 0)
		return -1;
	if (flock(f, LOCK_EX | LOCK_NB) < 0) {
		close(f);
		return errno == EWOULDBLOCK ? 0 : -1;
	}
	*fd = f;
	return 1;
}

int gw_cache_tmp(struct gw_cache *c, const struct sri *want, int *fd, char **name)
{
	char path[256], suffix[64];

	snprintf(suffix, sizeof(suffix), ".tmp.%d.%u", (int)getpid(), ++c->seq);
	art_path(want, path, sizeof(path), suffix);
	int f = openat(c->dirfd, path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f < 0)
		return -1;
	*fd = f;
	*name = xstrdup(path);
	return 0;
}

int gw_cache_commit(struct gw_cache *c, const struct sri *want, int fd, const char *tmp)
{
	char path[256];

	art_path(want, path, sizeof(path), "");
	if (fsync(fd) < 0 || renameat(c->dirfd, tmp, c->dirfd, path) < 0) {
		unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	int d = openat(c->dirfd, sri_algo_name(want->algo), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		fsync(d);
		close(d);
	}
	return 0;
}

void gw_cache_discard(struct gw_cache *c, const char *tmp)
{
	if (tmp)
		unlinkat(c->dirfd, tmp, 0);
}

/* Index keys are package names: '/' (a scope) becomes '%'. */
static int index_path(const char *eco, const char *key, char *buf, size_t size)
{
	int n = snprintf(buf, size, "index/%s/", eco);
	for (const char *p = key; *p && (size_t)n + 2 < size; p++)
		buf[n++] = *p == '/' ? '%' : *p;
	buf[n] = '\0';
	return key[0] && key[0] != '.' ? 0 : -1;
}

/* The file holds the ETag's line, then the document. */
int gw_cache_index_get(struct gw_cache *c, const char *eco, const char *key, char **body,
		       size_t *len, char *etag, size_t etag_size, int64_t *age_ms)
{
	char path[512];
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	struct sbx_err e;

	if (index_path(eco, key, path, sizeof(path)) < 0 ||
	    read_file_beneath(c->dirfd, path, INDEX_MAX, &buf, &n, &e) < 0 ||
	    fstatat(c->dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return 0;
	char *nl = memchr(buf, '\n', n);
	if (!nl || (size_t)(nl - buf) > ETAG_MAX) {
		free(buf);
		return 0;
	}
	snprintf(etag, etag_size, "%.*s", (int)(nl - buf), buf);
	*len = n - (size_t)(nl + 1 - buf);
	memmove(buf, nl + 1, *len);
	buf[*len] = '\0';
	*body = buf;
	*age_ms = ((int64_t)time(NULL) - st.st_mtime) * 1000;
	return 1;
}

void gw_cache_index_put(struct gw_cache *c, const char *eco, const char *key, const char *body,
			size_t len, const char *etag)
{
	char path[512], tmp[600];

	if (index_path(eco, key, path, sizeof(path)) < 0 || strlen(etag) > ETAG_MAX || strchr(etag, '\n'))
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", path, (int)getpid(), ++c->seq);
	int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	if (write_all(fd, etag, strlen(etag)) < 0 || write_all(fd, "\n", 1) < 0 ||
	    write_all(fd, body, len) < 0 || fsync(fd) < 0 || renameat(c->dirfd, tmp, c->dirfd, path) < 0)
		unlinkat(c->dirfd, tmp, 0);
	close(fd);
}

void gw_cache_index_touch(struct gw_cache *c, const char *eco, const char *key)
{
	char path[512];

	if (index_path(eco, key, path, sizeof(path)) == 0)
		utimensat(c->dirfd, path, NULL, AT_SYMLINK_NOFOLLOW);
}
