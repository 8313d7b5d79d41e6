/* plan.c - the plan of one sandbox (plan.h), decided on the host side
 * before any namespace exists: the image opened from the store, the
 * identity inside, the network plan (net/netplan.c), the environment, the
 * binds checked, the mechanism of each limit, where the writable layer
 * lives, the workspace's seed and the compiled seccomp filter. Every error
 * here is exit 125 with nothing made. */
#define _GNU_SOURCE
#include "sandbox/plan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "base/lockwait.h"
#include "base/log.h"
#include "base/paths.h"
#include "base/util.h"
#include "sandbox/env.h"
#include "sandbox/record.h"
#include "sandbox/seccomp_cache.h"
#include "sandbox/wsseed.h"
#include "store/import.h"

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
	else if (plan->nsnaps)
		snprintf(why, sizeof(why), "a fork's snapshot layers need the kernel's overlay");
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
	/* "on disk" is where the data directory lies: below a tmpfs (a home
	 * under /tmp, which Debian 13 mounts as one) it is memory, and a memory
	 * cgroup counts it. Said, not refused: it still works within memory. */
	struct statfs sf;
	if (statfs(runs, &sf) == 0 && sf.f_type == TMPFS_MAGIC)
		log_warn("storage: '%s' is on a tmpfs: the writable layer is in memory, not on disk, "
			 "and counts toward the memory limit (set XDG_DATA_HOME to a directory on "
			 "disk)", runs);
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

/* A snapshot's layer is not removed while a session runs on it
 * (undo/snapshot.c asks for the lock exclusively). */
