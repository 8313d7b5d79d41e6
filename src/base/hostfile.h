/* hostfile.h - files sbxrun writes on the host, created atomically: never
 * through a symlink at the final name, never half-written, and no temporary
 * name left behind, not even after SIGINT, SIGTERM or SIGHUP. */
#ifndef SBX_HOSTFILE_H
#define SBX_HOSTFILE_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/err.h"

/* Zero-initialised ({ 0 }) it is inactive: hostfile_abort does nothing. */
struct sbx_hostfile {
	int fd;         /* write here (O_WRONLY), between open and commit */
	bool active;
	int dirfd;      /* the directory the file goes into */
	char *name;     /* the final name in dirfd */
	char *tmpname;  /* the hidden temporary name; NULL with O_TMPFILE */
	char *path;     /* the path as given, for messages */
	int slot;       /* its entry in the signal-time registry, or -1 */
};

/* Creates an unnamed file (O_TMPFILE) in the directory of path (relative to
 * dirfd, which may be AT_FDCWD), or where the filesystem has none a hidden
 * temporary name beside it, removed on every exit path. An existing final
 * name that is a symlink or not a regular file is refused up front. */
int hostfile_open(struct sbx_hostfile *hf, int dirfd, const char *path, mode_t mode,
		  struct sbx_err *err);
/* Gives the file its final name: without replace an existing one is an
 * error; with replace the old file is swapped out atomically (after an
 * fsync), a symlink planted meanwhile is refused. Closes hf->fd. */
int hostfile_commit(struct sbx_hostfile *hf, bool replace, struct sbx_err *err);
/* Drops the file (its temporary name too); idempotent, for a cleanup
 * attribute as well. */
void hostfile_abort(struct sbx_hostfile *hf);
#define _cleanup_hostfile_ __attribute__((cleanup(hostfile_abort)))

/* A temporary directory beside path, ".NAME.sbxrun-XXXXXXXX", for plain
 * files only: removed with them by hostfile_dir_remove, and on SIGINT,
 * SIGTERM or SIGHUP. Zero-initialised it is inactive. */
struct sbx_hostdir {
	bool active;
	int fd;         /* the directory (O_RDONLY) */
	int parent;     /* the directory it is in */
	char *name;     /* its name in parent */
	char *path;     /* its path, for messages and paths below it */
	int slot;
};
int hostfile_dir_make(struct sbx_hostdir *d, const char *path, struct sbx_err *err);
void hostfile_dir_remove(struct sbx_hostdir *d);

/* Checks that path's final component may be written by sbxrun: missing, or
 * a regular file, never a symlink (what names the option, "--json"). */
int hostfile_check(int dirfd, const char *path, const char *what, struct sbx_err *err);
/* Opens path for appending (--events): created if missing, O_NOFOLLOW, and
 * only a regular file. */
int hostfile_open_append(const char *path, const char *what, struct sbx_err *err);

#endif
