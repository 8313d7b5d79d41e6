/* cgroup.h - finding, making and reading cgroups (v2 and v1), below the
 * caller's own cgroup so that its limits still apply to the sandbox. */
#ifndef SBX_CGROUP_H
#define SBX_CGROUP_H

#include <linux/limits.h> /* PATH_MAX; <limits.h> would find src/limits.h under -Isrc */
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "base/err.h"

enum sbx_cg_version { SBX_CG_NONE = 0, SBX_CG_V1 = 1, SBX_CG_V2 = 2 };

/* Pure parsers (unit-tested). ctl NULL means the cgroup2 hierarchy. */
/* The caller's path in the hierarchy, from /proc/self/cgroup text. */
int cgroup_parse_self(const char *text, const char *ctl, char *out, size_t size);
/* The mount point and mount root of the hierarchy, from mountinfo text. */
int cgroup_parse_mountinfo(const char *text, const char *ctl, char *mnt, char *root, size_t size);
/* The number after "key " in a flat keyed file (memory.events, pids.events,
 * memory.oom_control); 0 if found. */
int cgroup_keyed_value(const char *text, const char *key, uint64_t *out);
/* Whether a space-separated list (cgroup.controllers) names word. */
int cgroup_list_has(const char *list, const char *word);

/* A small cgroup file by path: read NUL-terminated (-1 with errno), or written. */
int cgroup_read_path(const char *path, char *buf, size_t size);
int cgroup_write_path(const char *path, const char *value, struct sbx_err *err);
/* The directory of the caller's own cgroup for ctl (v1) or v2 (ctl NULL). */
int cgroup_self_dir(const char *ctl, char *out, size_t size);
/* Walks from the caller's cgroup up to the hierarchy's root and returns the
 * first directory that this process may create cgroups in (v2: whose
 * cgroup.subtree_control enables at least one of wanted[]); -1 if none. */
int cgroup_find_parent(enum sbx_cg_version v, const char *ctl, const char *const *wanted,
		       char *out, size_t size);

/* /proc/self/mountinfo and /proc/self/cgroup read once, for the _in
 * variants below: a probe of every controller then reads each file once,
 * not twice per controller (a start spent 0.3 ms on those reads). */
struct sbx_cg_snapshot {
	char *mountinfo;
	char *self;
};
int cgroup_snapshot(struct sbx_cg_snapshot *snap);
void cgroup_snapshot_free(struct sbx_cg_snapshot *snap);
int cgroup_self_dir_in(const struct sbx_cg_snapshot *snap, const char *ctl, char *out, size_t size);
int cgroup_find_parent_in(const struct sbx_cg_snapshot *snap, enum sbx_cg_version v, const char *ctl,
			  const char *const *wanted, char *out, size_t size);

/* A cgroup sbxrun made for one sandbox. */
struct sbx_cgroup {
	enum sbx_cg_version version;
	int fd;       /* O_RDONLY|O_DIRECTORY of the cgroup, or -1 */
	char *path;
};

int cgroup_create(enum sbx_cg_version v, const char *parent, struct sbx_cgroup *cg,
		  struct sbx_err *err);
int cgroup_write(const struct sbx_cgroup *cg, const char *file, const char *value,
		 struct sbx_err *err);
/* Reads a small file of the cgroup; NUL-terminated; -1 with errno. */
int cgroup_read(const struct sbx_cgroup *cg, const char *file, char *buf, size_t size);
int cgroup_attach(const struct sbx_cgroup *cg, pid_t pid, struct sbx_err *err);
/* Kills every process left in it, removes it, closes it. */
void cgroup_destroy(struct sbx_cgroup *cg);

#endif
