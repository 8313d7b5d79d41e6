/* tier.c - the tier a sandbox got (tier.h): the child's fallbacks where a
 * container refuses a step, the text every front end shows for them, the
 * cause when no user namespace can be made at all, and doctor's probe of
 * the same steps. */
#define _GNU_SOURCE
#include "sandbox/tier.h"

#include <errno.h>
#include <fcntl.h>
#include <json-c/json.h>
#include <sched.h>
#include <sys/mount.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/apparmor.h"
#include "base/log.h"
#include "base/util.h"
#include "net/proxy_event.h"
#include "sandbox/landlock.h"
#include "sandbox/plan.h"

static const struct {
	unsigned bit;
	const char *what; /* what was given up, and why */
	const char *fix;  /* what gives full back */
} gave[] = {
	{ TIER_HOSTNAME_KEPT, "the container's host name kept (sethostname refused, as a "
	  "container's seccomp filter does)", "--security-opt seccomp=unconfined (podman, docker) "
	  "or a seccomp profile that allows sethostname" },
	{ TIER_PROC_PID, "/proc with subset=pid (a full proc refused: the container masks paths of "
	  "its /proc)", "--security-opt unmask=/proc/* (podman) or --security-opt "
	  "systempaths=unconfined (docker)" },
	{ TIER_PROC_NONE, "a /proc without processes (a new proc refused: the container masks "
	  "paths of its /proc)", "--security-opt unmask=/proc/* (podman) or --security-opt "
	  "systempaths=unconfined (docker)" },
	{ TIER_LANDLOCK, "no user namespace: the machine's own file system under Landlock, "
	  "read-only but a private workspace", "a container or host that allows user namespaces "
	  "(--security-opt seccomp=unconfined, or a seccomp profile that allows clone, unshare and "
	  "setns with namespace flags)" },
	{ TIER_UNUSABLE, "a user namespace was made, but its first mount was refused (AppArmor's "
	  "restriction without sbxrun's profile, or a seccomp filter)", "sbxrun's AppArmor profile "
	  "installed and loaded, or no filter that refuses mount" },
};

enum sbx_tier tier_of(unsigned gave_up)
{
	return gave_up & TIER_LANDLOCK ? SBX_TIER_LANDLOCK : gave_up ? SBX_TIER_NESTED : SBX_TIER_FULL;
}

const char *tier_name(enum sbx_tier t)
{
	return sbx_tier_names[t];
}

void tier_describe(unsigned gave_up, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(gave) && n < size; i++)
		if (gave_up & gave[i].bit)
			n += (size_t)snprintf(buf + n, size - n, "%s%s", n ? "; " : "", gave[i].what);
}

int tier_step_refused(const struct sbx_plan *plan, unsigned bit, unsigned *gave_up,
		      const char *what, struct sbx_err *err)
{
	int e = errno;

	if (e == EPERM && plan->tier_min <= SBX_TIER_NESTED) {
		*gave_up |= bit;
		return 0;
	}
	err_set(err, e, "%s", what);
	if (e != EPERM)
		return -1;
	for (size_t i = 0; i < ARRAY_SIZE(gave); i++)
		if (gave[i].bit == bit) {
			err_wrap(err, "tier full is required (%s), but this container allows only "
				 "nested (%s)", plan->tier_why, gave[i].what);
			err_hint(err, "run the container with %s, or accept [sandbox] tier = nested",
				 gave[i].fix);
		}
	return -1;
}

/* "Seccomp:" and "Seccomp_filters:" of /proc/self/status. */
int tier_seccomp_mode(int *filters)
{
	char buf[4096];
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC), mode = -1;
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	*filters = 0;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	const char *m = strstr(buf, "\nSeccomp:"), *f = strstr(buf, "\nSeccomp_filters:");
	if (m)
		mode = atoi(m + 9);
	if (f)
		*filters = atoi(f + 17);
	return mode;
}

