/* import.c - rootfs tarballs into the image store: unpacked (store/unpack.c)
 * by a child as the sandbox's host uid into a staging directory that becomes
 * the image only when every entry went in, with its metadata, under the
 * store's lock. OCI layouts and docker-archives go through
 * store/oci_import.c, whose layers are unpacked the same way. */
#define _GNU_SOURCE
#include "store/discover.h"
#include "store/import.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <locale.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/lazylib.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/util.h"
#include "store/digest.h"
#include "store/imgmeta.h"
#include "store/oci_import.h"
#include "store/store.h"

/* What the extraction child sends back over its pipe. */
struct child_report {
	int rc;
	struct sbx_import_stats stats;
	struct sbx_err err;
};

/* Runs in the forked child: as root it first becomes the sandbox's host uid,
 * so every file it creates belongs to that uid and no chown is needed. */
static void child_extract(int archive_fd, int stagingfd, int report_fd)
{
	struct child_report rep = { .rc = -1 };
	_cleanup_close_ int rootfd = -1;
	uid_t uid = paths_root_host_id();

	umask(022);
	/* Entered while still root: the caller's working directory may be closed
	 * to the uid we become, and import_extract_fd returns to it. */
	if (fchdir(stagingfd) < 0) {
		err_sys(&rep.err, "enter the staging directory");
		goto out;
	}
	if (geteuid() == 0 && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
			       setresuid(uid, uid, uid) < 0)) {
		err_sys(&rep.err, "switch to uid %u", (unsigned)uid);
		goto out;
	}
	if (mkdirat(stagingfd, "rootfs", 0755) < 0) {
		err_sys(&rep.err, "mkdir 'rootfs' in the staging directory");
		goto out;
	}
	rootfd = openat(stagingfd, "rootfs", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (rootfd < 0) {
		err_sys(&rep.err, "open 'rootfs' in the staging directory");
		goto out;
	}
	int kind = oci_import_detect(archive_fd, &rep.err);
	if (kind == OCI_IMPORT_PLAIN)
		rep.rc = import_extract_fd(archive_fd, rootfd, &import_default_limits, &rep.stats, &rep.err);
	else if (kind > 0)
		rep.rc = oci_import_layers(archive_fd, kind, stagingfd, rootfd, &import_default_limits,
					   &rep.stats, &rep.err);
out:
	(void)!write_all(report_fd, &rep, sizeof(rep));
	_exit(0);
}

static int extract_forked(int archive_fd, int stagingfd, struct sbx_import_stats *stats,
			  struct sbx_err *err)
{
	struct child_report rep;
	int p[2], status;
	ssize_t n;

