/* commands.h - the subcommands main.c dispatches to. Each returns the exit
 * status to use, or -1 with err filled in (main prints it, exits 125). */
#ifndef SBX_COMMANDS_H
#define SBX_COMMANDS_H

#include <stdint.h>

#include "base/err.h"

int cmd_run(int argc, char **argv, struct sbx_err *err);
int cmd_shell(int argc, char **argv, struct sbx_err *err);
int cmd_session(int argc, char **argv, struct sbx_err *err);
int cmd_cp(int argc, char **argv, struct sbx_err *err);
int cmd_download(int argc, char **argv, struct sbx_err *err);
int cmd_image(int argc, char **argv, struct sbx_err *err);
/* `sbxrun image export SESSION|IMAGE -o FILE [--workspace] [--mtime N]` */
int cmd_image_export(int argc, char **argv, struct sbx_err *err);
int cmd_profile(int argc, char **argv, struct sbx_err *err);
/* `sbxrun mcp`: a Model Context Protocol server on stdin/stdout */
int cmd_mcp(int argc, char **argv, struct sbx_err *err);
int cmd_profile_export(int argc, char **argv, struct sbx_err *err);
int cmd_proxy(int argc, char **argv, struct sbx_err *err);
int cmd_doctor(int argc, char **argv, struct sbx_err *err);
/* `sbxrun cache ls|du|prune|fill`: the package gateway's cache */
int cmd_cache(int argc, char **argv, struct sbx_err *err);
/* `sbxrun changes ls|show|diff|apply|discard|prune`: run --project's change sets */
int cmd_changes(int argc, char **argv, struct sbx_err *err);
int cmd_net(int argc, char **argv, struct sbx_err *err);
/* [limits] changes_max of a profile (NULL: the default), under the policy:
 * the one cap over the user's change sets and snapshots */
int changes_max(const char *profile, uint64_t *max, struct sbx_err *err);
struct apply_report;
/* An apply's conflicts and what it left out, a line each on stderr. */
void changes_report_print(const struct apply_report *rep);
struct changeset;
/* The one line a run or a session on a project ends with (not with -q). */
void changes_kept_print(const struct changeset *cs);

#endif
