/* limits.c - memory, pids, cpus, file_size and open_files: the best mechanism
 * this machine offers per limit, chosen once on the host side.
 *
 * Order of preference: a cgroup v2 subtree this process may write (delegated
 * to the user, or root's), then a writable cgroup v1 hierarchy (root on a v1
 * machine), then fallbacks: RLIMIT_DATA for memory (never RLIMIT_AS: Go, Java
 * and Node reserve far more address space than they use), RLIMIT_NPROC set
 * inside the sandbox's user namespace for pids, CPU affinity for cpus.
 * RLIMIT_DATA holds one process only: on that fallback the supervisor also
 * sums the whole sandbox's memory and kills past the limit (memacct.c), a
 * mechanism named "rlimit+accounting".
 *
 * RLIMIT_NPROC, measured on this machine (kernel 6.18, tests/experiments/
 * nproc.c, as an unprivileged user and as root mapped to an unprivileged
 * host uid): since 5.14 the count is kept per (user namespace, uid). Set
 * inside a fresh user namespace to 10, 9 forks succeed next to 30 other host
 * processes of the same uid: only the namespace's own tasks (the setter
 * included; threads and unreaped zombies count too) are counted. Set *before*
 * the unshare, 0 forks succeed: the namespace snapshots the creator's limit
 * as the ceiling of the parent level, which counts all of the host uid's
 * processes. Host uid 0 is exempt altogether (200 of 200 forks with a 0->0
 * mapping), which is one more reason root callers map the sandbox to an
 * unprivileged host uid. So: set it in the child, after clone, never before.
 */
#define _GNU_SOURCE
#include "sandbox/limits.h"

#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "base/log.h"
#include "base/util.h"
#include "sandbox/scope.h"

static const char *const ctl_names[SBX_CTL__COUNT] = { "memory", "pids", "cpu" };
static const char *const mech_names[] = { "none", "cgroup2", "cgroup1", "rlimit", "affinity",
					  "rlimit+accounting" };
static const char *const lim_names[SBX_LIM__COUNT] = { "memory", "pids", "cpus", "file_size",
							"open_files" };
/* The fallback of the three cgroup limits when no cgroup is there. */
static const enum sbx_limit_mech fallback[SBX_CTL__COUNT] = { SBX_MECH_ACCOUNTED, SBX_MECH_RLIMIT,
							       SBX_MECH_AFFINITY };
static const char *const fallback_what[SBX_CTL__COUNT] = {
	"RLIMIT_DATA per process, and sbxrun's own sum of the sandbox's memory every 100-250 ms",
	"RLIMIT_NPROC in the sandbox's user namespace",
	"CPU affinity, whole CPUs" };

const char *limits_mech_name(enum sbx_limit_mech m)
{
	return (unsigned)m < ARRAY_SIZE(mech_names) ? mech_names[m] : "none";
}

unsigned limits_affinity_count(uint64_t cpus_milli, unsigned ncpus)
{
	uint64_t n = (cpus_milli + 999) / 1000;

	if (n == 0)
		n = 1;
	return ncpus && n > ncpus ? ncpus : (unsigned)n;
}

static uint64_t hard_limit(int res)
{
	struct rlimit rl;

	if (getrlimit(res, &rl) < 0 || rl.rlim_max == RLIM_INFINITY)
		return UINT64_MAX;
	return rl.rlim_max;
}

/* The controllers sbxrun asks for, as cgroup_find_parent takes them. */
static const char *const wanted[] = { "memory", "pids", "cpu", NULL };

