/* changeset.c - making, capturing, reading and removing change sets
 * (changeset.h). The capture walks the upper directory the sandbox wrote
 * (after it ended: no process of it is left) against DIR, each level of
 * both through directory handles, never following a symlink. */
#define _GNU_SOURCE
#include "undo/changeset.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sched.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "base/lockwait.h"
#include "base/util.h"
#include "store/digest.h"
#include "undo/csname.h"
#include "undo/undostore.h"

#define MANIFEST_MAGIC "sbxrun-changes 1"
#define MAX_ENTRIES 10000000

const char *changeset_kind_name(char kind)
{
	switch (kind) {
	case CS_ADDED: return "added";
	case CS_CHANGED: return "changed";
	case CS_DELETED: return "deleted";
	case CS_REPLACED: return "replaced";
	}
	return "?";
}

const char *changeset_type_name(char type)
{
	switch (type) {
	case CS_FILE: return "file";
	case CS_DIR: return "dir";
	case CS_SYMLINK: return "symlink";
	}
	return "special";
}

static char type_of(mode_t m)
{
	return S_ISREG(m) ? CS_FILE : S_ISDIR(m) ? CS_DIR : S_ISLNK(m) ? CS_SYMLINK : CS_OTHER;
}

static void new_id(char *id, size_t size)
{
	unsigned char r[3] = { 0 };
	time_t t = time(NULL);
	struct tm tm;

	if (getrandom(r, sizeof(r), 0) != sizeof(r))
		memset(r, 0, sizeof(r));
	gmtime_r(&t, &tm);
	snprintf(id, size, "%04d%02d%02d-%02d%02d%02d-%02x%02x%02x", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, r[0], r[1], r[2]);
}

static int write_manifest(const struct changeset *cs, struct sbx_err *err)
{
	_cleanup_free_ char *p = xasprintf("%s/manifest", cs->dir);
	_cleanup_free_ char *proj = changeset_escape(cs->project);
	_cleanup_free_ char *img = changeset_escape(cs->image ? cs->image : "");
	_cleanup_free_ char *ses = cs->session ? xasprintf("session %s\n", cs->session) : xstrdup("");
	_cleanup_free_ char *text = xasprintf(MANIFEST_MAGIC "\nproject %s\ndevice %" PRIu64
					      "\ninode %" PRIu64 "\nstart %" PRId64 ".%09" PRId64
					      "\nimage %s\n%s", proj, (uint64_t)cs->dev,
					      (uint64_t)cs->ino, cs->start_s, cs->start_ns, img, ses);
	_cleanup_close_ int fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "write '%s'", p);
	return 0;
}

static int make_layer(const struct changeset *cs, uid_t uid, gid_t gid, struct sbx_err *err)
{
	for (const char *const *d = (const char *const[]){ "upper", "work", NULL }; *d; d++) {
		_cleanup_free_ char *p = xasprintf("%s/%s", cs->dir, *d);
		if (mkdir(p, 0700) < 0 || (geteuid() == 0 && chown(p, uid, gid) < 0))
			return err_sys(err, "create '%s'", p);
	}
	return 0;
}

int changeset_create(const char *project, const char *image, const char *session,
		     const struct timespec *start, uid_t uid, gid_t gid, struct changeset *cs, int *dirfd,
		     struct sbx_err *err)
{
	struct stat st;
	struct timespec now;
	char id[64];
	_cleanup_free_ char *store = NULL;

