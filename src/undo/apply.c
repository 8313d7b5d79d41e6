/* apply.c - a change set written into its project (apply.h). First every
 * entry that touches a host file is checked against what the capture
 * recorded (a conflict refuses the whole apply, or with force_rest leaves
 * that entry out); then the entries, in path order (a directory before
 * what is in it), each below a handle of its parent directory opened
 * beneath DIR with no symlink on the way. A file is written to a
 * temporary name in that directory and renamed over its own; when the whole
 * set applies (and is removed after), a file the caller owns is moved out
 * of the set instead, and exchanged with the host's (move_file). */
#define _GNU_SOURCE
#include "undo/apply.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/fsuid.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"
#include "store/digest.h"
#include "undo/csname.h"

/* The directory of the last path opened, kept for its siblings (entries
 * come in path order, so siblings come together). */
struct parent {
	char *path;
	int fd;
	struct stat st;
};

struct apply {
	const struct changeset *cs;
	int dir;   /* DIR */
	int upper; /* the change set's upper */
	struct apply_report *rep;
	struct sbx_err *err;
	uid_t uid; /* root applying to a project of another's: DIR's owner and */
	gid_t gid; /* group, as whom it writes; uid 0 otherwise */
	bool move; /* the whole set applies, to be removed: files may move out */
	uid_t cuid; /* the caller's, which a copy gets */
	gid_t cgid;
	struct parent dirp, upperp;
};

/* What an entry writes, read from the change set before anything is
 * written, as the caller (the change set is the caller's own). */
struct source {
	int fd;                      /* a file's or a directory's */
	struct stat st;
	char target[PATH_MAX + 1];   /* a symlink's */
};

/* "LABEL: WHY: 'PATH'", the path escaped. */
static void say(struct apply_report *rep, const char *label, const char *why, const char *path)
{
	_cleanup_free_ char *q = csname_show(path);
	rep->lines = xrealloc(rep->lines, (rep->n + 1) * sizeof(char *));
	rep->lines[rep->n++] = xasprintf("%s: %s: '%s'", label, why, q);
}

void apply_report_free(struct apply_report *rep)
{
	for (size_t i = 0; i < rep->n; i++)
		free(rep->lines[i]);
	free(rep->lines);
	memset(rep, 0, sizeof(*rep));
}

static int beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_NO_XDEV };
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* The directory that holds path's last component, below root; *name is
 * that component. */
static int parent_of(int root, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');

	*name = slash ? slash + 1 : path;
	if (!slash)
		return fcntl(root, F_DUPFD_CLOEXEC, 3);
	_cleanup_free_ char *dir = strndup(path, (size_t)(slash - path));
	return beneath(root, dir, O_RDONLY | O_DIRECTORY);
}

static void parent_drop(struct parent *p)
{
	free(p->path);
	if (p->fd >= 0)
		close(p->fd);
	*p = (struct parent){ .fd = -1 };
}

/* parent_of, the handle kept for the next path in the same directory (not
 * to be closed by the caller). */
static int parent_cached(struct parent *p, int root, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	if (p->path && strlen(p->path) == len && !strncmp(p->path, path, len)) {
		*name = slash ? slash + 1 : path;
		return p->fd;
	}
	parent_drop(p);
	int fd = parent_of(root, path, name);
	if (fd >= 0 && fstat(fd, &p->st) == 0)
		p->path = strndup(path, len), p->fd = fd;
	else if (fd >= 0)
		close(fd), fd = -1;
	return fd;
}

static int selected(const struct cs_entry *e, char *const *paths, size_t npaths)
{
	if (!npaths)
		return 1;
	for (size_t i = 0; i < npaths; i++) {
		size_t l = strlen(paths[i]);
		while (l > 1 && paths[i][l - 1] == '/')
			l--;
		if (!strncmp(e->path, paths[i], l) && (e->path[l] == '/' || !e->path[l]))
			return 1;
		/* a new directory on the way to what was asked for */
		size_t el = strlen(e->path);
		if (e->type == CS_DIR && e->kind != CS_DELETED && el < l &&
		    !strncmp(e->path, paths[i], el) && paths[i][el] == '/')
			return 1;
	}
	return 0;
}

