/* doctor.c - `sbxrun doctor`: what this machine's kernel and setup offer, read
 * and tried for real (a user namespace, an overlay inside it), one line each,
 * with a hint where something is missing. Exits 0 only when a sandbox can be
 * made (user + mount namespace + overlay); else 125 with the reason. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <pwd.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "base/apparmor.h"
#include "base/policy.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "cmd/commands.h"
#include "sandbox/cgroup.h"
#include "sandbox/fuselayer.h"
#include "sandbox/limits.h"
#include "sandbox/scope.h"
#include "sandbox/landlock.h"
#include "sandbox/tier.h"
#include "sandbox/userns.h"

static void line(const char *what, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void line(const char *what, const char *fmt, ...)
{
	va_list ap;

	printf("%-20s ", what);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void hint(const char *s)
{
	printf("%-20s hint: %s\n", "", s);
}

static int slurp(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t r = 0;

	while (fd >= 0 && n + 1 < size && (r = read(fd, buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	if (fd >= 0)
		close(fd);
	buf[n] = '\0';
	return fd < 0 || r < 0 ? -1 : 0;
}

/* A sysctl's value, or -1 when the kernel has no such sysctl. */
static long sysctl_long(const char *path)
{
	char buf[64];

	if (slurp(path, buf, sizeof(buf)) < 0 || !buf[0])
		return -1;
	return strtol(buf, NULL, 10);
}

static int check_kernel(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	uname(&u);
	sscanf(u.release, "%d.%d", &major, &minor);
	if (major > 5 || (major == 5 && minor >= 11)) {
		line("kernel", "ok: %s", u.release);
		return 1;
	}
	line("kernel", "missing: %s is older than 5.11 (no overlayfs in user namespaces)", u.release);
	hint("upgrade to Linux 5.11 or newer");
	return 0;
}

static void check_userns_sysctls(int userns_ok)
{
	long clone = sysctl_long("/proc/sys/kernel/unprivileged_userns_clone");
	long max = sysctl_long("/proc/sys/user/max_user_namespaces");
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	long aa = rootfd < 0 ? -1 : aa_restrict_value(rootfd);
	char fix[512];

	if (clone < 0)
		line("userns_clone", "ok: kernel.unprivileged_userns_clone not present (not restricted)");
	else if (clone == 0) {
		line("userns_clone", "missing: kernel.unprivileged_userns_clone = 0");
		hint("sysctl -w kernel.unprivileged_userns_clone=1 (and in /etc/sysctl.d/ to keep it)");
	} else
		line("userns_clone", "ok: kernel.unprivileged_userns_clone = %ld", clone);
	if (max == 0) {
		line("max_user_namespaces", "missing: user.max_user_namespaces = 0");
		hint("sysctl -w user.max_user_namespaces=15000 (and in /etc/sysctl.d/ to keep it)");
	} else
		line("max_user_namespaces", "ok: user.max_user_namespaces = %ld", max);
	if (aa > 0 && userns_ok)
		line("apparmor_userns", "ok: kernel.apparmor_restrict_unprivileged_userns = %ld, but an "
		     "AppArmor profile lets sbxrun make user namespaces", aa);
	else if (aa > 0) {
		line("apparmor_userns", "missing: kernel.apparmor_restrict_unprivileged_userns = %ld", aa);
		if (aa_userns_hint_self(fix, sizeof(fix)))
			hint(fix);
	} else
		line("apparmor_userns", "ok: %s", aa < 0 ? "no AppArmor user namespace restriction"
							 : "kernel.apparmor_restrict_unprivileged_userns = 0");
}

/* What the probe child managed, as bits of its exit status. */
enum { P_USERNS = 1, P_MNTNS = 2, P_TMPFS = 4, P_XATTR = 8, P_OVL_TMPFS = 16, P_OVL_DISK = 32,
       P_FUSE = 64, P_UCOUNTS = 128 };

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	int r = fd < 0 ? -1 : (int)write(fd, s, strlen(s));

	if (fd >= 0)
		close(fd);
	return r < 0 ? -1 : 0;
}

