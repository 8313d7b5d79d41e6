/* import.h - a rootfs tarball (or an OCI image) into the store. */
#ifndef SBX_IMPORT_H
#define SBX_IMPORT_H

#include <stdbool.h>

#include "base/err.h"
#include "store/store.h"
#include "store/unpack.h"

/* `sbxrun image import FILE [--name NAME] [--system]`: the whole import into
 * the user's store (system: root's system store, the file kept beside the
 * image for users' copies) under its lock; name NULL derives one from FILE;
 * source is what meta.json records as the origin (NULL: FILE's absolute path). */
int import_file(const char *file, const char *name, const char *source, bool system,
		struct sbx_err *err);

/* A user's copy of the system image DIGEST (in the store open on sysfd at
 * syspath), unpacked from its archive into the user's store, unnamed and
 * marked, once: files of the user's own uid, which their namespace maps. */
int import_system_copy(int sysfd, const char *syspath, const char *name, const char *digest,
		       struct sbx_err *err);

/* store_image_open for a sandbox's image: a user other than root whose
 * NAME is the system store's gets their copy of it made first (once). */
int import_image_open(const char *name, struct sbx_image *img, struct sbx_err *err);

#endif
