/* store.c - the image store on disk: DIGEST/{rootfs,meta.json} per image,
 * names/NAME pointing at digests, digests/ caching tarball hashes; every
 * change under an flock on .lock and through a temporary name and a rename. */
#define _GNU_SOURCE
#include "store/store.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <json.h>
#include <string.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/lockwait.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/util.h"
#include "store/digest.h"
#include "store/imgmeta.h"

#define STAGING_PREFIX ".staging-"
#define TMP_PREFIX ".tmp-"
#define BUILD_PREFIX ".build-"

int store_name_check(const char *name, struct sbx_err *err)
{
	size_t n = strlen(name);

	if (n == 0 || n > 64 || !isalnum((unsigned char)name[0]))
		goto bad;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && !strchr("._-", name[i]))
			goto bad;
	return 0;
bad:
	return err_set(err, 0, "invalid image name '%s' (letters, digits, '.', '_', '-'; "
		       "starting with a letter or digit; at most 64)", name);
}

int store_write_atomic(int dirfd, const char *name, const char *data, size_t len,
			struct sbx_err *err)
{
	char tmp[256];
	snprintf(tmp, sizeof(tmp), TMP_PREFIX "%s.%d", name, (int)getpid());
	_cleanup_close_ int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW |
					O_CLOEXEC, 0644);
	if (fd < 0)
		return err_sys(err, "create '%s'", tmp);
	/* 0644 whatever the umask: a system store's names and metadata are read
	 * by every user (a user's store is private through its 0700 parent) */
	if (fchmod(fd, 0644) < 0 || write_all(fd, data, len) < 0 || fsync(fd) < 0) {
		err_sys(err, "write '%s'", tmp);
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		err_sys(err, "rename '%s' to '%s'", tmp, name);
		unlinkat(dirfd, tmp, 0);
		return -1;
	}
	return 0;
}

/* A directory stream of its own (its offset not shared with dirfd). */
static DIR *open_dir_at(int dirfd, const char *path)
{
	int fd = openat(dirfd, path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	if (!d && fd >= 0)
		close(fd);
	return d;
}

/* A build output whose builder is gone (".build-PID-RECIPE..."). */
static bool stale_build(const char *name)
{
	char *end;
	long pid = strtol(name + strlen(BUILD_PREFIX), &end, 10);
	return pid > 0 && *end == '-' && kill((pid_t)pid, 0) < 0 && errno == ESRCH;
}

/* Anything left by an interrupted import or removal: we hold the lock, so no
 * one else is using it. Builds run unlocked, so only dead builders' files go. */
static void clean_stale(int dirfd)
{
	DIR *d = open_dir_at(dirfd, ".");
	struct sbx_err ignore = { 0 };

	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (str_has_prefix(e->d_name, STAGING_PREFIX) || str_has_prefix(e->d_name, TMP_PREFIX) ||
		    (str_has_prefix(e->d_name, BUILD_PREFIX) && stale_build(e->d_name))) {
			log_verbose("removing leftover '%s' of an interrupted change", e->d_name);
			(void)rm_rf_at(dirfd, e->d_name, &ignore);
		}
	}
	closedir(d);
}

static bool digest_named(const struct sbx_store *s, const char *digest);
static bool system_names(const char *digest);

static bool is_system_copy(int storefd, const char *digest)
{
	_cleanup_free_ char *marker = xasprintf("%s/" STORE_SYSTEM_COPY, digest);
	struct stat st;
	return fstatat(storefd, marker, &st, AT_SYMLINK_NOFOLLOW) == 0;
}
static int remove_digest(const struct sbx_store *s, const char *digest, struct sbx_err *err);

/* Images no name points at any more (replaced by a newer import under the
 * same name, or left while a sandbox used them) go once no sandbox does. */
static void gc_orphans(const struct sbx_store *s)
{
	DIR *d = open_dir_at(s->fd, ".");
	struct sbx_err ignore = { 0 };

	if (!d)
		return;
	for (struct dirent *e; (e = readdir(d));) {
		if (!digest_valid(e->d_name) || digest_named(s, e->d_name))
			continue;
		/* a user's copy of a system image lives while the system store names it */
		if (!s->system && is_system_copy(s->fd, e->d_name) && system_names(e->d_name))
			continue;
		_cleanup_close_ int fd = openat(s->fd, e->d_name, O_RDONLY | O_DIRECTORY |
						O_NOFOLLOW | O_CLOEXEC);
		_cleanup_close_ int lock = fd < 0 ? -1 : store_image_trylock(fd);
		if (lock < 0)
			continue;
		log_verbose("removing image %.12s: no name points at it", e->d_name);
		(void)remove_digest(s, e->d_name, &ignore);
	}
	closedir(d);
}

