/* csverdict.c - the verdict of each entry of a change set against the host
 * as it is now (changeset.h, changeset_check): what show and the MCP tools
 * print beside an entry, and what apply refuses. Every host lookup goes
 * through a directory handle beneath DIR that crosses no symlink and no
 * mount (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_XDEV). */
#define _GNU_SOURCE
#include "undo/changeset.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
#include "store/digest.h"

struct check {
	struct changeset *cs;
	int dir;
	uint64_t mnt;
	char *ppath; /* the parent directory of the last entry, kept open */
	int pfd;
	int perr;    /* errno of its opening, or 0 */
};

static int beneath(int dirfd, const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS |
					   RESOLVE_NO_XDEV };
	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

/* The host's directory that holds path (kept for its siblings); *name is
 * path's last component. -1 with c->perr when it cannot be opened. */
static int parent(struct check *c, const char *path, const char **name)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	*name = slash ? slash + 1 : path;
	if (c->ppath && strlen(c->ppath) == len && !strncmp(c->ppath, path, len))
		return c->pfd;
	free(c->ppath);
	if (c->pfd >= 0)
		close(c->pfd);
	c->ppath = strndup(path, len);
	c->pfd = slash ? beneath(c->dir, c->ppath, O_RDONLY | O_DIRECTORY) : fcntl(c->dir, F_DUPFD_CLOEXEC, 3);
	c->perr = c->pfd < 0 ? errno : 0;
	return c->pfd;
}

/* The verdict for a host lookup that failed with err other than "not
 * there": the real cause, never "gone". */
static const char *host_error(int err)
{
	switch (err) {
	case EACCES:
	case EPERM: return "the host denies access to it or its directory (permission denied)";
	case ELOOP: return "a symlink on the host now";
	case ENAMETOOLONG: return "its path is too long to apply";
	case EIO: return "the host cannot read it (I/O error)";
	default: return "the host cannot look it up";
	}
}

static char type_of(mode_t m)
{
	return S_ISREG(m) ? CS_FILE : S_ISDIR(m) ? CS_DIR : S_ISLNK(m) ? CS_SYMLINK : CS_OTHER;
}

static int too_long(const char *path)
{
	if (strlen(path) >= PATH_MAX - 32)
		return 1;
	for (const char *p = path, *s; *p; p = s + 1) {
		s = strchrnul(p, '/');
		if (s - p > NAME_MAX - 24) /* room for apply's temporary name beside it */
			return 1;
		if (!*s)
			break;
	}
	return 0;
}

static int after_start_x(const struct changeset *cs, const struct statx_timestamp *t)
{
	return t->tv_sec > cs->start_s || (t->tv_sec == cs->start_s && t->tv_nsec > cs->start_ns);
}

/* The host now against what the capture recorded at e->path: one statx
 * gives the type, mode, ctime and mount. */