/* Data only where the source has it: holes stay holes. */
static int copy_sparse(int src, int dst, off_t size)
{
	char buf[65536];
	off_t pos = 0;

	while (pos < size) {
		off_t data = lseek(src, pos, SEEK_DATA);
		if (data < 0 && errno == ENXIO)
			break;
		off_t hole = data < 0 ? -1 : lseek(src, data, SEEK_HOLE);
		if (data < 0 || hole < 0)
			return -1;
		for (pos = data; pos < hole;) {
			ssize_t n = pread(src, buf, (size_t)(hole - pos < (off_t)sizeof(buf) ? hole - pos
								: (off_t)sizeof(buf)), pos);
			if (n <= 0 || pwrite(dst, buf, (size_t)n, pos) != n)
				return -1;
			pos += n;
		}
	}
	return ftruncate(dst, size);
}

static void tmp_name(char *buf, size_t size)
{
	unsigned r = 0;
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (unsigned)getpid();
	snprintf(buf, size, ".sbxrun-apply-%08x", r);
}

/* Only the overlay's own attributes on the sandbox's file (they are
 * removed): a copy keeps none, nor may a moved file. */
static bool bare(int fd)
{
	char list[4096];
	ssize_t n = flistxattr(fd, list, sizeof(list));

	if (n < 0)
		return errno == ENOTSUP;
	for (char *k = list; k < list + n; k += strlen(k) + 1)
		if (strncmp(k, "user.overlay.", 13) != 0 || fremovexattr(fd, k) < 0)
			return false;
	return true;
}

/* The sandbox's file moved to name, as a copy would have made it: the
 * caller's (root chowns it), one link, the group a new file there gets, no attribute, the
 * mode without setuid, setgid or sticky bits. The host's file, if any, is
 * exchanged into the set (removed with it): a reader sees the old file or
 * the new one, and ext4 starts no write-back for a rename over a file.
 * 1: not moved (another file system, another owner...), copy it. */
static int move_file(struct apply *a, const struct cs_entry *e, int src, const struct stat *st, int pfd,
		     const char *name)
{
	const struct stat *ps = &a->dirp.st; /* pfd's */
	const char *uname = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	int upfd = a->upperp.fd; /* src's directory (put_file) */

	gid_t gid = ps->st_mode & S_ISGID ? ps->st_gid : a->cgid;

	if (!a->move || a->uid || st->st_nlink != 1 || st->st_dev != ps->st_dev)
		return 1;
	/* root's sandbox wrote as its own uid (paths.h): root's copy would be
	 * root's, and so is the moved file */
	if ((st->st_uid != a->cuid || st->st_gid != gid) && (a->cuid != 0 || fchown(src, a->cuid, gid) < 0))
		return 1;
	if (!bare(src))
		return 1;
	if (fchmod(src, st->st_mode & 0777) < 0)
		return err_sys(a->err, "change set: mode of '%s'", e->path);
	unsigned flags = e->kind == CS_CHANGED ? RENAME_EXCHANGE : RENAME_NOREPLACE;
	if (renameat2(upfd, uname, pfd, name, flags) == 0)
		return 0;
	if (errno == EXDEV || errno == EACCES || errno == EPERM || errno == EINVAL)
		return 1;
	return err_sys(a->err, "move '%s' into the project", e->path);
}

/* The sandbox's file (a regular one, opened beneath upper) as a new file
 * renamed over name: mode without setuid, setgid or sticky bits. */
