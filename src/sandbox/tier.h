/* tier.h - how much of a sandbox this machine allowed (enum sbx_tier,
 * base/config.h) and why. Nothing is probed on the way to a full sandbox:
 * the child takes each step as in full, and where one is refused the way a
 * container refuses it (sethostname by its seccomp filter, a new proc
 * because its /proc has masked paths) it takes the nested step instead,
 * unless the plan requires full, and says so in a bit of gave_up, which
 * READY carries to the host side. The tier, its text, the record, the
 * events and doctor all read these bits. */
#ifndef SBX_TIER_H
#define SBX_TIER_H

#include <stddef.h>
#include <sys/mount.h>

#include "base/config.h"
#include "base/err.h"

enum {
	TIER_HOSTNAME_KEPT = 1, /* sethostname refused: the container's host name */
	TIER_PROC_PID = 2,      /* a new proc refused, proc with subset=pid taken */
	TIER_PROC_NONE = 4,     /* no proc at all: a /proc of machine-wide files only */
	TIER_LANDLOCK = 8,      /* no user namespace at all: the landlock tier (landlock.h) */
	TIER_UNUSABLE = 16,     /* with it: one was made, but not usable (tier_userns_unusable) */
};

/* The flags of every proc sbxrun mounts (run, session commands, doctor). */
#define TIER_PROC_FLAGS (MS_NOSUID | MS_NODEV | MS_NOEXEC)

struct sbx_plan;

enum sbx_tier tier_of(unsigned gave_up);
const char *tier_name(enum sbx_tier t);
/* What gave_up means, "; "-joined ("" when nothing was given up). */
void tier_describe(unsigned gave_up, char *buf, size_t size);
/* Child side, after a step failed with errno: EPERM where the plan
 * accepts nested sets bit in *gave_up and returns 0; else err (what:
 * the step) with the reason full was required and the fix, -1. */
int tier_step_refused(const struct sbx_plan *plan, unsigned bit, unsigned *gave_up,
		      const char *what, struct sbx_err *err);
/* Host side: no user namespace could be made (clone's errno in err): the
 * cause read from the machine and its fix as err's hint. */
void tier_no_userns(struct sbx_err *err);
/* Host side: the namespaces were made but are not usable (err: the uid
 * map's write or the child's first mount, refused): the cause read from
 * the machine (AppArmor's restriction without sbxrun's profile, a seccomp
 * filter) and its fix as err's hint. The run then goes on as where no user
 * namespace can be made. */
void tier_userns_unusable(struct sbx_err *err);
/* Host side, no user namespace (err from tier_no_userns): 1 when the plan
 * accepts the landlock tier; else 0, and err says which tier is required,
 * why, and the fix. */
int tier_landlock_accepted(const struct sbx_plan *plan, struct sbx_err *err);
/* Host side, the sandbox ready: below full, one line on stderr (not with
 * -q; -v says it at full too) and a "tier" event. */
void tier_announce(const struct sbx_plan *plan, unsigned gave_up);
/* The seccomp mode sbxrun runs under (/proc/self/status: 0 none, 2 a
 * filter) and the number of filters, or -1. */
int tier_seccomp_mode(int *filters);

/* What doctor tries, in a throwaway child, as the sandbox's child would. */
enum {
	TIER_P_USERNS = 1,   /* a user namespace (with mount, pid and uts) */
	TIER_P_HOSTNAME = 2, /* sethostname in its fresh uts namespace */
	TIER_P_PROC = 4,     /* a new proc of its fresh pid namespace */
	TIER_P_PROC_PID = 8, /* proc with subset=pid */
	TIER_P_MOUNT = 16,   /* its id maps written and a mount made in it: usable */
};
/* The TIER_P_ bits; *errnum: why the user namespace was refused. */
unsigned tier_probe(int *errnum);

#endif