	memset(cs, 0, sizeof(*cs));
	*dirfd = -1;
	cs->project = realpath(project, NULL);
	if (!cs->project)
		return err_sys(err, "--project '%s'", project);
	*dirfd = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (*dirfd < 0 || fstat(*dirfd, &st) < 0)
		return err_sys(err, "--project '%s'", project);
	if (undostore_changes_dir(&store, err) < 0)
		return -1;
	cs->dev = st.st_dev;
	cs->ino = st.st_ino;
	clock_gettime(CLOCK_REALTIME, &now);
	if (start)
		now = *start;
	cs->start_s = now.tv_sec;
	cs->start_ns = now.tv_nsec;
	cs->image = xstrdup(image ? image : "");
	cs->session = session ? xstrdup(session) : NULL;
	for (int tries = 0;; tries++) {
		new_id(id, sizeof(id));
		free(cs->dir);
		cs->dir = xasprintf("%s/%s", store, id);
		if (mkdir(cs->dir, 0700) == 0)
			break;
		if (errno != EEXIST || tries > 16)
			return err_sys(err, "create '%s'", cs->dir);
	}
	cs->id = xstrdup(id);
	cs->lock_fd = open(cs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	cs->locked = cs->lock_fd >= 0;
	if (!cs->locked || lock_wait(cs->lock_fd, LOCK_SH, cs->dir, LOCK_DEADLINE_S, err) < 0) {
		struct sbx_err e2;
		if (!cs->locked)
			err_sys(err, "open '%s'", cs->dir);
		rm_rf_at(AT_FDCWD, cs->dir, &e2);
		return -1;
	}
	/* a root caller's sandbox runs as another uid: the overlay looks
	 * upper and work up with its credentials */
	if ((geteuid() == 0 && chown(cs->dir, uid, gid) < 0) || make_layer(cs, uid, gid, err) < 0 || write_manifest(cs, err) < 0) {
		struct sbx_err e2;
		rm_rf_at(AT_FDCWD, cs->dir, &e2);
		return -1;
	}
	return 0;
}

/* The capture's walk: one level of upper against the same level of DIR
 * (lower: -1 when DIR has no directory there). */
struct walk {
	struct changeset *cs;
	size_t cap;
	uint64_t mnt; /* DIR's mount: the walk never crosses into another */
	struct sbx_err *err;
};

/* A new entry of kind at the end of cs (cap: its room), zeroed and counted:
 * the walk at the end of a run and the reading of a kept set share it. */
static struct cs_entry *push_entry(struct changeset *cs, size_t *cap, char kind)
{
	if (cs->n == *cap) {
		*cap = *cap ? *cap * 2 : 64;
		cs->e = xrealloc(cs->e, *cap * sizeof(*cs->e));
	}
	struct cs_entry *e = &cs->e[cs->n++];
	*e = (struct cs_entry){ .kind = kind };
	if (kind == CS_ADDED)
		cs->added++;
	else if (kind == CS_DELETED)
		cs->deleted++;
	else
		cs->changed++;
	return e;
}

static struct cs_entry *add_entry(struct walk *w, char kind, char type, const char *path)
{
	struct cs_entry *e = push_entry(w->cs, &w->cap, kind);

