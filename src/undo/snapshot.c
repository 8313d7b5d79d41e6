/* snapshot.c - the user's session snapshots, below the data directory:
 * snapshots/SNAP/layer (the session's writable layer, with its workspace
 * at the workspace's path as an opaque directory, kept as the overlay
 * wrote it: an overlay lower layer) and snapshots/SNAP/manifest.json. A
 * snapshot is made in a temporary directory beside and renamed into
 * place, whole or not at all. A session running on a snapshot holds a
 * shared lock on its layer (sandbox/plan.c), which removal asks for. */
#define _GNU_SOURCE
#include "undo/snapshot.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/paths.h"
#include "base/util.h"
#include "sandbox/diskuse.h"
#include "undo/snapshot_copy.h"
#include "undo/snapshot_pause.h"

static const char name_chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";

/* The rule of session names (cmd/session_cmd.c) and more: no '-' first
 * either, so that no name is read as an option where it is handed on (the
 * MCP server runs `sbxrun session snapshot SESSION NAME`). dash: a name
 * kept before that rule (one may still be removed and is still counted). */
static int name_ok(const char *name, int dash)
{
	size_t n = strlen(name);
	return n > 0 && n <= 64 && name[0] != '.' && (dash || name[0] != '-') && strspn(name, name_chars) == n;
}

int snapshot_check_name(const char *name, struct sbx_err *err)
{
	if (!name_ok(name, 0)) {
		_cleanup_free_ char *shown = xstrdup(name);
		for (char *c = shown; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
		return err_plain(err, EINVAL, "invalid snapshot name '%s' (letters, digits, '.', '_', '-', "
				 "at most 64, not first '.' or '-')", shown);
	}
	return 0;
}

/* The user's snapshots directory, made if missing: a directory of the
 * caller's own, never a symlink (another user's is never read). */
static int snapshots_open(char **path, struct sbx_err *err)
{
	_cleanup_free_ char *data = NULL;
	struct stat st;

	if (paths_data_dir(&data, err) < 0)
		return -1;
	*path = xasprintf("%s/snapshots", data);
	if (mkdir_p(*path, 0700, err) < 0)
		return -1;
	int fd = open(*path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "open '%s'", *path);
	if (fstat(fd, &st) < 0 || st.st_uid != geteuid() || (st.st_mode & 0022)) {
		close(fd);
		return err_set(err, EPERM, "'%s' is not a directory of yours that only you may write", *path);
	}
	return fd;
}

static int manifest_write(int dfd, const struct snapshot_info *in, const char *dir, struct sbx_err *err)
{
	struct json_object *o = json_object_new_object();
	_cleanup_free_ char *tmp = xasprintf("%s/manifest.json", dir);

	json_object_object_add(o, "name", json_object_new_string(in->name));
	json_object_object_add(o, "session", json_object_new_string(in->session));
	json_object_object_add(o, "image", json_object_new_string(in->image));
	json_object_object_add(o, "profile", json_object_new_string(in->profile));
	json_object_object_add(o, "parent", json_object_new_string(in->parent));
	json_object_object_add(o, "created", json_object_new_int64(in->created));
	json_object_object_add(o, "size", json_object_new_int64((int64_t)in->size));
	json_object_object_add(o, "files", json_object_new_int64((int64_t)in->files));
	if (in->project[0]) {
		json_object_object_add(o, "project", json_object_new_string(in->project));
		json_object_object_add(o, "project_start_s", json_object_new_int64(in->project_start_s));
		json_object_object_add(o, "project_start_ns", json_object_new_int64(in->project_start_ns));
	}
	const char *s = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY);
	_cleanup_close_ int fd = openat(dfd, "manifest.json", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	int r = fd >= 0 && write(fd, s, strlen(s)) == (ssize_t)strlen(s) && write(fd, "\n", 1) == 1 ? 0 : -1;
	json_object_put(o);
	return r < 0 ? err_sys(err, "write '%s'", tmp) : 0;
}

static void copy_str(char *dst, size_t size, struct json_object *o, const char *key)
{
	struct json_object *v;
	snprintf(dst, size, "%s", json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		 ? json_object_get_string(v) : "");
}

static int manifest_read(int dirfd, const char *snap, struct snapshot_info *info, struct sbx_err *err)
{
	char buf[8192];
	_cleanup_close_ int fd = openat(dirfd, "manifest.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	struct json_object *o, *v;

	if (n < 0)
		return err_sys(err, "snapshot '%s': its manifest", snap);
	buf[n] = '\0';
	if (!(o = json_tokener_parse(buf)) || !json_object_is_type(o, json_type_object)) {
		if (o)
			json_object_put(o);
		return err_set(err, EINVAL, "snapshot '%s': its manifest is not a JSON object", snap);
	}
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", snap);
	copy_str(info->session, sizeof(info->session), o, "session");
	copy_str(info->image, sizeof(info->image), o, "image");
	copy_str(info->profile, sizeof(info->profile), o, "profile");
	copy_str(info->parent, sizeof(info->parent), o, "parent");
	if (json_object_object_get_ex(o, "created", &v))
		info->created = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "size", &v))
		info->size = (uint64_t)json_object_get_int64(v);
	if (json_object_object_get_ex(o, "files", &v))
		info->files = (uint64_t)json_object_get_int64(v);
	copy_str(info->project, sizeof(info->project), o, "project");
	if (json_object_object_get_ex(o, "project_start_s", &v))
		info->project_start_s = json_object_get_int64(v);
	if (json_object_object_get_ex(o, "project_start_ns", &v))
		info->project_start_ns = json_object_get_int64(v);
	json_object_put(o);
	if (info->project[0] && info->project[0] != '/')
		return err_set(err, EINVAL, "snapshot '%s': its manifest names no absolute project", snap);
	return 0;
}

