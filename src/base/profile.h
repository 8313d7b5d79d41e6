/* profile.h - INI profiles: lookup by name, strict parsing, inheritance. */
#ifndef SBX_PROFILE_H
#define SBX_PROFILE_H

#include <stdio.h>

#include "base/config.h"

#define SBX_PROFILE_MAX_DEPTH 8
/* inih's line buffer in Debian's build (r55); longer lines are refused. */
#define SBX_INI_MAX_LINE 200
/* Profiles and the policy are small; a bigger file (or /dev/zero) is refused. */
#define SBX_PROFILE_MAX_SIZE (64 * 1024)

/* Finds NAME (or a path when it holds a '/') and returns its path. */
int profile_find(const char *name, char **path, struct sbx_err *err);
/* Applies the profile chain of NAME onto cfg (which holds the defaults). */
int profile_load(struct sbx_config *cfg, const char *name, struct sbx_err *err);
/* Parses one stream (for tests and the fuzzer); inherit is not followed. */
int profile_load_stream(struct sbx_config *cfg, FILE *f, const char *label, struct sbx_err *err);
/* The strict INI reader alone (the policy uses it): fn is called for each
 * key in file order; a nonzero return stops the reading and is returned. */
typedef int (*profile_entry_fn)(void *arg, const char *section, const char *key,
				const char *value, int line, struct sbx_err *err);
int profile_parse_ini(const char *buf, size_t len, const char *label, profile_entry_fn fn,
		      void *arg, struct sbx_err *err);
/* Reads a whole profile or policy file from fd: a regular file of at most
 * SBX_PROFILE_MAX_SIZE bytes, NUL-terminated; path names it in errors. */
int profile_read_fd(int fd, const char *path, char **out, size_t *len, struct sbx_err *err);
/* `sbxrun profile ls|show`. */
int profile_cmd(int argc, char **argv, struct sbx_err *err);

#endif
