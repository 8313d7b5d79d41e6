/* export.h - a sandbox's or an image's filesystem as a tarball. */
#ifndef SBX_EXPORT_H
#define SBX_EXPORT_H

#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

struct sbx_export {
	const char *output;   /* .tar, .tar.gz, .tar.xz or .tar.zst */
	int64_t mtime;        /* -1: each file's own */
	dev_t extra_dev;      /* a second filesystem to descend into (the workspace) */
	uint64_t max_data;    /* the most data bytes to write (holes not counted); 0: no cap */
	const char *max_why;  /* that cap for the message: "256M (--max-size)" */
};

/* Writes the tree below topfd (resolved from rootfd) to ex->output, sparse
 * files as sparse entries; atomically (base/hostfile.h): beyond the cap, or
 * on any error or signal, nothing is left. */
int export_tree(int rootfd, const char *top, const struct sbx_export *ex, struct sbx_err *err);

#endif
