/* import.h - a rootfs tarball (or an OCI image) into the store. */
#ifndef SBX_IMPORT_H
#define SBX_IMPORT_H

#include "base/err.h"
#include "store/unpack.h"

/* `sbxrun image import FILE [--name NAME]`: the whole import into the user's
 * store under its lock; name NULL derives one from FILE; source is what
 * meta.json records as the origin (NULL: FILE's absolute path). */
int import_file(const char *file, const char *name, const char *source, struct sbx_err *err);

#endif
