/* diskuse.h - sbxrun's own disk accounting for storage = disk. */
#ifndef SBX_DISKUSE_H
#define SBX_DISKUSE_H

#include <stdint.h>
#include <sys/types.h>

/* What an inode costs at least, so that inodes are counted. */
#define DISKUSE_INODE_BYTES 4096

/* What one walk found. */
struct sbx_diskuse {
	uint64_t bytes; /* counted (past the limit the walk stops) */
	int over;       /* more than the limit */
	int errnum;     /* something could not be counted: why */
	char what[160]; /* and what (names sanitised), when errnum is set */
};

/* Bytes allocated below dir (st_blocks, at least DISKUSE_INODE_BYTES per
 * inode), without following symlinks or leaving its filesystem, at any
 * depth; what this process cannot read is skipped. Returns 0, or -1 if dir
 * cannot be read. For content sbxrun trusts (an image's workspace). */
int diskuse_bytes_at(int dirfd, const char *dir, uint64_t *out);

/* The same for what the caller keeps of a sandbox's writes (change sets,
 * snapshots): walked as the quota walks a layer, with the rights the
 * caller has over its own files (root: over all), so that a directory the
 * sandbox left 0000 or 0300 hides nothing; what even that cannot read (a
 * file of another owner) is counted by its own blocks. */
int diskuse_owned_bytes_at(int dirfd, const char *dir, uint64_t *out);

/* The sandbox's writable layer (dirfd), walked with the rights the sandbox
 * has over its own files (uid and gid: the host ids its user namespace
 * maps), so that no mode hides anything. Fills du; returns 1 when the
 * sandbox must end: more than quota (du->over), or something could not be
 * counted (du->errnum, du->what); 0 within the quota. */
int diskuse_check(int dirfd, uid_t uid, gid_t gid, uint64_t quota, struct sbx_diskuse *du);

/* When to walk again (ms): 20 times what the last walk took, within 50 to
 * 500 ms; the shortest when less than a quarter of the quota is left. */
uint64_t diskuse_next_ms(uint64_t walk_ms, uint64_t used, uint64_t quota);

#endif
