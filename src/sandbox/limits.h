/* limits.h - resource limits: the mechanism per limit is decided once on the
 * host side (cgroup v2, cgroup v1, or an rlimit/affinity fallback), the
 * cgroups are made before clone, and the child sets its rlimits before exec.
 *
 * Call order (host side unless said):
 *   limits_prepare        after the config is checked, before clone
 *   limits_attach         right after clone, before the child is told to go on
 *                         (before or after writing uid_map: it does not matter)
 *   limits_apply_child    in the command child, inside the user namespace, after
 *                         it has taken its final uid, before dropping
 *                         capabilities / seccomp / exec
 *   limits_outcome        after the sandbox's pid 1 has been reaped
 *   limits_cleanup        last (also on every error path after prepare)
 */
#ifndef SBX_LIMITS_H
#define SBX_LIMITS_H

#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "base/err.h"
#include "base/options.h"
#include "sandbox/cgroup.h"

enum sbx_limit_mech {
	SBX_MECH_NONE = 0,  /* no limit asked for */
	SBX_MECH_CGROUP2,
	SBX_MECH_CGROUP1,
	SBX_MECH_RLIMIT,
	SBX_MECH_AFFINITY,
	SBX_MECH_ACCOUNTED, /* memory: RLIMIT_DATA per process, and sbxrun sums
			     * the sandbox's memory and kills past the limit (memacct.c) */
};

enum sbx_limit {
	SBX_LIM_MEMORY, SBX_LIM_PIDS, SBX_LIM_CPUS, SBX_LIM_FILE_SIZE, SBX_LIM_OPEN_FILES,
	SBX_LIM__COUNT
};

/* The cgroup controllers sbxrun uses, in the order of enum sbx_limit. */
enum sbx_cg_ctl { SBX_CTL_MEMORY, SBX_CTL_PIDS, SBX_CTL_CPU, SBX_CTL__COUNT };

/* What the machine offers, per controller (filled by limits_probe). */
struct sbx_limits_avail {
	char v2_parent[PATH_MAX];     /* where a v2 cgroup can be made, "" if nowhere */
	int v2[SBX_CTL__COUNT];       /* controller enabled for children there */
	char v1_parent[SBX_CTL__COUNT][PATH_MAX]; /* writable v1 directory, "" if none */
	char v2_via[PATH_MAX + 64];   /* how v2_parent was had, e.g. "systemd scope NAME" */
	char v2_missing[256];         /* why there is no (delegated) v2 subtree, if so */
	uint64_t nofile_hard, fsize_hard;  /* rlimits cannot be raised in a userns */
	unsigned ncpus;               /* CPUs this process may run on */
};

struct sbx_limits {
	enum sbx_limit_mech mech[SBX_LIM__COUNT];
	struct sbx_cgroup v2;                  /* one cgroup for every v2 controller */
	struct sbx_cgroup v1[SBX_CTL__COUNT];  /* one per v1 hierarchy used */
	uint64_t file_size, open_files;        /* clamped to the hard limits (best) */
	uint64_t memory, pids, cpus_milli;     /* the values asked for (0: none) */
	char via[PATH_MAX + 64];               /* where the cgroup v2 subtree came from */
};

struct sbx_limits_outcome {
	uint64_t oom_kills;     /* how often the kernel's OOM killer ran in the cgroup */
	uint64_t pids_refused;  /* forks the pids controller refused */
	uint64_t peak_memory;   /* bytes, 0 if unknown */
};

/* Host side, before clone: chooses and creates. Strict: -1 naming the limit. */
int limits_prepare(const struct sbx_config *cfg, struct sbx_limits *lim, struct sbx_err *err);
/* storage = disk: no file may grow past the disk quota (RLIMIT_FSIZE), a
 * hard per-file stop where the quota itself is a walk. */
void limits_cap_file_size(struct sbx_limits *lim, uint64_t bytes);
/* One OOM kill ends every process of the sandbox (memory.oom.group), as a
 * container engine does; not for sessions, where it would end them all. */
void limits_kill_as_group(const struct sbx_limits *lim);
/* Whether any limit is a cgroup (which must be empty before it is removed). */
int limits_use_cgroups(const struct sbx_limits *lim);
/* Host side, right after clone: moves the sandbox's pid 1 into the cgroups. */
int limits_attach(const struct sbx_limits *lim, pid_t pid, struct sbx_err *err);
/* In the sandbox, before exec: rlimits (RLIMIT_CORE 0 always) and affinity. */
int limits_apply_child(const struct sbx_limits *lim, struct sbx_err *err);
/* The cgroup's counters (at any time). Returns 0 (fields stay 0 where unknown). */
int limits_outcome(const struct sbx_limits *lim, struct sbx_limits_outcome *out);
/* The cgroup v2 directory fd for clone3's CLONE_INTO_CGROUP when it is the
 * only cgroup in use (then limits_attach has nothing left to do), else -1. */
int limits_clone_cgroup_fd(const struct sbx_limits *lim);
/* Kills leftovers in the cgroups and removes them; safe to call twice. */
void limits_cleanup(struct sbx_limits *lim);
/* The file that holds the sandbox's memory in use (memory.current, or v1's
 * memory.usage_in_bytes); 0, or -1 when memory has no cgroup. */
int limits_memory_file(const struct sbx_limits *lim, char *buf, size_t size);
/* Whether sbxrun itself must keep the sandbox's memory under the limit
 * (memory on the rlimit fallback): memacct.c, polled by the supervisor. */
int limits_memory_accounted(const struct sbx_limits *lim);
/* Where the sandbox's cgroup is: "cgroup v2 (systemd scope NAME)",
 * "cgroup v2 (writable subtree DIR)", "cgroup v1" or "none". */
const char *limits_cgroup_desc(const struct sbx_limits *lim);
/* "cgroup2", "cgroup1", "rlimit", "rlimit+accounting", "affinity" or "none"
 * for a limit's key. */
const char *limits_mechanism(const struct sbx_limits *lim, enum sbx_key key);

/* What this machine offers (used by doctor too). With delegate set, and
 * systemd managing a pure cgroup v2 host, a subtree sbxrun does not own yet
 * is asked of systemd (sandbox/scope.c): this moves the calling process. */
void limits_probe(struct sbx_limits_avail *av, int delegate);
/* The pure choice, from what is offered (unit-tested): fills mech[]. */
int limits_choose(const struct sbx_config *cfg, const struct sbx_limits_avail *av,
		  enum sbx_limit_mech mech[SBX_LIM__COUNT], struct sbx_err *err);
const char *limits_mech_name(enum sbx_limit_mech m);
/* How many CPUs the affinity fallback pins to: cpus rounded up, at most ncpus. */
unsigned limits_affinity_count(uint64_t cpus_milli, unsigned ncpus);

#endif
