/* project.h - the change set of --project around a sandbox: made before
 * it (run, shell, session start, the MCP server's session) and handed to
 * the sandbox's plan through cfg->project_set. A run's is captured when
 * its command ends (run_cmd.c); a session's while the session runs is
 * live (walked when asked, never applied), and is captured for good the
 * first time it is asked for after the session ended. */
#ifndef SBX_PROJECT_H
#define SBX_PROJECT_H

#include "base/config.h"
#include "base/err.h"
#include "undo/changeset.h"

/* Checks the cap ([limits] changes_max), makes the change set for
 * cfg->project (session: the session's name, or NULL for a run) and fills
 * cfg->project_set. */
int project_prepare(struct sbx_config *cfg, const char *session, struct changeset *cs,
		    struct sbx_err *err);
/* `session start --project DIR NAME`: the change set, then the session;
 * the change set is removed again if the session does not start. */
int project_session_start(struct sbx_config *cfg, const char *name, struct sbx_err *err);
/* Loads change set id as the commands see it. While a sandbox uses it
 * (the run or session holds a shared lock on its directory, plan.c) it is
 * walked now and marked live (cs->live), its entries not written; once
 * none does and it was never captured (a session's, or a run that was
 * killed), it is captured now, for good. */
int project_load(const char *id, struct changeset *cs, struct sbx_err *err);

#endif
