/* gw_cache.c - the gateway's cache on the host, per user: artifacts
 * content-addressed (ALGO/HEX, ALGO the digest the index gave), written to
 * a temporary file, fsync'd and renamed into place only after they matched
 * that digest, and checked again each time they are served, so a torn or
 * damaged file is never handed out; what each is (ALGO/HEX.meta) is kept
 * beside it; a lock file per digest (flock) makes several sbxrun processes
 * share one download. Index documents (INDEX/ECO/KEY) are kept with their
 * ETag for revalidation; the tables of Debian Packages indexes
 * (debidx/HEX, HEX the Packages file's SHA256, debidx.h) beside them, listed
 * and evicted like artifacts. Everything is opened below the root's directory
 * fd, never through a symlink. A hit sets the artifact's atime (its last
 * use); past the size cap the least recently used are evicted
 * (pkgcache.c). A system cache root fills is looked up first, read-only,
 * when root owns it and nobody else may write it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "gateway/debidx.h"
#include "gateway/gw.h"
#include "gateway/pkgcache.h"

#define INDEX_MAX (64ULL << 20)
#define ETAG_MAX GW_VALIDATORS_MAX  /* ETag, then a tab and Last-Modified */
#define RECOUNT_MS 30000  /* the size is counted again this often at most */

static const char *const subdirs[] = { "sha1", "sha256", "sha512", "index", "index/npm", "debidx" };

struct gw_cache {
	int dirfd;
	int sysfd;          /* the system cache, or -1 */
	unsigned seq;
	bool shared;        /* this is the system cache: readable by all */
	uint64_t cap;       /* bytes; 0: none */
	uint64_t size;      /* as last counted, plus the commits since */
	int64_t counted_ms; /* when it was counted; 0: never */
};

int gw_cache_open(const char *root, bool shared, struct gw_cache **out, struct sbx_err *err)
{
	mode_t mode = shared ? 0755 : 0700;
	struct gw_cache *c;

	if (mkdir_p(root, mode, err) < 0)
		return err_wrap(err, "cache '%s'", root);
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return err_sys(err, "cache '%s'", root);
	for (size_t i = 0; i < ARRAY_SIZE(subdirs); i++) {
		if (mkdirat(fd, subdirs[i], mode) < 0 && errno != EEXIST) {
			err_sys(err, "cache '%s/%s'", root, subdirs[i]);
			close(fd);
			return -1;
		}
		if (shared)
			(void)!fchmodat(fd, subdirs[i], mode, 0);
	}
	c = xcalloc(1, sizeof(*c));
	c->dirfd = fd;
	c->sysfd = -1;
	c->shared = shared;
	*out = c;
	return 0;
}

void gw_cache_cap(struct gw_cache *c, uint64_t max)
{
	c->cap = max;
}

static int check_index_dir(int dirfd, const char *name, void *arg)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode))
		return 0;
	if (pkgcache_system_check_at(dirfd, name, arg) == 0)
		return 0;
	err_wrap(arg, "index");
	return 1;
}

/* Opened only when root owns all of it and nobody else may write it;
 * else a warning, and the gateway goes on without it. */
void gw_cache_system(struct gw_cache *c, const char *dir)
{
	struct sbx_err err;
	struct stat a, b;

	if (!dir || strcmp(dir, "none") == 0 || access(dir, F_OK) < 0)
		return;
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || (fstat(fd, &a) == 0 && fstat(c->dirfd, &b) == 0 && a.st_dev == b.st_dev &&
		       a.st_ino == b.st_ino)) {
		if (fd >= 0)
			close(fd);  /* it is this cache itself (root filling it) */
		return;
	}
	int r = pkgcache_system_check(dir, &err);
	for (size_t i = 0; r == 0 && i < ARRAY_SIZE(subdirs); i++)
		if (faccessat(fd, subdirs[i], F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
		    pkgcache_system_check_at(fd, subdirs[i], &err) < 0)
			r = -1;
	int idx = r == 0 ? openat(fd, "index", O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW) : -1;
	if (idx >= 0) {  /* every ecosystem's, not only those named above */
		r = dir_each(idx, check_index_dir, &err, &err) ? -1 : 0;
		close(idx);
	}
	if (r < 0) {
		log_warn("the system package cache '%s' is ignored: %s", dir, err.msg);
		close(fd);
		return;
	}
	c->sysfd = fd;
}

