/* cp_cmd.c - `sbxrun cp SRC DST`, with SESSION:PATH on one side: files and
 * directories between the host and a live session. Inside the session every
 * step goes by fd below the session's root and refuses symlinks, so nothing
 * the sandbox planted is followed; writes go to a temporary name first. Out
 * of a session, holes stay holes and the data written is capped (copycap.c):
 * a sparse file cannot fill the host's disk; a new directory appears whole
 * or not at all (treecopy_out_dir). The copying itself is
 * treecopy.c's, shared with run --copy and --out. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/log.h"
#include "base/relpath.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "cmd/copycap.h"
#include "cmd/treecopy.h"
#include "session/session_client.h"

static const char usage[] =
	"usage: sbxrun cp [--max-size SIZE] SESSION:PATH HOSTPATH\n"
	"       sbxrun cp HOSTPATH SESSION:PATH\n"
	"Copies files and directories between the host and a live session. An\n"
	"absolute PATH is inside the session, a relative one in its workspace.\n"
	"Out of a session, sparse files stay sparse and at most SIZE bytes of data\n"
	"are written (default: the session's disk quota plus its image).\n";

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
	struct sbx_treecopy c = { .into = 1, .what = "cp" };
	snprintf(c.path, sizeof(c.path), "%s", src);
	return treecopy(&c, sfd, basename(copy), dir, name, err);
}

/* A new directory out of the session, copied whole or not at all (into a
 * temporary directory renamed at the end, treecopy_out_dir): SIGINT,
 * SIGTERM and SIGHUP wait until what the copy made is removed. The
 * destination is dir/name. */
static int dir_out(struct sbx_treecopy *c, int sdir, const char *sname, const char *dir,
		   const char *name, mode_t mode, struct sbx_err *err)
{
	_cleanup_free_ char *path = xasprintf("%s/%s", dir, name);
	_cleanup_close_ int sfd = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	sigset_t stop, old;

	if (sfd < 0)
		return err_sys(err, "cp: '%s'", c->path);
	sigemptyset(&stop);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, &old);
	c->stop = &stop;
	int r = treecopy_out_dir(c, sfd, path, mode, false, err);
	c->stop = NULL;
	/* a pending signal ends sbxrun here, with nothing left */
	sigprocmask(SIG_SETMASK, &old, NULL);
	return r;
}

static int from_session(const char *sess, const char *path, const char *dst, const char *max_size,
			struct sbx_err *err)
{
	struct sbx_treecopy c = { .what = "cp" };
	_cleanup_free_ char *d1 = xstrdup(dst), *d2 = xstrdup(dst);
	_cleanup_close_ int sdir = -1, ddir = -1;
	const char *sname, *dname, *rel, *dparent;
	struct stat st;
	_cleanup_close_ int base = session_base(sess, path, &rel, err);

	if (base < 0)
		return -1;
	sdir = inroot_parent(base, rel, &sname, err);
	if (sdir < 0)
		return err_wrap(err, "cp: %s:%s", sess, path);
	if (stat(dst, &st) == 0 && S_ISDIR(st.st_mode)) {
		dparent = dst;
		dname = sname;
	} else {
		dparent = dirname(d1);
		dname = basename(d2);
	}
	ddir = open(dparent, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ddir < 0)
		return err_sys(err, "cp: '%s'", dst);
	if (max_size ? copycap_option(max_size, &c.cap, err) < 0 : (copycap_session(sess, dst, &c.cap), 0))
		return -1;
	snprintf(c.path, sizeof(c.path), "%s:%s", sess, path);
	bool fresh = fstatat(ddir, dname, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	struct stat sst;
	if (fresh && fstatat(sdir, sname, &sst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(sst.st_mode))
		return dir_out(&c, sdir, sname, dparent, dname, (sst.st_mode & 0777) | 0700, err);
	/* a file never appears half-written (hostfile); into a directory that
	 * is there, each file is replaced whole */
	return treecopy(&c, sdir, sname, ddir, dname, err);
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