static int put_file(struct apply *a, const struct cs_entry *e, const struct source *src,
		    int pfd, const char *name)
{
	char tmp[64];
	int r = move_file(a, e, src->fd, &src->st, pfd, name);

	if (r <= 0)
		return r;

	tmp_name(tmp, sizeof(tmp));
	_cleanup_close_ int dst = openat(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (dst < 0)
		return err_sys(a->err, "create a file beside '%s'", e->path);
	if (copy_sparse(src->fd, dst, src->st.st_size) < 0 || fchmod(dst, src->st.st_mode & 0777) < 0) {
		int saved = errno;
		unlinkat(pfd, tmp, 0);
		errno = saved;
		return err_sys(a->err, "write '%s'", e->path);
	}
	return 0 == renameat(pfd, tmp, pfd, name) ? 0
		: (unlinkat(pfd, tmp, 0), err_sys(a->err, "rename over '%s'", e->path));
}

static int put_symlink(const struct apply *a, const struct cs_entry *e, const struct source *src,
		       int pfd, const char *name)
{
	char tmp[64];

	tmp_name(tmp, sizeof(tmp));
	if (symlinkat(src->target, pfd, tmp) < 0)
		return err_sys(a->err, "make the symlink '%s'", e->path);
	return 0 == renameat(pfd, tmp, pfd, name) ? 0
		: (unlinkat(pfd, tmp, 0), err_sys(a->err, "rename over '%s'", e->path));
}

static int put_dir(const struct apply *a, const struct cs_entry *e, const struct source *src,
		   int pfd, const char *name)
{
	struct stat hs;

	if (fstatat(pfd, name, &hs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(hs.st_mode) && e->kind == CS_ADDED)
		return 0;
	if (mkdirat(pfd, name, src->st.st_mode & 0777) < 0)
		return err_sys(a->err, "make the directory '%s'", e->path);
	return 0;
}

static int read_source(struct apply *a, const struct cs_entry *e, struct source *src)
{
	const char *uname;

	if (e->kind == CS_DELETED)
		return 0;
	if (e->type == CS_SYMLINK) {
		_cleanup_close_ int upfd = parent_of(a->upper, e->path, &uname);
		ssize_t n = upfd < 0 ? -1 : readlinkat(upfd, uname, src->target, sizeof(src->target) - 1);
		if (n < 0)
			return err_sys(a->err, "change set: read the symlink '%s'", e->path);
		src->target[n] = '\0';
		return 0;
	}
	if (e->type != CS_FILE && e->type != CS_DIR)
		return 0;
	if (e->type == CS_FILE) { /* beside its siblings: their directory's handle (move_file's too) */
		int upfd = parent_cached(&a->upperp, a->upper, e->path, &uname);
		src->fd = upfd < 0 ? -1 : openat(upfd, uname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC);
	} else {
		src->fd = beneath(a->upper, e->path, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_DIRECTORY);
	}
	if (src->fd < 0 || fstat(src->fd, &src->st) < 0)
		return err_sys(a->err, "change set: open '%s'", e->path);
	if (e->type == CS_FILE && !S_ISREG(src->st.st_mode))
		return err_set(a->err, 0, "change set: '%s' is no longer a regular file", e->path);
	return 0;
}

/* Root applying to a project of another's writes as DIR's owner and group
 * (with no other group: apply_changeset clears them), so it never writes
 * where the owner could not, and what it makes is the owner's. */
static int as_owner(const struct apply *a, int enter)
{
	if (!a->uid)
		return 0;
	uid_t uid = enter ? a->uid : 0;
	gid_t gid = enter ? a->gid : 0;

	setfsgid(gid);
	setfsuid(uid);
	/* each returns the id before the call: -1 changes nothing */
	return (uid_t)setfsuid((uid_t)-1) == uid && (gid_t)setfsgid((gid_t)-1) == gid ? 0 : -1;
}

/* What makes or removes a directory, a symlink or a replaced file. */
static int apply_tree(struct apply *a, const struct cs_entry *e, const struct source *src, int pfd,
		      const char *name)
{
	/* what goes away first: a deletion, what a replacement replaces */
	if (e->kind == CS_DELETED || e->kind == CS_REPLACED || (e->kind == CS_CHANGED && e->type == CS_DIR)) {
		if (rm_rf_at(pfd, name, a->err) < 0)
			return -1;
		if (e->kind == CS_DELETED)
			return 0;
	}
	switch (e->type) {
	case CS_FILE: return put_file(a, e, src, pfd, name);
	case CS_SYMLINK: return put_symlink(a, e, src, pfd, name);
	case CS_DIR: return put_dir(a, e, src, pfd, name);
	}
	return 0;
}

static int write_entry(struct apply *a, const struct cs_entry *e, const struct source *src)
{
	const char *name;
	/* a file written beside its siblings keeps their directory's handle;
	 * anything that makes or removes a directory drops it */
	bool plain = e->type == CS_FILE && (e->kind == CS_CHANGED || e->kind == CS_ADDED);
	if (!plain)
		parent_drop(&a->dirp);
	int pfd = parent_cached(&a->dirp, a->dir, e->path, &name);

	if (pfd < 0)
		return err_sys(a->err, "open the directory of '%s' beneath the project", e->path);
	if (!plain) {
		int r = apply_tree(a, e, src, pfd, name);
		parent_drop(&a->dirp);
		return r;
	}
	return put_file(a, e, src, pfd, name);
}

static int apply_one(struct apply *a, const struct cs_entry *e)
{
	struct source src = { .fd = -1 };
	int r = read_source(a, e, &src);

	if (r == 0 && as_owner(a, 1) < 0) {
		as_owner(a, 0);
		r = err_set(a->err, EPERM, "write as the project's owner (uid %u)", (unsigned)a->uid);
	} else if (r == 0) {
		r = write_entry(a, e, &src);
		as_owner(a, 0);
	}
	if (src.fd >= 0)
		close(src.fd);
	return r;
}

/* Below something left out (a conflict, a special file) nothing applies. */
static int under(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	return !strncmp(path, dir, l) && path[l] == '/';
}

/* Each selected entry's verdict (changeset_check) into rep: its conflicts
 * and what is never applied; skip[i] set for what is left out. */
static void check_entries(struct apply *a, char *const *paths, size_t npaths, char *skip)
{
	for (size_t i = 0; i < a->cs->n; i++) {
		const struct cs_entry *e = &a->cs->e[i];
		int sel = selected(e, paths, npaths);
		skip[i] = !sel;
		if (!sel || !e->why)
			continue;
		skip[i] = e->conflict ? 2 : 1;
		if (e->conflict)
			a->rep->conflicts++;
		else
			a->rep->skipped++;
		say(a->rep, e->conflict ? "conflict" : "skipped", e->why, e->path);
	}
}

/* The entries in changeset order (a directory's whole tree after it). */
static int write_entries(struct apply *a, const char *skip)
{
	const char *left_out = NULL;

	for (size_t i = 0; i < a->cs->n; i++) {
		if (left_out && under(a->cs->e[i].path, left_out))
			continue;
		/* a directory's removal takes what the set lists below it */
		left_out = skip[i] || (a->cs->e[i].kind == CS_DELETED && a->cs->e[i].type == CS_DIR)
			? a->cs->e[i].path : NULL;
		if (skip[i])
			continue;
		if (apply_one(a, &a->cs->e[i]) < 0)
			return -1;
		a->rep->applied++;
	}
	return 0;
}

/* As another's owner, root has no supplementary group while it writes
 * (root's own, group 0 among them, would let it write where the owner
 * could not); they are given back after. */
static int owner_writes(struct apply *a, const char *skip)
{
	if (!a->uid)
		return write_entries(a, skip);
	int n = getgroups(0, NULL);
	_cleanup_free_ gid_t *groups = xcalloc(n > 0 ? (size_t)n : 1, sizeof(gid_t));
	if (n < 0 || getgroups(n, groups) != n || setgroups(0, NULL) < 0)
		return err_sys(a->err, "drop root's groups to write as the project's owner");
	int r = write_entries(a, skip);
	if (setgroups((size_t)n, groups) < 0 && r == 0)
		r = err_sys(a->err, "restore root's groups");
	return r;
}

int apply_changeset(struct changeset *cs, char *const *paths, size_t npaths, bool force_rest,
		    struct apply_report *rep, struct sbx_err *err)
{
	struct stat st;
	_cleanup_free_ char *up = xasprintf("%s/upper", cs->dir);
	_cleanup_free_ char *skip = xcalloc(cs->n ? cs->n : 1, 1);
	struct apply a = { .cs = cs, .dir = -1, .upper = -1, .dirp = { .fd = -1 }, .upperp = { .fd = -1 },
			   .rep = rep, .err = err };
	int r = -1;

	if (!cs->captured)
		return err_set(err, 0, "change set %s: its run has not ended", cs->id);
	a.dir = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (a.dir < 0 || fstat(a.dir, &st) < 0 || st.st_dev != cs->dev || st.st_ino != cs->ino) {
		err_set(err, 0, "change set %s: '%s' is not the directory the run began with", cs->id,
			cs->project);
		goto out;
	}
	if (geteuid() == 0 && st.st_uid != 0) {
		a.uid = st.st_uid;
		a.gid = st.st_gid;
	}
	if ((a.upper = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		err_sys(err, "open '%s'", up);
		goto out;
	}
	size_t nbad;
	if (changeset_check(cs, a.dir, &nbad, err) < 0)
		goto out;
	check_entries(&a, paths, npaths, skip);
	if (rep->conflicts && !force_rest) {
		err_set(err, 0, "change set %s: %zu conflict%s, nothing applied (--force-rest applies the rest)",
			cs->id, rep->conflicts, rep->conflicts == 1 ? "" : "s");
		goto out;
	}
	parent_drop(&a.dirp);
	/* the set goes once it is all applied: its files may move out */
	a.move = !npaths && !rep->conflicts && !rep->skipped;
	a.cuid = geteuid(), a.cgid = getegid();
	r = owner_writes(&a, skip);
out:
	parent_drop(&a.dirp);
	parent_drop(&a.upperp);
	if (a.dir >= 0)
		close(a.dir);
	if (a.upper >= 0)
		close(a.upper);
	return r;
}
