/* record.h - the one-line JSON result record of --json / --json-fd. */
#ifndef SBX_RECORD_H
#define SBX_RECORD_H

#include <json-c/json.h>

#include "base/config.h"
#include "sandbox/sandbox.h"

/* Before the sandbox exists: refuses a --json FILE that is a symlink or not
 * a regular file, and opens --events FILE for appending (same checks). */
int record_prepare(const struct sbx_config *cfg, int *events_fd, struct sbx_err *err);
/* Writes the record to cfg->json_file (atomically, base/hostfile.h) or to
 * cfg->json_fd; does nothing when neither is set. */
int record_write(const struct sbx_config *cfg, const struct sbx_plan *plan,
		 const struct sbx_result *res, struct sbx_err *err);
/* run --session: what ran, in which session, as whom (user, taken; NULL:
 * not known) and how it ended (the session's own limits and image are the
 * session's, `session ls`). */
int record_write_session(const struct sbx_config *cfg, char *const *argv, const struct sbx_outcome *out,
			 struct json_object *user, struct sbx_err *err);
/* The record's "user" object: the plan's [sandbox] user when as_user,
 * else the sandbox's root. */
struct json_object *record_user(const struct sbx_plan *plan, int as_user);

#endif