static int try_overlay(const char *base)
{
	char l[512], u[512], w[512], m[512], opts[2200], f[600];

	snprintf(l, sizeof(l), "%s/l", base);
	snprintf(u, sizeof(u), "%s/u", base);
	snprintf(w, sizeof(w), "%s/w", base);
	snprintf(m, sizeof(m), "%s/m", base);
	if (mkdir(l, 0755) < 0 || mkdir(u, 0755) < 0 || mkdir(w, 0755) < 0 || mkdir(m, 0755) < 0)
		return 0;
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s,userxattr", l, u, w);
	if (mount("overlay", m, "overlay", 0, opts) < 0)
		return 0;
	snprintf(f, sizeof(f), "%s/probe", m);
	int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return 0;
	close(fd);
	umount2(m, MNT_DETACH);
	return 1;
}

/* In a forked child: a user + mount namespace, a tmpfs, user xattrs on it, an
 * overlay with userxattr on the tmpfs and on disk, and without those xattrs
 * a FUSE mount as sbxrun makes one for fuse-overlayfs. Never returns. */
static __attribute__((noreturn)) void probe_child(const char *tmpdir, const char *diskdir)
{
	char map[64], f[600];
	int got = 0;
	unsigned id = getuid(), gid = getgid();

	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		_exit(0);
	got |= P_USERNS | P_MNTNS;
	/* as the sandbox's child does (userns.c): a count of the namespace's own */
	if (write_file("/proc/sys/user/max_inotify_instances", "1") == 0)
		got |= P_UCOUNTS;
	snprintf(map, sizeof(map), "0 %u 1", id);
	write_file("/proc/self/setgroups", "deny");
	write_file("/proc/self/uid_map", map);
	snprintf(map, sizeof(map), "0 %u 1", gid);
	write_file("/proc/self/gid_map", map);
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		_exit(got);
	if (try_overlay(diskdir))
		got |= P_OVL_DISK;
	if (mount("doctor", tmpdir, "tmpfs", 0, "size=1m") < 0)
		_exit(got);
	got |= P_TMPFS;
	snprintf(f, sizeof(f), "%s/x", tmpdir);
	int fd = open(f, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0 && fsetxattr(fd, "user.sbxrun", "1", 1, 0) == 0)
		got |= P_XATTR;
	if (fd >= 0)
		close(fd);
	/* without user xattrs on tmpfs the overlay mounts but degrades (and the
	 * kernel logs "failed to set xattr on upper"): not tried */
	if ((got & P_XATTR) && try_overlay(tmpdir))
		got |= P_OVL_TMPFS;
	/* what sbxrun does for fuse-overlayfs: a FUSE mount on an fd, in here */
	_cleanup_close_ int fuse = -1;
	snprintf(f, sizeof(f), "%s/fuse", tmpdir);
	if (!(got & P_XATTR) && mkdir(f, 0755) == 0 && (fuse = fuselayer_mount(f, &(struct sbx_err){ 0 })) >= 0)
		got |= P_FUSE;
	_exit(got);
}

static int probe_sandbox(void)
{
	char tmpdir[] = "/tmp/sbxrun-doctor-XXXXXX", diskdir[] = "/var/tmp/sbxrun-doctor-XXXXXX";
	int st = 0, got = 0;
	struct sbx_err err;

	if (!mkdtemp(tmpdir))
		return 0;
	if (!mkdtemp(diskdir))
		snprintf(diskdir, sizeof(diskdir), "%s", tmpdir);
	pid_t pid = fork();
	if (pid == 0)
		probe_child(tmpdir, diskdir);
	if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st))
		got = WEXITSTATUS(st);
	rm_rf_at(AT_FDCWD, tmpdir, &err);
	if (strcmp(diskdir, tmpdir) != 0)
		rm_rf_at(AT_FDCWD, diskdir, &err);
	return got;
}

/* Before Linux 6.6: fuse-overlayfs keeps the writable layer on tmpfs, or
 * else it goes to disk with sbxrun's walk and kill (sandbox.c, plan_fuse). */
static void report_fuse_storage(int fuse_mounts)
{
	char why[160];
	_cleanup_free_ char *bin = NULL;

	if (geteuid() == 0)
		snprintf(why, sizeof(why), "not for a root caller");
	else if ((bin = fuselayer_probe(why, sizeof(why))) && !fuse_mounts) {
		snprintf(why, sizeof(why), "a FUSE file system cannot be mounted in a user namespace");
		free(bin);
		bin = NULL;
	}
	if (bin) {
		line("storage", "ok: fuse-overlayfs on tmpfs (%s; this kernel's tmpfs cannot hold the "
		     "kernel overlay's writable layer): the disk quota is the tmpfs size, ENOSPC at the "
		     "limit; disk (a walk and a kill) where the quota exceeds a cgroup memory limit", bin);
		return;
	}
	line("storage", "fallback: disk (this kernel's tmpfs cannot hold the writable layer, and "
	     "fuse-overlayfs cannot be used: %s): the disk quota is sbxrun's accounting, which ends "
	     "the sandbox when it is passed; enforce = strict refuses it", why);
	if (geteuid() != 0)
		hint("install fuse-overlayfs (Debian: apt-get install fuse-overlayfs) for an exact quota");
}

