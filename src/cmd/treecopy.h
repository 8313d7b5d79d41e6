/* treecopy.h - the one copier of files and directories between the host
 * and a sandbox's files (cp, run --copy, run --out): nothing followed on
 * either side, symlinks copied as symlinks, special files skipped with a
 * warning, no setuid/setgid bits. Into a sandbox it writes as the
 * sandbox's owner; out of one, holes stay holes, the data written is capped
 * (copycap.c) and every file is an atomic host file (hostfile.c). */
#ifndef SBX_TREECOPY_H
#define SBX_TREECOPY_H

#include <signal.h>
#include <stdint.h>

#include "base/err.h"
#include "cmd/copycap.h"

struct sbx_treecopy {
	int into;                 /* the destination is the sandbox (written as its owner) */
	const char *what;         /* names the copy in messages: "cp", "--copy", "--out" */
	struct sbx_copycap cap;   /* out of the sandbox: the most data to write */
	uint64_t used;
	const sigset_t *stop;     /* blocked signals that end the copy when one is pending, or NULL */
	char path[4096];          /* the source entry being copied, for messages */
};

/* Copies sdir/sname to ddir/dname (a directory with what is below it;
 * an existing directory at dname is merged into). */
int treecopy(struct sbx_treecopy *c, int sdir, const char *sname, int ddir, const char *dname,
	     struct sbx_err *err);

#endif
