/* snapshot_copy.h - a session's writable layer copied as the overlay wrote
 * it, so that the copy can be an overlay's lower layer (snapshot_copy.c). */
#ifndef SBX_SNAPSHOT_COPY_H
#define SBX_SNAPSHOT_COPY_H

#include <stdint.h>

#include "base/err.h"

/* Deeper directories than this are refused (the source is the sandbox's). */
#define SNAPCOPY_MAX_DEPTH 256

struct snapcopy {
	uint64_t cap;      /* the most bytes the copy may take; 0: none */
	uint64_t used;     /* what it took so far: data regions and an inode's block each */
	uint64_t files;
	char path[4096];   /* the entry being copied, for messages */
	/* a second pass over a first copy: what the first copied and has not
	 * changed (its ctime) since since_s is kept, the rest copied again, and
	 * what the source no longer has removed */
	int resync;
	int64_t since_s;
	const char *keep; /* a path (as in path) the second pass never removes */
	/* the copier's own */
	int no_reflink;    /* FICLONE failed once: the file systems share no extents */
	char *xlist, *xval; /* attribute buffers, made once */
};

/* Copies what is in the directory sdir into the directory ddir (merged into
 * what ddir holds): directories, regular files (reflinked, or their data
 * regions only: holes stay holes), symlinks, FIFOs and overlay whiteouts
 * (character devices 0/0), with their modes but setuid and setgid, times
 * and user.* extended attributes (the overlay's opaque markers among them).
 * Nothing is followed. Other devices and sockets are skipped. Fails with
 * EDQUOT past c->cap. With c->resync, ddir holds an earlier copy of sdir,
 * brought up to date. */
int snapcopy_tree(struct snapcopy *c, int sdir, int ddir, struct sbx_err *err);
/* Frees what the copier made for itself. */
void snapcopy_free(struct snapcopy *c);

/* Marks the directory fd opaque for the overlay (user.overlay.opaque=y):
 * what lower layers hold below it is hidden. */
int snapcopy_opaque(int fd, struct sbx_err *err);

#endif
