/* wscopy.c - see wscopy.h. The host side does the copying (as `sbxrun cp`
 * does into a session): a root caller reads its own files as root and
 * writes them as the sandbox's owner, and what the sandbox left is read
 * through a directory fd, never by a path it could redirect. */
#define _GNU_SOURCE
#include "cmd/wscopy.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/inroot.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/relpath.h"
#include "base/util.h"
#include "cmd/copycap.h"
#include "cmd/treecopy.h"
#include "session/session_client.h"

#define MEASURE_DEPTH 128
#define DISKUSE_PAGE 4096u

/* One --copy: the source resolved (PATH itself may be a symlink: it is
 * followed, as `cp -H` does; below it nothing is) and DEST. */
struct copy_item {
	char *real;
	char *dest;
};

static void item_free(struct copy_item *it)
{
	free(steal_ptr(it->real));
	free(steal_ptr(it->dest));
}

/* PATH's own name: its last component as typed, or for ".", ".." and the
 * like, the name of the directory it resolves to. */
static char *default_dest(const char *path, const char *real)
{
	_cleanup_free_ char *p = xstrdup(path);
	size_t n = strlen(p);

	while (n > 1 && p[n - 1] == '/')
		p[--n] = '\0';
	const char *slash = strrchr(p, '/');
	const char *name = slash ? slash + 1 : p;
	if (!name[0] || !strcmp(name, ".") || !strcmp(name, ".."))
		name = strrchr(real, '/') + 1;
	return xstrdup(name);
}

static int item_parse(const char *spec, struct copy_item *it, struct sbx_err *err)
{
	_cleanup_free_ char *path = NULL, *dest = NULL;

	*it = (struct copy_item){ 0 };
	if (relpath_copy_spec(spec, &path, &dest, err) < 0)
		return err_wrap(err, "--copy");
	it->real = realpath(path, NULL);
	if (!it->real)
		return err_sys(err, "--copy '%s'", path);
	if (!strcmp(it->real, "/")) {
		item_free(it);
		return err_set(err, 0, "--copy '%s': not the whole file system", path);
	}
	it->dest = dest ? steal_ptr(dest) : default_dest(path, it->real);
	return 0;
}

struct measure {
	uint64_t bytes;
	int depth;
	struct sbx_err *err;
};

/* What an entry takes in the sandbox: files are written whole (holes
 * too), every inode costs at least a page, as diskuse counts. */
static int measure_one(int dirfd, const char *name, void *arg)
{
	struct measure *m = arg;
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return err_sys(m->err, "--copy: '%s'", name);
	m->bytes += DISKUSE_PAGE;
	if (S_ISREG(st.st_mode))
		m->bytes += ((uint64_t)st.st_size + DISKUSE_PAGE - 1) / DISKUSE_PAGE * DISKUSE_PAGE;
	if (!S_ISDIR(st.st_mode))
		return 0;
	if (m->depth >= MEASURE_DEPTH)
		return err_set(m->err, 0, "--copy: '%s': deeper than %d levels", name, MEASURE_DEPTH);
	_cleanup_close_ int fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(m->err, "--copy: '%s'", name);
	m->depth++;
	int r = dir_each(fd, measure_one, m, m->err);
	m->depth--;
	return r;
}

static int measure_item(const struct copy_item *it, uint64_t *bytes, struct sbx_err *err)
{
	_cleanup_free_ char *dir = xstrdup(it->real);
	struct measure m = { 0, 0, err };
	_cleanup_close_ int fd = open(dirname(dir), O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return err_sys(err, "--copy '%s'", it->real);
	if (measure_one(fd, strrchr(it->real, '/') + 1, &m) < 0)
		return -1;
	*bytes += m.bytes;
	return 0;
}

/* DIR without trailing slashes ("/" stays). */
static char *trimmed(const char *dir)
{
	char *d = xstrdup(dir);
	size_t n = strlen(d);

	while (n > 1 && d[n - 1] == '/')
		d[--n] = '\0';
	return d;
}

static int any_entry(int dirfd, const char *name, void *arg)
{
	(void)dirfd, (void)name, (void)arg;
	return 1;
}

/* --out DIR: missing (its parent must exist) or an empty directory, never
 * a symlink: it is replaced by the copy as a whole. */
static int check_out(const char *dir, struct sbx_err *err)
{
	struct stat st;

	if (lstat(dir, &st) < 0) {
		if (errno != ENOENT)
			return err_sys(err, "--out '%s'", dir);
		_cleanup_free_ char *parent = xstrdup(dir);
		if (stat(dirname(parent), &st) < 0 || !S_ISDIR(st.st_mode))
			return err_set(err, 0, "--out '%s': its parent directory does not exist", dir);
		return 0;
	}
	if (S_ISLNK(st.st_mode))
		return err_set(err, 0, "--out '%s': is a symbolic link (name the directory itself)", dir);
	if (!S_ISDIR(st.st_mode))
		return err_set(err, 0, "--out '%s': exists and is not a directory", dir);
	_cleanup_close_ int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "--out '%s'", dir);
	struct sbx_err e2;
	if (dir_each(fd, any_entry, NULL, &e2) != 0)
		return err_set(err, 0, "--out '%s': exists and is not empty (results go to a new or "
			       "empty directory)", dir);
	return 0;
}