static void probe_v2(struct sbx_limits_avail *av, const struct sbx_cg_snapshot *snap)
{
	char buf[512], file[PATH_MAX + 32];

	memset(av->v2, 0, sizeof(av->v2));
	av->v2_parent[0] = '\0';
	if (!snap->mountinfo ||
	    cgroup_find_parent_in(snap, SBX_CG_V2, NULL, wanted, av->v2_parent, sizeof(av->v2_parent)) < 0)
		return;
	snprintf(file, sizeof(file), "%s/cgroup.subtree_control", av->v2_parent);
	if (cgroup_read_path(file, buf, sizeof(buf)) == 0)
		for (int c = 0; c < SBX_CTL__COUNT; c++)
			av->v2[c] = cgroup_list_has(buf, ctl_names[c]);
	snprintf(av->v2_via, sizeof(av->v2_via), "writable subtree %s", av->v2_parent);
}

/* Under systemd, the subtrees sbxrun may write without asking (app.slice
 * of the user's manager, root's slices) belong to systemd: ask it for a
 * delegated scope of sbxrun's own instead, and keep the found one only
 * as a second choice. */
static void probe_systemd(struct sbx_limits_avail *av)
{
	struct sbx_err err = { 0 };
	char dir[PATH_MAX];
	struct sbx_limits_avail before = *av;

	if (!av->v2_parent[0] || !scope_is_ours(av->v2_parent)) {
		if (scope_delegate(dir, sizeof(dir), &err) < 0) {
			snprintf(av->v2_missing, sizeof(av->v2_missing), "no delegated scope from systemd: %s%s%s",
				 err.msg, err.errnum ? ": " : "", err.errnum ? strerror(err.errnum) : "");
			log_verbose("cgroup: %s", av->v2_missing);
			return;
		}
		/* the scope moved us: read where we are now */
		struct sbx_cg_snapshot now;
		if (cgroup_snapshot(&now) == 0) {
			probe_v2(av, &now);
			cgroup_snapshot_free(&now);
		}
		if (!av->v2_parent[0] || !scope_is_ours(av->v2_parent)) {
			*av = before;
			snprintf(av->v2_missing, sizeof(av->v2_missing), "systemd's scope %s is not usable", dir);
			return;
		}
	}
	snprintf(av->v2_via, sizeof(av->v2_via), "systemd scope %s", strrchr(av->v2_parent, '/') + 1);
}

void limits_probe(struct sbx_limits_avail *av, int delegate)
{
	cpu_set_t set;
	struct sbx_cg_snapshot snap = { 0 };

	memset(av, 0, sizeof(*av));
	if (cgroup_snapshot(&snap) < 0)
		snap.mountinfo = snap.self = NULL;
	probe_v2(av, &snap);
	if (scope_systemd_running()) {
		if (delegate)
			probe_systemd(av);
		else if (!av->v2_parent[0] || !scope_is_ours(av->v2_parent))
			snprintf(av->v2_missing, sizeof(av->v2_missing),
				 "not in a delegated cgroup; one would be asked of systemd");
	} else if (!av->v2_parent[0]) {
		snprintf(av->v2_missing, sizeof(av->v2_missing),
			 "no writable cgroup v2 subtree with memory, pids or cpu, and no systemd to ask");
	}
	for (int c = 0; c < SBX_CTL__COUNT; c++)
		if (!snap.mountinfo || cgroup_find_parent_in(&snap, SBX_CG_V1, ctl_names[c], wanted,
							     av->v1_parent[c], sizeof(av->v1_parent[c])) < 0)
			av->v1_parent[c][0] = '\0';
	cgroup_snapshot_free(&snap);
	av->nofile_hard = hard_limit(RLIMIT_NOFILE);
	av->fsize_hard = hard_limit(RLIMIT_FSIZE);
	av->ncpus = sched_getaffinity(0, sizeof(set), &set) == 0 ? (unsigned)CPU_COUNT(&set) : 1;
}

static int not_exact(const char *limit, const char *why, struct sbx_err *err)
{
	err_set(err, 0, "limit '%s' cannot be enforced exactly on this machine: %s", limit, why);
	err_hint(err, "run 'sbxrun doctor'; delegate a cgroup v2 subtree to this user, or use enforce = best");
	return -1;
}