struct gw_cache *gw_cache_dup(const struct gw_cache *c)
{
	int fd = fcntl(c->dirfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return NULL;
	struct gw_cache *d = xcalloc(1, sizeof(*d));
	d->dirfd = fd;
	d->sysfd = -1;
	d->shared = c->shared;
	return d;
}

void gw_cache_close(struct gw_cache *c)
{
	if (!c)
		return;
	close(c->dirfd);
	if (c->sysfd >= 0)
		close(c->sysfd);
	free(c);
}

static void art_path(const struct sri *want, char *buf, size_t size, const char *suffix)
{
	snprintf(buf, size, "%s/%s%s", sri_algo_name(want->algo), want->hex, suffix);
}

static int lookup(int dirfd, bool sys, const struct sri *want, int *fd, off_t *size)
{
	char path[256];
	struct stat st;

	art_path(want, path, sizeof(path), "");
	int f = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return 0;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || (sys && (st.st_uid != 0 || (st.st_mode & 022))) ||
	    !sri_check_fd(want, f)) {
		/* damaged on disk: never served, fetched again (into the user's) */
		close(f);
		if (!sys)
			unlinkat(dirfd, path, 0);
		return 0;
	}
	/* its last use, for the least-recently-used eviction */
	struct timespec ts[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
	futimens(f, ts);
	*fd = f;
	*size = st.st_size;
	return 1;
}

int gw_cache_artifact(struct gw_cache *c, const struct sri *want, int *fd, off_t *size)
{
	return (c->sysfd >= 0 && lookup(c->sysfd, true, want, fd, size)) ||
	       lookup(c->dirfd, false, want, fd, size);
}

/* Whether the metadata at path (below dirfd) is exactly expect. */
static bool meta_is(int dirfd, bool sys, const char *path, const char *expect)
{
	char buf[1024];
	struct stat st;
	ssize_t n = -1;
	int f = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (f < 0)
		return false;
	if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) && !(sys && (st.st_uid != 0 || (st.st_mode & 022))))
		n = read(f, buf, sizeof(buf));
	close(f);
	return n >= 0 && (size_t)n == strlen(expect) && memcmp(buf, expect, (size_t)n) == 0;
}

int gw_cache_deb_byhash(struct gw_cache *c, const struct sri *want, const char *dir, int *fd, off_t *size)
{
	char expect[1024], path[256];

	/* what the metadata can hold whole (a longer one is never matched) */
	if (strlen(dir) >= 255 || strchr(dir, '\t') || strchr(dir, '\n'))
		return 0;
	pkgcache_meta_format("deb", GW_DEB_BYHASH_NAME, "", dir, expect, sizeof(expect));
	art_path(want, path, sizeof(path), ".meta");
	return (c->sysfd >= 0 && meta_is(c->sysfd, true, path, expect) && lookup(c->sysfd, true, want, fd, size)) ||
	       (meta_is(c->dirfd, false, path, expect) && lookup(c->dirfd, false, want, fd, size));
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

/* What the artifact is, beside it (replaced whole: temporary file, rename). */
static void meta_write(struct gw_cache *c, const struct sri *want, const struct gw_cache_meta *m)
{
	char path[256], tmp[300], line[1024];

	art_path(want, path, sizeof(path), ".meta");
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", path, (int)getpid(), ++c->seq);
	pkgcache_meta_format(m->eco, m->name, m->version, m->file, line, sizeof(line));
	int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
			c->shared ? 0644 : 0600);
	if (fd < 0)
		return;
	if ((c->shared && fchmod(fd, 0644) < 0) || write_all(fd, line, strlen(line)) < 0 ||
	    renameat(c->dirfd, tmp, c->dirfd, path) < 0)
		unlinkat(c->dirfd, tmp, 0);
	close(fd);
}

