/* oci_export.h - a tree as an OCI image layout or a docker-archive tarball. */
#ifndef SBX_OCI_EXPORT_H
#define SBX_OCI_EXPORT_H

#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

enum sbx_oci_format { SBX_OCI_FORMAT_OCI, SBX_OCI_FORMAT_DOCKER };

struct sbx_oci_export {
	const char *output;       /* the tarball written (temp name, then renamed) */
	enum sbx_oci_format format;
	const char *name;         /* image or session name (title label) */
	const char *ref;          /* reference the engine names it by, "localhost/NAME:latest" */
	const char *source;       /* label io.sbxrun.source: "image NAME" or "session NAME" */
	const char *digest;       /* the store digest of an image, or NULL */
	const char *workdir;      /* WorkingDir: the workspace */
	int64_t mtime;            /* -1: each file's own, and now for the config */
	dev_t extra_dev;          /* as in struct sbx_export */
	uint64_t max_data;        /* as in struct sbx_export */
	const char *max_why;
};

/* Writes the tree below top (resolved from rootfd) as one layer with its
 * config (Env from the tree's /etc/environment over PATH and LANG), manifest
 * and, for the OCI layout, index.json and oci-layout. */
int oci_export(int rootfd, const char *top, const struct sbx_oci_export *o, struct sbx_err *err);

#endif
