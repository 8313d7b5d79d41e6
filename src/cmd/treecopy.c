/* treecopy.c - see treecopy.h. Moved out of cp_cmd.c (issue 26's
 * hardened copy-out) so that run --copy and --out use the same code. */
#define _GNU_SOURCE
#include "cmd/treecopy.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/inroot.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/util.h"

#define MAX_DEPTH 128

static int copy_tree(struct sbx_treecopy *c, int sdir, const char *sname, int ddir, const char *dname,
		     int depth, struct sbx_err *err);

/* A signal the caller blocked (SIGINT, SIGTERM, SIGHUP) is pending: the
 * copy ends here, and the caller removes what it made before the signal
 * is delivered. */
static bool stopped(const struct sbx_treecopy *c, struct sbx_err *err)
{
	sigset_t pending;

	if (!c->stop || sigpending(&pending) < 0)
		return false;
	for (int sig = 1; sig < NSIG; sig++)
		if (sigismember(c->stop, sig) == 1 && sigismember(&pending, sig) == 1) {
			err_set(err, EINTR, "%s: interrupted by signal %d", c->what, sig);
			return true;
		}
	return false;
}

static bool all_zero(const char *buf, size_t n)
{
	return n == 0 || (buf[0] == 0 && memcmp(buf, buf + 1, n - 1) == 0);
}

static int pwrite_all(int fd, const char *buf, size_t n, off_t at)
{
	while (n > 0) {
		ssize_t k = pwrite(fd, buf, n, at);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		buf += k, n -= (size_t)k, at += k;
	}
	return 0;
}

/* Copies [from, to) of in to out at the same offsets; zero blocks stay
 * holes, every byte read counts toward the cap. *end: where the source
 * ended if it shrank; *wrote: the end of the last data written. */
static int copy_range(struct sbx_treecopy *c, int in, int out, off_t from, off_t to, off_t *end,
		      off_t *wrote, struct sbx_err *err)
{
	static char buf[1 << 17];

	for (off_t pos = from; pos < to;) {
		if (stopped(c, err))
			return -1;
		size_t want = (size_t)(to - pos) < sizeof(buf) ? (size_t)(to - pos) : sizeof(buf);
		ssize_t n = pread(in, buf, want, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_sys(err, "%s: read '%s'", c->what, c->path);
		if (n == 0) {
			*end = pos;
			return 0;
		}
		if (c->cap.max && c->used + (uint64_t)n > c->cap.max)
			return copycap_exceeded(&c->cap, c->what, c->path, err);
		c->used += (uint64_t)n;
		if (!all_zero(buf, (size_t)n)) {
			if (pwrite_all(out, buf, (size_t)n, pos) < 0)
				return err_sys(err, "%s: write '%s'", c->what, c->path);
			*wrote = pos + n;
		}
		pos += n;
	}
	return 0;
}

/* The data regions of in (SEEK_DATA/SEEK_HOLE; all of it where the
 * filesystem cannot say), up to size as it was when listed, into the new
 * empty file out. */
static int copy_sparse(struct sbx_treecopy *c, int in, int out, off_t size, struct sbx_err *err)
{
	off_t pos = 0, end = size, wrote = 0;

	while (pos < end) {
		off_t data = lseek(in, pos, SEEK_DATA), hole;
		if (data < 0 && errno == ENXIO)
			break; /* a hole to the end */
		if (data < 0)
			data = pos, hole = end;
		else if ((hole = lseek(in, data, SEEK_HOLE)) < 0 || hole > end)
			hole = end;
		if (data >= end)
			break;
		if (copy_range(c, in, out, data, hole, &end, &wrote, err) < 0)
			return -1;
		pos = hole;
	}
	/* a hole at the end is a size the writes did not give */
	if (wrote != end && ftruncate(out, end) < 0)
		return err_sys(err, "%s: write '%s'", c->what, c->path);
	return 0;
}

/* A regular file out of the session onto the host: an atomic host file,
 * never through a symlink at the destination; in treecopy_out_dir's
 * private directory, which becomes visible only whole, a new file made
 * there directly. */
static int file_out(struct sbx_treecopy *c, int in, const struct stat *st, int ddir, const char *dname,
		    struct sbx_err *err)
{
	_cleanup_hostfile_ struct sbx_hostfile hf = { 0 };

	if (c->direct) {
		_cleanup_close_ int out = openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
						 O_CLOEXEC, st->st_mode & 0777);
		if (out < 0)
			return err_sys(err, "%s: create '%s'", c->what, c->path);
		return copy_sparse(c, in, out, st->st_size, err);
	}
	if (hostfile_open(&hf, ddir, dname, st->st_mode & 0777, err) < 0)
		return err_wrap(err, "%s", c->what);
	if (copy_sparse(c, in, hf.fd, st->st_size, err) < 0)
		return -1;
	return hostfile_commit(&hf, true, err) < 0 ? err_wrap(err, "%s", c->what) : 0;
}

static int copy_file(struct sbx_treecopy *c, int sdir, const char *sname, int ddir, const char *dname,
		     struct sbx_err *err)
{
	_cleanup_close_ int in = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat now;

	if (in < 0 || fstat(in, &now) < 0 || !S_ISREG(now.st_mode))
		return err_sys(err, "'%s'", sname);
	if (!c->into)
		return file_out(c, in, &now, ddir, dname, err);
	paths_as_sandbox_owner(1);
	long long n = inroot_write_from(ddir, dname, in, now.st_mode & 0777, err);
	paths_as_sandbox_owner(0);
	return n < 0 ? -1 : 0;
}

