/* sandbox.c - one sandbox from plan to result. Read top to bottom:
 * sandbox_plan decides everything on the host side (image, identity,
 * environment, binds) before any namespace exists; sandbox_run clones the
 * child into new namespaces, writes its id maps, and supervises it; the
 * child (child_main) takes its identity, builds its filesystem, hands its
 * namespace fds to the host side and becomes pid 1. */
#define _GNU_SOURCE
#include "sandbox/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <linux/openat2.h>
#include <linux/sched.h>
#include <linux/sockios.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/log.h"
#include "base/paths.h"
#include "base/syncmsg.h"
#include "base/util.h"
#include "net/dnsstub.h"
#include "net/netns.h"
#include "net/proxy.h"
#include "sandbox/env.h"
#include "sandbox/init.h"
#include "sandbox/mounts.h"
#include "sandbox/record.h"
#include "sandbox/seccomp_cache.h"
#include "sandbox/pty.h"
#include "sandbox/supervise.h"
#include "sandbox/userns.h"
#include "sandbox/wsseed.h"

/* tmpfs gained the user xattrs that overlay's userxattr needs on its upper
 * layer in Linux 6.6; before that the writable layer must live on disk. */
static int tmpfs_has_user_xattrs(void)
{
	struct utsname u;
	int major = 0, minor = 0;
	if (uname(&u) < 0 || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return 0;
	return major > 6 || (major == 6 && minor >= 6);
}

static int plan_binds(const struct sbx_config *cfg, struct sbx_plan *plan, struct sbx_err *err)
{
	plan->binds = xcalloc(cfg->binds.n, sizeof(*plan->binds));
	for (size_t i = 0; i < cfg->binds.n; i++) {
		struct sbx_bind b;
		struct stat st;
		if (bind_parse(cfg->binds.v[i], &b, err) < 0)
			return -1;
		struct sbx_plan_bind *pb = &plan->binds[plan->nbinds];
		if (stat(b.src, &st) < 0) {
			err_sys(err, "--bind '%s': source '%s'", cfg->binds.v[i], b.src);
			bind_free(&b);
			return -1;
		}
		plan->nbinds++;
		pb->src = steal_ptr(b.src);
		pb->dst = steal_ptr(b.dst);
		pb->rw = b.rw;
		pb->is_dir = S_ISDIR(st.st_mode);
		bind_free(&b);
	}
	return 0;
}

/* Writable layers of runs that ended without cleaning up (kill -9): the
 * lock of a live run is held by its supervisor for its whole life. */
static void sweep_runs(const char *runs)
{
	_cleanup_close_ int dfd = open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = dfd >= 0 ? fdopendir(dup(dfd)) : NULL;
	struct dirent *e;
	struct sbx_err ignored;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "run-", 4))
			continue;
		_cleanup_close_ int fd = openat(dfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0)
			rm_rf_at(dfd, e->d_name, &ignored);
	}
	closedir(d);
}

/* Before Linux 6.6 the kernel's overlay cannot keep its writable layer on
 * tmpfs; fuse-overlayfs can (fuselayer.c), where it and /dev/fuse are there.
 * Not for a root caller: its host-side tools (cp, export) run as root, and
 * the FUSE mount only lets the sandbox's host uid in. */
static void plan_fuse(struct sbx_plan *plan)
{
	char why[160];

	if (geteuid() == 0)
		snprintf(why, sizeof(why), "not for a root caller");
	else if ((plan->fuse_bin = fuselayer_probe(why, sizeof(why)))) {
		log_verbose("storage: this kernel's tmpfs lacks user xattrs (Linux < 6.6): writable "
			    "layer through fuse-overlayfs (%s) on tmpfs", plan->fuse_bin);
		return;
	}
	log_verbose("storage: this kernel's tmpfs lacks user xattrs (Linux < 6.6) and fuse-overlayfs "
		    "cannot be used (%s): writable layer on disk", why);
	plan->storage = SBX_STORAGE_DISK;
}

/* tmpfs pages are charged to the memory cgroup of whoever writes them: a
 * quota above the memory limit could never be filled on tmpfs, so the layer
 * goes to disk. Not under strict: on tmpfs both limits stay exact, on disk
 * the quota would not be. One -v line says what was chosen and why. */
