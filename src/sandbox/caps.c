/* caps.c - dropping every capability (or all but a named few) with
 * libcap-ng, in the order the kernel requires: the bounding set while
 * CAP_SETPCAP is still effective, then ambient, then the process sets,
 * then no_new_privs. */
#include "sandbox/caps.h"

#include <cap-ng.h>
#include <errno.h>
#include <linux/capability.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The process sets as the kernel has them, with one capget: libcap-ng's
 * capng_get_caps_process reads /proc/self/status twice, and a start read it
 * seven times (bench/README.md). */
static int read_sets(struct __user_cap_data_struct d[2])
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	return (int)syscall(SYS_capget, &h, d);
}

static int has(const struct __user_cap_data_struct d[2], unsigned cap, int effective)
{
	unsigned set = effective ? d[cap / 32].effective : d[cap / 32].permitted;
	return (set >> (cap % 32)) & 1;
}

/* Makes CAP_SETPCAP effective when it is only permitted (after a setuid
 * with PR_SET_KEEPCAPS), so that the bounding set can still be cleared. */
static int raise_setpcap(const struct __user_cap_data_struct d[2], struct sbx_err *err)
{
	if (!has(d, CAP_SETPCAP, 0) || has(d, CAP_SETPCAP, 1))
		return 0;
	if (capng_get_caps_process() < 0 || capng_update(CAPNG_ADD, CAPNG_EFFECTIVE, CAP_SETPCAP) < 0 ||
	    capng_apply(CAPNG_SELECT_CAPS) < 0)
		return err_set(err, EPERM, "capabilities: cannot raise CAP_SETPCAP");
	return 0;
}

/* The process sets hold exactly `keep` (a mask of capability numbers),
 * effective and permitted; the bounding set too when `bounding`. */
static int drop_sets(uint64_t keep, int bounding, struct sbx_err *err)
{
	int rc;
	/* The bounding set with PR_CAPBSET_DROP directly: libcap-ng's
	 * capng_apply reads /proc/self/status three times around the same
	 * drops. PR_CAPBSET_DROP fails with EINVAL past the last capability. */
	for (int c = 0; bounding && c < 64; c++)
		if (!((keep >> c) & 1) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0) {
			if (errno == EINVAL && c > 0)
				break;
			return err_sys(err, "capabilities: cannot clear the bounding set");
		}
	capng_clear(CAPNG_SELECT_AMBIENT);
	if ((rc = capng_apply(CAPNG_SELECT_AMBIENT)) < 0)
		return err_set(err, EPERM, "capabilities: cannot clear the ambient set (%d)", rc);
	capng_clear(CAPNG_SELECT_CAPS);
	for (unsigned c = 0; c < 64; c++)
		if (((keep >> c) & 1) && capng_update(CAPNG_ADD, CAPNG_EFFECTIVE | CAPNG_PERMITTED, c) < 0)
			return err_set(err, EINVAL, "capabilities: cannot keep capability %u", c);
	if ((rc = capng_apply(CAPNG_SELECT_CAPS)) < 0)
		return err_set(err, EPERM, "capabilities: cannot clear the process sets (%d)", rc);
	return 0;
}

/* Reads the sets back from the kernel, with syscalls: a silent partial
 * drop must not pass. PR_CAPBSET_READ fails past the last capability. The
 * ambient set needs no read of its own: the kernel keeps it a subset of
 * both the permitted and the inheritable set, and the latter is empty. */
static int verify(uint64_t keep, int bounding, struct sbx_err *err)
{
	struct __user_cap_data_struct d[2];

	if (read_sets(d) < 0)
		return err_sys(err, "capabilities: cannot read them back");
	for (int i = 0; i < 2; i++) {
		uint32_t want = (uint32_t)(keep >> (32 * i));
		if (d[i].effective != want || d[i].permitted != want || d[i].inheritable)
			return err_set(err, EPERM, "capabilities: some remain after dropping");
	}
	for (int c = 0;; c++) {
		int in_bounds = prctl(PR_CAPBSET_READ, c, 0, 0, 0);
		if (in_bounds < 0)
			return c > 0 ? 0 : err_sys(err, "capabilities: cannot read the bounding set");
		if (bounding && in_bounds != (int)((keep >> c) & 1))
			return err_set(err, EPERM, "capabilities: the bounding set holds more than it should");
	}
}

static int keep_only(uint64_t keep, struct sbx_err *err)
{
	struct __user_cap_data_struct d[2];

	if (read_sets(d) < 0)
		return err_sys(err, "capabilities: cannot read them");
	if (raise_setpcap(d, err) < 0)
		return -1;
	int bounding = has(d, CAP_SETPCAP, 0);
	if (drop_sets(keep, bounding, err) < 0 || verify(keep, bounding, err) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(err, "capabilities: cannot set no_new_privs");
	return 0;
}

int caps_drop_all(struct sbx_err *err)
{
	return keep_only(0, err);
}

int caps_keep_only(const unsigned *keep, size_t n, struct sbx_err *err)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < n; i++) {
		if (keep[i] > CAP_LAST_CAP)
			return err_set(err, EINVAL, "capabilities: no capability %u", keep[i]);
		mask |= 1ULL << keep[i];
	}
	return keep_only(mask, err);
}
