/* snapshot_cmd.c - `sbxrun session snapshot|snapshots|snapshot-rm|restore`
 * and the fork of `session start --from` (undo/snapshot.h). */
#define _GNU_SOURCE
#include "cmd/snapshot_cmd.h"

#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/log.h"
#include "cmd/commands.h"
#include "undo/undostore.h"
#include "base/util.h"
#include "cmd/cli.h"
#include "session/session.h"
#include "session/session_client.h"
#include "undo/changeset.h"
#include "undo/project.h"
#include "undo/snapshot.h"

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v;
	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string)
		? json_object_get_string(v) : "";
}

/* A session on a project (id: its change set's, or ""): the change set's
 * writes are kept too; cs and *upper hold what src points to. */
static int project_source(const char *id, struct changeset *cs, char **upper, struct snapshot_source *src,
			  struct sbx_err *err)
{
	if (!*id)
		return 0;
	if (changeset_load(id, cs, err) < 0)
		return -1;
	*upper = xasprintf("%s/upper", cs->dir);
	src->project = cs->project;
	src->project_upper = *upper;
	src->project_start_s = cs->start_s;
	src->project_start_ns = cs->start_ns;
	return 0;
}

int snapshot_cmd_take(const char *name, const char *snap_arg, struct sbx_err *err)
{
	_cleanup_free_ char *snap = snap_arg ? xstrdup(snap_arg) : NULL;
	struct json_object *info = NULL, *v;
	struct snapshot_info si;
	int fds[2] = { -1, -1 };

	if (snap ? snapshot_check_name(snap, err) < 0 : snapshot_default_name(name, &snap, err) < 0)
		return -1;
	if (session_layer(name, fds, &info, err) < 0)
		return -1;
	struct snapshot_source src = {
		.session = name, .staging = fds[0], .upper = jstr(info, "upper"), .ws = jstr(info, "ws"),
		.workspace = jstr(info, "workspace"), .image = jstr(info, "image"),
		.image_digest = jstr(info, "image_digest"), .profile = jstr(info, "profile"),
		.parent = jstr(info, "from"), .cgroup = jstr(info, "cgroup"),
		.supervisor = json_object_object_get_ex(info, "supervisor", &v) ? json_object_get_int(v) : 0,
	};
	struct changeset cs = { 0 };
	_cleanup_free_ char *upper = NULL;
	if (project_source(jstr(info, "changes"), &cs, &upper, &src, err) < 0) {
		close(fds[0]);
		close(fds[1]);
		json_object_put(info);
		changeset_free(&cs);
		return -1;
	}
	/* the session's profile's changes_max, else the default profile's
	 * (its file may have gone since the session started) */
	uint64_t cap = 0;
	struct sbx_err ignore = { 0 };
	if ((!src.profile[0] || changes_max(src.profile, &cap, &ignore) < 0) && changes_max(NULL, &cap, err) < 0) {
		close(fds[0]);
		close(fds[1]);
		json_object_put(info);
		return -1;
	}
	/* what the change sets take comes off the cap: one cap over both */
	uint64_t all = 0, snaps = snapshot_usage();
	if (cap && undostore_usage(&all, &ignore) == 0 && all > snaps)
		cap = all - snaps >= cap ? 1 : cap - (all - snaps);
	int r = snapshot_take(&src, snap, cap ? cap : UINT64_MAX, &si, err);
	changeset_free(&cs);
	close(fds[0]);
	close(fds[1]);
	json_object_put(info);
	if (r < 0)
		return err_wrap(err, "session '%s'", name);
	char size[32];
	format_size_human(si.size, size, sizeof(size));
	log_verbose("snapshot '%s': %s in %" PRIu64 " entries; the session was paused %" PRIu64 " ms (%s)",
		    snap, size, si.files, si.paused_ms,
		    si.paused_by_freezer ? "cgroup freezer" : "its processes stopped");
	printf("%s\n", snap);
	return 0;
}

int snapshot_cmd_fork(struct sbx_config *cfg, struct sbx_err *err)
{
	struct snapshot_info si;

	if (snapshot_layers(cfg->from, &cfg->snap_layers, &si, err) < 0)
		return err_wrap(err, "--from");
	if (cfg->image && strcmp(cfg->image, si.image) && cfg->origin[SBX_K_IMAGE] &&
	    !strcmp(cfg->origin[SBX_K_IMAGE], "command line"))
		return err_set(err, 0, "--from '%s': the snapshot is of the image '%s', not '%s'", cfg->from,
			       si.image, cfg->image);
	free(cfg->image);
	cfg->image = xstrdup(si.image);
	/* a project session's snapshot: the fork works on the same DIR, from
	 * the snapshot's copy of its writes (undo/project.c) */
	if (si.project[0] && !cfg->project)
		cfg->project = xstrdup(si.project);
	return 0;
}

