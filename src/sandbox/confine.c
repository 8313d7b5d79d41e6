/* confine.c - what the command child does to itself right before exec:
 * rlimits, drop every capability, no_new_privs, then the seccomp filter,
 * last, so the filter need not allow what the steps before it use.
 * A session's command init, made ahead while the session is idle, drops
 * the capabilities and loads the filter before its request comes
 * (confine_ahead); its command child inherits both and checks them
 * (confine_command with plan->confined). */
#define _GNU_SOURCE
#include "sandbox/confine.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sandbox/caps.h"
#include "sandbox/limits.h"
#include "sandbox/seccomp.h"

int confine_ahead(const struct sbx_plan *plan, struct sbx_err *err)
{
	if (caps_drop_all(err) < 0)
		return -1;
	/* compiled (or read from the cache) by sandbox_plan */
	return seccomp_apply(&plan->seccomp, err);
}

/* What confine_ahead did, read back from the kernel: no capability left,
 * no_new_privs set, and a filter in place when the plan has one. */
static int check_ahead(const struct sbx_plan *plan, struct sbx_err *err)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return err_sys(err, "capabilities: cannot read them");
	for (int i = 0; i < 2; i++)
		if (d[i].effective || d[i].permitted || d[i].inheritable)
			return err_set(err, EPERM, "capabilities: some remain in the command's init");
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1)
		return err_set(err, EPERM, "no_new_privs is not set in the command's init");
	if (plan->seccomp.len && prctl(PR_GET_SECCOMP, 0, 0, 0, 0) != SECCOMP_MODE_FILTER)
		return err_set(err, EPERM, "seccomp: no filter in the command's init");
	return 0;
}

int confine_command(const struct sbx_plan *plan, struct sbx_err *err)
{
	if (limits_apply_child(plan->cfg, &plan->lim, err) < 0)
		return -1;
	if (plan->confined)
		return check_ahead(plan, err);
	return confine_ahead(plan, err);
}
