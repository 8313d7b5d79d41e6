/* userns.c - uid/gid maps and the identity inside the sandbox. */
#define _GNU_SOURCE
#include "sandbox/userns.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "base/util.h"

static int write_proc(pid_t pid, const char *file, const char *text, struct sbx_err *err)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "write '%s'", path);
	return 0;
}

int userns_write_maps(pid_t pid, uid_t in_uid, uid_t host_uid, gid_t in_gid, gid_t host_gid,
		      struct sbx_err *err)
{
	char map[64];

	if (write_proc(pid, "setgroups", "deny", err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)in_uid, (unsigned)host_uid);
	if (write_proc(pid, "uid_map", map, err) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)in_gid, (unsigned)host_gid);
	return write_proc(pid, "gid_map", map, err);
}

static const char *const ucount_names[SBX_UCOUNTS] = {
	"max_inotify_instances", "max_inotify_watches", "max_fanotify_groups", "max_fanotify_marks",
};

const char *userns_ucount_name(int i)
{
	return i >= 0 && i < SBX_UCOUNTS ? ucount_names[i] : "?";
}

static long read_ucount(int dir, const char *name)
{
	char buf[32], *end;
	_cleanup_close_ int fd = -1;
	ssize_t n;

	if ((fd = openat(dir, name, O_RDONLY | O_CLOEXEC)) < 0 || (n = read(fd, buf, sizeof(buf) - 1)) <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	long v = strtol(buf, &end, 10);
	return errno || end == buf || (*end && *end != '\n') || v < 0 ? -1 : v;
}

void userns_ucounts_plan(struct sbx_ucounts *u)
{
	_cleanup_close_ int dir = open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC);

	for (int i = 0; i < SBX_UCOUNTS; i++) {
		u->host[i] = dir >= 0 ? read_ucount(dir, ucount_names[i]) : -1;
		u->max[i] = u->host[i] >= 0 ? u->host[i] / 2 : -1;
		snprintf(u->text[i], sizeof(u->text[i]), "%ld\n", u->max[i]);
	}
}

/* Runs first in the forked child, where each first touch of a page (the
 * stack printf needs, its code) is a page fault: 20-30 us in a VM
 * (bench/README.md). So the text is the host's, and one lookup of the
 * directory serves the four files. */
int userns_ucounts_apply(const struct sbx_ucounts *u, struct sbx_err *err)
{
	_cleanup_close_ int dir = -1;

	for (int i = 0; i < SBX_UCOUNTS; i++) {
		if (u->max[i] < 0)
			continue;
		/* /proc/sys/user shows the opener's user namespace: ours */
		if (dir < 0 && (dir = open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
			return err_sys(err, "open '/proc/sys/user' in the sandbox's user namespace");
		_cleanup_close_ int fd = openat(dir, ucount_names[i], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write_all(fd, u->text[i], strlen(u->text[i])) < 0)
			return err_sys(err, "set '/proc/sys/user/%s' in the sandbox's user namespace",
				       ucount_names[i]);
	}
	return 0;
}

int userns_become(uid_t uid, gid_t gid, struct sbx_err *err)
{
	/* Keep capabilities across the uid change: the setup that follows
	 * (mounts) needs them; the command child drops them all later. */
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
		return err_sys(err, "prctl(PR_SET_KEEPCAPS)");
	if (setresgid(gid, gid, gid) < 0)
		return err_sys(err, "setresgid(%u)", (unsigned)gid);
	if (setresuid(uid, uid, uid) < 0)
		return err_sys(err, "setresuid(%u)", (unsigned)uid);
	return 0;
}

/* One passwd line: name:x:uid:gid:gecos:home:shell */
static int match_line(char *line, const char *user, uid_t *uid, gid_t *gid, char **home)
{
	char *f[7];
	int n = 0;

	for (char *p = line; n < 7; n++) {
		f[n] = p;
		p = strchr(p, ':');
		if (!p) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	if (n < 7)
		return 0;
	char *end;
	unsigned long u = strtoul(f[2], &end, 10), g;
	if (*end || !f[2][0])
		return 0;
	g = strtoul(f[3], &end, 10);
	if (*end || !f[3][0])
		return 0;
	if (strcmp(f[0], user) != 0 && !(strspn(user, "0123456789") == strlen(user) &&
					 strtoul(user, NULL, 10) == u))
		return 0;
	*uid = (uid_t)u;
	*gid = (gid_t)g;
	if (home)
		*home = xstrdup(f[5][0] == '/' ? f[5] : "/");
	return 1;
}

int userns_lookup(int rootfs_fd, const char *user, uid_t *uid, gid_t *gid, char **home,
		  struct sbx_err *err)
{
	_cleanup_free_ char *buf = NULL;
	struct sbx_err rerr;
	int numeric = strspn(user, "0123456789") == strlen(user);

	if (read_file_beneath(rootfs_fd, "etc/passwd", 1 << 20, &buf, NULL, &rerr) == 0) {
		for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
			if (match_line(l, user, uid, gid, home))
				return 0;
	}
	if (!numeric)
		return err_set(err, 0, "user '%s' is not in the image's /etc/passwd", user);
	*uid = (uid_t)strtoul(user, NULL, 10);
	*gid = (gid_t)*uid;
	if (home)
		*home = xstrdup("/");
	return 0;
}