static void plan_storage_mode(const struct sbx_config *cfg, struct sbx_plan *plan)
{
	enum sbx_limit_mech mem = plan->lim.mech[SBX_LIM_MEMORY];
	char d[32], m[32];

	format_size(cfg->disk, d, sizeof(d));
	format_size(cfg->memory, m, sizeof(m));
	plan->storage = cfg->storage;
	if (plan->storage == SBX_STORAGE_DISK) {
		log_verbose("storage: writable layer on disk (storage = disk), quota %s",
			    cfg->disk ? d : "none");
		return;
	}
	if (cfg->memory && cfg->disk > cfg->memory && cfg->enforce != SBX_ENFORCE_STRICT &&
	    (mem == SBX_MECH_CGROUP2 || mem == SBX_MECH_CGROUP1)) {
		log_verbose("storage: writable layer on disk: the disk quota (%s) is above the memory "
			    "limit (%s, %s), and a cgroup counts tmpfs pages as memory", d, m,
			    limits_mech_name(mem));
		plan->storage = SBX_STORAGE_DISK;
		return;
	}
	if (!tmpfs_has_user_xattrs()) {
		plan_fuse(plan);
		return;
	}
	log_verbose("storage: writable layer and workspace on a tmpfs of %s",
		    cfg->disk ? d : "half the RAM");
}

static int plan_storage(const struct sbx_config *cfg, struct sbx_plan *plan, struct sbx_err *err)
{
	plan_storage_mode(cfg, plan);
	if (plan->storage != SBX_STORAGE_DISK)
		return 0;
	/* on disk the quota is a walk and a kill: not exact */
	if (cfg->disk && cfg->enforce == SBX_ENFORCE_STRICT)
		return err_set(err, 0, "limit 'disk' cannot be enforced exactly on this machine: the "
			       "writable layer is on disk, where sbxrun can only end the sandbox after "
			       "the quota is passed");
	limits_cap_file_size(&plan->lim, cfg->disk);
	/* On disk, not in the runtime dir: that is a tmpfs, which lacks the user
	 * xattrs overlay needs before Linux 6.6 (renames then fail with EXDEV). */
	_cleanup_free_ char *data = NULL, *runs = NULL;
	if (paths_data_dir(&data, err) < 0)
		return -1;
	runs = xasprintf("%s/run", data);
	if (mkdir(runs, 0700) < 0 && errno != EEXIST)
		return err_sys(err, "create '%s'", runs);
	sweep_runs(runs);
	plan->run_dir = xasprintf("%s/run-XXXXXX", runs);
	if (!mkdtemp(plan->run_dir))
		return err_sys(err, "create '%s'", plan->run_dir);
	plan->run_lock = open(plan->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (plan->run_lock < 0 || flock(plan->run_lock, LOCK_EX | LOCK_NB) < 0)
		return err_sys(err, "lock '%s'", plan->run_dir);
	for (const char *const *d = (const char *const[]){ "upper", "work", "ws", NULL }; *d; d++) {
		char p[4200];
		snprintf(p, sizeof(p), "%s/%s", plan->run_dir, *d);
		if (mkdir(p, 0755) < 0 ||
		    (geteuid() == 0 && chown(p, plan->host_uid, plan->host_gid) < 0))
			return err_sys(err, "create '%s'", p);
	}
	if (geteuid() == 0 && chown(plan->run_dir, plan->host_uid, plan->host_gid) < 0)
		return err_sys(err, "chown '%s'", plan->run_dir);
	return 0;
}

/* The host's CA bundle: on networks that intercept TLS, package managers
 * inside must trust what the host trusts (docs/design.md, facts it rests on). */
static char *host_ca_bundle(void)
{
	static const char *const known[] = { "/etc/ssl/certs/ca-certificates.crt",
					     "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem" };
	const char *env = getenv("SSL_CERT_FILE");

	if (env && env[0] == '/' && access(env, R_OK) == 0)
		return xstrdup(env);
	for (size_t i = 0; i < ARRAY_SIZE(known); i++)
		if (access(known[i], R_OK) == 0)
			return xstrdup(known[i]);
	return NULL;
}

/* `shell`: the image's bash if it has one, as a login shell. */
static void plan_shell(struct sbx_plan *plan)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_IN_ROOT };
	int fd = (int)syscall(SYS_openat2, plan->img.rootfs_fd, "/bin/bash", &how, sizeof(how));

	plan->shell_argv[0] = xstrdup(fd >= 0 ? "/bin/bash" : "/bin/sh");
	plan->shell_argv[1] = xstrdup("-l");
	plan->argv = plan->shell_argv;
	plan->tty = plan->stdin_tty;
	if (fd >= 0)
		close(fd);
}

