/* mounts.c - the child's mount steps. Every mount point inside the image is
 * resolved below the new root's fd (openat2 RESOLVE_IN_ROOT) and mounted on
 * through that fd (a directory entered and mounted on as ".", a file as
 * /proc/self/fd/N), so a symlink planted in an image cannot redirect a
 * mount onto the host; inside the fresh /proc and /dev, which sbxrun has
 * just mounted and no image can plant in, by name (in_dir). The staging
 * area is a tmpfs over /tmp in the child's own mount namespace; overlay
 * options name it by relative paths, so no host path shows in the
 * sandbox's mountinfo. */
#define _GNU_SOURCE
#include "sandbox/mounts.h"
#include "sandbox/toolconf.h"
#include "sandbox/mountflags.h"

#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/syncmsg.h"
#include "base/util.h"
#include "sandbox/nestproc.h"
#include "sandbox/tier.h"
#include "net/dnswire.h"
#include "net/netns.h"
#include "sandbox/fuselayer.h"
#include "sandbox/env.h"
#include "sandbox/wsseed.h"

#define STAGING "/tmp"


static int openat2_in_root(int rootfd, const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)flags | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS };
	return (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
}

static void fdpath(char *buf, size_t size, int fd)
{
	snprintf(buf, size, "/proc/self/fd/%d", fd);
}

/* Splits the last component off path into dir (may be ".") and name. */
static void split_last(const char *path, char *dir, size_t size, const char **name)
{
	const char *slash = strrchr(path, '/');
	if (!slash || slash == path) {
		snprintf(dir, size, "/");
		*name = slash ? slash + 1 : path;
		return;
	}
	snprintf(dir, size, "%.*s", (int)(slash - path), path);
	*name = slash + 1;
}

int mounts_mkpath(int rootfd, const char *path, int is_dir, struct sbx_err *err)
{
	char parent[4096];
	const char *name;
	int fd = openat2_in_root(rootfd, path, O_PATH | O_NOFOLLOW | (is_dir ? O_DIRECTORY : 0));

	if (fd >= 0 || errno != ENOENT)
		return fd >= 0 ? fd : err_sys(err, "open '%s' in the sandbox", path);
	split_last(path, parent, sizeof(parent), &name);
	if (!name[0] || strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
		return err_set(err, EINVAL, "bad path '%s'", path);
	_cleanup_close_ int pfd = mounts_mkpath(rootfd, parent, 1, err);
	if (pfd < 0)
		return -1;
	if (is_dir) {
		if (mkdirat(pfd, name, 0755) < 0 && errno != EEXIST)
			return err_sys(err, "mkdir '%s' in the sandbox", path);
	} else {
		int f = openat(pfd, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (f < 0)
			return err_sys(err, "create '%s' in the sandbox", path);
		close(f);
	}
	fd = openat(pfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC | (is_dir ? O_DIRECTORY : 0));
	return fd >= 0 ? fd : err_sys(err, "open '%s' in the sandbox", path);
}

/* A directory is mounted on as ".", entered through its fd for the while
 * (mount(2) takes no directory fd; /proc/self/fd/N as the target costs a
 * walk through /proc and a magic link, about 25 us a mount here); a file
 * through /proc/self/fd. A bind's relative source names the staging area. */
static int mount_on(int rootfd, const char *dst, int is_dir, const char *src, const char *type,
		    unsigned long flags, const char *data, struct sbx_err *err)
{
	char target[64], staged[PATH_MAX];
	_cleanup_close_ int fd = mounts_mkpath(rootfd, dst, is_dir, err);

	if (fd < 0)
		return -1;
	if (!is_dir) {
		fdpath(target, sizeof(target), fd);
		if (mount(src, target, type, flags, data) < 0)
			return err_sys(err, "mount '%s' on '%s'", src ? src : type, dst);
		return 0;
	}
	const char *from = src;
	if ((flags & MS_BIND) && src[0] != '/') {
		snprintf(staged, sizeof(staged), "%s/%s", STAGING, src);
		from = staged;
	}
	_cleanup_close_ int back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (back < 0 || fchdir(fd) < 0)
		return err_sys(err, "enter '%s' to mount on it", dst);
	int r = mount(from, ".", type, flags, data), e = errno;
	if (fchdir(back) < 0)
		return err_sys(err, "go back to the directory before");
	errno = e;
	return r < 0 ? err_sys(err, "mount '%s' on '%s'", src ? src : type, dst) : 0;
}

/* A read-only remount must keep the flags the kernel locked (docs/design.md). */
static int make_readonly(int rootfd, const char *dst, int recursive, struct sbx_err *err)
{
	char target[64];
	struct statvfs sv;
	_cleanup_close_ int fd = openat2_in_root(rootfd, dst, O_PATH | O_NOFOLLOW);

	if (fd < 0)
		return err_sys(err, "open '%s'", dst);
	if (recursive) {
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
		if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE, &attr,
			    sizeof(attr)) == 0)
			return 0;
	}
	fdpath(target, sizeof(target), fd);
	if (fstatvfs(fd, &sv) < 0)
		return err_sys(err, "statvfs '%s'", dst);
	unsigned long fl = MS_BIND | MS_REMOUNT | MS_RDONLY | mountflags_locked(&sv);
	if (mount(NULL, target, NULL, fl, NULL) < 0)
		return err_sys(err, "remount '%s' read-only", dst);
	return 0;
}

