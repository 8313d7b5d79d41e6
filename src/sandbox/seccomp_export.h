/* seccomp_export.h - the default seccomp filter as an OCI seccomp profile. */
#ifndef SBX_SECCOMP_EXPORT_H
#define SBX_SECCOMP_EXPORT_H

#include <json-c/json.h>

#include "base/config.h"

/* The profile for cfg (ptrace, seccomp = off), as a new JSON object. The
 * single-uid chown emulation is left out: an engine maps real uid ranges. */
struct json_object *seccomp_export_json(const struct sbx_config *cfg);

#endif
