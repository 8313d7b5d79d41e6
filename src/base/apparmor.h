/* apparmor.h - the fix for AppArmor's restriction of user namespaces. */
#ifndef SBX_APPARMOR_H
#define SBX_APPARMOR_H

#include <stddef.h>

#include "base/err.h"

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

/* The labels of the package's profile (contrib/apparmor-sbxrun): where an
 * exec of the binary lands (no user namespace), the one entered only by the
 * binary's scrubbed exec of itself (may make them), and what sbxrun starts
 * runs stacked with (no user namespace). */
#define AA_ENTRY "sbxrun"
#define AA_USERNS "sbxrun_userns"
#define AA_CHILD "sbxrun_child"
/* The name of a label read from /proc (without its " (mode)"), in out. */
void aa_label_name(const char *label, char *out, size_t size);
/* First thing in main. Under the label AA_ENTRY, execs this binary again,
 * which the profile moves into AA_USERNS with AT_SECURE set (so code the
 * caller preloaded does not come along); does not return then. Under
 * AA_USERNS, refuses a start without AT_SECURE (aa-exec into it). Anywhere
 * else (no AppArmor, unconfined, another profile) does nothing. 0 to go
 * on, -1 with err (exit 125). */
int aa_enter(char **argv, struct sbx_err *err);

#endif
