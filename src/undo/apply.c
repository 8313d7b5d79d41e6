/* apply.c - a change set written into its project (apply.h): a rendering
 * of the set's entries, nothing more. First each entry's verdict
 * (changeset_check) and, for what the set writes, its source read in the
 * change set: anything refused stops the apply before its first write
 * (or, with force_rest, is left out). Then three passes, each entry below
 * a handle of its parent directory opened beneath DIR with no symlink and
 * no mount on the way: what goes, deepest first (a listed file unlinked, a
 * listed directory removed once its listed entries are; never a tree at
 * once); what the sandbox wrote, in path order (a directory before what is
 * in it); last, the modes of new directories that could not be made with
 * them. A file is written to a temporary name in its directory and
 * renamed over its own; when the whole set applies (and is removed
 * after), a file the caller owns is moved out of the set instead, and
 * exchanged with the host's (move_file). Modes are git's
 * (changeset_applied_mode) unless exact_modes. */
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
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/util.h"
#include "store/digest.h"
#include "undo/csname.h"

/* A file's source in the change set, opened as the caller (the change set
 * is the caller's own) by the pre-pass, every one before the first write.
 * Its handle is kept for the write within a budget of descriptors; past
 * it, the write opens the same file again and refuses another inode. */
struct source {
	int fd;
	struct stat st;
};

/* The directory of the last path opened, kept for its siblings (entries
 * come in path order, so siblings come together). */
struct parent {
	char *path;
	int fd;
	struct stat st;
};

struct apply {
	struct changeset *cs;
	int dir;   /* DIR */
	int upper; /* the change set's upper */
	struct apply_report *rep;
	struct sbx_err *err;
	uid_t uid; /* root applying to a project of another's: DIR's owner and */
	gid_t gid; /* group, as whom it writes; uid 0 otherwise */
	bool move; /* the whole set applies, to be removed: files may move out */
	bool exact; /* the sandbox's permission bits, not git's */
	unsigned umask_bits; /* the caller's, read once */
	uid_t cuid; /* the caller's, which a copy gets */
	gid_t cgid;
	struct parent dirp, upperp;
	char *late; /* late[i]: a directory made u+rwx, its mode set last */
	struct source *src; /* src[i]: entry i's source as the pre-pass read it */
	size_t kept, budget; /* handles src keeps open, and how many it may */
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

/* The permission bits an entry lands with: git's (changeset.h), or with
 * exact the sandbox's; never setuid, setgid or sticky. */
static unsigned mode_of(const struct apply *a, const struct cs_entry *e)
{
	return a->exact ? e->mode & 0777 : changeset_applied_mode(e, a->umask_bits);
}

/* What the host has at an entry's name when it is written (a directory
 * that goes is gone by then): a file written over it is exchanged with it. */
static bool host_has(const struct cs_entry *e)
{
	return e->kind == CS_CHANGED || (e->kind == CS_REPLACED && e->old_type != CS_DIR);
}

/* The sandbox's file moved to name, as a copy would have made it: the
 * caller's (root chowns it), one link, the group a new file there gets, no
 * attribute, the mode a copy gets (mode_of). The host's file, if any, is
 * exchanged into the set (removed with it): a reader sees the old file or
 * the new one, and ext4 starts no write-back for a rename over a file.
 * 1: not moved (another file system, another owner...), copy it. */
static int move_file(struct apply *a, const struct cs_entry *e, int src, const struct stat *st, int pfd,
		     const char *name)
{
	const struct stat *ps = &a->dirp.st; /* pfd's */
	const char *uname = strrchr(e->path, '/') ? strrchr(e->path, '/') + 1 : e->path;
	int upfd = a->upperp.fd; /* src's directory (read_source) */

	gid_t gid = ps->st_mode & S_ISGID ? ps->st_gid : a->cgid;

	if (!a->move || a->uid || st->st_nlink != 1 || st->st_dev != ps->st_dev)
		return 1;
	/* root's sandbox wrote as its own uid (paths.h): root's copy would be
	 * root's, and so is the moved file */
	if ((st->st_uid != a->cuid || st->st_gid != gid) && (a->cuid != 0 || fchown(src, a->cuid, gid) < 0))
		return 1;
	if (!bare(src))
		return 1;
	if ((st->st_mode & 07777) != mode_of(a, e) && fchmod(src, mode_of(a, e)) < 0)
		return err_sys(a->err, "change set: mode of '%s'", e->path);
	unsigned flags = host_has(e) ? RENAME_EXCHANGE : RENAME_NOREPLACE;
	if (renameat2(upfd, uname, pfd, name, flags) == 0)
		return 0;
	if (errno == EXDEV || errno == EACCES || errno == EPERM || errno == EINVAL)
		return 1;
	return err_sys(a->err, "move '%s' into the project", e->path);
}

/* The sandbox's file (a regular one, opened beneath upper) as a new file
 * renamed over name. */
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
	if (copy_sparse(src->fd, dst, src->st.st_size) < 0 || fchmod(dst, mode_of(a, e)) < 0) {
		int saved = errno;
		unlinkat(pfd, tmp, 0);
		errno = saved;
		return err_sys(a->err, "write '%s'", e->path);
	}
	return 0 == renameat(pfd, tmp, pfd, name) ? 0
		: (unlinkat(pfd, tmp, 0), err_sys(a->err, "rename over '%s'", e->path));
}