int gw_cache_commit(struct gw_cache *c, const struct sri *want, int fd, const char *tmp,
		    const struct gw_cache_meta *m)
{
	char path[256];
	struct stat st;

	art_path(want, path, sizeof(path), "");
	if (m)
		meta_write(c, want, m);
	/* used now: a long download's file is not the least recently used */
	if ((c->shared && fchmod(fd, 0644) < 0) || futimens(fd, NULL) < 0 || fsync(fd) < 0 ||
	    fstat(fd, &st) < 0 || renameat(c->dirfd, tmp, c->dirfd, path) < 0) {
		unlinkat(c->dirfd, tmp, 0);
		return -1;
	}
	c->size += (uint64_t)st.st_size;
	int d = openat(c->dirfd, sri_algo_name(want->algo), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		fsync(d);
		close(d);
	}
	return 0;
}

void gw_cache_trim(struct gw_cache *c)
{
	int64_t now = (int64_t)now_ms();
	struct pkgcache_freed f;
	struct sbx_err err;

	if (!c->cap || (c->counted_ms && c->size <= c->cap && now - c->counted_ms < RECOUNT_MS))
		return;
	/* past the cap: down to 90% of it, so that not every commit evicts */
	struct pkgcache_prune p = { .max = c->size > c->cap ? c->cap - c->cap / 10 : c->cap };
	if (pkgcache_evict(c->dirfd, &p, false, &f, &err) == 1) {
		c->size = f.left_bytes;
		c->counted_ms = now;
	}
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
static int index_get(int dirfd, const char *eco, const char *key, char **body, size_t *len,
		     char *etag, size_t etag_size, int64_t *age_ms)
{
	char path[512];
	struct stat st;
	char *buf = NULL;
	size_t n = 0;
	struct sbx_err e;

	if (index_path(eco, key, path, sizeof(path)) < 0 ||
	    read_file_beneath(dirfd, path, INDEX_MAX, &buf, &n, &e) < 0 ||
	    fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		free(buf);
		return 0;
	}
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

/* The user's copy or the system cache's (which root filled), the younger. */
int gw_cache_index_get(struct gw_cache *c, const char *eco, const char *key, char **body,
		       size_t *len, char *etag, size_t etag_size, int64_t *age_ms)
{
	char sys_etag[GW_VALIDATORS_MAX + 1];
	char *sys_body = NULL;
	size_t sys_len = 0;
	int64_t sys_age = 0;

	int mine = index_get(c->dirfd, eco, key, body, len, etag, etag_size, age_ms);
	if (c->sysfd < 0 || !index_get(c->sysfd, eco, key, &sys_body, &sys_len, sys_etag, sizeof(sys_etag),
				       &sys_age))
		return mine;
	if (mine && *age_ms <= sys_age) {
		free(sys_body);
		return 1;
	}
	if (mine)
		free(*body);
	*body = sys_body;
	*len = sys_len;
	*age_ms = sys_age;
	snprintf(etag, etag_size, "%s", sys_etag);
	return 1;
}

void gw_cache_index_put(struct gw_cache *c, const char *eco, const char *key, const char *body,
			size_t len, const char *etag)
{
	char path[512], tmp[600];

	if (index_path(eco, key, path, sizeof(path)) < 0 || strlen(etag) > ETAG_MAX || strchr(etag, '\n'))
		return;
	snprintf(tmp, sizeof(tmp), "index/%s", eco);
	if (mkdirat(c->dirfd, tmp, c->shared ? 0755 : 0700) == 0 && c->shared)
		(void)!fchmodat(c->dirfd, tmp, 0755, 0);  /* an ecosystem's first document */
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", path, (int)getpid(), ++c->seq);
	int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return;
	if ((c->shared && fchmod(fd, 0644) < 0) || write_all(fd, etag, strlen(etag)) < 0 || write_all(fd, "\n", 1) < 0 ||
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

static void hex32(const unsigned char d[32], char hex[65])
{
	static const char x[] = "0123456789abcdef";
	for (size_t i = 0; i < 32; i++) {
		hex[2 * i] = x[d[i] >> 4];
		hex[2 * i + 1] = x[d[i] & 15];
	}
	hex[64] = '\0';
}

static int debidx_map(int dirfd, bool sys, const unsigned char src[32], void **p, size_t *len,
		      char *why, size_t why_size)
{
	char path[80], hex[65];
	struct stat st;
	struct sbx_err err;

	hex32(src, hex);
	snprintf(path, sizeof(path), "debidx/%s", hex);
	_cleanup_close_ int f = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return 0;
	void *m = MAP_FAILED;
	if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) && (!sys || (st.st_uid == 0 && !(st.st_mode & 022))) &&
	    st.st_size > 0 && (uint64_t)st.st_size <= DEBIDX_MAX)
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, f, 0);
	if (m == MAP_FAILED || debidx_check(m, (size_t)st.st_size, src, &err) < 0) {
		snprintf(why, why_size, "%s", m == MAP_FAILED ? "not a regular file of a table's size" : err.msg);
		if (m != MAP_FAILED)
			munmap(m, (size_t)st.st_size);
		if (!sys)
			unlinkat(dirfd, path, 0);  /* rebuilt by the caller */
		return -1;
	}
	struct timespec ts[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
	futimens(f, ts);  /* its last use, for the eviction */
	*p = m;
	*len = (size_t)st.st_size;
	return 1;
}

int gw_cache_debidx_get(struct gw_cache *c, const unsigned char src[32], void **p, size_t *len, char *why,
			size_t why_size)
{
	int r = c->sysfd >= 0 ? debidx_map(c->sysfd, true, src, p, len, why, why_size) : 0;
	if (r == 1)
		return 1;
	int mine = debidx_map(c->dirfd, false, src, p, len, why, why_size);
	return mine != 0 ? mine : r;
}

/* One file written whole under a name of this thread's (the worker's
 * calls and the loop's never share one), then renamed into place. */
static int put_whole(struct gw_cache *c, const char *path, const void *p, size_t len, bool sync)
{
	char tmp[160];

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%d", path, (int)getpid(), (int)gettid());
	int fd = openat(c->dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, c->shared ? 0644 : 0600);
	if (fd < 0)
		return -1;
	if ((c->shared && fchmod(fd, 0644) < 0) || write_all(fd, p, len) < 0 || (sync && fsync(fd) < 0) ||
	    renameat(c->dirfd, tmp, c->dirfd, path) < 0) {
		unlinkat(c->dirfd, tmp, 0);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int gw_cache_debidx_put(struct gw_cache *c, const unsigned char src[32], const void *p, size_t len,
			const char *key)
{
	char path[80], meta[100], hex[65], line[1024];

	hex32(src, hex);
	snprintf(path, sizeof(path), "debidx/%s", hex);
	snprintf(meta, sizeof(meta), "debidx/%s.meta", hex);
	pkgcache_meta_format("deb", "(packages table)", "", key, line, sizeof(line));
	if (put_whole(c, meta, line, strlen(line), false) < 0 || put_whole(c, path, p, len, true) < 0)
		return -1;
	int d = openat(c->dirfd, "debidx", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (d >= 0) {
		fsync(d);
		close(d);
	}
	return 0;
}

/* An anonymous file in the cache's file system, for bytes too many to hold
 * in memory (a fetch's body, an answer): O_TMPFILE where the file system
 * has it, else a named file unlinked at once. It has no name, so nothing
 * lists, evicts or leaves it: it goes with its last fd. */
int gw_cache_scratch(struct gw_cache *c, int *fd)
{
	char name[64];

	int f = openat(c->dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (f < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
		snprintf(name, sizeof(name), "scratch.tmp.%d.%d.%u", (int)getpid(), (int)gettid(), ++c->seq);
		f = openat(c->dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (f >= 0)
			unlinkat(c->dirfd, name, 0);
	}
	if (f < 0)
		return -1;
	*fd = f;
	return 0;
}