	/* here, so that a missing libarchive is one line, not a child's death */
	if (lazylib_load(SBX_LIBARCHIVE, err) < 0)
		return -1;
	if (pipe2(p, O_CLOEXEC) < 0)
		return err_sys(err, "pipe");
	pid_t pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return err_sys(err, "fork");
	}
	if (pid == 0) {
		close(p[0]);
		child_extract(archive_fd, stagingfd, p[1]);
	}
	close(p[1]);
	do
		n = read(p[0], &rep, sizeof(rep));
	while (n < 0 && errno == EINTR);
	close(p[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n != (ssize_t)sizeof(rep) && WIFEXITED(status))
		return err_plain(err, 0, "the extracting process failed with exit status %d%s",
				 WEXITSTATUS(status), WEXITSTATUS(status) == 125 ? " (its error is above)" : "");
	if (n != (ssize_t)sizeof(rep))
		return err_plain(err, 0, "the extracting process was killed by signal %d",
				 WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	*stats = rep.stats;
	if (rep.rc < 0) {
		*err = rep.err;
		return -1;
	}
	return 0;
}

/* Reads the image's own files and writes meta.json into the staging dir. */
static int write_meta(int stagingfd, const char *file, const char *source, const char *name,
		      const char *digest, const struct sbx_import_stats *st, struct sbx_err *err)
{
	struct sbx_list env = { 0 }, hosts = { 0 }, dropped = { 0 };
	char abs[4096];
	struct sbx_meta m = {
		.name = (char *)name, .digest = (char *)digest, .source = (char *)file,
		.npm_registry = (char *)"", .pypi_index = (char *)"",
		.size = st->bytes, .created = (int64_t)time(NULL),
	};
	_cleanup_close_ int rootfd = openat(stagingfd, "rootfs", O_PATH | O_DIRECTORY |
					    O_NOFOLLOW | O_CLOEXEC);
	int r = -1;

	if (source)
		m.source = (char *)source;
	else if (realpath(file, abs))
		m.source = abs;
	if (rootfd < 0)
		return err_sys(err, "open 'rootfs'");
	if (imgmeta_read(rootfd, &env, &hosts, err) < 0)
		goto out;
	imgmeta_vet_sources(&hosts, &dropped);
	for (size_t i = 0; i < dropped.n; i++)
		log_warn("image '%s': package source left out (an image may not grant it): %s",
			 name, dropped.v[i]);
	m.env = env.v;
	m.apt_hosts = hosts.v;
	m.dropped = dropped.v;
	r = store_meta_write(stagingfd, &m, err);
out:
	imgmeta_list_free(env.v);
	imgmeta_list_free(hosts.v);
	imgmeta_list_free(dropped.v);
	return r;
}

/* Copies the file on fd (from its start) to dirfd/name, 0644. */
static int copy_archive(int fd, int dirfd, const char *name, struct sbx_err *err)
{
	_cleanup_close_ int out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					 O_CLOEXEC, 0644);
	char buf[1 << 16];
	off_t off = 0;
	ssize_t n;

	if (out < 0 || fchmod(out, 0644) < 0)
		return err_sys(err, "create '%s'", name);
	/* extents shared where the file system can, a plain copy elsewhere */
	while ((n = copy_file_range(fd, &off, out, NULL, 1 << 30, 0)) > 0)
		;
	if (n < 0 && off == 0 && (errno == EXDEV || errno == EINVAL || errno == ENOSYS ||
				  errno == EOPNOTSUPP))
		while ((n = pread(fd, buf, sizeof(buf), off)) > 0 && write_all(out, buf, (size_t)n) == 0)
			off += n;
	if (n < 0 || fsync(out) < 0)
		return err_sys(err, "copy the imported file to '%s'", name);
	return 0;
}

/* A system image: the archive users unpack their copies from; the rootfs
 * that root's sandboxes use closed to others (its world-writable /tmp must
 * not be a place every user can write to). */
static int system_parts(int fd, int sfd, struct sbx_err *err)
{
	if (fchmodat(sfd, "rootfs", 0700, 0) < 0)
		return err_sys(err, "chmod 'rootfs'");
	return copy_archive(fd, sfd, STORE_SYSTEM_ARCHIVE, err);
}

static int import_new(const struct sbx_store *s, int fd, const char *file, const char *source,
		      const char *name, const char *digest, struct sbx_err *err)
{
	_cleanup_free_ char *staging = NULL;
	_cleanup_close_ int sfd = -1;
	struct sbx_import_stats st = { 0 };
	struct sbx_err ignore = { 0 };

	if (lseek(fd, 0, SEEK_SET) < 0)
		return err_sys(err, "seek '%s'", file);
	if (store_staging_new(s, paths_sandbox_host_uid(), &staging, &sfd, err) < 0)
		return -1;
	if (extract_forked(fd, sfd, &st, err) < 0 ||
	    write_meta(sfd, file, source, name, digest, &st, err) < 0 ||
	    (s->system && system_parts(fd, sfd, err) < 0) ||
	    store_staging_commit(s, staging, digest, err) < 0) {
		if (rm_rf_at(s->fd, staging, &ignore) < 0)
			log_warn("could not remove '%s/%s': %s", s->path, staging, ignore.msg);
		return -1;
	}
	log_verbose("extracted %llu entries, %llu bytes; skipped %llu device nodes/FIFOs/sockets; "
		    "stripped setuid/setgid from %llu", (unsigned long long)st.entries,
		    (unsigned long long)st.bytes, (unsigned long long)st.skipped,
		    (unsigned long long)st.suid_stripped);
	return 0;
}