static int report_sandbox(int got)
{
	/* made, but not even a mount in it (Ubuntu's AppArmor restriction
	 * without sbxrun's profile): run takes it as none ('tier' below) */
	int unusable = (got & P_USERNS) && !(got & (P_TMPFS | P_OVL_DISK));

	if (unusable)
		line("user namespace", "unusable: created one, but no mount in it is allowed (its id "
		     "maps or a tmpfs refused)");
	else
		line("user namespace", got & P_USERNS ? "ok: created one (with a mount namespace)"
						      : "missing: unshare(CLONE_NEWUSER|CLONE_NEWNS) failed");
	if (!(got & P_USERNS) || unusable)
		hint("see the sysctl lines above; inside a container, the container must allow it");
	/* none at all: run takes the landlock tier where Landlock is there ('tier' below) */
	if ((!(got & P_USERNS) || unusable) && landlock_abi() >= 1)
		return 1;
	line("tmpfs in userns", got & P_TMPFS ? "ok" : "missing: cannot mount a tmpfs in a user namespace");
	if (got & P_XATTR)
		line("tmpfs user xattrs", "ok");
	else {
		line("tmpfs user xattrs", "missing: user.* xattrs on tmpfs (Linux 6.6+)");
		hint("the kernel's overlay cannot keep its writable layer on tmpfs here: see 'storage'");
	}
	if (got & P_OVL_TMPFS)
		line("overlay", "ok: overlay with userxattr, upper layer on tmpfs");
	else if (got & P_OVL_DISK)
		line("overlay", "fallback: overlay with userxattr works only with the upper layer on disk "
		     "(storage = disk)");
	else {
		line("overlay", "missing: overlay with userxattr cannot be mounted in a user namespace");
		hint("needs Linux 5.11+ with overlayfs; 'modprobe overlay' if it is a module");
	}
	if (got & P_OVL_TMPFS)
		line("storage", "ok: tmpfs by default (the disk quota is the tmpfs size: ENOSPC at the "
		     "limit); disk where the quota exceeds a cgroup memory limit");
	else if (got & P_OVL_DISK)
		report_fuse_storage(got & P_FUSE);
	return (got & P_USERNS) && (got & P_MNTNS) && (got & (P_OVL_TMPFS | P_OVL_DISK));
}

/* The per-user counts a sandbox gets (sandbox/userns.c): half the host
 * user's, in its user namespace, where the kernel lets one be set. */
static void report_ucounts(int settable)
{
	struct sbx_ucounts u;

	userns_ucounts_plan(&u);
	if (!settable || u.max[0] < 0) {
		line("inotify", "fallback: the sandbox shares this user's %ld inotify instances "
		     "(user.max_inotify_instances cannot be set in a user namespace here)", u.host[0]);
		return;
	}
	line("inotify", "ok: the sandbox's user namespace gets half of this user's: %ld of %ld "
	     "inotify instances, %ld of %ld watches", u.max[0], u.host[0], u.max[1], u.host[1]);
	if (u.max[2] >= 0)
		line("fanotify", "ok: the same: %ld of %ld fanotify groups, %ld of %ld marks", u.max[2],
		     u.host[2], u.max[3], u.host[3]);
}

static void check_seccomp(void)
{
	int mode = prctl(PR_GET_SECCOMP, 0, 0, 0, 0);

	/* A NULL filter is EFAULT where filters exist and EINVAL where not. */
	errno = 0;
	if (mode >= 0)
		prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0);
	if (mode < 0 || errno == EINVAL) {
		line("seccomp", "missing: the kernel has no seccomp filters (CONFIG_SECCOMP_FILTER)");
		hint("without it the sandbox runs with 'seccomp = off' only");
	} else if (mode == 2) {
		int filters;
		tier_seccomp_mode(&filters);
		line("seccomp", "ok: filters (sbxrun already runs under %d: a container's, whose rules "
		     "decide the tier below)", filters);
	} else {
		line("seccomp", "ok: filters");
	}
}

/* What run will do, tried in a throwaway child (sandbox/tier.c): its
 * namespaces, sethostname in its fresh uts namespace, a proc of its fresh
 * pid namespace; then the tier run will use, why, and the fix. */