int limits_choose(const struct sbx_config *cfg, const struct sbx_limits_avail *av,
		  enum sbx_limit_mech mech[SBX_LIM__COUNT], struct sbx_err *err)
{
	const uint64_t want[SBX_CTL__COUNT] = { cfg->memory, cfg->pids, cfg->cpus_milli };
	int strict = cfg->enforce == SBX_ENFORCE_STRICT;
	char why[160];

	for (int c = 0; c < SBX_CTL__COUNT; c++) {
		if (!want[c])
			mech[c] = SBX_MECH_NONE;
		else if (av->v2_parent[0] && av->v2[c])
			mech[c] = SBX_MECH_CGROUP2;
		else if (av->v1_parent[c][0])
			mech[c] = SBX_MECH_CGROUP1;
		else if (strict) {
			snprintf(why, sizeof(why), "no writable cgroup with the %s controller (the fallback "
				 "would be %s)", ctl_names[c], fallback_what[c]);
			return not_exact(lim_names[c], why, err);
		} else
			mech[c] = fallback[c];
	}
	mech[SBX_LIM_FILE_SIZE] = cfg->file_size ? SBX_MECH_RLIMIT : SBX_MECH_NONE;
	mech[SBX_LIM_OPEN_FILES] = cfg->open_files ? SBX_MECH_RLIMIT : SBX_MECH_NONE;
	/* A user namespace cannot raise a hard rlimit: above it, the hard one rules. */
	if (strict && cfg->file_size > av->fsize_hard)
		return not_exact("file_size", "above this process's hard RLIMIT_FSIZE", err);
	if (strict && cfg->open_files > av->nofile_hard)
		return not_exact("open_files", "above this process's hard RLIMIT_NOFILE", err);
	return 0;
}

static int set_cgroup_limits(struct sbx_cgroup *cg, int c, const struct sbx_config *cfg,
			     struct sbx_err *err)
{
	char v[64];
	struct sbx_err ignored;
	int v2 = cg->version == SBX_CG_V2;

	if (c == SBX_CTL_MEMORY) {
		snprintf(v, sizeof(v), "%" PRIu64, cfg->memory);
		if (cgroup_write(cg, v2 ? "memory.max" : "memory.limit_in_bytes", v, err) < 0)
			return -1;
		/* Swap would let a memory bomb outgrow the limit; absent without swap accounting. */
		if (v2)
			cgroup_write(cg, "memory.swap.max", "0", &ignored);
		else
			cgroup_write(cg, "memory.memsw.limit_in_bytes", v, &ignored);
		return 0;
	}
	if (c == SBX_CTL_PIDS) {
		snprintf(v, sizeof(v), "%" PRIu64, cfg->pids);
		return cgroup_write(cg, "pids.max", v, err);
	}
	/* cpus as CFS bandwidth: quota per 100 ms period. */
	uint64_t quota = cfg->cpus_milli * 100;
	if (v2) {
		snprintf(v, sizeof(v), "%" PRIu64 " 100000", quota);
		return cgroup_write(cg, "cpu.max", v, err);
	}
	if (cgroup_write(cg, "cpu.cfs_period_us", "100000", err) < 0)
		return -1;
	snprintf(v, sizeof(v), "%" PRIu64, quota);
	return cgroup_write(cg, "cpu.cfs_quota_us", v, err);
}

/* Makes (or reuses) the cgroup for controller c and sets its limit. */
static int make_cgroup(struct sbx_limits *lim, const struct sbx_limits_avail *av, int c,
		       const struct sbx_config *cfg, struct sbx_err *err)
{
	struct sbx_cgroup *cg = lim->mech[c] == SBX_MECH_CGROUP2 ? &lim->v2 : &lim->v1[c];

	if (!cg->path) {
		int v2 = lim->mech[c] == SBX_MECH_CGROUP2;
		if (cgroup_create(v2 ? SBX_CG_V2 : SBX_CG_V1, v2 ? av->v2_parent : av->v1_parent[c],
				  cg, err) < 0)
			return -1;
	}
	return set_cgroup_limits(cg, c, cfg, err);
}

