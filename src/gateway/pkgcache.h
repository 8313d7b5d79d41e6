/* pkgcache.h - the package gateway's cache as a whole, for `sbxrun cache`
 * and for the gateway's own eviction: its artifacts listed with what each
 * is (the metadata kept beside it at commit) and its index documents with
 * the upstream each came from, evicted least recently used first under a
 * cache-wide lock, and the checks a system cache must pass before a user
 * reads it or root writes it. The per-request side is gw.h and gw_cache.h
 * (gw_cache.c). */
#ifndef SBX_PKGCACHE_H
#define SBX_PKGCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

/* Where root keeps the cache users read first ([packages] cache). */
#define PKGCACHE_SYSTEM_DIR "/var/cache/sbxrun/packages"

/* Index documents are kept as index/ECO/UP/KEY: UP names the upstream
 * they came from (PKGCACHE_UP_HEX hex digits of a digest of its base URL,
 * which UP/.upstream holds for the listing), KEY the document's name with
 * '/' as '%'. A file right in index/ECO/ is of the layout before the
 * upstream was in the key: never read, removed by any eviction. */
#define PKGCACHE_UP_HEX 32
#define PKGCACHE_UPSTREAM_FILE ".upstream"

struct pkgcache_entry {
	char algo[8];            /* the digest, which is the file's name; "index" for an index document */
	char hex[129];           /* an index document's: its upstream's UP */
	char eco[16];            /* from the metadata (an index: its directory); "?" when it has none */
	char name[256];          /* an index document: its key ('%' back to '/', npm's '+' taken off) */
	char version[128];       /* an index document: "(index)", or npm's full form "(index, full)" */
	char file[256];          /* an index document: its upstream's base URL, or "?" */
	char key[256];           /* an index document: its file's name below index/ECO/UP */
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
	uint64_t files, bytes, left_files, left_bytes;  /* index documents included */
};
/* Evicts from the cache below dirfd (its root) under the cache-wide lock;
 * wait_on (the lock's path, named while waiting): wait for that lock, at
 * most LOCK_DEADLINE_LONG_S; NULL: return 0 at once when another holds it;
 * 1 when it ran.
 * Temporary files of processes that are gone go too, and the lock files
 * of artifacts not there that no download holds. Files being served
 * stay readable (they are unlinked while open). */
int pkgcache_evict(int dirfd, const struct pkgcache_prune *p, const char *wait_on, struct pkgcache_freed *out,
		   struct sbx_err *err);
/* The same by path. */
int pkgcache_prune(const char *root, const struct pkgcache_prune *p, struct pkgcache_freed *out,
		   struct sbx_err *err);

/* The system cache's root as a directory handle: walked down from "/" a
 * component at a time, never through a symlink, each directory root's and
 * writable by nobody else (a sticky directory above the root is fine);
 * mk: the missing ones are made 0755 (root, filling it). -1 with err
 * naming the path and its owner or mode. */
int pkgcache_system_open(const char *dir, bool mk, struct sbx_err *err);
/* Whether the directory at dir may be trusted as a system cache
 * (pkgcache_system_open, closed again). */
int pkgcache_system_check(const char *dir, struct sbx_err *err);
/* Whether root may write the system cache at dir (fill, evict, commit):
 * pkgcache_system_open (mk: the missing directories made), and each of its
 * subdirectories there root's and nobody else's. A missing cache without
 * mk is fine (nothing to write). */
int pkgcache_system_writable(const char *dir, bool mk, struct sbx_err *err);
/* The same for the cache's own subdirectory at dirfd (e.g. "sha512"). */
int pkgcache_system_check_at(int dirfd, const char *sub, struct sbx_err *err);
/* name below dirfd as a directory handle (O_NOFOLLOW: a symlink is
 * refused), made with mode first when mk (mode set on the handle, past the
 * umask); system: refused unless root owns it and nobody else may write
 * it. what names it in err. */
int pkgcache_subdir(int dirfd, const char *name, bool mk, mode_t mode, bool system, const char *what,
		    struct sbx_err *err);

/* The metadata line kept as ALGO/HEX.meta: "ECO\tNAME\tVERSION\tFILE\n",
 * each field stripped of tabs and control characters. */
void pkgcache_meta_format(const char *eco, const char *name, const char *version, const char *file,
			  char *buf, size_t size);

#endif
