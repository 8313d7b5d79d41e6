/* confine.h - the containment steps of the sandbox's inits and command. */
#ifndef SBX_CONFINE_H
#define SBX_CONFINE_H

#include "sandbox/plan.h"

/* Limits, capabilities, no_new_privs and seccomp, right before exec; with
 * plan->confined, limits only, and checks that the rest is in place. */
int confine_command(const struct sbx_plan *plan, struct sbx_err *err);

/* Drops every capability, sets no_new_privs and loads the filter: for an
 * init whose children are all commands (it needs none of these after). */
int confine_ahead(const struct sbx_plan *plan, struct sbx_err *err);

/* For an init that still makes a pid and a mount namespace (with a fresh
 * /proc) for each command, a session's pid 1: keeps CAP_SYS_ADMIN and
 * CAP_SETPCAP only (effective, permitted, bounding), sets no_new_privs and
 * loads the filter with a prefix that allows just those calls. Each
 * command's init runs confine_ahead after it has made its /proc. */
int confine_ns_maker(const struct sbx_plan *plan, struct sbx_err *err);

#endif
