/* kube_yaml.h - a profile as Kubernetes YAML (Job or Pod, NetworkPolicy,
 * the egress proxy's Deployment and Service). */
#ifndef SBX_KUBE_YAML_H
#define SBX_KUBE_YAML_H

#include <stddef.h>
#include <stdint.h>

#include "base/config.h"

/* Profile settings the YAML cannot express, one sentence each. */
struct kube_notes {
	char **v;
	size_t n;
};
void kube_notes_free(struct kube_notes *n);

/* The manifests for cfg (its kube_kind, image_ref or image), the main
 * container running cmd (NULL-ended; NULL or empty: the image's Cmd). */
int kube_yaml(const struct sbx_config *cfg, const char *const *cmd, char **out,
	      struct kube_notes *notes, struct sbx_err *err);

/* The size limit of the proxy's package cache volume for [packages]
 * cache_max (bytes): the cap and a margin for what the cap does not count;
 * 0 (unlimited) gives 0, no limit. */
uint64_t kube_cache_limit(uint64_t cache_max);

/* Quantities in Kubernetes syntax: 536870912 -> "512Mi", 500 -> "500m". */
void kube_quantity_bytes(uint64_t bytes, char *buf, size_t size);
void kube_quantity_cpu(uint64_t milli, char *buf, size_t size);
/* A DNS-1123 label from a profile name (lowercase, [a-z0-9-]). */
void kube_name(const char *s, char *out, size_t size);

#endif
