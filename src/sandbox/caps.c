/* caps.c - dropping every capability with libcap-ng, in the order the
 * kernel requires: the bounding set while CAP_SETPCAP is still effective,
 * then ambient, then the process sets, then no_new_privs. */
#include "sandbox/caps.h"

#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <sys/prctl.h>

/* Makes CAP_SETPCAP effective when it is only permitted (after a setuid
 * with PR_SET_KEEPCAPS), so that the bounding set can still be cleared. */
static int raise_setpcap(struct sbx_err *err)
{
	if (!capng_have_capability(CAPNG_PERMITTED, CAP_SETPCAP) ||
	    capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP))
		return 0;
	if (capng_update(CAPNG_ADD, CAPNG_EFFECTIVE, CAP_SETPCAP) < 0 ||
	    capng_apply(CAPNG_SELECT_CAPS) < 0)
		return err_set(err, EPERM, "capabilities: cannot raise CAP_SETPCAP");
	return 0;
}

static int drop_sets(int bounding, struct sbx_err *err)
{
	int rc;
	if (bounding) {
		capng_clear(CAPNG_SELECT_BOUNDS);
		if ((rc = capng_apply(CAPNG_SELECT_BOUNDS)) < 0)
			return err_set(err, EPERM, "capabilities: cannot clear the bounding set (%d)", rc);
	}
	capng_clear(CAPNG_SELECT_AMBIENT);
	if ((rc = capng_apply(CAPNG_SELECT_AMBIENT)) < 0)
		return err_set(err, EPERM, "capabilities: cannot clear the ambient set (%d)", rc);
	capng_clear(CAPNG_SELECT_CAPS);
	if ((rc = capng_apply(CAPNG_SELECT_CAPS)) < 0)
		return err_set(err, EPERM, "capabilities: cannot clear the process sets (%d)", rc);
	return 0;
}

/* Reads the sets back from the kernel: a silent partial drop must not pass. */
static int verify(int bounding, struct sbx_err *err)
{
	if (capng_get_caps_process() < 0)
		return err_sys(err, "capabilities: cannot read them back");
	if (capng_have_capabilities(CAPNG_SELECT_CAPS) != CAPNG_NONE)
		return err_set(err, EPERM, "capabilities: some remain after dropping");
	if (capng_have_capabilities(CAPNG_SELECT_AMBIENT) != CAPNG_NONE)
		return err_set(err, EPERM, "capabilities: the ambient set is not empty");
	if (bounding && capng_have_capabilities(CAPNG_SELECT_BOUNDS) != CAPNG_NONE)
		return err_set(err, EPERM, "capabilities: the bounding set is not empty");
	return 0;
}

int caps_drop_all(struct sbx_err *err)
{
	if (capng_get_caps_process() < 0)
		return err_sys(err, "capabilities: cannot read them");
	if (raise_setpcap(err) < 0)
		return -1;
	int bounding = capng_have_capability(CAPNG_EFFECTIVE, CAP_SETPCAP);
	if (drop_sets(bounding, err) < 0 || verify(bounding, err) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(err, "capabilities: cannot set no_new_privs");
	return 0;
}
