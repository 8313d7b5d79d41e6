/* paths.c - locating the store, the state directory and stock files. */
#define _GNU_SOURCE
#include "base/paths.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/lockwait.h"
#include "base/log.h"
#include "base/util.h"

#ifndef SBX_DATADIR
#define SBX_DATADIR "/usr/local/share/sbxrun"
#endif

static const char *home_dir(void)
{
	const char *h = getenv("HOME");
	if (h && h[0] == '/')
		return h;
	struct passwd *pw = getpwuid(getuid());
	return pw && pw->pw_dir ? pw->pw_dir : "/";
}

/* An XDG base directory from the environment, if absolute (the spec says
 * relative values are to be ignored). */
static const char *xdg(const char *var)
{
	const char *v = getenv(var);
	return v && v[0] == '/' ? v : NULL;
}

static int ensure_private_dir(const char *path, struct sbx_err *err)
{
	struct stat st;

	if (mkdir_p(path, 0700, err) < 0)
		return -1;
	if (lstat(path, &st) < 0)
		return err_sys(err, "stat '%s'", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return err_plain(err, EPERM, "'%s' is not a directory owned by uid %u", path,
			       (unsigned)geteuid());
	if ((st.st_mode & 0077) && chmod(path, 0700) < 0)
		return err_sys(err, "chmod '%s'", path);
	return 0;
}

int paths_data_dir(char **out, struct sbx_err *err)
{
	const char *base = xdg("XDG_DATA_HOME");
	char *p = base ? xasprintf("%s/sbxrun", base)
		       : xasprintf("%s/.local/share/sbxrun", home_dir());
	if (ensure_private_dir(p, err) < 0) {
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* A directory of ours that no one else can have touched: mode 0700. */
static int is_private_dir(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
	       (st.st_mode & 07777) == 0700;
}

/* The private runtime directory recorded by an earlier command, if it is
 * still there (a reboot empties /tmp). */
static char *recorded_rundir(const char *link)
{
	char target[PATH_MAX];
	ssize_t n = readlink(link, target, sizeof(target) - 1);

	if (n <= 0)
		return NULL;
	target[n] = '\0';
	return is_private_dir(target) ? xstrdup(target) : NULL;
}

/* A fresh private directory, recorded (a symlink in the data directory,
 * which is the user's own) under a lock, so that concurrent commands agree
 * on one. */
static int new_rundir(const char *data, const char *link, char **out, struct sbx_err *err)
{
	_cleanup_free_ char *lockpath = xasprintf("%s/rundir.lock", data);
	_cleanup_free_ char *tmplink = xasprintf("%s/rundir.%d", data, (int)getpid());
	_cleanup_close_ int lock = open(lockpath, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);

	if (lock < 0)
		return err_sys(err, "open '%s'", lockpath);
	if (lock_wait(lock, LOCK_EX, lockpath, LOCK_DEADLINE_S, err) < 0)
		return -1;
	if ((*out = recorded_rundir(link)))
		return 0; /* another command made one meanwhile */
	char *dir = xasprintf("/tmp/sbxrun-%u.XXXXXX", (unsigned)geteuid());
	if (!mkdtemp(dir) || chmod(dir, 0700) < 0) {
		err_sys(err, "create a private runtime directory '%s'", dir);
		free(dir);
		return -1;
	}
	unlink(tmplink);
	if (symlink(dir, tmplink) < 0 || rename(tmplink, link) < 0) {
		err_sys(err, "record the runtime directory in '%s'", link);
		unlink(tmplink);
		rmdir(dir);
		free(dir);
		return -1;
	}
	log_verbose("runtime directory: /tmp/sbxrun-%u is not a private directory of ours; using %s",
		    (unsigned)geteuid(), dir);
	*out = dir;
	return 0;
}

/* Without XDG_RUNTIME_DIR: /tmp/sbxrun-UID, where anyone may create that
 * name first. When it is not a directory of ours with mode 0700 (another
 * user's, a symlink, once open to others), a private one made by mkdtemp
 * takes its place, never one another user owns; a recorded one wins while
 * it exists, so that all of the user's commands keep finding the same. */
static int tmp_state_dir(char **out, struct sbx_err *err)
{
	_cleanup_free_ char *data_path = xdg("XDG_DATA_HOME") ? xasprintf("%s/sbxrun", xdg("XDG_DATA_HOME"))
							    : xasprintf("%s/.local/share/sbxrun", home_dir());
	_cleanup_free_ char *link = xasprintf("%s/rundir", data_path);
	char *p;

	if ((*out = recorded_rundir(link)))
		return 0;
	p = xasprintf("/tmp/sbxrun-%u", (unsigned)geteuid());
	if (mkdir(p, 0700) == 0)
		chmod(p, 0700); /* whatever the umask */
	if (is_private_dir(p)) {
		*out = p;
		return 0;
	}
	free(p);
	_cleanup_free_ char *data = NULL;
	if (paths_data_dir(&data, err) < 0)
		return -1;
	return new_rundir(data, link, out, err);
}

int paths_state_dir(char **out, struct sbx_err *err)
{
	const char *base = xdg("XDG_RUNTIME_DIR");
	if (!base)
		return tmp_state_dir(out, err);
	char *p = xasprintf("%s/sbxrun", base);
	if (ensure_private_dir(p, err) < 0) {
		free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int paths_staging_dir(char **out, struct sbx_err *err)
{
	const char *base = xdg("XDG_CACHE_HOME");
	char *p = base ? xasprintf("%s/sbxrun", base) : xasprintf("%s/.cache/sbxrun", home_dir());
	struct sbx_err ignored;

	if (ensure_private_dir(p, &ignored) == 0) {
		*out = p;
		return 0;
	}
	free(p);
	return paths_state_dir(out, err);
}

char *paths_user_profiles(void)
{
	const char *base = xdg("XDG_CONFIG_HOME");
	return base ? xasprintf("%s/sbxrun/profiles", base)
		    : xasprintf("%s/.config/sbxrun/profiles", home_dir());
}

const char *paths_stock_dir(void)
{
	static char dir[PATH_MAX];
	char exe[PATH_MAX], probe[PATH_MAX + 32];
	ssize_t n;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		char *d = dirname(exe);
		snprintf(probe, sizeof(probe), "%s/profiles/default.ini", d);
		if (access(probe, R_OK) == 0) {
			snprintf(dir, sizeof(dir), "%s", d);
			return dir;
		}
	}
	snprintf(dir, sizeof(dir), "%s", SBX_DATADIR);
	return dir;
}

/* Of a map's lines "INSIDE OUTSIDE COUNT": 1 when id is inside one,
 * and in *top the highest inside id. */
static int map_holds(const char *map, unsigned id, unsigned long long *top)
{
	unsigned long long in, out, n;
	int holds = 0, used;

	*top = 0;
	while (map && sscanf(map, " %llu %llu %llu%n", &in, &out, &n, &used) == 3 && n > 0) {
		holds |= id >= in && id - in < n;
		if (in + n - 1 > *top)
			*top = in + n - 1;
		map += used;
	}
	return holds;
}

unsigned paths_root_host_id_of(const char *uid_map, const char *gid_map)
{
	unsigned long long ut, gt;
	int u = map_holds(uid_map, SBX_ROOT_HOST_UID, &ut), g = map_holds(gid_map, SBX_ROOT_HOST_UID, &gt);

	if (u && g)
		return SBX_ROOT_HOST_UID;
	unsigned long long top = ut < gt ? ut : gt;
	return top > 0 && top < SBX_ROOT_HOST_UID ? (unsigned)top : SBX_ROOT_HOST_UID;
}

static void read_map(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, size - 1);

	if (fd >= 0)
		close(fd);
	buf[n > 0 ? n : 0] = '\0';
}

unsigned paths_root_host_id(void)
{
	static unsigned id;
	char u[1024], g[1024];

	if (!id) {
		read_map("/proc/self/uid_map", u, sizeof(u));
		read_map("/proc/self/gid_map", g, sizeof(g));
		id = paths_root_host_id_of(u, g);
	}
	return id;
}

unsigned paths_sandbox_host_uid(void)
{
	return geteuid() == 0 ? paths_root_host_id() : (unsigned)geteuid();
}

void paths_as_sandbox_owner(int enter)
{
	if (geteuid() != 0)
		return;
	unsigned id = enter ? paths_root_host_id() : 0;
	setfsgid(id);
	setfsuid(id);
}