/* The target the entries hold: the one show and diff print. */
static int put_symlink(const struct apply *a, const struct cs_entry *e, int pfd, const char *name)
{
	char tmp[64];

	tmp_name(tmp, sizeof(tmp));
	if (!e->target || symlinkat(e->target, pfd, tmp) < 0)
		return err_sys(a->err, "make the symlink '%s'", e->path);
	return 0 == renameat(pfd, tmp, pfd, name) ? 0
		: (unlinkat(pfd, tmp, 0), err_sys(a->err, "rename over '%s'", e->path));
}

/* A directory the host has stays (its mode too): a replaced one's listed
 * entries do the work. A new one is made with its mode, or u+rwx until
 * the last pass when its mode would stop what is written below it (or the
 * umask would change an exact mode). */
static int put_dir(struct apply *a, size_t i, int pfd, const char *name)
{
	const struct cs_entry *e = &a->cs->e[i];
	struct stat hs;
	unsigned mode = mode_of(a, e);

	if (e->kind == CS_REPLACED && e->old_type != CS_DIR) {
		if (unlinkat(pfd, name, 0) < 0 && errno != ENOENT)
			return err_sys(a->err, "remove '%s' for the directory that replaces it", e->path);
	} else if (fstatat(pfd, name, &hs, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(hs.st_mode)) {
		return 0;
	}
	a->late[i] = a->exact || (mode & 0700) != 0700;
	if (mkdirat(pfd, name, a->late[i] ? 0700 : 0777) < 0) /* 0777: the umask makes it mode */
		return err_sys(a->err, "make the directory '%s'", e->path);
	return 0;
}

/* A regular file of the change set, opened beneath upper beside its
 * siblings (their directory's handle, move_file's too). */
static int open_source(struct apply *a, const struct cs_entry *e, struct source *src)
{
	const char *uname;
	int upfd = parent_cached(&a->upperp, a->upper, e->path, &uname);

	src->fd = upfd < 0 ? -1 : openat(upfd, uname, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (src->fd < 0 || fstat(src->fd, &src->st) < 0)
		return -1;
	if (!S_ISREG(src->st.st_mode) || (uint64_t)src->st.st_size != e->size) {
		errno = ESTALE;
		return -1;
	}
	return 0;
}

/* Entry i's source for the write pass: the pre-pass's handle, or past
 * the budget the same file opened again (the same inode, the same size);
 * either way the handle of its directory in the upper is a->upperp's, for
 * move_file's rename. */
static int read_source(struct apply *a, size_t i, struct source *src)
{
	const struct cs_entry *e = &a->cs->e[i];
	struct source *pre = &a->src[i];
	const char *uname;

	if (e->kind == CS_DELETED || e->type != CS_FILE)
		return 0;
	if (pre->fd >= 0) {
		*src = *pre;
		pre->fd = -1;
		a->kept--;
		if (parent_cached(&a->upperp, a->upper, e->path, &uname) < 0)
			return err_sys(a->err, "change set: open the directory of '%s'", e->path);
		return 0;
	}
	if (open_source(a, e, src) < 0 || src->st.st_dev != pre->st.st_dev || src->st.st_ino != pre->st.st_ino)
		return src->fd >= 0 || errno == ESTALE
			? err_set(a->err, 0, "change set: '%s' changed since it was captured", e->path)
			: err_sys(a->err, "change set: open '%s'", e->path);
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

/* What goes: a file, symlink or special unlinked, a directory removed
 * (what the set lists below it went first). A directory that is not
 * empty then holds what the set did not list: an error, never a removal. */
static int delete_entry(struct apply *a, size_t i, const struct source *src)
{
	const struct cs_entry *e = &a->cs->e[i];
	const char *name;
	int dir = e->old_type == CS_DIR;
	int pfd = parent_cached(&a->dirp, a->dir, e->path, &name);

	(void)src;
	if (pfd < 0)
		return err_sys(a->err, "open the directory of '%s' beneath the project", e->path);
	if (unlinkat(pfd, name, dir ? AT_REMOVEDIR : 0) == 0 || errno == ENOENT)
		return 0;
	return err_sys(a->err, "%s '%s'", dir ? "remove the directory" : "delete", e->path);
}

/* What the sandbox wrote at an entry's path. */
static int write_entry(struct apply *a, size_t i, const struct source *src)
{
	const struct cs_entry *e = &a->cs->e[i];
	const char *name;
	int pfd = parent_cached(&a->dirp, a->dir, e->path, &name);

	if (pfd < 0)
		return err_sys(a->err, "open the directory of '%s' beneath the project", e->path);
	switch (e->type) {
	case CS_FILE: return put_file(a, e, src, pfd, name);
	case CS_SYMLINK: return put_symlink(a, e, pfd, name);
	case CS_DIR: return put_dir(a, i, pfd, name);
	}
	return 0;
}

/* A new directory's mode, once what is below it is written. */
static int late_mode(struct apply *a, size_t i, const struct source *src)
{
	const struct cs_entry *e = &a->cs->e[i];
	_cleanup_close_ int fd = beneath(a->dir, e->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW);

	(void)src;
	if (fd < 0 || fchmod(fd, mode_of(a, e)) < 0)
		return err_sys(a->err, "mode of the directory '%s'", e->path);
	return 0;
}

typedef int (*apply_step)(struct apply *a, size_t i, const struct source *src);

/* One step on entry i, as the project's owner for root (its source read
 * before, as the caller). */
static int apply_one(struct apply *a, size_t i, apply_step step)
{
	struct source src = { .fd = -1 };
	int r = step == write_entry ? read_source(a, i, &src) : 0;

	if (r == 0 && as_owner(a, 1) < 0) {
		as_owner(a, 0);
		r = err_set(a->err, EPERM, "write as the project's owner (uid %u)", (unsigned)a->uid);
	} else if (r == 0) {
		r = step(a, i, &src);
		as_owner(a, 0);
	}
	if (src.fd >= 0)
		close(src.fd);
	return r;
}

/* Made u+r (a file) or u+rx (a directory) through its handle opened as a
 * path, when the caller owns it: the change set is the caller's. */
static int readable(int fd, bool dir)
{
	struct stat st;
	char proc[64];
	unsigned need = dir ? 0500 : 0400;

	if (fstat(fd, &st) < 0 || (dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode)))
		return -1;
	if ((st.st_mode & need) == need)
		return 0;
	if (st.st_uid != geteuid())
		return errno = EACCES, -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	return chmod(proc, (st.st_mode & 07777) | need);
}

/* Each directory of the upper on the way to path (itself included when
 * self) made traversable: the sandbox may leave one 0300 or 0600. Nothing
 * is followed: each level is opened as a path with O_NOFOLLOW. */
static int upper_walkable(struct apply *a, const char *path, bool self)
{
	_cleanup_free_ char *p = xstrdup(path);
	_cleanup_close_ int cur = fcntl(a->upper, F_DUPFD_CLOEXEC, 3);
	char *last = strrchr(p, '/');

	if (!self && !last)
		return 0;
	if (!self)
		*last = '\0';
	for (char *save = NULL, *c = strtok_r(p, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int fd = cur < 0 ? -1 : openat(cur, c, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || readable(fd, true) < 0) {
			if (fd >= 0)
				close(fd);
			return -1;
		}
		close(cur);
		cur = fd;
	}
	return 0;
}

/* Can the source of entry i be read (a file opened, its size the one the
 * entries hold)? An unreadable file of the caller's is made u+r. Its
 * handle is kept in a->src[i] while the budget allows, its identity
 * always. */
static const char *source_verdict(struct apply *a, size_t i)
{
	const struct cs_entry *e = &a->cs->e[i];
	struct source src = { .fd = -1 };

	if (e->type == CS_DIR)
		return (e->mode & 0500) == 0500 || geteuid() == 0 || upper_walkable(a, e->path, true) == 0
			? NULL : "unreadable in the change set";
	if (e->type != CS_FILE)
		return NULL;
	int r = open_source(a, e, &src), saved = errno;
	if (r < 0 && errno == EACCES) {
		const char *uname;
		parent_drop(&a->upperp);
		int upfd = upper_walkable(a, e->path, false) < 0 ? -1 : parent_cached(&a->upperp, a->upper, e->path, &uname);
		_cleanup_close_ int p = upfd < 0 ? -1 : openat(upfd, uname, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		r = p < 0 || readable(p, false) < 0 ? -1 : open_source(a, e, &src);
		saved = errno;
	}
	if (r == 0) {
		a->src[i] = src;
		if (a->kept < a->budget)
			a->kept++;
		else
			close(src.fd), a->src[i].fd = -1;
	} else if (src.fd >= 0) {
		close(src.fd);
	}
	if (r < 0)
		return saved == ESTALE ? "changed in the change set since it was captured" : "unreadable in the change set";
	return NULL;
}

/* Every source a selected entry writes is read before the first write:
 * one that cannot be is refused (and what is below it, and a deletion
 * above it that cannot be completed then), as a conflict is. */
static void check_sources(struct apply *a, char *const *paths, size_t npaths)
{
	for (size_t i = 0; i < a->cs->n; i++) {
		struct cs_entry *e = &a->cs->e[i];
		if (e->why || e->kind == CS_DELETED || !selected(e, paths, npaths))
			continue;
		if ((e->why = source_verdict(a, i)))
			e->conflict = 1;
	}
	parent_drop(&a->upperp);
	changeset_spread(a->cs);
}

/* Each selected entry's verdict into rep: its conflicts and what is never
 * applied; skip[i] set for what is left out. */
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

/* What an entry removes from the host before anything is written: a
 * deletion, or the directory a file or symlink replaces. */
static bool goes(const struct cs_entry *e)
{
	return e->kind == CS_DELETED || (e->kind == CS_REPLACED && e->old_type == CS_DIR && e->type != CS_DIR);
}

/* The three passes: what goes (deepest first), what is written (a
 * directory before what is in it), the late modes (deepest first). */
static int write_entries(struct apply *a, const char *skip)
{
	size_t n = a->cs->n;

	for (size_t i = n; i-- > 0;)
		if (!skip[i] && goes(&a->cs->e[i]) && apply_one(a, i, delete_entry) < 0)
			return -1;
	parent_drop(&a->dirp);
	for (size_t i = 0; i < n; i++) {
		if (skip[i] || a->cs->e[i].kind == CS_DELETED)
			continue;
		if (apply_one(a, i, write_entry) < 0)
			return -1;
	}
	for (size_t i = n; i-- > 0;)
		if (a->late[i] && apply_one(a, i, late_mode) < 0)
			return -1;
	for (size_t i = 0; i < n; i++)
		a->rep->applied += !skip[i];
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

/* DIR and the set's upper opened, the writer decided (root: DIR's owner). */
static int apply_open(struct apply *a, struct sbx_err *err)
{
	struct stat st;
	const struct changeset *cs = a->cs;
	_cleanup_free_ char *up = xasprintf("%s/upper", cs->dir);

	if (!cs->captured)
		return err_set(err, 0, "change set %s: its run has not ended", cs->id);
	a->dir = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (a->dir < 0 || fstat(a->dir, &st) < 0 || st.st_dev != cs->dev || st.st_ino != cs->ino)
		return err_set(err, 0, "change set %s: '%s' is not the directory the run began with", cs->id,
			       cs->project);
	if (geteuid() == 0 && st.st_uid != 0) {
		a->uid = st.st_uid;
		a->gid = st.st_gid;
	}
	if ((a->upper = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_sys(err, "open '%s'", up);
	mode_t m = umask(0);
	umask(m);
	a->umask_bits = m & 0777;
	a->cuid = geteuid(), a->cgid = getegid();
	return 0;
}

/* How many sources the pre-pass may keep open for the write pass: the
 * soft limit on descriptors raised toward the hard one (*old restores
 * it), less a reserve for the directory handles and the rest. */
static size_t fd_budget(size_t want, struct rlimit *old)
{
	struct rlimit rl;
	const rlim_t reserve = 256, most = 65536;

	if (getrlimit(RLIMIT_NOFILE, old) < 0)
		return 0;
	rl = *old;
	rlim_t need = (rlim_t)(want < most ? want : most) + reserve;
	if (rl.rlim_cur < need && rl.rlim_cur != RLIM_INFINITY) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
			rl = *old;
	}
	return rl.rlim_cur > reserve ? (size_t)(rl.rlim_cur - reserve) : 0;
}

int apply_changeset(struct changeset *cs, char *const *paths, size_t npaths, unsigned flags,
		    struct apply_report *rep, struct sbx_err *err)
{
	size_t n = cs->n ? cs->n : 1;
	_cleanup_free_ char *skip = xcalloc(n, 1);
	_cleanup_free_ char *late = xcalloc(n, 1);
	_cleanup_free_ struct source *src = xcalloc(n, sizeof(*src));
	struct apply a = { .cs = cs, .dir = -1, .upper = -1, .dirp = { .fd = -1 }, .upperp = { .fd = -1 },
			   .rep = rep, .err = err, .late = late, .src = src, .exact = flags & APPLY_EXACT_MODES };
	struct rlimit old;
	size_t nbad;
	int r = -1;

	for (size_t i = 0; i < n; i++)
		src[i].fd = -1;
	a.budget = fd_budget(cs->n, &old);
	if (apply_open(&a, err) < 0 || changeset_check(cs, a.dir, &nbad, err) < 0)
		goto out;
	check_sources(&a, paths, npaths);
	check_entries(&a, paths, npaths, skip);
	if (rep->conflicts && !(flags & APPLY_FORCE_REST)) {
		err_set(err, 0, "change set %s: %zu conflict%s, nothing applied (--force-rest applies the rest)",
			cs->id, rep->conflicts, rep->conflicts == 1 ? "" : "s");
		goto out;
	}
	/* the set goes once it is all applied: its files may move out */
	a.move = !npaths && !rep->conflicts && !rep->skipped;
	r = owner_writes(&a, skip);
out:
	for (size_t i = 0; i < n; i++)
		if (src[i].fd >= 0)
			close(src[i].fd);
	if (a.budget)
		setrlimit(RLIMIT_NOFILE, &old);
	parent_drop(&a.dirp);
	parent_drop(&a.upperp);
	if (a.dir >= 0)
		close(a.dir);
	if (a.upper >= 0)
		close(a.upper);
	return r;
}
