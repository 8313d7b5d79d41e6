/* mounts.h - the sandbox's filesystem, built in the child's new mount
 * namespace: overlay root, /proc, /dev, /sys, workspace, binds, pivot_root. */
#ifndef SBX_MOUNTS_H
#define SBX_MOUNTS_H

#include "base/err.h"
#include "sandbox/plan.h"

/* Host directories and files the sandbox mounts, opened by the child in its
 * own mount namespace (an fd from the parent's namespace cannot be bound). */
struct sbx_mount_src {
	int lower;
	int *snaps;   /* plan->snaps, top first */
	int run_dir;
	int staging;  /* set by mounts_setup: O_PATH of the staging directory */
	int ca;
	int project;       /* --project: DIR, and the directory of its upper and work */
	int project_layer;
	int project_idmapped; /* project is a root caller's DIR, a detached idmapped mount */
	int *binds;
	unsigned gave_up;  /* what the nested tier gave up here (sandbox/tier.h) */
};

/* Child side, first: makes mounts private, opens the host paths to mount.
 * project_fd: DIR as the host side handed it over with GO (a root caller's,
 * idmapped: idmap.h), taken over; -1: DIR is opened here. */
int mounts_open_sources(const struct sbx_plan *plan, int project_fd, struct sbx_mount_src *ms,
			struct sbx_err *err);
/* Child side, with the namespace's capabilities; ends inside the new root.
 * With plan->fuse_bin, the root is a FUSE mount whose fd (with the user and
 * mount namespace fds) goes to the host side over sync as SBX_MSG_FUSE. */
int mounts_setup(const struct sbx_plan *plan, struct sbx_mount_src *ms, int sync,
		 struct sbx_err *err);
/* A session command's init, pid 1 of its own pid namespace: a mount
 * namespace of its own with a /proc of that pid namespace, masked as the
 * session's is (otherwise /proc/PID names the session's processes). In the
 * nested tier, subset=pid, or else the session's /proc of no processes. */
int mounts_new_proc(const struct sbx_plan *plan, struct sbx_err *err);
/* Opens (creating directories as needed) PATH below rootfd, resolving as if
 * rootfd were / so no symlink in the image can lead outside. Returns an
 * O_PATH fd of the final directory, or of a regular file when !is_dir. */
int mounts_mkpath(int rootfd, const char *path, int is_dir, struct sbx_err *err);

#endif
