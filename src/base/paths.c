/* paths.c - locating the store, the state directory and stock files. */
#define _GNU_SOURCE
#include "base/paths.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/stat.h>
#include <unistd.h>

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
		return err_set(err, EPERM, "'%s' is not a directory owned by uid %u", path,
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

int paths_state_dir(char **out, struct sbx_err *err)
{
	const char *base = xdg("XDG_RUNTIME_DIR");
	char *p = base ? xasprintf("%s/sbxrun", base) : xasprintf("/tmp/sbxrun-%u", (unsigned)geteuid());
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

unsigned paths_sandbox_host_uid(void)
{
	return geteuid() == 0 ? SBX_ROOT_HOST_UID : (unsigned)geteuid();
}

void paths_as_sandbox_owner(int enter)
{
	if (geteuid() != 0)
		return;
	unsigned id = enter ? SBX_ROOT_HOST_UID : 0;
	setfsgid(id);
	setfsuid(id);
}