static int copy_entries(struct sbx_treecopy *c, int sfd, int dfd, int depth, struct sbx_err *err)
{
	size_t len = strlen(c->path);
	int fd = dup(sfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	int r = 0;

	if (!d)
		return err_sys(err, "read directory");
	while (r == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(c->path + len, sizeof(c->path) - len, "/%s", e->d_name);
		r = copy_tree(c, sfd, e->d_name, dfd, e->d_name, depth + 1, err);
	}
	c->path[len] = '\0';
	closedir(d);
	return r;
}

/* Copies sdir/sname to ddir/dname, without following symlinks on either
 * side. */
static int copy_tree(struct sbx_treecopy *c, int sdir, const char *sname, int ddir, const char *dname,
		     int depth, struct sbx_err *err)
{
	int into = c->into;
	struct stat st;
	char link[4096];

	if (stopped(c, err))
		return -1;
	if (depth > MAX_DEPTH)
		return err_set(err, 0, "%s: '%s': deeper than %d levels", c->what, c->path, MAX_DEPTH);
	if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(err, "'%s'", sname);
	if (S_ISREG(st.st_mode))
		return copy_file(c, sdir, sname, ddir, dname, err);
	if (S_ISLNK(st.st_mode)) {
		ssize_t n = readlinkat(sdir, sname, link, sizeof(link) - 1);
		if (n < 0)
			return err_sys(err, "readlink '%s'", sname);
		link[n] = '\0';
		paths_as_sandbox_owner(into);
		int r = symlinkat(link, ddir, dname);
		paths_as_sandbox_owner(0);
		return r < 0 && errno != EEXIST ? err_sys(err, "symlink '%s'", dname) : 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		log_warn("%s: skipped '%s' (not a file, directory or symlink)", c->what, c->path);
		return 0;
	}
	paths_as_sandbox_owner(into);
	int made = mkdirat(ddir, dname, 0755);
	paths_as_sandbox_owner(0);
	if (made < 0 && errno != EEXIST)
		return err_sys(err, "mkdir '%s'", dname);
	_cleanup_close_ int sfd = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int dfd = openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (sfd < 0 || dfd < 0)
		return err_sys(err, "'%s'", sfd < 0 ? sname : dname);
	if (copy_entries(c, sfd, dfd, depth, err) < 0)
		return -1;
	if (made < 0)
		return 0; /* merged into a directory that was there: its mode stays */
	/* the source's mode once its entries are in (a read-only directory
	 * too); out on the host its owner keeps every right over it */
	mode_t mode = (st.st_mode & 0777) | (into ? 0 : 0700);
	paths_as_sandbox_owner(into);
	int r = fchmod(dfd, mode);
	paths_as_sandbox_owner(0);
	return r < 0 ? err_sys(err, "chmod '%s'", dname) : 0;
}

int treecopy(struct sbx_treecopy *c, int sdir, const char *sname, int ddir, const char *dname,
	     struct sbx_err *err)
{
	if (!c->what)
		c->what = "cp";
	return copy_tree(c, sdir, sname, ddir, dname, 0, err);
}

/* The finished copy, durable (data, then the name: a crash leaves either
 * no directory at path or all of it), becomes path. */
static int out_commit(struct sbx_treecopy *c, struct sbx_hostdir *d, const char *path, mode_t mode,
		      bool over_empty, struct sbx_err *err)
{
	if (fchmod(d->fd, mode) < 0)
		return err_sys(err, "%s '%s'", c->what, path);
	if (syncfs(d->fd) < 0)
		return err_sys(err, "%s: write '%s'", c->what, path);
	int r = over_empty ? renameat(d->parent, d->name, AT_FDCWD, path)
			   : renameat2(d->parent, d->name, AT_FDCWD, path, RENAME_NOREPLACE);
	if (r < 0 && !over_empty && errno == EINVAL) /* a filesystem without RENAME_NOREPLACE */
		r = renameat(d->parent, d->name, AT_FDCWD, path);
	if (r < 0)
		return err_sys(err, "%s '%s'%s", c->what, path, errno == ENOTEMPTY || errno == EEXIST
			       ? ": something was put there while the copy ran" : "");
	free(steal_ptr(d->name)); /* it is path now: not to be removed */
	return 0;
}

int treecopy_out_dir(struct sbx_treecopy *c, int sfd, const char *path, mode_t mode, bool over_empty,
		     struct sbx_err *err)
{
	struct sbx_hostdir d = { 0 };
	struct sbx_err e2;

	if (!c->what)
		c->what = "cp";
	if (hostfile_dir_make(&d, path, err) < 0)
		return err_wrap(err, "%s", c->what);
	_cleanup_close_ int src = openat(sfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	c->direct = 1;
	int r = src < 0 ? err_sys(err, "%s: '%s'", c->what, c->path) : copy_entries(c, src, d.fd, 0, err);
	c->direct = 0;
	if (r == 0)
		r = out_commit(c, &d, path, mode, over_empty, err);
	if (r != 0 && d.name)
		rm_rf_at(d.parent, d.name, &e2); /* a tree: hostdir removes files only */
	hostfile_dir_remove(&d);
	return r == 0 ? 0 : -1;
}

