/* cgroup.c - finding, making and reading cgroups (v2 and v1). sbxrun nests a
 * sandbox's cgroup below the caller's own (or the nearest ancestor it may
 * write), so limits set on the caller still bound the sandbox. */
#define _GNU_SOURCE
#include "sandbox/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "base/util.h"

/* mountinfo escapes space, tab, newline and backslash as \ooo. */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			*d++ = *s;
		}
	}
	*d = '\0';
}

int cgroup_list_has(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n) {
		int start = p == list || p[-1] == ' ' || p[-1] == ',' || p[-1] == ':';
		int end = p[n] == '\0' || p[n] == ' ' || p[n] == ',' || p[n] == '\n';
		if (start && end)
			return 1;
	}
	return 0;
}

int cgroup_parse_self(const char *text, const char *ctl, char *out, size_t size)
{
	char line[4096];

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
		if (!c2)
			continue;
		int is_v2 = c1 == line + 1 && line[0] == '0' && c2 == c1 + 1; /* "0::PATH" */
		*c2 = '\0';
		if (ctl ? (!is_v2 && cgroup_list_has(c1 + 1, ctl)) : is_v2) {
			snprintf(out, size, "%s", c2 + 1);
			return 0;
		}
	}
	return -1;
}

int cgroup_parse_mountinfo(const char *text, const char *ctl, char *mnt, char *root, size_t size)
{
	char line[4096];

	for (const char *p = text; *p;) {
		size_t len = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		char *sep = strstr(line, " - "), *f[5], *save = NULL, *tail;
		if (!sep)
			continue;
		*sep = '\0';
		tail = sep + 3;
		f[0] = strtok_r(line, " ", &save);
		for (int i = 1; i < 5; i++)
			f[i] = f[i - 1] ? strtok_r(NULL, " ", &save) : NULL;
		char *fstype = strtok_r(tail, " ", &save), *src = strtok_r(NULL, " ", &save);
		char *opts = src ? strtok_r(NULL, " ", &save) : NULL;
		if (!f[4] || !fstype)
			continue;
		int match = ctl ? !strcmp(fstype, "cgroup") && opts && cgroup_list_has(opts, ctl)
				: !strcmp(fstype, "cgroup2");
		if (!match)
			continue;
		unescape(f[3]);
		unescape(f[4]);
		snprintf(mnt, size, "%s", f[4]);
		snprintf(root, size, "%s", f[3]);
		return 0;
	}
	return -1;
}

int cgroup_keyed_value(const char *text, const char *key, uint64_t *out)
{
	size_t n = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, n) == 0 && p[n] == ' ') {
			char *end;
			errno = 0;
			unsigned long long v = strtoull(p + n + 1, &end, 10);
			if (errno || end == p + n + 1)
				return -1;
			*out = v;
			return 0;
		}
	}
	return -1;
}

