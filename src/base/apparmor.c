/* apparmor.c - why a user namespace cannot be set up under Ubuntu's AppArmor
 * restriction (kernel.apparmor_restrict_unprivileged_userns = 1: a program
 * no profile names gets one that denies the capabilities uid_map and the
 * first mount need), and the fix that fits how this sbxrun was installed:
 * the package's profile loaded, or a profile naming this binary's path. The
 * facts are read beneath a root directory so that a test can lay out a
 * machine that restricts on one that has no such setting. */
#define _GNU_SOURCE
#include "base/apparmor.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

#define SYSCTL "proc/sys/kernel/apparmor_restrict_unprivileged_userns"
#define PROFILES "etc/apparmor.d"
#define SYSCTL_FIX "or, for the whole machine, sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"

long aa_restrict_value(int rootfd)
{
	_cleanup_free_ char *text = NULL;
	struct sbx_err ignore = { 0 };

	if (read_file_beneath(rootfd, SYSCTL, 64, &text, NULL, &ignore) < 0 || !text[0])
		return -1;
	return strtol(text, NULL, 10);
}

/* The path the first "profile NAME PATH" line of a profile file attaches to,
 * or NULL. */
static char *profile_path(int dirfd, const char *file)
{
	_cleanup_free_ char *text = NULL;
	struct sbx_err ignore = { 0 };
	char name[128], path[1024];

	if (read_file_beneath(dirfd, file, 1 << 16, &text, NULL, &ignore) < 0)
		return NULL;
	for (char *save = NULL, *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save))
		if (sscanf(l, " profile %127s %1023s", name, path) == 2 && path[0] == '/')
			return xstrdup(path);
	return NULL;
}

/* The sbxrun profiles in etc/apparmor.d: *file the one naming exe, else the
 * first; *path what it names. 0 when there is none. */
static int find_profile(int rootfd, const char *exe, char **file, char **path)
{
	_cleanup_close_ int dirfd = openat(rootfd, PROFILES, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dirfd < 0 ? NULL : fdopendir(dup(dirfd));
	int found = 0;

	*file = *path = NULL;
	for (struct dirent *e; d && found < 2 && (e = readdir(d));) {
		if (!str_has_prefix(e->d_name, "sbxrun"))
			continue;
		char *p = profile_path(dirfd, e->d_name);
		if (!p)
			continue;
		if (!found || !strcmp(p, exe)) {
			free(*file);
			free(*path);
			*file = xasprintf("/" PROFILES "/%s", e->d_name);
			*path = p;
			found = !strcmp(p, exe) ? 2 : 1;
		} else {
			free(p);
		}
	}
	if (d)
		closedir(d);
	return found;
}

int aa_userns_hint(int rootfd, const char *exe, const char *label, char *out, size_t size)
{
	_cleanup_free_ char *file = NULL, *path = NULL;

	out[0] = '\0';
	if (aa_restrict_value(rootfd) <= 0)
		return 0;
	if (label && label[0] && strcmp(label, "unconfined") != 0) {
		snprintf(out, size, "AppArmor restricts user namespaces here, and sbxrun runs under "
			 "the profile '%s': it needs 'userns,' (contrib/apparmor-sbxrun); %s", label,
			 SYSCTL_FIX);
		return 1;
	}
	int found = find_profile(rootfd, exe, &file, &path);
	if (found == 2)
		snprintf(out, size, "AppArmor restricts user namespaces here and sbxrun's profile "
			 "is not loaded: as root, apparmor_parser -r %s; %s", file, SYSCTL_FIX);
	else if (found == 1)
		snprintf(out, size, "AppArmor restricts user namespaces here and %s is not at the "
			 "path the profile %s names (%s): run that one, or as root add a profile with "
			 "the lines 'abi <abi/4.0>,' and 'profile sbxrun-local %s flags=(unconfined) "
			 "{ userns, }' and load it with apparmor_parser -r; %s", exe, file, path, exe,
			 SYSCTL_FIX);
	else
		snprintf(out, size, "AppArmor restricts user namespaces here and no profile names "
			 "%s: as root add one with the lines 'abi <abi/4.0>,' and 'profile sbxrun %s "
			 "flags=(unconfined) { userns, }' (contrib/apparmor-sbxrun) and load it with "
			 "apparmor_parser -r; %s", exe, exe, SYSCTL_FIX);
	return 1;
}

/* This process's AppArmor label ("unconfined", or "NAME (MODE)"), "" if none. */
static void own_label(char *out, size_t size)
{
	static const char *const files[] = { "/proc/self/attr/apparmor/current",
					     "/proc/self/attr/current" };
	out[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(files) && !out[0]; i++) {
		_cleanup_close_ int fd = open(files[i], O_RDONLY | O_CLOEXEC);
		ssize_t n = fd < 0 ? -1 : read(fd, out, size - 1);
		out[n > 0 ? n : 0] = '\0';
		out[strcspn(out, "\n")] = '\0';
	}
}

int aa_userns_hint_self(char *out, size_t size)
{
	char exe[1024], label[256];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);

	out[0] = '\0';
	if (n <= 0 || rootfd < 0)
		return 0;
	exe[n] = '\0';
	own_label(label, sizeof(label));
	return aa_userns_hint(rootfd, exe, label, out, size);
}
