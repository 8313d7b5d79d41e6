/* digest.h - sha256 of image tarballs, cached by file identity. */
#ifndef SBX_DIGEST_H
#define SBX_DIGEST_H

#include <stdbool.h>

#include "base/err.h"

#define SBX_DIGEST_HEX 64

/* sha256 of everything readable from fd (from its current offset), as 64
 * lowercase hex characters and a NUL. */
int digest_fd(int fd, char out[SBX_DIGEST_HEX + 1], struct sbx_err *err);
/* The digest of the regular file open on fd, looked up first in the cache
 * directory cachefd by (device, inode, size, mtime_ns) and stored there when
 * computed. *hit tells whether the cache answered. Callers hold the store lock. */
int digest_cached(int cachefd, int fd, char out[SBX_DIGEST_HEX + 1], bool *hit,
		  struct sbx_err *err);
/* True for 64 lowercase hex characters. */
bool digest_valid(const char *s);

#endif