/* A small cgroup or proc file, relative to dirfd (AT_FDCWD for a path). */
static int read_at(int dirfd, const char *path, char *buf, size_t size)
{
	_cleanup_close_ int fd = dirfd == -1 ? -1 : openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static int write_at(int dirfd, const char *dir, const char *file, const char *value,
		    struct sbx_err *err)
{
	_cleanup_close_ int fd = openat(dirfd, file, O_WRONLY | O_CLOEXEC);
	const char *sep = dir ? "/" : "";

	if (fd < 0)
		return err_sys(err, "open '%s%s%s'", dir ? dir : "", sep, file);
	if (write(fd, value, strlen(value)) < 0)
		return err_sys(err, "write '%s' to '%s%s%s'", value, dir ? dir : "", sep, file);
	return 0;
}

int cgroup_read_path(const char *path, char *buf, size_t size)
{
	return read_at(AT_FDCWD, path, buf, size);
}

int cgroup_write_path(const char *path, const char *value, struct sbx_err *err)
{
	return write_at(AT_FDCWD, NULL, path, value, err);
}

static int is_fs(const char *path, long magic)
{
	struct statfs sf;
	return statfs(path, &sf) == 0 && sf.f_type == magic;
}

/* One hierarchy of /proc/self/cgroup ("N:CONTROLLERS:PATH") at the place
 * systemd mounts it, as a mountinfo line; 0 only when that place is such a
 * file system and the caller's own cgroup is there. */
static int standard_mount(const char *line, int hybrid, char *out, size_t size)
{
	char ctls[256], dir[PATH_MAX], own[PATH_MAX * 2];
	const char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	struct stat st;

	if (!c2 || (size_t)(c2 - c1 - 1) >= sizeof(ctls))
		return -1;
	snprintf(ctls, sizeof(ctls), "%.*s", (int)(c2 - c1 - 1), c1 + 1);
	if (!ctls[0]) /* the v2 hierarchy */
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", hybrid ? "/unified" : "");
	else
		snprintf(dir, sizeof(dir), "/sys/fs/cgroup/%s",
			 strncmp(ctls, "name=", 5) ? ctls : ctls + 5);
	snprintf(own, sizeof(own), "%s%s", dir, c2 + 1);
	if (!is_fs(dir, ctls[0] ? CGROUP_SUPER_MAGIC : CGROUP2_SUPER_MAGIC) || stat(own, &st) < 0)
		return -1;
	snprintf(out, size, "0 0 0:0 / %s rw - %s %s rw%s%s\n", dir, ctls[0] ? "cgroup" : "cgroup2",
		 ctls[0] ? "cgroup" : "cgroup2", ctls[0] ? "," : "", ctls);
	return 0;
}

/* The cgroup mounts without reading /proc/self/mountinfo, which takes the
 * mount namespace's lock and costs more than the rest of the probe: where
 * every hierarchy is mounted where systemd puts it (checked by statfs and
 * by finding the caller's own cgroup there), mountinfo lines are made up
 * for them; anything else (a container's view, a mount elsewhere) reads
 * the real mountinfo. */
static int standard_mounts(const char *self, char *out, size_t size)
{
	int hybrid = !is_fs("/sys/fs/cgroup", CGROUP2_SUPER_MAGIC);
	size_t n = 0;
	char line[4096];

	if (hybrid && !is_fs("/sys/fs/cgroup", TMPFS_MAGIC))
		return -1;
	out[0] = '\0';
	for (const char *p = self; *p;) {
		size_t len = strcspn(p, "\n");
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		p += len + (p[len] == '\n');
		if (!line[0])
			continue;
		if (standard_mount(line, hybrid, out + n, size - n) < 0)
			return -1;
		n += strlen(out + n);
		if (n + 1 >= size)
			return -1;
	}
	return n ? 0 : -1;
}

int cgroup_snapshot(struct sbx_cg_snapshot *snap)
{
	snap->mountinfo = xmalloc(65536);
	snap->self = xmalloc(8192);
	if (cgroup_read_path("/proc/self/cgroup", snap->self, 8192) < 0 ||
	    (standard_mounts(snap->self, snap->mountinfo, 65536) < 0 &&
	     cgroup_read_path("/proc/self/mountinfo", snap->mountinfo, 65536) < 0)) {
		cgroup_snapshot_free(snap);
		return -1;
	}
	return 0;
}

void cgroup_snapshot_free(struct sbx_cg_snapshot *snap)
{
	free(snap->mountinfo);
	free(snap->self);
	snap->mountinfo = snap->self = NULL;
}

int cgroup_self_dir(const char *ctl, char *out, size_t size)
{
	struct sbx_cg_snapshot snap;

	if (cgroup_snapshot(&snap) < 0)
		return -1;
	int r = cgroup_self_dir_in(&snap, ctl, out, size);
	cgroup_snapshot_free(&snap);
	return r;
}

int cgroup_self_dir_in(const struct sbx_cg_snapshot *snap, const char *ctl, char *out, size_t size)
{
	char mnt[PATH_MAX], root[PATH_MAX], path[PATH_MAX];

	if (cgroup_parse_mountinfo(snap->mountinfo, ctl, mnt, root, sizeof(mnt)) < 0 ||
	    cgroup_parse_self(snap->self, ctl, path, sizeof(path)) < 0)
		return -1;
	/* A mount of a sub-tree (a container's view) shows paths below its root. */
	const char *rel = path;
	size_t rl = strlen(root);
	if (strcmp(root, "/") != 0 && strncmp(path, root, rl) == 0 && (path[rl] == '/' || !path[rl]))
		rel = path + rl;
	snprintf(out, size, "%s%s", mnt, strcmp(rel, "/") ? rel : "");
	return 0;
}

static int usable_parent(enum sbx_cg_version v, const char *dir, const char *const *wanted)
{
	char file[PATH_MAX + 32], buf[512];

	if (access(dir, W_OK) < 0)
		return 0;
	if (v == SBX_CG_V1)
		return 1;
	snprintf(file, sizeof(file), "%s/cgroup.subtree_control", dir);
	if (cgroup_read_path(file, buf, sizeof(buf)) < 0)
		return 0;
	for (; *wanted; wanted++)
		if (cgroup_list_has(buf, *wanted))
			return 1;
	return 0;
}

int cgroup_find_parent(enum sbx_cg_version v, const char *ctl, const char *const *wanted,
		       char *out, size_t size)
{
	struct sbx_cg_snapshot snap;

	if (cgroup_snapshot(&snap) < 0)
		return -1;
	int r = cgroup_find_parent_in(&snap, v, ctl, wanted, out, size);
	cgroup_snapshot_free(&snap);
	return r;
}

int cgroup_find_parent_in(const struct sbx_cg_snapshot *snap, enum sbx_cg_version v, const char *ctl,
			  const char *const *wanted, char *out, size_t size)
{
	char dir[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX];

	if (cgroup_parse_mountinfo(snap->mountinfo, v == SBX_CG_V2 ? NULL : ctl, mnt, root, sizeof(mnt)) < 0 ||
	    cgroup_self_dir_in(snap, v == SBX_CG_V2 ? NULL : ctl, dir, sizeof(dir)) < 0)
		return -1;
	for (;;) {
		if (usable_parent(v, dir, wanted)) {
			snprintf(out, size, "%s", dir);
			return 0;
		}
		char *slash = strrchr(dir, '/');
		if (!strcmp(dir, mnt) || !slash || slash - dir < (ptrdiff_t)strlen(mnt))
			return -1;
		*slash = '\0';
	}
}

/* A cgroup of an sbxrun that was killed (kill -9 leaves no time to clean
 * up) is removed by the next one: empty ones only, whose process is gone. */
static void sweep_stale(const char *parent)
{
	DIR *d = opendir(parent);
	struct dirent *e;
	int pid;
	unsigned n;
	char end;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "sbxrun-%d-%u%c", &pid, &n, &end) != 2 || pid <= 0)
			continue;
		if (kill(pid, 0) < 0 && errno == ESRCH) {
			char *p = xasprintf("%s/%s", parent, e->d_name);
			rmdir(p);
			free(p);
		}
	}
	closedir(d);
}