	e->type = type;
	e->path = xstrdup(path);
	strcpy(e->digest, "-");
	return e;
}

static char *read_target(int dirfd, const char *name)
{
	char buf[PATH_MAX + 1];
	ssize_t n = readlinkat(dirfd, name, buf, sizeof(buf) - 1);

	if (n <= 0)
		return xstrdup("");
	buf[n] = '\0';
	return xstrdup(buf);
}

/* What the sandbox left at name below upper: its mode, size, target. */
static void note_new(struct cs_entry *e, int upper, const char *name, const struct stat *st)
{
	e->mode = st->st_mode & 07777;
	if (!S_ISDIR(st->st_mode))
		e->size = (uint64_t)st->st_size;
	if (S_ISLNK(st->st_mode))
		e->target = read_target(upper, name);
}

/* The host's entry at name: lstat, and whether it is a mount point (or on
 * another mount than DIR: a bind-mounted file counts). */
static int host_stat(const struct walk *w, int lower, const char *name, struct stat *st, int *mount)
{
	struct statx sx;

	*mount = 0;
	if (fstatat(lower, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -1;
	if (statx(lower, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT, STATX_MNT_ID, &sx) == 0)
		*mount = ((sx.stx_mask & STATX_MNT_ID) && sx.stx_mnt_id != w->mnt) ||
			 (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT &&
			  sx.stx_attributes & STATX_ATTR_MOUNT_ROOT);
	return 0;
}

/* What the host had at name: its type, mode, target, digest (a regular
 * file), and whether it changed after the run began. */
static int note_host(struct walk *w, struct cs_entry *e, int lower, const char *name,
		     const struct stat *lst, int mount)
{
	const struct changeset *cs = w->cs;

	e->old_type = type_of(lst->st_mode);
	e->old_mode = lst->st_mode & 07777;
	e->mount = mount;
	e->moved = lst->st_ctim.tv_sec > cs->start_s ||
		   (lst->st_ctim.tv_sec == cs->start_s && lst->st_ctim.tv_nsec > cs->start_ns);
	if (S_ISLNK(lst->st_mode))
		e->old_target = read_target(lower, name);
	if (!S_ISREG(lst->st_mode) || mount)
		return 0;
	_cleanup_close_ int fd = openat(lower, name, O_RDONLY | O_NOFOLLOW | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	struct stat now;
	if (fd < 0 || fstat(fd, &now) < 0)
		return err_sys(w->err, "read the project's '%s'", e->path);
	if (!S_ISREG(now.st_mode)) /* swapped since its lstat: never read */
		return err_set(w->err, 0, "read the project's '%s': no longer a regular file", e->path);
	return digest_fd(fd, e->digest, w->err);
}

static int too_many(struct walk *w)
{
	return w->cs->n >= MAX_ENTRIES ? err_set(w->err, 0, "change set: more than %d changes", MAX_ENTRIES) : 0;
}

/* The host's entry at name goes (kind D), and with a directory every
 * entry below it, each of its own: apply deletes nothing it did not list.
 * A mount point is listed, never entered. */
static int host_gone(struct walk *w, int lower, const char *name, const char *path, const struct stat *lst,
		     int mount)
{
	struct cs_entry *e;

	if (too_many(w) < 0)
		return -1;
	e = add_entry(w, CS_DELETED, type_of(lst->st_mode), path);
	if (note_host(w, e, lower, name, lst, mount) < 0)
		return -1;
	if (!S_ISDIR(lst->st_mode) || mount)
		return 0;
	_cleanup_close_ int sub = openat(lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = sub < 0 ? NULL : fdopendir(fcntl(sub, F_DUPFD_CLOEXEC, 3));
	int r = 0;
	if (!d)
		return err_sys(w->err, "read the project's '%s'", path);
	for (struct dirent *de; r == 0 && (de = readdir(d));) {
		struct stat cst;
		int cmount;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *cpath = xasprintf("%s/%s", path, de->d_name);
		if (host_stat(w, sub, de->d_name, &cst, &cmount) < 0)
			r = err_sys(w->err, "read the project's '%s'", cpath);
		else
			r = host_gone(w, sub, de->d_name, cpath, &cst, cmount);
	}
	closedir(d);
	return r;
}

static int walk_dir(struct walk *w, int upper, int lower, const char *rel, int opaque);

/* Below a replaced (opaque) directory the host's entries the sandbox did
 * not write again are gone: each is listed. */
static int walk_gone(struct walk *w, int upper, int lower, const char *rel)
{
	DIR *d = fdopendir(fcntl(lower, F_DUPFD_CLOEXEC, 3));
	int r = 0;

	if (!d)
		return err_sys(w->err, "read the project's '%s'", rel);
	for (struct dirent *de; r == 0 && (de = readdir(d));) {
		struct stat st, lst;
		int mount;
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") ||
		    fstatat(upper, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		_cleanup_free_ char *path = xasprintf("%s/%s", rel, de->d_name);
		if (host_stat(w, lower, de->d_name, &lst, &mount) == 0)
			r = host_gone(w, lower, de->d_name, path, &lst, mount);
	}
	closedir(d);
	return r;
}

/* The same file on both sides (below a replaced directory, where the
 * sandbox wrote it again): no entry. */
static int same_file(int upper, int lower, const char *name, const struct stat *st, const struct stat *lst)
{
	char a[SBX_DIGEST_HEX + 1], b[SBX_DIGEST_HEX + 1];
	struct sbx_err ignored;

	if ((st->st_mode & 07777) != (lst->st_mode & 07777) || type_of(st->st_mode) != type_of(lst->st_mode))
		return 0;
	if (S_ISLNK(st->st_mode)) {
		_cleanup_free_ char *x = read_target(upper, name), *y = read_target(lower, name);
		return !strcmp(x, y);
	}
	if (!S_ISREG(st->st_mode) || st->st_size != lst->st_size)
		return 0;
	_cleanup_close_ int fa = openat(upper, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	_cleanup_close_ int fb = openat(lower, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat sa, sb;
	return fa >= 0 && fb >= 0 && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 && S_ISREG(sa.st_mode) &&
	       S_ISREG(sb.st_mode) && digest_fd(fa, a, &ignored) == 0 && digest_fd(fb, b, &ignored) == 0 &&
	       !strcmp(a, b);
}

/* A directory of the sandbox's layer opened for the walk. One it left
 * without read or search permission for its owner (chmod 0300, 0600) is
 * the caller's own, in a set no sandbox writes any more: given u+rwx
 * through a handle opened as a path (nothing followed, no name looked up
 * twice), its mode as the sandbox left it being what the entry records. */
static int open_upper_dir(const struct walk *w, int upper, const char *name, const struct stat *st)
{
	char proc[64];
	_cleanup_close_ int p = openat(upper, name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (p < 0)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", p);
	if ((st->st_mode & 0500) != 0500 && !w->cs->live && st->st_uid == geteuid() && geteuid() != 0)
		(void)!chmod(proc, (st->st_mode & 07777) | 0700);
	return openat(p, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
}

/* A directory the sandbox left at name, over what the host has there. */
static int walk_subdir(struct walk *w, int upper, int lower, const char *name, const char *path,
		       int opaque, int has_lower, const struct stat *lst, int mount, const struct stat *ust)
{
	char mark[2] = "";
	struct stat st;
	_cleanup_close_ int sub = open_upper_dir(w, upper, name, ust);

	if (sub < 0 && w->cs->live && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return 0; /* gone, or another type by now: the next walk sees it */
	if (sub < 0 || fstat(sub, &st) < 0)
		return err_sys(w->err, "change set: open '%s'", path);
	st.st_mode = ust->st_mode; /* as the sandbox left it */
	fgetxattr(sub, "user.overlay.opaque", mark, 1);
	opaque = opaque || mark[0] == 'y';
	if (!has_lower) {
		note_new(add_entry(w, CS_ADDED, CS_DIR, path), upper, name, &st);
		return walk_dir(w, sub, -1, path, 0);
	}
	if (!S_ISDIR(lst->st_mode) || mount || opaque) {
		/* another type replaced, a mount point (never entered), or the
		 * sandbox's directory in place of the host's */
		struct cs_entry *e = add_entry(w, CS_REPLACED, CS_DIR, path);
		note_new(e, upper, name, &st);
		if (note_host(w, e, lower, name, lst, mount) < 0)
			return -1;
		if (!S_ISDIR(lst->st_mode) || mount)
			return walk_dir(w, sub, -1, path, 0);
	}
	_cleanup_close_ int lsub = openat(lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lsub < 0)
		return err_sys(w->err, "read the project's '%s'", path);
	if (opaque && walk_gone(w, sub, lsub, path) < 0)
		return -1;
	return walk_dir(w, sub, lsub, path, opaque);
}

static int walk_one(struct walk *w, int upper, int lower, const char *name, const char *path, int opaque)
{
	struct stat st, lst;
	int mount = 0;
	int has_lower = lower >= 0 && host_stat(w, lower, name, &lst, &mount) == 0;

	if (fstatat(upper, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		/* a live set's sandbox renames and removes as the walk goes */
		return errno == ENOENT && w->cs->live ? 0 : err_sys(w->err, "change set: stat '%s'", path);
	if (too_many(w) < 0)
		return -1;
	if (S_ISCHR(st.st_mode) && st.st_rdev == 0) /* a whiteout */
		return has_lower ? host_gone(w, lower, name, path, &lst, mount) : 0;
	if (S_ISDIR(st.st_mode))
		return walk_subdir(w, upper, lower, name, path, opaque, has_lower, &lst, mount, &st);
	if (!has_lower) {
		note_new(add_entry(w, CS_ADDED, type_of(st.st_mode), path), upper, name, &st);
		return 0;
	}
	if (opaque && !mount && same_file(upper, lower, name, &st, &lst))
		return 0;
	int other = type_of(st.st_mode) != type_of(lst.st_mode) || mount;
	struct cs_entry *e = add_entry(w, other ? CS_REPLACED : CS_CHANGED, type_of(st.st_mode), path);
	note_new(e, upper, name, &st);
	if (note_host(w, e, lower, name, &lst, mount) < 0)
		return -1;
	/* a file in place of a directory: what was below it goes too */
	if (S_ISDIR(lst.st_mode) && !mount) {
		_cleanup_close_ int lsub = openat(lower, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (lsub < 0)
			return err_sys(w->err, "read the project's '%s'", path);
		return walk_gone(w, -1, lsub, path); /* upper -1: every entry goes */
	}
	return 0;
}

static int walk_dir(struct walk *w, int upper, int lower, const char *rel, int opaque)
{
	DIR *d = fdopendir(fcntl(upper, F_DUPFD_CLOEXEC, 3));
	struct dirent *de;
	int r = 0;

	if (!d)
		return err_sys(w->err, "change set: read '%s'", rel[0] ? rel : ".");
	while (r == 0 && (de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		_cleanup_free_ char *path = rel[0] ? xasprintf("%s/%s", rel, de->d_name) : xstrdup(de->d_name);
		r = walk_one(w, upper, lower, de->d_name, path, opaque);
	}
	closedir(d);
	return r;
}

/* Path order with '/' below every other byte: a directory, then its whole
 * tree, then its next sibling (apply leaves a tree out by its prefix). */
static int by_path(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)((const struct cs_entry *)a)->path;
	const unsigned char *y = (const unsigned char *)((const struct cs_entry *)b)->path;

	for (; *x && *x == *y; x++, y++)
		;
	int cx = *x == '/' ? 1 : *x, cy = *y == '/' ? 1 : *y;
	return cx - cy;
}

#define ENTRIES_MAGIC "sbxrun-entries 2"

static int write_entries(const struct changeset *cs, struct sbx_err *err)
{
	_cleanup_free_ char *p = xasprintf("%s/entries", cs->dir);
	_cleanup_free_ char *tmp = xasprintf("%s/entries.tmp", cs->dir);
	unlink(tmp); /* a capture killed half way */
	FILE *f = fopen(tmp, "wxe");

	if (!f)
		return err_sys(err, "write '%s'", tmp);
	fputs(ENTRIES_MAGIC "\n", f);
	for (size_t i = 0; i < cs->n; i++) {
		const struct cs_entry *e = &cs->e[i];
		_cleanup_free_ char *q = changeset_escape(e->path);
		_cleanup_free_ char *t = changeset_escape(e->target ? e->target : "");
		_cleanup_free_ char *o = changeset_escape(e->old_target ? e->old_target : "");
		fprintf(f, "%c %c %c %o %o %" PRIu64 " %s %c%c\t%s\t%s\t%s\n", e->kind, e->type,
			e->old_type ? e->old_type : '-', e->mode, e->old_mode, e->size, e->digest,
			e->moved ? 'm' : '-', e->mount ? 'M' : '-', q, t, o);
	}
	if (fflush(f) != 0 || fsync(fileno(f)) < 0 || ferror(f)) {
		fclose(f);
		return err_sys(err, "write '%s'", tmp);
	}
	fclose(f);
	return rename(tmp, p) < 0 ? err_sys(err, "rename '%s'", tmp) : 0;
}

int changeset_scan(struct changeset *cs, struct sbx_err *err)
{
	struct walk w = { cs, 0, 0, err };
	_cleanup_free_ char *up = xasprintf("%s/upper", cs->dir);
	_cleanup_close_ int upper = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int lower = open(cs->project, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	struct statx sx;

	if (upper < 0)
		return err_sys(err, "open '%s'", up);
	if (lower < 0 || fstat(lower, &st) < 0 || st.st_dev != cs->dev || st.st_ino != cs->ino)
		return err_set(err, lower < 0 ? errno : 0, "--project '%s': not the directory the run began with",
			       cs->project);
	if (statx(lower, "", AT_EMPTY_PATH, STATX_MNT_ID, &sx) == 0 && (sx.stx_mask & STATX_MNT_ID))
		w.mnt = sx.stx_mnt_id;
	if (walk_dir(&w, upper, lower, "", 0) < 0)
		return -1;
	if (cs->n)
		qsort(cs->e, cs->n, sizeof(*cs->e), by_path);
	return 0;
}

int changeset_capture(struct changeset *cs, struct sbx_err *err)
{
	if (changeset_scan(cs, err) < 0 || write_entries(cs, err) < 0)
		return -1;
	cs->captured = 1;
	return 0;
}

static int parse_manifest(struct changeset *cs, char *text, struct sbx_err *err)
{
	char *save = NULL;
	int seen = 0;

	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		uint64_t v;
		if (!strncmp(l, "project ", 8) && !cs->project)
			cs->project = changeset_unescape(l + 8), seen |= cs->project ? 1 : 0;
		else if (sscanf(l, "device %" SCNu64, &v) == 1)
			cs->dev = (dev_t)v, seen |= 2;
		else if (sscanf(l, "inode %" SCNu64, &v) == 1)
			cs->ino = (ino_t)v, seen |= 4;
		else if (sscanf(l, "start %" SCNd64 ".%" SCNd64, &cs->start_s, &cs->start_ns) == 2)
			seen |= 8;
		else if (!strncmp(l, "image ", 6) && !cs->image)
			cs->image = changeset_unescape(l + 6);
		else if (!strncmp(l, "session ", 8) && !cs->session)
			cs->session = xstrdup(l + 8);
	}
	if (seen != 15 || cs->project[0] != '/')
		return err_set(err, 0, "change set %s: its manifest is damaged", cs->id);
	return 0;
}

static int parse_entry(struct changeset *cs, size_t *cap, char *l, struct sbx_err *err)
{
	char kind, type, old_type, moved, mount;
	unsigned mode, old_mode;
	uint64_t size;
	char digest[65];
	int off = 0;
	char *f[4] = { l, NULL, NULL, NULL };

	for (int i = 1; i < 4; i++) {
		char *t = f[i - 1] ? strchr(f[i - 1], '\t') : NULL;
		if (t)
			*t = '\0', f[i] = t + 1;
	}
	if (!f[3] || strchr(f[3], '\t') ||
	    sscanf(f[0], "%c %c %c %o %o %" SCNu64 " %64s %c%c%n", &kind, &type, &old_type, &mode, &old_mode,
		   &size, digest, &moved, &mount, &off) != 9 || f[0][off] || !strchr("ACDR", kind) ||
	    !strchr("fdlo", type) || !strchr("fdlo-", old_type) || mode > 07777 || old_mode > 07777)
		return err_set(err, 0, "change set %s: entries are damaged", cs->id);
	char *path = changeset_unescape(f[1]), *target = changeset_unescape(f[2]);
	char *old_target = changeset_unescape(f[3]);
	if (!path || !target || !old_target || !path[0] || path[0] == '/') {
		free(path), free(target), free(old_target);
		return err_set(err, 0, "change set %s: entries are damaged", cs->id);
	}
	struct cs_entry *e = push_entry(cs, cap, kind);
	e->type = type;
	e->old_type = old_type == '-' ? 0 : old_type;
	e->mode = mode;
	e->old_mode = old_mode;
	e->size = size;
	e->moved = moved == 'm';
	e->mount = mount == 'M';
	e->path = path;
	e->target = target[0] ? target : (free(target), NULL);
	e->old_target = old_target[0] ? old_target : (free(old_target), NULL);
	snprintf(e->digest, sizeof(e->digest), "%s", digest);
	return 0;
}

int changeset_load(const char *id, struct changeset *cs, struct sbx_err *err)
{
	_cleanup_free_ char *store = NULL, *text = NULL, *list = NULL;
	size_t len, cap = 0;

	memset(cs, 0, sizeof(*cs));
	if (!undostore_id_valid(id))
		return err_set(err, 0, "changes: '%s' is not a change set id (see 'sbxrun changes ls')", id);
	if (undostore_changes_dir(&store, err) < 0)
		return -1;
	cs->id = xstrdup(id);
	cs->dir = xasprintf("%s/%s", store, id);
	_cleanup_close_ int dfd = open(cs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0)
		return errno == ENOENT ? err_set(err, 0, "changes: no change set '%s' (see 'sbxrun changes ls')", id)
				       : err_sys(err, "open '%s'", cs->dir);
	if (read_file_beneath(dfd, "manifest", 1 << 16, &text, &len, err) < 0 ||
	    parse_manifest(cs, text, err) < 0)
		return -1;
	if (read_file_beneath(dfd, "entries", (size_t)1 << 31, &list, &len, err) < 0) {
		if (err->errnum != ENOENT)
			return -1;
		return 0; /* the run has not ended (or did not end well) */
	}
	/* entries of an older sbxrun (no modes, no targets): captured again */
	if (strncmp(list, ENTRIES_MAGIC "\n", sizeof(ENTRIES_MAGIC)) != 0)
		return 0;
	cs->captured = 1;
	char *save = NULL;
	for (char *l = strtok_r(list + sizeof(ENTRIES_MAGIC), "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (parse_entry(cs, &cap, l, err) < 0)
			return -1;
	return 0;
}

int changeset_remove(struct changeset *cs, struct sbx_err *err)
{
	return rm_rf_at(AT_FDCWD, cs->dir, err);
}

#define GONE_PREFIX ".gone-"

/* The removal itself, in a grandchild of the caller's that nothing waits
 * for: idle for the CPU and the disk (a file system mounted with discard
 * pays a discard per file freed), out of the caller's session. */
static void remove_detached(const char *gone)
{
	struct sched_param sp = { 0 };
	struct sbx_err ignored;

	if (setsid() < 0 && errno != EPERM)
		_exit(1);
	pid_t pid = fork();
	if (pid != 0)
		_exit(pid < 0);
	sched_setscheduler(0, SCHED_IDLE, &sp);
	/* IOPRIO_WHO_PROCESS, IOPRIO_CLASS_IDLE << IOPRIO_CLASS_SHIFT */
	syscall(SYS_ioprio_set, 1, 0, 3 << 13);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (int fd = 0; null >= 0 && fd < 3; fd++)
		dup2(null, fd);
	_exit(rm_rf_at(AT_FDCWD, gone, &ignored) < 0);
}

int changeset_remove_later(struct changeset *cs, struct sbx_err *err)
{
	const char *slash = strrchr(cs->dir, '/');
	if (!slash || !cs->id)
		return changeset_remove(cs, err);
	_cleanup_free_ char *gone = xasprintf("%.*s/" GONE_PREFIX "%s", (int)(slash - cs->dir), cs->dir, cs->id);
	if (rename(cs->dir, gone) < 0)
		return changeset_remove(cs, err);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		remove_detached(gone);
	if (pid < 0 || waitpid(pid, NULL, 0) < 0)
		return rm_rf_at(AT_FDCWD, gone, err);
	return 0;
}

size_t changeset_sweep(void)
{
	_cleanup_free_ char *store = NULL;
	struct sbx_err ignored;
	size_t n = 0;

	if (undostore_changes_dir(&store, &ignored) < 0)
		return 0;
	_cleanup_close_ int sfd = open(store, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = sfd < 0 ? NULL : fdopendir(dup(sfd));
	if (!d)
		return 0;
	for (struct dirent *de; (de = readdir(d));)
		if (!strncmp(de->d_name, GONE_PREFIX, strlen(GONE_PREFIX)) && rm_rf_at(sfd, de->d_name, &ignored) == 0)
			n++;
	closedir(d);
	return n;
}

void changeset_free(struct changeset *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		free(cs->e[i].path);
		free(cs->e[i].target);
		free(cs->e[i].old_target);
	}
	free(cs->e);
	free(cs->id);
	free(cs->dir);
	free(cs->project);
	free(cs->image);
	free(cs->session);
	if (cs->locked)
		close(cs->lock_fd);
	memset(cs, 0, sizeof(*cs));
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int changeset_list(char ***out, struct sbx_err *err)
{
	_cleanup_free_ char *store = NULL;
	size_t n = 0;
	char **v = xcalloc(1, sizeof(char *));

	*out = v;
	if (undostore_changes_dir(&store, err) < 0)
		return -1;
	DIR *d = opendir(store);
	if (!d)
		return err_sys(err, "read '%s'", store);
	for (struct dirent *de; (de = readdir(d));) {
		if (!undostore_id_valid(de->d_name))
			continue;
		v = xrealloc(v, (n + 2) * sizeof(char *));
		v[n++] = xstrdup(de->d_name);
		v[n] = NULL;
	}
	closedir(d);
	qsort(v, n, sizeof(char *), by_name); /* ids begin with their time */
	*out = v;
	return 0;
}

ssize_t changeset_find(const struct changeset *cs, const char *path)
{
	struct cs_entry key = { .path = (char *)path };
	struct cs_entry *e = cs->n ? bsearch(&key, cs->e, cs->n, sizeof(*cs->e), by_path) : NULL;
	return e ? e - cs->e : -1;
}

unsigned changeset_applied_mode(const struct cs_entry *e, unsigned umask_bits)
{
	if (e->type == CS_DIR)
		return 0777 & ~umask_bits;
	if (e->type != CS_FILE)
		return 0;
	/* a changed file whose execute bit stayed keeps the host's mode */
	if (e->kind == CS_CHANGED && e->old_type == CS_FILE && !(e->mode & 0111) == !(e->old_mode & 0111))
		return e->old_mode & 0777;
	return (e->mode & 0111 ? 0755u : 0644u) & ~umask_bits;
}