int sandbox_plan(const struct sbx_config *cfg, char *const *argv, struct sbx_plan *plan,
		 struct sbx_err *err)
{
	memset(plan, 0, sizeof(*plan));
	plan->cfg = cfg;
	plan->argv = argv;
	plan->events_fd = -1;
	plan->run_lock = -1;
	if (store_image_open(cfg->image, &plan->img, err) < 0)
		return -1;
	log_trace("plan: image opened");
	plan->lower = xasprintf("%s/rootfs", plan->img.dir);
	if (userns_lookup(plan->img.rootfs_fd, cfg->user ? cfg->user : "0", &plan->uid_in,
			  &plan->gid_in, &plan->home, err) < 0)
		return -1;
	if (!cfg->user && strcmp(plan->home, "/") == 0) {
		free(plan->home);
		plan->home = xstrdup("/root");
	}
	plan->host_uid = paths_sandbox_host_uid();
	plan->host_gid = geteuid() == 0 ? (gid_t)SBX_ROOT_HOST_UID : getegid();
	plan->workdir = xstrdup(cfg->workdir ? cfg->workdir : cfg->workspace ? cfg->workspace : plan->home);
	plan->stdin_tty = isatty(0);
	plan->tty = cfg->tty;
	if (plan->stdin_tty)
		ioctl(0, TIOCGWINSZ, &plan->ws);
	if (!argv)
		plan_shell(plan);
	if (cfg->egress == SBX_EGRESS_PACKAGES && cfg->ca == SBX_CA_HOST)
		plan->ca_file = host_ca_bundle();
	if (env_build(cfg, &plan->img, plan->home, plan->ca_file ? SBX_CA_INSIDE : NULL, &plan->envp, err) < 0)
		return -1;
	userns_ucounts_plan(&plan->ucounts);
	log_trace("plan: identity and environment");
	if (limits_prepare(cfg, &plan->lim, err) < 0)
		return -1;
	log_trace("plan: limits chosen");
	if (plan_binds(cfg, plan, err) < 0 || plan_storage(cfg, plan, err) < 0)
		return -1;
	if (cfg->workspace && wsseed_measure(plan->img.rootfs_fd, cfg->workspace, plan->img.name,
					     cfg->disk, &plan->ws_seed, err) < 0)
		return -1;
	/* one uid is mapped (the setuid-free default): chown reports success */
	if (seccomp_prepare(cfg, 1, &plan->seccomp, err) < 0)
		return -1;
	log_trace("plan: seccomp filter ready");

	if (record_prepare(cfg, &plan->events_fd, err) < 0)
		return -1;
	if (cfg->seccomp == SBX_OFF)
		log_warn("seccomp = off: the sandbox may use every system call, the kernel's whole "
			 "attack surface (keyring, bpf, io_uring, ...)");
	if (cfg->egress == SBX_EGRESS_FULL)
		log_verbose("network: full: the host's network, including its loopback services "
			    "and abstract unix sockets, is reachable");
	return 0;
}

void sandbox_plan_free(struct sbx_plan *plan)
{
	struct sbx_err err;

	limits_cleanup(&plan->lim);
	if (plan->events_fd >= 0)
		close(plan->events_fd);
	store_image_close(&plan->img);
	for (size_t i = 0; i < plan->nbinds; i++) {
		free(plan->binds[i].src);
		free(plan->binds[i].dst);
	}
	free(plan->binds);
	free(plan->lower);
	free(plan->fuse_bin);
	free(plan->ca_file);
	if (plan->run_dir)
		rm_rf_at(AT_FDCWD, plan->run_dir, &err);
	free(plan->run_dir);
	if (plan->run_lock >= 0)
		close(plan->run_lock);
	free(plan->home);
	free(plan->workdir);
	free(plan->shell_argv[0]);
	free(plan->shell_argv[1]);
	util_strvfreep(&plan->envp);
	seccomp_bpf_free(&plan->seccomp);
	memset(plan, 0, sizeof(*plan));
}