static int plan_snap_locks(struct sbx_plan *plan, struct sbx_err *err)
{
	plan->snap_locks = plan->nsnaps ? xcalloc(plan->nsnaps, sizeof(int)) : NULL;
	for (size_t i = 0; i < plan->nsnaps; i++)
		plan->snap_locks[i] = -1;
	for (size_t i = 0; i < plan->nsnaps; i++) {
		plan->snap_locks[i] = open(plan->snaps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (plan->snap_locks[i] < 0 || flock(plan->snap_locks[i], LOCK_SH | LOCK_NB) < 0)
			return err_sys(err, "snapshot layer '%s'", plan->snaps[i]);
	}
	return 0;
}

/* --project: the change set the layer above made (config.h, project_set)
 * becomes the workspace's overlay; its upper is watched by the quota. */
static int plan_project(const struct sbx_config *cfg, struct sbx_plan *plan, struct sbx_err *err)
{
	const struct sbx_project_set *ps = &cfg->project_set;

	if (!ps->layer)
		return err_set(err, 0, "--project '%s': no change set was made for it", cfg->project);
	limits_cap_file_size(&plan->lim, cfg->disk);
	plan->project.src = xstrdup(ps->path);
	plan->project.layer = xstrdup(ps->layer);
	plan->project.dev = (dev_t)ps->dev;
	plan->project.ino = (ino_t)ps->ino;
	/* held while the sandbox lives: `sbxrun changes` sees the set in use
	 * (undo/project.h) and never captures it under the sandbox */
	plan->project.lock_fd = open(ps->layer, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (plan->project.lock_fd < 0)
		return err_sys(err, "open '%s'", ps->layer);
	/* an exclusive holder is capturing or applying the set */
	if (lock_wait(plan->project.lock_fd, LOCK_SH, ps->layer, LOCK_DEADLINE_LONG_S, err) < 0)
		return -1;
	_cleanup_free_ char *up = xasprintf("%s/upper", ps->layer);
	plan->project.upper_fd = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return plan->project.upper_fd < 0 ? err_sys(err, "open '%s'", up) : 0;
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

/* The lowest tier accepted, and who asks for more (sandbox/tier.h). */
static void plan_tier(const struct sbx_config *cfg, struct sbx_plan *plan)
{
	const char *origin = cfg->origin[SBX_K_TIER];

	plan->tier_min = cfg->tier;
	if (cfg->tier != SBX_TIER_LANDLOCK)
		snprintf(plan->tier_why, sizeof(plan->tier_why), "[sandbox] tier = %s%s%s",
			 sbx_tier_names[cfg->tier], origin ? ", from " : "", origin ? origin : "");
	if (cfg->tier != SBX_TIER_FULL && cfg->enforce == SBX_ENFORCE_STRICT) {
		plan->tier_min = SBX_TIER_FULL;
		snprintf(plan->tier_why, sizeof(plan->tier_why), "[limits] enforce = strict");
	}
}

int sandbox_plan(const struct sbx_config *cfg, char *const *argv, struct sbx_plan *plan,
		 struct sbx_err *err)
{
	memset(plan, 0, sizeof(*plan));
	plan->hostname = cfg->hostname;
	plan->workspace = cfg->workspace;
	plan->profile = cfg->profile;
	plan->disk = cfg->disk;
	plan->timeout_ms = cfg->timeout_ms;
	plan->raw_tty = cfg->raw_tty;
	plan->ask_ms = cfg->net_ask ? (cfg->ask_timeout_ms ? cfg->ask_timeout_ms : 30000) : 0;
	/* copied here, not in pid 1: a write there would copy heap pages */
	plan->argv = plan->argv_copy = argv ? util_strvdup(argv) : NULL;
	plan->events_fd = -1;
	plan->run_lock = -1;
	plan->project.upper_fd = plan->project.lock_fd = -1;
	plan->ll_state = xcalloc(1, sizeof(*plan->ll_state));
	plan->ll_state->ruleset = plan->ll_state->door = -1;
	plan_tier(cfg, plan);
	if (import_image_open(cfg->image, &plan->img, err) < 0)
		return -1;
	log_trace("plan: image opened");
	struct hostmatch_sets image = plan_image_sets(&plan->img);
	gateway_conf_init(&plan->gw, cfg, &image, &plan->gw_pypi);
	plan->lower = xasprintf("%s/rootfs", plan->img.dir);
	plan->snaps = cfg->snap_layers.v;
	plan->nsnaps = cfg->snap_layers.n;
	if (plan_snap_locks(plan, err) < 0)
		return -1;
	/* the caller is the sandbox's root; [sandbox] user is another user below it */
	if (userns_lookup(plan->img.rootfs_fd, "0", &plan->uid_in, &plan->gid_in, &plan->home, err) < 0)
		return -1;
	if (strcmp(plan->home, "/") == 0) {
		free(plan->home);
		plan->home = xstrdup("/root");
	}
	plan->host_uid = paths_sandbox_host_uid();
	plan->host_gid = geteuid() == 0 ? (gid_t)paths_root_host_id() : getegid();
	plan->workdir = xstrdup(cfg->workdir ? cfg->workdir : cfg->workspace ? cfg->workspace : plan->home);
	plan->stdin_tty = isatty(0);
	plan->tty = cfg->tty;
	if (plan->stdin_tty)
		ioctl(0, TIOCGWINSZ, &plan->ws);
	if (!argv)
		plan_shell(plan);
	struct hostmatch_sets sets = plan_image_sets(&plan->img);
	netplan_derive(cfg, NETPLAN_SANDBOX, &plan->net);
	if (netplan_expand(&plan->net, &sets, err) < 0 || credplan_make(cfg, &plan->net, &plan->cred, err) < 0)
		return -1;
	if (env_build(cfg, &plan->img, plan->home, &plan->net, &plan->envp, err) < 0)
		return -1;
	credplan_env(plan->cred, &plan->envp);
	if (nonroot_plan(cfg, plan, err) < 0)
		return -1;
	userns_ucounts_plan(&plan->ucounts);
	log_trace("plan: identity and environment");
	if (limits_prepare(cfg, &plan->lim, err) < 0)
		return -1;
	log_trace("plan: limits chosen");
	if (plan_binds(cfg, plan, err) < 0 || plan_storage(cfg, plan, err) < 0)
		return -1;
	/* the project's layer is on disk whatever storage is: no write can
	 * pass the quota between two walks of it */
	if (cfg->project && plan_project(cfg, plan, err) < 0)
		return -1;
	/* a fork's workspace is the snapshot's, in its layer */
	if (cfg->workspace && !cfg->project && !plan->nsnaps && wsseed_measure(plan->img.rootfs_fd, cfg->workspace, plan->img.name,
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
	if (!plan->net.own_netns)
		log_verbose("network: full: the host's network, including its loopback services "
			    "and abstract unix sockets, is reachable");
	return 0;
}

void sandbox_plan_free(struct sbx_plan *plan)
{
	struct sbx_err err;

	limits_cleanup(&plan->lim);
	if (plan->ll_state)
		landlock_release(plan->ll_state);
	free(plan->ll_state);
	plan->ll_state = NULL;
	if (plan->events_fd >= 0)
		close(plan->events_fd);
	store_image_close(&plan->img);
	for (size_t i = 0; i < plan->nbinds; i++) {
		free(plan->binds[i].src);
		free(plan->binds[i].dst);
	}
	free(plan->binds);
	free(plan->lower);
	for (size_t i = 0; plan->snap_locks && i < plan->nsnaps; i++)
		if (plan->snap_locks[i] >= 0)
			close(plan->snap_locks[i]);
	free(plan->snap_locks);
	free(plan->fuse_bin);
	netplan_free(&plan->net);
	credplan_free(steal_ptr(plan->cred));
	if (plan->run_dir)
		rm_rf_at(AT_FDCWD, plan->run_dir, &err);
	free(plan->run_dir);
	if (plan->run_lock >= 0)
		close(plan->run_lock);
	free(plan->project.src);
	free(plan->project.layer);
	if (plan->project.upper_fd >= 0)
		close(plan->project.upper_fd);
	if (plan->project.lock_fd >= 0)
		close(plan->project.lock_fd);
	free(plan->home);
	nonroot_free(&plan->user);
	free(plan->workdir);
	free(plan->shell_argv[0]);
	free(plan->shell_argv[1]);
	util_strvfreep(&plan->envp);
	util_strvfreep(&plan->argv_copy);
	free(plan->gw_pypi);
	plan->gw_pypi = NULL;
	seccomp_bpf_free(&plan->seccomp);
	memset(plan, 0, sizeof(*plan));
}

const char *sandbox_storage_name(const struct sbx_plan *plan)
{
	if (plan->storage == SBX_STORAGE_DISK)
		return "disk";
	return plan->fuse_bin ? "fuse-overlayfs+tmpfs" : "tmpfs";
}

struct hostmatch_sets plan_image_sets(const struct sbx_image *img)
{
	return (struct hostmatch_sets){
		.apt_hosts = (const char *const *)img->apt_hosts,
		.npm_registry = img->npm_registry, .pypi_index = img->pypi_index,
		.go_proxy = img->go_proxy, .go_sumdb = img->go_sumdb,
		.cargo_index = img->cargo_index, .maven_repo = img->maven_repo,
	};
}
