/* apparmor.h - the fix for AppArmor's restriction of user namespaces. */
#ifndef SBX_APPARMOR_H
#define SBX_APPARMOR_H

#include <stddef.h>

/* kernel.apparmor_restrict_unprivileged_userns beneath rootfd (proc/sys/...),
 * or -1 where the kernel has no such setting. */
long aa_restrict_value(int rootfd);
/* Where that setting is 1, the one-line fix for a user namespace that could
 * not be set up (returns 1, out filled); else 0 and out "". The facts are
 * read beneath rootfd (proc/sys, etc/apparmor.d); exe is this binary's path,
 * label its AppArmor label ("unconfined" where no profile attached). The
 * fix: a profile for exe not loaded (the command that loads it), a profile
 * for another path (that path and the two lines that would cover exe), or
 * none; the sysctl named last, as the machine-wide alternative. */
int aa_userns_hint(int rootfd, const char *exe, const char *label, char *out, size_t size);
/* The same for this process on this machine. */
int aa_userns_hint_self(char *out, size_t size);

#endif
