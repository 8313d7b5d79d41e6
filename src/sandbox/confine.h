/* confine.h - the containment steps of the command child, in order. */
#ifndef SBX_CONFINE_H
#define SBX_CONFINE_H

#include "sandbox/sandbox.h"

/* Limits, capabilities, no_new_privs and seccomp, right before exec; with
 * plan->confined, limits only, and checks that the rest is in place. */
int confine_command(const struct sbx_plan *plan, struct sbx_err *err);

/* Drops every capability, sets no_new_privs and loads the filter: for an
 * init whose children are all commands (it needs none of these after). */
int confine_ahead(const struct sbx_plan *plan, struct sbx_err *err);

#endif
