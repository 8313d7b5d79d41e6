/* cluster.c - a resolved profile as what other engines read: Kubernetes
 * YAML (kube_yaml.c: a Job or Pod, its NetworkPolicy, the proxy beside it)
 * or an OCI seccomp profile (sandbox/seccomp_export.c). What a profile says
 * that the target cannot express is said on stderr. */
#define _GNU_SOURCE
#include "cluster/cluster.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/log.h"
#include "base/util.h"
#include "cluster/kube_yaml.h"
#include "sandbox/seccomp_export.h"

static int export_seccomp(const struct sbx_config *cfg, char **out)
{
	struct json_object *j = seccomp_export_json(cfg);
	_cleanup_free_ char *text = xasprintf("%s\n", json_object_to_json_string_ext(
		j, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(j);
	if (cfg->seccomp == SBX_OFF)
		log_warn("profile '%s' has seccomp = off: the exported profile denies nothing",
			 cfg->profile);
	*out = steal_ptr(text);
	return 0;
}

static int export_kube(const struct sbx_config *cfg, const char *const *cmd, char **out,
		       struct sbx_err *err)
{
	struct kube_notes notes = { 0 };
	_cleanup_free_ char *yaml = NULL;

	if (kube_yaml(cfg, cmd, &yaml, &notes, err) < 0) {
		kube_notes_free(&notes);
		return -1;
	}
	for (size_t i = 0; i < notes.n; i++)
		log_warn("not expressed in Kubernetes: %s", notes.v[i]);
	kube_notes_free(&notes);
	*out = steal_ptr(yaml);
	return 0;
}

int cluster_export(const struct sbx_config *cfg, const char *const *cmd, char **text,
		   struct sbx_err *err)
{
	*text = NULL;
	if (cfg->export_format == SBX_EXPORT_SECCOMP)
		return export_seccomp(cfg, text);
	return export_kube(cfg, cmd, text, err);
}
