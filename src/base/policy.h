/* policy.h - the administrator's ceiling over every profile and flag:
 * /etc/sbxrun/policy.ini (trusted only when root owns it and every directory
 * above it), and an extra file named by $SBXRUN_POLICY that can only tighten.
 * Its keys are the profile's own, read as maxima. */
#ifndef SBX_POLICY_H
#define SBX_POLICY_H

#include <stddef.h>

#include "base/config.h"

#define SBX_POLICY_PATH "/etc/sbxrun/policy.ini"
#define SBX_POLICY_ENV "SBXRUN_POLICY"
#define SBX_POLICY_MAX_FILES 2

struct sbx_policy_bind {
	char *pattern; /* an absolute host path, glob characters allowed */
	int rw;        /* a writable bind may be made below it */
};

/* One policy file: caps.origin[key] is "FILE:LINE" where it sets key. */
struct sbx_policy_file {
	char *path;
	struct sbx_config caps;
	struct sbx_policy_bind *binds;
	size_t nbinds;
};

/* The ceiling is the intersection of the files: each is applied in turn. */
struct sbx_policy {
	struct sbx_policy_file file[SBX_POLICY_MAX_FILES];
	size_t n;
};

/* Reads /etc/sbxrun/policy.ini (absent: no ceiling; present but not root's,
 * writable by others, or below such a directory: an error) and the file
 * that $SBXRUN_POLICY names, if set. */
int policy_load(struct sbx_policy *pol, struct sbx_err *err);
/* The same with the system path given (tests); extra may be NULL. */
int policy_load_paths(struct sbx_policy *pol, const char *system, const char *extra,
		      struct sbx_err *err);
/* Adds one policy from text (tests and the fuzzer); label names it. */
int policy_add_text(struct sbx_policy *pol, const char *text, size_t len, const char *label,
		    struct sbx_err *err);
void policy_free(struct sbx_policy *pol);

/* Refuses a value above a ceiling with one line naming the policy file, the
 * key and the cap; a value nobody set (unlimited by default) becomes the
 * cap, with the origin "policy FILE:LINE". */
int policy_apply(const struct sbx_policy *pol, struct sbx_config *cfg, struct sbx_err *err);
/* policy_load and policy_apply: what every command that builds a sandbox
 * config calls. */
int policy_enforce(struct sbx_config *cfg, struct sbx_err *err);

/* The tightest [limits] timeout of the files, 0 if none caps it: a session
 * clamps each command's own timeout to it (a control request is no flag). */
uint64_t policy_timeout_cap_ms(const struct sbx_policy *pol);

/* Calls fn for each cap of each file, in file order: "[limits] memory = 2G". */
void policy_each_cap(const struct sbx_policy *pol,
		     void (*fn)(void *arg, const char *path, const char *cap), void *arg);

#endif