static char *user_store_path(struct sbx_err *err)
{
	_cleanup_free_ char *data = NULL;
	if (paths_data_dir(&data, err) < 0)
		return NULL;
	return xasprintf("%s/images", data);
}

int store_build_path(const char *recipe, const char *ext, char **out, struct sbx_err *err)
{
	_cleanup_free_ char *path = user_store_path(err);

	if (!path)
		return -1;
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return err_sys(err, "mkdir '%s'", path);
	*out = xasprintf("%s/" BUILD_PREFIX "%d-%s%s", path, (int)getpid(), recipe, ext);
	return 0;
}

static int mkdir_at(int dirfd, const char *name, mode_t mode, struct sbx_err *err)
{
	if (mkdirat(dirfd, name, mode) < 0 && errno != EEXIST)
		return err_sys(err, "mkdir '%s'", name);
	return 0;
}

static int store_setup(struct sbx_store *s, struct sbx_err *err)
{
	_cleanup_close_ int names = -1, digests = -1;

	if (mkdir(s->path, s->system ? 0755 : 0700) < 0 && errno != EEXIST)
		return err_sys(err, "mkdir '%s'", s->path);
	s->fd = open(s->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->fd < 0)
		return err_sys(err, "open '%s'", s->path);
	/* every user lists the system store; only root changes it (a store
	 * made by hand with XDG_DATA_HOME=/var/lib was root's and 0700) */
	if (s->system && (fchown(s->fd, 0, 0) < 0 || fchmod(s->fd, 0755) < 0))
		return err_sys(err, "chmod '%s'", s->path);
	_cleanup_free_ char *lockpath = xasprintf("%s/.lock", s->path);
	s->lock_fd = lock_open_at(s->fd, ".lock", err);
	if (s->lock_fd < 0)
		return err_wrap(err, "image store '%s'", s->path);
	/* held over a whole import: minutes for a large image */
	if (lock_wait(s->lock_fd, LOCK_EX, lockpath, LOCK_DEADLINE_LONG_S, err) < 0)
		return -1;
	if (mkdir_at(s->fd, "names", 0755, err) < 0 || mkdir_at(s->fd, "digests", 0700, err) < 0)
		return -1;
	if (s->system && (fchownat(s->fd, "names", 0, 0, AT_SYMLINK_NOFOLLOW) < 0 ||
			  fchmodat(s->fd, "names", 0755, 0) < 0))
		return err_sys(err, "chmod '%s/names'", s->path);
	s->cache_fd = openat(s->fd, "digests", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->cache_fd < 0)
		return err_sys(err, "open '%s/digests'", s->path);
	clean_stale(s->fd);
	names = openat(s->fd, "names", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (names >= 0)
		clean_stale(names);
	clean_stale(s->cache_fd);
	gc_orphans(s);
	return 0;
}

int store_open_locked(struct sbx_store *s, struct sbx_err *err)
{
	*s = (struct sbx_store){ .fd = -1, .lock_fd = -1, .cache_fd = -1 };
	s->path = user_store_path(err);
	if (!s->path)
		return -1;
	if (store_setup(s, err) < 0) {
		store_close(s);
		return -1;
	}
	return 0;
}

int store_open_system_locked(struct sbx_store *s, struct sbx_err *err)
{
	_cleanup_free_ char *parent = xstrdup(SBX_SYSTEM_STORE);

	*s = (struct sbx_store){ .fd = -1, .lock_fd = -1, .cache_fd = -1, .system = true };
	if (geteuid() != 0)
		return err_set(err, 0, "--system: only root changes the system store %s",
			       SBX_SYSTEM_STORE);
	*strrchr(parent, '/') = '\0';
	if (mkdir(parent, 0755) < 0 && errno != EEXIST)
		return err_sys(err, "mkdir '%s'", parent);
	if (chown(parent, 0, 0) < 0 || chmod(parent, 0755) < 0)
		return err_sys(err, "chmod '%s'", parent);
	s->path = xstrdup(SBX_SYSTEM_STORE);
	if (store_setup(s, err) < 0) {
		store_close(s);
		return -1;
	}
	return 0;
}

void store_close(struct sbx_store *s)
{
	if (s->cache_fd >= 0)
		close(s->cache_fd);
	if (s->lock_fd >= 0)
		close(s->lock_fd); /* releases the flock */
	if (s->fd >= 0)
		close(s->fd);
	free(s->path);
	*s = (struct sbx_store){ .fd = -1, .lock_fd = -1, .cache_fd = -1 };
}

bool store_has_digest(const struct sbx_store *s, const char *digest)
{
	struct stat st;
	return fstatat(s->fd, digest, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

int store_staging_new(const struct sbx_store *s, unsigned owner_uid, char **name, int *fd,
		      struct sbx_err *err)
{
	uint32_t rnd;
	char buf[64];

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return err_sys(err, "getrandom");
	snprintf(buf, sizeof(buf), STAGING_PREFIX "%08x", rnd);
	if (mkdirat(s->fd, buf, 0700) < 0)
		return err_sys(err, "mkdir '%s/%s'", s->path, buf);
	/* As root the extraction runs as the sandbox's host uid (import.c). */
	if (geteuid() == 0 && fchownat(s->fd, buf, owner_uid, owner_uid, AT_SYMLINK_NOFOLLOW) < 0)
		goto fail;
	*fd = openat(s->fd, buf, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*fd < 0)
		goto fail;
	*name = xstrdup(buf);
	return 0;
fail:
	err_sys(err, "prepare '%s/%s'", s->path, buf);
	/* root in a user namespace that maps no id but its own (unshare -r):
	 * none is left for the sandboxes (paths_root_host_id) */
	if (err->errnum == EINVAL && geteuid() == 0)
		err_hint(err, "as root sbxrun gives its images and sandboxes uid %u, which this user "
			 "namespace does not map (it maps no id but root's): give it a range of ids "
			 "(subuids, as a rootless container has) or run sbxrun as a user", owner_uid);
	unlinkat(s->fd, buf, AT_REMOVEDIR);
	return -1;
}

int store_staging_commit(const struct sbx_store *s, const char *staging, const char *digest,
			 struct sbx_err *err)
{
	/* Private while it fills; readable once complete, so that a system store
	 * serves every user; there the image's directory is root's (its rootfs
	 * stays the uid root's sandboxes map to). The user's own store stays
	 * private through its 0700 parent. */
	if (s->system && fchownat(s->fd, staging, 0, 0, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(err, "chown '%s' in '%s'", staging, s->path);
	if (fchmodat(s->fd, staging, 0755, 0) < 0)
		return err_sys(err, "chmod '%s' in '%s'", staging, s->path);
	if (renameat2(s->fd, staging, s->fd, digest, RENAME_NOREPLACE) < 0)
		return err_sys(err, "rename '%s' to '%s' in '%s'", staging, digest, s->path);
	return 0;
}

int store_name_set(const struct sbx_store *s, const char *name, const char *digest,
		   struct sbx_err *err)
{
	_cleanup_close_ int names = openat(s->fd, "names", O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
	_cleanup_free_ char *line = xasprintf("%s\n", digest);

	if (names < 0)
		return err_sys(err, "open '%s/names'", s->path);
	if (store_write_atomic(names, name, line, strlen(line), err) < 0)
		return err_wrap(err, "name '%s'", name);
	return 0;
}

/* The digest NAME points at in the store open on fd: 1 found, 0 not. */
static int resolve_name(int fd, const char *name, char digest[SBX_DIGEST_HEX + 1],
			struct sbx_err *err)
{
	_cleanup_free_ char *path = xasprintf("names/%s", name);
	_cleanup_free_ char *text = NULL;
	struct sbx_err e = { 0 };

	if (read_file_beneath(fd, path, 256, &text, NULL, &e) < 0) {
		if (e.errnum == ENOENT)
			return 0;
		*err = e;
		return err_wrap(err, "image '%s'", name);
	}
	text[strcspn(text, "\n")] = '\0';
	if (!digest_valid(text))
		return err_set(err, 0, "image '%s': names/%s does not hold a digest", name, name);
	memcpy(digest, text, SBX_DIGEST_HEX + 1);
	return 1;
}

int store_digest_of(const struct sbx_store *s, const char *name, char digest[SBX_DIGEST_HEX + 1],
		    struct sbx_err *err)
{
	return resolve_name(s->fd, name, digest, err);
}

/* The stores to search, in order: user (may fail to exist), then system. */
struct store_ref { char *path; const char *where; int fd; };

static int open_stores(struct store_ref refs[2], struct sbx_err *err)
{
	refs[0] = (struct store_ref){ user_store_path(err), "user", -1 };
	refs[1] = (struct store_ref){ xstrdup(SBX_SYSTEM_STORE), "system", -1 };
	if (!refs[0].path) {
		free(refs[1].path);
		return -1;
	}
	for (int i = 0; i < 2; i++)
		refs[i].fd = open(refs[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return 0;
}

static void close_stores(struct store_ref refs[2])
{
	for (int i = 0; i < 2; i++) {
		if (refs[i].fd >= 0)
			close(refs[i].fd);
		free(refs[i].path);
	}
}

/* Finds NAME: *which is the index into refs, digest filled. */
static int find_image(struct store_ref refs[2], const char *name, int *which,
		      char digest[SBX_DIGEST_HEX + 1], struct sbx_err *err)
{
	if (store_name_check(name, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		if (refs[i].fd < 0)
			continue;
		int r = resolve_name(refs[i].fd, name, digest, err);
		if (r < 0)
			return -1;
		if (r > 0) {
			*which = i;
			return 0;
		}
	}
	return err_set(err, 0, "no image '%s' (see 'sbxrun image ls')", name);
}

/* Same inode still under its digest: an `image rm` did not move it away
 * between our lookup and our lock. */
static bool still_there(int storefd, const char *digest, int dirfd)
{
	struct stat a, b;
	return fstat(dirfd, &a) == 0 && fstatat(storefd, digest, &b, AT_SYMLINK_NOFOLLOW) == 0 &&
	       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int store_image_trylock(int dirfd)
{
	struct sbx_err ignore = { 0 };
	int fd = lock_open_at(dirfd, STORE_IMAGE_LOCK, &ignore);

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The use-lock is a lock file inside the image's directory, not the
 * directory itself: a system image's directory (0755) is open to every
 * user, its lock file to root alone. */
static int use_lock(int dirfd, const char *dirpath, const char *name, struct sbx_err *err)
{
	_cleanup_free_ char *what = xasprintf("%s/" STORE_IMAGE_LOCK, dirpath);
	int fd = lock_open_at(dirfd, STORE_IMAGE_LOCK, err);

	if (fd < 0)
		return err_wrap(err, "image '%s'", name);
	/* an exclusive holder is removing it, or making it again (import.c) */
	if (lock_wait(fd, LOCK_SH, what, LOCK_DEADLINE_LONG_S, err) < 0) {
		close(fd);
		return err_wrap(err, "image '%s'", name);
	}
	return fd;
}

static int open_locked_image(const struct store_ref *ref, const char *name, const char *digest,
			     struct sbx_image *img, struct sbx_err *err)
{
	struct sbx_meta m;
	_cleanup_free_ char *dirpath = xasprintf("%s/%s", ref->path, digest);
	_cleanup_close_ int dirfd = openat(ref->fd, digest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);

	if (dirfd < 0)
		return err_sys(err, "image '%s': open '%s'", name, dirpath);
	img->use_lock_fd = use_lock(dirfd, dirpath, name, err);
	if (img->use_lock_fd < 0)
		return -1;
	if (!still_there(ref->fd, digest, dirfd))
		return err_set(err, 0, "image '%s' was removed", name);
	img->rootfs_fd = openat(dirfd, "rootfs", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (img->rootfs_fd < 0)
		return err_sys(err, "image '%s': open its rootfs", name);
	if (store_meta_read(dirfd, &m, err) < 0)
		return err_wrap(err, "image '%s'", name);
	img->name = xstrdup(name);
	img->digest = xstrdup(digest);
	img->dir = steal_ptr(dirpath);
	img->env = steal_ptr(m.env);
	img->apt_hosts = steal_ptr(m.apt_hosts);
	img->npm_registry = steal_ptr(m.npm_registry);
	img->pypi_index = steal_ptr(m.pypi_index);
	img->go_proxy = steal_ptr(m.go_proxy);
	img->go_sumdb = steal_ptr(m.go_sumdb);
	img->cargo_index = steal_ptr(m.cargo_index);
	img->maven_repo = steal_ptr(m.maven_repo);
	img->size = m.size;
	store_meta_free(&m);
	return 0;
}

int store_image_where(const char *name, char digest[SBX_DIGEST_HEX + 1], struct sbx_err *err)
{
	struct store_ref refs[2];
	int which = 0;

	if (open_stores(refs, err) < 0)
		return -1;
	int r = find_image(refs, name, &which, digest, err);
	close_stores(refs);
	return r < 0 ? -1 : which;
}

int store_image_open(const char *name, struct sbx_image *img, struct sbx_err *err)
{
	struct store_ref refs[2];
	char digest[SBX_DIGEST_HEX + 1];
	int which, r;

	*img = (struct sbx_image){ .rootfs_fd = -1, .use_lock_fd = -1 };
	if (open_stores(refs, err) < 0)
		return -1;
	r = find_image(refs, name, &which, digest, err);
	/* A system image's files are the uid root's sandboxes map to, which a
	 * user's namespace cannot map: overlayfs refuses every copy-up and
	 * every new file in its directories. A user runs a copy of their own,
	 * made before (import_image_open). */
	if (r == 0 && which == 1 && geteuid() != 0) {
		if (refs[0].fd >= 0 && faccessat(refs[0].fd, digest, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			which = 0;
		else
			r = err_set(err, 0, "image '%s' is the system store's and you have no copy of it "
				    "yet (it was replaced meanwhile?): run again", name);
	}
	if (r == 0)
		r = open_locked_image(&refs[which], name, digest, img, err);
	close_stores(refs);
	if (r < 0)
		store_image_close(img);
	return r;
}

void store_image_close(struct sbx_image *img)
{
	if (img->rootfs_fd >= 0)
		close(img->rootfs_fd);
	if (img->use_lock_fd >= 0)
		close(img->use_lock_fd); /* releases the use-lock */
	free(img->name);
	free(img->digest);
	free(img->dir);
	imgmeta_list_free(img->env);
	imgmeta_list_free(img->apt_hosts);
	free(img->npm_registry);
	free(img->pypi_index);
	free(img->go_proxy);
	free(img->go_sumdb);
	free(img->cargo_index);
	free(img->maven_repo);
	*img = (struct sbx_image){ .rootfs_fd = -1, .use_lock_fd = -1 };
}

/* Whether any name still points at digest. */
static bool digest_named(const struct sbx_store *s, const char *digest)
{
	DIR *d = open_dir_at(s->fd, "names");
	char other[SBX_DIGEST_HEX + 1];
	struct sbx_err ignore = { 0 };
	bool found = false;

	if (!d)
		return true; /* unsure: keep the image */
	for (struct dirent *e; !found && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		found = resolve_name(s->fd, e->d_name, other, &ignore) > 0 && !strcmp(other, digest);
	}
	closedir(d);
	return found;
}

/* Whether the system store still names digest (a user's copy of it is kept). */
static bool system_names(const char *digest)
{
	struct sbx_store sys = { .fd = open(SBX_SYSTEM_STORE, O_RDONLY | O_DIRECTORY | O_CLOEXEC) };
	bool named = sys.fd >= 0 && digest_named(&sys, digest);

	if (sys.fd >= 0)
		close(sys.fd);
	return named;
}

/* Moved aside first so an interrupted removal leaves a staging leftover
 * (cleaned at the next lock), never a half image under its digest. */
static int remove_digest(const struct sbx_store *s, const char *digest, struct sbx_err *err)
{
	uint32_t rnd = 0;
	char aside[64];

	(void)!getrandom(&rnd, sizeof(rnd), 0);
	snprintf(aside, sizeof(aside), STAGING_PREFIX "rm-%08x", rnd);
	if (renameat2(s->fd, digest, s->fd, aside, RENAME_NOREPLACE) < 0)
		return err_sys(err, "rename '%s' in '%s'", digest, s->path);
	return rm_rf_at(s->fd, aside, err);
}

static int remove_locked(const struct sbx_store *s, const char *name, const char *digest,
			 struct sbx_err *err)
{
	_cleanup_close_ int dirfd = openat(s->fd, digest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
	_cleanup_free_ char *path = xasprintf("names/%s", name);
	_cleanup_close_ int lock = dirfd < 0 ? -1 : store_image_trylock(dirfd);

	if (dirfd >= 0 && lock < 0)
		return err_set(err, 0, "image '%s' is in use by a running sandbox", name);
	if (unlinkat(s->fd, path, 0) < 0)
		return err_sys(err, "remove '%s/%s'", s->path, path);
	if (dirfd >= 0 && !digest_named(s, digest) && remove_digest(s, digest, err) < 0)
		return err_wrap(err, "image '%s'", name);
	return 0;
}

int store_remove(const char *name, struct sbx_err *err)
{
	struct sbx_store s;
	char digest[SBX_DIGEST_HEX + 1];
	int r;

	if (store_name_check(name, err) < 0 || store_open_locked(&s, err) < 0)
		return -1;
	r = resolve_name(s.fd, name, digest, err);
	if (r == 0) {
		struct sbx_err e2 = { 0 };
		bool sys = false;
		_cleanup_close_ int sfd = open(SBX_SYSTEM_STORE, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sfd >= 0)
			sys = resolve_name(sfd, name, digest, &e2) > 0;
		r = sys ? err_set(err, 0, "image '%s' is in the system store %s (read-only)", name,
				  SBX_SYSTEM_STORE)
			: err_set(err, 0, "no image '%s' (see 'sbxrun image ls')", name);
	} else if (r > 0 && (r = remove_locked(&s, name, digest, err)) == 0) {
		log_info("removed image '%s'", name);
	}
	store_close(&s);
	return r;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The names of one store, sorted. */
static char **list_names(int storefd)
{
	DIR *d = open_dir_at(storefd, "names");
	struct sbx_list l = { 0 };

	if (d) {
		for (struct dirent *e; (e = readdir(d));)
			if (e->d_name[0] != '.')
				imgmeta_list_add(&l, e->d_name, strlen(e->d_name));
		closedir(d);
	}
	if (l.n)
		qsort(l.v, l.n, sizeof(*l.v), cmp_str);
	return l.v;
}

/* The metadata of the image that NAME points at in one store. */
static int meta_of(int storefd, const char *name, struct sbx_meta *m, struct sbx_err *err)
{
	char digest[SBX_DIGEST_HEX + 1];
	int r = resolve_name(storefd, name, digest, err);

	if (r <= 0)
		return r < 0 ? -1 : err_set(err, ENOENT, "image '%s'", name);
	_cleanup_close_ int dirfd = openat(storefd, digest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
	if (dirfd < 0)
		return err_sys(err, "image '%s': open '%s'", name, digest);
	if (store_meta_read(dirfd, m, err) < 0)
		return err_wrap(err, "image '%s'", name);
	free(m->digest);
	m->digest = xstrdup(digest);
	return 0;
}

int store_list(store_list_fn fn, void *arg, struct sbx_err *err)
{
	struct store_ref refs[2];

	if (open_stores(refs, err) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		char **names = refs[i].fd >= 0 ? list_names(refs[i].fd) : NULL;
		for (char **n = names; n && *n; n++) {
			struct sbx_meta m;
			struct sbx_err e = { 0 };
			if (meta_of(refs[i].fd, *n, &m, &e) < 0) {
				log_warn("%s", e.msg);
				continue;
			}
			fn(*n, &m, refs[i].where, arg);
			store_meta_free(&m);
		}
		imgmeta_list_free(names);
	}
	close_stores(refs);
	return 0;
}

int store_inspect(const char *name, struct sbx_meta *m, const char **where, struct sbx_err *err)
{
	struct store_ref refs[2];
	char digest[SBX_DIGEST_HEX + 1];
	int which, r;

	if (open_stores(refs, err) < 0)
		return -1;
	r = find_image(refs, name, &which, digest, err);
	if (r == 0)
		r = meta_of(refs[which].fd, name, m, err);
	if (r == 0)
		*where = refs[which].where;
	close_stores(refs);
	return r;
}
