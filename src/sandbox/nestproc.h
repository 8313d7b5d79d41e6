/* nestproc.h - the nested tier's /proc of no processes (nestproc.c). */
#ifndef SBX_NESTPROC_H
#define SBX_NESTPROC_H

#include "base/err.h"

/* Child side, before pivot_root (the container's /proc still at /proc):
 * a read-only tmpfs at rootfd's /proc with a few of the machine's files. */
int nestproc_files(int rootfd, struct sbx_err *err);

#endif
