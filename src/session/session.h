/* session.h - long-lived sandboxes that several commands share. */
#ifndef SBX_SESSION_H
#define SBX_SESSION_H

#include "base/config.h"

/* $state/sessions/NAME (the directory is not created). */
int session_dir(const char *name, char **out, struct sbx_err *err);
/* Starts the session's supervisor in the background; returns once the
 * sandbox is up and its control socket listens. */
int session_start(const struct sbx_config *cfg, const char *name, struct sbx_err *err);
/* Whether a supervisor holds the session's lock (it is alive). */
int session_alive(const char *dir);
/* Removes what a session whose supervisor is gone left: its directory (the
 * control socket, lock, log) and its writable layer on disk. */
int session_remove_dead(const char *dir, struct sbx_err *err);

#endif
