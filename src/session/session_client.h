/* session_client.h - running a command in a live session from the CLI. */
#ifndef SBX_SESSION_CLIENT_H
#define SBX_SESSION_CLIENT_H

#include <stdint.h>

#include <json-c/json.h>

#include "base/config.h"

int session_connect(const char *name, struct sbx_err *err);
/* An O_PATH fd of a live session's root and its workspace path (owned by
 * the caller); resolve only below it. */
int session_root(const char *name, int *rootfd, char **workspace, struct sbx_err *err);
/* For a snapshot: O_PATH fds of a live session's staging directory (its
 * writable layer and workspace) and of its root, and what its supervisor
 * says of them (control.h, "layer"); all owned by the caller. */
int session_layer(const char *name, int fds[2], struct json_object **info, struct sbx_err *err);
/* One request without fds (control.h), req taken; *reply: the answer,
 * the caller's; an answer with "error" is an error naming the session. */
int session_ask(const char *name, struct json_object *req, struct json_object **reply, struct sbx_err *err);
/* Runs argv (or a login shell when NULL) in cfg->session; returns the exit
 * status to use. Only per-command options may be given with --session. */
/* The profile a session was started with (NULL if unknown). */
char *session_profile(const char *name);
/* A string its supervisor recorded in info.json ("changes": its --project
 * change set), or NULL. */
char *session_info_string(const char *name, const char *key);
/* The session's disk quota (0: none) and its image's size, from what its
 * supervisor recorded; -1 when not recorded. */
int session_sizes(const char *name, uint64_t *disk, uint64_t *image_size);
/* Stops a live session and waits until its supervisor has cleaned up. */
int session_stop(const char *name, struct sbx_err *err);
int session_client_run(const struct sbx_config *cfg, char *const *argv, struct sbx_err *err);

#endif
