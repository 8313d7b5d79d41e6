/* cp_cmd.c - `sbxrun cp SRC DST`, with SESSION:PATH on one side: files and
 * directories between the host and a live session. Inside the session every
 * step goes by fd below the session's root and refuses symlinks, so nothing
 * the sandbox planted is followed; writes go to a temporary name first. Out
 * of a session, holes stay holes and the data written is capped (copycap.c):
 * a sparse file cannot fill the host's disk. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hostfile.h"
#include "base/inroot.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/relpath.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/copycap.h"
#include "session/session_client.h"

static const char usage[] =
	"usage: sbxrun cp [--max-size SIZE] SESSION:PATH HOSTPATH\n"
	"       sbxrun cp HOSTPATH SESSION:PATH\n"
	"Copies files and directories between the host and a live session. An\n"
	"absolute PATH is inside the session, a relative one in its workspace.\n"
	"Out of a session, sparse files stay sparse and at most SIZE bytes of data\n"
	"are written (default: the session's disk quota plus its image).\n";

#define MAX_DEPTH 128

struct cp_ctx {
	int into;                 /* the destination is the sandbox (written as its owner) */
	struct sbx_copycap cap;   /* out of the sandbox: the most data to write */
	uint64_t used;
	char path[4096];          /* the source entry being copied, for messages */
};

static int copy_tree(struct cp_ctx *c, int sdir, const char *sname, int ddir, const char *dname,
		     int depth, struct sbx_err *err);

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
 * ended if it shrank. */
static int copy_range(struct cp_ctx *c, int in, int out, off_t from, off_t to, off_t *end,
		      struct sbx_err *err)
{
	static char buf[1 << 17];

	for (off_t pos = from; pos < to;) {
		size_t want = (size_t)(to - pos) < sizeof(buf) ? (size_t)(to - pos) : sizeof(buf);
		ssize_t n = pread(in, buf, want, pos);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_sys(err, "cp: read '%s'", c->path);
		if (n == 0) {
			*end = pos;
			return 0;
		}
		if (c->cap.max && c->used + (uint64_t)n > c->cap.max)
			return copycap_exceeded(&c->cap, "cp", c->path, err);
		c->used += (uint64_t)n;
		if (!all_zero(buf, (size_t)n) && pwrite_all(out, buf, (size_t)n, pos) < 0)
			return err_sys(err, "cp: write '%s'", c->path);
		pos += n;
	}
	return 0;
}

/* The data regions of in (SEEK_DATA/SEEK_HOLE; all of it where the
 * filesystem cannot say), up to size as it was when listed. */
static int copy_sparse(struct cp_ctx *c, int in, int out, off_t size, struct sbx_err *err)
{
	off_t pos = 0, end = size;

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
		if (copy_range(c, in, out, data, hole, &end, err) < 0)
			return -1;
		pos = hole;
	}
	return ftruncate(out, end) < 0 ? err_sys(err, "cp: write '%s'", c->path) : 0;
}

/* A regular file out of the session onto the host: an atomic host file,
 * never through a symlink at the destination. */
static int file_out(struct cp_ctx *c, int in, const struct stat *st, int ddir, const char *dname,
		    struct sbx_err *err)
{
	_cleanup_hostfile_ struct sbx_hostfile hf = { 0 };

	if (hostfile_open(&hf, ddir, dname, st->st_mode & 0777, err) < 0)
		return err_wrap(err, "cp");
	if (copy_sparse(c, in, hf.fd, st->st_size, err) < 0)
		return -1;
	return hostfile_commit(&hf, true, err) < 0 ? err_wrap(err, "cp") : 0;
}