static long sysctl_value(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/* In the order the kernel asks: the sysctls, AppArmor, then the seccomp
 * filter sbxrun itself runs under (a container's: Docker's default and
 * Kubernetes' RuntimeDefault let only CAP_SYS_ADMIN make namespaces). */
void tier_no_userns(struct sbx_err *err)
{
	char aa[512];
	int filters;

	if (sysctl_value("/proc/sys/kernel/unprivileged_userns_clone") == 0) {
		err_wrap(err, "no user namespace can be made here: kernel.unprivileged_userns_clone = 0");
		err_hint(err, "sysctl -w kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d/ to keep it)");
	} else if (sysctl_value("/proc/sys/user/max_user_namespaces") == 0) {
		err_wrap(err, "no user namespace can be made here: user.max_user_namespaces = 0");
		err_hint(err, "sysctl -w user.max_user_namespaces=15000 (and in /etc/sysctl.d/ to keep it)");
	} else if (aa_userns_hint_self(aa, sizeof(aa))) {
		err_wrap(err, "no user namespace can be made here: AppArmor restricts them");
		err_hint(err, "%s", aa);
	} else if (tier_seccomp_mode(&filters) == 2) {
		err_wrap(err, "no user namespace can be made here: the seccomp filter sbxrun runs under "
			 "refuses it (a container's, as Docker's default profile and Kubernetes' "
			 "RuntimeDefault do)");
		err_hint(err, "run the container with --security-opt seccomp=unconfined, or a seccomp "
			 "profile that allows clone, clone3, unshare and setns with namespace flags");
	} else
		err_hint(err, "user namespaces may be disabled here; run 'sbxrun doctor'");
}

void tier_userns_unusable(struct sbx_err *err)
{
	char aa[512];
	int filters;
	const char *made = "a user namespace is made here, but cannot be used";

	if (aa_userns_hint_self(aa, sizeof(aa))) {
		err_wrap(err, "%s: AppArmor restricts them (kernel.apparmor_restrict_unprivileged_userns "
			 "= 1: made without capabilities, as no profile lets sbxrun use one)", made);
		err_hint(err, "%s", aa);
	} else if (tier_seccomp_mode(&filters) == 2) {
		err_wrap(err, "%s: the seccomp filter sbxrun runs under refuses mount in it", made);
		err_hint(err, "run sbxrun without that filter, or a container with --security-opt "
			 "seccomp=unconfined or a seccomp profile that allows mount");
	} else {
		err_wrap(err, "%s", made);
		err_hint(err, "'sbxrun doctor' names what refuses it");
	}
}

int tier_landlock_accepted(const struct sbx_plan *plan, struct sbx_err *err)
{
	char hint[sizeof(err->hint)];

	if (plan->tier_min <= SBX_TIER_LANDLOCK)
		return 1;
	snprintf(hint, sizeof(hint), "%s", err->hint);
	err_wrap(err, "tier %s is required (%s), but only landlock is possible here",
		 tier_name((enum sbx_tier)plan->tier_min), plan->tier_why);
	if (strstr(plan->tier_why, "from policy"))
		err_hint(err, "%s%sthe administrator's policy requires it", hint, hint[0] ? "; " : "");
	else
		err_hint(err, "%s%sor accept [sandbox] tier = landlock (without enforce = strict)", hint,
			 hint[0] ? "; " : "");
	return 0;
}

void tier_announce(const struct sbx_plan *plan, unsigned gave_up)
{
	char why[512];
	const char *name = tier_name(tier_of(gave_up));

	tier_describe(gave_up, why, sizeof(why));
	if (plan->ll) { /* and why there is none to use, where one was made */
		landlock_describe(plan->ll, why, sizeof(why));
		if (gave_up & TIER_UNUSABLE) {
			size_t n = strlen(why);
			snprintf(why + n, sizeof(why) - n, "; ");
			n = strlen(why);
			tier_describe(TIER_UNUSABLE, why + n, sizeof(why) - n);
		}
	}
	if (plan->ll)
		log_warn("tier landlock: %s; 'sbxrun doctor' names the fix", why);
	else if (gave_up)
		log_warn("tier nested: %s; 'sbxrun doctor' names the fix", why);
	else
		log_verbose("tier full");
	if (plan->events_fd < 0)
		return;
	struct json_object *o = json_object_new_object();
	json_object_object_add(o, "tier", json_object_new_string(name));
	json_object_object_add(o, "profile", json_object_new_string(plan->profile ? plan->profile : "default"));
	if (gave_up)
		json_object_object_add(o, "why", json_object_new_string(why));
	proxy_event_write(plan->events_fd, o, "tier");
}

static void write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);

	if (fd >= 0) {
		(void)!write(fd, s, strlen(s));
		close(fd);
	}
}

/* pid 1 of the probe's pid namespace: a proc of it, then subset=pid. */
static int probe_proc(void)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return 0;
	if (mount("proc", "/proc", "proc", TIER_PROC_FLAGS, NULL) == 0)
		return TIER_P_PROC | TIER_P_PROC_PID;
	return mount("proc", "/proc", "proc", TIER_PROC_FLAGS, "subset=pid") == 0 ? TIER_P_PROC_PID : 0;
}

static int write_ok(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)strlen(s);
}

static __attribute__((noreturn)) void probe_child(uid_t uid, gid_t gid, int report)
{
	char map[64];
	int got = TIER_P_USERNS, st = 0, mapped;

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWUTS) < 0) {
		int e = errno;
		(void)!write(report, &e, sizeof(e));
		_exit(0);
	}
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)uid);
	write_str("/proc/self/setgroups", "deny");
	mapped = write_ok("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", (unsigned)gid);
	mapped &= write_ok("/proc/self/gid_map", map);
	/* as run's child: made, but usable? (its first step, contain.c) */
	if (mapped && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0)
		got |= TIER_P_MOUNT;
	else
		_exit(got);
	if (sethostname("sbxrun", 6) == 0)
		got |= TIER_P_HOSTNAME;
	pid_t pid = fork();
	if (pid == 0)
		_exit(probe_proc());
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		got |= WEXITSTATUS(st);
	_exit(got);
}

unsigned tier_probe(int *errnum)
{
	int p[2], st = 0;
	unsigned got = 0;

	*errnum = 0;
	if (pipe2(p, O_CLOEXEC) < 0)
		return 0;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		probe_child(getuid(), getgid(), p[1]);
	}
	close(p[1]);
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		got = (unsigned)WEXITSTATUS(st);
	if (read(p[0], errnum, sizeof(*errnum)) != sizeof(*errnum))
		*errnum = 0;
	close(p[0]);
	return got;
}