/* The fds the child keeps from the host side; all others are closed. */
static void close_inherited(int sync)
{
	if (sync > 3)
		syscall(SYS_close_range, 3, sync - 1, 0);
	syscall(SYS_close_range, sync + 1, ~0U, 0);
}

/* The host side keeps the namespace and root fds only where something
 * joins the sandbox later (a session: cp, download, exec); a plain run
 * needs none, and 16 opens and closes less are 0.05 ms of its start. */
static int send_ready(int sync, int keep_fds, struct sbx_err *err)
{
	static const char *const ns[] = { "/proc/self/ns/user", "/proc/self/ns/mnt",
					  "/proc/self/ns/net", "/proc/self/ns/pid",
					  "/proc/self/ns/ipc", "/proc/self/ns/uts",
					  "/proc/self/ns/cgroup" };
	int fds[SBX_MSG_MAX_FDS];
	size_t n = 0;
	struct sbx_msg m = { .type = SBX_MSG_READY };

	for (size_t i = 0; keep_fds && i < ARRAY_SIZE(ns); i++)
		if ((fds[n] = open(ns[i], O_RDONLY | O_CLOEXEC)) >= 0)
			n++;
	if (keep_fds && (fds[n] = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC)) >= 0)
		n++;
	int r = msg_send(sync, &m, fds, n);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return r < 0 ? err_sys(err, "send the sandbox's fds") : 0;
}

/* The network namespace is made by a helper while the child builds the
 * file system: creating one (copy_net_ns) is the costliest single step of
 * a start, 0.6 ms here, and it shares nothing with the mounts (other locks,
 * no paths), so on a second core it costs no wall time (bench/README.md).
 * The helper makes the namespace, brings lo up, makes the DNS stub's socket
 * and the proxy's door and sends the namespace (SIOCGSKNS, no path: the
 * child may be in the middle of pivot_root), the stub's socket and the door;
 * the child joins it before anything of the sandbox runs and hands the two
 * sockets to the host side. */
struct net_helper {
	pid_t pid;
	int sock;
};

static __attribute__((noreturn)) void net_helper_main(const struct sbx_config *cfg, int sock)
{
	struct sbx_err err = { 0 };
	struct sbx_msg m = { .type = SBX_MSG_READY };
	int fds[3] = { -1, -1, -1 }, s = -1;

	/* nothing of the child's but the way back (not its sync socket) */
	if (sock > 3)
		syscall(SYS_close_range, 3, sock - 1, 0);
	syscall(SYS_close_range, sock + 1, ~0U, 0);
	if (unshare(CLONE_NEWNET) < 0)
		err_sys(&err, "a network namespace");
	else if (netns_loopback_up(&err) == 0 && (fds[1] = netns_dns_socket(&err)) >= 0 &&
		 cfg->egress == SBX_EGRESS_PACKAGES)
		fds[2] = netns_proxy_door(&err);
	if (!err.msg[0] && ((s = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) < 0 ||
			    (fds[0] = ioctl(s, SIOCGSKNS)) < 0))
		err_sys(&err, "open the network namespace");
	if (err.msg[0] || msg_send(sock, &m, fds, fds[2] >= 0 ? 3 : 2) < 0) {
		msg_send_error(sock, &err);
		_exit(125);
	}
	_exit(0);
}

static int net_start(const struct sbx_config *cfg, struct net_helper *h, struct sbx_err *err)
{
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, "socketpair");
	h->pid = fork();
	if (h->pid == 0) {
		close(sv[0]);
		net_helper_main(cfg, sv[1]);
	}
	close(sv[1]);
	if (h->pid < 0) {
		close(sv[0]);
		return err_sys(err, "start the network set-up");
	}
	h->sock = sv[0];
	return 0;
}

/* Joins the helper's network namespace; hands the DNS stub's socket (the
 * host side answers lookups, dnsstub.c) and the proxy's door over. */
