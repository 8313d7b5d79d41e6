/* snapshot_pause.h - a session's processes held still while a snapshot is
 * copied (snapshot_pause.c). */
#ifndef SBX_SNAPSHOT_PAUSE_H
#define SBX_SNAPSHOT_PAUSE_H

#include <sys/types.h>

#include "base/err.h"

#define SNAPPAUSE_MAX_PROCS 4096
/* Passes of SIGSTOP over the session's processes until one finds none new */
#define SNAPPAUSE_MAX_PASSES 64

struct snappause {
	int cgroup_fd;       /* the frozen cgroup's directory, or -1 */
	int *pidfds;         /* the processes stopped with SIGSTOP */
	pid_t *pids;         /* and their pids */
	size_t n;
	int watch_fd;        /* the watchdog's pipe: its end without a word resumes */
	pid_t watch_pid;
};

/* Freezes the cgroup v2 directory cgroup (cgroup.freeze) when it is given
 * and writable; else stops every descendant of supervisor (the session's
 * init, its commands' inits and all they started: no process of the
 * session's pid namespace is anything else), parents before their
 * children, in passes until one finds no process it had not stopped, so
 * that none forks past the walk (-1 when the passes do not end: the
 * session keeps forking faster). A watchdog child, started first, undoes
 * the pause if this process dies during it (killed: snappause_end never
 * runs): it thaws the cgroup and continues every process of the session. */
int snappause_start(struct snappause *p, const char *cgroup, pid_t supervisor, struct sbx_err *err);
/* Thaws or continues what snappause_start held; safe to call twice. */
void snappause_end(struct snappause *p);

#endif
