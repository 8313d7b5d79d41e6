/* gw_cache.c - the gateway's cache on the host, per user: artifacts
 * content-addressed (ALGO/HEX, ALGO the digest the index gave), written to
 * a temporary file, fsync'd and renamed into place only after they matched
 * that digest, and checked again each time they are served, so a torn or
 * damaged file is never handed out; what each is (ALGO/HEX.meta) is kept
 * beside it; a lock file per digest (flock) makes several sbxrun processes
 * share one download. Index documents (index/ECO/UP/KEY, UP a digest of
 * the upstream's base URL: one registry's packument is never another's)
 * are kept with their validators; the tables of Debian Packages indexes
 * (debidx/HEX, HEX the Packages file's SHA256, debidx.h) beside them; all
 * are listed, counted under the cap and evicted alike. Every file is named
 * below a handle of its directory, each opened once with O_NOFOLLOW (a
 * system cache's, root's and nobody else's, checked on the handle), so
 * nothing follows a symlink. A hit sets the file's atime (its last use);
 * past the size cap the least recently used are evicted (pkgcache.c). A
 * system cache root fills is looked up first, read-only, when root owns it
 * and nobody else may write it. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/lockwait.h"
#include "base/log.h"
#include "base/util.h"
#include "pkg/debidx.h"
#include "gateway/gw.h"
#include "gateway/pkgcache.h"

#define INDEX_MAX (64ULL << 20)
#define ETAG_MAX GW_VALIDATORS_MAX  /* ETag, then a tab and Last-Modified */
#define RECOUNT_MS 30000  /* the size is counted again this often at most */
#define KEY_MAX 223       /* an index document's file name, with room for ".tmp.PID.N" */

enum { SUB_SHA1, SUB_SHA256, SUB_SHA512, SUB_GOH1, SUB_DEBIDX, SUB_INDEX, NSUB };
static const char *const subdirs[NSUB] = { "sha1", "sha256", "sha512", "goh1", "debidx", "index" };

struct gw_cache {
	int dirfd;
	int sub[NSUB];      /* its subdirectories' handles */
	int sysfd;          /* the system cache, or -1 */
	int syssub[NSUB];   /* and its subdirectories' (-1: none) */
	unsigned seq;
	bool shared;        /* this is the system cache: readable by all */
	uint64_t cap;       /* bytes; 0: none */
	uint64_t size;      /* as last counted, plus the commits since */
	int64_t counted_ms; /* when it was counted; 0: never */
};

static void close_subs(int *sub)
{
	for (size_t i = 0; i < NSUB; i++)
		if (sub[i] >= 0)
			close(sub[i]);
}

/* The subdirectories, made when missing. The system cache root fills must
 * be root's all the way down: each one root's and nobody else's (a user
 * who made one, or swapped it for a symlink, gets the fill refused), its
 * mode set on the handle. */
static int open_subs(int dirfd, const char *root, bool shared, int *sub, struct sbx_err *err)
{
	mode_t mode = shared ? 0755 : 0700;
	char what[600];
	struct stat st;

	for (size_t i = 0; i < NSUB; i++)
		sub[i] = -1;
	for (size_t i = 0; i < NSUB; i++) {
		snprintf(what, sizeof(what), "%s/%s", root, subdirs[i]);
		sub[i] = pkgcache_subdir(dirfd, subdirs[i], true, mode, shared, what, err);
		if (sub[i] < 0 || (shared && fstat(sub[i], &st) < 0) ||
		    (shared && (st.st_mode & 07777) != mode && fchmod(sub[i], mode) < 0)) {
			if (sub[i] >= 0)
				err_sys(err, "'%s'", what);
			close_subs(sub);
			return -1;
		}
	}
	return 0;
}

int gw_cache_open(const char *root, bool shared, struct gw_cache **out, struct sbx_err *err)
{
	struct gw_cache *c;
	int fd;

	if (shared) {
		/* root filling the system cache: never through a symlink, never
		 * into a directory another user made or may write */
		fd = pkgcache_system_open(root, true, err);
		if (fd < 0)
			return err_wrap(err, "the system package cache '%s' is not filled", root);
	} else {
		if (mkdir_p(root, 0700, err) < 0)
			return err_wrap(err, "cache '%s'", root);
		fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0)
			return err_sys(err, "cache '%s'", root);
	}
	c = xcalloc(1, sizeof(*c));
	if (open_subs(fd, root, shared, c->sub, err) < 0) {
		close(fd);
		free(c);
		return shared ? err_wrap(err, "the system package cache '%s' is not filled", root) : -1;
	}
	c->dirfd = fd;
	c->sysfd = -1;
	for (size_t i = 0; i < NSUB; i++)
		c->syssub[i] = -1;
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

