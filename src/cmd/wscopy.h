/* wscopy.h - run and shell --copy PATH[:DEST] (host files into the
 * workspace before the command), --out DIR (the workspace onto the host
 * after it) and the hint for a host file named but not copied in. All the
 * copying is treecopy's. */
#ifndef SBX_WSCOPY_H
#define SBX_WSCOPY_H

#include <signal.h>
#include <stdint.h>

#include "base/config.h"

/* Before anything starts: every --copy source exists, with what the image
 * holds at the workspace (seeded bytes) they fit in quota (0: none), and
 * --out names a directory that is missing or empty. */
int wscopy_check(const struct sbx_config *cfg, uint64_t quota, uint64_t seeded, struct sbx_err *err);
/* Copies every --copy into the workspace (wsfd, a directory fd), as the
 * sandbox's owner; a DEST this made goes again when a copy fails. */
int wscopy_in(const struct sbx_config *cfg, int wsfd, struct sbx_err *err);
/* Copies what the workspace holds to --out DIR, atomically: into a hidden
 * directory beside DIR, renamed into place when complete. cap: the most
 * data to write (a session's: cap_session names it). stop: the signals
 * that end the copy when pending (the caller keeps them blocked). */
int wscopy_out(const struct sbx_config *cfg, int wsfd, const char *cap_session,
	       const sigset_t *stop, struct sbx_err *err);
/* --copy and --out with --session: the session's workspace, opened (its
 * root and workspace path in *rootfd and *workspace, the caller's). */
int wscopy_session_open(const char *session, int *rootfd, char **workspace, struct sbx_err *err);
/* After a command that failed: one hint line when an argument names a
 * relative path that exists on the host but not in the sandbox. workdir:
 * the command's directory inside; wsfd (or -1) its workspace; rootfd (or
 * -1) what to look in for paths outside it (a session's root, an image's
 * rootfs). Never with --quiet. */
void wscopy_hint(const struct sbx_config *cfg, char *const *argv, const char *workdir, int wsfd,
		 int rootfd);

#endif