static int copy_file(struct cp_ctx *c, int sdir, const char *sname, int ddir, const char *dname,
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

static int copy_entries(struct cp_ctx *c, int sfd, int dfd, int depth, struct sbx_err *err)
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
static int copy_tree(struct cp_ctx *c, int sdir, const char *sname, int ddir, const char *dname,
		     int depth, struct sbx_err *err)
{
	int into = c->into;
	struct stat st;
	char link[4096];

	if (depth > MAX_DEPTH)
		return err_set(err, 0, "'%s': deeper than %d levels", sname, MAX_DEPTH);
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
		log_warn("cp: skipped '%s' (not a file, directory or symlink)", sname);
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
	return copy_entries(c, sfd, dfd, depth, err);
}

/* The destination directory and name: into DST when it is a directory. */
static int dest_in_session(int rootfd, const char *path, const char *srcname, int *dir,
			   const char **name, struct sbx_err *err)
{
	struct sbx_err e2;
	int fd = inroot_open(rootfd, path, O_PATH | O_DIRECTORY, 0, &e2);

	if (fd >= 0) {
		*dir = fd;
		*name = srcname;
		return 0;
	}
	*dir = inroot_parent(rootfd, path, name, err);
	return *dir < 0 ? -1 : 0;
}

/* The directory fd PATH is resolved in: the session's root for an absolute
 * PATH, its workspace (as a root: nothing above it) for a relative one,
 * which must not contain '..' (an empty one is the workspace). *rel is
 * PATH as seen from that fd. */
static int session_base(const char *sess, const char *path, const char **rel, struct sbx_err *err)
{
	_cleanup_free_ char *ws = NULL;
	_cleanup_close_ int rootfd = -1;

	if (!path[0])
		path = "."; /* SESSION: is the workspace itself */
	if (path[0] != '/' && relpath_check(path, "cp: PATH", err) < 0)
		return -1;
	if (session_root(sess, &rootfd, &ws, err) < 0)
		return -1;
	*rel = path;
	if (path[0] == '/')
		return steal_fd(rootfd);
	if (!ws[0])
		return err_set(err, 0, "cp: session '%s' has no workspace for '%s'", sess, path);
	int fd = inroot_open(rootfd, ws, O_PATH | O_DIRECTORY, 0, err);
	return fd < 0 ? err_wrap(err, "cp: workspace of session '%s'", sess) : fd;
}

static int to_session(const char *src, const char *sess, const char *path, struct sbx_err *err)
{
	_cleanup_free_ char *copy = xstrdup(src);
	_cleanup_close_ int dir = -1;
	const char *name, *rel;
	_cleanup_close_ int base = session_base(sess, path, &rel, err);

	if (base < 0)
		return -1;
	if (dest_in_session(base, rel, basename(copy), &dir, &name, err) < 0)
		return err_wrap(err, "cp: %s:%s", sess, path);
	_cleanup_free_ char *sdir = xstrdup(src);
	_cleanup_close_ int sfd = open(dirname(sdir), O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return err_sys(err, "cp: '%s'", src);
	struct cp_ctx c = { .into = 1 };
	snprintf(c.path, sizeof(c.path), "%s", src);
	return copy_tree(&c, sfd, basename(copy), dir, name, 0, err);
}

static int from_session(const char *sess, const char *path, const char *dst, const char *max_size,
			struct sbx_err *err)
{
	struct cp_ctx c = { 0 };
	_cleanup_free_ char *d1 = xstrdup(dst), *d2 = xstrdup(dst);
	_cleanup_close_ int sdir = -1, ddir = -1;
	const char *sname, *dname, *rel;
	struct stat st;
	_cleanup_close_ int base = session_base(sess, path, &rel, err);

	if (base < 0)
		return -1;
	sdir = inroot_parent(base, rel, &sname, err);
	if (sdir < 0)
		return err_wrap(err, "cp: %s:%s", sess, path);
	if (stat(dst, &st) == 0 && S_ISDIR(st.st_mode)) {
		ddir = open(dst, O_PATH | O_DIRECTORY | O_CLOEXEC);
		dname = sname;
	} else {
		ddir = open(dirname(d1), O_PATH | O_DIRECTORY | O_CLOEXEC);
		dname = basename(d2);
	}
	if (ddir < 0)
		return err_sys(err, "cp: '%s'", dst);
	if (max_size ? copycap_option(max_size, &c.cap, err) < 0 : (copycap_session(sess, dst, &c.cap), 0))
		return -1;
	snprintf(c.path, sizeof(c.path), "%s:%s", sess, path);
	/* a directory this copy makes goes again if the copy fails (a file
	 * never appears: hostfile) */
	bool fresh = fstatat(ddir, dname, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	if (copy_tree(&c, sdir, sname, ddir, dname, 0, err) == 0)
		return 0;
	struct sbx_err e2;
	if (fresh && fstatat(ddir, dname, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode))
		rm_rf_at(ddir, dname, &e2);
	return -1;
}

/* SESSION:PATH, where SESSION is a plain name (no '/' before the colon:
 * ./a:b is a host path) and PATH absolute in the session, or relative to
 * its workspace. */
static int split(const char *arg, char **sess, const char **path)
{
	const char *colon = strchr(arg, ':');
	const char *slash = strchr(arg, '/');
	if (!colon || colon == arg || (slash && slash < colon))
		return 0;
	*sess = strndup(arg, (size_t)(colon - arg));
	*path = colon + 1;
	return 1;
}

int cmd_cp(int argc, char **argv, struct sbx_err *err)
{
	_cleanup_free_ char *s1 = NULL, *s2 = NULL;
	const char *p1, *p2, *max_size;
	struct cli_args o;
	int r = cli_parse(argc, argv, SBX_CMD_CP, usage, &o, err), rest = o.rest;

	if (r != 0)
		return r < 0 ? -1 : 0;
	max_size = o.v[SBX_K_MAX_SIZE];
	if (argc - rest != 2)
		return err_set(err, 0, "usage: sbxrun cp [--max-size SIZE] SESSION:PATH HOSTPATH | sbxrun cp HOSTPATH SESSION:PATH");
	int a = split(argv[rest], &s1, &p1), b = split(argv[rest + 1], &s2, &p2);
	if (a == b)
		return err_set(err, 0, "cp: exactly one side must be SESSION:PATH (absolute inside the session, or relative to its workspace; a host path with ':' is written ./NAME)");
	if (b && max_size)
		return err_set(err, 0, "--max-size: only for a copy out of a session (into one, its disk quota holds)");
	r = a ? from_session(s1, p1, argv[rest + 1], max_size, err) : to_session(argv[rest], s2, p2, err);
	return r < 0 ? -1 : 0;
}
