/* snapshot_cmd.h - the session verbs of snapshots (snapshot_cmd.c), called
 * by session_cmd.c; each returns 0, or -1 with err filled in. */
#ifndef SBX_SNAPSHOT_CMD_H
#define SBX_SNAPSHOT_CMD_H

#include "base/config.h"
#include "base/err.h"

/* `session snapshot NAME [SNAP]`: prints the snapshot's name. */
int snapshot_cmd_take(const char *name, const char *snap, struct sbx_err *err);
/* `session start --from SNAP`: cfg gets the snapshot's layers and image. */
int snapshot_cmd_fork(struct sbx_config *cfg, struct sbx_err *err);
int snapshot_cmd_list(struct sbx_err *err);
int snapshot_cmd_rm(const char *snap, struct sbx_err *err);
/* `image export --snapshot SNAP`: a session of its own, forked from SNAP
 * (no network), named *name; snapshot_cmd_export_end stops it and drops
 * the change set a project snapshot's fork made. */
int snapshot_cmd_export_start(const char *snap, char **name, struct sbx_err *err);
void snapshot_cmd_export_end(const char *name);
int snapshot_cmd_restore(const char *name, const char *snap, const char *usage, struct sbx_err *err);

#endif
