/* test_apparmor.c - the fix named when AppArmor restricts user namespaces
 * (issue 35), on a machine laid out in a temporary directory: this Debian
 * kernel has no kernel.apparmor_restrict_unprivileged_userns, so the sysctl
 * and /etc/apparmor.d are files beneath a root that stands for "/". What
 * this cannot show: that uid_map or the first mount really fails with EPERM
 * under the restriction and that the named fix makes it work (Ubuntu 24.04
 * does: the profile's 'userns,'); nor the label a loaded profile gives (the
 * test passes it). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/apparmor.h"
#include "base/util.h"
#include "unit.h"

static void put(const char *root, const char *rel, const char *text)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	FILE *f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fputs(text, f);
	fclose(f);
}

static const char profile[] =
	"# sbxrun's profile\nabi <abi/4.0>,\ninclude <tunables/global>\n\n"
	"profile sbxrun /usr/bin/sbxrun flags=(attach_disconnected,mediate_deleted) {\n  deny userns,\n"
	"  /usr/bin/sbxrun Px -> sbxrun_userns,\n  include if exists <local/sbxrun>\n}\n"
	"profile sbxrun_userns flags=(attach_disconnected,mediate_deleted) {\n  userns,\n}\n";

#define SYSCTL_LAST "or, for the whole machine, sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"

static void ends_with_sysctl(const char *hint)
{
	size_t n = strlen(hint), m = strlen(SYSCTL_LAST);
	CHECK(n > m && strcmp(hint + n - m, SYSCTL_LAST) == 0);
}

int main(void)
{
	char root[] = "/tmp/sbxrun-aa-XXXXXX", hint[512], dir[600];

	if (!mkdtemp(root))
		return 2;
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	/* no such setting (this kernel): no hint */
	CHECK(aa_restrict_value(fd) == -1);
	CHECK(aa_userns_hint(fd, "/usr/bin/sbxrun", "unconfined", hint, sizeof(hint)) == 0);
	CHECK_STR(hint, "");
	snprintf(dir, sizeof(dir), "mkdir -p %s/proc/sys/kernel %s/etc/apparmor.d", root, root);
	CHECK(system(dir) == 0);
	put(root, "proc/sys/kernel/apparmor_restrict_unprivileged_userns", "0\n");
	CHECK(aa_restrict_value(fd) == 0);
	CHECK(aa_userns_hint(fd, "/usr/bin/sbxrun", "unconfined", hint, sizeof(hint)) == 0);

	/* restricted, no profile at all */
	put(root, "proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1\n");
	CHECK(aa_restrict_value(fd) == 1);
	CHECK(aa_userns_hint(fd, "/opt/x/sbxrun", "unconfined", hint, sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "no profile names /opt/x/sbxrun");
	CHECK_CONTAINS(hint, "install contrib/apparmor-sbxrun with its path set to /opt/x/sbxrun");
	CHECK(!strstr(hint, "flags=(unconfined)"));
	ends_with_sysctl(hint);

	/* the package's profile, this binary at its path, not loaded */
	put(root, "etc/apparmor.d/sbxrun", profile);
	put(root, "etc/apparmor.d/usr.bin.other", "profile other /usr/bin/other { }\n");
	CHECK(aa_userns_hint(fd, "/usr/bin/sbxrun", "unconfined", hint, sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "sbxrun's profile is not loaded: as root, apparmor_parser -r "
		       "/etc/apparmor.d/sbxrun;");
	ends_with_sysctl(hint);

	/* a copy elsewhere: the path the profile names and two lines for this one */
	CHECK(aa_userns_hint(fd, "/home/u/.local/bin/sbxrun", "unconfined", hint, sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "/home/u/.local/bin/sbxrun is not at the path the profile "
		       "/etc/apparmor.d/sbxrun names (/usr/bin/sbxrun)");
	CHECK_CONTAINS(hint, "run that one, or as root install contrib/apparmor-sbxrun with its path "
		       "set to /home/u/.local/bin/sbxrun");
	ends_with_sysctl(hint);

	/* a second profile naming this copy: that one is the one to load */
	put(root, "etc/apparmor.d/sbxrun-local",
	    "abi <abi/4.0>,\nprofile sbxrun-local /home/u/.local/bin/sbxrun flags=(unconfined) { userns, }\n");
	CHECK(aa_userns_hint(fd, "/home/u/.local/bin/sbxrun", "unconfined", hint, sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "apparmor_parser -r /etc/apparmor.d/sbxrun-local;");

	/* confined by some profile that lacks userns */
	CHECK(aa_userns_hint(fd, "/usr/bin/sbxrun", "other (enforce)", hint, sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "runs under the profile 'other', which does not grant 'userns,'");
	ends_with_sysctl(hint);
	/* the package's own labels: an older profile loaded */
	CHECK(aa_userns_hint(fd, "/usr/bin/sbxrun", "sbxrun_userns (enforce)", hint, sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "runs under 'sbxrun_userns', whose loaded profile does not let it make one");
	/* started by sbxrun (what it starts is stacked with sbxrun_child) */
	CHECK(aa_userns_hint(fd, "/usr/bin/sbxrun", "sbxrun_userns//&sbxrun_child (enforce)", hint,
			     sizeof(hint)) == 1);
	CHECK_CONTAINS(hint, "runs under 'sbxrun_userns//&sbxrun_child': it was started by sbxrun");

	/* a label's name without its mode */
	char name[64];
	aa_label_name("sbxrun (enforce)", name, sizeof(name));
	CHECK_STR(name, "sbxrun");
	aa_label_name("unconfined", name, sizeof(name));
	CHECK_STR(name, "unconfined");
	aa_label_name("sbxrun_userns//&sbxrun_child (complain)", name, sizeof(name));
	CHECK_STR(name, "sbxrun_userns//&sbxrun_child");

	close(fd);
	snprintf(dir, sizeof(dir), "rm -rf %s", root);
	(void)!system(dir);
	return unit_done("test_apparmor");
}
