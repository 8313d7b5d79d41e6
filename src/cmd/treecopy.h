/* treecopy.h - the one copier of files and directories between the host
 * and a sandbox's files (cp, run --copy, run --out): nothing followed on
 * either side, symlinks copied as symlinks, special files skipped with a
 * warning, no setuid/setgid bits. Into a sandbox it writes as the
 * sandbox's owner; out of one, holes stay holes, the data written is capped
 * (copycap.c) and every file is an atomic host file (hostfile.c), or, in a
 * new directory copied whole (treecopy_out_dir), a plain file in a private
 * temporary directory that becomes the directory at the end. */
#ifndef SBX_TREECOPY_H
#define SBX_TREECOPY_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"
#include "cmd/copycap.h"

struct sbx_treecopy {
	int into;                 /* the destination is the sandbox (written as its owner) */
	const char *what;         /* names the copy in messages: "cp", "--copy", "--out" */
	struct sbx_copycap cap;   /* out of the sandbox: the most data to write */
	uint64_t used;
	const sigset_t *stop;     /* blocked signals that end the copy when one is pending, or NULL */
	int direct;               /* set by treecopy_out_dir: files go straight into its private directory */
	char path[4096];          /* the source entry being copied, for messages */
};

/* Copies sdir/sname to ddir/dname (a directory with what is below it;
 * an existing directory at dname is merged into). */
int treecopy(struct sbx_treecopy *c, int sdir, const char *sname, int ddir, const char *dname,
	     struct sbx_err *err);

/* Copies what is in the directory sfd (out of a sandbox) to the host as
 * the new directory path, whole or not at all: into a temporary directory
 * beside path (hostfile_dir_make), where each file is created directly
 * (exclusively, relative to its directory's fd, never through a symlink)
 * instead of as an atomic host file of its own; the tree is made durable
 * once (syncfs), given mode and renamed to path. With over_empty an empty
 * directory at path is replaced (--out), else path must not exist. On an
 * error, or a signal of c->stop pending, nothing is left (the caller
 * unblocks the signal). */
int treecopy_out_dir(struct sbx_treecopy *c, int sfd, const char *path, mode_t mode, bool over_empty,
		     struct sbx_err *err);

#endif