/* A system image imported before the store kept its archive is made again. */
static bool has_archive(const struct sbx_store *s, const char *digest)
{
	_cleanup_free_ char *path = xasprintf("%s/" STORE_SYSTEM_ARCHIVE, digest);
	struct stat st;

	if (fstatat(s->fd, path, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return true;
	_cleanup_close_ int dirfd = openat(s->fd, digest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC);
	struct sbx_err ignore = { 0 };
	_cleanup_close_ int lock = dirfd < 0 ? -1 : store_image_trylock(dirfd);
	if (lock < 0)
		return true; /* in use: kept as it is */
	log_verbose("image %.12s has no archive for users' copies: made again", digest);
	(void)rm_rf_at(s->fd, digest, &ignore);
	return false;
}

static int import_locked(const struct sbx_store *s, int fd, const char *file, const char *source,
			 const char *name, struct sbx_err *err)
{
	char digest[SBX_DIGEST_HEX + 1];
	bool hit;

	if (digest_cached(s->cache_fd, fd, digest, &hit, err) < 0)
		return err_wrap(err, "digest of '%s'", file);
	log_verbose("sha256 of '%s': %s (%s)", file, digest, hit ? "digest cache hit" : "computed");
	if (store_has_digest(s, digest) && (!s->system || has_archive(s, digest)))
		log_verbose("image %.12s is already in the store", digest);
	else if (import_new(s, fd, file, source, name, digest, err) < 0)
		return err_wrap(err, "import '%s'", file);
	if (store_name_set(s, name, digest, err) < 0)
		return -1;
	if (source)
		log_info("imported %s as %s (%.12s)", source, name, digest);
	else
		log_info("imported '%s' as %s (%.12s)", file, name, digest);
	return 0;
}

/* "debian-12.tar.zst" -> "debian-12". */
static char *name_from_file(const char *file)
{
	static const char *const suffixes[] = { ".tar.gz", ".tar.xz", ".tar.zst", ".tgz", ".tar" };
	const char *base = strrchr(file, '/');
	char *n = xstrdup(base ? base + 1 : file);
	size_t len = strlen(n);

	for (size_t i = 0; i < ARRAY_SIZE(suffixes); i++) {
		size_t sl = strlen(suffixes[i]);
		if (len > sl && strcmp(n + len - sl, suffixes[i]) == 0) {
			n[len - sl] = '\0';
			break;
		}
	}
	return n;
}

int import_file(const char *file, const char *name, const char *source, bool system,
		struct sbx_err *err)
{
	_cleanup_free_ char *derived = NULL;
	_cleanup_close_ int fd = -1;
	struct sbx_store s;
	struct stat st;

	if (!name)
		name = derived = name_from_file(file);
	if (store_name_check(name, err) < 0)
		return derived ? err_wrap(err, "'%s' (use --name)", file) : -1;
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return err_sys(err, "open '%s'", file);
	if (fstat(fd, &st) < 0)
		return err_sys(err, "stat '%s'", file);
	if (!S_ISREG(st.st_mode))
		return err_set(err, 0, "'%s' is not a regular file", file);
	if ((system ? store_open_system_locked(&s, err) : store_open_locked(&s, err)) < 0)
		return -1;
	int r = import_locked(&s, fd, file, source, name, err);
	store_close(&s);
	if (r == 0 && discover_sources(name, system, err) < 0)
		log_warn("image '%s': could not ask its npm and pip for their sources: %s", name, err->msg);
	return r;
}

/* The system store's part that a user's copy is made from: root's and
 * writable by no one else, or not used at all. */
static int check_root_owned(int fd, const char *path, struct sbx_err *err)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err_sys(err, "stat '%s'", path);
	if (st.st_uid != 0 || (st.st_mode & 022))
		return err_set(err, 0, "'%s' is not root's alone (owner %u, mode %04o): the system "
			       "store is not used", path, (unsigned)st.st_uid,
			       (unsigned)(st.st_mode & 07777));
	return 0;
}

static int copy_new(const struct sbx_store *s, int sysdir, const char *sysdirpath,
		    const char *digest, struct sbx_err *err)
{
	_cleanup_free_ char *staging = NULL, *apath = xasprintf("%s/" STORE_SYSTEM_ARCHIVE,
								 sysdirpath);
	_cleanup_close_ int sfd = -1, marker = -1, afd = openat(sysdir, STORE_SYSTEM_ARCHIVE,
							       O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct sbx_import_stats st = { 0 };
	struct sbx_meta m = { 0 };
	struct sbx_err ignore = { 0 };
	int r = -1;

	if (afd < 0)
		return err_sys(err, "open '%s' (root: import the image again with "
			       "'sbxrun image import --system')", apath);
	if (check_root_owned(afd, apath, err) < 0 || store_meta_read(sysdir, &m, err) < 0 ||
	    store_staging_new(s, paths_sandbox_host_uid(), &staging, &sfd, err) < 0)
		goto out;
	marker = openat(sfd, STORE_SYSTEM_COPY, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (marker < 0) {
		err_sys(err, "create '%s'", STORE_SYSTEM_COPY);
		goto fail;
	}
	if (extract_forked(afd, sfd, &st, err) < 0 || store_meta_write(sfd, &m, err) < 0 ||
	    store_staging_commit(s, staging, digest, err) < 0)
		goto fail;
	r = 0;
	goto out;
fail:
	if (rm_rf_at(s->fd, staging, &ignore) < 0)
		log_warn("could not remove '%s/%s': %s", s->path, staging, ignore.msg);
out:
	store_meta_free(&m);
	return r;
}

int import_system_copy(int sysfd, const char *syspath, const char *name, const char *digest,
		       struct sbx_err *err)
{
	_cleanup_free_ char *dirpath = xasprintf("%s/%s", syspath, digest);
	_cleanup_close_ int dir = openat(sysfd, digest, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					 O_CLOEXEC);
	struct sbx_store s;
	struct timespec t0, t1;
	int r = 0;

	if (dir < 0)
		return err_sys(err, "image '%s': open '%s'", name, dirpath);
	if (check_root_owned(sysfd, syspath, err) < 0 || check_root_owned(dir, dirpath, err) < 0)
		return err_wrap(err, "image '%s'", name);
	if (store_open_locked(&s, err) < 0)
		return -1;
	if (!store_has_digest(&s, digest)) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		log_info("image '%s' is the system store's: unpacking a copy of your own into %s "
			 "(once)", name, s.path);
		r = copy_new(&s, dir, dirpath, digest, err);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (r == 0)
			log_verbose("copy of image '%s' made in %.1f s", name,
				    (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		else
			err_wrap(err, "image '%s': your copy of the system image", name);
	}
	store_close(&s);
	return r;
}

int import_image_open(const char *name, struct sbx_image *img, struct sbx_err *err)
{
	char digest[SBX_DIGEST_HEX + 1];
	int where = store_image_where(name, digest, err);

	if (where < 0)
		return -1;
	if (where == 1 && geteuid() != 0) {
		_cleanup_close_ int sysfd = open(SBX_SYSTEM_STORE, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (sysfd < 0)
			return err_sys(err, "image '%s': open '%s'", name, SBX_SYSTEM_STORE);
		if (import_system_copy(sysfd, SBX_SYSTEM_STORE, name, digest, err) < 0)
			return -1;
	}
	return store_image_open(name, img, err);
}