static const char *host_moved(struct check *c, const struct cs_entry *e, int pfd, const char *name)
{
	struct statx sx;
	char hex[SBX_DIGEST_HEX + 1];
	struct sbx_err ignored;
	const unsigned want = STATX_TYPE | STATX_MODE | STATX_CTIME | STATX_MNT_ID;

	if (statx(pfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, want, &sx) < 0)
		return errno != ENOENT && errno != ENOTDIR ? host_error(errno)
			: e->kind == CS_ADDED ? NULL : "gone from the host since the run";
	if (((sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id != c->mnt) ||
	    (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT && sx.stx_attributes & STATX_ATTR_MOUNT_ROOT))
		return "a mount point on the host: apply never crosses one";
	mode_t mode = sx.stx_mode;
	if (e->kind == CS_ADDED)
		return e->type == CS_DIR && S_ISDIR(mode) ? NULL : "made on the host since the run";
	if (type_of(mode) != e->old_type || (mode & 07777) != e->old_mode)
		return "changed on the host since the run";
	if (S_ISDIR(mode))
		/* below a directory the set deletes or replaces, a name made or
		 * removed on the host since the run began */
		return e->kind != CS_CHANGED && after_start_x(c->cs, &sx.stx_ctime)
			? "its listing changed on the host since the run began" : NULL;
	if (S_ISLNK(mode)) {
		char buf[PATH_MAX + 1];
		ssize_t n = readlinkat(pfd, name, buf, sizeof(buf) - 1);
		if (n < 0 || !e->old_target || (size_t)n != strlen(e->old_target) || memcmp(buf, e->old_target, (size_t)n))
			return "changed on the host since the run";
		return NULL;
	}
	if (!S_ISREG(mode))
		return NULL;
	_cleanup_close_ int fd = openat(pfd, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0 || !S_ISREG(now.st_mode) || digest_fd(fd, hex, &ignored) < 0 ||
	    strcmp(hex, e->digest) != 0)
		return "changed on the host since the run";
	return NULL;
}

/* A missing parent is no conflict for what the set makes there. */
static int made_by_set(const struct changeset *cs, const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return 0;
	_cleanup_free_ char *dir = strndup(path, (size_t)(slash - path));
	ssize_t i = changeset_find(cs, dir);
	return i >= 0 && cs->e[i].type == CS_DIR && cs->e[i].kind != CS_DELETED;
}

static const char *verdict(struct check *c, const struct cs_entry *e, int *conflict)
{
	const char *name;

	*conflict = 1;
	if (e->mount)
		return "a mount point on the host: apply never crosses one";
	if (too_long(e->path))
		return "its path is too long to apply";
	if (e->moved)
		return "changed on the host while the run was going";
	int pfd = parent(c, e->path, &name);
	if (pfd < 0 && c->perr == EXDEV)
		return "below a mount point on the host: apply never crosses one";
	if (pfd < 0 && (c->perr == EACCES || c->perr == EPERM))
		return "the host denies access to its directory (permission denied)";
	if (pfd < 0 && c->perr != ENOENT && c->perr != ENOTDIR && c->perr != ELOOP)
		return host_error(c->perr);
	if (pfd < 0)
		return e->kind == CS_ADDED && made_by_set(c->cs, e->path) ? NULL
			: "its directory is gone or is a symlink now";
	const char *why = host_moved(c, e, pfd, name);
	if (!why && e->type == CS_OTHER && e->kind != CS_DELETED) {
		*conflict = 0;
		return "a device, FIFO or socket is never applied";
	}
	return why;
}

static int is_under(const char *path, const char *dir)
{
	size_t l = strlen(dir);
	return !strncmp(path, dir, l) && path[l] == '/';
}

/* What a verdict leaves out takes along what is below it (nothing is made
 * inside what is not made, nothing deleted inside a directory whose
 * deletion is refused: its listing changed, say); and a deletion of a
 * directory cannot be done while something below it stays. */
void changeset_spread(struct changeset *cs)
{
	/* until nothing moves: a deletion refused in the second pass keeps
	 * what is below it in the first (show and apply agree) */
	for (bool moved = true; moved;) {
		const struct cs_entry *out = NULL;
		moved = false;
		for (size_t i = 0; i < cs->n; i++) {
			struct cs_entry *e = &cs->e[i];
			if (out && is_under(e->path, out->path)) {
				if (!e->why)
					e->why = "below an entry left out", e->conflict = out->conflict, moved = true;
				continue;
			}
			/* a directory left out keeps what is below it, a deleted
			 * one too: --force-rest never empties a directory it keeps */
			out = e->why && (e->kind != CS_DELETED || e->old_type == CS_DIR) ? e : NULL;
		}
		for (size_t i = cs->n; i-- > 0;) {
			struct cs_entry *e = &cs->e[i];
			const char *slash = strrchr(e->path, '/');
			if (!e->why || !slash)
				continue;
			_cleanup_free_ char *dir = strndup(e->path, (size_t)(slash - e->path));
			ssize_t p = changeset_find(cs, dir);
			if (p >= 0 && !cs->e[p].why && cs->e[p].old_type == CS_DIR &&
			    (cs->e[p].kind == CS_DELETED || cs->e[p].type != CS_DIR)) {
				cs->e[p].why = "something below it stays", cs->e[p].conflict = e->conflict;
				moved = true;
			}
		}
	}
}

int changeset_check(struct changeset *cs, int dirfd, size_t *nbad, struct sbx_err *err)
{
	struct stat st;
	struct statx sx;
	struct check c = { .cs = cs, .dir = dirfd, .pfd = -1 };

	*nbad = 0;
	if (fstat(dirfd, &st) < 0 || st.st_dev != cs->dev || st.st_ino != cs->ino)
		return err_set(err, 0, "change set %s: '%s' is not the directory the run began with", cs->id,
			       cs->project);
	if (statx(dirfd, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
		c.mnt = sx.stx_mnt_id;
	for (size_t i = 0; i < cs->n; i++)
		cs->e[i].why = verdict(&c, &cs->e[i], &cs->e[i].conflict);
	free(c.ppath);
	if (c.pfd >= 0)
		close(c.pfd);
	changeset_spread(cs);
	for (size_t i = 0; i < cs->n; i++)
		*nbad += cs->e[i].why != NULL;
	return 0;
}
