/* diskuse.h - sbxrun's own disk accounting for storage = disk. */
#ifndef SBX_DISKUSE_H
#define SBX_DISKUSE_H

#include <stdint.h>

/* What an inode costs at least, so that inodes are counted. */
#define DISKUSE_INODE_BYTES 4096

/* Bytes allocated below dir (st_blocks, at least DISKUSE_INODE_BYTES per
 * inode), without following symlinks or leaving its filesystem. Returns 0,
 * or -1 if dir cannot be read. */
int diskuse_bytes(const char *dir, uint64_t *out);
/* The same for dir below dirfd ("." for dirfd itself). */
int diskuse_bytes_at(int dirfd, const char *dir, uint64_t *out);
/* When to walk again (ms): 20 times what the last walk took, within 50 to
 * 500 ms; the shortest when less than a quarter of the quota is left. */
uint64_t diskuse_next_ms(uint64_t walk_ms, uint64_t used, uint64_t quota);

#endif