static void log_mechanisms(const struct sbx_config *cfg, const struct sbx_limits *lim)
{
	const uint64_t val[SBX_LIM__COUNT] = { cfg->memory, cfg->pids, cfg->cpus_milli,
					       lim->file_size, lim->open_files };
	char v[32];

	for (int l = 0; l < SBX_LIM__COUNT; l++) {
		const char *where = "";
		if (lim->mech[l] == SBX_MECH_NONE)
			continue;
		if (lim->mech[l] == SBX_MECH_CGROUP2)
			where = lim->v2.path;
		else if (lim->mech[l] == SBX_MECH_CGROUP1)
			where = lim->v1[l].path;
		else if (l < SBX_CTL__COUNT)
			where = fallback_what[l];
		if (l == SBX_LIM_MEMORY || l == SBX_LIM_FILE_SIZE)
			format_size(val[l], v, sizeof(v));
		else if (l == SBX_LIM_CPUS)
			snprintf(v, sizeof(v), "%" PRIu64 ".%03" PRIu64, val[l] / 1000, val[l] % 1000);
		else
			snprintf(v, sizeof(v), "%" PRIu64, val[l]);
		log_verbose("limit %s %s: %s%s%s%s", lim_names[l], v, limits_mech_name(lim->mech[l]),
			    *where ? " (" : "", where, *where ? ")" : "");

	}
}

int limits_prepare(const struct sbx_config *cfg, struct sbx_limits *lim, struct sbx_err *err)
{
	struct sbx_limits_avail av;

	memset(lim, 0, sizeof(*lim));
	lim->v2.fd = -1;
	for (int c = 0; c < SBX_CTL__COUNT; c++)
		lim->v1[c].fd = -1;
	limits_probe(&av, cfg->memory || cfg->pids || cfg->cpus_milli);
	snprintf(lim->via, sizeof(lim->via), "%s", av.v2_parent[0] ? av.v2_via : "");
	if (limits_choose(cfg, &av, lim->mech, err) < 0)
		return -1;
	for (int c = 0; c < SBX_CTL__COUNT; c++) {
		if (lim->mech[c] != SBX_MECH_CGROUP2 && lim->mech[c] != SBX_MECH_CGROUP1)
			continue;
		if (make_cgroup(lim, &av, c, cfg, err) == 0)
			continue;
		if (cfg->enforce == SBX_ENFORCE_STRICT) {
			limits_cleanup(lim);
			return err_wrap(err, "limit '%s'", lim_names[c]);
		}
		log_verbose("limit %s: %s failed (%s), falling back", lim_names[c],
			    limits_mech_name(lim->mech[c]), err->msg);
		if (lim->mech[c] == SBX_MECH_CGROUP1)
			cgroup_destroy(&lim->v1[c]); /* the v2 one may serve the others */
		lim->mech[c] = fallback[c];
	}
	lim->file_size = cfg->file_size < av.fsize_hard ? cfg->file_size : av.fsize_hard;
	lim->open_files = cfg->open_files < av.nofile_hard ? cfg->open_files : av.nofile_hard;
	lim->memory = cfg->memory;
	lim->pids = cfg->pids;
	lim->cpus_milli = cfg->cpus_milli;
	log_verbose("cgroup: %s", limits_cgroup_desc(lim));
	log_mechanisms(cfg, lim);
	return 0;
}

void limits_cap_file_size(struct sbx_limits *lim, uint64_t bytes)
{
	if (!bytes)
		return;
	if (lim->mech[SBX_LIM_FILE_SIZE] == SBX_MECH_NONE || lim->file_size > bytes)
		lim->file_size = bytes;
	lim->mech[SBX_LIM_FILE_SIZE] = SBX_MECH_RLIMIT;
}

