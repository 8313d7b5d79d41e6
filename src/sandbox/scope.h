/* scope.h - a delegated cgroup v2 subtree from systemd (a transient scope
 * with Delegate=yes), for hosts where sbxrun's own cgroup is not writable. */
#ifndef SBX_SCOPE_H
#define SBX_SCOPE_H

#include <stddef.h>

#include "base/err.h"

/* Whether systemd is the init and cgroup v2 the only hierarchy. */
int scope_systemd_running(void);
/* Whether a cgroup directory is a scope sbxrun got from systemd (this
 * process's, or that of the sbxrun that started it): sbxrun-PID-X.scope. */
int scope_is_ours(const char *dir);
/* Asks the user's systemd manager (root: the system manager) for a scope
 * with Delegate=yes holding this process, moves this process into its
 * "supervisor" leaf and enables memory, pids and cpu for the scope's
 * children. dir gets the scope's cgroup directory. */
int scope_delegate(char *dir, size_t size, struct sbx_err *err);

#endif
