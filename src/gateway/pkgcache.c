/* pkgcache.c - the package cache as a whole: its artifacts (ALGO/HEX) with
 * the metadata kept beside them (ALGO/HEX.meta) and its index documents
 * (index/ECO/UP/KEY, UP their upstream's), listed for `sbxrun cache` and
 * evicted least recently used first (the file's atime, set on every hit)
 * under the cache-wide lock ROOT/lock, so concurrent sbxrun processes
 * never evict at once (a digest's own lock file goes with it when no
 * download holds it); and the ownership checks a system cache must pass
 * before a user trusts it or root writes it. Every directory is opened
 * with O_NOFOLLOW and every file named below a handle of its own. */
#define _GNU_SOURCE
#include "gateway/pkgcache.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/lockwait.h"
#include "base/paths.h"
#include "base/util.h"

/* the artifacts by digest, and the tables of Debian Packages indexes */
static const char *const algos[] = { "sha1", "sha256", "sha512", "goh1", "debidx" };

int pkgcache_user_root(char **out, struct sbx_err *err)
{
	_cleanup_free_ char *base = NULL;

	if (paths_staging_dir(&base, err) < 0)
		return -1;
	*out = xasprintf("%s/packages", base);
	return 0;
}

static void clean_field(char *dst, size_t size, const char *src)
{
	size_t n = 0;

	for (const char *p = src ? src : "?"; *p && n + 1 < size; p++)
		dst[n++] = (unsigned char)*p < 0x20 || *p == 0x7f ? '?' : *p;
	dst[n] = '\0';
	if (!n && size > 1)
		snprintf(dst, size, "?");
}

void pkgcache_meta_format(const char *eco, const char *name, const char *version, const char *file,
			  char *buf, size_t size)
{
	char f[4][256];

	clean_field(f[0], sizeof(f[0]), eco);
	clean_field(f[1], sizeof(f[1]), name);
	clean_field(f[2], sizeof(f[2]), version);
	clean_field(f[3], sizeof(f[3]), file);
	snprintf(buf, size, "%s\t%s\t%s\t%s\n", f[0], f[1], f[2], f[3]);
}

static void meta_read(int algofd, struct pkgcache_entry *e)
{
	char path[160], *buf = NULL, *f[4] = { 0 };
	size_t n = 0;
	struct sbx_err ignored;

	snprintf(e->eco, sizeof(e->eco), "?");
	snprintf(e->name, sizeof(e->name), "?");
	snprintf(e->version, sizeof(e->version), "?");
	snprintf(e->file, sizeof(e->file), "?");
	snprintf(path, sizeof(path), "%s.meta", e->hex);
	if (read_file_beneath(algofd, path, 4096, &buf, &n, &ignored) < 0)
		return;
	char *save = NULL, *line = strtok_r(buf, "\n", &save);
	for (int i = 0; line && i < 4; i++)
		f[i] = strsep(&line, "\t");
	if (f[3]) {
		clean_field(e->eco, sizeof(e->eco), f[0]);
		clean_field(e->name, sizeof(e->name), f[1]);
		clean_field(e->version, sizeof(e->version), f[2]);
		clean_field(e->file, sizeof(e->file), f[3]);
	}
	free(buf);
}

static bool all_hex(const char *s)
{
	size_t n = strlen(s);
	return n >= 40 && n <= 128 && strspn(s, "0123456789abcdef") == n;
}

struct scan {
	int algofd;
	const char *algo;
	struct pkgcache_entry *v;
	size_t n, cap;
	bool with_meta;
	bool any_lock;         /* prune --all: an orphan lock of any age goes */
	const char *eco, *up;  /* index documents: where the scan is */
	char upstream[256];
};

static struct pkgcache_entry *push(struct scan *s, const struct stat *st)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? s->cap * 2 : 64;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
	}
	struct pkgcache_entry *e = &s->v[s->n++];
	memset(e, 0, sizeof(*e));
	e->size = (uint64_t)st->st_size;
	e->used = (int64_t)st->st_atim.tv_sec;
	e->used_nsec = st->st_atim.tv_nsec;
	return e;
}

