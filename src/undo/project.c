/* project.c - the change set of --project around a sandbox (project.h). */
#define _GNU_SOURCE
#include "undo/project.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/paths.h"
#include "base/util.h"
#include "session/session.h"
#include "undo/snapshot.h"
#include "undo/undostore.h"

/* A fork of a project session's snapshot: the same DIR, and the new
 * change set starts with a copy of the snapshot's (a copy, not a layer:
 * the session writes it). */
static int fork_writes(const struct sbx_config *cfg, const struct snapshot_info *si, struct changeset *cs,
		       struct sbx_err *err)
{
	if (strcmp(cs->project, si->project))
		return err_set(err, 0, "--project '%s' with --from '%s': the snapshot is of the project '%s'",
			       cfg->project, cfg->from, si->project);
	_cleanup_free_ char *up = xasprintf("%s/upper", cs->dir);
	_cleanup_close_ int fd = open(up, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "open '%s'", up);
	return snapshot_project_copy(cfg->from, fd, cfg->changes_max, err);
}

int project_prepare(struct sbx_config *cfg, const char *session, struct changeset *cs,
		    struct sbx_err *err)
{
	uint64_t used = 0;
	char a[32], b[32];
	_cleanup_close_ int dirfd = -1;
	unsigned uid = paths_sandbox_host_uid();

	struct snapshot_info si = { 0 };
	if (cfg->from && snapshot_read(cfg->from, &si, err) < 0)
		return -1;
	if (cfg->from && !si.project[0])
		return err_set(err, 0, "--project '%s' with --from '%s': the snapshot is of a session on no "
			       "project, its workspace is its own", cfg->project, cfg->from);
	if (cfg->changes_max && undostore_usage(&used, err) == 0 && used >= cfg->changes_max) {
		format_size_human(used, a, sizeof(a));
		format_size_human(cfg->changes_max, b, sizeof(b));
		err_set(err, 0, "--project: the kept change sets take %s, [limits] changes_max is %s", a, b);
		err_hint(err, "apply or discard some ('sbxrun changes ls'), or 'sbxrun changes prune'");
		return -1;
	}
	gid_t gid = geteuid() == 0 ? (gid_t)paths_root_host_id() : getegid();
	struct timespec start = { si.project_start_s, si.project_start_ns };
	if (changeset_create(cfg->project, cfg->image, session, cfg->from ? &start : NULL, uid, gid, cs,
			     &dirfd, err) < 0)
		return -1;
	if (cfg->from && fork_writes(cfg, &si, cs, err) < 0) {
		struct sbx_err e2;
		changeset_remove(cs, &e2);
		return -1;
	}
	cfg->project_set.id = xstrdup(cs->id);
	cfg->project_set.path = xstrdup(cs->project);
	cfg->project_set.layer = xstrdup(cs->dir);
	cfg->project_set.dev = (uint64_t)cs->dev;
	cfg->project_set.ino = (uint64_t)cs->ino;
	return 0;
}

int project_session_start(struct sbx_config *cfg, const char *name, struct sbx_err *err)
{
	struct changeset cs;
	struct sbx_err e2;

	if (project_prepare(cfg, name, &cs, err) < 0) {
		changeset_free(&cs);
		return -1;
	}
	/* cs holds a shared lock on the set until the session's supervisor
	 * holds its own (plan.c): never seen unused, and captured, before the
	 * session wrote it */
	int r = session_start(cfg, name, err);
	if (r < 0)
		changeset_remove(&cs, &e2);
	changeset_free(&cs);
	return r;
}

int project_load(const char *id, struct changeset *cs, struct sbx_err *err)
{
	if (changeset_load(id, cs, err) < 0)
		return -1;
	if (cs->captured)
		return 0;
	_cleanup_close_ int fd = open(cs->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(err, "open '%s'", cs->dir);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK)
			return err_sys(err, "lock '%s'", cs->dir);
		cs->live = 1;
		return changeset_scan(cs, err);
	}
	/* no sandbox uses it and its entries were never written: its run was
	 * killed, or it is a session's and the session has ended */
	return changeset_capture(cs, err);
}