static void list_one(const struct snapshot_info *si, void *arg)
{
	char size[32], age[32];
	(void)arg;
	format_size_human(si->size, size, sizeof(size));
	format_duration((uint64_t)(time(NULL) - si->created) * 1000, age, sizeof(age));
	printf("%-20s %-16s %-12s %-10s %s\n", si->name, si->session, si->image, size, age);
}

int snapshot_cmd_list(struct sbx_err *err)
{
	printf("%-20s %-16s %-12s %-10s %s\n", "NAME", "SESSION", "IMAGE", "SIZE", "AGE");
	return snapshot_list(list_one, NULL, err);
}

int snapshot_cmd_rm(const char *snap, struct sbx_err *err)
{
	return snapshot_remove(snap, err);
}

/* Honest rollback: the session's processes end, and it starts again from
 * the snapshot with the profile it had, as `session start --from` would
 * start it (docs/sessions.md). */
int snapshot_cmd_restore(const char *name, const char *snap, const char *usage, struct sbx_err *err)
{
	_cleanup_free_ char *profile = session_profile(name), *dir = NULL;
	struct snapshot_info si;
	struct sbx_config cfg;
	int rest;

	if (snapshot_read(snap, &si, err) < 0)
		return -1;
	char *argv[] = { "start", "--profile", profile ? profile : si.profile, "--from", (char *)snap,
			 (char *)name, NULL };
	int r = cli_sandbox_config(6, argv, SBX_CMD_SESSION_START, usage, &cfg, &rest, err);
	if (r == 0)
		r = snapshot_cmd_fork(&cfg, err);
	if (r == 0)
		r = session_dir(name, &dir, err);
	_cleanup_free_ char *changes = r == 0 ? session_info_string(name, "changes") : NULL;
	if (r == 0 && session_alive(dir))
		r = session_stop(name, err);
	/* a project session's change set goes back with it: what the
	 * snapshot kept of it is copied into the new one */
	struct changeset cs = { 0 };
	struct sbx_err e2;
	if (r == 0 && changes && changeset_load(changes, &cs, &e2) == 0 && changeset_remove(&cs, &e2) < 0)
		log_warn("change set %s: %s", changes, e2.msg);
	if (changes)
		changeset_free(&cs);
	if (r == 0)
		r = cfg.project ? project_session_start(&cfg, name, err) : session_start(&cfg, name, err);
	config_free(&cfg);
	return r < 0 ? -1 : 0;
}

int snapshot_cmd_export_start(const char *snap, char **name, struct sbx_err *err)
{
	struct snapshot_info si;
	struct sbx_config cfg;
	struct sbx_err ignore;
	int rest;

	*name = NULL;
	if (snapshot_read(snap, &si, err) < 0)
		return -1;
	_cleanup_free_ char *n = xasprintf("export-%d", (int)getpid());
	/* the snapshot's profile if it is still there, else the default one */
	char *argv[] = { "start", "--profile", si.profile[0] ? si.profile : "default", "--net", "none",
			 "--from", (char *)snap, n, NULL };
	int r = cli_sandbox_config(8, argv, SBX_CMD_SESSION_START, NULL, &cfg, &rest, &ignore);
	if (r != 0) {
		config_free(&cfg);
		argv[2] = "default";
		r = cli_sandbox_config(8, argv, SBX_CMD_SESSION_START, NULL, &cfg, &rest, err);
	}
	if (r == 0)
		r = snapshot_cmd_fork(&cfg, err);
	if (r == 0)
		r = cfg.project ? project_session_start(&cfg, n, err) : session_start(&cfg, n, err);
	config_free(&cfg);
	if (r != 0)
		return -1;
	*name = xstrdup(n);
	return 0;
}

void snapshot_cmd_export_end(const char *name)
{
	_cleanup_free_ char *changes = session_info_string(name, "changes");
	struct changeset cs = { 0 };
	struct sbx_err e2;

	if (session_stop(name, &e2) < 0)
		log_warn("%s", e2.msg);
	if (changes && changeset_load(changes, &cs, &e2) == 0 && changeset_remove(&cs, &e2) < 0)
		log_warn("change set %s: %s", changes, e2.msg);
	changeset_free(&cs);
}