/* Memory on the rlimit fallback: /dev/shm is a tmpfs of its own, of the
 * memory limit's size (a write past it gets ENOSPC), which the supervisor's
 * accountant finds by that size and counts as memory (memacct.c). Under a
 * cgroup its pages are charged to the sandbox anyway. */
static int setup_shm(const struct sbx_plan *plan, struct sbx_err *err)
{
	char opts[128];
	uint64_t inodes = plan->lim.memory / 65536;

	if (!limits_memory_accounted(&plan->lim) || !plan->lim.memory)
		return 0;
	snprintf(opts, sizeof(opts), "mode=01777,size=%" PRIu64 ",nr_inodes=%" PRIu64,
		 plan->lim.memory, inodes < 1024 ? 1024 : inodes);
	if (mount("sbxshm", "shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return err_sys(err, "mount the /dev/shm tmpfs");
	return 0;
}

/* The staging tmpfs holds the writable layer, the workspace and /dev/shm, so
 * one size (the disk quota) bounds all they can hold. */
static int setup_staging(const struct sbx_plan *plan, struct sbx_mount_src *ms,
			 struct sbx_err *err)
{
	char opts[128];
	uint64_t inodes = plan->disk ? plan->disk / 8192 : 0;

	if (plan->storage == SBX_STORAGE_TMPFS && plan->disk)
		snprintf(opts, sizeof(opts), "mode=0755,size=%" PRIu64 ",nr_inodes=%" PRIu64,
			 plan->disk, inodes < 16384 ? 16384 : inodes);
	else
		snprintf(opts, sizeof(opts), "mode=0755,size=%s", plan->disk ? "64m" : "50%");
	if (mount("sbxrun", STAGING, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
		return err_sys(err, "mount the staging tmpfs on '%s'", STAGING);
	if (chdir(STAGING) < 0)
		return err_sys(err, "chdir '%s'", STAGING);
	/* a session's snapshot reads the layer here (sandbox.h SBX_FD_STAGING) */
	if ((plan->pid1_loop || plan->ws_hook) && (ms->staging = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		return err_sys(err, "open the staging directory");
	if (mkdir("lower", 0755) < 0 || mkdir("root", 0755) < 0 || mkdir("shm", 01777) < 0 ||
	    chmod("shm", 01777) < 0)
		return err_sys(err, "staging directories");
	if (setup_shm(plan, err) < 0)
		return -1;
	if (plan->storage == SBX_STORAGE_DISK) {
		char path[64];
		fdpath(path, sizeof(path), ms->run_dir);
		if (mkdir("disk", 0755) < 0 || mount(path, "disk", NULL, MS_BIND, NULL) < 0)
			return err_sys(err, "bind the disk layer");
		return 0;
	}
	/* upper and work below one directory: fuse-overlayfs gets that one
	 * directory (fuseroot.c), as one mount, since it renames between them */
	if (mkdir("layer", 0755) < 0 || mkdir("layer/upper", 0755) < 0 ||
	    mkdir("layer/work", 0755) < 0 || mkdir("ws", 0755) < 0)
		return err_sys(err, "staging directories");
	return 0;
}

/* fuse-overlayfs (fuselayer.c) serves the root; the host side starts it. */
static int setup_fuse_root(int sync, struct sbx_err *err)
{
	int fds[3] = { -1, -1, -1 };
	int r = -1;

	if ((fds[0] = fuselayer_mount("root", err)) < 0)
		return -1;
	fds[1] = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	fds[2] = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	if (fds[1] < 0 || fds[2] < 0)
		err_sys(err, "open the namespaces for fuse-overlayfs");
	else if (msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_FUSE }, fds, 3) < 0)
		err_sys(err, "hand the FUSE device over");
	else
		r = 0;
	for (int i = 0; i < 3; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return r;
}

/* lowerdir: the snapshot's layers of a fork (top first), then the image,
 * each by its fd's path, which shows as /proc/self/fd/N, never as a host
 * path. */
static int overlay_opts(const struct sbx_plan *plan, const struct sbx_mount_src *ms, char *opts,
			size_t size, struct sbx_err *err)
{
	size_t n = (size_t)snprintf(opts, size, "lowerdir=");

	for (size_t i = 0; i < plan->nsnaps && n < size; i++)
		n += (size_t)snprintf(opts + n, size - n, "/proc/self/fd/%d:", ms->snaps[i]);
	if (n < size)
		n += (size_t)snprintf(opts + n, size - n, "/proc/self/fd/%d,%s,userxattr", ms->lower,
				      plan->storage == SBX_STORAGE_DISK ? "upperdir=disk/upper,workdir=disk/work"
									: "upperdir=layer/upper,workdir=layer/work");
	return n < size ? 0 : err_set(err, E2BIG, "overlay options: too many layers");
}

static int setup_overlay(const struct sbx_plan *plan, const struct sbx_mount_src *ms, int sync,
			 struct sbx_err *err)
{
	char path[64], opts[1024];

	fdpath(path, sizeof(path), ms->lower);
	/* fuse-overlayfs finds the image at /tmp/lower in its copy of this
	 * mount namespace */
	if (plan->fuse_bin) {
		if (mount(path, "lower", NULL, MS_BIND | MS_REC, NULL) < 0)
			return err_sys(err, "bind the image");
		return setup_fuse_root(sync, err);
	}
	if (overlay_opts(plan, ms, opts, sizeof(opts), err) < 0)
		return -1;
	if (mount("overlay", "root", "overlay", MS_NOSUID | MS_NODEV, opts) < 0) {
		err_sys(err, "mount the overlay root");
		err_hint(err, "overlayfs in a user namespace needs Linux 5.11 (see 'sbxrun doctor')");
		return -1;
	}
	return 0;
}

/* Runs fn with the current directory at dir, then goes back, so that fn
 * mounts on names relative to dir (see mount_on). Only for directories
 * sbxrun just mounted itself (the fresh /proc, /dev), whose names no image
 * can plant. */
static int in_dir(int dir, int (*fn)(int dir, void *arg, struct sbx_err *err), void *arg,
		  struct sbx_err *err)
{
	_cleanup_close_ int back = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (back < 0 || fchdir(dir) < 0)
		return err_sys(err, "enter a directory to mount in");
	int r = fn(dir, arg, err);
	if (fchdir(back) < 0)
		return err_sys(err, "go back to the directory before");
	return r;
}

/* The host's device nodes bound onto files made in the fresh /dev (the
 * current directory). */
static int dev_nodes(int devfs, void *arg, struct sbx_err *err)
{
	static const char *const nodes[] = { "null", "zero", "full", "random", "urandom", "tty" };
	char src[64];

	(void)arg;
	for (size_t i = 0; i < ARRAY_SIZE(nodes); i++) {
		snprintf(src, sizeof(src), "/dev/%s", nodes[i]);
		if (mknodat(devfs, nodes[i], S_IFREG | 0644, 0) < 0 ||
		    mount(src, nodes[i], NULL, MS_BIND, NULL) < 0)
			return err_sys(err, "mount '%s' on '%s'", src, src);
	}
	return 0;
}

static int setup_dev(int rootfd, struct sbx_err *err)
{
	static const char *const links[][2] = {
		{ "ptmx", "pts/ptmx" }, { "fd", "/proc/self/fd" }, { "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" }, { "stderr", "/proc/self/fd/2" },
	};
	if (mount_on(rootfd, "/dev", 1, "sbxdev", "tmpfs", MS_NOSUID | MS_NOEXEC,
		     "mode=0755,size=64k,nr_inodes=64", err) < 0)
		return -1;
	/* the tmpfs is new and ours: its nodes are made and mounted on by
	 * name relative to it, no walk from the root, no /proc/self/fd */
	_cleanup_close_ int devfs = openat2_in_root(rootfd, "/dev", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	if (devfs < 0)
		return err_sys(err, "open /dev");
	if (in_dir(devfs, dev_nodes, NULL, err) < 0)
		return -1;
	if (mount_on(rootfd, "/dev/pts", 1, "devpts", "devpts", MS_NOSUID | MS_NOEXEC,
		     "newinstance,ptmxmode=0666,mode=0620", err) < 0)
		return -1;
	if (mount_on(rootfd, "/dev/shm", 1, "shm", NULL, MS_BIND, NULL, err) < 0)
		return -1;
	_cleanup_close_ int dev = openat2_in_root(rootfd, "/dev", O_PATH | O_DIRECTORY);
	for (size_t i = 0; dev >= 0 && i < ARRAY_SIZE(links); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			return err_sys(err, "symlink /dev/%s", links[i][0]);
	return 0;
}

/* An empty read-only directory over dst. The first is a tmpfs (read-only
 * as a file system, so no bind of it can be written either), the others
 * bind that one: one superblock to make and to take down, not one each. */
static int mask_dir(int rootfd, const char *dst, int *empty, struct sbx_err *err)
{
	char target[64], src[64];
	_cleanup_close_ int fd = openat2_in_root(rootfd, dst, O_PATH | O_DIRECTORY | O_NOFOLLOW);

	if (fd < 0)
		return 0;
	fdpath(target, sizeof(target), fd);
	if (*empty >= 0) {
		fdpath(src, sizeof(src), *empty);
		if (mount(src, target, NULL, MS_BIND, NULL) < 0)
			return err_sys(err, "mount an empty directory on '%s'", dst);
		return 0;
	}
	if (mount("sbxmask", target, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "size=0,nr_inodes=1,mode=0555") < 0)
		return err_sys(err, "mount 'tmpfs' on '%s'", dst);
	if ((*empty = openat2_in_root(rootfd, dst, O_PATH | O_DIRECTORY | O_NOFOLLOW)) < 0)
		return err_sys(err, "open '%s'", dst);
	return 0;
}

/* The masks below /proc, in the fresh /proc as the current directory. A
 * name that is missing (ENOENT) or not of the kind its list expects
 * (ENOTDIR: a file mask on a directory) is skipped, as before. */
static int proc_masks(int proc, void *arg, struct sbx_err *err)
{
	static const char *const hide_files[] = {
		"kcore", "keys", "key-users", "timer_list", "sched_debug", "latency_stats",
		"kallsyms", "kpagecount", "kpageflags", "kpagecgroup", "config.gz",
		"vmallocinfo", "pagetypeinfo",
		/* Host activity, counted host-wide and live, a side channel
		 * (keystroke timing shows in interrupt counts): interrupts and
		 * softirqs per CPU and device, the scheduler's per-CPU counters,
		 * every host disk's I/O, the free pages per zone and order, and
		 * lock contention. No everyday tool needs them. Kept, since ps,
		 * top, free, uptime and Python's os/psutil read them: stat (its
		 * intr and softirq lines still sum interrupts, a coarser form of
		 * the same), meminfo, uptime, loadavg, vmstat (vmstat, psutil's
		 * swap figures), cpuinfo. */
		"interrupts", "softirqs", "schedstat", "diskstats", "zoneinfo", "buddyinfo",
		"lock_stat",
	};
	/* pressure: the host's CPU, memory and I/O stall figures (PSI), the
	 * same kind of live host activity; read by oomd-like daemons only */
	static const char *const hide_dirs[] = { "acpi", "scsi", "asound", "driver", "pressure" };
	static const char *const readonly[] = { "sys", "irq", "bus", "fs" };
	/* Not masked with /dev/null (a device node: opening it for writing
	 * succeeds, on some kernels even on a read-only mount), but bound onto
	 * itself read-only, so that any open for writing fails with EROFS. */
	static const char *const readonly_files[] = { "sysrq-trigger" };
	int *empty = arg;
	const char *first = NULL;

	for (size_t i = 0; i < ARRAY_SIZE(hide_files); i++)
		if (mount("/dev/null", hide_files[i], NULL, MS_BIND, NULL) < 0 &&
		    errno != ENOENT && errno != ENOTDIR)
			return err_sys(err, "mount '/dev/null' on '/proc/%s'", hide_files[i]);
	/* an empty read-only tmpfs on the first directory, the others bind it */
	for (size_t i = 0; i < ARRAY_SIZE(hide_dirs); i++) {
		int r = first ? mount(first, hide_dirs[i], NULL, MS_BIND, NULL)
			      : mount("sbxmask", hide_dirs[i], "tmpfs",
				      MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
				      "size=0,nr_inodes=1,mode=0555");
		if (r < 0 && errno != ENOENT && errno != ENOTDIR)
			return err_sys(err, "mount an empty directory on '/proc/%s'", hide_dirs[i]);
		if (r == 0 && !first)
			first = hide_dirs[i];
	}
	if (first && (*empty = openat2_in_root(proc, first, O_PATH | O_DIRECTORY | O_NOFOLLOW)) < 0)
		return err_sys(err, "open '/proc/%s'", first);
	for (size_t i = 0; i < ARRAY_SIZE(readonly); i++) {
		struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
		if (mount(readonly[i], readonly[i], NULL, MS_BIND | MS_REC, NULL) < 0) {
			if (errno == ENOENT || errno == ENOTDIR)
				continue;
			return err_sys(err, "bind '/proc/%s'", readonly[i]);
		}
		if (syscall(SYS_mount_setattr, proc, readonly[i], AT_RECURSIVE, &attr, sizeof(attr)) < 0 &&
		    make_readonly(proc, readonly[i], 1, err) < 0)
			return err_wrap(err, "/proc/%s", readonly[i]);
	}
	for (size_t i = 0; i < ARRAY_SIZE(readonly_files); i++) {
		struct stat st;
		if (fstatat(proc, readonly_files[i], &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode))
			continue;
		if (mount(readonly_files[i], readonly_files[i], NULL, MS_BIND, NULL) < 0)
			return err_sys(err, "bind '/proc/%s'", readonly_files[i]);
		if (make_readonly(proc, readonly_files[i], 0, err) < 0)
			return err_wrap(err, "/proc/%s", readonly_files[i]);
	}
	return 0;
}

/* A proc of the sandbox's pid namespace; where a container's masked /proc
 * makes the kernel refuse it, the nested tier's: subset=pid, else no proc
 * of its own (nestproc.c; at_setup: the container's /proc is still at
 * /proc), else a session command keeps the session's (sandbox/tier.h). */
static int mount_proc(const struct sbx_plan *plan, int rootfd, int at_setup, unsigned *gave_up,
		      struct sbx_err *err)
{
	if (mount_on(rootfd, "/proc", 1, "proc", "proc", TIER_PROC_FLAGS, NULL, err) == 0)
		return 0;
	errno = err->errnum;
	if (tier_step_refused(plan, TIER_PROC_PID, gave_up, "mount 'proc' on '/proc'", err) < 0)
		return -1;
	if (mount_on(rootfd, "/proc", 1, "proc", "proc", TIER_PROC_FLAGS, "subset=pid", err) == 0)
		return 0;
	if (err->errnum != EPERM)
		return -1;
	*gave_up = (*gave_up & ~(unsigned)TIER_PROC_PID) | TIER_PROC_NONE;
	return at_setup ? nestproc_files(rootfd, err) : 1;
}

static int setup_proc(const struct sbx_plan *plan, int rootfd, int at_setup, unsigned *gave_up,
		      int *empty, struct sbx_err *err)
{
	int r = mount_proc(plan, rootfd, at_setup, gave_up, err);

	if (r < 0 || (*gave_up & TIER_PROC_NONE))
		return r < 0 ? -1 : 0;
	/* names in the /proc just mounted, found relative to it: it is ours,
	 * nothing of the image is in it */
	_cleanup_close_ int proc = openat2_in_root(rootfd, "/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW);
	if (proc < 0)
		return err_sys(err, "open /proc");
	return in_dir(proc, proc_masks, empty, err);
}

static int setup_binds(const struct sbx_plan *plan, const struct sbx_mount_src *ms, int rootfd,
		       struct sbx_err *err)
{
	for (size_t i = 0; i < plan->nbinds; i++) {
		const struct sbx_plan_bind *b = &plan->binds[i];
		char path[64];
		fdpath(path, sizeof(path), ms->binds[i]);
		if (mount_on(rootfd, b->dst, b->is_dir, path, NULL, MS_BIND | MS_REC, NULL, err) < 0)
			return err_wrap(err, "--bind '%s'", b->dst);
		if (!b->rw && make_readonly(rootfd, b->dst, 1, err) < 0)
			return err_wrap(err, "--bind '%s'", b->dst);
	}
	return 0;
}

/* apt cannot drop to _apt in a one-uid namespace: tell it to stay root;
 * with packages egress, send it through the proxy. */
static int write_apt_conf(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	char text[1024];
	int n = snprintf(text, sizeof(text), "// written by sbxrun at run time\n%s",
			 plan->uid_in == 0 ? "APT::Sandbox::User \"root\";\n" : "");
	_cleanup_close_ int dir = openat2_in_root(rootfd, "/etc/apt/apt.conf.d", O_PATH | O_DIRECTORY);

	if (dir < 0)
		return 0;
	if (plan->net.proxy)
		n += snprintf(text + n, sizeof(text) - (size_t)n,
			      "Acquire::http::Proxy \"%s/\";\nAcquire::https::Proxy \"%s/\";\n",
			      SBX_PROXY_URL, SBX_PROXY_URL);
	if (plan->net.ca_file)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "Acquire::https::CaInfo \"%s\";\n",
			      SBX_CA_INSIDE);
	_cleanup_close_ int fd = openat(dir, "00sbxrun-sandbox",
					O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0 || write_all(fd, text, (size_t)n) < 0)
		return err_sys(err, "write /etc/apt/apt.conf.d/00sbxrun-sandbox");
	return 0;
}

/* A file made on the staging tmpfs and bound onto dst: the image is never
 * written, and the file goes when the sandbox does. */
static int bind_text(int rootfd, const char *dst, const char *name, const char *text, int rw,
		     struct sbx_err *err)
{
	_cleanup_close_ int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);

	if (fd < 0 || write_all(fd, text, strlen(text)) < 0)
		return err_sys(err, "write '%s' for '%s'", name, dst);
	if (mount_on(rootfd, dst, 0, name, NULL, MS_BIND, NULL, err) < 0 ||
	    (!rw && make_readonly(rootfd, dst, 0, err) < 0))
		return -1;
	return 0;
}

#define WRITTEN_BY "# written by sbxrun"

/* /etc/hosts when the image has none (mmdebstrap's images have none), as
 * container engines write it. */
static int setup_hosts(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	char text[512];
	_cleanup_close_ int hosts = openat2_in_root(rootfd, "/etc/hosts", O_PATH | O_NOFOLLOW);

	if (hosts >= 0)
		return 0;
	snprintf(text, sizeof(text), WRITTEN_BY ": the image has no /etc/hosts\n"
		 "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n"
		 "127.0.1.1\t%s\n", plan->hostname);
	return bind_text(rootfd, "/etc/hosts", "hosts", text, 1, err) < 0 ? err_wrap(err, "/etc/hosts") : 0;
}

/* Full egress keeps the image's resolv.conf, unless the image has none or
 * has the stub's (a session exported under none or packages): then the
 * host's, as the sandbox uses the host's network. */
static int full_resolv_conf(int rootfd, struct sbx_err *err)
{
	char text[8192] = "";
	_cleanup_close_ int own = openat2_in_root(rootfd, "/etc/resolv.conf", O_RDONLY | O_NOFOLLOW);
	_cleanup_close_ int host = -1;
	ssize_t n = own >= 0 ? read(own, text, sizeof(WRITTEN_BY) - 1) : 0;

	if (own >= 0 && (n != sizeof(WRITTEN_BY) - 1 || memcmp(text, WRITTEN_BY, (size_t)n) != 0))
		return 0;
	if (own < 0 && errno != ENOENT)
		return 0; /* a symlink or something odd: the image's business */
	host = open("/etc/resolv.conf", O_RDONLY | O_CLOEXEC);
	n = host >= 0 ? read(host, text, sizeof(text) - 1) : -1;
	if (n <= 0)
		return 0;
	text[n] = '\0';
	return bind_text(rootfd, "/etc/resolv.conf", "resolv.conf", text, 0, err) < 0
		? err_wrap(err, "/etc/resolv.conf") : 0;
}

/* /etc/resolv.conf naming the DNS stub, unless the sandbox shares the
 * host's network. */
static int setup_resolv_conf(const struct sbx_plan *plan, int rootfd, struct sbx_err *err)
{
	char text[512];
	struct stat st;
	_cleanup_close_ int resolv = openat2_in_root(rootfd, "/etc/resolv.conf", O_PATH | O_NOFOLLOW);

	if (!plan->net.dns_stub)
		return full_resolv_conf(rootfd, err);
	/* a symlink (to systemd-resolved's file, say) cannot be mounted on:
	 * it is removed in the writable layer, the image keeps it */
	if (resolv >= 0 && fstat(resolv, &st) == 0 && S_ISLNK(st.st_mode)) {
		_cleanup_close_ int etc = openat2_in_root(rootfd, "/etc", O_RDONLY | O_DIRECTORY);
		if (etc < 0 || unlinkat(etc, "resolv.conf", 0) < 0)
			return err_sys(err, "replace the image's /etc/resolv.conf symlink");
	}
	snprintf(text, sizeof(text), WRITTEN_BY ": names are answered inside the sandbox, with\n"
		 "# addresses in %s and %s, which have no route\nnameserver %s\n",
		 DNSWIRE_NET4, DNSWIRE_NET6, SBX_DNS_ADDR);
	return bind_text(rootfd, "/etc/resolv.conf", "resolv.conf", text, 0, err) < 0
		? err_wrap(err, "/etc/resolv.conf") : 0;
}

/* What the image holds at the workspace path starts the fresh workspace,
 * which would otherwise hide it (an exported session brings its work back). */
static int seed_workspace(int rootfd, const char *workspace, const char *ws, struct sbx_err *err)
{
	struct open_how how = { .flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
				.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS };
	_cleanup_close_ int src = (int)syscall(SYS_openat2, rootfd, workspace, &how, sizeof(how));
	_cleanup_close_ int dst = open(ws, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (src < 0 || dst < 0)
		return err_sys(err, "workspace from the image: open '%s'", src < 0 ? workspace : ws);
	if (wsseed_copy(src, dst, err) < 0) {
		if (err->errnum == ENOSPC || err->errnum == EDQUOT)
			err_hint(err, "the image's workspace content does not fit in the disk quota: raise --disk");
		return -1;
	}
	return 0;
}

/* A root caller's DIR comes idmapped (idmap.h), as a detached mount: the
 * overlay takes a lower layer only from a mount of its own namespace, so
 * it is attached in the staging area first, and detached again once the
 * overlay holds its own clone of it. */
#define PROJECT_LOWER "project"

static int attach_project(const struct sbx_mount_src *ms, char *lower, size_t size,
			  struct sbx_err *err)
{
	if (!ms->project_idmapped) {
		fdpath(lower, size, ms->project);
		return 0;
	}
	if (mkdir(PROJECT_LOWER, 0700) < 0 ||
	    syscall(SYS_move_mount, ms->project, "", AT_FDCWD, PROJECT_LOWER, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return err_sys(err, "attach the project's idmapped mount");
	snprintf(lower, size, "%s/%s", STAGING, PROJECT_LOWER); /* mount_on enters the target */
	return 0;
}

/* --project: an overlay at the workspace whose lower layer is DIR (the
 * kernel's overlay never writes a lower layer) and whose upper and work are
 * the change set's, on the host's disk, where they stay after the run. */
static int setup_project(const struct sbx_plan *plan, const struct sbx_mount_src *ms, int rootfd,
			 struct sbx_err *err)
{
	char opts[256], lower[64];

	if (attach_project(ms, lower, sizeof(lower), err) < 0)
		return -1;
	snprintf(opts, sizeof(opts),
		 "lowerdir=%s,upperdir=/proc/self/fd/%d/upper,workdir=/proc/self/fd/%d/work,userxattr",
		 lower, ms->project_layer, ms->project_layer);
	if (mount_on(rootfd, plan->workspace, 1, "overlay", "overlay", MS_NOSUID | MS_NODEV,
		     opts, err) < 0)
		return -1;
	if (ms->project_idmapped && umount2(PROJECT_LOWER, MNT_DETACH) < 0)
		return err_sys(err, "detach the project's idmapped mount");
	return 0;
}

static int setup_inside(const struct sbx_plan *plan, struct sbx_mount_src *ms, int rootfd,
			struct sbx_err *err)
{
	_cleanup_close_ int empty = -1;

	if (setup_proc(plan, rootfd, 1, &ms->gave_up, &empty, err) < 0 || setup_dev(rootfd, err) < 0 ||
	    mask_dir(rootfd, "/sys", &empty, err) < 0)
		return -1;
	if (plan->workspace && plan->project.src) {
		if (setup_project(plan, ms, rootfd, err) < 0)
			return err_wrap(err, "--project");
	} else if (plan->workspace && !plan->nsnaps) {
		const char *ws = plan->storage == SBX_STORAGE_DISK ? "disk/ws" : "ws";
		if (plan->ws_seed && seed_workspace(rootfd, plan->workspace, ws, err) < 0)
			return -1;
		if (mount_on(rootfd, plan->workspace, 1, ws, NULL, MS_BIND, NULL, err) < 0)
			return err_wrap(err, "workspace");
	}
	if (setup_binds(plan, ms, rootfd, err) < 0 || write_apt_conf(plan, rootfd, err) < 0 ||
	    toolconf_write(plan, rootfd, err) < 0 ||
	    setup_hosts(plan, rootfd, err) < 0 || setup_resolv_conf(plan, rootfd, err) < 0)
		return -1;
	if (ms->ca >= 0) {
		char path[64];
		fdpath(path, sizeof(path), ms->ca);
		if (mount_on(rootfd, SBX_CA_INSIDE, 0, path, NULL, MS_BIND, NULL, err) < 0 ||
		    make_readonly(rootfd, SBX_CA_INSIDE, 0, err) < 0)
			return err_wrap(err, "the host's CA bundle");
	}
	_cleanup_close_ int wd = mounts_mkpath(rootfd, plan->workdir, 1, err);
	return wd < 0 ? err_wrap(err, "workdir") : 0;
}

static int open_source(const char *path, struct sbx_err *err)
{
	int fd = open(path, O_PATH | O_CLOEXEC);
	return fd >= 0 ? fd : err_sys(err, "open '%s'", path);
}

/* DIR as the host side found it (same device and inode), not what a
 * rename put at its path since, or as the host side handed it over
 * (idmapped, checked there); the change set's directory without a symlink
 * on the way. */
static int open_project(const struct sbx_plan *plan, int idmapped, struct sbx_mount_src *ms,
			struct sbx_err *err)
{
	struct stat st;

	ms->project_idmapped = idmapped >= 0;
	ms->project = idmapped >= 0 ? idmapped : open(plan->project.src, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (ms->project < 0 || fstat(ms->project, &st) < 0)
		return err_sys(err, "--project: open '%s'", plan->project.src);
	if (st.st_dev != plan->project.dev || st.st_ino != plan->project.ino)
		return err_set(err, 0, "--project: '%s' was replaced since sbxrun checked it",
			       plan->project.src);
	ms->project_layer = open(plan->project.layer, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return ms->project_layer < 0 ? err_sys(err, "--project: open '%s'", plan->project.layer) : 0;
}

int mounts_open_sources(const struct sbx_plan *plan, int project_fd, struct sbx_mount_src *ms,
			struct sbx_err *err)
{
	ms->lower = ms->run_dir = ms->ca = ms->project = ms->project_layer = ms->staging = -1;
	ms->project_idmapped = 0;
	/* no malloc without binds: in the forked child it copies heap pages */
	ms->binds = plan->nbinds ? xcalloc(plan->nbinds, sizeof(int)) : NULL;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return err_sys(err, "make mounts private");
	if ((ms->lower = open_source(plan->lower, err)) < 0)
		return -1;
	/* at most a handful (snapshot.h): a fork's start stays one open each */
	ms->snaps = plan->nsnaps ? xcalloc(plan->nsnaps, sizeof(int)) : NULL;
	for (size_t i = 0; i < plan->nsnaps; i++)
		if ((ms->snaps[i] = open_source(plan->snaps[i], err)) < 0)
			return err_wrap(err, "the snapshot's layer");
	if (plan->run_dir && (ms->run_dir = open_source(plan->run_dir, err)) < 0)
		return -1;
	if (plan->net.ca_file && (ms->ca = open_source(plan->net.ca_file, err)) < 0)
		return -1;
	if (plan->project.src && open_project(plan, project_fd, ms, err) < 0)
		return -1;
	for (size_t i = 0; i < plan->nbinds; i++)
		if ((ms->binds[i] = open_source(plan->binds[i].src, err)) < 0) {
			/* sandbox_plan found it: something took it away since (or it
			 * names sbxrun's own process, which the sandbox is not) */
			if (err->errnum == ENOENT)
				err_hint(err, "the source was there when sbxrun checked it and is gone now: "
					 "was it removed or renamed meanwhile?");
			return err_wrap(err, "--bind");
		}
	return 0;
}

int mounts_new_proc(const struct sbx_plan *plan, struct sbx_err *err)
{
	unsigned gave_up = 0;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return err_sys(err, "a mount namespace for the command");
	/* opened after unshare, so that it names this namespace's mounts */
	_cleanup_close_ int rootfd = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	_cleanup_close_ int empty = -1;
	return rootfd < 0 ? err_sys(err, "open /") : setup_proc(plan, rootfd, 0, &gave_up, &empty, err);
}

int mounts_setup(const struct sbx_plan *plan, struct sbx_mount_src *ms, int sync,
		 struct sbx_err *err)
{
	_cleanup_close_ int rootfd = -1;

	if (setup_staging(plan, ms, err) < 0 || setup_overlay(plan, ms, sync, err) < 0)
		return -1;
	rootfd = open("root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return err_sys(err, "open the new root");
	if (setup_inside(plan, ms, rootfd, err) < 0)
		return -1;
	if (fchdir(rootfd) < 0)
		return err_sys(err, "chdir to the new root");
	if (syscall(SYS_pivot_root, ".", ".") < 0)
		return err_sys(err, "pivot_root");
	if (umount2(".", MNT_DETACH) < 0)
		return err_sys(err, "detach the old root");
	if (chdir("/") < 0)
		return err_sys(err, "chdir /");
	return 0;
}