void limits_kill_as_group(const struct sbx_limits *lim)
{
	struct sbx_err ignored;

	if (lim->mech[SBX_LIM_MEMORY] == SBX_MECH_CGROUP2)
		cgroup_write(&lim->v2, "memory.oom.group", "1", &ignored);
}

int limits_attach(const struct sbx_limits *lim, pid_t pid, struct sbx_err *err)
{
	if (lim->v2.path && cgroup_attach(&lim->v2, pid, err) < 0)
		return err_wrap(err, "move the sandbox into its cgroup");
	for (int c = 0; c < SBX_CTL__COUNT; c++)
		if (lim->v1[c].path && cgroup_attach(&lim->v1[c], pid, err) < 0)
			return err_wrap(err, "move the sandbox into its %s cgroup", ctl_names[c]);
	return 0;
}

int limits_clone_cgroup_fd(const struct sbx_limits *lim)
{
	for (int c = 0; c < SBX_CTL__COUNT; c++)
		if (lim->v1[c].path)
			return -1;
	return lim->v2.path ? lim->v2.fd : -1;
}

static int set_rlimit(int res, const char *name, uint64_t v, struct sbx_err *err)
{
	struct rlimit rl = { (rlim_t)v, (rlim_t)v };

	if (setrlimit(res, &rl) < 0)
		return err_sys(err, "setrlimit(%s, %" PRIu64 ")", name, v);
	return 0;
}

static int pin_cpus(unsigned n, struct sbx_err *err)
{
	cpu_set_t cur, set;
	unsigned taken = 0;

	if (sched_getaffinity(0, sizeof(cur), &cur) < 0)
		return err_sys(err, "sched_getaffinity");
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE && taken < n; i++)
		if (CPU_ISSET(i, &cur)) {
			CPU_SET(i, &set);
			taken++;
		}
	if (sched_setaffinity(0, sizeof(set), &set) < 0)
		return err_sys(err, "sched_setaffinity");
	return 0;
}

int limits_apply_child(const struct sbx_limits *lim, struct sbx_err *err)
{
	cpu_set_t cur;

	if (set_rlimit(RLIMIT_CORE, "RLIMIT_CORE", 0, err) < 0)
		return -1;
	if (lim->mech[SBX_LIM_FILE_SIZE] == SBX_MECH_RLIMIT &&
	    set_rlimit(RLIMIT_FSIZE, "RLIMIT_FSIZE", lim->file_size, err) < 0)
		return -1;
	if (lim->mech[SBX_LIM_OPEN_FILES] == SBX_MECH_RLIMIT &&
	    set_rlimit(RLIMIT_NOFILE, "RLIMIT_NOFILE", lim->open_files, err) < 0)
		return -1;
	if (lim->mech[SBX_LIM_MEMORY] == SBX_MECH_ACCOUNTED &&
	    set_rlimit(RLIMIT_DATA, "RLIMIT_DATA", lim->memory, err) < 0)
		return -1;
	/* Only here, inside the user namespace: see the top of this file. */
	if (lim->mech[SBX_LIM_PIDS] == SBX_MECH_RLIMIT &&
	    set_rlimit(RLIMIT_NPROC, "RLIMIT_NPROC", lim->pids, err) < 0)
		return -1;
	if (lim->mech[SBX_LIM_CPUS] == SBX_MECH_AFFINITY) {
		unsigned n = sched_getaffinity(0, sizeof(cur), &cur) == 0 ? (unsigned)CPU_COUNT(&cur) : 1;
		if (pin_cpus(limits_affinity_count(lim->cpus_milli, n), err) < 0)
			return -1;
	}
	return 0;
}

