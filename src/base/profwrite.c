/* profwrite.c - a host appended to the user's own profile (profwrite.h). */
#define _GNU_SOURCE
#include "base/profwrite.h"

#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/paths.h"
#include "base/profile.h"
#include "base/util.h"

int profwrite_own(const char *name, char **path, struct sbx_err *err)
{
	_cleanup_free_ char *user = paths_user_profiles();
	struct stat st;

	if (profile_find(name, path, err) < 0)
		return -1;
	size_t n = strlen(user);
	bool mine = strncmp(*path, user, n) == 0 && (*path)[n] == '/';
	if (!mine && strchr(name, '/') && lstat(*path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid())
		mine = true;
	if (!mine) {
		err_set(err, 0, "profile '%s' (%s) is not one of yours; copy it into %s first", name, *path, user);
		free(steal_ptr(*path));
		return -1;
	}
	return 0;
}

int profwrite_allow(const char *path, const char *by, const char *host, struct sbx_err *err)
{
	char when[64];
	time_t now = time(NULL);
	struct tm tm;

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime_r(&now, &tm));
	_cleanup_free_ char *text = xasprintf("\n# %s: allowed by %s\n[network]\nallow = %s\n", when, by, host);
	_cleanup_close_ int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return err_sys(err, "%s", path);
	if (write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "%s", path);
	return 0;
}