int wscopy_check(const struct sbx_config *cfg, uint64_t quota, uint64_t seeded, struct sbx_err *err)
{
	uint64_t bytes = 0;

	if ((cfg->copies.n || cfg->out_dir) && !cfg->workspace)
		return err_set(err, 0, "--%s: the profile gives the sandbox no workspace",
			       cfg->copies.n ? "copy" : "out");
	for (size_t i = 0; i < cfg->copies.n; i++) {
		struct copy_item it;
		if (item_parse(cfg->copies.v[i], &it, err) < 0)
			return -1;
		int r = measure_item(&it, &bytes, err);
		item_free(&it);
		if (r < 0)
			return -1;
	}
	if (quota && bytes && bytes + seeded > quota) {
		char b[32], q[32];
		format_size(bytes, b, sizeof(b));
		format_size(quota, q, sizeof(q));
		return err_set(err, 0, "--copy: what it brings in (%s%s) does not fit in the disk quota "
			       "(%s): raise --disk", b, seeded ? " with the image's workspace content" : "", q);
	}
	_cleanup_free_ char *dir = cfg->out_dir ? trimmed(cfg->out_dir) : NULL;
	return dir ? check_out(dir, err) : 0;
}

/* The directory DEST goes into, below wsfd, made as the sandbox's owner
 * where missing; nothing followed. *made: the first directory this made
 * (removed again if the copy fails), or NULL. */
