/* confine.c - what the command child does to itself right before exec:
 * rlimits, drop every capability, no_new_privs, then the seccomp filter,
 * last, so the filter need not allow what the steps before it use. */
#define _GNU_SOURCE
#include "sandbox/confine.h"

#include "sandbox/caps.h"
#include "sandbox/limits.h"
#include "sandbox/seccomp.h"

int confine_command(const struct sbx_plan *plan, struct sbx_err *err)
{
	if (limits_apply_child(plan->cfg, &plan->lim, err) < 0)
		return -1;
	if (caps_drop_all(err) < 0)
		return -1;
	/* compiled (or read from the cache) by sandbox_plan */
	return seccomp_apply(&plan->seccomp, err);
}