static int net_join(struct net_helper *h, int sync, struct sbx_err *err)
{
	struct sbx_msg m;
	int fds[SBX_MSG_MAX_FDS], r = -1;
	size_t n = 0;

	if (msg_recv(h->sock, &m, fds, &n) != 0)
		err_set(err, 0, "the network set-up ended early");
	else if (m.type == SBX_MSG_ERROR)
		err_set(err, m.errnum, "%s", m.text);
	else if (n < 2 || setns(fds[0], CLONE_NEWNET) < 0)
		err_sys(err, "join the network namespace");
	else if (msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_DNS }, &fds[1], 1) < 0)
		err_sys(err, "hand the DNS stub's socket over");
	else if (n == 3 && msg_send(sync, &(struct sbx_msg){ .type = SBX_MSG_PROXY }, &fds[2], 1) < 0)
		err_sys(err, "hand the proxy's socket over");
	else
		r = 0;
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	close(h->sock);
	while (waitpid(h->pid, NULL, 0) < 0 && errno == EINTR)
		;
	return r;
}

static int child_setup(const struct sbx_plan *plan, int sync, struct sbx_err *err)
{
	struct net_helper net = { -1, -1 };
	const struct sbx_config *cfg = plan->cfg;
	struct sbx_mount_src ms;
	struct sbx_msg m;

	if (msg_recv(sync, &m, NULL, NULL) != 0 || m.type != SBX_MSG_GO)
		_exit(125); /* the host side is gone */
	log_trace("child: go");
	/* with all capabilities in our namespace still: counts of its own */
	struct sbx_err uerr = { 0 };
	if (userns_ucounts_apply(&plan->ucounts, &uerr) < 0)
		log_verbose("%s: %s: the sandbox shares the user's inotify and fanotify counts", uerr.msg,
			    strerror(uerr.errnum));
	/* Host paths are opened before the identity changes: a root caller's
	 * child can still enter root's directories as their owner. */
	if (mounts_open_sources(plan, &ms, err) < 0)
		return -1;
	if (userns_become(plan->uid_in, plan->gid_in, err) < 0)
		return -1;
	/* after the host side moved us into our cgroup: it becomes our "/" */
	if (unshare(CLONE_NEWCGROUP) < 0)
		return err_sys(err, "a cgroup namespace");
	/* a change of credentials clears the parent-death signal: set it again */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	struct pollfd hup = { sync, POLLHUP, 0 };
	if (poll(&hup, 1, 0) > 0 && (hup.revents & POLLHUP))
		_exit(125); /* the host side died before that */
	if (cfg->egress != SBX_EGRESS_FULL && net_start(cfg, &net, err) < 0)
		return -1;
	log_trace("child: identity, cgroup ns; network set-up started");
	if (sethostname(cfg->hostname, strlen(cfg->hostname)) < 0)
		return err_sys(err, "sethostname");
	if (mounts_setup(plan, &ms, sync, err) < 0)
		return -1;
	log_trace("child: file system built, pivot_root done");
	if (net.pid > 0 && net_join(&net, sync, err) < 0)
		return -1;
	log_trace("child: network namespace joined");
	return send_ready(sync, plan->pid1_loop != NULL, err);
}

static __attribute__((noreturn)) void child_main(const struct sbx_plan *plan, int sync)
{
	struct sbx_err err = { 0 };

	/* Dies with the host side, and takes the whole pid namespace along. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	close_inherited(sync);
	if (child_setup(plan, sync, &err) < 0) {
		msg_send_error(sync, &err);
		_exit(125);
	}
	/* After this the host side can no longer open /proc/PID/ns or root. */
	prctl(PR_SET_DUMPABLE, 0);
	init_run(plan, sync);
}

static pid_t clone_sandbox(int *pidfd, struct sbx_err *err)
{
	struct clone_args args = {
		/* the network namespace (unless egress = full) comes from net_start */
		.flags = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS |
			 CLONE_PIDFD,
		.pidfd = (uint64_t)(uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
	};
	pid_t pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));

	if (pid < 0) {
		err_sys(err, "create the sandbox's namespaces");
		if (errno == EPERM || errno == ENOSPC || errno == EINVAL)
			err_hint(err, "user namespaces may be disabled here; run 'sbxrun doctor'");
	}
	return pid;
}

/* SBX_MSG_FUSE: the child mounted the root's FUSE device; serve it. */
static int start_fuse(const struct sbx_plan *plan, struct sbx_sandbox *sb, int *fds, size_t n,
		      struct sbx_err *err)
{
	int r = 0;

	if (n != 3 || !plan->fuse_bin || sb->fuse.pid > 0)
		r = err_set(err, EPROTO, "sandbox setup: unexpected FUSE message");
	else
		r = fuselayer_spawn(plan->fuse_bin, fds[1], fds[2], fds[0], plan->uid_in, plan->gid_in,
				    &sb->fuse, err);
	for (size_t i = 0; i < n; i++)
		close(fds[i]);
	return r;
}

