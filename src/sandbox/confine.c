/* confine.c - the confinement of the sandbox's processes: rlimits, every
 * capability dropped, no_new_privs, then the seccomp filter, last, so the
 * filter need not allow what the steps before it use. pid 1 confines
 * itself once it is set up (confine_ahead: a run's init before it starts
 * the command, a session's command init before its request comes); the
 * command child inherits that, sets its rlimits and checks the rest back
 * (confine_command with plan->confined). A session's pid 1 keeps what it
 * needs to make each command's namespaces (confine_ns_maker). */
#define _GNU_SOURCE
#include "sandbox/confine.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/util.h"
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

/* A session's pid 1 still makes, for each command, a pid namespace
 * (clone), and in that a mount namespace with a fresh, masked /proc
 * (unshare, mount): CAP_SYS_ADMIN for those, and CAP_SETPCAP so that the
 * command's init can still clear its bounding set (caps_drop_all); nothing
 * else. The filter's prefix allows only those calls (seccomp.h). */
int confine_ns_maker(const struct sbx_plan *plan, struct sbx_err *err)
{
	static const unsigned keep[] = { CAP_SYS_ADMIN, CAP_SETPCAP };

	if (caps_keep_only(keep, ARRAY_SIZE(keep), err) < 0)
		return -1;
	return seccomp_apply_ns_maker(&plan->seccomp, err);
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
	if (limits_apply_child(&plan->lim, err) < 0)
		return -1;
	if (plan->confined)
		return check_ahead(plan, err);
	return confine_ahead(plan, err);
}
