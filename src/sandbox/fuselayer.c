/* fuselayer.c - the writable layer through fuse-overlayfs where the kernel's
 * overlay cannot put it on tmpfs (no user xattrs before Linux 6.6).
 *
 * The child mounts an empty FUSE file system (it must open /dev/fuse itself:
 * the kernel wants the fd's opener in the mount's user namespace) and hands
 * the fd over; the host side forks fuse-overlayfs, which serves that fd as
 * /dev/fd/3 (libfuse >= 3.3). Where it runs, and why that is safe:
 * - in the sandbox's user namespace, as the sandbox's identity (so the ids it
 *   reports and creates are the sandbox's, and it has no more than the
 *   caller already has on the host);
 * - in a private copy of the sandbox's mount namespace taken before
 *   pivot_root (which pivot_root in the sandbox does not touch), pivoted
 *   into a root of its own (fuseroot.c): a small read-only tmpfs with the
 *   image at /lower (read-only), the layer at /layer (upper and work, on the
 *   staging tmpfs), and only what loads its binary (the host's /usr, /bin,
 *   /sbin, /lib, /lib64, /etc/ld.so.cache, read-only, and /dev/null); the
 *   host's root is detached: nothing of the user's home or of the rest of
 *   the host is reachable by path;
 * - outside the sandbox's pid namespace: nothing inside can see, signal or
 *   ptrace it; the sandbox has no /dev/fuse and may not mount. It is pid 1
 *   of a pid namespace of its own, whose /proc (which fuse-overlayfs needs)
 *   shows only itself; the process the host side knows is a waiter above
 *   it, which holds nothing and ends as it ends;
 * - of the capabilities it has as the sandbox's root, only those a file
 *   server needs (owners, modes, permission checks, whiteout devices, file
 *   capabilities), by its bounding set: no CAP_SYS_ADMIN, CAP_KILL,
 *   CAP_SYS_PTRACE, CAP_NET_*, CAP_SETUID or any other;
 * - no_new_privs; of the host side's fds only the FUSE device (stdin and
 *   stdout are /dev/null, stderr too unless -v);
 * - a seccomp filter (seccomp.c, seccomp_compile_daemon): no sockets, no
 *   ptrace or process_vm_*, no mounts, new roots or namespaces, no keyring,
 *   bpf, perf, userfaultfd, io_uring, kexec or modules, and signals only to
 *   itself (the waiter, in the host's pid namespace, could otherwise reach
 *   the user's other processes), on both processes;
 * - a child of the host side with PR_SET_PDEATHSIG: it dies with the
 *   supervisor (also on kill -9), and the supervisor kills it when the
 *   sandbox ends. The FUSE mount is not allow_other: only the sandbox's
 *   host uid can use it. Its writes land on the staging tmpfs, whose size
 *   and nr_inodes are the quota. */
#define _GNU_SOURCE
#include "sandbox/fuselayer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/util.h"
#include "sandbox/fuseroot.h"
#include "sandbox/seccomp.h"
#include "sandbox/userns.h"

/* What fuse-overlayfs does as root (its fchown, mknod of whiteouts, the
 * security.capability xattr, modes and access on any owner's files); the
 * rest of its bounding set is dropped before the exec, which leaves a root
 * only what is in its bounding set. */
#define DAEMON_CAPS ((1ULL << CAP_CHOWN) | (1ULL << CAP_DAC_OVERRIDE) | (1ULL << CAP_DAC_READ_SEARCH) | \
		     (1ULL << CAP_FOWNER) | (1ULL << CAP_FSETID) | (1ULL << CAP_MKNOD) | (1ULL << CAP_SETFCAP))

static int drop_bounding_set(void)
{
	for (int c = 0; prctl(PR_CAPBSET_READ, c, 0, 0, 0) >= 0; c++)
		if (c >= 64 || (!(DAEMON_CAPS & (1ULL << c)) && prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0))
			return -1;
	return 0;
}

/* In the system's directories, never the caller's PATH: what runs inside
 * the sandbox's user namespace with its capabilities is the system's
 * fuse-overlayfs (docs/security.md, "AppArmor"). */
static char *find_in_path(const char *name)
{
	_cleanup_free_ char *copy = xstrdup("/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;

	for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		if (d[0] != '/')
			continue; /* never relative to the current directory */
		char *p = xasprintf("%s/%s", d, name);
		if (access(p, X_OK) == 0)
			return p;
		free(p);
	}
	return NULL;
}

char *fuselayer_probe(char *why, size_t size)
{
	char *bin = find_in_path("fuse-overlayfs");
	int fd;

	if (!bin) {
		snprintf(why, size, "no fuse-overlayfs in /usr/local/bin, /usr/bin or /bin");
		return NULL;
	}
	if ((fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0) {
		snprintf(why, size, "cannot open /dev/fuse: %s", strerror(errno));
		free(bin);
		return NULL;
	}
	close(fd);
	return bin;
}

int fuselayer_mount(const char *target, struct sbx_err *err)
{
	char opts[160];
	int fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return err_sys(err, "open /dev/fuse");
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=%u,group_id=%u,default_permissions",
		 fd, (unsigned)getuid(), (unsigned)getgid());
	if (mount("sbxrun", target, "fuse.sbxrun", MS_NOSUID | MS_NODEV, opts) < 0) {
		close(fd);
		return err_sys(err, "mount FUSE on '%s'", target);
	}
	return fd;
}

struct daemon_args {
	const char *bin;           /* a real path: where it is in its root (fuseroot.c) */
	const struct sbx_bpf *bpf; /* its seccomp filter, compiled before the fork */
	int userns_fd, mntns_fd, fuse_fd;
	uid_t uid;
	gid_t gid;
	pid_t parent;
};

