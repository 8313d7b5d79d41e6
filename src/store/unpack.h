/* unpack.h - one tarball unpacked safely (libarchive) into a directory. */
#ifndef SBX_UNPACK_H
#define SBX_UNPACK_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

struct sbx_import_limits {
	uint64_t max_entries;
	uint64_t max_bytes;   /* regular file contents, summed */
	unsigned max_depth;   /* path components */
	bool layer;           /* an image layer over lower ones (store/oci_import.c):
			       * whiteout entries are skipped, and an existing
			       * symlink or a file of another type at an entry's
			       * own path is replaced (never followed) */
};

struct sbx_import_stats {
	uint64_t entries;
	uint64_t bytes;
	uint64_t skipped;     /* device nodes, FIFOs, sockets */
	uint64_t suid_stripped;
};

/* The limits an import into the store uses. */
extern const struct sbx_import_limits import_default_limits;

/* Extracts the tar (none/gzip/xz/zstd) readable on archive_fd into the
 * directory destfd, in this process: it changes the working directory to
 * destfd for libarchive and restores it. Refuses (returning -1) on the first
 * unsafe or failed entry; the caller removes what was written. */
int import_extract_fd(int archive_fd, int destfd, const struct sbx_import_limits *lim,
		      struct sbx_import_stats *stats, struct sbx_err *err);
/* The same checks of one entry name as an extraction makes: relative, no
 * "..", at most max_depth components. */
int import_check_name(const char *raw, const char *what, unsigned max_depth, struct sbx_err *err);
/* "./etc/x" -> "etc/x"; "." and "./" -> "". */
const char *import_rel_path(const char *p);

#endif
