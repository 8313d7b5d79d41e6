/* confine.h - the containment steps of the command child, in order. */
#ifndef SBX_CONFINE_H
#define SBX_CONFINE_H

#include "sandbox/sandbox.h"

/* Limits, capabilities, no_new_privs and seccomp, right before exec. */
int confine_command(const struct sbx_plan *plan, struct sbx_err *err);

#endif