static unsigned check_steps(unsigned got)
{
	unsigned gave_up = 0;

	if (got & TIER_P_HOSTNAME)
		line("sethostname", "ok: in a fresh uts namespace");
	else {
		gave_up |= TIER_HOSTNAME_KEPT;
		line("sethostname", "refused in a fresh uts namespace (a container's seccomp filter): "
		     "the sandbox keeps the container's host name");
		hint("run the container with --security-opt seccomp=unconfined (podman, docker) or a "
		     "seccomp profile that allows sethostname");
	}
	if (got & TIER_P_PROC)
		line("proc", "ok: a proc of a fresh pid namespace");
	else {
		gave_up |= got & TIER_P_PROC_PID ? TIER_PROC_PID : TIER_PROC_NONE;
		line("proc", got & TIER_P_PROC_PID ? "refused, but subset=pid is allowed: the sandbox's "
		     "/proc shows its own processes only" : "refused, subset=pid too (the container "
		     "masks paths of its /proc): the sandbox's /proc holds a few machine-wide files and "
		     "no process");
		hint("run the container with --security-opt unmask=/proc/* (podman), --security-opt "
		     "systempaths=unconfined (docker), or procMount: Unmasked (Kubernetes)");
	}
	return gave_up;
}

static void check_tier(void)
{
	int errnum;
	unsigned got = tier_probe(&errnum);
	char why[512];
	struct sbx_err err = { 0 };

	if (!(got & TIER_P_MOUNT)) {
		if (got & TIER_P_USERNS) { /* as run's child finds it (contain.c) */
			err_plain(&err, EPERM, "its id maps or a mount in it: %s", strerror(EPERM));
			tier_userns_unusable(&err);
		} else {
			err_plain(&err, errnum, "unshare: %s", strerror(errnum));
			tier_no_userns(&err);
		}
		int abi = landlock_abi();
		if (abi < 1) {
			line("tier", "none: %s; and no Landlock (the landlock tier's confinement)", err.msg);
			if (err.hint[0])
				hint(err.hint);
			return;
		}
		line("tier", "landlock: %s; so run confines the command on this machine's own file "
		     "system with Landlock (ABI %d%s), seccomp and rlimits; enforce = strict and "
		     "[sandbox] tier = nested|full refuse it", err.msg, abi,
		     abi < 4 ? ": no TCP rules, --net packages refused" : abi < 6 ? ": no signal scoping" : "");
		char h[sizeof(err.hint) + 40];
		snprintf(h, sizeof(h), "%s%sor accept the landlock tier", err.hint, err.hint[0] ? "; " : "");
		hint(h);
		return;
	}
	unsigned gave_up = check_steps(got);
	if (!gave_up) {
		line("tier", "full: run makes every namespace, sets its host name and mounts its /proc");
		return;
	}
	tier_describe(gave_up, why, sizeof(why));
	line("tier", "nested: %s; enforce = strict and [sandbox] tier = full refuse it", why);
}

static void check_landlock(void)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (abi >= 1)
		line("landlock", "ok: ABI %ld", abi);
	else
		line("landlock", "missing (optional): %s", errno == EOPNOTSUPP ? "disabled at boot (lsm=)"
										: "not in this kernel");
}

/* The cgroup layout: v2, v1, or hybrid (v1 controllers plus a v2 tree). */
static void check_cgroup_version(void)
{
	_cleanup_free_ char *mi = xmalloc(65536);
	char v1[512] = "", v2[512] = "", mnt[PATH_MAX], root[PATH_MAX], file[PATH_MAX + 32];
	static const char *const ctls[] = { "memory", "pids", "cpu", "cpuset", "io", "blkio", "hugetlb" };
	if (slurp("/proc/self/mountinfo", mi, 65536) < 0)
		mi[0] = '\0';
	for (size_t i = 0; i < ARRAY_SIZE(ctls); i++)
		if (cgroup_parse_mountinfo(mi, ctls[i], mnt, root, sizeof(mnt)) == 0)
			snprintf(v1 + strlen(v1), sizeof(v1) - strlen(v1), " %s", ctls[i]);
	int has_v2 = cgroup_parse_mountinfo(mi, NULL, mnt, root, sizeof(mnt)) == 0;
	if (has_v2) {
		snprintf(file, sizeof(file), "%s/cgroup.controllers", mnt);
		FILE *f = fopen(file, "re");
		if (!f || !fgets(v2, sizeof(v2), f))
			v2[0] = '\0';
		v2[strcspn(v2, "\n")] = '\0';
		if (f)
			fclose(f);
	}
	if (has_v2 && v1[0])
		line("cgroup", "ok: hybrid (v1:%s; v2: %s)", v1, v2[0] ? v2 : "no controllers");
	else if (has_v2)
		line("cgroup", "ok: v2 (%s)", v2[0] ? v2 : "no controllers");
	else if (v1[0])
		line("cgroup", "ok: v1 (%s)", v1 + 1);
	else
		line("cgroup", "missing: no cgroup filesystem mounted");
}