/* The first process (the one the host side knows): it only waits for the
 * daemon, pid 1 of the new pid namespace, and ends as it ends. It holds
 * nothing but the pipe whose end tells the daemon it is gone; the daemon's
 * pivot_root moves its root too. */
static __attribute__((noreturn)) void daemon_wait(const struct daemon_args *a, pid_t pid, int alive)
{
	int status;

	if (dup2(alive, 3) < 0)
		_exit(125);
	syscall(SYS_close_range, 4, ~0U, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || seccomp_apply_daemon(a->bpf, getpid()) < 0)
		_exit(125);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			_exit(125);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* In the forked daemon: the sandbox's namespaces and identity, a pid
 * namespace of its own (so that it can have a /proc, which fuse-overlayfs
 * needs, showing no other process), a root of its own, fd 3 the FUSE
 * device, nothing else of the host side, its seccomp filter, then
 * fuse-overlayfs. Nothing here may allocate (the host side may have
 * threads); every failure is exit 125, which the supervisor reports. */
static __attribute__((noreturn)) void daemon_exec(const struct daemon_args *a)
{
	struct sbx_err err;
	int fd = fcntl(a->fuse_fd, F_DUPFD, 10), alive[2];

	/* setns clears PR_SET_PDEATHSIG; the host side may be gone by then */
	if (fd < 0 || pipe2(alive, O_CLOEXEC) < 0 || setns(a->userns_fd, CLONE_NEWUSER) < 0 ||
	    setns(a->mntns_fd, CLONE_NEWNS) < 0 || unshare(CLONE_NEWNS | CLONE_NEWPID) < 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != a->parent)
		_exit(125);
	pid_t pid = fork();
	if (pid < 0)
		_exit(125);
	if (pid > 0)
		daemon_wait(a, pid, alive[1]);
	close(alive[1]);
	/* fd 3 may be one of the namespace fds: dup2 only after they were used;
	 * the root is built while it has all capabilities in the user namespace */
	if (fuseroot_enter(a->bin) < 0 || drop_bounding_set() < 0 || userns_become(a->uid, a->gid, &err) < 0 ||
	    dup2(fd, 3) < 0)
		_exit(125);
	/* it dies with the waiter, and so with the host side (checked after
	 * the change of identity, which may clear it); no setuid program
	 * (fusermount3, sudo) gains it anything */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    poll(&(struct pollfd){ .fd = alive[0], .events = POLLIN }, 1, 0) != 0 ||
	    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		_exit(125);
	syscall(SYS_close_range, 4, ~0U, 0);
	/* the caller's terminal is not its business; its messages only with -v */
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    (sbx_log_level < SBX_LOG_VERBOSE && dup2(null, 2) < 0))
		_exit(125);
	if (seccomp_apply_daemon(a->bpf, getpid()) < 0)
		_exit(125);
	execl(fuseroot_exec_path(a->bin), "fuse-overlayfs", "-f", "-o",
	      "lowerdir=/lower,upperdir=/layer/upper,workdir=/layer/work,writeback=0,noacl",
	      "/dev/fd/3", (char *)NULL);
	_exit(127);
}

int fuselayer_spawn(const char *bin, int userns_fd, int mntns_fd, int fuse_fd, uid_t uid, gid_t gid,
		    struct sbx_fuselayer *fl, struct sbx_err *err)
{
	_cleanup_free_ char *real = realpath(bin, NULL);
	struct sbx_bpf bpf = { 0 };
	int pidfd = -1;

	if (!real)
		return err_sys(err, "fuse-overlayfs '%s'", bin);
	if (seccomp_compile_daemon(&bpf, err) < 0)
		return -1;
	struct daemon_args a = { .bin = real, .bpf = &bpf, .userns_fd = userns_fd, .mntns_fd = mntns_fd,
				 .fuse_fd = fuse_fd, .uid = uid, .gid = gid, .parent = getpid() };
	pid_t pid = (pid_t)syscall(SYS_clone3, &(struct clone_args){ .flags = CLONE_PIDFD,
				   .pidfd = (uint64_t)(uintptr_t)&pidfd, .exit_signal = SIGCHLD },
				   sizeof(struct clone_args));

	if (pid == 0)
		daemon_exec(&a);
	seccomp_bpf_free(&bpf);
	if (pid < 0)
		return err_sys(err, "start fuse-overlayfs");
	fl->pid = pid;
	fl->pidfd = pidfd;
	log_verbose("storage: fuse-overlayfs (pid %d) serves the writable layer", (int)pid);
	return 0;
}

int fuselayer_ended(const struct sbx_fuselayer *fl)
{
	siginfo_t info = { 0 };

	if (fl->pid <= 0)
		return 0;
	return waitid(P_PID, (id_t)fl->pid, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid;
}

/* After the sandbox: its mount namespace, the FUSE mount's last, is gone,
 * which aborts the FUSE connection; the daemon then ends by itself, its
 * waiter reaps it and ends. Only a daemon still there after a second is
 * ended by killing the waiter (PR_SET_PDEATHSIG takes the daemon, and the
 * reaper of orphans gets it, which may never reap). */
void fuselayer_stop(struct sbx_fuselayer *fl)
{
	if (fl->pid <= 0)
		return;
	struct pollfd p = { fl->pidfd, POLLIN, 0 };
	int r;
	while ((r = poll(&p, 1, 1000)) < 0 && errno == EINTR)
		;
	if (r <= 0) {
		log_verbose("storage: fuse-overlayfs still serving after the sandbox ended: killed");
		syscall(SYS_pidfd_send_signal, fl->pidfd, SIGKILL, NULL, 0);
	}
	while (waitpid(fl->pid, NULL, 0) < 0 && errno == EINTR)
		;
	close(fl->pidfd);
	fl->pid = 0;
	fl->pidfd = -1;
}