/* Host side, after clone: id maps, then wait for the child's fds. */
static int start_child(const struct sbx_plan *plan, struct sbx_sandbox *sb, struct sbx_err *err)
{
	struct sbx_msg m = { .type = SBX_MSG_GO };
	size_t n = 0;
	int r;

	log_trace("host: cloned");
	if (userns_write_maps(sb->pid, plan->uid_in, plan->host_uid, plan->gid_in, plan->host_gid, err) < 0)
		return -1;
	if (msg_send(sb->sync, &m, NULL, 0) < 0)
		return err_sys(err, "start the sandbox");
	while ((r = msg_recv(sb->sync, &m, sb->fds.fd, &n)) == 0 &&
	       (m.type == SBX_MSG_PROXY || m.type == SBX_MSG_DNS || m.type == SBX_MSG_FUSE)) {
		/* start_fuse takes the fds of a FUSE message */
		if (m.type == SBX_MSG_FUSE) {
			if (start_fuse(plan, sb, sb->fds.fd, n, err) < 0)
				return -1;
			n = 0;
			continue;
		}
		int *keep = m.type == SBX_MSG_PROXY ? &sb->proxy_fd : &sb->dns_fd;
		for (size_t i = 0; i < n; i++)
			if (*keep < 0)
				*keep = sb->fds.fd[i];
			else
				close(sb->fds.fd[i]);
		n = 0;
	}
	sb->fds.n = n;
	log_trace("host: sandbox ready");
	if (r != 0)
		return err_set(err, 0, "the sandbox died while being set up");
	if (m.type == SBX_MSG_ERROR) {
		err_set(err, m.errnum, "sandbox setup: %s", m.text);
		if (fuselayer_ended(&sb->fuse))
			err_hint(err, "fuse-overlayfs, which serves the writable layer, ended early; "
				 "'sbxrun -v' shows its messages");
		return -1;
	}
	if (m.type != SBX_MSG_READY)
		return err_set(err, EPROTO, "sandbox setup: unexpected message %d", m.type);
	return 0;
}

int sandbox_start(const struct sbx_plan *plan, struct sbx_sandbox *sb, struct sbx_err *err)
{
	int sv[2];

	memset(sb, 0, sizeof(*sb));
	sb->pidfd = sb->sync = sb->proxy_fd = sb->dns_fd = sb->fuse.pidfd = -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return err_sys(err, "socketpair");
	sb->pid = clone_sandbox(&sb->pidfd, err);
	if (sb->pid < 0) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (sb->pid == 0) {
		close(sv[0]);
		child_main(plan, sv[1]);
	}
	close(sv[1]);
	sb->sync = sv[0];
	if (!plan->pid1_loop)
		limits_kill_as_group(&plan->lim);
	if (limits_attach(&plan->lim, sb->pid, err) < 0 || start_child(plan, sb, err) < 0) {
		supervise_kill(sb->pid, sb->pidfd);
		sandbox_release(sb);
		return -1;
	}
	return 0;
}

void sandbox_release(struct sbx_sandbox *sb)
{
	for (size_t i = 0; i < sb->fds.n; i++)
		close(sb->fds.fd[i]);
	sb->fds.n = 0;
	if (sb->sync >= 0)
		close(sb->sync);
	if (sb->pidfd >= 0)
		close(sb->pidfd);
	if (sb->proxy_fd >= 0)
		close(sb->proxy_fd);
	if (sb->dns_fd >= 0)
		close(sb->dns_fd);
	sb->sync = sb->pidfd = sb->proxy_fd = sb->dns_fd = -1;
	/* after the sandbox ended: nothing uses the layer any more */
	fuselayer_stop(&sb->fuse);
}