/* The system cache's subdirectories that exist, each root's and nobody
 * else's (and every ecosystem's index directory); -1 with err. */
static int open_sys_subs(int fd, int *sub, struct sbx_err *err)
{
	for (size_t i = 0; i < NSUB; i++)
		sub[i] = -1;
	for (size_t i = 0; i < NSUB; i++) {
		if (faccessat(fd, subdirs[i], F_OK, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		sub[i] = pkgcache_subdir(fd, subdirs[i], false, 0, true, subdirs[i], err);
		if (sub[i] < 0) {
			close_subs(sub);
			return -1;
		}
	}
	if (sub[SUB_INDEX] >= 0 && dir_each(sub[SUB_INDEX], check_index_dir, err, err)) {
		close_subs(sub);
		return -1;
	}
	return 0;
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
	close(fd);
	fd = pkgcache_system_open(dir, false, &err);
	if (fd < 0 || open_sys_subs(fd, c->syssub, &err) < 0) {
		log_warn("the system package cache '%s' is ignored: %s", dir, err.msg);
		if (fd >= 0)
			close(fd);
		return;
	}
	c->sysfd = fd;
}

struct gw_cache *gw_cache_dup(const struct gw_cache *c)
{
	struct gw_cache *d = xcalloc(1, sizeof(*d));
	bool ok = (d->dirfd = fcntl(c->dirfd, F_DUPFD_CLOEXEC, 0)) >= 0;

	d->sysfd = -1;
	d->shared = c->shared;
	for (size_t i = 0; i < NSUB; i++) {
		d->sub[i] = fcntl(c->sub[i], F_DUPFD_CLOEXEC, 0);
		d->syssub[i] = -1;
		ok = ok && d->sub[i] >= 0;
	}
	if (!ok) {
		gw_cache_close(d);
		return NULL;
	}
	return d;
}

void gw_cache_close(struct gw_cache *c)
{
	if (!c)
		return;
	if (c->dirfd >= 0)
		close(c->dirfd);
	close_subs(c->sub);
	if (c->sysfd >= 0)
		close(c->sysfd);
	close_subs(c->syssub);
	free(c);
}

/* The handle of an artifact's directory (by its digest's algorithm) and
 * its file's name there. */
static int art_at(const int *sub, const struct sri *want, char *name, size_t size, const char *suffix)
{
	const char *algo = sri_algo_name(want->algo);

	snprintf(name, size, "%s%s", want->hex, suffix);
	for (size_t i = 0; i < SUB_DEBIDX; i++)
		if (strcmp(subdirs[i], algo) == 0)
			return sub[i];
	return -1;
}

/* A temporary file's handle and name from its "ALGO/NAME" (gw_cache_tmp's). */
static int tmp_at(const struct gw_cache *c, const char *tmp, const char **name)
{
	const char *slash = strchr(tmp, '/');

	for (size_t i = 0; slash && i < SUB_DEBIDX; i++)
		if (strlen(subdirs[i]) == (size_t)(slash - tmp) && strncmp(tmp, subdirs[i], (size_t)(slash - tmp)) == 0) {
			*name = slash + 1;
			return c->sub[i];
		}
	return -1;
}

static int lookup(const int *sub, bool sys, const struct sri *want, int *fd, off_t *size)
{
	char name[256];
	struct stat st;
	int dir = art_at(sub, want, name, sizeof(name), "");

	if (dir < 0)
		return 0;
	int f = openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f < 0)
		return 0;
	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || (sys && (st.st_uid != 0 || (st.st_mode & 022))) ||
	    !sri_check_fd(want, f)) {
		/* damaged on disk: never served, fetched again (into the user's) */
		close(f);
		if (!sys)
			unlinkat(dir, name, 0);
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
	return (c->sysfd >= 0 && lookup(c->syssub, true, want, fd, size)) ||
	       lookup(c->sub, false, want, fd, size);
}

/* Whether the metadata name (below its directory's handle dir) is exactly
 * expect. */
static bool meta_is(int dir, bool sys, const char *name, const char *expect)
{
	char buf[1024];
	struct stat st;
	ssize_t n = -1;
	int f = dir < 0 ? -1 : openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (f < 0)
		return false;
	if (fstat(f, &st) == 0 && S_ISREG(st.st_mode) && !(sys && (st.st_uid != 0 || (st.st_mode & 022))))
		n = read(f, buf, sizeof(buf));
	close(f);
	return n >= 0 && (size_t)n == strlen(expect) && memcmp(buf, expect, (size_t)n) == 0;
}

int gw_cache_deb_byhash(struct gw_cache *c, const struct sri *want, const char *dir, int *fd, off_t *size)
{
	char expect[1024], name[256];

	/* what the metadata can hold whole (a longer one is never matched) */
	if (strlen(dir) >= 255 || strchr(dir, '\t') || strchr(dir, '\n'))
		return 0;
	pkgcache_meta_format("deb", GW_DEB_BYHASH_NAME, "", dir, expect, sizeof(expect));
	int sysdir = art_at(c->syssub, want, name, sizeof(name), ".meta");
	int mydir = art_at(c->sub, want, name, sizeof(name), ".meta");
	return (c->sysfd >= 0 && meta_is(sysdir, true, name, expect) && lookup(c->syssub, true, want, fd, size)) ||
	       (meta_is(mydir, false, name, expect) && lookup(c->sub, false, want, fd, size));
}

int gw_cache_lock(struct gw_cache *c, const struct sri *want, int *fd)
{
	char name[256];
	int dir = art_at(c->sub, want, name, sizeof(name), ".lock");

	struct sbx_err ignore;
	/* root's lock file in the system cache is root's alone (lockwait.h) */
	int f = dir < 0 ? -1 : lock_open_at(dir, name, &ignore);
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
	char file[256], suffix[64];

	snprintf(suffix, sizeof(suffix), ".tmp.%d.%u", (int)getpid(), ++c->seq);
	int dir = art_at(c->sub, want, file, sizeof(file), suffix);
	int f = dir < 0 ? -1 : openat(dir, file, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (f < 0)
		return -1;
	*fd = f;
	*name = xasprintf("%s/%s", sri_algo_name(want->algo), file);
	return 0;
}

/* What the artifact is, beside it (replaced whole: temporary file, rename). */
static void meta_write(struct gw_cache *c, int dir, const struct sri *want, const struct gw_cache_meta *m)
{
	char name[256], tmp[300], line[1024];

	snprintf(name, sizeof(name), "%s.meta", want->hex);
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%u", name, (int)getpid(), ++c->seq);
	pkgcache_meta_format(m->eco, m->name, m->version, m->file, line, sizeof(line));
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, c->shared ? 0644 : 0600);
	if (fd < 0)
		return;
	if ((c->shared && fchmod(fd, 0644) < 0) || write_all(fd, line, strlen(line)) < 0 ||
	    renameat(dir, tmp, dir, name) < 0)
		unlinkat(dir, tmp, 0);
	close(fd);
}

int gw_cache_commit(struct gw_cache *c, const struct sri *want, int fd, const char *tmp,
		    const struct gw_cache_meta *m)
{
	char name[256];
	const char *tname = NULL;
	struct stat st;
	int dir = art_at(c->sub, want, name, sizeof(name), "");

	if (dir < 0 || tmp_at(c, tmp, &tname) != dir)
		return -1;
	if (m)
		meta_write(c, dir, want, m);
	/* used now: a long download's file is not the least recently used */
	if ((c->shared && fchmod(fd, 0644) < 0) || futimens(fd, NULL) < 0 || fsync(fd) < 0 ||
	    fstat(fd, &st) < 0 || renameat(dir, tname, dir, name) < 0) {
		unlinkat(dir, tname, 0);
		return -1;
	}
	c->size += (uint64_t)st.st_size;
	fsync(dir);
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
	if (pkgcache_evict(c->dirfd, &p, NULL, &f, &err) == 1) {
		c->size = f.left_bytes;
		c->counted_ms = now;
	}
}

void gw_cache_discard(struct gw_cache *c, const char *tmp)
{
	const char *name = NULL;
	int dir = tmp ? tmp_at(c, tmp, &name) : -1;

	if (dir >= 0)
		unlinkat(dir, name, 0);
}

/* --- index documents: index/ECO/UP/KEY (pkgcache.h) --- */

/* An index key's file name: a scope's '/' becomes '%'; never empty, never
 * "." first (the directory's own .upstream), never too long. */
static int index_name(const char *key, char *buf, size_t size)
{
	size_t n = strlen(key);

	if (!key[0] || key[0] == '.' || n > KEY_MAX || n >= size)
		return -1;
	for (size_t i = 0; i <= n; i++)
		buf[i] = key[i] == '/' ? '%' : key[i];
	return 0;
}

static int eco_ok(const char *eco)
{
	return eco[0] && eco[0] != '.' && strlen(eco) < 16 && !strchr(eco, '/');
}

/* The directory of one upstream's documents of one ecosystem: its handle
 * (made when mk), each step a handle of its own that never follows a
 * symlink; the system cache's only when root's and nobody else's. */
static int index_dir(struct gw_cache *c, bool sys, const char *eco, const char *upstream, bool mk)
{
	int idx = sys ? c->syssub[SUB_INDEX] : c->sub[SUB_INDEX];
	bool checked = sys || c->shared;
	mode_t mode = c->shared ? 0755 : 0700;
	unsigned char d[32];
	char up[PKGCACHE_UP_HEX + 1];
	struct sbx_err ignored;

	if (idx < 0 || !upstream || !eco_ok(eco))
		return -1;
	sri_sha256(upstream, strlen(upstream), d);
	for (size_t i = 0; i < PKGCACHE_UP_HEX / 2; i++)
		snprintf(up + 2 * i, 3, "%02x", d[i]);
	_cleanup_close_ int e = pkgcache_subdir(idx, eco, mk, mode, checked, eco, &ignored);
	return e < 0 ? -1 : pkgcache_subdir(e, up, mk, mode, checked, up, &ignored);
}

/* The file holds the validators' line, then the document. */
static int read_doc(int f, char **body, size_t *len, char *etag, size_t etag_size)
{
	struct stat st;

	if (fstat(f, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > INDEX_MAX + ETAG_MAX + 1)
		return 0;
	size_t n = 0, cap = (size_t)st.st_size + 1;
	char *buf = xmalloc(cap + 1);
	for (ssize_t r; n < cap && (r = read(f, buf + n, cap - n)) != 0; n += r > 0 ? (size_t)r : 0)
		if (r < 0 && errno != EINTR) {
			free(buf);
			return 0;
		}
	char *nl = n < cap ? memchr(buf, '\n', n) : NULL;  /* grown while read: not taken */
	if (!nl || (size_t)(nl - buf) > ETAG_MAX) {
		free(buf);
		return 0;
	}
	snprintf(etag, etag_size, "%.*s", (int)(nl - buf), buf);
	*len = n - (size_t)(nl + 1 - buf);
	memmove(buf, nl + 1, *len);
	buf[*len] = '\0';
	*body = buf;
	return 1;
}

static int index_get(struct gw_cache *c, bool sys, const char *eco, const char *upstream, const char *key,
		     char **body, size_t *len, char *etag, size_t etag_size, int64_t *age_ms)
{
	char name[KEY_MAX + 1];
	struct stat st;

	if (index_name(key, name, sizeof(name)) < 0)
		return 0;
	_cleanup_close_ int dir = index_dir(c, sys, eco, upstream, false);
	_cleanup_close_ int f = dir < 0 ? -1 : openat(dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (f < 0 || fstat(f, &st) < 0 || (sys && (st.st_uid != 0 || (st.st_mode & 022))) ||
	    !read_doc(f, body, len, etag, etag_size))
		return 0;
	*age_ms = ((int64_t)time(NULL) - st.st_mtime) * 1000;
	if (!sys) {  /* its last use, for the eviction; its mtime stays its age */
		struct timespec ts[2] = { { .tv_nsec = UTIME_NOW }, { .tv_nsec = UTIME_OMIT } };
		futimens(f, ts);
	}
	return 1;
}

/* The user's copy or the system cache's (which root filled), the younger. */
int gw_cache_index_get(struct gw_cache *c, const char *eco, const char *upstream, const char *key,
		       char **body, size_t *len, char *etag, size_t etag_size, int64_t *age_ms)
{
	char sys_etag[GW_VALIDATORS_MAX + 1];
	char *sys_body = NULL;
	size_t sys_len = 0;
	int64_t sys_age = 0;

	int mine = index_get(c, false, eco, upstream, key, body, len, etag, etag_size, age_ms);
	if (c->sysfd < 0 || !index_get(c, true, eco, upstream, key, &sys_body, &sys_len, sys_etag,
				       sizeof(sys_etag), &sys_age))
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

/* name written whole below dir: a temporary file (this process and
 * thread's), then rename. */
static int write_whole(struct gw_cache *c, int dir, const char *name, const void *head, size_t hlen,
		       const void *p, size_t len, bool sync)
{
	char tmp[NAME_MAX + 1];

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d.%d", name, (int)getpid(), (int)gettid());
	int fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, c->shared ? 0644 : 0600);
	if (fd < 0)
		return -1;
	if ((c->shared && fchmod(fd, 0644) < 0) || write_all(fd, head, hlen) < 0 || write_all(fd, p, len) < 0 ||
	    (sync && fsync(fd) < 0) || renameat(dir, tmp, dir, name) < 0) {
		unlinkat(dir, tmp, 0);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

void gw_cache_index_put(struct gw_cache *c, const char *eco, const char *upstream, const char *key,
			const char *body, size_t len, const char *etag)
{
	char name[KEY_MAX + 1], head[ETAG_MAX + 2];
	struct stat old;

	if (index_name(key, name, sizeof(name)) < 0 || strlen(etag) > ETAG_MAX || strchr(etag, '\n'))
		return;
	_cleanup_close_ int dir = index_dir(c, false, eco, upstream, true);
	if (dir < 0)
		return;
	/* which upstream this is, for `sbxrun cache ls` */
	if (faccessat(dir, PKGCACHE_UPSTREAM_FILE, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		(void)write_whole(c, dir, PKGCACHE_UPSTREAM_FILE, upstream, strlen(upstream), "\n", 1, false);
	bool had = fstatat(dir, name, &old, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(old.st_mode);
	int n = snprintf(head, sizeof(head), "%s\n", etag);
	if (write_whole(c, dir, name, head, (size_t)n, body, len, true) < 0)
		return;
	/* counted under the cap as an artifact is */
	c->size += (uint64_t)n + len;
	c->size -= had && (uint64_t)old.st_size <= c->size ? (uint64_t)old.st_size : 0;
	gw_cache_trim(c);
}

void gw_cache_index_touch(struct gw_cache *c, const char *eco, const char *upstream, const char *key)
{
	char name[KEY_MAX + 1];

	if (index_name(key, name, sizeof(name)) < 0)
		return;
	_cleanup_close_ int dir = index_dir(c, false, eco, upstream, false);
	if (dir >= 0)
		utimensat(dir, name, NULL, AT_SYMLINK_NOFOLLOW);
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

static int debidx_map(int dir, bool sys, const unsigned char src[32], void **p, size_t *len,
		      char *why, size_t why_size)
{
	char hex[65];
	struct stat st;
	struct sbx_err err;

	hex32(src, hex);
	_cleanup_close_ int f = dir < 0 ? -1 : openat(dir, hex, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
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
			unlinkat(dir, hex, 0);  /* rebuilt by the caller */
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
	int r = c->sysfd >= 0 ? debidx_map(c->syssub[SUB_DEBIDX], true, src, p, len, why, why_size) : 0;
	if (r == 1)
		return 1;
	int mine = debidx_map(c->sub[SUB_DEBIDX], false, src, p, len, why, why_size);
	return mine != 0 ? mine : r;
}

/* Each file written whole under a name of this thread's (the worker's
 * calls and the loop's never share one), then renamed into place. */
int gw_cache_debidx_put(struct gw_cache *c, const unsigned char src[32], const void *p, size_t len,
			const char *key)
{
	char meta[100], hex[65], line[1024];
	int dir = c->sub[SUB_DEBIDX];

	hex32(src, hex);
	snprintf(meta, sizeof(meta), "%s.meta", hex);
	pkgcache_meta_format("deb", "(packages table)", "", key, line, sizeof(line));
	if (write_whole(c, dir, meta, line, strlen(line), "", 0, false) < 0 ||
	    write_whole(c, dir, hex, "", 0, p, len, true) < 0)
		return -1;
	fsync(dir);
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
