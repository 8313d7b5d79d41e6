/* filewatch.h - knowing when files change (inotify), replaced by a rename
 * or a new file included: the directory holding each is watched, and a
 * change to a watched name is reported. For the live rules: policy.ini and
 * a profile read again by running sessions and sidecars. */
#ifndef SBX_FILEWATCH_H
#define SBX_FILEWATCH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

#define FILEWATCH_MAX 4

struct filewatch {
	int fd;                          /* inotify, non-blocking; -1: none */
	int wd[FILEWATCH_MAX];
	char *name[FILEWATCH_MAX];       /* the file's base name in its directory */
	size_t idx[FILEWATCH_MAX];       /* its index in the paths given */
	size_t n;
};

/* Watches paths (absolute; NULL entries skipped); a directory that does not
 * exist is not watched (a file made there later is not seen). Returns 0, or
 * -1 with err (no inotify). */
int filewatch_open(struct filewatch *w, const char *const *paths, size_t n, struct sbx_err *err);
/* Readable when a change may have happened. */
int filewatch_fd(const struct filewatch *w);
/* Reads the pending events: which watched files changed, bit i for
 * paths[i] as given to filewatch_open; 0: none. */
unsigned filewatch_changed(struct filewatch *w);
void filewatch_close(struct filewatch *w);

#endif
