/* oci_import.h - OCI image layouts and docker-archives into the store. */
#ifndef SBX_OCI_IMPORT_H
#define SBX_OCI_IMPORT_H

#include "base/err.h"
#include "store/unpack.h"

enum { OCI_IMPORT_PLAIN, OCI_IMPORT_OCI, OCI_IMPORT_DOCKER };

/* What the tarball on fd holds (an oci-layout file, or a manifest.json
 * without an etc/ beside it), as OCI_IMPORT_*; fd is rewound. */
int oci_import_detect(int fd, struct sbx_err *err);
/* Unpacks the archive into stagingfd/layout (the rootfs checks), then
 * applies its layers in order into rootfd, whiteouts first; the layout is
 * removed again. OCI layers must match their digests. */
int oci_import_layers(int archive_fd, int kind, int stagingfd, int rootfd,
		      const struct sbx_import_limits *lim, struct sbx_import_stats *st,
		      struct sbx_err *err);

#endif