static void check_delegation(const struct sbx_limits_avail *av)
{
	static const char *const names[SBX_CTL__COUNT] = { "memory", "pids", "cpu" };
	char have[64] = "", v1[64] = "";

	for (int c = 0; c < SBX_CTL__COUNT; c++) {
		if (av->v2_parent[0] && av->v2[c])
			snprintf(have + strlen(have), sizeof(have) - strlen(have), " %s", names[c]);
		if (av->v1_parent[c][0])
			snprintf(v1 + strlen(v1), sizeof(v1) - strlen(v1), " %s", names[c]);
	}
	if (have[0] && strcmp(have, " memory pids cpu"))
		line("cgroup v2 delegation", "partial: %s (%s; no %s)", av->v2_via, have + 1,
		     !av->v2[SBX_CTL_CPU] ? "cpu: --cpus falls back to CPU affinity" : "memory or pids");
	else if (have[0])
		line("cgroup v2 delegation", "ok: %s (%s)", av->v2_via, have + 1);
	else if (!strcmp(v1, " memory pids cpu"))
		line("cgroup v2 delegation", "missing: no writable cgroup v2 subtree (cgroup v1 serves instead)");
	else {
		line("cgroup v2 delegation", "missing: %s; limits fall back to rlimits",
		     av->v2_missing[0] ? av->v2_missing : "no writable cgroup v2 subtree with memory or pids");
		if (scope_systemd_running())
			hint("the user's systemd manager must be running with its bus: loginctl enable-linger "
			     "USER, or log in through a PAM session (libpam-systemd)");
		else
			hint("a v1 or hybrid machine needs systemd.unified_cgroup_hierarchy=1 at boot; "
			     "without systemd, give this user a cgroup v2 subtree with controllers enabled");
	}
	if (v1[0])
		line("cgroup v1", "ok: writable%s", v1);
	else
		line("cgroup v1", "missing: no writable v1 hierarchy for memory, pids or cpu%s",
		     geteuid() == 0 ? "" : " (only root has them here)");
}

static int has_subuid(const char *file, const char *name, unsigned id)
{
	char buf[8192], num[16];

	if (slurp(file, buf, sizeof(buf)) < 0)
		return 0;
	snprintf(num, sizeof(num), "%u", id);
	for (char *l = strtok(buf, "\n"); l; l = strtok(NULL, "\n")) {
		size_t n = strcspn(l, ":");
		if ((name && strlen(name) == n && !strncmp(l, name, n)) ||
		    (strlen(num) == n && !strncmp(l, num, n)))
			return 1;
	}
	return 0;
}

static void check_ids(void)
{
	struct passwd *pw = getpwuid(getuid());
	const char *name = pw ? pw->pw_name : NULL;
	/* both files are keyed by user name or uid */
	int sub = has_subuid("/etc/subuid", name, getuid()) && has_subuid("/etc/subgid", name, getuid());
	int helper = access("/usr/bin/newuidmap", X_OK) == 0 && access("/usr/bin/newgidmap", X_OK) == 0;

	if (sub)
		line("subuid range", "ok: %s has ranges in /etc/subuid and /etc/subgid", name ? name : "?");
	else {
		line("subuid range", "missing (optional): no range for %s in /etc/subuid and /etc/subgid",
		     name ? name : "this uid");
		hint("only needed for several users inside one sandbox: usermod --add-subuids "
		     "100000-165535 --add-subgids 100000-165535 USER");
	}
	if (helper)
		line("newuidmap", "ok: /usr/bin/newuidmap, /usr/bin/newgidmap");
	else {
		line("newuidmap", "missing (optional): newuidmap/newgidmap not installed");
		hint("only needed with a subuid range: apt-get install uidmap");
	}
}