/* snapshots/SNAP, opened; ENOENT says there is none. dash: a name of
 * before the rule (name_ok) is accepted, for its removal. */
static int snap_open_as(const char *snap, int dash, char **dir, struct sbx_err *err)
{
	_cleanup_free_ char *top = NULL;
	if (!(dash && name_ok(snap, 1)) && snapshot_check_name(snap, err) < 0)
		return -1;
	_cleanup_close_ int tfd = snapshots_open(&top, err);
	if (tfd < 0)
		return -1;
	int fd = openat(tfd, snap, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? err_plain(err, ENOENT, "no snapshot '%s'", snap)
				       : err_sys(err, "snapshot '%s'", snap);
	if (dir)
		*dir = xasprintf("%s/%s", top, snap);
	return fd;
}

static int snap_open(const char *snap, char **dir, struct sbx_err *err)
{
	return snap_open_as(snap, 0, dir, err);
}

int snapshot_read(const char *snap, struct snapshot_info *info, struct sbx_err *err)
{
	_cleanup_close_ int fd = snap_open(snap, NULL, err);
	return fd < 0 ? -1 : manifest_read(fd, snap, info, err);
}

int snapshot_layer_dir(const char *snap, char **out, struct sbx_err *err)
{
	_cleanup_free_ char *dir = NULL;
	_cleanup_close_ int fd = snap_open(snap, &dir, err);
	if (fd < 0)
		return -1;
	*out = xasprintf("%s/layer", dir);
	return 0;
}

int snapshot_layers(const char *snap, struct sbx_strlist *layers, struct snapshot_info *info,
		    struct sbx_err *err)
{
	struct snapshot_info cur;
	char name[128];

	snprintf(name, sizeof(name), "%s", snap);
	for (int depth = 0; name[0]; depth++) {
		_cleanup_free_ char *dir = NULL;
		_cleanup_close_ int fd = snap_open(name, &dir, err);
		if (fd < 0 || manifest_read(fd, name, &cur, err) < 0)
			return depth ? err_wrap(err, "snapshot '%s', below '%s'", name, snap) : -1;
		if (depth == SNAPSHOT_MAX_CHAIN)
			return err_set(err, E2BIG, "snapshot '%s': more than %d snapshots below one another",
				       snap, SNAPSHOT_MAX_CHAIN);
		if (depth == 0)
			*info = cur;
		config_strlist_add(layers, xasprintf("%s/layer", dir), "snapshot");
		snprintf(name, sizeof(name), "%s", cur.parent);
	}
	return 0;
}

/* The highest N of the snapshots named session-N. */
static unsigned long highest(int tfd, const char *session)
{
	DIR *d = fdopendir(dup(tfd));
	struct dirent *e;
	size_t len = strlen(session);
	unsigned long max = 0;

	while (d && (e = readdir(d))) {
		char *end;
		if (strncmp(e->d_name, session, len) || e->d_name[len] != '-' || !e->d_name[len + 1])
			continue;
		unsigned long v = strtoul(e->d_name + len + 1, &end, 10);
		if (!*end && v > max)
			max = v;
	}
	if (d)
		closedir(d);
	return max;
}

int snapshot_default_name(const char *session, char **out, struct sbx_err *err)
{
	_cleanup_free_ char *top = NULL;
	_cleanup_close_ int tfd = snapshots_open(&top, err);

	if (tfd < 0)
		return -1;
	*out = xasprintf("%s-%lu", session, highest(tfd, session) + 1);
	return snapshot_check_name(*out, err);
}

/* The workspace's directory below the layer (made as needed, nothing
 * followed), to hold the workspace's copy. */
static int workspace_dir(int layer, const char *workspace, struct sbx_err *err)
{
	_cleanup_free_ char *copy = xstrdup(workspace);
	int fd = fcntl(layer, F_DUPFD_CLOEXEC, 0);

	for (char *save = NULL, *c = strtok_r(copy, "/", &save); fd >= 0 && c; c = strtok_r(NULL, "/", &save)) {
		if (mkdirat(fd, c, 0755) < 0 && errno != EEXIST)
			break;
		int next = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = next;
	}
	return fd >= 0 ? fd : err_sys(err, "snapshot: the workspace '%s' in the layer", workspace);
}

/* The layer, the workspace into layer and, in a project session, the
 * change set's upper (proj[0]) into proj[1] (c->resync: brought up to
 * date). */
static int copy_layers(int upper, int ws, const int proj[2], const struct snapshot_source *src, int layer,
		       const struct snapshot_info *info, struct snapcopy *c, struct sbx_err *err)
{
	c->path[0] = '\0';
	c->keep = ws >= 0 ? src->workspace : NULL;
	if (snapcopy_tree(c, upper, layer, err) < 0)
		return -1;
	c->keep = NULL;
	if (ws >= 0) {
		_cleanup_close_ int wd = workspace_dir(layer, src->workspace, err);
		snprintf(c->path, sizeof(c->path), "%s", src->workspace);
		if (wd < 0 || snapcopy_tree(c, ws, wd, err) < 0 || snapcopy_opaque(wd, err) < 0)
			return -1;
	}
	if (proj[0] < 0)
		return 0;
	snprintf(c->path, sizeof(c->path), "%s", info->project);
	return snapcopy_tree(c, proj[0], proj[1], err);
}

/* The copy itself: a first one while the session runs, then, the session
 * paused, only what changed since it began is copied again (and what went
 * removed), so that the pause grows with what the session writes meanwhile,
 * not with the layer. proj: the --project change set's upper and its
 * copy's directory, or -1. */
static int capture(const struct snapshot_source *src, int layer, const int proj[2], struct snapcopy *c,
		   struct snapshot_info *info, struct sbx_err *err)
{
	_cleanup_close_ int upper = openat(src->staging, src->upper, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int ws = -1;
	struct snappause p;
	struct sbx_err first;

	if (upper < 0)
		return err_sys(err, "snapshot: open the session's writable layer");
	if (*src->ws && *src->workspace &&
	    (ws = openat(src->staging, src->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return err_sys(err, "snapshot: open the session's workspace");
	/* a second older than the first pass: ctimes are coarse */
	int64_t since = (int64_t)time(NULL) - 1;
	if (copy_layers(upper, ws, proj, src, layer, info, c, &first) < 0 && first.errnum == EDQUOT) {
		*err = first;
		return -1;
	} /* else what moved under the first pass is the second's */
	c->resync = 1, c->since_s = since, c->used = 0, c->files = 0;
	uint64_t t0 = now_ms();
	if (snappause_start(&p, src->cgroup, src->supervisor, err) < 0)
		return -1;
	info->paused_by_freezer = p.cgroup_fd >= 0;
	int r = copy_layers(upper, ws, proj, src, layer, info, c, err);
	snappause_end(&p);
	info->paused_ms = now_ms() - t0;
	return r;
}

/* A project session's: its change set's upper (proj[0]) and the
 * snapshot's project/ (proj[1]); DIR and the set's start into info. */
static int open_project(const struct snapshot_source *src, int dfd, int proj[2], struct snapshot_info *info,
			struct sbx_err *err)
{
	proj[0] = proj[1] = -1;
	if (!src->project)
		return 0;
	snprintf(info->project, sizeof(info->project), "%s", src->project);
	info->project_start_s = src->project_start_s;
	info->project_start_ns = src->project_start_ns;
	proj[0] = open(src->project_upper, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (proj[0] < 0)
		return err_sys(err, "snapshot: open '%s'", src->project_upper);
	if (mkdirat(dfd, "project", 0700) < 0 ||
	    (proj[1] = openat(dfd, "project", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_sys(err, "snapshot: create its project directory");
	return 0;
}

static int take_into(const struct snapshot_source *src, int tfd, const char *tmp, const char *top,
		     uint64_t cap, struct snapshot_info *info, struct sbx_err *err)
{
	_cleanup_close_ int dfd = openat(tfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int layer = -1;
	uint64_t used = snapshot_usage();
	struct snapcopy c = { .cap = used >= cap ? 1 : cap - used };
	int proj[2] = { -1, -1 };

	if (dfd < 0 || mkdirat(dfd, "layer", 0755) < 0 ||
	    (layer = openat(dfd, "layer", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_sys(err, "snapshot: create its layer in '%s/%s'", top, tmp);
	int r = open_project(src, dfd, proj, info, err);
	if (r == 0)
		r = capture(src, layer, proj, &c, info, err);
	for (int i = 0; i < 2; i++)
		if (proj[i] >= 0)
			close(proj[i]);
	snapcopy_free(&c);
	if (r < 0) {
		if (err->errnum == EDQUOT)
			err_hint(err, "snapshots hold %.1f GiB of the %.1f GiB that [limits] changes_max leaves "
				 "beside the change sets: remove some with 'sbxrun session snapshot-rm' or "
				 "'sbxrun changes prune'", (double)used / (1 << 30), (double)cap / (1 << 30));
		return -1;
	}
	info->size = c.used;
	info->files = c.files;
	info->created = (int64_t)time(NULL);
	_cleanup_free_ char *dir = xasprintf("%s/%s", top, tmp);
	return manifest_write(dfd, info, dir, err);
}

int snapshot_project_copy(const char *snap, int dst, uint64_t cap, struct sbx_err *err)
{
	_cleanup_close_ int fd = snap_open(snap, NULL, err);
	if (fd < 0)
		return -1;
	_cleanup_close_ int src = openat(fd, "project", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (src < 0)
		return err_sys(err, "snapshot '%s': its project directory", snap);
	struct snapcopy c = { .cap = cap };
	snprintf(c.path, sizeof(c.path), "%s/project", snap);
	int r = snapcopy_tree(&c, src, dst, err);
	snapcopy_free(&c);
	return r;
}

/* A directory a snapshot was made in (.new-SNAP-PID-N, locked by its
 * maker) or removed from (.rm-SNAP-PID): 1 if it is one, 2 if its maker is
 * gone too (its pid runs no more and no one holds its lock): a snapshot
 * killed half way, that the next snapshot or prune removes. */
static int leftover(int tfd, const char *name)
{
	int rm = !strncmp(name, ".rm-", 4);
	if (!rm && strncmp(name, ".new-", 5))
		return 0;
	_cleanup_free_ char *copy = xstrdup(name);
	char *dash = strrchr(copy, '-'), *end;
	if (dash && !rm) {
		*dash = '\0';
		dash = strrchr(copy, '-');
	}
	long pid = dash ? strtol(dash + 1, &end, 10) : 0;
	if (pid <= 0 || *end || kill((pid_t)pid, 0) == 0 || errno == EPERM)
		return 1;
	_cleanup_close_ int fd = openat(tfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0 ? 2 : 1;
}

/* Each leftover directory below tfd: removed (sweep) or measured (bytes). */
static size_t leftovers(int tfd, int sweep, uint64_t *bytes)
{
	DIR *d = fdopendir(fcntl(tfd, F_DUPFD_CLOEXEC, 3));
	struct dirent *e;
	struct sbx_err ignored;
	size_t n = 0;

	while (d && (e = readdir(d))) {
		int k = leftover(tfd, e->d_name);
		uint64_t b = 0;
		if (sweep && k == 2 && rm_rf_at(tfd, e->d_name, &ignored) == 0)
			n++;
		else if (!sweep && k && diskuse_owned_bytes_at(tfd, e->d_name, &b) == 0)
			*bytes += b;
	}
	if (d)
		closedir(d);
	return n;
}

int snapshot_sweep(size_t *removed, struct sbx_err *err)
{
	_cleanup_free_ char *top = NULL;
	_cleanup_close_ int tfd = snapshots_open(&top, err);

	if (tfd < 0)
		return -1;
	*removed = leftovers(tfd, 1, NULL);
	return 0;
}

int snapshot_take(const struct snapshot_source *src, const char *snap, uint64_t cap,
		  struct snapshot_info *info, struct sbx_err *err)
{
	_cleanup_free_ char *top = NULL;
	char tmp[128];

	if (snapshot_check_name(snap, err) < 0)
		return -1;
	_cleanup_close_ int tfd = snapshots_open(&top, err);
	if (tfd < 0)
		return -1;
	if (faccessat(tfd, snap, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return err_plain(err, EEXIST, "snapshot '%s' exists (remove it with 'sbxrun session snapshot-rm %s')",
				 snap, snap);
	leftovers(tfd, 1, NULL);
	memset(info, 0, sizeof(*info));
	snprintf(info->name, sizeof(info->name), "%s", snap);
	snprintf(info->session, sizeof(info->session), "%s", src->session);
	snprintf(info->image, sizeof(info->image), "%s", src->image);
	snprintf(info->profile, sizeof(info->profile), "%s", src->profile);
	snprintf(info->parent, sizeof(info->parent), "%s", src->parent);
	for (int i = 0;; i++) {
		snprintf(tmp, sizeof(tmp), ".new-%s-%d-%d", snap, (int)getpid(), i);
		if (mkdirat(tfd, tmp, 0700) == 0)
			break;
		if (errno != EEXIST || i > 100)
			return err_sys(err, "snapshot: create '%s/%s'", top, tmp);
	}
	/* held while it is made: a sweep of another sbxrun leaves it */
	_cleanup_close_ int lock = openat(tfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (lock >= 0)
		flock(lock, LOCK_EX);
	struct sbx_err ignored;
	if (take_into(src, tfd, tmp, top, cap, info, err) < 0) {
		rm_rf_at(tfd, tmp, &ignored);
		return -1;
	}
	if (renameat2(tfd, tmp, tfd, snap, RENAME_NOREPLACE) < 0) {
		int e = errno;
		rm_rf_at(tfd, tmp, &ignored);
		errno = e;
		return err_sys(err, "snapshot: rename it to '%s/%s'", top, snap);
	}
	return 0;
}

static int by_created(const void *a, const void *b)
{
	const struct snapshot_info *x = a, *y = b;
	return x->created < y->created ? -1 : x->created > y->created ? 1 : strcmp(x->name, y->name);
}

/* Every snapshot's manifest (a directory being made, ".new-", is none). */
static int read_all(struct snapshot_info **out, size_t *n, struct sbx_err *err)
{
	_cleanup_free_ char *top = NULL;
	_cleanup_close_ int tfd = snapshots_open(&top, err);
	DIR *d = tfd < 0 ? NULL : fdopendir(dup(tfd));
	struct dirent *e;
	struct sbx_err ignored;

	*out = NULL;
	*n = 0;
	if (!d)
		return tfd < 0 ? -1 : err_sys(err, "read '%s'", top);
	while ((e = readdir(d))) {
		if (!name_ok(e->d_name, 1))
			continue;
		_cleanup_close_ int fd = openat(tfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		*out = xrealloc(*out, (*n + 1) * sizeof(**out));
		if (fd >= 0 && manifest_read(fd, e->d_name, &(*out)[*n], &ignored) == 0)
			(*n)++;
	}
	closedir(d);
	if (*n)
		qsort(*out, *n, sizeof(**out), by_created);
	return 0;
}

int snapshot_list(void (*fn)(const struct snapshot_info *info, void *arg), void *arg,
		  struct sbx_err *err)
{
	_cleanup_free_ struct snapshot_info *all = NULL;
	size_t n;

	if (read_all(&all, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		fn(&all[i], arg);
	return 0;
}

uint64_t snapshot_usage(void)
{
	_cleanup_free_ struct snapshot_info *all = NULL;
	_cleanup_free_ char *top = NULL;
	struct sbx_err ignored;
	uint64_t sum = 0;
	size_t n;

	if (read_all(&all, &n, &ignored) < 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		sum += all[i].size;
	/* and what a snapshot being made, or one killed half way, holds */
	_cleanup_close_ int tfd = snapshots_open(&top, &ignored);
	if (tfd >= 0)
		leftovers(tfd, 0, &sum);
	return sum;
}

int snapshot_remove(const char *snap, struct sbx_err *err)
{
	_cleanup_free_ struct snapshot_info *all = NULL;
	_cleanup_free_ char *dir = NULL, *top = NULL;
	size_t n;
	_cleanup_close_ int fd = snap_open_as(snap, 1, &dir, err);

	if (fd < 0 || read_all(&all, &n, err) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(all[i].parent, snap))
			return err_plain(err, EBUSY, "snapshot '%s' is below snapshot '%s' (remove that first)",
					 snap, all[i].name);
	_cleanup_close_ int layer = openat(fd, "layer", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (layer >= 0 && flock(layer, LOCK_EX | LOCK_NB) < 0)
		return err_plain(err, EBUSY, "snapshot '%s' is in use by a running session forked from it", snap);
	_cleanup_close_ int tfd = snapshots_open(&top, err);
	if (tfd < 0)
		return -1;
	/* out of sight first, so that no fork starts on half of it */
	char gone[160];
	snprintf(gone, sizeof(gone), ".rm-%s-%d", snap, (int)getpid());
	if (renameat(tfd, snap, tfd, gone) < 0)
		return err_sys(err, "remove '%s'", dir);
	return rm_rf_at(tfd, gone, err);
}
