/* diskuse.h - sbxrun's own disk accounting for storage = disk. */
#ifndef SBX_DISKUSE_H
#define SBX_DISKUSE_H

#include <stdint.h>

/* Bytes allocated below dir (st_blocks), without following symlinks or
 * leaving its filesystem. Returns 0, or -1 if dir cannot be read. */
int diskuse_bytes(const char *dir, uint64_t *out);

#endif
