/* profile.h - INI profiles: lookup by name, strict parsing, inheritance. */
#ifndef SBX_PROFILE_H
#define SBX_PROFILE_H

#include <stdio.h>

#include "base/config.h"

#define SBX_PROFILE_MAX_DEPTH 8
/* inih's line buffer in Debian's build (r55); longer lines are refused. */
#define SBX_INI_MAX_LINE 200

/* Finds NAME (or a path when it holds a '/') and returns its path. */
int profile_find(const char *name, char **path, struct sbx_err *err);
/* Applies the profile chain of NAME onto cfg (which holds the defaults). */
int profile_load(struct sbx_config *cfg, const char *name, struct sbx_err *err);
/* Parses one stream (for tests and the fuzzer); inherit is not followed. */
int profile_load_stream(struct sbx_config *cfg, FILE *f, const char *label, struct sbx_err *err);
/* `sbxrun profile ls|show`. */
int profile_cmd(int argc, char **argv, struct sbx_err *err);

#endif
