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
#include <sys/auxv.h>
#include <sys/prctl.h>
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

/* How to get the package's profile for exe: from a source tree, make
 * install-apparmor writes it for the installed path and loads it. */
#define PROFILE_FIX(exe) "as root install contrib/apparmor-sbxrun with its path set to %s " \
	"(in the source tree: make install-apparmor PREFIX=...) and load it with apparmor_parser -r"

int aa_userns_hint(int rootfd, const char *exe, const char *label, char *out, size_t size)
{
	_cleanup_free_ char *file = NULL, *path = NULL;
	char name[256];

	out[0] = '\0';
	if (aa_restrict_value(rootfd) <= 0)
		return 0;
	aa_label_name(label ? label : "", name, sizeof(name));
	if (name[0] && strcmp(name, "unconfined") != 0) {
		if (strstr(name, "//&" AA_CHILD) || !strcmp(name, AA_CHILD))
			snprintf(out, size, "AppArmor restricts user namespaces here, and sbxrun runs under "
				 "'%s': it was started by sbxrun or by a sandbox's command, and what sbxrun "
				 "starts may not make user namespaces; run it from outside", name);
		else if (!strcmp(name, AA_ENTRY) || !strcmp(name, AA_USERNS))
			snprintf(out, size, "AppArmor restricts user namespaces here, and sbxrun runs under "
				 "'%s', whose loaded profile does not let it make one (an older "
				 "/etc/apparmor.d/sbxrun?): as root, apparmor_parser -r /etc/apparmor.d/sbxrun; %s",
				 name, SYSCTL_FIX);
		else
			snprintf(out, size, "AppArmor restricts user namespaces here, and sbxrun runs under "
				 "the profile '%s', which does not grant 'userns,'; run it under sbxrun's own "
				 "profile (contrib/apparmor-sbxrun); %s", name, SYSCTL_FIX);
		return 1;
	}
	int found = find_profile(rootfd, exe, &file, &path);
	if (found == 2)
		snprintf(out, size, "AppArmor restricts user namespaces here and sbxrun's profile "
			 "is not loaded: as root, apparmor_parser -r %s; %s", file, SYSCTL_FIX);
	else if (found == 1)
		snprintf(out, size, "AppArmor restricts user namespaces here and %s is not at the "
			 "path the profile %s names (%s): run that one, or " PROFILE_FIX("%s") "; %s",
			 exe, file, path, exe, SYSCTL_FIX);
	else
		snprintf(out, size, "AppArmor restricts user namespaces here and no profile names "
			 "%s: " PROFILE_FIX("%s") "; %s", exe, exe, SYSCTL_FIX);
	return 1;
}

void aa_label_name(const char *label, char *out, size_t size)
{
	size_t n = strlen(label);

	/* "NAME (enforce)", "NAME (complain)"...; "unconfined" has no mode */
	if (n > 3 && label[n - 1] == ')') {
		const char *open = strrchr(label, '(');
		if (open && open > label && open[-1] == ' ')
			n = (size_t)(open - 1 - label);
	}
	snprintf(out, size, "%.*s", (int)n, label);
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

/* Set across the exec from AA_ENTRY to AA_USERNS: a second start under
 * AA_ENTRY with it set means the loaded profile has no such transition (no
 * loop). TMPDIR rides along in the other: glibc drops it from a secure
 * exec's environment, and the programs sbxrun starts should see the
 * caller's. Neither is code: the variables glibc drops because they load
 * code (LD_PRELOAD, LD_AUDIT, LD_LIBRARY_PATH, GCONV_PATH...) stay dropped. */
#define HOP_ENV "SBX_APPARMOR_HOP"
#define TMPDIR_ENV "SBX_APPARMOR_TMPDIR"

int aa_enter(char **argv, struct sbx_err *err)
{
	char label[256], name[256];

	own_label(label, sizeof(label));
	aa_label_name(label, name, sizeof(name));
	if (!strcmp(name, AA_ENTRY)) {
		if (getenv(HOP_ENV))
			return err_set(err, 0, "AppArmor: sbxrun still runs under the profile '" AA_ENTRY
				       "' after exec'ing itself: the loaded profile has no way into '"
				       AA_USERNS "' (an older /etc/apparmor.d/sbxrun?); as root: "
				       "apparmor_parser -r /etc/apparmor.d/sbxrun");
		const char *tmpdir = getenv("TMPDIR");
		if ((tmpdir && setenv(TMPDIR_ENV, tmpdir, 1) < 0) || setenv(HOP_ENV, "1", 1) < 0)
			return err_sys(err, "AppArmor: setenv");
		execv("/proc/self/exe", argv);
		int e = errno;
		if (e == EPERM && prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
			return err_set(err, 0, "AppArmor: no_new_privs is set, under which AppArmor refuses "
				       "sbxrun the move from its profile '" AA_ENTRY "' to '" AA_USERNS "' "
				       "(the one that may make user namespaces): start sbxrun without "
				       "no_new_privs (systemd's NoNewPrivileges=, docker's no-new-privileges)");
		errno = e;
		return err_sys(err, "AppArmor: exec /proc/self/exe (from the profile '" AA_ENTRY
			       "' into '" AA_USERNS "')");
	}
	if (!strcmp(name, AA_USERNS)) {
		if (!getauxval(AT_SECURE))
			return err_set(err, 0, "AppArmor: sbxrun runs under the profile '" AA_USERNS
				       "' without a secure exec (aa-exec?): that profile is entered "
				       "only by sbxrun's own exec of itself; run sbxrun as it is");
		const char *tmpdir = getenv(TMPDIR_ENV);
		if (tmpdir && tmpdir[0] && setenv("TMPDIR", tmpdir, 1) < 0)
			return err_sys(err, "AppArmor: setenv");
	}
	unsetenv(HOP_ENV);
	unsetenv(TMPDIR_ENV);
	return 0;
}
