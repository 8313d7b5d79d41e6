/* snapshot.h - session snapshots: a session's file system at one moment
 * (its writable layer and workspace), kept below the user's data directory
 * as an overlay lower layer with a manifest, from which a session can be
 * forked or restored (docs/sessions.md). */
#ifndef SBX_SNAPSHOT_H
#define SBX_SNAPSHOT_H

#include <stdint.h>
#include <sys/types.h>

#include "base/config.h"
#include "base/err.h"

/* A fork's snapshot over a fork's snapshot over ...: at most this many
 * layers above the image (each is an open and an overlay layer). */
#define SNAPSHOT_MAX_CHAIN 16
/* What the user's snapshots may hold together, until the undo store's
 * per-user cap (changes and snapshots summed) takes its place. */
#define SNAPSHOT_CAP_DEFAULT (20ull << 30)

/* The session a snapshot is taken of, as its supervisor describes it
 * (session/control.h, "layer"); fds and strings are the caller's. */
struct snapshot_source {
	const char *session;
	int staging;            /* O_PATH of its staging directory */
	const char *upper;      /* the writable layer, below staging */
	const char *ws;         /* the workspace, below staging, or "" (a fork's is in its layer) */
	const char *workspace;  /* the workspace's path inside, or "" */
	const char *image, *image_digest, *profile;
	const char *parent;     /* the snapshot the session was forked from, or "" */
	/* a session on a project (--project): DIR, its change set's upper (what
	 * the session wrote over DIR, kept too) and when that set began; or NULL */
	const char *project, *project_upper;
	int64_t project_start_s, project_start_ns;
	const char *cgroup;     /* its own cgroup v2 directory, or "": then its processes are stopped */
	pid_t supervisor;       /* whose descendants those processes are */
};

struct snapshot_info {
	char name[128];
	char session[128];
	char image[256];
	char profile[256];
	char parent[128];
	int64_t created;
	/* a session on a project: DIR, and when its change set began (a fork's
	 * change set begins then too, for apply's conflict check) */
	char project[4096];
	int64_t project_start_s, project_start_ns;
	uint64_t size;
	uint64_t files;
	int paused_by_freezer;  /* 1: cgroup freezer, 0: SIGSTOP of its processes */
	uint64_t paused_ms;
};

/* Letters, digits, '.', '_', '-', not first '.', at most 64: no '/', no
 * "..", no newline. Bad names are the caller's 125. */
int snapshot_check_name(const char *name, struct sbx_err *err);
/* NAME-1, NAME-2, ...: one above the highest taken. */
int snapshot_default_name(const char *session, char **out, struct sbx_err *err);
/* Captures src as the new snapshot snap, its processes paused for the
 * copy only; fails (leaving nothing) past cap bytes of all snapshots. */
int snapshot_take(const struct snapshot_source *src, const char *snap, uint64_t cap,
		  struct snapshot_info *info, struct sbx_err *err);
/* A fork's layers, top first (snap's, then its parent's ...), and what it
 * was taken over. */
int snapshot_layers(const char *snap, struct sbx_strlist *layers, struct snapshot_info *info,
		    struct sbx_err *err);
int snapshot_read(const char *snap, struct snapshot_info *info, struct sbx_err *err);
/* Calls fn for each snapshot of the user's, oldest first. */
int snapshot_list(void (*fn)(const struct snapshot_info *info, void *arg), void *arg,
		  struct sbx_err *err);
/* Refused while a session runs on it or another snapshot is taken over it. */
int snapshot_remove(const char *snap, struct sbx_err *err);
/* Bytes all the user's snapshots hold (their manifests' sizes), and what
 * is below a snapshot being made or one killed half way (.new-*, .rm-*). */
uint64_t snapshot_usage(void);
/* Removes what a snapshot killed half way left (its maker gone); *removed
 * says how many. snapshot_take does it first too. */
int snapshot_sweep(size_t *removed, struct sbx_err *err);
/* A project session's snapshot: its copy of the change set's writes
 * (snapshots/SNAP/project) copied into the directory dst, within cap. */
int snapshot_project_copy(const char *snap, int dst, uint64_t cap, struct sbx_err *err);
/* The layer directory of snap (for image export). */
int snapshot_layer_dir(const char *snap, char **out, struct sbx_err *err);

#endif
