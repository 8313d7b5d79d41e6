/* pkgcache.h - the package gateway's cache as a whole, for `sbxrun cache`
 * and for the gateway's own eviction: its artifacts listed with what each
 * is (the metadata kept beside it at commit), evicted least recently used
 * first under a cache-wide lock, and the checks a system cache must pass
 * before a user reads it. The per-request side is gw.h (gw_cache.c). */
#ifndef SBX_PKGCACHE_H
#define SBX_PKGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Where root keeps the cache users read first ([packages] cache). */
#define PKGCACHE_SYSTEM_DIR "/var/cache/sbxrun/packages"

struct pkgcache_entry {
	char algo[8];            /* the digest, which is the file's name */
	char hex[129];
	char eco[16];            /* from the metadata; "?" when it has none */
	char name[216];
	char version[128];
	char file[256];
	uint64_t size;
	int64_t used;            /* last use (the file's atime), seconds */
	long used_nsec;          /* and nanoseconds, for the order */
};

/* The user's cache: $XDG_CACHE_HOME/sbxrun/packages (or ~/.cache/...). */
int pkgcache_user_root(char **out, struct sbx_err *err);

/* Root's artifacts, least recently used first: *out (free it), *n. A
 * missing cache is an empty one. */
int pkgcache_list(const char *root, struct pkgcache_entry **out, size_t *n, struct sbx_err *err);

struct pkgcache_prune {
	uint64_t max;     /* evict until at most this many bytes; 0: no cap */
	int64_t older_s;  /* evict what was not used for this long; 0: none */
	bool all;         /* evict everything, index documents too */
};
struct pkgcache_freed {
	uint64_t files, bytes, left_files, left_bytes;
};
/* Evicts from the cache below dirfd (its root) under the cache-wide lock;
 * wait: block for that lock, else return 0 at once when another holds it;
 * 1 when it ran.
 * Temporary files of processes that are gone go too, and the lock files
 * of artifacts not there that no download holds. Files being served
 * stay readable (they are unlinked while open). */
int pkgcache_evict(int dirfd, const struct pkgcache_prune *p, bool wait, struct pkgcache_freed *out,
		   struct sbx_err *err);
/* The same by path. */
int pkgcache_prune(const char *root, const struct pkgcache_prune *p, struct pkgcache_freed *out,
		   struct sbx_err *err);

/* Whether the directory at dir may be trusted as a system cache: it and
 * every directory above it belong to root and nobody else may write them
 * (a sticky directory above is fine). -1 with err saying why. */
int pkgcache_system_check(const char *dir, struct sbx_err *err);
/* The same for the cache's own subdirectory at dirfd (e.g. "sha512"). */
int pkgcache_system_check_at(int dirfd, const char *sub, struct sbx_err *err);

/* The metadata line kept as ALGO/HEX.meta: "ECO\tNAME\tVERSION\tFILE\n",
 * each field stripped of tabs and control characters. */
void pkgcache_meta_format(const char *eco, const char *name, const char *version, const char *file,
			  char *buf, size_t size);

#endif