int sandbox_proxy(const struct sbx_plan *plan, int door, struct sbx_proxy **px, struct sbx_err *err)
{
	struct sbx_proxy_conf conf = {
		.profile_name = plan->cfg->profile, .allow = &plan->cfg->allow,
		.apt_hosts = (const char *const *)plan->img.apt_hosts,
		.npm_registry = plan->img.npm_registry, .pypi_index = plan->img.pypi_index,
		.events_fd = plan->events_fd,
	};
	/* packages egress without an allow list: the image's package sources */
	static char *sets[] = { "@apt", "@pypi", "@npm", NULL };
	static char *origins[] = { "default", "default", "default", NULL };
	static const struct sbx_strlist sets_only = { sets, origins, 3 };
	struct rlimit rl;

	if (!plan->cfg->allow.n)
		conf.allow = &sets_only;
	/* each relayed connection holds six fds (two sockets, two pipes) */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	/* the door is the proxy's now: it closes it */
	int fd = dup(door);
	return fd < 0 ? err_sys(err, "dup") : proxy_new(&conf, fd, px, err);
}

int sandbox_dns(const struct sbx_plan *plan, int sock, struct sbx_dnsstub **dns, struct sbx_err *err)
{
	/* the socket is the stub's now: it closes it */
	int fd = dup(sock);
	return fd < 0 ? err_sys(err, "dup")
		: dnsstub_new(fd, plan->cfg->profile, plan->cfg->hostname, plan->events_fd, dns, err);
}

/* How the limits were enforced and whether one of them ended the run. */
static void limits_result(const struct sbx_plan *plan, struct sbx_result *res)
{
	static const enum sbx_key keys[] = { SBX_K_MEMORY, SBX_K_PIDS, SBX_K_CPUS, SBX_K_FILE_SIZE,
					     SBX_K_OPEN_FILES };
	struct sbx_limits_outcome out = { 0 };

	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		res->mechanism[keys[i]] = limits_mechanism(&plan->lim, keys[i]);
	limits_outcome(&plan->lim, &out);
	if (out.peak_memory)
		res->peak_memory = out.peak_memory;
	if (out.oom && !res->timed_out)
		snprintf(res->reason, sizeof(res->reason), "oom");
	else if (out.pids_hit && !res->timed_out && res->exit_status)
		snprintf(res->reason, sizeof(res->reason), "pids");
}

const char *sandbox_storage_name(const struct sbx_plan *plan)
{
	if (plan->storage == SBX_STORAGE_DISK)
		return "disk";
	return plan->fuse_bin ? "fuse-overlayfs+tmpfs" : "tmpfs";
}

int sandbox_run(const struct sbx_plan *plan, struct sbx_result *res, struct sbx_err *err)
{
	struct sbx_sandbox sb;
	sigset_t set;

	memset(res, 0, sizeof(*res));
	res->mechanism[SBX_K_TIMEOUT] = plan->cfg->timeout_ms ? "wall-clock" : "none";
	res->mechanism[SBX_K_DISK] = sandbox_storage_name(plan);
	supervise_block_signals(&set);
	/* the caller's terminal, and what of the output reaches it (pty.c) */
	struct sbx_pty_relay relay;
	pty_term_save();
	pty_relay_init(&relay, plan->cfg->raw_tty);
	if (!plan->tty && pty_relay_divert(&relay, err) < 0)
		return -1;
	int started = sandbox_start(plan, &sb, err);
	pty_relay_undivert(&relay);
	if (started < 0) {
		pty_relay_end(&relay);
		return -1;
	}
	struct sbx_proxy *px = NULL;
	struct sbx_dnsstub *dns = NULL;
	if ((sb.proxy_fd >= 0 && sandbox_proxy(plan, sb.proxy_fd, &px, err) < 0) ||
	    (sb.dns_fd >= 0 && sandbox_dns(plan, sb.dns_fd, &dns, err) < 0)) {
		supervise_kill(sb.pid, sb.pidfd);
		pty_relay_end(&relay);
		proxy_free(px);
		sandbox_release(&sb);
		return -1;
	}
	int r = supervise(plan, sb.pid, sb.pidfd, sb.sync, &set, px, dns, &relay, res, err);
	log_trace("host: supervised");
	dnsstub_free(dns);
	if (px) {
		struct sbx_proxy_counters st;
		proxy_counters(px, &st);
		res->egress_allowed = st.allowed;
		res->egress_refused = st.refused;
		res->egress_bytes_up = st.bytes_up;
		res->egress_bytes_down = st.bytes_down;
		proxy_free(px);
	}
	sandbox_release(&sb);
	if (r == 0)
		limits_result(plan, res);
	if (r == 0 && res->init_died && !res->reason[0])
		snprintf(res->message, sizeof(res->message), "the sandbox's init ended unexpectedly");
	return r;
}