int cgroup_create(enum sbx_cg_version v, const char *parent, struct sbx_cgroup *cg,
		  struct sbx_err *err)
{
	static unsigned seq;

	sweep_stale(parent);
	char *path = xasprintf("%s/sbxrun-%d-%u", parent, (int)getpid(), seq++);

	if (!path) /* never (xasprintf aborts), but the sanitizer build cannot know */
		return err_set(err, ENOMEM, "create a cgroup");
	if (mkdir(path, 0755) < 0) {
		err_sys(err, "create cgroup '%s'", path);
		free(path);
		return -1;
	}
	/* not O_PATH: clone3's CLONE_INTO_CGROUP takes this fd (v2) */
	cg->fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (cg->fd < 0) {
		err_sys(err, "open cgroup '%s'", path);
		rmdir(path);
		free(path);
		return -1;
	}
	cg->version = v;
	cg->path = path;
	return 0;
}

int cgroup_write(const struct sbx_cgroup *cg, const char *file, const char *value,
		 struct sbx_err *err)
{
	return write_at(cg->fd, cg->path, file, value, err);
}

int cgroup_read(const struct sbx_cgroup *cg, const char *file, char *buf, size_t size)
{
	return read_at(cg->fd, file, buf, size);
}

int cgroup_attach(const struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err)
{
	char num[32];

	snprintf(num, sizeof(num), "%d", (int)pid);
	return cgroup_write(cg, "cgroup.procs", num, err);
}

/* v1 has no cgroup.kill: signal what cgroup.procs lists until it is empty. */
static int kill_listed(const struct sbx_cgroup *cg)
{
	char buf[16384];
	int n = 0;

	if (cgroup_read(cg, "cgroup.procs", buf, sizeof(buf)) < 0)
		return 0;
	for (char *p = buf, *end; *p; p = end) {
		long pid = strtol(p, &end, 10);
		if (end == p)
			break;
		if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
			n++;
	}
	return n;
}

void cgroup_destroy(struct sbx_cgroup *cg)
{
	struct sbx_err err;
	struct timespec ms10 = { 0, 10 * 1000 * 1000 };

	if (!cg->path)
		return;
	if (cg->version == SBX_CG_V2)
		cgroup_write(cg, "cgroup.kill", "1", &err);
	/* Killed tasks leave the cgroup only once reaped: retry for up to 3 s. */
	for (int i = 0; i < 300; i++) {
		kill_listed(cg);
		if (rmdir(cg->path) == 0 || errno == ENOENT)
			break;
		if (errno != EBUSY)
			break;
		nanosleep(&ms10, NULL);
	}
	if (cg->fd >= 0)
		close(cg->fd);
	free(cg->path);
	cg->path = NULL;
	cg->fd = -1;
}
