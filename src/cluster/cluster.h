/* cluster.h - a profile exported for other engines (cluster.c). */
#ifndef SBX_CLUSTER_H
#define SBX_CLUSTER_H

#include "base/config.h"

/* The text of cfg->export_format for cfg: Kubernetes YAML whose main
 * container runs cmd (NULL-ended; empty: the image's Cmd), or the OCI
 * seccomp profile. *text is the caller's to free. */
int cluster_export(const struct sbx_config *cfg, const char *const *cmd, char **text,
		   struct sbx_err *err);

#endif