static int dest_dir(int wsfd, const char *dest, const char **name, char **made, struct sbx_err *err)
{
	_cleanup_free_ char *path = xstrdup(dest);
	int dir = openat(wsfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	char *part = path, *slash;

	*made = NULL;
	while (dir >= 0 && (slash = strchr(part, '/'))) {
		*slash = '\0';
		if (part[0] && strcmp(part, ".")) {
			paths_as_sandbox_owner(1);
			int r = mkdirat(dir, part, 0755);
			paths_as_sandbox_owner(0);
			if (r == 0 && !*made)
				*made = strndup(dest, (size_t)(slash - path));
			int next = openat(dir, part, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			close(dir);
			dir = next;
		}
		part = slash + 1;
	}
	if (dir < 0)
		return err_sys(err, "--copy: DEST '%s' in the workspace", dest);
	*name = dest + (part - path);
	return dir;
}

static int copy_item_in(const struct copy_item *it, int wsfd, struct sbx_err *err)
{
	_cleanup_free_ char *sdirname = xstrdup(it->real), *made = NULL;
	const char *name = NULL;
	struct stat st;
	_cleanup_close_ int sdir = open(dirname(sdirname), O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ddir = dest_dir(wsfd, it->dest, &name, &made, err);

	if (ddir < 0)
		return -1;
	if (sdir < 0)
		return err_sys(err, "--copy '%s'", it->real);
	bool fresh = !made && fstatat(ddir, name, &st, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
	struct sbx_treecopy c = { .into = 1, .what = "--copy" };
	snprintf(c.path, sizeof(c.path), "%s", it->real);
	if (treecopy(&c, sdir, strrchr(it->real, '/') + 1, ddir, name, err) == 0)
		return 0;
	/* no half-filled DEST: what this copy made goes again */
	struct sbx_err e2;
	if (made)
		rm_rf_at(wsfd, made, &e2);
	else if (fresh)
		rm_rf_at(ddir, name, &e2);
	if (err->errnum == ENOSPC)
		err_hint(err, "what --copy brings in must fit in the disk quota (--disk)");
	return -1;
}

int wscopy_in(const struct sbx_config *cfg, int wsfd, struct sbx_err *err)
{
	for (size_t i = 0; i < cfg->copies.n; i++) {
		struct copy_item it;
		if (item_parse(cfg->copies.v[i], &it, err) < 0)
			return -1;
		int r = copy_item_in(&it, wsfd, err);
		if (r == 0)
			log_verbose("--copy: '%s' is '%s' in the workspace", it.real, it.dest);
		item_free(&it);
		if (r < 0)
			return -1;
	}
	return 0;
}

int wscopy_out(const struct sbx_config *cfg, int wsfd, const char *cap_session,
	       const sigset_t *stop, struct sbx_err *err)
{
	struct sbx_treecopy c = { .what = "--out", .stop = stop };
	_cleanup_free_ char *dir = trimmed(cfg->out_dir);
	mode_t um = umask(0);

	umask(um);
	if (cap_session)
		copycap_session(cap_session, dir, &c.cap);
	else
		copycap_quota(cfg->disk, dir, &c.cap);
	snprintf(c.path, sizeof(c.path), "%s", cfg->workspace ? cfg->workspace : "");
	/* an empty DIR is replaced by the copy as a whole */
	int r = treecopy_out_dir(&c, wsfd, dir, 0777 & ~um, true, err);
	/* interrupted: nothing is left, the signal may end sbxrun now */
	if (r != 0 && err->errnum == EINTR && stop)
		sigprocmask(SIG_UNBLOCK, stop, NULL);
	return r == 0 ? 0 : -1;
}

int wscopy_session_open(const char *session, int *rootfd, char **workspace, struct sbx_err *err)
{
	if (session_root(session, rootfd, workspace, err) < 0)
		return -1;
	if (!(*workspace)[0])
		return err_set(err, 0, "session '%s' has no workspace (--copy, --out)", session);
	int fd = inroot_open(*rootfd, *workspace, O_PATH | O_DIRECTORY, 0, err);
	return fd < 0 ? err_wrap(err, "workspace of session '%s'", session) : fd;
}

/* A word the user typed, as a shell would take it back. */
static void shell_word(char *buf, size_t size, const char *s)
{
	char clean[512];

	log_sanitize(clean, sizeof(clean), s);
	if (clean[0] && strspn(clean, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._/+-,=@%:") ==
	    strlen(clean)) {
		snprintf(buf, size, "%s", clean);
		return;
	}
	size_t o = 0;
	buf[o++] = '\'';
	for (const char *p = clean; *p && o + 6 < size; p++)
		if (*p == '\'')
			o += (size_t)snprintf(buf + o, size - o, "'\\''");
		else
			buf[o++] = *p;
	snprintf(buf + o, size - o, "'");
}

/* Whether the path inside (absolute) is under the --bind destination of
 * one of cfg's binds: what is there cannot be told from here. */
static bool under_bind(const struct sbx_config *cfg, const char *inside)
{
	for (size_t i = 0; i < cfg->binds.n; i++) {
		struct sbx_bind b;
		struct sbx_err e2;
		if (bind_parse(cfg->binds.v[i], &b, &e2) < 0)
			continue;
		size_t n = strlen(b.dst);
		bool under = !strncmp(inside, b.dst, n) && (inside[n] == '/' || !inside[n]);
		bind_free(&b);
		if (under)
			return true;
	}
	return false;
}

/* Whether arg (relative, as typed) exists in the sandbox, seen from
 * workdir: in its workspace (wsfd) or below rootfd. -1: cannot tell. */
static int in_sandbox(const struct sbx_config *cfg, const char *arg, const char *workdir, int wsfd,
		      int rootfd)
{
	_cleanup_free_ char *inside = xasprintf("%s/%s", strcmp(workdir, "/") ? workdir : "", arg);
	const char *ws = cfg->workspace;
	size_t n = ws ? strlen(ws) : 0;
	struct sbx_err e2;
	int fd;

	if (under_bind(cfg, inside))
		return -1;
	if (ws && wsfd >= 0 && !strncmp(inside, ws, n) && inside[n] == '/')
		fd = inroot_open(wsfd, inside + n + 1, O_PATH, 0, &e2);
	else if (rootfd >= 0)
		fd = inroot_open(rootfd, inside, O_PATH, 0, &e2);
	else
		return -1;
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 1 : e2.errnum == ENOENT ? 0 : -1;
}

void wscopy_hint(const struct sbx_config *cfg, char *const *argv, const char *workdir, int wsfd,
		 int rootfd)
{
	char word[600], shown[600];
	struct stat st;

	if (sbx_log_level == SBX_LOG_QUIET || !argv || !workdir)
		return;
	for (size_t i = 0; argv[i]; i++) {
		const char *a = argv[i];
		/* the program itself only when it is a path (else PATH finds it) */
		if (!a[0] || a[0] == '/' || a[0] == '-' || (i == 0 && !strchr(a, '/')) ||
		    strlen(a) > 400 || stat(a, &st) < 0 || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
			continue;
		if (in_sandbox(cfg, a, workdir, wsfd, rootfd) != 0)
			continue;
		/* x.py goes to the workspace as x.py, src/x.py needs its DEST */
		const char *rel = a;
		while (str_has_prefix(rel, "./"))
			rel += 2 + strspn(rel + 2, "/");
		_cleanup_free_ char *spec = strchr(rel, '/') && !strstr(rel, "..") ? xasprintf("%s:%s", a, rel)
										  : xstrdup(a);
		log_sanitize(shown, sizeof(shown), a);
		shell_word(word, sizeof(word), spec);
		fprintf(stderr, "sbxrun: hint: '%s' is on the host, not in the sandbox: bring it in "
			"with --copy %s\n", shown, word);
		return;
	}
}