static const struct sbx_cgroup *cg_of(const struct sbx_limits *lim, int c)
{
	if (lim->mech[c] == SBX_MECH_CGROUP2)
		return &lim->v2;
	if (lim->mech[c] == SBX_MECH_CGROUP1)
		return &lim->v1[c];
	return NULL;
}

int limits_use_cgroups(const struct sbx_limits *lim)
{
	for (int c = 0; c < SBX_LIM__COUNT; c++)
		if (cg_of(lim, c))
			return 1;
	return 0;
}

int limits_outcome(const struct sbx_limits *lim, struct sbx_limits_outcome *out)
{
	const struct sbx_cgroup *mem = cg_of(lim, SBX_LIM_MEMORY), *pids = cg_of(lim, SBX_LIM_PIDS);
	char buf[4096];
	uint64_t v;

	memset(out, 0, sizeof(*out));
	if (mem && mem->version == SBX_CG_V2) {
		if (cgroup_read(mem, "memory.events", buf, sizeof(buf)) == 0 &&
		    cgroup_keyed_value(buf, "oom_kill", &v) == 0)
			out->oom_kills = v;
		if (cgroup_read(mem, "memory.peak", buf, sizeof(buf)) == 0)
			out->peak_memory = strtoull(buf, NULL, 10);
	} else if (mem) {
		if (cgroup_read(mem, "memory.oom_control", buf, sizeof(buf)) == 0 &&
		    cgroup_keyed_value(buf, "oom_kill", &v) == 0)
			out->oom_kills = v;
		if (cgroup_read(mem, "memory.max_usage_in_bytes", buf, sizeof(buf)) == 0)
			out->peak_memory = strtoull(buf, NULL, 10);
	}
	if (pids && cgroup_read(pids, "pids.events", buf, sizeof(buf)) == 0 &&
	    cgroup_keyed_value(buf, "max", &v) == 0)
		out->pids_refused = v;
	return 0;
}

void limits_cleanup(struct sbx_limits *lim)
{
	cgroup_destroy(&lim->v2);
	for (int c = 0; c < SBX_CTL__COUNT; c++)
		cgroup_destroy(&lim->v1[c]);
}

int limits_memory_file(const struct sbx_limits *lim, char *buf, size_t size)
{
	if (lim->mech[SBX_LIM_MEMORY] == SBX_MECH_CGROUP2)
		snprintf(buf, size, "%s/memory.current", lim->v2.path);
	else if (lim->mech[SBX_LIM_MEMORY] == SBX_MECH_CGROUP1)
		snprintf(buf, size, "%s/memory.usage_in_bytes", lim->v1[SBX_LIM_MEMORY].path);
	else
		return -1;
	return 0;
}

int limits_memory_accounted(const struct sbx_limits *lim)
{
	return lim->mech[SBX_LIM_MEMORY] == SBX_MECH_ACCOUNTED;
}

const char *limits_cgroup_desc(const struct sbx_limits *lim)
{
	static char buf[PATH_MAX + 96];

	if (lim->v2.path) {
		snprintf(buf, sizeof(buf), "cgroup v2 (%s)", lim->via);
		return buf;
	}
	for (int c = 0; c < SBX_CTL__COUNT; c++)
		if (lim->v1[c].path)
			return "cgroup v1";
	return "none";
}

const char *limits_mechanism(const struct sbx_limits *lim, enum sbx_key key)
{
	switch (key) {
	case SBX_K_MEMORY: return limits_mech_name(lim->mech[SBX_LIM_MEMORY]);
	case SBX_K_PIDS: return limits_mech_name(lim->mech[SBX_LIM_PIDS]);
	case SBX_K_CPUS: return limits_mech_name(lim->mech[SBX_LIM_CPUS]);
	case SBX_K_FILE_SIZE: return limits_mech_name(lim->mech[SBX_LIM_FILE_SIZE]);
	case SBX_K_OPEN_FILES: return limits_mech_name(lim->mech[SBX_LIM_OPEN_FILES]);
	default: return "none";
	}
}