/* The process of a temporary file "NAME.tmp.PID.N", or 0. */
static pid_t tmp_pid(const char *name)
{
	const char *t = strstr(name, ".tmp.");
	char *end;

	if (!t)
		return 0;
	long pid = strtol(t + 5, &end, 10);
	return *end == '.' && end[1] && strspn(end + 1, "0123456789") == strlen(end + 1) && pid > 0 &&
			       pid <= INT_MAX ? (pid_t)pid : 0;
}

/* A temporary file whose process is gone. */
static bool stale_tmp(const char *name)
{
	pid_t pid = tmp_pid(name);
	return pid && kill(pid, 0) < 0 && errno == ESRCH;
}

static int open_dir(int dirfd, const char *name)
{
	return openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
}

/* A digest's lock file, unless a download holds it. (One that opened it
 * just before the unlink may lock the old file: at worst two processes
 * download the same artifact, each verified, each renamed into place.) */
static void drop_lock(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return;
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		unlinkat(dirfd, path, 0);
	close(fd);
}

/* "HEX.lock" of an artifact that is not (or no longer) there. */
static bool orphan_lock(int dirfd, const char *name, bool any_age)
{
	size_t n = strlen(name);
	char hex[160];

	if (n <= 5 || n - 5 >= sizeof(hex) || strcmp(name + n - 5, ".lock") != 0)
		return false;
	snprintf(hex, sizeof(hex), "%.*s", (int)(n - 5), name);
	if (!all_hex(hex) || faccessat(dirfd, hex, F_OK, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
		return false;
	/* A download's own lock has no artifact beside it yet: swept while a
	 * second process had it open, unlocked, that process and a third would
	 * both download (54-cache's twenty sandboxes, once the index documents'
	 * writes made the trims frequent). A trim sweeps only a lock untouched
	 * for ten minutes, longer than any download waits; prune --all any. */
	struct stat st;
	return any_age || (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
			   time(NULL) - st.st_mtime > 600);
}

static int scan_one(int dirfd, const char *name, void *arg)
{
	struct scan *s = arg;
	struct stat st;

	if (!s->with_meta && stale_tmp(name)) {  /* eviction only */
		unlinkat(dirfd, name, 0);
		return 0;
	}
	if (!s->with_meta && orphan_lock(dirfd, name, s->any_lock)) {
		drop_lock(dirfd, name);
		return 0;
	}
	if (!all_hex(name) || fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
		return 0;
	struct pkgcache_entry *e = push(s, &st);
	snprintf(e->algo, sizeof(e->algo), "%s", s->algo);
	snprintf(e->hex, sizeof(e->hex), "%s", name);
	if (s->with_meta)
		meta_read(dirfd, e);
	return 0;
}

/* One index document of index/ECO/UP: what it is comes from its path. */
static int scan_doc(int upfd, const char *name, void *arg)
{
	struct scan *s = arg;
	struct stat st;

	if (name[0] == '.' || tmp_pid(name)) {  /* .upstream, a document being written */
		if (!s->with_meta && stale_tmp(name))
			unlinkat(upfd, name, 0);
		return 0;
	}
	if (strlen(name) >= sizeof(s->v->key) || fstatat(upfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISREG(st.st_mode))
		return 0;
	struct pkgcache_entry *e = push(s, &st);
	snprintf(e->algo, sizeof(e->algo), "index");
	snprintf(e->hex, sizeof(e->hex), "%s", s->up);
	snprintf(e->key, sizeof(e->key), "%s", name);
	clean_field(e->eco, sizeof(e->eco), s->eco);
	bool full = strcmp(s->eco, "npm") == 0 && name[0] == '+';
	clean_field(e->name, sizeof(e->name), name + full);
	for (char *p = e->name; *p; p++)
		if (*p == '%')
			*p = '/';
	snprintf(e->version, sizeof(e->version), "%s", full ? "(index, full)" : "(index)");
	clean_field(e->file, sizeof(e->file), s->upstream);
	return 0;
}

static bool up_name(const char *s)
{
	return strlen(s) == PKGCACHE_UP_HEX && strspn(s, "0123456789abcdef") == PKGCACHE_UP_HEX;
}

/* index/ECO/NAME: an upstream's directory, or a document of the layout
 * before the upstream was in the key (never read: evicted at once). */
static int scan_up(int ecofd, const char *name, void *arg)
{
	struct scan *s = arg;
	struct sbx_err ignored;
	struct stat st;
	char *buf = NULL;

	if (!up_name(name)) {
		if (!s->with_meta && fstatat(ecofd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode))
			unlinkat(ecofd, name, 0);
		return 0;
	}
	_cleanup_close_ int fd = open_dir(ecofd, name);
	if (fd < 0)
		return 0;
	snprintf(s->upstream, sizeof(s->upstream), "?");
	if (s->with_meta && read_file_beneath(fd, PKGCACHE_UPSTREAM_FILE, sizeof(s->upstream) - 1, &buf, NULL,
					      &ignored) == 0)
		snprintf(s->upstream, sizeof(s->upstream), "%.*s", (int)strcspn(buf, "\n"), buf);
	free(buf);
	s->up = name;
	dir_each(fd, scan_doc, s, &ignored);
	return 0;
}

static int scan_eco(int idxfd, const char *name, void *arg)
{
	struct scan *s = arg;
	struct sbx_err ignored;
	_cleanup_close_ int fd = open_dir(idxfd, name);

	if (fd >= 0) {
		s->eco = name;
		dir_each(fd, scan_up, s, &ignored);
	}
	return 0;
}

static int by_use(const void *a, const void *b)
{
	const struct pkgcache_entry *x = a, *y = b;
	if (x->used != y->used)
		return x->used < y->used ? -1 : 1;
	if (x->used_nsec != y->used_nsec)
		return x->used_nsec < y->used_nsec ? -1 : 1;
	return strcmp(x->hex, y->hex);
}

static int scan_all(int dirfd, bool with_meta, bool any_lock, struct pkgcache_entry **out,
		    size_t *n, struct sbx_err *err)
{
	struct scan s = { .with_meta = with_meta, .any_lock = any_lock };

	for (size_t i = 0; i <= ARRAY_SIZE(algos); i++) {
		const char *sub = i < ARRAY_SIZE(algos) ? algos[i] : "index";
		s.algofd = open_dir(dirfd, sub);
		if (s.algofd < 0) {
			if (errno == ENOENT)
				continue;
			free(s.v);
			return err_sys(err, "cache: %s", sub);
		}
		s.algo = sub;
		int r = dir_each(s.algofd, i < ARRAY_SIZE(algos) ? scan_one : scan_eco, &s, err);
		close(s.algofd);
		if (r < 0) {
			free(s.v);
			return -1;
		}
	}
	if (s.n)
		qsort(s.v, s.n, sizeof(*s.v), by_use);
	*out = s.v;
	*n = s.n;
	return 0;
}

int pkgcache_list(const char *root, struct pkgcache_entry **out, size_t *n, struct sbx_err *err)
{
	_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	*out = NULL;
	*n = 0;
	if (fd < 0)
		return errno == ENOENT ? 0 : err_sys(err, "cache '%s'", root);
	return scan_all(fd, true, false, out, n, err);
}

/* Each file named below a handle of its directory (a client reading it
 * keeps its open file). */
static void evict_one(int dirfd, const struct pkgcache_entry *e)
{
	char path[160];

	if (strcmp(e->algo, "index") == 0) {
		_cleanup_close_ int idx = open_dir(dirfd, "index");
		_cleanup_close_ int eco = idx >= 0 ? open_dir(idx, e->eco) : -1;
		_cleanup_close_ int up = eco >= 0 ? open_dir(eco, e->hex) : -1;
		if (up >= 0)
			unlinkat(up, e->key, 0);
		return;
	}
	_cleanup_close_ int algo = open_dir(dirfd, e->algo);
	if (algo < 0)
		return;
	unlinkat(algo, e->hex, 0);
	snprintf(path, sizeof(path), "%s.meta", e->hex);
	unlinkat(algo, path, 0);
	snprintf(path, sizeof(path), "%s.lock", e->hex);
	drop_lock(algo, path);
}

static bool must_go(const struct pkgcache_prune *p, const struct pkgcache_entry *e, uint64_t total,
		    int64_t now)
{
	return p->all || (p->max && total > p->max) || (p->older_s && now - e->used >= p->older_s);
}

int pkgcache_evict(int dirfd, const struct pkgcache_prune *p, const char *wait_on, struct pkgcache_freed *out,
		   struct sbx_err *err)
{
	_cleanup_close_ int lock = lock_open_at(dirfd, "lock", err);
	_cleanup_free_ struct pkgcache_entry *v = NULL;
	uint64_t total = 0;
	size_t n = 0;
	int64_t now = (int64_t)time(NULL);

	memset(out, 0, sizeof(*out));
	if (lock < 0)
		return err_wrap(err, "cache");
	if (!wait_on && flock(lock, LOCK_EX | LOCK_NB) < 0)
		return errno == EWOULDBLOCK ? 0 : err_sys(err, "cache: its lock");
	if (wait_on && lock_wait(lock, LOCK_EX, wait_on, LOCK_DEADLINE_LONG_S, err) < 0)
		return -1;
	/* (the cache-wide lock file is never removed: a new one would not exclude) */
	if (scan_all(dirfd, false, p->all, &v, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		total += v[i].size;
	for (size_t i = 0; i < n; i++) {  /* least recently used first */
		if (!must_go(p, &v[i], total, now)) {
			out->left_files++;
			out->left_bytes += v[i].size;
			continue;
		}
		evict_one(dirfd, &v[i]);
		total -= v[i].size;
		out->files++;
		out->bytes += v[i].size;
	}
	if (p->all) {
		struct sbx_err ignored;
		rm_rf_at(dirfd, "index", &ignored);
	}
	return 1;
}

int pkgcache_prune(const char *root, const struct pkgcache_prune *p, struct pkgcache_freed *out,
		   struct sbx_err *err)
{
	_cleanup_close_ int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);

	memset(out, 0, sizeof(*out));
	if (fd < 0)
		return errno == ENOENT ? 0 : err_sys(err, "cache '%s'", root);
	_cleanup_free_ char *what = xasprintf("%s/lock", root);
	return pkgcache_evict(fd, p, what, out, err) < 0 ? -1 : 0;
}

static int trusted(const struct stat *st, const char *what, bool top, struct sbx_err *err)
{
	if (S_ISLNK(st->st_mode))
		return err_set(err, 0, "'%s' is a symlink (never followed)", what);
	if (!S_ISDIR(st->st_mode))
		return err_set(err, 0, "'%s' is not a directory", what);
	if (st->st_uid != 0)
		return err_set(err, 0, "'%s' belongs to uid %u, not root", what, (unsigned)st->st_uid);
	if ((st->st_mode & 022) && !(!top && (st->st_mode & S_ISVTX)))
		return err_set(err, 0, "'%s' is writable by others than root (mode %04o)", what,
			       (unsigned)(st->st_mode & 07777));
	return 0;
}

/* Why name below at did not open as a directory (open_dir). */
static int not_opened(int at, const char *name, const char *what, struct sbx_err *err)
{
	struct stat st;
	int e = errno;

	if ((e == ENOTDIR || e == ELOOP) && fstatat(at, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    trusted(&st, what, true, err) < 0)
		return -1;
	errno = e;
	return err_sys(err, "'%s'", what);
}

enum check { CHECK_NONE, CHECK_ROOTS, CHECK_ROOTS_ABOVE };

/* name below at as a directory handle, made first (mode, set on the
 * handle past the umask) when mk; CHECK_ROOTS: root's and nobody else's;
 * CHECK_ROOTS_ABOVE: the same, or root's and sticky (a directory above a
 * system cache, such as /tmp). */
static int subdir(int at, const char *name, bool mk, mode_t mode, enum check check, const char *what,
		  struct sbx_err *err)
{
	struct stat st;
	bool made = mk && mkdirat(at, name, mode) == 0;

	if (mk && !made && errno != EEXIST)
		return err_sys(err, "mkdir '%s'", what);
	int fd = open_dir(at, name);
	if (fd < 0)
		return not_opened(at, name, what, err);
	if ((made && fchmod(fd, mode) < 0) || fstat(fd, &st) < 0) {
		err_sys(err, "'%s'", what);
		close(fd);
		return -1;
	}
	if (check != CHECK_NONE && trusted(&st, what, check == CHECK_ROOTS, err) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

int pkgcache_system_open(const char *dir, bool mk, struct sbx_err *err)
{
	char path[PATH_MAX], name[NAME_MAX + 1];
	struct stat st;
	size_t n = 0;

	if (dir[0] != '/' || strlen(dir) >= sizeof(path))
		return err_set(err, 0, "'%s' is not an absolute path", dir);
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		err_sys(err, "'/'");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (trusted(&st, "/", dir[strspn(dir, "/")] == '\0', err) < 0) {
		close(fd);
		return -1;
	}
	for (const char *p = dir + strspn(dir, "/"); *p; p += strspn(p, "/")) {
		size_t len = strcspn(p, "/");
		snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : 0), p);
		if (!name[0] || strcmp(name, ".") == 0 || strcmp(name, "..") == 0) {
			close(fd);
			return err_set(err, 0, "'%s': not a plain absolute path ('.', '..' or a name too long)", dir);
		}
		p += len;
		n += (size_t)snprintf(path + n, sizeof(path) - n, "/%s", name);
		/* 0755: users read the system cache */
		enum check c = p[strspn(p, "/")] ? CHECK_ROOTS_ABOVE : CHECK_ROOTS;
		int next = subdir(fd, name, mk, 0755, c, path, err);
		close(fd);
		if (next < 0)
			return -1;
		fd = next;
	}
	return fd;
}

int pkgcache_system_check(const char *dir, struct sbx_err *err)
{
	int fd = pkgcache_system_open(dir, false, err);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

int pkgcache_system_writable(const char *dir, bool mk, struct sbx_err *err)
{
	struct stat st;

	if (!mk && lstat(dir, &st) < 0 && errno == ENOENT)
		return 0;  /* nothing to evict */
	_cleanup_close_ int fd = pkgcache_system_open(dir, mk, err);
	if (fd < 0)
		return -1;
	for (size_t i = 0; i <= ARRAY_SIZE(algos); i++) {
		const char *sub = i < ARRAY_SIZE(algos) ? algos[i] : "index";
		if (fstatat(fd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT)
			continue;
		if (pkgcache_system_check_at(fd, sub, err) < 0)
			return err_wrap(err, "'%s'", dir);
	}
	return 0;
}

int pkgcache_subdir(int dirfd, const char *name, bool mk, mode_t mode, bool system, const char *what,
		    struct sbx_err *err)
{
	return subdir(dirfd, name, mk, mode, system ? CHECK_ROOTS : CHECK_NONE, what, err);
}

int pkgcache_system_check_at(int dirfd, const char *sub, struct sbx_err *err)
{
	struct stat st;

	if (fstatat(dirfd, sub, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(err, "'%s'", sub);
	return trusted(&st, sub, true, err);
}