/* Which mechanism each limit of a profile would get here. */
static void check_limits(const struct sbx_limits_avail *av)
{
	static const char *const names[SBX_LIM__COUNT] = { "memory", "pids", "cpus", "file_size",
							    "open_files" };
	static const char *const why[SBX_LIM__COUNT] = {
		"RLIMIT_DATA per process, and sbxrun sums the sandbox's memory and /dev/shm every "
		"100-250 ms and kills past the limit", "RLIMIT_NPROC in the sandbox's user namespace",
		"CPU affinity, whole CPUs", "RLIMIT_FSIZE", "RLIMIT_NOFILE" };
	struct sbx_config cfg;
	enum sbx_limit_mech mech[SBX_LIM__COUNT];
	struct sbx_err err;
	char what[64];

	config_init(&cfg);
	cfg.memory = cfg.pids = cfg.cpus_milli = cfg.file_size = cfg.open_files = 1;
	cfg.enforce = SBX_ENFORCE_BEST;
	limits_choose(&cfg, av, mech, &err);
	config_free(&cfg);
	for (int l = 0; l < SBX_LIM__COUNT; l++) {
		snprintf(what, sizeof(what), "limit %s", names[l]);
		if (mech[l] == SBX_MECH_CGROUP2 || mech[l] == SBX_MECH_CGROUP1)
			line(what, "ok: %s", limits_mech_name(mech[l]));
		else if (l >= SBX_LIM_FILE_SIZE)
			line(what, "ok: rlimit (%s)", why[l]);
		else
			line(what, "fallback: %s (%s; enforce = strict refuses it)",
			     limits_mech_name(mech[l]), why[l]);
	}
}

static void policy_line(void *arg, const char *path, const char *cap)
{
	(void)arg;
	line("policy", "%s: %s", path, cap);
}

/* The administrator's ceiling (base/policy.c): each cap, or why none holds;
 * a policy that cannot be used stops every sandbox, so it fails doctor. */
static int check_policy(void)
{
	struct sbx_policy pol;
	struct sbx_err err;

	if (policy_load(&pol, &err) < 0) {
		line("policy", "error: %s", err.msg);
		hint("the policy must be a regular file owned by root, not writable by group or "
		     "others, below directories that only root can write");
		return 0;
	}
	if (pol.n == 0)
		line("policy", "none: no %s (profiles and flags are not capped)", SBX_POLICY_PATH);
	for (size_t i = 0; i < pol.n; i++)
		line("policy", "%s: in force (%s)", pol.file[i].path,
		     strcmp(pol.file[i].path, SBX_POLICY_PATH) == 0 ? "the system's ceiling"
		     : "an extra ceiling from $" SBX_POLICY_ENV ", which can only tighten");
	policy_each_cap(&pol, policy_line, NULL);
	policy_free(&pol);
	return 1;
}

int cmd_doctor(int argc, char **argv, struct sbx_err *err)
{
	struct sbx_limits_avail av;
	struct cli_args a;
	int r = cli_parse(argc, argv, SBX_CMD_DOCTOR, NULL, &a, err), rest = a.rest;

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (rest < argc)
		return err_set(err, 0, "doctor: unexpected argument '%s'", argv[rest]);
	int kernel_ok = check_kernel();
	int got = probe_sandbox();
	/* under AppArmor's restriction unshare itself succeeds and the
	 * capabilities are what is denied: a namespace counts as usable once
	 * a mount in it worked */
	check_userns_sysctls((got & P_USERNS) && (got & (P_TMPFS | P_OVL_DISK)));
	int sandbox_ok = report_sandbox(got);
	if (got & P_USERNS)
		report_ucounts(got & P_UCOUNTS);
	check_seccomp();
	check_tier();
	check_landlock();
	check_cgroup_version();
	line("systemd", scope_systemd_running() ? "ok: manages cgroup v2; a delegated scope is asked of "
	     "it over D-Bus when sbxrun's own cgroup is not writable" : "not managing a pure cgroup v2 "
	     "hierarchy here (no scope to ask for)");
	/* the real thing: under systemd this asks for a scope, as run would */
	limits_probe(&av, 1);
	check_delegation(&av);
	check_ids();
	check_limits(&av);
	int policy_ok = check_policy();
	fflush(stdout);
	if (!policy_ok) {
		err_set(err, 0, "the policy cannot be used, so no sandbox runs (see the lines above)");
		return -1;
	}
	if (!kernel_ok || !sandbox_ok) {
		err_set(err, 0, "no sandbox can be made on this machine (see the lines above)");
		return -1;
	}
	return 0;
}
